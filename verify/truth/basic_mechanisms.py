"""The basic mechanisms' privacy quantities, exact, in the active number system (mpmath or Arb balls): the Laplace
mechanism, randomized response (binary and k-ary), the exponential mechanism over a finite output set, the discrete
Laplace mechanism and the Gaussian mechanism. Every function takes the family's parameters as numbers and returns
the quantity for the worst-case neighbouring pair its docstring names; Rényi divergences, delta(eps), eps(delta)
and trade-off functions are over both orders of the pair. `adaptive.tight` gives each its working precision's
relative accuracy wherever its terms cancel (eps0 -> 0, alpha -> 1, eps next to a loss value).

Sources: Dwork & Roth 2014 (the Laplace mechanism, Thm 3.6; randomized response, Sec. 3.2; the exponential
mechanism, Thm 3.10); Mironov 2017, Table 2 (Rényi divergences of the Laplace mechanism and of randomized
response); Dong, Roth & Su 2019/2022 (trade-off functions of the Laplace and Gaussian mechanisms and of randomized
response); Balle & Wang 2018, Thm 8 (the Gaussian mechanism's delta(eps)); Canonne, Kamath & Steinke 2020 (the
discrete Laplace law, Def. 28, and its privacy). The discrete Gaussian is in `discrete_gaussian`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath

from verify.errors import ResourceLimitError
from verify.truth import finite_pair
from verify.truth.adaptive import as_int, dyadic, either, fraction, positive, sign, tight
from verify.truth.finite_pair import Atom
from verify.truth.gaussian import gaussian_delta, gaussian_dp_epsilon, gaussian_tradeoff
from verify.truth.lattice_pair import Lattice, pair_epsilon, pair_tradeoff
from verify.truth.numbers import num, to_mpf

# ---- the Laplace mechanism: Lap(0, scale) against Lap(Delta, scale); t = Delta/scale -----------------------------


@tight
def laplace_renyi(alpha: Any, Delta: Any, scale: Any) -> Any:
    """R_alpha = log(alpha/(2 alpha - 1) e^((alpha - 1) t) + (alpha - 1)/(2 alpha - 1) e^(-alpha t))/(alpha - 1)
    (Mironov 2017, Table 2; the pair is symmetric), as t + log1p((alpha - 1) expm1(-(2 alpha - 1) t)/(2 alpha -
    1))/(alpha - 1): no overflow at alpha t = 1e7, no cancellation at alpha -> 1."""
    N = num()
    alpha, Delta, scale = N.mpf(alpha), N.mpf(Delta), N.mpf(scale)
    if sign(Delta) == 0:
        return N.mpf(0)
    t, beta, width = Delta / scale, alpha - 1, 2 * alpha - 1
    return t + N.log1p(beta * N.expm1(-width * t) / width) / beta


@tight
def laplace_delta(eps: Any, Delta: Any, scale: Any) -> Any:
    """delta(eps) = 1 - e^((eps - t)/2) for eps < t, else 0 (the hockey stick of two Laplace laws, both orders
    alike), with eps - t = (eps scale - Delta)/scale formed exactly."""
    N = num()
    gap = fraction(eps) * fraction(scale) - fraction(Delta)
    if gap >= 0:
        return N.mpf(0)
    return -N.expm1(dyadic(gap) / (2 * N.mpf(scale)))


@tight
def laplace_epsilon(delta: Any, Delta: Any, scale: Any) -> Any:
    """eps(delta) = max(0, t + 2 log(1 - delta)) (the inverse of `laplace_delta`)."""
    N = num()
    return positive(N.mpf(Delta) / N.mpf(scale) + 2 * N.log1p(-N.mpf(delta)))


@tight
def laplace_tradeoff(x: Any, Delta: Any, scale: Any) -> Any:
    """T(x) = 1 - e^t x for x < e^-t/2, e^-t/(4x) up to x = 1/2, e^-t (1 - x) above (Dong, Roth & Su 2022,
    Prop. A.6 / Lap(0, 1) against Lap(t, 1); symmetric)."""
    N = num()
    x, t = N.mpf(x), N.mpf(Delta) / N.mpf(scale)
    if fraction(x) > Fraction(1, 2):
        return N.exp(-t) * (1 - x)
    low, mid = (lambda: 1 - N.exp(t + N.log(x))), (lambda: N.exp(-t - N.log(4 * x)))  # no e^t alone: t ~ 1e300
    side = sign(x - N.exp(-t) / 2)
    if side is None:
        return either(low, mid)
    return low() if side < 0 else mid()


# ---- randomized response and the exponential mechanism: pairs on a finite set -------------------------------------


def _rr_atoms(eps0: Any, k: int) -> list[Atom]:
    """k-ary randomized response (the true value with probability e^eps0/(e^eps0 + k - 1), each other value with
    1/(e^eps0 + k - 1)) on inputs x != x': the outputs x, the k - 2 others, x'."""
    N = num()
    eps0 = N.mpf(eps0)
    shrink = N.exp(-eps0)  # (never e^eps0: Arb has no ball for e^(1e300))
    true = 1 / (1 + (k - 1) * shrink)
    other = shrink * true
    middle = [Atom(k - 2, other, other, Fraction(0))] if k > 2 else []
    return [Atom(1, true, other, fraction(eps0)), *middle, Atom(1, other, true, -fraction(eps0))]


def _em_atoms(eps0: Any, k: int, u0: Any, drop: Any) -> list[Atom]:
    """The exponential mechanism P(r) ~ exp(eps0 u(r)/2) over k outputs (scores in units of the sensitivity): on D
    the scores are (u0, 0, ..., 0), on D' (u0 + 1, -drop, ..., -drop). With w = P_D(output 0) and v = eps0 (1 +
    drop)/2, the losses are L = log1p(w expm1(v)) >= 0 on the k - 1 others and log(w + (1 - w) e^-v) = L - v <= 0 on
    output 0, with v exact and the small one of the two formed directly (log1p((1 - w) expm1(-v)) where w > 1/2)."""
    N = num()
    a = N.mpf(eps0) / 2
    lead = a * N.mpf(u0)
    if to_mpf(lead) >= 0:  # w and 1 - w, each without cancellation, from e^-|lead| only
        shrink = (k - 1) * N.exp(-lead)
        w, rest = 1 / (1 + shrink), shrink / (1 + shrink)
    else:
        shrink = N.exp(lead) / (k - 1)
        w, rest = shrink / (1 + shrink), 1 / (1 + shrink)
    v = fraction(eps0) * (1 + fraction(drop)) / 2
    if to_mpf(w) <= 0.5:  # the others' loss small: L = log1p(w expm1(v)), output 0's L - v
        extra, bases = N.log1p(w * N.expm1(dyadic(v))), (Fraction(0), -v)
    else:  # output 0's loss small: log1p((1 - w) expm1(-v)), the others' v more
        extra, bases = N.log1p(rest * N.expm1(-dyadic(v))), (v, Fraction(0))
    each = rest / (k - 1)
    up = dyadic(bases[0]) + extra  # >= 0: e^-up <= 1
    return [Atom(k - 1, each, each * N.exp(-up), bases[0], extra),
            Atom(1, w, w / (w + rest * N.exp(-dyadic(v))), bases[1], extra)]


@tight
def rr_renyi(alpha: Any, eps0: Any, k: Any = 2) -> Any:
    """R_alpha of k-ary randomized response (Mironov 2017, Table 2 at k = 2)."""
    return finite_pair.renyi(_rr_atoms(eps0, as_int(k)), num().mpf(alpha))


@tight
def rr_delta(eps: Any, eps0: Any, k: Any = 2) -> Any:
    """delta(eps) of k-ary randomized response: (e^eps0 - e^eps)/(e^eps0 + k - 1) for eps < eps0."""
    return finite_pair.delta(_rr_atoms(eps0, as_int(k)), num().mpf(eps))


@tight
def rr_epsilon(delta: Any, eps0: Any, k: Any = 2) -> Any:
    """eps(delta) of k-ary randomized response."""
    return finite_pair.epsilon(_rr_atoms(eps0, as_int(k)), num().mpf(delta))


@tight
def rr_tradeoff(x: Any, eps0: Any, k: Any = 2) -> Any:
    """The trade-off function of k-ary randomized response (at k = 2, max(0, 1 - e^eps0 x, e^-eps0 (1 - x)): Dong,
    Roth & Su 2022, eq. (6))."""
    return finite_pair.tradeoff(_rr_atoms(eps0, as_int(k)), num().mpf(x))


@tight
def em_renyi(alpha: Any, eps0: Any, k: Any, u0: Any, drop: Any) -> Any:
    """R_alpha of the exponential mechanism's pair (`_em_atoms`), the larger order."""
    return finite_pair.renyi(_em_atoms(eps0, as_int(k), u0, drop), num().mpf(alpha))


