"""The on-disk truth cache (`--cache DIR`, pipeline.truth_cache, on diskcache): a run that reads it gives the results of
a run without it (certificates recomputed, not read), computes none of the truths it holds, never touches a file it
did not write, keeps within its size cap, serves concurrent processes the right values, and starts afresh when
verify's source, its dependencies or the backend change."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import multiprocessing
import os
import sqlite3
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import diskcache
import pytest
from conftest import untimed
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.errors import ParameterError
from verify.limits import parse_size
from verify.pipeline import isolation, truth_cache
from verify.pipeline.truth_cache import MARKER, TruthCache, check_cache_dir, decode, disk_truths, encode, entry_key
from verify.results import Method, Truth
from verify.runner import run

# exact with certified violations; a PLD bracket with finer levels (refine); a Monte-Carlo estimate (seeded)
ENTRIES = ["feldman2018.lemma21.expansive", "thudi2024.appendix_b.mnist_noise", "wang2021.noisysgd_tcdp"]
CLI_ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}


def _dicts(selectors: list[str], **kwargs) -> list[dict]:
    """Each result with every point (truth, bound, verdict, certificate), without the clock fields."""
    return [untimed({**r.to_dict(), "points": [p.to_dict() for p in r.points]})
            for r in run(selectors, falsify=10, **kwargs).results]


def _entries(folder: Path) -> dict[str, str]:
    """Every entry of the cache's database, read with diskcache itself (not verify's reader)."""
    with diskcache.Cache(str(folder)) as db:
        return {k: db.get(k) for k in db.iterkeys()}


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _bits(x: float | None) -> object:
    return x if x is None else struct.pack("<d", x)


@pytest.fixture(scope="module")
def plain() -> list[dict]:
    return _dicts(ENTRIES)


def test_a_cached_run_gives_the_results_of_a_plain_one(tmp_path, plain, monkeypatch):
    cold = _dicts(ENTRIES, cache=tmp_path)
    written = _entries(tmp_path)
    assert cold == plain and written
    computed = []
    original = isolation.truth
    monkeypatch.setattr(isolation, "truth", lambda *a: computed.append(a) or original(*a))
    with disk_truths(tmp_path, "numpy") as cache:  # as run() opens it: the hits are counted here
        warm = _dicts(ENTRIES)
        assert cache.hits >= len(written)  # each truth the cold run computed, asked again
    assert warm == plain
    assert computed == []  # every truth came from the cache (certificates recompute theirs beside it)
    assert any(p.get("certificate") for r in warm for p in r["points"])  # and some points were certified
    assert _entries(tmp_path) == written  # nothing new to add, nothing rewritten


def test_a_second_run_computes_nothing_the_first_one_computed(tmp_path, monkeypatch):
    """The truth function itself raises on the second run: every truth is read."""
    first = _dicts(ENTRIES[:1], cache=tmp_path, workers=1)

    def refuse(*_args):
        raise AssertionError("a truth was computed though the cache holds it")

    monkeypatch.setattr(isolation, "truth", refuse)
    assert _dicts(ENTRIES[:1], cache=tmp_path, workers=1) == first


def test_forked_workers_add_to_the_cache_and_a_new_backend_starts_afresh(tmp_path):
    run(ENTRIES[:1], falsify=0, workers=2, cache=tmp_path)
    before = _entries(tmp_path)
    generations = {json.loads(k)[0] for k in before}
    assert len(generations) == 1 and before
    with disk_truths(tmp_path, "array_api_strict") as other:
        assert other.gen not in generations
        for key in before:
            _, family, quantity, params = json.loads(key)
            assert other.get((family, quantity, tuple(map(tuple, params)))) is None
    assert _entries(tmp_path) == before  # the other generation's entries stay


def test_a_new_generation_serves_nothing_old_and_keeps_it(tmp_path, monkeypatch):
    key = ("gaussian_triple", "renyi", (("alpha", 2.0), ("s", 1.0)))
    with disk_truths(tmp_path, "numpy") as cache:
        cache.fresh[entry_key(cache.gen, key)] = encode(Truth.exact(1.5, "one and a half"))
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.get(key)[0].value == 1.5
    monkeypatch.setattr(truth_cache, "generation", lambda backend: "0" * 20)  # as after an edit of verify's source
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.get(key) is None
    assert len(_entries(tmp_path)) == 1


def test_the_key_holds_every_parameter_exactly(tmp_path):
    """Keys that differ in one parameter's last bit, its sign of zero or its name are other entries."""
    base = ("f", "renyi", (("a", 0.1), ("b", 0.0)))
    others = [("f", "renyi", (("a", math.nextafter(0.1, 1)), ("b", 0.0))), ("f", "renyi", (("a", 0.1), ("b", -0.0))),
              ("f", "renyi", (("a", 0.1), ("c", 0.0))), ("f", "epsilon", base[2]), ("g", "renyi", base[2])]
    with disk_truths(tmp_path, "numpy") as cache:
        cache.fresh[entry_key(cache.gen, base)] = encode(Truth.exact(2.0, "base"))
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.get(base)[0].value == 2.0
        assert [cache.get(k) for k in others] == [None] * len(others)


