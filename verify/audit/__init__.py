"""`verify.audit`: a valid lower bound on a mechanism's privacy from its own samples (issue 51). See
`verify.audit.core` for the tests and `verify.audit.stats` for their exact arithmetic."""

from __future__ import annotations

from verify.audit.core import audit, audit_scores, epsilon_oracle
from verify.audit.dpsgd import DPSGDAuditResult, audit_dpsgd
from verify.audit.result import AuditCounts, AuditResult, AuditTest

__all__ = ["AuditCounts", "AuditResult", "AuditTest", "DPSGDAuditResult", "audit", "audit_dpsgd", "audit_scores",
           "epsilon_oracle"]
