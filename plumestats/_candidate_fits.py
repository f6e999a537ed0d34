"""The fits of :func:`plumestats.selection.select_k`: every candidate (K,
gamma) on all the data and on each cross-validation fold, as independent
tasks run in this process or in joblib's workers (:mod:`plumestats._parallel`).

The folds are stratified by class in plain NumPy (no scikit-learn needed).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

from ._diagnostics import caller_stacklevel
from ._fitting import as_rng
from ._parallel import progress_bar, run_tasks
from ._penalty import with_terms
from ._prediction import outcome_log_probability
from ._validation import seed_entropy
from .hard import HardPolyhedralLogit
from .label_flip import LabelFlipPolyhedralLogit
from .model import PolyhedralMixtureLogit

__all__ = [
    "Context",
    "candidate_label",
    "cv_scores",
    "fit_candidates",
    "formula_refit",
    "one_seed",
    "stratified_folds",
    "warn_separated_folds",
]


@dataclass(frozen=True)
class Context:
    """What every fit of :func:`~plumestats.selection.select_k` shares
    (sent to a worker with each task). The fits on folds read the design as
    arrays, the fits on all the data the formula and the frame."""

    formula: str
    data: pd.DataFrame | None
    inside: Any
    label_flips: bool
    fit_options: dict
    random_state: Any
    folds: np.ndarray | None
    y01: np.ndarray | None = None
    exog: np.ndarray | None = None
    code: int = 1
    # the caller's names the formula reads (captured_namespace)
    eval_env: Any = None
    # the frame, kept in this process for the refit of the chosen candidate
    data_for_refit: pd.DataFrame | None = None
    # frequency weights: one per row of the frame (the formula fits), and
    # one per row of the arrays (after the formula's missing rows are dropped)
    freq_weights: Any = None
    row_weights: np.ndarray | None = None
    # the formula's terms, which a fit on the arrays is measured by
    terms: tuple = ()


def one_seed(random_state):
    """``random_state`` as a value every fit can start from afresh: a seed
    ``fit`` takes that is no integer (a Generator, a bit generator, a
    SeedSequence) gives one seed, so that no fit depends on the fits before
    it (nor on which worker ran it). ``None`` is the fits' fixed seed (the
    bootstrap of an LR test, which would draw fresh entropy from None, must be
    as reproducible as they are); what ``fit`` refuses (a RandomState, text)
    is refused here, by name."""
    if random_state is None or (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, (bool, np.bool_))
    ):
        return seed_entropy(random_state)
    return int(as_rng(random_state).integers(2**63))


def fit_candidates(context: Context, candidates, n_workers: int, enabled: bool):
    """Per candidate: its fit on all the data with the warnings it raised,
    and (with folds) each row's held-out log-probability of its outcome."""
    n_folds = 0 if context.folds is None else int(context.folds.max()) + 1
    # each task carries only what its fit reads: the frame or the arrays
    # (in workers the fits on all the data read the arrays too; the frame
    # kept for the refit stays here)
    on_all = replace(
        context,
        data_for_refit=None,
        **({} if context.data is None else {"y01": None, "exog": None}),
    )
    on_folds = replace(context, data=None, data_for_refit=None)
    tasks = [
        (on_all if fold is None else on_folds, k, gamma, fold)
        for k, gamma in candidates
        for fold in (None, *range(n_folds))
    ]
    bar = progress_bar(len(tasks), "select_k", enabled, unit="fit")
    try:
        done = run_tasks(_fit_task, tasks, n_workers, bar)
    finally:
        bar.close()
    out = []
    for position in range(0, len(tasks), n_folds + 1):
        full, *by_fold = done[position : position + n_folds + 1]
        logprob, n_separated = None, 0
        if n_folds:
            logprob = np.empty(context.folds.size)
            for fold, (values, separated) in enumerate(by_fold):
                logprob[context.folds == fold] = values
                n_separated += separated
        out.append((full, logprob, n_separated))
    return out


def _fit_task(task: tuple):
    """One fit: ``(context, k, gamma, None)`` on all the data,
    ``(context, k, gamma, fold)`` without that fold."""
    context, k, gamma, fold = task
    cls = _model_class(gamma, context.label_flips)
    settings = {"k": k, **_gamma_kw(gamma)}
    options = {**context.fit_options, "random_state": context.random_state}
    if fold is None:
        return _fit_on_all(context, cls, settings, options)
    return _fit_without_fold(context, cls, settings, fold, options)


