"""Standard errors of a rank-deficient design: the estimable coefficients get
theirs, the unidentified ones NaN.

A coefficient is estimable when its column is in no null direction of the
design; its variance is then the same under any generalised inverse of the
information, so the fit on the design without the dependent columns is an
exact oracle: ``Logit`` at K = 1, PLUME itself at K = 2 (started at the
reduced fit's maximum, the dependent columns' coefficients at 0).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import unwrapped
from numpy.testing import assert_allclose
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    HessianInversionWarning,
)

import plumestats.api as ps


def _fit(endog, exog, **fit_kwargs):
    """A PLUME fit of a design the caller knows to be rank deficient."""
    k = fit_kwargs.pop("k", 1)
    with pytest.warns(CollinearityWarning, match="are not identified"):
        model = ps.PolyhedralMixtureLogit(endog, exog, k=k)
    return model.fit(disp=0, **fit_kwargs)


@pytest.fixture(scope="module")
def summed():
    """x4 = x1 + x2: the intercept and x3 estimable, x1, x2, x4 not."""
    rng = np.random.default_rng(0)
    nobs = 400
    x = rng.normal(size=(nobs, 3))
    exog = pd.DataFrame(x, columns=["x1", "x2", "x3"]).assign(x4=x[:, 0] + x[:, 1])
    exog = sm.add_constant(exog)
    signal = 0.5 + x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + rng.logistic(size=nobs)
    groups = rng.integers(0, 30, nobs)
    return pd.Series((signal > 0).astype(float), name="y"), exog, groups


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "cluster"])
def test_k1_estimable_standard_errors_equal_logit_on_the_reduced_design(
    summed, cov_type
):
    endog, exog, groups = summed
    kwds = {"cov_kwds": {"groups": groups}} if cov_type == "cluster" else {}
    plume = _fit(endog, exog, cov_type=cov_type, **kwds)
    reduced = exog.drop(columns="x4")
    logit = sm.Logit(endog, reduced).fit(disp=0, cov_type=cov_type, **kwds)
    estimable, unidentified = ["h1:const", "h1:x3"], ["h1:x1", "h1:x2", "h1:x4"]
    reduced_names = ["const", "x3"]
    assert_allclose(plume.params[estimable], logit.params[reduced_names], rtol=1e-7)
    assert_allclose(plume.bse[estimable], logit.bse[reduced_names], rtol=1e-7)
    assert plume.bse[unidentified].isna().all()
    assert plume.pvalues[unidentified].isna().all()
    assert np.isfinite(plume.conf_int().loc[estimable]).all().all()
    assert plume.mle_retvals["unidentified"].tolist() == [
        False,
        True,
        True,
        False,
        True,
    ]


def test_k1_leverage_reads_every_identified_direction(summed):
    """HC3's leverage is that of the reduced design (a bread with the
    unidentified rows NaN would have dropped x1 and x2 from it)."""
    endog, exog, _ = summed
    full = _fit(endog, exog, cov_type="HC3")
    reduced = ps.PolyhedralMixtureLogit(endog, exog.drop(columns="x4"), k=1)
    reduced = reduced.fit(disp=0, cov_type="HC3")
    estimable = ["h1:const", "h1:x3"]
    assert_allclose(full.bse[estimable], reduced.bse[estimable], rtol=1e-7)
    assert_allclose(
        full.get_influence().hat_matrix_diag,
        reduced.get_influence().hat_matrix_diag,
        rtol=1e-7,
    )


def test_k1_every_level_and_the_intercept():
    """Dummies of every level beside the intercept: those four coefficients
    are unidentified, the slope estimable."""
    rng = np.random.default_rng(3)
    nobs = 300
    level = rng.integers(0, 3, nobs)
    x = rng.normal(size=nobs)
    dummies = np.eye(3)[level]
    exog = np.column_stack([np.ones(nobs), dummies, x])
    endog = (0.3 * level + x + rng.logistic(size=nobs) > 0.5).astype(float)
    plume = _fit(endog, exog)
    logit = sm.Logit(endog, exog[:, [0, 2, 3, 4]]).fit(disp=0)
    assert_allclose(plume.params[4], logit.params[3], rtol=1e-7)
    assert_allclose(plume.bse[4], logit.bse[3], rtol=1e-7)
    assert np.isnan(plume.bse[:4]).all()


def test_k1_an_all_zero_column_leaves_the_others_estimable():
    rng = np.random.default_rng(4)
    nobs = 300
    exog = np.column_stack([np.ones(nobs), rng.normal(size=(nobs, 2))])
    endog = (exog[:, 1] - exog[:, 2] + rng.logistic(size=nobs) > 0).astype(float)
    padded = np.column_stack([exog[:, :2], np.zeros(nobs), exog[:, 2]])
    plume = _fit(endog, padded)
    logit = sm.Logit(endog, exog).fit(disp=0)
    assert_allclose(plume.bse[[0, 1, 3]], logit.bse, rtol=1e-7)
    assert np.isnan(plume.bse[2])


def test_k2_estimable_standard_errors_equal_the_reduced_fit(summed):
    endog, exog, _ = summed
    reduced_model = ps.PolyhedralMixtureLogit(endog, exog.drop(columns="x4"), k=2)
    for cov_type in ("nonrobust", "HC0", "HC3"):
        reduced = reduced_model.fit(disp=0, random_state=0, cov_type=cov_type)
        faces = np.asarray(reduced.params).reshape(2, 4)
        start = np.column_stack([faces, np.zeros(2)]).ravel()
        full = _fit(endog, exog, k=2, start_params=start, cov_type=cov_type)
        assert_allclose(full.llf, reduced.llf, rtol=1e-10)
        for face in ("h1", "h2"):
            estimable = [f"{face}:const", f"{face}:x3"]
            assert_allclose(
                full.params[estimable], reduced.params[estimable], rtol=1e-6
            )
            assert_allclose(full.bse[estimable], reduced.bse[estimable], rtol=1e-6)
            assert full.bse[[f"{face}:x1", f"{face}:x2", f"{face}:x4"]].isna().all()
        assert_allclose(
            full.get_prediction(exog.iloc[:5]).se,
            reduced.get_prediction(exog.drop(columns="x4").iloc[:5]).se,
            rtol=1e-6,
        )


def test_summary_names_the_unidentified_coefficients(summed):
    endog, exog, _ = summed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no HessianInversionWarning any more
        text = unwrapped(_fit(endog, exog).summary().as_text())
    assert (
        "the coefficients of 'x1', 'x2', 'x4' are not identified (arbitrary "
        "estimates, NaN standard errors); the other coefficients are estimable"
    ) in text
    assert "the observed information is not positive definite" not in text


def test_a_penalty_identifies_every_coefficient(summed):
    endog, exog, _ = summed
    res = _fit(endog, exog, alpha=1e-3)
    assert np.isfinite(res.bse).all()
    assert "unidentified" not in res.mle_retvals


def test_label_flips_estimable_standard_errors_equal_the_reduced_fit(summed):
    endog, exog, _ = summed
    with pytest.warns(CollinearityWarning, match="are not identified"):
        model = ps.LabelFlipPolyhedralLogit(endog, exog, k=1)
    full = model.fit(disp=0)
    reduced = ps.LabelFlipPolyhedralLogit(endog, exog.drop(columns="x4"), k=1)
    reduced = reduced.fit(disp=0)
    kept = ["h1:const", "h1:x3", "flip_logit"]
    assert_allclose(full.bse[kept], reduced.bse[kept], rtol=1e-6)
    assert full.bse[["h1:x1", "h1:x2", "h1:x4"]].isna().all()
    assert "'x1', 'x2', 'x4' are not identified" in unwrapped(full.summary().as_text())


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])
def test_tests_of_estimable_combinations_equal_the_reduced_design(summed, cov_type):
    """t and Wald tests of estimable combinations, even of unidentified
    coefficients (x1 - x2, x1 + x4: with x4 = x1 + x2 the reduced design's
    x1 and x2 coefficients are x1 + x4 and x2 + x4), equal the reduced
    design's; a combination that is not estimable is NaN."""
    endog, exog, _ = summed
    full = _fit(endog, exog, cov_type=cov_type)
    reduced = sm.Logit(endog, exog.drop(columns="x4")).fit(disp=0, cov_type=cov_type)
    pairs = [
        ("h1:x3 = 0.2", "x3 = 0.2"),
        ("h1:x1 - h1:x2 = 0", "x1 - x2 = 0"),
        ("h1:x1 + h1:x4 = 1", "x1 = 1"),
        ("h1:const + 2 * h1:x2 + 2 * h1:x4 = 0", "const + 2 * x2 = 0"),
    ]
    for constraint, expected in pairs:
        assert_allclose(
            full.t_test(constraint).tvalue,
            reduced.t_test(expected).tvalue,
            rtol=1e-6,
        )
    wald = full.wald_test("h1:x3 = 0, h1:x1 + h1:x4 = 0", scalar=True)
    expected = reduced.wald_test("x3 = 0, x1 = 0", scalar=True)
    assert_allclose(wald.statistic, expected.statistic, rtol=1e-6)
    for constraint in ("h1:x1 = 0", "h1:x4 = 0", "h1:x1 + h1:x2 = 0"):
        assert np.isnan(full.t_test(constraint).tvalue).all()


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])
def test_predictions_and_margins_of_estimable_rows(summed, cov_type):
    """At rows in the design's row space (x4 = x1 + x2) a prediction is
    estimable: its standard error is the reduced design's; at a row that
    breaks the dependency it is NaN. x3's average marginal effect is
    estimable, x1's (x4 held) is not."""
    endog, exog, _ = summed
    full = _fit(endog, exog, cov_type=cov_type)
    reduced_exog = exog.drop(columns="x4")
    reduced = sm.Logit(endog, reduced_exog).fit(disp=0, cov_type=cov_type)
    rows = exog.iloc[:5].copy()
    ours = full.get_prediction(rows).summary_frame()
    theirs = reduced.get_prediction(reduced_exog.iloc[:5]).summary_frame()
    assert_allclose(ours["predicted"], theirs["predicted"], rtol=1e-7)
    assert_allclose(ours["se"], theirs["se"], rtol=1e-6)
    average = full.get_prediction(exog, average=True).summary_frame()
    expected = reduced.get_prediction(reduced_exog, average=True).summary_frame()
    assert_allclose(average["se"], expected["se"], rtol=1e-6)
    rows.loc[rows.index[0], "x4"] += 1.0
    broken = full.get_prediction(rows).summary_frame()
    assert np.isnan(broken["se"].iloc[0])
    assert np.isfinite(broken["se"].iloc[1:]).all()
    ours, theirs = full.get_margeff(), reduced.get_margeff()
    names = list(full.model.exog_names[1:])
    x3 = names.index("x3")
    assert_allclose(ours.margeff_se[x3], theirs.margeff_se[2], rtol=1e-6)
    assert np.isnan(ours.margeff_se[names.index("x1")])


