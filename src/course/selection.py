"""Loop B, selection: sample N, score them all, keep the best. The policy does not change.

For one prompt `x` we already hold N completions `y_1 .. y_N`, all drawn from the same frozen
policy. Selection spends that extra sampling compute at inference time::

    y* = argmax_{y in {y_1 .. y_N}} R(x, y)          (Best-of-N)

Nothing about the policy moved: the chance that ONE fresh sample is correct (pass@1) is what it
was. What rose is the chance that AT LEAST ONE of k samples is correct (pass@k), and Best-of-N
with our scorer turns that chance into the chosen output. Always label such a gain a *selection
improvement*, never a *learning improvement* (that is Loop C).

The module reads top to bottom:

1. the estimator: `pass_at_k(n, c, k)`, the unbiased pass@k from n samples with c correct;
2. the picks: `pick_best` (highest reward, fixed tie rule) and `best_of_n` (the first n samples);
3. the controls: `random_pick` (what luck alone gives) and `majority_vote` (what we could
   deploy without knowing the answer);
4. why selection still fails on a prompt, read from its samples;
5. the comparison: `SelectionConfig`, then every pick for every prompt (`prompt_row`) and the
   shares of prompts each strategy solves (`summarise`).

The run folder (`runs/run_002` is the canonical one) is written by `course.reports.selection`;
the command is `course select` (`course.commands.selection`).

One warning runs through all of it. Our scorer compares with the expected answer, so picking
by it is an *oracle*: at deployment nobody hands you the expected answer. Best-of-N by the
scorer therefore measures pass@N, an upper bound on what selection can find in these samples.
Majority vote (self-consistency) needs only the samples themselves; it is the deployable one.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course.paths import DATA_DIR
from course.scorer import parse, score

if TYPE_CHECKING:  # numpy's generator only in annotations: this module imports without numpy
    import numpy as np

Sample = dict[str, Any]
"""One candidate: `{sample_id, completion}` (and `policy_mode`, when the course's stand-in
policy wrote it) from the pack, plus `reward` and `details` once scored (`score_samples`)."""


# -- 1. the estimator: pass@k ------------------------------------------------------------------

def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k from `n` samples of which `c` are correct.

    pass@k is the probability that at least one of k fresh samples is correct. From n >= k
    samples with c correct, average over all k-subsets of them::

        pass@k = 1 - C(n - c, k) / C(n, k)     (1 minus the share of k-subsets with no
                                                 correct sample in them)
               = 1 - prod_{i = n-c+1}^{n} (1 - k / i)

    The second line telescopes C(i - 1, k) / C(i, k) = (i - k) / i = 1 - k / i for i from n
    down to n - c + 1. It never builds the huge binomials, so it stays accurate for large n.

    Args:
        n: samples drawn for the prompt, n >= 1.
        c: how many of them are correct, 0 <= c <= n.
        k: subset size, 1 <= k <= n.

    Returns:
        A float in [0, 1]: exactly 1.0 when n - c < k (every k-subset holds a correct
        sample), exactly 0.0 when c == 0.

    Raises:
        ValueError: for non-integers, n < 1, c outside [0, n], or k outside [1, n]. In
            particular k > n is an error, not 1.0: n samples say nothing about k > n of them.
            k == 0 is an error too: "at least one of zero samples" is always false, so asking
            for it is almost surely an off-by-one in the caller.
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):  # numpy's too
            raise ValueError(f"pass_at_k: {name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"pass_at_k: n must be at least 1 (no samples, no estimate), got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: c must be in [0, n={n}], got c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k: k must be in [1, n={n}], got k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))  # the product form


def pass_at_k_curve(n: int, c: int) -> list[float]:
    """pass@k for every k = 1 .. n at once, in O(n) time instead of O(n * c).

    With r_k = C(n - c, k) / C(n, k), the share of k-subsets without a correct sample,
    pass@k = 1 - r_k, r_0 = 1, and one step of k multiplies by one factor::

        r_{k+1} = r_k * (n - c - k) / (n - k)

    which reaches exactly 0 at k = n - c + 1 (every larger subset holds a correct sample).
    Same values as `pass_at_k` for each k, up to float rounding (tests compare them).

    Args:
        n: samples drawn for the prompt, n >= 1.
        c: how many of them are correct, 0 <= c <= n.

    Returns:
        n floats in [0, 1], entry k - 1 being pass@k; all 0.0 when c == 0.
    """
    pass_at_k(n, c, 1)  # the same argument checks, with the same messages
    curve, ratio = [], 1.0
    for k in range(n):                          # r_{k+1} from r_k
        ratio *= max(0, n - c - k) / (n - k)
        curve.append(1.0 - ratio)
    return curve


# -- 2. the picks: Best-of-N -------------------------------------------------------------------

def pick_best(samples: Sequence[Sample]) -> Sample:
    """Return the sample with the highest `reward`: Loop B's whole algorithm.

    Tie rule: among equal rewards the FIRST in the pack's order wins (the lowest index). Why
    this rule and not, say, the alphabetically smallest completion:

    - it is stable: it depends on positions only, never on the text, so rewording a completion
      cannot change which of two equally rewarded samples is chosen, and a policy cannot win
      ties by emitting text that happens to sort first;
    - when every reward is equal (all wrong, say) Best-of-N returns the first sample, the
      same output as N=1, so selection never claims a different answer without a reason;
    - growing N never abandons a pick for an equal one: best-of-(n+1) keeps best-of-n's choice
      unless the new sample is strictly better.

    Args:
        samples: at least one dict with a numeric `reward`.
    """
    if not samples:
        raise ValueError("pick_best: no samples to pick from")
    best = samples[0]
    for sample in samples[1:]:
        if sample["reward"] > best["reward"]:  # strictly greater: earlier samples win ties
            best = sample
    return best


def best_of_n(samples: Sequence[Sample], n: int) -> Sample:
    """Best-of-n over the first `n` samples (1 <= n <= len(samples)); n=1 is the first sample."""
    _check_n(samples, n)
    return pick_best(samples[:n])


def _check_n(samples: Sequence[Sample], n: int) -> None:
    if not 1 <= n <= len(samples):
        raise ValueError(f"n must be in [1, {len(samples)}] for {len(samples)} samples, got {n}")


# -- 3. the controls: luck, and a pick that needs no answer key --------------------------------

def random_pick(samples: Sequence[Sample], n: int, rng: np.random.Generator) -> Sample:
    """A uniformly random sample among the first `n`: what picking gives with no signal at all.

    Its expected reward is the mean reward of those n samples, i.e. c/n, the pass@1 estimate:
    whatever Best-of-N achieves above this line is bought by the scorer, not by luck.
    """
    _check_n(samples, n)
    return samples[int(rng.integers(n))]


def vote_counts(samples: Sequence[Sample]) -> Counter[int]:
    """How many samples give each parsed answer, answers in order of first appearance.

    Parsing uses the scorer's `parse`, which never looks at an expected answer; samples whose
    text is not a well-formed `Final: <int>` line cast no vote.
    """
    answers = (parse(sample["completion"])[0] for sample in samples)
    return Counter(answer for answer in answers if answer is not None)


def majority_vote(samples: Sequence[Sample], n: int) -> Sample | None:
    """Self-consistency over the first `n` samples: the most common parsed answer wins.

    Ties between answers go to the answer that appeared first; the returned sample is the first
    one giving the winning answer. Returns None when no sample parses (nothing to vote on).

    Needs no expected answer, so unlike Best-of-N by our scorer it could be deployed. Its pick
    is scored with the expected answer afterwards, only to measure it.
    """
    _check_n(samples, n)
    counts = vote_counts(samples[:n])
    if not counts:
        return None
    winner = max(counts, key=lambda answer: counts[answer])  # max keeps the first of equals
    return next(s for s in samples[:n] if parse(s["completion"])[0] == winner)


# -- 4. scoring the samples, and when selection still fails ------------------------------------

def score_samples(problem: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> list[
        Sample]:
    """Each sample with its `reward` and the scorer's `details` added (input left untouched)."""
    return [{**sample, **score(problem, sample["completion"])} for sample in samples]


