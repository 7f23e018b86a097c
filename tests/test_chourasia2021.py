"""Seed 000 (Chourasia, Ye, Shokri 2021): each encoded formula against independently computed numbers.

Reference numbers are the paper's figures as recomputed in shared/research/seed-000.md (sections 3.2, 4),
not values produced by this package.
"""

import pytest

import verify
from verify import CATALOG, AssumptionError, Verdict

FIG = dict(S=4.0, n=5000, eta=0.02, sigma=0.02)  # Figures 1 and 2


def bound(theorem_id, **values):
    return float(CATALOG[theorem_id].value(values))


@pytest.mark.parametrize(("alpha", "lam", "row"), [
    (30, 1, [1.8887, 3.0342, 4.1504, 4.5610, 4.7677]),
    (20, 1, [1.2591, 2.0228, 2.7669, 3.0407, 3.1784]),
    (10, 1, [0.6296, 1.0114, 1.3835, 1.5203, 1.5892]),
    (10, 2, [0.5057, 0.6917, 0.7853, 0.7980, 0.8000]),
    (10, 4, [0.3459, 0.3927, 0.3999, 0.4000, 0.4000]),
])
def test_corollary1_reproduces_figure1(alpha, lam, row):
    for K, expected in zip([50, 100, 200, 300, 500], row, strict=True):
        assert bound("chourasia2021.corollary1", alpha=alpha, lam=lam, K=K, **FIG) * 100 == pytest.approx(
            expected, abs=6e-5)


def test_composition_is_linear_in_alpha_and_k():
    for alpha, K in [(10, 50), (30, 100), (20, 7)]:
        assert bound("chourasia2021.composition", alpha=alpha, K=K, **FIG) == pytest.approx(8e-6 * alpha * K)
        assert bound("chourasia2021.theorem1", alpha=alpha, S_v=4 / 5000, T=0.02 * K, sigma=0.02) == (
            pytest.approx(8e-6 * alpha * K))


@pytest.mark.parametrize(("K", "cor2", "lb", "exact"), [
    (10, 0.4355, 0.2175, 0.2392),
    (50, 1.5235, 0.7585, 1.1074),
    (100, 2.0895, 1.0376, 1.8196),
    (200, 2.3780, 1.1780, 2.2939),
    (300, 2.4179, 1.1970, 2.3649),
])
def test_figure2_values(K, cor2, lb, exact):
    point = dict(alpha=30, K=K, lam=1.0, **FIG)
    assert bound("chourasia2021.corollary2", **point) * 100 == pytest.approx(cor2, abs=6e-5)
    assert bound("chourasia2021.theorem3", **point) * 100 == pytest.approx(lb, abs=6e-5)
    assert bound("chourasia2021.theorem3.exact", **point) * 100 == pytest.approx(exact, abs=6e-5)
    truth = verify.family("noisy_gd_quadratic").truth(alpha=30, K=K, lam=1.0, start_var=0.0, **FIG)
    assert truth.value * 100 == pytest.approx(exact, abs=6e-5)


@pytest.mark.parametrize(("eta", "exact0", "cor1", "cor2", "lb"), [
    (0.5, 1.79649e-2, 4.40599e-2, 3.12474e-2, 1.19191e-2),
    (0.9, 1.32000e-2, 4.74668e-2, 4.33273e-2, 1.19985e-2),
])
def test_absolute_table_at_k10(eta, exact0, cor1, cor2, lb):
    point = dict(alpha=30, K=10, lam=1.0, S=4.0, n=5000, sigma=0.02, eta=eta)
    assert bound("chourasia2021.corollary1", **point) == pytest.approx(cor1, rel=1e-5)
    assert bound("chourasia2021.corollary2", **point) == pytest.approx(cor2, rel=1e-5)
    assert bound("chourasia2021.theorem3", **point) == pytest.approx(lb, rel=1e-5)
    assert verify.check("chourasia2021.theorem3", start_var=0.0, **point).truth.value == pytest.approx(exact0, rel=1e-5)


def test_crossing_point_does_not_depend_on_alpha():
    """App. E claims larger alpha makes Corollary 1 beat composition sooner; both are linear in alpha (S6)."""
    for lam, k_cross in [(1, 159.36), (2, 79.68), (4, 39.84)]:
        for alpha in (10, 30):
            kw = dict(alpha=alpha, lam=lam, **FIG)
            lo = bound("chourasia2021.corollary1", K=k_cross - 0.05, **kw) - bound(
                "chourasia2021.composition", K=k_cross - 0.05, **kw)
            hi = bound("chourasia2021.corollary1", K=k_cross + 0.05, **kw) - bound(
                "chourasia2021.composition", K=k_cross + 0.05, **kw)
            assert lo > 0 > hi


