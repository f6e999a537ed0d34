"""Covariance estimators of the parameters, in a small registry.

All take the observed information ``I = -H`` (at the optimum) and, for the sandwich
estimators, the observation scores; they return ``(cov, description)``. Each
``cov_type`` means exactly one thing (no silent aliases).
"""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.tools.sm_exceptions import HessianInversionWarning

__all__ = [
    "COV_TYPES",
    "compute_covariance",
    "invert_information",
    "warn_singular_information",
]


def invert_information(information: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Inverse of the observed information, or NaNs and the reason when it is not
    positive definite (no interior maximum: standard errors would mean nothing).

    The matrix is equilibrated (scaled to unit diagonal) before the Cholesky
    factorisation, which is exact and keeps badly scaled designs well conditioned.
    """
    n = information.shape[0]
    nan = np.full((n, n), np.nan)
    diag = np.diag(information)
    if not np.all(np.isfinite(information)) or np.any(diag <= 0):
        return nan, "it has non-positive diagonal entries"
    scale = 1.0 / np.sqrt(diag)
    scaled = information * scale[:, None] * scale[None, :]
    try:
        chol = np.linalg.cholesky(scaled)
    except np.linalg.LinAlgError:
        return nan, "it is not positive definite"
    if np.min(np.abs(np.diag(chol))) ** 2 < 1e3 * np.finfo(float).eps:
        return nan, "it is numerically singular"
    inv_chol = np.linalg.inv(chol)
    inverse = inv_chol.T @ inv_chol
    return inverse * scale[:, None] * scale[None, :], None


def warn_singular_information(why: str, stacklevel: int) -> None:
    warnings.warn(
        f"The observed information matrix cannot be inverted: {why}. The optimum "
        "is not a regular interior maximum (separation, a collapsed or redundant "
        "expert, or too large a K), so standard errors are reported as NaN. Try a "
        "smaller k, or an L2 penalty (alpha).",
        HessianInversionWarning,
        stacklevel=stacklevel + 1,
    )


def _nonrobust(cov, scores, cov_kwds):
    return cov, (
        "Standard errors from the observed information (inverse of minus the "
        "Hessian of the log-likelihood)."
    )


def _hc0(cov, scores, cov_kwds):
    # np.asarray: a Dask model's scores are lazy; their cross-product is small
    meat = np.asarray(scores.T @ scores)
    return cov @ meat @ cov, (
        "Standard errors are heteroscedasticity robust (HC0 sandwich of the "
        "observed information and the outer product of the scores)."
    )


def _cluster(cov, scores, cov_kwds):
    groups = cov_kwds.get("groups")
    if groups is None:
        raise ValueError(
            "cov_type='cluster' needs the cluster labels: pass "
            "cov_kwds={'groups': labels} with one label per observation"
        )
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != scores.shape[0]:
        raise ValueError(
            f"cov_kwds['groups'] must have one label per observation "
            f"({scores.shape[0]}), got shape {groups.shape}"
        )
    _, codes = np.unique(groups, return_inverse=True)
    n_groups = int(codes.max()) + 1
    if n_groups < 2:
        raise ValueError("cov_type='cluster' needs at least two clusters")
    summed = np.zeros((n_groups, scores.shape[1]))
    np.add.at(summed, codes, scores)
    nobs, k_params = scores.shape
    correction = 1.0
    if cov_kwds.get("use_correction", True):
        # statsmodels' CRV1 small-sample factor, so that K = 1 matches Logit
        correction = (nobs - 1) / (nobs - k_params) * n_groups / (n_groups - 1)
    meat = summed.T @ summed
    return correction * (cov @ meat @ cov), (
        f"Standard errors are robust to cluster correlation (CRV1, {n_groups} "
        "clusters)."
    )


COV_TYPES = {"nonrobust": _nonrobust, "HC0": _hc0, "cluster": _cluster}


def compute_covariance(
    cov_type: str, cov: np.ndarray, scores: np.ndarray, cov_kwds: dict
) -> tuple[np.ndarray, str]:
    """Covariance of the parameters for one of :data:`COV_TYPES`."""
    unknown = set(cov_kwds) - {"groups", "use_correction"}
    if unknown:
        raise ValueError(f"unknown cov_kwds: {sorted(unknown)}")
    return COV_TYPES[cov_type](cov, scores, cov_kwds)
