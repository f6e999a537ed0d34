"""The EM engine: monotone, convergent to a maximum, reproducible, canonical."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit
from plumestats._start import _directions, start_methods


def _random_problem(seed):
    """Twenty varied problems: polyhedral and noisy data, K in {2, 3, 4}."""
    rng = np.random.default_rng(seed)
    k = (2, 3, 4)[seed % 3]
    d = int(rng.integers(2, 6))
    nobs = int(rng.integers(150, 600))
    data, _ = ps.simulate_polyhedron(
        nobs, d=d, k=k, noise=rng.uniform(0.02, 0.25), random_state=seed
    )
    exog = np.column_stack([np.ones(nobs), data.drop(columns="y").to_numpy()])
    gamma = float(rng.choice([0.1, 1.0, 5.0]))
    return PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=k, gamma=gamma)


def _fit_quietly(model, **kwargs):
    """Fit, ignoring the warnings of hard problems: convergence is not the point."""
    with warnings.catch_warnings():
        for category in (
            ConvergenceWarning,
            HessianInversionWarning,
            PerfectSeparationWarning,
        ):
            warnings.simplefilter("ignore", category)
        return model.fit(**kwargs)


def _assert_monotone(history):
    history = np.asarray(history)
    assert np.all(np.diff(history) >= -1e-10 * np.abs(history[1:]))


@pytest.mark.parametrize("seed", range(20))
def test_llf_history_never_decreases(seed):
    model = _random_problem(seed)
    # some of these problems are nearly separable
    res = _fit_quietly(model, maxiter=300, init=("kmeans", "logit", "random")[seed % 3])
    _assert_monotone(res.llf_history)
    assert res.llf_history[-1] == pytest.approx(res.llf, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_pure_em_is_monotone_too(seed):
    model = _random_problem(seed)
    res = _fit_quietly(model, newton_finish=False, maxiter=150)
    _assert_monotone(res.llf_history)
    assert set(res.mle_retvals["steps"]) == {"em"}


def test_converges_to_a_regular_maximum():
    data, _ = ps.simulate_polyhedron(2000, d=3, k=3, noise=0.05, random_state=3)
    res = ps.plume("y ~ x1 + x2 + x3", data, k=3).fit()
    assert res.converged
    params = res.params.to_numpy()
    score = res.model.score(params)
    info = -res.model.hessian(params)
    # a maximum: zero gradient (relative to the information) and -H positive definite
    assert np.all(np.linalg.eigvalsh(info) > 0)
    newton_step = np.linalg.solve(info, score)
    assert np.max(np.abs(newton_step / res.bse.to_numpy())) < 1e-6


def test_newton_finish_beats_stopping_on_small_change(pima):
    """Trap (a): 'stop when L rises by less than tol' can stop short on pima."""
    formula = "diabetes ~ " + " + ".join(pima.columns[:-1])
    model = ps.plume(formula, pima, k=2)
    full = model.fit()
    assert full.converged
    gradient = model.score(full.params.to_numpy())
    assert np.max(np.abs(gradient / full.bse.to_numpy())) < 1e-4
    with warnings.catch_warnings():
        # where plain EM stops, minus the Hessian need not even be positive definite
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", HessianInversionWarning)
        loose = model.fit(newton_finish=False, maxiter=60)
    assert full.llf >= loose.llf - 1e-9


def test_restarts_keep_the_best_and_record_all():
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.1, random_state=8)
    res = ps.plume("y ~ x1 + x2", data, k=3).fit(
        n_init=5, init="random", random_state=11
    )
    restarts = res.mle_retvals["restarts_llf"]
    assert restarts.shape == (5,)
    assert res.llf == pytest.approx(restarts.max(), rel=1e-12)


def test_same_seed_same_fit_bit_for_bit():
    data, _ = ps.simulate_polyhedron(500, d=3, k=2, noise=0.1, random_state=9)
    model = ps.plume("y ~ x1 + x2 + x3", data, k=2)
    first = model.fit(n_init=3, init="random", random_state=42).params.to_numpy()
    second = model.fit(n_init=3, init="random", random_state=42).params.to_numpy()
    np.testing.assert_array_equal(first, second)
    # the default (random_state=None) is reproducible too
    np.testing.assert_array_equal(model.fit().params, model.fit().params)


def test_canonical_order_does_not_depend_on_the_start():
    data, _ = ps.simulate_polyhedron(2000, d=2, k=3, noise=0.03, random_state=2)
    model = ps.plume("y ~ x1 + x2", data, k=3)
    res = model.fit()
    blocks = res.params.to_numpy().reshape(3, -1)
    permuted = blocks[[2, 0, 1]].ravel()
    again = model.fit(start_params=permuted)
    np.testing.assert_allclose(again.params, res.params, rtol=1e-6, atol=1e-8)
    share = res.predict(which="gate").mean(axis=0)
    assert np.all(np.diff(np.asarray(share)) <= 0)


def test_disp_prints_progress(capsys):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    ps.plume("y ~ x1 + x2", data, k=2).fit(disp=True)
    out = capsys.readouterr().out
    assert "iter" in out and "Optimization terminated successfully." in out


def test_disp_reports_each_restart(capsys):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit(n_init=3, disp=True)
    runs = [line for line in capsys.readouterr().out.splitlines() if "EM run" in line]
    assert [line.split(":")[0] for line in runs] == [f"EM run {i}/3" for i in (1, 2, 3)]
    finals = [float(line.split("= ")[1].split(" (")[0]) for line in runs]
    np.testing.assert_allclose(finals, res.mle_retvals["restarts_llf"], rtol=1e-9)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit(n_init=3)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "model_class", [PolyhedralMixtureLogit, ps.LabelFlipPolyhedralLogit]
)
def test_fit_takes_statsmodels_positional_arguments(model_class):
    """fit(start_params, method, maxiter, full_output, disp, callback, retall)
    as statsmodels' GenericLikelihoodModel.fit (Logit.fit's first seven): a
    Logit script's positional call means the same here (the fourth was tol,
    which stopped EM early)."""
    from statsmodels.base.model import GenericLikelihoodModel
    from statsmodels.discrete.discrete_model import Logit

    ours = list(inspect.signature(model_class.fit).parameters)
    theirs = list(inspect.signature(GenericLikelihoodModel.fit).parameters)
    assert ours[:7] == list(inspect.signature(Logit.fit).parameters)[:7]
    assert (
        ours[:8]
        == theirs[:8]
        == [
            "self",
            "start_params",
            "method",
            "maxiter",
            "full_output",
            "disp",
            "callback",
            "retall",
        ]
    )
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    model = PolyhedralMixtureLogit.from_formula("y ~ x1 + x2", data, k=2)
    positional = model.fit(None, "em", 500, 0, reseat=0)
    keywords = model.fit(full_output=False, reseat=0)
    assert "llf_history" not in positional.mle_retvals
    np.testing.assert_array_equal(positional.params, keywords.params)


@pytest.mark.parametrize("flips", [False, True])
def test_callback_sees_every_iteration_as_statsmodels_calls_it(flips):
    """callback(params) in the user's units, as statsmodels' optimisers call
    it (a Logit script's one-argument callback failed with EM)."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    model = (ps.plume_flip if flips else ps.plume)("y ~ x1 + x2", data, k=2)
    seen = []
    # one run (no re-seating moves, whose runs the callback sees too)
    # (the flips' penalty keeps the flip fit of these noise-free labels finite)
    res = model.fit(
        callback=lambda params: seen.append(params), reseat=0, alpha=1e-3 * flips
    )
    runs = 2 if flips else 1  # a label-flip fit's PLUME run first
    assert len(seen) >= res.n_iter and (runs == 2 or len(seen) == res.n_iter)
    assert all(params.shape == (3 * 2 + flips,) for params in seen[-res.n_iter :])
    llfs = [model.loglike(params) for params in seen[-res.n_iter :]]
    if not flips:  # the unpenalised objective is the log-likelihood
        np.testing.assert_allclose(llfs, res.llf_history[1:], rtol=1e-10)
    assert llfs[-1] == pytest.approx(res.llf, rel=1e-10)


def test_mixed_restarts_cycle_through_the_kinds_of_start():
    assert start_methods("mixed", 5) == [
        "kmeans",
        "directions",
        "logit",
        "kmeans",
        "directions",
    ]
    assert start_methods("logit", 2) == ["logit", "logit"]
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.1, random_state=8)
    model = ps.plume("y ~ x1 + x2", data, k=3)
    mixed = model.fit(n_init=3, init="mixed", random_state=11)
    restarts = mixed.mle_retvals["restarts_llf"]
    assert restarts.shape == (3,)
    assert mixed.llf == pytest.approx(restarts.max(), rel=1e-12)
    # the first run is the k-means run a single start with the same seed makes
    single = model.fit(init="kmeans", random_state=11)
    assert restarts[0] == pytest.approx(single.llf, rel=1e-12)
    again = model.fit(n_init=3, init="mixed", random_state=11)
    np.testing.assert_array_equal(mixed.params, again.params)


