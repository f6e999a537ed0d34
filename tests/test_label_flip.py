"""LabelFlipPolyhedralLogit: PLUME with randomly flipped labels.

Checked against an independent implementation of its likelihood (finite
differences, a general-purpose optimiser), against PLUME at the boundary
eps = 0, and on simulated polytopes whose flip rate is known.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from conftest import unwrapped
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logsumexp
from statsmodels.tools.numdiff import approx_fprime, approx_hess3
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps
from plumestats import LabelFlipPolyhedralLogit


def independent_loglike(params, y01, x, k, gamma, inside=1):
    """``sum_n log(lam/2 + (1 - lam) sum_k g_k sigmoid(y a_k))``, written from
    the model's definition only."""
    weights = np.reshape(params[:-1], (k, -1))
    lam = expit(params[-1])
    scores = x @ weights.T
    y_pm = (2.0 * y01 - 1.0) * (1.0 if inside == 1 else -1.0)
    log_gate = -gamma * scores - logsumexp(-gamma * scores, axis=1, keepdims=True)
    log_clean = logsumexp(log_gate + log_expit(y_pm[:, None] * scores), axis=1)
    return float(np.sum(np.logaddexp(np.log(lam / 2), np.log1p(-lam) + log_clean)))


def _design(seed, nobs=150, d=2):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(nobs), rng.standard_normal((nobs, d))])
    y = (rng.random(nobs) < 0.5).astype(float)
    return y, x, rng


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("gamma", [0.5, 5.0])
@pytest.mark.parametrize("inside", [1, 0])
def test_loglike_score_hessian_against_finite_differences(k, gamma, inside):
    y, x, rng = _design(k)
    model = LabelFlipPolyhedralLogit(y, x, k=k, gamma=gamma, inside=inside)
    params = np.append(rng.normal(scale=0.7, size=k * 3), rng.normal(-1.5, 1.0))

    def func(p):
        return independent_loglike(p, y, x, k, gamma, inside)

    assert model.loglike(params) == pytest.approx(func(params), rel=1e-12)
    score = model.score(params)
    fd_score = approx_fprime(params, func, centered=True)
    assert np.max(np.abs(score - fd_score)) < 1e-6 * max(1, np.max(np.abs(score)))
    hess = model.hessian(params)
    fd_hess = approx_fprime(params, model.score, centered=True)
    assert np.max(np.abs(hess - fd_hess)) < 1e-6 * np.max(np.abs(hess))
    fd_hess2 = approx_hess3(params, func)
    assert np.max(np.abs(hess - fd_hess2)) < 1e-4 * np.max(np.abs(hess))
    np.testing.assert_allclose(
        model.score_obs(params).sum(axis=0), score, rtol=1e-10, atol=1e-10
    )


def _noisy_plume_data(nobs, seed, flip=0.1):
    """A soft PLUME (finite MLE) whose labels are then flipped at ``flip``."""
    data = ps.simulate_plume(
        nobs, [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]], random_state=seed
    )
    rng = np.random.default_rng(seed + 1)
    flipped = rng.random(nobs) < flip
    data["y"] = np.where(flipped, 1 - data["y"], data["y"])
    return data


def test_em_reaches_the_optimum_of_a_general_optimiser():
    data = _noisy_plume_data(3000, seed=3, flip=0.15)
    res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    assert res.converged
    model = res.model
    y, x = model.endog, model.exog

    def negative(p):
        return -independent_loglike(p, y, x, 2, 1.0)

    start = np.append(np.asarray(res.params)[:-1] * 0.8, 0.0)
    found = minimize(negative, start, method="BFGS", options={"gtol": 1e-8})
    assert res.llf >= -found.fun - 1e-6
    assert res.llf == pytest.approx(-found.fun, abs=1e-4)
    np.testing.assert_allclose(res.params, found.x, atol=2e-3)
    # the gradient at the estimate has vanished
    assert np.max(np.abs(model.score(np.asarray(res.params)))) < 1e-5


