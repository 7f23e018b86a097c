"""Many-chain simulation kernels (array API: numpy, cupy, array_api_strict) for noisy training algorithms.

- Noisy GD (Chourasia et al. 2021, Alg. 1): theta <- Proj(theta - eta grad L_D(theta) + sqrt(2 eta) N(0, sigma^2 I)).
- One-pass projected noisy SGD (Feldman et al. 2018, PNSGD): theta <- Proj(theta - eta (grad l(theta; x_t) +
  N(0, sigma^2 I))), record t used at step t.
- DP-SGD with Poisson subsampling (sum rule, Abadi et al. 2016 / seed-004 Sec. 1.1): each record joins the batch
  with probability q; theta <- Proj(theta - eta/(q n) (sum_B clip_C(grad l) + N(0, sigma^2 C^2 I))).
- DP-MBCD for rank-one NMF (Chen & Liu 2024, Algorithm 3): noisy clipped block steps on the rows of X batch by
  batch, then one on Y per epoch (`nmf_hfl_last_step_mixture`).
`renyi_coupled_chains` turns Rao-Blackwellised last-step laws of the two datasets into an estimate of R_alpha.
Every chain starts at Proj(N(start_mean, start_sd^2 I)). Arrays have shape (chains, d). Draw order (fixed, so
runs are reproducible): start normals, then per step the batch uniforms (DP-SGD) and the noise normals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from array_api_compat import array_namespace
from numpy.typing import ArrayLike

from verify.backend import ArrayRandom, get_namespace, to_host
from verify.errors import ParameterError
from verify.limits import require_memory
from verify.results import Method, Truth
from verify.truth.losses import Loss
from verify.truth.mixture_quad import renyi_mixture_quad_both
from verify.truth.renyi_estimator import GaussianMixture, combine_replicates


@dataclass(frozen=True)
class Ball:
    """Euclidean ball of radius R about 0 (the interval [-R, R] when d = 1)."""

    R: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.R) and self.R > 0):
            raise ParameterError(f"ball radius R must be a finite number > 0, got {self.R}")

    def project(self, theta: Any, xp: ModuleType) -> Any:
        norm = xp.sqrt(xp.sum(theta * theta, axis=-1, keepdims=True))
        return theta * (self.R / xp.maximum(norm, self.R))


@dataclass(frozen=True)
class Box:
    """Coordinate box [lo, hi]^d (an interval when d = 1)."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ParameterError(f"box needs finite lo < hi, got lo={self.lo}, hi={self.hi}")

    def project(self, theta: Any, xp: ModuleType) -> Any:
        return xp.clip(theta, self.lo, self.hi)


Constraint = Ball | Box | None


@dataclass(frozen=True)
class _Setup:
    xp: ModuleType
    data: Any
    rng: ArrayRandom
    constraint: Constraint

    def project(self, theta: Any) -> Any:
        return theta if self.constraint is None else self.constraint.project(theta, self.xp)


def _setup(data: ArrayLike, chains: int, seed: int, constraint: Constraint, xp: ModuleType | None,
           **positive: float) -> _Setup:
    for name, v in positive.items():
        if not (math.isfinite(v) and v > 0):
            raise ParameterError(f"{name} must be a finite number > 0, got {v}")
    if isinstance(chains, bool) or int(chains) != chains or chains < 1:
        raise ParameterError(f"chains must be an integer >= 1, got {chains}")
    host = np.asarray(data, dtype=float)
    if host.ndim != 2 or host.shape[0] < 1 or not np.all(np.isfinite(host)):
        raise ParameterError(f"data must be a finite (n, d) array with n >= 1, got shape {host.shape}")
    if constraint is not None and not isinstance(constraint, Ball | Box):
        raise ParameterError(f"constraint must be Ball, Box or None, got {constraint!r}")
    # per step: the (chains, n, d) per-record gradients and a few temporaries of that shape
    require_memory(8.0 * 6 * chains * host.shape[0] * host.shape[1], "the Monte-Carlo simulation")
    xp = get_namespace() if xp is None else xp
    return _Setup(xp, xp.asarray(host, dtype=xp.float64), ArrayRandom(xp, seed), constraint)


