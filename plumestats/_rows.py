"""Row sources: where the rows of a fit live, and one interface to their sums.

Every fit reads its data through a row source, whatever the data are:

* :class:`InMemoryRows` with ``chunksize=None``: the whole standardised design
  as one block (standardised once, kept as a :class:`DesignMatrix`); the
  problem keeps each point's per-row state for the next question at the same
  point, as an in-memory fit should. A design of more rows than
  :func:`~plumestats._objectives.slab_rows` is evaluated by slabs of that
  many rows (:meth:`InMemoryRows.slabs`, views of the one standardised
  design), each slab's state kept as the whole design's would be;
* :class:`InMemoryRows` with a ``chunksize``: blocks of rows of an in-memory
  design, each standardised on the fly slab by slab, so that no standardised
  copy of the design and no ``(n, K (K + 1) / 2)`` array is ever whole;
* ``plumestats._dask.DaskRows``: the partitions of Dask collections, one task
  per partition on whatever scheduler is active.

A source has ``nobs`` (rows), ``weights`` (frequency weights, or ``None``),
``weight_sum`` (the observations the rows stand for), ``n_cols``, ``scaling``,
``radius`` (the largest row norm of the raw design), ``reduce(kernel,
**arguments)`` (the combined ``kernel(z, y, weights=w, **arguments)`` over its
blocks; by blocks of ``chunksize`` the ``objective`` among the arguments sets
the slabs' size, a block is one slab without one), ``take(rows)`` (some
standardised rows, their outcomes and weights) and ``single`` (whether it is
one block held in memory, :attr:`InMemoryRows.design`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from ._design import DesignMatrix
from ._objectives import combine_sums, slab_rows, slab_sums
from ._scaling import DesignScaling, SlabStandardiser

__all__ = [
    "InMemoryRows",
    "combine_moments",
    "design_moments",
    "in_memory_moments",
    "scaling_from_moments",
]


def _non_finite_counted():
    """Quiet NumPy's warnings on a block with inf or NaN: the moments count
    those values (``nonfinite``) and the caller refuses them by column."""
    return np.errstate(invalid="ignore", over="ignore")


def design_moments(x: np.ndarray, y: np.ndarray, weights=None) -> dict:
    """Column moments of one block of the raw design, merged by
    :func:`combine_moments` (Chan et al.'s pairwise update of the variance).
    With ``weights`` (frequency weights) every row counts ``f_n`` times in the
    moments the standardisation reads, as if it were repeated."""
    n = x.shape[0]
    f = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    total = float(f.sum())
    # a row of weight 0 is no part of the fit: it cannot make a column vary
    fitted = x if weights is None else x[f > 0]
    with _non_finite_counted():
        mean = f @ x / total if total > 0 else np.zeros(x.shape[1])
        return {
            "nobs": n,
            "weight": total,
            "first": fitted[:1].copy(),
            "min": fitted.min(axis=0, initial=np.inf),
            "max": fitted.max(axis=0, initial=-np.inf),
            "mean": mean,
            "m2": f @ (x - mean) ** 2,
            "sumsq": f @ x**2,
            "nonzero": f @ (x != 0),
            "nonfinite": int(np.sum(~np.isfinite(x))),
            "radius": _largest_norm(x, weights),
            "yvalues": _distinct(y),
        }


def _distinct(values) -> np.ndarray:
    """The distinct outcomes, sorted; a missing one (None, NaN) is refused
    here, where a Dask outcome's values are first seen (``np.unique`` could
    not sort None among text)."""
    values = np.asarray(values)
    if pd.isna(values).any():
        raise ValueError(
            "endog has missing values (None or NaN); drop those rows first, "
            "e.g. ddf = ddf.dropna()"
        )
    return np.unique(values)


def combine_moments(left: dict, right: dict) -> dict:
    """Merge the moments of two consecutive blocks (``left`` comes first)."""
    if left["nobs"] == 0 or right["nobs"] == 0:
        return left if right["nobs"] == 0 else right
    w_a, w_b = left["weight"], right["weight"]
    w = w_a + w_b
    with _non_finite_counted():
        delta = right["mean"] - left["mean"]
        share = w_b / w if w > 0 else 0.0
        cross = w_a * w_b / w if w > 0 else 0.0
        return {
            "nobs": left["nobs"] + right["nobs"],
            "weight": w,
            # the first row in the fit (a block of weights 0 has none)
            "first": left["first"] if left["first"].shape[0] else right["first"],
            "min": np.minimum(left["min"], right["min"]),
            "max": np.maximum(left["max"], right["max"]),
            "mean": left["mean"] + delta * share,
            "m2": left["m2"] + right["m2"] + delta**2 * cross,
            "sumsq": left["sumsq"] + right["sumsq"],
            "nonzero": left["nonzero"] + right["nonzero"],
            "nonfinite": left["nonfinite"] + right["nonfinite"],
            "radius": max(left["radius"], right["radius"]),
            # each side's were checked by design_moments already
            "yvalues": np.union1d(left["yvalues"], right["yvalues"]),
        }


def scaling_from_moments(moments: dict) -> DesignScaling:
    """:meth:`DesignScaling.from_exog`'s choice, from block moments."""
    total = moments["weight"]
    return DesignScaling.from_moments(
        first_row=moments["first"][0],
        constant=moments["max"] == moments["min"],
        mean=moments["mean"],
        std=np.sqrt(moments["m2"] / total),
        rms=np.sqrt(moments["sumsq"] / total),
        mostly_zero=moments["nonzero"] <= total / 2,
    )


