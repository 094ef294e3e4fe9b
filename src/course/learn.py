"""Loop C on tokens: REINFORCE on fresh samples of a policy that writes text.

The bandit of Milestone 1 learned which of four styles to pick. Here the policy of
`course.token_policy` writes each completion piece by piece, `course.scorer.score` (or a
hackable rubric of `course.rubrics`) reads the rendered text, and one update moves every
piece's probability with the same scalar:

    advantage   A_i = R_i - b_i
    loss        L(θ) = -(1/B) Σ_i A_i · Σ_t log π_θ(y_i,t | x_i, y_i,<t)
    update      θ <- θ - lr · ∇L(θ)

with a KL penalty toward the reference policy π_ref folded into the reward, as InstructGPT
does:

    R_i = r(x_i, y_i) - β · log(π_θ(y_i | x_i) / π_ref(y_i | x_i))

whose expected score-function gradient is exactly ∇(E[r] - β · KL(π_θ ‖ π_ref)).

The baseline b_i is the mean R of the OTHER samples of the same prompt (leave-one-out, as
in RLOO). Because it does not depend on sample i, the update stays an unbiased estimate of
the gradient. A plain per-prompt mean that includes R_i would shrink every step by
(1 - 1/B), for B samples per prompt: the same direction, a shorter step. Two relatives of
this rule are here too, for comparison (`ADVANTAGES`): GRPO and Dr. GRPO.

One step size per table. The learner has two tables (`course.token_policy.learner_for`): a
problem's own rows, read by that problem only, and the previous-piece table, whose rows every
problem reads. The gradient adds up every prompt's term, so a shared row receives the pull of
60 prompts where a problem's own row receives one. With a single step size the shared table
moved about 60 times as far per update as the rows that hold the answers, and a strong KL
penalty knocked the format over: at β = 1 and lr = 1, strict pass@1 ended between 0.00 and 0.14
after 100 steps, in each of five seeds, where the reference starts at 0.45. So each table's
step is divided by the number of problems that share its rows:

    θ_j <- θ_j + (lr / n_j) · ĝ_j,     n_j = 60 for the shared table, 1 for a problem's own

Every row then moves by the mean pull of the prompts that read it. This is still gradient
ascent on the same J, with one step size per table: each table moves in its gradient's
direction, and the points where the gradient is zero are the same.

Every batch is sampled fresh from the *current* policy (on-policy). Nothing here is PPO: no
clipping, no critic, no value function, no framework: numpy on a CPU.

The module reads top to bottom: `LearnConfig`; the reward of a completion; one update
(`advantages`, `collect`, `gradient`, `reinforce_step`); training (`train`); measuring a
policy on fresh samples; the slow-motion story of one update; last, the region of settings
measured stable (`stability_warning`). The canonical runs are written
by `course.reports.learn` and its siblings; the command is `course learn`
(`course.commands.learn`).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from course.data import Record, load_problems, load_rollouts
from course.formatting import fixed, one_line, paragraph, wrap
from course.limits import count_problem
from course.paths import DATA_DIR
from course.rubrics import RUBRICS
from course.scorer import score
from course.token_policy import (
    Policy,
    Rollouts,
    Vocabulary,
    fit_reference,
    learner_for,
    sample,
    step_states,
    token_log_probs,
)

# -- 1. the settings ------------------------------------------------------------------------------

MAX_BATCH_SIZE = 1_024
"""Upper bound on `batch_size`, far above the lessons' 8: a step samples B completions for every
prompt at once, token by token (about 190 MB and 3 s a step at this bound; an unbounded B asked
numpy for 44.7 GiB at 10^8)."""
MAX_REDRAWS = 10
"""Upper bound on `redraws`: a prompt the policy always solves (or never does) would otherwise
be drawn again without end."""
MAX_STEPS = 10_000
"""Upper bound on `steps`, a hundred times the lessons' 100: every step's log is kept, and a
step takes a few hundredths of a second at the default batch size."""


@dataclass(frozen=True)
class LearnConfig:
    """Everything that decides a token-level training run."""

    reward: str = field(default="strict", metadata={"choices": tuple(RUBRICS)})
    """What pays: `strict` (`course.scorer.score`) or a weak rubric of `course.rubrics`
    (then the strict scorer is only measured, never optimised)."""
    beta: float = 0.0
    """KL coefficient β >= 0: the price of drifting from the reference, in reward per nat."""
    lr: float = 1.0
    """Step size on the tables of logits, finite and > 0 (divided per table by how many problems
    share it). Stable where β · lr <= 2 and lr <= 10 (`STABLE_BETA_LR`, `STABLE_LR`); outside,
    the config warns (`stability_warning`)."""
    advantage: str = "rloo"
    """How a sample's advantage is computed from its group's rewards: one of `ADVANTAGES`
    (`rloo`, `grpo`, `dr_grpo`)."""
    batch_size: int = 8
    """B: fresh completions per prompt per update, from 2 (the leave-one-out baseline) to
    `MAX_BATCH_SIZE`."""
    steps: int = 100
    """Updates, 1 to `MAX_STEPS`."""
    held_out: bool = False
    """Hold out every other prompt (the odd positions of `problems`): it is never sampled for
    an update, so its pass@1 measures what carries over to prompts the policy never trained
    on. False (the default): train on every prompt, and train = eval."""
    redraws: int = 0
    """Dynamic sampling (DAPO, Yu et al. 2025), 0 to `MAX_REDRAWS`: a prompt whose B samples
    all earn the same reward is drawn again, up to this many times per step, so that its group
    teaches something; the extra samples are the price. 0 (the default): never."""
    seed: int = 0
    """Seed of the run's one generator (numpy's default PCG64), >= 0."""
    problems: Path = DATA_DIR / "problems" / "dev.jsonl"
    """The prompts; the policy is trained and measured on all of them (unless `held_out`)."""
    snapshot: Path = DATA_DIR / "rollouts" / "frozen_v1.jsonl"
    """The frozen rollouts the reference policy is counted from."""

    def __post_init__(self) -> None:
        self._check()
        if (warning := stability_warning(self)) is not None:
            warnings.warn(warning, UnstableConfigWarning, stacklevel=3)

    def _check(self) -> None:
        """Refuse a setting out of range, every problem in one line."""
        problems = shared_problems(self.reward, self.advantage, self.beta, self.lr)
        problems += filter(None, [
            count_problem("batch_size", self.batch_size, 2, MAX_BATCH_SIZE,
                          "one step samples that many completions for every prompt at once",
                          why_low="leave-one-out baseline"),
            count_problem("steps", self.steps, 1, MAX_STEPS, "every step is kept for the log"),
            count_problem("redraws", self.redraws, 0, MAX_REDRAWS,
                          "each re-draw samples a whole group again")])
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("; ".join(problems))


def shared_problems(reward: str, advantage: str, beta: float, lr: float) -> list[str]:
    """What is out of range among the settings every Loop C on text shares (this module's and
    `course.tiny_learn`'s), one clause each: the reward (a name of `RUBRICS`), the advantage
    rule (of `ADVANTAGES`), β (finite, >= 0) and the step size (finite, > 0)."""
    problems = []
    if reward not in RUBRICS:
        problems.append(f"reward: must be one of {', '.join(RUBRICS)}, got {reward!r}")
    if advantage not in ADVANTAGES:
        problems.append(f"advantage: must be one of {', '.join(ADVANTAGES)}, got {advantage!r}")
    if not (math.isfinite(beta) and beta >= 0):
        problems.append(f"beta: must be a finite number >= 0, got {beta}")
    if not (math.isfinite(lr) and lr > 0):
        problems.append(f"lr: must be a finite number > 0, got {lr}")
    return problems


def trained_prompts(config: LearnConfig, n_problems: int) -> np.ndarray:
    """The indices of the prompts an update samples: all of them, or with `held_out` the even
    positions only."""
    return np.arange(0, n_problems, 2 if config.held_out else 1)


def learner_of(config: LearnConfig, reference: Policy, n_problems: int) -> Policy:
    """A fresh learner at `reference`, its shared rows pulled by the prompts `config` trains."""
    return learner_for(reference, n_problems, len(trained_prompts(config, n_problems)))


def setup(config: LearnConfig) -> tuple[list[Record], Policy, dict[str, Any]]:
    """The problems, the reference policy counted from the snapshot, and the fit's report."""
    problems = load_problems(config.problems)
    index = {p["id"]: i for i, p in enumerate(problems)}
    snapshot = [(index[r["id"]], r["completion"]) for r in load_rollouts(config.snapshot)
                if r["id"] in index]
    reference, report = fit_reference(Vocabulary(), snapshot, len(problems))
    return problems, reference, report


# -- 2. the reward of a completion: always the text, never the token ids --------------------------

Scorer = Callable[[Mapping[str, Any], Any], Mapping[str, Any]]


def rewards_of(scorer: Scorer, problems: Sequence[Record], rollouts: Rollouts) -> np.ndarray:
    """(N,) the reward of each rendered completion for its own problem. A scorer is a pure
    function of (problem, text), so each distinct pair is scored once: a policy that has
    learned writes the same few completions again and again (a third are distinct)."""
    paid: dict[tuple[int, str], float] = {}
    for x, text in zip(rollouts.x.tolist(), rollouts.texts, strict=True):
        if (x, text) not in paid:
            paid[x, text] = scorer(problems[x], text)["reward"]
    return np.array([paid[pair] for pair in zip(rollouts.x.tolist(), rollouts.texts,
                                                strict=True)], dtype=float)


def paid_and_strict(reward: str, problems: Sequence[Record], rollouts: Rollouts
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(N,) what the optimised scorer `reward` pays, and (N,) what the strict scorer pays (the
    same array when the reward is strict)."""
    paid = rewards_of(RUBRICS[reward], problems, rollouts)
    return paid, paid if reward == "strict" else rewards_of(score, problems, rollouts)


# -- 3. one update --------------------------------------------------------------------------------

@dataclass
class Update:
    """One REINFORCE update on B fresh completions per prompt. Arrays are (N,), N = P · B."""

    rollouts: Rollouts
    reward: np.ndarray       # r: what the optimised scorer paid
    strict: np.ndarray       # the strict scorer's reward (= reward when training on strict)
    log_ratio: np.ndarray    # log π_θ(y) - log π_ref(y), per completion
    kl_steps: np.ndarray     # Σ_t KL(π_θ(·|s_t) ‖ π_ref(·|s_t)) along each completion
    advantage: np.ndarray    # A, from R = r - β log_ratio by the config's rule (`advantages`)
    weight: np.ndarray       # what multiplies Σ_t ∇log π(y_t): A, or A / |y| under GRPO
    entropy: np.ndarray      # -log π_θ(y): its mean estimates the sequence entropy
    log_probs: list[np.ndarray]  # per step, (N, V) log π_θ(· | s_t) before the update
    drawn: int               # completions sampled: N, plus the groups drawn again (`redraws`)


def leave_one_out_baseline(values: np.ndarray, batch_size: int) -> np.ndarray:
    """b_i = mean of the other B - 1 values of the same prompt; values are grouped by prompt,
    B consecutive entries each."""
    groups = values.reshape(-1, batch_size)
    totals = groups.sum(axis=1, keepdims=True)
    return ((totals - groups) / (batch_size - 1)).reshape(-1)


GRPO_EPSILON = 1e-4
"""Added to the group's standard deviation before dividing by it (0 / ε = 0 for a group whose
rewards are all equal)."""


def advantages(shaped: np.ndarray, batch_size: int, rule: str) -> np.ndarray:
    """(N,) the advantage of each sample from the shaped rewards R of its group of B:

        rloo      A_i = R_i - mean of the other B - 1          (Ahmadian et al. 2024)
        grpo      A_i = (R_i - mean_G) / (std_G + ε)           (Shao et al. 2024)
        dr_grpo   A_i = R_i - mean_G                           (Liu et al. 2025)

    where mean_G and std_G (population, ddof 0) include R_i. Since R_i - mean_G equals
    (1 - 1/B) · (R_i - mean of the others), `dr_grpo` is `rloo` with every step (1 - 1/B) as
    long. A group whose B rewards are all equal gets A = 0 under all three: it teaches nothing.
    """
    groups = shaped.reshape(-1, batch_size)
    centred = groups - groups.mean(axis=1, keepdims=True)
    if rule == "rloo":
        return shaped - leave_one_out_baseline(shaped, batch_size)
    if rule == "grpo":
        return (centred / (groups.std(axis=1, keepdims=True) + GRPO_EPSILON)).reshape(-1)
    return centred.reshape(-1)


ADVANTAGES: dict[str, str] = {
    "rloo": "leave-one-out: R minus the mean of the group's other samples",
    "grpo": "GRPO: (R minus the group mean) / the group's standard deviation, and each "
            "completion's log-probability averaged over its pieces (1/|y|)",
    "dr_grpo": "Dr. GRPO: R minus the group mean; no standard deviation, no 1/|y|",
}
"""The advantage rules `LearnConfig.advantage` accepts, each in one line."""


def collect(learner: Policy, problems: Sequence[Record], config: LearnConfig,
            rng: np.random.Generator) -> Update:
    """Sample B fresh completions per prompt from the current learner and score them; the
    advantages are computed, the learner is not changed yet."""
    assert learner.base is not None, "the learner moves relative to its reference"
    x = np.repeat(trained_prompts(config, len(problems)), config.batch_size)
    rollouts = sample(learner, x, rng)                                  # fresh, on-policy
    reward, strict = paid_and_strict(config.reward, problems, rollouts)
    drawn = len(x)
    for _ in range(config.redraws):         # dynamic sampling: draw all-equal groups again
        groups = reward.reshape(-1, config.batch_size)
        flat = np.flatnonzero(groups.min(axis=1) == groups.max(axis=1))
        if len(flat) == 0:
            break
        rows = (flat[:, None] * config.batch_size + np.arange(config.batch_size)).ravel()
        again = sample(learner, x[rows], rng)
        rollouts.put(rows, again)
        reward[rows], strict[rows] = paid_and_strict(config.reward, problems, again)
        drawn += len(rows)
    # One pass over the steps: each piece's log-probability under the learner and under the
    # reference (token_log_probs of both, read from what `sample` drew each piece from), and
    # the exact KL.
    mine, ref = np.zeros(rollouts.ids.shape), np.zeros(rollouts.ids.shape)
    kl_steps = np.zeros(len(x))
    drawn_from = zip(rollouts.log_probs, rollouts.base_log_probs, strict=True)
    for t, (logp, logq) in enumerate(drawn_from):    # (N, V) each: learner, reference
        y = rollouts.ids[:, t]
        live = y >= 0
        kl = np.maximum(0.0, (np.exp(logp) * (logp - logq)).sum(axis=1))  # >= 0 (Gibbs)
        kl_steps[live] += kl[live]
        mine[live, t], ref[live, t] = logp[live, y[live]], logq[live, y[live]]
    logp = mine.sum(axis=1)                                              # log π_θ(y | x)
    log_ratio = logp - ref.sum(axis=1)                                   # log π_θ/π_ref
    shaped = reward - config.beta * log_ratio                            # R = r - β log(π/π_ref)
    advantage = advantages(shaped, config.batch_size, config.advantage)
    # GRPO averages each completion's per-piece terms: A_i · (1/|y_i|) Σ_t ∇log π(y_i,t)
    weight = advantage / rollouts.lengths if config.advantage == "grpo" else advantage
    return Update(rollouts, reward, strict, log_ratio, kl_steps, advantage, weight, -logp,
                  rollouts.log_probs, drawn)


def gradient(learner: Policy, rollouts: Rollouts, weight: np.ndarray, batch_size: int,
             log_probs: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """ĝ = (1/B) Σ_i w_i Σ_t ∇θ log π_θ(y_i,t | s_i,t), one array per table of the learner,
    where w_i is sample i's advantage A_i (or A_i / |y_i| under GRPO): for each prompt the mean
    over its B samples, summed over prompts (the gradient of J(θ) = Σ_x E_y[R(x, y)]).
    `log_probs`: the learner's log-probabilities at each step of `rollouts`, when the caller
    has them (`collect`'s, before the update); computed here otherwise.

    For a log-linear policy, ∇ log π(y_t | s_t) with respect to the row that state s_t reads
    is onehot(y_t) - π(· | s_t): every table a step reads gets the same vector."""
    v = learner.vocab.size
    eye = np.eye(v)
    rows: list[list[np.ndarray]] = [[] for _ in learner.tables]   # per table, per step: (n,)
    terms = []                                                     # per step: (n, V)
    for t, (state, y) in enumerate(step_states(learner, rollouts)):
        # Only pieces written by samples of nonzero weight: every other term is 0 and adds
        # nothing (after <eos>, or in a group whose rewards are all equal, where w = 0).
        on = (y >= 0) & (weight != 0)
        logp = (learner.log_probs(state) if log_probs is None else log_probs[t])[on]
        score_fn = eye[y[on]] - np.exp(logp)                                  # ∇ log π(y_t)
        terms.append(weight[on, None] * score_fn / batch_size)                # w_i ∇ / B
        for read, feature in zip(rows, learner.features, strict=True):
            read.append(feature(state)[on])
    # Add every step's term into the row it read: one sum per (row, piece) cell of each table
    # (np.bincount over the flattened cells; np.add.at does the same, four times slower).
    weighted = np.concatenate(terms).ravel()
    grads = []
    for table, read in zip(learner.tables, rows, strict=True):
        cells = (np.concatenate(read)[:, None] * v + np.arange(v)).ravel()
        grads.append(np.bincount(cells, weighted, minlength=table.size).reshape(table.shape))
    return grads


def steps_of(learner: Policy, grads: Sequence[np.ndarray], lr: float) -> list[np.ndarray]:
    """(lr / n_j) · ĝ_j for each table j, n_j = the problems sharing its rows
    (`Policy.shared_by`): every row moves by the mean pull of the prompts that read it."""
    shared_by = learner.shared_by or (1,) * len(learner.tables)
    return [(lr / n) * g for g, n in zip(grads, shared_by, strict=True)]


def ascend(learner: Policy, grads: Sequence[np.ndarray], lr: float) -> None:
    """θ_j <- θ_j + (lr / n_j) · ĝ_j for each table j (`steps_of`), in place."""
    for table, step in zip(learner.tables, steps_of(learner, grads, lr), strict=True):
        table += step


def reinforce_step(learner: Policy, problems: Sequence[Record], config: LearnConfig,
                   rng: np.random.Generator) -> Update:
    """One update: `collect` fresh completions, then `ascend` along ĝ (the learner, in place)."""
    update = collect(learner, problems, config, rng)
    ascend(learner, gradient(learner, update.rollouts, update.weight, config.batch_size,
                             update.log_probs), config.lr)
    return update


# -- 4. training: a fresh batch every step --------------------------------------------------------

@dataclass
class StepLog:
    """What one step measured, on the completions it sampled before its update."""

    step: int
    mean_reward: float
    pass_at_1: float
    kl: float
    entropy: float
    distinct: int
    top: list[tuple[str, int]]


def log_of(step: int, update: Update, top: int = 3) -> StepLog:
    counts = Counter(update.rollouts.texts).most_common(top)
    return StepLog(step, float(update.reward.mean()), float(update.strict.mean()),
                   float(update.kl_steps.mean()), float(update.entropy.mean()),
                   len(set(update.rollouts.texts)), counts)


@dataclass
class Training:
    """A finished training run: what it started from, what it became, what it saw."""

    problems: list[Record]
    reference: Policy
    fit: dict[str, Any]          # how the reference was counted (`fit_reference`'s report)
    learner: Policy
    logs: list[StepLog]          # one per step
    saved: dict[int, Rollouts]   # the raw completions of each checkpoint step


def train(config: LearnConfig, rng: np.random.Generator,
          checkpoints: Sequence[int] = ()) -> Training:
    """Train from the reference for `config.steps` updates, keeping the raw completions sampled
    at each step listed in `checkpoints` (rule 5 of docs/rules.md, Save raw outputs)."""
    problems, reference, fit = setup(config)
    learner = learner_of(config, reference, len(problems))
    logs, saved = [], {}
    for step in range(1, config.steps + 1):
        update = reinforce_step(learner, problems, config, rng)
        logs.append(log_of(step, update))
        if step in checkpoints:
            saved[step] = update.rollouts
    return Training(problems, reference, fit, learner, logs, saved)


LOG_LEGEND = paragraph(
    "Columns, on each step's fresh samples before its update: reward = mean reward paid by "
    "the scorer trained on; pass@1 = share the strict scorer pays; KL = mean KL(π ‖ π_ref) "
    "per completion, in nats; entropy = mean -log π(y), in nats; distinct = how many "
    "different completions; top = the most sampled one, x how many times.")
"""Printed once, above the step table (`LOG_HEADER`), in the terminal and in train_log.txt."""

LOG_HEADER = (f"{'step':>4}  {'reward':>6}  {'pass@1':>6}  {'KL':>6}  {'entropy':>7}  "
              f"{'distinct':>8}  top")


def log_line(entry: StepLog) -> str:
    """One step as a row of the step table (`LOG_HEADER`, explained by `LOG_LEGEND`): reward,
    pass@1, KL, entropy, diversity, the favourite text; a favourite too long for the row
    wraps under its column."""
    text, count = entry.top[0]
    row = (f"{entry.step:>4}  {fixed(entry.mean_reward):>6}  {fixed(entry.pass_at_1):>6}  "
           f"{fixed(entry.kl):>6}  {fixed(entry.entropy):>7}  {entry.distinct:>8}  ")
    return "\n".join(wrap(f"{text!r} x{count}", indent=row))


def log_table(entries: Sequence[StepLog]) -> str:
    """The step table: `LOG_LEGEND` once, the headings, one `log_line` per entry."""
    return "\n".join([LOG_LEGEND, LOG_HEADER, *map(log_line, entries)])


# -- 5. measuring a policy: on fresh samples, never on someone else's -----------------------------

def fresh_samples(policy: Policy, n_problems: int, per_prompt: int,
                  rng: np.random.Generator) -> Rollouts:
    """`per_prompt` new completions for every problem, from `policy` as it is now."""
    return sample(policy, np.repeat(np.arange(n_problems), per_prompt), rng)


def correct_counts(problems: Sequence[Record], rollouts: Rollouts, per_prompt: int,
                   scorer: Scorer = score) -> np.ndarray:
    """(P,) how many of each problem's `per_prompt` completions `scorer` pays: the c of
    pass@k (`course.selection.pass_at_k_curve`), one per prompt."""
    return rewards_of(scorer, problems, rollouts).reshape(-1, per_prompt).sum(axis=1)


# -- 6. one update in slow motion -----------------------------------------------------------------

SLOW_MOTION_LEGEND = paragraph(
    "Columns: t = position; before = the piece's log-probability log π before the update; "
    "own term = how it changes under this completion's own term A · ∇log π alone; batch = "
    "how it changes under the whole batch's update. The last row adds up the pieces.")
"""Printed once, above the table of `slow_motion`."""


def slow_motion(learner: Policy, problems: Sequence[Record], config: LearnConfig,
                rng: np.random.Generator, which: int = 0) -> str:
    """One update told as a story, for completion `which` of the batch: its pieces, and each
    piece's log-probability before the update, after this completion's own term A · ∇log π
    alone, and after the whole batch's update (which is applied to the learner)."""
    update = collect(learner, problems, config, rng)
    one = Rollouts(update.rollouts.x[[which]], update.rollouts.ids[[which]],
                   [update.rollouts.texts[which]])
    before = token_log_probs(learner, one)[0]
    alone = np.where(np.arange(len(update.weight)) == which, update.weight, 0.0)
    own_only = replace(learner, tables=[table.copy() for table in learner.tables])
    ascend(own_only, gradient(learner, update.rollouts, alone, config.batch_size,
                              update.log_probs), config.lr)
    after_own = token_log_probs(own_only, one)[0]
    ascend(learner, gradient(learner, update.rollouts, update.weight, config.batch_size,
                             update.log_probs), config.lr)               # the real update
    after = token_log_probs(learner, one)[0]
    problem = problems[int(one.x[0])]
    a = float(update.advantage[which])
    direction = "up" if a > 0 else "down" if a < 0 else "nowhere"
    lines = [paragraph(f"prompt {one_line(problem['id'])}: {problem['prompt']!r} "
                       f"(expected {problem['expected_answer']})"),
             paragraph(f"sampled {one.texts[0]!r}: reward {update.reward[which]:.0f}"
                       + ("" if config.reward == "strict" else
                          f" ({config.reward}); strict {update.strict[which]:.0f}")),
             paragraph(f"advantage A = R - b = {fixed(a, signed=True)}, b = the mean R of the "
                       f"other {config.batch_size - 1} samples of this prompt."),
             paragraph("This one number multiplies the log-prob gradient of every piece "
                       f"below: this completion's own term moves every piece {direction}; the "
                       "whole batch (its other samples, and other prompts sharing table rows) "
                       "moves them too."),
             SLOW_MOTION_LEGEND,
             f"  {'t':>2}  {'piece':<16} {'before':>8} {'own term':>9} {'batch':>8}"]
    for t, piece in enumerate(one.ids[0][one.ids[0] >= 0]):
        lines.append(f"  {t:>2}  {learner.vocab.pieces[piece]!r:<16} {fixed(before[t]):>8} "
                     f"{fixed(after_own[t] - before[t], signed=True):>9} "
                     f"{fixed(after[t] - before[t], signed=True):>8}")
    lines.append(f"  {'log π(y | x)':<20} {fixed(before.sum()):>8} "
                 f"{fixed(after_own.sum() - before.sum(), signed=True):>9} "
                 f"{fixed(after.sum() - before.sum(), signed=True):>8}")
    return "\n".join(lines)


# -- 7. where training is stable: a region measured over seeds, not a guarantee -------------------

STABLE_BETA_LR = 2.0
"""β · lr at most 2 was stable in 10 of 10 seeds of `scripts/stability_sweep.py` (strict
reward, 100 steps, β from 0 to 2, lr from 0.3 to 30; stable: no seed below the reference's
start, pass@1 within 0.10, KL within a factor of 2 or within 0.05 nats). At 3 one seed's KL
drifted to more than twice the others' (β 1, lr 3), and from 5 on the KL ran away (β 0.5 at
lr 10, β 2 at lr 3: 1.9 to 7.0 nats). A count over ten seeds, not a guarantee.

Why a product: the penalty pulls each of a problem's own rows back toward the reference like a
spring of stiffness β (the pull grows with β and with the row's distance), and an update moves
the row lr times that pull. Gradient steps on a spring are stable only while lr times the
stiffness stays below 2 (times the softmax's curvature, at most 1): beyond, every step jumps
past the rest point and lands further out than it started. So a larger β with the same lr can
make the policy drift *more*, not less."""
STABLE_LR = 10.0
"""lr at most 10 was stable at every β that keeps β · lr <= 2; lr 30 ran away even at β = 0."""


class UnstableConfigWarning(UserWarning):
    """A `LearnConfig` outside the region `scripts/stability_sweep.py` measured stable."""


def stability_warning(config: LearnConfig) -> str | None:
    """One line if `config` lies outside the measured stable region (`STABLE_BETA_LR`,
    `STABLE_LR`), else None."""
    if config.lr > STABLE_LR:
        return (f"lr {config.lr:g} is above {STABLE_LR:g}, the largest step size measured "
                "stable: the KL to the reference may run away")
    if config.beta * config.lr > STABLE_BETA_LR:
        return (f"beta x lr = {config.beta * config.lr:g} is above {STABLE_BETA_LR:g}: the KL "
                f"term overshoots and the policy may drift further, not less (keep lr <= "
                f"{STABLE_BETA_LR / config.beta:g} at beta {config.beta:g})")
    return None
