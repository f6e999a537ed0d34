"""Start values for EM, in the standardised coordinates the engine works in.

* ``"kmeans"``: cluster the outside class into K groups (k-means on the
  standardised features); hyperplane k is a (lightly ridged) logistic fit of the
  inside class against the outside class in which cluster k has full weight and
  the other clusters weight 0.3. Each face of a polyhedron separates the inside
  from the outside points beyond that face; the down-weighted rest keeps each
  face from straying into the other clusters, which on the UCI sets gave better
  final likelihoods than ignoring them (docs/benchmarks/learned.md, "Start
  values"), and on simulated polytopes recovered every face.
* ``"directions"``: as ``"kmeans"``, but the outside points are clustered by
  their *direction* from the inside class's mean (k-means on unit vectors), so
  points beyond the same face group together however far out they lie.
* ``"logit"``: one logistic fit, replicated K times and perturbed.
* ``"random"``: standard normal weights.
* ``"mixed"``: restarts cycle through ``"kmeans"``, ``"directions"`` and
  ``"logit"`` (a single start is ``"kmeans"``). At the same number of runs it
  found better maxima than reseeded k-means about as often as worse ones
  (docs/benchmarks/learned.md, "Restart strategies"), so it is a second
  opinion, not the default.

Re-seat the idlest face: a move out of a local maximum EM cannot leave.

A fit with many faces can end with two faces on one side of the polyhedron (or
one face owning nothing) while the outside points beyond another side are
called inside. That is a local maximum: no small change of the idle face
reaches the missed points, so EM stays. The move drops the face whose gate owns
the least of the outside class (``sum_n g_nk`` over the outside points),
fits a new face to the inside class against the outside points the fit calls
inside, runs EM from there, and keeps the result only if it raises the
objective; it repeats from the better fit until a move fails, there is nothing
left to re-seat, or ``max_moves`` moves were made. Which face is idle and
which points are missed is read on a sample of at most 5000 rows, the rows the
start values are computed from, so that a fit by row blocks (or on Dask) makes
the same moves as one in memory, at a cost that does not grow with N; each
move's EM run uses every row.

The move is split-and-merge EM's idea (Ueda et al., 2000, *Neural Computation*
12, 2109-2128) in the form a polyhedron suggests: the face to merge away is the
one that owns least, and where to split is read off the misclassified outside
points rather than searched for.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from scipy.cluster.vq import kmeans2
from scipy.special import expit, log_expit

from ._design import DesignMatrix, as_design
from ._em import EMOptions, EMTrace, rounding_error, run_em
from ._msteps import cholesky_solve
from ._penalty import Ridge
from ._problem import Problem
from ._rows import InMemoryRows

__all__ = [
    "INIT_METHODS",
    "START_MAX_ROWS",
    "best_start",
    "kept_run",
    "make_start",
    "reseat_faces",
    "sample_rows",
    "start_methods",
]

INIT_METHODS = ("kmeans", "directions", "logit", "random", "mixed")
MIXED_CYCLE = ("kmeans", "directions", "logit")

# A ridge of one pseudo-observation per standardised slope: enough to keep start
# values finite on separable subsets, negligible for the final fit.
_START_RIDGE = 1.0
_PERTURBATION = 0.5
_OTHER_CLUSTERS_WEIGHT = 0.3
# Start values come from a random subsample of this many rows on larger data: they
# only need to point EM at the right basin, and their cost then stops growing with
# n (on adult they took a fifth of the fit).
START_MAX_ROWS = 5000
# the starts' ridge logistic fits: Newton steps, halvings of one step, and the
# step (standardised units) below which the fit has converged
_START_NEWTON_STEPS = 100
_START_HALVINGS = 30
_START_TOL = 1e-10


def fit_logistic(exog, y_pm, metric: Ridge, weights=None) -> np.ndarray:
    r"""Weighted ridge logistic regression (PLUME with K = 1), for start values.

    Maximises :math:`\sum_n w_n \log \sigma(y_n x_n' b) - \tfrac12 b' R b`
    (``R``: the penalty's ``metric``, :mod:`plumestats._penalty`, at one
    pseudo-observation: 1 per slope, none on the intercept, a term of several
    columns by its correlation) by Newton's method with step halving. The
    problem is strictly concave, so this finds the engine's K = 1 fit without
    its machinery: a start needs K of these fits, and on small data the
    engine's per-iteration bookkeeping made the starts a fifth of the fit's
    time.
    """
    matrix = as_design(exog)
    design = matrix.values
    y = np.asarray(y_pm, dtype=float)
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=float)
    ridge = metric.scaled(_START_RIDGE)
    params = np.zeros(design.shape[1])
    value, scores = _ridge_logistic_value(design, y, w, ridge, params)
    for _ in range(_START_NEWTON_STEPS):
        wrong = expit(-y * scores)  # the probability of the other class
        grad = design.T @ (w * y * wrong) - ridge.times(params)
        # the Gram by the design's indicator split where it has one (adult:
        # 96 columns, most of them one-hot)
        neg_hess = matrix.gram(w * wrong * (1.0 - wrong))
        ridge.add_to(neg_hess)
        step = _newton_direction(neg_hess, grad)
        for _ in range(_START_HALVINGS):
            trial_value, scores = _ridge_logistic_value(
                design, y, w, ridge, params + step
            )
            if trial_value >= value:
                break
            step = 0.5 * step
        else:
            break  # no step rises: the maximum, to rounding
        gain, params, value = trial_value - value, params + step, trial_value
        # a gain below rounding: the maximum, or an intercept running off to
        # infinity on one class (where ever larger starts only overflow later)
        if np.max(np.abs(step)) <= _START_TOL or gain <= rounding_error(value):
            break
    return params


def _newton_direction(neg_hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """``neg_hess^{-1} grad`` by Cholesky; least squares where ``neg_hess`` is
    not positive definite (an unpenalised intercept on one class) or not
    finite. LAPACK's Cholesky directly, as ``scipy.linalg.cho_factor`` and
    ``cho_solve`` call it (the same numbers) without their wrappers' checks,
    about a fifth of pima's start under cProfile."""
    if np.isfinite(neg_hess).all() and np.isfinite(grad).all():
        direction = cholesky_solve(neg_hess, grad)
        if direction is not None:
            return direction
    return np.linalg.lstsq(neg_hess, grad, rcond=None)[0]


