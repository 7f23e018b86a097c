"""An optional on-disk cache of ground truths, for users who run the same checks again (`--cache DIR`).

A truth is a deterministic function of (family, quantity, validated parameters) for a given verify and its numerical
dependencies (verify.memo). The cache keeps the float truths of built-in families under a *generation*: a hash of
verify's version and every source file of the package, the versions of Python, NumPy, SciPy, mpmath, python-flint and
SymPy, the machine and the array backend. Any change to any of them starts a new generation, so an entry is never
stale; entries of other generations are left where they are.

Only the floats are kept (value, interval, method, detail, confidence, ess). A cached truth whose original had an Arb
enclosure (or a finer level) gets one that recomputes the truth from scratch on first use: a certificate never rests
on the cache, and a point is certified exactly as in a cold run. Families that are not built in (plugins) are never
cached: their code is not part of the generation.

The folder holds a marker file and one sub-folder per generation; each process writes what it computed as a new file
(a unique name, written aside and renamed into place), so concurrent runs never replace each other's files, and
verify never deletes or rewrites a file there (but the temporary file of a worker it killed, as a stopped command does,
before that file was renamed). A line that cannot be read is skipped. Delete the folder to clear it.
The folder is trusted as verify's own files are: a float edited there by hand is what the float filter sees (it can
turn a point's HOLDS wrong), while a VIOLATED is always certified from a recomputed truth.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from verify import families  # read at call time: a test may give it another FAMILIES
from verify._version import __version__
from verify.errors import ParameterError
from verify.limits import memory_cap, truth_deadline
from verify.model import quantity_range
from verify.results import Method, Truth
from verify.stopping import ended
from verify.truth.numbers import NotEnclosable

if TYPE_CHECKING:
    from verify.model import Family, Quantity

MARKER = "VERIFY_TRUTH_CACHE"
_MARKER_TEXT = ("A verify truth cache (verify run/report --cache). verify adds files here and never deletes or\n"
                "rewrites one; delete this folder to clear the cache.\n")
_DEPENDENCIES = ("numpy", "scipy", "mpmath", "python-flint", "sympy")
MAX_SHARD_BYTES = 1 << 30  # a file larger than this is not one verify wrote: skipped

Key = tuple[str, str, tuple[tuple[str, float], ...]]


def generation(backend: str) -> str:
    """The hash that names the cache's sub-folder for this installation and `backend` (see the module docstring)."""
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


@dataclass
class TruthCache:
    """The truths of one generation: those read from the folder, and those computed here since (written by `flush`)."""

    folder: Path  # the generation's sub-folder
    known: dict[Key, tuple[Truth, bool, bool]] = field(default_factory=dict)  # truth, enclosable, refinable
    fresh: dict[Key, list] = field(default_factory=dict)  # computed in this process, not yet written
    unreadable: int = 0  # lines (and files) skipped
    unwritable: bool = False  # a flush failed (said once)

    def load(self) -> None:
        for path in sorted(self.folder.glob("*.jsonl")):
            try:  # regular files only (a FIFO would block, a device never end), of a size a shard can have
                if not path.is_file() or path.stat().st_size > MAX_SHARD_BYTES:
                    self.unreadable += 1
                    continue
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self.unreadable += 1
                continue
            for line in lines:
                entry = _parse(line)
                if entry is None:
                    self.unreadable += 1
                else:
                    self.known.setdefault(entry[0], entry[1])

    def flush(self) -> None:
        """Write the truths computed here since the last flush as a new file of the generation."""
        if not self.fresh:
            return
        text = "".join(json.dumps({"k": [k[0], k[1], [list(p) for p in k[2]]], "t": t}, allow_nan=True) + "\n"
                       for k, t in self.fresh.items())
        import uuid

        name = f"{uuid.uuid4().hex}.jsonl"
        aside = self.folder / f".{name}.{os.getpid()}.tmp"
        try:
            aside.write_text(text, encoding="utf-8")
            os.replace(aside, self.folder / name)  # a fresh name: nothing there to replace
        except BaseException as err:  # a full or read-only disk loses the cache's additions, never the run
            with contextlib.suppress(OSError):
                aside.unlink(missing_ok=True)  # ours, half written
            if not isinstance(err, OSError):  # a stop (verify.stopping) goes on
                raise
            if not self.unwritable:
                warnings.warn(f"--cache {self.folder}: cannot add to it ({err.strerror or err}); this run's truths "
                              "are not kept", RuntimeWarning, stacklevel=2)
            self.unwritable = True
            return
        self.fresh.clear()


