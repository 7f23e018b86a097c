"""The number system closed-form truths are evaluated in: mpmath (50 digits, the default) or python-flint Arb balls
(rigorous enclosures, used to certify a verdict).

Closed forms call `num()` for their constants and functions, so one formula serves both: under `arb_numbers(prec)`
every operation is an Arb ball operation whose result provably contains the exact value. Branches on a sign go
through `num().sign(x)`, which is None when a ball straddles 0; a closed form then raises `NotEnclosable` rather than
guess, and the checker falls back to "undecided".
"""

from __future__ import annotations

import contextvars
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from verify.errors import ResourceLimitError
from verify.limits import uninterrupted

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None


class NotEnclosable(ArithmeticError):
    """A rigorous enclosure cannot be computed here (a branch undecidable on a ball, a method with no error proof)."""


def _mp_ncdf(x: Any) -> mpmath.mpf:
    """Phi(x) in mpmath, also for |x| > 1e150 where mpmath.ncdf overflows a float inside erfc: there the tail
    phi(x)/|x| (1 - 1/x^2 + 3/x^4), whose relative error 15/x^6 < 1e-900 is below any working precision used here.
    Below that, Arb's erfc first (`in_arb`: a tenth of mpmath's time, proven to the working precision)."""
    x = mpmath.mpf(x)
    if abs(x) <= mpmath.mpf(10) ** 150:
        fast = in_arb(lambda N: N.ncdf(N.mpf(x)))
        return fast if fast is not None else mpmath.ncdf(x)
    tail = mpmath.exp(-x * x / 2) / (abs(x) * mpmath.sqrt(2 * mpmath.pi)) * (1 - 1 / x**2 + 3 / x**4)
    return tail if x < 0 else 1 - tail


def _mp_ncdf_inv(p: Any) -> mpmath.mpf:
    """Phi^-1(p) in mpmath without the cancellation of erfinv(2p - 1) at tiny p (or p near 1: by symmetry, 1 - p
    is exact for a binary p >= 1/2): Newton on log Phi(x) = log p from the tail's first guess below p = 1e-8."""
    p = mpmath.mpf(p)
    if not 0 < p < 1:
        return -mpmath.inf if p == 0 else (mpmath.inf if p == 1 else mpmath.nan)
    if p > 0.5:
        return -_mp_ncdf_inv(1 - p)
    if p >= mpmath.mpf("1e-8"):
        return mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)  # 2p - 1 loses at most 8 of the working digits
    log_p = mpmath.log(p)
    x = -mpmath.sqrt(-2 * log_p)
    tol = mpmath.mpf(2) ** (10 - mpmath.mp.prec)
    for _ in range(200):
        cdf = _mp_ncdf(x)
        step = (mpmath.log(cdf) - log_p) * cdf / mpmath.npdf(x)  # f / f' with f = log Phi(x) - log p
        x -= step
        if abs(step) <= tol * abs(x):
            return x
    raise ArithmeticError(f"Phi^-1({mpmath.nstr(p, 5)}) did not converge")


ARB_GUARD_BITS = 64  # Arb's working precision above mpmath's in `in_arb`


def in_arb(ball: Callable[[Any], Any]) -> mpmath.mpf | None:
    """The mpmath number, at mpmath's working precision, that the Arb ball `ball(ARB)` proves (computed in
    `arb_numbers`, ARB_GUARD_BITS above that precision): its midpoint, rounded, where the ball is finite and its radius
    below half an ulp of it (or it is exactly 0); None otherwise, and where Arb fails in any way but a cap (the caller
    computes the value in mpmath instead, which raises its own errors). `ball` must compute in Arb what the caller's
    mpmath code computes, and fail where it fails: a NaN that Arb carries where mpmath raised, then discarded, would
    give a value."""
    if arb is None:  # pragma: no cover
        return None
    prec = mpmath.mp.prec
    try:
        with arb_numbers(prec + ARB_GUARD_BITS) as N:
            value = ball(N)
            if not isinstance(value, arb) or not value.is_finite():
                return None
            if value.is_exact() and value.is_zero():
                return mpmath.mpf(0)
            if value.rad() > abs(value.mid()) * arb(2) ** -(prec + 1):
                return None
            man, exp = value.mid().man_exp()
    except (ResourceLimitError, MemoryError):  # a cap is a cap on every path
        raise
    except Exception:  # noqa: BLE001 - mpmath's own evaluation raises, or not, the point's errors
        return None
    return +mpmath.mpf((int(man), int(exp)))  # unary plus: rounded to mpmath's working precision


