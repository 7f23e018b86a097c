"""Command line: `verify list | check | run | report | falsify | account | audit | certify | families`."""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import math
import os
import shutil
import signal
import sys
import textwrap
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from verify import exitcodes
from verify._version import __version__
from verify.errors import ParameterError, PluginError, UnknownIdError, VerifyError, did_you_mean
from verify.executors import EXECUTORS, check_scheduler
from verify.results import Verdict, params_text
from verify.stopping import Interrupted, stop_on_signals

# The parser imports neither the catalog nor the runner (SymPy, SciPy), so `verify --help` starts fast. These copy
# verify.runner.FALSIFY_EXAMPLES and verify.testing.falsify's MIN_CHECKED and SIDES (tests/test_startup.py keeps them
# equal).
FALSIFY_EXAMPLES = 100
MIN_CHECKED = 10
SIDES = ("upper", "lower", "exact")
# commands that read no family: installed plugins are not loaded
NO_FAMILIES = frozenset({"list", "conventions", "account", "cache", "audit"})


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected name=value, got '{text}'")
    try:  # an integer literal stays an int, so that one a float cannot hold (2**53 + 1) is refused, not rounded
        return name.strip(), (int(value) if value.strip().lstrip("+-").isdigit() else float(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"parameter {name} has a non-numeric value '{value}'") from None


def _bounded(kind: Callable[[str], float], what: str, low: float, strict: bool = False) -> Callable[[str], float]:
    """An argparse type: `kind(text)`, finite and >= low (> low if strict), else a one-line usage error."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got '{text}'") from None
        if not math.isfinite(value) or value < low or (strict and value == low):
            raise argparse.ArgumentTypeError(f"{what} must be {'>' if strict else '>='} {low:g}, got '{text}'")
        return value
    return parse


_WORKERS = _bounded(int, "--workers", 1)
_FALSIFY = _bounded(int, "--falsify", 0)
_SEED = _bounded(int, "--seed", 0)


def _scheduler(text: str) -> str:
    try:
        check_scheduler(text)
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--scheduler ")) from None
    return text


def _usable_path(text: str) -> str:
    """An argparse type: a path the system can look up (absent is fine; empty, a name too long or a loop of links is
    not)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file")
    try:
        os.lstat(text)
    except (FileNotFoundError, NotADirectoryError):  # absent, or under a file: the commands say which
        pass
    except (OSError, ValueError) as err:  # ENAMETOOLONG, ELOOP, EACCES on the way, a NUL byte
        raise argparse.ArgumentTypeError(f"cannot use {text!r}: {getattr(err, 'strerror', None) or err}") from None
    return text


def _print_json(obj: object) -> None:
    """Strict JSON on stdout: non-finite floats as the strings "Infinity", "-Infinity", "NaN", as in results.json."""
    from verify.reporting.results_json import json_safe

    print(json.dumps(json_safe(obj), indent=2, allow_nan=False))


class _UsageError(VerifyError):
    """A command line argparse refuses: one line (exit 2), not the usage text."""


_GIVEN = "_verify_given"  # the options (and NAME=... keys) given so far in one parse: a repeat is refused


def keyed(action: argparse.Action) -> bool:
    """A repeatable NAME=VALUE option (-p, --fix, --bind, --box; its metavar says so): each NAME at most once."""
    return isinstance(action, argparse._AppendAction) and "=" in str(action.metavar or "")


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _given_once(action: argparse.Action, namespace: argparse.Namespace, values: object) -> None:
    """Refuse a second value of a single-valued option, or of one NAME of a NAME=VALUE option (argparse kept the
    last one silently: a repeated --fix delta=... searched at the second value only)."""
    key, value = None, values
    if keyed(action):
        key, value = values if isinstance(values, tuple) else str(values).partition("=")[::2]
        key = str(key).strip()
    given = vars(namespace).setdefault(_GIVEN, {})
    if (action.dest, key) in given:
        what = "given twice" if key is None else f"{key} given twice"
        raise argparse.ArgumentError(action, f"{what} ({_short(given[action.dest, key])}, then {_short(value)}); "
                                             f"give {'it' if key is None else 'each name'} once")
    given[action.dest, key] = value


class _StoreOnce(argparse._StoreAction):
    """A single-valued option, given at most once."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        if self.option_strings:
            _given_once(self, namespace, values)
        super().__call__(parser, namespace, values, option_string)


class _AppendOnce(argparse._AppendAction):
    """A repeatable option; one of NAME=VALUE pairs (`keyed`) takes each NAME once."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        if keyed(self):
            _given_once(self, namespace, values)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        for name in (None, "store"):
            self.register("action", name, _StoreOnce)
        self.register("action", "append", _AppendOnce)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        vars(namespace).pop(_GIVEN, None)  # a subcommand's parse ends before its values join the command's
        return namespace, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


VERDICT_COLOURS = {"HOLDS": "32", "VIOLATED": "31", "INCONCLUSIVE": "33"}  # ANSI green, red, yellow


def colour_enabled(stream: TextIO) -> bool:
    """Whether verdicts are coloured on `stream`: never with NO_COLOR set and not empty (https://no-color.org),
    always with FORCE_COLOR set and neither empty nor 0, else where the stream is a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def _coloured(text: str, stream: TextIO | None = None) -> str:
    """`text` in its verdict's colour (the first word decides: "HOLDS (vacuous)" is green) where `stream` (stdout)
    takes colour; as it is otherwise."""
    code = VERDICT_COLOURS.get(text.split(" ", 1)[0])
    if code is None or not colour_enabled(sys.stdout if stream is None else stream):
        return text
    return f"\033[{code}m{text}\033[0m"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _width() -> int:
    """The columns a line may take: the terminal's width less one ($COLUMNS, else 100 when not a terminal)."""
    return max(40, shutil.get_terminal_size((100, 24)).columns - 1)


def _wrapped(text: str) -> str:
    """`text` with each line wrapped to the terminal's width (100 columns when not a terminal), continuation lines
    indented under the line's own indentation; words longer than a line (an id, a formula) are not broken."""
    width = _width()
    out = []
    for line in text.split("\n"):
        indent = " " * (len(line) - len(line.lstrip(" ")))
        out.append(textwrap.fill(line, width, subsequent_indent=indent + "    ", break_long_words=False,
                                 break_on_hyphens=False) if len(line) > width else line)
    return "\n".join(out)


def cmd_list(args: argparse.Namespace) -> int:
    from verify.catalog_index import entries, entry_text, no_match

    listed = None if args.json or args.papers else entries()
    if listed is not None:  # the shipped listing matches these sources: no SymPy, no catalog build
        chosen = [e for e in listed if not args.only or any(e["id"] == s or e["id"].startswith(s + ".")
                                                            for s in args.only)]
        if not chosen:
            known = [e["id"] for e in listed] + sorted({e["id"].split(".")[0] for e in listed})
            raise UnknownIdError(no_match(args.only, known))
        print(_wrapped("\n".join(e["text"] for e in chosen)))
        return 0
    from verify.catalog import select

    theorems = select(args.only or args.papers)
    if args.json:
        from verify.reporting.results_json import theorem_summary

        print(json.dumps([theorem_summary(t) for t in theorems], indent=2))
        return 0
    print(_wrapped("\n".join(entry_text(t) for t in theorems)))
    return 0


def cmd_certify(args: argparse.Namespace) -> int:
    """`verify certify CLAIM_ID`, `verify certify --lhs .. --rhs .. --box n=lo:hi ..`, `verify certify --list`."""
    import sympy as sp

    from verify.certify import (
        CERTIFIED,
        CLAIMS,
        COUNTEREXAMPLE,
        INCONCLUSIVE,
        _known_symbols,
        _normalize_relation,
        certify,
        parse_box,
        run_claim,
    )
    from verify.latex_input import parse_latex_expression, reading
    from verify.parsing import parse_expression

    readings: dict[str, dict[str, str]] = {}
    if args.list and args.json:
        _print_json([{"id": c.id, "description": c.description, "lhs": sp.sstr(c.lhs), "relation": c.relation,
                      "rhs": sp.sstr(c.rhs), "box": {k: list(v) for k, v in c.box.items()},
                      "assumptions": None if c.assumptions is None else sp.sstr(c.assumptions),
                      "expected": c.expected, "parts": list(c.parts)} for c in CLAIMS.values()])
        return 0
    if args.list:
        for c in CLAIMS.values():
            print(_wrapped(f"{c.id}  (expected {c.expected})\n  {c.description}\n  {sp.sstr(c.lhs)} {c.relation} "
                           f"{sp.sstr(c.rhs)}" + (f"\n  assuming {sp.sstr(c.assumptions)}"
                                                  if c.assumptions is not None else "") + "\n"))
        return 0
    for option, value in (("--budget", args.budget), ("--min-width", args.min_width)):
        if not (math.isfinite(value) and value > 0):  # nan and inf included: a budget is a finite time
            raise ParameterError(f"{option} must be a finite number > 0, got {value!r}")
    if args.max_boxes <= 0:
        raise ParameterError(f"--max-boxes must be > 0, got {args.max_boxes}")
    if not 16 <= args.prec <= 4096:
        raise ParameterError(f"--prec must lie in [16, 4096], got {args.prec}")
    limits = {"max_boxes": args.max_boxes, "budget_s": args.budget, "min_width": args.min_width, "prec": args.prec}
    try:
        if args.claim:
            if args.lhs or args.rhs or args.box or args.assume:
                raise ParameterError("give either a claim id or --lhs/--rhs/--box, not both")
            cert = run_claim(args.claim, **limits)
        else:
            if not (args.lhs and args.rhs):
                raise ParameterError("give a claim id (see --list) or --lhs, --rhs and --box")
            box = parse_box(args.box)
            known = _known_symbols()
            syms = {name: known.get(name, sp.Symbol(name, real=True)) for name in box}
            read = parse_latex_expression if args.latex else parse_expression
            lhs = read(args.lhs, syms, what="--lhs")
            rhs = read(args.rhs, syms, what="--rhs")
            cond = read(args.assume, syms, condition=True, what="--assume") if args.assume else None
            readings = {k: reading(e).to_dict() for k, e in (("lhs", lhs), ("rhs", rhs), ("assume", cond))
                        if args.latex and e is not None}
            cert = certify(lhs, rhs, box, _normalize_relation(args.relation), assumptions=cond, **limits)
    except ValueError as err:  # a malformed number in the options: bad input, not a bug
        raise ParameterError(str(err)) from None
    if args.json:
        from verify.reporting.results_json import json_safe  # the results files' strict-JSON convention

        print(json.dumps(json_safe({**cert.to_dict(), **({"reading": readings} if readings else {})}), indent=2,
                         allow_nan=False))
    else:
        _print_reading(readings)
        print(_wrapped(cert.summary()))
    return {CERTIFIED: exitcodes.OK, COUNTEREXAMPLE: exitcodes.UNEXPECTED, INCONCLUSIVE: exitcodes.INCONCLUSIVE}[
        cert.status]


_VERDICT_EXIT = {Verdict.HOLDS: exitcodes.OK, Verdict.VIOLATED: exitcodes.UNEXPECTED,
                 Verdict.INCONCLUSIVE: exitcodes.INCONCLUSIVE}


def cmd_check(args: argparse.Namespace) -> int:
    from verify.api import check, first_grid_point

    given = dict(args.param)
    at_grid = not given  # no -p: the entry's grid gives the point, as its --param help says
    if at_grid:
        given = first_grid_point(args.id, args.family)
    result = check(args.id, family=args.family, recheck_s=args.recheck, **given)
    cert = result.certificate
    uncertified = (result.verdict is Verdict.INCONCLUSIVE and cert is not None
                   and cert.filter_verdict is Verdict.VIOLATED)  # looks violated in floats, not proven
    if args.json:
        _print_json({**result.to_dict(), "uncertified": uncertified})
        return _VERDICT_EXIT[result.verdict]
    t = result.truth
    lines = [f"{result.theorem} on {result.family}", ("  at the first point of its grid (-p NAME=VALUE gives another): "
                                                       if at_grid else "  at ") + params_text(result.params),
             f"  bound = {result.bound:.10g}",
             f"  truth = {t.value:.10g}  [{t.lower:.10g}, {t.upper:.10g}] ({t.method.value}: {t.detail})"]
    if cert is not None:
        if cert.truth_lower is not None:
            lines.append(f"  certificate: truth in [{cert.truth_lower}, {cert.truth_upper}], bound in "
                         f"[{cert.bound_lower}, {cert.bound_upper}] ({cert.method}, {cert.precision_bits} bits)")
        if uncertified:
            lines.append(f"  looks violated in floating point, uncertified: {cert.reason or 'the enclosures overlap'}")
        elif cert.reason:
            lines.append(f"  not certified: {cert.reason}" if result.verdict is not Verdict.VIOLATED
                         else f"  note: {cert.reason}")
    print(_wrapped("\n".join(lines)))
    print(f"  verdict: {_coloured(result.verdict.value)}   ratio bound/truth = {_fmt(result.ratio)}   "
          f"margin = {result.margin:.4g}")
    return _VERDICT_EXIT[result.verdict]


def cmd_run(args: argparse.Namespace) -> int:
    from verify.reporting.columns import dump_results
    from verify.reporting.results_json import results_document
    from verify.runner import check_results_path, run, write_results

    _hypothesis_cache()

    from verify.progress import ProgressBar

    to_stdout = args.json == "-"  # the results document is stdout, pure JSON; the table goes to stderr
    if args.json and not to_stdout:  # before the run: a refused or unwritable destination costs nothing
        check_results_path(Path(args.json))
    bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
    try:
        outcome = run(args.only or args.papers, lambda t, i, total: bar("checks", t.id, i, total), seed=args.seed,
                      falsify=args.falsify, workers=args.workers, executor=args.executor, scheduler=args.scheduler,
                      cache=args.cache, cache_size=args.cache_size)
    finally:
        bar.close()
    table = sys.stderr if to_stdout else sys.stdout
    _run_table(outcome.results, table)
    bad = outcome.unexpected
    print(f"\n{len(outcome.results)} checks in {outcome.seconds:.1f} s; "
          f"{len(outcome.results) - len(bad)} as expected, {len(bad)} unexpected", file=table)
    if to_stdout:
        sys.stdout.write(dump_results(results_document(outcome)))
    elif args.json:
        path = write_results(Path(args.json), dump_results(results_document(outcome)))
        print(f"wrote {path}")
    return 1 if bad else 0


def _run_table(results: Sequence, out: TextIO) -> None:
    """`verify run`'s table, two lines an entry so that it fits 100 columns: the theorem id (and UNEXPECTED where
    the verdict is not the expected one), then its family under it with the verdict, the counts and bound/truth;
    a counterexample's line after a VIOLATED one."""
    family_width = max([len(r.family) + 2 for r in results] + [8])
    print(f"theorem\n{'  family':<{family_width}} {'verdict':<15} {'expected':<12} {'points':>6} {'skip':>5} "
          f"{'ratio min':>10} {'ratio max':>10}", file=out)
    for r in results:
        ratios = r.ratios
        shown = r.shown_verdict
        print(r.theorem + ("" if r.as_expected else "  <-- UNEXPECTED"), file=out)
        print(f"{'  ' + r.family:<{family_width}} {_coloured(shown, out)}{' ' * max(0, 15 - len(shown))} "
              f"{r.expected.value:<12} {len(r.points):>6} {r.skipped:>5} "
              f"{_fmt(min(ratios) if ratios else None):>10} {_fmt(max(ratios) if ratios else None):>10}", file=out)
        if r.verdict.value == "VIOLATED" and r.counterexample is not None:
            w = r.counterexample
            print(_wrapped(f"{'':<4}counterexample: {params_text(w.params)}: bound {w.bound:.6g} vs truth "
                           f"{w.truth.value:.6g}"), file=out)


def cmd_report(args: argparse.Namespace) -> int:
    try:
        from verify.progress import ProgressBar
        from verify.reporting.build import build_report
    except ImportError as err:
        print(f"error: `verify report` needs the report extra (pip install 'dp-verify[report]'): {err}",
              file=sys.stderr)
        return 2
    _hypothesis_cache()
    bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
    try:  # a SIGTERM unwinds through build_report, which removes the partial report folder (verify.stopping)
        report = build_report(args.only or args.papers, args.out, seed=args.seed, backend=args.backend, progress=bar,
                              workers=args.workers, falsify=args.falsify, executor=args.executor,
                              scheduler=args.scheduler, single_file=args.single_file, cache=args.cache,
                              cache_size=args.cache_size)
    finally:
        bar.close()
    outcome = report.run
    bad = outcome.unexpected
    for r in bad:
        print(_wrapped(f"UNEXPECTED {r.theorem} on {r.family}: {r.status} (expected {r.expected.value})"))
    print(_wrapped(f"{len(outcome.results)} checks in {outcome.seconds:.1f} s; {len(outcome.results) - len(bad)} "
                   f"as expected, {len(bad)} unexpected ({len(outcome.errors)} with errors)\nwrote "
                   f"{report.path}/index.html, report.md, results.json"
                   + (", report.html (one self-contained file)" if args.single_file else "")))
    return 1 if bad else 0


def _cache_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", metavar="DIR", type=_usable_path,
                   help="keep the computed truths in DIR and reuse them in later runs (keyed by verify's source, its "
                        "numerical dependencies and the backend: never stale; certificates are always recomputed; "
                        "`verify cache clear DIR` empties it)")
    p.add_argument("--cache-size", metavar="SIZE", type=_cache_size, default=None,
                   help="size cap of --cache, e.g. 2GB or 512MiB; past it the least recently used truths are evicted "
                        "(default: $VERIFY_CACHE_SIZE, else 1GiB)")


