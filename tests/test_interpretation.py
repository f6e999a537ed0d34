"""Interpretation helpers against hand computations from the hyperplanes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, softmax

import plumestats.api as ps


@pytest.fixture(scope="module")
def fit():
    data, _ = ps.simulate_polyhedron(900, d=2, k=3, noise=0.05, random_state=21)
    data.index = [f"r{i}" for i in range(len(data))]
    data["outcome"] = np.where(data["y"] == 1, "in", "out")
    return data, ps.plume("y ~ x1 + x2", data, k=3, gamma=1.5).fit()


def _scores(results, frame):
    exog = np.column_stack([np.ones(len(frame)), frame[["x1", "x2"]]])
    return exog @ results.hyperplanes.to_numpy().T


def test_gate_probabilities_are_the_softmax_of_scores(fit):
    data, results = fit
    expected = softmax(-1.5 * _scores(results, data), axis=1)
    gate = results.gate_probabilities()
    assert list(gate.columns) == ["h1", "h2", "h3"]
    assert_allclose(gate.to_numpy(), expected, rtol=1e-12, atol=1e-15)
    new = data.iloc[:5]
    on_new = results.gate_probabilities(new)
    assert list(on_new.index) == list(new.index)
    assert_allclose(on_new.to_numpy(), expected[:5], rtol=1e-12, atol=1e-15)


def test_active_face_is_the_smallest_score(fit):
    data, results = fit
    expected = np.argmin(_scores(results, data), axis=1)
    face = results.active_face()
    assert_array_equal(np.asarray(face), expected)
    new = data.iloc[:6].copy()
    new.iloc[2, new.columns.get_loc("x1")] = np.nan
    on_new = results.active_face(new)
    assert on_new.iloc[2] == -1
    assert_array_equal(on_new.drop(new.index[2]), np.delete(expected[:6], 2))


def test_responsibilities_are_the_em_posterior(fit):
    data, results = fit
    scores = _scores(results, data)
    y_pm = 2.0 * data["y"].to_numpy() - 1.0
    joint = softmax(-1.5 * scores, axis=1) * expit(y_pm[:, None] * scores)
    expected = joint / joint.sum(axis=1, keepdims=True)
    resp = results.responsibilities()
    assert list(resp.index) == list(data.index)
    assert_allclose(resp.to_numpy(), expected, rtol=1e-10, atol=1e-14)


def test_face_shares_count_owned_points_by_class(fit):
    data, results = fit
    owner = np.argmin(_scores(results, data), axis=1)
    table = pd.crosstab(owner, data["y"]).reindex(range(3), fill_value=0)
    shares = results.face_shares()
    assert list(shares.index) == ["h1", "h2", "h3"]
    assert_array_equal(shares["nobs"], table.sum(axis=1))
    assert_array_equal(shares["n_0"], table[0])
    assert_array_equal(shares["n_1"], table[1])
    assert_allclose(shares["share"].sum(), 1.0)
    assert_allclose(shares["frac_1"], table[1] / table.sum(axis=1))
    gate_share = softmax(-1.5 * _scores(results, data), axis=1).mean(axis=0)
    assert_allclose(shares["gate_share"], gate_share, rtol=1e-12)
    # experts are reported by decreasing gate share
    assert np.all(np.diff(shares["gate_share"]) <= 0)


def test_string_outcome_labels_and_hard_model(fit):
    data, _ = fit
    results = ps.spla1("outcome ~ x1 + x2", data, k=3, inside="in").fit()
    shares = results.face_shares()
    assert {"n_in", "n_out"} <= set(shares.columns)
    gate = results.gate_probabilities().to_numpy()
    # hard gating: the gate is the indicator of the owning face
    assert_array_equal(gate.argmax(axis=1), np.asarray(results.active_face()))
    assert_array_equal(gate.sum(axis=1), 1.0)
    assert_allclose(results.responsibilities().to_numpy(), gate)


def test_array_interface_returns_arrays():
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=3)
    exog = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    results = ps.PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
    assert isinstance(results.gate_probabilities(), np.ndarray)
    assert results.responsibilities().shape == (400, 2)
    assert results.active_face(exog[:3]).shape == (3,)
    results.remove_data()
    # these take no new data: the remedy is a refit, not "pass exog"
    for needs_sample in (results.face_shares, results.responsibilities):
        with pytest.raises(ValueError, match="remove_data") as raised:
            needs_sample()
        assert "pass exog" not in str(raised.value)
    with pytest.raises(ValueError, match="pass exog"):
        results.active_face()
    assert results.active_face(exog[:3]).shape == (3,)
