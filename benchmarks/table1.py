"""Table 1 of the PLUME paper, reproduced with nested cross-validation.

What it measures
    Test accuracy of PLUME (``PolyhedralMixtureLogit``, with each of the three
    M-step solvers), SPLA1 (``HardPolyhedralLogit``), statsmodels' ``Logit``, an
    RBF support vector machine and a decision tree (CART) on the five UCI datasets
    of the paper, by repeated stratified 10-fold cross-validation, every
    hyper-parameter chosen by an inner cross-validation on the training fold; the
    wall time of the final fit at the chosen setting; and, in a separate timing
    pass, the fit time of PLUME at K = 2 against ``Logit`` on the same design,
    which is what the paper's fit times compare with.

How
    Each outer training fold gets its own design (``_table1_design.FoldDesign``:
    median imputation, one-hot encoding with a reference level, standardisation,
    constant and duplicated columns dropped), fitted on that fold only and used
    by every method; the inner folds get theirs the same way. The grids, the
    selection rule and the subsampling of adult are constants of
    ``_table1_options.py`` (with the reasons for each), printed in the report;
    the models and the inner selection are in ``_table1_fits.py``, the report in
    ``_table1_report.py``. PLUME's three M-steps share one selection, made
    with the Newton M-step: the M-step changes the path of the algorithm, not
    the estimator it targets. Warnings raised by the fits are caught and
    counted, never printed.

Usage
    python -m benchmarks.table1 --quick                      # smoke test, < 1 min
    python -m benchmarks.table1 --datasets pima --repeats 1  # one dataset
    python -m benchmarks.table1 --jobs 2                     # everything (2 h)
    python -m benchmarks.table1 --warm-start none --em-tol 1e-3  # the cold protocol
    python -m benchmarks.table1 --inner-repeats 1            # half the selection cost

Writes ``table1.md``, ``table1.csv`` (one row per method and outer fold),
``table1_summary.csv``, ``table1_timing.csv`` and ``table1.png`` to ``--output``
(``table1_quick.*`` with ``--quick``, so that a smoke test never overwrites a
full run; ``--name`` sets another stem, e.g. ``--name table1_adult``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split
from threadpoolctl import threadpool_limits

from ._common import Run, progress
from ._table1_design import FoldDesign, features_and_outcome
from ._table1_fits import (
    Attempt,
    FitContext,
    Grids,
    PolySetting,
    Selection,
    Setting,
    Split,
    attempt,
    fit_family,
    select,
)
from ._table1_fits import accuracy as accuracy_score
from ._table1_options import (
    INNER_REPEAT_SEED_STRIDE,
    METHOD_FAMILY,
    METHODS,
    SELECTION_MSTEP,
)
from ._table1_options import parse_args as parse_options
from ._table1_timing import TimingRow, time_estimators, timing_estimators


@dataclass(frozen=True)
class RunConfig:
    """Everything a worker needs to run one outer fold."""

    data_dir: Path
    methods: tuple[str, ...]
    grids: Grids
    folds: int
    inner_folds: int
    inner_repeats: int
    select: str
    rule: str
    n_init: int
    inner_max_rows: int
    svm_max_rows: int
    warm_start: str | None
    seed: int
    em_tol: float
    em_overrelax: float

    @property
    def families(self) -> list[str]:
        """The model families to fit, in the order of ``methods``."""
        return list(dict.fromkeys(METHOD_FAMILY[m][0] for m in self.methods))


@dataclass(frozen=True)
class FoldTask:
    """One outer fold of one repeat of one dataset."""

    dataset: str
    repeat: int
    fold: int
    repeats: int
    config: RunConfig


# ------------------------------------------------------------------ one fold
@cache
def dataset(name: str, data_dir: Path) -> tuple[Any, np.ndarray, list[str]]:
    """Features, outcome and categorical columns (read once per process)."""
    return features_and_outcome(name, data_dir)


def outer_split(
    y: np.ndarray, folds: int, repeat: int, fold: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of fold ``fold`` of repeat ``repeat`` (stratified, shuffled by
    ``seed + repeat``)."""
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed + repeat)
    return list(splitter.split(np.zeros(len(y)), y))[fold]


