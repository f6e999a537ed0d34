"""Known polyhedra are recovered from simulated data."""

from __future__ import annotations

import numpy as np
import pytest

import plumestats.api as ps

N_TRAIN = 5000


def _unit_rows(matrix):
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.mark.parametrize("d", [2, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_true_hyperplanes_are_recovered(d, seed):
    data, truth = ps.simulate_polyhedron(
        N_TRAIN + 20000, d=d, k=3, noise=0.02, random_state=seed
    )
    train, test = data.iloc[:N_TRAIN], data.iloc[N_TRAIN:]
    formula = "y ~ " + " + ".join(f"x{j + 1}" for j in range(d))
    res = ps.plume(formula, train, k=3).fit()
    assert res.converged

    # every true hyperplane has a fitted one within cosine 0.98 (scale-free)
    cosines = _unit_rows(truth.to_numpy()) @ _unit_rows(res.hyperplanes.to_numpy()).T
    assert cosines.max(axis=1).min() >= 0.98
    # ... and the matching is one-to-one
    assert len(set(cosines.argmax(axis=1))) == 3

    design = np.column_stack([np.ones(len(test)), test.drop(columns="y")])
    truly_inside = (design @ truth.to_numpy().T).min(axis=1) >= 0
    true_accuracy = np.mean(truly_inside == test["y"].to_numpy())
    fitted_accuracy = np.mean((res.predict(test) > 0.5) == test["y"].to_numpy())
    assert fitted_accuracy >= true_accuracy - 0.015
    # the decision function agrees with the predicted class
    inside = np.asarray(res.decision_function(test)) >= 0
    assert np.mean(inside == (res.predict(test) > 0.5)) > 0.99
