"""Orchestration of a fit: start values, restarts, the optimiser (EM or one of
statsmodels' own), canonical order, diagnostics, and the results object."""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.base.model import LikelihoodModel
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    PerfectSeparationWarning,
)

from ._blocks import (
    BlockProblem,
    InMemoryBlocks,
    in_memory_moments,
    scaling_from_moments,
)
from ._diagnostics import DECREMENT_LIMIT
from ._em import PERFECT_LOGPROB, Problem, run_em, separating
from ._progress import FitProgress
from ._reseat import reseat_faces
from ._scaling import DesignScaling
from ._start import _START_MAX_ROWS, make_start, sample_rows, start_methods
from ._validation import float_vector

__all__ = [
    "best_run",
    "canonical_order",
    "canonical_permutation",
    "em_runs",
    "finish_retvals",
    "fit_direct",
    "user_weights",
]

# Without a seed, fits are still reproducible: a statistician expects the same data
# to give the same table. Pass random_state to vary the restarts.
_DEFAULT_SEED = 0


def as_rng(random_state) -> np.random.Generator:
    if random_state is None:
        return np.random.default_rng(_DEFAULT_SEED)
    if isinstance(random_state, np.random.Generator):
        return random_state
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "random_state must be None, a non-negative integer or a numpy "
            f"Generator; got {random_state!r}"
        ) from exc


# the options each statsmodels optimiser accepts (statsmodels only warns on others)
OPTIMIZER_OPTIONS = {
    "newton": ("tol", "ridge_factor"),
    "bfgs": ("gtol", "norm", "epsilon"),
    "lbfgs": ("m", "pgtol", "factr", "maxfun", "epsilon", "approx_grad", "bounds"),
    "ncg": ("fhess_p", "avextol", "epsilon"),
    "cg": ("gtol", "norm", "epsilon"),
    "nm": ("xtol", "ftol", "maxfun"),
    "powell": ("xtol", "ftol", "maxfun", "start_direc"),
}


def build_problem(
    model, alpha: float, chunksize: int | None = None
) -> tuple[Problem | BlockProblem, DesignScaling]:
    """The engine's problem on the standardised design.

    The L2 penalty is ``nobs * alpha / 2`` times the sum of squared slopes on the
    standardised features (intercepts are not penalised), i.e. statsmodels'
    per-observation convention ``L / N - alpha/2 ||b||^2``.

    With ``chunksize`` (or a model on Dask collections) the problem takes its sums
    over row blocks (:mod:`plumestats._blocks`); otherwise it holds the whole
    standardised design.
    """
    source = getattr(model, "_row_source", None)
    if source is not None:
        scaling = source.scaling
    elif chunksize is not None:
        moments = in_memory_moments(model.exog, model._y_inside, chunksize)
        scaling = scaling_from_moments(moments)
        source = InMemoryBlocks(
            model.exog, model._y_inside, scaling, chunksize, moments=moments
        )
    else:
        scaling = DesignScaling.from_exog(model.exog)
    slope_ridge = np.full(model.k_vars, model.nobs * alpha)
    if scaling.intercept_index is not None:
        slope_ridge[scaling.intercept_index] = 0.0
    ridge = np.tile(slope_ridge, model.k)
    if source is not None:
        problem = BlockProblem(source, model.k, model.gamma, ridge, model._hard)
        return problem, scaling
    problem = Problem(
        scaling.transform_exog(model.exog),
        model._y_inside,
        model.k,
        model.gamma,
        ridge=ridge,
        hard=model._hard,
    )
    return problem, scaling


def start_sample(problem, init, rng):
    """The rows start values are computed from: what :func:`make_start` would
    draw from the whole design (the same random numbers), gathered from the row
    blocks."""
    if isinstance(problem, Problem):
        return problem.exog, problem.y_pm
    if init == "random":  # needs no data
        return np.empty((0, problem.n_cols)), np.empty(0)
    if problem.nobs > _START_MAX_ROWS:
        rows = np.sort(rng.choice(problem.nobs, _START_MAX_ROWS, replace=False))
    else:
        rows = np.arange(problem.nobs)
    return problem.source.take(rows)


def _user_start(model, scaling, start_params):
    start = float_vector(start_params, "start_params")
    if start.shape != (model.nparams,):
        raise ValueError(
            f"start_params must have {model.nparams} values (k * exog columns), "
            f"got shape {start.shape}"
        )
    if not np.all(np.isfinite(start)):
        raise ValueError(
            f"start_params must be finite; {int(np.sum(~np.isfinite(start)))} values "
            "are NaN or infinite"
        )
    internal = scaling.to_internal(start.reshape(model.k, -1)).ravel()
    largest = float(np.max(np.abs(internal)))
    if largest > _MAX_START_WEIGHT:
        raise ValueError(
            f"start_params are far beyond the scale of the data: in standardised "
            f"units their largest weight is {largest:.3g}, so every fitted "
            "probability is 0 or 1 to rounding and no optimiser can move. Use "
            "values on the scale of a fit (e.g. another fit's params), or leave "
            "start_params out"
        )
    return internal


