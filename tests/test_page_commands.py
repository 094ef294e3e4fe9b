"""Every command a page tells a student to run works as written, from a fresh clone.

Milestone 0.5 once said to run `course select … --out runs/run_007`; run_007 exists and runs are
never overwritten, so the student's first command exited with status 2. This file runs the
pages' commands, so that such a page fails the test command instead of a student.

What counts as a command, on every `docs/**/*.md` page and the README:

- a fenced block whose language is bash, sh, shell or console (inside an admonition or a tab
  too): one script, run whole under `bash -euo pipefail`;
- an inline code span holding a complete `course` (or `.venv/bin/course`) command: a
  subcommand, at least one argument, and no placeholder. A bare `course compare` names a
  command; a span with `"..."`, `RUN_A` or `run_00X` in it is a template to fill in.

A page's commands run in page order (a later one may read what an earlier one wrote) in a
scratch copy of the repository's tracked files, with `PYTHONPATH` on the copy's `src/`: every
write lands in the copy, and the repository's `git status` must be the same afterwards. "Works"
means exit status 0 and no traceback; `course check` on an untouched stub may exit 1 when it
says `not started` (its documented status for an exercise not begun). Exit status 2, a usage
error or a refusal, is never accepted.

A block followed by `<!-- output of the block above -->` and a `text` block must print exactly
that (`…` in a shown line stands for any text, as the page tells the reader): the output a page
shows is the output its command gives. A page whose commands make the students' copy (which is
written from the last commit) gets a scratch copy with one commit.

Nothing is skipped silently. A command that `scripts/test.sh` runs on the repository itself
(`course runs verify`, about a minute) counts as covered. A block that cannot run in a test
(serving the site until Ctrl-C, the test command itself) carries, on the line right before its
fence, `<!-- not run by the tests: REASON -->`; `MARKED` lists every such block, so that a new
one is a visible decision.

`python tests/test_page_commands.py` lists what is run, covered, marked and left as a template.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from course_site.fences import fenced_blocks

REPO = Path(__file__).resolve().parents[1]


PAGES = [*sorted(path.relative_to(REPO).as_posix() for path in (REPO / "docs").rglob("*.md")),
         "README.md"]
# The repository's own environment; a git worktree without one uses the environment running us.
VENV = REPO / ".venv" if (REPO / ".venv").is_dir() else Path(sys.prefix)
TIMEOUT_S = 600   # a bound so that a hang fails, far above any command on a loaded machine

# Every block that carries a `not run by the tests` marker: (page, first command).
MARKED = sorted([
    ("README.md", "bash scripts/site.sh"),      # the two setup commands: serve, then test
    ("README.md", "bash scripts/site.sh"),      # the teacher's edit loop: serve, test one page
    ("docs/index.md", "bash scripts/site.sh"),  # the two setup commands
    ("docs/teacher/before-the-term.md", "bash scripts/test.sh"),  # the test command itself
    ("docs/teacher/before-the-term.md", "bash scripts/site.sh --both"),  # both editions: minutes
    ("docs/teacher/before-the-term.md", "cd ../course-students"),  # a push to GitHub
    ("docs/teacher/extending.md", "bash scripts/build_site.sh"),  # the strict build: minutes
    ("docs/teacher/extending.md",
     "bash scripts/test_page.sh docs/lessons/m1-reinforce.md"),  # its blocks: a third run
])

SHELLS = {"bash", "sh", "shell", "console"}
OUTPUT = "<!-- output of the block above -->"
"""The line before a `text` block that shows what the shell block before it prints."""
NEEDS_A_COMMIT = "scripts/student_copy.sh"
"""A command that reads the repository's last commit, so the scratch copy must have one."""
BACKSTOP = re.compile(r"^timeout (?:--\S+ )*\d+ ")
MARKER = re.compile(r"<!--\s*not run by the tests(?P<reason>.*?)-->")
SPAN = re.compile(r"`([^`\n]+(?:\n[^`\n]+)*)`")  # an inline code span: it may wrap a line
COMMAND = re.compile(r"^(?:\.venv/bin/)?course \S+ \S")
PLACEHOLDER = re.compile(
    r"\.\.\.|…"             # an ellipsis: "...", …
    r"|<[^>]*>"             # <something>
    r"|path/to/"            # path/to/something
    r"|\b[A-Z][A-Z_]*\b"    # an ALL-CAPS word: RUN_A, DIR, TEXT, P
    r"|\b\w*\d+X\b"         # run_00X
)


