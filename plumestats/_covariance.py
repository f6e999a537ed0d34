"""Covariance estimators of the parameters, in a small registry.

All take the inverse of the observed information (the bread) and, for the
sandwich estimators, the observation scores (:class:`SandwichData`); they return
a :class:`Covariance`. The sandwiches are statsmodels' own
(``statsmodels.stats.sandwich_covariance``); HC1 to HC3 follow R's
``sandwich::vcovHC`` for a glm. Each ``cov_type`` means exactly one thing: no
silent aliases (statsmodels' ``Logit`` and ``GLM`` return HC0 for HC1 to HC3).

The generalised leverage (:func:`generalised_leverage`) feeds HC2 and HC3,
and the influence measures of :mod:`plumestats._influence`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.special import expit
from statsmodels.stats import sandwich_covariance as sw
from statsmodels.tools.grouputils import combine_indices
from statsmodels.tools.sm_exceptions import HessianInversionWarning

from ._validation import check_choice

__all__ = [
    "BLOCK_COV_TYPES",
    "COV_TYPES",
    "Covariance",
    "SandwichData",
    "canonical_cov_type",
    "cluster_codes",
    "compute_covariance",
    "generalised_leverage",
    "invert_information",
    "masked",
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


def masked(cov: np.ndarray, unknown: np.ndarray) -> np.ndarray:
    """A copy of ``cov`` with the rows and columns ``unknown`` marks NaN."""
    cov = np.array(cov, dtype=float)
    cov[unknown, :] = cov[:, unknown] = np.nan
    return cov


def warn_singular_information(
    why: str, stacklevel: int, rank_deficient: bool = False
) -> None:
    """Warn that the standard errors are NaN, and why: an optimum that is no
    regular interior maximum or, for the unpenalised fit of a rank-deficient
    design (``rank_deficient``: singular even with the dependent columns'
    coefficients held), other columns that are nearly collinear too."""
    cause = (
        "the design matrix is rank deficient, and even with the coefficients "
        "of its dependent columns held (its CollinearityWarning names them) "
        "the rest are not identified: other columns are nearly collinear, or "
        "the optimum is no regular interior maximum (separation, a collapsed "
        "expert). Standard errors are reported as NaN. Drop the redundant "
        "columns, or fit with an L2 penalty (alpha > 0)."
        if rank_deficient
        else "The optimum is not a regular interior maximum (separation, a "
        "collapsed or redundant expert, or too large a K), so standard errors "
        "are reported as NaN. Try a smaller k, or an L2 penalty (alpha)."
    )
    head = "The observed information matrix cannot be inverted"
    warnings.warn(
        f"{head} ({why}): {cause}" if rank_deficient else f"{head}: {why}. {cause}",
        HessianInversionWarning,
        stacklevel=stacklevel + 1,
    )


@dataclass(frozen=True)
class SandwichData:
    """What the sandwich estimators read from the sample.

    ``scores`` are the observation scores ``(nobs, n_params)``, or for a fit by
    row blocks a square root ``R`` of their summed outer product
    (``R'R = sum_n s_n s_n'``), which is all HC0 and HC1 need. ``leverage``
    computes the generalised leverages ``h_n`` when HC2 or HC3 asks for them.
    With frequency weights ``f_n`` the scores are ``f_n s_n`` (the model's
    ``score_obs``), ``nobs`` is ``sum_n f_n``, and the estimators give what
    the rows repeated would: ``sum_n f_n s_n s_n'`` (HC), a cluster's
    ``sum_n f_n s_n``.
    """

    scores: np.ndarray
    nobs: float
    leverage: Callable[[], np.ndarray] | None = None
    freq_weights: np.ndarray | None = None

    def unit_scores(self) -> np.ndarray:
        """``sqrt(f_n) s_n``: one row whose outer product is the ``f_n``
        repeated rows' (``s_n`` itself without weights)."""
        scores = np.asarray(self.scores)  # a Dask model's are lazy; small here
        if self.freq_weights is None:
            return scores
        f = self.freq_weights
        root = np.divide(1.0, np.sqrt(f), out=np.zeros_like(f), where=f > 0)
        return scores * root[:, None]

    @property
    def n_rows(self) -> int:
        return int(np.shape(self.scores)[0])

    def of(self, estimated: np.ndarray) -> SandwichData:
        """The same sample's data for the ``estimated`` parameters only (a
        fit by blocks: the root's columns, whose products are the meat's)."""
        return replace(self, scores=np.asarray(self.scores)[:, estimated])