def test_joint_tests_refuse_what_is_not_estimable(summed):
    endog, exog, _ = summed
    full = _fit(endog, exog, k=2)
    with pytest.raises(ValueError, match="weighs 'h2:x1' along a null direction"):
        full.wald_test("h1:x3 = 0, h2:x1 = 0")
    with pytest.raises(ValueError, match="constraint 1 is not estimable"):
        full.f_test("h1:x4 = 0")
    table = full.wald_test_terms().table
    assert table.loc[["x1", "x2", "x4"], "statistic"].isna().all()
    assert table.loc[["const", "x3"], "statistic"].notna().all()
    assert table.loc["x1", "df_constraint"] == 2


def test_bootstrap_leaves_the_unidentified_coefficients_out(summed):
    """Their replicates are arbitrary: NaN; the estimable ones' equal the
    reduced design's bootstrap, replicate by replicate (the same resamples)."""
    endog, exog, _ = summed
    full = _fit(endog, exog).bootstrap(n_boot=20, random_state=1)
    reduced = ps.PolyhedralMixtureLogit(endog, exog.drop(columns="x4"), k=1)
    reduced = reduced.fit(disp=0).bootstrap(n_boot=20, random_state=1)
    estimable = ["h1:const", "h1:x3"]
    assert_allclose(full.bse[estimable], reduced.bse[estimable], rtol=1e-6)
    assert full.bse[["h1:x1", "h1:x2", "h1:x4"]].isna().all()
    assert full.conf_int().loc["h1:x4"].isna().all()


