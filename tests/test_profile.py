"""Profile-likelihood intervals, ``conf_int(method="profile")``.

The oracles: at K = 1 the likelihood profiled with statsmodels' GLM (each
coefficient held fixed through an offset, the others refitted), cut at the
chi-square(1) quantile; at K = 2 scipy's BFGS maximising the log-likelihood
over the other parameters at each endpoint, which must sit exactly at the
cut-off.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import logistic_data
from numpy.testing import assert_allclose
from scipy import optimize, stats
from statsmodels.tools.sm_exceptions import CollinearityWarning, ConvergenceWarning

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit

CUT = stats.chi2.ppf(0.95, 1)


def _glm_profile_interval(y, exog, j: int, level: float = 0.95) -> list[float]:
    """R's confint for a glm, by hand: l_p(b) from a GLM with offset b x_j."""
    full = sm.GLM(y, exog, family=sm.families.Binomial()).fit(tol=1e-14)
    others = [i for i in range(exog.shape[1]) if i != j]
    cut = stats.chi2.ppf(level, 1)

    def excess(b):
        fit = sm.GLM(
            y, exog[:, others], family=sm.families.Binomial(), offset=b * exog[:, j]
        ).fit(tol=1e-14)
        return 2 * (full.llf - fit.llf) - cut

    b, se = full.params[j], full.bse[j]
    return [
        optimize.brentq(excess, b - 6 * se, b, xtol=1e-12),
        optimize.brentq(excess, b, b + 6 * se, xtol=1e-12),
    ]


@pytest.fixture(scope="module")
def k1():
    data = logistic_data(300, d=3, seed=1)
    res = ps.plume("y ~ x1 + x2 + x3", data, k=1).fit()
    return data, res


def test_k1_equals_the_glm_profile(k1):
    data, res = k1
    exog = sm.add_constant(data[["x1", "x2", "x3"]].to_numpy())
    y = data["y"].to_numpy()
    profile = res.conf_int(method="profile")
    expected = [_glm_profile_interval(y, exog, j) for j in range(4)]
    assert_allclose(profile.to_numpy(), expected, atol=1e-6)
    # the same frame as the Wald intervals', and near them at this N
    wald = res.conf_int()
    assert isinstance(profile, pd.DataFrame)
    assert profile.shape == wald.shape and list(profile.index) == list(wald.index)
    assert_allclose(profile.to_numpy(), wald.to_numpy(), atol=0.1)


def test_a_maximisation_that_runs_out_of_steps_warns_once(k1, monkeypatch):
    # one Newton step per maximisation cannot converge away from the
    # estimate: the interval may then be too short, and the user is told
    import plumestats._profile as profile_module

    _, res = k1
    monkeypatch.setattr(profile_module, "_INNER_STEPS", 1)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 Newton steps") as got:
        res.conf_int(method="profile")
    # once per parameter (each of the 4 stops short), not at every step of
    # the root search
    stopped = [w for w in got if "stopped after" in str(w.message)]
    assert len(stopped) == 4
    # at the caller's line, past statsmodels' results wrapper
    assert {w.filename for w in stopped} == {__file__}


def test_k1_level_follows_alpha(k1):
    data, res = k1
    exog = sm.add_constant(data[["x1", "x2", "x3"]].to_numpy())
    narrow = res.conf_int(alpha=0.2, method="profile").to_numpy()
    expected = _glm_profile_interval(data["y"].to_numpy(), exog, 1, level=0.8)
    assert_allclose(narrow[1], expected, atol=1e-6)
    wide = res.conf_int(method="profile").to_numpy()
    assert np.all(narrow[:, 0] > wide[:, 0]) and np.all(narrow[:, 1] < wide[:, 1])


