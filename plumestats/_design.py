"""The standardised design matrix as the engine multiplies it.

Every EM and Newton iteration needs three products with the ``(n, p)`` design
``Z``: the scores ``Z B'`` (``(n, K)``), the projections ``R' Z`` of per-observation
weights (gradients) and the weighted Gram matrices ``Z' diag(w) Z`` (Hessian
blocks, by far the dearest: ``n p^2`` each). With one-hot encoded factors most
entries of ``Z`` are exact zeros (the columns that are mostly zero are scaled but
not centred, see ``_scaling``), and a dense Gram product wastes most of its work on
them. :class:`DesignMatrix` then splits the columns into a dense block (numeric
features, the intercept) and a sparse CSR block (indicators): the dense-dense part
stays one BLAS product, the parts involving indicators cost ``O(nnz)``.

On adult (30162 x 96, 12% nonzero) one Gram block falls from 15 ms to 4 ms; on
dense designs nothing changes. The two layouts give the same numbers to rounding.
The indicator-indicator part is computed from a list of the pairs of nonzeros of
each row, built once (a row of one-hot factors has few), so that the K(K+1)/2
blocks of one Hessian cost one sparse matrix-vector pass together, without
scipy's sparse-sparse product and its symbolic phase (adult, K = 2: the three
blocks' indicator part in 1 ms instead of 30). In a design that serves a whole
fit (``keep_products``) the dense-indicator part is one small BLAS product per
indicator column, over the rows where it is nonzero.

A small dense design that serves a whole fit keeps its rows' products
``z_ni z_nj`` instead, so that a Hessian's Grams are one matrix product (pima,
768 x 9: 15 against 36 us for three Grams).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import sparse

__all__ = [
    "DesignMatrix",
    "as_design",
    "dense_grams",
    "kept_bytes",
    "upper_pairs",
]

# A column goes to the sparse block when at most this share of its entries are
# nonzero; the split is used only when the sparse block is worth its overhead.
_SPARSE_COLUMN_SHARE = 0.5
_MIN_SPARSE_COLUMNS = 8
_MAX_SPARSE_BLOCK_DENSITY = 0.25
# Below this many multiply-adds for a dense Gram block (n p^2) one BLAS call beats
# the split's fixed cost (three products and a CSR construction per block, ~0.2 ms):
# on heart (243 x 20) the split made the whole fit twice as slow.
_MIN_DENSE_GRAM_WORK = 2_000_000
# The sparse Gram lists the pairs of nonzeros of every row; with one-hot factors a
# row has one nonzero per factor (pairs/nonzeros = (factors + 1) / 2). Past this
# ratio (rows of ~30 nonzeros) the list costs more memory than it saves time.
_MAX_PAIRS_PER_NONZERO = 16
# A small dense design keeps each row's products z_i z_j (i <= j), so that all
# of a Hessian's Grams are one matrix product: pima (768 x 9, three Grams) 18
# against 50 us, heart (243 x 20) 28 against 41 us. Past ~24 columns there is
# no gain (ionosphere, 351 x 34: 93 against 97 us); the bytes bound the copy.
_MAX_OUTER_COLUMNS = 24
_MAX_OUTER_BYTES = 2**21
# The dense-indicator Gram blocks loop over the indicator columns in Python
# (a few us each): past this many columns, or below this many nonzeros a
# column on average, scipy's sparse product is used instead (B = 3 on
# adult's subsamples: at 88 nonzeros a column 0.20 against 0.14 ms, at 221
# 0.26 against 0.32, at 1328 (all rows) 0.9 against 1.8).
_MAX_CROSS_LOOP_COLUMNS = 256
_MIN_CROSS_ROWS = 200
# Rows of the design per block of a dense Gram product: 256 KiB, cache-sized.
_GRAM_BLOCK_BYTES = 2**18
# ... unless that leaves fewer rows than this (p > 128): then one product
_MIN_GRAM_BLOCK_ROWS = 256


class DesignMatrix:
    """A read-only design matrix supporting ``Z @ B``, ``R @ Z`` and weighted Grams.

    ``Z @ B`` (``B`` of shape ``(p, K)``) and ``R @ Z`` (``R`` of shape ``(K, n)``)
    behave as for the dense array, so the likelihood code is written once.

    Parameters
    ----------
    values : ndarray, shape (n, p)
        The (standardised) design. Kept as is: start values and statsmodels'
        layer read it directly.
    split : bool, default True
        Whether to try the dense/indicator split; ``False`` when the caller
        knows it would not be used (the same rows, standardised the same way,
        did not split before), which saves counting the nonzeros again.
    keep_products : bool, default False
        Whether the design may keep copies that make its Grams faster, at
        most about its own size (:func:`kept_bytes`): a small dense
        design's rows' products, a split design's indicator entries times
        their dense rows. For a design that serves a whole fit, not a slab
        or block of one (read for one or two Grams, building them costs more
        than they save).
    """

    # make numpy defer ``ndarray @ DesignMatrix`` to __rmatmul__
    __array_ufunc__ = None

    def __init__(
        self, values: np.ndarray, split: bool = True, keep_products: bool = False
    ):
        self.values = np.asarray(values, dtype=float)
        self._sparse = None
        # the kept copies: not built yet (False), or never (None)
        self._outer: np.ndarray | bool | None = False if keep_products else None
        if not split or self._cannot_split():
            return
        nobs = self.values.shape[0]
        # numpy counts and finds the nonzeros of a boolean array several times
        # faster than of a float one (adult: 0.6 + 2.6 ms against 19 ms)
        nonzero = self.values != 0
        nonzero_share = np.count_nonzero(nonzero, axis=0) / max(nobs, 1)
        sparse_cols = np.flatnonzero(nonzero_share <= _SPARSE_COLUMN_SHARE)
        if (
            sparse_cols.size >= _MIN_SPARSE_COLUMNS
            and nonzero_share[sparse_cols].mean() <= _MAX_SPARSE_BLOCK_DENSITY
        ):
            self._dense_cols = np.flatnonzero(nonzero_share > _SPARSE_COLUMN_SHARE)
            self._sparse_cols = sparse_cols
            self._dense = np.ascontiguousarray(self.values[:, self._dense_cols])
            self._sparse, self._entry_rows = _csr_with_rows(
                self.values, nonzero, sparse_cols
            )
            self._sparse_t = self._sparse.T.tocsr()
            # dense columns first, then sparse: the inverse permutation
            self._unsplit = np.argsort(
                np.concatenate([self._dense_cols, self._sparse_cols])
            )
            self._pairs: sparse.csc_array | bool | None = False  # not built yet
            self._cross: tuple | bool | None = False if keep_products else None

    def _cannot_split(self) -> bool:
        """Whether the split is ruled out before counting each column's
        nonzeros (a third of the count's time: a fit by blocks builds a
        design per slab of rows): too little work, or too few zeros for
        :data:`_MIN_SPARSE_COLUMNS` mostly-zero columns."""
        nobs, n_cols = self.values.shape
        if nobs * n_cols**2 < _MIN_DENSE_GRAM_WORK or n_cols < _MIN_SPARSE_COLUMNS:
            return True
        zeros = self.values.size - np.count_nonzero(self.values)
        return zeros < _MIN_SPARSE_COLUMNS * nobs * (1.0 - _SPARSE_COLUMN_SHARE)

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    @property
    def is_split(self) -> bool:
        """Whether the dense/sparse split is in use."""
        return self._sparse is not None

    def __matmul__(self, weights: np.ndarray) -> np.ndarray:
        """``Z @ B`` for ``B`` of shape ``(p, K)``, as the transpose of
        ``B' Z'``: column-major, each of the ``K`` columns contiguous (the
        layout the likelihood's per-row work is fastest in)."""
        if self._sparse is None:
            return (weights.T @ self.values.T).T
        out = weights[self._dense_cols].T @ self._dense.T
        out += (self._sparse @ weights[self._sparse_cols]).T
        return out.T

    def __rmatmul__(self, per_obs: np.ndarray) -> np.ndarray:
        """``R @ Z`` for ``R`` of shape ``(K, n)``."""
        if self._sparse is None:
            return per_obs @ self.values
        out = np.empty((per_obs.shape[0], self.shape[1]))
        out[:, self._dense_cols] = per_obs @ self._dense
        # one sparse product per row of R: scipy's product of several vectors
        # copies R' into row-major order first (adult, K = 2: 0.21 against
        # 0.56 ms)
        for row, weights in zip(out, per_obs, strict=True):
            row[self._sparse_cols] = self._sparse_t @ weights
        return out

    def gram(self, weight: np.ndarray) -> np.ndarray:
        """``Z' diag(w) Z`` for one weight per observation."""
        return self.grams(np.asarray(weight, dtype=float)[:, None])[0]

    def grams(self, weights: np.ndarray) -> np.ndarray:
        """``Z' diag(w_b) Z`` for every column ``w_b`` of ``weights`` ``(n, B)``,
        as a ``(B, p, p)`` array."""
        if self._sparse is None:
            outer = self._outer_products()
            if outer is None:
                return dense_grams(self.values, weights)
            return _symmetric_from_upper(weights.T @ outer, self._upper)
        n_dense = self._dense_cols.size
        # the indicator parts read each row's weights together (a gather and
        # a sparse product): one row-major copy serves both (the likelihood
        # lays weights out by columns, as the dense part reads them)
        by_rows = np.ascontiguousarray(weights)
        out = np.empty((weights.shape[1], *[self.shape[1]] * 2))
        head = slice(0, n_dense)
        tail = slice(n_dense, None)
        out[:, head, head] = dense_grams(self._dense, weights)
        cross = self._cross_grams(by_rows)
        out[:, tail, head] = cross
        out[:, head, tail] = cross.transpose(0, 2, 1)
        out[:, tail, tail] = self._sparse_grams(by_rows)
        # the blocks are in split order (dense columns first): back to Z's order
        return out[:, self._unsplit][:, :, self._unsplit]

    def _cross_grams(self, weights: np.ndarray) -> np.ndarray:
        """``S' diag(w_b) D`` of the indicator block ``S`` and the dense block
        ``D``, ``(B, q, n_dense)``.

        Column ``i`` of ``S`` is nonzero on few rows: with those rows' entries
        times their dense values kept (:meth:`_cross_rows`), its row of every
        product is one small BLAS product ``W_i' T_i`` over them, all ``B``
        weights at once (adult, B = 3: 0.9 against 1.8 ms by scipy's sparse
        product, one weight at a time).
        """
        parts = self._cross_rows()
        if parts is None:
            return np.stack(
                [self._sparse_t @ (self._dense * w[:, None]) for w in weights.T]
            )
        rows, starts, scaled = parts
        gathered = np.take(weights, rows, axis=0)
        out = np.empty((weights.shape[1], self._sparse_cols.size, scaled.shape[1]))
        for i, (first, last) in enumerate(itertools.pairwise(starts)):
            out[:, i, :] = gathered[first:last].T @ scaled[first:last]
        return out

    def _cross_rows(self):
        """The indicator block's entries column by column: their rows, each
        column's first entry, and each entry times its row of ``D`` (built on
        first use, for a design that keeps products); None when the copy
        would outsize the design, or the loop would not pay: too many
        columns, or too few rows each (about 150 nonzeros a column is
        where the loop catches up with scipy on adult's subsamples)."""
        if self._cross is False:
            by_column = self._sparse.tocsc()
            q, nnz = by_column.shape[1], by_column.nnz
            worth = q <= _MAX_CROSS_LOOP_COLUMNS and nnz >= _MIN_CROSS_ROWS * q
            if worth and nnz * (self._dense.shape[1] + 1) <= self.values.size:
                rows = by_column.indices.astype(np.intp)
                scaled = self._dense[rows] * by_column.data[:, None]
                # Python ints: slicing by numpy integers is slower
                self._cross = rows, by_column.indptr.tolist(), scaled
            else:
                self._cross = None
        return self._cross

    def _outer_products(self) -> np.ndarray | None:
        """The ``(n, p (p + 1) / 2)`` products ``z_ni z_nj``, ``i <= j``, of a
        small dense design (built on first use), or None for other designs."""
        if self._outer is False:
            if row_products_bytes(*self.shape):
                # (np.triu_indices takes 12 us: a Gram's time, so kept)
                self._upper = first, second = np.triu_indices(self.shape[1])
                self._outer = self.values[:, first] * self.values[:, second]
            else:
                self._outer = None
        return self._outer

    def _sparse_grams(self, weights: np.ndarray) -> np.ndarray:
        """``S' diag(w_b) S`` of the sparse block ``S``, ``(B, q, q)``.

        ``(S' diag(w) S)_ij = sum_n w_n s_ni s_nj`` sums over the rows where both
        entries are nonzero. The pairs ``(i <= j)`` of every row's nonzeros are
        listed once (:meth:`_pair_matrix`), so each Gram is one sparse product
        ``P w``, with no symbolic phase: with one-hot factors a row has one
        nonzero per factor and a handful of pairs (adult: 9 per row, 30x faster
        than scipy's sparse-sparse product). Rows with many nonzeros would make
        the pair list too long: those designs keep scipy's product.
        """
        pairs = self._pair_matrix()
        q = self._sparse_cols.size
        if pairs is None:
            out = np.empty((weights.shape[1], q, q))
            for b, w in enumerate(weights.T):
                weighted = sparse.csr_array(
                    (
                        self._sparse.data * w[self._entry_rows],
                        self._sparse.indices,
                        self._sparse.indptr,
                    ),
                    shape=self._sparse.shape,
                )
                out[b] = (self._sparse_t @ weighted).toarray()
            return out
        upper = (pairs @ weights).T.reshape(-1, q, q)
        diagonal = np.einsum("bii->bi", upper).copy()
        out = upper + upper.transpose(0, 2, 1)
        idx = np.arange(q)
        out[:, idx, idx] = diagonal
        return out

    def _pair_matrix(self) -> sparse.csc_array | None:
        """The ``(q q, n)`` matrix whose column ``n`` holds ``s_ni s_nj`` at row
        ``i q + j`` for every pair ``i <= j`` of row ``n``'s nonzeros (built on
        first use; None when the pairs would outnumber the nonzeros by more than
        ``_MAX_PAIRS_PER_NONZERO``, or when building the list would take more
        memory than the design itself)."""
        if self._pairs is not False:
            return self._pairs
        indptr, indices, data = (
            self._sparse.indptr,
            self._sparse.indices,
            self._sparse.data,
        )
        per_row = np.diff(indptr)
        n_pairs = per_row * (per_row + 1) // 2
        total = int(n_pairs.sum())
        # building the list holds ~5 numbers per pair: at most the design's size
        too_many = total > _MAX_PAIRS_PER_NONZERO * max(data.size, 1)
        if too_many or 5 * total > self.values.size:
            self._pairs = None
            return None
        # entry e of a row pairs with itself and every later entry of the row
        # (CSR columns are sorted within a row, so i <= j)
        later = np.repeat(indptr[1:], per_row) - np.arange(data.size)
        first = np.repeat(np.arange(data.size), later)
        offsets = np.arange(first.size) - np.repeat(np.cumsum(later) - later, later)
        second = first + offsets
        q = self._sparse_cols.size
        code = indices[first].astype(np.int64) * q + indices[second]
        col_ptr = np.concatenate([[0], np.cumsum(n_pairs)])
        self._pairs = sparse.csc_array(
            (data[first] * data[second], code, col_ptr),
            shape=(q * q, self.shape[0]),
        )
        return self._pairs

    def gram_blocks(self, weights: np.ndarray) -> np.ndarray:
        """Assemble ``sum_n W_n[k, j] z_n z_n'`` into a ``(K p, K p)`` matrix.

        ``weights`` holds each row's symmetric ``(K, K)`` array ``W_n`` by its
        pairs ``k <= j``, row by row (``(n, K (K + 1) / 2)``, the layout of
        :func:`upper_pairs`): only the distinct blocks
        are computed, all in one call of :meth:`grams`; nothing loops over
        observations.
        """
        n_pairs = weights.shape[1]
        n_hyper = (math.isqrt(8 * n_pairs + 1) - 1) // 2
        if n_hyper * (n_hyper + 1) // 2 != n_pairs:
            raise ValueError(f"{n_pairs} columns are no K (K + 1) / 2 pairs")
        p = self.shape[1]
        upper = upper_pairs(n_hyper)
        blocks = self.grams(weights)
        out = np.empty((n_hyper * p, n_hyper * p))
        for block, (k, j) in zip(blocks, upper, strict=True):
            out[k * p : (k + 1) * p, j * p : (j + 1) * p] = block
            if j != k:
                out[j * p : (j + 1) * p, k * p : (k + 1) * p] = block.T
        return out


def kept_bytes(nobs: int, n_cols: int) -> int:
    """The most a design that keeps products (``keep_products``) may add:
    its rows' products, or, when it could split, a copy of its size (the
    indicator entries times their dense rows, and their rows)."""
    could_split = (
        n_cols >= _MIN_SPARSE_COLUMNS and nobs * n_cols**2 >= _MIN_DENSE_GRAM_WORK
    )
    return row_products_bytes(nobs, n_cols) + (8 * nobs * n_cols if could_split else 0)


def row_products_bytes(nobs: int, n_cols: int) -> int:
    """The bytes of the rows' products a dense ``(nobs, n_cols)`` design
    keeps for its Grams, 0 when it keeps none (too many columns or rows)."""
    size = 4 * nobs * n_cols * (n_cols + 1)
    small = 0 < n_cols <= _MAX_OUTER_COLUMNS and size <= _MAX_OUTER_BYTES
    return size if small else 0


def _symmetric_from_upper(upper: np.ndarray, indices) -> np.ndarray:
    """``(B, p, p)`` symmetric arrays from their upper triangles ``(B, p (p +
    1) / 2)`` at ``indices`` (``np.triu_indices(p)``)."""
    first, second = indices
    p = int(second[-1]) + 1
    out = np.empty((upper.shape[0], p, p))
    out[:, first, second] = upper
    out[:, second, first] = upper
    return out


def upper_pairs(k: int) -> list[tuple[int, int]]:
    """The pairs ``(k, j)``, ``k <= j``, of a symmetric ``(K, K)`` array, row
    by row: the layout of per-row Hessian weights."""
    return [(row, col) for row in range(k) for col in range(row, k)]


def dense_grams(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``X' diag(w_b) X`` for every column ``w_b`` of ``weights`` ``(n, B)``,
    as a ``(B, p, p)`` array, by blocks of rows.

    A weighted copy of the whole of ``X`` per weight (``(X * w).T @ X``) moves
    ``n p`` numbers through memory twice per Gram; a block of
    ``_GRAM_BLOCK_BYTES`` stays in cache while all ``B`` products use it. At
    1e6 x 21 with B = 6 (K = 3) that took 0.21 s against 0.51 s (one BLAS
    thread), the same numbers to rounding.
    """
    n, p = values.shape
    out = np.zeros((weights.shape[1], p, p))
    if p == 0 or n == 0:  # a split design without dense columns; no rows
        # (an empty Dask partition, after a filter or dropna)
        return out
    rows = _GRAM_BLOCK_BYTES // (8 * p)
    if rows < _MIN_GRAM_BLOCK_ROWS:
        # wide designs: a block of few rows is a p x p rank update per step,
        # slower than one product (5000 x 1500: 2.6 s against 1.4 s)
        for b, weight in enumerate(weights.T):
            out[b] = (values * weight[:, None]).T @ values
        return out
    rows = min(n, rows)
    buffer = np.empty((rows, p))
    for start in range(0, n, rows):
        block = values[start : start + rows]
        weighted = buffer[: block.shape[0]]
        for b in range(weights.shape[1]):
            np.multiply(block, weights[start : start + rows, b, None], out=weighted)
            out[b] += weighted.T @ block
    return out


def _csr_with_rows(
    values: np.ndarray, nonzero: np.ndarray, cols: np.ndarray
) -> tuple[sparse.csr_array, np.ndarray]:
    """``values[:, cols]`` as CSR (``nonzero``: ``values != 0``), and the row
    of each stored entry (to weight the rows without a copy). Built from the
    flat positions of the block's nonzeros directly, row by row as CSR
    stores them: a fifth of the time of ``csr_array(values[:, cols])``, which
    goes through a COO copy (adult's 30162 x 88 indicator block: 4 against
    21 ms)."""
    n, q = values.shape[0], cols.size
    flat = np.flatnonzero(nonzero[:, cols])
    small = max(n * q, flat.size) < np.iinfo(np.int32).max
    index = np.int32 if small else np.int64
    rows, block_cols = np.divmod(flat, q)
    indptr = np.zeros(n + 1, dtype=index)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    matrix = sparse.csr_array(
        (values[rows, cols[block_cols]], block_cols.astype(index), indptr),
        shape=(n, q),
    )
    return matrix, rows.astype(index)


def as_design(exog) -> DesignMatrix:
    """``exog`` itself if it already is a :class:`DesignMatrix`, else wrapped."""
    return exog if isinstance(exog, DesignMatrix) else DesignMatrix(exog)
