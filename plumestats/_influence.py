r"""Influence measures of a fit: ``results.get_influence()``.

statsmodels' ``MLEInfluence`` with PLUME's parameter names. It needs two
derivatives of the model, both analytic here
(``PolyhedralMixtureLogit._deriv_mean_dparams`` and
``_deriv_score_obs_dendog``); its ``summary_frame`` names the DFBETAS after
the design columns, of which PLUME has K copies, so the frame is rebuilt with
the parameter names (``dfb_h1:x1``, ...).

The one-step change of the estimate when row :math:`i` is dropped,
:math:`\hat\theta - \hat\theta_{(i)} \approx -V g_{(i)} / (1 - h_i)`, needs
the gradient :math:`g_{(i)}` of the objective without the row at
:math:`\hat\theta`. statsmodels takes :math:`\sum_n s_n - s_i`, which is
:math:`-s_i` at an unpenalised maximum. The L2 penalty is a sum over the rows
too: on the standardised slopes, :math:`\tfrac\alpha2 W (s_j w_{kj})^2` with
:math:`s_j` the column's own standard deviation is
:math:`\tfrac\alpha2 \sum_n f_n (x_{nj} - m_j)^2 w_{kj}^2` (a factor's
columns, coupled by their correlation, :math:`\tfrac\alpha2 \sum_n f_n
((x_{nT} - m_T)' w_{kT})^2`). Dropping the row takes its term out, times
:math:`W / (W - f_i)` for a centred column (its mean moves with it), so

.. math:: g_{(i)} = \Delta P_i - s_i, \qquad
   \Delta P_i = \alpha f_i\, c_i\, (D \circ d_i d_i')\, w_k

for each face :math:`k`, with :math:`d_i` the row's deviation from the
column means (its values, for a design without an intercept, scaled by the
root mean square, and for a constant column), :math:`D` the penalty's
pattern (each slope, and every pair of a term's columns) and :math:`c_i` the
mean's factor. Taking the penalty's gradient :math:`\sum_n s_n` a share
:math:`f_i / W` a row (the first version of this fix) was right on average
only: an outlying row got a Cook's distance of 0.0000 for the refit's
0.0117.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.outliers_influence import MLEInfluence

from ._compat import cache_readonly
from ._fitting import build_problem

__all__ = ["PolyhedralInfluence", "dropped_row_penalty"]


class PolyhedralInfluence(MLEInfluence):
    """``MLEInfluence`` of a PLUME fit (see
    :meth:`PolyhedralMixtureLogitResults.get_influence`)."""

    def summary_frame(self) -> pd.DataFrame:
        """One row per observation: the DFBETAS of every parameter
        (``dfb_<name>``), Cook's distance, the studentized Pearson residual, the
        generalised leverage and DFFITS, as statsmodels' ``summary_frame``."""
        data = self.results.model.data
        rows = data.row_labels
        columns = [f"dfb_{name}" for name in data.param_names]
        dfbetas = pd.DataFrame(self.dfbetas, columns=columns, index=rows)
        measures = pd.DataFrame(
            {
                "cooks_d": self.cooks_distance[0],
                "standard_resid": self.resid_studentized,
                "hat_diag": self.hat_matrix_diag,
                "dffits_internal": self.d_fittedvalues_scaled,
            },
            index=rows,
        )
        return dfbetas.join(measures)

    @cache_readonly
    def _penalised(self) -> bool:
        """Whether the fit has an L2 penalty (``alpha > 0``; an L1 fit's
        zeros keep statsmodels' measures, NaN where a variance is)."""
        return bool(self.results.mle_settings.get("alpha", 0.0))

    @cache_readonly
    def _held(self) -> bool:
        """Whether some parameters, not all, are held out of the covariance
        (NaN variances) at a maximum: a rank-deficient design's dependent
        columns, a flip rate at its boundary."""
        retvals = self.results.mle_retvals
        if "unidentified" not in retvals and not retvals.get("boundary", False):
            return False
        finite = np.isfinite(np.diagonal(self.results._bread))
        return bool(finite.any() and not finite.all())

    @cache_readonly
    def d_params(self) -> np.ndarray:
        r"""The one-step change of the parameters when an observation is
        dropped, :math:`\hat\theta - \hat\theta_{(i)} = -V g_{(i)} / (1 -
        h_i)`, as statsmodels' ``MLEInfluence``, with :math:`V` the fit's
        inverse information (penalty included). With an L2 penalty
        :math:`g_{(i)}` takes the row's share of the penalty out too (the
        module's docstring; statsmodels' changes measured the penalty,
        about 100 times the refits'). With parameters held
        (:attr:`_held`) the inverse is the generalised one the covariance
        uses (they do not move), where the singular Hessian would move
        unidentified coefficients by arbitrary amounts, and a held flip
        rate's NaN made every row's NaN. A singular information otherwise
        (a separated fit): NaN, as its standard errors.
        """
        if not (self._held or self._penalised):
            try:
                return super().d_params
            except np.linalg.LinAlgError:
                return np.full(np.shape(self.score_obs), np.nan)
        bread = self.results._bread
        if not np.isfinite(np.diagonal(bread)).any():
            return np.full(np.shape(self.score_obs), np.nan)
        without_row = -np.asarray(self.score_obs)
        if self._penalised:
            alpha = float(self.results.mle_settings["alpha"])
            params = np.asarray(self.results.params, dtype=float)
            without_row += dropped_row_penalty(self.results.model, params, alpha)
        bread = np.nan_to_num(bread, nan=0.0)
        return -(without_row @ bread) / (1 - self.hat_matrix_diag)[:, None]

    @cache_readonly
    def cooks_distance(self) -> tuple[np.ndarray, np.ndarray]:
        """statsmodels' Cook's distance and its F p-values. With parameters
        held (:attr:`_held`), over the others only: a rank-deficient design's
        is the fit's without the dependent columns, a flip rate at its
        boundary's PLUME's."""
        if not self._held:
            return super().cooks_distance
        cov = self.results._identified_cov
        free = np.isfinite(np.diagonal(cov))
        d_params = self.d_params[:, free]
        solved = np.linalg.solve(cov[np.ix_(free, free)], d_params.T).T
        cooks = (d_params * solved).sum(1) / free.sum()
        return cooks, stats.f.sf(cooks, free.sum(), self.results.df_resid)

    def resid_score_factor(self):
        """Not defined: statsmodels' score factor is the derivative of the
        log-likelihood in a single linear predictor, and K faces have K."""
        raise NotImplementedError(
            "resid_score_factor needs a single linear predictor (Logit's "
            "score_factor); the per-observation scores are "
            "results.model.score_obs(results.params), and the generalized "
            "residuals results.resid_generalized"
        )