@tight
def em_delta(eps: Any, eps0: Any, k: Any, u0: Any, drop: Any) -> Any:
    """delta(eps) of the exponential mechanism's pair."""
    return finite_pair.delta(_em_atoms(eps0, as_int(k), u0, drop), num().mpf(eps))


@tight
def em_epsilon(delta: Any, eps0: Any, k: Any, u0: Any, drop: Any) -> Any:
    """eps(delta) of the exponential mechanism's pair."""
    return finite_pair.epsilon(_em_atoms(eps0, as_int(k), u0, drop), num().mpf(delta))


@tight
def em_tradeoff(x: Any, eps0: Any, k: Any, u0: Any, drop: Any) -> Any:
    """The trade-off function of the exponential mechanism's pair, the smaller order."""
    return finite_pair.tradeoff(_em_atoms(eps0, as_int(k), u0, drop), num().mpf(x))


# ---- the discrete Laplace mechanism: P(x) ~ exp(-|x|/scale) on the integers, against it shifted by Delta -------------
# With s = 1/scale and r = e^-s: P(X >= m) = r^m/(1 + r) for m >= 1, and the loss s(|y - Delta| - |y|) takes the
# Delta + 1 values s(Delta - 2j), j = 0..Delta.

def _floor(value: mpmath.mpf) -> int:
    """floor of an mpmath number (+-2^1100 for +-inf: a locator's guess, walked from)."""
    if not mpmath.isfinite(value):
        return (1 << 1100) if value > 0 else -(1 << 1100)
    return int(mpmath.floor(value))


