"""What the Markdown and HTML reports show, computed once from the JSON certificate (results.json)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from verify.catalog import BUILT_IN_KEYS

VERDICT_CLASS = {"HOLDS": "holds", "VIOLATED": "violated", "INCONCLUSIVE": "inconclusive", "ERROR": "error"}
QUANTITY_LABEL = {"renyi": "Rényi divergence R", "dp_epsilon": "ε(δ)", "dp_epsilon_add": "ε(δ), adding x*",
                  "dp_epsilon_signed": "ε(δ), signed (may be < 0)", "dp_delta": "δ(ε)",
                  "gdp_mu": "Gaussian-DP μ", "tradeoff_beta": "trade-off f(x): type-II error at type-I error x",
                  "excess_risk": "excess risk",
                  "lsi_constant": "LSI constant", "shifted_renyi": "shifted Rényi divergence",
                  "gradient_map_lipschitz": "Lipschitz constant of F", "prox_lipschitz": "Lipschitz constant of T",
                  "composition_order": "Rényi order charged to a step",
                  "expected_batch_renyi": "E over batches of R(law ‖ batch Gaussian)",
                  "holder_composition_bound": "Theorem 3.3's Hölder composition",
                  "estimator_undercut_probability": "P(estimate < true divergence)",
                  "holder_hockey_stick": "sup over S of P₁(S) − e^ε P₀(S)^(1−1/p)",
                  "estimate_below_bound_probability": "P(estimate < the exact bound it estimates)",
                  "smoothness_constant": "smoothness constant of f̂", "approximation_error": "sup |f̂ − f|",
                  "deviation_probability": "P(|empirical mean − mean| ≥ t)"}
DIRECTION_LABEL = {"upper": "upper bound", "lower": "lower bound", "exact": "exact value"}
SWEEP_LABEL = {"K": "K", "alpha": "α", "n": "n"}


def fmt(x: float | str | None, digits: int = 4) -> str:
    """A number in `digits` significant digits; '-' for None; JSON's "Infinity"/"NaN" strings as ∞/NaN."""
    if x is None:
        return "-"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.{digits}g}"


