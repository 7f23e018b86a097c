"""Monte-Carlo estimates of R_alpha(P||Q) = log(int P^a Q^(1-a)) / (a-1) from samples with known log-densities.

- Naive: x ~ Q, weights w = (P/Q)^a. Unbiased for the integral but, for large a, its mass sits in Q's far tail:
  typical samples never reach it, so the estimate is far too small with a deceptively tiny error bar.
- Importance sampling (tilted): x ~ r, w = P^a Q^(1-a) / r, computed in the log domain; r should resemble the
  normalised geometric tilt P^a Q^(1-a) (see `geometric_tilt`, with a defensive share of Q).
The interval is a normal (delta-method) confidence interval for log(mean w): log(mean) +- z * se(mean)/mean with
se(mean)/mean = sqrt((n/ESS - 1)/(n - 1)), divided by (a - 1). ESS = (sum w)^2 / sum w^2 (Kish). Heavy-tailed
weights make this interval optimistic; a healthy ESS is necessary, not sufficient (see `too_weak`).
A Rényi divergence is >= 0, but log(mean w) is not (a sample mean below 1 by chance): every estimate here, and a
mean of Rényi replicates (`combine_replicates(..., nonnegative=True)`), is clipped at 0 together with the lower end
of its interval (`_nonnegative`); the upper end stays as computed (raised to 0 only if the whole interval lay below
0: then the data contradict R >= 0 and the estimate is 0). The detail says what was clipped, with the raw numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from types import ModuleType
from typing import Any, Protocol

import numpy as np
from array_api_compat import array_namespace
from scipy.special import stdtrit

from verify.backend import ArrayRandom, get_namespace, log_sum_exp
from verify.errors import ParameterError, check_renyi_order
from verify.limits import require_memory
from verify.results import Method, Truth

LogDensity = Callable[[Any], Any]


class Distribution(Protocol):
    """A sampler with a known log-density over R^d (samples and arguments have shape (n, d))."""

    def log_pdf(self, x: Any) -> Any: ...

    def sample(self, rng: ArrayRandom, n: int) -> Any: ...


@dataclass(frozen=True)
class GaussianMixture:
    """sum_k w_k N(mean_k, sd_k^2 I_d); parameters stay on the host (float64 numpy) and move to x's namespace."""

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray

    def __post_init__(self) -> None:
        w = np.atleast_1d(np.asarray(self.weights, dtype=float))
        m = np.asarray(self.means, dtype=float)
        m = m[:, None] if m.ndim == 1 else m
        s = np.atleast_1d(np.asarray(self.sds, dtype=float))
        if not (w.ndim == s.ndim == 1 and m.ndim == 2 and w.size == s.size == m.shape[0] > 0):
            raise ParameterError("GaussianMixture: weights (k,), means (k, d) or (k,), sds (k,) must agree in k")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(m)) and np.all(np.isfinite(s))):
            raise ParameterError("GaussianMixture: weights, means and sds must be finite")
        if np.any(w < 0) or abs(w.sum() - 1) > 1e-9:
            raise ParameterError(f"GaussianMixture: weights must be >= 0 and sum to 1, got sum {w.sum()!r}")
        if np.any(s <= 0):
            raise ParameterError("GaussianMixture: sds must be > 0")
        keep = w > 0  # a zero-weight component contributes nothing (and log 0 would warn)
        object.__setattr__(self, "weights", w[keep] / w[keep].sum())
        object.__setattr__(self, "means", m[keep])
        object.__setattr__(self, "sds", s[keep])

    @property
    def dim(self) -> int:
        return self.means.shape[1]

    def log_pdf(self, x: Any) -> Any:
        """log density at the rows of x (n, d): shape (n,). Components are processed in chunks of rows."""
        xp = array_namespace(x)
        k, d = self.means.shape
        mu = xp.asarray(self.means, dtype=xp.float64)
        s2 = xp.asarray(self.sds**2, dtype=xp.float64)
        const = xp.asarray(np.log(self.weights) - d * np.log(self.sds) - 0.5 * d * math.log(2 * math.pi),
                           dtype=xp.float64)
        rows = max(1, 4_000_000 // (k * d))
        parts = []
        for start in range(0, x.shape[0], rows):
            diff = x[start:min(start + rows, x.shape[0]), None, :] - mu[None, :, :]
            comp = const[None, :] - xp.sum(diff * diff, axis=-1) / (2 * s2[None, :])
            parts.append(log_sum_exp(comp, axis=1, xp=xp))
        return xp.concat(parts) if len(parts) > 1 else parts[0]

    def sample(self, rng: ArrayRandom, n: int) -> Any:
        """n draws (n, d): component by inverse cdf of one uniform each, then one normal vector each."""
        xp = rng.xp
        cum = xp.asarray(np.cumsum(self.weights)[:-1], dtype=xp.float64)
        comp = xp.searchsorted(cum, rng.uniform((n,)), side="right")
        mu = xp.take(xp.asarray(self.means, dtype=xp.float64), comp, axis=0)
        sd = xp.take(xp.asarray(self.sds, dtype=xp.float64), comp, axis=0)
        return mu + sd[:, None] * rng.normal((n, self.dim))


def geometric_tilt(p: GaussianMixture, q: GaussianMixture, alpha: float, widen: float = 1.25,
                   defensive: float = 0.05) -> GaussianMixture:
    """Proposal resembling the normalised tilt P^a Q^(1-a): the mixture of pairwise tilts N_i^a N_j^(1-a)
    (Gaussian with precision a/s_i^2 + (1-a)/s_j^2 where positive), each weighted by w_i^a w_j^(1-a) times its
    integral, sds multiplied by `widen` (heavier tails than the target), plus a `defensive` share of Q.
    """
    check_renyi_order(alpha)
    if p.dim != q.dim:
        raise ParameterError(f"P and Q must have one dimension, got {p.dim} and {q.dim}")
    if not (math.isfinite(widen) and widen >= 1):
        raise ParameterError(f"widen must be a finite number >= 1, got {widen}")
    if not 0 <= defensive < 1:
        raise ParameterError(f"defensive share must lie in [0, 1), got {defensive}")
    d, a = p.dim, alpha
    pairs = p.weights.size * q.weights.size
    require_memory(8.0 * (d + 8) * pairs, "the geometric-tilt proposal (one component per pair)")
    logw, means, sds = [], [], []
    for wi, mi, si in zip(p.weights, p.means, p.sds, strict=True):
        for wj, mj, sj in zip(q.weights, q.means, q.sds, strict=True):
            prec = a / si**2 + (1 - a) / sj**2
            if prec <= 0 or wi == 0 or wj == 0:
                continue
            gap2 = float(np.sum((mi - mj) ** 2))
            log_z = (-0.5 * d * (math.log(prec) + a * math.log(si**2) + (1 - a) * math.log(sj**2))
                     - a * (1 - a) * gap2 / (2 * prec * si**2 * sj**2))
            logw.append(a * math.log(wi) + (1 - a) * math.log(wj) + log_z)
            means.append((a * mi / si**2 + (1 - a) * mj / sj**2) / prec)
            sds.append(widen / math.sqrt(prec))
    if not logw:
        raise ParameterError(f"no component pair has a proper geometric tilt at alpha={alpha:g} "
                             "(R_alpha is likely infinite)")
    w = np.exp(np.asarray(logw) - max(logw))
    w = (1 - defensive) * w / w.sum()
    return GaussianMixture(np.concatenate([w, defensive * q.weights]), np.vstack([np.asarray(means), q.means]),
                           np.concatenate([np.asarray(sds), q.sds]))


def _nonnegative(value: float, lower: float, upper: float) -> tuple[float, float, float, str]:
    """(value, lower, upper) clipped at 0 from below (R_alpha >= 0), and a note for the detail when anything was."""
    if value >= 0 and lower >= 0:
        return value, lower, upper, ""
    what = "estimate and lower end" if value < 0 else "lower end"
    note = f"; {what} clipped at 0 (R_alpha >= 0): raw estimate {value:.4g} in [{lower:.4g}, {upper:.4g}]"
    return max(value, 0.0), max(lower, 0.0), max(upper, 0.0), note


def combine_replicates(estimates: list[Truth], what: str, nonnegative: bool = False) -> Truth:
    """The mean of independent replicate estimates of one quantity (each from its own chains and samples). The
    interval is the wider of the pooled within-replicate interval and a Student-t interval on the replicates'
    spread, which also carries the error of whatever the replicates re-simulate (the chains behind a
    Rao-Blackwellised law). ESS: the replicates' total. `nonnegative` (a Rényi divergence): the mean and the lower
    end are clipped at 0, the upper end kept (`_nonnegative`)."""
    r = len(estimates)
    if r < 2 or any(e.method is not Method.MONTE_CARLO or e.confidence is None for e in estimates):
        raise ParameterError("combine_replicates needs >= 2 Monte-Carlo estimates with a confidence level")
    confidence = estimates[0].confidence
    values = np.array([e.value for e in estimates])
    if not np.all(np.isfinite(values)):  # e.g. alpha = 1e25: each replicate's float estimate overflowed
        raise ParameterError(f"{what}: the replicates' estimates are not finite ({', '.join(f'{v:g}' for v in values)})"
                             f": the Monte-Carlo estimator cannot resolve this point")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    within = z * math.sqrt(sum(((e.upper - e.lower) / (2 * z)) ** 2 for e in estimates)) / r
    between = float(stdtrit(r - 1, (1 + confidence) / 2) * values.std(ddof=1) / math.sqrt(r))  # Student t quantile
    value, half, ess = float(values.mean()), max(within, between), sum(e.ess or 0.0 for e in estimates)
    value, lower, upper, note = (_nonnegative(value, value - half, value + half) if nonnegative
                                 else (value, value - half, value + half, ""))
    return Truth(value, lower, upper, Method.MONTE_CARLO,
                 f"{what}; mean of {r} replicates (spread {values.std(ddof=1):.3g}), {confidence:.1%} interval: the "
                 f"wider of the pooled within-replicate CI and a t interval on the replicates; total ESS={ess:.4g}"
                 f"{note}", confidence=confidence, ess=ess)


def _summarise(lw: Any, alpha: float, confidence: float, detail: str) -> Truth:
    xp = array_namespace(lw)
    n = lw.shape[0]
    if bool(xp.any(xp.isnan(lw))) or bool(xp.any(lw == math.inf)):
        raise ParameterError("log-weights contain NaN or +inf: a log-density returned NaN/inf at a sample")
    top = float(xp.max(lw))
    if top == -math.inf:
        raise ParameterError("every importance weight is 0: the proposal misses the support of P")
    s1 = math.log(float(xp.sum(xp.exp(lw - top))))
    s2 = math.log(float(xp.sum(xp.exp(2 * (lw - top)))))
    ess = math.exp(2 * s1 - s2)
    rel_se = math.sqrt(max(n / ess - 1, 0.0) / (n - 1))
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    value = (top + s1 - math.log(n)) / (alpha - 1)
    half = z * rel_se / (alpha - 1)
    value, lower, upper, note = _nonnegative(value, value - half, value + half)
    return Truth(value, lower, upper, Method.MONTE_CARLO,
                 f"{detail}; n={n}, Kish ESS={ess:.4g}, {confidence:.0%} normal CI on log(mean weight){note}",
                 confidence=confidence, ess=ess)


def _check_run(alpha: float, n: int, confidence: float) -> None:
    check_renyi_order(alpha)
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ParameterError(f"sample count n must be an integer >= 2, got {n}")
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence}")


