"""The half of `course check` that needs only the standard library, so that it runs in the browser.

`course.check` checks every exercise; the site's in-page exercises (src/course_site/try_it.py)
run this module in the site's Pyodide, which has no numpy (its browser wheel is on a CDN only),
to check the three exercises whose checker needs nothing more: `pick_best`, `spec_tests` and
`red_team` (`STDLIB_CHECKERS`). Both callers use the same code:

- the registry of exercises (`EXERCISES`) and what a check reports (`Case`, `Report`);
- loading the student's file fresh, from its source text, and calling the student's code
  (`load_student_file`, `_call`); what an error in the student's code reports (`StudentError`,
  `Raised`, `student_line`);
- the checkers of `pick_best` (M0.5), `spec_tests` (M4) and `red_team` (M5);
- running one checker on one file (`run_check`), and the report printer (`format_report`).

`run_check` loads the file in this process by default (`loaded_here`): that is what the
browser's self-check does, in Pyodide's one interpreter. `course check` grades instead:
`course.sandbox` runs the file in a separate process and hands the checker a stand-in for the
module, whose values come back as plain data.

`course.check` adds the checkers that need numpy (reinforce_step, trajectory_return, kl) and
the kata's, whose answer key the site never ships.
"""

from __future__ import annotations

import copy
import importlib.util
import textwrap
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from course import selection
from course.data import load_golden, load_pack, load_problems
from course.formatting import terminal_text
from course.paths import DATA_DIR, display_path
from course.rubrics import RUBRICS
from course.scorer import CODES, SPEC_DECISIONS, score

STATUSES = ("not started", "passing", "failing", "error")

# -- 1. the registry -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Exercise:
    name: str       # what the student types: `course check NAME`
    milestone: str  # where it belongs in the course, e.g. "M0.5"
    file: str       # the stub in workspace/ (the reference solution has the same name)
    done: str       # what `passing` means, in one sentence
    hint: str       # printed under a failing or error report


EXERCISES: dict[str, Exercise] = {e.name: e for e in (
    Exercise("kata", "M0", "kata_m0_labels.py",
             "every example of the Milestone 0 kata has the key's cause (without the key: a "
             "known cause) and a proposed fix",
             "Decide who was wrong: the policy (model_failure), the scorer of the time "
             "(verifier_bug), the prompt (ambiguous_spec), or a weak rubric that was gamed "
             "(reward_hack). Re-score the completion with `course score` to compare."),
    Exercise("pick_best", "M0.5", "pick_best.py",
             "the highest reward is picked on every case, ties going to the first sample",
             "Keep the first sample as the best so far and replace it only when a later sample "
             "has a STRICTLY greater reward."),
    Exercise("reinforce_step", "M1", "reinforce_step.py",
             "A = r - b and the new logits match the REINFORCE update on every case",
             "π = softmax(θ) (subtract max(θ) before exp); A = r - b; "
             "θ' = θ + lr · A · (onehot(a) - π), built as a new array."),
    Exercise("trajectory_return", "M2", "trajectory_return.py",
             "the return and every return-to-go match the hand-worked values",
             "G = r_0 + γ r_1 + γ² r_2 + ...; going backwards, G_t = r_t + γ · G_(t+1), "
             "starting from 0 after the last step."),
    Exercise("kl", "M3", "kl.py",
             "KL(p ‖ q) matches course.kl.kl_divergence on every case, including the zeros",
             "Sum p(a) · log(p(a) / q(a)) over the actions with p(a) > 0 only; if any of "
             "them has q(a) = 0, the answer is inf."),
    Exercise("spec_tests", "M4", "spec_tests.py",
             "at least 5 new spec cases, at least 3 different codes, and the strict scorer "
             "agrees with every one",
             "Run `course score --expected N \"COMPLETION\"` to see what the scorer decides "
             "and why, and `course score --spec` for the decisions that already exist."),
    Exercise("red_team", "M5", "red_team.py",
             "at least 3 new exploits, each paid by a weak rubric and refused by the strict "
             "scorer, fooling at least 2 different rubrics",
             "`course rubrics` shows what each weak rubric admits; write a completion that "
             "is wrong or out of spec but walks through one of those holes."),
    Exercise("kata_m5", "M5", "kata_m5_labels.py",
             "every example of the Milestone 5 kata has the key's cause (without the key: a "
             "known cause) and a proposed fix",
             "Look at scorer_version first: a reward recorded by an old or weak scorer must "
             "be re-scored (`course score`) before you blame the policy."),
)}


