"""Issue 51's anchors, side by side: the false-alarm rate of auditing estimators on exact mechanisms audited at their
TRUE eps(delta) (the share of runs whose lower bound exceeds the truth; nominal 5% at 95% confidence), and their median
bound. Run: `python benchmarks/audit_anchors.py [RUNS] [SAMPLES]` (default 1000 runs of 1000 outputs per dataset);
prints a Markdown table. Recorded, not asserted (the validity tests assert verify.audit's side).

  - verify.audit (black box: selection/evaluation split, Clopper-Pearson, Bonferroni over the two rates);
  - max-over-thresholds: the common practice, every threshold tried on the SAME scores that are then evaluated, with
    the same Clopper-Pearson arithmetic (each rate's upper bound at (1 - c)/2) and the best bound reported;
  - TF-Privacy's `EpsilonLowerBound` (tensorflow_privacy/privacy/privacy_tests/epsilon_lower_bound.py), re-implemented
    here for its Clopper-Pearson and Katz-log ratio bounds (alpha = 0.05, two-sided thresholds, all thresholds of the
    same scores, the largest of log(tpr/fpr), log(tnr/fnr) and the reversed ratios): tensorflow-privacy needs
    TensorFlow, and its wheel (0.9.0) does not ship privacy_tests/. Its bound is for delta = 0, so it is run only on
    the pure-DP cases (and the mechanism that leaks nothing);
  - jax_privacy's `CanaryScoreAuditor` (jax_privacy/auditing.py, the library's own code: it imports numpy, scipy
    and dp_accounting only, not jax): `epsilon_from_gdp` (Bonferroni over 2n thresholds, then the largest |mu| of
    either direction from the rates' UPPER bounds), and `epsilon_clopper_pearson` with its default Bonferroni
    threshold strategy and with `Split()`. Found as an installed `jax_privacy`, else from the file or wheel that
    env VERIFY_JAX_PRIVACY names (`pip download --no-deps jax-privacy`); skipped where neither is there.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import zipfile
from collections.abc import Callable
from types import ModuleType

import numpy as np
from scipy import optimize, stats

from verify.audit import audit_scores
from verify.audit.stats import clopper_pearson_upper, epsilon_from_rates

CONFIDENCE = 0.95


def gaussian_truth(mu: float, delta: float) -> float:
    if mu == 0:
        return 0.0
    def excess(eps: float) -> float:
        return float(stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)) - delta
    return optimize.brentq(excess, 0.0, mu * mu / 2 + 10 * mu, xtol=1e-14) if excess(0.0) > 0 else 0.0


def _errors(ins: np.ndarray, outs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false positives, false negatives) of "in when score > t" at every threshold between the pooled scores."""
    pooled = np.unique(np.concatenate([ins, outs]))
    t = np.concatenate([[pooled[0] - 1], (pooled[:-1] + pooled[1:]) / 2, [pooled[-1] + 1]])
    fp = len(outs) - np.searchsorted(np.sort(outs), t, side="right")
    fn = np.searchsorted(np.sort(ins), t, side="right")
    return fp, fn


def max_over_thresholds(ins: np.ndarray, outs: np.ndarray, delta: float) -> float:
    """The best bound over every threshold and both directions, chosen on the evaluated scores themselves."""
    level = (1 - CONFIDENCE) / 2
    fp, fn = _errors(ins, outs)
    best = 0.0
    for a_count, b_count in ((fp, fn), (len(outs) - fp, len(ins) - fn)):  # "in when above t" and "when below"
        a = clopper_pearson_upper(a_count, len(outs), level)
        b = clopper_pearson_upper(b_count, len(ins), level)
        best = max(best, float(np.max(epsilon_from_rates(a, b, delta))))
    return best


