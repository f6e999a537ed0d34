"""From the best run to the results object, for every model and row source.

After the final fit the data are read once (:meth:`Problem.data_sums`): that
pass gives the log-likelihood, the gradient and the information, the robust
meat, the gate mass, the perfectly fitted rows, the Gram matrix and the
confusion matrix at 0.5. The faces are then put in their canonical order
(decreasing gate mass), the information is inverted in the standardised
coordinates the engine used (well conditioned) and mapped to the user's units
exactly, ``Cov(w) = J Cov(b) J'`` with ``J = I_K (x) B^{-1}`` (the extras
unchanged), and the fit's warnings are issued, pointing at the caller's line.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.linalg import null_space
from statsmodels.base.model import LikelihoodModelResults

from ._aliasing import of_model
from ._covariance import (
    BLOCK_COV_TYPES,
    invert_information,
    masked,
    warn_singular_information,
)
from ._diagnostics import (
    caller_stacklevel,
    compute_diagnostics,
    warn_diagnostics,
    warn_if_restarts_disagree,
    warn_if_unsettled,
)
from ._fitting import canonical_permutation, finish_retvals, user_weights
from ._problem import block_permutation, user_jacobian

__all__ = ["build_results"]


def build_results(
    model, problem, scaling, internal, retvals, settings, *, options: dict
):
    """The wrapped results of the fit whose best internal estimate is
    ``internal`` (``options``: ``cov_type``, ``cov_kwds``, ``use_t``,
    ``disp`` and ``full_output`` of ``fit``)."""
    point = problem.terms(internal)
    data_sums = problem.data_sums(
        point,
        scaling,
        meat=options["cov_type"] in BLOCK_COV_TYPES[1:],
        gram=model.k > 1 and settings["alpha"] == 0.0,
    )
    neg_hess = problem.neg_hessian(point)
    grad = problem.gradient(internal, point)
    n_extra = problem.objective.n_extra
    faces = internal[: problem.n_weights].reshape(model.k, -1)
    order = canonical_permutation(data_sums.gate_mass, faces)
    perm = block_permutation(order, problem.n_cols, n_extra)
    data_sums = replace(
        data_sums,
        gate_mass=data_sums.gate_mass[order],
        meat_root=None if data_sums.meat_root is None else data_sums.meat_root[:, perm],
        score_gram=None
        if data_sums.score_gram is None
        else data_sums.score_gram[np.ix_(order, order)],
    )
    # statsmodels' optimisers record the path in the user's units already
    engine_units = scaling if settings["method"] == "em" else None
    if engine_units is None:
        _reorder_optimizer_retvals(retvals, perm)
    finish_retvals(
        retvals,
        user_weights(model.k, order, engine_units, n_extra),
        options["full_output"],
    )
    if engine_units is not None and "alpha_l1" not in settings:
        _newton_records(retvals, problem, scaling, point, perm, grad, neg_hess)
    params = user_weights(model.k, np.arange(model.k), scaling, n_extra)(internal[perm])
    # the face of the run (of start_params) behind each reported face
    retvals["face_order"] = order
    if "trimmed" in retvals:  # an L1 fit's zeros (plumestats._l1), faces reordered
        retvals["trimmed"] = np.asarray(retvals["trimmed"], dtype=bool)[perm]
        settings["alpha_l1"] = np.asarray(settings["alpha_l1"])[perm]
        params[retvals["trimmed"]] = 0.0  # exact, whatever the units' rounding
    if options["disp"]:
        extras = model._report_extras(params)
        # the value statsmodels prints is its fopt: with a penalty, of the
        # penalised objective
        value = retvals.get("fopt", -data_sums.llf / problem.nobs)
        _print_report(retvals, settings, value, extras)
    return _make_results(
        model,
        params,
        neg_hess[np.ix_(perm, perm)],
        grad[perm],
        scaling,
        retvals,
        settings,
        options,
        data_sums,
    )


def _newton_records(retvals, problem, scaling, point, perm, grad, neg_hess):
    r"""What statsmodels' Newton optimiser records, for the EM fit: the
    function it minimises is minus the objective per observation,
    :math:`f = -(L - \mathrm{penalty}) / n`, so ``fopt`` is its value and
    ``score`` and ``Hessian`` its gradient and Hessian at the estimates, in
    the user's units and the faces' final order (at K = 1 and ``alpha=0``
    those of ``Logit``); ``warnflag`` is 1 for a fit that did not converge.
    A script that reads ``mle_retvals["fopt"]`` of ``smf.logit`` reads it
    here too. ``n`` counts rows, not frequency weights, as statsmodels'
    ``fit`` does (``method="newton"`` records the same numbers)."""
    nobs = problem.nobs
    jacobian = user_jacobian(scaling, problem.k, problem.objective.n_extra, True)
    # (the point's log-likelihood is known: no pass over the data)
    objective = float(problem.objective_value(point.params, point))
    retvals.setdefault("fopt", -objective / nobs)
    retvals.setdefault("score", -(jacobian.T @ grad[perm]) / nobs)
    hessian = jacobian.T @ neg_hess[np.ix_(perm, perm)] @ jacobian
    retvals.setdefault("Hessian", hessian / nobs)
    retvals.setdefault("warnflag", 0 if retvals["converged"] else 1)


# statsmodels' optimisers' own vectors and matrices over the parameters
# (newton's score and Hessian, bfgs' gradient and inverse Hessian)
_OPTIMIZER_PARAMETER_RETVALS = ("score", "gopt", "Hessian", "Hinv")


def _reorder_optimizer_retvals(retvals: dict, perm: np.ndarray) -> None:
    """Those retvals in the faces' final order, as ``params`` (they were in the
    optimiser's order)."""
    for key in _OPTIMIZER_PARAMETER_RETVALS:
        value = retvals.get(key)
        if isinstance(value, np.ndarray) and value.shape == (perm.size,):
            retvals[key] = value[perm]
        elif isinstance(value, np.ndarray) and value.shape == (perm.size,) * 2:
            retvals[key] = value[np.ix_(perm, perm)]


