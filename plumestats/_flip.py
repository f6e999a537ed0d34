r"""The label-flip extension of PLUME: likelihood, derivatives and its EM.

Each observed label is PLUME's with probability ``1 - lam`` and a fair coin's
otherwise (the contamination model of Copas, 1988)::

    P(y | x) = lam / 2 + (1 - lam) p(y | x),      lam = expit(eta),

so labels are flipped at the rate ``eps = lam / 2``, in ``(0, 1/2)``. Notation
(one observation; callers take the sums over n): ``L = log p(y | x)`` is PLUME's
log-likelihood, ``q = lam / 2 + (1 - lam) p`` the observation's likelihood,
``r = lam / (2 q)`` the posterior probability that its label is noise and
``s = 1 - r = (1 - lam) p / q``. With ``l = log q``::

    dl/dtheta          = s dL/dtheta
    dl/deta            = r - lam
    d2l/dtheta dtheta' = s d2L/dtheta dtheta' + s r (dL/dtheta)(dL/dtheta)'
    d2l/deta dtheta    = -s r dL/dtheta
    d2l/deta2          = r s - lam (1 - lam)

(from ``ds/dtheta = s r dL/dtheta`` and ``dr/deta = r s``; derived in
``docs/model.md``, section "Label flips", and checked against finite
differences in the tests).

EM treats "noise or PLUME" as one more latent label: the E-step gives ``r``,
the M-step sets ``lam`` to the mean of ``r`` (closed form) and raises PLUME's
log-likelihood weighted by ``s`` with the ordinary PLUME M-step. Near the
optimum the engine hands over to damped Newton-Raphson on the joint
log-likelihood, as for PLUME itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit, logit

from ._em import (
    MSTEPS,
    EMOptions,
    Problem,
    _ascent_step,
    _damped_solve,
    _diverging,
    _rounding,
    _small_gradient,
)
from ._likelihood import Terms, gram_blocks

__all__ = ["FlipState", "FlipTrace", "flip_state", "run_flip_em"]

# Below this share of coin-toss labels (eps = 5e-9) the flip rate is taken to be
# at its boundary, zero: the likelihood then rises ever more slowly as lam -> 0
# (dl/deta = lam * (mean(1 / 2p) - 1) < 0), Newton steps on eta stay at about
# -1 for ever, and the fit is PLUME's.
BOUNDARY_LAM = 1e-8
_LOG_HALF = np.log(0.5)


@dataclass
class FlipState:
    """Per-observation quantities at one parameter vector ``[theta, eta]``."""

    terms: Terms
    eta: float
    loglikeobs: np.ndarray
    noise: np.ndarray
    clean: np.ndarray

    @property
    def lam(self) -> float:
        """Share of labels that are coin tosses, ``2 eps``."""
        return float(expit(self.eta))


def flip_state(problem: Problem, params: np.ndarray) -> FlipState:
    """Everything the likelihood and its derivatives need at ``[theta, eta]``.

    ``r`` and ``s`` are both formed from logs, so that neither loses its
    relative precision when the other is close to one.
    """
    theta, eta = params[:-1], float(params[-1])
    terms = problem.terms(theta)
    log_noise = log_expit(eta) + _LOG_HALF
    log_clean = log_expit(-eta) + terms.loglikeobs
    loglikeobs = np.logaddexp(log_noise, log_clean)
    return FlipState(
        terms=terms,
        eta=eta,
        loglikeobs=loglikeobs,
        noise=np.exp(log_noise - loglikeobs),
        clean=np.exp(log_clean - loglikeobs),
    )


def flip_objective(problem: Problem, params: np.ndarray, state: FlipState) -> float:
    """``sum_n l_n`` minus the ridge penalty on the hyperplanes (eta is free)."""
    return float(np.sum(state.loglikeobs)) - problem.penalty(params[:-1])


def flip_gradient(problem: Problem, params: np.ndarray, state: FlipState) -> np.ndarray:
    """Gradient of :func:`flip_objective`, ``(K p + 1,)``."""
    plume = state.terms.score_weights(problem.gamma)
    theta = (state.clean[:, None] * plume).T @ problem.exog
    theta = np.ravel(theta) - problem.ridge * params[:-1]
    eta = float(np.sum(state.noise)) - problem.nobs * state.lam
    return np.append(theta, eta)


def flip_neg_hessian(problem: Problem, state: FlipState) -> np.ndarray:
    """Minus the Hessian of :func:`flip_objective`, ``(K p + 1, K p + 1)``."""
    plume = state.terms.score_weights(problem.gamma)
    both = state.clean * state.noise
    weights = state.clean[:, None, None] * state.terms.hessian_weights(problem.gamma)
    weights += both[:, None, None] * plume[:, :, None] * plume[:, None, :]
    size = problem.ridge.size
    neg_hess = np.empty((size + 1, size + 1))
    neg_hess[:size, :size] = -gram_blocks(problem.exog, weights)
    neg_hess[np.diag_indices(size)] += problem.ridge
    cross = np.ravel((both[:, None] * plume).T @ problem.exog)
    neg_hess[:size, size] = neg_hess[size, :size] = cross
    lam = state.lam
    neg_hess[size, size] = problem.nobs * lam * (1.0 - lam) - float(np.sum(both))
    return neg_hess


@dataclass
class FlipTrace:
    """What one label-flip EM run did."""

    params: np.ndarray
    objective: float
    converged: bool
    message: str
    boundary: bool
    diverged: bool = False
    llf_history: list[float] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    # the parameters after each iteration, start included (options.retall)
    path: list[np.ndarray] | None = None

    def record(self, params: np.ndarray, value: float, kind: str) -> None:
        self.llf_history.append(value)
        self.steps.append(kind)
        if self.path is not None:
            self.path.append(params.copy())

    @property
    def n_em(self) -> int:
        return self.steps.count("em")

    @property
    def n_newton(self) -> int:
        return self.steps.count("newton")


def _em_step(problem: Problem, params, state, solver, at_boundary: bool):
    """One EM iteration: ``lam`` in closed form, then one PLUME M-step on the
    hyperplanes, weighted by ``s``, on the surrogate Q of the same E-step (so
    the objective cannot fall). The E-step's PLUME terms are reused: the
    weights enter only the sums, not the per-row quantities."""
    lam = float(np.mean(state.noise))
    lam = min(max(lam, BOUNDARY_LAM), 1.0 - BOUNDARY_LAM)
    eta = logit(BOUNDARY_LAM) if at_boundary else float(logit(lam))
    theta, terms, resp = params[:-1], state.terms, state.terms.resp
    problem.weights = state.clean
    try:

        def surrogate(trial):
            trial_terms = problem.terms(trial)
            return problem.surrogate(trial, trial_terms, resp), trial_terms

        outcome = solver(
            problem,
            surrogate,
            theta,
            terms,
            problem.gradient(theta, terms),
            problem.surrogate(theta, terms, resp),
        )
    finally:
        problem.weights = None
    # no ascent on Q (at its maximum): the hyperplanes stay, lam still moves
    return np.append(theta if outcome is None else outcome[0], eta)


def run_flip_em(
    problem: Problem,
    start: np.ndarray,
    options: EMOptions,
    mstep: str = "newton",
) -> FlipTrace:
    """Maximise the (penalised) label-flip log-likelihood from ``[theta, eta]``.

    EM until the relative change of the objective falls below ``options.em_tol``,
    then damped Newton-Raphson on the joint log-likelihood (an EM step whenever
    Newton finds no ascent), converged when a full Newton step is below
    ``options.tol``. When ``lam`` falls below :data:`BOUNDARY_LAM` with a
    negative slope, it is held there (``boundary=True``) and only the
    hyperplanes move on.
    """
    params = np.asarray(start, dtype=float).copy()
    state = flip_state(problem, params)
    value = flip_objective(problem, params, state)
    if not np.isfinite(value):
        raise FloatingPointError("the log-likelihood is not finite at the start values")
    trace = FlipTrace(params, value, False, "", False, llf_history=[value])
    if options.retall:
        trace.path = [params.copy()]
    message = f"maximum number of iterations ({options.maxiter}) reached"
    newton_phase = False
    memory: dict = {}
    moves: list[float] = []
    solver = MSTEPS[mstep]()  # one per run: BFGS keeps its curvature pairs

    def evaluate(trial):
        trial_state = flip_state(problem, trial)
        return flip_objective(problem, trial, trial_state), trial_state

    for _ in range(options.maxiter):
        grad = flip_gradient(problem, params, state)
        if state.lam <= BOUNDARY_LAM * 1.0001 and grad[-1] < 0:
            trace.boundary = True
        free = slice(0, params.size - 1) if trace.boundary else slice(None)
        outcome = None
        if newton_phase:
            neg_hess = flip_neg_hessian(problem, state)[free, free]
            first = _damped_solve(neg_hess, grad[free], 0.0, memory.get("lam", 0.0))
            direction, _, undamped = first
            if undamped and grad[free] @ direction <= _rounding(value):
                params = params.copy()
                params[free] += direction
                state = flip_state(problem, params)
                value = flip_objective(problem, params, state)
                trace.record(params, value, "newton")
                trace.converged = True
                message = "converged (Newton decrement below rounding)"
                break

            def evaluate_free(step_params, base=params, free=free):
                trial = base.copy()
                trial[free] = step_params
                return evaluate(trial)

            found = _ascent_step(
                evaluate_free, params[free], grad[free], neg_hess, value, first, memory
            )
            if found is not None:
                new_free, new_state, full_newton, direction = found
                new_params = params.copy()
                new_params[free] = new_free
                outcome = (new_params, new_state, "newton", full_newton, direction)
        if outcome is None:
            new_params = _em_step(problem, params, state, solver, trace.boundary)
            new_state = flip_state(problem, new_params)
            outcome = (new_params, new_state, "em", False, None)
        new_params, new_state, kind, full_newton, direction = outcome
        new_value = flip_objective(problem, new_params, new_state)
        if not new_value > value:
            # neither Newton nor EM raises the objective: a stationary point, or
            # rounding at the optimum
            trace.converged = _small_gradient(grad[free], problem, options)
            message = (
                "converged (no step raises L: stationary point)"
                if trace.converged
                else "stalled: no step raises L, but the gradient is not small"
            )
            break
        rel_change = (new_value - value) / max(1.0, abs(value))
        moves.append(problem.score_change(state.terms, new_state.terms))
        params, state, value = new_params, new_state, new_value
        trace.record(params, value, kind)
        if _diverging(trace.llf_history, moves):
            # once the flips explain the wrong labels, a hard polytope (weights at
            # infinity) fits the clean labels best: separation in another guise
            message = (
                "diverging: the weights grow without bound while L barely rises "
                "(the clean labels are separable once flips explain the rest; "
                "the maximum is at infinity)"
            )
            trace.diverged = True
            break
        if (
            kind == "newton"
            and full_newton
            and np.max(np.abs(direction)) <= options.tol
        ):
            trace.converged = True
            message = "converged (Newton step below tol)"
            break
        if kind == "em" and rel_change <= options.em_tol and options.newton_finish:
            newton_phase = True
        if kind == "em" and rel_change <= options.tol:
            trace.converged = _small_gradient(
                flip_gradient(problem, params, state)[free], problem, options
            )
            if trace.converged:
                message = "converged (EM: small change and gradient)"
                break
    trace.params, trace.objective, trace.message = params, value, message
    return trace