_FLOAT = st.floats(allow_nan=False)
_ANY = st.one_of(st.floats(), st.sampled_from([math.inf, -math.inf, math.nan, -0.0, 5e-324]))


@st.composite
def _truths(draw) -> Truth:
    value = draw(st.one_of(_FLOAT, st.sampled_from([math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308])))
    below = st.floats(max_value=value, allow_nan=False) if value > -math.inf else st.nothing()
    above = st.floats(min_value=value, allow_nan=False) if value < math.inf else st.nothing()
    lower = draw(st.one_of(st.just(value), st.just(-math.inf), below))
    upper = draw(st.one_of(st.just(value), st.just(math.inf), above))
    return Truth(value, lower, upper, draw(st.sampled_from(list(Method))),
                 draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=40)),
                 draw(st.none() | _ANY), draw(st.none() | _ANY))


_EXAMPLE = itertools.count()


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    with disk_truths(tmp_path_factory.mktemp("roundtrip"), "numpy") as cache:
        yield cache


@settings(max_examples=150)
@given(truth=_truths(), params=st.lists(st.tuples(st.text(max_size=5), _ANY), max_size=4),
       flags=st.tuples(st.booleans(), st.booleans()))
def test_truths_round_trip_exactly_through_the_database(shared_cache, truth, params, flags):
    """Floats bit for bit (the sign of zero and of inf kept), NaN as NaN, in the entry and in its key."""
    cache = shared_cache
    enclose, refine = (lambda prec: None) if flags[0] else None, (lambda: truth) if flags[1] else None
    truth = dataclasses.replace(truth, enclose=enclose, refine=refine)
    key = (f"fam{next(_EXAMPLE)}", "renyi", tuple(sorted(params)))  # a key of its own (an entry is never replaced)
    cache.fresh[entry_key(cache.gen, key)] = encode(truth)
    cache.flush()
    back, enclosable, refinable = cache.get(key)
    assert (enclosable, refinable) == flags
    for field in ("value", "lower", "upper", "confidence", "ess"):
        a, b = getattr(truth, field), getattr(back, field)
        assert (math.isnan(a) and math.isnan(b)) if isinstance(a, float) and math.isnan(a) else _bits(a) == _bits(b)
    assert (back.method, back.detail) == (truth.method, truth.detail)
    # the key: the parameters as stored read back to the same floats (NaN as NaN)
    stored = json.loads(entry_key(cache.gen, key))[3]
    assert [n for n, _ in stored] == [n for n, _ in key[2]]
    assert all((math.isnan(v) and math.isnan(w)) or _bits(v) == _bits(w)
               for (_, v), (_, w) in zip(stored, key[2], strict=True))


