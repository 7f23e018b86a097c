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

README = Path(__file__).resolve().parent.parent / "docs" / "guides" / "own-family.md"


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
    assert match, "docs/guides/own-family.md lost its quantity example"
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


def test_enum_compatible_lookups_and_immutability():
    assert Quantity["RENYI"] is Quantity.RENYI and Quantity.__members__["TRADEOFF"] is Quantity.TRADEOFF
    assert list(Quantity.__members__) == [q.name for q in Quantity]
    assert f"{Quantity.RENYI:>16}" == "  Quantity.RENYI"
    with pytest.raises(KeyError):
        Quantity["NOPE"]
    with pytest.raises(AttributeError, match="immutable"):
        Quantity.RENYI.name = "OTHER"
    with pytest.raises(ValueError, match="already the quantity 'renyi'"):
        Quantity.register("renyi_again", "x", name="RENYI")
    with pytest.raises(ValueError, match="upper case"):
        Quantity.register("tv3", "x", name="not a name")
    with pytest.raises(ValueError, match="description is a str"):
        Quantity.register("tv4", 5)
    made = Quantity.register("tv5", "x", name="TV_FIVE")
    assert Quantity["TV_FIVE"] is made
    with pytest.raises(ValueError, match="already registered"):
        Quantity.register("tv5", "x", name="TV_5")


@pytest.mark.parametrize("key", ["made_up", "total_variation"])
def test_a_family_keyed_by_a_plain_string_is_bad_input(tmp_path, capsys, key):
    """A truth keyed by a str (registered id or not) is refused with one line naming the fix, by `register` and by
    `--plugin` (it was an internal error once a command read the key's .value)."""
    from verify.errors import PluginError
    from verify.model import Family, Parameter

    Quantity.register("total_variation", "sup_S |P(S) - Q(S)| of the two released laws")
    mu = __import__("sympy").Symbol("mu", positive=True)
    fam = Family(name="str_keyed", description="x", parameters=(Parameter(mu, mu > 0, "gap"),), facts=frozenset(),
                 truths={key: lambda mu: None}, method="x")
    with pytest.raises(PluginError, match=f"keyed by '{key}', not a verify.model.Quantity"):
        families.register(fam)
    path = tmp_path / "str_keyed.py"
    path.write_text(_readme_example().split("register(Family")[0].replace("TV = ", "_TV = ")
                    + f"register(Family(name='str_keyed', description='x', parameters=(Parameter(mu, mu > 0, 'g'),),"
                    f" facts=frozenset(), truths={{{key!r}: closed_form(tv, 'x')}}, method='x'))\n")
    assert main(["families", "--plugin", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not a verify.model.Quantity" in err and len(err.strip().splitlines()) == 1