# -- 2. loading the student's file and calling their code ------------------------------------------

@dataclass(frozen=True)
class Case:
    """One row of a check: what went in, what was expected, what the student's code gave."""

    name: str
    passed: bool
    given: str = ""
    expected: str = ""
    got: str = ""
    note: str = ""           # under a failed case: why it matters, what to try
    unwritten: bool = False  # the student's function still raised NotImplementedError


class NotStarted(Exception):
    """The file is still the untouched stub; the message says what to do first."""


class Broken(Exception):
    """The file's shape is wrong (a renamed function, a list that is not a list...)."""


class Raised(Exception):
    """An exception the student's code raised in another process (`course.sandbox`), brought
    back as data: its type's name, its message, and the line of the student's file."""

    def __init__(self, type_name: str, message: str, line: int | None, text: str):
        super().__init__(message)
        self.type_name, self.line, self.text = type_name, line, text


class Aborted(BaseException):
    """The student's process was stopped (time limit, exit, a reply that is not the protocol):
    the check cannot go on. A BaseException, so that `_call` does not take it for an exception
    of the student's code; `run_check` reports it as an error."""


class StudentError(Exception):
    """The student's code raised an unexpected exception while `case` was being checked."""

    def __init__(self, error: BaseException, case: str):
        name = error.type_name if isinstance(error, Raised) else type(error).__name__
        super().__init__(f"{name}: {error}")
        self.error, self.case = error, case


LOADING = "loading the file"  # the "case" named when the file itself fails to run


def unwritten_at_load(path: Path) -> NotStarted:
    """What a file that raises NotImplementedError as it loads is: not started."""
    return NotStarted(f"{display_path(path)} raises NotImplementedError as it loads")


def load_student_file(path: Path) -> ModuleType:
    """Run the student's file as a brand-new module, from its source text every time.

    Compiling the source ourselves (rather than `import`) means an edit is always seen, even
    one made within the same second, and no `__pycache__` appears in the workspace.
    """
    spec = importlib.util.spec_from_file_location(f"workspace_{path.stem}", path)
    assert spec is not None  # a path ending in .py always has a source loader
    module = importlib.util.module_from_spec(spec)
    try:
        exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)
    except NotImplementedError:
        raise unwritten_at_load(path) from None
    except (Exception, SystemExit) as err:  # a syntax error or a crash at import: theirs
        raise StudentError(err, LOADING) from err
    return module


@contextmanager
def loaded_here(path: Path) -> Iterator[ModuleType]:
    """The student's file as a module of THIS process: the browser's self-check, which has one
    interpreter. The student's code can then change anything the checker uses, so a grade never
    comes from here (see `course.sandbox`)."""
    yield load_student_file(path)


StudentModule = Any
"""What a checker reads the student's names from: a module of this process (`loaded_here`), or
in `course check` the sandbox's stand-in (`course.sandbox.RemoteModule`)."""
Checker = Callable[[StudentModule], list[Case]]
Loader = Callable[[Path], AbstractContextManager[StudentModule]]
"""How `run_check` gets the student's module: `loaded_here`, or `course.sandbox.sandboxed`."""


def _function(module: StudentModule, name: str) -> Callable[..., Any]:
    function = getattr(module, name, None)
    if not callable(function):
        raise Broken(f"the file has no function `{name}`: keep the stub's name and signature")
    return function


def _attribute(module: StudentModule, name: str, kind: type) -> Any:
    value = getattr(module, name, None)
    if not isinstance(value, kind):
        raise Broken(f"the file needs `{name}` to be a {kind.__name__}, "
                     f"got {type(value).__name__}: keep the stub's shape")
    return value


_UNWRITTEN = object()  # what `_call` returns when the student's function is still a stub


