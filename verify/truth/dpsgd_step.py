"""One step of DP-SGD on a 1-D model, exactly (Thudi et al. 2024, seed 004, Sec. 2.1 and 3; add/remove neighbours).

The dataset D holds n_a points whose clipped gradient is g_a and n_b points with g_b (|g| <= C = 1: two clusters;
inliers, outliers and duplicates of x* are choices of these numbers); D' = D u {x*}, x* with clipped gradient g_star.
Each point joins the batch independently with probability q (Poisson sampling). The released update is U(B) + N(0, s^2)
with U the sum rule (sum of the batch's gradients) or the mean rule (their mean, U(empty) = 0). Under D the law is
the mixture over the batch counts (k_a, k_b) ~ Bin(n_a, q) x Bin(n_b, q) of N(U, s^2); under D' each component splits
into (1 - q) N(U(B), s^2) + q N(U(B u x*), s^2). The weights are exact binomial probabilities (Arb for the enclosure);
the Rényi divergence of both orders comes from the mixture quadrature (verify.truth.mixture_quad)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from flint import arb, ctx

from verify.errors import ParameterError, check_renyi_order
from verify.results import Method, Truth
from verify.truth.mixture_quad import PositiveExactWeights, renyi_mixture_quad_both, renyi_mixture_to_gaussians
from verify.truth.numbers import Enclosure, NotEnclosable

Rule = Literal["sum", "mean"]
MAX_COMPONENTS = 20_000  # (n_a + 1)(n_b + 1) batch-count pairs one truth may mix


@dataclass(frozen=True)
class TwoClusterStep:
    """One DP-SGD step on the two-cluster dataset (see the module docstring)."""

    q: float
    s: float
    g_star: float
    n_a: int
    g_a: float
    n_b: int
    g_b: float
    rule: Rule

    def __post_init__(self) -> None:
        if not (math.isfinite(self.q) and 0 < self.q <= 1):
            raise ParameterError(f"sampling rate q must lie in (0, 1], got {self.q}")
        if not (math.isfinite(self.s) and self.s > 0):
            raise ParameterError(f"noise std s must be a finite number > 0, got {self.s}")
        for name in ("g_star", "g_a", "g_b"):
            v = getattr(self, name)
            if not (math.isfinite(v) and abs(v) <= 1):
                raise ParameterError(f"{name} is a clipped gradient (clip C = 1): |{name}| <= 1, got {v}")
        for name in ("n_a", "n_b"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 0:
                raise ParameterError(f"{name} must be an integer >= 0, got {v}")
        if self.rule not in ("sum", "mean"):
            raise ParameterError(f"rule must be 'sum' or 'mean', got {self.rule!r}")
        if (int(self.n_a) + 1) * (int(self.n_b) + 1) > MAX_COMPONENTS:
            raise ParameterError(f"(n_a + 1)(n_b + 1) must be at most {MAX_COMPONENTS} batch-count pairs")

    def components(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(weights of D's components, their means, weights of D''s components, their means); s is common."""
        from scipy.stats import binom  # scipy.stats costs ~0.5 s at import: only when a truth needs it

        k_a, k_b = (a.ravel() for a in np.meshgrid(np.arange(int(self.n_a) + 1), np.arange(int(self.n_b) + 1),
                                                   indexing="ij"))
        w = binom.pmf(k_a, int(self.n_a), self.q) * binom.pmf(k_b, int(self.n_b), self.q)
        without = self._means(k_a, k_b, star=False)
        with_star = self._means(k_a, k_b, star=True)
        return w, without, np.concatenate([(1 - self.q) * w, self.q * w]), np.concatenate([without, with_star])

    def _means(self, k_a: np.ndarray, k_b: np.ndarray, star: bool) -> np.ndarray:
        total = k_a * self.g_a + k_b * self.g_b + (self.g_star if star else 0.0)
        if self.rule == "sum":
            return total
        count = k_a + k_b + int(star)
        return np.where(count > 0, total / np.maximum(count, 1), 0.0)

    def identical_laws(self) -> bool:
        """Whether M(D') and M(D) are the same law (exact rational arithmetic on the float inputs). Sum rule: D'
        shifts a q-share of the mixture by g_star, so iff g_star = 0. Mean rule: at q = 1 iff g_star is the mean of D
        (0 for an empty D); at q < 1 iff g_star and every non-empty cluster's gradient are 0 (otherwise the mixing
        measures differ at the extreme atom: the empty batch's weight (1 - q)^n moves in D')."""
        if self.rule == "sum" or self.q == 1:
            return self.full_batch_gap() == 0
        return self.g_star == 0 and (self.n_a == 0 or self.g_a == 0) and (self.n_b == 0 or self.g_b == 0)

    def full_batch_gap(self) -> Fraction:
        """U(D') - U(D) with every point in the batch (q = 1), exactly in rationals of the float inputs: g_star under
        the sum rule; (total + g_star)/(n + 1) - total/n under the mean rule (U of an empty batch is 0)."""
        g_star = Fraction(self.g_star)
        if self.rule == "sum":
            return g_star
        n = int(self.n_a) + int(self.n_b)
        total = int(self.n_a) * Fraction(self.g_a) + int(self.n_b) * Fraction(self.g_b)
        return (total + g_star) / (n + 1) - (total / n if n else 0)

    def exact_weights(self) -> tuple[list, list]:
        """The same weights as Arb balls (at the caller's precision)."""
        q = arb(self.q)

        def pmf(k: int, n: int):
            return arb(math.comb(n, k)) * q**k * (1 - q) ** (n - k)

        w = [pmf(int(a), int(self.n_a)) * pmf(int(b), int(self.n_b)) for a in range(int(self.n_a) + 1)
             for b in range(int(self.n_b) + 1)]
        return w, [(1 - q) * v for v in w] + [q * v for v in w]


