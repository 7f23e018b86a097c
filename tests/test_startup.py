"""Start-up stays light (issue 22): `import verify`, `verify --help` / `--version` and the pytest plugin load neither
SymPy nor SciPy nor the catalog, nor does `verify list` (from its shipped listing). The timings are in
benchmarks/test_bench_startup.py; here only which modules a fresh interpreter loads, and that what the light modules
copy matches the real thing."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest
import sympy as sp

import verify
from verify import cli

HEAVY = ("sympy", "scipy", "numpy", "hypothesis", "verify.catalog", "verify.families", "verify.model")


def _loaded_after(code: str) -> set[str]:
    """The top-level packages and verify modules a fresh interpreter holds after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    names = json.loads(out.splitlines()[-1])
    return {n for n in names if n.startswith("verify")} | {n.split(".")[0] for n in names}


@pytest.mark.parametrize("code", [
    "import verify",
    "import verify.cli",
    "import verify.testing.pytest_plugin",
    "from verify.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "from verify.cli import main\nmain(['--version'])",
    "from verify.cli import main\nmain(['list', '--help'])",
])
def test_light_entry_points_load_nothing_heavy(code):
    loaded = _loaded_after(code)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_list_loads_nothing_heavy_from_the_shipped_listing_and_no_family_without_it():
    """From the shipped listing (verify/catalog_index.json) `verify list` needs neither SymPy nor the catalog; where
    the listing does not match the sources it builds the catalog, still without a family."""
    run_list = ("import io, contextlib\nfrom verify.cli import main\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['list']) == 0")
    assert not _loaded_after(run_list) & set(HEAVY)
    stale = "import verify.catalog_index as index\nindex.digest = lambda *_: 'changed'\n" + run_list
    loaded = _loaded_after(stale)
    assert "verify.catalog" in loaded
    assert not loaded & {"scipy", "numpy", "hypothesis", "verify.families"}


def test_version(capsys):
    assert verify.__version__ == importlib.metadata.version("dp-verify")
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"verify {verify.__version__}\n"


def test_the_console_script_prints_its_version():
    out = subprocess.run([sys.executable, "-m", "verify.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"verify {verify.__version__}\n"


def test_lazy_public_names_are_the_real_objects():
    from verify.api import check
    from verify.catalog import CATALOG, theorem
    from verify.families import FAMILIES, family
    from verify.model import Direction

    assert (verify.check, verify.CATALOG, verify.theorem) == (check, CATALOG, theorem)
    assert (verify.FAMILIES, verify.family, verify.Direction) == (FAMILIES, family, Direction)
    assert set(verify.__all__) <= set(dir(verify))
    for name in verify.__all__:
        assert getattr(verify, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        verify.nothing_here  # noqa: B018


def test_testing_falsify_is_the_function_after_its_module_is_imported():
    code = ("import sys, verify.runner  # imports the submodule verify.testing.falsify first\n"
            "from verify.testing import falsify\nassert falsify is sys.modules['verify.testing.falsify'].falsify")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_parser_copies_match_their_sources():
    from verify.runner import FALSIFY_EXAMPLES
    from verify.testing.falsify import MIN_CHECKED, SIDES

    assert cli.FALSIFY_EXAMPLES == FALSIFY_EXAMPLES
    assert cli.MIN_CHECKED == MIN_CHECKED
    assert cli.SIDES == tuple(SIDES)


def test_the_spelled_out_maintext_variance_is_the_simplified_one():
    from verify.catalog.chourasia2021 import THM3_EXACT, THM3_MAINTEXT
    from verify.symbols import n

    assert sp.srepr(THM3_MAINTEXT) == sp.srepr(sp.simplify(THM3_EXACT * n**2))
