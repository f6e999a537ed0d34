"""Bootstrap: agreement with statsmodels' Logit at K = 1, expert alignment,
reproducibility, and its use in conf_int and summary."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import unwrapped
from numpy.testing import assert_allclose, assert_array_equal

import plumestats.api as ps
from plumestats._bootstrap import align_experts
from plumestats.datasets import simulate_plume

TRUTH = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])


@pytest.fixture(scope="module")
def k2_fit():
    data = simulate_plume(1500, TRUTH, gamma=1.0, random_state=5)
    return ps.plume("y ~ x1 + x2", data, k=2).fit()


def test_k1_bootstrap_matches_logit_on_simulated_logistic_data():
    # a correctly specified logit: the bootstrap SE estimates the same
    # variance as the observed information
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 3))
    y = (rng.random(1000) < 1 / (1 + np.exp(-(0.3 + x @ [1.0, -0.5, 0.2])))) * 1
    exog = np.column_stack([np.ones(1000), x])
    res = ps.PolyhedralMixtureLogit(y, exog, k=1).fit()
    boot = res.bootstrap(n_boot=1000, random_state=1)
    logit = sm.Logit(y, exog).fit(disp=0)
    assert boot.n_failed == 0 and boot.n_switched == 0
    # Monte Carlo error of an SD from 1000 replicates is about 2.2%
    assert_allclose(boot.bse.to_numpy(), logit.bse, rtol=0.10)


def test_k1_bootstrap_on_pima_matches_logit(pima):
    formula = "diabetes ~ " + " + ".join(pima.columns[:-1])
    res = ps.plume(formula, pima, k=1).fit()
    boot = res.bootstrap(n_boot=1000, random_state=0)
    oim = sm.Logit.from_formula(formula, pima).fit(disp=0)
    hc0 = sm.Logit.from_formula(formula, pima).fit(disp=0, cov_type="HC0")
    # The pairs bootstrap estimates the sandwich variance: it agrees with
    # Logit's HC0 standard errors within 10%. Logit is misspecified on pima
    # (Logit's own HC0 and observed-information SEs differ by up to 18%), so
    # against the observed information the 10% holds only where HC0 and the
    # observed information themselves agree within 5%.
    assert_allclose(boot.bse.to_numpy(), hc0.bse.to_numpy(), rtol=0.10)
    close = np.abs(hc0.bse / oim.bse - 1).to_numpy() < 0.05
    assert close.sum() >= 3
    assert_allclose(boot.bse.to_numpy()[close], oim.bse.to_numpy()[close], rtol=0.10)


def test_k1_bootstrap_on_pima_matches_logit_bse(pima):
    # The data README: a zero glucose, blood pressure or BMI means "not
    # measured". Without those rows (724 of 768) the logit of diabetes on
    # glucose, BMI and age is close to well specified (Logit's HC0 and
    # observed-information SEs agree within 5%), so the pairs bootstrap, which
    # estimates the sandwich variance, must also agree with the observed
    # information: within 10%, with a Monte Carlo error of about 2.2% at 1000
    # replicates.
    measured = pima[(pima[["glucose", "blood_pressure", "bmi"]] != 0).all(axis=1)]
    assert len(measured) == 724
    formula = "diabetes ~ glucose + bmi + age"
    res = ps.plume(formula, measured, k=1).fit()
    boot = res.bootstrap(n_boot=1000, random_state=0)
    oim = sm.Logit.from_formula(formula, measured).fit(disp=0)
    hc0 = sm.Logit.from_formula(formula, measured).fit(disp=0, cov_type="HC0")
    assert_allclose(hc0.bse.to_numpy(), oim.bse.to_numpy(), rtol=0.05)
    assert boot.n_failed == 0
    assert_allclose(boot.bse.to_numpy(), oim.bse.to_numpy(), rtol=0.10)


def test_alignment_undoes_a_permutation_whatever_the_units():
    rng = np.random.default_rng(3)
    exog = np.column_stack([np.ones(500), rng.standard_normal((500, 2))])
    weights = rng.standard_normal((4, 3))
    perm = np.array([2, 0, 3, 1])
    noisy = weights[perm] + 0.01 * rng.standard_normal((4, 3))
    gram = exog.T @ exog / 500
    found = align_experts(weights, noisy, gram)
    assert_allclose(noisy[found], weights, atol=0.05)
    # a feature in other units (x1 in thousandths): same scores, same match
    scale = np.array([1.0, 1000.0, 1.0])
    exog_units = exog * scale
    gram_units = exog_units.T @ exog_units / 500
    assert_array_equal(align_experts(weights / scale, noisy / scale, gram_units), found)


def test_bootstrap_is_aligned_and_reproducible(k2_fit):
    boot = k2_fit.bootstrap(n_boot=30, random_state=7)
    again = k2_fit.bootstrap(n_boot=30, random_state=7)
    pd.testing.assert_frame_equal(boot.params, again.params)
    assert boot.n_failed == 0
    # aligned replicates scatter around the fit, experts not swapped: each
    # replicate's h1 is closer to the fit's h1 than to its h2
    params = np.reshape(np.asarray(k2_fit.params), (2, -1))
    draws = boot.params.to_numpy().reshape(len(boot.params), 2, -1)
    own = np.linalg.norm(draws - params, axis=2)
    other = np.linalg.norm(draws - params[::-1], axis=2)
    assert np.all(own < other)
    # percentile intervals are ordered and cover the estimate
    ci = k2_fit.conf_int(method="bootstrap")
    assert list(ci.index) == list(k2_fit.params.index)
    assert np.all(ci[0] < k2_fit.params) and np.all(k2_fit.params < ci[1])
    assert 0 <= boot.switched_share <= 1 and boot.failed_share == 0
    # normal intervals: the estimate +- z bootstrap standard errors
    normal = boot.conf_int(0.1, kind="normal")
    half = 1.6448536269514722 * boot.bse
    np.testing.assert_allclose(normal[0], k2_fit.params - half, rtol=1e-12)
    np.testing.assert_allclose(normal[1], k2_fit.params + half, rtol=1e-12)
    with pytest.raises(ValueError, match="kind"):
        boot.conf_int(kind="basic")


def test_bootstrap_in_summary(k2_fit):
    boot = k2_fit.bootstrap(n_boot=20, random_state=2)
    text = unwrapped(k2_fit.summary(cov_type="bootstrap"))
    assert "Covariance Type:                bootstrap" in text
    assert "nonparametric bootstrap, 20 of 20 replicates" in text
    # the table shows the bootstrap SEs, not the observed-information ones
    assert f"{boot.bse.iloc[0]:.3f}" in text
    assert "Covariance Type:                nonrobust" in unwrapped(k2_fit.summary())


def test_bootstrap_seeds_as_the_fits_take_them():
    data = simulate_plume(300, TRUTH, random_state=0)
    fit = ps.plume("y ~ x1 + x2", data, k=1).fit()
    # None is the fits' fixed seed: the same replicates every time
    pd.testing.assert_frame_equal(
        fit.bootstrap(n_boot=5).params, fit.bootstrap(n_boot=5).params
    )
    pd.testing.assert_frame_equal(
        fit.bootstrap(n_boot=5).params, fit.bootstrap(n_boot=5, random_state=0).params
    )
    # a Generator gives one seed, kept in the results
    boot = fit.bootstrap(n_boot=5, random_state=np.random.default_rng(3))
    again = fit.bootstrap(n_boot=5, random_state=boot.random_state)
    pd.testing.assert_frame_equal(boot.params, again.params)
    with pytest.raises(ValueError, match="random_state must be None"):
        fit.bootstrap(n_boot=5, random_state=-1)


def test_an_advisory_diagnostic_fails_no_replicate(recwarn):
    # nearly collinear columns: a converged fit whose information is
    # ill-conditioned, which its own warning says to check by the bootstrap
    rng = np.random.default_rng(0)
    x1, x3 = rng.normal(size=(2, 300))
    data = pd.DataFrame({"x1": x1, "x2": x1 + 1e-5 * rng.normal(size=300), "x3": x3})
    data["y"] = (rng.random(300) < 1 / (1 + np.exp(-(x1 + x3)))).astype(int)
    with pytest.warns(
        sm.tools.sm_exceptions.HessianInversionWarning, match="bootstrap"
    ):
        fit = ps.plume("y ~ x1 + x2 + x3", data, k=1).fit()
    boot = fit.bootstrap(n_boot=10, random_state=0)
    assert boot.n_failed == 0


def test_bootstrap_summary_shows_normal_tests_whatever_use_t():
    data = simulate_plume(300, TRUTH, random_state=0)
    fit = ps.plume("y ~ x1 + x2", data, k=1).fit(use_t=True)
    fit.bootstrap(n_boot=10, random_state=0)
    text = unwrapped(fit.summary(cov_type="bootstrap"))
    assert "P>|z|" in text and "P>|t|" not in text
    assert "P>|t|" in unwrapped(fit.summary())


def test_replicates_keep_their_warnings_to_themselves():
    # a resample without the rare level's rows has a column of zeros: the
    # replicate's business, not the user's
    data = simulate_plume(300, TRUTH, random_state=0)
    data["rare"] = 0.0
    data.loc[[3, 40], "rare"] = 1.0
    fit = ps.plume("y ~ x1 + x2 + rare", data, k=1).fit(alpha=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.bootstrap(n_boot=20, random_state=0)


def test_replicates_refit_with_the_fits_own_finish():
    # plain EM (newton_finish=False) stops elsewhere than EM with a Newton
    # finish: refitted to its own rows, a replicate must find the fit again
    from plumestats._bootstrap import RefitSpec, _refit

    data = simulate_plume(300, TRUTH, random_state=0)
    fit = ps.plume("y ~ x1 + x2", data, k=2).fit(newton_finish=False, maxiter=2000)
    spec = RefitSpec.of(fit)
    assert spec.fit_options["newton_finish"] is False
    assert spec.fit_options["em_overrelax"] == 1.0
    over = ps.plume("y ~ x1 + x2", data, k=2).fit(em_overrelax=2)
    assert RefitSpec.of(over).fit_options["em_overrelax"] == 2.0
    params, problems = _refit(spec, np.arange(len(data)))
    assert problems == []
    # plain EM stops on a small change: from its own end it moves a few
    # millionths; the Newton finish went on to the maximum, 6e-5 away
    assert_allclose(params, fit.params, rtol=2e-5)


def test_a_direct_fit_is_bootstrapped_by_em_with_ems_defaults():
    # a fit by statsmodels' newton records its own tol and EM's options as
    # None: the replicates refit by EM with EM's defaults, not newton's tol
    from plumestats._bootstrap import RefitSpec
    from plumestats._em import EMOptions

    data = simulate_plume(300, TRUTH, random_state=0)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    em = model.fit()
    direct = model.fit(method="newton", start_params=em.params, tol=1e-6, maxiter=3)
    options = RefitSpec.of(direct).fit_options
    assert options["tol"] == EMOptions.tol and options["em_tol"] == EMOptions.em_tol
    # (three Newton steps from the maximum are no budget for an EM refit)
    assert options["maxiter"] == EMOptions.maxiter
    assert options["newton_finish"] is True and options["mstep"] == "newton"
    boot = direct.bootstrap(n_boot=20, random_state=0)
    assert boot.n_failed == 0
    assert np.all(np.isfinite(boot.bse.to_numpy()))


def test_bootstrap_bad_input(k2_fit):
    fresh = ps.plume(
        "y ~ x1 + x2", simulate_plume(300, TRUTH, random_state=0), k=2
    ).fit()
    with pytest.raises(ValueError, match=r"call results.bootstrap\(n_boot=...\)"):
        fresh.conf_int(method="bootstrap")
    with pytest.raises(ValueError, match=r"call results\.bootstrap"):
        fresh.summary(cov_type="bootstrap")
    with pytest.raises(ValueError, match=r"refit with fit\(cov_type=\.\.\.\)"):
        fresh.summary(cov_type="HC0")
    with pytest.raises(ValueError, match="method must be one of"):
        fresh.conf_int(method="likelihood")
    with pytest.raises(ValueError, match="n_boot must be an integer >= 2"):
        fresh.bootstrap(n_boot=1)
    fresh.remove_data()
    with pytest.raises(ValueError, match="remove_data"):
        fresh.bootstrap(n_boot=5)


def test_a_resort_by_gate_mass_is_no_label_switch():
    """The results list the faces by decreasing gate mass; SPLA1's two faces
    here hold nearly equal shares, so resamples list them the other way round
    although each replicate's run keeps the faces it started from."""
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=0)
    res = ps.spla1("y ~ x1 + x2", data, k=2).fit()
    assert res.bootstrap(n_boot=3, random_state=0).n_switched == 0


def test_face_order_says_which_start_face_each_reported_face_is():
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=0)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    res = model.fit()
    swapped = res.params.to_numpy().reshape(2, -1)[::-1].ravel()
    again = model.fit(start_params=swapped)
    assert_array_equal(again.mle_retvals["face_order"], [1, 0])
    assert_allclose(again.params, res.params, rtol=1e-8)