# a weight of a standardised feature beyond which the start is no fit's: the
# sigmoid saturates at scores near 40, and standardised features are O(1)
_MAX_START_WEIGHT = 1e6


def best_run(problem, traces, reseats=()) -> tuple[np.ndarray, dict]:
    """The run with the best objective (of :func:`em_runs`: restarts and
    re-seating moves), and the fit's ``mle_retvals``: its own trace and every
    run's final value."""
    best = max([*traces, *reseats], key=lambda trace: trace.objective)
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
    }
    if best.path is not None:
        retvals["allvecs"] = best.path
    # the engine's own verdict; the results add the perfectly fitted rows' test
    retvals["separation"] = best.separated
    if isinstance(problem, BlockProblem):
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
):
    """EM from one or several starts, then up to ``reseat`` re-seating moves
    from the best (:mod:`plumestats._reseat`): the problem, its scaling, one
    trace per start and one per move (:func:`best_run` picks the best).

    With ``disp`` (and several starts) a line after each run says where it
    ended, so a long multi-start fit shows its progress. ``progress`` (a
    :class:`~plumestats._progress.FitProgress`, whose callback ``options``
    carries) counts the runs on a bar.
    """
    problem, scaling = build_problem(model, alpha, chunksize)
    rng = as_rng(random_state)
    if start_params is not None:
        starts = [_user_start(model, scaling, start_params)]
    else:
        starts = []
        for method in start_methods(init, n_init):
            exog, y_pm = start_sample(problem, method, rng)
            starts.append(
                make_start(method, exog, y_pm, model.k, scaling.intercept_index, rng)
            )
    if isinstance(problem, BlockProblem) and mstep != "newton":
        problem.prefetch_hessian(None)  # only Newton M-steps use Q's Hessian
    progress = progress if progress is not None else FitProgress(False)
    progress.start(len(starts), problem)
    traces = []
    for number, start in enumerate(starts, 1):
        traces.append(run_em(problem, start, options, mstep))
        progress.run_done(traces[-1])
        if disp and len(starts) > 1:
            print(
                f"EM run {number}/{len(starts)}: objective = "
                f"{traces[-1].objective:.10g} ({traces[-1].message})"
            )
    reseats = []
    if reseat and model.k > 1:
        best = max(traces, key=lambda trace: trace.objective)
        # the moves read the rows the starts would (in memory or by blocks alike)
        sample = sample_rows(*start_sample(problem, "kmeans", rng), rng)
        progress.set_stage("re-seating")
        reseats = reseat_faces(
            problem, sample, best, options, mstep, scaling.intercept_index, reseat
        )
        if disp:
            for number, trace in enumerate(reseats, 1):
                print(
                    f"Re-seating move {number}: objective = {trace.objective:.10g} "
                    f"({trace.message})"
                )
    return problem, scaling, traces, reseats


