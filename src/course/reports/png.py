"""Plots as reproducible PNG bytes, in one course-wide style a student can read.

Every plot of the course, a run's or a concept figure of the site, is drawn under
`course_style()` (the `styled` decorator) on a figure from `new_figure()`, and leaves through
`figure_png`, which writes it at `DPI` with no timestamp and no software tag, so the same
figure gives the same bytes on every run.

The sizes are set for the page that shows the plot: at a 1280 px window the content column is
`COLUMN_PX` wide and a wider image is scaled down to it. A figure `WIDTH` inches wide is drawn
at twice the column's pixels (sharp on a 2x screen) and shown at exactly the column, where
one point of type is 100/72 px; the smallest type of the style (`SMALL_PT`) is then about
13 px. `figure_png` measures the smallest text the figure really draws and records it in the
PNG (`SMALLEST_TEXT_KEY`, in pixels of the image at its natural size), so that the tests and
the browser can check it against `SMALLEST_TEXT_PX` without trusting this paragraph.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast

DPI = 200
"""Pixels per inch of every saved plot: twice the 100 of a 1x screen."""
COLUMN_PX = 688
"""Width of the site's content column, in CSS px, at a 1280 px window."""
WIDTH = COLUMN_PX / 100
"""The figures' width in inches (6.88): `DPI` times it is twice the column."""
SMALLEST_TEXT_PX = 12.0
"""No text of a plot may be shown smaller than this, in CSS px, at a 1280 px window."""
SMALLEST_TEXT_KEY = "course:smallest-text-px"
"""The PNG text entry that holds the smallest text a figure draws, in image pixels."""

PALETTE_COLOURS = 256
"""The most colours a saved plot keeps (a PNG palette): enough for anti-aliased lines and
text on white."""

SMALL_PT = 9.5
"""The smallest type of the style (tick labels, legends, annotations), in points."""
STYLE: dict[str, Any] = {
    "font.size": 10.0,
    "axes.titlesize": 11.0,
    "axes.labelsize": 10.0,
    "figure.titlesize": 11.5,
    "xtick.labelsize": SMALL_PT,
    "ytick.labelsize": SMALL_PT,
    "legend.fontsize": SMALL_PT,
    "legend.title_fontsize": SMALL_PT,
    "mathtext.fontset": "dejavusans",
    "lines.linewidth": 1.8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.framealpha": 0.9,
    # Opaque white paper: the site inverts figures in dark mode, which then gives dark paper.
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
}
"""The course's matplotlib style (rcParams), applied by `course_style()`."""

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def course_style() -> Iterator[None]:
    """Draw under the course's style (`STYLE`); the caller's rcParams come back afterwards."""
    import matplotlib

    with matplotlib.rc_context(cast(Any, STYLE)):   # matplotlib types rcParams' keys
        yield


def styled(draw: Callable[P, R]) -> Callable[P, R]:
    """Decorates a function that draws a figure: its text and lines take the course's style.
    (matplotlib reads rcParams when an artist is made, so the whole drawing must be inside.)"""

    @functools.wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        with course_style():
            return draw(*args, **kwargs)

    return drawn


def plain(text: str) -> str:
    """`text` shown as it is, never as mathtext: its dollar signs are escaped (for names from
    a config or a run, put in a label beside `$...$` maths)."""
    return text.replace("$", r"\$")


