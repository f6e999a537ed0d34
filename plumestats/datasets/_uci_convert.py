"""Convert a UCI original file to our clean frame, and check a frame is the one.

Every frame goes through one canonical CSV text (``DataFrame.to_csv`` without the
index, ``\\n`` line ends) and back through ``pandas.read_csv``: that is what makes
a converted frame carry exactly the dtypes of ``pd.read_csv`` of our clean file,
whatever the pandas version.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd

from ._uci_specs import UCISpec

__all__ = ["canonical_csv", "canonical_digest", "convert_original", "verify"]


def canonical_csv(frame: pd.DataFrame) -> str:
    """The frame as CSV text: header row, no index, ``\\n`` line ends."""
    return frame.to_csv(index=False, lineterminator="\n")


def canonical_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of the canonical CSV with its data rows sorted.

    The rows are sorted because our ``adult.csv`` lists the rows of
    ``adult.data`` in another order; sorting makes the digest a fingerprint of
    the rows as a multiset, which a conversion from the original must match.
    """
    header, *rows = canonical_csv(frame).splitlines()
    text = "\n".join([header, *sorted(rows)]) + "\n"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _has_header(path: Path, sep: str) -> bool:
    """True when the first field of the file is not a number (a header row)."""
    # (utf-8-sig: a byte-order mark would make the first number a header)
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        first = handle.readline().strip()
    field = first.split() if sep == r"\s+" else first.split(sep)
    try:
        float(field[0])
    except (IndexError, ValueError):
        return bool(first)
    return False


def _read_original(path: Path, spec: UCISpec) -> pd.DataFrame:
    try:
        raw = pd.read_csv(
            path,
            sep=spec.sep,
            header=None,
            skiprows=1 if _has_header(path, spec.sep) else 0,
            skipinitialspace=True,
            na_values=["?"],
            encoding="utf-8-sig",
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} is not the UCI {spec.name} file {spec.original!r}: {exc}"
        ) from exc
    if raw.shape[1] != len(spec.columns):
        raise ValueError(
            f"{path} has {raw.shape[1]} fields per line, but the UCI {spec.name} "
            f"file {spec.original!r} has {len(spec.columns)}"
        )
    raw.columns = list(spec.columns)
    text = raw.select_dtypes(include=["object", "string"]).columns
    raw[text] = raw[text].apply(lambda values: values.str.strip())  # "Male "
    return raw


def _outcome(raw: pd.Series, spec: UCISpec, path: Path) -> np.ndarray:
    if isinstance(spec.positive, str):
        # adult.test writes '>50K.'; accept the trailing full stop
        values = raw.astype(str).str.strip().str.rstrip(".")
    else:
        values = pd.to_numeric(raw, errors="coerce")
    unknown = ~values.isin(spec.outcome_levels)
    if unknown.any():
        found = sorted({str(v) for v in raw[unknown]})[:5]
        raise ValueError(
            f"{path}: the last column of the UCI {spec.name} file must be one of "
            f"{list(spec.outcome_levels)}, found {found}"
        )
    return (values == spec.positive).to_numpy().astype(np.int64)


def convert_original(path: str | Path, spec: UCISpec) -> pd.DataFrame:
    """Read a UCI original file and return our clean frame.

    Parameters
    ----------
    path : str or Path
        The original file (e.g. ``pima-indians-diabetes.data``).
    spec : UCISpec
        What the dataset is.

    Returns
    -------
    DataFrame
        Clean column names, integer columns as integers, the outcome coded 0/1
        in the last column (1 = the paper's positive class), string columns with
        surrounding spaces removed, and (for adult) rows with a missing value
        dropped.
    """
    path = Path(path)
    frame = _read_original(path, spec)
    frame[spec.outcome] = _outcome(frame[spec.outcome], spec, path)
    if spec.dropna:
        frame = frame.dropna().reset_index(drop=True)
    for column in spec.int_columns:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(values) & (values == np.round(values))):
            raise ValueError(
                f"{path}: column {column!r} of the UCI {spec.name} file must hold "
                "whole numbers"
            )
        frame[column] = values.astype(np.int64)
    return pd.read_csv(io.StringIO(canonical_csv(frame)))


def verify(frame: pd.DataFrame, spec: UCISpec, source: Path) -> None:
    """Raise ValueError unless ``frame`` is the dataset ``spec`` describes.

    Checks the column names, the row count, the number of positive outcomes
    and the digest of the canonical CSV.
    """
    fix = f"remove {source} (it will be downloaded again) or replace it"
    if tuple(frame.columns) != spec.columns:
        raise ValueError(
            f"{source} does not have the columns of {spec.name}: expected "
            f"{list(spec.columns)}, got {list(frame.columns)}; {fix}"
        )
    positives = int((frame[spec.outcome] == 1).sum())
    if len(frame) != spec.nrows or positives != spec.npositive:
        raise ValueError(
            f"{source} gives {len(frame)} rows with {positives} positive outcomes, "
            f"expected {spec.nrows} with {spec.npositive} for {spec.name}; {fix}"
        )
    digest = canonical_digest(frame)
    if digest != spec.sha256:
        raise ValueError(
            f"{source} has the size of {spec.name} but not its content (SHA-256 "
            f"of the canonical CSV is {digest}, expected {spec.sha256}); {fix}"
        )
