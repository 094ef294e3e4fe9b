"""Regenerate the tiny transformer's pre-trained base, data/tiny_lm/ (`course.tiny_pretrain`).

    python scripts/pretrain_tiny_lm.py              # rewrite data/tiny_lm/ (a minute or so)
    python scripts/pretrain_tiny_lm.py --seed 2     # rewrite data/tiny_lm/bases/seed_2/
    python scripts/pretrain_tiny_lm.py --out DIR    # write base.npz and provenance.json in DIR
    python scripts/pretrain_tiny_lm.py --check      # train again, write nothing; exit 1 if the
                                                    # committed files differ from the result

It trains `PretrainConfig()` from its seed, measures the result on fresh samples
(`measure_base`, generator seeded `MEASURE_SEED`), and writes the weights and their provenance.
numpy's BLAS runs on one thread (the variables below are set before numpy loads), so that every
sum is added in the same order and the same machine writes the same bytes every time.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before numpy loads: it reads them once, when it starts


def main() -> int:
    import numpy as np  # here, after the thread count is set

    from course import tiny_pretrain as tp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0,
                        help="pre-training seed (default 0, the lessons' base; 1 and 2 are "
                             "run_021's other bases)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder to write (default: data/tiny_lm, or "
                             "data/tiny_lm/bases/seed_S for --seed S)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the files in --out instead of writing them")
    args = parser.parse_args()
    args.out = args.out or tp.base_dir(args.seed)

    config = dataclasses.replace(tp.PretrainConfig(), seed=args.seed)
    start = time.perf_counter()
    params, curve = tp.pretrain(config, np.random.default_rng(config.seed))
    seconds = time.perf_counter() - start
    measured = tp.measure_base(params, config.model, np.random.default_rng(tp.MEASURE_SEED))
    weights = tp.npz_bytes(params)
    record = tp.provenance(config, weights, curve, measured)
    print(f"pre-trained {config.steps} steps in {seconds:.1f} s; final loss "
          f"{record['final_loss_last_10']} (mean of the last 10 steps); sha256 "
          f"{record['sha256'][:16]}")
    for name, item in measured.items():
        print(f"  {name:<16} strict pass@1 {item.strict:.3f} over {item.samples} samples of "
              f"{item.prompts} prompts")
    if args.check:
        on_disk = (args.out / "base.npz").read_bytes()
        same = on_disk == weights
        print("the committed weights are " + ("the same, byte for byte" if same else
              "DIFFERENT"))
        return 0 if same else 1
    for path in tp.write_base(params, record, args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