def dpsgd_step_renyi(step: TwoClusterStep, alpha: float) -> Truth:
    """Per-instance RDP of the step (Def. 2.2): max(R_alpha(M(D') || M(D)), R_alpha(M(D) || M(D'))), both orders from
    one quadrature, rigorously enclosable."""
    check_renyi_order(alpha)
    if step.identical_laws():  # the quadrature of two equal mixtures leaves rounding noise (~1e-31), not 0
        return Truth.exact(0.0, f"one DP-SGD step ({step.rule} rule): M(D') = M(D) (x* does not move the released "
                           "law), so R_alpha = 0 exactly", enclose=lambda prec: Enclosure(arb(0), arb(0),
                                                                                           "identical laws", prec))
    if step.q == 1:  # every point in the batch: M(D) = N(U(D), s^2), M(D') = N(U(D'), s^2), one Gaussian each
        return _full_batch_renyi(step, alpha)
    w_d, m_d, w_dp, m_dp = step.components()
    s = np.full(m_d.size, step.s)
    forward, reverse = renyi_mixture_quad_both(w_dp, m_dp, np.full(m_dp.size, step.s), w_d, m_d, s, alpha,
                                               exact_weights=PositiveExactWeights(lambda: step.exact_weights()[::-1]))
    return Truth.larger(forward, reverse, f"one DP-SGD step ({step.rule} rule), both orders")


def _full_batch_renyi(step: TwoClusterStep, alpha: float) -> Truth:
    """q = 1: R_alpha(N(U(D'), s^2) || N(U(D), s^2)) = alpha (U(D') - U(D))^2 / (2 s^2) in both orders, from the exact
    rational gap of the float inputs (no quadrature over the (n_a + 1)(n_b + 1) components, all but one weightless)."""
    gap = step.full_batch_gap()
    value = Fraction(alpha) * gap**2 / (2 * Fraction(step.s) ** 2)

    def enclose(prec: int) -> Enclosure:
        with ctx.workprec(prec):
            d = arb(gap.numerator) / arb(gap.denominator)
            return Enclosure.of(arb(alpha) * d * d / (2 * arb(step.s) ** 2), "Gaussian pair, exact rational gap", prec)

    return Truth.exact(float(value), f"one DP-SGD step ({step.rule} rule) at q = 1: two Gaussians, R_alpha = alpha "
                       f"(U(D') - U(D))^2 / (2 s^2) with U(D') - U(D) = {float(gap):.6g}", enclose=enclose)


NEGLIGIBLE_SHARE = 1e-17  # batch atoms whose summed divergence bound is below this share of the sum are bounded


def _negligible_atoms(p_weights: np.ndarray, p_means: np.ndarray, w: np.ndarray, t: np.ndarray, s: float,
                      alpha: float) -> tuple[np.ndarray, float]:
    """The batch atoms (weights w, centres t) whose terms w_B R_alpha(P || N(t_B, s^2)) are negligible, and a bound on
    their sum. Convexity of int P^a Q^(1-a) in P gives R_alpha(P || N(t, s^2)) <= alpha max_i (mu_i - t)^2/(2 s^2)
    over P's components; the atoms with the smallest such bounds are left out while their summed bound stays below
    NEGLIGIBLE_SHARE of sum_B w_B (m_P - t_B)^2/(2 s^2) <= sum_B w_B KL(P || N(t_B, s^2)) <= the sum (m_P: P's mean).
    Mostly the far tails of the batch counts at a small q, whose quadrature cost as much as the likely atoms'."""
    with np.errstate(all="ignore"):  # an overflow or a zero scale only turns the leaving-out off (below)
        spread = np.maximum(np.abs(t - p_means.max()), np.abs(t - p_means.min()))
        bound = w * (alpha * spread**2 / (2 * s * s)) * (1 + 1e-12)
        m_p = float(np.dot(p_weights, p_means) / p_weights.sum())
        share = NEGLIGIBLE_SHARE * float(np.dot(w, (t - m_p) ** 2)) / (2 * s * s)
    mask = np.zeros(t.size, dtype=bool)
    if not (math.isfinite(share) and share > 0 and np.all(np.isfinite(bound))):  # no scale to compare with
        return mask, 0.0
    order = np.argsort(bound, kind="stable")
    left_out = order[np.cumsum(bound[order]) <= share][:t.size - 1]  # one atom at least is integrated
    mask[left_out] = True
    return mask, float(bound[left_out].sum()) * (1 + 1e-12)


