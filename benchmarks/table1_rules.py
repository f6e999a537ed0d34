"""Replay inner-selection rules of ``table1.py`` on stored scores.

What it measures
    For every outer fold of the Table 1 protocol, the per-row validation scores
    (0/1 accuracy and log-likelihood) of every PLUME setting of ``table1.GRIDS``
    under three inner cross-validations (3-fold; 5-fold; 5-fold with another
    shuffle) and the outer test accuracy of every setting refitted on the whole
    outer training fold. A selection rule is then a function from the inner
    scores to a setting, and its nested accuracy is read off the stored outer
    scores: 72 rules cost one pass of fits.
    This is how ``table1.py``'s default (5 inner folds, validation
    log-likelihood, a polyhedron only when it beats logistic regression by more
    than one standard error, and logistic regression then fitted without
    penalty) was chosen; the table says what the alternatives score.

How
    Outer splits, fold designs, seeds and fits are ``table1.py``'s own (same
    functions), so the default rule's figures equal ``table1.py``'s plume-newton
    column on the same repeats. Rules: ``best-<c>/<f>``, the best mean score
    ``c`` (``acc`` or ``ll``) over ``f`` inner folds (``5b``: 5 folds of the
    second shuffle; ``5x2``: both 5-fold cross-validations, each row's scores
    averaged over the two, as ``table1.py --inner-repeats 2``);
    ``1se<z>-<c>/<f>``, the
    smallest K whose best setting is within ``z`` standard errors of the overall
    best on ``c``, then that K's best; ``1se<z>-<c1>,<c2>/<f>``, K by ``c1``, the
    rest by ``c2``; ``gate<z>-<c>/<f>``, the best setting on ``c`` unless it
    is a polyhedron (K >= 2) within ``z`` standard errors of the best K = 1
    setting, which is then chosen; ``gate-mle<z>-<c>/<f>``, the same, but a
    K = 1 choice is refitted without penalty (logistic regression's maximum
    likelihood: its outer scores are statsmodels' ``Logit``'s, which are
    stored) (``table1.py``'s default, ``gate-mle1-ll/5``).

Usage
    python benchmarks/table1_rules.py --jobs 2             # heart, pima, ionosphere
    python benchmarks/table1_rules.py --quick              # smoke test, seconds
    python benchmarks/table1_rules.py --gammas 0.2 0.5 1 5 # a wider gamma grid

The scores of each outer fold are cached in ``--cache-dir`` (one pickle per
fold), so an interrupted run resumes and new rules cost no refits; a fold
cached without some inner cross-validation gets only that one fitted, and a
wider grid (``--gammas``, ``--alphas``) only the settings it adds; a replay
reads the settings of its own grid. Writes ``table1_rules.md`` and
``table1_rules.csv`` to ``--output`` (``table1_rules_gammas-...`` for another
grid).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
import table1 as t1
from _datasets import DEFAULT_DATA_DIR
from _table1_fits import (
    TIE_TOLERANCE,
    FitContext,
    Grids,
    attempt,
    candidates,
    choose,
    correct,
    fit_family,
    fit_logit,
    log_likelihood_rows,
)
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

# inner cross-validations: (folds, inner repeat), shuffled as table1.py's
# inner repeats are (``table1.inner_seed``)
INNER_CVS = ((3, 0), (5, 0), (5, 1))
# a scheme's per-row scores are the row means over its cross-validations, as
# in table1.py --inner-repeats (``_table1_fits.pool_by_row``)
SCHEMES = {
    "3": ((3, 0),),
    "5": ((5, 0),),
    "5b": (INNER_CVS[2],),  # the second shuffle alone: is 5x2 just luckier?
    "5x2": ((5, 0), INNER_CVS[2]),
}
CRITERIA = {"acc": 0, "ll": 1}  # index into the stored (accuracy, log-lik) pair
DEFAULT_CACHE = Path.home() / ".cache" / "plumestats-bench" / "table1_rules"


# ------------------------------------------------------------------ scores
def fold_scores(task: tuple, stored: dict | None = None) -> dict:
    """Inner per-row scores and outer test scores of every PLUME setting.

    ``stored``: this fold's cached scores; only what is missing from them is
    fitted (an inner cross-validation, or the settings a wider grid adds), and
    what they hold is kept."""
    name, repeat, fold, data_dir, grids, n_init = task
    features, y, categorical = t1.dataset(name, data_dir)
    train, test = t1.outer_split(y, t1.DEFAULT_FOLDS, repeat, fold, seed=0)
    context = FitContext(mstep=t1.SELECTION_MSTEP, seed=0, n_init=n_init)
    settings = candidates("plume", grids)

    def scored(split, setting) -> tuple[np.ndarray, np.ndarray]:
        outcome = attempt(
            lambda: fit_family("plume", split.train, split.y_train, setting, context)
        )
        if outcome.fitted is None:  # a failed fit loses on every criterion
            worst = np.full(split.y_test.size, -np.inf)
            return worst, worst
        predicted = outcome.fitted.predict(split.test)
        return correct(split.y_test, predicted), log_likelihood_rows(
            split.y_test, predicted
        )

    scores = stored or {"n_init": n_init, "inner": {}, "outer": {}}
    for n_folds, inner_repeat in INNER_CVS:
        # per training row (position in ``train``), whichever fold held it out
        pair = scores["inner"].setdefault((n_folds, inner_repeat), ({}, {}))
        missing = [s for s in settings if s not in pair[0]]
        if not missing:
            continue
        for values in pair:
            values.update({s: np.empty(len(train)) for s in missing})
        splitter = StratifiedKFold(
            n_folds,
            shuffle=True,
            random_state=t1.inner_seed(0, repeat, fold, inner_repeat),
        )
        for fit_rows, held_out in splitter.split(np.zeros(len(train)), y[train]):
            split, _ = t1.make_split(
                features, y, categorical, train[fit_rows], train[held_out]
            )
            for setting in missing:
                accuracy, log_likelihood = scored(split, setting)
                pair[0][setting][held_out] = accuracy
                pair[1][setting][held_out] = log_likelihood
    missing = [s for s in settings if s not in scores["outer"]]
    if missing or "logit" not in scores:
        outer, _ = t1.make_split(features, y, categorical, train, test)
        scores["outer"].update({s: scored(outer, s)[0] for s in missing})
        if "logit" not in scores:
            logit = fit_logit(outer.train, outer.y_train)
            scores["logit"] = correct(outer.y_test, logit.predict(outer.test))
    scores["settings"] = list(dict.fromkeys([*scores.get("settings", ()), *settings]))
    return scores


def complete(scores: dict, settings: list) -> bool:
    """Whether a cached fold holds every score of ``settings``."""
    inner = scores["inner"]
    return (
        "logit" in scores
        and all(
            cv in inner and all(s in inner[cv][0] for s in settings) for cv in INNER_CVS
        )
        and all(s in scores["outer"] for s in settings)
    )


def cached_scores(task: tuple, cache_dir: Path) -> str:
    """Compute (or find, or complete) one fold's scores; returns a progress line."""
    name, repeat, fold, _, grids, n_init = task
    path = cache_dir / f"{name}_{repeat}_{fold}.pkl"
    stored = None
    if path.exists():
        with open(path, "rb") as handle:
            stored = pickle.load(handle)
        if stored.get("n_init") != n_init:
            stored = None  # other starts, other fits: nothing to reuse
        elif complete(stored, candidates("plume", grids)):
            return f"{path.name}: cached"
    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = fold_scores(task, stored)
    with open(path, "wb") as handle:
        pickle.dump(scores, handle)
    return f"{path.name}: {time.perf_counter() - start:.0f} s"


