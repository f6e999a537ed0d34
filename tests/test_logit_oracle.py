"""With K = 1 PLUME is logistic regression: statsmodels' Logit is the oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from conftest import logistic_data
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    HessianInversionWarning,
)

import plumestats.api as ps
import plumestats.formula.api as psf

RTOL = 1e-6  # the bar; in practice the agreement is ~1e-12


def _pair(formula, data, **fit_kwargs):
    logit = smf.logit(formula, data).fit(disp=0, **fit_kwargs)
    plume = psf.plume(formula, data, k=1).fit(**fit_kwargs)
    return logit, plume


def _assert_same_fit(logit, plume):
    np.testing.assert_allclose(
        plume.params.to_numpy(), logit.params.to_numpy(), rtol=RTOL
    )
    np.testing.assert_allclose(plume.bse.to_numpy(), logit.bse.to_numpy(), rtol=RTOL)
    np.testing.assert_allclose(plume.llf, logit.llf, rtol=RTOL)
    np.testing.assert_allclose(plume.llnull, logit.llnull, rtol=1e-10)
    np.testing.assert_allclose(plume.prsquared, logit.prsquared, rtol=RTOL)
    np.testing.assert_allclose(plume.llr, logit.llr, rtol=RTOL)
    np.testing.assert_allclose(plume.aic, logit.aic, rtol=RTOL)
    np.testing.assert_allclose(plume.bic, logit.bic, rtol=RTOL)
    assert plume.df_resid == logit.df_resid
    assert plume.df_model == logit.df_model
    np.testing.assert_allclose(
        plume.llr_pvalue, logit.llr_pvalue, rtol=1e-5, atol=1e-300
    )
    assert plume.nobs == logit.nobs
    np.testing.assert_allclose(
        plume.pvalues.to_numpy(), logit.pvalues.to_numpy(), rtol=1e-5, atol=1e-300
    )
    np.testing.assert_allclose(
        plume.conf_int().to_numpy(), logit.conf_int().to_numpy(), rtol=RTOL
    )
    np.testing.assert_array_equal(plume.pred_table(), logit.pred_table())
    np.testing.assert_allclose(plume.predict(), logit.predict(), rtol=1e-9)
    # what statsmodels' Newton records, read by scripts written for Logit
    ours, theirs = plume.mle_retvals, logit.mle_retvals
    np.testing.assert_allclose(ours["fopt"], theirs["fopt"], rtol=1e-10)
    # the Hessian of f: statsmodels 0.14.0 (the oldest we support) recorded
    # minus it, the log-likelihood's per observation
    hessian_of_f = theirs["Hessian"] * np.sign(theirs["Hessian"][0, 0])
    assert np.all(np.linalg.eigvalsh(ours["Hessian"]) > 0)  # f is at a minimum
    np.testing.assert_allclose(ours["Hessian"], hessian_of_f, rtol=1e-8)
    np.testing.assert_allclose(ours["score"], theirs["score"], atol=1e-8)
    assert (
        (ours["warnflag"], ours["converged"])
        == (0, True)
        == (
            theirs["warnflag"],
            theirs["converged"],
        )
    )


def test_pima_matches_logit(pima):
    formula = "diabetes ~ " + " + ".join(pima.columns[:-1])
    _assert_same_fit(*_pair(formula, pima))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_simulated_matches_logit(seed):
    data = logistic_data(nobs=300 + 100 * seed, d=4, seed=seed)
    _assert_same_fit(*_pair("y ~ x1 + x2 + x3 + x4", data))


def test_spector_matches_logit():
    """statsmodels' bundled spector data, through the array interface."""
    spector = sm.datasets.spector.load_pandas()
    exog = sm.add_constant(spector.exog, prepend=False)
    logit = sm.Logit(spector.endog, exog).fit(disp=0)
    from plumestats import PolyhedralMixtureLogit

    plume = PolyhedralMixtureLogit(spector.endog, exog, k=1).fit()
    np.testing.assert_allclose(
        plume.params.to_numpy(), logit.params.to_numpy(), rtol=RTOL
    )
    np.testing.assert_allclose(plume.bse.to_numpy(), logit.bse.to_numpy(), rtol=RTOL)
    assert list(plume.params.index) == [f"h1:{c}" for c in exog.columns]


