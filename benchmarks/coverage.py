"""Coverage study: do PLUME's standard errors and 95% Wald intervals mean what they say?

What it measures
    For known PLUME models (K in {1, 2, 3}, gamma in {1, 5}, d in {2, 5}) and sample
    sizes N in {500, 2000, 10000}, the share of Monte Carlo replicates whose 95%
    Wald interval ``params +- 1.96 bse`` covers the true parameter, per parameter,
    for the observed-information standard errors (``cov_type="nonrobust"``) and the
    HC0 sandwich; and the ratio of the mean reported standard error to the
    empirical standard deviation of the estimates (1 when the SEs are right).
    With ``--profile``, also the coverage of the 95% profile-likelihood
    intervals (``conf_int(method="profile")``); an endpoint where the profile
    stays flat is infinite and covers. With ``--bootstrap B`` (cells with
    N <= 2000), also the bootstrap's percentile intervals and the Wald
    intervals from the bootstrap SE (``results.bootstrap``, B replicates).
    With ``--profile``, a replicate whose profile finds a higher maximum than
    the fit from the truth is refitted from ten mixed starts; if that finds
    no higher maximum either, the replicate counts as failed.

How
    Data are drawn from the model itself (``plumestats.datasets.simulate_plume``:
    x ~ N(0, I_d), y from P(y | x) of the true hyperplanes), so the fitted model is
    correctly specified. The true hyperplanes are ``h_k = s (r - u_k' x)``, unit
    normals ``u_k`` spread 120 degrees apart in the (x1, x2) plane (with fixed
    random components in x3..xd when d = 5), offset ``r = 0.5`` and sharpness
    ``s = 2``: outcomes are noisy everywhere (no region is fitted with probability
    near 1), so the maximum is interior, and the faces are far apart, so they are
    identified. A "sharp" variant (``s = 25``, K = 2, gamma = 1, d = 2) is close to
    separable. Each replicate is fitted by the default EM from the true
    parameters (the study is about the standard errors at the right maximum, not
    about finding it), then its experts are aligned to the truth by the
    Hungarian algorithm on the mean squared score difference (label switching;
    :func:`align_experts`, the rule ``results.bootstrap`` aligns by).
    Replicates with a fit warning (no convergence, separation, singular
    information) are counted as failed and left out of the coverage. BLAS is
    limited to one thread (threadpoolctl).

Usage
    nice -n 19 python -m benchmarks.coverage                # full grid
    python -m benchmarks.coverage --quick                   # smoke test, seconds
    python -m benchmarks.coverage --cells 2,1,2,10000 --reps 100
    python -m benchmarks.coverage --profile --bootstrap 99 --cells 3,5,5,500 \
        --name coverage_profile

Writes ``coverage.md``, ``coverage.csv`` (one row per cell and parameter) and
``coverage.png`` into ``--output`` (default ``benchmarks/results``), rewritten
after every cell so that an interrupted run keeps what it finished; ``--quick``
writes ``coverage_quick.*``.
"""

from __future__ import annotations

import argparse
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

from plumestats.api import PolyhedralMixtureLogit, simulate_plume

from ._common import Run, add_options, blas_info, blas_limit, progress, stem

Z95 = 1.959963984540054
HEADLINE = (2, 1.0, 2, 10000, "base")
SHARPNESS = {"base": 2.0, "sharp": 25.0}
OFFSET = 0.5
FIT_WARNINGS = (ConvergenceWarning, HessianInversionWarning, PerfectSeparationWarning)


@dataclass(frozen=True)
class Cell:
    k: int
    gamma: float
    d: int
    nobs: int
    variant: str
    reps: int

    @property
    def key(self) -> tuple:
        return (self.k, self.gamma, self.d, self.nobs, self.variant)

    @property
    def label(self) -> str:
        return (
            f"K={self.k} gamma={self.gamma:g} d={self.d} N={self.nobs} {self.variant}"
        )


def true_hyperplanes(k: int, d: int, sharpness: float) -> np.ndarray:
    """``(K, d + 1)`` hyperplanes ``s (r - u_k' x)``, intercept first."""
    angles = np.pi / 2 + 2 * np.pi * np.arange(k) / max(k, 3)
    normals = np.zeros((k, d))
    normals[:, 0], normals[:, 1] = np.cos(angles), np.sin(angles)
    if d > 2:
        # fixed, so every cell of a given (K, d) has the same truth
        normals[:, 2:] = 0.5 * np.random.default_rng(7).standard_normal((k, d - 2))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return sharpness * np.column_stack([np.full(k, OFFSET), -normals])


