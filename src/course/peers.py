"""Peer verifiers: how other projects check a math answer, run on the same completions as ours.

Our spec (`course.scorer`, strict-v1) pays exactly one spelling: the single line `Final: <int>`.
Other projects made other choices, on purpose and for good reasons: a benchmark harness wants
to read the number out of free-form reasoning, an RL recipe wants to pay for a reasoning format,
a symbolic checker wants `\\boxed{323}`, `323.0` and `646/2` to count as the same answer. This
module reimplements four of those rules with the interface of ours::

    rule(example, completion) -> {"reward": float, "details": {"rule", "code", "extracted", ...}}

| rule               | origin (project)                                | reads                 |
| ------------------ | ----------------------------------------------- | --------------------- |
| `gsm8k_strict`     | lm-evaluation-harness, GSM8K "strict-match"     | first `#### <number>` |
| `gsm8k_flexible`   | lm-evaluation-harness, GSM8K "flexible-extract" | last number-like run  |
| `r1_zero_style`    | DeepSeek-R1-Zero's rule-based rewards           | `<think>`, `<answer>` |
| `math_verify_rule` | Hugging Face's math-verify library              | any math it can parse |

`RULES` puts them after the strict scorer and the hackable rubrics of `course.rubrics`, and
`score_cases` scores one case set with all of them: the golden exploit suite, the golden-correct
set and `NEAR_MISSES` (cross-format spellings such as `#### 323` or `\\boxed{323}`). Each case is
tagged with the verdict of OUR spec, so every disagreement has a direction:

- a **false positive** is a rule paying (reward > 0) a completion our spec rejects;
- a **false negative** is a rule refusing (reward 0) a completion our spec accepts.

"False" is relative to OUR spec only. A GSM8K harness that pays `#### 323` is not wrong; it
implements a different spec. The table shows what each choice admits, which is exactly what a
policy trained against that rule would learn to produce.

Every rule is total: any value as completion, never an exception (math-verify's own errors and
timeouts are caught and reported as a code). The run (`runs/run_007`) is written by
`course.reports.peers`; the command is `course peers`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from course import data, rubrics
from course.data import Record
from course.paths import DATA_DIR
from course.rubrics import RUBRICS, Rubric

PEER_CODES: Final = {
    "correct": "The rule read an answer and it matches expected_answer (both rewards, for "
    "r1_zero_style).",
    "wrong_answer": "The rule read an answer, but not expected_answer.",
    "no_answer": "The rule found nothing it reads as an answer.",
    "format_only": "r1_zero_style: the format reward paid, the answer reward did not.",
    "answer_only": "r1_zero_style: the answer reward paid, the format reward did not.",
    "not_a_string": "The completion is not a str.",
    "invalid_example": "The example has no int expected_answer (or one too long to print).",
    "unavailable": "math-verify is not installed: pip install 'rl-foundations-course[mathverify]'.",
    "verifier_error": "math-verify raised an exception; the rule pays 0 instead of crashing.",
}
"""The closed set of `details["code"]` values of the peer rules."""


# -- 1. the shared guard and result ---------------------------------------------------------------

def _expected_text(example: Any) -> str | None:
    """`str(expected_answer)`, or None when the example has no usable int answer.

    Same rule as the strict scorer (an int, not a bool); an int too long for `str()` under the
    interpreter's digit limit is refused here too, so no rule can raise on it."""
    expected = example.get("expected_answer") if isinstance(example, Mapping) else None
    if type(expected) is not int:
        return None
    try:
        return str(expected)
    except ValueError:
        return None


def _result(rule: str, example: Any, reward: float, code: str, extracted: Any,
            **extra: Any) -> dict[str, Any]:
    expected = example.get("expected_answer") if isinstance(example, Mapping) else None
    return {"reward": reward, "details": {"rule": rule, "code": code, "extracted": extracted,
                                          **extra, "expected_answer": expected}}


