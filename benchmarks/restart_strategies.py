"""Which restarts find the better maximum: reseeded k-means, or a mix of starts?

What it measures
    At a fixed number of EM runs (``--n-init``, default 3) each ``init``
    strategy of ``fit`` (default ``kmeans``, k-means of the outside class
    reseeded per run, against ``mixed``, runs cycling through ``kmeans``,
    ``directions`` and ``logit``) is fitted to the same data, and the best
    run's penalised objective is compared: the higher, the better the
    restarts did. A strategy "wins" a case when its objective is higher by
    more than 1e-6 per observation.

Cases
    * simulated polytopes (``polyhedral.make_split``, the suite's simulation
      and seeds, no label noise, N = 2000 train / 10000 test) at the settings
      of ``--settings`` (d/K), seeds ``0 .. --seeds - 1``, gamma 1,
      alpha 1e-5; the test accuracy's gap to the true polytope is reported too;
    * the five UCI datasets (``--data-dir``, whole data, the formulas of
      ``_datasets.py``) at K in ``--ks``, gamma 1, alpha 1e-4.

Usage
    python benchmarks/restart_strategies.py                 # about 10 minutes
    python benchmarks/restart_strategies.py --quick         # seconds, no file
    python benchmarks/restart_strategies.py --strategies kmeans directions mixed

Prints Markdown tables and writes them to ``--output`` (default
``benchmarks/results/restart_strategies.md``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import plumestats.api as ps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _datasets import DATASETS, DEFAULT_DATA_DIR, load
from fit_speed import report_main
from polyhedral import Setting, accuracy, make_split, predict_inside
from polyhedral_truth_start import penalised_objective

TITLE = "Restart strategies: the best of n_init EM runs, by kind of start"
RESULTS = Path(__file__).resolve().parent / "results" / "restart_strategies.md"
# an objective per observation higher by more than this is a better maximum
TIE = 1e-6
SIMULATED_GAMMA, SIMULATED_ALPHA = 1.0, 1e-5
UCI_GAMMA, UCI_ALPHA = 1.0, 1e-4


def strategy_options(strategy: str, k: int) -> dict:
    """``fit`` keywords of a strategy: ``INIT``, or ``INIT+reseat`` for the
    ``INIT`` restarts followed by up to K re-seating moves."""
    init, _, extra = strategy.partition("+")
    return {"init": init, "reseat": k if extra == "reseat" else 0}


def fit_strategies(fit: Callable[[str], object], strategies: list[str]) -> dict:
    """``fit(strategy)`` per strategy: its objective, result and seconds."""
    out = {}
    for init in strategies:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # diagnostics are not compared here
            start = time.perf_counter()
            res = fit(init)
            seconds = time.perf_counter() - start
        out[init] = {"objective": penalised_objective(res), "res": res, "s": seconds}
    return out


def verdict(objectives: dict[str, float], baseline: str) -> dict[str, str]:
    """Each strategy against ``baseline``: better, worse or tied."""
    base = objectives[baseline]
    return {
        init: "better"
        if value > base + TIE
        else "worse"
        if value < base - TIE
        else "tied"
        for init, value in objectives.items()
        if init != baseline
    }


def simulated_rows(args: argparse.Namespace, tally: dict) -> list[str]:
    header = "| d | K | seed | " + " | ".join(
        f"{s} objective | {s} gap (points)" for s in args.strategies
    )
    lines = [header + " |", "|" + "---|" * (3 + 2 * len(args.strategies))]
    print("\n".join(lines), flush=True)
    for d, k in args.settings:
        for seed in range(args.seeds):
            setting = Setting(d, k, 0.0, seed)
            split = make_split(setting, args.n_train, args.n_test)
            model = ps.PolyhedralMixtureLogit(
                split.y_train, split.x_train, k=k, gamma=SIMULATED_GAMMA
            )

            def fit(strategy, model=model, seed=seed, k=k):
                return model.fit(
                    alpha=SIMULATED_ALPHA,
                    n_init=args.n_init,
                    random_state=seed,
                    **strategy_options(strategy, k),
                )

            found = fit_strategies(fit, args.strategies)
            cells = []
            for init in args.strategies:
                inside = predict_inside(found[init]["res"], split.x_test)
                gap = 100 * (accuracy(split.y_test, inside) - split.true_accuracy)
                cells.append(f"{found[init]['objective']:.5f} | {gap:+.2f}")
            tally_case(tally, found, args.strategies)
            lines.append(f"| {d} | {k} | {seed} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    return lines


def uci_rows(args: argparse.Namespace, tally: dict) -> list[str]:
    header = "| dataset | K | " + " | ".join(
        f"{s} objective | {s} s" for s in args.strategies
    )
    lines = [header + " |", "|" + "---|" * (2 + 2 * len(args.strategies))]
    print("\n".join(lines), flush=True)
    for name in args.datasets:
        frame, formula = load(name, args.data_dir)
        for k in args.ks:
            model = ps.plume(formula, frame, k=k, gamma=UCI_GAMMA)

            def fit(strategy, model=model, k=k):
                return model.fit(
                    alpha=UCI_ALPHA,
                    n_init=args.n_init,
                    random_state=0,
                    **strategy_options(strategy, k),
                )

            found = fit_strategies(fit, args.strategies)
            cells = [
                f"{found[s]['objective']:.5f} | {found[s]['s']:.2f}"
                for s in args.strategies
            ]
            tally_case(tally, found, args.strategies)
            lines.append(f"| {name} | {k} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    return lines


def tally_case(tally: dict, found: dict, strategies: list[str]) -> None:
    objectives = {s: found[s]["objective"] for s in strategies}
    for init, outcome in verdict(objectives, strategies[0]).items():
        tally.setdefault(init, {"better": 0, "worse": 0, "tied": 0})[outcome] += 1


def tally_lines(title: str, tally: dict, baseline: str) -> list[str]:
    return [
        f"- {title}: `{init}` against `{baseline}`: better maximum in "
        f"{t['better']}, worse in {t['worse']}, the same in {t['tied']}"
        for init, t in tally.items()
    ]


def run(args: argparse.Namespace) -> list[str]:
    simulated, uci = {}, {}
    lines = [f"## Simulated polytopes (gamma {SIMULATED_GAMMA:g}, alpha "]
    lines[0] += f"{SIMULATED_ALPHA:g}, n_init {args.n_init})"
    lines += ["", *simulated_rows(args, simulated), ""]
    if args.datasets:
        lines += [f"## UCI datasets (gamma {UCI_GAMMA:g}, alpha {UCI_ALPHA:g}, "]
        lines[-1] += f"n_init {args.n_init}, whole data)"
        lines += ["", *uci_rows(args, uci), ""]
    baseline = args.strategies[0]
    summary = ["## Summary", ""]
    summary += tally_lines("simulated", simulated, baseline)
    summary += tally_lines("UCI", uci, baseline)
    print("\n".join(summary), flush=True)
    return [*summary, "", *lines]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=["kmeans", "mixed"],
        help="init values, each optionally followed by '+reseat' (up to K "
        "re-seating moves after the restarts); the first is the baseline",
    )
    parser.add_argument("--n-init", type=int, default=3)
    parser.add_argument(
        "--settings",
        nargs="+",
        default=["2/6", "5/4", "5/6", "10/4", "10/6"],
        help="simulated settings as d/K",
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="seconds, no file")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    for strategy in args.strategies:
        # the init value itself is checked by fit, with the values it takes
        _, plus, extra = strategy.partition("+")
        if plus and extra != "reseat":
            parser.error(
                f"strategy {strategy!r}: '+reseat' is the only addition to an "
                "init value"
            )
    if args.quick:
        args.settings, args.seeds, args.n_train, args.n_test = ["2/3"], 1, 300, 1000
        args.datasets = []
    args.settings = [tuple(map(int, s.split("/"))) for s in args.settings]
    return args


def report_details(args: argparse.Namespace) -> list[str]:
    settings = ", ".join(f"{d}/{k}" for d, k in args.settings)
    return [
        f"BLAS threads limited to {args.blas_threads} during the fits",
        f"strategies (`fit(init=...)`; `+reseat`: and `reseat=K`): "
        f"{', '.join(args.strategies)}; baseline "
        f"`{args.strategies[0]}`; n_init {args.n_init}; objective = the best "
        "run's penalised log-likelihood per observation (higher is better); "
        f"better / worse = differs by more than {TIE:g}",
        f"simulated: d/K in {settings}, seeds 0..{args.seeds - 1}, "
        f"{args.n_train} train / {args.n_test} test (`polyhedral.make_split`), "
        "no label noise; gap = test accuracy (P(y=1|x) >= 0.5) minus the true "
        "polytope's, in points",
        f"UCI: {', '.join(args.datasets) or 'none'} from `{args.data_dir}`, K in "
        f"{args.ks}, whole data",
    ]


def main(argv: list[str] | None = None) -> int:
    return report_main(parse_args(argv), run, TITLE, report_details)


if __name__ == "__main__":
    raise SystemExit(main())