def _call(case: str, function: Callable[..., Any], *args: Any) -> Any:
    """Call the student's function for one case. NotImplementedError means "not written yet";
    any other exception stops the check and is reported against the student's own line."""
    try:
        return function(*args)
    except NotImplementedError:
        return _UNWRITTEN
    except (Exception, SystemExit) as err:
        raise StudentError(err, case) from err


def _unwritten(name: str) -> Case:
    return Case(name, False, got="not written yet (NotImplementedError)", unwritten=True)


def _num(x: Any) -> str:
    """A number for the report: up to 6 significant digits, `inf` and `nan` as words."""
    try:
        return f"{float(x):.6g}"
    except (TypeError, ValueError, OverflowError):
        return repr(x)


def _vec(values: Any) -> str:
    return "[" + ", ".join(_num(v) for v in values) + "]"


# -- 3. the checkers of the standard library: module -> cases --------------------------------------

# pick_best (M0.5). Reference: course.selection.pick_best. Made-up packs first (each aimed at
# one way to get the rule wrong), then two real prompts of the committed selection pack. The
# completions of made-up samples sort in REVERSE order, so picking the alphabetically smallest
# completion on a tie gives the wrong sample.
_PICK_TABLE = (
    ("one sample", (1.0,), "With one sample, return it."),
    ("clear winner in the middle", (0.0, 1.0, 0.0), ""),
    ("tie at the top: the first one wins", (1.0, 0.0, 1.0),
     "Ties go to the sample that comes first; do not compare the completions' text."),
    ("tie between later samples", (0.0, 1.0, 1.0),
     "Replace the best only on a strictly greater reward (`>`, not `>=`)."),
    ("every reward is 0: the first sample", (0.0, 0.0, 0.0),
     "When nothing is better than the first sample, Best-of-N returns the first sample."),
    ("the best is last", (0.0, 0.0, 0.5, 1.0), "Look at every sample, including the last."),
    ("fractional rewards", (0.25, 0.75, 0.5), "Compare the rewards as numbers."),
    ("negative rewards", (-1.0, -0.5, -2.0),
     "Start from the first sample, not from a best reward of 0."),
)
_PACK_PROMPTS = (("dev-010", "real pack: majority vote and best-of-N disagree"),
                 ("dev-009", "real pack: no sample is correct"))


def _pick_cases() -> list[tuple[str, list[dict[str, Any]], str]]:
    made_up = [(name, [{"sample_id": f"s{i}", "completion": f"Final: {1000 - i}", "reward": r}
                       for i, r in enumerate(rewards, start=1)], note)
               for name, rewards, note in _PICK_TABLE]
    problems = {p["id"]: p for p in load_problems(DATA_DIR / "problems" / "dev.jsonl")}
    packs = {p["id"]: p for p in load_pack(DATA_DIR / "selection" / "pack_n8.jsonl")}
    real = [(f"{name} ({pid})", selection.score_samples(problems[pid], packs[pid]["samples"]), "")
            for pid, name in _PACK_PROMPTS]
    return made_up + real


def _sample_text(sample: Any) -> str:
    if isinstance(sample, Mapping) and "sample_id" in sample:
        return f"{sample['sample_id']} (reward {_num(sample.get('reward'))})"
    return f"{sample!r:.60} (expected one of the sample dicts itself)"


def check_pick_best(module: StudentModule) -> list[Case]:
    pick_best = _function(module, "pick_best")
    cases = []
    for name, samples, note in _pick_cases():
        want = selection.pick_best(samples)
        got = _call(name, pick_best, copy.deepcopy(samples))  # a copy: the table stays intact
        if got is _UNWRITTEN:
            cases.append(_unwritten(name))
            continue
        passed = isinstance(got, Mapping) and got.get("sample_id") == want["sample_id"]
        given = f"{len(samples)} samples, rewards in order: {_vec(s['reward'] for s in samples)}"
        cases.append(Case(name, passed, given, _sample_text(want), _sample_text(got), note))
    return cases


# spec_tests (M4). Reference: the strict scorer; the student's cases are the tests.
SPEC_CASE_KEYS = ("completion", "expected_answer", "reward", "code")
MIN_SPEC_CASES, MIN_SPEC_CODES = 5, 3