def arb_fraction(x: Any) -> Fraction:
    """The exact rational value of an Arb ball's midpoint (all of it, for a ball of radius 0)."""
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def mpf_parts(x: mpmath.mpf) -> tuple[int, int]:
    """(m, e) with x = m 2^e exactly, m signed (mpmath's own `man_exp` drops the sign of the mantissa)."""
    sign, man, exp, _ = x._mpf_
    return (-int(man) if sign else int(man)), int(exp)


class _Mp:
    """mpmath at the caller's working precision."""

    rigorous = False
    mpf = staticmethod(mpmath.mpf)
    log = staticmethod(mpmath.log)
    exp = staticmethod(mpmath.exp)
    expm1 = staticmethod(mpmath.expm1)
    log1p = staticmethod(mpmath.log1p)
    sqrt = staticmethod(mpmath.sqrt)
    ncdf = staticmethod(lambda x: _mp_ncdf(x))
    ncdf_inv = staticmethod(lambda p: _mp_ncdf_inv(p))
    lgamma = staticmethod(mpmath.loggamma)
    erf = staticmethod(mpmath.erf)
    erfi = staticmethod(mpmath.erfi)
    pi = staticmethod(lambda: +mpmath.pi)
    binomial = staticmethod(mpmath.binomial)
    inf = mpmath.inf

    @staticmethod
    def sign(x: Any) -> int | None:
        return (x > 0) - (x < 0)

    @staticmethod
    def maximum(*xs: Any) -> Any:
        return max(xs)

    @staticmethod
    def minimum(*xs: Any) -> Any:
        return min(xs)


class _ArbInput(arb if arb is not None else object):  # type: ignore[misc]
    """An exact Arb input that also converts to int (integer parameters: K, n, t), and never to a float: a formula
    that hands it to `math.exp` (or any float function) would get a rounded value that then re-enters Arb as a
    radius-0 ball, so inside `arb_numbers` the conversion raises NotEnclosable and the point is uncertified."""

    def __int__(self) -> int:
        return int(self.unique_fmpz())

    def __float__(self) -> float:
        if _current.get() is not ARB:  # outside a closed form's Arb evaluation: an ordinary conversion
            return float(self.mid().str(20, radius=False))
        raise NotEnclosable("a closed form converted an Arb input to a float (a math.* function?): a float is a "
                            "rounded value, not a rigorous enclosure (compute with verify.truth.numbers.num())")

    def __index__(self) -> int:
        return int(self)


def _ball(x: Any) -> Any:
    return x if isinstance(x, arb) else arb(x)


