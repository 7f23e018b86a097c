"""The quantities a theorem can speak about: an open registry. verify's own are class attributes
(`Quantity.RENYI`, ids unchanged); a plugin declares its own with `Quantity.register`, and a family's `truths` map
quantities to functions. A quantity is its id as a string (`Quantity.RENYI == "renyi"`), so results and JSON read the
same as before the registry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import MappingProxyType
from typing import ClassVar

_ID = re.compile(r"[a-z][a-z0-9_]*\Z")
_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
KINDS = ("privacy", "utility")


class _Registry(type):
    """`Quantity(id)` looks a quantity up (ValueError for an unknown id, as an Enum does); iteration and `len` run
    over every registered quantity in registration order."""

    def __call__(cls, value: object) -> Quantity:
        if isinstance(value, Quantity):
            return value
        found = cls._registered.get(value) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"{value!r} is not a registered Quantity")
        return found

    def __iter__(cls) -> Iterator[Quantity]:
        return iter(tuple(cls._registered.values()))

    def __len__(cls) -> int:
        return len(cls._registered)

    def __contains__(cls, value: object) -> bool:
        return isinstance(value, str) and value in cls._registered

    def __getitem__(cls, name: str) -> Quantity:
        """By name, as an Enum: `Quantity["RENYI"]` (KeyError for an unknown name)."""
        for q in cls._registered.values():
            if q.name == name:
                return q
        raise KeyError(name)

    @property
    def __members__(cls) -> MappingProxyType:
        """name -> quantity, as an Enum's"""
        return MappingProxyType({q.name: q for q in cls._registered.values()})


class Quantity(str, metaclass=_Registry):
    """The quantity of the released output that a theorem speaks about: its id (`value`), an upper-case `name`, a
    description and its `kind` ("privacy" or "utility")."""

    _registered: ClassVar[dict[str, Quantity]] = {}
    name: str
    description: str
    kind: str

    @classmethod
    def register(cls, value: str, description: str, kind: str = "privacy", *, name: str | None = None) -> Quantity:
        """Declare a quantity (a plugin's own): `value` is its id (lower case, digits, underscores), stable once
        results use it. Registering an id again with the same description and kind returns the registered one."""
        if not isinstance(value, str) or not _ID.match(value):
            raise ValueError(f"a quantity id is lower case letters, digits and underscores, got {value!r}")
        if not isinstance(description, str):
            raise ValueError(f"a quantity's description is a str, got {description!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        name = value.upper() if name is None else name
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"a quantity's name is upper case letters, digits and underscores, got {name!r}")
        known = cls._registered.get(value)
        if known is not None:
            if (known.description, known.kind, known.name) != (description, kind, name):
                raise ValueError(f"quantity {value!r} is already registered as {known.name} ({known.description!r}, "
                                 f"{known.kind})")
            return known
        taken = next((q for q in cls._registered.values() if q.name == name), None)
        if taken is not None:
            raise ValueError(f"the name {name} is already the quantity {taken.value!r}")
        made = str.__new__(cls, value)
        for field, given in (("name", name), ("description", description), ("kind", kind)):
            object.__setattr__(made, field, given)
        cls._registered[value] = made
        return made

    def __setattr__(self, field: str, value: object) -> None:
        raise AttributeError(f"a quantity is immutable: cannot set {field}")

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return f"Quantity.{self.name}"

    def __format__(self, spec: str) -> str:  # f"{q}" as str(q), as an Enum member formats (specs included)
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"<Quantity.{self.name}: {self.value!r}>"

    def __reduce__(self) -> tuple:  # unpickled as the registered quantity (a worker process imports the same)
        return (Quantity, (self.value,))

    # verify's own quantities (ids are stable: results and JSON use them)
    RENYI: ClassVar[Quantity]
    DP_EPSILON: ClassVar[Quantity]
    DP_EPSILON_SIGNED: ClassVar[Quantity]
    DP_DELTA: ClassVar[Quantity]
    GDP_MU: ClassVar[Quantity]
    TRADEOFF: ClassVar[Quantity]
    DP_EPSILON_ADD: ClassVar[Quantity]
    EXCESS_RISK: ClassVar[Quantity]
    LSI_CONSTANT: ClassVar[Quantity]
    AVG_GRAD_SQ: ClassVar[Quantity]
    AVG_EXCESS_RISK: ClassVar[Quantity]
    AVERAGED_ITERATE_RISK: ClassVar[Quantity]
    SHIFTED_RENYI: ClassVar[Quantity]
    GRADIENT_MAP_LIPSCHITZ: ClassVar[Quantity]
    PROX_LIPSCHITZ: ClassVar[Quantity]
    EXPECTED_BATCH_RENYI: ClassVar[Quantity]
    COMPOSITION_ORDER: ClassVar[Quantity]
    HOLDER_BOUND: ClassVar[Quantity]
    ESTIMATOR_UNDERCUT: ClassVar[Quantity]
    HOLDER_HOCKEY_STICK: ClassVar[Quantity]
    ESTIMATE_BELOW_BOUND: ClassVar[Quantity]
    SMOOTHNESS: ClassVar[Quantity]
    APPROX_ERROR: ClassVar[Quantity]
    DEVIATION_PROBABILITY: ClassVar[Quantity]


