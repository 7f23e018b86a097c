"""Rigorous enclosure of the Rényi divergence of 1-D Gaussian mixtures (python-flint Arb/acb).

R_alpha(P || Q) = log(I) / (alpha - 1), I = int P^alpha Q^(1-alpha). I is enclosed as
- the integral over [A, B] by `acb.integral` (rigorous: Petras-style error bounds on analytic integrands; the
  logarithms are checked for analyticity on every complex ball), plus
- proven upper bounds on both tails: beyond every mean, P(z) <= (sum_i w_i/s_i) phi((z - M)/S)/... with S the
  widest sd of P and M its extreme mean, and Q(z) >= v_J N(z; mu_J, tau_J^2) for its widest component J, so that
  P^alpha Q^(1-alpha) <= C exp(-(a - b)(z - c)^2), integrated in closed form (erfc).
The integral is +inf iff alpha/S^2 + (1 - alpha)/tau^2 <= 0 (decided exactly on the float inputs).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from verify.limits import deferred_deadline, due
from verify.truth.numbers import Enclosure, NotEnclosable

try:
    from flint import acb, arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    acb = arb = ctx = None

Mixture = tuple[Sequence[Any], Sequence[float], Sequence[float]]  # weights (numbers or arb balls), means, sds
_TAIL_WIDTHS = (12, 20, 30, 45, 70)  # tail cut-offs tried, in widths of the widest component
_EVALS = 100_000  # integrand evaluations per panel before acb gives up
_PANEL = 16  # widths of the widest component per integrated panel
_MAX_PANELS = 20_000  # acb.integral calls one enclosure may plan (each takes milliseconds; beyond: not enclosable)


def _diverges(p: Mixture, q: Mixture, alpha: float) -> bool:
    s, tau, a = Fraction(max(p[2])), Fraction(max(q[2])), Fraction(alpha)
    return a / s**2 + (1 - a) / tau**2 <= 0


def _normalised(mix: Mixture) -> Mixture:
    """The weights divided by their exact sum (equal float weights 1/n become exactly 1/n)."""
    weights = [arb(w) for w in mix[0]]
    total = sum(weights[1:], weights[0])
    return [w / total for w in weights], mix[1], mix[2]


def _density_terms(mix: Mixture) -> list[tuple[Any, Any, Any]]:
    """(w_i / sqrt(2 pi s_i^2), m_i, -1 / (2 s_i^2)) as Arb balls at the working precision, once per enclosure."""
    two_pi = 2 * arb.pi()
    return [(arb(w) / (two_pi * arb(s) ** 2).sqrt(), arb(m), -(1 / (2 * arb(s) ** 2)))
            for w, m, s in zip(*mix, strict=True)]


def _log_density(terms: list[tuple[Any, Any, Any]], z: Any, analytic: bool) -> Any:
    """log sum_i w_i N(z; m_i, s_i^2) for a complex ball z (non-finite where it may not be analytic), from
    `_density_terms`."""
    total = acb(0)
    for coef, m, neg_inv_two_var in terms:
        total += coef * ((z - m) ** 2 * neg_inv_two_var).exp()
    return total.log(analytic=analytic)


def _real_density(terms: list[tuple[Any, Any, Any]], x: Any) -> Any:
    """sum_i w_i N(x; m_i, s_i^2) for a real ball x, from `_density_terms`: the Arb operations that `_log_density`'s
    acb ones reduce to on a real ball (acb_mul(u, v) of real balls is arb_mul(v, u), an acb square arb_mul(d, d); not
    arb's `d ** 2`, NaN on a ball around 0), so the ball is bit for bit the real part of `_log_density`'s sum, at
    half the cost."""
    total = arb(0)
    for coef, m, neg_inv_two_var in terms:
        d = x - m
        total += (neg_inv_two_var * (d * d)).exp() * coef
    return total


def _tail(p: Mixture, q: Mixture, alpha: Any, edge: float, right: bool) -> Any:
    """A proven upper bound on the integral of P^a Q^(1-a) over [edge, inf) (right) or (-inf, edge] (left)."""
    wp, mp, sp = p
    c_p = sum((arb(w) / arb(s) for w, s in zip(wp, sp, strict=True)), arb(0)) / (2 * arb.pi()).sqrt()
    big_s = arb(max(sp))
    extreme = max(mp) if right else min(mp)
    j = max(range(len(q[2])), key=lambda k: (q[2][k], q[1][k] if right else -q[1][k]))
    v, mu, tau = arb(q[0][j]), arb(q[1][j]), arb(q[2][j])
    c_q = v / (tau * (2 * arb.pi()).sqrt())
    a, b = alpha / (2 * big_s**2), (alpha - 1) / (2 * tau**2)
    k = a - b
    # exponent -a (z - M)^2 + b (z - mu)^2 = -k (z - c)^2 + const (the square a product: arb's x ** 2 is NaN on a
    # ball whose midpoint is 0)
    gap = a * extreme - b * mu
    c = gap / k
    const = gap * gap / k - a * arb(extreme) ** 2 + b * mu**2
    dist = (arb(edge) - c) if right else (c - arb(edge))
    scale = c_p**alpha * c_q ** (1 - alpha) * const.exp() * (arb.pi() / k).sqrt() / 2
    return scale * (k.sqrt() * dist).erfc()


def enclose_renyi_mixture(p: Mixture, q: Mixture, alpha: float, prec: int, centre: tuple[float, float],
                          what: str = "R_alpha of 1-D Gaussian mixtures") -> Enclosure:
    """Rigorous enclosure of R_alpha(P || Q); `centre` = (lo, hi), a float range holding the integrand's bulk."""
    if acb is None:  # pragma: no cover
        raise NotEnclosable("python-flint is not installed")
    if _diverges(p, q, alpha):
        return Enclosure(math.inf, math.inf, f"{what}: +inf (exact tail condition)", prec)
    with ctx.workprec(prec):
        a = arb(alpha)
        p, q = _normalised(p), _normalised(q)

        terms_p, terms_q = _density_terms(p), _density_terms(q)
        end = due()  # no deadline starts or ends while acb.integral calls back (a tenth of the integrand's cost)

        b = 1 - a

        def integrand(z: Any, analytic: bool) -> Any:
            if time.monotonic() >= end:  # a deadline passed: make acb give up quickly (checked again after the call)
                return acb(arb.nan())
            if not analytic and z.imag.is_zero():  # a real ball: the same balls in real arithmetic
                x = z.real
                dens_p, dens_q = _real_density(terms_p, x), _real_density(terms_q, x)
                if dens_p > 0 and dens_q > 0:  # acb_log of a positive real ball is arb_log
                    return acb((dens_p.log() * a + dens_q.log() * b).exp())
                return (a * acb(dens_p).log(analytic=False) + b * acb(dens_q).log(analytic=False)).exp()
            return (a * _log_density(terms_p, z, analytic) + b * _log_density(terms_q, z, analytic)).exp()

        width = max(max(p[2]), max(q[2]))
        lo0, hi0 = min(centre[0], *p[1], *q[1]), max(centre[1], *p[1], *q[1])
        tol = arb(2) ** (20 - prec)  # relative, and absolute too: the integral is >= 1 (R_alpha >= 0)
        bulk, done = acb(0), (lo0, lo0)
        for k in _TAIL_WIDTHS:  # widen the integrated range piece by piece until the proven tails are negligible
            lo, hi = lo0 - k * width, hi0 + k * width
            pieces = [(lo, hi)] if done[0] == done[1] else [(lo, done[0]), (done[1], hi)]
            counts = [max(1, math.ceil((b_ - a_) / (_PANEL * width))) for a_, b_ in pieces]
            if not sum(counts) <= _MAX_PANELS:  # a range of 10^k component widths (tiny sds): a cap, not a guess
                raise NotEnclosable(f"{what}: {sum(counts):.3g} integration panels needed (more than {_MAX_PANELS})")
            for (a_, b_), cuts in zip(pieces, counts, strict=True):  # panels of at most _PANEL widths
                ends = [a_ + (b_ - a_) * i / cuts for i in range(cuts)] + [b_]
                for u, v in zip(ends[:-1], ends[1:], strict=True):
                    with deferred_deadline(what):
                        try:
                            bulk += acb.integral(integrand, u, v, rel_tol=tol, abs_tol=tol, eval_limit=_EVALS)
                        except SystemError as err:  # an exception inside the callback
                            raise NotEnclosable(f"{what}: the integrand failed ({err.__cause__ or err})") from None
            done = (lo, hi)
            total = bulk.real
            tails = _tail(p, q, a, hi, True) + _tail(p, q, a, lo, False)
            if not (total.is_finite() and tails.is_finite()) or not total > 0:
                continue
            if tails.upper() < total.lower() * arb(2) ** (10 - prec):
                value = total.union(total + tails).log() / (a - 1)  # the tails are >= 0 and at most `tails`
                if value.is_finite() and value.upper() >= 0 and value.lower() < 0:  # R_alpha >= 0 (Jensen)
                    value = arb(0).union(value.upper())
                return Enclosure.of(value, f"{what}: acb.integral on [{lo:.4g}, {hi:.4g}] + proven Gaussian tail "
                                           f"bounds, {prec} bits", prec)
    raise NotEnclosable(f"{what}: acb.integral did not reach the requested accuracy")


MAX_COMPOSITIONS = 20_000  # terms of the integer-order sum one enclosure may expand


def _merged(weights: list, means: list[float], s: float) -> dict[float, Any]:
    """The normalised weights (`_normalised`) with components of one mean merged (their weights added)."""
    merged: dict[float, Any] = {}
    for wi, mi in zip(_normalised((weights, means, [s] * len(means)))[0], means, strict=True):
        merged[mi] = merged[mi] + wi if mi in merged else wi
    return merged


def _compositions_integral(merged: dict[float, Any], s: float, target: float, alpha: int) -> Any:
    """sum over the multisets {i_1..i_alpha} of the components in `merged` of multinomial(alpha; counts)
    prod (w_i e^(-nu_i^2/(2 s^2))) exp((sum nu_i)^2/(2 s^2)), nu_i = mu_i - t (Arb, at the working precision): the
    integral of (sum_i w_i N(mu_i, s^2))^alpha N(t, s^2)^(1 - alpha) over those components.

    The multisets are walked as counts n_0, n_1, ... chosen component by component, each partial product
    prod_(j < i) scaled_j^(n_j)/n_j! and partial sum sum_(j < i) n_j nu_j shared by every multiset that extends it
    (a leaf costs one product and one exp, not alpha of each); a multiset is a leaf as soon as its last pick is made,
    not walked through the components after it; alpha! multiplies the total once. The children of a node whose
    next component is the last are leaves, summed in place in the order the walk pops them (the same operations on
    the same balls, in the same order); squares are products (arb's x ** 2 is NaN on a ball whose midpoint is 0)."""
    k = len(merged)
    if k == 0:
        return arb(0)
    nu = [arb(m) - arb(target) for m in merged]
    two_s2 = 2 * arb(s) ** 2
    scaled = [wi * (-(v * v) / two_s2).exp() for wi, v in zip(merged.values(), nu, strict=True)]
    powers = [[x ** n / math.factorial(n) for n in range(alpha + 1)] for x in scaled]  # scaled_i^n / n!
    shifts = [[n * v for n in range(alpha + 1)] for v in nu]  # n nu_i
    final_powers, final_shifts = powers[-1], shifts[-1]
    total = arb(0)
    stack = [(0, alpha, arb(1), arb(0))]  # (next component, picks left, partial product, partial sum)
    while stack:
        i, left, term, first = stack.pop()
        last = first + shifts[i][left]  # component i takes every pick left: a leaf
        total += term * powers[i][left] * (last * last / two_s2).exp()
        if i < k - 2:
            for n in range(left):  # or n of them, the later components the rest (at least one)
                stack.append((i + 1, left - n, term * powers[i][n], first + shifts[i][n]))
        elif i == k - 2:  # the rest to the last component: leaves, popped from n = left - 1 down
            for n in range(left - 1, -1, -1):
                last = first + shifts[i][n] + final_shifts[left - n]
                total += term * powers[i][n] * final_powers[left - n] * (last * last / two_s2).exp()
    return total * math.factorial(alpha)


def enclose_renyi_mixture_gaussian(weights: list, means: list[float], s: float, target: float, alpha: int,
                                   prec: int) -> Enclosure:
    """R_alpha(sum_i w_i N(mu_i, s^2) || N(t, s^2)) for an integer alpha, in closed form: the integral of a product
    of equal-variance Gaussians gives int P^a Q^(1-a) = sum over the multisets {i_1..i_alpha} of components of
    multinomial(alpha; counts) prod (w_i e^(-nu_i^2/(2 s^2))) exp((sum nu_i)^2/(2 s^2)), nu_i = mu_i - t, components
    with one mean merged first (their weights added). Exact Arb arithmetic on the float inputs and the weights' balls;
    NotEnclosable beyond MAX_COMPOSITIONS terms."""
    with ctx.workprec(prec):
        merged = _merged(weights, means, s)
        k = len(merged)
        if math.comb(alpha + k - 1, k - 1) > MAX_COMPOSITIONS:
            raise NotEnclosable(f"{math.comb(alpha + k - 1, k - 1)} compositions exceed {MAX_COMPOSITIONS}")
        total = _compositions_integral(merged, s, target, alpha)
        return Enclosure.of(total.log() / (alpha - 1), "integer-order closed form over compositions (Arb)", prec)


BRACKET_COMPOSITIONS = 2_000  # terms of the lower end's sum in `bracket_renyi_mixture_gaussian`


def bracket_renyi_mixture_gaussian(weights: list, means: list[float], s: float, target: float, alpha: int,
                                   prec: int) -> Enclosure:
    """Proven ends of R_alpha(P || N(t, s^2)), P = sum_i w_i N(mu_i, s^2), integer alpha >= 2, where the closed form
    has too many compositions: int P^a Q^(1-a) is increasing in P, so the components that weigh most in it
    (largest log w_i + (alpha - 1) nu_i^2/(2 s^2)), as many as keep the sum within BRACKET_COMPOSITIONS terms and
    with their weights in P, give a lower end; x^alpha is convex, so (sum_i w_i phi_i)^alpha <= sum_i w_i phi_i^alpha
    (Jensen) and int P^a Q^(1-a) <= sum_i w_i e^(alpha (alpha - 1) nu_i^2/(2 s^2)), the upper end. The lower end is
    close where a few components dominate (large alpha nu^2/s^2), the upper end only where one does."""
    with ctx.workprec(prec):
        merged = _merged(weights, means, s)
        nu = {m: arb(m) - arb(target) for m in merged}
        two_s2, a = 2 * arb(s) ** 2, arb(alpha)
        score = {m: float((w.log() + (a - 1) * nu[m] ** 2 / two_s2).mid()) for m, w in merged.items()}
        k = 1
        while k < len(merged) and math.comb(alpha + k, k) <= BRACKET_COMPOSITIONS:
            k += 1
        top = sorted(merged, key=lambda m: -score[m])[:k]
        lower = _compositions_integral({m: merged[m] for m in top}, s, target, alpha).log() / (alpha - 1)
        upper = sum((w * (a * (a - 1) * nu[m] ** 2 / two_s2).exp() for m, w in merged.items()), arb(0))
        upper = upper.log() / (alpha - 1)
        if not (lower.is_finite() and upper.is_finite()):
            raise NotEnclosable("the bracket of R_alpha of a mixture against a Gaussian is not finite")
        low = lower.lower() if lower.lower() > 0 else arb(0)  # R_alpha >= 0
        return Enclosure(low, upper.upper(), f"integer-order bracket: the {k} heaviest of {len(merged)} components "
                         "(below), Jensen (above)", prec)
