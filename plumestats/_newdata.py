"""New rows to predict at: the one step that every prediction path shares.

``results.predict``, ``get_prediction``, ``decision_function``,
``get_distribution``, ``active_face`` and ``gate_probabilities`` all build
their design with ``results._transform_predict_exog``, which calls
:func:`new_design`. statsmodels' own version matches a DataFrame to an
array-interface model by position, ignoring its column names, so columns in
another order gave wrong predictions without a word. Here a DataFrame is
matched to a model fitted on a DataFrame by column name: reordered when the
columns come in another order, extra columns ignored (as a formula ignores
them), a missing column named in a ``ValueError``. Arrays stay positional,
and so does a row given as a Series with pandas' default labels ``0, 1, ...``
unless those are the model's names. A DataFrame's labels are names whatever
their type: one with the default labels predicts a model fitted on other
names only by a ``ValueError`` naming the columns it lacks.

Pandas' nullable columns (``Float64``, ``Int64``, ``boolean``, ``string``)
become NumPy columns with NaN for ``pd.NA``, so that an incomplete row
predicts NaN as with NumPy columns. For a formula model a row given as a
Series becomes a one-row frame, and a failure to apply the formula is a
``ValueError`` that leads with its cause (statsmodels puts a generic first
line on patsy's error, and for a text column that the formula uses as a number
patsy's own is ``'DataFrame' object has no attribute 'dtype'``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from patsy import PatsyError

from ._compat import formula_spec, original_error
from ._formula_data import (
    FormulaDataError,
    formula_columns,
    numpy_backed,
    with_columns,
)

__all__ = ["align_columns", "new_design", "text_in_numeric_columns"]


def align_columns(model, exog):
    """``exog`` with its columns in the model's order when both are named.

    A model fitted on a DataFrame matches a new DataFrame (pandas or Dask), or
    a row given as a Series with named entries, by column name, whatever the
    labels' type: integer labels are names too (a model fitted on columns
    ``[2, 1, 0]`` predicts a frame with columns ``[0, 1, 2]`` by name). A label
    that matches none of the model's names exactly may match by its text
    (``"0"`` for ``0``, as a CSV header reads it). Arrays stay positional.
    """
    if not getattr(model, "_exog_named", False):
        return exog
    names = list(model.exog_names)
    if isinstance(exog, pd.Series):
        unnamed = _is_default_range(exog.index) and set(exog.index) != set(names)
        if len(names) == 1 or unnamed:
            return exog  # one value per row, or an unnamed row
        # a named row: a one-row frame of the right dtypes
        exog = exog.to_frame().T.infer_objects()
    if not hasattr(exog, "columns"):
        return exog
    columns = list(exog.columns)
    if columns == names:
        return exog
    chosen = _matching_labels(names, columns)
    return exog[chosen]


def _matching_labels(names: list, columns: list) -> list:
    """The column label of ``columns`` that each model name matches (exactly,
    or else by its text), or a ``ValueError`` naming the ones that do not."""
    text = {}
    for label in columns:
        text.setdefault(_label_text(label), []).append(label)
    chosen, absent, repeated = [], [], []
    for name in names:
        exact = [label for label in columns if _same(label, name)]
        found = exact or text.get(str(name), [])
        if not found:
            absent.append(name)
        elif len(found) > 1:
            repeated.append(name)
        else:
            chosen.append(found[0])
    if absent:
        unknown = [c for c in columns if c not in chosen]
        extra = (
            f"; it has columns the model does not know: {_listed(unknown)}"
            if unknown
            else ""
        )
        raise ValueError(
            f"the new data have no column {_listed(absent)} (the model's columns "
            f"are {_listed(names)}){extra}. A DataFrame is matched to the model's "
            "columns by name; to match them by position pass an array "
            "(frame.to_numpy())"
        )
    if repeated:
        raise ValueError(
            f"the new data have more than one column named {_listed(repeated)}; "
            "give each column a distinct name"
        )
    return chosen


def _label_text(label) -> str:
    """A column label as the model's name for it: statsmodels names a
    MultiIndex column by its levels joined with ``_``."""
    if isinstance(label, tuple):
        return "_".join(str(level) for level in label if level)
    return str(label)


def _same(label, name) -> bool:
    # True == 1 in Python, but a column named True is not column 1
    if isinstance(label, (bool, np.bool_)) != isinstance(name, (bool, np.bool_)):
        return False
    try:
        return bool(label == name)
    except (TypeError, ValueError):  # labels that do not compare
        return False


def new_design(results, exog, transform: bool, statsmodels_transform):
    """The design rows and row labels to predict at: statsmodels'
    ``_transform_predict_exog`` (``statsmodels_transform``) on ``exog``
    matched to the model's columns (:func:`align_columns`) or, for a formula
    model, prepared for patsy (:func:`numpy_backed`)."""
    model = results.model
    if exog is None:
        return statsmodels_transform(exog, transform=transform)
    if not (transform and hasattr(model, "formula")):
        if isinstance(exog, pd.Series) and model.k_vars == 1:
            # one value per row of a one-column design (statsmodels reads a
            # Series so only when params has one value: Logit's, not K > 1's)
            exog = exog.to_frame()
        if isinstance(exog, Mapping):
            # a dict of columns, matched by name whatever the model was fitted
            # on (statsmodels names an array's columns const, x1, ...): its
            # keys' order is no order of columns
            exog = _mapping_frame(exog)
            exog = exog[_matching_labels(list(model.exog_names), list(exog.columns))]
        exog = align_columns(model, exog)
        if isinstance(exog, pd.DataFrame):
            exog = numpy_backed(exog)  # pd.NA would stop NumPy's float cast
        elif np.ndim(exog) == 1:
            # one row (one value per row of a one-column design), as
            # statsmodels orients it from the model's exog, which
            # remove_data() drops: the number of columns says the same
            exog = np.asarray(exog)
            exog = exog[:, None] if model.k_vars == 1 else exog[None, :]
        return statsmodels_transform(exog, transform=transform)
    frame = _formula_frame(model, exog)
    try:
        return statsmodels_transform(frame, transform=transform)
    except (PatsyError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # statsmodels re-raises patsy's error under a generic first line: lead
        # with the cause, or with the column patsy could not read as a number
        cause = original_error(exc)
        reason = str(cause)
        if isinstance(cause, AttributeError) and "dtype" in reason:
            # patsy's only word for text where a number was expected
            reason = _non_numeric_columns(model, frame) or reason
        raise FormulaDataError(
            f"could not apply the model's formula to the new data: {reason}"
        ) from exc


def _formula_frame(model, exog):
    """A formula model's new data as patsy can read them."""
    if isinstance(exog, pd.Series):
        # statsmodels guesses as well: a Series named (by a string) after one
        # of the formula's columns is that column, anything else is one row (a
        # row's integer label can look like a number in the formula: I(x ** 2))
        if isinstance(exog.name, str) and formula_columns(model.formula, [exog.name]):
            exog = exog.to_frame()
        else:
            exog = exog.to_frame().T.infer_objects()
    if isinstance(exog, Mapping):
        # patsy would evaluate I(x + 1) on lists
        exog = _mapping_frame(exog)
    elif not isinstance(exog, pd.DataFrame):
        raise TypeError(
            "this model was fitted from a formula, which is applied to the new "
            f"data: pass a DataFrame (or a dict of columns) with the columns "
            f"{_listed(formula_inputs(model))} (got {type(exog).__name__}). For "
            "rows of the design itself (the columns "
            f"{_listed(model.exog_names)}), use predict(exog, transform=False)"
        )
    if exog.columns.has_duplicates:
        repeated = list(dict.fromkeys(exog.columns[exog.columns.duplicated()]))
        raise FormulaDataError(
            f"the new data have more than one column named {_listed(repeated)}; "
            "give each column a distinct name"
        )
    if len(exog) == 0:
        # no rows, no values to type the columns (a CSV header alone reads as
        # text): no predictions, not patsy's error about text
        numeric = {c: float for c in text_in_numeric_columns(model, exog)}
        exog = exog.astype(numeric)
    exog = _fitted_levels(model, _as_numbers(model, exog))
    return numpy_backed(exog, formula_columns(model.formula, exog.columns))


