"""The JSON form of a certified accountant answer (`verify account --json`): a stable object scripts can rely on."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from verify.accountant import AccountantResult, Calibration, Phase
from verify.accountant_compare import Comparison

ACCOUNT_SCHEMA = "verify.account/1"


def account_dict(result: AccountantResult, comparisons: Sequence[Comparison] = ()) -> dict:
    """{"epsilon" or "delta": {"lower", "estimate", "upper"}, the given value, the schedule, the tolerance, and the
    comparison with other accountants where asked}."""
    out = {
        "schema": ACCOUNT_SCHEMA,
        result.quantity: {"lower": result.lower, "estimate": result.estimate, "upper": result.upper,
                          "certified": True},
        result.given_name: result.given,
        "phases": [_phase_dict(p) for p in result.phases],
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


def _phase_dict(phase) -> dict:
    """a Poisson phase as {"q", "sigma", "steps"}; another phase type (verify.accountant_events) as {"event": its
    type, then its fields}"""
    if isinstance(phase, Phase):
        return {"q": phase.q, "sigma": phase.sigma, "steps": phase.steps}
    return {"event": type(phase).__name__, **dataclasses.asdict(phase)}


def calibration_dict(result: Calibration) -> dict:
    """{"calibrate": parameter, "value" (meets the target, certified), "excluded" (provably does not), the target and
    the certificate (the bracket at the value, as `account_dict`)}."""
    return {"schema": ACCOUNT_SCHEMA, "calibrate": result.parameter, "value": result.value,
            "excluded": result.excluded, "target_epsilon": result.target_eps, "delta": result.delta,
            "certificate": account_dict(result.certificate)}