def in_memory_moments(exog, y, chunksize: int, weights=None) -> dict:
    """:func:`design_moments` of a whole in-memory design, block by block."""
    total = None
    for start in range(0, exog.shape[0], chunksize):
        rows = slice(start, start + chunksize)
        block_weights = None if weights is None else weights[rows]
        moments = design_moments(exog[rows], y[rows], block_weights)
        total = moments if total is None else combine_moments(total, moments)
    return total


class InMemoryRows:
    """The rows of an in-memory design: one standardised block, or blocks of
    ``chunksize`` rows standardised one at a time.

    Parameters
    ----------
    exog : ndarray, shape (n, p)
        The raw design (never copied whole when ``chunksize`` is given).
    y_pm : ndarray, shape (n,)
        Outcomes in ``{-1, +1}``, +1 for the class inside the polyhedron.
    scaling : DesignScaling, optional
        The standardisation; by default :meth:`DesignScaling.from_exog` (one
        block) or the block moments' (blocks).
    chunksize : int, optional
        Rows per block; ``None`` holds the design as one block.
    weights : ndarray, shape (n,), optional
        Observation weights (one by default).
    k : int, optional
        The model's faces: with ``chunksize=None``, the design is evaluated by
        slabs of :func:`~plumestats._objectives.slab_rows` rows. Without
        ``k``, as one slab.

    Attributes
    ----------
    single : bool
        Whether the rows are one standardised design held in memory (the
        problem then keeps per-row state), rather than blocks.
    design : DesignMatrix or None
        That design (``None`` by blocks).
    """

    def __init__(self, exog, y_pm, scaling=None, chunksize=None, weights=None, k=None):
        self.y_pm = np.asarray(y_pm, dtype=float)
        self.weights = weights
        self.nobs, self.n_cols = np.shape(exog)
        self.chunksize = None if chunksize is None else int(chunksize)
        self.weight_sum = self.nobs if weights is None else float(np.sum(weights))
        self.single = self.chunksize is None
        self._slab_rows = self.nobs if k is None else slab_rows(k)
        self._slabs: list[tuple] | None = None
        # by blocks: the (first, stop) rows of the slabs known not to split
        self._unsplit: set[tuple[int, int]] = set()
        if self.single:
            self.scaling = scaling or _scaling_of(exog, self.y_pm, weights)
            self.design = DesignMatrix(
                self.scaling.transform_exog(exog),
                # the slabs are designs of their own (their products would
                # add up to several times the data)
                keep_products=self._slab_rows >= self.nobs,
            )
            self.exog = None
            self.moments = None
            self.radius = _largest_row_norm(exog, weights)
        else:
            self.moments = in_memory_moments(exog, self.y_pm, self.chunksize, weights)
            self.scaling = scaling or scaling_from_moments(self.moments)
            self.design = None
            self.exog = exog
            self.radius = float(self.moments["radius"])

    @classmethod
    def standardised(cls, z, y_pm, weights=None) -> InMemoryRows:
        """Rows already standardised (the sample the starts and the re-seating
        moves read): kept as they are."""
        rows = cls.__new__(cls)
        rows.y_pm = np.asarray(y_pm, dtype=float)
        rows.weights = weights
        rows.nobs, rows.n_cols = np.shape(z)
        rows.weight_sum = rows.nobs if weights is None else float(np.sum(weights))
        rows.chunksize, rows.single, rows._slabs = None, True, None
        rows._unsplit = set()
        rows._slab_rows = rows.nobs
        rows.scaling, rows.exog, rows.moments = None, None, None
        rows.design = z if isinstance(z, DesignMatrix) else DesignMatrix(z)
        rows.radius = _largest_row_norm(rows.design.values, weights)
        return rows

    def slabs(self) -> list[tuple]:
        """The one design (``single``) as ``(design, y_pm, weights)`` slabs of
        rows: the whole design, or views of it of
        :func:`~plumestats._objectives.slab_rows` rows, each a
        :class:`DesignMatrix` built once (its indicator split too)."""
        if self._slabs is None:
            if self._slab_rows >= self.nobs:
                self._slabs = [(self.design, self.y_pm, self.weights)]
            else:
                self._slabs = [
                    self._slab(slice(start, start + self._slab_rows))
                    for start in range(0, self.nobs, self._slab_rows)
                ]
        return self._slabs

    def _slab(self, rows: slice) -> tuple:
        weights = None if self.weights is None else self.weights[rows]
        return DesignMatrix(self.design.values[rows]), self.y_pm[rows], weights

    def reduce(self, kernel=slab_sums, combine=combine_sums, **arguments) -> dict:
        """``kernel``'s sums over the rows, combined: the one design whole, or
        each block of ``chunksize`` rows by slabs of
        :func:`~plumestats._objectives.slab_rows` rows (``arguments``'
        objective's K; without an objective, whole), their sums added block by
        block."""
        if self.single:
            return kernel(self.design, self.y_pm, weights=self.weights, **arguments)
        # slabs sized for the objective's per-row state; a kernel without an
        # objective (the penalty's moments) reads each block whole
        objective = arguments.get("objective")
        step = self.chunksize if objective is None else slab_rows(objective.k)
        total = None
        for slabs in self._blocks(step):
            block = None
            for z, y, weights in slabs:
                sums = kernel(z, y, weights=weights, **arguments)
                block = sums if block is None else combine(block, sums)
            total = block if total is None else combine(total, block)
        return total

    def _blocks(self, step: int) -> Iterator[Iterator[tuple]]:
        """Each block's slabs of ``step`` rows, standardised one at a time
        into one buffer: a slab's standardised rows are still in cache when
        its products read them (at 1e7 x 21, K = 3, blocks of 58,254 rows
        standardised whole took 5.25 s per iteration, slab by slab 4.84 s),
        and a new array per block would fetch fresh pages from the kernel at
        every pass."""
        step = min(step, self.chunksize)
        standardise = SlabStandardiser(self.scaling, min(step, self.nobs))
        for start in range(0, self.nobs, self.chunksize):
            stop = min(start + self.chunksize, self.nobs)
            yield self._block_slabs(start, stop, step, standardise)

    def _block_slabs(
        self, start: int, stop: int, step: int, standardise
    ) -> Iterator[tuple]:
        """The slabs of rows ``start:stop`` (each valid until the next: they
        share the standardiser's buffer), as designs. A slab that did not
        split into dense and indicator columns at one pass does not at the
        next (the same rows, standardised the same way): its nonzeros are
        counted once per fit, not at every pass (0.2 ms a slab of 16,384 x
        21, a twentieth of its pass)."""
        for first in range(start, stop, step):
            rows = slice(first, min(first + step, stop))
            weights = None if self.weights is None else self.weights[rows]
            known = (rows.start, rows.stop) in self._unsplit
            design = DesignMatrix(standardise(self.exog[rows]), split=not known)
            if not design.is_split:
                self._unsplit.add((rows.start, rows.stop))
            yield design, self.y_pm[rows], weights

    def take(self, rows: np.ndarray) -> tuple:
        """Standardised design rows, outcomes and weights (``None`` without)
        at sorted row indices."""
        weights = None if self.weights is None else self.weights[rows]
        if self.single:
            return self.design.values[rows], self.y_pm[rows], weights
        return self.scaling.transform_exog(self.exog[rows]), self.y_pm[rows], weights


def _scaling_of(exog, y_pm, weights) -> DesignScaling:
    """The standardisation of one in-memory block (with frequency weights, as
    for the rows repeated)."""
    if weights is None:
        return DesignScaling.from_exog(exog)
    return scaling_from_moments(design_moments(exog, y_pm, weights))


def _largest_norm(block: np.ndarray, weights=None) -> float:
    """``max_n ||x_n||`` over the rows of one block that are in the fit (a
    row of frequency weight 0 is not)."""
    squares = np.einsum("ij,ij->i", block, block)
    if weights is not None:
        squares = squares[np.asarray(weights) > 0]
    return float(np.sqrt(np.max(squares, initial=0.0)))


def _largest_row_norm(exog, weights=None) -> float:
    """:func:`_largest_norm` by row blocks (no ``(n, p)`` temporary)."""
    values = exog.values if isinstance(exog, DesignMatrix) else exog
    largest = 0.0
    for start in range(0, values.shape[0], 65536):
        rows = slice(start, start + 65536)
        block = np.asarray(values[rows], dtype=float)
        block_weights = None if weights is None else weights[rows]
        largest = max(largest, _largest_norm(block, block_weights))
    return largest
