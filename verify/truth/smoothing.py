"""Gaussian smoothing of a Lipschitz function (Feldman et al. 2018, Theorem 33 and Appendix C) on the instance
f(w) = L ||w|| over a convex K containing 0 (its Lipschitz extension h is f itself, by the triangle inequality):
f_hat(w) = E f(w + Z), Z ~ N(0, lam^2 I_d).

- sup_K |f_hat - f| = L E||Z|| = L lam sqrt(2) Gamma((d + 1)/2) / Gamma(d/2): f_hat >= f (Jensen) and
  E||w + Z|| - ||w|| <= E||Z|| (triangle inequality), with equality at w = 0.
- In one dimension f_hat(w) = L (w (1 - 2 Phi(-w/lam)) + 2 lam phi(w/lam)), f_hat'' = 2 L phi(w/lam)/lam, so the
  smoothness constant is 2 L phi(0)/lam = sqrt(2/pi) L/lam (at w = 0, which lies in K).
Closed forms in verify.truth.numbers (mpmath, or Arb balls for the enclosure).
"""

from __future__ import annotations

from typing import Any

from verify.errors import ParameterError
from verify.truth.numbers import extra_precision, num


def smoothing_error(L: Any, lam: Any, d: Any) -> Any:
    """sup over K of |f_hat - f| for f = L ||w|| in d dimensions: L E||Z||."""
    N = num()
    half = N.mpf(1) / 2
    # log Gamma((d+1)/2) - log Gamma(d/2) = log E||Z||/sqrt(2) ~ log(d)/2 is a difference of two numbers ~ (d/2) log d:
    # it cancels log2(d log d) bits, which the extra precision restores
    with extra_precision(int(d).bit_length() + 8):
        ratio = N.exp(N.lgamma(N.mpf(int(d)) / 2 + half) - N.lgamma(N.mpf(int(d)) / 2))
    return L * lam * N.sqrt(N.mpf(2)) * ratio


def smoothness_constant(L: Any, lam: Any, d: Any) -> Any:
    """sup over K of f_hat'' for f = L |w| (d = 1 only: sqrt(2/pi) L / lam)."""
    if int(d) != 1:
        raise ParameterError(f"the smoothness constant is computed exactly in one dimension only, got d = {int(d)}")
    N = num()
    return L * N.sqrt(2 / N.pi()) / lam
