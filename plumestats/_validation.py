"""Checks at the boundary: arguments and data, with expected-versus-got messages."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ._compat import nullable_as_float

__all__ = [
    "DesignSummary",
    "add_block",
    "check_choice",
    "check_design",
    "check_flag",
    "check_int",
    "check_positive_float",
    "coerce_exog",
    "combine_summaries",
    "design_summary",
    "encode_outcome",
    "float_vector",
    "names_from_variance",
    "prepare_endog",
    "resolve_inside",
    "row_blocks",
    "statsmodels_exog_names",
]


def check_int(value, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (bools are refused: ``k=True`` is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_flag(value, name: str, allow_none: bool = False):
    """``True`` or ``False`` (numpy's booleans, and the integers 0 and 1 that
    statsmodels' own signatures use, too; ``None`` if allowed)."""
    if value is None and allow_none:
        return None
    is_int = isinstance(value, numbers.Integral) and value in (0, 1)
    if not (isinstance(value, (bool, np.bool_)) or is_int):
        allowed = "True, False or None" if allow_none else "True or False"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return bool(value)


def check_positive_float(value, name: str, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (or ``>= 0``)."""
    bound = ">= 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {bound}, got {value}")
    return value


# Beyond this the soft gate equals the hard one to within rounding at any
# sensible scale of the scores, while its curvature (gamma**2) swamps the
# experts' in the Newton steps: EM stalls at its start (seen from gamma = 1e8)
# and gamma**2 overflows from about 1e154.
MAX_GAMMA = 1e6


def check_gamma(
    value, name: str = "gamma", hard: str | None = "HardPolyhedralLogit (ps.spla1)"
) -> float:
    """A gate sharpness: finite, ``> 0`` and at most :data:`MAX_GAMMA`.

    ``hard`` says where the caller offers the hard-gating limit (``None``: it
    does not), for the messages.
    """
    if isinstance(value, numbers.Real) and value == np.inf:
        if hard is None:
            raise ValueError(
                f"{name} must be finite: this model has no hard-gating variant "
                "(gamma = inf)"
            )
        raise ValueError(
            f"{name}=inf is the hard-gating model: use {hard} for it, or a finite "
            "gamma here"
        )
    value = check_positive_float(value, name)
    if value > MAX_GAMMA:
        remedy = (
            f"for the hard-gating limit use {hard}"
            if hard
            else "this model has no hard-gating variant"
        )
        raise ValueError(
            f"{name} must be at most {MAX_GAMMA:.0e}, got {value:g}: beyond that the "
            "gate is already hard to within rounding and the fit loses precision; "
            f"{remedy}"
        )
    return value


def float_vector(values, name: str) -> np.ndarray:
    """``values`` as a float array, or a ``ValueError`` naming ``name`` (NumPy's
    own, "could not convert string to float", does not say which argument)."""
    if not isinstance(values, str | bytes | dict | set):
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            pass
    shown = repr(values)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ValueError(
        f"{name} must be an array of numbers, got a {type(values).__name__}: {shown}"
    )


def as_grid(values, name: str) -> list:
    """A grid of candidate values; a single number is a grid of one."""
    if isinstance(values, numbers.Number):
        return [values]
    if isinstance(values, np.ndarray) and values.ndim == 0:
        return [values.item()]
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValueError(
            f"{name} must be a number or a sequence of numbers, got {values!r}"
        )
    return list(values)


def check_identified(model, alpha: float) -> None:
    """More parameters than observations are identified only under a penalty:
    refused at ``fit`` for ``alpha == 0`` (a ridge fit of a wide design is fine)."""
    k, n_cols, n_params = model.k, model.k_vars, model.nparams
    if alpha == 0 and n_params > model.nobs:
        extra = n_params - k * n_cols  # the label-flip model's flip rate
        counted = f"k * p = {k} * {n_cols}" + (f" + {extra}" if extra else "")
        raise ValueError(
            f"the model has {counted} = {n_params} parameters but only "
            f"{model.nobs} observations, too few to identify them without a "
            "penalty; use a smaller k, fewer columns, or an L2 penalty, e.g. "
            "fit(alpha=1e-3)"
        )


def check_choice(value, name: str, allowed: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    allowed = tuple(allowed)
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


def require_estimation_data(model, what: str, remedy: str) -> None:
    """Raise a clear ``ValueError`` when ``remove_data()`` dropped the sample
    that ``what`` needs; ``remedy`` says what to do instead."""
    if model.exog is None:
        # a fit loaded from JSON says why it has no data in its own words
        why = getattr(model, "_without_data", "which remove_data() dropped")
        raise ValueError(f"{what} the estimation data, {why}; {remedy}")


def prepare_endog(endog):
    """Encode a non-numeric outcome (strings, booleans, categoricals) to 0/1
    before statsmodels sees it, which casts its data to float.

    Returns ``(endog, mapping)``; ``mapping`` is ``None`` when ``endog`` is numeric
    and left for :func:`encode_outcome`. Missing values stay NaN, so that
    statsmodels' ``missing`` handling applies to them.
    """
    import pandas as pd

    series = endog
    if isinstance(series, pd.DataFrame) and series.shape[1] == 1:
        series = series.iloc[:, 0]
    if pd.api.types.is_complex_dtype(getattr(series, "dtype", None)) or (
        not hasattr(series, "dtype") and np.iscomplexobj(series)
    ):
        # NumPy would drop the imaginary parts with only a ComplexWarning
        raise ValueError(
            "endog has complex values; the outcome must be two real levels, e.g. "
            "0/1, or labels"
        )
    if not isinstance(series, pd.Series) and isinstance(
        getattr(series, "dtype", None), pd.CategoricalDtype
    ):
        # a bare pd.Categorical (or CategoricalIndex): its declared order codes
        # the classes, as for a categorical Series and in a formula; np.asarray
        # would lose it and sort the labels instead
        codes, mapping = prepare_endog(pd.Series(series))
        return codes.to_numpy(), mapping
    if isinstance(series, pd.Series):
        dtype = series.dtype
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(
            dtype
        ):
            return endog, None
        if isinstance(dtype, pd.CategoricalDtype):
            levels = [c for c in dtype.categories if c in set(series.dropna())]
        else:
            levels = sorted(series.dropna().unique(), key=_sort_key)
        mapping = _two_level_mapping(levels)
        codes = series.map(mapping).astype(float)
        return codes, mapping
    values = np.asarray(endog)
    if values.dtype.kind in "biufc" and values.dtype != bool:
        return endog, None
    flat = pd.Series(
        values[:, 0] if values.ndim == 2 and values.shape[1] == 1 else values
    )
    mapping = _two_level_mapping(sorted(flat.dropna().unique(), key=_sort_key))
    return flat.map(mapping).to_numpy(dtype=float), mapping


def _sort_key(value):
    return (str(type(value)), value)


def _two_level_mapping(levels) -> dict:
    levels = [
        level.item() if isinstance(level, np.generic) else level for level in levels
    ]
    if len(levels) != 2:
        shown = ", ".join(repr(level) for level in levels[:10])
        raise ValueError(f"endog must have two levels, found {len(levels)}: [{shown}]")
    return {levels[0]: 0, levels[1]: 1}


def encode_outcome(endog: np.ndarray, names=None) -> tuple[np.ndarray, dict, str]:
    """Map a two-level outcome to ``{0, 1}``.

    ``{0, 1}`` stays as it is, ``{-1, 1}`` maps ``-1 -> 0``, booleans map to 0/1. A
    formula's non-numeric outcome arrives as patsy's indicator columns
    ``y[a], y[b]``: the second level is coded 1. Returns the 0/1 float array, the
    mapping ``{original: code}`` shown in the summary, and the outcome's name.
    """
    values = np.asarray(endog)
    name = names[0] if isinstance(names, list | tuple) and names else names
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim == 2:
        levels, name = _indicator_levels(names, values.shape[1])
        if levels == ["False", "True"]:  # patsy's names for a boolean outcome
            levels = [False, True]
        mapping = _two_level_mapping(levels)
        return values[:, 1].astype(float), mapping, name
    if values.dtype == bool:
        return values.astype(float), {False: 0, True: 1}, name
    try:
        values = values.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "endog must be numeric, boolean, or have two levels; recode it to 0/1"
        ) from exc
    if np.isnan(values).any():
        raise ValueError(
            f"endog has {int(np.isnan(values).sum())} missing values; drop those "
            "rows or use missing='drop'"
        )
    levels = np.unique(values)
    if levels.size != 2:
        shown = ", ".join(f"{v:g}" for v in levels[:10])
        raise ValueError(f"endog must have two levels, found {levels.size}: [{shown}]")
    if set(levels) == {0.0, 1.0}:
        return values, {0: 0, 1: 1}, name
    if set(levels) == {-1.0, 1.0}:
        return (values > 0).astype(float), {-1: 0, 1: 1}, name
    raise ValueError(
        f"endog must be coded 0/1, -1/+1 or boolean; found levels {levels[0]:g} and "
        f"{levels[1]:g}. Recode it, e.g. (y == {levels[1]:g}).astype(int)"
    )


def _indicator_levels(names, n_columns):
    """Levels from patsy's indicator names ``y[a], y[b]`` (or ``y[T.b]``)."""
    if not isinstance(names, list | tuple) or len(names) != n_columns:
        names = [f"level{i}" for i in range(n_columns)]
    base = names[0].split("[", 1)[0]
    levels = []
    for column in names:
        label = column[len(base) + 1 : -1] if column.startswith(base + "[") else column
        levels.append(label[2:] if label.startswith("T.") else label)
    return levels, base


def resolve_inside(inside, mapping: dict) -> int:
    """The 0/1 code of the class that forms the polyhedron.

    ``inside`` may be an original label of the outcome (a key of ``mapping``) or a
    code, 0 or 1.
    """
    for label, code in mapping.items():
        if _same_label(inside, label):
            return int(code)
    if not isinstance(inside, bool) and inside in (0, 1):
        return int(inside)
    labels = ", ".join(repr(label) for label in mapping)
    raise ValueError(
        f"inside must be one of the outcome's labels ({labels}) or a code 0/1; "
        f"got {inside!r}"
    )


def _same_label(a, b) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


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


def check_design(summary: DesignSummary, names: list[str], nobs: int) -> None:
    """Errors for designs no fit can use; a warning naming the columns when the
    design is rank deficient (the hyperplanes are then not identified).

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
    dependent, partners = _dependent_columns(summary)
    if dependent:
        warnings.warn(
            "The design matrix is rank deficient: "
            f"{_rank_deficiency(summary, dependent, partners, names, nobs)}. "
            "Without a penalty the hyperplanes are not identified and their "
            "standard errors are NaN: drop those columns, or fit with an L2 "
            "penalty (alpha > 0), which identifies them.",
            CollinearityWarning,
            stacklevel=3,
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
_CHECK_BLOCK_BYTES = 2**20


def row_blocks(nobs: int, n_cols: int) -> list[slice]:
    """Row slices of about ``_CHECK_BLOCK_BYTES`` of float64 each."""
    rows = max(256, 4 * n_cols, _CHECK_BLOCK_BYTES // (8 * max(n_cols, 1)))
    return [slice(start, min(start + rows, nobs)) for start in range(0, nobs, rows)]


def _float_blocks(values):
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


def design_summary(exog) -> DesignSummary:
    r"""Non-finite counts, column extremes and the R factor of ``exog`` in one
    pass over row blocks.

    Notes
    -----
    R is accumulated as a tall-skinny QR: with :math:`R_b` the factor of the
    first ``b`` blocks, :math:`R_{b+1}` is the factor of :math:`[R_b; X_{b+1}]`
    (both have the same Gram matrix as the rows so far, and Householder QR is
    backward stable column by column). Unlike the Gram matrix :math:`X'X`,
    whose eigenvalues square the condition number, R keeps the singular values
    of X to rounding, so the rank criterion of :func:`_dependent_columns`
    (a ratio of :math:`10^{-9}`) can be decided exactly as on the whole design.
    """
    summary = DesignSummary(
        np.zeros(exog.shape[1], dtype=np.intp),
        np.full(exog.shape[1], np.inf),
        np.full(exog.shape[1], -np.inf),
        np.zeros((0, exog.shape[1])),
    )
    for block in _float_blocks(exog):
        summary = add_block(summary, block)
    return summary


def add_block(summary: DesignSummary, block: np.ndarray) -> DesignSummary:
    """The summary of the rows so far, ``summary``, and one more block: the
    incremental step of the tall-skinny QR (:func:`design_summary`)."""
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


def _dependent_columns(summary: DesignSummary) -> tuple[list[int], list[int]]:
    """Columns that QR with column pivoting finds to be linearly dependent on the
    others (after scaling each column to unit norm), and the non-constant columns
    they are combinations of.

    The pivoted QR runs on the ``(p, p)`` factor ``R D^{-1}`` of the scaled
    design ``X D^{-1} = Q R D^{-1}``: the orthogonal ``Q`` changes neither the
    column norms that choose the pivots nor the diagonal they produce, nor the
    least-squares coefficients that name the partners.
    """
    from scipy.linalg import lstsq, qr

    zero = np.flatnonzero((summary.minimum == 0) & (summary.maximum == 0))
    norms = np.linalg.norm(summary.r, axis=0)
    scaled = summary.r / np.where(norms == 0, 1.0, norms)
    scaled[:, zero] = 0.0
    _, r, pivots = qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-9 * diag[0])) if diag.size else 0
    dependent = sorted(set(pivots[rank:].tolist()) | set(zero.tolist()))
    partners: set[int] = set()
    basis = pivots[:rank]
    varying = summary.maximum > summary.minimum
    for j in dependent:
        if j in zero or rank == 0:
            continue
        coef = lstsq(scaled[:, basis], scaled[:, j])[0]
        partners.update(
            int(basis[i])
            for i in np.flatnonzero(np.abs(coef) > 1e-8)
            if varying[basis[i]]
        )
    return dependent, sorted(partners)


def coerce_exog(exog):
    """``exog`` as something with a shape: lists and tuples become arrays (as
    statsmodels' ``Logit`` takes them; ``GenericLikelihoodModel`` reads
    ``exog.shape``). Sparse matrices, repeated column names and designs
    without columns are refused by name."""
    from scipy import sparse

    if sparse.issparse(exog):
        raise TypeError(
            f"exog is a sparse matrix ({type(exog).__name__}); sparse matrices are "
            "not supported: pass a dense array, exog.toarray()"
        )
    if not hasattr(exog, "shape"):
        try:
            exog = np.asarray(exog)
        except ValueError as exc:
            raise ValueError(
                "exog must be a table of numbers, one row per observation with "
                f"the same number of columns in each; could not read it ({exc})"
            ) from exc
    columns = getattr(exog, "columns", None)
    if columns is not None and columns.has_duplicates:
        repeated = list(dict.fromkeys(columns[columns.duplicated()]))
        raise ValueError(
            f"exog has more than one column named {', '.join(map(repr, repeated))}; "
            "give each column a distinct name (the parameter names are made from "
            "them)"
        )
    exog = nullable_as_float(exog)
    if columns is not None:
        # booleans as numbers: statsmodels 0.14 cast a frame mixing them with
        # numbers to an object array, and refused it
        flags = [
            c
            for c, dtype in exog.dtypes.items()
            if isinstance(dtype, np.dtype) and dtype.kind == "b"
        ]
        if flags:
            exog = exog.astype(dict.fromkeys(flags, float))
    if np.ndim(exog) not in (1, 2):
        raise ValueError(
            f"exog must be a table of one row per observation (2 dimensions), "
            f"got {np.ndim(exog)} dimensions, shape {np.shape(exog)}"
        )
    if np.ndim(exog) == 2 and np.shape(exog)[1] == 0:
        raise ValueError(
            f"exog has no columns (shape {np.shape(exog)}); the hyperplanes need "
            "at least one, e.g. a constant column (a formula adds it unless it "
            "has '0 +' or '- 1')"
        )
    return exog


def precheck_data(endog, exog, missing: str) -> None:
    """Checks that must run before statsmodels' data handling, whose own errors do
    not name the column: non-numeric features, and NaN or infinite values that the
    ``missing`` option will not drop (statsmodels drops NaN only).

    The values are read by row blocks: no copy of the design is made, and the
    column names are worked out only for an error message.
    """
    import pandas as pd

    if isinstance(exog, pd.DataFrame):
        names = [str(c) for c in exog.columns]
        text = [
            n
            for n, dt in zip(names, exog.dtypes, strict=True)
            if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
        ]
        _refuse_complex(exog, "exog")
        if text:
            raise ValueError(
                f"exog columns {text} are not numeric; encode them first (with a "
                "formula, C(column) one-hot encodes a categorical)"
            )
        values = exog
    else:
        values = np.asarray(exog)
        if values.dtype.kind not in "biuf":
            raise ValueError(f"exog must be numeric, got dtype {values.dtype}")
        values = values.reshape(values.shape[0], -1)
        names = None
    n_nan, n_inf = _count_not_kept(values, missing)
    bad = np.flatnonzero(n_nan + n_inf)
    if bad.size and names is None:
        names = _array_column_names(values)
    _raise_if_bad("exog", {names[j]: (n_nan[j], n_inf[j]) for j in bad})
    y = pd.Series(np.asarray(endog).ravel()) if np.ndim(endog) <= 1 else None
    if missing != "drop":
        if y is not None and y.isna().any():
            raise ValueError(
                f"endog has {int(y.isna().sum())} missing values; drop those rows "
                "or pass missing='drop'"
            )
    elif values.shape[0]:
        _check_rows_left(y, values, names)


def _refuse_complex(frame, where: str) -> None:
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


def _check_rows_left(y, values, names) -> None:
    """A clear error when ``missing='drop'`` would drop every row (statsmodels
    would go on to reduce zero-row arrays), naming the columns with no value."""
    incomplete, has_value = [], np.zeros(values.shape[1], dtype=bool)
    for block in _float_blocks(values):
        missing = np.isnan(block)
        incomplete.append(missing.any(axis=1))
        has_value |= ~missing.all(axis=0)
    incomplete = np.concatenate(incomplete)
    if y is not None and len(y) == len(incomplete):
        incomplete |= y.isna().to_numpy()
    if not incomplete.all():
        return
    names = names if names is not None else _array_column_names(values)
    empty = [names[j] for j in np.flatnonzero(~has_value)]
    where = (
        f"; these columns have no value at all: {', '.join(map(repr, empty))}"
        if empty
        else ""
    )
    raise ValueError(
        "no observations are left after missing='drop' dropped the rows with a "
        f"missing value: every one of the {len(incomplete)} rows has one{where}. "
        "Drop or impute those columns first"
    )


def _array_column_names(values: np.ndarray) -> list[str]:
    """statsmodels' names for array columns: ``const`` for a constant column,
    ``x1, x2, ...`` for the others (ignoring non-finite entries)."""
    low = np.full(values.shape[1], np.nan)
    high = low.copy()
    for block in _float_blocks(values):
        finite = np.where(np.isfinite(block), block, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            # fmin / fmax skip the NaN of a block whose column has no finite value
            low = np.fmin(low, np.nanmin(finite, axis=0))
            high = np.fmax(high, np.nanmax(finite, axis=0))
    constant = low == high
    names, counter = [], 0
    for is_constant in constant:
        if is_constant:
            names.append("const")
        else:
            counter += 1
            names.append(f"x{counter}")
    return names


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
        for block in _float_blocks(exog):
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


def _count_not_kept(values, missing: str) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the entries that ``missing`` will not drop: NaN (none when
    ``missing='drop'``) and infinite values (statsmodels drops NaN rows only)."""
    n_nan = np.zeros(values.shape[1], dtype=np.intp)
    n_inf = np.zeros(values.shape[1], dtype=np.intp)
    for block in _float_blocks(values):
        if np.isfinite(block).all():
            continue
        n_inf += np.count_nonzero(np.isinf(block), axis=0)
        if missing != "drop":
            n_nan += np.count_nonzero(np.isnan(block), axis=0)
    return n_nan, n_inf


def _raise_if_bad(where: str, counts: dict) -> None:
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
