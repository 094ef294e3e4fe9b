"""Loop A, evaluation: score every completion, summarise honestly, inspect failures by cause.

Nothing here samples, selects or learns. We take a fixed set of problems `x_i` and one recorded
completion `y_i` per problem (frozen rollouts), run the verifier, and compute the empirical
statistics of Loop A:

    mean reward   R_bar  = (1/N) * sum_i R(x_i, y_i)
    pass rate     p_hat  = (1/N) * sum_i 1[R(x_i, y_i) = 1]
    failure modes share(code) = (1/N) * #{i : details_i["code"] = code}

A pass rate on a few dozen examples is a noisy number, so it always travels with its 95%
Wilson interval, and a handful of raw completions (passing and failing, one per failure cause
first) so that a reader looks at the data before trusting the number.

Two runs are compared only inside a "locked room" (`compare_runs`): same dataset, same scorer
version, same prompt version, same sampling settings. Only the policy may differ: it is what a
comparison measures. Anything else is a change of environment, and the comparison is refused
with the differing fields named.

The instrument is `strict-v1` (`course.scorer`) unless a run names another one in `SCORERS`:
the only other is `strict-v0` (`course.scorer_v0`), an earlier version kept for forensics.

The story, top to bottom: `evaluate` -> `wilson_interval` -> `summarise` -> `compare_runs`
(two runs, one locked room). The run folder is written by `course.reports.evaluation`; the
commands are `course eval` and `course compare` (`course.commands.evaluation`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course import data, progress, runs, scorer_v0
from course.formatting import rounded
from course.paths import display_path
from course.scorer import CODES, SCORER_VERSION, score

Z_95 = 1.96
"""The standard normal quantile for a two-sided 95% interval, Phi^-1(0.975) = 1.95996...,
rounded as in every textbook table."""

INSPECT_PER_SIDE = 5
"""How many passing and how many failing examples a summary shows: five of each (rule 6 of
docs/rules.md, Look at the distribution)."""

NOISE_MIN_EXAMPLES = 100
NOISE_MIN_POINTS = 5
"""The Noise Rule: on fewer than 100 examples, a change under 5 points is treated as luck."""


@dataclass(frozen=True)
class Scorer:
    """A measurement instrument Loop A can score with."""

    version: str
    """Recorded in every result, summary and manifest: a new version is a new instrument."""
    score: Callable[[Mapping[str, Any], Any], Mapping[str, Any]]
    """`score(example, completion) -> {"reward": 0.0 or 1.0, "details": {"code", ...}}`."""
    codes: Mapping[str, str]
    """What each `details["code"]` it gives means."""


SCORERS: dict[str, Scorer] = {
    SCORER_VERSION: Scorer(SCORER_VERSION, score, CODES),
    scorer_v0.SCORER_VERSION: Scorer(scorer_v0.SCORER_VERSION, scorer_v0.score, scorer_v0.CODES),
}
"""Scorer version -> instrument. `strict-v1` measures; `strict-v0` is kept only for forensics."""


@dataclass(frozen=True)
class EvalConfig:
    """One Loop A measurement: which completions, scored against which problems, and why."""

    problems: Path
    """JSONL of problems `{id, prompt, expected_answer}` (the dataset split)."""
    rollouts: Path
    """JSONL of frozen rollouts `{id, completion}`, exactly one per problem id."""
    out: Path | None = None
    """The run folder the command writes; recorded so the README can print the exact command."""
    provenance: Path | None = None
    """A JSON file `{made_by, prompt_version, sampling}` describing completions that
    `data/provenance.json` does not list (a real model's, say); see `data.origin`."""
    scorer: str = SCORER_VERSION
    """The scorer version that measures, a key of `SCORERS`; recorded as the manifest's
    `scorer_version`, so `course compare` refuses to put runs of two versions side by side."""

    def __post_init__(self) -> None:
        if self.scorer not in SCORERS:
            raise ValueError(f"--scorer: unknown scorer version {self.scorer!r}; known: "
                             f"{', '.join(SCORERS)}")


@dataclass(frozen=True)
class CompareConfig:
    """Two Loop A runs put side by side in the locked room (`compare_runs`), and where the
    comparison is saved."""

    run_a: Path
    """The baseline eval run folder (A)."""
    run_b: Path
    """The changed eval run folder (B); the report is about B - A."""
    out: Path | None = None
    """The comparison run folder the command writes; recorded so the README can print the
    exact command."""


# -- 1. score every example -------------------------------------------------------------------

def evaluate(problems: Sequence[Mapping[str, Any]], rollouts: Sequence[Mapping[str, Any]],
             rollouts_path: Path | str = "rollouts",
             scorer: str = SCORER_VERSION) -> list[dict[str, Any]]:
    """Score each problem's rollout; one result per problem, in problem order.

    Args:
        problems: validated problem records (`data.load_problems`), N >= 1 of them.
        rollouts: validated rollout records (`data.load_rollouts`), one per problem id.
        rollouts_path: named in the error when the two files do not match id for id.
        scorer: the scorer version to measure with, a key of `SCORERS`.

    Returns:
        N dicts `{id, prompt, expected_answer, completion, policy_mode, reward, details}` where
        `completion` is the raw text (never normalised), `policy_mode` is the stand-in
        policy's label or None, and `details` is the scorer's, in full.
    """
    pairs = data.join_on_id(problems, rollouts, rollouts_path)
    score_one = SCORERS[scorer].score
    results = []
    for problem, rollout in progress.bar(pairs, len(pairs), "scoring"):
        scored = score_one(problem, rollout["completion"])
        results.append({
            "id": problem["id"],
            "prompt": problem["prompt"],
            "expected_answer": problem["expected_answer"],
            "completion": rollout["completion"],
            "policy_mode": rollout.get("policy_mode"),
            "reward": scored["reward"],
            "details": scored["details"],
        })
    return results


# -- 2. how sure can we be about a pass rate? -------------------------------------------------

def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion `p` after `successes` out of `n`.

    With p_hat = k/n, the bounds are the two values of p that are exactly z standard errors
    away from p_hat when the standard error is computed at p itself,
    (p_hat - p)^2 = z^2 * p * (1 - p) / n, that is

        centre    = (p_hat + z^2 / (2n)) / (1 + z^2 / n)
        halfwidth = z / (1 + z^2 / n) * sqrt(p_hat * (1 - p_hat) / n + z^2 / (4 n^2))
        interval  = [centre - halfwidth, centre + halfwidth]

    Unlike the textbook Wald interval p_hat +/- z * sqrt(p_hat (1 - p_hat) / n), it never
    leaves [0, 1] and does not collapse to a single point when k = 0 or k = n.

    Args:
        successes: k, with 0 <= k <= n.
        n: number of trials, n >= 1.
        z: normal quantile; 1.96 for 95%.

    Returns:
        `(lo, hi)` with 0 <= lo <= k/n <= hi <= 1.
    """
    if n <= 0:
        raise ValueError(f"a pass rate needs at least one example (n={n})")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    p_hat = successes / n
    shrink = 1 + z * z / n
    centre = (p_hat + z * z / (2 * n)) / shrink
    halfwidth = z / shrink * math.sqrt(p_hat * (1 - p_hat) / n + z * z / (4 * n * n))
    return max(0.0, centre - halfwidth), min(1.0, centre + halfwidth)


# -- 3. summarise: the numbers and the examples behind them -----------------------------------

def _passed(result: Mapping[str, Any]) -> bool:
    return result["reward"] == 1.0


_CODE_RANK = {code: rank for rank, code in enumerate(CODES)}


def _code_rank(code: str) -> int:
    """Position of a code in the scorer's closed set (unknown codes go last)."""
    return _CODE_RANK.get(code, len(_CODE_RANK))


def summarise(results: Sequence[Mapping[str, Any]],
              scorer: str = SCORER_VERSION) -> dict[str, Any]:
    """Loop A's statistics for scored results (from `evaluate` with the scorer version
    `scorer`, or read back from a run).

    Returns a dict with `n`, `passes`, `pass_rate`, `pass_rate_ci95` (Wilson), `mean_reward`,
    `failure_modes` (one row per failing code: count and share of all N, most frequent first,
    ties in the scorer's code order) and `inspection` (up to 5 passing and 5 failing examples,
    see `inspection_sample`). Floats are rounded to 4 decimals, so artifact bytes never depend
    on float noise.
    """
    n = len(results)
    passes = sum(1 for r in results if _passed(r))
    lo, hi = wilson_interval(passes, n)
    failing_codes = Counter(r["details"]["code"] for r in results if not _passed(r))
    ordered = sorted(failing_codes, key=lambda code: (-failing_codes[code], _code_rank(code)))
    return {
        "scorer_version": scorer,
        "n": n,
        "passes": passes,
        "pass_rate": rounded(passes / n),
        "pass_rate_ci95": [rounded(lo), rounded(hi)],
        "mean_reward": rounded(sum(r["reward"] for r in results) / n),
        "failure_modes": [{"code": code, "count": failing_codes[code],
                           "share": rounded(failing_codes[code] / n)} for code in ordered],
        "inspection": inspection_sample(results, ordered),
    }


def inspection_sample(results: Sequence[Mapping[str, Any]], code_order: Sequence[str],
                      per_side: int = INSPECT_PER_SIDE) -> dict[str, list[dict[str, Any]]]:
    """Which raw examples a reader should look at first; deterministic.

    Passing: the first `per_side` passes in dataset order. Failing: round robin over the
    failing codes in `code_order` (most frequent first), taking each code's next example in
    dataset order, so the sample covers as many different causes as it can.
    """
    passing: list[Mapping[str, Any]] = []
    queues: dict[str, list[Mapping[str, Any]]] = {code: [] for code in code_order}
    for r in results:  # one pass, keeping at most `per_side` examples of each kind
        queue = passing if _passed(r) else queues[r["details"]["code"]]
        if len(queue) < per_side:
            queue.append(r)
    failing = [queues[code][depth] for depth in range(per_side) for code in code_order
               if depth < len(queues[code])][:per_side]
    return {"passing": [_shown(r) for r in passing], "failing": [_shown(r) for r in failing]}


def _shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of one example a reader needs to judge it."""
    details = result["details"]
    return {"id": result["id"], "code": details["code"],
            "expected_answer": result["expected_answer"], "completion": result["completion"],
            "message": details["message"]}


# -- 4. comparing two runs: the Locked Room Rule ----------------------------------------------

LOCKED_ROOM = ("dataset (problems sha256)", "scorer_version", "prompt_version", "sampling")
"""What must be identical before two pass rates may be compared."""

POLICY_KEY = "policy"
"""The one entry of the recorded sampling settings that may differ: the policy's name."""


def _settings(sampling: Any) -> Any:
    """The sampling wall: the recorded sampling settings without the policy's name. The policy
    is what a comparison measures, so it may change; temperature, top_p, n and seed may not."""
    if not isinstance(sampling, Mapping):
        return sampling
    return {key: value for key, value in sampling.items() if key != POLICY_KEY}


def _policy(manifest: Mapping[str, Any]) -> Any:
    """The policy's name in a manifest's sampling settings (None when not recorded)."""
    sampling = manifest.get("sampling")
    return sampling.get(POLICY_KEY) if isinstance(sampling, Mapping) else None


def _locked_room(manifest: Mapping[str, Any], where: Path) -> dict[str, Any]:
    """The locked-room fields of an eval run's manifest."""
    if manifest.get("kind") != "eval":
        raise runs.RunError(f"{display_path(where)} is a {manifest.get('kind')!r} run: "
                            "only Loop A evaluation runs (kind 'eval') can be compared")
    try:
        dataset = manifest["inputs"]["problems"]["sha256"]
    except (KeyError, TypeError):
        raise runs.RunError(f"{display_path(where)}/manifest.json does not record the "
                            "problems file's sha256") from None
    room = dict(zip(LOCKED_ROOM, (dataset, manifest.get("scorer_version"),
                                  manifest.get("prompt_version"),
                                  _settings(manifest.get("sampling"))),
                    strict=True))
    return room


def _unknown_walls(room: Mapping[str, Any], where: Path) -> None:
    """Refuse a room whose prompt version or sampling nobody recorded: equal unknowns prove
    nothing about how two sets of completions were made."""
    unknown = [field for field in ("prompt_version", "sampling") if room[field] is None]
    if unknown:
        raise runs.RunError(f"{display_path(where)} records no {' and no '.join(unknown)} "
                            "(its completions have no provenance), so the Locked Room cannot "
                            "be checked; evaluate again with --provenance FILE")


def _problems_path(manifest: Mapping[str, Any]) -> Any:
    """Where a run's problems file was, as its manifest records it."""
    problems = manifest["inputs"]["problems"]  # present: `_locked_room` read its sha256
    return problems.get("path") if isinstance(problems, Mapping) else None


def _outcomes(run: Path) -> dict[str, bool]:
    """id -> passed, from a run's results.jsonl."""
    return {record["id"]: record["reward"] == 1.0
            for _, record in data.read_jsonl(run / "results.jsonl")}


def paired_difference_interval(both: int, only_a: int, only_b: int, neither: int,
                               z: float = Z_95) -> tuple[float, float]:
    """95% interval for p_B - p_A when runs A and B scored the SAME n examples.

    Method: Newcombe (1998), "Improved confidence intervals for the difference between binomial
    proportions based on paired data", method 10 (square-and-add). Why paired: in a locked room
    both runs score the same problems, so their outcomes are correlated (an easy problem tends
    to pass in both). Only the flips (`only_a`, `only_b`) carry information about the change;
    an interval for two independent samples ignores that and is usually too wide.

    With p_A = (both + only_a)/n, p_B = (both + only_b)/n, Wilson intervals [l_A, u_A] and
    [l_B, u_B] (`wilson_interval`), and phi the continuity-corrected correlation of the 2x2
    table (A = both*neither - only_a*only_b; phi = (A - n/2)/sqrt(row and column product) when
    A > n/2, 0 when 0 <= A <= n/2, A/sqrt(...) when A < 0, and 0 when a margin is empty):

        lower = D - sqrt((p_B - l_B)^2 - 2 phi (p_B - l_B)(u_A - p_A) + (u_A - p_A)^2)
        upper = D + sqrt((u_B - p_B)^2 - 2 phi (u_B - p_B)(p_A - l_A) + (p_A - l_A)^2)

    where D = p_B - p_A. Returns `(lower, upper)` within [-1, 1].
    """
    n = both + only_a + only_b + neither
    passes_a, passes_b = both + only_a, both + only_b
    l_a, u_a = wilson_interval(passes_a, n, z)  # raises on n = 0
    l_b, u_b = wilson_interval(passes_b, n, z)
    p_a, p_b = passes_a / n, passes_b / n
    margins = passes_a * (n - passes_a) * passes_b * (n - passes_b)
    cross = both * neither - only_a * only_b
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    d = p_b - p_a
    down = math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a)
                         + (u_a - p_a) ** 2))
    up = math.sqrt(max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a)
                       + (p_a - l_a) ** 2))
    return max(-1.0, d - down), min(1.0, d + up)


