"""The basic mechanisms' families (verify/families/basic.py) against references computed here, independently.

No reference uses verify's formulas. Each is computed from the mechanism's definition with mpmath at 60 digits or
more. On finite sets and the two lattices: Rényi divergences by summing p^alpha q^(1 - alpha) over the support,
delta(eps) by summing max(0, p - e^eps q) in both orders, the trade-off function by the Neyman-Pearson construction
(outcomes rejected in decreasing likelihood ratio). For the Laplace and Gaussian mechanisms: the published Rényi
closed forms, delta(eps) as P(S) - e^eps Q(S) on the loss's level set S by the laws' CDFs, and the Neyman-Pearson
test at an explicit quantile; these are themselves held to mp.quad of the definitions. eps(delta) goes through the
reference delta: as delta(eps) decreases, the true eps lies in [lo, hi] exactly when delta(hi) <= delta <=
delta(lo). Where a reference's own terms cancel it is evaluated again with twice the digits until two evaluations
agree (`settled`). Every check asserts that the truth's interval holds the reference and that its Arb enclosure
(truth.enclose) does, the latter up to the reference's own accuracy (1e-30 relative). Any 2x- or 10x-too-small
bound is refuted by the falsifier with a certified VIOLATED verdict, and the exact one is not.
"""

from __future__ import annotations

import math
import sys

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from verify.errors import ResourceLimitError, VerifyError
from verify.families import family
from verify.model import quantity_range
from verify.quantities import Quantity
from verify.testing.falsify import falsify_outcome
from verify.truth.basic_mechanisms import MAX_ROOT_MU
from verify.truth.numbers import NotEnclosable

DPS = 60
REL = mp.mpf(10) ** -30  # the references' own accuracy, granted to the Arb enclosures


ZERO_DPS = 1000  # a reference that is 0 is taken as 0 only when it stays 0 up to this many digits


def settled(fn, dps: int = DPS, top: int = 4000):
    """fn() at dps digits, then at twice as many until two evaluations agree to 40 digits. A 0 is not settled until
    ZERO_DPS digits (or `top`): a sum 1 + 1e-124 rounds to 1 at 60 digits and its logarithm to 0 at every precision
    short of the one its small term needs."""
    previous = None
    while dps <= top:
        with mp.workdps(dps):
            value = +fn()
        if previous is not None and abs(value - previous) <= abs(value) * mp.mpf(10) ** -40:
            if value != 0 or 2 * dps > min(top, ZERO_DPS):
                return value
        previous, dps = value, 2 * dps
    if previous == 0:
        return previous
    raise AssertionError(f"reference did not settle: {previous}")


def _mp(x) -> mp.mpf:
    """An exact float or an enclosure's end (an exact Arb number) as an mpmath number, exactly: from its mantissa and
    exponent (never a Fraction: an end of 1e-10979094959 has a 36-gigabit denominator)."""
    if isinstance(x, float):
        return mp.mpf(x)
    man, exp = (int(v) for v in x.mid().man_exp())
    with mp.workprec(max(man.bit_length(), 1) + 10):
        return mp.ldexp(mp.mpf(man), exp)


def holds(truth, reference) -> None:
    """The truth's interval and its Arb enclosure contain the reference (a float truth that under- or overflowed
    is the reference rounded)."""
    ref = mp.mpf(reference)
    if ref == 0 or mp.mpf(1e-300) < abs(ref) < mp.mpf(1e300):
        assert truth.lower <= ref <= truth.upper, (truth, ref)
    else:  # beyond the float range, or subnormal: the float is the reference rounded
        assert truth.value == float(ref), (truth, ref)
    enc = truth.enclose(128)
    lo, hi = _mp(enc.lower), _mp(enc.upper)
    slack = abs(ref) * REL
    assert lo - slack <= ref <= hi + slack, (enc.text(), ref)


def epsilon_holds(truth, delta_of, target: float) -> None:
    """eps(delta) checked through the reference delta(eps): at the interval's ends (and the enclosure's)."""
    target = mp.mpf(target)
    enc = truth.enclose(128)
    for lo, hi, slack in ((mp.mpf(truth.lower), mp.mpf(truth.upper), 0),
                          (_mp(enc.lower), _mp(enc.upper), REL)):
        assert delta_of(max(hi, 0)) <= target * (1 + slack), ("delta(upper) > delta", truth, hi)
        if lo > 0:
            assert delta_of(lo) >= target * (1 - slack), ("delta(lower) < delta", truth, lo)


# ---- references ---------------------------------------------------------------------------------------------------


def _flip(outcomes):
    return [(c, q, p) for c, p, q in outcomes]


def pair_renyi(outcomes, alpha):
    """max over both orders of log(sum c p^alpha q^(1 - alpha))/(alpha - 1), outcomes (count, p, q)."""
    a = mp.mpf(alpha)

    def one(o):
        return mp.log(mp.fsum(c * p**a * q ** (1 - a) for c, p, q in o)) / (a - 1)

    return max(one(outcomes), one(_flip(outcomes)))


