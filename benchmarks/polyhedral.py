"""Polyhedral benchmark: PLUME and rivals on data that really is a polytope.

What it measures
    Test accuracy of PLUME (``PolyhedralMixtureLogit``, soft gate), PLUME or
    PLUME with label flips (``LabelFlipPolyhedralLogit``, whichever 3-fold CV
    prefers over the same gamma and alpha grid), SPLA1
    (``HardPolyhedralLogit``, hard gate), statsmodels' ``Logit``, an RBF ``SVC``
    and a CART ``DecisionTreeClassifier`` on points labelled by a random polytope
    (``plumestats.datasets.simulate_polyhedron``), over a grid of dimensions d,
    numbers of true faces K and label-noise rates. Each accuracy is compared with
    that of the true polytope on the same (noisy) test labels. For PLUME and SPLA1
    it also measures how well the fitted hyperplanes recover the true ones.

How
    One call of ``simulate_polyhedron(n_train + n_test, d, K, noise, seed)`` per
    setting and seed; the first ``n_train`` rows train, the rest test, so both
    share the polytope. Every hyper-parameter is chosen on the training set only,
    by 3-fold stratified cross-validated accuracy (the same folds for every
    method), and the chosen model is refitted on the whole training set; the
    Markdown report states the grids and rules. Warnings are caught and counted,
    never printed. Timings are wall-clock (``time.perf_counter``) of the final
    refit and of the whole procedure (selection and refit), with the BLAS thread
    pools limited (default one thread) so that a shared machine's load matters
    less.

Usage
    python benchmarks/polyhedral.py                  # full grid, 1 seed
    python benchmarks/polyhedral.py --quick          # smoke test, a few seconds
    python benchmarks/polyhedral.py --ds 2 5 --ks 2 --noises 0 --seeds 3
    python benchmarks/polyhedral.py --alphas 1e-4 1e-3 1e-2 \
        --name polyhedral_large_alpha       # the full grid, larger penalties only

Writes ``polyhedral.md`` (report), ``polyhedral.csv`` (one row per setting,
method and seed) and ``polyhedral.png`` (gap to the true polytope) into
``--output`` (default ``benchmarks/results``); ``--quick`` writes
``polyhedral_quick.*`` instead, so that it never overwrites a full run
(``--name`` sets another stem, e.g. for a run with other grids).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
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

from plumestats import (
    HardPolyhedralLogit,
    LabelFlipPolyhedralLogit,
    PolyhedralMixtureLogit,
)
from plumestats.datasets import simulate_polyhedron

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table1_fits import PROBABILITY_CLIP, log_likelihood_rows
from fit_speed import (
    blas_info,
    blas_limit,
    command_line,
    load_average,
    machine_info,
    package_info,
    progress,
    timed_fit,
)

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
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


# --------------------------------------------------------------------- a setting
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


def run_setting(
    setting: Setting, args: argparse.Namespace
) -> tuple[float, list[MethodResult]]:
    """Every requested method on one setting; returns the true polytope's test
    accuracy and the methods' results, in ``METHODS`` order."""
    split = make_split(setting, args.n_train, args.n_test)
    grids: Grids = args.grids
    results: dict[str, MethodResult] = {}
    if {"plume", "plume-bic", "plume-flip"} & set(args.methods):
        results["plume"], choice = run_polyhedral(
            "PLUME", split, setting, grids.gammas, grids
        )
        if "plume-flip" in args.methods:
            results["plume-flip"] = (
                run_polyhedral(
                    METHODS["plume-flip"],
                    split,
                    setting,
                    grids.gammas,
                    grids,
                    extends=choice,
                )[0]
                if choice is not None
                else MethodResult(METHODS["plume-flip"], status="failed")
            )
        if "plume-bic" in args.methods:
            results["plume-bic"] = (
                run_plume_bic(split, setting, choice, grids)
                if choice is not None
                else MethodResult(METHODS["plume-bic"], status="failed")
            )
    if "spla1" in args.methods:
        results["spla1"], _ = run_polyhedral("SPLA1", split, setting, (None,), grids)
    if "logit" in args.methods:
        results["logit"] = run_logit(split)
    if "svm" in args.methods:
        results["svm"] = run_svm(split, grids)
    if "cart" in args.methods:
        results["cart"] = run_cart(split, grids, setting.seed)
    ordered = [results[key] for key in METHODS if key in args.methods]
    return split.true_accuracy, ordered


