"""L1 fit_regularized (issue 30, sparse faces): at K = 1 it is statsmodels'
L1 logistic regression; exact zeros, unpenalised intercepts, the results and
summary of a sparse fit, and recovery of a polyhedron among noise features."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import logistic_data, unwrapped
from statsmodels.tools.sm_exceptions import ConvergenceWarning, HessianInversionWarning

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit
from plumestats.datasets import simulate_polyhedron


@functools.cache
def _logit_data(nobs: int = 300, seed: int = 0):
    """A constant, two true slopes and three of noise."""
    rng = np.random.default_rng(seed)
    exog = sm.add_constant(rng.normal(size=(nobs, 5)) * [1.0, 2.0, 1.0, 0.5, 1.0])
    truth = np.array([0.3, 1.0, -0.5, 0.0, 0.0, 0.0])
    endog = (exog @ truth + rng.logistic(size=nobs) > 0).astype(float)
    return endog, exog


def _statsmodels_l1(alpha: np.ndarray):
    endog, exog = _logit_data()
    # statsmodels' SLSQP stops ~1e-5 short at its default accuracy: tightened
    return sm.Logit(endog, exog).fit_regularized(
        method="l1", alpha=alpha, disp=0, acc=1e-14
    )


@pytest.mark.parametrize("alpha", [0.5, 3.0, 10.0, 40.0])
def test_scalar_alpha_is_statsmodels_l1_logit_at_k1(alpha):
    endog, exog = _logit_data()
    ours = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=alpha, method="l1"
    )
    # a scalar weighs the slopes only: statsmodels gets 0 on the constant
    reference = _statsmodels_l1(np.r_[0.0, np.full(5, alpha)])
    assert ours.converged
    np.testing.assert_allclose(ours.params, reference.params, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(ours.trimmed, reference.trimmed)
    assert ours.nnz_params == reference.nnz_params
    assert ours.df_model == reference.df_model
    assert ours.df_resid == reference.df_resid
    np.testing.assert_allclose(ours.bse, reference.bse, rtol=1e-5)
    # statsmodels' params are ~1e-8 from the optimum even at acc=1e-14
    np.testing.assert_allclose(ours.llf, reference.llf, rtol=1e-7)
    np.testing.assert_allclose(ours.aic, reference.aic, rtol=1e-7)


def test_tests_of_the_estimated_slopes_are_statsmodels_l1_logits():
    # a zero's variance is NaN: a contrast that leaves it out must not be
    endog, exog = _logit_data()
    alpha = np.r_[0.0, np.full(5, 10.0)]
    ours = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=alpha, method="l1"
    )
    reference = _statsmodels_l1(alpha)
    assert ours.trimmed.any() and not ours.trimmed[1]
    contrast = np.eye(6)[[1]]
    t_ours, t_ref = ours.t_test(contrast), reference.t_test(contrast)
    np.testing.assert_allclose(t_ours.effect, t_ref.effect, rtol=1e-5)
    np.testing.assert_allclose(t_ours.pvalue, t_ref.pvalue, rtol=1e-4)
    assert np.isfinite(t_ours.pvalue)
    for test in ("wald_test", "f_test"):
        ours_test = getattr(ours, test)(contrast, **_scalar(test))
        ref_test = getattr(reference, test)(contrast, **_scalar(test))
        np.testing.assert_allclose(ours_test.statistic, ref_test.statistic, rtol=1e-5)
    # by name, as a formula user writes it; a zero itself stays untestable
    assert np.isfinite(ours.t_test("h1:x1 = 0").pvalue)
    zero = int(np.flatnonzero(ours.trimmed)[0])
    assert np.isnan(ours.t_test(np.eye(6)[[zero]]).sd)


def _scalar(test: str) -> dict:
    return {"scalar": True} if test == "wald_test" else {}


def test_lr_test_of_l1_fits_counts_their_nonzero_parameters():
    """As statsmodels' compare_lr_test (by df_resid): the zeros are not
    estimated, so df is the difference of the nonzero counts."""
    endog, exog = _logit_data()
    fits = [
        PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(alpha=a, method="l1")
        for a in (40.0, 3.0)
    ]
    references = [_statsmodels_l1(np.r_[0.0, np.full(5, a)]) for a in (40.0, 3.0)]
    ours = ps.compare_lr_test(*fits)
    # statsmodels' rule (OLS's compare_lr_test): df from df_resid, which its
    # L1 Logit counts by the nonzero parameters
    df = references[0].df_resid - references[1].df_resid
    statistic = 2 * (references[1].llf - references[0].llf)
    assert fits[1].nnz_params > fits[0].nnz_params
    assert ours.df == fits[1].nnz_params - fits[0].nnz_params == df
    np.testing.assert_allclose(ours.statistic, statistic, rtol=1e-4)


def test_l1_is_the_default_as_in_statsmodels():
    # a script written for Logit.fit_regularized runs as it reads
    endog, exog = _logit_data()
    alpha = np.r_[0.0, np.full(5, 10.0)]
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    default = model.fit_regularized(alpha=alpha, maxiter="defined_by_method")
    reference = _statsmodels_l1(alpha)
    np.testing.assert_allclose(default.params, reference.params, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(default.trimmed, reference.trimmed)


def test_the_default_penalty_where_l1_is_not_available():
    # statsmodels' default is L1; the hard gate and label flips have none: a
    # penalty asks for method="l2" (L2's alpha is per observation, so L1's
    # alpha=10.0 taken as L2 flattened every face), no penalty is the fit
    endog, exog = _logit_data()
    for cls in (ps.HardPolyhedralLogit, ps.LabelFlipPolyhedralLogit):
        model = cls(endog, exog, k=2)
        with pytest.raises(ValueError, match=r"use method='l2'.*per observation"):
            model.fit_regularized(alpha=10.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a flip rate at 0, say
            default = model.fit_regularized()
            plain = model.fit()
        np.testing.assert_array_equal(default.params, plain.params)
    # alpha = 0, the default: the unpenalised fit
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    np.testing.assert_allclose(
        model.fit_regularized().params, model.fit().params, atol=1e-6
    )


def test_statsmodels_newton_takes_the_fits_tol():
    endog, exog = _logit_data()
    model, logit = PolyhedralMixtureLogit(endog, exog, k=1), sm.Logit(endog, exog)
    start = np.zeros(exog.shape[1])
    for tol in (0.1, 1e-12):
        ours = model.fit(method="newton", tol=tol, start_params=start)
        reference = logit.fit(method="newton", tol=tol, start_params=start, disp=0)
        assert ours.mle_retvals["iterations"] == reference.mle_retvals["iterations"]


def test_a_small_slope_of_a_large_unit_feature_is_not_trimmed():
    """size_trim_tol reads the slopes in their units: a feature in units 1e5
    times smaller has a true slope below it. It was set to 0 (a wrong fit,
    reported as separation); a zero whose optimality condition fails is now
    released and polished, and the fit is statsmodels'."""
    endog, exog = _logit_data()
    exog = exog * np.r_[1.0, 1e5, 1.0, 1.0, 1.0, 1.0]  # a true slope of 1e-5
    alpha = np.r_[0.0, np.full(5, 3.0)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
            alpha=alpha, method="l1"
        )
    assert not caught and ours.converged
    assert ours.mle_settings["size_trim_tol"] == 1e-4
    assert not ours.trimmed[1] and 0 < ours.params[1] < 1e-4
    # the optimality conditions, in log-likelihood units
    score = ours.model.score(np.asarray(ours.params))
    free = ~ours.trimmed
    kkt = score[free] - alpha[free] * np.sign(ours.params[free])
    np.testing.assert_allclose(kkt, 0.0, atol=1e-6)
    assert np.all(np.abs(score[~free]) <= alpha[~free] * (1 + 1e-6))
    # statsmodels' SLSQP point, which its size trimming would have kept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its own overflow and QC notes
        reference = sm.Logit(endog, exog).fit_regularized(
            method="l1", alpha=alpha, disp=0, acc=1e-14, trim_mode="off"
        )
    np.testing.assert_allclose(ours.params[1], reference.params[1], rtol=1e-4)


