"""Fit-speed benchmark: PLUME (K=2, gamma=1) against statsmodels' Logit.

What it measures
    The wall-clock time of ``.fit()`` only, for ``PolyhedralMixtureLogit`` with
    K=2, gamma=1 and default fit settings, and for ``statsmodels`` ``Logit`` with
    its default settings, on the Pima and Adult data of the PLUME paper.

How
    Each dataset is read by path from ``--data-dir`` (never copied into the
    project). The design is built once, through the PLUME formula (patsy, string
    columns one-hot encoded with ``C(...)``); Logit is fitted on exactly that
    design (``sm.Logit(model.endog, model.exog)``), so both fit the same columns.
    Model construction is timed once and reported separately. The two fits are
    timed ``--repeats`` times each, interleaved (and alternating which goes first)
    so that machine noise hits both; the table reports the median and the
    minimum. One untimed fit of each runs first to pay one-off costs. Warnings
    raised during the fits are caught, counted and reported in the ``notes``
    column rather than printed. For reference the table repeats the paper's
    fastest PLUME fit times (Pima 0.053 s, Adult 0.402 s; other hardware).

Usage
    python benchmarks/fit_speed.py               # full run, both datasets
    python benchmarks/fit_speed.py --quick       # smoke test: pima, 2 repeats

The Markdown table is printed and written, with the date, machine information
and the exact command, to ``benchmarks/results/fit_speed.md`` (the ``--quick``
run writes ``fit_speed_quick.md`` instead, so it never overwrites a full run).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shlex
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy
import statsmodels
import statsmodels.api as sm

from plumestats.model import PolyhedralMixtureLogit

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = BENCH_DIR.parent
DEFAULT_DATA_DIR = PROJECT_ROOT.parent / "shared" / "data"
RESULTS_DIR = BENCH_DIR / "results"
DEFAULT_REPEATS = 7
QUICK_REPEATS = 2


@dataclass(frozen=True)
class DatasetSpec:
    """One benchmark dataset: file, outcome, features and the paper's time."""

    name: str
    filename: str
    outcome: str
    numeric: tuple[str, ...]
    categorical: tuple[str, ...] = ()
    dropped: dict[str, str] = field(default_factory=dict)
    paper_seconds: float | None = None

    @property
    def formula(self) -> str:
        terms = [*self.numeric, *(f"C({col})" for col in self.categorical)]
        return f"{self.outcome} ~ " + " + ".join(terms)


DATASETS: dict[str, DatasetSpec] = {
    "pima": DatasetSpec(
        name="pima",
        filename="pima.csv",
        outcome="diabetes",
        numeric=(
            "pregnancies",
            "glucose",
            "blood_pressure",
            "skin_thickness",
            "insulin",
            "bmi",
            "pedigree",
            "age",
        ),
        paper_seconds=0.053,
    ),
    "adult": DatasetSpec(
        name="adult",
        filename="adult.csv",
        outcome="high_income",
        numeric=(
            "age",
            "fnlwgt",
            "capital_gain",
            "capital_loss",
            "hours_per_week",
        ),
        categorical=(
            "workclass",
            "education",
            "marital_status",
            "occupation",
            "relationship",
            "race",
            "sex",
            "native_country",
        ),
        dropped={"education_num": "exact function of education"},
        paper_seconds=0.402,
    ),
}


@dataclass
class FitTimes:
    """Timings and diagnostics of repeated fits of one estimator."""

    seconds: list[float] = field(default_factory=list)
    warnings: Counter[str] = field(default_factory=Counter)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)


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
def load_dataset(spec: DatasetSpec, data_dir: Path) -> tuple[pd.DataFrame, list[str]]:
    """Read the CSV by path and check the dropped columns are really redundant."""
    path = data_dir / spec.filename
    if not path.is_file():
        raise SystemExit(f"data file not found: {path} (see --data-dir)")
    data = pd.read_csv(path)
    notes = []
    for column, reason in spec.dropped.items():
        if column == "education_num":
            _check_function_of(data, column, "education")
        notes.append(f"`{column}` dropped ({reason})")
    return data, notes


def _check_function_of(data: pd.DataFrame, column: str, key: str) -> None:
    """Fail loudly if ``column`` is not determined by ``key`` (one value per level)."""
    if not (data.groupby(key)[column].nunique() == 1).all():
        raise ValueError(f"{column} is not an exact function of {key}")


def build_model(spec: DatasetSpec, data: pd.DataFrame) -> PolyhedralMixtureLogit:
    """PLUME K=2, gamma=1 through the formula (patsy builds the design once)."""
    return PolyhedralMixtureLogit.from_formula(spec.formula, data, k=2, gamma=1.0)


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
        "iterations": retvals["iterations"],
        "em": retvals["n_em_steps"],
        "newton": retvals["n_newton_steps"],
        "converged": bool(retvals["converged"]),
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


