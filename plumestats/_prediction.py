r"""Inference for predicted probabilities: ``results.get_prediction``.

For one design row, with :math:`P = P(y = 1 \mid x)` and :math:`c = +1` when the
class coded 1 is inside the polyhedron (``-1`` otherwise), the log-odds are a
difference of two observation log-likelihoods,

.. math::

    \operatorname{logit} P = \ell(c) - \ell(-c), \qquad
    \ell(y) = \log \sum_k g_k\, \sigma(y\, a_k),

each a log-sum-exp that stays finite however close :math:`P` is to 0 or 1.
Its derivative in the scores :math:`a_j = w_j' x` is the difference of the two
score weights,

.. math::

    \frac{\partial \operatorname{logit} P}{\partial a_j}
    = \bigl[r_j^{+} s_j^{+} - \gamma (r_j^{+} - g_j)\bigr]
    - \bigl[r_j^{-} s_j^{-} - \gamma (r_j^{-} - g_j)\bigr],

with the responsibilities :math:`r^{\pm}` and slopes :math:`s^{\pm}` of
:class:`~plumestats._likelihood.Terms` at :math:`y = \pm c` (the gate terms
cancel; hard gating is :math:`\gamma = 0` with a one-hot gate). The gradient in
:math:`w_j` is that times :math:`x`. The delta method gives the standard error
of the log-odds; the interval is formed there and mapped back through the
logistic function (statsmodels' ``"endpoint"`` method for ``Logit``), so it stays
inside (0, 1). With ``average=True`` the mean probability's interval is the
delta method on the probability scale, as statsmodels does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, log_expit, logit
from statsmodels.base._prediction_inference import (
    PredictionResultsBase,
    PredictionResultsMonotonic,
)

from ._dask import is_dask_collection, map_rows
from ._inference import check_alpha, identified_parts
from ._likelihood import face_products, linear_scores
from ._validation import require_estimation_data

__all__ = [
    "CheckedPredictionResults",
    "PredictionResults",
    "deriv_mean_dparams",
    "deriv_score_obs_dendog",
    "design_rows",
    "flip_log_odds_and_jacobian",
    "log_odds_and_jacobian",
    "outcome_log_probability",
    "predict_at",
    "predict_rows",
    "prediction_results",
    "variance_results",
]


def outcome_log_probability(log_odds: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """``log P(y | x)`` of the observed 0/1 outcomes from the log-odds of
    ``y = 1``, without cancellation however certain the prediction."""
    return log_expit(np.where(np.asarray(y01) == 1, log_odds, -log_odds))


def deriv_score_obs_dendog(model, params) -> np.ndarray:
    """``d score_obs / d y``, ``(nobs, K p)``, for statsmodels' influence
    measures: with a binary outcome ``l = y log P + (1 - y) log(1 - P)``, so
    the derivative is the gradient of the log-odds (times the row's
    frequency weight, as ``score_obs``)."""
    gradient = model._log_odds_and_jacobian(params, model.exog)[1]
    weights = model.freq_weights
    return gradient if weights is None else gradient * weights[:, None]


def deriv_mean_dparams(model, params) -> np.ndarray:
    """``d P(y = 1 | x) / d params``, ``(nobs, K p)``, for statsmodels'
    influence measures."""
    log_odds, gradient = model._log_odds_and_jacobian(params, model.exog)
    return (expit(log_odds) * expit(-log_odds))[:, None] * gradient


def log_odds_and_jacobian(
    model, params: np.ndarray, exog: np.ndarray, jacobian: bool = True
):
    """``logit P(y = 1 | x)`` per row and its gradient in the hyperplane
    weights, ``(n,)`` and ``(n, K p)`` (hyperplane-major, as ``params``; None
    without ``jacobian``)."""
    log_yes, log_no, gradient = _log_probabilities(model, params, exog, jacobian)
    return log_yes - log_no, gradient


def flip_log_odds_and_jacobian(
    model, params: np.ndarray, exog: np.ndarray, jacobian: bool = True
):
    r"""As :func:`log_odds_and_jacobian` for the label-flip model, whose
    ``params`` end with :math:`\eta` = ``flip_logit``.

    With :math:`\lambda = \sigma(\eta) = 2\varepsilon`, the observed label's
    probability is :math:`P = \lambda/2 + (1 - \lambda) P_c` and
    :math:`1 - P = \lambda/2 + (1 - \lambda)(1 - P_c)` (both log-sum-exps of
    PLUME's :math:`\log P_c`, :math:`\log(1 - P_c)`). Then
    :math:`\partial P / \partial w = (1 - \lambda) P_c (1 - P_c)\,
    \partial \operatorname{logit} P_c / \partial w` and
    :math:`\partial P / \partial \eta = \lambda (1 - \lambda)(1/2 - P_c)`,
    each divided by :math:`P (1 - P)` for the log-odds.
    """
    params = np.asarray(params, dtype=float)
    log_clean, log_clean_no, clean_jacobian = _log_probabilities(
        model, params[:-1], exog, jacobian
    )
    eta = params[-1]
    log_half_lam, log_rest = log_expit(eta) - np.log(2.0), log_expit(-eta)
    log_yes = np.logaddexp(log_half_lam, log_rest + log_clean)
    log_no = np.logaddexp(log_half_lam, log_rest + log_clean_no)
    if not jacobian:
        return log_yes - log_no, None
    log_spread = log_yes + log_no  # log P (1 - P)
    faces = np.exp(log_rest + log_clean + log_clean_no - log_spread)
    flip = expit(eta) * expit(-eta) * (0.5 - np.exp(log_clean)) * np.exp(-log_spread)
    jacobian = np.column_stack([faces[:, None] * clean_jacobian, flip])
    return log_yes - log_no, jacobian


def _log_probabilities(model, params, exog, jacobian: bool = True):
    """``log P``, ``log(1 - P)`` (P = P(y = 1 | x)) and the log-odds' gradient
    in the hyperplane weights (None without ``jacobian``)."""
    spec = model.spec
    k, sign, gate = spec.k, spec.sign, spec.gate
    scores = linear_scores(params, exog, k)
    ones = np.ones(scores.shape[0])
    yes = gate.terms(scores, sign * ones)
    no = gate.terms(scores, -sign * ones)
    # the gate terms cancel in the difference; a hard gate has none
    gamma = 0.0 if spec.hard else gate.gamma
    if not jacobian:
        return yes.log_lik[:, 0], no.log_lik[:, 0], None
    weights = yes.score_weights(gamma) - no.score_weights(gamma)
    gradient = face_products(weights, exog)
    return yes.log_lik[:, 0], no.log_lik[:, 0], gradient


class PredictionResults(PredictionResultsMonotonic):
    """statsmodels' ``PredictionResultsMonotonic`` whose ``alpha`` must lie in
    (0, 1): outside it the interval's quantile gives reversed bounds or NaN
    without a word."""

    def conf_int(self, method: str = "endpoint", alpha: float = 0.05, **kwds):
        """Confidence intervals of the predictions, ``(n, 2)``.

        Parameters
        ----------
        method : {"endpoint", "delta"}
            ``"endpoint"``: the interval of the log-odds mapped back (inside
            (0, 1)); ``"delta"``: the delta method on the probability scale.
        alpha : float
            One minus the confidence level, strictly between 0 and 1.
        """
        return super().conf_int(method=method, alpha=check_alpha(alpha), **kwds)

    def summary_frame(self, alpha: float = 0.05):
        """``predicted``, ``se``, ``ci_lower`` and ``ci_upper`` per row; ``alpha``
        is one minus the confidence level, strictly between 0 and 1."""
        return super().summary_frame(alpha=check_alpha(alpha))


class CheckedPredictionResults(PredictionResultsBase):
    """statsmodels' ``PredictionResultsBase`` (what ``Logit`` gives for
    ``which="linear"`` and, as its subclass ``PredictionResultsDelta``, for
    ``which="var"``), its ``alpha`` checked as :class:`PredictionResults`'."""

    def conf_int(self, method: str = "endpoint", alpha: float = 0.05, **kwds):
        """Normal (or t) intervals of the prediction, ``(n, 2)``."""
        return super().conf_int(method=method, alpha=check_alpha(alpha), **kwds)

    def summary_frame(self, alpha: float = 0.05):
        """``predicted``, ``se``, ``ci_lower`` and ``ci_upper`` per row."""
        return super().summary_frame(alpha=check_alpha(alpha))


