"""The data model: parameters, assumptions, instance families and theorems.

A `Family` is an instance with named, domain-typed parameters and exact (or estimated) ground truths.
A `Theorem` is a symbolic claim about one `Quantity` of such instances, with named assumptions, a
direction, a source and, per family it applies to, the verdict we expect on a default grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cache, cached_property, lru_cache
from types import MappingProxyType

import mpmath
import sympy as sp

from verify.bounds import HELPERS
from verify.display import family_html, family_line, statement_latex, theorem_html, theorem_line
from verify.errors import (
    AssumptionError,
    DeadlineExceeded,
    ParameterError,
    PluginError,
    PluginPointError,
    VerifyError,
    did_you_mean,
)
from verify.limits import deadline, remaining
from verify.quantities import Quantity
from verify.results import Truth, Verdict
from verify.stable_powers import log1p, with_stable_powers

PRECISION_DPS = 50  # digits used to evaluate bounds and assumptions
_REL_TOL = 1e-12  # the two sides of an assumption's relation are 'equal' within this relative tolerance
_FLOAT_CLEAR = 1e-8  # float sides further apart than this (relative) decide a relation without mpmath


class Direction(str, Enum):
    """What the bound claims about the true quantity."""

    UPPER = "upper"  # bound >= truth
    LOWER = "lower"  # bound <= truth
    EXACT = "exact"  # bound == truth


class Variant(str, Enum):
    """Which form of a result an entry encodes."""

    PRINTED = "printed"  # as the paper prints it
    PROOF = "proof"  # what the paper's own proof gives
    CORRECTED = "corrected"  # our correction of a printed error
    DERIVED = "derived"  # a reference result derived here, not in the paper
    MISAPPLIED = "misapplied"  # the printed result used outside its hypotheses (a finding, expected to fail)
    FORMALISED = "formalised"  # verify's formal reading of a claim the paper makes only informally


def _compile(expr: sp.Expr) -> tuple[tuple[str, ...], Callable]:
    """mpmath function of the symbols (sorted by name); 1 - exp(x) and log(1 + x) become expm1 and log1p, so
    that a tiny x (e.g. a bound's exp(-c eta K) with c ~ 1e-60) does not cancel to 0 at PRECISION_DPS digits."""
    symbols = sorted(expr.free_symbols, key=str)
    return tuple(s.name for s in symbols), sp.lambdify(symbols, stable_form(expr), modules=[HELPERS, "mpmath"])


_STABLE: dict[sp.Basic, sp.Basic] = {}


def stable_form(expr: sp.Basic) -> sp.Basic:
    """`expr` with 1 - exp(x) as expm1 and log(1 + x) as log1p (`_stable`, once per expression): the form both the
    PRECISION_DPS-digit value and the Arb enclosure of a bound evaluate, so neither cancels at a tiny x."""
    if expr not in _STABLE:
        _STABLE[expr] = _stable(expr)
    return _STABLE[expr]


REWRITE_SECONDS = 2.0  # SymPy's log1p rewrite factors every log's argument: a degree-20 polynomial takes ~15 s


def _stable(expr: sp.Basic) -> sp.Basic:
    """`expr` with 1 - exp(x) as expm1 and log(1 + x) as log1p: SymPy's rewrites (which factor) within
    REWRITE_SECONDS, else the same patterns replaced without factoring, so parse-time work stays bounded."""
    if not isinstance(expr, sp.Expr):
        return expr
    # a Float constant as its exact binary value: SymPy's rewrites factor in 53-bit floats (log(0.3 x + 0.1) became
    # log(1.0 x + 0.333333333333333) - 1.20397280432594), and Arb encloses this form (a float is exact there)
    expr = expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})
    expr = with_stable_powers(expr)  # 1 - (1 + u)^e as -Powm1(u, e): cancelled at eta lam < 1e-50
    if not expr.has(sp.exp, sp.log):  # nothing more to rewrite (most of the catalog's bounds; SymPy's rewrites still
        return expr  # walked and factored them: 0.4 s a process)
    from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize

    try:
        with deadline(REWRITE_SECONDS, "the log1p/expm1 rewrite"):
            return optimize(expr, [expm1_opt, log1p_opt])
    except DeadlineExceeded:
        if remaining() <= 0:  # an enclosing deadline (the point's, a search's) stopped it: no fallback, none kept
            raise
    plain = expr.replace(lambda e: isinstance(e, sp.log) and e.args[0].is_Add and sp.S.One in e.args[0].args,
                         lambda e: log1p(e.args[0] - 1))
    try:
        with deadline(REWRITE_SECONDS, "the expm1 rewrite"):
            return optimize(plain, [expm1_opt])
    except DeadlineExceeded:
        if remaining() <= 0:
            raise
        return plain


