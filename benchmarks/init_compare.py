"""Compare start-value strategies: final log-likelihood of init="kmeans" and
init="logit" (and "random") on the five UCI datasets, K = 2 and 3.

Prints a table (and writes ``benchmarks/results/init_compare.md``). A benchmark,
not a test: it reads ``--data-dir`` (default ``../shared/data``).

    python benchmarks/init_compare.py [--data-dir DIR] [--ks 2 3] [--alpha 1e-4]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import plumestats.api as ps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _datasets import DATASETS, DEFAULT_DATA_DIR, load

INITS = ("kmeans", "logit", "random")


def _fit(model, init, alpha):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        res = model.fit(init=init, alpha=alpha, maxiter=1000)
        seconds = time.perf_counter() - start
    names = sorted({w.category.__name__ for w in caught})
    # compare what EM maximised: the penalised objective
    return res.llf_history[-1], seconds, res.converged, names


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 3])
    parser.add_argument(
        "--alpha",
        type=float,
        default=1e-4,
        help="small L2 penalty so that separable sets (ionosphere) have a maximum",
    )
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "init_compare.md",
    )
    args = parser.parse_args(argv)

    header = ["dataset", "K"] + [f"{i} objective" for i in INITS] + ["best", "notes"]
    rows = []
    wins = {k: 0 for k in args.ks}
    for name in args.datasets:
        frame, formula = load(name, args.data_dir)
        for k in args.ks:
            model = ps.plume(formula, frame, k=k)
            results = {init: _fit(model, init, args.alpha) for init in INITS}
            values = {init: r[0] for init, r in results.items()}
            best = max(values, key=values.get)
            tie = 1e-6 * abs(values["kmeans"])
            if values["kmeans"] >= values["logit"] - tie:
                wins[k] += 1
            notes = "; ".join(
                f"{init}: {', '.join(r[3])}" for init, r in results.items() if r[3]
            )
            rows.append(
                [name, str(k)]
                + [f"{values[i]:.4f} ({results[i][1]:.2f}s)" for i in INITS]
                + [best, notes]
            )
            print(
                f"{name:>10} K={k}: "
                + "  ".join(f"{i}={values[i]:.4f}" for i in INITS),
                flush=True,
            )

    lines = [
        f"# Start values: final penalised log-likelihood (alpha={args.alpha:g})",
        "",
        f"Date: {datetime.date.today()}; command: `python benchmarks/init_compare.py"
        f" {' '.join(argv or sys.argv[1:])}`",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *["| " + " | ".join(row) + " |" for row in rows],
        "",
        *[
            f"K={k}: kmeans matches or beats logit on {wins[k]} of "
            f"{len(args.datasets)} datasets."
            for k in args.ks
        ],
    ]
    text = "\n".join(lines)
    print("\n" + text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
