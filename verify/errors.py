"""Errors raised on bad input. Each names the violated assumption or parameter."""

from __future__ import annotations

from collections.abc import Mapping


class VerifyError(Exception):
    """Base class of every error verify raises on purpose."""


class ParameterError(VerifyError, ValueError):
    """A parameter is missing, unknown, NaN, or outside its declared domain."""


class AssumptionError(VerifyError, ValueError):
    """A parameter point breaks a named assumption of a theorem or an instance family."""

    def __init__(self, owner: str, name: str, condition: str, values: Mapping[str, float], why: str = ""):
        self.owner = owner
        self.assumption = name
        self.condition = condition
        self.values = {k: float(v) for k, v in values.items()}
        shown = ", ".join(f"{k}={v:g}" for k, v in sorted(self.values.items()))
        text = f"{owner}: assumption '{name}' ({condition}) fails at {shown}"
        if why:
            text += f": {why}"
        super().__init__(text)


class UnknownIdError(VerifyError, KeyError):
    """No catalog entry or family has this id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])
