"""Checks at the boundary: arguments and data, with expected-versus-got messages."""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_choice",
    "check_int",
    "check_positive_float",
    "encode_outcome",
    "resolve_inside",
]


def check_int(value, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (bools are refused: ``k=True`` is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive_float(value, name: str, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (or ``>= 0``)."""
    bound = ">= 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {bound}, got {value}")
    return value


def check_choice(value, name: str, allowed: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    allowed = tuple(allowed)
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


def encode_outcome(endog: np.ndarray) -> tuple[np.ndarray, dict]:
    """Map a two-level numeric outcome to ``{0, 1}``.

    ``{0, 1}`` stays as it is, ``{-1, 1}`` maps ``-1 -> 0``, booleans map to 0/1.
    Returns the 0/1 float array and the mapping ``{original: code}`` shown in the
    summary.
    """
    values = np.asarray(endog)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(
            "endog must be one column of outcomes; got an array of shape "
            f"{values.shape}. With a formula, a string outcome expands to several "
            "columns: recode it to 0/1 first."
        )
    if values.dtype == bool:
        return values.astype(float), {False: 0, True: 1}
    try:
        values = values.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "endog must be numeric or boolean with two levels; recode it to 0/1"
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
        return values, {0: 0, 1: 1}
    if set(levels) == {-1.0, 1.0}:
        return (values > 0).astype(float), {-1: 0, 1: 1}
    raise ValueError(
        f"endog must be coded 0/1, -1/+1 or boolean; found levels {levels[0]:g} and "
        f"{levels[1]:g}. Recode it, e.g. (y == {levels[1]:g}).astype(int)"
    )


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
