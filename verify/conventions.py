"""Named conventions: how a paper's symbols relate to a family's parameters, so that translating a statement is not
left to hand arithmetic. Each defines symbols of the user's bound in terms of the family's parameters, exactly as a
`--bind` would (`verify falsify --convention NAME`, `falsify(..., conventions=(NAME,))`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from verify.errors import ParameterError


@dataclass(frozen=True)
class Convention:
    """Symbols a paper uses, defined from the family's parameters (`defines`: symbol -> expression text)."""

    name: str
    description: str
    defines: Mapping[str, str]
    needs: tuple[str, ...]  # the family parameters the expressions use


CONVENTIONS: dict[str, Convention] = {c.name: c for c in (
    Convention("lipschitz_replace_one", "L-Lipschitz losses, replace-one neighbours: the summed gradient moves by at "
               "most S = 2L, so L = S/2", {"L": "S/2"}, ("S",)),
    Convention("lipschitz_add_remove", "L-Lipschitz losses, add/remove neighbours: S = L", {"L": "S"}, ("S",)),
    Convention("noise_multiplier", "DP-SGD's noise multiplier z = sigma/S (noise std over sensitivity)",
               {"z": "sigma/S"}, ("sigma", "S")),
)}


def convention_binds(names: Iterable[str], family: str, parameters: Iterable[str]) -> dict[str, str]:
    """The `bind` entries of the named conventions on a family with these parameters (errors name what is wrong)."""
    params = set(parameters)
    out: dict[str, str] = {}
    for name in names:
        conv = CONVENTIONS.get(name)
        if conv is None:
            raise ParameterError(f"no convention '{name}'; known: {', '.join(sorted(CONVENTIONS))}")
        missing = [p for p in conv.needs if p not in params]
        if missing:
            raise ParameterError(f"convention {name} needs parameter(s) {', '.join(missing)}, which family {family} "
                                 f"does not have")
        for symbol, expr in conv.defines.items():
            if symbol in params:
                raise ParameterError(f"convention {name} defines {symbol}, which family {family} already has as a "
                                     "parameter")
            if symbol in out and out[symbol] != expr:
                raise ParameterError(f"conventions disagree on {symbol}: {out[symbol]} vs {expr}")
            out[symbol] = expr
    return out
