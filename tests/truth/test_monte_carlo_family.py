"""monte_carlo_renyi: a user's simulation of the last noisy step becomes an estimated Rényi truth whose interval
covers the exact value on a Gaussian instance, never certifies a violation, and rejects malformed simulations."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from verify.errors import ParameterError
from verify.families import monte_carlo_renyi
from verify.model import Family, Parameter, Quantity
from verify.results import Method


def _shifted(rng, chains, shift, s):
    """Pre-noise states N(0, 1) shared by both datasets, D' shifted: the released laws are N(0, 1 + s^2) and
    N(shift, 1 + s^2), so R_alpha = alpha shift^2 / (2 (1 + s^2))."""
    state = rng.standard_normal(chains)
    return state, state + shift, s


@pytest.mark.parametrize(("alpha", "shift", "s"), [(2.0, 0.5, 1.0), (4.0, 1.0, 2.0)])
def test_the_interval_covers_the_exact_gaussian_value(alpha, shift, s):
    truth = monte_carlo_renyi(_shifted, replicates=8, chains=400)(alpha=alpha, seed=3, shift=shift, s=s)
    exact = alpha * shift**2 / (2 * (1 + s * s))
    assert truth.method is Method.MONTE_CARLO and truth.enclose is None
    assert truth.lower <= exact <= truth.upper
    assert truth.upper - truth.lower < 0.5 * exact
    again = monte_carlo_renyi(_shifted, replicates=8, chains=400)(alpha=alpha, seed=3, shift=shift, s=s)
    assert again == truth  # the same seed, the same estimate


def test_malformed_simulations_and_settings_are_named():
    with pytest.raises(ParameterError, match="replicates"):
        monte_carlo_renyi(_shifted, replicates=1)
    bad = monte_carlo_renyi(lambda rng, chains, s: (np.zeros(chains), np.zeros(chains - 1), s), chains=10)
    with pytest.raises(ParameterError, match="centres per dataset"):
        bad(alpha=2.0, seed=0, s=1.0)


def test_an_estimated_family_never_reports_a_counterexample(verify_register):
    from verify.testing import falsify_outcome

    shift, s, alpha = (sp.Symbol(n, positive=True) for n in ("shift", "s", "alpha"))
    seed = sp.Symbol("seed", integer=True, nonnegative=True)
    fam = Family(name="toy_mc_shift", description="N(0, 1 + s^2) vs N(shift, 1 + s^2) by simulation",
                 parameters=(Parameter(alpha, alpha > 1, "order"), Parameter(shift, shift < 3, "shift"),
                             Parameter(s, s < 3, "noise"), Parameter(seed, seed >= 0, "seed", integer=True)),
                 facts=frozenset(), truths={Quantity.RENYI: monte_carlo_renyi(_shifted, replicates=4, chains=200)},
                 method="simulation", estimated=True)
    verify_register(fam)
    outcome = falsify_outcome("alpha*shift**2/(20*(1 + s**2))", "toy_mc_shift", max_examples=8, budget_s=120,
                              defaults={"seed": 0})
    assert outcome.counterexample is None and outcome.uncertified + outcome.undecided > 0


def test_the_readme_example_runs_and_stays_under_the_composition_bound(monkeypatch):
    """README's Monte-Carlo family: each step moves the update by at most 2 eta C, so K steps give at most
    K alpha (2 eta C)^2 / (2 s^2) (composition); the estimate's interval must not lie above it."""
    import re
    from pathlib import Path

    import verify.families as families

    monkeypatch.setattr(families, "FAMILIES", dict(families.FAMILIES))
    text = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "own-family.md").read_text()
    code = re.search(r"<!-- monte-carlo-example -->\n```python\n(.*?)```", text, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "own-family.md", "exec"), scope)  # noqa: S102 - the project's own docs
    truth = scope["CLIPPED"].truth("renyi", alpha=2, eta=0.5, s=1.0, C=0.5, K=5, seed=0)
    assert 0 < truth.lower <= truth.value <= truth.upper <= 5 * 2 * (2 * 0.5 * 0.5) ** 2 / 2
