"""Gaussian pairs for the shifted Rényi divergence lemmas of Feldman et al. 2018 (Lemmas 20, 21)."""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.symbols import alpha, db, gap, kappa, s, sigma, z
from verify.truth.numbers import extra_precision, num
from verify.truth.pnsgd_gaussian import shifted_renyi_gaussian

_Q = Quantity.SHIFTED_RENYI
_HOW = "closed form alpha max(0, gap - z)^2/(2 var) of the shifted divergence of equal-variance Gaussians"
_COMMON = (Parameter(alpha, alpha > 1, "Rényi order"), Parameter(s, s > 0, "std of mu = N(gap, s^2), nu = N(0, s^2)"),
           Parameter(gap, gap >= 0, "distance between the means of mu and nu"),
           Parameter(z, z >= 0, "shift z of D^(z)"))

SHIFT_REDUCTION_GAUSSIAN = Family(
    name="shift_reduction_gaussian",
    description="mu = N(gap, s^2), nu = N(0, s^2), zeta = N(0, sigma^2); the quantity is "
                "D_alpha^(z)(mu * zeta || nu * zeta) (Lemma 20's left side).",
    parameters=(*_COMMON, Parameter(sigma, sigma > 0, "std of the convolving noise zeta")),
    facts=frozenset({"gaussian_noise"}),
    truths={_Q: exact(lambda alpha, s, gap, z, sigma: shifted_renyi_gaussian(alpha, gap, s**2 + sigma**2, z), _HOW)},
    method=_HOW,
)


def _contraction(alpha, s, gap, z, kappa, db):
    """alpha max(0, |kappa gap + db| - (z + |db|))^2 / (2 kappa^2 s^2): the excess of the image's mean gap over the
    shift is a difference of nearly equal sums where z + |db| ~ |kappa gap + db|, so it is formed exactly (a product
    and sums of float inputs, held exactly at 4400 extra bits: the binary exponents of doubles span < 4300) and
    rounded once."""
    N = num()
    with extra_precision(4400):
        excess = N.maximum(abs(kappa * gap + db) - abs(db) - z, N.mpf(0))
    return alpha * excess**2 / (2 * kappa**2 * s**2)


CONTRACTION_GAUSSIAN = Family(
    name="contraction_gaussian",
    description="X ~ N(gap, s^2), X' ~ N(0, s^2), psi(x) = kappa x + db, psi'(x) = kappa x (sup |psi - psi'| = |db|); "
                "the quantity is D_alpha^(z + |db|)(psi(X) || psi'(X')) (Lemma 21's left side).",
    parameters=(*_COMMON, Parameter(kappa, sp.true, "slope of both maps"), Parameter(db, sp.true, "offset psi - psi'")),
    facts=frozenset(),
    truths={_Q: exact(_contraction, _HOW)},
    method=_HOW,
    constraints=(Assumption("nondegenerate", sp.Ne(kappa, 0), "kappa != 0 (the image law is not a point mass)"),),
)
