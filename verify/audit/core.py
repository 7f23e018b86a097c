"""Audits: a lower confidence bound on a mechanism's eps(delta) from its own outputs (issue 51).

Black box (`audit_scores`, `audit`): the samples of each dataset are split at random into a selection part and an
evaluation part. The test (a projection for vector outputs, a direction and a threshold) is chosen on the selection
part alone, to maximise the bound it is expected to give on the evaluation part; its errors are then counted on the
evaluation part only, and their Clopper-Pearson upper bounds turn into a lower bound on eps (verify.audit.stats).
Nothing is chosen on the evaluation samples, so the bound holds at the stated confidence whatever the mechanism.

Grey box (`assume="gaussian"`): the outputs (or their projection on the selection part's difference of means) are
Gaussian with one variance under both datasets. The pooled two-sample t statistic is then noncentral-t with
noncentrality mu / sqrt(1/n + 1/n'), mu the Gaussian-DP parameter; its exact confidence bounds give a lower bound on
mu, hence on eps(delta) (a mu-GDP mechanism's eps(delta) increases in mu)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from verify.audit.result import AuditCounts, AuditResult, AuditTest
from verify.audit.stats import (
    check_level,
    clopper_pearson_upper,
    gaussian_epsilon_lower,
    noncentrality_bounds,
    rates_bound,
    sigma_interval,
)
from verify.errors import MemoryLimitExceeded, ParameterError, PluginError, VerifyError
from verify.limits import require_memory
from verify.progress import ProgressBar

SPLIT = 0.25  # the black box's selection part: 0.2-0.3 gave the median bound closest to the oracle at 1e4 samples
PILOT = 0.02  # the grey box's selection part for scalar outputs (it only fixes a sign; at least 2 samples)
LEANING = 0.9  # the share of 1 - confidence the grey box spends on the side its selection part points to
MAX_CANDIDATES = 4000  # thresholds tried on the selection part at most (quantiles of its scores beyond)
SHRINK = 0.5  # pseudo-count added to the selection part's error counts when predicting the evaluation's
MIN_SAMPLES = 8  # per dataset
ASSUMPTIONS = ("gaussian",)
CHUNK = 1000  # outputs drawn between two updates of the progress bar


def _scores(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be an array of real numbers") from None
    if array.ndim != 1 or array.size < MIN_SAMPLES:
        raise ParameterError(f"{name} must be a 1-D array of at least {MIN_SAMPLES} scores, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ParameterError(f"{name} holds NaN or infinite scores")
    return array


def _check_split(split: float) -> None:
    if not (isinstance(split, (int, float)) and 0 < split < 1):
        raise ParameterError(f"split (the selection part's share) must lie in (0, 1), got {split!r}")


def _check_claim(claim: float | None) -> None:
    if claim is not None and not (isinstance(claim, (int, float)) and claim >= 0 and not math.isnan(claim)):
        raise ParameterError(f"claim_epsilon must be a number >= 0, got {claim!r}")


def _divide(values: NDArray[np.float64], share: float, rng: np.random.Generator, least: int = 1
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A random selection part (`share` of the rows, at least `least` and leaving at least one) and the rest."""
    order = rng.permutation(len(values))
    cut = min(max(least, round(share * len(values))), len(values) - 1)
    return values[order[:cut]], values[order[cut:]]


def _expected_bound(sel_in: NDArray, sel_out: NDArray, thresholds: NDArray, n_in: int, n_out: int, delta: float,
                    confidence: float) -> NDArray[np.float64]:
    """For the tests "D when score > t", t in `thresholds`: the bound each would give on evaluation parts of n_in and
    n_out samples if their error rates were the selection part's (with SHRINK pseudo-counts)."""
    fn = np.searchsorted(np.sort(sel_in), thresholds, side="right")  # D outputs at or below t
    fp = len(sel_out) - np.searchsorted(np.sort(sel_out), thresholds, side="right")  # D' outputs above t
    fpr = (fp + SHRINK) / (len(sel_out) + 2 * SHRINK)
    fnr = (fn + SHRINK) / (len(sel_in) + 2 * SHRINK)
    return rates_bound(fpr * n_out, n_out, fnr * n_in, n_in, delta, confidence)


