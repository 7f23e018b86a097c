"""The exact fallback of the checker: decide a point with rigorous Arb enclosures of the bound and the truth.

The checker's float filter decides most points. A point it would report VIOLATED, a point it cannot decide, and a
point whose floats underflowed or overflowed (a bound of 1e-400 is 0.0 in float) come here: the bound is enclosed
by interval evaluation of its SymPy expression (verify.certify.arb_bounds, at the exact binary values of its
inputs) and the truth by its own `Truth.enclose` (Arb closed forms, the Arb binomial series, acb.integral with
proven tails). Only a VIOLATED proven this way is reported; without an enclosure the point is INCONCLUSIVE.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from verify.certify import arb_bounds
from verify.certify.boxes import _enclosure
from verify.errors import DeadlineExceeded, ParameterError, VerifyError
from verify.limits import deadline
from verify.model import PRECISION_DPS, _compiled, stable_form
from verify.results import PointCertificate, Truth, Verdict
from verify.truth.numbers import Enclosure, NotEnclosable, arb_fraction, mpf_parts

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None

PRECISIONS = (64, 128, 512)  # bits tried in turn until the enclosures decide
INFINITY_DPS = 3200  # digits at which an infinite bound that Arb cannot enclose must stay infinite
CERTIFY_DEADLINE_S = 20.0  # wall-clock cap of one point's re-check (past it: INCONCLUSIVE, with the reason)
TIE_RTOL = 1e-9  # a bound within this relative distance of the truth counts as equal (float inputs are inexact)


def exact_text(value: Any) -> str:
    """The exact rational value of a float or an mpf, as 'p/q' (what Arb evaluates at)."""
    if isinstance(value, mpmath.mpf):
        if not mpmath.isfinite(value):
            raise NotEnclosable(f"the input {value} is not a finite number")
        man, exp = mpf_parts(value)  # signed: mpmath's man_exp drops the sign
        return str(Fraction(man) * Fraction(2) ** exp)
    return str(Fraction(float(value)))


def _end_text(x: Any) -> str:
    """The exact rational value of an enclosure's end (an Arb ball of radius 0, or a float)."""
    if isinstance(x, float):
        return exact_text(x)
    return str(arb_fraction(x))


def _bound_enclosure(expr: sp.Expr, values: Mapping[str, Any], bound: mpmath.mpf, prec: int,
                     from_family: Mapping[str, Truth]) -> Enclosure:
    box: dict[str, Any] = {s.name: exact_text(values[s.name]) for s in expr.free_symbols}
    if mpmath.isinf(bound):
        return _infinite_bound(expr, box, values, bound, prec)
    for name, truth in from_family.items():  # a family quantity enters as its own enclosure, not its rounded float
        if name in box:
            if truth.enclose is None:
                raise NotEnclosable(f"the bound's {name} (a family {truth.method.value} value) has no enclosure")
            inner = truth.enclose(prec)
            if inner.infinite:
                raise NotEnclosable(f"the bound's {name} is infinite")
            box[name] = (_end_text(inner.lower), _end_text(inner.upper))
    lo, hi = arb_bounds(stable_form(expr), box, prec=prec)  # expm1/log1p: 1 - exp(-x) at x = 1e-320 cancelled
    if lo.is_nan() or hi.is_nan():
        raise NotEnclosable("the bound has no finite Arb enclosure at this point")
    return Enclosure(lo, hi, "Arb interval evaluation of the bound's expression", prec)