def settings_of(args: argparse.Namespace) -> list[Setting]:
    return [
        Setting(d, k, noise, seed)
        for noise in args.noises
        for d in args.ds
        for k in args.ks
        for seed in range(args.seeds)
    ]


def to_rows(
    setting: Setting,
    true_acc: float,
    results: list[MethodResult],
    sizes: tuple[int, int],
    other_warnings: Counter[str],
) -> list[dict[str, Any]]:
    """Tidy CSV rows: the true polytope first (with the warnings raised outside
    the fits), then one row per method."""
    base = {
        "d": setting.d,
        "k": setting.k,
        "noise": setting.noise,
        "seed": setting.seed,
        "n_train": sizes[0],
        "n_test": sizes[1],
        "true_accuracy": true_acc,
    }
    truth = {"method": TRUTH, "status": "ok", "test_accuracy": true_acc}
    rows = [{**base, **truth, "warnings": format_counts(other_warnings)}]
    for r in results:
        rows.append(
            {
                **base,
                "method": r.method,
                "status": r.status,
                "test_accuracy": r.test_accuracy,
                "gap_points": 100 * (r.test_accuracy - true_acc),
                "polytope_accuracy": r.polytope_accuracy,
                "fit_seconds": r.fit_seconds,
                "total_seconds": r.total_seconds,
                "hyper_parameters": r.hyper,
                "k_fitted": r.k_fitted,
                "iterations": r.iterations,
                "converged": r.converged,
                "cos_mean": r.cos_mean,
                "cos_min": r.cos_min,
                "offset_mad": r.offset_mad,
                "warnings": format_counts(r.warnings),
                "selection_warnings": format_counts(r.selection_warnings),
                "message": r.message,
            }
        )
    return rows


def format_counts(counts: Counter[str]) -> str:
    return "; ".join(f"{name} x{n}" for name, n in sorted(counts.items()))


def progress_line(
    setting: Setting, true_acc: float, results: list[MethodResult], seconds: float
) -> str:
    parts = [f"true {true_acc:.4f}"]
    for r in results:
        if r.status != "ok":
            parts.append(f"{r.method} FAILED")
        else:
            gap = 100 * (r.test_accuracy - true_acc)
            parts.append(f"{r.method} {r.test_accuracy:.4f} ({gap:+.2f})")
    return (
        f"[{setting.label}, seed {setting.seed}] "
        + " | ".join(parts)
        + (f" | {seconds:.1f} s")
    )


def run_all(args: argparse.Namespace) -> pd.DataFrame:
    """Every setting and seed, one progress line each; the tidy table."""
    rows: list[dict[str, Any]] = []
    for setting in settings_of(args):
        start = time.perf_counter()
        # the fits catch their own; this counts any other (construction, predict)
        with warnings.catch_warnings(record=True) as stray:
            warnings.simplefilter("always")
            true_acc, results = run_setting(setting, args)
        seconds = time.perf_counter() - start
        progress(progress_line(setting, true_acc, results, seconds))
        other = Counter(w.category.__name__ for w in stray)
        rows += to_rows(setting, true_acc, results, (args.n_train, args.n_test), other)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------- reporting
