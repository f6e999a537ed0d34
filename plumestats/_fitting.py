"""One EM fit end to end, for every model and every row source: the problem,
start values and restarts, the re-seating moves, the best run and its
``mle_retvals``, and the canonical order of the faces.

A model with label flips is fitted in two stages, as its EM needs a PLUME fit
to start from: each PLUME run (restart or re-seating move) starts one
label-flip run on the same rows, and the best label-flip run is kept.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import logit

from ._em import EMOptions, run_em
from ._parallel import FitProgress
from ._penalty import term_metrics
from ._problem import Problem
from ._rows import InMemoryRows
from ._start import (
    START_MAX_ROWS,
    best_start,
    kept_run,
    make_start,
    reseat_faces,
    sample_rows,
    start_methods,
)
from ._validation import DEFAULT_SEED, float_vector

__all__ = [
    "as_rng",
    "best_run",
    "build_problem",
    "canonical_permutation",
    "default_start",
    "em_runs",
    "finish_retvals",
    "move_options",
    "printer",
    "user_start",
    "user_weights",
]

# per-iteration records that full_output=False leaves out of mle_retvals
_ITERATION_RECORDS = (
    "llf_history",
    "steps",
    "restarts_llf_history",
    "reseat_llf_history",
    "path_llf_history",
    "allvecs",
)


def as_rng(random_state) -> np.random.Generator:
    if random_state is None:
        return np.random.default_rng(DEFAULT_SEED)
    if isinstance(random_state, np.random.Generator):
        return random_state
    try:
        # a flag is no seed; a RandomState would be shared with the caller by
        # numpy >= 2 and is refused by older numpy: refused on every version
        if isinstance(random_state, (bool, np.bool_, np.random.RandomState)):
            raise TypeError
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "random_state must be None, a non-negative integer or a numpy "
            f"Generator; got {random_state!r}"
        ) from exc


def build_problem(model, alpha: float, chunksize: int | None = None):
    """The engine's problem on the model's rows, standardised, with the penalty.

    The rows are the model's Dask partitions, or its in-memory design: as one
    block (evaluated by slabs of rows when it is large,
    :func:`~plumestats._objectives.slab_rows`), or by blocks of ``chunksize``
    rows. The L2 penalty is ``nobs * alpha / 2`` times the sum of squared
    slopes on the standardised features (intercepts and the flip rate are not
    penalised), i.e. statsmodels' per-observation convention
    ``L / N - alpha/2 ||b||^2``; a formula term of several columns counts
    ``b_T' C_T b_T``, its columns' correlation ``C_T`` (so that a factor's
    penalty does not depend on its reference level, :mod:`plumestats._penalty`).
    """
    source = model._row_source
    if source is None:
        source = InMemoryRows(
            model.exog,
            model._y_inside,
            chunksize=chunksize,
            weights=model.freq_weights,
            k=model.k,
        )
    scaling = source.scaling
    metrics = term_metrics(model, source, scaling.intercept_index)
    return _penalised(source, model.spec, metrics, alpha), scaling


def _penalised(source, spec, metrics, alpha: float) -> Problem:
    """The problem on ``source`` with the L2 penalty ``alpha`` (per observation)."""
    spec = spec.with_penalty(alpha)
    ridge = metrics.penalty.scaled(source.weight_sum * alpha)
    return Problem(source, spec, ridge.tiled(spec.k, spec.n_extra), metrics)


# The penalty (per observation) of the fit a path move starts from: so strong
# that few maxima are left. 1, 10 and 100 reached the best-known maxima at
# the same rates on heart, pima and ILPD at K = 2 and 3
# (docs/benchmarks/learned.md, "A start from a strong penalty").
PATH_ALPHA = 1.0
# The hand-over to Newton of the moves' runs (docs/benchmarks/learned.md,
# "An earlier hand-over in the moves"); the starts' runs keep the fit's.
MOVE_EM_TOL = 1e-2


def move_options(options: EMOptions) -> EMOptions:
    """The moves' runs: as the fit's, but handing over to Newton at a
    relative change of :data:`MOVE_EM_TOL` (or the fit's ``em_tol``, if
    larger). A move's run only has to find its basin: on heart, pima,
    ionosphere and ILPD at K = 2 to 4 (20 seeds each, alpha = 1e-3) the
    default reached the best-known maximum as often or more often (heart at
    K = 4: 8 of 20 fits against 0) in 10 to 25% less time; the starts' runs,
    and so one-start fits, are unchanged (an earlier hand-over there lands
    lower on pima), as are the label-flip runs started from the moves (not
    measured with it)."""
    return replace(options, em_tol=max(options.em_tol, MOVE_EM_TOL))


def _path_moves(plume: Problem, start, current, options, mstep, disp) -> list:
    """The penalty-path move: the EM run at the fit's penalty from the
    maximum at :data:`PATH_ALPHA` that ``start`` leads to (a continuation in
    the penalty). On heart at K = 3 it reached the best-known maximum from
    every seed, where 1 default fit in 20 had; on ionosphere it ends far
    below, so like the re-seating moves it is kept only if it raises the
    objective (:func:`best_run`). None is made when the fit's penalty is
    that strong; nor without a penalty (at alpha = 0 it was made in 25 of
    30 fits of heart, pima and ILPD and kept in none, a 1.4 to 2 times
    slower fit); nor when the ``current`` best run found separation, where
    there is no finite maximum to look for."""
    if not 0.0 < plume.spec.alpha < PATH_ALPHA or current.separated:
        return []
    shrunk = _shrunk(plume, start, options, mstep, disp)
    return [run_em(plume, shrunk, options, mstep)]


def _shrunk(plume: Problem, start, options, mstep: str, disp: bool) -> np.ndarray:
    """The maximum at :data:`PATH_ALPHA` that EM reaches from ``start`` (its
    problem, with its own row caches, is gone before the next run). With
    ``disp`` a line says where it ended: its iterations, printed before the
    move's own, maximise another objective."""
    strong = _penalised(plume.source, plume.spec, plume.metrics, PATH_ALPHA)
    trace = run_em(strong, start, options, mstep)
    plume.passes += strong.passes  # the fit's passes over the data, all runs
    if disp:
        print(
            f"Penalty-path move, its start at alpha = {PATH_ALPHA:g}: objective "
            f"= {trace.objective:.10g} ({trace.message})"
        )
    return trace.params