def test_entries_that_are_not_truths_are_skipped_and_nothing_is_unpickled(tmp_path, plain):
    _dicts(ENTRIES[:1], cache=tmp_path)
    keys = list(_entries(tmp_path))
    record = json.loads(_entries(tmp_path)[keys[0]])
    record[1] = record[0] + 1  # lower above the value: not a truth
    bad = ["[1.0, 2", "not json", json.dumps({"k": 1}), json.dumps(record), json.dumps([10**400] + record[1:]),
           json.dumps(record[:4] + ["\ud800"] + record[5:]), "[" * 100_000 + "]" * 100_000]

    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "PWNED"),))

    with diskcache.Cache(str(tmp_path)) as db:
        for key, text in zip(keys, bad, strict=False):  # keys has more: the pickled and bytes values
            db.set(key, text)
        db.set(keys[len(bad)], Boom())  # a pickled value: never loaded
        db.set(keys[len(bad) + 1], b"\x00bytes")
    with disk_truths(tmp_path, "numpy") as cache:
        for key in keys[:len(bad) + 2]:
            _, family, quantity, params = json.loads(key)
            assert cache.get((family, quantity, tuple(map(tuple, params)))) is None
        assert cache.unreadable == len(bad)
    assert not (tmp_path / "PWNED").exists()
    assert _dicts(ENTRIES[:1], cache=tmp_path) == plain[:1]


def test_a_cached_truth_outside_its_quantitys_range_is_computed_again(tmp_path, plain):
    """An edited entry with a negative Rényi divergence (a probe's) was read back and gave HOLDS with negative ratios;
    it is ignored like any entry that is not a family's truth."""
    _dicts(ENTRIES[:1], cache=tmp_path)
    with diskcache.Cache(str(tmp_path)) as db:
        for key in list(db.iterkeys()):
            record = json.loads(db.get(key))
            record[:3] = [-5.0, -6.0, -4.0]
            db.set(key, json.dumps(record))
    assert _dicts(ENTRIES[:1], cache=tmp_path) == plain[:1]


def test_the_caps_are_part_of_the_key(monkeypatch):
    """A truth had under a larger memory cap or a longer deadline may fail under this run's: another generation."""
    base = truth_cache.generation("numpy")
    monkeypatch.setenv("VERIFY_MEMORY_CAP", "200000")
    smaller = truth_cache.generation("numpy")
    monkeypatch.setenv("VERIFY_TRUTH_DEADLINE", "0.5")
    assert len({base, smaller, truth_cache.generation("numpy")}) == 3


def _fill(cache: TruthCache, start: int, n: int, detail: str = "x" * 200) -> None:
    for i in range(start, start + n):
        cache.fresh[entry_key(cache.gen, ("f", "renyi", (("i", float(i)),)))] = encode(Truth.exact(i, detail))
    cache.flush()


def test_the_size_cap_evicts_the_least_recently_used(tmp_path):
    cap = 256 * 1024
    with disk_truths(tmp_path, "numpy", size=cap) as cache:
        _fill(cache, 0, 50)
        assert cache.db.volume() <= cap
        for step in range(30):  # ~300 bytes an entry: 3000 entries are ~4x the cap
            assert cache.get(("f", "renyi", (("i", 0.0),)))[0].value == 0  # used again and again: kept
            _fill(cache, 50 + 100 * step, 100)
            assert cache.db.volume() <= cap  # diskcache's measure of the database, after each addition
        kept = {i for i in range(3050) if cache.get(("f", "renyi", (("i", float(i)),))) is not None}
    assert 0 in kept and 1 not in kept and 3049 in kept  # the oldest unused entries went first
    assert 100 < len(kept) < 3050
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith("cache.db"))
    assert on_disk <= cap + 4096  # closed (the log folded in): the cap and one page's slack


def test_the_size_comes_from_the_option_the_environment_or_the_default(tmp_path, monkeypatch):
    assert [parse_size(t, "x") for t in ("2GB", "512MiB", "1e9", "1024", "3 k")] == [
        2 * 10**9, 512 * 2**20, 10**9, 1024, 3072]
    for bad in ("", "-1", "0", "lots", "1e400", "2 XB", "nan"):
        with pytest.raises(ParameterError, match="x must be"):
            parse_size(bad, "x")
    monkeypatch.setenv("VERIFY_CACHE_SIZE", "300kB")
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.db.size_limit == 300_000
    with disk_truths(tmp_path, "numpy", size=400_000) as cache:
        assert cache.db.size_limit == 400_000
    monkeypatch.delenv("VERIFY_CACHE_SIZE")
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.db.size_limit == 2**30


def _expected(i: int) -> Truth:
    return Truth(i * 0.1, i * 0.1 - 1e-3, i * 0.1 + 1e-3, Method.EXACT, f"truth {i}")