def evaluate(expr: sp.Expr, values: Mapping[str, float]) -> mpmath.mpf:
    """Evaluate a SymPy expression at float values with PRECISION_DPS digits (once per expression and values: a
    default, a bind or an assumption's side over a few parameters takes one value on many grid points)."""
    names, fn = _compiled(expr)
    missing = [nm for nm in names if nm not in values]
    if missing:
        raise ParameterError(f"no value for {', '.join(missing)} in {sp.sstr(expr)}")
    args = tuple(values[nm] for nm in names)
    try:
        hash(args)
    except TypeError:  # an unhashable value (a 0-d array): evaluated, not remembered
        return _evaluated.__wrapped__(fn, args)
    return _evaluated(fn, args)


@lru_cache(maxsize=1 << 16)
def _evaluated(fn: Callable, args: tuple) -> mpmath.mpf:
    """A compiled expression (`_compiled`) at `args` in PRECISION_DPS digits, once per function and arguments: mpmath
    has no signed zero, so equal arguments (0.0 and -0.0 included) give equal values."""
    with mpmath.workdps(PRECISION_DPS):
        return fn(*(mpmath.mpf(a) for a in args))


_CACHE: dict[sp.Basic, tuple[tuple[str, ...], Callable]] = {}
_FLOAT_CACHE: dict[sp.Basic, tuple[tuple[str, ...], Callable] | None] = {}


def _float_side(expr: sp.Basic, values: Mapping[str, float]) -> float | None:
    """A relation side in float64 (math module), or None where it cannot be had (no float form, an error, a
    non-finite or complex result): the caller then evaluates it in PRECISION_DPS digits."""
    if expr not in _FLOAT_CACHE:
        try:
            symbols = sorted(expr.free_symbols, key=str)
            _FLOAT_CACHE[expr] = (tuple(s.name for s in symbols),
                                  sp.lambdify(symbols, expr, modules=[HELPERS, "math"]))
        except Exception:  # noqa: BLE001 - no float form: always use mpmath
            _FLOAT_CACHE[expr] = None
    compiled = _FLOAT_CACHE[expr]
    if compiled is None:
        return None
    names, fn = compiled
    try:
        out = fn(*(float(values[nm]) for nm in names))
    except Exception:  # noqa: BLE001 - overflow, domain errors, missing values: decided in mpmath
        return None
    return float(out) if isinstance(out, (int, float)) and math.isfinite(out) else None


def _float_relation(cond: sp.Rel, values: Mapping[str, float]) -> bool | None:
    """A relation decided in float64 where its sides are further apart than _FLOAT_CLEAR relative (far beyond float
    rounding, amplified up to ~1e7 by the expression); None where they are close or a side has no float value."""
    lhs = _float_side(cond.lhs, values)
    rhs = _float_side(cond.rhs, values) if lhs is not None else None
    if rhs is None or abs(lhs - rhs) <= _FLOAT_CLEAR * max(1.0, abs(lhs), abs(rhs)):
        return None
    if isinstance(cond, sp.Eq):
        return False
    if isinstance(cond, sp.Ne):
        return True
    return bool(lhs < rhs) if isinstance(cond, (sp.StrictLessThan, sp.LessThan)) else bool(lhs > rhs)


def _exact_side(expr: sp.Basic) -> tuple[str | None, float] | None:
    """A relation side that is a symbol (name, 0) or an integer a float holds exactly (None, value); else None."""
    if isinstance(expr, sp.Symbol):
        return expr.name, 0.0
    if isinstance(expr, sp.Integer) and abs(int(expr)) <= 2**53:
        return None, float(int(expr))
    return None


