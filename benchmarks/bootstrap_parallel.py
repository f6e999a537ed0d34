"""Parallel bootstrap: ``results.bootstrap(n_jobs=...)`` against ``n_jobs=1``.

What it measures
    The wall-clock time of ``results.bootstrap(n_boot, random_state=0,
    n_jobs=n)`` for each ``n`` of ``--jobs`` (default 1 and 2), on one fit:
    by default a simulated polyhedron (d = 5, K = 3, 4000 rows, 5% label
    noise), or ``--dataset pima`` (K = 2 on the UCI Pima data, read from
    ``--data-dir``). The speed-up is ``n_jobs=1``'s median over each
    setting's median, measured in the same run.

How
    The fit is made once. The first parallel call starts joblib's worker
    processes (each imports plumestats): it is timed on its own and reported
    as "first call". Then every setting is timed ``--repeats`` times,
    interleaved (the order alternates between repeats) so that machine noise
    hits all of them; the table reports the median, minimum and maximum, and
    the speed-up both as the ratio of the medians and as the median of the
    ratios within a repeat (whose two calls ran back to back). The
    replicates of every setting are checked to equal ``n_jobs=1``'s (same
    seeds per replicate whatever ``n_jobs``). The report records the git
    state of the imported plumestats, the versions, the BLAS threads and the
    load average at start and end: the speed-up needs idle cores, so a busy
    machine shows less of it.

Usage
    python -m benchmarks.bootstrap_parallel                  # 200 replicates
    python -m benchmarks.bootstrap_parallel --jobs 1 2 -1    # also all cores
    python -m benchmarks.bootstrap_parallel --quick          # smoke test

Needs the ``parallel`` extra (joblib). The Markdown table is printed and
written to ``bootstrap_parallel.md`` in ``--output`` (default
``benchmarks/results``; ``--quick`` writes ``bootstrap_parallel_quick.md``, so
it never overwrites a full run).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field

import joblib
import numpy as np

import plumestats.api as ps

from ._common import (
    Run,
    add_options,
    blas_info,
    blas_limit,
    load_uci,
    progress,
    stem,
    write_report,
)


@dataclass
class Setting:
    """One ``n_jobs`` value and its timings."""

    n_jobs: int
    seconds: list[float] = field(default_factory=list)
    first_call: float | None = None
    params: np.ndarray | None = None  # the replicates (every call must agree)
    same_replicates: bool = True  # as n_jobs=1's, in every call

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def make_fit(args: argparse.Namespace):
    """The fit to bootstrap, and a one-line description of it."""
    if args.dataset == "pima":
        data, formula = load_uci("pima", args.data_dir)
        res = ps.plume(formula, data, k=2).fit(reseat=0)  # as in the canonical run
        return res, f"pima, `{formula}`, K = 2, gamma = 1 ({len(data)} rows)"
    nobs = 600 if args.quick else 4000
    data, _ = ps.simulate_polyhedron(nobs, d=5, k=3, noise=0.05, random_state=args.seed)
    formula = "y ~ x1 + x2 + x3 + x4 + x5"
    res = ps.plume(formula, data, k=3).fit(reseat=0)  # as in the canonical run
    described = (
        f"simulated polyhedron (`simulate_polyhedron({nobs}, d=5, k=3, "
        f"noise=0.05, random_state={args.seed})`), `{formula}`, K = 3, gamma = 1"
    )
    return res, described


def timed(res, n_boot: int, n_jobs: int):
    start = time.perf_counter()
    boot = res.bootstrap(n_boot, random_state=0, n_jobs=n_jobs)
    return time.perf_counter() - start, boot.params.to_numpy()


def measure(args: argparse.Namespace) -> tuple[list[Setting], str]:
    res, described = make_fit(args)
    progress(f"fit: {described}")
    settings = [Setting(n) for n in args.jobs]
    for setting in settings:
        if setting.n_jobs != 1:  # starts the workers (and imports in them)
            setting.first_call, setting.params = timed(res, args.n_boot, setting.n_jobs)
            progress(f"n_jobs={setting.n_jobs}: first call {setting.first_call:.2f} s")
    for repeat in range(args.repeats):
        order = settings if repeat % 2 == 0 else settings[::-1]
        for setting in order:
            seconds, params = timed(res, args.n_boot, setting.n_jobs)
            setting.seconds.append(seconds)
            if setting.params is None:
                setting.params = params
            setting.same_replicates &= np.array_equal(params, setting.params)
            progress(
                f"repeat {repeat + 1}/{args.repeats}, n_jobs={setting.n_jobs}: "
                f"{seconds:.2f} s"
            )
    serial = settings[0].params
    for setting in settings:
        setting.same_replicates &= np.array_equal(setting.params, serial)
    return settings, described


def table(settings: list[Setting]) -> str:
    serial = settings[0]  # n_jobs=1
    lines = [
        "| n_jobs | workers | median s | min s | max s | speed-up (medians) "
        "| speed-up (median of paired repeats) | first call s "
        "| same replicates as n_jobs=1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in settings:
        workers = joblib.effective_n_jobs(s.n_jobs)  # the rule n_jobs follows
        first = "-" if s.first_call is None else f"{s.first_call:.2f}"
        # the two calls of one repeat ran back to back, under the same load
        paired = statistics.median(
            one / this for one, this in zip(serial.seconds, s.seconds, strict=True)
        )
        lines.append(
            f"| {s.n_jobs} | {workers} | {s.median:.2f} | {min(s.seconds):.2f} "
            f"| {max(s.seconds):.2f} | {serial.median / s.median:.2f} "
            f"| {paired:.2f} | {first} "
            f"| {'yes' if s.same_replicates else '**no**'} |"
        )
    return "\n".join(lines)


def report(args, settings, described: str, run: Run, blas: str) -> str:
    lines = [
        "# Parallel bootstrap: `bootstrap(n_jobs=n)` against `n_jobs=1`",
        "",
        *run.header("joblib", blas=f"{blas} (n_jobs=1 runs here)"),
        f"- joblib.cpu_count(): {joblib.cpu_count()}",
        f"- fit: {described}",
        f"- {args.n_boot} replicates per call, `random_state=0`; {args.repeats} "
        "timed calls per setting, interleaved, after the first call of each "
        "parallel setting (which starts joblib's loky workers and is reported "
        "apart); wall-clock time of `results.bootstrap(...)`",
        "- workers: joblib's loky processes, BLAS limited to "
        "`cpu_count // n_jobs` threads each (joblib's default)",
        "",
        table(settings),
        "",
    ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset",
        choices=("simulated", "pima"),
        default="simulated",
        help="the fit to bootstrap (default: a simulated polyhedron, K = 3)",
    )
    parser.add_argument("--n-boot", type=int, default=None, help="default 200")
    parser.add_argument("--repeats", type=int, default=None, help="default 5")
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1, 2], help="n_jobs values (1, 2)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the data")
    add_options(
        parser, quick="600 rows, 8 replicates, one repeat", data=True, blas_threads=None
    )
    args = parser.parse_args(argv)
    if args.n_boot is None:
        args.n_boot = 8 if args.quick else 200
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5
    if args.n_boot < 2 or args.repeats < 1:
        parser.error("--n-boot must be at least 2 and --repeats at least 1")
    # n_jobs=1 first: the reference of the speed-up and of the replicates
    args.jobs = [1, *dict.fromkeys(j for j in args.jobs if j != 1)]
    if 0 in args.jobs:
        parser.error("--jobs: n_jobs=0 runs nothing")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run.start("bootstrap_parallel", argv)
    with blas_limit(args.blas_threads):
        settings, described = measure(args)
        blas = blas_info()  # inside the limit: the threads n_jobs=1 used
    text = report(args, settings, described, run, blas)
    print(text)
    write_report(args.output / f"{stem(args, 'bootstrap_parallel')}.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