def _cache_size(text: str) -> int:
    from verify.limits import parse_size

    try:
        return parse_size(text, "--cache-size")
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def cmd_cache(args: argparse.Namespace) -> int:
    from verify.pipeline import truth_cache

    if args.action == "info":
        got = truth_cache.info(args.dir)
        if args.json:
            _print_json(got)
            return exitcodes.OK
        print(f"{got['folder']}: a verify truth cache, format {got['format']}, {truth_cache.human(got['bytes'])} on "
              "disk")
        if got["format"] == 1:
            print(f"  {got['files']} files in {got['generations']} generations, of an earlier verify: not read; "
                  f"`verify cache clear {args.dir}` removes them")
            return exitcodes.OK
        cap = got["size_limit"]
        print(f"  {got['entries']} truths in {len(got['generations'])} generations; database "
              f"{truth_cache.human(got['volume'])} of a cap of {'-' if cap is None else truth_cache.human(cap)}")
        for gen, count in got["generations"].items():
            print(f"    {gen}: {count}" + ("  (this installation's, numpy backend)" if gen == got["current"] else ""))
        return exitcodes.OK
    removed, left = truth_cache.clear(args.dir)
    for path, size in removed:
        print(f"removed {path} ({truth_cache.human(size)})")
    total = sum(size for _, size in removed)
    print(f"cleared {args.dir}: {len(removed)} paths, {truth_cache.human(total)}")
    if left:
        print(f"left {len(left)} files verify did not make: {', '.join(left[:5])}{', ...' if len(left) > 5 else ''}")
    return exitcodes.OK