def pair_delta(outcomes, eps):
    grow = mp.exp(eps)
    return max(mp.fsum(c * max(0, p - grow * q) for c, p, q in o) for o in (outcomes, _flip(outcomes)))


def pair_tradeoff(outcomes, x):
    """Neyman-Pearson: reject the first law on the outcomes of largest q/p first, the last one in part; the smaller
    of both orders."""
    x = mp.mpf(x)

    def one(o):
        ranked, rejected = sorted(o, key=lambda t: t[2] / t[1], reverse=True), mp.mpf(0)
        for i, (c, p, q) in enumerate(ranked):
            if rejected + c * p <= x:
                rejected += c * p
                continue
            kept = mp.fsum(c2 * q2 for c2, _, q2 in ranked[i + 1:])  # summed, not 1 - rejected: beta ~ 1e-3000
            return kept + (c * p - (x - rejected)) / p * q
        return mp.mpf(0)

    return min(one(outcomes), one(_flip(outcomes)))


def rr_outcomes(eps0, k=2):
    """k-ary randomized response on inputs 0 and 1: the outputs 0, 1 and the k - 2 others."""
    top = mp.exp(eps0)
    z = top + k - 1
    rest = [(k - 2, 1 / z, 1 / z)] if k > 2 else []
    return [(1, top / z, 1 / z), (1, 1 / z, top / z), *rest]


def em_outcomes(eps0, k, u0, drop):
    """The exponential mechanism over scores (u0, 0, ..., 0) on D and (u0 + 1, -drop, ...) on D'."""
    a, u0 = mp.mpf(eps0) / 2, mp.mpf(u0)  # u0 + 1 in mpmath: in floats it rounds (1 + 1e-13)
    weights_d = [mp.exp(a * u0), mp.exp(0)]
    weights_e = [mp.exp(a * (u0 + 1)), mp.exp(-a * drop)]
    zd, ze = weights_d[0] + (k - 1) * weights_d[1], weights_e[0] + (k - 1) * weights_e[1]
    return [(1, weights_d[0] / zd, weights_e[0] / ze), (k - 1, weights_d[1] / zd, weights_e[1] / ze)]


def lattice_outcomes(log_weight, Delta: int, reach: int, more: tuple[int, ...] = ()):
    """P(x) ~ exp(log_weight(x)) on the integers, normalised over |x| <= reach (the rest is below 10^-(dps + 30)),
    against it shifted by Delta: the outcomes |x| <= reach, |x - Delta| <= reach and the windows |x - m| <= reach
    around the points `more` (where a quantity's mass lies beyond the laws' own: a Rényi sum at alpha = 1e4, the
    hockey stick at eps = 8664)."""
    z = mp.fsum(mp.exp(log_weight(x)) for x in range(-reach, reach + 1))
    xs = sorted({x for m in (0, Delta, *more) for x in range(m - reach, m + reach + 1)})
    return [(1, mp.exp(log_weight(x)) / z, mp.exp(log_weight(x - Delta)) / z) for x in xs]


def dlap_outcomes(Delta, scale):
    reach = int(scale * (mp.mp.dps + 30) * math.log(10)) + 2
    return lattice_outcomes(lambda x: -abs(x) / mp.mpf(scale), int(Delta), reach)


def dg_outcomes(Delta, sigma, alpha=None, eps=None):
    """The discrete Gaussian pair; with alpha, also the windows where P^alpha Q^(1 - alpha) peaks in either order
    ((1 - alpha) Delta and alpha Delta); with eps, where the hockey stick's first terms lie (the x of loss eps)."""
    reach = int(sigma * math.sqrt(2 * (mp.mp.dps + 30) * math.log(10))) + 2
    more = []
    if alpha is not None:
        more += [round((1 - alpha) * Delta), round(alpha * Delta)]
    if eps is not None and Delta:
        edge = Delta / 2 - sigma**2 * eps / Delta
        more += [math.floor(edge), math.ceil(Delta - edge)]
    return lattice_outcomes(lambda x: -mp.mpf(x) ** 2 / (2 * mp.mpf(sigma) ** 2), int(Delta), reach, tuple(more))


def laplace_cdf(x, mean, scale):
    """P(Lap(mean, scale) <= x)."""
    x = mp.mpf(x) - mean
    return mp.exp(x / scale) / 2 if x < 0 else 1 - mp.exp(-x / scale) / 2


def laplace_upper_quantile(x, scale):
    """c with P(Lap(0, scale) > c) = x (1 - x exact for a float x)."""
    x = mp.mpf(x)
    return -scale * mp.log(2 * x) if x <= 0.5 else scale * mp.log(2 * (1 - x))


