"""Table 1's designs, fitted fold by fold (:class:`FoldDesign`), and the
UCI features they are fitted on (:func:`features_and_outcome`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import categorical_columns, load_uci, uci_features


def features_and_outcome(
    name: str, data_dir: Path
) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """The raw feature columns of UCI set ``name`` (outcome and dropped
    columns removed), its 0/1 outcome and its categorical columns, for designs
    built fold by fold."""
    frame, _ = load_uci(name, data_dir)
    features = uci_features(name, frame)
    y = frame[frame.columns[-1]].to_numpy(dtype=float)
    return features, y, categorical_columns(name, features)


@dataclass(frozen=True)
class FoldDesign:
    """A design matrix fitted on the rows of one training fold only.

    Numeric columns: missing values replaced by the training median, then
    standardised with the training mean and standard deviation. Categorical
    columns: one indicator per training level except the reference level (the
    most frequent one, ties by name), so that with an intercept the design has
    full rank; a level unseen in training, or a missing value, gives all zeros
    (i.e. the reference). Then the columns that are constant on the training rows
    (ionosphere's a02, a rare category absent from the fold) and exact duplicates
    of an earlier column are dropped. No constant column is added.

    Attributes
    ----------
    numeric : tuple of str
        The numeric feature columns, in order.
    medians, means, scales : numpy.ndarray
        Training medians (imputation), means and standard deviations of
        ``numeric`` (a zero deviation is replaced by 1; that column is dropped).
    levels : dict
        For each categorical column, its non-reference training levels.
    keep : numpy.ndarray
        Boolean mask over the expanded columns: the ones kept.
    names : tuple of str
        Names of the kept columns (``column[level]`` for indicators).
    """

    numeric: tuple[str, ...]
    medians: np.ndarray
    means: np.ndarray
    scales: np.ndarray
    levels: dict[str, tuple]
    keep: np.ndarray
    names: tuple[str, ...]

    @classmethod
    def fit(cls, features: pd.DataFrame, categorical: list[str]) -> FoldDesign:
        """Learn every preprocessing step from the training rows ``features``."""
        numeric = tuple(c for c in features.columns if c not in categorical)
        values = features[list(numeric)].to_numpy(dtype=float)
        medians = np.nanmedian(values, axis=0) if values.size else np.zeros(0)
        filled = np.where(np.isnan(values), medians, values)
        means = filled.mean(axis=0)
        scales = filled.std(axis=0)
        scales[scales == 0] = 1.0
        levels = {
            column: _non_reference_levels(features[column]) for column in categorical
        }
        expanded = _expand(features, numeric, medians, means, scales, levels)
        keep = _informative_columns(expanded)
        names = [
            *numeric,
            *(f"{c}[{level}]" for c, lv in levels.items() for level in lv),
        ]
        return cls(
            numeric,
            medians,
            means,
            scales,
            levels,
            keep,
            tuple(name for name, kept in zip(names, keep, strict=True) if kept),
        )

    def transform(self, features: pd.DataFrame) -> np.ndarray:
        """The ``(rows, len(names))`` design of any rows, with the training fit."""
        expanded = _expand(
            features, self.numeric, self.medians, self.means, self.scales, self.levels
        )
        return expanded[:, self.keep]


def _non_reference_levels(column: pd.Series) -> tuple:
    """Training levels except the most frequent one (ties broken by name)."""
    counts = column.dropna().value_counts()
    ordered = sorted(counts.index, key=lambda level: (-counts[level], str(level)))
    return tuple(sorted(ordered[1:], key=str))


def _expand(
    features: pd.DataFrame,
    numeric: tuple[str, ...],
    medians: np.ndarray,
    means: np.ndarray,
    scales: np.ndarray,
    levels: dict[str, tuple],
) -> np.ndarray:
    """Imputed, standardised numeric columns followed by the indicators."""
    values = features[list(numeric)].to_numpy(dtype=float)
    values = (np.where(np.isnan(values), medians, values) - means) / scales
    indicators = [
        (features[column].to_numpy() == level).astype(float)
        for column, column_levels in levels.items()
        for level in column_levels
    ]
    if not indicators:
        return values
    return np.column_stack([values, *indicators])


def _informative_columns(design: np.ndarray) -> np.ndarray:
    """Mask of the columns that vary and are not an exact copy of an earlier one."""
    keep = np.zeros(design.shape[1], dtype=bool)
    if design.shape[1]:
        _, first = np.unique(design, axis=1, return_index=True)
        keep[first] = True
    return keep & (np.ptp(design, axis=0) > 0)