def _plume_stage(problem: Problem) -> Problem:
    """The same rows and penalty without label flips (the first stage)."""
    if not problem.spec.flips:
        return problem
    spec = replace(problem.spec, flips=False)
    ridge = problem.ridge.head(problem.n_weights)
    return Problem(problem.source, spec, ridge, problem.metrics)


def start_sample(problem: Problem, init: str, rng):
    """The rows start values are computed from, with their outcomes and
    frequency weights: what :func:`make_start` would draw from the whole
    design (the same random numbers), gathered from the row blocks."""
    source = problem.source
    if source.single:
        return source.design, source.y_pm, source.weights
    if init == "random":  # needs no data
        return np.empty((0, problem.n_cols)), np.empty(0), None
    # among the rows in the fit (weight > 0), as sample_rows draws them
    rows = np.arange(problem.nobs)
    if source.weights is not None:
        rows = np.flatnonzero(np.asarray(source.weights) > 0)
    if rows.size > START_MAX_ROWS:
        rows = rows[np.sort(rng.choice(rows.size, START_MAX_ROWS, replace=False))]
    return source.take(rows)


def default_start(model) -> np.ndarray:
    """The model's ``start_params``: ``init="kmeans"``, seed 0, user units."""
    problem, scaling = build_problem(model, 0.0)
    rng = as_rng(None)
    exog, y_pm, weights = start_sample(problem, "kmeans", rng)
    internal = make_start(
        "kmeans", exog, y_pm, model.k, problem.metrics.penalty, rng, weights
    )
    return scaling.to_user(internal.reshape(model.k, -1)).ravel()


def user_start(model, scaling, start_params) -> np.ndarray:
    """``start_params`` (user units), checked, in the engine's coordinates."""
    start = float_vector(start_params, "start_params")
    if start.shape != (model.nparams,):
        raise ValueError(
            f"start_params must have {model.nparams} values ({model._params_layout}"
            f"), got shape {start.shape}"
        )
    if not np.all(np.isfinite(start)):
        raise ValueError(
            f"start_params must be finite; {int(np.sum(~np.isfinite(start)))} values "
            "are NaN or infinite"
        )
    size = model.k * model.k_vars
    internal = scaling.to_internal(start[:size].reshape(model.k, -1)).ravel()
    largest = float(np.max(np.abs(internal)))
    if largest > _MAX_START_WEIGHT:
        raise ValueError(
            f"start_params are far beyond the scale of the data: in standardised "
            f"units their largest weight is {largest:.3g}, so every fitted "
            "probability is 0 or 1 to rounding and no optimiser can move. Use "
            "values on the scale of a fit (e.g. another fit's params), or leave "
            "start_params out"
        )
    return np.append(internal, start[size:])


