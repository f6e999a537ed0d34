"""Fit-speed benchmark: PLUME (K=2, gamma=1) against statsmodels' Logit.

What it measures
    The wall-clock time of ``.fit()`` only, for ``PolyhedralMixtureLogit`` with
    K=2, gamma=1 and default fit settings from one start (``reseat=0``: the
    default's re-seating moves add 1.0 to 2.6 times, docs/benchmarks/maxima),
    and for ``statsmodels`` ``Logit`` with its default settings, on the Pima
    and Adult data of the PLUME paper.

How
    Each dataset is read by path from ``--data-dir`` (never copied into the
    project). The design is built once, through the PLUME formula (patsy, string
    columns one-hot encoded with ``C(...)``); Logit is fitted on exactly that
    design (``sm.Logit(model.endog, model.exog)``), so both fit the same columns.
    Model construction is timed once and reported separately. The two fits are
    timed ``--repeats`` times each, interleaved (and alternating which goes first)
    so that machine noise hits both; the table reports the median and the
    minimum. One untimed fit of each, on the first dataset, pays the one-off
    import and cache costs. Warnings raised during the fits are caught, counted
    and reported in the ``notes`` column rather than printed. For reference the
    table repeats the paper's fastest PLUME fit times (Pima 0.053 s, Adult
    0.402 s; other hardware). The report records the git state of the imported
    plumestats, the BLAS thread counts and the load average, since other work on
    the machine (and multithreaded BLAS competing with it) changes the timings.

Usage
    python -m benchmarks.fit_speed                    # both datasets, 7 repeats
    python -m benchmarks.fit_speed --quick            # smoke test: pima, 2 repeats
    python -m benchmarks.fit_speed --blas-threads 1   # on a busy machine
    python -m benchmarks.fit_speed --blas-threads 1 --also-default-threads
                                                      # + at BLAS's own threads

The Markdown table is printed and written, with the provenance of the run, to
``fit_speed.md`` in ``--output`` (default ``benchmarks/results``; the
``--quick`` run writes ``fit_speed_quick.md``, so it never overwrites a full
run).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import statsmodels.api as sm

import plumestats.api as ps

from ._common import (
    Run,
    add_options,
    blas_limit,
    load_uci,
    progress,
    stem,
    write_report,
)

DEFAULT_REPEATS = 7
QUICK_REPEATS = 2


@dataclass(frozen=True)
class DatasetSpec:
    """One benchmark dataset: its UCI name and the paper's time."""

    name: str
    paper_seconds: float | None = None


DATASETS: dict[str, DatasetSpec] = {
    "pima": DatasetSpec("pima", paper_seconds=0.053),
    "adult": DatasetSpec("adult", paper_seconds=0.402),
}
# the formulas drop these; check that they really are exact functions of another
REDUNDANT = {"adult": {"education_num": "education"}}


@dataclass
class FitTimes:
    """Timings and diagnostics of repeated fits of one estimator."""

    seconds: list[float] = field(default_factory=list)
    warnings: Counter[str] = field(default_factory=Counter)
    infos: list[dict[str, Any]] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def info(self) -> dict[str, Any]:
        """Diagnostics of the last fit."""
        return self.infos[-1]

    @property
    def deterministic(self) -> bool:
        """Whether every repeat took the same iterations to the same llf."""
        keys = {(i["iterations"], round(i["llf"], 6)) for i in self.infos}
        return len(keys) == 1


@dataclass(frozen=True)
class Estimator:
    """A fit to time, and how to summarise its result."""

    label: str
    fit: Callable[[], Any]
    summarise: Callable[[Any], dict[str, Any]]
    times: FitTimes = field(default_factory=FitTimes)


@dataclass
class DatasetResult:
    """Everything reported for one dataset."""

    spec: DatasetSpec
    nobs: int
    n_columns: int
    build_seconds: float
    plume: FitTimes
    logit: FitTimes
    data_notes: list[str]


# ----------------------------------------------------------------- data & models
def load_dataset(spec: DatasetSpec, data_dir: Path) -> tuple[pd.DataFrame, str, list]:
    """The data and formula (``plumestats.datasets``), the dropped columns
    checked to be really redundant."""
    data, formula = load_uci(spec.name, data_dir)
    notes = []
    for column, key in REDUNDANT.get(spec.name, {}).items():
        _check_function_of(data, column, key)
        notes.append(f"`{column}` dropped (exact function of `{key}`, checked)")
    return data, formula, notes


def _check_function_of(data: pd.DataFrame, column: str, key: str) -> None:
    """Fail loudly if ``column`` is not determined by ``key`` (one value per level)."""
    if not (data.groupby(key)[column].nunique() == 1).all():
        raise ValueError(f"{column} is not an exact function of {key}")


