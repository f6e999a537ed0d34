"""Separation has one warning class on every path: statsmodels'
``PerfectSeparationWarning``, flagged in ``mle_retvals["separation"]``.

Before, a fit that EM stopped as diverging, with no row yet fitted with
probability above 1 - 1e-8, was reported as a plain ``ConvergenceWarning``
("diverging (separation; ...)"), and the same data by another path as
``PerfectSeparationWarning``.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from conftest import unwrapped
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps

HEART = (
    "disease ~ age + C(sex) + C(chest_pain_type) + max_heart_rate + oldpeak + C(thal)"
)


# a start from which K = 2 on heart walls off a corner: which fits separate
# depends on the start (seeds 4 and 8 of 0 to 9 since the k-means starts
# measure a factor by its term's metric, plumestats._penalty)
SEPARATING_SEED = 4


def _fit_warnings(model, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit(**options)
    return res, [w.category for w in caught]


@pytest.fixture(scope="module")
def heart(data_dir):
    return pd.read_csv(data_dir / "heart.csv")


@pytest.mark.parametrize("source", [{}, {"chunksize": 64}], ids=["memory", "blocks"])
def test_diverging_fit_without_perfect_rows_is_separation(heart, source):
    # K = 2 on heart from seed 4's start: a face walls off a pure corner; EM
    # stops as diverging while no row is fitted beyond 1 - 1e-8 yet (the old
    # ConvergenceWarning). Other starts end at finite maxima.
    res, categories = _fit_warnings(
        ps.plume(HEART, heart, k=2), random_state=SEPARATING_SEED, **source
    )
    assert res.mle_retvals["message"].startswith("diverging")
    assert categories == [PerfectSeparationWarning]
    assert res.mle_retvals["separation"] and not res.converged
    assert "Perfect or quasi-perfect separation" in unwrapped(res.summary())
    assert "separation" in res.diagnostics.flags


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"chunksize": 64},
        {"em_overrelax": 2.0},
        {"method": "bfgs"},
        {"method": "newton"},
    ],
    ids=["em", "blocks", "overrelaxed", "bfgs", "newton"],
)
def test_separable_polyhedron_on_every_path(options):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.0, random_state=1)
    res, categories = _fit_warnings(ps.plume("y ~ x1 + x2", data, k=2), **options)
    assert categories == [PerfectSeparationWarning]
    assert res.mle_retvals["separation"] is True
    assert not any(issubclass(c, ConvergenceWarning) for c in categories)


def test_separable_polyhedron_stopped_by_maxiter_is_separation():
    """A run cut short while it climbs to infinity: the direction to infinity
    is there already (it was found only at a converged point)."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.0, random_state=1)
    res, categories = _fit_warnings(ps.plume("y ~ x1 + x2", data, k=2), maxiter=15)
    assert categories == [PerfectSeparationWarning]
    assert res.mle_retvals["separation"] and not res.converged


def test_perfectly_fitted_rows_alone_are_no_separation():
    """A row fitted beyond 1 - 1e-8 at a fit stopped short of its (finite)
    maximum, or at a singular maximum of collinear columns: each gets its own
    warning, not separation's 'no finite maximum'."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=3, noise=0.1, random_state=1)
    data["x1_copy"] = data.x1
    model = ps.plume("y ~ x1 + x2", data, k=3)
    assert model.fit().diagnostics.n_perfect > 0
    short = {"mstep": "bfgs", "newton_finish": False, "maxiter": 50}
    res, categories = _fit_warnings(model, **short)
    assert categories == [ConvergenceWarning] and not res.mle_retvals["separation"]
    with pytest.warns(CollinearityWarning):
        collinear = ps.plume("y ~ x1 + x2 + x1_copy", data, k=3)
    res, categories = _fit_warnings(collinear)
    assert PerfectSeparationWarning not in categories
    assert res.converged and not res.mle_retvals["separation"]


def test_a_penalised_fit_that_still_diverges_asks_for_a_larger_penalty(heart):
    # alpha = 1e-12 is too weak to stop the corner face; 1e-10 converges
    seed = SEPARATING_SEED
    res, categories = _fit_warnings(
        ps.plume(HEART, heart, k=2), alpha=1e-12, random_state=seed
    )
    assert categories == [PerfectSeparationWarning]
    with pytest.warns(PerfectSeparationWarning, match="larger L2 penalty than"):
        ps.plume(HEART, heart, k=2).fit(alpha=1e-12, random_state=seed)
    res, categories = _fit_warnings(
        ps.plume(HEART, heart, k=2), alpha=1e-10, random_state=seed
    )
    assert categories == [] and res.converged


# The label-flip model's own separation (a noisy hard polytope without a
# penalty) is tested in test_label_flip.py: PerfectSeparationWarning and
# mle_retvals["separation"], as here.


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize(
    "options",
    [{}, {"alpha": 1e-3}, {"chunksize": 64}, {"em_overrelax": 2.0}],
    ids=["plain", "ridge", "blocks", "overrelaxed"],
)
def test_an_unused_category_level_is_no_separation(k, options):
    """An unused level is an all-zero design column: a flat direction that moves
    no observation, which must not read as a direction to infinity."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=0)
    data["g"] = pd.Categorical(["a", "b"] * 150, categories=["a", "b", "unused"])
    with pytest.warns(CollinearityWarning, match="unused category level"):
        model = ps.plume("y ~ x1 + x2 + C(g)", data, k=k)
    res, categories = _fit_warnings(model, **options)
    assert PerfectSeparationWarning not in categories
    assert not res.mle_retvals["separation"]
    assert res.converged


@pytest.mark.parametrize("method", ["nm", "powell"])
def test_complete_separation_where_everything_underflowed(method):
    """Every row fitted perfectly: the slope and the curvature along the
    direction to infinity are both exactly 0, which read as no step (the fit
    was then reported converged, with a HessianInversionWarning)."""
    data = ps.simulate_plume(400, [[0.0, 1.0, 0.0]], random_state=3)
    data["y"] = (data.x1 > 0).astype(int)
    res, categories = _fit_warnings(ps.plume("y ~ x1 + x2", data, k=1), method=method)
    assert categories == [PerfectSeparationWarning]
    assert res.mle_retvals["separation"] and not res.converged
