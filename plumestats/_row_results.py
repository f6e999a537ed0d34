"""What a fit says about rows: predictions and their inference, residuals,
influence, marginal effects, and which face owns which observation (the gate,
the responsibilities and the face shares).

:class:`RowResultsMixin` holds these methods of
:class:`~plumestats.results.PolyhedralMixtureLogitResults`; the module-level
functions compute the faces' ownership.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ._compat import cache_readonly
from ._dask import is_dask_collection
from ._influence import PolyhedralInfluence
from ._margeff import PolyhedralMargins
from ._newdata import align_columns, new_design
from ._objectives import block_confusion
from ._prediction import (
    LinearPredictionResults,
    outcome_log_probability,
    prediction_results,
    variance_results,
)
from ._rows import InMemoryRows
from ._validation import require_estimation_data
from ._weights import weighted_table

__all__ = ["RowResultsMixin"]


class RowResultsMixin:
    """The row-level methods of
    :class:`~plumestats.results.PolyhedralMixtureLogitResults`."""

    def predict(self, exog=None, transform: bool = True, *args, **kwargs):
        """Predictions for new data (``which="mean"``: P(y = 1 | x)).

        With a formula model, ``exog`` is a DataFrame that the formula is applied
        to; rows with missing values come back as NaN (statsmodels' semantics).
        See :meth:`PolyhedralMixtureLogit.predict` for ``which``. A Dask array
        or DataFrame of design rows gives a lazy Dask array.
        """
        if is_dask_collection(exog):  # statsmodels would load it whole
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
        return new_design(self, exog, transform, super()._transform_predict_exog)

    def decision_function(self, exog=None, transform: bool = True):
        """``min_k w_k' x``: non-negative inside the polyhedron (the
        ``inside`` class)."""
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
            missing values are dropped there, as statsmodels does, and kept
            as NaN in rows of the design given directly (as Logit's).
        transform : bool, default True
            Apply the formula to ``exog``.
        which : {"mean", "var", "linear"}
            P(y = 1 | x); ``"var"``, its Bernoulli variance ``P (1 - P)``
            (delta-method standard errors, normal intervals, as
            ``Logit``'s); at K = 1 also ``"linear"``, the linear predictor
            ``x'w`` (its intervals symmetric, as ``Logit``'s; with
            ``inside=0`` minus the log-odds; not for label flips). The
            others, and the K scores at K > 1, are in :meth:`predict`.
        row_labels : sequence, optional
            Labels of the rows (default: the index of ``exog``).
        average : bool, default False
            Predict the mean of P(y = 1 | x) over the rows instead (delta
            method on the probability scale, as statsmodels).
        agg_weights : array_like, optional
            With ``average``: the prediction is ``mean(agg_weights * P)``.
            On the estimation sample of a model with ``freq_weights`` the
            default is the mean over the observations, ``sum f P / sum f``.

        Returns
        -------
        plumestats._prediction.PredictionResults
            statsmodels' ``PredictionResultsMonotonic`` (``predicted``,
            ``se``, ``conf_int(alpha=...)`` and ``summary_frame(alpha=...)``,
            columns ``predicted``, ``se``, ``ci_lower``, ``ci_upper``), with
            ``alpha`` checked to lie in (0, 1); for ``"var"`` and
            ``"linear"`` its base, ``PredictionResultsBase``, as ``Logit``
            (normal or t intervals, ``alpha`` checked alike).
        """
        _check_which(which, self.model, average)
        if is_dask_collection(exog) or (
            exog is None and self.model._row_source is not None
        ):
            raise TypeError(
                "get_prediction needs in-memory rows: pass exog as a NumPy array "
                "or DataFrame (e.g. a Dask collection's .compute() sample)"
            )
        weights = self.model.freq_weights
        if average and exog is None and agg_weights is None and weights is not None:
            agg_weights = weights * (len(weights) / np.sum(weights))
        if which == "var":
            return variance_results(
                self, exog, transform, row_labels, average, agg_weights
            )
        out = prediction_results(
            self, exog, transform, row_labels, average, agg_weights
        )
        if which == "linear":  # at K = 1 the log-odds are linear: Logit's
            return LinearPredictionResults.of(out, self.model.spec.sign)
        return out

    def _log_odds_and_jacobian(self, design: np.ndarray, jacobian: bool = True):
        """``logit P(y = 1 | x)`` per design row and its gradient in ``params``."""
        params = np.asarray(self.params)
        return self.model._log_odds_and_jacobian(params, design, jacobian)

    # ------------------------------------------------------------- residuals
    def _sample_design(
        self,
        what: str = "residuals need",
        remedy: str = "compute them from predict() at the rows",
    ) -> np.ndarray:
        require_estimation_data(self.model, what, remedy)
        if self.model._row_source is not None:
            raise ValueError(
                f"{what} the estimation sample in memory; a fit on Dask "
                f"collections has it on the workers: {remedy}"
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

    @property
    def resid_generalized(self) -> np.ndarray:
        """Generalised residuals, ``y - P(y = 1 | x)``: for a binary outcome
        the derivative of the log-likelihood in the log-odds, the same as
        ``resid_response`` (as ``Logit``'s)."""
        return self.resid_response

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
        self._sample_design("influence measures need", "refit the model in memory")
        # the leverage of the fit's own information (penalty included), which
        # cov_type="HC2"/"HC3" use too
        # (with frequency weights, GLM's: the row's weight times one copy's)
        leverage = self._leverage
        if self.model.freq_weights is not None:
            leverage = leverage * self.model.freq_weights
        return PolyhedralInfluence(self, hat_matrix_diag=leverage)

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
        atexog : dict, DataFrame or array_like, optional
            Values to hold columns at, ``{column index or name: value}``, or
            the rows to evaluate at: an array of the design's columns in
            order, or a DataFrame read as ``predict`` reads it (its columns
            by name; new data through a formula model's formula, unless the
            frame holds the design's own columns).
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
        return _active_face(self, exog)

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
        return _gate_probabilities(self, exog)

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
        return _responsibilities(self)

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
        return _face_shares(self)

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
        return weighted_table(observed, predicted, self.model.freq_weights)

    def _row_source(self):
        """The row blocks of a fit by blocks (``None`` for an in-memory fit)."""
        if self.model._row_source is not None:  # Dask partitions
            return self.model._row_source
        scaling = getattr(self, "_block_scaling", None)  # None: fits pickled before
        if scaling is None or self.model.exog is None:
            return None
        return InMemoryRows(
            self.model.exog,
            self.model._y_inside,
            scaling,
            self.chunksize,
            weights=self.model.freq_weights,
        )


# ------------------------------------------------ which face owns which row
def _face_names(k: int) -> list[str]:
    return [f"h{i + 1}" for i in range(k)]


def _named(values, results, index=None):
    """An ``(n, K)`` output as a DataFrame with columns ``h1..hK`` when the data
    are pandas, else as an array."""
    names = _face_names(results.k)
    if index is not None:
        return pd.DataFrame(np.asarray(values), index=index, columns=names)
    return np.asarray(values)


def _require_data(results, what: str, remedy: str = "refit the model"):
    require_estimation_data(results.model, f"{what} needs", remedy)


def _predict(results, exog, which: str, what: str):
    """``results.predict(exog, which=which)`` and the row labels of its rows."""
    if exog is not None:
        values = results.predict(exog, which=which)
        index = values.index if isinstance(values, pd.DataFrame | pd.Series) else None
        return values, index
    _require_data(results, what, "pass exog (new data) or refit the model")
    return results.predict(None, which=which), results.model.data.row_labels


def _gate_probabilities(results, exog=None):
    """``results.gate_probabilities()``; documented there (the public method)."""
    gate, index = _predict(results, exog, "gate", "gate_probabilities()")
    return _named(gate, results, index)


def _active_face(results, exog=None):
    """``results.active_face()``; documented there (the public method)."""
    scores, index = _predict(results, exog, "linear", "active_face()")
    # (one column at K = 1, where the scores come as one value per row)
    values = np.asarray(scores, dtype=float).reshape(len(scores), -1)
    missing = np.isnan(values).any(axis=1)
    owner = np.where(missing, -1, np.argmin(np.where(missing[:, None], 0, values), 1))
    if index is not None:
        return pd.Series(owner, index=index, name="active_face")
    return owner


def _responsibilities(results):
    """``results.responsibilities()``; documented there (the public method)."""
    _require_data(results, "responsibilities()")
    resp = results.model._user_rows(np.asarray(results.params))[2].resp
    return _named(resp, results, index=results.model.data.row_labels)


def _face_shares(results) -> pd.DataFrame:
    """``results.face_shares()``; documented there (the public method)."""
    _require_data(results, "face_shares()")
    model = results.model
    scores = model.predict(np.asarray(results.params), which="linear")
    scores = np.reshape(scores, (len(scores), -1))  # one value per row at K = 1
    owner = np.argmin(scores, axis=1)
    onehot = owner[:, None] == np.arange(results.k)
    y01 = np.asarray(model.endog, dtype=float)
    labels = {code: label for label, code in results.outcome_mapping.items()}
    # each row counted as its frequency weight: the observations
    f = np.ones(y01.size) if model.freq_weights is None else model.freq_weights
    owned = onehot.T.astype(float) @ f
    n_one = onehot.T.astype(float) @ (f * y01)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(owned > 0, n_one / np.maximum(owned, 1e-300), np.nan)
    gate = model.predict(np.asarray(results.params), which="gate")
    return pd.DataFrame(
        {
            "nobs": owned if model.freq_weights is not None else owned.astype(int),
            "share": owned / f.sum(),
            "gate_share": f @ gate / f.sum(),
            f"n_{labels[0]}": (owned - n_one).astype(int),
            f"n_{labels[1]}": n_one.astype(int),
            f"frac_{labels[1]}": frac,
        },
        index=_face_names(results.k),
    )


def _check_which(which: str, model, average: bool) -> None:
    """``get_prediction``'s ``which``: ``"mean"`` or ``"var"`` (of rows or
    their average), or ``"linear"`` at K = 1 of single rows (statsmodels'
    ``Logit`` answers ``average=True`` for ``"linear"`` with the rows
    themselves), not for the label-flip model, whose log-odds are no linear
    predictor."""
    if which in ("mean", "var"):
        return
    if which != "linear" or model.k != 1:
        raise ValueError(
            "get_prediction supports which='mean' (P(y = 1 | x)), 'var' (P (1 - "
            f"P)) and, at k=1, which='linear', got {which!r}; use "
            "results.predict(exog, which=...) for the others"
        )
    if model.spec.flips:
        raise ValueError(
            "which='linear' needs log-odds linear in the parameters; the "
            "label-flip model's are not: use predict(exog, which='linear') for "
            "x'w"
        )
    if average:
        raise ValueError(
            "average=True is for which='mean' (P(y = 1 | x)) or 'var' (P (1 - P))"
        )