def _start(s: _Setup, chains: int, start_mean: ArrayLike, start_sd: float) -> Any:
    d = s.data.shape[1]
    mean = np.broadcast_to(np.asarray(start_mean, dtype=float), (d,))
    if not (np.all(np.isfinite(mean)) and math.isfinite(start_sd) and start_sd >= 0):
        raise ParameterError(f"start_mean must be finite and start_sd >= 0, got {start_mean}, {start_sd}")
    theta = s.xp.zeros((chains, d), dtype=s.xp.float64) + s.xp.asarray(mean, dtype=s.xp.float64)
    if start_sd > 0:
        theta = theta + start_sd * s.rng.normal((chains, d))
    return s.project(theta)


def _full_gradient(loss: Loss, data: Any, theta: Any, xp: ModuleType) -> Any:
    """grad L_D(theta) = mean over records, for every chain: (chains, d)."""
    return xp.mean(loss.grad(theta[:, None, :], data[None, :, :]), axis=1)


def simulate_noisy_gd(loss: Loss, data: ArrayLike, *, eta: float, sigma: float, K: int, chains: int, seed: int,
                      start_mean: ArrayLike = 0.0, start_sd: float = 0.0, constraint: Constraint = None,
                      xp: ModuleType | None = None) -> Any:
    """Last iterates theta_K of `chains` independent noisy-GD runs (Chourasia et al. 2021, Alg. 1): (chains, d)."""
    s = _setup(data, chains, seed, constraint, xp, eta=eta, sigma=sigma)
    if int(K) != K or K < 0:
        raise ParameterError(f"number of iterations K must be an integer >= 0, got {K}")
    theta = _start(s, chains, start_mean, start_sd)
    scale = math.sqrt(2 * eta) * sigma
    for _ in range(int(K)):
        step = theta - eta * _full_gradient(loss, s.data, theta, s.xp)
        theta = s.project(step + scale * s.rng.normal(tuple(theta.shape)))
    return theta


def noisy_gd_last_step_mixture(loss: Loss, data: ArrayLike, *, eta: float, sigma: float, K: int, chains: int,
                               seed: int, start_mean: ArrayLike = 0.0, start_sd: float = 0.0,
                               xp: ModuleType | None = None) -> GaussianMixture:
    """Rao-Blackwellised law of unconstrained noisy GD's theta_K (seed-000 Sec. 3.3): the equal-weight mixture of
    N(theta - eta grad L_D(theta), 2 eta sigma^2 I) over `chains` simulated theta_{K-1}. Its log_pdf is an
    unbiased-in-density (not in log) estimate of the true law, usable as a known log-density by the estimators.
    """
    if int(K) != K or K < 1:
        raise ParameterError(f"number of iterations K must be an integer >= 1, got {K}")
    prev = simulate_noisy_gd(loss, data, eta=eta, sigma=sigma, K=int(K) - 1, chains=chains, seed=seed,
                             start_mean=start_mean, start_sd=start_sd, xp=xp)
    xp = array_namespace(prev)
    records = xp.asarray(np.asarray(data, dtype=float), dtype=xp.float64)
    centres = to_host(prev - eta * _full_gradient(loss, records, prev, xp))
    sd = math.sqrt(2 * eta) * sigma
    return GaussianMixture(np.full(chains, 1 / chains), centres, np.full(chains, sd))


def simulate_pnsgd(loss: Loss, data: ArrayLike, *, eta: float, sigma: float, chains: int, seed: int,
                   start_mean: ArrayLike = 0.0, start_sd: float = 0.0, constraint: Constraint = None,
                   xp: ModuleType | None = None) -> Any:
    """Final iterates of one-pass projected noisy SGD (Feldman et al. 2018, PNSGD), one record per step, in order."""
    s = _setup(data, chains, seed, constraint, xp, eta=eta, sigma=sigma)
    theta = _start(s, chains, start_mean, start_sd)
    for t in range(s.data.shape[0]):
        g = loss.grad(theta, s.data[t:t + 1, :])
        theta = s.project(theta - eta * (g + sigma * s.rng.normal(tuple(theta.shape))))
    return theta


