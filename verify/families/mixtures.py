"""Families whose released law is a Gaussian mixture: the Poisson-subsampled Gaussian mechanism, Stop- and
Skip-PNSGD on linear losses (Feldman et al. 2018, Section 4), and a two-component mixture against a Gaussian
(Lemma 25). Truths by the binomial series (integer alpha), mpmath quadrature (sampled Gaussian at fractional alpha),
or double-precision Gauss-Legendre with an error bound (verify.truth.mixture_quad)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp
from flint import arb
from sympy import Abs

from verify.errors import ParameterError
from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Method, Truth
from verify.symbols import L, alpha, delta, eps, gap1, gap2, n, q, s, samples, seed, sigma, steps, t, type1, w, xo
from verify.truth.gaussian import renyi_gaussian_1d
from verify.truth.mixture_quad import renyi_mixture_quad, renyi_mixture_quad_both
from verify.truth.numbers import Enclosure
from verify.truth.pld import PLDBracket, sgm_composed_delta, sgm_composed_epsilon
from verify.truth.renyi_estimator import GaussianMixture, geometric_tilt, renyi_importance, renyi_naive
from verify.truth.sgm_rdp import sgm_renyi_truth
from verify.truth.subsampled_dp import sgm_delta, sgm_dp_epsilon, sgm_tradeoff

_R, _DP, _DP_ADD, _DP_SIGNED = Quantity.RENYI, Quantity.DP_EPSILON, Quantity.DP_EPSILON_ADD, Quantity.DP_EPSILON_SIGNED
_DELTA, _GDP, _TRADEOFF = Quantity.DP_DELTA, Quantity.GDP_MU, Quantity.TRADEOFF
_EPS = Parameter(eps, eps > 0, "eps of delta(eps)", quantities=(_DELTA,))
_TYPE1 = Parameter(type1, type1 < 1, "type-I error x of the trade-off function, 0 < x < 1", quantities=(_TRADEOFF,))


def _gaussian_mechanism_mu(q, sigma):
    """mu = 1/sigma at q = 1; a subsampled Gaussian's trade-off is not G_mu for any mu, so no exact value there."""
    if q != 1:
        raise ParameterError("an exact Gaussian-DP mu is known here only for q = 1 (the Gaussian mechanism); a "
                             "subsampled Gaussian's trade-off function is not of the form G_mu")
    return 1 / sigma
_ALPHA = Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,))


def _both_orders(weights, means_p, sds_p, means_q, sds_q, alpha, what) -> Truth:
    if len(weights) == 1:  # a single Gaussian pair: exact closed form
        return exact(lambda a, m1, s1, m2, s2: renyi_gaussian_1d(m1, s1 * s1, m2, s2 * s2, a),  # squared in the
                     f"{what}: one component, Gaussian closed form")(  # balls: a float square rounds (subnormal at
            a=alpha, m1=means_p[0], s1=sds_p[0], m2=means_q[0], s2=sds_q[0])  # sigma = 3.3e-160, 1.8e-5 relative)
    pq, qp = renyi_mixture_quad_both(weights, means_p, sds_p, weights, means_q, sds_q, alpha)
    return Truth.larger(pq, qp, what)


def _sgm_renyi(alpha, q, sigma) -> Truth:
    """Both orders (verify.truth.sgm_rdp); q = 1 is the Gaussian mechanism in closed form."""
    if q == 1:
        return _both_orders([1.0], [1.0], [sigma], [0.0], [sigma], alpha, "Gaussian mechanism")
    return sgm_renyi_truth(q, sigma, alpha)


