"""The models, hyper-parameter settings and inner selection of ``table1.py``.

Every method is fitted through :func:`fit_family` on a design without a constant
column (the statsmodels-based models add it), and every fit goes through
:func:`attempt`, which times nothing itself but catches and counts the warnings
and the usual fit errors. :func:`select` is the inner cross-validation.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import statsmodels.api as sm
from scipy import stats
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from statsmodels.tools.sm_exceptions import PerfectSeparationError

from plumestats._em import EMOptions
from plumestats.api import HardPolyhedralLogit, PolyhedralMixtureLogit

# SPLA1's likelihood has kinks where two scores tie; near a maximum on one,
# Newton steps used to crawl for hundreds of iterations gaining ~1e-4 each
# (heart, K = 3: -68.00 after 30 iterations, -67.90 after 500). Since the
# library's kinked Newton steps shrink their trust region with the line
# search (39db3b8, 6edebeb) they rarely run long (the final fits of heart, ILPD
# and Pima over 10 repeats: at most 79 iterations); the cap stays as a guard.
SPLA1_MAXITER = 100
TIE_TOLERANCE = 1e-12  # inner scores this close count as a tie
PROBABILITY_CLIP = 1e-15  # log-loss of P(y=1) clipped to [clip, 1 - clip]


@dataclass(frozen=True)
class Grids:
    """Hyper-parameter grids of the tuned methods."""

    ks: tuple[int, ...]
    gammas: tuple[float, ...]
    alphas: tuple[float, ...]
    insides: tuple[int, ...]
    svm_cs: tuple[float, ...]
    svm_gammas: tuple[float, ...]
    cart_depths: tuple[int | None, ...]
    cart_leaves: tuple[int, ...]


# ------------------------------------------------------------------ settings
@dataclass(frozen=True)
class PolySetting:
    """A PLUME or SPLA1 setting; ``gamma`` is None for SPLA1, and ``gamma`` and
    ``inside`` are None at K = 1, where the model is logistic regression."""

    k: int
    alpha: float
    gamma: float | None = None
    inside: int | None = None

    def tie_key(self) -> tuple:
        """Ties go to smaller K, then larger alpha, smaller gamma, class 1 inside."""
        return (self.k, -self.alpha, self.gamma or 0.0, self.inside != 1)

    def warm_group(self, along: str = "alpha") -> tuple:
        """Settings on one warm-start path: those that differ only in alpha
        (``along="alpha"``), or in alpha and gamma (``"grid"``)."""
        if along == "grid":
            return (self.k, self.inside)
        return (self.k, self.gamma, self.inside)

    def describe(self) -> str:
        parts = [f"K={self.k}", f"alpha={self.alpha:g}"]
        if self.gamma is not None:
            parts.append(f"gamma={self.gamma:g}")
        if self.inside is not None:
            parts.append(f"inside={self.inside}")
        return " ".join(parts)


@dataclass(frozen=True)
class SvmSetting:
    """RBF SVM: cost ``C`` and kernel width ``gamma`` (standardised features)."""

    C: float
    gamma: float

    def tie_key(self) -> tuple:
        """Ties go to the smoother fit: smaller C, then smaller gamma."""
        return (self.C, self.gamma)

    def describe(self) -> str:
        return f"C={self.C:g} gamma={self.gamma:g}"


@dataclass(frozen=True)
class CartSetting:
    """Decision tree: maximum depth (None: grown fully) and minimum leaf size."""

    max_depth: int | None
    min_samples_leaf: int

    def tie_key(self) -> tuple:
        """Ties go to the shallower tree, then the larger leaves."""
        depth = np.inf if self.max_depth is None else self.max_depth
        return (depth, -self.min_samples_leaf)

    def describe(self) -> str:
        return f"max_depth={self.max_depth} min_samples_leaf={self.min_samples_leaf}"


Setting = PolySetting | SvmSetting | CartSetting


def plume_candidates(grids: Grids) -> list[PolySetting]:
    """K = 1 once per alpha; K > 1 over gamma x alpha x inside."""
    single = [PolySetting(1, alpha) for alpha in grids.alphas]
    return single + [
        PolySetting(k, alpha, gamma, inside)
        for k in grids.ks
        if k > 1
        for gamma in grids.gammas
        for inside in grids.insides
        for alpha in grids.alphas
    ]


def spla1_candidates(grids: Grids) -> list[PolySetting]:
    """K = 1 once per alpha; K > 1 over alpha x inside."""
    single = [PolySetting(1, alpha) for alpha in grids.alphas]
    return single + [
        PolySetting(k, alpha, None, inside)
        for k in grids.ks
        if k > 1
        for inside in grids.insides
        for alpha in grids.alphas
    ]


def candidates(family: str, grids: Grids) -> list[Setting]:
    """The grid searched by the inner cross-validation of ``family``."""
    if family == "plume":
        return plume_candidates(grids)
    if family == "spla1":
        return spla1_candidates(grids)
    if family == "svm":
        return [SvmSetting(c, g) for c in grids.svm_cs for g in grids.svm_gammas]
    if family == "cart":
        return [
            CartSetting(d, leaf)
            for d in grids.cart_depths
            for leaf in grids.cart_leaves
        ]
    raise ValueError(f"{family} has no grid")


# ------------------------------------------------------------------ learners
@dataclass
class Fitted:
    """A fitted classifier: ``predict`` maps design rows (no constant) to
    P(y = 1 | x), or to 0/1 labels for the SVM."""

    predict: Callable[[np.ndarray], np.ndarray]
    seconds: float
    iterations: float
    converged: bool | None = None
    params: np.ndarray | None = None
    llf: float = np.nan


@dataclass(frozen=True)
class FitContext:
    """Fit options that are not hyper-parameters."""

    mstep: str = "newton"
    seed: int = 0
    start_params: np.ndarray | None = None
    n_init: int = 1
    em_tol: float = EMOptions.em_tol  # the library's hand-over to Newton
    em_overrelax: float = EMOptions.overrelax  # the library's plain EM steps


def with_constant(design: np.ndarray) -> np.ndarray:
    """The design with a leading column of ones (the intercepts)."""
    return np.column_stack([np.ones(design.shape[0]), design])


def fit_poly(
    design: np.ndarray,
    y: np.ndarray,
    setting: PolySetting,
    context: FitContext,
    hard: bool,
) -> Fitted:
    """PLUME (or SPLA1 when ``hard``) by EM at ``setting``; ``.fit()`` timed."""
    exog = with_constant(design)
    inside = 1 if setting.inside is None else setting.inside
    if hard:
        model = HardPolyhedralLogit(y, exog, k=setting.k, inside=inside)
    else:
        gamma = 1.0 if setting.gamma is None else setting.gamma
        model = PolyhedralMixtureLogit(y, exog, k=setting.k, gamma=gamma, inside=inside)
    start = time.perf_counter()
    results = model.fit(
        start_params=context.start_params,
        maxiter=SPLA1_MAXITER if hard else 500,
        n_init=1
        if context.start_params is not None or setting.k == 1
        else context.n_init,
        alpha=setting.alpha,
        mstep=context.mstep,
        random_state=context.seed,
        em_tol=context.em_tol,
        # SPLA1's EM steps are never over-relaxed (fit refuses the option)
        em_overrelax=EMOptions.overrelax if hard else context.em_overrelax,
        # the protocol's fits make no re-seating moves (the library's default
        # since 2026-11-26 makes three): its canonical report keeps its meaning
        reseat=0,
        disp=False,
    )
    seconds = time.perf_counter() - start
    params = np.asarray(results.params)
    return Fitted(
        lambda rows: model.predict(params, with_constant(rows)),
        seconds,
        float(results.mle_retvals["iterations"]),
        bool(results.mle_retvals["converged"]),
        params,
        float(results.llf),
    )


def fit_logit(design: np.ndarray, y: np.ndarray) -> Fitted:
    """statsmodels ``Logit`` with its defaults (Newton, at most 35 iterations)."""
    model = sm.Logit(y, with_constant(design))
    start = time.perf_counter()
    results = model.fit(disp=0)
    seconds = time.perf_counter() - start
    params = np.asarray(results.params)
    return Fitted(
        lambda rows: model.predict(params, with_constant(rows)),
        seconds,
        float(results.mle_retvals["iterations"]),
        bool(results.mle_retvals["converged"]),
        llf=float(results.llf),
    )


def fit_svm(design: np.ndarray, y: np.ndarray, setting: SvmSetting) -> Fitted:
    """RBF SVC; predicts labels (no probabilities, no Platt scaling)."""
    model = SVC(kernel="rbf", C=setting.C, gamma=setting.gamma)
    start = time.perf_counter()
    model.fit(design, y)
    seconds = time.perf_counter() - start
    return Fitted(model.predict, seconds, float(np.sum(model.n_iter_)))


def fit_cart(
    design: np.ndarray, y: np.ndarray, setting: CartSetting, context: FitContext
) -> Fitted:
    """CART (scikit-learn's decision tree, Gini); predicts the leaf's P(y = 1)."""
    model = DecisionTreeClassifier(
        max_depth=setting.max_depth,
        min_samples_leaf=setting.min_samples_leaf,
        random_state=context.seed,
    )
    start = time.perf_counter()
    model.fit(design, y)
    seconds = time.perf_counter() - start
    positive = list(model.classes_).index(1.0)
    return Fitted(lambda rows: model.predict_proba(rows)[:, positive], seconds, np.nan)


def fit_family(
    family: str,
    design: np.ndarray,
    y: np.ndarray,
    setting: Setting | None,
    context: FitContext,
) -> Fitted:
    """Fit the model of ``family`` at ``setting``."""
    if family in ("plume", "spla1"):
        return fit_poly(design, y, setting, context, hard=family == "spla1")
    if family == "logit":
        return fit_logit(design, y)
    if family == "svm":
        return fit_svm(design, y, setting)
    return fit_cart(design, y, setting, context)


@dataclass
class Attempt:
    """The outcome of one fit: the fitted model (None if it raised), the warnings
    it raised and the error message."""

    fitted: Fitted | None
    warnings: Counter[str]
    error: str | None = None


FIT_ERRORS = (
    ValueError,
    ArithmeticError,
    np.linalg.LinAlgError,
    PerfectSeparationError,
)


def attempt(fit: Callable[[], Fitted]) -> Attempt:
    """Run ``fit``, catching and counting its warnings and the usual fit errors."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fitted, error = fit(), None
        except FIT_ERRORS as exc:
            fitted, error = None, f"{type(exc).__name__}: {exc}"
    return Attempt(fitted, Counter(warning_name(w.category) for w in caught), error)


def warning_name(category: type) -> str:
    """The warning's class name; scikit-learn's prefixed (it also has a
    ConvergenceWarning)."""
    prefix = "sklearn." if category.__module__.startswith("sklearn") else ""
    return prefix + category.__name__


# ------------------------------------------------------------------ scoring
def correct(y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per row: 1 where ``predicted > 0.5`` agrees with ``y`` (probabilities or
    0/1 labels), else 0."""
    return ((predicted > 0.5) == (y == 1)).astype(float)


def log_likelihood_rows(y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per row: the log-likelihood of ``y`` under P(y = 1) = ``predicted``
    (minus the log-loss; higher is better, like accuracy)."""
    p = np.clip(predicted, PROBABILITY_CLIP, 1 - PROBABILITY_CLIP)
    return y * np.log(p) + (1 - y) * np.log1p(-p)


def accuracy(y: np.ndarray, predicted: np.ndarray) -> float:
    """Share of rows with ``predicted > 0.5`` equal to ``y``."""
    return float(np.mean(correct(y, predicted)))


def selection_scorer(family: str, select: str) -> Callable:
    """``--select`` for the likelihood models; accuracy for SVM and CART (the SVM
    has no probabilities, CART's pure leaves have an infinite log-loss)."""
    if select == "logloss" and family in ("plume", "spla1"):
        return log_likelihood_rows
    return correct


# ------------------------------------------------------------------ selection
def pool_by_row(values: list[np.ndarray], splits: list[Split]) -> np.ndarray:
    """Per-row validation scores pooled over the inner splits.

    With one cross-validation each row is validated once and keeps its one
    score. With R repeats (reshuffled folds), each row's R scores are
    averaged, so that the rows stay the units of the paired standard errors of
    :func:`choose` (stacking R correlated copies of a row would shrink them by
    about sqrt(R)). Rows come out in data-set order, the same for every setting.
    """
    rows = np.concatenate([split.test_rows for split in splits])
    _, row_index = np.unique(rows, return_inverse=True)
    totals = np.bincount(row_index, weights=np.concatenate(values))
    return totals / np.bincount(row_index)


@dataclass(frozen=True)
class Split:
    """Training and validation designs and outcomes of one (inner) split.

    ``test_rows`` identifies the validation rows (indices into the data set),
    so that scores from inner cross-validations repeated with different
    shuffles can be averaged row by row (:func:`pool_by_row`).
    """

    train: np.ndarray
    y_train: np.ndarray
    test: np.ndarray
    y_test: np.ndarray
    test_rows: np.ndarray


@dataclass
class Selection:
    """The chosen setting of one family on one outer training fold, with the
    cost of the search and its slowest setting (wall seconds over the inner
    folds)."""

    setting: Setting
    score: float
    seconds: float
    warnings: Counter[str] = field(default_factory=Counter)
    failures: int = 0
    slowest: tuple[str, float] = ("", 0.0)


WARM_STARTS = ("alpha", "grid")


def search_order(settings: list[Setting], warm_start: str | None) -> list[Setting]:
    """A warm start walks each group's alphas from the largest (smoothest)
    down; along the grid (``"grid"``), one gamma after the other, the
    smallest (smoothest gate) first."""
    if not warm_start:
        return settings
    return sorted(
        settings,
        key=lambda s: (*map(str, s.warm_group(warm_start)), s.gamma or 0.0, -s.alpha),
    )


def warm_params(
    previous: dict, index: int, setting: PolySetting, warm_start: str | None
) -> np.ndarray | None:
    """The estimate a warm-started fit of ``setting`` on inner fold ``index``
    starts from: the previous (larger) alpha's at the same K/gamma/inside;
    along the grid, for the largest alpha, the previous (smaller) gamma's at
    the same alpha. None: a cold fit, from the k-means starts."""
    if not warm_start:
        return None
    start = previous.get((index, "alpha", setting.warm_group()))
    if start is None and warm_start == "grid":
        across = (index, "gamma", setting.warm_group("grid"), setting.alpha)
        start = previous.get(across)
    return start


def remember(previous: dict, index: int, setting: PolySetting, params) -> None:
    """Keep an estimate for the warm starts of :func:`warm_params`."""
    previous[(index, "alpha", setting.warm_group())] = params
    previous[(index, "gamma", setting.warm_group("grid"), setting.alpha)] = params


def best_of(means: dict[Setting, float], settings: list[Setting]) -> Setting:
    """The best mean of ``settings``; ties (within 1e-12) go to the simplest
    (``tie_key``)."""
    top = max(means[s] for s in settings)
    tied = [s for s in settings if means[s] >= top - TIE_TOLERANCE]
    return min(tied, key=lambda s: s.tie_key())


def within_n_se(
    better: np.ndarray, other: np.ndarray, n_se: float, tolerance: float = 0.0
) -> bool:
    """Whether per-row scores ``better`` beat ``other`` by at most ``n_se``
    standard errors of their paired difference (plus ``tolerance``); False when
    a difference is not finite (a failed fit cannot be kept). The rule of
    ``ps.select_k(criterion="cv")``, written out here: it is part of Table 1's
    protocol."""
    difference = better - other
    if not np.all(np.isfinite(difference)):
        return False
    se = float(stats.sem(difference)) if difference.size > 1 else 0.0
    return bool(np.mean(difference) <= n_se * se + tolerance)


RULES = ("best", "one-se", "gate", "gate-mle")


def choose(
    scores: dict[Setting, np.ndarray],
    rule: str = "one-se",
    n_se: float = 1.0,
) -> Setting:
    """The chosen setting from each setting's per-row validation scores (pooled
    over the inner folds, rows in the same order for every setting).

    ``rule="best"``: the best mean score, ties broken by ``tie_key``.
    ``rule="one-se"`` (Breiman's one-standard-error rule, applied to the model
    size K of PLUME and SPLA1): the smallest K whose best setting scores within
    ``n_se`` standard errors of the overall best, the standard error being that
    of the paired per-row difference; then that K's best setting. The best mean
    is an optimistic, noisy pick among dozens of settings: a larger K has to
    beat a smaller one by more than the noise.
    ``rule="gate"``: the best setting, unless it is a polyhedron (K >= 2) that
    beats the best K = 1 setting (logistic regression) by no more than ``n_se``
    standard errors of the paired per-row difference; then K = 1's best. Unlike
    ``"one-se"`` it does not trade a larger K for a smaller K >= 2: it only asks
    whether a polyhedron beats the simpler model at all.
    ``rule="gate-mle"``: as ``"gate"``, but when K = 1 wins, the unpenalised
    fit (alpha = 0, logistic regression's maximum-likelihood estimate, the fit
    of statsmodels' ``Logit``) is returned. The penalised K = 1 settings are
    then only the yardstick a polyhedron must beat: the held-out log-likelihood
    picks the penalty that shrinks P(y=1|x) towards the base rate, and on a
    weak signal (ilpd) that shrinkage turns predictions to the majority class
    and costs accuracy.
    Settings without a K (SVM, CART) always use ``"best"``.
    """
    means = {setting: float(np.mean(values)) for setting, values in scores.items()}
    best = best_of(means, list(scores))
    if not hasattr(best, "k"):
        return best
    size = best.k
    if rule == "one-se":
        for k in sorted({setting.k for setting in scores}):
            candidate = best_of(means, [s for s in scores if s.k == k])
            if within_n_se(scores[best], scores[candidate], n_se, TIE_TOLERANCE):
                size = k
                break
    elif rule in ("gate", "gate-mle") and best.k > 1:
        simplest = [s for s in scores if s.k == 1]
        if simplest:
            logistic = best_of(means, simplest)
            if within_n_se(scores[best], scores[logistic], n_se, TIE_TOLERANCE):
                size = 1
    elif rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")
    chosen = best_of(means, [s for s in scores if s.k == size])
    if rule == "gate-mle" and chosen.k == 1:
        return replace(chosen, alpha=0.0)
    return chosen


def select(
    family: str,
    splits: list[Split],
    grids: Grids,
    criterion: str,
    context: FitContext,
    warm_start: str | None = None,
    rule: str = "one-se",
) -> Selection:
    """Inner cross-validation of ``family`` over its grid.

    Parameters
    ----------
    family : {"plume", "spla1", "svm", "cart"}
        The model family (PLUME is searched with ``context.mstep``).
    splits : list of Split
        The inner folds, each with a design fitted on its training rows.
    grids : Grids
        The grids; see :func:`candidates`.
    criterion : {"accuracy", "logloss"}
        The criterion of the likelihood models (:func:`selection_scorer`).
    context : FitContext
        M-step and seed of the fits.
    warm_start : {None, "alpha", "grid"}
        Start each PLUME/SPLA1 fit from the estimate at the previous, larger
        alpha of the same K/gamma/inside on the same inner fold; with
        ``"grid"``, the largest alpha's fit from the previous, smaller
        gamma's at that alpha too (:func:`warm_params`), so that only the
        first setting of each K/inside runs the k-means starts.
    rule : {"one-se", "gate", "gate-mle", "best"}
        How the per-row scores choose a setting (:func:`choose`).

    Returns
    -------
    Selection
        The setting :func:`choose` picks. A fit that raises scores minus
        infinity on its fold and is counted in ``failures``.
    """
    scorer = selection_scorer(family, criterion)
    if warm_start not in (None, *WARM_STARTS):
        raise ValueError(f"warm_start must be None or one of {WARM_STARTS}")
    warm = warm_start if family in ("plume", "spla1") else None
    previous: dict[tuple, np.ndarray] = {}
    scores: dict[Setting, np.ndarray] = {}
    costs: dict[Setting, float] = {}
    caught: Counter[str] = Counter()
    failures = 0
    start = time.perf_counter()
    for setting in search_order(candidates(family, grids), warm):
        values = []
        setting_start = time.perf_counter()
        for index, split in enumerate(splits):
            fit_context = replace(
                context, start_params=warm_params(previous, index, setting, warm)
            )
            outcome = attempt(
                lambda s=split, c=fit_context, st=setting: fit_family(
                    family, s.train, s.y_train, st, c
                )
            )
            caught.update(outcome.warnings)
            if outcome.fitted is None:
                failures += 1
                values.append(np.full(split.y_test.size, -np.inf))
                continue
            if warm:
                remember(previous, index, setting, outcome.fitted.params)
            values.append(scorer(split.y_test, outcome.fitted.predict(split.test)))
        scores[setting] = pool_by_row(values, splits)
        costs[setting] = time.perf_counter() - setting_start
    chosen = choose(scores, rule)
    # gate-mle's unpenalised K = 1 was not searched: report the score of the
    # penalised K = 1 setting that won the gate for it
    scored = chosen if chosen in scores else choose(scores, "gate")
    slowest = max(costs, key=costs.get)
    return Selection(
        chosen,
        float(np.mean(scores[scored])),
        time.perf_counter() - start,
        caught,
        failures,
        (slowest.describe(), costs[slowest]),
    )
