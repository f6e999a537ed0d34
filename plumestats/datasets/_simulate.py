"""Simulated data from a known polyhedron, for examples, tests and benchmarks."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["simulate_polyhedron"]


def _random_normals(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    if d == 2:
        # evenly spread directions with jitter: every face of the polygon is active
        angles = 2 * np.pi * (np.arange(k) + rng.uniform(-0.2, 0.2, k)) / k
        angles += rng.uniform(0, 2 * np.pi)
        return np.column_stack([np.cos(angles), np.sin(angles)])
    normals = rng.standard_normal((k, d))
    return normals / np.linalg.norm(normals, axis=1, keepdims=True)


def simulate_polyhedron(
    nobs: int,
    d: int = 2,
    k: int = 3,
    noise: float = 0.0,
    inside_share: float = 0.5,
    random_state=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    r"""Points labelled by whether they lie inside a random polyhedron.

    Features are standard normal, ``x ~ N(0, I_d)``. The polyhedron is
    :math:`\{x : r - u_k' x \ge 0,\ k = 1..K\}` with unit normals :math:`u_k`
    and one offset :math:`r` chosen so that about ``inside_share`` of the
    population lies inside; every face is checked to bound a fair share of the
    outside points, so that all K hyperplanes are identifiable. ``y = 1`` inside;
    then a fraction ``noise`` of the labels is flipped at random.

    Parameters
    ----------
    nobs : int
        Number of observations.
    d : int
        Number of features (columns ``x1..xd``).
    k : int
        Number of faces.
    noise : float
        Share of labels flipped, in [0, 0.5).
    inside_share : float
        Approximate share of the population inside the polyhedron.
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    data : DataFrame
        Columns ``x1..xd`` and the outcome ``y`` (0/1).
    hyperplanes : DataFrame
        The true ``(K, d + 1)`` hyperplanes with columns ``Intercept, x1..xd``,
        each scaled to a unit normal, so ``min_k h_k' [1, x] >= 0`` is inside.
    """
    if not 0 <= noise < 0.5:
        raise ValueError(f"noise must lie in [0, 0.5), got {noise}")
    rng = np.random.default_rng(random_state)
    probe = rng.standard_normal((20000, d))
    for _ in range(100):
        normals = _random_normals(d, k, rng)
        projections = probe @ normals.T
        offset = float(np.quantile(projections.max(axis=1), inside_share))
        outside = projections.max(axis=1) > offset
        owner = projections[outside].argmax(axis=1)
        shares = np.bincount(owner, minlength=k) / max(1, outside.sum())
        if shares.min() >= 0.5 / k:
            break
    x = rng.standard_normal((nobs, d))
    inside = (x @ normals.T).max(axis=1) <= offset
    flip = rng.random(nobs) < noise
    y = np.where(flip, ~inside, inside).astype(int)
    names = [f"x{j + 1}" for j in range(d)]
    data = pd.DataFrame(x, columns=names)
    data["y"] = y
    hyperplanes = pd.DataFrame(
        np.column_stack([np.full(k, offset), -normals]),
        index=[f"h{i + 1}" for i in range(k)],
        columns=["Intercept", *names],
    )
    return data, hyperplanes