def stratified_subsample(
    rows: np.ndarray, y: np.ndarray, max_rows: int, seed: int
) -> np.ndarray:
    """At most ``max_rows`` of ``rows``, stratified on ``y[rows]``."""
    if len(rows) <= max_rows:
        return rows
    sample, _ = train_test_split(
        rows, train_size=max_rows, stratify=y[rows], random_state=seed
    )
    return np.sort(sample)


def make_split(
    features: Any,
    y: np.ndarray,
    categorical: list[str],
    train: np.ndarray,
    test: np.ndarray,
) -> tuple[Split, FoldDesign]:
    """The designs of ``train`` and ``test``, preprocessing fitted on ``train``."""
    design = FoldDesign.fit(features.iloc[train], categorical)
    split = Split(
        design.transform(features.iloc[train]),
        y[train],
        design.transform(features.iloc[test]),
        y[test],
        test,
    )
    return split, design


def inner_splits(
    features: Any,
    y: np.ndarray,
    categorical: list[str],
    rows: np.ndarray,
    task: FoldTask,
) -> list[Split]:
    """Stratified inner folds of ``rows``, each with its own design; with
    ``inner_repeats`` R > 1, R cross-validations with different shuffles (the
    first is the one of R = 1), whose scores ``select`` averages row by row."""
    splits = []
    for inner_repeat in range(task.config.inner_repeats):
        splitter = StratifiedKFold(
            task.config.inner_folds,
            shuffle=True,
            random_state=inner_seed(
                task.config.seed, task.repeat, task.fold, inner_repeat
            ),
        )
        splits += [
            make_split(features, y, categorical, rows[train], rows[test])[0]
            for train, test in splitter.split(np.zeros(len(rows)), y[rows])
        ]
    return splits


def fold_seed(task: FoldTask) -> int:
    """Seed of the subsamples of this fold."""
    return inner_seed(task.config.seed, task.repeat, task.fold)


def inner_seed(seed: int, repeat: int, fold: int, inner_repeat: int = 0) -> int:
    """Shuffle of the ``inner_repeat``-th inner cross-validation of outer fold
    ``fold`` of ``repeat`` (the first is also the seed of the fold's
    subsamples)."""
    return seed + 1000 * repeat + fold + INNER_REPEAT_SEED_STRIDE * inner_repeat


def run_fold(task: FoldTask) -> list[dict[str, Any]]:
    """Select, refit and score every method on one outer fold; one record each."""
    config = task.config
    features, y, categorical = dataset(task.dataset, config.data_dir)
    train, test = outer_split(y, config.folds, task.repeat, task.fold, config.seed)
    outer, design = make_split(features, y, categorical, train, test)
    inner_rows = stratified_subsample(train, y, config.inner_max_rows, fold_seed(task))
    splits = inner_splits(features, y, categorical, inner_rows, task)
    svm_rows = np.searchsorted(
        train, stratified_subsample(train, y, config.svm_max_rows, fold_seed(task))
    )
    context = FitContext(
        mstep=SELECTION_MSTEP,
        seed=config.seed,
        n_init=config.n_init,
        em_tol=config.em_tol,
        em_overrelax=config.em_overrelax,
    )
    selections = {
        family: select(
            family,
            splits,
            config.grids,
            config.select,
            context,
            config.warm_start,
            config.rule,
        )
        for family in config.families
        if family != "logit"
    }
    base = {
        "dataset": task.dataset,
        "repeat": task.repeat,
        "fold": task.fold,
        "n_train": len(train),
        "n_test": len(test),
        "n_inner": len(inner_rows),
        "n_columns": len(design.names),
    }
    records = []
    for method in config.methods:
        family, mstep = METHOD_FAMILY[method]
        rows = svm_rows if family == "svm" else np.arange(len(train))
        selection = selections.get(family)
        outcome = final_fit(family, mstep, selection, outer, rows, context)
        record = fold_record(outcome, selection, outer)
        records.append({**base, "method": method, "n_train": len(rows), **record})
    return records