def simulate_dpsgd(loss: Loss, data: ArrayLike, *, eta: float, sigma: float, clip: float, q: float, steps: int,
                   chains: int, seed: int, start_mean: ArrayLike = 0.0, start_sd: float = 0.0,
                   constraint: Constraint = None, xp: ModuleType | None = None) -> Any:
    """Final iterates of Poisson-subsampled DP-SGD (sum rule): per step, batch B ~ Poisson(q) per chain,
    theta <- Proj(theta - eta/(q n) (sum_{i in B} clip_C(grad l(theta; x_i)) + N(0, sigma^2 C^2 I)))."""
    s = _setup(data, chains, seed, constraint, xp, eta=eta, sigma=sigma, clip=clip)
    if math.isnan(q) or not 0 < q <= 1:
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    if int(steps) != steps or steps < 0:
        raise ParameterError(f"steps must be an integer >= 0, got {steps}")
    xp, n = s.xp, s.data.shape[0]
    theta = _start(s, chains, start_mean, start_sd)
    for _ in range(int(steps)):
        mask = xp.astype(s.rng.uniform((chains, n)) < q, xp.float64)[:, :, None]
        g = loss.grad(theta[:, None, :], s.data[None, :, :])
        norm = xp.sqrt(xp.sum(g * g, axis=-1, keepdims=True))
        clipped = g * (clip / xp.maximum(norm, clip))
        total = xp.sum(mask * clipped, axis=1) + (sigma * clip) * s.rng.normal(tuple(theta.shape))
        theta = s.project(theta - (eta / (q * n)) * total)
    return theta


def empirical_risk(loss: Loss, data: ArrayLike, theta: Any) -> Any:
    """L_D(theta) = mean over records of l(theta; x_i), per chain: shape (chains,)."""
    xp = array_namespace(theta)
    records = xp.asarray(np.asarray(data, dtype=float), dtype=xp.float64)
    return xp.mean(loss.value(theta[:, None, :], records[None, :, :]), axis=1)


def _clip_factors(g: Any, hessian_norm: Any, clip: float, kappa: float, xp: ModuleType) -> Any:
    """Algorithm 3's factor on a block gradient g (chains, k): min(1, S_g/||g||) (the whole block's gradient is
    clipped), times min(1, kappa/||h||) with h the block Hessian scaled by the same gradient factor."""
    f = clip / xp.maximum(xp.sqrt(xp.sum(g * g, axis=-1)), clip)
    h = hessian_norm * f
    return f * (kappa / xp.maximum(h, kappa))


def nmf_hfl_last_step_mixture(ratings: ArrayLike, *, m: int, eta: float, o: float, clip: float, kappa: float,
                              K: int, chains: int, seed: int, xp: ModuleType | None = None) -> GaussianMixture:
    """Rao-Blackwellised law of Y after K epochs of DP-MBCD on rank-one NMF, min (1/2)||x y^T - M||_F^2 (Chen & Liu
    2024, Algorithm 3, HFL): the rows of M (records) are cut into m fixed batches of b = n/m rows; per batch the
    batch's entries of x get x_B <- x_B - eta s g_B + sqrt(2 eta) N(0, o I) with g_B = (x_B y^T - M_B) y clipped to
    norm S_g as a whole and s = min(1, kappa/(||y||^2 min(1, S_g/||g_B||))); per epoch then y <- y - eta s g_Y +
    sqrt(2 eta) N(0, o I), g_Y = (x y^T - M)^T x, Hessian norm ||x||^2 (the paper's X X^T and X^T X share it).
    Start x = 1, y = 1. Returns the equal-weight mixture of N(y - eta s g_Y, 2 eta o I) over `chains` simulated
    states before the last y-step: the law of the released Y, up to the chains' sampling error."""
    host = np.asarray(ratings, dtype=float)
    if host.ndim != 2 or host.shape[0] < 1 or not np.all(np.isfinite(host)):
        raise ParameterError(f"ratings must be a finite (n, d_c) array, got shape {host.shape}")
    n, d_c = host.shape
    if isinstance(m, bool) or int(m) != m or m < 1 or n % int(m):
        raise ParameterError(f"batches m must be an integer >= 1 dividing the {n} rows, got {m}")
    if isinstance(K, bool) or int(K) != K or K < 1:
        raise ParameterError(f"epochs K must be an integer >= 1, got {K}")
    s = _setup(host, chains, seed, None, xp, eta=eta, o=o, clip=clip, kappa=kappa)
    xp, b, m = s.xp, n // int(m), int(m)
    rows = [s.data[j * b:(j + 1) * b, :] for j in range(m)]
    x = [xp.ones((chains, b), dtype=xp.float64) for _ in range(m)]
    y = xp.ones((chains, d_c), dtype=xp.float64)
    scale = math.sqrt(2 * eta * o)
    for k in range(int(K)):
        for j in range(m):
            g = xp.sum((x[j][:, :, None] * y[:, None, :] - rows[j][None, :, :]) * y[:, None, :], axis=-1)
            factor = _clip_factors(g, xp.sum(y * y, axis=-1), clip, kappa, xp)
            x[j] = x[j] - eta * factor[:, None] * g + scale * s.rng.normal((chains, b))
        xs = xp.concat(x, axis=1)
        g = xp.sum((xs[:, :, None] * y[:, None, :] - s.data[None, :, :]) * xs[:, :, None], axis=1)
        centre = y - eta * _clip_factors(g, xp.sum(xs * xs, axis=-1), clip, kappa, xp)[:, None] * g
        if k < int(K) - 1:
            y = centre + scale * s.rng.normal((chains, d_c))
    return GaussianMixture(np.full(chains, 1 / chains), to_host(centre), np.full(chains, scale))


