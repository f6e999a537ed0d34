"""Label noise on simulated polytopes: PLUME's bias, and a likelihood without it.

What it measures
    On polytopes with a share ``noise`` of labels flipped at random
    (``simulate_polyhedron``), PLUME's maximum-likelihood faces sit outside the
    true ones: the logistic experts cannot flatten to the noise floor, so the
    flipped points far from the polytope pull its faces outwards. This probe
    refits the same data under the label-flip (contamination) likelihood

    .. math:: P(y \\mid x) = \\varepsilon + (1 - 2\\varepsilon)\\, p_{PLUME}(y \\mid x),

    with the flip rate :math:`\\varepsilon \\in (0, 1/2)` estimated with the
    hyperplanes (Copas 1988 for logistic regression; the package's
    ``LabelFlipPolyhedralLogit``), and reports test accuracy, the estimated
    flip rate with its 95% interval and the mean outward shift of the faces,
    beside the
    true polytope and the tuned RBF SVM (read from ``polyhedral.py``'s committed
    ``polyhedral.csv``: same simulation and seed).

How
    One seed per setting; 2000 training and 10000 test points, as in
    ``polyhedral.py``. PLUME: ``fit(n_init=3)`` at gamma 1 without penalty.
    Label flips: ``LabelFlipPolyhedralLogit(...).fit(n_init=3,
    random_state=0, alpha=1e-6)`` (each penalised PLUME run starts a label-flip
    run at :math:`\\varepsilon = 0.05`, the best is kept); the small penalty
    is needed because, once the flips explain the wrong labels, the rest of a
    hard polytope's labels are separable (the faces would sharpen for ever).
    No hyper-parameter is tuned.
    Face shift: the fitted faces are matched to the true ones by the Hungarian
    algorithm on the cosine of their unit normals; shift = mean of the fitted
    minus the true offset (positive: outwards).

Usage
    python benchmarks/label_noise.py             # d = 2, K in {2, 4, 6}, noise 5%, 10%
    python benchmarks/label_noise.py --quick     # one setting, seconds

Prints a Markdown table and writes it to ``--output`` (default
``benchmarks/results/label_noise.md``; ``--quick`` writes nothing).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from plumestats import LabelFlipPolyhedralLogit, PolyhedralMixtureLogit
from plumestats._likelihood import compute_terms
from plumestats.datasets import simulate_polyhedron

sys.path.insert(0, str(Path(__file__).resolve().parent))
from polyhedral import matched_hyperplanes

RESULTS = Path(__file__).resolve().parent / "results" / "label_noise.md"
# the tuned RBF SVM's test accuracy on the same data (same simulation, seed 0)
POLYHEDRAL_CSV = Path(__file__).resolve().parent / "results" / "polyhedral.csv"
GAMMA = 1.0
N_TRAIN, N_TEST = 2000, 10000


def design(data, d: int) -> np.ndarray:
    return np.column_stack(
        [np.ones(len(data)), data[[f"x{j + 1}" for j in range(d)]].to_numpy()]
    )


def log_prob(weights: np.ndarray, x: np.ndarray, y_pm: np.ndarray, k: int):
    """PLUME's per-row log P(y | x) at hyperplane-major ``weights``."""
    scores = x @ weights.reshape(k, -1).T
    return compute_terms(scores, y_pm, GAMMA).loglikeobs


FLIP_ALPHA = 1e-6


def fit_contaminated(x, y, k: int):
    """``LabelFlipPolyhedralLogit`` with PLUME's restarts (each PLUME run
    starts a label-flip run at eps = 0.05; the best label-flip fit is kept)."""
    model = LabelFlipPolyhedralLogit(y, x, k=k, gamma=GAMMA)
    return model.fit(n_init=3, random_state=0, alpha=FLIP_ALPHA)


def face_shift(weights: np.ndarray, truth: np.ndarray) -> float:
    """Mean outward shift of the fitted faces (unit normals) vs the true ones."""
    unit, true = matched_hyperplanes(weights, truth)
    return float(np.mean(unit[:, 0] - true[:, 0]))


