"""Boxes of parameter intervals at exact binary ends, and the interval enclosure of an expression over a box
(`arb_bounds`, `arb_eval`); `parse_box` reads `verify certify --box` entries."""

from __future__ import annotations

import keyword
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

from verify import symbols as _symbols
from verify.certify.intervals import DEFAULT_PREC, LOG_RATIO, Interval, _need_flint, arb, ctx
from verify.certify.translate import _compiled
from verify.errors import ParameterError
from verify.parsing import ALLOWED_CONSTANTS, ALLOWED_FUNCTIONS, PARSER_NAMES

# ---- boxes ---------------------------------------------------------------------------------------------------

BoxSpec = Mapping[str, "tuple[float | str, float | str] | float | str"]


def _fraction(value: Any, what: str) -> Fraction:
    if isinstance(value, bool):
        raise ParameterError(f"{what}: expected a number, got {value!r}")
    try:
        if isinstance(value, Fraction):
            out = value
        elif isinstance(value, int):
            out = Fraction(value)
        elif isinstance(value, float):
            out = Fraction(value)  # raises on nan / inf
        elif isinstance(value, sp.Rational):
            out = Fraction(int(value.p), int(value.q))
        elif isinstance(value, (str, sp.Float)):
            out = Fraction(str(value).strip())
        else:
            raise TypeError
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        raise ParameterError(f"{what}: expected a finite number or 'p/q', got {value!r}") from None
    return out


def _down(fr: Fraction) -> float:
    x = float(fr)
    return math.nextafter(x, -math.inf) if Fraction(x) > fr else x


def _up(fr: Fraction) -> float:
    x = float(fr)
    return math.nextafter(x, math.inf) if Fraction(x) < fr else x


def _interval_of(value: Any, name: str) -> tuple[Fraction, Fraction]:
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ParameterError(f"box entry {name}: expected (lo, hi), got {value!r}")
        lo, hi = (_fraction(v, f"box entry {name}") for v in value)
    else:
        lo = hi = _fraction(value, f"box entry {name}")
    if lo > hi:
        raise ParameterError(f"box entry {name}: lower end {value[0]} exceeds upper end {value[1]}")
    return lo, hi


@dataclass(frozen=True)
class _Dim:
    """One searched variable: its root interval and how it is measured and bisected."""

    name: str
    integer: bool
    lo: float | int
    hi: float | int
    decl: tuple[Fraction, Fraction]  # the declared interval, exact

    @cached_property
    def scale(self) -> int:  # 0 linear, +1 log of x, -1 log of -x
        if self.lo > 0 and self.hi / self.lo >= LOG_RATIO:
            return 1
        if self.hi < 0 and self.lo / self.hi >= LOG_RATIO:
            return -1
        return 0

    def width(self, lo: float, hi: float) -> float:
        """Width of [lo, hi] relative to the root interval, in this dimension's scale (0 for a point)."""
        if lo == hi:
            return 0.0
        s = self.scale
        if s == 1:
            return math.log(hi / lo) / math.log(self.hi / self.lo)
        if s == -1:
            return math.log(lo / hi) / math.log(self.lo / self.hi)
        return (hi - lo) / (self.hi - self.lo)

    def split_point(self, lo: float, hi: float) -> float:
        s = self.scale
        if s == 1:
            m = math.sqrt(lo) * math.sqrt(hi)
        elif s == -1:
            m = -math.sqrt(-lo) * math.sqrt(-hi)
        else:
            m = lo + (hi - lo) / 2
        return min(max(m, lo), hi)

    def split(self, lo: float | int, hi: float | int) -> tuple[tuple, tuple] | None:
        """Two halves of [lo, hi]; integer dimensions are cut between consecutive integers."""
        if lo == hi:
            return None
        m = self.split_point(lo, hi)
        if self.integer:
            k = min(max(math.floor(m), lo), hi - 1)
            return (lo, k), (k + 1, hi)
        if not lo < m < hi:
            return None
        return (lo, m), (m, hi)

    def sample(self, lo: float | int, hi: float | int) -> float | int:
        """A representative point of [lo, hi]: an integer for integer dimensions, else the shortest decimal
        of the central half (in this dimension's scale), so that counterexamples read well."""
        if lo == hi:
            return lo
        m = self.split_point(lo, hi)
        if self.integer:
            return min(max(round(m), lo), hi)
        a, b = self.split_point(lo, m), self.split_point(m, hi)
        for digits in range(17):
            x = float(f"{m:.{digits}e}")
            if a <= x <= b:
                return x
        return m

    def in_declared(self, x: float | int) -> bool:
        return self.decl[0] <= Fraction(x) <= self.decl[1]

    def clamp(self, x: float | int) -> float | int:
        """The nearest float of the declared interval (the root box is rounded outward by an ulp)."""
        if self.integer or self.in_declared(x):
            return x
        return _up(self.decl[0]) if Fraction(x) < self.decl[0] else _down(self.decl[1])


def _make_dims(box: BoxSpec, names: Iterable[str], integer: set[str]) -> list[_Dim]:
    dims = []
    for name in names:
        if name not in box:
            raise ParameterError(f"symbol {name} has no interval in the box (give {name}=lo:hi)")
        lo, hi = _interval_of(box[name], name)
        if name in integer:
            ilo, ihi = math.ceil(lo), math.floor(hi)
            if ilo > ihi:
                raise ParameterError(f"box entry {name}: [{lo}, {hi}] contains no integer, and {name} is an integer")
            dims.append(_Dim(name, True, ilo, ihi, (lo, hi)))
        else:
            try:
                dims.append(_Dim(name, False, _down(lo), _up(hi), (lo, hi)))
            except OverflowError:
                raise ParameterError(f"box entry {name}: beyond the range of double precision") from None
    return dims


