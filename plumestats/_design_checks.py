"""The design's checks and their one-pass summary: values no fit can use
(missing, infinite, complex, of extreme magnitude) named by column, rank
deficiency named by column, and statsmodels' names for an unnamed design, all
read by row blocks (never a copy of the design)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ._aliasing import Aliasing, null_directions
from ._diagnostics import caller_stacklevel

__all__ = [
    "CHECK_BLOCK_BYTES",
    "MAX_MAGNITUDE",
    "DesignSummary",
    "add_block",
    "check_design",
    "check_magnitudes",
    "combine_summaries",
    "count_not_kept",
    "dependent_columns",
    "design_summary",
    "float_blocks",
    "names_from_variance",
    "raise_if_bad",
    "refuse_complex",
    "row_blocks",
    "statsmodels_exog_names",
]


# Largest (and inverse of the smallest non-zero) magnitude of a design value:
# the fit squares and multiplies values and sums them over rows, which
# overflows (or underflows to zero) a little beyond 1e154 (1e-154); at 1e154
# the fit collapsed to the null model, reported as converged.
MAX_MAGNITUDE = 1e150


def check_magnitudes(minimum, maximum, names) -> None:
    """Refuse, by name, the columns whose largest magnitude is beyond
    :data:`MAX_MAGNITUDE` or below its inverse (zero columns aside)."""
    magnitude = np.maximum(np.abs(minimum), np.abs(maximum))
    extreme = [
        j
        for j in range(len(names))
        if magnitude[j] > MAX_MAGNITUDE or 0 < magnitude[j] < 1 / MAX_MAGNITUDE
    ]
    if extreme:
        listed = ", ".join(f"{names[j]!r} (up to {magnitude[j]:.1e})" for j in extreme)
        raise ValueError(
            f"exog has columns of extreme magnitude: {listed}. The fit's sums of "
            f"squares and products overflow or underflow beyond {MAX_MAGNITUDE:.0e} "
            f"(or below {1 / MAX_MAGNITUDE:.0e}); rescale those columns, e.g. to "
            "standard units"
        )


def check_design(
    summary: DesignSummary, names: list[str], nobs: int
) -> tuple[int, Aliasing]:
    """Errors for designs no fit can use; a warning naming the columns when the
    design is rank deficient (some coefficients are then not identified).
    Returns the design's rank (its columns less the dependent ones), which
    statsmodels' discrete models count the degrees of freedom by, and its
    :class:`~plumestats._aliasing.Aliasing`.

    ``summary`` comes from one pass over row blocks (:func:`design_summary`
    in memory, the partitions' on Dask): the memory it needs is a few blocks
    and ``(p, p)`` matrices, never a copy of the design.
    """
    from statsmodels.tools.sm_exceptions import CollinearityWarning

    if nobs == 0:
        raise ValueError(
            "there are no observations (after dropping missing values, if "
            "missing='drop')"
        )
    counts = summary.n_not_finite
    if counts.any():
        listed = ", ".join(
            f"{names[j]!r} ({counts[j]} rows)" for j in np.flatnonzero(counts)
        )
        raise ValueError(
            f"exog has missing or infinite values in {listed}. Drop or impute those "
            "rows, or pass missing='drop' (which drops NaN; infinite values must be "
            "handled by you)."
        )
    check_magnitudes(summary.minimum, summary.maximum, names)
    aliased = null_directions(summary)
    dependent = list(aliased.dependent)
    if dependent:
        partners = _partners(summary, aliased)
        warnings.warn(
            "The design matrix is rank deficient: "
            f"{_rank_deficiency(summary, dependent, partners, names, nobs)}. "
            f"{_unidentified_advice(aliased, names, nobs)}",
            CollinearityWarning,
            # the user's line, past the model's construction (and statsmodels'
            # from_formula on the formula path)
            stacklevel=caller_stacklevel(),
        )
    return len(names) - len(dependent), aliased


def _unidentified_advice(aliased: Aliasing, names: list[str], nobs: int) -> str:
    """What a rank deficiency means for an unpenalised fit, and the remedies."""
    remedy = (
        "drop the redundant columns, or fit with an L2 penalty (alpha > 0), "
        "which identifies them."
    )
    if nobs < len(names):  # no unpenalised fit: fit refuses it
        return f"Without a penalty the hyperplanes are not identified: {remedy}"
    listed = ", ".join(repr(names[j]) for j in aliased.unidentified)
    return (
        f"Without a penalty the coefficients of {listed} are not identified "
        "(their estimates are arbitrary and their standard errors NaN; the "
        f"other coefficients are estimable): {remedy}"
    )


def _rank_deficiency(summary, dependent, partners, names, nobs) -> str:
    """What makes the design rank deficient, in words: all-zero columns (an
    unused category level), constants beside the first (the intercept),
    linear combinations, or more columns than rows."""
    n_cols = len(names)
    if nobs < n_cols:
        return (
            f"it has {n_cols} columns but only {nobs} rows, so its rank is at "
            f"most {nobs}"
        )
    zero = (summary.minimum == 0) & (summary.maximum == 0)
    constant = (summary.maximum == summary.minimum) & ~zero
    first_constant = int(np.argmax(constant)) if constant.any() else None
    parts = []
    zeros = [j for j in dependent if zero[j]]
    if zeros:
        parts.append(
            "all zero, "
            + ", ".join(repr(names[j]) for j in zeros)
            + " (an unused category level? For a pandas categorical, drop it "
            "with .cat.remove_unused_categories())"
        )
    extra = [j for j in np.flatnonzero(constant) if j != first_constant]
    if extra:
        parts.append(
            f"constant besides the intercept {names[first_constant]!r}: "
            + ", ".join(repr(names[j]) for j in extra)
        )
    # the columns whose combinations are dependent, the intercept included
    # when the others add up to it (dummies of every level of a factor)
    combined = sorted(set(dependent + partners) - set(zeros) - set(extra))
    if combined:
        parts.append(
            "linear combinations of other columns: "
            + ", ".join(repr(names[j]) for j in combined)
        )
    return "; ".join(parts)


# Rows per block of the design checks: about 1 MiB of float64 (the checks hold a
# few blocks at a time), and at least 4 p rows so that stacking the running
# (p, p) triangle on each block adds at most a quarter to the QR's work.
CHECK_BLOCK_BYTES = 2**20


def row_blocks(nobs: int, n_cols: int) -> list[slice]:
    """Row slices of about ``CHECK_BLOCK_BYTES`` of float64 each."""
    rows = max(256, 4 * n_cols, CHECK_BLOCK_BYTES // (8 * max(n_cols, 1)))
    return [slice(start, min(start + rows, nobs)) for start in range(0, nobs, rows)]


def float_blocks(values):
    """``values`` (an array or a numeric DataFrame) as float64 row blocks: views
    of a float64 array, block-sized copies otherwise."""
    nobs, n_cols = values.shape
    for rows in row_blocks(nobs, n_cols):
        if hasattr(values, "iloc"):
            yield values.iloc[rows].to_numpy(dtype=float)
        else:
            yield np.asarray(values[rows], dtype=float)


@dataclass(frozen=True)
class DesignSummary:
    """What the design checks need from the rows, gathered block by block.

    ``r`` is the triangular factor of a QR decomposition of the whole design,
    ``X = Q R`` (``None`` when some entry is not finite): ``X'X = R'R``, the
    column norms of ``X`` are those of ``R`` and least-squares problems on
    columns of ``X`` have the same solutions on the columns of ``R``.
    """

    n_not_finite: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    r: np.ndarray | None


def design_summary(exog, weights=None) -> DesignSummary:
    r"""Non-finite counts, column extremes and the R factor of ``exog`` in one
    pass over row blocks.

    Notes
    -----
    R is accumulated as a tall-skinny QR: with :math:`R_b` the factor of the
    first ``b`` blocks, :math:`R_{b+1}` is the factor of :math:`[R_b; X_{b+1}]`
    (both have the same Gram matrix as the rows so far, and Householder QR is
    backward stable column by column). Unlike the Gram matrix :math:`X'X`,
    whose eigenvalues square the condition number, R keeps the singular values
    of X to rounding, so the rank criterion of :func:`dependent_columns`
    (a ratio of :math:`10^{-9}`) can be decided exactly as on the whole design.
    A row of frequency weight 0 (``weights``) is no part of the fit: it is
    counted only for missing values.
    """
    summary = DesignSummary(
        np.zeros(exog.shape[1], dtype=np.intp),
        np.full(exog.shape[1], np.inf),
        np.full(exog.shape[1], -np.inf),
        np.zeros((0, exog.shape[1])),
    )
    nobs, n_cols = exog.shape
    for rows, block in zip(row_blocks(nobs, n_cols), float_blocks(exog), strict=True):
        keep = None if weights is None else np.asarray(weights[rows]) > 0
        summary = add_block(summary, block, keep)
    return summary


def add_block(summary: DesignSummary, block: np.ndarray, keep=None) -> DesignSummary:
    """The summary of the rows so far, ``summary``, and one more block: the
    incremental step of the tall-skinny QR (:func:`design_summary`). Only the
    rows ``keep`` marks (all without it) count beyond missing values."""
    counts, minimum, maximum, r = (
        summary.n_not_finite.copy(),
        summary.minimum.copy(),
        summary.maximum.copy(),
        summary.r,
    )
    finite = np.isfinite(block)
    if not finite.all():
        counts += block.shape[0] - np.count_nonzero(finite, axis=0)
        r = None
    if r is None:  # non-finite rows: only the counts matter now
        return DesignSummary(counts, minimum, maximum, None)
    if keep is not None:
        block = block[keep]
    np.minimum(minimum, block.min(axis=0, initial=np.inf), out=minimum)
    np.maximum(maximum, block.max(axis=0, initial=-np.inf), out=maximum)
    if max(-minimum.min(initial=0.0), maximum.max(initial=0.0)) > MAX_MAGNITUDE:
        # its squares would overflow: check_design refuses it
        return DesignSummary(counts, minimum, maximum, None)
    return DesignSummary(counts, minimum, maximum, _stacked_triangle(r, block))


def combine_summaries(left: DesignSummary, right: DesignSummary) -> DesignSummary:
    """The summary of two consecutive ranges of rows (Dask's partitions),
    each summarised alone: the R factor of the stacked factors."""
    counts = left.n_not_finite + right.n_not_finite
    minimum = np.minimum(left.minimum, right.minimum)
    maximum = np.maximum(left.maximum, right.maximum)
    if left.r is None or right.r is None:
        return DesignSummary(counts, minimum, maximum, None)
    return DesignSummary(counts, minimum, maximum, _stacked_triangle(left.r, right.r))


def _stacked_triangle(r: np.ndarray, block: np.ndarray) -> np.ndarray:
    """The triangular factor of ``[r; block]``."""
    from scipy.linalg import qr

    n_cols = block.shape[1]
    # one Fortran-ordered buffer that LAPACK may overwrite: no further copy
    stacked = np.empty((r.shape[0] + block.shape[0], n_cols), order="F")
    stacked[: r.shape[0]] = r
    stacked[r.shape[0] :] = block
    if stacked.shape[0] == 0:
        return stacked
    # mode="raw" returns the (min(m, p), p) triangle; mode="r" would
    # return a full (m, p) R, mostly zeros
    _, triangle = qr(stacked, mode="raw", overwrite_a=True, check_finite=False)
    return triangle


def dependent_columns(summary: DesignSummary) -> tuple[list[int], list[int]]:
    """Columns that QR with column pivoting finds to be linearly dependent on the
    others (after scaling each column to unit norm), and the non-constant columns
    they are combinations of (:func:`plumestats._aliasing.null_directions`)."""
    aliased = null_directions(summary)
    return list(aliased.dependent), _partners(summary, aliased)


def _partners(summary: DesignSummary, aliased: Aliasing) -> list[int]:
    """The non-constant columns besides the dependent ones that the null
    directions move."""
    varying = summary.maximum > summary.minimum
    moved = set(aliased.unidentified) - set(aliased.dependent)
    return sorted(j for j in moved if varying[j])


def statsmodels_exog_names(exog: np.ndarray) -> list[str]:
    """The names statsmodels gives the columns of an unnamed array design
    (``statsmodels.base.data._make_exog_names``): ``const`` for the first
    column of zero variance, ``x1, x2, ...`` for the others.

    statsmodels decides on ``exog.var(0)``, which builds an ``(n, p)`` array of
    deviations; here the deviations from the same mean (numpy's own column
    reduction, so the same rounding) are squared and summed block by block.
    A variance is exactly zero when every squared deviation is, so the decision
    is the same (but for sums of subnormal squares).
    """
    nobs, n_cols = exog.shape
    mean = exog.mean(axis=0)
    squares = np.zeros(n_cols)
    with np.errstate(over="ignore"):  # an overflowing variance is not zero
        for block in float_blocks(exog):
            deviation = block - mean
            deviation *= deviation
            squares += deviation.sum(axis=0)
    return names_from_variance(squares / max(nobs, 1))


def names_from_variance(variance: np.ndarray) -> list[str]:
    """statsmodels' rule for an unnamed design's columns: ``const`` for the
    first column of zero variance, ``x1, x2, ...`` for all the others (a
    second constant column is an ``x``, so no two names are alike)."""
    n_cols = variance.size
    # a column with missing values has no variance to decide on: not constant
    variance = np.where(np.isfinite(variance), variance, np.inf)
    if (variance == 0).any():
        names = [f"x{i:d}" for i in range(1, n_cols)]
        names.insert(int(variance.argmin()), "const")
        return names
    return [f"x{i:d}" for i in range(1, n_cols + 1)]


def refuse_complex(frame, where: str) -> None:
    """Complex columns are numbers to pandas, but NumPy's cast to float would
    drop their imaginary parts with only a ComplexWarning."""
    import pandas as pd

    complex_columns = [
        str(c) for c, dt in frame.dtypes.items() if pd.api.types.is_complex_dtype(dt)
    ]
    if complex_columns:
        raise ValueError(
            f"{where} has complex values in {complex_columns}; the model needs "
            "real numbers"
        )


def count_not_kept(values, missing: str) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the entries that ``missing`` will not drop: NaN (none when
    ``missing='drop'``) and infinite values (statsmodels drops NaN rows only)."""
    n_nan = np.zeros(values.shape[1], dtype=np.intp)
    n_inf = np.zeros(values.shape[1], dtype=np.intp)
    for block in float_blocks(values):
        if np.isfinite(block).all():
            continue
        n_inf += np.count_nonzero(np.isinf(block), axis=0)
        if missing != "drop":
            n_nan += np.count_nonzero(np.isnan(block), axis=0)
    return n_nan, n_inf


def raise_if_bad(where: str, counts: dict) -> None:
    """One error naming every column with values that cannot be used, and how
    many of each kind, with the fix; ``counts`` is ``{column: (n_missing,
    n_infinite)}``."""
    counts = {c: (int(a), int(b)) for c, (a, b) in counts.items() if a or b}
    if not counts:
        return

    def amount(n, kind):
        return f"{n} {kind} value{'s' if n != 1 else ''}"

    listed = ", ".join(
        f"{c!r} ("
        + ", ".join(
            amount(n, kind)
            for n, kind in zip(pair, ("missing", "infinite"), strict=True)
            if n
        )
        + ")"
        for c, pair in counts.items()
    )
    fixes = []
    if any(n_nan for n_nan, _ in counts.values()):
        fixes.append(
            "drop or impute the rows with missing values, or pass missing='drop'"
        )
    if any(n_inf for _, n_inf in counts.values()):
        fixes.append(
            "replace or drop the rows with infinite values yourself (missing='drop' "
            "drops only missing values, NaN)"
        )
    raise ValueError(f"{where} has non-finite values in {listed}; {'; '.join(fixes)}")
