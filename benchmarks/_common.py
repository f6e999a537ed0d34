"""What every benchmark shares: its options, the UCI data and the provenance of
its report.

Options: ``--output`` (the results folder, default ``benchmarks/results``),
``--name`` (the file stem), ``--quick``, and where a benchmark needs them
``--data-dir`` (default ``../shared/data`` beside the project root), ``--jobs``
and ``--blas-threads``.

Provenance (:class:`Run`): the date and run time, the command as
``python -m benchmarks.<name> <args>``, the plumestats version and git commit
(and whether the tree was clean), the versions of python, numpy, scipy,
statsmodels and pandas, the BLAS library and its threads, the thread variables
and the load average. Never a path: an absolute path in the arguments is
written relative to the project (or as ``<elsewhere>/NAME``), and neither the
interpreter nor ``PYTHONPATH`` is recorded, so that reports can be committed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
import statsmodels

import plumestats
from plumestats.datasets import load as load_dataset

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

# The UCI sets as the benchmarks model them. Columns a model cannot use: a02 is
# constant on ionosphere; adult's education_num is an exact function of
# education. Heart's category codes are numbers that mean levels.
DROPPED = {"ionosphere": ("a02",), "adult": ("education_num",)}
CATEGORICAL = {
    "heart": ("chest_pain_type", "rest_elec_card_graph", "peak_exercise_slope", "thal")
}
UCI_DATASETS = ("ionosphere", "heart", "ilpd", "pima", "adult")


# ------------------------------------------------------------------- options
def add_options(
    parser: argparse.ArgumentParser,
    *,
    quick: str,
    data: bool = False,
    jobs: bool = False,
    blas_threads: int | bool | None = False,
) -> None:
    """Add the shared options: ``--output``, ``--name`` and ``--quick``
    (described by ``quick``); with ``data``, ``--data-dir``; with ``jobs``,
    ``--jobs``; unless ``blas_threads`` is False, ``--blas-threads`` with that
    default (None: BLAS's own choice)."""
    parser.add_argument("--quick", action="store_true", help=f"smoke test: {quick}")
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS_DIR,
        help="folder for the report (default benchmarks/results)",
    )
    parser.add_argument(
        "--name", help="file name stem (default: the benchmark's; _quick added)"
    )
    if data:
        parser.add_argument(
            "--data-dir",
            type=Path,
            default=DEFAULT_DATA_DIR,
            help="folder with the UCI CSVs (default ../shared/data beside the "
            "project root)",
        )
    if jobs:
        parser.add_argument(
            "--jobs", type=int, default=1, help="worker processes (default 1)"
        )
    if blas_threads is not False:
        parser.add_argument(
            "--blas-threads",
            type=int,
            default=blas_threads,
            help=f"BLAS threads (threadpoolctl; default {blas_threads or 'BLAS own'})",
        )


def stem(args: argparse.Namespace, default: str) -> str:
    """The file stem of this run: ``--name``, else ``default`` (``_quick``
    added under ``--quick``, so that a smoke run never overwrites a report)."""
    return args.name or (f"{default}_quick" if args.quick else default)


# ---------------------------------------------------------------------- data
def load_uci(name: str, data_dir: Path) -> tuple[pd.DataFrame, str]:
    """The frame of UCI set ``name`` (``plumestats.datasets.load`` from
    ``data_dir``, never downloaded here) and a formula with every usable column
    (strings and heart's category codes through ``C()``)."""
    try:
        frame = load_dataset(name, data_home=data_dir, download_if_missing=False)
    except FileNotFoundError as exc:
        raise SystemExit(f"{exc}\n(pass --data-dir DIR)") from exc
    outcome, features = frame.columns[-1], uci_features(name, frame)
    terms = [
        f"C({c})" if c in categorical_columns(name, features) else c
        for c in features.columns
    ]
    return frame, f"{outcome} ~ " + " + ".join(terms)


