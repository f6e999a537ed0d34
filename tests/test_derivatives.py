"""Analytic score and Hessian against finite differences of the log-likelihood."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.tools.numdiff import approx_fprime, approx_hess3

from plumestats import PolyhedralMixtureLogit


def _problem(k, gamma, intercept, seed=0, nobs=120, d=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((nobs, d))
    if intercept:
        x = np.column_stack([np.ones(nobs), x])
    y = (rng.random(nobs) < 0.5).astype(float)
    model = PolyhedralMixtureLogit(y, x, k=k, gamma=gamma)
    params = rng.normal(scale=0.7, size=model.nparams)
    return model, params


def _richardson_hessian(params, func, step=5e-4):
    """Second differences of ``func`` with one Richardson extrapolation, which
    cancels the O(h^2) truncation error that dominates at large gamma."""
    coarse = approx_hess3(params, func, epsilon=step)
    fine = approx_hess3(params, func, epsilon=step / 2)
    return (4 * fine - coarse) / 3


def _rel_err(approx, exact):
    return np.max(np.abs(approx - exact)) / np.max(np.abs(exact))


CASES = [
    (k, gamma, intercept)
    for k in (1, 2, 3)
    for gamma in (0.01, 1.0, 50.0)
    for intercept in (True, False)
]


@pytest.mark.parametrize("k, gamma, intercept", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_score_matches_finite_differences(k, gamma, intercept, seed):
    model, params = _problem(k, gamma, intercept, seed)
    numeric = approx_fprime(params, model.loglike, centered=True)
    assert _rel_err(numeric, model.score(params)) <= 1e-5


@pytest.mark.parametrize("k, gamma, intercept", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_hessian_matches_finite_differences(k, gamma, intercept, seed):
    model, params = _problem(k, gamma, intercept, seed)
    exact = model.hessian(params)
    # second differences of loglike itself ...
    assert _rel_err(_richardson_hessian(params, model.loglike), exact) <= 1e-5
    # ... and first differences of the analytic score (a sharper check)
    jac = approx_fprime(params, model.score, centered=True)
    assert _rel_err(jac, exact) <= 1e-7
    np.testing.assert_allclose(exact, exact.T, rtol=0, atol=1e-12 * np.abs(exact).max())


@pytest.mark.parametrize("k", [1, 2, 3])
def test_observation_terms_add_up(k):
    model, params = _problem(k, 2.0, True)
    np.testing.assert_allclose(model.loglikeobs(params).sum(), model.loglike(params))
    np.testing.assert_allclose(
        model.score_obs(params).sum(axis=0),
        model.score(params),
        rtol=1e-12,
        atol=1e-12,
    )
    assert model.score_obs(params).shape == (model.nobs, model.nparams)


def test_loglike_against_direct_formula():
    """L = sum_n log sum_k g_k sigmoid(y a_k), evaluated naively on tame values."""
    model, params = _problem(3, 1.5, True)
    scores = model.exog @ params.reshape(3, -1).T
    gate = np.exp(-1.5 * scores)
    gate /= gate.sum(axis=1, keepdims=True)
    y_pm = 2 * model.endog - 1
    expert = 1 / (1 + np.exp(-y_pm[:, None] * scores))
    direct = np.log((gate * expert).sum(axis=1))
    np.testing.assert_allclose(model.loglikeobs(params), direct, rtol=1e-12)


@pytest.mark.parametrize("k", [2, 3])
def test_em_fit_records_newtons_score_and_hessian_in_user_units(k):
    """``mle_retvals`` of an EM fit holds what statsmodels' Newton records:
    ``f = -L / n`` at the estimates and its gradient and Hessian in the
    user's units and the faces' final order. Columns in units 1e4 apart
    exercise the map from the engine's standardised coordinates."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((400, 2)) * [1e4, 1e-2]
    exog = np.column_stack([np.ones(400), x])
    signal = np.minimum(1.0 + x[:, 0] / 1e4, 1.0 - x[:, 1] / 1e-2)
    y = (signal + 0.8 * rng.logistic(size=400) > 0).astype(float)
    model = PolyhedralMixtureLogit(y, exog, k=k)
    res = model.fit(n_init=2, random_state=0)
    params = np.asarray(res.params)
    records = res.mle_retvals
    assert records["fopt"] == pytest.approx(-res.llf / 400, rel=1e-12)
    np.testing.assert_allclose(
        records["score"], -model.score(params) / 400, atol=1e-9 * np.abs(params).max()
    )
    expected = -model.hessian(params) / 400
    np.testing.assert_allclose(
        records["Hessian"], expected, rtol=1e-7, atol=1e-10 * np.abs(expected).max()
    )
    assert records["warnflag"] == (0 if res.converged else 1)


def test_em_records_match_newtons_with_weights_and_a_penalty(capsys):
    """With frequency weights statsmodels' Newton divides by the rows, and
    the EM fit's records use the same divisor (a review found them 2.07
    times apart); with a penalty the printed function value is ``fopt``,
    as statsmodels prints it."""
    rng = np.random.default_rng(0)
    exog = np.column_stack([np.ones(400), rng.standard_normal((400, 2))])
    y = (exog[:, 1] - exog[:, 2] + rng.logistic(size=400) > 0).astype(float)
    weights = rng.integers(1, 4, size=400).astype(float)
    model = PolyhedralMixtureLogit(y, exog, k=2, freq_weights=weights)
    em = model.fit(alpha=0.01, disp=True)
    printed = capsys.readouterr().out
    assert f"Current function value: {em.mle_retvals['fopt']:.6f}" in printed
    # fopt is of the penalised objective, below the log-likelihood
    assert -400 * em.mle_retvals["fopt"] < em.llf
    unpenalised = model.fit()
    newton = model.fit(method="newton", start_params=unpenalised.params, disp=False)
    assert unpenalised.mle_retvals["fopt"] == pytest.approx(
        newton.mle_retvals["fopt"], rel=1e-10
    )
    # (statsmodels 0.14.0's newton recorded minus the Hessian of f)
    theirs = newton.mle_retvals["Hessian"]
    hessian_of_f = theirs * np.sign(np.trace(theirs))
    np.testing.assert_allclose(
        unpenalised.mle_retvals["Hessian"], hessian_of_f, rtol=1e-6
    )