@dataclass(frozen=True)
class Command:
    """One script a page tells the reader to run: a fenced block, or an inline command."""

    page: str
    line: int       # the page's line where the script starts
    script: str
    shown: str | None = None    # what the page shows it prints (OUTPUT), if it does

    def lines(self) -> list[str]:
        """The command lines, without comments, blank lines, a backstop `timeout [OPTIONS]
        SECONDS` before the command (it runs the same command) and a `.venv/bin/` prefix."""
        bare = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in self.script.splitlines())
        return [BACKSTOP.sub("", line).removeprefix(".venv/bin/") for line in bare if line]


@dataclass
class Collected:
    """A page's commands: to run, covered by scripts/test.sh, marked, templates; marker errors."""

    run: list[Command] = field(default_factory=list)
    covered: list[Command] = field(default_factory=list)
    marked: list[tuple[Command, str]] = field(default_factory=list)   # with the reason
    templates: list[Command] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def collect(page: str, text: str, covered_lines: set[str]) -> Collected:
    """Sort a page's commands; `covered_lines` are the commands scripts/test.sh runs."""
    lines = text.split("\n")
    found = Collected()
    prose = list(lines)        # the page without its fenced blocks, line numbers kept
    markers_used: set[int] = set()
    fences = list(fenced_blocks(lines))
    for fence, after in itertools.zip_longest(fences, fences[1:]):
        prose[fence.open:fence.close + 1] = [""] * (fence.close + 1 - fence.open)
        if (fence.words() or [""])[0] not in SHELLS:
            continue
        shown = after is not None and (after.words() or [""])[0] == "text" \
            and lines[after.open - 1].strip() == OUTPUT
        block = Command(page, fence.open + 2, fence.code(lines),
                        after.code(lines) if after is not None and shown else None)
        marker = MARKER.search(lines[fence.open - 1]) if fence.open else None
        if marker:
            markers_used.add(fence.open - 1)
            found.marked.append((block, marker["reason"].lstrip(":").strip()))
        elif block.lines() and set(block.lines()) <= covered_lines:
            found.covered.append(block)
        else:
            found.run.append(block)
    joined = "\n".join(prose)
    for span in SPAN.finditer(joined):
        command = Command(page, joined.count("\n", 0, span.start()) + 1, " ".join(span[1].split()))
        if not COMMAND.match(command.script):
            continue
        if PLACEHOLDER.search(command.script):
            found.templates.append(command)
        elif set(command.lines()) <= covered_lines:
            found.covered.append(command)
        else:
            found.run.append(command)
    found.run.sort(key=lambda command: command.line)
    for block, reason in found.marked:
        if not reason:
            found.errors.append(f"{page}:{block.line - 2}: give the reason: "
                                "<!-- not run by the tests: REASON -->")
    for number, line in enumerate(lines):
        if MARKER.search(line) and number not in markers_used:
            found.errors.append(f"{page}:{number + 1}: a `not run by the tests` marker must be "
                                "on the line right before a bash fence")
    return found


def commands_of_the_test_script() -> set[str]:
    """The command lines of scripts/test.sh, which the test command runs on the repository."""
    return set(Command("scripts/test.sh", 1, (REPO / "scripts" / "test.sh").read_text()).lines())


COLLECTED = {page: collect(page, (REPO / page).read_text(encoding="utf-8"),
                           commands_of_the_test_script()) for page in PAGES}