def tf_privacy(ins: np.ndarray, outs: np.ndarray, method: str, alpha: float = 0.05) -> float:
    """EpsilonLowerBound(ins, outs, alpha, two_sided_threshold=True).compute_epsilon_lower_bound(method)[0]."""
    fp, fn = _errors(ins, outs)
    tp, n_pos, n_neg = len(ins) - fn, len(ins), len(outs)
    tn = n_neg - fp
    z = stats.norm.ppf(alpha)

    def ratio(tp: np.ndarray, fp: np.ndarray, pos: int, neg: int) -> np.ndarray:
        tp, fp = tp.astype(float), fp.astype(float)
        if method == "clopper-pearson":  # statsmodels' proportion_confint(..., alpha, 'beta'): alpha/2 each end
            p1 = np.where(tp > 0, stats.beta.ppf(alpha / 2, tp, pos - tp + 1), 0.0)
            p0 = np.where(fp < neg, stats.beta.ppf(1 - alpha / 2, fp + 1, neg - fp), 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where((p1 <= 0) | (p0 >= 1), 0.0, p1 / p0)
        both_max = (tp == pos) & (fp == neg)  # katz-log
        tp = np.where(both_max, pos - 0.5, tp)
        fp = np.where(both_max, neg - 0.5, fp)
        tp0 = tp == 0
        fp = np.where(fp == 0, 0.5, fp)
        tpr, fpr = tp / pos, fp / neg
        with np.errstate(divide="ignore", invalid="ignore"):
            value = tpr / fpr * np.exp(z * np.sqrt((1 - tpr) / tp + (1 - fpr) / fp))
        return np.where(tp0, 0.0, value)

    ratios = np.concatenate([ratio(tp, fp, n_pos, n_neg), ratio(tn, fn, n_neg, n_pos),
                             ratio(fp, tp, n_neg, n_pos), ratio(fn, tn, n_pos, n_neg)])
    positive = ratios[ratios > 0]
    return float(np.log(positive.max())) if positive.size else -math.inf


def jax_privacy_auditing() -> ModuleType | None:
    """jax_privacy.auditing: installed, or loaded from the auditing.py (or the wheel) that VERIFY_JAX_PRIVACY names."""
    try:
        from jax_privacy import auditing  # noqa: PLC0415 - optional, heavy
        return auditing
    except ImportError:
        pass
    where = os.environ.get("VERIFY_JAX_PRIVACY")
    if not where:
        return None
    if where.endswith(".whl"):
        with zipfile.ZipFile(where) as wheel:
            source = wheel.read("jax_privacy/auditing.py").decode()
    else:
        source = open(where).read()  # noqa: SIM115 - one read
    spec = importlib.util.spec_from_loader("jax_privacy_auditing", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    exec(compile(source, where, "exec"), module.__dict__)  # noqa: S102 - the library's own code, as published
    return module


CASES: list[tuple[str, Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]], float, float]] = [
    ("Gaussian mu=0 (leaks nothing), delta=1e-5", lambda r, n: (r.normal(size=n), r.normal(size=n)), 1e-5, 0.0),
    ("Gaussian mu=0.5, delta=1e-2", lambda r, n: (r.normal(0.5, 1, n), r.normal(size=n)), 1e-2,
     gaussian_truth(0.5, 1e-2)),
    ("Gaussian mu=1, delta=0.1", lambda r, n: (r.normal(1, 1, n), r.normal(size=n)), 0.1, gaussian_truth(1.0, 0.1)),
    ("Laplace Delta/b=1, delta=0", lambda r, n: (r.laplace(1, 1, n), r.laplace(0, 1, n)), 0.0, 1.0),
    ("Laplace Delta/b=0.5, delta=0", lambda r, n: (r.laplace(0.5, 1, n), r.laplace(0, 1, n)), 0.0, 0.5),
]


def main(runs: int, samples: int) -> None:
    jp = jax_privacy_auditing()
    print(f"{runs} runs of {samples} outputs per dataset, audited at the true eps; nominal false-alarm rate "
          f"{1 - CONFIDENCE:.0%}\n")
    print("| mechanism | true eps | estimator | false alarms | median bound |")
    print("|---|---|---|---|---|")
    for name, draw, delta, truth in CASES:
        found: dict[str, list[float]] = {"verify.audit": [], "max-over-thresholds": []}
        if delta == 0 or truth == 0:
            found.update({"TF-Privacy CP (re-impl.)": [], "TF-Privacy Katz-log (re-impl.)": []})
        if jp is not None:
            found.update({"jax_privacy CP (Bonferroni)": [], "jax_privacy CP (Split)": []})
            if delta > 0:
                found["jax_privacy epsilon_from_gdp"] = []
        for seed in range(runs):
            ins, outs = draw(np.random.default_rng(seed), samples)
            found["verify.audit"].append(audit_scores(ins, outs, delta=delta, seed=seed).epsilon_lower)
            found["max-over-thresholds"].append(max_over_thresholds(ins, outs, delta))
            if "TF-Privacy CP (re-impl.)" in found:
                found["TF-Privacy CP (re-impl.)"].append(tf_privacy(ins, outs, "clopper-pearson"))
                found["TF-Privacy Katz-log (re-impl.)"].append(tf_privacy(ins, outs, "katz-log"))
            if jp is not None:
                auditor = jp.CanaryScoreAuditor(ins, outs)
                significance = 1 - CONFIDENCE
                found["jax_privacy CP (Bonferroni)"].append(auditor.epsilon_clopper_pearson(significance, delta))
                found["jax_privacy CP (Split)"].append(auditor.epsilon_clopper_pearson(
                    significance, delta, threshold_strategy=jp.Split(seed=seed)))
                if delta > 0:
                    found["jax_privacy epsilon_from_gdp"].append(auditor.epsilon_from_gdp(significance, delta))
        for estimator, values in found.items():
            v = np.array(values)
            print(f"| {name} | {truth:.4g} | {estimator} | {np.mean(v > truth + 1e-12):.1%} | "
                  f"{np.median(v):.3f} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