@dataclass(frozen=True)
class Covariance:
    """A covariance of the parameters and what inference needs to know of it."""

    cov: np.ndarray
    description: str
    # residual degrees of freedom of t and F inference, when not nobs - n_params
    df_resid_inference: float | None = None
    options: dict = field(default_factory=dict)

    def results_kwds(self, cov_type: str, cov_kwds: dict, use_t: bool) -> dict:
        """The results' ``cov_kwds``: the caller's, the options used, the
        description and, for a robust covariance, statsmodels' ``use_t``,
        ``adjust_df`` (t and F on the clusters' G - 1 degrees of freedom) and
        ``scaling_factor``."""
        robust = {
            "use_t": bool(use_t),
            "adjust_df": self.df_resid_inference is not None,
            "scaling_factor": None,
        }
        return {
            **(robust if cov_type != "nonrobust" else {}),
            **cov_kwds,
            **self.options,
            "description": self.description,
        }


def _nonrobust(cov, data, cov_kwds):
    _no_options("nonrobust", cov_kwds)
    return Covariance(
        cov,
        "Standard errors from the observed information (inverse of minus the "
        "Hessian of the log-likelihood).",
    )


def _heteroscedasticity_robust(kind: str):
    """HC0 to HC3 as R's ``sandwich::vcovHC`` defines them for a glm: the meat
    ``sum_n s_n s_n' w_n`` with ``w_n`` = 1 (HC0), ``n / (n - p)`` (HC1),
    ``1 / (1 - h_n)`` (HC2) or ``1 / (1 - h_n)^2`` (HC3), ``h_n`` the leverage.
    statsmodels' Logit and GLM return HC0 for all four; these do not."""

    def estimator(cov, data, cov_kwds):
        _no_options(kind, cov_kwds)
        scores = data.unit_scores()
        if kind in ("HC2", "HC3"):
            if data.leverage is None:
                raise ValueError(
                    f"cov_type={kind!r} needs the leverage of every observation, "
                    "which a fit by row blocks (chunksize, Dask input) does not "
                    "keep; use 'HC0' or 'HC1', or fit in memory"
                )
            room = 1.0 - data.leverage()
            scores = scores / (np.sqrt(room) if kind == "HC2" else room)[:, None]
        # statsmodels' own sandwich, from the scores and the bread
        robust = sw.cov_white_simple((scores, cov), use_correction=False)
        n_params = cov.shape[0]
        if kind == "HC1":
            robust = robust * data.nobs / (data.nobs - n_params)
        return Covariance(robust, _HC_DESCRIPTIONS[kind])

    return estimator


_HC_DESCRIPTIONS = {
    "HC0": "Standard errors are heteroscedasticity robust (HC0 sandwich of the "
    "observed information and the outer product of the scores).",
    "HC1": "Standard errors are heteroscedasticity robust (HC1: HC0 times "
    "n / (n - p)).",
    "HC2": "Standard errors are heteroscedasticity robust (HC2: scores divided "
    "by sqrt(1 - h), h the leverage).",
    "HC3": "Standard errors are heteroscedasticity robust (HC3: scores divided "
    "by 1 - h, h the leverage).",
}


