"""Fits by row blocks (``fit(chunksize=...)``) equal the in-memory fit.

The in-memory engine is the reference (its derivatives are checked against
finite differences in test_derivatives.py, its K = 1 fit against statsmodels'
Logit): the block sums must reproduce its every quantity, and the fits its
iterations, parameters and log-likelihood, to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import plumestats.api as ps
from plumestats import _objectives, _rows
from plumestats._problem import Problem
from plumestats._rows import InMemoryRows, in_memory_moments, scaling_from_moments
from plumestats._scaling import DesignScaling
from plumestats._spec import HardGate, ModelSpec, SoftGate
from plumestats.model import auto_chunksize

# Rounding differs only in the order of the sums: the optimum agrees far below
# the 1e-8 the issue asks for.
RTOL = 1e-8


def _design(nobs=4000, d=3, k=3, seed=1):
    data, _ = ps.simulate_polyhedron(nobs, d=d, k=k, noise=0.05, random_state=seed)
    x = data[[f"x{j + 1}" for j in range(d)]].to_numpy()
    return data["y"].to_numpy(), np.column_stack([np.ones(nobs), x])


@pytest.fixture(scope="module")
def triangle():
    y, exog = _design()
    model = ps.PolyhedralMixtureLogit(y, exog, k=3, gamma=1.0)
    return model, model.fit()


def _assert_same_fit(reference, other):
    assert_allclose(other.params, reference.params, rtol=RTOL)
    assert_allclose(other.llf, reference.llf, rtol=RTOL)
    assert_allclose(other.bse, reference.bse, rtol=1e-6)
    assert other.converged == reference.converged
    restarts = reference.mle_retvals["restarts_llf"]
    if restarts.size == 1 or np.ptp(restarts) > 1e-6 * abs(reference.llf):
        # the same path (restarts reaching one optimum are a tie, which rounding
        # may break either way)
        assert other.n_iter == reference.n_iter
        assert_allclose(other.mle_retvals["restarts_llf"], restarts, rtol=RTOL)


@pytest.mark.parametrize("chunksize", [577, 4000, "auto"])
def test_chunked_fit_equals_in_memory(triangle, chunksize):
    model, reference = triangle
    chunked = model.fit(chunksize=chunksize)
    _assert_same_fit(reference, chunked)
    retvals = chunked.mle_retvals
    runs = [*retvals["restarts_llf_history"], *retvals["reseat_llf_history"]]
    # per run (the start's and each re-seating move's): one pass for the
    # gradient and Hessian, one per line-search trial, a few at the start and
    # for the final checks
    iterations = sum(len(history) - 1 for history in runs)
    assert retvals["data_passes"] <= 2 * iterations + 10 * len(runs)


@pytest.mark.parametrize(
    "settings",
    [
        {"alpha": 1e-3},
        {"mstep": "gradient", "maxiter": 2000},
        {"mstep": "bfgs", "maxiter": 2000},
        {"newton_finish": False, "maxiter": 2000},
        {"em_overrelax": 2.0},
        {"em_overrelax": 2.0, "newton_finish": False, "maxiter": 2000},
        {"init": "random", "n_init": 2, "random_state": 3},
        {"cov_type": "HC0"},
    ],
    ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()),
)
def test_chunked_fit_settings(triangle, settings):
    model, _ = triangle
    _assert_same_fit(model.fit(**settings), model.fit(chunksize=999, **settings))


def test_chunked_hard_model():
    y, exog = _design(nobs=2000, k=2, seed=4)
    model = ps.HardPolyhedralLogit(y, exog, k=2)
    _assert_same_fit(model.fit(), model.fit(chunksize=300))


def test_chunked_k1_is_statsmodels_logit():
    y, exog = _design(nobs=3000, k=1, seed=2)
    logit = sm.Logit(y, exog).fit(disp=0)
    fit = ps.PolyhedralMixtureLogit(y, exog, k=1).fit(chunksize=250)
    assert_allclose(fit.params, logit.params, rtol=1e-7)
    assert_allclose(fit.llf, logit.llf, rtol=1e-12)
    assert_allclose(fit.bse, logit.bse, rtol=1e-6)


def test_scaling_from_block_moments_equals_whole_design():
    rng = np.random.default_rng(0)
    nobs = 3001
    numeric = rng.normal(3.0, 2.0, size=(nobs, 2))
    indicator = (rng.random((nobs, 2)) < 0.2).astype(float)
    with_intercept = np.column_stack([np.ones(nobs), numeric, indicator])
    y = np.where(rng.random(nobs) < 0.5, 1.0, -1.0)
    for exog in (with_intercept, with_intercept[:, 1:]):
        whole = DesignScaling.from_exog(exog)
        blocks = scaling_from_moments(in_memory_moments(exog, y, 400))
        assert blocks.intercept_index == whole.intercept_index
        assert_allclose(blocks.center, whole.center, rtol=1e-13, atol=1e-13)
        assert_allclose(blocks.scale, whole.scale, rtol=1e-13)


@pytest.mark.parametrize("layout", ["float64", "float32", "int", "fortran"])
def test_slab_standardiser_equals_transform_exog_to_the_bit(layout):
    """A fit by blocks standardises slab by slab into one buffer, with the
    centres and scales tiled: the same numbers as the whole design's
    standardisation, whatever the dtype and memory order of the rows, and
    for a last slab shorter than the buffer."""
    from plumestats._scaling import SlabStandardiser

    rng = np.random.default_rng(7)
    exog = np.column_stack([np.ones(700), rng.normal(3.0, 2.0, (700, 3)) * 10])
    exog = {
        "float64": exog,
        "float32": exog.astype(np.float32),
        "int": np.round(exog).astype(np.int64),
        "fortran": np.asfortranarray(exog),
    }[layout]
    scaling = DesignScaling.from_exog(np.asarray(exog, dtype=float))
    expected = scaling.transform_exog(exog)
    standardise = SlabStandardiser(scaling, 256)
    for start in range(0, 700, 256):  # 256, 256 and 188 rows
        got = standardise(exog[start : start + 256])
        assert np.array_equal(got, expected[start : start + 256])


def test_large_in_memory_fit_reads_slabs_with_the_same_estimates(triangle, monkeypatch):
    """A design of more rows than a slab is evaluated by slabs of its
    standardised rows, with the whole design's path and estimates."""
    model, reference = triangle
    monkeypatch.setattr(_objectives, "_SLAB_BYTES", 0)  # slabs of 1024 rows
    counts = []
    slabs_of = _rows.InMemoryRows.slabs

    def counted(source):
        counts.append(len(slabs_of(source)))
        return slabs_of(source)

    monkeypatch.setattr(_rows.InMemoryRows, "slabs", counted)
    slabs = model.fit()
    _assert_same_fit(reference, slabs)
    assert max(counts) == 4  # 4000 rows


