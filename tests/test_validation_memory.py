"""Building the model checks the design by row blocks, with the same decisions.

The checks of ``PolyhedralMixtureLogit(endog, exog)`` (non-finite values, the
column names, the rank) used to work on whole-design temporaries: about three
times the design. They now read the rows block by block; these tests check that
each decision is the one the whole-design computation makes (that computation
is written out here as the oracle), and, with :mod:`tracemalloc`, that building
the model allocates a few blocks, not copies of the design.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import lstsq, qr
from statsmodels.base.data import _make_exog_names
from statsmodels.tools.sm_exceptions import CollinearityWarning

import plumestats._design_checks as design_checks
import plumestats.api as ps
from plumestats._design_checks import (
    dependent_columns,
    design_summary,
    statsmodels_exog_names,
)


def dense_dependent_columns(exog: np.ndarray) -> tuple[list[int], list[int]]:
    """The rank check as it was, on the whole design: QR with column pivoting
    of the design scaled to unit column norms, dependent where the diagonal
    falls below 1e-9 of the first, partners by least squares on the basis."""
    norms = np.linalg.norm(exog, axis=0)
    zero = np.flatnonzero(norms == 0)
    scaled = exog / np.where(norms == 0, 1.0, norms)
    _, r, pivots = qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-9 * diag[0]))
    dependent = sorted(set(pivots[rank:].tolist()) | set(zero.tolist()))
    varying = np.ptp(exog, axis=0) > 0
    partners: set[int] = set()
    for j in dependent:
        if varying[j]:
            coef = lstsq(scaled[:, pivots[:rank]], scaled[:, j])[0]
            partners.update(
                int(pivots[i])
                for i in np.flatnonzero(np.abs(coef) > 1e-8)
                if varying[pivots[i]]
            )
    return dependent, sorted(partners)


def _designs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    n = 3000
    ones = np.ones(n)
    x = rng.standard_normal((n, 3)) * [1.0, 50.0, 1e-3]
    level = rng.integers(0, 4, n)
    dummies = (level[:, None] == np.arange(4)).astype(float)
    return {
        "full rank": np.column_stack([ones, x]),
        "exact combination": np.column_stack([ones, x, x[:, 0] - 2 * x[:, 1]]),
        # 1e-12 relative: below the 1e-9 criterion, rank deficient
        "near collinear": np.column_stack(
            [ones, x, x[:, 1] + 1e-12 * 50 * rng.standard_normal(n)]
        ),
        # 1e-6 relative: well above it, full rank
        "nearly but not collinear": np.column_stack(
            [ones, x, x[:, 1] + 1e-6 * 50 * rng.standard_normal(n)]
        ),
        "dummies, reference dropped": np.column_stack([ones, x, dummies[:, 1:]]),
        "dummies, reference kept": np.column_stack([ones, x, dummies]),
        "dummies without intercept": np.column_stack([x, dummies]),
        "second constant": np.column_stack([ones, x, np.full(n, 0.1)]),
        "zero column": np.column_stack([ones, np.zeros(n), x]),
        "duplicated column": np.column_stack([ones, x, x[:, 2]]),
    }


DESIGNS = _designs()


@pytest.fixture(params=["one block", "many blocks"])
def block_bytes(request, monkeypatch):
    """The default blocks, and blocks of 256 rows (12 of them here), so that
    the block-by-block accumulation itself is exercised."""
    if request.param == "many blocks":
        monkeypatch.setattr(design_checks, "CHECK_BLOCK_BYTES", 1)
    return request.param


def dependency_support(exog: np.ndarray) -> set[int]:
    """The columns that take part in a linear dependency: the nonzero entries
    of the null vectors of the unit-norm design (singular values below the
    1e-9 criterion)."""
    norms = np.linalg.norm(exog, axis=0)
    _, sv, vt = np.linalg.svd(exog / np.where(norms == 0, 1.0, norms))
    null = vt[sv < 1e-9 * sv[0]]
    zero = set(np.flatnonzero(norms == 0).tolist())
    return zero | set(np.flatnonzero(np.abs(null).max(axis=0, initial=0) > 1e-6))


@pytest.mark.parametrize("name", list(DESIGNS))
def test_rank_decision_equals_the_whole_design_qr(name, block_bytes):
    """The same rank, and dependent columns and partners from the same
    dependency. Which column of a dependency QR names as the dependent one is
    decided by rounding when they all have unit norm (intercept and all the
    dummies, say), in the old computation as in the new: both name columns of
    the dependency."""
    exog = DESIGNS[name]
    expected = dense_dependent_columns(exog)
    dependent, partners = dependent_columns(design_summary(exog))
    assert len(dependent) == len(expected[0])
    support = dependency_support(exog)
    assert set(dependent) | set(partners) <= support
    assert set(expected[0]) | set(expected[1]) <= support
    if name in ("exact combination", "near collinear", "zero column"):
        # no ties: the very same columns
        assert (dependent, partners) == expected
    # the oracle's decisions are the ones the designs were built to have
    full_rank = name in (
        "full rank",
        "nearly but not collinear",
        "dummies, reference dropped",
        "dummies without intercept",
    )
    assert (dependent == []) == full_rank == (support == set())


@pytest.mark.parametrize("name", ["dummies, reference kept", "second constant"])
def test_rank_warning_names_the_columns(name, block_bytes):
    exog = DESIGNS[name]
    names = [f"c{j}" for j in range(exog.shape[1])]
    dependent, partners = dependent_columns(design_summary(exog))
    y = (np.arange(len(exog)) % 2).astype(float)
    with pytest.warns(CollinearityWarning, match="rank deficient") as caught:
        ps.PolyhedralMixtureLogit(y, pd.DataFrame(exog, columns=names), k=1)
    message = str(caught[0].message)
    named = {j for j, n in enumerate(names) if f"'{n}'" in message}
    # the dependent columns and their partners, and for a second constant the
    # intercept it is a multiple of: all within the dependency
    assert set(dependent) | set(partners) <= named <= dependency_support(exog)
    assert named


def test_design_summary_sums_over_blocks(block_bytes):
    """R'R is the Gram matrix; counts and extremes are those of the design."""
    exog = DESIGNS["exact combination"].copy()
    summary = design_summary(exog)
    np.testing.assert_allclose(
        summary.r.T @ summary.r, exog.T @ exog, rtol=1e-12, atol=1e-9
    )
    np.testing.assert_array_equal(summary.minimum, exog.min(axis=0))
    np.testing.assert_array_equal(summary.maximum, exog.max(axis=0))
    exog[[5, 700, 2999], 2] = [np.nan, np.inf, -np.inf]
    summary = design_summary(exog)
    np.testing.assert_array_equal(summary.n_not_finite, [0, 0, 3, 0, 0])
    assert summary.r is None