def build_model(formula: str, data: pd.DataFrame) -> ps.PolyhedralMixtureLogit:
    """PLUME K=2, gamma=1 through the formula (patsy builds the design once)."""
    return ps.plume(formula, data, k=2, gamma=1.0)


# ---------------------------------------------------------------------- timing
def timed_fit(fit: Callable[[], Any]) -> tuple[float, Any, list[str]]:
    """Run ``fit`` once; return seconds, its result and the warnings it raised."""
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        result = fit()
        elapsed = time.perf_counter() - start
    return elapsed, result, [w.category.__name__ for w in caught]


def plume_info(res: Any) -> dict[str, Any]:
    retvals = res.mle_retvals
    return {
        "iterations": res.n_iter,
        # the split into EM and Newton steps, where the fit reports it
        "em": retvals.get("n_em_steps", "?"),
        "newton": retvals.get("n_newton_steps", "?"),
        "converged": bool(res.converged),
        "llf": float(res.llf),
        "message": retvals["message"],
    }


def logit_info(res: Any) -> dict[str, Any]:
    retvals = res.mle_retvals
    return {
        "iterations": retvals["iterations"],
        "converged": bool(retvals["converged"]),
        "llf": float(res.llf),
    }


def record(estimator: Estimator) -> float:
    """Time one fit; store its seconds, warnings and diagnostics."""
    seconds, res, caught = timed_fit(estimator.fit)
    estimator.times.seconds.append(seconds)
    estimator.times.warnings.update(caught)
    estimator.times.infos.append(estimator.summarise(res))
    return seconds


def benchmark_dataset(
    spec: DatasetSpec, data_dir: Path, repeats: int, warmup: bool
) -> DatasetResult:
    """Build the design once, then time both fits ``repeats`` times, interleaved
    (the order alternates between repeats)."""
    data, formula, data_notes = load_dataset(spec, data_dir)
    start = time.perf_counter()
    model = build_model(formula, data)
    build_seconds = time.perf_counter() - start
    logit = sm.Logit(model.endog, model.exog)  # the same design matrix
    nobs, n_columns = model.exog.shape
    progress(f"[{spec.name}] N={nobs}, p={n_columns}, built in {build_seconds:.3f} s")
    # one start, as issue 29 measures it: the default's re-seating moves are
    # priced by benchmarks.maxima
    plume = Estimator("PLUME", lambda: model.fit(reseat=0), plume_info)
    logit_est = Estimator("Logit", lambda: logit.fit(disp=0), logit_info)
    if warmup:
        progress(f"[{spec.name}] warm-up fits (untimed)")
        timed_fit(plume.fit)
        timed_fit(logit_est.fit)
    for rep in range(repeats):
        pair = (plume, logit_est) if rep % 2 == 0 else (logit_est, plume)
        for estimator in pair:
            seconds = record(estimator)
            progress(
                f"[{spec.name}] repeat {rep + 1}/{repeats} {estimator.label}: "
                f"{seconds:.4f} s"
            )
    return DatasetResult(
        spec, nobs, n_columns, build_seconds, plume.times, logit_est.times, data_notes
    )


# ------------------------------------------------------------------- reporting
TABLE_HEADER = (
    "dataset",
    "N",
    "p",
    "PLUME median s",
    "PLUME min s",
    "PLUME iters (EM+Newton)",
    "PLUME conv.",
    "PLUME llf",
    "Logit median s",
    "Logit min s",
    "Logit iters",
    "Logit conv.",
    "Logit llf",
    "ratio PLUME/Logit (median)",
    "paper PLUME s",
    "notes",
)


def format_warnings(label: str, counts: Counter[str], repeats: int) -> list[str]:
    return [f"{label}: {name} in {n}/{repeats} fits" for name, n in counts.items()]


def table_row(result: DatasetResult) -> list[str]:
    pl, lo = result.plume, result.logit
    repeats = len(pl.seconds)
    notes = [
        *result.data_notes,
        *format_warnings("PLUME", pl.warnings, repeats),
        *format_warnings("Logit", lo.warnings, repeats),
    ]
    if not pl.info["converged"]:
        notes.append(f"PLUME stopped: {pl.info['message']}")
    for label, times in (("PLUME", pl), ("Logit", lo)):
        if not times.deterministic:
            notes.append(f"{label}: iterations/llf differ between repeats")
    paper = result.spec.paper_seconds
    return [
        result.spec.name,
        str(result.nobs),
        str(result.n_columns),
        f"{pl.median:.4f}",
        f"{pl.best:.4f}",
        f"{pl.info['iterations']} ({pl.info['em']}+{pl.info['newton']})",
        "yes" if pl.info["converged"] else "**no**",
        f"{pl.info['llf']:.3f}",
        f"{lo.median:.4f}",
        f"{lo.best:.4f}",
        str(lo.info["iterations"]),
        "yes" if lo.info["converged"] else "**no**",
        f"{lo.info['llf']:.3f}",
        _ratio(pl.median / lo.median),
        "-" if paper is None else f"{paper:.3f}",
        "; ".join(notes) or "-",
    ]