LawPair = tuple[GaussianMixture, GaussianMixture]


def renyi_coupled_chains(replicates: list[LawPair], alpha: float, what: str, confidence: float = 0.95) -> Truth:
    """max(R_alpha(P||Q), R_alpha(Q||P)) for two released 1-D laws given as Rao-Blackwellised chain mixtures (the
    last Gaussian step's law averaged over simulated states), one (P, Q) pair per replicate. The chains of P and Q in
    a replicate share their noise (coupled: identical datasets give exactly 0, and the mixtures' sampling errors
    largely cancel); each pair is integrated by Gauss-Legendre quadrature (verify.truth.mixture_quad), so the error
    left is the chains' sampling error, measured by the replicates' spread (`combine_replicates`). The estimate is
    consistent as the chains grow, not unbiased: the interval is a Monte-Carlo interval, never a proof."""
    estimates = []
    for p, q in replicates:
        if p.dim != 1 or q.dim != 1:
            raise ParameterError(f"renyi_coupled_chains integrates 1-D laws, got dimensions {p.dim} and {q.dim}")
        pq, qp = renyi_mixture_quad_both(p.weights, p.means[:, 0], p.sds, q.weights, q.means[:, 0], q.sds, alpha)
        best = pq if pq.value >= qp.value else qp
        estimates.append(Truth(best.value, max(pq.lower, qp.lower), max(pq.upper, qp.upper), Method.MONTE_CARLO,
                               what, confidence=confidence, ess=float(p.weights.size)))
    return combine_replicates(estimates, f"{what}; R_alpha of the larger order, chains coupled across the datasets, "
                                         "quadrature per replicate (ESS: chains in all)", nonnegative=True)


Simulation = Callable[..., tuple[ArrayLike, ArrayLike, float]]


def monte_carlo_renyi(simulate: Simulation, *, replicates: int = 8, chains: int = 2000,
                      what: str = "user simulation") -> Callable[..., Truth]:
    """A Monte-Carlo Rényi truth from a user's simulation of an algorithm whose last step adds Gaussian noise: the
    returned truth(alpha, seed, **params) calls simulate(rng, chains, **params) -> (centres on D, centres on D', sd):
    the 1-D pre-noise outputs of `chains` runs on each dataset, coupled (the same rng draws on both), and the last
    step's noise sd; the released laws are their Rao-Blackwellised mixtures, compared by `renyi_coupled_chains` over
    `replicates` replicates seeded by (seed, replicate). The result is an estimate: a family using it must set
    estimated=True, and it never certifies a violation."""
    if int(replicates) != replicates or replicates < 2:
        raise ParameterError(f"replicates must be an integer >= 2 (their spread is the error), got {replicates}")
    if int(chains) != chains or chains < 1:
        raise ParameterError(f"chains must be an integer >= 1, got {chains}")

    def truth(alpha: float, seed: float, **params: float) -> Truth:
        pairs = []
        weights = np.full(int(chains), 1 / int(chains))
        for r in range(int(replicates)):
            rng = np.random.default_rng([int(seed), r])
            on_d, on_dp, sd = simulate(rng, int(chains), **params)
            on_d, on_dp = np.asarray(on_d, dtype=float).reshape(-1), np.asarray(on_dp, dtype=float).reshape(-1)
            if on_d.size != chains or on_dp.size != chains or not (math.isfinite(sd) and sd > 0):
                raise ParameterError(f"{what}: simulate must return {chains} centres per dataset and a noise sd > 0")
            sds = np.full(int(chains), float(sd))
            pairs.append((GaussianMixture(weights, on_dp, sds), GaussianMixture(weights, on_d, sds)))
        return renyi_coupled_chains(pairs, alpha, what)

    return truth
