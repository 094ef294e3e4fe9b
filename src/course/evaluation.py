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

The instrument is `strict-v1` (`course.scorer`) unless a run names another version of the
registry `course.scorers.SCORERS`, where the earlier versions are kept to re-score the runs they
measured (the forensics run of `strict-v0`, say).

The story, top to bottom: `evaluate` (one `score_pairs` result per problem) ->
`wilson_interval` -> `summarise` (a `Tally` of the results, with its inspection sample). Both
`score_pairs` and `Tally` take one result at a time, so the run folder, written by
`course.reports.evaluation`, streams a million examples in flat memory; the command is
`course eval` (`course.commands.evaluation`). Putting two saved runs side by side is another
story, the Locked Room's: `course.locked_room` (`course compare`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course import data, progress, scorers
from course.formatting import rounded
from course.scorer import CODES, SCORER_VERSION
from course.scorers import SCORERS

Z_95 = 1.96
"""The standard normal quantile for a two-sided 95% interval, Phi^-1(0.975) = 1.95996...,
rounded as in every textbook table."""

INSPECT_PER_SIDE = 5
"""How many passing and how many failing examples a summary shows: five of each (rule 6 of
docs/rules.md, Look at the distribution)."""


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
    scorer: str = field(default=SCORER_VERSION, metadata={"choices": tuple(SCORERS)})
    """The scorer version that measures (the older ones for forensics only); recorded as the
    manifest's `scorer_version`, so `course compare` refuses to put runs of two versions side
    by side."""

    def __post_init__(self) -> None:
        if self.scorer not in SCORERS:
            raise ValueError(f"--scorer: {scorers.unknown(self.scorer)}")


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
    return list(score_pairs(progress.bar(pairs, len(pairs), "scoring"), scorer))


def score_pairs(pairs: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
                scorer: str = SCORER_VERSION) -> Iterator[dict[str, Any]]:
    """The result of each (problem, rollout) pair, one at a time (`evaluate`'s records): what
    `course eval` streams, so that a million rollouts never sit in memory at once."""
    score_one = SCORERS[scorer].score
    for problem, rollout in pairs:
        scored = score_one(problem, rollout["completion"])
        yield {
            "id": problem["id"],
            "prompt": problem["prompt"],
            "expected_answer": problem["expected_answer"],
            "completion": rollout["completion"],
            "policy_mode": rollout.get("policy_mode"),
            "reward": scored["reward"],
            "details": scored["details"],
        }


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


def in_how_many_seeds(holds: Sequence[bool], unit: str = "seeds") -> str:
    """A claim about a stochastic run, said as what it is: a count over the seeds tried, with
    the Wilson interval (95%) for the share of seeds in which it would hold, for example
    `9 of 10 seeds (95% interval 0.60 to 0.98)`. Five seeds out of five is not "always":
    its interval reaches down to 0.57. `unit` names what was counted when it is not a seed
    (`runs`: one pre-trained base and one RL seed each)."""
    k, n = sum(map(bool, holds)), len(holds)
    lo, hi = wilson_interval(k, n)
    return f"{k} of {n} {unit} (95% interval {lo:.2f} to {hi:.2f})"


# -- 3. summarise: the numbers and the examples behind them -----------------------------------

def _passed(result: Mapping[str, Any]) -> bool:
    return result["reward"] == 1.0


_CODE_RANK = {code: rank for rank, code in enumerate(CODES)}


def _code_rank(code: str) -> int:
    """Position of a code in the scorer's closed set (unknown codes go last)."""
    return _CODE_RANK.get(code, len(_CODE_RANK))


def summarise(results: Iterable[Mapping[str, Any]],
              scorer: str = SCORER_VERSION) -> dict[str, Any]:
    """Loop A's statistics for scored results (from `evaluate` with the scorer version
    `scorer`, or read back from a run).

    Returns a dict with `n`, `passes`, `pass_rate`, `pass_rate_ci95` (Wilson), `mean_reward`,
    `failure_modes` (one row per failing code: count and share of all N, most frequent first,
    ties in the scorer's code order) and `inspection` (up to 5 passing and 5 failing examples,
    see `Tally.inspection`). Floats are rounded to 4 decimals, so artifact bytes never depend
    on float noise.
    """
    tally = Tally()
    for result in results:
        tally.add(result)
    return tally.summary(scorer)


class Tally:
    """`summarise`, one result at a time: counts, a running sum and at most `per_side`
    examples of each kind, so memory does not grow with N (`course eval` on a million)."""

    def __init__(self, per_side: int = INSPECT_PER_SIDE):
        self.per_side = per_side
        self.n, self.passes, self.reward = 0, 0, 0.0
        self.failing: Counter[str] = Counter()
        self.passing: list[Mapping[str, Any]] = []                 # the first passes
        self.queues: dict[str, list[Mapping[str, Any]]] = {}       # code -> its first failures

    def add(self, result: Mapping[str, Any]) -> None:
        self.n += 1
        self.reward += result["reward"]
        if _passed(result):
            self.passes += 1
            queue = self.passing
        else:
            code = result["details"]["code"]
            self.failing[code] += 1
            queue = self.queues.setdefault(code, [])
        if len(queue) < self.per_side:
            queue.append(result)

    def summary(self, scorer: str = SCORER_VERSION) -> dict[str, Any]:
        """What `summarise` returns, for the results added so far (at least one)."""
        n, passes, failing = self.n, self.passes, self.failing
        lo, hi = wilson_interval(passes, n)
        ordered = sorted(failing, key=lambda code: (-failing[code], _code_rank(code)))
        return {
            "scorer_version": scorer,
            "n": n,
            "passes": passes,
            "pass_rate": rounded(passes / n),
            "pass_rate_ci95": [rounded(lo), rounded(hi)],
            "mean_reward": rounded(self.reward / n),
            "failure_modes": [{"code": code, "count": failing[code],
                               "share": rounded(failing[code] / n)} for code in ordered],
            "inspection": self.inspection(ordered),
        }

    def inspection(self, code_order: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Which raw examples a reader should look at first; deterministic.

        Passing: the first `per_side` passes in dataset order. Failing: round robin over the
        failing codes in `code_order` (most frequent first), taking each code's next example
        in dataset order, so the sample covers as many different causes as it can.
        """
        queues, per_side = self.queues, self.per_side
        failing = [queues[code][depth] for depth in range(per_side) for code in code_order
                   if depth < len(queues[code])][:per_side]
        return {"passing": [_shown(r) for r in self.passing],
                "failing": [_shown(r) for r in failing]}


def _shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of one example a reader needs to judge it."""
    details = result["details"]
    return {"id": result["id"], "code": details["code"],
            "expected_answer": result["expected_answer"], "completion": result["completion"],
            "message": details["message"]}
