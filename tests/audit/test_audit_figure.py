"""The audit's trade-off figure (verify/reporting/audit_figure.py) and `verify audit` on DP-SGD files with --plot:
Clopper-Pearson boxes against SciPy's exact binomial intervals, the claimed curves against mpmath, the CLI's exit
codes and its refusal to overwrite a file."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from scipy import stats

from verify.cli import main
from verify.errors import ParameterError
from verify.reporting.audit_figure import audit_figure, claimed_curve, save_figure, tradeoff_points

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "audit_zoo"
PNG = b"\x89PNG\r\n\x1a\n"


@settings(max_examples=examples(15, 150), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(5, 60), st.integers(5, 60), st.sampled_from([1, -1]),
       st.sampled_from([0.9, 0.95, 0.99]))
def test_boxes_are_exact_binomial_intervals(seed: int, n_in: int, n_out: int, direction: int, level: float) -> None:
    rng = np.random.default_rng(seed)
    ins, outs = rng.normal(1.0, 1.0, n_in).round(1), rng.normal(0.0, 1.0, n_out).round(1)
    pts = tradeoff_points(ins, outs, direction=direction, confidence=level)
    for i, t in enumerate(pts.thresholds):
        fp = int(np.sum(direction * outs > direction * t))
        fn = int(np.sum(direction * ins <= direction * t))
        a = stats.binomtest(fp, n_out).proportion_ci(level, method="exact")
        b = stats.binomtest(fn, n_in).proportion_ci(level, method="exact")
        assert pts.alpha[i] == fp / n_out and pts.beta[i] == fn / n_in
        assert np.allclose([pts.alpha_low[i], pts.alpha_high[i]], [a.low, a.high], atol=1e-9)
        assert np.allclose([pts.beta_low[i], pts.beta_high[i]], [b.low, b.high], atol=1e-9)


@settings(max_examples=examples(20, 200), deadline=None)
@given(st.floats(0.001, 0.999), st.floats(0.05, 4.0), st.floats(0.0, 3.0), st.sampled_from([0.0, 1e-5, 0.1]))
def test_claimed_curves(alpha: float, mu: float, eps: float, delta: float) -> None:
    """mu-GDP: Phi(Phi^-1(1 - alpha) - mu) in mpmath; (eps, delta)-DP: the largest beta meeting both inequalities
    with equality somewhere (checked as the inequalities, tight at the answer)."""
    with mpmath.workdps(40):
        gdp = mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(alpha) - 1) - mu)
    assert math.isclose(float(claimed_curve([alpha], mu=mu)[0]), float(gdp), rel_tol=1e-9, abs_tol=1e-15)
    beta = float(claimed_curve([alpha], epsilon=eps, delta=delta)[0])
    slack = 1e-12
    assert alpha + math.exp(eps) * beta >= 1 - delta - slack and beta + math.exp(eps) * alpha >= 1 - delta - slack \
        or beta == 0.0
    tight = min(alpha + math.exp(eps) * beta - (1 - delta), beta + math.exp(eps) * alpha - (1 - delta))
    assert beta == 0.0 or abs(tight) < 1e-9


def test_save_never_overwrites(tmp_path: Path) -> None:
    fig = audit_figure([1.0, 2.0, 3.0], [0.0, 0.5, 1.5], mu=1.0)
    target = tmp_path / "f.png"
    save_figure(fig, target)
    assert target.read_bytes().startswith(PNG)
    target.write_bytes(b"mine")
    with pytest.raises(ParameterError):
        save_figure(fig, target)
    assert target.read_bytes() == b"mine"


def test_cli_dpsgd_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for name in ("dpsgd_buggy.py", "dpsgd_fixed.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    buggy, fixed = str(tmp_path / "dpsgd_buggy.py"), str(tmp_path / "dpsgd_fixed.py")
    common = ["--samples", "400", "--delta", "1e-5", "--assume", "gaussian"]
    assert main(["audit", buggy, *common, "--plot", str(tmp_path / "b.png")]) == 1
    assert "REFUTED" in capsys.readouterr().out
    assert (tmp_path / "b.png").read_bytes().startswith(PNG)
    assert main(["audit", fixed, *common, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"] == "CONSISTENT" and got["claim"]["q"] == 1.0
    assert got["epsilon"]["lower"] <= got["claim"]["epsilon"]["upper"]
    (tmp_path / "mine.png").write_bytes(b"mine")
    assert main(["audit", fixed, *common, "--plot", str(tmp_path / "mine.png")]) == 2
    assert (tmp_path / "mine.png").read_bytes() == b"mine"
    assert main(["audit", fixed, *common, "--claim-eps", "1"]) == 2
    (tmp_path / "partial.py").write_text("def train(data, rng):\n    return 0.0\n")
    assert main(["audit", str(tmp_path / "partial.py"), *common]) == 2
    assert "dataset, canary, claim" in capsys.readouterr().err