class _Arb:
    """python-flint Arb balls at the precision set by `arb_numbers`."""

    rigorous = True

    @staticmethod
    def mpf(x: Any) -> Any:
        if isinstance(x, arb):
            return x
        if isinstance(x, mpmath.mpf):  # exactly: man * 2^exp (a decimal string would round it at high precision)
            if not mpmath.isfinite(x):
                raise NotEnclosable(f"cannot enclose the non-finite mpmath number {x}")
            return _ArbInput(mpf_parts(x))
        return _ArbInput(x)

    log = staticmethod(lambda x: _ball(x).log())
    exp = staticmethod(lambda x: _ball(x).exp())
    expm1 = staticmethod(lambda x: _ball(x).expm1())
    log1p = staticmethod(lambda x: _ball(x).log1p())
    sqrt = staticmethod(lambda x: _ball(x).sqrt())
    erf = staticmethod(lambda x: _ball(x).erf())
    erfi = staticmethod(lambda x: _ball(x).erfi())
    pi = staticmethod(lambda: arb.pi())

    @staticmethod
    def ncdf(x: Any) -> Any:
        return (-_ball(x) / arb(2).sqrt()).erfc() / 2

    lgamma = staticmethod(lambda x: _ball(x).lgamma())

    @staticmethod
    def ncdf_inv(p: Any) -> Any:
        return arb(2).sqrt() * (2 * _ball(p) - 1).erfinv()

    @staticmethod
    def binomial(n: Any, k: Any) -> Any:
        return arb.bin_uiui(int(n), int(k))

    inf = None  # set below: a ProvenInfinity, which Enclosure.of accepts where it refuses a plain float

    @staticmethod
    def sign(x: Any) -> int | None:
        x = _ball(x)
        if x > 0:
            return 1
        if x < 0:
            return -1
        return 0 if x.is_zero() else None

    @staticmethod
    def maximum(*xs: Any) -> Any:
        """A ball containing the max of the balls: max(a, b) = (a + b + |a - b|)/2. A proven +inf among them is the
        max and a proven -inf never is (as balls both would be [+/- inf], which loses the sign)."""
        if any(isinstance(x, ProvenInfinity) and x > 0 for x in xs):
            return ProvenInfinity(math.inf)
        finite = [x for x in xs if not isinstance(x, ProvenInfinity)]
        if not finite:
            return ProvenInfinity(-math.inf)
        out = _ball(finite[0])
        for x in finite[1:]:
            x = _ball(x)
            out = (out + x + abs(out - x)) / 2
        return out

    @staticmethod
    def minimum(*xs: Any) -> Any:
        """A ball containing the min of the balls: min(a, b) = (a + b - |a - b|)/2 (a proven -inf is the min, a
        proven +inf never is)."""
        if any(isinstance(x, ProvenInfinity) and x < 0 for x in xs):
            return ProvenInfinity(-math.inf)
        finite = [x for x in xs if not isinstance(x, ProvenInfinity)]
        if not finite:
            return ProvenInfinity(math.inf)
        out = _ball(finite[0])
        for x in finite[1:]:
            x = _ball(x)
            out = (out + x - abs(out - x)) / 2
        return out


class ProvenInfinity(float):
    """+-inf returned on purpose by a closed form in Arb mode (`num().inf`), e.g. a divergence between laws with
    different supports. Unlike a float that overflowed (or any float computed outside Arb), it is a proof."""

    def __neg__(self) -> ProvenInfinity:
        return ProvenInfinity(-float(self))

    def __pos__(self) -> ProvenInfinity:
        return self


_Arb.inf = ProvenInfinity(math.inf)
MP, ARB = _Mp(), _Arb()
_current: contextvars.ContextVar[Any] = contextvars.ContextVar("verify_numbers", default=MP)


def num() -> Any:
    """The active number system (MP unless inside `arb_numbers`)."""
    return _current.get()


class arb_numbers:  # noqa: N801 - used as a function: `with arb_numbers(prec) as N:`
    """Evaluate closed forms in Arb balls of `prec` bits inside the block. Its entry and exit set and restore the
    number system and Arb's precision as code a deadline does not interrupt (`verify.limits.uninterrupted`): as a
    generator-based context manager, an interrupt that landed in contextlib's exit left the process in Arb mode at
    the block's precision (CI: 82 later tests of one worker failed, a closed form's float() refused, roots bracketed
    at ~35 bits)."""

    def __init__(self, prec: int) -> None:
        self.prec = prec

    @uninterrupted
    def __enter__(self) -> Any:
        if arb is None:  # pragma: no cover
            raise NotEnclosable("python-flint is not installed")
        self._saved = ctx.prec
        self._token = _current.set(ARB)
        ctx.prec = self.prec
        return ARB

    @uninterrupted
    def __exit__(self, *exc: object) -> None:
        ctx.prec = self._saved
        _current.reset(self._token)