def _refusal(rule: str, example: Any, completion: Any) -> dict[str, Any] | None:
    """The result for an unusable example or a non-string completion; None when both are fine."""
    if _expected_text(example) is None:
        return _result(rule, example, 0.0, "invalid_example", None)
    if not isinstance(completion, str):
        return _result(rule, example, 0.0, "not_a_string", None)
    return None


# -- 2. lm-evaluation-harness: GSM8K strict-match and flexible-extract -----------------------------

_GSM8K_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
_GSM8K_FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
# The harness's `exact_match` removes these from both the answer it extracted and the reference,
# in this order, before comparing strings. (Its list has one more entry, `(?s).*#### `, which
# turns a GSM8K worked solution into its final number; our reference is already a bare integer
# and an extracted answer is made of `-$0-9.,` only, so that step is a no-op here and is left
# out. Its `ignore_case` is a no-op on digits, so it is left out too.)
_HARNESS_IGNORE = (re.compile(","), re.compile(r"\$"), re.compile(r"\.$"))


def harness_normalise(text: str) -> str:
    """lm-evaluation-harness's cleanup before GSM8K's exact match: every `,` and `$` is deleted,
    then one trailing `.` (`"$1,234."` -> `"1234"`, `"3,23"` -> `"323"`, `"5.."` -> `"5."`)."""
    for pattern in _HARNESS_IGNORE:
        text = pattern.sub("", text)
    return text


def _gsm8k(rule: str, example: Mapping[str, Any], extracted: str | None) -> dict[str, Any]:
    """Compare the harness way: both sides through `harness_normalise`, then string equality."""
    if extracted is None:  # the harness's fallback answer "[invalid]", which never matches
        return _result(rule, example, 0.0, "no_answer", None, normalised=None)
    normalised = harness_normalise(extracted)
    match = normalised == harness_normalise(_expected_text(example) or "")
    return _result(rule, example, 1.0 if match else 0.0, "correct" if match else "wrong_answer",
                   extracted, normalised=normalised)


