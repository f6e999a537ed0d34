"""Re-seating moves (``fit(reseat=...)``): a way out of the local maximum where
two faces share one side of the polyhedron and another side is missed."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

import plumestats.api as ps
from plumestats import (
    HardPolyhedralLogit,
    LabelFlipPolyhedralLogit,
    PolyhedralMixtureLogit,
)
from plumestats.api import plume, select_k, spla1
from plumestats.datasets import simulate_polyhedron


def _polytope(nobs, d, k, seed):
    """The first ``nobs`` rows of the polyhedral suite's simulation (2000 + 10000
    rows, as ``benchmarks/polyhedral.py`` draws them), with an intercept."""
    data, truth = simulate_polyhedron(nobs + 10000, d=d, k=k, random_state=seed)
    train = data.iloc[:nobs]
    exog = train.drop(columns="y")
    exog.insert(0, "Intercept", 1.0)
    return train["y"], exog, truth


def _matched_cosines(fitted, truth) -> np.ndarray:
    """Cosines of the fitted normals with the true ones, matched one to one."""
    fitted = fitted.to_numpy()[:, 1:]
    truth = truth.to_numpy()[:, 1:]
    cosines = (fitted / np.linalg.norm(fitted, axis=1, keepdims=True)) @ (
        truth / np.linalg.norm(truth, axis=1, keepdims=True)
    ).T
    rows, cols = linear_sum_assignment(-cosines)
    return cosines[rows, cols]


@pytest.fixture(scope="module")
def stuck_fit():
    # d = 5, K = 6, seed 2 of the polyhedral suite: all three k-means starts
    # end with one face owning no outside point and one true side unmatched
    # (docs/benchmarks/learned.md, restart strategies); a start at the truth
    # finds a higher maximum, -0.0566 per observation against -0.0694
    y, exog, truth = _polytope(2000, 5, 6, 2)
    model = PolyhedralMixtureLogit(y, exog, k=6)
    fits = {
        moves: model.fit(alpha=1e-5, n_init=3, random_state=2, reseat=moves)
        for moves in (0, 6)
    }
    return fits, truth


def test_reseat_leaves_the_local_maximum_and_recovers_every_face(stuck_fit):
    fits, truth = stuck_fit
    plain, reseated = fits[0], fits[6]
    assert _matched_cosines(plain.hyperplanes, truth).min() < 0.5  # one side missed
    assert _matched_cosines(reseated.hyperplanes, truth).min() > 0.99
    plain_best = plain.mle_retvals["restarts_llf"].max()
    # the restarts are the same runs; a move found the higher maximum
    np.testing.assert_array_equal(
        reseated.mle_retvals["restarts_llf"], plain.mle_retvals["restarts_llf"]
    )
    moves = reseated.mle_retvals["reseat_llf"]
    assert moves[0] / 2000 == pytest.approx(-0.05658, abs=1e-4)
    assert plain_best / 2000 == pytest.approx(-0.06937, abs=1e-4)
    assert reseated.llf > plain.llf + 20
    # the second move re-finds that maximum, so the moves stop there
    assert moves.size == 2 and moves[1] == pytest.approx(moves[0], rel=1e-8)
    assert reseated.mle_settings["reseat"] == 6
    assert plain.mle_retvals["reseat_llf"].size == 0


def test_explicit_reseat_moves_from_given_start_params(stuck_fit):
    """start_params alone make no move (the default); an explicit reseat
    makes its moves from the run of the given start, as from a restart."""
    fits, truth = stuck_fit
    model = fits[0].model
    start = fits[0].params.to_numpy()
    plain = model.fit(start_params=start, alpha=1e-5)
    moved = model.fit(start_params=start, alpha=1e-5, reseat=6, random_state=2)
    assert (
        plain.mle_settings["reseat"] == 0 and plain.mle_retvals["reseat_llf"].size == 0
    )
    assert moved.mle_settings["reseat"] == 6
    assert moved.mle_retvals["reseat_llf"].size >= 1
    assert moved.llf > plain.llf + 20
    assert _matched_cosines(moved.hyperplanes, truth).min() > 0.99


def test_reseat_with_label_flip_start_params_is_refused():
    data = ps.simulate_plume(300, [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]], random_state=0)
    model = ps.plume_flip("y ~ x1 + x2", data, k=2)
    with pytest.raises(ValueError, match="reseat=0"):
        model.fit(start_params=np.append(model.start_params[:-1], -2.0), reseat=1)


def test_reseat_never_lowers_the_objective():
    improved = 0
    for seed in range(4):
        y, exog, _ = _polytope(500, 2, 6, seed)
        model = PolyhedralMixtureLogit(y, exog, k=6, gamma=2.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small separable samples may warn
            plain = model.fit(alpha=1e-3, random_state=seed)
            reseated = model.fit(alpha=1e-3, random_state=seed, reseat=3)
        retvals = reseated.mle_retvals
        restarts_best = retvals["restarts_llf"].max()
        assert restarts_best == plain.mle_retvals["restarts_llf"].max()
        assert 1 <= retvals["reseat_llf"].size <= 3  # some outside points missed
        best = max(restarts_best, retvals["reseat_llf"].max())
        improved += best > restarts_best + 1e-6
        # the estimates are those of the best run, whichever kind it was
        # (the penalty-path move's too, kept when it ends higher: seed 3)
        best = max([best, *retvals["path_llf"]])
        penalty = 0.5 * 500 * 1e-3 * _standardised_slopes_norm2(reseated)
        assert reseated.llf - penalty == pytest.approx(best, rel=1e-7)
        # every move but the last raised the objective
        values = [restarts_best, *retvals["reseat_llf"]]
        assert all(b > a for a, b in itertools.pairwise(values[:-1]))
    assert improved >= 2  # seeds 0 and 1 leave a local maximum


def _standardised_slopes_norm2(results) -> float:
    """sum_k ||b_k||^2 of the slopes in standardised units (what alpha weighs)."""
    slopes = results.hyperplanes.to_numpy()[:, 1:]
    scale = results.model.exog[:, 1:].std(axis=0)
    return float(np.sum((slopes * scale) ** 2))


def test_reseat_with_one_face_or_nothing_missed_makes_no_move():
    y, exog, _ = _polytope(300, 2, 2, 0)
    one = PolyhedralMixtureLogit(y, exog, k=1)
    np.testing.assert_array_equal(
        one.fit(alpha=1e-2, reseat=4).params, one.fit(alpha=1e-2).params
    )
    assert one.fit(alpha=1e-2, reseat=4).mle_retvals["reseat_llf"].size == 0
    # a slab |x1| < 1 with a margin around both faces: the fit calls no outside
    # point inside, so there is nothing to re-seat a face on
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (600, 2))
    x = x[np.abs(np.abs(x[:, 0]) - 1) > 0.4]
    slab = (np.abs(x[:, 0]) < 1).astype(float)
    design = pd.DataFrame({"Intercept": 1.0, "x1": x[:, 0], "x2": x[:, 1]})
    res = PolyhedralMixtureLogit(slab, design, k=2).fit(alpha=1e-3, reseat=4)
    assert np.all(np.asarray(res.predict())[slab == 0] < 0.5)
    assert res.mle_retvals["reseat_llf"].size == 0


def test_reseat_for_the_hard_gate_and_the_label_flip_model(stuck_fit):
    _, truth = stuck_fit
    y, exog, _ = _polytope(2000, 5, 6, 2)
    hard = HardPolyhedralLogit(y, exog, k=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SPLA1's kinks: Hessian warnings
        res = hard.fit(alpha=1e-5, n_init=3, random_state=2, reseat=6)
    assert res.mle_retvals["reseat_llf"].size >= 1
    assert res.mle_settings["reseat"] == 6
    flips = LabelFlipPolyhedralLogit(y, exog, k=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no flips in these labels: at the boundary
        plain = flips.fit(alpha=1e-5, n_init=3, random_state=2, reseat=0)
        reseated = flips.fit(alpha=1e-5, n_init=3, random_state=2, reseat=6)
    # each PLUME move starts one more label-flip run; the restarts are counted apart
    assert reseated.mle_settings["n_init"] == 3
    assert reseated.mle_retvals["restarts_llf"].size == 3
    assert reseated.mle_retvals["reseat_llf"].size == 2
    assert reseated.llf > plain.llf + 20
    assert _matched_cosines(reseated.hyperplanes, truth).min() > 0.99


def test_reseat_in_the_sklearn_estimator():
    pytest.importorskip("sklearn", reason="plumestats.sklearn needs [sklearn]")
    from plumestats.sklearn import PolyhedralClassifier

    y, exog, _ = _polytope(2000, 5, 6, 2)
    x = exog.drop(columns="Intercept").to_numpy()
    clf = PolyhedralClassifier(k=6, alpha=1e-5, n_init=3, random_state=2, reseat=6)
    assert clf.get_params()["reseat"] == 6
    clf.fit(x, y.to_numpy())
    assert clf.results_.mle_retvals["reseat_llf"].size == 2


def test_reseat_prints_its_moves(capsys):
    y, exog, _ = _polytope(2000, 5, 6, 2)
    PolyhedralMixtureLogit(y, exog, k=6).fit(
        alpha=1e-5, n_init=3, random_state=2, reseat=6, disp=True
    )
    out = capsys.readouterr().out
    assert "Re-seating move 1: objective = " in out
    assert "Re-seating move 2: objective = " in out
    # the penalty-path move's strong run ends on a line of its own, before
    # the move's run (its iterations maximise another objective)
    strong = out.index("Penalty-path move, its start at alpha = 1: objective = ")
    assert strong < out.index("Penalty-path move 1: objective = ")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reseat": -1}, "reseat must be an integer >= 0, got -1"),
        ({"reseat": 1.5}, "reseat must be an integer >= 0, got 1.5"),
        ({"reseat": True}, "reseat must be an integer >= 0, got True"),
        ({"reseat": 2, "method": "bfgs"}, "reseat needs method='em'"),
    ],
)
def test_reseat_bad_options(options, message):
    y, exog, _ = _polytope(300, 2, 2, 0)
    with pytest.raises(ValueError, match=message):
        PolyhedralMixtureLogit(y, exog, k=2).fit(**options)


def test_select_k_passes_reseat_to_every_fit():
    data, _ = simulate_polyhedron(600, k=3, noise=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select_k(
            "y ~ x1 + x2",
            data,
            ks=(1, 3),
            gammas=(1.0,),
            reseat=3,
            cv=3,
            criterion="cv",
        )
    assert sel.chosen == (3, 1.0)
    assert sel.best.mle_settings["reseat"] == 3
    # a move never lowers a fit's objective, so the chosen fit's llf is at
    # least that of the same fit without moves (alpha = 0: objective = llf)
    plain = plume("y ~ x1 + x2", data, k=3).fit()
    assert sel.best.llf >= plain.llf - 1e-8
    with pytest.raises(ValueError, match="reseat must be an integer >= 0"):
        select_k("y ~ x1 + x2", data, ks=(1, 2), reseat=-1)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(2, 5),
    gamma=st.sampled_from([0.5, 2.0, 10.0, np.inf]),
    noise=st.sampled_from([0.0, 0.1]),
)
def test_reseat_never_ends_below_the_fit_without_it(seed, k, gamma, noise):
    data, _ = simulate_polyhedron(300, d=2, k=3, noise=noise, random_state=seed)
    make = spla1 if gamma == np.inf else plume
    kwargs = {} if gamma == np.inf else {"gamma": gamma}
    model = make("y ~ x1 + x2", data, k=k, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small separable samples may warn
        plain = model.fit(alpha=1e-3, random_state=seed)
        moved = model.fit(alpha=1e-3, random_state=seed, reseat=k)
        # one iteration from the estimates: its start is their objective
        again = model.fit(alpha=1e-3, start_params=np.asarray(moved.params), maxiter=1)
    before = plain.mle_retvals["restarts_llf"].max()
    after = max(
        before,
        moved.mle_retvals["reseat_llf"].max(initial=-np.inf),
        moved.mle_retvals["path_llf"].max(initial=-np.inf),
    )
    assert after >= before
    assert moved.mle_retvals["reseat_llf"].size <= k
    assert moved.mle_retvals["path_llf"].size <= 1
    # the estimates are the best run's
    assert again.mle_retvals["llf_history"][0] == pytest.approx(after, rel=1e-8)


@pytest.fixture(scope="module")
def moved_on_6000_rows():
    # d = 3, K = 6, seed 5, 6000 rows: a move raises the objective (-772.67 to
    # -756.64), and the moves are read on a 5000-row sample of the data
    y, exog, _ = _polytope(6000, 3, 6, 5)
    model = PolyhedralMixtureLogit(y.to_numpy(), exog.to_numpy(), k=6)
    res = model.fit(alpha=1e-4, random_state=5, reseat=6)
    moves = res.mle_retvals["reseat_llf"]
    assert moves.max() > res.mle_retvals["restarts_llf"].max() + 10
    return model, res


def test_reseat_by_row_blocks_makes_the_same_moves(moved_on_6000_rows):
    model, in_memory = moved_on_6000_rows
    chunked = model.fit(alpha=1e-4, random_state=5, reseat=6, chunksize=1500)
    np.testing.assert_allclose(
        chunked.mle_retvals["reseat_llf"],
        in_memory.mle_retvals["reseat_llf"],
        rtol=1e-8,
    )
    np.testing.assert_allclose(chunked.params, in_memory.params, rtol=1e-7)
    assert chunked.mle_settings["reseat"] == 6


def test_the_default_makes_three_moves_where_moves_can_be_made():
    """``reseat=None`` resolves to 3 for EM with several faces; the settings
    say 0 where no move can be made (given start values, one face, the
    statsmodels optimisers)."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    res = model.fit()
    assert res.mle_settings["reseat"] == 3
    assert len(res.mle_retvals["reseat_llf"]) == len(
        res.mle_retvals["reseat_llf_history"]
    )
    again = model.fit(start_params=res.params)
    assert (
        again.mle_settings["reseat"] == 0 and again.mle_retvals["reseat_llf"].size == 0
    )
    assert ps.plume("y ~ x1 + x2", data, k=1).fit().mle_settings["reseat"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert model.fit(method="bfgs").mle_settings["reseat"] == 0
    one_start = model.fit(reseat=0)
    # the same start, then moves kept only when they raise the objective: the
    # reported fit (alpha = 0: its objective is llf) is never below one start
    np.testing.assert_allclose(
        res.mle_retvals["restarts_llf"], one_start.mle_retvals["restarts_llf"]
    )
    assert res.llf >= one_start.llf