def _writer_and_reader(folder: str, me: int, rounds: int, out) -> None:
    """Add truths (some keys shared with the other processes) and read back every key another has added."""
    wrong = 0
    seen = 0
    with disk_truths(folder, "numpy") as cache:
        for r in range(rounds):
            for i in [*range(me * 1000 + r * 20, me * 1000 + r * 20 + 20), *range(5000 + r * 5, 5000 + r * 5 + 5)]:
                cache.fresh[entry_key(cache.gen, ("f", "renyi", (("i", float(i)),)))] = encode(_expected(i))
            cache.flush()
            for i in [*range(5000, 5000 + rounds * 5), *(p * 1000 + k for p in range(4) for k in range(rounds * 20))]:
                entry = cache.get(("f", "renyi", (("i", float(i)),)))
                if entry is not None:
                    seen += 1
                    wrong += entry[0] != _expected(i)
    out.put((me, wrong, seen, cache.unreadable, cache.unwritable))


def test_concurrent_processes_read_the_right_values(tmp_path):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer_and_reader, args=(str(tmp_path), me, 10, out)) for me in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * 4
    assert all(wrong == 0 and seen > 0 and unreadable == 0 and not unwritable
               for _, wrong, seen, unreadable, unwritable in results), results
    entries = _entries(tmp_path)
    assert len(entries) == 4 * 10 * 20 + 10 * 5  # every process's keys, the shared ones once
    for key, text in entries.items():
        i = int(json.loads(key)[3][0][1])
        assert decode(text)[0] == _expected(i)


def test_a_folder_that_is_not_a_cache_is_refused_and_left_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError, match="not a verify truth cache"):
        check_cache_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(ParameterError, match="not a folder"):
        check_cache_dir(tmp_path / "notes.txt")
    fresh = check_cache_dir(tmp_path / "new" / "cache")
    assert (fresh / MARKER).is_file()


def _old_cache(folder: Path) -> None:
    """A cache as verify wrote it before diskcache: the marker and one folder of .jsonl shards per generation."""
    folder.mkdir()
    (folder / MARKER).write_text("A verify truth cache (verify run/report --cache). verify adds files here and never "
                                 "deletes or\nrewrites one; delete this folder to clear the cache.\n")
    gen = folder / "0123456789abcdef0123"
    gen.mkdir()
    (gen / ("ab" * 16 + ".jsonl")).write_text('{"k": [], "t": []}\n')
    (gen / ("cd" * 16 + ".jsonl")).write_text('{"k": [], "t": []}\n')


def _cli(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verify.cli", *argv], capture_output=True, text=True,
                          env=env or CLI_ENV)


def test_a_cache_of_the_earlier_format_is_refused_until_cleared(tmp_path, capsys):
    old = tmp_path / "old"
    _old_cache(old)
    (old / "0123456789abcdef0123" / "mine.txt").write_text("mine")  # not verify's: stays
    before = _files(old)
    with pytest.raises(ParameterError, match="earlier verify.*verify cache clear"):
        check_cache_dir(old)
    assert _files(old) == before
    assert main(["cache", "clear", str(old)]) == 0
    out = capsys.readouterr().out
    assert out.count("removed ") == 3 and "left 1 files verify did not make" in out
    assert _files(old) == {"0123456789abcdef0123/mine.txt": before["0123456789abcdef0123/mine.txt"]}
    check_cache_dir(tmp_path / "old2")  # (an empty or new folder is fine)


def test_cache_clear_and_info_refuse_a_folder_that_is_not_a_cache_and_delete_nothing(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "cache.db").write_bytes(b"my own database")  # a name verify uses, but no marker: not verify's
    (foreign / "notes.txt").write_text("mine")
    before = _files(foreign)
    for action in ("clear", "info"):
        done = _cli("cache", action, str(foreign))
        assert done.returncode == 2, done
        assert len(done.stderr.strip().splitlines()) == 1 and "not a verify truth cache" in done.stderr
        assert _files(foreign) == before
    for missing in (tmp_path / "absent", foreign / "notes.txt"):
        done = _cli("cache", "clear", str(missing))
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done


