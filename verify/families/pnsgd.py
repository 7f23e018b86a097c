"""One-pass and multi-epoch noisy SGD and affine contractive noisy iterations (Feldman et al. 2018):
exact Gaussian ground truth (no projection, so the output law is Gaussian)."""

from __future__ import annotations

import mpmath
import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.symbols import D0, Delta, K, L, alpha, delta, eta, i, kappa, lam, n, sigma, t
from verify.truth.gaussian import gaussian_dp_epsilon
from verify.truth.pnsgd_gaussian import cni_affine_renyi, pnmsgd_renyi, pnsgd_renyi

_R, _DP = Quantity.RENYI, Quantity.DP_EPSILON
_HOW = "closed form of the Gaussian output law, mpmath 50 digits"
_ALPHA = Parameter(alpha, alpha > 1, "Rényi order")
_SIGMA = Parameter(sigma, sigma > 0, "std of the Gaussian noise added to each gradient (iterate noise eta*sigma)")
_ETA = Parameter(eta, eta > 0, "step size")
_N = Parameter(n, n >= 1, "number of records = steps per pass", integer=True)
_FACTS = frozenset({"replace_one_fixed_index", "unconstrained", "convex", "smooth"})

PNSGD_QUADRATIC = Family(
    name="pnsgd_quadratic",
    description="PNSGD (Feldman et al. Alg. 1) without projection on f(w; x) = (lam/2)||w - x||^2: one pass over n "
                "records, w <- w - eta (grad f(w, x_k) + N(0, sigma^2 I)); record t differs, "
                "Delta = lam ||x_t - x_t'|| (the gradient difference).",
    parameters=(_ALPHA, _SIGMA, _ETA, Parameter(lam, lam > 0, "curvature (lam-smooth, lam-strongly convex)"), _N,
                Parameter(t, t >= 1, "index of the replaced record (1-based, used at step t)", integer=True),
                Parameter(Delta, Delta >= 0, "gradient difference lam ||x_t - x_t'||")),
    facts=_FACTS | {"quadratic_loss"},
    truths={_R: exact(lambda alpha, sigma, eta, lam, n, t, Delta: pnsgd_renyi(
        alpha, sigma, int(n), int(t), Delta, 1 - eta * lam), _HOW)},
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
    truths={_R: exact(lambda alpha, sigma, eta, lam, n, i, Delta: pnmsgd_renyi(
        alpha, sigma, int(n), int(i), Delta, 1 - eta * lam), _HOW),
            # equal-covariance Gaussian pair: R_2 = mu^2, mu the Mahalanobis distance of the means
            _DP: exact(lambda sigma, eta, lam, n, i, Delta, delta: gaussian_dp_epsilon(delta, mpmath.sqrt(
                pnmsgd_renyi(2, sigma, int(n), int(i), Delta, 1 - eta * lam))), "tight eps(delta) of the Gaussian "
                "output pair (Balle-Wang), 50 digits")},
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
    truths={_R: exact(lambda alpha, sigma, K, D0, kappa: cni_affine_renyi(alpha, sigma, int(K), D0, kappa), _HOW)},
    method=_HOW,
)