def final_fit(
    family: str,
    mstep: str | None,
    selection: Selection | None,
    outer: Split,
    rows: np.ndarray,
    context: FitContext,
) -> Attempt:
    """Fit ``family`` at the selected setting on ``rows`` of the outer training
    fold, with M-step ``mstep``."""
    setting = selection.setting if selection else None
    return attempt(
        lambda: fit_family(
            family,
            outer.train[rows],
            outer.y_train[rows],
            setting,
            replace(context, mstep=mstep or SELECTION_MSTEP),
        )
    )


def fold_record(
    outcome: Attempt, selection: Selection | None, split: Split
) -> dict[str, Any]:
    """Accuracy, time, setting and diagnostics of one final fit."""
    fitted = outcome.fitted
    setting = selection.setting if selection else None
    return {
        "accuracy": accuracy_score(split.y_test, fitted.predict(split.test))
        if fitted
        else np.nan,
        "fit_seconds": fitted.seconds if fitted else np.nan,
        **setting_columns(setting),
        "iterations": fitted.iterations if fitted else np.nan,
        "converged": fitted.converged if fitted else None,
        "llf": fitted.llf if fitted else np.nan,
        "warnings": format_counts(outcome.warnings),
        "error": outcome.error or "",
        **selection_columns(selection),
    }


def selection_columns(selection: Selection | None) -> dict[str, Any]:
    """Score, cost, warnings and failures of the inner selection."""
    if selection is None:
        return {
            "select_score": np.nan,
            "select_seconds": 0.0,
            "select_warnings": "",
            "select_failures": 0,
            "select_slowest": "",
            "select_slowest_seconds": np.nan,
        }
    return {
        "select_score": selection.score,
        "select_seconds": selection.seconds,
        "select_warnings": format_counts(selection.warnings),
        "select_failures": selection.failures,
        "select_slowest": selection.slowest[0],
        "select_slowest_seconds": selection.slowest[1],
    }


def setting_columns(setting: Setting | None) -> dict[str, Any]:
    """The tidy columns of a setting (``k`` is 1 for Logit, empty for SVM/CART)."""
    if isinstance(setting, PolySetting):
        return {
            "k": setting.k,
            "gamma": setting.gamma,
            "alpha": setting.alpha,
            "inside": setting.inside,
            "setting": setting.describe(),
        }
    if setting is None:  # Logit: K = 1, unpenalised
        return {"k": 1, "gamma": None, "alpha": 0.0, "inside": None, "setting": ""}
    return {
        "k": None,
        "gamma": None,
        "alpha": None,
        "inside": None,
        "setting": setting.describe(),
    }


def format_counts(counts: Counter[str]) -> str:
    """``Name:count`` pairs, ``;``-separated, most frequent first."""
    return ";".join(f"{name}:{n}" for name, n in counts.most_common())


# ------------------------------------------------------------------ running
def make_tasks(
    datasets: list[str], repeats: dict[str, int], config: RunConfig
) -> list[FoldTask]:
    """Every outer fold, dataset by dataset, repeat by repeat."""
    return [
        FoldTask(name, repeat, fold, repeats[name], config)
        for name in datasets
        for repeat in range(repeats[name])
        for fold in range(config.folds)
    ]


def init_worker(blas_threads: int) -> None:
    """Limit a worker's BLAS pool (kept for the life of the process)."""
    global _WORKER_LIMITS
    _WORKER_LIMITS = threadpool_limits(limits=blas_threads, user_api="blas")


_WORKER_LIMITS = None