def _exact_floor(value: Any) -> int:
    """floor(value()) for an mpmath expression, at enough digits for every digit of its integer part to be right."""
    with mpmath.workdps(30):
        first = value()
    if not mpmath.isfinite(first) or abs(first) < 10**15:
        return _floor(first)
    with mpmath.workdps(int(mpmath.log10(abs(first))) + 30):
        return _floor(value())


class _DiscreteLaplace:
    """The pair's closed forms at one point (exact inputs)."""

    def __init__(self, Delta: Any, scale: Any) -> None:
        N = num()
        self.D, self.scale = as_int(Delta), N.mpf(scale)
        self.s = 1 / self.scale
        self.r = N.exp(-self.s)
        self._scale_float = float(to_mpf(self.scale))

    def survival(self, m: int) -> Any:
        """P(X >= m): r^m/(1 + r) for m >= 1, (r - expm1(-s(1 - m)))/(1 + r) for m <= 0."""
        N = num()
        if m >= 1:
            return N.exp(-m * self.s) / (1 + self.r)
        return (self.r - N.expm1(-(1 - m) * self.s)) / (1 + self.r)

    def loss(self, y: int) -> Any:
        return num().mpf(max(-self.D, min(self.D, self.D - 2 * y))) * self.s

    def delta(self, eps: Any) -> Any:
        """For eps < s Delta, with J = ceil((Delta - eps scale)/2) - 1 (the largest y of loss > eps):
        (-expm1(eps - s(Delta - J)) - r expm1(-s J))/(1 + r), both terms >= 0; 0 from eps = s Delta on."""
        N = num()
        scaled = fraction(eps) * fraction(self.scale)
        if scaled >= self.D:
            return N.mpf(0)
        J = math.ceil((self.D - scaled) / 2) - 1
        head = -N.expm1(dyadic(scaled - (self.D - J)) / self.scale)
        return (head - self.r * N.expm1(-J * self.s)) / (1 + self.r)

    def segment(self, target: float) -> int:
        """delta at the loss value of j is 1 - e^(-s j): the segment is floor(-log1p(-delta) scale)."""
        scale = mpmath.mpf(self._scale_float)
        return min(self.D - 1, max(0, _exact_floor(lambda: -mpmath.log1p(-target) * scale)))

    def atom(self, x: float) -> int:
        """The m with P(X >= m + 1) <= x < P(X >= m): m = ceil(U) - 1, U = -log(x (1 + r)) scale, where x < P(X >= 1)
        = r/(1 + r); else m = min(0, -floor(V)), V = -log((1 - x)(1 + r)) scale."""
        scale = mpmath.mpf(self._scale_float)
        with mpmath.workdps(30):
            first = x < mpmath.exp(-1 / scale) / (1 + mpmath.exp(-1 / scale))

        def side() -> mpmath.mpf:
            log_r1 = mpmath.log1p(mpmath.exp(-1 / scale))
            return -((mpmath.log(x) if first else mpmath.log1p(-x)) + log_r1) * scale

        value = _exact_floor(side)
        return value if first else min(0, -value)

    def lattice(self) -> Lattice:
        return Lattice(self.D, self.survival, self.loss, self.delta, self.segment, self.atom, 0, self.D - 1)


