"""Choosing the number of hyperplanes K (and gamma): information criteria or
stratified cross-validation, and the likelihood-ratio comparison of nested fits."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

from ._candidate_fits import (
    Context,
    candidate_label,
    cv_scores,
    fit_candidates,
    formula_refit,
    one_seed,
    stratified_folds,
    warn_separated_folds,
)
from ._diagnostics import caller_stacklevel
from ._fitting import as_rng
from ._formula_data import captured_namespace
from ._inference import check_alpha
from ._lr_test import LRTestResult, compare_lr_test
from ._parallel import check_progress, effective_n_jobs
from ._penalty import model_terms
from ._validation import (
    as_grid,
    check_choice,
    check_gamma,
    check_int,
    check_positive_float,
)
from .model import PolyhedralMixtureLogit
from .sm_exceptions import FlipRateBoundaryWarning, LocalMaximaWarning

__all__ = [
    "SELECT_K_COLUMNS",
    "LRTestResult",
    "SelectKResults",
    "compare_lr_test",
    "select_k",
]

CRITERIA = ("bic", "aic", "cv", "lr_bootstrap")
SELECT_K_COLUMNS = (
    "k",
    "gamma",
    "llf",
    "aic",
    "bic",
    "cv_accuracy",
    "cv_accuracy_se",
    "cv_logloss",
    "cv_logloss_se",
    "cv_separated",
    "converged",
)
# warnings that mark a fit as not at a regular maximum (its row: converged=False)
_UNSETTLED = (ConvergenceWarning, PerfectSeparationWarning)


@dataclass
class SelectKResults:
    """What :func:`select_k` found.

    Attributes
    ----------
    table : DataFrame
        One row per candidate, columns ``k, gamma, llf, aic, bic, cv_accuracy,
        cv_accuracy_se, cv_logloss, cv_logloss_se, cv_separated, converged``
        (and ``lr_pvalue`` with ``criterion="lr_bootstrap"``).
        ``cv_separated`` counts the candidate's fold fits that found
        separation: their held-out rows can sit at probabilities near 0 or 1,
        which inflates ``cv_logloss`` (a penalty, ``alpha > 0``, keeps them
        finite); one ``PerfectSeparationWarning`` names such candidates. The
        ``cv_`` columns are NaN without cross-validation.
    best : PolyhedralMixtureLogitResults
        The chosen candidate fitted on all the data.
    criterion : str
        ``"bic"``, ``"aic"``, ``"cv"`` or ``"lr_bootstrap"``.
    chosen : tuple
        ``(k, gamma)`` of the chosen candidate (gamma NaN for K = 1).
    """

    table: pd.DataFrame
    best: Any
    criterion: str
    chosen: tuple[int, float]
    folds: np.ndarray | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        k, gamma = self.chosen
        return (
            f"SelectKResults(criterion={self.criterion!r}, chosen=(k={k}, "
            f"gamma={gamma:g}), candidates={len(self.table)})"
        )


def select_k(
    formula: str,
    data: pd.DataFrame,
    ks: int | Iterable[int] = range(1, 6),
    gammas: float | Iterable[float] = (0.5, 1.0, 2.0, 5.0),
    criterion: str = "bic",
    cv: int = 10,
    alpha: float = 0.0,
    inside=1,
    n_init: int = 1,
    random_state=None,
    progress: bool = False,
    *,
    cross_validate: bool | None = None,
    n_se: float = 0.0,
    label_flips: bool = False,
    reseat: int = 0,
    n_jobs: int | None = 1,
    eval_env: int = 0,
    n_boot: int = 99,
    test_level: float = 0.05,
    freq_weights=None,
) -> SelectKResults:
    r"""Fit PLUME over a grid of K and gamma and choose one.

    Every candidate is fitted on all the data (``llf``, ``aic``, ``bic``,
    ``converged``). With ``criterion="cv"`` (or ``cross_validate=True``) each is
    also fitted ``cv`` times on stratified folds and scored on the held-out rows.

    Parameters
    ----------
    formula : str
        Patsy formula, as for :func:`plumestats.api.plume`.
    data : DataFrame
        The data.
    ks : int or iterable of int
        Numbers of hyperplanes to try (one number: that K alone). K = 1
        (logistic regression, where gamma plays no role) is fitted once and
        reported with ``gamma`` NaN.
    gammas : float or iterable of float
        Gate sharpness values tried for every K > 1 (one number: that value
        alone); ``np.inf`` is the hard-gating model (SPLA1).
    criterion : {"bic", "aic", "cv", "lr_bootstrap"}
        Smallest BIC, smallest AIC, or smallest cross-validated log-loss (mean
        held-out :math:`-\log P(y_n \mid x_n)`, a proper scoring rule that
        separates candidates long before their accuracies differ). Ties go to
        the smaller K, then the smaller gamma. ``"lr_bootstrap"`` tests up
        from the smallest K: K against the next K by the parametric-bootstrap
        likelihood-ratio test (``compare_lr_test(..., method="bootstrap")``,
        ``n_boot`` draws; for each K its candidate with the highest
        log-likelihood), and keeps the last K whose larger neighbour is not
        significant (p-value above ``test_level``); the table's ``lr_pvalue``
        holds the tests made.
    cv : int, default 10
        Number of stratified folds.
    alpha : float, default 0
        L2 penalty of every fit (see ``fit(alpha=...)``).
    inside : int or label, default 1
        Which outcome forms the polyhedron (see ``plume``).
    n_init : int, default 1
        EM restarts per fit.
    random_state : int, numpy Generator or None
        Seed of the folds and of every fit's starts. ``None`` is a fixed seed:
        the selection is reproducible. A Generator gives one seed, drawn
        once, to every fit, so that the fits do not depend on their order.
    progress : bool, default False
        Show a progress bar of the fits (the candidates on all the data and
        on every fold) on standard error (``tqdm.auto``, a widget in Jupyter;
        plain lines if tqdm is not installed).
    cross_validate : bool or None
        Fill the ``cv_*`` columns; ``None`` means ``criterion == "cv"``. With
        ``True`` and ``criterion="bic"`` the table shows both.
    n_se : float, default 0
        With ``criterion="cv"``: a polyhedron (K >= 2) is chosen only if its
        cross-validated log-loss beats the best K = 1 candidate's (logistic
        regression) by more than ``n_se`` standard errors of their paired
        per-row difference; otherwise K = 1 is chosen. ``0`` takes the
        smallest log-loss. The smallest mean is an optimistic pick among many
        candidates: ``n_se=1`` keeps the simpler model unless the faces pay
        for themselves (on the paper's ilpd data it kept K = 1 in 26 of 30
        folds and stayed within 0.3 points of ``Logit``, where the smallest
        log-loss lost 0.5; ``benchmarks/table1.py``, whose selection is this
        rule).
    label_flips : bool, default False
        Fit every candidate as :class:`~plumestats.label_flip.LabelFlipPolyhedralLogit`
        (PLUME with an estimated share of flipped labels; soft gates only), so
        that K is chosen under the flip model. The table gains a ``flip_rate``
        column; a flip rate at its boundary 0 is a regular outcome (the
        candidate is PLUME), not a failed fit.
    reseat : int, default 0
        Re-seating moves after the restarts of every fit with K >= 2 (see
        ``fit(reseat=...)``; ``None``: fit's default, three). They find
        higher maxima, which for a K above what the data support means a
        closer fit of the sample: prefer ``criterion="cv"`` with them.
    n_jobs : int or None, default 1
        Worker processes for the fits (every candidate on all the data and on
        each fold is one independent fit), by joblib's rules: 1 or None runs
        in this process, -1 uses every core, -2 all but one; 0 is refused.
        Anything but 1 needs joblib (``pip install "plumestats[parallel]"``).
        The table is the same whatever ``n_jobs``.
    eval_env : int, default 0
        Where names in the formula that are not columns of ``data`` are looked
        up: the calling namespace, as for ``smf.logit`` (see
        :meth:`~plumestats.api.PolyhedralMixtureLogit.from_formula`).
    n_boot : int, default 99
        Bootstrap draws of each test (``criterion="lr_bootstrap"``).
    test_level : float, default 0.05
        Level of each test (``criterion="lr_bootstrap"``).
    freq_weights : array_like, optional
        Frequency weights, one per row of ``data`` (see ``plume``): every
        fit, the criteria and the cross-validated scores count each row
        ``f_n`` times (a fold holds a row's observations together).

    Returns
    -------
    SelectKResults
        ``.table``, ``.best``, ``.criterion``, ``.chosen``.

    Notes
    -----
    ``cv_accuracy`` and ``cv_logloss`` average per held-out row over all rows;
    their ``_se`` is the standard deviation of the fold means divided by
    :math:`\sqrt{\text{cv}}`. A fit that did not reach a regular maximum (no
    convergence, or separation) has ``converged=False``; one
    ``ConvergenceWarning`` lists those candidates at the end instead of one
    warning per fit. The singular information of a redundant hyperplane
    (expected for K above the truth) is reported only if that candidate is
    chosen, as its ``HessianInversionWarning``.

    Examples
    --------
    >>> import plumestats.api as ps
    >>> data, _ = ps.simulate_polyhedron(600, k=3, noise=0.05, random_state=0)
    >>> sel = ps.select_k("y ~ x1 + x2", data, ks=(1, 2, 3), gammas=(1.0,))
    >>> sel.chosen
    (3, 1.0)
    """
    n_se, cross_validate, fit_options, candidates = _checked_options(
        criterion,
        alpha,
        n_se,
        n_init,
        reseat,
        ks,
        gammas,
        label_flips=label_flips,
        cross_validate=cross_validate,
    )
    test_level = check_alpha(test_level, "test_level")
    n_boot = check_int(n_boot, "n_boot")
    if criterion == "lr_bootstrap":
        _check_draws_can_reject(n_boot, test_level)
    enabled = check_progress(progress)
    n_workers = effective_n_jobs(n_jobs)
    random_state = one_seed(random_state)
    # the names the formula reads from the caller, captured here (eval_env
    # counts frames from select_k): the fits may run in other processes
    namespace = captured_namespace(formula, data, eval_env)
    folds, design, terms = _folds_and_design(
        formula,
        data,
        inside,
        random_state,
        cv=cv if cross_validate else None,
        n_workers=n_workers,
        namespace=namespace,
        freq_weights=freq_weights,
    )
    context = Context(
        formula,
        data if n_workers == 1 else None,
        inside,
        label_flips,
        fit_options,
        random_state,
        folds,
        *design[:3],
        eval_env=namespace,
        data_for_refit=data,
        freq_weights=freq_weights,
        row_weights=design[3],
        terms=terms,
    )
    fitted = fit_candidates(context, candidates, n_workers, enabled)
    table, fits, unsettled, held_out = _tabulate(
        candidates, fitted, label_flips, folds, design[3]
    )
    if folds is not None:
        warn_separated_folds(table, int(np.unique(folds).size), alpha)
    if n_workers > 1 and criterion == "lr_bootstrap":
        # the tests refit to draws at the design: fits with their data
        fits = {
            key: (formula_refit(context, res, *key), caught)
            for key, (res, caught) in fits.items()
        }
    if criterion == "lr_bootstrap":
        tests = {"n_boot": n_boot, "random_state": random_state, "n_jobs": n_jobs}
        best_row = _tested_row(table, candidates, fits, tests, test_level)
    else:
        best_row = _best_row(table, held_out, criterion, n_se, design[3])
    k, gamma = candidates[best_row]
    best, caught = fits[(k, gamma)]
    if n_workers > 1 and criterion != "lr_bootstrap":
        best = formula_refit(context, best, k, gamma)
    if unsettled:
        warnings.warn(
            f"{len(unsettled)} of {len(candidates)} candidate fits did not reach a "
            f"regular maximum ({', '.join(unsettled)}); their rows have "
            "converged=False. Try more restarts (n_init) or a small penalty (alpha).",
            ConvergenceWarning,
            stacklevel=2,
        )
    _reissue(w for w in caught if issubclass(w.category, HessianInversionWarning))
    chosen = (k, np.nan if k == 1 else gamma)
    return SelectKResults(table, best, criterion, chosen, folds)


def _checked_options(
    criterion, alpha, n_se, n_init, reseat, ks, gammas, *, label_flips, cross_validate
):
    """select_k's options checked: ``(n_se, cross_validate, the options of
    every fit, the candidates (k, gamma))``."""
    check_choice(criterion, "criterion", CRITERIA)
    if criterion == "lr_bootstrap" and label_flips:
        raise ValueError(
            "criterion='lr_bootstrap' refits PLUME models to simulated outcomes; "
            "label_flips=True is not supported there (use 'bic' or 'cv')"
        )
    alpha = check_positive_float(alpha, "alpha", allow_zero=True)
    n_se = check_positive_float(n_se, "n_se", allow_zero=True)
    if n_se > 0 and criterion != "cv":
        raise ValueError(
            f"n_se={n_se:g} compares cross-validated log-losses: use it with "
            "criterion='cv'"
        )
    n_init = check_int(n_init, "n_init")
    # None: fit's own default (three moves); select_k's default makes none
    reseat = None if reseat is None else check_int(reseat, "reseat", minimum=0)
    fit_options = {"alpha": alpha, "n_init": n_init, "reseat": reseat}
    candidates = _candidates(ks, gammas)
    if label_flips and any(gamma == np.inf for _, gamma in candidates):
        raise ValueError(
            "label_flips=True needs soft gates: drop np.inf from gammas (the flip "
            "model has no hard-gating variant)"
        )
    if cross_validate is None:
        cross_validate = criterion == "cv"
    elif criterion == "cv" and not cross_validate:
        raise ValueError("criterion='cv' needs cross_validate=True (or None)")
    return n_se, cross_validate, fit_options, candidates


def _check_draws_can_reject(n_boot: int, test_level: float) -> None:
    """The smallest bootstrap p-value is ``1 / (n_boot + 1)``: with fewer
    draws no test can reject, and the search would keep the smallest K."""
    smallest = 1.0 / (n_boot + 1)
    if smallest > test_level:
        needed = int(np.ceil(1.0 / test_level)) - 1
        raise ValueError(
            f"n_boot={n_boot}: the smallest bootstrap p-value, 1/(n_boot + 1) = "
            f"{smallest:.3g}, is above test_level={test_level:g}, so no test could "
            "reject and the smallest K would always be chosen: use n_boot >= "
            f"{needed}, and more if some draws may fail to refit (99 or more for "
            "a stable p-value)"
        )


def _folds_and_design(
    formula,
    data,
    inside,
    random_state,
    *,
    cv,
    n_workers: int,
    namespace: dict,
    freq_weights=None,
):
    """``(folds, design, terms)``: ``cv`` stratified folds (none when ``cv``
    is None), the design as arrays ``(y01, exog, inside code, the rows'
    frequency weights)`` where the fits need it (``(None, None, 1, weights)``
    otherwise), and the formula's terms (:func:`plumestats._penalty.model_terms`)."""
    template = PolyhedralMixtureLogit.from_formula(
        formula,
        data,
        k=1,
        inside=inside,
        eval_env=namespace,
        freq_weights=freq_weights,
    )
    folds = None
    if cv is not None:
        cv = check_int(cv, "cv", minimum=2)
        folds = stratified_folds(
            template.endog, cv, as_rng(random_state), template.outcome_mapping
        )
    # the fits on folds, and in worker processes every fit, read the design
    # as arrays: a formula fit cannot travel back from a worker when the
    # formula reads the caller's names (statsmodels rebuilds its design from
    # the caller's frame when it is unpickled)
    design = (None, None, 1, template.freq_weights)
    if folds is not None or n_workers > 1:
        exog = pd.DataFrame(template.exog, columns=template.exog_names)
        design = (template.endog, exog, template.spec.inside_code, design[3])
    return folds, design, model_terms(template)


def _tabulate(candidates, fitted, label_flips: bool, folds, weights):
    """The table's rows from the fits, and ``(the table, the fits by (k,
    gamma), the labels of the unsettled fits, the held-out log-probabilities)``;
    warnings other than the fits' diagnostics are issued again."""
    rows, fits, unsettled, held_out, disagreeing = [], {}, [], [], []
    for (k, gamma), ((results, caught), logprob, n_separated) in zip(
        candidates, fitted, strict=True
    ):
        settled = not any(
            issubclass(w.category, _UNSETTLED)
            and not _flip_rate_at_zero(w, results)
            # converged, at the best of its starts: said once for all below
            and not issubclass(w.category, LocalMaximaWarning)
            for w in caught
        )
        if any(issubclass(w.category, LocalMaximaWarning) for w in caught):
            disagreeing.append(candidate_label(k, gamma))
        _reissue(w for w in caught if not _is_fit_diagnostic(w.category))
        row = {
            "k": k,
            "gamma": np.nan if k == 1 else gamma,
            "llf": results.llf,
            "aic": results.aic,
            "bic": results.bic,
            "converged": bool(results.converged) and settled,
        }
        if label_flips:
            row["flip_rate"] = results.flip_rate
        if folds is not None:
            held_out.append(logprob)
            row.update(cv_scores(logprob, folds, weights), cv_separated=n_separated)
        rows.append(row)
        fits[(k, gamma)] = (results, caught)
        if not row["converged"]:
            unsettled.append(candidate_label(k, gamma))
    columns = [*SELECT_K_COLUMNS, *(["flip_rate"] if label_flips else [])]
    table = pd.DataFrame(rows).reindex(columns=columns)
    _warn_disagreeing(disagreeing, len(candidates))
    return table, fits, unsettled, held_out


def _warn_disagreeing(labels: list[str], n_candidates: int) -> None:
    """One ``LocalMaximaWarning`` for the candidates whose starts disagreed."""
    if labels:
        warnings.warn(
            f"The starts of {len(labels)} of {n_candidates} candidate fits ended "
            f"at different maxima ({', '.join(labels)}): each row is the best of "
            "its starts, and a higher maximum may exist, which would favour more "
            "faces. Try more starts, e.g. n_init=20.",
            LocalMaximaWarning,
            stacklevel=caller_stacklevel(),
        )


def _best_row(table, held_out, criterion: str, n_se: float, weights) -> int:
    """The chosen row: the smallest criterion (ties to the earlier row, the
    smaller k), or K = 1 when the best polyhedron wins by at most ``n_se``."""
    score = {"bic": "bic", "aic": "aic", "cv": "cv_logloss"}[criterion]
    # stable sort on a table already ordered by (k, gamma): ties go to smaller k
    best_row = int(np.argsort(table[score].to_numpy(), kind="stable")[0])
    if n_se > 0:
        best_row = _keep_k1_unless_beaten(table, held_out, best_row, n_se, weights)
    return best_row


def _tested_row(table, candidates, fits, tests: dict, level: float) -> int:
    """The row ``criterion="lr_bootstrap"`` chooses: up from the smallest K,
    each K's best candidate (highest llf) tested against the next K's by the
    bootstrap LR test, stopping at the first test not significant at
    ``level`` (p-value above it). Fills ``table["lr_pvalue"]``."""
    best_of_k = table.loc[table.groupby("k")["llf"].idxmax()].sort_values("k")
    rows = [int(row) for row in best_of_k.index]
    table["lr_pvalue"] = np.nan
    chosen = rows[0]
    for smaller, larger in itertools.pairwise(rows):
        test = compare_lr_test(
            fits[candidates[smaller]][0],
            fits[candidates[larger]][0],
            method="bootstrap",
            **tests,
        )
        table.loc[larger, "lr_pvalue"] = test.bootstrap_pvalue
        # a bootstrap p-value (1 + #)/(1 + B) <= level rejects with size level
        # exactly when level (1 + B) is a whole number
        if test.bootstrap_pvalue > level:
            break
        chosen = larger
    return chosen


def _keep_k1_unless_beaten(table, held_out, best_row, n_se, weights=None) -> int:
    """``best_row``, or the best K = 1 row when the best polyhedron's held-out
    log-likelihood beats it by at most ``n_se`` standard errors of the paired
    per-row difference."""
    k1_rows = np.flatnonzero(table["k"].to_numpy() == 1)
    if table["k"].iloc[best_row] == 1 or k1_rows.size == 0:
        return best_row
    k1_row = int(k1_rows[np.argmin(table["cv_logloss"].to_numpy()[k1_rows])])
    kept = within_n_se(held_out[best_row], held_out[k1_row], n_se, weights=weights)
    return k1_row if kept else best_row


def within_n_se(
    better: np.ndarray,
    other: np.ndarray,
    n_se: float,
    tolerance: float = 0.0,
    weights: np.ndarray | None = None,
) -> bool:
    """Whether per-row scores ``better`` beat ``other`` by at most ``n_se``
    standard errors of their paired difference (plus ``tolerance``); False when
    a difference is not finite (a failed fit cannot be kept). Frequency
    ``weights`` count each row as that many observations."""
    difference = better - other
    if not np.all(np.isfinite(difference)):
        return False
    f = np.ones(difference.size) if weights is None else np.asarray(weights, float)
    count = f.sum()
    mean = f @ difference / count
    spread = np.sqrt(f @ (difference - mean) ** 2 / (count - 1)) if count > 1 else 0.0
    return bool(mean <= n_se * spread / np.sqrt(count) + tolerance)


def _candidates(ks, gammas) -> list[tuple[int, float]]:
    ks = [check_int(k, "every k in ks") for k in as_grid(ks, "ks")]
    gammas = as_grid(gammas, "gammas")
    for gamma in gammas:
        if gamma != np.inf:
            check_gamma(
                gamma,
                "every gamma in gammas but np.inf (SPLA1)",
                hard="np.inf in gammas",
            )
    gammas = [float(g) for g in gammas]
    if not ks:
        raise ValueError("ks is empty; pass the numbers of hyperplanes to try")
    if any(k > 1 for k in ks) and not gammas:
        raise ValueError("gammas is empty; pass at least one gate sharpness")
    gammas = sorted(set(gammas))
    out = [(1, 1.0)] if 1 in ks else []
    out += [(k, g) for k in sorted(set(ks)) if k > 1 for g in gammas]
    return out


def _flip_rate_at_zero(caught, results) -> bool:
    """Whether ``caught`` is the flip model's note that its rate sits at the
    boundary 0: PLUME's fit, a regular outcome (the fit reports converged)."""
    return bool(results.mle_retvals.get("boundary", False)) and issubclass(
        caught.category, FlipRateBoundaryWarning
    )


def _is_fit_diagnostic(category) -> bool:
    """Warnings select_k summarises itself instead of repeating per fit."""
    return issubclass(
        category, (*_UNSETTLED, HessianInversionWarning, CollinearityWarning)
    )


def _reissue(caught) -> None:
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
