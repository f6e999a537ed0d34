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
    r"""Gate probabilities :math:`g_k(x) = \operatorname{softmax}_k(-\gamma w_k'x)`.

    Parameters
    ----------
    results : PolyhedralMixtureLogitResults
        A fit.
    exog : array_like or DataFrame, optional
        New data (a DataFrame the formula is applied to, for a formula model);
        the estimation data by default.

    Returns
    -------
    DataFrame or ndarray, shape (n, K)
        Columns ``h1..hK``; rows sum to one. One-hot for the hard model.
    """
    gate, index = _predict(results, exog, "gate", "gate_probabilities()")
    return _named(gate, results, index)


def active_face(results, exog=None):
    """The face that owns each observation: the hyperplane with the smallest score.

    Parameters
    ----------
    results, exog
        As for :func:`gate_probabilities`.

    Returns
    -------
    Series or ndarray of int, shape (n,)
        0-based position of the owning hyperplane (``0`` is ``h1``); the
        polyhedron's boundary there is that face. Rows with missing features
        give ``-1``.
    """
    scores, index = _predict(results, exog, "linear", "active_face()")
    values = np.asarray(scores, dtype=float)
    missing = np.isnan(values).any(axis=1)
    owner = np.where(missing, -1, np.argmin(np.where(missing[:, None], 0, values), 1))
    if index is not None:
        return pd.Series(owner, index=index, name="active_face")
    return owner


def responsibilities(results):
    r"""EM posterior of each expert at the estimates, on the estimation data.

    .. math::

        \pi_{nk} = \frac{g_k(x_n)\,\sigma(y_n w_k'x_n)}
                        {\sum_j g_j(x_n)\,\sigma(y_n w_j'x_n)}

    with :math:`y_n = \pm 1` for the class inside / outside the polyhedron.

    Returns
    -------
    DataFrame or ndarray, shape (nobs, K)
        Columns ``h1..hK``, indexed like the estimation data when it was pandas.
    """
    _require_data(results, "responsibilities()")
    resp = results.model._terms(np.asarray(results.params)).resp
    return _named(resp, results, index=results.model.data.row_labels)


def face_shares(results) -> pd.DataFrame:
    """For each hyperplane, the observations it owns and their class mix.

    Returns
    -------
    DataFrame
        One row per hyperplane (``h1..hK``) with ``nobs`` (observations whose
        smallest score is that face's), ``share`` (``nobs / N``), ``gate_share``
        (mean gate probability, the order in which experts are reported), one
        count column ``n_<label>`` per outcome label and ``frac_<label>``, the
        fraction of the face's observations in the class coded 1.
    """
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
