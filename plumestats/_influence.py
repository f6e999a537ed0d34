"""Influence measures of a fit: statsmodels' ``MLEInfluence`` with PLUME's
parameter names.

``MLEInfluence`` needs two derivatives of the model, both analytic here
(``PolyhedralMixtureLogit._deriv_mean_dparams`` and
``_deriv_score_obs_dendog``); its ``summary_frame`` names the DFBETAS after the
design columns, of which PLUME has K copies, so the frame is rebuilt with the
parameter names (``dfb_h1:x1``, ...).
"""

from __future__ import annotations

import pandas as pd
from statsmodels.stats.outliers_influence import MLEInfluence

__all__ = ["PolyhedralInfluence"]


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
