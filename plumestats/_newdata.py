"""New rows to predict at: the one step that every prediction path shares.

``results.predict``, ``get_prediction``, ``decision_function``,
``get_distribution``, ``active_face`` and ``gate_probabilities`` all build
their design with ``results._transform_predict_exog``, which calls
:func:`new_design`. statsmodels' own version matches a DataFrame to an
array-interface model by position, ignoring its column names, so columns in
another order gave wrong predictions without a word. Here a DataFrame is
matched to a model fitted on a DataFrame by column name: reordered when the
columns come in another order, extra columns ignored (as a formula ignores
them), a missing column named in a ``ValueError``. Arrays, and DataFrames with
pandas' default column labels ``0, 1, ...``, stay positional.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["align_columns", "new_design"]


def align_columns(model, exog):
    """``exog`` with its columns in the model's order when both are named.

    A model fitted on a DataFrame matches a new DataFrame (or a row given as a
    Series with named entries) by column name; anything else, and a frame whose
    columns are pandas' default ``0, 1, ...``, stays positional.
    """
    if not getattr(model, "_exog_named", False):
        return exog
    names = list(model.exog_names)
    if isinstance(exog, pd.Series):
        if len(names) == 1 or _is_default_range(exog.index):
            return exog  # one value per row, or an unnamed row
        # a named row: a one-row frame of the right dtypes
        exog = exog.to_frame().T.infer_objects()
    if not isinstance(exog, pd.DataFrame) or _is_default_range(exog.columns):
        return exog
    columns = exog.columns
    if list(columns) == names:
        return exog
    absent = [n for n in names if n not in columns]
    if absent:
        unknown = [c for c in columns if c not in names]
        extra = (
            f"; it has columns the model does not know: {_listed(unknown)}"
            if unknown
            else ""
        )
        raise ValueError(
            f"the new data have no column {_listed(absent)} (the model's columns "
            f"are {_listed(names)}){extra}. A DataFrame is matched to the model's "
            "columns by name; pass an array to match them by position"
        )
    repeated = [n for n in names if np.count_nonzero(columns == n) > 1]
    if repeated:
        raise ValueError(
            f"the new data have more than one column named {_listed(repeated)}; "
            "give each column a distinct name"
        )
    return exog[names]


def new_design(results, exog, transform: bool, statsmodels_transform):
    """The design rows and row labels to predict at: statsmodels'
    ``_transform_predict_exog`` (``statsmodels_transform``) on ``exog``
    matched to the model's columns (:func:`align_columns`)."""
    model = results.model
    if exog is None:
        return statsmodels_transform(exog, transform=transform)
    if not (transform and hasattr(model, "formula")):
        return statsmodels_transform(align_columns(model, exog), transform=transform)
    return statsmodels_transform(exog, transform=transform)


def _is_default_range(labels) -> bool:
    return (
        isinstance(labels, pd.RangeIndex) and labels.start == 0 and (labels.step == 1)
    )


def _listed(names) -> str:
    return ", ".join(repr(n) for n in names)
