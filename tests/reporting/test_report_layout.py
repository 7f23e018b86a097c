"""What a reader meets first (issue 48), measured in headless Chromium on the session's small report: figures at their
own size (never widened), no figure text outside its SVG, the papers folded (a short page), the filter kept in the
address (applied on load and on hashchange) with the contents' badges counting what it shows, and every link to an
anchor landing on its target, opened, inside a folded paper too. Without a browser: every `#x` a link names exists,
theorem ids in notes are links, and a wrapped figure title stays inside its figure for any title."""

from __future__ import annotations

import copy
import html
import json
import re
import shutil
import subprocess
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from .test_plot_ticks import _sweep  # skips this module without matplotlib (the report extra)
from .test_report_chromium import _browser

WINDOW = (1400, 900)  # a laptop's window: the column (~1100 px) is 2.6 times a one-sweep figure's width

# runs after the page's own scripts (load, fonts, KaTeX); `steps` is the body of an async function that fills `out`
PROBE = """<script>
window.addEventListener("load", function () {
  (document.fonts ? document.fonts.ready : Promise.resolve()).then(function () {
    setTimeout(async function () {
      var out = {};
      function hashTo(h) {
        return new Promise(function (done) {
          window.addEventListener("hashchange", function () { setTimeout(done, 0); }, {once: true});
          window.location.hash = h;
        });
      }
      function shown() {
        return [].filter.call(document.querySelectorAll("section.result"), function (s) { return !s.hidden; })
          .map(function (s) { return s.id; });
      }
      function badges() {
        var b = {};
        document.querySelectorAll(".counts").forEach(function (box) {
          var where = box.closest("nav") ? "toc" : "paper";
          b[where + ":" + box.dataset.paper] = [].map.call(box.children, function (c) { return c.textContent; });
        });
        return b;
      }
      try { STEPS } catch (e) { out.error = String(e && e.stack || e); }
      var pre = document.createElement("pre");
      pre.id = "probe";
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    }, 200);
  });
});
</script>"""


def _probe(report, tmp_path, steps: str, fragment: str = "", extra: str = "") -> dict:
    """What `steps` (JavaScript) put in `out`, run in a copy of `report`'s page (`extra` HTML appended to its body),
    opened at `fragment` in a WINDOW-sized headless Chromium."""
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium/chrome binary on PATH (set VERIFY_CHROMIUM to one) to render the HTML report")
    folder = tmp_path / "report"
    if not folder.exists():
        shutil.copytree(report, folder)
    page = (folder / "index.html").read_text(encoding="utf-8")
    probe = folder / "probe.html"
    probe.write_text(page.replace("</body>", extra + PROBE.replace("STEPS", steps) + "</body>"), encoding="utf-8")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=30000", "--dump-dom",
                           probe.resolve().as_uri() + fragment], capture_output=True, text=True, timeout=300)
    match = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"the probe did not run (exit {proc.returncode}): {proc.stderr[-2000:]}"
    out = json.loads(html.unescape(match.group(1)))
    assert "error" not in out, out["error"]
    return out


def _svg_pt(svg_text: str) -> tuple[float, float]:
    match = re.search(r'<svg\b[^>]*?\swidth="([\d.]+)pt"[^>]*?\sheight="([\d.]+)pt"', svg_text)
    return float(match.group(1)), float(match.group(2))


def test_figures_are_drawn_at_their_own_width_never_wider(small_report, small_results, tmp_path):
    """Every figure (the papers opened) is drawn no wider than its SVG's own width (+1 px of rounding), and a
    one-sweep figure, narrower than the column, exactly at it: the column is 2.6 times its width, where the figures
    were stretched to fill it. The natural width is read from the SVG file (width in pt, 4/3 px each)."""
    out = _probe(small_report, tmp_path, """
      document.querySelectorAll("details").forEach(function (d) { d.open = true; });
      out.column = document.querySelector("main").clientWidth;
      out.figures = [].map.call(document.querySelectorAll("figure img"), function (img) {
        return [img.getAttribute("src"), img.getBoundingClientRect().width, img.getBoundingClientRect().height];
      });""")
    figures = {src: (w, h) for src, w, h in out["figures"]}
    expected = {r["figure"]["svg"] for r in small_results["results"] if r["figure"]} | {
        r["figure"]["typical"]["svg"] for r in small_results["results"] if r["figure"] and "typical" in r["figure"]}
    assert set(figures) == expected
    single = 0
    for src, (width, height) in figures.items():
        w_pt, h_pt = _svg_pt((small_report / src).read_text(encoding="utf-8"))
        natural = w_pt * 4 / 3
        assert width <= natural + 1, (src, width, natural)
        assert height == pytest.approx(width * h_pt / w_pt, abs=1.5)  # the aspect kept
        if natural < out["column"] / 2:  # a one-sweep figure
            single += 1
            assert width >= natural - 1, (src, width, natural)
    assert single >= 1


