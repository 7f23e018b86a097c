"""Privacy curves and per-step accounting (verify.accountant_curve): every point's bracket against the exact
composition of Gaussian mechanisms (an independent mpmath closed form, Balle & Wang 2018), against single queries of
the accountant, and the curves' monotonicity over generated schedules."""

from __future__ import annotations

import importlib.util
import json
import math

import pytest
from gaussian_reference import gaussian_delta, gaussian_epsilon
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hypothesis_budget import examples
from verify import accountant, accountant_curve
from verify.accountant import Phase
from verify.accountant_curve import delta_curve, epsilon_curve, epsilon_per_step, peer_curves
from verify.cli import main
from verify.errors import ParameterError
from verify.reporting.accountant_curve import PLOT_MARK

_gaussian_delta, _gaussian_epsilon = gaussian_delta, gaussian_epsilon


FULL_BATCH = [[Phase(1.0, 2.0, 100)], [Phase(1.0, 1.0, 3), Phase(1.0, 3.0, 10)], [Phase(1.0, 20.0, 1)]]


@pytest.mark.parametrize("phases", FULL_BATCH, ids=["one phase", "two phases", "one step"])
def test_every_point_of_both_curves_brackets_the_exact_gaussian_composition(phases):
    """q = 1: the schedule is mu-GDP with mu^2 = sum T_i / sigma_i^2 exactly; each point of the default eps(delta)
    curve (1e-12 .. 1e-2) and of the default delta(eps) curve contains the closed form."""
    mu = math.sqrt(sum(p.steps / p.sigma**2 for p in phases))
    curve = epsilon_curve(None, phases)
    assert len(curve.points) == 21 and curve.points[0].at == pytest.approx(1e-12)
    for p in curve.points:
        exact = float(_gaussian_epsilon(p.at, mu))
        assert p.lower <= exact <= p.upper, (p, exact)
    curve = delta_curve(None, phases)
    assert curve.points[0].at == 0.0 and curve.points[-1].at > 0
    for p in curve.points:
        exact = float(_gaussian_delta(p.at, mu))
        assert p.lower <= exact <= p.upper, (p, exact)


def test_points_given_are_sorted_and_each_one_bracketed():
    mu = math.sqrt(100) / 2.0
    curve = epsilon_curve([1e-3, 1e-9, 1e-5], [(1.0, 2.0, 100)])
    assert [p.at for p in curve.points] == [1e-9, 1e-5, 1e-3]
    for p in curve.points:
        assert p.lower <= float(_gaussian_epsilon(p.at, mu)) <= p.upper
    curve = delta_curve([-1.0, 0.5, 10.0], [(1.0, 2.0, 100)])
    for p in curve.points:
        assert p.lower <= float(_gaussian_delta(p.at, mu)) <= p.upper


def test_curve_points_agree_with_single_queries():
    """each point's bracket and the accountant's own single-query bracket at the same delta (eps) intersect: both
    contain the tight value."""
    phases = [Phase(0.01, 1.0, 1000)]
    curve = epsilon_curve([1e-10, 1e-5, 1e-2], phases)
    for p in curve.points:
        single = accountant.epsilon(p.at, phases, tol=1e-2)
        assert max(p.lower, single.lower) <= min(p.upper, single.upper), (p, single)
    curve = delta_curve([0.5, 2.0], phases)
    for p in curve.points:
        single = accountant.delta(p.at, phases, tol=1e-2)
        assert max(p.lower, single.lower) <= min(p.upper, single.upper), (p, single)


@settings(max_examples=examples(6, 40), deadline=None, database=None)
@given(phases=st.lists(st.tuples(st.floats(1e-3, 1.0), st.floats(0.5, 5), st.integers(1, 200)), min_size=1,
                       max_size=3))
def test_curves_are_monotone(phases):
    """eps(delta) decreases in delta and delta(eps) in eps: a bracket at a larger delta (eps) never lies wholly
    above one at a smaller, and the upper ends (each the smallest value the upper bound allows) are monotone."""
    curve = epsilon_curve([1e-10, 1e-7, 1e-4, 1e-2], phases)
    pts = curve.points
    for i, a in enumerate(pts):
        for b in pts[i + 1:]:
            assert b.lower <= a.upper
            assert b.upper <= a.upper * (1 + 1e-9) + 1e-12
    top = max(pts[0].upper, 0.1) if math.isfinite(pts[0].upper) else pts[0].lower
    curve = delta_curve([0.0, top / 3, top / 2, top], phases)
    pts = curve.points
    for i, a in enumerate(pts):
        for b in pts[i + 1:]:
            assert b.lower <= a.upper
            assert b.upper <= a.upper * (1 + 1e-9) + 1e-15