class LinearPredictionResults(CheckedPredictionResults):
    """The linear predictor at K = 1 (``which="linear"``)."""

    @classmethod
    def of(cls, mean: PredictionResults, sign: float) -> LinearPredictionResults:
        """The linear predictor ``x'w`` of ``mean``'s rows at K = 1: their
        log-odds times ``sign`` (-1 where class 0 is the inside, +1 as in
        ``Logit``), with its delta-method variance."""
        return cls(
            sign * mean.linpred,
            mean.linpred_se**2,
            df=mean.df,
            dist="t" if mean.dist is stats.t else "norm",
            row_labels=mean.row_labels,
        )


def design_rows(results, exog, transform: bool, row_labels):
    """The design matrix to predict at and its row labels, as statsmodels'
    ``predict`` builds them: rows with missing values are dropped where the
    formula is applied, as ``Logit.get_prediction`` does, and kept (their
    predictions NaN, as Logit's) in a design given directly."""
    if exog is None:
        require_estimation_data(
            results.model,
            "get_prediction() without exog predicts at",
            "pass exog, the rows to predict at",
        )
        labels = getattr(results.model.data, "row_labels", None)
        return np.asarray(results.model.exog, dtype=float), (
            labels if row_labels is None else row_labels
        )
    design, index = results._transform_predict_exog(exog, transform=transform)
    if row_labels is None and index is not None:
        row_labels = index
    elif row_labels is None and isinstance(exog, (pd.Series, pd.DataFrame)):
        # (a list's or a tuple's ``index`` is a method, not labels)
        row_labels = exog.index
    design = np.asarray(design, dtype=float)
    if design.ndim == 1:
        # one row, or (a one-column design) one value per row, as statsmodels
        design = design[:, None] if results.model.k_vars == 1 else design[None, :]
    if design.ndim != 2 or design.shape[1] != results.model.k_vars:
        raise ValueError(
            f"exog must have {results.model.k_vars} columns (the model's design), "
            f"got shape {np.shape(design)}"
        )
    # Logit.get_prediction drops what its formula leaves incomplete (NaN; a
    # transform's infinity, np.log(0), is a value and predicts)
    complete = ~np.isnan(design).any(axis=1)
    formula = transform and hasattr(results.model, "formula")
    if formula and not complete.all():
        design = design[complete]
        if row_labels is not None and len(row_labels) == len(complete):
            row_labels = pd.Index(row_labels)[complete]
    if row_labels is not None and len(row_labels) != design.shape[0]:
        raise ValueError(
            f"row_labels has {len(row_labels)} labels for {design.shape[0]} "
            "rows to predict at: give one label per row"
        )
    return design, row_labels


