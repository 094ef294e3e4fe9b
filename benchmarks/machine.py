"""What the machine spent: the benchmarks' shared measure of CPU work."""

from __future__ import annotations

import os
from pathlib import Path


def busy_cpu_seconds() -> float:
    """CPU-seconds every core of the machine has spent busy since boot (/proc/stat's first
    line: all but idle and iowait), so that the difference over a command says how much of
    the machine it used, its processes' children and grandchildren included: on two cores the
    wall time cannot drop below half of it."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(value) for value in fields]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
