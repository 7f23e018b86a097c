"""Per-record losses for the simulation kernels, written once against the array API.

`theta` and `record` broadcast against each other with the parameter dimension d last; `grad` returns the
broadcast shape (..., d) and `value` the shape (...). Records are rows of the dataset array (n, d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from array_api_compat import array_namespace

from verify.errors import ParameterError


class Loss(Protocol):
    """A differentiable per-record loss l(theta; record)."""

    def grad(self, theta: Any, record: Any) -> Any: ...

    def value(self, theta: Any, record: Any) -> Any: ...


def _positive(name: str, v: float, strict: bool = True) -> float:
    v = float(v)
    if not math.isfinite(v) or v < 0 or (strict and v == 0):
        raise ParameterError(f"{name} must be a finite number {'>' if strict else '>='} 0, got {v}")
    return v


def _softplus(xp: Any, u: Any) -> Any:
    """log(1 + e^u) without overflow."""
    return xp.maximum(u, 0.0) + xp.log1p(xp.exp(-xp.abs(u)))


@dataclass(frozen=True)
class Quadratic:
    """(lam/2) ||theta - x||^2: lam-strongly convex and lam-smooth."""

    lam: float

    def __post_init__(self) -> None:
        _positive("lam", self.lam)

    def grad(self, theta: Any, record: Any) -> Any:
        return self.lam * (theta - record)

    def value(self, theta: Any, record: Any) -> Any:
        xp = array_namespace(theta, record)
        return 0.5 * self.lam * xp.sum((theta - record) ** 2, axis=-1)


@dataclass(frozen=True)
class LogisticRidge:
    """log(1 + exp(-<z, theta>)) + (reg/2) ||theta||^2, z = label * features (label folded into the record).

    reg-strongly convex and (reg + ||z||^2/4)-smooth.
    """

    reg: float

    def __post_init__(self) -> None:
        _positive("reg", self.reg, strict=False)

    def grad(self, theta: Any, record: Any) -> Any:
        xp = array_namespace(theta, record)
        margin = xp.sum(theta * record, axis=-1, keepdims=True)
        return -record * xp.exp(-_softplus(xp, margin)) + self.reg * theta  # sigmoid(-m) = exp(-softplus(m))

    def value(self, theta: Any, record: Any) -> Any:
        xp = array_namespace(theta, record)
        margin = xp.sum(theta * record, axis=-1)
        return _softplus(xp, -margin) + 0.5 * self.reg * xp.sum(theta * theta, axis=-1)


@dataclass(frozen=True)
class HuberRidge:
    """Huber_delta(||theta - x||) + (reg/2) ||theta||^2: gradient (theta - x) clipped to norm delta, + reg theta.

    reg-strongly convex, (1 + reg)-smooth.
    """

    delta: float
    reg: float

    def __post_init__(self) -> None:
        _positive("delta", self.delta)
        _positive("reg", self.reg, strict=False)

    def grad(self, theta: Any, record: Any) -> Any:
        xp = array_namespace(theta, record)
        r = theta - record
        norm = xp.sqrt(xp.sum(r * r, axis=-1, keepdims=True))
        return r * (self.delta / xp.maximum(norm, self.delta)) + self.reg * theta

    def value(self, theta: Any, record: Any) -> Any:
        xp = array_namespace(theta, record)
        r = theta - record
        norm = xp.sqrt(xp.sum(r * r, axis=-1))
        huber = xp.where(norm <= self.delta, 0.5 * norm * norm, self.delta * (norm - 0.5 * self.delta))
        return huber + 0.5 * self.reg * xp.sum(theta * theta, axis=-1)
