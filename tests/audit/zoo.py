"""The bug zoo (issue 51): eight privacy bugs as they are written in real code, each beside its correct twin.

DP-SGD here trains a linear model (per-record loss -<theta, x>, so a record's gradient is -x whatever theta is: the
worst case for DP-SGD, where the final parameters are exactly Gaussian under full-batch training) with per-record
clipping to norm CLIP, Gaussian noise of standard deviation sigma * CLIP on the sum of the clipped gradients, and the
noisy sum divided by the expected batch size. The dataset's records have gradients along the first coordinate; the
canary is a "Dirac canary" along the second (Nasr et al. 2023), of norm 50 (clipped to CLIP). Every `train` is
vectorised over runs (`runs=N` returns N releases as rows)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CLIP = 1.0
LR = 0.5
DATASET = np.column_stack([np.linspace(-3.0, 3.0, 15), np.zeros(15)])
CANARY = np.array([0.0, 50.0])
OPPOSITE = np.array([0.0, -50.0])  # the record that replace-one swaps for the canary
REPLACE_DATASET = np.concatenate([DATASET, OPPOSITE[None]])
NOMINAL = 16  # the dataset size the implementation is configured with


def _clipped(data: np.ndarray, clip: float) -> np.ndarray:
    grads = -np.asarray(data, dtype=float)  # d/dtheta of -<theta, x>
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    return grads * np.minimum(1.0, clip / np.maximum(norms, 1e-12))


def dpsgd(data: np.ndarray, rng: np.random.Generator, runs: int, *, q: float, sigma: float, steps: int,
          clip: float = CLIP, noise_std: float | None = None, do_clip: bool = True, sample: bool = True,
          reuse_noise: bool = False, trajectory: bool = False) -> np.ndarray:
    """DP-SGD over `runs` independent trainings at once; the keyword switches are the bugs' single changed lines."""
    n, dim = data.shape
    grads = _clipped(data, clip) if do_clip else -np.asarray(data, dtype=float)
    batch = max(1.0, q * NOMINAL)  # the expected batch size, from the public nominal size (as Opacus divides)
    std = sigma * clip if noise_std is None else noise_std
    theta = np.zeros((runs, dim))
    path = []
    fixed = rng.normal(0.0, std, size=(runs, dim)) if reuse_noise else None
    for _ in range(steps):
        mask = rng.random((runs, n)) < q if (sample and q < 1) else np.ones((runs, n), dtype=bool)
        noisy = mask @ grads + (fixed if reuse_noise else rng.normal(0.0, std, size=(runs, dim)))
        update = LR * noisy / batch
        theta = theta - update
        path.append(update)
    return np.stack(path, axis=1) if trajectory else theta


@dataclass(frozen=True)
class Case:
    """One bug or its twin: `kind` "dpsgd" (train, dataset, canary, claim (q, sigma, steps)) or "mechanism"
    (mechanism, d, d_prime, claim eps at `delta`); `runs`: the runs (or samples) per dataset its test uses; `assume`
    the grey box where the release is Gaussian; `score` a scoring of the release (None: the audit's own)."""

    name: str
    bug: str
    buggy: bool
    kind: str
    claim: Any
    delta: float
    runs: int
    train: Callable[..., Any] | None = None
    dataset: Any = None
    canary: Any = None
    neighbouring: str = "add_remove"
    mechanism: Callable[..., Any] | None = None
    d: Any = None
    d_prime: Any = None
    assume: str | None = None
    score: Callable[..., Any] | None = field(default=None)


def _train(**switches: Any) -> Callable[..., np.ndarray]:
    def train(data: np.ndarray, rng: np.random.Generator, runs: int = 1) -> np.ndarray:
        return dpsgd(np.asarray(data), rng, runs, **switches)
    return train


# ---- the basic mechanisms -------------------------------------------------------------------------------------------

BOUND = 10.0  # the values' range [0, BOUND]: the sum's sensitivity (add/remove)