def test_cache_clear_removes_what_verify_made_and_nothing_else(tmp_path):
    folder = tmp_path / "c"
    with disk_truths(folder, "numpy") as cache:
        _fill(cache, 0, 20)
    (folder / "notes.txt").write_text("mine")  # dropped there by hand: left
    info = _cli("cache", "info", str(folder), "--json")
    assert info.returncode == 0, info.stderr
    got = json.loads(info.stdout)
    assert got["entries"] == 20 and got["generations"] == {cache.gen: 20} and got["size_limit"] == 2**30
    done = _cli("cache", "clear", str(folder))
    assert done.returncode == 0, done.stderr
    assert "removed" in done.stdout and "notes.txt" in done.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_the_cli_takes_a_cache_and_its_size_and_refuses_it_with_dask(tmp_path):
    cmd = ["run", "--only", ENTRIES[0], "--falsify", "0", "--quiet"]
    done = _cli(*cmd, "--cache", str(tmp_path / "c"), "--cache-size", "50MB")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c" / "cache.db").is_file()
    with diskcache.Cache(str(tmp_path / "c")) as db:
        assert db.size_limit == 50 * 10**6 and len(db) > 0
    refused = _cli(*cmd, "--cache", str(tmp_path / "c"), "--executor", "dask")
    assert refused.returncode == 2 and "local executor" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    bad = _cli(*cmd, "--cache", str(tmp_path / "c"), "--cache-size", "lots")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--cache-size" in bad.stderr
    env = _cli(*cmd, "--cache", str(tmp_path / "c"), env={**CLI_ENV, "VERIFY_CACHE_SIZE": "-3"})
    assert env.returncode == 2 and len(env.stderr.strip().splitlines()) == 1 and "VERIFY_CACHE_SIZE" in env.stderr


def test_a_cache_that_cannot_be_added_to_says_so_once_and_the_run_goes_on(tmp_path, monkeypatch):
    with disk_truths(tmp_path / "c", "numpy") as cache:  # as a disk that fills up or turns read-only in the run
        def full(*_a, **_k):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(cache.db, "transact", full)
        cache.fresh["k"] = encode(Truth.exact(1.0, "d"))
        with pytest.warns(RuntimeWarning, match="cannot add to it"):
            cache.flush()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cache.flush()  # said once
        assert cache.fresh
        monkeypatch.undo()
        cache.fresh.clear()


def test_a_family_that_is_not_built_in_is_not_cached(tmp_path, monkeypatch):
    """Neither a registered plugin family (its code is not part of the cache's key) nor a copy of a built-in one."""
    from verify.families import FAMILIES, register

    copy = dataclasses.replace(FAMILIES["gaussian_triple"])
    plugin = dataclasses.replace(FAMILIES["gaussian_triple"], name="my_plugin_triple")
    monkeypatch.setitem(FAMILIES, "my_plugin_triple", plugin)
    register(plugin)
    with disk_truths(tmp_path, "numpy") as cache:
        for fam in (copy, plugin, FAMILIES["gaussian_triple"]):
            truth_cache.store(fam, (fam.name, next(iter(fam.truths)), (("s", 1.0),)), Truth.exact(1.0, "one"))
        assert [json.loads(k)[1] for k in cache.fresh] == ["gaussian_triple"]  # the built-in family itself, only


def test_a_cache_inside_the_report_folder_is_refused_before_the_run(tmp_path):
    """The report's folder holds the report alone (verify/reporting/build.py): a cache there would make the finished
    report refuse its own destination."""
    from verify.reporting.build import build_report

    for cache in (tmp_path / "out", tmp_path / "out" / "cache"):
        with pytest.raises(ParameterError, match="inside --out"):
            build_report(ENTRIES[:1], tmp_path / "out", cache=cache, falsify=0)
    assert not (tmp_path / "out").exists()


def test_pickle_is_not_what_verify_writes(tmp_path):
    """Every value verify stores is JSON text (diskcache keeps text as is): nothing a reader must unpickle."""
    with disk_truths(tmp_path, "numpy") as cache:
        _fill(cache, 0, 3)
    with contextlib.closing(sqlite3.connect(tmp_path / "cache.db")) as con:
        rows = con.execute("SELECT raw, mode, typeof(key), typeof(value) FROM Cache").fetchall()
    assert rows and set(rows) == {(1, diskcache.core.MODE_RAW, "text", "text")}
