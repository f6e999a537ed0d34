"""A scikit-learn estimator on the PLUME engine:
:class:`~plumestats.sklearn.PolyhedralClassifier`.

Needs the ``sklearn`` extra (``pip install "plumestats[sklearn]"``); ``import
plumestats`` does not import scikit-learn, only ``import plumestats.sklearn`` does.
"""

from __future__ import annotations

import copy
import numbers
import os
import threading
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "plumestats.sklearn needs scikit-learn >= 1.6; install it with "
        'pip install "plumestats[sklearn]"'
    ) from exc

from ._advice import in_estimator_words
from ._candidate_fits import warn_left_out
from ._sklearn_support import (
    check_labels,
    check_missing_labels,
    plain_label,
    sample_weights,
)
from ._validation import check_flag, check_gamma
from .hard import HardPolyhedralLogit
from .label_flip import LabelFlipPolyhedralLogit
from .model import PolyhedralMixtureLogit
from .sm_exceptions import FlipRateBoundaryWarning, LocalMaximaWarning

__all__ = [
    "LocalMaximaConvergenceWarning",
    "PolyhedralClassifier",
    "SeparationConvergenceWarning",
    "UnconvergedFitWarning",
]


class SeparationConvergenceWarning(PerfectSeparationWarning, SklearnConvergenceWarning):
    """Separation, as the estimator reports it: statsmodels'
    ``PerfectSeparationWarning`` and scikit-learn's ``ConvergenceWarning`` at
    once, so that a filter on either catches it."""


class LocalMaximaConvergenceWarning(LocalMaximaWarning, SklearnConvergenceWarning):
    """Starts that ended at different maxima (``n_init`` > 1), as the estimator
    reports it: plumestats' ``LocalMaximaWarning`` and scikit-learn's
    ``ConvergenceWarning`` at once."""


class UnconvergedFitWarning(ConvergenceWarning, SklearnConvergenceWarning):
    """A fit that did not converge, as the estimator reports it: statsmodels'
    and scikit-learn's ``ConvergenceWarning`` at once."""


# Warnings about standard errors and identification of the hyperplanes: they
# matter to inference on `results_`, not to the classifier's predictions.
_INFERENCE_ONLY = (HessianInversionWarning, CollinearityWarning)
# Notes on a converged fit that subclass statsmodels' ConvergenceWarning: they
# pass through as they are (the flip rate's estimate is 0, a boundary maximum)
_CONVERGED_NOTES = (FlipRateBoundaryWarning,)
# Warnings that say the fit may not be the maximum, and the class each is
# re-issued in: the engine's statsmodels class and scikit-learn's, which
# scikit-learn users (and its model selection) filter. Separation first: it is
# also a statsmodels ConvergenceWarning's sibling, not a subclass.
_UNSETTLED = (
    (PerfectSeparationWarning, SeparationConvergenceWarning),
    (LocalMaximaWarning, LocalMaximaConvergenceWarning),
    (ConvergenceWarning, UnconvergedFitWarning),
)


# one thread's fits catch warnings at a time (catch_warnings is global state)
_CATCHING = threading.RLock()


def _new_lock() -> None:
    """A fresh lock in a forked child: one held by another thread of the
    parent at the fork would be held in the child for ever."""
    global _CATCHING
    _CATCHING = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)

# the candidates of k="auto": each is one more fit, and on the five UCI sets
# BIC kept K = 1 in all 150 training folds of benchmarks.defaults already
AUTO_KS = (1, 2, 3)