def geometric(r: Any, count: int) -> Any:
    """sum_{k < count} r^k, exact also at r = 1 (and rigorous in Arb: a ball straddling 1 is summed term by term)."""
    N = num()
    s = N.sign(1 - r)
    if s == 0:
        return N.mpf(count)
    if s is None:
        if count > 100_000:
            raise NotEnclosable("geometric sum with a ratio ball straddling 1 and too many terms")
        total, term = N.mpf(0), N.mpf(1)
        for _ in range(count):
            total, term = total + term, term * r
        return total
    return (1 - r**count) / (1 - r)


def to_mpf(x: Any) -> mpmath.mpf:
    """An mpmath number at the midpoint of a ball (or the number itself), for a float-precision first guess."""
    if arb is not None and isinstance(x, arb):
        return mpmath.mpf(x.mid().str(40, radius=False))
    return mpmath.mpf(x)


def decreasing_root(f: Callable[[Any], tuple[Any, Any]], target: Any, tol: Any = None, floor: Any = 0,
                    guess: float | None = None) -> mpmath.mpf:
    """The smallest e >= floor (0 or below) with delta(e) <= target, for delta non-increasing; f(e) = (delta(e),
    delta'(e)), mpmath. A `floor` < 0 (a signed eps(delta)) must have delta(floor) >= target, e.g. floor =
    log(1 - target) for a hockey stick, which is >= 1 - e^e.

    Doubling finds a bracket [lo, hi]; Newton steps on log delta - log target (a few iterations even where delta is
    tiny) stay inside it, bisection otherwise; once the steps settle, a probe just past the root closes the bracket.
    Returns hi, the end with delta(hi) <= target, once hi - lo <= tol * max(1, |hi|) (default 2^-80, far below the
    float the truths report, or 2^(8 - working precision) where that is coarser).

    `guess`: a float near the root (a double-precision solve of the closed form), from which the same Newton steps and
    probe close the bracket in about 3 evaluations of f (`_root_near`); the search above runs where they do not."""
    tol = mpmath.mpf(2) ** max(-80, 8 - mpmath.mp.prec) if tol is None else tol
    floor = mpmath.mpf(floor)
    if guess is not None and (near := _root_near(f, target, tol, floor, guess)) is not None:
        return near
    if f(mpmath.mpf(0))[0] <= target:
        if floor >= 0:
            return mpmath.mpf(0)
        if f(floor)[0] <= target:
            return floor
        lo, hi = floor, mpmath.mpf(0)
    else:
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while f(hi)[0] > target:
            lo, hi = hi, 2 * hi
    x, log_target = (lo + hi) / 2, mpmath.log(target)
    for _ in range(4 * mpmath.mp.prec + 400):
        d, slope = f(x)
        if d <= target:
            hi = x
        else:
            lo = x
        if hi - lo <= tol * max(1, abs(hi)):
            return hi
        step = _newton(x, d, slope, log_target)
        if step is None or not lo < step < hi:
            x = (lo + hi) / 2
        elif abs(step - x) <= tol * max(1, abs(x)):
            nudge = tol * max(1, abs(step)) / 2
            x = min(step + nudge, (x + hi) / 2) if d > target else max(step - nudge, (lo + x) / 2)
        else:
            x = step
    raise ArithmeticError(f"no root of delta(eps) = {mpmath.nstr(target, 5)} found in [{lo}, {hi}]")


def float_root(h: Callable[[float], float], lo: float, hi: float) -> float | None:
    """The root in [lo, hi] of a float function h decreasing through 0 (brentq to ~4 ulps), e.g. log delta - log
    target in double precision: a `guess` for decreasing_root. None where h(lo) > 0 >= h(hi) fails or a value is NaN
    or raises (overflow, log of a difference rounded to <= 0); +-inf are clamped to +-1e300 for brentq."""

    from scipy.optimize import brentq  # scipy.optimize costs ~0.1 s at import: only where a root is solved for

    def clamped(x: float) -> float:
        value = float(h(x))
        if math.isnan(value):
            raise ValueError("NaN")
        return min(max(value, -1e300), 1e300)

    try:
        if not clamped(lo) > 0 >= clamped(hi):
            return None
        return float(brentq(clamped, lo, hi, xtol=1e-300, rtol=4 * sys.float_info.epsilon))
    except (ValueError, ArithmeticError, RuntimeError):
        return None


