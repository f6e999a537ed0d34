"""The EM engine: generalised EM with a choice of M-step and a Newton finish.

Pure numpy; no statsmodels imports. Works in whatever coordinates it is given (the
model hands it the standardised design).

One iteration is one of

* an **EM step**: responsibilities ``pi`` from the current parameters (E-step),
  then one ascent step on the concave surrogate ``Q(.; pi)`` by the chosen solver
  (damped Newton, gradient or BFGS), with Armijo backtracking (M-step). Raising
  ``Q`` raises ``L``, so this is a generalised EM and ``L`` never decreases. For
  the hard-gating model the surrogate is no minorizer and the search is on ``L``;
* a **Newton-Raphson step on L** itself, once EM has reached the basin of a
  maximum (the relative change of ``L`` fell below ``em_tol``). Where ``-H`` is not
  positive definite it is damped until it is; the Armijo search is on ``L``. If no
  ascent is found the iteration falls back to an EM step;
* an **escape** along the direction of most negative curvature, when no ascent
  step exists at a saddle (zero gradient, e.g. two identical experts).

Convergence is never declared from a small change in ``L`` alone: EM can crawl near a
saddle for thousands of iterations. It requires -- with ``-H`` positive definite --
a full Newton step on ``L`` whose largest component is below ``tol``, or a Newton
decrement below the rounding error of ``L`` (that last step is taken); or a
gradient at rounding level with no negative curvature (flat directions of a
rank-deficient design). With the Newton finish off: a small change in ``L``
together with a small gradient. The hard model, whose ``L`` has kinks, also stops
on a relative change below ``tol``. A run whose fitted scores keep moving while
``L`` stalls is stopped as diverging (separation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ._design import as_design
from ._likelihood import (
    Terms,
    compute_hard_terms,
    compute_terms,
    gram_blocks,
    linear_scores,
    q_value,
)

__all__ = ["PERFECT_LOGPROB", "EMOptions", "EMTrace", "Problem", "run_em", "separating"]

# An observation fitted with probability above 1 - 1e-8 for its own class is
# "perfectly fitted": at a (quasi-)separated fit every observation a diverging
# direction moves is.
PERFECT_LOGPROB = -1e-8
# Curvature per unit of squared score movement below which a direction is flat.
# For K = 1 it is a weighted mean of p (1 - p), so a direction this flat moves only
# observations fitted with probability above about 1 - 1e-8.
_FLAT_CURVATURE = 1e-8
# ... and the Newton step along it, in units of fitted score, above which the
# flat direction leads to infinity rather than to a nearby maximum.
_SEPARATING_STEP = 0.25

_ARMIJO = 1e-4
_MAX_HALVINGS = 12
_MAX_DAMPING_ROUNDS = 10
_MAX_GRADIENT_HALVINGS = 40
# Levenberg-Marquardt damping grows by this factor until minus the Hessian is
# positive definite. A coarse grid (10) overshoots the needed damping by up to
# tenfold and the steps shrink with it: on adult, 3 took 16 Newton steps where 10
# took 21, with the same optimum.
_DAMPING_GROWTH = 3.0


@dataclass(frozen=True)
class EMOptions:
    """Stopping rules and switches of one EM run."""

    maxiter: int = 500
    tol: float = 1e-8
    em_tol: float = 1e-3
    gtol: float = 1e-6
    newton_finish: bool = True
    callback: Callable[[int, float, str], None] | None = None
    # keep the parameters after every iteration (statsmodels' retall)
    retall: bool = False


@dataclass
class EMTrace:
    """What one EM run did."""

    params: np.ndarray
    objective: float
    llf_history: list[float]
    steps: list[str]
    converged: bool
    message: str
    max_abs_score: float = np.nan
    n_em: int = 0
    n_newton: int = 0
    # the parameters after each iteration, start included (options.retall)
    path: list[np.ndarray] | None = None
    # stopped by separation: diverging weights, or a direction to infinity
    separated: bool = False

    @property
    def n_iter(self) -> int:
        return len(self.steps)


class Problem:
    """One PLUME fitting problem: design, outcome, K, gamma and a ridge penalty.

    The objective is ``sum_n w_n l_n(theta) - 0.5 * sum(ridge * theta**2)``
    (observation weights ``w`` default to one). With
    ``hard=True`` it is the hard-gating model (SPLA1), whose alternating surrogate
    is not a minorizer of L; its M-steps are therefore line-searched on L itself.
    """

    def __init__(
        self,
        exog,
        y_pm: np.ndarray,
        k: int,
        gamma: float,
        ridge: np.ndarray | None = None,
        hard: bool = False,
        weights: np.ndarray | None = None,
    ):
        self.exog = as_design(exog)
        self.y_pm = y_pm
        self.k = k
        self.gamma = 1.0 if hard else gamma
        self.hard = hard
        self.weights = weights
        n_params = k * exog.shape[1]
        self.ridge = np.zeros(n_params) if ridge is None else np.asarray(ridge, float)

    @property
    def nobs(self) -> int:
        return self.exog.shape[0]

    def terms(self, params: np.ndarray) -> Terms:
        scores = linear_scores(params, self.exog, self.k)
        if self.hard:
            return compute_hard_terms(scores, self.y_pm)
        return compute_terms(scores, self.y_pm, self.gamma)

    def _weighted(self, per_obs: np.ndarray) -> np.ndarray:
        if self.weights is None:
            return per_obs
        return per_obs * self.weights.reshape((-1,) + (1,) * (per_obs.ndim - 1))

    def penalty(self, params: np.ndarray) -> float:
        return 0.5 * float(np.sum(self.ridge * params**2))

    def objective(self, params: np.ndarray, terms: Terms) -> float:
        with np.errstate(over="ignore"):  # terms near -1e308 sum to -inf
            total = float(self._weighted(terms.loglikeobs).sum())
        return total - self.penalty(params)

    def surrogate(self, params: np.ndarray, terms: Terms, resp: np.ndarray) -> float:
        return q_value(terms, self._weighted(resp)) - self.penalty(params)

    def gradient(self, params: np.ndarray, terms: Terms) -> np.ndarray:
        """Gradient of the objective (and of Q at ``pi = r``)."""
        weights = self._weighted(terms.score_weights(self.gamma))
        return (weights.T @ self.exog).ravel() - self.ridge * params

    def neg_hessian(self, terms: Terms) -> np.ndarray:
        """Minus the Hessian of the penalised log-likelihood."""
        weights = self._weighted(terms.hessian_weights(self.gamma))
        hess = -gram_blocks(self.exog, weights)
        hess[np.diag_indices_from(hess)] += self.ridge
        return hess

    def neg_q_hessian(self, terms: Terms, resp: np.ndarray) -> np.ndarray:
        """Minus the Hessian of the surrogate Q (positive semi-definite)."""
        weights = self._weighted(terms.q_hessian_weights(self.gamma, resp))
        hess = -gram_blocks(self.exog, weights)
        hess[np.diag_indices_from(hess)] += self.ridge
        return hess

    # The engine's other questions about the data, each answered here so that a
    # row-block problem (plumestats._blocks) can answer them with sums.
    def score_change(self, old: Terms, new: Terms) -> float:
        """Largest change of a fitted score between two parameter vectors."""
        return float(np.max(np.abs(new.scores - old.scores)))

    def count_perfect(self, terms: Terms) -> int:
        """Observations fitted with probability above ``1 - 1e-8``."""
        return int(np.sum(terms.loglikeobs > PERFECT_LOGPROB))

    def responsible_grams(self, terms: Terms) -> tuple[np.ndarray, np.ndarray]:
        """Block-diagonal ``sum_n w_n r_nk z_n z_n'`` over all observations and
        over the perfectly fitted ones (see :func:`separating`)."""
        resp = self._weighted(terms.resp)
        perfect = (terms.loglikeobs > PERFECT_LOGPROB).astype(float)
        p = self.exog.shape[1]
        grams = []
        for mask in (np.ones(perfect.size), perfect):
            gram = np.zeros((self.k * p, self.k * p))
            for k in range(self.k):  # K is small: a loop over experts only
                block = slice(k * p, (k + 1) * p)
                gram[block, block] = self.exog.gram(resp[:, k] * mask)
            grams.append(gram)
        return grams[0], grams[1]

    def max_abs_move(self, direction: np.ndarray) -> float:
        """``max_n,k |z_n' d_k|`` for a hyperplane-major direction ``d``."""
        return float(np.max(np.abs(self.exog @ direction.reshape(self.k, -1).T)))

    def gate_share(self, params: np.ndarray) -> np.ndarray:
        """Mean gate probability of each expert over the observations."""
        return self.terms(params).gate.mean(axis=0)