def prediction_results(
    results, exog, transform: bool, row_labels, average: bool, agg_weights
) -> PredictionResults:
    """What :meth:`PolyhedralMixtureLogitResults.get_prediction` returns for
    ``which="mean"``."""
    design, labels = design_rows(results, exog, transform, row_labels)
    if not average:
        dist = ["norm", "t"][bool(results.use_t)]
        log_odds, log_var = _rows_log_odds_and_variance(results, design)
        # P's variance, slope**2 * var_log_odds, in logs: there the slope's
        # underflow wins and the product is 0, not 0 * inf
        log_slope = log_expit(log_odds) + log_expit(-log_odds)
        return PredictionResults(
            expit(log_odds),
            np.exp(2.0 * log_slope + log_var),
            linpred=log_odds,
            # from the log of the variance: a row far outside the data
            # (|x| ~ 1e160) has a finite standard error whose square overflows
            linpred_se=np.exp(0.5 * log_var),
            func=expit,
            deriv=lambda z: expit(z) * expit(-z),
            df=results.df_resid,
            dist=dist,
            row_labels=labels,
        )
    mean, variance = _averaged(results, design, agg_weights, _probability)
    return PredictionResults(
        np.array([mean]),
        variance,
        linpred=np.array([mean]),
        linpred_se=np.sqrt(variance),
        func=_identity,
        deriv=np.ones_like,
        df=results.df_resid,
        # statsmodels' average (a delta-method mean) is normal whatever use_t
        dist="norm",
        row_labels=None,
    )


