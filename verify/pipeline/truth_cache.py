"""An optional on-disk cache of ground truths, for users who run the same checks again (`--cache DIR`).

A truth is a deterministic function of (family, quantity, validated parameters) for a given verify and its numerical
dependencies (pipeline.memo). The cache keeps the float truths of built-in families under a *generation*: a hash of
verify's version and every source file of the package, the versions of Python, NumPy, SciPy, mpmath, python-flint and
SymPy, the machine, the array backend and the truth caps (memory, deadline). The generation is part of every key, so
an entry of another generation is never served: any change to any of them starts afresh, and the entries of other
generations stay until the size cap evicts them.

The storage is a `diskcache.Cache` (one SQLite database, `cache.db` and its `-wal`/`-shm` files): safe for concurrent
processes (a run's forked workers, runs side by side), each write a transaction (a process killed mid-write leaves
no partial entry). Its size is capped (`--cache-size`, else env VERIFY_CACHE_SIZE, else 1 GiB; verify.limits): past
the cap the least recently used entries are evicted, whatever their generation. The SQLite write-ahead log
(`cache.db-wal`, a few MiB) comes on top of the cap. Keys and values are JSON text (no pickle is ever read: an entry
that is not verify's reads as absent); the floats round-trip exactly (inf and NaN too).

Only the floats are kept (value, interval, method, detail, confidence, ess). A cached truth whose original had an Arb
enclosure (or a finer level) gets one that recomputes the truth from scratch on first use: a certificate never rests
on the cache, and a point is certified exactly as in a cold run. Families that are not built in (plugins) are never
cached: their code is not part of the generation. A run sent to Dask is refused a cache: its workers may be on other
machines, and the cache is this machine's folder.

What a process computes is added at the end of each memo block (`flush`, one transaction; an entry already there is
kept, never replaced). The folder is verify's own when it holds the marker file `VERIFY_TRUTH_CACHE`; a folder that
holds other files and no marker is refused, and verify never deletes or rewrites a file it did not create there.
`verify cache clear DIR` removes the database and the marker (and a cache of the earlier format, one sub-folder of
`.jsonl` files per generation, which this version does not read); `verify cache info DIR` says what is there.
The folder is trusted as verify's own files are: a float edited there by hand is what the float filter sees (it can
turn a point's HOLDS wrong), while a VIOLATED is always certified from a recomputed truth.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sqlite3
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import diskcache

from verify import families  # read at call time: a test may give it another FAMILIES
from verify._version import __version__
from verify.errors import ParameterError
from verify.limits import cache_size, memory_cap, truth_deadline
from verify.model import quantity_range
from verify.results import Method, Truth
from verify.truth.numbers import NotEnclosable

if TYPE_CHECKING:
    from verify.model import Family, Quantity

MARKER = "VERIFY_TRUTH_CACHE"
FORMAT = "verify truth cache, format 2 (diskcache)"
_MARKER_TEXT = (f"{FORMAT}\nA verify truth cache (verify run/report --cache). `verify cache clear` removes what verify "
                "made here:\nthis file and cache.db, cache.db-wal, cache.db-shm.\n")
_OLD_MARKER = "A verify truth cache (verify run/report --cache). verify adds files here"  # format 1's first line
DATABASE = ("cache.db", "cache.db-wal", "cache.db-shm")  # diskcache's files (values stay in the database)
_OLD_GENERATION = re.compile(r"[0-9a-f]{20}")
_OLD_FILE = re.compile(r"[0-9a-f]{32}\.jsonl|\.[0-9a-f]{32}\.jsonl\.[0-9]+\.tmp")
_DEPENDENCIES = ("numpy", "scipy", "mpmath", "python-flint", "sympy")
MAX_RECORD = 1 << 16  # characters of one entry's text: a longer detail is not cached (the database holds them all)
_SETTINGS = {"eviction_policy": "least-recently-used",
             "cull_limit": 0,  # no eviction inside a write: `flush` culls after its transaction (exact, see there)
             "disk_min_file_size": 1 << 20}  # every value in the database: no value files beside it

Key = tuple[str, str, tuple[tuple[str, float], ...]]


def generation(backend: str) -> str:
    """The hash in every key of this installation and `backend` (see the module docstring)."""
    import platform  # with importlib.metadata ~30 ms at import: only where a cache is used
    from importlib import metadata

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    versions = []
    for name in _DEPENDENCIES:
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=absent")
    # the caps decide which truths can be had at all: a truth computed under a larger one is not this run's
    caps = [f"memory_cap={memory_cap()}", f"truth_deadline={truth_deadline()!r}"]
    facts = [f"verify={__version__}", f"python={sys.version}", platform.machine(), f"backend={backend}", *versions,
             *caps]
    digest.update("\n".join(facts).encode())
    return digest.hexdigest()[:20]


class _TextDisk(diskcache.Disk):
    """diskcache's storage of keys and values, reading text only: nothing in the folder is ever unpickled (an entry
    that is not verify's text reads as absent)."""

    def get(self, key, raw):  # a key as stored
        return key if raw and isinstance(key, str) else None

    def fetch(self, mode, filename, value, read):
        if mode != diskcache.core.MODE_RAW or not isinstance(value, str):
            return None
        return value


