"""results.json as a pandas DataFrame (the optional `frame` extra): one row per result, or one per checked point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.errors import ParameterError
from verify.reporting.columns import load_results, point_rows
from verify.results import params_text

RESULT_COLUMNS = ("id", "family", "paper", "variant", "direction", "quantity", "expected", "verdict", "as_expected",
                  "vacuous", "n_points", "n_skipped", "n_errors", "ratio_min", "ratio_max", "counterexample")


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as err:
        raise ParameterError(f"results_frame needs pandas: pip install 'dp-verify[frame]' ({err})") from None
    return pandas


def results_frame(path: str | Path, *, points: bool = False) -> Any:
    """A DataFrame of a results file (`verify run --json`, a report's results.json).

    One row per result (entry on a family): id, family, paper key, variant, direction, quantity, expected and
    shown verdict, whether as expected or vacuous, point counts, the range of bound/truth and the counterexample as
    `K=1, m=251`. With `points=True`, one row per checked point instead: id, family, the point's parameters (one
    column each), bound, truth and its interval and method, verdict, origin (grid or falsifier), whether certified.
    """
    pandas = _pandas()
    data = load_results(path)
    if not points:
        rows = []
        for r in data["results"]:
            cx = r.get("counterexample")
            rows.append({"id": r["id"], "family": r["family"], "paper": r["id"].split(".", 1)[0],
                         "variant": r["variant"], "direction": r["direction"], "quantity": r["quantity"],
                         "expected": r["expected"], "verdict": r["verdict"], "as_expected": r["as_expected"],
                         "vacuous": bool(r.get("vacuous")), "n_points": r["n_points"], "n_skipped": r["n_skipped"],
                         "n_errors": r["n_errors"], "ratio_min": r["ratio_min"], "ratio_max": r["ratio_max"],
                         "counterexample": params_text(cx["params"]) if cx else None})
        return pandas.DataFrame(rows, columns=list(RESULT_COLUMNS))
    rows = []
    for r in data["results"]:
        for p in point_rows(r["points"], r["id"], r["family"]):
            t = p["truth"]
            rows.append({"id": r["id"], "family": r["family"], **p["params"], "bound": p["bound"],
                         "truth": t["value"], "truth_lower": t["lower"], "truth_upper": t["upper"],
                         "method": t["method"], "verdict": p["verdict"], "origin": p["origin"],
                         "certified": p.get("certificate") is not None})
    return pandas.DataFrame(rows)