def _damped_solve(
    neg_hess: np.ndarray, grad: np.ndarray, damping: float, hint: float = 0.0
):
    """Solve ``(neg_hess + lam I) d = grad`` with the smallest ``lam >= damping``
    (growing by ``_DAMPING_GROWTH``) that makes the matrix numerically positive
    definite.

    After ``lam = damping`` fails, the search jumps to ``hint`` (the damping that
    worked last time, divided by the growth factor), saving most factorisations
    along a run.
    Returns ``(direction, lam, was_undamped_pd)``.
    """
    ref = max(float(np.mean(np.abs(np.diag(neg_hess)))), np.finfo(float).tiny)
    lam = damping
    eye = np.eye(neg_hess.shape[0])
    for _ in range(40):
        try:
            factor = linalg.cho_factor(neg_hess + lam * eye, check_finite=False)
        except linalg.LinAlgError:
            factor = None
        if factor is not None:
            diag = np.abs(np.diag(factor[0]))
            # a Cholesky factor with a tiny pivot is singular in all but name: the
            # step it gives is huge and the line search would shrink it to nothing
            if diag.min() > 1e-7 * diag.max():
                direction = linalg.cho_solve(factor, grad, check_finite=False)
                return direction, lam, lam == 0.0
        lam = max(_DAMPING_GROWTH * lam, 1e-10 * ref, hint)
        hint = 0.0
    raise np.linalg.LinAlgError("no damping made the Newton system positive definite")