SAMPLED_GAUSSIAN = Family(
    name="sampled_gaussian",
    description="Poisson-subsampled Gaussian mechanism, sensitivity 1, add/remove neighbours: "
                "(1-q) N(0, sigma^2) + q N(1, sigma^2) vs N(0, sigma^2), both orders (one step of DP-SGD).",
    parameters=(_ALPHA, Parameter(q, q <= 1, "sampling rate, 0 < q <= 1"),
                Parameter(sigma, sigma > 0, "noise multiplier (noise std / sensitivity)"),
                Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP",
                          quantities=(_DP, _DP_ADD, _DP_SIGNED)), _EPS, _TYPE1),
    facts=frozenset({"add_remove", "poisson_subsampling"}),
    truths={_R: lambda alpha, q, sigma: _sgm_renyi(alpha, q, sigma),
            _DELTA: exact(lambda q, sigma, eps: sgm_delta(eps, q, sigma),
                          "tight delta(eps): closed-form hockey-stick divergence of both orders, 50 digits"),
            _TRADEOFF: exact(lambda q, sigma, type1: sgm_tradeoff(type1, q, sigma),
                             "tight trade-off at x: Neyman-Pearson half-lines of both orders, the smaller, 50 digits",
                             arb_first=False),
            _GDP: exact(_gaussian_mechanism_mu, "mu = 1/sigma (the Gaussian mechanism, Dong, Roth & Su 2022)"),
            _DP_SIGNED: exact(lambda q, sigma, delta: sgm_dp_epsilon(delta, q, sigma, signed=True),
                              "tight signed eps(delta) (negative beyond the total variation), at 50 digits",
                              arb_first=False),
            _DP: exact(lambda q, sigma, delta: sgm_dp_epsilon(delta, q, sigma),
                       "tight eps(delta): closed-form hockey-stick divergence of both orders, bisection at 50 digits",
                       arb_first=False),
            _DP_ADD: exact(lambda q, sigma, delta: sgm_dp_epsilon(delta, q, sigma, one_sided=True),
                           "tight eps(delta) of the adding direction (mixture against N(0, sigma^2)), at 50 digits",
                           arb_first=False)},
    method="positive-term binomial series (integer alpha) and shared-node quadrature, both orders; closed-form "
           "hockey-stick for (eps, delta)",
    expensive=True,
)


PLD_WIDTHS = (0.5, 0.1, 1e-2)  # eps widths of the PLD bracket, coarsest first; the last only to decide a verdict
PLD_REL = 0.1  # the first level whose bracket is this narrow relative to its value, or at most PLD_ENOUGH wide, ...
PLD_ENOUGH = 0.1  # ... is taken; a finer one only while a verdict is undecided (the cost grows as steps / width)


def _pld_truth(bracket: Callable[[float], PLDBracket], what: str, widths: tuple[float, ...] = PLD_WIDTHS) -> Truth:
    """A grid truth from the PLD bracket of the coarsest width in `widths` that is at most PLD_ENOUGH wide or within
    PLD_REL of its value (or the finest), whose enclosure is that bracket and whose `refine` is the next finer width:
    the composition cost grows with steps / width, and a coarse bracket decides most bounds (the checker refines
    while it cannot)."""
    for i, width in enumerate(widths):
        b = bracket(width)
        if i == len(widths) - 1 or width <= PLD_ENOUGH or b.upper - b.lower <= PLD_REL * max(abs(b.lower),
                                                                                             abs(b.upper)):
            break
    finer = widths[i + 1:]

    def enclose(prec: int) -> Enclosure:
        return Enclosure(arb(b.lower), arb(b.upper), f"privacy-loss distribution bracket on {what} (pessimistic/"
                         "optimistic rounding, FFT error budget)", prec)

    return Truth((b.lower + b.upper) / 2, b.lower, b.upper, Method.GRID,
                 f"PLD bracket on {what}, eps width {width:g}, loss grid {b.grid_width:.2e}, error budget "
                 f"{b.error_budget:.1e}", enclose=enclose,
                 refine=(lambda: _pld_truth(bracket, what, finer)) if finer else None)


