"""Fits by statsmodels' own optimisers (``fit(method="newton" | "bfgs" | ...)``),
directly on the observed log-likelihood with the analytic score and Hessian,
their stop checked by the engine's tests (a saddle, a stop short of the
maximum, separation)."""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.base.model import LikelihoodModel
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from ._diagnostics import DECREMENT_LIMIT
from ._em import separating
from ._fitting import as_rng, build_problem, user_start
from ._parallel import FitProgress
from ._start import make_start, start_methods

__all__ = ["OPTIMIZER_OPTIONS", "fit_direct"]

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
    :class:`~plumestats._parallel.FitProgress`)."""
    _check_optimizer_options(method, optimizer_kwargs)
    problem, scaling = build_problem(model, 0.0)
    start_params = _start_params(
        model, problem, scaling, start_params, init, random_state
    )
    start_llf = model.loglike(start_params)
    progress = progress if progress is not None else FitProgress(False)
    progress.start(1, problem)
    arguments = {
        "start_params": start_params,
        "method": method,
        "maxiter": maxiter,
        "disp": disp,
        # the covariance is computed by the results, where it is best conditioned
        "skip_hessian": True,
        "retall": retall,
        **optimizer_kwargs,
    }
    optimizer_retvals, params, n_iterates, singular = _optimize(
        model, arguments, callback, progress
    )
    progress.run_done()
    final_llf = model.loglike(params)
    internal = scaling.to_internal(params.reshape(model.k, -1)).ravel()
    retvals = _direct_retvals(
        problem,
        internal,
        method,
        optimizer_retvals,
        n_iterates=n_iterates,
        singular=singular,
        llfs=(start_llf, final_llf),
    )
    return problem, scaling, internal, retvals


def _check_optimizer_options(method: str, optimizer_kwargs: dict) -> None:
    """Refuse the options ``method`` does not take (statsmodels only warns)."""
    unknown = set(optimizer_kwargs) - set(OPTIMIZER_OPTIONS[method])
    if unknown:
        raise TypeError(
            f"fit(method={method!r}) got unexpected arguments {sorted(unknown)}; "
            f"statsmodels' {method} accepts {list(OPTIMIZER_OPTIONS[method])}"
        )


def _start_params(model, problem, scaling, start_params, init, random_state):
    """The user's start values (their shape checked), or the engine's first
    start method's, in the user's coordinates."""
    if start_params is None:
        internal = make_start(
            start_methods(init, 1)[0],
            problem.source.design,
            problem.source.y_pm,
            model.k,
            problem.metrics.penalty,
            as_rng(random_state),
            problem.source.weights,
        )
        start_params = scaling.to_user(internal.reshape(model.k, -1)).ravel()
    else:
        user_start(model, scaling, start_params)  # validates the shape
    return np.asarray(start_params, dtype=float)


def _optimize(model, arguments: dict, callback, progress):
    """Run statsmodels' optimiser: ``(its retvals, the params it stopped at,
    the number of iterations, why it failed as text or "")``."""
    # statsmodels' bfgs, cg and ncg report function and gradient calls but not
    # iterations; scipy and statsmodels' newton call the callback once per
    # iteration, so the iterates recorded give every optimiser's count (and the
    # best point reached, should plain Newton fail)
    iterates = [arguments["start_params"]]

    def record(params):
        iterates.append(np.array(params, dtype=float))
        progress.iteration(len(iterates) - 1)
        if callback is not None:
            callback(params)

    singular = ""
    try:
        with warnings.catch_warnings():
            # the results warn with what plumestats' checks add (separation, a
            # saddle, the reason); statsmodels' own notice would be a second one
            warnings.filterwarnings(
                "ignore", "Maximum Likelihood optimization", ConvergenceWarning
            )
            mlefit = LikelihoodModel.fit(
                model, full_output=True, callback=record, **arguments
            )
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
    if arguments.get("retall") and "allvecs" not in optimizer_retvals:
        # lbfgs keeps no path, and a failed Newton none: the iterates recorded
        optimizer_retvals["allvecs"] = iterates
    return optimizer_retvals, params, len(iterates) - 1, singular


def _direct_retvals(
    problem, internal, method, optimizer_retvals, *, n_iterates, singular, llfs
) -> dict:
    """The engine's ``mle_retvals`` for a direct fit stopped at ``internal``,
    its stop checked by the engine's tests; ``llfs`` are the log-likelihoods
    at the start and at the end."""
    converged = bool(optimizer_retvals.get("converged", False))
    terms = problem.terms(internal)
    # statsmodels' optimisers stop on a small gradient, which a separated fit has
    # (and, stopped by maxiter, may still be climbing to infinity)
    separated = separating(problem, internal, terms)
    # ... and so has a saddle (from identical experts, say), and their tolerances
    # can stop them short of the maximum: the diagnostics' tests, asked here (the
    # hard model's maximum may sit on a kink, where neither test applies)
    settled = separated or not converged or problem.gate.kinked
    short = "" if settled else _not_a_maximum(problem, internal, terms)
    converged = converged and not separated and not short
    retvals = {
        **optimizer_retvals,
        "converged": converged,
        # the optimiser's own count where statsmodels reports one
        "iterations": int(optimizer_retvals.get("iterations", n_iterates)),
        "message": f"statsmodels '{method}' optimiser "
        + ("converged" if converged else "did not converge")
        + (" (separation: the maximum is at infinity)" if separated else "")
        + short
        + singular,
        "llf_history": np.array(llfs),
        "steps": [],
        "n_em_steps": 0,
        "n_newton_steps": 0,
        "max_abs_score": float(np.max(np.abs(problem.gradient(internal, terms)))),
        "restarts_llf": np.array([llfs[1]]),
        "restarts_converged": np.array([converged]),
        "separation": separated,
    }
    if short or singular:
        # not a matter of more iterations: the default advice would mislead
        retvals["remedy"] = (
            "Use method='em' (the default): it damps its Newton steps, escapes "
            "saddles and stops only at a maximum."
        )
    return retvals


def _not_a_maximum(problem, params: np.ndarray, terms) -> str:
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