def test_no_intercept_matches_logit():
    """df_model included: both count the parameters beyond the intercept-only
    null, rank(exog) - 1 = K p - 1, with or without a constant."""
    data = logistic_data(nobs=500, d=3, seed=4)
    logit, plume = _pair("y ~ x1 + x2 + x3 - 1", data)
    _assert_same_fit(logit, plume)
    assert plume.df_model == logit.df_model == 2


def test_collinear_design_counts_its_rank_as_logit_does():
    """A column that is a sum of two others: both count rank(exog) - 1
    degrees of freedom, so the information criteria and the LR test agree;
    at K = 2 each face counts the rank's parameters."""
    data = logistic_data(nobs=400, d=3, seed=7)
    data["x4"] = data.x1 + data.x2
    formula = "y ~ x1 + x2 + x3 + x4"
    # Newton's singular Hessian stops statsmodels' default method (and 0.14
    # warns that it cannot invert it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HessianInversionWarning)
        logit = smf.logit(formula, data).fit(method="bfgs", gtol=1e-10, disp=0)
    with pytest.warns(CollinearityWarning, match="rank deficient"):
        model = psf.plume(formula, data, k=1)
    with warnings.catch_warnings():
        # the information is singular: NaN standard errors, as warned
        warnings.simplefilter("ignore", HessianInversionWarning)
        plume = model.fit()
    assert (
        (plume.df_model, plume.df_resid)
        == (logit.df_model, logit.df_resid)
        == (
            3.0,
            396.0,
        )
    )
    np.testing.assert_allclose(plume.aic, logit.aic, rtol=1e-6)
    np.testing.assert_allclose(plume.bic, logit.bic, rtol=1e-6)
    np.testing.assert_allclose(plume.llr_pvalue, logit.llr_pvalue, rtol=1e-5)
    with pytest.warns(CollinearityWarning):
        two = psf.plume(formula, data, k=2)
    assert (two.df_model, two.df_resid, two.rank) == (2 * 4 - 1, 400 - 2 * 4, 4)


@pytest.mark.parametrize("cov_type", ["HC0", "cluster"])
def test_sandwich_covariances_match_logit(cov_type):
    data = logistic_data(nobs=400, d=3, seed=5)
    groups = np.arange(len(data)) % 37
    kwds = {"cov_type": cov_type}
    if cov_type == "cluster":
        kwds["cov_kwds"] = {"groups": groups}
    logit, plume = _pair("y ~ x1 + x2 + x3", data, **kwds)
    np.testing.assert_allclose(plume.bse.to_numpy(), logit.bse.to_numpy(), rtol=RTOL)
    assert plume.cov_type == cov_type


def test_names_in_any_case_as_statsmodels_takes_them():
    """cov_type="hc0" and info_criteria("AIC") work in statsmodels; they were
    refused here."""
    data = logistic_data(nobs=400, d=3, seed=5)
    logit, plume = _pair("y ~ x1 + x2 + x3", data, cov_type="hc0")
    assert plume.cov_type == "HC0"
    np.testing.assert_allclose(plume.bse.to_numpy(), logit.bse.to_numpy(), rtol=RTOL)
    for crit in ("AIC", "Bic"):
        np.testing.assert_allclose(
            plume.info_criteria(crit), logit.info_criteria(crit), rtol=RTOL
        )


def test_wald_and_t_test_match_logit():
    data = logistic_data(nobs=400, d=3, seed=6)
    logit, plume = _pair("y ~ x1 + x2 + x3", data)
    ours = plume.t_test("h1:x1 = h1:x2")
    theirs = logit.t_test("x1 = x2")
    np.testing.assert_allclose(ours.effect, theirs.effect, rtol=RTOL)
    np.testing.assert_allclose(ours.sd, theirs.sd, rtol=RTOL)
    wald = plume.wald_test("h1:x1 = 0, h1:x3 = 0", scalar=True)
    theirs = logit.wald_test("x1 = 0, x3 = 0", scalar=True)
    np.testing.assert_allclose(wald.statistic, theirs.statistic, rtol=RTOL)


