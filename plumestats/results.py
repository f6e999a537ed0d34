"""Results of a PLUME fit: inference, goodness of fit, prediction helpers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, xlogy
from statsmodels.base import wrapper as wrap
from statsmodels.base.model import (
    GenericLikelihoodModelResults,
    LikelihoodResultsWrapper,
)

from ._compat import cache_readonly, recompute_removed
from ._covariance import SandwichData, compute_covariance
from ._dask import is_dask_collection
from ._diagnostics import FitDiagnostics
from ._inference import check_alpha
from ._objectives import block_confusion, confusion_table
from ._rows import InMemoryRows
from ._validation import check_choice, check_int, require_estimation_data
from .bounds import HoldoutBound, RademacherBound, holdout_bound, rademacher_bound

__all__ = ["PolyhedralMixtureLogitResults", "PolyhedralMixtureLogitResultsWrapper"]


class PolyhedralMixtureLogitResults(GenericLikelihoodModelResults):
    """Results of :class:`~plumestats.api.PolyhedralMixtureLogit`.

    Mirrors statsmodels' ``Logit`` results (``params``, ``bse``, ``tvalues``,
    ``pvalues``, ``conf_int``, ``cov_params``, ``llf``, ``llnull``, ``llr``,
    ``llr_pvalue``, ``prsquared``, ``aic``, ``bic``, ``pred_table``, ``t_test``,
    ``wald_test``, ``summary``, ``save``, ``load``, ``remove_data``) and adds the
    PLUME-specific ``hyperplanes``, ``decision_function``, ``llf_history`` and
    :meth:`rademacher_bound`.

    A fit by row blocks (``fit(chunksize=...)`` or Dask input) keeps its
    ``chunksize`` (``None`` on Dask, whose partitions are the blocks): what the
    results compute from the data, at the fit or later (``pred_table``), is
    then summed block by block, never held for the whole sample.
    """

    def __init__(
        self,
        model,
        mlefit,
        cov_type="nonrobust",
        cov_kwds=None,
        use_t=None,
        *,
        data_sums=None,
        scaling=None,
    ):
        with warnings.catch_warnings():
            # df_model is K p - 1 with or without a constant (statsmodels'
            # discrete models' count), which this generic check does not know
            warnings.filterwarnings(
                "ignore", "df_model \\+ k_constant \\+ k_extra differs", UserWarning
            )
            super().__init__(model, mlefit)
        # GenericLikelihoodModelResults names its data arrays for remove_data()
        # and then copies mlefit's empty lists over them; name them again, with
        # the per-observation values that may sit in the cache
        self._data_attr = ["endog", "exog"]
        self._data_in_cache = [
            "fittedvalues",
            "resid_response",
            "resid_pearson",
            "resid_dev",
            "score_obsv",  # statsmodels' (nobs, K p) scores, cached on first use
            "_leverage",
        ]
        self.k = model.k
        self.gamma = model.gamma
        self.k_params = model.nparams
        self.outcome_mapping = dict(model.outcome_mapping)
        self.chunksize = getattr(mlefit, "mle_settings", {}).get("chunksize")
        # a fit by blocks keeps the standardisation its blocks were taken in
        blocked = self.chunksize is not None or model._row_source is not None
        self._block_scaling = scaling if blocked else None
        self._set_covariance(cov_type, dict(cov_kwds or {}), data_sums, use_t)
        # What the summary, the bound and pred_table need from the data comes
        # from the fit's one pass over the rows (plumestats._build) and is kept
        # as plain attributes: remove_data() clears every cached value.
        self._radius, self._llf = data_sums.radius, data_sums.llf
        self._confusion = data_sums.confusion
        share = float(data_sums.confusion[1].sum() / model.nobs)
        self._llnull = float(
            model.nobs * (xlogy(share, share) + xlogy(1 - share, 1 - share))
        )

    def _set_covariance(self, cov_type, cov_kwds, data_sums=None, use_t=None):
        if cov_type == "nonrobust":
            data = None
        elif data_sums is not None and data_sums.meat is not None:
            data = SandwichData(_root_of(data_sums.meat), self.model.nobs)
        else:
            data = SandwichData(
                self.model.score_obs(self.params),
                self.model.nobs,
                leverage=lambda: self._leverage,
            )
        covariance = compute_covariance(
            cov_type, self.normalized_cov_params, data, cov_kwds
        )
        if cov_type != "nonrobust":
            self.cov_params_default = covariance.cov
        self.cov_type = cov_type
        self.cov_kwds = {
            **cov_kwds,
            **covariance.options,
            "description": covariance.description,
        }
        self.use_t = bool(use_t)
        if covariance.df_resid_inference is not None:
            # as statsmodels' cluster option df_correction: t and F on G - 1
            self.df_resid_inference = covariance.df_resid_inference

    @cache_readonly
    def _leverage(self) -> np.ndarray:
        from ._covariance import generalised_leverage

        return generalised_leverage(
            self.model, np.asarray(self.params, dtype=float), self.normalized_cov_params
        )

    def remove_data(self) -> None:
        """Drop the estimation sample from the results and the model, as
        statsmodels' ``remove_data``: ``summary()`` and predictions on new
        data still work, what needs the sample says that it was removed."""
        super().remove_data()
        recompute_removed(self)

    # -------------------------------------------------------- fit statistics
    @property
    def converged(self) -> bool:
        """Whether EM converged (see ``mle_retvals["message"]``)."""
        return bool(self.mle_retvals["converged"])

    @property
    def n_iter(self) -> int:
        """Iterations of the best run (EM and Newton steps together)."""
        return int(self.mle_retvals["iterations"])

    @property
    def llf_history(self) -> np.ndarray:
        """Log-likelihood after each iteration of the best run, start included."""
        if "llf_history" not in self.mle_retvals:
            raise ValueError(
                "this fit kept no iteration history (fit(full_output=False)); "
                "refit with full_output=True"
            )
        return self.mle_retvals["llf_history"]

    @property
    def llf(self) -> float:
        """Log-likelihood at the estimates."""
        return self._llf

    @property
    def llnull(self) -> float:
        r"""Log-likelihood of the intercept-only logit, in closed form:
        :math:`N [\bar y \log \bar y + (1 - \bar y) \log(1 - \bar y)]`."""
        return self._llnull

    @cache_readonly
    def llr(self) -> float:
        """Likelihood-ratio statistic against the intercept-only model."""
        return 2.0 * (self.llf - self.llnull)

    @cache_readonly
    def llr_pvalue(self) -> float:
        """Chi-squared p-value of ``llr`` on ``df_model`` degrees of freedom.

        ``df_model`` is ``K p - 1``, the parameters beyond the null's one,
        with or without a constant in the design, as ``Logit`` counts them.
        For K > 1 the test is non-regular (the experts are not identified under
        the null), so the p-value is only indicative.
        """
        return float(stats.chi2.sf(self.llr, self.df_model))

    @cache_readonly
    def prsquared(self) -> float:
        """McFadden's pseudo R-squared, ``1 - llf / llnull``."""
        return 1.0 - self.llf / self.llnull

    @cache_readonly
    def df_modelwc(self) -> int:
        """Number of estimated parameters, ``K * p``."""
        return self.k_params

    @cache_readonly
    def aic(self) -> float:
        """Akaike information criterion, ``-2 llf + 2 K p``."""
        return self.info_criteria("aic")

    @cache_readonly
    def bic(self) -> float:
        """Bayesian information criterion, ``-2 llf + log(N) K p``."""
        return self.info_criteria("bic")

    def info_criteria(self, crit: str, dk_params: float = 0):
        r"""An information criterion, as statsmodels' ``LogitResults.info_criteria``.

        Parameters
        ----------
        crit : {"aic", "bic", "tic", "gbic"}
            ``"aic"`` and ``"bic"`` as :attr:`aic` and :attr:`bic`. ``"tic"``,
            Takeuchi's criterion, :math:`-2\ell + 2 \operatorname{tr}(J^{-1} I)`
            with :math:`J` the observed information and :math:`I` the outer
            product of the per-observation scores (with a robust ``cov_type``,
            :math:`V J` with :math:`V` = ``cov_params()``): the AIC's penalty
            without assuming the model is right, which a K-face polyhedron
            fitted to data that are not polyhedral is not. ``"gbic"``, the
            generalised BIC of Lv and Liu (2014), returned as statsmodels
            returns it: the pair ``(gbic, gbic_p)``.
        dk_params : float
            Added to the number of parameters counted by ``"aic"``, ``"bic"``
            and ``"gbic"``.

        Returns
        -------
        float, or (float, float) for ``"gbic"``
        """
        check_choice(crit, "crit", ("aic", "bic", "tic", "gbic"))
        n_params = self.k_params + dk_params
        if crit == "aic":
            return -2.0 * self.llf + 2.0 * n_params
        if crit == "bic":
            return -2.0 * self.llf + np.log(self.nobs) * n_params
        ratio = self._information_matrix_ratio()
        if crit == "tic":
            return -2.0 * self.llf + 2.0 * np.trace(ratio)
        gbic = (
            -2.0 * self.llf + n_params * np.log(self.nobs) - np.linalg.slogdet(ratio)[1]
        )
        return gbic, gbic + np.trace(ratio)

    def _information_matrix_ratio(self) -> np.ndarray:
        """``J^{-1} I`` (``V J`` under a robust ``cov_type``), for TIC and GBIC."""
        model = self.model
        require_estimation_data(
            model, "tic and gbic need", "refit the model, or use 'aic' or 'bic'"
        )
        params = np.asarray(self.params, dtype=float)
        neg_hessian = -np.asarray(model.hessian(params))
        if self.cov_type != "nonrobust":
            return np.asarray(self.cov_params()) @ neg_hessian
        scores = np.asarray(model.score_obs(params))
        try:
            return np.linalg.solve(neg_hessian, scores.T @ scores)
        except np.linalg.LinAlgError:
            return np.full_like(neg_hessian, np.nan)

    # ------------------------------------------------------------ PLUME extras
    @property
    def hyperplanes(self) -> pd.DataFrame:
        """The K hyperplanes as a ``(K, p)`` DataFrame (rows ``h1..hK``)."""
        columns = list(self.model.exog_names)
        # the first K p parameters: a model with extra ones puts them last
        weights = np.asarray(self.params)[: self.k * len(columns)]
        return pd.DataFrame(
            weights.reshape(self.k, -1),
            index=[f"h{i + 1}" for i in range(self.k)],
            columns=columns,
        )

    def predict(self, exog=None, transform: bool = True, *args, **kwargs):
        """Predictions for new data (``which="mean"``: P(y = 1 | x)).

        With a formula model, ``exog`` is a DataFrame that the formula is applied
        to; rows with missing values come back as NaN (statsmodels' semantics).
        See :meth:`PolyhedralMixtureLogit.predict` for ``which``. A Dask array
        or DataFrame of design rows gives a lazy Dask array.
        """
        if is_dask_collection(exog):  # statsmodels would load it whole
            from ._newdata import align_columns

            exog = align_columns(self.model, exog)  # a Dask DataFrame by name
            return self.model.predict(self.params, exog, *args, **kwargs)
        # a formula that cannot be applied is a ValueError leading with the
        # cause (_transform_predict_exog)
        out = super().predict(exog, transform, *args, **kwargs)
        if isinstance(out, pd.DataFrame):
            # which="gate", "expert" or "linear": one column per hyperplane,
            # named as in params and hyperplanes (statsmodels numbers them)
            out.columns = [f"h{i + 1}" for i in range(out.shape[1])]
        return out

    def _transform_predict_exog(self, exog, transform: bool = True):
        # every prediction path builds its rows here: a DataFrame is matched to
        # the model's columns by name (plumestats._newdata)
        from ._newdata import new_design

        return new_design(self, exog, transform, super()._transform_predict_exog)

    def decision_function(self, exog=None, transform: bool = True):
        """``min_k w_k' x``: non-negative inside the polyhedron (class 1)."""
        return self.predict(exog, transform=transform, which="decision")

    def get_prediction(
        self,
        exog=None,
        transform: bool = True,
        which: str = "mean",
        row_labels=None,
        average: bool = False,
        agg_weights=None,
    ):
        r"""Predicted P(y = 1 | x) with standard errors and confidence intervals.

        As statsmodels' ``LogitResults.get_prediction``: the delta method on the
        log-odds, :math:`\operatorname{se}(\operatorname{logit} P)^2 = J \Sigma
        J'` with :math:`J` the analytic gradient of the log-odds in the
        parameters and :math:`\Sigma` = ``cov_params()`` (so ``cov_type`` is
        respected); intervals are formed on the log-odds and mapped back, so
        they stay inside (0, 1). With ``k=1`` the results equal ``Logit``'s.

        Parameters
        ----------
        exog : array_like or DataFrame, optional
            Rows to predict at (the estimation sample by default). With a
            formula model, a DataFrame the formula is applied to; rows with
            missing values are dropped, as statsmodels does here.
        transform : bool, default True
            Apply the formula to ``exog``.
        which : {"mean"}
            P(y = 1 | x), the only prediction with inference; the others are in
            :meth:`predict`.
        row_labels : sequence, optional
            Labels of the rows (default: the index of ``exog``).
        average : bool, default False
            Predict the mean of P(y = 1 | x) over the rows instead (delta
            method on the probability scale, as statsmodels).
        agg_weights : array_like, optional
            With ``average``: the prediction is ``mean(agg_weights * P)``.

        Returns
        -------
        plumestats._prediction.PredictionResults
            statsmodels' ``PredictionResultsMonotonic`` (``predicted``,
            ``se``, ``conf_int(alpha=...)`` and ``summary_frame(alpha=...)``,
            columns ``predicted``, ``se``, ``ci_lower``, ``ci_upper``), with
            ``alpha`` checked to lie in (0, 1).
        """
        from ._prediction import prediction_results

        if which != "mean":
            raise ValueError(
                "get_prediction supports which='mean' (P(y = 1 | x)), got "
                f"{which!r}; use results.predict(exog, which=...) for the others"
            )
        if is_dask_collection(exog) or (
            exog is None and self.model._row_source is not None
        ):
            raise TypeError(
                "get_prediction needs in-memory rows: pass exog as a NumPy array "
                "or DataFrame (e.g. a Dask collection's .compute() sample)"
            )
        return prediction_results(
            self, exog, transform, row_labels, average, agg_weights
        )

    def _log_odds_and_jacobian(self, design: np.ndarray, jacobian: bool = True):
        """``logit P(y = 1 | x)`` per design row and its gradient in ``params``."""
        params = np.asarray(self.params)
        return self.model._log_odds_and_jacobian(params, design, jacobian)

    # ------------------------------------------------------------- residuals
    def _sample_design(self) -> np.ndarray:
        if self.model.exog is None or self.model._row_source is not None:
            raise ValueError(
                "residuals need the estimation sample in memory; this fit has "
                "none (remove_data() or Dask input): compute them from predict()"
            )
        return np.asarray(self.model.exog)

    @cache_readonly
    def fittedvalues(self) -> np.ndarray:
        """Log-odds of P(y = 1 | x) on the estimation sample (at K = 1 the
        linear predictor, ``Logit``'s ``fittedvalues``)."""
        return self._log_odds_and_jacobian(self._sample_design(), False)[0]

    @cache_readonly
    def resid_response(self) -> np.ndarray:
        """Response residuals ``y - P(y = 1 | x)``."""
        return np.asarray(self.model.endog) - expit(self.fittedvalues)

    @cache_readonly
    def resid_pearson(self) -> np.ndarray:
        r"""Pearson residuals :math:`(y - P) / \sqrt{P (1 - P)}`, in the
        cancellation-free form :math:`e^{-\eta/2}` for y = 1 and
        :math:`-e^{\eta/2}` for y = 0 (:math:`\eta` the log-odds)."""
        half = 0.5 * self.fittedvalues
        with np.errstate(over="ignore"):  # a certain, wrong prediction: inf
            return np.where(
                np.asarray(self.model.endog) == 1, np.exp(-half), -np.exp(half)
            )

    @cache_readonly
    def resid_dev(self) -> np.ndarray:
        r"""Deviance residuals :math:`\operatorname{sign}(y - P)
        \sqrt{-2 \log P(y \mid x)}`."""
        from ._prediction import outcome_log_probability

        observed = np.asarray(self.model.endog)
        log_lik = outcome_log_probability(self.fittedvalues, observed)
        return np.where(observed == 1, 1.0, -1.0) * np.sqrt(-2.0 * log_lik)

    def get_influence(self):
        """Influence and outlier measures: statsmodels' ``MLEInfluence``
        (``hat_matrix_diag``, ``cooks_distance``, ``d_params``,
        ``resid_studentized``, ``summary_frame()``), as ``Logit`` has it.

        The generalised leverage uses the analytic derivatives of P(y = 1 | x)
        and of the observation scores in the outcome; with ``k=1`` every
        measure equals ``Logit``'s.
        """
        from ._covariance import PolyhedralInfluence

        self._sample_design()
        # the leverage of the fit's own information (penalty included), which
        # cov_type="HC2"/"HC3" use too
        return PolyhedralInfluence(self, hat_matrix_diag=self._leverage)

    def get_distribution(self, exog=None, transform: bool = True):
        """The predicted distribution of the outcome: a frozen
        ``scipy.stats.bernoulli`` with ``p = P(y = 1 | x)`` per row (as
        statsmodels' ``get_distribution``)."""
        prob = np.asarray(self.predict(exog, transform=transform), dtype=float)
        return stats.bernoulli(prob)

    def get_margeff(
        self,
        at: str = "overall",
        method: str = "dydx",
        atexog=None,
        dummy: bool = False,
        count: bool = False,
    ):
        """Marginal effects on P(y = 1 | x), with delta-method standard errors.

        As statsmodels' ``LogitResults.get_margeff``; the derivatives of PLUME's
        prediction are analytic (``plumestats._margeff`` holds them). With ``k=1``
        the effects equal ``Logit``'s.

        Parameters
        ----------
        at : {"overall", "mean", "median", "zero", "all"}
            Average of the effects over the sample, effects at the mean (median,
            zero) of the design, or every observation's (no inference).
        method : {"dydx", "eyex", "dyex", "eydx"}
            Derivative, elasticity or semi-elasticities.
        atexog : dict or array_like, optional
            Values to hold columns at, ``{column index or name: value}``, or a
            whole design.
        dummy : bool
            Treat 0/1 columns as discrete: the change from 0 to 1.
        count : bool
            Treat non-negative integer columns as counts: half the change from
            x - 1 to x + 1.

        Returns
        -------
        PolyhedralMargins
            With ``margeff``, ``margeff_se``, ``tvalues``, ``pvalues``,
            ``conf_int()``, ``summary_frame()`` and ``summary()``.
        """
        from ._margeff import PolyhedralMargins

        return PolyhedralMargins(self, (at, method, atexog, dummy, count))

    def active_face(self, exog=None):
        """The face that owns each observation: the hyperplane with the smallest
        score.

        Parameters
        ----------
        exog : array_like or DataFrame, optional
            New data (a DataFrame the formula is applied to, for a formula
            model); the estimation data by default.

        Returns
        -------
        Series or ndarray of int, shape (n,)
            0-based position of the owning hyperplane (``0`` is ``h1``); the
            polyhedron's boundary there is that face. Rows with missing
            features give ``-1``.
        """
        from ._interpret import active_face

        return active_face(self, exog)

    def gate_probabilities(self, exog=None):
        r"""Gate probabilities :math:`g_k(x) = \operatorname{softmax}_k(-\gamma
        w_k'x)`.

        Parameters
        ----------
        exog : array_like or DataFrame, optional
            As for :meth:`active_face`.

        Returns
        -------
        DataFrame or ndarray, shape (n, K)
            Columns ``h1..hK``; rows sum to one. One-hot for the hard model.
        """
        from ._interpret import gate_probabilities

        return gate_probabilities(self, exog)

    def responsibilities(self):
        r"""EM posterior of each expert at the estimates, on the estimation data.

        .. math::

            \pi_{nk} = \frac{g_k(x_n)\,\sigma(y_n w_k'x_n)}
                            {\sum_j g_j(x_n)\,\sigma(y_n w_j'x_n)}

        with :math:`y_n = \pm 1` for the class inside / outside the polyhedron.

        Returns
        -------
        DataFrame or ndarray, shape (nobs, K)
            Columns ``h1..hK``, indexed like the estimation data when it was
            pandas.
        """
        from ._interpret import responsibilities

        return responsibilities(self)

    def face_shares(self) -> pd.DataFrame:
        """For each hyperplane, the observations it owns and their class mix.

        Returns
        -------
        DataFrame
            One row per hyperplane (``h1..hK``) with ``nobs`` (observations
            whose smallest score is that face's), ``share`` (``nobs / N``),
            ``gate_share`` (mean gate probability, the order in which experts
            are reported), one count column ``n_<label>`` per outcome label and
            ``frac_<label>``, the fraction of the face's observations in the
            class coded 1.
        """
        from ._interpret import face_shares

        return face_shares(self)

    def pred_table(self, threshold: float = 0.5) -> np.ndarray:
        """Confusion matrix: rows observed 0/1, columns predicted 0/1.

        ``pred_table[i, j]`` counts observations of class ``i`` predicted as ``j``,
        as in statsmodels' ``Logit`` results. The table at 0.5 comes from the
        fit's pass over the rows; another threshold reads them again (by
        blocks for a fit by blocks).
        """
        if threshold == 0.5 and getattr(self, "_confusion", None) is not None:
            return np.array(self._confusion)
        source = self._row_source()
        if source is not None:
            internal = source.scaling.to_internal(
                np.reshape(self.params[: self.k * self.model.k_vars], (self.k, -1))
            ).ravel()
            params = np.append(internal, self.params[self.k * self.model.k_vars :])
            return source.reduce(
                kernel=block_confusion,
                objective=self.model.spec.objective(),
                params=params,
                threshold=threshold,
            )["confusion"]
        require_estimation_data(
            self.model,
            "pred_table() counts the classifications of",
            "refit the model, or compare predict(exog) with the outcomes yourself",
        )
        observed = np.asarray(self.model.endog)
        predicted = np.asarray(self.model.predict(self.params)) > threshold
        return confusion_table(observed, predicted)

    def _row_source(self):
        """The row blocks of a fit by blocks (``None`` for an in-memory fit)."""
        if self.model._row_source is not None:  # Dask partitions
            return self.model._row_source
        scaling = getattr(self, "_block_scaling", None)  # None: fits pickled before
        if scaling is None or self.model.exog is None:
            return None
        return InMemoryRows(
            self.model.exog, self.model._y_inside, scaling, self.chunksize
        )

    def rademacher_bound(self, delta: float = 0.05) -> RademacherBound:
        """The paper's Rademacher generalisation bound at the estimates.

        See :func:`~plumestats.api.rademacher_bound` for the formula and for how
        the bias terms are treated (augmented vectors). Not defined for the hard
        model (gamma is infinite there).
        """
        if not np.isfinite(self.gamma):
            raise ValueError(
                "the Rademacher bound is for PLUME's soft gate; with hard gating "
                "(gamma = infinity) it is infinite"
            )
        return rademacher_bound(
            self.hyperplanes.to_numpy(),
            None,
            -self.llf / self.nobs,
            self.gamma,
            delta,
            radius=self._radius,
            nobs=self.nobs,
        )

    # ------------------------------------------------------------- sharing
    def to_json(self) -> str:
        """The fit as JSON text, safe to share: see
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.save_json`."""
        from ._sharing import to_json

        return to_json(self)

    def save_json(self, path) -> None:
        """Save the fit as a JSON file that is safe to share.

        Unlike a pickle (:meth:`save`), loading the file cannot run code. It
        holds what the fit keeps after ``remove_data()``: the estimates, their
        covariance (``cov_type`` as fitted), the statistics of the summary,
        the settings, and for a formula model the design patsy needs to apply
        the formula to new data (levels, contrasts, and the state of
        ``center``, ``standardize``, ``scale``, ``bs``, ``cr``, ``cc`` and
        ``te``). :func:`~plumestats.api.load_json` reads it back into results
        on which ``predict`` (new DataFrames through the formula),
        ``get_prediction``, ``summary``, ``conf_int`` and the tests work.

        Parameters
        ----------
        path : str or path-like
            The file to write (``.json`` by convention).

        Raises
        ------
        ValueError
            For a formula outside the safe grammar
            (:func:`~plumestats.api.check_safe_formula`; loading the file
            would have to run it as code): save a pickle instead.

        Notes
        -----
        Not exported: the estimation data (a fit on Dask collections loads
        as an in-memory fit without data), a bootstrap's replicates and
        parameter paths (``retall``). The file has a ``format_version``; a
        plumestats that reads an older version refuses a newer one.
        """
        from pathlib import Path

        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load_json(cls, path):
        """Load a fit saved by
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.save_json` (as
        :func:`~plumestats.api.load_json`)."""
        from ._sharing import load_json

        return load_json(path)

    # ------------------------------------------------- trusting the inference
    @property
    def diagnostics(self) -> FitDiagnostics:
        """Is the optimum a regular interior maximum? (see
        ``FitDiagnostics``).

        The condition number and smallest eigenvalue of the observed information,
        the largest absolute score and the Newton decrement at the estimates, the
        observations each expert owns, and ``flags`` naming what is wrong
        (separation, a singular or nearly singular information, a collapsed
        expert, no convergence). With any flag raised ``bse`` should not be taken
        at face value; the summary lists the flags under the table.
        """
        return self._diagnostics

    def bootstrap(
        self,
        n_boot: int = 200,
        *,
        random_state: int | None = None,
        n_jobs: int | None = 1,
        progress: bool = False,
    ):
        """Nonparametric bootstrap standard errors and percentile intervals.

        Each replicate resamples the observations with replacement and refits the
        model with the same settings (``k``, ``gamma``, ``alpha``, tolerances),
        started from the fitted parameters. Because the likelihood is invariant
        to relabelling the experts, each replicate's experts are then matched to
        the fit's by the Hungarian algorithm on the mean squared difference of
        their scores (``plumestats._bootstrap.align_experts``). Replicates
        whose fit fails (no convergence, separation, a singular information, a
        resample with one class) are left out and counted.

        Parameters
        ----------
        n_boot : int, default 200
            Number of bootstrap replicates.
        random_state : int, optional
            Seed; the same seed gives the same replicates whatever ``n_jobs``.
        n_jobs : int or None, default 1
            Worker processes, by joblib's rules: 1 or None runs in this
            process, -1 uses every core, -2 all but one (``n_cpus + 1 +
            n_jobs``); 0 is refused. Anything but 1 needs joblib (``pip install
            "plumestats[parallel]"``). The replicates go to the workers in
            chunks, each with one copy of the data; works from a script
            without ``if __name__ == "__main__":`` and in Jupyter.
        progress : bool, default False
            Show a progress bar of the replicates on standard error
            (``tqdm.auto``, a widget in Jupyter; plain lines if tqdm is not
            installed, ``pip install "plumestats[progress]"``).

        Returns
        -------
        BootstrapResults
            ``bse``, ``conf_int(alpha)`` (percentile), the aligned replicates
            ``params``, and ``n_failed``/``failed_share``,
            ``n_switched``/``switched_share``. Also kept on the results, for
            ``conf_int(method="bootstrap")`` and ``summary(cov_type="bootstrap")``.

        Notes
        -----
        Unlike statsmodels' ``GenericLikelihoodModelResults.bootstrap`` this
        resamples with a seed, aligns the experts and returns an object, not a
        tuple.
        """
        from ._bootstrap import run_bootstrap

        n_boot = check_int(n_boot, "n_boot", minimum=2)
        require_estimation_data(
            self.model, "the bootstrap needs", "refit the model to bootstrap it"
        )
        self._bootstrap = run_bootstrap(
            self, n_boot, random_state, n_jobs, progress=progress
        )
        return self._bootstrap

    def _require_bootstrap(self):
        boot = getattr(self, "_bootstrap", None)
        if boot is None:
            raise ValueError(
                "no bootstrap has been run: call results.bootstrap(n_boot=...) first"
            )
        return boot

    def conf_int(self, alpha: float = 0.05, *, method: str = "wald"):
        """Confidence intervals of the parameters.

        Parameters
        ----------
        alpha : float
            One minus the confidence level, strictly between 0 and 1.
        method : {"wald", "bootstrap"}
            ``"wald"``: ``params +- z * bse`` with the fit's ``cov_type``;
            ``"bootstrap"``: percentile intervals of the last
            :meth:`bootstrap`.
        """
        check_choice(method, "method", ("wald", "bootstrap"))
        alpha = check_alpha(alpha)
        if method == "wald":
            return super().conf_int(alpha)
        return self._require_bootstrap().conf_int(alpha).to_numpy()

    def t_test(self, r_matrix, cov_p=None, use_t=None):
        """Wald (z) tests of linear constraints, as statsmodels' ``t_test``.

        Parameters
        ----------
        r_matrix : str, list of str, dict, array_like or (R, q) tuple
            The constraints; by name, e.g. ``"h1:x1 = h2:x1"`` (with ``k=1``
            also ``"x1 = 0"``). A name that is not a parameter's gives a
            ``ValueError`` that lists the valid ones.
        cov_p : array_like, optional
            Covariance to use instead of ``cov_params()``.
        use_t : bool, optional
            Use the t distribution (default: the fit's ``use_t``, False).

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
        """
        from ._inference import parse_constraints

        r_matrix = parse_constraints(self.model, r_matrix)
        return super().t_test(r_matrix, cov_p=cov_p, use_t=use_t)

    def f_test(self, r_matrix, cov_p=None, invcov=None):
        """Joint F test of linear constraints, as statsmodels' ``f_test``;
        ``r_matrix`` as for
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test`."""
        from ._inference import parse_constraints

        r_matrix = parse_constraints(self.model, r_matrix)
        return super().f_test(r_matrix, cov_p=cov_p, invcov=invcov)

    def wald_test(
        self,
        r_matrix,
        cov_p=None,
        invcov=None,
        use_f=None,
        df_constraints=None,
        scalar: bool = True,
    ):
        """Joint Wald test of linear constraints, as statsmodels'
        ``wald_test``; ``r_matrix`` as for
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test`."""
        from ._inference import parse_constraints

        r_matrix = parse_constraints(self.model, r_matrix)
        return super().wald_test(
            r_matrix,
            cov_p=cov_p,
            invcov=invcov,
            use_f=use_f,
            df_constraints=df_constraints,
            scalar=scalar,
        )

    def t_test_pairwise(self, term_name, *args, **kwargs):
        """statsmodels' pairwise tests of a categorical term's levels, for
        ``k=1``; with several hyperplanes a level has one coefficient in each,
        so name them in
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test` instead
        (``"h2:C(g)[T.b] = 0"``)."""
        if self.k > 1:
            raise NotImplementedError(
                f"t_test_pairwise compares the levels of one coefficient block; "
                f"with k={self.k} each level has one coefficient per hyperplane: "
                "test them with t_test, naming the hyperplane, e.g. "
                "'h1:C(g)[T.c] - h1:C(g)[T.b] = 0'"
            )
        return super().t_test_pairwise(term_name, *args, **kwargs)

    def wald_test_terms(
        self,
        skip_single: bool = False,
        extra_constraints=None,
        combine_terms=None,
        scalar: bool = True,
    ):
        """Joint Wald tests that each term's coefficients are zero in every
        hyperplane.

        As statsmodels' ``wald_test_terms``, whose terms are column slices of
        the design, i.e. of the first hyperplane's block only. Here a term's
        test covers its columns in all K blocks, ``K * (columns of the term)``
        constraints; with ``k=1`` the table equals ``Logit``'s.

        Parameters
        ----------
        skip_single : bool, default False
            Leave out the terms of a single design column (for K > 1 their
            test still has K constraints, one per hyperplane).
        extra_constraints : list of (str, ndarray), optional
            More tests, as ``(name, constraint matrix)`` with one column per
            parameter (``len(params)``).
        combine_terms : list of str, optional
            Each string gives one more joint test, of every term whose name
            contains it (of every column, without a formula), in every
            hyperplane.
        scalar : bool, default True
            Return each statistic as a float (passed to :meth:`wald_test`).

        Returns
        -------
        statsmodels.stats.contrast.WaldTestResults
            ``table``: a DataFrame with one row per test and the columns
            ``statistic``, ``pvalue`` and ``df_constraint`` (printed as
            ``chi2``, ``P>chi2``, ``df constraint``).

        Notes
        -----
        Terms come from the formula (``Intercept``, ``C(g)``, ``x1``, ...);
        without one each design column is a term. The label-flip model's
        ``flip_logit`` belongs to no term; test it with :meth:`wald_test`.
        """
        from statsmodels.stats.contrast import WaldTestResults

        from ._inference import term_constraints

        constraints, combined = term_constraints(
            self.model, len(self.params), bool(skip_single), combine_terms or []
        )
        use_t = bool(self.use_t)
        rows, index = [], []
        for name, matrix in [*constraints, *combined, *(extra_constraints or [])]:
            test = self.wald_test(matrix, scalar=scalar)
            # the rank-adjusted number of constraints, as statsmodels reports
            df_constraint = int(test.df_num if use_t else test.df_denom)
            row = [test.statistic, test.pvalue, df_constraint]
            if use_t:
                row.append(test.df_denom)
            rows.append(row)
            index.append(name)
        columns = ["statistic", "pvalue", "df_constraint"]
        if use_t:
            columns.append("df_denom")
        table = pd.DataFrame(rows, index=index, columns=columns)
        return WaldTestResults(None, ["chi2", "F"][use_t], None, table=table)

    def holdout_bound(
        self, test_data, delta: float = 0.05, threshold: float = 0.5
    ) -> HoldoutBound:
        """Test-set bound on the misclassification rate (binomial tail inversion).

        With probability at least ``1 - delta`` over a test sample drawn
        independently of the fit, the classifier ``P(y = 1 | x) > threshold``
        misclassifies at most a share ``bound`` of the population; see
        :func:`~plumestats.api.holdout_bound`. A non-vacuous companion to
        :meth:`rademacher_bound`, which needs no fresh data but is almost always
        above 1 and changes with the units of the features.

        Parameters
        ----------
        test_data : DataFrame or tuple (endog, exog)
            Held-out data: for a formula model a DataFrame with the outcome and
            the formula's columns; otherwise (or also) a pair ``(endog, exog)``
            with the outcome coded as in the fit. Rows with missing values are
            dropped.
        delta : float
            One minus the confidence level, in (0, 1).
        threshold : float
            A point is classified as 1 when ``P(y = 1 | x) > threshold``.

        Returns
        -------
        HoldoutBound
        """
        observed, probability = _test_outcomes(self, test_data)
        errors = int(np.sum((probability > threshold) != (observed == 1)))
        return holdout_bound(errors, observed.size, delta)

    def summary(
        self,
        yname=None,
        xname=None,
        title=None,
        alpha: float = 0.05,
        cov_type: str | None = None,
    ):
        """Summary tables: a header and one coefficient block per hyperplane.

        Parameters
        ----------
        yname : str, optional
            Name of the outcome.
        xname : list of str, optional
            Names of the design columns (one block's rows, the same for every
            hyperplane) or of every parameter (as ``params.index``); any other
            length is a ``ValueError``.
        title : str, optional
            Title of the summary.
        alpha : float
            Significance level of the confidence intervals.
        cov_type : {None, "bootstrap"}
            ``None``: the fit's covariance; ``"bootstrap"``: standard errors,
            z statistics and percentile intervals from the last
            :meth:`bootstrap`.
        """
        from ._summary import build_summary

        if cov_type is not None and cov_type != "bootstrap":
            raise ValueError(
                f"summary(cov_type=...) takes None or 'bootstrap', got {cov_type!r}; "
                "for another covariance refit with fit(cov_type=...)"
            )
        alpha = check_alpha(alpha)
        boot = self._require_bootstrap() if cov_type == "bootstrap" else None
        return build_summary(
            self, yname=yname, xname=xname, title=title, alpha=alpha, bootstrap=boot
        )

    def summary2(
        self,
        yname=None,
        xname=None,
        title=None,
        alpha: float = 0.05,
        float_format: str = "%.4f",
    ):
        """statsmodels' alternative summary (``Logit.summary2``): a model table
        and one table of every hyperplane's coefficients, as DataFrames
        (``.tables``) that also print as text, LaTeX and HTML.

        Parameters
        ----------
        yname : str, optional
            Name of the outcome.
        xname : list of str, optional
            Names of the design columns (one block's rows, as for
            :meth:`summary`, prefixed ``h<k>:`` here) or of every parameter;
            any other length is a ``ValueError``.
        title : str, optional
            Title of the summary.
        alpha : float
            Significance level of the confidence intervals.
        float_format : str
            Format of the numbers.
        """
        from ._summary import build_summary2

        alpha = check_alpha(alpha)
        return build_summary2(self, yname, xname, title, alpha, float_format)