def test_per_parameter_alpha_is_used_as_given_at_k1():
    endog, exog = _logit_data()
    alpha = np.array([2.0, 0.0, 5.0, 20.0, 1.0, 8.0])  # the constant penalised too
    ours = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=alpha, method="l1"
    )
    reference = _statsmodels_l1(alpha)
    np.testing.assert_allclose(ours.params, reference.params, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(ours.trimmed, reference.trimmed)
    np.testing.assert_array_equal(ours.mle_settings["alpha_l1"], alpha)


def test_the_optimality_conditions_hold_with_exact_zeros():
    endog, exog = _logit_data()
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    res = model.fit_regularized(alpha=10.0, method="l1")
    params = np.asarray(res.params)
    score = model.score(params)
    zero = params == 0.0
    assert zero.sum() >= 2 and np.array_equal(zero, res.trimmed)
    assert np.all(np.abs(score[zero]) <= 10.0 * (1 + 1e-6))
    nonzero = ~zero & (np.arange(6) > 0)
    np.testing.assert_allclose(
        score[nonzero], 10.0 * np.sign(params[nonzero]), atol=1e-8
    )
    assert abs(score[0]) < 1e-8  # the unpenalised constant: dL/dw = 0
    assert np.all(np.isnan(res.bse[zero])) and np.all(np.isfinite(res.bse[~zero]))


def test_a_large_alpha_zeroes_every_slope_but_not_the_intercepts():
    endog, exog = _logit_data()
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=1e4, method="l1"
    )
    params = np.asarray(res.params)
    assert np.all(params[1:] == 0.0)
    share = endog.mean()
    np.testing.assert_allclose(params[0], np.log(share / (1 - share)), atol=1e-8)
    assert res.nnz_params == 1 and res.df_model == 0


