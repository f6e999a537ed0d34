"""Size and power of the bootstrap likelihood-ratio test of K = 1 against K = 2.

What it measures
    ``compare_lr_test(one_face, two_faces, method="bootstrap")`` refers the LR
    statistic to its parametric-bootstrap distribution; the chi-square p-value
    it reports beside is not valid (under one face the second is not
    identified). For simulated data sets the table gives the share of data
    sets in which each p-value is at most 5% (the bootstrap's ``(1 + #) /
    (1 + B)`` then rejects with size 5% exactly, B = 99): under the null (the
    data drawn from one face, a logistic regression) that is the test's size,
    which should be 5%; under the alternative (two faces) its power.

How
    Each data set has N rows, x ~ N(0, I_d), and y from a PLUME model
    (``plumestats.datasets.simulate_plume``, gamma = 1) whose faces are those
    of the coverage study (``benchmarks.coverage.true_hyperplanes``:
    sharpness 2, unit normals 120 degrees apart, offset 0.5): one face under
    the null, two under the alternative. Both models are fitted with their
    defaults, then the test draws ``--draws`` outcome vectors from the
    one-face fit and refits both to each. The data sets run in parallel
    (``--jobs``), each one's draws in its process, one BLAS thread each. The
    Monte Carlo standard error of a rejection rate of 5% over 200 data sets
    is 1.5 points.

Usage
    python -m benchmarks.lr_bootstrap --jobs 2        # 200 data sets x 99 draws
    python -m benchmarks.lr_bootstrap --jobs 2 --power-n 200 100  # and power at
                                                      # smaller N (harder)
    python -m benchmarks.lr_bootstrap --quick         # smoke test

The Markdown table is printed and written, with the provenance of the run, to
``lr_bootstrap.md`` in ``--output``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from joblib import Parallel, delayed

import plumestats.api as ps

from ._common import (
    Run,
    add_options,
    blas_info,
    blas_limit,
    progress,
    write_table_report,
)
from .coverage import true_hyperplanes

LEVEL = 0.05
SHARPNESS = 2.0


def one_data_set(n: int, d: int, k_true: int, draws: int, seed: int) -> dict:
    """Both p-values of one simulated data set (BLAS limited to one thread)."""
    with blas_limit(1):
        rng = np.random.default_rng(seed)
        truth = true_hyperplanes(k_true, d, SHARPNESS)
        data = ps.simulate_plume(n, truth, 1.0, random_state=rng)
        formula = "y ~ " + " + ".join(f"x{j + 1}" for j in range(d))
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a data set's warnings are its own
            # the protocol of the recorded rejection rates: one start each
            one = ps.plume(formula, data, k=1).fit(reseat=0)
            two = ps.plume(formula, data, k=2).fit(random_state=rng, reseat=0)
            test = ps.compare_lr_test(
                one, two, method="bootstrap", n_boot=draws, random_state=rng
            )
        return {
            "chi2": test.pvalue,
            "bootstrap": test.bootstrap_pvalue,
            "failed": test.n_failed,
            "unsettled": test.n_unsettled,
            "seconds": time.perf_counter() - start,
        }


def run_setting(n, d, k_true, data_sets, draws, jobs, seed) -> dict:
    seeds = np.random.SeedSequence([seed, n, d, k_true]).generate_state(data_sets)
    found = Parallel(n_jobs=jobs)(
        delayed(one_data_set)(n, d, k_true, draws, int(s)) for s in seeds
    )
    chi2 = np.array([row["chi2"] for row in found])
    boot = np.array([row["bootstrap"] for row in found])
    return {
        # (1 + #)/(1 + B) <= level is the test of size level (99 draws: 5/100)
        "bootstrap": float(np.mean(boot <= LEVEL)),
        "chi2": float(np.mean(chi2 < LEVEL)),
        "failed": sum(row["failed"] for row in found) / (data_sets * draws),
        "unsettled": sum(row["unsettled"] for row in found) / (data_sets * draws),
        "seconds": statistics.median(row["seconds"] for row in found),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="rows per data set")
    parser.add_argument(
        "--power-n",
        type=int,
        nargs="*",
        default=[],
        metavar="N",
        help="also the power at these smaller N (the first --d): a harder "
        "alternative, fewer points to see the second face",
    )
    parser.add_argument("--d", type=int, nargs="+", default=[2, 5])
    parser.add_argument("--data-sets", type=int, default=200)
    parser.add_argument("--draws", type=int, default=99)
    parser.add_argument("--seed", type=int, default=2026)
    add_options(parser, quick="N = 200, d = 2, 4 data sets x 9 draws", jobs=True)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.d, args.data_sets, args.draws = 200, [2], 4, 9
    run = Run.start("lr_bootstrap", argv)
    with blas_limit(1):
        blas = blas_info()  # as each data set's fits run
    lines = [
        "| truth | d | N | data sets x draws | rejected at 5%: bootstrap | "
        "rejected at 5%: chi-square | draws left out | draws unsettled | "
        "median s per data set |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    settings = [
        (k_true, label, d, args.n)
        for k_true, label in ((1, "one face (size)"), (2, "two faces (power)"))
        for d in args.d
    ]
    settings += [(2, "two faces (power)", args.d[0], n) for n in args.power_n]
    for k_true, label, d, n in settings:
        progress(f"[{label}, d = {d}, N = {n}] {args.data_sets} x {args.draws}")
        found = run_setting(
            n, d, k_true, args.data_sets, args.draws, args.jobs, args.seed
        )
        lines.append(
            f"| {label} | {d} | {n} | {args.data_sets} x {args.draws} | "
            f"{100 * found['bootstrap']:.1f}% | {100 * found['chi2']:.1f}% | "
            f"{100 * found['failed']:.2f}% | {100 * found['unsettled']:.1f}% | "
            f"{found['seconds']:.2f} |"
        )
    write_table_report(
        args,
        "lr_bootstrap",
        "The bootstrap likelihood-ratio test of one face against two",
        f"Share of data sets whose p-value is at most {LEVEL:.0%} (bootstrap; "
        "below it, chi-square): under one true face the test's size (should be "
        f"5%), under two its power. gamma = 1, sharpness {SHARPNESS:g}; both "
        "models at their default fit.",
        "\n".join(lines),
        run.header(blas=blas),
    )


if __name__ == "__main__":
    main()