def test_theorem3_with_corollary1_start_is_a_counterexample():
    r = verify.check("chourasia2021.theorem3.cor1_start", alpha=30, K=1, lam=1.0, **FIG)
    assert r.verdict is Verdict.VIOLATED
    assert r.params["start_var"] == pytest.approx(2 * 0.02**2)
    assert r.truth.value == pytest.approx(4.89596e-6, rel=1e-5)
    assert r.bound == pytest.approx(2.37616e-4, rel=1e-5)


def test_theorem3_beyond_eta_1_is_a_counterexample():
    a_unit = 2 * 16 / (4 * 1 * 1)
    r = verify.check("chourasia2021.theorem3.large_step", alpha=2, K=2, lam=1.0, S=4.0, n=1, sigma=1.0, eta=1.5,
                     start_var=0.0)
    assert r.verdict is Verdict.VIOLATED
    # exact (2-eta)(1-q^K)/(1+q^K) with q = -0.5, K = 2: 0.5 * 0.75 / 1.25 = 0.3 (units of A)
    assert r.truth.value == pytest.approx(0.3 * a_unit, rel=1e-12)
    assert r.bound == pytest.approx((1 - 2.718281828459045**-3) * a_unit, rel=1e-12)


def test_theorem3_refuses_a_random_start():
    with pytest.raises(AssumptionError, match="fixed_start") as err:
        verify.check("chourasia2021.theorem3", alpha=2, K=5, lam=1.0, start_var=0.5, **FIG)
    assert err.value.values == {"start_var": 0.5}


def test_corollary1_refuses_a_step_beyond_one_over_beta():
    with pytest.raises(AssumptionError, match="step_size"):
        verify.check("chourasia2021.corollary1", alpha=2, K=5, lam=2.0, S=1.0, n=1, sigma=1.0, eta=0.5)


def test_corollary1_printed_start_is_enforced():
    with pytest.raises(AssumptionError, match="start_law"):
        verify.check("chourasia2021.corollary1", alpha=2, K=5, lam=1.0, start_var=0.0, **FIG)
    verify.check("chourasia2021.corollary1.lsi_start", alpha=2, K=5, lam=1.0, start_var=0.0, **FIG)


def test_theorem4_rdp_noise_gives_asymptote_eps_prime():
    """sigma^2 = 4 alpha L^2/(lam eps' n^2) with S = 2L: Corollary 1's asymptote alpha S^2/(lam sigma^2 n^2) = eps'."""
    r = verify.check("chourasia2021.theorem4.rdp", alpha=4, eps_p=0.5, S=1.0, n=100, lam=2.0, K=100000)
    assert r.params["sigma"] ** 2 == pytest.approx(4 * 4 * 0.25 / (2 * 0.5 * 100**2))
    assert r.params["eta"] == pytest.approx(0.25)
    # exact stationary value alpha S^2 (2 - eta lam)/(4 lam sigma^2 n^2) = eps' (2 - eta lam)/4
    assert r.truth.value == pytest.approx(0.5 * (2 - 0.5) / 4, rel=1e-9)


def test_lemma6_printed_noise_term_is_twice_the_proofs():
    kw = dict(sigma=0.5, eta=0.1, lam=1.0, d=3, dist=0.0, K=10**6, beta=1.0, L=1.0)
    printed = bound("chourasia2021.lemma6", **kw)
    proof = bound("chourasia2021.lemma6.proof", E0=1.0, **kw)
    assert printed == pytest.approx(2 * 3 * 0.25)
    assert proof == pytest.approx(3 * 0.25)


EXPECTED = {t.id: t.applications[0].expected for t in CATALOG.values() if t.id.startswith("chourasia2021.")}


@pytest.mark.parametrize("theorem_id", sorted(EXPECTED))
def test_default_grid_reproduces_expected_verdict(theorem_id, catalog_grid):
    t = CATALOG[theorem_id]
    result = catalog_grid[(theorem_id, t.applications[0].family)]
    assert result.verdict is EXPECTED[theorem_id]
    assert len(result.points) >= 50
    if result.verdict is Verdict.VIOLATED:
        assert result.worst.verdict is Verdict.VIOLATED
