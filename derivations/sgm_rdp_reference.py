"""50-digit reference values of the Rényi divergence of the Poisson-subsampled Gaussian mechanism, both orders.

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2). With P/Q (x) = 1 - q + q exp((2x - 1)/(2 s^2)):

    R_a(P||Q) = log int Q (P/Q)^a dx / (a - 1),    R_a(Q||P) = log int Q (P/Q)^(1-a) dx / (a - 1),

integrated here by mpmath's tanh-sinh quadrature at 50 digits, split where the integrands bend or peak (0, 1/2,
1, and a, where Q e^(a x / s^2) peaks, with +-10 and +-40 noise widths around). Nothing of verify is used: this is
the independent reference of verify.truth.sgm_rdp (tests/truth/test_sgm_rdp.py).

`python derivations/sgm_rdp_reference.py` recomputes tests/data/sgm_rdp_reference.json at the orders of
dp_accounting's RdpAccountant (0.6.0 defaults: 1.1 to 10.9 by 0.1, 11 to 63, 128, 256, 512, 1024); it takes
about six minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath

DPS = 50
ORDERS = [round(1 + k / 10, 1) for k in range(1, 100)] + [float(a) for a in range(11, 64)] + [128.0, 256.0, 512.0,
                                                                                              1024.0]
CASES = [(0.01, 1.1), (0.001, 0.7), (0.2, 3.0)]  # (q, sigma)
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "sgm_rdp_reference.json"


def sgm_renyi_reference(q: float, sigma: float, alpha: float, direction: str, dps: int = DPS) -> mpmath.mpf:
    """R_alpha(P||Q) (direction "pq") or R_alpha(Q||P) ("qp") at `dps` digits."""
    with mpmath.workdps(dps + 10):
        q, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

        def ratio(x):
            return 1 - q + q * mpmath.exp((2 * x - 1) / (2 * s**2))

        power = a if direction == "pq" else 1 - a
        if direction == "pq":
            cuts = {-40 * s, mpmath.mpf(0), mpmath.mpf(1), a - 10 * s, a, a + 10 * s, a + 40 * s}
        else:
            cuts = {-40 * s, -10 * s, mpmath.mpf(0), mpmath.mpf(1) / 2, mpmath.mpf(1), 10 * s, 1 + 40 * s}
        points = [-mpmath.inf, *sorted(cuts), mpmath.inf]
        integral = mpmath.quad(lambda x: mpmath.npdf(x, 0, s) * ratio(x) ** power, points, maxdegree=10)
        return +(mpmath.log(integral) / (a - 1))


def main() -> None:
    cases = []
    for q, sigma in CASES:
        values = {d: [mpmath.nstr(sgm_renyi_reference(q, sigma, a, d), DPS) for a in ORDERS] for d in ("pq", "qp")}
        cases.append({"q": q, "sigma": sigma, **values})
        print(f"q={q}, sigma={sigma}: done")
    OUT.write_text(json.dumps({"dps": DPS, "orders": ORDERS, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
