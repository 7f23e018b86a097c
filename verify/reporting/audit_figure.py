"""The figure of an audit (issue 51): the empirical trade-off points of the threshold tests on its scores, each with
its exact Clopper-Pearson confidence box, beside the claimed privacy's trade-off curve (Gaussian DP:
beta = Phi(Phi^-1(1 - alpha) - mu); (eps, delta)-DP: beta = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta -
alpha))). A box wholly below the claimed curve is a test no mechanism with the claimed privacy could pass."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402 - the backend is chosen first
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from verify.errors import ParameterError  # noqa: E402

POINTS = 24  # thresholds drawn: quantiles of the pooled scores


@dataclass(frozen=True)
class TradeoffPoints:
    """Per threshold t (test: "with the record" when direction * score > direction * t): alpha, the false-positive
    rate on the scores without the record, beta, the false-negative rate on those with it, and each rate's two-sided
    Clopper-Pearson interval at `confidence`."""

    thresholds: NDArray[np.float64]
    alpha: NDArray[np.float64]
    alpha_low: NDArray[np.float64]
    alpha_high: NDArray[np.float64]
    beta: NDArray[np.float64]
    beta_low: NDArray[np.float64]
    beta_high: NDArray[np.float64]
    confidence: float


def _interval(k: NDArray[np.float64], n: int, confidence: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    tail = (1.0 - confidence) / 2.0
    low = np.where(k > 0, stats.beta.ppf(tail, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, stats.beta.ppf(1.0 - tail, k + 1, np.maximum(n - k, 1)), 1.0)
    return low, high


def tradeoff_points(in_scores: ArrayLike, out_scores: ArrayLike, *, direction: int = 1, confidence: float = 0.95,
                    points: int = POINTS) -> TradeoffPoints:
    """The threshold tests' empirical (alpha, beta) at `points` quantiles of the pooled scores, with their boxes."""
    ins, outs = direction * np.asarray(in_scores, dtype=float), direction * np.asarray(out_scores, dtype=float)
    if ins.ndim != 1 or outs.ndim != 1 or ins.size == 0 or outs.size == 0 or direction not in (1, -1):
        raise ParameterError("tradeoff_points needs two non-empty 1-D score arrays and direction +1 or -1")
    cuts = np.unique(np.quantile(np.concatenate([ins, outs]), np.linspace(0.0, 1.0, points)))
    false_pos = np.array([np.count_nonzero(outs > t) for t in cuts], dtype=float)
    false_neg = np.array([np.count_nonzero(ins <= t) for t in cuts], dtype=float)
    a_low, a_high = _interval(false_pos, outs.size, confidence)
    b_low, b_high = _interval(false_neg, ins.size, confidence)
    return TradeoffPoints(direction * cuts, false_pos / outs.size, a_low, a_high, false_neg / ins.size, b_low,
                          b_high, float(confidence))


def claimed_curve(alpha: ArrayLike, *, mu: float | None = None, epsilon: float | None = None,
                  delta: float = 0.0) -> NDArray[np.float64]:
    """The least false-negative rate the claim allows at each false-positive rate `alpha`: mu-GDP's trade-off
    function, or (eps, delta)-DP's."""
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    if mu is not None:
        return stats.norm.cdf(stats.norm.ppf(1.0 - a) - mu)
    if epsilon is None:
        raise ParameterError("claimed_curve needs mu or epsilon")
    return np.maximum.reduce([np.zeros_like(a), 1.0 - delta - math.exp(epsilon) * a,
                              math.exp(-epsilon) * (1.0 - delta - a)])


def audit_figure(in_scores: ArrayLike, out_scores: ArrayLike, *, direction: int = 1, confidence: float = 0.95,
                 mu: float | None = None, epsilon: float | None = None, delta: float = 0.0, title: str = "",
                 points: int = POINTS) -> Figure:
    """The trade-off figure: boxes of the empirical points and the claimed curve (give `mu` or `epsilon`)."""
    pts = tradeoff_points(in_scores, out_scores, direction=direction, confidence=confidence, points=points)
    fig = Figure(figsize=(4.6, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    grid = np.linspace(0.0, 1.0, 401)
    label = f"claimed: {mu:.3g}-GDP" if mu is not None else f"claimed: ({epsilon:.3g}, {delta:g})-DP"
    ax.plot(grid, claimed_curve(grid, mu=mu, epsilon=epsilon, delta=delta), color="tab:blue", label=label)
    for i in range(len(pts.alpha)):
        ax.add_patch(Rectangle((pts.alpha_low[i], pts.beta_low[i]), pts.alpha_high[i] - pts.alpha_low[i],
                               pts.beta_high[i] - pts.beta_low[i], facecolor="tab:orange", alpha=0.25,
                               edgecolor="none"))
    ax.plot(pts.alpha, pts.beta, "o", color="tab:red", markersize=3,
            label=f"audit's tests ({confidence:.0%} Clopper-Pearson boxes)")
    ax.plot([0, 1], [1, 0], ":", color="grey", linewidth=0.8, label="no privacy loss")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("false-positive rate alpha (without the record)")
    ax.set_ylabel("false-negative rate beta (with the record)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Write the figure as PNG to a new file (an existing file is never overwritten: ParameterError)."""
    target = Path(path)
    try:
        with open(target, "xb") as handle:
            fig.savefig(handle, format="png", metadata={"Software": "verify"})
    except FileExistsError:
        raise ParameterError(f"{target} exists: the figure is written to a new file only") from None
    except OSError as err:
        raise ParameterError(f"cannot write {target}: {err.strerror or err}") from None
    return target
