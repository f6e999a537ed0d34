"""The M-step solvers and the damped Newton step they share with the finish.

One M-step raises the EM surrogate ``Q`` (or ``L`` itself, for a gate whose
surrogate is no minorizer) from the current point: a Levenberg-Marquardt
damped Newton step (:class:`NewtonMStep`), gradient ascent
(:class:`GradientMStep`) or a BFGS quasi-Newton step (:class:`BFGSMStep`), each
with Armijo backtracking, so that every EM iteration raises ``L``. The damped
Newton step on ``L`` itself (:func:`ascent_step`) finishes the fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import lapack

if TYPE_CHECKING:
    from ._penalty import Damping

_POTRF, _POTRS = lapack.dpotrf, lapack.dpotrs

__all__ = [
    "MAX_HALVINGS",
    "MSTEPS",
    "armijo",
    "ascent_step",
    "cholesky_solve",
    "damped_solve",
]

_ARMIJO = 1e-4
MAX_HALVINGS = 12
_MAX_DAMPING_ROUNDS = 10
_MAX_GRADIENT_HALVINGS = 40
# Levenberg-Marquardt damping grows by this factor until minus the Hessian is
# positive definite. A coarse grid (10) overshoots the needed damping by up to
# tenfold and the steps shrink with it: on adult, 3 took 16 Newton steps where 10
# took 21, with the same optimum.
_DAMPING_GROWTH = 3.0
# The damping's smallest value, as a share of minus the Hessian's diagonal
# scale (:func:`_diagonal_scale`)
_FLOOR_SHARE = 1e-10


def damped_solve(
    neg_hess: np.ndarray,
    grad: np.ndarray,
    damping: float,
    hint: float = 0.0,
    metric: Damping | None = None,
):
    """Solve ``(neg_hess + lam M) d = grad`` with the smallest ``lam >= damping``
    (growing by ``_DAMPING_GROWTH``) that makes the matrix numerically positive
    definite. ``M`` is ``metric``'s matrix, by default the identity (a
    design's coupled terms give one, :class:`plumestats._penalty.TermMetrics`,
    so that a damped step does not depend on how a factor is coded).

    After ``lam = damping`` fails, the search jumps to ``hint`` (the damping that
    worked last time, divided by the growth factor), saving most factorisations
    along a run.
    Returns ``(direction, lam, was_undamped_pd)``.
    """
    lam = damping
    # the growth's floor, from neg_hess's scale, and a cheap bound on it: each
    # computed once, when first needed
    bound = floor = None
    for _ in range(40):
        # LAPACK's Cholesky directly: what scipy.linalg.cho_factor/cho_solve
        # call, without their checks and wrappers (a tenth of a small fit);
        # it factors a copy (the undamped one is neg_hess itself, unchanged)
        factor, info = _POTRF(_damped(neg_hess, lam, metric), lower=0, clean=0)
        if info == 0:
            diag = np.abs(np.diag(factor))
            # a Cholesky factor with a tiny pivot is singular in all but name: the
            # step it gives is huge and the line search would shrink it to nothing
            if diag.min() > 1e-7 * diag.max():
                direction, info = _POTRS(factor, grad, lower=0)
                if info == 0:
                    return direction, lam, lam == 0.0
        grown = max(_DAMPING_GROWTH * lam, hint)
        if bound is None:
            bound = _FLOOR_SHARE * _scale_bound(neg_hess, metric)
        if floor is None and grown < bound:
            floor = _FLOOR_SHARE * _diagonal_scale(neg_hess, metric)
        # (a floor left uncomputed is below ``grown``: the bound says so)
        lam = grown if floor is None else max(grown, floor)
        hint = 0.0
    raise np.linalg.LinAlgError("no damping made the Newton system positive definite")


def cholesky_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``matrix^-1 rhs`` by LAPACK's Cholesky, or None when ``matrix`` is not
    numerically positive definite (what ``scipy.linalg.cho_factor`` and
    ``cho_solve`` compute, without their wrappers' checks)."""
    factor, info = _POTRF(matrix, lower=0, clean=0)
    if info != 0:
        return None
    solution, info = _POTRS(factor, rhs, lower=0)
    return solution if info == 0 else None


def _damped(matrix: np.ndarray, lam: float, metric=None) -> np.ndarray:
    """``matrix + lam M`` (``matrix`` itself when ``lam`` is 0; ``M``:
    ``metric``, or the identity)."""
    if lam == 0.0:
        return matrix
    if metric is not None:
        return matrix + lam * metric.matrix
    out = matrix.copy()
    out.flat[:: matrix.shape[0] + 1] += lam
    return out


def _damping_floor(neg_hess: np.ndarray, metric=None) -> float:
    """The smallest damping :func:`ascent_step` escalates to or keeps."""
    return 1e-6 * _diagonal_scale(neg_hess, metric)


