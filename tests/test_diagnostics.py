"""Diagnostics of the optimum: numbers checked against statsmodels, and flags that
fire on injected separation and a collapsed expert but not on a regular fit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from conftest import unwrapped
from numpy.testing import assert_allclose
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps
from plumestats.datasets import simulate_plume

WARNING_NOTE = "Warning: the optimum is not a regular interior maximum"


def _logistic_design(nobs=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((nobs, 2)) * [1.0, 10.0] + [0.0, 50.0]
    exog = np.column_stack([np.ones(nobs), x])
    linear = 0.3 + x @ [1.0, -0.1] + 5.0
    y = (rng.random(nobs) < 1 / (1 + np.exp(-linear))).astype(int)
    return y, exog


def test_k1_numbers_match_logit_on_the_standardised_design():
    # independent truth: statsmodels' Logit information on the standardised
    # design, per observation (the diagnostics' coordinates)
    y, exog = _logistic_design()
    res = ps.PolyhedralMixtureLogit(y, exog, k=1).fit()
    z = exog.copy()
    z[:, 1:] = (exog[:, 1:] - exog[:, 1:].mean(axis=0)) / exog[:, 1:].std(axis=0)
    logit = sm.Logit(y, z).fit(disp=0)
    info = -logit.model.hessian(logit.params) / y.size
    eigenvalues = np.linalg.eigvalsh(info)
    diag = res.diagnostics
    assert_allclose(diag.min_eigenvalue, eigenvalues[0], rtol=1e-6)
    assert_allclose(diag.condition_number, eigenvalues[-1] / eigenvalues[0], rtol=1e-6)
    # the score at Logit's optimum is at rounding level, and so is ours
    assert diag.max_abs_score < 1e-8
    assert diag.interior and diag.flags == ()
    assert "a regular interior maximum" in unwrapped(res.summary())


def test_regular_k2_fit_raises_no_flag():
    truth = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])
    data = simulate_plume(3000, truth, gamma=1.0, random_state=1)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    diag = res.diagnostics
    assert diag.interior
    assert np.isfinite(diag.condition_number) and diag.condition_number < 1e5
    assert diag.min_eigenvalue > 0
    assert diag.newton_decrement < 1e-8
    # each expert owns a fair share of the sample
    assert_allclose(diag.gate_mass.sum(), 3000)
    assert diag.gate_mass.min() > 500
    assert WARNING_NOTE not in unwrapped(res.summary())


def test_diagnostics_compare_and_hash_by_value(tmp_path):
    """Equal after a JSON round trip, hashable (the generated comparison took
    the truth value of gate_mass and raised)."""
    truth = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])
    data = simulate_plume(500, truth, gamma=1.0, random_state=2)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    res.save_json(tmp_path / "fit.json")
    loaded = ps.load_json(tmp_path / "fit.json").diagnostics
    assert loaded == res.diagnostics and hash(loaded) == hash(res.diagnostics)
    assert res.diagnostics != ps.plume("y ~ x1", data, k=2).fit().diagnostics


def test_injected_separation_is_flagged_in_the_summary():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((300, 2))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.2).astype(int)  # complete separation
    exog = np.column_stack([np.ones(300), x])
    with pytest.warns(PerfectSeparationWarning):
        res = ps.PolyhedralMixtureLogit(y, exog, k=1).fit()
    diag = res.diagnostics
    assert not diag.interior
    assert "separation" in diag.flags
    assert diag.n_perfect > 0
    text = unwrapped(res.summary())
    assert WARNING_NOTE in text and "separated" in text


def test_injected_collapsed_expert_is_flagged_in_the_summary():
    # logistic data (one face) and a second expert started far outside the
    # data: its gate owns nothing and the likelihood is flat in its direction
    y, exog = _logistic_design(seed=2)
    start = np.r_[5.3, 1.0, -0.1, 300.0, 0.0, 0.0]
    with pytest.warns(HessianInversionWarning):
        res = ps.PolyhedralMixtureLogit(y, exog, k=2).fit(start_params=start)
    diag = res.diagnostics
    assert "collapsed_expert" in diag.flags
    assert diag.gate_mass.min() < 1.0
    assert "not_positive_definite" in diag.flags or "ill_conditioned" in diag.flags
    text = unwrapped(res.summary())
    assert WARNING_NOTE in text and "collapsed" in text


def test_duplicated_expert_is_collapsed():
    from plumestats._diagnostics import _duplicated

    weights = np.array([[1.0, 2.0, 0.0], [1.0, 2.0 + 1e-4, 0.0], [0.0, -1.0, 1.0]])
    gram = np.eye(3)  # the rows' Gram: the faces' scores' Gram is W G W'
    assert _duplicated(weights @ gram @ weights.T)
    kept = weights[[0, 2]]
    assert not _duplicated(kept @ gram @ kept.T)


def test_stopped_early_is_flagged():
    truth = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])
    data = simulate_plume(1000, truth, gamma=1.0, random_state=3)
    with pytest.warns(ConvergenceWarning):
        res = ps.plume("y ~ x1 + x2", data, k=2).fit(maxiter=2)
    assert "not_converged" in res.diagnostics.flags
    assert "did not converge" in unwrapped(res.summary())


def test_diagnostics_survive_remove_data(tmp_path):
    truth = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])
    data = simulate_plume(1000, truth, gamma=1.0, random_state=3)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    before = res.diagnostics
    res.remove_data()
    assert res.diagnostics is before
    assert "Diagnostics:" in unwrapped(res.summary())


def test_a_large_column_mean_raises_no_false_collapse():
    # x1 shifted by 1e9 standard deviations: the faces' scores' Gram comes
    # from the engine's standardised rows (in the user's units X'X cancelled
    # and flagged a collapsed expert with a HessianInversionWarning)
    data, _ = ps.simulate_polyhedron(1000, d=2, k=3, noise=0.05, random_state=1)
    shifted = data.assign(x1=data["x1"] + 1e9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ps.plume("y ~ x1 + x2", shifted, k=3).fit(random_state=0)
    assert res.diagnostics.flags == ()


def test_a_hard_gating_fit_stopped_on_a_kink_is_flagged_in_the_summary():
    """SPLA1's maximum sits on a kink: a refit from its own estimate (1e-6
    away) gave a standard error twice as large, with no flag. The flag and
    the summary's note say so; no warning at fit time (many such fits stop
    on a kink); a PLUME fit of the same data has no flag."""
    data, _ = ps.simulate_polyhedron(240, d=2, k=3, noise=0.08, random_state=2)
    data["g"] = np.random.default_rng(102).choice(["a", "b", "c"], size=240)
    formula = "y ~ x1 + x2 + C(g)"
    with warnings.catch_warnings():
        warnings.simplefilter("error", HessianInversionWarning)
        hard = ps.spla1(formula, data, k=3).fit(alpha=1e-3)
    assert hard.mle_retvals["message"] == "converged (hard gating: change below tol)"
    assert "on_kink" in hard.diagnostics.flags
    assert WARNING_NOTE in unwrapped(hard.summary())
    assert "one-sided" in unwrapped(hard.summary())
    soft = ps.plume(formula, data, k=3).fit(alpha=1e-3)
    assert "on_kink" not in soft.diagnostics.flags


def test_a_hard_gating_fit_at_a_smooth_maximum_is_not_on_a_kink():
    """The kink rule (a tiny change of L) also stops hard-gating runs at a
    smooth maximum, whose score has vanished: no flag there (a review found
    a third of the flagged fits smooth, standard errors stable to 1e-9)."""
    data, _ = ps.simulate_polyhedron(120, d=2, k=2, noise=0.1, random_state=0)
    res = ps.spla1("y ~ x1 + x2", data, k=2).fit(alpha=0.01, random_state=0)
    assert res.diagnostics.max_abs_score < 1e-6
    assert "on_kink" not in res.diagnostics.flags
