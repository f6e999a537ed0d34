"""Bounds on the misclassification risk of a fitted PLUME classifier: the paper's
Rademacher generalisation bound and a held-out test-set bound.

The Rademacher bound (:func:`rademacher_bound`): for a PLUME classifier with
hyperplane weight norms ``W_1..W_K``, features with ``||x_n|| <= R`` and a sample
of size ``N``, with probability at least ``1 - delta``

.. math::

    R(f) \\le \\hat R_\\phi + c_1 \\frac{R \\sum_k W_k}{\\sqrt N}
           + c_2 \\sqrt{\\frac{\\ln(2/\\delta)}{2N}},

    c_1 = (1 + e^{W_{max} R})\\, e^{\\gamma (W_{max} + W_{min}) R}
          \\left(\\tfrac{3\\sqrt{K-1}}{\\sqrt 2} + 1\\right),\\qquad
    c_2 = 3 (1 + e^{W_{max} R})\\, e^{\\gamma (W_{max} + W_{min}) R},

where :math:`\\hat R_\\phi` is the mean negative log-likelihood on the sample.
With K = 1 the gate is constant, so the class is the same at every gamma and
the bound holds at its infimum over gamma: the factor
:math:`e^{\\gamma (W_{max} + W_{min}) R}` is 1 (logistic regression's bound).

The test-set bound (:func:`holdout_bound`) inverts the binomial tail of the
number of errors on held-out data; it needs fresh data but no complexity term.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["HoldoutBound", "RademacherBound", "holdout_bound", "rademacher_bound"]

# exp() of anything above this overflows a double
_LOG_MAX = math.log(np.finfo(float).max)


def _exp_or_inf(log_value: float) -> float:
    return math.exp(log_value) if log_value < _LOG_MAX else math.inf


@dataclass(frozen=True)
class RademacherBound:
    """Every term of the Rademacher bound, with the total.

    Large terms are also given as natural logarithms (``log_*``) because they
    routinely exceed the range of a double; then the value itself is ``inf``.
    """

    empirical_risk: float
    complexity: float
    confidence: float
    total: float
    c1: float
    c2: float
    log_c1: float
    log_c2: float
    log_complexity: float
    log_confidence: float
    log_total: float
    weight_norms: np.ndarray
    radius: float
    nobs: int
    k: int
    gamma: float
    delta: float

    @property
    def vacuous(self) -> bool:
        """True when the bound exceeds 1, i.e. says nothing about the error rate."""
        return not self.log_total <= 0.0  # NaN says nothing either

    @property
    def log10_total(self) -> float:
        """The bound's base-10 logarithm (readable where ``total`` is ``inf``)."""
        return self.log_total / math.log(10)

    @property
    def short(self) -> str:
        """The bound as the summary's header shows it: its value when it says
        something (below 1), else ``"vacuous"`` and its base-10 logarithm."""
        if self.vacuous:
            return f"vacuous (log10 {self.log10_total:.1f})"
        return f"{self.total:.3g}"

    def __str__(self) -> str:
        verdict = (
            f"vacuous: above 1, log10 = {self.log10_total:.1f}"
            if self.vacuous
            else "non-vacuous"
        )
        return (
            f"Rademacher bound (delta={self.delta:g}): {_fmt(self.log_total)} "
            f"[{verdict}]\n"
            f"  empirical risk {self.empirical_risk:.6g} + complexity "
            f"{_fmt(self.log_complexity)} + confidence {_fmt(self.log_confidence)}\n"
            f"  c1 = {_fmt(self.log_c1)}, c2 = {_fmt(self.log_c2)}, R = "
            f"{self.radius:.6g}, W = {np.array2string(self.weight_norms, precision=4)},"
            f" N = {self.nobs}"
        )


def _fmt(log_value: float) -> str:
    """A positive number given by its natural log, readable at any size."""
    if log_value == -math.inf:
        return "0"
    if log_value < _LOG_MAX:
        return f"{math.exp(log_value):.4g}"
    log10 = log_value / math.log(10)
    exponent = math.floor(log10)
    return f"{10 ** (log10 - exponent):.4g}e+{exponent}"