def _exact(v: sp.Expr) -> Fraction | None:
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    if v.is_Float and v.is_finite:
        sign, man, exp, _ = v._mpf_
        return Fraction(-man if sign else man) * Fraction(2) ** exp
    return None


def _tighten(box: BoxSpec, cond: sp.Basic) -> dict[str, Any]:
    """Intersect the box with the assumptions that are plain bounds (x <= 3, K > 10, ...)."""
    out: dict[str, Any] = dict(box)
    for c in cond.args if isinstance(cond, sp.And) else (cond,):
        if not isinstance(c, (sp.LessThan, sp.StrictLessThan, sp.GreaterThan, sp.StrictGreaterThan)):
            continue
        upper = isinstance(c, (sp.LessThan, sp.StrictLessThan))
        sym, num = c.lhs, c.rhs
        if num.is_Symbol and sym.is_number:
            sym, num, upper = num, sym, not upper
        value = _exact(num) if sym.is_Symbol and num.is_number else None
        if value is None or sym.name not in out:
            continue
        lo, hi = _interval_of(out[sym.name], sym.name)
        lo, hi = (lo, min(hi, value)) if upper else (max(lo, value), hi)
        if lo <= hi:
            out[sym.name] = (lo, hi)
    return out


def _env(dims: Sequence[_Dim], box: Sequence[tuple]) -> dict[str, Interval]:
    env = {}
    for d, (lo, hi) in zip(dims, box, strict=True):
        a = arb(lo)
        env[d.name] = (a, a) if lo == hi else (a, arb(hi))
    return env


def _enclosure(expr: sp.Expr, box: BoxSpec, prec: int) -> tuple[Any, Any]:
    """Arb enclosures of the smallest and largest value of `expr` over `box` (at working precision `prec`). A box
    entry that is one number enters as that exact number (an Arb ball at `prec`), not as the float interval around it
    that a search bisects: a 50-digit derived value widened to one ulp lost the tie of a bound that cancels (a 1e-16
    input, 1e-8 of the bound)."""
    _need_flint()
    expr = sp.sympify(expr)
    dims = _make_dims(box, sorted({s.name for s in expr.free_symbols}), set())
    with ctx.workprec(prec):
        env = _env(dims, [(d.lo, d.hi) for d in dims])
        for d in dims:
            lo, hi = d.decl
            if lo == hi and d.lo != d.hi:  # an exact number between two floats
                x = arb(lo.numerator) / arb(lo.denominator)
                env[d.name] = (x, x)
        return _compiled(expr, prec)(env)


def arb_bounds(expr: sp.Expr, box: BoxSpec, *, prec: int = DEFAULT_PREC) -> tuple[Any, Any]:
    """Lower and upper bounds (exact Arb numbers) of `expr` over `box`; NaN where it is not defined everywhere.

    Tighter than `arb_eval`, whose single ball has a radius rounded up to 30 bits.
    """
    lo, hi = _enclosure(expr, box, prec)
    with ctx.workprec(prec):
        if not (lo.is_finite() and hi.is_finite()):
            return arb.nan(), arb.nan()
        return lo.lower(), hi.upper()


def arb_eval(expr: sp.Expr, box: BoxSpec, *, prec: int = DEFAULT_PREC) -> Any:
    """Enclose the values of `expr` over `box` (name -> (lo, hi), or a number) in an Arb ball.

    Rigorous: every value of the expression at a point of the box lies in the returned ball. The ball is NaN
    where the expression is not defined (or not finite) everywhere on the box, e.g. log over an interval
    reaching 0. Integer-declared symbols are treated as real intervals. Raises ParameterError for constructs
    with no interval translation and for symbols without an interval.
    """
    lo, hi = _enclosure(expr, box, prec)
    with ctx.workprec(prec):
        if lo.is_nan() or hi.is_nan():
            return arb.nan()
        return lo if lo is hi else lo.union(hi)



# symbols of the named claims (verify.certify.claims) that verify.symbols does not declare
mu = sp.Symbol("mu", positive=True)  # Gaussian mechanism: sensitivity / noise std
m = sp.Symbol("m", integer=True, nonnegative=True)  # n - i in Theorem 35 (Feldman et al.)
E0_ratio = sp.Symbol("E0_ratio", positive=True)  # E0 / (4 L^2/lam^2) in Lemma 6 (Chourasia et al.)


def _known_symbols() -> dict[str, sp.Symbol]:
    out = {v.name: v for v in vars(_symbols).values() if isinstance(v, sp.Symbol)}
    out.update({mu.name: mu, m.name: m, E0_ratio.name: E0_ratio})
    return out


def parse_box(entries: Sequence[str]) -> dict[str, tuple[str, str]]:
    """`name=lo:hi` (or `name=value`) entries into a box."""
    box: dict[str, tuple[str, str]] = {}
    reserved = set(ALLOWED_FUNCTIONS) | set(ALLOWED_CONSTANTS) | set(PARSER_NAMES)
    for entry in entries:
        name, sep, rng = entry.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ParameterError(f"--box: expected name=lo:hi with a plain name, got {entry!r}")
        if name in reserved:
            raise ParameterError(f"--box: '{name}' is a function or constant name")
        lo, colon, hi = rng.partition(":")
        lo, hi = lo.strip(), (hi.strip() if colon else lo.strip())
        for v in (lo, hi):
            _fraction(v, f"--box {name}")
        if _fraction(lo, name) > _fraction(hi, name):
            raise ParameterError(f"--box {name}: lower end {lo} exceeds upper end {hi}")
        if name in box:
            raise ParameterError(f"--box: {name} given twice")
        box[name] = (lo, hi)
    return box
