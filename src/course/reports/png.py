"""Plots as reproducible PNG bytes: the same figure gives the same bytes on every machine."""

from __future__ import annotations

import io
from typing import Any


def figure_png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes that are identical on every run (no timestamp, no
    software tag), then closes the figure. Every plot in a run or on the site goes through
    here."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
