"""Phases other than the Poisson-subsampled Gaussian for the certified accountant (verify.accountant): each is a
frozen dataclass with a `steps` field that `accountant.epsilon` / `accountant.delta` take mixed with `Phase`s.

Each states the neighbouring relations it supports (`relations`; any other is refused with ParameterError, exit 2)
and gives the engine (verify.truth.pld) its per-step privacy-loss distribution through `engine(neighbouring)`: either
the Gaussian tuple (q, sigma, steps) or the phase itself, whose `step_pmf(order, h, steps)` returns the engine's
per-step core (verify.truth.pld_events). References each is tested against: tests/test_accountant_events.py.

- `Laplace(b, steps)`: the Laplace mechanism, scale b, sensitivity 1 (dp_accounting's LaplaceDpEvent); add/remove.
- `RandomizedResponse(k, p | eps0, steps)`: k-ary randomized response (dp_accounting's RandomizedResponseDpEvent:
  the true bucket with probability 1 - p, else a uniform one); replace-one.
- `GaussianMixture(sigma, sensitivities, probabilities, steps)`: sum_i p_i N(c_i, sigma^2) against N(0, sigma^2)
  (dp_accounting's MixtureOfGaussiansDpEvent); add/remove.
- `CyclicBatches(sigma, epochs)`: DP-SGD over a fixed partition into batches, taken in a fixed order each epoch:
  each record is in one batch an epoch, so E epochs are exactly the E-fold Gaussian mechanism (no amplification),
  sensitivity 1 under add/remove, 2 under replace-one.
- `ShuffledBatches(sigma, epochs, batches)`: batches from a fresh uniform shuffle each epoch. A shuffle is a mixture
  of fixed orders, so by joint convexity of the hockey stick the cyclic value is an upper bound (what is accounted);
  `shuffled_lower_bound` certifies a lower bound (Chua, Ghazi, Kamath et al., ICML 2024, "How private are DP-SGD
  implementations?") that can lie above Poisson accounting's certified upper end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import flint

from verify.accountant import MAX_STEPS, _num, _real
from verify.errors import ParameterError
from verify.truth.pld_events import laplace_step, mixture_step, randomized_response_step, restoring_precision

ADD_REMOVE = ("add_remove", "add", "remove")


def _steps(value: object, name: str = "steps") -> int:
    steps = _real(value)
    if steps is None or not steps.is_integer() or not 1 <= steps <= MAX_STEPS:
        raise ParameterError(f"{name} must be an integer in 1..{MAX_STEPS:.0e}, got {value!r}")
    return int(steps)


def _positive(value: object, what: str) -> float:
    x = _real(value)
    if x is None or not (math.isfinite(x) and x > 0):
        raise ParameterError(f"{what} must be a finite number > 0, got {value!r}")
    return x


def _supported(phase, neighbouring: str) -> None:
    if neighbouring not in phase.relations:
        raise ParameterError(f"{type(phase).__name__} supports the neighbouring relations "
                             f"{', '.join(phase.relations)}, not {neighbouring}")


@dataclass(frozen=True)
class Laplace:
    """`steps` steps of the Laplace mechanism, scale b (noise multiplier: sensitivity 1). Add/remove (its two orders
    have one PLD); replace-one is refused, as dp_accounting refuses it (a sum's replace-one sensitivity is 2:
    give b / 2)."""

    b: float
    steps: int = 1
    relations: ClassVar[tuple[str, ...]] = ADD_REMOVE
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", _positive(self.b, "Laplace scale b"))
        object.__setattr__(self, "steps", _steps(self.steps))

    def __str__(self) -> str:
        return f"{self.steps} steps of Laplace b={_num(self.b)}"

    @property
    def total_variation(self) -> float:
        """one step's total variation (delta at eps = 0): 1 - e^(-1 / (2b)), rounded up"""
        return min(1.0, -math.expm1(-0.5 / self.b) * (1 + 1e-12))

    def engine(self, neighbouring: str) -> Laplace:
        _supported(self, neighbouring)
        return self

    def step_pmf(self, order: str, h: float, steps: int):
        return laplace_step(self.b, h, steps)


