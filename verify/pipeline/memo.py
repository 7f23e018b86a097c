"""Run-wide memo of ground truths.

A truth is a deterministic function of (family, quantity, validated parameters): sampling families take their seed
as a parameter. Inside `shared_truths()` each is computed once, however many catalog entries, companions,
bindings and falsifier examples ask for it (many entries share a family and its grid points). Failures are not
memoised: a point that raised is recomputed (and raises again) where it is asked for. A family that is not built in
computes its truths in a worker process that the deadline stops (pipeline.isolation). With an on-disk cache in use
(verify.pipeline.truth_cache), a truth not in the memo is looked up there first, and what was computed is added to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import Token

from verify.limits import uninterrupted
from verify.model import Family, Quantity
from verify.pipeline import isolation, truth_cache
from verify.results import Truth
from verify.runmemo import MEMO as _MEMO
from verify.runmemo import remembered as remembered  # it lives below the truth engines, which use it too


class shared_truths:  # noqa: N801 - used as a function: `with shared_truths() as memo:`
    """Memoise truths until the block ends (nested blocks share the outer memo); an outermost block starts from the
    `known` truths (`truths_in` of another memo, e.g. a run's, whose sweeps then reuse them). It is an isolation
    session too: a plugin family's truths are computed by code as it is when the block starts. Its entry and exit
    are `uninterrupted`: a deadline that fell inside them left the memo open after the block, serving its truths to
    later checks (a monkeypatched truth read its old value)."""

    def __init__(self, known: Mapping[tuple, Truth] | None = None) -> None:
        self.known = known
        self._token: Token | None = None
        self._session: isolation.session | None = None

    @uninterrupted
    def __enter__(self) -> dict:
        memo = _MEMO.get()
        if memo is not None:
            return memo
        session = isolation.session()
        session.__enter__()  # isolated truths share one worker, forked afresh for this block
        self._session, self._token = session, _MEMO.set(dict(self.known or {}))
        return _MEMO.get()

    @uninterrupted
    def __exit__(self, *exc: object) -> None:
        token, session, self._token, self._session = self._token, self._session, None, None
        if token is None:
            return
        try:
            _MEMO.reset(token)
            session.__exit__(*exc)
        finally:
            truth_cache.flush()  # what this block computed joins the on-disk cache, where one is in use


def truth_of(family: Family, quantity: Quantity, params: Mapping[str, float]) -> Truth:
    """`family`'s truth of `quantity` at already validated `params`, from the memo where one is active."""
    memo = _MEMO.get()
    if memo is None:
        return isolation.truth(family, quantity, params)
    key = (family.name, quantity, tuple(sorted(params.items())))
    truth = memo.get(key)
    if truth is None:
        truth = truth_cache.lookup(family, quantity, params, key)
        if truth is None:
            truth = isolation.truth(family, quantity, params)
            truth_cache.store(family, key, truth)
        memo[key] = truth
    return truth


def truths_in(memo: Mapping) -> dict[tuple, Truth]:
    """The truths of a memo (what `truth_of` stored, without `remembered`'s other work): small, and picklable."""
    return {k: v for k, v in memo.items() if isinstance(v, Truth) and len(k) == 3 and isinstance(k[1], Quantity)}