def _fitted_levels(model, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each pandas categorical column that a factor of the
    formula reads given the factor's levels of the fit, in the fit's order,
    when its values are among them: patsy refuses a categorical whose
    categories are not exactly those ("mismatching levels"), such as a
    subset of them, or the same in another order."""
    info = formula_spec(model.data)
    factor_infos = getattr(info, "factor_infos", None) or {}
    converted, clashing = {}, set()
    for factor, f_info in factor_infos.items():
        if f_info.type != "categorical":
            continue
        levels = list(f_info.categories)
        for column in formula_columns(factor.name(), frame.columns):
            values = frame[column]
            if not isinstance(values.dtype, pd.CategoricalDtype):
                continue
            if list(values.cat.categories) == levels:
                continue
            recoded = values.cat.set_categories(levels)
            # every value kept (set_categories compares by type: 1 is not
            # True, and a bool level would lose an int value to NaN)
            if recoded.isna().sum() != values.isna().sum():
                continue
            if column in converted and list(converted[column].cat.categories) != levels:
                clashing.add(column)  # two factors, two orders: patsy says so
            converted[column] = recoded
    for column in clashing:
        del converted[column]
    return with_columns(frame, converted)


def _as_numbers(model, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the columns the formula uses as numbers by themselves
    as floats where they hold numbers in another dtype (booleans, a
    categorical of numbers, objects that are all numbers): patsy would take
    the first two as categories and fail on the third. Dates and durations
    are refused by name."""
    converted = {}
    for column in _numeric_candidates(model, frame, whole_factor=True):
        values = frame[column]
        dtype = values.dtype
        if dtype.kind in "mM" or isinstance(dtype, pd.PeriodDtype):
            raise FormulaDataError(
                f"the formula uses {column!r} as numbers, but the new data hold "
                f"dates or durations in it ({dtype}); convert them to the numbers "
                "the model was fitted on first (e.g. with .dt.days)"
            )
        if isinstance(dtype, pd.CategoricalDtype):
            numbers = pd.api.types.is_numeric_dtype(dtype.categories.dtype)
        elif pd.api.types.is_bool_dtype(dtype):
            converted[column] = values.to_numpy(dtype=float, na_value=np.nan)
            continue
        else:
            # real numbers only (a complex one would lose its imaginary part)
            numbers = dtype.kind == "O" and all(
                isinstance(v, (int, float, np.integer, np.floating))
                and not isinstance(v, bool)
                for v in values.dropna()
            )
        if numbers:
            # (pd.NA in an object column is missing, as patsy reads NaN)
            converted[column] = pd.to_numeric(values).to_numpy(
                dtype=float, na_value=np.nan
            )
    return with_columns(frame, converted)


def _mapping_frame(columns: Mapping) -> pd.DataFrame:
    """A dict of columns as a frame (of scalars: one row)."""
    try:
        return pd.DataFrame(columns)
    except ValueError:
        return pd.DataFrame(columns, index=[0])


def formula_inputs(model) -> list[str]:
    """The columns of the data that the formula's right-hand side reads (the
    factors' own text where the data are not at hand)."""
    spec = getattr(model.data, "design_info", None) or getattr(
        model.data, "model_spec", None
    )
    codes = [factor.name() for factor in getattr(spec, "factor_infos", {})]
    frame = getattr(model.data, "frame", None)
    if frame is None:
        return codes
    return formula_columns(" + ".join(codes), frame.columns) or codes


def text_in_numeric_columns(model, frame, whole_factor: bool = False) -> dict:
    """The columns of ``frame`` that a formula model uses as numbers but that
    hold text: ``{column: an example value, or None}``.

    With ``whole_factor`` only the columns that are a numeric factor by
    themselves (``x1``, not the ``c`` of ``I((c == 'u') * 1.0)``, which may
    rightly hold text) count.
    """
    text = {}
    for column in _numeric_candidates(model, frame, whole_factor):
        dtype = frame[column].dtype
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            continue
        values = frame[column].dropna()
        text[column] = values.iloc[0] if len(values) else None
    return text


def _numeric_candidates(model, frame, whole_factor: bool) -> list:
    """The columns of ``frame`` that a formula model uses as numbers
    (``whole_factor``: those that are a numeric factor by themselves)."""
    info = formula_spec(model.data)
    factor_infos = getattr(info, "factor_infos", None)
    if not factor_infos or not isinstance(frame, pd.DataFrame):
        return []
    numeric_codes = " + ".join(
        factor.name()
        for factor, f_info in factor_infos.items()
        if f_info.type == "numerical"
    )
    if whole_factor:
        factors = set(numeric_codes.split())
        return [c for c in frame.columns if str(c) in factors]
    return formula_columns(numeric_codes, frame.columns)


def _non_numeric_columns(model, frame) -> str | None:
    """A message naming the columns that the formula uses as numbers but the
    new data hold as text (patsy's own message for this is an
    ``AttributeError`` about ``dtype``), or None."""
    # a column that is a numeric factor by itself first; a text column inside
    # an expression (I((c == 'u') * 1.0)) may be fine, so it is named only when
    # nothing else explains the failure
    text = text_in_numeric_columns(
        model, frame, whole_factor=True
    ) or text_in_numeric_columns(model, frame)
    if not text:
        return None
    shown = ", ".join(
        repr(c) + ("" if example is None else f" (e.g. {example!r})")
        for c, example in text.items()
    )
    return (
        f"the formula uses {', '.join(map(repr, text))} as numbers, but the new "
        f"data hold text in {shown}; convert with pd.to_numeric"
    )


def _is_default_range(labels) -> bool:
    """pandas' default labels ``0, 1, ...`` (a RangeIndex or integers alike)."""
    return pd.api.types.is_integer_dtype(labels) and np.array_equal(
        np.asarray(labels), np.arange(len(labels))
    )


def _listed(names) -> str:
    return ", ".join(repr(n) for n in names)