def test_no_text_of_a_figure_leaves_it(small_report, tmp_path):
    """Each figure of the report drawn by Chromium on its own (inline, at its size): every text (titles, labels,
    ticks, legend) lies inside the SVG's box, as wide as the browser's font draws it. The titles ran past the right
    edge (cut off), longer than a one-sweep figure is wide."""
    svgs = {p.name: re.sub(r"^.*?(?=<svg\b)", "", p.read_text(encoding="utf-8"), flags=re.S)
            for p in sorted((small_report / "plots").glob("*.svg"))}
    data = json.dumps(svgs).replace("</", "<\\/")
    out = _probe(small_report, tmp_path, """
      var svgs = JSON.parse(document.getElementById("svgs").textContent), box = document.createElement("div");
      box.style.cssText = "position:absolute;left:0;top:0";
      document.body.appendChild(box);
      out.outside = {}; out.texts = 0;
      Object.keys(svgs).forEach(function (name) {
        box.innerHTML = svgs[name];  // one at a time: each SVG's style sheet alone in the page
        var r = box.querySelector("svg").getBoundingClientRect();
        box.querySelectorAll("text").forEach(function (t) {
          var b = t.getBoundingClientRect();
          out.texts += 1;
          if (b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5) {
            (out.outside[name] = out.outside[name] || []).push(t.textContent);
          }
        });
      });""", extra=f'<script type="application/json" id="svgs">{data}</script>')
    assert out["texts"] > 50 * len(svgs)
    assert out["outside"] == {}


def test_the_page_is_short_at_first_sight(small_report, small_results, tmp_path):
    """At first sight every paper is folded under its title and verdicts: no result section is drawn, the page is a
    fraction of its unfolded height, and each paper's title shows. Opening the papers draws every section."""
    out = _probe(small_report, tmp_path, """
      var drawn = function () { return [].filter.call(document.querySelectorAll("section.result"),
        function (s) { return s.checkVisibility(); }).length; };  // false when a closed <details> skips it
      out.first = document.documentElement.scrollHeight; out.drawn_first = drawn();
      out.titles = [].map.call(document.querySelectorAll("details.paper > summary"), function (s) {
        return s.getBoundingClientRect().height > 0; });
      document.querySelectorAll("details").forEach(function (d) { d.open = true; });
      out.open = document.documentElement.scrollHeight; out.drawn_open = drawn();""")
    papers = {r["id"].split(".", 1)[0] for r in small_results["results"]}
    assert out["drawn_first"] == 0 and out["drawn_open"] == len(small_results["results"])
    assert out["titles"] == [True] * len(papers)
    assert out["first"] * 4 < out["open"], out


def _matching(results, verdict=None, unexpected=False) -> list[dict]:
    return [r for r in results if (verdict is None or r["verdict"] == verdict) and (not unexpected or
                                                                                    not r["as_expected"])]


def _badges(results) -> dict[str, list[str]]:
    """The contents' and each paper title's badges, from results.json (the reference): "N VERDICT" sorted by
    verdict, then "N unexpected"."""
    out = {}
    for paper in sorted({r["id"].split(".", 1)[0] for r in results}):
        mine = [r for r in results if r["id"].startswith(paper + ".")]
        shown = Counter(f"{r['verdict']} (vacuous)" if r.get("vacuous") else r["verdict"] for r in mine)
        texts = [f"{n} {v}" for v, n in sorted(shown.items())]
        if sum(not r["as_expected"] for r in mine):
            texts.append(f"{sum(not r['as_expected'] for r in mine)} unexpected")
        out[f"toc:{paper}"] = out[f"paper:{paper}"] = texts
    return out