class PolyhedralClassifier(ClassifierMixin, BaseEstimator):
    r"""Polyhedral classifier (PLUME) with the scikit-learn estimator interface.

    Fits :class:`~plumestats.api.PolyhedralMixtureLogit` on ``[1, X]`` (an intercept
    is always added): one class, ``classes_[inside]``, is modelled as the inside
    of a polyhedron :math:`\{x : \min_k w_k' \tilde x \ge 0\}` with

    .. math::

        P(\text{inside} \mid x) = \sum_k g_k(x)\, \sigma(w_k' \tilde x), \qquad
        g_k = \operatorname{softmax}_k(-\gamma\, w_k' \tilde x).

    ``k=1`` is logistic regression; ``gamma=np.inf`` is the hard-gating model
    :math:`\sigma(\min_k w_k' \tilde x)` (SPLA1,
    :class:`~plumestats.api.HardPolyhedralLogit`).

    Parameters
    ----------
    k : int, "auto" or sequence of int, default "auto"
        Number of hyperplanes (faces of the polyhedron). ``"auto"`` fits
        K = 1, 2 and 3 (those with fewer parameters than samples) on the
        training data and keeps the one with the smallest BIC (ties: the
        smaller K; one beyond K = 1 whose fit fails is left out, with a
        ``FitFailedWarning``); a sequence of ints is chosen from the same way.
        K = 1 is logistic regression, so where the data cannot support more
        faces the classifier is a (penalised) logistic regression (``k_``).
    gamma : float, default 1.0
        Sharpness of the gate (fixed, > 0); ``np.inf`` for hard gating.
    alpha : float or "auto", default "auto"
        L2 penalty on the slopes of the internally standardised features, per
        observation (statsmodels' convention); intercepts are not penalised.
        ``"auto"`` is ``1 / n_samples``: the penalty of
        ``LogisticRegression(C=1.0)`` on standardised features, so that
        ``PolyhedralClassifier(k=1)`` is ``make_pipeline(StandardScaler(),
        LogisticRegression())``. It keeps the weights finite on separable
        data; ``0`` is maximum likelihood.
    mstep : {"newton", "gradient", "bfgs"}, default "newton"
        M-step solver of the EM engine.
    inside : {0, 1}, default 1
        Index into ``classes_`` of the class that forms the polyhedron. With the
        default, the larger label (``classes_[1]``, e.g. 1, True or the second
        string in sorted order) is the inside.
    n_init : int, default 1
        Number of EM runs from different starts; the best likelihood is kept.
    reseat : int, default 0
        Re-seating moves after the restarts: the face that owns the least of
        the outside class is refitted to the outside points the fit misses,
        and kept if the likelihood rises (see ``PolyhedralMixtureLogit.fit``).
    init : {"kmeans", "directions", "logit", "random", "mixed"}, default "kmeans"
        Start values of the EM runs (see ``PolyhedralMixtureLogit.fit``).
    max_iter : int, default 500
        Maximum number of iterations of each run.
    tol : float, default 1e-8
        Convergence tolerance on the Newton step (standardised coordinates).
    random_state : int, RandomState, Generator or None, default None
        Seed of the starts. ``None`` uses the engine's fixed seed, so that fits
        are reproducible.
    label_flips : bool, default False
        Fit :class:`~plumestats.api.LabelFlipPolyhedralLogit` instead: a share
        ``flip_rate_`` of the labels is taken to be flipped at random, and
        ``predict_proba`` gives the probabilities of the labels as observed,
        ``eps + (1 - 2 eps) P``. For noisy labels; needs a finite ``gamma``
        and, on data that are a polytope apart from the flips, ``alpha > 0``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels, sorted.
    k_ : int
        The number of hyperplanes fitted (chosen by BIC when ``k`` is
        ``"auto"`` or a sequence).
    bic_ : dict
        The BIC of each candidate K (one entry when ``k`` is an int).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Feature names, when ``X`` in ``fit`` had string column names.
    coef_ : ndarray of shape (K, n_features)
        Slopes of the hyperplanes, in the units of ``X``; ``K`` is ``k_``.
        They bound the polyhedron of the ``inside`` class: with ``inside=0``
        that is ``classes_[0]``'s, and at ``k=1`` they are then minus
        ``LogisticRegression``'s (whose ``coef_`` points to ``classes_[1]``).
    intercept_ : ndarray of shape (K,)
        Intercepts of the hyperplanes (of the ``inside`` class's polyhedron,
        as ``coef_``).
    results_ : PolyhedralMixtureLogitResults
        The statsmodels-style results (``summary()``, ``bse``, ``llf``, ...).
        The outcome is coded 1 for ``classes_[1]``. They hold the training
        data, and so does a pickle of the fitted estimator:
        ``results_.remove_data()`` drops them (predictions are unchanged).
    flip_rate_ : float
        Estimated share of randomly flipped labels (0 unless ``label_flips``).
    converged_ : bool
        Whether the best run converged.
    separated_ : bool
        Whether the fit stopped on separation (no finite maximum).
    n_iter_ : int
        Iterations of the best run.

    Notes
    -----
    **Warnings.** When the fit does not reach a regular maximum the engine's
    warning is re-issued, with its message and advice, in a class that is both
    the engine's statsmodels class and ``sklearn.exceptions.ConvergenceWarning``,
    so that filters written for either library catch it: separable data (no
    finite maximum) give :class:`SeparationConvergenceWarning` (a
    ``PerfectSeparationWarning``), and ``separated_`` is True; any other stop
    short of a maximum gives :class:`UnconvergedFitWarning` (statsmodels'
    ``ConvergenceWarning``). ``converged_`` is False in both cases. Starts that
    ended at different maxima (``n_init`` > 1) give
    :class:`LocalMaximaConvergenceWarning` (plumestats' ``LocalMaximaWarning``);
    ``converged_`` stays True, the fit being the best of its starts; so it
    does with ``label_flips=True`` when the flip rate's estimate is 0, whose
    ``FlipRateBoundaryWarning`` (a note on a converged fit) passes through as
    it is. A penalty
    (``alpha > 0``) gives a finite maximum on separable data, as
    ``LogisticRegression``'s default one does. Warnings that concern only standard
    errors (``HessianInversionWarning``, ``CollinearityWarning``) are not shown:
    predictions do not depend on them, and they remain on ``results_``'s
    statsmodels side for whoever does inference (refit the model there to see
    them). Every other warning passes through unchanged.

    **Defaults.** ``k="auto"`` and ``alpha="auto"`` make the default a
    classifier that does not lose to logistic regression where the data are
    not polyhedral: BIC keeps K = 1 unless more faces raise the likelihood by
    more than their parameters cost (``python -m benchmarks.defaults``
    compares it with ``LogisticRegression()`` on the five UCI data sets).
    The warnings of the candidates not chosen are not shown.

    **Scores.** ``decision_function`` is the log-odds of ``classes_[1]``, so that
    ``predict`` is ``decision_function(X) > 0`` and both rank points as
    ``predict_proba`` does. At ``k=1`` (and for hard gating) it equals the linear
    score :math:`\min_k w_k'\tilde x` of ``coef_`` and ``intercept_`` with
    ``inside=1``, and minus it with ``inside=0`` (the faces then bound
    ``classes_[0]``); that geometric score is ``results_.decision_function``.

    Examples
    --------
    >>> from plumestats.datasets import simulate_polyhedron
    >>> from plumestats.sklearn import PolyhedralClassifier
    >>> data, _ = simulate_polyhedron(500, d=2, k=3, noise=0.05, random_state=0)
    >>> clf = PolyhedralClassifier(k=3).fit(data[["x1", "x2"]], data["y"])
    >>> clf.predict_proba(data[["x1", "x2"]]).shape
    (500, 2)
    """

    def __init__(
        self,
        k: int | str | tuple = "auto",
        gamma: float = 1.0,
        alpha: float | str = "auto",
        mstep: str = "newton",
        inside: int = 1,
        n_init: int = 1,
        init: str = "kmeans",
        max_iter: int = 500,
        tol: float = 1e-8,
        random_state=None,
        label_flips: bool = False,
        reseat: int = 0,
    ):
        self.k = k
        self.gamma = gamma
        self.alpha = alpha
        self.mstep = mstep
        self.inside = inside
        self.n_init = n_init
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.label_flips = label_flips
        self.reseat = reseat

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @property
    def _hard(self) -> bool:
        return isinstance(self.gamma, numbers.Real) and self.gamma == np.inf

    def fit(self, X, y, sample_weight=None) -> PolyhedralClassifier:
        """Fit the polyhedral classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features (numeric, dense; an intercept is added). A one-hot
            encoder's sparse output is refused: give
            ``OneHotEncoder(sparse_output=False)``, or
            ``ColumnTransformer(..., sparse_threshold=0)``.
        y : array-like of shape (n_samples,)
            Two class labels of any type (strings, integers, booleans).
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the samples, as frequency weights (the model's
            ``freq_weights``): an integer weight is the sample repeated, a
            weight of 0 leaves it out. ``alpha="auto"`` is then ``1 /
            sum(sample_weight)`` and the BIC of ``k="auto"`` counts
            ``sum(sample_weight)`` observations.

        Returns
        -------
        self
        """
        # on a copy (the same parameters: a Generator seed is shared), so that
        # a fit that fails (a parameter, the data) leaves this one as it was:
        # refitted in place, classes_ were replaced before the error
        trial = copy.copy(self)
        for name in _fitted_attributes(trial):
            delattr(trial, name)
        trial._fit(X, y, sample_weight)
        # (the parameters are the same objects: the trial's state is ours)
        vars(self).clear()
        vars(self).update(vars(trial))
        return self

    def _fit(self, X, y, sample_weight) -> None:
        check_missing_labels(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        if sample_weight is not None:
            sample_weight = sample_weights(sample_weight, X.shape[0])
        check_labels(y)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        self.classes_, y_coded = np.unique(y, return_inverse=True)
        if y_type != "binary" or self.classes_.size != 2:
            n_classes = self.classes_.size
            if n_classes < 2:
                raise ValueError(
                    f"{type(self).__name__} needs samples of 2 classes, but the "
                    f"data contain only 1 class: {plain_label(self.classes_[0])!r}"
                )
            raise ValueError(
                f"{type(self).__name__} is a binary classifier. Only binary "
                f"classification is supported. The type of the target is {y_type} "
                f"({n_classes} classes); for more classes wrap it in "
                "sklearn.multiclass.OneVsRestClassifier."
            )
        if isinstance(self.inside, (bool, np.bool_)) or self.inside not in (0, 1):
            raise ValueError(
                "inside must be 0 or 1, the index into classes_ of the class that "
                f"forms the polyhedron; got {self.inside!r}"
            )
        # named columns, so that results_.summary() speaks the user's names
        features = [str(name) for name in self._feature_names()]
        intercept = "Intercept"
        while intercept in features:  # X may hold a column of that name already
            intercept = f"_{intercept}"
        design = pd.DataFrame(_with_intercept(X), columns=[intercept, *features])
        if not self._hard:
            check_gamma(
                self.gamma,
                hard=None if self.label_flips else "PolyhedralClassifier(gamma=np.inf)",
            )
        if check_flag(self.label_flips, "label_flips") and self._hard:
            raise ValueError(
                "label_flips=True needs soft gating (a finite gamma); the label-"
                "flip model has no hard-gating variant"
            )
        try:
            results = self._fit_candidates(
                y_coded.astype(float), design, X.shape, sample_weight
            )
        except ValueError as exc:  # the engine's words for y and sample_weight
            reworded = in_estimator_words(str(exc))
            if type(exc) is not ValueError or reworded == str(exc):
                raise  # a LinAlgError stays one
            raise ValueError(reworded) from exc
        params = np.asarray(results.params, dtype=float)
        self.flip_rate_ = float(results.flip_rate) if self.label_flips else 0.0
        weights = params[: self.k_ * design.shape[1]].reshape(self.k_, -1)
        self.intercept_ = weights[:, 0].copy()
        self.coef_ = weights[:, 1:].copy()
        self.results_ = results
        self.converged_ = bool(results.converged)
        self.separated_ = bool(results.mle_retvals.get("separation", False))
        # scikit-learn counts at least one iteration; a start that already is
        # the maximum (K = 1 at alpha = 1/n: the start is that very fit) has none
        self.n_iter_ = max(int(results.n_iter), 1)

    def _fit_candidates(self, y_float, design, shape, sample_weight):
        """Fit every candidate K, keep the smallest BIC (``k_``, ``bic_``) and
        re-issue the kept fit's warnings. With ``k="auto"`` a candidate
        beyond K = 1 that cannot be fitted (an error) is left out, and said."""
        fits, errors = {}, {}
        n_samples = shape[0] if sample_weight is None else np.sum(sample_weight)
        for k in self._candidate_ks(n_samples, shape[1]):
            # the model is built inside the block too: its design check is
            # where a CollinearityWarning (inference only, see the Notes) comes from
            # (catch_warnings swaps the process's warning state: two threads'
            # fits at once left every later warning unshown, Python < 3.14)
            with _CATCHING, warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    fits[k] = (
                        self._fit_model(y_float, design, k, sample_weight),
                        caught,
                    )
                except (ValueError, np.linalg.LinAlgError) as exc:
                    if not (_is_auto(self.k) and k > 1):
                        raise
                    errors[k] = exc
        warn_left_out(errors)
        self.bic_ = {k: float(results.bic) for k, (results, _) in fits.items()}
        self.k_ = min(self.bic_, key=lambda k: (self.bic_[k], k))
        results, caught = fits[self.k_]
        _reissue_fit_warnings(caught)
        return results

    def _candidate_ks(self, n_samples: float, n_features: int) -> list[int]:
        """The numbers of faces to fit: ``k`` itself, or the candidates (of
        ``"auto"``: those with fewer parameters than samples, weighted ones
        counted as repeated, and K = 1)."""
        k = self.k
        if _is_auto(k):
            return [k for k in AUTO_KS if k == 1 or k * (n_features + 1) < n_samples]
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            return [int(k)]
        values = [] if isinstance(k, str) or not np.iterable(k) else list(k)
        if not values or not all(
            isinstance(value, numbers.Integral) and not isinstance(value, bool)
            for value in values
        ):
            raise ValueError(
                f'k must be an int, "auto" or a non-empty sequence of ints; got {k!r}'
            )
        return sorted({int(value) for value in values})

    def _fit_model(self, y_float, design, k, sample_weight=None):
        """The engine's fit with ``k`` faces."""
        weights = {"inside": self.inside, "freq_weights": sample_weight}
        if self._hard:
            model = HardPolyhedralLogit(y_float, design, k=k, **weights)
        else:
            soft = (
                LabelFlipPolyhedralLogit if self.label_flips else PolyhedralMixtureLogit
            )
            model = soft(y_float, design, k=k, gamma=self.gamma, **weights)
        return model.fit(
            maxiter=self.max_iter,
            tol=self.tol,
            mstep=self.mstep,
            init=self.init,
            n_init=self.n_init,
            random_state=_engine_seed(self.random_state),
            alpha=self._alpha(model.nobs),
            reseat=self.reseat,
        )

    def _alpha(self, n_samples: int):
        """``alpha`` as the engine takes it (``"auto"``: ``1 / n_samples``,
        the weighted count with ``sample_weight``)."""
        if isinstance(self.alpha, str):
            if self.alpha != "auto":
                raise ValueError(
                    f'alpha must be a number >= 0 or "auto"; got {self.alpha!r}'
                )
            return 1.0 / n_samples
        return self.alpha

    def _feature_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return [f"x{j + 1}" for j in range(self.n_features_in_)]
        return [str(name) for name in names]

    def decision_function(self, X) -> np.ndarray:
        r"""Log-odds of ``classes_[1]``: :math:`\log P(c_1 \mid x) - \log P(c_0
        \mid x)`, positive where ``classes_[1]`` is predicted.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        # the model's own log-odds of the class coded 1 (with flips: of the
        # label as observed), as results_.get_prediction computes them
        model, params = self.results_.model, np.asarray(self.results_.params)
        return model._log_odds_and_jacobian(params, _with_intercept(X), False)[0]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, columns ordered as ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        log_odds = self.decision_function(X)
        return np.column_stack([expit(-log_odds), expit(log_odds)])

    def predict_log_proba(self, X) -> np.ndarray:
        """Log class probabilities, columns ordered as ``classes_``."""
        log_odds = self.decision_function(X)
        return _log_expit_columns(log_odds)

    def predict(self, X) -> np.ndarray:
        """Predicted labels: ``classes_[1]`` where its probability exceeds 1/2.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def _log_expit_columns(log_odds: np.ndarray) -> np.ndarray:
    return np.column_stack([log_expit(-log_odds), log_expit(log_odds)])


def _with_intercept(X: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(X.shape[0]), X])


