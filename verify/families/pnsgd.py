"""One-pass and multi-epoch noisy SGD and affine contractive noisy iterations (Feldman et al. 2018):
exact Gaussian ground truth (no projection, so the output law is Gaussian)."""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.symbols import D0, Delta, K, L, alpha, delta, eta, i, kappa, lam, n, sigma, t
from verify.truth.gaussian import gaussian_dp_epsilon
from verify.truth.numbers import gap_power, geometric_gap, num
from verify.truth.pnsgd_gaussian import cni_affine_renyi, pnsgd_renyi

_R, _DP = Quantity.RENYI, Quantity.DP_EPSILON
_HOW = "closed form of the Gaussian output law, mpmath 50 digits"
_ALPHA = Parameter(alpha, alpha > 1, "Rényi order")
_SIGMA = Parameter(sigma, sigma > 0, "std of the Gaussian noise added to each gradient (iterate noise eta*sigma)")
_ETA = Parameter(eta, eta > 0, "step size")
_N = Parameter(n, n >= 1, "number of records = steps per pass", integer=True)
_FACTS = frozenset({"replace_one_fixed_index", "unconstrained", "convex", "smooth"})

# verify.truth.pnsgd_gaussian's closed forms take the contraction c = 1 - eta lam itself; c rounded near +-1 (eta lam
# tiny, or near 2) leaves their Arb balls wide (1 - c^2 and 1 - c^(2n) of a ball of c around 1) and a term-by-term sum
# that gives up beyond 1e5 terms. The same closed forms from the gap x = 1 - c (verify.truth.numbers.geometric_gap):


def _pnsgd_quadratic(alpha, sigma, eta, lam, n, t, Delta):
    """pnsgd_renyi with c = 1 - eta lam: alpha Delta^2 c^(2(n-t)) / (2 sigma^2 sum_{k<n} c^(2k))."""
    N = num()
    x, n, t = N.mpf(eta) * N.mpf(lam), int(n), int(t)
    return N.mpf(alpha) * N.mpf(Delta) ** 2 * gap_power(x, 2 * (n - t)) / (2 * N.mpf(sigma) ** 2
                                                                           * geometric_gap(x, n, power=2))


def _pnmsgd_quadratic(alpha, sigma, eta, lam, n, i, Delta):
    """pnmsgd_renyi with c = 1 - eta lam: mean gap Delta c^(n-i) sum_{k<n} c^(n k), variance sigma^2
    sum_{k<n^2} c^(2k) (units eta)."""
    N = num()
    x, n, i = N.mpf(eta) * N.mpf(lam), int(n), int(i)
    gap = N.mpf(Delta) * gap_power(x, n - i) * geometric_gap(x, n, power=n)
    return N.mpf(alpha) * gap**2 / (2 * N.mpf(sigma) ** 2 * geometric_gap(x, n * n, power=2))


def _cni_affine(alpha, sigma, K, D0, kappa):
    """cni_affine_renyi, from the gap 1 - kappa (exact for a float kappa) where |kappa| is near 1: alpha kappa^(2K)
    D0^2 / (2 sigma^2 sum_{k<K} kappa^(2k)); kappa itself elsewhere (1 - (1 - kappa) would round a tiny kappa)."""
    N = num()
    kappa, K = N.mpf(kappa), int(K)
    size = abs(kappa)
    if N.sign(size - N.mpf(1) / 2) != 1 or N.sign(2 - size) != 1:
        return cni_affine_renyi(alpha, sigma, K, D0, kappa)
    x = 1 - kappa
    return N.mpf(alpha) * gap_power(x, 2 * K) * N.mpf(D0) ** 2 / (2 * N.mpf(sigma) ** 2 * geometric_gap(x, K, power=2))


PNSGD_QUADRATIC = Family(
    name="pnsgd_quadratic",
    description="PNSGD (Feldman et al. Alg. 1) without projection on f(w; x) = (lam/2)||w - x||^2: one pass over n "
                "records, w <- w - eta (grad f(w, x_k) + N(0, sigma^2 I)); record t differs, "
                "Delta = lam ||x_t - x_t'|| (the gradient difference).",
    parameters=(_ALPHA, _SIGMA, _ETA, Parameter(lam, lam > 0, "curvature (lam-smooth, lam-strongly convex)"), _N,
                Parameter(t, t >= 1, "index of the replaced record (1-based, used at step t)", integer=True),
                Parameter(Delta, Delta >= 0, "gradient difference lam ||x_t - x_t'||")),
    facts=_FACTS | {"quadratic_loss"},
    truths={_R: exact(_pnsgd_quadratic, _HOW)},
    method=_HOW,
    constraints=(Assumption("index_in_range", t <= n, "1 <= t <= n"),),
)

