"""How verify's objects show themselves: short text and HTML forms for a terminal and a notebook (`__repr__`,
`_repr_html_`, `_repr_latex_`: one line that says what a thing is, or a small table, instead of a dataclass dump),
the LaTeX of bounds, assumptions and statements with readable names for the catalog's symbols, and parameters as a
reader types them.

It sits below the data model (verify.results and verify.model use it for their reprs) and imports nothing of
verify's: every function reads the object it is given. verify.reporting.notebook and verify.reporting.latex
re-export it for the reports."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any


def number_text(v: float) -> str:
    """A parameter's value as a reader types it: an integer without ".0" (`K=5`, not 5.0; an int of any size in
    full), any other float in the shortest digits that read back as the same float (repr), so a printed point typed
    back (`verify check -p`) is the same point."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2.0**53 else repr(v)


def params_text(params: Mapping[str, float]) -> str:
    """Parameters as a reader types them: "K=1, eta=0.05, m=251" (`number_text` each)."""
    return ", ".join(f"{k}={number_text(v)}" for k, v in params.items())


SYMBOL_LATEX = {
    "lam": r"\lambda",
    "start_var": r"v_{0}",
    "eps": r"\varepsilon",
    "eps_p": r"\varepsilon'",
    "eps_rdp": r"\varepsilon_{\mathrm{RDP}}",
    "E0": r"E_{0}",
    "dist": r"\mathrm{dist}",
    "gap": r"\mathrm{gap}",
    "db": r"\mathrm{db}",
}

QUANTITY_LATEX = {
    "renyi": r"R_{\alpha}\!\left(\mathcal{A}(D) \,\middle\|\, \mathcal{A}(D')\right)",
    "shifted_renyi": r"R_{\alpha}^{(z)}\!\left(\mu \,\middle\|\, \nu\right)",
    "dp_epsilon": r"\varepsilon^{*}(\delta)",
    "excess_risk": r"\mathbb{E}\,L_D(\theta_K) - \min L_D",
    "lsi_constant": r"c^{*}_{\mathrm{LSI}}",
    "gradient_map_lipschitz": r"\mathrm{Lip}(F)",
    "prox_lipschitz": r"\mathrm{Lip}(T)",
}

# by a Direction's value (verify.reporting.latex.RELATION_LATEX is the same, keyed by Direction)
RELATION_LATEX_BY_VALUE = {"upper": r"\le", "lower": r"\ge", "exact": "="}


def to_latex(expr) -> str:
    """LaTeX of a SymPy expression or condition, with the catalog's symbol names (lam -> lambda, ...)."""
    import sympy as sp  # a repr and `verify list` from the shipped listing do without SymPy: only when printing

    if expr is sp.true or expr is True:
        return r"\text{implied by the declared symbol domains}"
    names = {s: SYMBOL_LATEX[s.name] for s in expr.free_symbols if s.name in SYMBOL_LATEX}
    return sp.latex(expr, symbol_names=names)


def assumption_latex(a) -> str:
    """LaTeX of an assumption's condition."""
    return to_latex(a.condition)


def statement_latex(t) -> str:
    """The claim as one formula: quantity, relation (<=, >=, =), bound."""
    lhs = QUANTITY_LATEX.get(t.quantity.value, rf"\mathrm{{{t.quantity.value}}}".replace("_", r"\_"))
    return f"{lhs} {RELATION_LATEX_BY_VALUE[t.direction.value]} {to_latex(t.bound)}"

def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """A two-column HTML table under a bold title (every cell escaped)."""
    body = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(str(k))}</th>"
                   f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<div><strong>{html.escape(title)}</strong><table>{body}</table></div>"


def theorem_line(t) -> str:
    src = f"{t.source.result}{' ' + t.source.equation if t.source.equation else ''}"
    return (f"<Theorem {t.id}: {t.direction.value} bound on {t.quantity.value} ({t.variant.value}), {src}; "
            f"checked on {', '.join(a.family for a in t.applications) or 'no family'}>")


def theorem_html(t) -> str:
    return table(f"{t.id}: {t.title}", [
        ("claim", f"$${statement_latex(t)}$$"), ("source", f"{t.source.paper}, {t.source.result} {t.source.equation}"),
        ("variant", t.variant.value),
        ("assumptions", "; ".join(f"{a.name}: {a.condition}" for a in t.assumptions) or "-"),
        ("checked on", ", ".join(f"{a.family} (expect {a.expected.value})" for a in t.applications))])


def family_line(f) -> str:
    return (f"<Family {f.name}: parameters {', '.join(p.name for p in f.parameters)}; quantities "
            f"{', '.join(q.value for q in f.truths)}>")