def test_flip_rate_recovered_on_a_noisy_polytope():
    data, truth = ps.simulate_polyhedron(12000, d=2, k=2, noise=0.1, random_state=0)
    train, test = data.iloc[:2000], data.iloc[2000:]
    res = ps.plume_flip("y ~ x1 + x2", train, k=2).fit(alpha=1e-6)
    assert res.converged
    low, high = res.flip_rate_conf_int()
    assert low < 0.1 < high
    assert 0.08 < res.flip_rate < 0.12
    plain = ps.plume("y ~ x1 + x2", train, k=2).fit(alpha=1e-6)
    accuracy = np.mean((res.predict(test) > 0.5) == test["y"])
    accuracy_plain = np.mean((plain.predict(test) > 0.5) == test["y"])
    assert accuracy > accuracy_plain + 0.01
    x = np.column_stack([np.ones(len(test)), test[["x1", "x2"]]])
    truth_accuracy = np.mean(((x @ truth.to_numpy().T).min(axis=1) >= 0) == test["y"])
    assert accuracy > truth_accuracy - 0.01


@pytest.mark.parametrize(
    ("cov_type", "cov_kwds"),
    [("HC0", None), ("HC1", None), ("HC3", None), ("cluster", "groups")],
)
def test_robust_errors_at_the_boundary_are_plumes(cov_type, cov_kwds):
    # the held flip rate's NaN row spread to every sandwich: all NaN
    data = ps.simulate_plume(1500, [[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]], random_state=2)
    options = {"cov_type": cov_type}
    if cov_kwds:
        options["cov_kwds"] = {"groups": np.arange(len(data)) % 30}
    with pytest.warns(ConvergenceWarning, match="boundary"):
        res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(**options)
    plain = ps.plume("y ~ x1 + x2", data, k=2).fit(**options)
    assert res.mle_retvals["boundary"] and np.isnan(res.bse.iloc[-1])
    np.testing.assert_allclose(res.bse.iloc[:-1], plain.bse, rtol=1e-4)


def test_noise_free_labels_give_plume_at_the_boundary():
    data = ps.simulate_plume(2000, [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]], random_state=0)
    with pytest.warns(ConvergenceWarning, match="boundary") as caught:
        res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    plain = ps.plume("y ~ x1 + x2", data, k=2).fit()
    assert res.mle_retvals["boundary"]
    assert res.flip_rate <= 5e-9
    # the warning gives the value held (it said 5e-09 where the fit held 2e-09)
    assert f"held at {res.flip_rate:.2g}, at most 5e-09" in str(caught[0].message)
    np.testing.assert_allclose(res.params.iloc[:-1], plain.params, atol=1e-6)
    np.testing.assert_allclose(res.bse.iloc[:-1], plain.bse, rtol=1e-5)
    assert np.isnan(res.bse.iloc[-1])
    assert res.llf == pytest.approx(plain.llf, abs=1e-5)
    assert "at its boundary" in unwrapped(res.summary())
    # tests on the faces are PLUME's; flip_logit's own stays NaN (it was NaN for
    # every constraint, through 0 * NaN, and wald_test refused)
    constraint = "h1:x1 = h2:x1"
    assert res.t_test(constraint).sd.item() == pytest.approx(
        plain.t_test(constraint).sd.item(), rel=1e-4
    )
    joint = "h1:x1 = 0, h2:x1 = 0"
    assert res.wald_test(joint, scalar=True).statistic == pytest.approx(
        plain.wald_test(joint, scalar=True).statistic, rel=1e-4
    )
    assert np.isnan(res.t_test("flip_logit = 0").sd).all()
    with pytest.raises(ValueError, match=r"a flip rate at its boundary 0\)\. Test"):
        res.wald_test("flip_logit = 0")
    # cov_params itself, as statsmodels' takes it: one row gives a scalar
    row = np.zeros(len(res.params))
    row[1] = 1.0
    inner = res._results
    assert inner.cov_params(r_matrix=row) == pytest.approx(
        plain.cov_params().iloc[1, 1], rel=1e-4
    )
    assert inner.cov_params(r_matrix=row, scale=2.0) == pytest.approx(
        2.0 * inner.cov_params(r_matrix=row), rel=1e-12
    )
    # TIC and GBIC read the information of the estimated parameters: PLUME's,
    # GBIC counting one parameter more (BIC's log N); the held rate's hold
    # added -log(1e-8) = 18.4 to GBIC
    assert res.info_criteria("tic") == pytest.approx(
        plain.info_criteria("tic"), rel=1e-5
    )
    extra = res.info_criteria("gbic")[0] - plain.info_criteria("gbic")[0]
    assert extra == pytest.approx(np.log(res.nobs), abs=1e-3)


