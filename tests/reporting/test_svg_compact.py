"""A compacted figure (verify.reporting.svg_compact) is matplotlib's figure, element for element: the same tags in
the same order, the same text, every style the same once its class is looked up, every coordinate within 0.005 pt.
Chromium draws both the same (tests/reporting/test_report_chromium.py)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402

from verify.reporting.plots import RC, SVG_META, sweep_figure  # noqa: E402
from verify.reporting.svg_compact import compact_svg  # noqa: E402

from .test_plot_ticks import any_sweeps  # noqa: E402

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
ROUNDED = 0.005 + 1e-9  # half of 0.01 pt


def matplotlib_svg(panels: list[dict], title: str = "a title", ylabel: str = "y") -> str:
    with plt.rc_context(RC):
        fig = sweep_figure(panels, title, ylabel)
        try:
            out = io.StringIO()
            fig.savefig(out, format="svg", metadata=SVG_META)
            return out.getvalue()
        finally:
            plt.close(fig)


def _classes(root: ET.Element) -> dict[str, str]:
    sheet = "".join(e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}style"))
    return dict(re.findall(r"\.(s\d+)\{([^}]*)\}", sheet))


def _same_numbers(a: str, b: str, where: str) -> None:
    assert NUMBER.sub("#", " ".join(a.split())) == NUMBER.sub("#", b), where  # the same commands and words
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True):
        assert abs(float(x) - float(y)) <= ROUNDED, (where, x, y)


def assert_same_drawing(original: str, compact: str) -> None:
    a, b = ET.fromstring(original.encode()), ET.fromstring(compact.encode())
    classes = _classes(b)
    left, right = list(a.iter()), list(b.iter())
    assert [e.tag for e in left] == [e.tag for e in right]
    for x, y in zip(left, right, strict=True):
        where = f"<{x.tag}> {x.attrib}"
        if x.tag.endswith(("}text", "}tspan")):  # drawn text: every character, whitespace included
            assert (x.text, x.tail if x.tag.endswith("tspan") else None) == (
                y.text, y.tail if y.tag.endswith("tspan") else None), where
        assert (x.text or "").strip() == (y.text or "").strip() or x.tag.endswith("style"), where
        attrs = dict(y.attrib)
        if "class" in attrs:
            attrs["style"] = classes[attrs.pop("class")]
        expected = dict(x.attrib)
        if x.tag.endswith("}g"):
            expected.pop("id", None)
        if re.fullmatch(r"rotate\(-?0 \S+ \S+\)", expected.get("transform", "")):
            del expected["transform"]
        assert expected.keys() == attrs.keys(), where
        for name, value in expected.items():
            if name in ("d", "x", "y", "width", "height", "transform"):
                _same_numbers(value, attrs[name], where)
            else:
                assert value == attrs[name], where


@settings(max_examples=8, deadline=None, database=None)
@given(panels=st.lists(any_sweeps(), min_size=1, max_size=3))
def test_a_compacted_figure_is_matplotlibs_figure(panels):
    original = matplotlib_svg(panels)
    compact = compact_svg(original)
    assert_same_drawing(original, compact)
    assert len(compact) < 0.7 * len(original)


def test_a_broken_compaction_is_caught():
    """The comparison has teeth: a style sent to the wrong class, or a coordinate moved by 0.01 pt, fails it."""
    from .test_plot_ticks import _sweep

    original = matplotlib_svg([_sweep("K", [1.0, 10.0, 100.0], [1.0, 2.0, 3.0], [2.0, 1.5, 1.1])])
    compact = compact_svg(original)
    swapped = compact.replace('class="s0"', 'class="TMP"').replace('class="s1"', 'class="s0"').replace(
        'class="TMP"', 'class="s1"')
    with pytest.raises(AssertionError):
        assert_same_drawing(original, swapped)
    moved = re.sub(r'( x=")([\d.]+)"', lambda m: f'{m.group(1)}{float(m.group(2)) + 0.01:.2f}"', compact, count=1)
    with pytest.raises(AssertionError):
        assert_same_drawing(original, moved)


HOSTILE = ['Thm  x="1.23456"', 'a transform="rotate(0 1 2)" b', 'A d="M 1.23456\n  2"', 'x style="}*{fill:red}"',
           'b style="fill: red; stroke: none" c', "  two  spaces  ", "1.234567 < 2 & 3 > 1", "Rényi α⁻³ 10⁻³",
           '<g id="x">', "line one\nline two"]


@settings(max_examples=10, deadline=None, database=None)
@given(title=st.sampled_from(HOSTILE) | st.text("ab <>&\"'=}{;:$.0123456789eα⁻³\n\t dxystylegi", max_size=40),
       ylabel=st.sampled_from(HOSTILE))
def test_text_is_never_rewritten_whatever_it_says(title, ylabel):
    """Titles and labels that look like attributes, styles or tags (matplotlib does not escape quotes in text) are
    drawn as they were: before, a title with ` x="1.23456"` lost digits, and one with a repeated ` style="..."` became
    a class and put its CSS in the style sheet (found by a hostile review)."""
    from .test_plot_ticks import _sweep

    panels = [_sweep("K", [1.0, 10.0, 100.0], [1.0, 2.0, 3.0], [2.0, 1.5, 1.1])] * 2
    original = matplotlib_svg(panels, title, ylabel)
    compact = compact_svg(original)
    assert_same_drawing(original, compact)
    assert "fill:red" not in compact.split("</style>")[0]
