"""Quantities are an open registry (issue 24): verify's own keep their ids and behave as the Enum members did
(string equality, lookup by id, pickling to worker processes, JSON), a plugin registers its own, and README's example
runs as written, its truth checked against scipy's normal CDF."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from scipy.stats import norm

import verify.families as families
from verify.cli import main
from verify.model import Quantity
from verify.quantities import _BUILT_IN

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(autouse=True)
def restore_registries(monkeypatch):
    """Every test starts from the built-in families and quantities and leaves them so."""
    monkeypatch.setattr(families, "FAMILIES", dict(families.FAMILIES))
    monkeypatch.setattr(families, "_ENTRY_POINTS_LOADED", False)
    monkeypatch.setattr(Quantity, "_registered", dict(Quantity._registered))


def test_built_in_ids_are_unchanged_and_behave_as_before():
    assert [q.value for q in Quantity] == [value for _, value, _, _ in _BUILT_IN]
    assert len(Quantity) == 24 and Quantity.RENYI == "renyi" and Quantity("renyi") is Quantity.RENYI
    assert Quantity(Quantity.TRADEOFF) is Quantity.TRADEOFF and Quantity.TRADEOFF.name == "TRADEOFF"
    assert str(Quantity.RENYI) == f"{Quantity.RENYI}" == "Quantity.RENYI"
    assert repr(Quantity.DP_DELTA) == "<Quantity.DP_DELTA: 'dp_delta'>"
    assert pickle.loads(pickle.dumps(Quantity.DP_DELTA)) is Quantity.DP_DELTA
    assert json.dumps({"q": Quantity.GDP_MU}) == '{"q": "gdp_mu"}'
    assert {Quantity.RENYI: 1}["renyi"] == 1 and "renyi" in Quantity and "nope" not in Quantity
    assert {q.kind for q in Quantity} == {"privacy", "utility"}
    assert Quantity.EXCESS_RISK.kind == "utility" and Quantity.RENYI.kind == "privacy"
    with pytest.raises(ValueError, match="not a registered Quantity"):
        Quantity("nope")


def test_register_a_quantity():
    made = Quantity.register("total_variation", "sup_S |P(S) - Q(S)|")
    assert Quantity("total_variation") is made and made in list(Quantity) and made.kind == "privacy"
    assert Quantity.register("total_variation", "sup_S |P(S) - Q(S)|") is made  # idempotent
    assert pickle.loads(pickle.dumps(made)) is made
    with pytest.raises(ValueError, match="already registered"):
        Quantity.register("total_variation", "something else")
    with pytest.raises(ValueError, match="already registered"):
        Quantity.register("renyi", "not the Rényi divergence")
    for bad in ("Total", "1tv", "tv-x", "", 3):
        with pytest.raises(ValueError, match="lower case"):
            Quantity.register(bad, "x")
    with pytest.raises(ValueError, match="kind must be"):
        Quantity.register("tv2", "x", kind="other")


def _readme_example() -> str:
    match = re.search(r"<!-- quantity-example -->\n```python\n(.*?)```", README.read_text(), re.S)
    assert match, "README lost its quantity example"
    return match.group(1)


def test_readme_example_runs_and_its_truth_is_the_normal_cdf(capsys):
    exec(compile(_readme_example(), "README quantity example", "exec"), {})
    assert "counterexample to user.bound on gaussian_shift_tv" in capsys.readouterr().out
    fam = families.family("gaussian_shift_tv")
    for mu in (1e-6, 0.3, 2.0, 9.0):
        assert fam.truth("total_variation", mu=mu).value == pytest.approx(2 * norm.cdf(mu / 2) - 1, rel=1e-12)


def test_a_plugin_quantity_from_the_cli(tmp_path, capsys):
    path = tmp_path / "tv_plugin.py"
    path.write_text(_readme_example().split("assert falsify")[0] + "FAMILIES = ()\n")
    code = main(["falsify", "--plugin", str(path), "--family", "gaussian_shift_tv", "--quantity",
                 "total_variation", "mu/3"])
    out = capsys.readouterr().out
    assert code == 1 and "counterexample to user.bound on gaussian_shift_tv" in out