def align_experts(
    reference: np.ndarray, candidate: np.ndarray, gram: np.ndarray
) -> np.ndarray:
    """The permutation of ``candidate``'s hyperplanes (rows) that best matches
    ``reference``'s: the Hungarian algorithm on the mean squared difference of
    their scores on the data, ``(w_i - v_j)' G (w_i - v_j)`` with ``G = X'X / N``
    (units-free, unlike raw coefficients). ``candidate[perm]`` is aligned."""
    diff = reference[:, None, :] - candidate[None, :, :]
    cost = np.einsum("ijp,pq,ijq->ij", diff, gram, diff)
    return linear_sum_assignment(cost)[1]


def one_replicate(
    cell: Cell, truth: np.ndarray, seed: int, profile: bool = False, n_boot: int = 0
):
    """Aligned estimates, both standard errors, (with ``profile``) the
    profile-likelihood intervals and (with ``n_boot``) the bootstrap's
    percentile intervals and standard errors, or None if the fit failed."""
    data = simulate_plume(cell.nobs, truth, cell.gamma, random_state=seed)
    y = data.pop("y").to_numpy()
    exog = np.column_stack([np.ones(cell.nobs), data.to_numpy()])
    model = PolyhedralMixtureLogit(y, exog, k=cell.k, gamma=cell.gamma)
    res = _settled_fit(model, start_params=truth.ravel())
    if res is None:
        return None
    found = None
    if profile:
        found = _profile_intervals(res)
        if found is None:
            # the profile found a higher maximum than the fit from the truth
            # reached: the study is about the maximum, so refit from ten
            # mixed starts and keep the better fit
            again = _settled_fit(model, n_init=10, init="mixed", random_state=seed)
            if again is None or again.llf <= res.llf:
                return None
            res, found = again, _profile_intervals(again)
            if found is None:
                return None
    bse = np.asarray(res.bse)
    cov = np.asarray(res.normalized_cov_params)
    scores = res.model.score_obs(res.params)
    bse_hc0 = np.sqrt(np.diag(cov @ (scores.T @ scores) @ cov))
    gram = exog.T @ exog / cell.nobs
    perm = align_experts(truth, np.reshape(res.params, (cell.k, -1)), gram)

    def aligned(values):
        return np.reshape(values, (cell.k, -1))[perm].ravel()

    intervals = np.full((truth.size, 2), np.nan)
    if found is not None:
        intervals = np.reshape(found, (cell.k, -1, 2))[perm].reshape(-1, 2)
    boot_intervals = np.full((truth.size, 2), np.nan)
    boot_bse = np.full(truth.size, np.nan)
    if n_boot:
        # replicates refitted from the estimate, aligned to it (results.bootstrap)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            boot = res.bootstrap(n_boot=n_boot, random_state=seed)
        found = np.asarray(boot.conf_int())
        boot_intervals = np.reshape(found, (cell.k, -1, 2))[perm].reshape(-1, 2)
        boot_bse = aligned(boot.bse.to_numpy())
    return (
        aligned(res.params),
        aligned(bse),
        aligned(bse_hc0),
        intervals,
        boot_intervals,
        boot_bse,
    )


BOOTSTRAP_MAX_N = 2000


def _settled_fit(model, **options):
    """The fit, or None if it raised a fit warning or did not converge."""
    with warnings.catch_warnings():
        for category in FIT_WARNINGS:
            warnings.simplefilter("error", category)
        try:
            # the protocol of the canonical runs: no re-seating moves
            res = model.fit(**{"reseat": 0, **options})
        except (*FIT_WARNINGS, ValueError, np.linalg.LinAlgError):
            return None
    if not (res.converged and np.all(np.isfinite(np.asarray(res.bse)))):
        return None
    return res


def _profile_intervals(res):
    """The profile-likelihood intervals, or None when profiling finds a
    higher log-likelihood than the fit's (the fit is below the maximum)."""
    with warnings.catch_warnings():
        # a flat side is an infinite endpoint, which covers: counted as such
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            return np.asarray(res.conf_int(method="profile"))
        except ValueError:
            return None