@dataclass(frozen=True)
class RandomizedResponse:
    """`steps` steps of k-ary randomized response: the true bucket with probability 1 - p, else one of the k
    uniformly (dp_accounting's noise_parameter p); or given by eps0, its pure-DP level, p = k / (e^eps0 + k - 1)
    (rounded to a double: the p used is the one shown). Replace-one only (as dp_accounting)."""

    k: int
    p: float | None = None
    steps: int = 1
    eps0: float | None = None
    relations: ClassVar[tuple[str, ...]] = ("replace_one",)
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        k = _real(self.k)
        if k is None or not k.is_integer() or not 2 <= k <= 10**9:
            raise ParameterError(f"randomized response needs k >= 2 buckets (an integer), got {self.k!r}")
        object.__setattr__(self, "k", int(k))
        if (self.p is None) == (self.eps0 is None):
            raise ParameterError("randomized response takes one of p (noise parameter) or eps0")
        if self.eps0 is not None:
            eps0 = _positive(self.eps0, "randomized response eps0")
            object.__setattr__(self, "p", float(self.k / (math.exp(min(eps0, 700.0)) + self.k - 1)))
            object.__setattr__(self, "eps0", None)  # the identity is p (one event, one key)
        p = _real(self.p)
        if p is None or not 0 < p <= 1:
            raise ParameterError(f"randomized response noise parameter p must lie in (0, 1], got {self.p!r}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "steps", _steps(self.steps))

    def __str__(self) -> str:
        return f"{self.steps} steps of randomized response k={self.k}, p={_num(self.p)}"

    @property
    def total_variation(self) -> float:
        return min(1.0, (1 - self.p) * (1 + 1e-12))

    def engine(self, neighbouring: str) -> RandomizedResponse:
        _supported(self, neighbouring)
        return self

    def step_pmf(self, order: str, h: float, steps: int):
        return randomized_response_step(self.p, self.k, h, steps)


@dataclass(frozen=True)
class GaussianMixture:
    """`steps` steps of the mixture-of-Gaussians mechanism (dp_accounting's MixtureOfGaussiansDpEvent): the pair
    P = sum_i p_i N(c_i, sigma^2) against Q = N(0, sigma^2), sensitivities c_i >= 0 with probabilities p_i (their
    sum 1 within 1e-9; the mixture is normalised exactly). Add/remove: "add" P || Q, "remove" Q || P.
    (0, 1) with (1 - q, q) is the Poisson-subsampled Gaussian."""

    sigma: float
    sensitivities: tuple[float, ...]
    probabilities: tuple[float, ...]
    steps: int = 1
    relations: ClassVar[tuple[str, ...]] = ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive(self.sigma, "noise standard deviation sigma"))
        try:
            cs, ps = tuple(_real(c) for c in self.sensitivities), tuple(_real(p) for p in self.probabilities)
        except TypeError:
            raise ParameterError("sensitivities and probabilities must be sequences of numbers") from None
        if not cs or len(cs) != len(ps) or any(c is None or not (math.isfinite(c) and c >= 0) for c in cs):
            raise ParameterError(f"a Gaussian mixture needs as many sensitivities (finite, >= 0) as probabilities, got "
                                 f"{self.sensitivities!r} and {self.probabilities!r}")
        if any(p is None or not 0 <= p <= 1 for p in ps) or abs(math.fsum(ps) - 1) > 1e-9:
            raise ParameterError(f"mixture probabilities must lie in [0, 1] and sum to 1, got {self.probabilities!r}")
        kept = [(c, p) for c, p in zip(cs, ps, strict=True) if p > 0]
        if not any(c > 0 for c, _ in kept):
            raise ParameterError("a Gaussian mixture needs a sensitivity > 0 with probability > 0")
        object.__setattr__(self, "sensitivities", tuple(c for c, _ in kept))
        object.__setattr__(self, "probabilities", tuple(p for _, p in kept))
        object.__setattr__(self, "steps", _steps(self.steps))

    def __str__(self) -> str:
        parts = ", ".join(f"{_num(p)} N({_num(c)})" for c, p in zip(self.sensitivities, self.probabilities,
                                                                   strict=True))
        return f"{self.steps} steps of the Gaussian mixture {parts}, sigma={_num(self.sigma)}"

    @property
    def total_variation(self) -> float:
        return 1.0

    def engine(self, neighbouring: str) -> GaussianMixture:
        _supported(self, neighbouring)
        return self

    def step_pmf(self, order: str, h: float, steps: int):
        mixture = list(zip(self.probabilities, self.sensitivities, strict=True))
        if order == "add":
            return mixture_step(mixture, [(1.0, 0.0)], self.sigma, h, steps)
        return mixture_step([(1.0, 0.0)], [(p, -c) for p, c in mixture], self.sigma, h, steps)


