"""A paper file of twenty wrong bounds (examples/wrong_bounds/wrong20.verify.toml: textbook closed forms of seven
families -- the Gaussian mechanism's Rényi divergence and Balle-Wang delta(eps), Mironov's Laplace Rényi divergence,
eps(delta) <= Delta/b of the Laplace and discrete Laplace mechanisms, randomized response's Rényi divergence and eps0,
the discrete Gaussian's alpha Delta^2/(2 sigma^2), the contractive noisy iteration's and Lemma 20's Gaussian
divergences -- divided by 2 and by 10, declared HOLDS as their author would): every one is reported VIOLATED with a
certified counterexample, and the smallest ratio bound/truth is 1/2 or 1/10 (the closed forms are attained, the
eps(delta) ones within O(delta)): the truths agree with the printed formulas, an independent reference."""

from __future__ import annotations

import json
from pathlib import Path

from verify.cli import main

PAPER = Path(__file__).resolve().parents[1] / "examples" / "wrong_bounds" / "wrong20.verify.toml"


def test_twenty_wrong_bounds_are_each_certified_violated(tmp_path, capsys):
    out = tmp_path / "wrong20.json"
    assert main(["run", "--paper", str(PAPER), "--falsify", "20", "--quiet", "--json", str(out)]) == 1
    capsys.readouterr()
    results = json.loads(out.read_text())["results"]
    assert len(results) == 20
    for r in results:
        factor = 2 if r["id"].endswith("_over2") else 10
        assert r["verdict"] == "VIOLATED" and not r["as_expected"], r["id"]
        cx = r["counterexample"]
        assert cx is not None and cx["verdict"] == "VIOLATED", r["id"]
        assert cx["bound"] < cx["truth"]["lower"], r["id"]  # excluded by the enclosure, not by a float
        # each closed form is an upper bound on the truth (ratio >= 1/factor), attained on the grid (Rényi, delta)
        # or within 2 delta (eps(delta) = eps0 - O(delta) at delta = 1e-6)
        assert 1 / factor * (1 - 1e-12) <= r["ratio_min"] <= 1 / factor * (1 + 1e-5), (r["id"], r["ratio_min"])
