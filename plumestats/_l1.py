r"""L1-penalised fits, ``fit_regularized(method="l1")``: sparse faces.

The objective is statsmodels' for its discrete models'
``fit_regularized(method="l1")``, on the user's (unstandardised) parameters:

.. math::

    \min_w \; -\frac{L(w)}{N} + \frac{1}{N} \sum_j \alpha_j |w_j|,

which is ``-L + sum_j alpha_j |w_j|`` scaled by ``1/N`` (statsmodels divides
the log-likelihood and ``alpha`` by the number of observations), so ``alpha``
is in log-likelihood units: at a nonzero estimate ``|dL/dw_j| = alpha_j``.

The problem is not concave for K > 1, so the L1 fit starts from an ordinary
EM fit (the nearest maximum of L) and statsmodels' own solver,
:func:`statsmodels.base.l1_slsqp.fit_l1_slsqp`, does the L1 part: it writes
``|w_j|`` as ``u_j`` with ``-u_j <= w_j <= u_j`` (a smooth constrained
problem for SLSQP). SLSQP stops about 1e-5 short of the optimum, so the
parameters it leaves below ``size_trim_tol`` are set to exactly zero (unless
``trim_mode="off"``; ``"auto"`` trims as ``"size"``), Newton steps on the
others, their signs held, solve ``dL/dw_j = alpha_j sign(w_j)`` to rounding
(a step that carries a parameter through 0 stops it there, a projected Newton
step; a zero whose condition then fails is released and solved for), and
statsmodels' check of the
optimality conditions (``qc_tol``: ``|dL/dw_j| <= alpha_j`` at the zeros)
decides whether the fit converged. The results are the engine's
(:func:`plumestats._build.build_results`), with the zeros held fixed: their
covariance rows are NaN and the others come from the information of the
nonzero parameters only, as statsmodels' ``L1BinaryResults``.
"""

from __future__ import annotations

import warnings
from operator import itemgetter

import numpy as np
from statsmodels.base.l1_slsqp import fit_l1_slsqp
from statsmodels.base.l1_solvers_common import qc_results

from ._build import build_results
from ._fitting import build_problem
from ._msteps import cholesky_solve
from ._threads import with_fit_blas_threads
from ._validation import (
    check_choice,
    check_flag,
    check_int,
    check_positive_float,
    float_vector,
    require_estimation_data,
)

__all__ = ["L1_OPTIONS", "fit_l1", "penalty_weights"]

# statsmodels' defaults (DiscreteModel.fit_regularized and fit_l1_slsqp)
L1_OPTIONS = {
    "trim_mode": "auto",
    "auto_trim_tol": 0.01,
    "size_trim_tol": 1e-4,
    "qc_tol": 0.03,
    "acc": 1e-10,
}
# the L2 penalty of the start fit when the unpenalised one has no finite
# maximum (separation) or more parameters than observations
_START_ALPHA = 1e-3
# the optimality conditions' largest violation per observation that counts
# as rounding (dL/dw = alpha sign(w), scaled by 1/N as the solver's objective)
_KKT_ROUNDING = 1e-9
# Newton steps of the polish on the nonzero parameters (each is checked)
_POLISH_STEPS = 20
# halvings of a polish step that raises the objective
_POLISH_HALVINGS = 30


def penalty_weights(model, alpha, intercept_index: int | None) -> np.ndarray:
    """The per-parameter L1 weights ``alpha_j``.

    A scalar weighs every slope of every face; the constant column's
    coefficient in each face (``intercept_index``) and the extra parameters
    (a flip rate) get 0, as statsmodels leaves its extra parameters
    unpenalised. An array of ``model.nparams`` weights is used as given.
    """
    values = float_vector(alpha, "alpha")
    if values.ndim == 0:
        value = float(values)
        _check_weights(np.array([value]), "alpha")
        face = np.full(model.k_vars, value)
        if intercept_index is not None:
            face[intercept_index] = 0.0
        extras = np.zeros(model.nparams - model.k * model.k_vars)
        return np.concatenate([np.tile(face, model.k), extras])
    if values.shape != (model.nparams,):
        raise ValueError(
            f"alpha must be a number or an array of {model.nparams} values, one "
            f"per parameter (k={model.k} hyperplanes of {model.k_vars} "
            f"coefficients, as params); got shape {values.shape}"
        )
    _check_weights(values, "alpha")
    return values.copy()


