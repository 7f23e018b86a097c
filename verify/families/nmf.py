"""DP mini-batch block coordinate descent for rank-one NMF (Chen & Liu 2024, seed 003, Algorithm 3, HFL): the rows of
M are the records, cut into m fixed batches of b; per batch a noisy step on those rows of x with the batch gradient
clipped as a whole to S_g and the Hessian-norm factor min(1, kappa/||h||); per epoch one noisy step on y using every
row (verify.truth.montecarlo.nmf_hfl_last_step_mixture). Data: one item column (M is n x 1), every row 1 except the
differing record, 1 on D and 0 on D' (a user who rated the item 1 vs not at all); start x = 1, y = 1.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Truth
from verify.symbols import K, S, alpha, b, chains, eta, kappa_h, m, o, seed
from verify.truth.montecarlo import nmf_hfl_last_step_mixture, renyi_coupled_chains
from verify.truth.numbers import num

_R = Quantity.RENYI
REPLICATES = 6


def _ratings(b: int, m: int, record: float) -> np.ndarray:
    ratings = np.ones((int(b) * int(m), 1))
    ratings[0, 0] = record
    return ratings


def _released_y(alpha, eta, S, kappa_h, o, b, m, K, chains, seed) -> Truth:
    """R_alpha of the released y after K epochs, estimated from coupled Rao-Blackwellised chains (REPLICATES runs)."""
    seeds = np.random.SeedSequence(int(seed)).generate_state(REPLICATES)
    laws = [tuple(nmf_hfl_last_step_mixture(_ratings(b, m, record), m=int(m), eta=eta, o=o, clip=S, kappa=kappa_h,
                                            K=int(K), chains=int(chains), seed=int(s)) for record in (1.0, 0.0))
            for s in seeds]
    return renyi_coupled_chains(laws, alpha, f"DP-MBCD NMF (Algorithm 3), y after K={int(K)} epochs, "
                                              f"{int(chains)} chains per replicate, seed={int(seed)}")


def _record_row(alpha, eta, S, kappa_h, o, b, m):
    """The differing user's entry of x after the first epoch: from x = y = 1 its batch's gradient is 0 on D and
    e_0 on D' (residual 1 - 0), clipped to min(1, S_g) with Hessian factor min(1, kappa/min(1, S_g)), so the two laws
    are N(1, 2 eta o) and N(1 - eta min(1, S_g, kappa), 2 eta o): R = alpha eta min(1, S_g, kappa)^2/(4 o), the
    same for every batch layout (b, m)."""
    N = num()
    step = -N.maximum(N.maximum(-N.mpf(1), -N.mpf(S)), -N.mpf(kappa_h))
    return alpha * eta * step**2 / (4 * o)


_COMMON = (
    Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)),
    Parameter(eta, eta > 0, "step size", quantities=(_R,)),
    Parameter(S, S > 0, "S_g: the norm a block's batch gradient is clipped to (Algorithm 3 clips the batch, not "
                        "each example)", quantities=(_R,)),
    Parameter(kappa_h, kappa_h > 0, "Hessian-norm clipping threshold kappa", quantities=(_R,)),
    Parameter(o, o > 0, "noise magnitude: each step adds sqrt(2 eta) N(0, o)", quantities=(_R,)),
    Parameter(b, sp.And(b >= 1, b <= 200), "batch size (rows per batch)", integer=True),
    Parameter(m, sp.And(m >= 1, m <= 20), "batches per epoch (n = m b rows)", integer=True),
)

NMF_HFL_MC = Family(
    name="nmf_hfl_mc",
    description="Algorithm 3 (DP-MBCD for NMF, HFL) on rank-one NMF of one item column, every rating 1 except the "
                "record (1 on D, 0 on D'); the released y after K epochs (x hidden). Estimated: the law of y is a "
                "mixture over the hidden states before the last y-step, simulated (chains) and integrated exactly.",
    parameters=(*_COMMON,
                Parameter(K, sp.And(K >= 1, K <= 5), "epochs (at most 5: the estimate degrades as the hidden "
                          "state spreads)", integer=True, quantities=(_R,)),
                Parameter(chains, sp.And(chains >= 100, chains <= 2000), "simulated chains per replicate",
                          integer=True, quantities=(_R,)),
                Parameter(seed, seed >= 0, "random seed (same seed, same estimate)", integer=True,
                          quantities=(_R,))),
    facts=frozenset({"nmf", "batch_gradient_clipping", "replace_one", "fixed_batches", "fixed_start"}),
    truths={_R: _released_y},
    method=f"Monte-Carlo: Rao-Blackwellised last y-step, chains coupled across D and D', 1-D Gauss-Legendre "
           f"quadrature per replicate, {REPLICATES} replicates (t interval on their spread)",
    constraints=(Assumption("record_batch", b * m >= 2, "n = m b >= 2 rows (one record and the others)"),),
    expensive=True,
    estimated=True,
)

NMF_RECORD_ROW = Family(
    name="nmf_record_row",
    description="Algorithm 3 on the same data, first epoch: the differing user's entry of x (released with X in "
                "the HFL accounting). Its batch step starts from the deterministic x = y = 1, so both laws are "
                "Gaussian with one variance: exact. It lower-bounds the divergence of any release containing it.",
    parameters=_COMMON,
    facts=frozenset({"nmf", "batch_gradient_clipping", "replace_one", "fixed_batches", "fixed_start"}),
    truths={_R: exact(_record_row, "Gaussian pair N(1, 2 eta o) vs N(1 - eta min(1, S_g, kappa), 2 eta o)")},
    method="closed form (one Gaussian step from a deterministic start)",
)

FAMILIES = (NMF_HFL_MC, NMF_RECORD_ROW)
