"""The JSON form of a certified accountant answer (`verify account --json`): a stable object scripts can rely on.

No key changes meaning with the query: "query" names the quantity answered, the answer's bracket sits under that
quantity's name ("epsilon" or "delta": always an answer) and the input under "given" ({"delta": value} or
{"epsilon": value}: always an input)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from verify.accountant import AccountantRefusal, AccountantResult, Phase
from verify.accountant_calibrate import Calibration
from verify.accountant_compare import Comparison

ACCOUNT_SCHEMA = "verify.account/2"


def account_dict(result: AccountantResult, comparisons: Sequence[Comparison] = ()) -> dict:
    """{"query": "epsilon" or "delta" (what was asked), "given": {the input: "delta" or "epsilon": value}, the answer
    under the name of the query ({"lower", "estimate", "upper", "width", "certified"}), the schedule, the width asked
    for ("tolerance": value or null for the default accuracy), the width aimed for ("target") and what stopped the
    refinement short of it ("limit": null where it was met), and the comparison with other accountants where
    asked}."""
    out = {
        "schema": ACCOUNT_SCHEMA,
        "query": result.quantity,
        "given": {result.given_name: result.given},
        result.quantity: {"lower": result.lower, "estimate": result.estimate, "upper": result.upper,
                          "width": result.width, "certified": True},
        "phases": [_phase_dict(p) for p in result.phases],
        "neighbouring": result.neighbouring,
        "tolerance": {"value": result.tolerance, "relative": result.relative,
                      "default": result.tolerance is None},
        "target": result.target,
        "limit": result.limit or None,
        "grid_width": result.grid_width,
        "method": ("Gaussian closed form (q = 1: mu-GDP, Arb balls)" if result.method == "gaussian" else
                   "privacy-loss distribution bracket (pessimistic/optimistic PLD, floating-point errors bounded)"),
        "seconds": result.seconds,
    }
    if comparisons:
        out["compare"] = [{"accountant": c.accountant, "value": c.value, "status": c.status, "note": c.note}
                          for c in comparisons]
    return out


def refusal_dict(query: str, given: dict, error: AccountantRefusal) -> dict:
    """A refusal (an explicit width not met): {"query", "given", "refused": its reason, "best": the tightest
    certified bracket reached as `account_dict` (null where none was)}."""
    return {"schema": ACCOUNT_SCHEMA, "query": query, "given": given, "refused": str(error),
            "best": None if error.best is None else account_dict(error.best)}


def _phase_dict(phase) -> dict:
    """a Poisson phase as {"q", "sigma", "steps"}; another phase type (verify.accountant_events) as {"event": its
    type, then its fields}"""
    if isinstance(phase, Phase):
        return {"q": phase.q, "sigma": phase.sigma, "steps": phase.steps}
    return {"event": type(phase).__name__, **dataclasses.asdict(phase)}


def calibration_dict(result: Calibration) -> dict:
    """{"calibrate": parameter, "value" (meets the target, certified), "excluded" (provably does not), "at_limit"
    (the value is the search limit: every value up to it meets the target), the target, "given" ({"delta": value})
    and the certificate (the bracket at the value, as `account_dict`)}."""
    return {"schema": ACCOUNT_SCHEMA, "calibrate": result.parameter, "value": result.value,
            "excluded": result.excluded, "at_limit": result.at_limit, "target_epsilon": result.target_eps,
            "given": {"delta": result.delta}, "certificate": account_dict(result.certificate)}
