"""``results.get_prediction`` (P(y = 1 | x) with standard errors and
intervals), the residuals, ``get_distribution`` and ``get_influence``.

Oracles: statsmodels' ``Logit.get_prediction`` at K = 1 (the same model),
finite differences of the log-odds in the parameters for every variant (soft,
``inside=0``, hard gating, label flips), and the coverage of the intervals on
data simulated from a known PLUME.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from conftest import logistic_data
from scipy.special import expit, logit
from statsmodels.tools.numdiff import approx_fprime
from statsmodels.tools.sm_exceptions import ConvergenceWarning

import plumestats.api as ps
from plumestats._prediction import flip_log_odds_and_jacobian, log_odds_and_jacobian


@pytest.fixture(scope="module")
def logit_pair():
    data = logistic_data(300, d=2, seed=4)
    formula = "y ~ x1 + x2"
    logit_res = smf.logit(formula, data).fit(disp=0)
    return data, logit_res, ps.plume(formula, data, k=1).fit()


def _new_rows():
    # a missing value (dropped, as statsmodels does) and a row far out (P ~ 1)
    return pd.DataFrame(
        {"x1": [0.1, np.nan, 2.0, 40.0], "x2": [0.0, 1.0, -1.0, 3.0]},
        index=["a", "b", "c", "far"],
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"exog": "new"},
        {"exog": "new", "average": True},
        {"exog": "new", "average": True, "agg_weights": np.array([1.0, 2.0, 0.5])},
    ],
)
def test_k1_equals_statsmodels_logit(logit_pair, kwargs):
    _, logit_res, plume_res = logit_pair
    if kwargs.get("exog") == "new":
        kwargs = {**kwargs, "exog": _new_rows()}
    for alpha in (0.05, 0.1):
        expected = logit_res.get_prediction(**kwargs).summary_frame(alpha=alpha)
        got = plume_res.get_prediction(**kwargs).summary_frame(alpha=alpha)
        if "exog" in kwargs and not kwargs.get("average"):
            # the new rows kept, by their labels (statsmodels 0.14 numbers
            # them 0, 1, 2 instead)
            assert list(got.index) == ["a", "c", "far"]
            expected = expected.set_axis(got.index)
        pd.testing.assert_index_equal(got.index, expected.index)
        pd.testing.assert_frame_equal(got, expected, rtol=1e-6, atol=1e-12)


def test_k1_robust_covariance_equals_logit(logit_pair):
    data, _, _ = logit_pair
    expected = smf.logit("y ~ x1 + x2", data).fit(disp=0, cov_type="HC0")
    got = ps.plume("y ~ x1 + x2", data, k=1).fit(cov_type="HC0")
    np.testing.assert_allclose(
        got.get_prediction(_new_rows()).se,
        expected.get_prediction(_new_rows()).se,
        rtol=1e-6,
    )


def _fd_check(res, log_odds_and_jacobian_of):
    design = res.model.exog[:40]
    params = np.asarray(res.params, dtype=float)
    log_odds, jacobian = log_odds_and_jacobian_of(res.model, params, design)
    observed = res.model.predict(params, design)
    np.testing.assert_allclose(expit(log_odds), observed, rtol=1e-10, atol=1e-14)

    def log_odds_at(p):
        return logit(res.model.predict(p, design))

    numeric = approx_fprime(params, log_odds_at, centered=True)
    np.testing.assert_allclose(jacobian, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: ps.plume("y ~ x1 + x2", d, k=3, gamma=2.0),
        lambda d: ps.plume("y ~ x1 + x2", d, k=2, inside=0),
        lambda d: ps.spla1("y ~ x1 + x2", d, k=3),
    ],
    ids=["soft", "inside-0", "hard"],
)
def test_jacobian_against_finite_differences(make):
    data, _ = ps.simulate_polyhedron(400, d=2, k=3, noise=0.1, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = make(data).fit(alpha=1e-3)
    _fd_check(res, log_odds_and_jacobian)


def test_flip_jacobian_against_finite_differences():
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.1, random_state=0)
    res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=1e-3)
    assert 0.01 < res.flip_rate < 0.3
    _fd_check(res, flip_log_odds_and_jacobian)
    frame = res.get_prediction(data.iloc[:5]).summary_frame()
    observed = res.predict(data.iloc[:5])
    np.testing.assert_allclose(frame["predicted"], observed, rtol=1e-12)
    # the observed label's probability never leaves [eps, 1 - eps]
    assert (frame["ci_lower"] > 0).all() and (frame["ci_upper"] < 1).all()


def test_flip_rate_at_its_boundary_is_held_fixed():
    data = ps.simulate_plume(1000, [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]], random_state=0)
    with pytest.warns(ConvergenceWarning, match="boundary"):
        res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit()
    plain = ps.plume("y ~ x1 + x2", data, k=2).fit()
    got = res.get_prediction(data.iloc[:10]).summary_frame()
    expected = plain.get_prediction(data.iloc[:10]).summary_frame()
    # eps = 5e-9 and its variance unknown: PLUME's intervals
    pd.testing.assert_frame_equal(got, expected, rtol=1e-5, atol=1e-7)


def test_extreme_rows_stay_finite_without_warnings():
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.05, random_state=1)
    res = ps.plume("y ~ x1 + x2", data, k=3).fit(alpha=1e-4)
    # up to 1e200: the variance of the log-odds overflowed (RuntimeWarnings, se
    # NaN); it is infinite, and P's variance, where the slope underflows, zero
    far = pd.DataFrame(
        {
            "x1": [1e6, -1e6, 0.0, 1e-300, 1e155, 0.0],
            "x2": [1e6, 0.0, -1e8, 0.0, 0.0, -1e200],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = res.get_prediction(far).summary_frame()
    values = frame.to_numpy()
    assert np.isfinite(values).all()
    assert (frame["se"].iloc[4:] == 0).all()
    assert (frame["ci_lower"] >= 0).all() and (frame["ci_upper"] <= 1).all()
    assert (frame["ci_lower"] <= frame["predicted"]).all()
    assert (frame["predicted"] <= frame["ci_upper"]).all()


def test_intervals_cover_the_true_probability():
    # a known PLUME; the 90% interval of P at three points, over 150 samples
    weights = [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]]
    points = pd.DataFrame({"x1": [0.0, 0.5, -0.8], "x2": [0.0, -0.5, 0.7]})
    design = np.column_stack([np.ones(3), points])
    scores = design @ np.asarray(weights).T
    gate = np.exp(-scores) / np.exp(-scores).sum(axis=1, keepdims=True)
    truth = (gate * expit(scores)).sum(axis=1)  # the model, written out
    covered = []
    for seed in range(150):
        data = ps.simulate_plume(800, weights, random_state=seed)
        res = ps.plume("y ~ x1 + x2", data, k=2).fit()
        ci = res.get_prediction(points).conf_int(alpha=0.1)
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    coverage = np.mean(covered, axis=0)
    assert np.all((coverage > 0.82) & (coverage < 0.97)), coverage


def test_k1_linear_prediction_equals_logits(logit_pair):
    """At K = 1 ``which="linear"`` is Logit's: the linear predictor with its
    standard error and symmetric intervals (a missing value dropped, a row
    far out kept), as statsmodels' ``PredictionResultsBase``; it was refused."""
    _, logit_res, res = logit_pair
    ours = res.get_prediction(_new_rows(), which="linear")
    theirs = logit_res.get_prediction(_new_rows(), which="linear")
    assert isinstance(ours, type(theirs))
    frame = ours.summary_frame(alpha=0.1)
    np.testing.assert_allclose(
        frame.to_numpy(), theirs.summary_frame(alpha=0.1).to_numpy(), rtol=1e-6
    )
    # the rows' labels (statsmodels 0.14.0 numbered them), the missing one dropped
    assert frame.index.tolist() == ["a", "c", "far"]
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        ours.conf_int(alpha=1.5)
    # class 0 inside: x'w is minus the log-odds of y = 1, in both readings
    data, _, _ = logit_pair
    flipped = ps.plume("y ~ x1 + x2", data, k=1, inside=0).fit()
    linear = flipped.get_prediction(data.iloc[:4], which="linear")
    np.testing.assert_allclose(
        linear.predicted, flipped.predict(data.iloc[:4], which="linear"), rtol=1e-12
    )
    logits = logit_res.predict(data.iloc[:4], which="linear")
    np.testing.assert_allclose(linear.predicted, -logits, rtol=1e-6)
    # the label-flip model's log-odds are not linear in its parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clean labels: the flip rate at 0
        noisy = ps.plume_flip("y ~ x1 + x2", data, k=1).fit(alpha=1e-3)
    with pytest.raises(ValueError, match="label-flip model's are not"):
        noisy.get_prediction(data.iloc[:4], which="linear")