def test_directions_start_finds_the_maximum_kmeans_misses():
    # the retired restart study (docs/benchmarks/learned.md), d = 5, K = 6,
    # seed 2: three k-means starts end at a local maximum with a true face
    # unmatched, three starts clustered by direction reach the better one (a
    # fall-back to the k-means clustering would not)
    data, _ = ps.simulate_polyhedron(12000, d=5, k=6, noise=0.0, random_state=2)
    formula = "y ~ " + " + ".join(f"x{i}" for i in range(1, 6))
    model = ps.plume(formula, data.iloc[:2000], k=6)
    best = {}
    for init in ("kmeans", "directions"):
        res = _fit_quietly(model, alpha=1e-5, init=init, n_init=3, random_state=2)
        best[init] = res.mle_retvals["restarts_llf"].max() / res.nobs
    assert best["directions"] > best["kmeans"] + 0.01  # -0.0566 against -0.0694


def test_directions_are_unit_vectors_from_the_inside_mean():
    inside = np.array([[0.0, 0.0], [2.0, 0.0]])
    outside = np.array([[1.0, 3.0], [4.0, 0.0], [1.0, 0.0]])
    directions = _directions(outside, inside)
    np.testing.assert_allclose(directions, [[0, 1], [1, 0], [0, 0]], atol=1e-15)


