"""Reading in-memory data into a model: the checks before statsmodels' data
handling, and what the model takes from it after.

Every model is built by one path (``PolyhedralMixtureLogit.__init__``): the
data are read here (arrays, DataFrames, a formula's design) or by
``plumestats._dask.read_collections`` (Dask collections); each returns the 0/1
outcome and a :class:`~plumestats._design_checks.DesignSummary` of the design,
from which the model's set-up checks and names the columns alike.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._compat import FORMULA_SPEC_KEYWORDS, nullable_as_float
from ._design_checks import (
    count_not_kept,
    design_summary,
    float_blocks,
    raise_if_bad,
    refuse_complex,
    statsmodels_exog_names,
)
from ._formula_data import check_design_values
from ._memory import check_parameter_count
from ._outcome import encode_outcome, prepare_endog
from ._validation import check_row_labels, refuse_repeated_labels
from ._weights import check_freq_weights, check_weighted_classes

__all__ = [
    "FORMULA_KEYWORDS",
    "check_given",
    "finish_arrays",
    "observation_count",
    "prepare_arrays",
    "prepare_weights",
]

# what statsmodels' from_formula passes on to the model, besides our arguments
FORMULA_KEYWORDS = frozenset({"missing_idx", "formula", "hasconst"}) | (
    FORMULA_SPEC_KEYWORDS
)


def check_given(model, endog, exog, kwargs: dict) -> None:
    """Both data arguments are there, and no keyword is unknown."""
    if exog is None:
        raise ValueError("exog is required; pass a design with a constant column")
    if endog is None or np.ndim(endog) == 0:
        raise ValueError(
            "endog must hold one outcome per observation (an array, list or "
            f"Series), got {'None' if endog is None else type(endog).__name__}"
        )
    unsupported = sorted({"offset", "exposure"} & set(kwargs))
    if unsupported:
        raise TypeError(
            f"{type(model).__name__} takes no {' or '.join(unsupported)} "
            "(statsmodels' Logit does): a fixed part of one linear predictor has "
            "no single place among the K faces' scores; put the variable in the "
            "design as a column instead"
        )
    unknown = set(kwargs) - FORMULA_KEYWORDS
    if unknown:
        raise TypeError(
            f"{type(model).__name__} got unexpected keyword arguments: "
            f"{sorted(unknown)}"
        )


def prepare_arrays(endog, exog, k: int, missing: str, kwargs: dict):
    """``(endog, exog, outcome, n_given)`` checked and prepared for
    statsmodels' data handling, whose own errors do not name the column;
    ``outcome`` is ``(mapping, design_info)``: an array outcome's coding, and
    a formula outcome's patsy design info, which knows its levels (statsmodels
    drops it when it subsets the rows for frequency weights)."""
    exog = coerce_exog(exog)
    if np.ndim(exog) == 2:
        check_parameter_count(k, int(exog.shape[1]))
    if np.size(endog) == 0:
        raise ValueError(
            "there are no observations: endog is empty (after dropping missing "
            "values, if missing='drop')"
        )
    if np.size(endog) == 1:
        raise ValueError("there is only 1 observation; a fit needs both classes")
    from_formula = "formula" in kwargs
    if from_formula and "missing_idx" not in kwargs:
        raise TypeError(
            "formula= is set by from_formula; to fit a formula use "
            "ps.plume(formula, data, ...) (or the model's from_formula)"
        )
    if from_formula:  # patsy has built the design: name a term's inf
        check_design_values(exog, missing)
    else:
        _check_array_shapes(endog, exog)
        precheck_data(endog, exog, missing)
    design_info = getattr(endog, "design_info", None)
    endog, mapping = prepare_endog(endog)
    return endog, exog, (mapping, design_info), np.shape(endog)[0]


def prepare_weights(freq_weights, exog, kwargs: dict) -> dict:
    """``{"freq_weights": weights}`` checked for statsmodels' data handling
    (which drops the weights of the rows it drops), or ``{}`` without.

    For a formula the weights are one per row of the data frame: patsy has
    dropped incomplete rows (``missing_idx``), and a missing weight there is
    no error. Weights in a Series must have the row labels of a pandas
    ``exog`` (the formula's: those of the rows it keeps)."""
    if freq_weights is None:
        return {}
    labels = getattr(exog, "index", None)
    missing_idx = kwargs.get("missing_idx")
    if missing_idx is not None:
        kept = ~np.asarray(missing_idx, dtype=bool)
        weights = check_freq_weights(freq_weights, kept.size, kept)
        check_row_labels(freq_weights, labels, "freq_weights", kept)
        return {"freq_weights": weights}
    weights = check_freq_weights(freq_weights, np.shape(exog)[0])
    check_row_labels(freq_weights, labels, "freq_weights")
    return {"freq_weights": weights}


def observation_count(model, n_rows: int):
    """``nobs``: the rows, or with frequency weights their sum (a float, as
    GLM's ``wnobs``)."""
    if model.freq_weights is None:
        return n_rows
    if hasattr(model, "_dask_moments"):
        return float(model._dask_moments["weight"])
    return float(np.sum(model.freq_weights))


def _check_array_shapes(endog, exog) -> None:
    if np.shape(endog)[0] != np.shape(exog)[0]:
        raise ValueError(
            f"endog has {np.shape(endog)[0]} rows but exog has "
            f"{np.shape(exog)[0]}: give one outcome per row of the design"
        )
    if np.ndim(endog) == 2 and np.shape(endog)[1] != 1:
        raise ValueError(
            f"endog must be one column of outcomes, got {np.shape(endog)[1]} columns"
        )


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
    if columns is not None:
        refuse_repeated_labels(columns)
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
            f"{n!r} ({dt})"
            for n, dt in zip(names, exog.dtypes, strict=True)
            if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
        ]
        refuse_complex(exog, "exog")
        if text:
            raise ValueError(
                f"exog columns {', '.join(text)} are not numeric; convert them "
                "first (pd.to_numeric, or .dt.days for durations), or encode a "
                "categorical (with a formula, C(column) one-hot encodes it)"
            )
        values = exog
    else:
        values = np.asarray(exog)
        if values.dtype.kind not in "biuf":
            raise ValueError(f"exog must be numeric, got dtype {values.dtype}")
        values = values.reshape(values.shape[0], -1)
        names = None
    n_nan, n_inf = count_not_kept(values, missing)
    bad = np.flatnonzero(n_nan + n_inf)
    if bad.size and names is None:
        names = _array_column_names(values)
    raise_if_bad("exog", {names[j]: (n_nan[j], n_inf[j]) for j in bad})
    y = pd.Series(np.asarray(endog).ravel()) if np.ndim(endog) <= 1 else None
    if missing != "drop":
        if y is not None and y.isna().any():
            raise ValueError(
                f"endog has {int(y.isna().sum())} missing values; drop those rows "
                "or pass missing='drop'"
            )
    elif values.shape[0]:
        _check_rows_left(y, values, names)


