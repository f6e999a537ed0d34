"""Plots of a fitted polyhedron: the faces, EM convergence and the choice of K.

Run with ``python examples/polyhedron_plots.py [--output-dir DIR]``. Simulates
points inside a triangle in two dimensions (no download), fits PLUME with K = 3
from several starts, and saves three PNG files into the output directory
(default ``examples/output/``):

* ``polyhedron.png``: the data by class, the hyperplanes h1..h3, the fitted
  polyhedron shaded and contours of P(y = 1 | x);
* ``convergence.png``: the log-likelihood after each iteration, every restart;
* ``select_k.png``: AIC and BIC against K, one line per gamma.

Needs matplotlib: ``pip install "plumestats[plot]"``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import plumestats.api as ps
from plumestats.plotting import (
    SELECT_K_COLUMNS,
    plot_convergence,
    plot_polyhedron,
    plot_select_k,
)

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "output"


def criteria_table(data, ks, gammas) -> pd.DataFrame:
    """AIC/BIC for each (K, gamma), in the layout of ``plumestats.select_k``
    (no cross-validation here, so its columns are NaN)."""
    rows = []
    for k in ks:
        for gamma in [np.nan] if k == 1 else gammas:
            fit = ps.plume("y ~ x1 + x2", data, k=k, gamma=1.0 if k == 1 else gamma)
            res = fit.fit(n_init=2)
            rows.append(
                {
                    "k": k,
                    "gamma": gamma,
                    "llf": res.llf,
                    "aic": res.aic,
                    "bic": res.bic,
                    "converged": res.converged,
                }
            )
    return pd.DataFrame(rows).reindex(columns=list(SELECT_K_COLUMNS))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--nobs", type=int, default=1500)
    parser.add_argument("--n-init", type=int, default=4)
    parser.add_argument("--max-k", type=int, default=4)
    # parse_known_args: the test runner runs every example with its own argv
    args, _ = parser.parse_known_args(argv)

    import matplotlib

    matplotlib.use("Agg")  # files only, no window

    data, _ = ps.simulate_polyhedron(args.nobs, d=2, k=3, noise=0.03, random_state=7)
    results = ps.plume("y ~ x1 + x2", data, k=3, gamma=1.0).fit(n_init=args.n_init)
    print(results.face_shares().round(3).to_string())
    print(results.get_margeff().summary())

    args.output_dir.mkdir(parents=True, exist_ok=True)
    figures = {
        "polyhedron.png": plot_polyhedron(results, x="x1", y="x2"),
        "convergence.png": plot_convergence(results),
        "select_k.png": plot_select_k(
            criteria_table(data, range(1, args.max_k + 1), [1.0, 4.0])
        ),
    }
    for name, figure in figures.items():
        path = args.output_dir / name
        figure.savefig(path, dpi=100)
        print(f"saved {path}")


if __name__ == "__main__":
    main()