def _check_weights(values: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        where = np.flatnonzero(bad)
        shown = ", ".join(f"[{i}] = {values[i]}" for i in where[:3])
        raise ValueError(
            f"{name} must be finite and >= 0 (an L1 weight per parameter); got "
            f"{shown}" + (f" and {where.size - 3} more" if where.size > 3 else "")
        )


def regularized_method(model, method: str | None, alpha=0, options=None) -> str:
    """``fit_regularized``'s ``method``, checked; ``None`` is statsmodels'
    default, ``"l1"``, where the model has it (PLUME's soft gate, in memory).
    Where it has not (the hard gate, label flips, Dask input) a penalty needs
    ``method="l2"`` said: its ``alpha`` is per observation, L1's is not, so
    the same number would be a penalty about N times as strong.
    statsmodels' ``refit`` is taken out of ``options`` (the other keywords):
    ``False`` is its default, ``True`` is refused."""
    require_estimation_data(model, "fit_regularized needs", "build the model again")
    if options is not None and check_flag(options.pop("refit", False), "refit"):
        raise ValueError(
            "refit=True is not available: statsmodels refits Logit on the "
            "columns its L1 fit keeps, but a zero of one face need not be "
            "another face's. Fit the model again on the columns you keep "
            "(a formula without them, or drop_cols=[...]) for unpenalised "
            "estimates"
        )
    if method is None:
        try:
            check_l1_model(model)
        except ValueError as exc:
            if np.any(np.asarray(alpha, dtype=float) != 0):
                raise ValueError(
                    f"{exc} (statsmodels' default method, 'l1', is not available "
                    "here: alpha is then per observation, as in fit(alpha=...))"
                ) from None
            return "l2"
        return "l1"
    check_choice(method, "method", ("l1", "l2"))
    return method


def check_l1_model(model) -> None:
    """The L1 fit needs the smooth likelihood of PLUME's soft gate, in memory."""
    if model.spec.hard or model.spec.flips:
        raise ValueError(
            f"fit_regularized(method='l1') is for PolyhedralMixtureLogit; "
            f"{type(model).__name__}'s likelihood has "
            + ("kinks (the hard gate)" if model.spec.hard else "a flip rate")
            + " that the L1 solver does not handle; use method='l2'"
        )
    if model._row_source is not None:
        raise ValueError(
            "fit_regularized(method='l1') needs the design in memory; a model on "
            "Dask collections fits with method='l2'"
        )


@with_fit_blas_threads
def fit_l1(
    model,
    alpha,
    *,
    start_params=None,
    maxiter: int = 1000,
    trim_mode: str = L1_OPTIONS["trim_mode"],
    auto_trim_tol: float = L1_OPTIONS["auto_trim_tol"],
    size_trim_tol: float = L1_OPTIONS["size_trim_tol"],
    qc_tol: float = L1_OPTIONS["qc_tol"],
    acc: float = L1_OPTIONS["acc"],
    qc_verbose: bool = False,
    disp: bool = False,
    callback=None,
    cov_type: str = "nonrobust",
    use_t: bool | None = None,
    full_output: bool = True,
    **start_options,
):
    """The L1-penalised fit of ``model`` (see the module docstring and
    :meth:`PolyhedralMixtureLogit.fit_regularized`); ``start_options`` go to
    the EM fit that gives the start."""
    check_l1_model(model)
    problem, scaling = build_problem(model, 0.0)
    weights = penalty_weights(model, alpha, scaling.intercept_index)
    check_choice(trim_mode, "trim_mode", ("auto", "size", "off"))
    # in any case, as fit takes it; an L1 fit's covariance is the nonrobust one
    if not (isinstance(cov_type, str) and cov_type.lower() == "nonrobust"):
        check_choice(cov_type, "cov_type", ("nonrobust",))
    cov_type = "nonrobust"
    solver = {
        "trim_mode": trim_mode,
        # statsmodels takes 0 for these (a check or a trim at the exact value)
        "auto_trim_tol": check_positive_float(
            auto_trim_tol, "auto_trim_tol", allow_zero=True
        ),
        "size_trim_tol": check_positive_float(
            size_trim_tol, "size_trim_tol", allow_zero=True
        ),
        "qc_tol": check_positive_float(qc_tol, "qc_tol", allow_zero=True),
        "qc_verbose": check_flag(qc_verbose, "qc_verbose"),
        "acc": check_positive_float(acc, "acc"),
    }
    if maxiter == "defined_by_method":  # statsmodels' default: 1000 for l1
        maxiter = 1000
    maxiter = check_int(maxiter, "maxiter")
    start, start_retvals = _start(model, start_params, start_options)
    params, retvals = _solve(model, weights, start, solver, maxiter, disp, callback)
    retvals.update(start_retvals)
    internal = scaling.to_internal(params.reshape(model.k, -1)).ravel()
    settings = {
        "optimizer": "statsmodels l1 (SLSQP)",
        "method": "l1",
        "mstep": None,
        "init": "start_params" if start_params is not None else "EM fit",
        "n_init": 1,
        "alpha": 0.0,  # the L2 penalty: none
        "alpha_l1": weights,
        **{key: solver[key] for key in L1_OPTIONS},
        "gating": model.gating,
        "maxiter": maxiter,
        "tol": None,
        "em_tol": None,
        "em_overrelax": None,
        "newton_finish": False,
        "chunksize": None,
        "reseat": 0,
    }
    options = {
        "cov_type": cov_type,
        "cov_kwds": {},
        "use_t": use_t,
        "disp": disp,
        "full_output": full_output,
    }
    return build_results(
        model, problem, scaling, internal, retvals, settings, options=options
    )


def _start(model, start_params, start_options: dict):
    """The start of the L1 solver, in the user's units: ``start_params``, or
    an EM fit (with a small L2 penalty when the unpenalised fit has no finite
    maximum). The start fit's own warnings are about that fit, not the L1
    one: its convergence is kept in ``mle_retvals["start_converged"]``."""
    if start_params is not None:
        if start_options:
            raise TypeError(
                f"fit_regularized(method='l1') got {sorted(start_options)}, options "
                "of the EM start fit, together with start_params"
            )
        return model._check_params(start_params), {"start_converged": None}
    wide = model.nparams > model.nobs
    # the start fit as before the default's re-seating moves (the settings
    # below say reseat 0); pass reseat= to make them
    start_options = {"reseat": 0, **start_options}
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        fitted = model.fit(alpha=_START_ALPHA if wide else 0.0, **start_options)
        if fitted.mle_retvals["separation"] and not wide:
            fitted = model.fit(alpha=_START_ALPHA, **start_options)
    start = np.asarray(fitted.params, dtype=float)
    return start, {"start_converged": bool(fitted.converged)}


def _solve(model, weights, start, solver: dict, maxiter, disp, callback):
    """statsmodels' SLSQP L1 solver from ``start``, then the polish; the
    parameters (exact zeros where trimmed) and the ``mle_retvals``."""
    nobs = float(model.nobs)

    def objective(params):
        return -model.loglike(params) / nobs

    def gradient(params):
        return -model.score(params) / nobs

    rescaled = weights / nobs
    # statsmodels checks the optimality conditions and trims at SLSQP's point,
    # about 1e-5 short of the optimum: too far for a small alpha (the check
    # fails, or the gradient rule zeroes true slopes). Here the zeros are
    # SLSQP's (|w_j| below size_trim_tol, penalised), the others are polished
    # and statsmodels' check is made at the optimum.
    kwargs = {**solver, "trim_mode": "off", "alpha_rescaled": rescaled}
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        params, found = fit_l1_slsqp(
            objective,
            gradient,
            start,
            (),
            kwargs,
            disp=disp,
            maxiter=maxiter,
            callback=callback,
            full_output=True,
        )
    params = np.array(params, dtype=float)
    trimmed = np.zeros(params.size, dtype=bool)
    n_polish = 0
    if solver["trim_mode"] != "off":
        params, trimmed, n_polish = _trim_and_polish(
            model, params, weights, solver["size_trim_tol"], solver["qc_tol"]
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        passed = qc_results(
            params, rescaled, gradient, solver["qc_tol"], solver["qc_verbose"]
        )
    residual = _kkt_residual(model, params, weights, ~trimmed)
    # SLSQP can stop at its optimum with "positive directional derivative"
    # (its line search cannot improve on rounding): the polish's optimality
    # conditions, met to rounding, are the better test then
    exact = residual <= _KKT_ROUNDING * nobs
    converged = bool(passed) and (bool(found["converged"]) or exact)
    if solver["trim_mode"] != "off":
        # statsmodels' check is absolute, per observation: loose beside a
        # small alpha. The polished point must meet the conditions to a
        # share qc_tol of the largest penalty (or to rounding)
        converged &= exact or residual <= solver["qc_tol"] * float(np.max(weights))
    message = "statsmodels' l1 (SLSQP) solver " + (
        "converged" if converged else f"did not converge ({found['warnflag']})"
    )
    if caught:  # the optimality check's own words (its table with qc_verbose)
        words = str(caught[0].message)
        message += "; " + (words if solver["qc_verbose"] else words.split("\n")[0])
    llfs = np.array([model.loglike(start), model.loglike(params)])
    retvals = {
        "converged": converged,
        "iterations": int(found["iterations"]),
        "message": message,
        "warnflag": found["warnflag"],
        "trimmed": trimmed,
        "nnz_params": int((~trimmed).sum()),
        "llf_history": llfs,
        "steps": [],
        "n_em_steps": 0,
        "n_newton_steps": n_polish,
        "max_abs_score": residual,
        "restarts_llf": llfs[1:],
        "restarts_converged": np.array([converged]),
        "separation": False,
        "remedy": "Increase maxiter, or loosen acc or qc_tol.",
    }
    return params, retvals


def _trim_and_polish(model, found, weights, size_trim_tol, qc_tol):
    """SLSQP's penalised parameters below ``size_trim_tol`` set to 0, the
    others polished (:func:`_polish`, which also sets to 0 a parameter its
    steps carry through 0). A zero whose optimality condition then fails
    (``|dL/dw_j| > alpha_j (1 + qc_tol)``: the optimum has it nonzero, only
    small in its units, like a slope per dollar) is released, the worst first
    and one at a time, and the polish runs again from two points, the better
    kept: where it stood, the released parameter back at SLSQP's value if
    that lies on the side its score points to (else just off 0 on that
    side), and SLSQP's point with the other zeros among its small values
    (where K > 1 is not concave, the polish may not be able to step from
    the first). The best point of all rounds is the result, a released zero
    the polish could not move 0 again; if SLSQP's point is better by more
    than the trimming can cost, SLSQP's point with those zeros, polished
    (or as it is). Returns the parameters, the zeros and the steps."""
    small = (weights > 0) & (np.abs(found) < size_trim_tol)
    params, trimmed, steps = _polish(model, np.where(small, 0.0, found), weights, small)
    best = (_penalised(model, params, weights), params, trimmed)
    # each round releases one zero (a zero can come back): the bound only
    # guards against rounding
    for _ in range(2 * params.size):
        score = model.score(params)
        excess = np.where(trimmed, np.abs(score) - weights * (1.0 + qc_tol), -np.inf)
        worst = int(np.argmax(excess))
        if not excess[worst] > 0:
            break
        trimmed = trimmed.copy()
        trimmed[worst] = False
        side = np.sign(score[worst])
        moved = params.copy()
        on_side = np.sign(found[worst]) == side
        moved[worst] = found[worst] if on_side else side * np.finfo(float).tiny
        restart = np.where(trimmed & small, 0.0, found)
        restart[worst] = moved[worst]
        runs = [
            _polish(model, start, weights, trimmed & (start == 0.0))
            for start in (moved, restart)
        ]
        value, params, trimmed, taken = min(
            ((_penalised(model, run[0], weights), *run) for run in runs),
            key=itemgetter(0),
        )
        steps += taken
        best = min(best, (value, params, trimmed), key=itemgetter(0))
    _, params, trimmed = best
    params, trimmed = _zero_idle(params, trimmed, weights)
    # trimming w_j (|w_j| < size_trim_tol, |dL/dw_j| about alpha_j at SLSQP's
    # point) costs at most about 2 alpha_j |w_j|
    slsqp = _penalised(model, found, weights)
    limit = slsqp + 2.0 * size_trim_tol * float(weights @ small) + 1e-9 * abs(slsqp)
    if _penalised(model, params, weights) <= limit:
        return params, trimmed, steps
    zeros = trimmed & small
    cut, zeros, taken = _polish(model, np.where(zeros, 0.0, found), weights, zeros)
    if _penalised(model, cut, weights) <= limit:
        return *_zero_idle(cut, zeros, weights), steps + taken
    return found.copy(), (weights > 0) & (found == 0.0), steps


def _zero_idle(params, trimmed, weights):
    """A released zero the polish could not move (still +-1e-308) is 0."""
    idle = (weights > 0) & (np.abs(params) <= np.finfo(float).tiny)
    return np.where(idle, 0.0, params), trimmed | idle


def _penalised(model, params, weights) -> float:
    """The objective ``-L + sum_j alpha_j |w_j|`` (total, not per observation)."""
    return -model.loglike(params) + float(weights @ np.abs(params))


def _polish(model, params, weights, trimmed):
    """Newton steps on the nonzero parameters with their signs held, solving
    ``dL/dw_F = alpha_F sign(w_F)``: on that orthant the objective is smooth.
    A step that carries a penalised parameter through 0 stops it at 0, where
    it joins the zeros (a projected Newton step: SLSQP can stop at the
    unpenalised estimate, a whole orthant away, when alpha is small); a step
    that does not lower the objective is halved. The steps run while
    ``-H_FF`` is positive definite (K > 1 need not be concave), else the
    point stands. Returns the parameters, the zeros and the steps kept."""
    params, trimmed = params.copy(), trimmed.copy()
    penalised = weights > 0
    current = _penalised(model, params, weights)
    for step_count in range(_POLISH_STEPS):
        free = ~trimmed
        signs = np.sign(params)
        grad = model.score(params)[free] - weights[free] * signs[free]
        step = cholesky_solve(-model.hessian(params)[np.ix_(free, free)], grad)
        if step is None:
            return params, trimmed, step_count
        found = _projected_step(model, params, weights, free, step, current)
        if found is None:
            return params, trimmed, step_count
        params, crossed, current, length = found
        trimmed |= crossed & penalised
        whole = length == 1.0 and not crossed.any()
        if whole and np.max(np.abs(step)) <= 1e-12 * (1.0 + np.max(np.abs(params))):
            return params, trimmed, step_count + 1
    return params, trimmed, _POLISH_STEPS


def _projected_step(model, params, weights, free, step, current):
    """``params + t step`` on the free coordinates, with each penalised one
    that changed sign set to 0, for the first ``t`` of 1, 1/2, ... that does
    not raise the objective; ``(params, crossed, objective, t)`` or None."""
    signs = np.sign(params)
    length = 1.0
    for _ in range(_POLISH_HALVINGS):
        trial = params.copy()
        trial[free] += length * step
        crossed = free & (weights > 0) & (np.sign(trial) != signs)
        trial[crossed] = 0.0
        value = _penalised(model, trial, weights)
        # a whole step may end level with the objective (rounding at the
        # optimum); a shortened one must lower it, or it is no progress
        level = value <= current + 1e-12 * abs(current)
        if value < current or (length == 1.0 and level):
            return trial, crossed, value, length
        length *= 0.5
    return None


def _kkt_residual(model, params, weights, free) -> float:
    """The largest violation of the optimality conditions, in log-likelihood
    units: ``|dL/dw_j - alpha_j sign(w_j)|`` at a nonzero ``w_j``, how far
    ``|dL/dw_j|`` exceeds ``alpha_j`` at a zero one."""
    score = model.score(params)
    at_nonzero = np.abs(score[free] - weights[free] * np.sign(params[free]))
    at_zero = np.maximum(np.abs(score[~free]) - weights[~free], 0.0)
    return float(np.max(np.concatenate([at_nonzero, at_zero, [0.0]])))