def _fit_on_all(context: Context, cls, settings: dict, options: dict):
    """The candidate's results on all the data, and the warnings raised: from
    the formula in this process, from the design's arrays in a worker."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if context.data is None:
            model = cls(
                context.y01,
                context.exog,
                inside=context.code,
                freq_weights=context.row_weights,
                **settings,
            )
            with_terms(model, context.terms)
        else:
            model = cls.from_formula(
                context.formula,
                context.data,
                inside=context.inside,
                eval_env=context.eval_env,
                freq_weights=context.freq_weights,
                **settings,
            )
        results = model.fit(**options)
    # plain records: they travel back from a worker process
    return results, [
        warnings.WarningMessage(w.message, w.category, w.filename, w.lineno)
        for w in caught
    ]


def formula_refit(context: Context, results, k: int, gamma: float):
    """The chosen candidate as a formula fit (predicting from DataFrames),
    refitted in this process from the estimate a worker found on the arrays."""
    cls = _model_class(gamma, context.label_flips)
    model = cls.from_formula(
        context.formula,
        context.data_for_refit,
        inside=context.inside,
        eval_env=context.eval_env,
        freq_weights=context.freq_weights,
        k=k,
        **_gamma_kw(gamma),
    )
    options = {**context.fit_options, "reseat": 0, "n_init": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the worker's fit has said it all
        refit = model.fit(start_params=np.asarray(results.params), **options)
    # the estimate is the worker's, and so is how it was found: its starts
    # and moves, which a test's refits to draws repeat (_lr_test._spec_of)
    for key in _SEARCH_SETTINGS:
        refit.mle_settings[key] = results.mle_settings[key]
    for key in _SEARCH_RETVALS:
        if key in results.mle_retvals:
            refit.mle_retvals[key] = results.mle_retvals[key]
    return refit


# what a fit from several starts records of them, in its settings and retvals
_SEARCH_SETTINGS = ("init", "n_init", "reseat")
_SEARCH_RETVALS = (
    "restarts_llf",
    "restarts_converged",
    "restarts_llf_history",
    "reseat_llf",
    "reseat_llf_history",
    "path_llf",
    "path_llf_history",
    "restarts_spread",
    # and how its best run got there (the refit from its estimate takes one
    # step, from the faces in their reported order)
    "face_order",
    "iterations",
    "llf_history",
    "steps",
    "n_em_steps",
    "n_newton_steps",
)


def _fit_without_fold(context: Context, cls, settings, fold: int, options: dict):
    """The held-out rows' log-probabilities of their outcomes under the
    candidate fitted without ``fold``, and whether that fit found separation
    (its held-out log-loss then counts rows at probabilities near 0 or 1)."""
    test = context.folds == fold
    y01, exog = context.y01, np.asarray(context.exog)
    with warnings.catch_warnings():
        # a fold fit's diagnostics are about that fold's parameters, which
        # are only used to predict; the held-out scores judge the candidate
        warnings.simplefilter("ignore")
        weights = None if context.row_weights is None else context.row_weights[~test]
        model = with_terms(
            cls(
                y01[~test],
                exog[~test],
                inside=context.code,
                freq_weights=weights,
                **settings,
            ),
            context.terms,
        )
        results = model.fit(**options)
    params = np.asarray(results.params)
    # the fitted model's own log-odds of y = 1 (PLUME, SPLA1 or with flips)
    log_odds = model._log_odds_and_jacobian(params, exog[test], jacobian=False)[0]
    separated = bool(results.mle_retvals.get("separation", False))
    return outcome_log_probability(log_odds, y01[test]), separated


def cv_scores(logprob: np.ndarray, folds: np.ndarray, weights=None) -> dict:
    """Held-out accuracy and log-loss, over all rows and their standard
    errors over the folds, from each row's held-out log-probability (each
    row counted ``weights`` times: means over the observations)."""
    correct = (logprob > np.log(0.5)).astype(float)
    f = np.ones(logprob.size) if weights is None else np.asarray(weights, float)
    by_fold = (
        pd.DataFrame({"fold": folds, "f": f, "acc": f * correct, "loss": -f * logprob})
        .groupby("fold")[["f", "acc", "loss"]]
        .sum()
    )
    means = by_fold[["acc", "loss"]].div(by_fold["f"], axis=0)
    root = np.sqrt(len(means))
    return {
        "cv_accuracy": f @ correct / f.sum(),
        "cv_accuracy_se": means["acc"].std(ddof=1) / root,
        "cv_logloss": -(f @ logprob) / f.sum(),
        "cv_logloss_se": means["loss"].std(ddof=1) / root,
    }


def _model_class(gamma: float, label_flips: bool = False):
    """The model a candidate is fitted with."""
    if label_flips:
        return LabelFlipPolyhedralLogit
    return HardPolyhedralLogit if gamma == np.inf else PolyhedralMixtureLogit


def _gamma_kw(gamma: float) -> dict:
    return {} if gamma == np.inf else {"gamma": gamma}


def stratified_folds(
    y: np.ndarray, n_splits: int, rng: np.random.Generator, labels=None
) -> np.ndarray:
    """Fold labels ``0..n_splits-1`` with each class spread evenly over the folds.

    Each class is shuffled and dealt round-robin, the deal of the second class
    starting where the first ended, so that fold sizes differ by at most one and
    each fold's class shares match the sample's up to one observation per class.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Class labels (any values; each distinct value is a stratum).
    n_splits : int
        Number of folds, at least 2 and at most the size of the smallest class.
    rng : numpy Generator
        Source of the shuffles.
    labels : dict, optional
        The user's label of each value of ``y`` (a model's
        ``outcome_mapping``, label to code), for the error's words.

    Returns
    -------
    ndarray of int, shape (n,)
        The fold of each observation.
    """
    y = np.asarray(y)
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if n_splits < 2:
        raise ValueError(f"cv must be an integer >= 2 folds, got {n_splits}")
    if counts.min() < n_splits:
        smallest = classes[np.argmin(counts)].item()
        named = {code: label for label, code in (labels or {}).items()}
        smallest = named.get(smallest, smallest)
        raise ValueError(
            f"cv={n_splits} stratified folds need at least {n_splits} observations "
            f"of each class, but class {smallest!r} has {counts.min()}; use fewer "
            "folds"
        )
    folds = np.empty(y.size, dtype=int)
    offset = 0
    for code in range(classes.size):
        members = rng.permutation(np.flatnonzero(codes == code))
        folds[members] = (offset + np.arange(members.size)) % n_splits
        offset = (offset + members.size) % n_splits
    return folds


def candidate_label(k: int, gamma: float) -> str:
    """A candidate's name in select_k's messages."""
    return f"k={k}" if k == 1 else f"k={k}, gamma={gamma:g}"


def warn_left_out(errors: dict) -> None:
    """One ``FitFailedWarning`` (scikit-learn's, for fits whose errors were
    caught) naming the candidates ``k="auto"`` left out because they could
    not be fitted, ``errors`` by K, and the first one's error."""
    if not errors:
        return
    from sklearn.exceptions import FitFailedWarning

    left_out = ", ".join(f"K = {k}" for k in errors)
    first = next(iter(errors.values()))
    warnings.warn(
        f'k="auto" left out {left_out}, which could not be fitted '
        f"({type(first).__name__}: {first}); it chose among the others.",
        FitFailedWarning,
        stacklevel=caller_stacklevel(),
    )


