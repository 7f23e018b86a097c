"""The theorem catalog: one module per paper; each declares theorems and never computes truths."""

from __future__ import annotations

from verify.catalog import abadi2016, bu2020, chen2024, chourasia2021, feldman2018, thudi2024, wang2021
from verify.catalog_index import no_match
from verify.errors import UnknownIdError, did_you_mean
from verify.model import Application, Theorem

PAPERS = {"chen2024": chen2024, "chourasia2021": chourasia2021, "feldman2018": feldman2018, "wang2021": wang2021,
          "thudi2024": thudi2024, "bu2020": bu2020,
          "abadi2016": abadi2016}

CATALOG: dict[str, Theorem] = {t.id: t for module in PAPERS.values() for t in module.THEOREMS}


def theorem(theorem_id: str) -> Theorem:
    """The catalog entry with this id."""
    try:
        return CATALOG[theorem_id]
    except KeyError:
        hint = did_you_mean(theorem_id, CATALOG)
        raise UnknownIdError(f"no theorem '{theorem_id}'{hint}; see `verify list`") from None


def select(selectors: list[str] | tuple[str, ...] = ()) -> list[Theorem]:
    """Entries whose id equals a selector or starts with `selector.` (a paper key); all when empty."""
    if not selectors:
        return list(CATALOG.values())
    chosen = [t for t in CATALOG.values() if any(t.id == s or t.id.startswith(s + ".") for s in selectors)]
    if not chosen:
        raise UnknownIdError(no_match(selectors, [*CATALOG, *PAPERS]))
    return chosen


def companions(app: Application) -> list[Theorem]:
    """The catalog entries an application shows beside its own bound."""
    return [theorem(i) for i in app.companions]