# a weight of a standardised feature beyond which the start is no fit's: the
# sigmoid saturates at scores near 40, and standardised features are O(1)
_MAX_START_WEIGHT = 1e6


def best_run(problem, traces, reseats=(), paths=()) -> tuple[np.ndarray, dict]:
    """The run with the best objective (of :func:`em_runs`: restarts,
    re-seating moves and the penalty-path move), and the fit's
    ``mle_retvals``: its own trace and every run's final value. A path move
    that finds separation is not kept: it would turn a fit at a regular
    maximum into one without a finite maximum, a diagnosis the starts and
    the moves did not make."""
    best = kept_run(best_start(traces), reseats)
    best = kept_run(best, [path for path in paths if not path.separated])
    retvals = {
        "converged": best.converged,
        "iterations": best.n_iter,
        "message": best.message,
        "llf_history": np.asarray(best.llf_history),
        "steps": list(best.steps),
        "n_em_steps": best.n_em,
        "n_newton_steps": best.n_newton,
        "max_abs_score": best.max_abs_score,
        "restarts_llf": np.array([trace.objective for trace in traces]),
        "restarts_converged": np.array([trace.converged for trace in traces]),
        "restarts_llf_history": [np.asarray(trace.llf_history) for trace in traces],
        "reseat_llf": np.array([trace.objective for trace in reseats]),
        "reseat_llf_history": [np.asarray(trace.llf_history) for trace in reseats],
        "path_llf": np.array([trace.objective for trace in paths]),
        "path_llf_history": [np.asarray(trace.llf_history) for trace in paths],
        # how far apart the starts ended: more than RESTART_SPREAD_LIMIT says
        # that the surface has several maxima and a higher one may be unfound
        "restarts_spread": float(
            max(trace.objective for trace in traces)
            - min(trace.objective for trace in traces)
        ),
        # the engine's own verdict; the results add the perfectly fitted rows' test
        "separation": best.separated,
    }
    if problem.spec.flips:
        retvals["boundary"] = best.boundary
    if best.path is not None:
        retvals["allvecs"] = best.path
    if not problem.source.single:
        # every run's passes over the data (one map-reduce each), starts included
        retvals["data_passes"] = problem.passes
    return best.params, retvals


def em_runs(
    model,
    *,
    start_params,
    options,
    mstep,
    init,
    n_init,
    random_state,
    alpha,
    chunksize=None,
    disp=False,
    reseat=0,
    progress=None,
    callback=None,
):
    """EM from one or several starts, then up to ``reseat`` re-seating moves
    from the best (:mod:`plumestats._start`) and the penalty-path move from
    the first start (:func:`_path_moves`; with ``reseat``, as both are
    moves): the problem, its scaling, one trace per start, one per
    re-seating move and one per path move (:func:`best_run` picks the best).
    With label flips, each is the label-flip run started from a PLUME run.

    With ``disp`` (and several starts) a line after each run says where it
    ended. ``progress`` (a :class:`~plumestats._parallel.FitProgress`, whose
    callback ``options`` carries) counts the runs on a bar. ``callback`` is
    the user's, called as statsmodels' optimisers call it, with the
    parameters after each iteration in the user's units.
    """
    problem, scaling = build_problem(model, alpha, chunksize)
    if callback is not None:
        options = replace(
            options,
            callback=_user_callback(options.callback, callback, model.k, scaling),
        )
    progress = progress if progress is not None else FitProgress(False)
    plume = _plume_stage(problem)
    rng = as_rng(random_state)
    if start_params is not None:
        starts = [user_start(model, scaling, start_params)]
        if plume is not problem:  # a label-flip start: one label-flip run
            progress.start(1, problem)
            traces = _runs(problem, starts, options, mstep, progress, disp)
            return problem, scaling, traces, [], []
    else:
        starts = _starts(model, plume, init, n_init, rng)
    progress.start(len(starts), plume)
    traces = _runs(plume, starts, options, mstep, progress, disp)
    reseats, paths = [], []
    if reseat and model.k > 1:
        best = best_start(traces)
        # the moves read the rows the starts would (in memory or by blocks alike)
        exog, y_pm, weights = start_sample(plume, "kmeans", rng)
        sample = sample_rows(exog, y_pm, rng, weights)
        moves = move_options(options)
        progress.set_stage("re-seating")
        reseats = reseat_faces(plume, sample, best, moves, mstep, reseat)
        _report(disp, "Re-seating move", reseats)
        progress.set_stage("penalty path")
        current = kept_run(best, reseats)
        paths = _path_moves(plume, starts[0], current, moves, mstep, disp)
        _report(disp, "Penalty-path move", paths)
    if plume is problem:
        return problem, scaling, traces, reseats, paths
    runs = _flip_stage(
        model, problem, [traces, reseats, paths], options, mstep, progress
    )
    problem.passes += plume.passes  # the PLUME stage's, for data_passes
    return problem, scaling, *runs


