"""Audit a DP-SGD implementation against its claimed schedule (issue 51): train it many times with and without a canary
record, turn each run's release into a score, bound eps(delta) below from the scores (`verify.audit.audit`), and set
the bound against the certified accountant's bracket on eps(delta) of the claimed (q, sigma, steps).

`train(data, rng)` runs the user's DP-SGD once and returns what it releases (the final parameters, or the whole
trajectory). The batched form `train(data, rng, runs=N)` (or `train.vectorized = True`, called with `runs=N`) returns
the N runs' releases as rows of an (N, ...) array: numpy vectorised over runs, it trains hundreds of models in the time
of one."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verify import accountant
from verify.audit.core import MIN_SAMPLES, audit
from verify.audit.result import AuditResult
from verify.errors import ParameterError, PluginError, VerifyError

NEIGHBOURING = ("add_remove", "replace_one")


@dataclass(frozen=True)
class DPSGDAuditResult:
    """An audit of a DP-SGD implementation: `audit` is the lower bound from `runs` trainings per dataset (its
    `epsilon_lower`, test, counts and power); `claim` the claimed (q, sigma, steps) and `claim_lower`/`claim_upper`
    the certified bracket on its eps(delta) (add/remove neighbours). REFUTED: the bound exceeds the bracket's upper
    end, so the implementation is not as private as its claim, at `audit.confidence`. `in_scores`/`out_scores`: the
    runs' scores with and without the canary (for the trade-off figure)."""

    audit: AuditResult
    claim: tuple[float, float, int]
    claim_lower: float
    claim_upper: float
    runs: int
    neighbouring: str
    in_scores: tuple[float, ...]
    out_scores: tuple[float, ...]

    @property
    def epsilon_lower(self) -> float:
        return self.audit.epsilon_lower

    @property
    def refutes(self) -> bool:
        return self.audit.epsilon_lower > self.claim_upper

    @property
    def verdict(self) -> str:
        """REFUTED, CONSISTENT, or UNDECIDABLE (not refuted, and even a perfect test on these runs could not have
        shown more than the claim's upper end: give more runs)."""
        if self.refutes:
            return "REFUTED"
        return "CONSISTENT" if self.audit.power > self.claim_upper else "UNDECIDABLE"

    def __str__(self) -> str:
        q, sigma, steps = self.claim
        return (f"DP-SGD, {self.runs} runs per dataset: eps(delta={self.audit.delta:g}) >= "
                f"{self.audit.epsilon_lower:.4g} at {self.audit.confidence:.0%} confidence: {self.verdict}\n"
                f"  claim q={q:g}, sigma={sigma:g}, steps={steps} ({self.neighbouring}): eps in "
                f"[{self.claim_lower:.4g}, {self.claim_upper:.4g}], certified")


def _batched(train: Callable[..., Any]) -> bool:
    if getattr(train, "vectorized", False):
        return True
    try:
        return "runs" in inspect.signature(train).parameters
    except (TypeError, ValueError):
        return False


def _claim(claim: Any) -> tuple[float, float, int]:
    try:
        q, sigma, steps = claim
    except (TypeError, ValueError):
        raise ParameterError(f"claim must be (q, sigma, steps), got {claim!r}") from None
    phase = accountant.Phase(q, sigma, steps)
    return phase.q, phase.sigma, phase.steps


def neighbours(dataset: Any, canary: Any, neighbouring: str) -> tuple[Any, Any]:
    """(D, D'): add/remove puts the canary after the dataset's records (D) or leaves it out (D' = the dataset);
    replace-one puts it in place of the dataset's last record. A numpy array gains a row; a list an item."""
    if neighbouring not in NEIGHBOURING:
        raise ParameterError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}, got {neighbouring!r}")
    keep = dataset if neighbouring == "add_remove" else dataset[:-1]
    if len(dataset) == 0 and neighbouring == "replace_one":
        raise ParameterError("replace_one needs a dataset with at least one record to replace")
    if isinstance(dataset, np.ndarray):
        return np.concatenate([keep, np.asarray(canary, dtype=dataset.dtype)[None]]), dataset
    return list(keep) + [canary], dataset