def noise_verdict(passes_a: int, passes_b: int, n: int,
                  interval: tuple[float, float]) -> str:
    """The Noise Rule, as a sentence.

    On fewer than 100 examples, a change of under 5 points is "not distinguishable from noise"
    and 5 points or more is "large enough to investigate" (rule 7 of docs/rules.md; integer
    arithmetic, so exactly 5 points counts as large). From 100 examples on, the 5-point line is
    silent and the paired 95% interval decides: a change whose interval contains 0 is noise.
    "Investigate" is deliberate: a large change is a reason to look at the flips, not proof.
    """
    if n < NOISE_MIN_EXAMPLES:
        noise = abs(passes_b - passes_a) * 100 < NOISE_MIN_POINTS * n
    else:
        noise = interval[0] <= 0.0 <= interval[1]
    return "not distinguishable from noise" if noise else "large enough to investigate"


def compare_runs(run_a: Path | str, run_b: Path | str) -> dict[str, Any]:
    """Compare two Loop A runs, or refuse to.

    Refuses (`RunError`) unless both are eval runs measured in the same locked room: the same
    problems file (sha256), scorer version, prompt version and sampling settings (the policy's
    name excepted, `_settings`). The error names every differing field with both values.

    Returns the walls checked with their common values (`locked_room`), the problems file and
    each run's policy, the pass rates with Wilson intervals, the change
    `difference = p_B - p_A` with its paired 95% interval (`paired_difference_interval`), the
    per-example flips (counts, and the ids in dataset order) and the noise verdict
    (`noise_verdict`).
    """
    run_a, run_b = Path(run_a), Path(run_b)
    manifest_a = runs.read_json(run_a, "manifest.json")
    manifest_b = runs.read_json(run_b, "manifest.json")
    room_a = _locked_room(manifest_a, run_a)
    room_b = _locked_room(manifest_b, run_b)
    differences = [f"{field} differs (A: {json.dumps(room_a[field], sort_keys=True)}, "
                   f"B: {json.dumps(room_b[field], sort_keys=True)})"
                   for field in LOCKED_ROOM if room_a[field] != room_b[field]]
    if differences:
        raise runs.RunError(
            f"refusing to compare {display_path(run_a)} with {display_path(run_b)}: "
            "the Locked Room Rule needs the same dataset, scorer, prompt and sampling, but "
            + "; ".join(differences))
    _unknown_walls(room_a, run_a)
    outcomes_a, outcomes_b = _outcomes(run_a), _outcomes(run_b)
    if outcomes_a.keys() != outcomes_b.keys():
        raise runs.RunError(f"{display_path(run_a)} and {display_path(run_b)} "
                            "record the same dataset but score different example ids")
    pairs = [(outcomes_a[i], outcomes_b[i]) for i in outcomes_a]
    flipped = {"pass_to_fail": [i for i in outcomes_a if outcomes_a[i] and not outcomes_b[i]],
               "fail_to_pass": [i for i in outcomes_a if outcomes_b[i] and not outcomes_a[i]]}
    table = Counter(pairs)
    both, only_a = table[(True, True)], table[(True, False)]
    only_b, neither = table[(False, True)], table[(False, False)]
    n, passes_a, passes_b = len(pairs), both + only_a, both + only_b
    interval = paired_difference_interval(both, only_a, only_b, neither)
    return {
        "run_a": display_path(run_a),
        "run_b": display_path(run_b),
        "locked_room": room_a,
        "problems": _problems_path(manifest_a),
        "policy_a": _policy(manifest_a),
        "policy_b": _policy(manifest_b),
        "n": n,
        "passes_a": passes_a,
        "passes_b": passes_b,
        "pass_rate_a": passes_a / n,
        "pass_rate_b": passes_b / n,
        "pass_rate_a_ci95": wilson_interval(passes_a, n),
        "pass_rate_b_ci95": wilson_interval(passes_b, n),
        "difference": (passes_b - passes_a) / n,
        "difference_ci95": interval,
        "interval_method": "Newcombe (1998) paired method 10: square-and-add of Wilson intervals",
        "flips": {"pass_to_fail": only_a, "fail_to_pass": only_b},
        "flipped_ids": flipped,
        "verdict": noise_verdict(passes_a, passes_b, n, interval),
    }