def _ratio(value: float) -> str:
    """A time ratio to one decimal, below 1 to two (issue 29's adult
    target, 0.35, needs the second)."""
    return f"{value:.2f}" if value < 1 else f"{value:.1f}"


def markdown_table(results: list[DatasetResult]) -> str:
    lines = [
        "| " + " | ".join(TABLE_HEADER) + " |",
        "|" + "---|" * len(TABLE_HEADER),
    ]
    lines += ["| " + " | ".join(table_row(r)) + " |" for r in results]
    return "\n".join(lines)


def build_times(results: list[DatasetResult]) -> str:
    parts = [f"{r.spec.name} {r.build_seconds:.3f} s" for r in results]
    return "Model construction (formula + design, timed once): " + ", ".join(parts)


def report(results: list[DatasetResult], args: argparse.Namespace, run: Run) -> str:
    """The Markdown document: provenance, table and method notes."""
    lines = [
        "# Fit speed: PLUME (K=2, gamma=1) vs statsmodels Logit",
        "",
        *run.header(),
        f"- repeats: {args.repeats} per estimator, interleaved; wall-clock time of "
        "`.fit()` only, default settings for both estimators, PLUME from one "
        "start (`reseat=0`); Logit fitted on "
        "the PLUME model's design matrix (same columns)",
        "- paper PLUME s: the PLUME paper's fastest fit time (other hardware), "
        "for reference only",
        "- PLUME iters: EM steps + Newton-Raphson steps; llf: log-likelihood at "
        "the returned parameters (same design, so comparable with Logit's)",
        "",
        markdown_table(results),
        "",
        build_times(results),
        "",
    ]
    return "\n".join(lines)


def default_threads_section(results: list[DatasetResult]) -> str:
    """The second table of ``--also-default-threads``: the same fits at the
    process's own BLAS threads, where Logit's products may share out over
    the cores and PLUME runs its fits at one thread (``plumestats._threads``)."""
    from threadpoolctl import threadpool_info

    threads = ", ".join(
        f"{info['internal_api']} {info['num_threads']}"
        for info in threadpool_info()
        if info["user_api"] == "blas"
    )
    setting = os.environ.get("PLUMESTATS_BLAS_THREADS", "unset (1)")
    return "\n".join(
        [
            "",
            "## At the default BLAS threads",
            "",
            f"The same fits again after the table above, outside its limit: BLAS "
            f"at the process's own threads ({threads}). PLUME's fits run at "
            f"PLUMESTATS_BLAS_THREADS threads ({setting}), Logit's at BLAS's.",
            "",
            markdown_table(results),
            "",
        ]
    )


# ------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help=f"timed fits per estimator (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=sorted(DATASETS),
        default=None,
        help="datasets to run (default: pima adult)",
    )
    parser.add_argument(
        "--no-warmup", action="store_true", help="skip the untimed warm-up fits"
    )
    parser.add_argument(
        "--also-default-threads",
        action="store_true",
        help="after the run, time both again at the process's own BLAS threads "
        "(a second table: what a user gets, PLUME limiting its fits itself)",
    )
    add_options(
        parser,
        quick=f"{QUICK_REPEATS} repeats, pima only",
        data=True,
        blas_threads=None,
    )
    args = parser.parse_args(argv)
    quick = args.quick
    if args.repeats is None:
        args.repeats = QUICK_REPEATS if quick else DEFAULT_REPEATS
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.datasets is None:
        args.datasets = ["pima"] if quick else ["pima", "adult"]
    return args


def run_all(args: argparse.Namespace) -> list[DatasetResult]:
    return [
        # one warm-up (on the first dataset) pays the one-off import/cache costs
        benchmark_dataset(
            DATASETS[name],
            args.data_dir,
            args.repeats,
            warmup=index == 0 and not args.no_warmup,
        )
        for index, name in enumerate(args.datasets)
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run.start("fit_speed", argv)  # before the run: files may change meanwhile
    with blas_limit(args.blas_threads):
        results = run_all(args)
        # inside the limit, so that the report shows the thread counts used
        text = report(results, args, run)
    if args.also_default_threads:
        text += default_threads_section(run_all(args))
    print(text)
    write_report(args.output / f"{stem(args, 'fit_speed')}.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