def test_overrelaxed_em_reaches_plain_ems_maximum_in_fewer_steps(pima):
    """Over-relaxation changes the path, not the maximum where EM's path leads:
    on pima at K = 2 with a penalty (every start reaches the same maximum,
    docs/benchmarks/maxima) and on a simulated polyhedron."""
    simulated, _ = ps.simulate_polyhedron(800, d=3, k=3, noise=0.05, random_state=7)
    formula = "diabetes ~ " + " + ".join(pima.columns[:-1])
    models = [
        ps.plume(formula, pima, k=2),
        ps.plume("y ~ x1 + x2 + x3", simulated, k=2),
    ]
    for model in models:
        plain = model.fit(alpha=1e-3, reseat=0)
        relaxed = model.fit(alpha=1e-3, reseat=0, em_overrelax=2)
        assert plain.mle_settings["em_overrelax"] == 1.0
        assert relaxed.mle_settings["em_overrelax"] == 2.0
        _assert_monotone(relaxed.llf_history)
        assert relaxed.converged and plain.converged
        assert relaxed.llf == pytest.approx(plain.llf, rel=1e-12)
        np.testing.assert_allclose(relaxed.params, plain.params, rtol=1e-7, atol=1e-9)
        n_em = [res.mle_retvals["steps"].count("em") for res in (plain, relaxed)]
        assert n_em[1] < n_em[0]