def test_hard_noisy_polytope_without_penalty_warns_of_separation():
    data, _ = ps.simulate_polyhedron(2000, d=2, k=2, noise=0.1, random_state=0)
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    assert not res.converged
    assert res.mle_retvals["separation"]


@pytest.fixture(scope="module")
def noisy_fit():
    data = _noisy_plume_data(1500, seed=5)
    return data, ps.plume_flip("y ~ x1 + x2", data, k=2).fit()


def test_results_api(noisy_fit, tmp_path):
    data, res = noisy_fit
    assert list(res.params.index) == [
        "h1:Intercept",
        "h1:x1",
        "h1:x2",
        "h2:Intercept",
        "h2:x1",
        "h2:x2",
        "flip_logit",
    ]
    assert res.df_model == 6  # every parameter but one (it left out flip_logit)
    assert res.aic == pytest.approx(-2 * res.llf + 2 * 7)
    assert res.bic == pytest.approx(-2 * res.llf + np.log(len(data)) * 7)
    # the flip rate is counted (statsmodels' own formula would miss k_extra in
    # gbic); J^{-1} I from the model's Hessian and per-observation scores
    assert res.info_criteria("aic") == pytest.approx(res.aic)
    params = res.params.to_numpy()
    scores = res.model.score_obs(params)
    ratio = np.linalg.solve(-res.model.hessian(params), scores.T @ scores)
    gbic, gbic_p = res.info_criteria("gbic")
    logdet = np.linalg.slogdet(ratio)[1]
    assert gbic == pytest.approx(-2 * res.llf + np.log(len(data)) * 7 - logdet)
    assert gbic_p == pytest.approx(gbic + np.trace(ratio))
    assert res.info_criteria("tic") == pytest.approx(-2 * res.llf + 2 * np.trace(ratio))
    # against the intercept-only logit: 6 more parameters, the flip rate included
    assert res.llr_pvalue == pytest.approx(stats.chi2.sf(res.llr, 6))
    assert res.conf_int().shape == (7, 2)
    assert res.flip_rate == pytest.approx(expit(res.params.iloc[-1]) / 2)
    low, high = res.flip_rate_conf_int()
    assert 0 < low < res.flip_rate < high < 0.5
    assert res.flip_rate_bse > 0
    mean, clean = res.predict(data), res.predict(data, which="clean")
    np.testing.assert_allclose(res.predict(data, which="var"), mean * (1 - mean))
    np.testing.assert_allclose(
        mean, res.flip_rate + (1 - 2 * res.flip_rate) * clean, rtol=1e-12
    )
    assert res.pred_table().sum() == len(data)
    assert res.hyperplanes.shape == (2, 3)
    text = unwrapped(res.summary())
    assert "label flips" in text and "flip_logit" in text and "flipped" in text
    path = tmp_path / "flip.pickle"
    res.save(path)
    loaded = type(res).load(path)
    np.testing.assert_array_equal(loaded.params, res.params)
    np.testing.assert_allclose(loaded.predict(data.head()), res.predict(data.head()))
    for method in ("rademacher_bound", "bootstrap"):
        with pytest.raises(NotImplementedError, match="PolyhedralMixtureLogit"):
            getattr(res, method)()
    # not "call results.bootstrap() first", which cannot be done
    with pytest.raises(NotImplementedError, match="PolyhedralMixtureLogit"):
        res.conf_int(method="bootstrap")


