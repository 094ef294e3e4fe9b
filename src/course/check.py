"""Exercises that check themselves: `course check NAME` runs the student's code against the course.

The student's folder `workspace/` holds one small file per exercise. Each has a docstring that
states the inputs, the outputs and the rule, and a clearly marked block to fill in::

    # --- YOUR CODE (Milestone 1) ---
    raise NotImplementedError(...)
    # --- END OF YOUR CODE ---

A check runs that file fresh, by its path (never a cached import), in a separate process
(`course.sandbox`: a time and a memory limit, the student's prints discarded, values back as
plain data), and compares what it returns, in THIS process, on a table of real cases with an
independent reference from the course (the tie rule of `course.selection.pick_best`,
the softmax gradient of `course.bandit`, returns worked out by hand, `course.kl.kl_divergence`,
the strict scorer and the weak rubrics, the kata answer keys) and returns a `Report` with one
of four statuses:

- `not started`: the stub is untouched: it still raises NotImplementedError, or its lists and
  labels are still empty;
- `passing`: every case agrees with the reference;
- `failing`: some case disagrees; the report shows each case's input, what was expected and
  what the student's code gave, with a hint;
- `error`: the student's code raised something else (or the file does not load, exits, or runs
  out of time or memory); the report names the exception and the line of the STUDENT's file,
  without a traceback. A checker that fails (a bug of the course) is an error too, in one line.

`course check NAME` prints one report; `course check --all` (or just `course check`) prints the
progress table. Exit code 0 when every exercise checked is passing, 1 otherwise, 2 when the
workspace folder does not exist. Teachers grade a student's folder with
`course check --all --workspace path/to/their/workspace`; `--workspace teacher/solutions`
checks the reference solutions.

The registry, loading and calling the student's code, the report, its printer and the checkers
that need only the standard library (pick_best, spec_tests, red_team) live in
`course.exercises`, which the site also runs in the browser. This module reads top to bottom:
comparing numbers; the checkers that need numpy, and the kata's; running a check by name.

The kata's answer keys live in `teacher/kata/` (`KEY_DIR`), which the students' copy leaves
out: with a key, `course check kata` compares the labels with it; without one, it checks that
every example is labelled with a known cause and has a fix, and says the teacher grades the
labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from course import bandit, kl
from course.data import KATA_CAUSES, DataError, load_kata, load_kata_key
from course.exercises import (
    _UNWRITTEN,
    EXERCISES,
    STDLIB_CHECKERS,
    Case,
    Checker,
    NotStarted,
    Report,
    StudentModule,
    _attribute,
    _call,
    _function,
    _hang,
    _num,
    _unwritten,
    _vec,
    run_check,
)

# The printers, re-exported: students import them from here, with check() (docs/exercises/).
from course.exercises import format_progress as format_progress
from course.exercises import format_report as format_report
from course.isolation import DEFAULT_LIMITS, Limits
from course.paths import DATA_DIR, REPO_ROOT, display_path
from course.prompts import INSTRUCTION
from course.sandbox import sandboxed

WORKSPACE = REPO_ROOT / "workspace"
"""The student's folder. Reference solutions live under `teacher/solutions/`, same file names."""
KEY_DIR = REPO_ROOT / "teacher" / "kata"
"""The kata's answer keys, `teacher_key_<which>.json`: the teacher's copy only."""


# -- 1. comparing numbers --------------------------------------------------------------------------

def _close(got: Any, want: float) -> bool:
    """Equal within 1e-9 (relative or absolute); inf only matches inf."""
    try:
        got = float(got)
    except (TypeError, ValueError, OverflowError):
        return False
    if math.isinf(want):
        return got == want
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


def _as_vector(value: Any, length: int) -> np.ndarray | None:
    """`value` as a float vector of `length`, or None if it is not one."""
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None
    return vector if vector.shape == (length,) else None


# -- 2. the other checkers: module -> cases --------------------------------------------------------

# reinforce_step (M1). Reference: course.bandit's softmax and grad_log_prob, plus one real step
# of course.bandit.reinforce_step (batch of 1, running-mean baseline, run_003's learning rate).
_REINFORCE_TABLE = (
    # name, theta, action, reward, baseline, lr, note
    ("uniform policy, rewarded action", (0.0, 0.0, 0.0, 0.0), 0, 1.0, 0.0, 0.5, ""),
    ("reward below the baseline", (0.0, 0.0, 0.0, 0.0), 2, 0.0, 0.6, 1.0,
     "A = r - b is negative, so the sampled action's logit must go DOWN."),
    ("reward equal to the baseline: no change", (0.5, -0.2, 0.1), 1, 1.0, 1.0, 0.3,
     "A = 0, so θ must not move at all."),
    ("two actions, unequal logits", (1.0, -1.0), 1, 1.0, 0.25, 0.1, ""),
    ("large logits: a stable softmax", (1000.0, 0.0, -1000.0), 1, 1.0, 0.0, 1.0,
     "exp(1000) overflows to inf; subtract max(θ) before exp (π does not change)."),
)


