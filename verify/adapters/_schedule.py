"""What both adapters keep: the schedule composed so far (identical phases merged, since composition commutes) and
its certified answers, the bracket's upper end being the number an adapter reports."""

from __future__ import annotations

import math
from dataclasses import replace

from verify import accountant
from verify.accountant import AccountantResult, Phase
from verify.accountant_events import GaussianMixture, Laplace, RandomizedResponse
from verify.errors import ParameterError, ResourceLimitError

AnyPhase = Phase | Laplace | RandomizedResponse | GaussianMixture  # the phase types the adapters compose


class Schedule:
    """Phases composed so far: a phase type is a frozen dataclass with a `steps` field (`Phase`, or the phase types
    of verify.accountant_events), and phases equal but for `steps` are one phase. `non_private` is set once a
    mechanism without any privacy guarantee was composed (eps = inf, delta = 1 from then on). `neighbouring`: the
    relation (verify.accountant's name) the phases composed so far are accounted under, None before the first; one
    query takes one relation, so a phase under another is refused."""

    def __init__(self) -> None:
        self._steps: dict[AnyPhase, int] = {}
        self.non_private = False
        self.neighbouring: str | None = None
        self._first = ""  # what set `neighbouring` (for the refusal's message)

    def copy(self) -> Schedule:
        """an independent copy (to try a composition on)"""
        other = Schedule()
        other._steps, other.non_private = dict(self._steps), self.non_private
        other.neighbouring, other._first = self.neighbouring, self._first
        return other

    @property
    def phases(self) -> tuple[AnyPhase, ...]:
        return tuple(replace(key, steps=steps) for key, steps in self._steps.items())

    def merged(self, phase: AnyPhase, count: int, neighbouring: str = "add_remove", source: str = "") -> AnyPhase:
        """`phase` repeated `count` times and merged with the same phase composed so far (ParameterError where the
        steps exceed the accountant's limit, or where the phases so far are accounted under another neighbouring
        relation than `neighbouring`; `source` names the event in that message); nothing is recorded."""
        if self.neighbouring not in (None, neighbouring):
            raise ParameterError(
                f"{source or type(phase).__name__} is accounted under {neighbouring} neighbours, but {self._first} "
                f"composed before it under {self.neighbouring}: one query of verify's accountant takes one "
                f"neighbouring relation for the whole schedule")
        key = replace(phase, steps=1)
        return replace(key, steps=self._steps.get(key, 0) + phase.steps * count)

    def add(self, phase: AnyPhase, count: int, neighbouring: str = "add_remove", source: str = "") -> None:
        merged = self.merged(phase, count, neighbouring, source)
        self._steps[replace(merged, steps=1)] = merged.steps
        if self.neighbouring is None:
            self.neighbouring, self._first = neighbouring, source or type(phase).__name__

    def epsilon(self, delta: float, neighbouring: str, tol: float | None) -> AccountantResult:
        """The certified eps(delta) bracket: with `tol` None, the accountant's default (the tightest bracket it
        reaches, a refusal's best bracket included); an explicit `tol` that is not met raises its refusal."""
        return self._answer("epsilon", delta, neighbouring, tol)

    def delta(self, eps: float, neighbouring: str, tol: float | None) -> AccountantResult:
        """The certified delta(eps) bracket, as `epsilon`."""
        return self._answer("delta", eps, neighbouring, tol)

    def _answer(self, quantity: str, given: float, neighbouring: str, tol: float | None) -> AccountantResult:
        phases = self.phases
        if self.non_private or not phases:
            if quantity == "epsilon" and not (isinstance(given, (int, float)) and 0 < given < 1):
                raise ParameterError(f"delta must lie in (0, 1), got {given!r}")
            if quantity == "delta" and not (isinstance(given, (int, float)) and math.isfinite(given)):
                raise ParameterError(f"eps must be a finite number, got {given!r}")
            if self.non_private:
                value = math.inf if quantity == "epsilon" else 1.0
            else:  # nothing composed: both outputs are one distribution, delta(eps) = max(0, 1 - e^eps)
                value = 0.0 if quantity == "epsilon" else max(0.0, -math.expm1(given))
            return AccountantResult(quantity=quantity, lower=value, estimate=value, upper=value, given=float(given),
                                    phases=phases, neighbouring=neighbouring, tolerance=tol or accountant.DEFAULT_TOL,
                                    relative=True, grid_width=0.0, seconds=0.0)
        solve = accountant.epsilon if quantity == "epsilon" else accountant.delta
        try:
            if tol is None:
                return solve(given, phases, neighbouring=neighbouring)
            return solve(given, phases, tol=tol, neighbouring=neighbouring)
        except ResourceLimitError as err:  # verify.accountant.AccountantRefusal carries its tightest bracket
            best = getattr(err, "best", None)
            if tol is not None or best is None:
                raise
            return best