def test_lr_test_against_plume_refers_to_the_boundary_mixture(noisy_fit):
    data, res = noisy_fit
    plain = ps.plume("y ~ x1 + x2", data, k=2).fit()
    result = ps.compare_lr_test(plain, res)
    assert result.df == 1
    assert result.statistic == pytest.approx(2 * (res.llf - plain.llf))
    assert result.statistic > 0
    # eps = 0 is on the boundary: 1/2 chi2_0 + 1/2 chi2_1, not chi2_1
    assert result.pvalue == pytest.approx(0.5 * stats.chi2.sf(result.statistic, 1))
    # faces at another gamma are not nested in the flip model: no chi-square
    # test (it gave a chi2_1 p-value)
    other = ps.plume("y ~ x1 + x2", data, k=2, gamma=2.0).fit()
    with pytest.raises(ValueError, match="not nested"):
        ps.compare_lr_test(other, res)


def test_lr_test_recognises_logit_on_the_same_design_whatever_its_names():
    """statsmodels' Logit on arrays names the columns const, x1, x2; the flip
    model's formula says Intercept: the same design, so the same mixture
    p-value (it fell back to chi2_1, twice as large)."""
    rng = np.random.default_rng(11)
    data = pd.DataFrame(rng.normal(size=(800, 2)), columns=["x1", "x2"])
    clean = rng.random(800) < expit(4.0 * data.x1 - 3.0 * data.x2)
    data["y"] = np.where(rng.random(800) < 0.15, ~clean, clean).astype(int)
    flips = ps.plume_flip("y ~ x1 + x2", data, k=1).fit()
    assert not flips.mle_retvals["boundary"]
    design = sm.add_constant(data[["x1", "x2"]]).to_numpy()
    named = smf.logit("y ~ x1 + x2", data).fit(disp=0)
    unnamed = sm.Logit(data["y"].to_numpy(), design).fit(disp=0)
    by_formula, by_arrays = (ps.compare_lr_test(fit, flips) for fit in (named, unnamed))
    assert by_arrays.statistic == pytest.approx(by_formula.statistic, rel=1e-6)
    assert by_arrays.pvalue == pytest.approx(by_formula.pvalue, rel=1e-5)
    assert by_formula.pvalue == pytest.approx(
        0.5 * stats.chi2.sf(by_formula.statistic, 1)
    )


def test_lr_test_of_a_one_face_hard_fit_refers_to_the_boundary_mixture():
    """With one face the hard model's likelihood is Logit's (the gate is
    constant), so a flip model nests it as it nests PLUME and Logit: the
    same halved p-value (it was chi2_1's, twice as large)."""
    rng = np.random.default_rng(11)
    data = pd.DataFrame(rng.normal(size=(800, 2)), columns=["x1", "x2"])
    clean = rng.random(800) < expit(4.0 * data.x1 - 3.0 * data.x2)
    data["y"] = np.where(rng.random(800) < 0.15, ~clean, clean).astype(int)
    flips = ps.plume_flip("y ~ x1 + x2", data, k=1).fit()
    soft = ps.compare_lr_test(ps.plume("y ~ x1 + x2", data, k=1).fit(), flips)
    hard = ps.compare_lr_test(ps.spla1("y ~ x1 + x2", data, k=1).fit(), flips)
    assert hard.statistic == pytest.approx(soft.statistic, rel=1e-6)
    assert hard.pvalue == pytest.approx(soft.pvalue, rel=1e-5)
    assert hard.pvalue == pytest.approx(0.5 * stats.chi2.sf(hard.statistic, 1))


