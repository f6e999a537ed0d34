"""The data, fits and rivals of ``polyhedral.py``: one simulated setting
(:func:`make_split`), PLUME, PLUME with label flips and SPLA1 chosen by
cross-validation at the true K (:func:`run_polyhedral`), K by BIC, and
statsmodels' ``Logit``, an RBF SVM and CART (:func:`run_logit`,
:func:`run_svm`, :func:`run_cart`)."""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.optimize import linear_sum_assignment
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from plumestats.api import (
    HardPolyhedralLogit,
    LabelFlipPolyhedralLogit,
    PolyhedralMixtureLogit,
    simulate_polyhedron,
)

from ._table1_fits import log_likelihood_rows
from .fit_speed import timed_fit

CV_FOLDS = 3
LOGIT_FALLBACK_L1 = 1.0  # statsmodels' L1 weight (on the sum, not per observation)
WITHIN_POINTS = 1.0  # the target: PLUME within 1 point of the true polytope


@dataclass(frozen=True)
class Grids:
    """Hyper-parameter grids and fit options of one run."""

    # Noise-free polytopes are separable: the smaller penalties let the faces
    # sharpen (with 1e-4 as the smallest, 5 of 9 noise-free settings with
    # d <= 10 came within 1 point of the true polytope; with 1e-6, 8 of 9)
    alphas: tuple[float, ...] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
    gammas: tuple[float, ...] = (1.0, 5.0)
    n_init: int = 3
    # PLUME's and SPLA1's re-seating moves after the restarts: fit(reseat=K)
    reseat: bool = False
    # PLUME's and SPLA1's CV criterion: "accuracy", or "logloss" (the mean
    # held-out log-likelihood, Table 1's criterion); the rivals use accuracy
    select: str = "accuracy"
    svm_c: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
    svm_gamma: tuple[str | float, ...] = ("scale", 0.01, 0.1, 1.0)
    depths: tuple[int | None, ...] = (2, 4, 6, 8, 12, None)
    bic_extra: int = 2  # PLUME (K by BIC) tries K' = 1 .. K + bic_extra


QUICK_GRIDS = Grids(
    alphas=(1e-3, 1e-2),
    gammas=(1.0,),
    n_init=1,
    svm_c=(1.0, 10.0),
    svm_gamma=("scale",),
    depths=(2, 4, None),
)
FULL_SETTINGS = {"ds": (2, 5, 10, 20), "ks": (2, 4, 6), "noises": (0.0, 0.05, 0.10)}
QUICK_SETTINGS = {"ds": (2, 5), "ks": (2,), "noises": (0.0, 0.10)}
FULL_SIZES = {"n_train": 2000, "n_test": 10000}
QUICK_SIZES = {"n_train": 500, "n_test": 2000}


@dataclass(frozen=True)
class Setting:
    """One cell of the grid: dimension, true faces, label noise and seed."""

    d: int
    k: int
    noise: float
    seed: int

    @property
    def label(self) -> str:
        return f"d={self.d}, K={self.k}, noise={self.noise:.2f}"


@dataclass(frozen=True)
class Split:
    """Training and test data of one setting, and the true polytope."""

    x_train: pd.DataFrame  # with an ``Intercept`` column, like the truth
    y_train: np.ndarray
    x_test: pd.DataFrame
    y_test: np.ndarray
    truth: pd.DataFrame  # (K, d + 1), columns Intercept, x1..xd
    folds: list[tuple[np.ndarray, np.ndarray]]

    @property
    def true_accuracy(self) -> float:
        """Accuracy of ``min_k h_k'[1, x] >= 0`` on the (noisy) test labels."""
        inside = (self.x_test.to_numpy() @ self.truth.to_numpy().T).min(axis=1) >= 0
        return accuracy(self.y_test, inside)

    def features(self, which: str) -> np.ndarray:
        """The features without the constant column, for scikit-learn."""
        frame = self.x_train if which == "train" else self.x_test
        return frame.drop(columns="Intercept").to_numpy()