# ------------------------------------------------------------------ rules
def rules() -> dict[str, Callable[[dict], object]]:
    """Rule name -> function of one fold's per-row inner scores by scheme
    (:func:`pooled`)."""
    table: dict[str, Callable[[dict], object]] = {}

    def rule(n_folds, size, within, how, z=1.0):
        def apply(views):
            inner = views[n_folds]
            return choose(inner[CRITERIA[size]], how, inner[CRITERIA[within]], z)

        return apply

    for n_folds in SCHEMES:
        for c in CRITERIA:
            table[f"best-{c}/{n_folds}"] = rule(n_folds, c, c, "best")
        for z in (1, 2):
            for size in CRITERIA:
                for within in CRITERIA:
                    label = size if size == within else f"{size},{within}"
                    table[f"1se{z}-{label}/{n_folds}"] = rule(
                        n_folds, size, within, "one-se", z
                    )
            for c in CRITERIA:
                table[f"gate{z}-{c}/{n_folds}"] = rule(n_folds, c, c, "gate", z)
                table[f"gate-mle{z}-{c}/{n_folds}"] = rule(n_folds, c, c, "gate-mle", z)
    return table


def pooled(scores: dict, scheme: str, settings: list) -> tuple[dict, dict]:
    """Per-row (accuracy, log-likelihood) of each of ``settings`` (in that
    order, which breaks ties as in ``table1.py``) under ``scheme``: the row
    means over its inner cross-validations."""
    cvs = [scores["inner"][cv] for cv in SCHEMES[scheme]]
    return tuple(
        {s: np.mean([cv[i][s] for cv in cvs], axis=0) for s in settings}
        for i in CRITERIA.values()
    )


