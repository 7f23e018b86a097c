"""Exact Rényi divergence and (eps, delta) curve between Gaussians.

Written without subtracting nearly equal numbers (issue 21): the Rényi log-determinant term as a sum of
log(1 + y) - y <= 0 (series at small y) over the variance ratios, delta(eps) at the working precision raised by the
digits its difference of normal tails loses, and the trade-off through the upper-tail quantile Phi^-1(1 - x) =
sqrt(2) erfcinv(2x) (not Phi^-1 of a rounded 1 - x)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

from verify.errors import ParameterError, ResourceLimitError
from verify.truth.numbers import (
    NotEnclosable,
    arb_numbers,
    decreasing_root,
    enclose_decreasing_root,
    extra_precision,
    float_root,
    normal_cdf,
    num,
    to_mpf,
)

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None


def _check_alpha(alpha: float) -> None:
    if not alpha > 1 or math.isnan(alpha):
        raise ParameterError(f"Rényi order alpha must be > 1, got {alpha}")


def renyi_gaussian(mu_p: ArrayLike, cov_p: ArrayLike, mu_q: ArrayLike, cov_q: ArrayLike, alpha: float) -> float:
    """R_alpha(N(mu_p, cov_p) || N(mu_q, cov_q)) for any positive-definite covariances.

    With C = alpha*cov_q + (1-alpha)*cov_p (Gil, Alajaji & Linder 2013):
    R = alpha/2 * dmu' C^{-1} dmu - log(det C / (det cov_p^(1-alpha) det cov_q^alpha)) / (2(alpha-1)).
    Returns +inf when C is not positive definite (the divergence is infinite there).
    """
    _check_alpha(alpha)
    mu_p, mu_q = np.atleast_1d(np.asarray(mu_p, float)), np.atleast_1d(np.asarray(mu_q, float))
    cov_p, cov_q = np.atleast_2d(np.asarray(cov_p, float)), np.atleast_2d(np.asarray(cov_q, float))
    if not (np.all(np.isfinite(cov_p)) and np.all(np.isfinite(cov_q))):
        raise ParameterError("covariances must be finite")
    for name, cov in (("cov_p", cov_p), ("cov_q", cov_q)):
        if np.linalg.eigvalsh(cov).min() <= 0:
            raise ParameterError(f"{name} must be positive definite")
    beta, diff = alpha - 1, cov_p - cov_q
    mix = cov_q - beta * diff  # alpha cov_q + (1 - alpha) cov_p, from the (exact for near-equal floats) difference
    if np.linalg.eigvalsh(mix).min() <= 0:
        return math.inf
    dmu = mu_p - mu_q
    quad = float(dmu @ np.linalg.solve(mix, dmu))
    # In the frame where cov_q = I (Cholesky L): cov_p = I + D, mix = I - beta D, and with the eigenvalues d of D,
    # logdet/beta = sum_i [g(-beta d_i)/beta + g(d_i)], g(y) = log(1 + y) - y <= 0: no cancellation between the
    # log-determinants (which lost every digit for cov_p ~ cov_q or alpha ~ 1). log(1 + y) itself comes from the
    # eigenvalues of L^-1 cov_p L^-T and L^-1 mix L^-T (accurate also where 1 + y is tiny).
    chol = np.linalg.cholesky(cov_q)

    def whiten(m: np.ndarray) -> np.ndarray:
        w = np.linalg.solve(chol, np.linalg.solve(chol, m).T)
        return (w + w.T) / 2

    d = np.linalg.eigvalsh(whiten(diff))  # ascending
    ratio_p = np.linalg.eigvalsh(whiten(cov_p))  # 1 + d, ascending
    ratio_mix = np.linalg.eigvalsh(whiten(mix))[::-1]  # 1 - beta d: descending, matching ascending d
    if ratio_mix.min() <= 0 or ratio_p.min() <= 0:
        return math.inf
    excess = sum(_log1p_excess_float(-beta * di, rm) / beta + _log1p_excess_float(di, rp)
                 for di, rp, rm in zip(d, ratio_p, ratio_mix, strict=True))
    return 0.5 * alpha * quad - excess / 2


def _log1p_excess_float(y: float, one_plus_y: float) -> float:
    """log(1 + y) - y <= 0 in floats: -y^2 sum_k (-y)^k/(k + 2) for |y| <= 1/8 (log1p(y) - y cancels to -y^2/2),
    log(one_plus_y) - y elsewhere (one_plus_y = 1 + y, computed where 1 + y is accurate)."""
    y = float(y)
    if abs(y) > 0.125:
        return math.log(one_plus_y) - y
    acc = 0.0
    for k in range(20, -1, -1):  # 8^-21 < 2^-60
        acc = 1 / (k + 2) - y * acc
    return -y * y * acc


def _working_prec() -> int:
    return ctx.prec if num().rigorous else mpmath.mp.prec


def _log1p_excess(y, one_plus_y):
    """log(1 + y) - y <= 0 in the active number system, relative accuracy at every scale: -y^2 sum_{k<K} (-y)^k/(k + 2)
    for |y| <= 1/8 (in Arb plus a ball bounding the rest, |y|^K/((K + 2)(1 - |y|))); log(one_plus_y) - y elsewhere,
    where it loses at most 4 bits (`one_plus_y` = 1 + y formed without rounding 1 + y, e.g. a ratio of variances).
    Exactly 0 at y = 0."""
    N = num()
    top = abs(y).upper() if N.rigorous else abs(y)  # an exact ball in Arb
    size = to_mpf(top)
    if size > mpmath.mpf(1) / 8:
        return N.log(one_plus_y) - y
    if size == 0:
        return N.mpf(0)
    terms = (_working_prec() + 10) // max(2, -mpmath.mag(size)) + 1  # size^terms <= 2^-(prec + 10)
    acc = N.mpf(1) / (terms + 1)
    for k in range(terms - 2, -1, -1):
        acc = N.mpf(1) / (k + 2) - y * acc
    if N.rigorous:
        acc += top**terms / ((terms + 2) * (1 - top)) * arb(0, 1)
    return -(y**2) * acc


def renyi_gaussian_1d(mu_p, var_p, mu_q, var_q, alpha) -> mpmath.mpf:
    """R_alpha(N(mu_p, var_p) || N(mu_q, var_q)) in the active number system (+inf if infinite)."""
    N = num()
    mu_p, var_p, mu_q, var_q, alpha = map(N.mpf, (mu_p, var_p, mu_q, var_q, alpha))
    _check_alpha(float(to_mpf(alpha)))  # a check, not a computation (an Arb input never becomes a float in Arb)
    if N.sign(var_p) != 1 or N.sign(var_q) != 1:
        raise ParameterError("variances must be > 0")
    with extra_precision(_working_prec() + 10):  # exact for float (or working-precision) inputs
        beta, diff = alpha - 1, var_p - var_q
        mix = var_q - beta * diff  # alpha var_q + (1 - alpha) var_p
    side = N.sign(mix)
    if side is None:
        raise NotEnclosable("alpha var_q + (1 - alpha) var_p straddles 0: finite or infinite is undecided")
    if side <= 0:
        return N.inf
    # log(mix) - (1 - alpha) log(var_p) - alpha log(var_q) = log(1 + y) + beta log(1 + d), d = var_p/var_q - 1,
    # y = -beta d = mix/var_q - 1; over beta: g(y)/beta + g(d) with g(u) = log(1 + u) - u <= 0 (the first-order terms
    # -d + d cancel exactly), so both terms of R are >= 0 and nothing cancels, at any alpha > 1 and variance ratio.
    d = diff / var_q
    excess = _log1p_excess(-beta * d, mix / var_q) / beta + _log1p_excess(d, var_p / var_q)
    value = alpha * (mu_p - mu_q) ** 2 / (2 * mix) - excess / 2
    return value if N.rigorous else +value


def _exact_ball(x) -> bool:
    return not num().rigorous or x.is_exact()


def _ncdf(x):
    """Phi(x) (numbers.normal_cdf); in Arb erfc(-x/sqrt(2))/2, with erfc taken at the exact ends of its argument's
    ball (erfc decreases) beyond |x| ~ 6000. Arb's erfc of a ball with a radius bounds the propagated error through
    low-precision magnitudes: at 128 bits it kept 37 bits at |u| = 1e5 (92 at the ends), none at 1e10 (Phi ~
    10^-2e19), at any precision; up to 1e4 both agree."""
    if not num().rigorous:
        return normal_cdf(x)
    u = -x / arb(2).sqrt()
    if u.is_exact() or abs(to_mpf(u)) < 4096:
        return u.erfc() / 2
    return u.upper().erfc().union(u.lower().erfc()) / 2


def gaussian_delta(eps, mu) -> mpmath.mpf:
    """Tight delta(eps) of the pair N(0,1) vs N(mu,1) (Balle & Wang 2018, Thm. 8); symmetric in mu.

    delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) is a difference of two tails that agree to a relative
    ~1/(1 + eps/mu^2 + 1/mu) (measured within a factor 1.26 of it over mu, eps in 1e-200..1e3): at mu = 1e-20,
    eps = 1e-5, 50 digits gave -1.3e-217147240951625973171810935075 for 8.7e-...090. It is evaluated with that many
    extra bits (in Arb also 2 log2 |eps/mu|, which Arb's erfc needs for a relative enclosure of a far tail). In Arb,
    inputs that are not exact balls are replaced by the corners of their box: delta increases in mu and decreases in
    eps, and the formula on wide balls would widen by the same factor."""
    N = num()
    mu, eps = abs(N.mpf(mu)), N.mpf(eps)
    if N.sign(mu) == 0:
        return N.mpf(0)
    if not (_exact_ball(mu) and _exact_ball(eps)):
        return gaussian_delta(eps.upper(), mu.lower()).union(gaussian_delta(eps.lower(), mu.upper()))
    m, e = to_mpf(mu), to_mpf(eps)
    with mpmath.workprec(64):
        lost = int(mpmath.mag(2 + abs(e) / m**2 + 2 / m))
        far = 2 * max(0, int(mpmath.mag(abs(e) / m + m)))
    with extra_precision(max(0, lost) + far + 20):
        t = eps / mu
        value = _ncdf(mu / 2 - t) - N.exp(eps) * _ncdf(-mu / 2 - t)
    if N.rigorous:
        return value if N.sign(value) == 1 else N.maximum(value, N.mpf(0))  # delta >= 0
    return +value


def _upper_quantile(x):
    """Phi^-1(1 - x) = -Phi^-1(x) for 0 < x < 1, without forming 1 - x where x is small (1 - 1e-300 rounds to 1):
    sqrt(2) erfcinv(2x) in Arb (-sqrt(2) erfcinv(2(1 - x)) for x > 1/2, 1 - x exact for a float x); in mpmath Newton
    steps on log Phi(-z) = log x (or log Phi(z) = log(1 - x)), relative accuracy in the tail."""
    N = num()
    upper = to_mpf(x) <= mpmath.mpf(1) / 2
    if N.rigorous:
        return (1 if upper else -1) * arb(2).sqrt() * (2 * (x if upper else 1 - x)).erfcinv()
    p = x if upper else 1 - x  # Phi(-z) = p with z >= 0 for the upper tail
    return (1 if upper else -1) * _mp_tail_quantile(p)


def _mp_tail_quantile(p) -> mpmath.mpf:
    """z >= 0 with Phi(-z) = p for 0 < p <= 1/2, in mpmath: Newton on log Phi(-z) - log p (convex in z, so the steps
    from the tail asymptotics approach the root monotonically), at 20 extra bits."""
    with extra_precision(20):
        p = mpmath.mpf(p)
        if p > mpmath.mpf(10) ** -10:
            z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * p)  # 1 - 2p keeps all but <= 34 bits of p: a start
        else:
            u = -2 * mpmath.log(p)
            z = mpmath.sqrt(u - mpmath.log(u) - mpmath.log(2 * mpmath.pi))
        target, tol = mpmath.log(p), mpmath.mpf(2) ** (10 - mpmath.mp.prec)
        for _ in range(200):
            tail = normal_cdf(-z)
            step = (mpmath.log(tail) - target) * tail / mpmath.npdf(z)  # f/f' with f' = -phi(z)/Phi(-z)
            z += step
            if abs(step) <= tol * max(1, abs(z)):
                break
        else:  # pragma: no cover - quadratic convergence from the start above
            raise ArithmeticError(f"no normal quantile found for p = {mpmath.nstr(p, 5)}")
    return +z


def gaussian_tradeoff(x, mu) -> mpmath.mpf:
    """The trade-off function G_mu(x) = Phi(Phi^-1(1 - x) - mu) of N(0,1) vs N(mu,1) (Dong, Roth & Su 2022): the
    smallest type-II error of a test with type-I error x; symmetric in the order of the pair. G(0) = 1, G(1) = 0.

    Phi^-1(1 - x) is taken as the upper-tail quantile of x itself: 1 - x rounded to 1 at x = 1e-300 (mu = 40 gave 1
    for 0.0016) and Arb's erfinv of 1 - 2x gave NaN there."""
    N = num()
    x, mu = N.mpf(x), abs(N.mpf(mu))
    side_lo, side_hi = N.sign(x), N.sign(1 - x)
    if side_lo is None or side_hi is None:
        raise NotEnclosable("the type-I error ball contains 0 or 1")
    if side_lo < 0 or side_hi < 0:
        raise ParameterError(f"the type-I error x must lie in [0, 1], got {float(x)}")
    if side_lo == 0:
        return N.mpf(1)
    if side_hi == 0:
        return N.mpf(0)
    m = to_mpf(mu)
    with extra_precision(2 * max(0, int(mpmath.mag(m)) if m else 0) + 10):  # Phi(w), w ~ -mu: relative error w^2 ulp
        value = _ncdf(_upper_quantile(x) - mu)
    return value if N.rigorous else +value


def _root_scale(mu) -> int:
    """k <= 0 with 2^k <= min(1, |mu|) < 2^(k+1) (k = 0 for |mu| >= 1): eps is solved for as 2^k s, s of order 1."""
    m = abs(to_mpf(mu))
    return 0 if m == 0 or m >= 1 else int(mpmath.mag(m)) - 1


def gaussian_dp_epsilon(delta, mu) -> mpmath.mpf:
    """Smallest eps >= 0 with (eps, delta)-DP for N(0,1) vs N(mu,1) (both orders; the pair is symmetric).

    The root is found as eps = 2^k s with 2^k ~ min(1, mu) (`_root_scale`): at small mu, eps is of the order of mu
    (delta(mu s) ~ mu (phi(s) - s Phi(-s))), and the root finder's tolerance 2^-80 max(1, s) (and the Arb bracket's
    absolute pad 1e-300) would otherwise be absolute in eps (mu = 1e-300 bracketed eps = 3.9e-300 to within 25%).
    In Arb numbers the root is enclosed rigorously by a bracket around the mpmath root (delta(eps) decreases)."""
    N = num()
    k = _root_scale(mu)
    if N.rigorous:
        scale = arb(2) ** k  # exact: s -> 2^k s is exact on the bracket's ends
        return scale * enclose_decreasing_root(lambda s: gaussian_delta(scale * s, mu), delta,
                                               lambda: gaussian_dp_epsilon(to_mpf(delta), to_mpf(mu)) * 2 ** -k)
    delta, mu = mpmath.mpf(delta), abs(mpmath.mpf(mu))
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {float(delta)}")
    if mu == 0:  # identical laws
        return mpmath.mpf(0)
    scale = mpmath.ldexp(1, k)

    def f(s):  # (delta, d delta / ds) with d delta / d eps = -e^eps Phi(-mu/2 - eps/mu)
        e = scale * s
        return gaussian_delta(e, mu), -scale * mpmath.exp(e) * normal_cdf(-mu / 2 - e / mu)

    return scale * decreasing_root(f, delta, guess=_float_root(delta, mu, k))


def _float_log_delta(eps: float, mu: float) -> float:
    """log gaussian_delta(eps, mu) in floats: log Phi(a) + log(1 - e^(eps + log Phi(b) - log Phi(a))), a, b = +-mu/2
    - eps/mu, with log_ndtr (no underflow in the tails); -inf where the difference rounds to <= 0."""
    log_a = float(log_ndtr(mu / 2 - eps / mu))
    u = eps + float(log_ndtr(-mu / 2 - eps / mu)) - log_a
    return log_a + math.log(-math.expm1(u)) if u < 0 else -math.inf


def _float_root(delta: mpmath.mpf, mu: mpmath.mpf, k: int) -> float | None:
    """eps(delta) / 2^k in double precision (numbers.float_root on log delta), decreasing_root's first guess; None
    where it cannot be formed. Above eps = mu^2/2 + mu z, z = sqrt(-2 log delta), delta(eps) < Phi(-z) < delta."""
    m, log_target = float(mu), float(mpmath.log(delta))
    root = float_root(lambda e: _float_log_delta(e, m) - log_target, 0.0, m * m / 2 + m * math.sqrt(-2 * log_target))
    return None if root is None else math.ldexp(root, -k)


def composed_gaussian_bracket(quantity: str, given: float, phases: list[tuple[int, float]],
                              prec: int = 128) -> tuple[float, float] | None:
    """Floats lower <= tight value <= upper for T_i-fold compositions of the Gaussian mechanism of noise sigma_i
    (sensitivity 1), `phases` = [(T_i, sigma_i)]: mu-GDP with mu^2 = sum T_i / sigma_i^2 exactly (Dong, Roth & Su
    2022), so `quantity` "delta" is gaussian_delta(given, mu) and "epsilon" gaussian_dp_epsilon(given, mu), enclosed
    in Arb balls of `prec` bits and rounded outwards. None where mu lies outside [1e-150, 1e150] (eps ~ mu^2 / 2
    beyond the float range) or Arb cannot enclose it."""
    if any(not 1e-150 < s for _, s in phases):
        return None
    mu_float = math.sqrt(math.fsum(t * (1 / s) ** 2 for t, s in phases))
    if not 1e-150 < mu_float < 1e150:
        return None
    try:
        with arb_numbers(prec) as N:
            mu = sum((N.mpf(t) / N.mpf(s) ** 2 for t, s in phases), arb(0)).sqrt()
            ball = gaussian_delta(N.mpf(given), mu) if quantity == "delta" else gaussian_dp_epsilon(N.mpf(given), mu)
            if not (isinstance(ball, arb) and ball.is_finite()):
                return None
            lo, up = ball.lower(), ball.upper()
    except (NotEnclosable, ArithmeticError, ValueError, ResourceLimitError):
        return None
    lower, upper = max(0.0, _rounded(lo, -math.inf)), _rounded(up, math.inf)
    if quantity == "delta":
        upper = min(upper, 1.0)  # every delta is at most 1
    return (lower, upper) if math.isfinite(upper) and lower <= upper else None


def _rounded(x, direction: float) -> float:
    """the exact Arb number `x` as a float, rounded towards `direction` (one step where the nearest float is not x)"""
    near = float(x)
    return near if arb(near) == x else math.nextafter(near, direction)
