"""`VerifyOpacusAccountant`: verify's certified accountant as an opacus accountant. Importing this module
registers it under the name "verify" where opacus is installed, so that a training script changes one string:

    import verify.adapters.opacus  # registers "verify"
    engine = PrivacyEngine(accountant="verify")
    ...
    engine.get_epsilon(1e-5)  # the certified upper end

or sets it on an engine it already has: `engine.accountant = VerifyOpacusAccountant()`. Without opacus the class is
a plain accountant with the same methods (`step`, `get_epsilon`, `state_dict`, ...).

Each step is one Poisson-subsampled Gaussian step (sampling rate, noise multiplier), add/remove neighbours: what
opacus's own accountants assume.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from verify.accountant import AccountantResult, Phase
from verify.adapters._schedule import Schedule

try:  # opacus (and torch) are optional: the accountant itself needs neither
    from opacus.accountants import IAccountant as _Base
except ImportError:
    _Base = object
try:  # opacus >= 1.6: the registry PrivacyEngine(accountant=NAME) looks names up in
    from opacus.accountants import register_accountant as _register_accountant
except ImportError:
    _register_accountant = None

MECHANISM = "verify"


class VerifyOpacusAccountant(_Base):
    """An opacus accountant whose `get_epsilon` is the certified upper end of verify's bracket. `history` is opacus's:
    (noise multiplier, sampling rate, steps) per run of identical consecutive steps. `tol`: the bracket's relative
    width asked for (None: the accountant's default; one that is not met raises verify's refusal)."""

    def __init__(self, tol: float | None = None) -> None:
        self.history: list[tuple[float, float, int]] = []
        self.tol = tol

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """One optimisation step: a Poisson sample at `sample_rate`, Gaussian noise of `noise_multiplier`."""
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            self.history[-1] = (noise_multiplier, sample_rate, self.history[-1][2] + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        """The number of steps taken so far."""
        return sum(steps for _, _, steps in self.history)

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM

    def _schedule(self) -> Schedule:
        schedule = Schedule()
        for noise_multiplier, sample_rate, steps in self.history:
            if noise_multiplier == 0 and sample_rate > 0:
                schedule.non_private = True
            elif sample_rate > 0:
                schedule.add(Phase(sample_rate, noise_multiplier, 1), steps)
        return schedule

    def get_epsilon_bracket(self, delta: float) -> AccountantResult:
        """The certified bracket on eps(delta) of the steps taken so far."""
        return self._schedule().epsilon(delta, "add_remove", self.tol)

    def get_delta_bracket(self, eps: float) -> AccountantResult:
        """The certified bracket on delta(eps) of the steps taken so far."""
        return self._schedule().delta(eps, "add_remove", self.tol)

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """The certified upper end of eps(delta): the steps taken are (eps, delta)-DP. The options of opacus's other
        accountants (`eps_error`, `alphas`, ...) are accepted and change nothing: the answer is certified."""
        return self.get_epsilon_bracket(delta).upper

    def get_delta(self, eps: float) -> float:
        """The certified upper end of delta(eps)."""
        return self.get_delta_bracket(eps).upper

    def state_dict(self, destination: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """opacus's accountant state: {"history": [...], "mechanism": "verify"} (PrivacyEngine.save_checkpoint)."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = list(self.history)
        destination["mechanism"] = MECHANISM
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a `state_dict` of this accountant (PrivacyEngine.load_checkpoint); ValueError, as opacus raises,
        for one that is empty, lacks a key, is another mechanism's or holds a malformed step."""
        if not state_dict or "history" not in state_dict or "mechanism" not in state_dict:
            raise ValueError("state_dict must hold `history` and `mechanism`: it cannot be loaded into the accountant")
        if state_dict["mechanism"] != MECHANISM:
            raise ValueError(f"state_dict of {state_dict['mechanism']} cannot be loaded into Privacy Accountant "
                             f"with mechanism {MECHANISM}")
        history = [tuple(entry) for entry in state_dict["history"]]
        for entry in history:
            if not (len(entry) == 3 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in entry)
                    and entry[0] >= 0 and 0 <= entry[1] <= 1 and int(entry[2]) == entry[2] >= 1):
                raise ValueError(f"state_dict holds a malformed step {entry!r}: (noise multiplier >= 0, sample rate "
                                 "in [0, 1], steps >= 1) expected")
        self.history = [(float(s), float(q), int(n)) for s, q, n in history]


def register() -> None:
    """Register the accountant under "verify" in opacus's registry, so that `PrivacyEngine(accountant="verify")`
    creates it (done on import; again, it changes nothing). ImportError where opacus is not installed or has no
    registry (before 1.6: set `engine.accountant = VerifyOpacusAccountant()` instead)."""
    if _register_accountant is None:
        raise ImportError("registering the accountant needs opacus >= 1.6 (opacus.accountants.register_accountant); "
                          "set `engine.accountant = VerifyOpacusAccountant()` instead")
    _register_accountant(MECHANISM, VerifyOpacusAccountant, force=True)


if _register_accountant is not None:
    register()