def outer_correct(scores: dict, setting) -> np.ndarray:
    """Outer per-row correctness of ``setting``; gate-mle's unpenalised K = 1
    (not in the grid) is logistic regression's maximum-likelihood fit, whose
    predictions are statsmodels' ``Logit``'s."""
    if setting in scores["outer"]:
        return scores["outer"][setting]
    if setting.k == 1 and setting.alpha == 0.0:
        return scores["logit"]
    raise KeyError(f"no outer scores of {setting.describe()}")


def replay(cache_dir: Path, tasks: list[tuple]) -> pd.DataFrame:
    """Outer accuracy per dataset, repeat and rule (Logit included)."""
    records = []
    for name, repeat, fold, _, grids, _ in tasks:
        with open(cache_dir / f"{name}_{repeat}_{fold}.pkl", "rb") as handle:
            scores = pickle.load(handle)
        base = {"dataset": name, "repeat": repeat, "n": scores["logit"].size}
        records.append({**base, "rule": "logit", "correct": scores["logit"].sum()})
        settings = candidates("plume", grids)  # the cache may hold a wider grid
        views = {scheme: pooled(scores, scheme, settings) for scheme in SCHEMES}
        for label, apply in rules().items():
            chosen = apply(views)
            records.append(
                {
                    **base,
                    "rule": label,
                    "correct": outer_correct(scores, chosen).sum(),
                    "k": chosen.k,
                }
            )
    frame = pd.DataFrame(records)
    per_repeat = frame.groupby(["dataset", "rule", "repeat"]).agg(
        correct=("correct", "sum"), n=("n", "sum"), k=("k", "mean")
    )
    per_repeat["accuracy"] = 100 * per_repeat["correct"] / per_repeat["n"]
    summary = per_repeat.groupby(["dataset", "rule"]).agg(
        accuracy=("accuracy", "mean"),
        sd=("accuracy", "std"),
        mean_k=("k", "mean"),
        repeats=("accuracy", "size"),
    )
    logit = summary.xs("logit", level="rule")["accuracy"]
    summary["minus_logit"] = (
        summary["accuracy"]
        - logit.reindex(summary.index.get_level_values("dataset")).to_numpy()
    )
    return summary.reset_index()


# ------------------------------------------------------------------ report
def best_fixed(cache_dir: Path, tasks: list[tuple]) -> dict[str, tuple[float, str]]:
    """Per dataset, the one setting with the best outer accuracy on every fold
    (mean over repeats), picked *with* the outer test folds: what the grid
    offers to a rule that used one setting throughout, not a result (it uses
    the answers; a rule that adapts per fold can do better)."""
    correct: dict[tuple, int] = {}
    sizes: dict[tuple, int] = {}
    for name, repeat, fold, _, grids, _ in tasks:
        with open(cache_dir / f"{name}_{repeat}_{fold}.pkl", "rb") as handle:
            scores = pickle.load(handle)
        sizes[name, repeat] = sizes.get((name, repeat), 0) + scores["logit"].size
        for setting in candidates("plume", grids):
            values = scores["outer"][setting]
            key = (name, repeat, setting)
            correct[key] = correct.get(key, 0) + int(values.sum())
    accuracy: dict[tuple, list[float]] = {}
    for (name, repeat, setting), hits in correct.items():
        accuracy.setdefault((name, setting), []).append(
            100 * hits / sizes[name, repeat]
        )
    best: dict[str, tuple[float, str]] = {}
    for (name, setting), values in accuracy.items():
        mean = float(np.mean(values))
        if name not in best or mean > best[name][0] + TIE_TOLERANCE:
            best[name] = (mean, setting.describe())
    return best


