"""The default fit does not depend on the order or the units of the features
(issue 29): the engine standardises the design, and the starts are computed
on the standardised columns, so a reordered or rescaled design is the same
problem. A factor recoded to another reference level is the same problem too
since the penalty, the starts' distances and Newton's damping measure a term
of several columns by its columns' moments: tests/test_penalty.py."""

from __future__ import annotations

import numpy as np
import pytest

import plumestats.api as ps


@pytest.fixture(scope="module")
def data():
    frame, _ = ps.simulate_polyhedron(400, d=3, k=3, noise=0.1, random_state=4)
    frame["g"] = np.random.default_rng(4).choice(["a", "b", "c"], len(frame))
    return frame


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("alpha", [0.0, 1e-3])
def test_reordered_columns_give_the_same_maximum(data, k, alpha):
    a = ps.plume("y ~ x1 + x2 + x3 + C(g)", data, k=k).fit(alpha=alpha)
    b = ps.plume("y ~ C(g) + x3 + x2 + x1", data, k=k).fit(alpha=alpha)
    assert b.llf == pytest.approx(a.llf, abs=1e-8)
    np.testing.assert_allclose(b.params[a.params.index], a.params, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("alpha", [0.0, 1e-3])
def test_rescaled_columns_give_the_same_maximum(data, k, alpha):
    a = ps.plume("y ~ x1 + x2 + x3 + C(g)", data, k=k).fit(alpha=alpha)
    scaled = data.assign(x1=data["x1"] * 1000.0, x3=data["x3"] / 7.0)
    b = ps.plume("y ~ x1 + x2 + x3 + C(g)", scaled, k=k).fit(alpha=alpha)
    assert b.llf == pytest.approx(a.llf, abs=1e-8)
    expected = a.params.copy()
    for face in range(1, k + 1):
        expected[f"h{face}:x1"] /= 1000.0
        expected[f"h{face}:x3"] *= 7.0
    np.testing.assert_allclose(b.params, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("value", [1e-8, 1e-6, 1e7, 1e8])
def test_the_constant_columns_value_gives_the_same_maximum(data, value):
    # an intercept column of 1e-8 or 1e8 is the same model as one of 1: the
    # engine divides it by its value (before, it kept it, and the fits at
    # 1e-8 and 1e7 ended 150 to 250 log-likelihood units lower, and at 1e-6
    # a refit from the fit's own params was refused as "far beyond the scale
    # of the data")
    exog = np.column_stack([np.ones(len(data)), data[["x1", "x2", "x3"]]])
    y = data["y"].to_numpy()
    one = ps.PolyhedralMixtureLogit(y, exog, k=3).fit(random_state=0)
    model = ps.PolyhedralMixtureLogit(y, exog * [value, 1, 1, 1], k=3)
    other = model.fit(random_state=0)
    assert other.llf == pytest.approx(one.llf, abs=1e-8)
    np.testing.assert_allclose(model.predict(other.params), one.predict(), atol=1e-10)
    intercepts = np.arange(0, 12, 4)
    np.testing.assert_allclose(
        other.params[intercepts] * value, one.params[intercepts], rtol=1e-6
    )
    assert model.fit(start_params=other.params).llf == pytest.approx(one.llf, abs=1e-8)
