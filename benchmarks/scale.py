"""Scale benchmark: PLUME on 1e5 to 1e7 rows, in memory, by blocks and on Dask.

What it measures
    For N in {1e5, 1e6, 1e7} simulated rows (d = 20 features and an intercept,
    K = 3, gamma = 1) and each way of fitting -- ``memory`` (the default fit on
    a numpy array), ``chunked`` (``fit(chunksize="auto")`` on the same array)
    and ``dask`` (a ``dask.distributed.LocalCluster`` of 2 worker processes, one
    thread each) -- the EM iterations, the time per iteration (first to last
    iteration callback, divided by the iterations between them), the whole
    ``fit()`` time, the passes over the data and the peak resident memory of
    the driver and of each Dask worker. A least-squares fit of
    ``log(time per iteration)`` on ``log(N)`` gives the growth exponent (1 is
    linear) and the seconds per million rows per iteration.

How
    The data are generated block by block (250,000 rows per block, each from its
    own seed), so the same N gives the same rows on every path, and the Dask path
    never holds them in the driver: each block is a task that the workers run.
    The labels come from PLUME itself with three random faces (``P(y = 1 | x)``
    from the model at the true hyperplanes), so the fit converges to a regular
    maximum. Each (path, N) runs in a fresh Python process (``--one``), so that
    its peak memory (``resource.getrusage``'s ``ru_maxrss``: the high-water mark
    of the resident set, for the driver; the same read in each worker process
    through ``Client.run``) is its own. On the in-memory paths the high-water
    mark is also read after building the model (``setup_peak_mib``) and then
    reset (``/proc/self/clear_refs``), so that ``fit_peak_mib`` is the fit's
    own peak, results included; ``data_mib`` is the size of the arrays passed
    to the model.

Usage
    nice -n 10 python -m benchmarks.scale                  # the full table
    python -m benchmarks.scale --quick                     # smoke test: small N
    python -m benchmarks.scale --sizes 1e5 1e6 --paths dask
    nice -n 10 python -m benchmarks.scale --sizes 1e7 --paths chunked --update
        # re-measure one path at one N; the other rows of scale.csv stay, each
        # with the date it was measured

Writes ``scale.md`` (report), ``scale.csv`` (one row per path and N) and
``scale.png`` (time per iteration against N) into ``--output`` (default
``benchmarks/results``); ``--quick`` writes ``scale_quick.*``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from ._common import REPO_ROOT, THREAD_VARIABLES, Run, add_options, progress, stem

D, K, GAMMA = 20, 3, 1.0
BLOCK_ROWS = 250_000
PATHS = ("memory", "chunked", "dask")
SEED = 20240601
# the true faces are this much sharper than unit normals: labels are mostly,
# not perfectly, determined by the polytope
SHARPNESS = 3.0


def true_hyperplanes() -> np.ndarray:
    """K faces ``[intercept, w]`` with unit-norm ``w``; the inside (all scores
    >= 0) holds about half of the standard normal cloud."""
    rng = np.random.default_rng(SEED)
    directions = rng.standard_normal((K, D))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    offset = 0.82  # Phi(0.82)^3 ~ 1/2 for nearly orthogonal faces
    return SHARPNESS * np.column_stack([np.full(K, offset), directions])


def make_block(index: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of block ``index``: the design (intercept first) and 0/1 labels
    drawn from PLUME, ``P(y = 1 | x) = sum_k g_k(x) sigmoid(w_k'x)`` with the
    gate ``g = softmax(-gamma w'x)``."""
    rng = np.random.default_rng([SEED, index])
    exog = np.empty((rows, D + 1))
    exog[:, 0] = 1.0
    exog[:, 1:] = rng.standard_normal((rows, D))
    scores = exog @ true_hyperplanes().T
    prob = np.sum(softmax(-GAMMA * scores, axis=1) * expit(scores), axis=1)
    return exog, (rng.random(rows) < prob).astype(float)


def block_sizes(nobs: int) -> list[int]:
    full, rest = divmod(nobs, BLOCK_ROWS)
    return [BLOCK_ROWS] * full + ([rest] if rest else [])


def peak_rss_mib() -> float:
    """High-water mark of this process's resident set (Linux: kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mib() -> float:
    """This process's resident set now (Linux), NaN where it cannot be read."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return np.nan
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found[1]) / 1024.0 if found else np.nan