def _infinite_bound(expr: sp.Expr, box: Mapping[str, Any], values: Mapping[str, Any], bound: mpmath.mpf,
                    prec: int) -> Enclosure:
    """The enclosure of a bound whose PRECISION_DPS-digit value is infinite. Arb decides where it can: exactly that
    infinity, or a finite enclosure (the 50 digits were lost: Phi_inv(Phi(100)), whose Phi(100) rounds to 1 and its
    inverse to +inf). Where Arb has no answer (NaN, as for log(0), or no interval translation), the infinity stands
    only if mpmath gives it again at INFINITY_DPS digits; else the point has no enclosure."""
    sign = 1 if bound > 0 else -1
    try:
        lo, hi = _enclosure(stable_form(expr), box, prec)
    except ParameterError:  # no interval translation (a recursion)
        lo = hi = None
    if lo is not None and hi is not None:
        ends = [float(x.mid()) if x.rad() == 0 and not x.is_nan() else math.nan for x in (lo, hi)]
        if ends == [sign * math.inf] * 2:
            return Enclosure(float(bound), float(bound), "the bound is infinite (Arb)", prec)
        if lo.is_finite() and hi.is_finite():
            with ctx.workprec(prec):
                return Enclosure(lo.lower(), hi.upper(), f"Arb interval evaluation of the bound's expression (its "
                                 f"{PRECISION_DPS}-digit value, {'+' if sign > 0 else '-'}inf, had lost its digits)",
                                 prec)
    if _infinite_at(expr, values, sign, INFINITY_DPS):
        return Enclosure(float(bound), float(bound), f"the bound is infinite (mpmath at {PRECISION_DPS} and "
                         f"{INFINITY_DPS} digits)", prec)
    raise NotEnclosable(f"the bound's {PRECISION_DPS}-digit value is {'+' if sign > 0 else '-'}inf but finite at "
                        f"{INFINITY_DPS} digits (digits lost), and Arb cannot enclose it at {prec} bits")


