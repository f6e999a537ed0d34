"""Start values for EM, in the standardised coordinates the engine works in.

* ``"kmeans"``: cluster the outside class into K groups; hyperplane k is a (lightly
  ridged) logistic fit of the inside class against cluster k. Each face of a
  polyhedron separates the inside from the outside points beyond that face, and
  seen from the inside those points form a cone, so the clustering is on
  directions: k-means of the outside points' unit vectors from the inside class's
  mean (spherical k-means). On simulated polytopes this recovered every face more
  often than k-means on the raw points.
* ``"logit"``: one logistic fit, replicated K times and perturbed.
* ``"random"``: standard normal weights.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.cluster.vq import kmeans2

from ._em import EMOptions, Problem, run_em

__all__ = ["INIT_METHODS", "make_start"]

INIT_METHODS = ("kmeans", "logit", "random")

# A ridge of one pseudo-observation per standardised slope: enough to keep start
# values finite on separable subsets, negligible for the final fit.
_START_RIDGE = 1.0
_PERTURBATION = 0.5


def _slope_ridge(n_cols: int, intercept_index: int | None, k: int = 1) -> np.ndarray:
    ridge = np.full(n_cols, _START_RIDGE)
    if intercept_index is not None:
        ridge[intercept_index] = 0.0
    return np.tile(ridge, k)


def fit_logistic(exog, y_pm, intercept_index=None, ridge=None) -> np.ndarray:
    """Ridge logistic regression (PLUME with K = 1), used for start values."""
    if ridge is None:
        ridge = _slope_ridge(exog.shape[1], intercept_index)
    problem = Problem(exog, y_pm, k=1, gamma=1.0, ridge=ridge)
    trace = run_em(problem, np.zeros(exog.shape[1]), EMOptions(maxiter=100))
    return trace.params


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
    if method == "kmeans" and k > 1:
        start = _kmeans_start(exog, y_pm, k, intercept_index, rng)
        if start is not None:
            return start
    base = fit_logistic(exog, y_pm, intercept_index)
    if k == 1:
        return base
    noise = _PERTURBATION * rng.standard_normal((k, p))
    return (base[None, :] + noise).ravel()


def _kmeans_start(exog, y_pm, k, intercept_index, rng):
    varying = np.ptp(exog, axis=0) > 0
    outside = y_pm < 0
    if outside.sum() < k or not varying.any():
        return None
    points = exog[:, varying]
    directions = points[outside] - points[~outside].mean(axis=0)
    lengths = np.linalg.norm(directions, axis=1, keepdims=True)
    directions = directions / np.where(lengths > 0, lengths, 1.0)
    seed = int(rng.integers(2**31 - 1))
    with warnings.catch_warnings():
        # an empty cluster is handled below (fall back to "logit")
        warnings.simplefilter("ignore", UserWarning)
        _, labels = kmeans2(directions, k, seed=seed, minit="++")
    inside_rows = np.flatnonzero(~outside)
    outside_rows = np.flatnonzero(outside)
    if np.bincount(labels, minlength=k).min() == 0:
        return None
    weights = []
    for cluster in range(k):
        rows = np.concatenate([inside_rows, outside_rows[labels == cluster]])
        weights.append(fit_logistic(exog[rows], y_pm[rows], intercept_index))
    return np.concatenate(weights)
