"""LaTeX of bounds, assumptions and statements, with readable names for the catalog's symbols."""

from __future__ import annotations

import sympy as sp

from verify.model import Assumption, Direction, Theorem

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

RELATION_LATEX = {Direction.UPPER: r"\le", Direction.LOWER: r"\ge", Direction.EXACT: "="}


def to_latex(expr: sp.Basic) -> str:
    """LaTeX of a SymPy expression or condition, with the catalog's symbol names (lam -> lambda, ...)."""
    if expr is sp.true or expr is True:
        return r"\text{implied by the declared symbol domains}"
    names = {s: SYMBOL_LATEX[s.name] for s in expr.free_symbols if s.name in SYMBOL_LATEX}
    return sp.latex(expr, symbol_names=names)


def assumption_latex(a: Assumption) -> str:
    """LaTeX of an assumption's condition."""
    return to_latex(a.condition)


def statement_latex(t: Theorem) -> str:
    """The claim as one formula: quantity, relation (<=, >=, =), bound."""
    lhs = QUANTITY_LATEX.get(t.quantity.value, rf"\mathrm{{{t.quantity.value}}}".replace("_", r"\_"))
    return f"{lhs} {RELATION_LATEX[t.direction]} {to_latex(t.bound)}"
