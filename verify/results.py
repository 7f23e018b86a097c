"""Frozen result records: ground truths, verdicts and per-point check results (JSON-ready)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import Enum


class Verdict(str, Enum):
    """Outcome of comparing a bound with the truth."""

    HOLDS = "HOLDS"
    VIOLATED = "VIOLATED"
    INCONCLUSIVE = "INCONCLUSIVE"


class Method(str, Enum):
    """How a ground truth was obtained."""

    EXACT = "exact"  # closed form or exact recursion, evaluated in high precision
    GRID = "grid"  # density-grid propagation with a discretisation error bound
    SERIES = "series"  # convergent series / quadrature with an error bound
    MONTE_CARLO = "monte-carlo"  # estimate with a confidence interval


@dataclass(frozen=True)
class Truth:
    """A ground-truth value with a two-sided interval that contains it.

    For exact methods the interval only covers rounding; for estimates it is a confidence interval at
    `confidence`, and `ess` is the effective sample size behind it.
    """

    value: float
    lower: float
    upper: float
    method: Method
    detail: str
    confidence: float | None = None
    ess: float | None = None

    def __post_init__(self) -> None:
        if math.isnan(self.value) or not (self.lower <= self.value <= self.upper):
            raise ValueError(f"truth interval [{self.lower}, {self.upper}] does not contain {self.value}")

    @classmethod
    def exact(cls, value: float, detail: str, rel: float = 1e-15) -> Truth:
        """An exact value computed in high precision; `rel` covers rounding to float."""
        value = float(value)
        pad = abs(value) * rel if math.isfinite(value) else 0.0  # +inf: beyond float range, still exact
        return cls(value, value - pad, value + pad, Method.EXACT, detail)

    @staticmethod
    def larger(a: Truth, b: Truth, what: str) -> Truth:
        """max(a, b): the larger of two enclosed values is enclosed by the larger interval ends (e.g. the RDP of a
        pair is the larger of its two orders). Exact only if both are."""
        best = a if a.value >= b.value else b
        method = Method.EXACT if a.method is b.method is Method.EXACT else best.method
        return Truth(best.value, max(a.lower, b.lower), max(a.upper, b.upper), method,
                     f"{what}, larger of the two; {best.detail}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["method"] = self.method.value
        return d


@dataclass(frozen=True)
class CompanionValue:
    """Another catalog bound on the same quantity, evaluated at the same point (e.g. a lower bound
    shown beside an upper bound, so that a point reads lower <= truth <= upper)."""

    theorem: str
    direction: str
    value: float
    verdict: Verdict

    def to_dict(self) -> dict:
        return {"theorem": self.theorem, "direction": self.direction, "value": self.value,
                "verdict": self.verdict.value}


@dataclass(frozen=True)
class PointResult:
    """One theorem checked at one parameter point of one instance family."""

    theorem: str
    family: str
    params: dict[str, float]
    bound: float
    truth: Truth
    verdict: Verdict
    margin: float  # signed slack: >= 0 when the claim holds at this point (relative to the truth scale)
    ratio: float | None  # bound / truth (tightness); None where the truth is 0
    theorem_values: dict[str, float] = field(default_factory=dict)  # theorem symbols after binding
    companions: tuple[CompanionValue, ...] = ()
    origin: str = "grid"  # "grid" (the application's default grid) or "falsifier" (found by the search)

    @property
    def lower(self) -> CompanionValue | None:
        """The largest companion lower bound valid at this point."""
        return max((c for c in self.companions if c.direction == "lower"), key=lambda c: c.value, default=None)

    def to_dict(self) -> dict:
        return {
            "theorem": self.theorem,
            "family": self.family,
            "params": self.params,
            "theorem_values": self.theorem_values,
            "bound": self.bound,
            "truth": self.truth.to_dict(),
            "verdict": self.verdict.value,
            "margin": self.margin,
            "ratio": self.ratio,
            "companions": [c.to_dict() for c in self.companions],
            "origin": self.origin,
        }
