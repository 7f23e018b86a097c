"""The Markdown report (report.md): a summary table per paper, then one section per result."""

from __future__ import annotations

from collections.abc import Mapping

from verify.reporting.view import fmt

MARK = {True: "✓", False: "✗"}
SWEEP_CAPTION = ("Each panel varies one parameter with the others at the base point (the worst grid point: the "
                 "counterexample when VIOLATED, else the tightest point). Blue: the bound; black: the truth (grey "
                 "band and error bars: its interval, when estimated); dashed: companion lower bounds; red ×: "
                 "violated; dotted: the base value. Beneath: bound / truth (the tightness; the line is bound = "
                 "truth).")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _summary(paper: Mapping) -> list[str]:
    rows = [[f"[`{r['id']}`](#{r['anchor']})", r["family"], r["source_text"], f"{r['variant']}, {r['direction_label']}",
             f"**{r['verdict_shown']}**", f"{r['expected']} {MARK[r['as_expected']]}",
             f"{r['n_points']} ({r['n_skipped']})", r["tightness"], r["counterexample_text"] or "-"]
            for r in paper["results"]]
    return _table(["Result", "Family", "Source", "Claim", "Verdict", "Expected", "Points (skipped)", "bound/truth",
                   "Counterexample"], rows)


def _section(r: Mapping) -> list[str]:
    out = [f'<a id="{r["anchor"]}"></a>', "", f"### `{r['id']}` — {r['title']}", "",
           f"**{r['verdict_shown']}** (expected {r['expected']} {MARK[r['as_expected']]}) · {r['variant']} · "
           f"{r['direction_label']} on {r['quantity_label']} · family `{r['family']}`  ",
           f"Source: {r['source_text']} — " + (f"seed `{r['source']['seed']}`" if r["source"]["seed"]
                                                 else r["source"]["paper"] if r["own_paper"]
                                                 else f"later literature: {r['source']['paper']}"), "",
           "$$", r["statement_latex"], "$$", "", "**Assumptions**", ""]
    out += _table(["name", "condition", "description", "status"],
                  [[f"`{a['name']}`", f"${a['condition_latex']}$", a["description"], a["status_text"]]
                   for a in r["assumption_rows"]])
    if r["other_exclusions"]:
        others = r["other_exclusions"].items()
        out += ["", "Also excluded: " + "; ".join(f"{n} grid points by `{k}`" for k, n in others)]
    grid = "; ".join(f"{k} ∈ {{{v}}}" for k, v in r["grid_text"].items())
    app = r.get("application") or {}
    if grid:
        out += ["", f"**Grid**: {grid}  "]
    if app.get("defaults"):
        out.append("Derived: " + "; ".join(f"{k} = `{v}`" for k, v in app["defaults"].items()) + "  ")
    if app.get("bind"):
        out.append("Bound to the instance: " + "; ".join(f"{k} = `{v}`" for k, v in app["bind"].items()))
    counts = ", ".join(f"{n} {k}" for k, n in r["counts"].items() if n)
    out += ["", f"**Result**: {r['n_points']} points checked ({counts or 'none'}), {r['n_skipped']} skipped, "
                f"{r['n_errors']} errors; bound/truth {r['tightness']}."]
    if r["falsifier_text"]:
        out += ["", f"**Falsifier**: {r['falsifier_text']}."]
    if r["counterexample_rows"]:
        out += ["", "**Counterexample** (the worst grid point):", ""]
        out += _table(["", ""], [[k, v] for k, v in r["counterexample_rows"]])
    if r["errors"]:
        out += ["", f"**Errors** ({r['n_errors']} grid points failed; no verdict):", ""]
        out += [f"- `{e['error']}` at {_cell(', '.join(f'{k}={fmt(v, 6)}' for k, v in e['params'].items()))}: "
                f"{e['message']}" for e in r["errors"][:10]]
    if r.get("figure"):
        out += ["", f"![{r['id']}: bound, truth and lower bounds]({r['figure']['svg']})", "",
                f"*{SWEEP_CAPTION} Base point: {r['base_text']}.*"]
        if r["sweep_exclusions"]:
            out += ["", "Sweep values outside the assumptions: " + "; ".join(r["sweep_exclusions"])]
        if r["figure"].get("typical"):
            out += ["", f"![{r['id']} at a typical grid point]({r['figure']['typical']['svg']})", "",
                    f"*The sweep over {r['typical_parameters_text']} around a typical grid point (the median "
                    f"bound / truth over the grid): {r['typical_base_text']}.*"]
    for note in (r["note"], (r.get("application") or {}).get("note")):
        if note:
            out += ["", f"> {note}"]
    return out + ["", "[back to the summary](#summary)", ""]


def render_markdown(view: Mapping) -> str:
    """report.md from `verify.reporting.view.build_view`'s output."""
    run = view["run"]
    versions = ", ".join(f"{k} {v}" for k, v in run["versions"].items())
    out = ["# Verification report", "",  # no run id, start time or wall times: two runs' reports diff cleanly
           f"Seed {run['seed']} · backend {run['backend']}  ", f"Versions: {versions}", "",
           f"**{view['headline']}**", "", '<a id="summary"></a>', "", "## Summary", ""]
    for paper in view["papers"]:
        out += [f"### {paper['title']} (`{paper['key']}`)", ""] + _summary(paper) + [""]
    for paper in view["papers"]:
        out += [f"## {paper['title']}", ""]
        for r in paper["results"]:
            out += _section(r)
    return "\n".join(out).rstrip() + "\n"
