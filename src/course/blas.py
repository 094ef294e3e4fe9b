"""numpy's BLAS on one thread, for runs that must be the same bytes every time.

numpy's BLAS (OpenBLAS in numpy's wheels) splits a matrix product over threads, and two
threads add its terms in another order than one: the sums differ in their last bits, and a
sample drawn near a boundary flips, so a training run is no longer the same bytes from one
run to the next. Every run of the tiny transformer (`course.reports.learn_tiny`, `course
learn --model tiny-lm`) is trained on one thread, set here.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables a BLAS reads for its thread count, once, when numpy loads."""
_SET_THREADS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                "openblas_set_num_threads64_", "openblas_set_num_threads")
"""What the OpenBLAS of numpy's wheels (or another OpenBLAS) calls its thread setter."""


def one_blas_thread() -> bool:
    """Run numpy's BLAS on one thread from now on, in this process and in those it starts.

    The `course` command has loaded numpy before any subcommand runs, so setting
    `OPENBLAS_NUM_THREADS=1` here would come too late for this process: the OpenBLAS that
    numpy's wheels ship (`numpy.libs/`) is told directly, by its own setter (ctypes). Returns
    True when the BLAS was told, or numpy was started with one thread; False when neither can
    be known (another BLAS build): runs are then slower and may differ in their bytes."""
    started_with_one = all(os.environ.get(name) == "1" for name in BLAS_THREADS[:2])
    for name in BLAS_THREADS:
        os.environ[name] = "1"                  # for the processes this one starts
    for library in sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*")):
        loaded = ctypes.CDLL(str(library))      # already loaded by numpy: the same library
        setter = next((getattr(loaded, name) for name in _SET_THREADS
                       if hasattr(loaded, name)), None)
        if setter is not None:
            setter(1)
            return True
    return started_with_one
