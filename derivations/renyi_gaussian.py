"""SymPy derivation of the Rényi divergence between two 1-D Gaussians by completing the square.

R_alpha(P || Q) = 1/(alpha - 1) * log Int p(x)^alpha q(x)^(1 - alpha) dx,   P = N(mu1, v1), Q = N(mu2, v2).

The integrand is exp(-a x^2 + b x + c0) with a = mix / (2 v1 v2), mix = alpha v2 + (1 - alpha) v1. For mix > 0
the Gaussian integral (itself checked with sympy.integrate) gives the closed form
    R = alpha (mu1 - mu2)^2 / (2 mix) - log(mix / (v1^(1-alpha) v2^alpha)) / (2 (alpha - 1)),
which is the expression implemented in verify/truth/gaussian.py (`renyi_gaussian_1d`, `renyi_gaussian`).
For mix <= 0 the exponent is not decaying (a <= 0) and the integral diverges: R = +inf.

Run ``python derivations/renyi_gaussian.py`` for a summary; import the functions for the expressions.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

x = sp.Symbol("x", real=True)
mu1, mu2 = sp.symbols("mu1 mu2", real=True)
v1, v2 = sp.symbols("v1 v2", positive=True)
alpha = sp.Symbol("alpha", positive=True)  # alpha > 1 throughout
mix = sp.Symbol("mix", positive=True)  # alpha*v2 + (1 - alpha)*v1, assumed > 0 (finite case)


def gaussian_pdf(mu, v):
    return sp.exp(-((x - mu) ** 2) / (2 * v)) / sp.sqrt(2 * sp.pi * v)


@cache
def gaussian_integral_formula():
    """Int exp(-a x^2 + b x + c0) dx = sqrt(pi/a) exp(b^2/(4a) + c0) for a > 0, checked by sympy.integrate."""
    a = sp.Symbol("a", positive=True)
    b, c0 = sp.symbols("b c0", real=True)
    direct = sp.integrate(sp.exp(-a * x**2 + b * x + c0), (x, -sp.oo, sp.oo))
    formula = sp.sqrt(sp.pi / a) * sp.exp(b**2 / (4 * a) + c0)
    assert sp.simplify(direct - formula) == 0, direct
    return a, b, c0, formula


@cache
def exponent_coefficients():
    """Coefficients (a, b, c0): log(p^alpha q^(1-alpha)) = -a x^2 + b x + c0 + (log of the normalisers)."""
    expo = sp.expand(-alpha * (x - mu1) ** 2 / (2 * v1) - (1 - alpha) * (x - mu2) ** 2 / (2 * v2))
    poly = sp.Poly(expo, x)
    assert poly.degree() == 2
    a = sp.simplify(-poly.coeff_monomial(x**2))
    b = sp.simplify(poly.coeff_monomial(x))
    c0 = sp.simplify(poly.coeff_monomial(1))
    # a = mix/(2 v1 v2): the integral converges iff mix > 0
    assert sp.simplify(a - (alpha * v2 + (1 - alpha) * v1) / (2 * v1 * v2)) == 0
    # completing the square: -a x^2 + b x + c0 == -a (x - b/(2a))^2 + b^2/(4a) + c0
    assert sp.simplify(-a * (x - b / (2 * a)) ** 2 + b**2 / (4 * a) + c0 - expo) == 0
    return a, b, c0


@cache
def log_chernoff():
    """log Int p^alpha q^(1-alpha) dx, in terms of (mu1, v1, mu2, v2, alpha), valid where mix > 0."""
    a_s, b_s, c_s, formula = gaussian_integral_formula()
    a, b, c0 = exponent_coefficients()
    integral_of_exp = formula.subs({a_s: a, b_s: b, c_s: c0}, simultaneous=True)
    normaliser = (2 * sp.pi * v1) ** (-alpha / 2) * (2 * sp.pi * v2) ** (-(1 - alpha) / 2)
    # sanity: the normalisers are exactly those of the two densities raised to alpha and 1 - alpha
    integrand = gaussian_pdf(mu1, v1) ** alpha * gaussian_pdf(mu2, v2) ** (1 - alpha)
    ratio = sp.simplify(sp.powsimp(sp.expand_power_base(
        integrand / (normaliser * sp.exp(-a * x**2 + b * x + c0)), force=True), force=True))
    assert ratio == 1 or sp.simplify(sp.expand_log(sp.log(ratio), force=True)) == 0, ratio
    return sp.expand_log(sp.log(normaliser * integral_of_exp), force=True)


@cache
def renyi_derived():
    """R_alpha derived by integration, written with mix = alpha v2 + (1-alpha) v1 (mix > 0)."""
    r = log_chernoff() / (alpha - 1)
    return sp.simplify(r)


def renyi_closed_form(mu_p, var_p, mu_q, var_q, a):
    """The closed form used in verify/truth/gaussian.py (transcribed, 1-D)."""
    mx = a * var_q + (1 - a) * var_p
    logdet = sp.log(mx) - (1 - a) * sp.log(var_p) - a * sp.log(var_q)
    return a * (mu_p - mu_q) ** 2 / (2 * mx) - logdet / (2 * (a - 1))


@cache
def check_all():
    """Assert that the derived divergence equals the implemented closed form (for mix > 0)."""
    out = {}
    derived = renyi_derived()
    closed = renyi_closed_form(mu1, v1, mu2, v2, alpha)
    # express v2 through mix (> 0) so that log(mix) is a log of a positive symbol and logs can be expanded
    v2_of_mix = sp.solve(sp.Eq(mix, alpha * v2 + (1 - alpha) * v1), v2)[0]
    diff = sp.expand_log(sp.simplify((derived - closed).subs(v2, v2_of_mix)), force=True)
    out["integral == closed form in verify/truth/gaussian.py"] = sp.simplify(diff) == 0
    # equal variances: alpha (mu1-mu2)^2 / (2 v)  (Mironov Prop. 7 / inventory P0.3)
    out["equal variances: alpha dmu^2/(2v)"] = (
        sp.simplify(closed.subs(v2, v1) - alpha * (mu1 - mu2) ** 2 / (2 * v1)) == 0)
    # divergence exactly where the x^2 coefficient stops being negative
    a, _, _ = exponent_coefficients()
    out["x^2 coefficient of the log-integrand is -mix/(2 v1 v2)"] = (
        sp.simplify(a - (alpha * v2 + (1 - alpha) * v1) / (2 * v1 * v2)) == 0)
    # alpha -> 1 limit gives KL(P||Q)
    kl = sp.log(sp.sqrt(v2 / v1)) + (v1 + (mu1 - mu2) ** 2) / (2 * v2) - sp.Rational(1, 2)
    lim = sp.limit(closed, alpha, 1)
    out["alpha -> 1 limit is KL"] = sp.simplify(sp.expand_log(lim - kl, force=True)) == 0
    for name, ok in out.items():
        assert ok, name
    return out


def summary() -> str:
    a, b, c0 = exponent_coefficients()
    lines = ["1-D Gaussian Rényi divergence by completing the square:",
             f"  log(p^alpha q^(1-alpha)) = -a x^2 + b x + c0 with a = {sp.factor(a)}",
             f"  R_alpha (derived) = {renyi_derived()}",
             f"  which equals        {renyi_closed_form(mu1, v1, mu2, v2, alpha)}",
             "  (mix = alpha*v2 + (1 - alpha)*v1 > 0; R = +oo when mix <= 0)"]
    lines += [f"  [ok] {name}" for name in check_all()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
