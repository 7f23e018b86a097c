"""Hypothesis strategies generated from a family's parameters and a theorem's assumptions.

Each free parameter gets a strategy from its SymPy domain facts (positive, integer, ...), the constant bounds
found in the conditions (alpha > 1, 0 < delta < 1, gamma < 1) and the coupled limits (eta < 1/beta after the
application's bindings, t <= n), drawn in dependency order. Edges get extra weight: n = 1, 2, K = 1, alpha near 1
and large, a step size near its limit, tiny and huge scales.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp
from hypothesis import strategies as st

from verify.families import family as get_family
from verify.model import Application, FromFamily, Theorem, condition_holds, evaluate

INT_CAP = 10_000  # largest integer drawn for an unbounded integer parameter (K, n)


@dataclass(frozen=True)
class Limit:
    """`name` must stay below (upper) or above (lower) `expr`, an expression in other free parameters."""

    expr: sp.Expr
    upper: bool
    strict: bool


def free_parameters(theorem: Theorem, app: Application) -> dict[str, sp.Symbol]:
    """The parameters a point must give: family parameters the quantity (and FromFamily binds) need, plus
    theorem-only symbols, minus those the application derives."""
    fam = get_family(app.family)
    names = set(fam.parameter_names(theorem.quantity))
    for target in app.bind.values():
        if isinstance(target, FromFamily):
            names |= set(fam.parameter_names(target.quantity))
    symbols = {p.name: p.symbol for p in fam.parameters if p.name in names}
    # a theorem symbol named like a family parameter the quantity does not need (alpha of an RDP-to-DP conversion on
    # an eps(delta) truth) is the theorem's own: drawn from its assumptions
    symbols |= {s.name: s for s in theorem.symbols if s.name not in names}
    return {k: v for k, v in sorted(symbols.items()) if k not in app.bind and k not in app.defaults}


def _relations(cond: sp.Basic) -> list[sp.Rel]:
    """The relations a condition requires jointly (the arguments of an And; Or and Ne are left to filtering)."""
    if isinstance(cond, sp.And):
        return [r for a in cond.args for r in _relations(a)]
    return [cond] if isinstance(cond, sp.Rel) and not isinstance(cond, sp.Ne) else []


def conditions(theorem: Theorem, app: Application) -> list[sp.Basic]:
    """Every condition a point must satisfy, with the application's bindings and defaults substituted."""
    fam = get_family(app.family)
    subs = {sp.Symbol(k, **_facts(theorem, fam, k)): v for k, v in {**app.defaults, **app.bind}.items()
            if not isinstance(v, FromFamily)}
    conds = [p.domain for p in fam.parameters] + [c.condition for c in fam.constraints]
    conds += [a.condition for a in theorem.assumptions]
    return [c.xreplace(subs) if hasattr(c, "xreplace") else c for c in conds]


def _facts(theorem: Theorem, fam, name: str) -> dict:
    for s in list(theorem.symbols) + [p.symbol for p in fam.parameters]:
        if s.name == name:
            return s.assumptions0
    return {}


def _limit(rel: sp.Rel, x: sp.Symbol) -> Limit | None:
    """Solve a relation for x when it is linear in x with a nonzero coefficient."""
    try:
        diff = sp.expand(rel.lhs - rel.rhs)
        if not (diff.has(x) and diff.is_polynomial(x) and sp.degree(diff, x) == 1):
            return None
        coeff = diff.coeff(x, 1)
        if coeff.has(x) or coeff == 0:
            return None
        boundary = sp.simplify(-(diff - coeff * x) / coeff)
    except Exception:  # noqa: BLE001 - SymPy cannot (recursion, a non-polynomial part): left to filtering
        return None
    # relation "diff op 0"; x > boundary iff coeff > 0 for a '>' relation
    sign = _sign(coeff)
    if sign is None:
        return None
    greater = isinstance(rel, (sp.StrictGreaterThan, sp.GreaterThan))
    upper = greater != (sign > 0)
    strict = isinstance(rel, (sp.StrictGreaterThan, sp.StrictLessThan))
    return Limit(boundary, upper, strict)


def _interval_limits(rel: sp.Rel, x: sp.Symbol) -> list[Limit]:
    """Constant limits of a one-variable relation, from the convex hull of its solution set."""
    plain = sp.Symbol("x", real=True)
    try:
        solution = sp.solve_univariate_inequality(rel.xreplace({x: plain}), plain, relational=False)
    except Exception:  # noqa: BLE001 - SymPy cannot solve it (or recurses too deep): left to filtering
        return []
    if solution.is_empty:
        return []
    lo, hi = solution.inf, solution.sup
    out = []
    if lo.is_finite:
        out.append(Limit(lo, upper=False, strict=solution.contains(lo) is not sp.true))
    if hi.is_finite:
        out.append(Limit(hi, upper=True, strict=solution.contains(hi) is not sp.true))
    return out