def test_lr_test_for_flips_holds_its_size_under_the_null():
    # clean logistic labels (K = 1): the halved p-value rejects at about the
    # nominal rate, the plain chi2_1 one at about half of it
    rng = np.random.default_rng(1)
    results = []
    for _ in range(400):
        x = sm.add_constant(rng.standard_normal((300, 2)))
        y = (rng.random(300) < expit(x @ [0.3, 1.5, -1.0])).astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # eps at 0
            logit = sm.Logit(y, x).fit(disp=0)
            flips = LabelFlipPolyhedralLogit(y, x, k=1).fit()
        with warnings.catch_warnings():
            # at eps = 0 the flip fit's llf is a hair below Logit's: no warning
            warnings.simplefilter("error")
            result = ps.compare_lr_test(logit, flips)
        if flips.mle_retvals["boundary"]:
            assert result == (0.0, 1.0, 1)
        results.append(result)
    statistics, pvalues, _ = np.array(results).T
    assert 0.4 < np.mean(pvalues == 1.0) < 0.8
    assert 0.06 < np.mean(pvalues < 0.10) < 0.14
    assert 0.02 < np.mean(stats.chi2.sf(statistics, 1) < 0.10) < 0.08


def test_hc0_covariance(noisy_fit):
    data, res = noisy_fit
    robust = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(cov_type="HC0")
    np.testing.assert_allclose(robust.params, res.params, rtol=1e-8)
    assert robust.cov_type == "HC0"
    assert np.all(np.isfinite(robust.bse))
    # the sandwich and the information agree roughly under the right model
    assert np.all(np.abs(np.log(robust.bse / res.bse)) < 0.5)


def test_invariances(noisy_fit):
    data, res = noisy_fit
    shuffled = data.sample(frac=1.0, random_state=7)
    res_shuffled = ps.plume_flip("y ~ x1 + x2", shuffled, k=2).fit()
    np.testing.assert_allclose(res_shuffled.params, res.params, rtol=1e-6, atol=1e-7)
    # the other label coding, with the same class inside: the same polytope
    recoded = data.assign(y=np.where(data["y"] == 1, "in", "out"))
    res_recoded = ps.plume_flip("y ~ x1 + x2", recoded, k=2, inside="in").fit()
    np.testing.assert_allclose(res_recoded.params, res.params, rtol=1e-6, atol=1e-7)
    # feature scale: the same fit in other units
    scaled = data.assign(x1=1000 * data["x1"])
    res_scaled = ps.plume_flip("y ~ x1 + x2", scaled, k=2).fit()
    expected = res.params.copy()
    expected[["h1:x1", "h2:x1"]] /= 1000
    np.testing.assert_allclose(res_scaled.params, expected, rtol=1e-5, atol=1e-8)
    assert res_scaled.llf == pytest.approx(res.llf, abs=1e-6)


def test_start_params_and_disp(noisy_fit, capsys):
    data, res = noisy_fit
    again = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(
        start_params=np.asarray(res.params), disp=True
    )
    np.testing.assert_allclose(again.params, res.params, rtol=1e-6, atol=1e-8)
    assert "flip rate" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"flip_start": 0.5}, ValueError, "below 0.5"),
        ({"flip_start": 0.0}, ValueError, "flip_start"),
        ({"method": "bfgs"}, ValueError, "method"),
        ({"start_params": np.zeros(6)}, ValueError, "7 values"),
        ({"start_params": np.r_[np.zeros(6), np.inf]}, ValueError, "finite"),
        ({"chunksize": 0}, ValueError, "chunksize"),
    ],
)
def test_bad_input(noisy_fit, kwargs, error, match):
    data, _ = noisy_fit
    with pytest.raises(error, match=match):
        ps.plume_flip("y ~ x1 + x2", data, k=2).fit(**kwargs)


def test_params_of_the_wrong_length_are_refused(noisy_fit):
    _, res = noisy_fit
    with pytest.raises(ValueError, match="flip_logit"):
        res.model.loglike(np.zeros(6))


