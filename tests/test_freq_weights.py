"""Frequency weights (issue 30): a row of weight f is f identical observations.

The independent truths: the fit on the rows repeated (every estimate,
standard error, count and criterion equal to 1e-8), statsmodels GLM's own
``freq_weights`` at K = 1, and weights of one (the unweighted fit).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import unwrapped

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit as PM
from plumestats._bootstrap import resampled_weights
from plumestats._sharing import results_from_json

FORMULA = "y ~ x1 + x2"
TOL = 1e-8


@pytest.fixture(scope="module")
def weighted():
    """A two-face sample, integer weights 0..3, and the rows repeated."""
    data, _ = ps.simulate_polyhedron(240, d=2, k=2, noise=0.1, random_state=3)
    rng = np.random.default_rng(1)
    data["g"] = rng.integers(0, 12, len(data))
    data["h"] = rng.integers(0, 7, len(data))
    data["d"] = rng.integers(0, 2, len(data))
    weights = rng.integers(0, 4, len(data))
    repeated = data.loc[np.repeat(data.index, weights)].reset_index(drop=True)
    return data, weights, repeated


@pytest.fixture(scope="module")
def pair(weighted):
    """The default K = 2 fit with the weights, and on the rows repeated."""
    data, weights, repeated = weighted
    return (
        ps.plume(FORMULA, data, k=2, freq_weights=weights).fit(),
        ps.plume(FORMULA, repeated, k=2).fit(),
    )


def _close(a, b, tol=TOL):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=tol)


def _same_fit(a, b):
    _close(a.params, b.params)
    _close(a.bse, b.bse)
    assert a.nobs == b.nobs
    assert (a.df_model, a.df_resid) == (b.df_model, b.df_resid)
    for name in ("llf", "llnull", "aic", "bic", "prsquared"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), abs=TOL)
    _close(a.pred_table(), b.pred_table(), 0)
    _close(a.pred_table(0.3), b.pred_table(0.3), 0)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize(
    "options", [{}, {"alpha": 0.01}, {"chunksize": 50}, {"mstep": "bfgs"}]
)
def test_weights_equal_the_rows_repeated(weighted, k, options):
    data, weights, repeated = weighted
    a = ps.plume(FORMULA, data, k=k, freq_weights=weights).fit(**options)
    b = ps.plume(FORMULA, repeated, k=k).fit(**options)
    _same_fit(a, b)
    assert a.nobs == weights.sum() and a.df_resid == weights.sum() - 3 * k


@pytest.mark.parametrize("variant", [ps.spla1, ps.plume_flip])
def test_variants_equal_the_rows_repeated(weighted, variant):
    data, weights, repeated = weighted
    model = variant(FORMULA, repeated, k=2)
    # from one start: SPLA1's likelihood has kinks, and the k-means start
    # (of the distinct rows, or of the copies) can end at another kink
    # (a small penalty: with label flips this sample is separated)
    options = {"start_params": model.start_params, "alpha": 1e-3}
    a = variant(FORMULA, data, k=2, freq_weights=weights).fit(**options)
    _same_fit(a, model.fit(**options))


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "HC2", "HC3", "g", "g+h"])
def test_robust_covariances_equal_the_rows_repeated(weighted, cov_type):
    data, weights, repeated = weighted
    options = [{"cov_type": cov_type}, {"cov_type": cov_type}]
    if cov_type.startswith("g"):
        columns = cov_type.split("+")
        options = [
            {"cov_type": "cluster", "cov_kwds": {"groups": frame[columns].to_numpy()}}
            for frame in (data, repeated)
        ]
    a = ps.plume(FORMULA, data, k=2, freq_weights=weights).fit(**options[0])
    b = ps.plume(FORMULA, repeated, k=2).fit(**options[1])
    _close(a.bse, b.bse)
    assert a.cov_kwds["description"] == b.cov_kwds["description"]


def test_k1_equals_glm_freq_weights(weighted):
    data, weights, _ = weighted
    a = ps.plume(FORMULA, data, k=1, freq_weights=weights).fit()
    glm = sm.GLM.from_formula(
        FORMULA, data, family=sm.families.Binomial(), freq_weights=weights
    ).fit(tol=1e-14)
    _close(a.params, glm.params)
    _close(a.bse, glm.bse)
    assert a.llf == pytest.approx(glm.llf, abs=1e-8)
    assert a.df_resid == glm.df_resid


def test_weights_of_one_and_zero(weighted):
    data, weights, _ = weighted
    plain = ps.plume(FORMULA, data, k=2).fit()
    ones = ps.plume(FORMULA, data, k=2, freq_weights=np.ones(len(data))).fit()
    _close(ones.params, plain.params, 1e-10)
    _close(ones.bse, plain.bse, 1e-10)
    assert ones.nobs == plain.nobs and ones.llf == pytest.approx(plain.llf)
    kept = weights > 0
    dropped = ps.plume(FORMULA, data[kept], k=2).fit()
    zeros = ps.plume(FORMULA, data, k=2, freq_weights=kept.astype(float)).fit()
    _close(zeros.params, dropped.params)
    # the rows of weight 0 are still predicted
    assert np.shape(zeros.predict()) == (len(data),)


def test_arrays_with_missing_drop(weighted):
    data, weights, _ = weighted
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    exog[5, 1] = np.nan
    a = PM(data["y"], exog, k=2, missing="drop", freq_weights=weights).fit()
    rows = np.arange(len(data)) != 5
    b = PM(data["y"][rows], exog[rows], k=2, freq_weights=weights[rows]).fit()
    _close(a.params, b.params)
    assert a.nobs == weights[rows].sum()


def test_per_row_methods_carry_the_weights(weighted):
    data, weights, _ = weighted
    res = ps.plume(FORMULA, data, k=2, freq_weights=weights).fit()
    model, params = res.model, np.asarray(res.params)
    assert model.loglikeobs(params).sum() == pytest.approx(res.llf)
    _close(model.score_obs(params).sum(axis=0), model.score(params), 1e-8)
    assert np.all(model.loglikeobs(params)[weights == 0] == 0)


def test_margins_and_average_prediction_equal_the_rows_repeated(weighted):
    data, weights, repeated = weighted
    formula = "y ~ x1 + x2 + d"
    a = ps.plume(formula, data, k=2, freq_weights=weights).fit()
    b = ps.plume(formula, repeated, k=2).fit()
    for options in ({"at": "overall", "dummy": True}, {"at": "mean"}, {"at": "median"}):
        ma, mb = a.get_margeff(**options), b.get_margeff(**options)
        _close(ma.margeff, mb.margeff)
        _close(ma.margeff_se, mb.margeff_se)
    pa = a.get_prediction(average=True)
    pb = b.get_prediction(average=True)
    _close(pa.predicted, pb.predicted)
    _close(pa.se, pb.se)


def test_bound_and_summary(weighted, pair):
    data, weights, _ = weighted
    a, b = pair
    assert a.rademacher_bound().log10_total == pytest.approx(
        b.rademacher_bound().log10_total, abs=TOL
    )
    text = unwrapped(a.summary())
    assert f"{len(data)} rows stand for {weights.sum()} observations" in text
    assert re.search(rf"No. Observations:\s+{weights.sum()}\n", text)
    loaded = results_from_json(a.to_json())
    assert "rows stand for" in unwrapped(loaded.summary())


def test_select_k_equals_the_rows_repeated(weighted):
    data, weights, repeated = weighted
    options = {"ks": (1, 2), "gammas": (1.0,)}
    a = ps.select_k(FORMULA, data, freq_weights=weights, **options)
    b = ps.select_k(FORMULA, repeated, **options)
    _close(a.table[["llf", "aic", "bic"]], b.table[["llf", "aic", "bic"]], 1e-7)
    assert a.chosen == b.chosen


def test_select_k_cv_scores_are_per_observation(weighted):
    data, weights, _ = weighted
    options = {"ks": (1, 2), "gammas": (1.0,), "criterion": "cv", "cv": 4}
    sel = ps.select_k(FORMULA, data, freq_weights=weights, **options)
    ones = ps.select_k(FORMULA, data, freq_weights=np.ones(len(data)), **options)
    plain = ps.select_k(FORMULA, data, **options)
    _close(ones.table["cv_logloss"], plain.table["cv_logloss"], 1e-10)
    assert not np.allclose(sel.table["cv_logloss"], plain.table["cv_logloss"])
    assert np.all(np.isfinite(sel.table["cv_logloss_se"]))


def test_bootstrap_resamples_observations(weighted):
    data, weights, _ = weighted
    res = ps.plume(FORMULA, data, k=1, freq_weights=weights).fit()
    boot = res.bootstrap(n_boot=30, random_state=0)
    again = res.bootstrap(n_boot=30, random_state=0)
    _close(boot.params, again.params, 0)
    assert boot.n_failed == 0
    # the bootstrap SE is near the model's (30 draws: within a factor 1.6)
    assert np.all(np.abs(np.log(boot.bse.to_numpy() / res.bse.to_numpy())) < 0.5)
    draw = resampled_weights(weights.astype(float), np.random.default_rng(0))
    assert draw.sum() == weights.sum() and np.all(draw[weights == 0] == 0)


def test_lr_bootstrap_with_weights(weighted):
    data, weights, _ = weighted
    fits = [ps.plume(FORMULA, data, k=k, freq_weights=weights).fit() for k in (1, 2)]
    test = ps.compare_lr_test(*fits, method="bootstrap", n_boot=9, random_state=0)
    assert test.n_failed == 0 and 0 < test.bootstrap_pvalue <= 1
    plain = ps.plume(FORMULA, data, k=2).fit()
    with pytest.raises(ValueError, match="different freq_weights"):
        ps.compare_lr_test(fits[0], plain, method="bootstrap", n_boot=3)


def test_profile_intervals_equal_the_rows_repeated(weighted):
    data, weights, repeated = weighted
    a = ps.plume(FORMULA, data, k=1, freq_weights=weights).fit()
    b = ps.plume(FORMULA, repeated, k=1).fit()
    _close(a.conf_int(method="profile"), b.conf_int(method="profile"), 1e-6)


def test_remove_data_drops_the_weights(weighted):
    data, weights, _ = weighted
    res = ps.plume(FORMULA, data, k=2, freq_weights=weights).fit()
    res.remove_data()
    assert res.model.freq_weights is None
    assert "rows stand for" in unwrapped(res.summary())


def test_dask_weights_equal_the_rows_repeated(weighted):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    data, weights, repeated = weighted
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    with dask.config.set(scheduler="synchronous"):
        a = PM(
            da.from_array(data["y"].to_numpy(), chunks=70),
            da.from_array(exog, chunks=(70, 3)),
            k=2,
            freq_weights=da.from_array(weights.astype(float), chunks=50),
        ).fit(cov_type="HC1")
        exog_repeated = sm.add_constant(repeated[["x1", "x2"]].to_numpy())
        b = PM(repeated["y"].to_numpy(), exog_repeated, k=2).fit(cov_type="HC1")
        _close(a.params, b.params)
        _close(a.bse, b.bse)
        assert a.nobs == b.nobs and a.llf == pytest.approx(b.llf)
        _close(a.pred_table(0.3), b.pred_table(0.3), 0)
        with pytest.raises(ValueError, match="1 negative values"):
            bad = weights.astype(float)
            bad[9] = -2.0
            PM(
                da.from_array(data["y"].to_numpy(), chunks=70),
                da.from_array(exog, chunks=(70, 3)),
                freq_weights=da.from_array(bad, chunks=70),
            )


def test_sklearn_sample_weight(weighted):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from plumestats.sklearn import PolyhedralClassifier

    data, weights, repeated = weighted
    X, y = data[["x1", "x2"]].to_numpy(), data["y"].to_numpy()
    Xr, yr = repeated[["x1", "x2"]].to_numpy(), repeated["y"].to_numpy()
    a = PolyhedralClassifier().fit(X, y, sample_weight=weights)
    b = PolyhedralClassifier().fit(Xr, yr)
    assert a.k_ == b.k_
    _close(a.coef_, b.coef_)
    _close(a.predict_proba(X), b.predict_proba(X))
    # K = 1 at alpha="auto" is the weighted LogisticRegression() on features
    # standardised with the same weights
    one = PolyhedralClassifier(k=1).fit(X, y, sample_weight=weights)
    scaler = StandardScaler().fit(X, sample_weight=weights)
    reference = LogisticRegression(tol=1e-12, max_iter=10_000).fit(
        scaler.transform(X), y, sample_weight=weights
    )
    _close(one.predict_proba(X), reference.predict_proba(scaler.transform(X)), 1e-7)
    pd.testing.assert_index_equal(pd.Index(a.classes_), pd.Index(b.classes_))


@pytest.mark.parametrize("k", [1, 2])
def test_l1_fit_equals_the_rows_repeated(weighted, k):
    data, weights, repeated = weighted
    a = ps.plume(FORMULA, data, k=k, freq_weights=weights)
    b = ps.plume(FORMULA, repeated, k=k)
    a, b = (m.fit_regularized(alpha=5.0, method="l1") for m in (a, b))
    _close(a.params, b.params)
    assert a.nnz_params == b.nnz_params and a.df_resid == b.df_resid
    np.testing.assert_allclose(a.bse, b.bse, rtol=0, atol=TOL)


def test_face_shares_and_criteria_count_observations(pair):
    a, b = pair
    pd.testing.assert_frame_equal(
        a.face_shares(), b.face_shares(), check_dtype=False, atol=1e-12
    )
    for criterion in ("tic", "gbic"):
        assert a.info_criteria(criterion) == pytest.approx(
            b.info_criteria(criterion), abs=1e-7
        )
    _close(a.bsejac, b.bsejac)
    _close(a.bsejhj, b.bsejhj)


def test_margins_at_new_rows_ignore_the_sample_weights(pair):
    a, b = pair
    new = np.asarray(a.model.exog[:5])
    for at in ("overall", "mean", "median"):
        _close(
            a.get_margeff(at=at, atexog=new).margeff,
            b.get_margeff(at=at, atexog=new).margeff,
        )


def test_influence_follows_glm_with_freq_weights(weighted):
    data, weights, _ = weighted
    weights = weights + 1  # GLM's influence fails on rows of weight 0
    a = ps.plume(FORMULA, data, k=1, freq_weights=weights).fit()
    glm = sm.GLM.from_formula(
        FORMULA, data, family=sm.families.Binomial(), freq_weights=weights
    ).fit(tol=1e-14)
    _close(a.get_influence().hat_matrix_diag, glm.get_influence().hat_matrix_diag)


def test_weights_checks_name_the_row_and_the_class(weighted):
    data = weighted[0]
    holes = data.assign(x1=np.where(np.arange(len(data)) < 10, np.nan, data["x1"]))
    bad = np.ones(len(data))
    bad[20] = -1.0
    with pytest.raises(ValueError, match="at row 20"):
        ps.plume(FORMULA, holes, k=2, freq_weights=bad)
    one_class = np.where(data["y"] == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="has weight 0"):
        ps.plume(FORMULA, data, k=2, freq_weights=one_class)


def test_huge_weights_need_no_more_memory(weighted):
    data, _, _ = weighted
    res = ps.plume(FORMULA, data, k=1, freq_weights=np.full(len(data), 1e7)).fit()
    plain = ps.plume(FORMULA, data, k=1).fit()
    _close(res.params, plain.params, 1e-7)
    _close(res.bse * np.sqrt(1e7), plain.bse, 1e-7)


def test_zero_weights_beyond_the_start_sample_start_alike_by_blocks():
    """The starts read at most 5000 rows: in memory they were drawn among the
    rows of positive weight, by blocks among all rows (then the zeros left
    out), so the two fits started from different rows."""
    data, _ = ps.simulate_polyhedron(6000, d=2, k=3, noise=0.05, random_state=0)
    y = data.pop("y")
    weights = np.random.default_rng(1).integers(0, 3, size=len(y)).astype(float)
    model = PM(y, data.assign(const=1.0), k=3, freq_weights=weights)
    options = {"maxiter": 1, "retall": True, "reseat": 0}
    with pytest.warns(Warning):  # one iteration: not converged
        starts = [
            model.fit(**options, chunksize=chunks).mle_retvals["allvecs"][0]
            for chunks in (None, 2000)
        ]
    # the standardisation by blocks rounds differently; the rows are the same
    np.testing.assert_allclose(starts[0], starts[1], rtol=1e-6, atol=1e-8)


def test_a_zero_weight_row_does_not_make_a_column_vary():
    """A column constant on every row of positive weight, another value on
    a row of weight 0: the fit and its warnings are those without the row
    (the row made the column 'vary' by rounding noise: standard errors of
    1e16 and no collinearity warning)."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=3, noise=0.1, random_state=5)
    weights = np.random.default_rng(0).integers(1, 4, size=len(data)).astype(float)
    weights[0] = 0.0
    data["c"] = 0.1
    data.loc[0, "c"] = 5.0
    fits = []
    for frame, w in ((data, weights), (data.iloc[1:], weights[1:])):
        with pytest.warns(Warning) as caught:
            fits.append(
                ps.plume("y ~ x1 + x2 + c", frame, k=3, freq_weights=w).fit(alpha=1e-3)
            )
        assert {type(w.message).__name__ for w in caught} == {"CollinearityWarning"}
    assert fits[0].llf == pytest.approx(fits[1].llf, rel=1e-12)
    np.testing.assert_allclose(fits[0].bse, fits[1].bse, rtol=1e-8)


