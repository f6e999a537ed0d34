"""Property-based tests (hypothesis): random small, messy DataFrames either fit
with a monotone EM history and finite results, or raise one of the package's
documented exceptions - never a RuntimeWarning, never NaN reported as success.

50 examples per property by default; ``--hypothesis-profile=slow`` runs 1000.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statsmodels.tools.sm_exceptions import ModelWarning

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit

# what a user may legitimately get for bad input (docs/errors.md)
DOCUMENTED = (ValueError, TypeError)


@st.composite
def messy_frames(draw):
    nobs = draw(st.integers(min_value=0, max_value=40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frame = pd.DataFrame(
        {
            "x1": rng.standard_normal(nobs) * draw(st.sampled_from([1e-6, 1.0, 1e6])),
            "x2": rng.integers(-3, 4, nobs).astype(float),
        }
    )
    extras = draw(
        st.sets(
            st.sampled_from(
                ["nan", "inf", "constant", "duplicate", "category", "collinear"]
            )
        )
    )
    if "nan" in extras and nobs:
        frame.loc[rng.integers(0, nobs), "x1"] = np.nan
    if "inf" in extras and nobs:
        frame.loc[rng.integers(0, nobs), "x2"] = np.inf
    if "constant" in extras:
        frame["c"] = 3.0
    if "duplicate" in extras:
        frame["x3"] = frame["x1"]
    if "collinear" in extras:
        frame["x4"] = frame["x1"] - 2 * frame["x2"]
    if "category" in extras:
        frame["g"] = rng.choice(["a", "b", "c"], nobs)
    outcome = draw(st.sampled_from(["01", "bool", "strings", "pm1", "one_class"]))
    y = rng.random(nobs) < 0.5
    frame["y"] = {
        "01": y.astype(int),
        "bool": y,
        "strings": np.where(y, "yes", "no"),
        "pm1": np.where(y, 1, -1),
        "one_class": np.ones(nobs, dtype=int),
    }[outcome]
    terms = [c if c != "g" else "C(g)" for c in frame.columns if c != "y"]
    return frame, "y ~ " + " + ".join(terms)


def _fit(formula, frame, k, missing):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)  # documented warnings
        warnings.simplefilter("error", RuntimeWarning)
        return ps.plume(formula, frame, k=k, missing=missing).fit(maxiter=100)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(messy_frames(), st.integers(1, 3), st.sampled_from(["none", "drop"]))
def test_messy_frames_fit_or_raise_a_documented_error(case, k, missing):
    frame, formula = case
    try:
        res = _fit(formula, frame, k, missing)
    except DOCUMENTED:
        return
    history = np.asarray(res.llf_history)
    assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:]))
    assert np.isfinite(res.llf) and res.llf <= 0
    assert np.all(np.isfinite(np.asarray(res.params)))
    bse = np.asarray(res.bse)
    # standard errors are finite, or NaN all together (with a warning); a
    # rank-deficient design's unidentified coefficients' alone are NaN
    unidentified = res.mle_retvals.get("unidentified", np.zeros(bse.size, bool))
    assert np.all(np.isnan(bse[unidentified]))
    known = bse[~unidentified]
    assert np.all(np.isfinite(known)) or np.all(np.isnan(known))


@given(
    st.integers(1, 4),
    st.floats(1e-4, 1e3),
    st.lists(st.floats(-1e300, 1e300), min_size=12, max_size=12),
)
def test_loglike_and_predict_are_safe_at_any_finite_parameters(k, gamma, values):
    rng = np.random.default_rng(0)
    exog = np.column_stack([np.ones(30), rng.standard_normal((30, 2))])
    model = PolyhedralMixtureLogit(
        (rng.random(30) < 0.5).astype(float), exog, k=k, gamma=gamma
    )
    params = np.resize(np.asarray(values), model.nparams)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        llf = model.loglikeobs(params)
        prob = model.predict(params)
        gate = model.predict(params, which="gate")
    assert not np.isnan(llf).any() and np.all(llf <= 0)
    assert np.all((prob >= 0) & (prob <= 1))
    np.testing.assert_allclose(gate.sum(axis=1), 1.0)
