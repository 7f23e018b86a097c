"""The real-ball path of the mixture integrand (`mixture_arb._real_density`): on generated mixtures and real balls its
density ball contains an independent 200-digit mpmath density, and is bit for bit the real part of the acb sum that
`_log_density` takes the logarithm of (so the enclosures are those of the all-acb integrand)."""

import mpmath
from flint import acb, arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.truth import mixture_arb

_FLOATS = st.floats(-8, 8, allow_nan=False)
_MIXTURES = st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.lists(st.floats(1e-6, 1), min_size=k, max_size=k),
    st.lists(_FLOATS, min_size=k, max_size=k),
    st.lists(st.floats(0.05, 4), min_size=k, max_size=k)))
_RADII = st.sampled_from([0.0, 1e-30, 1e-12, 1e-3, 0.5, 20.0])


def _mp_density(mix, x: float) -> mpmath.mpf:
    """sum_i w_i N(x; m_i, s_i^2) with the weights normalised, at 200 digits."""
    with mpmath.workdps(200):
        weights, means, sds = ([mpmath.mpf(v) for v in part] for part in mix)
        total = mpmath.fsum(weights)
        return mpmath.fsum(w / total * mpmath.npdf(x, m, s) for w, m, s in zip(weights, means, sds, strict=True))


def _same_ball(u, v) -> bool:
    return u.mid() == v.mid() and u.rad() == v.rad()


@settings(max_examples=150, deadline=None)
@given(mix=_MIXTURES, x=st.floats(-60, 60, allow_nan=False), radius=_RADII, prec=st.sampled_from([64, 128, 512]))
def test_real_density_matches_acb_and_mpmath(mix, x, radius, prec):
    with ctx.workprec(prec):
        terms = mixture_arb._density_terms(mixture_arb._normalised(mix))
        ball = arb(x, radius)
        real = mixture_arb._real_density(terms, ball)
        total = acb(0)  # the sum `_log_density` takes the logarithm of, written out in acb
        for coef, m, neg_inv_two_var in terms:
            total += coef * ((acb(ball) - m) ** 2 * neg_inv_two_var).exp()
        assert total.imag.is_zero() and _same_ball(real, total.real)
        if radius == 0.0:
            assert real.overlaps(arb(mpmath.nstr(_mp_density(mix, x), 190), 1e-185))
            if real > 0:
                log_acb = mixture_arb._log_density(terms, acb(ball), False)
                assert log_acb.imag.is_zero() and _same_ball(real.log(), log_acb.real)
