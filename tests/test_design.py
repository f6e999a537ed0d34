"""The dense/sparse split of the design gives the dense products to rounding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import plumestats._design as design_module
import plumestats.api as ps
from plumestats._design import DesignMatrix, upper_pairs
from plumestats._fitting import build_problem
from plumestats._scaling import DesignScaling


def _factor_design(rng, nobs=3000):
    """Intercept, three numeric columns and two factors' indicators (15 levels)."""
    numeric = rng.standard_normal((nobs, 3)) * [1.0, 10.0, 0.1] + [0.0, 50.0, -3.0]
    first = rng.integers(0, 10, nobs)
    second = rng.integers(0, 6, nobs)
    indicators = np.column_stack(
        [first == level for level in range(1, 10)]
        + [second == level for level in range(1, 6)]
    ).astype(float)
    return np.column_stack([np.ones(nobs), numeric, indicators])


@pytest.fixture(autouse=True)
def _split_small_designs(monkeypatch):
    """Small designs here stand for large ones: the split is what is tested."""
    monkeypatch.setattr(design_module, "_MIN_DENSE_GRAM_WORK", 0)


@pytest.fixture
def split_design():
    rng = np.random.default_rng(0)
    exog = _factor_design(rng)
    scaled = DesignScaling.from_exog(exog).transform_exog(exog)
    design = DesignMatrix(scaled)
    assert design.is_split
    return design, scaled, rng


def test_products_match_dense(split_design):
    design, dense, rng = split_design
    weights = rng.standard_normal((dense.shape[1], 3))
    per_obs = rng.standard_normal((3, dense.shape[0]))
    np.testing.assert_allclose(design @ weights, dense @ weights, rtol=1e-12)
    np.testing.assert_allclose(per_obs @ design, per_obs @ dense, rtol=1e-12)


def test_gram_blocks_match_dense(split_design):
    design, dense, rng = split_design
    weights = rng.uniform(-1, 1, (dense.shape[0], 2, 2))
    weights = weights + weights.transpose(0, 2, 1)
    expected = np.block(
        [
            [(dense * weights[:, k, j, None]).T @ dense for j in range(2)]
            for k in range(2)
        ]
    )
    pairs = np.column_stack([weights[:, k, j] for k, j in upper_pairs(2)])
    got = design.gram_blocks(pairs)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-9)


