"""The L2 penalty by terms (plumestats._penalty): a term of several columns
costs the variance of its share of the score, so a factor's penalty, and the
fit, do not depend on its reference level."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import log_expit

import plumestats.api as ps
from plumestats._fitting import build_problem
from plumestats._penalty import Ridge

LEVELS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def frame():
    data, _ = ps.simulate_polyhedron(500, d=2, k=2, noise=0.1, random_state=7)
    rng = np.random.default_rng(7)
    # unbalanced levels: the per-column penalty then depends on the reference
    data["g"] = rng.choice(LEVELS, len(data), p=[0.5, 0.25, 0.15, 0.1])
    shift = data["g"].map({"a": 0.0, "b": 0.8, "c": -0.6, "d": 1.2})
    flip = rng.random(len(data)) < 0.15 * (shift > 0.5)
    data["y"] = np.where(flip, 1 - data["y"], data["y"])
    return data


def formula(reference: str) -> str:
    return f"y ~ x1 + x2 + C(g, Treatment(reference={reference!r}))"


def term_variance_penalty(model, params: np.ndarray, alpha: float) -> float:
    """alpha N / 2 times the summed population variances of each term's
    share of every face's score, in the user's units."""
    exog = model.exog
    names = model.exog_names
    groups = {"x1": [names.index("x1")], "x2": [names.index("x2")]}
    groups["g"] = [i for i, name in enumerate(names) if name.startswith("C(g")]
    faces = params.reshape(model.k, -1)
    total = sum(
        np.var(exog[:, columns] @ face[columns])
        for face in faces
        for columns in groups.values()
    )
    return 0.5 * alpha * model.nobs * total


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("alpha", [0.0, 1e-3, 1e-1])
def test_recoded_reference_level_gives_the_same_fit(frame, k, alpha):
    fits = [
        ps.plume(formula(level), frame, k=k).fit(alpha=alpha, disp=0)
        for level in ("a", "d")
    ]
    assert fits[1].llf == pytest.approx(fits[0].llf, abs=1e-7)
    np.testing.assert_allclose(fits[1].predict(), fits[0].predict(), atol=1e-7)
    # the slopes that are not the factor's are the same parameters
    for face in range(1, k + 1):
        for name in ("x1", "x2"):
            key = f"h{face}:{name}"
            assert fits[1].params[key] == pytest.approx(
                fits[0].params[key], rel=1e-5, abs=1e-7
            )


@pytest.mark.parametrize("k", [1, 2])
def test_penalty_is_the_variance_of_each_terms_share(frame, k):
    model = ps.plume(formula("b"), frame, k=k)
    problem, scaling = build_problem(model, 0.01)
    rng = np.random.default_rng(3)
    internal = rng.standard_normal(problem.n_weights)
    user = scaling.to_user(internal.reshape(k, -1)).ravel()
    assert problem.penalty(internal) == pytest.approx(
        term_variance_penalty(model, user, 0.01), rel=1e-10
    )


def test_k1_fit_is_the_term_penalised_logistic_regression(frame):
    """An independent optimiser on the user's units finds the same maximum."""
    alpha = 0.05
    model = ps.plume(formula("c"), frame, k=1)
    res = model.fit(alpha=alpha, disp=0)
    y = np.where(np.asarray(model.endog) > 0, 1.0, -1.0)

    def minus_objective(params):
        fit = np.sum(log_expit(y * (model.exog @ params)))
        return -(fit - term_variance_penalty(model, params, alpha))

    truth = optimize.minimize(
        minus_objective, np.zeros(model.exog.shape[1]), method="BFGS", tol=1e-12
    )
    np.testing.assert_allclose(res.params, truth.x, rtol=1e-5, atol=1e-6)


