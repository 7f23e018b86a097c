"""The on-disk truth cache (`--cache DIR`, verify.truth_cache): a run that reads it gives the results of a run without
it (certificates recomputed, not read), computes none of the truths it holds, never touches a file it did not write,
and starts afresh when verify's source, its dependencies or the backend change."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from conftest import untimed

from verify import isolation, truth_cache
from verify.errors import ParameterError
from verify.results import Truth
from verify.runner import run
from verify.truth_cache import MARKER, check_cache_dir, disk_truths

# exact with certified violations; a PLD bracket with finer levels (refine); a Monte-Carlo estimate (seeded)
ENTRIES = ["feldman2018.lemma21.expansive", "thudi2024.appendix_b.mnist_noise", "wang2021.noisysgd_tcdp"]


def _dicts(selectors: list[str], **kwargs) -> list[dict]:
    """Each result with every point (truth, bound, verdict, certificate), without the clock fields."""
    return [untimed({**r.to_dict(), "points": [p.to_dict() for p in r.points]})
            for r in run(selectors, falsify=10, **kwargs).results]


def _shards(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*.jsonl")}


@pytest.fixture(scope="module")
def plain() -> list[dict]:
    return _dicts(ENTRIES)


def test_a_cached_run_gives_the_results_of_a_plain_one(tmp_path, plain, monkeypatch):
    cold = _dicts(ENTRIES, cache=tmp_path)
    written = _shards(tmp_path)
    assert cold == plain and written
    computed = []
    original = isolation.truth
    monkeypatch.setattr(isolation, "truth", lambda *a: computed.append(a) or original(*a))
    warm = _dicts(ENTRIES, cache=tmp_path)
    assert warm == plain
    assert computed == []  # every truth came from the cache (certificates recompute theirs beside it)
    assert any(p.get("certificate") for r in warm for p in r["points"])  # and some points were certified
    assert _shards(tmp_path) == written  # nothing new to add, nothing rewritten


def test_forked_workers_add_to_the_cache_and_a_new_backend_starts_afresh(tmp_path):
    run(ENTRIES[:1], falsify=0, workers=2, cache=tmp_path)
    generations = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(generations) == 1 and list(generations[0].glob("*.jsonl"))
    before = _shards(tmp_path)
    with disk_truths(tmp_path, "array_api_strict") as other:
        assert other.folder != generations[0] and other.known == {}
    assert _shards(tmp_path) == before


def test_unreadable_lines_are_skipped(tmp_path, plain):
    _dicts(ENTRIES[:1], cache=tmp_path)
    shard = next(tmp_path.rglob("*.jsonl"))
    lines = shard.read_text().splitlines()
    broken = tmp_path / shard.parent.name / "zz-broken.jsonl"
    record = json.loads(lines[0])
    record["t"][1] = record["t"][0] + 1  # lower above the value: not a truth
    huge, surrogate = json.loads(lines[0]), json.loads(lines[0])
    huge["t"][0] = 10**400  # a JSON integer beyond the floats
    surrogate["t"][4] = "\ud800"  # a lone surrogate: no UTF-8 for results.json
    bad = [lines[0][:40], "not json", json.dumps({"k": 1}), json.dumps(record), json.dumps(huge),
           json.dumps(surrogate), "[" * 100_000 + "]" * 100_000]
    broken.write_text("\n".join(bad) + "\n")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / shard.parent.name / "zz-fifo.jsonl")  # would block a reader for ever
    with disk_truths(tmp_path, "numpy") as cache:
        assert cache.unreadable == len(bad) + hasattr(os, "mkfifo")
    assert _dicts(ENTRIES[:1], cache=tmp_path) == plain[:1]


def test_a_cached_truth_outside_its_quantitys_range_is_computed_again(tmp_path, plain):
    """An edited line with a negative Rényi divergence (a probe's) was read back and gave HOLDS with negative ratios;
    it is ignored like any line that is not a family's truth."""
    _dicts(ENTRIES[:1], cache=tmp_path)
    for shard in tmp_path.rglob("*.jsonl"):
        records = [json.loads(line) for line in shard.read_text().splitlines()]
        for r in records:
            r["t"][:3] = [-5.0, -6.0, -4.0]
        shard.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _dicts(ENTRIES[:1], cache=tmp_path) == plain[:1]


def test_the_caps_are_part_of_the_key(monkeypatch):
    """A truth had under a larger memory cap or a longer deadline may fail under this run's: another generation."""
    base = truth_cache.generation("numpy")
    monkeypatch.setenv("VERIFY_MEMORY_CAP", "200000")
    smaller = truth_cache.generation("numpy")
    monkeypatch.setenv("VERIFY_TRUTH_DEADLINE", "0.5")
    assert len({base, smaller, truth_cache.generation("numpy")}) == 3


def test_a_folder_that_is_not_a_cache_is_refused_and_left_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError, match="not a verify truth cache"):
        check_cache_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(ParameterError, match="not a folder"):
        check_cache_dir(tmp_path / "notes.txt")
    fresh = check_cache_dir(tmp_path / "new" / "cache")
    assert (fresh / MARKER).is_file()


def test_each_flush_writes_a_new_file(tmp_path):
    with disk_truths(tmp_path, "numpy") as cache:
        for i in range(3):
            cache.fresh[("f", "q", (("x", float(i)),))] = [1.0, 1.0, 1.0, "exact", "d", None, None, False, False]
            cache.flush()
    names = [p.name for p in tmp_path.rglob("*.jsonl")]
    assert len(names) == len(set(names)) == 3
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


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
        assert [k[0] for k in cache.fresh] == ["gaussian_triple"]  # the built-in family itself, only


def test_the_cli_takes_a_cache_and_refuses_it_with_dask(tmp_path):
    cmd = [sys.executable, "-m", "verify.cli", "run", "--only", ENTRIES[0], "--falsify", "0", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run([*cmd, "--cache", str(tmp_path / "c")], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "c").rglob("*.jsonl"))
    refused = subprocess.run([*cmd, "--cache", str(tmp_path / "c"), "--executor", "dask"], capture_output=True,
                             text=True, env=env)
    assert refused.returncode == 2 and "local executor" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_a_cache_that_cannot_be_added_to_says_so_once_and_the_run_goes_on(tmp_path):
    cache = truth_cache.TruthCache(tmp_path / "gone")  # as a folder removed or made read-only during the run
    cache.fresh[("f", "q", ())] = [1.0, 1.0, 1.0, "exact", "d", None, None, False, False]
    with pytest.warns(RuntimeWarning, match="cannot add to it"):
        cache.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache.flush()  # said once
    assert cache.fresh and not list(tmp_path.rglob("*"))


def test_a_cache_inside_the_report_folder_is_refused_before_the_run(tmp_path):
    """The report's folder holds the report alone (verify/reporting/build.py): a cache there would make the finished
    report refuse its own destination."""
    from verify.reporting.build import build_report

    for cache in (tmp_path / "out", tmp_path / "out" / "cache"):
        with pytest.raises(ParameterError, match="inside --out"):
            build_report(ENTRIES[:1], tmp_path / "out", cache=cache, falsify=0)
    assert not (tmp_path / "out").exists()