def test_label_flip_runs_take_plain_em_steps():
    """A label-flip EM step also moves the flip rate: not over-relaxed, so the
    run is the same bit for bit whatever ``em_overrelax`` (from its own start
    values, as its PLUME stage is over-relaxed: its maximum with the faces
    shrunk, where over-relaxed steps would take 5 EM steps, not 8)."""
    data, _ = ps.simulate_polyhedron(600, d=2, k=2, noise=0.1, random_state=4)
    model = ps.plume_flip("y ~ x1 + x2", data, k=2)
    start = _fit_quietly(model, alpha=1e-2).params
    start.iloc[:-1] *= 0.3
    fits = [
        _fit_quietly(model, start_params=start, alpha=1e-2, em_overrelax=growth)
        for growth in (1.0, 2.0, 4.0)
    ]
    assert fits[0].mle_retvals["steps"].count("em") >= 2
    for res in fits[1:]:
        np.testing.assert_array_equal(res.params, fits[0].params)
        assert res.mle_retvals["steps"] == fits[0].mle_retvals["steps"]


def test_spla1_refuses_over_relaxation():
    """The hard gate's EM steps search L itself and are never over-relaxed:
    the option would be recorded and do nothing."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=4)
    model = ps.spla1("y ~ x1 + x2", data, k=2)
    with pytest.raises(ValueError, match=r"SPLA1's .* leave em_overrelax at 1"):
        model.fit(em_overrelax=2)
    assert _fit_quietly(model, em_overrelax=1).mle_settings["em_overrelax"] == 1.0


def test_twin_faces_are_parted_by_a_step_along_negative_curvature():
    """A strong penalty merges faces (here two of three, to the last bit),
    and EM moves twin faces alike: the run at a weak penalty from there
    starts on a saddle, whose way off only rounding error pointed at. Its
    first Newton step is a step along the most negative curvature, and the
    order of the faces in the start does not change the fit."""
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, random_state=1)
    exog = data.drop(columns="y")
    exog.insert(0, "Intercept", 1.0)
    model = PolyhedralMixtureLogit(data["y"], exog, k=3)
    merged = model.fit(alpha=1.0, reseat=0, random_state=1).params.to_numpy()
    faces = merged.reshape(3, -1)
    gaps = np.abs(faces[:, None] - faces[None]).max(axis=-1)
    assert np.sort(gaps[np.triu_indices(3, 1)])[0] < 1e-12  # twins
    fits = [
        model.fit(start_params=faces[order].ravel(), alpha=1e-3, em_tol=0.01)
        for order in ([0, 1, 2], [1, 0, 2], [1, 2, 0])
    ]
    for res in fits:
        steps = res.mle_retvals["steps"]
        assert steps[steps.index("escape") - 1] == "em"
        assert "newton" not in steps[: steps.index("escape")]
        fitted = res.params.to_numpy().reshape(3, -1)
        gaps = np.abs(fitted[:, None] - fitted[None]).max(axis=-1)
        assert gaps[np.triu_indices(3, 1)].min() > 0.1
        assert res.llf == pytest.approx(fits[0].llf, abs=1e-8)
        np.testing.assert_allclose(res.params, fits[0].params, atol=1e-5)


def test_a_flip_rate_held_at_its_boundary_stays_there_through_an_escape():
    """The twin faces' escape moves only what the Newton steps move: a label
    flip rate held at its floor (noise-free data) stays at it exactly (the
    escape over every coordinate moved it by 1e-9 on the logit scale)."""
    from scipy.special import logit

    from plumestats import LabelFlipPolyhedralLogit

    data, _ = ps.simulate_polyhedron(600, d=2, k=3, random_state=1)
    exog = data.drop(columns="y")
    exog.insert(0, "Intercept", 1.0)
    merged = (
        PolyhedralMixtureLogit(data["y"], exog, k=3)
        .fit(alpha=1.0, reseat=0, random_state=1)
        .params.to_numpy()
    )
    floor = logit(1e-8)  # the flip rate's floor (plumestats._objectives)
    res = _fit_quietly(
        LabelFlipPolyhedralLogit(data["y"], exog, k=3),
        start_params=np.append(merged, floor),
        alpha=1e-3,
        em_tol=0.01,
        reseat=0,
    )
    assert "escape" in res.mle_retvals["steps"] and res.mle_retvals["boundary"]
    assert res.params.iloc[-1] == floor
