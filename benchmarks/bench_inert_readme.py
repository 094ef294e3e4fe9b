"""Is nh3 a better way than the site's own to make a run's README harmless? Measured here.

Run:  .venv/bin/python -m pip install nh3==0.3.8   # not a dependency of the course
      .venv/bin/python benchmarks/bench_inert_readme.py

A run's README is untrusted text (a run note, a problem id, a completion quoted in it). The
site makes it inert before Markdown reads it (`course_site.run_pages.readme_markdown`, then
`inert_snippets`): what it would not show as text is escaped, fences are made canonical, a
Python fence is never run. The usual alternative renders first and sanitises the HTML after,
with nh3 (the maintained binding to the Rust crate ammonia) and an allowlist of tags,
attributes and address schemes. Both are run here on every README under runs/ and on the
test fixtures' hostile one, through Python-Markdown with the extensions of mkdocs.yml that
matter (tables, attribute lists, Markdown in HTML, superfences, arithmatex, snippets).

Reported: each route's time for all of them, and the cases that decide, each as what the page
would show or do:
- a `--8<--` line naming a teacher's file: snippets expands it while Markdown reads the page,
  before any HTML exists, so a sanitiser never sees the line, only the teacher's text;
- `<script>` and `<b>` in a title: the site shows what the author typed, as text; nh3 deletes
  the script with its text and keeps the bold;
- an attribute list `{: onclick=...}` and a `javascript:` link: both routes leave no handler.
And a Python fence: the site runs a page's Python blocks while it builds
(course_site.outputs), before Markdown; the site's route marks a README's `notest`, which no
sanitiser of the HTML can do after the fact.

Measured 2026-11-29 (nh3 0.3.8), on 29 READMEs (best of five): the site's route 141.9 ms,
nh3's 126.4 ms, a few milliseconds a page either way; but nh3's page holds the teacher's file
that the snippet line names (the student edition would publish it) and drops the `<script>`
a completion held instead of showing it, so the site keeps its own route; the decision is in
`course_site.run_pages`'s docstring. No test times anything: this is a measurement.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import markdown

REPO = Path(__file__).resolve().parents[1]
HOSTILE = ("# A run {: onclick=\"alert(1)\"} <b>bold</b> <script>alert(2)</script>\n\n"
           "[a link](javascript:alert(3)) and maths $\\href{javascript:alert(4)}{x}$\n\n"
           "```text\n--8<-- \"teacher/README.md\"\n```\n\n"
           "--8<-- \"teacher/README.md\"\n")
"""The deciding cases in one README (the fixture run's hostile README is measured too)."""
EXTENSIONS = ["tables", "attr_list", "md_in_html", "pymdownx.superfences",
              "pymdownx.arithmatex", "pymdownx.snippets"]
CONFIGS = {"pymdownx.arithmatex": {"generic": True},
           "pymdownx.snippets": {"base_path": [str(REPO)], "check_paths": False}}
ALLOWED = {"p", "h1", "h2", "h3", "h4", "ul", "ol", "li", "table", "thead", "tbody", "tr",
           "th", "td", "pre", "code", "a", "img", "em", "strong", "b", "i", "span", "div",
           "blockquote", "hr", "br"}
"""nh3's allowlist for the second route: what a README's Markdown legitimately makes."""


def rendered(text: str) -> str:
    return markdown.markdown(text, extensions=EXTENSIONS, extension_configs=CONFIGS)


def main() -> int:
    from course_site.run_pages import inert_snippets, readme_markdown

    try:
        import nh3
    except ImportError:
        print("nh3 is not installed: `.venv/bin/python -m pip install nh3==0.3.8` to measure "
              "(it is not a dependency of the course)")
        return 1
    readmes = sorted(REPO.glob("runs/run_*/README.md"))
    readmes += sorted((REPO / "tests" / "site" / "fixtures" / "runs").glob("*/README.md"))
    texts = [path.read_text(encoding="utf-8") for path in readmes] + [HOSTILE]

    def ours(text: str) -> str:
        return rendered(inert_snippets(readme_markdown(text)))

    def theirs(text: str) -> str:
        return nh3.clean(rendered(text), tags=ALLOWED, url_schemes={"http", "https", "mailto"})

    for name, route in (("the site's route", ours), ("render, then nh3", theirs)):
        best = float("inf")
        for _ in range(5):                      # the best of five: the first pays imports
            start = time.perf_counter()
            for text in texts:
                route(text)
            best = min(best, time.perf_counter() - start)
        print(f"{name:<18} {1000 * best:6.1f} ms for {len(texts)} READMEs (best of five)")
    teacher = (REPO / "teacher" / "README.md").read_text(encoding="utf-8").split("\n")[0]
    shown = {name: route(HOSTILE) for name, route in (("site", ours), ("nh3", theirs))}
    for case, test in (
            ("the teacher's file, named by a snippet line, is in the page",
             lambda page: teacher.strip("# ") in page),
            ("the title's <script> is shown as text", lambda page: "&lt;script&gt;" in page),
            ("the title's <b> is shown as text", lambda page: "&lt;b&gt;" in page),
            ("an onclick handler is left", lambda page: bool(re.search(r"<[^>]*\sonclick=", page))),
            ("a javascript: link is left", lambda page: bool(re.search(r"<a[^>]*javascript:",
                                                                      page)))):
        print(f"{case:<62} site: {'yes' if test(shown['site']) else 'no':<4} "
              f"nh3: {'yes' if test(shown['nh3']) else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
