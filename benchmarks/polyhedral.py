"""Polyhedral benchmark: PLUME and rivals on data that really is a polytope.

What it measures
    Test accuracy of PLUME (``PolyhedralMixtureLogit``, soft gate), PLUME or
    PLUME with label flips (``LabelFlipPolyhedralLogit``, whichever 3-fold CV
    prefers over the same gamma and alpha grid), SPLA1
    (``HardPolyhedralLogit``, hard gate), statsmodels' ``Logit``, an RBF ``SVC``
    and a CART ``DecisionTreeClassifier`` on points labelled by a random polytope
    (``plumestats.datasets.simulate_polyhedron``), over a grid of dimensions d,
    numbers of true faces K and label-noise rates. Each accuracy is compared with
    that of the true polytope on the same (noisy) test labels. For PLUME and SPLA1
    it also measures how well the fitted hyperplanes recover the true ones.

How
    One call of ``simulate_polyhedron(n_train + n_test, d, K, noise, seed)`` per
    setting and seed; the first ``n_train`` rows train, the rest test, so both
    share the polytope. Every hyper-parameter is chosen on the training set only,
    by 3-fold stratified cross-validated accuracy (the same folds for every
    method), and the chosen model is refitted on the whole training set; the
    Markdown report states the grids and rules. Warnings are caught and counted,
    never printed. Timings are wall-clock (``time.perf_counter``) of the final
    refit and of the whole procedure (selection and refit), with the BLAS thread
    pools limited (default one thread) so that a shared machine's load matters
    less.

Usage
    python -m benchmarks.polyhedral                  # full grid, 1 seed
    python -m benchmarks.polyhedral --quick          # smoke test, a few seconds
    python -m benchmarks.polyhedral --ds 2 5 --ks 2 --noises 0 --seeds 3
    python -m benchmarks.polyhedral --alphas 1e-4 1e-3 1e-2 \
        --name polyhedral_large_alpha       # the full grid, larger penalties only

The data, fits and rivals are in ``_polyhedral_fits.py``, the report in
``_polyhedral_report.py``; ``polyhedral_oracle.py`` scores one setting against
the Bayes-optimal classifier told the true faces.

Writes ``polyhedral.md`` (report), ``polyhedral.csv`` (one row per setting,
method and seed) and ``polyhedral.png`` (gap to the true polytope) into
``--output`` (default ``benchmarks/results``); ``--quick`` writes
``polyhedral_quick.*`` instead, so that it never overwrites a full run
(``--name`` sets another stem, e.g. for a run with other grids).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from typing import Any

import pandas as pd

from ._common import Run, add_options, blas_info, blas_limit, progress, stem
from ._polyhedral_fits import (
    CV_FOLDS,
    FULL_SETTINGS,
    FULL_SIZES,
    METHODS,
    QUICK_GRIDS,
    QUICK_SETTINGS,
    QUICK_SIZES,
    TRUTH,
    Grids,
    MethodResult,
    Setting,
    make_split,
    run_cart,
    run_logit,
    run_plume_bic,
    run_polyhedral,
    run_svm,
)
from ._polyhedral_report import plot, report


def run_setting(
    setting: Setting, args: argparse.Namespace
) -> tuple[float, list[MethodResult]]:
    """Every requested method on one setting; returns the true polytope's test
    accuracy and the methods' results, in ``METHODS`` order."""
    split = make_split(setting, args.n_train, args.n_test)
    grids: Grids = args.grids
    results: dict[str, MethodResult] = {}
    if {"plume", "plume-bic", "plume-flip"} & set(args.methods):
        results["plume"], choice = run_polyhedral(
            "PLUME", split, setting, grids.gammas, grids
        )
        if "plume-flip" in args.methods:
            results["plume-flip"] = (
                run_polyhedral(
                    METHODS["plume-flip"],
                    split,
                    setting,
                    grids.gammas,
                    grids,
                    extends=choice,
                )[0]
                if choice is not None
                else MethodResult(METHODS["plume-flip"], status="failed")
            )
        if "plume-bic" in args.methods:
            results["plume-bic"] = (
                run_plume_bic(split, setting, choice, grids)
                if choice is not None
                else MethodResult(METHODS["plume-bic"], status="failed")
            )
    if "spla1" in args.methods:
        results["spla1"], _ = run_polyhedral("SPLA1", split, setting, (None,), grids)
    if "logit" in args.methods:
        results["logit"] = run_logit(split)
    if "svm" in args.methods:
        results["svm"] = run_svm(split, grids)
    if "cart" in args.methods:
        results["cart"] = run_cart(split, grids, setting.seed)
    ordered = [results[key] for key in METHODS if key in args.methods]
    return split.true_accuracy, ordered


def settings_of(args: argparse.Namespace) -> list[Setting]:
    return [
        Setting(d, k, noise, seed)
        for noise in args.noises
        for d in args.ds
        for k in args.ks
        for seed in range(args.seeds)
    ]