@tight
def dlap_renyi(alpha: Any, Delta: Any, scale: Any) -> Any:
    """R_alpha = s Delta + log(B)/(alpha - 1), B = (1 + e^(-(2 alpha - 1) s Delta))/(1 + r) + c e^-g expm1(-g(Delta -
    1))/expm1(-g), c = (1 - r)/(1 + r), g = (2 alpha - 1) s: the sum of p^alpha q^(1 - alpha) over the two half-lines
    and the Delta - 1 points between them (a geometric sum), in closed form for every Delta; symmetric. At Delta = 1
    it is randomized response with eps0 = s."""
    N = num()
    alpha, pair = N.mpf(alpha), _DiscreteLaplace(Delta, scale)
    D, s, r = pair.D, pair.s, pair.r
    if D == 0:
        return N.mpf(0)
    beta, g = alpha - 1, (2 * alpha - 1) * s
    ends = (1 + N.exp(-g * D)) / (1 + r)
    between = -N.expm1(-s) / (1 + r) * N.exp(-g) * N.expm1(-g * (D - 1)) / N.expm1(-g) if D > 1 else N.mpf(0)
    return s * D + N.log(ends + between) / beta


@tight
def dlap_delta(eps: Any, Delta: Any, scale: Any) -> Any:
    """delta(eps) of the discrete Laplace pair (`_DiscreteLaplace.delta`)."""
    pair = _DiscreteLaplace(Delta, scale)
    return pair.delta(num().mpf(eps)) if pair.D else num().mpf(0)


@tight
def dlap_epsilon(delta: Any, Delta: Any, scale: Any) -> Any:
    """eps(delta) of the discrete Laplace pair (`lattice_pair.Lattice.epsilon`)."""
    return pair_epsilon(_DiscreteLaplace(Delta, scale), delta)


@tight
def dlap_tradeoff(x: Any, Delta: Any, scale: Any) -> Any:
    """The trade-off function of the discrete Laplace pair (`lattice_pair.Lattice.tradeoff`)."""
    return pair_tradeoff(_DiscreteLaplace(Delta, scale), x)


# ---- the Gaussian mechanism: N(0, sigma^2) against N(Delta, sigma^2); mu = Delta/sigma -----------------------------


def gaussian_mu(Delta: Any, sigma: Any) -> Any:
    """mu = Delta/sigma: the mechanism is exactly mu-GDP (Dong, Roth & Su 2022, Thm 2.7)."""
    N = num()
    return N.mpf(Delta) / N.mpf(sigma)


def gaussian_mech_renyi(alpha: Any, Delta: Any, sigma: Any) -> Any:
    """R_alpha = alpha Delta^2/(2 sigma^2) (Mironov 2017, Prop. 7)."""
    N = num()
    return N.mpf(alpha) * N.mpf(Delta) ** 2 / (2 * N.mpf(sigma) ** 2)


def gaussian_mech_delta(eps: Any, Delta: Any, sigma: Any) -> Any:
    """delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Balle & Wang 2018, Thm 8)."""
    return gaussian_delta(num().mpf(eps), gaussian_mu(Delta, sigma))


MAX_ROOT_MU = 1e8  # mu beyond which the Gaussian eps(delta) root solve is refused (at 1e10 it took 2.7 s, at 1e150
# it did not end: its tails need ~mu^2 bits)


def gaussian_mech_epsilon(delta: Any, Delta: Any, sigma: Any) -> Any:
    """eps(delta), the root of Balle & Wang's delta(eps) (refused, ResourceLimitError, for mu > MAX_ROOT_MU)."""
    mu = gaussian_mu(Delta, sigma)
    if to_mpf(mu) > MAX_ROOT_MU:
        raise ResourceLimitError(f"eps(delta) of the Gaussian mechanism at Delta/sigma = {mpmath.nstr(to_mpf(mu), 3)} "
                                 f"is beyond its root solve (Delta/sigma <= {MAX_ROOT_MU:g}; its eps is about "
                                 "(Delta/sigma)^2/2 there)")
    return gaussian_dp_epsilon(num().mpf(delta), mu)


def gaussian_mech_tradeoff(x: Any, Delta: Any, sigma: Any) -> Any:
    """G_mu(x) = Phi(Phi^-1(1 - x) - mu) (Dong, Roth & Su 2022)."""
    return gaussian_tradeoff(num().mpf(x), gaussian_mu(Delta, sigma))