def _name_designs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1001, 3))
    ones = np.ones(1001)
    return {
        "const first": np.column_stack([ones, x]),
        "const last": np.column_stack([x, ones]),
        "two constants": np.column_stack([x[:, 0], np.full(1001, 2.0), ones, x]),
        # the mean of 1001 times 0.1 is not exactly 0.1: statsmodels sees a
        # (tiny) variance and no constant
        "rounded constant": np.column_stack([x, np.full(1001, 0.1)]),
        "no constant": x,
        "integers": np.column_stack([ones, rng.integers(0, 5, (1001, 2))]).astype(int),
        "Fortran order": np.asfortranarray(np.column_stack([x, ones])),
    }


@pytest.mark.parametrize("name", list(_name_designs()))
def test_column_names_equal_statsmodels(name, block_bytes):
    exog = _name_designs()[name]
    assert statsmodels_exog_names(exog) == _make_exog_names(exog)


def test_model_names_columns_as_statsmodels():
    exog = _name_designs()["const last"]
    y = (np.arange(len(exog)) % 2).astype(float)
    model = ps.PolyhedralMixtureLogit(y, exog, k=2)
    assert model.exog_names == ["x1", "x2", "x3", "const"]
    assert model.data.param_names[-1] == "h2:const"


# ------------------------------------------------------------------- memory
NOBS, D = 200_000, 19


def _traced(action) -> tuple[int, int]:
    """Peak and retained bytes that ``action()`` allocates."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        result = action()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak - before, current - before


@pytest.fixture(scope="module")
def large_design():
    rng = np.random.default_rng(11)
    exog = np.empty((NOBS, D + 1))
    exog[:, 0] = 1.0
    exog[:, 1:] = rng.standard_normal((NOBS, D))
    y = (rng.random(NOBS) < 0.5).astype(float)
    return y, exog


@pytest.mark.parametrize("layout", ["C", "F", "DataFrame"])
def test_building_the_model_allocates_blocks_not_designs(large_design, layout):
    """Before, building this model peaked at 3.2 times the design (96.9 MiB
    for 30.5 MiB, in every layout: the astype copy and the where-copy for the
    column names in precheck_data, the deviations of statsmodels' exog.var(0)
    for the names, the isfinite mask and the scaled copy of the rank check in
    check_design). Now 3.7 MiB: the two outcome vectors the model keeps (0/1
    and +-1, 3.1 MiB) and a few blocks."""
    y, exog = large_design
    if layout == "F":
        exog = np.asfortranarray(exog)
    elif layout == "DataFrame":
        # one float block: statsmodels takes a view of it, as of an array
        exog = pd.DataFrame(exog, columns=["const", *(f"v{j}" for j in range(D))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        peak, retained = _traced(lambda: ps.PolyhedralMixtureLogit(y, exog, k=3))
    design_bytes = NOBS * (D + 1) * 8
    block_bytes = design_checks.CHECK_BLOCK_BYTES
    outcome_bytes = y.nbytes
    assert retained <= 2 * outcome_bytes + 2**16, retained
    # temporaries beyond what the model keeps: a few blocks (the block, its
    # stacked copy for the QR, masks), and one outcome-sized array
    assert peak - retained < 4 * block_bytes + 2 * outcome_bytes, peak - retained
    assert peak < 0.25 * design_bytes, (peak, design_bytes)