def _passes(model, monkeypatch, **fit_kwargs) -> tuple[list[set], object]:
    """What each of a fit's questions to the data asked for, and the fit."""
    asked = []
    pass_of = Problem._pass

    def recorded(problem, point, need, *args, **kwargs):
        asked.append(set(need))
        return pass_of(problem, point, need, *args, **kwargs)

    monkeypatch.setattr(Problem, "_pass", recorded)
    fit = model.fit(**fit_kwargs)
    monkeypatch.undo()
    return asked, fit


@pytest.mark.parametrize("flips", [False, True])
def test_the_last_step_by_blocks_brings_its_gradient_and_no_hessian(flips, monkeypatch):
    """A pass over blocks brings the next iteration's derivatives with each
    line-search trial, but the run's last step (here its Newton decrement is
    below rounding) brings only the gradient the trace reads: the Hessian
    there is read by nobody (no row is perfectly fitted, so no separation
    check), and no pass follows before the results'."""
    y, exog = _design(k=2, seed=4)
    if flips:
        y = np.where(np.random.default_rng(0).random(y.size) < 0.2, 1 - y, y)
        model = ps.LabelFlipPolyhedralLogit(y, exog, k=2)
    else:
        model = ps.PolyhedralMixtureLogit(y, exog, k=2)
    # one run: the last pass before the results' is then that run's last step
    asked, fit = _passes(model, monkeypatch, chunksize=999, reseat=0)
    assert fit.mle_retvals["message"].startswith("converged (Newton decrement")
    last_step, results = asked[-2:]
    assert "confusion" in results  # the results' one pass
    assert "grad" in last_step and not {"hess", "qhess"} & last_step


def test_each_run_by_blocks_prefetches_its_own_m_steps_hessian(monkeypatch):
    """Several starts with gradient M-steps: a run's passes over blocks bring
    no Hessian the run does not read, whatever the run before it (ending in
    Newton steps) asked for last. As many Hessians as in memory, which
    computes each when asked (it was 68 against 18)."""
    y, exog = _design(k=2, seed=4)
    model = ps.PolyhedralMixtureLogit(y, exog, k=2)
    settings = {"mstep": "gradient", "n_init": 3, "init": "random"}
    # the starts alone: the penalty-path move's line searches on blocks
    # bring Hessians with trials it rejects, as every Newton phase's may
    settings |= {"maxiter": 2000, "random_state": 0, "reseat": 0}
    counts = []
    for chunksize in (None, 999):
        asked, _ = _passes(model, monkeypatch, chunksize=chunksize, **settings)
        counts.append(sum(len({"hess", "qhess"} & need) for need in asked))
    assert counts[1] <= counts[0]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("variant", ["soft", "hard", "flips"])