def test_nearly_collinear_columns_beside_a_dependent_one_are_named(summed):
    endog, exog, _ = summed
    rng = np.random.default_rng(5)
    near = exog.assign(x6=exog.x3 + 3e-8 * rng.normal(size=len(exog)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(HessianInversionWarning, match="even with the coefficients"):
            _fit(endog, near)


@pytest.mark.parametrize("k", [1, 2])
def test_influence_measures_equal_the_reduced_fit(summed, k):
    """Cook's distance, DFFITS and the estimable DFBETAS of the reduced design's
    fit at the same maximum (dropping an observation moves the unidentified
    coefficients arbitrarily: the dependent ones are held)."""
    endog, exog, _ = summed
    reduced = ps.PolyhedralMixtureLogit(endog, exog.drop(columns="x4"), k=k)
    reduced = reduced.fit(disp=0, random_state=0)
    faces = np.asarray(reduced.params).reshape(k, 4)
    start = np.column_stack([faces, np.zeros(k)]).ravel()
    full = _fit(endog, exog, k=k, start_params=start)
    ours, theirs = full.get_influence(), reduced.get_influence()
    assert_allclose(ours.cooks_distance[0], theirs.cooks_distance[0], rtol=1e-6)
    assert_allclose(ours.cooks_distance[1], theirs.cooks_distance[1], rtol=1e-6)
    assert_allclose(ours.d_fittedvalues_scaled, theirs.d_fittedvalues_scaled, rtol=1e-6)
    frame, expected = ours.summary_frame(), theirs.summary_frame()
    assert_allclose(frame["dfb_h1:x3"], expected["dfb_h1:x3"], rtol=1e-6)
    assert frame["dfb_h1:x1"].isna().all()


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])
def test_information_criteria_equal_the_reduced_fit(summed, cov_type):
    endog, exog, _ = summed
    full = _fit(endog, exog, cov_type=cov_type)
    reduced = ps.PolyhedralMixtureLogit(endog, exog.drop(columns="x4"), k=1)
    reduced = reduced.fit(disp=0, cov_type=cov_type)
    for crit in ("aic", "bic", "tic"):
        assert_allclose(
            full.info_criteria(crit), reduced.info_criteria(crit), rtol=1e-8
        )
    assert_allclose(
        full.info_criteria("gbic"), reduced.info_criteria("gbic"), rtol=1e-8
    )