def _starts(model, plume: Problem, init: str, n_init: int, rng) -> list:
    """The ``n_init`` start vectors of kind ``init`` (engine coordinates)."""
    starts = []
    for method in start_methods(init, n_init):
        exog, y_pm, weights = start_sample(plume, method, rng)
        starts.append(
            make_start(method, exog, y_pm, model.k, plume.metrics.penalty, rng, weights)
        )
    return starts


def _flip_stage(model, problem, plume_runs, options, mstep, progress) -> list:
    """One label-flip run from each PLUME run, the flip rate starting at the
    model's ``flip_start``: the flips can move the faces to another local
    maximum, so the restarts are compared on the label-flip likelihood."""
    eta = float(logit(2.0 * model._flip_start))
    runs = []
    progress.more_runs(sum(len(group) for group in plume_runs), "label flips")
    for group in plume_runs:
        starts = [np.append(trace.params, eta) for trace in group]
        runs.append(_runs(problem, starts, options, mstep, progress, False))
    return runs


def _runs(problem, starts, options, mstep, progress, disp) -> list:
    traces = []
    for number, start in enumerate(starts, 1):
        traces.append(run_em(problem, start, options, mstep))
        progress.run_done(traces[-1])
        if disp and len(starts) > 1:
            print(
                f"EM run {number}/{len(starts)}: objective = "
                f"{traces[-1].objective:.10g} ({traces[-1].message})"
            )
    return traces


def _report(disp: bool, what: str, traces) -> None:
    if disp:
        for number, trace in enumerate(traces, 1):
            print(
                f"{what} {number}: objective = {trace.objective:.10g} ({trace.message})"
            )


def canonical_permutation(gate_mass: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The order of the faces by decreasing gate mass (ties: by weights)."""
    return np.lexsort((*weights.T[::-1], -gate_mass))


def finish_retvals(retvals: dict, to_user, full_output: bool) -> None:
    """``mle_retvals`` as the results show them: the path of ``retall``
    mapped by ``to_user`` (to the user's units, the faces in their final
    order), and without the per-iteration records unless ``full_output``."""
    if not full_output:
        for key in _ITERATION_RECORDS:
            retvals.pop(key, None)
    elif "allvecs" in retvals:
        # statsmodels' newton starts its history with a scalar inf placeholder
        retvals["allvecs"] = [
            to_user(np.asarray(vector, dtype=float))
            for vector in retvals["allvecs"]
            if np.ndim(vector) == 1
        ]


def user_weights(k: int, order, scaling=None, n_extra: int = 0):
    """Maps an engine parameter vector (``scaling``: in standardised units;
    ``None``: already in the user's) to the user's, faces in ``order`` and
    the extras last."""

    def to_user(vector: np.ndarray) -> np.ndarray:
        size = vector.size - n_extra
        weights = vector[:size].reshape(k, -1)
        if scaling is not None:
            weights = scaling.to_user(weights)
        return np.append(weights[order].ravel(), vector[size:])

    return to_user


def _user_callback(engine_callback, user_callback, k: int, scaling):
    """The engine's callback (or None), then ``user_callback(params)`` with the
    run's parameters in the user's units (faces in the run's own order; a
    label-flip run's ``flip_logit`` last)."""

    def callback(iteration, value, kind, params):
        if engine_callback is not None:
            engine_callback(iteration, value, kind, params)
        n_extra = params.size - k * scaling.scale.size
        to_user = user_weights(k, np.arange(k), scaling, n_extra)
        user_callback(to_user(params))

    return callback


def printer():
    """A callback that prints one line per iteration, like statsmodels' disp
    (the user's own callback is chained by :func:`em_runs`)."""

    def report(iteration, value, kind, params):
        print(f"iter {iteration:4d}  {kind:<8s}  objective = {value:.10g}")

    return report