@pytest.mark.parametrize("layout", ["blocks", "slabs", "slabbed blocks"])
def test_block_sums_equal_in_memory_problem(variant, layout, weighted, monkeypatch):
    """Every question the engine asks has the same answer from one in-memory
    block and from row blocks (or the design by slabs, or blocks cut into
    slabs), for every objective."""
    y, exog = _design(nobs=1500, k=3, seed=5)
    y_pm = 2.0 * y - 1.0
    scaling = DesignScaling.from_exog(exog)
    gate = HardGate() if variant == "hard" else SoftGate(2.0)
    spec = ModelSpec(3, gate, flips=variant == "flips")
    ridge = np.full(spec.n_params(exog.shape[1]), 2.0)
    # frequency weights, zeros among them
    freq = np.random.default_rng(2).integers(0, 4, y.size) * 1.0 if weighted else None
    whole = Problem(InMemoryRows(exog, y_pm, scaling, weights=freq), spec, ridge)
    monkeypatch.setattr(_objectives, "_SLAB_BYTES", 0)  # slabs of 1024 rows
    if layout == "slabs":
        rows = InMemoryRows(exog, y_pm, scaling, weights=freq, k=3)
        assert rows.single and len(rows.slabs()) == 2  # 1024 and 476 rows
    else:
        # 256-row blocks, or one block of all 1500 rows cut into slabs
        chunksize = 256 if layout == "blocks" else 1500
        rows = InMemoryRows(exog, y_pm, scaling, chunksize=chunksize, weights=freq)
    blocks = Problem(rows, spec, ridge)
    rng = np.random.default_rng(1)
    base, trial = rng.normal(size=(2, ridge.size))
    for problem in (whole, blocks):
        terms = problem.terms(base)
        problem.gradient(base, terms)  # the engine's order: the iterate first
        trial_terms = problem.terms(trial)
        problem.values = (
            problem.objective_value(base, terms),
            problem.gradient(base, terms),
            problem.neg_hessian(terms),
            problem.neg_q_hessian(terms),
            problem.surrogate(trial, trial_terms, terms),
            problem.surrogate(base, terms, terms),
            problem.score_change(terms, trial_terms),
            problem.count_perfect(terms),
            problem.gate_share(base),
            problem.max_abs_move(trial),
            problem.noise_share(terms) if spec.flips else 0.0,
        )
        sums = problem.data_sums(problem.terms(base), scaling, meat=True, gram=True)
        meat = sums.meat_root.T @ sums.meat_root  # a root is one of many
        problem.values += (sums.llf, meat, sums.score_gram, sums.confusion)
    for got, expected in zip(blocks.values, whole.values, strict=True):
        assert_allclose(got, expected, rtol=1e-11, atol=1e-9)
    for got, expected in zip(
        blocks.responsible_grams(blocks.terms(base)),
        whole.responsible_grams(whole.terms(base)),
        strict=True,
    ):
        assert_allclose(got, expected, rtol=1e-11, atol=1e-9)


def test_auto_chunksize_is_about_32_megabytes():
    rows = auto_chunksize(21, 3)
    per_row = 8 * (2 * 21 + 6 + 24)  # rows, K (K + 1) / 2 pairs, 8 K-vectors
    assert 30 * 2**20 <= rows * per_row <= 32 * 2**20
    assert auto_chunksize(10_000, 50) == 1024


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunksize": 0}, "chunksize must be an integer >= 1"),
        ({"chunksize": "big"}, "chunksize"),
        ({"chunksize": 100, "method": "bfgs"}, "use method='em'"),
        (
            {"chunksize": 100, "cov_type": "cluster", "cov_kwds": {"groups": [0]}},
            "cov_type='cluster' needs every observation",
        ),
    ],
)
def test_bad_chunksize_is_a_clear_error(triangle, kwargs, message):
    model, _ = triangle
    with pytest.raises(ValueError, match=message):
        model.fit(**kwargs)


def test_restarts_that_tie_report_the_same_run_by_blocks():
    """Three starts end at one maximum, equal to rounding, which differs
    between the rows in memory and by blocks: both report the first start's
    run (by blocks it reported another, with its own iterations)."""
    data, _ = ps.simulate_polyhedron(2000, d=2, k=3, noise=0.03, random_state=1)
    model = ps.plume("y ~ x1 + x2", data, k=3)
    whole = model.fit(n_init=3, random_state=5)
    blocks = model.fit(n_init=3, random_state=5, chunksize=300)
    spread = np.ptp(whole.mle_retvals["restarts_llf"])
    assert spread < 1e-8 * abs(whole.llf)  # the starts tie
    assert blocks.mle_retvals["steps"] == whole.mle_retvals["steps"]
    assert_allclose(blocks.llf_history, whole.llf_history, rtol=1e-10)
