"""Loop C on the tiny transformer: REINFORCE on fresh samples, with the course's own pieces.

`course.learn` runs Loop C on a table of logits; this module runs the same loop on the tiny
language model of `course.tiny_lm`, pre-trained on `course.tiny_tasks` (`ab+cd=`, answered
`Final: <int>`). Each step:

1. draws a batch of train prompts (held-out prompts are never drawn: `tiny_tasks.split`) and
   samples G fresh completions of each from the current policy π_θ at temperature τ;
2. scores each completion's text with `course.scorer.score`, or with a hackable rubric of
   `course.rubrics` (then strict is only measured, never optimised);
3. folds a KL penalty toward the frozen reference π_ref (the pre-trained base) into the reward,
   as `course.learn` does:

       R_i = r_i - β · log(π_θ(y_i | x_i) / π_ref(y_i | x_i))

4. turns each group's shaped rewards into advantages with `course.learn.advantages`, the very
   function the token policy uses (`rloo`, `grpo`, `dr_grpo`);
5. takes one Adam step on the policy-gradient loss of `tiny_lm.policy_gradient`, each
   completion token weighted by its completion's advantage:

       L(θ) = -(1/N) Σ_i A_i · Σ_t log π_θ,τ(y_i,t | x_i, y_i,<t),    N = P · G

   (under `grpo`, A_i / |y_i|: each completion's log-probability averaged over its tokens, as
   `course.learn` does for that rule), at a step size warmed up linearly over the first
   updates (`lr_at`): Adam's first update is otherwise its largest.

Unlike the table, every prompt reads the same weights, so an update on train prompts can move
held-out prompts too: `evaluate` measures strict pass@k (the unbiased estimator of
`course.selection.pass_at_k_curve`) on a fixed subset of train prompts and of held-out prompts,
and every step also scores a fresh batch of held-out prompts it does not learn from
(`held_out_pass_at_1`).

The module reads top to bottom: the settings (`TinyLearnConfig`); judging completions; one
update (`collect`, `token_weights`, `lr_at`, `ascend`); measuring a policy (`EvalConfig`,
`evaluate`); training (`train`). numpy only, on a CPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from course import tiny_lm as lm
from course.data import Record
from course.learn import advantages, shared_problems
from course.limits import count_problem
from course.rubrics import RUBRICS
from course.scorer import score
from course.selection import pass_at_k_curve
from course.tiny_tasks import PROMPT_WIDTH, held_out_problems, label, train_problems

# -- 1. the settings ------------------------------------------------------------------------------

MAX_ROWS = 1_024
"""Upper bound on the completions one step samples side by side and learns from (prompts x
group, four times 32 x 8): for the default model, at most about 700 MB and 3 s a step (4,096
took 2.5 GB)."""
MAX_STEPS = 10_000
"""Upper bound on `steps`: every step's log is kept."""
SIDE_BY_SIDE = 4_096
"""Completions a measurement samples side by side, at most (no gradient is kept: about 400 MB
for the default model)."""
MAX_EVAL_ROWS = 65_536
"""Upper bound on the completions one measurement of a split samples (prompts x samples, 16
times the default 64 x 64), `SIDE_BY_SIDE` at a time."""
MAX_NEW = 64
"""Upper bound on `max_new`; the model's positions bound it too (`train` checks)."""