def _choose_threshold(sel_in: NDArray, sel_out: NDArray, n_in: int, n_out: int, delta: float, confidence: float
                      ) -> tuple[int, float]:
    """(direction, threshold) of the test expected to give the largest bound, from the selection part only (the
    thresholds tried lie halfway between its distinct scores)."""
    pooled = np.unique(np.concatenate([sel_in, sel_out]))
    if pooled.size > MAX_CANDIDATES:
        pooled = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, MAX_CANDIDATES)))
    if pooled.size > 1:  # thresholds halfway between the selection part's scores
        pooled = (pooled[:-1] + pooled[1:]) / 2
    best = (-1.0, 1, float(pooled[0]))
    for direction in (1, -1):
        cand = direction * pooled
        expected = _expected_bound(direction * sel_in, direction * sel_out, cand, n_in, n_out, delta, confidence)
        i = int(np.argmax(expected))
        if expected[i] > best[0]:
            best = (float(expected[i]), direction, float(pooled[i]))
    return best[1], best[2]


def _threshold_audit(sel_in: NDArray, sel_out: NDArray, ev_in: NDArray, ev_out: NDArray, *, delta: float,
                     confidence: float, claim_epsilon: float | None, threshold: float | None = None,
                     score: str = "output", projection: tuple[float, ...] | None = None) -> AuditResult:
    n_in, n_out = len(ev_in), len(ev_out)
    if threshold is None:
        direction, threshold = _choose_threshold(sel_in, sel_out, n_in, n_out, delta, confidence)
    else:
        direction = 1
    false_pos = int(np.count_nonzero(direction * ev_out > direction * threshold))
    false_neg = int(n_in - np.count_nonzero(direction * ev_in > direction * threshold))
    level = (1.0 - confidence) / 2.0
    fpr_u = float(clopper_pearson_upper(false_pos, n_out, level))
    fnr_u = float(clopper_pearson_upper(false_neg, n_in, level))
    bound = float(rates_bound(false_pos, n_out, false_neg, n_in, delta, confidence))
    power = float(rates_bound(0, n_out, 0, n_in, delta, confidence))
    return AuditResult(
        epsilon_lower=bound, delta=float(delta), confidence=float(confidence), claim_epsilon=claim_epsilon,
        refutes=claim_epsilon is not None and bound > claim_epsilon, power=power,
        test=AuditTest("threshold", score, direction, float(threshold), projection),
        counts=AuditCounts(len(sel_in), len(sel_out), n_in, n_out, false_pos, false_neg),
        fpr_upper=fpr_u, fnr_upper=fnr_u)


def audit_scores(in_scores: ArrayLike, out_scores: ArrayLike, *, delta: float, confidence: float = 0.95,
                 threshold: float | None = None, split: float = SPLIT, seed: int = 0,
                 claim_epsilon: float | None = None) -> AuditResult:
    """A lower confidence bound on eps(delta) from membership scores: `in_scores` of outputs on D (the dataset with
    the record), `out_scores` on D'. Without `threshold`, a random `split` share of each is the selection part that
    chooses the test's direction and threshold, and the rest evaluates it. With `threshold` (chosen before seeing
    these scores) every score is evaluated against the test "D when score > threshold"."""
    check_level(delta, confidence)
    _check_claim(claim_epsilon)
    ins, outs = _scores(in_scores, "in_scores"), _scores(out_scores, "out_scores")
    if threshold is not None:
        if not math.isfinite(threshold):
            raise ParameterError(f"threshold must be a finite number, got {threshold!r}")
        empty = np.empty(0)
        return _threshold_audit(empty, empty, ins, outs, delta=delta, confidence=confidence,
                                claim_epsilon=claim_epsilon, threshold=float(threshold), score="given")
    _check_split(split)
    rng = np.random.default_rng(seed)
    sel_in, ev_in = _divide(ins, split, rng)
    sel_out, ev_out = _divide(outs, split, rng)
    return _threshold_audit(sel_in, sel_out, ev_in, ev_out, delta=delta, confidence=confidence,
                            claim_epsilon=claim_epsilon)