def _composed_epsilon(q, sigma, steps, delta, one_sided: bool = False, signed: bool = False) -> Truth:
    """The PLD bracket [lower, upper] on the tight eps(delta) after `steps` steps (verify.truth.pld)."""
    return _pld_truth(lambda width: sgm_composed_epsilon(float(delta), float(q), float(sigma), int(steps),
                                                         one_sided=one_sided, eps_tolerance=width, signed=signed),
                      "eps(delta)")


def _composed_delta(q, sigma, steps, eps) -> Truth:
    """The PLD bracket on the tight delta(eps) after `steps` steps, both orders."""
    return _pld_truth(lambda width: sgm_composed_delta(float(eps), float(q), float(sigma), int(steps),
                                                       eps_tolerance=width), "delta(eps)")


SAMPLED_GAUSSIAN_COMPOSED = Family(
    name="sampled_gaussian_composed",
    description="`steps` compositions of the Poisson-subsampled Gaussian mechanism (sensitivity 1, add/remove, noise "
                "multiplier sigma): DP-SGD's data-independent accounting; the tight eps(delta) of the composed pair.",
    parameters=(Parameter(q, q <= 1, "sampling rate, 0 < q <= 1"),
                Parameter(sigma, sigma > 0, "noise multiplier (noise std / sensitivity)"),
                Parameter(steps, sp.And(steps >= 1, steps <= 10_000_000), "number of steps T, 1..10^7 (as verify "
                          "account)", integer=True),
                Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP",
                          quantities=(_DP, _DP_ADD, _DP_SIGNED)), _EPS),
    facts=frozenset({"add_remove", "poisson_subsampling"}),
    truths={_DP: lambda q, sigma, steps, delta: _composed_epsilon(q, sigma, steps, delta),
            _DELTA: _composed_delta,
            _DP_SIGNED: lambda q, sigma, steps, delta: _composed_epsilon(q, sigma, steps, delta, signed=True),
            _DP_ADD: lambda q, sigma, steps, delta: _composed_epsilon(q, sigma, steps, delta, one_sided=True)},
    method="privacy-loss distribution with a proven two-sided bracket (eps width 0.5 where that is within 10% of "
           "its value, else 0.1; 1e-2 while a verdict is undecided)",
    expensive=True,
    # a search draws where the bracket's grid resolves the loss in double precision within its cell caps
    search_region=(sigma >= sp.Rational(3, 10), sigma <= 20, steps <= 2000, q >= sp.Rational(1, 10**5)),
)


def stop_pnsgd_components(n: int, t: int, record: float, shared: float, sigma: float) -> tuple[list, list, list]:
    """Weights, means and sds (units eta*sigma) of Stop-PNSGD's output on linear losses f(w; x) = x w over R, w_0 = 0:
    T ~ U{1..n}, w_T = -eta sum_{k<=T} (x_k + Z_k) ~ N(-eta sum_{k<=T} x_k, eta^2 sigma^2 T); record t is `record`,
    the n - 1 others `shared` (Feldman et al. 2018, Sec. 4)."""
    steps = range(1, n + 1)
    means = [-((T - (T >= t)) * shared + (T >= t) * record) / sigma for T in steps]
    return [1 / n] * n, means, [T**0.5 for T in steps]