def _root_of(meat: np.ndarray) -> np.ndarray:
    """A square matrix ``R`` with ``R'R = meat``: it stands for the observation
    scores ``S`` (a sandwich needs them only through ``S'S``), so a fit by
    blocks passes its summed ``S'S`` without an ``(nobs, K p)`` array."""
    if not np.all(np.isfinite(meat)):  # overflowed scores: NaN, as in memory
        return np.full_like(meat, np.nan)
    eigenvalues, vectors = np.linalg.eigh(0.5 * (meat + meat.T))
    # rounding can leave a zero eigenvalue of the semi-definite meat at -1e-17
    return (vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))).T


def _test_outcomes(results, test_data) -> tuple[np.ndarray, np.ndarray]:
    """Observed 0/1 outcomes and P(y = 1 | x) on held-out data, complete rows."""
    model = results.model
    if isinstance(test_data, tuple) and len(test_data) == 2:
        endog, exog = test_data
    elif isinstance(test_data, pd.DataFrame) and getattr(model, "formula", None):
        outcome = model.formula.split("~")[0].strip()
        if outcome not in test_data.columns:
            raise ValueError(
                f"the test data have no outcome column {outcome!r} (the formula's "
                "left-hand side); pass test_data=(endog, exog) instead"
            )
        endog, exog = test_data[outcome], test_data
    else:
        raise TypeError(
            "test_data must be a DataFrame (formula models) or a pair (endog, "
            f"exog); got {type(test_data).__name__}"
        )
    probability = np.asarray(results.predict(exog), dtype=float).ravel()
    labels = pd.Series(np.asarray(endog).ravel())
    if labels.size != probability.size:
        raise ValueError(
            f"endog has {labels.size} rows but exog {probability.size}; they must "
            "be the same observations"
        )
    mapping = results.outcome_mapping
    # a text outcome "True"/"False" reaches the fit through patsy as booleans:
    # a label is also known by its text
    by_text = {str(label): code for label, code in mapping.items()}
    observed = labels.map(
        lambda label: mapping.get(label, by_text.get(str(label), np.nan))
    )
    unknown = sorted({str(v) for v in labels[observed.isna() & labels.notna()]})
    if unknown:
        raise ValueError(
            f"the test outcome has labels the fit did not see: {unknown[:5]}; "
            f"expected {list(results.outcome_mapping)}"
        )
    complete = observed.notna().to_numpy() & np.isfinite(probability)
    if not complete.any():
        raise ValueError("the test data have no complete rows (outcome and features)")
    return observed.to_numpy(dtype=float)[complete], probability[complete]


# per-observation results come back indexed like the data, as for Logit
_ROW_ATTRS = {
    "fittedvalues": "rows",
    "resid_dev": "rows",
    "resid_pearson": "rows",
    "resid_response": "rows",
}


class PolyhedralMixtureLogitResultsWrapper(LikelihoodResultsWrapper):
    _wrap_attrs = wrap.union_dicts(LikelihoodResultsWrapper._wrap_attrs, _ROW_ATTRS)
    _wrap_methods = wrap.union_dicts(LikelihoodResultsWrapper._wrap_methods)


wrap.populate_wrapper(
    PolyhedralMixtureLogitResultsWrapper, PolyhedralMixtureLogitResults
)