def normal_upper_quantile(x):
    """z with P(N(0, 1) > z) = x: Newton on log Phi(-z) = log x (concave in z: monotone steps) for x <= 1/2, -z(1 - x)
    above; relative accuracy in the far tail (x = 1e-300), unlike sqrt(2) erfinv(1 - 2x)."""
    x = mp.mpf(x)
    if x > 0.5:
        return -normal_upper_quantile(1 - x)
    target, z = mp.log(x), mp.sqrt(-2 * mp.log(2 * x))
    for _ in range(400):
        tail = mp.ncdf(-z)
        step = (mp.log(tail) - target) * tail / -mp.npdf(z)
        z -= step
        if abs(step) <= (abs(z) + 1) * mp.eps * 16:
            return z
    raise AssertionError(f"no quantile of {x}")


def laplace_reference(quantity: str, level, Delta, scale):
    """Lap(0, b) against Lap(Delta, b), t = Delta/b, from the definitions (the pair is its own mirror image under x ->
    Delta - x, so both orders agree). Rényi: Mironov 2017, Table 2, as printed (the integral of p^alpha q^(1 - alpha)
    over x < 0, [0, Delta], x > Delta: e^((alpha - 1) t)/2 + (e^((alpha - 1) t) - e^(-alpha t))/(2(2 alpha - 1)) +
    e^(-alpha t)/2). delta(eps): the loss (|x - Delta| - |x|)/b exceeds eps exactly on x < c = (Delta - eps b)/2, so
    delta = P(X < c) - e^eps Q(X < c) by the CDFs (0 for c <= 0). Trade-off: q/p does not decrease in x, so the most
    powerful test rejects P on x > c with P(X > c) = type-I error, and beta = Q(X <= c)."""
    b, D = mp.mpf(scale), mp.mpf(Delta)
    if quantity == "renyi":
        a, t = mp.mpf(level), D / b
        return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * t) + (a - 1) / (2 * a - 1) * mp.exp(-a * t)) / (a - 1)
    if quantity == "dp_delta":
        c = (D - mp.mpf(level) * b) / 2
        return laplace_cdf(c, 0, b) - mp.exp(level) * laplace_cdf(c, D, b) if c > 0 else mp.mpf(0)
    return laplace_cdf(laplace_upper_quantile(level, b), D, b)


def normal_cdf(x):
    """Phi(x), by mpmath's erfc, or for x < -1e20 (mpmath's erfc overflows a float near -1e154) by the asymptotic
    series phi(x)/|x| sum_k (-1)^k (2k - 1)!!/x^(2k), cut at the first term below 10^-(dps + 10) (an alternating
    series whose error is below its first omitted term: Abramowitz & Stegun 7.1.24)."""
    x = mp.mpf(x)
    if x >= -1e20:
        return mp.ncdf(x)
    total, term, k = mp.mpf(0), mp.mpf(1), 0
    while abs(term) > mp.mpf(10) ** -(mp.mp.dps + 10):
        total += term
        k += 1
        term *= -(2 * k - 1) / x**2
    return mp.npdf(x) / -x * total


def gaussian_reference(quantity: str, level, Delta, sigma):
    """N(0, s^2) against N(Delta, s^2) (its own mirror image). Rényi: alpha Delta^2/(2 s^2) (Mironov 2017, Prop. 7).
    delta(eps): the loss (Delta^2 - 2 Delta x)/(2 s^2) exceeds eps exactly on x < c = Delta/2 - eps s^2/Delta, so
    delta = P(X < c) - e^eps Q(X < c) by the normal CDF (Balle & Wang 2018, Thm 8, in another form). Trade-off:
    reject P on x > s z, z the upper quantile of the type-I error; beta = Q(X <= s z)."""
    D, s = mp.mpf(Delta), mp.mpf(sigma)
    if quantity == "renyi":
        return mp.mpf(level) * D**2 / (2 * s**2)
    if quantity == "dp_delta":
        if D == 0:
            return mp.mpf(0)
        c = D / 2 - mp.mpf(level) * s**2 / D
        return normal_cdf(c / s) - mp.exp(level) * normal_cdf((c - D) / s)
    return normal_cdf(normal_upper_quantile(level) - D / s)


def _continuous(quantity: str, level, reference, **params):
    """The reference settled by doubling digits (its terms cancel near alpha = 1, t -> 0 and eps next to t)."""
    return settled(lambda: reference(quantity, level, **params))


# ---- generated parameters ------------------------------------------------------------------------------------------


def _log_uniform(lo: float, hi: float):
    return st.floats(lo, hi).map(lambda e: float(10.0**e))


ALPHA = st.one_of(st.integers(2, 12).map(float), st.floats(1.05, 40.0), _log_uniform(-4, -1).map(lambda u: 1 + u))
EPS = _log_uniform(-3, 1.2)
DELTA = _log_uniform(-40, -0.3)
TYPE1 = st.one_of(_log_uniform(-30, -0.05), _log_uniform(-12, -0.5).map(lambda u: 1 - u))
LEVELS = {"renyi": ("alpha", ALPHA), "dp_delta": ("eps", EPS), "dp_epsilon": ("delta", DELTA),
          "tradeoff_beta": ("type1", TYPE1)}
