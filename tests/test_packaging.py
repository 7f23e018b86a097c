"""The distributions (issue 48): `python -m build` makes an sdist and, from it, a wheel that `twine check --strict`
passes, and the wheel holds the data files verify reads at run time (the shipped listing, the typing marker, the
results schema, the report's templates and static files), each equal to the source tree's copy."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build")
pytest.importorskip("twine")

ROOT = Path(__file__).parents[1]
DATA = ("verify/catalog_index.json", "verify/py.typed", "verify/reporting/results.schema.json")
DATA_GLOBS = ("verify/reporting/templates/*.j2", "verify/reporting/static/*.css", "verify/reporting/static/*.js",
              "verify/reporting/static/katex/*.*", "verify/reporting/static/katex/fonts/*")


def test_sdist_and_wheel_build_and_pass_twine(tmp_path):
    # the sdist first, then the wheel built from it: a file the sdist leaves out is missing from the wheel too
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels, sdists = list(tmp_path.glob("*.whl")), list(tmp_path.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)],
                           capture_output=True, text=True, timeout=300)
    assert twine.returncode == 0, twine.stdout + twine.stderr

    expected = set(DATA) | {str(p.relative_to(ROOT)) for g in DATA_GLOBS for p in ROOT.glob(g) if p.is_file()}
    assert len(expected) > 10 and all((ROOT / name).is_file() for name in DATA)
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        assert expected <= names, sorted(expected - names)
        for name in expected:  # the shipped copy is the tree's, byte for byte
            assert wheel.read(name) == (ROOT / name).read_bytes(), name
        tracked = subprocess.run(["git", "ls-files", "verify"], cwd=ROOT, capture_output=True, text=True).stdout
        modules = {n for n in tracked.split() if n.endswith(".py")}
        if modules:  # a git checkout: every tracked module of the package ships
            assert modules <= names, sorted(modules - names)
        assert any(n.endswith("entry_points.txt") and b"verify = verify.cli:main" in wheel.read(n) for n in names)
    with tarfile.open(sdists[0]) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE"} <= members