def scratch_copy(folder: Path, committed: bool = False) -> Path:
    """The repository's tracked files as they are now (uncommitted edits too), in `folder`,
    with links to its `.venv` and `node_modules`; with `committed`, as one commit of a new
    repository (the links left out of it)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout
    for name in filter(None, tracked.split("\0")):
        source, target = REPO / name, folder / name
        if source.is_file():    # a tracked file deleted in the working tree stays deleted
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target, follow_symlinks=False)
    for name, source in ((".venv", VENV), ("node_modules", REPO / "node_modules")):
        if source.is_dir():
            (folder / name).symlink_to(source)
    if committed:
        (folder / ".git" / "info").mkdir(parents=True)
        (folder / ".git" / "info" / "exclude").write_text(".venv\nnode_modules\n")
        for git in (["init", "-q"], ["add", "-A"],
                    ["-c", "user.name=test", "-c", "user.email=test@localhost", "commit",
                     "-q", "-m", "the course as it is now"]):
            subprocess.run(["git", *git], cwd=folder, check=True, capture_output=True)
    return folder


def shown_problem(command: Command, printed: str) -> str | None:
    """None if `printed` is what the page shows the command prints (a `…` in a shown line
    stands for any text), else the first line that differs."""
    assert command.shown is not None
    want, got = command.shown.rstrip("\n").split("\n"), printed.rstrip("\n").split("\n")
    for number, (shown, line) in enumerate(itertools.zip_longest(want, got), start=1):
        pattern = None if shown is None else ".*".join(map(re.escape, shown.split("…")))
        if pattern is None or line is None or not re.fullmatch(pattern, line):
            return (f"printed line {number} as {line!r}, the page shows {shown!r}"
                    if line is not None else f"printed {len(got)} lines, the page shows more")
    return None


def failure(command: Command, scratch: Path) -> str | None:
    """Run `command` in `scratch` as the page says to; None if it works, else what went wrong."""
    env = dict(os.environ, PATH=f"{scratch / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(scratch / "src"))
    # The copy's src/ has no compiled modules; where PYTHONDONTWRITEBYTECODE is set, every
    # command would compile the course anew. Let the first command of the page write them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # Blank lines first, so that bash's own messages give the page's line numbers.
    source = "\n" * (command.line - 1) + command.script
    where = f"{command.page}:{command.line}: `{command.script.strip()}`"
    with subprocess.Popen(["bash", "-euo", "pipefail", "-c", source], cwd=scratch, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:
        try:
            out, err = process.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)    # bash and every command it started
            return f"{where} did not finish in {TIMEOUT_S} s"
    checking = all(line.startswith("course check ") for line in command.lines())
    if "Traceback" not in err and (process.returncode == 0 or (
            process.returncode == 1 and checking and "not started" in out)):
        if command.shown is not None and (problem := shown_problem(command, out)):
            return f"{where} {problem}"
        return None
    tail = "\n".join(f"    {line}" for line in err.strip().splitlines()[-6:])
    return f"{where} exited with status {process.returncode}\n{tail or '    (stderr empty)'}"


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout


PAGES_WITH_COMMANDS = [page for page in PAGES if COLLECTED[page].run]


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS)
def test_every_command_of_the_page_works_as_written(page: str, tmp_path: Path) -> None:
    """The page's commands, in page order, in a scratch copy of its own; each one that fails
    is named by its line. The pages are tests of their own, so that the test processes share
    them (pytest-xdist). The repository's `git status` is the same afterwards."""
    before = git_status()
    scratch = scratch_copy(tmp_path, committed=any(NEEDS_A_COMMIT in command.script
                                                   for command in COLLECTED[page].run))
    failures = [found for command in COLLECTED[page].run
                if (found := failure(command, scratch)) is not None]
    assert not failures, "\n".join(failures)
    assert git_status() == before, f"a command of {page} wrote into the repository"


