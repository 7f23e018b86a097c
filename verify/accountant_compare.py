"""Other DP-SGD accountants, evaluated on the schedule of a certified bracket (verify.accountant) and placed against
it: `conservative` (above the proven upper end), `within` (inside the bracket) or `UNDER-REPORTS` (below the proven
lower end: a privacy claim the mechanism does not have). Each library is optional and imported only here; one that is
not installed is listed as such, never an error. A peer is run on what it supports; where it does not support the
query (opacus and autodp answer eps(delta) only; opacus' GaussianAccountant takes one (noise, rate) pair; each peer
accounts add/remove neighbours) it is `not applicable`, with the reason, which is not `failed` (an error it raised).

Each runs under the caps of verify's own code, in a process of its own (pipeline.isolation.call_capped): its address
space is capped (env VERIFY_MEMORY_CAP, default 1 GiB, plus the isolation's headroom) and it is killed at the
point deadline (env VERIFY_TRUTH_DEADLINE, default 120 s). One that hits a cap is listed `over the memory cap` or
`past its deadline` (prv_accountant grew to 20 GB at T = 1e6 without the cap), one that fails `failed`, with the
reason; none of them changes verify's own answer. Each library is imported here first (torch, which opacus loads,
maps more address space than the cap), so that the cap bounds what the computation allocates.

Add/remove neighbours only (the relation these accountants use for Poisson sampling)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from verify.accountant import AccountantResult
from verify.errors import DeadlineExceeded, MemoryLimitExceeded
from verify.limits import memory_cap, remaining, truth_deadline
from verify.truth.gaussian import gaussian_delta, gaussian_dp_epsilon

CONSERVATIVE, WITHIN, UNDER = "conservative", "within", "UNDER-REPORTS"
OVER_MEMORY, PAST_DEADLINE, FAILED = "over the memory cap", "past its deadline", "failed"
NOT_INSTALLED, NOT_APPLICABLE = "not installed", "not applicable"
PRV_EPS_ERROR = 0.01  # prv_accountant's eps_error (absolute), stated in its note
PRV_DELTA_ERROR = 1e-3  # its delta_error relative to delta, as the library recommends ("around 1e-3 x delta")


@dataclass(frozen=True)
class Comparison:
    """One accountant's answer on the bracket's schedule: `value` (None where it is not installed, not applicable or
    failed, with `note` saying why) and its `status` against the bracket; `note` also states the settings a peer ran
    with where they set its error (prv_accountant's eps_error and delta_error)."""

    accountant: str
    value: float | None
    status: str
    note: str = ""

    def __str__(self) -> str:
        shown = "-" if self.value is None else f"{self.value:.6g}"
        return f"{self.accountant:<28} {shown:>12}  {self.status}{f' ({self.note})' if self.note else ''}"


def status(value: float, result: AccountantResult) -> str:
    """Where `value` lies against the proven bracket."""
    if value < result.lower:
        return UNDER
    return WITHIN if value <= result.upper else CONSERVATIVE


def _dp_accounting(kind: str) -> Callable[[AccountantResult], float]:
    def answer(r: AccountantResult) -> float:
        from dp_accounting import dp_event

        if kind == "rdp":
            from dp_accounting.rdp import RdpAccountant as Accountant
        else:
            from dp_accounting.pld import PLDAccountant as Accountant
        acc = Accountant()
        for p in r.phases:
            acc.compose(dp_event.PoissonSampledDpEvent(p.q, dp_event.GaussianDpEvent(p.sigma)), p.steps)
        return acc.get_epsilon(r.given) if r.quantity == "epsilon" else acc.get_delta(r.given)
    return answer


def _opacus(kind: str) -> Callable[[AccountantResult], float | tuple[float, str]]:
    """opacus' accountant of `kind`, fed every phase of the schedule as its own `step` calls would record it (a
    history of (noise_multiplier, sample_rate, num_steps), one entry per run of equal pairs); the GaussianAccountant
    keeps one pair only (`_opacus_gdp_refuses`)."""
    def answer(r: AccountantResult) -> float | tuple[float, str]:
        from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

        acc = {"rdp": RDPAccountant, "prv": PRVAccountant, "gdp": GaussianAccountant}[kind]()
        acc.history = [(sigma, q, steps) for q, sigma, steps in _runs(r)]
        value = float(acc.get_epsilon(r.given))
        return value, "its upper end; opacus' defaults eps_error 0.01, delta_error delta/1000" if kind == "prv" else ""
    return answer


def _runs(r: AccountantResult) -> list[tuple[float, float, int]]:
    """The schedule's phases as (q, sigma, steps), consecutive phases of equal (q, sigma) merged (their steps summed,
    as a peer that counts `step` calls records them)."""
    out: list[tuple[float, float, int]] = []
    for p in r.phases:
        if out and out[-1][:2] == (p.q, p.sigma):
            out[-1] = (p.q, p.sigma, out[-1][2] + p.steps)
        else:
            out.append((p.q, p.sigma, p.steps))
    return out


def _epsilon_only(library: str) -> Callable[[AccountantResult], str]:
    def reason(r: AccountantResult) -> str:
        return "" if r.quantity == "epsilon" else f"{library} answers eps(delta) only"
    return reason


def _opacus_gdp_refuses(r: AccountantResult) -> str:
    """opacus' GaussianAccountant raises on a change of noise multiplier or sample rate and accounts its last pair
    only: a schedule of two or more distinct phases is not for it (the Gaussian-DP CLT row composes them)."""
    if r.quantity != "epsilon":
        return "opacus answers eps(delta) only"
    pairs = len({(p.q, p.sigma) for p in r.phases})
    if pairs > 1:
        return (f"opacus' GaussianAccountant takes one (noise multiplier, sample rate) pair; the schedule has {pairs} "
                "(the Gaussian-DP CLT (formula) row composes them all)")
    return ""


def prv_delta_error(r: AccountantResult) -> float:
    """prv_accountant's delta_error: 1e-3 of the delta asked at (eps(delta)), or of the certified delta's upper end
    (delta(eps); the floor 1e-300 where that is 0)."""
    return PRV_DELTA_ERROR * max(r.given if r.quantity == "epsilon" else r.upper, 1e-300)


def _prv_accountant(r: AccountantResult) -> tuple[float, str]:
    """prv_accountant's estimate, with its own error bars and settings in the note."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    runs = _runs(r)
    prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q) for q, sigma, _ in runs]
    steps = [t for _, _, t in runs]
    delta_error = prv_delta_error(r)
    acc = PRVAccountant(prvs=prvs, max_self_compositions=steps, eps_error=PRV_EPS_ERROR, delta_error=delta_error)
    if r.quantity == "epsilon":
        low, estimate, high = acc.compute_epsilon(delta=r.given, num_self_compositions=steps)
    else:
        low, estimate, high = acc.compute_delta(epsilon=r.given, num_self_compositions=steps)
    return float(estimate), (f"its estimate; eps_error {PRV_EPS_ERROR:g}, delta_error {delta_error:.3g}; its own "
                             f"bounds [{float(low):.6g}, {float(high):.6g}]")


def _gdp_clt(r: AccountantResult) -> float:
    """The Gaussian-DP central-limit approximation (Bu, Dong, Long & Su 2020, "Deep learning with Gaussian
    differential privacy", Thm 5; opacus' GaussianAccountant): mu = sqrt(sum_i q_i^2 T_i (e^{1/sigma_i^2} - 1)), read
    as the mu-GDP pair N(0, 1) vs N(mu, 1) (verify.truth.gaussian's tight delta(eps) and eps(delta), 50 digits)."""
    import mpmath

    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.fsum(p.q**2 * p.steps * mpmath.expm1(1 / mpmath.mpf(p.sigma) ** 2)
                                     for p in r.phases))
        if r.quantity == "delta":
            return float(gaussian_delta(r.given, mu))
        return float(gaussian_dp_epsilon(r.given, mu))


def _autodp(r: AccountantResult) -> float:
    from autodp.mechanism_zoo import GaussianMechanism
    from autodp.transformer_zoo import AmplificationBySampling, Composition

    subsample = AmplificationBySampling(PoissonSampling=True)
    mechs, counts = [], []
    for p in r.phases:
        mechs.append(subsample(GaussianMechanism(sigma=p.sigma), p.q, improved_bound_flag=True))
        counts.append(p.steps)
    composed = Composition()(mechs, counts)
    return float(composed.get_approxDP(r.given))


ACCOUNTANTS: dict[str, tuple[str, Callable[[AccountantResult], float | tuple[float, str]]]] = {
    "dp_accounting RDP": ("dp_accounting", _dp_accounting("rdp")),
    "dp_accounting PLD": ("dp_accounting", _dp_accounting("pld")),
    "opacus RDP": ("opacus", _opacus("rdp")),
    "opacus PRV": ("opacus", _opacus("prv")),
    "opacus GDP (CLT)": ("opacus", _opacus("gdp")),
    "prv_accountant": ("prv_accountant", _prv_accountant),
    "autodp": ("autodp", _autodp),
    "Gaussian-DP CLT (formula)": ("mpmath", _gdp_clt),
}
# where a peer does not support a query: the reason (empty where it does); checked before it is run
APPLIES: dict[str, Callable[[AccountantResult], str]] = {
    "opacus RDP": _epsilon_only("opacus"),
    "opacus PRV": _epsilon_only("opacus"),
    "opacus GDP (CLT)": _opacus_gdp_refuses,
    "autodp": _epsilon_only("autodp"),
}


def compare(result: AccountantResult) -> list[Comparison]:
    """Every accountant of ACCOUNTANTS on `result`'s schedule, each under the caps (see the module's docstring),
    placed against the bracket."""
    import importlib
    import importlib.util

    out = []
    for name, (module, answer) in ACCOUNTANTS.items():
        reason = APPLIES.get(name, lambda _r: "")(result)
        if result.neighbouring != "add_remove":
            reason = f"it accounts add/remove neighbours, not {result.neighbouring}"
        if importlib.util.find_spec(module) is None:
            out.append(Comparison(name, None, NOT_INSTALLED))
        elif reason:
            out.append(Comparison(name, None, NOT_APPLICABLE, reason))
        else:
            try:  # loaded here, before the fork: its libraries' address space (torch's, for opacus: more than the
                importlib.import_module(module)  # cap) is not counted against the computation's cap
            except Exception as err:  # noqa: BLE001 - another library's failure is reported, not ours to raise
                out.append(Comparison(name, None, FAILED, _one_line(f"import {module}: {type(err).__name__}: {err}")))
                continue
            out.append(_capped(name, answer, result))
    return out


def _capped(name: str, answer: Callable[[AccountantResult], float | tuple[float, str]],
            result: AccountantResult) -> Comparison:
    """One accountant's answer, computed in a capped process of its own; a cap it hits or an error it raises is
    its Comparison's status and note."""
    from verify.pipeline.isolation import (  # the isolation imports the families (~1.5 s): only here
        WorkerDied,
        call_capped,
    )

    seconds = min(remaining(), truth_deadline())
    try:
        value, note = call_capped(_quietly, answer, result, seconds=seconds, what=name)
    except MemoryLimitExceeded:
        return Comparison(name, None, OVER_MEMORY, f"needs more than {memory_cap() / 2**20:.0f} MiB, the cap set by "
                                                   "VERIFY_MEMORY_CAP")
    except DeadlineExceeded:
        return Comparison(name, None, PAST_DEADLINE, f"stopped after {seconds:.3g} s, the deadline set by "
                                                     "VERIFY_TRUTH_DEADLINE")
    except WorkerDied as err:  # a crash in its C code, possibly an allocation refused there
        return Comparison(name, None, FAILED, _one_line(str(err)))
    except Exception as err:  # noqa: BLE001 - another library's failure is reported, not ours to raise
        return Comparison(name, None, FAILED, _one_line(f"{type(err).__name__}: {err}"))
    if math.isnan(value):
        return Comparison(name, None, FAILED, "returned NaN")
    return Comparison(name, value, status(value, result), note)


def _quietly(answer: Callable[[AccountantResult], float | tuple[float, str]],
             result: AccountantResult) -> tuple[float, str]:
    """`answer(result)` as (a float, a note), without another library's numerical warnings (not ours to print)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = answer(result)
    value, note = found if isinstance(found, tuple) else (found, "")
    return float(value), note


def _one_line(text: str) -> str:
    return " ".join(text.split())[:160]