def _pnsgd_concave_quadratic(alpha, sigma, eta, lam, n, t, Delta):
    """PNSGD on -(lam/2)||w - x||^2: the same Gaussian law with c = 1 + eta lam (the gap x = -eta lam)."""
    return _pnsgd_quadratic(alpha, sigma, eta, -num().mpf(lam), n, t, Delta)


PNSGD_CONCAVE_QUADRATIC = Family(
    name="pnsgd_concave_quadratic",
    description="PNSGD (Feldman et al. Alg. 1) without projection on the non-convex (concave) loss f(w; x) = "
                "-(lam/2)||w - x||^2: lam-smooth and lam-weakly convex, each step expands by c = 1 + eta lam; record "
                "t differs, Delta = lam ||x_t - x_t'||. The last iterate keeps a fraction (c^2 - 1)/c^2 of record "
                "1's one-step divergence however many steps follow: no privacy amplification by iteration for "
                "non-convex losses (Annamalai 2024), exactly.",
    parameters=(_ALPHA, _SIGMA, _ETA, Parameter(lam, lam > 0, "curvature magnitude (the loss is concave)"), _N,
                Parameter(t, t >= 1, "index of the replaced record (1-based, used at step t)", integer=True),
                Parameter(Delta, Delta >= 0, "gradient difference lam ||x_t - x_t'||")),
    facts=frozenset({"replace_one_fixed_index", "unconstrained", "smooth", "nonconvex", "quadratic_loss"}),
    truths={_R: exact(_pnsgd_concave_quadratic, _HOW)},
    method=_HOW,
    constraints=(Assumption("index_in_range", t <= n, "1 <= t <= n"),),
)

PNSGD_LINEAR = Family(
    name="pnsgd_linear",
    description="PNSGD without projection on linear losses f(w; x) = <w, x>, ||x|| <= L, with x_t = L e_1 vs "
                "-L e_1: L-Lipschitz and beta-smooth for every beta > 0; the extremal instance at t = 1.",
    parameters=(_ALPHA, _SIGMA, _ETA, _N,
                Parameter(t, t >= 1, "index of the replaced record", integer=True),
                Parameter(L, L > 0, "Lipschitz constant (||x|| <= L)")),
    facts=_FACTS | {"linear_loss"},
    truths={_R: exact(lambda alpha, sigma, eta, n, t, L: pnsgd_renyi(alpha, sigma, int(n), int(t), 2 * L, 1), _HOW)},
    method=_HOW,
    constraints=(Assumption("index_in_range", t <= n, "1 <= t <= n"),),
)

PNMSGD_QUADRATIC = Family(
    name="pnmsgd_quadratic",
    description="Multi-epoch PNSGD (Feldman et al. Alg. 2): n passes in a fixed order over n records on "
                "(lam/2)||w - x||^2 without projection; record i differs, Delta = lam ||x_i - x_i'||.",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)), _SIGMA, _ETA,
                Parameter(lam, lam > 0, "curvature"), _N,
                Parameter(i, i >= 1, "index of the replaced record", integer=True),
                Parameter(Delta, Delta >= 0, "gradient difference lam ||x_i - x_i'||"),
                Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP", quantities=(_DP,))),
    facts=_FACTS | {"quadratic_loss"},
    truths={_R: exact(_pnmsgd_quadratic, _HOW),
            # equal-covariance Gaussian pair: R_2 = mu^2, mu the Mahalanobis distance of the means
            _DP: exact(lambda sigma, eta, lam, n, i, Delta, delta: gaussian_dp_epsilon(delta, num().sqrt(
                _pnmsgd_quadratic(2, sigma, eta, lam, n, i, Delta))), "tight eps(delta) of the Gaussian "
                "output pair (Balle-Wang), 50 digits", arb_first=False)},
    method=_HOW,
    constraints=(Assumption("index_in_range", i <= n, "1 <= i <= n"),),
)

CNI_AFFINE = Family(
    name="cni_affine",
    description="Contractive noisy iteration X_{k+1} = kappa X_k + b + N(0, sigma^2 I) (same maps for both runs) "
                "from two starts at distance D0; kappa = 1 is the identity map (the extremal case).",
    parameters=(_ALPHA, Parameter(sigma, sigma > 0, "std of the noise added after each map"),
                Parameter(K, K >= 1, "number of iterations", integer=True),
                Parameter(D0, D0 >= 0, "||x_0 - x_0'||"),
                Parameter(kappa, sp.true, "slope of the affine map (contractive iff |kappa| <= 1)")),
    facts=frozenset({"cni", "gaussian_noise"}),
    truths={_R: exact(_cni_affine, _HOW)},
    method=_HOW,
)