def epsilon_oracle(fpr: ArrayLike, fnr: ArrayLike, *, samples: int, delta: float, confidence: float = 0.95) -> float:
    """The oracle bound: the largest bound among the tests whose TRUE error rates are (fpr[i], fnr[i]) (for example a
    threshold family's on the true distributions), each evaluated on `samples` outputs per dataset with the audit's
    Clopper-Pearson arithmetic at its expected error counts. No audit with that many evaluation samples can
    expect more from these tests."""
    check_level(delta, confidence)
    a, b = np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float)
    return float(np.max(rates_bound(samples * a, samples, samples * b, samples, delta, confidence)))


# ---- sampling a mechanism -----------------------------------------------------------------------------------------


def _vectorized(mechanism: Callable[..., Any]) -> bool:
    """Whether `mechanism` says it draws many outputs at once: `mechanism.vectorized = True`, or a `batch` keyword."""
    if getattr(mechanism, "vectorized", False):
        return True
    try:
        return "batch" in inspect.signature(mechanism).parameters
    except (TypeError, ValueError):
        return False


def _call(mechanism: Callable[..., Any], *args: Any, **kwargs: Any) -> NDArray[np.float64]:
    try:
        out = mechanism(*args, **kwargs)
    except (VerifyError, KeyboardInterrupt):  # a cap (deadline, memory) or the user's Ctrl-C
        raise
    except MemoryError:
        raise MemoryLimitExceeded("the mechanism ran out of memory") from None
    except BaseException as err:  # noqa: BLE001 - anything the user's code raises (SystemExit too) is its error
        raise PluginError(f"the mechanism raised {type(err).__name__}: {err}") from err
    try:
        return np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise PluginError(f"the mechanism returned {type(out).__name__}, not a number or a 1-D array") from None


def draw(mechanism: Callable[..., Any], data: Any, samples: int, rng: np.random.Generator, label: str = "",
         progress: ProgressBar | None = None) -> NDArray[np.float64]:
    """`samples` outputs of `mechanism(data, rng)`: rows of a (samples,) or (samples, k) array. A vectorised mechanism
    is called once as `mechanism(data, rng, batch=samples)`; any other once per output."""
    if _vectorized(mechanism):
        out = _call(mechanism, data, rng, batch=samples)
        if out.ndim not in (1, 2) or out.shape[0] != samples:
            raise PluginError(f"the vectorised mechanism returned shape {out.shape} for batch={samples}: expected "
                              f"({samples},) or ({samples}, k)")
    else:
        first = _call(mechanism, data, rng)
        if first.ndim > 1:
            raise PluginError(f"the mechanism returned an array of shape {first.shape}: give a number or a 1-D array")
        require_memory(8.0 * samples * max(1, first.size), "the audit's samples")
        out = np.empty((samples, *first.shape))
        out[0] = first
        for i in range(1, samples):
            value = _call(mechanism, data, rng)
            if value.shape != first.shape:
                raise PluginError(f"the mechanism returned shape {value.shape} after {first.shape}")
            out[i] = value
            if progress is not None and i % CHUNK == 0:
                progress("samples", label, i, samples)
    if not np.all(np.isfinite(out)):
        raise PluginError("the mechanism returned NaN or an infinite output")
    return out


def _projected(sel_in: NDArray, sel_out: NDArray, ev_in: NDArray, ev_out: NDArray
               ) -> tuple[NDArray, NDArray, NDArray, NDArray, tuple[float, ...]]:
    """Vector outputs as one score: their projection on the selection part's difference of means (unit length)."""
    w = sel_in.mean(axis=0) - sel_out.mean(axis=0)
    norm = float(np.linalg.norm(w))
    w = w / norm if norm > 0 else np.eye(len(w))[0]
    return sel_in @ w, sel_out @ w, ev_in @ w, ev_out @ w, tuple(float(v) for v in w)


