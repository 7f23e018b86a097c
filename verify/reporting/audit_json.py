"""The JSON form of an audit (`verify audit --json`): a stable object scripts can rely on."""

from __future__ import annotations

from dataclasses import asdict

from verify.audit import AuditResult

AUDIT_SCHEMA = "verify.audit/1"


def audit_dict(result: AuditResult, source: str) -> dict:
    """{"epsilon": {"lower"}, "refutes", "verdict", "power", "counts", "test", ...}; `source` names what was audited
    (the mechanism's module, or "scores")."""
    return {
        "schema": AUDIT_SCHEMA,
        "source": source,
        "epsilon": {"lower": result.epsilon_lower, "claim": result.claim_epsilon},
        "delta": result.delta,
        "confidence": result.confidence,
        "refutes": result.refutes,
        "verdict": result.verdict,
        "power": result.power,
        "counts": asdict(result.counts),
        "test": {**asdict(result.test), "projection": None if result.test.projection is None
                 else list(result.test.projection)},
        "rates_upper": {"false_positive": result.fpr_upper, "false_negative": result.fnr_upper},
        "assume": result.assume,
        "mu_lower": result.mu_lower,
        "sigma_interval": None if result.sigma_interval is None else list(result.sigma_interval),
    }