def cluster_codes(cov_kwds: dict, n_rows: int) -> np.ndarray:
    """The integer codes of ``cov_type='cluster'``'s labels, ``(n_rows, 1)``
    or ``(n_rows, 2)``, or a ``ValueError`` naming what is wrong with
    ``cov_kwds``: what a fit checks before its runs, so that bad labels are
    refused before the work, not after it."""
    unknown = set(cov_kwds) - {"groups", "use_correction", "df_correction"}
    if unknown:
        raise ValueError(
            f"unknown cov_kwds for cov_type='cluster': {sorted(unknown)}; it takes "
            "'groups', 'use_correction' and 'df_correction' (as statsmodels)"
        )
    if "groups" not in cov_kwds or cov_kwds["groups"] is None:
        raise ValueError(
            "cov_type='cluster' needs the cluster labels: pass "
            "cov_kwds={'groups': labels} with one label per observation (or two "
            "columns of labels for two-way clustering)"
        )
    return _cluster_codes(cov_kwds["groups"], n_rows)


def _cluster(cov, data, cov_kwds):
    codes = cluster_codes(cov_kwds, data.n_rows)
    use_correction = bool(cov_kwds.get("use_correction", True))
    # clusters of observations: a cluster whose rows all weigh 0 has none
    present = slice(None) if data.freq_weights is None else data.freq_weights > 0
    n_groups = [np.unique(column[present]).size for column in codes.T]
    if min(n_groups) < 2:
        raise ValueError(
            "cov_type='cluster' needs at least two clusters with observations "
            f"(rows of positive frequency weight); got {min(n_groups)}"
        )
    robust = _cluster_sandwich(
        np.asarray(data.scores), cov, codes, use_correction, data.nobs, present
    )
    # as statsmodels: t and F inference on min(groups) - 1 degrees of freedom
    df_inference = None
    if cov_kwds.get("df_correction", True) is not False:
        df_inference = float(min(n_groups) - 1)
    counts = " and ".join(str(n) for n in n_groups)
    way = "" if len(n_groups) == 1 else "two-way, "
    return Covariance(
        robust,
        f"Standard errors are robust to cluster correlation (CRV1, {way}{counts} "
        "clusters).",
        df_resid_inference=df_inference,
        options={"use_correction": use_correction, "n_groups": tuple(n_groups)},
    )


def _cluster_sandwich(scores, cov, codes, use_correction, nobs, present):
    """statsmodels' CRV1 sandwich, one-way or two-way (Cameron, Gelbach and
    Miller: ``V_1 + V_2 - V_12``), each part's small-sample factor
    ``G/(G-1) (N-1)/(N-P)`` with ``N`` the observations (the frequency
    weights' sum, which statsmodels would take as the rows)."""
    if codes.shape[1] == 1:
        parts = [(codes[:, 0], 1.0)]
    else:
        both = combine_indices(codes)[0]
        parts = [(codes[:, 0], 1.0), (codes[:, 1], 1.0), (both, -1.0)]
    robust = np.zeros_like(cov)
    n_params = cov.shape[0]
    for group, sign in parts:
        part = sw.cov_cluster((scores, cov), group, use_correction=False)
        if use_correction:
            n_groups = np.unique(group[present]).size
            part = part * (n_groups / (n_groups - 1.0))
            part = part * ((nobs - 1.0) / (nobs - n_params))
        robust += sign * part
    return robust


