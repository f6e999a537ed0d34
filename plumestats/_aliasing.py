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

__all__ = ["Aliasing", "null_directions", "of_model"]

# the coefficients that name a dependent column's partners in the warning
_PARTNER_TOLERANCE = 1e-8
# a null direction's (unit-norm, scaled) entry above this moves its column, and
# a combination closer than this to orthogonal to every direction is estimable:
# far below the entries of real dependencies (7e-9 for a column 1e8 times
# smaller than its partner), far above the rounding of the sample's rows
# (2e-15 with columns 1e6 apart); raised with the basis's condition number,
# which bounds the directions' own rounding
_MIN_TOLERANCE = 1e-12


@dataclass(frozen=True, eq=False)
class Aliasing:
    """Which coefficients a rank-deficient design leaves unidentified.

    ``dependent`` holds one column per null direction (those that QR with
    column pivoting leaves last), ``unidentified`` every column some null
    direction moves, ``null_basis`` the directions of the scaled design
    ``X D^{-1}`` (unit columns, ``(p, m)``) and ``scale`` the diagonal of
    ``D`` (the column norms, 1 for an all-zero column), ``tolerance`` the
    relative size below which an entry or a projection counts as zero. Empty
    for a full-rank design.
    """

    dependent: tuple[int, ...] = ()
    unidentified: tuple[int, ...] = ()
    null_basis: np.ndarray | None = None
    scale: np.ndarray | None = None
    tolerance: float = _MIN_TOLERANCE

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
        directions (to the relative ``tolerance``, in the scaled design's
        units)."""
        rows = np.atleast_2d(np.asarray(combinations, dtype=float))
        ok = np.ones(rows.shape[0], dtype=bool)
        if self.null_basis is None:
            return ok
        n_cols = self.scale.size
        for face in range(k):
            block = rows[:, face * n_cols : (face + 1) * n_cols] / self.scale
            along = np.abs(block @ self.null_basis).max(axis=1)
            ok &= along <= self.tolerance * np.linalg.norm(block, axis=1)
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
        involved.append(basis[np.abs(coef) > _PARTNER_TOLERANCE])
        directions[basis, direction] = -coef
    condition = diag[0] / diag[rank - 1] if rank else 1.0
    aliased = _aliasing(dependent, directions, scale, condition)
    return dependent, involved, aliased


def _aliasing(dependent: list[int], directions, scale, condition: float) -> Aliasing:
    """The :class:`Aliasing` of the null ``directions`` (one column each) of
    a basis of this ``condition`` number."""
    if not dependent:
        return Aliasing()
    directions = directions / np.linalg.norm(directions, axis=0)
    tolerance = max(_MIN_TOLERANCE, 100.0 * condition * np.finfo(float).eps)
    moved = np.flatnonzero(np.abs(directions).max(axis=1) > tolerance)
    unidentified = tuple(int(j) for j in moved)
    return Aliasing(tuple(dependent), unidentified, directions, scale, tolerance)


def of_model(model) -> Aliasing | None:
    """The model's :class:`Aliasing` when its design is rank deficient; None
    for a full-rank design, and for a model pickled or loaded without it."""
    aliasing = getattr(model, "_aliasing", None)
    if aliasing is None or getattr(aliasing, "null_basis", None) is None:
        return None
    return aliasing
