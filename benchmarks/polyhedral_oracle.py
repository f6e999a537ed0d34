"""How close to the true polytope can 2000 points get? PLUME against an oracle.

What it measures
    On one setting of ``polyhedral.py`` (default the one PLUME misses: d = 10,
    K = 6, no label noise) and several seeds, the test-accuracy gap to the true
    polytope of three estimates:

    - **PLUME**, fitted as the suite fits it (true K, ``n_init=3`` k-means
      starts), at every gamma and alpha of the grid;
    - **an oracle** that is told which true face owns each training point
      (``argmin_k h_k'[1, x]``). Face k is then an ordinary logistic
      regression: every inside point is on its positive side and every outside
      point it owns on its negative side, and nothing else in the sample says
      anything about it. The oracle fits those K regressions (plumestats with
      K = 1, the same L2 penalty ``alpha``) and classifies by
      ``min_k w_k'[1, x] >= 0``;
    - **a Bayes oracle**, told the owners too, that does not fit the faces
      but averages over every face the sample allows. Under a flat prior on
      the direction of face k, its posterior given noise-free labels is
      uniform on the hyperplanes that put all its rows on the right side (its
      version space); ``_version_space.py`` samples it. Given the owners (and
      using, like the first oracle, only each face's rows) the faces'
      posteriors are independent, so a test point is inside with
      posterior probability the product over faces of the share of draws
      that put it inside, and the vote ``>= 0.5`` is the Bayes-optimal
      classifier under that prior: averaged over that prior, no learner with
      less information does better. (The simulation's own prior is
      narrower: one offset shared by unit normals.)

    The oracles have information no learner has, and the first one's alpha is
    also reported at its best *on the test set*. If even they miss the true
    polytope by more than a point, the miss belongs to the sample size, not to
    PLUME.

How
    ``make_split`` of ``polyhedral.py`` (the suite's simulation, split and test set) for
    seeds ``0..--seeds - 1``; test accuracy classifies PLUME by
    P(y=1|x) >= 0.5, as the suite does; gap = accuracy minus the true
    polytope's accuracy, in points. "best" rows take, per seed, the largest gap
    over the grid, which uses the test labels: an upper bound on what a
    selection on the training set could choose.

Usage
    python -m benchmarks.polyhedral_oracle                 # d=10, K=6, 5 seeds
    python -m benchmarks.polyhedral_oracle --d 10 --k 4    # a setting PLUME passes
    python -m benchmarks.polyhedral_oracle --quick         # a few seconds

Prints Markdown and writes it to ``polyhedral_oracle.md`` in ``--output``
(default ``benchmarks/results``; ``--quick`` writes
``polyhedral_oracle_quick.md``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from plumestats.api import PolyhedralMixtureLogit

from ._common import Run, add_options, blas_info, blas_limit, stem, write_report
from ._polyhedral_fits import Setting, Split, accuracy, make_split
from ._version_space import sample_version_space

TITLE = "Polyhedral suite: PLUME against an oracle that knows the faces"


def face_samples(split: Split) -> list[np.ndarray]:
    """Per true face, the training rows that bear on it: every inside point and
    the outside points that face owns (``argmin_k h_k'[1, x]``)."""
    x = split.x_train.to_numpy(dtype=float)
    inside = split.y_train == 1
    owner = np.argmin(x @ split.truth.to_numpy(dtype=float).T, axis=1)
    return [inside | (owner == k) for k in range(split.truth.shape[0])]


def oracle_hyperplanes(split: Split, alpha: float) -> np.ndarray:
    """The K hyperplanes (rows ``[intercept, slopes]``) fitted face by face,
    each on the inside points and the outside points its true face owns."""
    rows = []
    for mine in face_samples(split):
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


def bayes_oracle_gaps(
    split: Split, draws: int, thin: int, burn_in: int, seed: int
) -> dict[str, float]:
    """Test-accuracy gaps of the Bayes oracle, in points.

    Face k's posterior under a flat prior on its direction is uniform on the
    version space of its training rows (``_version_space.py``); given the
    owners the K posteriors are independent, so the posterior probability that
    a test point is inside is the product over faces of the share of draws
    that put it on the inside. ``vote`` classifies by that product >= 0.5 (the
    Bayes-optimal decision under this prior), also with only the first quarter
    of the draws as a check of the chain; ``point`` by the polytope of the
    faces' mean draws (the Bayes point).
    """
    x = split.x_train.to_numpy(dtype=float)
    sign = np.where(split.y_train == 1, 1.0, -1.0)[:, None]
    test = split.x_test.to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    counts = (draws // 4, draws)
    inside_probability = {n: np.ones(len(test)) for n in counts}
    bayes_points = []
    for mine in face_samples(split):
        sample = sample_version_space(
            sign[mine] * x[mine], draws, thin=thin, burn_in=burn_in, rng=rng
        )
        votes = test @ sample.T >= 0
        for n in counts:
            inside_probability[n] *= votes[:, :n].mean(axis=1)
        bayes_points.append(sample.mean(axis=0))
    polytope = (test @ np.array(bayes_points).T).min(axis=1) >= 0
    gaps = {
        f"Bayes oracle, vote of {n} draws": accuracy(split.y_test, p >= 0.5)
        for n, p in inside_probability.items()
    }
    gaps["Bayes oracle, Bayes point"] = accuracy(split.y_test, polytope)
    return {name: 100 * (acc - split.true_accuracy) for name, acc in gaps.items()}


def plume_gap(split: Split, k: int, gamma: float, alpha: float, seed: int) -> float:
    """Test-accuracy gap of PLUME, fitted as ``polyhedral.py`` fits it."""
    model = PolyhedralMixtureLogit(split.y_train, split.x_train, k=k, gamma=gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the suite's protocol: three starts, no re-seating moves
        res = model.fit(alpha=alpha, n_init=3, random_state=seed, reseat=0)
    inside = np.asarray(res.predict(split.x_test)) >= 0.5
    return 100 * (accuracy(split.y_test, inside) - split.true_accuracy)


def table(args: argparse.Namespace) -> list[str]:
    """Every gap, as Markdown lines (one row per estimate, one column per seed)."""
    seeds = list(range(args.seeds))
    oracle: dict[str, list[float]] = {}
    bayes: dict[str, list[float]] = {}
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
        if args.draws:
            gaps = bayes_oracle_gaps(split, args.draws, args.thin, args.burn_in, seed)
            for name, gap in gaps.items():
                bayes.setdefault(name, []).append(gap)
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
    for name, row in [*oracle.items(), *bayes.items(), *plume.items(), *best.items()]:
        cells = " | ".join(f"{g:+.2f}" for g in row)
        bold = "**" if name in best else ""
        lines.append(f"| {bold}{name}{bold} | {cells} | {np.mean(row):+.2f} |")
    print("\n".join(lines), flush=True)
    return lines


def add_chain_options(parser: argparse.ArgumentParser, draws_help: str = "") -> None:
    """The Bayes oracle's sampler options: draws per face, thinning, burn-in."""
    parser.add_argument(
        "--draws",
        type=int,
        default=2000,
        help=f"draws per face for the Bayes oracle {draws_help}".strip(),
    )
    parser.add_argument("--thin", type=int, default=10, help="steps per draw")
    parser.add_argument("--burn-in", type=int, default=2000, help="steps")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--gammas", type=float, nargs="+", default=[1.0, 5.0])
    add_options(parser, quick="d=2, K=2, seconds", blas_threads=1)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..n-1")
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument(
        "--alphas",
        type=float,
        nargs="+",
        default=[1e-4, 1e-5, 1e-6, 1e-7],
        help="L2 penalties (per observation, as fit(alpha=...))",
    )
    add_chain_options(
        parser, draws_help="(0: no Bayes oracle; it needs noise-free labels)"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.d, args.k, args.seeds, args.n_train, args.n_test = 2, 2, 2, 300, 1000
        args.gammas, args.alphas, args.draws, args.burn_in = [1.0], [1e-4], 200, 200
    if args.noise > 0 and args.draws:
        parser.error(
            "the Bayes oracle samples the hyperplanes that fit every label, which "
            "noisy labels leave empty: add --draws 0 with --noise"
        )
    return args


def details(args: argparse.Namespace) -> list[str]:
    """The bullets of the report that describe this run."""
    return [
        f"setting: d={args.d}, K={args.k}, noise={args.noise:g}, "
        f"{args.n_train} training and {args.n_test} test points per seed "
        "(`make_split` of the polyhedral suite)",
        "oracle: told which true face owns each training point; face k is a "
        "logistic regression (plumestats, K = 1, L2 penalty alpha) of the inside "
        "points against the outside points face k owns; classifies by "
        "`min_k w_k'[1, x] >= 0`",
        *(
            [
                "Bayes oracle: told the owners too; face k's posterior under a "
                "flat prior on its direction is uniform on the hyperplanes that "
                "fit its rows (its version space), sampled by hit-and-run "
                f"(`_version_space.py`; {args.draws} draws per face, every "
                f"{args.thin}th step after {args.burn_in} of burn-in, seed = "
                "the data's); *vote*: inside when the product over faces of the "
                "share of draws that put the point inside is >= 0.5 (the "
                "Bayes-optimal decision under that prior; also with a quarter "
                "of the draws, as a check of the chain); *Bayes point*: the "
                "polytope of the faces' mean draws"
            ]
            if args.draws
            else []
        ),
        "PLUME: true K, `fit(alpha=a, n_init=3, random_state=seed)`, classifies "
        "by P(y=1|x) >= 0.5, as the suite",
        "cells: test accuracy minus the true polytope's, in points; **best** rows "
        "pick per seed with the test labels, an upper bound on any selection",
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = Run.start("polyhedral_oracle", argv)
    with blas_limit(args.blas_threads):
        blas = blas_info()  # the threads of the fits
        lines = table(args)
    header = [f"# {TITLE}", "", *run.header(blas=blas)]
    header += [f"- {line}" for line in details(args)]
    write_report(
        args.output / f"{stem(args, 'polyhedral_oracle')}.md",
        "\n".join([*header, "", *lines]),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
