"""Hypothesis strategies generated from a family's parameters and a theorem's assumptions.

Points are drawn constructively, so that nearly all of them satisfy every condition the strategy can read (after
the application's defaults and bindings are substituted):

- the one-variable conditions of a parameter (its SymPy facts, alpha > 1, 0 < delta < 1, |kappa| > 1, kappa != 0)
  are intersected into a union of intervals, and each value comes from one of them;
- an equality linear in a parameter (steps = (K - 1) m + j0 + 1, o_last = o) derives that parameter from the others,
  and its own conditions become conditions on them; a divisibility (steps a multiple of m) draws the quotient;
- a relation of the form coeff x**p + rest op 0 in a parameter x (eta < 1/beta, t <= n, (K - 1) m + j0 + 1 <= 500,
  gap**2 <= 2 s**2/(alpha (alpha - 1))) is solved for x once the others are drawn, in a dependency order; where the
  relations form a cycle, a parameter drawn first takes the loosest limit over the ranges of those not drawn yet;
- Max, Min, |.|, ceiling and floor are rewritten into plain relations where that is exact, and each branch of an Or
  gets a plan of its own;
- a parameter expression that a bound, a binding or a condition divides by is kept nonzero, and a nonnegative
  parameter that a positive product needs is drawn positive.

Edges get extra weight: n = 1, 2, K = 1, alpha near 1 and large, a step size near its limit, tiny and huge scales.
The caller still checks every point against every condition.

A family may declare a search region (`Family.search_region`: where its truths are computable within the caps, e.g.
a DP-SGD step's binomial weights above the float range); points are drawn inside it as inside any condition, but
for a branch of the theorem's conditions where a seeded probe finds no point there (drawn over its own domain). The
checker ignores it.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache

import mpmath
import sympy as sp
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from verify.families import family as get_family
from verify.model import Application, FromFamily, Theorem, condition_holds, evaluate

try:  # private: the pool of constants that hypothesis >= 6.131 harvests from local modules (see no_local_constants)
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover - older hypothesis: no such pool
    _providers = None


@contextlib.contextmanager
def no_local_constants() -> Iterator[None]:
    """Hide hypothesis's pool of constants harvested from the caller's modules during a search.

    Hypothesis draws about one value in twenty from the literals of every "local" module in sys.modules, so the
    points a seed generates would depend on what the caller imported (a pytest session, an editable install, a
    user's script), and the same seed would not give the same JSON. Its global constants stay in use. Versions of
    hypothesis without the pool (before 6.131) need nothing hidden; the hook is looked up, never assumed.
    """
    saved = getattr(_providers, "_get_local_constants", None)
    cache = getattr(_providers, "CONSTANTS_CACHE", None)
    if saved is None or cache is None or not hasattr(_providers, "Constants"):
        yield
        return
    _providers._get_local_constants = lambda: _providers.Constants()
    cache.cache.clear()
    try:
        yield
    finally:
        _providers._get_local_constants = saved
        cache.cache.clear()


INT_CAP = 10_000  # an integer parameter (K, n) is drawn from [lo, lo + INT_CAP] of its range ...
INT_DECADES = 3  # ... or, where its range starts higher, from [lo, lo * 10^INT_DECADES]: a family whose instances
# start at n = 4096 is searched over its own scales, not over 4096..14096 (too few records for most of its points)


def _int_top(lo: float) -> float:
    """The largest integer drawn for an integer range starting at `lo` (see INT_CAP)."""
    return lo + max(INT_CAP, (10**INT_DECADES - 1) * lo)
_MAX_BRANCHES = 8  # plans one strategy may mix: one per choice of a branch of each Or in the conditions
_FAR = 1e12  # stands in for an infinite end of a parameter not drawn yet, when a limit is relaxed over its range


@dataclass(frozen=True)
class Piece:
    """An interval of values: [lo, hi], each end open where strict."""

    lo: float
    hi: float
    lo_strict: bool = False
    hi_strict: bool = False


@dataclass(frozen=True)
class Limit:
    """The relation `coeff * x**power + rest > 0` (`greater`; else `< 0`; `!= 0` if `apart`), or-equal unless
    `strict`, for one parameter x: solved for x once coeff and rest can be evaluated."""

    coeff: sp.Expr
    rest: sp.Expr
    greater: bool
    strict: bool
    power: float = 1.0
    apart: bool = False  # the relation is `!= 0` instead

    @property
    def names(self) -> frozenset[str]:
        return frozenset(s.name for s in (self.coeff.free_symbols | self.rest.free_symbols))


@dataclass(frozen=True)
class Plan:
    """How to draw a point: `pieces` per drawn parameter, the `limits` and `divisors` of those drawn in `order`
    after the others, and the `derived` parameters computed last."""

    pieces: Mapping[str, tuple[Piece, ...]]
    integer: frozenset[str]
    limits: Mapping[str, tuple[Limit, ...]]
    divisors: Mapping[str, sp.Expr]
    order: tuple[str, ...]
    derived: Mapping[str, sp.Expr]


def _family_names(theorem: Theorem, app: Application) -> set[str]:
    """The family parameters the quantity (and FromFamily binds) need, but those a FromFamily bind moves."""
    fam = get_family(app.family)
    names = set(fam.parameter_names(theorem.quantity))
    for target in app.bind.values():
        if isinstance(target, FromFamily):  # the arguments it moves (`at`) are expressions, not drawn
            names |= set(fam.parameter_names(target.quantity)) - set(target.at)
    return names


def free_parameters(theorem: Theorem, app: Application) -> dict[str, sp.Symbol]:
    """The parameters a point must give: family parameters the quantity (and FromFamily binds) need, plus
    theorem-only symbols, minus those the application derives."""
    fam = get_family(app.family)
    names = _family_names(theorem, app)
    symbols = {p.name: p.symbol for p in fam.parameters if p.name in names}
    # a theorem symbol named like a family parameter the quantity does not need (alpha of an RDP-to-DP conversion on
    # an eps(delta) truth) is the theorem's own: drawn from its assumptions
    symbols |= {s.name: s for s in theorem.symbols if s.name not in names}
    return {k: v for k, v in sorted(symbols.items()) if k not in app.bind and k not in app.defaults}


def _substitutions(theorem: Theorem, app: Application) -> dict[sp.Symbol, sp.Basic]:
    """The application's defaults and bindings (but those to a family quantity), each expanded until it uses none of
    the others (c_cap = (alpha - 1) Max(D1, D2) with D1 and D2 bound too)."""
    fam = get_family(app.family)
    subs = {sp.Symbol(k, **_facts(theorem, fam, k)): sp.sympify(v) for k, v in {**app.defaults, **app.bind}.items()
            if not isinstance(v, FromFamily)}
    for _ in subs:
        expanded = {k: v.xreplace(subs) for k, v in subs.items()}
        if expanded == subs:
            break
        subs = expanded
    return subs


def _region(theorem: Theorem, app: Application) -> list[sp.Basic]:
    """The conditions of the family's search region on the family parameters of `theorem` on `app` (a theorem symbol
    named like a parameter its quantity does not need is the theorem's own); `conditions` substitutes the values the
    application fixes or derives into them."""
    names = _family_names(theorem, app)
    return [c for c in map(sp.sympify, get_family(app.family).search_region) if _names(c) <= names]


def conditions(theorem: Theorem, app: Application, region: bool = False) -> list[sp.Basic]:
    """Every condition a point must satisfy, with the application's bindings and defaults substituted; a derived
    value must also have the sign its symbols declare (sigma = sqrt(...) > 0), which the checker enforces.
    `region`: also the family's search region (`Family.search_region`, see `_region`)."""
    fam = get_family(app.family)
    subs = _substitutions(theorem, app)
    conds = [p.domain for p in fam.parameters] + [c.condition for c in fam.constraints]
    if region:
        conds += _region(theorem, app)
    conds += [a.condition for a in theorem.assumptions]
    conds = [sp.sympify(c).xreplace(subs) for c in conds]
    declared = [p.symbol for p in fam.parameters] + list(theorem.symbols)
    values = {k.name: v for k, v in subs.items()}
    return conds + [fact for sym in declared if sym.name in values for fact in _sign_facts(sym, values[sym.name])]


def _sign_facts(sym: sp.Symbol, value: sp.Basic) -> list[sp.Basic]:
    """value > 0 (or >= 0) where `sym` is declared positive (nonnegative) and takes `value`."""
    if not isinstance(value, sp.Expr):
        return []
    if sym.is_positive:
        return [sp.StrictGreaterThan(value, 0)]
    return [sp.GreaterThan(value, 0)] if sym.is_nonnegative else []


def _facts(theorem: Theorem, fam, name: str) -> dict:
    """The SymPy facts declared on the symbol called `name` (the theorem's first, then the family's)."""
    for s in list(theorem.symbols) + [p.symbol for p in fam.parameters]:
        if s.name == name:
            return s.assumptions0
    return {}


def _relations(cond: sp.Basic) -> list[sp.Rel]:
    """The relations a condition requires jointly (the arguments of an And; an Or inside is left to the caller)."""
    if isinstance(cond, sp.And):
        return [r for a in cond.args for r in _relations(a)]
    return [cond] if isinstance(cond, sp.Rel) else []


def _alternatives(cond: sp.Basic) -> list[list[sp.Rel]]:
    """The ways a condition can hold, each as relations holding jointly: one per argument of an Or."""
    if isinstance(cond, sp.Or):
        return [_relations(a) for a in sorted(cond.args, key=sp.default_sort_key)]
    return [_relations(cond)]


_COMPOUND = (sp.Max, sp.Min, sp.Abs, sp.ceiling, sp.floor)


def _compound(expr: sp.Basic) -> bool:
    return isinstance(expr, _COMPOUND) or (isinstance(expr, sp.Mul) and any(isinstance(f, (sp.Max, sp.Min))
                                                                          for f in expr.args))


def _rewritten(cond: sp.Basic, least: Mapping[sp.Symbol, sp.Expr]) -> sp.Basic:
    """An equivalent condition the analysis can read: Max(a, b) <= r as a <= r and b <= r, Max(a, b) > r as a > r or
    b > r (Min alike; f Max(a, b) as Max(f a, f b) where f > 0 follows from `least`), |a| > 0 as a != 0,
    ceiling(a) <= n and floor(a) >= n (n an integer) as a <= n and a >= n."""
    if isinstance(cond, (sp.And, sp.Or)):
        return type(cond)(*(_rewritten(a, least) for a in cond.args))
    if not isinstance(cond, sp.Rel) or isinstance(cond, (sp.Eq, sp.Ne)):
        return cond
    rel = cond.reversed if _compound(cond.rhs) and not _compound(cond.lhs) else cond
    lhs, rhs, op = rel.lhs, rel.rhs, type(rel)
    below = isinstance(rel, (sp.StrictLessThan, sp.LessThan))
    strict = isinstance(rel, (sp.StrictLessThan, sp.StrictGreaterThan))
    if isinstance(lhs, sp.Mul) and _compound(lhs):
        inner = next(f for f in lhs.args if isinstance(f, (sp.Max, sp.Min)))
        factor = lhs / inner
        if not factor.xreplace(least).is_positive:
            return rel
        return _rewritten(op(type(inner)(*(factor * a for a in inner.args)), rhs), least)
    if isinstance(lhs, (sp.Max, sp.Min)):
        parts = [_rewritten(op(a, rhs), least) for a in lhs.args]
        return sp.And(*parts) if below == isinstance(lhs, sp.Max) else sp.Or(*parts)
    if isinstance(lhs, sp.Abs) and rhs == 0 and strict and not below:
        return sp.Ne(lhs.args[0], 0)
    if isinstance(lhs, (sp.ceiling, sp.floor)) and rhs.is_number and float(rhs).is_integer():
        return _rewritten(_unrounded(lhs, rhs, below, strict), least)
    return rel


def _least(conds: list[sp.Basic], free: Mapping[str, sp.Symbol]) -> dict[sp.Symbol, sp.Expr]:
    """Each parameter with a finite least value lo as lo plus an unknown > 0 (>= 0 where lo itself is allowed), from
    its one-variable conditions: SymPy then sees that alpha - 1 > 0 where alpha > 1."""
    out = {}
    for x, sym in free.items():
        pieces = _ranges(sym, [r for c in conds for r in _relations(_by_name(c, free)) if _names(r) == {x}])
        lo = min((p.lo for p in pieces), default=-math.inf)
        if math.isfinite(lo):
            strict = all(p.lo_strict for p in pieces if p.lo == lo)
            out[sym] = sp.Rational(lo) + (sp.Dummy(positive=True) if strict else sp.Dummy(nonnegative=True))
    return out


def _unrounded(rounded: sp.Expr, n: sp.Expr, below: bool, strict: bool) -> sp.Basic:
    """ceiling(a) or floor(a) compared with the integer n, as a compared with a number."""
    a = rounded.args[0]
    if isinstance(rounded, sp.ceiling):  # ceiling(a) <= n iff a <= n; ceiling(a) >= n iff a > n - 1
        return (a <= (n - 1 if strict else n)) if below else (a > (n if strict else n - 1))
    return (a < (n if strict else n + 1)) if below else (a >= (n + 1 if strict else n))


def _names(expr: sp.Basic) -> set[str]:
    return {s.name for s in expr.free_symbols}


def _nonzero(expr: sp.Basic, free: Mapping[str, sp.Symbol]) -> list[sp.Rel]:
    """b != 0 for each expression b of the parameters that `expr` divides by (raises to a negative power)."""
    return [sp.Ne(base, 0) for base, exp in (p.as_base_exp() for p in expr.atoms(sp.Pow))
            if exp.is_negative and base.free_symbols and _names(base) <= set(free)]


def _positive_factors(rel: sp.Rel, free: Mapping[str, sp.Symbol]) -> list[sp.Rel]:
    """x > 0 for each nonnegative parameter x that is a factor of a product required to be > 0."""
    if isinstance(rel, sp.StrictGreaterThan) and rel.rhs == 0:
        product = rel.lhs
    elif isinstance(rel, sp.StrictLessThan) and rel.lhs == 0:
        product = rel.rhs
    else:
        return []
    out = []
    for factor in sp.Mul.make_args(product):
        base, exp = factor.as_base_exp()
        if isinstance(base, sp.Symbol) and base.name in free and exp.is_nonzero and free[base.name].is_nonnegative:
            out.append(sp.StrictGreaterThan(free[base.name], 0))
    return out


def _power_parts(diff: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, sp.Expr, sp.Expr] | None:
    """(coeff, rest, p) with diff = coeff * x**p + rest, coeff and rest free of x and p a nonzero number; None if diff
    is not of that form."""
    try:
        terms = sp.Add.make_args(sp.expand(diff))
    except Exception:  # noqa: BLE001 - SymPy cannot (a recursion): left to the caller's check
        return None
    coeff, rest, power = sp.S.Zero, sp.S.Zero, None
    for term in terms:
        factor, part = term.as_independent(x, as_Add=False)
        base, p = part.as_base_exp()
        if not part.has(x):
            rest += term
        elif base == x and p.is_number and p != 0 and power in (None, p):
            coeff, power = coeff + factor, p
        else:
            return None
    return None if power is None or coeff == 0 else (coeff, rest, power)


def _linear(rel: sp.Rel, x: sp.Symbol) -> Limit | None:
    """The relation as a limit on x: where it reads coeff x**p + rest op 0 (p = 1 unless x >= 0), as it is, as the
    numerator of a quotient whose denominator has a known sign, or in log form (m**(steps/m) <= 4096) when both
    sides are positive."""
    greater = isinstance(rel, (sp.StrictGreaterThan, sp.GreaterThan))
    parts = _power_parts(rel.lhs - rel.rhs, x)
    if parts is None:
        numer, denom = sp.fraction(sp.together(rel.lhs - rel.rhs))
        if denom.is_positive or denom.is_negative:
            parts, greater = _power_parts(numer, x), greater != bool(denom.is_negative)
    if parts is None and rel.lhs.is_positive and rel.rhs.is_positive:
        greater = isinstance(rel, (sp.StrictGreaterThan, sp.GreaterThan))
        parts = _power_parts(sp.expand_log(sp.log(rel.lhs), force=True)
                             - sp.expand_log(sp.log(rel.rhs), force=True), x)
    if parts is None or (parts[2] != 1 and not x.is_nonnegative):
        return None
    coeff, rest, power = parts
    return Limit(coeff, rest, greater, isinstance(rel, (sp.StrictGreaterThan, sp.StrictLessThan)), float(power),
                 isinstance(rel, sp.Ne))


def _solved(rel: sp.Eq, free: Mapping[str, sp.Symbol], integer: frozenset[str]) -> tuple[str, sp.Expr] | None:
    """(x, e) with rel equivalent to x = e, for a parameter x the relation is linear in with a constant coefficient
    (+-1 for an integer x, whose e must then be integer-valued); a side that is a parameter alone is preferred."""
    sides = [s.name for s in (rel.lhs, rel.rhs) if isinstance(s, sp.Symbol) and s.name in free]
    for name in sides + sorted(_names(rel) - set(sides)):
        parts = _power_parts(rel.lhs - rel.rhs, free[name])
        if parts is None or parts[2] != 1 or not parts[0].is_number:
            continue
        coeff, rest, _ = parts
        value = sp.expand(-rest / coeff)
        if name not in integer or (abs(coeff) == 1 and value.is_integer):
            return name, value
    return None


def _divisibility(rel: sp.Eq, free: Mapping[str, sp.Symbol], integer: frozenset[str]) -> tuple[str, sp.Expr] | None:
    """(x, d) for Mod(x, d) = 0 with x an integer parameter and d free of x."""
    mod = rel.lhs if rel.rhs == 0 else rel.rhs if rel.lhs == 0 else None
    if not isinstance(mod, sp.Mod) or not isinstance(mod.args[0], sp.Symbol):
        return None
    x, d = mod.args[0].name, mod.args[1]
    return (x, d) if x in integer and x in free and x not in _names(d) else None


def _eliminate(rels: list[sp.Rel], free: Mapping[str, sp.Symbol],
               integer: frozenset[str]) -> tuple[dict[str, sp.Expr], dict[str, sp.Expr], list[sp.Rel]]:
    """Turn the equalities between parameters into derived parameters (substituted into the other relations, their
    declared signs carried over) and divisors; returns (derived, divisors, the remaining relations)."""
    derived: dict[str, sp.Expr] = {}
    divisors: dict[str, sp.Expr] = {}
    pending = list(rels)
    for rel in list(pending):
        found = _divisibility(rel, free, integer) if isinstance(rel, sp.Eq) else None
        if found is not None:
            divisors[found[0]] = found[1]
            pending.remove(rel)
    busy = set(divisors) | {n for d in divisors.values() for n in _names(d)}
    while True:
        solvable = ((rel, _solved(rel, free, integer)) for rel in pending
                    if isinstance(rel, sp.Eq) and len(_names(rel)) > 1)
        rel, solved = next(((r, s) for r, s in solvable if s is not None and s[0] not in busy), (None, None))
        if solved is None:
            return derived, divisors, pending
        name, value = solved
        sub = {free[name]: value}
        derived = {k: v.xreplace(sub) for k, v in derived.items()} | {name: value}
        pending = [r.xreplace(sub) for r in pending + _sign_facts(free[name], value) if r is not rel]
        pending = [r for r in pending if isinstance(r, sp.Rel)]


def _start_set(sym: sp.Symbol) -> sp.Set:
    """The values the symbol's declared sign allows."""
    if sym.is_positive:
        return sp.Interval.open(0, sp.oo)
    return sp.Interval(0, sp.oo) if sym.is_nonnegative else sp.Reals


@cache
def _solution(rel: sp.Rel, sym: sp.Symbol) -> sp.Set | None:
    """The set of real x satisfying a one-variable relation, or None where SymPy cannot solve it."""
    plain = sp.Symbol("x", real=True)
    try:
        return sp.solve_univariate_inequality(rel.xreplace({sym: plain}), plain, relational=False)
    except Exception:  # noqa: BLE001 - SymPy cannot solve it (x = floor(x), a recursion): left to the caller's check
        return None


def _pieces(solutions: sp.Set) -> tuple[Piece, ...] | None:
    """A set of reals as intervals and points; None if it is not a union of those."""
    out = []
    for part in sp.Union.make_args(solutions) if isinstance(solutions, sp.Union) else (solutions,):
        if isinstance(part, sp.Interval):
            lo, hi = float(part.start), float(part.end)
            open_lo, open_hi = bool(part.left_open) and math.isfinite(lo), bool(part.right_open) and math.isfinite(hi)
            out.append(Piece(lo, hi, open_lo, open_hi))
        elif isinstance(part, sp.FiniteSet) and all(v.is_real for v in part):
            out += [Piece(float(v), float(v)) for v in part]
        elif part is not sp.S.EmptySet:
            return None
    return tuple(sorted(out, key=lambda p: (p.lo, p.hi)))


def _ranges(sym: sp.Symbol, rels: Iterable[sp.Rel]) -> tuple[Piece, ...]:
    """The values of a parameter that its declared sign and its one-variable relations allow."""
    allowed = _start_set(sym)
    for rel in rels:
        solutions = _solution(rel, sym)
        if solutions is not None:
            narrower = allowed.intersect(solutions)
            if _pieces(narrower) is not None:
                allowed = narrower
    return _pieces(allowed) or ()


def _integer_names(theorem: Theorem, app: Application, free: Mapping[str, sp.Symbol],
                   conds: list[sp.Basic]) -> frozenset[str]:
    """Integers by the symbol's facts, by the family (alpha is real in general, an integer on a series family), or by
    an x = floor(x) condition."""
    return frozenset({x for x, sym in free.items() if sym.is_integer} | {
        p.name for p in get_family(app.family).parameters if p.integer and p.name in free} | {
        x for x, sym in free.items() if any(_says_integer(c, sym) for c in conds)})


def _says_integer(cond: sp.Basic, x: sp.Symbol) -> bool:
    """cond is x = floor(x) (or x = ceiling(x)), the catalog's way of asking for an integer order."""
    if not isinstance(cond, sp.Eq) or x not in (cond.lhs, cond.rhs):
        return False
    other = cond.rhs if cond.lhs == x else cond.lhs
    return isinstance(other, (sp.floor, sp.ceiling)) and other.args[0] == x


def _by_name(expr: sp.Basic, free: Mapping[str, sp.Symbol]) -> sp.Basic:
    """expr with each symbol named like a free parameter replaced by that parameter's symbol."""
    return expr.xreplace({s: free[s.name] for s in expr.free_symbols if s.name in free and s != free[s.name]})


def plans(theorem: Theorem, app: Application, region: bool = True) -> list[Plan]:
    """Analyse the conditions of `theorem` on `app` into ways of drawing points (see the module's docstring): one per
    choice of a branch of each Or among them (at most _MAX_BRANCHES; beyond, the Ors are left to the caller).
    `region`: each branch inside the family's search region where it can draw a point there (`search_plans`)."""
    return search_plans(theorem, app, region)[0]


REGION_PROBES = 25  # draws tried (seeded, no truth computed) before a branch is searched outside the region


def search_plans(theorem: Theorem, app: Application, region: bool = True) -> tuple[list[Plan], tuple[str, ...]]:
    """`plans`, and the conditions of the family's search region they draw inside, as text (() where none does).

    With `region`, each branch of the conditions is drawn inside the region where a seeded probe of REGION_PROBES
    draws finds a point there, else over its own domain: assumptions that leave no point in the region, even through
    a relation between parameters (alpha >= 101 s against alpha spread <= 200 s), or one branch of an Or outside it,
    are still searched."""
    conds = _region(theorem, app) if region else []
    if not conds:
        return _plans(theorem, app, False), ()
    inside = _plans(theorem, app, True)
    drawable = [_drawable(r) for r in inside]
    if all(drawable):
        return inside, _texts(conds)
    whole = _plans(theorem, app, False)
    if len(inside) != len(whole):  # the region changed the branches: all inside, or none
        return (inside, _texts(conds)) if any(drawable) else (whole, ())
    chosen = [r if ok else w for r, w, ok in zip(inside, whole, drawable, strict=True)]
    return chosen, (_texts(conds) if any(drawable) else ())


def _texts(conds: list[sp.Basic]) -> tuple[str, ...]:
    return tuple(sp.sstr(c) for c in conds)


def _drawable(p: Plan) -> bool:
    """True if a seeded probe of the plan's strategy draws a point (no truth is computed)."""
    if not all(pieces for pieces in p.pieces.values()):
        return False
    config = settings(max_examples=REGION_PROBES, database=None, deadline=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
    try:
        with no_local_constants():
            find(_points(p), lambda _point: True, settings=config, random=random.Random(0))
    except (NoSuchExample, Unsatisfiable):
        return False
    return True


def _plans(theorem: Theorem, app: Application, region: bool) -> list[Plan]:
    free = free_parameters(theorem, app)
    conds = conditions(theorem, app, region)
    integer = _integer_names(theorem, app, free, conds)
    least = _least(conds, free)
    clauses = [_alternatives(_rewritten(_by_name(c, free), least)) for c in conds]
    clauses = [[[r for r in rels if _names(r) and _names(r) <= set(free)] for rels in c] for c in clauses]
    if math.prod(len(c) for c in clauses) > _MAX_BRANCHES:
        clauses = [c for c in clauses if len(c) == 1]
    defined = [_by_name(e, free) for e in [sp.sympify(theorem.bound), *_substitutions(theorem, app).values()]]
    return [_plan([r for rels in branch for r in rels], defined, free, integer)
            for branch in itertools.product(*clauses)]


def _plan(rels: list[sp.Rel], defined: list[sp.Basic], free: Mapping[str, sp.Symbol],
          integer: frozenset[str]) -> Plan:
    """The plan for points where `rels` hold and the expressions `defined` are defined (the relations in a fixed
    order: SymPy's sets iterate in an order that changes with the process's hash seed)."""
    rels = rels + [r for e in defined + rels if isinstance(e, sp.Basic) for r in _nonzero(e, free)]
    rels = sorted(set(rels), key=sp.default_sort_key)
    derived, divisors, rels = _eliminate(rels, free, integer)
    rels += [r for rel in rels for r in _positive_factors(rel, free)]
    drawn = {k: v for k, v in free.items() if k not in derived}
    single = {x: [r for r in rels if _names(r) == {x} and not _says_integer(r, sym)] for x, sym in drawn.items()}
    pieces = {x: _ranges(sym, single[x]) for x, sym in drawn.items()}
    coupled = [r for r in rels if len(_names(r)) > 1 and not isinstance(r, sp.Eq)]
    limits = {x: tuple(lim for r in coupled if x in _names(r) for lim in [_linear(r, sym)]
                       if lim is not None and not _sign_only(lim, pieces[x])) for x, sym in drawn.items()}
    return _settled(Plan(pieces, integer, limits, divisors, _order(limits, divisors, pieces), derived))


def _settled(p: Plan) -> Plan:
    """The plan with each parameter whose limits involve only parameters drawn after it (the first of a cycle) drawn
    independently: its limits, relaxed over their ranges, are constants."""
    pieces, limits, order = dict(p.pieces), dict(p.limits), list(p.order)
    for i, x in enumerate(p.order):
        if x not in p.divisors and _needs(x, p.limits, p.divisors) <= set(p.order[i + 1:]):
            room, _ = _limited(x, {}, p)
            pieces[x] = tuple(o for o in (_meet(piece, room) for piece in p.pieces[x]) if not _empty(o))
            limits[x] = ()
            order.remove(x)
    return Plan(pieces, p.integer, limits, p.divisors, tuple(order), p.derived)


def _sign_only(lim: Limit, pieces: tuple[Piece, ...]) -> bool:
    """coeff x**p op 0 for a parameter x > 0: a condition on coeff alone, no limit on x."""
    return lim.rest == 0 and all(p.lo >= 0 for p in pieces) and not any(p.lo == 0 and not p.lo_strict for p in pieces)


def _needs(x: str, limits: Mapping[str, tuple[Limit, ...]], divisors: Mapping[str, sp.Expr]) -> set[str]:
    out = {n for lim in limits[x] for n in lim.names} | (_names(divisors[x]) if x in divisors else set())
    return out - {x}


def _order(limits: Mapping[str, tuple[Limit, ...]], divisors: Mapping[str, sp.Expr],
           pieces: Mapping[str, tuple[Piece, ...]]) -> tuple[str, ...]:
    """The parameters with limits or a divisor, each after those it needs. In a cycle, first the one that most others
    waiting need, then the one with the fewest limits of constant coefficient (a slack such as j0 in
    (K - 1) m + j0 + 1 <= 500 is best drawn last)."""
    needs = {x: _needs(x, limits, divisors) for x in pieces}
    placed = {x for x in pieces if not needs[x]}
    pending = sorted(set(pieces) - placed)
    order: list[str] = []
    while pending:
        ready = [x for x in pending if needs[x] <= placed]
        if not ready:
            ready = [min(pending, key=lambda x: (-sum(x in needs[y] for y in pending),
                                                 sum(lim.coeff.is_number for lim in limits[x]), len(limits[x]), x))]
        for x in ready:
            order.append(x)
            placed.add(x)
            pending.remove(x)
    return tuple(order)


def _hull(p: Plan, name: str) -> tuple[float, float]:
    """The ends of the smallest interval holding the values of a parameter (integers for an integer one), infinite
    ones replaced by -+_FAR."""
    pieces = p.pieces[name]
    if name in p.integer:
        ends = [e for e in (_integer_ends(q) for q in pieces) if e is not None]
        pieces = tuple(Piece(float(lo), float(hi)) for lo, hi in ends)
    lo = min((q.lo for q in pieces), default=-_FAR)
    hi = max((q.hi for q in pieces), default=_FAR)
    return max(lo, -_FAR), min(hi, _FAR)


def _solve(lim: Limit, at: Mapping[str, float]) -> tuple[float, bool] | None:
    """The value the limit bounds its parameter by at `at`, and whether it is an upper bound (an upper bound -inf where
    no value satisfies it); None where it bounds nothing (an undefined value, a power bounded by a number <= 0).
    Computed in PRECISION_DPS digits: a coefficient beyond the floats (exp(6 alpha eps)) still bounds."""
    try:
        coeff, rest = evaluate(lim.coeff, at), evaluate(lim.rest, at)
        if not (mpmath.isfinite(coeff) and mpmath.isfinite(rest)) or isinstance(coeff + rest, mpmath.mpc):
            return None
        if coeff == 0:  # the relation reads rest op 0 here
            return None if _holds(lim, float(rest)) else (-math.inf, True)
        value, upper = -rest / coeff, lim.greater != (coeff > 0)
        if lim.power == 1:
            return float(value), upper
        return (float(value ** (1 / lim.power)), upper == (lim.power > 0)) if value > 0 else None
    except (ArithmeticError, ValueError, TypeError):
        return None


def _holds(lim: Limit, rest: float) -> bool:
    """Whether `rest op 0` holds, op the limit's relation."""
    if lim.apart:
        return rest != 0
    return (rest > 0 if lim.greater else rest < 0) or (rest == 0 and not lim.strict)


def _bound(lim: Limit, values: Mapping[str, float], p: Plan) -> tuple[float, bool] | None:
    """`_solve` at `values`, where parameters not drawn yet take the ends of their ranges that make the bound loosest;
    None where it bounds nothing at some of those ends, has a side depending on them, or is loosest at an infinite
    one."""
    later = sorted(lim.names - values.keys())
    found = []
    for corner in itertools.product(*(_hull(p, n) for n in later)):
        solved = _solve(lim, {**values, **dict(zip(later, corner, strict=True))})
        if solved is None:
            return None
        found.append((*solved, any(abs(v) == _FAR for v in corner)))
    if len({upper for _, upper, _ in found}) != 1:
        return None
    upper = found[0][1]
    value, _, far = (max if upper else min)(found)
    return None if far else (value, upper)


def _limited(x: str, values: Mapping[str, float], p: Plan) -> tuple[Piece, list[float]]:
    """The interval the coupled limits of x leave at `values`, and the values its inequations exclude."""
    lo, hi, lo_strict, hi_strict = -math.inf, math.inf, False, False
    excluded = []
    for lim in p.limits[x]:
        found = _bound(lim, values, p) if not lim.apart or lim.names <= values.keys() else None
        if lim.apart and found is not None and math.isfinite(found[0]):
            excluded.append(found[0])
            continue
        if found is None:
            continue
        v, upper = found
        if upper and v <= hi:
            hi, hi_strict = v, lim.strict or (hi_strict and v == hi)
        elif not upper and v >= lo:
            lo, lo_strict = v, lim.strict or (lo_strict and v == lo)
    return Piece(lo, hi, lo_strict, hi_strict), excluded


def _split(pieces: list[Piece], at: float) -> list[Piece]:
    """The pieces without the value `at`."""
    out = []
    for p in pieces:
        parts = (Piece(p.lo, at, p.lo_strict, True), Piece(at, p.hi, True, p.hi_strict)) if p.lo <= at <= p.hi else (p,)
        out += [q for q in parts if not _empty(q)]
    return out


def _meet(a: Piece, b: Piece) -> Piece:
    lo, lo_strict = max((a.lo, a.lo_strict), (b.lo, b.lo_strict))
    hi, hi_strict = min((a.hi, not a.hi_strict), (b.hi, not b.hi_strict))
    return Piece(lo, hi, lo_strict, not hi_strict)


def _integer_ends(p: Piece, step: int = 1) -> tuple[int, int] | None:
    """The least and greatest multiple of `step` in the piece (at most `_int_top` apart); None if it holds none."""
    if not p.lo <= p.hi or p.lo == math.inf or p.hi == -math.inf:
        return None
    lo, hi = p.lo / step, p.hi / step
    lo_i = lo + 1 if p.lo_strict and lo.is_integer() else math.ceil(max(lo, -INT_CAP))
    hi_i = hi - 1 if p.hi_strict and hi.is_integer() else math.floor(min(hi, _int_top(lo_i)))
    lo_i, hi_i = int(lo_i), int(min(hi_i, _int_top(lo_i)))
    return None if lo_i > hi_i else (lo_i, hi_i)


def _empty(p: Piece) -> bool:
    return p.lo > p.hi or (p.lo == p.hi and (p.lo_strict or p.hi_strict))


def _outside(p: Piece, value: float) -> bool:
    return (p.lo_strict and value == p.lo) or (p.hi_strict and value == p.hi)


def _log_uniform(lo_exp: float, hi_exp: float) -> st.SearchStrategy[float]:
    return st.floats(lo_exp, hi_exp).map(lambda e: float(10.0**e))


def _real(p: Piece) -> st.SearchStrategy[float]:
    """A real in the piece, with its edges and all scales weighted (none where the piece is empty)."""
    lo, hi, lo_strict, hi_strict = p.lo, p.hi, p.lo_strict, p.hi_strict
    if _empty(p) or (lo_strict and hi_strict and math.nextafter(lo, hi) == hi):
        return st.nothing()
    if lo == hi:
        return st.just(lo)
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
        if lo >= 0:
            parts += [st.sampled_from([0.01, 0.1, 0.5, 1.0, 2.0, 10.0]).map(lambda v: lo + v)]
        if lo != 0:
            parts += [_log_uniform(-7, -2).map(lambda f: lo + f * scale)]  # near the edge (alpha near 1)
        if not lo_strict:
            parts += [st.just(lo)]
    elif math.isfinite(hi):
        parts += [_log_uniform(-4, 3).map(lambda f: hi - f * max(1.0, abs(hi)))]
        if not hi_strict:
            parts += [st.just(hi)]
    else:
        parts += [st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), st.floats(-10, 10)]
    tiny = 0.0 if not math.isfinite(lo) else 1e-9 * (hi - lo if math.isfinite(hi) else max(1.0, abs(lo)))
    return st.one_of(*parts).filter(lambda v: math.isfinite(v) and lo <= v <= hi and (v == lo or v - lo > tiny)
                                   and not _outside(p, v))


def _integer(lo: int, hi: int) -> st.SearchStrategy[int]:
    hi = int(min(hi, _int_top(lo)))
    edges = [v for v in (lo, lo + 1, lo + 2, hi) if lo <= v <= hi]
    bottom, top = math.log10(max(lo, 1)), math.log10(max(hi, 1))  # log-uniform over [lo, hi], not [1, hi]: from
    # 1, a range such as n in [4096, 14096] rejected 87% of the draws (hypothesis gave up on 43 for every point tried)
    return st.one_of(st.sampled_from(edges), st.integers(lo, min(hi, lo + 20)),
                     st.floats(bottom, top).map(lambda e: int(round(10**e))).filter(lambda v: lo <= v <= hi))


def _independent(pieces: tuple[Piece, ...], integer: bool) -> st.SearchStrategy:
    """A value from one of the pieces, each with its edges weighted."""
    if integer:
        ends = [e for e in (_integer_ends(p) for p in pieces) if e is not None]
        return st.one_of(*(_integer(*e) for e in ends)) if ends else st.nothing()
    return st.one_of(*(_real(p) for p in pieces)) if pieces else st.nothing()


def _step(x: str, values: Mapping[str, float], p: Plan) -> int | None:
    """The divisor x must be a multiple of at `values` (1 if none); None where it is not a positive integer."""
    if x not in p.divisors:
        return 1
    try:
        d = float(evaluate(p.divisors[x], values))
    except (ArithmeticError, ValueError, TypeError):
        return None
    return int(d) if d >= 1 and d.is_integer() else None


def _derive(expr: sp.Expr, values: Mapping[str, float], integer: bool) -> float | int | None:
    try:
        value = float(evaluate(expr, values))
    except (ArithmeticError, ValueError, TypeError):
        return None
    if not math.isfinite(value):
        return None
    return int(value) if integer and value.is_integer() else value


# how a parameter whose range depends on others is placed in it, each with its edges and every scale weighted (drawn
# from these fixed strategies and placed by `_place_*`: strategies built while drawing would make a search depend on
# hypothesis's cache of strategies, so on what ran before it in the process)
_PICK = st.integers(0, 7)
_INTEGER_PLACE = st.one_of(st.tuples(st.just("end"), st.sampled_from([0, 1, 2, -1])),
                           st.tuples(st.just("small"), st.integers(0, 20)), st.tuples(st.just("log"), st.floats(0, 1)))
_REAL_PLACE = st.one_of(st.tuples(st.just("scale"), st.floats(-6, 6)), st.tuples(st.just("nice"), st.sampled_from(
    [0.01, 0.1, 0.5, 1.0, 2.0, 10.0])), st.tuples(st.just("uniform"), st.floats(0, 1)),
    st.tuples(st.just("near_lo"), st.floats(-8, -1)), st.tuples(st.just("near_hi"), st.floats(-8, -1)),
    st.tuples(st.just("end"), st.sampled_from([0.0, 1.0])))


def _place_integer(lo: int, hi: int, how: str, v: float) -> int:
    """The integer of [lo, hi] that a draw of _INTEGER_PLACE names: an end (lo, lo + 1, lo + 2, hi), lo plus a small
    offset, or a log-uniform one."""
    if how == "end":
        value = hi if v == -1 else lo + int(v)
    elif how == "small":
        value = lo + int(v)
    else:
        value = lo - 1 + round((hi - lo + 1) ** v)
    return min(max(value, lo), hi)


def _place_real(p: Piece, how: str, v: float) -> float | None:
    """The value of the piece that a draw of _REAL_PLACE names (None if it falls on a strict end): all scales from an
    end, nice offsets, uniform, near either end, or an end itself."""
    lo, hi = p.lo, p.hi
    if math.isfinite(lo) and math.isfinite(hi):
        width = hi - lo
        value = {"scale": lo + 10 ** -abs(v) * width, "nice": lo + min(v, width), "uniform": lo + v * width,
                 "near_lo": lo + 10**v * width, "near_hi": hi - 10**v * width, "end": lo + v * width}[how]
        value = lo + 1e-9 * width if 0 < value - lo < 1e-9 * width else value  # no denormal offsets (as _real)
    elif math.isfinite(lo) or math.isfinite(hi):
        end, sign = (lo, 1) if math.isfinite(lo) else (hi, -1)
        scale = max(1.0, abs(end))
        offset = {"scale": 10**v * scale, "nice": v, "uniform": 10 ** (12 * v - 6) * scale,
                  "near_lo": 10 ** (v + 1) * scale, "near_hi": 10 ** -(v + 2) * scale, "end": 0.0}[how]
        value = end + sign * offset
    else:
        value = {"scale": 10**v, "nice": v - 1, "uniform": 20 * v - 10, "near_lo": -(10**-v), "near_hi": 10**-v,
                 "end": v}[how]
    if _outside(p, value):  # a strict end: a billionth of the piece (or of the end's scale) inside it
        span = hi - lo if math.isfinite(hi - lo) else max(1.0, abs(lo if value == lo else hi))
        value = lo + 1e-9 * span if value == lo else hi - 1e-9 * span
    return value if math.isfinite(value) and p.lo <= value <= p.hi and not _outside(p, value) else None


def _dependent(draw, x: str, values: Mapping[str, float], p: Plan) -> float | int | None:
    """A value of x inside its pieces, its coupled limits at `values` and its divisor; None if there is none."""
    step, (room, excluded) = _step(x, values, p), _limited(x, values, p)
    options = [o for o in (_meet(piece, room) for piece in p.pieces[x]) if not _empty(o)] if step else []
    for value in excluded:
        options = _split(options, value)
    if x in p.integer:
        options = [e for e in (_integer_ends(o, step) for o in options) if e is not None]
    if not options:
        return None
    chosen = options[draw(_PICK) % len(options)]
    if x in p.integer:
        return step * _place_integer(*chosen, *draw(_INTEGER_PLACE))
    return _place_real(chosen, *draw(_REAL_PLACE))


def point_strategy(theorem: Theorem, app: Application, region: bool = True) -> st.SearchStrategy[dict[str, float]]:
    """Points (name -> value) for the free parameters of `theorem` on `app.family`, drawn inside its conditions
    wherever the strategy can read them (and, with `region`, inside the family's search region: see `plans`);
    points that still break one are rejected by the caller's check."""
    return strategy_of(plans(theorem, app, region))


def strategy_of(ps: list[Plan]) -> st.SearchStrategy[dict[str, float]]:
    """The points of the plans `ps`."""
    return st.one_of(*(_points(p) for p in ps))


def _points(p: Plan) -> st.SearchStrategy[dict[str, float]]:
    fixed = {x: _independent(pieces, x in p.integer) for x, pieces in p.pieces.items() if x not in p.order}

    @st.composite
    def points(draw) -> dict[str, float]:
        values = {x: draw(strategy) for x, strategy in fixed.items()}
        for x in p.order:
            values[x] = _dependent(draw, x, values, p)
            if values[x] is None:
                draw(st.nothing())
        for x, expr in p.derived.items():
            values[x] = _derive(expr, values, x in p.integer)
            if values[x] is None:
                draw(st.nothing())
        return {k: values[k] for k in sorted(values)}

    return points()


def admissible(theorem: Theorem, app: Application, point: Mapping[str, float], region: bool = False) -> bool:
    """True if `point` satisfies every condition, and with `region` the family's search region too (used to test the
    strategies themselves)."""
    return all(condition_holds(c, point) for c in conditions(theorem, app, region)
               if {s.name for s in c.free_symbols} <= set(point))
