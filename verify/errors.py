"""Errors raised on bad input or on a computation that hits a cap. Each names the violated assumption, parameter
or limit. Every error verify raises on purpose derives from `VerifyError`; `exit_code` maps it to the CLI's code."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping


class VerifyError(Exception):
    """Base class of every error verify raises on purpose."""

    exit_code = 2  # bad input, unless a subclass says otherwise


class ParameterError(VerifyError, ValueError):
    """A parameter is missing, unknown, NaN, infinite, or outside its declared domain."""


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


def check_renyi_order(alpha: float) -> None:
    """A ParameterError unless the Rényi order alpha is a finite number > 1."""
    if math.isnan(alpha) or not 1 < alpha < math.inf:
        raise ParameterError(f"Rényi order alpha must be a finite number > 1, got {alpha}")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for the closest known names (difflib's ratio >= 0.6), or '' where none is close."""
    close = difflib.get_close_matches(str(name), list(known), n=3)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


class UnknownIdError(VerifyError, KeyError):
    """No catalog entry or family has this id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class PluginError(VerifyError):
    """A plugin module or entry point cannot be loaded, or declares something that is not a valid family."""


class PluginPointError(PluginError):
    """A user's family's code raised at one point (any exception, SystemExit included): that point's error, with the
    exception's type and text (`error_type`, `error_text`). A search counts such points and goes on."""

    def __init__(self, message: str, error_type: str = "", error_text: str = ""):
        super().__init__(message, error_type, error_text)
        self.error_type = error_type
        self.error_text = error_text

    def __str__(self) -> str:
        return str(self.args[0])

    @property
    def raised(self) -> str:
        """'Type: text', or the type alone with '(no message)' where the text is empty."""
        return f"{self.error_type}: {self.error_text}" if self.error_text else f"{self.error_type} (no message)"


def count_text(n: int) -> str:
    """A count for a message: exact below 10^12, else in scientific notation (a cap's message once printed a
    309-digit integer)."""
    from decimal import Decimal

    n = int(n)
    return str(n) if abs(n) < 10**12 else f"{Decimal(n):.2e}"


class ResourceLimitError(VerifyError):
    """A computation would exceed its memory or time cap; the point is left undecided, never guessed."""

    exit_code = 3


class DeadlineExceeded(ResourceLimitError):
    """A truth (or a search) ran past its wall-clock deadline."""


class MemoryLimitExceeded(ResourceLimitError):
    """A truth would allocate more than its memory cap."""


class NothingChecked(VerifyError):
    """A search or a run checked fewer points than required: it is evidence of nothing, never a pass."""

    exit_code = 3


class UndefinedBoundError(ParameterError):
    """A bound is not a real number at a point (NaN, complex, a division by zero): the point is excluded."""