def variance_results(
    results, exog, transform: bool, row_labels, average: bool, agg_weights
) -> CheckedPredictionResults:
    r"""``which="var"``: the Bernoulli variance :math:`P (1 - P)` of each
    row (or its ``agg_weights`` mean), with the delta method's standard
    error, :math:`|1 - 2P|\, P (1 - P)\, \operatorname{se}(\eta)` for the
    log-odds :math:`\eta`, and normal intervals (``Logit``'s
    ``PredictionResultsDelta``)."""
    if average:
        design, _ = design_rows(results, exog, transform, row_labels)
        mean, variance = _averaged(results, design, agg_weights, _bernoulli_variance)
        return CheckedPredictionResults(np.array([mean]), variance, dist="norm")
    rows = prediction_results(results, exog, transform, row_labels, False, None)
    value, (_, sign) = _bernoulli_variance(rows.linpred)
    return CheckedPredictionResults(
        value,
        (value * sign * rows.linpred_se) ** 2,
        dist="norm",
        row_labels=rows.row_labels,
    )


def _probability(log_odds: np.ndarray):
    """``P``, and the factors of its derivative in the log-odds, ``P (1 -
    P)``."""
    prob = expit(log_odds)
    return prob, (prob, expit(-log_odds))


def _bernoulli_variance(log_odds: np.ndarray):
    """``P (1 - P)``, and the factors of its derivative in the log-odds,
    ``(1 - 2P) P (1 - P)``, with ``1 - 2P = -tanh(eta / 2)`` (no
    cancellation near 1/2)."""
    value = np.exp(log_expit(log_odds) + log_expit(-log_odds))
    return value, (value, -np.tanh(0.5 * log_odds))


def _averaged(results, design: np.ndarray, agg_weights, per_row):
    """The ``agg_weights`` mean over ``design``'s rows of ``per_row``'s
    value (a function of the log-odds, with the factors of its derivative,
    multiplied in order) and its delta-method variance (a one-element
    array). A row with a missing value is skipped, with its agg_weight; a
    row a transform made infinite (np.log(0)) counts with its prediction,
    as in ``predict`` and ``Logit``'s average, and moves with no parameter."""
    complete = ~np.isnan(design).any(axis=1)
    weights = _aggregation_weights(agg_weights, complete)
    design = design[complete]
    if len(design) == 0:
        raise ValueError(
            "average=True needs at least one row with every value present; "
            "the rows given have none"
        )
    finite = np.isfinite(design).all(axis=1)
    log_odds = np.empty(len(design))
    log_odds[finite], jacobian = results._log_odds_and_jacobian(design[finite])
    cov, jacobian = identified_parts(results, jacobian)
    if not finite.all():
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = results.model.predict(results.params, design[~finite])
            log_odds[~finite] = logit(np.asarray(probability, dtype=float))
    value, factors = per_row(log_odds)
    slope = weights
    for factor in factors:  # (w P) (1 - P), as the mean always grouped it
        slope = slope * factor
    gradient = slope[finite] @ jacobian
    return float(weights @ value), np.array([gradient @ cov @ gradient])


def _rows_log_odds_and_variance(results, design: np.ndarray):
    """Each row's log-odds and the log of its delta-method variance; NaN for
    a row with a missing value (as ``predict``)."""
    complete = np.isfinite(design).all(axis=1)
    log_odds, jacobian = results._log_odds_and_jacobian(design[complete])
    cov, jacobian = identified_parts(results, jacobian)
    log_var = _log_quadratic_form(jacobian, cov)
    if complete.all():
        return log_odds, log_var
    full_log_odds, full_log_var = np.full((2, design.shape[0]), np.nan)
    full_log_odds[complete], full_log_var[complete] = log_odds, log_var
    # a row a transform made infinite (np.log(0)) predicts as predict does,
    # with no variance: statsmodels' answer
    infinite = ~complete & ~np.isnan(design).any(axis=1)
    if infinite.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = results.model.predict(results.params, design[infinite])
            full_log_odds[infinite] = logit(np.asarray(probability, dtype=float))
    return full_log_odds, full_log_var


