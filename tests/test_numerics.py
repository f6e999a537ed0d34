"""Stable by construction: extreme but finite inputs give finite answers, no
warnings (the suite turns RuntimeWarning into errors)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import logistic_data

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit


def _model(k=3, gamma=1.0, seed=0, nobs=60):
    rng = np.random.default_rng(seed)
    exog = np.column_stack([np.ones(nobs), rng.standard_normal((nobs, 2))])
    y = (rng.random(nobs) < 0.5).astype(float)
    return PolyhedralMixtureLogit(y, exog, k=k, gamma=gamma)


@pytest.mark.parametrize("magnitude", [1e3, 1e8, 1e150, 1e300])
@pytest.mark.parametrize("gamma", [1e-4, 1.0, 1e3])
def test_huge_parameters_give_finite_or_minus_inf_loglike(magnitude, gamma):
    model = _model(gamma=gamma)
    params = magnitude * np.random.default_rng(1).standard_normal(model.nparams)
    llf = model.loglikeobs(params)
    assert not np.isnan(llf).any()
    assert np.all(llf <= 0)
    prob = model.predict(params)
    assert np.all((prob >= 0) & (prob <= 1))
    gate = model.predict(params, which="gate")
    np.testing.assert_allclose(gate.sum(axis=1), 1.0)
    assert np.all(np.isfinite(model.score(params)))
    assert np.all(np.isfinite(model.hessian(params)))


def test_loglike_is_exact_where_naive_formulas_underflow():
    """One observation deep inside, scores of order 800: log p = -log1p(e^-a)."""
    model = PolyhedralMixtureLogit(np.array([1.0, 0.0]), np.array([[1.0], [1.0]]), k=2)
    params = np.array([800.0, 900.0])
    llf = model.loglikeobs(params)
    # y = 1: the gate owns hyperplane 1 (smaller score); log sigmoid(800) ~ -e^-800
    assert llf[0] == pytest.approx(0.0, abs=1e-300)
    # y = 0: log P = log sum_k g_k sigmoid(-a_k) ~ -800 (+ log of the gate)
    assert llf[1] == pytest.approx(-800.0, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-8, 1e8])
def test_feature_scale_does_not_change_the_fit(scale):
    data = logistic_data(nobs=500, d=2, seed=3)
    data["x1"] = data["x1"] + 0.5 * (data["y"] - 0.5) * data["x2"] ** 2
    base = ps.plume("y ~ x1 + x2", data, k=2).fit()
    scaled = data.assign(x1=data["x1"] * scale)
    res = ps.plume("y ~ x1 + x2", scaled, k=2).fit()
    np.testing.assert_allclose(res.llf, base.llf, rtol=1e-8)
    np.testing.assert_allclose(
        res.predict(scaled), base.predict(data), rtol=1e-6, atol=1e-9
    )
    # the x1 coefficients carry the inverse scale exactly
    np.testing.assert_allclose(
        res.hyperplanes["x1"] * scale, base.hyperplanes["x1"], rtol=1e-6
    )


@pytest.mark.parametrize("gamma", [1e-4, 1e-2, 10.0, 1e3])
def test_fits_across_gamma(gamma):
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.1, random_state=2)
    res = ps.plume("y ~ x1 + x2", data, k=2, gamma=gamma).fit(maxiter=1000)
    assert np.isfinite(res.llf)
    assert np.all(np.isfinite(res.params))


def test_log_expit_equals_scipy_on_arrays_scalars_and_the_extremes():
    from scipy.special import log_expit as scipy_log_expit

    from plumestats._likelihood import log_expit

    values = np.concatenate(
        [np.linspace(-800, 800, 20001), [-np.inf, np.inf, 0.0, 1e-300, -1e-300]]
    )
    got, expected = log_expit(values), scipy_log_expit(values)
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-15, atol=0)
    for scalar in (0.5, -3.0, np.float64(40.0)):
        assert log_expit(scalar) == pytest.approx(scipy_log_expit(scalar), rel=1e-15)
    assert np.shape(log_expit(np.array(2.0))) == ()
    np.testing.assert_allclose(log_expit(values.reshape(-1, 1))[:, 0], got)


@pytest.mark.parametrize("gamma", [1e-4, 1.0, 1e3])
def test_responsibilities_alone_equal_the_terms_ones(gamma):
    """The responsibilities a line-search trial on blocks computes for its base
    point (softmax of the joint, without the log-likelihood) are the full
    terms' to rounding, at extreme scores too: a row of -inf terms is shared
    evenly by both."""
    from plumestats._likelihood import compute_terms, responsibilities

    rng = np.random.default_rng(3)
    scores = np.concatenate(
        [
            rng.standard_normal((400, 3)) * 5,
            rng.standard_normal((50, 3)) * 1e3,
            [[1e308, -1e308, 0.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0]],
        ]
    )
    y_pm = np.where(rng.random(scores.shape[0]) < 0.5, 1.0, -1.0)
    y_pm[-2] = 1.0  # every face says -inf: no information
    got = responsibilities(scores, y_pm, gamma)  # no warning (an error here)
    expected = compute_terms(scores, y_pm, gamma).resp
    # a tiny responsibility, exp(-700), carries the rounding of its log
    # (700 eps) in both ways of computing it
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-14)
    assert np.array_equal(got[-2], np.full(3, 1 / 3))  # the row of -inf terms