def mean_over_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting and method: means of the numbers over the seeds
    (failed runs excluded), hyper-parameters and warnings joined."""
    keys = ["d", "k", "noise", "method"]
    numeric = [
        "test_accuracy",
        "true_accuracy",
        "gap_points",
        "polytope_accuracy",
        "fit_seconds",
        "total_seconds",
        "k_fitted",
        "iterations",
        "cos_mean",
        "cos_min",
        "offset_mad",
    ]
    ok = table[table["status"] == "ok"]
    means = ok.groupby(keys, sort=False)[numeric].mean()

    def joined(column: str) -> pd.Series:
        return table.groupby(keys, sort=False)[column].agg(
            lambda s: " / ".join(dict.fromkeys(str(v) for v in s if v and v == v))
        )

    extra = pd.DataFrame(
        {
            "hyper_parameters": joined("hyper_parameters"),
            "warnings": joined("warnings"),
            "selection_warnings": joined("selection_warnings"),
            "n_failed": table.groupby(keys, sort=False)["status"].agg(
                lambda s: int((s != "ok").sum())
            ),
            "n_not_converged": table.groupby(keys, sort=False)["converged"].agg(
                lambda s: sum(v is False for v in s)  # None: not applicable
            ),
        }
    )
    return extra.join(means).reset_index()


def fmt(value: Any, spec: str) -> str:
    return "-" if value is None or pd.isna(value) else format(value, spec)


SETTING_HEADER = (
    "method",
    "test acc",
    "gap (points)",
    "own polytope acc",
    "final fit s",
    "total s",
    "chosen hyper-parameters",
    "iterations",
    "cos mean",
    "cos min",
    "mean abs. offset diff",
    "warnings (final fit; selection)",
)


def setting_table(rows: pd.DataFrame) -> list[str]:
    lines = [
        "| " + " | ".join(SETTING_HEADER) + " |",
        "|" + "---|" * len(SETTING_HEADER),
    ]
    for r in rows.itertuples(index=False):
        failed = f" ({r.n_failed} failed)" if r.n_failed else ""
        notconv = f"not converged x{r.n_not_converged}" if r.n_not_converged else ""
        notes = "; ".join(x for x in (r.warnings, r.selection_warnings, notconv) if x)
        cells = [
            f"{r.method}{failed}",
            fmt(r.test_accuracy, ".4f"),
            "-" if r.method == TRUTH else fmt(r.gap_points, "+.2f"),
            fmt(r.polytope_accuracy, ".4f"),
            fmt(r.fit_seconds, ".3f"),
            fmt(r.total_seconds, ".2f"),
            r.hyper_parameters or "-",
            fmt(r.iterations, ".0f"),
            fmt(r.cos_mean, ".4f"),
            fmt(r.cos_min, ".4f"),
            fmt(r.offset_mad, ".3f"),
            notes or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def overview_table(summary: pd.DataFrame, methods: list[str]) -> list[str]:
    """Settings as rows, test accuracy (gap in points) per method as columns."""
    header = ["d", "K", "noise", TRUTH, *methods]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (d, k, noise), rows in summary.groupby(["d", "k", "noise"], sort=False):
        by_method = rows.set_index("method")
        cells = [str(d), str(k), f"{noise:.2f}"]
        cells.append(fmt(by_method.loc[TRUTH, "test_accuracy"], ".4f"))
        for method in methods:
            row = by_method.loc[method]
            if pd.isna(row["test_accuracy"]):
                cells.append("failed")
            else:
                cells.append(f"{row['test_accuracy']:.4f} ({row['gap_points']:+.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def pivot(summary: pd.DataFrame, column: str) -> pd.DataFrame:
    """Settings x methods; a setting where a method failed holds NaN."""
    settings = pd.MultiIndex.from_frame(summary[["d", "k", "noise"]].drop_duplicates())
    table = summary.pivot_table(
        index=["d", "k", "noise"], columns="method", values=column, sort=False
    )
    return table.reindex(settings)


def setting_label(index: tuple) -> str:
    """``d/K/noise`` of a setting."""
    d, k, noise = index
    return f"{d}/{k}/{noise:.2f}"


def listing(values: pd.Series, what: str) -> str:
    """``; what (d/K/noise: value): 2/4/0.00: -1.33, ...`` or nothing."""
    if values.empty:
        return ""
    items = ", ".join(
        f"{setting_label(i)}: " + ("failed" if pd.isna(v) else f"{v:+.2f}")
        for i, v in values.items()
    )
    return f"; {what} (d/K/noise: points): {items}"


def summary_lines(summary: pd.DataFrame, methods: list[str]) -> list[str]:
    """The two targets, the same counts for every method, mean gaps, and every
    failure or warning."""
    lines = []
    gaps = pivot(summary, "gap_points")
    acc = pivot(summary, "test_accuracy")
    easy = gaps[
        (gaps.index.get_level_values("noise") == 0)
        & (gaps.index.get_level_values("d") <= 10)
    ]
    within = f"within {WITHIN_POINTS:g} point of the true polytope"
    for plume in ("PLUME", METHODS["plume-flip"]):
        if plume in gaps:
            misses = easy[plume][~(easy[plume] >= -WITHIN_POINTS)]
            lines.append(
                f"- {plume} {within} on {len(easy) - len(misses)} of {len(easy)} "
                "noise-free settings with d <= 10" + listing(misses, "misses, gap")
            )
        if {plume, "SVM (RBF)"} <= set(acc.columns):
            diff = 100 * (acc[plume] - acc["SVM (RBF)"])
            below = diff[~(diff >= 0)]
            lines.append(
                f"- {plume} >= SVM (RBF) in test accuracy on "
                f"{len(diff) - len(below)} of {len(diff)} settings"
                + listing(below, f"below, {plume} - SVM")
            )
    if "PLUME" in gaps:
        own = pivot(summary, "polytope_accuracy")["PLUME"].reindex(easy.index)
        own_gap = 100 * (own - acc[TRUTH].reindex(easy.index))
        lines.append(
            f"- PLUME classifying by its own polytope (decision_function >= 0) "
            f"instead of P(y=1|x) >= 0.5: {within} on "
            f"{int((own_gap >= -WITHIN_POINTS).sum())} of {len(easy)} of those "
            "settings"
        )
    counts = ", ".join(
        f"{m} {int((easy[m] >= -WITHIN_POINTS).sum())}/{len(easy)}"
        for m in methods
        if m in easy
    )
    lines.append(f"- {within} on noise-free settings with d <= 10, by method: {counts}")
    means = ", ".join(f"{m} {gaps[m].mean():+.2f}" for m in methods if m in gaps)
    lines.append(f"- mean gap to the true polytope over all settings (points): {means}")
    lines += failure_lines(summary)
    return lines


def failure_lines(summary: pd.DataFrame) -> list[str]:
    """Failed methods, unconverged final fits and warning counts."""
    rows = summary[summary["method"] != TRUTH]
    outside = summary[(summary["method"] == TRUTH) & (summary["warnings"] != "")]
    failed = rows[rows["n_failed"] > 0]
    notconv = rows[rows["n_not_converged"] > 0]
    warned = rows[(rows["warnings"] != "") | (rows["selection_warnings"] != "")]
    where = "{0.method} at d={0.d}, K={0.k}, noise={0.noise:.2f}".format

    def notes(r: Any) -> str:
        return "; ".join(x for x in (r.warnings, r.selection_warnings) if x)

    return [
        "- failures: " + (", ".join(where(r) for r in failed.itertuples()) or "none"),
        "- final fits not converged: "
        + (", ".join(where(r) for r in notconv.itertuples()) or "none"),
        "- settings x methods with warnings (final fit or selection): "
        + ("; ".join(f"{where(r)}: {notes(r)}" for r in warned.itertuples()) or "none"),
        "- warnings outside the fits (model construction, prediction): "
        + (
            "; ".join(f"{where(r)}: {r.warnings}" for r in outside.itertuples())
            or "none"
        ),
    ]


def protocol_lines(args: argparse.Namespace) -> list[str]:
    g: Grids = args.grids
    return [
        f"- data: per setting and seed s in 0..{args.seeds - 1}, one call "
        f"`simulate_polyhedron({args.n_train} + {args.n_test}, d, K, noise, "
        "random_state=s)`; first rows train, the rest test (same polytope); x ~ "
        "N(0, I_d), about half the population inside, a share `noise` of the "
        "labels flipped (train and test alike)",
        "- true polytope: `min_k h_k'[1, x] >= 0` with the simulated hyperplanes, "
        "scored on the same noisy test labels; gap = method's test accuracy minus "
        "the true polytope's, in percentage points",
        f"- selection, training set only: {CV_FOLDS}-fold stratified CV "
        "(shuffled, seed s; the same folds for every method), accuracy ("
        + (
            "PLUME and SPLA1: mean held-out log-likelihood, P clipped to "
            f"[{PROBABILITY_CLIP:g}, 1 - {PROBABILITY_CLIP:g}]"
            if g.select == "logloss"
            else "every method"
        )
        + "); the chosen model is refitted on the whole training set",
        f"- PLUME: true K, gamma in {list(g.gammas)} x alpha in {list(g.alphas)} "
        "(L2 on the standardised slopes, per observation); ties: larger alpha, "
        f"then smaller gamma; `fit(alpha=a, n_init={g.n_init}, "
        f"random_state=s{', reseat=K' if g.reseat else ''})` (k-means starts, "
        "best penalised objective"
        + (
            "; then re-seating moves, each kept only if it raises the objective"
            if g.reseat
            else ""
        )
        + ") in CV and refit; predict class 1 when P(y=1|x) >= 0.5",
        f"- SPLA1 (`HardPolyhedralLogit`): true K, alpha in {list(g.alphas)}, as PLUME",
        f"- {METHODS['plume-flip']}: the same CV over PLUME's gamma x alpha grid "
        "and the same grid for `LabelFlipPolyhedralLogit` (PLUME with a share of "
        "randomly flipped labels, estimated: P(y|x) = eps + (1 - 2 eps) PLUME); "
        "PLUME's CV scores are reused, the best of the two grids is refitted "
        "(`fit(alpha=a, n_init=..., random_state=s)`: each PLUME run starts one "
        "label-flip EM run, the best label-flip fit is kept); ties go to PLUME; "
        "recovery as PLUME",
        f"- PLUME (K by BIC): K' in 1..K+{g.bic_extra} by the smallest BIC "
        "(-2 llf + log(N) K'(d+1), llf unpenalised at the penalised estimates) "
        "of fits on the whole training set, at PLUME's chosen gamma and alpha "
        "(those were chosen at the true K); its recovery matches min(K', K) pairs",
        "- Logit: `sm.Logit(y, [1, x]).fit(disp=0)`; if it raises or gives "
        f"non-finite estimates, `fit_regularized` (L1, weight {LOGIT_FALLBACK_L1:g} "
        "per slope, not the intercept); no hyper-parameters",
        f"- SVM (RBF): StandardScaler + SVC, GridSearchCV over C in "
        f"{list(g.svm_c)} x gamma in {list(g.svm_gamma)}; ties: first in grid "
        "order (scikit-learn)",
        f"- CART: DecisionTreeClassifier(random_state=s), max_depth in "
        f"{list(g.depths)}; ties: first in grid order",
        "- final fit s: wall-clock of the refit on the training set; total s: "
        "selection (every CV fit) plus the refit (for K by BIC: PLUME's and every "
        "K' fit); iterations: EM+Newton iterations (plumestats), Newton "
        "iterations (Logit), libsvm iterations (SVM)",
        "- recovery (PLUME, SPLA1): fitted hyperplanes (`results.hyperplanes`, "
        "columns Intercept, x1..xd) matched to the true ones by the Hungarian "
        "algorithm on the cosine of the normals (slopes); cos mean/min over the "
        "matched pairs; abs. offset diff: mean absolute difference of the intercepts "
        "once each hyperplane is scaled to a unit normal",
        "- test acc classifies by P(y=1|x) >= 0.5 (`results.predict`); own "
        "polytope acc (PLUME, SPLA1) by the fitted polytope, "
        "`results.decision_function(x) >= 0`: the two differ where the soft gate "
        "blurs the vertices",
        "- warnings are caught and counted (final fit; selection), never printed",
    ]


def versions() -> str:
    import matplotlib
    import sklearn
    import threadpoolctl

    return (
        f"scikit-learn {sklearn.__version__}, matplotlib {matplotlib.__version__}, "
        f"threadpoolctl {threadpoolctl.__version__}"
    )


def report(
    table: pd.DataFrame,
    args: argparse.Namespace,
    context: dict[str, str],
) -> str:
    """The Markdown document: context, protocol, overview, per-setting tables and
    the summary."""
    summary = mean_over_seeds(table)
    methods = [METHODS[key] for key in METHODS if key in args.methods]
    seeds = f"mean over {args.seeds} seeds" if args.seeds > 1 else "one seed"
    lines = [
        "# Polyhedral benchmark: PLUME and rivals on simulated polytopes",
        "",
        f"- date: {context['date']} (start of the run)",
        f"- command: `{command_line()}` (cwd `{Path.cwd()}`)",
        f"- {context['package']} (at start)",
        # machine_info's BLAS line shows the pools outside the limit: use ours
        *(f"- {line}" for line in machine_info() if not line.startswith("BLAS")),
        f"- {versions()}",
        f"- BLAS: {context['blas']} (limit `--blas-threads {args.blas_threads}`)",
        f"- load average (1/5/15 min) at start {context['load_start']}, at end "
        f"{context['load_end']}; wall time of the whole run {context['wall']}",
        f"- grid: d in {list(args.ds)}, K in {list(args.ks)}, noise in "
        f"{list(args.noises)}, N = {args.n_train} train / {args.n_test} test, "
        f"{seeds}",
        "",
        "## Protocol",
        "",
        *protocol_lines(args),
        "",
        "## Summary",
        "",
        *summary_lines(summary, methods),
        "",
        f"## Test accuracy (gap to the true polytope, points; {seeds})",
        "",
        *overview_table(summary, methods),
        "",
        "## Per setting",
        "",
    ]
    for (d, k, noise), rows in summary.groupby(["d", "k", "noise"], sort=False):
        lines += [f"### d={d}, K={k}, noise={noise:.2f}", "", *setting_table(rows), ""]
    return "\n".join(lines)


def plot(table: pd.DataFrame, methods: list[str], path: Path) -> None:
    """Gap to the true polytope per setting, one panel per noise level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = mean_over_seeds(table)
    noises = sorted(summary["noise"].unique())
    fig, axes = plt.subplots(
        len(noises), 1, figsize=(11, 3.2 * len(noises)), squeeze=False, sharey=False
    )
    for ax, noise in zip(axes[:, 0], noises, strict=True):
        part = pivot(summary[summary["noise"] == noise], "gap_points")
        labels = [f"d={d}\nK={k}" for d, k, _ in part.index]
        positions = np.arange(len(part))
        shown = [m for m in methods if m in part]
        for i, method in enumerate(shown):
            ax.plot(
                positions + (i - (len(shown) - 1) / 2) * 0.08,
                part[method].to_numpy(),
                marker="os^vDx"[i % 6],
                linestyle="none",
                label=method,
            )
        ax.axhline(0, color="black", linewidth=0.8)
        ax.axhline(-WITHIN_POINTS, color="grey", linestyle=":", linewidth=0.8)
        # linear within 2 points of the truth, logarithmic beyond (Logit is far off)
        ax.set_yscale("symlog", linthresh=2.0)
        low = min(-2.0, float(np.nanmin(part[shown].to_numpy(), initial=0.0)))
        high = max(1.0, float(np.nanmax(part[shown].to_numpy(), initial=0.0)))
        ax.set_ylim(1.3 * low, 1.5 * high)
        ticks = [t for t in (2, 1, 0, -1, -2, -5, -10, -20, -50) if low * 1.3 <= t]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_xticks(positions, labels, fontsize=7)
        ax.set_ylabel("gap (points, symlog)")
        ax.set_title(
            f"test accuracy minus the true polytope's, noise={noise:.2f} "
            f"(dotted: -{WITHIN_POINTS:g} point)"
        )
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=len(methods))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..n-1")
    parser.add_argument("--ds", type=int, nargs="+", help="dimensions d")
    parser.add_argument("--ks", type=int, nargs="+", help="true numbers of faces K")
    parser.add_argument("--noises", type=float, nargs="+", help="label-noise rates")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="methods to run (default: all)",
    )
    parser.add_argument("--n-train", type=int, help="training points (2000)")
    parser.add_argument("--n-test", type=int, help="test points (10000)")
    parser.add_argument(
        "--alphas", type=float, nargs="+", help="PLUME/SPLA1 alpha grid"
    )
    parser.add_argument("--gammas", type=float, nargs="+", help="PLUME gamma grid")
    parser.add_argument("--n-init", type=int, help="EM restarts per fit (3)")
    parser.add_argument(
        "--reseat",
        action="store_true",
        help="PLUME and SPLA1 fits add up to K re-seating moves (fit(reseat=K))",
    )
    parser.add_argument(
        "--select",
        choices=("accuracy", "logloss"),
        help="PLUME's and SPLA1's CV criterion (default accuracy)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: d 2 5, K 2, noise 0 0.1, 500/2000 points, small grids",
    )
    parser.add_argument(
        "--output", type=Path, default=RESULTS_DIR, help="directory for the files"
    )
    parser.add_argument(
        "--name",
        help="file name stem (default polyhedral, or polyhedral_quick)",
    )
    parser.add_argument(
        "--blas-threads", type=int, default=1, help="BLAS threads (threadpoolctl)"
    )
    args = parser.parse_args(argv)
    settings = QUICK_SETTINGS if args.quick else FULL_SETTINGS
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    for name, value in {**settings, **sizes}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    grids = QUICK_GRIDS if args.quick else Grids()
    overrides = {
        "alphas": tuple(args.alphas) if args.alphas else None,
        "gammas": tuple(args.gammas) if args.gammas else None,
        "n_init": args.n_init,
        "select": args.select,
        "reseat": args.reseat or None,
    }
    args.grids = Grids(
        **{**grids.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
    )
    if args.seeds < 1 or args.grids.n_init < 1 or args.blas_threads < 1:
        parser.error("--seeds, --n-init and --blas-threads must be at least 1")
    if min(args.n_train, args.n_test) < 2 * CV_FOLDS:
        parser.error("--n-train and --n-test are too small")
    if args.name is None:
        args.name = "polyhedral_quick" if args.quick else "polyhedral"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    context = {
        "date": datetime.now(timezone.utc).astimezone().isoformat("T", "seconds"),
        "load_start": load_average(),
        "package": package_info(),
    }
    progress(f"plumestats: {context['package']}; load {context['load_start']}")
    start = time.perf_counter()
    with blas_limit(args.blas_threads):
        context["blas"] = blas_info() or "threadpoolctl found no BLAS pool"
        table = run_all(args)
    wall = time.perf_counter() - start
    context.update(load_end=load_average(), wall=f"{wall:.0f} s ({wall / 60:.1f} min)")
    args.output.mkdir(parents=True, exist_ok=True)
    paths = {ext: args.output / f"{args.name}.{ext}" for ext in ("md", "csv", "png")}
    table.to_csv(paths["csv"], index=False)
    paths["md"].write_text(report(table, args, context) + "\n", encoding="utf-8")
    methods = [METHODS[key] for key in METHODS if key in args.methods]
    plot(table, methods, paths["png"])
    progress(f"done in {wall:.0f} s; written {', '.join(map(str, paths.values()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