QUANTITIES = tuple(LEVELS)


def _digits(params: dict, quantity: str, level: float) -> int:
    """Digits to start a reference at: its terms cancel to about (a small parameter)^2 (eps0 = 1e-300: R ~ 1e-600),
    and to alpha - 1."""
    small = [v for k, v in params.items() if isinstance(v, float) and 0 < v < 1 and k not in ("drop",)]
    if quantity == "renyi":
        small.append(level - 1)
    return DPS + 2 * max([0, *(int(-math.log10(v)) for v in small)])


# the largest privacy loss log(p/q) over both orders, where it is finite: delta(eps) = 0 exactly from it on (a sum of
# max(0, p - e^eps q) that is 0 only settles at ZERO_DPS digits: minutes over a lattice of 10^4 points)
TOP_LOSS = {"randomized_response": lambda eps0, **_: mp.mpf(eps0),
            "randomized_response_k": lambda eps0, **_: mp.mpf(eps0),
            "discrete_laplace": lambda Delta, scale: mp.mpf(Delta) / mp.mpf(scale)}


def _check_outcomes(name: str, quantity: str, level: float, outcomes, **params) -> None:
    """One family point against the outcome-list references (finite pairs and the two lattices); `outcomes(quantity,
    level)` builds the outcome list at the working precision."""
    truth = family(name).truth(quantity, **{LEVELS[quantity][0]: level}, **params)
    digits = _digits(params, quantity, level)
    if params.get("Delta") == 0:  # a lattice pair shifted by 0: identical laws (a zero sum settles only at ZERO_DPS)
        with mp.workdps(DPS):
            holds(truth, 1 - mp.mpf(level) if quantity == "tradeoff_beta" else mp.mpf(0))
        return

    def delta_of(e):
        if name in TOP_LOSS:
            with mp.workprec(4000):  # e (an enclosure's end: ~130 bits) against a ratio of floats, exactly enough
                if mp.mpf(e) >= TOP_LOSS[name](**params):
                    return mp.mpf(0)
        return settled(lambda: pair_delta(outcomes("dp_delta", e), e), digits)

    if quantity == "dp_epsilon":
        epsilon_holds(truth, delta_of, level)
    elif quantity == "dp_delta":
        holds(truth, delta_of(level))
    else:
        reference = {"renyi": pair_renyi, "tradeoff_beta": pair_tradeoff}[quantity]
        holds(truth, settled(lambda: reference(outcomes(quantity, level), level), digits))


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=12)
@given(data=st.data())
def test_randomized_response_binary_and_k_ary(quantity, data):
    eps0 = data.draw(_log_uniform(-2.5, 1.5), label="eps0")
    k = data.draw(st.integers(2, 40), label="k")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_outcomes("randomized_response_k", quantity, level, lambda *_: rr_outcomes(eps0, k), eps0=eps0, k=k)
    if k == 2 or data.draw(st.booleans(), label="binary too"):
        _check_outcomes("randomized_response", quantity, level, lambda *_: rr_outcomes(eps0), eps0=eps0)


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=12)
@given(data=st.data())
def test_exponential_mechanism(quantity, data):
    eps0 = data.draw(_log_uniform(-2.5, 1.5), label="eps0")
    k = data.draw(st.one_of(st.integers(2, 50), st.integers(2, 10**9)), label="k")
    u0 = data.draw(st.floats(-30, 30), label="u0")
    drop = data.draw(st.one_of(st.just(0.0), st.just(1.0), st.floats(0, 1)), label="drop")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_outcomes("exponential_mechanism", quantity, level, lambda *_: em_outcomes(eps0, k, u0, drop),
                    eps0=eps0, k=k, u0=u0, drop=drop)


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=examples(6, 60))  # a lattice sum settled by doubling digits: ~1 s a reference
@given(data=st.data())
def test_discrete_laplace(quantity, data):
    Delta = data.draw(st.integers(0, 12), label="Delta")
    scale = data.draw(_log_uniform(-1, 0.6), label="scale")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_outcomes("discrete_laplace", quantity, level, lambda *_: dlap_outcomes(Delta, scale), Delta=Delta,
                    scale=scale)


def _dg(Delta, sigma):
    def outcomes(quantity, level):
        return dg_outcomes(Delta, sigma, alpha=level if quantity == "renyi" else None,
                           eps=level if quantity == "dp_delta" else None)
    return outcomes


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=examples(6, 60))  # a lattice sum settled by doubling digits: ~1 s a reference
@given(data=st.data())
def test_discrete_gaussian(quantity, data):
    Delta = data.draw(st.integers(0, 12), label="Delta")
    sigma = data.draw(_log_uniform(-1.3, 0.9), label="sigma")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_outcomes("discrete_gaussian", quantity, level, _dg(Delta, sigma), Delta=Delta, sigma=sigma)