def _print_report(retvals: dict, settings: dict, value: float, extras="") -> None:
    """statsmodels' optimisers print their own report; add one only where
    plumestats' checks overturn it (a saddle, a stop short of the maximum)."""
    direct = settings["method"] != "em"
    if direct and retvals["converged"]:
        return
    status = (
        "Optimization terminated successfully."
        if retvals["converged"]
        else "Warning: the fit did not converge."
    )
    detail = (
        retvals["message"]
        if direct
        else f"{retvals['n_em_steps']} EM, {retvals['n_newton_steps']} Newton"
    )
    print(
        f"{status}\n"
        f"         Current function value: {value:.6f}\n"
        f"         Iterations: {retvals['iterations']} ({detail}){extras}"
    )


def _fixed_params(retvals: dict, size: int) -> np.ndarray:
    """The parameters held fixed, not estimated: a flip rate at its boundary
    (0) and an L1 fit's zeros."""
    fixed = np.zeros(size, dtype=bool)
    if "trimmed" in retvals:
        fixed |= retvals["trimmed"]
    if retvals.get("boundary", False):
        fixed[-1] = True
    return fixed


def _aliased_params(model, settings: dict, size: int) -> tuple[np.ndarray, ...]:
    """Masks over the parameters of an unpenalised fit of a rank-deficient
    design (:class:`~plumestats._aliasing.Aliasing`), in every face: the
    dependent columns' coefficients, held where they are so that the others'
    information is invertible (the covariance is then a generalised inverse
    of the information, which gives every estimable coefficient its variance
    whichever ones are held), and every unidentified coefficient, whose
    variance is NaN. All False when a penalty identifies the faces (an L1
    fit, which records alpha 0, included)."""
    aliasing = of_model(model)
    if aliasing is None or settings["alpha"] or "alpha_l1" in settings:
        return np.zeros(size, bool), np.zeros(size, bool)
    return (
        aliasing.in_faces(aliasing.dependent, model.k, size),
        aliasing.in_faces(aliasing.unidentified, model.k, size),
    )


