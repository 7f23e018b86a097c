"""A privacy curve and per-step accounting as JSON (`verify account --curve --json`, `--every N --json`) and as a
figure (`--plot FILE.png|.svg`): the certified band lower..upper shaded, every other accountant's values on it.

A plot is written to a temporary file beside its destination and moved there only if the destination is absent or
a plot this command wrote (its metadata names it): verify never overwrites a file it did not create."""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402 - the backend is chosen first

from verify.accountant_curve import PeerCurve, PrivacyCurve, StepCurve  # noqa: E402
from verify.errors import ParameterError  # noqa: E402
from verify.reporting.accountant_json import ACCOUNT_SCHEMA  # noqa: E402

PLOT_MARK = "verify account --curve"  # in every plot's metadata: the mark of a file this command may replace
PLOT_FORMATS = (".png", ".svg")
PEER_STYLES = ("o", "s", "^", "v", "D", "x", "+")


def _phases(phases: tuple) -> list[dict]:
    return [{"q": p.q, "sigma": p.sigma, "steps": p.steps} if hasattr(p, "q") and hasattr(p, "sigma")
            else {"phase": str(p), "steps": p.steps} for p in phases]


def curve_dict(curve: PrivacyCurve, peers: Sequence[PeerCurve] = ()) -> dict:
    """{"curve": "epsilon" (eps at each delta) or "delta", "points": [{at-name, "lower", "estimate", "upper"}], the
    schedule, the grid, and each other accountant's values at the points where asked}."""
    at = curve.at_name
    out = {
        "schema": ACCOUNT_SCHEMA,
        "curve": curve.quantity,
        "points": [{at: p.at, "lower": p.lower, "estimate": p.estimate, "upper": p.upper, "certified": True}
                   for p in curve.points],
        "phases": _phases(curve.phases),
        "neighbouring": curve.neighbouring,
        "grid_width": curve.grid_width,
        "method": "privacy-loss distribution bracket, one composition read at every point",
        "seconds": curve.seconds,
    }
    if peers:
        out["peers"] = [{"accountant": c.accountant, "values": list(c.values), "status": c.status, "note": c.note,
                         "under_reports_at": c.under} for c in peers]
    return out


def steps_dict(steps: StepCurve) -> dict:
    """{"delta", "per_step": [{"step", "epoch", "lower", "upper"}], the schedule and the grid}."""
    return {
        "schema": ACCOUNT_SCHEMA,
        "delta": steps.delta,
        "per_step": [{"step": p.step, "epoch": p.epoch, "lower": p.lower, "upper": p.upper, "certified": True}
                     for p in steps.points],
        "phases": _phases(steps.phases),
        "neighbouring": steps.neighbouring,
        "grid_width": steps.grid_width,
        "seconds": steps.seconds,
    }


def _ours(path: Path) -> bool:
    """True if `path` is a plot this command wrote (its metadata carries PLOT_MARK, near the file's start)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return PLOT_MARK.encode() in head


def check_plot_path(path: str | Path) -> Path:
    """`path` as a plot destination: a .png or .svg that is absent or a plot this command wrote; else one
    ParameterError line (exit 2)."""
    path = Path(path)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise ParameterError(f"--plot {path}: name a .png or .svg file")
    if path.is_symlink() or path.is_dir() or (path.exists() and not _ours(path)):
        raise ParameterError(f"--plot {path} exists and is not a plot verify wrote; verify never overwrites files "
                             "it did not create")
    if not path.parent.is_dir():
        raise ParameterError(f"--plot {path}: the folder {path.parent} does not exist")
    return path


def curve_figure(curve: PrivacyCurve, peers: Sequence[PeerCurve] = ()) -> Figure:
    """The certified band (lower..upper, shaded) and each other accountant's values at the same points."""
    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    ax = fig.add_subplot()
    x = [p.at for p in curve.points]
    lower = [p.lower for p in curve.points]
    upper = [p.upper if math.isfinite(p.upper) else math.nan for p in curve.points]
    ax.fill_between(x, lower, upper, color="#1f5fa8", alpha=0.35, linewidth=0, label="certified bracket (verify)")
    ax.plot(x, lower, color="#1f5fa8", linewidth=0.8)
    ax.plot(x, upper, color="#1f5fa8", linewidth=0.8)
    for k, peer in enumerate(p for p in peers if any(v is not None for v in p.values)):
        shown = [math.nan if v is None else v for v in peer.values]
        label = peer.accountant + (f" (UNDER-REPORTS at {peer.under})" if peer.under else "")
        ax.plot(x, shown, linestyle="none", marker=PEER_STYLES[k % len(PEER_STYLES)], markersize=4,
                markerfacecolor="none", label=label)
    if curve.quantity == "epsilon":
        ax.set_xscale("log")
        ax.set_xlabel("δ")
        ax.set_ylabel("ε(δ)")
    else:
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("δ(ε)")
    schedule = " + ".join(str(p) for p in curve.phases)
    ax.set_title(schedule if len(schedule) <= 80 else schedule[:77] + "...", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def write_plot(fig: Figure, path: str | Path) -> Path:
    """`fig` saved to `path` (checked by `check_plot_path`) through a temporary file beside it, moved there only if
    the destination is still absent or ours."""
    path = check_plot_path(path)
    fmt = path.suffix.lower().lstrip(".")
    meta = {"Software": PLOT_MARK} if fmt == "png" else {"Creator": PLOT_MARK, "Date": None}
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.partial"
    try:
        fig.savefig(tmp, format=fmt, metadata=meta)
        check_plot_path(path)  # a foreign file that appeared meanwhile is left alone
        os.replace(tmp, path)
    except OSError as err:
        raise ParameterError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