@pytest.mark.parametrize("pair_list", [True, False])
@pytest.mark.parametrize("column_loop", [True, False])
def test_grams_match_dense_by_every_path(
    split_design, monkeypatch, pair_list, column_loop
):
    # a row of the factor design has 2 indicators (3 pairs, 1.5 per nonzero):
    # a limit of 1 sends the same design through scipy's sparse product; the
    # dense-indicator blocks loop over the indicator columns, or (past the
    # loop's column limit) take scipy's product one weight at a time
    if not pair_list:
        monkeypatch.setattr(design_module, "_MAX_PAIRS_PER_NONZERO", 1)
    if not column_loop:
        monkeypatch.setattr(design_module, "_MAX_CROSS_LOOP_COLUMNS", 0)
    _, dense, rng = split_design
    design = DesignMatrix(dense, keep_products=True)
    weights = rng.uniform(-1, 1, (dense.shape[0], 4))
    expected = np.stack([(dense * w[:, None]).T @ dense for w in weights.T])
    got = design.grams(weights)
    assert (design._pairs is not None) == pair_list
    assert (design._cross is not None) == column_loop
    # a slab's or a block's design keeps no copies; nor does one whose
    # indicator columns have few rows each (the loop would not pay)
    assert DesignMatrix(dense)._cross is None
    few_rows = DesignMatrix(dense[:400], keep_products=True)
    np.testing.assert_allclose(
        few_rows.grams(weights[:400]),
        np.stack([(dense[:400] * w[:, None]).T @ dense[:400] for w in weights[:400].T]),
        rtol=1e-11,
        atol=1e-9,
    )
    assert few_rows._cross is None
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(got, got.transpose(0, 2, 1), rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(design.gram(weights[:, 2]), expected[2], rtol=1e-11)
    # a column-major weight array (the Hessian weights' layout) alike
    np.testing.assert_allclose(
        design.grams(np.asfortranarray(weights)), got, rtol=1e-13, atol=1e-12
    )


def test_indicator_block_is_scipy_s_csr():
    # the CSR built from the flat positions of the nonzeros is scipy's, entry
    # for entry (some rows without indicators, a column never nonzero)
    from scipy import sparse

    exog = _factor_design(np.random.default_rng(5), nobs=600)
    exog[:40, 4:] = 0.0
    exog[:, 6] = 0.0
    design = DesignMatrix(exog)
    reference = sparse.csr_array(exog[:, design._sparse_cols])
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(
            getattr(design._sparse, name), getattr(reference, name)
        )
    rows, _ = np.nonzero(exog[:, design._sparse_cols])
    np.testing.assert_array_equal(design._entry_rows, rows)


@pytest.mark.parametrize("p", [1, 9, 24, 30])
def test_small_dense_grams_from_row_products_equal_the_plain_product(p):
    # up to 24 columns (and 2 MiB) a dense design keeps its rows' products
    rng = np.random.default_rng(6)
    values = rng.standard_normal((300, p))
    weights = rng.uniform(-1, 1, (300, 3))
    design = DesignMatrix(values, split=False, keep_products=True)
    expected = np.stack([(values * w[:, None]).T @ values for w in weights.T])
    np.testing.assert_allclose(design.grams(weights), expected, rtol=1e-11, atol=1e-11)
    assert (design._outer is not None) == (p <= 24)
    empty = DesignMatrix(np.empty((0, p)), keep_products=True)
    assert empty.grams(np.empty((0, 2))).shape == (2, p, p)
    assert DesignMatrix(values)._outer is None  # only when asked


def test_pair_list_counts_rows_of_any_length():
    # rows with 0, 1 and 3 nonzero indicators, some columns never nonzero
    rng = np.random.default_rng(1)
    indicators = (rng.random((400, 12)) < 0.12).astype(float) * rng.uniform(
        0.5, 2.0, (400, 12)
    )
    indicators[:50] = 0.0
    indicators[:, 5] = 0.0
    dense = np.column_stack([np.ones(400), rng.standard_normal(400), indicators])
    design = DesignMatrix(dense)
    assert design.is_split
    weights = rng.standard_normal((400, 2))
    expected = np.stack([(dense * w[:, None]).T @ dense for w in weights.T])
    np.testing.assert_allclose(design.grams(weights), expected, atol=1e-12)


def test_dense_designs_stay_dense():
    rng = np.random.default_rng(1)
    assert not DesignMatrix(rng.standard_normal((500, 12))).is_split


def test_small_designs_stay_dense(monkeypatch):
    monkeypatch.setattr(design_module, "_MIN_DENSE_GRAM_WORK", 2_000_000)
    exog = _factor_design(np.random.default_rng(4), nobs=500)
    assert not DesignMatrix(exog).is_split
    assert DesignMatrix(np.tile(exog, (20, 1))).is_split


def test_indicator_columns_are_scaled_not_centred():
    rng = np.random.default_rng(2)
    exog = _factor_design(rng, nobs=500)
    scaling = DesignScaling.from_exog(exog)
    assert np.all(scaling.center[4:] == 0.0)
    assert np.all(scaling.center[1:4] != 0.0)
    # mostly-zero columns keep their zeros
    scaled = scaling.transform_exog(exog)
    np.testing.assert_array_equal(scaled[:, 4:] == 0, exog[:, 4:] == 0)


def test_fit_is_the_same_with_and_without_the_split(monkeypatch):
    rng = np.random.default_rng(3)
    nobs = 3000
    frame = pd.DataFrame(
        {
            "x": rng.standard_normal(nobs),
            "z": rng.standard_normal(nobs),
            "g": rng.integers(0, 12, nobs).astype(str),
        }
    )
    inside = (frame.x < 1) & (frame.z < 1) & (frame.g.astype(int) < 9)
    flip = rng.uniform(size=nobs) < 0.1
    frame["y"] = (inside ^ flip).astype(int)
    model = ps.plume("y ~ x + z + C(g)", frame, k=2)
    assert build_problem(model, 0.0)[0].source.design.is_split
    split = model.fit(alpha=1e-3)
    monkeypatch.setattr(design_module, "_MIN_SPARSE_COLUMNS", 10**9)
    dense = model.fit(alpha=1e-3)
    assert split.converged and dense.converged
    np.testing.assert_allclose(split.params, dense.params, rtol=1e-7, atol=1e-9)
    assert split.llf == pytest.approx(dense.llf, rel=1e-12)
    np.testing.assert_allclose(split.bse, dense.bse, rtol=1e-7)


def test_dense_grams_by_blocks_and_wide_equal_the_plain_product():
    rng = np.random.default_rng(3)
    weights = rng.uniform(-1, 1, (700, 3))
    # p = 5: blocks of rows; p = 300: one product (a block would hold < 256 rows)
    for p in (5, 300):
        values = rng.standard_normal((700, p))
        expected = np.stack([(values * w[:, None]).T @ values for w in weights.T])
        got = design_module.dense_grams(values, weights)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-9)
    assert design_module.dense_grams(np.empty((700, 0)), weights).shape == (3, 0, 0)