def uci_features(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The feature columns of a UCI frame: all but the outcome (the last
    column) and the ``DROPPED`` ones."""
    return frame.drop(columns=[frame.columns[-1], *DROPPED.get(name, ())])


def categorical_columns(name: str, features: pd.DataFrame) -> list[str]:
    """The columns to encode as levels: strings and ``CATEGORICAL`` codes."""
    coded = CATEGORICAL.get(name, ())
    return [
        c
        for c in features.columns
        if c in coded or not pd.api.types.is_numeric_dtype(features[c])
    ]


# ---------------------------------------------------------------- provenance
def path_free(argument: str) -> str:
    """``argument`` with an absolute path made relative to the project
    (``../`` for a sibling folder such as ``../shared/data``), or
    ``<elsewhere>/NAME`` when it lies elsewhere."""
    option, equals, value = argument.rpartition("=")
    if not os.path.isabs(value):
        return argument
    # the path as written first (a ../shared that is a symbolic link stays
    # ../shared), then with the links resolved
    for path in (Path(os.path.normpath(value)), Path(value).resolve()):
        for base, prefix in ((REPO_ROOT, ""), (REPO_ROOT.parent, "../")):
            with contextlib.suppress(ValueError):
                return f"{option}{equals}{prefix}{path.relative_to(base).as_posix()}"
    return f"{option}{equals}<elsewhere>/{Path(value).name}"


def command_line(module: str, argv: list[str]) -> str:
    """``python -m benchmarks.<module> <argv>``, paths made path-free."""
    return shlex.join(["python", "-m", f"benchmarks.{module}", *map(path_free, argv)])


def git_state() -> str:
    """plumestats' version, and the commit of this checkout with whether its
    tracked files were clean."""
    version = f"plumestats {plumestats.__version__}"
    if Path(plumestats.__file__).resolve().parents[1] != REPO_ROOT:
        return f"{version} (imported from outside this checkout)"
    git = ["git", "-C", str(REPO_ROOT)]
    try:
        commit = _output([*git, "rev-parse", "--short", "HEAD"]).strip()
        changed = _output([*git, "status", "--porcelain", "--untracked-files=no"])
    except (OSError, subprocess.CalledProcessError):
        return f"{version} (not a git checkout)"
    return f"{version}, git {commit} ({'uncommitted changes' if changed else 'clean'})"


def _output(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def versions(*extra: str) -> str:
    """Python and the core libraries, then ``extra`` module names (if found)."""
    found = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"scipy {scipy.__version__}",
        f"statsmodels {statsmodels.__version__}",
        f"pandas {pd.__version__}",
    ]
    for name in extra:
        try:
            module = __import__(name)
        except ImportError:
            continue
        found.append(f"{name} {getattr(module, '__version__', '?')}")
    return ", ".join(found)


def blas_info() -> str:
    """The BLAS libraries and their threads now (threadpoolctl), or numpy's
    build configuration without it."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return f"{_numpy_blas()} (threads unknown: no threadpoolctl)"
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    described = [
        f"{p.get('internal_api')} {p.get('version')} (threads: {p.get('num_threads')})"
        for p in pools
    ]
    return ", ".join(described) or "no BLAS pool found"


def _numpy_blas() -> str:
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (TypeError, KeyError):  # numpy < 1.26 prints only
        return "BLAS of numpy's build"
    return f"{config.get('name')} {config.get('version')}"


def thread_settings() -> str:
    """The cores and the thread variables of the environment."""
    values = ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in THREAD_VARIABLES)
    return f"os.cpu_count() {os.cpu_count()}; {values}"


def load_average() -> str:
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except (OSError, AttributeError):  # not on every platform
        return "n/a"


@dataclass
class Run:
    """The provenance of one benchmark run, recorded at its start."""

    module: str
    argv: list[str]
    began: datetime = field(
        default_factory=lambda: datetime.now(timezone.utc).astimezone()
    )
    package: str = field(default_factory=git_state)
    load_start: str = field(default_factory=load_average)

    @classmethod
    def start(cls, module: str, argv: list[str] | None) -> Run:
        """The run of ``benchmarks.<module>`` with ``argv`` (default: the
        command line's); reports its state on standard error."""
        run = cls(module, list(sys.argv[1:] if argv is None else argv))
        progress(f"{run.package}; load average {run.load_start}")
        return run

    @property
    def minutes(self) -> float:
        return (datetime.now(timezone.utc) - self.began).total_seconds() / 60

    def header(self, *extra_versions: str, blas: str | None = None) -> list[str]:
        """The provenance bullets at the end of the run (``blas``: the BLAS
        line measured inside a thread limit, else BLAS now)."""
        return [
            f"- date: {self.began.isoformat(timespec='seconds')}; run time "
            f"{self.minutes:.1f} min",
            f"- command: `{command_line(self.module, self.argv)}`",
            f"- {self.package} (at start)",
            f"- {versions(*extra_versions)}",
            f"- platform: {platform.platform()} ({platform.machine()})",
            f"- BLAS: {blas or blas_info()}",
            f"- threads: {thread_settings()}",
            f"- load average (1/5/15 min) at start {self.load_start}, at end "
            f"{load_average()}",
        ]


# --------------------------------------------------------------------- misc
def blas_limit(threads: int | None) -> contextlib.AbstractContextManager:
    """A context limiting the BLAS thread pools (threadpoolctl), or doing
    nothing when ``threads`` is None."""
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def progress(message: str) -> None:
    """Progress on standard error (standard output carries the results)."""
    print(message, file=sys.stderr, flush=True)


def write_report(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (its folder made if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    progress(f"written: {path}")
    return path


def write_table_report(
    args: argparse.Namespace, name: str, title: str, intro: str, table: str, header
) -> Path:
    """Print ``table`` and write the report ``<output>/<stem>.md``: the title,
    the intro paragraph, the table and the provenance ``header`` lines."""
    print(table)
    text = "\n".join([f"# {title}", "", intro, "", table, "", *header])
    return write_report(Path(args.output) / f"{stem(args, name)}.md", text)
