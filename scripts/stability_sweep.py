"""Which step sizes and KL coefficients keep Loop C on tokens stable? A sweep over β × lr × seed.

For every (β, lr) pair, the token learner of `course.learn` is trained on the strict reward from
each seed, and the last 10 steps' fresh samples give its final pass@1 and KL to the reference.
A pair is called stable when the seeds agree and none falls: every seed ends at or above where
the reference starts (pass@1 0.42, a little under its 0.446 on the dev split, for one batch's
noise), the seeds' final pass@1 lie within 0.10 of each other, and their final KL within a
factor of 2 or, where the KLs are a few hundredths of a nat (a ratio of tiny numbers measures
noise), within 0.05 nats of each other. The table is what `LearnConfig.lr` advertises
(`course.learn.STABLE_BETA_LR`).

    .venv/bin/python scripts/stability_sweep.py                 # 6 β x 5 lr x 10 seeds, ~5 min
    .venv/bin/python scripts/stability_sweep.py --steps 50 --seeds 3

The table of the default sweep is kept in scripts/stability_sweep.txt (Milestone 3, part 2,
shows it), written by `--out scripts/stability_sweep.txt`; the same command writes the same
bytes.
"""

from __future__ import annotations

import argparse
import warnings
from concurrent.futures import ProcessPoolExecutor
from itertools import product
from pathlib import Path

import numpy as np

from course.learn import LearnConfig, UnstableConfigWarning, train

BETAS = (0.0, 0.05, 0.2, 0.5, 1.0, 2.0)
LRS = (0.3, 1.0, 3.0, 10.0, 30.0)
LAST = 10
FLOOR = 0.42
SPREAD = 0.10
KL_FACTOR = 2.0
KL_FLOOR = 0.05


def final(job: tuple[float, float, int, int]) -> tuple[float, float]:
    """(pass@1, KL) averaged over the last `LAST` steps of one run."""
    beta, lr, seed, steps = job
    with warnings.catch_warnings():      # outside the stable region on purpose
        warnings.simplefilter("ignore", UnstableConfigWarning)
        config = LearnConfig(beta=beta, lr=lr, steps=steps, seed=seed)
    logs = train(config, np.random.default_rng(seed)).logs[-LAST:]
    return (float(np.mean([e.pass_at_1 for e in logs])), float(np.mean([e.kl for e in logs])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    jobs = [(b, lr, s, args.steps) for b, lr, s in product(BETAS, LRS, range(args.seeds))]
    with ProcessPoolExecutor(2) as pool:
        results = dict(zip(jobs, pool.map(final, jobs), strict=True))
    lines = [f"strict reward, {args.steps} steps, seeds 0-{args.seeds - 1}; final = mean of "
             f"the last {LAST} steps;", "median [min, max] over seeds",
             f"{'beta':>5} {'lr':>5}  {'final pass@1':<22} {'final KL (nats)':<22} verdict"]
    for beta, lr in product(BETAS, LRS):
        runs = np.array([results[(beta, lr, s, args.steps)] for s in range(args.seeds)])
        p, kl = runs[:, 0], runs[:, 1]
        stable = (p.min() >= FLOOR and p.max() - p.min() <= SPREAD
                  and kl.max() <= max(KL_FACTOR * kl.min(), kl.min() + KL_FLOOR))
        lines.append(f"{beta:>5} {lr:>5}  {np.median(p):.3f} [{p.min():.3f}, {p.max():.3f}]  "
                     f"{np.median(kl):6.3f} [{kl.min():.3f}, {kl.max():.3f}]  "
                     f"{'stable' if stable else 'UNSTABLE'}")
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
