"""Which face owns which observation: gate, responsibilities and face shares.

Every function takes a (unwrapped) results object. New data go through the
results' ``predict``, so a formula model applies its formula to a DataFrame
exactly as ``predict`` does, and pandas input gives pandas output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._validation import require_estimation_data

__all__ = ["active_face", "face_shares", "gate_probabilities", "responsibilities"]


def _face_names(k: int) -> list[str]:
    return [f"h{i + 1}" for i in range(k)]


def _named(values, results, index=None):
    """An ``(n, K)`` output as a DataFrame with columns ``h1..hK`` when the data
    are pandas, else as an array."""
    names = _face_names(results.k)
    if index is not None:
        return pd.DataFrame(np.asarray(values), index=index, columns=names)
    return np.asarray(values)


def _require_data(results, what: str, remedy: str = "refit the model"):
    require_estimation_data(results.model, f"{what} needs", remedy)


def _predict(results, exog, which: str, what: str):
    """``results.predict(exog, which=which)`` and the row labels of its rows."""
    if exog is not None:
        values = results.predict(exog, which=which)
        index = values.index if isinstance(values, pd.DataFrame) else None
        return values, index
    _require_data(results, what, "pass exog (new data) or refit the model")
    return results.predict(None, which=which), results.model.data.row_labels


def gate_probabilities(results, exog=None):
    """``results.gate_probabilities()``; documented there (the public method)."""
    gate, index = _predict(results, exog, "gate", "gate_probabilities()")
    return _named(gate, results, index)


def active_face(results, exog=None):
    """``results.active_face()``; documented there (the public method)."""
    scores, index = _predict(results, exog, "linear", "active_face()")
    values = np.asarray(scores, dtype=float)
    missing = np.isnan(values).any(axis=1)
    owner = np.where(missing, -1, np.argmin(np.where(missing[:, None], 0, values), 1))
    if index is not None:
        return pd.Series(owner, index=index, name="active_face")
    return owner


def responsibilities(results):
    """``results.responsibilities()``; documented there (the public method)."""
    _require_data(results, "responsibilities()")
    resp = results.model._user_rows(np.asarray(results.params))[2].resp
    return _named(resp, results, index=results.model.data.row_labels)


def face_shares(results) -> pd.DataFrame:
    """``results.face_shares()``; documented there (the public method)."""
    _require_data(results, "face_shares()")
    model = results.model
    scores = model.predict(np.asarray(results.params), which="linear")
    owner = np.argmin(scores, axis=1)
    onehot = owner[:, None] == np.arange(results.k)
    y01 = np.asarray(model.endog, dtype=float)
    labels = {code: label for label, code in results.outcome_mapping.items()}
    owned = onehot.sum(axis=0)
    n_one = onehot.T.astype(float) @ y01
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(owned > 0, n_one / np.maximum(owned, 1), np.nan)
    gate = model.predict(np.asarray(results.params), which="gate")
    return pd.DataFrame(
        {
            "nobs": owned,
            "share": owned / len(y01),
            "gate_share": gate.mean(axis=0),
            f"n_{labels[0]}": (owned - n_one).astype(int),
            f"n_{labels[1]}": n_one.astype(int),
            f"frac_{labels[1]}": frac,
        },
        index=_face_names(results.k),
    )