def run_tasks(
    tasks: list[FoldTask], jobs: int, blas_threads: int
) -> Iterator[tuple[FoldTask, list[dict[str, Any]]]]:
    """Run the outer folds in this process (``jobs=1``) or in a process pool;
    yield each fold's records as it finishes."""
    if jobs == 1:
        for task in tasks:
            yield task, run_fold(task)
        return
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=init_worker, initargs=(blas_threads,)
    ) as pool:
        futures = {pool.submit(run_fold, task): task for task in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()


def fold_line(task: FoldTask, records: list[dict[str, Any]]) -> str:
    """One progress line per outer fold."""
    parts = []
    for r in records:
        k = f" K={r['k']}" if r["method"] != "logit" and r["k"] else ""
        if r["error"]:
            parts.append(f"{r['method']} FAILED ({r['error'][:60]})")
            continue
        parts.append(
            f"{r['method']}{k} acc={r['accuracy']:.3f} ({r['fit_seconds']:.2f} s)"
        )
    # the PLUME variants share one selection: count it once
    by_family = {METHOD_FAMILY[r["method"]][0]: r["select_seconds"] for r in records}
    select_seconds = sum(by_family.values())
    return (
        f"[{task.dataset}] repeat {task.repeat + 1}/{task.repeats} fold "
        f"{task.fold + 1}/{task.config.folds}: "
        + " | ".join(parts)
        + f" [selection {select_seconds:.1f} s]"
    )


def run_all(
    tasks: list[FoldTask], jobs: int, blas_threads: int
) -> list[dict[str, Any]]:
    """All outer folds, with a progress line per fold and an ETA every minute."""
    records: list[dict[str, Any]] = []
    start = last_eta = time.perf_counter()
    for done, (task, fold_records) in enumerate(
        run_tasks(tasks, jobs, blas_threads), 1
    ):
        records.extend(fold_records)
        progress(fold_line(task, fold_records))
        now = time.perf_counter()
        if now - last_eta > 60 or done == len(tasks):
            last_eta = now
            left = (now - start) / done * (len(tasks) - done)
            progress(
                f"... {done}/{len(tasks)} outer folds in "
                f"{format_duration(now - start)}; "
                f"about {format_duration(left)} left (naive: assumes the remaining "
                "folds cost the average so far)"
            )
    return records


def format_duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


# ------------------------------------------------------------------ timing pass
def timing_pass(
    datasets: list[str], records: list[dict[str, Any]], config: RunConfig, repeats: int
) -> list[TimingRow]:
    """The timing pass of every dataset, on its first outer training fold."""
    rows = []
    for name in datasets:
        features, y, categorical = dataset(name, config.data_dir)
        train, test = outer_split(y, config.folds, 0, 0, config.seed)
        split, _ = make_split(features, y, categorical, train, test)
        table = time_estimators(
            name,
            split,
            timing_estimators(records, name, config.seed, config.methods),
            repeats,
        )
        progress(
            f"[{name}] timing pass: "
            + ", ".join(f"{row.label} {row.median:.4f} s" for row in table)
        )
        rows.extend(table)
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``--help`` shows this module's docstring)."""
    return parse_options(argv, __doc__)


def make_config(args: argparse.Namespace) -> RunConfig:
    methods = tuple(m for m in METHODS if m in args.methods)
    return RunConfig(
        data_dir=args.data_dir,
        methods=methods,
        grids=args.grids,
        folds=args.folds,
        inner_folds=args.inner_folds,
        inner_repeats=args.inner_repeats,
        select=args.select,
        rule=args.rule,
        n_init=args.n_init,
        inner_max_rows=args.inner_max_rows,
        svm_max_rows=args.svm_max_rows,
        warm_start=args.warm_start,
        seed=args.seed,
        em_tol=args.em_tol,
        em_overrelax=args.em_overrelax,
    )


def main(argv: list[str] | None = None) -> int:
    from . import _table1_report as report

    args = parse_args(argv)
    run = Run.start("table1", argv)
    config = make_config(args)
    repeats = {
        name: args.adult_repeats if name == "adult" else args.repeats
        for name in args.datasets
    }
    context = report.RunContext(args, config, repeats, run)
    for name in args.datasets:
        dataset(name, args.data_dir)  # fail early if a file is missing
    tasks = make_tasks(args.datasets, repeats, config)
    progress(f"{len(tasks)} outer folds, {args.jobs} process(es)")
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        context.record_machine()
        records = run_all(tasks, args.jobs, args.blas_threads)
        timing = (
            []
            if args.no_timing
            else timing_pass(args.datasets, records, config, args.timing_repeats)
        )
    context.finish()
    paths = report.write_outputs(args.output, args.stem, records, timing, context)
    print(paths["md"].read_text(encoding="utf-8"))
    progress("written: " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
