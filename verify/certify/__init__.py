"""Rigorous certification of inequalities between symbolic bounds, by interval branch and bound.

A claim `lhs <= rhs` (or `<`, `>=`, `>`) over a box of parameter intervals is decided with python-flint's Arb
balls: `rhs - lhs` is enclosed over a box; a box whose enclosure is certainly of the right sign is certified,
a point where it is certainly of the wrong sign is a counterexample, and anything else is bisected until every
box is decided or a limit is hit (then the answer is INCONCLUSIVE, with the undecided boxes).

Interval arithmetic is done on pairs of Arb balls (lower endpoint, upper endpoint), so that products and
monotone functions are evaluated at the endpoints and stay tight; every rounding is enclosed by the balls,
hence the enclosures are rigorous. Two accelerations are used, both sound:

* common factors are pulled out of `rhs - lhs` (``sympy.factor_terms``) and factors of certain sign over the
  whole box are dropped, which removes the dependency between, e.g., the `alpha S^2/(sigma^2 n^2)` of both sides;
* the monotonicity test: where the derivative of the difference in a variable has a certain sign over a box,
  the minimum lies on one face, and the box is replaced by that face.

Integer-declared symbols are evaluated as real intervals (a certificate over the reals covers the integers),
but bisected at integers, and a point tried as a counterexample has integer coordinates for them.
"""


from __future__ import annotations

from verify.certify.boxes import BoxSpec, _known_symbols, arb_bounds, arb_eval, parse_box
from verify.certify.claims import CLAIMS, Claim, run_claim
from verify.certify.intervals import DEFAULT_PREC, LOG_RATIO
from verify.certify.search import (
    CERTIFIED,
    COUNTEREXAMPLE,
    INCONCLUSIVE,
    RELATIONS,
    Certificate,
    _normalize_relation,
    certify,
)
from verify.parsing import parse_expression

__all__ = ["CERTIFIED", "CLAIMS", "COUNTEREXAMPLE", "DEFAULT_PREC", "INCONCLUSIVE", "LOG_RATIO", "RELATIONS", "BoxSpec",
           "Certificate", "Claim", "arb_bounds", "arb_eval", "certify", "parse_box", "parse_expression", "run_claim",
           "_known_symbols", "_normalize_relation"]
