"""verify.truth.sgm_rdp against 50-digit references at dp_accounting's default orders, both orders of the pair, and
against dp_accounting itself (an independent oracle: equal at integer orders, above at fractional ones)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

from verify.truth.sgm_rdp import sgm_rdp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from derivations.sgm_rdp_reference import ORDERS, sgm_renyi_reference  # noqa: E402

REFERENCE = json.loads((Path(__file__).parent.parent / "data" / "sgm_rdp_reference.json").read_text())
CASES = REFERENCE["cases"]


def _ids(case: dict) -> str:
    return f"q={case['q']},sigma={case['sigma']}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_every_default_order_both_directions_within_1e_12_of_the_50_digit_reference(case):
    assert REFERENCE["orders"] == ORDERS and len(ORDERS) == 156
    r = sgm_rdp(case["q"], case["sigma"], ORDERS)
    for direction in ("pq", "qp"):
        ref = np.array([float(mpmath.mpf(v)) for v in case[direction]])
        rel = np.abs(getattr(r, direction) / ref - 1)
        assert rel.max() <= 1e-12, (direction, ORDERS[int(rel.argmax())], rel.max())
        pad = getattr(r, f"{direction}_err") + 1e-13 * ref  # the interval sgm_renyi_truth gives the value
        assert np.all(np.abs(getattr(r, direction) - ref) <= pad)


@pytest.mark.parametrize(("alpha", "direction"), [(1.5, "pq"), (7.3, "qp"), (40.0, "pq"), (63.0, "qp")])
def test_the_stored_reference_is_what_the_derivation_computes(alpha, direction):
    case = CASES[0]
    with mpmath.workdps(60):
        live = sgm_renyi_reference(case["q"], case["sigma"], alpha, direction)
        stored = mpmath.mpf(case[direction][ORDERS.index(alpha)])
        assert abs(live / stored - 1) < mpmath.mpf(10) ** -45


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_dp_accounting_agrees_at_integer_orders_and_overestimates_fractional_ones(case):
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = np.array(ORDERS)
    theirs = rdp._compute_rdp_poisson_subsampled_gaussian(case["q"], case["sigma"], orders)
    ours = sgm_rdp(case["q"], case["sigma"], orders)
    integer = orders == np.round(orders)
    assert np.allclose(theirs[integer], ours.pq[integer], rtol=1e-12, atol=0)
    # their two-series sum adds the alternating tail terms in absolute value: an upper bound, never below ours
    assert np.all(theirs[~integer] >= ours.rdp[~integer] * (1 - 1e-12))