def rademacher_bound(
    weights: np.ndarray,
    exog: np.ndarray | None,
    mean_nll: float,
    gamma: float,
    delta: float = 0.05,
    *,
    radius: float | None = None,
    nobs: int | None = None,
) -> RademacherBound:
    """Evaluate the bound at fitted weights.

    Parameters
    ----------
    weights : ndarray, shape (K, p)
        Hyperplanes in the user's units, including the intercept coefficient.
    exog : ndarray, shape (N, p) or None
        The design the model was fitted on (``radius`` may be given instead).
    mean_nll : float
        Empirical surrogate risk, ``-llf / N``.
    gamma : float
        Gate sharpness.
    delta : float
        One minus the confidence level, in (0, 1).
    radius, nobs : float and int, optional
        ``R = max_n ||x_n||`` and ``N``, when ``exog`` is not at hand.

    Notes
    -----
    The paper's proof treats ``w_k' x`` without bias terms. Here the bias is
    included in both the weights and the features (augmented vectors
    ``w~ = [w, b]`` and ``x~ = [x, 1]``, i.e. the full design row including its
    intercept column): the class ``{x~ -> w~' x~ : ||w~|| <= W}`` with
    ``||x~|| <= R`` has Rademacher complexity at most ``W R / sqrt(N)``, so the
    proof's steps hold as written. Dropping the bias, as the paper's statement
    does, would bound a different class than the one fitted.

    The norms ``W_k`` are those of the fitted weights, so the bound is data
    dependent; a bound valid uniformly over the fitted norms would need a union
    bound over a grid of norms, which adds a ``log log`` term we do not include.
    Because ``W_k`` and ``R`` depend on the units of the features while the
    model's predictions do not, the bound changes when a feature is rescaled.
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(
            "weights must be the (K, p) hyperplanes, one row per face (e.g. "
            f"results.hyperplanes), got shape {weights.shape}"
        )
    k = weights.shape[0]
    if exog is not None:
        exog = np.asarray(exog, dtype=float)
        if exog.ndim != 2 or exog.shape[1] != weights.shape[1]:
            raise ValueError(
                f"exog must have the hyperplanes' {weights.shape[1]} columns, got "
                f"shape {exog.shape}"
            )
        radius = float(np.max(np.linalg.norm(exog, axis=1)))
        nobs = exog.shape[0]
    elif radius is None or nobs is None:
        raise ValueError("give either exog, or both radius and nobs")
    if not (np.isfinite(radius) and np.isfinite(weights).all()):
        raise ValueError(
            "exog (or radius) and weights must be finite: drop the rows with "
            "missing values, as the fit did"
        )
    _check_bound_inputs(nobs, mean_nll, gamma, k)
    return _bound_from_norms(
        np.linalg.norm(weights, axis=1), radius, nobs, mean_nll, gamma, delta, k
    )


def _check_bound_inputs(nobs, mean_nll, gamma, k: int) -> None:
    """What the bound's formula assumes, named (``nobs=0`` was a bare
    ZeroDivisionError, ``gamma=-1`` a bound of a model that does not exist).
    ``nobs`` may be a weighted count; gamma does not enter at K = 1."""
    if not (np.isfinite(nobs) and nobs > 0):
        raise ValueError(f"nobs must be a finite number > 0, got {nobs}")
    if not (np.isfinite(mean_nll) and mean_nll >= 0):
        raise ValueError(
            f"mean_nll must be a finite number >= 0 (-llf / nobs), got {mean_nll}"
        )
    if k > 1 and not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"gamma must be a finite number > 0 with K = {k} faces, got {gamma}"
        )


def _bound_from_norms(norms, radius, nobs, mean_nll, gamma, delta, k):
    w_max, w_min = float(norms.max()), float(norms.min())
    log_a = float(np.logaddexp(0.0, w_max * radius))  # log(1 + e^{W_max R})
    # the gate's factor; one face has a constant gate, whatever gamma is
    log_e = 0.0 if k == 1 else gamma * (w_max + w_min) * radius
    log_c1 = log_a + log_e + math.log(3.0 * math.sqrt(k - 1) / math.sqrt(2.0) + 1.0)
    log_c2 = math.log(3.0) + log_a + log_e
    spread = float(norms.sum()) * radius / math.sqrt(nobs)
    log_complexity = log_c1 + math.log(spread) if spread > 0 else -math.inf
    log_confidence = log_c2 + 0.5 * math.log(math.log(2.0 / delta) / (2.0 * nobs))
    log_total = float(
        np.logaddexp.reduce(
            [
                math.log(mean_nll) if mean_nll > 0 else -math.inf,
                log_complexity,
                log_confidence,
            ]
        )
    )
    return RademacherBound(
        empirical_risk=float(mean_nll),
        complexity=_exp_or_inf(log_complexity),
        confidence=_exp_or_inf(log_confidence),
        total=_exp_or_inf(log_total),
        c1=_exp_or_inf(log_c1),
        c2=_exp_or_inf(log_c2),
        log_c1=log_c1,
        log_c2=log_c2,
        log_complexity=log_complexity,
        log_confidence=log_confidence,
        log_total=log_total,
        weight_norms=norms,
        radius=radius,
        nobs=int(nobs),
        k=k,
        gamma=float(gamma),
        delta=float(delta),
    )


@dataclass(frozen=True)
class HoldoutBound:
    """A test-set upper bound on the misclassification rate.

    Attributes
    ----------
    bound : float
        With probability at least ``1 - delta`` over the test sample, the true
        misclassification rate is at most ``bound``.
    errors, nobs : int
        Misclassified test observations, and test observations.
    error_rate : float
        ``errors / nobs``.
    delta : float
        One minus the confidence level.
    """

    bound: float
    errors: int
    nobs: int
    error_rate: float
    delta: float

    @property
    def vacuous(self) -> bool:
        """True when the bound is 1 (says nothing); never for a usable test set."""
        return self.bound >= 1.0

    def __str__(self) -> str:
        return (
            f"Test-set bound (delta={self.delta:g}): misclassification rate <= "
            f"{self.bound:.4g} ({self.errors} errors in {self.nobs} held-out "
            f"observations, error rate {self.error_rate:.4g})"
        )


def holdout_bound(errors: int, nobs: int, delta: float = 0.05) -> HoldoutBound:
    r"""Upper bound on the error rate from ``errors`` mistakes on ``nobs`` test points.

    Binomial tail inversion (Langford, 2005): the largest rate :math:`p` under
    which ``errors`` or fewer mistakes still have probability at least
    :math:`\delta`,

    .. math::

        \bar p = \max\{p : P(\operatorname{Bin}(n, p) \le k) \ge \delta\}
               = \operatorname{Beta}^{-1}(1 - \delta;\ k + 1,\ n - k),

    the one-sided Clopper-Pearson upper limit. It holds with probability at least
    :math:`1 - \delta` over test samples drawn independently of the fit, whatever
    the classifier and the units of the features: unlike the Rademacher bound it
    has no complexity term, so it is rarely vacuous, but it spends fresh data.

    Parameters
    ----------
    errors : int
        Misclassified test observations, ``0 <= errors <= nobs``.
    nobs : int
        Number of test observations, at least 1.
    delta : float
        One minus the confidence level, in (0, 1).

    Returns
    -------
    HoldoutBound

    References
    ----------
    J. Langford, "Tutorial on practical prediction theory for classification",
    JMLR 6 (2005), 273-306.

    Examples
    --------
    >>> from plumestats.bounds import holdout_bound
    >>> round(holdout_bound(0, 100, 0.05).bound, 4)  # 1 - 0.05 ** (1 / 100)
    0.0295
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if not np.isfinite(nobs) or int(nobs) != nobs or nobs < 1:
        raise ValueError(f"nobs must be a positive integer, got {nobs}")
    if not np.isfinite(errors) or int(errors) != errors or not 0 <= errors <= nobs:
        raise ValueError(
            f"errors must be an integer between 0 and nobs ({nobs}), got {errors}"
        )
    errors, nobs = int(errors), int(nobs)
    bound = (
        1.0
        if errors == nobs
        else float(stats.beta.ppf(1 - delta, errors + 1, nobs - errors))
    )
    return HoldoutBound(
        bound=bound,
        errors=errors,
        nobs=nobs,
        error_rate=errors / nobs,
        delta=float(delta),
    )


