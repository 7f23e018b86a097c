"""The batch samplers' released laws written out from the model, independently of verify.truth.noisy_sgd_batches:
the references of tests/truth/test_noisy_sgd_batches.py and test_tradeoff_1d.py are computed from them."""

from __future__ import annotations

import itertools
import math

SETTING = {"eta": 0.5, "reg": 0.1, "sigma": 0.8, "b": 1, "x": 1.0, "x_prime": -0.5}  # records of opposite signs
SCHEMES = [("noisy_sgd_shuffled_linear", {"m": 2, "steps": 4}),
           ("noisy_sgd_shuffled_once_linear", {"m": 3, "steps": 6}),
           ("noisy_sgd_poisson_linear", {"q": 0.3, "steps": 3})]


def written_out(scheme: str, kw: dict, eta: float, reg: float, sigma: float, b: float, x: float,
                x_prime: float) -> tuple[list[float], list[float], list[float], float]:
    """(weights, means on D, means on D', common sd) of the last iterate: one component per sampling pattern."""
    T = kw["steps"]
    a = 1 - eta * reg
    if "q" in kw:
        pats = [([t for t in range(T) if mask >> t & 1], kw["q"] ** bin(mask).count("1") *
                 (1 - kw["q"]) ** (T - bin(mask).count("1"))) for mask in range(2**T)]
    elif scheme.endswith("once_linear"):
        pats = [([e * kw["m"] + j for e in range(T // kw["m"])], 1 / kw["m"]) for j in range(kw["m"])]
    else:
        pats = [([e * kw["m"] + j for e, j in enumerate(js)], kw["m"] ** -(T // kw["m"]))
                for js in itertools.product(range(kw["m"]), repeat=T // kw["m"])]
    c = [eta / b * sum(a ** (T - 1 - t) for t in steps) for steps, _ in pats]
    sd = math.sqrt(eta**2 * sigma**2 * sum(a ** (2 * t) for t in range(T)))
    return [w for _, w in pats], [x * ci for ci in c], [x_prime * ci for ci in c], sd
