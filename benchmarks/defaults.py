"""Defaults that don't hurt: ``PolyhedralClassifier()`` against
``LogisticRegression()`` on the five UCI data sets.

What it measures
    The held-out accuracy of scikit-learn estimators at their default settings,
    on the same 3 x 10 stratified folds (``RepeatedStratifiedKFold``, seed 0)
    of each data set: ``LogisticRegression()``, ``PolyhedralClassifier()``
    (``k="auto"``: K = 1, 2 or 3 by BIC on the training folds, ``alpha=1e-3``)
    and, for reference, the classifier's earlier default
    ``PolyhedralClassifier(k=2, alpha=0)``, and ``LogisticRegression`` at
    convergence: ``LogisticRegression()`` stops lbfgs after 100 iterations
    on raw features (a ``ConvergenceWarning`` on four of the five sets), so
    ``LogisticRegression(max_iter=10000)`` and ``StandardScaler() +
    LogisticRegression()`` (which ``PolyhedralClassifier(k=1)`` equals) show
    what its penalty gives at its maximum. The features are every usable
    column, with levels one-hot encoded (the design of
    ``benchmarks._common.load_uci``'s formula, without its intercept), as they
    are: the estimators standardise nothing but what they standardise
    themselves. The table gives the mean accuracy, the difference from
    ``LogisticRegression()`` in points with the standard error of the paired
    per-fold differences (folds overlap, so it is indicative), how often each K
    was chosen, and the median fit time.

Usage
    python -m benchmarks.defaults                 # 3 x 10 folds, five data sets
    python -m benchmarks.defaults --jobs 2        # folds in parallel
    python -m benchmarks.defaults --quick         # smoke test: heart, 1 x 3 folds

The Markdown table is printed and written, with the provenance of the run, to
``defaults.md`` in ``--output``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import patsy
from joblib import Parallel, delayed
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from plumestats.sklearn import PolyhedralClassifier

from ._common import (
    Run,
    add_options,
    blas_info,
    blas_limit,
    load_uci,
    progress,
    write_table_report,
)

DATASETS = ("ionosphere", "heart", "ilpd", "pima", "adult")
ESTIMATORS = {
    "LogisticRegression()": LogisticRegression,
    "PolyhedralClassifier()": PolyhedralClassifier,
    "PolyhedralClassifier(k=2, alpha=0)": lambda: PolyhedralClassifier(k=2, alpha=0.0),
    # LogisticRegression() stops lbfgs after 100 iterations on the raw
    # features; these two say what its own penalty gives at convergence
    "LogisticRegression(max_iter=10000)": lambda: LogisticRegression(max_iter=10000),
    "StandardScaler() + LogisticRegression()": lambda: make_pipeline(
        StandardScaler(), LogisticRegression()
    ),
}
REFERENCE = "LogisticRegression()"
DEFAULT = "PolyhedralClassifier()"


def design(name: str, data_dir: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """The features (one-hot levels, no intercept) and the labels, of the
    rows without a missing value (as the formula's model drops them)."""
    frame, formula = load_uci(name, data_dir)
    outcome, rhs = (part.strip() for part in formula.split("~"))
    features = patsy.dmatrix(rhs, frame, return_type="dataframe")
    labels = frame.loc[features.index, outcome].to_numpy()
    return features.drop(columns="Intercept"), labels


def fold_scores(X: pd.DataFrame, y: np.ndarray, train, test) -> dict:
    """Every estimator fitted on one fold: accuracy, seconds, K, warnings."""
    scores = {}
    for label, make in ESTIMATORS.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            fitted = make().fit(X.iloc[train], y[train])
            seconds = time.perf_counter() - start
        scores[label] = {
            "accuracy": float(fitted.score(X.iloc[test], y[test])),
            "seconds": seconds,
            "k": getattr(fitted, "k_", None),
            "warnings": sorted({w.category.__name__ for w in caught}),
        }
    return scores


def run_dataset(name: str, data_dir: Path, splits, jobs: int) -> dict:
    X, y = design(name, data_dir)
    folds = list(splits.split(X, y))
    found = Parallel(n_jobs=jobs)(
        delayed(fold_scores)(X, y, train, test) for train, test in folds
    )
    return {"n": len(y), "p": X.shape[1], "folds": found}


def rows(name: str, result: dict) -> list[str]:
    folds = result["folds"]
    reference = np.array([fold[REFERENCE]["accuracy"] for fold in folds])
    lines = []
    for label in ESTIMATORS:
        accuracy = np.array([fold[label]["accuracy"] for fold in folds])
        difference = 100 * (accuracy - reference)
        se = difference.std(ddof=1) / np.sqrt(difference.size) if len(folds) > 1 else 0
        ks = Counter(fold[label]["k"] for fold in folds if fold[label]["k"])
        chosen = ", ".join(f"K={k}: {n}" for k, n in sorted(ks.items())) or "-"
        warned = Counter(w for fold in folds for w in fold[label]["warnings"])
        notes = ", ".join(f"{w} in {n}" for w, n in sorted(warned.items())) or "-"
        seconds = statistics.median(fold[label]["seconds"] for fold in folds)
        lines.append(
            f"| {name} | {result['n']} | {result['p']} | {label} | "
            f"{100 * accuracy.mean():.2f} | "
            f"{difference.mean():+.2f} ± {se:.2f} | {chosen} | {seconds:.3f} | "
            f"{notes} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    add_options(
        parser, quick="heart, 1 x 3 folds", data=True, jobs=True, blas_threads=1
    )
    args = parser.parse_args(argv)
    run = Run.start("defaults", argv)
    datasets = ["heart"] if args.quick else args.datasets
    repeats, n_folds = (1, 3) if args.quick else (3, 10)
    splits = RepeatedStratifiedKFold(
        n_splits=n_folds, n_repeats=repeats, random_state=0
    )
    lines = [
        "| data | N | p | estimator | accuracy % | vs LogisticRegression() "
        "(points ± SE) | K chosen | median fit s | warnings (folds) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    with blas_limit(args.blas_threads):
        blas = blas_info()  # as the fits ran
        for name in datasets:
            progress(f"[{name}] {repeats} x {n_folds} folds")
            lines += rows(name, run_dataset(name, args.data_dir, splits, args.jobs))
    write_table_report(
        args,
        "defaults",
        "Default settings: PolyhedralClassifier() and LogisticRegression()",
        f"Held-out accuracy on the same {repeats} x {n_folds} stratified folds "
        "(seed 0); every estimator at its defaults on the same one-hot features.",
        "\n".join(lines),
        run.header("sklearn", blas=blas),
    )


if __name__ == "__main__":
    main()
