"""Plots of bound, truth (with its interval) and companion lower bounds along each sweep (Agg, deterministic)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend is chosen first
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator  # noqa: E402

RC = {
    "svg.hashsalt": "verify-report",  # fixed ids in the SVG
    "svg.fonttype": "none",  # text as text (a third of the size of glyph paths)
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
}
PNG_META = {"Software": None}
SVG_META = {"Date": None, "Creator": None}
AXIS_LABEL = {"K": "$K$ (iterations)", "alpha": r"Rényi order $\alpha$", "n": "$n$ (dataset size)"}
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
    """Draw one sweep; return whether its y axis is logarithmic (no negative values)."""
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
                color=COLOURS["violated"], markeredgewidth=1.6, label="violated")
    ax.axvline(float(sw["base"][sw["parameter"]]), color="#777777", linestyle=":", linewidth=1,
               label="base point")
    ax.set_xscale("log")
    ax.set_xlabel(AXIS_LABEL.get(sw["parameter"], sw["parameter"]))
    ax.set_ylabel(ylabel)
    finite = [v for v in series if math.isfinite(v)]
    positive = bool(finite) and min(finite) >= 0 and max(finite) > 0
    if positive:  # zeros (e.g. a truth of 0) are left out of a log scale rather than forcing a linear one
        ax.set_yscale("log", nonpositive="mask")
        ax.set_ylim(*_log_limits([v for v in finite if v > 0], [v for v in bound if v > 0]))
        ax.yaxis.set_major_locator(LogLocator(numticks=6))
        ax.yaxis.set_major_formatter(LOG_LABELS)
    if sw["parameter"] == "alpha":
        ax.xaxis.set_major_locator(FixedLocator(ALPHA_TICKS))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    else:
        ax.xaxis.set_major_locator(LogLocator(numticks=6))
        ax.xaxis.set_major_formatter(LOG_LABELS)
    ax.minorticks_off()  # keeps the figures small and fast to draw
    return positive


def plot_sweeps(sweeps: Sequence[dict], title: str, ylabel: str, stem: Path) -> list[Path]:
    """Write `stem`.png and `stem`.svg with one panel per sweep (as in results.json); return the paths."""
    with plt.rc_context(RC), np.errstate(over="ignore"):  # log axes spanning ~300 decades overflow harmlessly
        fig, axes = plt.subplots(1, len(sweeps), figsize=(3.9 * len(sweeps) + 0.4, 3.3), squeeze=False)
        for ax, sw in zip(axes[0], sweeps, strict=True):
            _panel(ax, sw, ylabel)
        handles, labels = {}, []
        for ax in axes[0]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in handles:
                    handles[lab] = h
                    labels.append(lab)
        fig.legend([handles[lab] for lab in labels], labels, loc="lower center", ncol=min(len(labels), 6),
                   frameon=False, fontsize=8)
        fig.suptitle(title, fontsize=10, x=0.01, ha="left")
        width = fig.get_figwidth()  # fixed margins in inches: a tight layout would cost one more draw
        fig.subplots_adjust(left=0.8 / width, right=1 - 0.15 / width, bottom=0.27, top=0.88, wspace=0.3 * 3.9 / 3.4)
        png, svg = stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.svg"
        fig.savefig(png, metadata=PNG_META)  # PIL's optimize: 3% smaller, 40% slower to write
        fig.savefig(svg, metadata=SVG_META)
        plt.close(fig)
    return [png, svg]
