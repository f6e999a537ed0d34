"""Results of a PLUME fit: inference, goodness of fit, prediction helpers."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import xlogy
from statsmodels.base import wrapper as wrap
from statsmodels.base.model import (
    GenericLikelihoodModelResults,
    LikelihoodResultsWrapper,
)

from ._bootstrap import no_bootstrap_message, run_bootstrap
from ._compat import cache_readonly, recompute_removed
from ._covariance import SandwichData, compute_covariance, generalised_leverage, masked
from ._diagnostics import FitDiagnostics
from ._inference import InferenceMixin, check_alpha, held_by_design
from ._row_results import RowResultsMixin
from ._sharing import load_json, to_json
from ._summary import build_summary, build_summary2
from ._validation import check_choice, check_int, require_estimation_data
from ._weights import as_numpy_weights
from .bounds import BoundsMixin

__all__ = ["PolyhedralMixtureLogitResults", "PolyhedralMixtureLogitResultsWrapper"]


class PolyhedralMixtureLogitResults(
    RowResultsMixin, InferenceMixin, BoundsMixin, GenericLikelihoodModelResults
):
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
            # df_model is K r - 1 (r: the design's rank) with or without a
            # constant (statsmodels' discrete models' count), which this
            # generic check does not know
            warnings.filterwarnings(
                "ignore", "df_model \\+ k_constant \\+ k_extra differs", UserWarning
            )
            # and it counts rows, where frequency weights count observations
            warnings.filterwarnings(
                "ignore", "df_resid differs from nobs - k_params", UserWarning
            )
            super().__init__(model, mlefit)
        self.nobs = model.nobs
        if model.freq_weights is not None:
            self._weighted_rows = int(model.exog.shape[0])
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
        self._count_nonzero(getattr(mlefit, "mle_retvals", {}).get("trimmed"))
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
        elif data_sums is not None and data_sums.meat_root is not None:
            data = SandwichData(data_sums.meat_root, self.model.nobs)
        else:
            data = SandwichData(
                self.model.score_obs(self.params),
                self.model.nobs,
                leverage=lambda: self._leverage,
                freq_weights=self.model.freq_weights,
            )
        covariance = compute_covariance(cov_type, self._bread, data, cov_kwds)
        if cov_type != "nonrobust":
            # an unidentified coefficient's variance is NaN in every kind
            unknown = ~np.isfinite(np.diagonal(self.normalized_cov_params))
            self.cov_params_default = masked(covariance.cov, unknown)
            if "unidentified" in self.mle_retvals:
                self._robust_held = covariance.cov
        self.cov_type = cov_type
        self.cov_kwds = covariance.results_kwds(cov_type, cov_kwds, use_t)
        self.use_t = bool(use_t)
        if covariance.df_resid_inference is not None:
            # as statsmodels' cluster option df_correction: t and F on G - 1
            self.df_resid_inference = covariance.df_resid_inference

    def _count_nonzero(self, trimmed) -> None:
        """As statsmodels' ``L1BinaryResults``: after an L1 fit, ``trimmed``
        marks the parameters set to zero, and the degrees of freedom count
        the ``nnz_params`` others only (``trimmed`` is all False otherwise)."""
        self.trimmed = np.zeros(self.k_params, dtype=bool)
        if trimmed is not None:
            self.trimmed = np.asarray(trimmed, dtype=bool)
        self.nnz_params = int((~self.trimmed).sum())
        if trimmed is not None:
            self.df_model = float(self.nnz_params - 1)
            self.df_resid = float(self.model.nobs - self.nnz_params)

    @property
    def _bread(self) -> np.ndarray:
        """The sandwiches' bread: the inverse information, only the held
        parameters NaN (``normalized_cov_params``: the unidentified too)."""
        return vars(self).get("_bread_held", self.normalized_cov_params)

    @property
    def _identified_cov(self) -> np.ndarray:
        """The ``cov_type``'s covariance, only the held parameters NaN (what
        ``plumestats._inference.identified_parts`` reads)."""
        default = self._bread if self.cov_type == "nonrobust" else self.cov_params()
        return vars(self).get("_robust_held", default)

    @cache_readonly
    def _leverage(self) -> np.ndarray:
        return generalised_leverage(
            self.model, np.asarray(self.params, dtype=float), self._bread
        )

    def remove_data(self) -> None:
        """Drop the estimation sample from the results and the model, as
        statsmodels' ``remove_data``: ``summary()`` and predictions on new
        data still work, what needs the sample says that it was removed."""
        super().remove_data()
        # what statsmodels' own remove_data does not know of: the model's
        # cached design, a Dask model's partitions, the cluster labels
        getattr(self.model, "_cache", {}).pop("_user_design", None)
        vars(self.model).pop("_row_source", None)  # the class default: None
        self.cov_kwds = {k: v for k, v in self.cov_kwds.items() if k != "groups"}
        recompute_removed(self)

    def initialize(self, model, params, **kwargs) -> None:
        """statsmodels' ``initialize``: these results at other ``params``.
        What the fit's pass over the rows stored (``llf``, the table of
        ``pred_table``) is recomputed there, and every cached value dropped
        (they stayed the fit's, disagreeing with ``predict``); the
        covariance stays the fit's, as in statsmodels."""
        later = "_llf" in vars(self)  # not the constructor's own call
        if later:
            require_estimation_data(model, "initialize() recomputes llf on", "refit")
        super().initialize(model, params, **kwargs)
        if not later:
            return
        self._cache = {}
        self._llf = float(model.loglike(np.asarray(params, dtype=float)))
        self._confusion = None

    # statsmodels' name for how the results were estimated
    method = "MLE"

    @cache_readonly
    def im_ratio(self) -> np.ndarray:
        """statsmodels' ratio of the outer product of the scores to the
        observed information, ``J^{-1} I`` (TIC's and GBIC's)."""
        return self._information_matrix_ratio()

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

    # (numpy floats, as statsmodels': res.llf.round(3))
    @property
    def llf(self) -> np.float64:
        """Log-likelihood at the estimates."""
        return np.float64(self._llf)

    @property
    def llnull(self) -> np.float64:
        r"""Log-likelihood of the intercept-only logit, in closed form:
        :math:`N [\bar y \log \bar y + (1 - \bar y) \log(1 - \bar y)]`."""
        return np.float64(self._llnull)

    @cache_readonly
    def llr(self) -> float:
        """Likelihood-ratio statistic against the intercept-only model."""
        return 2.0 * (self.llf - self.llnull)

    @cache_readonly
    def llr_pvalue(self) -> float:
        """Chi-squared p-value of ``llr`` on ``df_model`` degrees of freedom.

        ``df_model`` is ``K r - 1`` (``r`` the design's rank, ``p`` unless
        columns are collinear), the parameters beyond the null's one, with or
        without a constant in the design, as ``Logit`` counts them.
        For K > 1 the test is non-regular (the experts are not identified under
        the null), so the p-value is only indicative.
        """
        return np.float64(stats.chi2.sf(self.llr, self.df_model))

    @cache_readonly
    def prsquared(self) -> float:
        """McFadden's pseudo R-squared, ``1 - llf / llnull``."""
        return 1.0 - self.llf / self.llnull

    @cache_readonly
    def df_modelwc(self) -> float:
        """Number of identified parameters, ``df_model + 1``: ``K r`` with ``r``
        the design's rank (``K p`` for a full-rank design), as ``Logit`` counts
        them; after an L1 fit the nonzero ones, ``nnz_params``."""
        return self.df_model + 1.0

    @cache_readonly
    def aic(self) -> float:
        """Akaike information criterion, ``-2 llf + 2 K r``, ``K r`` the
        identified parameters (``df_modelwc``)."""
        return self.info_criteria("aic")

    @cache_readonly
    def bic(self) -> float:
        """Bayesian information criterion, ``-2 llf + log(N) K r``, ``K r`` the
        identified parameters (``df_modelwc``)."""
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
        if isinstance(crit, str):
            crit = crit.lower()  # as statsmodels: "AIC" too
        check_choice(crit, "crit", ("aic", "bic", "tic", "gbic"))
        n_params = self.df_modelwc + dk_params
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
        # a flip rate held at its boundary is no estimate: its row would put
        # the hold's arbitrary curvature into the ratio (-log 1e-8 in GBIC);
        # nor are a rank-deficient design's dependent columns' coefficients
        free = ~held_by_design(self)
        free[-1] &= not self.mle_retvals.get("boundary", False)
        block = np.ix_(free, free)
        neg_hessian = -np.asarray(model.hessian(params))[block]
        if self.cov_type != "nonrobust":
            return np.asarray(self._identified_cov)[block] @ neg_hessian
        outer = self._score_outer_product[block]
        try:
            return np.linalg.solve(neg_hessian, outer)
        except np.linalg.LinAlgError:
            return np.full_like(neg_hessian, np.nan)

    @cache_readonly
    def _score_outer_product(self) -> np.ndarray:
        """``sum_n s_n s_n'`` at the estimates over the observations (a row of
        frequency weight ``f_n`` counted ``f_n`` times, as the rows repeated),
        from statsmodels' cached ``score_obsv``."""
        scores = SandwichData(
            np.asarray(self.score_obsv),
            self.model.nobs,
            freq_weights=as_numpy_weights(self.model.freq_weights),
        ).unit_scores()
        return scores.T @ scores

    @cache_readonly
    def covjac(self) -> np.ndarray:
        """The inverse outer product of the observation scores (statsmodels'
        ``covjac``, over the observations with frequency weights)."""
        return np.linalg.inv(self._score_outer_product)

    @cache_readonly
    def covjhj(self) -> np.ndarray:
        """The sandwich ``H^-1 (S'S) H^-1`` (statsmodels' ``covjhj``, over the
        observations with frequency weights)."""
        hessinv = np.linalg.inv(self.hessv)
        return hessinv @ self._score_outer_product @ hessinv

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

    # ------------------------------------------------------------- sharing
    def to_json(self) -> str:
        """The fit as JSON text, safe to share: see
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.save_json`."""
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
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load_json(cls, path):
        """Load a fit saved by
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.save_json` (as
        :func:`~plumestats.api.load_json`)."""
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
        random_state: int | np.random.Generator | None = None,
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
        resample with one class or a coefficient it leaves unidentified) are
        left out and counted; unidentified coefficients' columns are NaN.

        Parameters
        ----------
        n_boot : int, default 200
            Number of bootstrap replicates.
        random_state : int, numpy Generator or None
            Seed; the same seed gives the same replicates whatever ``n_jobs``.
            ``None`` is a fixed seed, as for the fit: the same data give the
            same replicates.
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
            raise ValueError(no_bootstrap_message(self.model))
        return boot

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
        alpha = check_alpha(alpha)
        return build_summary2(self, yname, xname, title, alpha, float_format)


# per-observation results come back indexed like the data, as for Logit
_ROW_ATTRS = {
    "fittedvalues": "rows",
    "resid_dev": "rows",
    "resid_pearson": "rows",
    "resid_response": "rows",
    "resid_generalized": "rows",
}


class PolyhedralMixtureLogitResultsWrapper(LikelihoodResultsWrapper):
    _wrap_attrs = wrap.union_dicts(LikelihoodResultsWrapper._wrap_attrs, _ROW_ATTRS)
    _wrap_methods = wrap.union_dicts(LikelihoodResultsWrapper._wrap_methods)


wrap.populate_wrapper(
    PolyhedralMixtureLogitResultsWrapper, PolyhedralMixtureLogitResults
)