@dataclass(frozen=True)
class TinyLearnConfig:
    """Everything that decides an RL run of the tiny transformer, given its base."""

    reward: str = field(default="strict", metadata={"choices": tuple(RUBRICS)})
    """What pays: `strict` (`course.scorer.score`) or a hackable rubric of `course.rubrics`
    (`answer_anywhere`, `last_integer`, `lenient_int`, `first_final_line`,
    `contains_format`)."""
    beta: float = 0.0
    """KL coefficient β >= 0, finite: the price of drifting from the reference, in reward per
    nat of log(π_θ(y | x) / π_ref(y | x))."""
    lr: float = 3e-4
    """Adam's step size, finite and > 0 (`tiny_lm.AdamConfig`, gradient norm clipped at 1).
    About 1e-4 to 1e-3 for the default model: Adam moves every weight by up to lr per step,
    and at 1e-3 the first step alone took the policy far from its base."""
    warmup: int = 20
    """Steps over which the step size rises linearly to `lr` (update s, counted from 1, takes
    lr · min(1, s / warmup); 0: none), 0 to `MAX_STEPS`. Adam's first update moves nearly
    every weight by the whole step size whatever the gradient's scale (its moments start at
    zero), so with no warm-up the first update alone spent about 0.48 nats of KL from the
    base; with 20 steps it spends a hundredth of that."""
    advantage: str = "rloo"
    """How a sample's advantage comes from its group's shaped rewards: one of
    `course.learn.ADVANTAGES` (`rloo`, `grpo`, `dr_grpo`)."""
    prompts: int = 16
    """P: train prompts per step, drawn uniformly without replacement, >= 1, with P · G at
    most `MAX_ROWS` (so P <= 512)."""
    group: int = 8
    """G: fresh completions per prompt per step, >= 2 (the leave-one-out baseline needs one
    other sample)."""
    steps: int = 200
    """Updates, 1 to `MAX_STEPS`."""
    temperature: float = 1.0
    """τ, finite and in (0, 10]: completions are drawn from softmax(logits / τ), and the loss,
    the KL and the entropies are those of that distribution. Recorded with the run: pass@k
    depends on it."""
    max_new: int = 24
    """Most tokens a completion may write, `EOT` included, 1 to `MAX_NEW` (and at most the
    model's block size - 5); the writer's longest completion has 22. A completion cut here
    is scored as it stands."""
    seed: int = 0
    """Seed of the run's generator (`np.random.default_rng(seed)`, which `train`'s caller
    passes), >= 0."""

    def __post_init__(self) -> None:
        problems = shared_problems(self.reward, self.advantage, self.beta, self.lr)
        if not (math.isfinite(self.temperature) and 0 < self.temperature <= 10):
            problems.append(f"temperature: must be in (0, 10], got {self.temperature}")
        sizes = list(filter(None, [
            count_problem("prompts", self.prompts, 1, MAX_ROWS // 2,
                          f"prompts x group is at most {MAX_ROWS:,} and group >= 2"),
            count_problem("group", self.group, 2, MAX_ROWS // 2,
                          f"prompts x group is at most {MAX_ROWS:,}",
                          why_low="leave-one-out baseline")]))
        problems += sizes or filter(None, [
            count_problem("prompts x group", self.prompts * self.group, 2, MAX_ROWS,
                          "one step samples them side by side and learns from them")])
        problems += filter(None, [
            count_problem("steps", self.steps, 1, MAX_STEPS, "every step is kept for the log"),
            count_problem("warmup", self.warmup, 0, MAX_STEPS, "steps of rising step size"),
            count_problem("max_new", self.max_new, 1, MAX_NEW, "a completion is cut there")])
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("; ".join(problems))


def check_fits(model: lm.ModelConfig, max_new: int) -> None:
    """Refuse, in one line, a `max_new` the model's positions cannot hold after a prompt."""
    if PROMPT_WIDTH + max_new - 1 > model.block_size:
        raise ValueError(f"max_new: must be at most {model.block_size - PROMPT_WIDTH + 1} "
                         f"(a {PROMPT_WIDTH}-character prompt in {model.block_size} positions), "
                         f"got {max_new}")


# -- 2. judging completions: always the text ------------------------------------------------------

@dataclass(frozen=True)
class Verdicts:
    """What the scorers say about N completions, (N,) each."""

    reward: np.ndarray
    """What the optimised scorer (`TinyLearnConfig.reward`) pays, 0 or 1."""
    strict: np.ndarray
    """What `course.scorer.score` pays, 0 or 1 (= reward when training on strict)."""
    exploit: np.ndarray
    """True where `tiny_tasks.label` calls the completion an exploit: several numbers, the
    answer among them."""


def judge(reward: str, problems: Sequence[Record], texts: Sequence[str]) -> Verdicts:
    """Score completion i for problems[i] with the rubric `reward`, with the strict scorer, and
    label it. A scorer is a pure function of (problem, text), so each distinct pair is judged
    once (a policy that has learned writes the same few texts again and again)."""
    seen: dict[tuple[str, str], tuple[float, float, bool]] = {}
    rows = []
    for problem, text in zip(problems, texts, strict=True):
        key = (problem["prompt"], text)
        if key not in seen:
            seen[key] = (RUBRICS[reward](problem, text)["reward"], score(problem, text)["reward"],
                         label(problem, text).kind == "exploit")
        rows.append(seen[key])
    paid, strict, exploit = zip(*rows, strict=True) if rows else ((), (), ())
    return Verdicts(np.array(paid, dtype=float), np.array(strict, dtype=float),
                    np.array(exploit, dtype=bool))


