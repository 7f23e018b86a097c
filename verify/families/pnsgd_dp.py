"""(eps, delta)-DP of Skip- and Stop-PNSGD on linear losses (Feldman et al. 2018, Section 5): the tight eps(delta)
of the released mixture pair (verify.truth.hockey_stick_1d), both orders.

The instance is research §7 item 2's: f(w, x) = <w, x> with x_t = +-L e_1 and the other records 0, on a box K that is
wide along e_1; the iterates leave it with probability about 2 Phi(-sqrt(n d)/8) under Theorems 30-32's step sizes
(1e-35 at n d = 10^4), so the projected output's delta differs from the unprojected one's by at most that. Along
e_1 the output is the mixture of stop_pnsgd_components / skip_pnsgd_components (units eta sigma, eta cancels)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from verify.families.mixtures import skip_pnsgd_components, stop_pnsgd_components
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Method, Truth
from verify.symbols import L, delta, m_pub, n, sigma, t, tasks
from verify.truth.contracting_skip import contracting_skip_epsilon
from verify.truth.hockey_stick_1d import epsilon_truth
from verify.truth.mixture import Mixture1D
from verify.truth.mixture_quad import renyi_mixture_quad_both

_DP = Quantity.DP_EPSILON


def _pair(components, n: int, t: int, L: float, sigma: float, runs: int = 1) -> tuple[Mixture1D, Mixture1D]:
    """The released laws on S (record t = +L) and S' (-L); `runs` independent one-component runs merge into one
    Gaussian with sqrt(runs) times the mean gap."""
    w, means, sds = components(n, t, L, 0.0, sigma)
    _, means_q, _ = components(n, t, -L, 0.0, sigma)
    scale = math.sqrt(runs)
    return Mixture1D.of(w, np.array(means) * scale, sds), Mixture1D.of(w, np.array(means_q) * scale, sds)


def _skip_epsilon(sigma, L, n, t, delta) -> Truth:
    p, q = _pair(skip_pnsgd_components, int(n), int(t), float(L), float(sigma))
    return epsilon_truth(p, q, float(delta), f"Skip-PNSGD, record {int(t)} of {int(n)} = +-L: tight eps(delta) of the "
                                        f"{len(p.weights)}-component mixture pair, both orders")


_ORDERS = tuple(float(a) for a in np.geomspace(1.05, 400.0, 24))  # the orders of the RDP conversion
# indices of _ORDERS evaluated first (their bounds prune the others), from the middle out: the minimiser lies near
# a = 16 to 120 at the catalog's deltas, and the low orders' conversion term (log(1/delta)/(a - 1), 230 at a = 1.05 and
# delta = 1e-5) then prunes them unevaluated. The minimum is the full grid's whatever the order (_rdp_epsilon_upper)
_COARSE = (16, 12, 20, 8, 23, 4, 0)
_PRUNE_SLACK = 1e-9  # an order is skipped only if its lower bound beats the best by this much (relative to 1 + |best|)


def _rdp_lower(j: int, known: dict[int, tuple[float, float]]) -> float:
    """A lower bound on R_a (the larger order) at a = _ORDERS[j] from the intervals `known` at other orders: R_a is
    non-decreasing in a, and (a - 1) R_a is convex in a (a cumulant generating function, the max of two), so it lies
    above the chord through the two nearest known orders on either side, extended beyond them."""
    a = _ORDERS[j]
    below, above = sorted(i for i in known if i < j), sorted(i for i in known if i > j)
    bound = max([0.0] + [known[i][0] for i in below])
    chords = []
    if len(below) >= 2:  # beyond the chord's right end: increasing in the right end's value, decreasing in the left's
        (u, v) = below[-2:]
        fu, fv = (_ORDERS[u] - 1) * known[u][1], (_ORDERS[v] - 1) * known[v][0]
        chords.append(fv + (fv - fu) * (a - _ORDERS[v]) / (_ORDERS[v] - _ORDERS[u]))
    if len(above) >= 2:  # before the chord's left end: increasing in the left end's value, decreasing in the right's
        (u, v) = above[:2]
        fu, fv = (_ORDERS[u] - 1) * known[u][0], (_ORDERS[v] - 1) * known[v][1]
        chords.append(fu - (fv - fu) * (_ORDERS[u] - a) / (_ORDERS[v] - _ORDERS[u]))
    finite = [c for c in chords if math.isfinite(c)]
    return max([bound] + [c / (a - 1) for c in finite])


def _rdp_epsilon_upper(p: Mixture1D, q: Mixture1D, runs: int, delta: float) -> float:
    """An upper bound on eps(delta) of `runs` independent copies: runs * R_alpha (the larger order, quadrature upper
    end) through the conversion eps = R + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha - 1) (Balle et al.
    2020, Thm. 21), minimised over _ORDERS. An order whose conversion is provably no better than the best so far
    (`_rdp_lower` from the quadrature intervals at the orders done) is skipped: the minimum is the full grid's."""
    conversion = [math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1) for a in _ORDERS]
    known: dict[int, tuple[float, float]] = {}
    best, pending = math.inf, set(range(len(_ORDERS)))
    while pending:
        bounds = {j: runs * _rdp_lower(j, known) + conversion[j] for j in pending}
        pending = {j for j in pending if not bounds[j] >= best + _PRUNE_SLACK * (1 + abs(best))}
        if not pending:
            break
        j = next((i for i in _COARSE if i in pending), None)
        j = min(pending, key=bounds.__getitem__) if j is None else j
        pending.remove(j)
        pq, qp = renyi_mixture_quad_both(p.weights, p.means, p.sds, q.weights, q.means, q.sds, _ORDERS[j])
        known[j] = (max(pq.lower, qp.lower), max(pq.upper, qp.upper))
        a = _ORDERS[j]
        best = min(best, runs * known[j][1] + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return max(best, 0.0)


def _tasks_epsilon(sigma, L, n, t, tasks, delta) -> Truth:
    n, t, k, delta = int(n), int(t), int(tasks), float(delta)
    what = f"{k} independent Stop-PNSGD runs, record {t} of {n} = +-L"
    if n == 1 or k == 1:  # one Gaussian (n = 1: the k runs merge) or one mixture pair: tight
        p, q = _pair(stop_pnsgd_components, n, t, float(L), float(sigma), runs=k if n == 1 else 1)
        return epsilon_truth(p, q, delta, what + (": a Gaussian mechanism with sqrt(k) times the gap" if n == 1 else
                                             ": one mixture pair") + ", tight eps(delta), both orders")
    p, q = _pair(stop_pnsgd_components, n, t, float(L), float(sigma))
    lower = epsilon_truth(p, q, delta, "").lower  # dropping k - 1 runs is post-processing
    upper = max(_rdp_epsilon_upper(p, q, k, delta), lower)
    return Truth((lower + upper) / 2, lower, upper, Method.SERIES,
                 what + ": between one run's tight eps(delta) and the RDP conversion of k R_alpha (no enclosure)")


def _contracting_epsilon(sigma, L, n, m_pub, delta) -> Truth:
    value, lower, upper, before, enclose = contracting_skip_epsilon(sigma, L, n, m_pub, delta)
    return Truth(value, min(lower, value), max(upper, value), Method.SERIES,
                 f"Skip-PNSGD, private records before t = n - m contracting: {before:.0f} noise units (eta sigma)^2 "
                 f"left from before t against m + 1 = {int(m_pub) + 1} after; the Gaussian eps(delta), bracketed for "
                 "the skip mixture and the projection", enclose=enclose)


_SIGMA = Parameter(sigma, sigma > 0, "std of the noise added to each gradient")
_L = Parameter(L, L > 0, "Lipschitz constant; record t is +L e_1 vs -L e_1 (linear loss)")
_T = Parameter(t, t >= 1, "index of the replaced record (1-based)", integer=True)
_DELTA = Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP")
_INDEX = (Assumption("index_in_range", t <= n, "1 <= t <= n"),)
_FACTS = frozenset({"replace_one_fixed_index", "convex", "smooth", "linear_loss", "bounded_domain"})

SKIP_PNSGD_DP_LINEAR = Family(
    name="skip_pnsgd_dp_linear",
    description="Skip-PNSGD (Feldman et al. Sec. 4: skip t0 ~ U{0..floor(n/2)} records, run the other n - t0 steps) "
                "on linear losses, record t = +-L e_1, the others 0, K a box wide along e_1: the tight eps(delta) of "
                "the released mixture over t0 of N(-[t > t0](+-L)/sigma, n - t0) (units eta sigma).",
    parameters=(_SIGMA, _L, Parameter(n, sp.And(n >= 1, n <= 100), "number of records, 1..100", integer=True), _T,
                _DELTA),
    facts=_FACTS, truths={_DP: _skip_epsilon},
    method="hockey stick of the 1-D mixture pair: float roots, Arb bracket (proven signs, Phi differences)",
    constraints=_INDEX, expensive=True,
)

STOP_PNSGD_TASKS_LINEAR = Family(
    name="stop_pnsgd_tasks_linear",
    description="k independent Stop-PNSGD runs (T ~ U{1..n} each) on one dataset, linear losses, record t = +-L e_1, "
                "the others 0, K a box wide along e_1 (Theorem 32's setting with f_i = f). n = 1: a Gaussian "
                "mechanism with gap 2 L sqrt(k)/sigma; k = 1: one mixture pair; otherwise bracketed between one "
                "run's eps and the RDP conversion of k R_alpha.",
    parameters=(_SIGMA, _L, Parameter(n, sp.And(n >= 1, n <= 30), "number of records, 1..30", integer=True), _T,
                Parameter(tasks, sp.And(tasks >= 1, tasks <= 10**6), "number k of tasks (runs), 1..10^6",
                          integer=True), _DELTA),
    facts=_FACTS, truths={_DP: _tasks_epsilon},
    method="tight eps(delta) of a Gaussian or mixture pair (Arb-bracketed); RDP-conversion bracket otherwise",
    constraints=_INDEX, expensive=True,
)

SKIP_PNSGD_CONTRACTING = Family(
    name="skip_pnsgd_contracting",
    description="Skip-PNSGD in 1-D on K = [-1, 1] with Corollary 31's step eta = sqrt(8)/sqrt(n (L^2 + sigma^2)): the "
                "m public records last with loss 0, the last private record t = n - m is +-L w, the private records "
                "before it (L/2) w^2 (L-Lipschitz and L-smooth on K), which contract the noise added before t; "
                "64 m <= n, so t is never skipped (verify.truth.contracting_skip).",
    parameters=(_SIGMA, Parameter(L, L > 0, "Lipschitz constant: record t is +L w vs -L w"),
                Parameter(n, sp.And(n >= 2**12, n <= 2**30), "number of records, 2^12..2^30", integer=True),
                Parameter(m_pub, m_pub >= 1, "public records, placed last", integer=True), _DELTA),
    facts=frozenset({"replace_one_fixed_index", "convex", "smooth", "bounded_domain", "public_records_last"}),
    truths={_DP: _contracting_epsilon},
    method="Gaussian eps(delta) of the contracted chain, Arb-bracketed for the skip mixture and the projection",
    constraints=(Assumption("public_share", 64 * m_pub <= n, "64 m <= n: the last private record t = n - m lies "
                            "beyond every skip t0 <= n/2, by more steps than the contraction needs to forget"),
                 Assumption("noise_inside_K", 3200 * sigma**2 * (m_pub + 1 + sp.sqrt(n)) <= n * L**2,
                            "the iterates' spread, about sqrt(8 sigma^2 (m + 1 + sqrt n)/(n L^2)), at most 1/20 of "
                            "K's radius: the projection's slack stays negligible")),
)

FAMILIES = (SKIP_PNSGD_DP_LINEAR, STOP_PNSGD_TASKS_LINEAR, SKIP_PNSGD_CONTRACTING)