def _armijo(
    evaluate, params, direction, slope, value0, step=1.0, halvings=_MAX_HALVINGS
):
    """Backtracking (halving) until ``f(x + t d) >= f(x) + c t slope``.

    Returns ``(t, new_params, new_state)`` or ``None``."""
    for _ in range(halvings):
        trial = params + step * direction
        value, state = evaluate(trial)
        if value >= value0 + _ARMIJO * step * slope:
            return step, trial, state
        step *= 0.5
    return None


def _ascent_step(evaluate, params, grad, neg_hess, value0, first=None, memory=None):
    """Damped Newton step with Armijo backtracking, escalating the damping when
    the line search fails.

    ``first`` is an already solved ``(direction, lam, undamped)``; ``memory`` a
    dict whose ``"lam"`` carries the damping from one call to the next. Returns
    ``(new_params, new_state, full_newton, direction)``, or ``None`` when no
    ascent could be found.
    """
    memory = {} if memory is None else memory
    ref = max(float(np.mean(np.abs(np.diag(neg_hess)))), np.finfo(float).tiny)
    damping = 0.0
    for _ in range(_MAX_DAMPING_ROUNDS):
        if first is None:
            first = _damped_solve(neg_hess, grad, damping, memory.get("lam", 0.0))
        (direction, lam, undamped), first = first, None
        memory["lam"] = lam / _DAMPING_GROWTH
        slope = float(grad @ direction)
        if not slope > 0:
            return None
        found = _armijo(evaluate, params, direction, slope, value0)
        if found is not None:
            step, trial, state = found
            return trial, state, (undamped and step == 1.0), direction
        damping = max(100.0 * lam, 1e-6 * ref)
    return None


class NewtonMStep:
    """One damped Newton step on Q (exact Hessian of the surrogate)."""

    name = "newton"

    def __init__(self):
        self.memory: dict = {}

    def __call__(self, problem, evaluate, params, terms, grad, value0):
        neg_q_hess = problem.neg_q_hessian(terms, terms.resp)
        return _ascent_step(
            evaluate, params, grad, neg_q_hess, value0, memory=self.memory
        )


class GradientMStep:
    """Gradient ascent on Q with Armijo backtracking; the trial step length adapts
    (doubles after a success, starts from the last accepted one)."""

    name = "gradient"

    def __init__(self):
        self.step = None

    def __call__(self, problem, evaluate, params, terms, grad, value0):
        slope = float(grad @ grad)
        if not slope > 0:
            return None
        if self.step is None:
            self.step = 1.0 / max(1.0, float(np.max(np.abs(grad))))
        # the step length has no natural scale: allow it to shrink a long way
        found = _armijo(
            evaluate,
            params,
            grad,
            slope,
            value0,
            2.0 * self.step,
            halvings=_MAX_GRADIENT_HALVINGS,
        )
        if found is None:
            return None
        self.step, trial, state = found
        return trial, state, False, self.step * grad


