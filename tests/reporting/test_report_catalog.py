"""The whole catalog's report (opt-in: VERIFY_FULL_REPORT=1; it takes about a minute or more on two cores)."""

from __future__ import annotations

import json
import os
import time

import pytest

from .conftest import needs_report_extra

pytestmark = pytest.mark.skipif(os.environ.get("VERIFY_FULL_REPORT") != "1",
                                reason="whole-catalog report is opt-in: set VERIFY_FULL_REPORT=1")


def test_whole_catalog_report(tmp_path):
    needs_report_extra()
    from verify.catalog import CATALOG
    from verify.cli import main

    start = time.perf_counter()
    out = tmp_path / "full"
    main(["report", "--out", str(out), "--quiet"])
    seconds = time.perf_counter() - start
    data = json.loads((out / "results.json").read_text())
    assert {r["id"] for r in data["results"]} == set(CATALOG)
    assert data["summary"]["n_errors"] == 0
    md = (out / "report.md").read_text()
    assert all(f"[`{theorem_id}`]" in md for theorem_id in CATALOG)
    try:
        from verify.reporting.schema import validate
    except ImportError:  # pragma: no cover
        return
    validate(data)
    print(f"whole catalog: {len(data['results'])} results, {seconds:.1f} s")