def test_bad_requests_are_refused(logit_pair):
    _, _, res = logit_pair
    with pytest.raises(ValueError, match="which='mean'"):
        res.get_prediction(which="gate")
    with pytest.raises(ValueError, match=r"average=True is for which='mean' .* 'var'"):
        res.get_prediction(which="linear", average=True)
    data, _, _ = logit_pair
    faces = ps.plume("y ~ x1 + x2", data, k=2).fit(alpha=1e-3)
    with pytest.raises(ValueError, match="at k=1, which='linear'"):
        faces.get_prediction(which="linear")
    with pytest.raises(ValueError, match="agg_weights must have one weight"):
        res.get_prediction(_new_rows(), average=True, agg_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="exog must have 3 columns"):
        res.get_prediction(np.ones((2, 5)), transform=False)


def test_dask_rows_are_refused(logit_pair):
    dask_array = pytest.importorskip("dask.array")
    _, _, res = logit_pair
    rows = dask_array.from_array(res.model.exog, chunks=100)
    with pytest.raises(TypeError, match="in-memory rows"):
        res.get_prediction(rows)


def test_k1_residuals_equal_logit():
    data = logistic_data(300, d=2, seed=4)
    data.index = [f"row{i}" for i in range(len(data))]
    data.loc["row3", "x1"] = np.nan  # dropped by both formulas
    logit_res = smf.logit("y ~ x1 + x2", data).fit(disp=0)
    res = ps.plume("y ~ x1 + x2", data, k=1).fit()
    names = ("fittedvalues", "resid_response", "resid_generalized", "resid_pearson")
    for name in (*names, "resid_dev"):
        pd.testing.assert_series_equal(
            getattr(res, name), getattr(logit_res, name), rtol=1e-8, atol=1e-10
        )
    new = data.iloc[:4].dropna()
    np.testing.assert_allclose(
        res.get_distribution(new).mean(),
        logit_res.get_distribution(new).mean(),
        rtol=1e-8,
    )