class BFGSMStep:
    """Quasi-Newton ascent on Q: a BFGS approximation of the inverse of minus the
    Hessian, updated from successive gradients (the gradient of Q at its base
    point is the gradient of L), with Armijo backtracking. No Hessian is formed."""

    name = "bfgs"

    def __init__(self):
        self.inverse = None
        self.last = None

    def __call__(self, problem, evaluate, params, terms, grad, value0):
        n = params.size
        if self.last is not None:
            change = params - self.last[0]
            # for the minimisation of -L the gradient change is g_old - g_new
            curvature_pair = self.last[1] - grad
            sy = float(change @ curvature_pair)
            if sy > 1e-12 * np.linalg.norm(change) * np.linalg.norm(curvature_pair):
                if self.inverse is None:
                    self.inverse = (
                        np.eye(n) * sy / float(curvature_pair @ curvature_pair)
                    )
                rho = 1.0 / sy
                left = np.eye(n) - rho * np.outer(change, curvature_pair)
                self.inverse = left @ self.inverse @ left.T + rho * np.outer(
                    change, change
                )
        steepest = grad / max(1.0, float(np.max(np.abs(grad))))
        direction = steepest if self.inverse is None else self.inverse @ grad
        if not float(grad @ direction) > 0:
            self.inverse, direction = None, steepest
        found = _armijo(evaluate, params, direction, float(grad @ direction), value0)
        if found is None and self.inverse is not None:
            # a stale curvature model: restart from steepest ascent
            self.inverse, direction = None, steepest
            found = _armijo(
                evaluate,
                params,
                direction,
                float(grad @ direction),
                value0,
                halvings=_MAX_GRADIENT_HALVINGS,
            )
        if found is None:
            return None
        self.last = (params, grad)
        step, trial, state = found
        return trial, state, False, step * direction


MSTEPS = {"newton": NewtonMStep, "gradient": GradientMStep, "bfgs": BFGSMStep}


