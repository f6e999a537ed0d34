"""Quick start: fit PLUME to points inside a simulated polygon and read the report.

Run with ``python examples/quickstart.py``. No download needed: the data are
simulated from a known polygon with three faces, with 3% of the labels flipped.
"""

from __future__ import annotations

import numpy as np
import statsmodels.formula.api as smf

import plumestats.api as ps


def main(nobs: int = 3000, seed: int = 2019) -> None:
    data, truth = ps.simulate_polyhedron(nobs, d=2, k=3, noise=0.03, random_state=seed)
    print(f"{nobs} points; {data['y'].mean():.0%} inside a polygon with 3 faces\n")

    # y = 1 is the inside of the polyhedron {x : min_k h_k'[1, x] >= 0}
    results = ps.plume("y ~ x1 + x2", data, k=3, gamma=1.0).fit()
    print(results.summary())

    print("\nFitted hyperplanes, scaled to unit normals, next to the truth:")
    fitted = results.hyperplanes
    norms = np.linalg.norm(fitted[["x1", "x2"]], axis=1, keepdims=True)
    print((fitted / norms).round(3).to_string())
    print(truth.round(3).to_string())

    logit = smf.logit("y ~ x1 + x2", data).fit(disp=0)
    accuracy = np.mean((results.predict() > 0.5) == data["y"])
    logit_accuracy = np.mean((logit.predict() > 0.5) == data["y"])
    print(
        f"\nIn-sample accuracy: PLUME (K=3) {accuracy:.3f}, logistic regression "
        f"{logit_accuracy:.3f}"
    )
    print(f"AIC: PLUME {results.aic:.1f}, logistic regression {logit.aic:.1f}")
    print(f"\n{results.rademacher_bound(delta=0.05)}")


if __name__ == "__main__":
    main()