@pytest.mark.parametrize("flips", [False, True])
def test_residuals_follow_their_definitions(flips):
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.1, random_state=3)
    make = ps.plume_flip if flips else ps.plume
    res = make("y ~ x1 + x2", data, k=3).fit(alpha=1e-3)
    y, prob = data["y"].to_numpy(), np.asarray(res.predict())
    np.testing.assert_allclose(res.resid_response, y - prob, atol=1e-12)
    np.testing.assert_allclose(
        res.resid_pearson, (y - prob) / np.sqrt(prob * (1 - prob)), rtol=1e-8
    )
    np.testing.assert_allclose(res.fittedvalues, logit(prob), rtol=1e-8, atol=1e-10)
    # squared deviance residuals add up to the deviance, -2 llf
    assert np.sum(res.resid_dev**2) == pytest.approx(-2 * res.llf, rel=1e-10)
    assert np.all(np.sign(res.resid_dev) == np.where(y == 1, 1, -1))


def test_residuals_need_the_data():
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=0)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    res.remove_data()
    for name in ("fittedvalues", "resid_dev", "resid_pearson"):
        with pytest.raises(ValueError, match=r"which remove_data\(\) dropped"):
            getattr(res, name)
    with pytest.raises(ValueError, match=r"which remove_data\(\) dropped"):
        res.get_influence()