_EXACT_SIDES: dict[sp.Rel, tuple | None] = {}
# each relation from its two sides and whether they are equal within _REL_TOL (non-strict ones and Eq accept that)
_RELATIONS = {sp.Eq: lambda a, b, close: close, sp.Ne: lambda a, b, close: a != b,
              sp.StrictLessThan: lambda a, b, close: a < b, sp.LessThan: lambda a, b, close: close or a < b,
              sp.StrictGreaterThan: lambda a, b, close: a > b, sp.GreaterThan: lambda a, b, close: close or a > b}


def _exact_relation(cond: sp.Rel, values: Mapping[str, float]) -> bool | None:
    """A relation between a symbol and a symbol or an integer (K >= 1, t <= n), decided as `condition_holds` decides
    it in mpmath, from floats that are exact here: None where a side is anything else."""
    if cond not in _EXACT_SIDES:
        sides = (_exact_side(cond.lhs), _exact_side(cond.rhs))
        _EXACT_SIDES[cond] = sides if None not in sides and type(cond) in _RELATIONS else None
    sides = _EXACT_SIDES[cond]
    if sides is None:
        return None
    (lname, lhs), (rname, rhs) = sides
    if lname is not None:
        lhs = values.get(lname)
    if rname is not None:
        rhs = values.get(rname)
    if type(lhs) is not float or type(rhs) is not float or not (math.isfinite(lhs) and math.isfinite(rhs)):
        return None
    close = abs(lhs - rhs) <= _REL_TOL * max(1.0, abs(lhs), abs(rhs))
    return bool(_RELATIONS[type(cond)](lhs, rhs, close))


def _compiled(expr: sp.Expr) -> tuple[tuple[str, ...], Callable]:
    if expr not in _CACHE:
        _CACHE[expr] = _compile(sp.sympify(expr))
    return _CACHE[expr]


def is_condition(cond: object) -> bool:
    """True for what `condition_holds` decides: relations and True/False joined by And, Or and Not (SymPy counts a
    Symbol as a Boolean too, but `alpha` is no condition)."""
    if isinstance(cond, (bool, sp.logic.boolalg.BooleanAtom, sp.Rel)):
        return True
    if isinstance(cond, (sp.And, sp.Or, sp.Not)):
        return all(is_condition(a) for a in cond.args)
    return False


def condition_holds(cond: sp.Basic, values: Mapping[str, float]) -> bool:
    """Evaluate a SymPy condition (relations joined by And/Or/Not) at a point."""
    if cond is sp.true or cond is True:
        return True
    if cond is sp.false or cond is False:
        return False
    if isinstance(cond, sp.And):
        return all(condition_holds(a, values) for a in cond.args)
    if isinstance(cond, sp.Or):
        return any(condition_holds(a, values) for a in cond.args)
    if isinstance(cond, sp.Not):
        return not condition_holds(cond.args[0], values)
    if isinstance(cond, sp.Rel):
        exact = _exact_relation(cond, values)
        if exact is not None:
            return exact
        fast = _float_relation(cond, values)
        if fast is not None:
            return fast
        try:
            lhs, rhs = evaluate(cond.lhs, values), evaluate(cond.rhs, values)
        except (ZeroDivisionError, ValueError, OverflowError):
            return False  # a side that is undefined here satisfies no relation
        if isinstance(lhs, mpmath.mpc) or isinstance(rhs, mpmath.mpc) or mpmath.isnan(lhs) or mpmath.isnan(rhs):
            return False  # a side that is not a real number satisfies no relation
        # non-strict relations and equalities accept sides equal within _REL_TOL (float inputs and derived values
        # are not exact: 10 * 0.2 > 2); strict ones are decided exactly (alpha = 1 + 1e-13 is > 1)
        close = abs(lhs - rhs) <= _REL_TOL * max(1, abs(lhs), abs(rhs))
        return bool(_RELATIONS[type(cond)](lhs, rhs, close))
    raise TypeError(f"not a condition: {cond!r}")


@lru_cache(maxsize=1 << 16)
def _holds(cond: sp.Basic, names: tuple[str, ...], args: tuple) -> bool:
    """`condition_holds` at the values `args` of the symbols `names` (all of the condition's), once per condition and
    values."""
    return condition_holds(cond, dict(zip(names, args, strict=True)))


