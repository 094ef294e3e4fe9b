// Predict, then run. Each "Predict:" box of a lesson carries a form that the build made hidden
// (src/course_site/predictions.py: the key it holds was read from a block's printed output).
// This script shows the form, folds what answers the prediction (from the box, or from its
// `<!-- answers: name -->` marker, down to and including its "Answer: name" box; in a lab,
// the cells down to the one that starts "Answer: name.") until the student answers or
// presses "Show me anyway", and keeps every answer in this browser
// (localStorage, nothing is sent anywhere). The first answer is final, as in mkdocs-quiz.
// The page "My predictions" lists the answers, exports them as JSON or CSV, and clears them.
// Without JavaScript none of this runs: the box is its question, and nothing is folded.
(() => {
  const STORE = "course-predictions";

  // -- the record: { version: 1, answers: { "<page>#<name>": {...} } } ----------------------
  const load = () => {
    try {
      const kept = JSON.parse(localStorage.getItem(STORE) || "null");
      if (kept && typeof kept.answers === "object" && kept.answers !== null) return kept;
    } catch (error) { /* a damaged record is started afresh */ }
    return { version: 1, answers: {} };
  };
  const keep = (id, entry) => {
    const record = load();
    record.answers[id] = entry;
    localStorage.setItem(STORE, JSON.stringify(record));
  };

  // The page's address from the site's root ("lessons/m1-reinforce/"), whatever the host.
  const sitePage = () => {
    const config = JSON.parse(document.getElementById("__config").textContent);
    const root = new URL(config.base + "/", location.href).pathname;
    return decodeURI(location.pathname).slice(decodeURI(root).length);
  };

  // A number as a student writes it (read-number.js): "0.6", "75%", "0,52", "3/4"...; a box
  // whose key is in percent (`data-unit="percent"`) reads "75%" as 75, any other as 0.75.
  const readNumber = globalThis.courseReadNumber;
  const round = (x) => String(Number(x.toPrecision(4)));

  // -- what the box folds --------------------------------------------------------------------
  const locks = new Map();
  const lock = (element) => {
    locks.set(element, (locks.get(element) || 0) + 1);
    element.classList.add("course-predict-folded");
  };
  const unlock = (element) => {
    const left = (locks.get(element) || 1) - 1;
    locks.set(element, left);
    if (left === 0) element.classList.remove("course-predict-folded");
  };

  // A lesson's answer is a folded box titled "Answer: name"; a lab's is the Markdown cell
  // that starts with "**Answer: name.**" (course_site/predictions.py, the labs).
  const answers = (node, name) => node.nodeName === "DETAILS"
    ? node.querySelector(":scope > summary")?.textContent.trim() === "Answer: " + name
    : node.nodeType === Node.ELEMENT_NODE && node.matches(".jp-MarkdownCell") &&
      node.querySelector("strong")?.textContent.trim() === `Answer: ${name}.`;

  const foldedBy = (form) => {
    const box = form.closest(".admonition") || form.closest(".jp-Cell");
    if (!box || !box.parentNode) return { region: [], answer: null };
    const nodes = Array.from(box.parentNode.childNodes);
    const name = form.dataset.name;
    const at = nodes.indexOf(box);
    const answer = nodes.find((node, i) => i > at && answers(node, name));
    if (!answer) return { region: [], answer: null };
    const marker = nodes.findIndex((node, i) => i > at && node.nodeType === Node.COMMENT_NODE &&
      node.data.trim().replace(/^answers:\s*/, "") === name && /^\s*answers:/.test(node.data));
    const start = marker > at ? marker : at + 1;
    // Another box's answer inside the region is that box's own part: it opens when that box
    // is answered, whatever this one's state (two boxes may share one run's output).
    const others = Array.from(document.querySelectorAll("form.course-predict"),
      (other) => other.dataset.name).filter((other) => other !== name);
    const region = nodes.slice(start, nodes.indexOf(answer) + 1).filter((node) =>
      node.nodeType === Node.ELEMENT_NODE && !node.querySelector("form.course-predict") &&
      !others.some((other) => answers(node, other)));
    return { region, answer };
  };

  // The boxes still unanswered whose fold holds part of this box's region: what stays folded
  // after this answer, until they are answered too.
  const stillFolding = (form) => {
    const mine = new Set(foldedBy(form).region);
    return Array.from(document.querySelectorAll("form.course-predict")).filter((other) =>
      other !== form && !other.dataset.settled &&
      foldedBy(other).region.some((node) => mine.has(node)));
  };

  // -- what the box says once answered -------------------------------------------------------
  const verdict = (form, entry) => {
    const key = form.dataset.key;
    if (entry.skipped) {
      return key ? `You looked without predicting; the run gives ${key}.`
        : "You looked without predicting. The answer is below.";
    }
    if (entry.kind === "number") {
      const where = entry.within ? "within" : "outside";
      return `You said ${entry.read || entry.answer}; the run gives ${key}: off by ` +
        `${round(entry.off)}, ${where} the box's tolerance of ±${form.dataset.tolerance}.`;
    }
    if (entry.kind === "choice") {
      return `You picked ${entry.answer}; the run gives ${key}. ` +
        (entry.within ? "Right." : "Not this time: read on.");
    }
    return `Your prediction, kept: “${entry.answer}”. Compare it with what follows.`;
  };

  // A verdict, and (while a partner box is unanswered) what stays folded and why.
  const sayWhatIsFolded = (form) => {
    const partners = stillFolding(form).map((other) => `“${other.dataset.name}”`);
    const text = form.dataset.verdict + (partners.length ? " What ran stays folded until " +
      `you answer ${partners.join(" and ")} too.` : "");
    const result = form.querySelector(".course-predict-result");
    if (result.textContent !== text) result.textContent = text;
  };

  const settle = (form, entry, fresh) => {
    form.querySelectorAll("input, button").forEach((control) => { control.disabled = true; });
    form.querySelector(".course-predict-actions").hidden = true;
    form.querySelector(".course-predict-note").hidden = true;
    if (entry.kind !== "choice" && !entry.skipped) form.elements.answer.value = entry.answer;
    if (entry.kind === "choice" && !entry.skipped) {
      form.querySelectorAll("input[name=answer]").forEach((radio) => {
        radio.checked = radio.value === entry.answer;
      });
    }
    const result = form.querySelector(".course-predict-result");
    form.dataset.settled = "yes";
    form.dataset.verdict = verdict(form, entry);
    if (fresh) {                 // the controls are disabled now: the keyboard goes on from here
      result.tabIndex = -1;
      result.focus();
    }
    form.classList.add(entry.skipped ? "course-predict-skipped"
      : entry.within === false ? "course-predict-off" : "course-predict-done");
    const { region, answer } = foldedBy(form);
    region.forEach(unlock);
    document.querySelectorAll("form.course-predict[data-settled]").forEach(sayWhatIsFolded);
    if (fresh && answer && answer.nodeName === "DETAILS") answer.open = true;
    // scroll-regions.js measures wide content again: what was folded had no size to measure
    document.dispatchEvent(new Event("course-content-shown"));
  };

  const answerOf = (form) => {
    const kind = form.dataset.kind;
    if (kind === "number") {
      const typed = form.elements.answer.value.trim();
      const percentKey = form.dataset.unit === "percent";
      const read = readNumber(typed, percentKey);
      if (read === null) {
        return { problem: typed ? `“${typed}” is not a number: type one such as 0.25, ` +
          "25%, 0,25 or 1/4." : "Type a number first (or press Show me anyway)." };
      }
      const off = Math.abs(read.value - readNumber(form.dataset.key, true).value);
      const within = off <= Number(form.dataset.tolerance) + 1e-9;
      return { kind, answer: typed, read: read.read, value: read.value, off, within };
    }
    if (kind === "choice") {
      const picked = form.querySelector("input[name=answer]:checked");
      if (!picked) return { problem: "Pick one of the options first." };
      return { kind, answer: picked.value, within: picked.value === form.dataset.key };
    }
    const line = form.elements.answer.value.replace(/\s+/g, " ").trim();
    if (!line) return { problem: "Write your prediction in one line first." };
    return { kind, answer: line };
  };

  const setUpBox = (form, page, heading) => {
    const id = page + "#" + form.dataset.name;
    const lesson = form.dataset.lesson || heading;      // the page's title in the navigation
    const base = { page, lesson, name: form.dataset.name, kind: form.dataset.kind,
      key: form.dataset.key || "", tolerance: form.dataset.tolerance || "" };
    form.hidden = false;
    const kept = load().answers[id];
    if (kept) { settle(form, kept, false); return; }
    foldedBy(form).region.forEach(lock);
    const result = form.querySelector(".course-predict-result");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const entry = answerOf(form);
      const input = form.elements.answer;
      if (entry.problem) {
        result.textContent = entry.problem;
        if (input instanceof HTMLInputElement) input.setAttribute("aria-invalid", "true");
        return;
      }
      if (input instanceof HTMLInputElement) input.removeAttribute("aria-invalid");
      const full = { ...base, ...entry, skipped: false, at: new Date().toISOString() };
      keep(id, full);
      settle(form, full, true);
    });
    form.querySelector("[data-action=skip]").addEventListener("click", () => {
      const full = { ...base, answer: "", skipped: true, at: new Date().toISOString() };
      keep(id, full);
      settle(form, full, true);
    });
  };

  // -- the page "My predictions" -------------------------------------------------------------
  const COLUMNS = ["lesson", "name", "kind", "answer", "key", "tolerance", "within",
    "skipped", "at", "page"];

  const status = (entry) => {
    if (!entry) return "not yet";
    if (entry.skipped) return "skipped";
    if (entry.kind === "number") {
      return `${entry.answer} (run: ${entry.key}, ${entry.within ? "within" : "outside"} ` +
        `±${entry.tolerance})`;
    }
    if (entry.kind === "choice") {
      return `${entry.answer} (run: ${entry.key}${entry.within ? ", right" : ""})`;
    }
    return `“${entry.answer}”`;
  };

  // A spreadsheet runs a cell that starts with = + - @: such a cell is written as text.
  const csvCell = (value) => {
    let text = value === undefined || value === null ? "" : String(value);
    if (/^[=+\-@\t\r]/.test(text)) text = "'" + text;
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };

  const download = (name, type, text) => {
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type }));
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  };

  const setUpSummary = (table) => {
    const panel = document.querySelector(".course-my-predictions-panel");
    const totals = panel.querySelector(".course-my-predictions-totals");
    const show = () => {
      const answers = load().answers;
      const lessons = new Map();
      table.querySelectorAll("tbody tr").forEach((row) => {
        const entry = answers[row.dataset.page + "#" + row.dataset.name];
        row.querySelector(".course-predict-status").textContent = status(entry);
        const lesson = row.cells[0].textContent;
        const count = lessons.get(lesson) || { boxes: 0, answered: 0, within: 0, skipped: 0 };
        count.boxes += 1;
        if (entry && entry.skipped) count.skipped += 1;
        else if (entry) count.answered += 1;
        if (entry && entry.within) count.within += 1;
        lessons.set(lesson, count);
      });
      totals.replaceChildren(...Array.from(lessons, ([lesson, c]) => {
        const item = document.createElement("li");
        item.textContent = `${lesson}: ${c.answered} of ${c.boxes} answered, ${c.within} ` +
          `within tolerance or right, ${c.skipped} skipped`;
        return item;
      }));
    };
    const entries = () => Object.values(load().answers);
    panel.querySelector("[data-action=json]").addEventListener("click", () => download(
      "my-predictions.json", "application/json", JSON.stringify(
        { course: "RL Foundations for LLMs", exported: new Date().toISOString(),
          predictions: entries() }, null, 2) + "\n"));
    panel.querySelector("[data-action=csv]").addEventListener("click", () => download(
      "my-predictions.csv", "text/csv", [COLUMNS.join(",")].concat(entries().map(
        (entry) => COLUMNS.map((column) => csvCell(entry[column])).join(","))).join("\n") +
        "\n"));
    // Clearing asks once more, in the page: "Clear all", then "Yes, delete them" or "Keep them".
    const confirmBox = panel.querySelector(".course-my-predictions-confirm");
    panel.querySelector("[data-action=clear]").addEventListener("click", () => {
      confirmBox.hidden = false;
      confirmBox.querySelector("[data-action=yes]").focus();
    });
    confirmBox.querySelector("[data-action=no]").addEventListener("click", () => {
      confirmBox.hidden = true;
    });
    confirmBox.querySelector("[data-action=yes]").addEventListener("click", () => {
      localStorage.removeItem(STORE);
      confirmBox.hidden = true;
      show();
    });
    panel.hidden = false;
    show();
  };

  const setUp = () => {
    const forms = document.querySelectorAll("form.course-predict");
    const table = document.querySelector("table.course-my-predictions");
    if (!forms.length && !table) return;
    const page = sitePage();
    const heading = document.querySelector(".md-content h1");
    const lesson = heading ? Array.from(heading.childNodes)
      .filter((node) => !(node instanceof Element && node.matches(".headerlink")))
      .map((node) => node.textContent).join("").trim() : page;
    forms.forEach((form) => setUpBox(form, page, lesson));
    if (table) setUpSummary(table);
  };

  // Material swaps pages without a reload (navigation.instant) and emits on document$ each time.
  document$.subscribe(setUp);
})();
