"""The EM engine: one loop for every model, generalised EM with a Newton finish.

Pure numpy; no statsmodels imports. It works on a :class:`~plumestats._problem.
Problem` (a spec and its objective on a row source), in whatever coordinates
that is given (the standardised design). One iteration is one of

* an **EM step**: the objective's own (``objective.em_step``): responsibilities
  from the current parameters (E-step), then one ascent step on the concave
  surrogate ``Q`` by the chosen solver (damped Newton, gradient or BFGS), with
  Armijo backtracking (M-step). Raising ``Q`` raises ``L``, so this is a
  generalised EM and ``L`` never decreases. With ``overrelax`` above 1 the
  step is **over-relaxed** (Salakhutdinov and Roweis 2003): after an EM
  step, the next one is also tried ``eta`` times as long, and kept when it
  raises ``L`` more; ``eta`` grows by ``overrelax`` while that works and
  falls back to 1 when it does not. For a gate whose surrogate is no
  minorizer (the hard gate) the search is on ``L``; with label flips the flip
  rate is updated in closed form first;
* a **Newton-Raphson step on L** itself, once EM has reached the basin of a
  maximum (the relative change of ``L`` fell below ``em_tol``). Where ``-H`` is not
  positive definite it is damped until it is; the Armijo search is on ``L``. If no
  ascent is found the iteration falls back to an EM step. A parameter the
  objective holds at a boundary (the flip rate at 0) does not move;
* an **escape** along the direction of most negative curvature, when no ascent
  step exists at a saddle (zero gradient, e.g. two identical experts).

Convergence is never declared from a small change in ``L`` alone: EM can crawl near a
saddle for thousands of iterations. It requires -- with ``-H`` positive definite --
a full Newton step on ``L`` whose largest component is below ``tol``, or a Newton
decrement below the rounding error of ``L`` (that last step is taken); or a
gradient at rounding level with no negative curvature (flat directions of a
rank-deficient design). With the Newton finish off: a small change in ``L``
together with a small gradient. A kinked ``L`` (the hard gate) also stops on a
relative change below ``tol``. A run whose fitted scores keep moving while
``L`` stalls is stopped as diverging (separation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._msteps import MAX_HALVINGS, MSTEPS, ascent_step, damped_solve

__all__ = [
    "KINK_STOP",
    "EMOptions",
    "EMTrace",
    "rounding_error",
    "run_em",
    "separating",
]

# Curvature per unit of squared score movement below which a direction is flat.
# For K = 1 it is a weighted mean of p (1 - p), so a direction this flat moves only
# observations fitted with probability above about 1 - 1e-8.
_FLAT_CURVATURE = 1e-8
# ... and the Newton step along it, in units of fitted score, above which the
# flat direction leads to infinity rather than to a nearby maximum.
_SEPARATING_STEP = 0.25
_DIVERGENCE_WINDOW = 10
# how a hard-gating run that stops on a kink (a tiny change of L, Newton steps
# shrinking without end) says so; the diagnostics read it
KINK_STOP = "converged (hard gating: change below tol)"
# Two faces whose weights differ by at most this share of the largest weight
# are one face twice (a strong penalty's maximum merges faces to ~1e-16)
_TWIN_FACES = 1e-10
# The longest over-relaxed EM step, in plain EM steps: EM crawls along a ridge
# at most a few dozen steps long, and a longer extrapolation only risks scores
# beyond a double's range.
_MAX_OVERRELAX = 64.0


@dataclass(frozen=True)
class EMOptions:
    """Stopping rules and switches of one EM run."""

    maxiter: int = 500
    tol: float = 1e-8
    em_tol: float = 1e-3
    gtol: float = 1e-6
    newton_finish: bool = True
    # the growth of the over-relaxation of EM steps (1: plain EM steps)
    overrelax: float = 1.0
    # after each iteration: (iteration, objective, step kind, parameters)
    callback: Callable[[int, float, str, np.ndarray], None] | None = None
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
    # a parameter held at its boundary (the flip rate at 0)
    boundary: bool = False

    @property
    def n_iter(self) -> int:
        return len(self.steps)


class _Run:
    """The state of one EM run, and its kinds of iteration."""

    def __init__(self, problem, start: np.ndarray, options: EMOptions, mstep: str):
        self.problem = problem
        self.objective = problem.objective
        self.options = options
        self.params = np.asarray(start, dtype=float).copy()
        # what passes over blocks bring with each gradient: the first M-step's
        # Hessian, whatever the last run on this problem asked for
        problem.prefetch_hessian("qhess" if mstep == "newton" else None)
        self.terms = problem.terms(self.params)
        self.value = problem.objective_value(self.params, self.terms)
        if not np.isfinite(self.value):
            raise FloatingPointError(
                "the log-likelihood is not finite at the start values"
            )
        self.solver = MSTEPS[mstep]()
        self.history = [self.value]
        self.moves: list[float] = []
        self.newton_memory: dict = {}
        # the growth of the EM steps' over-relaxation, 1 where they take none:
        # the hard gate (no minorizer) and the label-flip runs (their EM step
        # also moves the flip rate)
        plain = not problem.gate.minorizes or problem.spec.flips
        self.growth = 1.0 if plain else options.overrelax
        self.eta = 1.0  # the over-relaxation of the next EM step
        self.reopened = False
        self.steps: list[str] = []
        self.newton_phase = False
        self.twins_checked = False
        self.boundary = False
        self.converged = False
        self.separated = False
        self.stopped = False  # by a rule; False at the end: maxiter ran out
        self.message = f"maximum number of iterations ({options.maxiter}) reached"
        self.path = [self.params.copy()] if options.retall else None

    def record(self, kind: str) -> None:
        self.history.append(self.value)
        self.steps.append(kind)
        if self.path is not None:
            self.path.append(self.params.copy())
        if self.options.callback is not None:
            self.options.callback(len(self.steps), self.value, kind, self.params)

    def evaluate(self, trial: np.ndarray):
        return self.problem.evaluate_objective(trial)

    def stop(self, converged: bool, message: str) -> bool:
        self.converged, self.message, self.stopped = converged, message, True
        return True

    # ------------------------------------------------------ one iteration
    def iterate(self) -> bool:
        """One iteration; True when the run ends."""
        grad = self.problem.gradient(self.params, self.terms)
        self.boundary = self.objective.at_boundary(
            self.problem, self.terms, grad, self.boundary
        )
        outcome, kind = None, "em"
        if self.newton_phase and _vanished_gradient(grad, self.problem):
            # A rank-deficient design leaves flat directions (minus the Hessian is
            # singular for ever) but a vanished gradient is then a maximum -
            # unless there is negative curvature: a saddle, e.g. two identical
            # experts, which no gradient-based step can leave.
            outcome = self._escape(grad)
            if outcome is None:
                return self.stop(True, "converged (gradient vanished)")
            kind = "escape"
        elif self.newton_phase:
            outcome, kind = self._split_twins(grad), "escape"
            if outcome is None:
                outcome = self.newton_step(grad)
                if outcome == "done":
                    return True
                kind = "newton"
        if outcome is None:
            kind = "em"
            outcome = self.objective.em_step(
                self.problem, self.params, self.terms, grad, self.solver, self.boundary
            )
        if outcome is None and self.problem.gate.minorizes:
            outcome, kind = self._escape(grad), "escape"
        if outcome is None:
            # With hard gating L has kinks where scores tie: a maximum can sit on
            # one with a non-zero one-sided gradient, and no step raising L is
            # then exactly what a (Clarke-)stationary point means.
            settled = self.problem.gate.kinked or self.small(grad)
            return self.stop(
                settled,
                "no ascent direction left (stationary point)"
                if settled
                else "stalled: no step raises L, but the gradient is not small",
            )
        return self.accept(outcome, kind, grad)

    def _escape(self, grad):
        """:func:`_escape_saddle` over the coordinates the Newton steps move
        (a flip rate held at its boundary stays there)."""
        free = self.objective.free(self.params, grad, self.boundary)
        return _escape_saddle(self, self.terms, free)

    def _split_twins(self, grad):
        """At the run's first Newton step, a step off the saddle where two
        faces coincide, or None.

        EM moves twin faces alike, so a run started from them (the
        penalty-path move's start, where a strong penalty merged two faces)
        stays on the twins' manifold, a saddle of L across it: the gradient
        has no component along the direction that parts them, only rounding
        error, and damped Newton steps take tens of iterations to amplify
        that error until the faces part (pima, K = 3: 38 of the path move's
        51 iterations), in a direction the rounding chose. One step along the
        most negative curvature parts them at once, in a direction the
        Hessian chooses (either sign gives the same fit, the faces
        swapped)."""
        if self.twins_checked:
            return None
        self.twins_checked = True
        k = self.problem.k
        faces = self.params[: self.problem.n_weights].reshape(k, -1)
        if k < 2 or not _twin_faces(faces):
            return None
        return self._escape(grad)

    def newton_step(self, grad):
        """A damped Newton step on L over the free coordinates, or None when
        none rises (then EM steps in), or ``"done"`` after a last full step
        whose gain is below rounding."""
        free = self.objective.free(self.params, grad, self.boundary)
        neg_hess = self.problem.neg_hessian(self.terms)[free, free]
        metric = self.problem.damping_of(free)
        memory = self.newton_memory
        last = memory.get("lam", 0.0)  # the damping that last worked / growth
        # On a kinked L the undamped Newton step crosses a kink and fails its
        # line search (12 trials) at almost every iteration: start from the
        # last damping, as Levenberg-Marquardt does
        start = last if self.problem.gate.kinked else 0.0
        first = damped_solve(neg_hess, grad[free], start, last, metric)
        direction, _, undamped = first
        last_step = undamped and grad[free] @ direction <= rounding_error(self.value)
        if last_step or (undamped and self._below_tol(direction)):
            # this step ends the run (taken whole; or accepted whole, by
            # stopping_rules): a pass over blocks need not bring the Hessian
            # at its point
            self.problem.prefetch_hessian("end")
        if last_step:
            # The predicted gain (Newton decrement) is below the rounding error
            # of L, so a line search cannot judge the step: take it whole, as
            # the last step of a quadratically converging Newton iteration.
            self.params = self.params.copy()
            self.params[free] += direction
            self.terms = self.problem.terms(self.params)
            self.value = self.problem.objective_value(self.params, self.terms)
            self.record("newton")
            self.stop(True, "converged (Newton decrement below rounding)")
            return "done"

        def evaluate_free(step_params, base=self.params):
            trial = base.copy()
            trial[free] = step_params
            return self.evaluate(trial)

        found = ascent_step(
            evaluate_free,
            self.params[free],
            grad[free],
            neg_hess,
            self.value,
            first,
            memory,
            adapt=self.problem.gate.kinked,
            metric=metric,
        )
        if found is None:
            return None
        new_free, new_terms, full_newton, step = found
        new_params = self.params.copy()
        new_params[free] = new_free
        return new_params, new_terms, full_newton, step

    def accept(self, outcome, kind: str, grad) -> bool:
        """Move to the outcome's point, then test the stopping rules."""
        outcome, factor = self.overrelaxed(outcome, kind)
        new_params, new_terms, full_newton, direction = outcome
        new_value = self.problem.objective_value(new_params, new_terms)
        if new_value < self.value or np.array_equal(new_params, self.params):
            # Q rose but L fell (only possible through rounding at the optimum),
            # or no coordinate moved
            settled = self.small(grad)
            return self.stop(
                settled, "converged (change below rounding)" if settled else "stalled"
            )
        rel_change = (new_value - self.value) / max(1.0, abs(self.value))
        # how far the fitted scores moved: the currency of separation, whatever
        # the scale of the diverging coefficients (rare levels have tiny ones);
        # an over-relaxed step's as its plain step's (scores are linear in the
        # weights), the movement the separation rule was set on
        moved = self.problem.score_change(self.terms, new_terms)
        self.moves.append(moved / factor)
        self.params, self.terms, self.value = new_params, new_terms, new_value
        self.record(kind)
        return self.stopping_rules(kind, rel_change, full_newton, direction)

    def overrelaxed(self, outcome, kind: str):
        """The step ``outcome`` of ``kind`` and its length in plain steps: an
        EM step or, when it raises ``L`` more, the same step ``eta`` times as
        long (adaptive over-relaxation, Salakhutdinov and Roweis 2003). Where
        EM crawls along a ridge its steps keep their direction, and the longer
        step follows it at the cost of one more evaluation of ``L`` (on blocks,
        a pass that also brings the next iteration's derivatives): pima at
        K = 2 takes 18 iterations with it, 42 without, though to another
        maximum (docs/benchmarks/learned.md, "Over-relaxed EM steps", says why
        it is not the default). Only the EM phase of a run that takes it
        (:attr:`growth` above 1) is over-relaxed, not the EM steps that stand
        in for a failed Newton step."""
        if self.growth <= 1.0 or kind != "em" or self.newton_phase:
            self.eta = 1.0
            return outcome, 1.0
        eta, self.eta = self.eta, min(self.eta * self.growth, _MAX_OVERRELAX)
        if eta == 1.0:
            return outcome, 1.0
        new_params, new_terms, full_newton, direction = outcome
        plain_value = self.problem.objective_value(new_params, new_terms)
        longer = self.params + eta * (new_params - self.params)
        value, terms = self.evaluate(longer)
        if value > plain_value:  # False for NaN: the plain step
            return (longer, terms, full_newton, direction), eta
        self.eta = 1.0
        return outcome, 1.0

    def stopping_rules(self, kind, rel_change, full_newton, direction) -> bool:
        options = self.options
        if kind == "newton" and full_newton and self._below_tol(direction):
            return self.stop(True, "converged (Newton step below tol)")
        if _diverging(self.history, self.moves):
            self.separated = True
            return self.stop(False, self.objective.diverging_message)
        if self.problem.gate.kinked and rel_change <= options.tol:
            # piecewise smooth L: at a maximum on a kink Newton steps shrink
            # without end, so the hard model also stops on a tiny relative change
            # - unless the change was small because the trust region had shrunk
            # (ascent_step's adapt): then, once a run, one more step from no
            # damping decides
            if (
                kind == "newton"
                and self.newton_memory.get("lam", 0.0) > 0.0
                and not self.reopened
            ):
                self.newton_memory["lam"] = 0.0
                self.reopened = True
                return False
            return self.stop(True, KINK_STOP)
        if kind != "em":
            return False
        if rel_change <= options.em_tol and options.newton_finish:
            self.newton_phase = True
            # the next gradient's pass brings the Hessian of L, not of Q
            self.problem.prefetch_hessian("hess")
        settles = not options.newton_finish or self.objective.settles_on_em_steps
        if settles and rel_change <= options.tol:
            grad = self.problem.gradient(self.params, self.terms)
            if self.small(grad[self.objective.free(self.params, grad, self.boundary)]):
                return self.stop(True, "converged (EM: small change and gradient)")
        return False

    def _below_tol(self, direction) -> bool:
        """A Newton step this short, taken whole, ends the run."""
        return bool(np.max(np.abs(direction)) <= self.options.tol)

    def small(self, grad) -> bool:
        """Mean score per observation below ``gtol`` (standardised units)."""
        return bool(
            np.max(np.abs(grad))
            <= self.options.gtol * max(1, self.problem.source.weight_sum)
        )

    def trace(self) -> EMTrace:
        # a run stopped by maxiter may be climbing to infinity too
        settled = self.converged or not self.stopped
        if settled and separating(self.problem, self.params, self.terms):
            # The gradient and the curvature along a direction to infinity vanish
            # together (both like exp(-margin)), so every test above can pass at
            # a separated fit whose weights are only "large": it is no maximum.
            self.converged, self.separated = False, True
            self.message = (
                "separation: the likelihood keeps rising, ever more slowly, along "
                "a direction that only moves perfectly fitted observations (the "
                "maximum is at infinity)"
            )
        # only the gradient: a pass for it would also bring the Hessian the
        # last iteration asked for, which nothing reads (the results start
        # from a point of their own; adult: 2.5 ms a run)
        self.problem.prefetch_hessian("end")
        final_grad = self.problem.gradient(self.params, self.terms)
        free = self.objective.free(self.params, final_grad, self.boundary)
        return EMTrace(
            params=self.params,
            objective=self.value,
            llf_history=self.history,
            steps=self.steps,
            converged=self.converged,
            message=self.message,
            max_abs_score=float(np.max(np.abs(final_grad[free]))),
            n_em=self.steps.count("em"),
            n_newton=self.steps.count("newton") + self.steps.count("escape"),
            path=self.path,
            separated=self.separated,
            boundary=self.boundary,
        )


def run_em(problem, start: np.ndarray, options: EMOptions, mstep: str = "newton"):
    """Maximise the (penalised) objective of ``problem`` from ``start``."""
    run = _Run(problem, start, options, mstep)
    for _ in range(options.maxiter):
        if run.iterate():
            break
    trace = run.trace()
    problem.end_run()
    return trace


def _diverging(history: list[float], moves: list[float]) -> bool:
    """The signature of separation: over the last iterations some fitted score
    kept moving by more than 0.5 per iteration while L rose by less than 1e-5
    relative: the likelihood is flat along a direction to infinity."""
    if len(moves) < 2 * _DIVERGENCE_WINDOW:
        return False
    gain = (history[-1] - history[-1 - _DIVERGENCE_WINDOW]) / max(1.0, abs(history[-1]))
    return gain < 1e-5 and min(moves[-_DIVERGENCE_WINDOW:]) > 0.5


def separating(problem, params: np.ndarray, terms) -> bool:
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
    and those of an expert responsible for no observation, do not count), in the
    faces' weights. It is of order one at a regular maximum and of order
    ``exp(-margin)`` along a separating direction. The point is separated when
    ``lambda_min`` is below ``1e-8``, most of the movement of that direction
    falls on observations fitted with probability above ``1 - 1e-8``, and the
    Newton step along it (slope over curvature) still moves some score by more
    than a quarter: a flat direction at a regular maximum has a vanishing slope
    and a tiny step. Without any perfectly fitted observation (ordinary data)
    nothing beyond one comparison is computed.
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
    faces = slice(0, gram.shape[0])
    neg_hess = whiten.T @ problem.neg_hessian(terms)[faces, faces] @ whiten
    curvature, directions = np.linalg.eigh(0.5 * (neg_hess + neg_hess.T))
    if curvature[0] > _FLAT_CURVATURE:
        return False
    flat = whiten @ directions[:, 0]
    moved_perfect = flat @ gram_perfect @ flat
    if moved_perfect <= 0.5:  # of v'Gv = 1
        return False
    if curvature[0] <= 0.0:
        # underflowed along with the slope (every row fitted perfectly): the
        # step below would read 0 / 0 as no step
        return True
    # A flat direction alone can be a regular, if ill-conditioned, maximum (a
    # sharp face with few observations near it). Along a direction to infinity
    # the slope vanishes with the curvature, so the Newton step along it still
    # moves the scores by about one unit of margin; at a maximum it is tiny.
    slope = float(problem.gradient(params, terms)[faces] @ flat)
    step = abs(slope) / max(float(curvature[0]), np.finfo(float).tiny)
    return bool(step * problem.max_abs_move(flat) > _SEPARATING_STEP)