@dataclass(frozen=True)
class CyclicBatches:
    """`epochs` epochs of DP-SGD over fixed batches in a fixed order, noise multiplier sigma: each record is in one
    batch an epoch, so the steps without it are post-processing and E epochs are the E-fold Gaussian mechanism,
    sensitivity 1 (add/remove) or 2 (replace-one: noise multiplier sigma / 2), exactly (no amplification)."""

    sigma: float
    epochs: int = 1
    relations: ClassVar[tuple[str, ...]] = ADD_REMOVE + ("replace_one",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive(self.sigma, "noise multiplier sigma"))
        object.__setattr__(self, "epochs", _steps(self.epochs, "epochs"))

    @property
    def steps(self) -> int:
        return self.epochs

    def __str__(self) -> str:
        return f"{self.epochs} epochs of cyclic batches, sigma={_num(self.sigma)}"

    @property
    def total_variation(self) -> float:
        return 1.0

    def engine(self, neighbouring: str) -> tuple[float, float, int]:
        _supported(self, neighbouring)
        return (1.0, self.sigma / 2 if neighbouring == "replace_one" else self.sigma, self.epochs)


@dataclass(frozen=True)
class ShuffledBatches(CyclicBatches):
    """`epochs` epochs over `batches` batches an epoch from a fresh uniform shuffle, noise multiplier sigma. Accounted
    by its upper bound, the cyclic value (a shuffle is a mixture of fixed orders: joint convexity); see
    `shuffled_lower_bound` for a certified lower bound."""

    batches: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "batches", _steps(self.batches, "batches"))

    def __str__(self) -> str:
        return (f"{self.epochs} epochs of shuffled batches ({self.batches} an epoch; accounted as cyclic, an upper "
                f"bound), sigma={_num(self.sigma)}")


@dataclass(frozen=True)
class LowerBound:
    """A certified lower bound on the tight delta(eps) of shuffled batches: `value` <= delta_true(eps), from the test
    "at least `count` of the epochs' maxima exceed `threshold`" (its probabilities P_A, Q_A enclosed in Arb)."""

    value: float
    eps: float
    threshold: float
    count: int
    p_event: float
    q_event: float


@restoring_precision
def shuffled_lower_bound(eps: float, sigma: float, batches: int, epochs: int = 1) -> LowerBound:
    """A certified lower bound on delta(eps) of `epochs` epochs of shuffled batches (`batches` an epoch, noise
    multiplier sigma, one record changed: its clipped gradient +1 against 0, all others' 0; Chua et al. 2024's
    zero-out pair, a replace-one pair with sensitivity 1 that add/remove Poisson accounting is compared with).

    One epoch releases Y_1..Y_m (m = batches): under Q all N(0, s^2), under P one uniformly random Y_t is N(1, s^2)
    instead. The maximum M = max_t Y_t is a post-processing: Q(M <= c) = Phi(c/s)^m, P(M <= c) = Phi((c-1)/s)
    Phi(c/s)^(m-1). Over E independent epochs, A = {at least j of the E maxima exceed c} has binomial probabilities
    P(A) = sum_(i>=j) C(E, i) p^i (1-p)^(E-i) with p = P(M > c) (likewise Q), and delta(eps) >= P(A) - e^eps Q(A) for
    every c and j. c and j are chosen in floating point; the value is then enclosed in Arb and its lower end
    returned (0 when no test gives a positive value)."""
    eps = _real(eps)
    if eps is None or not math.isfinite(eps):
        raise ParameterError(f"eps must be a finite number, got {eps!r}")
    s = _positive(sigma, "noise multiplier sigma")
    m, e = _steps(batches, "batches"), _steps(epochs, "epochs")
    if e > 10**4:
        raise ParameterError(f"the shuffled lower bound sums E binomial terms: epochs must be <= 10000, got {e}")
    best = (-1.0, 0.0, 1)
    for c in [s * x for x in _linspace(-2.0, 12.0, 281)]:
        p1 = 1 - _phi((c - 1) / s) * _phi(c / s) ** (m - 1)
        q1 = 1 - _phi(c / s) ** m
        for j in _counts(e, p1):
            val = _binomial_tail(e, p1, j) - math.exp(eps) * _binomial_tail(e, q1, j)
            if val > best[0]:
                best = (val, c, j)
    _, c, j = best
    flint.ctx.prec = 128
    ca, sa = flint.arb(c), flint.arb(s)
    phi = lambda x: (1 + (x / flint.arb(2).sqrt()).erf()) / 2  # noqa: E731
    p_a = _arb_tail(e, 1 - phi((ca - 1) / sa) * phi(ca / sa) ** (m - 1), j)
    q_a = _arb_tail(e, 1 - phi(ca / sa) ** m, j)
    value = p_a - flint.arb(eps).exp() * q_a
    low = float(value.lower())
    return LowerBound(max(0.0, math.nextafter(low, -math.inf)), float(eps), c, j, float(p_a.mid()),
                      float(q_a.mid()))