def test_the_filter_follows_the_address_and_the_badges_follow_the_filter(small_report, small_results, tmp_path):
    """A new address (#filter=..., as back/forward or an edited address give) applies its filter without a reload;
    an address with no filter shows everything again. The badges of the contents and of each paper's title count
    what the filter shows (results.json is the reference); a paper with nothing shown is hidden."""
    results = small_results["results"]
    out = _probe(small_report, tmp_path, """
      out.start = [shown(), badges()];
      await hashTo("#filter=verdict:VIOLATED");
      out.violated = [shown(), badges(), document.querySelector("select[name=verdict]").value,
                      [].map.call(document.querySelectorAll("details.paper"), function (d) { return d.open; })];
      await hashTo("#filter=verdict:HOLDS");
      out.holds = [shown(), badges()];
      await hashTo("#summary");
      out.anchor = [shown(), badges()];
      await hashTo("#filter=unexpected:yes");
      out.unexpected = [shown(), badges(), [].map.call(document.querySelectorAll("details.paper"),
                                                       function (d) { return d.hidden; })];
      await hashTo("");
      out.none = [shown(), badges()];""")
    every = sorted(r["id"] for r in results)
    assert sorted(out["start"][0]) == every and out["start"][1] == _badges(results)
    for key, verdict in (("violated", "VIOLATED"), ("holds", "HOLDS")):
        chosen = _matching(results, verdict)
        assert 0 < len(chosen) < len(results)
        assert sorted(out[key][0]) == sorted(r["id"] for r in chosen)
        assert out[key][1] == {k: v for k, v in _badges(chosen).items()} | {
            k: [] for k in _badges(results) if k not in _badges(chosen)}
    assert out["violated"][2] == "VIOLATED" and all(out["violated"][3])  # the papers with matches opened
    assert sorted(out["anchor"][0]) == sorted(r["id"] for r in _matching(results, "HOLDS"))  # an anchor keeps it
    surprises = _matching(results, unexpected=True)
    assert sorted(out["unexpected"][0]) == sorted(r["id"] for r in surprises)
    papers = sorted({r["id"].split(".", 1)[0] for r in results})
    assert out["unexpected"][2] == [not any(r["id"].startswith(p + ".") for r in surprises) for p in papers]
    assert sorted(out["none"][0]) == every and out["none"][1] == _badges(results)


def test_a_link_to_a_result_opens_its_folded_paper(small_report, small_results, tmp_path):
    """Every result's anchor, navigated to with its paper folded (an address's hash, as a link or another page
    gives), opens the paper and brings the result into view; so does a click on its link in the summary table; a
    filter that hides it is cleared. Loading the page at a result's address does the same."""
    first = small_results["results"][0]["id"]
    out = _probe(small_report, tmp_path, """
      var fold = function () { document.querySelectorAll("details").forEach(function (d) { d.open = false; }); };
      var seen = function (id) { var el = document.getElementById(id), r = el.getBoundingClientRect();
        return el.checkVisibility() && r.top >= 0 && r.top < window.innerHeight; };
      out.loaded = seen(FIRST);
      out.hash = {}; out.click = {};
      var ids = [].map.call(document.querySelectorAll("section.result"), function (s) { return s.id; });
      for (var i = 0; i < ids.length; i++) {
        var other = document.getElementById(ids[i]).dataset.verdict === "HOLDS" ? "VIOLATED" : "HOLDS";
        await hashTo("#filter=verdict:" + other); fold();  // a filter that hides it, its paper folded
        await hashTo("#" + ids[i]);
        out.hash[ids[i]] = seen(ids[i]);
        await hashTo("#summary"); fold();
        document.querySelector('tr a[href="#' + ids[i] + '"]').click();  // its row's link, clicked by script
        await new Promise(function (done) { setTimeout(done, 50); });
        out.click[ids[i]] = seen(ids[i]);
        fold(); window.scrollTo(0, 0);
        document.querySelector('tr a[href="#' + ids[i] + '"]').click();  // again: the address does not change
        await new Promise(function (done) { setTimeout(done, 50); });
        out.again = (out.again || 0) + (seen(ids[i]) ? 1 : 0);
      }""".replace("FIRST", json.dumps(first)), fragment=f"#{first}")
    ids = sorted(r["id"] for r in small_results["results"])
    assert out["loaded"]
    assert out["hash"] == dict.fromkeys(ids, True)
    assert out["click"] == dict.fromkeys(ids, True)
    assert out["again"] == len(ids)