def why_no_sample_passes(scored: Sequence[Sample]) -> str:
    """Why picking cannot rescue a prompt where no sample is correct, read from its samples.

    Three situations, told apart by the codes and parsed answers alone:

    - one wrong answer repeats (two or more samples give it): a systematic misconception, and
      the answer majority vote would choose;
    - no sample is well formed: a format failure, noting when the right number is in the text;
    - otherwise the wrong answers scatter: slips, with no shared answer for a vote to find.

    Returns one clause without a final period, e.g. "6 of 8 samples answer 77 (expected 47)...".
    """
    n, expected = len(scored), scored[0]["details"]["expected_answer"]
    wrong = Counter(s["details"]["parsed_answer"] for s in scored
                    if s["details"]["code"] == "wrong_answer")
    formats = Counter(s["details"]["code"] for s in scored
                      if s["details"]["code"] not in ("wrong_answer", "correct"))
    if wrong and (top := wrong.most_common(1)[0])[1] >= 2:
        answer, count = top
        rest = wrong - Counter({answer: count}) + formats
        return (f"{'all' if count == n else f'{count} of'} {n} samples answer {answer} "
                f"(expected {expected}): a systematic misconception, the very answer majority "
                "vote picks" + (f"; the other {n - count}: {_tally(rest)}" if rest else "")
                + ". No sample is correct, so no amount of picking helps")
    if not wrong:
        contains = all(str(expected) in str(s["completion"]) for s in scored)
        return (f"all {n} samples break the format ({_tally(formats)})"
                + (f", yet every one contains the right number {expected}: the answer is "
                   "there, never in the one accepted `Final: <int>` line" if contains else "")
                + ". Selection can only pick among what was sampled")
    return (f"no two samples agree: {_tally(wrong + formats)} (expected {expected}). Scattered "
            "slips: nothing correct to pick, and no shared answer for a vote")


def _tally(counts: Counter[int | str]) -> str:
    """Counts as "77 x6, 48 x1": parsed answers bare, scorer codes in backticks."""
    return ", ".join(f"{key if isinstance(key, int) else f'`{key}`'} x{count}"
                     for key, count in counts.items())