def run_em(
    problem: Problem, start: np.ndarray, options: EMOptions, mstep: str = "newton"
) -> EMTrace:
    """Maximise the (penalised) PLUME log-likelihood from ``start``."""
    params = np.asarray(start, dtype=float).copy()
    terms = problem.terms(params)
    value = problem.objective(params, terms)
    if not np.isfinite(value):
        raise FloatingPointError("the log-likelihood is not finite at the start values")
    solver = MSTEPS[mstep]()
    history = [value]
    moves: list[float] = []
    newton_memory: dict = {}
    steps: list[str] = []
    newton_phase = False
    converged = False
    separated = False
    message = f"maximum number of iterations ({options.maxiter}) reached"

    path = [params.copy()] if options.retall else None

    def record(new_value, kind):
        history.append(new_value)
        steps.append(kind)
        if path is not None:
            path.append(params.copy())  # params is already the new point
        if options.callback is not None:
            options.callback(len(steps), new_value, kind)

    def eval_objective(trial):
        trial_terms = problem.terms(trial)
        return problem.objective(trial, trial_terms), trial_terms

    for _ in range(options.maxiter):
        grad = problem.gradient(params, terms)
        outcome = None
        kind = "em"
        if newton_phase and _vanished_gradient(grad, problem):
            # A rank-deficient design leaves flat directions (minus the Hessian is
            # singular for ever) but a vanished gradient is then a maximum -
            # unless there is negative curvature: a saddle, e.g. two identical
            # experts, which no gradient-based step can leave.
            outcome = _escape_saddle(eval_objective, params, terms, problem, value)
            if outcome is None:
                converged, message = True, "converged (gradient vanished)"
                break
            kind = "escape"
        elif newton_phase:
            neg_hess = problem.neg_hessian(terms)
            first = _damped_solve(neg_hess, grad, 0.0, newton_memory.get("lam", 0.0))
            direction, _, undamped = first
            if undamped and grad @ direction <= _rounding(value):
                # The predicted gain (Newton decrement) is below the rounding error
                # of L, so a line search cannot judge the step: take it whole, as
                # the last step of a quadratically converging Newton iteration.
                params = params + direction
                terms = problem.terms(params)
                value = problem.objective(params, terms)
                record(value, "newton")
                converged, message = True, "converged (Newton decrement below rounding)"
                break
            outcome = _ascent_step(
                eval_objective, params, grad, neg_hess, value, first, newton_memory
            )
            kind = "newton"
        if outcome is None:
            kind = "em"
            if problem.hard:
                # the alternating surrogate is no minorizer: search on L itself
                evaluate, base = eval_objective, value
            else:
                resp = terms.resp

                def evaluate(trial, resp=resp):
                    trial_terms = problem.terms(trial)
                    return problem.surrogate(trial, trial_terms, resp), trial_terms

                base = problem.surrogate(params, terms, resp)
            outcome = solver(problem, evaluate, params, terms, grad, base)
        if outcome is None and not problem.hard:
            outcome = _escape_saddle(eval_objective, params, terms, problem, value)
            kind = "escape"
        if outcome is None:
            # With hard gating L has kinks where scores tie: a maximum can sit on
            # one with a non-zero one-sided gradient, and no step raising L is
            # then exactly what a (Clarke-)stationary point means.
            converged = problem.hard or _small_gradient(grad, problem, options)
            message = (
                "no ascent direction left (stationary point)"
                if converged
                else "stalled: no step raises L, but the gradient is not small"
            )
            break
        new_params, new_terms, full_newton, direction = outcome
        new_value = problem.objective(new_params, new_terms)
        if new_value < value:
            # Q rose but L fell: only possible through rounding at the optimum
            converged = _small_gradient(grad, problem, options)
            message = "converged (change below rounding)" if converged else "stalled"
            break
        rel_change = (new_value - value) / max(1.0, abs(value))
        # how far the fitted scores moved: the currency of separation, whatever
        # the scale of the diverging coefficients (rare levels have tiny ones)
        moves.append(problem.score_change(terms, new_terms))
        params, terms, value = new_params, new_terms, new_value
        record(value, kind)
        if (
            kind == "newton"
            and full_newton
            and np.max(np.abs(direction)) <= options.tol
        ):
            converged, message = True, "converged (Newton step below tol)"
            break
        if _diverging(history, moves):
            separated = True
            message = (
                "diverging: the weights grow without bound while L barely rises "
                "(separation; the maximum is at infinity)"
            )
            break
        if problem.hard and rel_change <= options.tol:
            # piecewise smooth L: at a maximum on a kink Newton steps shrink
            # without end, so the hard model also stops on a tiny relative change
            converged, message = True, "converged (hard gating: change below tol)"
            break
        if kind == "em" and rel_change <= options.em_tol:
            if options.newton_finish:
                newton_phase = True
            elif rel_change <= options.tol and _small_gradient(
                problem.gradient(params, terms), problem, options
            ):
                converged, message = True, "converged (EM: small change and gradient)"
                break

    if converged and separating(problem, params, terms):
        # The gradient and the curvature along a direction to infinity vanish
        # together (both like exp(-margin)), so every test above can pass at a
        # separated fit whose weights are only "large": it is no maximum.
        converged, separated = False, True
        message = (
            "separation: the likelihood keeps rising, ever more slowly, along a "
            "direction that only moves perfectly fitted observations (the maximum "
            "is at infinity)"
        )
    final_grad = problem.gradient(params, terms)
    return EMTrace(
        params=params,
        objective=value,
        llf_history=history,
        steps=steps,
        converged=converged,
        message=message,
        max_abs_score=float(np.max(np.abs(final_grad))),
        n_em=steps.count("em"),
        n_newton=steps.count("newton") + steps.count("escape"),
        path=path,
        separated=separated,
    )


_DIVERGENCE_WINDOW = 10


def _diverging(history: list[float], moves: list[float]) -> bool:
    """The signature of separation: over the last iterations some fitted score
    kept moving by more than 0.5 per iteration while L rose by less than 1e-5
    relative: the likelihood is flat along a direction to infinity."""
    if len(moves) < 2 * _DIVERGENCE_WINDOW:
        return False
    gain = (history[-1] - history[-1 - _DIVERGENCE_WINDOW]) / max(1.0, abs(history[-1]))
    return gain < 1e-5 and min(moves[-_DIVERGENCE_WINDOW:]) > 0.5


