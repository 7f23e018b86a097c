"""Bound functions shared by several papers' entries: the Rényi DP of the Poisson-subsampled Gaussian mechanism
(Mironov, Talwar & Zhang 2019, Sec. 3.3), the accounting every DP-SGD paper compares with."""

from __future__ import annotations

from verify.recursion import RecursiveBound


class SampledGaussianRDP(RecursiveBound):
    """`steps` compositions of the sampled Gaussian at rate q with sensitivity/noise ratio r = Delta/s, integer alpha:
    steps/(alpha - 1) log sum_k C(alpha, k) (1 - q)^(alpha - k) q^k exp(r^2 (k^2 - k)/2) (log-sum-exp; r = 0 gives 0,
    q = 1 the Gaussian mechanism's steps alpha r^2/2)."""

    nargs = 4
    integer_args = (0, 1)  # alpha, steps

    @classmethod
    def compute(cls, N, alpha, steps, q, ratio):
        if q == 1:
            return steps * alpha * ratio**2 / 2
        log_p, log_q, half_r2 = N.log1p(-q), N.log(q), ratio**2 / 2
        terms, log_binomial = [alpha * log_p], N.mpf(0)
        for k in range(1, alpha + 1):  # log C(alpha, k) summed term by term (gamma products cost 10x at alpha 1000)
            log_binomial += N.log(N.mpf(alpha - k + 1) / k)
            terms.append(log_binomial + (alpha - k) * log_p + k * log_q + half_r2 * (k * k - k))
        top = N.maximum(*terms)
        return steps * (top + N.log(sum((N.exp(v - top) for v in terms), N.mpf(0)))) / (alpha - 1)
