"""DP mini-batch block coordinate descent (Chen & Liu, seed 003, Algorithm 1) on quadratic blocks: exact truths from
the linear-Gaussian engine (verify.truth.linear_gaussian).

Batches: n = m b records cut into m fixed batches of b, run in the same order every epoch (step t = k m + j uses batch
j); the differing record (replace-one) sits in batch j0. Each step is the noisy proximal step of eq. (6):
theta <- T(theta - eta s grad f_B(theta) + N(0, 2 eta o(k, j) I)) with the Hessian-norm clipping factor
s = min(kappa_h / ||H||, 1) (constant on a quadratic), the prox T of the weight decay (wd/2)||theta||^2,
T(z) = z/(1 + eta wd), and the noise schedule o(k, j) = o_rate^k (o_last if j = m - 1 else o).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from verify.errors import ResourceLimitError, count_text
from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Truth
from verify.symbols import (
    K,
    S,
    alpha,
    b,
    beta,
    d_in,
    eta,
    gamma_lag,
    j0,
    kappa_h,
    lam,
    m,
    mu,
    mu_c,
    o,
    o_last,
    o_rate,
    rho,
    steps,
    u_prime,
    u_rec,
    w_start,
    wd,
    x,
    x_prime,
)
from verify.truth.gaussian import renyi_gaussian_1d
from verify.truth.linear_gaussian import (
    AffineStep,
    LinearGaussianPair,
    assignment_mixture_truth,
    linear_gaussian_truth,
)
from verify.truth.numbers import extra_precision, num

_R, _LSI = Quantity.RENYI, Quantity.LSI_CONSTANT
_LF, _LT = Quantity.GRADIENT_MAP_LIPSCHITZ, Quantity.PROX_LIPSCHITZ
_DPS = 50


def noise_at(o: float, o_last: float, o_rate: float, m: int, t: int):
    """o(k, j) of global step t = k m + j, in the active number system."""
    N = num()
    k, j = divmod(t, m)
    return N.mpf(o_last if j == m - 1 else o) * N.mpf(o_rate) ** k


def _clip(kappa_h, beta):
    """The Hessian-clipping factor s = min(kappa_h/||H||, 1) of eq. (6); ||H|| = beta on these blocks."""
    N = num()
    return -N.maximum(-N.mpf(kappa_h) / N.mpf(beta), N.mpf(-1))


def _contraction(eta, kappa_h, beta, curvature):
    """1 - eta s curvature with s = min(kappa_h/beta, 1), formed exactly from the float inputs and rounded once (1
    minus a rounded eta s curvature near 1, or near 2 where the map is near -1 and the gap sums alternate, would
    cancel): (beta - eta kappa_h curvature)/beta when clipped, 1 - eta curvature otherwise, the products exact at 200
    extra bits."""
    N = num()
    eta, kappa_h, beta, curvature = (N.mpf(v) for v in (eta, kappa_h, beta, curvature))
    clipped = N.sign(beta - kappa_h)
    if clipped is None:  # a ball straddling kappa_h = beta (both forms agree there)
        return 1 - eta * _clip(kappa_h, beta) * curvature
    with extra_precision(200):
        value = (beta - eta * kappa_h * curvature) / beta if clipped > 0 else 1 - eta * curvature
    return value if N.rigorous else +value


MAX_PROPAGATIONS = 15_000  # affine steps one truth may propagate at 50 digits (summed over assignments): ~2 s
MAX_FIXED_STEPS = 500  # steps of one fixed-batch run (~0.07 s): the one-step and per-batch searches stay quick


MAX_MIXTURE = 50  # batch assignments a shuffled family mixes
MAX_EPOCHS = 500  # epochs of a shuffled family


def _affordable(steps: int, assignments: int = 1, cap: int = MAX_PROPAGATIONS) -> None:
    if steps * assignments > cap:
        raise ResourceLimitError(f"{count_text(steps)} steps x {count_text(assignments)} batch assignments exceed the "
                                 f"engine's cap of {cap} propagated steps per truth")


def block_pair(eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0) -> LinearGaussianPair:
    """The two runs (record in batch j0 on D; the replaced record on D') of one released block with
    l(theta; x) = (beta/2) theta_1^2 + (mu/2)(theta_2 - x)^2 (mu = 0: -x theta_2, a flat direction), start 0.
    Coordinate 2 carries the data; S is the per-example difference of the applied gradient (after the clipping
    factor s), so the batch gradient moves by S / b when the step's batch is j0. Coordinate 1 evolves independently
    of coordinate 2 with the same law on D and D', so it adds nothing to R_alpha of the released block: the pair is
    the data coordinate alone."""
    return block_pairs(eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, [j0])[0]


def block_pairs(eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0s) -> list[LinearGaussianPair]:
    """`block_pair` for each record batch j0 in `j0s`, one step object per (step in the record's batch, epoch, last
    batch) shared by every j0 (the same values as built one pair at a time; shared objects also make the chains'
    equality check in verify.truth.linear_gaussian an identity check)."""
    m = int(m)
    _affordable(int(steps))
    with mpmath.workdps(_DPS):
        eta_ = mpmath.mpf(eta)
        a = _contraction(eta, kappa_h, beta, mu)
        shift = eta_ * mpmath.mpf(S) / int(b)
        tau = 1 / (1 + eta_ * mpmath.mpf(wd))
        # a step depends on t only through (record's batch, epoch, last batch): built once
        made: dict[tuple[bool, int, bool], AffineStep] = {}
        chains = []
        for j0 in j0s:
            chain = []
            for t in range(int(steps)):
                k, j = divmod(t, m)
                key = (j == int(j0), k, j == m - 1)
                if key not in made:
                    v = 2 * eta_ * noise_at(o, o_last, o_rate, m, t)
                    step = AffineStep.make([[a]], [shift if key[0] else 0], [[v]], [0])
                    made[key] = step.then([[tau]]) if wd > 0 else step
                chain.append(made[key])
            chains.append(chain)
    return [LinearGaussianPair.make(chain) for chain in chains]


def coupled_pair(eta, lam, mu_c, S, b, m, K, o, j0) -> LinearGaussianPair:
    """Two released scalar blocks u, v with l(u, v; x) = (lam/2)(u - x)^2 + (mu_c/2)(v - u)^2 (the inventory's
    instance D1), Gauss-Seidel: a noisy u-step on the batch, then a noisy v-step that sees the new u; K epochs."""
    return coupled_pairs(eta, lam, mu_c, S, b, m, K, o, [j0])[0]


def coupled_pairs(eta, lam, mu_c, S, b, m, K, o, j0s) -> list[LinearGaussianPair]:
    """`coupled_pair` for each record batch j0 in `j0s`, the three step objects shared by every j0 (as in
    `block_pairs`)."""
    m = int(m)
    _affordable(2 * int(K) * m)
    with mpmath.workdps(_DPS):
        e, lm, c = mpmath.mpf(eta), mpmath.mpf(lam), mpmath.mpf(mu_c)
        v = 2 * e * mpmath.mpf(o)
        shift = e * mpmath.mpf(S) / int(b)
        u_map = [[1 - e * (lm + c), e * c], [0, 1]]
        v_map = [[1, 0], [e * c, 1 - e * c]]
        v_step = AffineStep.make(v_map, [0, 0], [[0, 0], [0, v]])
        u_steps = {record: AffineStep.make(u_map, [shift if record else 0, 0], [[v, 0], [0, 0]], [0, 0])
                   for record in (False, True)}
        chains = []
        for j0 in j0s:
            chain = []
            for t in range(int(K) * m):
                chain.extend((u_steps[t % m == int(j0)], v_step))
            chains.append(chain)
    return [LinearGaussianPair.make(chain) for chain in chains]


def _block_variances(eta, mu, beta, kappa_h, m, steps, o, o_last, o_rate, wd):
    """The variances of the two coordinates after `steps` steps (the law is N(m, diag(v1, v2)))."""
    N = num()
    m = int(m)
    _affordable(int(steps))
    a1, a2 = _contraction(eta, kappa_h, beta, beta), _contraction(eta, kappa_h, beta, mu)
    tau2 = (1 / (1 + N.mpf(eta) * N.mpf(wd))) ** 2
    v1 = v2 = N.mpf(0)
    for t in range(int(steps)):
        fresh = 2 * N.mpf(eta) * noise_at(o, o_last, o_rate, m, t)
        v1, v2 = tau2 * (a1 * a1 * v1 + fresh), tau2 * (a2 * a2 * v2 + fresh)
    return v1, v2


def _lsi(eta, mu, beta, kappa_h, m, steps, o, o_last, o_rate, wd):
    """The LSI constant of N(m, diag(v1, v2)): 1/max(v1, v2) (+inf for the point mass at steps = 0)."""
    N = num()
    v1, v2 = _block_variances(eta, mu, beta, kappa_h, m, steps, o, o_last, o_rate, wd)
    if int(steps) == 0:
        return N.inf
    return 1 / N.maximum(v1, v2)


def _lip_f(eta, mu, beta, kappa_h):
    """Lip(F) of F(theta) = theta - eta s grad f: max(|1 - eta s beta|, |1 - eta s mu|)."""
    N = num()
    return N.maximum(abs(_contraction(eta, kappa_h, beta, beta)), abs(_contraction(eta, kappa_h, beta, mu)))


def _lip_t(eta, wd):
    return 1 / (1 + eta * wd)


_LIP_F_TRUTH = exact(_lip_f, "max(|1 - eta s beta|, |1 - eta s mu|): the spectral norm of I - eta s H")
_LIP_T_TRUTH = exact(_lip_t, "1/(1 + eta wd): the prox of a weight decay is a scaling")


def _block_renyi(alpha, eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0) -> Truth:
    _affordable(int(steps), cap=MAX_FIXED_STEPS)
    pair = block_pair(eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0)
    return linear_gaussian_truth(pair, alpha, what="DP-MBCD block, fixed batches")


def _shuffled_renyi(alpha, eta, mu, beta, kappa_h, S, b, m, K, o, o_last, o_rate, wd) -> Truth:
    m = int(m)
    _affordable(int(K) * m, m)
    pairs = block_pairs(eta, mu, beta, kappa_h, S, b, m, int(K) * m, o, o_last, o_rate, wd, range(m))
    return assignment_mixture_truth(pairs, alpha, what="DP-MBCD block, shuffled once (j0 uniform)")


def _coupled_renyi(alpha, eta, lam, mu_c, S, b, m, K, o, j0) -> Truth:
    _affordable(2 * int(K) * int(m), cap=MAX_FIXED_STEPS)
    return linear_gaussian_truth(coupled_pair(eta, lam, mu_c, S, b, m, K, o, j0), alpha,
                                 what="DP-MBCD, two coupled released blocks, fixed batches")


def _coupled_shuffled_renyi(alpha, eta, lam, mu_c, S, b, m, K, o) -> Truth:
    m = int(m)
    _affordable(2 * int(K) * m, m)
    pairs = coupled_pairs(eta, lam, mu_c, S, b, m, K, o, range(m))
    return assignment_mixture_truth(pairs, alpha, what="DP-MBCD, two coupled released blocks, shuffled once")


def _param(symbol: sp.Symbol, domain: sp.Basic, text: str, quantities=(), integer: bool = False) -> Parameter:
    return Parameter(symbol, domain, text, integer=integer, quantities=tuple(quantities))


_J0 = Assumption("j0_in_range", j0 <= m - 1, "0 <= j0 <= m - 1")
_SHUFFLED_CAP = Assumption("engine_cap", K * m**2 <= MAX_PROPAGATIONS,
                           f"K m^2 <= {MAX_PROPAGATIONS}: steps propagated over all assignments")
_COUPLED_CAP = Assumption("engine_cap", 2 * K * m <= MAX_FIXED_STEPS, f"2 K m <= {MAX_FIXED_STEPS} steps")
_COUPLED_SHUFFLED_CAP = Assumption("engine_cap", 2 * K * m**2 <= MAX_PROPAGATIONS,
                                   f"2 K m^2 <= {MAX_PROPAGATIONS}: steps propagated over all assignments")
_CURVATURES = Assumption("curvatures", mu <= beta, "0 <= mu <= beta: beta = ||H|| is the block's largest curvature")

_ALPHA = _param(alpha, alpha > 1, "Rényi order", (_R,))
_ETA = _param(eta, eta > 0, "step size")
_MU = _param(mu, mu >= 0, "curvature along the data direction (0: a flat, merely convex direction)", (_R, _LSI, _LF))
_BETA = _param(beta, beta > 0, "largest curvature of the block, ||H|| (a data-free direction)", (_R, _LSI, _LF))
_KAPPA = _param(kappa_h, kappa_h > 0, "Hessian-norm clipping threshold (eq. 6); >= beta: no clipping",
                (_R, _LSI, _LF))
_S = _param(S, S >= 0, "per-example difference of the applied gradient, s |grad l(theta; x) - grad l(theta; x')| "
            "(s the clipping factor)", (_R,))
_B = _param(b, b >= 1, "batch size", (_R,), integer=True)
_M = _param(m, m >= 1, "batches per epoch (n = m b records, replace-one neighbours)", (_R, _LSI), integer=True)
_O = _param(o, o > 0, "noise magnitude o(k, j) of batches j < m - 1 in epoch 0 (variance 2 eta o)", (_R, _LSI))
_O_LAST = _param(o_last, o_last > 0, "o(k, m - 1) in epoch 0: the last batch's noise", (_R, _LSI))
_O_RATE = _param(o_rate, o_rate > 0, "per-epoch factor of the schedule: o(k, j) = o(0, j) o_rate^k", (_R, _LSI))
_WD = _param(wd, wd >= 0, "weight decay (wd/2)||theta||^2: prox theta/(1 + eta wd), Lip(T) = 1/(1 + eta wd)",
             (_R, _LSI, _LT))
_J0P = _param(j0, j0 >= 0, "batch of the differing record (0-based; fixed batch order)", (_R,), integer=True)

_HOW = "linear-Gaussian engine: mean gap and covariance of the released block propagated at 50 digits"
_BLOCK_ALL = "Algorithm 1 (eq. 6) on one released block, l(theta; x) = (beta/2) theta_1^2 + (mu/2)(theta_2 - x)^2"

MBCD_QUADRATIC = Family(
    name="mbcd_quadratic",
    description=f"{_BLOCK_ALL}, fixed batches with the differing record in batch j0, `steps` global steps from 0, "
                "last iterate released; noise o(k, j) = o_rate^k (o_last if j = m - 1 else o), weight-decay prox. "
                "Also the LSI constant of the iterate's law and the Lipschitz constants of F and T.",
    parameters=(_ALPHA, _ETA, _MU, _BETA, _KAPPA, _S, _B, _M,
                _param(steps, sp.And(steps >= 1, steps <= MAX_FIXED_STEPS),
                       f"global steps run (step t uses batch t mod m), at most {MAX_FIXED_STEPS}", (_R, _LSI),
                       integer=True),
                _O, _O_LAST, _O_RATE, _WD, _J0P),
    facts=frozenset({"quadratic_loss", "replace_one", "fixed_start", "fixed_batches", "single_released_block"}),
    truths={
        _R: _block_renyi,
        _LSI: exact(_lsi, "1/max variance of the Gaussian iterate (variance recursion at 50 digits)"),
        _LF: _LIP_F_TRUTH,
        _LT: _LIP_T_TRUTH,
    },
    method=_HOW,
    constraints=(_J0, _CURVATURES),
)

MBCD_QUADRATIC_SHUFFLED = Family(
    name="mbcd_quadratic_shuffled",
    description=f"{_BLOCK_ALL}, batches shuffled once (j0 uniform over the m batches, secret) and kept for K epochs; "
                "the other records equal the replaced one, so the law on D is a mixture over j0 and on D' one "
                "Gaussian; both orders.",
    parameters=(_ALPHA, _ETA, _MU, _BETA, _KAPPA, _S, _B,
                _param(m, sp.And(m >= 1, m <= MAX_MIXTURE), f"batches per epoch (n = m b), at most {MAX_MIXTURE} "
                       "assignments in the mixture", (_R,), integer=True),
                _param(K, sp.And(K >= 1, K <= MAX_EPOCHS), f"epochs (at most {MAX_EPOCHS})", (_R,), integer=True),
                _O, _O_LAST, _O_RATE, _WD),
    facts=frozenset({"quadratic_loss", "replace_one", "fixed_start", "shuffled_once", "single_released_block"}),
    truths={
        _R: _shuffled_renyi,
        _LF: _LIP_F_TRUTH,
        _LT: _LIP_T_TRUTH,
    },
    method=f"{_HOW}, per assignment; mixture over j0 by Gauss-Legendre quadrature with an error bound (both orders) "
           "and an Arb enclosure",
    constraints=(_CURVATURES, _SHUFFLED_CAP),
    expensive=True,
    # a search draws where Theorem 4.6's recursions stay within their step cap ((2K + 3)(K + 2) m terms) and the
    # mixture's quadrature over the Rényi tilt within the memory cap
    search_region=(K**2 * m <= 6000,),
)

_COUPLED = ("Algorithm 1 on two coupled released scalar blocks, l(u, v; x) = (lam/2)(u - x)^2 + (mu_c/2)(v - u)^2: "
            "per batch a noisy u-step (N(0, 2 eta o)), then a noisy v-step seeing the new u; (u, v) released after "
            "K epochs")
_COUPLED_PARAMS = (_ETA, _param(lam, lam > 0, "curvature of the data term in u"),
                   _param(mu_c, mu_c >= 0, "coupling between the blocks"),
                   _param(S, S >= 0, "per-example gradient difference in u, lam |x - x'|"),
                   _param(b, b >= 1, "batch size", integer=True),
                   _param(m, m >= 1, "batches per epoch (n = m b records)", integer=True),
                   _param(K, K >= 1, "epochs", integer=True),
                   _param(o, o > 0, "noise magnitude of every step (variance 2 eta o)"))

MBCD_COUPLED = Family(
    name="mbcd_coupled",
    description=f"{_COUPLED}; fixed batches, record in batch j0.",
    parameters=(_ALPHA, *_COUPLED_PARAMS, _J0P),
    facts=frozenset({"quadratic_loss", "replace_one", "fixed_start", "fixed_batches", "coupled_blocks"}),
    truths={_R: _coupled_renyi},
    method=_HOW,
    constraints=(_J0, _COUPLED_CAP),
)

MBCD_COUPLED_SHUFFLED = Family(
    name="mbcd_coupled_shuffled",
    description=f"{_COUPLED}; batches shuffled once (j0 uniform, secret), the other records equal the replaced one; "
                "R(P_D || P_D') for integer alpha.",
    parameters=(_param(alpha, alpha >= 2, "Rényi order (an integer: the mixture series)", integer=True),
                *_COUPLED_PARAMS),
    facts=frozenset({"quadratic_loss", "replace_one", "fixed_start", "shuffled_once", "coupled_blocks"}),
    truths={_R: _coupled_shuffled_renyi},
    method=f"{_HOW}, per assignment; the mixture over j0 by the integer-order series over compositions (exact, "
           "Arb-enclosed)",
    constraints=(_COUPLED_SHUFFLED_CAP,),
    expensive=True,
)


def _lifted_lip(eta, gamma_lag, rho, d_in):
    """Lip of W -> W - eta gamma (W x - u) x^T with ||x|| = rho: the map is W (I - eta gamma x x^T) + const, whose
    eigenvalues are 1 (d_in - 1 times, directions orthogonal to x) and 1 - eta gamma rho^2."""
    N = num()
    with extra_precision(300):  # the product of four floats exactly, then 1 minus it rounded once
        edge = abs(1 - N.mpf(eta) * N.mpf(gamma_lag) * N.mpf(rho) ** 2)
    edge = edge if N.rigorous else +edge
    return N.maximum(edge, N.mpf(1)) if int(d_in) >= 2 else edge


LIFTED_LAYER = Family(
    name="lifted_layer",
    description="The W-update of the lifted network (Appendix B.2.2, eq. 14 without noise): gradient map of "
                "f(W) = (gamma_lag/2)||u - W x||^2 for one input x of norm rho in R^d_in.",
    parameters=(_param(eta, eta > 0, "step size"), _param(gamma_lag, gamma_lag > 0, "Lagrangian coefficient gamma"),
                _param(rho, rho > 0, "||x|| (the clip rho_d of eq. 12, attained)"),
                _param(d_in, d_in >= 1, "input dimension", integer=True)),
    facts=frozenset({"lifted_network"}),
    truths={_LF: exact(_lifted_lip, "spectral norm of I - eta gamma x x^T, closed form")},
    method="closed form of the Jacobian's spectrum",
)

def _variant_step(w0, x_r, u_r, eta_, o_):
    """Mean and variance of eq. (17)'s output (seed 003, App. B.2.2): (w0 - eta u x + N(0, 2 eta o)) / (1 + eta x^2)."""
    scale = 1 / (1 + eta_ * x_r**2)
    return (w0 - eta_ * u_r * x_r) * scale, 2 * eta_ * o_ * scale**2


def _variant_renyi(alpha, eta, o, w_start, x, u_rec, x_prime, u_prime):
    """R_alpha of one step of eq. (17) on D = {(x, u_rec)} against D' = {(x_prime, u_prime)} from the point mass at
    w_start, the larger order: two Gaussians whose variances differ (eq. 17 scales the noise by the data)."""
    p = _variant_step(w_start, x, u_rec, eta, o)
    q = _variant_step(w_start, x_prime, u_prime, eta, o)
    return num().maximum(renyi_gaussian_1d(*p, *q, alpha), renyi_gaussian_1d(*q, *p, alpha))


MBCD_VARIANT_STEP = Family(
    name="mbcd_variant_step",
    description="One W-update of the variant of Algorithm 4 (seed 003, App. B.2.2, eq. 17) on a 1-D layer with one "
                "record in the batch: W' = (w_start - eta u x + N(0, 2 eta o)) / (1 + eta x^2), D = {(x, u_rec)} "
                "against D' = {(x_prime, u_prime)}, w_start a data-independent point mass; W' released.",
    parameters=(_ALPHA, _ETA, _param(o, o > 0, "noise magnitude o(k, j): variance 2 eta o before the scaling"),
                _param(w_start, sp.true, "the state before the step (data-independent)"),
                _param(x, sp.true, "the record's input on D"), _param(u_rec, sp.true, "the record's target on D"),
                _param(x_prime, sp.true, "the record's input on D'"),
                _param(u_prime, sp.true, "the record's target on D'")),
    facts=frozenset({"replace_one", "fixed_start", "single_step", "variant_eq17"}),
    truths={_R: exact(_variant_renyi, "closed form R_alpha of two 1-D Gaussians of different variances, the larger "
                                      "order, 50 digits (+inf where alpha v_q + (1 - alpha) v_p <= 0)")},
    method="closed form (two Gaussians)",
)

FAMILIES = (MBCD_QUADRATIC, MBCD_QUADRATIC_SHUFFLED, MBCD_COUPLED, MBCD_COUPLED_SHUFFLED, LIFTED_LAYER,
            MBCD_VARIANT_STEP)