@pytest.mark.parametrize(("call", "match"), [
    (lambda: epsilon_curve([0.0], [(0.1, 1.0, 10)]), "delta"),
    (lambda: epsilon_curve([], [(0.1, 1.0, 10)]), "at least one"),
    (lambda: delta_curve([math.inf], [(0.1, 1.0, 10)]), "epsilon"),
    (lambda: epsilon_curve(None, [(0.1, 1.0, 10)], neighbouring="replace"), "neighbouring"),
    (lambda: epsilon_curve(None, [(0.1, 1.0, 10)], width=-1), "width"),
    (lambda: epsilon_curve(None, [(2.0, 1.0, 10)]), "sampling rate"),
    (lambda: epsilon_curve(None, [(0.1, 1.0, 10**7), (0.1, 1.0, 1)]), "steps in all"),
])
def test_bad_input_is_one_parameter_error(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_each_checkpoint_brackets_the_exact_gaussian_composition_of_its_prefix():
    """q = 1, two phases: after t steps the prefix is mu_t-GDP (mu_t^2 = sum over its steps of 1/sigma^2); every
    checkpoint (every 7 steps and the end) contains the closed form."""
    phases = [Phase(1.0, 4.0, 10), Phase(1.0, 8.0, 15)]
    steps = epsilon_per_step(1e-6, phases, every=7)
    assert [p.step for p in steps.points] == [7, 14, 21, 25] and all(p.epoch is None for p in steps.points)
    for p in steps.points:
        mu = math.sqrt(min(p.step, 10) / 16 + max(p.step - 10, 0) / 64)
        exact = float(_gaussian_epsilon(1e-6, mu))
        assert p.lower <= exact <= p.upper, (p, exact)


def test_per_epoch_checkpoints_agree_with_single_queries_on_each_prefix():
    """ceil(1/q) steps an epoch, counted per phase; each checkpoint's bracket intersects the accountant's single
    query on the same prefix, and eps grows with the steps (no later bracket lies wholly below an earlier one)."""
    phases = [Phase(0.25, 1.5, 10), Phase(0.1, 2.0, 12)]
    steps = epsilon_per_step(1e-5, phases, per_epoch=True)
    assert [(p.step, p.epoch) for p in steps.points] == [(4, 1), (8, 2), (10, 2.5), (20, 3.5), (22, 3.7)]
    prefixes = {4: [(0.25, 1.5, 4)], 8: [(0.25, 1.5, 8)], 10: [(0.25, 1.5, 10)],
                20: [(0.25, 1.5, 10), (0.1, 2.0, 10)], 22: [(0.25, 1.5, 10), (0.1, 2.0, 12)]}
    for p in steps.points:
        single = accountant.epsilon(1e-5, prefixes[p.step], tol=1e-2)
        assert max(p.lower, single.lower) <= min(p.upper, single.upper), (p, single)
    for a, b in zip(steps.points, steps.points[1:], strict=False):
        assert a.lower <= b.upper


def test_epoch_inputs_derive_q_and_steps_exactly():
    """q = B/N and T = ceil(E N / B), the ceiling taken exactly (0.1 epoch of 10 records in batches of 1 is 1
    step, though 0.1 * 10 is 1.0000000000000000555 in binary)."""
    assert Phase.from_epochs(100, 256, 60000, 1.1) == Phase(256 / 60000, 1.1, 23438)
    assert Phase.from_epochs(0.1, 1, 10, 1.0) == Phase(0.1, 1.0, 1)
    assert Phase.from_epochs(3, 1, 3, 2.0).steps == 9


@pytest.mark.parametrize(("args", "match"), [
    ((0, 1, 2, 1.0), "epochs"), ((1, 3, 2, 1.0), "exceeds"), ((1, 1.5, 2, 1.0), "batch size"),
    ((1, 1, 0, 1.0), "dataset size"), ((1, 1, 2, -1.0), "sigma"), ((1e9, 1, 10**6, 1.0), "steps"),
])
def test_bad_epoch_inputs_are_one_parameter_error(args, match):
    with pytest.raises(ParameterError, match=match):
        Phase.from_epochs(*args)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({}, "one of"), ({"every": 2, "per_epoch": True}, "one of"), ({"every": 0}, "every"), ({"every": 1.5}, "every"),
])
def test_bad_checkpoints_are_one_parameter_error(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        epsilon_per_step(1e-5, [(0.1, 1.0, 10)], **kwargs)


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_epoch_inputs_on_the_command_line_state_what_they_derived(capsys):
    """--epochs 2.5 --batch-size 100 --dataset-size 1000: q = 0.1, T = 25, stated, and the same bracket as the
    phase given by --q/--steps."""
    out = _json(capsys, ["account", "--epochs", "2.5", "--batch-size", "100", "--dataset-size", "1000", "--sigma",
                         "1.5", "--delta", "1e-5", "--tol", "0.01", "--json"])
    assert out["derived"] | {"derivation": ""} == {"epochs": 2.5, "batch_size": 100, "dataset_size": 1000, "q": 0.1,
                                                   "steps": 25, "derivation": ""}
    same = _json(capsys, ["account", "--q", "0.1", "--sigma", "1.5", "--steps", "25", "--delta", "1e-5", "--tol",
                          "0.01", "--json"])
    assert out["epsilon"] == same["epsilon"] and out["phases"] == same["phases"]
    assert main(["account", "--epochs", "2.5", "--batch-size", "100", "--dataset-size", "1000", "--sigma", "1.5",
                 "--delta", "1e-5", "--tol", "0.01"]) == 0
    assert "q = B/N = 0.1, T = ceil(E N / B) = 25" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("extra", "match"), [
    (["--epochs", "2", "--batch-size", "10", "--sigma", "1", "--delta", "1e-5"], "--dataset-size missing"),
    (["--epochs", "2", "--batch-size", "10", "--dataset-size", "100", "--sigma", "1", "--q", "0.1", "--delta",
      "1e-5"], "instead of --q"),
    (["--epochs", "2", "--batch-size", "10", "--dataset-size", "100", "--sigma", "1", "--phase", "0.1,1,2",
      "--delta", "1e-5"], "instead of --phase"),
    (["--epochs", "2", "--batch-size", "10", "--dataset-size", "100", "--delta", "1e-5"], "--sigma"),
    (["--epochs", "2", "--batch-size", "100", "--dataset-size", "10", "--sigma", "1", "--delta", "1e-5"], "exceeds"),
    (["--epochs", "2", "--batch-size", "2.5", "--dataset-size", "10", "--sigma", "1", "--delta", "1e-5"],
     "batch size"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10"], "give --delta"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--curve", "--delta", "1e-5"], "--at"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--curve", "--tol", "0.1"], "--tol"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--plot", "x.png"], "give --curve"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--curve", "--plot", "x.pdf"], ".png or .svg"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--every", "2"], "--delta"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--every", "2", "--per-epoch", "--delta", "1e-5"], "not both"),
    (["--q", "0.1", "--sigma", "1", "--steps", "10", "--curve", "--at", "0,1e-5"], "delta"),
])
def test_inconsistent_account_options_exit_2_in_one_line(capsys, tmp_path, monkeypatch, extra, match):
    monkeypatch.chdir(tmp_path)
    assert main(["account", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1, err


def test_curve_json_brackets_the_closed_form_at_every_point(capsys):
    mu = math.sqrt(50) / 3.0
    out = _json(capsys, ["account", "--q", "1", "--sigma", "3", "--steps", "50", "--curve", "--at", "1e-9,1e-6,1e-3",
                         "--json"])
    assert out["curve"] == "epsilon" and [p["delta"] for p in out["points"]] == [1e-9, 1e-6, 1e-3]
    for p in out["points"]:
        assert p["lower"] <= float(_gaussian_epsilon(p["delta"], mu)) <= p["upper"]
    out = _json(capsys, ["account", "--q", "1", "--sigma", "3", "--steps", "50", "--curve", "delta", "--at",
                         "0,1,4", "--json"])
    assert out["curve"] == "delta"
    for p in out["points"]:
        assert p["lower"] <= float(_gaussian_delta(p["epsilon"], mu)) <= p["upper"]


def test_per_step_on_the_command_line(capsys):
    out = _json(capsys, ["account", "--q", "1", "--sigma", "4", "--steps", "9", "--delta", "1e-6", "--every", "4",
                         "--json"])
    assert [p["step"] for p in out["per_step"]] == [4, 8, 9]
    for p in out["per_step"]:
        assert p["lower"] <= float(_gaussian_epsilon(1e-6, math.sqrt(p["step"]) / 4)) <= p["upper"]
    assert main(["account", "--q", "0.5", "--sigma", "4", "--steps", "5", "--delta", "1e-6", "--per-epoch"]) == 0
    assert "step 4 (epoch 2)" in capsys.readouterr().out


def test_curve_and_per_step_text_fit_100_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    for extra in (["--curve", "--at", "1e-6,1e-3", "--compare"], ["--delta", "1e-6", "--every", "25"]):
        assert main(["account", "--q", "0.001", "--sigma", "0.75", "--steps", "100", *extra]) == 0
        assert [line for line in capsys.readouterr().out.splitlines() if len(line) > 100] == []


def test_plot_writes_its_own_files_only(capsys, tmp_path, monkeypatch):
    """--plot writes a PNG (or SVG) carrying the mark of this command, replaces such a file, and refuses (exit 2,
    file untouched) one it did not write, a folder and a link (one quick peer drawn: the files are under test)."""
    clt = "Gaussian-DP CLT (formula)"
    monkeypatch.setattr(accountant_curve, "PEERS", {clt: accountant_curve.PEERS[clt]})
    argv = ["account", "--q", "1", "--sigma", "3", "--steps", "50", "--curve", "--at", "1e-6,1e-3"]
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    assert main([*argv, "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG") and PLOT_MARK.encode() in png.read_bytes()
    assert main([*argv, "--plot", str(png)]) == 0  # ours: replaced
    assert main([*argv, "--plot", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<?xml") and PLOT_MARK in svg.read_text()
    foreign = tmp_path / "theirs.png"
    foreign.write_bytes(b"not ours")
    link = tmp_path / "link.png"
    link.symlink_to(png)
    folder = tmp_path / "folder.png"
    folder.mkdir()
    capsys.readouterr()
    for path in (foreign, folder, link):
        assert main([*argv, "--plot", str(path)]) == 2
        assert "never overwrites" in capsys.readouterr().err
    assert foreign.read_bytes() == b"not ours"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_peers_at_the_curves_points_agree_with_the_bracket():
    """dp_accounting's PLD accountant at each point lies in the bracket, or above it by at most its own
    discretisation (T x 1e-4); a peer that does not answer delta(eps) or is missing is said to be so."""
    pytest.importorskip("dp_accounting")
    phases = [Phase(0.05, 1.2, 60)]
    curve = epsilon_curve([1e-8, 1e-4], phases)
    peers = {p.accountant: p for p in peer_curves(curve)}
    pld_peer = peers["dp_accounting PLD"]
    assert len(pld_peer.values) == 2 and pld_peer.under == 0
    for v, p in zip(pld_peer.values, curve.points, strict=True):
        assert p.lower - 1e-9 <= v <= p.upper + 60 * 1e-4
    assert peers["dp_accounting RDP"].under == 0
    for name, peer in peers.items():
        if name.startswith("opacus") and importlib.util.find_spec("opacus") is None:
            assert peer.status == "not installed" and peer.values == ()


HOSTILE = st.sampled_from(["nan", "inf", "-1", "0", "1e-320", "1e400", "abc", "", "1,2", "2.5", "1e9"])


@st.composite
def curve_argv(draw) -> list[str]:
    """small schedules (T <= 40) with the curve, per-step and epoch options, one value in six hostile"""
    def value(good: st.SearchStrategy[str]) -> str:
        return draw(st.one_of(good, good, good, good, good, HOSTILE))

    argv = ["account", "--sigma", value(st.sampled_from(["1", "2.5"]))]
    if draw(st.booleans()):
        argv += ["--epochs", value(st.sampled_from(["1", "2", "0.5"])), "--batch-size",
                 value(st.sampled_from(["5", "10"])), "--dataset-size", value(st.sampled_from(["20", "50"]))]
    else:
        argv += ["--q", value(st.sampled_from(["1", "0.2"])), "--steps", value(st.sampled_from(["5", "40"]))]
    mode = draw(st.sampled_from(["curve", "delta-curve", "every", "epoch", "plain"]))
    if mode in ("curve", "delta-curve"):
        argv += ["--curve"] + (["delta"] if mode == "delta-curve" else [])
        if draw(st.booleans()):
            argv += ["--at", value(st.sampled_from(["1e-6,1e-3", "0.5,2", "1e-9"]))]
    elif mode in ("every", "epoch"):
        argv += ["--delta", value(st.sampled_from(["1e-5", "1e-9"]))]
        argv += ["--every", value(st.sampled_from(["3", "7"]))] if mode == "every" else ["--per-epoch"]
    else:
        argv += ["--delta", value(st.sampled_from(["1e-5"])), "--tol", "0.05"]
    return argv + (["--json"] if draw(st.booleans()) else [])


@settings(max_examples=examples(10, 200), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # capsys is read out after every call
@given(argv=curve_argv())
def test_fuzzed_curve_options_exit_with_a_documented_code(argv, capsys):
    """Whatever the values, `verify account` with the curve, per-step and epoch options exits 0, 2 or 3 (never 4),
    an exit 2 is one line, and --json output is strict JSON."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2, 3), (argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    if code == 0 and "--json" in argv:
        json.loads(out)