def record(times: FitTimes, fit: Callable[[], Any], summarise: Callable) -> None:
    """Time one fit and store its seconds, warnings and diagnostics."""
    seconds, res, caught = timed_fit(fit)
    times.seconds.append(seconds)
    times.warnings.update(caught)
    info = summarise(res)
    if times.info and info["iterations"] != times.info["iterations"]:
        info["iterations"] = f"{times.info['iterations']}/{info['iterations']}"
    times.info = info


def benchmark_dataset(
    spec: DatasetSpec, data_dir: Path, repeats: int, warmup: bool
) -> DatasetResult:
    """Build the design once, then time both fits ``repeats`` times, interleaved."""
    data, data_notes = load_dataset(spec, data_dir)
    start = time.perf_counter()
    model = build_model(spec, data)
    build_seconds = time.perf_counter() - start
    logit = sm.Logit(model.endog, model.exog)
    nobs, n_columns = model.exog.shape
    progress(f"[{spec.name}] N={nobs}, p={n_columns}, built in {build_seconds:.3f} s")

    def fit_plume() -> Any:
        return model.fit()

    def fit_logit() -> Any:
        return logit.fit(disp=0)

    if warmup:
        progress(f"[{spec.name}] warm-up fits (untimed)")
        timed_fit(fit_plume)
        timed_fit(fit_logit)
    plume_times, logit_times = FitTimes(), FitTimes()
    for rep in range(repeats):
        order = [("PLUME", plume_times, fit_plume, plume_info)]
        order.append(("Logit", logit_times, fit_logit, logit_info))
        for label, times, fit, summarise in order[:: 1 if rep % 2 == 0 else -1]:
            record(times, fit, summarise)
            progress(
                f"[{spec.name}] repeat {rep + 1}/{repeats} {label}: "
                f"{times.seconds[-1]:.4f} s"
            )
    return DatasetResult(
        spec, nobs, n_columns, build_seconds, plume_times, logit_times, data_notes
    )


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
        f"{pl.median / lo.median:.1f}",
        "-" if paper is None else f"{paper:.3f}",
        "; ".join(notes) or "-",
    ]


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


def machine_info() -> list[str]:
    info = [
        f"platform: {platform.platform()} ({platform.machine()})",
        f"processor: {platform.processor() or 'unknown'}; "
        f"os.cpu_count(): {os.cpu_count()}",
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, statsmodels {statsmodels.__version__}, "
        f"pandas {pd.__version__}",
    ]
    blas = blas_info()
    if blas:
        info.append(f"BLAS: {blas}")
    return info


def blas_info() -> str:
    """BLAS library and thread count, if threadpoolctl is available."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ""
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    return ", ".join(
        f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)"
        for p in pools
    )


def report(results: list[DatasetResult], repeats: int) -> str:
    """The Markdown document: context, table and method notes."""
    now = datetime.now(timezone.utc).astimezone()
    lines = [
        "# Fit speed: PLUME (K=2, gamma=1) vs statsmodels Logit",
        "",
        f"- date: {now.isoformat(timespec='seconds')}",
        f"- command: `{shlex.join(sys.orig_argv)}` (cwd `{Path.cwd()}`)",
        *(f"- {line}" for line in machine_info()),
        f"- repeats: {repeats} per estimator, interleaved; wall-clock time of "
        "`.fit()` only, default settings for both estimators; Logit fitted on "
        "the PLUME model's design matrix (same columns)",
        "- paper PLUME s: the PLUME paper's fastest fit time (other hardware), "
        "for reference only",
        "",
        markdown_table(results),
        "",
        build_times(results),
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help=f"folder with pima.csv and adult.csv (default: {DEFAULT_DATA_DIR})",
    )
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
        "--quick",
        action="store_true",
        help=f"smoke test: {QUICK_REPEATS} repeats, pima only",
    )
    parser.add_argument(
        "--no-warmup", action="store_true", help="skip the untimed warm-up fits"
    )
    parser.add_argument(
        "--output", type=Path, default=None, help="where to write the Markdown"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    if args.repeats is None:
        args.repeats = QUICK_REPEATS if quick else DEFAULT_REPEATS
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.datasets is None:
        args.datasets = ["pima"] if quick else ["pima", "adult"]
    if args.output is None:
        name = "fit_speed_quick.md" if quick else "fit_speed.md"
        args.output = RESULTS_DIR / name
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = [
        benchmark_dataset(
            DATASETS[name], args.data_dir, args.repeats, warmup=not args.no_warmup
        )
        for name in args.datasets
    ]
    text = report(results, args.repeats)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    progress(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
