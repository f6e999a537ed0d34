"""Stratified cross-validation folds in plain numpy (no scikit-learn needed)."""

from __future__ import annotations

import numpy as np

__all__ = ["stratified_folds"]


def stratified_folds(
    y: np.ndarray, n_splits: int, rng: np.random.Generator
) -> np.ndarray:
    """Fold labels ``0..n_splits-1`` with each class spread evenly over the folds.

    Each class is shuffled and dealt round-robin, the deal of the second class
    starting where the first ended, so that fold sizes differ by at most one and
    each fold's class shares match the sample's up to one observation per class.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Class labels (any values; each distinct value is a stratum).
    n_splits : int
        Number of folds, at least 2 and at most the size of the smallest class.
    rng : numpy Generator
        Source of the shuffles.

    Returns
    -------
    ndarray of int, shape (n,)
        The fold of each observation.
    """
    y = np.asarray(y)
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if n_splits < 2:
        raise ValueError(f"cv must be an integer >= 2 folds, got {n_splits}")
    if counts.min() < n_splits:
        smallest = classes[np.argmin(counts)].item()
        raise ValueError(
            f"cv={n_splits} stratified folds need at least {n_splits} observations "
            f"of each class, but class {smallest!r} has {counts.min()}; use fewer "
            "folds"
        )
    folds = np.empty(y.size, dtype=int)
    offset = 0
    for code in range(classes.size):
        members = rng.permutation(np.flatnonzero(codes == code))
        folds[members] = (offset + np.arange(members.size)) % n_splits
        offset = (offset + members.size) % n_splits
    return folds
