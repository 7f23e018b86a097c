"""How many examples a property test draws. README's test command (the default profile) draws a modest count per
test, each chosen where the test is and said why there; `VERIFY_HYPOTHESIS_PROFILE=thorough` draws the large counts
(for a deep run: `VERIFY_HYPOTHESIS_PROFILE=thorough nox -s tests`). tests/conftest.py loads the matching Hypothesis
profile (tests that set no count draw 100 examples by default and 500 thorough)."""

from __future__ import annotations

import os

PROFILES = ("default", "thorough")
PROFILE = os.environ.get("VERIFY_HYPOTHESIS_PROFILE", "") or "default"
if PROFILE not in PROFILES:
    raise ValueError(f"VERIFY_HYPOTHESIS_PROFILE={PROFILE!r}: must be one of {', '.join(PROFILES)}")
THOROUGH = PROFILE == "thorough"


def examples(default: int, thorough: int) -> int:
    """`thorough` under VERIFY_HYPOTHESIS_PROFILE=thorough, else `default`."""
    return thorough if THOROUGH else default
