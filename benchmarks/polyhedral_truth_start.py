"""Is a miss of the polyhedral suite a local maximum or the estimator itself?

What it measures
    On one setting of ``polyhedral.py`` (default the one it misses: d = 10,
    K = 6, no label noise), PLUME is fitted twice per (gamma, alpha): from its
    default k-means starts (``n_init=3``, as the suite) and from the true
    hyperplanes scaled by ``--truth-scale`` (``start_params``). If both starts
    end at the same penalised maximum with the same test accuracy, the gap to
    the true polytope belongs to the maximum-likelihood estimate at this sample
    size, not to the optimiser; a larger ``--n-train`` then shows how the gap
    shrinks with N.

How
    ``polyhedral.make_split`` (the suite's simulation, split and seed) for each
    training size; ``PolyhedralMixtureLogit(..., k=K, gamma=g).fit(alpha=a)``;
    test accuracy classifies by P(y=1|x) >= 0.5 and is reported as the gap to
    the true polytope in points; ``objective`` is the penalised log-likelihood
    that EM maximises, per observation, ``L/N - alpha/2 sum_k ||b_k||^2`` on the
    standardised slopes (the higher, the better the optimiser did); ``cos min``
    is the smallest cosine between a fitted normal and its matched true
    normal.

Usage
    python benchmarks/polyhedral_truth_start.py             # d=10, K=6, N 2000, 5000
    python benchmarks/polyhedral_truth_start.py --quick     # a few seconds
    python benchmarks/polyhedral_truth_start.py --d 5 --k 4 --n-train 2000

Prints a Markdown table and writes it to ``--output`` (default
``benchmarks/results/polyhedral_truth_start.md``; ``--quick`` writes nothing).
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
from polyhedral import Setting, accuracy, make_split, matched_hyperplanes

TITLE = "Polyhedral suite: k-means starts against starts at the true polytope"
RESULTS = Path(__file__).resolve().parent / "results" / "polyhedral_truth_start.md"
HEADER = (
    "| N train | gamma | alpha | start | test acc | gap (points) "
    "| objective | cos min | EM+Newton iters | converged | s |"
)


def penalised_objective(res) -> float:
    """EM's penalised objective at the estimate, per observation: the best
    run's (restarts and re-seating moves) ``L - N alpha/2 sum_k ||b_k||^2``
    (slopes of the standardised features)."""
    runs = [res.mle_retvals["restarts_llf"], res.mle_retvals["reseat_llf"]]
    return float(np.max(np.concatenate(runs))) / res.nobs


def fit_row(split, setting: Setting, gamma: float, alpha: float, start, n_init):
    """One fit and its table row (``start`` None: k-means starts)."""
    model = PolyhedralMixtureLogit(
        split.y_train, split.x_train, k=setting.k, gamma=gamma
    )
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if start is None:
            res = model.fit(alpha=alpha, n_init=n_init, random_state=setting.seed)
        else:
            res = model.fit(alpha=alpha, start_params=start)
    seconds = time.perf_counter() - began
    inside = np.asarray(res.predict(split.x_test)) >= 0.5
    test_accuracy = accuracy(split.y_test, inside)
    fitted = res.hyperplanes[split.truth.columns].to_numpy(dtype=float)
    pairs = matched_hyperplanes(fitted, split.truth.to_numpy(dtype=float))
    cos_min = (
        float(np.min(np.sum(pairs[0][:, 1:] * pairs[1][:, 1:], axis=1)))
        if pairs is not None
        else np.nan
    )
    return {
        "test_accuracy": test_accuracy,
        "gap": 100 * (test_accuracy - split.true_accuracy),
        "objective": penalised_objective(res),
        "cos_min": cos_min,
        "iterations": res.mle_retvals.get("iterations", np.nan),
        "converged": res.mle_retvals.get("converged", False),
        "seconds": seconds,
    }


def run(args: argparse.Namespace) -> list[str]:
    setting = Setting(args.d, args.k, args.noise, args.seed)
    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    print("\n".join(lines), flush=True)
    for n_train in args.n_train:
        split = make_split(setting, n_train, args.n_test)
        truth_start = args.truth_scale * split.truth.to_numpy(dtype=float).ravel()
        for gamma in args.gammas:
            for alpha in args.alphas:
                for label, start in (
                    (f"k-means x{args.n_init}", None),
                    (f"truth x{args.truth_scale:g}", truth_start),
                ):
                    r = fit_row(split, setting, gamma, alpha, start, args.n_init)
                    lines.append(
                        f"| {n_train} | {gamma:g} | {alpha:g} | {label} | "
                        f"{r['test_accuracy']:.4f} | {r['gap']:+.2f} | "
                        f"{r['objective']:.5f} | {r['cos_min']:.4f} | "
                        f"{r['iterations']} | {r['converged']} | "
                        f"{r['seconds']:.2f} |"
                    )
                    print(lines[-1], flush=True)
    return lines


def setting_parser(description: str, output: Path) -> argparse.ArgumentParser:
    """The options of a study of one simulated setting (this script's and
    ``polyhedral_oracle.py``'s): d, K, noise, test size, gammas, BLAS threads,
    ``--quick`` and ``--output``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--gammas", type=float, nargs="+", default=[1.0, 5.0])
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="d=2, K=2, seconds")
    parser.add_argument("--output", type=Path, default=output)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = setting_parser(__doc__.splitlines()[0], RESULTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--alphas", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6])
    parser.add_argument("--n-init", type=int, default=3)
    parser.add_argument("--truth-scale", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.quick:
        args.d, args.k, args.n_train, args.n_test = 2, 2, [300], 1000
        args.gammas, args.alphas = [1.0], [1e-4]
    return args


def report_details(args: argparse.Namespace) -> list[str]:
    """The bullets of the report that describe this run."""
    return [
        f"BLAS threads limited to {args.blas_threads} during the fits "
        "(`--blas-threads`)",
        f"setting: d={args.d}, K={args.k}, noise={args.noise:g}, seed "
        f"{args.seed}, {args.n_test} test points (`polyhedral.make_split`, as "
        "the suite); PLUME at the true K; gap = test accuracy minus the true "
        "polytope's, in points; objective = penalised log-likelihood per "
        "observation (higher is a better maximum)",
    ]


def main(argv: list[str] | None = None) -> int:
    return report_main(parse_args(argv), run, TITLE, report_details)


if __name__ == "__main__":
    raise SystemExit(main())