def _check_continuous(name: str, reference, quantity: str, level: float, **params) -> None:
    """One point of the Laplace or Gaussian mechanism against its reference (eps(delta) through the reference
    delta(eps))."""
    truth = family(name).truth(quantity, **{LEVELS[quantity][0]: level}, **params)
    if quantity == "dp_epsilon":
        epsilon_holds(truth, lambda e: settled(lambda: reference("dp_delta", e, **params)), level)
    else:
        holds(truth, settled(lambda: reference(quantity, level, **params)))


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=examples(15, 150))  # closed forms and CDFs: ~10 ms a reference
@given(data=st.data())
def test_laplace_mechanism(quantity, data):
    Delta = data.draw(_log_uniform(-4, 3), label="Delta")
    scale = data.draw(_log_uniform(-3, 3), label="scale")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_continuous("laplace", laplace_reference, quantity, level, Delta=Delta, scale=scale)


@pytest.mark.parametrize("quantity", QUANTITIES)
@settings(max_examples=examples(15, 150))
@given(data=st.data())
def test_gaussian_mechanism(quantity, data):
    Delta = data.draw(_log_uniform(-4, 3), label="Delta")
    sigma = data.draw(_log_uniform(-3, 3), label="sigma")
    level = data.draw(LEVELS[quantity][1], label=LEVELS[quantity][0])
    _check_continuous("gaussian_mechanism", gaussian_reference, quantity, level, Delta=Delta, sigma=sigma)
    mu = family("gaussian_mechanism").truth(Quantity.GDP_MU, Delta=Delta, sigma=sigma)
    with mp.workdps(DPS):
        holds(mu, mp.mpf(Delta) / mp.mpf(sigma))


@pytest.mark.parametrize("reference", [laplace_reference, gaussian_reference], ids=["laplace", "gaussian"])
@pytest.mark.parametrize(("Delta", "b"), [(1.0, 1.0), (2.5, 0.7)])
def test_the_continuous_references_agree_with_quadrature(reference, Delta, b):
    """The references above are closed forms and CDFs; here they are held to the definitions integrated by mp.quad
    (20 digits, split where the densities are not smooth): the Rényi integral of p^alpha q^(1 - alpha) in both
    orders, the hockey stick as the integral of max(0, p - e^eps q), and the trade-off's type-I error and beta as
    integrals of p and q over the test's regions."""
    if reference is laplace_reference:
        params = {"Delta": Delta, "scale": b}
        p, q = (lambda x: mp.exp(-abs(x) / b) / (2 * b)), (lambda x: mp.exp(-abs(x - Delta) / b) / (2 * b))
        threshold = lambda x: laplace_upper_quantile(x, b)  # noqa: E731
    else:
        params = {"Delta": Delta, "sigma": b}
        p, q = (lambda x: mp.npdf(x, 0, b)), (lambda x: mp.npdf(x, Delta, b))
        threshold = lambda x: b * normal_upper_quantile(x)  # noqa: E731
    with mp.workdps(20):
        cuts = [-mp.inf, 0, mp.mpf(Delta) / 2, Delta, mp.inf]
        a = mp.mpf(2.5)
        integral = max(mp.quad(lambda x, f=f, g=g: f(x) ** a * g(x) ** (1 - a), cuts) for f, g in ((p, q), (q, p)))
        assert mp.almosteq(reference("renyi", a, **params), mp.log(integral) / (a - 1), 1e-15)
        eps = mp.mpf(0.3)
        edges = {Delta / 2 - eps * b / 2, Delta / 2 - eps * b**2 / Delta}  # the loss crosses eps at one of them
        integral = mp.quad(lambda x: max(0, p(x) - mp.exp(eps) * q(x)), sorted({*cuts, *edges}))
        assert mp.almosteq(reference("dp_delta", eps, **params), integral, 1e-15)
        for x in (0.01, 0.8):
            c = threshold(x)
            assert mp.almosteq(mp.quad(p, sorted({c, max(c, 0)}) + [mp.inf]), x, 1e-15)
            beta = mp.quad(q, [-mp.inf, *sorted({min(c, Delta), c})])
            assert mp.almosteq(reference("tradeoff_beta", x, **params), beta, 1e-15)


# ---- the far tails a search draws ----------------------------------------------------------------------------------