def run_cell(
    cell: Cell,
    seed: int,
    profile: bool = False,
    n_boot: int = 0,
    bootstrap_max_n: int = BOOTSTRAP_MAX_N,
) -> pd.DataFrame:
    # a cell's seeds depend on the cell only, not on which others run with it
    seed0 = seed + zlib.crc32(cell.label.encode()) % 10**6 * 10**4
    truth = true_hyperplanes(cell.k, cell.d, SHARPNESS[cell.variant])
    # the bootstrap's refits at N = 10000 take ~20 s a replicate: small N only
    n_boot = n_boot if cell.nobs <= bootstrap_max_n else 0
    rows = [
        one_replicate(cell, truth, seed0 + r, profile, n_boot) for r in range(cell.reps)
    ]
    ok = [row for row in rows if row is not None]
    n_failed = cell.reps - len(ok)
    names = [
        f"h{i + 1}:{name}"
        for i in range(cell.k)
        for name in ["Intercept", *[f"x{j + 1}" for j in range(cell.d)]]
    ]
    true = truth.ravel()
    if len(ok) < 2:
        est = bse = hc0 = boot_bse = np.full((2, true.size), np.nan)
        intervals = boot_intervals = np.full((2, true.size, 2), np.nan)
    else:
        est, bse, hc0, intervals, boot_intervals, boot_bse = (
            np.array([row[i] for row in ok]) for i in range(6)
        )
    sd = est.std(axis=0, ddof=1)
    return pd.DataFrame(
        {
            "K": cell.k,
            "gamma": cell.gamma,
            "d": cell.d,
            "N": cell.nobs,
            "variant": cell.variant,
            "parameter": names,
            "true": true,
            "reps": cell.reps,
            "failed": n_failed,
            "bias": est.mean(axis=0) - true,
            "sd_est": sd,
            "coverage_oim": np.mean(np.abs(est - true) <= Z95 * bse, axis=0),
            "coverage_hc0": np.mean(np.abs(est - true) <= Z95 * hc0, axis=0),
            "se_ratio_oim": bse.mean(axis=0) / sd,
            "se_ratio_hc0": hc0.mean(axis=0) / sd,
            "coverage_profile": _interval_coverage(intervals, true),
            "coverage_boot": _interval_coverage(boot_intervals, true),
            "coverage_boot_se": np.where(
                np.isnan(boot_bse).any(axis=0),
                np.nan,
                np.mean(np.abs(est - true) <= Z95 * boot_bse, axis=0),
            ),
        }
    )


def _interval_coverage(intervals: np.ndarray, true: np.ndarray) -> np.ndarray:
    """Per parameter, the share of replicates whose interval covers ``true``
    (NaN where the intervals were not computed)."""
    covered = (intervals[..., 0] <= true) & (true <= intervals[..., 1])
    return np.where(np.isnan(intervals).any(axis=(0, 2)), np.nan, covered.mean(axis=0))