def fit_direct(
    model,
    *,
    method,
    start_params,
    maxiter,
    disp,
    callback,
    init,
    random_state,
    optimizer_kwargs,
    retall=False,
    progress=None,
):
    """One of statsmodels' optimisers directly on the observed log-likelihood,
    using the analytic score and Hessian (one run on ``progress``'s bar, a
    :class:`~plumestats._progress.FitProgress`)."""
    unknown = set(optimizer_kwargs) - set(OPTIMIZER_OPTIONS[method])
    if unknown:
        raise TypeError(
            f"fit(method={method!r}) got unexpected arguments {sorted(unknown)}; "
            f"statsmodels' {method} accepts {list(OPTIMIZER_OPTIONS[method])}"
        )
    problem, scaling = build_problem(model, 0.0)
    if start_params is None:
        internal = make_start(
            start_methods(init, 1)[0],
            problem.exog,
            problem.y_pm,
            model.k,
            scaling.intercept_index,
            as_rng(random_state),
        )
        start_params = scaling.to_user(internal.reshape(model.k, -1)).ravel()
    else:
        _user_start(model, scaling, start_params)  # validates the shape
    start_params = np.asarray(start_params, dtype=float)
    start_llf = model.loglike(start_params)
    # statsmodels' bfgs, cg and ncg report function and gradient calls but not
    # iterations; scipy and statsmodels' newton call the callback once per
    # iteration, so the iterates recorded give every optimiser's count (and the
    # best point reached, should plain Newton fail)
    iterates = [start_params]
    progress = progress if progress is not None else FitProgress(False)
    progress.start(1, problem)

    def record(params):
        iterates.append(np.array(params, dtype=float))
        progress.iteration(len(iterates) - 1)
        if callback is not None:
            callback(params)

    arguments = {
        "start_params": start_params,
        "method": method,
        "maxiter": maxiter,
        "disp": disp,
        "callback": record,
        # the covariance is computed by the results, where it is best conditioned
        "skip_hessian": True,
        "retall": retall,
        **optimizer_kwargs,
    }
    singular = ""
    try:
        with warnings.catch_warnings():
            # the results warn with what plumestats' checks add (separation, a
            # saddle, the reason); statsmodels' own notice would be a second one
            warnings.filterwarnings(
                "ignore", "Maximum Likelihood optimization", ConvergenceWarning
            )
            mlefit = LikelihoodModel.fit(model, full_output=True, **arguments)
        optimizer_retvals = dict(mlefit.mle_retvals)
        params = np.asarray(mlefit.params, dtype=float)
    except np.linalg.LinAlgError:
        # statsmodels' plain Newton solves with the Hessian at every step (and
        # inverts the last one whatever skip_hessian says): undamped steps from
        # a poor start can run off to where it is exactly singular
        optimizer_retvals = {"converged": False}
        finite = [p for p in iterates if np.all(np.isfinite(p))]
        params = max(finite, key=model.loglike)
        singular = (
            " (it met an exactly singular Hessian: its undamped Newton steps did "
            "not settle)"
        )
    progress.run_done()
    final_llf = model.loglike(params)
    internal = scaling.to_internal(params.reshape(model.k, -1)).ravel()
    converged = bool(optimizer_retvals.get("converged", False))
    terms = problem.terms(internal)
    # statsmodels' optimisers stop on a small gradient, which a separated fit has
    separated = converged and separating(problem, internal, terms)
    # ... and so has a saddle (from identical experts, say), and their tolerances
    # can stop them short of the maximum: the diagnostics' tests, asked here (the
    # hard model's maximum may sit on a kink, where neither test applies)
    settled = separated or not converged or problem.hard
    short = "" if settled else _not_a_maximum(problem, internal, terms)
    converged = converged and not separated and not short
    retvals = {
        **optimizer_retvals,
        "converged": converged,
        # the optimiser's own count where statsmodels reports one
        "iterations": int(optimizer_retvals.get("iterations", len(iterates) - 1)),
        "message": f"statsmodels '{method}' optimiser "
        + ("converged" if converged else "did not converge")
        + (" (separation: the maximum is at infinity)" if separated else "")
        + short
        + singular,
        "llf_history": np.array([start_llf, final_llf]),
        "steps": [],
        "n_em_steps": 0,
        "n_newton_steps": 0,
        "max_abs_score": float(
            np.max(np.abs(problem.gradient(internal, problem.terms(internal))))
        ),
        "restarts_llf": np.array([final_llf]),
        "restarts_converged": np.array([converged]),
        "separation": separated,
    }
    if short or singular:
        # not a matter of more iterations: the default advice would mislead
        retvals["remedy"] = (
            "Use method='em' (the default): it damps its Newton steps, escapes "
            "saddles and stops only at a maximum."
        )
    return problem, scaling, internal, retvals


def _not_a_maximum(problem: Problem, params: np.ndarray, terms) -> str:
    """Why a point where a statsmodels optimiser stopped is no maximum of L, or
    ``""`` when it is one (or a flat ridge, which the results report).

    In the engine's standardised coordinates: a negative eigenvalue of ``-H``
    beyond rounding is a saddle; with ``-H`` positive definite, a Newton
    decrement ``g' (-H)^{-1} g`` above the diagnostics' limit means L still
    rises by about half of it.
    """
    neg_hess = problem.neg_hessian(terms)
    eigenvalues = np.linalg.eigvalsh(0.5 * (neg_hess + neg_hess.T))
    scale = max(float(np.max(np.abs(eigenvalues))), np.finfo(float).tiny)
    if eigenvalues[0] < -1e-8 * scale:
        return (
            " (at a saddle point, not a maximum: L still rises along a direction of "
            "negative curvature, e.g. from identical experts)"
        )
    if eigenvalues[0] <= 1e-12 * scale:
        return ""
    grad = problem.gradient(params, terms)
    decrement = float(grad @ np.linalg.solve(neg_hess, grad))
    if decrement > DECREMENT_LIMIT:
        return (
            f" (stopped short of the maximum: a Newton step would still raise L by "
            f"about {decrement / 2:.3g})"
        )
    return ""