_BUILT_IN = (
    ("RENYI", "renyi", "R_alpha(law on D || law on D'), natural log", "privacy"),
    ("DP_EPSILON", "dp_epsilon", "smallest eps with (eps, delta)-DP for the pair, at the given delta", "privacy"),
    ("DP_EPSILON_SIGNED", "dp_epsilon_signed",
     "the smallest real eps (< 0 where delta exceeds the total variation)", "privacy"),
    ("DP_DELTA", "dp_delta", "the tight delta(eps) of the pair, both orders, at the given eps", "privacy"),
    ("GDP_MU", "gdp_mu", "the smallest mu with mu-GDP (Dong, Roth & Su): exact for equal-covariance Gaussian pairs",
     "privacy"),
    ("TRADEOFF", "tradeoff_beta",
     "the smallest type-II error at type-I error type1, the smaller of both orders (f-DP)", "privacy"),
    ("DP_EPSILON_ADD", "dp_epsilon_add",
     "eps for one direction: P(M(D u x*) in S) <= e^eps P(M(D) in S) + delta", "privacy"),
    ("EXCESS_RISK", "excess_risk", "E[L_D(theta_K)] - min L_D (utility)", "utility"),
    ("LSI_CONSTANT", "lsi_constant", "largest c such that every tracing-diffusion marginal is c-LSI", "privacy"),
    ("AVG_GRAD_SQ", "avg_grad_norm_sq", "(1/K) sum_k E||grad f(x_k)||^2 (utility, non-convex)", "utility"),
    ("AVG_EXCESS_RISK", "avg_excess_risk", "(1/K) sum_k E[f(x_k)] - min f (utility, ergodic)", "utility"),
    ("AVERAGED_ITERATE_RISK", "averaged_iterate_risk",
     "E[f(sum_k w_k x_k)] - min f: an averaged iterate's excess risk", "utility"),
    ("SHIFTED_RENYI", "shifted_renyi",
     "D_alpha^(z): Rényi divergence after moving the first law by <= z in W_inf", "privacy"),
    ("GRADIENT_MAP_LIPSCHITZ", "gradient_map_lipschitz",
     "Lipschitz constant of F(theta) = theta - eta grad f(theta)", "privacy"),
    ("PROX_LIPSCHITZ", "prox_lipschitz", "Lipschitz constant of the proximal map T = Prox_(eta, r)", "privacy"),
    ("EXPECTED_BATCH_RENYI", "expected_batch_renyi",
     "E_B R_alpha(law on one dataset || N(U(B), s^2)), B from the other", "privacy"),
    ("COMPOSITION_ORDER", "composition_order", "the Rényi order a Hölder composition charges a step at", "privacy"),
    ("HOLDER_BOUND", "holder_composition_bound",
     "Theorem 3.3's right-hand side with the exact per-step divergences", "privacy"),
    ("ESTIMATOR_UNDERCUT", "estimator_undercut_probability",
     "P(a Monte-Carlo plug-in estimate < the true divergence)", "privacy"),
    ("HOLDER_HOCKEY_STICK", "holder_hockey_stick",
     "sup_S [P_1(S) - e^eps P_0(S)^(1-1/p)], Gaussian pair (Lemma A.1)", "privacy"),
    ("ESTIMATE_BELOW_BOUND", "estimate_below_bound_probability",
     "P(a plug-in estimate < the exact bound it stands for)", "privacy"),
    ("SMOOTHNESS", "smoothness_constant",
     "sup over K of the largest eigenvalue of a smoothed function's Hessian", "utility"),
    ("APPROX_ERROR", "approximation_error",
     "sup over K of |f_hat - f| (a smoothed function against the original)", "utility"),
    ("DEVIATION_PROBABILITY", "deviation_probability", "P(|empirical mean - expectation| >= a deviation)", "privacy"),
)
for _name, _value, _description, _kind in _BUILT_IN:
    setattr(Quantity, _name, Quantity.register(_value, _description, _kind, name=_name))