def _log_quadratic_form(rows: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``log(diag(rows @ cov @ rows.T))`` without overflow: each row is scaled
    to unit size and its scale put back in logs."""
    scale = np.max(np.abs(rows), axis=1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    unit = rows / scale
    quadratic = np.maximum(np.sum((unit @ cov) * unit, axis=1), 0.0)
    with np.errstate(divide="ignore"):  # a zero row: log 0 = -inf, variance 0
        return 2.0 * np.log(scale[:, 0]) + np.log(quadratic)


def _identity(values):
    return values


def _aggregation_weights(agg_weights, kept: np.ndarray) -> np.ndarray:
    """statsmodels' ``agg_weights``: the prediction is ``mean(agg_weights * P)``
    (the plain mean without them), over the ``kept`` rows (one flag per row
    given) and their weights."""
    nobs = kept.size
    weights = (
        np.broadcast_to(
            np.asarray(1.0 if agg_weights is None else agg_weights, dtype=float),
            (nobs,),
        )
        if np.ndim(agg_weights) == 0
        else np.asarray(agg_weights, dtype=float)
    )
    if weights.shape != (nobs,):
        raise ValueError(
            f"agg_weights must have one weight per prediction row ({nobs}), got "
            f"shape {weights.shape}"
        )
    return weights[kept] / kept.sum()


def predict_rows(
    exog: np.ndarray, *, params: np.ndarray, spec, which: str
) -> np.ndarray:
    """:meth:`PolyhedralMixtureLogit.predict` on design rows (also one Dask
    partition's) of PLUME's faces (the :class:`~plumestats._spec.ModelSpec`'s
    gate and inside class)."""
    exog = np.asarray(exog, dtype=float)
    incomplete = np.isnan(exog).any(axis=1)
    if incomplete.any():
        # rows with missing features predict NaN, the others as usual
        out = predict_rows(exog[~incomplete], params=params, spec=spec, which=which)
        full = np.full((exog.shape[0], *out.shape[1:]), np.nan)
        full[~incomplete] = out
        return full
    scores = linear_scores(params, exog, spec.k)
    if which == "mean":
        # P(y = 1) is P(inside) when class 1 is inside, P(outside) otherwise
        return spec.gate.mean(scores, spec.sign)
    if which == "decision":
        return scores.min(axis=1)
    if which == "gate":
        return spec.gate.probabilities(scores)
    if which == "expert":
        return expit(spec.sign * scores)
    return scores


def predict_at(model, params, exog, which: str):
    """:meth:`PolyhedralMixtureLogit.predict` (``which`` checked): NumPy rows
    give an array, Dask rows a lazy Dask array."""
    out = _predict_at(model, params, exog, which)
    if which == "linear" and model.k == 1:
        # Logit's one value per row: an (n, 1) array broadcast against the
        # fitted values (n,) to (n, n) without a word
        return out[:, 0]
    return out


def _predict_at(model, params, exog, which: str):
    if which == "var":
        # model.predict, not predict_rows: a subclass's mean (label flips)
        mean = model.predict(params, exog, which="mean")
        return mean * (1.0 - mean)
    if exog is None:
        require_estimation_data(
            model,
            "predict() without exog predicts at",
            "pass exog, the rows to predict at",
        )
        exog = model.exog
    if is_dask_collection(exog):
        if len(exog.shape) != 2 or exog.shape[1] != model.k_vars:
            raise ValueError(
                f"exog must have {model.k_vars} columns "
                f"({', '.join(map(str, model.exog_names))}), got shape {exog.shape}"
            )
        return map_rows(
            predict_rows,
            exog,
            columns=model.k if which in ("gate", "expert", "linear") else None,
            **model._predict_settings(model._check_params(params), which),
        )
    exog = _float_rows(exog, model.exog_names)
    if exog.ndim == 1:
        exog = exog[None, :]
    if exog.shape[1] != model.k_vars:
        raise ValueError(
            f"exog has {exog.shape[1]} columns but the model has {model.k_vars} "
            f"({', '.join(map(str, model.exog_names))})"
        )
    return predict_rows(
        exog, **model._predict_settings(model._check_params(params), which)
    )


def _float_rows(exog, names) -> np.ndarray:
    """``exog`` as floats, or a ``ValueError`` naming the column that holds
    text (numpy's said only "could not convert string to float: 'a'")."""
    try:
        return np.asarray(exog, dtype=float)
    except (ValueError, TypeError) as exc:
        error = exc
    try:
        frame = pd.DataFrame(np.atleast_2d(np.asarray(exog, dtype=object)))
    except ValueError:  # ragged rows: numpy's message says so
        raise error from None
    if hasattr(exog, "columns"):
        frame.columns = list(exog.columns)
    elif frame.shape[1] == len(names):
        frame.columns = list(names)
    for column in frame.columns:
        values = frame[column]
        text = values.map(lambda value: isinstance(value, str | bytes))
        if text.any():
            raise ValueError(
                f"column {column!r} of the new data must hold numbers, but holds "
                f"{values[text].iloc[0]!r}; convert it (pd.to_numeric) or "
                "correct the value"
            ) from None
    raise error  # not text (a row of lists, a dict): numpy's own message
