"""Bound functions shared by several papers' entries: the Rényi DP of the Poisson-subsampled Gaussian mechanism
(Mironov, Talwar & Zhang 2019, Sec. 3.3), the accounting every DP-SGD paper compares with."""

from __future__ import annotations

from verify.bounds import MAX_TERMS
from verify.errors import ResourceLimitError
from verify.recursion import RecursiveBound


class SampledGaussianRDP(RecursiveBound):
    """`steps` compositions of the sampled Gaussian at rate q with sensitivity/noise ratio r = Delta/s, integer alpha:
    steps/(alpha - 1) log sum_k C(alpha, k) (1 - q)^(alpha - k) q^k exp(r^2 (k^2 - k)/2) (r = 0 gives 0, q = 1 the
    Gaussian mechanism's steps alpha r^2/2). The binomial weights sum to 1 and the k = 0, 1 terms have exponent 0, so
    the sum is 1 + sum_{k >= 2} C(alpha, k) (1 - q)^(alpha - k) q^k expm1(r^2 (k^2 - k)/2), taken as log1p of a
    log-sum-exp of positive terms: no cancellation at any q (before, the k = 0 term's alpha log(1 - q) and the others'
    cancelled: at q = 1e-30 the 50-digit value was -7.7e-52 where the RDP is 1.7e-60)."""

    nargs = 4
    integer_args = (0, 1)  # alpha, steps
    evaluate_in_arb = True  # branches on exact inputs only (q == 1, half_r2 == 0, q == 0); no discarded value

    @classmethod
    def compute(cls, N, alpha, steps, q, ratio):
        if q == 1:
            return steps * alpha * ratio**2 / 2
        half_r2 = ratio**2 / 2
        if half_r2 == 0 or q == 0:
            return N.mpf(0) * steps / (alpha - 1)  # every exponent 0, or no sampling: the same law (0/0 at alpha 1)
        if alpha - 1 > MAX_TERMS:  # a sum over k <= alpha: alpha = 1e308 ran until the point's deadline (120 s),
            raise ResourceLimitError(  # which then blamed the truth; a cap, as the bound language's long sums
                f"the sampled Gaussian's RDP sum at order alpha = {float(alpha):g} has more than {MAX_TERMS} terms")
        log_p, log_q = N.log1p(-q), N.log(q)
        terms, log_binomial = [], N.log(N.mpf(alpha))
        for k in range(2, alpha + 1):  # log C(alpha, k) summed term by term (gamma products cost 10x at alpha 1000)
            log_binomial += N.log(N.mpf(alpha - k + 1) / k)
            terms.append(log_binomial + (alpha - k) * log_p + k * log_q + N.log(N.expm1(half_r2 * (k * k - k))))
        if not terms:  # alpha = 1: undefined, as the order's 1/(alpha - 1)
            return N.mpf(0) / (alpha - 1)
        top = N.maximum(*terms)
        log_sum = top + N.log(sum((N.exp(v - top) for v in terms), N.mpf(0)))
        return steps * N.log1p(N.exp(log_sum)) / (alpha - 1)
