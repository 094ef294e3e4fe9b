"""How fast is the numpy transformer of `course.tiny_lm`? One training step, one RL step.

Run:  .venv/bin/python benchmarks/bench_tiny_lm_step.py

For the default `ModelConfig` (2 layers, width 64, 4 heads, 32 positions), in float64 and in
float32, with numpy using the machine's threads as it does by default:

1. a pre-training step: `language_model_loss` (forward and backward) on 64 sequences of 24
   characters, then `adam_step`;
2. sampling 64 completions of up to 12 characters after 6-character prompts (`12+34=`), as
   `sample` does it (reading each new token only, with the keys and values of the positions
   before kept), and, for comparison, the 12 forward passes that reading every prefix whole
   would cost instead;
3. an RL step: 8 completions for each of 32 prompts (256 in all), each scored by
   `course.scorer.score`, the reference's token log-probabilities (one forward pass, what a KL
   leash needs), then `policy_gradient` and `adam_step`.

The freshly initialised model almost never writes `EOT`, so every completion runs to its 12
characters: the slowest case. Timing: `time.perf_counter` around repeated calls after one
warm-up call, best of 3.

Targets (PASS/FAIL at the end): 600 pre-training steps within 180 s (issue 33: pre-training in
3 minutes or less), an RL step within 1 s. No test times anything: these are measurements.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from course.scorer import score
from course.tiny_lm import (
    AdamConfig,
    ModelConfig,
    Params,
    adam_init,
    adam_step,
    count_params,
    encode_prompts,
    forward,
    init_params,
    language_model_loss,
    policy_gradient,
    sample,
    token_log_probs,
)

BATCH, LENGTH = 64, 24
PROMPTS, GROUP, MAX_NEW = 32, 8, 12
PRETRAIN_STEPS, TARGET_PRETRAIN_S, TARGET_RL_STEP_S = 600, 180.0, 1.0


def best_seconds(run: Callable[[], object], calls: int, repeats: int = 3) -> float:
    """Seconds per call: the best of `repeats` timings of `calls` calls, after one warm-up."""
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def read_every_prefix(params: Params, config: ModelConfig, prompt_ids: np.ndarray) -> None:
    """What sampling costs without kept keys and values: `MAX_NEW` forward passes over the
    growing sequences, all rows to the end (greedy, to leave out the drawing)."""
    tokens = prompt_ids
    for _ in range(MAX_NEW):
        logits, _ = forward(params, config, tokens)
        tokens = np.concatenate([tokens, logits[:, -1].argmax(axis=1)[:, None]], axis=1)


def timings(config: ModelConfig) -> dict[str, float]:
    rng = np.random.default_rng(0)
    params = init_params(config, rng)
    reference = dict(params)
    adam, settings = adam_init(params), AdamConfig()
    tokens = rng.integers(0, config.vocab_size, (BATCH, LENGTH))
    mask = np.ones(tokens.shape, dtype=bool)
    mask[:, 0] = False

    def pretrain_step() -> None:
        _, grads = language_model_loss(params, config, tokens, mask)
        adam_step(params, grads, adam, settings)

    pairs = rng.integers(10, 100, (PROMPTS, 2))
    prompts = [f"{a}+{b}=" for a, b in pairs.tolist()]
    examples = [{"prompt": p, "expected_answer": int(a + b)}
                for p, (a, b) in zip(prompts, pairs.tolist(), strict=True)]
    prompt_ids = np.repeat(encode_prompts(prompts), GROUP, axis=0)

    def rl_step() -> None:
        samples = sample(params, config, prompt_ids, rng, max_new=MAX_NEW)
        rewards = np.array([score(examples[i // GROUP], text)["reward"]
                            for i, text in enumerate(samples.texts)])
        token_log_probs(reference, config, samples.tokens, samples.mask)
        advantages = rewards - rewards.mean()
        _, grads = policy_gradient(params, config, samples.tokens,
                                   advantages[:, None] * samples.mask)
        adam_step(params, grads, adam, settings)

    return {
        "pretrain": best_seconds(pretrain_step, 10),
        "sample": best_seconds(lambda: sample(params, config, prompt_ids[:BATCH], rng,
                                              max_new=MAX_NEW), 5),
        "recompute": best_seconds(lambda: read_every_prefix(params, config,
                                                            prompt_ids[:BATCH]), 5),
        "rl": best_seconds(rl_step, 3),
    }


def main() -> int:
    base = ModelConfig()
    print(f"default model: {base.n_layer} layers, width {base.n_embd}, {base.n_head} heads, "
          f"{base.block_size} positions, vocabulary {base.vocab_size}: "
          f"{count_params(init_params(base, np.random.default_rng(0))):,} parameters\n")
    results = {}
    print(f"{'seconds per call':<48} {'float64':>9} {'float32':>9}")
    for dtype in ("float64", "float32"):
        config = ModelConfig(dtype=dtype)
        results[dtype] = timings(config)
    rows = [
        ("pretrain", f"pre-training step, {BATCH} x {LENGTH} chars + Adam"),
        ("sample", f"sample {BATCH} completions of <= {MAX_NEW} chars"),
        ("recompute", "  the same, reading every prefix whole"),
        ("rl", f"RL step, {PROMPTS} prompts x {GROUP}, score + backward"),
    ]
    for key, label in rows:
        print(f"  {label:<46} {results['float64'][key]:>9.4f} {results['float32'][key]:>9.4f}")
    print(f"  {f'{PRETRAIN_STEPS} pre-training steps':<46} "
          f"{PRETRAIN_STEPS * results['float64']['pretrain']:>9.1f} "
          f"{PRETRAIN_STEPS * results['float32']['pretrain']:>9.1f}")
    print()
    ok = True
    for dtype, result in results.items():
        pretrain = PRETRAIN_STEPS * result["pretrain"]
        checks = [(f"{PRETRAIN_STEPS} pre-training steps <= {TARGET_PRETRAIN_S:.0f} s",
                   pretrain <= TARGET_PRETRAIN_S, f"{pretrain:.1f} s"),
                  (f"RL step <= {TARGET_RL_STEP_S:.0f} s", result["rl"] <= TARGET_RL_STEP_S,
                   f"{result['rl']:.2f} s")]
        for label, passed, value in checks:
            ok &= passed
            print(f"{'PASS' if passed else 'FAIL'}  {dtype}  {label:<36} {value}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