# -- 3. one update --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Batch:
    """One step's fresh completions, P prompts x G samples, grouped by prompt (G consecutive
    rows each); arrays are (N,), N = P · G, unless shaped otherwise."""

    problems: list[Record]
    """The problem of each row."""
    samples: lm.Samples
    """The completions as `tiny_lm.sample` wrote them."""
    tokens: np.ndarray
    """(N, L) prompt then completion, cut after the longest completion's last token (the
    columns after it hold nothing but padding)."""
    mask: np.ndarray
    """(N, L) True on each completion's tokens, `EOT` included."""
    verdicts: Verdicts
    log_ratio: np.ndarray
    """log π_θ(y | x) - log π_ref(y | x), summed over the completion's tokens: its mean
    estimates KL(π_θ ‖ π_ref) per completion, in nats."""
    advantage: np.ndarray
    """A, from R = r - β · log_ratio by the config's rule (`course.learn.advantages`)."""


def draw(params: lm.Params, model: lm.ModelConfig, pool: Sequence[Record], prompts: int,
         config: TinyLearnConfig, rng: np.random.Generator) -> tuple[list[Record], lm.Samples]:
    """`prompts` problems of `pool`, drawn uniformly without replacement, and
    `config.group` fresh completions of each from the policy `params` at `config.temperature`:
    the problem of each row, and the samples (grouped by prompt, G consecutive rows each)."""
    chosen = rng.choice(len(pool), size=prompts, replace=False)
    problems = [pool[i] for i in np.repeat(chosen, config.group).tolist()]
    return problems, lm.sample(params, model, [p["prompt"] for p in problems], rng,
                               config.temperature, config.max_new)


def collect(params: lm.Params, reference: lm.Params, model: lm.ModelConfig,
            pool: Sequence[Record], config: TinyLearnConfig, rng: np.random.Generator) -> Batch:
    """Draw `config.prompts` problems from `pool` and `config.group` completions of each from
    the current policy (`draw`), judge them, and compute the advantages; the policy is not
    changed."""
    problems, samples = draw(params, model, pool, config.prompts, config, rng)  # on-policy
    verdicts = judge(config.reward, problems, samples.texts)
    width = PROMPT_WIDTH + int(samples.lengths.max())
    tokens, mask = samples.tokens[:, :width], samples.mask[:, :width]
    # log π_θ(y | x) and log π_ref(y | x), both by one pass over the whole sequence (the same
    # computation, so the ratio is exactly 1 while θ is the reference)
    log_ratio = (lm.sequence_log_probs(params, model, tokens, mask, config.temperature)
                 - lm.sequence_log_probs(reference, model, tokens, mask, config.temperature))
    shaped = verdicts.reward - config.beta * log_ratio           # R = r - β log(π_θ / π_ref)
    advantage = advantages(shaped, config.group, config.advantage)
    return Batch(problems, samples, tokens, mask, verdicts, log_ratio, advantage)


def token_weights(advantage: np.ndarray, mask: np.ndarray, rule: str) -> np.ndarray:
    """(N, L) the weight of each token in the policy-gradient loss, from (N,) advantages and
    the (N, L) completion mask: A_i on every token of completion i (`EOT` included), 0 on the
    prompt and after the end; under `grpo` A_i / |y_i|, so that each completion counts its
    mean token log-probability."""
    per_completion = advantage / mask.sum(axis=1) if rule == "grpo" else advantage
    return per_completion[:, None] * mask


def lr_at(update: int, config: TinyLearnConfig) -> float:
    """The step size of update `update` (1, 2, ...): linear warm-up, then constant,
    lr · min(1, update / warmup)."""
    return config.lr * min(1.0, update / config.warmup) if config.warmup else config.lr


def ascend(params: lm.Params, state: lm.AdamState, model: lm.ModelConfig, tokens: np.ndarray,
           weights: np.ndarray, config: TinyLearnConfig, update: int,
           ) -> tuple[lm.Params, lm.AdamState, float]:
    """Update `update` (1, 2, ...): one Adam step, of size `lr_at(update)`, down the
    policy-gradient loss L(θ) = -(1/N) Σ w · log π_θ,τ (the rows of `tokens`, weighted per
    token by `weights`, both (N, L)). Returns the new parameters and state and the gradient's
    norm before clipping; the inputs are not changed."""
    _, grads = lm.policy_gradient(params, model, tokens, weights, config.temperature)
    return lm.adam_step(params, grads, state, lm.AdamConfig(lr=lr_at(update, config)))


# -- 4. measuring a policy: fresh samples on fixed prompts ----------------------------------------

KS = (1, 2, 4, 8, 16, 32, 64)
"""The k of pass@k that `evaluate` reports (those <= its samples per prompt)."""


