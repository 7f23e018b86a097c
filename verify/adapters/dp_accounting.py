"""`VerifyAccountant`: verify's certified accountant as a `dp_accounting.PrivacyAccountant`, a drop-in for
`dp_accounting.pld.PLDAccountant` (replace the class name; nothing else changes).

    accountant = VerifyAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000)
    accountant.get_epsilon(1e-5)          # the certified upper end: a float, as PLDAccountant answers
    accountant.get_epsilon_bracket(1e-5)  # the bracket (verify.accountant.AccountantResult)

Events: `GaussianDpEvent` (a step that sees every record, q = 1), `PoissonSampledDpEvent` of a `GaussianDpEvent`,
`SelfComposedDpEvent`, `ComposedDpEvent`, `NoOpDpEvent` and `NonPrivateDpEvent` (eps = inf, delta = 1). Sampling
without replacement, Laplace and randomized response are refused (`supports` is False) until verify's engine has
them as phases: each event type is one entry of `_LEAVES`. Neighbouring relations: `ADD_OR_REMOVE_ONE`, and
`REPLACE_ONE` for a `GaussianDpEvent` (dp_accounting's convention: the mean moves by the sensitivity under either
relation, so the privacy loss is the same).
"""

from __future__ import annotations

from collections.abc import Callable

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

from verify.accountant import AccountantResult, Phase
from verify.adapters._schedule import Schedule
from verify.errors import ParameterError

CompositionErrorDetails = PrivacyAccountant.CompositionErrorDetails
NON_PRIVATE, NO_OP = "non-private", "no-op"
_RELATIONS = {NeighboringRelation.ADD_OR_REMOVE_ONE: "add_remove", NeighboringRelation.REPLACE_ONE: "add_remove"}


def _gaussian(event: dp_event.GaussianDpEvent, relation: NeighboringRelation) -> Phase | str:
    if event.noise_multiplier == 0:
        return NON_PRIVATE
    return Phase(1.0, event.noise_multiplier, 1)


def _poisson(event: dp_event.PoissonSampledDpEvent, relation: NeighboringRelation) -> Phase | str:
    if not isinstance(event.event, dp_event.GaussianDpEvent):
        raise ParameterError(f"a PoissonSampledDpEvent of a GaussianDpEvent only (verify's engine has no "
                             f"Poisson-sampled {type(event.event).__name__} yet)")
    if relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ParameterError(f"Poisson sampling is accounted for ADD_OR_REMOVE_ONE neighbours only, not {relation}")
    if event.sampling_probability == 0:
        return NO_OP
    if event.event.noise_multiplier == 0:
        return NON_PRIVATE
    return Phase(event.sampling_probability, event.event.noise_multiplier, 1)


def _pending(event: dp_event.DpEvent, relation: NeighboringRelation) -> Phase | str:
    raise ParameterError(f"{type(event).__name__} is not yet a phase of verify's accountant")


# each leaf event type -> its phase of one step (or NO_OP / NON_PRIVATE); ParameterError where it is not supported
_LEAVES: dict[type, Callable[[dp_event.DpEvent, NeighboringRelation], Phase | str]] = {
    dp_event.GaussianDpEvent: _gaussian,
    dp_event.PoissonSampledDpEvent: _poisson,
    dp_event.NoOpDpEvent: lambda event, relation: NO_OP,
    dp_event.NonPrivateDpEvent: lambda event, relation: NON_PRIVATE,
    dp_event.SampledWithoutReplacementDpEvent: _pending,
    dp_event.LaplaceDpEvent: _pending,
    dp_event.RandomizedResponseDpEvent: _pending,
}


class VerifyAccountant(PrivacyAccountant):
    """A `PrivacyAccountant` whose `get_epsilon`/`get_delta` are the certified upper ends of verify's bracket (the
    tight value of the composed events lies below them, proven); `get_epsilon_bracket`/`get_delta_bracket` answer
    the whole bracket. `tol`: the bracket's relative width asked for (None: the accountant's default; one that is
    not met raises verify's refusal)."""

    def __init__(self, neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
                 tol: float | None = None) -> None:
        super().__init__(neighboring_relation)
        self._tol = tol
        self._schedule = Schedule()

    def supports(self, event: dp_event.DpEvent) -> bool:
        """Whether composing `event` once now would succeed (the base class asks with count 0, which hides a count
        beyond the accountant's steps limit)."""
        return self._maybe_compose(event, 1, False) is None

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> CompositionErrorDetails | None:
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._maybe_compose(event.event, event.count * count, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                error = self._maybe_compose(e, count, do_compose)
                if error is not None:
                    return error
            return None
        leaf = _LEAVES.get(type(event))
        if leaf is None:
            return CompositionErrorDetails(invalid_event=event, error_message="Unsupported event.")
        if self.neighboring_relation not in _RELATIONS:
            return CompositionErrorDetails(invalid_event=event, error_message=(
                f"neighboring_relation must be ADD_OR_REMOVE_ONE or REPLACE_ONE, found {self.neighboring_relation}"))
        try:
            phase = leaf(event, self.neighboring_relation)
            if isinstance(phase, Phase) and count > 0:
                self._schedule.merged(phase, count)  # within the accountant's limits, merged with what came before
        except ParameterError as err:
            return CompositionErrorDetails(invalid_event=event, error_message=str(err))
        if do_compose and count > 0:
            if phase == NON_PRIVATE:
                self._schedule.non_private = True
            elif isinstance(phase, Phase):
                self._schedule.add(phase, count)
        return None

    @property
    def phases(self) -> tuple[Phase, ...]:
        """The schedule composed so far, identical phases merged."""
        return self._schedule.phases

    def get_epsilon_bracket(self, target_delta: float) -> AccountantResult:
        """The certified bracket on eps(target_delta) of everything composed."""
        return self._schedule.epsilon(target_delta, _RELATIONS[self.neighboring_relation], self._tol)

    def get_delta_bracket(self, target_epsilon: float) -> AccountantResult:
        """The certified bracket on delta(target_epsilon) of everything composed."""
        return self._schedule.delta(target_epsilon, _RELATIONS[self.neighboring_relation], self._tol)

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper end of eps(target_delta): the events composed are (eps, target_delta)-DP."""
        return self.get_epsilon_bracket(target_delta).upper

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper end of delta(target_epsilon)."""
        return self.get_delta_bracket(target_epsilon).upper
