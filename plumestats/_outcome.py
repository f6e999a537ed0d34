"""The outcome's coding: a two-level outcome (numbers, booleans, labels,
categoricals, a formula's indicator columns) as 0/1, the mapping from its
labels to the codes, and the code of the class named by ``inside``."""

from __future__ import annotations

import numpy as np

__all__ = ["encode_outcome", "prepare_endog", "resolve_inside"]


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


def encode_outcome(
    endog: np.ndarray, names=None, design_info=None
) -> tuple[np.ndarray, dict, str]:
    """Map a two-level outcome to ``{0, 1}``.

    ``{0, 1}`` stays as it is, ``{-1, 1}`` maps ``-1 -> 0``, booleans map to 0/1. A
    formula's non-numeric outcome arrives as patsy's indicator columns
    ``y[a], y[b]`` (``design_info``: the outcome's, which knows its levels):
    the second level is coded 1. Returns the 0/1 float array, the mapping
    ``{original: code}`` shown in the summary, and the outcome's name.
    """
    values = np.asarray(endog)
    name = names[0] if isinstance(names, list | tuple) and names else names
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim == 2:
        return _indicator_outcome(values, names, design_info)
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


def _indicator_outcome(values: np.ndarray, names, design_info):
    """The 0/1 outcome of patsy's indicator columns, its mapping and its name:
    the levels of the formula's factor as the data hold them (``C(y)`` of
    -1/1 codes maps -1 and 1, not their text), beyond two levels those no row
    has left out (a Categorical's unused categories), and any coding but one
    indicator per level refused (``C(y, Sum)`` gives +-1 columns, no 0/1
    outcome)."""
    levels, name = _indicator_levels(names, values.shape[1])
    factor = _outcome_factor(design_info, values.shape[1])
    if factor is not None:
        name, levels = factor
    if not (np.isin(values, (0.0, 1.0)).all() and (values.sum(axis=1) == 1).all()):
        raise ValueError(
            f"the outcome {name} is coded by a contrast (its columns are not one "
            "indicator per level); give it plainly, y ~ ..., or as C(y), with "
            "inside= naming the class that forms the polyhedron"
        )
    # beyond two levels, the ones no row has (a Categorical's unused
    # categories) are none; two are the outcome's, present or not (True and
    # False of a boolean outcome whose rows are all True)
    used = values.any(axis=0) if len(levels) > 2 else np.ones(len(levels), bool)
    levels = [level for level, present in zip(levels, used, strict=True) if present]
    if levels == ["False", "True"]:  # patsy's names for a boolean outcome
        levels = [False, True]
    mapping = _two_level_mapping(levels)
    return values[:, np.flatnonzero(used)[-1]].astype(float), mapping, name


def _outcome_factor(design_info, n_columns: int):
    """``(name, levels)`` of an outcome that is one categorical factor in
    ``design_info`` with one column per level, or None."""
    if design_info is None or len(design_info.terms) != 1:
        return None
    (term,) = design_info.terms
    if len(term.factors) != 1:
        return None
    (factor,) = term.factors
    info = design_info.factor_infos[factor]
    if info.type != "categorical" or len(info.categories) != n_columns:
        return None
    return factor.name(), list(info.categories)


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
