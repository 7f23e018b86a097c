"""Every panel of a figure has labelled ticks on both axes (issue 25: 67 of 201 panels had at most one y label, 22
none: log axes spanning less than a decade with minor ticks off), for generated sweeps of any span."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402

from verify.reporting.plots import RC, sweep_figure  # noqa: E402


def _sweep(parameter: str, xs: list[float], truth: list[float], ratio: list[float]) -> dict:
    bound = [t * r for t, r in zip(truth, ratio, strict=True)]
    return {"parameter": parameter, "values": xs, "bound": bound, "truth": truth, "truth_lower": truth,
            "truth_upper": truth, "method": ["exact"], "companions": {}, "verdict": ["HOLDS"] * len(xs),
            "base": {parameter: xs[0]}}


@st.composite
def sweeps(draw):
    parameter = draw(st.sampled_from(["K", "alpha", "sigma", "eta"]))
    n = draw(st.integers(2, 12))
    x0 = draw(st.sampled_from([1.0, 1.5, 2.0, 0.01, 100.0]))
    x_span = draw(st.sampled_from([1.05, 1.5, 3.0, 10.0, 1e3]))  # from 2% of a decade to three decades
    xs = [x0 * x_span ** (i / (n - 1)) for i in range(n)]
    y0 = draw(st.sampled_from([1e-6, 0.3, 1.0, 250.0, 1e8]))
    y_span = draw(st.sampled_from([1.0, 1.01, 1.3, 4.0, 50.0, 1e6]))  # flat, narrow, wide
    truth = [y0 * y_span ** (i / (n - 1)) for i in range(n)]
    r_span = draw(st.sampled_from([1.0, 1.02, 2.0, 100.0]))
    ratio = [1.0 + 0.05 * r_span ** (i / (n - 1)) for i in range(n)]
    return _sweep(parameter, xs, truth, ratio)


def _labelled(axis, lo: float, hi: float) -> int:
    """How many major ticks inside the view carry a non-empty label."""
    ticks = axis.get_major_ticks()
    locs = axis.get_majorticklocs()
    return sum(1 for t, v in zip(ticks, locs, strict=False)
               if min(lo, hi) * (1 - 1e-9) <= v <= max(lo, hi) * (1 + 1e-9) and t.label1.get_text().strip())


@settings(max_examples=25, deadline=None, database=None)
@given(panels=st.lists(sweeps(), min_size=1, max_size=3))
def test_every_panel_has_at_least_two_labelled_ticks_on_each_axis(panels):
    with plt.rc_context(RC):
        fig = sweep_figure(panels, "test", "y")
        try:
            fig.canvas.draw()
            for ax in fig.axes:
                assert _labelled(ax.yaxis, *ax.get_ylim()) >= 2, (ax.get_ylabel(), ax.get_ylim())
                assert _labelled(ax.xaxis, *ax.get_xlim()) >= 2, (ax.get_xlabel(), ax.get_xlim())
        finally:
            plt.close(fig)


def test_a_ratio_row_sits_under_every_sweep():
    panel = _sweep("K", [1.0, 10.0, 100.0], [1.0, 2.0, 3.0], [2.0, 1.5, 1.1])
    with plt.rc_context(RC):
        fig = sweep_figure([panel, panel], "test", "y")
        try:
            ratio_axes = [ax for ax in fig.axes if ax.get_ylabel() == "bound / truth"]
            assert len(ratio_axes) == 2
            (line,) = [ln for ln in ratio_axes[0].get_lines() if ln.get_label() == "bound / truth"]
            assert [round(v, 12) for v in line.get_ydata()] == [2.0, 1.5, 1.1]  # bound / truth, independently
            low, high = ratio_axes[0].get_ylim()
            assert math.isclose(low, 1.0 / 1.2) and high >= 2.0  # the line bound = truth is inside the view
        finally:
            plt.close(fig)


def _svg(panels: list[dict]) -> bytes:
    return _drawn(panels)[0]


@settings(max_examples=8, deadline=None, database=None)
@given(panels=st.lists(sweeps(), min_size=1, max_size=2))
def test_leaving_out_the_ticks_beyond_the_view_draws_the_same_figure(panels):
    """`InView` only saves matplotlib the ticks it would not draw: the SVG is byte for byte the one drawn with the
    bare locators (matplotlib's own choice of the ticks in view is the reference)."""
    from verify.reporting import plots

    clipped = _svg(panels)
    original = plots.InView
    plots.InView = lambda inner: inner
    try:
        bare = _svg(panels)
    finally:
        plots.InView = original
    assert clipped == bare


@st.composite
def any_sweeps(draw):
    """`sweeps()` with what else a panel can hold: an estimate's interval, companions, violated points, a base
    point anywhere, values of either sign (a linear y axis)."""
    sw = draw(sweeps())
    n = len(sw["values"])
    if draw(st.booleans()):
        width = draw(st.sampled_from([0.0, 0.01, 0.5]))
        sw["truth_lower"] = [t * (1 - width) for t in sw["truth"]]
        sw["truth_upper"] = [t * (1 + width) for t in sw["truth"]]
        sw["method"] = ["monte_carlo"]
    for cid in draw(st.lists(st.sampled_from(["p.lower_a", "p.lower_b", "q.c"]), unique=True, max_size=3)):
        sw["companions"][cid] = [t * draw(st.sampled_from([0.5, 0.9, 1.0])) for t in sw["truth"]]
    if draw(st.booleans()):
        sw["verdict"] = [draw(st.sampled_from(["HOLDS", "VIOLATED"])) for _ in range(n)]
    if draw(st.booleans()):
        shift = draw(st.sampled_from([1.0, 1e3]))
        for key in ("bound", "truth", "truth_lower", "truth_upper"):
            sw[key] = [v - shift for v in sw[key]]
    sw["base"] = {sw["parameter"]: draw(st.sampled_from(sw["values"]))}
    return sw


@settings(max_examples=6, deadline=None, database=None)  # three figures each
@given(data=st.data(), columns=st.integers(1, 3))
def test_a_kept_figure_draws_what_a_new_one_draws(data, columns):
    """plot_sweeps draws over this process's figure of the same shape: the SVG after any other plot is byte for byte
    a new figure's (limits, scales, margins, legends and transforms as a new figure's)."""
    first = data.draw(st.lists(any_sweeps(), min_size=columns, max_size=columns))
    second = data.draw(st.lists(any_sweeps(), min_size=columns, max_size=columns))
    new = _drawn(second)
    _drawn(first, kept=True, title="a longer title that the second figure does not have, " * 4)  # of several lines
    kept = _drawn(second, kept=True)
    assert kept[1] == new[1]  # every Axes' data and view limits, to the last bit
    assert kept[0] == new[0]


def _drawn(panels: list[dict], kept: bool = False, title: str = "test") -> tuple[bytes, list]:
    """The figure's SVG, and each Axes' data and view limits as drawn."""
    import io

    from verify.reporting.plots import SVG_META

    with plt.rc_context(RC):
        fig = sweep_figure(panels, title, "y", kept=kept)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata=SVG_META)
        return out.getvalue(), [(ax.dataLim.bounds, ax.viewLim.bounds) for ax in fig.axes]