# -- 5. the comparison ----------------------------------------------------------------------------

@dataclass(frozen=True)
class SelectionConfig:
    """Everything that decides a selection run; saved in its manifest."""

    pack: Path = DATA_DIR / "selection" / "pack_n8.jsonl"
    """The frozen selection pack: `{id, samples: [...]}` per prompt, same sample count each."""
    problems: Path = DATA_DIR / "problems" / "dev.jsonl"
    """The problems the pack answers (`{id, prompt, expected_answer}`); one per pack prompt."""
    n_values: tuple[int, ...] = (1, 2, 4, 8)
    """The N values compared, increasing, each in [1, samples per prompt]."""
    seed: int = 0
    """Seed of the random-pick control, the run's only randomness (any int >= 0)."""
    provenance: Path | None = None
    """A JSON file `{made_by, prompt_version, sampling}` describing a pack that
    `data/provenance.json` does not list (see `course.data.origin`)."""

    def __post_init__(self) -> None:
        ns = self.n_values
        if not ns or list(ns) != sorted(set(ns)) or ns[0] < 1:
            raise ValueError(f"n_values must be strictly increasing values >= 1, got {ns}")
        if self.seed < 0:
            raise ValueError(f"seed: must be >= 0, got {self.seed}")


def prompt_row(problem: Mapping[str, Any], scored: Sequence[Sample], n_values: Sequence[int],
               rng: np.random.Generator) -> dict[str, Any]:
    """One line of `selection_demo.jsonl`: every pick for one prompt, with ids and rewards."""
    n_samples = len(scored)
    c = sum(s["details"]["code"] == "correct" for s in scored)
    first = best_of_n(scored, 1)  # the N=1 baseline: the first sample, whatever its reward
    picks = []
    for n in n_values:
        vote = majority_vote(scored, n)
        picks.append({
            "n": n,
            "best_of_n": _pick(best_of_n(scored, n)),
            "random": _pick(random_pick(scored, n, rng)),
            "majority_vote": None if vote is None else {
                **_pick(vote), "answer": vote["details"]["parsed_answer"],
                "votes": vote_counts(scored[:n])[vote["details"]["parsed_answer"]]},
        })
    return {
        "id": problem["id"],
        "expected_answer": problem["expected_answer"],
        "n_samples": n_samples,
        "c": c,
        "first": _pick(first),
        "picks": picks,
        "pass_at_k": {str(k): round(value, 6)
                      for k, value in enumerate(pass_at_k_curve(n_samples, c), start=1)},
        "samples": [{"sample_id": s["sample_id"], "policy_mode": s.get("policy_mode"),
                     "reward": s["reward"], "code": s["details"]["code"],
                     "answer": s["details"]["parsed_answer"]} for s in scored],
    }


def _pick(sample: Sample) -> dict[str, Any]:
    return {"sample_id": sample["sample_id"], "reward": sample["reward"]}


def _reward(pick: Mapping[str, Any] | None) -> float:
    """A pick's reward; an abstaining majority vote (nothing parsed) scores 0."""
    return 0.0 if pick is None else pick["reward"]


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4)


def summarise(rows: Sequence[Mapping[str, Any]], n_values: Sequence[int]) -> dict[str, Any]:
    """The numbers the lesson quotes: mean rates over prompts, rounded to 4 decimals."""
    n_samples = rows[0]["n_samples"]
    by_n = []
    for index, n in enumerate(n_values):
        picks = [row["picks"][index] for row in rows]
        by_n.append({
            "n": n,
            "best_of_n": _mean([p["best_of_n"]["reward"] for p in picks]),
            "random": _mean([p["random"]["reward"] for p in picks]),
            "majority_vote": _mean([_reward(p["majority_vote"]) for p in picks]),
            "pass_at_k": _mean([pass_at_k(n_samples, row["c"], n) for row in rows]),
        })
    top = by_n[-1]
    failing = [row for row in rows if row["c"] == 0]
    return {
        "n_prompts": len(rows),
        "n_samples": n_samples,
        "mean_reward": _mean([s["reward"] for row in rows for s in row["samples"]]),
        "first_sample": _mean([row["first"]["reward"] for row in rows]),
        "pass_at_1": _mean([row["c"] / n_samples for row in rows]),
        "best_of_n": top["best_of_n"],
        "pass_at_n_oracle": _mean([float(row["c"] > 0) for row in rows]),
        "random_control": top["random"],
        "majority_vote": top["majority_vote"],
        "pass_at_k": {str(k): _mean([pass_at_k(n_samples, row["c"], k) for row in rows])
                      for k in range(1, n_samples + 1)},
        "by_n": by_n,
        "selection_fails": [row["id"] for row in failing],
        "vote_misses": [
            {"id": row["id"], "voted": vote["answer"], "votes": vote["votes"],
             "correct_votes": row["c"]}
            for row in rows if row["c"] > 0 and (vote := row["picks"][-1]["majority_vote"])
            and vote["reward"] == 0.0],
    }
