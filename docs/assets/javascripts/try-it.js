// Try-it boxes (written by site_hooks/try_it.py): the course's own scorer and checks, run in
// the browser. Nothing is loaded with the page. The first press of a box's button loads Pyodide
// (CPython compiled to WebAssembly) from this site's copy in assets/vendor/pyodide/, writes the
// repository's files that the boxes need (assets/try-it/files.json lists them) into its file
// system as a small copy of the repository, and imports course.tryit; every later press, in any
// box, reuses it. Each call returns JSON, shown here as text: the verdicts are Python's, this
// file only displays them. An exercise's text is kept in this browser (localStorage), like the
// checklists (checklists.js), and checked by course.exercises, as `course check` does.
//
// A first load takes seconds (many on a slow machine), so the box's status line (a polite live
// region: screen readers say each change) names each stage as it starts, each replacing the
// last: "Fetching the Python runtime (N MB)…", with N the sum of the runtime files' sizes as
// the server gives them (Content-Length), then "Starting Python…", then "Loading the course…",
// then the verdict. A failure says which stage failed.
(() => {
  const PYODIDE = new URL("../vendor/pyodide/", document.currentScript.src).href;
  const FILES = new URL("../try-it/", document.currentScript.src).href;
  const HOME = "/home/pyodide/repo/";  // the repository's copy: src/, data/, workspace/
  const STORE = "course-exercise:";
  // What the first press downloads from assets/vendor/pyodide/ (site_hooks/vendor_assets.py
  // copies these five): the loader imported here, and what it fetches.
  const RUNTIME = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                   "pyodide-lock.json"];
  let module = null;  // a promise of the course.tryit module, made on the first press
  let ready = false;  // ... and whether it is kept

  // The load's stages, each as its status line shows it and as a failure names it. Every box
  // waiting for the load (pressed before it ended) follows them.
  const waiting = new Set();  // the status lines of those boxes
  let stage = { shown: "", name: "" };
  const enter = (shown, name) => {
    stage = { shown, name };
    if (shown) waiting.forEach((status) => { status.textContent = shown; });
  };

  // A file of the site, fetched; a failure names it (`name: HTTP 404`, `name: Failed to fetch`).
  const get = async (url, name, options) => {
    let response;
    try {
      response = await fetch(url, options);
    } catch (error) {
      throw new Error(`${name}: ${error.message}`);
    }
    if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
    return response;
  };

  // The runtime's size in bytes, from HEAD requests (nothing is downloaded twice); null if the
  // server gives no Content-Length. A file that cannot be had fails here, named: Pyodide itself
  // only logs a failed WebAssembly download, and waits.
  const runtimeBytes = async () => {
    const sizes = await Promise.all(RUNTIME.map(async (name) => {
      const response = await get(PYODIDE + name, name, { method: "HEAD" });
      return Number(response.headers.get("Content-Length") ?? NaN);
    }));
    const total = sizes.reduce((sum, bytes) => sum + bytes, 0);
    return Number.isFinite(total) && total > 0 ? total : null;
  };

  // The course's files, fetched all at once.
  const courseFiles = async () => {
    const names = await (await get(FILES + "files.json", "files.json")).json();
    return Promise.all(names.map(async (name) => {
      const response = await get(FILES + name, name);
      return [name, new Uint8Array(await response.arrayBuffer())];
    }));
  };

  const loadPython = async () => {
    try {
      enter("", "fetching the Python runtime");
      const bytes = await runtimeBytes();
      enter(`Fetching the Python runtime${bytes ? ` (${(bytes / 1e6).toFixed(1)} MB)` : ""}…`,
            "fetching the Python runtime");
      const { loadPyodide } = await import(PYODIDE + "pyodide.mjs");
      let files = null;
      // fsInit runs once the WebAssembly is downloaded and compiled, as Python starts; the
      // course's files are fetched meanwhile (the network is free by then).
      const pyodide = await loadPyodide({
        indexURL: PYODIDE,
        fsInit: async () => {
          enter("Starting Python…", "starting Python");
          files = courseFiles();
          files.catch(() => {});  // its error is reported at its own stage, below
        },
      });
      enter("Loading the course…", "loading the course");
      for (const [name, data] of await (files ?? courseFiles())) {
        const path = HOME + name;
        pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
        pyodide.FS.writeFile(path, data);
      }
      pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(HOME + "src")})`);
      return pyodide.pyimport("course.tryit");
    } catch (error) {
      const failed = new Error(error?.message ?? String(error));
      failed.stage = stage.name;
      throw failed;
    }
  };

  const python = () => {
    module ??= loadPython().then((tryit) => {
      ready = true;
      return tryit;
    }, (error) => {
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

  // A completion as a Python literal (ascii(), `shown`), in a cell that may wrap before each
  // escape (\xa0, \uff13, \n) and before "... (N chars)", never inside one.
  const literal = (text) => {
    const cell = element("td", undefined, { class: "try-it-code" });
    const parts = text.split(/(?=\\|\.\.\. \()/);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] === "\\" && i + 1 < parts.length ? parts[i] + parts[++i] : parts[i];
      if (cell.firstChild) cell.append(document.createElement("wbr"));
      cell.append(part);
    }
    return cell;
  };

  // An integer as text; with more than 40 digits, its sign and first 20, then "... (N digits)",
  // as course.formatting.short_number shows one (a golden case's answer may have hundreds).
  const number = (text) => {
    const digits = text.replace(/^-/, "");
    return digits.length <= 40 ? text
      : `${text.slice(0, text.length - digits.length)}${digits.slice(0, 20)}... ` +
        `(${digits.length} digits)`;
  };

  // A result table fits its box on a desktop (course.css lets its cells wrap); where it cannot
  // (a phone) it scrolls inside its region, named for screen readers. As scroll-regions.js does
  // for the page's wide content, a region that overflows is reachable by Tab (tabindex 0: the
  // arrow keys scroll it) and its edges fade where more lies beyond (course-scrolls-right,
  // course-scrolls-left), re-measured when its width changes or it is scrolled.
  const edges = (region) => {
    const overflows = region.scrollWidth > region.clientWidth + 1;
    if (overflows) region.setAttribute("tabindex", "0");
    else region.removeAttribute("tabindex");
    region.classList.toggle("course-scrolls-right", overflows &&
                            region.scrollLeft + region.clientWidth < region.scrollWidth - 1);
    region.classList.toggle("course-scrolls-left", overflows && region.scrollLeft > 1);
  };
  const resized = new ResizeObserver((entries) => entries.forEach((e) => edges(e.target)));

  const table = (label, headings, rows, kind) => {
    const region = element("div", undefined, { class: "try-it-scroll", role: "region",
                                               "aria-label": label });
    const grid = element("table", undefined, { class: `try-it-table try-it-${kind}` });
    const head = grid.createTHead().insertRow();
    headings.forEach((text) => head.append(element("th", text, { scope: "col" })));
    const body = grid.createTBody();
    rows.forEach((cells) => {
      const row = body.insertRow();
      cells.forEach((cell) => row.append(cell instanceof Node ? cell : element("td", cell)));
    });
    region.append(grid);
    region.addEventListener("scroll", () => edges(region), { passive: true });
    resized.observe(region);
    return region;
  };

  // Runs `work` (which gets course.tryit) and reports in the box's live status line: on the
  // first press, the load's stages as they start, then the verdict, or what failed.
  const run = async (box, what, work) => {
    const status = box.querySelector(".try-it-status");
    const started = performance.now();
    let doing = what.toLowerCase();
    box.dataset.state = "busy";
    try {
      let tryit;
      if (ready) {
        status.textContent = `${what}…`;
        tryit = await python();
      } else {
        waiting.add(status);
        const loading = python();
        status.textContent = stage.shown;  // the stage under way ("" before the first)
        try {
          tryit = await loading;
        } catch (error) {
          doing = error.stage;
          throw error;
        } finally {
          waiting.delete(status);
        }
      }
      const message = work(tryit);
      box.dataset.state = "done";
      status.textContent = `${message} (${Math.round(performance.now() - started)} ms)`;
    } catch (error) {
      box.dataset.state = "error";
      status.textContent = `Python could not run here: ${doing} failed (${error.message}). ` +
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
            rows.map((row) => [row.case, literal(row.shown), row.expected,
                               row.reward.toFixed(1), row.code, row.reason, edit(row)]),
            "near-misses"));
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
      report.cases.map((c) => [c.suite, c.id, literal(c.shown), number(c.expected_answer),
                               `${c.suite === "correct" ? "1.0" : "0.0"} ${c.want_code}`,
                               `${c.reward.toFixed(1)} ${c.code}`,
                               c.passed ? "pass" : "FAIL"]),
      "golden"));
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
