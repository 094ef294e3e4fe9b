// Try-it boxes (written by site_hooks/try_it.py): the course's own scorer and checks, run in
// the browser. Nothing is loaded with the page. The first press of a box's button loads Pyodide
// (CPython compiled to WebAssembly) from this site's copy in assets/vendor/pyodide/, writes the
// repository's files that the boxes need (assets/try-it/files.json lists them) into its file
// system as a small copy of the repository, and imports course.tryit; every later press, in any
// box, reuses it. Each call returns JSON, shown here as text: the verdicts are Python's, this
// file only displays them. An exercise's text is kept in this browser (localStorage), like the
// checklists (checklists.js), and checked by course.exercises, as `course check` does.
(() => {
  const PYODIDE = new URL("../vendor/pyodide/", document.currentScript.src).href;
  const FILES = new URL("../try-it/", document.currentScript.src).href;
  const HOME = "/home/pyodide/repo/";  // the repository's copy: src/, data/, workspace/
  const STORE = "course-exercise:";
  let module = null;  // a promise of the course.tryit module, made on the first press

  const loadPython = async () => {
    const { loadPyodide } = await import(PYODIDE + "pyodide.mjs");
    const pyodide = await loadPyodide({ indexURL: PYODIDE });
    const names = await (await fetch(FILES + "files.json")).json();
    for (const name of names) {
      const response = await fetch(FILES + name);
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
      const path = HOME + name;
      pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
      pyodide.FS.writeFile(path, new Uint8Array(await response.arrayBuffer()));
    }
    pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(HOME + "src")})`);
    return pyodide.pyimport("course.tryit");
  };

  const python = () => {
    module ??= loadPython().catch((error) => {
      module = null;  // a failed load is tried again on the next press
      throw error;
    });
    return module;
  };

  // Small DOM helpers: every text goes in as text, never as HTML.
  const element = (tag, text, attributes = {}) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  };

  const table = (label, headings, rows) => {
    const region = element("div", undefined, { class: "try-it-scroll", tabindex: "0",
                                               role: "region", "aria-label": label });
    const grid = element("table", undefined, { class: "try-it-table" });  // scrolls in region
    const head = grid.createTHead().insertRow();
    headings.forEach((text) => head.append(element("th", text, { scope: "col" })));
    const body = grid.createTBody();
    rows.forEach((cells) => {
      const row = body.insertRow();
      cells.forEach((cell) => row.append(cell instanceof Node ? cell : element("td", cell)));
    });
    region.append(grid);
    return region;
  };

  // Runs `work` (which gets course.tryit) and reports in the box's live status line.
  const run = async (box, what, work) => {
    const status = box.querySelector(".try-it-status");
    const started = performance.now();
    box.dataset.state = "busy";
    status.textContent = module ? `${what}…`
      : `Loading Python in your browser (once), then ${what.toLowerCase()}…`;
    try {
      const message = work(await python());
      box.dataset.state = "done";
      status.textContent = `${message} (${Math.round(performance.now() - started)} ms)`;
    } catch (error) {
      box.dataset.state = "error";
      status.textContent = `Python could not run here: ${error.message}. ` +
        `On your machine, ${box.dataset.command} gives the same verdict.`;
    }
  };

  const showVersion = (box, version) => {
    box.querySelector(".try-it-version").textContent = `scorer ${version}`;
  };

  const score = (box, tryit) => {
    const completion = box.querySelector("textarea").value;
    const verdict = JSON.parse(tryit.score_text(completion, box.querySelector("input").value));
    const result = box.querySelector(".try-it-result");
    if (verdict.error) {
      result.replaceChildren(element("p", verdict.error));
      return "Not scored";
    }
    showVersion(box, verdict.scorer_version);
    result.replaceChildren(element("pre", verdict.lines.join("\n"), { class: "try-it-verdict" }));
    return `Scored: reward ${verdict.reward.toFixed(1)}, code ${verdict.code}`;
  };

  const nearMisses = (box, tryit) => {
    const rows = JSON.parse(tryit.near_misses());
    showVersion(box, rows[0].scorer_version);
    const edit = (row) => {
      const button = element("button", "Edit", { type: "button", class: "md-button",
                                                 "aria-label": `Edit: ${row.case}` });
      button.addEventListener("click", () => {
        box.querySelector("textarea").value = row.completion;
        box.querySelector("input").value = row.expected;
        run(box, "Scoring", (tryit) => score(box, tryit));
        box.querySelector("textarea").focus();
      });
      const cell = element("td");
      cell.append(button);
      return cell;
    };
    const agree = rows.filter((row) => row.code === row.spec_code).length;
    box.querySelector(".try-it-result").replaceChildren(
      element("p", `The spec's ${rows.length} near misses of Final: 323 that are text ` +
                   "(course score --spec), each scored here. Edit one to see why."),
      table("Near misses, scored", ["case", "completion", "expected", "reward", "code", "why", ""],
            rows.map((row) => [row.case, element("td", row.shown, { class: "try-it-code" }),
                               row.expected, row.reward.toFixed(1), row.code, row.reason,
                               edit(row)])));
    return `${rows.length} near misses scored; ${agree} of ${rows.length} get the spec's code`;
  };

  const golden = (box, tryit) => {
    const report = JSON.parse(tryit.golden_suites());
    showVersion(box, report.scorer_version);
    const count = (suite) => {
      const cases = report.cases.filter((c) => c.suite === suite);
      return `${cases.filter((c) => c.passed).length}/${cases.length}`;
    };
    const passed = report.cases.filter((c) => c.passed).length;
    box.querySelector(".try-it-result").replaceChildren(table(
      "Golden suites, case by case",
      ["suite", "id", "completion", "expected", "must get", "got", "verdict"],
      report.cases.map((c) => [c.suite, c.id, element("td", c.shown, { class: "try-it-code" }),
                               c.expected_answer,
                               `${c.suite === "correct" ? "1.0" : "0.0"} ${c.want_code}`,
                               `${c.reward.toFixed(1)} ${c.code}`,
                               c.passed ? "pass" : "FAIL"])));
    return `${passed} of ${report.cases.length} cases pass: golden correct ${count("correct")}, ` +
           `exploits ${count("exploits")}`;
  };

  const check = (box, tryit) => {
    const source = box.querySelector("textarea");
    const report = JSON.parse(tryit.check_exercise(source.dataset.exercise, source.value,
                                                   HOME + "workspace"));
    box.querySelector(".try-it-result").replaceChildren(
      element("pre", report.report, { class: "try-it-verdict" }));
    box.dataset.status = report.status;
    showVersion(box, report.scorer_version);
    return `Checked: ${report.status}` +
      (report.cases ? `, ${report.passed} of ${report.cases} cases pass` : "") +
      `. ${report.note}`;
  };

  // An exercise's text: restored from this browser, saved at every edit, reset to the stub.
  const keep = (box) => {
    const source = box.querySelector("textarea");
    const key = STORE + source.dataset.exercise;
    const saved = localStorage.getItem(key);
    if (saved !== null) source.value = saved;
    source.addEventListener("input", () => localStorage.setItem(key, source.value));
    box.querySelector("button[data-action=reset]").addEventListener("click", () => {
      source.value = source.defaultValue;
      localStorage.removeItem(key);
      box.querySelector(".try-it-status").textContent = "Back to the stub.";
      box.querySelector(".try-it-result").replaceChildren();
    });
  };

  const ACTIONS = {
    score: ["Scoring", score],
    "near-misses": ["Scoring the near misses", nearMisses],
    golden: ["Running the golden suites", golden],
    check: ["Checking", check],
  };

  const setUp = () => {
    document.querySelectorAll(".md-typeset .try-it").forEach((box) => {
      box.querySelector(".try-it-static").hidden = true;
      box.querySelector(".try-it-live").hidden = false;
      if (box.dataset.kind === "exercise") keep(box);
      box.querySelectorAll("button[data-action]").forEach((button) => {
        if (!(button.dataset.action in ACTIONS)) return;  // reset: set up by keep()
        const [what, work] = ACTIONS[button.dataset.action];
        button.addEventListener("click", () => run(box, what, (tryit) => work(box, tryit)));
      });
    });
  };

  // Material swaps pages without a reload (navigation.instant) and emits on document$ each time.
  document$.subscribe(setUp);
})();
