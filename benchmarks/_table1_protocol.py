"""The protocol section of ``table1.py``'s report: what was run, in words.

Presentation only, apart from the report's tables (``_table1_report.py``) so
that each module keeps one job.
"""

from __future__ import annotations

from typing import Any


def grid_lines(grids: Any) -> list[str]:
    return [
        f"  - PLUME: K in {grids.ks} x gamma in {grids.gammas} x alpha in "
        f"{grids.alphas} x inside in {grids.insides}; K = 1 (logistic regression: "
        "gamma and inside irrelevant) fitted once per alpha",
        f"  - SPLA1: K in {grids.ks} x alpha in {grids.alphas} x inside in "
        f"{grids.insides}; K = 1 once per alpha",
        f"  - RBF SVM: C in {grids.svm_cs} x gamma in {grids.svm_gammas} "
        "(features standardised)",
        f"  - CART: max_depth in {grids.cart_depths} x min_samples_leaf in "
        f"{grids.cart_leaves}",
    ]


def protocol_lines(context: Any) -> list[str]:
    """The report's protocol section: folds, designs, selection, grids, fits
    and the timing pass, from the run's ``context`` (``RunContext``)."""
    args, config = context.args, context.config
    repeats = ", ".join(f"{name} {n}" for name, n in context.repeats.items())
    along = (
        "in the inner selection, each alpha's fit starts from the previous "
        "(larger) alpha's estimate at the same K/gamma/inside on the same inner "
        "fold"
    )
    final = "; the final fits always run them"
    warm = {
        "alpha": f"{along}, and only the largest alpha's fit runs the k-means "
        f"starts (`--warm-start`){final}",
        "grid": f"{along}, the largest alpha's from the previous (smaller) "
        "gamma's at the same K/inside/alpha, and only the first setting of each "
        "K/inside (the smallest gamma, the largest alpha) runs the k-means "
        f"starts (`--warm-start grid`){final}",
    }.get(config.warm_start, "every fit starts from PLUME's default k-means starts")
    return [
        f"- **Outer loop**: repeated stratified {config.folds}-fold cross-validation; "
        f"repeats: {repeats} (adult has 30162 rows: `--adult-repeats`, default 1). "
        f"Splits shuffled with seed {config.seed} + repeat.",
        "- **Design, fitted on each training fold only** (outer and inner alike, one "
        "function for every method, `_table1_design.FoldDesign`): median imputation of "
        "numeric columns, standardisation with the training mean and sd; one-hot "
        "encoding of string columns and heart's four code columns with the most "
        "frequent training level as reference (dropped, so that Logit has full "
        "rank), unseen test levels -> all zeros; then columns constant on the "
        "training rows (ionosphere's a02, rare adult categories) and exact "
        "duplicates are dropped; adult's education_num (a function of education) "
        'is never used. Pima\'s zeros ("not measured") are kept as values, as in '
        "the UCI file. Models with intercepts get a constant column added.",
        f"- **Inner selection** on each outer training fold: stratified "
        f"{config.inner_folds}-fold CV"
        + (
            f" repeated {config.inner_repeats} times with different shuffles "
            "(each row's validation scores averaged over the repeats, so rows "
            "stay the units of the standard errors below)"
            if config.inner_repeats > 1
            else ""
        )
        + f", criterion `{config.select}` for PLUME and "
        "SPLA1 (mean over inner folds of the validation accuracy, or minus the "
        "log-loss of P(y=1)); SVM and CART are always selected on accuracy (the SVM "
        "has no probabilities, pure CART leaves an infinite log-loss). "
        + (
            "Rule `one-se` (Breiman's one-standard-error rule on the model size "
            "of PLUME and SPLA1): the smallest K whose best setting is within one "
            "standard error of the overall best, the standard error being that of "
            "the paired per-row difference of the validation scores pooled over "
            "the inner folds; then that K's best (alpha, gamma, inside). SVM and "
            "CART take their best setting. "
            if config.rule == "one-se"
            else (
                f"Rule `{config.rule}` (PLUME and SPLA1): the best mean score, "
                "unless the best setting is a polyhedron (K >= 2) that beats the "
                "best K = 1 setting (logistic regression) by no more than one "
                "standard error of the paired per-row difference of the "
                "validation scores pooled over the inner folds; then "
                + (
                    "K = 1's best alpha. "
                    if config.rule == "gate"
                    else "K = 1 fitted without penalty (alpha = 0: logistic "
                    "regression's maximum-likelihood fit, as `Logit`; the "
                    "penalised K = 1 settings are only the polyhedra's "
                    "yardstick, because the validation log-likelihood picks the "
                    "penalty that shrinks P(y=1|x) towards the base rate, which "
                    "on a weak signal costs accuracy). "
                )
                + "SVM and CART take their best setting. "
            )
            if config.rule in ("gate", "gate-mle")
            else "Rule `best`: the best mean score. "
        )
        + "Simplest first (and ties within 1e-12): smaller K, then larger alpha, "
        "smaller gamma, class 1 inside; SVM smaller C then gamma; CART shallower, "
        f"then larger leaves. Warm starts: {warm}.",
        "- **Grids** (module constants of `_table1_options.py`):",
        *grid_lines(config.grids),
        "- **PLUME's three M-steps share one selection per outer fold, made with "
        "the Newton M-step**: the M-step changes the algorithm's path, not the "
        "estimator it targets (at K >= 2 the paths can end at different local "
        "maxima, which is why the variants' accuracies differ). Each variant is "
        "then refitted at the chosen setting "
        "on the whole outer training fold with its own M-step and scored on the "
        "outer test fold. SPLA1 is fitted with the Newton M-step. Fits: "
        f"`fit(alpha=..., mstep=..., n_init={config.n_init}, "
        f"random_state={config.seed}, em_tol={config.em_tol:g}, "
        f"em_overrelax={config.em_overrelax:g})` (EM hands "
        "over to Newton at a relative change of L below `em_tol`, `--em-tol`; "
        "EM steps over-relaxed above 1, `--em-overrelax`; "
        f"at K >= 2 the best of {config.n_init} "
        "k-means starts, in the selection and the final fits alike: the main "
        "table's fit times include every start), other tolerances at their "
        "defaults, arrays (no formulas); prediction P(y=1|x) > 0.5.",
        "- **Logit**: statsmodels `Logit` on the same design with a constant, "
        "K = 1, unpenalised, defaults (Newton, at most 35 iterations), no tuning.",
        f"- **Large training folds** (adult only): the inner selection of every "
        f"tuned method runs on a stratified subsample of {config.inner_max_rows} "
        "rows of the training fold (`--inner-max-rows`); the final fits use the "
        f"whole training fold, except the SVM, trained on a stratified "
        f"{config.svm_max_rows}-row subsample (`--svm-max-rows`, as in our peer "
        "figures).",
        "- **Fit time**: wall time (`perf_counter`) of `.fit()` of the final fit "
        "at the chosen setting (model construction excluded), median over outer "
        "folds; ratio: to Logit's median on the same dataset.",
        "- **Accuracy**: mean over folds within a repeat, then mean ± sd over "
        "repeats; with one repeat, the sd over folds (marked). Warnings raised by "
        "the fits are caught and counted (final fits in the main table, inner "
        "fits below), never printed.",
        "- **Timing pass**: on each dataset's first outer training fold, PLUME at "
        "K = 2 with plume-newton's most frequently chosen (gamma, alpha, inside) "
        "among its K > 1 selections (fallback gamma=1, alpha=1e-3, inside=1) with "
        "each M-step, SPLA1 at K = 2 (its own modal alpha/inside, same fallback), "
        "those of them in `--methods`, "
        f"and Logit, each from one start (`n_init=1`): one untimed warm-up "
        f"each, then {args.timing_repeats} "
        "interleaved timed fits (order reversed every other repeat).",
    ]