def entry_key(gen: str, key: tuple) -> str:
    """The database key of the memo's `key` (family, quantity, sorted params) in generation `gen`: JSON text, the
    floats as Python writes them (exact; inf and NaN as JSON's extensions)."""
    family, quantity, params = key
    return json.dumps([gen, str(family), str.__str__(quantity), [[str(n), float(v)] for n, v in params]],
                      allow_nan=True, separators=(",", ":"))


def encode(truth: Truth) -> str:
    """A truth's floats and flags as the JSON text stored (`decode` reads it back)."""
    return json.dumps([truth.value, truth.lower, truth.upper, truth.method.value, truth.detail, truth.confidence,
                       truth.ess, truth.enclose is not None, truth.refine is not None],
                      allow_nan=True, separators=(",", ":"))


def decode(text: object) -> tuple[Truth, bool, bool] | None:
    """The (truth, enclosable, refinable) of a stored entry, or None where it is not one (another format, edited)."""
    if not isinstance(text, str):
        return None
    try:
        value, lower, upper, method, detail, confidence, ess, enclosable, refinable = json.loads(text)
        truth = Truth(_float(value), _float(lower), _float(upper), Method(method), _text(detail),
                      None if confidence is None else _float(confidence), None if ess is None else _float(ess))
        truth.detail.encode("utf-8")  # no lone surrogates (results.json is UTF-8)
    except (ValueError, TypeError, OverflowError, RecursionError, UnicodeError):
        return None  # json's and float's errors (a literal beyond the floats, nesting past the stack), and ours
    if not (isinstance(enclosable, bool) and isinstance(refinable, bool)):
        return None
    return truth, enclosable, refinable