def _executor_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="where the checks run: local (forked processes, --workers) or dask (a LocalCluster of "
                        "--workers processes, or the scheduler at --scheduler); the results do not depend on it")
    p.add_argument("--scheduler", metavar="ADDRESS", type=_scheduler,
                   help="a running Dask scheduler, e.g. tcp://head:8786")


def _recheck_option(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--recheck", type=_bounded(float, "--recheck", 0, strict=True), default=None, metavar="SECONDS",
                   help="wall-clock cap on a point's rigorous re-check (Arb enclosures of the bound and the truth; "
                        f"default {default}); in a search, one that runs out tries simpler points near it whose "
                        "enclosures are cheap")


def _falsify_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--falsify", type=_FALSIFY, default=FALSIFY_EXAMPLES, metavar="N",
                   help=f"falsifier points per entry beside the grid (a tenth on expensive families, none on "
                        f"Monte-Carlo ones; 0: grid only; "
                        f"default {FALSIFY_EXAMPLES})")


def cmd_falsify(args: argparse.Namespace) -> int:
    from verify.families import family
    from verify.testing.falsify import falsify_outcome, require_checked

    _hypothesis_cache()
    needed = min(MIN_CHECKED, args.max_examples) if args.min_checked is None else args.min_checked
    if needed > args.max_examples:
        raise ParameterError(f"--min-checked {needed} exceeds --max-examples {args.max_examples}")
    fixed = dict(args.fix)
    known = {p.name for p in family(args.family).parameters}
    unknown = sorted(set(fixed) - known)
    if unknown:
        hints = "".join(did_you_mean(u, known) for u in unknown)
        raise ParameterError(f"--fix pins a parameter of family {args.family}; {', '.join(unknown)} is not "
                             f"one{hints} (its parameters: {', '.join(sorted(known))})")
    _check_inputs([] if args.latex else args.assume, fixed)
    from verify.progress import ProgressBar

    bar = ProgressBar(enabled=not args.json and sys.stderr.isatty(), budget_s=args.budget)  # it bounds the search
    try:
        outcome = falsify_outcome(args.bound, args.family, args.side, args.assume, budget_s=args.budget,
                                  recheck_s=args.recheck,
                                  seed=args.seed, quantity=args.quantity, bind=dict(args.bind), defaults=fixed,
                                  max_examples=args.max_examples, conventions=args.convention, symbols=args.symbol,
                                  integers=args.integer, progress=lambda label, i, n: bar("search", label, i, n),
                                  region=not args.whole_domain, latex=args.latex)
    finally:
        bar.close()
    if args.json:
        _print_json(outcome.to_dict())
    else:
        _print_reading(outcome.reading)
    if not args.json and outcome.counterexample is None and outcome.suspects:  # the evidence, before the verdict
        print(_wrapped(outcome.suspects_text()))
    require_checked(outcome, needed)
    if outcome.counterexample is None:
        if not args.json:
            print(_wrapped(f"no counterexample in {outcome.summary()} with seed {args.seed} on {args.family}"))
            if outcome.commonest_failure:
                print(_wrapped("  points not checked, most often: {} (x{})".format(*outcome.commonest_failure)))
        return exitcodes.OK
    if not args.json:
        print(_wrapped(str(outcome.counterexample)))
        print(_wrapped(_floored_note(outcome.counterexample, args.family, args.quantity)), end="")
    return exitcodes.UNEXPECTED


def _print_reading(read: Mapping[str, object]) -> None:
    """What --latex input was read as: a line per text, SymPy and LaTeX (verify.latex_input.Reading)."""
    for key, value in read.items():
        for k, r in enumerate(value if isinstance(value, list) else [value]):
            label = f"{key} {k + 1}" if isinstance(value, list) else key
            print(_wrapped(f"read {label} as {r['sympy']}\n  LaTeX: {r['latex']}"))


def _check_inputs(assume: Sequence[str], fixed: dict[str, float]) -> None:
    """Bad input that a search would only meet as failed points (exit 3), refused first in one line naming it: an
    --assume that is no condition (`alpha`: each point's check of it failed), a --fix value that is not finite or
    lies below the normal float range (2e-308: rounded where a truth takes it, so no point had it)."""
    from verify.parsing import check_condition_syntax

    for text in assume:
        check_condition_syntax(text, f"--assume {text!r}")
    for name, value in fixed.items():
        try:
            as_float = float(value)
        except OverflowError:  # an integer literal of 400 digits
            as_float = math.inf
        shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:21]}..."
        if not math.isfinite(as_float) or 0 < abs(as_float) < sys.float_info.min or as_float != value:
            raise ParameterError(f"--fix {name}={shown}: not a number a float holds exactly (0, or a magnitude "
                                 f"from {sys.float_info.min:.4g} to {sys.float_info.max:.4g}): a family's truth takes "
                                 "its parameters as floats")


