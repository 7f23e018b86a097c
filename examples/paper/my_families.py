"""The families the draft needs that verify does not ship: the Laplace mechanism, with its Rényi divergence in closed
form (Mironov 2017, Proposition 6), written once against verify.truth.numbers.num() so that the same formula, in Arb
balls, certifies a violation."""

import sympy as sp

from verify.families import closed_form
from verify.model import Family, Parameter, Quantity
from verify.truth.numbers import num

alpha, b = sp.symbols("alpha b", positive=True)


def laplace_renyi(alpha, b):
    """R_alpha(Lap(0, b) || Lap(1, b)) = log(alpha/(2 alpha - 1) e^{(alpha-1)/b} + (alpha-1)/(2 alpha - 1)
    e^{-alpha/b}) / (alpha - 1), sensitivity 1."""
    N = num()
    mix = alpha / (2 * alpha - 1) * N.exp((alpha - 1) / b) + (alpha - 1) / (2 * alpha - 1) * N.exp(-alpha / b)
    return N.log(mix) / (alpha - 1)


LAPLACE = Family(
    name="laplace_mechanism",
    description="the Laplace mechanism x + Lap(b) on a query of sensitivity 1: Lap(0, b) vs Lap(1, b)",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order"), Parameter(b, b > 0, "noise scale")),
    facts=frozenset({"laplace"}),
    truths={Quantity.RENYI: closed_form(laplace_renyi, "closed form (Mironov 2017, Prop. 6)")},
    method="closed form",
)
FAMILIES = (LAPLACE,)