def new_figure(height: float, width: float = WIDTH) -> Any:
    """A figure `width` x `height` inches on opaque white paper, not tied to pyplot, laid out
    when drawn (constrained layout: labels, colour bars and a legend outside the axes keep
    their room)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), facecolor="white", layout="constrained")


def drawn_once(fig: Any, dpi: float = DPI) -> tuple[Any, float]:
    """Draw `fig` once, at `dpi`, as `savefig` would: its pixels (a PIL image, RGBA) and the
    size of the smallest text it draws, in pixels of that image (the font's size: a
    subscript of mathtext is set smaller, as in print). An invisible or empty text, or one
    inside an axis that is switched off, is never drawn, so it is not counted. `ValueError`
    if it draws no text. (Drawn once: measuring the text in a draw of its own cost as much
    as the image.)"""
    from matplotlib.backends.backend_agg import RendererAgg
    from PIL import Image

    class Recording(RendererAgg):
        """Matplotlib's Agg renderer, noting the size of each text it draws."""

        def __init__(self, width: int, height: int, dpi: float) -> None:
            super().__init__(width, height, dpi)
            self.sizes: list[float] = []

        def draw_text(self, gc: Any, x: float, y: float, s: str, prop: Any, angle: float,
                      ismath: Any = False, mtext: Any = None) -> Any:
            if s.strip():
                self.sizes.append(float(prop.get_size_in_points()))
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)

    shown_at = fig.dpi
    fig.dpi = dpi
    try:
        # whole pixels as matplotlib's own canvas counts them: 4.6 in x 200 is 919.999...
        width, height = (int(size + 1e-8) for size in fig.bbox.max)
        renderer = Recording(width, height, dpi)
        fig.draw(renderer)
    finally:
        fig.dpi = shown_at
    if not renderer.sizes:
        raise ValueError("the figure draws no text")
    pixels = renderer.buffer_rgba()                 # (height, width, 4) bytes
    image = Image.frombuffer("RGBA", (pixels.shape[1], pixels.shape[0]), pixels, "raw",
                             "RGBA", 0, 1).copy()
    return image, min(renderer.sizes) * dpi / 72


def figure_png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes at `DPI` that are identical on every run, then closes
    the figure. Every plot in a run or on the site goes through here.

    The image is opaque (no alpha channel) and stored with a palette of at most
    `PALETTE_COLOURS` colours, which halves the file against full colour at no visible cost;
    its only text entry is the smallest text it draws (`SMALLEST_TEXT_KEY`): no timestamp,
    no software tag, no physical size (a browser shows it by its pixels alone)."""
    from PIL import Image, PngImagePlugin

    with course_style():
        image, smallest = drawn_once(fig)
    if getattr(fig.canvas, "manager", None) is not None:      # a pyplot figure: let it go
        import matplotlib.pyplot as plt

        plt.close(fig)
    opaque = Image.alpha_composite(Image.new("RGBA", image.size, "white"),
                                   image).convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text(SMALLEST_TEXT_KEY, f"{smallest:.2f}")
    buffer = io.BytesIO()
    opaque.quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT).save(
        buffer, format="PNG", pnginfo=info, optimize=True)
    return buffer.getvalue()


# -- a figure in a lab notebook ---------------------------------------------------------------

LAB_OUTPUT_PX = 579
"""Width of a lab cell's output box, in CSS px, at a 1280 px window: the content column less
Jupyter's prompt column beside it (measured in the browser; tests/site/test_labs.py)."""
LAB_WIDTH = LAB_OUTPUT_PX / 100
"""A lab figure's width in inches (5.79): drawn at twice its box's pixels and shown at the box's
width (584 px: an HTML output's box is 5 px wider than a printed one's), as `WIDTH` is for the
column, so that its smallest text is shown at 13.3 px."""


@dataclass(frozen=True, repr=False)
class LabFigure:
    """A numbered figure as a lab notebook shows it: the PNG of `figure_png`, inline, with its
    alt text and a caption "Figure N. ...".

    Jupyter shows its HTML (`_repr_html_`): a `<figure>` with the markup pymdownx.blocks.caption
    gives a lesson's figure (an id that ends in the number, "Figure N." in a `caption-prefix`
    span), so that the site styles both alike and its tests read both alike. An image output
    of its own would carry no alt text: nbconvert writes a placeholder on it. Printed (a lab
    run as a script), it is its caption."""

    png: bytes
    number: int
    caption: str
    alt: str

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        return (f'<figure id="__figure-caption_{self.number}">'
                f'<img alt="{html.escape(self.alt)}" src="data:image/png;base64,{data}">'
                f'<figcaption><p><span class="caption-prefix">Figure {self.number}.</span> '
                f"{html.escape(self.caption)}</p></figcaption></figure>")

    def __repr__(self) -> str:
        return textwrap.fill(f"Figure {self.number}. {self.caption}", 79)


def show_figure(fig: Any, number: int, caption: str, alt: str) -> None:
    """Show `fig` in a lab as Figure `number`, with its caption and its alt text, which says
    what the plot shows to a reader who cannot see it (then the figure is closed)."""
    from IPython.display import display

    display(LabFigure(figure_png(fig), number, caption, alt))