@dataclass(frozen=True)
class EvalConfig:
    """How a policy is measured: the same prompts every time, n fresh samples each."""

    prompts: int = 64
    """Prompts of each split, 1 to 812 (the held-out split's size): evenly spaced over the
    split's sorted list (`evaluation_problems`), the same ones at every checkpoint."""
    samples: int = 64
    """n, fresh completions per prompt, 1 to 1,024: pass@k is estimated for each k of `KS`
    up to n (pass@64 needs n >= 64)."""
    seed: int = 1
    """Seed of the generator each measurement starts afresh, >= 0: measuring draws nothing from
    the training run's generator, so checkpoints do not change the run."""
    watch: int = 16
    """Held-out prompts measured at every step, 1 to 512: drawn like a training batch (G fresh
    samples each, `TinyLearnConfig.group`) from the policy before the step's update, scored
    strictly, never learned from (`StepLog.held_out_pass_at_1`). Their generator is
    `watch_generator`'s, so watching changes nothing of the training."""

    def __post_init__(self) -> None:
        problems = list(filter(None, [
            count_problem("watch", self.watch, 1, MAX_ROWS // 2, "as many as a step's prompts"),
            count_problem("prompts", self.prompts, 1, len(held_out_problems()),
                          "the held-out prompts"),
            count_problem("samples", self.samples, 1, 1_024, "16 times what pass@64 needs"),
            count_problem("prompts x samples", self.prompts * self.samples, 1, MAX_EVAL_ROWS,
                          "about 20 s per split"),
        ]))
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("; ".join(problems))


SPLITS = ("train", "held_out")
"""The two parts of `tiny_tasks.split`: RL samples the first only."""


def evaluation_problems(split: str, size: int) -> list[Record]:
    """`size` problems of a split ("train" or "held_out"), evenly spaced over its sorted list,
    so that every first operand is represented."""
    problems = train_problems() if split == "train" else held_out_problems()
    return [problems[i] for i in np.linspace(0, len(problems) - 1, size).round().astype(int)]


@dataclass(frozen=True)
class Measure:
    """One split, measured on n fresh samples of each of its evaluation prompts."""

    correct: tuple[int, ...]
    """c per prompt: how many of its n samples the strict scorer pays (the raw counts)."""
    samples: int
    """n per prompt."""
    pass_at: dict[int, float]
    """k -> the mean over prompts of the unbiased pass@k from (n, c), for k in `KS`, k <= n."""
    entropy: float
    """Mean entropy of the distribution each written token was drawn from, nats per token."""
    length: float
    """Mean tokens written per completion, `EOT` included."""
    exploit_share: float
    """Share of the completions `tiny_tasks.label` calls exploits."""


def written_entropies(samples: lm.Samples) -> np.ndarray:
    """(tokens written,) the entropy in nats of the distribution each written token (`EOT`
    included) was drawn from, row by row."""
    return samples.entropies[np.arange(samples.ids.shape[1]) < samples.lengths[:, None]]


def evaluate(params: lm.Params, model: lm.ModelConfig, problems: Sequence[Record], n: int,
             temperature: float, max_new: int, rng: np.random.Generator) -> Measure:
    """Sample n completions of each problem at temperature τ, `SIDE_BY_SIDE` at a time, and
    measure."""
    rows, chunk = [p for p in problems for _ in range(n)], SIDE_BY_SIDE
    drawn = [lm.sample(params, model, [p["prompt"] for p in rows[i:i + chunk]], rng,
                       temperature, max_new) for i in range(0, len(rows), chunk)]
    verdicts = judge("strict", rows, [text for samples in drawn for text in samples.texts])
    correct = verdicts.strict.reshape(len(problems), n).sum(axis=1).astype(int).tolist()
    curves = np.array([pass_at_k_curve(n, c) for c in correct])         # (prompts, n)
    return Measure(tuple(correct), n,
                   {k: float(curves[:, k - 1].mean()) for k in KS if k <= n},
                   float(np.concatenate([written_entropies(s) for s in drawn]).mean()),
                   float(np.concatenate([s.lengths for s in drawn]).mean()),
                   float(verdicts.exploit.mean()))


Evaluation = dict[str, Measure]
"""One checkpoint: a `Measure` per split of `SPLITS`."""


def evaluate_splits(params: lm.Params, model: lm.ModelConfig, config: TinyLearnConfig,
                    measure: EvalConfig) -> Evaluation:
    """Both splits, at the run's temperature and max_new, from a fresh generator of
    `measure.seed`."""
    rng = np.random.default_rng(measure.seed)
    return {split: evaluate(params, model, evaluation_problems(split, measure.prompts),
                            measure.samples, config.temperature, config.max_new, rng)
            for split in SPLITS}


# -- 5. training: a fresh batch every step --------------------------------------------------------

@dataclass(frozen=True)
class StepLog:
    """What one step measured on the completions it sampled, before its update."""

    step: int
    reward: float
    """Mean reward paid by the scorer trained on."""
    pass_at_1: float
    """Share the strict scorer pays."""
    held_out_pass_at_1: float
    """Share the strict scorer pays on the step's watch batch: `EvalConfig.watch` held-out
    prompts x G fresh samples from the same policy, never learned from."""
    kl: float
    """Mean log(π_θ / π_ref) per completion, nats: the estimate of KL(π_θ ‖ π_ref) that the
    penalty reads."""
    entropy: float
    """Mean entropy per written token, nats."""
    length: float
    """Mean tokens per completion, `EOT` included."""
    exploit_share: float
    """Share of exploits (`tiny_tasks.label`)."""
    grad_norm: float
    """The gradient's global norm before clipping."""


def log_of(step: int, batch: Batch, held_out: float, grad_norm: float) -> StepLog:
    """Step `step`'s log, from its batch, its watch batch's strict pass@1 and its gradient's
    norm."""
    samples, verdicts = batch.samples, batch.verdicts
    return StepLog(step, float(verdicts.reward.mean()), float(verdicts.strict.mean()), held_out,
                   float(batch.log_ratio.mean()), float(written_entropies(samples).mean()),
                   float(samples.lengths.mean()), float(verdicts.exploit.mean()), grad_norm)


@dataclass
class TinyTraining:
    """A finished run: its settings, the policy it became, what it saw and measured."""

    config: TinyLearnConfig
    params: lm.Params
    """The trained policy (the base is left as it was)."""
    logs: list[StepLog]
    """One per step."""
    evaluations: dict[int, Evaluation]
    """Step -> both splits measured after that many updates (0: the base), for each checkpoint."""


def watch_generator(config: TinyLearnConfig, measure: EvalConfig) -> np.random.Generator:
    """The generator of a run's watch batches: seeded by both the run's seed and the
    measurement's, and drawn from by nothing else (so the training run's draws are the same
    with or without watching)."""
    return np.random.default_rng([config.seed, measure.seed])


def held_out_pass_at_1(params: lm.Params, model: lm.ModelConfig, held_out: Sequence[Record],
                       config: TinyLearnConfig, prompts: int, rng: np.random.Generator) -> float:
    """Strict pass@1 on a fresh watch batch: `prompts` problems of `held_out`, G samples each,
    drawn as a training batch is (`draw`) but only scored."""
    problems, samples = draw(params, model, held_out, prompts, config, rng)
    return float(judge("strict", problems, samples.texts).strict.mean())


def train(config: TinyLearnConfig, model: lm.ModelConfig, base: lm.Params,
          rng: np.random.Generator, checkpoints: Sequence[int] = (),
          measure: EvalConfig = EvalConfig()) -> TinyTraining:
    """RL from `base` for `config.steps` updates, on train prompts only; `base` stays the
    frozen reference of the KL penalty. `model` is the base's shape (its heads cannot be read
    off the arrays). At each step in `checkpoints` (0 to `config.steps`), both splits are
    measured with `measure`; at every step, before its update, a watch batch of held-out
    prompts too (`held_out_pass_at_1`)."""
    check_fits(model, config.max_new)
    if measure.watch * config.group > SIDE_BY_SIDE:
        raise ValueError(f"watch: {measure.watch} prompts x group {config.group} must be at "
                         f"most {SIDE_BY_SIDE:,} samples side by side")
    outside = [step for step in checkpoints if not 0 <= step <= config.steps]
    if outside:
        raise ValueError(f"checkpoints: must be in 0..{config.steps}, got {outside}")
    pool = train_problems()                 # the held-out prompts are never sampled to learn
    watched = held_out_problems()           # ... only to measure
    params, state, watching = base, lm.adam_init(base), watch_generator(config, measure)
    logs, evaluations = [], {}
    for step in range(config.steps):
        if step in checkpoints:             # measured after `step` updates
            evaluations[step] = evaluate_splits(params, model, config, measure)
        batch = collect(params, base, model, pool, config, rng)
        held_out = held_out_pass_at_1(params, model, watched, config, measure.watch,
                                      watching)
        weights = token_weights(batch.advantage, batch.mask, config.advantage)
        params, state, norm = ascend(params, state, model, batch.tokens, weights, config,
                                     step + 1)
        logs.append(log_of(step + 1, batch, held_out, norm))
    if config.steps in checkpoints:
        evaluations[config.steps] = evaluate_splits(params, model, config, measure)
    return TinyTraining(config, params, logs, evaluations)

