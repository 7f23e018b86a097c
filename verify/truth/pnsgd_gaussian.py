"""Exact laws of contractive noisy iterations with affine maps (Feldman et al. 2018) on R^d.

One-pass noisy SGD (PNSGD, Alg. 1, no projection) on f(w; x) = (lam/2)||w - x||^2 is
w_{k+1} = c w_k + eta lam x_{k+1} - eta Z_{k+1}, c = 1 - eta lam, Z ~ N(0, sigma^2 I): Gaussian with equal
covariances for neighbouring datasets, so R_alpha = alpha gap^2 / (2 var) along the differing direction.

Geometric sums of c go through the gap 1 - c where |c| is near 1 (verify.truth.numbers.geometric_gap: log1p/expm1,
no cancellation in 1 - c^(2n) and 1 - c^2, tight Arb balls at any n, where numbers.geometric kept 82-100 of 128 bits
at c = 1 - 2^-53 and gave up on a ball around 1 beyond 1e5 terms), and through c itself elsewhere (there 1 - c^k
cancels less than expm1 amplifies, and 1 - (1 - c) would round a tiny c).
"""

from __future__ import annotations

from typing import Any

import mpmath

from verify.truth.numbers import geometric_gap, num, to_mpf


def _near_unit(c: Any) -> bool:
    """|c| decidedly in (1/2, 2), where 1 - c is exact for a float c and the gap forms apply."""
    N = num()
    size = abs(c)
    return N.sign(size - N.mpf(1) / 2) == 1 and N.sign(2 - size) == 1


def _power(c: Any, k: int) -> Any:
    """c^k for an integer k >= 0, directly: for an exact c that is accurate (Arb keeps 128 of 128 bits at
    c = 1 - 2^-53, k = 6000), while exp(k log1p(-x)) of numbers.gap_power loses log2(k |log c|) bits (15 at c = 1.5,
    k = 2000); for a ball c the width is the conditioning of c^k either way."""
    return c ** int(k)


def _gap_pays(c: Any, count: int, power: int) -> bool:
    """Whether the gap form of sum_{j < count} r^j, r = c^power, loses fewer bits than the direct (1 - r^count)/(1 - r):
    with l = |power log|c||, the gap form loses log2(count l) where count l > 1 (expm1(count L) amplifies the error of
    L), the direct form log2(1/l) in 1 - r (r > 0) and log2(1/(count l)) in 1 - r^count (r^count > 0)."""
    with mpmath.workprec(30):
        size = abs(to_mpf(c))
        ell = abs(power * mpmath.log(size))
        if ell == 0:
            return True
        negative = to_mpf(c) < 0 and power % 2 == 1
        gap_loss = max(0, mpmath.log(count * ell, 2))
        direct_loss = 0 if negative else max(0, -mpmath.log(ell, 2))
        if not (negative and count % 2 == 1):
            direct_loss += max(0, -mpmath.log(count * ell, 2))
        return gap_loss <= direct_loss


def _geometric(c: Any, count: int, power: int) -> Any:
    """sum_{j < count} c^(power j): from the gap 1 - c (numbers.geometric_gap) where c is near +-1 and that loses
    fewer bits (`_gap_pays`), else (1 - r^count)/(1 - r), whose cancellation is then the smaller."""
    count, power = int(count), int(power)
    if count <= 0:
        return num().mpf(0)
    if _near_unit(c) and _gap_pays(c, count, power):
        return geometric_gap(1 - c, count, power)
    r = c**power
    if num().sign(1 - r) == 0:
        return num().mpf(count)
    return (1 - r**count) / (1 - r)


def pnsgd_renyi(alpha, sigma, n: int, t: int, Delta, c) -> mpmath.mpf:
    """R_alpha of the last PNSGD iterate when record t of n differs; Delta = gradient difference, c = 1 - eta lam.

    Mean gap eta c^(n-t) Delta, variance eta^2 sigma^2 sum_{k<n} c^(2k); eta cancels.
    """
    alpha, sigma, Delta, c = map(num().mpf, (alpha, sigma, Delta, c))
    n, t = int(n), int(t)
    return alpha * Delta**2 * _power(c, 2 * (n - t)) / (2 * sigma**2 * _geometric(c, n, 2))


def pnmsgd_renyi(alpha, sigma, n: int, i: int, Delta, c) -> mpmath.mpf:
    """R_alpha after n epochs in a fixed order (Alg. 2) when record i differs: used at steps j n + i.

    Mean gap eta Delta c^(n-i) sum_{k<n} c^(n k), variance eta^2 sigma^2 sum_{k<n^2} c^(2k).
    """
    alpha, sigma, Delta, c = map(num().mpf, (alpha, sigma, Delta, c))
    n, i = int(n), int(i)
    gap = Delta * _power(c, n - i) * _geometric(c, n, n)
    return alpha * gap**2 / (2 * sigma**2 * _geometric(c, n * n, 2))


def cni_affine_renyi(alpha, sigma, K: int, D0, kappa) -> mpmath.mpf:
    """R_alpha(X_K || X'_K) for X_{k+1} = kappa X_k + b + N(0, sigma^2), starts at distance D0."""
    alpha, sigma, D0, kappa = map(num().mpf, (alpha, sigma, D0, kappa))
    K = int(K)
    return alpha * _power(kappa, 2 * K) * D0**2 / (2 * sigma**2 * _geometric(kappa, K, 2))


def shifted_renyi_gaussian(alpha, gap, var, z) -> mpmath.mpf:
    """D_alpha^{(z)}(N(m1, var I) || N(m2, var I)) = alpha max(0, ||m1 - m2|| - z)^2 / (2 var).

    Upper bound: move the first law by z towards m2. Lower bound: any law within W_inf distance z of
    N(m1, var) dominates N(||m1-m2|| - z, var) along m1 - m2 (research note seed-001, section 2.2).
    """
    alpha, gap, var, z = map(num().mpf, (alpha, gap, var, z))
    return alpha * num().maximum(num().mpf(0), gap - z) ** 2 / (2 * var)
