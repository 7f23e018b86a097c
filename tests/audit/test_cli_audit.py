"""`verify audit`: exit 0 consistent, 1 refuted, 2 bad input (a module without the names, a mechanism that raises,
bad options), 3 when the claim is beyond what the samples could show or a cap was hit; --json's object. The bounds
are checked against the Clopper-Pearson arithmetic written out here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats

from verify.cli import main

GAUSSIAN = """
import numpy as np
d, d_prime = 0.0, 1.0
def mechanism(data, rng, batch=1):
    return data + rng.normal(size=batch) / 2
"""

SEPARATED = """
in_scores = [float(i) for i in range(1000, 1100)]
out_scores = [float(i) for i in range(100)]
"""


def write(tmp_path: Path, text: str, name: str = "mech.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_refuted_consistent_and_beyond_the_samples(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = write(tmp_path, GAUSSIAN)
    assert main(["audit", source, "--samples", "2000", "--delta", "1e-5", "--claim-eps", "1"]) == 1
    assert "REFUTED" in capsys.readouterr().out
    assert main(["audit", source, "--samples", "2000", "--delta", "1e-5", "--claim-eps", "4.5"]) == 0
    assert "CONSISTENT" in capsys.readouterr().out
    assert main(["audit", source, "--samples", "2000", "--delta", "1e-5", "--claim-eps", "30"]) == 3
    assert "could show at most" in capsys.readouterr().out
    assert main(["audit", source, "--samples", "100", "--delta", "1e-5", "--assume", "gaussian",
                 "--claim-eps", "3"]) == 1
    assert "sigma in [" in capsys.readouterr().out


def test_json_of_separated_scores(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """No errors on 75 + 75 evaluation scores: the bound is log((1 - b)/b), b = 1 - 0.025^(1/75), and the power."""
    assert main(["audit", write(tmp_path, SEPARATED), "--delta", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    b = float(stats.beta.ppf(0.975, 1, 75))
    assert out["epsilon"]["lower"] == pytest.approx(math.log((1 - b) / b)) == pytest.approx(out["power"])
    assert out["refutes"] is False and out["counts"]["false_positives"] == 0
    assert out["counts"]["evaluation_in"] == 75 and out["test"]["kind"] == "threshold"


def test_grey_box_json_has_its_intervals(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", write(tmp_path, GAUSSIAN), "--samples", "200", "--delta", "1e-5", "--assume", "gaussian",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    low, high = out["sigma_interval"]
    assert low < 0.5 < high and out["mu_lower"] > 0 and out["power"] == "Infinity"


@pytest.mark.parametrize(("text", "args", "match"), [
    ("x = 1\n", [], "must export either"),
    ("d = 0\nmechanism = 3\nd_prime = 1\n", [], "callable"),
    ("def mechanism(d, rng):\n    return 0.0\nd = 0\n", [], "d_prime"),
    ("def mechanism(d, rng):\n    raise ValueError('no')\nd, d_prime = 0, 1\n", [], "ValueError: no"),
    ("raise SystemExit(0)\n", [], "cannot be imported"),
    (SEPARATED, ["--assume", "gaussian"], "--assume"),
    (GAUSSIAN, ["--confidence", "1.5"], "confidence"),
])
def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture, text: str, args: list[str],
                           match: str) -> None:
    assert main(["audit", write(tmp_path, text), "--delta", "0.1", *args]) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1


def test_a_cap_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    slow = "import time\nd, d_prime = 0, 1\ndef mechanism(data, rng):\n    time.sleep(0.01)\n    return 0.0\n"
    assert main(["audit", write(tmp_path, slow), "--delta", "0.1", "--budget", "0.2"]) == 3
    assert "deadline" in capsys.readouterr().err