def test_alpha_zero_is_the_ordinary_fit():
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=3)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    plain = model.fit()
    l1 = model.fit_regularized(alpha=0.0, method="l1")
    assert l1.converged and not l1.trimmed.any()
    np.testing.assert_allclose(l1.params, plain.params, atol=1e-6)
    np.testing.assert_allclose(l1.bse, plain.bse, rtol=1e-5)
    assert l1.df_model == plain.df_model


def test_recovers_the_faces_among_noise_features():
    data, truth = ps.simulate_polyhedron(600, d=2, k=3, noise=0.05, random_state=1)
    rng = np.random.default_rng(2)
    noise = [f"z{j + 1}" for j in range(10)]
    for name in noise:
        data[name] = rng.normal(size=len(data))
    formula = "y ~ x1 + x2 + " + " + ".join(noise)
    res = ps.plume(formula, data, k=3).fit_regularized(alpha=10.0, method="l1")
    faces = res.hyperplanes
    assert res.converged
    assert (faces[noise] == 0).to_numpy().mean() >= 0.9
    # each true face is found: a fitted normal points as the true one does
    fitted = faces[["x1", "x2"]].to_numpy()
    fitted = fitted / np.linalg.norm(fitted, axis=1, keepdims=True)
    cosines = truth[["x1", "x2"]].to_numpy() @ fitted.T
    assert np.all(cosines.max(axis=1) > 0.9)


def test_the_summary_marks_the_zeros():
    endog, exog = _logit_data()
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=10.0, method="l1"
    )
    text = unwrapped(res.summary())
    assert "L1 penalty:" in text and "L2 penalty:" not in text
    assert "exactly zero (coef 0, std err nan): h1:x3" in text
    assert "Df Model:" in text and f"{res.df_model:g}" in text
    assert "Standard errors are NaN: the observed information" not in text


def test_the_counts_survive_a_json_round_trip(tmp_path):
    endog, exog = _logit_data()
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=10.0, method="l1"
    )
    path = tmp_path / "fit.json"
    res.save_json(path)
    loaded = ps.load_json(path)
    np.testing.assert_array_equal(loaded.trimmed, res.trimmed)
    assert loaded.aic == pytest.approx(res.aic) and loaded.df_model == res.df_model