FAR_OUTCOMES = [
    ("randomized_response", dict(eps0=8664.0), lambda *_: rr_outcomes(8664.0)),
    ("randomized_response", dict(eps0=1e-300), lambda *_: rr_outcomes(mp.mpf(1e-300))),
    ("randomized_response_k", dict(eps0=8664.0, k=10**6), lambda *_: rr_outcomes(8664.0, 10**6)),
    ("randomized_response_k", dict(eps0=1e-12, k=3), lambda *_: rr_outcomes(mp.mpf(1e-12), 3)),
    ("exponential_mechanism", dict(eps0=8664.0, k=1000, u0=0.0, drop=1.0),
     lambda *_: em_outcomes(8664.0, 1000, 0.0, 1.0)),
    ("exponential_mechanism", dict(eps0=8664.0, k=2, u0=-0.25, drop=0.0),
     lambda *_: em_outcomes(8664.0, 2, -0.25, 0.0)),
    ("exponential_mechanism", dict(eps0=1e-200, k=7, u0=3.0, drop=0.5),
     lambda *_: em_outcomes(mp.mpf(1e-200), 7, 3.0, 0.5)),
    ("discrete_laplace", dict(Delta=1, scale=1 / 8664), lambda *_: dlap_outcomes(1, 1 / 8664)),
    ("discrete_laplace", dict(Delta=7, scale=1e-3), lambda *_: dlap_outcomes(7, 1e-3)),
    ("discrete_gaussian", dict(Delta=1, sigma=1e-3), _dg(1, 1e-3)),
    ("discrete_gaussian", dict(Delta=3, sigma=0.05), _dg(3, 0.05)),
]
FAR_LEVELS = [("renyi", 1e4), ("renyi", 1 + 2**-40), ("dp_delta", 8664.0), ("dp_delta", 1e-300),
              ("dp_epsilon", 1e-300), ("dp_epsilon", 0.5), ("tradeoff_beta", 1e-300), ("tradeoff_beta", 1 - 2**-40)]


@pytest.mark.parametrize(("name", "params", "outcomes"), FAR_OUTCOMES, ids=[f"{n}-{i}" for i, (n, _, _) in
                                                                             enumerate(FAR_OUTCOMES)])
@pytest.mark.parametrize(("quantity", "level"), FAR_LEVELS)
def test_far_tails_of_the_finite_and_lattice_pairs(name, params, outcomes, quantity, level):
    _check_outcomes(name, quantity, level, outcomes, **params)


@pytest.mark.parametrize(("quantity", "level"), FAR_LEVELS)
@pytest.mark.parametrize(("Delta", "scale"), [(8664.0, 1.0), (1e-300, 1.0), (1.0, 1e3), (1e300, 1e-5),
                                              (1.0, 1e-300)])
def test_far_tails_of_the_laplace_mechanism(quantity, level, Delta, scale):
    """Delta/scale from 1e-300 (a Rényi sum 1 + 1e-600: settled at ~2000 digits) to 1e305 (delta = 1 - e^-5e304)."""
    _check_continuous("laplace", laplace_reference, quantity, level, Delta=Delta, scale=scale)


@pytest.mark.parametrize(("quantity", "level"), FAR_LEVELS)
@pytest.mark.parametrize(("Delta", "sigma"), [(1.0, 1e-3), (1.0, 1e3), (3.0, 0.5), (1e-300, 1.0), (1.0, 1e-150)])
def test_far_tails_of_the_gaussian_mechanism(quantity, level, Delta, sigma):
    """mu = Delta/sigma from 1e-300 (delta at eps = 8664: a CDF at -8.7e303, by its asymptotic series) to 1e150,
    where eps(delta) (about mu^2/2) is refused as a cap, cleanly (ResourceLimitError: its root needs ~mu^2 bits)."""
    if quantity == "dp_epsilon" and Delta / sigma > MAX_ROOT_MU:
        with pytest.raises(ResourceLimitError):
            family("gaussian_mechanism").truth(quantity, delta=level, Delta=Delta, sigma=sigma)
        return
    _check_continuous("gaussian_mechanism", gaussian_reference, quantity, level, Delta=Delta, sigma=sigma)


@pytest.mark.parametrize(("quantity", "level"), [("renyi", 1e4), ("renyi", 3.0), ("dp_delta", 1e-300),
                                                 ("dp_delta", 0.01), ("tradeoff_beta", 0.3)])
def test_the_discrete_gaussian_at_sigma_100(quantity, level):
    """sigma = 100 (Z and the Rényi ratio by Poisson summation): Rényi at integer alpha is alpha Delta^2/(2 sigma^2)
    exactly (Canonne, Kamath & Steinke 2020, the shifted theta function at an integer shift); the others by direct
    summation over the ~4,000 integers that carry the mass (60 digits, no settling)."""
    truth = family("discrete_gaussian").truth(quantity, **{LEVELS[quantity][0]: level}, Delta=3, sigma=100.0)
    if quantity == "renyi":
        with mp.workdps(DPS):
            holds(truth, mp.mpf(level) * 9 / (2 * mp.mpf(100) ** 2))
        return
    with mp.workdps(DPS):
        outcomes = dg_outcomes(3, 100.0, eps=level if quantity == "dp_delta" else None)
        reference = pair_delta(outcomes, level) if quantity == "dp_delta" else pair_tradeoff(outcomes, level)
    holds(truth, reference)