def test_residuals_of_a_json_export_say_it_holds_no_data(tmp_path):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=0)
    ps.plume("y ~ x1 + x2", data, k=2).fit().save_json(tmp_path / "fit.json")
    loaded = ps.load_json(tmp_path / "fit.json")
    with pytest.raises(ValueError, match="which a JSON export does not hold"):
        _ = loaded.resid_pearson


def test_singular_information_gives_nan_standard_errors():
    # intercept-only with two experts: a ridge of maxima, NaN bse; the
    # prediction is fine, its uncertainty unknown (never a confident zero)
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ps.plume("y ~ 1", data, k=2).fit()
    assert np.isnan(np.asarray(res.bse)).all()
    frame = res.get_prediction(data.iloc[:3]).summary_frame()
    np.testing.assert_allclose(frame["predicted"], data["y"].mean(), rtol=1e-6)
    assert frame[["se", "ci_lower", "ci_upper"]].isna().all().all()


def test_k1_influence_equals_logit():
    data = logistic_data(300, d=2, seed=4)
    expected = smf.logit("y ~ x1 + x2", data).fit(disp=0).get_influence()
    got = ps.plume("y ~ x1 + x2", data, k=1).fit().get_influence()
    expected_frame, frame = expected.summary_frame(), got.summary_frame()
    assert list(frame.columns[:3]) == ["dfb_h1:Intercept", "dfb_h1:x1", "dfb_h1:x2"]
    np.testing.assert_allclose(frame.to_numpy(), expected_frame.to_numpy(), atol=1e-9)


def test_influence_one_step_tracks_leaving_the_point_out():
    # the one-step d_params of the three most influential points against
    # exact refits without them (K = 2)
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=1)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        influence = res.get_influence()
        frame = influence.summary_frame()
    assert frame.shape == (400, 6 + 4) and frame.notna().all().all()
    params = np.asarray(res.params)
    for row in np.argsort(influence.cooks_distance[0])[-3:]:
        keep = np.arange(len(data)) != row
        model = ps.PolyhedralMixtureLogit(
            res.model.endog[keep], res.model.exog[keep], k=2
        )
        exact = params - np.asarray(model.fit(start_params=params).params)
        error = np.linalg.norm(influence.d_params[row] - exact)
        assert error < 0.2 * np.linalg.norm(exact)


@pytest.mark.parametrize(
    "new", [np.zeros((3, 2)), [[0.1, 0.2]], np.zeros(2)], ids=["2d", "list", "1d"]
)
def test_formula_model_asks_for_a_frame_and_names_its_columns(new):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    data["g"] = np.arange(300) % 3
    res = ps.plume("y ~ np.log(x1 + 10) + x2 + C(g)", data, k=2).fit()
    pattern = r"pass a DataFrame .* with the columns 'x1', 'x2', 'g'"
    for call in (res.predict, res.get_prediction, res.decision_function):
        with pytest.raises(TypeError, match=pattern):
            call(new)
    # the way out the message gives: design rows without the formula
    rows = np.asarray(res.model.exog[:2])
    np.testing.assert_allclose(res.predict(rows, transform=False), res.predict()[:2])
    # a dict of columns is a frame
    new_rows = data.head(3)
    as_dict = {name: new_rows[name].tolist() for name in ("x1", "x2", "g")}
    np.testing.assert_allclose(res.predict(as_dict), res.predict(new_rows))