def _engine_seed(random_state):
    """The engine takes None, an int or a Generator; scikit-learn users also pass
    a RandomState, from which one seed is drawn (as scikit-learn itself does)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _fitted_attributes(estimator) -> list[str]:
    """The attributes a fit sets (scikit-learn's convention: a trailing
    underscore), ``n_features_in_`` and ``feature_names_in_`` among them."""
    return [name for name in vars(estimator) if name.endswith("_")]


def _is_auto(value) -> bool:
    """Whether a parameter is the string ``"auto"`` (an array compares
    element by element, so ``==`` alone is no test)."""
    return isinstance(value, str) and value == "auto"


def _reissue_fit_warnings(caught) -> None:
    """Re-issue the engine's warnings of the fit kept, for scikit-learn users:
    see the Notes of :class:`~plumestats.sklearn.PolyhedralClassifier`."""
    for warning in caught:
        if issubclass(warning.category, _INFERENCE_ONLY):
            continue
        category = None
        if not issubclass(warning.category, _CONVERGED_NOTES):
            category = next(
                (
                    both
                    for engine, both in _UNSETTLED
                    if issubclass(warning.category, engine)
                ),
                None,
            )
        # the engine's advice (fit(n_init=20), maxiter) as this estimator's
        message = in_estimator_words(str(warning.message))
        if category is not None:
            # frames: this function, _fit_candidates, _fit, fit, fit's caller
            warnings.warn(message, category, stacklevel=5)
        else:
            warnings.warn_explicit(
                message, warning.category, warning.filename, warning.lineno
            )