def test_k2_endpoints_sit_at_the_likelihood_ratio_cut_off():
    data, _ = ps.simulate_polyhedron(500, d=2, k=2, noise=0.1, random_state=0)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    model, estimate = res.model, res.params.to_numpy()
    intervals = res.conf_int(method="profile").to_numpy()
    assert np.all(intervals[:, 0] < estimate) and np.all(estimate < intervals[:, 1])
    for j in (1, 4):  # a slope of each face
        free = np.arange(estimate.size) != j
        for end in intervals[j]:

            def negative(values, end=end, j=j, free=free):
                params = estimate.copy()
                params[j], params[free] = end, values
                return -model.loglike(params)

            best = optimize.minimize(
                negative, estimate[free], method="BFGS", options={"gtol": 1e-9}
            )
            assert 2 * (res.llf + best.fun) == pytest.approx(CUT, abs=1e-5)


def test_profile_is_refused_where_it_means_nothing():
    data = logistic_data(200, d=2, seed=3)
    y, exog = data["y"].to_numpy(), sm.add_constant(data[["x1", "x2"]].to_numpy())
    penalised = PolyhedralMixtureLogit(y, exog, k=1).fit(alpha=1e-2)
    with pytest.raises(ValueError, match=r"penalised .* refit with alpha=0"):
        penalised.conf_int(method="profile")
    hard = ps.HardPolyhedralLogit(y, exog, k=2).fit()
    with pytest.raises(ValueError, match="hard-gating likelihood has kinks"):
        hard.conf_int(method="profile")
    # one face has no kinks: the hard model is Logit, and profiles as PLUME does
    assert_allclose(
        ps.HardPolyhedralLogit(y, exog, k=1).fit().conf_int(method="profile"),
        PolyhedralMixtureLogit(y, exog, k=1).fit().conf_int(method="profile"),
        rtol=1e-6,
    )
    stripped = PolyhedralMixtureLogit(y, exog, k=1).fit()
    stripped.remove_data()
    with pytest.raises(ValueError, match="needs the estimation data"):
        stripped.conf_int(method="profile")
    with pytest.raises(ValueError, match="method must be one of"):
        stripped.conf_int(method="likelihood")
    with pytest.warns(ConvergenceWarning):
        stopped = PolyhedralMixtureLogit(y, exog, k=1).fit(maxiter=1)
    with pytest.raises(ValueError, match="found a higher log-likelihood"):
        stopped.conf_int(method="profile")


@pytest.mark.parametrize("k", [1, 2])
def test_profile_intervals_follow_the_columns_units(k):
    """A slope's interval does not move when its column is shifted, and
    scales with its column; profiled in the user's units, the inner
    maximisation stopped short on such designs (an interval of 50 to 70%)."""
    data, _ = ps.simulate_polyhedron(150, d=2, k=2, noise=0.05, random_state=1)
    endog = data["y"].to_numpy()
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    base = PolyhedralMixtureLogit(endog, exog, k=k).fit()
    reference = np.asarray(base.conf_int(method="profile"))
    slopes = [j for j in range(3 * k) if j % 3]
    shift = np.array([0.0, 1000.0, 0.0])
    shifted = PolyhedralMixtureLogit(endog, exog + shift, k=k).fit()
    got = np.asarray(shifted.conf_int(method="profile"))
    assert_allclose(got[slopes], reference[slopes], rtol=1e-7)
    scale = np.array([1.0, 1e4, 1e-4])
    scaled = PolyhedralMixtureLogit(endog, exog * scale, k=k).fit()
    got = np.asarray(scaled.conf_int(method="profile")) * np.tile(scale, k)[:, None]
    assert_allclose(got, reference, rtol=1e-7)