def params_text(params: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={fmt(v, 6)}" for k, v in params.items())


def tightness(r: Mapping) -> str:
    """bound/truth over the grid, as 'min – max' (one number when they agree)."""
    lo, hi = r.get("ratio_min"), r.get("ratio_max")
    if lo is None:
        return "-"
    return fmt(lo, 3) if fmt(lo, 3) == fmt(hi, 3) else f"{fmt(lo, 3)} – {fmt(hi, 3)}"


def counterexample(r: Mapping) -> str:
    """One line: where the claim fails and the two values, or ''."""
    c = r.get("counterexample")
    if not c:
        return ""
    return f"{params_text(c['params'])}: bound {fmt(c['bound'], 6)} vs truth {fmt(c['truth']['value'], 6)}"


TYPICAL = "__typical"  # the stem suffix of a HOLDS result's second figure, swept around its typical grid point


def anchor(r: Mapping, ambiguous: bool) -> str:
    """The HTML anchor and file stem of a result: its id (with the family when the id has several)."""
    return f"{r['id']}--{r['family']}" if ambiguous else r["id"]


def paper_key(r: Mapping) -> str:
    return r["id"].split(".", 1)[0]


def assumption_status(a: Mapping) -> str:
    s = a.get("status") or {}
    text = f"holds at all {s.get('n_checked', 0)} checked points"
    if s.get("n_excluded"):
        text += f"; excluded {s['n_excluded']} grid points"
    return text


def other_exclusions(r: Mapping) -> dict[str, int]:
    """Grid points excluded by something other than the theorem's own assumptions (e.g. a family's domain)."""
    own = {a["name"] for a in r["assumptions"]}
    return {k: v for k, v in r.get("skipped_by", {}).items() if k not in own}


def sweep_exclusions(r: Mapping) -> list[str]:
    out = []
    for sw in r.get("sweeps") or []:
        for e in sw["excluded"]:
            out.append(f"{SWEEP_LABEL.get(sw['parameter'], sw['parameter'])}={fmt(e['value'], 4)} ({e['reason']})")
    return out


def point_rows(p: Mapping) -> list[tuple[str, str]]:
    """Label/value rows describing one checked point (used for counterexamples and worst points)."""
    t = p["truth"]
    rows = [("parameters", params_text(p["params"])),
            ("bound", fmt(p["bound"], 8)),
            ("truth", f"{fmt(t['value'], 8)}  in [{fmt(t['lower'], 8)}, {fmt(t['upper'], 8)}] ({t['method']})"),
            ("bound / truth", fmt(p["ratio"], 6)),
            ("margin", fmt(p["margin"], 4))]
    if p.get("lower"):
        low = p["lower"]
        rows.append(("best lower bound", f"{fmt(low['value'], 8)} ({low['theorem']}, {low['verdict']})"))
    cert = p.get("certificate")
    if cert and cert["truth"][0] is not None:
        rows.append(("certificate", f"{cert['verdict']}: truth in [{cert['truth'][0]}, {cert['truth'][1]}], bound in "
                                    f"[{cert['bound'][0]}, {cert['bound'][1]}] ({cert['method']}, "
                                    f"{cert['precision_bits']} bits)"))
    elif cert and cert["reason"]:
        rows.append(("not certified", cert["reason"]))
    return rows


def falsifier_text(r: Mapping) -> str:
    """What the falsifier did beside the grid, in words; a search that checked nothing says so ('' when none ran)."""
    f = r.get("falsifier")
    if not f:
        return ""
    others = [(f.get("excluded", 0), "outside the assumptions"), (f.get("undefined", 0), "bound undefined"),
              (f.get("capped", 0), "over a time/memory cap"), (f.get("failed", 0), "truth failed"),
              (f.get("uncertified", 0), "violated in floating point, not certifiable"),
              (f.get("undecided", 0), "undecided (the truth's interval overlaps the bound)")]
    detail = ", ".join(f"{n} {why}" for n, why in others if n)
    tried = f"{f['tried']} tried" + (f": {detail}" if detail else "")
    if f.get("region"):
        tried += f"; drawn in the family's search region {', '.join(f['region'])}"
    if f.get("found"):
        return f"found a certified violation ({f['checked']} points checked, {tried}; seed {f['seed']})"
    if not f["checked"]:
        return f"checked no point ({tried}; seed {f['seed']}): no evidence from the search"
    return f"no violation in {f['checked']} points checked ({tried}; seed {f['seed']})"


def companions(sweeps: Sequence[Mapping]) -> list[str]:
    """The ids of the companion lower bounds drawn in `sweeps`, sorted."""
    return sorted({cid for sw in sweeps for cid in sw.get("companions") or {}})


def anchors(results: Sequence[Mapping]) -> list[str]:
    """The anchor of each result: its id, with the family where an id appears more than once."""
    ids = [r["id"] for r in results]
    return [anchor(r, ids.count(r["id"]) > 1) for r in results]


def build_view(data: Mapping, sweeps: Mapping[str, Sequence[Mapping]] | None = None) -> dict:
    """Everything both renderers need: run facts, papers with their results, and per-result display fields.

    `sweeps` maps a result's anchor to its sweeps (the data behind its figure), for the figure captions.
    """
    sweeps = sweeps or {}
    papers: dict[str, dict] = {}
    aliased: set[str] = set()
    for r, a in zip(data["results"], anchors(data["results"]), strict=True):
        r = {**r, "sweeps": sweeps.get(a, []), "typical_sweeps": sweeps.get(f"{a}{TYPICAL}", [])}
        vacuous = bool(r.get("vacuous"))
        alias = r["id"] if a != r["id"] and r["id"] not in aliased else None  # `#id` of an id with several families
        aliased.add(r["id"])
        item = {**r, "anchor": a, "alias": alias, "companions": companions([*r["sweeps"], *r["typical_sweeps"]]),
                "verdict_class": "vacuous" if vacuous else VERDICT_CLASS.get(r["verdict"], "error"),
                "verdict_shown": f"{r['verdict']} (vacuous)" if vacuous else r["verdict"],
                "tightness": tightness(r), "counterexample_text": counterexample(r),
                "falsifier_text": falsifier_text(r),
                "direction_label": DIRECTION_LABEL.get(r["direction"], r["direction"]),
                "quantity_label": QUANTITY_LABEL.get(r["quantity"], r["quantity"]),
                "other_exclusions": other_exclusions(r), "sweep_exclusions": sweep_exclusions(r),
                "figure": r.get("figure"), "source_text": _source(r["source"]),
                "own_paper": paper_key(r) not in BUILT_IN_KEYS,  # a user's paper (file or module): no seed
                "counterexample_rows": point_rows(r["counterexample"]) if r.get("counterexample") else [],
                "worst_rows": point_rows(r["worst"]) if r.get("worst") else [],
                "base_text": _base(r.get("sweeps") or []),
                "typical_base_text": _base(r["typical_sweeps"]),
                "typical_parameters_text": ", ".join(s["parameter"] for s in r["typical_sweeps"]),
                "grid_text": {k: ", ".join(fmt(v, 6) for v in vs) for k, vs in
                              ((r.get("application") or {}).get("grid") or {}).items()},
                "assumption_rows": [{**x, "status_text": assumption_status(x)} for x in r["assumptions"]]}
        paper = papers.setdefault(paper_key(r), {"key": paper_key(r), "title": r["source"]["paper"],
                                                 "seed": r["source"]["seed"], "results": []})
        paper["results"].append(item)
    for paper in papers.values():  # the table of contents: each paper's verdicts as shown, and its surprises
        shown = [r["verdict_shown"] for r in paper["results"]]
        paper["counts"] = {v: shown.count(v) for v in dict.fromkeys(sorted(shown))}
        paper["unexpected"] = sum(not r["as_expected"] for r in paper["results"])
    summary = data["summary"]
    return {"papers": list(papers.values()), "summary": summary, "run": data["run"],
            "verdict_choices": sorted({r["verdict_shown"] for p in papers.values() for r in p["results"]}),
            "variant_choices": sorted({r["variant"] for p in papers.values() for r in p["results"]}),
            "result_ids": sorted({r["id"] for r in data["results"]}),  # each is an anchor: its section or its alias
            "all_as_expected": data["all_as_expected"], "timing": data["timing"],
            "headline": _headline(summary), "fmt": fmt, "params_text": params_text}


def _source(s: Mapping) -> str:
    return s["result"] + (f", {s['equation']}" if s.get("equation") else "")


def _base(sweeps: Sequence[Mapping]) -> str:
    return params_text(sweeps[0]["base"]) if sweeps else ""


def _headline(s: Mapping) -> str:
    v = s["verdicts"]
    parts = [f"{s['n_results']} results", f"{s['n_as_expected']} as expected"]
    if s["n_unexpected"]:
        parts.append(f"{s['n_unexpected']} unexpected")
    parts.append(", ".join(f"{n} {k}" for k, n in v.items() if n))
    return "; ".join(parts)
