"""LaTeX of bounds, assumptions and statements, with readable names for the catalog's symbols. The printers live in
verify.display, below the data model (a Theorem's `_repr_latex_` uses them); this module names them for the reports,
with the relation of each Direction."""

from __future__ import annotations

from verify.display import QUANTITY_LATEX, SYMBOL_LATEX, assumption_latex, statement_latex, to_latex
from verify.model import Direction

RELATION_LATEX = {Direction.UPPER: r"\le", Direction.LOWER: r"\ge", Direction.EXACT: "="}

__all__ = ["QUANTITY_LATEX", "RELATION_LATEX", "SYMBOL_LATEX", "assumption_latex", "statement_latex", "to_latex"]
