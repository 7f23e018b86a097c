"""Other DP-SGD accountants, evaluated on the schedule of a certified bracket (verify.accountant) and placed against
it: `conservative` (above the proven upper end), `tight` (inside the bracket) or `UNDER-REPORTS` (below the proven
lower end: a privacy claim the mechanism does not have). Each library is optional and imported only here; one that is
not installed is listed as such, never an error.

Each runs under the caps of verify's own code, in a process of its own (pipeline.isolation.call_capped): its address
space is capped (env VERIFY_MEMORY_CAP, default 1 GiB, plus the isolation's headroom) and it is killed at the
point deadline (env VERIFY_TRUTH_DEADLINE, default 120 s). One that hits a cap is listed `over the memory cap` or
`past its deadline` (prv_accountant grew to 20 GB at T = 1e6 without the cap), one that fails `failed`, with the
reason; none of them changes verify's own answer.

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

CONSERVATIVE, TIGHT, UNDER = "conservative", "tight", "UNDER-REPORTS"
OVER_MEMORY, PAST_DEADLINE, FAILED = "over the memory cap", "past its deadline", "failed"


@dataclass(frozen=True)
class Comparison:
    """One accountant's answer on the bracket's schedule: `value` (None where it is not installed or failed, with
    `note` saying why) and its `status` against the bracket."""

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
    return TIGHT if value <= result.upper else CONSERVATIVE


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


def _opacus(kind: str) -> Callable[[AccountantResult], float]:
    def answer(r: AccountantResult) -> float:
        from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

        acc = {"rdp": RDPAccountant, "prv": PRVAccountant, "gdp": GaussianAccountant}[kind]()
        acc.history = [(p.sigma, p.q, p.steps) for p in r.phases]
        if r.quantity != "epsilon":
            raise NotImplementedError("opacus' accountants answer epsilon(delta) only")
        return float(acc.get_epsilon(r.given))
    return answer


def _prv_accountant(r: AccountantResult) -> float:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=p.sigma, sampling_probability=p.q) for p in r.phases]
    steps = [p.steps for p in r.phases]
    acc = PRVAccountant(prvs=prvs, max_self_compositions=steps, eps_error=0.01, delta_error=1e-10)
    if r.quantity == "epsilon":
        return float(acc.compute_epsilon(delta=r.given, num_self_compositions=steps)[1])
    return float(acc.compute_delta(epsilon=r.given, num_self_compositions=steps)[1])


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
    if r.quantity == "epsilon":
        return float(composed.get_approxDP(r.given))
    raise NotImplementedError("autodp's composed mechanism answers epsilon(delta) only")


ACCOUNTANTS: dict[str, tuple[str, Callable[[AccountantResult], float]]] = {
    "dp_accounting RDP": ("dp_accounting", _dp_accounting("rdp")),
    "dp_accounting PLD": ("dp_accounting", _dp_accounting("pld")),
    "opacus RDP": ("opacus", _opacus("rdp")),
    "opacus PRV": ("opacus", _opacus("prv")),
    "opacus GDP (CLT)": ("opacus", _opacus("gdp")),
    "prv_accountant": ("prv_accountant", _prv_accountant),
    "autodp": ("autodp", _autodp),
    "Gaussian-DP CLT (formula)": ("mpmath", _gdp_clt),
}


def compare(result: AccountantResult) -> list[Comparison]:
    """Every accountant of ACCOUNTANTS on `result`'s schedule, each under the caps (see the module's docstring),
    placed against the bracket."""
    import importlib.util

    if result.neighbouring != "add_remove":
        return [Comparison(name, None, "skipped", "they account add/remove neighbours") for name in ACCOUNTANTS]
    out = []
    for name, (module, answer) in ACCOUNTANTS.items():
        if importlib.util.find_spec(module) is None:
            out.append(Comparison(name, None, "not installed"))
        else:
            out.append(_capped(name, answer, result))
    return out


def _capped(name: str, answer: Callable[[AccountantResult], float], result: AccountantResult) -> Comparison:
    """One accountant's answer, computed in a capped process of its own; a cap it hits or an error it raises is
    its Comparison's status and note."""
    from verify.pipeline.isolation import (  # the isolation imports the families (~1.5 s): only here
        WorkerDied,
        call_capped,
    )

    seconds = min(remaining(), truth_deadline())
    try:
        value = call_capped(_quietly, answer, result, seconds=seconds, what=name)
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
    return Comparison(name, value, status(value, result))


def _quietly(answer: Callable[[AccountantResult], float], result: AccountantResult) -> float:
    """`answer(result)` as a float, without another library's numerical warnings (not ours to print)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(answer(result))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:160]