# ---- without a browser ------------------------------------------------------------------------------------------

def _ids(page: str) -> set[str]:
    return {html.unescape(v) for v in re.findall(r'\sid="([^"]*)"', page)}


def _links(page: str) -> list[str]:
    return [html.unescape(v)[1:] for v in re.findall(r'\shref="(#[^"]*)"', page)]


def test_every_link_to_an_anchor_has_a_target(small_report, small_results):
    """Every href="#x" of the page names an element's id, and every result id is one."""
    page = (small_report / "index.html").read_text(encoding="utf-8")
    ids = _ids(page)
    assert set(_links(page)) <= ids
    assert {r["id"] for r in small_results["results"]} <= ids


@settings(max_examples=examples(4, 20), deadline=None, database=None)
@given(data=st.data())
def test_theorem_ids_anywhere_in_the_page_are_links_that_resolve(small_results, tmp_path_factory, data):
    """The small report's results, some of them given a second family (an id that names two results: their anchors
    are id--family) and notes that name other results' ids (also ids with a dotted tail, and ids not in the report):
    the page links each named id that is in the report, once per mention, and every link has its target (an id with
    several families has its own anchor, on its first result)."""
    from verify.reporting.html import render_html
    from verify.reporting.view import build_view

    doc = copy.deepcopy(small_results)
    results = doc["results"]
    doubled = data.draw(st.lists(st.sampled_from(range(len(results))), unique=True, max_size=len(results)))
    for i in doubled:
        results.append({**copy.deepcopy(results[i]), "family": results[i]["family"] + "_again", "figure": None})
    ids = sorted({r["id"] for r in results})
    named = {}
    for r in results:
        words = data.draw(st.lists(st.one_of(st.sampled_from(ids), st.sampled_from(ids).map(lambda i: i + ".tail"),
                                             st.just("other2020.lemma1"), st.just("word")), max_size=4))
        r["note"] = " ".join(f"see {w}, and" for w in words)
        named[id(r)] = [w.removesuffix(".tail") for w in words if w.removesuffix(".tail") in ids]
    page = render_html(build_view(doc), "test")
    assert set(_links(page)) <= _ids(page)
    assert set(ids) <= _ids(page)
    notes = re.findall(r'<div class="note">(see .*?)</div>', page)
    assert sorted(len(re.findall(r'<a href="#', n)) for n in notes) == sorted(
        len(named[id(r)]) for r in results if r["note"])
    for n in notes:
        for target in re.findall(r'<a href="#([^"]*)"><code>([^<]*)</code></a>', n):
            assert target[0] == html.escape(target[1])


TITLE_CHARACTERS = (st.characters(codec="ascii", categories=("L", "N", "P", "S"))
                    | st.sampled_from("αβγδεημρσλ—–≤≥²³√∞‖·×"))  # the catalog's titles: ASCII and a few symbols


# 12 examples (100 thorough, tests/hypothesis_budget.py): a figure drawn each, ~0.5 s
@settings(max_examples=examples(12, 100), deadline=None, database=None)
@given(words=st.lists(st.one_of(st.text(TITLE_CHARACTERS, min_size=1, max_size=12),
                                st.text("abcdefghij._", min_size=30, max_size=90)), min_size=1, max_size=40),
       columns=st.integers(1, 3))
def test_a_figure_title_of_any_length_stays_inside_its_figure(words, columns):
    """A title of any words (long ones, dotted ids longer than a line, any script) is wrapped: matplotlib's own
    extent of the drawn title lies inside the figure, and the Axes start below it."""
    import matplotlib.pyplot as plt

    from verify.reporting.plots import RC, sweep_figure

    panel = _sweep("K", [1.0, 10.0, 100.0], [1e-3, 2e-3, 5e-3], [2.0, 1.5, 1.1])
    with plt.rc_context(RC):
        fig = sweep_figure([panel] * columns, " ".join(words), "y", kept=True)
        renderer = fig.canvas.get_renderer()
        title = fig._suptitle.get_window_extent(renderer)
        box = fig.bbox
        assert box.x0 - 0.5 <= title.x0 and title.x1 <= box.x1 + 0.5, (title, box)
        assert box.y0 <= title.y0 and title.y1 <= box.y1 + 0.5, (title, box)
        top = max(ax.get_tightbbox(renderer).y1 for ax in fig.axes)
        assert top <= title.y0 + 1, (top, title)