def test_a_column_far_smaller_than_its_partner_is_still_unidentified(summed):
    """x4 = x1 + x2 with x1 in units 1e8 times larger: x2's share of the null
    direction is about 7e-9 in the scaled design, yet it moves one for one."""
    endog, exog, _ = summed
    scaled = exog.assign(x1=exog.x1 * 1e8, x4=exog.x1 * 1e8 + exog.x2)
    res = _fit(endog, scaled)
    assert res.bse[["h1:x1", "h1:x2", "h1:x4"]].isna().all()
    assert np.isfinite(res.bse[["h1:const", "h1:x3"]]).all()
    assert np.isnan(res.t_test("h1:x2 = 0").tvalue).all()


def test_bootstrap_fails_a_replicate_that_loses_a_rare_level():
    """A full-rank fit: a resample without the level's rows leaves its
    coefficient unidentified, arbitrary (it would stay at the start value):
    such a replicate fails, as it did when its information was singular."""
    rng = np.random.default_rng(0)
    nobs = 200
    rare = np.zeros(nobs)
    rare[:2] = 1.0
    exog = np.column_stack([np.ones(nobs), rng.normal(size=nobs), rare])
    endog = (exog[:, 1] + rng.logistic(size=nobs) > 0).astype(float)
    res = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(disp=0)
    boot = res.bootstrap(n_boot=40, random_state=0)
    lost = [f for f in boot.failures if "not identified by the resample" in f[0]]
    assert lost
    assert not np.any(boot.params.iloc[:, 2] == res.params[2])


def test_a_model_pickled_with_an_older_aliasing_reads_as_full_rank(summed):
    """Its aliasing has no null directions: inference falls back to the
    masked covariance (NaN for what it cannot tell), never an error."""
    from plumestats._aliasing import Aliasing

    endog, exog, _ = summed
    res = _fit(endog, exog)
    res.model._aliasing = Aliasing((4,), (1, 2, 4))
    assert_allclose(
        res.t_test("h1:x3 = 0").sd, np.sqrt(res.cov_params().iloc[3, 3]), rtol=1e-12
    )
    assert np.isnan(res.t_test("h1:x1 - h1:x2 = 0").sd).all()
    assert np.isnan(res.get_prediction(exog.iloc[:2]).se).all()