def _reinforce_cases() -> list[tuple[str, np.ndarray, int, float, float, float, str]]:
    rows = [(name, np.array(theta), a, r, b, lr, note)
            for name, theta, a, r, b, lr, note in _REINFORCE_TABLE]
    config = bandit.BanditConfig()
    theta = np.array([0.3, -0.1, 0.2, -0.4])
    step = bandit.reinforce_step(theta, np.array(0.55), config, np.random.default_rng(3))
    rows.append(("one step of the course's bandit (run_003 settings)", theta,
                 int(step.actions[0]), float(step.rewards[0]), float(step.baseline), config.lr,
                 "This is the update `course bandit` takes; compare with its slow-motion log."))
    return rows


def _reinforce_reference(theta: np.ndarray, action: int, reward: float, baseline: float,
                         lr: float) -> tuple[float, np.ndarray]:
    advantage = reward - baseline                                             # A = r - b
    step = lr * advantage * bandit.grad_log_prob(action, bandit.softmax(theta))
    return advantage, theta + step                                            # θ + lr A ∇log π


def _pair_problem(got: Any, length: int) -> str | None:
    """Why `got` is not an (advantage, new_theta) pair of the right shapes, or None."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"{got!r:.60}: expected a pair (advantage, new_theta)"
    if _as_vector(got[1], length) is None:
        return f"new_theta {got[1]!r:.60}: expected an array of shape ({length},)"
    return None


def check_reinforce_step(module: StudentModule) -> list[Case]:
    reinforce_step = _function(module, "reinforce_step")
    cases = []
    for name, theta, action, reward, baseline, lr, note in _reinforce_cases():
        want_a, want_theta = _reinforce_reference(theta, action, reward, baseline, lr)
        given = (f"θ={_vec(theta)}, action={action}, reward={_num(reward)}, "
                 f"baseline={_num(baseline)}, lr={_num(lr)}")
        expected = f"A={_num(want_a)}, new θ={_vec(want_theta)}"
        got = _call(name, reinforce_step, theta.copy(), action, reward, baseline, lr)
        if got is _UNWRITTEN:
            cases.append(_unwritten(name))
            continue
        problem = _pair_problem(got, len(theta))
        if problem:
            cases.append(Case(name, False, given, expected, problem, note))
            continue
        new_theta = _as_vector(got[1], len(theta))
        passed = (_close(got[0], want_a) and new_theta is not None
                  and bool(np.allclose(new_theta, want_theta, rtol=1e-9, atol=1e-9)))
        got_text = f"A={_num(got[0])}, new θ={_vec(new_theta)}"
        cases.append(Case(name, passed, given, expected, got_text, note))
    name = "the θ you were given is left unchanged"
    theta = np.array([0.2, 0.0, -0.2])
    got = _call(name, reinforce_step, theta, 0, 1.0, 0.0, 1.0)
    if got is _UNWRITTEN:
        cases.append(_unwritten(name))
    else:
        kept = bool(np.array_equal(theta, [0.2, 0.0, -0.2]))
        cases.append(Case(name, kept, "θ=[0.2, 0, -0.2], action=0, reward=1, baseline=0, lr=1",
                          "θ still [0.2, 0, -0.2] after the call", f"θ is now {_vec(theta)}",
                          "Build a new array, θ + step, instead of changing θ in place with "
                          "+=: the caller still needs the old logits."))
    return cases


# trajectory_return (M2). Reference: values worked out by hand (the expected numbers below).
_RETURN_TABLE = (
    # name, rewards, gamma, G, returns-to-go, note
    ("two steps, reward only at the end", (0.0, 1.0), 1.0, 1.0, (1.0, 1.0),
     "The first step gets credit for the end reward: its return-to-go is 1 too."),
    ("two steps, discounted", (0.0, 1.0), 0.9, 0.9, (0.9, 1.0), "G = 0 + 0.9 · 1."),
    ("five tokens, end reward, γ = 0.5", (0.0, 0.0, 0.0, 0.0, 1.0), 0.5, 0.0625,
     (0.0625, 0.125, 0.25, 0.5, 1.0), "The end reward halves at every step back: 0.5⁴."),
    ("a reward at every step", (1.0, 2.0, 3.0), 1.0, 6.0, (6.0, 5.0, 3.0), ""),
    ("a reward at every step, γ = 0.5", (1.0, 2.0, 3.0), 0.5, 2.75, (2.75, 3.5, 3.0),
     "G = 1 + 0.5 · 2 + 0.25 · 3: the discount is γ^t, counted from t = 0."),
    ("γ = 0 keeps only the first reward", (2.0, 5.0, 7.0), 0.0, 2.0, (2.0, 5.0, 7.0),
     "0 ** 0 is 1 in Python: the first reward is not discounted."),
    ("negative rewards", (-1.0, 0.0, 2.0), 0.9, 0.62, (0.62, 1.8, 2.0), ""),
    ("an empty trajectory", (), 0.9, 0.0, (), "No steps: G = 0.0 and no returns-to-go."),
)


def check_trajectory_return(module: StudentModule) -> list[Case]:
    trajectory_return = _function(module, "trajectory_return")
    returns_to_go = _function(module, "returns_to_go")
    cases = []
    for name, rewards, gamma, want_g, want_rtg, note in _RETURN_TABLE:
        given = f"rewards={list(rewards)}, γ={_num(gamma)}"
        got = _call(f"G: {name}", trajectory_return, list(rewards), gamma)
        if got is _UNWRITTEN:
            cases.append(_unwritten(f"G: {name}"))
        else:
            cases.append(Case(f"G: {name}", _close(got, want_g), given, _num(want_g), _num(got),
                              note))
        got = _call(f"G_t: {name}", returns_to_go, list(rewards), gamma)
        if got is _UNWRITTEN:
            cases.append(_unwritten(f"G_t: {name}"))
            continue
        vector = _as_vector(got, len(want_rtg))
        passed = vector is not None and all(map(_close, vector, want_rtg))
        got_text = _vec(vector) if vector is not None else f"{got!r:.60}"
        cases.append(Case(f"G_t: {name}", passed, given, _vec(want_rtg), got_text, note))
    name = "γ defaults to 1"
    got = _call(name, trajectory_return, [1.0, 1.0, 1.0])
    cases.append(_unwritten(name) if got is _UNWRITTEN else Case(
        name, _close(got, 3.0), "trajectory_return([1.0, 1.0, 1.0])", "3", _num(got),
        "Keep the default `gamma: float = 1.0` in the signature."))
    return cases


# kl (M3). Reference: course.kl.kl_divergence, on hand-made pairs and on run_005's policies.
_KL_TABLE = (
    ("identical distributions", (0.2, 0.3, 0.5), (0.2, 0.3, 0.5), "KL(p ‖ p) = 0."),
    ("two coins", (0.5, 0.5), (0.9, 0.1), ""),
    ("the same coins, swapped", (0.9, 0.1), (0.5, 0.5),
     "KL is not symmetric: Σ p · log(p / q), with p first."),
    ("p has a zero: 0 · log 0 counts 0", (0.5, 0.5, 0.0), (0.25, 0.25, 0.5),
     "Skip the actions where p(a) = 0 (0 · log 0 = 0); numpy would give nan."),
    ("q has a zero where p has mass", (0.5, 0.5), (1.0, 0.0),
     "p puts mass where q has none: return float('inf')."),
    ("one action vs uniform: log 3", (1.0, 0.0, 0.0), (1 / 3, 1 / 3, 1 / 3), "log(1 / (1/3))."),
)


def _kl_cases() -> list[tuple[str, np.ndarray, np.ndarray, str]]:
    rows = [(name, np.array(p), np.array(q), note) for name, p, q, note in _KL_TABLE]
    config = kl.KLConfig()
    pi_ref, rewards = np.array(config.pi_ref), np.array(config.rewards)
    for beta in (1.0, 0.1):
        pi = kl.kl_regularized_optimum(pi_ref, rewards, beta)
        rows.append((f"run_005: π at β = {beta:g} against π_ref", pi, pi_ref,
                     "The KL the tradeoff run reports for this β."))
    return rows


def check_kl(module: StudentModule) -> list[Case]:
    kl_divergence = _function(module, "kl_divergence")
    cases = []
    for name, p, q, note in _kl_cases():
        want = kl.kl_divergence(p, q)
        got = _call(name, kl_divergence, p.copy(), q.copy())
        if got is _UNWRITTEN:
            cases.append(_unwritten(name))
            continue
        cases.append(Case(name, _close(got, want), f"p={_vec(p)}, q={_vec(q)}", _num(want),
                          _num(got), note))
    return cases


# kata and kata_m5 (M0, M5). Reference: the teacher's key, revealed one entry at a time, and
# only for an example the student has labelled. Without the key (the students' copy), only
# completeness: every example labelled with a known cause, with a fix.
def _kata_text(example: Mapping[str, Any]) -> str:
    """Two lines: the prompt (without the format instruction), then what was recorded."""
    version = f" by {example['scorer_version']}" if "scorer_version" in example else ""
    return (f"{example['prompt'].removesuffix(' ' + INSTRUCTION)}\n"
            f"{example['completion']!r} (expected {example['expected_answer']}): recorded "
            f"reward {example['reward']:.1f}, {example['code']}{version}")


NO_KEY = "labels graded by your teacher, whose copy has the key"
"""The case that says, in the students' copy, that only completeness was checked."""