def laplace_sum(scale_from_sensitivity: float) -> Callable[..., np.ndarray]:
    """The Laplace mechanism on a sum of values clipped to [0, BOUND], claimed eps = 1."""
    def mechanism(data: list[float], rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        total = float(np.clip(data, 0.0, BOUND).sum())
        return total + rng.laplace(0.0, scale_from_sensitivity / 1.0, size=batch)
    return mechanism


def naive_laplace(data: float, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
    """The textbook floating-point Laplace sampler (scale 1, sensitivity 1: claimed eps = 1): f + s * -log(U)."""
    u = rng.random(batch)
    sign = np.where(rng.random(batch) < 0.5, -1.0, 1.0)
    return data + sign * -np.log(u)


def discrete_laplace(data: float, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
    """Its twin: the discrete Laplace mechanism on an integer query (the difference of two geometric variables,
    P(k) proportional to e^-|k|: eps = 1), whose support is every integer under both datasets."""
    p = 1.0 - np.exp(-1.0)
    return data + (rng.geometric(p, batch) - rng.geometric(p, batch)).astype(float)


def _in_naive_support(noise: np.ndarray) -> np.ndarray:
    """Whether each float is a value sign * -log(U) of the naive sampler, U = k 2^-53 (numpy's random()), 0 < k < 2^53:
    the exact inverse k of -log is located and its neighbours are tried (each k moves -log(U) by more than one ulp)."""
    m = np.abs(noise)
    k0 = np.floor(np.exp(-m) * 2.0 ** 53)
    hit = np.zeros(m.shape, dtype=bool)
    for step in range(-3, 4):
        k = k0 + step
        ok = (k >= 1) & (k < 2.0 ** 53)
        with np.errstate(divide="ignore"):
            hit |= ok & (-np.log(np.where(ok, k, 1.0) * 2.0 ** -53) == m)
    return hit


def _preimages_in_support(outputs: np.ndarray, centre: float, width: int = 16) -> np.ndarray:
    """Whether `centre + n` rounds to the output for some n in the naive sampler's support: the floats n with
    fl(centre + n) == output lie around output - centre; `width` floats each side are tried. Where the preimage runs
    past them (an output far nearer 0 than centre) the answer is True (unknown, counted as possible)."""
    base = outputs - centre
    found = np.zeros(outputs.shape, dtype=bool)
    unknown = np.zeros(outputs.shape, dtype=bool)
    for direction in (-np.inf, np.inf):
        n = base.copy()
        for i in range(width + 1):
            inside = (centre + n) == outputs
            if i == width:
                unknown |= inside
            else:
                found |= inside & _in_naive_support(n)
            n = np.nextafter(n, direction)
    return found | unknown


def support_score(outputs: np.ndarray) -> np.ndarray:
    """Mironov's (2012) attack as a score: +1 where an output is possible from f(D) = 0 only, -1 from f(D') = 1 only,
    0 where both (exact floating-point support arithmetic)."""
    x = np.asarray(outputs, dtype=float)
    return _preimages_in_support(x, 0.0).astype(float) - _preimages_in_support(x, 1.0).astype(float)


# ---- the zoo -------------------------------------------------------------------------------------------------------

FULL = (1.0, 4.0, 4)  # full batch, sigma 4, 4 steps: mu = 0.5, eps(1e-5) = 1.99
SAMPLED = (0.5, 2.0, 8)  # Poisson q = 0.5, sigma 2, 8 steps: eps(1e-5) = 3.54
SMALL_Q = (0.05, 2.0, 8)  # Poisson q = 0.05: eps(1e-5) = 0.35
DELTA = 1e-5


def _range_score(release: np.ndarray) -> float:
    """The spread of the canary coordinate's per-step updates (a released trajectory, steps x 2)."""
    return float(np.ptp(release[:, 1]))


def _pair(name: str, bug: str, claim: Any, runs: int, buggy: dict, twin: dict, **common: Any) -> list[Case]:
    q, sigma, steps = claim
    out = []
    for is_buggy, switches in ((True, buggy), (False, twin)):
        train = _train(q=q, sigma=sigma, steps=steps, **switches)
        out.append(Case(name, bug, is_buggy, "dpsgd", claim, DELTA, runs, train=train,
                        dataset=common.get("dataset", DATASET), canary=CANARY, **{k: v for k, v in common.items()
                                                                                  if k != "dataset"}))
    return out


CASES: list[Case] = [
    *_pair("mean_noise", "noise scaled to the mean's sensitivity CLIP/B, added to the sum", FULL, 50,
           {"noise_std": FULL[1] * CLIP / 16}, {}, assume="gaussian"),
    *_pair("no_clipping", "per-record clipping skipped (the canary's gradient has norm 50)", FULL, 50,
           {"do_clip": False}, {}, assume="gaussian"),
    *_pair("absolute_sigma", "noise multiplier used as the noise's standard deviation (clip norm 10)", FULL, 50,
           {"clip": 10.0, "noise_std": FULL[1]}, {"clip": 10.0}, assume="gaussian"),
    *_pair("no_subsampling", "every step trains on the whole dataset, accounted as Poisson sampling at q = 0.05",
           SMALL_Q, 400, {"sample": False}, {}),
    *_pair("reused_noise", "one noise draw reused at every step (the trajectory is released)", SAMPLED, 1000,
           {"reuse_noise": True, "trajectory": True}, {"trajectory": True}, score=_range_score),
    *_pair("replace_one", "replace-one neighbours, noise calibrated to the add/remove sensitivity", FULL, 400,
           {}, {"noise_std": FULL[1] * 2 * CLIP}, assume="gaussian", neighbouring="replace_one",
           dataset=REPLACE_DATASET),
    Case("laplace_sensitivity", "Laplace scale 1/eps on a sum of values in [0, 10] (sensitivity 10)", True,
         "mechanism", 1.0, 0.0, 2000, mechanism=laplace_sum(1.0), d=[2.0, 7.5, 4.0], d_prime=[2.0, 7.5, 4.0, BOUND]),
    Case("laplace_sensitivity", "its twin: scale sensitivity/eps = 10", False, "mechanism", 1.0, 0.0, 2000,
         mechanism=laplace_sum(BOUND), d=[2.0, 7.5, 4.0], d_prime=[2.0, 7.5, 4.0, BOUND]),
    Case("naive_float_laplace", "f + sign * -log(U) in floating point (Mironov 2012)", True, "mechanism", 1.0, 0.0,
         2000, mechanism=naive_laplace, d=0.0, d_prime=1.0, score=support_score),
    Case("naive_float_laplace", "its twin: discrete Laplace on an integer query", False, "mechanism", 1.0, 0.0,
         2000, mechanism=discrete_laplace, d=0.0, d_prime=1.0, score=support_score),
]