def test_a_json_copy_reads_the_estimable_combinations_as_the_fit(summed, tmp_path):
    endog, exog, _ = summed
    for cov_type in ("nonrobust", "HC0"):
        res = _fit(endog, exog, k=2, cov_type=cov_type)
        res.save_json(tmp_path / "fit.json")
        back = ps.load_json(tmp_path / "fit.json")
        for constraint in ("h1:x3 = 0", "h2:x1 - h2:x2 = 0"):
            assert_allclose(
                back.t_test(constraint).sd, res.t_test(constraint).sd, rtol=1e-12
            )
        assert_allclose(
            back.get_prediction(exog.iloc[:3]).se,
            res.get_prediction(exog.iloc[:3]).se,
            rtol=1e-12,
        )
        with pytest.raises(ValueError, match="not estimable"):
            back.wald_test("h1:x1 = 0")


def test_a_nearly_collinear_pair_elsewhere_does_not_hide_a_dependency():
    """x4 = x1 + x2 with x1 1e8 times smaller than x2, beside an unrelated
    nearly collinear pair (z2 = z1 + 1e-6 noise, full rank): x1 stays
    unidentified (the pair's rounding bound is its own), and the warning
    names the same columns in both its lists."""
    rng = np.random.default_rng(1)
    nobs = 2000
    x1, x2, x3, z1 = rng.normal(size=(4, nobs))
    x1 = 1e-8 * x1
    exog = pd.DataFrame(
        {"const": 1.0, "x1": x1, "x2": x2, "x3": x3, "x4": x1 + x2, "z1": z1}
    ).assign(z2=z1 + 1e-6 * rng.normal(size=nobs))
    endog = (x2 + x3 + rng.logistic(size=nobs) > 0).astype(float)
    with pytest.warns(CollinearityWarning) as caught:
        model = ps.PolyhedralMixtureLogit(endog, exog, k=1)
    message = str(caught[0].message)
    assert "combinations of other columns: 'x1', 'x2', 'x4'" in message
    assert "coefficients of 'x1', 'x2', 'x4' are not identified" in message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = model.fit(disp=0)
    assert res.mle_retvals["unidentified"].tolist() == [0, 1, 1, 0, 1, 0, 0]


def test_a_full_rank_fit_writes_the_json_it_wrote_before(tmp_path):
    """No aliasing and no second covariance in a full-rank fit's file (nor
    for a flip rate held at its boundary), and a damaged aliasing is refused
    by name."""
    import json

    rng = np.random.default_rng(2)
    exog = np.column_stack([np.ones(300), rng.normal(size=(300, 2))])
    endog = (exog[:, 1] + rng.logistic(size=300) > 0).astype(float)
    res = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(disp=0, cov_type="HC1")
    document = json.loads(res.to_json())
    assert "aliasing" not in document["model"]
    assert not {"_bread_held", "_robust_held"} & set(document["results"])


def test_a_damaged_aliasing_is_refused(summed, tmp_path):
    import json

    endog, exog, _ = summed
    document = json.loads(_fit(endog, exog).to_json())
    document["model"]["aliasing"]["null_basis"] = "x"
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"aliasing (is malformed|has shapes)"):
        ps.load_json(path)


@pytest.mark.parametrize("digits", [10, 11, 12])
def test_a_dependency_rounded_as_in_a_csv_file(digits):
    """x4 = x1 + x2, every column rounded to a CSV's significant digits: the
    rank rule takes x4 as dependent (from 10 digits on, here), and the bounds
    allow for the rounding: x3 stays identified and the sample's rows
    estimable (with 1e-12 alone, x3 was unidentified and most rows NaN). At
    10 digits the fit stops short (the nearly flat direction): a
    ConvergenceWarning, its estimable coefficients' errors still there."""
    rng = np.random.default_rng(3)
    nobs = 500
    x1, x2, x3 = rng.normal(size=(3, nobs))
    columns = np.column_stack([x1, x2, x3, x1 + x2])
    rounded = np.array([[float(f"{v:.{digits - 1}e}") for v in row] for row in columns])
    exog = pd.DataFrame(rounded, columns=["x1", "x2", "x3", "x4"])
    exog.insert(0, "const", 1.0)
    endog = (x1 - x2 + x3 + rng.logistic(size=nobs) > 0).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = _fit(endog, exog)
    assert res.mle_retvals["unidentified"].tolist() == [0, 1, 1, 0, 1]
    assert np.isfinite(res.get_prediction(exog).se).all()
    reduced = sm.Logit(endog, exog.drop(columns="x4")).fit(disp=0)
    assert_allclose(res.bse["h1:x3"], reduced.bse["x3"], rtol=1e-6)