def report(
    summary: pd.DataFrame,
    command: str,
    seconds: float,
    n_init: int,
    n_folds: int,
    fixed: dict[str, tuple[float, str]],
    grids: Grids,
) -> str:
    """The Markdown report: one row per rule, one column pair per dataset."""
    wide = summary.pivot(
        index="rule", columns="dataset", values=["accuracy", "minus_logit"]
    )
    datasets = sorted(summary["dataset"].unique())
    repeats = summary.groupby("dataset")["repeats"].max().to_dict()
    lines = [
        "# Table 1: inner-selection rules replayed on stored scores",
        "",
        f"- date: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}; command: `{command}`; "
        f"run time {seconds / 60:.1f} min",
        f"- outer: stratified 10-fold CV ({n_folds} of the 10 folds), repeats "
        + ", ".join(f"{d} {repeats[d]}" for d in datasets)
        + f"; PLUME grid: K in {grids.ks}, gamma in {grids.gammas}, alpha in "
        f"{grids.alphas}, inside class in {grids.insides}; designs, seeds and fits "
        f"as `table1.py` (Newton M-step, {n_init} k-means start(s) at K >= 2)",
        "- a rule's accuracy: mean over repeats of the outer accuracy of the "
        "setting it picks on each fold; *- Logit*: minus statsmodels' Logit on the "
        "same folds, in points",
        "",
        "| rule | " + " | ".join(f"{d} % | {d} - Logit" for d in datasets) + " |",
        "|---|" + "---|---|" * len(datasets),
    ]
    order = wide["minus_logit"].min(axis=1).sort_values(ascending=False).index
    for rule in order:
        accuracy, minus_logit = wide["accuracy"], wide["minus_logit"]
        cells = [
            f"{accuracy.loc[rule, d]:.2f} | {minus_logit.loc[rule, d]:+.2f}"
            for d in datasets
        ]
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Best fixed setting per dataset (one setting on every fold, picked *with* "
        "the outer test folds: it uses the answers, so it is not a result): "
        + "; ".join(f"{d} {fixed[d][0]:.2f} ({fixed[d][1]})" for d in datasets),
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument(
        "--datasets", nargs="+", default=["heart", "pima", "ionosphere"]
    )
    parser.add_argument(
        "--repeats",
        nargs="+",
        default=["3"],
        help="outer repeats: N for every dataset, and/or NAME=N for one "
        "(e.g. 3 ionosphere=2); default 3",
    )
    parser.add_argument(
        "--gammas",
        type=float,
        nargs="+",
        help=f"PLUME's gamma grid (default {t1.GRIDS.gammas}, as table1.py); "
        "another grid writes table1_rules_<grid>.*, and the cache gains only "
        "the settings it adds",
    )
    parser.add_argument(
        "--alphas",
        type=float,
        nargs="+",
        help=f"PLUME's alpha grid (default {t1.GRIDS.alphas}), as --gammas",
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--output", type=Path, default=t1.RESULTS_DIR)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: heart, 1 repeat, 2 outer folds, K in (1, 2), one gamma "
        "and alpha, one start",
    )
    return parser.parse_args(argv)


def repeats_per_dataset(values: list[str], datasets: list[str]) -> dict[str, int]:
    """``["3", "ionosphere=2"]`` -> ``{"heart": 3, ..., "ionosphere": 2}``."""
    default, named = 3, {}
    for value in values:
        name, _, count = value.rpartition("=")
        if name:
            named[name] = int(count)
        else:
            default = int(count)
    return {name: named.get(name, default) for name in datasets}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    grids, n_init, folds = t1.GRIDS, t1.DEFAULT_N_INIT, range(t1.DEFAULT_FOLDS)
    if args.quick:
        grids = replace(t1.QUICK_GRIDS, alphas=(1e-3, 1e-2))
        n_init, folds, args.datasets, args.repeats = 1, range(2), ["heart"], ["1"]
    stem = "table1_rules_quick" if args.quick else "table1_rules"
    for field in ("gammas", "alphas"):
        values = getattr(args, field)
        if values and tuple(values) != getattr(grids, field):
            grids = replace(grids, **{field: tuple(values)})
            stem += f"_{field}-" + "-".join(f"{value:g}" for value in values)
    repeats = repeats_per_dataset(args.repeats, args.datasets)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    args.output.mkdir(parents=True, exist_ok=True)
    tasks = [
        (name, repeat, fold, args.data_dir, grids, n_init)
        for name in args.datasets
        for repeat in range(repeats[name])
        for fold in folds
    ]
    with Pool(args.jobs) as pool:
        work = pool.imap_unordered(
            partial(cached_scores, cache_dir=args.cache_dir), tasks
        )
        for number, line in enumerate(work, 1):
            print(f"[{number}/{len(tasks)}] {line}", file=sys.stderr, flush=True)
    summary = replay(args.cache_dir, tasks)
    summary.to_csv(args.output / f"{stem}.csv", index=False)
    command = "python benchmarks/table1_rules.py " + " ".join(argv or sys.argv[1:])
    (args.output / f"{stem}.md").write_text(
        report(
            summary,
            command.strip(),
            time.perf_counter() - start,
            n_init,
            len(folds),
            best_fixed(args.cache_dir, tasks),
            grids,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