def _scale_bound(matrix: np.ndarray, metric=None) -> float:
    """An upper bound on :func:`_diagonal_scale`, cheaper with a ``metric``
    (a sum over ``matrix`` instead of a product with it: on adult, K = 2, the
    floor was read at every Newton step, 0.3 ms each, and never bound):
    ``|w_i' H w_i| <= ||w_i||^2 ||H||_F`` for the rows ``w_i`` of ``L^-1``."""
    peak = float(np.max(np.abs(matrix), initial=0.0))
    if metric is None or not 0.0 < peak < np.inf:
        # (zero, NaN or inf: the scale itself, as before the bound)
        return _diagonal_scale(matrix, metric)
    # scaled by the largest entry: squares of entries below 1e-154 underflow
    scaled = matrix / peak
    frobenius = peak * float(np.sqrt(np.einsum("ij,ij->", scaled, scaled)))
    # (with a margin for the rounding of both sums)
    bound = (1.0 + 1e-6) * metric.mean_row_square * frobenius
    return max(bound, np.finfo(float).tiny)


def _diagonal_scale(matrix: np.ndarray, metric=None) -> float:
    """Mean absolute diagonal entry (at least the smallest normal double): the
    scale of the damping's floors. With a damping ``metric`` ``M``, of
    ``L^-1 matrix L^-T`` (``L L' = M``): the same in any coordinates."""
    diagonal = np.abs(
        np.diagonal(matrix) if metric is None else metric.diagonal_scale(matrix)
    )
    return max(float(np.add.reduce(diagonal) / diagonal.size), np.finfo(float).tiny)


def armijo(evaluate, params, direction, slope, value0, step=1.0, halvings=MAX_HALVINGS):
    """Backtracking (halving) until ``f(x + t d) >= f(x) + c t slope``.

    Returns ``(t, new_params, new_state)`` or ``None``."""
    for _ in range(halvings):
        trial = params + step * direction
        value, state = evaluate(trial)
        if value >= value0 + _ARMIJO * step * slope:
            return step, trial, state
        step *= 0.5
    return None


def ascent_step(
    evaluate,
    params,
    grad,
    neg_hess,
    value0,
    first=None,
    memory=None,
    adapt=False,
    metric=None,
):
    """Damped Newton step with Armijo backtracking, escalating the damping when
    the line search fails.

    ``first`` is an already solved ``(direction, lam, undamped)``; ``memory`` a
    dict whose ``"lam"`` carries the damping from one call to the next: the
    damping that worked, divided by the growth factor. With ``adapt`` (a kinked
    ``L``) a step that the line search had to shorten to ``t < 1/2`` leaves
    ``lam / t`` instead (``lam`` at least the damping floor), as a trust
    region shrinks: a damped direction is about
    ``g / lam`` long, so the next one starts about as long as the step that
    was taken. Returns ``(new_params, new_state, full_newton, direction)``, or
    ``None`` when no ascent could be found. ``metric``: the damping's
    (:func:`damped_solve`).
    """
    memory = {} if memory is None else memory
    damping = 0.0
    for _ in range(_MAX_DAMPING_ROUNDS):
        if first is None:
            first = damped_solve(
                neg_hess, grad, damping, memory.get("lam", 0.0), metric
            )
        (direction, lam, undamped), first = first, None
        memory["lam"] = lam / _DAMPING_GROWTH
        slope = float(grad @ direction)
        if not slope > 0:
            return None
        found = armijo(evaluate, params, direction, slope, value0)
        if found is not None:
            step, trial, state = found
            if adapt and step < 0.5:
                # SPLA1's Newton steps cross kinks of L: without this the
                # search halved about ten times at every step (heart, K = 2)
                memory["lam"] = max(lam, _damping_floor(neg_hess, metric)) / step
            return trial, state, (undamped and step == 1.0), direction
        damping = max(100.0 * lam, _damping_floor(neg_hess, metric))
    return None


class NewtonMStep:
    """One damped Newton step on Q (exact Hessian of the surrogate)."""

    name = "newton"

    def __init__(self):
        self.memory: dict = {}

    def __call__(self, problem, evaluate, params, terms, grad, value0):
        neg_q_hess = problem.neg_q_hessian(terms)
        metric = problem.damping_of(slice(neg_q_hess.shape[0]))
        return ascent_step(
            evaluate,
            params,
            grad,
            neg_q_hess,
            value0,
            memory=self.memory,
            metric=metric,
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
        found = armijo(
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
        found = armijo(evaluate, params, direction, float(grad @ direction), value0)
        if found is None and self.inverse is not None:
            # a stale curvature model: restart from steepest ascent
            self.inverse, direction = None, steepest
            found = armijo(
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