def _linspace(a: float, b: float, n: int) -> list[float]:
    return [a + (b - a) * i / (n - 1) for i in range(n)]


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _counts(e: int, p: float) -> list[int]:
    """the counts j tried: around the mean under P, and the ends"""
    mid = round(e * p)
    return sorted({max(1, min(e, j)) for j in (1, e, *range(mid - 20, mid + 21))})


def _binomial_tail(n: int, p: float, j: int) -> float:
    """P(Binomial(n, p) >= j) in floating point (only to choose the test)"""
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
             for i in range(j, n + 1)]
    top = max(terms)
    return math.exp(top) * math.fsum(math.exp(t - top) for t in terms)


def _arb_tail(n: int, p: flint.arb, j: int) -> flint.arb:
    """P(Binomial(n, p) >= j) in Arb"""
    total, q = flint.arb(0), 1 - p
    for i in range(j, n + 1):
        total += flint.arb(math.comb(n, i)) * p**i * q ** (n - i)
    return total


EVENTS = {"laplace": Laplace, "rr": RandomizedResponse, "randomized-response": RandomizedResponse,
          "mixture": GaussianMixture, "cyclic": CyclicBatches, "shuffled": ShuffledBatches}
_ALIASES = {"mixture": {"c": "sensitivities", "p": "probabilities"}}
EVENT_HELP = ("laplace:b=B,steps=T | rr:k=K,p=P,steps=T (or eps0=E instead of p) | mixture:sigma=S,c=C1/C2/..,"
              "p=P1/P2/..,steps=T | cyclic:sigma=S,epochs=E | shuffled:sigma=S,epochs=E,batches=M")


def parse_event(text: str):
    """A phase from its command-line form KIND:key=value,... (`EVENT_HELP`), e.g. "laplace:b=1,steps=10";
    ParameterError (one line) for an unknown kind or key or a bad value."""
    kind, _, rest = text.partition(":")
    make = EVENTS.get(kind.strip().lower())
    if make is None:
        raise ParameterError(f"unknown event '{kind}' in '{text}': one of {EVENT_HELP}")
    aliases = _ALIASES.get(kind.strip().lower(), {})
    fields = {f for f in make.__dataclass_fields__ if f not in ("relations", "symmetric")} | set(aliases)
    values: dict[str, float | tuple[float, ...]] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in fields:
            raise ParameterError(f"'{item}' in '{text}': {kind} takes {', '.join(sorted(fields))} as key=value")
        try:
            numbers = tuple(float(v) for v in value.split("/"))
        except ValueError:
            raise ParameterError(f"'{item}' in '{text}': {value.strip()!r} is not a number") from None
        values[aliases.get(key, key)] = numbers if key in aliases else numbers[0] if len(numbers) == 1 else numbers
    try:
        return make(**values)
    except TypeError:  # a list where a number belongs
        raise ParameterError(f"'{text}': give one number per key (lists, A/B/.., for {kind}'s "
                             f"{', '.join(aliases) or 'none'})") from None
