"""Seed 001 (Feldman, Mironov, Talwar, Thakurta 2018): formulas and exact truths against independent numbers
(shared/research/seed-001.md sections 3.1, 3.2, 3.6 and hand derivations written here)."""

import math

import pytest

import verify
from verify import CATALOG, Verdict
from verify.families import family


def truth(family, **p):
    return verify.family(family).truth(**p).value


@pytest.mark.parametrize(("t", "c", "expected"), [
    (1, 0.9, 0.1299), (2, 0.9, 0.1603), (5, 0.9, 0.3017), (9, 0.9, 0.7008), (10, 0.9, 0.8652),
    (5, 0.5, 0.0029), (9, 0.5, 0.7500), (10, 0.5, 3.0000), (10, 0.0, 4.0), (9, 0.0, 0.0),
])
def test_pnsgd_table(t, c, expected):
    """Research §3.1 grid: alpha = 2, L = 1 (Delta = 2), sigma = 1, n = 10."""
    assert truth("pnsgd_quadratic", alpha=2, sigma=1, eta=1 - c, lam=1.0, n=10, t=t, Delta=2) == pytest.approx(
        expected, abs=6e-5)


def test_pnsgd_by_direct_sum():
    """Independent: w_n = c^n w_0 + eta lam sum c^(n-k) x_k - eta sum c^(n-k) Z_k, summed term by term."""
    alpha, sigma, eta, lam, n, t, dx = 3.0, 0.7, 0.5, 1.2, 10, 4, 0.35
    c = 1 - eta * lam
    gap = eta * lam * c ** (n - t) * dx
    var = sum((eta * sigma * c ** (n - k)) ** 2 for k in range(1, n + 1))
    assert truth("pnsgd_quadratic", alpha=alpha, sigma=sigma, eta=eta, lam=lam, n=n, t=t, Delta=lam * dx) == (
        pytest.approx(alpha * gap**2 / (2 * var), rel=1e-12))


@pytest.mark.parametrize(("n", "i", "c", "expected"), [(5, 1, 0.999999, 4.0), (5, 5, 0.0, 4.0), (5, 5, 0.5, 3.1967),
                                                       (10, 10, 0.0, 4.0)])
def test_pnmsgd_table(n, i, c, expected):
    """Research §3.2: alpha = 2, L = sigma = 1."""
    assert truth("pnmsgd_quadratic", alpha=2, sigma=1, eta=1 - c, lam=1.0, n=n, i=i, Delta=2) == pytest.approx(
        expected, abs=1e-4)


def test_theorem35_bounds():
    assert CATALOG["feldman2018.theorem35.proof"].value(dict(alpha=2, L=1, sigma=1, n=5, i=5)) == pytest.approx(7.2)
    assert CATALOG["feldman2018.theorem35"].value(dict(alpha=2, L=1, sigma=1)) == 8


def test_identity_cni_is_exactly_theorem1_corrected():
    for K in (1, 3, 40):
        exact = truth("cni_affine", alpha=2.5, sigma=0.8, K=K, D0=1.7, kappa=1.0)
        assert exact == pytest.approx(2.5 * 1.7**2 / (2 * K * 0.8**2), rel=1e-14)


def test_theorem1_printed_fails_only_beyond_unit_distance():
    ok = verify.check("feldman2018.theorem1", alpha=2, sigma=1, K=3, D0=0.5, kappa=1.0)
    bad = verify.check("feldman2018.theorem1", alpha=2, sigma=1, K=3, D0=2.0, kappa=1.0)
    assert ok.verdict is Verdict.HOLDS and bad.verdict is Verdict.VIOLATED
    assert bad.bound == pytest.approx(2 * 2.0 / 6) and bad.truth.value == pytest.approx(2 * 4.0 / 6)


def test_lemma20_equality_at_optimal_shift():
    """LHS alpha D^2/(2(s^2+sigma^2)); at a* = D sigma^2/(s^2+sigma^2) the right side equals it (research §3.6)."""
    alpha, s, sigma, D = 3.0, 0.6, 1.3, 2.0
    lhs = alpha * D**2 / (2 * (s**2 + sigma**2))
    a_star = D * sigma**2 / (s**2 + sigma**2)
    rhs = CATALOG["feldman2018.lemma20"].value(dict(alpha=alpha, gap=D, z=0.0, a=a_star, s=s, sigma=sigma))
    assert float(rhs) == pytest.approx(lhs, rel=1e-14)
    assert truth("shift_reduction_gaussian", alpha=alpha, s=s, sigma=sigma, gap=D, z=0.0) == pytest.approx(lhs)


def test_contraction_truth_by_hand():
    # psi(X) ~ N(kappa gap + db, kappa^2 s^2) vs N(0, kappa^2 s^2), shift z + |db|
    got = truth("contraction_gaussian", alpha=2, s=0.5, gap=2.0, kappa=-0.5, db=0.5, z=0.1)
    assert got == pytest.approx(2 * max(0.0, abs(-1.0 + 0.5) - 0.6) ** 2 / (2 * 0.0625))
    got = truth("contraction_gaussian", alpha=2, s=0.5, gap=2.0, kappa=0.5, db=0.5, z=0.1)
    assert got == pytest.approx(2 * (1.5 - 0.6) ** 2 / (2 * 0.0625))


def test_step_size_condition_is_necessary():
    """Research §3.1: eta*beta = 2.1, n = 2, t = 1 gives exact/bound = 1.095."""
    r = verify.check("feldman2018.theorem23.large_step", family="pnsgd_quadratic", alpha=2, sigma=1, eta=2.1,
                     lam=1.0, n=2, t=1, Delta=2.0)
    assert r.verdict is Verdict.VIOLATED
    assert r.truth.value / r.bound == pytest.approx(1.095, abs=1e-3)


def test_linear_losses_attain_theorem23_at_t1():
    r = verify.check("feldman2018.theorem23", family="pnsgd_linear", alpha=2, sigma=1.0, eta=0.3, n=7, t=1, L=1.0)
    assert r.ratio == pytest.approx(1.0, rel=1e-14) and r.verdict is Verdict.HOLDS
    assert r.truth.value == pytest.approx(2 * 2 * 1 / (7 * 1), rel=1e-14)


EXPECTED = {(t.id, a.family): a.expected for t in CATALOG.values() if t.id.startswith("feldman2018.")
            for a in t.applications if not family(a.family).expensive}  # expensive ones: test_catalog_verdicts


@pytest.mark.parametrize(("theorem_id", "family"), sorted(EXPECTED))
def test_default_grid_reproduces_expected_verdict(theorem_id, family, catalog_grid):
    result = catalog_grid[(theorem_id, family)]
    assert result.verdict is EXPECTED[(theorem_id, family)]
    assert len(result.points) >= 5
    assert not math.isnan(result.worst.margin)