def _infinite_at(expr: sp.Expr, values: Mapping[str, Any], sign: int, dps: int) -> bool:
    """True if the bound evaluates to sign * inf at dps / 8 digits and again at `dps` (the first settles most lost
    infinities at a fiftieth of the cost)."""
    names, fn = _compiled(expr)
    for digits in (dps // 8, dps):
        try:
            with mpmath.workdps(digits):
                value = fn(*(mpmath.mpf(values[name]) for name in names))
        except (ArithmeticError, ValueError, TypeError):
            return False
        if not (mpmath.isinf(value) and (value > 0) == (sign > 0)):
            return False
    return True


def _as_ball(x: Any) -> Any:
    return arb(x) if isinstance(x, float) else x


def _prove(direction: str, bound: Enclosure, truth: Enclosure) -> Verdict:
    """What the two enclosures prove about the claim (INCONCLUSIVE if they cannot decide), with ties at TIE_RTOL."""
    if truth.infinite or bound.infinite:
        return _prove_infinite(direction, _sign_of_infinite(bound), _sign_of_infinite(truth))
    b_lo, b_hi, t_lo, t_hi = (_as_ball(v) for v in (bound.lower, bound.upper, truth.lower, truth.upper))
    size_hi = max(abs(b_lo), abs(b_hi), abs(t_lo), abs(t_hi), key=lambda v: v.mid())
    scale_lo = max(_abs_lower(b_lo, b_hi), _abs_lower(t_lo, t_hi), key=lambda v: v.mid())
    wide, narrow = TIE_RTOL * size_hi, TIE_RTOL * scale_lo  # the tie band is between narrow and wide
    if direction == "upper":  # violated: truth - bound > tie band
        gap_lo, gap_hi = t_lo - b_hi, t_hi - b_lo
        return _by_gap(gap_lo, gap_hi, wide, narrow)
    if direction == "lower":
        gap_lo, gap_hi = b_lo - t_hi, b_hi - t_lo
        return _by_gap(gap_lo, gap_hi, wide, narrow)
    worst = _by_gap(t_lo - b_hi, t_hi - b_lo, wide, narrow), _by_gap(b_lo - t_hi, b_hi - t_lo, wide, narrow)
    if Verdict.VIOLATED in worst:
        return Verdict.VIOLATED
    return Verdict.HOLDS if worst == (Verdict.HOLDS, Verdict.HOLDS) else Verdict.INCONCLUSIVE


def _sign_of_infinite(e: Enclosure) -> int:
    """+1 or -1 for an infinite enclosure (+inf or -inf), 0 for a finite one."""
    return int(math.copysign(1, e.lower)) if e.infinite else 0


def _prove_infinite(direction: str, bound: int, truth: int) -> Verdict:
    """The verdict when a side is infinite, by the extended-real order: `bound` and `truth` are +1 (+inf), -1 (-inf)
    or 0 (finite; at least one side is infinite). -inf < every finite value < +inf; an infinity equals only itself,
    so the signs compare like the values."""
    if direction == "upper":  # bound >= truth
        return Verdict.HOLDS if bound >= truth else Verdict.VIOLATED
    if direction == "lower":  # bound <= truth
        return Verdict.HOLDS if bound <= truth else Verdict.VIOLATED
    return Verdict.HOLDS if bound == truth else Verdict.VIOLATED  # exact: equal infinities only


def _abs_lower(lo: Any, hi: Any) -> Any:
    if lo > 0:
        return lo
    if hi < 0:
        return -hi
    return arb(0)


def _by_gap(gap_lo: Any, gap_hi: Any, wide: Any, narrow: Any) -> Verdict:
    """The claim fails by `gap` (in [gap_lo, gap_hi]): VIOLATED if it surely exceeds the tie band, HOLDS if surely
    not."""
    if gap_lo > wide:
        return Verdict.VIOLATED
    if gap_hi <= narrow:
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def certify_point(direction: str, expr: sp.Expr, values: Mapping[str, Any], bound: mpmath.mpf, truth: Truth,
                  filter_verdict: Verdict, from_family: Mapping[str, Truth] | None = None,
                  deadline_s: float | None = None) -> PointCertificate:
    """Re-decide a point with rigorous enclosures at increasing precision; the certificate says what they prove.
    `from_family`: bound symbols that are a family's truths, enclosed by their own `enclose`. `deadline_s`: the
    re-check's wall-clock cap (default CERTIFY_DEADLINE_S); past it the point is INCONCLUSIVE, with the reason."""
    start = time.perf_counter()
    if truth.enclose is None:
        return PointCertificate(Verdict.INCONCLUSIVE, filter_verdict, None, None, None, None, "", 0,
                           f"no rigorous enclosure exists for a {truth.method.value} truth", 0.0)
    reason = ""
    cap = CERTIFY_DEADLINE_S if deadline_s is None else deadline_s
    end = time.monotonic() + cap
    for prec in PRECISIONS:
        try:
            with deadline(max(end - time.monotonic(), 1e-3), "the rigorous re-check"), ctx.workprec(prec):
                b = _bound_enclosure(expr, values, bound, prec, from_family or {})
                t = truth.enclose(prec)
                proved = _prove(direction, b, t)
        except DeadlineExceeded as err:
            reason = f"{type(err).__name__}: {err} ({cap:g} s)"
            break
        except (NotEnclosable, VerifyError, ArithmeticError, ValueError) as err:
            reason = f"{type(err).__name__}: {err}"
            continue
        except Exception as err:  # noqa: BLE001 - a re-check that breaks (a library too old, a plugin's enclose
            reason = f"{type(err).__name__}: {err}"  # that raises) proves nothing: the point is uncertified
            break
        if proved is not Verdict.INCONCLUSIVE or prec == PRECISIONS[-1]:
            (b_lo, b_hi), (t_lo, t_hi) = b.text(), t.text()
            why = "" if proved is not Verdict.INCONCLUSIVE else "the enclosures overlap the tie band"
            return PointCertificate(proved, filter_verdict, t_lo, t_hi, b_lo, b_hi, t.method, prec, why,
                               time.perf_counter() - start)
    return PointCertificate(Verdict.INCONCLUSIVE, filter_verdict, None, None, None, None, "", 0,
                       f"no rigorous enclosure could be computed ({reason})", time.perf_counter() - start)


def lost_in_floats(x: float, exact: Any = None) -> bool:
    """True if the float `x` (of the value `exact`, where known) may have lost it: an overflow (not of an infinite
    value), a zero (not of an exact zero) or a subnormal."""
    if exact is not None and mpmath.isinf(exact):
        return False
    return math.isinf(x) or (x == 0 and (exact is None or exact != 0)) or 0 < abs(x) < 2.2250738585072014e-308


def degenerate(bound: mpmath.mpf, truth: Truth) -> bool:
    """True if float rounding may have lost the comparison: a value that underflowed, overflowed or is subnormal."""
    return lost_in_floats(float(bound), bound) or lost_in_floats(truth.value)


def enclosure_ratio_margin(direction: str, cert: PointCertificate) -> tuple[float | None, float]:
    """bound/truth and the signed relative margin from the certificate's enclosures (mid points), for points whose
    floats degenerated."""
    with ctx.workprec(128):
        b = (arb(cert.bound_lower) + arb(cert.bound_upper)) / 2
        t = (arb(cert.truth_lower) + arb(cert.truth_upper)) / 2
        ratio = None if t.is_zero() else float((b / t).mid())
        scale = abs(t) if not t.is_zero() else arb(1)
        if direction == "upper":
            margin = (b - t) / scale
        elif direction == "lower":
            margin = (t - b) / scale
        else:
            margin = -abs(b - t) / scale
        return ratio, float(margin.mid())