def _ridge_logistic_value(design, y, w, ridge: Ridge, params) -> tuple:
    """The penalised log-likelihood at ``params``, and the scores there (the
    next Newton step's, when the step is taken)."""
    scores = design @ params
    fit = float(w @ log_expit(y * scores) - 0.5 * ridge.diagonal @ params**2)
    return fit - ridge.coupling(params), scores


def start_methods(init: str, n_init: int) -> list[str]:
    """The start method of each of ``n_init`` EM runs."""
    if init == "mixed":
        return [MIXED_CYCLE[run % len(MIXED_CYCLE)] for run in range(n_init)]
    return [init] * n_init


def make_start(
    method: str,
    exog: np.ndarray,
    y_pm: np.ndarray,
    k: int,
    metric: Ridge,
    rng: np.random.Generator,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Hyperplane-major start vector of length ``k * exog.shape[1]``
    (``weights``: the rows' frequency weights; ``metric``: one face's
    penalty metric, :func:`plumestats._penalty.term_metrics`)."""
    p = exog.shape[1]
    if method == "random":
        return rng.standard_normal(k * p)
    exog, y_pm, weights = sample_rows(exog, y_pm, rng, weights)
    if method in ("kmeans", "directions") and k > 1:
        start = _kmeans_start(
            exog,
            y_pm,
            k,
            metric,
            rng,
            by_direction=method == "directions",
            weights=weights,
        )
        if start is not None:
            return start
    base = fit_logistic(exog, y_pm, metric, weights)
    if k == 1:
        return base
    noise = _PERTURBATION * rng.standard_normal((k, p))
    return (base[None, :] + noise).ravel()


def sample_rows(exog, y_pm: np.ndarray, rng: np.random.Generator, weights=None):
    """At most :data:`START_MAX_ROWS` random rows of a design, in their order
    (all rows of a smaller one), as a :class:`DesignMatrix`, their outcomes
    and their frequency weights (``None`` without). Rows of weight 0 are left
    out first (they are not part of the fit), as a fit by row blocks leaves
    them out (:func:`plumestats._fitting.start_sample`): both draw the same
    rows."""
    if weights is not None and not np.all(weights > 0):
        kept = np.flatnonzero(weights > 0)
        values = exog.values if isinstance(exog, DesignMatrix) else exog
        exog, y_pm, weights = values[kept], y_pm[kept], weights[kept]
    if exog.shape[0] > START_MAX_ROWS:
        rows = np.sort(rng.choice(exog.shape[0], START_MAX_ROWS, replace=False))
        values = exog.values if isinstance(exog, DesignMatrix) else exog
        exog, y_pm = values[rows], y_pm[rows]
        weights = None if weights is None else weights[rows]
    return as_design(exog), y_pm, weights


def _kmeans_start(exog, y_pm, k, metric, rng, by_direction=False, weights=None):
    """One face per k-means cluster of the outside class (the clusters of
    its distinct rows: the weights enter the faces' logistic fits), by the
    distances of the penalty's ``metric`` (a factor's clusters then do not
    depend on its reference level)."""
    varying = np.ptp(exog.values, axis=0) > 0
    outside = y_pm < 0
    if outside.sum() < k or not varying.any():
        return None
    points = metric.whiten(exog.values[outside])[:, varying]
    if by_direction:
        inside = metric.whiten(exog.values[~outside])[:, varying]
        points = _directions(points, inside)
    seed = int(rng.integers(2**31 - 1))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # an empty or degenerate clustering (fewer distinct points than k) is
        # handled below by falling back to the "logit" start
        warnings.simplefilter("ignore", UserWarning)
        _, labels = kmeans2(points, k, seed=seed, minit="++")
    if np.bincount(labels, minlength=k).min() == 0:
        return None
    outside_rows = np.flatnonzero(outside)
    faces = []
    for cluster in range(k):
        observation_weights = np.ones(y_pm.size) if weights is None else weights.copy()
        observation_weights[outside_rows[labels != cluster]] *= _OTHER_CLUSTERS_WEIGHT
        faces.append(fit_logistic(exog, y_pm, metric, weights=observation_weights))
    return np.concatenate(faces)


def _directions(outside: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Unit vectors from the inside class's mean to each outside point."""
    centre = inside.mean(axis=0) if inside.shape[0] else outside.mean(axis=0)
    offsets = outside - centre
    lengths = np.linalg.norm(offsets, axis=1, keepdims=True)
    # a point at the centre has no direction; it stays at the origin
    return np.divide(offsets, lengths, out=np.zeros_like(offsets), where=lengths > 0)


# log(1/2): an outside observation below it is called inside by the fit
_LOG_HALF = np.log(0.5)


def reseat_faces(
    problem,
    sample: tuple,
    best: EMTrace,
    options: EMOptions,
    mstep: str,
    max_moves: int,
) -> list[EMTrace]:
    """The EM runs of up to ``max_moves`` re-seating moves from ``best``.

    ``problem`` is the fit's (in memory or by blocks); ``sample`` the
    standardised rows ``(exog, y_pm, weights)`` the moves are read on. Returns every
    run made (accepted or not), in order; the caller keeps the best objective
    among them and ``best``.
    """
    on_sample = Problem(
        InMemoryRows.standardised(*sample), replace(problem.spec, alpha=0.0)
    )
    runs: list[EMTrace] = []
    current = best
    for _ in range(max_moves):
        start = _reseated_start(on_sample, current.params, problem.metrics.penalty)
        if start is None:
            break
        trace = run_em(problem, start, options, mstep)
        runs.append(trace)
        if not raises(trace, current):
            break
        current = trace
    return runs


def kept_run(best: EMTrace, moves: list[EMTrace]) -> EMTrace:
    """The run a fit reports: ``best`` (of its starts), or the last of the
    re-seating ``moves`` (in order) that raised the objective of the run kept
    before it (:func:`raises`)."""
    for move in moves:
        if raises(move, best):
            best = move
    return best


def best_start(runs: list[EMTrace]) -> EMTrace:
    """The run of the starts a fit keeps: the first, unless a later one
    :func:`raises` it. Runs that end at one maximum tie to rounding, which
    differs between the rows in memory, by blocks and on Dask: picking the
    highest would report another run's path (its iterations, its history)
    on each."""
    return kept_run(runs[0], runs[1:])


def raises(run: EMTrace, than: EMTrace) -> bool:
    """Whether ``run`` ends higher than ``than`` by more than re-finding the
    same maximum can: 1e-8 of the objective (two fits of one maximum agree to
    about 1e-10; on a flat ridge of maxima a move can gain by rounding, and
    the fits by blocks and in memory must keep the same run)."""
    return run.objective > than.objective + 1e-8 * max(1.0, abs(than.objective))


def _reseated_start(
    problem: Problem, params: np.ndarray, metric: Ridge
) -> np.ndarray | None:
    """``params`` with its idlest face replaced by a fit to the missed outside
    points of ``problem`` (the sample), or None when the fit misses none."""
    terms = problem.rows(params)
    outside = problem.source.y_pm < 0
    missed = outside & (terms.loglikeobs < _LOG_HALF)
    if not missed.any():
        return None
    # what a face is for is the outside points beyond it: a face that owns
    # inside points only is idle
    idle = int(np.argmin(terms.gate.T @ outside))
    # the new face sees the inside class and the missed outside points only:
    # the other outside points are already outside some face
    weights = np.where(outside & ~missed, 0.0, 1.0)
    if problem.source.weights is not None:
        weights *= problem.source.weights
    face = fit_logistic(
        problem.source.design, problem.source.y_pm, metric, weights=weights
    )
    start = np.array(params, dtype=float, copy=True).reshape(problem.k, -1)
    start[idle] = face
    return start.ravel()
