"""dp_accounting's optimistic and pessimistic PLD estimates of a schedule, the independent reference the adapters'
tests hold verify's certified bracket against (tests/test_adapters_*.py)."""

from __future__ import annotations

from dp_accounting.pld import privacy_loss_distribution as PLD


def dp_pair(phases, *, delta=None, eps=None) -> tuple[float, float]:
    """dp_accounting's optimistic and pessimistic PLD estimates (its default discretisation, 1e-4) of eps(delta)
    or delta(eps) for phases (q, sigma, steps): the truth lies between them (the optimistic one by privacy buckets,
    which connect-the-dots does not do optimistically)."""
    out = []
    for pessimistic in (False, True):
        pld = None
        for q, sigma, steps in phases:
            one = PLD.from_gaussian_mechanism(standard_deviation=sigma, sampling_prob=q,
                                              pessimistic_estimate=pessimistic,
                                              use_connect_dots=pessimistic).self_compose(steps)
            pld = one if pld is None else pld.compose(one)
        out.append(pld.get_epsilon_for_delta(delta) if eps is None else pld.get_delta_for_epsilon(eps))
    return out[0], out[1]