def reset_peak_rss() -> bool:
    """Reset the resident-set high-water mark (Linux >= 4.0); False elsewhere."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _timed_fit(model, **fit_kwargs) -> dict:
    stamps: list[float] = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would make the row meaningless
        # one run (reseat=0): the callback's stamps are that run's iterations
        fit = model.fit(
            callback=lambda *_: stamps.append(time.perf_counter()),
            reseat=0,
            **fit_kwargs,
        )
    total = time.perf_counter() - start
    per_iter = (stamps[-1] - stamps[0]) / max(len(stamps) - 1, 1)
    passes = fit.mle_retvals.get("data_passes", np.nan)
    return {
        "iterations": fit.n_iter,
        "converged": bool(fit.converged),
        "llf": float(fit.llf),
        "fit_s": total,
        "iter_s": per_iter,
        "passes": passes,
        "passes_per_iter": passes / fit.n_iter,
        "params": np.asarray(fit.params).tolist(),
    }


def run_in_memory(nobs: int, chunked: bool) -> dict:
    import plumestats.api as ps

    exog = np.empty((nobs, D + 1))
    endog = np.empty(nobs)
    start = 0
    for index, rows in enumerate(block_sizes(nobs)):
        exog[start : start + rows], endog[start : start + rows] = make_block(
            index, rows
        )
        start += rows
    begin = time.perf_counter()
    model = ps.PolyhedralMixtureLogit(endog, exog, k=K, gamma=GAMMA)
    setup = time.perf_counter() - begin
    setup_peak = peak_rss_mib()
    reset = reset_peak_rss()
    before_fit = rss_mib()
    out = _timed_fit(model, chunksize="auto" if chunked else None)
    out["setup_s"] = setup
    fit_peak = peak_rss_mib()
    out["driver_peak_mib"] = max(setup_peak, fit_peak)
    out["data_mib"] = (exog.nbytes + endog.nbytes) / 2**20
    out["setup_peak_mib"] = setup_peak
    out["fit_peak_mib"] = fit_peak if reset else np.nan
    out["fit_peak_minus_data_mib"] = out["fit_peak_mib"] - out["data_mib"]
    out["fit_above_start_mib"] = out["fit_peak_mib"] - before_fit
    out.update(gram_seconds(exog))
    out["iter_over_gram"] = out["iter_s"] / out["gram_s"]
    return out


def gram_seconds(exog: np.ndarray, repeats: int = 3) -> dict:
    """The weighted Gram products one iteration needs, timed in the fitting
    process after the fit: ``X' diag(w_b) X`` for the K (K + 1) / 2 weight
    columns of a K-face Hessian over all N rows. ``gram_s`` by the blocked
    product the fit uses (fastest of ``repeats``), ``gram_numpy_s`` by numpy's
    plain ``(X * w).T @ X`` per weight (once), for reference."""
    from plumestats._design import dense_grams

    n_pairs = K * (K + 1) // 2
    weights = np.asfortranarray(
        np.random.default_rng(0).uniform(-1, 1, (len(exog), n_pairs))
    )
    blocked = []
    for _ in range(repeats):
        start = time.perf_counter()
        dense_grams(exog, weights)
        blocked.append(time.perf_counter() - start)
    start = time.perf_counter()
    for column in weights.T:
        (exog * column[:, None]).T @ exog
    return {"gram_s": min(blocked), "gram_numpy_s": time.perf_counter() - start}


def run_dask(nobs: int, workers: int) -> dict:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import plumestats.api as ps

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        xs, ys = [], []
        for index, rows in enumerate(block_sizes(nobs)):
            block = dask.delayed(make_block, pure=True)(index, rows)
            xs.append(da.from_delayed(block[0], (rows, D + 1), dtype=float))
            ys.append(da.from_delayed(block[1], (rows,), dtype=float))
        exog, endog = da.concatenate(xs), da.concatenate(ys)
        begin = time.perf_counter()
        # persists the blocks on the workers and reads their moments: one pass
        model = ps.PolyhedralMixtureLogit(endog, exog, k=K, gamma=GAMMA)
        setup = time.perf_counter() - begin
        out = _timed_fit(model)
        out["setup_s"] = setup
        worker_peaks = client.run(peak_rss_mib)
        out["worker_peak_mib"] = max(worker_peaks.values())
        out["workers"] = workers
    out["driver_peak_mib"] = peak_rss_mib()
    return out


def run_one(path: str, nobs: int, workers: int) -> dict:
    if path == "dask":
        result = run_dask(nobs, workers)
    else:
        result = run_in_memory(nobs, chunked=path == "chunked")
    return {"path": path, "nobs": nobs, **result}


def _child(path: str, nobs: int, workers: int, blas_threads: int) -> dict:
    """One (path, N) in a fresh interpreter: its own peak memory."""
    cmd = [sys.executable, "-m", "benchmarks.scale", "--one", path, str(nobs)]
    # BLAS threads that spin while another process holds the core make a shared
    # machine's timings meaningless: one per process (Dask's workers get one
    # anyway), set before numpy loads
    env = {**os.environ}
    for name in THREAD_VARIABLES:
        env[name] = str(blas_threads)
    proc = subprocess.run(
        [*cmd, str(workers)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=REPO_ROOT,  # where ``benchmarks`` is a package
    )
    if proc.returncode != 0:
        return {"path": path, "nobs": nobs, "error": proc.stderr.strip()[-600:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def growth(table: pd.DataFrame) -> pd.DataFrame:
    """Per path: exponent of time per iteration in N (log-log least squares)
    and seconds per million rows per iteration (through the origin)."""
    rows = []
    for path, part in table.dropna(subset=["iter_s"]).groupby("path", sort=False):
        if len(part) < 2:
            continue
        exponent = np.polyfit(np.log(part["nobs"]), np.log(part["iter_s"]), 1)[0]
        per_million = float(
            (part["nobs"] * part["iter_s"]).sum() / (part["nobs"] ** 2).sum() * 1e6
        )
        rows.append(
            {
                "path": path,
                "exponent": exponent,
                "s_per_1e6_rows_per_iter": per_million,
            }
        )
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, part in table.dropna(subset=["iter_s"]).groupby("path", sort=False):
        ax.loglog(part["nobs"], part["iter_s"], "o-", label=name)
    ax.set_xlabel("N (rows)")
    ax.set_ylabel("seconds per EM iteration")
    ax.set_title(f"PLUME, d = {D}, K = {K}: time per iteration vs N")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def frame_markdown(frame: pd.DataFrame) -> str:
    def cell(value) -> str:
        if isinstance(value, float):
            return "-" if np.isnan(value) else f"{value:.4g}"
        return str(value)

    lines = [
        "| " + " | ".join(map(str, frame.columns)) + " |",
        "|" + "---|" * frame.shape[1],
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(value) for value in row) + " |")
    return "\n".join(lines)


def report(table: pd.DataFrame, slopes: pd.DataFrame, args, header) -> str:
    shown = table.drop(columns=["params"], errors="ignore")
    lines = [
        f"# Scale: PLUME on N rows (d = {D}, K = {K}, gamma = {GAMMA})",
        "",
        *header,
        f"- data: generated in blocks of {BLOCK_ROWS:,} rows (seeded per block; "
        "the Dask path generates them on the workers)",
        "- memory: `ru_maxrss` (peak resident set) of the driver process and of "
        "each Dask worker process (the largest shown); each row ran in a fresh "
        "process",
        "- iter_s: seconds per EM/Newton iteration (between the first and last "
        "iteration); fit_s: the whole `fit()` (start values, iterations, final "
        "Hessian and results); setup_s: building the model (for Dask: persisting "
        "the generated blocks on the workers and one pass for the moments)",
        f"- gram_s: the weighted Gram products one iteration needs ({K * (K + 1) // 2} "
        "products `X' diag(w) X` over all N rows: the Hessian's distinct blocks), "
        "timed in the same process after the fit by the blocked product the fit "
        "uses (fastest of 3); gram_numpy_s: the same by numpy's plain "
        "`(X * w).T @ X` per weight; iter_over_gram: iter_s / gram_s (in-memory "
        "paths; a Dask driver holds no rows)",
        "- passes: passes over the data (one map-reduce each; the block and Dask "
        "paths) for the whole fit, start values and final checks included; "
        "passes_per_iter: passes / iterations",
        "- params_rel_diff: largest difference of an estimate between the paths "
        "at that N, relative to the largest estimate (among the rows measured "
        "together)",
        "- in-memory paths: data_mib is the arrays passed to the model (design "
        "and outcome); setup_peak_mib the peak after generating the data and "
        "building the model; fit_peak_mib the peak of `fit()` alone (results "
        "included), the high-water mark being reset after the model was built; "
        "fit_above_start_mib that peak less the resident set when `fit()` "
        "started (what the fit adds to the data, the model and the "
        "interpreter); driver_peak_mib the larger of setup and fit peaks",
        "- measured: when the row was measured (`--update` re-measures some rows "
        "and keeps the others)",
        f"- Dask: LocalCluster with {args.workers} worker processes, 1 thread each; "
        f"BLAS threads per process: {args.blas_threads} (the thread variables "
        "set in each measuring process)",
        "",
        frame_markdown(shown),
        "",
        "## Growth of the time per iteration with N",
        "",
        "exponent: slope of log(iter_s) on log(N) (1 = linear); "
        "s_per_1e6_rows_per_iter: least-squares slope of iter_s on N through "
        "the origin, per million rows.",
        "",
        frame_markdown(slopes) if len(slopes) else "-",
        "",
    ]
    return "\n".join(lines)


def merge_rows(kept: pd.DataFrame, new: pd.DataFrame, earlier: str) -> pd.DataFrame:
    """The rows of ``kept`` for the (path, N) that ``new`` does not measure,
    then ``new``'s, in the order of N and path; ``earlier`` dates the kept rows
    that have no date of their own."""
    if "measured" not in kept:
        kept["measured"] = earlier
    measured = set(zip(new["path"], new["nobs"], strict=True))
    keep = [
        (path, nobs) not in measured
        for path, nobs in zip(kept["path"], kept["nobs"], strict=True)
    ]
    table = pd.concat([kept[keep], new], ignore_index=True)
    order = {path: i for i, path in enumerate(PATHS)}
    table["_order"] = table["path"].map(order)
    return table.sort_values(["nobs", "_order"]).drop(columns="_order")


def _report_date(report: Path) -> str:
    """The date line of an earlier report, as ``YYYY-MM-DD HH:MM``."""
    text = report.read_text() if report.is_file() else ""
    found = re.search(r"^- date: (\d{4}-\d\d-\d\d)T(\d\d:\d\d)", text, re.M)
    return f"{found[1]} {found[2]}" if found else "unknown"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6, 1e7])
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument(
        "--memory-max",
        type=float,
        default=1e7,
        help="largest N for the in-memory paths (default 1e7)",
    )
    parser.add_argument("--workers", type=int, default=2)
    add_options(parser, quick="N = 2e4 and 5e4", blas_threads=1)
    parser.add_argument(
        "--update",
        action="store_true",
        help="merge the new rows into the existing scale.csv (replacing the same "
        "path and N) instead of starting a new table",
    )
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        path, nobs, workers = args.one
        print(json.dumps(run_one(path, int(nobs), int(workers))))
        return
    sizes = [2e4, 5e4] if args.quick else args.sizes
    run = Run.start("scale", argv)
    rows = []
    for nobs in (int(size) for size in sizes):
        for path in args.paths:
            if path != "dask" and nobs > args.memory_max:
                continue
            progress(f"{path} N={nobs:,} ...")
            row = _child(path, nobs, args.workers, args.blas_threads)
            progress(
                "   " + ", ".join(f"{k}={v}" for k, v in row.items() if k != "params")
            )
            row["measured"] = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M}"
            rows.append(row)
    table = pd.DataFrame(rows)
    if "params" in table:
        # every path fits the same data: their estimates must agree
        for nobs, part in table.dropna(subset=["params"]).groupby("nobs"):
            if len(part) < 2:
                continue
            params = np.array(part["params"].tolist())
            spread = np.max(np.abs(params - params[0])) / np.max(np.abs(params[0]))
            table.loc[table["nobs"] == nobs, "params_rel_diff"] = spread
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    name = stem(args, "scale")
    if args.update and (out / f"{name}.csv").is_file():
        table = merge_rows(
            pd.read_csv(out / f"{name}.csv"), table, _report_date(out / f"{name}.md")
        )
    slopes = growth(table)
    table.drop(columns=["params"], errors="ignore").to_csv(
        out / f"{name}.csv", index=False
    )
    text = report(table, slopes, args, run.header("dask", "distributed"))
    (out / f"{name}.md").write_text(text, encoding="utf-8")
    plot(table, out / f"{name}.png")
    progress(f"wrote {out / name}.md, .csv, .png")


if __name__ == "__main__":
    main()
