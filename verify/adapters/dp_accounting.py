"""`VerifyAccountant`: verify's certified accountant as a `dp_accounting.PrivacyAccountant`, a drop-in for
`dp_accounting.pld.PLDAccountant` (replace the class name; nothing else changes).

    accountant = VerifyAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000)
    accountant.get_epsilon(1e-5)          # the certified upper end: a float, as PLDAccountant answers
    accountant.get_epsilon_bracket(1e-5)  # the bracket (verify.accountant.AccountantResult)

Events: `GaussianDpEvent` (a step that sees every record, q = 1), `PoissonSampledDpEvent` of a `GaussianDpEvent`,
`LaplaceDpEvent` (scale b = noise_multiplier, sensitivity 1), `MixtureOfGaussiansDpEvent`, `RandomizedResponseDpEvent`
(REPLACE_ONE only), `SelfComposedDpEvent`, `ComposedDpEvent`, `NoOpDpEvent` and `NonPrivateDpEvent` (eps = inf,
delta = 1). Each event type is one entry of `_LEAVES`. Neighbouring relations as dp_accounting's PLDAccountant has
them: `ADD_OR_REMOVE_ONE` for all but randomized response; `REPLACE_ONE` for randomized response and for a
`GaussianDpEvent` (dp_accounting's convention: the mean moves by the sensitivity under either relation, so the
privacy loss is the same, accounted as add/remove). One query of verify's accountant takes one relation, so a
schedule that mixes a replace-one event (randomized response) with an add/remove one (a Gaussian) is refused.
`SampledWithoutReplacementDpEvent` is refused (`supports` is False): see `_without_replacement`.
"""

from __future__ import annotations

from collections.abc import Callable

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

from verify.accountant import AccountantResult, Phase
from verify.accountant_events import GaussianMixture, Laplace, RandomizedResponse
from verify.adapters._schedule import AnyPhase, Schedule
from verify.errors import ParameterError

CompositionErrorDetails = PrivacyAccountant.CompositionErrorDetails
NON_PRIVATE, NO_OP = "non-private", "no-op"
_RELATIONS = (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE)
Leaf = tuple[AnyPhase | str, str]  # a leaf event's phase of one step (or NO_OP / NON_PRIVATE) and its relation


def _only(event: dp_event.DpEvent, relation: NeighboringRelation, allowed: NeighboringRelation) -> None:
    if relation is not allowed:
        raise ParameterError(f"{type(event).__name__} is accounted for {allowed.name} neighbours only (as "
                             f"dp_accounting's PLDAccountant), not {relation.name}")


def _gaussian(event: dp_event.GaussianDpEvent, relation: NeighboringRelation) -> Leaf:
    if event.noise_multiplier == 0:
        return NON_PRIVATE, "add_remove"
    return Phase(1.0, event.noise_multiplier, 1), "add_remove"


def _laplace(event: dp_event.LaplaceDpEvent, relation: NeighboringRelation) -> Leaf:
    _only(event, relation, NeighboringRelation.ADD_OR_REMOVE_ONE)
    if event.noise_multiplier == 0:
        return NON_PRIVATE, "add_remove"
    return Laplace(event.noise_multiplier, 1), "add_remove"


def _mixture(event: dp_event.MixtureOfGaussiansDpEvent, relation: NeighboringRelation) -> Leaf:
    _only(event, relation, NeighboringRelation.ADD_OR_REMOVE_ONE)
    pairs = list(zip(event.sensitivities, event.sampling_probs, strict=False))
    if len(event.sensitivities) == len(event.sampling_probs) and all(c == 0 for c, p in pairs if p != 0):
        return NO_OP, "add_remove"  # the two outputs are one distribution
    if event.standard_deviation == 0:
        return NON_PRIVATE, "add_remove"
    return GaussianMixture(event.standard_deviation, tuple(event.sensitivities), tuple(event.sampling_probs),
                           1), "add_remove"


def _randomized_response(event: dp_event.RandomizedResponseDpEvent, relation: NeighboringRelation) -> Leaf:
    _only(event, relation, NeighboringRelation.REPLACE_ONE)
    if event.num_buckets == 1:
        return NO_OP, "replace_one"
    if event.noise_parameter == 0:
        return NON_PRIVATE, "replace_one"
    return RandomizedResponse(event.num_buckets, event.noise_parameter, 1), "replace_one"