def test_k1_array_rows_with_a_missing_value_stay_in_place(logit_pair):
    """A design given as an array keeps its incomplete row as NaN, as Logit
    does: the other rows keep their positions (they moved up one)."""
    data, _, _ = logit_pair
    design = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    logit_res = sm.Logit(data.y.to_numpy(), design).fit(disp=0)
    plume_res = ps.PolyhedralMixtureLogit(data.y.to_numpy(), design, k=1).fit()
    new = design[:4].copy()
    new[1, 1] = np.nan
    expected = logit_res.get_prediction(new).summary_frame()
    got = plume_res.get_prediction(new).summary_frame()
    assert got.iloc[1].isna().all()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-6, atol=1e-12)
    # the average skips the incomplete row, and its agg_weight
    average = plume_res.get_prediction(new, average=True).predicted[0]
    assert average == pytest.approx(got.predicted.drop(index=1).mean())
    weights = np.array([1.0, 5.0, 2.0, 1.0])
    weighted = plume_res.get_prediction(new, average=True, agg_weights=weights)
    kept = [0, 2, 3]
    expected = np.mean(weights[kept] * got.predicted.to_numpy()[kept])
    assert weighted.predicted[0] == pytest.approx(expected)


@pytest.mark.parametrize("row", [[1.0, 0.1, 0.2], (1.0, 0.1, 0.2), [[1.0, 0.1, 0.2]]])
def test_a_list_or_tuple_of_design_values_is_one_row(logit_pair, row):
    _, logit_res, plume_res = logit_pair
    expected = logit_res.get_prediction(row, transform=False).summary_frame()
    got = plume_res.get_prediction(row, transform=False).summary_frame()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-6, atol=1e-12)


def test_one_column_model_reads_a_series_as_rows():
    """With K = 2 the parameters are not one value, which is how statsmodels
    tells a one-column design's Series of rows from one row."""
    data = logistic_data(300, d=1, seed=8)
    res = ps.PolyhedralMixtureLogit(data.y, data[["x1"]], k=2).fit(alpha=1e-3)
    rows = data["x1"].iloc[:3]
    expected = res.predict(data[["x1"]].iloc[:3])
    pd.testing.assert_series_equal(res.predict(rows), expected)
    got = res.get_prediction(rows).summary_frame().predicted
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_l1_zeros_leave_the_prediction_errors_finite():
    """An L1 fit's zeros are held fixed, as in its t tests: the predictions'
    standard errors come from the estimated parameters alone."""
    data = logistic_data(600, d=4, seed=9)
    res = ps.plume("y ~ x1 + x2 + x3 + x4", data, k=1).fit_regularized(
        alpha=40.0, method="l1"
    )
    assert res.trimmed.any() and not res.trimmed.all()
    se = res.get_prediction(data.iloc[:5]).se
    assert np.isfinite(se).all() and (se > 0).all()
    # the same as the delta method on the free parameters by hand
    free = ~res.trimmed
    log_odds, jacobian = log_odds_and_jacobian(
        res.model, np.asarray(res.params), res.model.exog[:5]
    )
    cov = np.asarray(res.cov_params())[np.ix_(free, free)]
    var = np.einsum("ij,jk,ik->i", jacobian[:, free], cov, jacobian[:, free])
    p = expit(log_odds)
    np.testing.assert_allclose(se, p * (1 - p) * np.sqrt(var), rtol=1e-10)