def _scored(release: NDArray[np.float64], score: Callable[[Any], float] | None) -> NDArray[np.float64]:
    """One score per run (rows of `release`): `score(row)`, or without one the release itself, flattened."""
    if score is None:
        return release.reshape(len(release), -1) if release.ndim > 2 else release
    try:
        return np.array([float(score(row)) for row in release])
    except (VerifyError, KeyboardInterrupt):
        raise
    except BaseException as err:  # noqa: BLE001 - the user's score function's error is its own
        raise PluginError(f"score raised {type(err).__name__}: {err}") from err


def audit_dpsgd(train: Callable[..., Any], dataset: Any, canary: Any, *, runs: int, claim: Any, delta: float,
                confidence: float = 0.95, seed: int = 0, score: Callable[[Any], float] | None = None,
                assume: str | None = None, neighbouring: str = "add_remove") -> DPSGDAuditResult:
    """Train `train(data, rng)` `runs` times on D (the dataset with the canary) and on D' (without it; with
    `neighbouring="replace_one"`, D has the canary in place of the last record), score each run's release
    (`score(release)`, or without one: the release itself, and for vectors its projection on the selection runs'
    difference of means, which for a gradient canary is the canary's clipped-gradient direction), and bound eps(delta)
    below (`assume="gaussian"`: the Gaussian grey box, valid where the scores are Gaussian, e.g. full-batch DP-SGD on
    a linear model). The bound is set against the accountant's certified bracket on the claimed (q, sigma, steps)."""
    q, sigma, steps = _claim(claim)
    if not (isinstance(runs, (int, np.integer)) and runs >= MIN_SAMPLES):
        raise ParameterError(f"runs must be an integer >= {MIN_SAMPLES}, got {runs!r}")
    if not callable(train) or (score is not None and not callable(score)):
        raise ParameterError("train (and score, when given) must be callable")
    d, d_prime = neighbours(dataset, canary, neighbouring)
    bracket = accountant.epsilon(delta, [(q, sigma, steps)])
    batched = _batched(train)
    kept: dict[int, NDArray[np.float64]] = {}

    def mechanism(data: Any, rng: np.random.Generator, batch: int = 1) -> NDArray[np.float64]:
        release = np.asarray(train(data, rng, runs=batch) if batched else
                             [np.asarray(train(data, rng), dtype=float) for _ in range(batch)], dtype=float)
        if release.ndim == 0 or release.shape[0] != batch:
            raise PluginError(f"train returned shape {release.shape} for runs={batch}: expected ({batch}, ...)")
        out = _scored(release, score)
        kept[id(data)] = out
        return out

    result = audit(mechanism, d, d_prime, samples=int(runs), delta=delta, confidence=confidence,
                   claim_epsilon=bracket.upper, seed=seed, assume=assume)
    scores_in, scores_out = kept[id(d)], kept[id(d_prime)]
    if result.test.projection is not None:
        w = np.asarray(result.test.projection)
        scores_in, scores_out = scores_in @ w, scores_out @ w
    return DPSGDAuditResult(
        audit=result, claim=(q, sigma, steps), claim_lower=bracket.lower, claim_upper=bracket.upper, runs=int(runs),
        neighbouring=neighbouring, in_scores=tuple(float(v) for v in scores_in),
        out_scores=tuple(float(v) for v in scores_out))


def gaussian_claim_mu(claim: tuple[float, float, int]) -> float | None:
    """The claim's Gaussian-DP parameter where it is exact (full batch, q = 1: sqrt(steps) / sigma), else None."""
    q, sigma, steps = claim
    return math.sqrt(steps) / sigma if q == 1 else None
