"""The human report: summary tables, sections, counterexamples, plots, vendored KaTeX, progress bar."""

from __future__ import annotations

import io
import json
import re

from verify.progress import ProgressBar
from verify.reporting.columns import point_rows
from verify.reporting.view import falsifier_text, fmt


def test_summary_table_lists_every_selected_id(small_report, small_results):
    md = (small_report / "report.md").read_text()
    summary = md.split("## Summary", 1)[1].split("\n## ", 1)[0]
    for theorem_id in small_results["run"]["theorems"]:
        assert f"| [`{theorem_id}`](#{theorem_id}) |" in summary
        assert f'<a id="{theorem_id}"></a>' in md
    assert len(small_results["run"]["theorems"]) == 5


def test_violated_entries_show_their_counterexample(small_report, small_results):
    md = (small_report / "report.md").read_text()
    html = (small_report / "index.html").read_text()
    violated = [r for r in small_results["results"] if r["verdict"] == "VIOLATED"]
    assert {r["id"] for r in violated} >= {"chourasia2021.theorem3.cor1_start", "chourasia2021.theorem3.large_step"}
    for r in violated:
        c = r["counterexample"]
        assert c["verdict"] == "VIOLATED" and c["margin"] >= r["worst"]["margin"]  # the worst may be undecided
        section = md.split(f'<a id="{r["id"]}"></a>', 1)[1].split("<a id=", 1)[0]
        assert "**Counterexample**" in section
        assert fmt(c["bound"], 8) in section and fmt(c["truth"]["value"], 8) in section
        row = next(line for line in md.splitlines() if line.startswith(f"| [`{r['id']}`]"))
        assert f"bound {fmt(c['bound'], 6)} vs truth {fmt(c['truth']['value'], 6)}" in row
        block = html.split(f'id="{r["id"]}"', 1)[1].split("</section>", 1)[0]
        assert 'class="cx-box"' in block and fmt(c["bound"], 8) in block
    for r in small_results["results"]:
        if r["verdict"] == "HOLDS":
            assert r["counterexample"] is None


def test_sections_have_statement_assumptions_and_plots(small_report, small_results):
    md = (small_report / "report.md").read_text()
    html = (small_report / "index.html").read_text()
    for r in small_results["results"]:
        figure = dict(r["figure"])  # small_results is the session's: read it, never change it
        typical = figure.pop("typical", None)
        assert figure == {"svg": f"plots/{r['id']}.svg", "data": f"plots/{r['id']}.json"}
        if r["verdict"] == "HOLDS":  # the second figure, around the median bound/truth grid point
            assert typical == {"svg": f"plots/{r['id']}__typical.svg", "data": f"plots/{r['id']}__typical.json"}
            assert f"]({typical['svg']})" in md and f'src="{typical["svg"]}"' in html
            typical_sweeps = json.loads((small_report / typical["data"]).read_text())
            assert [s["parameter"] for s in typical_sweeps] == ["K"]  # one sweep: the first that the grid varies
            assert typical_sweeps[0]["base"] != _sweeps(small_report, r)[0]["base"]
            assert "The sweep over K around a typical grid point" in md
        else:
            assert typical is None
        assert (small_report / r["figure"]["svg"]).stat().st_size > 1000
        assert (small_report / r["figure"]["svg"]).read_text().lstrip().startswith("<?xml")
        assert f"]({r['figure']['svg']})" in md and f'src="{r["figure"]["svg"]}"' in html
        assert [s["parameter"] for s in _sweeps(small_report, r)] == ["K", "alpha", "n"]
        assert r["statement_latex"] in md
        for a in r["assumptions"]:
            assert f"`{a['name']}`" in md and f"${a['condition_latex']}$" in md
    assert html.count('<section class="result') == len(small_results["results"])


def test_html_serves_katex_with_the_report(small_report):
    html = (small_report / "index.html").read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing from the network
    for rel in ("static/katex/katex.min.js", "static/katex/katex.min.css", "static/report.css", "static/report.js"):
        assert f'"{rel}"' in html and (small_report / rel).is_file()
    fonts = list((small_report / "static/katex/fonts").glob("*.woff2"))
    assert len(fonts) >= 19


def _sweeps(report, r) -> list[dict]:
    return json.loads((report / r["figure"]["data"]).read_text())


def test_sweeps_vary_one_parameter_from_the_worst_point(small_report, small_results):
    r = next(r for r in small_results["results"] if r["id"] == "chourasia2021.theorem3.cor1_start")
    sweeps = _sweeps(small_report, r)
    base = sweeps[0]["base"]
    grid = [p for p in point_rows(r["points"], r["id"], r["family"]) if p["origin"] == "grid"]
    worst_grid = min(grid, key=lambda p: p["margin"])  # the caption's "worst grid point"
    assert all(base[k] == worst_grid["params"][k] for k in base)
    k_sweep = sweeps[0]
    assert k_sweep["values"] == sorted(k_sweep["values"])
    assert k_sweep["values"][-1] == max(r["application"]["grid"]["K"])  # K stays within the grid's range
    assert all(float(v).is_integer() for v in k_sweep["values"]) and len(k_sweep["values"]) >= 10
    alpha = sweeps[1]["values"]
    assert alpha[0] == 1.1 and alpha[-1] == 64.0
    assert "VIOLATED" in k_sweep["verdict"]


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = ProgressBar(stream)
        bar("checks", "chourasia2021.theorem3", 2, 4)
        bar.close()
    shown = tty.getvalue()
    assert "checks" in shown and "2/4" in shown and "chourasia2021.theorem3" in shown and "elapsed" in shown
    assert pipe.getvalue() == ""
    quiet = Tty()
    ProgressBar(quiet, enabled=False)("checks", "x", 1, 2)
    assert quiet.getvalue() == ""


def test_the_falsifier_line_says_what_the_search_checked():
    base = {"examples": 10, "tried": 10, "excluded": 0, "undefined": 0, "capped": 0, "failed": 0, "seed": 0}
    nothing = falsifier_text({"falsifier": {**base, "checked": 0, "excluded": 10, "found": False}})
    assert nothing.startswith("checked no point") and "10 outside the assumptions" in nothing
    some = falsifier_text({"falsifier": {**base, "checked": 7, "uncertified": 3, "found": False}})
    assert some.startswith("no violation in 7 points checked") and "3 violated in floating point" in some
    assert falsifier_text({"falsifier": {**base, "checked": 4, "found": True}}).startswith("found a certified")
    assert falsifier_text({"falsifier": None}) == ""


def test_reports_show_the_falsifier(small_report, small_results):
    searched = [r for r in small_results["results"] if r.get("falsifier")]
    assert searched
    markdown, html = (small_report / "report.md").read_text(), (small_report / "index.html").read_text()
    assert markdown.count("**Falsifier**") == len(searched)
    assert html.count("<dt>falsifier</dt>") == len(searched)