def test_an_unconverged_solver_says_so():
    """One SLSQP iteration and no polish (``trim_mode="off"``): SLSQP's
    point is reported, and it is no optimum."""
    endog, exog = _logit_data()
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    with pytest.warns(Warning, match="did not converge"):
        res = model.fit_regularized(alpha=20.0, method="l1", maxiter=1, trim_mode="off")
    assert res.mle_retvals["converged"] is False


def test_the_polish_finishes_a_convex_fit_cut_short():
    """K = 1 is convex: from SLSQP's first iteration the polish reaches the
    optimum (its conditions met to rounding), the fit of maxiter=1000."""
    endog, exog = _logit_data()
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    short = model.fit_regularized(alpha=20.0, method="l1", maxiter=1)
    full = model.fit_regularized(alpha=20.0, method="l1")
    assert short.converged and short.mle_retvals["max_abs_score"] < 1e-9
    np.testing.assert_allclose(short.params, full.params, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(short.trimmed, full.trimmed)


def test_a_small_alpha_zeroes_a_column_in_small_units():
    """alpha / N below about 1e-5: SLSQP stops on its first step, at the
    unpenalised estimate, where the column's slope is 34.3 but the optimum
    has 0 (|dL/dw| < alpha there). The polish refused to carry it through
    0 and kept it (not converged). Its step now stops the slope at 0, and the
    fit is Logit without the column, as statsmodels' is to its accuracy."""
    data = logistic_data(768, d=3, seed=4)
    exog = sm.add_constant(data[["x1", "x2", "x3"]].to_numpy())
    exog = np.column_stack([exog, 1e-3 * np.random.default_rng(0).normal(size=768)])
    endog = data["y"].to_numpy()
    alpha = np.zeros(exog.shape[1])
    alpha[-1] = 0.0045
    ours = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=alpha, method="l1"
    )
    theirs = sm.Logit(endog, exog).fit_regularized(alpha=alpha, method="l1", disp=0)
    without = sm.Logit(endog, exog[:, :-1]).fit(disp=0, tol=1e-12)
    assert ours.converged and ours.params[-1] == 0.0 and theirs.params[-1] == 0.0
    assert ours.mle_retvals["max_abs_score"] < 1e-9
    np.testing.assert_allclose(ours.params[:-1], without.params, rtol=1e-10)
    np.testing.assert_allclose(ours.params, theirs.params, atol=1e-4)


def test_a_small_alpha_zeroes_a_column_in_small_units_at_k2():
    """K = 2, the same small-units column: SLSQP stops on its first step at
    the unpenalised slopes (-81.7 and 58.2); the polish carries both through
    0 and the fit meets the optimality conditions."""
    data, _ = simulate_polyhedron(600, d=2, k=2, noise=0.1, random_state=3)
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    exog = np.column_stack([exog, 1e-3 * np.random.default_rng(0).normal(size=600)])
    alpha = np.zeros(2 * exog.shape[1])
    alpha[[3, 7]] = 0.0045
    res = PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit_regularized(
        alpha=alpha, method="l1"
    )
    assert res.converged and res.mle_retvals["max_abs_score"] < 1e-9
    assert np.all(np.asarray(res.params)[[3, 7]] == 0.0)
    assert res.trimmed[[3, 7]].all() and res.mle_retvals["nnz_params"] == 6


def test_the_bootstrap_of_an_l1_fit_is_refused():
    endog, exog = _logit_data()
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=10.0, method="l1"
    )
    with pytest.raises(ValueError, match="L1"):
        res.bootstrap(n_boot=5)


def test_an_unconverged_l1_fit_is_not_called_separated():
    """An L1 penalty keeps the maximum finite, as an L2 one does: a stop short
    of it with perfectly fitted rows is a convergence failure, not separation
    (it was warned of as separation, with the advice to use an L2 penalty)."""
    from types import SimpleNamespace

    from plumestats._diagnostics import warn_if_unsettled

    model = SimpleNamespace(nobs=100.0, k=2)
    retvals = {
        "converged": False,
        "message": "QC check failed",
        "iterations": 3,
        "max_abs_score": 0.5,
        "remedy": "Increase maxiter.",
    }
    with pytest.warns(ConvergenceWarning, match="QC check failed"):
        separated = warn_if_unsettled(model, retvals, 0.0, n_perfect=5)
    assert not separated


