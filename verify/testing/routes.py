"""Cheap certified routes near a point whose rigorous re-check ran out.

A point can look violated in floating point while its enclosure is slow (acb.integral at a fractional Rényi order,
a mixture of many components). Simpler points nearby often have cheap ones: the closed end of a parameter's domain
(q = 1, where a subsampled family is the Gaussian mechanism in closed form; n_a = 0; K = 1), an integer order (a
binomial series or a closed form), the same fractional part at a small order, fewer significant digits. The search
walks from the point to simpler ones that still look violated (`simpler_points`) and certifies those it can: a
certificate there is a counterexample at *that* point, never at the one the search drew.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache

import sympy as sp

from verify.model import Family, Parameter, breaks_facts, declared_facts


@lru_cache(maxsize=512)
def _closed_ends(symbol: sp.Symbol, domain: sp.Basic) -> tuple[float, ...]:
    """The finite ends of a parameter's domain that belong to it (q in (0, 1]: 1; n_a >= 0: 0), from SymPy's set of
    the domain's condition and the symbol's declared facts (positive, nonnegative)."""
    positive, nonnegative, _ = declared_facts(symbol)
    facts = sp.Interval.open(0, sp.oo) if positive else sp.Interval(0, sp.oo) if nonnegative else sp.S.Reals
    try:
        found = facts.intersect(domain.as_set() if domain is not sp.true else sp.S.Reals)
    except (NotImplementedError, TypeError, ValueError, AttributeError):  # a domain SymPy cannot solve for its symbol
        return ()
    if not isinstance(found, sp.Interval):
        return ()
    ends = []
    for end, open_ in ((found.right, found.right_open), (found.left, found.left_open)):
        if not open_ and end.is_finite and end.is_real:
            ends.append(float(end))
    return tuple(ends)


def _inside(param: Parameter | None, value: float) -> bool:
    """`value` lies in the parameter's domain and declared facts (a declared symbol's: the search checks them)."""
    if not math.isfinite(value):
        return False
    if param is None:
        return True
    if breaks_facts(declared_facts(param.symbol), value) or param.integer and not float(value).is_integer():
        return False
    try:
        return bool(param.domain.subs(param.symbol, value) is not sp.false)
    except (TypeError, ValueError):
        return False


def simple_values(param: Parameter | None, value: float) -> list[list[float]]:
    """Values simpler than `value` for one parameter (`param` None: a symbol the bound declares), by kind, simplest
    kind first: the closed ends of its domain (nearest 0 first: q = 1, n_a = 0, K = 1); the nearest integer and the
    two around it; the value with its integer part lowered as far as the domain allows (a fractional order kept at a
    small order) and the value to 2 and 1 significant digits. Only values inside the domain, other than `value`."""
    ends = sorted(_closed_ends(param.symbol, param.domain), key=abs) if param is not None else []
    integers, rest = [], []
    if math.isfinite(value):
        integers = [float(round(value)), float(math.floor(value)), float(math.ceil(value))]
        fraction = value - math.floor(value)
        if fraction and value > 1:  # the smallest of fraction, fraction + 1, ... inside the domain (few tried)
            rest += [fraction + k for k in range(min(math.floor(value), 8)) if _inside(param, fraction + k)][:1]
        rest += [float(f"{value:.2g}"), float(f"{value:.1g}")]
    seen: set[float] = {value}
    kinds = []
    for kind in (ends, integers, rest):
        kinds.append([v for v in kind if v not in seen and not seen.add(v) and _inside(param, v)])
    return kinds


def simpler_points(family: Family, point: Mapping[str, float],
                   looks_violated: Callable[[dict[str, float]], bool]) -> list[dict[str, float]]:
    """Points ever simpler than `point` that still look violated (`looks_violated`, the float filter), simplest
    first. A walk in passes, one kind of `simple_values` each (the domains' closed ends first, where a family is
    often in closed form, then integers, then fewer digits): each parameter in turn (by name) moves to its first
    value of the kind that keeps the point looking violated. The walk's last point comes first, then the ones
    before it."""
    params = {p.name: p for p in family.parameters}
    walk: list[dict[str, float]] = []
    current = dict(point)
    for kind in range(3):
        for name in sorted(point):
            for value in simple_values(params.get(name), float(current[name]))[kind]:
                candidate = {**current, name: value}
                if looks_violated(candidate):
                    current = candidate
                    walk.append(candidate)
                    break
    return walk[::-1]