def as_number(value: object, what: str) -> float:
    """`value` as a float; a ParameterError naming `what` for anything that is not a real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) and not hasattr(value, "__float__"):
        raise ParameterError(f"{what} must be a number, got {value!r}")
    try:
        out = float(value)
    except OverflowError:
        raise ParameterError(f"{what} is beyond the float range (about 1.8e308)") from None
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number, got {value!r}") from None
    if isinstance(value, int) and int(out) != value:  # 2**53 + 1 would silently become 2**53
        raise ParameterError(f"{what} = {value} is not exactly a float (it would round to {int(out)})")
    return out


def check_declared_domain(owner: str, symbol: sp.Symbol, value: float) -> None:
    """Enforce the SymPy facts a symbol was declared with (positive, nonnegative, integer).

    Conditions such as `sigma > 0` evaluate to True at construction for a positive symbol, so the facts
    themselves are checked here against the number.
    """
    if not math.isfinite(value):
        raise ParameterError(f"{owner}: parameter {symbol.name} must be a finite number, got {value}")
    if breaks_facts(declared_facts(symbol), value):
        raise AssumptionError(owner, f"domain of {symbol.name}", _domain_failure(symbol, value), {symbol.name: value})


def breaks_facts(facts: tuple[bool, bool, bool], value: float) -> bool:
    """True if a finite `value` breaks one of the declared `facts` (positive, nonnegative, integer)."""
    positive, nonnegative, integer = facts
    return bool((positive and not value > 0) or (nonnegative and not value >= 0)
                or (integer and not float(value).is_integer()))


def _domain_failure(symbol: sp.Symbol, value: float) -> str:
    """The first declared fact of `symbol` that a finite `value` breaks, as text."""
    positive, nonnegative, integer = declared_facts(symbol)
    facts = [(positive, value > 0, f"{symbol.name} > 0"), (nonnegative, value >= 0, f"{symbol.name} >= 0"),
             (integer, float(value).is_integer(), f"{symbol.name} integer")]
    return next(text for declared, ok, text in facts if declared and not ok)


@cache
def declared_facts(symbol: sp.Symbol) -> tuple[bool, bool, bool]:
    """(positive, nonnegative, integer) as declared on the symbol (SymPy's assumption queries are slow)."""
    return bool(symbol.is_positive), bool(symbol.is_nonnegative), bool(symbol.is_integer)


@dataclass(frozen=True)
class Assumption:
    """A named hypothesis, as a SymPy condition over parameter and theorem symbols."""

    name: str
    condition: sp.Basic
    description: str

    def __post_init__(self) -> None:
        if not is_condition(self.condition):
            raise ParameterError(f"assumption {self.name} ({self.description}): {sp.sstr(self.condition)} is not a "
                                 "condition; write relations (<, <=, >, >=) joined by & and |")

    @cached_property
    def names(self) -> frozenset[str]:
        """The names of the condition's free symbols (SymPy recomputes free_symbols on every access)."""
        return frozenset(s.name for s in self.condition.free_symbols)

    @cached_property
    def text(self) -> str:
        return sp.sstr(self.condition)

    @cached_property
    def _order(self) -> tuple[str, ...]:
        return tuple(sorted(self.names))

    def holds(self, values: Mapping[str, float]) -> bool:
        """`condition_holds` at `values`, once per assumption and values of its symbols."""
        condition = self.condition
        if condition is sp.true:  # a domain SymPy decided from the symbol's declaration (sigma > 0, sigma positive)
            return True
        order = self._order
        args = tuple([values.get(name) for name in order])
        try:
            hash(args)
        except TypeError:  # an unhashable value (a 0-d array): checked, not remembered
            return condition_holds(condition, values)
        if None in args:
            return condition_holds(condition, values)
        return _holds(condition, order, args)

    def check(self, owner: str, values: Mapping[str, float]) -> None:
        """Raise AssumptionError naming this assumption if it fails at `values`."""
        if not self.holds(values):
            used = {name: values[name] for name in sorted(self.names) if name in values}
            raise AssumptionError(owner, self.name, self.text, used, self.description)


@dataclass(frozen=True)
class Parameter:
    """A named, domain-typed parameter of an instance family."""

    symbol: sp.Symbol
    domain: sp.Basic  # condition on the symbol alone, e.g. alpha > 1
    description: str
    integer: bool = False
    quantities: tuple[Quantity, ...] = ()  # only needed for these quantities; () means for all

    @property
    def name(self) -> str:
        return self.symbol.name

    def __post_init__(self) -> None:  # a plain True/False (any value; none) is a SymPy truth value like the others
        object.__setattr__(self, "domain", sp.sympify(self.domain))

    def needed_for(self, quantity: Quantity) -> bool:
        return not self.quantities or quantity in self.quantities


TruthFn = Callable[..., Truth]

# the names of verify's own families (verify.families.BUILT_IN), which verify.families declares here as it builds them
# (`declare_built_in`): the model sits below the families and does not import them
_BUILT_IN: set[str] = set()


def declare_built_in(names: Collection[str]) -> None:
    """Make `names` verify's own families for `Family.truth_validated`: an exception inside their truths is a bug of
    verify's (raised as it is), not a point's PluginPointError. verify.families calls it once, with its BUILT_IN."""
    _BUILT_IN.update(names)


@dataclass(frozen=True)
class Family:
    """An instance family: named parameters, structural facts, and ground truths per quantity.

    `facts` name structural properties of the instance (e.g. "unconstrained", "quadratic_loss") that
    theorems may require; `truths` map each supported quantity to a function of the parameters.
    """

    name: str
    description: str
    parameters: tuple[Parameter, ...]
    facts: frozenset[str]
    truths: Mapping[Quantity, TruthFn]
    method: str  # how the truth is obtained, in words
    constraints: tuple[Assumption, ...] = ()  # conditions linking parameters, e.g. 1 <= t <= n
    expensive: bool = False  # truths cost ~0.1 s or more (grids, quadrature, sampling): search them sparingly
    estimated: bool = False  # Monte-Carlo truths: never certify a violation, so the run's falsifier skips them
    # where a search draws (verify.testing.strategies): conditions on the parameters inside which the truths are
    # computed within the default caps, with room to spare at their edges (a search weights edges); the checker
    # ignores them, and a branch of a theorem's conditions that leaves no point inside them is drawn over its domain
    search_region: tuple[sp.Basic, ...] = ()

    def __repr__(self) -> str:
        return family_line(self)

    def _repr_html_(self) -> str:
        return family_html(self)

    def parameter_names(self, quantity: Quantity = Quantity.RENYI) -> tuple[str, ...]:
        return self._names[quantity]

    @cached_property
    def _domains(self) -> dict[str, Assumption]:
        return {p.name: Assumption(f"domain of {p.name}", p.domain, p.description) for p in self.parameters}

    @cached_property
    def _known(self) -> frozenset[str]:
        return frozenset(p.name for p in self.parameters)

    @cached_property
    def _needed(self) -> dict[Quantity, tuple[tuple[Parameter, Assumption], ...]]:
        """Per quantity, the parameters it needs, in order, with their domains (`validate`'s loop)."""
        return {q: tuple((p, self._domains[p.name]) for p in self.parameters if p.needed_for(q)) for q in Quantity}

    @cached_property
    def _names(self) -> dict[Quantity, tuple[str, ...]]:
        return {q: tuple(p.name for p in self.parameters if p.needed_for(q)) for q in Quantity}

    def validate(self, quantity: Quantity, params: Mapping[str, float]) -> dict[str, float]:
        """Check names, NaNs, integrality and domains; return the parameters the quantity needs."""
        if quantity not in self.truths:
            raise ParameterError(f"family {self.name} has no truth for quantity '{quantity.value}'")
        known = self._known
        unknown = sorted(set(params) - known)
        if unknown:
            hints = "".join(did_you_mean(u, known) for u in unknown)
            raise ParameterError(f"family {self.name}: unknown parameter(s) {', '.join(unknown)}{hints}; "
                                 f"its parameters are {', '.join(p.name for p in self.parameters)}")
        out: dict[str, float] = {}
        owner = f"family {self.name}"
        for p, domain in self._needed[quantity]:
            name = p.name
            if name not in params:
                raise ParameterError(f"family {self.name}: missing parameter {name} ({p.description})")
            value = params[name]
            if type(value) is not float:  # a float is its own number (the common case: no message built)
                value = as_number(value, f"family {self.name}: parameter {name}")
            if math.isnan(value):
                raise ParameterError(f"family {self.name}: parameter {name} is NaN")
            if p.integer and value != int(value):
                raise ParameterError(f"family {self.name}: parameter {name} must be an integer, got {value:g}")
            out[name] = value
            check_declared_domain(owner, p.symbol, value)
            domain.check(owner, out)
        for c in self.constraints:
            if c.names <= out.keys():
                c.check(f"family {self.name}", out)
        return out

    def truth(self, quantity: Quantity | str | None = None, **params: float) -> Truth:
        """The ground truth of `quantity` (default: renyi, or the family's only quantity) at `params`."""
        if quantity is None:
            quantity = Quantity.RENYI if Quantity.RENYI in self.truths or len(self.truths) != 1 else next(
                iter(self.truths))
        try:
            quantity = Quantity(quantity)
        except ValueError:
            raise ParameterError(f"family {self.name}: unknown quantity {quantity!r}"
                                 f"{did_you_mean(quantity, [q.value for q in self.truths])}; it has "
                                 f"{', '.join(q.value for q in self.truths)}") from None
        return self.truth_validated(quantity, self.validate(quantity, params))

    def truth_validated(self, quantity: Quantity, params: Mapping[str, float], *, in_worker: bool = False) -> Truth:
        """The truth at parameters already returned by `validate`, checked against the quantity's range
        (`checked_truth`): a truth function that breaks its contract is a PluginError naming the family; an
        unexpected exception inside a user-registered family's truth (inside a built-in one it is a bug), a
        SystemExit included, is that point's PluginPointError, with the exception's type and text. A
        KeyboardInterrupt is the user's Ctrl-C in-process; `in_worker` (pipeline.isolation's worker process, which
        ignores SIGINT) makes it the code's own, a PluginPointError too. Which families are built in, the model
        learns from verify.families as it declares them (`declare_built_in`)."""
        try:
            truth = self.truths[quantity](**params)
        except VerifyError:
            raise
        except BaseException as err:
            if not isinstance(err, Exception) and (self.name in _BUILT_IN or
                                                   isinstance(err, KeyboardInterrupt) and not in_worker):
                raise
            if self.name in _BUILT_IN:
                if isinstance(err, _BEYOND_FLOATS) and _extreme(params):  # a float kernel at 1e308 or 1e-320
                    raise ParameterError(f"family {self.name}: its {quantity.value} truth cannot be computed at "
                                         f"{', '.join(f'{k}={v:g}' for k, v in sorted(params.items()))} "
                                         f"({type(err).__name__}: {err})") from err
                raise
            name = type(err).__name__
            text = f"code {err.code!r}" if isinstance(err, SystemExit) else " ".join(str(err).split())
            shown = f"{name}: {text}" if text else f"{name} (no message)"
            raise PluginPointError(f"family {self.name}: its {quantity.value} truth raised {shown} at "
                                   f"{', '.join(f'{k}={v:g}' for k, v in sorted(params.items()))}", name, text) from err
        return checked_truth(self.name, quantity, truth)


# what a built-in truth's float arithmetic raises at parameters beyond its range (a division by an underflowed 0, a
# conversion of an overflowed inf or NaN, an interval that rounding inverted in the subnormal range): at such
# parameters (_extreme) the point is refused with the reason (exit 2), not reported as an internal error
_BEYOND_FLOATS = (ZeroDivisionError, OverflowError, FloatingPointError, ValueError)
EXTREME = 1e150  # a parameter this large, or this small but nonzero, is one a float kernel may not take: beyond the
# square root of the float range (1.3e154), a product or square of two such values overflows or underflows (at 1e200
# a hostile probe still met x0**2 at R = 1e199, 1/(2 sigma^2) at sigma = 1e-199, a Renyi estimate at alpha = 1e199)


def _extreme(params: Mapping[str, float]) -> bool:
    """True if a parameter is beyond EXTREME or below 1/EXTREME (not 0): only there is a built-in truth's arithmetic
    failure the parameters' doing; elsewhere it is a bug (exit 4)."""
    return any(isinstance(v, (int, float)) and (abs(v) >= EXTREME or 0 < abs(v) <= 1 / EXTREME)
               for v in params.values())

# The values each quantity can take: a divergence, a probability, a squared norm or an excess risk is never
# negative; a probability or a delta is at most 1. Quantities not listed may take any real value.
_NONNEGATIVE = frozenset({
    Quantity.RENYI, Quantity.DP_EPSILON, Quantity.DP_DELTA, Quantity.GDP_MU, Quantity.TRADEOFF,
    Quantity.DP_EPSILON_ADD, Quantity.EXCESS_RISK, Quantity.LSI_CONSTANT, Quantity.AVG_GRAD_SQ,
    Quantity.AVG_EXCESS_RISK, Quantity.AVERAGED_ITERATE_RISK, Quantity.SHIFTED_RENYI,
    Quantity.GRADIENT_MAP_LIPSCHITZ, Quantity.PROX_LIPSCHITZ, Quantity.EXPECTED_BATCH_RENYI,
    Quantity.ESTIMATOR_UNDERCUT, Quantity.ESTIMATE_BELOW_BOUND, Quantity.APPROX_ERROR,
    Quantity.DEVIATION_PROBABILITY})
_AT_MOST_ONE = frozenset({Quantity.DP_DELTA, Quantity.TRADEOFF, Quantity.ESTIMATOR_UNDERCUT,
                          Quantity.ESTIMATE_BELOW_BOUND, Quantity.DEVIATION_PROBABILITY})


def quantity_range(quantity: Quantity) -> tuple[float, float]:
    """The closed range [low, high] of values `quantity` can take (+-inf where unbounded)."""
    return (0.0 if quantity in _NONNEGATIVE else -math.inf, 1.0 if quantity in _AT_MOST_ONE else math.inf)


def checked_truth(family: str, quantity: Quantity, truth: object) -> Truth:
    """`truth` as returned by a family's truth function, held to the contract every checker decision relies on.

    It must be a `Truth` (a float, or anything else, is a PluginError: a value without an interval and a method
    certifies nothing). Its interval must meet the quantity's range: an interval wholly outside it (a negative
    Rényi divergence, a probability above 1) is a PluginError. An interval that straddles an end of the range
    (a Monte-Carlo estimate of a tiny divergence whose confidence interval reaches below 0) is cut to the range,
    which only removes values the quantity cannot take; the value is moved into the range with it.
    """
    if not isinstance(truth, Truth):
        raise PluginError(f"family {family}: its {quantity.value} truth returned a {type(truth).__name__}, not a "
                          "verify.results.Truth (wrap a formula with verify.families.closed_form, or build "
                          "Truth.exact(value, detail))")
    low, high = quantity_range(quantity)
    if truth.upper < low or truth.lower > high:
        raise PluginError(f"family {family}: its {quantity.value} truth {truth.value!r} (interval [{truth.lower!r}, "
                          f"{truth.upper!r}]) is outside the quantity's range [{low:g}, {high:g}]")
    finer = truth.refine
    refine = None if finer is None else (lambda: checked_truth(family, quantity, finer()))  # held to it as well
    if truth.lower >= low and truth.upper <= high:
        return truth if finer is None else replace(truth, refine=refine)
    lower, upper = max(truth.lower, low), min(truth.upper, high)
    return Truth(min(max(truth.value, lower), upper), lower, upper, truth.method,
                 f"{truth.detail}; interval cut to the range [{low:g}, {high:g}] of {quantity.value}",
                 truth.confidence, truth.ess, truth.enclose, refine)


@dataclass(frozen=True)
class Source:
    """Where a result is printed."""

    seed: str  # seed file name in shared/seeds; "" for a result of the later literature (`paper` names it)
    paper: str
    result: str  # e.g. "Corollary 1"
    equation: str = ""  # e.g. "eq. (18) = (72)"


@dataclass(frozen=True)
class FromFamily:
    """Bind a theorem symbol to a family's exact quantity at the same point (e.g. the true LSI constant),
    optionally with some parameters moved (`at`, e.g. q = 1 for the mechanism before subsampling)."""

    quantity: Quantity
    at: Mapping[str, sp.Expr] = field(default_factory=dict)


def _frozen(m: Mapping | None) -> Mapping:
    return MappingProxyType(dict(m or {}))


@dataclass(frozen=True)
class Application:
    """How a theorem is checked on one family, and the verdict expected over its default grid.

    `defaults` give family parameters as expressions of the others (e.g. the printed start law
    start_var = 2*sigma**2/lam); a user may override them and the theorem's assumptions then decide.
    `bind` gives theorem-only symbols (beta, c, S_v, ...) in terms of family parameters.
    `grid` lists the values of each free parameter; points breaking an assumption are skipped and counted.
    `regimes` are further grids checked the same way (e.g. a weight-decay regime beside the default one): the
    points of every grid, in order.
    """

    family: str
    expected: Verdict
    grid: Mapping[str, tuple[float, ...]]
    defaults: Mapping[str, sp.Expr] = field(default_factory=dict)
    bind: Mapping[str, sp.Expr | FromFamily] = field(default_factory=dict)
    companions: tuple[str, ...] = ()  # ids of catalog bounds on the same quantity to show at each point
    note: str = ""
    regimes: tuple[Mapping[str, tuple[float, ...]], ...] = ()
    exhaustive: bool = False  # the grids hold every admissible point (e.g. a paper's table): no falsifier search

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", _frozen(self.grid))
        object.__setattr__(self, "regimes", tuple(_frozen(r) for r in self.regimes))
        object.__setattr__(self, "defaults", _frozen(self.defaults))
        object.__setattr__(self, "bind", _frozen(self.bind))

    @property
    def grids(self) -> tuple[Mapping[str, tuple[float, ...]], ...]:
        """The default grid and the regimes."""
        return (self.grid, *self.regimes)

    def grid_values(self, name: str) -> tuple[float, ...]:
        """Every value `name` takes on some grid, ascending."""
        return tuple(sorted({v for g in self.grids for v in g.get(name, ())}))

    @property
    def grid_names(self) -> tuple[str, ...]:
        return tuple(sorted({k for g in self.grids for k in g}))


@dataclass(frozen=True)
class Theorem:
    """One catalog entry: a bound, its hypotheses, its source and where it is checked."""

    id: str
    title: str
    source: Source
    variant: Variant
    direction: Direction
    quantity: Quantity
    bound: sp.Expr
    assumptions: tuple[Assumption, ...]
    requires: frozenset[str]  # structural facts an instance family must have
    applications: tuple[Application, ...]
    note: str = ""

    def __repr__(self) -> str:
        return theorem_line(self)

    def _repr_html_(self) -> str:
        return theorem_html(self)

    def _repr_latex_(self) -> str:
        return f"${statement_latex(self)}$"

    @cached_property
    def latex(self) -> str:
        return sp.latex(self.bound)

    @cached_property
    def symbols(self) -> frozenset[sp.Symbol]:
        """Every symbol of the bound and the assumptions."""
        out = set(self.bound.free_symbols)
        for a in self.assumptions:
            out |= a.condition.free_symbols
        return frozenset(out)

    def check_assumptions(self, values: Mapping[str, float], skip: frozenset[str] = frozenset(),
                          domains_checked: Collection[str] = ()) -> None:
        """Raise AssumptionError for the first declared domain or assumption that fails at `values` (the
        assumptions named in `skip` are already known to hold there, and so are the declared domains of the
        symbols named in `domains_checked`)."""
        for s in self.symbols:
            if s.name in values and s.name not in domains_checked:
                check_declared_domain(self.id, s, values[s.name])
        for a in self.assumptions:
            if a.name not in skip:
                a.check(self.id, values)

    def value(self, values: Mapping[str, float]) -> mpmath.mpf:
        """The bound at theorem-symbol values, in PRECISION_DPS digits."""
        return evaluate(self.bound, values)

    def application(self, family: str) -> Application | None:
        return next((a for a in self.applications if a.family == family), None)