@dataclass
class MethodResult:
    """What one method achieved on one setting and seed."""

    method: str
    status: str = "ok"
    test_accuracy: float = np.nan
    polytope_accuracy: float = np.nan  # of min_k w_k'[1, x] >= 0 (plumestats)
    fit_seconds: float = np.nan
    total_seconds: float = np.nan
    hyper: str = ""
    k_fitted: float = np.nan
    iterations: float = np.nan
    converged: bool | None = None
    cos_mean: float = np.nan
    cos_min: float = np.nan
    offset_mad: float = np.nan
    warnings: Counter[str] = field(default_factory=Counter)
    selection_warnings: Counter[str] = field(default_factory=Counter)
    message: str = ""


@dataclass(frozen=True)
class PolyhedralChoice:
    """The CV choice for PLUME or SPLA1 and the refit on the training set."""

    gamma: float | None
    alpha: float
    cv_score: float  # accuracy or mean log-likelihood (``Grids.select``)
    cv_seconds: float
    res: Any
    fit_seconds: float
    fit_warnings: list[str]
    flips: bool = False  # LabelFlipPolyhedralLogit rather than PLUME
    # every candidate's (score, ...) row and the CV time, for reuse by a
    # method whose grid extends this one (PLUME + flips extends PLUME)
    table: tuple = ()


# ------------------------------------------------------------------------ data
def accuracy(y: np.ndarray, predicted_inside: np.ndarray) -> float:
    """Share of ``y`` (0/1) equal to the boolean prediction."""
    return float(np.mean(np.asarray(predicted_inside, dtype=bool) == (y == 1)))


def make_split(setting: Setting, n_train: int, n_test: int) -> Split:
    """Simulate once, split first ``n_train`` / rest, and build the CV folds."""
    data, truth = simulate_polyhedron(
        n_train + n_test,
        d=setting.d,
        k=setting.k,
        noise=setting.noise,
        random_state=setting.seed,
    )
    names = [f"x{j + 1}" for j in range(setting.d)]
    design = pd.DataFrame({"Intercept": 1.0}, index=data.index).join(data[names])
    y = data["y"].to_numpy()
    folds = StratifiedKFold(CV_FOLDS, shuffle=True, random_state=setting.seed)
    x_train, y_train = design.iloc[:n_train], y[:n_train]
    return Split(
        x_train=x_train,
        y_train=y_train,
        x_test=design.iloc[n_train:],
        y_test=y[n_train:],
        truth=truth[design.columns],
        folds=list(folds.split(x_train, y_train)),
    )


