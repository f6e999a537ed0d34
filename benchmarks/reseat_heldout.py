"""Do re-seating moves predict better? Held-out figures with and without them.

What it measures
    ``fit(reseat=K)`` keeps a move only when it raises the penalised
    log-likelihood of the training sample (``restart_strategies.py`` counts
    how often it does). A higher maximum is a better fit of the sample, not
    necessarily a better classifier. This script fits PLUME with and without
    the moves on the training folds of repeated stratified K-fold splits of UCI
    datasets, at fixed K, gamma and alpha, and compares the held-out accuracy
    and mean log-likelihood.

How
    Complete cases of each dataset (``_datasets.load``, formula as Table 1's
    scripts use it); ``--repeats`` shuffles of ``--folds``-fold stratified CV
    (seed = repeat); per fold, ``plume(formula, train, k=K, gamma)`` fitted by
    ``fit(alpha, n_init, random_state=repeat)`` and by the same with
    ``reseat=K`` (the same restarts, then the moves). "Better maximum" counts
    the folds where a move raised the objective by more than 1e-6 per
    observation. Held-out probabilities are clipped to [1e-12, 1 - 1e-12] for
    the log-likelihood.

Usage
    python benchmarks/reseat_heldout.py               # about a minute
    python benchmarks/reseat_heldout.py --quick       # seconds, no file

Prints a Markdown table and writes it to ``--output`` (default
``benchmarks/results/reseat_heldout.md``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

import plumestats.api as ps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _datasets import DEFAULT_DATA_DIR, load
from fit_speed import report_main

TITLE = "Re-seating moves: held-out accuracy and log-likelihood on the UCI sets"
RESULTS = Path(__file__).resolve().parent / "results" / "reseat_heldout.md"
GAIN = 1e-6  # per observation: a move that raised the objective by more
CLIP = 1e-12


def fold_scores(model, test, y_test, args, repeat: int, reseat: int):
    """Held-out accuracy and mean log-likelihood of one fit, and whether a move
    raised the objective."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small folds at K = 4 may warn
        res = model.fit(
            alpha=args.alpha, n_init=args.n_init, random_state=repeat, reseat=reseat
        )
    p1 = np.clip(np.asarray(res.predict(test), dtype=float), CLIP, 1 - CLIP)
    accuracy = float(np.mean((p1 >= 0.5) == (y_test == 1)))
    loglik = float(np.mean(np.where(y_test == 1, np.log(p1), np.log1p(-p1))))
    retvals = res.mle_retvals
    moved = retvals["reseat_llf"].size > 0 and (
        retvals["reseat_llf"].max() > retvals["restarts_llf"].max() + GAIN * model.nobs
    )
    return accuracy, loglik, bool(moved)


def run(args: argparse.Namespace) -> list[str]:
    lines = [
        "| dataset | K | folds | better maximum | accuracy % without | with "
        "| log-lik without | with |",
        "|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for name in args.datasets:
        frame, formula = load(name, args.data_dir)
        frame = frame.dropna().reset_index(drop=True)
        y = frame[formula.split("~")[0].strip()].to_numpy(dtype=float)
        for k in args.ks:
            scores = {0: [], k: []}
            moved = 0
            for repeat in range(args.repeats):
                folds = StratifiedKFold(args.folds, shuffle=True, random_state=repeat)
                for train, test in folds.split(frame, y):
                    model = ps.plume(formula, frame.iloc[train], k=k, gamma=args.gamma)
                    for reseat in (0, k):
                        accuracy, loglik, better = fold_scores(
                            model, frame.iloc[test], y[test], args, repeat, reseat
                        )
                        scores[reseat].append((accuracy, loglik))
                        moved += better
            plain, moves = np.mean(scores[0], axis=0), np.mean(scores[k], axis=0)
            lines.append(
                f"| {name} | {k} | {len(scores[0])} | {moved} | "
                f"{100 * plain[0]:.2f} | {100 * moves[0]:.2f} | "
                f"{plain[1]:.4f} | {moves[1]:.4f} |"
            )
            print(lines[-1], flush=True)
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument(
        "--datasets", nargs="+", default=["ionosphere", "heart", "ilpd", "pima"]
    )
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--n-init", type=int, default=3)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="seconds, no file")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.ks, args.folds, args.repeats = ["heart"], [3], 3, 1
    return args


def report_details(args: argparse.Namespace) -> list[str]:
    return [
        f"BLAS threads limited to {args.blas_threads} during the fits",
        f"data: {', '.join(args.datasets)} from `{args.data_dir}`, complete cases",
        f"PLUME: K in {args.ks}, gamma {args.gamma:g}, alpha {args.alpha:g}, "
        f"`fit(alpha, n_init={args.n_init}, random_state=repeat)` without and "
        "with `reseat=K`",
        f"splits: {args.repeats} x {args.folds}-fold stratified CV (seed = "
        "repeat); figures are means over the folds; better maximum: folds where "
        f"a move raised the objective by more than {GAIN:g} per observation",
    ]


def main(argv: list[str] | None = None) -> int:
    return report_main(parse_args(argv), run, TITLE, report_details)


if __name__ == "__main__":
    raise SystemExit(main())
