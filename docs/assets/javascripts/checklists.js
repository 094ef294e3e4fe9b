// Checklists (`- [ ] ...` in Markdown, pymdownx.tasklist with clickable_checkbox) are meant to
// be ticked: the measurement rules page asks students to tick its boxes before they quote a
// number. Each box gets its item's text as its accessible name, and its state is remembered in
// this browser (localStorage), keyed by the page and the item's text, so a box stays ticked
// across visits and moves with its item if the list is reordered.
(() => {
  const STORE = "course-checklist:";

  // The item's own words: its text without nested lists, on one line.
  const itemText = (item) => {
    const copy = item.cloneNode(true);
    copy.querySelectorAll("ul, ol").forEach((nested) => nested.remove());
    return copy.textContent.replace(/\s+/g, " ").trim();
  };

  const setUp = () => {
    document.querySelectorAll(".md-typeset .task-list-item").forEach((item) => {
      const box = item.querySelector(":scope > .task-list-control > input[type=checkbox]");
      if (!box) return;
      const text = itemText(item);
      const key = STORE + location.pathname + "#" + text;
      box.disabled = false;
      box.setAttribute("aria-label", text);
      const saved = localStorage.getItem(key);
      if (saved !== null) box.checked = saved === "1";
      box.addEventListener("change", () => localStorage.setItem(key, box.checked ? "1" : "0"));
    });
  };

  // Material swaps pages without a reload (navigation.instant) and emits on document$ each time.
  document$.subscribe(setUp);
})();