# -------------------------------------------------------------- PLUME & SPLA1
def caught_call(fit: Callable[[], Any]) -> tuple[Any, list[str], str]:
    """Run ``fit``, catching warnings; return its result (``None`` if it raised),
    the warning category names and the error message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = fit(), ""
        except Exception as exc:  # a benchmark records failures, it does not stop
            result, error = None, f"{type(exc).__name__}: {exc}"
    return result, [w.category.__name__ for w in caught], error


def polyhedral_fit(
    y: np.ndarray,
    x: pd.DataFrame,
    k: int,
    gamma: float | None,
    alpha: float,
    n_init: int,
    seed: int,
    flips: bool = False,
    reseat: bool = False,
) -> Callable[[], Any]:
    """A closure fitting PLUME (``gamma`` given), PLUME with label flips
    (``flips``) or SPLA1 (``gamma=None``); ``reseat``: with up to K re-seating
    moves after the restarts."""
    if gamma is None:
        model = HardPolyhedralLogit(y, x, k=k)
    elif flips:
        model = LabelFlipPolyhedralLogit(y, x, k=k, gamma=gamma)
    else:
        model = PolyhedralMixtureLogit(y, x, k=k, gamma=gamma)
    moves = k if reseat else 0
    return lambda: model.fit(
        alpha=alpha, n_init=n_init, random_state=seed, reseat=moves
    )


def predict_inside(res: Any, x: pd.DataFrame) -> np.ndarray:
    """Predicted class 1 (``P(y = 1 | x) >= 0.5``) of a plumestats fit."""
    return np.asarray(res.predict(x.to_numpy())) >= 0.5


def cv_score(
    split: Split,
    k: int,
    gamma: float | None,
    alpha: float,
    grids: Grids,
    seed: int,
    flips: bool = False,
) -> tuple[float, Counter[str]]:
    """Mean held-out accuracy or log-likelihood (``grids.select``) over the CV
    folds, larger is better (NaN if any fold's fit failed)."""
    scores, counts = [], Counter()
    for train, valid in split.folds:
        fit = polyhedral_fit(
            split.y_train[train],
            split.x_train.iloc[train],
            k,
            gamma,
            alpha,
            grids.n_init,
            seed,
            flips,
            reseat=grids.reseat,
        )
        res, names, error = caught_call(fit)
        counts.update(names)
        if error:
            counts[f"failed ({error.split(':')[0]})"] += 1
            return np.nan, counts
        y_valid = split.y_train[valid]
        if grids.select == "logloss":
            p1 = np.asarray(res.predict(split.x_train.iloc[valid].to_numpy()))
            scores.append(float(np.mean(log_likelihood_rows(y_valid, p1))))
        else:
            inside = predict_inside(res, split.x_train.iloc[valid])
            scores.append(accuracy(y_valid, inside))
    return float(np.mean(scores)), counts


def select_polyhedral(
    split: Split,
    k: int,
    gammas: Sequence[float | None],
    grids: Grids,
    seed: int,
    flips: bool = False,
) -> tuple[list[tuple], Counter[str]]:
    """CV scores (``cv_score``) of every gamma and alpha, as rows ``(score,
    -flips, alpha, -gamma, gamma, flips)``: the largest row wins, so ties go to
    the model without flips, then to the larger alpha, then the smaller gamma.
    Returns the rows and the warnings."""
    table, counts = [], Counter()
    for gamma in gammas:
        for alpha in grids.alphas:
            score, caught = cv_score(split, k, gamma, alpha, grids, seed, flips)
            counts.update(caught)
            if np.isfinite(score):
                table.append((score, -int(flips), alpha, -(gamma or 0.0), gamma, flips))
    return table, counts


def choose_and_refit(
    split: Split,
    setting: Setting,
    gammas: Sequence[float | None],
    grids: Grids,
    extends: PolyhedralChoice | None = None,
) -> tuple[PolyhedralChoice, Counter[str]]:
    """CV selection at the true K, then the timed refit on the training set;
    also returns the warnings of the selection. With ``extends`` (PLUME's
    choice) the candidates are PLUME's, whose CV scores are reused, and the
    same grid with label flips."""
    start = time.perf_counter()
    table, counts = select_polyhedral(
        split, setting.k, gammas, grids, setting.seed, flips=extends is not None
    )
    cv_seconds = time.perf_counter() - start
    if extends is not None:
        table = [*extends.table, *table]
        cv_seconds += extends.cv_seconds
    if not table:
        raise RuntimeError("every candidate failed in cross-validation")
    score, _, alpha, _, gamma, flips = max(table)
    fit = polyhedral_fit(
        split.y_train,
        split.x_train,
        setting.k,
        gamma,
        alpha,
        grids.n_init,
        setting.seed,
        flips,
        reseat=grids.reseat,
    )
    seconds, res, names = timed_fit(fit)
    choice = PolyhedralChoice(
        gamma, alpha, score, cv_seconds, res, seconds, names, flips, tuple(table)
    )
    return choice, counts


def hyperplane_recovery(fitted: pd.DataFrame, truth: pd.DataFrame) -> dict[str, float]:
    """Match fitted to true hyperplanes (Hungarian algorithm on the cosine of the
    normals) and compare them once scaled to unit normals.

    Parameters
    ----------
    fitted, truth : DataFrame
        Hyperplanes as rows, columns ``Intercept, x1..xd``; the truth has unit
        normals. Both are oriented so that ``h'[1, x] >= 0`` is inside. With
        different numbers of rows, ``min(K_fitted, K_true)`` pairs are matched.

    Returns
    -------
    dict
        ``cos_mean`` and ``cos_min`` of the matched pairs' normals, and
        ``offset_mad``, the mean absolute difference of their offsets.
    """
    pairs = matched_hyperplanes(
        fitted[truth.columns].to_numpy(dtype=float), truth.to_numpy(dtype=float)
    )
    if pairs is None:
        return {"cos_mean": np.nan, "cos_min": np.nan, "offset_mad": np.nan}
    unit, true = pairs
    matched = np.sum(unit[:, 1:] * true[:, 1:], axis=1)
    return {
        "cos_mean": float(matched.mean()),
        "cos_min": float(matched.min()),
        "offset_mad": float(np.abs(unit[:, 0] - true[:, 0]).mean()),
    }


def matched_hyperplanes(
    fitted: np.ndarray, true: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The fitted hyperplanes scaled to unit normals and the true ones they are
    matched to (Hungarian algorithm on the cosine of the normals), row by row;
    None when a fitted normal is zero or not finite."""
    norms = np.linalg.norm(fitted[:, 1:], axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = fitted / norms
    cosine = unit[:, 1:] @ true[:, 1:].T
    if not np.isfinite(cosine).all():
        return None
    rows, cols = linear_sum_assignment(cosine, maximize=True)
    return unit[rows], true[cols]


def polyhedral_result(
    method: str, res: Any, split: Split, fit_seconds: float, names: list[str]
) -> MethodResult:
    """Accuracy, diagnostics and recovery of a plumestats fit."""
    return MethodResult(
        method=method,
        test_accuracy=accuracy(split.y_test, predict_inside(res, split.x_test)),
        polytope_accuracy=accuracy(
            split.y_test, np.asarray(res.decision_function(split.x_test)) >= 0
        ),
        fit_seconds=fit_seconds,
        k_fitted=res.model.k,
        iterations=res.mle_retvals["iterations"],
        converged=bool(res.mle_retvals["converged"]),
        warnings=Counter(names),
        **hyperplane_recovery(res.hyperplanes, split.truth),
    )


def run_polyhedral(
    method: str,
    split: Split,
    setting: Setting,
    gammas: Sequence[float | None],
    grids: Grids,
    extends: PolyhedralChoice | None = None,
) -> tuple[MethodResult, PolyhedralChoice | None]:
    """PLUME (``gammas`` numbers) or SPLA1 (``gammas == (None,)``) at the true
    K; with ``extends``, PLUME or PLUME with label flips (see
    :func:`choose_and_refit`)."""
    try:
        choice, counts = choose_and_refit(split, setting, gammas, grids, extends)
    except Exception as exc:
        return MethodResult(method, status="failed", message=str(exc)), None
    result = polyhedral_result(
        method, choice.res, split, choice.fit_seconds, choice.fit_warnings
    )
    result.total_seconds = choice.cv_seconds + choice.fit_seconds
    gamma = "" if choice.gamma is None else f"gamma={choice.gamma:g}, "
    flips = ""
    if extends is not None:
        flips = (
            f"flips (eps={choice.res.flip_rate:.3f}), "
            if choice.flips
            else "no flips, "
        )
    result.hyper = (
        f"{flips}{gamma}alpha={choice.alpha:g}, n_init={grids.n_init}"
        f"{', reseat=K' if grids.reseat else ''} "
        f"(CV {'log-lik' if grids.select == 'logloss' else 'acc'} "
        f"{choice.cv_score:.4f})"
    )
    result.selection_warnings = counts
    return result, choice


def run_plume_bic(
    split: Split, setting: Setting, choice: PolyhedralChoice, grids: Grids
) -> MethodResult:
    """PLUME with K' in 1..K+extra chosen by BIC on the whole training set, at the
    gamma and alpha chosen for PLUME at the true K (whose refit is reused)."""
    method = "PLUME (K by BIC)"
    fits = {setting.k: (choice.res, choice.fit_seconds, choice.fit_warnings)}
    counts: Counter[str] = Counter()
    start = time.perf_counter()
    for k in range(1, setting.k + grids.bic_extra + 1):
        if k in fits:
            continue
        fit = polyhedral_fit(
            split.y_train,
            split.x_train,
            k,
            choice.gamma,
            choice.alpha,
            grids.n_init,
            setting.seed,
            reseat=grids.reseat,
        )
        try:
            seconds, res, names = timed_fit(fit)
        except Exception as exc:  # that K' is left out, and the failure counted
            counts[f"K={k} failed ({type(exc).__name__})"] += 1
            continue
        fits[k] = (res, seconds, names)
        counts.update(names)
    bic_seconds = time.perf_counter() - start
    bics = {k: float(fit[0].bic) for k, fit in fits.items()}
    best = min(bics, key=bics.get)
    res, seconds, names = fits[best]
    result = polyhedral_result(method, res, split, seconds, names)
    result.total_seconds = choice.cv_seconds + choice.fit_seconds + bic_seconds
    result.hyper = (
        f"K={best} of 1..{setting.k + grids.bic_extra}, gamma={choice.gamma:g}, "
        f"alpha={choice.alpha:g} (as PLUME)"
    )
    result.selection_warnings = counts
    return result


# ---------------------------------------------------------------------- rivals
def run_logit(split: Split) -> MethodResult:
    """statsmodels' Logit; on failure an L1 fit with a small weight (not on the
    intercept), and if that fails too, a recorded failure."""
    result = MethodResult("Logit")
    x, y = split.x_train.to_numpy(), split.y_train

    def plain() -> Any:
        return sm.Logit(y, x).fit(disp=0)

    def fallback() -> Any:
        weights = np.full(x.shape[1], LOGIT_FALLBACK_L1)
        weights[0] = 0.0
        return sm.Logit(y, x).fit_regularized(alpha=weights, disp=0)

    attempts = (
        (plain, "none (maximum likelihood)"),
        (fallback, f"fallback: L1 weight {LOGIT_FALLBACK_L1:g}"),
    )
    start = time.perf_counter()
    res = None
    for attempt, hyper in attempts:
        try:
            seconds, res, names = timed_fit(attempt)
        except Exception as exc:  # e.g. PerfectSeparationError: recorded
            result.message += f"{hyper}: {type(exc).__name__}: {exc}; "
            continue
        result.warnings.update(names)
        if np.isfinite(res.params).all():
            break
        result.message += f"{hyper}: non-finite estimates; "
        res = None
    result.total_seconds = time.perf_counter() - start
    if res is None:
        result.status = "failed"
        return result
    result.fit_seconds = seconds
    result.hyper = hyper
    result.test_accuracy = accuracy(split.y_test, res.predict(split.x_test) >= 0.5)
    result.iterations = res.mle_retvals.get("iterations", np.nan)
    result.converged = bool(res.mle_retvals.get("converged", False))
    return result


def run_search(
    method: str, estimator: Any, grid: dict[str, list], split: Split
) -> MethodResult:
    """A scikit-learn grid search on the shared folds, refitted on the training
    set (ties: the first candidate in grid order, scikit-learn's rule)."""
    search = GridSearchCV(estimator, grid, cv=split.folds, scoring="accuracy")
    x_train = split.features("train")
    start = time.perf_counter()
    fitted, names, error = caught_call(lambda: search.fit(x_train, split.y_train))
    total = time.perf_counter() - start
    if error:
        return MethodResult(method, status="failed", message=error)
    chosen = ", ".join(
        f"{name.split('__')[-1]}={value}"
        for name, value in sorted(fitted.best_params_.items())
    )
    best = fitted.best_estimator_
    last = best[-1] if isinstance(best, Pipeline) else best
    iterations = np.sum(getattr(last, "n_iter_", np.nan))
    return MethodResult(
        method=method,
        test_accuracy=accuracy(
            split.y_test, fitted.predict(split.features("test")) == 1
        ),
        fit_seconds=float(fitted.refit_time_),
        total_seconds=total,
        hyper=f"{chosen} (CV acc {fitted.best_score_:.4f})",
        iterations=float(iterations),
        selection_warnings=Counter(names),
    )


def run_svm(split: Split, grids: Grids) -> MethodResult:
    """RBF SVM on standardised features, C x gamma by CV accuracy."""
    pipeline = Pipeline([("scale", StandardScaler()), ("svc", SVC(kernel="rbf"))])
    grid = {"svc__C": list(grids.svm_c), "svc__gamma": list(grids.svm_gamma)}
    return run_search("SVM (RBF)", pipeline, grid, split)


def run_cart(split: Split, grids: Grids, seed: int) -> MethodResult:
    """CART with max_depth by CV accuracy."""
    tree = DecisionTreeClassifier(random_state=seed)
    return run_search("CART", tree, {"max_depth": list(grids.depths)}, split)


METHODS = {
    "plume": "PLUME",
    "spla1": "SPLA1",
    "logit": "Logit",
    "svm": "SVM (RBF)",
    "cart": "CART",
    "plume-bic": "PLUME (K by BIC)",
    "plume-flip": "PLUME or PLUME + flips",
}
TRUTH = "true polytope"