@pytest.mark.parametrize("sigma", [1e76, 1e149])
def test_the_discrete_gaussian_hockey_stick_starting_beyond_the_float_range(sigma):
    """At eps = 8664 the hockey stick's sum starts at x = eps sigma^2/Delta ~ 8.7e155 (sigma = 1e76), whose square is
    beyond a float (an OverflowError, exit 4, before). delta <= P(X >= x) <= e^(-x^2/(2 sigma^2)) (1 + sigma
    sqrt(2 pi))/Z < e^(-eps^2 sigma^2/3) (Z >= 1): 0 as a float."""
    truth = family("discrete_gaussian").truth("dp_delta", eps=8664.0, Delta=1, sigma=sigma)
    assert truth.value == truth.lower == 0.0 and truth.upper < 1e-300


def test_the_discrete_gaussian_renyi_is_the_gaussian_bound_where_alpha_delta_is_an_integer_and_below_elsewhere():
    """CKS 2020: R_alpha <= alpha Delta^2/(2 sigma^2); sum_x P^alpha Q^(1 - alpha) is e^(alpha(alpha - 1) Delta^2/
    (2 sigma^2)) theta((1 - alpha) Delta)/theta(0), theta(c) = sum_x e^(-(x - c)^2/(2 sigma^2)), so equality holds
    where alpha Delta is an integer (alpha = 2.5 at Delta = 2 too), and strictly below elsewhere (theta peaks at the
    integers)."""
    fam = family("discrete_gaussian")
    for sigma in (0.3, 1.0, 2.5):
        for alpha in (2.0, 2.5, 3.0, 7.0):
            with mp.workdps(DPS):
                reference = mp.mpf(alpha) * 4 / (2 * mp.mpf(sigma) ** 2)
            holds(fam.truth("renyi", alpha=alpha, Delta=2, sigma=sigma), reference)
        if sigma < 2:  # beyond, the gap is ~ e^(-2 pi^2 sigma^2) of the value: below a float's resolution
            assert fam.truth("renyi", alpha=2.25, Delta=1, sigma=sigma).upper < 2.25 / (2 * sigma**2)


# ---- anywhere in the domain: a value or a clean refusal, never an exception ----------------------------------------

_ANY_POSITIVE = st.one_of(_log_uniform(-300, 300), st.sampled_from([1e-3, 1.0, 1e3, 8664.0]))
_DOMAINS = {
    "alpha": st.one_of(_log_uniform(-15, 0).map(lambda u: 1 + u), _log_uniform(0, 300).map(lambda v: 1 + v)),
    "eps": st.one_of(_ANY_POSITIVE, st.just(8664.0)), "delta": st.one_of(_log_uniform(-300, -1e-3),
                                                                         st.just(1 - 2**-53)),
    "type1": st.one_of(_log_uniform(-300, -1e-3), st.just(1 - 2**-53)), "eps0": st.one_of(_ANY_POSITIVE,
                                                                                           st.just(0.0)),
    "scale": _ANY_POSITIVE, "sigma": _ANY_POSITIVE, "k": st.one_of(st.integers(2, 50), st.integers(2, 2**53)),
    "u0": st.one_of(st.floats(-1e300, 1e300), st.floats(-50, 50)), "drop": st.floats(0, 1),
}


def _draw_point(data, name: str, quantity: str) -> dict:
    fam = family(name)
    out = {}
    for p in fam.parameters:
        if not p.needed_for(Quantity(quantity)):
            continue
        if p.name == "Delta":
            out[p.name] = data.draw(st.integers(0, 10**4) if p.integer else st.one_of(_ANY_POSITIVE, st.just(0.0)),
                                    label=p.name)
        else:
            out[p.name] = data.draw(_DOMAINS[p.name], label=p.name)
    return out


@pytest.mark.parametrize("name", ["laplace", "randomized_response", "randomized_response_k", "exponential_mechanism",
                                  "discrete_laplace", "discrete_gaussian", "gaussian_mechanism"])
@settings(max_examples=examples(15, 150))
@given(data=st.data())
def test_any_point_gives_a_value_in_range_or_a_clean_refusal(name, data):
    """Parameters drawn from 1e-300 to 1e300 (the scales a search reaches): each quantity is a Truth within the
    quantity's range whose Arb enclosure overlaps it, or a VerifyError (bad input, exit 2; a cap, exit 3); an
    enclosure may be refused (NotEnclosable: the point is then undecided, never certified) only where Arb's exponent
    range ends (a parameter beyond 1e15 or below 1e-15, or e^(-1/(2 sigma^2)) beyond it)."""
    for quantity in QUANTITIES:
        point = _draw_point(data, name, quantity)
        try:
            truth = family(name).truth(quantity, **point)
        except VerifyError:
            continue
        low, high = quantity_range(Quantity(quantity))
        assert low <= truth.lower <= truth.value <= truth.upper <= high, (quantity, point, truth)
        try:
            enc = truth.enclose(64)
        except NotEnclosable:
            assert any(abs(v) > 1e15 or 0 < abs(v) < 1e-15 for v in point.values()), (quantity, point)
            continue
        if math.isfinite(truth.value) and truth.value != 0:
            # a subnormal truth's interval is the float alone (Truth.exact's relative pad underflows to 0), and the
            # exact value is within half its ulp (eps0 = 1e-154: R = 6.2499999999999997e-310, the float 6.25e-310)
            ulp = math.ulp(truth.value) if abs(truth.value) < sys.float_info.min else 0.0
            assert _mp(enc.lower) <= truth.upper + ulp and _mp(enc.upper) >= truth.lower - ulp, \
                (quantity, point, truth, enc.text())


