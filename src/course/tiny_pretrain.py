"""Pre-training the tiny transformer: the base model that reinforcement learning starts from.

`course.tiny_lm` is a model with no knowledge; `course.tiny_tasks` writes text about two-digit
sums with the mistakes of the course's frozen rollouts in it. This module joins them: it trains
the model to predict the writer's next character, then measures what the trained model writes
when it is sampled, with the strict scorer and the hackable rubrics. The result, the *base*, is
the reference policy of RL and its starting point; its weights are a committed data file,
`data/tiny_lm/base.npz`, with `data/tiny_lm/provenance.json` beside it.

A base that leaves room to learn is one that imitates the writer's faults and is still unsure of
its sums: trained briefly, not to convergence. The writer's own strict rate is 50 % (the other
half is format slips, wrong answers and exploits), so a model that copied the writer exactly
would pass half its samples at temperature 1, and fewer while its arithmetic is shaky.

The module reads top to bottom:

1. the settings (`PretrainConfig`);
2. the text the model reads: the writer's corpus (`corpus`) cut into batches (`batch_at`),
   each line `prompt + completion` followed by the model's end token `EOT` where the writer
   wrote its end marker `;` (`tiny_tasks.END` is not in the model's vocabulary: `EOT` takes
   its place, and `score` reads the text before it);
3. the step size over time (`lr_at`): linear warm-up, then cosine decay;
4. the training loop (`pretrain`): Adam on next-character cross-entropy;
5. measuring a model on fresh samples (`measure`, `measure_base`): strict pass@1, the share of
   each kind of completion (`tiny_tasks.label`) and what each hackable rubric pays, on train
   prompts and on held-out prompts;
6. the committed base: writing it byte for byte (`write_base`), reading it (`load_base`) and
   checking it cheaply (`check_base`). `scripts/pretrain_tiny_lm.py` regenerates it.

Determinism: the same config and seed give the same weights on one machine when numpy's BLAS
uses one thread (the script sets `OPENBLAS_NUM_THREADS=1` before numpy loads: a matrix product
split over threads may add its terms in another order). Another machine, or another BLAS, may
round differently in the last bits of float32, so the sha256 of the weights is this machine's;
the loss curve agrees to a tolerance anywhere, which is what `check_base` compares.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from course.data import Record
from course.jsonfiles import json_bytes
from course.paths import DATA_DIR
from course.tiny_lm import (
    AdamConfig,
    ModelConfig,
    Params,
    adam_init,
    adam_step,
    init_params,
    language_model_loss,
    sample,
    text_batch,
)
from course.tiny_tasks import (
    HACKABLE,
    KINDS,
    MAX_LINE,
    PROMPT_WIDTH,
    WriterConfig,
    held_out_problems,
    label,
    read_line,
    train_problems,
    write_corpus,
)

# -- 1. the settings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that decides a pre-training run (with the generator's seed)."""

    seed: int = 0
    """Seed >= 0 of the run's one generator, `numpy.random.default_rng(seed)`: it writes the
    corpus, then draws the initial weights. `pretrain` takes the generator itself; the
    committed base is made with this seed."""
    steps: int = 550
    """Adam updates, >= 1. Each reads `batch_size` corpus lines. 550 stops while the model
    is learning to add. Measured on seed 0 (4 samples on each of 812 train prompts), strict
    pass@1 at temperature 1 after runs of 300, 400, 500, 600, 800 and 1,200 steps was 0.035,
    0.046, 0.175, 0.396, 0.477 and 0.497 (the writer's own rate: 0.5). Where a seed stands at 550
    steps varies: 0.11 to 0.43 over seeds 0-3."""
    batch_size: int = 64
    """Corpus lines per update, >= 1."""
    lr: float = 3e-3
    """Peak step size of Adam, > 0, reached at the end of the warm-up."""
    warmup: int = 20
    """Steps of linear warm-up, 0 to `steps`: the step size grows from lr/warmup to lr."""
    final_lr: float = 0.1
    """The step size at the last step as a share of `lr`, in [0, 1]: after the warm-up it
    decays from lr to final_lr·lr along half a cosine. 1 keeps it constant."""
    loss_on: Literal["completion", "line"] = "completion"
    """Which characters the loss counts: `completion`, the completion and its `EOT` (the
    prompt is read, never predicted), or `line`, every character after the first (the prompt's
    digits too, uniform draws that no model can predict). Measured at 550
    steps over seeds 0-3, neither makes the better base every time: strict pass@1 0.11 to 0.43
    (mean 0.28) on the completion, 0.04 to 0.35 (mean 0.24) on the line; `completion` is the
    default, the loss on what the model will be asked to write."""
    writer: WriterConfig = field(default_factory=WriterConfig)
    """The scripted writer's corpus: how many lines and the share of each kind of fault."""
    model: ModelConfig = field(default_factory=lambda: ModelConfig(dtype="float32"))
    """The model's shape; float32 (several times faster than float64 here)."""

    def __post_init__(self) -> None:
        if (self.seed < 0 or self.steps < 1 or self.batch_size < 1 or not self.lr > 0
                or not 0 <= self.warmup <= self.steps or not 0 <= self.final_lr <= 1
                or self.loss_on not in ("completion", "line")):
            raise ValueError(f"a setting out of range: {self}")
        if self.model.block_size < MAX_LINE - 1:
            raise ValueError(f"block_size must be >= {MAX_LINE - 1}, the longest line's "
                             f"inputs")

    def to_dict(self) -> dict[str, Any]:
        """The config as plain JSON values (nested dicts for the writer and the model)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> PretrainConfig:
        """The inverse of `to_dict`."""
        return cls(**{**values, "writer": WriterConfig(**values["writer"]),
                      "model": ModelConfig(**values["model"])})


# -- 2. the text the model reads ------------------------------------------------------------------

MAX_NEW = MAX_LINE - PROMPT_WIDTH
"""22: room for the writer's longest completion (21 characters) and its `EOT`. A sample that
has not ended by then is cut there."""


def corpus(config: PretrainConfig, rng: np.random.Generator) -> list[str]:
    """The texts pre-training reads, in the order it reads them: the writer's
    `config.writer.lines` lines (train prompts only) with the end marker `;` taken off, e.g.
    `37+48=Final: 85`. `text_batch` puts `EOT` after each."""
    return ["".join(read_line(line)) for line in write_corpus(config.writer, rng)]


def batch_at(texts: Sequence[str], step: int, config: PretrainConfig,
             ) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, mask), both (B, L), for update `step` (0-based): the next `batch_size` texts,
    wrapping round to the start of the corpus. L <= `MAX_LINE` (the longest text and its
    `EOT`); the mask marks the completion and its `EOT`, or the whole line after its first
    character, as `config.loss_on` says."""
    start = step * config.batch_size
    rows = [texts[(start + i) % len(texts)] for i in range(config.batch_size)]
    scored_from = [PROMPT_WIDTH] * len(rows) if config.loss_on == "completion" else None
    return text_batch(rows, scored_from)


