"""Every plot a student sees can be read: each run's plots (runs/*/*.png, which `course runs
verify` proves are what the code draws) and each concept figure of the site. A plot records
the smallest text it draws (`figure_png` measures it), and that text is shown at least
`SMALLEST_TEXT_PX` tall in the 688 px column of a 1280 px window; the paper is opaque white,
so the site's dark-mode inversion gives dark paper; maths is set as maths."""

from __future__ import annotations

import io
import re
import struct
from functools import cache

import matplotlib
import pytest
from PIL import Image

from course.paths import RUNS_DIR
from course.reports.figures import (
    FIGURES,
    distribution_shift_data,
    distribution_shift_figure,
    gradient_connection_data,
    gradient_connection_figure,
    token_text_interface_data,
    token_text_interface_figure,
)
from course.reports.png import (
    COLUMN_PX,
    DPI,
    SMALLEST_TEXT_KEY,
    SMALLEST_TEXT_PX,
    STYLE,
    WIDTH,
    figure_png,
    new_figure,
    styled,
)

RUN_PLOTS = sorted(f"runs/{p.parent.name}/{p.name}" for p in RUNS_DIR.glob("run_*/*.png"))
CONCEPT_FIGURES = sorted(f"assets/figures/{name}" for name in FIGURES)


@cache
def plot(name: str) -> bytes:
    """The PNG bytes of a run's plot as committed, or of a concept figure as drawn."""
    if name.startswith("assets/figures/"):
        return FIGURES[name.removeprefix("assets/figures/")]()
    return (RUNS_DIR.parent / name).read_bytes()


def chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk of a PNG, in order."""
    found, at = [], 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        found.append((kind, png[at + 8:at + 8 + length]))
        at += 12 + length
    return found


def png_text(png: bytes) -> dict[str, str]:
    """The text entries (tEXt chunks) of a PNG, keyword -> text."""
    return {keyword.decode("latin-1"): text.decode("latin-1")
            for kind, data in chunks(png) if kind == b"tEXt"
            for keyword, _, text in [data.partition(b"\0")]}


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, in pixels (from its IHDR chunk)."""
    width, height = struct.unpack(">II", chunks(png)[0][1][:8])
    return width, height


def shown_text_px(smallest_px: float, width_px: float, column_px: float = COLUMN_PX) -> float:
    """How tall text of `smallest_px` image pixels is on the page at a 1280 px window: an
    image wider than the column is scaled down to it."""
    return smallest_px * min(1.0, column_px / width_px)


def test_every_run_plot_and_concept_figure_is_checked():
    assert len(RUN_PLOTS) >= 11, RUN_PLOTS
    assert "runs/run_003/bandit_ablation.png" in RUN_PLOTS
    assert len(CONCEPT_FIGURES) == 3


@pytest.mark.parametrize("name", RUN_PLOTS + CONCEPT_FIGURES)
def test_every_plot_records_its_smallest_text_and_it_reads_at_12_px(name):
    png = plot(name)
    width, _height = png_size(png)
    smallest = float(png_text(png)[SMALLEST_TEXT_KEY])
    shown = shown_text_px(smallest, width)            # in the column, computed from its width
    assert shown >= SMALLEST_TEXT_PX, f"{name}: smallest text {shown:.1f} px at 1280 px"
    assert width <= 7 * DPI, f"{name} is {width / DPI:.2f} in wide"


@pytest.mark.parametrize("name", RUN_PLOTS + CONCEPT_FIGURES)
def test_every_plot_is_opaque_white_paper_with_no_stamp(name):
    png = plot(name)
    kinds = [kind for kind, _ in chunks(png)]
    assert set(kinds) <= {b"IHDR", b"PLTE", b"tEXt", b"IDAT", b"IEND"}, kinds  # no tIME, tRNS
    colour_type = chunks(png)[0][1][9]
    assert colour_type in (2, 3), colour_type        # RGB or palette: no alpha channel
    assert list(png_text(png)) == [SMALLEST_TEXT_KEY]  # no software tag, no date
    image = Image.open(io.BytesIO(png)).convert("RGB")
    w, h = image.size
    for corner in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)]:
        assert image.getpixel(corner) == (255, 255, 255), (name, corner)


def test_the_style_reads_at_12_px_at_the_course_width():
    smallest_pt = min(STYLE[key] for key in ("font.size", "axes.labelsize", "axes.titlesize",
                                             "xtick.labelsize", "ytick.labelsize",
                                             "legend.fontsize", "legend.title_fontsize"))
    assert WIDTH * DPI == 2 * COLUMN_PX                 # twice the column: sharp on 2x screens
    assert shown_text_px(smallest_pt * DPI / 72, WIDTH * DPI) >= SMALLEST_TEXT_PX


def test_shown_size_scales_only_an_image_wider_than_the_column():
    assert shown_text_px(26.4, 2 * COLUMN_PX) == pytest.approx(13.2)
    assert shown_text_px(20.0, 600) == 20.0


def test_figure_png_measures_the_text_it_draws_and_nothing_else():
    fig = new_figure(2.0, width=3.0)
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "six points", fontsize=6)
    ax.text(0.5, 0.2, r"$\pi_{\mathrm{ref}}$ at seven", fontsize=7)
    ax.text(0.1, 0.1, "hidden", fontsize=2, visible=False)   # not drawn: not measured
    ax.text(0.1, 0.1, "  ", fontsize=1)                          # blank: not measured
    ax.tick_params(labelsize=3)
    ax.axis("off")                                               # its tick labels: not drawn
    png = figure_png(fig)
    assert png_text(png) == {SMALLEST_TEXT_KEY: f"{6 * DPI / 72:.2f}"}
    assert png_size(png) == (3 * DPI, 2 * DPI)
    fig = new_figure(2.0, width=3.0)
    fig.add_subplot().tick_params(labelsize=3)                   # tick labels drawn: counted
    assert png_text(figure_png(fig))[SMALLEST_TEXT_KEY] == f"{3 * DPI / 72:.2f}"


def test_figure_png_gives_the_same_bytes_for_the_same_figure():
    @styled
    def draw():
        fig = new_figure(3.0)
        ax = fig.add_subplot()
        ax.plot([0, 1, 2], [0.1, 0.5, 0.2], label=r"$\beta = 0.1$")
        ax.legend()
        return figure_png(fig)

    assert draw() == draw()


def test_the_style_is_undone_after_drawing():
    before = matplotlib.rcParams["font.size"], matplotlib.rcParams["legend.fontsize"]

    @styled
    def inside():
        return matplotlib.rcParams["legend.fontsize"]

    assert inside() == STYLE["legend.fontsize"]
    assert (matplotlib.rcParams["font.size"], matplotlib.rcParams["legend.fontsize"]) == before


GREEK_OR_SUBSCRIPT = re.compile(r"[πβθΣ∇]")


def test_the_concept_figures_set_their_maths_as_maths():
    """A Greek letter, a subscript or a sum is written in mathtext ($\\pi_0$), never as plain
    text (π_0)."""
    figures = [distribution_shift_figure(distribution_shift_data()),
               gradient_connection_figure(gradient_connection_data()),
               token_text_interface_figure(token_text_interface_data())]
    for fig in figures:
        for text in fig.findobj(lambda artist: hasattr(artist, "get_text")):
            outside_maths = re.sub(r"\$[^$]*\$", "", text.get_text())
            assert not GREEK_OR_SUBSCRIPT.search(outside_maths), text.get_text()
