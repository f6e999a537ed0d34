"""How close to the true polytope can 2000 points get? PLUME against an oracle.

What it measures
    On one setting of ``polyhedral.py`` (default the one PLUME misses: d = 10,
    K = 6, no label noise) and several seeds, the test-accuracy gap to the true
    polytope of two estimates:

    - **PLUME**, fitted as the suite fits it (true K, ``n_init=3`` k-means
      starts), at every gamma and alpha of the grid;
    - **an oracle** that is told which true face owns each training point
      (``argmin_k h_k'[1, x]``). Face k is then an ordinary logistic
      regression: every inside point is on its positive side and every outside
      point it owns on its negative side, and nothing else in the sample says
      anything about it. The oracle fits those K regressions (plumestats with
      K = 1, the same L2 penalty ``alpha``) and classifies by
      ``min_k w_k'[1, x] >= 0``.

    The oracle has information no learner has, and its alpha is also reported
    at its best *on the test set*. If even that misses the true polytope by
    more than a point, the miss belongs to the sample size, not to PLUME.

How
    ``polyhedral.make_split`` (the suite's simulation, split and test set) for
    seeds ``0..--seeds - 1``; test accuracy classifies PLUME by
    P(y=1|x) >= 0.5, as the suite does; gap = accuracy minus the true
    polytope's accuracy, in points. "best" rows take, per seed, the largest gap
    over the grid, which uses the test labels: an upper bound on what a
    selection on the training set could choose.

Usage
    python benchmarks/polyhedral_oracle.py                 # d=10, K=6, 5 seeds
    python benchmarks/polyhedral_oracle.py --d 10 --k 4    # a setting PLUME passes
    python benchmarks/polyhedral_oracle.py --quick         # a few seconds

Prints Markdown and writes it to ``--output`` (default
``benchmarks/results/polyhedral_oracle.md``; ``--quick`` writes nothing).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from plumestats import PolyhedralMixtureLogit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_speed import report_main
from polyhedral import Setting, Split, accuracy, make_split
from polyhedral_truth_start import setting_parser

TITLE = "Polyhedral suite: PLUME against an oracle that knows the faces"
RESULTS = Path(__file__).resolve().parent / "results" / "polyhedral_oracle.md"


def oracle_hyperplanes(split: Split, alpha: float) -> np.ndarray:
    """The K hyperplanes (rows ``[intercept, slopes]``) fitted face by face,
    each on the inside points and the outside points its true face owns."""
    x = split.x_train.to_numpy(dtype=float)
    inside = split.y_train == 1
    owner = np.argmin(x @ split.truth.to_numpy(dtype=float).T, axis=1)
    rows = []
    for k in range(split.truth.shape[0]):
        mine = inside | (owner == k)
        model = PolyhedralMixtureLogit(split.y_train[mine], split.x_train[mine], k=1)
        with warnings.catch_warnings():
            # a separable face at a tiny alpha converges slowly; the gap is
            # what we measure, not the warning
            warnings.simplefilter("ignore")
            rows.append(np.asarray(model.fit(alpha=alpha).params, dtype=float))
    return np.vstack(rows)


def oracle_gap(split: Split, alpha: float) -> float:
    """Test-accuracy gap of the oracle polytope to the true one, in points."""
    planes = oracle_hyperplanes(split, alpha)
    inside = (split.x_test.to_numpy(dtype=float) @ planes.T).min(axis=1) >= 0
    return 100 * (accuracy(split.y_test, inside) - split.true_accuracy)


def plume_gap(split: Split, k: int, gamma: float, alpha: float, seed: int) -> float:
    """Test-accuracy gap of PLUME, fitted as ``polyhedral.py`` fits it."""
    model = PolyhedralMixtureLogit(split.y_train, split.x_train, k=k, gamma=gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(alpha=alpha, n_init=3, random_state=seed)
    inside = np.asarray(res.predict(split.x_test)) >= 0.5
    return 100 * (accuracy(split.y_test, inside) - split.true_accuracy)


def run(args: argparse.Namespace) -> list[str]:
    """Every gap, as Markdown lines (one row per estimate, one column per seed)."""
    seeds = list(range(args.seeds))
    oracle: dict[str, list[float]] = {}
    plume: dict[str, list[float]] = {}
    for seed in seeds:
        split = make_split(
            Setting(args.d, args.k, args.noise, seed), args.n_train, args.n_test
        )
        began = time.perf_counter()
        for alpha in args.alphas:
            oracle.setdefault(f"oracle, alpha {alpha:g}", []).append(
                oracle_gap(split, alpha)
            )
        for gamma in args.gammas:
            for alpha in args.alphas:
                plume.setdefault(f"PLUME, gamma {gamma:g}, alpha {alpha:g}", []).append(
                    plume_gap(split, args.k, gamma, alpha, seed)
                )
        print(f"seed {seed}: {time.perf_counter() - began:.1f} s", flush=True)
    best = {
        "oracle, best alpha per seed (test labels)": np.max(list(oracle.values()), 0),
        "PLUME, best gamma and alpha per seed (test labels)": np.max(
            list(plume.values()), 0
        ),
    }
    header = "| estimate | " + " | ".join(f"seed {s}" for s in seeds) + " | mean |"
    lines = [header, "|" + "---|" * (len(seeds) + 2)]
    for name, row in [*oracle.items(), *plume.items(), *best.items()]:
        cells = " | ".join(f"{g:+.2f}" for g in row)
        bold = "**" if name in best else ""
        lines.append(f"| {bold}{name}{bold} | {cells} | {np.mean(row):+.2f} |")
    print("\n".join(lines), flush=True)
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = setting_parser(__doc__.splitlines()[0], RESULTS)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..n-1")
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument(
        "--alphas",
        type=float,
        nargs="+",
        default=[1e-4, 1e-5, 1e-6, 1e-7],
        help="L2 penalties (per observation, as fit(alpha=...))",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.d, args.k, args.seeds, args.n_train, args.n_test = 2, 2, 2, 300, 1000
        args.gammas, args.alphas = [1.0], [1e-4]
    return args


def report_details(args: argparse.Namespace) -> list[str]:
    """The bullets of the report that describe this run."""
    return [
        f"setting: d={args.d}, K={args.k}, noise={args.noise:g}, "
        f"{args.n_train} training and {args.n_test} test points per seed "
        "(`polyhedral.make_split`, as the suite)",
        "oracle: told which true face owns each training point; face k is a "
        "logistic regression (plumestats, K = 1, L2 penalty alpha) of the inside "
        "points against the outside points face k owns; classifies by "
        "`min_k w_k'[1, x] >= 0`",
        "PLUME: true K, `fit(alpha=a, n_init=3, random_state=seed)`, classifies "
        "by P(y=1|x) >= 0.5, as the suite",
        "cells: test accuracy minus the true polytope's, in points; **best** rows "
        "pick per seed with the test labels, an upper bound on any selection",
    ]


def main(argv: list[str] | None = None) -> int:
    return report_main(parse_args(argv), run, TITLE, report_details)


if __name__ == "__main__":
    raise SystemExit(main())
