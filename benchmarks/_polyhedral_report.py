"""The report of ``polyhedral.py``: the per-setting and overview tables, the
summary against the targets, the protocol and the figure. Presentation only."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._polyhedral_fits import (
    CV_FOLDS,
    LOGIT_FALLBACK_L1,
    METHODS,
    TRUTH,
    WITHIN_POINTS,
    Grids,
)
from ._table1_fits import PROBABILITY_CLIP


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


def report(table: pd.DataFrame, args: argparse.Namespace, header: list[str]) -> str:
    """The Markdown document: provenance (``header``), protocol, overview,
    per-setting tables and the summary."""
    summary = mean_over_seeds(table)
    methods = [METHODS[key] for key in METHODS if key in args.methods]
    seeds = f"mean over {args.seeds} seeds" if args.seeds > 1 else "one seed"
    lines = [
        "# Polyhedral benchmark: PLUME and rivals on simulated polytopes",
        "",
        *header,
        f"- BLAS threads limited to {args.blas_threads} (`--blas-threads`)",
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