def _poisson(event: dp_event.PoissonSampledDpEvent, relation: NeighboringRelation) -> Leaf:
    if not isinstance(event.event, dp_event.GaussianDpEvent):
        raise ParameterError(f"a PoissonSampledDpEvent of a GaussianDpEvent only (verify's engine has no "
                             f"Poisson-sampled {type(event.event).__name__} yet)")
    if relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ParameterError(f"Poisson sampling is accounted for ADD_OR_REMOVE_ONE neighbours only, not {relation}")
    if event.sampling_probability == 0:
        return NO_OP, "add_remove"
    if event.event.noise_multiplier == 0:
        return NON_PRIVATE, "add_remove"
    return Phase(event.sampling_probability, event.event.noise_multiplier, 1), "add_remove"


def _without_replacement(event: dp_event.DpEvent, relation: NeighboringRelation) -> Leaf:
    raise ParameterError(
        f"{type(event).__name__}: sampling without replacement (fixed-size batches) is not yet a phase of verify's "
        f"accountant: its dominating pair is not in the engine (the naive pair (1-g)N(0)+gN(1) against "
        f"(1-g)N(0)+gN(-1) under-reports: a realizable pair gives (1-g)N(0)+gN(2) against N(0))")


# each leaf event type -> its phase of one step (or NO_OP / NON_PRIVATE) and the relation (verify.accountant's name)
# it is accounted under; ParameterError where it is not supported
_LEAVES: dict[type, Callable[[dp_event.DpEvent, NeighboringRelation], Leaf]] = {
    dp_event.GaussianDpEvent: _gaussian,
    dp_event.PoissonSampledDpEvent: _poisson,
    dp_event.LaplaceDpEvent: _laplace,
    dp_event.MixtureOfGaussiansDpEvent: _mixture,
    dp_event.RandomizedResponseDpEvent: _randomized_response,
    dp_event.NoOpDpEvent: lambda event, relation: (NO_OP, "add_remove"),
    dp_event.NonPrivateDpEvent: lambda event, relation: (NON_PRIVATE, "add_remove"),
    dp_event.SampledWithoutReplacementDpEvent: _without_replacement,
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
        """The check (`do_compose` False) composes into a copy, so that the events of one ComposedDpEvent are
        checked against each other too (steps limit, one neighbouring relation)."""
        return self._compose_into(self._schedule if do_compose else self._schedule.copy(), event, count)

    def _compose_into(self, schedule: Schedule, event: dp_event.DpEvent,
                      count: int) -> CompositionErrorDetails | None:
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._compose_into(schedule, event.event, event.count * count)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                error = self._compose_into(schedule, e, count)
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
            phase, neighbouring = leaf(event, self.neighboring_relation)
            if count > 0 and phase == NON_PRIVATE:
                schedule.non_private = True
            elif count > 0 and phase != NO_OP:  # within the accountant's limits, merged with what came before
                schedule.add(phase, count, neighbouring, type(event).__name__)
        except ParameterError as err:
            return CompositionErrorDetails(invalid_event=event, error_message=str(err))
        return None

    @property
    def phases(self) -> tuple[AnyPhase, ...]:
        """The schedule composed so far, identical phases merged."""
        return self._schedule.phases

    def get_epsilon_bracket(self, target_delta: float) -> AccountantResult:
        """The certified bracket on eps(target_delta) of everything composed."""
        return self._schedule.epsilon(target_delta, self._schedule.neighbouring or "add_remove", self._tol)

    def get_delta_bracket(self, target_epsilon: float) -> AccountantResult:
        """The certified bracket on delta(target_epsilon) of everything composed."""
        return self._schedule.delta(target_epsilon, self._schedule.neighbouring or "add_remove", self._tol)

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper end of eps(target_delta): the events composed are (eps, target_delta)-DP."""
        return self.get_epsilon_bracket(target_delta).upper

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper end of delta(target_epsilon)."""
        return self.get_delta_bracket(target_epsilon).upper