def dropped_row_penalty(model, params: np.ndarray, alpha: float) -> np.ndarray:
    r"""``(nobs, n_params)``: how much each row's removal takes off the
    gradient of the L2 penalty at ``params`` (user units), :math:`\Delta P_i`
    of the module's docstring (zero on the intercepts and extras)."""
    problem, scaling = build_problem(model, alpha)
    metric = problem.metrics.penalty  # one face's pattern
    exog = np.asarray(model.exog, dtype=float)
    nobs, n_cols = exog.shape
    weights = model.freq_weights
    f = np.ones(nobs) if weights is None else np.asarray(weights, dtype=float)
    total = float(f.sum())
    constant = ~(exog != exog[0]).any(axis=0)
    if scaling.intercept_index is None:  # scaled by the root mean square
        centred = np.zeros(n_cols, dtype=bool)
    else:
        centred = ~constant
    deviation = exog - centred * (f @ exog / total)
    with np.errstate(divide="ignore"):  # one row holding all the weight
        moved = np.where(centred, (total / (total - f))[:, None], 1.0)
    scaled = alpha * f[:, None] * moved * deviation
    faces = np.asarray(params, dtype=float)[: model.k * n_cols].reshape(model.k, -1)
    out = np.zeros((nobs, np.size(params)))
    diagonal = metric.diagonal != 0
    for k, face in enumerate(faces):
        change = scaled * deviation * (face * diagonal)
        for columns, _ in metric.blocks:
            # every pair of the term's columns: a correlation of exactly 0
            # (orthogonal contrasts on balanced data) is not 0 without the row
            pairs = 1.0 - np.eye(len(columns))
            change[:, columns] += scaled[:, columns] * (
                (deviation[:, columns] * face[columns]) @ pairs
            )
        out[:, k * n_cols : (k + 1) * n_cols] = change
    return out