@pytest.mark.parametrize("seed", [0, 2])
def test_few_positive_weights_among_many_rows_start_from_them(seed):
    """The start's rows are drawn among the rows of positive weight (in
    memory and by blocks alike): drawn among all 20,000 rows, 60 positive
    ones left an empty sample (a crash) or a few (a worse start)."""
    rng = np.random.default_rng(seed)
    exog = np.column_stack([np.ones(20_000), rng.normal(size=(20_000, 2))])
    y = (np.minimum(exog[:, 1], exog[:, 2]) + rng.logistic(size=20_000) > 0) * 1.0
    weights = np.zeros(20_000)
    weights[rng.choice(20_000, 60, replace=False)] = 1.0
    model = PM(y, exog, k=2, freq_weights=weights)
    kept = weights > 0
    alone = PM(y[kept], exog[kept], k=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 60 points, K = 2: whatever it says
        fits = [
            model.fit(random_state=seed, **options)
            for options in ({}, {"chunksize": 5000})
        ]
        reference = alone.fit(random_state=seed)
    for res in fits:
        assert res.llf == pytest.approx(reference.llf, rel=1e-8)


@pytest.mark.parametrize("kind", ["none", "real", "counts with zeros"])
def test_weighted_table_counts_as_numpy_s_histogram(kind):
    # the confusion counts (pred_table, the summary) against np.histogram2d's
    from plumestats._weights import weighted_table

    rng = np.random.default_rng(3)
    observed = (rng.random(500) < 0.4).astype(float)
    predicted = rng.random(500) < 0.5
    weights = {
        "none": None,
        "real": rng.random(500),
        "counts with zeros": np.where(rng.random(500) < 0.3, 0.0, 2.0),
    }[kind]
    expected = np.histogram2d(
        observed, predicted.astype(float), bins=[0, 0.5, 1], weights=weights
    )[0]
    got = weighted_table(observed, predicted, weights)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