def run(d: int, k: int, noise: float) -> dict:
    data, truth = simulate_polyhedron(N_TRAIN + N_TEST, d, k, noise, random_state=0)
    x, y = design(data, d), data["y"].to_numpy()
    train, test = slice(0, N_TRAIN), slice(N_TRAIN, None)
    true_inside = (x[test] @ truth.to_numpy().T).min(axis=1) >= 0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = PolyhedralMixtureLogit(y[train], x[train], k=k, gamma=GAMMA).fit(
            n_init=3, random_state=0
        )
        plume = np.asarray(res.params)
        flips = fit_contaminated(x[train], y[train], k)
    seconds = time.perf_counter() - start
    weights = np.asarray(flips.params)[:-1]

    def accuracy(w):
        inside = np.exp(log_prob(w, x[test], np.ones(N_TEST), k)) >= 0.5
        return float(np.mean(inside == y[test]))

    return {
        "d": d,
        "K": k,
        "noise": noise,
        "true": float(np.mean(true_inside == y[test])),
        "plume": accuracy(plume),
        "contaminated": accuracy(weights),
        "eps": flips.flip_rate,
        "eps_ci": flips.flip_rate_conf_int(),
        "converged": flips.converged,
        "shift_plume": face_shift(plume.reshape(k, -1), truth.to_numpy()),
        "shift_contaminated": face_shift(weights.reshape(k, -1), truth.to_numpy()),
        "seconds": seconds,
    }


def svm_accuracy(d: int, k: int, noise: float) -> float:
    """The tuned RBF SVM's test accuracy in ``polyhedral.py``'s committed run."""
    if not POLYHEDRAL_CSV.exists():
        return np.nan
    runs = pd.read_csv(POLYHEDRAL_CSV)
    match = runs[
        (runs["d"] == d)
        & (runs["k"] == k)
        & np.isclose(runs["noise"], noise)
        & (runs["seed"] == 0)
        & (runs["method"] == "SVM (RBF)")
    ]
    return float(match["test_accuracy"].iloc[0]) if len(match) else np.nan


def provenance() -> str:
    """Versions and the commit the run measured."""
    import scipy

    import plumestats

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        check=False,
    ).stdout.strip()
    return (
        f"plumestats {plumestats.__version__} (git {commit or 'unknown'}), "
        f"numpy {np.__version__}, scipy {scipy.__version__}"
    )


def table(rows: list[dict]) -> str:
    lines = [
        "| d | K | noise | true polytope | PLUME | label flips | RBF SVM "
        "| eps (95% CI) | face shift PLUME | face shift label flips | converged "
        "| s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['d']} | {r['K']} | {r['noise']:.2f} | {r['true']:.4f} | "
            f"{r['plume']:.4f} | {r['contaminated']:.4f} | "
            f"{svm_accuracy(r['d'], r['K'], r['noise']):.4f} | {r['eps']:.3f} "
            f"({r['eps_ci'][0]:.3f}-{r['eps_ci'][1]:.3f}) | "
            f"{r['shift_plume']:+.3f} | {r['shift_contaminated']:+.3f} | "
            f"{r['converged']} | {r['seconds']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one setting")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    settings = (
        [(2, 2, 0.1)]
        if args.quick
        else [(2, k, noise) for noise in (0.05, 0.1) for k in (2, 4, 6)]
    )
    rows = []
    for setting in settings:
        rows.append(run(*setting))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)
    if not args.quick:
        command = "python benchmarks/label_noise.py"
        header = (
            "# Label noise: PLUME against the label-flip likelihood\n\n"
            f"- command: `{command}`; date: {time.strftime('%Y-%m-%d %H:%M %Z')}\n"
            f"- {provenance()}\n"
            "- one seed, 2000 train / 10000 test, gamma 1; PLUME without "
            f"penalty, label flips (`LabelFlipPolyhedralLogit`) alpha "
            f"{FLIP_ALPHA:g}; s: both fits; "
            "accuracy on the (noisy) test labels; face shift: mean fitted minus "
            "true offset of the matched unit-normal faces (positive: outwards)\n\n"
        )
        args.output.write_text(header + text + "\n")
        print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
