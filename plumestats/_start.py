"""Start values for EM, in the standardised coordinates the engine works in.

* ``"kmeans"``: cluster the outside class into K groups (k-means on the
  standardised features); hyperplane k is a (lightly ridged) logistic fit of the
  inside class against the outside class in which cluster k has full weight and
  the other clusters weight 0.3. Each face of a polyhedron separates the inside
  from the outside points beyond that face; the down-weighted rest keeps each
  face from straying into the other clusters, which on the UCI sets gave better
  final likelihoods than ignoring them (``benchmarks/init_compare.py``), and on
  simulated polytopes recovered every face.
* ``"directions"``: as ``"kmeans"``, but the outside points are clustered by
  their *direction* from the inside class's mean (k-means on unit vectors), so
  points beyond the same face group together however far out they lie.
* ``"logit"``: one logistic fit, replicated K times and perturbed.
* ``"random"``: standard normal weights.
* ``"mixed"``: restarts cycle through ``"kmeans"``, ``"directions"`` and
  ``"logit"`` (a single start is ``"kmeans"``). At the same number of runs it
  found better maxima than reseeded k-means about as often as worse ones
  (``benchmarks/restart_strategies.py``), so it is a second opinion, not the
  default.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.cluster.vq import kmeans2

from ._design import DesignMatrix, as_design
from ._em import EMOptions, run_em
from ._problem import Problem
from ._rows import InMemoryRows
from ._spec import ModelSpec, SoftGate

__all__ = [
    "INIT_METHODS",
    "START_MAX_ROWS",
    "make_start",
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


def _slope_ridge(n_cols: int, intercept_index: int | None) -> np.ndarray:
    ridge = np.full(n_cols, _START_RIDGE)
    if intercept_index is not None:
        ridge[intercept_index] = 0.0
    return ridge


def fit_logistic(exog, y_pm, intercept_index=None, weights=None) -> np.ndarray:
    """Weighted ridge logistic regression (PLUME with K = 1), for start values."""
    ridge = _slope_ridge(exog.shape[1], intercept_index)
    rows = InMemoryRows.standardised(exog, y_pm, weights=weights)
    problem = Problem(rows, ModelSpec(1, SoftGate(1.0)), ridge=ridge)
    trace = run_em(problem, np.zeros(exog.shape[1]), EMOptions(maxiter=100))
    return trace.params


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
    intercept_index: int | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """Hyperplane-major start vector of length ``k * exog.shape[1]``."""
    p = exog.shape[1]
    if method == "random":
        return rng.standard_normal(k * p)
    exog, y_pm = sample_rows(exog, y_pm, rng)
    if method in ("kmeans", "directions") and k > 1:
        start = _kmeans_start(
            exog, y_pm, k, intercept_index, rng, by_direction=method == "directions"
        )
        if start is not None:
            return start
    base = fit_logistic(exog, y_pm, intercept_index)
    if k == 1:
        return base
    noise = _PERTURBATION * rng.standard_normal((k, p))
    return (base[None, :] + noise).ravel()


def sample_rows(exog, y_pm: np.ndarray, rng: np.random.Generator):
    """At most :data:`START_MAX_ROWS` random rows of a design, in their order
    (all rows of a smaller one), as a :class:`DesignMatrix`."""
    if exog.shape[0] > START_MAX_ROWS:
        rows = np.sort(rng.choice(exog.shape[0], START_MAX_ROWS, replace=False))
        values = exog.values if isinstance(exog, DesignMatrix) else exog
        exog, y_pm = values[rows], y_pm[rows]
    return as_design(exog), y_pm


def _kmeans_start(exog, y_pm, k, intercept_index, rng, by_direction=False):
    varying = np.ptp(exog.values, axis=0) > 0
    outside = y_pm < 0
    if outside.sum() < k or not varying.any():
        return None
    points = exog.values[outside][:, varying]
    if by_direction:
        points = _directions(points, exog.values[~outside][:, varying])
    seed = int(rng.integers(2**31 - 1))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # an empty or degenerate clustering (fewer distinct points than k) is
        # handled below by falling back to the "logit" start
        warnings.simplefilter("ignore", UserWarning)
        _, labels = kmeans2(points, k, seed=seed, minit="++")
    if np.bincount(labels, minlength=k).min() == 0:
        return None
    outside_rows = np.flatnonzero(outside)
    weights = []
    for cluster in range(k):
        observation_weights = np.ones(y_pm.size)
        observation_weights[outside_rows[labels != cluster]] = _OTHER_CLUSTERS_WEIGHT
        weights.append(
            fit_logistic(exog, y_pm, intercept_index, weights=observation_weights)
        )
    return np.concatenate(weights)


def _directions(outside: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Unit vectors from the inside class's mean to each outside point."""
    centre = inside.mean(axis=0) if inside.shape[0] else outside.mean(axis=0)
    offsets = outside - centre
    lengths = np.linalg.norm(offsets, axis=1, keepdims=True)
    # a point at the centre has no direction; it stays at the origin
    return np.divide(offsets, lengths, out=np.zeros_like(offsets), where=lengths > 0)