def canonical_permutation(problem: Problem, internal: np.ndarray) -> np.ndarray:
    """The order of the experts by decreasing mean gate probability (ties: by
    weights)."""
    weights = internal.reshape(problem.k, -1)
    share = problem.gate_share(internal)
    return np.lexsort((*weights.T[::-1], -share))


def canonical_order(problem: Problem, internal: np.ndarray) -> np.ndarray:
    """Reorder the experts by :func:`canonical_permutation`."""
    order = canonical_permutation(problem, internal)
    return internal.reshape(problem.k, -1)[order].ravel()


# per-iteration records that full_output=False leaves out of mle_retvals
_ITERATION_RECORDS = ("llf_history", "steps", "restarts_llf_history", "allvecs")


def finish_retvals(retvals: dict, to_user, full_output: bool) -> None:
    """``mle_retvals`` as the results show them: the path of ``retall``
    mapped by ``to_user`` (to the user's units, the experts in their final
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


def user_weights(k: int, order, scaling=None):
    """Maps an engine parameter vector (``scaling``: in standardised units;
    ``None``: already in the user's) to the user's, experts in ``order``."""

    def to_user(vector: np.ndarray) -> np.ndarray:
        weights = vector.reshape(k, -1)
        if scaling is not None:
            weights = scaling.to_user(weights)
        return weights[order].ravel()

    return to_user


def warn_if_unsettled(
    model, params, retvals, alpha, cov_ok, n_perfect: int | None = None
) -> bool:
    """Convergence and separation warnings; returns whether separation was seen.

    Separation has one warning class on every path, statsmodels'
    ``PerfectSeparationWarning``: when the engine stopped on it
    (``retvals["separation"]``: diverging weights, or a direction to infinity)
    or when, without a penalty, rows are fitted perfectly at a fit that did not
    reach a regular maximum. ``n_perfect`` (rows fitted with probability above
    ``1 - 1e-8``) comes from the row blocks' sums for a fit by blocks;
    otherwise it is counted on the whole sample here.
    """
    if n_perfect is None:
        n_perfect = int(np.sum(model.loglikeobs(params) > PERFECT_LOGPROB))
    regular = retvals["converged"] and cov_ok
    separated = bool(retvals.get("separation")) or (
        alpha == 0 and n_perfect > 0 and not regular
    )
    if separated:
        warnings.warn(
            _separation_message(model.nobs, n_perfect, alpha),
            PerfectSeparationWarning,
            stacklevel=5,
        )
    elif not retvals["converged"]:
        warnings.warn(
            f"The fit did not converge: {retvals['message']} after "
            f"{retvals['iterations']} iterations (largest |score| "
            f"{retvals['max_abs_score']:.3g}). "
            + retvals.get("remedy", _convergence_remedy(alpha, model.k)),
            ConvergenceWarning,
            stacklevel=5,
        )
    return separated


# a penalty per observation beyond this outweighs any log-likelihood gain of a
# slope (L / N is at most log 2 away from the null): every slope shrinks to 0
_OVERWHELMING_ALPHA = 1.0


def _convergence_remedy(alpha: float, k: int) -> str:
    """What to try after a fit that did not converge, given its penalty."""
    if alpha == 0:
        return (
            "Increase maxiter, or add a small L2 penalty (alpha) if the weights "
            "keep growing."
        )
    if alpha >= _OVERWHELMING_ALPHA and k > 1:
        return (
            f"alpha={alpha:g} shrinks every slope to about zero, so the {k} "
            "faces collapse onto their intercepts, which are not identified: "
            "use a smaller alpha (1e-4 to 1e-1 is the usual range) or k=1."
        )
    return "Increase maxiter."


def _separation_message(nobs: int, n_perfect: int, alpha: float) -> str:
    if n_perfect:
        seen = (
            f"{n_perfect} of {nobs} observations are fitted with probability "
            "> 1 - 1e-8 and the fit did not reach a regular maximum"
        )
    else:
        seen = "the weights grow without bound while the likelihood barely rises"
    remedy = (
        "Use an L2 penalty, e.g. fit(alpha=1e-3), or a smaller k."
        if alpha == 0
        else f"Use a larger L2 penalty than alpha={alpha:g}, or a smaller k."
    )
    return (
        f"Perfect or quasi-perfect separation: {seen}. The likelihood has no "
        "finite maximum, so the parameters are not identified and their "
        f"standard errors mean nothing. {remedy}"
    )


def printer(user_callback):
    """A callback that prints one line per iteration, like statsmodels' disp."""

    def report(iteration, value, kind):
        print(f"iter {iteration:4d}  {kind:<8s}  objective = {value:.10g}")
        if user_callback is not None:
            user_callback(iteration, value, kind)

    return report