def _sign(expr: sp.Expr) -> int | None:
    if expr.is_positive:
        return 1
    if expr.is_negative:
        return -1
    return None


def _analyse(theorem: Theorem, app: Application):
    free = free_parameters(theorem, app)
    consts: dict[str, list[Limit]] = {k: [] for k in free}
    coupled: dict[str, list[Limit]] = {k: [] for k in free}
    pins: dict[str, float] = {}
    for cond in conditions(theorem, app):
        for rel in _relations(cond):
            names = {s.name for s in rel.free_symbols}
            if not names or not names <= set(free):
                continue
            if isinstance(rel, sp.Eq):
                if len(names) == 1:
                    (x,) = names
                    try:
                        solutions = sp.solve(rel, free[x])
                    except Exception:  # noqa: BLE001 - e.g. alpha = floor(alpha): left to filtering
                        continue
                    if len(solutions) == 1 and solutions[0].is_number:
                        pins[x] = float(solutions[0])
                continue
            if len(names) == 1 and not isinstance(rel, sp.Eq):
                consts[next(iter(names))] += _interval_limits(rel, free[next(iter(names))])
                continue
            for x in names:
                lim = _limit(rel, free[x])
                if lim is None:
                    continue
                others = {s.name for s in lim.expr.free_symbols}
                (consts if not others else coupled)[x].append(lim)
    # keep couplings that respect a dependency order (no cycles)
    order, placed, deps = [], set(), {}
    pending = dict(coupled)
    while pending:
        ready = [x for x, lims in pending.items()
                 if all({s.name for s in lim.expr.free_symbols} <= placed for lim in lims)]
        if not ready:  # break a cycle: drop the couplings of the first pending name
            x = sorted(pending)[0]
            pending[x] = []
            continue
        for x in sorted(ready):
            order.append(x)
            placed.add(x)
            deps[x] = pending.pop(x)
    return free, consts, deps, order, pins


def _log_uniform(lo_exp: float, hi_exp: float) -> st.SearchStrategy[float]:
    return st.floats(lo_exp, hi_exp).map(lambda e: float(10.0**e))


def _real(lo: float, hi: float, lo_strict: bool, hi_strict: bool) -> st.SearchStrategy[float]:
    """A real in the interval, with its edges and all scales weighted (none where contradictory limits leave none)."""
    if lo > hi or (lo == hi and (lo_strict or hi_strict)) or (lo_strict and hi_strict and math.nextafter(lo, hi) == hi):
        return st.nothing()
    parts = []
    if math.isfinite(lo) and math.isfinite(hi):
        width = hi - lo
        parts += [st.floats(lo, hi, exclude_min=lo_strict, exclude_max=hi_strict, allow_subnormal=False)]
        parts += [_log_uniform(-8, -1).map(lambda f: lo + f * width),
                  _log_uniform(-8, -1).map(lambda f: hi - f * width)]
        if lo == 0 and hi > 0:  # a scale parameter below a limit: all orders of magnitude
            parts += [_log_uniform(-6, 0).map(lambda f: f * hi)]
    elif math.isfinite(lo):
        scale = max(1.0, abs(lo))
        parts += [_log_uniform(-6, 6).map(lambda f: lo + f * scale)]
        if lo > 0 or lo == 0:
            parts += [st.sampled_from([0.01, 0.1, 0.5, 1.0, 2.0, 10.0]).map(lambda v: lo + v)]
        if lo != 0:
            parts += [_log_uniform(-7, -2).map(lambda f: lo + f * scale)]  # near the edge (alpha near 1)
        if not lo_strict:
            parts += [st.just(lo)]
    elif math.isfinite(hi):
        parts += [_log_uniform(-4, 3).map(lambda f: hi - f * max(1.0, abs(hi)))]
    else:
        parts += [st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), st.floats(-10, 10)]
    tiny = 0.0 if not math.isfinite(lo) else 1e-9 * (hi - lo if math.isfinite(hi) else max(1.0, abs(lo)))
    return st.one_of(*parts).filter(lambda v: math.isfinite(v) and lo <= v <= hi and (v == lo or v - lo > tiny)
                                   and not (lo_strict and v == lo) and not (hi_strict and v == hi))


def _integer(lo: int, hi: int) -> st.SearchStrategy[int]:
    hi = min(hi, lo + INT_CAP)
    edges = [v for v in (lo, lo + 1, lo + 2, hi) if lo <= v <= hi]
    top = math.log10(max(hi, 1))
    return st.one_of(st.sampled_from(edges), st.integers(lo, min(hi, lo + 20)),
                     st.floats(0, top).map(lambda e: int(round(10**e))).filter(lambda v: lo <= v <= hi))


