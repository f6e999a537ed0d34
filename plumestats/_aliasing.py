"""A rank-deficient design's null directions: which coefficients, and which
linear combinations of the parameters, are estimable.

The likelihood depends on a face's coefficients ``w`` only through ``X w``,
so it is flat along every null direction ``u`` of the design (``X u = 0``).
A linear combination ``c'w`` is estimable, the same whichever way the null
directions are pinned, exactly when ``c'u = 0`` for every such ``u``; in
particular a single coefficient is estimable when no null direction moves it.
The directions are found on the column-scaled design ``X D^{-1}`` (unit
columns), where a relative tolerance means the same for every column's units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Aliasing", "null_directions"]

# a null direction's (unit-norm, scaled) entry below this does not move the
# column; a combination this close to orthogonal to every direction is estimable
_TOLERANCE = 1e-8


@dataclass(frozen=True, eq=False)
class Aliasing:
    """Which coefficients a rank-deficient design leaves unidentified.

    ``dependent`` holds one column per null direction (those that QR with
    column pivoting leaves last), ``unidentified`` every column some null
    direction moves, ``null_basis`` the directions of the scaled design
    ``X D^{-1}`` (unit columns, ``(p, m)``) and ``scale`` the diagonal of
    ``D`` (the column norms, 1 for an all-zero column). Empty for a full-rank
    design.
    """

    dependent: tuple[int, ...] = ()
    unidentified: tuple[int, ...] = ()
    null_basis: np.ndarray | None = None
    scale: np.ndarray | None = None

    def in_faces(self, columns: tuple[int, ...], k: int, n_params: int) -> np.ndarray:
        """A mask over ``n_params`` parameters (``k`` faces of the design's
        columns first): ``columns`` (``dependent`` or ``unidentified``) in
        every face."""
        mask = np.zeros(n_params, dtype=bool)
        if columns:
            offsets = self.scale.size * np.arange(k)[:, None]
            mask[(offsets + np.asarray(columns, dtype=int)).ravel()] = True
        return mask

    def estimable(self, combinations: np.ndarray, k: int) -> np.ndarray:
        """Which rows of ``combinations`` (each a linear combination of the
        parameters: ``k`` faces of ``p`` coefficients, then any extra
        parameter) are estimable: in every face, orthogonal to the null
        directions (to a relative 1e-8, in the scaled design's units)."""
        rows = np.atleast_2d(np.asarray(combinations, dtype=float))
        ok = np.ones(rows.shape[0], dtype=bool)
        if self.null_basis is None:
            return ok
        n_cols = self.scale.size
        for face in range(k):
            block = rows[:, face * n_cols : (face + 1) * n_cols] / self.scale
            along = np.abs(block @ self.null_basis).max(axis=1)
            ok &= along <= _TOLERANCE * np.linalg.norm(block, axis=1)
        return ok


def null_directions(summary) -> tuple[list[int], list[np.ndarray], Aliasing]:
    """The dependent columns, for each the independent columns its null
    direction ``e_j - sum_i c_i e_i`` involves (none for an all-zero column),
    and the design's :class:`Aliasing`, from a design summary (its ``(p, p)``
    factor ``R`` of ``X = Q R`` and its column extremes).

    The pivoted QR runs on the factor ``R D^{-1}`` of the scaled design
    ``X D^{-1} = Q R D^{-1}``: the orthogonal ``Q`` changes neither the
    column norms that choose the pivots nor the diagonal they produce, nor the
    least-squares coefficients ``c`` of the null directions.
    """
    from scipy.linalg import lstsq, qr

    zero = np.flatnonzero((summary.minimum == 0) & (summary.maximum == 0))
    norms = np.linalg.norm(summary.r, axis=0)
    scale = np.where(norms == 0, 1.0, norms)
    scaled = summary.r / scale
    scaled[:, zero] = 0.0
    _, r, pivots = qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-9 * diag[0])) if diag.size else 0
    dependent = sorted(set(pivots[rank:].tolist()) | set(zero.tolist()))
    basis = pivots[:rank]
    directions = np.zeros((scale.size, len(dependent)))
    involved = []
    for direction, j in enumerate(dependent):
        directions[j, direction] = 1.0
        if j in zero or rank == 0:
            involved.append(basis[:0])
            continue
        coef = lstsq(scaled[:, basis], scaled[:, j])[0]
        involved.append(basis[np.abs(coef) > _TOLERANCE])
        directions[basis, direction] = -coef
    return dependent, involved, _aliasing(dependent, directions, scale)


def _aliasing(dependent: list[int], directions: np.ndarray, scale) -> Aliasing:
    """The :class:`Aliasing` of the null ``directions`` (one column each)."""
    if not dependent:
        return Aliasing()
    directions = directions / np.linalg.norm(directions, axis=0)
    moved = np.flatnonzero(np.abs(directions).max(axis=1) > _TOLERANCE)
    return Aliasing(tuple(dependent), tuple(int(j) for j in moved), directions, scale)