def test_a_row_as_a_series_with_integer_labels_is_read_by_name():
    """Integer column labels are names: a model fitted on columns [2, 1, 0]
    reads a Series labelled 0, 1, 2 by its labels, as a one-row frame."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    frame = pd.DataFrame({0: 1.0, 1: data.x1, 2: data.x2})
    res = ps.PolyhedralMixtureLogit(data.y, frame[[2, 1, 0]], k=1).fit()
    as_row = res.predict(frame.iloc[1])
    np.testing.assert_allclose(
        np.asarray(as_row), np.asarray(res.predict(frame.iloc[[1]]))
    )


def test_get_prediction_keeps_a_row_a_transform_makes_infinite():
    """np.log(0) is -inf, a value: Logit keeps the row (and so does predict);
    only a NaN row is dropped."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    data["p"] = np.exp(data.x1)
    formula = "y ~ np.log(p) + x2"
    new = data.iloc[[0, 1, 2]].copy()
    new.index = [10, 20, 30]
    new.loc[20, "p"] = -1.0
    new.loc[30, "p"] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # np.log of -1 and 0
        ours = ps.plume(formula, data, k=1).fit().get_prediction(new).summary_frame()
        theirs = smf.logit(formula, data).fit(disp=0).get_prediction(new)
        theirs = theirs.summary_frame()
    # the rows kept, with their labels (statsmodels 0.14 numbers them 0, 1)
    assert list(ours.index) == [10, 30] and len(theirs) == 2
    np.testing.assert_allclose(
        ours["predicted"].to_numpy(), theirs["predicted"].to_numpy(), rtol=1e-6
    )
    # ... and so does the average (it left that row out, as if NaN), for the
    # mean and the variance alike: the rows' own predictions averaged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = ps.plume(formula, data, k=1).fit()
        for which in ("mean", "var"):
            average = fit.get_prediction(new, which=which, average=True)
            rows = fit.predict(new, which=which).dropna()
            assert average.predicted[0] == pytest.approx(rows.mean(), rel=1e-12)
            assert np.isfinite(average.se).all()


def test_the_average_prediction_is_normal_whatever_use_t_as_logits():
    data = logistic_data(300, d=2, seed=4)
    formula = "y ~ x1 + x2"
    ours = ps.plume(formula, data, k=1).fit(use_t=True)
    theirs = smf.logit(formula, data).fit(disp=0, use_t=True)
    rows = data.iloc[:6]
    got = ours.get_prediction(rows, average=True).summary_frame()
    expected = theirs.get_prediction(rows, average=True).summary_frame()
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-6)


def test_intervals_far_outside_the_data_stay_where_the_ray_goes():
    """The log-odds' standard error from the log of its variance: at
    |x| ~ 1e160 its square overflows, and the interval jumped to [0, 1]."""
    data, _ = ps.simulate_polyhedron(150, d=2, k=2, noise=0.05, random_state=1)
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    res = ps.PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
    near = res.get_prediction(np.array([[1.0, 0.0, 1e10]]))
    for far in (1e160, 1e300):
        prediction = res.get_prediction(np.array([[1.0, 0.0, far]]))
        assert np.isfinite(prediction.linpred_se).all()
        np.testing.assert_allclose(prediction.conf_int(), near.conf_int())


@pytest.mark.parametrize("flips", [False, True], ids=["plume", "flips"])
def test_variance_prediction_against_finite_differences(flips):
    """``which="var"`` at K = 2: ``predict(which="var")``'s values, and
    standard errors from a numerical gradient of them in the parameters
    (the delta method by finite differences), row by row and averaged."""
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.1, random_state=0)
    fit = ps.plume_flip if flips else ps.plume
    res = fit("y ~ x1 + x2", data, k=2).fit(alpha=1e-3)
    rows = data.iloc[:6]
    exog = np.column_stack([np.ones(6), rows[["x1", "x2"]].to_numpy()])
    params = np.asarray(res.params)

    def variances(p):
        return np.asarray(res.model.predict(p, exog, which="var"))

    gradient = approx_fprime(params, variances, centered=True)
    cov = np.asarray(res.cov_params())
    frame = res.get_prediction(rows, which="var").summary_frame()
    np.testing.assert_allclose(frame["predicted"], variances(params), rtol=1e-12)
    expected = np.sqrt(np.einsum("ij,jk,ik->i", gradient, cov, gradient))
    np.testing.assert_allclose(frame["se"], expected, rtol=1e-5)
    mean = res.get_prediction(rows, which="var", average=True).summary_frame()
    average = gradient.mean(axis=0)
    assert mean["predicted"].iloc[0] == pytest.approx(variances(params).mean())
    assert mean["se"].iloc[0] == pytest.approx(
        np.sqrt(average @ cov @ average), rel=1e-5
    )