@settings(max_examples=25, deadline=None)
@given(
    eta=st.floats(-30, 30),
    scale=st.floats(0.01, 50.0),
    seed=st.integers(0, 1000),
)
def test_predictions_stay_between_the_noise_floors(eta, scale, seed):
    y, x, rng = _design(seed, nobs=40)
    model = LabelFlipPolyhedralLogit(y, x, k=2)
    params = np.append(scale * rng.standard_normal(6), eta)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings on extreme input
        mean = model.predict(params)
        loglike = model.loglike(params)
    lam = expit(eta)
    assert np.all(mean >= lam / 2 * (1 - 1e-12))
    # near one the floor 1 - lam / 2 is itself only known to a rounding error
    assert np.all(mean <= 1 - lam / 2 + 4 * np.finfo(float).eps)
    assert np.isfinite(loglike)
    # below the noise-free PLUME fit's own log-likelihood bound: log(lam/2) each
    assert loglike >= len(y) * np.log(lam / 2) - 1e-9


def test_pandas_and_arrays_give_the_formula_fit(noisy_fit):
    data, res = noisy_fit
    frame = data[["x1", "x2"]].assign(Intercept=1.0)[["Intercept", "x1", "x2"]]
    by_frame = LabelFlipPolyhedralLogit(data["y"], frame, k=2).fit()
    by_array = LabelFlipPolyhedralLogit(data["y"].to_numpy(), frame.to_numpy(), k=2)
    np.testing.assert_allclose(by_frame.params, res.params, rtol=1e-10)
    np.testing.assert_allclose(by_array.fit().params, res.params, rtol=1e-10)
    assert list(by_frame.params.index) == list(res.params.index)
    pd.testing.assert_frame_equal(by_frame.hyperplanes, res.hyperplanes)


def test_restarts_are_compared_on_the_label_flip_likelihood():
    data, _ = ps.simulate_polyhedron(1500, d=2, k=4, noise=0.1, random_state=2)
    model = ps.plume_flip("y ~ x1 + x2", data, k=4)
    res = model.fit(alpha=1e-5, n_init=4, random_state=0)
    runs = res.mle_retvals["restarts_llf"]
    assert runs.shape == (4,) and res.mle_settings["n_init"] == 4
    # the older rule: label flips from the best PLUME run only
    plume = ps.plume("y ~ x1 + x2", data, k=4).fit(alpha=1e-5, n_init=4, random_state=0)
    from_best_plume = model.fit(
        alpha=1e-5, start_params=np.append(plume.params, np.log(0.1 / 0.9))
    )
    assert runs.max() >= from_best_plume.mle_retvals["restarts_llf"][0] - 1e-8
    # and the kept fit is the best run: refitting from it changes nothing
    again = model.fit(alpha=1e-5, start_params=np.asarray(res.params))
    assert again.mle_retvals["restarts_llf"][0] == pytest.approx(runs.max(), abs=1e-6)


def test_by_blocks_and_on_dask_the_fit_is_the_in_memory_one(noisy_fit):
    """The label-flip model reads its rows through the same sources as
    PLUME: by row blocks and from Dask partitions it gives the same fit."""
    data, res = noisy_fit
    y = data["y"].to_numpy()
    x = np.column_stack([np.ones(len(data)), data[["x1", "x2"]].to_numpy()])
    in_memory = LabelFlipPolyhedralLogit(y, x, k=2).fit()
    by_blocks = LabelFlipPolyhedralLogit(y, x, k=2).fit(chunksize=256)
    fits = [by_blocks]
    if importlib.util.find_spec("distributed") is not None:
        import dask.array as da

        lazy = LabelFlipPolyhedralLogit(
            da.from_array(y, chunks=400), da.from_array(x, chunks=(400, 3)), k=2
        )
        fits.append(lazy.fit())
    for fit in fits:
        np.testing.assert_allclose(fit.params, in_memory.params, rtol=1e-7)
        np.testing.assert_allclose(fit.llf, in_memory.llf, rtol=1e-10)
        np.testing.assert_allclose(fit.bse, in_memory.bse, rtol=1e-6)
        assert fit.df_model == in_memory.df_model == 6
        names = list(fit.model.data.param_names)
        assert names == list(in_memory.model.data.param_names)
        assert names[-1] == "flip_logit"
    np.testing.assert_allclose(in_memory.params, res.params, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mstep", ["newton", "gradient", "bfgs"])
def test_every_mstep_raises_the_objective_and_meets_the_same_optimum(mstep):
    data = _noisy_plume_data(1500, seed=11, flip=0.1)
    res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(mstep=mstep)
    history = res.mle_retvals["llf_history"]
    # EM and the damped Newton finish never lower the objective
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))
    assert res.converged
    reference = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    assert res.llf == pytest.approx(reference.llf, abs=1e-6)
    np.testing.assert_allclose(res.params, reference.params, rtol=1e-4, atol=1e-5)