def test_a_design_of_indicators_only_splits_and_fits():
    # one-hot levels without an intercept: a split design whose dense part has
    # no columns (its Gram products once divided by zero)
    rng = np.random.default_rng(4)
    levels = rng.integers(0, 12, 15000)
    onehot = (levels[:, None] == np.arange(12)).astype(float)
    design = DesignMatrix(onehot)
    assert design.is_split and design._dense_cols.size == 0
    weights = rng.uniform(-1, 1, (15000, 3))
    expected = np.stack([(onehot * w[:, None]).T @ onehot for w in weights.T])
    np.testing.assert_allclose(design.grams(weights), expected, rtol=1e-11, atol=1e-9)
    y = (rng.random(15000) < np.where(levels < 6, 0.8, 0.2)).astype(float)
    res = ps.PolyhedralMixtureLogit(y, onehot, k=2).fit(alpha=1e-3)
    assert np.isfinite(res.llf) and res.converged


def _objective(k):
    from plumestats._spec import ModelSpec, SoftGate

    return ModelSpec(k=k, gate=SoftGate(1.0)).objective()


@pytest.mark.parametrize("split", [True, False])
def test_scores_of_several_points_equal_each_point_alone(split_design, split):
    """One product for a trial and its anchor gives each point's scores,
    column-major; with a trial beyond a double's range, each point is
    scaled by its own weights (the anchor's scores keep their precision)."""
    from plumestats._likelihood import linear_scores
    from plumestats._objectives import scores_of

    _, dense, rng = split_design
    design = DesignMatrix(dense, split=split)
    objective = _objective(2)
    anchor = rng.standard_normal(2 * dense.shape[1]) * 1e-5
    huge = np.sign(rng.standard_normal(anchor.size)) * 1.5e308
    with np.errstate(over="ignore"):
        assert not np.isfinite(dense @ huge.reshape(2, -1).T).all()  # overflows
    for trial in (rng.standard_normal(anchor.size), huge):
        got = scores_of([trial, anchor], design, objective)
        for point, scores in zip([trial, anchor], got, strict=True):
            alone = linear_scores(point, dense, 2)
            scale = np.abs(alone[np.isfinite(alone)]).max()  # cancellation near 0
            np.testing.assert_allclose(scores, alone, rtol=1e-12, atol=1e-14 * scale)
            assert scores.flags.f_contiguous


def test_blocks_count_a_slab_s_nonzeros_once(monkeypatch):
    """By blocks, a slab that did not split is built without counting its
    nonzeros again at the next pass, and the sums are the same."""
    from plumestats._rows import InMemoryRows

    rng = np.random.default_rng(3)
    exog = np.column_stack([np.ones(5000), rng.standard_normal((5000, 9))])
    y = np.where(rng.random(5000) < 0.5, 1.0, -1.0)
    rows = InMemoryRows(exog, y, chunksize=1500)
    counted = []
    real = DesignMatrix._cannot_split
    monkeypatch.setattr(
        DesignMatrix, "_cannot_split", lambda self: counted.append(1) or real(self)
    )
    objective = _objective(2)
    params = rng.standard_normal(2 * exog.shape[1]) * 0.3
    need = frozenset({"L", "grad", "hess"})
    first = rows.reduce(objective=objective, params=params, need=need)
    after_first = len(counted)
    second = rows.reduce(objective=objective, params=params, need=need)
    assert after_first == 4 and len(counted) == after_first  # 4 blocks, then none
    for key in need:
        np.testing.assert_array_equal(first[key], second[key])