def _cluster_codes(groups, nobs: int) -> np.ndarray:
    """Integer codes ``(nobs, 1)`` or ``(nobs, 2)`` of the cluster labels."""
    if not hasattr(groups, "shape"):
        # as statsmodels: a sequence is one label array per cluster dimension,
        # or the labels themselves
        groups = np.asarray([np.squeeze(np.asarray(group)) for group in groups]).T
    shape = np.shape(groups)
    if (
        len(shape) not in (1, 2)
        or shape[0] != nobs
        or shape[1:] not in ((), (1,), (2,))
    ):
        raise ValueError(
            f"cov_kwds['groups'] must have one label per observation ({nobs}), in "
            f"one column (or two, for two-way clustering); got shape {shape}"
        )
    frame = pd.DataFrame(groups)
    missing = int(frame.isna().to_numpy().sum())
    if missing:
        raise ValueError(
            f"cov_kwds['groups'] has {missing} missing cluster labels (NaN or "
            "None); give every observation a cluster, or drop those rows before "
            "fitting"
        )
    codes = np.column_stack(
        [pd.factorize(frame.iloc[:, j], sort=True)[0] for j in range(frame.shape[1])]
    )
    if np.any(codes.max(axis=0) < 1):
        raise ValueError("cov_type='cluster' needs at least two clusters")
    return codes


def _no_options(cov_type: str, cov_kwds: dict) -> None:
    if cov_kwds:
        raise ValueError(
            f"cov_type={cov_type!r} takes no cov_kwds, got {sorted(cov_kwds)}"
        )


COV_TYPES = {
    "nonrobust": _nonrobust,
    **{kind: _heteroscedasticity_robust(kind) for kind in _HC_DESCRIPTIONS},
    "cluster": _cluster,
}


def canonical_cov_type(cov_type) -> str:
    """``cov_type`` by its canonical name, in any case (statsmodels takes
    ``"hc0"`` for ``"HC0"``)."""
    if isinstance(cov_type, str):
        cov_type = {name.lower(): name for name in COV_TYPES}.get(
            cov_type.lower(), cov_type
        )
    check_choice(cov_type, "cov_type", tuple(COV_TYPES))
    return cov_type


# what a fit by row blocks can compute: the meat needs only the summed outer
# product of the scores
BLOCK_COV_TYPES = ("nonrobust", "HC0", "HC1")


def compute_covariance(
    cov_type: str, cov: np.ndarray, data: SandwichData | None, cov_kwds: dict
) -> Covariance:
    """Covariance of the parameters for one of :data:`COV_TYPES`, from the
    inverse information ``cov`` (the bread) and the sample's ``data``.

    Parameters held fixed (a flip rate at 0, an L1 fit's zeros) have NaN rows
    and columns in the bread, which any product would spread to every
    parameter: a sandwich is the estimated parameters', the held ones' rows
    and columns NaN again."""
    held = ~np.isfinite(np.diagonal(cov))
    if cov_type == "nonrobust" or not held.any():
        return COV_TYPES[cov_type](cov, data, cov_kwds)
    estimated = np.flatnonzero(~held)
    block = np.ix_(estimated, estimated)
    part = COV_TYPES[cov_type](cov[block], data.of(estimated), cov_kwds)
    full = np.full_like(cov, np.nan)
    full[block] = part.cov
    return replace(part, cov=full)


def generalised_leverage(model, params: np.ndarray, cov: np.ndarray) -> np.ndarray:
    r"""The generalised leverage of each observation,

    .. math::

        h_n = \frac{\partial \mu_n}{\partial \theta}' \, V \,
              \frac{\partial s_n}{\partial y_n}
            = \mu_n (1 - \mu_n)\, \nabla\eta_n' V \nabla\eta_n,

    with :math:`\mu_n = P(y_n = 1 \mid x_n)`, :math:`\eta_n` its log-odds and
    :math:`V` the inverse information of the fit (penalty included). This is
    statsmodels' ``MLEInfluence.hat_matrix_diag``; with ``k=1`` and no penalty
    it is the glm hat value :math:`w_n x_n' (X' W X)^{-1} x_n`.
    """
    log_odds, gradient = model._log_odds_and_jacobian(params, model.exog)
    weight = expit(log_odds) * expit(-log_odds)
    # a parameter held fixed (NaN variance) moves with no observation
    cov = np.where(np.isfinite(cov), cov, 0.0)
    return weight * np.einsum("ij,ij->i", gradient @ cov, gradient)