def gsm8k_strict(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """lm-evaluation-harness's GSM8K "strict-match": the first `#### <number>` in the text,
    cleaned of `,` `$` and a trailing `.`, must equal the expected answer as a string.

    Steps, as the harness's GSM8K task runs them: the regex filter `#### (\\-?[0-9\\.\\,]+)`
    takes the first match's group (stripped), or the fallback `[invalid]` when there is none;
    then `exact_match` deletes `,`, `$` and one trailing `.` from both sides (see
    `harness_normalise`) and compares strings. So `#### 1,234` is 1234, `#### 5.` is 5 and
    `#### 3,23` is 323; `Final: 323` has no `####` and is refused.
    """
    refused = _refusal("gsm8k_strict", example, completion)
    if refused:
        return refused
    found = _GSM8K_STRICT.search(completion)
    return _gsm8k("gsm8k_strict", example, None if found is None else found.group(1).strip())


def gsm8k_flexible(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """lm-evaluation-harness's GSM8K "flexible-extract": the LAST number-like run anywhere in
    the text, cleaned of `,` `$` and a trailing `.`, must equal the expected answer as a string.

    The regex is `(-?[$0-9.,]{2,})|(-?[0-9]+)`: runs of two or more of `$0-9.,` (with an
    optional `-`), or a lone digit. The harness takes the last match (`group_select: -1`) and
    whichever group of it matched, stripped; then the same `exact_match` cleanup as
    `gsm8k_strict`. So `The answer is $42.` is 42, and a wrong number written after the right
    one wins.
    """
    refused = _refusal("gsm8k_flexible", example, completion)
    if refused:
        return refused
    matches = _GSM8K_FLEXIBLE.findall(completion)  # [(group 1, group 2), ...]; one is empty
    extracted = next(group for group in matches[-1] if group).strip() if matches else None
    return _gsm8k("gsm8k_flexible", example, extracted)


# -- 3. DeepSeek-R1-Zero style: a format reward plus an answer reward -----------------------------

_R1_TAGS = re.compile(r"</?(?:think|answer)>")
_R1_LAYOUT = re.compile(r"<think>.*</think>\s*<answer>.*</answer>", re.DOTALL)


def r1_zero_style(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """A format-then-answer reward in the style of DeepSeek-R1-Zero's rule-based rewards: a
    format reward for `<think>…</think><answer>…</answer>` plus an answer reward, added.

    DeepSeek-R1-Zero was trained with two rule-based rewards, one for the reasoning format and
    one for the accuracy of the final answer. Adapted to our task, precisely:

    - `format_reward` is 1.0 when the completion, stripped of surrounding whitespace, is
      exactly `<think>`, any text, `</think>`, optional whitespace, `<answer>`, any text,
      `</answer>`, with each of the four tags appearing exactly once; else 0.0.
    - `answer_reward` is 1.0 when the text between the LAST `<answer>` and the first
      `</answer>` after it, `.strip()`-ped, is the expected integer's canonical spelling
      (`str(expected_answer)`: no `+`, no leading zeros, no `.0`); else 0.0. It does not
      depend on the format, so `<answer>323</answer>` alone earns it.
    - `reward` is their sum, in {0.0, 1.0, 2.0} (summing reward functions is also what open
      GRPO trainers such as TRL's do). Any positive total counts as "pays" in the comparison.
    """
    refused = _refusal("r1_zero_style", example, completion)
    if refused:
        refused["details"].update(format_reward=0.0, answer_reward=0.0)
        return refused
    text = completion.strip()
    layout_ok = len(_R1_TAGS.findall(text)) == 4 and _R1_LAYOUT.fullmatch(text) is not None
    start = completion.rfind("<answer>")
    end = completion.find("</answer>", start) if start >= 0 else -1
    extracted = completion[start + len("<answer>"):end].strip() if end >= 0 else None
    format_reward = 1.0 if layout_ok else 0.0
    answer_reward = 1.0 if extracted == _expected_text(example) else 0.0
    if extracted is None:
        code = "no_answer"
    else:
        code = {(1.0, 1.0): "correct", (1.0, 0.0): "format_only", (0.0, 1.0): "answer_only",
                (0.0, 0.0): "wrong_answer"}[format_reward, answer_reward]
    return _result("r1_zero_style", example, format_reward + answer_reward, code, extracted,
                   format_reward=format_reward, answer_reward=answer_reward)


# -- 4. Hugging Face math-verify: parse both sides, compare as mathematics ------------------------

MATH_VERIFY_TIMEOUT_S: Final = 5
"""Seconds math-verify may spend on one parse or one comparison (its own signal-based timeout,
the library default). A parse that times out yields nothing, so the rule reads "no_answer"."""

MATH_VERIFY_PACKAGES: Final = ("math-verify", "latex2sympy2_extended", "sympy")
"""The distributions whose versions decide math-verify's verdicts; all are recorded in a run."""


def _load_math_verify() -> ModuleType | None:
    """The `math_verify` module, or None when the optional extra is not installed."""
    try:
        return importlib.import_module("math_verify")
    except ImportError:
        return None


def math_verify_status() -> dict[str, Any]:
    """`{"available": bool, "versions": {distribution: version or None}}` for this machine."""
    versions: dict[str, str | None] = {}
    for name in MATH_VERIFY_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"available": _load_math_verify() is not None, "versions": versions}


def math_verify_rule(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Hugging Face's math-verify library: `verify(parse(str(expected)), parse(completion))`,
    which pays any text containing math equal to the answer (`\\boxed{323}`, `323.0`, `17*19`).

    `parse` looks for LaTeX and plain expressions anywhere in the text and turns the first one
    it can read into a SymPy object; `verify` compares gold and prediction as mathematics
    (numerically and symbolically). `extracted` is the text math-verify matched. When the
    library is not installed the code is `unavailable`; any exception it raises becomes
    `verifier_error` (reward 0), so the rule stays total.
    """
    refused = _refusal("math_verify_rule", example, completion)
    if refused:
        return refused
    library = _load_math_verify()
    if library is None:
        return _result("math_verify_rule", example, 0.0, "unavailable", None)
    try:
        gold = library.parse(_expected_text(example), parsing_timeout=MATH_VERIFY_TIMEOUT_S)
        answer = library.parse(completion, parsing_timeout=MATH_VERIFY_TIMEOUT_S)
        paid = bool(library.verify(gold, answer, timeout_seconds=MATH_VERIFY_TIMEOUT_S))
    except Exception as err:  # a peer's bug must not crash our comparison
        return _result("math_verify_rule", example, 0.0, "verifier_error", None,
                       error=type(err).__name__)
    # parse returns [sympy object, matched text] (or [] when nothing parsed); keep the text:
    # printing a SymPy object can itself be slow.
    extracted = next((item for item in answer if isinstance(item, str)), None)
    code = "correct" if paid else ("wrong_answer" if answer else "no_answer")
    return _result("math_verify_rule", example, 1.0 if paid else 0.0, code, extracted)


PEERS: Final[dict[str, Rubric]] = {
    "gsm8k_strict": gsm8k_strict,
    "gsm8k_flexible": gsm8k_flexible,
    "r1_zero_style": r1_zero_style,
    "math_verify_rule": math_verify_rule,
}
"""The four peer rules, by name."""

RULES: Final[dict[str, Rubric]] = {**RUBRICS, **PEERS}
"""Every rule of the comparison, in column order: our strict scorer, the hackable rubrics of
`course.rubrics`, then the peers."""


def describe(name: str) -> str:
    """A rule's one-sentence summary (its origin first), on one line."""
    if name in RUBRICS:
        return rubrics.describe(name)
    paragraph = (inspect.getdoc(PEERS[name]) or "").split("\n\n")[0]
    return " ".join(paragraph.split())


def pays(result: Mapping[str, Any]) -> bool:
    """A rule pays when its reward is positive: any reward is something a policy can climb."""
    return result["reward"] > 0


# -- 5. the case set: golden exploits, golden correct, near misses ---------------------------------

NEAR_MISSES: Final = (
    # (id, expected_answer, completion, in our spec?, note)
    ("near-01", 323, "#### 323", False, "GSM8K's answer line"),
    ("near-02", 323, "#### 323.", False, "GSM8K's line with a full stop"),
    ("near-03", 323, "#### 3,23", False, "a comma in the wrong place"),
    ("near-04", 1234, "#### 1,234", False, "a thousands separator, GSM8K style"),
    ("near-05", 1234, "Final: 1234", True, "the in-spec spelling of near-04"),
    ("near-06", -29, "#### -29", False, "a negative answer, GSM8K style"),
    ("near-07", 323, "Final: 324\n#### 323", False, "our line says 324, GSM8K's line says 323"),
    ("near-08", 323, "\\boxed{323}", False, "a LaTeX box, as in MATH-style answers"),
    ("near-09", 323, "The answer is $323$.", False, "inline LaTeX in a sentence"),
    ("near-10", 323, "<answer>323</answer>", False, "an R1 answer tag without the think block"),
    ("near-11", 323, "<think>17*19 = 323</think>\n<answer>323</answer>", False,
     "the R1-Zero layout with the right answer"),
    ("near-12", 323, "<think>17*19 = 323</think><answer>324</answer>", False,
     "the R1-Zero layout with a wrong answer"),
    ("near-13", 323, "323.0", False, "a float spelling, no format"),
    ("near-14", 323, "3,23", False, "a misplaced comma, no format"),
    ("near-15", 323, "Final: 323.", False, "a full stop after the answer"),
    ("near-16", 323, "Final: \u2212323", False,
     "U+2212 MINUS SIGN: a reader sees -323, a digit regex sees 323"),
    ("near-17", 323, "Final: -323", False, "the right digits with the wrong sign"),
    ("near-18", 42, "The answer is $42.", False, "a dollar sign and a full stop"),
    ("near-19", 42, "Final: 42", True, "the in-spec spelling of near-18"),
    ("near-20", 323, "Final: 17*19", False, "the expression instead of its value"),
    ("near-21", 323, "Final: 646/2", False, "a fraction equal to the answer"),
    ("near-22", 323, "Final: 323 (checked: 17*19 = 323, not 324)", False,
     "a wrong number written after the right one"),
)
"""Cross-format and near-miss completions, each tagged with what a strict reading of spec v1
says (the tests check every tag against `course.scorer.score`)."""

SOURCES: Final = ("exploits", "correct", "near_miss")
"""Where a case comes from: the golden exploit suite (all out of spec), the golden-correct set
(all in spec), `NEAR_MISSES` (tagged one by one)."""


def load_cases(exploits: Path, correct: Path) -> list[Record]:
    """The case set, in the order exploits, correct, near misses.

    Case: `{id, source, expected_answer, completion, in_spec: bool, note}`.
    """
    golden = [(case, "exploits", False) for case in data.load_golden(exploits)]
    golden += [(case, "correct", True) for case in data.load_golden(correct)]
    cases = [{"id": case["id"], "source": source, "expected_answer": case["expected_answer"],
              "completion": case["completion"], "in_spec": in_spec, "note": case["note"]}
             for case, source, in_spec in golden]
    cases += [{"id": case_id, "source": "near_miss", "expected_answer": expected,
               "completion": completion, "in_spec": in_spec, "note": note}
              for case_id, expected, completion, in_spec, note in NEAR_MISSES]
    return cases


# -- 6. the comparison: every case, every rule -----------------------------------------------------

def verdict(in_spec: bool, reward: float) -> str:
    """`"FP"` (pays what our spec rejects), `"FN"` (refuses what it accepts), or `""`."""
    if reward > 0 and not in_spec:
        return "FP"
    if reward <= 0 and in_spec:
        return "FN"
    return ""


def score_cases(cases: list[Record], rules: tuple[str, ...]) -> list[Record]:
    """Each case with `rewards: {rule: reward}` added, scored by every rule in `rules`."""
    return [{**case, "rewards": {name: RULES[name](case, case["completion"])["reward"]
                                 for name in rules}} for case in cases]


def try_completion(completion: Any, expected: int) -> list[dict[str, Any]]:
    """Score one completion of your own with every rule: `[{rule, reward, code, extracted}]`."""
    example = {"expected_answer": expected}
    found = []
    for name, rule in RULES.items():
        result = rule(example, completion)
        details = result["details"]
        extracted = details.get("extracted", details.get("parsed_answer"))
        found.append({"rule": name, "reward": result["reward"], "code": details["code"],
                      "extracted": extracted})
    return found


# -- 7. the experiment ----------------------------------------------------------------------------

@dataclass(frozen=True)
class ComparisonConfig:
    """Everything that decides a verifier-comparison run; saved in its manifest."""

    exploits: Path = DATA_DIR / "golden" / "exploits.jsonl"
    """The golden exploit suite (every case out of spec)."""
    correct: Path = DATA_DIR / "golden" / "correct.jsonl"
    """The golden-correct set (every case in spec)."""
    rules: tuple[str, ...] = tuple(RULES)
    """Rule names from `RULES`, in column order; at least one. `math_verify_rule` is skipped,
    and recorded as unavailable, when math-verify is not installed."""

    def __post_init__(self) -> None:
        unknown = [name for name in self.rules if name not in RULES]
        if unknown or not self.rules:
            raise ValueError(f"rules must be names from {list(RULES)}, got {self.rules}")


def usable_rules(rules: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split `rules` into (runnable here, unavailable here)."""
    missing = () if _load_math_verify() is not None else ("math_verify_rule",)
    return (tuple(n for n in rules if n not in missing), tuple(n for n in rules if n in missing))
