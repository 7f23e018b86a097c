"""The paper's batch-sampling plug-in estimators (Thudi et al. 2024, seed 004) on the one instance where their
behaviour is provable: one DP-SGD step, mean rule (U(empty batch) = 0), Poisson rate q, and the N other points of D
sharing one clipped gradient v, different from x*'s g* (D' = D u {x*}).

Theorem 3.6's 20 x 20 estimate (Sec. 4.2, App. B.3; research 4.3). For each of `outer` batches B of one dataset it
averages exp(sum_{i<j} <nu_i, nu_j>/s^2), nu_i = U(B_i) - U(B), over `inner` alpha-tuples (B_1..B_alpha) of the
other, and reports (1/(alpha - 1)) ln of that mean, averaged over the outer batches; both directions, the larger one.
Call a batch *plain* when it is non-empty and does not hold x*: U = v. If every outer batch is plain (B of D
non-empty; B' of D' non-empty without x*) and every inner tuple has at most one batch that is not plain, then at most
one nu_i is non-zero in every tuple, every exponent is 0, and the estimate is exactly 0, while the true per-instance
divergence is > 0 (g* != v: x*'s batches move the mean off {0, v}). With b = 1 - (1 - q)^N and a = (1 - q) b:

    P(estimate = 0) >= b^outer a^outer [a^alpha + alpha (1 - a) a^(alpha - 1)]^(outer inner)
                                       [b^alpha + alpha (1 - b) b^(alpha - 1)]^(outer inner).

Corollary 3.1's 100-batch estimate (App. B.1; research 4.6(iii)). The corollary's a_p = q E_B[e^{p C Delta(B)}]^(1/p),
C = C_{delta,s} at the per-batch delta (delta'' - delta')/q, Delta(B) = |g* - v|/(|B| + 1) for a non-empty batch of D
and |g*| for the empty one; the paper replaces E_B by the mean over `batches` sampled batches. If every sampled batch
has at least k0 >= 1 points, each Delta is at most |g* - v|/(k0 + 1), so the estimate is at most the corollary's
formula at that constant; the smallest k0 for which that is below the exact corollary gives
P(estimate < exact corollary) >= P(|B| >= k0)^batches.

Everything is a finite closed form (the exact expectation sums the N + 1 binomial atoms), written against
`verify.truth.numbers.num()` so that Arb balls enclose it.
"""

from __future__ import annotations

from typing import Any

from verify.errors import ParameterError
from verify.truth.numbers import num

MAX_POINTS = 100_000  # N: the exact expectation sums N + 1 binomial atoms


def _nonempty(q: Any, n_points: Any) -> Any:
    """1 - (1 - q)^N without cancellation."""
    N = num()
    return -N.expm1(n_points * N.log1p(-q))


def _at_most_one(good: Any, alpha: int) -> Any:
    """P(at most one of alpha independent batches is not good)."""
    return good**alpha + alpha * (1 - good) * good ** (alpha - 1)


def theorem36_estimate_zero_lower(alpha: Any, q: Any, n_points: Any, outer: Any, inner: Any) -> Any:
    """A proven lower bound on P(the outer x inner estimate of Theorem 3.6 is exactly 0) (module docstring)."""
    a_int, tuples = int(alpha), int(outer) * int(inner)
    b = _nonempty(q, n_points)
    a = (1 - q) * b
    return (a * b) ** int(outer) * (_at_most_one(a, a_int) * _at_most_one(b, a_int)) ** tuples


def _calibration(q: Any, s: Any, delta: Any, delta_slack: Any) -> Any:
    """C_{delta,s} = sqrt(2 ln(1.25/delta_batch))/s at the per-batch delta_batch = (delta'' - delta')/q."""
    N = num()
    inner = 2 * N.log(N.mpf(5) / 4 * q / (delta - delta_slack))
    if N.sign(inner) != 1:
        raise ParameterError("Corollary 3.1 needs 1.25 q/(delta'' - delta') > 1 (a real C_{delta,s})")
    return N.sqrt(inner) / s


def _corollary(log_a: Any, q: Any, p: Any, delta_slack: Any) -> Any:
    """eps' = ln(a_p^(p/(p-1)) delta'^(-1/(p-1)) + 1 - q) from ln a_p."""
    N = num()
    return N.log(N.exp((p * log_a - N.log(delta_slack)) / (p - 1)) + 1 - q)


def _binomial_pmfs(q: Any, n_points: int, count: int) -> list:
    """P(|B| = k) for k < count, |B| ~ Bin(N, q), by the ratio recurrence from (1 - q)^N."""
    N = num()
    out = [N.exp(n_points * N.log1p(-q))]
    rest = 1 - q  # the same number at every step: computed once (the same operations on the same values)
    for k in range(count - 1):
        out.append(out[-1] * (n_points - k) / (k + 1) * q / rest)
    return out


def corollary31_mean_rule(q: Any, n_points: Any, s: Any, g_star: Any, g_a: Any, p_holder: Any, delta: Any,
                          delta_slack: Any) -> Any:
    """Corollary 3.1's eps' with the exact expectation over the batches of D (module docstring)."""
    return _mean_rule(q, int(n_points), s, g_star, g_a, p_holder, delta, delta_slack)[0]


def _mean_rule(q: Any, n: int, s: Any, g_star: Any, g_a: Any, p_holder: Any, delta: Any, delta_slack: Any
               ) -> tuple[Any, list]:
    """`corollary31_mean_rule` and the batch-size pmf it sums (`_binomial_pmfs(q, n, n + 1)`, whose first k
    entries are `_binomial_pmfs(q, n, k)`: the same recurrence)."""
    N = num()
    c = _calibration(q, s, delta, delta_slack)
    pmf = _binomial_pmfs(q, n, n + 1)
    gap = abs(g_star - g_a)
    expectation = pmf[0] * N.exp(p_holder * c * abs(g_star))
    scale, exp = p_holder * c * gap, N.exp  # (p c) gap, as p * c * gap / (k + 1) groups it: once, not per term
    expectation += sum(w * exp(scale / (k + 1)) for k, w in enumerate(pmf[1:], start=1))
    return _corollary(N.log(q) + N.log(expectation) / p_holder, q, p_holder, delta_slack), pmf


def corollary31_estimate_below_lower(q: Any, n_points: Any, s: Any, g_star: Any, g_a: Any, p_holder: Any, delta: Any,
                                     delta_slack: Any, batches: Any) -> Any:
    """A proven lower bound on P(the `batches`-batch estimate of Corollary 3.1's eps' < the exact eps'); 0 when no
    batch size k0 <= N makes the estimate's ceiling fall below the exact value."""
    N = num()
    n = int(n_points)
    exact, pmf = _mean_rule(q, n, s, g_star, g_a, p_holder, delta, delta_slack)
    c = _calibration(q, s, delta, delta_slack)
    gap = abs(g_star - g_a)
    # the ceiling at Delta <= x is below the exact eps' iff x < x_max (invert the corollary's formula)
    x_max = ((p_holder - 1) * N.log(N.expm1(exact) + q) + N.log(delta_slack)) / p_holder - N.log(q)
    if N.sign(x_max) != 1:
        return N.mpf(0)
    k0 = max(1, int(float(c * gap / x_max)))
    while k0 <= n:
        ceiling = _corollary(N.log(q) + c * gap / (k0 + 1), q, p_holder, delta_slack)
        if N.sign(exact - ceiling) == 1:
            return (1 - sum(pmf[:k0])) ** int(batches)
        k0 += 1
    return N.mpf(0)
