"""Do ``get_prediction``'s intervals for P(y = 1 | x) cover the true probability?

What it measures
    Samples of ``--n`` rows are drawn from a known two-face PLUME
    (``simulate_plume`` with hyperplanes ``[1, 2, 0.5]`` and ``[1, -1.5, 1]``,
    gamma 1), PLUME is fitted to each by the default EM, and the 90% and 95%
    intervals of ``results.get_prediction(points)`` (delta method on the
    log-odds, mapped back) are checked against the true P at three points.
    With ``--reps`` samples the share that covers should be near the nominal
    level, within about 2 sqrt(level (1 - level) / reps).

Usage
    python benchmarks/prediction_coverage.py                  # about a minute
    python benchmarks/prediction_coverage.py --n 800 3000 --reps 1000
    python benchmarks/prediction_coverage.py --quick          # seconds, no file

Prints a Markdown table and writes it to ``--output`` (default
``benchmarks/results/prediction_coverage.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

import plumestats.api as ps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_speed import report_main

TITLE = "Coverage of get_prediction's intervals for P(y = 1 | x)"
RESULTS = Path(__file__).resolve().parent / "results" / "prediction_coverage.md"
WEIGHTS = np.array([[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]])
POINTS = pd.DataFrame({"x1": [0.0, 0.5, -0.8], "x2": [0.0, -0.5, 0.7]})
LEVELS = (0.90, 0.95)


def true_probabilities() -> np.ndarray:
    """P(y = 1 | x) of the true model at ``POINTS``, written out."""
    design = np.column_stack([np.ones(len(POINTS)), POINTS])
    scores = design @ WEIGHTS.T
    gate = np.exp(-scores) / np.exp(-scores).sum(axis=1, keepdims=True)
    return (gate * expit(scores)).sum(axis=1)


def coverage(nobs: int, reps: int) -> dict[float, np.ndarray]:
    """Share of ``reps`` samples whose interval covers the truth, per level
    and point."""
    truth = true_probabilities()
    hits = {level: np.zeros(len(POINTS)) for level in LEVELS}
    for seed in range(reps):
        data = ps.simulate_plume(nobs, WEIGHTS, random_state=seed)
        prediction = ps.plume("y ~ x1 + x2", data, k=2).fit().get_prediction(POINTS)
        for level in LEVELS:
            ci = prediction.conf_int(alpha=1 - level)
            hits[level] += (ci[:, 0] <= truth) & (truth <= ci[:, 1])
    return {level: hits[level] / reps for level in LEVELS}


def run(args: argparse.Namespace) -> list[str]:
    truth = true_probabilities()
    points = [
        f"({x1:g}, {x2:g}): P = {p:.3f}"
        for (x1, x2), p in zip(POINTS.values, truth, strict=True)
    ]
    header = "| N | level | " + " | ".join(points) + " |"
    lines = [header, "|" + "---|" * (2 + len(points))]
    print("\n".join(lines), flush=True)
    for nobs in args.n:
        for level, shares in coverage(nobs, args.reps).items():
            cells = " | ".join(f"{share:.3f}" for share in shares)
            lines.append(f"| {nobs} | {level:.2f} | {cells} |")
            print(lines[-1], flush=True)
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[800, 3000])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="seconds, no file")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.reps = [400], 20
    return args


def report_details(args: argparse.Namespace) -> list[str]:
    return [
        f"BLAS threads limited to {args.blas_threads} during the fits",
        f"model: two faces {WEIGHTS.tolist()} (Intercept, x1, x2), gamma 1, "
        f"x ~ N(0, I_2) (`simulate_plume`); {args.reps} samples per N, seeds "
        f"0..{args.reps - 1}; default fit; cells: share of samples whose "
        "interval contains the true P",
    ]


def main(argv: list[str] | None = None) -> int:
    return report_main(parse_args(argv), run, TITLE, report_details)


if __name__ == "__main__":
    raise SystemExit(main())
