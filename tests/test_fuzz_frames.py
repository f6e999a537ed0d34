"""A hypothesis fuzz of data frames, dtypes and outcome codings.

Random frames mix float, integer, boolean, pandas-nullable, categorical, text
and numbers-as-text columns, with missing, infinite and extreme values, and an
outcome coded in one of ten ways (some of them invalid). Through the formula and
the array interface, every example must either fit (finite estimates and
log-likelihood, predictions on its own frame in [0, 1] or NaN) or end in a clear
error raised by plumestats' own code; no example may leak a ``RuntimeWarning``
or another library's warning.

The default run draws 50 examples per interface; ``pytest -m slow`` (which CI
runs) draws 1000.
"""

from __future__ import annotations

import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statsmodels.tools.sm_exceptions import ModelWarning

import plumestats
import plumestats.api as ps

PACKAGE = Path(plumestats.__file__).resolve().parent
CLEAR_ERRORS = (ValueError, TypeError, MemoryError)

COLUMN_KINDS = (
    "float",
    "int",
    "float32",
    "bool",
    "Float64",
    "Int64",
    "boolean",
    "category",
    "text",
    "string",
    "numbers_as_text",
    "constant",
    "huge",
    "tiny",
)
OUTCOMES = (
    "01",
    "bool",
    "yes_no",
    "pm1",
    "category",
    "nullable_boolean",
    "true_false_text",
    "one_class",
    "three_classes",
    "float_01",
)


def _column(kind: str, nobs: int, rng: np.random.Generator):
    normal = rng.standard_normal(nobs)
    if kind == "float":
        return normal
    if kind == "int":
        return rng.integers(-3, 4, nobs)
    if kind == "float32":
        return normal.astype(np.float32)
    if kind == "bool":
        return normal > 0
    if kind == "Float64":
        return pd.array(normal, dtype="Float64")
    if kind == "Int64":
        return pd.array(rng.integers(0, 5, nobs), dtype="Int64")
    if kind == "boolean":
        return pd.array(normal > 0, dtype="boolean")
    if kind == "category":
        return pd.Categorical(rng.choice(["a", "b", "c"], nobs), ["a", "b", "c", "d"])
    if kind == "text":
        return rng.choice(["u", "v"], nobs).astype(object)
    if kind == "string":
        return pd.array(rng.choice(["p", "q", "r"], nobs), dtype="string")
    if kind == "numbers_as_text":
        return np.array([f"{v:.3f}" for v in normal], dtype=object)
    if kind == "constant":
        return np.full(nobs, 2.5)
    if kind == "huge":
        return normal * 1e140
    return normal * 1e-140  # tiny


def _outcome(coding: str, signal: np.ndarray, rng: np.random.Generator):
    y = rng.random(signal.size) < 1 / (1 + np.exp(-signal))
    return {
        "01": y.astype(int),
        "bool": y,
        "yes_no": np.where(y, "yes", "no"),
        "pm1": np.where(y, 1, -1),
        "category": pd.Categorical(np.where(y, "in", "out"), ["out", "in"]),
        "nullable_boolean": pd.array(y, dtype="boolean"),
        "true_false_text": np.where(y, "True", "False"),
        "one_class": np.ones(signal.size, dtype=int),
        "three_classes": rng.integers(0, 3, signal.size),
        "float_01": y.astype(float),
    }[coding]


def _spoil(values, how: str, rng: np.random.Generator):
    """A missing, infinite or None entry in one row (where the dtype holds it)."""
    values = pd.Series(values)
    if how == "clean" or len(values) == 0:
        return values
    row = int(rng.integers(0, len(values)))
    if how == "missing":
        values = values.astype(object) if values.dtype == bool else values
        values.iloc[row] = None
    elif how == "inf" and pd.api.types.is_float_dtype(values.dtype):
        values.iloc[row] = np.inf
    return values


@st.composite
def frames(draw):
    nobs = draw(st.integers(min_value=0, max_value=60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kinds = draw(st.lists(st.sampled_from(COLUMN_KINDS), min_size=1, max_size=4))
    data = {}
    for number, kind in enumerate(kinds):
        how = draw(st.sampled_from(["clean", "clean", "missing", "inf"]))
        data[f"c{number}"] = _spoil(_column(kind, nobs, rng), how, rng)
    frame = pd.DataFrame(data)
    signal = rng.standard_normal(nobs) * 2
    coding = draw(st.sampled_from(OUTCOMES))
    frame["y"] = _spoil(
        _outcome(coding, signal, rng), draw(st.sampled_from(["clean", "missing"])), rng
    )
    terms = [
        f"C({c})" if isinstance(frame[c].dtype, pd.CategoricalDtype) else c
        for c in frame.columns
        if c != "y"
    ]
    return frame, "y ~ " + " + ".join(terms)


def _judge(run) -> None:
    """``run`` fits, or fails with a clear error of plumestats' own; no leaks."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run()
        except CLEAR_ERRORS as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            origin = Path(frames[-1].filename).resolve()
            assert PACKAGE in origin.parents, (
                f"{type(exc).__name__} from {origin}: {exc}"
            )
    leaked = [w for w in caught if not issubclass(w.category, ModelWarning)]
    assert not leaked, f"{leaked[0].category.__name__}: {leaked[0].message}"


def _check_fit(res, frame_for_predict) -> None:
    assert np.isfinite(res.llf)
    assert np.all(np.isfinite(np.asarray(res.params)))
    prob = np.asarray(res.predict(frame_for_predict), dtype=float)
    assert np.all(np.isnan(prob) | ((prob >= 0) & (prob <= 1)))


def formula_case(case, k: int, missing: str) -> None:
    frame, formula = case

    def run():
        res = ps.plume(formula, frame, k=k, missing=missing).fit(maxiter=60, alpha=1e-3)
        _check_fit(res, frame)

    _judge(run)


def array_case(case, k: int, missing: str) -> None:
    frame, _ = case
    exog = frame.drop(columns="y").assign(const=1.0)

    def run():
        model = ps.PolyhedralMixtureLogit(frame["y"], exog, k=k, missing=missing)
        _check_fit(model.fit(maxiter=60, alpha=1e-3), exog)

    _judge(run)


INTERFACES = {"formula": formula_case, "array": array_case}
FUZZ = (frames(), st.integers(1, 3), st.sampled_from(["none", "drop", "raise"]))


@pytest.mark.parametrize("interface", list(INTERFACES))
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(*FUZZ)
def test_frames_fit_or_refuse_clearly(interface, case, k, missing):
    INTERFACES[interface](case, k, missing)


@pytest.mark.slow
@pytest.mark.parametrize("interface", list(INTERFACES))
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(*FUZZ)
def test_frames_fit_or_refuse_clearly_1000(interface, case, k, missing):
    INTERFACES[interface](case, k, missing)