def family_html(f) -> str:
    rows = [("description", f.description), ("truth", f.method)]
    rows += [(p.name, p.description) for p in f.parameters]
    rows.append(("quantities", ", ".join(q.value for q in f.truths)))
    return table(f"family {f.name}", rows)


def point_line(p) -> str:
    t = p.truth
    return (f"<PointResult {p.verdict.value}{' (vacuous)' if p.vacuous else ''} {p.theorem} on {p.family} at "
            f"{params_text(p.params)}: bound {_num(p.bound)} vs truth {_num(t.value)} "
            f"[{_num(t.lower)}, {_num(t.upper)}] ({t.method.value})"
            f"{', certified' if p.certificate is not None and p.certificate.verdict is p.verdict else ''}>")


def point_html(p) -> str:
    t = p.truth
    rows = [("verdict", p.verdict.value + (" (vacuous)" if p.vacuous else "")), ("point", params_text(p.params)),
            ("bound", _num(p.bound)), ("truth", f"{_num(t.value)} in [{_num(t.lower)}, {_num(t.upper)}]"),
            ("method", f"{t.method.value}: {t.detail}"), ("bound / truth", _num(p.ratio))]
    if p.certificate is not None:
        c = p.certificate
        rows.append(("certificate", f"{c.verdict.value}: truth in [{c.truth_lower}, {c.truth_upper}], bound in "
                                    f"[{c.bound_lower}, {c.bound_upper}] ({c.method}, {c.precision_bits} bits)"
                                    + (f"; {c.reason}" if c.reason else "")))
    return table(f"{p.theorem} on {p.family}", rows)


def certificate_line(c) -> str:
    if c.truth_lower is None:
        return f"<PointCertificate {c.verdict.value}: not certified ({c.reason})>"
    return (f"<PointCertificate {c.verdict.value}: truth in [{c.truth_lower}, {c.truth_upper}], bound in "
            f"[{c.bound_lower}, {c.bound_upper}], {c.method}, {c.precision_bits} bits>")


def application_line(r) -> str:
    cx = r.counterexample
    return (f"<ApplicationResult {r.theorem} on {r.family}: {r.shown_verdict} (expected {r.expected.value}), "
            f"{len(r.points)} points, {r.skipped} skipped"
            + (f"; counterexample at {params_text(cx.params)}" if cx is not None else "") + ">")


def application_html(r) -> str:
    cx, ratios = r.counterexample, r.ratios
    rows = [("verdict", f"{r.shown_verdict} (expected {r.expected.value}{'' if r.as_expected else ': UNEXPECTED'})"),
            ("points", f"{len(r.points)} checked, {r.skipped} outside the assumptions, {len(r.errors)} errors"),
            ("bound / truth", f"{_num(min(ratios))} .. {_num(max(ratios))}" if ratios else "-")]
    if cx is not None:
        rows.append(("counterexample", f"{params_text(cx.params)}: bound {_num(cx.bound)} vs truth "
                                       f"{_num(cx.truth.value)}"))
    if r.search is not None:
        rows.append(("falsifier", f"{r.search.checked} points checked of {r.search.tried} tried, "
                                  f"{'found' if r.search.found else 'no'} counterexample"))
    return table(f"{r.theorem} on {r.family}", rows)


def counterexample_line(c) -> str:
    return (f"<Counterexample to {c.theorem} on {c.family} at {params_text(c.params)}: bound {_num(c.bound)} vs "
            f"truth {_num(c.truth.value)}>")


def counterexample_html(c) -> str:
    t = c.truth
    return table(f"counterexample to {c.theorem} on {c.family}", [
        ("point", params_text(c.params)), ("bound", _num(c.bound)),
        ("truth", f"{_num(t.value)} in [{_num(t.lower)}, {_num(t.upper)}] ({t.method.value})"),
        ("bound / truth", _num(c.ratio)), ("search", f"{c.checked} points checked ({c.examples} tried)")])


def outcome_line(o) -> str:
    found = f"counterexample at {params_text(o.counterexample.params)}" if o.counterexample else "no counterexample"
    return f"<SearchOutcome {o.theorem} on {o.family}: {found}; {o.summary()}>"


def outcome_html(o) -> str:
    rows = [("result", "counterexample found" if o.counterexample else "no counterexample"),
            ("search", o.summary()), ("seed", o.seed), ("seconds", f"{o.seconds:.2f}")]
    if o.counterexample is not None:
        c = o.counterexample
        rows.append(("counterexample", f"{params_text(c.params)}: bound {_num(c.bound)} vs truth "
                                       f"{_num(c.truth.value)}"))
    return table(f"search for a counterexample to {o.theorem} on {o.family}", rows)