def test_zeros_are_released_one_at_a_time_at_k2():
    """K = 2 with a column in units 1e4 times smaller: several zeros failed
    their condition at once, and releasing them together let the polish
    refuse a sign flip and keep SLSQP's point (not converged, a released
    -2e-18 counted as nonzero). Now the optimality conditions hold."""
    rng = np.random.default_rng(1)
    exog = sm.add_constant(rng.normal(size=(400, 4)))
    inside = (exog[:, 1] + exog[:, 2] < 1) & (exog[:, 1] - exog[:, 2] > -1)
    endog = np.where(rng.random(400) < np.where(inside, 0.9, 0.1), 1.0, 0.0)
    exog[:, 4] *= 1e4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HessianInversionWarning)
        res = PolyhedralMixtureLogit(endog, exog, k=2).fit_regularized(
            alpha=1.0, method="l1"
        )
    assert res.converged
    params = np.asarray(res.params)
    score = res.model.score(params)
    weights = np.asarray(res.mle_settings["alpha_l1"])
    free = ~res.trimmed
    assert np.all(params[free] != 0) and np.all(params[~free] == 0)
    np.testing.assert_allclose(
        score[free], weights[free] * np.sign(params[free]), atol=1e-6
    )
    assert np.all(np.abs(score[~free]) <= weights[~free] * (1 + 1e-6))


def test_the_covariance_name_is_taken_in_any_case():
    """As fit and statsmodels take it ("NONROBUST" was refused here)."""
    endog, exog = _logit_data()
    model = PolyhedralMixtureLogit(endog, exog, k=1)
    res = model.fit_regularized(alpha=3.0, method="l1", cov_type="NONROBUST")
    assert res.cov_type == "nonrobust"
    with pytest.raises(
        ValueError, match="cov_type must be one of 'nonrobust'; got 'HC0'"
    ):
        model.fit_regularized(alpha=3.0, method="l1", cov_type="HC0")


def test_margins_of_a_zeroed_column_have_no_standard_error():
    """Its effect is 0 given the zero, with no variance: NaN, as the zero's
    own bse (a 0 had statsmodels divide 0 by 0 for z, with a RuntimeWarning).
    An effect that is 0 for another reason keeps its standard error, as
    statsmodels' does (dy/ex at zero)."""
    endog, exog = _logit_data()
    alpha = np.full(exog.shape[1], 20.0)
    alpha[0] = 0.0
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
        alpha=alpha, method="l1"
    )
    zeros = np.flatnonzero(np.asarray(res.params) == 0.0)
    assert zeros.size and 0 not in zeros
    margins = res.get_margeff()
    frame = margins.summary_frame()  # no RuntimeWarning (warnings are errors)
    assert np.isnan(margins.margeff_se[zeros - 1]).all()
    assert np.isfinite(np.delete(margins.margeff_se, zeros - 1)).all()
    assert frame.shape[0] == exog.shape[1] - 1
    plain = PolyhedralMixtureLogit(endog, exog, k=1).fit()
    at_zero = plain.get_margeff(at="zero", method="dyex")
    theirs = sm.Logit(endog, exog).fit(disp=0).get_margeff(at="zero", method="dyex")
    np.testing.assert_allclose(at_zero.margeff_se, theirs.margeff_se, atol=1e-12)


def test_qc_verbose_shows_statsmodels_table():
    endog, exog = _logit_data()
    with pytest.warns(Warning) as caught:
        PolyhedralMixtureLogit(endog, exog, k=1).fit_regularized(
            alpha=20.0,
            method="l1",
            acc=1e-6,  # SLSQP stops short enough for the strict check to fail
            qc_tol=1e-12,
            trim_mode="off",
            qc_verbose=True,
        )
    words = " ".join(str(w.message) for w in caught)
    assert (
        "QC check did not pass" in words and "Recall the problem was rescaled" in words
    )