def test_logit_oracle_on_pandas_categoricals():
    rng = np.random.default_rng(7)
    data = logistic_data(nobs=600, d=2, seed=7)
    data["g"] = pd.Categorical(rng.choice(["a", "b", "c"], size=len(data)))
    _assert_same_fit(*_pair("y ~ x1 + x2 + C(g)", data))


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])
def test_information_criteria_match_logit(cov_type):
    data = logistic_data(nobs=500, d=3, seed=8)
    logit, plume = _pair("y ~ x1 + x2 + x3", data, cov_type=cov_type)
    for crit in ("aic", "bic", "tic", "gbic"):
        np.testing.assert_allclose(
            plume.info_criteria(crit), logit.info_criteria(crit), rtol=1e-9
        )
    for crit in ("aic", "bic"):
        np.testing.assert_allclose(
            plume.info_criteria(crit, dk_params=2),
            logit.info_criteria(crit, dk_params=2),
            rtol=1e-9,
        )
    # statsmodels' gbic leaves dk_params out; ours counts it, as its docs say
    shift = 2 * np.log(plume.nobs)
    np.testing.assert_allclose(
        plume.info_criteria("gbic", dk_params=2),
        np.add(logit.info_criteria("gbic"), shift),
        rtol=1e-9,
    )


def test_predicted_variance_matches_logit():
    data = logistic_data(nobs=300, d=2, seed=9)
    logit, plume = _pair("y ~ x1 + x2", data)
    np.testing.assert_allclose(
        plume.predict(data, which="var"), logit.predict(data, which="var"), rtol=1e-9
    )


def test_get_distribution_is_logits():
    data = sm.datasets.spector.load_pandas().data
    logit, plume = _pair("GRADE ~ GPA + TUCE + PSI", data)
    ours = plume.model.get_distribution(plume.params.to_numpy())
    theirs = logit.model.get_distribution(logit.params.to_numpy())
    assert type(ours.dist) is type(theirs.dist)
    np.testing.assert_allclose(ours.mean(), theirs.mean(), rtol=RTOL)
    np.testing.assert_allclose(ours.var(), theirs.var(), rtol=RTOL)
    rows = plume.model.exog[:3]
    at_rows = plume.model.get_distribution(plume.params.to_numpy(), exog=rows)
    np.testing.assert_allclose(at_rows.mean(), theirs.mean()[:3], rtol=RTOL)
    with pytest.raises(ValueError, match="no offset"):
        plume.model.get_distribution(plume.params.to_numpy(), offset=np.zeros(32))


@pytest.mark.parametrize("method", ["hessian_factor", "score_factor", "cdf", "pdf"])
def test_logits_link_methods_are_refused_by_name(method):
    model = ps.plume("GRADE ~ GPA + TUCE + PSI", sm.datasets.spector.load_pandas().data)
    with pytest.raises(
        NotImplementedError, match=f"^{method} .*not available|^{method} is"
    ):
        getattr(model, method)(np.zeros(model.nparams))