def _gaussian_audit(sel_in: NDArray, sel_out: NDArray, ev_in: NDArray, ev_out: NDArray, *, delta: float,
                    confidence: float, claim_epsilon: float | None, projection: tuple[float, ...] | None
                    ) -> AuditResult:
    """The grey box on scores: the sign of the selection part's difference of means gets LEANING of 1 - confidence,
    the other sign the rest (a two-sided interval on the noncentrality, so the bound on |mu| is valid either way)."""
    direction = 1 if sel_in.mean() >= sel_out.mean() else -1
    x, y = direction * ev_in, direction * ev_out
    n1, n0 = len(x), len(y)
    df = n1 + n0 - 2
    pooled = (float(np.sum((x - x.mean()) ** 2)) + float(np.sum((y - y.mean()) ** 2))) / df
    if not pooled > 0:
        raise ParameterError("the outputs do not vary: they cannot be Gaussian (assume='gaussian')")
    scale = math.sqrt(1.0 / n1 + 1.0 / n0)
    t = (float(x.mean()) - float(y.mean())) / (math.sqrt(pooled) * scale)
    low, high = noncentrality_bounds(t, df, LEANING * (1.0 - confidence), (1.0 - LEANING) * (1.0 - confidence))
    mu_lower = max(0.0, low, -high) * scale
    bound = gaussian_epsilon_lower(delta, mu_lower)
    return AuditResult(
        epsilon_lower=bound, delta=float(delta), confidence=float(confidence), claim_epsilon=claim_epsilon,
        refutes=claim_epsilon is not None and bound > claim_epsilon, power=math.inf,
        test=AuditTest("gaussian", "projection" if projection else "mean difference", direction, None, projection),
        counts=AuditCounts(len(sel_in), len(sel_out), n1, n0), assume="gaussian", mu_lower=mu_lower,
        sigma_interval=sigma_interval(pooled, df, confidence))


def audit(mechanism: Callable[..., Any], d: Any, d_prime: Any, *, samples: int, delta: float,
          confidence: float = 0.95, claim_epsilon: float | None = None, seed: int = 0, assume: str | None = None
          ) -> AuditResult:
    """Audit `mechanism(data, rng)` (rng a numpy Generator; one output, a number or a 1-D array) on the neighbouring
    datasets `d` and `d_prime`: `samples` outputs on each, a lower confidence bound on eps(delta) from them (black
    box, or grey box with `assume="gaussian"`), and whether it refutes `claim_epsilon`. A mechanism with
    `mechanism.vectorized = True` or a `batch` keyword is called once per dataset as `mechanism(data, rng,
    batch=samples)`, returning all outputs as rows."""
    check_level(delta, confidence)
    _check_claim(claim_epsilon)
    if assume is not None and assume not in ASSUMPTIONS:
        raise ParameterError(f"assume must be one of {', '.join(ASSUMPTIONS)} or None, got {assume!r}")
    if not (isinstance(samples, (int, np.integer)) and samples >= MIN_SAMPLES):
        raise ParameterError(f"samples must be an integer >= {MIN_SAMPLES}, got {samples!r}")
    rng_in, rng_out, rng_split = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    bar = ProgressBar()
    try:
        outs_in = draw(mechanism, d, int(samples), rng_in, "d", bar)
        outs_out = draw(mechanism, d_prime, int(samples), rng_out, "d_prime", bar)
    finally:
        bar.close()
    if outs_in.shape[1:] != outs_out.shape[1:]:
        raise PluginError(f"the mechanism's outputs differ in shape between d {outs_in.shape[1:]} and d_prime "
                          f"{outs_out.shape[1:]}")
    vector = outs_in.ndim == 2
    share = SPLIT if (assume is None or vector) else PILOT
    least = 2 if assume is not None else 1
    sel_in, ev_in = _divide(outs_in, share, rng_split, least)
    sel_out, ev_out = _divide(outs_out, share, rng_split, least)
    projection = None
    if vector:
        sel_in, sel_out, ev_in, ev_out, projection = _projected(sel_in, sel_out, ev_in, ev_out)
    if assume == "gaussian":
        return _gaussian_audit(sel_in, sel_out, ev_in, ev_out, delta=delta, confidence=confidence,
                               claim_epsilon=claim_epsilon, projection=projection)
    return _threshold_audit(sel_in, sel_out, ev_in, ev_out, delta=delta, confidence=confidence,
                            claim_epsilon=claim_epsilon, score="projection" if vector else "output",
                            projection=projection)
