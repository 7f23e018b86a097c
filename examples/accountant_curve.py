"""Draws the accountant's curve figure of README and docs/guides/accountant.md: eps(delta) of 100 steps of DP-SGD
(q = 0.001, sigma = 0.6) for delta 1e-12..1e-2, the certified bracket shaded, and every installed accountant's
values at the same points (the Gaussian-DP CLT under-reports there by a factor ~6).

    python examples/accountant_curve.py [OUT.png]      (default docs/assets/accountant_curve.png)

It replaces only a plot verify wrote (as `verify account --curve --plot` does)."""

from __future__ import annotations

import sys
from pathlib import Path

from verify.accountant import Phase
from verify.accountant_curve import epsilon_curve, peer_curves
from verify.reporting.accountant_curve import curve_figure, write_plot

OUT = Path(__file__).resolve().parents[1] / "docs" / "assets" / "accountant_curve.png"


def main(out: Path = OUT) -> None:
    curve = epsilon_curve(None, [Phase(0.001, 0.6, 100)])
    peers = peer_curves(curve)
    print(curve)
    for peer in peers:
        print(f"  {peer}")
    print(f"written to {write_plot(curve_figure(curve, peers), out)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