def _expected_divergence(p_weights: np.ndarray, p_means: np.ndarray, exact_p, batch_weights: np.ndarray,
                         batch_means: np.ndarray, exact_batch, s: float, alpha: float) -> Truth:
    """sum_B w_B R_alpha(P || N(U(B), s^2)) over the batch atoms B: one quadrature node set for all of them, the
    intervals summed with the weights (the enclosure: Arb weights times each atom's Arb enclosure). Atoms whose terms
    are provably negligible (`_negligible_atoms`) are bounded instead: [0, their bound] joins the interval, and in
    the enclosure the same bound in Arb."""
    keep = np.flatnonzero(batch_weights > 0)
    small, small_bound = _negligible_atoms(p_weights, p_means, batch_weights[keep], batch_means[keep], s, alpha)
    bounded, keep = keep[small], keep[~small]
    parts = renyi_mixture_to_gaussians(p_weights, p_means, s, batch_means[keep], alpha, exact_p)
    w = batch_weights[keep]
    value = float(np.dot(w, [t.value for t in parts]))
    lower = float(np.dot(w, [t.lower for t in parts])) * (1 - 1e-15)
    upper = float(np.dot(w, [t.upper for t in parts])) * (1 + 1e-15) + small_bound

    def enclose(prec: int) -> Enclosure:
        with ctx.workprec(prec):
            exact = exact_batch()
            inner = [t.enclose(prec) for t in parts]
            if any(e.infinite for e in inner):
                raise NotEnclosable("a batch's divergence is infinite")
            lo = sum((exact[i] * arb(e.lower) for i, e in zip(keep, inner, strict=True)), arb(0))
            hi = sum((exact[i] * arb(e.upper) for i, e in zip(keep, inner, strict=True)), arb(0))
            lo_mean, hi_mean, two_s2 = arb(float(p_means.min())), arb(float(p_means.max())), 2 * arb(s) ** 2
            for i in bounded:  # 0 <= R_alpha(P || N(t, s^2)) <= alpha max_i (mu_i - t)^2 / (2 s^2), as in floats
                t_b = arb(float(batch_means[i]))
                near, far = abs(t_b - lo_mean), abs(t_b - hi_mean)
                spread = (near + far + abs(near - far)) / 2  # max(near, far)
                hi += exact[i] * arb(alpha) * spread * spread / two_s2
            how = "; ".join(sorted({e.method.split(":")[0] for e in inner}))
            return Enclosure(lo.lower(), hi.upper(), f"sum over batches of Arb enclosures ({how})", prec)

    detail = f"sum over {len(parts)} batch atoms of R_alpha(mixture || N(U(B), s^2)), one quadrature node set"
    if bounded.size:
        detail += f"; {bounded.size} atoms of negligible weight bounded (<= {small_bound:.1e} in all)"
    return Truth(value, min(lower, value), max(upper, value), Method.SERIES, detail, enclose=enclose)


def theorem36_rhs(step: TwoClusterStep, alpha: float) -> Truth:
    """Theorem 3.6's right-hand side for both directions, the larger: E_{B ~ D}[R_alpha(M(D') || N(U(B), s^2))] and
    E_{B' ~ D'}[R_alpha(M(D) || N(U(B'), s^2))] (Thudi et al. 2024; the exact form of the alpha-tuple expectation:
    convexity of R_alpha in its second argument, research 2)."""
    check_renyi_order(alpha)
    w_d, m_d, w_dp, m_dp = step.components()

    def exact_d() -> list:
        return step.exact_weights()[0]

    def exact_dp() -> list:
        return step.exact_weights()[1]

    if step.q < 1:  # binomial weights at 0 < q < 1 are all positive
        exact_d, exact_dp = PositiveExactWeights(exact_d), PositiveExactWeights(exact_dp)
    forward = _expected_divergence(w_dp, m_dp, exact_dp, w_d, m_d, exact_d, step.s, alpha)
    reverse = _expected_divergence(w_d, m_d, exact_d, w_dp, m_dp, exact_dp, step.s, alpha)
    return Truth.larger(forward, reverse, "Theorem 3.6's expected divergence to the batch-conditional Gaussian")
