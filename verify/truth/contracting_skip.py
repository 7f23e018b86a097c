"""Skip-PNSGD where the private records before the last one contract (Feldman et al. 2018, Corollary 31's setting):
the instance on which the corollary's printed sigma, short of a factor 2 under the root, is not private at eps < 1.

One dimension, K = [-R, R], R = 1, the corollary's step eta = sqrt(8R) / sqrt(n (L^2 + d sigma^2)) with d = 1 (as
printed; sqrt(8) R in research 7, the same at R = 1); the m public
records are last and have loss 0; the last private record t = n - m is +-L w (gradient difference 2L); the private
records before it have loss (beta/2) w^2 with beta = L/R (L-Lipschitz on K, beta-smooth, eta <= 2/beta), so each of
their steps maps w to (1 - c) w with c = eta beta. Skip-PNSGD skips the first t0 ~ U{0..floor(n/2)} records; with
2m < n the record t is never skipped. Without projection, from w_{t0} = 0 and in units of eta sigma, the output is
N(-+L/sigma, V_j) with V_j = A (1 - r^j) + m + 1, r = (1 - c)^2, A = 1/(1 - r), j = t - 1 - t0 >= j_min: the
contraction leaves about A ~ sqrt(n/32) noise units from before t, against m + 1 after it (the amplification bound
counts only the latter). Proven bracket on the tight eps(delta) of the projected output, both datasets:

- above: the pair (mix_j N(-a, V_j), mix_j N(a, V_j)) is at most its worst component (joint convexity), the one of
  V_{j_min}; projection changes each law by at most p_leave in total variation (the chains agree until the first exit,
  union bound over n steps: |mean| <= eta L, variance <= eta^2 sigma^2 V_inf, so P(|w_k| > R) <= 2 Phi(-(R - eta L) /
  (eta sigma sqrt(V_inf))));
- below: each law is within tv + p_leave of N(-+a, V_inf) (Pinsker on the Gaussian KL, largest at j_min), so
  delta(eps) >= delta_G(eps) - (1 + e^eps)(tv + p_leave) for the Gaussian pair of V_inf.
Both corrections are below 1e-80 on the catalog's instances; they are carried in Arb.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath

from verify.errors import ParameterError
from verify.truth.gaussian import gaussian_dp_epsilon
from verify.truth.numbers import Enclosure, NotEnclosable, arb_numbers, normal_cdf, num

R = 1


def _parts(n: int, m: int, L: Any, sigma: Any) -> dict[str, Any]:
    """The chain's quantities (module docstring) in the active number system."""
    N = num()
    eta = N.sqrt(N.mpf(8)) * R / N.sqrt(n * (L**2 + sigma**2))
    c = eta * L / R
    r = (1 - c) ** 2
    a = 1 / (1 - r)
    j_min = n - m - 1 - n // 2
    v_inf, v_min = a + m + 1, a * (1 - r**j_min) + m + 1
    # |x| for x = V_min/V_inf - 1 in (-1, 0]: KL(N(0, V_min) || N(0, V_inf)) = (x - log1p(x))/2 <= x^2/(4 (1 + x))
    # (the difference is 0 at x = 0 and decreasing), so Pinsker's TV <= sqrt(KL/2) <= |x| / (2 sqrt(2 (1 + x)))
    gap = a * r**j_min / v_inf
    tv = gap / (2 * N.sqrt(2 * (1 - gap)))
    leave = 2 * n * normal_cdf(-(R - eta * L) / (eta * sigma * N.sqrt(v_inf)))
    return {"mu_inf": 2 * L / (sigma * N.sqrt(v_inf)), "mu_max": 2 * L / (sigma * N.sqrt(v_min)), "tv": tv,
            "leave": leave, "noise_before": a}


def _check(n: int, m: int) -> None:
    if n < 16 or m < 1 or 2 * m >= n:
        raise ParameterError(f"the contracting instance needs n >= 16 and 1 <= m < n/2 (the last private record is "
                             f"never skipped), got n={n}, m={m}")


def _ends(n: int, m: int, L: Any, sigma: Any, delta: Any) -> tuple[Any, Any, Any, Any]:
    """(lower, upper, the Gaussian eps at V_inf) of the tight eps(delta), and the noise units left from before t, in
    the active number system."""
    N = num()
    p = _parts(n, m, L, sigma)
    cap = gaussian_dp_epsilon(delta / 2, p["mu_max"])  # eps_true <= cap once the slack is below delta / 2
    slack = (1 + N.exp(cap)) * (p["tv"] + p["leave"])
    if not slack < delta / 2:
        raise NotEnclosable(f"the projection and mixture slack {slack} is not below delta/2")
    return (gaussian_dp_epsilon(delta + slack, p["mu_inf"]), gaussian_dp_epsilon(delta - slack, p["mu_max"]),
            gaussian_dp_epsilon(delta, p["mu_inf"]), p["noise_before"])


def contracting_skip_epsilon(sigma: float, L: float, n: int, m_pub: int, delta: float
                             ) -> tuple[float, float, float, float, Any]:
    """(the Gaussian value at V_inf, the bracket's ends in floats rounded outwards, the noise units left from before
    the last private record, the Arb encloser) of the tight eps(delta)."""
    n, m = int(n), int(m_pub)
    _check(n, m)

    def enclose(prec: int) -> Enclosure:
        with arb_numbers(prec) as N:
            lower, upper, _, _ = _ends(n, m, N.mpf(L), N.mpf(sigma), N.mpf(delta))
            return Enclosure(lower.lower(), upper.upper(), "Gaussian eps(delta) at V_inf and V_min, slack for the "
                             "skip mixture (Pinsker) and the projection (union bound), Arb", prec)

    with mpmath.workdps(50):
        N = num()
        try:
            lower, upper, value, before = _ends(n, m, N.mpf(L), N.mpf(sigma), N.mpf(delta))
        except NotEnclosable as err:  # the iterates reach the boundary of K (or the skips differ) too often
            raise ParameterError(f"contracting Skip-PNSGD at n={n}, m={m}, sigma={sigma:g}, L={L:g}, delta={delta:g}: "
                                 f"{err}; the bracket needs the noise well inside K = [-1, 1] and delta above the "
                                 "slack of the skip mixture and the projection (which e^eps multiplies)") from None
    low, high = math.nextafter(float(lower), -math.inf), math.nextafter(float(upper), math.inf)
    return float(value), max(low, 0.0), high, float(before), enclose