def _floored_note(found, family_name: str, quantity: str | None) -> str:
    """A line for a counterexample whose truth is eps(delta) floored at 0 (`dp_epsilon`) against a negative bound:
    the signed eps(delta) (`dp_epsilon_signed`) may lie below the bound."""
    from verify.families import family

    quantities = [q.value for q in family(family_name).truths]
    if quantity is None and "renyi" not in quantities and len(quantities) == 1:
        quantity = quantities[0]
    if quantity != "dp_epsilon" or not (found.truth.value == 0 and found.bound < 0):
        return ""
    signed = "dp_epsilon_signed" in quantities
    advice = ("--quantity dp_epsilon_signed compares the bound with the signed eps(delta)" if signed
              else "a negative bound on it is always violated")
    return ("  note: dp_epsilon is floored at 0, the least eps >= 0 with (eps, delta)-DP (0 wherever "
            f"delta(0) <= delta); {advice}\n")


def _phase(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        q, sigma, steps = (float(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected Q,SIGMA,T (e.g. 0.01,1.0,1000), got '{text}'") from None
    return q, sigma, steps


def _event(text: str):
    from verify.accountant_events import parse_event

    try:
        return parse_event(text)
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def cmd_account(args: argparse.Namespace) -> int:
    from verify import accountant

    derived = _epoch_inputs(args)
    if args.calibrate or args.target_eps is not None:
        return _calibrate(args)
    single = (args.q, args.sigma, args.steps)
    if args.phase and any(v is not None for v in single):
        raise ParameterError("give one phase by --q/--sigma/--steps or a schedule by --phase, not both")
    if args.event and args.compare:
        raise ParameterError("--compare runs other accountants on Poisson phases only; drop --event or --compare")
    if args.event and all(v is None for v in single):
        single = None  # the schedule is the events (and any --phase)
    elif not args.phase and any(v is None for v in single):
        raise ParameterError("give --q, --sigma and --steps (or one --phase Q,SIGMA,T per phase, or --event)")
    if args.tol is not None and args.abs_tol is not None:
        raise ParameterError("give --tol (relative) or --abs-tol (absolute), not both")
    phases = args.phase or ([single] if single else [])
    tol, relative = (args.abs_tol, False) if args.abs_tol is not None else (args.tol, True)
    if args.curve or args.every is not None or args.per_epoch or args.plot or args.at:
        if args.event:
            raise ParameterError("--curve, --every and --per-epoch take Poisson phases (q, sigma, steps) only; drop "
                                 "--event")
        return _account_curve(args, [accountant.Phase(*p) for p in phases], derived)
    if args.delta is None and args.eps is None:
        raise ParameterError("give --delta (to answer eps(delta)) or --eps (to answer delta(eps)), or --curve")
    solve = accountant.epsilon if args.delta is not None else accountant.delta
    given = args.delta if args.delta is not None else args.eps
    result = _account_query(args, solve, given, [accountant.Phase(*p) for p in phases] + args.event, tol,
                            relative)
    if result is None:  # refused, its JSON printed
        return exitcodes.INCONCLUSIVE
    comparisons = []
    if args.compare:
        from verify.accountant_compare import compare

        comparisons = compare(result)
    if args.json:
        from verify.reporting.accountant_json import account_dict

        _print_json(_with_derived(account_dict(result, comparisons), derived))
        return exitcodes.OK
    print(_wrapped(str(result)))
    if comparisons:
        print(_wrapped(f"  other accountants against [{result.lower:.6g}, {result.upper:.6g}]: conservative above, "
                       "within, UNDER-REPORTS below"))
    if derived:
        print(_wrapped(f"  {derived['derivation']}"))
    for c in comparisons:
        print(_wrapped(f"  {c}"))
    return exitcodes.OK


def _epoch_inputs(args: argparse.Namespace) -> dict | None:
    """--epochs E --batch-size B --dataset-size N (with --sigma) in place of --q and --steps: sets them (q = B/N,
    T = ceil(E N / B)) and returns what was derived, for the output; None where none of the three is given."""
    from verify import accountant

    given = {"--epochs": args.epochs, "--batch-size": args.batch_size, "--dataset-size": args.dataset_size}
    if all(v is None for v in given.values()):
        return None
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise ParameterError("epoch inputs need --epochs, --batch-size and --dataset-size together "
                             f"({', '.join(missing)} missing)")
    clash = [k for k, v in {"--q": args.q, "--steps": args.steps, "--phase": args.phase,
                           "--calibrate": args.calibrate}.items() if v]
    if clash:
        raise ParameterError(f"--epochs/--batch-size/--dataset-size derive q and T: give them instead of "
                             f"{', '.join(clash)}")
    if args.sigma is None:
        raise ParameterError("epoch inputs need --sigma (the noise multiplier) too")
    phase = accountant.Phase.from_epochs(args.epochs, args.batch_size, args.dataset_size, args.sigma)
    args.q, args.steps = phase.q, phase.steps
    e, b, n = args.epochs, int(args.batch_size), int(args.dataset_size)
    return {"epochs": e, "batch_size": b, "dataset_size": n, "q": phase.q, "steps": phase.steps,
            "derivation": f"derived: E = {e:g} epochs, N = {n}, B = {b}: q = B/N = {phase.q:.6g}, "
                          f"T = ceil(E N / B) = {phase.steps}"}


def _with_derived(out: dict, derived: dict | None) -> dict:
    if derived:
        out["derived"] = derived
    return out


def _account_curve(args: argparse.Namespace, phases: list, derived: dict | None) -> int:
    """`verify account --curve [epsilon|delta] [--at ...] [--plot FILE]` and `--every N` / `--per-epoch`."""
    from verify import accountant_curve

    if args.tol is not None or args.abs_tol is not None:
        raise ParameterError("a curve or per-step account chooses its own loss grid: --tol/--abs-tol answer one "
                             "query")
    if args.every is not None or args.per_epoch:
        if args.every is not None and args.per_epoch:
            raise ParameterError("give --every N or --per-epoch, not both")
        if args.curve or args.plot or args.at or args.compare or args.delta is None:
            raise ParameterError("per-step accounting takes --delta (and not --curve, --at, --plot, --compare)")
        steps = accountant_curve.epsilon_per_step(args.delta, phases, every=args.every, per_epoch=args.per_epoch,
                                                  neighbouring=args.neighbouring)
        if args.json:
            from verify.reporting.accountant_curve import steps_dict

            _print_json(_with_derived(steps_dict(steps), derived))
            return exitcodes.OK
        print(_wrapped(str(steps)))
        if derived:
            print(_wrapped(f"  {derived['derivation']}"))
        return exitcodes.OK
    if not args.curve:
        raise ParameterError("--at and --plot belong to a curve: give --curve")
    if args.delta is not None or args.eps is not None:
        raise ParameterError("a curve takes its points by --at (deltas for --curve epsilon, eps values for --curve "
                             "delta), not --delta/--eps")
    from verify.reporting.accountant_curve import check_plot_path, curve_dict, curve_figure, write_plot

    if args.plot:
        check_plot_path(args.plot)  # before the work
    make = accountant_curve.epsilon_curve if args.curve == "epsilon" else accountant_curve.delta_curve
    curve = make(args.at, phases, neighbouring=args.neighbouring)
    peers = accountant_curve.peer_curves(curve) if args.compare or args.plot else ()
    if args.plot:
        write_plot(curve_figure(curve, peers), args.plot)
    if args.json:
        _print_json(_with_derived(curve_dict(curve, peers), derived))
        return exitcodes.OK
    print(_wrapped(str(curve)))
    if derived:
        print(_wrapped(f"  {derived['derivation']}"))
    for peer in peers:
        print(_wrapped(f"  {peer}"))
    if args.plot:
        print(f"plot written to {args.plot}")
    return exitcodes.OK


def _values_list(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got '{text}'")
    return values


def _account_query(args: argparse.Namespace, solve, given: float, phases: list, tol: float | None,
                   relative: bool):
    """The accountant's answer, with a progress bar on a terminal (stderr) while it refines; a refusal (an explicit
    width not met) with --json prints its JSON (the tightest bracket and the reason) and gives None."""
    from verify import accountant
    from verify.progress import ProgressBar

    budget = args.time_budget
    bar = ProgressBar(budget_s=accountant.DEFAULT_TIME_BUDGET if budget is None and tol is None else budget)

    def progress(width: float, target: float) -> None:
        bar("account", f"width {width:.3g}, aiming at {target:.3g}", 0, 1)

    try:
        bar("account", "first grid", 0, 1)
        return solve(given, phases, tol=tol, relative=relative, neighbouring=args.neighbouring, time_budget=budget,
                     progress=progress)
    except accountant.AccountantRefusal as err:
        if not args.json:
            raise
        from verify.reporting.accountant_json import refusal_dict

        bar.close()
        _print_json(refusal_dict("epsilon" if args.delta is not None else "delta",
                                 {"delta": given} if args.delta is not None else {"epsilon": given}, err))
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return None
    finally:
        bar.close()


def _calibrate(args: argparse.Namespace) -> int:
    from verify import accountant_calibrate

    if not args.calibrate or args.target_eps is None or args.delta is None:
        raise ParameterError("a calibration needs --calibrate sigma|steps|q, --target-eps and --delta")
    if args.phase or args.event or args.compare or args.abs_tol is not None:
        raise ParameterError("a calibration takes one phase by --q/--sigma/--steps (not --phase, --event, --compare, "
                             "--abs-tol)")
    steps = args.steps
    if steps is not None and float(steps).is_integer():
        steps = int(steps)
    result = accountant_calibrate.calibrate(
        args.calibrate, args.target_eps, args.delta, q=args.q, sigma=args.sigma, steps=steps,
        tol=accountant_calibrate.CALIBRATION_TOL if args.tol is None else args.tol, neighbouring=args.neighbouring)
    if args.json:
        from verify.reporting.accountant_json import calibration_dict

        _print_json(calibration_dict(result))
    else:
        print(_wrapped(str(result)))
    return exitcodes.OK


AUDIT_NAMES = ("mechanism", "d", "d_prime")  # what an audited module exports (or AUDIT_SCORES)
AUDIT_SCORES = ("in_scores", "out_scores")


def cmd_audit(args: argparse.Namespace) -> int:
    """`verify audit FILE_OR_MODULE`: exit 0 consistent (or a bound without a claim), 1 refuted, 3 when the claim is
    at or above what these samples could show."""
    from verify.audit import audit, audit_scores
    from verify.families import import_plugin
    from verify.limits import deadline

    if args.plot is not None and os.path.lexists(args.plot):
        raise ParameterError(f"--plot {args.plot} exists: the figure is written to a new file only")
    module = import_plugin(args.source)
    if hasattr(module, "train"):
        return _audit_dpsgd(module, args)
    if args.plot is not None and not hasattr(module, "in_scores"):
        raise ParameterError("--plot draws a DP-SGD audit (a file exporting train) or scores (in_scores, out_scores)")
    if args.plot is not None and args.claim_eps is None:
        raise ParameterError("--plot on scores needs --claim-eps (the claimed curve it draws)")
    has = {name: hasattr(module, name) for name in AUDIT_NAMES + AUDIT_SCORES}
    scores = has["in_scores"] or has["out_scores"]
    if scores == has["mechanism"]:
        raise PluginError(f"'{args.source}' must export either mechanism, d and d_prime, or in_scores and out_scores"
                          + (" (not both)" if scores else ""))
    needed = AUDIT_SCORES if scores else AUDIT_NAMES
    missing = [name for name in needed if not has[name]]
    if missing:
        raise PluginError(f"'{args.source}' does not export {', '.join(missing)}")
    if not scores and not callable(module.mechanism):
        raise PluginError(f"'{args.source}': mechanism must be callable as mechanism(data, rng)")
    if args.assume and scores:
        raise ParameterError("--assume applies to a mechanism's outputs, not to scores")
    with deadline(math.inf if args.budget is None else args.budget, "the audit"):
        if scores:
            result = audit_scores(module.in_scores, module.out_scores, delta=args.delta, confidence=args.confidence,
                                  seed=args.seed, claim_epsilon=args.claim_eps)
        else:
            result = audit(module.mechanism, module.d, module.d_prime, samples=args.samples, delta=args.delta,
                           confidence=args.confidence, claim_epsilon=args.claim_eps, seed=args.seed,
                           assume=args.assume)
    if args.json:
        from verify.reporting.audit_json import audit_dict

        _print_json(audit_dict(result, "scores" if scores else args.source))
    else:
        _print_audit(result)
    if args.plot is not None:
        _audit_plot(args.plot, module.in_scores, module.out_scores, result.test.direction, result.confidence,
                    epsilon=args.claim_eps, delta=result.delta, json=args.json, title=os.path.basename(args.source))
    if result.refutes:
        return exitcodes.UNEXPECTED
    return exitcodes.OK if result.decidable else exitcodes.INCONCLUSIVE


AUDIT_TRAIN = ("train", "dataset", "canary", "claim")  # what an audited DP-SGD module exports (score optional)


def _audit_dpsgd(module, args: argparse.Namespace) -> int:
    """`verify audit` on a module exporting train, dataset, canary and claim = (q, sigma, steps): --samples runs per
    dataset; exit 0 consistent, 1 refuted, 3 when the runs could not have shown more than the claim."""
    from verify.audit import audit_dpsgd
    from verify.audit.dpsgd import gaussian_claim_mu
    from verify.limits import deadline

    missing = [name for name in AUDIT_TRAIN if not hasattr(module, name)]
    if missing:
        raise PluginError(f"'{args.source}' exports train but not {', '.join(missing)}")
    if args.claim_eps is not None:
        raise ParameterError("a DP-SGD file states its claim as claim = (q, sigma, steps): drop --claim-eps")
    with deadline(math.inf if args.budget is None else args.budget, "the audit"):
        result = audit_dpsgd(module.train, module.dataset, module.canary, runs=args.samples, claim=module.claim,
                             delta=args.delta, confidence=args.confidence, seed=args.seed,
                             score=getattr(module, "score", None), assume=args.assume,
                             neighbouring=getattr(module, "neighbouring", "add_remove"))
    if args.json:
        from verify.reporting.audit_json import audit_dict

        out = audit_dict(result.audit, args.source)
        q, sigma, steps = result.claim
        out.update(verdict=result.verdict, refutes=result.refutes, runs=result.runs,
                   claim={"q": q, "sigma": sigma, "steps": steps, "epsilon": {"lower": result.claim_lower,
                                                                              "upper": result.claim_upper}})
        _print_json(out)
    else:
        print(_wrapped(str(result)))
        _print_audit(result.audit, claim=False)
    if args.plot is not None:
        mu = gaussian_claim_mu(result.claim)
        _audit_plot(args.plot, result.in_scores, result.out_scores, result.audit.test.direction, args.confidence,
                    mu=mu, epsilon=None if mu is not None else result.claim_upper, delta=args.delta, json=args.json,
                    title=f"{os.path.basename(args.source)}: {result.verdict}")
    if result.refutes:
        return exitcodes.UNEXPECTED
    return exitcodes.OK if result.verdict == "CONSISTENT" else exitcodes.INCONCLUSIVE


def _audit_plot(path: str, in_scores, out_scores, direction: int, confidence: float, *, mu: float | None = None,
                epsilon: float | None = None, delta: float = 0.0, title: str = "", json: bool = False) -> None:
    """Draw the audit's figure to a new PNG at `path` and name it (on stderr under --json, whose stdout is JSON)."""
    from verify.reporting.audit_figure import audit_figure, save_figure

    save_figure(audit_figure(in_scores, out_scores, direction=direction, confidence=confidence, mu=mu,
                             epsilon=epsilon, delta=delta, title=title), path)
    print(f"figure: {path}", file=sys.stderr if json else sys.stdout)


def _print_audit(result, claim: bool = True) -> None:
    if claim:
        print(_wrapped(str(result)))
    c, t = result.counts, result.test
    if t.kind == "threshold":
        side = ">" if t.direction > 0 else "<"
        score = "score" if t.projection is None else "projection of the output"
        print(_wrapped(f"  test: d when the {score} {side} {t.threshold:.6g} (chosen on {c.selection_in} + "
                       f"{c.selection_out} selection samples)"))
        print(_wrapped(f"  evaluation: {c.false_positives} of {c.evaluation_out} d_prime outputs taken for d "
                       f"(rate <= {result.fpr_upper:.3g}), {c.false_negatives} of {c.evaluation_in} d outputs "
                       f"missed (rate <= {result.fnr_upper:.3g})"))
    else:
        low, high = result.sigma_interval
        print(_wrapped(f"  Gaussian: mu >= {result.mu_lower:.6g} from {c.evaluation_in} + {c.evaluation_out} "
                       f"samples; sigma in [{low:.6g}, {high:.6g}] at {result.confidence:.0%}"))
    if result.verdict == "UNDECIDABLE":
        print(_wrapped(f"  these samples could show at most eps >= {result.power:.4g}: the claim is beyond them; "
                       "give more --samples"))


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected name=EXPR, got '{text}'")
    return name.strip(), value.strip()


def _latex_option(p: argparse.ArgumentParser, which: str) -> None:
    p.add_argument("--latex", action="store_true", help=f"read {which} as LaTeX pasted from a paper, e.g. "
                   r"'\frac{\alpha S^2 \eta K}{4 n^2 \sigma^2}' or '\eta\lambda < 1, K \ge 2'; what it was read "
                   "as is printed (and in --json)")


def _plugin_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugin", action="append", default=argparse.SUPPRESS, metavar="MODULE",
                   help="import MODULE (a dotted name, or a path to a .py file) and register the instance families "
                        "it declares, and its THEOREMS as a paper (repeatable)")


def _paper_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", action="append", default=[], metavar="FILE", type=_usable_path,
                   help="a paper file (TOML, README \"Your paper, checked\"): its theorems join the catalog, and "
                        "only they are checked unless --only selects (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="verify", description="Check differential-privacy theorems.")
    parser.add_argument("--version", action="version", version=f"verify {__version__}")
    _plugin_option(parser)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list catalog entries")
    p.add_argument("only", nargs="*", help="ids or paper keys (e.g. chourasia2021)")
    p.add_argument("--json", action="store_true", help="print each entry's full description as JSON")
    _plugin_option(p)
    _paper_option(p)
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("check", help="check one entry at one parameter point")
    p.add_argument("id", help="a catalog id (see `verify list`)")
    p.add_argument("--param", "-p", type=_param, action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the point (repeatable; the entry's grid gives the others' defaults)")
    p.add_argument("--family", help="which family to check on (needed where the entry has several)")
    p.add_argument("--json", action="store_true", help="print the point's result as JSON")
    _recheck_option(p, "20")
    _plugin_option(p)
    _paper_option(p)
    p.set_defaults(fn=cmd_check)

    p = sub.add_parser("run", help="check every entry over its default grid; exit 1 on an unexpected verdict")
    p.add_argument("--only", nargs="+", default=[], help="ids or paper keys (default: every entry)")
    p.add_argument("--json", metavar="PATH", type=_usable_path,
                   help="write the results as JSON; '-' writes them to stdout (the table then goes to stderr)")
    p.add_argument("--seed", type=_SEED, default=0, help="seed of the falsifier (default 0)")
    p.add_argument("--workers", type=_WORKERS, help="processes for the checks (default: one per CPU, up to 4; "
                                                   "the results do not depend on it)")
    _falsify_option(p)
    _executor_options(p)
    _cache_option(p)
    _plugin_option(p)
    _paper_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("report", help="run the checks and write results.json, report.md and index.html with plots; "
                                      "exit 1 on an unexpected verdict")
    p.add_argument("--out", metavar="DIR", type=_usable_path,
                   help="report folder (default: reports/<run-id>, and reports/latest is pointed at it)")
    p.add_argument("--only", nargs="+", default=[], help="ids or paper keys (default: every entry)")
    p.add_argument("--backend", help="array backend of the numerical kernels: numpy, cupy or array_api_strict "
                                     "(default: $VERIFY_BACKEND, else numpy)")
    p.add_argument("--seed", type=_SEED, default=0, help="seed recorded with the run, for reproduction (default 0)")
    p.add_argument("--workers", type=_WORKERS, help="processes for the checks and figures (default: up to 4)")
    _falsify_option(p)
    _executor_options(p)
    p.add_argument("--single-file", action="store_true", help="also write report.html: the whole report in one "
                   "self-contained file (styles, fonts and plots inlined) to send or archive")
    _cache_option(p)
    _plugin_option(p)
    _paper_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_report)

    p = sub.add_parser("cache", help="what a --cache folder holds (info), or remove it (clear)")
    p.add_argument("action", choices=("info", "clear"), help="info: its size, truths, generations and size cap; "
                   "clear: remove the files verify made there (the database and the marker), nothing else")
    p.add_argument("dir", metavar="DIR", type=_usable_path, help="the folder given to --cache")
    p.add_argument("--json", action="store_true", help="info: print it as JSON")
    p.set_defaults(fn=cmd_cache)

    p = sub.add_parser("falsify", help="search a family for a counterexample to a bound; exit 1 if one is found")
    p.add_argument("bound", help="SymPy expression over the family's parameters, e.g. "
                                 "'alpha*S**2*eta*K/(4*n**2*sigma**2)'")
    p.add_argument("--family", required=True, help="instance family (see `verify families`)")
    p.add_argument("--side", choices=SIDES, default="upper",
                   help="what the bound claims: an upper bound on the truth (default), a lower bound, or equality")
    p.add_argument("--assume", action="append", default=[], metavar="COND",
                   help="extra assumption restricting the search, e.g. 'eta < 1/lam' (repeatable)")
    p.add_argument("--bind", action="append", default=[], type=_assignment, metavar="NAME=EXPR",
                   help="define a symbol of the bound in terms of the family's parameters, or as the family's "
                        "quantity at other arguments, e.g. 'R=renyi(alpha=a)' (repeatable)")
    p.add_argument("--symbol", action="append", default=[], metavar="DECL",
                   help="declare a variable of the bound with its domain, drawn like a parameter: 'eps0 > 0' for a "
                        "statement 'for every eps0 > 0' (repeatable)")
    p.add_argument("--integer", action="append", default=[], metavar="NAME",
                   help="a parameter or declared symbol that takes integer values only, e.g. an integer order "
                        "alpha; drawn as integers (repeatable)")
    p.add_argument("--quantity", help="which truth of the family (default: renyi, or its only quantity)")
    p.add_argument("--seed", type=_SEED, default=0,
                   help="seed of the search (default 0; the same seed gives the same points)")
    p.add_argument("--max-examples", type=_bounded(int, "--max-examples", 1), default=2000,
                   help="points to try (default 2000)")
    p.add_argument("--min-checked", type=_bounded(int, "--min-checked", 0), default=None, metavar="N",
                   help=f"fewer points really checked than this (and no counterexample) exits 3: no evidence "
                        f"(default min({MIN_CHECKED}, --max-examples))")
    p.add_argument("--budget", type=_bounded(float, "--budget", 0, strict=True), default=60.0,
                   help="wall-clock cap in seconds on the whole search, shrinking included (default 60)")
    _recheck_option(p, "--budget / 4, at most 20")
    p.add_argument("--whole-domain", action="store_true",
                   help="draw from the family's whole domain, not from its search region (where its truths are "
                        "computable within the caps; `verify families` shows it)")
    p.add_argument("--convention", action="append", default=[], metavar="NAME",
                   help="define symbols of the bound by a named convention, e.g. lipschitz_replace_one (L = S/2); "
                        "`verify conventions` lists them (repeatable)")
    p.add_argument("--fix", action="append", default=[], type=_param, metavar="NAME=VALUE",
                   help="pin a family parameter at a value during the search (repeatable)")
    p.add_argument("--json", action="store_true", help="print the search's full record as JSON")
    _latex_option(p, "the bound and --assume (--bind, --symbol and --fix stay SymPy text)")
    _plugin_option(p)
    p.set_defaults(fn=cmd_falsify)

    p = sub.add_parser("account", help="certified DP-SGD accountant: a proven bracket on eps(delta) or delta(eps) of "
                                       "Poisson-subsampled Gaussian steps; --compare places other accountants on it")
    p.add_argument("--q", type=float, help="sampling rate (one phase; or use --phase)")
    p.add_argument("--sigma", type=float, help="noise multiplier (one phase)")
    p.add_argument("--steps", type=float, help="number of steps T (one phase)")
    p.add_argument("--phase", action="append", default=[], type=_phase, metavar="Q,SIGMA,T",
                   help="a phase of the schedule (repeatable, in order)")
    p.add_argument("--event", action="append", default=[], type=_event, metavar="KIND:SPEC",
                   help="another mechanism composed with the phases (repeatable): laplace:b=B,steps=T (add/remove), "
                        "rr:k=K,p=P,steps=T or rr:k=K,eps0=E,steps=T (randomized response, replace_one), "
                        "mixture:sigma=S,c=C1/C2,p=P1/P2,steps=T (Gaussian mixture against N(0, S^2)), "
                        "cyclic:sigma=S,epochs=E (fixed batches in a fixed order), shuffled:sigma=S,epochs=E,"
                        "batches=M (reshuffled each epoch: the cyclic upper bound); see docs/guides/accountant.md")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--delta", type=float, help="answer eps(delta)")
    what.add_argument("--eps", type=float, help="answer delta(eps)")
    p.add_argument("--tol", type=float, default=None,
                   help="relative width the bracket must meet (exit 3 with the tightest bracket where it is not); "
                        "default: the default accuracy (the wider of 1e-3 relative and 5e-6 x T in eps), answered "
                        "with the tightest bracket within the time budget")
    p.add_argument("--abs-tol", type=float, default=None, help="absolute width of the bracket instead")
    p.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                   help="seconds the refinement may take (default 10 at the default accuracy; none with --tol)")
    p.add_argument("--neighbouring", choices=("add_remove", "add", "remove", "replace_one"), default="add_remove",
                   help="neighbouring relation (default add_remove: the larger of both orders; replace_one for "
                        "randomized response and cyclic/shuffled batches)")
    p.add_argument("--calibrate", choices=("sigma", "steps", "q"),
                   help="find the smallest sigma (or largest steps, q) whose certified eps meets --target-eps at "
                        "--delta; give the other two")
    p.add_argument("--target-eps", type=float, help="the eps a calibration must meet")
    p.add_argument("--compare", action="store_true", help="evaluate every installed accountant on the schedule and "
                                                         "mark each conservative, within or UNDER-REPORTS (or not "
                                                         "applicable, with the reason)")
    p.add_argument("--json", action="store_true",
                   help="print the answer as JSON (\"query\", \"given\", and the answer under the query's name with "
                        "lower, estimate, upper, width); a refusal prints its tightest bracket as \"best\"")
    p.add_argument("--curve", nargs="?", const="epsilon", choices=("epsilon", "delta"),
                   help="a privacy curve from one composition: eps over delta 1e-12..1e-2 (default), or delta over eps "
                        "0..eps(1e-12) (`--curve delta`); every point certified")
    p.add_argument("--at", type=_values_list, metavar="V1,V2,...",
                   help="the curve's points: deltas (--curve epsilon) or eps values (--curve delta)")
    p.add_argument("--plot", type=_usable_path, metavar="FILE.png|.svg",
                   help="draw the curve: the certified band and every installed accountant's values at its points "
                        "(replaces only a plot verify wrote)")
    p.add_argument("--every", type=_bounded(int, "--every", 1), metavar="N",
                   help="eps(--delta) after every N-th step and at the end, each certified")
    p.add_argument("--per-epoch", action="store_true",
                   help="eps(--delta) after each epoch (ceil(1/q) steps) and at the end, each certified")
    p.add_argument("--epochs", type=_bounded(float, "--epochs", 0, strict=True),
                   help="epochs E (with --batch-size B, --dataset-size N and --sigma: q = B/N, T = ceil(E N / B))")
    p.add_argument("--batch-size", type=_bounded(float, "--batch-size", 1), metavar="B",
                   help="expected batch size B (epoch inputs)")
    p.add_argument("--dataset-size", type=_bounded(float, "--dataset-size", 1), metavar="N",
                   help="dataset size N (epoch inputs)")
    p.set_defaults(fn=cmd_account)

    p = sub.add_parser("audit", help="a lower confidence bound on a mechanism's eps(delta) from its own samples; "
                                     "exit 1 when it refutes --claim-eps",
                       description="Audit FILE_OR_MODULE, which exports mechanism(data, rng) and the neighbouring "
                                   "datasets d and d_prime (or in_scores and out_scores; or a DP-SGD train(data, rng), "
                                   "dataset, canary and claim = (q, sigma, steps)): a lower bound on eps(delta) "
                                   "valid at --confidence. Exit 0 consistent, 1 refuted, 2 bad input, 3 when the "
                                   "claim is at or above what the samples could show (or a cap was hit).")
    p.add_argument("source", metavar="FILE_OR_MODULE", help="a .py file or a dotted module name")
    p.add_argument("--samples", type=_bounded(int, "--samples", 1), default=10_000,
                   help="outputs drawn on each dataset (default 10000)")
    p.add_argument("--delta", type=_bounded(float, "--delta", 0.0), required=True, help="the delta of eps(delta)")
    p.add_argument("--claim-eps", type=_bounded(float, "--claim-eps", 0.0), help="the claimed eps to test")
    p.add_argument("--confidence", type=_bounded(float, "--confidence", 0.0, strict=True), default=0.95,
                   help="confidence of the bound, in (0, 1) (default 0.95)")
    p.add_argument("--seed", type=_SEED, default=0, help="seed of the samples and of the split (default 0)")
    p.add_argument("--assume", choices=("gaussian",), help="grey box: the outputs are Gaussian with one variance "
                                                         "under both datasets")
    p.add_argument("--budget", type=_bounded(float, "--budget", 0.0, strict=True), default=None,
                   help="wall-clock cap in seconds on the audit (reached: exit 3)")
    p.add_argument("--json", action="store_true", help="print the audit as JSON (\"epsilon\": {\"lower\"}, "
                                                       "\"refutes\", \"counts\", \"test\", \"power\")")
    p.add_argument("--plot", metavar="FILE.png", type=_usable_path,
                   help="draw the audit's trade-off points and their confidence boxes beside the claimed curve to a "
                        "new PNG file (DP-SGD and scores files; an existing file is refused)")
    p.set_defaults(fn=cmd_audit)

    p = sub.add_parser("certify", help="certify a bound-vs-bound claim over a box (python-flint interval "
                                       "branch-and-bound)",
                       description="Certify an inequality between symbolic bounds over a box (interval branch and "
                                   "bound with Arb). Exit 0 certified, 1 counterexample, 3 inconclusive, 2 bad input.")
    p.add_argument("claim", nargs="?", help="id of a named claim (see --list)")
    p.add_argument("--list", action="store_true", help="list the named claims")
    p.add_argument("--lhs", help="left-hand side expression")
    p.add_argument("--rhs", help="right-hand side expression")
    p.add_argument("--box", action="append", default=[], metavar="NAME=LO:HI", help="interval of a symbol "
                   "(repeatable; a single number fixes it)")
    p.add_argument("--relation", default="<=", help="<=, <, >= or > (default <=)")
    p.add_argument("--assume", help="condition restricting the box, e.g. '(eta*lam < 1) & (K >= 10)'")
    p.add_argument("--json", action="store_true", help="print the certificate (with --list: the claims) as JSON")
    p.add_argument("--max-boxes", type=int, default=200_000, help="boxes examined at most (default 200000)")
    p.add_argument("--budget", type=float, default=60.0, help="wall-clock cap in seconds on the whole "
                   "certification, one long box evaluation included (default 60); reached, it is INCONCLUSIVE "
                   "(exit 3) with what was decided")
    p.add_argument("--min-width", type=float, default=1e-10, help="relative box width not bisected further "
                   "(default 1e-10)")
    p.add_argument("--prec", type=int, default=128, help="Arb working precision in bits (default 128)")
    _latex_option(p, "--lhs, --rhs and --assume")
    p.set_defaults(fn=cmd_certify)

    p = sub.add_parser("conventions", help="list the named conventions (--convention of falsify)")
    p.add_argument("--json", action="store_true", help="print them as JSON (name, description, defines, needs)")
    p.set_defaults(fn=cmd_conventions)

    p = sub.add_parser("families", help="list the instance families and their parameters")
    p.add_argument("--json", action="store_true", help="print them as JSON (parameters with their domains, "
                                                       "quantities, truth method, search region)")
    _plugin_option(p)
    p.set_defaults(fn=cmd_families)
    return parser


def cmd_conventions(args: argparse.Namespace) -> int:
    from verify.conventions import CONVENTIONS

    if args.json:
        _print_json([{"name": c.name, "description": c.description, "defines": dict(c.defines), "needs": list(c.needs)}
                     for c in CONVENTIONS.values()])
        return 0
    for conv in CONVENTIONS.values():
        defines = ", ".join(f"{k} = {v}" for k, v in conv.defines.items())
        print(textwrap.fill(f"{conv.name:<24} {defines:<14} {conv.description}", _width(), subsequent_indent=" " * 40,
                            break_long_words=False, break_on_hyphens=False))
    return 0


def cmd_families(args: argparse.Namespace) -> int:
    import sympy as sp

    from verify.families import FAMILIES

    if args.json:
        _print_json([{"name": f.name, "description": f.description, "truth": f.method,
                      "quantities": [q.value for q in f.truths],
                      "parameters": [{"name": p.name, "description": p.description, "domain": sp.sstr(p.domain),
                                      "integer": p.integer, "quantities": [q.value for q in p.quantities]}
                                     for p in f.parameters],
                      "constraints": [{"name": c.name, "condition": sp.sstr(c.condition)} for c in f.constraints],
                      "search_region": [sp.sstr(c) for c in f.search_region], "expensive": f.expensive,
                      "estimated": f.estimated} for f in FAMILIES.values()])
        return 0
    for fam in FAMILIES.values():
        quantities = ", ".join(q.value for q in fam.truths)
        print(_wrapped(f"{fam.name}  [{quantities}]\n  {fam.description}\n  truth: {fam.method}"))
        for p in fam.parameters:
            only = f" (for {', '.join(q.value for q in p.quantities)})" if p.quantities else ""
            print(_wrapped(f"    {p.name:<10} {p.description}{only}"))
        if fam.search_region:
            print(_wrapped(f"  searched in: {', '.join(sp.sstr(c) for c in fam.search_region)}"))
        print()
    return 0


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas() -> None:
    """One BLAS thread per process unless the user set a count (before NumPy loads): verify's matrices are small and
    its parallelism is processes (--workers); threaded BLAS products on a loaded machine ran 10-20x slower."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit code is one of verify.exitcodes (README, "Exit codes")."""
    if argv is None:  # a `verify` process, not a caller's
        atexit.register(_quick_shutdown)
        single_threaded_blas()
        _one_line_warnings()
    try:  # SIGTERM and SIGINT end the processes the command started and unwind it (verify.stopping); a caller's
        with stop_on_signals(own_process=argv is None):  # own children, where it runs in-process, stay
            return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # `verify list | head`: the reader left; say nothing more
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return exitcodes.OK
    except VerifyError as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return err.exit_code
    except Interrupted as err:  # SIGTERM or SIGINT: its processes are ended, its partial files removed
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return exitcodes.stopped_by(signal.SIGINT)
    except Exception as err:  # noqa: BLE001 - a bug: one line (the traceback with VERIFY_DEBUG=1), its own code
        if os.environ.get("VERIFY_DEBUG"):
            traceback.print_exc()
        print(f"internal error: {type(err).__name__}: {_one_line(err)} (a bug in verify; VERIFY_DEBUG=1 shows the "
              "traceback)", file=sys.stderr)
        return exitcodes.INTERNAL


def _one_line_warnings() -> None:
    """In a `verify` process a warning is one line, `warning: ...` (not a source path and a code line), and NumPy's
    floating-point notices from the numerical kernels, which handle the infinities they note, are not shown."""
    warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero|underflow) encountered", RuntimeWarning)

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"warning: {_one_line(message)}", file=file or sys.stderr)

    warnings.showwarning = show


