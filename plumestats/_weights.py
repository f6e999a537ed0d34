"""Frequency weights: checking them, and the sums they change.

A frequency weight ``f_n`` says that row ``n`` stands for ``f_n`` identical
observations, as statsmodels GLM's ``freq_weights``: the log-likelihood is
``sum_n f_n l_n``, ``nobs`` is ``sum_n f_n``, and every estimate, standard
error and count equals the fit on the rows repeated (integer weights) up to
rounding. Rows of weight 0 stay in the model (their predictions are still
there) but carry nothing into the fit.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_numpy_weights",
    "check_freq_weights",
    "check_weighted_classes",
    "refuse_all_zero",
    "refuse_weights",
    "weighted_table",
]


def as_numpy_weights(freq_weights) -> np.ndarray | None:
    """A model's frequency weights as a numpy vector (a Dask model's are a
    Dask array, computed here), or ``None`` without weights."""
    if freq_weights is None:
        return None
    return np.asarray(freq_weights, dtype=float)


def check_freq_weights(freq_weights, n_rows: int, kept=None) -> np.ndarray:
    """``freq_weights`` as a float vector of ``n_rows`` finite values ``>= 0``,
    not all 0, or a ValueError naming what is wrong and the fix.

    ``kept`` (a boolean mask, optional) marks the rows a formula keeps: a
    missing weight on a row that patsy drops anyway is no error.
    """
    if isinstance(freq_weights, str):
        raise ValueError(
            f"freq_weights must be one number per row, got the text "
            f"{freq_weights!r}; for a column of the data pass "
            f"data[{freq_weights!r}]"
        )
    values = np.asarray(getattr(freq_weights, "values", freq_weights))
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(
            "freq_weights must be one number per observation (a 1-D array or "
            f"Series), got shape {values.shape}"
        )
    if values.shape[0] != n_rows:
        raise ValueError(
            f"freq_weights has {values.shape[0]} values but the data have "
            f"{n_rows} rows: give one weight per row"
        )
    try:
        weights = values.astype(float)
    except (TypeError, ValueError):
        raise ValueError(
            f"freq_weights must be numbers, got values of type {values.dtype}"
        ) from None
    kept = np.ones(n_rows, dtype=bool) if kept is None else np.asarray(kept, bool)
    checked = np.where(kept, weights, 1.0)  # a row the formula drops is fine
    for bad, what in (
        (~np.isfinite(checked), "missing or infinite"),
        (checked < 0, "negative"),
    ):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            refuse_weights(int(bad.sum()), what, checked[first], first)
    if not np.any(weights[kept] > 0):
        refuse_all_zero()
    # patsy drops the rows not kept; statsmodels then drops their weights
    return np.where(kept, weights, 0.0)


def refuse_all_zero() -> None:
    """The error for weights that are all 0."""
    raise ValueError(
        "freq_weights are all zero: no observation is left to fit; a weight "
        "is how many times its row was observed"
    )


def refuse_weights(count: int, what: str, value: float, first: int) -> None:
    """The error for ``count`` bad weights (``what`` they are, the first
    ``value`` at row ``first``)."""
    raise ValueError(
        f"freq_weights has {count} {what} values (the first, {float(value)!r}, "
        f"at row {first}); a weight is how many times its row was observed: "
        "give every row a finite weight >= 0 (0 leaves a row out of the fit)"
    )


def weighted_table(observed: np.ndarray, predicted: np.ndarray, weights=None):
    """``(2, 2)`` counts, each row counted ``f_n`` times: rows observed 0/1,
    columns predicted 0/1."""
    # the cell of each row, counted by bincount (what np.histogram2d does
    # after placing the rows in its bins, at a twentieth of its time: a
    # quarter of a millisecond of every pima fit's results)
    cell = 2 * (np.asarray(observed) > 0.5) + (np.asarray(predicted) > 0.5)
    counts = np.bincount(cell, weights=weights, minlength=4)
    return counts.astype(float).reshape(2, 2)


def check_weighted_classes(
    y01: np.ndarray, weights: np.ndarray | None, mapping
) -> None:
    """Both outcome classes keep a positive weight (a class whose rows all
    weigh 0 is not in the data the fit sees)."""
    if weights is None:
        return
    for code in (0, 1):
        if not np.any(weights[y01 == code] > 0):
            labels = {value: label for label, value in (mapping or {}).items()}
            raise ValueError(
                "endog must have two levels among the rows of positive "
                f"freq_weights, found 1: every row of class {labels.get(code, code)!r} "
                "has weight 0; give that class weight, or fit a model with both "
                "classes"
            )
