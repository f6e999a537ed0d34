"""Test-set bound: the binomial tail inversion against scipy's binomial, its
coverage by simulation, and the results method on held-out data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import plumestats.api as ps
from plumestats.bounds import holdout_bound
from plumestats.datasets import simulate_plume

TRUTH = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])


@pytest.mark.parametrize(("errors", "nobs"), [(0, 50), (3, 100), (40, 200), (7, 7)])
def test_bound_inverts_the_binomial_tail(errors, nobs):
    bound = holdout_bound(errors, nobs, delta=0.05)
    assert bound.error_rate == errors / nobs
    if errors == nobs:
        assert bound.bound == 1.0 and bound.vacuous
        return
    # at the bound, k or fewer errors have probability exactly delta
    assert_allclose(stats.binom.cdf(errors, nobs, bound.bound), 0.05, rtol=1e-8)
    assert bound.bound > bound.error_rate


def test_zero_errors_closed_form():
    # P(0 errors) = (1 - p)^n = delta
    assert_allclose(holdout_bound(0, 300, 0.01).bound, 1 - 0.01 ** (1 / 300))


def test_bound_covers_the_true_rate_by_simulation():
    rng = np.random.default_rng(0)
    rate, nobs, delta = 0.12, 400, 0.1
    draws = rng.binomial(nobs, rate, size=2000)
    covered = np.mean([holdout_bound(k, nobs, delta).bound >= rate for k in draws])
    # a valid bound covers at least 1 - delta (up to Monte Carlo error ~0.7%)
    assert covered >= 1 - delta - 0.015


@pytest.fixture(scope="module")
def fit_and_test():
    train = simulate_plume(2000, TRUTH, gamma=1.0, random_state=1)
    test = simulate_plume(3000, TRUTH, gamma=1.0, random_state=2)
    return ps.plume("y ~ x1 + x2", train, k=2).fit(), test


def test_results_bound_counts_the_test_errors(fit_and_test):
    res, test = fit_and_test
    bound = res.holdout_bound(test, delta=0.05)
    predicted = (res.predict(test) > 0.5).astype(int)
    assert bound.errors == int(np.sum(predicted != test["y"]))
    assert bound.nobs == 3000 and not bound.vacuous
    assert bound.bound < 0.5
    # the Rademacher bound at the same fit says nothing
    assert res.rademacher_bound().vacuous
    # the array interface gives the same count
    exog = np.column_stack([np.ones(3000), test[["x1", "x2"]]])
    arrays = ps.PolyhedralMixtureLogit(res.model.endog, res.model.exog, k=2).fit(
        start_params=res.params.to_numpy()
    )
    assert arrays.holdout_bound((test["y"].to_numpy(), exog)).errors == bound.errors


def test_results_bound_drops_incomplete_rows_and_maps_labels(fit_and_test):
    _, test = fit_and_test
    train = simulate_plume(2000, TRUTH, gamma=1.0, random_state=1)
    train["label"] = np.where(train["y"] == 1, "in", "out")
    res = ps.plume("label ~ x1 + x2", train, k=2, inside="in").fit()
    labelled = test.assign(label=np.where(test["y"] == 1, "in", "out"))
    labelled.loc[:9, "x1"] = np.nan
    bound = res.holdout_bound(labelled)
    assert bound.nobs == 2990
    predicted_in = res.predict(labelled) < 0.5  # P(y = 1) is P("out")
    expected = np.sum((predicted_in != (labelled["label"] == "in"))[10:])
    assert bound.errors == expected


def test_results_bound_bad_input(fit_and_test):
    res, test = fit_and_test
    with pytest.raises(ValueError, match="no outcome column 'y'"):
        res.holdout_bound(test.drop(columns="y"))
    with pytest.raises(ValueError, match="labels the fit did not see"):
        res.holdout_bound(test.assign(y=test["y"] + 5))
    with pytest.raises(TypeError, match=r"DataFrame \(formula models\) or a pair"):
        res.holdout_bound(test.to_numpy())
    with pytest.raises(ValueError, match="delta must lie in"):
        res.holdout_bound(test, delta=1.5)
    with pytest.raises(ValueError, match="errors must be an integer"):
        holdout_bound(5, 3)
    with pytest.raises(ValueError, match="same observations"):
        res.holdout_bound((test["y"].to_numpy()[:5], pd.DataFrame(test)))
    # before: a bound for another classifier, or rows paired with others
    for threshold in (2.0, np.nan, -0.1):
        with pytest.raises(ValueError, match=r"threshold must be a probability"):
            res.holdout_bound(test, threshold=threshold)
    with pytest.raises(ValueError, match="different indexes"):
        res.holdout_bound((test["y"], test.iloc[::-1]))
    for errors, nobs in ((np.nan, 10), (3, np.inf)):
        with pytest.raises(ValueError, match="must be"):
            holdout_bound(errors, nobs)


def test_the_rademacher_bound_names_bad_inputs():
    from plumestats.bounds import rademacher_bound

    weights = np.ones((2, 3))
    for options, message in (
        ({"gamma": -1.0}, "gamma must be a finite number > 0"),
        ({"gamma": np.inf}, "gamma must be a finite number > 0"),
        ({"nobs": 0}, "nobs must be a finite number > 0"),
        ({"mean_nll": -0.5}, "mean_nll must be a finite number >= 0"),
    ):
        arguments = {"mean_nll": 0.5, "gamma": 1.0, "nobs": 400, **options}
        with pytest.raises(ValueError, match=message):
            rademacher_bound(
                weights,
                None,
                arguments["mean_nll"],
                arguments["gamma"],
                radius=4.0,
                nobs=arguments["nobs"],
            )


def test_results_bound_with_a_true_false_text_outcome():
    # patsy hands "True"/"False" text to the fit as booleans: the test labels,
    # text, were refused as labels the fit did not see
    data, _ = ps.simulate_polyhedron(600, d=2, k=2, noise=0.05, random_state=0)
    data["t"] = np.where(data["y"] == 1, "True", "False")
    train, test = data.iloc[:400], data.iloc[400:]
    as_text = ps.plume("t ~ x1 + x2", train, k=2).fit().holdout_bound(test)
    as_codes = ps.plume("y ~ x1 + x2", train, k=2).fit().holdout_bound(test)
    assert as_text.errors == as_codes.errors and as_text.nobs == 200
