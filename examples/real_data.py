"""Real data: who reports an extramarital affair? (statsmodels' ``fair`` data).

Run with ``python examples/real_data.py``; it needs matplotlib for the figure
(``pip install "plumestats[plot]"``). The data ship with statsmodels: 6366 married
women surveyed by Redbook in 1974 (Fair, 1978); the outcome is whether a woman
reported any time spent in extramarital affairs (``affairs > 0``, 32%).

The script fits logistic regression (PLUME with K = 1, which is ``Logit``) and
PLUME with K = 2 and 3 faces, compares them by AIC, BIC and a likelihood-ratio
test, reads the K = 2 hyperplanes, predicts for new profiles, and saves a figure
of P(affair | x) and of predicted against observed rates.

Options: ``--figure PATH`` (default ``real_data.png`` in the current folder),
``--k-max K`` (default 3), ``--nobs N`` (a random subsample, for a quick run).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats

import plumestats.api as ps

FORMULA = "affair ~ rate_marriage + age + yrs_married + children + religious + educ"


def load_fair(nobs: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The ``fair`` data with a 0/1 outcome ``affair``, optionally subsampled."""
    data = sm.datasets.fair.load_pandas().data
    data["affair"] = (data["affairs"] > 0).astype(int)
    if nobs is not None and nobs < len(data):
        data = data.sample(nobs, random_state=seed).reset_index(drop=True)
    return data


def compare_k(data: pd.DataFrame, k_max: int) -> dict[int, object]:
    """Fit K = 1..k_max and print the information criteria side by side."""
    fits = {
        k: ps.plume(FORMULA, data, k=k, gamma=1.0).fit() for k in range(1, k_max + 1)
    }
    table = pd.DataFrame(
        {
            "params": [res.df_modelwc for res in fits.values()],
            "llf": [res.llf for res in fits.values()],
            "AIC": [res.aic for res in fits.values()],
            "BIC": [res.bic for res in fits.values()],
            "converged": [res.converged for res in fits.values()],
        },
        index=pd.Index(list(fits), name="K"),
    )
    print(table.round(2).to_string())
    return fits


def likelihood_ratio(small, large) -> None:
    """LR test of K = 1 against K = 2; non-regular, so the p-value is indicative."""
    lr = 2.0 * (large.llf - small.llf)
    df = large.df_modelwc - small.df_modelwc
    # Under K = 1 the second face is not identified: the chi-squared reference is
    # only a rough guide (see the user guide, "Choosing K and gamma").
    print(f"LR = {lr:.1f} on {df} df, chi-squared p = {stats.chi2.sf(lr, df):.2g}")


def plot(data: pd.DataFrame, plume_res, logit_res, path: Path) -> None:
    """P(affair | x) against years married, and predicted against observed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    grid = pd.DataFrame({"yrs_married": np.linspace(0.5, 23, 60)})
    typical = data.drop(columns=["affair", "affairs", "yrs_married"]).median()
    for column, value in typical.items():
        grid[column] = value
    for rating, colour in ((2, "tab:red"), (5, "tab:blue")):
        grid["rate_marriage"] = rating
        left.plot(
            grid["yrs_married"],
            plume_res.predict(grid),
            color=colour,
            label=f"PLUME K=2, marriage rated {rating}",
        )
        left.plot(
            grid["yrs_married"],
            logit_res.predict(grid),
            color=colour,
            linestyle="--",
            label=f"Logit, marriage rated {rating}",
        )
    left.set(xlabel="years married", ylabel="P(affair | x)", ylim=(0, 1))
    left.set_title("Other features at their medians", fontsize=10)
    left.legend(fontsize=8)

    # calibration: observed rate within deciles of the predicted probability
    for res, name, marker in ((plume_res, "PLUME K=2", "o"), (logit_res, "Logit", "s")):
        predicted = np.asarray(res.predict())
        bins = pd.qcut(predicted, 10, duplicates="drop")
        rates = pd.DataFrame({"p": predicted, "y": data["affair"]}).groupby(
            bins, observed=True
        )
        right.plot(rates["p"].mean(), rates["y"].mean(), marker=marker, label=name)
    right.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
    right.set(xlabel="mean predicted probability", ylabel="observed rate")
    right.set_title("Deciles of the predicted probability", fontsize=10)
    right.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", type=Path, default=Path("real_data.png"))
    parser.add_argument("--k-max", type=int, default=3)
    parser.add_argument("--nobs", type=int, default=None)
    args = parser.parse_args(argv)
    if args.k_max < 2:
        parser.error("--k-max must be at least 2 (K = 1 is the logistic baseline)")

    data = load_fair(args.nobs)
    print(f"{len(data)} women, {data['affair'].mean():.0%} report an affair\n")

    print("Information criteria by number of faces K (gamma = 1):")
    fits = compare_k(data, args.k_max)
    logit = smf.logit(FORMULA, data).fit(disp=0)
    print(
        f"statsmodels Logit: llf {logit.llf:.2f}, AIC {logit.aic:.2f} "
        f"(PLUME K=1 is the same model: llf {fits[1].llf:.2f})\n"
    )
    likelihood_ratio(fits[1], fits[2])

    res = fits[2]
    print(f"\n{res.summary()}\n")
    print("The two faces (an affair is predicted inside both half-spaces):")
    print(res.hyperplanes.round(3).to_string())

    profiles = pd.DataFrame(
        {
            "rate_marriage": [5, 2, 2],
            "age": [27, 32, 42],
            "yrs_married": [3, 9, 16.5],
            "children": [0, 2, 3],
            "religious": [3, 1, 2],
            "educ": [16, 14, 12],
        }
    )
    profiles["P(affair) PLUME K=2"] = res.predict(profiles)
    profiles["P(affair) Logit"] = logit.predict(profiles)
    print("\nPredictions for three profiles:")
    print(profiles.round(3).to_string(index=False))

    accuracy = {
        name: np.mean((np.asarray(r.predict()) > 0.5) == data["affair"])
        for name, r in (("PLUME K=2", res), ("Logit", logit))
    }
    print(
        "\nIn-sample accuracy: "
        + ", ".join(f"{name} {value:.3f}" for name, value in accuracy.items())
    )

    plot(data, res, logit, args.figure)
    print(f"\nFigure saved to {args.figure}")


if __name__ == "__main__":
    main()
