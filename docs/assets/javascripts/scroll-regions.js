// Wide content scrolls sideways instead of being squeezed (on a phone, code wraps instead:
// course.css; and a table of prose is read row by row: `stack`): code blocks, tables, display maths,
// Mermaid diagrams, notebook cells and their outputs, run-page blocks, rows of tab labels. A
// region that actually overflows (which depends on the screen), sideways or (a long log in a
// box of limited height) downwards, is made reachable by the keyboard (tabindex 0: Tab stops
// on it, the arrow keys scroll it); one wider than its box also gets the class
// `course-scrolls-right` while more of it lies to the right, which course.css shows as a
// fading edge: a hint that it scrolls; `course-scrolls-left` likewise while more lies to
// the left. A Mermaid diagram wider than its column (on a phone) opens scrolled to its first
// box, the top of the flow, rather than at its left edge, where a top-down flow may show only
// the ends of its last row.
(() => {
  const REGIONS = [
    ".md-typeset pre > code",
    ".md-typeset .md-typeset__scrollwrap",
    ".md-typeset div.arithmatex",
    ".md-typeset div.mermaid",
    ".md-typeset .highlight-ipynb",
    ".md-typeset .jp-OutputArea-output > pre",
    ".md-typeset .course-run-block",
    ".md-typeset .tabbed-labels",
    '.md-typeset figure[id^="__figure-caption_"] > :is(p, a):has(> img, > a > img)',
  ].join(", ");

  // On a phone, a table of prose that does not fit its column is read row by row instead
  // (course.css, `data-stacked`): each cell labelled with its column's name. A run page's
  // tables of numbers and a Try-it box's results keep their columns, and scroll.
  const PHONE = window.matchMedia("(max-width: 44.9375em)");
  const stack = (region) => {
    const table = region.querySelector(":scope > .md-typeset__table > table, :scope > table");
    if (!table || table.closest(".course-run-block, .try-it") || !table.tHead) return false;
    const names = Array.from(table.tHead.rows[0]?.cells || [], (th) => th.textContent.trim());
    Array.from(table.tBodies).forEach((body) => Array.from(body.rows).forEach((row) =>
      Array.from(row.cells).forEach((cell, i) => {
        if (names[i]) cell.dataset.label = names[i];
      })));
    table.dataset.stacked = "";
    return true;
  };

  const update = (region) => {
    if (PHONE.matches && region.matches(".md-typeset__scrollwrap") &&
        region.scrollWidth > region.clientWidth + 1 && stack(region)) {
      region.classList.remove("course-scrolls-right", "course-scrolls-left");
    }
    const overflows = region.scrollWidth > region.clientWidth + 1;
    const scrolls = overflows || region.scrollHeight > region.clientHeight + 1;  // a tall log
    const mine = region.dataset.courseScroll === "1";    // tabindex added here, not by the page
    if (scrolls && !region.hasAttribute("tabindex")) {
      region.setAttribute("tabindex", "0");
      region.dataset.courseScroll = "1";
    } else if (!scrolls && mine) {
      region.removeAttribute("tabindex");
      delete region.dataset.courseScroll;
    }
    if (overflows && region.matches("div.mermaid") && !region.dataset.courseOpened) {
      openAtFirstBox(region);
    }
    const more = overflows && region.scrollLeft + region.clientWidth < region.scrollWidth - 1;
    region.classList.toggle("course-scrolls-right", more);
    region.classList.toggle("course-scrolls-left", overflows && region.scrollLeft > 1);
  };

  // The first box Mermaid drew (its nodes come in the order the diagram names them), centred
  // in the column as far as the diagram allows. Once per diagram: later, the reader scrolls.
  const openAtFirstBox = (diagram) => {
    const root = window.courseShadowRoot ? window.courseShadowRoot(diagram) : null;
    const box = root && root.querySelector("svg g.node");
    if (!box) return;                                  // not drawn yet: the next change tries
    diagram.dataset.courseOpened = "1";
    const boxRect = box.getBoundingClientRect();
    const column = diagram.getBoundingClientRect().left + diagram.clientLeft;
    diagram.scrollLeft += boxRect.left + boxRect.width / 2 - (column + diagram.clientWidth / 2);
  };

  // A region's width changes with the window (ResizeObserver); what it holds changes when a
  // page arrives without a reload (document$), when MathJax typesets a formula or Mermaid
  // replaces its <pre> with a diagram (MutationObserver), when a prediction box shows what it
  // folded (course-content-shown). Every change re-measures them all.
  const seen = new WeakSet();
  const resized = new ResizeObserver((entries) => entries.forEach((e) => update(e.target)));
  const refresh = () => {
    document.querySelectorAll(REGIONS).forEach((region) => {
      if (!seen.has(region)) {
        seen.add(region);
        resized.observe(region);
        region.addEventListener("scroll", () => update(region), { passive: true });
      }
      update(region);
    });
  };

  document$.subscribe(refresh);
  document.addEventListener("course-content-shown", refresh);   // predictions.js unfolded some
  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; refresh(); });
  }).observe(document.body, { childList: true, subtree: true });
})();