def _kata_key(which: str, ids: list[str]) -> dict[str, Any] | None:
    """The key of kata `which`, or None when this copy has none; a kata item the key does not
    cover is a DataError naming the item (a problem of the course, not of the student)."""
    path = KEY_DIR / f"teacher_key_{which}.json"
    if not path.is_file():
        return None
    key = load_kata_key(path)
    for kata_id in ids:
        if kata_id not in key:
            raise DataError(path, None, kata_id, "the kata has this item but the key has no "
                            "entry for it: add one")
    return key


def _kata_case(example: Mapping[str, Any], label: Any, fix: Any,
               answer: Mapping[str, str] | None) -> Case:
    """One example's case: against the key's `answer`, or (None: no key) for completeness."""
    kata_id, given = example["id"], _kata_text(example)
    has_fix = isinstance(fix, str) and bool(fix.strip())
    if label is None:
        return Case(kata_id, False, given, got="not labelled yet",
                    note="Label it to see the key for this example." if answer else "")
    if not isinstance(label, str) or label not in KATA_CAUSES:
        return Case(kata_id, False, given, f"one of: {', '.join(KATA_CAUSES)}", repr(label))
    if answer is None:
        return Case(kata_id, has_fix, given, "a cause, with a fix in FIXES",
                    label if has_fix else f"{label}, no fix written")
    if label != answer["cause"]:
        return Case(kata_id, False, given, answer["cause"], label,
                    f"Why: {answer['why']}\nSuggested fix: {answer['fix']}")
    if not has_fix:
        return Case(kata_id, False, given, f"{label}, with a fix in FIXES",
                    f"{label}, no fix written",
                    "Your label agrees with the key; now propose a concrete fix.")
    return Case(kata_id, True, given, answer["cause"], label)