def _root_near(f: Callable[[Any], tuple[Any, Any]], target: Any, tol: Any, floor: mpmath.mpf,
               guess: float) -> mpmath.mpf | None:
    """decreasing_root from a first guess: Newton steps on log delta - log target from `guess`; once a step is below
    w = tol max(1, |x|) / 4, a probe w past its end on the side not yet seen. Returns hi once floor < lo < hi with
    delta(lo) > target >= delta(hi) (both evaluated) and hi - lo <= tol max(1, |hi|); None if that takes more than 8
    evaluations, a point falls to the floor, or a step is undefined (delta <= 0 or slope >= 0)."""
    if not math.isfinite(guess):
        return None
    x, log_target = mpmath.mpf(guess), mpmath.log(target)
    lo = hi = None
    for _ in range(8):
        if not x > floor:
            return None
        d, slope = f(x)
        if d > target:
            lo = x if lo is None else max(lo, x)
        else:
            hi = x if hi is None else min(hi, x)
        if lo is not None and hi is not None and hi - lo <= tol * max(1, abs(hi)):
            return hi
        after = _newton(x, d, slope, log_target)
        if after is None:
            return None
        step, x = x - after, after
        w = tol * max(1, abs(x)) / 4
        if abs(step) <= w:  # settled: the root is within ~step^2 of x, so x +- w lies past it
            x = x + w if d > target else x - w
    return None


def _newton(x: mpmath.mpf, d: mpmath.mpf, slope: mpmath.mpf, log_target: mpmath.mpf) -> mpmath.mpf | None:
    """The Newton step from x on log delta - log target (delta(x) = d, delta'(x) = slope); None where it is undefined
    (d <= 0 or slope >= 0)."""
    return x - (mpmath.log(d) - log_target) * d / slope if d > 0 and slope < 0 else None


def enclose_decreasing_root(f: Callable[[Any], Any], target: Any, guess: Callable[[], Any], floor: float = 0.0) -> Any:
    """A ball containing the smallest e >= floor with f(e) <= target, for f non-increasing, evaluated in Arb.

    `guess()` gives the root in mpmath; the ball is [lo, hi] around it with f(lo) > target and f(hi) <= target
    proven (or [floor, floor] when f(floor) <= target is proven).
    """
    target = ARB.mpf(target)
    if f(arb(floor)) <= target:
        return arb(floor)
    token = _current.set(MP)  # the guess is a float-precision mpmath computation
    try:
        with mpmath.workdps(40):
            e = float(guess())
    finally:
        _current.reset(token)
    for rel in (1e-14, 1e-11, 1e-8, 1e-5):
        pad = rel * abs(e) + rel * 1e-300
        lo, hi = max(e - pad, floor), e + pad + 1e-300
        if f(arb(lo)) > target and f(arb(hi)) <= target:
            return arb(lo).union(arb(hi))
    raise NotEnclosable(f"could not bracket the root near {e!r} rigorously")