def to_rows(
    setting: Setting,
    true_acc: float,
    results: list[MethodResult],
    sizes: tuple[int, int],
    other_warnings: Counter[str],
) -> list[dict[str, Any]]:
    """Tidy CSV rows: the true polytope first (with the warnings raised outside
    the fits), then one row per method."""
    base = {
        "d": setting.d,
        "k": setting.k,
        "noise": setting.noise,
        "seed": setting.seed,
        "n_train": sizes[0],
        "n_test": sizes[1],
        "true_accuracy": true_acc,
    }
    truth = {"method": TRUTH, "status": "ok", "test_accuracy": true_acc}
    rows = [{**base, **truth, "warnings": format_counts(other_warnings)}]
    for r in results:
        rows.append(
            {
                **base,
                "method": r.method,
                "status": r.status,
                "test_accuracy": r.test_accuracy,
                "gap_points": 100 * (r.test_accuracy - true_acc),
                "polytope_accuracy": r.polytope_accuracy,
                "fit_seconds": r.fit_seconds,
                "total_seconds": r.total_seconds,
                "hyper_parameters": r.hyper,
                "k_fitted": r.k_fitted,
                "iterations": r.iterations,
                "converged": r.converged,
                "cos_mean": r.cos_mean,
                "cos_min": r.cos_min,
                "offset_mad": r.offset_mad,
                "warnings": format_counts(r.warnings),
                "selection_warnings": format_counts(r.selection_warnings),
                "message": r.message,
            }
        )
    return rows


def format_counts(counts: Counter[str]) -> str:
    return "; ".join(f"{name} x{n}" for name, n in sorted(counts.items()))


def progress_line(
    setting: Setting, true_acc: float, results: list[MethodResult], seconds: float
) -> str:
    parts = [f"true {true_acc:.4f}"]
    for r in results:
        if r.status != "ok":
            parts.append(f"{r.method} FAILED")
        else:
            gap = 100 * (r.test_accuracy - true_acc)
            parts.append(f"{r.method} {r.test_accuracy:.4f} ({gap:+.2f})")
    return (
        f"[{setting.label}, seed {setting.seed}] "
        + " | ".join(parts)
        + (f" | {seconds:.1f} s")
    )


def run_all(args: argparse.Namespace) -> pd.DataFrame:
    """Every setting and seed, one progress line each; the tidy table."""
    rows: list[dict[str, Any]] = []
    for setting in settings_of(args):
        start = time.perf_counter()
        # the fits catch their own; this counts any other (construction, predict)
        with warnings.catch_warnings(record=True) as stray:
            warnings.simplefilter("always")
            true_acc, results = run_setting(setting, args)
        seconds = time.perf_counter() - start
        progress(progress_line(setting, true_acc, results, seconds))
        other = Counter(w.category.__name__ for w in stray)
        rows += to_rows(setting, true_acc, results, (args.n_train, args.n_test), other)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..n-1")
    parser.add_argument("--ds", type=int, nargs="+", help="dimensions d")
    parser.add_argument("--ks", type=int, nargs="+", help="true numbers of faces K")
    parser.add_argument("--noises", type=float, nargs="+", help="label-noise rates")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="methods to run (default: all)",
    )
    parser.add_argument("--n-train", type=int, help="training points (2000)")
    parser.add_argument("--n-test", type=int, help="test points (10000)")
    parser.add_argument(
        "--alphas", type=float, nargs="+", help="PLUME/SPLA1 alpha grid"
    )
    parser.add_argument("--gammas", type=float, nargs="+", help="PLUME gamma grid")
    parser.add_argument("--n-init", type=int, help="EM restarts per fit (3)")
    parser.add_argument(
        "--reseat",
        action="store_true",
        help="PLUME and SPLA1 fits add up to K re-seating moves (fit(reseat=K))",
    )
    parser.add_argument(
        "--select",
        choices=("accuracy", "logloss"),
        help="PLUME's and SPLA1's CV criterion (default accuracy)",
    )
    add_options(
        parser,
        quick="d 2 5, K 2, noise 0 0.1, 500/2000 points, small grids",
        blas_threads=1,
    )
    args = parser.parse_args(argv)
    settings = QUICK_SETTINGS if args.quick else FULL_SETTINGS
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    for name, value in {**settings, **sizes}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    grids = QUICK_GRIDS if args.quick else Grids()
    overrides = {
        "alphas": tuple(args.alphas) if args.alphas else None,
        "gammas": tuple(args.gammas) if args.gammas else None,
        "n_init": args.n_init,
        "select": args.select,
        "reseat": args.reseat or None,
    }
    args.grids = Grids(
        **{**grids.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
    )
    if args.seeds < 1 or args.grids.n_init < 1 or args.blas_threads < 1:
        parser.error("--seeds, --n-init and --blas-threads must be at least 1")
    if min(args.n_train, args.n_test) < 2 * CV_FOLDS:
        parser.error("--n-train and --n-test are too small")
    args.name = stem(args, "polyhedral")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run.start("polyhedral", argv)
    with blas_limit(args.blas_threads):
        blas = blas_info()
        table = run_all(args)
    header = run.header("sklearn", "matplotlib", "threadpoolctl", blas=blas)
    args.output.mkdir(parents=True, exist_ok=True)
    paths = {ext: args.output / f"{args.name}.{ext}" for ext in ("md", "csv", "png")}
    table.to_csv(paths["csv"], index=False)
    paths["md"].write_text(report(table, args, header) + "\n", encoding="utf-8")
    methods = [METHODS[key] for key in METHODS if key in args.methods]
    plot(table, methods, paths["png"])
    progress(f"written {', '.join(map(str, paths.values()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