def test_results_api_of_a_logit_script():
    """Calls a Logit analysis makes that failed or went stale (a read-only
    review swapped ps.plume into one)."""
    data = logistic_data(nobs=400, d=3, seed=12)
    formula = "y ~ x1 + x2 + x3"
    logit, plume = _pair(formula, data)
    # numpy floats, as statsmodels' (res.llf.round(3) failed on a float)
    for name in ("llf", "llnull", "llr", "llr_pvalue", "prsquared", "aic", "bic"):
        assert isinstance(getattr(plume, name), np.float64), name
    assert plume.method == logit.method == "MLE"
    np.testing.assert_allclose(plume.im_ratio, logit.im_ratio, rtol=1e-6)
    # initialize at other parameters: llf and pred_table follow them
    for res in (logit, plume):
        params = np.asarray(res.params).copy()
        params[0] += 1.0
        res.initialize(res.model, params)
    np.testing.assert_allclose(plume.llf, logit.llf, rtol=1e-10)
    np.testing.assert_allclose(plume.llf, plume.model.loglike(params), rtol=1e-12)
    np.testing.assert_array_equal(plume.pred_table(), logit.pred_table())
    np.testing.assert_allclose(plume.prsquared, logit.prsquared, rtol=1e-8)
    # statsmodels' fit keywords, and clear refusals
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        psf.plume(formula, data, k=1).fit(maxiter=1, warn_convergence=False)
        psf.plume(formula, data, k=1).fit(skip_hessian=True)
    for call in (plume.score_test, plume.set_null_options):
        with pytest.raises(NotImplementedError, match="not available"):
            call()
    with pytest.raises(NotImplementedError, match="single linear predictor"):
        plume.get_influence().resid_score_factor()
    with pytest.raises(TypeError, match="takes no offset"):
        psf.plume(formula, data, k=1, offset=np.zeros(len(data)))


def test_initialize_without_data_changes_nothing(tmp_path):
    data = logistic_data(nobs=300, d=2, seed=13)
    res = psf.plume("y ~ x1 + x2", data, k=1).fit()
    res.save_json(tmp_path / "fit.json")
    loaded = ps.load_json(tmp_path / "fit.json")
    before = loaded.params.copy()
    with pytest.raises(ValueError, match="JSON export does not hold"):
        loaded.initialize(loaded.model, np.asarray(before) + 1.0)
    np.testing.assert_array_equal(loaded.params, before)  # it was half-updated


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "cluster"])
def test_cov_kwds_hold_logits_keys(cov_type):
    """A Logit script reads res.cov_kwds["use_t"] or ["adjust_df"]."""
    data = logistic_data(300, d=2, seed=5)
    options = {"cov_type": cov_type}
    if cov_type == "cluster":
        options["cov_kwds"] = {"groups": np.arange(len(data)) % 7}
    ours = ps.plume("y ~ x1 + x2", data, k=1).fit(**options)
    theirs = smf.logit("y ~ x1 + x2", data).fit(disp=0, **options)
    for key in set(theirs.cov_kwds) - {"description", "groups"}:
        assert ours.cov_kwds[key] == theirs.cov_kwds[key], key


def test_k1_linear_predictor_is_logits_one_column():
    """At K = 1 ``which="linear"`` is the linear predictor, one value per
    row as ``Logit`` gives it: an ``(n, 1)`` frame broadcast against the
    fitted values to ``(n, n)`` without a word (a parity probe's find)."""
    data = logistic_data(nobs=300, d=2, seed=4)
    logit, plume = _pair("y ~ x1 + x2", data)
    new = data.iloc[:5]
    ours, theirs = (
        plume.predict(new, which="linear"),
        logit.predict(new, which="linear"),
    )
    assert isinstance(ours, pd.Series) and ours.shape == theirs.shape == (5,)
    pd.testing.assert_index_equal(ours.index, theirs.index)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    fitted = plume.predict(which="linear")
    assert fitted.shape == (300,)
    np.testing.assert_allclose(fitted, plume.fittedvalues)
    exog = plume.model.exog
    assert plume.model.predict(plume.params, exog, which="linear").shape == (300,)
    # the faces' own readings stay one column per face
    assert plume.predict(new, which="gate").shape == (5, 1)
    assert plume.active_face(new).tolist() == [0] * 5


@pytest.mark.parametrize("average", [False, True])
def test_k1_variance_prediction_is_logits(average):
    """``get_prediction(which="var")``, the Bernoulli variance P (1 - P):
    Logit's values, standard errors (its numerical delta method against our
    analytic one) and normal intervals, row by row and averaged."""
    data = logistic_data(nobs=300, d=2, seed=4)
    logit, plume = _pair("y ~ x1 + x2", data)
    rows = data if average else data.iloc[:7]
    ours, theirs = (
        fit.get_prediction(rows, which="var", average=average).summary_frame(0.1)
        for fit in (plume, logit)
    )
    pd.testing.assert_index_equal(ours.index, theirs.index)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7)