@dataclass(frozen=True)
class Enclosure:
    """A rigorous enclosure lower <= x <= upper of a real number, with how it was obtained.

    Ends are Arb balls with radius 0 (or +-inf as Python floats); `text` keeps them as decimal strings for JSON.
    """

    lower: Any
    upper: Any
    method: str
    prec: int

    @classmethod
    def of(cls, ball: Any, method: str, prec: int) -> Enclosure:
        """The enclosure of an Arb ball (NotEnclosable if the ball is NaN or unbounded).

        Only a genuine Arb result encloses: a Python float (or an mpmath or NumPy number) returned in Arb mode, e.g. by
        a formula that called `math.exp`, is a rounded value, not a ball, and is refused. An infinity counts only as
        `num().inf` (a ProvenInfinity); an exact integer is its own enclosure."""
        if isinstance(ball, ProvenInfinity) and math.isinf(ball):
            return cls(float(ball), float(ball), method, prec)
        if isinstance(ball, int) and not isinstance(ball, bool):
            ball = arb(ball)
        if not isinstance(ball, arb):
            raise NotEnclosable(f"{method}: the formula returned a {type(ball).__name__} ({ball!r}) in Arb mode, not "
                                "an Arb ball: a float is a rounded value, not a rigorous enclosure (compute with "
                                "verify.truth.numbers.num() throughout)")
        if not ball.is_finite():
            raise NotEnclosable(f"{method}: the enclosure is not finite ({ball})")
        return cls(ball.lower(), ball.upper(), method, prec)

    @property
    def infinite(self) -> bool:
        return isinstance(self.lower, float) and math.isinf(self.lower)

    def text(self) -> tuple[str, str]:
        def show(x: Any) -> str:
            return repr(x) if isinstance(x, float) else x.str(20, radius=False)
        return show(self.lower), show(self.upper)

    def larger(self, other: Enclosure) -> Enclosure:
        """The enclosure of max(x, y)."""
        if self.infinite or other.infinite:
            return self if self.infinite else other
        def top(a: Any, b: Any) -> Any:  # ends are exact balls, so the comparison is decided
            return a if a >= b else b
        return Enclosure(top(self.lower, other.lower), top(self.upper, other.upper),
                         f"max of ({self.method}) and ({other.method})", min(self.prec, other.prec))


Encloser = Callable[[int], Enclosure]  # precision in bits -> rigorous enclosure of a truth


# ---- cancellation-free forms of 1 - (1 - x)^k and its geometric sums (issue 21) -----------------------------------
#
# A contraction m = 1 - x with x = eta lam tiny (or m near -1, x near 2) makes 1 - m^k and (1 - m^k)/(1 - m) lose
# every digit the working precision cannot hold of x: below x ~ 1e-42 a 50-digit `geometric(m, k)` is noise. These
# take the gap x itself (exact where it is a product of the inputs) and go through log|m| = log1p(-x) (or
# log1p(x - 2) for m < 0), expm1 and exp, so the relative accuracy is the working precision's at every scale; in Arb
# the same formulas give tight balls (a ball of log|m| that straddles 0 is handled by monotonicity in log|m|).


MAX_EXTRA_BITS = 1 << 20  # about 315,000 digits: far above what any catalog point asks for, below mpmath's overflow


@contextmanager
def extra_precision(bits: int) -> Iterator[None]:
    """Raise the active number system's working precision by `bits` inside the block; past MAX_EXTRA_BITS a
    ResourceLimitError (a tail or a cancellation at parameters like eps = 1e30 asked for so many bits that mpmath's
    integer shift overflowed: an internal error before)."""
    if not int(bits) <= MAX_EXTRA_BITS:
        raise ResourceLimitError(f"the computation needs {int(bits):.3g} extra bits of working precision, more than "
                                 f"{MAX_EXTRA_BITS} (the parameters are too extreme for it)")
    if num().rigorous:
        with ctx.workprec(ctx.prec + int(bits)):
            yield
    else:
        with mpmath.workprec(mpmath.mp.prec + int(bits)):
            yield


def _gap_log(x: Any) -> tuple[int, Any] | None:
    """(s, L) with 1 - x = s e^L (s = +-1) where |1 - x| lies decidedly in (1/2, 2): L = log1p(-x) for 1 - x > 0,
    log1p(x - 2) for 1 - x < 0, both accurate for an accurate x. None elsewhere: there 1 - x is far from +-1, so
    powers of it and 1 minus them have no cancellation and the direct formulas are accurate."""
    N = num()
    m = 1 - x
    size = abs(m)
    if N.sign(size - N.mpf(1) / 2) != 1 or N.sign(2 - size) != 1:
        return None
    return (1, N.log1p(-x)) if N.sign(m) == 1 else (-1, N.log1p(x - 2))