def _spec_case_problem(item: Any) -> str | None:
    """What is wrong with the shape of one spec case, or None."""
    if not isinstance(item, Mapping):
        return f"{item!r:.60}: each case must be a dict with keys {', '.join(SPEC_CASE_KEYS)}"
    missing = [key for key in SPEC_CASE_KEYS if key not in item]
    if missing:
        return f"missing key(s): {', '.join(missing)}"
    if type(item["expected_answer"]) is not int:
        return f"expected_answer must be an int, got {item['expected_answer']!r}"
    if item["reward"] not in (0.0, 1.0) or isinstance(item["reward"], bool):
        return f"reward must be 1.0 or 0.0, got {item['reward']!r}"
    if item["code"] not in CODES:
        return f"code {item['code']!r} is not one of course.scorer.CODES"
    try:
        hash(item["completion"])
    except TypeError:
        return "completion must be text (or None, bytes, a number)"
    return None


def check_spec_tests(module: StudentModule) -> list[Case]:
    spec_cases = _attribute(module, "SPEC_CASES", list)
    if not spec_cases:
        raise NotStarted("SPEC_CASES is still empty: add your cases between the YOUR CODE lines")
    existing = {completion: case for case, completion, *_ in SPEC_DECISIONS}
    cases, seen, codes = [], set(), set()
    for number, item in enumerate(spec_cases, start=1):
        name = f"case {number}"
        problem = _spec_case_problem(item)
        if problem:
            cases.append(Case(name, False, got=problem, note="Keep the shape shown in the stub."))
            continue
        completion, answer = item["completion"], item["expected_answer"]
        name = f"case {number}: {completion!r:.50}"
        given = f"completion={completion!r}, expected_answer={answer}"
        if completion in existing:
            cases.append(Case(name, False, given, "a completion not in SPEC_DECISIONS",
                              f"already there, as {existing[completion]!r}",
                              "The spec already decides this one: find a new decision."))
            continue
        if (completion, answer) in seen:
            cases.append(Case(name, False, given, "a new case", "a repeat of an earlier case"))
            continue
        seen.add((completion, answer))
        codes.add(item["code"])
        result = score({"expected_answer": answer}, completion)
        code = result["details"]["code"]
        passed = result["reward"] == item["reward"] and code == item["code"]
        cases.append(Case(name, passed, given,
                          f"reward {_num(item['reward'])}, code {item['code']} (your case)",
                          f"reward {_num(result['reward'])}, code {code} (the strict scorer)",
                          "" if passed else f"The scorer's reason: {CODES[code]}"))
    cases.append(Case(f"at least {MIN_SPEC_CASES} cases", len(spec_cases) >= MIN_SPEC_CASES,
                      expected=f"{MIN_SPEC_CASES} or more", got=str(len(spec_cases))))
    cases.append(Case(f"at least {MIN_SPEC_CODES} different codes",
                      len(codes) >= MIN_SPEC_CODES, expected=f"{MIN_SPEC_CODES} or more",
                      got=f"{len(codes)}: {', '.join(sorted(codes)) or 'none'}",
                      note="Cover several checks of the spec, not one check many times."))
    return cases


# red_team (M5). Reference: every rubric of course.rubrics.RUBRICS, strict and weak.
WEAK_RUBRICS = tuple(name for name in RUBRICS if name != "strict")
MIN_EXPLOITS, MIN_FOOLED_RUBRICS = 3, 2


def _exploit_problem(item: Any) -> str | None:
    """What is wrong with the shape of one exploit, or None."""
    if not isinstance(item, Mapping):
        return f"{item!r:.60}: each exploit must be a dict with completion and expected_answer"
    unknown = sorted(set(item) - {"completion", "expected_answer", "note"})
    if unknown:
        return f"unknown key(s): {', '.join(unknown)} (allowed: completion, expected_answer, note)"
    if not isinstance(item.get("completion"), str):
        return f"completion must be a str, got {item.get('completion')!r:.40}"
    if type(item.get("expected_answer")) is not int:
        return f"expected_answer must be an int, got {item.get('expected_answer')!r}"
    return None