def renyi_naive(log_p: LogDensity, q: Distribution, alpha: float, *, n: int, seed: int,
                xp: ModuleType | None = None, confidence: float = 0.95) -> Truth:
    """Naive estimate of R_alpha(P||Q): x ~ Q, log-mean-exp of alpha*log(P/Q) (method MONTE_CARLO)."""
    _check_run(alpha, n, confidence)
    require_memory(8.0 * 8 * n * getattr(q, "dim", 1), "the Monte-Carlo estimate")
    rng = ArrayRandom(get_namespace() if xp is None else xp, seed)
    x = q.sample(rng, int(n))
    lw = alpha * (log_p(x) - q.log_pdf(x))
    return _summarise(lw, alpha, confidence, f"naive R_alpha (x ~ Q), alpha={alpha:g}, seed={seed}")


def renyi_importance(log_p: LogDensity, log_q: LogDensity, proposal: Distribution, alpha: float, *, n: int,
                     seed: int, xp: ModuleType | None = None, confidence: float = 0.95) -> Truth:
    """Importance-sampled estimate of R_alpha(P||Q): x ~ proposal r, weights P^a Q^(1-a)/r in log domain."""
    _check_run(alpha, n, confidence)
    require_memory(8.0 * 8 * n * proposal.dim, "the importance-sampling estimate")
    rng = ArrayRandom(get_namespace() if xp is None else xp, seed)
    x = proposal.sample(rng, int(n))
    lw = alpha * log_p(x) + (1 - alpha) * log_q(x) - proposal.log_pdf(x)
    return _summarise(lw, alpha, confidence, f"importance-sampled R_alpha, alpha={alpha:g}, seed={seed}")


def too_weak(estimate: Truth, min_ess: float = 1000.0, max_rel_halfwidth: float = 0.25) -> bool:
    """True if a Monte-Carlo truth cannot support a verdict: ESS < min_ess, or CI half-width > max_rel_halfwidth
    times |value|. Passing is necessary, not sufficient: weights that never reach the tilt's region (the naive
    estimator at large alpha) give a high ESS and a narrow, wrong interval.
    """
    if estimate.method is not Method.MONTE_CARLO or estimate.ess is None:
        raise ParameterError(f"too_weak needs a Monte-Carlo truth with an ESS, got method {estimate.method.value}")
    half = (estimate.upper - estimate.lower) / 2
    return estimate.ess < min_ess or not half <= max_rel_halfwidth * abs(estimate.value)
