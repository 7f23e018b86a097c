"""Gaussian smoothing of f(w) = L ||w|| (Feldman et al. 2018, Theorem 33), exactly (verify.truth.smoothing)."""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Family, Parameter, Quantity
from verify.symbols import L, d, lam
from verify.truth.smoothing import smoothing_error, smoothness_constant

GAUSSIAN_SMOOTHED_NORM = Family(
    name="gaussian_smoothed_norm",
    description="f(w) = L ||w|| on a convex K containing 0 in R^d, smoothed as in Theorem 33's proof: "
                "f_hat(w) = E f(w + Z), Z ~ N(0, lam^2 I_d); the smoothness constant of f_hat on K (d = 1) and "
                "sup_K |f_hat - f|.",
    parameters=(Parameter(L, L > 0, "Lipschitz constant"), Parameter(lam, lam > 0, "smoothing scale lambda"),
                Parameter(d, sp.And(d >= 1, d <= 10**6), "dimension", integer=True)),
    facts=frozenset({"convex", "lipschitz"}),
    truths={Quantity.SMOOTHNESS: exact(smoothness_constant, "sqrt(2/pi) L/lam: f_hat'' = 2 L phi(w/lam)/lam"),
            Quantity.APPROX_ERROR: exact(smoothing_error, "L E||Z|| = L lam sqrt(2) Gamma((d+1)/2)/Gamma(d/2)")},
    method="closed forms (Gaussian moments), Arb enclosure",
)

FAMILIES = (GAUSSIAN_SMOOTHED_NORM,)
