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

__all__ = ["check_freq_weights", "refuse_weights", "weighted_table"]


def check_freq_weights(freq_weights, n_rows: int, kept=None) -> np.ndarray:
    """``freq_weights`` as a float vector of ``n_rows`` finite values ``>= 0``,
    not all 0, or a ValueError naming what is wrong and the fix.

    ``kept`` (a boolean mask, optional) marks the rows a formula keeps: a
    missing weight on a row that patsy drops anyway is no error.
    """
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
    checked = weights if kept is None else weights[np.asarray(kept, dtype=bool)]
    for bad, what in (
        (~np.isfinite(checked), "missing or infinite"),
        (checked < 0, "negative"),
    ):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            refuse_weights(int(bad.sum()), what, checked[first], first)
    if not np.any(checked > 0):
        refuse_weights(0, "", 0.0, 0)
    if kept is not None:
        # patsy drops these rows; statsmodels then drops their weights
        weights = np.where(np.asarray(kept, dtype=bool), weights, 0.0)
    return weights


def refuse_weights(count: int, what: str, value: float, first: int) -> None:
    """The error for ``count`` bad weights (``what`` they are, the first
    ``value`` at row ``first``); ``count`` 0: all weights are 0."""
    if count == 0:
        raise ValueError(
            "freq_weights are all zero: no observation is left to fit; a weight "
            "is how many times its row was observed"
        )
    raise ValueError(
        f"freq_weights has {count} {what} values (the first, {float(value)!r}, "
        f"at row {first}); a weight is how many times its row was observed: "
        "give every row a finite weight >= 0 (0 leaves a row out of the fit)"
    )


def weighted_table(observed: np.ndarray, predicted: np.ndarray, weights=None):
    """``(2, 2)`` counts, each row counted ``f_n`` times: rows observed 0/1,
    columns predicted 0/1."""
    bins = np.array([0, 0.5, 1])
    return np.histogram2d(
        observed, predicted.astype(float), bins=bins, weights=weights
    )[0]