# -- 3. the step size over time -------------------------------------------------------------------

def lr_at(step: int, config: PretrainConfig) -> float:
    """The step size of update `step` (0-based), as in nanoGPT:

        warm-up   α_s = lr · (s + 1) / warmup                               s < warmup
        decay     α_s = lr · (f + (1 - f) · ½ (1 + cos(π · u))),  u = (s - warmup) /
                  max(1, steps - 1 - warmup) in [0, 1],  f = final_lr      otherwise
    """
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    u = (step - config.warmup) / max(1, config.steps - 1 - config.warmup)
    return config.lr * (config.final_lr + (1 - config.final_lr) * 0.5 * (1 + math.cos(math.pi * u)))


# -- 4. the training loop -------------------------------------------------------------------------

def pretrain(config: PretrainConfig, rng: np.random.Generator,
             steps: int | None = None) -> tuple[Params, list[float]]:
    """Train a fresh model by next-character prediction on the writer's corpus.

    `rng` writes the corpus, then draws the initial weights (`init_params`). Each update
    minimises the mean cross-entropy over the marked characters of one batch (`batch_at`):

        L(θ) = -(1/M) Σ_{marked b, j} log π_θ(token[b, j] | token[b, :j])

    with Adam (gradient norm clipped to 1) at the step size `lr_at`. `steps`: stop after that
    many updates (default `config.steps`) on the same schedule, as a cheap check of the start
    of a run does. Returns the weights and the loss of every update, in nats per marked
    character, before that update.
    """
    texts = corpus(config, rng)
    params = init_params(config.model, rng)
    state, adam = adam_init(params), AdamConfig()
    curve = []
    for step in range(config.steps if steps is None else steps):
        tokens, mask = batch_at(texts, step, config)
        loss, grads = language_model_loss(params, config.model, tokens, mask)
        params, state, _ = adam_step(params, grads, state, replace(adam, lr=lr_at(step, config)))
        curve.append(loss)
    return params, curve


# -- 5. measuring a model on fresh samples --------------------------------------------------------