# ---- falsify: a bound off by 2 or 10 is refuted with a certificate, the closed form itself is not ------------------

CLOSED_FORMS = [
    ("laplace", "renyi", "log(alpha/(2*alpha - 1)*exp((alpha - 1)*Delta/scale) + (alpha - 1)/(2*alpha - 1)"
                         "*exp(-alpha*Delta/scale))/(alpha - 1)", {}),
    ("laplace", "dp_delta", "Max(0, 1 - exp((eps - Delta/scale)/2))", {}),
    ("randomized_response", "renyi", "log((exp(eps0)/(1 + exp(eps0)))**alpha*(1/(1 + exp(eps0)))**(1 - alpha)"
                                     " + (1/(1 + exp(eps0)))**alpha*(exp(eps0)/(1 + exp(eps0)))**(1 - alpha))"
                                     "/(alpha - 1)", {}),
    ("randomized_response_k", "dp_delta", "Max(0, (exp(eps0) - exp(eps))/(exp(eps0) + k - 1))", {}),
    ("discrete_laplace", "dp_delta", "Max(0, (exp(1/scale) - exp(eps))/(exp(1/scale) + 1))", {"Delta": "1"}),
    ("gaussian_mechanism", "renyi", "alpha*Delta**2/(2*sigma**2)", {}),
    ("gaussian_mechanism", "dp_delta", "Phi(Delta/(2*sigma) - eps*sigma/Delta)"
                                       " - exp(eps)*Phi(-Delta/(2*sigma) - eps*sigma/Delta)", {}),  # Balle & Wang
]
# each family's textbook guarantee
GUARANTEES = [
    ("exponential_mechanism", "dp_epsilon", "eps0"),  # Dwork & Roth Thm 3.10: eps0-DP
    ("exponential_mechanism", "renyi", "eps0"),  # an eps0-DP pair's R_alpha is at most eps0
    ("laplace", "dp_epsilon", "Delta/scale"),  # Dwork & Roth Thm 3.6
    ("discrete_laplace", "dp_epsilon", "Delta/scale"),  # CKS 2020
    ("discrete_gaussian", "renyi", "alpha*Delta**2/(2*sigma**2)"),  # CKS 2020, equal where alpha Delta is an integer
    ("gaussian_mechanism", "gdp_mu", "Delta/sigma"),  # Dong, Roth & Su 2022
]
BOUNDS = [(n, q, f, d) for n, q, f, d in CLOSED_FORMS] + [(n, q, b, {}) for n, q, b in GUARANTEES]


def _refuted(outcome) -> None:
    assert outcome.counterexample is not None, outcome.summary()
    certificate = outcome.counterexample.result.certificate
    assert certificate is not None and certificate.verdict.value == "VIOLATED", outcome.summary()


@pytest.mark.parametrize("factor", [2, 10])
@pytest.mark.parametrize(("name", "quantity", "bound", "fixed"), BOUNDS, ids=[f"{b[0]}-{b[1]}" for b in BOUNDS])
def test_falsify_refutes_a_bound_off_by_a_factor(name, quantity, bound, fixed, factor):
    """The closed form, or the textbook guarantee, divided by 2 and by 10: a certified (Arb) VIOLATED verdict."""
    _refuted(falsify_outcome(f"({bound})/{factor}", name, "upper", quantity=quantity, defaults=fixed or None,
                             budget_s=60, max_examples=300, seed=0))


@pytest.mark.parametrize(("name", "quantity", "bound", "fixed"), BOUNDS, ids=[f"{b[0]}-{b[1]}" for b in BOUNDS])
def test_falsify_finds_no_counterexample_to_the_exact_bound(name, quantity, bound, fixed):
    held = falsify_outcome(bound, name, "upper", quantity=quantity, defaults=fixed or None, budget_s=60,
                           max_examples=40, seed=0)
    assert held.counterexample is None and held.checked + held.undecided >= 20, held.summary()


@pytest.mark.parametrize("name", ["exponential_mechanism", "discrete_laplace", "discrete_gaussian"])
def test_falsify_refutes_half_the_truth_itself(name):
    """Where the truth has no short closed form: the truth itself, halved (`--bind T=quantity()`), is refuted."""
    for quantity in ("dp_epsilon", "tradeoff_beta"):
        _refuted(falsify_outcome("T/2", name, "upper", quantity=quantity, bind={"T": f"{quantity}()"}, budget_s=60,
                                 max_examples=300, seed=0))
