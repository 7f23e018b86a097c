"""Plots of bound, truth (with its interval) and companion lower bounds along each sweep, and beneath each the
tightness bound/truth (Agg, deterministic; SVG only: the HTML and the Markdown both show it)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend is chosen first
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.font_manager import FontProperties, findfont, get_font  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    FuncFormatter,
    Locator,
    LogLocator,
    MaxNLocator,
    ScalarFormatter,
)
from matplotlib.transforms import Bbox  # noqa: E402

from verify.reporting.svg_compact import compact_svg  # noqa: E402

RC = {
    "svg.hashsalt": "verify-report",  # fixed ids in the SVG
    "svg.fonttype": "none",  # text as text (a third of the size of glyph paths)
    "font.size": 9,
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],  # each SVG text names these, not matplotlib's 13
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
}
SVG_META = {"Date": None, "Creator": None}
AXIS_LABEL = {"K": "K (iterations)", "alpha": "Rényi order α", "n": "n (dataset size)"}  # plain text: no mathtext
COLOURS = {"bound": "#1f5fa8", "truth": "#222222", "band": "#9a9a9a", "violated": "#c62828"}
COMPANION_COLOURS = ("#2e7d32", "#8e24aa", "#ef6c00")
ALPHA_TICKS = (1.5, 2, 4, 8, 16, 32, 64)
MAX_DECADES = 40  # a truth that explodes (e.g. an unstable step size) leaves the plot instead of flattening it


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _power_of_ten(value: float, _pos: int | None = None) -> str:
    """Tick labels like 10³ in plain text (mathtext parsing dominates the drawing time otherwise)."""
    if value <= 0:
        return ""
    exponent = math.log10(value)
    if abs(exponent - round(exponent)) > 1e-9:
        return f"{value:g}"
    return "10" + str(round(exponent)).translate(_SUPERSCRIPT)


LOG_LABELS = FuncFormatter(_power_of_ten)
PLAIN_LABELS = FuncFormatter(lambda v, _pos: f"{v:.3g}")
IN_VIEW_SLACK = 1e-6  # of the axis span (in its scale): matplotlib draws a tick within 1e-10 of it


class InView(Locator):
    """`inner`'s ticks, less those matplotlib would not draw (beyond the view interval, in the axis's scale): a log
    locator returns a decade or more beyond each end, and matplotlib builds a tick (two lines, two texts and a grid
    line) for every location before it leaves those out, a seventh of a figure's drawing time. Only for locators
    whose labels are formatted one value at a time (the ticks drawn and their labels are the same)."""

    def __init__(self, inner: Locator):
        self.inner = inner

    def set_axis(self, axis) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def __call__(self):
        locs = np.asarray(self.inner(), dtype=float)
        if locs.size == 0:
            return locs
        scale = self.axis.get_transform()
        lo, hi = sorted(scale.transform(np.asarray(self.axis.get_view_interval(), dtype=float)))
        with np.errstate(divide="ignore", invalid="ignore"):
            at = scale.transform(locs)
        slack = IN_VIEW_SLACK * (hi - lo)
        return locs[~((at < lo - slack) | (at > hi + slack))]  # NaN (a log of <= 0) kept: matplotlib decides it

    def tick_values(self, vmin: float, vmax: float):
        return self.inner.tick_values(vmin, vmax)


def log_ticks(axis, lo: float, hi: float) -> None:
    """Major ticks with labels on a log axis of any span: powers of ten over two decades or more, 1-2-5 steps over
    less, evenly spaced plain numbers below two thirds of a decade (a log locator alone left such axes with one
    labelled tick or none)."""
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 0.0
    if decades >= 2:
        axis.set_major_locator(InView(LogLocator(numticks=6)))
        axis.set_major_formatter(LOG_LABELS)
    elif decades >= 2 / 3:
        axis.set_major_locator(InView(LogLocator(subs=(1.0, 2.0, 5.0), numticks=12)))
        axis.set_major_formatter(PLAIN_LABELS)
    else:  # as many digits as the ticks' spacing needs (1.005 is not shown as 1)
        axis.set_major_locator(MaxNLocator(nbins=4, min_n_ticks=2))
        axis.set_major_formatter(ScalarFormatter(useOffset=False))


def _floats(values: Sequence) -> list[float]:
    """Floats with None, infinities and values beyond 1e300 as NaN (not drawn)."""
    out = [math.nan if v is None else float(v) for v in values]
    return [v if math.isfinite(v) and abs(v) < 1e300 else math.nan for v in out]


def _log_limits(values: list[float], claims: list[float]) -> tuple[float, float]:
    """y limits covering `values`, at most MAX_DECADES wide and always showing the bound (`claims`)."""
    lo, hi = min(values) / 1.5, max(values) * 1.5
    if claims and math.log10(hi / lo) > MAX_DECADES:
        c_lo, c_hi = min(claims) / 1.5, max(claims) * 1.5
        room = 10 ** max((MAX_DECADES - math.log10(c_hi / c_lo)) / 2, 1)
        lo, hi = max(lo, c_lo / room), min(hi, c_hi * room)
    return lo, hi


def _panel(ax, sw: dict, ylabel: str) -> bool:
    """Draw one sweep's bound, truth and companions; return whether its y axis is logarithmic (no negative values)."""
    x, bound, truth = _floats(sw["values"]), _floats(sw["bound"]), _floats(sw["truth"])
    lo, hi = _floats(sw["truth_lower"]), _floats(sw["truth_upper"])
    ax.plot(x, bound, color=COLOURS["bound"], linewidth=2.2, marker="o", markersize=3, label="bound")
    if sw["method"] == ["exact"]:
        ax.plot(x, truth, color=COLOURS["truth"], linewidth=1.2, label="truth (exact)")
    else:  # an estimate: its confidence interval as a band and error bars
        ax.fill_between(x, lo, hi, color=COLOURS["band"], alpha=0.35, linewidth=0, label="truth interval")
        err = [[t - a for t, a in zip(truth, lo, strict=True)], [b - t for t, b in zip(truth, hi, strict=True)]]
        ax.errorbar(x, truth, yerr=err, fmt="none", ecolor=COLOURS["truth"], elinewidth=0.8, capsize=2)
        ax.plot(x, truth, color=COLOURS["truth"], linewidth=1.2, label="truth (" + ", ".join(sw["method"]) + ")")
    series = [*bound, *truth]
    for colour, (cid, vals) in zip(COMPANION_COLOURS, sorted(sw["companions"].items()), strict=False):
        ys = _floats(vals)
        ax.plot(x, ys, color=colour, linestyle="--", linewidth=1.2, label=f"lower: {cid.split('.', 1)[-1]}")
        series += ys
    bad = [i for i, v in enumerate(sw["verdict"]) if v == "VIOLATED"]
    if bad:
        ax.plot([x[i] for i in bad], [bound[i] for i in bad], linestyle="none", marker="x", markersize=6,
                color=COLOURS["violated"], markeredgewidth=1.6, label="violated (float filter)")
    ax.axvline(float(sw["base"][sw["parameter"]]), color="#777777", linestyle=":", linewidth=1,
               label="base point")
    ax.set_xscale("log")
    ax.set_ylabel(ylabel)
    finite = [v for v in series if math.isfinite(v)]
    positive = bool(finite) and min(finite) >= 0 and max(finite) > 0
    if positive:  # zeros (e.g. a truth of 0) are left out of a log scale rather than forcing a linear one
        ax.set_yscale("log", nonpositive="mask")
        y_lo, y_hi = _log_limits([v for v in finite if v > 0], [v for v in bound if v > 0])
        ax.set_ylim(y_lo, y_hi)
        log_ticks(ax.yaxis, y_lo, y_hi)
    _x_ticks(ax, sw, x)
    ax.minorticks_off()  # keeps the figures small and fast to draw
    return positive