def test_blocks_and_frequency_weights_give_the_same_metric(frame):
    model = ps.plume(formula("a"), frame, k=2)
    whole = build_problem(model, 1e-3)[0].metrics
    blocks = build_problem(model, 1e-3, chunksize=64)[0].metrics
    for (where_a, matrix_a), (where_b, matrix_b) in zip(
        whole.penalty.blocks, blocks.penalty.blocks, strict=True
    ):
        np.testing.assert_array_equal(where_a, where_b)
        np.testing.assert_allclose(matrix_a, matrix_b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(whole.damping, blocks.damping, rtol=1e-12, atol=1e-14)
    # the first 100 rows twice equal weight 2 on them
    doubled = pd.concat([frame, frame.iloc[:100]], ignore_index=True)
    weights = np.r_[np.full(100, 2.0), np.ones(len(frame) - 100)]
    repeated = build_problem(ps.plume(formula("a"), doubled, k=2), 0.0)[0].metrics
    weighted = build_problem(
        ps.plume(formula("a"), frame, k=2, freq_weights=weights), 0.0
    )[0].metrics
    np.testing.assert_allclose(
        repeated.penalty.blocks[0][1], weighted.penalty.blocks[0][1], rtol=1e-12
    )


def test_designs_without_multi_column_terms_keep_a_weight_per_column(frame):
    for model in (
        ps.plume("y ~ x1 + x2 + C(g == 'a')", frame, k=2),
        ps.PolyhedralMixtureLogit(frame["y"], frame[["x1", "x2"]].assign(c=1.0), k=2),
    ):
        metrics = build_problem(model, 1e-3)[0].metrics
        assert metrics.penalty.blocks == ()
        assert metrics.damping is None


def test_ridge_gradient_and_hessian_match_its_value():
    rng = np.random.default_rng(0)
    coupling = rng.standard_normal((3, 3))
    coupling = 0.2 * (coupling + coupling.T)
    np.fill_diagonal(coupling, 0.0)
    ridge = Ridge(rng.random(7) + 0.5, ((np.array([1, 3, 4]), coupling),))
    dense = ridge.add_to(np.zeros((7, 7)))
    params = rng.standard_normal(7)
    assert ridge.value(params) == pytest.approx(0.5 * params @ dense @ params)
    np.testing.assert_allclose(ridge.times(params), dense @ params)
    np.testing.assert_allclose(
        ridge.tiled(2, 1).add_to(np.zeros((15, 15)))[7:14, 7:14], dense
    )


@pytest.mark.parametrize("dense_up_to", [0, 1024])
def test_ridge_by_blocks_or_dense_is_its_matrix(monkeypatch, dense_up_to):
    """The penalty's blocks looped over, or held as one dense matrix (small
    problems): both are R = diag(d) + O, written out here, on every face and
    on the faces' leading square (the flip rate after them unpenalised)."""
    import plumestats._penalty as penalty

    monkeypatch.setattr(penalty, "_DENSE_BLOCKS_SIZE", dense_up_to)
    rng = np.random.default_rng(1)
    coupling = rng.standard_normal((3, 3))
    coupling = 0.2 * (coupling + coupling.T)
    np.fill_diagonal(coupling, 0.0)
    where = np.array([1, 3, 4])
    diagonal = rng.random(7) + 0.5
    ridge = Ridge(diagonal, ((where, coupling),)).tiled(2, 1)
    matrix = np.diag(np.append(np.tile(diagonal, 2), 0.0))
    for face in range(2):
        matrix[np.ix_(where + 7 * face, where + 7 * face)] += coupling
    params = rng.standard_normal(15)
    assert ridge.value(params) == pytest.approx(0.5 * params @ matrix @ params)
    faces = params[:14]
    assert ridge.value(faces) == pytest.approx(0.5 * faces @ matrix[:14, :14] @ faces)
    np.testing.assert_allclose(ridge.times(params), matrix @ params)
    hessian = rng.standard_normal((15, 15))
    np.testing.assert_allclose(ridge.add_to(hessian.copy()), hessian + matrix)
    np.testing.assert_allclose(
        ridge.add_to(hessian[:14, :14].copy()), hessian[:14, :14] + matrix[:14, :14]
    )


def test_refits_on_the_formulas_arrays_keep_its_penalty(frame):
    """The bootstrap, the cross-validation folds and the LR test's draws
    refit on the design as arrays, measured by the formula's terms."""
    from plumestats._bootstrap import RefitSpec, _refit
    from plumestats._penalty import model_terms, with_terms

    res = ps.plume(formula("b"), frame, k=1).fit(alpha=0.1, disp=0)
    params, problems = _refit(RefitSpec.of(res), np.arange(len(frame)))
    assert problems == []
    np.testing.assert_allclose(params, res.params, rtol=1e-6, atol=1e-8)
    model = res.model
    arrays = with_terms(
        ps.PolyhedralMixtureLogit(model.endog, model.exog, k=1), model_terms(model)
    )
    rng = np.random.default_rng(1)
    internal = rng.standard_normal(model.exog.shape[1])
    assert build_problem(arrays, 0.1)[0].penalty(internal) == pytest.approx(
        build_problem(model, 0.1)[0].penalty(internal), rel=1e-12
    )


@pytest.mark.parametrize("alpha", [0.0, 0.01])
@pytest.mark.parametrize("coarse", ["same", "grouped"])
def test_terms_collinear_with_each_other_still_fit(frame, alpha, coarse):
    """A factor and a copy or a coarsening of it: each term's own metric is
    regular, their joint moments are not, so Newton's damping stays the
    identity (a ridge fit of such a design is what the collinearity warning
    recommends)."""
    merged = frame["g"].replace({"b": "a"})  # three levels of the four
    data = frame.assign(h=frame["g"] if coarse == "same" else merged)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CollinearityWarning, meant
        model = ps.plume("y ~ x1 + C(g) + C(h)", data, k=2)
        assert build_problem(model, alpha)[0].damping is None
        res = model.fit(alpha=alpha, disp=0)
    assert np.isfinite(res.llf)
    if alpha > 0:
        assert res.converged


@pytest.mark.parametrize("k", [1, 2])
def test_three_rows_with_three_levels_fit(k):
    """Hypothesis's frame (tests/test_fuzz_frames.py): a factor whose levels,
    with the intercept, leave no row to spare; the joint moments are singular,
    so Newton's damping is the identity (it raised LinAlgError before)."""
    frame = pd.DataFrame(
        {"c0": ["c", "b", "a"], "c1": [-0.216, -2.020, -0.232], "y": [0, 1, 1]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ps.plume("y ~ C(c0) + c1", frame, k=k).fit(maxiter=60, alpha=1e-3)
    assert np.isfinite(res.llf)


def test_dropped_columns_leave_the_terms_in_place(frame):
    """drop_cols removes a column but not its term: the penalty's terms are
    read by column name (by position they shifted, and two orders of the same
    terms gave different penalised fits)."""
    from plumestats import PolyhedralMixtureLogit

    frame = frame.assign(
        h=np.where(frame.x1 > 0, "u", np.where(frame.x2 > 0, "v", "w"))
    )
    drop = ["C(g)[T.b]"]
    fits = [
        PolyhedralMixtureLogit.from_formula(text, frame, k=1, drop_cols=drop).fit(
            alpha=0.05
        )
        for text in ("y ~ C(g) + C(h) + x1", "y ~ C(h) + C(g) + x1")
    ]
    assert fits[1].llf == pytest.approx(fits[0].llf, rel=1e-10)
    np.testing.assert_allclose(fits[1].predict(), fits[0].predict(), rtol=1e-8)


@pytest.mark.parametrize("seed", range(20))
def test_damping_floor_bound_is_above_the_scale_it_stands_for(seed):
    """The Newton damping's floor is read only where its cheap bound could
    exceed the damping in hand (plumestats._msteps._scale_bound): the bound
    must hold for any metric and any symmetric matrix, indefinite ones too
    (minus a Hessian away from a maximum), or a damping would be chosen
    below the floor."""
    from plumestats._msteps import _diagonal_scale, _scale_bound
    from plumestats._penalty import Damping

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    root = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    metric = Damping.of(root @ root.T)
    # entries down to 1e-170, whose squares underflow (a review found the
    # bound at the smallest double there, below the scale it bounds)
    half = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-170, 8)
    matrix = half + half.T
    assert _scale_bound(matrix, metric) >= _diagonal_scale(matrix, metric)
    assert _scale_bound(matrix) == _diagonal_scale(matrix)
    leading = metric.leading(slice(0, max(n - 1, 1)))
    part = matrix[: max(n - 1, 1), : max(n - 1, 1)]
    assert _scale_bound(part, leading) >= _diagonal_scale(part, leading)


def test_damping_of_a_tiny_indefinite_matrix_is_found():
    """minus a Hessian of entries near 1e-165 (a separated fit's curvature
    falls like exp(-margin)): the damping that makes it positive definite is
    found from its own scale, not refused."""
    from plumestats._msteps import damped_solve
    from plumestats._penalty import Damping

    matrix = np.diag([-1.0, 2.0, 3.0]) * 1e-165
    direction, lam, undamped = damped_solve(
        matrix, np.ones(3), 0.0, 1e-200, Damping.of(np.eye(3))
    )
    assert not undamped and 1e-165 < lam < 1e-164
    assert np.all(np.isfinite(direction))