def test_flip_rate_interval_is_conf_ints_with_use_t():
    """The flip-rate interval maps conf_int's row of flip_logit: t quantiles
    with use_t, as the summary's table prints (it used the normal's)."""
    data = _noisy_plume_data(300, seed=5)
    res = ps.plume_flip("y ~ x1 + x2", data, k=1).fit(use_t=True)
    lower, upper = np.asarray(res.conf_int())[-1]
    np.testing.assert_allclose(res.flip_rate_conf_int(), expit([lower, upper]) / 2)
    half = stats.t.isf(0.025, res.df_resid) * res.bse.iloc[-1]
    eta = res.params.iloc[-1]
    np.testing.assert_allclose(
        res.flip_rate_conf_int(), expit([eta - half, eta + half]) / 2
    )


def test_advice_on_doubtful_errors_names_what_flip_fits_have():
    """A flip fit has no bootstrap: its warning and summary name the profile
    interval instead (and at k = 1 collinear columns, not a smaller k)."""
    data = _noisy_plume_data(600, seed=5)
    data["x3"] = data["x1"] + 1e-5 * np.random.default_rng(0).standard_normal(len(data))
    with pytest.warns(HessianInversionWarning) as caught:
        res = ps.plume_flip("y ~ x1 + x2 + x3", data, k=1).fit()
    message = " ".join(str(w.message) for w in caught)
    assert "conf_int(method='profile')" in message
    assert "bootstrap" not in message and "smaller k" not in message
    assert "bootstrap()" not in unwrapped(res.summary())


def test_advice_names_the_profile_only_where_it_runs():
    """A penalised flip fit cannot be profiled: its advice names no interval
    it would refuse (a penalty and a smaller k remain)."""
    data = _noisy_plume_data(600, seed=5)
    data["x3"] = data["x1"] + 1e-5 * np.random.default_rng(0).standard_normal(len(data))
    with pytest.warns(HessianInversionWarning) as caught:
        ps.plume_flip("y ~ x1 + x2 + x3", data, k=1).fit(alpha=1e-13)
    message = " ".join(str(w.message) for w in caught)
    assert "an L2 penalty (alpha)." in message and "profile" not in message


def test_influence_of_a_fit_at_the_boundary_is_plumes():
    # the flip rate held at its boundary has no variance: Cook's distance is
    # over the faces, PLUME's (every row's was NaN)
    from plumestats.datasets import simulate_plume

    weights = np.array([[1.0, 2.0, 0.5], [1.0, -1.0, 2.0]])
    data = simulate_plume(400, weights, gamma=1.0, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ps.FlipRateBoundaryWarning)
        flips = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    assert flips.mle_retvals["boundary"]
    plume = ps.plume("y ~ x1 + x2", data, k=2).fit()
    ours = flips.get_influence().summary_frame()["cooks_d"].to_numpy()
    theirs = plume.get_influence().summary_frame()["cooks_d"].to_numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-8)
    # penalised (the scores sum to the penalty's gradient): the penalised
    # PLUME fit's, which tracks refits without each row (test_covariance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ps.FlipRateBoundaryWarning)
        penalised = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=0.5)
    assert penalised.mle_retvals["boundary"]
    plume = ps.plume("y ~ x1 + x2", data, k=2).fit(alpha=0.5)
    ours = penalised.get_influence().cooks_distance[0]
    theirs = plume.get_influence().cooks_distance[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-8)