def check_red_team(module: StudentModule) -> list[Case]:
    exploits = _attribute(module, "EXPLOITS", list)
    if not exploits:
        raise NotStarted("EXPLOITS is still empty: add your exploits between the YOUR CODE lines")
    known = {row["completion"] for row in load_golden(DATA_DIR / "golden" / "exploits.jsonl")}
    cases, seen, fooled_any = [], set(), set()
    for number, item in enumerate(exploits, start=1):
        problem = _exploit_problem(item)
        if problem:
            cases.append(Case(f"exploit {number}", False, got=problem,
                              note="Keep the shape shown in the stub."))
            continue
        completion, answer = item["completion"], item["expected_answer"]
        name, given = f"exploit {number}: {completion!r:.50}", f"expected_answer={answer}"
        if completion in known or completion in seen:
            where = "data/golden/exploits.jsonl" if completion in known else "an earlier exploit"
            cases.append(Case(name, False, given, "a new exploit", f"already in {where}",
                              "Find another hole, or another way through the same one."))
            continue
        seen.add(completion)
        example = {"expected_answer": answer}
        strict = score(example, completion)
        fooled = [n for n in WEAK_RUBRICS if RUBRICS[n](example, completion)["reward"] == 1.0]
        fooled_any.update(fooled)
        passed = strict["reward"] == 0.0 and bool(fooled)
        if strict["reward"]:
            note = "The strict scorer pays it: that is a correct answer, not an exploit."
        else:
            note = "" if fooled else "No weak rubric pays it yet."
        cases.append(Case(name, passed, given,
                          "paid by a weak rubric, refused by strict",
                          f"paid by: {', '.join(fooled) or 'none'}; strict: "
                          f"{_num(strict['reward'])} ({strict['details']['code']})", note))
    cases.append(Case(f"at least {MIN_EXPLOITS} exploits", len(exploits) >= MIN_EXPLOITS,
                      expected=f"{MIN_EXPLOITS} or more", got=str(len(exploits))))
    cases.append(Case(f"at least {MIN_FOOLED_RUBRICS} different rubrics fooled",
                      len(fooled_any) >= MIN_FOOLED_RUBRICS,
                      expected=f"{MIN_FOOLED_RUBRICS} or more of: {', '.join(WEAK_RUBRICS)}",
                      got=", ".join(sorted(fooled_any)) or "none",
                      note="Each weak rubric has a different hole: attack another one."))
    return cases


STDLIB_CHECKERS: dict[str, Checker] = {
    "pick_best": check_pick_best,
    "spec_tests": check_spec_tests,
    "red_team": check_red_team,
}
"""The checkers that need only the standard library (and so run in the browser too)."""


# -- 4. running a check ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Report:
    """The result of one check. `cases` is empty for `not started` and `error`."""

    exercise: Exercise
    path: Path            # the file that was checked
    status: str           # one of STATUSES
    cases: tuple[Case, ...] = ()
    message: str = ""     # not started / error: what happened and what to do

    @property
    def passed(self) -> int:
        return sum(case.passed for case in self.cases)


def student_line(error: BaseException, path: Path) -> tuple[int | None, str]:
    """The line number and source text of the line in the student's file that raised `error`;
    (None, "") when no line of that file is in the traceback."""
    if isinstance(error, Raised):
        return error.line, error.text
    if isinstance(error, SyntaxError) and error.filename == str(path):
        return error.lineno, error.text or ""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
    return (frames[-1].lineno, frames[-1].line or "") if frames else (None, "")


def _where(error: BaseException, path: Path) -> str:
    """`file, line N: source` of the line in the student's file that raised `error`."""
    line, text = student_line(error, path)
    if line is None:
        return "(not inside your file)"
    return f"{display_path(path)}, line {line}: {text.strip()}"


