"""The JSON form of a certified accountant answer (`verify account --json`): a stable object scripts can rely on.

No key changes meaning with the query: "query" names the quantity answered, the answer's bracket sits under that
quantity's name ("epsilon" or "delta": always an answer) and the input under "at_delta" or "at_epsilon" (always an
input)."""

from __future__ import annotations

from collections.abc import Sequence

from verify.accountant import AccountantResult
from verify.accountant_calibrate import Calibration
from verify.accountant_compare import Comparison

ACCOUNT_SCHEMA = "verify.account/2"


def account_dict(result: AccountantResult, comparisons: Sequence[Comparison] = ()) -> dict:
    """{"query", "epsilon" or "delta": {"lower", "estimate", "upper"}, "at_delta" or "at_epsilon" (the given value),
    the schedule, the tolerance, and the comparison with other accountants where asked}."""
    out = {
        "schema": ACCOUNT_SCHEMA,
        "query": result.quantity,
        result.quantity: {"lower": result.lower, "estimate": result.estimate, "upper": result.upper,
                          "certified": True},
        f"at_{result.given_name}": result.given,
        "phases": [{"q": p.q, "sigma": p.sigma, "steps": p.steps} for p in result.phases],
        "neighbouring": result.neighbouring,
        "tolerance": {"value": result.tolerance, "relative": result.relative},
        "grid_width": result.grid_width,
        "method": "privacy-loss distribution bracket (pessimistic/optimistic PLD, floating-point errors bounded)",
        "seconds": result.seconds,
    }
    if comparisons:
        out["compare"] = [{"accountant": c.accountant, "value": c.value, "status": c.status, "note": c.note}
                          for c in comparisons]
    return out


def calibration_dict(result: Calibration) -> dict:
    """{"calibrate": parameter, "value" (meets the target, certified), "excluded" (provably does not), "at_limit"
    (the value is the search limit: every value up to it meets the target), the target, "at_delta" and the
    certificate (the bracket at the value, as `account_dict`)}."""
    return {"schema": ACCOUNT_SCHEMA, "calibrate": result.parameter, "value": result.value,
            "excluded": result.excluded, "at_limit": result.at_limit, "target_epsilon": result.target_eps,
            "at_delta": result.delta, "certificate": account_dict(result.certificate)}
