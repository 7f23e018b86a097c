"""The theorem catalog: one module per paper; each declares theorems and never computes truths. A user's paper (a paper
file or a module of THEOREMS, verify.catalog.paper_file) joins it under its own key through `add_paper`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verify import submodule
from verify.catalog import abadi2016, bu2020, chen2024, chourasia2021, feldman2018, thudi2024, wang2021
from verify.catalog_index import no_match
from verify.errors import ParameterError, UnknownIdError, did_you_mean
from verify.model import Application, Theorem

PAPERS = {"chen2024": chen2024, "chourasia2021": chourasia2021, "feldman2018": feldman2018, "wang2021": wang2021,
          "thudi2024": thudi2024, "bu2020": bu2020,
          "abadi2016": abadi2016}

CATALOG: dict[str, Theorem] = {t.id: t for module in PAPERS.values() for t in module.THEOREMS}
BUILT_IN_KEYS = frozenset(PAPERS) | {i.split(".", 1)[0] for i in CATALOG}  # keys a user's paper may not take


@dataclass(frozen=True)
class Paper:
    """A user's paper: its key (the first part of its ids), title, reference, where it was read from (a file or a
    module) and its theorems."""

    key: str
    title: str
    theorems: tuple[Theorem, ...]
    reference: str = ""
    origin: str = ""


USER_PAPERS: dict[str, Paper] = {}  # the papers added to the catalog in this process, by key


def add_paper(paper: Paper) -> Paper:
    """Put a user's paper's theorems into the catalog under their ids (`key.*`). A ParameterError where the key is a
    built-in paper's, another paper's (from elsewhere), or an id does not start with `key.` or is taken; the same
    paper from the same origin again replaces itself."""
    key, where = paper.key, paper.origin or paper.key
    if key in BUILT_IN_KEYS:
        raise ParameterError(f"{where}: paper key '{key}' is a built-in paper's; choose another")
    known = USER_PAPERS.get(key)
    if known is not None and known.origin != paper.origin:
        raise ParameterError(f"{where}: paper key '{key}' is taken by {known.origin or 'another paper'}")
    ids = [t.id for t in paper.theorems]
    for i in ids:
        if not i.startswith(key + "."):
            raise ParameterError(f"{where}: theorem id '{i}' does not start with the paper key '{key}.'")
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ParameterError(f"{where}: theorem id '{twice[0]}' is declared twice")
    if known is not None:
        for t in known.theorems:
            CATALOG.pop(t.id, None)
    USER_PAPERS[key] = paper
    CATALOG.update((t.id, t) for t in paper.theorems)
    return paper


def __getattr__(name: str) -> object:
    """A submodule named as an attribute (`verify.catalog.paper_file`) is imported on first use."""
    return submodule(__name__, name)


def paper_keys() -> list[str]:
    """Every paper key: the built-in ones and the user's."""
    return [*PAPERS, *USER_PAPERS]


def theorem(theorem_id: str) -> Theorem:
    """The catalog entry with this id."""
    try:
        return CATALOG[theorem_id]
    except KeyError:
        hint = did_you_mean(theorem_id, CATALOG)
        raise UnknownIdError(f"no theorem '{theorem_id}'{hint}; see `verify list`") from None


def select(selectors: Sequence[str] = ()) -> list[Theorem]:
    """Entries whose id equals a selector or starts with `selector.` (a paper key); all when empty."""
    if not selectors:
        return list(CATALOG.values())
    chosen = [t for t in CATALOG.values() if any(t.id == s or t.id.startswith(s + ".") for s in selectors)]
    if not chosen:
        raise UnknownIdError(no_match(selectors, [*CATALOG, *paper_keys()]))
    return chosen


def companions(app: Application) -> list[Theorem]:
    """The catalog entries an application shows beside its own bound."""
    return [theorem(i) for i in app.companions]