def run_check(exercise: Exercise, path: Path, checker: Checker,
              load: Loader = loaded_here) -> Report:
    """Run `checker` on the student's file at `path`, loaded by `load`, and sum it up as a
    `Report`: not started, passing, failing, or an error named at the student's own line (or,
    when the checker itself fails, naming the checker: a bug of the course, in one line)."""
    if not path.is_file():
        return Report(exercise, path, "error", message=f"{display_path(path)} does not exist: "
                      f"copy the stub from workspace/{exercise.file} of the course")
    try:
        with load(path) as module:
            cases = tuple(checker(module))
    except NotStarted as why:
        return Report(exercise, path, "not started", message=str(why))
    except (Broken, Aborted) as why:
        return Report(exercise, path, "error", message=str(why))
    except StudentError as err:
        what = ("Your file does not load" if err.case == LOADING else "Your code raised")
        return Report(exercise, path, "error", message=(
            f"{what}: {err}\n  at {_where(err.error, path)}\n  while checking: {err.case}"))
    except Exception as bug:  # not the student's: their exceptions arrive as StudentError
        return Report(exercise, path, "error", message=(
            f"the course's checker of {exercise.name} failed ({type(bug).__name__}: {bug}): "
            "a problem of the course, not of your file; tell your teacher"))
    if all(case.unwritten for case in cases):
        return Report(exercise, path, "not started", message=(
            f"{display_path(path)} still raises NotImplementedError.\n"
            "Write your code between the YOUR CODE lines, then check again."))
    return Report(exercise, path, "passing" if all(c.passed for c in cases) else "failing", cases)


# -- 5. the report printer -------------------------------------------------------------------------

WIDTH = 80
"""Explanations are wrapped to this many columns: a terminal's width, and the site's column."""


def _indent(text: str, prefix: str) -> list[str]:
    """`text`'s lines (split at `\\n` only: any other break is shown as an escape) after
    `prefix`."""
    return [prefix + line for line in text.split("\n")]


def _hang(head: str, text: str) -> str:
    """`head` then `text`, its later lines indented to line up under the first one."""
    return head + text.replace("\n", "\n" + " " * len(head))


def format_report(report: Report) -> str:
    """The friendly report of `course check NAME`, as `terminal_text` shows it: what the
    student's code returned or raised, and the lines of their file, cannot act on the
    terminal."""
    exercise = report.exercise
    lines = [f"{exercise.name} ({exercise.milestone}): {display_path(report.path)}",
             f"status: {report.status}"
             + (f", {report.passed} of {len(report.cases)} cases pass" if report.cases else "")]
    if report.message:
        lines += ["", *_indent(report.message, "  ")]
    if report.cases:
        lines.append("")
    for case in report.cases:
        if case.passed:
            lines.append(f"  [pass] {case.name}" + (f"  ->  {case.got}" if case.got else ""))
            continue
        lines.append(f"  [FAIL] {case.name}")
        for label, text in (("given", case.given), ("expected", case.expected),
                            ("got", case.got)):
            if text:
                lines.append(_hang(f"         {label + ':':<10}", text))
        for paragraph in case.note.splitlines():
            lines += textwrap.wrap(paragraph, WIDTH, initial_indent=" " * 9,
                                   subsequent_indent=" " * 11, break_on_hyphens=False)
    if report.status == "passing":
        closing = f"Done: {exercise.done}."
    elif report.status == "not started":
        closing = f"Done means: {exercise.done}."
    else:
        closing = f"hint: {exercise.hint}"
    return terminal_text("\n".join([*lines, "", *textwrap.wrap(closing, WIDTH,
                                                                subsequent_indent="      ")]))


def format_progress(reports: list[Report]) -> str:
    """The progress table of `course check --all` (as `terminal_text` shows it: a folder's
    name is the student's)."""
    lines = [f"{'exercise':<19}{'milestone':<11}{'status':<13}{'cases':<8}file"]
    for report in reports:
        cases = f"{report.passed}/{len(report.cases)}" if report.cases else "-"
        lines.append(f"{report.exercise.name:<19}{report.exercise.milestone:<11}"
                     f"{report.status:<13}{cases:<8}{display_path(report.path)}")
    done = sum(report.status == "passing" for report in reports)
    lines += ["", f"{done} of {len(reports)} exercises passing. "
              "For the details of one: course check NAME"]
    return terminal_text("\n".join(lines))