def _against_slsqp(model, alpha: float):
    """The L1 fit, and whether it is within the trimming's cost of SLSQP's
    own point (``trim_mode="off"``), whatever point SLSQP reaches (older
    scipy reaches others on these non-concave fits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HessianInversionWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = model.fit_regularized(alpha=alpha, method="l1")
        raw = model.fit_regularized(alpha=alpha, method="l1", trim_mode="off")
    weights = np.asarray(res.mle_settings["alpha_l1"])

    def objective(fit):
        return -fit.llf + weights @ np.abs(np.asarray(fit.params))

    small = np.abs(np.asarray(raw.params)) < 1e-4
    params = np.asarray(res.params)
    assert objective(res) <= objective(raw) + 2e-4 * weights @ small + 1e-6
    assert not np.any((params != 0) & (np.abs(params) < 1e-300))
    np.testing.assert_array_equal(res.trimmed, params == 0)
    return res, weights


def test_columns_in_other_units_at_k3_keep_slsqps_optimum(data_dir):
    """Heart at K = 3, alpha = 50, one column in units 1e4 times smaller and
    one 1e3 times larger: trimming in the user's units zeroes slopes that
    are small only in their units, and the polish cannot step (K = 3 is not
    concave there). A version that released such zeros to +-1e-308 ended at
    2043 where SLSQP had 150.8, not converged."""
    heart = pd.read_csv(data_dir / "heart.csv")
    endog = heart.pop("disease").to_numpy(dtype=float)
    exog = np.ascontiguousarray(sm.add_constant(heart.to_numpy(dtype=float)))
    exog[:, 1] *= 1e4
    exog[:, 2] /= 1e3
    _against_slsqp(PolyhedralMixtureLogit(endog, exog, k=3), 50.0)


def test_a_trimmed_fit_is_not_given_up_for_slsqps_point(data_dir):
    """ILPD at K = 3 with columns in units 1e-2 to 1e2: the first polish
    carried three larger slopes to 0 and every later round ended above
    SLSQP's point, so SLSQP's point was returned as it was, 19 slopes of
    1e-14 to 1e-4 counted as nonzero and the fit not converged. SLSQP's
    point with its own small values at 0, polished, is within the trimming's
    cost: the fit keeps its zeros."""
    ilpd = pd.read_csv(data_dir / "ilpd.csv")
    endog = (ilpd.pop("liver_patient").to_numpy() == 1).astype(float)
    ilpd["gender"] = (ilpd["gender"] == "Male").astype(float)
    exog = sm.add_constant(ilpd.fillna(ilpd.mean()).to_numpy(dtype=float))
    scales = 10.0 ** np.random.default_rng(2).integers(-2, 3, exog.shape[1] - 1)
    exog = np.ascontiguousarray(exog * np.r_[1.0, scales])
    res, weights = _against_slsqp(PolyhedralMixtureLogit(endog, exog, k=3), 5.0)
    params = np.asarray(res.params)
    assert not np.any((weights > 0) & (params != 0) & (np.abs(params) < 1e-8))


def test_wald_tests_of_an_l1_fit_leave_its_zeros_out():
    """A term whose coefficients the L1 fit set to zero has no variance: NaN in
    wald_test_terms (statsmodels' own L1 Logit raises there), and a clear
    error from wald_test; the estimated terms are tested as before."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.normal(size=(400, 3)), columns=["x1", "x2", "x3"])
    data["y"] = (0.5 + data.x1 + rng.logistic(size=400) > 0).astype(float)
    res = ps.plume("y ~ x1 + x2 + x3", data, k=1).fit_regularized(method="l1", alpha=20)
    assert res.trimmed.tolist() == [False, False, True, True]
    table = res.wald_test_terms().table
    assert table.loc[["x2", "x3"], "statistic"].isna().all()
    expected = res.wald_test("h1:x1 = 0", scalar=True).statistic
    assert table.loc["x1", "statistic"] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="weighs 'h1:x2', which the fit holds"):
        res.wald_test("h1:x1 = 0, h1:x2 = 0")