def cell_summary(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["K", "gamma", "d", "N", "variant"]
    summary = table.groupby(keys, sort=False).agg(
        reps=("reps", "first"),
        failed=("failed", "first"),
        cov_oim_min=("coverage_oim", "min"),
        cov_oim_max=("coverage_oim", "max"),
        cov_hc0_min=("coverage_hc0", "min"),
        cov_hc0_max=("coverage_hc0", "max"),
        ratio_oim_min=("se_ratio_oim", "min"),
        ratio_oim_max=("se_ratio_oim", "max"),
        ratio_hc0_min=("se_ratio_hc0", "min"),
        ratio_hc0_max=("se_ratio_hc0", "max"),
        cov_profile_min=("coverage_profile", "min"),
        cov_profile_max=("coverage_profile", "max"),
        cov_boot_min=("coverage_boot", "min"),
        cov_boot_max=("coverage_boot", "max"),
        cov_boot_se_min=("coverage_boot_se", "min"),
        cov_boot_se_max=("coverage_boot_se", "max"),
    )
    for name in ("profile", "boot", "boot_se"):  # not run with --profile, --bootstrap
        columns = [f"cov_{name}_min", f"cov_{name}_max"]
        if summary[columns[0]].isna().all():
            summary = summary.drop(columns=columns)
    # coverage within 3 Monte Carlo standard errors of 0.95 (0.921-0.979 at 500
    # replicates): a stricter band flags correct SEs by chance in a grid of
    # about 400 parameters; the SE ratio's band 0.9-1.1 is 3 of its own MC SEs
    margin = 3 * _mc_se(summary["reps"])
    ok = (
        (summary["cov_oim_min"] >= 0.95 - margin)
        & (summary["cov_oim_max"] <= 0.95 + margin)
        & (summary["ratio_oim_min"] >= 0.9)
        & (summary["ratio_oim_max"] <= 1.1)
    )
    summary["trust"] = np.where(ok, "yes", "no")
    return summary.reset_index()


def _mc_se(reps):
    """The Monte Carlo standard error of a coverage of 0.95 from ``reps``
    replicates (a number or a column of them)."""
    return np.sqrt(0.95 * 0.05 / reps)


def _fmt_table(frame: pd.DataFrame, floats: str = "{:.3f}") -> list[str]:
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    lines = [head, "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        cells = [
            floats.format(v)
            if isinstance(v, float) and not float(v).is_integer()
            else str(v)
            for v in row
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_report(table: pd.DataFrame, args, path: Path, header: list[str]) -> None:
    table.to_csv(path.with_suffix(".csv"), index=False)
    summary = cell_summary(table)
    reps = sorted(set(summary["reps"]))
    margin = 3 * _mc_se(args.reps)
    has_headline = any(
        tuple(row) == HEADLINE
        for row in summary[["K", "gamma", "d", "N", "variant"]].itertuples(index=False)
    )
    headline_reps = (
        f" (the headline cell K=2, gamma=1, d=2, N=10000 has {args.headline_reps}; "
        f"every other cell {args.reps})"
        if has_headline
        else ""
    )
    lines = [
        "# Coverage of PLUME's 95% Wald intervals",
        "",
        f"Replicates per cell: {', '.join(map(str, reps))}{headline_reps}. "
        "Monte Carlo standard error of a coverage of 0.95: "
        f"{_mc_se(args.reps):.4f} at {args.reps} replicates.",
        "",
        "Columns: coverage of the interval params +- 1.96 bse from the observed "
        "information (oim) and from the HC0 sandwich (hc0), smallest and largest "
        "over the cell's parameters; SE ratio = mean reported SE / empirical SD of "
        "the estimates. `failed`: replicates with a fit warning (left out). "
        "`trust`: every parameter's oim coverage within 3 Monte Carlo standard "
        f"errors of 0.95 ({0.95 - margin:.3f}-{0.95 + margin:.3f} at {args.reps} "
        "replicates) and SE ratio in "
        "[0.9, 1.1]. Variant `sharp` has sharpness 25 instead of 2 (near-separable). "
        "With --profile: `cov_profile`, the profile-likelihood intervals; with "
        "--bootstrap: `cov_boot`, the bootstrap's percentile intervals, and "
        "`cov_boot_se`, params +- 1.96 bootstrap SE.",
        "",
        *_fmt_table(summary),
        "",
        "## Headline cell, per parameter",
        "",
    ]
    headline = table[
        (table["K"] == 2)
        & (table["gamma"] == 1)
        & (table["d"] == 2)
        & (table["N"] == 10000)
        & (table["variant"] == "base")
    ]
    columns = [
        "parameter",
        "true",
        "bias",
        "sd_est",
        "coverage_oim",
        "coverage_hc0",
        "se_ratio_oim",
        "se_ratio_hc0",
    ]
    if len(headline):
        strict = (
            headline["coverage_oim"].between(0.93, 0.97).all()
            and headline["se_ratio_oim"].between(0.9, 1.1).all()
        )
        lines += [
            "Check: every parameter's oim coverage in [0.93, 0.97] and SE ratio in "
            f"[0.9, 1.1]: {'pass' if strict else 'FAIL'}.",
            "",
            *_fmt_table(headline[columns]),
        ]
    else:
        lines.append("(not run)")
    lines += [
        "",
        "## How it was run",
        "",
        *header,
        "- one process, BLAS limited to one thread",
        "",
    ]
    path.with_suffix(".md").write_text("\n".join(lines))
    plot(summary, path.with_suffix(".png"))


def plot(summary: pd.DataFrame, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:  # the figure is optional; the tables are the results
        return
    base = summary[summary["variant"] == "base"]
    fig, axes = plt.subplots(2, 3, figsize=(11, 6), sharex=True, sharey=True)
    for (row, gamma), (col, k) in (
        (rg, ck) for rg in enumerate((1.0, 5.0)) for ck in enumerate((1, 2, 3))
    ):
        ax = axes[row, col]
        ax.axhspan(0.93, 0.97, color="0.9")
        ax.axhline(0.95, color="0.6", lw=0.8)
        for d, colour in ((2, "C0"), (5, "C1")):
            cell = base[(base["K"] == k) & (base["gamma"] == gamma) & (base["d"] == d)]
            cell = cell.sort_values("N")
            if cell.empty:
                continue
            ax.plot(cell["N"], cell["cov_oim_min"], "o-", color=colour, label=f"d={d}")
            ax.plot(cell["N"], cell["cov_hc0_min"], "s--", color=colour, alpha=0.6)
        ax.set_xscale("log")
        # the Ns run, labelled plainly: a log axis spanning less than a decade
        # otherwise labels its minor ticks on top of each other
        ax.set_xticks(sorted(set(base["N"])), minor=False)
        ax.set_xticks([], minor=True)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_n_label))
        ax.set_title(f"K={k}, gamma={gamma:g}")
        if col == 0:
            ax.set_ylabel("worst parameter's coverage")
        if row == 1:
            ax.set_xlabel("N")
    handles = {}
    for ax in axes.flat:  # one legend for the figure, whichever panels have data
        handles.update(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles),
            title="solid: oim, dashed: HC0",
            fontsize=8,
            loc="center right",
        )
    fig.suptitle("Coverage of 95% Wald intervals (shaded: 0.93-0.97)")
    fig.tight_layout(rect=(0, 0, 0.83, 1))  # the legend's column on the right
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _n_label(value: float, _position) -> str:
    """A sample size as the axis shows it: 500, 2000, 1e4, 4e4."""
    if value < 10000:
        return f"{value:g}"
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def build_cells(args) -> list[Cell]:
    if args.quick:
        return [Cell(2, 1.0, 2, 500, "base", args.reps)]
    if args.cells:
        keys = []
        for text in args.cells:
            k, gamma, d, n, *variant = text.split(",")
            keys.append((int(k), float(gamma), int(d), int(n), *(variant or ["base"])))
    else:
        keys = [
            (k, gamma, d, n, "base")
            for k in (1, 2, 3)
            for gamma in (1.0, 5.0)
            for d in (2, 5)
            for n in (500, 2000, 10000)
        ]
        keys += [(2, 1.0, 2, n, "sharp") for n in (500, 2000, 10000)]
    # the headline first, then the cheap cells: a cut-short run keeps the most
    keys.sort(key=lambda key: (key != HEADLINE, key[3] * key[0] * key[2]))
    return [
        Cell(*key, args.headline_reps if key == HEADLINE else args.reps) for key in keys
    ]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=500, help="replicates per cell")
    parser.add_argument(
        "--headline-reps",
        type=int,
        default=2000,
        help="replicates of the headline cell K=2 gamma=1 d=2 N=10000 (2000)",
    )
    parser.add_argument(
        "--cells",
        nargs="+",
        help="cells as K,gamma,d,N[,variant], e.g. 2,1,2,10000 3,5,5,500,base",
    )
    parser.add_argument("--seed", type=int, default=20240, help="first seed")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also the coverage of the profile-likelihood intervals "
        "(conf_int(method='profile')); slower",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="B",
        help="also the coverage of the bootstrap's percentile intervals and of "
        "params +- 1.96 bootstrap SE (results.bootstrap, B replicates), in the "
        "cells with N <= --bootstrap-max-n; slow",
    )
    parser.add_argument(
        "--bootstrap-max-n",
        type=int,
        default=BOOTSTRAP_MAX_N,
        metavar="N",
        help=f"the largest N whose cells get the bootstrap (default {BOOTSTRAP_MAX_N})",
    )
    add_options(parser, quick="one small cell, 5 replicates", jobs=True)
    args = parser.parse_args(argv)
    if args.jobs != 1:
        parser.error("--jobs: only one process is supported (a shared machine)")
    if args.quick:
        args.reps = args.headline_reps = 5
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    run = Run.start("coverage", argv)
    args.output.mkdir(parents=True, exist_ok=True)
    path = args.output / stem(args, "coverage")
    tables = []
    with blas_limit(1):
        blas = blas_info()
        for cell in build_cells(args):
            tables.append(
                run_cell(
                    cell, args.seed, args.profile, args.bootstrap, args.bootstrap_max_n
                )
            )
            progress(f"{cell.label}: done ({60 * run.minutes:.0f} s)")
            # rewritten after every cell: an interrupted run keeps what it did
            header = run.header(blas=blas)
            write_report(pd.concat(tables, ignore_index=True), args, path, header)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
