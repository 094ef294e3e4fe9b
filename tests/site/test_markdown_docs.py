"""The docs-as-tests machinery catches a failing block wherever a lesson puts it.

Each test lays out a miniature repository in a temporary folder (tests/conftest.py copied
byte for byte, a docs/ folder of fixture pages) and runs pytest on it in a subprocess with
exactly the arguments the test script uses (`MARKDOWN_DOCS_ARGS`), so what is proven here is
what runs in CI.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

MARKDOWN_DOCS_ARGS = ["--markdown-docs", "--markdown-docs-syntax=superfences",
                      "--ignore=docs/labs", "tests", "docs"]
"""The pytest arguments that run every Python block in docs/ (scripts/test.sh uses them)."""

PASSING = "assert 1 + 1 == 2"
FAILING = "assert 1 + 1 == 3, 'this block ran'"

# One block per place a lesson can put code. `{code}` is filled with PASSING or FAILING.
PLACES = {
    "top_level": """
        ```python
        {code}
        ```
        """,
    "admonition": """
        !!! note "A note"

            Some text.

            ```python
            {code}
            ```
        """,
    "collapsible": """
        ??? tip "Click to open"

            ```python
            {code}
            ```
        """,
    "collapsible_open": """
        ???+ example

            ```python
            {code}
            ```
        """,
    "tab": """
        === "First tab"

            ```python
            assert True
            ```

        === "Second tab"

            ```python
            {code}
            ```
        """,
    "tab_in_admonition": """
        !!! example "Both containers"

            === "Inside a tab inside an admonition"

                ```python
                {code}
                ```
        """,
}


def page(place: str, code: str) -> str:
    return textwrap.dedent(PLACES[place]).format(code=code).lstrip()


def layout(root: Path, docs: dict[str, str]) -> Path:
    """A miniature repository: the real tests/conftest.py and the given docs pages."""
    (root / "tests").mkdir(parents=True)
    shutil.copy(TESTS / "conftest.py", root / "tests" / "conftest.py")
    for name, text in docs.items():
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run_pytest(root: Path, args: list[str] = MARKDOWN_DOCS_ARGS) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rA", "--rootdir", str(root), *args],
                          cwd=root, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def outcomes(output: str) -> dict[str, str]:
    """`{test id: PASSED/FAILED}` from pytest's -rA summary."""
    return {m["id"]: m["outcome"]
            for m in re.finditer(r"^(?P<outcome>PASSED|FAILED) (?P<id>\S+)", output, re.M)}


def test_every_place_is_collected_and_passes(tmp_path):
    root = layout(tmp_path, {f"{place}.md": page(place, PASSING) for place in PLACES})
    code, output = run_pytest(root)
    assert code == 0, output
    passed = outcomes(output)
    # one block per page, plus the extra passing block of the "tab" page
    assert sorted({test.split("::")[0] for test in passed}) == sorted(
        f"docs/{place}.md" for place in PLACES), output
    assert len(passed) == len(PLACES) + 1, output


def test_a_failing_block_fails_the_run_wherever_it_is(tmp_path):
    root = layout(tmp_path, {f"{place}.md": page(place, FAILING) for place in PLACES})
    code, output = run_pytest(root)
    assert code == 1, output
    failed = sorted(test for test, outcome in outcomes(output).items() if outcome == "FAILED")
    # each page's failing block, reported at its own line (not a shifted one)
    expected = []
    for place in sorted(PLACES):
        lines = page(place, FAILING).splitlines()
        line = next(i for i, text in enumerate(lines) if FAILING in text)
        expected.append(f"docs/{place}.md::[CodeFence#{2 if place == 'tab' else 1}][line:{line}]")
    assert failed == expected, output
    assert output.count("this block ran") >= len(PLACES)


def test_without_the_conftest_hook_nested_blocks_are_silently_skipped(tmp_path):
    """The control: the plugin's own parser does not see blocks inside containers (which is
    why tests/conftest.py exists). If this starts failing, the plugin learned to; good news."""
    root = layout(tmp_path, {"lesson.md": page("admonition", FAILING)})
    (root / "tests" / "conftest.py").unlink()
    code, output = run_pytest(root)
    assert code == 5, output  # pytest's "no tests collected"


def test_notest_and_continuation_options(tmp_path):
    lesson = textwrap.dedent("""
        ```python
        total = 40
        ```

        ```{.python continuation}
        total += 2
        assert total == 42
        ```

        ```{.python notest}
        raise RuntimeError("shown, never run")
        ```

        ```{.python .notest}
        raise RuntimeError("the class spelling is accepted too")
        ```

        !!! note

            ```{.python continuation}
            assert total == 42
            ```

        ```python
        assert "total" not in globals(), "a block without continuation starts afresh"
        ```
        """)
    root = layout(tmp_path, {"lesson.md": lesson})
    code, output = run_pytest(root)
    assert code == 0, output
    assert len(outcomes(output)) == 4, output


def test_lab_notebooks_are_not_imported(tmp_path):
    """`--markdown-docs` imports every .py under the given paths; the labs must stay out."""
    lab = 'raise RuntimeError("a lab notebook was imported by pytest")\n'
    root = layout(tmp_path, {"index.md": page("top_level", PASSING), "labs/lab_x.py": lab})
    code, output = run_pytest(root)
    assert code == 0, output
    assert "lab notebook was imported" not in output
    # the control: without --ignore=docs/labs the notebook is imported and the run errors
    code, output = run_pytest(root, [a for a in MARKDOWN_DOCS_ARGS if a != "--ignore=docs/labs"])
    assert code != 0 and "lab notebook was imported" in output, output
