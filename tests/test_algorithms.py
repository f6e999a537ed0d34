"""The algorithm family: M-step solvers, statsmodels optimisers, hard gating,
penalised fits and separation, and the choice of the inside class."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import unwrapped
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps

MSTEP_NAMES = ("newton", "gradient", "bfgs")


@pytest.fixture(scope="module")
def simulated():
    data, truth = ps.simulate_polyhedron(2000, d=3, k=3, noise=0.05, random_state=5)
    return data, truth, "y ~ x1 + x2 + x3"


def _problems(simulated, data_dir):
    data, _, formula = simulated
    yield "simulated", ps.plume(formula, data, k=3), 0.0
    pima = pd.read_csv(data_dir / "pima.csv")
    formula = "diabetes ~ " + " + ".join(pima.columns[:-1])
    yield "pima", ps.plume(formula, pima, k=2), 0.0
    heart = pd.read_csv(data_dir / "heart.csv")
    # unpenalised, K = 2 walls off a pure corner of heart: no finite maximum
    formula = "disease ~ " + " + ".join(heart.columns[:-1])
    yield "heart", ps.plume(formula, heart, k=2), 1e-3


def test_msteps_reach_the_same_maximum(simulated, data_dir):
    for name, model, alpha in _problems(simulated, data_dir):
        # pima with K = 2 has two local maxima 0.58 apart, and from some starts the
        # solvers take different roads; start inside the best one's basin, from
        # the best of five k-means restarts, shrunk by 20%
        with warnings.catch_warnings():
            # the restarts may end at different maxima (heart): the best is
            # what this call is for
            warnings.simplefilter("ignore", ps.LocalMaximaWarning)
            best = model.fit(n_init=5, alpha=alpha)
        start = 0.8 * best.params.to_numpy()
        fits = {
            m: model.fit(start_params=start, mstep=m, alpha=alpha) for m in MSTEP_NAMES
        }
        reference = fits["newton"].llf
        for mstep, res in fits.items():
            assert res.converged, (name, mstep)
            assert res.llf == pytest.approx(reference, rel=1e-8), (name, mstep)
            history = res.llf_history
            assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:]))


def test_pure_em_msteps_agree_to_1e4(simulated):
    """Without the Newton finish, each solver is a generalised EM on its own."""
    data, _, formula = simulated
    model = ps.plume(formula, data, k=3)
    start = model.start_params
    values = {}
    for mstep in MSTEP_NAMES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = model.fit(
                start_params=start,
                mstep=mstep,
                newton_finish=False,
                maxiter=3000,
                tol=1e-9,
            )
        history = res.llf_history
        assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:])), mstep
        assert set(res.mle_retvals["steps"]) == {"em"}
        values[mstep] = res.llf
    for mstep, value in values.items():
        assert value == pytest.approx(values["newton"], rel=1e-4), mstep


@pytest.mark.parametrize("method", ["newton", "bfgs"])
def test_statsmodels_optimisers_agree_with_em(simulated, method):
    data, _, formula = simulated
    model = ps.plume(formula, data, k=3)
    em = model.fit()
    # statsmodels' default gtol (1e-5 on the mean score) stops early; tighten it,
    # which also checks that optimiser options pass through
    options = {"gtol": 1e-10} if method == "bfgs" else {"tol": 1e-12}
    direct = model.fit(
        method=method, start_params=em.params.to_numpy() * 0.9, maxiter=1000, **options
    )
    assert direct.llf == pytest.approx(em.llf, rel=1e-7)
    np.testing.assert_allclose(direct.params, em.params, rtol=1e-3, atol=1e-4)
    assert direct.mle_settings["method"] == method
    assert "MLE (" + method in unwrapped(direct.summary())
    # the optimiser's own keywords are recorded, as statsmodels records them,
    # and EM's options as not applied (they said em_tol=0.001, reseat 0, ...)
    settings = direct.mle_settings
    assert all(settings[key] == value for key, value in options.items())
    assert settings["tol"] == options.get("tol")
    for key in ("mstep", "em_tol", "em_overrelax", "chunksize"):
        assert settings[key] is None, key
    assert settings["newton_finish"] is False and settings["reseat"] == 0


def test_hard_model_is_the_large_gamma_limit(simulated):
    data, _, formula = simulated
    hard = ps.spla1(formula, data, k=3).fit()
    gaps = {}
    for gamma in (10.0, 100.0, 1000.0):
        soft = ps.plume(formula, data, k=3, gamma=gamma).fit(
            start_params=hard.params.to_numpy()
        )
        gaps[gamma] = np.abs(soft.predict(data) - hard.predict(data))
    # PLUME's predictions approach SPLA1's as gamma grows; at gamma = 100 they
    # differ by 7e-4 on average. (The largest gap, ~1e-2 there, sits at points
    # near a tie of two faces, where the soft gate still mixes.)
    assert np.mean(gaps[100.0]) <= 1e-3
    assert np.mean(gaps[1000.0]) < np.mean(gaps[100.0]) < np.mean(gaps[10.0])
    assert np.max(gaps[1000.0]) < np.max(gaps[10.0])
    # and the hard likelihood is PLUME's in the limit, at the same parameters
    params = hard.params.to_numpy()
    very_soft = ps.PolyhedralMixtureLogit(
        hard.model.endog, hard.model.exog, k=3, gamma=1e4
    )
    assert very_soft.loglike(params) == pytest.approx(hard.llf, rel=1e-4)


@pytest.mark.parametrize("mstep", MSTEP_NAMES)
def test_hard_model_recovers_a_polyhedron(mstep):
    data, truth = ps.simulate_polyhedron(5000, d=2, k=3, noise=0.02, random_state=3)
    res = ps.spla1("y ~ x1 + x2", data, k=3).fit(mstep=mstep)
    assert res.converged
    history = res.llf_history
    assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:]))
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    cosines = unit(truth.to_numpy()) @ unit(res.hyperplanes.to_numpy()).T
    assert cosines.max(axis=1).min() >= 0.98
    assert np.mean((res.predict() > 0.5) == data["y"]) >= 0.96
    gate = np.asarray(res.predict(which="gate"))
    assert set(np.unique(gate)) == {0.0, 1.0}
    with pytest.raises(ValueError, match="hard gating"):
        res.rademacher_bound()


def test_restarts_best_of_ten_and_reproducible(simulated):
    data, _, formula = simulated
    model = ps.plume(formula, data, k=3)
    res = model.fit(n_init=10, init="random", random_state=3)
    restarts = res.mle_retvals["restarts_llf"]
    assert restarts.shape == (10,)
    assert res.llf == pytest.approx(restarts.max(), rel=1e-12)
    again = model.fit(n_init=10, init="random", random_state=3)
    np.testing.assert_array_equal(res.params, again.params)


def _separable(seed=0, nobs=300):
    data, _ = ps.simulate_polyhedron(nobs, d=2, k=3, noise=0.0, random_state=seed)
    return data


def test_separable_data_warn_and_alpha_gives_finite_fit():
    data = _separable()
    model = ps.plume("y ~ x1 + x2", data, k=3)
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        model.fit(maxiter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a RuntimeWarning
        res = model.fit(alpha=1e-3)
    assert res.converged
    assert np.all(np.isfinite(res.params)) and np.all(np.isfinite(res.bse))
    assert np.mean((res.predict() > 0.5) == data["y"]) >= 0.99
    assert "L2-penalised" in unwrapped(res.summary())
    assert res.mle_settings["alpha"] == 1e-3
    regularized = model.fit_regularized(alpha=1e-3, method="l2")
    np.testing.assert_allclose(regularized.params, res.params)


def _one_plane_separable():
    """The data of the K = 1 bug report: the line x1 = 0.2 separates the classes."""
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.03, random_state=1)
    data["y"] = (data.x1 < 0.2).astype(int)
    return data


def _logit_params(data):
    """statsmodels' Logit on the same design, and the warnings it issued."""
    exog = sm.add_constant(data[["x1", "x2"]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # overflow in exp on separated data
        res = sm.Logit(data["y"], exog).fit(disp=0, maxiter=100)
    return res.params.to_numpy(), {w.category for w in caught}


def _unit(vector):
    vector = np.asarray(vector, dtype=float)
    return vector / np.linalg.norm(vector)


def test_k1_complete_separation_warns_like_logit():
    data = _one_plane_separable()
    model = ps.plume("y ~ x1 + x2", data, k=1)
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        res = model.fit()
    # before the fix: "converged (gradient vanished)" with |w| ~ 4560 and silence
    assert not res.converged
    assert "separation" in res.mle_retvals["message"]
    assert res.mle_retvals["separation"]
    # statsmodels' BFGS stops on the vanished gradient too; the same check applies
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        assert not model.fit(method="bfgs").converged
    # the fit runs off along statsmodels' ray (which does not converge either)
    logit, categories = _logit_params(data)
    assert ConvergenceWarning in categories
    assert _unit(res.params) @ _unit(logit) > 0.9999
    # with a margin wide enough for statsmodels' own check, both name separation
    wide = data[np.abs(data.x1 - 0.2) > 0.2]
    _, categories = _logit_params(wide)
    assert PerfectSeparationWarning in categories
    with pytest.warns(PerfectSeparationWarning):
        assert not ps.plume("y ~ x1 + x2", wide, k=1).fit().converged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        penalised = model.fit(alpha=1e-3)
    assert penalised.converged and np.all(np.isfinite(penalised.bse))


@pytest.mark.parametrize("k", [1, 2])
def test_quasi_complete_separation_warns(k):
    data = _one_plane_separable()
    # twenty observations of both classes on the separating line itself: no
    # hyperplane separates them, so the maximum is at infinity with them unfitted
    on_line = data.index[:20]
    data.loc[on_line, "x1"] = 0.2
    data.loc[on_line, "y"] = np.arange(20) % 2
    model = ps.plume("y ~ x1 + x2", data, k=k)
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        res = model.fit()
    assert not res.converged
    # every face that runs off runs off along the line x1 = 0.2
    for weights in res.hyperplanes.to_numpy():
        assert abs(_unit(weights) @ _unit([0.2, -1.0, 0.0])) > 0.999
    # the observations on the line keep a finite fit, (nearly) all others are perfect
    perfect = model.loglikeobs(res.params.to_numpy()) > -1e-8
    assert not perfect[on_line].any()
    assert perfect.sum() >= len(data) - 25


def _pure_corner(seed):
    """Inside = {x1 > 0 (noisy labels), x2 > 0 (exact)}: the face x2 = 0 walls
    off the pure half-plane x2 < 0, the face x1 = 0 has a finite fit."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(400, 2))
    inside = (x[:, 0] + rng.normal(0, 0.25, 400) > 0) & (x[:, 1] > 0)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": inside.astype(int)})


def test_k2_face_walling_off_a_pure_corner_warns():
    model = ps.plume("y ~ x1 + x2", _pure_corner(0), k=2)
    with pytest.warns(PerfectSeparationWarning, match="alpha"):
        res = model.fit()
    assert not res.converged
    planes = res.hyperplanes.to_numpy()
    sharp = np.argmax(np.linalg.norm(planes, axis=1))
    assert _unit(planes[sharp]) @ [0.0, 0.0, 1.0] > 0.999  # the face x2 = 0
    assert np.linalg.norm(planes[1 - sharp]) < 50  # the noisy face stays finite
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.fit(alpha=1e-3).converged


def test_maximum_with_perfectly_fitted_points_is_no_false_alarm():
    # this sample has a regular (local) maximum at which some observations are
    # fitted with probability 1 - 1e-30: not separation
    model = ps.plume("y ~ x1 + x2", _pure_corner(3), k=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = model.fit()
    assert res.converged
    assert np.sum(model.loglikeobs(res.params.to_numpy()) > -1e-8) > 0
    # it is a maximum: sharpening or flattening all faces lowers L
    for factor in (0.9, 1.1):
        assert model.loglike(factor * res.params.to_numpy()) < res.llf


def test_penalty_does_not_touch_intercepts_and_shrinks_slopes(simulated):
    data, _, formula = simulated
    model = ps.plume(formula, data, k=3)
    free = model.fit()
    strong = model.fit(alpha=1.0)
    slopes = ["x1", "x2", "x3"]
    assert np.linalg.norm(strong.hyperplanes[slopes]) < np.linalg.norm(
        free.hyperplanes[slopes]
    )
    # the penalised objective is the one EM raised
    assert strong.llf_history[-1] < strong.llf


def test_inside_zero_is_the_complementary_model(simulated):
    data, _, formula = simulated
    flipped = data.assign(y=1 - data["y"])
    with warnings.catch_warnings():
        # the complement of a polyhedron is not convex: the fit may be poor
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", HessianInversionWarning)
        warnings.simplefilter("ignore", PerfectSeparationWarning)
        zero_inside = ps.plume(formula, data, k=3, inside=0).fit()
        one_inside_flipped = ps.plume(formula, flipped, k=3).fit()
    np.testing.assert_allclose(
        zero_inside.params, one_inside_flipped.params, rtol=1e-8, atol=1e-10
    )
    np.testing.assert_allclose(
        zero_inside.predict(data), 1 - one_inside_flipped.predict(flipped), atol=1e-12
    )
    assert zero_inside.llf == pytest.approx(one_inside_flipped.llf, rel=1e-12)
    assert "Outcome coded 0 is the inside" in unwrapped(zero_inside.summary())


def test_inside_accepts_the_label_and_rejects_others(simulated):
    data, _, formula = simulated
    with pytest.raises(ValueError, match="inside must be one of"):
        ps.plume(formula, data, k=2, inside="yes")
    assert ps.plume(formula, data, k=2, inside=0)._inside_code == 0


def test_method_names_are_read_as_statsmodels_reads_them(simulated):
    """statsmodels' optimisers take "BFGS" as "bfgs" (a Logit script's
    spelling); so does fit, and "EM" is "em"."""
    data, _, formula = simulated
    model = ps.plume(formula, data, k=1)
    lower = model.fit(method="bfgs", disp=0)
    upper = model.fit(method="BFGS", disp=0)
    assert upper.mle_settings["method"] == "bfgs"
    np.testing.assert_array_equal(upper.params, lower.params)
    assert model.fit(method="EM").llf == model.fit().llf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flip rate at 0: not the point
        flips = ps.plume_flip(formula, data, k=1).fit(method="EM")
    assert flips.mle_settings["method"] == "em"


def test_direct_methods_refuse_a_penalty(simulated):
    data, _, formula = simulated
    with pytest.raises(ValueError, match="alpha > 0 needs method='em'"):
        ps.plume(formula, data, k=2).fit(method="bfgs", alpha=0.1)


def test_optimiser_retvals_follow_the_faces_order(simulated):
    """statsmodels' own score, Hessian and gradient in mle_retvals line up with
    params, whose faces are reordered after the fit (they did not)."""
    data, _, formula = simulated
    model = ps.plume(formula, data, k=2)
    faces = model.fit().params.to_numpy().reshape(2, -1)
    swapped = faces[::-1].ravel() * 1.01  # the optimiser ends with face 2 first
    newton = model.fit(start_params=swapped, method="newton")
    params = newton.params.to_numpy()
    # statsmodels minimises -llf / nobs (the sign of its Hessian retval
    # differs between 0.14 and 0.15: the order is what is tested)
    np.testing.assert_allclose(
        np.abs(newton.mle_retvals["Hessian"]),
        np.abs(model.hessian(params)) / model.nobs,
        rtol=1e-6,
    )
    bfgs = model.fit(start_params=swapped, method="bfgs")
    expected = -model.score(bfgs.params.to_numpy()) / model.nobs
    np.testing.assert_allclose(bfgs.mle_retvals["gopt"], expected, atol=1e-9)


@pytest.mark.parametrize(
    "options",
    [
        {"n_init": 3},
        {"mstep": "gradient"},
        {"em_tol": 0.5},
        {"em_overrelax": 2.0},
        {"newton_finish": False},
    ],
)
def test_direct_methods_refuse_em_options(simulated, options):
    """They were accepted, ignored, and written into mle_settings."""
    data, _, formula = simulated
    with pytest.raises(ValueError, match=f"{next(iter(options))} only applies"):
        ps.plume(formula, data, k=2).fit(method="bfgs", **options)
    with pytest.raises(ValueError, match="tol only applies"):
        ps.plume(formula, data, k=2).fit(method="bfgs", tol=1e-4)


@pytest.mark.parametrize("method", ["newton", "bfgs", "lbfgs", "ncg"])
def test_statsmodels_optimiser_at_a_saddle_is_not_converged(method):
    # From zeros both experts stay identical: the gradient vanishes at the K = 1
    # logit fit, a saddle of the K = 2 likelihood (EM escapes it). Before, this
    # was reported as converged, with only a note on the standard errors.
    data, _ = ps.simulate_polyhedron(400, d=3, k=2, noise=0.05, random_state=0)
    model = ps.plume("y ~ x1 + x2 + x3", data, k=2)
    with warnings.catch_warnings():
        # the information at a saddle is not positive definite: NaN errors, noted
        warnings.simplefilter("ignore", HessianInversionWarning)
        with pytest.warns(ConvergenceWarning, match="saddle point.*Use method='em'"):
            res = model.fit(method=method, start_params=np.zeros(8))
    assert not res.converged
    logit = sm.Logit(model.endog, model.exog).fit(disp=0)
    assert res.llf == pytest.approx(logit.llf, rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert model.fit(start_params=np.zeros(8)).llf > logit.llf + 50


def test_statsmodels_optimiser_stopped_short_is_not_converged():
    # L-BFGS's default tolerances stop it 3.3 log-likelihood units below the
    # maximum of this badly scaled design (ages and their squares)
    data = sm.datasets.fair.load_pandas().data.assign(
        aff=lambda d: (d.affairs > 0).astype(int)
    )
    formula = "aff ~ rate_marriage + age + yrs_married + C(religious) + I(age**2)"
    model = ps.plume(formula, data, k=1)
    newton = model.fit(method="newton")
    assert newton.converged
    lbfgs_options = {"pgtol": 1e-3}
    with pytest.warns(ConvergenceWarning, match=r"stopped short of the maximum"):
        res = model.fit(method="lbfgs", **lbfgs_options)
    assert not res.converged
    assert res.llf < newton.llf - 1e-2


def test_plain_newton_meeting_a_singular_hessian_reports_instead_of_raising():
    # statsmodels' undamped Newton runs off from the k-means start here until its
    # Hessian is exactly singular; it used to end in numpy's LinAlgError
    data, _ = ps.simulate_polyhedron(3000, d=2, k=3, noise=0.03, random_state=1)
    model = ps.plume("y ~ x1 + x2", data, k=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit(method="newton")
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert len(messages) == 1  # statsmodels' own notice is not repeated
    assert "exactly singular Hessian" in messages[0]
    assert "Use method='em'" in messages[0]
    assert not res.converged and np.isfinite(res.llf)
    # the best finite point Newton reached is kept, never worse than its start
    assert res.llf >= res.llf_history[0]


def test_fit_warnings_point_at_the_callers_line():
    data, _ = ps.simulate_polyhedron(400, d=3, k=2, noise=0.05, random_state=0)
    formula = "y ~ x1 + x2 + x3"
    fits = [
        lambda: ps.plume(formula, data, k=2).fit(maxiter=3),
        lambda: ps.plume(formula, data, k=2).fit(maxiter=3, chunksize=100),
        lambda: ps.spla1(formula, data, k=2).fit(maxiter=2),
        lambda: ps.plume(formula, data, k=2).fit(method="bfgs", maxiter=2),
        lambda: ps.plume(formula, data, k=2).fit_regularized(
            alpha=1e-3, method="l2", maxiter=3
        ),
    ]
    for fit in fits:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit()
        assert caught
        assert {w.filename for w in caught} == {__file__}


def test_simulate_plume_with_an_infinite_gamma_draws_the_hard_model():
    # it drew y = 0 for every row (the gate's NaN compared False)
    from scipy.special import expit

    from plumestats.datasets import simulate_plume

    truth = np.array([[1.0, 2.0, 0.0], [1.0, -1.0, 1.7]])
    data = simulate_plume(20000, truth, gamma=np.inf, random_state=0)
    x = data[["x1", "x2"]].to_numpy()
    probability = expit((truth[:, 0] + x @ truth[:, 1:].T).min(axis=1))
    # the mean of 20000 Bernoulli draws: within 4 standard errors
    assert abs(data["y"].mean() - probability.mean()) < 4 * 0.5 / np.sqrt(20000)
    sharp = simulate_plume(20000, truth, gamma=1e6, random_state=0)
    assert (sharp["y"] != data["y"]).mean() < 0.01


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"d": 1, "k": 3}, "no draw of 3 faces in 1 dimensions"),
        ({"d": 0}, "d must be an integer >= 1"),
        ({"k": 0}, "k must be an integer >= 1"),
        ({"nobs": 10.5}, "nobs must be an integer >= 1"),
        ({"inside_share": 1.5}, r"inside_share must lie in \(0, 1\)"),
    ],
)
def test_simulate_polyhedron_names_what_it_cannot_draw(options, match):
    # d = 1, k = 3 returned two identical faces, the others numpy's errors
    options = {"nobs": 100, **options}
    with pytest.raises(ValueError, match=match):
        ps.simulate_polyhedron(random_state=0, **options)


@pytest.mark.parametrize("build", [ps.plume, ps.spla1, ps.plume_flip])
def test_a_model_rebuilds_from_its_init_keywords(build):
    # statsmodels' utilities clone a model from endog (coded 0/1 here), exog
    # and _get_init_kwds(): inside given as a label must come back coded
    data, _ = ps.simulate_polyhedron(200, d=2, k=2, noise=0.05, random_state=0)
    data["label"] = np.where(data["y"] == 1, "yes", "no")
    model = build("label ~ x1 + x2", data, k=2, inside="no")
    clone = type(model)(model.endog, model.exog, **model._get_init_kwds())
    assert clone._inside_code == model._inside_code == 0
    np.testing.assert_array_equal(clone._y_inside, model._y_inside)