def warn_separated_folds(table: pd.DataFrame, n_folds: int, alpha: float) -> None:
    """One ``PerfectSeparationWarning`` for the candidates some of whose
    fold fits found separation: such a fit predicts 0 or 1, so a held-out
    row on the wrong side adds to the log-loss without bound (a simulated
    triangle: K = 3's 2.6 against K = 2's 0.59, and K = 2 chosen; at
    alpha=1e-3 no fold separates and K = 3 is chosen)."""
    hit = table[table["cv_separated"] > 0]
    if hit.empty:
        return
    labels = "; ".join(
        f"{candidate_label(int(row.k), row.gamma)}: "
        f"{int(row.cv_separated)} of {n_folds}"
        for row in hit.itertuples()
    )
    fix = (
        f"a larger L2 penalty than alpha={alpha:g}"
        if alpha > 0
        else "a small L2 penalty, e.g. alpha=1e-3"
    )
    warnings.warn(
        f"Fits on cross-validation folds found separation ({labels}): a "
        "separated fit predicts probabilities of 0 or 1, so cv_logloss counts "
        "its held-out errors without bound, which turns a choice by "
        f"cross-validation against that candidate. Use {fix}.",
        PerfectSeparationWarning,
        stacklevel=caller_stacklevel(),
    )
