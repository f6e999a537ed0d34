"""Simulated data from a known polyhedron or a known PLUME model, for examples,
tests and benchmarks."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from .._likelihood import predict_mean
from .._validation import check_int

__all__ = ["simulate_plume", "simulate_polyhedron"]


def _random_normals(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    if d == 2:
        # evenly spread directions with jitter: every face of the polygon is active
        angles = 2 * np.pi * (np.arange(k) + rng.uniform(-0.2, 0.2, k)) / k
        angles += rng.uniform(0, 2 * np.pi)
        return np.column_stack([np.cos(angles), np.sin(angles)])
    normals = rng.standard_normal((k, d))
    return normals / np.linalg.norm(normals, axis=1, keepdims=True)


def _check_polyhedron_options(nobs, d, k, noise, inside_share) -> None:
    """Clear errors for the options of :func:`simulate_polyhedron`."""
    for name, value in (("nobs", nobs), ("d", d), ("k", k)):
        check_int(value, name)
    if not 0 <= noise < 0.5:
        raise ValueError(f"noise must lie in [0, 0.5), got {noise}")
    if not 0 < inside_share < 1:
        raise ValueError(f"inside_share must lie in (0, 1), got {inside_share}")


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
    _check_polyhedron_options(nobs, d, k, noise, inside_share)
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
    else:
        raise ValueError(
            f"no draw of {k} faces in {d} dimensions gave every face a fair share "
            "of the outside points (in one dimension at most 2 faces can bound "
            "a set): use fewer faces or more features"
        )
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


def simulate_plume(
    nobs: int,
    hyperplanes,
    gamma: float = 1.0,
    random_state=None,
) -> pd.DataFrame:
    r"""Draw outcomes from a known PLUME model.

    Features are standard normal, ``x ~ N(0, I_d)``, and

    .. math::

        P(y = 1 \mid x) = \sum_k g_k(x)\, \sigma(w_k' \tilde x), \qquad
        g_k(x) = \operatorname{softmax}_k(-\gamma\, w_k' \tilde x),

    with :math:`\tilde x = [1, x]`. Unlike :func:`simulate_polyhedron` (a hard
    polytope with label noise), the data come from the model itself, so a fit
    of the same ``k`` and ``gamma`` is correctly specified: the setting in which
    standard errors and coverage can be checked against the truth.

    Parameters
    ----------
    nobs : int
        Number of observations.
    hyperplanes : array_like or DataFrame, shape (K, d + 1)
        True hyperplanes, intercept first (the layout :func:`simulate_polyhedron`
        returns and ``results.hyperplanes`` shows for ``y ~ x1 + ... + xd``).
    gamma : float
        Gate sharpness; ``np.inf`` draws from the hard model (SPLA1),
        :math:`P(y = 1 | x) = \sigma(\min_k w_k' \tilde x)`.
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    DataFrame
        Columns ``x1..xd`` and the outcome ``y`` (0/1).

    Examples
    --------
    >>> import numpy as np
    >>> from plumestats.datasets import simulate_plume
    >>> truth = np.array([[1.0, 2.0, 0.0], [1.0, -1.0, 1.7]])
    >>> data = simulate_plume(1000, truth, gamma=1.0, random_state=0)
    >>> list(data.columns)
    ['x1', 'x2', 'y']
    """
    weights = np.atleast_2d(np.asarray(hyperplanes, dtype=float))
    if weights.ndim != 2 or weights.shape[1] < 2:
        raise ValueError(
            "hyperplanes must be a (K, d + 1) array with the intercept first, got "
            f"shape {np.shape(hyperplanes)}"
        )
    if not np.all(np.isfinite(weights)):
        raise ValueError("hyperplanes must be finite")
    if not gamma > 0:
        raise ValueError(f"gamma must be positive, got {gamma}")
    rng = np.random.default_rng(random_state)
    d = weights.shape[1] - 1
    x = rng.standard_normal((int(nobs), d))
    scores = weights[:, 0][None, :] + x @ weights[:, 1:].T
    if np.isposinf(gamma):  # the hard model (SPLA1): sigmoid(min_k w_k'x)
        probability = expit(scores.min(axis=1))
    else:
        probability = predict_mean(scores, float(gamma))
    y = rng.random(int(nobs)) < probability
    data = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(d)])
    data["y"] = y.astype(int)
    return data