def skip_pnsgd_components(n: int, t: int, record: float, shared: float, sigma: float) -> tuple[list, list, list]:
    """The same for Skip-PNSGD: t0 ~ U{0..floor(n/2)}, the first t0 records are skipped and n - t0 steps use records
    t0+1..n, so record t enters iff t > t0 (Feldman et al. 2018, Sec. 4, before Theorem 24)."""
    skips = range(0, n // 2 + 1)
    means = [-((n - t0 - (t > t0)) * shared + (t > t0) * record) / sigma for t0 in skips]
    return [1 / len(skips)] * len(skips), means, [(n - t0) ** 0.5 for t0 in skips]


def _pnsgd_mixture(components, alpha, sigma, L, n, t, xo, what) -> Truth:
    n, t = int(n), int(t)
    weights, means_p, sds = components(n, t, L, xo, sigma)
    _, means_q, _ = components(n, t, -L, xo, sigma)
    return _both_orders(weights, means_p, sds, means_q, sds, alpha, what)


def _stop_pnsgd(alpha, sigma, L, n, t, xo=0.0) -> Truth:
    return _pnsgd_mixture(stop_pnsgd_components, alpha, sigma, L, n, t, xo,
                          "Stop-PNSGD, linear losses, d = 1, x_t = +L vs -L, both orders")


def _skip_pnsgd(alpha, sigma, L, n, t, xo=0.0) -> Truth:
    return _pnsgd_mixture(skip_pnsgd_components, alpha, sigma, L, n, t, xo,
                          "Skip-PNSGD, linear losses, d = 1, x_t = +L vs -L, both orders")


_PNSGD_PARAMS = (_ALPHA, Parameter(sigma, sigma > 0, "std of the noise added to each gradient"),
                 Parameter(L, L > 0, "Lipschitz constant; record t is +L vs -L (linear loss)"),
                 Parameter(n, sp.And(n >= 1, n <= 30), "number of records (the quadrature is run for n <= 30)",
                           integer=True),
                 Parameter(t, t >= 1, "index of the replaced record", integer=True))
_SHARED = Parameter(xo, True, "value of the n - 1 shared records, |xo| <= L")
_INDEX = (Assumption("index_in_range", t <= n, "1 <= t <= n"),)
_SHARED_RANGE = (Assumption("shared_record_in_range", Abs(xo) <= L, "|xo| <= L (L-Lipschitz linear losses)"),)
_STOP_DOC = ("Stop-PNSGD (Feldman et al. Sec. 4): T uniform on {1..n}, output w_T of one-pass noisy SGD on linear "
             "losses f(w; x) = x w over R from w_0 = 0 (eta cancels); record t is +L in S and -L in S'")
_SKIP_DOC = ("Skip-PNSGD (Feldman et al. Sec. 4): skip t0 ~ U{0..floor(n/2)} records, run the other n - t0 steps, on "
             "linear losses over R from w_0 = 0; record t is +L in S and -L in S'")


def _pnsgd_family(name: str, description: str, truth, shared: bool) -> Family:
    """A Stop- or Skip-PNSGD family; `shared` adds the shared-record value xo as a parameter."""
    return Family(
        name=name, description=description,
        parameters=_PNSGD_PARAMS + ((_SHARED,) if shared else ()),
        facts=frozenset({"replace_one_fixed_index", "convex", "smooth", "linear_loss"}),
        truths={_R: truth}, method="Gauss-Legendre quadrature of the 1-D mixture pair, both orders",
        constraints=_INDEX + (_SHARED_RANGE if shared else ()), expensive=True,
    )


STOP_PNSGD_LINEAR_1D = _pnsgd_family(
    "stop_pnsgd_linear_1d", _STOP_DOC + ", the other records 0. Output law: mixture over T of "
                                        "N(-[T >= t](+-L)/sigma, T) (units eta*sigma).", _stop_pnsgd, shared=False)
SKIP_PNSGD_LINEAR_1D = _pnsgd_family(
    "skip_pnsgd_linear_1d", _SKIP_DOC + ", the other records 0. Component t0 is N(-[t > t0](+-L)/sigma, n - t0).",
    _skip_pnsgd, shared=False)
STOP_PNSGD_LINEAR_DATA_1D = _pnsgd_family(
    "stop_pnsgd_linear_data_1d", _STOP_DOC + ", the other n - 1 records all equal xo. Component T is "
                                             "N(-((T - [T >= t]) xo + [T >= t](+-L))/sigma, T) (units eta*sigma).",
    _stop_pnsgd, shared=True)
SKIP_PNSGD_LINEAR_DATA_1D = _pnsgd_family(
    "skip_pnsgd_linear_data_1d", _SKIP_DOC + ", the other n - 1 records all equal xo.", _skip_pnsgd, shared=True)


MIXTURE_VS_GAUSSIAN = Family(
    name="mixture_vs_gaussian",
    description="mu = (1-w) N(gap1, s^2) + w N(gap2, s^2) against nu = N(0, s^2) (= the same mixture of nu_i = "
                "N(0, s^2)); component divergences alpha gap_i^2/(2 s^2).",
    parameters=(_ALPHA, Parameter(w, w <= 1, "weight of the second component"),
                Parameter(gap1, gap1 >= 0, "mean of the first component"),
                Parameter(gap2, gap2 >= 0, "mean of the second component"), Parameter(s, s > 0, "common std")),
    facts=frozenset({"mixture"}),
    truths={_R: lambda alpha, w, gap1, gap2, s: renyi_mixture_quad(
        [1 - w, w] if w < 1 else [1.0], [gap1, gap2] if w < 1 else [gap2], [s, s] if w < 1 else [s], [1.0], [0.0],
        [s], alpha, exact_weights=lambda: ([1 - arb(w), arb(w)] if w < 1 else [1], [1]))},
    method="Gauss-Legendre quadrature of the 1-D mixture against a Gaussian",
    expensive=True,
)


def _sgm_mc(alpha, q, sigma, samples, seed, tilted: bool) -> Truth:
    """Monte-Carlo R_alpha(P || Q) of the sampled Gaussian (the direction that dominates for alpha >= 2)."""
    p = GaussianMixture(np.array([1 - q, q]), np.array([0.0, 1.0]), np.array([sigma, sigma]))
    g = GaussianMixture(np.array([1.0]), np.array([0.0]), np.array([sigma]))
    if tilted:
        return renyi_importance(p.log_pdf, g.log_pdf, geometric_tilt(p, g, alpha), alpha, n=int(samples),
                                seed=int(seed))
    return renyi_naive(p.log_pdf, g, alpha, n=int(samples), seed=int(seed))


_MC_PARAMS = (_ALPHA, Parameter(q, q <= 1, "sampling rate, 0 < q <= 1"),
              Parameter(sigma, sigma > 0, "noise multiplier"),
              Parameter(samples, sp.And(samples >= 2, samples <= 10**6), "Monte-Carlo sample count", integer=True),
              Parameter(seed, seed >= 0, "random seed (same seed, same estimate)", integer=True))

SAMPLED_GAUSSIAN_MC = Family(
    name="sampled_gaussian_mc",
    description="R_alpha((1-q) N(0, sigma^2) + q N(1, sigma^2) || N(0, sigma^2)) estimated by importance sampling "
                "from the geometric tilt (exact weights, log domain, 95% CI, Kish ESS); exact value: sampled_gaussian.",
    parameters=_MC_PARAMS, facts=frozenset({"add_remove", "poisson_subsampling"}),
    truths={_R: lambda alpha, q, sigma, samples, seed: _sgm_mc(alpha, q, sigma, samples, seed, True)},
    method="tilted importance sampling, 95% normal CI on log(mean weight)",
    expensive=True,
    estimated=True,
)

SAMPLED_GAUSSIAN_NAIVE_MC = Family(
    name="sampled_gaussian_naive_mc",
    description="The same divergence estimated naively (x ~ Q): far too small at large alpha with a tiny error bar; "
                "kept to show why verify never trusts it (see tests/truth).",
    parameters=_MC_PARAMS, facts=frozenset({"add_remove", "poisson_subsampling"}),
    truths={_R: lambda alpha, q, sigma, samples, seed: _sgm_mc(alpha, q, sigma, samples, seed, False)},
    method="naive Monte-Carlo under Q, 95% normal CI",
    expensive=True,
    estimated=True,
)
