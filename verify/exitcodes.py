"""Exit codes of the `verify` command line (documented in README)."""

from __future__ import annotations

OK = 0  # every verdict as expected / no counterexample in the points checked / CERTIFIED
UNEXPECTED = 1  # an unexpected verdict, an ERROR entry, a counterexample found
BAD_INPUT = 2  # bad input: a violated assumption, an unknown name, a bad option value
INCONCLUSIVE = 3  # nothing (or too little) was checked, a cap was hit, or the evidence cannot decide
INTERNAL = 4  # a bug in verify (an exception it did not raise on purpose); VERIFY_DEBUG=1 prints the traceback
SIGNALLED = 128  # stopped by a signal: 128 + its number (130 SIGINT, 143 SIGTERM), as a shell reports it


def stopped_by(signum: int) -> int:
    """The exit code of a command stopped by signal `signum` (its processes ended, nothing half written left)."""
    return SIGNALLED + int(signum)