def _x_ticks(ax, sw: dict, x: list[float]) -> None:
    finite = [v for v in x if math.isfinite(v) and v > 0]
    if sw["parameter"] == "alpha" and sum(min(finite) <= t <= max(finite) for t in ALPHA_TICKS) >= 2:
        ax.xaxis.set_major_locator(InView(FixedLocator(ALPHA_TICKS)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    elif finite:
        log_ticks(ax.xaxis, min(finite), max(finite))


def _ratio_panel(ax, sw: dict) -> None:
    """bound / truth along the sweep (the tightness), with the line bound = truth; where the truth is 0 or either
    side is not finite, no point."""
    x = _floats(sw["values"])
    ratio = [b / t if math.isfinite(b) and math.isfinite(t) and t > 0 and b > 0 else math.nan
             for b, t in zip(_floats(sw["bound"]), _floats(sw["truth"]), strict=True)]
    ax.set_xscale("log")
    ax.axhline(1.0, color=COLOURS["truth"], linewidth=0.8)
    ax.plot(x, ratio, color=COLOURS["bound"], linewidth=1.6, marker="o", markersize=2.5, label="bound / truth")
    shown = [v for v in ratio if math.isfinite(v)]
    if shown:
        lo, hi = min(min(shown), 1.0) / 1.2, max(max(shown), 1.0) * 1.2
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        log_ticks(ax.yaxis, lo, hi)
    ax.set_ylabel("bound / truth")
    ax.set_xlabel(AXIS_LABEL.get(sw["parameter"], sw["parameter"]))
    _x_ticks(ax, sw, x)
    ax.minorticks_off()


def plot_sweeps(sweeps: Sequence[dict], title: str, ylabel: str, stem: Path) -> list[Path]:
    """Write `stem`.svg: one column per sweep (as in results.json), the values above and bound/truth beneath;
    return its path."""
    with plt.rc_context(RC), np.errstate(over="ignore"):  # log axes spanning ~300 decades overflow harmlessly
        fig = sweep_figure(sweeps, title, ylabel, kept=True)
        svg = stem.parent / f"{stem.name}.svg"
        text = io.StringIO()
        fig.savefig(text, format="svg", metadata=SVG_META)
    svg.write_text(compact_svg(text.getvalue()), encoding="utf-8")
    return [svg]


_MARGINS = ("left", "right", "bottom", "top", "wspace", "hspace")
_KEPT: dict[int, tuple[Figure, np.ndarray, dict[str, float]]] = {}  # this process's figures, by number of sweeps


HEIGHT = 4.6  # inches, with a title of one line
TITLE_SIZE = 10  # points
TITLE_LINE = TITLE_SIZE * 1.2 / 72  # inches: matplotlib's line spacing
TITLE_TOP = 0.02 * HEIGHT  # inches above the title
TITLE_ROOM = 0.09 * HEIGHT  # inches above the Axes for a title of one line
TITLE_RIGHT = 0.12  # inches left free right of the longest title line
TITLE_SLACK = 0.96  # of the width measured here: a browser's font (a fallback glyph) may be a little wider


def _size(columns: int) -> tuple[float, float]:
    return 3.9 * columns + 0.4, HEIGHT


_ADVANCE: dict[str, float] = {}  # points: each character's advance at TITLE_SIZE in RC's font


def _width(text: str) -> float:
    """`text`'s width in points at TITLE_SIZE: the sum of its characters' advances (matplotlib's layout kerns a
    little tighter). Call it inside plt.rc_context(RC)."""
    missing = set(text) - _ADVANCE.keys()
    if missing:
        font = get_font(findfont(FontProperties(size=TITLE_SIZE)))
        font.set_size(TITLE_SIZE, 72)  # at 72 dpi a pixel is a point
        _ADVANCE.update((c, font.load_char(ord(c)).linearHoriAdvance / 65536) for c in missing)
    return sum(_ADVANCE[c] for c in text)


def title_lines(title: str, width: float) -> list[str]:
    """`title` broken at spaces into the fewest lines (greedily) that fit a figure `width` inches wide at TITLE_SIZE
    in matplotlib's font (the SVG names the same font first); a word wider than a line is cut between characters.
    Call it inside plt.rc_context(RC)."""
    room = (width * (1 - 0.01) - TITLE_RIGHT) * 72 * TITLE_SLACK  # points: the title starts at 0.01 of the width
    pieces = []
    for word in title.split():
        while _width(word) > room and len(word) > 1:
            cut = max([k for k in range(1, len(word)) if _width(word[:k]) <= room], default=1)
            pieces.append(word[:cut])
            word = word[cut:]
        pieces.append(word)
    lines: list[str] = []
    for piece in pieces:
        if lines and _width(f"{lines[-1]} {piece}") <= room:
            lines[-1] = f"{lines[-1]} {piece}"
        else:
            lines.append(piece)
    return lines or [""]


def _new_figure(columns: int) -> tuple[Figure, np.ndarray]:
    """Two rows of Axes (values, and bound/truth beneath), one column per sweep, on an Agg canvas (outside pyplot:
    nothing to close)."""
    fig = Figure(figsize=_size(columns))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, columns, squeeze=False, gridspec_kw={"height_ratios": (2.2, 1)}, sharex="col")
    return fig, axes


def _kept_figure(columns: int) -> tuple[Figure, np.ndarray]:
    """This process's figure of `columns` sweeps, returned to the state of a new one: what the last plot drew
    removed, scales linear, data and view limits, margins and colour cycle as created. Creating a figure (its Axes
    and their ticks) was a third of a report's drawing time; a kept figure's SVG is byte for byte a new one's
    (tests/reporting/test_plot_ticks.py). Call it inside plt.rc_context(RC), as the first figure is made there."""
    kept = _KEPT.get(columns)
    if kept is None:
        fig, axes = _new_figure(columns)
        _KEPT[columns] = fig, axes, {k: getattr(fig.subplotpars, k) for k in _MARGINS}
        return fig, axes
    fig, axes, margins = kept
    fig.set_size_inches(*_size(columns))  # a long title made the last figure taller
    fig.subplots_adjust(**margins)  # the Axes where a new figure has them while plotting: transforms round alike
    for legend in list(fig.legends):
        legend.remove()
    for ax in axes.flat:
        for artist in [*ax.lines, *ax.collections]:
            artist.remove()
        ax.containers.clear()
        ax.set_prop_cycle(None)
        ax.set_xscale("linear")
        ax.set_yscale("linear")
        ax.dataLim = Bbox.null()
        ax.ignore_existing_data_limits = True
        ax.set_xlim(0, 1, auto=True)
        ax.set_ylim(0, 1, auto=True)
        ax.set_xlabel("")
        ax.set_ylabel("")
    return fig, axes


def sweep_figure(sweeps: Sequence[dict], title: str, ylabel: str, kept: bool = False) -> Figure:
    """The figure `plot_sweeps` writes (call it inside plt.rc_context(RC)): a new one, or (`kept`) this process's
    figure of that many sweeps, drawn over (valid until the next such call)."""
    fig, axes = _kept_figure(len(sweeps)) if kept else _new_figure(len(sweeps))
    for ax, ratio_ax, sw in zip(axes[0], axes[1], sweeps, strict=True):
        _panel(ax, sw, ylabel)
        _ratio_panel(ratio_ax, sw)
        ax.tick_params(labelbottom=True)  # sharex hides the upper labels; both rows keep theirs
    handles, labels = {}, []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    width = fig.get_figwidth()
    lines = title_lines(title, width)
    extra = (len(lines) - 1) * TITLE_LINE  # the title's lines beyond the first make the figure taller
    height = HEIGHT + extra
    fig.set_size_inches(width, height)
    columns = max(2, min(len(labels), int(width / 1.35)))  # about 1.35 in per legend entry: none is cut off
    rows = math.ceil(len(labels) / columns)
    fig.legend([handles[lab] for lab in labels], labels, loc="lower center", ncol=columns, frameon=False,
               fontsize=8)
    fig.suptitle("\n".join(lines), fontsize=TITLE_SIZE, x=0.01, y=1 - TITLE_TOP / height, ha="left", va="top")
    # fixed margins in inches (a tight layout would cost one more draw): the title's lines above, the x labels and
    # the legend's rows below
    fig.subplots_adjust(left=0.8 / width, right=1 - 0.15 / width, bottom=(0.5 + 0.2 * rows) / height,
                        top=1 - (TITLE_ROOM + extra) / height, wspace=0.3 * 3.9 / 3.4, hspace=0.35)
    return fig