def _free_basis(jacobian: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """An orthonormal basis, in the engine's coordinates, of the directions
    that keep the ``fixed`` user parameters where they are. When those are
    functions of the same engine coordinates only (slopes, the flip rate) it
    is the other coordinates; a fixed intercept, a mix of them all, needs the
    null space of its rows of ``d user / d internal``."""
    rows = jacobian[fixed]
    if not np.any(rows[:, ~fixed]):
        return np.eye(fixed.size)[:, ~fixed]
    return null_space(rows)


def _covariance(model, neg_hess, scaling, fixed: np.ndarray):
    """Covariance of the user-unit parameters and why the information is
    singular (or ``None``). The ``fixed`` parameters are left out: the
    information of the others is inverted (in the engine's coordinates, on
    :func:`_free_basis`) and the fixed ones' variances are NaN."""
    n_extra = neg_hess.shape[0] - model.k * model.k_vars
    jacobian = user_jacobian(scaling, model.k, n_extra)
    basis = _free_basis(jacobian, fixed)
    cov_free, singular = invert_information(basis.T @ neg_hess @ basis)
    cov = jacobian @ basis @ cov_free @ basis.T @ jacobian.T
    cov[fixed, :] = cov[:, fixed] = np.nan
    return cov, singular, basis


def _make_results(
    model, params, neg_hess, grad, scaling, retvals, settings, options, data_sums
):
    aliased, unidentified = _aliased_params(model, settings, params.size)
    cov, singular, basis = _covariance(
        model, neg_hess, scaling, _fixed_params(retvals, params.size) | aliased
    )
    if "alpha_l1" in settings:  # the gradient of the L1-penalised objective
        n_extra = params.size - model.k * model.k_vars
        jacobian = user_jacobian(scaling, model.k, n_extra)
        grad = grad - jacobian.T @ (settings["alpha_l1"] * np.sign(params))
    model._warn_fit_extras(retvals, params)
    separated = warn_if_unsettled(
        model,
        retvals,
        settings["alpha"],
        n_perfect=data_sums.n_perfect,
    )
    if singular is not None and not separated:
        warn_singular_information(
            singular, stacklevel=caller_stacklevel(), rank_deficient=aliased.any()
        )
    retvals["separation"] = separated
    if not separated:  # a separated fit's maxima are at infinity: said already
        warn_if_restarts_disagree(retvals, model.k)
    retvals["information_singular"] = singular
    # the fixed parameters (a flip rate at 0, an L1 fit's zeros) are not
    # estimated: the diagnostics read the information of the others
    diagnostics = compute_diagnostics(
        model,
        basis.T @ neg_hess @ basis,
        basis.T @ grad,
        retvals,
        settings["alpha"],
        data_sums,
    )
    penalised = bool(settings["alpha"])
    warn_diagnostics(diagnostics, model, penalised, stacklevel=caller_stacklevel())
    mlefit = LikelihoodModelResults(
        model, params, normalized_cov_params=masked(cov, unidentified), scale=1.0
    )
    if unidentified.any():  # (the sandwiches and the leverage read them all)
        retvals["unidentified"] = unidentified
        mlefit._bread_held = cov
    mlefit.mle_retvals = retvals
    mlefit.mle_settings = settings
    results = model._results_class(
        model,
        mlefit,
        cov_type=options["cov_type"],
        cov_kwds=options["cov_kwds"],
        use_t=options["use_t"],
        data_sums=data_sums,
        scaling=scaling,
    )
    results._diagnostics = diagnostics
    return model._results_wrapper(results)
