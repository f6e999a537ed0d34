"""Influence measures of a fit: statsmodels' ``MLEInfluence`` with PLUME's
parameter names.

``MLEInfluence`` needs two derivatives of the model, both analytic here
(``PolyhedralMixtureLogit._deriv_mean_dparams`` and
``_deriv_score_obs_dendog``); its ``summary_frame`` names the DFBETAS after the
design columns, of which PLUME has K copies, so the frame is rebuilt with the
parameter names (``dfb_h1:x1``, ...).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit
from statsmodels.stats.outliers_influence import MLEInfluence

__all__ = ["PolyhedralInfluence", "generalised_leverage"]


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
    return weight * np.einsum("ij,ij->i", gradient @ cov, gradient)
