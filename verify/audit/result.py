"""What an audit returns: the test it pre-registered, its counts, and the lower bound on eps(delta) with its power."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class AuditTest:
    """The test chosen on the selection samples, before any evaluation sample was looked at. `score`: how an output
    becomes a number ("output", "projection" on `projection`, the selection half's difference of means, or
    "mean difference" for the Gaussian grey box); `direction` +1 guesses D (the first dataset) when the score is
    above `threshold`, -1 when below (for the grey box: the sign of the difference the bound leans on)."""

    kind: str  # "threshold" (black box) or "gaussian" (grey box)
    score: str
    direction: int
    threshold: float | None = None
    projection: tuple[float, ...] | None = None


@dataclass(frozen=True)
class AuditCounts:
    """Sample sizes per dataset in the selection and evaluation parts, and the test's errors on the evaluation part
    (None for the grey box, which counts no errors): false positives are D' outputs taken for D, false negatives D
    outputs taken for D'."""

    selection_in: int
    selection_out: int
    evaluation_in: int
    evaluation_out: int
    false_positives: int | None = None
    false_negatives: int | None = None


@dataclass(frozen=True)
class AuditResult:
    """A lower confidence bound on eps(delta) of a mechanism from its samples: with probability at least `confidence`
    over the samples, the mechanism is not (eps, delta)-DP for any eps < `epsilon_lower`. `refutes`: a claim was
    given and the bound exceeds it. `power`: the largest bound these sample sizes could have given at this confidence
    (no errors at all on the evaluation part; infinite for the grey box): a bound near it is "no evidence beyond what
    the samples can show", and a claim at or above it cannot be refuted by them. `fpr_upper`/`fnr_upper`: the error
    rates' Clopper-Pearson upper bounds (black box). Grey box (`assume="gaussian"`): `mu_lower` bounds the Gaussian-DP
    parameter |m_D - m_D'| / sigma below, and `sigma_interval` is a separate confidence interval on the noise scale
    sigma (at `confidence`, from the evaluation residuals)."""

    epsilon_lower: float
    delta: float
    confidence: float
    claim_epsilon: float | None
    refutes: bool
    power: float
    test: AuditTest
    counts: AuditCounts
    fpr_upper: float | None = None
    fnr_upper: float | None = None
    assume: str | None = None
    mu_lower: float | None = None
    sigma_interval: tuple[float, float] | None = None

    @property
    def decidable(self) -> bool:
        """False when a claim is given that even a perfect test on these samples could not refute (power <= claim)."""
        return self.claim_epsilon is None or self.power > self.claim_epsilon

    @property
    def verdict(self) -> str:
        """REFUTED, CONSISTENT, UNDECIDABLE (a claim at or above the power) or BOUND (no claim)."""
        if self.claim_epsilon is None:
            return "BOUND"
        if self.refutes:
            return "REFUTED"
        return "CONSISTENT" if self.decidable else "UNDECIDABLE"

    def __str__(self) -> str:
        how = "grey box, Gaussian" if self.assume == "gaussian" else "black box"
        power = "" if math.isinf(self.power) else f"; these samples could show at most {self.power:.4g}"
        text = (f"eps(delta={self.delta:g}) >= {self.epsilon_lower:.4g} at {self.confidence:.0%} confidence "
                f"({how}{power})")
        if self.claim_epsilon is not None:
            text += f": {self.verdict} for the claim eps = {self.claim_epsilon:g}"
        return text
