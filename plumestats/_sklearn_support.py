"""The scikit-learn estimator's checks of ``y`` and ``sample_weight``, in
scikit-learn's words (:mod:`plumestats.sklearn`; no scikit-learn import
here)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._weights import check_freq_weights

__all__ = ["check_labels", "check_missing_labels", "plain_label", "sample_weights"]


def check_labels(y: np.ndarray) -> None:
    """Mutually incomparable labels, named (numpy's sort said "'<' not
    supported between instances of 'NoneType' and 'str'"); missing ones were
    refused before scikit-learn's checks (:func:`check_missing_labels`)."""
    if y.dtype == object:
        try:
            np.unique(y)  # str with np.str_, int with np.int64: comparable
        except TypeError:
            kinds = sorted({type(label).__name__ for label in y})
            raise ValueError(
                f"y mixes labels of types {', '.join(kinds)}, which cannot be "
                "sorted into classes; give every label the same type (e.g. "
                "y.astype(str))"
            ) from None


def plain_label(label):
    """A label as the user wrote it: numpy's scalars as Python's (their repr
    is ``np.str_('a')``), other objects as they are."""
    return label.item() if isinstance(label, np.generic) else label


def check_missing_labels(y) -> None:
    """Missing labels, named: before scikit-learn's checks too, whose "Input
    contains NaN" names neither y nor the sample (a pandas Series of text
    with None). ``y=None`` is scikit-learn's to refuse."""
    if y is None:
        return
    missing = np.ravel(pd.isna(np.asarray(y, dtype=object)))
    if missing.any():
        raise ValueError(
            f"y has {int(missing.sum())} missing labels (None or NaN), e.g. at "
            f"sample {int(np.flatnonzero(missing)[0])}; drop those samples or give "
            "them a class"
        )


def sample_weights(sample_weight, n_samples: int) -> np.ndarray:
    """``sample_weight`` as floats, one per sample (scikit-learn's checks;
    the model's check then names NaN, negative or all-zero weights)."""
    weights = np.asarray(sample_weight)
    if weights.ndim == 0:  # scikit-learn's habit: one number for all
        weights = np.full(n_samples, weights)
    if weights.ndim != 1 or weights.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight.shape == {weights.shape}, expected ({n_samples},): "
            "give one weight per sample"
        )
    try:
        return check_freq_weights(weights, n_samples)
    except ValueError as exc:  # in scikit-learn's words
        raise ValueError(str(exc).replace("freq_weights", "sample_weight")) from None
