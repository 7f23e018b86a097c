"""Instance families, by name. Each binds named parameters to ground-truth methods in verify.truth."""

from __future__ import annotations

from verify.errors import UnknownIdError
from verify.families.dpsgd import FAMILIES as DPSGD_FAMILIES
from verify.families.grid import NOISY_GD_LOGISTIC_1D, NOISY_GD_PROJECTED_1D, PNSGD_PROJECTED_1D
from verify.families.mbcd import FAMILIES as MBCD_FAMILIES
from verify.families.mixtures import (
    MIXTURE_VS_GAUSSIAN,
    SAMPLED_GAUSSIAN,
    SAMPLED_GAUSSIAN_COMPOSED,
    SAMPLED_GAUSSIAN_MC,
    SAMPLED_GAUSSIAN_NAIVE_MC,
    SKIP_PNSGD_LINEAR_1D,
    SKIP_PNSGD_LINEAR_DATA_1D,
    STOP_PNSGD_LINEAR_1D,
    STOP_PNSGD_LINEAR_DATA_1D,
)
from verify.families.nmf import FAMILIES as NMF_FAMILIES
from verify.families.noisy_gd import NOISY_GD_QUADRATIC, NOISY_GD_SUM_QUADRATIC
from verify.families.pnsgd import CNI_AFFINE, PNMSGD_QUADRATIC, PNSGD_LINEAR, PNSGD_QUADRATIC
from verify.families.shifted import CONTRACTION_GAUSSIAN, SHIFT_REDUCTION_GAUSSIAN
from verify.model import Family

FAMILIES: dict[str, Family] = {f.name: f for f in (
    NOISY_GD_QUADRATIC, NOISY_GD_SUM_QUADRATIC, PNSGD_QUADRATIC, PNSGD_LINEAR, PNMSGD_QUADRATIC, CNI_AFFINE,
    SHIFT_REDUCTION_GAUSSIAN, CONTRACTION_GAUSSIAN, SAMPLED_GAUSSIAN, STOP_PNSGD_LINEAR_1D, SKIP_PNSGD_LINEAR_1D,
    MIXTURE_VS_GAUSSIAN, NOISY_GD_PROJECTED_1D, NOISY_GD_LOGISTIC_1D, PNSGD_PROJECTED_1D,
    SAMPLED_GAUSSIAN_COMPOSED,
    SAMPLED_GAUSSIAN_MC, SAMPLED_GAUSSIAN_NAIVE_MC, STOP_PNSGD_LINEAR_DATA_1D, SKIP_PNSGD_LINEAR_DATA_1D,
    *MBCD_FAMILIES, *NMF_FAMILIES, *DPSGD_FAMILIES,
)}


def family(name: str) -> Family:
    """The instance family called `name`."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownIdError(f"no family '{name}'; known: {', '.join(sorted(FAMILIES))}") from None
