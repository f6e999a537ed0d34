"""PLUME on a Dask LocalCluster of worker processes, as a script.

Run with ``python examples/dask_cluster.py [--nobs N] [--workers W]``. Writes
simulated rows to parquet files in a temporary folder, starts a local cluster
of worker processes, fits K = 3 on the files there (the rows stay on the
workers; only sums of size (K p)^2 come back) and prints the summary and a
prediction. Needs the dask extra: ``pip install "plumestats[dask]"``.

Dask starts each worker process by importing this file again, so everything
that does work runs from ``main()`` under the ``if __name__ == "__main__":``
guard at the bottom; without it each worker would start a cluster of its own.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import dask.dataframe as dd
import numpy as np
from dask.distributed import Client, LocalCluster

import plumestats.api as ps


def write_example_files(folder: Path, nobs: int) -> None:
    """Simulated rows as four parquet files (yours come from your pipeline)."""
    rows, _ = ps.simulate_polyhedron(nobs, d=3, k=3, noise=0.05, random_state=0)
    dd.from_pandas(rows, npartitions=4).to_parquet(folder)


def fit_on_dask(pattern: str):
    """Fit K = 3 on the parquet files: the workers read them, the client sums."""
    ddf = dd.read_parquet(pattern)
    exog = ddf[["x1", "x2", "x3"]].assign(Intercept=1.0)
    return ps.PolyhedralMixtureLogit(ddf["y"], exog, k=3).fit()


def main(nobs: int = 20_000, workers: int = 2) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        write_example_files(folder, nobs)
        with (
            LocalCluster(n_workers=workers, threads_per_worker=1) as cluster,
            Client(cluster),
        ):
            res = fit_on_dask(f"{folder}/*.parquet")
            print(res.summary())
            new_rows = np.array([[0.5, -0.2, 1.0, 1.0]])  # x1, x2, x3, Intercept
            print("P(y = 1 | x) at", new_rows[0, :3], "=", res.predict(new_rows))


if __name__ == "__main__":  # worker processes import this file: start them here only
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nobs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    main(args.nobs, args.workers)