@dataclass(frozen=True)
class Measurement:
    """What a model writes for some prompts, `per_prompt` samples each, read by `label`."""

    prompts: int
    """How many prompts were sampled."""
    samples: int
    """How many completions in all (prompts × samples per prompt)."""
    temperature: float
    """The sampling temperature τ >= 0 (0: greedy)."""
    strict: float
    """Strict pass@1: the share of completions `course.scorer.score` pays, in [0, 1]."""
    kinds: dict[str, float]
    """The share of each kind in `tiny_tasks.KINDS` (they add up to 1)."""
    paid: dict[str, float]
    """For each hackable rubric (`tiny_tasks.HACKABLE`), the share of completions it pays."""
    unearned: dict[str, float]
    """For each hackable rubric, the share of completions it pays that `score` refuses: its
    pay on format slips, exploits and wrong answers."""
    mean_length: float
    """Tokens per completion, `EOT` included (`MAX_NEW` for one cut off)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, shares rounded to 4 decimals."""
        def rounded(value: Any) -> Any:
            if isinstance(value, dict):
                return {key: rounded(item) for key, item in value.items()}
            return round(value, 4) if isinstance(value, float) else value
        return {key: rounded(value) for key, value in asdict(self).items()}


def measure(params: Params, model: ModelConfig, problems: Sequence[Record],
            rng: np.random.Generator, per_prompt: int = 8, temperature: float = 1.0,
            ) -> Measurement:
    """Sample `per_prompt` completions of each problem's prompt at `temperature` (0: greedy,
    then one is enough) in one batch, and label each (`tiny_tasks.label`, which reads it with
    `course.scorer.score` and the hackable rubrics): strict pass@1 is the share it calls
    `correct`."""
    prompts = [problem["prompt"] for problem in problems for _ in range(per_prompt)]
    samples = sample(params, model, prompts, rng, temperature=temperature, max_new=MAX_NEW)
    examples = [problem for problem in problems for _ in range(per_prompt)]
    labels = [label(example, text) for example, text in zip(examples, samples.texts, strict=True)]
    kinds = Counter(item.kind for item in labels)
    n = len(labels)
    return Measurement(
        prompts=len(problems), samples=n, temperature=temperature, strict=kinds["correct"] / n,
        kinds={kind: kinds[kind] / n for kind in KINDS},
        paid={name: sum(name in item.paid_by for item in labels) / n for name in HACKABLE},
        unearned={name: sum(name in item.paid_by and item.kind != "correct" for item in labels)
                  / n for name in HACKABLE},
        mean_length=float(samples.lengths.mean()),
    )


MEASURE_SEED = 1
"""The seed of the generator that `measure_base` is given for the provenance's numbers: it picks
the train prompts to sample and draws every sample."""

EVAL_TRAIN_PROMPTS = 812
"""Train prompts sampled by `measure_base`: as many as the held-out split has, drawn without
replacement."""


def measure_base(params: Params, model: ModelConfig, rng: np.random.Generator,
                 per_prompt: int = 8) -> dict[str, Measurement]:
    """The base's measurements: `train` (`EVAL_TRAIN_PROMPTS` train prompts drawn by `rng`)
    and `held_out` (all 812), `per_prompt` samples each at temperature 1; and the same prompts
    greedily, one sample each (`train_greedy`, `held_out_greedy`)."""
    train_all = train_problems()
    chosen = np.sort(rng.choice(len(train_all), EVAL_TRAIN_PROMPTS, replace=False))
    train = [train_all[i] for i in chosen.tolist()]
    held_out = held_out_problems()
    return {
        "train": measure(params, model, train, rng, per_prompt),
        "held_out": measure(params, model, held_out, rng, per_prompt),
        "train_greedy": measure(params, model, train, rng, 1, temperature=0.0),
        "held_out_greedy": measure(params, model, held_out, rng, 1, temperature=0.0),
    }


# -- 6. the committed base ------------------------------------------------------------------------

BASE_DIR = DATA_DIR / "tiny_lm"
"""Where the committed base lives: `base.npz` (the weights) and `provenance.json`. The lessons
and labs read this one, pre-trained from seed 0."""

OTHER_BASES = (1, 2)
"""The pre-training seeds of the other committed bases (the same config, another seed: other
initial weights, another corpus order), which `runs/run_021` trains from beside the first, so
that what Loop C does is counted over bases as well as over RL seeds."""

BASES = (0, *OTHER_BASES)
"""Every committed base's pre-training seed, the lessons' base first."""


def base_dir(seed: int) -> Path:
    """Where the base pre-trained from `seed` is committed: `BASE_DIR` for seed 0,
    `BASE_DIR/bases/seed_S` for each of `OTHER_BASES`."""
    return BASE_DIR if seed == 0 else BASE_DIR / "bases" / f"seed_{seed}"

REGENERATE = "python scripts/pretrain_tiny_lm.py"
"""The one command that rewrites `BASE_DIR` (`--seed S`: `base_dir(S)`; it runs numpy's BLAS
on one thread)."""

CHECK_STEPS = 10
"""Updates `check_base` runs again from the seed, to compare with the recorded loss curve."""