def gap_power(x: Any, k: int) -> Any:
    """(1 - x)^k for an integer k >= 0, through exp(k log|1 - x|) where 1 - x is near +-1."""
    k = int(k)
    sl = _gap_log(x)
    if sl is None:
        return (1 - x) ** k
    s, L = sl
    return (-1 if s < 0 and k % 2 else 1) * num().exp(k * L)


def _exp_geometric(s: int, L: Any, count: int) -> Any:
    """sum_{j < count} (s e^L)^j: expm1(count L)/expm1(L) for s = 1 (count at L = 0; a ball of L straddling 0 is
    enclosed by the sums at its ends, the sum increasing in L), (1 - (-e^L)^count)/(1 + e^L) for s = -1."""
    N = num()
    if s > 0:
        sign = N.sign(L)
        if sign == 0:
            return N.mpf(count)
        if sign is None:
            return _exp_geometric(1, _ball(L).lower(), count).union(_exp_geometric(1, _ball(L).upper(), count))
        return N.expm1(count * L) / N.expm1(L)
    top = -N.expm1(count * L) if count % 2 == 0 else 1 + N.exp(count * L)
    return top / (1 + N.exp(L))


def geometric_gap(x: Any, count: int, power: int = 1) -> Any:
    """sum_{j < count} r^j with r = (1 - x)^power, from the gap x (what `geometric(r, count)` computes, without its
    cancellation in 1 - r^count and 1 - r when r is near 1: x = eta lam tiny, or 1 - x near -1 with power even)."""
    N = num()
    count, power = int(count), int(power)
    if count <= 0:
        return N.mpf(0)
    sl = _gap_log(x)
    if sl is None:
        r = (1 - x) ** power
        return (1 - r**count) / (1 - r)
    s, L = sl
    return _exp_geometric(-1 if s < 0 and power % 2 else 1, power * L, count)


def _exp_partials(L: Any, count: int) -> Any:
    """sum_{j < count - 1} (count - 1 - j) e^{jL} = (expm1(count L) - count expm1(L))/expm1(L)^2: the numerator
    cancels to a relative 2/((count - 1)|L|), so it is formed with that many extra bits; increasing in L, so a ball of
    L is enclosed by the values at its ends (each an exact ball, where the extra bits are effective)."""
    N = num()
    if N.rigorous and not _ball(L).is_exact():
        return _exp_partials(_ball(L).lower(), count).union(_exp_partials(_ball(L).upper(), count))
    if N.sign(L) == 0:
        return N.mpf(count) * (count - 1) / 2
    lost = -mpmath.mag(to_mpf(L) * (count - 1)) if count > 1 else 0
    with extra_precision(max(0, lost) + 20):
        value = (N.expm1(count * L) - count * N.expm1(L)) / N.expm1(L) ** 2
    return +value if not N.rigorous else value


def geometric_partials_gap(x: Any, count: int, power: int = 1) -> Any:
    """sum_{k < count} sum_{j < k} r^j = sum_{j < count - 1} (count - 1 - j) r^j, r = (1 - x)^power, from the gap x:
    (count - geometric(r, count))/(1 - r) without its cancellation (count(count - 1)/2 at r = 1)."""
    N = num()
    count, power = int(count), int(power)
    if count <= 1:
        return N.mpf(0)
    sl = _gap_log(x)
    if sl is None:
        r = (1 - x) ** power
        return (count - (1 - r**count) / (1 - r)) / (1 - r)
    s, L = sl
    if s < 0 and power % 2:  # r near -1: the alternating partial sums stay small next to count (no systematic loss)
        return (count - _exp_geometric(-1, power * L, count)) / (1 + N.exp(power * L))
    return _exp_partials(power * L, count)


def normal_cdf(x: Any) -> Any:
    """Phi(x) in the active number system (the mpmath one also for |x| > 1e150, see _mp_ncdf)."""
    return num().ncdf(x)