def separating(problem: Problem, params: np.ndarray, terms: Terms) -> bool:
    r"""Whether a stationary-looking point is a separated fit rather than a maximum.

    Separation leaves a direction ``v`` along which ``L`` rises to its supremum at
    infinity; near convergence the gradient and the curvature along ``v`` have
    both underflowed, so neither a vanished gradient nor a small Newton step tells
    it from a maximum. What does is the curvature per unit of squared movement of
    the scores,

    .. math:: \lambda_{\min} = \min_v \frac{v'(-H)v}{v'Gv}, \qquad
       G = \operatorname{blockdiag}_k \sum_n w_n r_{nk} \tilde x_n
       \tilde x_n',

    on the range of ``G`` (so that the flat directions of a rank-deficient design,
    and those of an expert responsible for no observation, do not count). It is
    of order one at a regular maximum and of order ``exp(-margin)`` along a
    separating direction. The point is separated when ``lambda_min`` is below
    ``1e-8``, most of the movement of that direction falls on observations
    fitted with probability above ``1 - 1e-8``, and the Newton step along it
    (slope over curvature) still moves some score by more than a quarter: a
    flat direction at a regular maximum has a vanishing slope and a tiny step.
    Without any perfectly fitted observation (ordinary data) nothing beyond one
    comparison is computed.
    """
    if problem.count_perfect(terms) == 0:
        return False
    gram, gram_perfect = problem.responsible_grams(terms)
    size, basis = np.linalg.eigh(gram)
    keep = size > 1e-10 * max(float(size[-1]), np.finfo(float).tiny)
    if not keep.any():
        return False
    # whiten the range of G: v'Gv = 1 for every unit vector of the new basis
    whiten = basis[:, keep] / np.sqrt(size[keep])
    neg_hess = whiten.T @ problem.neg_hessian(terms) @ whiten
    curvature, directions = np.linalg.eigh(0.5 * (neg_hess + neg_hess.T))
    if curvature[0] > _FLAT_CURVATURE:
        return False
    flat = whiten @ directions[:, 0]
    moved_perfect = flat @ gram_perfect @ flat
    if moved_perfect <= 0.5:  # of v'Gv = 1
        return False
    # A flat direction alone can be a regular, if ill-conditioned, maximum (a
    # sharp face with few observations near it). Along a direction to infinity
    # the slope vanishes with the curvature, so the Newton step along it still
    # moves the scores by about one unit of margin; at a maximum it is tiny.
    slope = float(problem.gradient(params, terms) @ flat)
    step = abs(slope) / max(float(curvature[0]), np.finfo(float).tiny)
    return bool(step * problem.max_abs_move(flat) > _SEPARATING_STEP)


def _rounding(value: float) -> float:
    """What the rounding error of a sum like L amounts to."""
    return 64.0 * np.finfo(float).eps * max(1.0, abs(value))


def _escape_saddle(evaluate, params, terms, problem, value):
    """A step along the direction of most negative curvature of L, when there is
    one (both signs tried, halving), or ``None`` at a genuine maximum."""
    eigenvalues, eigenvectors = np.linalg.eigh(problem.neg_hessian(terms))
    scale = max(float(np.max(np.abs(eigenvalues))), np.finfo(float).tiny)
    if eigenvalues[0] >= -1e-8 * scale:
        return None
    direction = eigenvectors[:, 0]
    step = 1.0
    for _ in range(_MAX_HALVINGS):
        for sign in (1.0, -1.0):
            trial = params + sign * step * direction
            trial_value, trial_terms = evaluate(trial)
            if trial_value > value + _rounding(value):
                return trial, trial_terms, False, sign * step * direction
        step *= 0.5
    return None


def _vanished_gradient(grad: np.ndarray, problem: Problem) -> bool:
    """Mean score per observation at rounding level (standardised coordinates)."""
    return bool(np.max(np.abs(grad)) <= 1e-12 * max(1, problem.nobs))


def _small_gradient(grad: np.ndarray, problem: Problem, options: EMOptions) -> bool:
    """Mean score per observation below ``gtol`` (standardised coordinates)."""
    return bool(np.max(np.abs(grad)) <= options.gtol * max(1, problem.nobs))
