"""Short text and HTML forms of verify's objects for a terminal and a notebook (`__repr__`, `_repr_html_`,
`_repr_latex_`): one line that says what a thing is, or a small table, instead of a dataclass dump. They live in
verify.display, below the data model whose reprs use them; this module names them for the reports."""

from __future__ import annotations

from verify.display import (
    application_html,
    application_line,
    certificate_line,
    counterexample_html,
    counterexample_line,
    family_html,
    family_line,
    outcome_html,
    outcome_line,
    params_text,
    point_html,
    point_line,
    table,
    theorem_html,
    theorem_line,
)

__all__ = ["application_html", "application_line", "certificate_line", "counterexample_html", "counterexample_line",
           "family_html", "family_line", "outcome_html", "outcome_line", "params_text", "point_html", "point_line",
           "table", "theorem_html", "theorem_line"]