CHECK_RTOL = 1e-4
"""Relative tolerance of that comparison: float32 rounding on another machine or BLAS moves
the first losses by far less; a change to the data, the model or the optimiser, by far more."""


def npz_bytes(params: Params) -> bytes:
    """The weights as an `.npz` archive (readable by `numpy.load`), byte for byte the same for
    the same arrays: `numpy.savez` stamps each member with the current time; this stamps
    1980-01-01, the zip format's earliest date, and stores the members uncompressed, in the
    order of `params`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in params.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0)),
                             member.getvalue())
    return buffer.getvalue()


def provenance(config: PretrainConfig, weights: bytes, curve: Sequence[float],
               measured: Mapping[str, Measurement]) -> dict[str, Any]:
    """What `provenance.json` records about a base: nothing that changes from one run of the
    command to the next (no timing), so that regenerating rewrites the same bytes. The loss
    curve holds every update's loss (nats per marked character, 6 decimals);
    `final_loss_last_10` is the mean of the last 10."""
    return {
        "about": "The tiny transformer's pre-trained base (course.tiny_pretrain): trained by "
                 "next-character prediction on the scripted writer's corpus (course.tiny_tasks, "
                 "train prompts only). No other model was run.",
        "command": REGENERATE + (f" --seed {config.seed}" if config.seed else ""),
        "seed": config.seed,
        "steps": config.steps,
        "config": config.to_dict(),
        "sha256": hashlib.sha256(weights).hexdigest(),
        "machine_independence": (
            "Byte for byte on one machine: the command runs numpy's BLAS on one thread, so "
            "every sum is added in the same order. Another CPU or BLAS build may round float32 "
            "differently in the last bits and write other bytes; the loss curve then agrees to "
            "a relative tolerance, which is what check_base compares on its first steps."),
        "final_loss_last_10": round(float(np.mean(curve[-10:])), 4),
        "measure_seed": MEASURE_SEED,
        "measured": {name: item.to_dict() for name, item in measured.items()},
        "loss_curve": [round(loss, 6) for loss in curve],
    }


def write_base(params: Params, record: Mapping[str, Any], directory: Path = BASE_DIR,
               ) -> list[Path]:
    """Write `base.npz` and `provenance.json` into `directory` (made if missing); returns the
    paths. `record` is the provenance, whose sha256 must be the weights'."""
    weights = npz_bytes(params)
    if hashlib.sha256(weights).hexdigest() != record["sha256"]:
        raise ValueError("the provenance's sha256 is not that of these weights")
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "base.npz", directory / "provenance.json"]
    paths[0].write_bytes(weights)
    paths[1].write_bytes(json_bytes(record))
    return paths


def load_base(directory: Path = BASE_DIR) -> tuple[Params, PretrainConfig, dict[str, Any]]:
    """The committed base: its weights (in the order written), its config and its provenance."""
    record = json.loads((directory / "provenance.json").read_text(encoding="utf-8"))
    with np.load(directory / "base.npz", allow_pickle=False) as archive:
        params = {name: archive[name] for name in archive.files}
    return params, PretrainConfig.from_dict(record["config"]), record


def check_base(directory: Path = BASE_DIR, steps: int = CHECK_STEPS) -> list[str]:
    """Problems with the committed base, one line each (none: it is what its provenance says):
    the weights' sha256, each array's shape and dtype against the config, and the first
    `steps` losses of a run from the recorded seed against the recorded curve (within
    `CHECK_RTOL`). About a second."""
    params, config, record = load_base(directory)
    problems = []
    digest = hashlib.sha256((directory / "base.npz").read_bytes()).hexdigest()
    if digest != record["sha256"]:
        problems.append(f"base.npz: sha256 {digest[:16]}, provenance says "
                        f"{record['sha256'][:16]}")
    expected = init_params(config.model, np.random.default_rng(0))
    if list(params) != list(expected):
        problems.append(f"base.npz: arrays {sorted(params)}, the config needs "
                        f"{sorted(expected)}")
    for name, array in expected.items():
        if name in params and (params[name].shape != array.shape
                               or params[name].dtype != array.dtype):
            problems.append(f"base.npz: {name} is {params[name].dtype}{params[name].shape}, "
                            f"the config needs {array.dtype}{array.shape}")
    _, curve = pretrain(config, np.random.default_rng(config.seed), steps=steps)
    recorded = record["loss_curve"][:steps]
    if not np.allclose(curve, recorded, rtol=CHECK_RTOL, atol=0.0):
        problems.append(f"the losses of the first {steps} step(s) from seed {config.seed} differ "
                        f"from the recorded curve: {np.round(curve, 6).tolist()} vs {recorded}")
    return problems
