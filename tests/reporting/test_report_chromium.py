"""The HTML report renders in headless Chromium: formulas typeset, every plot loaded, no console errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

_LAST: list[str] = []
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _browser() -> str | None:
    explicit = os.environ.get("VERIFY_CHROMIUM")
    if explicit:
        return explicit
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _render(html, fragment: str = "") -> tuple[str, str]:
    """(the data-render status the page's script set, Chromium's stderr); the rendered DOM is in _LAST."""
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium/chrome binary on PATH (set VERIFY_CHROMIUM to one) to render the HTML report")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=15000", "--dump-dom", html.resolve().as_uri() + fragment],
                          capture_output=True, text=True, timeout=180)
    _LAST[:] = [proc.stdout]
    match = re.search(r'<html[^>]*\bdata-render="([^"]*)"', proc.stdout)
    assert match, f"no rendered DOM (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return match.group(1), proc.stderr


def test_report_renders_with_every_plot_and_no_console_errors(small_report):
    status, log = _render(small_report / "index.html")
    assert status == "ok"
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console == []


def test_a_missing_plot_is_detected(small_report, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(small_report, copy)
    victim = next((copy / "plots").glob("*.svg"))
    victim.unlink()
    status, _ = _render(copy / "index.html")
    assert status.startswith("error:") and victim.name in status


def _shown_sections(dom: str) -> list[tuple[str, str, str]]:
    """(id, verdict, paper) of every result section the page does not hide."""
    out = []
    for tag in re.findall(r"<section [^>]*>", dom):
        if "hidden" in re.sub(r'"[^"]*"', '""', tag):
            continue
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
        out.append((attrs["id"], attrs["data-verdict"], attrs["data-paper"]))
    return out


def test_the_filter_shows_only_the_matching_results(small_report, small_results):
    """#filter=verdict:VIOLATED (what the filter bar writes in the address) leaves exactly the VIOLATED results,
    counted from results.json (the reference); so does each variant and "unexpected only"; no filter shows all."""
    violated = sorted(r["id"] for r in small_results["results"] if r["verdict"] == "VIOLATED")
    assert violated and len(violated) < len(small_results["results"])
    status, _ = _render(small_report / "index.html", "#filter=verdict:VIOLATED")
    assert status == "ok"
    shown = _shown_sections(_LAST[0])
    assert sorted(anchor for anchor, _, _ in shown) == violated and {v for _, v, _ in shown} == {"VIOLATED"}
    assert f'data-filter-shown="{len(violated)}"' in _LAST[0]
    _render(small_report / "index.html")
    assert len(_shown_sections(_LAST[0])) == len(small_results["results"])
    for variant in sorted({r["variant"] for r in small_results["results"]}):
        _render(small_report / "index.html", f"#filter=variant:{variant}")
        assert sorted(a for a, _, _ in _shown_sections(_LAST[0])) == sorted(
            r["id"] for r in small_results["results"] if r["variant"] == variant)
    _render(small_report / "index.html", "#filter=unexpected:yes")
    assert len(_shown_sections(_LAST[0])) == sum(not r["as_expected"] for r in small_results["results"])


def test_the_single_file_report_renders_alone(small_report, tmp_path):
    """report.html (--single-file) opens with nothing beside it: styles, KaTeX's fonts, scripts and plots inlined,
    every formula typeset and every plot drawn."""
    from verify.reporting.html import single_file

    alone = tmp_path / "alone.html"
    alone.write_text(single_file((small_report / "index.html").read_text(encoding="utf-8"), small_report),
                     encoding="utf-8")
    status, log = _render(alone)
    assert status == "ok", status
    assert not re.search(r'(src|href)="(static|plots)/[^"]+\.(css|js|svg)"', alone.read_text(encoding="utf-8"))
    assert [line for line in log.splitlines() if ":CONSOLE" in line] == []


def _screenshot(svg_text: str, folder, name: str):
    import matplotlib.image as mpimg

    (folder / f"{name}.svg").write_text(svg_text, encoding="utf-8")
    page = folder / f"{name}.html"
    page.write_text(f'<html><body style="margin:0;background:#fff"><img src="{name}.svg" style="width:1500px">'
                    "</body></html>", encoding="utf-8")
    png = folder / f"{name}.png"
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1500,900", f"--screenshot={png}", page.resolve().as_uri()],
                   capture_output=True, timeout=180, check=True)
    return mpimg.imread(png)[..., :3]


def test_a_compacted_figure_draws_as_matplotlibs(tmp_path):
    """The report's figures are compacted (verify.reporting.svg_compact): Chromium draws them as it draws
    matplotlib's own SVG, but for antialiasing at the edges that moved by at most 0.005 pt."""
    if _browser() is None:
        pytest.skip("no chromium/chrome binary on PATH (set VERIFY_CHROMIUM to one) to render the figures")
    pytest.importorskip("matplotlib")
    import numpy as np

    from verify.reporting.svg_compact import compact_svg

    from .test_plot_ticks import _sweep
    from .test_svg_compact import matplotlib_svg

    panels = [_sweep("K", [1.0, 10.0, 100.0, 1000.0], [1e-3, 2e-3, 5e-3, 1e-2], [2.0, 1.5, 1.1, 1.01]),
              _sweep("alpha", [1.5, 2.0, 8.0], [0.3, 0.6, 2.4], [1.2, 1.2, 1.3])]
    original = matplotlib_svg(panels)
    a = _screenshot(original, tmp_path, "original")
    b = _screenshot(compact_svg(original), tmp_path, "compact")
    assert (a < 0.9).mean() > 0.01  # something was drawn
    diff = np.abs(a - b)
    assert diff.max() < 0.5 and diff.mean() < 1e-3, (diff.max(), diff.mean())
