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

# How far a null direction's entry (unit-norm, in the scaled design) may be
# off: by rounding, eps times the norm of its row of the basis's inverse
# factor, and by the dependency's own inexactness (the rank rule takes a
# column within 1e-9 of the others as dependent: a CSV's 10 or so digits), its
# remainder outside the basis times that norm. An entry above 100 times the
# bound (and this floor) moves its column, and a combination closer than the
# bound to orthogonal to every direction is estimable. The floor is far below
# the entries of exact dependencies (7e-9 for a column 1e8 times smaller than
# its partner) and far above the rounding of the sample's rows (2e-15 with
# columns 1e6 apart); a nearly collinear pair of independent columns raises
# the bounds of those two columns only.
_MIN_TOLERANCE = 1e-12


@dataclass(frozen=True, eq=False)
class Aliasing:
    """Which coefficients a rank-deficient design leaves unidentified.

    ``dependent`` holds one column per null direction (those that QR with
    column pivoting leaves last), ``unidentified`` every column some null
    direction moves, ``null_basis`` the directions of the scaled design
    ``X D^{-1}`` (unit columns, ``(p, m)``) and ``scale`` the diagonal of
    ``D`` (the column norms, 1 for an all-zero column), ``tolerance`` the
    bound on each entry's error (``(p, m)``), below which it counts as zero.
    Empty for a full-rank design.
    """

    dependent: tuple[int, ...] = ()
    unidentified: tuple[int, ...] = ()
    null_basis: np.ndarray | None = None
    scale: np.ndarray | None = None
    tolerance: np.ndarray | None = None

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
        directions up to the rounding of their entries (``tolerance``, in
        the scaled design's units)."""
        rows = np.atleast_2d(np.asarray(combinations, dtype=float))
        ok = np.ones(rows.shape[0], dtype=bool)
        if self.null_basis is None:
            return ok
        n_cols = self.scale.size
        for face in range(k):
            block = rows[:, face * n_cols : (face + 1) * n_cols] / self.scale
            along = np.abs(block @ self.null_basis)
            ok &= np.all(along <= np.abs(block) @ self.tolerance, axis=1)
        return ok


def null_directions(summary) -> Aliasing:
    """The design's :class:`Aliasing`, from a design summary (its ``(p, p)``
    factor ``R`` of ``X = Q R`` and its column extremes). Each dependent
    column ``j`` has the null direction ``e_j - sum_i c_i e_i`` over the
    independent columns ``i`` (``e_j`` alone for an all-zero column).

    The pivoted QR runs on the factor ``R D^{-1}`` of the scaled design
    ``X D^{-1} = Q R D^{-1}``: the orthogonal ``Q`` changes neither the
    column norms that choose the pivots nor the diagonal they produce, nor the
    least-squares coefficients ``c`` of the null directions.
    """
    from scipy.linalg import qr, solve_triangular

    zero = np.flatnonzero((summary.minimum == 0) & (summary.maximum == 0))
    norms = np.linalg.norm(summary.r, axis=0)
    scale = np.where(norms == 0, 1.0, norms)
    scaled = summary.r / scale
    scaled[:, zero] = 0.0
    _, r, pivots = qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-9 * diag[0])) if diag.size else 0
    dependent = sorted(set(pivots[rank:].tolist()) | set(zero.tolist()))
    if not dependent:
        return Aliasing()
    basis = pivots[:rank]
    # the basis's triangular factor: its inverse gives the coefficients (R_b c
    # = Q_b' v, with Q_b' v the first rank entries of the pivoted column of R)
    # and bounds their rounding, row by row
    inverse = solve_triangular(r[:rank, :rank], np.eye(rank))
    directions = np.zeros((scale.size, len(dependent)))
    where = [int(np.flatnonzero(pivots == j)[0]) for j in dependent]
    for direction, (j, column) in enumerate(zip(dependent, where, strict=True)):
        directions[j, direction] = 1.0
        if j not in zero and rank:
            directions[basis, direction] = -(inverse @ r[:rank, column])
    # each direction's inexactness: its column's part outside the basis's span
    remainder = np.linalg.norm(r[rank:, where], axis=0)
    tolerance = np.full(directions.shape, _MIN_TOLERANCE)
    reach = np.linalg.norm(inverse, axis=1)[:, None]
    error = 100.0 * (np.finfo(float).eps + remainder[None, :]) * reach
    tolerance[basis] = np.maximum(_MIN_TOLERANCE, error)
    directions /= np.linalg.norm(directions, axis=0)
    moved = np.flatnonzero((np.abs(directions) > tolerance).any(axis=1))
    unidentified = tuple(int(j) for j in moved)
    return Aliasing(tuple(dependent), unidentified, directions, scale, tolerance)


def of_model(model) -> Aliasing | None:
    """The model's :class:`Aliasing` when its design is rank deficient; None
    for a full-rank design, and for a model pickled or loaded without it."""
    aliasing = getattr(model, "_aliasing", None)
    if aliasing is None or aliasing.null_basis is None:
        return None
    return aliasing
