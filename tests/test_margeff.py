"""Marginal effects: statsmodels' Logit at K = 1, finite differences beyond."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from conftest import logistic_data
from numpy.testing import assert_allclose
from statsmodels.tools.numdiff import approx_fprime

import plumestats.api as ps
from plumestats._margeff import _Derivatives

PIMA_FORMULA = (
    "diabetes ~ pregnancies + glucose + blood_pressure + skin_thickness + insulin"
    " + bmi + pedigree + age"
)


def _compare_with_logit(formula, data, **options):
    logit = smf.logit(formula, data).fit(disp=0).get_margeff(**options)
    plume = ps.plume(formula, data, k=1).fit().get_margeff(**options)
    # both fits reach the same maximum to ~1e-12; 1e-6 is the bar
    assert_allclose(plume.margeff, logit.margeff, rtol=1e-6)
    assert_allclose(plume.margeff_se, logit.margeff_se, rtol=1e-6)
    assert_allclose(plume.conf_int(), logit.conf_int(), rtol=1e-6)
    assert_allclose(plume.pvalues, logit.pvalues, rtol=1e-6, atol=1e-300)
    frame = plume.summary_frame()
    assert list(frame.index) == list(logit.summary_frame().index)
    return plume


@pytest.mark.parametrize("at", ["overall", "mean"])
def test_k1_equals_logit_on_pima(pima, at):
    margins = _compare_with_logit(PIMA_FORMULA, pima, at=at)
    text = str(margins.summary())
    assert "Marginal Effects" in text and "glucose" in text and "Intercept" not in text


@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize(
    "options",
    [{}, {"method": "eydx"}, {"method": "dyex"}, {"method": "eyex"}],
    ids=["dydx", "eydx", "dyex", "eyex"],
)
def test_k1_equals_logit_on_simulated_data(at, options):
    data = logistic_data(nobs=500, d=3, seed=11)
    _compare_with_logit("y ~ x1 + x2 + x3", data, at=at, **options)


@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize("option", ["dummy", "count"])
def test_k1_discrete_columns_equal_logit(at, option):
    rng = np.random.default_rng(3)
    data = logistic_data(nobs=600, d=2, seed=12)
    data["d"] = rng.integers(0, 2, len(data))
    data["n"] = rng.poisson(2.0, len(data))
    data["y"] = (rng.random(len(data)) < 0.3 + 0.2 * data["d"] + 0.05 * data["n"]) * 1
    _compare_with_logit("y ~ x1 + x2 + d + n", data, at=at, **{option: True})


@pytest.fixture(scope="module")
def polyhedral_fits():
    data, _ = ps.simulate_polyhedron(1200, d=2, k=3, noise=0.05, random_state=4)
    data["x3"] = np.random.default_rng(5).standard_normal(len(data))
    formula = "y ~ x1 + x2 + x3"
    return {
        "k2": ps.plume(formula, data, k=2, gamma=1.0).fit(),
        "k3": ps.plume(formula, data, k=3, gamma=2.0).fit(),
        "k3_inside0": ps.plume(
            formula, data.assign(y=1 - data["y"]), k=3, inside=0
        ).fit(),
        "hard": ps.spla1(formula, data, k=3).fit(),
        # 5% label noise: the flip rate is inside (0, 0.5), not at its boundary;
        # the penalty keeps the clean faces finite
        "flips": ps.plume_flip(formula, data, k=3, gamma=2.0).fit(alpha=1e-3),
    }


FIT_IDS = ["k2", "k3", "k3_inside0", "hard", "flips"]


def _fd_effects(results, exog):
    """Central differences of predict in each design column, per row."""
    model, params = results.model, np.asarray(results.params)
    step = 1e-6
    columns = []
    for j in range(exog.shape[1]):
        up, down = exog.copy(), exog.copy()
        up[:, j] += step
        down[:, j] -= step
        columns.append(
            (model.predict(params, up) - model.predict(params, down)) / (2 * step)
        )
    return np.column_stack(columns)


@pytest.mark.parametrize("name", FIT_IDS)
@pytest.mark.parametrize("at", ["overall", "mean"])
def test_effects_are_derivatives_of_predict(polyhedral_fits, name, at):
    results = polyhedral_fits[name]
    exog = results.model.exog
    if at == "mean":
        exog = exog.mean(axis=0, keepdims=True)
    expected = _fd_effects(results, exog).mean(axis=0)[1:]  # no constant
    margins = results.get_margeff(at=at)
    # central differences of a smooth function: error ~ step^2, rounding ~1e-10
    assert_allclose(margins.margeff, expected, rtol=1e-6, atol=1e-8)
    assert np.all(np.isfinite(margins.margeff_se)) and np.all(margins.margeff_se > 0)


@pytest.mark.parametrize("name", FIT_IDS)
@pytest.mark.parametrize("method", ["dydx", "eydx", "eyex"])
@pytest.mark.parametrize("at", ["overall", "mean"])
def test_delta_method_jacobian_matches_finite_differences(
    polyhedral_fits, name, method, at
):
    results = polyhedral_fits[name]
    model = results.model
    exog = model.exog[:300]
    if model._hard:
        # hard gating: an effect jumps where a point changes face, so finite
        # differences in the weights are meaningless within a step of a tie
        scores = np.sort(exog @ results.hyperplanes.to_numpy().T, axis=1)
        exog = exog[scores[:, 1] - scores[:, 0] > 1e-3]
    if at == "mean":
        exog = model.exog.mean(axis=0, keepdims=True)

    def effects(params):
        return _Derivatives(model, params).continuous(exog, method, average=True)[0]

    params = np.asarray(results.params)
    numeric = approx_fprime(params, effects, centered=True)
    analytic = _Derivatives(model, params).continuous(exog, method, True)[1]
    scale = np.max(np.abs(numeric))
    assert_allclose(analytic, numeric, atol=1e-6 * scale)


@pytest.mark.parametrize("name", ["k3", "hard", "flips"])
def test_standard_errors_are_the_delta_method(polyhedral_fits, name):
    results = polyhedral_fits[name]
    model = results.model
    params = np.asarray(results.params)

    def average_effects(p):
        return _Derivatives(model, p).continuous(model.exog, "dydx", True)[0][1:]

    jac = approx_fprime(params, average_effects, centered=True)
    expected = np.sqrt(np.diag(jac @ np.asarray(results.cov_params()) @ jac.T))
    assert_allclose(results.get_margeff().margeff_se, expected, rtol=1e-5)


def test_dummy_effect_is_the_change_in_predict(polyhedral_fits):
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.05, random_state=8)
    data["d"] = (np.random.default_rng(9).random(len(data)) < 0.4).astype(int)
    results = ps.plume("y ~ x1 + x2 + d", data, k=2).fit()
    margins = results.get_margeff(dummy=True)
    exog = results.model.exog.copy()
    params = np.asarray(results.params)
    exog[:, 3] = 1.0
    high = results.model.predict(params, exog)
    exog[:, 3] = 0.0
    low = results.model.predict(params, exog)
    assert_allclose(margins.margeff[2], np.mean(high - low), rtol=1e-12)
    assert margins.summary_frame().index[2] == "d"


def test_at_all_and_atexog(polyhedral_fits):
    results = polyhedral_fits["k3"]
    every = results.get_margeff(at="all")
    assert every.margeff.shape == (results.nobs, 3)
    assert_allclose(every.margeff.mean(axis=0), results.get_margeff().margeff)
    with pytest.raises(ValueError, match="Only margeff"):
        every.summary_frame()
    held = results.get_margeff(at="mean", atexog={"x3": 1.5})
    by_index = results.get_margeff(at="mean", atexog={3: 1.5})
    assert_allclose(held.margeff, by_index.margeff)
    row = results.model.exog.mean(axis=0, keepdims=True)
    row[0, 3] = 1.5
    assert_allclose(held.margeff, _fd_effects(results, row)[0, 1:], rtol=1e-6)


def test_atexog_frames_are_read_by_name_as_predict_reads_them():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=300), "g": rng.choice(list("abc"), 300)})
    data["y"] = (rng.random(300) < 1 / (1 + np.exp(-data.x1 + (data.g == "b")))) * 1
    results = ps.plume("y ~ x1 + C(g)", data, k=2).fit()
    rows = results.model.exog[:5]
    expected = results.get_margeff(atexog=rows).margeff
    design = pd.DataFrame(rows, columns=results.model.exog_names)
    # the design's columns in another order, and the raw data through the formula
    for frame in (design, design[design.columns[::-1]], data.iloc[:5]):
        assert_allclose(results.get_margeff(atexog=frame).margeff, expected)
    # one row, as a Series of the raw data
    one = results.get_margeff(atexog=rows[0]).margeff
    assert_allclose(results.get_margeff(atexog=data.iloc[0]).margeff, one)
    with pytest.raises(ValueError, match="could not apply the model's formula"):
        results.get_margeff(atexog=data[["x1"]].iloc[:5])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"at": "middle"}, "at must be one of"),
        ({"method": "dy"}, "method must be one of"),
        (
            {"dummy": True, "method": "eyex"},
            r"^dummy=True \(a difference of predictions\) is not supported with "
            r"method='eyex'; use method='dydx' or 'eydx', or drop dummy=True$",
        ),
        (
            {"count": True, "at": "median"},
            r"^count=True .* not supported with at='median'; use at='overall', "
            r"'mean' or 'all', or drop count=True$",
        ),
        (
            {"dummy": True, "count": True, "method": "dyex", "at": "zero"},
            r"^dummy=True and count=True .* with method='dyex' and at='zero'; use "
            r"method='dydx' or 'eydx' and at='overall', 'mean' or 'all', or drop",
        ),
        ({"atexog": {"x9": 1.0}}, "atexog key 'x9'"),
        ({"atexog": {7: 1.0}}, "atexog keys must be column indices"),
        ({"atexog": np.ones((2, 2))}, "atexog must have 4 columns"),
    ],
)
def test_bad_arguments_are_named(polyhedral_fits, kwargs, match):
    with pytest.raises(ValueError, match=match):
        polyhedral_fits["k2"].get_margeff(**kwargs)


def test_array_interface_and_removed_data():
    data = logistic_data(nobs=300, d=2, seed=2)
    exog = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    results = ps.PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=1).fit()
    frame = results.get_margeff().summary_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.index) == ["x1", "x2"]
    results.remove_data()
    with pytest.raises(ValueError, match="remove_data"):
        results.get_margeff()


def test_flip_effects_are_plume_effects_when_the_rate_is_at_zero():
    """Noise-free labels hold the flip rate at its boundary 0: the fit is
    PLUME's, and so are its effects; the fixed rate adds no variance."""
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.0, random_state=3)
    plain = ps.plume("y ~ x1 + x2", data, k=2).fit(alpha=0.01)
    with pytest.warns(Warning, match="boundary"):
        flips = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=0.01)
    assert flips.mle_retvals["boundary"]
    ours, theirs = flips.get_margeff(), plain.get_margeff()
    assert_allclose(ours.margeff, theirs.margeff, rtol=1e-6)
    assert_allclose(ours.margeff_se, theirs.margeff_se, rtol=1e-4)


def test_flip_model_tables_name_every_design_column(polyhedral_fits):
    """statsmodels' tables drop a model's last k_extra names; the flip rate is
    not a design column, so nothing may be dropped."""
    assert not polyhedral_fits["flips"].mle_retvals.get("boundary", False)
    margins = polyhedral_fits["flips"].get_margeff()
    frame = margins.summary_frame()
    assert list(frame.index) == ["x1", "x2", "x3"]
    assert_allclose(frame.iloc[:, 0], margins.margeff)
    text = str(margins.summary())
    assert "LabelFlipPolyhedralLogit Marginal Effects" in text and "x3" in text
    assert type(margins.results.model).__name__ == "LabelFlipPolyhedralLogit"