def check_kata(which: str, module: StudentModule) -> list[Case]:
    kata = load_kata(DATA_DIR / "kata" / f"kata_{which}.jsonl")
    ids = [example["id"] for example in kata]
    key = _kata_key(which, ids)
    labels = _attribute(module, "LABELS", dict)
    fixes = _attribute(module, "FIXES", dict)
    if all(label is None for label in labels.values()):
        examples = "\n".join(_hang(f"{example['id']:<9}", _kata_text(example))
                             for example in kata)
        raise NotStarted(f"No example is labelled yet. The examples to label:\n{examples}")
    cases = [_kata_case(example, labels.get(example["id"]), fixes.get(example["id"]),
                        None if key is None else key[example["id"]]) for example in kata]
    unknown = sorted(set(labels) - set(ids), key=repr)
    if unknown:
        cases.append(Case("LABELS has only the kata's ids", False, expected=", ".join(ids),
                          got=f"also {', '.join(map(repr, unknown))}"))
    if key is None:
        cases.append(Case(NO_KEY, True, got=f"{display_path(KEY_DIR)} is not in this copy: "
                          "only completeness is checked here"))
    return cases


CHECKERS: dict[str, Checker] = {
    "kata": partial(check_kata, "m0"),
    "reinforce_step": check_reinforce_step,
    "trajectory_return": check_trajectory_return,
    "kl": check_kl,
    "kata_m5": partial(check_kata, "m5"),
    **STDLIB_CHECKERS,
}
"""The checker of each exercise in EXERCISES, by name."""


# -- 3. running a check ----------------------------------------------------------------------------

def check(name: str, workspace: Path | str = WORKSPACE, limits: Limits = DEFAULT_LIMITS,
          sealed: bool = True) -> Report:
    """Check one exercise in `workspace` (the student's folder) and return its report; the
    student's file runs in a sandbox with `limits`, sealed off from the machine if `sealed`
    (`course.isolation`).

    Raises `DataError` when the workspace folder does not exist (a usage error, exit code 2),
    and `KeyError` for an unknown exercise name.
    """
    exercise, workspace = EXERCISES[name], Path(workspace)
    if not workspace.is_dir():
        raise DataError(workspace, None, None, "workspace folder not found")
    # as given: a report names the file as the student wrote it
    return run_check(exercise, workspace / exercise.file, CHECKERS[name],
                     partial(sandboxed, limits=limits, sealed=sealed))


def check_all(workspace: Path | str = WORKSPACE, limits: Limits = DEFAULT_LIMITS,
              sealed: bool = True) -> list[Report]:
    """Every exercise's report, in course order."""
    return [check(name, workspace, limits, sealed) for name in EXERCISES]

