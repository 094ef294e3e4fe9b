"""The course's site: what turns docs/, runs/ and the course's own output into web pages.

The boundary: this package reads what the course makes (its modules, data, runs, the text its
code prints) and the course never imports it; its imports point into `course` only.

The course keeps one rule for the site, and it is written here so that it is not a surprise:
the modules that the reader's browser runs in Pyodide (`course.tryit` and what it imports: the
scorer, `data`'s loaders, `selection`, `exercises`, `explain`) import the standard library
only; numpy is imported inside the few functions that need it. The reason is the site's
offline promise: npm's `pyodide` package is the runtime and its standard library; its lock
file lists numpy, but numpy's browser wheel comes from a CDN and is in no registry the site
may draw on. Numpy in those modules would make the Try-it boxes need the network.

It is one MkDocs plugin, `course-site` (`plugin.CourseSite`, registered in pyproject.toml),
whose events call the modules below in the order the build needs them:

- `editions`       the student edition drops teacher blocks and the teacher's guide
- `vendor_assets`  Mermaid, MathJax and Pyodide copied from node_modules/ (no CDN)
- `try_it`         ```try-it boxes: the scorer run in the reader's browser (Pyodide)
- `fences`         the fence options `{.python notest}` and `continuation`, kept as classes
- `outputs`        each Python block run once (`run_blocks`), its output shown beneath it
- `predictions`   prediction boxes: an answer before the output, the key read from the output
- `run_pages`      one page per runs/run_*/ folder, every value shown as inert text
- `notebooks`      lab pages: no CDN script, download links, kernels that do not warn
- `serve`          `mkdocs serve --dirty`: labs cached, a saved page rebuilt alone
- `figures`        concept figures drawn by `course.reports.figures`; pictures numbered
- `search_index`   teaching pages ranked first, maths as text in previews

Everything a page shows that comes from a file or from a block's output is untrusted: it is
escaped, or inserted after Markdown has been rendered, so it can never become markup, a
snippet or a script. The pages' own Python is trusted like any code (the build runs it).
"""