def rounding_error(value: float) -> float:
    """What the rounding error of a sum like L amounts to."""
    return 64.0 * np.finfo(float).eps * max(1.0, abs(value))


def _escape_saddle(run: _Run, terms, free: slice = slice(None)):
    """A step along the direction of most negative curvature of L over the
    ``free`` coordinates, when there is one (both signs tried, halving), or
    ``None`` at a genuine maximum."""
    neg_hess = run.problem.neg_hessian(terms)[free, free]
    eigenvalues, eigenvectors = np.linalg.eigh(neg_hess)
    scale = max(float(np.max(np.abs(eigenvalues))), np.finfo(float).tiny)
    if eigenvalues[0] >= -1e-8 * scale:
        return None
    direction = np.zeros_like(run.params)
    direction[free] = eigenvectors[:, 0]
    step = 1.0
    for _ in range(MAX_HALVINGS):
        for sign in (1.0, -1.0):
            trial = run.params + sign * step * direction
            trial_value, trial_terms = run.evaluate(trial)
            if trial_value > run.value + rounding_error(run.value):
                return trial, trial_terms, False, sign * step * direction
        step *= 0.5
    return None


def _twin_faces(faces: np.ndarray) -> bool:
    """Whether two faces' weights (rows) agree to :data:`_TWIN_FACES` of the
    largest weight."""
    scale = max(1.0, float(np.max(np.abs(faces))))
    gaps = np.max(np.abs(faces[:, None, :] - faces[None, :, :]), axis=-1)
    np.fill_diagonal(gaps, np.inf)
    return bool(np.min(gaps) <= _TWIN_FACES * scale)


def _vanished_gradient(grad: np.ndarray, problem) -> bool:
    """Mean score per observation at rounding level (standardised coordinates)."""
    return bool(np.max(np.abs(grad)) <= 1e-12 * max(1, problem.source.weight_sum))
