r"""The L2 penalty's metric: one weight per design column, or per term.

The penalty is on the standardised slopes (``plumestats._scaling``): a column
standardised to ``z_j = (x_j - m_j) / s_j`` costs ``alpha N / 2 * b_j^2``, which
is ``alpha N / 2`` times the variance of its share ``x_j w_j`` of the score.
A term of several columns (the levels of a factor, a spline basis) costs the
variance of its whole share of the score instead,

.. math::

    \tfrac{\alpha N}{2}\, \operatorname{Var}_n(x_{nT}' w_T)
    = \tfrac{\alpha N}{2}\, b_T' C_T b_T ,

with :math:`C_T` the (frequency-weighted) correlation matrix of the term's
standardised columns (their second moments about zero without an intercept).
For one column this is the per-column penalty. For a factor's main effect it
does not depend on which level is the reference: recoding the reference shifts
the term's share of every score by one constant, which the intercept takes, so
both codings are one penalised problem with one maximum. (In an interaction,
or without an intercept, a recoding moves a share into another term, which has
its own penalty: those codings stay different problems.) A per-column penalty is
not: it shrinks every level toward whichever level is the reference.

The same metric makes the k-means starts' distances (``whiten``) and their
ridge logistic fits coding-invariant, and EM's Newton steps are invariant to
a linear change of coordinates, so a default fit of either coding takes the
same path (to rounding).

:class:`Ridge` holds ``R = diag(d) + O``, ``O`` symmetric blocks with a zero
diagonal; a design without a term of several columns has no blocks, and its
penalty is computed exactly as a diagonal one (the same numbers to the bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import solve_triangular

from ._compat import formula_spec, term_slices
from ._design import as_design

__all__ = [
    "Damping",
    "Ridge",
    "TermMetrics",
    "model_terms",
    "term_metrics",
    "with_terms",
]

# a term whose correlation matrix has an eigenvalue below this share of its
# largest is (nearly) collinear within itself: it keeps a weight per column
_SINGULAR = 1e-8


# Up to this many parameters the penalty's blocks are held as one dense
# matrix (8 MiB at most).
_DENSE_BLOCKS_SIZE = 1024


@dataclass(frozen=True)
class Ridge:
    r"""The quadratic penalty :math:`\tfrac12 b' R b`, ``R = diag(diagonal) +``
    the symmetric ``blocks``: ``(indices, matrix)`` pairs whose matrix (zero
    diagonal) couples the parameters at ``indices``."""

    diagonal: np.ndarray
    blocks: tuple = ()

    @classmethod
    def of(cls, ridge) -> Ridge:
        """``ridge`` itself, or the diagonal penalty of a vector of weights."""
        return ridge if isinstance(ridge, Ridge) else cls(np.asarray(ridge, float))

    @property
    def size(self) -> int:
        return self.diagonal.size

    def head(self, size: int) -> Ridge:
        """The penalty of the first ``size`` parameters (the blocks lie in
        the faces' weights, which come first)."""
        blocks = tuple(block for block in self.blocks if block[0][-1] < size)
        return Ridge(self.diagonal[:size], blocks)

    def scaled(self, factor: float) -> Ridge:
        return Ridge(
            self.diagonal * factor,
            tuple((where, matrix * factor) for where, matrix in self.blocks),
        )

    def tiled(self, k: int, n_extra: int = 0) -> Ridge:
        """One face's penalty repeated for each of ``k`` faces, then nothing
        on ``n_extra`` parameters (the flip rate)."""
        n_cols = self.diagonal.size
        blocks = tuple(
            (where + face * n_cols, matrix)
            for face in range(k)
            for where, matrix in self.blocks
        )
        return Ridge(np.append(np.tile(self.diagonal, k), np.zeros(n_extra)), blocks)

    def value(self, params: np.ndarray) -> float:
        r""":math:`\tfrac12 b' R b` of the first ``params.size`` parameters."""
        value = 0.5 * float(np.add.reduce(self.diagonal[: params.size] * params**2))
        return value + self.coupling(params)

    def coupling(self, params: np.ndarray) -> float:
        r""":math:`\tfrac12 b' O b`: the blocks' share of :meth:`value`."""
        dense = self._dense_blocks
        if dense is not None:
            size = params.size
            return 0.5 * float(params @ dense[:size, :size] @ params)
        return sum(
            0.5 * float(params[where] @ matrix @ params[where])
            for where, matrix in self.blocks
            if where[-1] < params.size
        )

    def times(self, params: np.ndarray) -> np.ndarray:
        """``R b``: the penalty's gradient."""
        product = self.diagonal * params
        if self._dense_blocks is not None:
            return product + self._dense_blocks @ params
        for where, matrix in self.blocks:
            product[where] += matrix @ params[where]
        return product

    def add_to(self, neg_hess: np.ndarray) -> np.ndarray:
        """``neg_hess + R`` in place (its leading square, for the faces'
        weights alone)."""
        size = neg_hess.shape[0]
        neg_hess.flat[:: size + 1] += self.diagonal[:size]
        if self._dense_blocks is not None:
            neg_hess += self._dense_blocks[:size, :size]
            return neg_hess
        for where, matrix in self.blocks:
            if where[-1] < size:
                neg_hess[np.ix_(where, where)] += matrix
        return neg_hess

    @cached_property
    def _dense_blocks(self) -> np.ndarray | None:
        """The blocks as one ``(size, size)`` matrix ``O``, built once, where
        that is small (``None`` without blocks or beyond
        :data:`_DENSE_BLOCKS_SIZE` parameters): the EM steps ask for the
        penalty, its gradient and its Hessian a dozen times an iteration, and
        looping over the blocks (a factor's per face) each time was about a
        sixth of heart's K = 2 fit under cProfile.

        The blocks lie in the faces' weights, which come first, so a
        leading square of ``O`` is the penalty of the faces alone."""
        if not self.blocks or self.size > _DENSE_BLOCKS_SIZE:
            return None
        dense = np.zeros((self.size, self.size))
        for where, matrix in self.blocks:
            dense[np.ix_(where, where)] += matrix
        return dense

    def whiten(self, z: np.ndarray) -> np.ndarray:
        """Rows ``z`` (one face's columns) in coordinates where the metric is
        the identity on each block: ``z_T L^{-T}`` with ``L L' = C_T``, so that
        Euclidean distances are the metric's (k-means starts). Unchanged
        without blocks."""
        if not self.blocks:
            return z
        z = np.array(z, dtype=float, copy=True)
        for where, matrix in self.blocks:
            correlation = matrix + np.diag(self.diagonal[where])
            factor = np.linalg.cholesky(correlation)
            z[:, where] = solve_triangular(factor, z[:, where].T, lower=True).T
        return z


@dataclass(frozen=True)
class Damping:
    """A metric ``M`` for the damping of Newton steps, ``(H + lam M) d = g``,
    with ``W = L^-1`` (``L L' = M``, Cholesky), computed once."""

    matrix: np.ndarray
    inverse_root: np.ndarray

    @classmethod
    def of(cls, matrix: np.ndarray) -> Damping:
        root = np.linalg.cholesky(matrix)
        identity = np.eye(matrix.shape[0])
        return cls(matrix, solve_triangular(root, identity, lower=True))

    def leading(self, rows: slice) -> Damping:
        """The metric of a leading slice of the parameters (the Cholesky
        factor of a leading block is the factor's leading block)."""
        return Damping(self.matrix[rows, rows], self.inverse_root[rows, rows])

    @cached_property
    def mean_row_square(self) -> float:
        """The mean squared length of the rows of ``W`` (``trace(M^-1) /
        n``), which bounds :meth:`diagonal_scale`'s mean by the Frobenius
        norm of ``matrix``."""
        return float(np.einsum("ij,ij->", self.inverse_root, self.inverse_root)) / max(
            self.inverse_root.shape[0], 1
        )

    def diagonal_scale(self, matrix: np.ndarray) -> np.ndarray:
        """The diagonal of ``W matrix W'``: ``matrix`` in coordinates where
        the metric is the identity (what the damping's floors are scaled by)."""
        return np.einsum("ij,ij->i", self.inverse_root @ matrix, self.inverse_root)


@dataclass(frozen=True)
class TermMetrics:
    """What a design's terms ask of the engine.

    Attributes
    ----------
    penalty : Ridge
        One face's penalty at unit weight: 1 per slope, 0 on the intercept,
        each term of several varying columns coupled by its correlation.
    damping : ndarray or None
        One face's metric for the damping of Newton steps, ``(p, p)``: the
        identity, except on the intercept and the coupled terms' columns, where
        it is their standardised columns' second moments ``E[z z']``, so that a
        damped step, like an undamped one, does not depend on how a factor is
        coded. ``None`` without coupled terms (the identity).
    """

    penalty: Ridge
    damping: np.ndarray | None = None

    def tiled_damping(self, k: int, n_extra: int) -> Damping | None:
        """:attr:`damping` for ``k`` faces and ``n_extra`` free extras."""
        if self.damping is None:
            return None
        p = self.damping.shape[0]
        metric = np.eye(k * p + n_extra)
        for face in range(k):
            metric[face * p : (face + 1) * p, face * p : (face + 1) * p] = self.damping
        return Damping.of(metric)


def term_metrics(model, source, intercept_index: int | None) -> TermMetrics:
    """The penalty and damping metrics of ``model``'s terms on ``source``'s
    standardised columns (:class:`TermMetrics`)."""
    n_cols = source.n_cols
    diagonal = np.ones(n_cols)
    if intercept_index is not None:
        diagonal[intercept_index] = 0.0
    terms = _multi_column_terms(model, intercept_index)
    if not terms:
        return TermMetrics(Ridge(diagonal))
    union = np.concatenate(terms)
    if intercept_index is not None:
        union = np.append(union, intercept_index)
    second, mean = _second_moments(source, union)
    position = {column: index for index, column in enumerate(union)}
    blocks, coupled = [], []
    for term in terms:
        at = np.array([position[column] for column in term])
        moments = second[np.ix_(at, at)]
        if intercept_index is not None:
            moments = moments - np.outer(mean[at], mean[at])
        block = _correlation(term, moments)
        if block is not None:
            blocks.append(block)
            coupled.append(block[0])
    if not blocks:
        return TermMetrics(Ridge(diagonal))
    kept = np.concatenate(coupled)
    if intercept_index is not None:
        kept = np.append(kept, intercept_index)
    at = np.array([position[column] for column in kept])
    moments = second[np.ix_(at, at)]
    if _near_singular(moments):
        # terms collinear with each other (a factor and a coarsening of it):
        # Newton's damping stays the identity, which any design can take
        return TermMetrics(Ridge(diagonal, tuple(blocks)))
    damping = np.eye(n_cols)
    damping[np.ix_(kept, kept)] = moments
    return TermMetrics(Ridge(diagonal, tuple(blocks)), damping)


def _near_singular(moments: np.ndarray) -> bool:
    """Whether a second-moment (or correlation) matrix is singular to within
    :data:`_SINGULAR` of its scale (taken on the unit diagonal)."""
    spread = np.sqrt(np.diag(moments))
    eigenvalues = np.linalg.eigvalsh(moments / np.outer(spread, spread))
    return bool(eigenvalues[0] <= _SINGULAR * eigenvalues[-1])


def _correlation(term: np.ndarray, moments: np.ndarray):
    """``(columns, correlation less its unit diagonal)`` of a term's varying
    columns, or ``None`` when fewer than two vary or they are (nearly)
    collinear (the term then keeps one weight per column)."""
    spread = np.sqrt(np.clip(np.diag(moments), 0.0, None))
    keep = spread > 0  # a column constant on the rows (a level never seen)
    if keep.sum() < 2:
        return None
    moments, spread = moments[np.ix_(keep, keep)], spread[keep]
    if _near_singular(moments):
        return None
    correlation = moments / np.outer(spread, spread)
    np.fill_diagonal(correlation, 0.0)
    return term[keep], correlation


def model_terms(model) -> tuple[np.ndarray, ...]:
    """The design columns of each of ``model``'s terms: its formula's, or
    those a refit on the formula's design was given (:func:`with_terms`);
    none for a model built from arrays, or on Dask, whose columns are their
    own terms."""
    given = getattr(model, "_penalty_terms", None)
    if given is not None:
        return given
    spec = formula_spec(getattr(model, "data", None))
    if spec is None:
        return ()
    # by name: drop_cols can leave a term's column out of the design, which
    # shifts the positions the formula's slices give
    names = list(spec.column_names)
    position = {name: i for i, name in enumerate(model.exog_names)}
    return tuple(
        np.array([position[n] for n in names[where] if n in position], dtype=int)
        for _, where in term_slices(spec)
    )


def with_terms(model, terms: tuple):
    """``model`` (built from a formula's design as arrays: a bootstrap, a
    cross-validation or a test's refit) measured by the formula's ``terms``
    (:func:`model_terms`), so that it has the penalty of the fit it refits."""
    model._penalty_terms = terms
    return model


def _multi_column_terms(model, intercept_index) -> list[np.ndarray]:
    """The design columns of each term of several columns."""
    terms = (term[term != intercept_index] for term in model_terms(model))
    return [term for term in terms if term.size > 1]


def _second_moments(source, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E[z z']`` and ``E[z]`` of the standardised ``columns`` over the rows
    (frequency-weighted): one pass of the row source."""
    sums = source.reduce(_moment_sums, columns=columns)
    return sums["second"] / sums["weight"], sums["first"] / sums["weight"]


def _moment_sums(z, y, weights=None, *, columns: np.ndarray) -> dict:
    """The weight and the first and second moment sums of ``columns`` on one
    block (its Gram by the design's indicator split: adult, 12 ms against 73
    ms dense)."""
    design = as_design(z)
    f = np.ones(design.shape[0]) if weights is None else np.asarray(weights, float)
    return {
        "weight": float(f.sum()),
        # the product of every column, then the columns: no copy of them
        "first": (f @ design.values)[columns],
        "second": design.gram(f)[np.ix_(columns, columns)],
    }