def _float(x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("not a number")
    return float(x)


def _text(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError("not text")
    return x


@dataclass
class TruthCache:
    """One generation's view of the cache folder: lookups go to the database, the truths computed here since the
    last `flush` wait in `fresh`."""

    folder: Path
    db: diskcache.Cache
    gen: str
    fresh: dict[str, str] = field(default_factory=dict)  # database key -> entry text, not yet written
    hits: int = 0  # lookups the cache answered (in this process)
    unreadable: int = 0  # entries that were there but not a truth, and lookups the database failed
    unwritable: bool = False  # a flush failed (said once)

    def get(self, key: tuple) -> tuple[Truth, bool, bool] | None:
        try:
            text = self.db.get(entry_key(self.gen, key), retry=True)  # least recently used: marks it used
        except (sqlite3.Error, OSError, diskcache.Timeout):
            self.unreadable += 1
            return None
        if text is None:
            return None
        entry = decode(text)
        if entry is None:
            self.unreadable += 1
        return entry

    def flush(self) -> None:
        """Add the truths computed here since the last flush (one transaction; an entry already there is kept),
        then evict the least recently used entries until the database is within the size cap again. A cap exceeded
        inside the transaction evicts nothing there: diskcache culls by volume, which SQLite frees at commit only,
        so culling per write would evict ten entries for each one added."""
        if not self.fresh:
            return
        try:
            with self.db.transact(retry=True):
                for key, text in self.fresh.items():
                    self.db.add(key, text, retry=True)
            self.fresh.clear()
            self.db.cull(retry=True)
        except (sqlite3.Error, OSError, diskcache.Timeout) as err:  # a full or read-only disk loses the cache's
            if not self.unwritable:  # additions, never the run; a stop (verify.stopping) goes on, rolled back
                warnings.warn(f"--cache {self.folder}: cannot add to it ({getattr(err, 'strerror', None) or err}); "
                              "this run's truths are not kept", RuntimeWarning, stacklevel=2)
            self.unwritable = True


_ACTIVE: TruthCache | None = None


def _forget_in_child() -> None:
    """A forked process adds what it computes itself, not the parent's unwritten truths (the parent adds those)."""
    if _ACTIVE is not None:
        _ACTIVE.fresh = {}
        _ACTIVE.hits = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _state(folder: Path) -> str:
    """"absent", "file" (not a folder), "empty", "ours" (the marker), "old" (format 1's marker) or "foreign"."""
    if not folder.exists():
        return "absent"
    if not folder.is_dir():
        return "file"
    marker = folder / MARKER
    if marker.is_file():
        try:
            with open(marker, encoding="utf-8", errors="replace") as f:
                head = f.read(len(_OLD_MARKER))
        except OSError:
            head = ""
        return "old" if head == _OLD_MARKER else "ours"  # (empty: a concurrent run is writing it)
    return "foreign" if any(folder.iterdir()) else "empty"


def _refusal(option: str, folder: Path, state: str) -> ParameterError:
    if state == "file":
        return ParameterError(f"{option} {folder}: not a folder")
    if state == "old":
        return ParameterError(f"{option} {folder}: a truth cache of an earlier verify (one folder of .jsonl files per "
                              f"generation), which this one does not read; `verify cache clear {folder}` removes it, "
                              "or name another folder")
    return ParameterError(f"{option} {folder}: the folder holds other files and is not a verify truth cache "
                          f"(no {MARKER} in it); name an empty or new folder")


def check_cache_dir(folder: Path | str) -> Path:
    """The cache folder, created (with its marker) where absent; a ParameterError for a folder that is not one."""
    folder = Path(folder)
    state = _state(folder)
    if state not in ("absent", "empty", "ours"):
        raise _refusal("--cache", folder, state)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / MARKER).exists():
            with open(folder / MARKER, "x", encoding="utf-8") as marker:  # "x": never over another's
                marker.write(_MARKER_TEXT)
    except FileExistsError:
        pass  # a concurrent run made it
    except OSError as err:
        raise ParameterError(f"--cache {folder}: cannot use it ({err.strerror or err})") from None
    return folder


def check_cache_executor(cache: Path | str | None, executor: str) -> None:
    """The cache lives on this machine's disk: a ParameterError for a run sent to Dask with one."""
    if cache is not None and executor == "dask":
        raise ParameterError("--cache keeps truths on this machine's disk: use it with the local executor")


def _open(folder: Path, option: str, **settings: object) -> diskcache.Cache:
    try:
        return diskcache.Cache(str(folder), disk=_TextDisk, **settings)
    except (sqlite3.Error, OSError, diskcache.Timeout) as err:
        raise ParameterError(f"{option} {folder}: cannot open its database ({getattr(err, 'strerror', None) or err}); "
                             f"`verify cache clear {folder}` removes it") from None


@contextmanager
def disk_truths(folder: Path | str | None, backend: str, size: int | None = None) -> Iterator[TruthCache | None]:
    """Use the cache in `folder` (None: none) for the block, capped at `size` bytes (None: env VERIFY_CACHE_SIZE,
    else 1 GiB): truths are read from it and what is computed is added (by this process and by the processes it
    forks, at the end of each memo block, verify.pipeline.memo)."""
    global _ACTIVE
    if folder is None:
        yield None
        return
    limit = cache_size() if size is None else size
    root = check_cache_dir(folder)
    cache = TruthCache(root, _open(root, "--cache", size_limit=limit, **_SETTINGS), generation(backend))
    saved, _ACTIVE = _ACTIVE, cache
    try:
        yield cache
    finally:
        _ACTIVE = saved
        try:
            cache.flush()
        finally:
            cache.db.close()


def _cached(family: Family) -> bool:
    """A built-in family itself: not a plugin's (registered beside them), nor a copy with other code."""
    return family.name in families.BUILT_IN and families.FAMILIES.get(family.name) is family


def lookup(family: Family, quantity: Quantity, params: Mapping[str, float], key: tuple) -> Truth | None:
    """The cached truth at the memo's `key` (None if none), with an enclosure and a finer level, where its original
    had them, that recompute the truth from scratch on first use."""
    cache = _ACTIVE
    if cache is None or not _cached(family):
        return None
    entry = cache.get(key)
    if entry is None:
        return None
    truth, enclosable, refinable = entry
    low, high = quantity_range(quantity)
    if not (low <= truth.lower and truth.upper <= high):  # edited, or another tool's: not what a family returns
        cache.unreadable += 1  # (a negative Rényi divergence read back gave HOLDS with negative ratios); computed
        return None  # again
    cache.hits += 1
    if not (enclosable or refinable):
        return truth
    original: list[Truth] = []

    def computed() -> Truth:
        if not original:
            original.append(family.truth_validated(quantity, params))
        return original[0]

    def enclose(prec: int):
        again = computed()
        if again.enclose is None:
            raise NotEnclosable("the truth computed again has no enclosure")
        return again.enclose(prec)

    def refine() -> Truth:
        again = computed()
        return again.refine() if again.refine is not None else again

    return dataclasses.replace(truth, enclose=enclose if enclosable else None, refine=refine if refinable else None)


def store(family: Family, key: tuple, truth: Truth) -> None:
    """Remember a truth just computed at the memo's `key` (written at the next `flush`)."""
    cache = _ACTIVE
    if cache is None or not _cached(family) or not isinstance(truth, Truth):
        return
    text = encode(truth)
    if len(text) <= MAX_RECORD:
        cache.fresh[entry_key(cache.gen, key)] = text


def flush() -> None:
    if _ACTIVE is not None:
        _ACTIVE.flush()


# --- `verify cache info` and `verify cache clear` ---

def _checked(folder: Path | str, command: str) -> tuple[Path, str]:
    folder = Path(folder)
    state = _state(folder)
    if state == "absent":
        raise ParameterError(f"verify cache {command} {folder}: no such folder")
    if state in ("file", "foreign", "empty"):
        if state == "empty":
            raise ParameterError(f"verify cache {command} {folder}: an empty folder, not a verify truth cache")
        raise _refusal(f"verify cache {command}", folder, state)
    return folder, state


def _bytes_of(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += path.lstat().st_size
    return total


def info(folder: Path | str) -> dict:
    """What the cache in `folder` holds: its format, bytes on disk (verify's files), entries, entries per generation
    (most first), the size cap the last run set, and this installation's generation (numpy backend)."""
    folder, state = _checked(folder, "info")
    if state == "old":
        shards = [p for p in folder.glob("*/*.jsonl") if _OLD_GENERATION.fullmatch(p.parent.name)]
        return {"folder": str(folder), "format": 1, "bytes": _bytes_of([folder / MARKER, *shards]),
                "generations": len({p.parent.name for p in shards}), "files": len(shards)}
    result = {"folder": str(folder), "format": 2, "bytes": _bytes_of([folder / n for n in (MARKER, *DATABASE)]),
              "entries": 0, "generations": {}, "size_limit": None, "volume": 0, "current": generation("numpy")}
    if not (folder / DATABASE[0]).is_file():
        return result
    db = _open(folder, "verify cache info")  # the settings stored by the last run (no setting given: none changed)
    try:
        per: collections.Counter[str] = collections.Counter()
        for key in db.iterkeys():
            try:
                per[str(json.loads(key)[0]) if isinstance(key, str) else "?"] += 1
            except (ValueError, TypeError, IndexError, KeyError):
                per["?"] += 1
        result.update(entries=sum(per.values()), generations=dict(per.most_common()), size_limit=db.size_limit,
                      volume=db.volume())
    except (sqlite3.Error, diskcache.Timeout) as err:
        raise ParameterError(f"verify cache info {folder}: cannot read its database ({err}); "
                             f"`verify cache clear {folder}` removes it") from None
    finally:
        db.close()
    return result


def clear(folder: Path | str) -> tuple[list[tuple[str, int]], list[str]]:
    """Remove what verify made in the cache `folder`: the database files and the marker (format 1: the generation
    folders' shards and the folders, then the marker). Returns (removed: (path, bytes) each, left: paths verify did
    not make, left in place). The folder itself stays. A ParameterError for a folder that is not a verify cache."""
    folder, state = _checked(folder, "clear")
    removed: list[tuple[str, int]] = []
    ours: list[Path] = []
    if state == "old":
        for sub in sorted(folder.iterdir()):
            if sub.is_dir() and not sub.is_symlink() and _OLD_GENERATION.fullmatch(sub.name):
                ours += [p for p in sorted(sub.iterdir()) if _OLD_FILE.fullmatch(p.name) and p.is_file()
                         and not p.is_symlink()]
    else:
        ours += [folder / n for n in DATABASE if (folder / n).is_file() and not (folder / n).is_symlink()]
    for path in ours:
        size = _bytes_of([path])
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise ParameterError(f"verify cache clear {folder}: cannot remove {path} ({err.strerror or err})") from None
        removed.append((str(path), size))
    if state == "old":
        for sub in sorted(folder.iterdir()):
            if sub.is_dir() and not sub.is_symlink() and _OLD_GENERATION.fullmatch(sub.name):
                with contextlib.suppress(OSError):
                    sub.rmdir()  # empty now, or holding files verify did not make (left, and said)
                    removed.append((str(sub) + os.sep, 0))
    left = sorted(str(p) for p in folder.rglob("*") if p != folder / MARKER and (p.is_symlink() or not p.is_dir()))
    marker = folder / MARKER
    size = _bytes_of([marker])
    with contextlib.suppress(FileNotFoundError):
        marker.unlink()  # last: a clear stopped half way leaves a folder still known as verify's
        removed.append((str(marker), size))
    return removed, left


def human(size: float) -> str:
    """Bytes as a short text (KiB, MiB, GiB)."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} GiB"  # not reached