def _check_rows_left(y, values, names) -> None:
    """A clear error when ``missing='drop'`` would drop every row (statsmodels
    would go on to reduce zero-row arrays), naming the columns with no value."""
    incomplete, has_value = [], np.zeros(values.shape[1], dtype=bool)
    for block in float_blocks(values):
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
    for block in float_blocks(values):
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


def finish_arrays(model, outcome, n_given: int, missing: str, kwargs: dict):
    """After statsmodels' data handling: the 0/1 outcome (its coding named on
    the model) and the design's summary."""
    # GenericLikelihoodModel copies every keyword onto the instance; the patsy
    # design info cannot be pickled and already lives on model.data, which
    # knows how to pickle it (as for statsmodels' own formula models).
    for keyword in FORMULA_SPEC_KEYWORDS:
        model.__dict__.pop(keyword, None)
    mapping, design_info = outcome
    try:
        y01, coding, yname = encode_outcome(model.endog, model.data.ynames, design_info)
    except ValueError as exc:
        error = _after_dropping(exc, model, n_given, missing, kwargs)
        if error is exc:
            raise
        raise error from exc
    if y01.ndim != np.ndim(model.data.endog):
        # a formula's string outcome came as indicator columns: one name now
        model.data.ynames = yname
    model.outcome_mapping = mapping or coding
    check_weighted_classes(y01, model.freq_weights, model.outcome_mapping)
    orig = model.data.orig_exog
    if isinstance(orig, np.ndarray) and orig.dtype.names is None:
        # statsmodels would name the columns from exog.var(0), an (n, p)
        # temporary; the same names, computed by row blocks
        model.data.xnames = statsmodels_exog_names(model.exog)
    return y01, design_summary(model.exog, model.freq_weights)


def _after_dropping(exc, model, n_given, missing, kwargs) -> ValueError:
    """The outcome's error, with the rows ``missing='drop'`` removed (by
    statsmodels here, and before by patsy for a formula)."""
    dropped = n_given - model.endog.shape[0]
    if kwargs.get("missing_idx") is not None:
        dropped += int(np.sum(kwargs["missing_idx"]))
    if missing != "drop" or dropped == 0:
        return exc
    return ValueError(
        f"{exc} (after missing='drop' removed {dropped} "
        f"row{'s' if dropped != 1 else ''} with missing values)"
    )