def _bounds(sym: sp.Symbol, limits: list[Limit], values: Mapping[str, float]):
    lo, hi, lo_strict, hi_strict = -math.inf, math.inf, False, False
    if sym.is_positive:
        lo, lo_strict = 0.0, True
    elif sym.is_nonnegative:
        lo = 0.0
    for lim in limits:
        try:
            v = float(evaluate(lim.expr, values))
        except (ArithmeticError, ValueError, TypeError):  # undefined here (a pole, a log of 0): the filter decides
            continue
        if lim.upper and v <= hi:
            hi, hi_strict = v, lim.strict or (hi_strict and v == hi)
        elif not lim.upper and v >= lo:
            lo, lo_strict = v, lim.strict or (lo_strict and v == lo)
    return lo, hi, lo_strict, hi_strict


# fractions in [0, 1] for parameters whose range depends on others: edges and every scale weighted
_FRACTION = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1), _log_uniform(-8, 0),
                      _log_uniform(-8, -1).map(lambda f: 1 - f))
_GROWTH = st.one_of(st.sampled_from([0.0, 1.0]), _log_uniform(-8, 3))


def _integer_ends(lo: float, hi: float, lo_strict: bool, hi_strict: bool) -> tuple[int, int] | None:
    """The least and greatest integer of the interval (at most INT_CAP apart); None if it holds none."""
    if not lo <= hi or lo == math.inf or hi == -math.inf:
        return None
    lo_i = math.floor(lo) + 1 if (lo_strict and lo == math.floor(lo)) else math.ceil(max(lo, -INT_CAP))
    hi_i = math.ceil(hi) - 1 if (hi_strict and hi == math.ceil(hi)) else math.floor(min(hi, lo_i + INT_CAP))
    return None if lo_i > hi_i else (lo_i, hi_i)


def _within(integer: bool, lo: float, hi: float, lo_strict: bool, hi_strict: bool, u: float, w: float):
    """The point of [lo, hi] at fraction u (or lo * (1 + w) when there is no upper end); None if empty."""
    if integer:
        ends = _integer_ends(lo, hi, lo_strict, hi_strict)
        return None if ends is None else int(ends[0] + round(u * (ends[1] - ends[0])))
    if lo > hi:
        return None
    if math.isfinite(hi):
        return hi * u if lo == 0 else lo + u * (hi - lo)
    return lo + w * max(1.0, abs(lo))


def _says_integer(cond: sp.Basic, x: sp.Symbol) -> bool:
    """cond is x = floor(x) (or x = ceiling(x)), the catalog's way of asking for an integer order."""
    if not isinstance(cond, sp.Eq):
        return False
    sides = {cond.lhs, cond.rhs}
    return x in sides and bool(sides & {sp.floor(x), sp.ceiling(x)})


def point_strategy(theorem: Theorem, app: Application) -> st.SearchStrategy[dict[str, float]]:
    """Points (name -> value) for the free parameters of `theorem` on `app.family`, mostly inside its
    assumptions; points that still break one are rejected by the caller's check."""
    free, consts, deps, order, pins = _analyse(theorem, app)
    dependent = [x for x in order if deps.get(x) and x not in pins]
    # integers: by the symbol's facts, or by the family (alpha is real in general, an integer on a series family)
    integer = {x for x, sym in free.items() if sym.is_integer} | {
        p.name for p in get_family(app.family).parameters if p.integer and p.name in free} | {
        x for x, sym in free.items() if any(_says_integer(c, sym) for c in conditions(theorem, app))}
    fixed: dict[str, st.SearchStrategy] = {}
    for x, sym in free.items():
        if x in pins:
            fixed[x] = st.just(pins[x])
        elif x not in dependent:
            lo, hi, lo_strict, hi_strict = _bounds(sym, consts[x], {})
            if x in integer:
                ends = _integer_ends(lo, hi, lo_strict, hi_strict)
                fixed[x] = st.nothing() if ends is None else _integer(*ends)
            else:
                fixed[x] = _real(lo, hi, lo_strict, hi_strict) if lo <= hi else st.nothing()

    @st.composite
    def points(draw) -> dict[str, float]:
        values = {x: draw(strategy) for x, strategy in fixed.items()}
        for x in dependent:
            lo, hi, lo_strict, hi_strict = _bounds(free[x], consts[x] + deps[x], values)
            value = _within(x in integer, lo, hi, lo_strict, hi_strict, draw(_FRACTION), draw(_GROWTH))
            if value is None:
                draw(st.nothing())
            values[x] = value
        return {k: values[k] for k in sorted(values)}

    return points()


def admissible(theorem: Theorem, app: Application, point: Mapping[str, float]) -> bool:
    """True if `point` satisfies every condition (used to test the strategies themselves)."""
    return all(condition_holds(c, point) for c in conditions(theorem, app)
               if {s.name for s in c.free_symbols} <= set(point))
