r"""Uniform draws from a halfspace's version space: the Bayes oracle's sampler.

A hyperplane ``w`` (in R^D, intercept first) is consistent with noise-free
signed points :math:`a_i = s_i\,[1, x_i]` when :math:`a_i' w \ge 0` for every
i. Under a prior uniform on the direction of ``w`` (the unit sphere), the
posterior given those points is uniform on the *version space*

.. math::

    V = \{w : \lVert w \rVert = 1,\ A w \ge 0\},

and the Bayes-optimal prediction for a new point is the majority vote of V:
its posterior probability of lying on the positive side is the share of V
that puts it there. ``polyhedral_oracle.py`` uses these draws to ask how well
*any* learner could do with the sample it has.

How
    Hit-and-run in the gnomonic chart around an interior direction ``c``:
    ``w(z) = c + B z`` with ``B`` an orthonormal basis of ``c``'s complement,
    so V becomes a convex polytope in R^(D-1) (bounded when V lies within the
    open hemisphere around ``c``, as any version space of a few hundred points
    does). The uniform law on the sphere has density proportional to
    :math:`(1 + \lVert z \rVert^2)^{-D/2}` in that chart; each step picks a
    direction, finds the chord through the polytope exactly from the linear
    constraints, and draws the step on the chord from that density by
    rejection (the bound is the density at the chord's point nearest the
    origin, so the draw is exact). Directions are Gaussian, isotropic at first
    and then shaped by the covariance of the burn-in draws, which rounds a thin
    version space; the shape is fixed before the kept draws, so they come from
    a valid Markov chain.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

# Slacks are updated incrementally; recomputing them this often keeps the
# rounding error of thousands of small steps from piling up.
_RESYNC_EVERY = 500


def interior_direction(signed: np.ndarray) -> np.ndarray:
    """A unit vector strictly inside the version space ``{w : signed @ w >= 0}``.

    The direction that maximises the smallest margin of the row-normalised
    points, within the box ``|w_j| <= 1`` (a linear programme).

    Raises
    ------
    ValueError
        If no hyperplane separates the points with a positive margin: the
        version space is empty (noisy labels) or has no interior.
    """
    rows = signed / np.linalg.norm(signed, axis=1, keepdims=True)
    n, dim = rows.shape
    objective = np.zeros(dim + 1)
    objective[-1] = -1.0  # maximise the margin t
    constraints = np.hstack([-rows, np.ones((n, 1))])  # t - a_i'w <= 0
    bounds = [(-1.0, 1.0)] * dim + [(None, 1.0)]
    solution = linprog(
        objective, A_ub=constraints, b_ub=np.zeros(n), bounds=bounds, method="highs"
    )
    if not solution.success or solution.x[-1] <= 1e-12:
        raise ValueError(
            "no hyperplane separates these points with a positive margin; the "
            "version space is empty, so it has nothing to sample (noisy labels?)"
        )
    direction = solution.x[:dim]
    return direction / np.linalg.norm(direction)


def _chord(slack: np.ndarray, rate: np.ndarray) -> tuple[float, float]:
    """The step sizes t with ``slack + t * rate >= 0`` for every row."""
    with np.errstate(divide="ignore", invalid="ignore"):
        limits = -slack / rate
    lower = limits[rate > 0].max(initial=-np.inf)
    upper = limits[rate < 0].min(initial=np.inf)
    if not (np.isfinite(lower) and np.isfinite(upper)):
        raise ValueError(
            "the version space reaches the edge of its chart (too few points "
            "for a hemisphere around the interior direction to hold it)"
        )
    # a slack rounded just below zero must not leave an empty chord
    return min(lower, 0.0), max(upper, 0.0)


def _step_on_chord(
    z: np.ndarray,
    direction: np.ndarray,
    lower: float,
    upper: float,
    exponent: float,
    rng: np.random.Generator,
) -> float:
    """Draw t in [lower, upper] with density ``(1 + |z + t v|^2)^(-exponent)``."""
    along = float(z @ direction)
    length2 = float(direction @ direction)
    base = float(z @ z)

    def log_density(t: float) -> float:
        return -exponent * np.log1p(base + 2 * t * along + t * t * length2)

    nearest = float(np.clip(-along / length2, lower, upper))
    ceiling = log_density(nearest)
    while True:
        t = rng.uniform(lower, upper)
        if np.log(rng.random()) <= log_density(t) - ceiling:
            return t


def sample_version_space(
    signed: np.ndarray,
    n_draws: int,
    *,
    thin: int = 10,
    burn_in: int = 2000,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draws from the uniform law on the version space of ``signed``.

    Parameters
    ----------
    signed : ndarray, shape (n, D)
        Rows :math:`s_i [1, x_i]`; a hyperplane ``w`` is consistent with them
        when ``signed @ w >= 0``.
    n_draws : int
        Number of draws returned.
    thin : int
        Hit-and-run steps per returned draw.
    burn_in : int
        Steps before the first draw; the first half uses isotropic directions,
        the second half directions shaped by the first half's draws, and the
        kept draws directions shaped by the second half's.
    rng : Generator
        Random numbers.

    Returns
    -------
    ndarray, shape (n_draws, D)
        Unit vectors, each consistent with every row of ``signed``.
    """
    signed = np.asarray(signed, dtype=float)
    centre = interior_direction(signed)
    dim = centre.size
    basis = np.linalg.qr(np.column_stack([centre, np.eye(dim)]))[0][:, 1:dim]
    offset, chart = signed @ centre, signed @ basis
    exponent = dim / 2.0
    z = np.zeros(dim - 1)
    shape = np.eye(dim - 1)
    draws = np.empty((n_draws, dim))
    half = burn_in // 2
    visited = np.empty((max(half, 1), dim - 1))
    total = 2 * half + n_draws * thin
    slack = offset.copy()
    for step in range(total):
        if step in (half, 2 * half) and half > 1:
            # round the polytope: directions from the covariance of the last
            # half of the burn-in (a small ridge keeps it positive definite)
            covariance = np.cov(visited, rowvar=False).reshape(dim - 1, dim - 1)
            ridge = 1e-12 * max(np.trace(covariance), 1e-300)
            shape = np.linalg.cholesky(covariance + ridge * np.eye(dim - 1))
        if step % _RESYNC_EVERY == 0:
            slack = offset + chart @ z
        direction = shape @ rng.standard_normal(dim - 1)
        rate = chart @ direction
        lower, upper = _chord(slack, rate)
        t = _step_on_chord(z, direction, lower, upper, exponent, rng)
        z = z + t * direction
        slack = slack + t * rate
        if step < 2 * half:
            visited[step % half] = z
        elif (step - 2 * half) % thin == thin - 1:
            w = centre + basis @ z
            draws[(step - 2 * half) // thin] = w / np.linalg.norm(w)
    return draws