def test_every_block_left_out_says_why() -> None:
    errors = [error for page in PAGES for error in COLLECTED[page].errors]
    assert not errors, "\n".join(errors)
    marked = sorted((page, block.lines()[0]) for page in PAGES
                    for block, _ in COLLECTED[page].marked)
    # The students' copy has no teacher's guide (scripts/student_copy.sh): only present pages.
    present = [(page, command) for page, command in MARKED if page in PAGES]
    assert marked == present, ("a block was marked `not run by the tests`, or unmarked: "
                               "update MARKED")


# -- the test can fail ---------------------------------------------------------------------------

def test_the_old_m05_command_is_reported(tmp_path: Path) -> None:
    old = Command("docs/lessons/m05-selection.md", 234, "course select --note x --out runs/run_007")
    message = failure(old, scratch_copy(tmp_path))
    assert message is not None
    assert message.startswith("docs/lessons/m05-selection.md:234: "
                              "`course select --note x --out runs/run_007` exited with status 2\n")
    assert "run_007" in message.splitlines()[1]    # the last lines of stderr say why


SAMPLE = """\
Run `course score --spec` first, then
`course tokens
"Final: 323"`; `course compare` compares two runs: `course compare RUN_A RUN_B`.

!!! example "Your own run"
    Some prose, then:

    ```bash
    course eval --note "mine" \\
                --out runs/mine
    ```

```python
print("`course kl --beta 1` in a Python block is not a command")
```

`.venv/bin/course kl --out runs/run_00X --note "..."` and `course select … --out runs/x`.

<!-- not run by the tests -->
```bash
course runs verify
```
<!-- not run by the tests: it serves until Ctrl-C -->
"""


def test_the_test_script_runs_the_verification_the_pages_name() -> None:
    """`course runs verify`, as the pages write it, is a line of scripts/test.sh: there it
    runs once, beside pytest; written otherwise there (with `--jobs 1`, say), every page
    naming it ran a whole verification of its own (one took 134 s and timed out)."""
    assert "course runs verify" in commands_of_the_test_script()


def test_the_collector_finds_blocks_and_spans_and_leaves_templates() -> None:
    found = collect("page.md", SAMPLE, {"course runs verify"})
    assert found.run == [
        Command("page.md", 1, "course score --spec"),
        Command("page.md", 2, 'course tokens "Final: 323"'),
        Command("page.md", 9, 'course eval --note "mine" \\\n            --out runs/mine'),
    ]
    assert [command.line for command in found.templates] == [3, 17, 17]
    assert found.errors == ["page.md:19: give the reason: <!-- not run by the tests: REASON -->",
                            "page.md:23: a `not run by the tests` marker must be on the line "
                            "right before a bash fence"]


if __name__ == "__main__":
    for page in PAGES:
        found = COLLECTED[page]
        rows = [("run", command) for command in found.run]
        rows += [("covered by scripts/test.sh", command) for command in found.covered]
        rows += [(f"marked: {reason}", block) for block, reason in found.marked]
        rows += [("template", command) for command in found.templates]
        for group, command in rows:
            print(f"{page}:{command.line}  {' ; '.join(command.lines())}\n    {group}")


def test_a_shown_output_is_bound_to_its_block_and_an_ellipsis_is_any_text() -> None:
    page = ("```bash\ncourse score --spec\n```\n\n" + OUTPUT + "\n```text\nwrote … files\nok\n```\n"
            "\n```bash\ncourse runs list\n```\n\n```text\nnot bound: no marker\n```\n")
    first, second = collect("page.md", page, set()).run
    assert first.shown == "wrote … files\nok" and second.shown is None
    assert shown_problem(first, "wrote 546 files\nok\n") is None
    assert shown_problem(first, "wrote 546 files\n") == "printed 1 lines, the page shows more"
    assert shown_problem(first, "wrote 546 files\nok\nmore\n") == (
        "printed line 3 as 'more', the page shows None")