def test_flip_rate_endpoint_at_the_boundary_is_a_root():
    """A flip rate held at 0: the upper end of flip_logit's profile interval
    sits at the cut-off (found by BFGS over the faces). The search steps far
    out (a flip rate near 0.5, the faces running off); warm-started from
    there, the inner maximisation stayed on that branch, and Brent narrowed
    onto the jump between the branches, 1.6 units above the cut-off."""
    faces = [[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]]
    data = ps.simulate_plume(1500, faces, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flip rate at its boundary
        res = ps.plume_flip("y ~ x1 + x2", data, k=1).fit()
        upper = np.asarray(res.conf_int(method="profile"))[-1, 1]
    model, estimate = res.model, res.params.to_numpy(copy=True)

    def negative(faces):
        return -model.loglike(np.append(faces, upper))

    best = optimize.minimize(
        negative, estimate[:-1], method="BFGS", options={"gtol": 1e-9}
    )
    assert 2 * (res.llf + best.fun) == pytest.approx(CUT, abs=1e-4)


@pytest.mark.parametrize(
    ("seed", "nobs", "truth"),
    [(0, 300, (0.3, 1.0, -0.8)), (18, 60, (1.5, 2.0, 0.5))],
    ids=["estimate-drift", "first-point-drift"],
)
def test_faces_endpoints_of_a_boundary_flip_fit_let_the_rate_move(seed, nobs, truth):
    """A flip rate held at 0: each face coefficient's profile maximises over
    the flip rate too. Brent's method evaluated the profile at the estimate,
    whose maximisation ran the rate's logit further out (-18.7 to -30.7,
    where its score underflows), and that point started the other side,
    which then kept the rate at 0: the upper end of x1 was PLUME's 1.53,
    the profile's 1.72. A side's first point, started from the estimate,
    could do the same (x1's upper end 5.71 for 6.35, the second case). The
    oracle: BFGS over the other parameters from several flip rates, at each
    endpoint the likelihood-ratio cut-off."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=(2, nobs))
    score = truth[0] + truth[1] * x1 + truth[2] * x2
    y = (rng.random(nobs) < 1 / (1 + np.exp(-score))).astype(float)
    data = pd.DataFrame({"y": y, "x1": x1, "x2": x2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flip rate at its boundary
        res = ps.plume_flip("y ~ x1 + x2", data, k=1).fit()
        intervals = np.asarray(res.conf_int(method="profile"))
    assert res.mle_retvals["boundary"]
    model, estimate = res.model, res.params.to_numpy(copy=True)

    def profile(j, value):
        free = np.arange(estimate.size) != j

        def full(others):
            params = np.empty(estimate.size)
            params[free], params[j] = others, value
            return params

        best = -np.inf
        for flip_logit in (-12.0, -6.0, -3.0, -2.0, -1.0):
            start = estimate.copy()
            start[-1] = flip_logit
            found = optimize.minimize(
                lambda z: -model.loglike(full(z)),
                start[free],
                jac=lambda z: -model.score(full(z))[free],
                method="BFGS",
                options={"gtol": 1e-8},
            )
            best = max(best, -found.fun)
        return best

    for j in range(3):  # the face's coefficients: both ends at the cut-off
        for end in intervals[j]:
            assert 2 * (res.llf - profile(j, end)) == pytest.approx(CUT, abs=1e-4)


@pytest.mark.parametrize("k", [1, 2])
def test_rank_deficient_design_profiles_the_identified_coefficients(k):
    """x3 = 2 x1 + 1 leaves the intercepts, x1 and x3 unidentified: their
    profiles are flat, so NaN, as their Wald intervals (they were arbitrary
    numbers at K = 1, Brent's method failed at K = 2); x2's are the fit's
    without x3."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    data["x3"] = 2 * data["x1"] + 1
    with pytest.warns(CollinearityWarning, match="not identified"):
        full = ps.plume("y ~ x1 + x2 + x3", data, k=k).fit()
    reduced = ps.plume("y ~ x1 + x2", data, k=k).fit()
    ours = full.conf_int(method="profile")
    unidentified = full.mle_retvals["unidentified"]
    assert unidentified.sum() == 3 * k
    assert ours[unidentified].isna().all().all()
    slopes = [name for name in ours.index if name.endswith(":x2")]
    expected = reduced.conf_int(method="profile").loc[slopes]
    assert_allclose(ours.loc[slopes], expected, rtol=1e-8)