_ACTIVE: TruthCache | None = None


def _parse(line: str) -> tuple[Key, tuple[Truth, bool, bool]] | None:
    """One cached truth from its line, or None where the line is not one (truncated, edited, another format)."""
    try:
        record = json.loads(line)
        family, quantity, params = record["k"]
        value, lower, upper, method, detail, confidence, ess, enclosable, refinable = record["t"]
        key = (str(family), str(quantity), tuple((str(n), float(v)) for n, v in params))
        truth = Truth(float(value), float(lower), float(upper), Method(method), str(detail),
                      None if confidence is None else float(confidence), None if ess is None else float(ess))
        "".join(key[:2] + tuple(n for n, _ in key[2]) + (truth.detail,)).encode("utf-8")  # no lone surrogates
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError, UnicodeError):
        return None  # json's and float's errors (a literal beyond the floats, nesting past the stack), and ours
    if not (isinstance(enclosable, bool) and isinstance(refinable, bool)):
        return None
    return key, (truth, enclosable, refinable)


def _record(truth: Truth) -> list:
    return [truth.value, truth.lower, truth.upper, truth.method.value, truth.detail, truth.confidence, truth.ess,
            truth.enclose is not None, truth.refine is not None]


def check_cache_dir(folder: Path | str) -> Path:
    """The cache folder, created (with its marker) where absent; a ParameterError for a folder that is not one."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"--cache {folder}: not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise ParameterError(f"--cache {folder}: the folder holds other files and is not a verify truth cache "
                             f"(no {MARKER} in it); name an empty or new folder")
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


@contextmanager
def disk_truths(folder: Path | str | None, backend: str) -> Iterator[TruthCache | None]:
    """Use the cache in `folder` (None: none) for the block: truths are read from it and what is computed is added
    (by this process and by the processes it forks, at the end of each memo block, verify.memo)."""
    global _ACTIVE
    if folder is None:
        yield None
        return
    root = check_cache_dir(folder)
    here = root / generation(backend)
    try:
        here.mkdir(exist_ok=True)
    except OSError as err:
        raise ParameterError(f"--cache {root}: cannot use it ({err.strerror or err})") from None
    cache = TruthCache(here)
    cache.load()
    saved, _ACTIVE = _ACTIVE, cache
    try:
        yield cache
    finally:
        _ACTIVE = saved
        try:
            cache.flush()
        finally:
            _remove_orphans(here)


_ASIDE = re.compile(r"\.[0-9a-f]{32}\.jsonl\.(?P<pid>[0-9]+)\.tmp")


def _remove_orphans(folder: Path) -> None:
    """Remove the files that processes verify ended (verify.stopping, a command stopped by a signal) were writing
    (`flush`'s `.<name>.jsonl.<pid>.tmp`): killed before the rename, they are half written."""
    killed = ended()
    if not killed:
        return
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = _ASIDE.fullmatch(name)
        if match is not None and int(match["pid"]) in killed:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
    return True


def _cached(family: Family) -> bool:
    """A built-in family itself: not a plugin's (registered beside them), nor a copy with other code."""
    return family.name in families.BUILT_IN and families.FAMILIES.get(family.name) is family


def lookup(family: Family, quantity: Quantity, params: Mapping[str, float], key: tuple) -> Truth | None:
    """The cached truth at the memo's `key` (None if none), with an enclosure and a finer level, where its original
    had them, that recompute the truth from scratch on first use."""
    cache = _ACTIVE
    if cache is None or not _cached(family):
        return None
    entry = cache.known.get(key)  # a Quantity equals (and hashes as) its id, as read back from the file
    if entry is None:
        return None
    truth, enclosable, refinable = entry
    low, high = quantity_range(quantity)
    if not (low <= truth.lower and truth.upper <= high):  # edited, or another tool's: not what a family returns
        return None  # (a negative Rényi divergence read back gave HOLDS with negative ratios); computed again
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
    cache.fresh[key] = _record(truth)


def flush() -> None:
    if _ACTIVE is not None:
        _ACTIVE.flush()