class BoundsMixin:
    """The bounds as methods of
    :class:`~plumestats.results.PolyhedralMixtureLogitResults`."""

    def rademacher_bound(self, delta: float = 0.05) -> RademacherBound:
        """The paper's Rademacher generalisation bound at the estimates.

        See :func:`~plumestats.api.rademacher_bound` for the formula and for how
        the bias terms are treated (augmented vectors). Not defined for the hard
        model with K > 1 (gamma is infinite there).
        """
        if not np.isfinite(self.gamma) and self.k > 1:
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
            the formula's columns (the outcome is read by its name: where the
            left-hand side is an expression, ``C(y)`` or ``I(y == 2)``, pass
            the pair); otherwise (or also) a pair ``(endog, exog)`` with the
            outcome coded as in the fit. Rows with missing values are dropped.
        delta : float
            One minus the confidence level, in (0, 1).
        threshold : float
            A point is classified as 1 when ``P(y = 1 | x) > threshold``.

        Returns
        -------
        HoldoutBound
        """
        if not (isinstance(threshold, numbers.Real) and 0 <= threshold <= 1):
            raise ValueError(
                f"threshold must be a probability in [0, 1], got {threshold!r}"
            )
        observed, probability = held_out_outcomes(self, test_data)
        errors = int(np.sum((probability > threshold) != (observed == 1)))
        return holdout_bound(errors, observed.size, delta)


def held_out_outcomes(results, test_data) -> tuple[np.ndarray, np.ndarray]:
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
    _check_aligned(endog, exog)
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


def _check_aligned(endog, exog) -> None:
    """A pair of pandas objects is read row by row, by position: their
    indexes must agree, or the outcomes would meet other rows' features."""
    indexes = [getattr(part, "index", None) for part in (endog, exog)]
    if all(isinstance(index, pd.Index) for index in indexes) and not indexes[0].equals(
        indexes[1]
    ):
        raise ValueError(
            "endog and exog have different indexes, so their rows would be "
            "paired by position with other rows; align them first (e.g. "
            "exog.loc[endog.index]) or pass arrays"
        )
