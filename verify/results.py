"""Frozen result records: ground truths, verdicts and per-point check results (JSON-ready)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from verify.display import certificate_line, point_html, point_line
from verify.display import params_text as params_text  # where it was defined before verify.display

RESULTS_SCHEMA = "verify/reporting/results.schema.json"  # named by every results file (is_results_file)


class Verdict(str, Enum):
    """Outcome of comparing a bound with the truth."""

    HOLDS = "HOLDS"
    VIOLATED = "VIOLATED"
    INCONCLUSIVE = "INCONCLUSIVE"


EXACT_REL = 1e-15  # the relative pad of an exact truth's interval: rounding to float


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
    `confidence`, and `ess` is the effective sample size behind it. `enclose(prec)`, where the method allows one,
    recomputes the truth as a rigorous Arb enclosure (verify.truth.numbers.Enclosure) at `prec` bits: the checker
    calls it before it reports a point VIOLATED. `refine()`, where the method has a finer level (a PLD bracket on a
    finer loss grid), returns a narrower truth of the same value: the checker asks for it only while the float
    filter cannot decide, so a coarse bracket that already decides costs nothing more. Neither is serialised (a
    pickled or JSON truth has none).
    """

    value: float
    lower: float
    upper: float
    method: Method
    detail: str
    confidence: float | None = None
    ess: float | None = None
    enclose: Callable[[int], Any] | None = field(default=None, compare=False, repr=False)
    refine: Callable[[], Truth] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if math.isnan(self.value) or not (self.lower <= self.value <= self.upper):
            raise ValueError(f"truth interval [{self.lower}, {self.upper}] does not contain {self.value}")

    def __reduce__(self):  # the enclosure closure stays in the process that made it
        return (Truth, (self.value, self.lower, self.upper, self.method, self.detail, self.confidence, self.ess))

    @classmethod
    def exact(cls, value: float, detail: str, rel: float = EXACT_REL,
              enclose: Callable[[int], Any] | None = None) -> Truth:
        """An exact value computed in high precision; `rel` covers rounding to float."""
        value = float(value)
        pad = abs(value) * rel if math.isfinite(value) else 0.0  # +inf: beyond float range, still exact
        return cls(value, value - pad, value + pad, Method.EXACT, detail, enclose=enclose)

    @staticmethod
    def larger(a: Truth, b: Truth, what: str) -> Truth:
        """max(a, b): the larger of two enclosed values is enclosed by the larger interval ends (e.g. the RDP of a
        pair is the larger of its two orders). Exact only if both are; rigorously enclosable if both are."""
        best = a if a.value >= b.value else b
        method = Method.EXACT if a.method is b.method is Method.EXACT else best.method
        enclose = None
        if a.enclose is not None and b.enclose is not None:
            def enclose(prec: int, a=a.enclose, b=b.enclose):
                return a(prec).larger(b(prec))
        return Truth(best.value, max(a.lower, b.lower), max(a.upper, b.upper), method,
                     f"{what}, larger of the two; {best.detail}", enclose=enclose)

    def to_dict(self) -> dict:
        return {"value": self.value, "lower": self.lower, "upper": self.upper, "method": self.method.value,
                "detail": self.detail, "confidence": self.confidence, "ess": self.ess}


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
class PointCertificate:
    """The rigorous re-check of a point (pipeline.rigorous): Arb enclosures of the truth and the bound, and the verdict
    they prove. Every VIOLATED point carries one; `filter_verdict` is what the float filter said before."""

    verdict: Verdict
    filter_verdict: Verdict
    truth_lower: str | None  # decimal strings, rounded outwards (exact Arb ends)
    truth_upper: str | None
    bound_lower: str | None
    bound_upper: str | None
    method: str  # how the truth was enclosed
    precision_bits: int
    reason: str  # why the enclosures could not decide, if they could not
    seconds: float

    def __repr__(self) -> str:
        return certificate_line(self)

    @property
    def overturned(self) -> bool:
        """The enclosures disagree with a float-filter VIOLATED."""
        return self.filter_verdict is Verdict.VIOLATED and self.verdict is not Verdict.VIOLATED

    def to_dict(self) -> dict:
        return {"verdict": self.verdict.value, "filter_verdict": self.filter_verdict.value,
                "truth": [self.truth_lower, self.truth_upper], "bound": [self.bound_lower, self.bound_upper],
                "method": self.method, "precision_bits": self.precision_bits, "reason": self.reason,
                "seconds": self.seconds}


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
    certificate: PointCertificate | None = None  # the rigorous re-check, where the float filter was not enough
    vacuous: bool = False  # the bound is +inf (an upper bound) or -inf (a lower bound): true of any truth

    def __repr__(self) -> str:
        return point_line(self)

    def _repr_html_(self) -> str:
        return point_html(self)

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
            "certificate": self.certificate.to_dict() if self.certificate else None,
        }