def _quick_shutdown() -> None:
    """Collect garbage once and freeze what is left: interpreter shutdown then skips it in each of its collections
    (~0.15 s over SymPy's objects, 15% of `verify list`)."""
    gc.collect()
    gc.freeze()


def _one_line(err: BaseException) -> str:
    """The message on one line, printable on any UTF-8 stream (an argument's undecodable bytes, which Python holds
    as lone surrogates, shown as \\udcXX escapes)."""
    return " ".join(str(err).split()).encode("utf-8", "backslashreplace").decode("utf-8")


def _hypothesis_cache() -> None:
    """Keep hypothesis' storage out of the user's current folder: a per-user cache (its database is off anyway)."""
    if "HYPOTHESIS_STORAGE_DIRECTORY" in os.environ:
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "verify" / "hypothesis"
    set_hypothesis_home_dir(cache)


def _check_environment() -> None:
    """The caps' environment variables, read once at start-up: a bad value is bad input (exit 2), found before any
    work rather than as a failed point deep inside a run."""
    from verify.limits import cache_size, isolation_mode, memory_cap, truth_deadline

    memory_cap()
    truth_deadline()
    isolation_mode()
    cache_size()


def _dispatch(argv: list[str]) -> int:
    _check_environment()
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):  # argparse only said
        known = {"--help", "--version"}  # "the following arguments are required: command"
        raise ParameterError(f"unknown option {argv[0]}{did_you_mean(argv[0], known)}; see `verify --help`")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help: argparse printed the help
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else exitcodes.BAD_INPUT)
    _load_plugins(args)
    return args.fn(args)


def _load_plugins(args: argparse.Namespace) -> None:
    """Register the families of installed plugins and of each --plugin, and add each --paper and --plugin paper to the
    catalog (`args.papers`: their keys, the default selection). Nothing for a command that reads no family and names
    no --plugin or --paper: it need not import the families."""
    modules, files = getattr(args, "plugin", []), getattr(args, "paper", [])
    args.papers = []
    if not modules and not files and args.command in NO_FAMILIES:
        return
    from verify.catalog import paper_file
    from verify.families import load_entry_points

    load_entry_points()
    paper_file.load_entry_points()
    papers = [paper_file.load_module(m) for m in modules] + [paper_file.load_paper_file(f) for f in files]
    args.papers = list(dict.fromkeys(p.key for p in papers if p is not None))


if __name__ == "__main__":
    sys.exit(main())
