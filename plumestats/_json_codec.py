"""Plain data to JSON and back, exactly, and nothing else.

What a results export holds (numbers, strings, arrays, tuples, dicts with
non-string keys) becomes JSON that any reader can parse: standard JSON only,
so NaN and infinities are tagged strings, not JavaScript's literals. Decoding
builds only numbers, strings, lists, tuples, dicts and NumPy arrays of
numbers or booleans: a file can never name a class to instantiate.

Floats round-trip exactly (Python writes the shortest repr that reads back
to the same double); ``long double`` values (patsy's running sums for
``center`` and ``standardize``) are written as decimal strings with all
their digits.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["decode", "encode"]

# the one-key objects that stand for a value JSON has no literal for
_ARRAY, _FLOAT, _LONG, _TUPLE, _DICT = (
    "__ndarray__",
    "__float__",
    "__longdouble__",
    "__tuple__",
    "__dict__",
)
_TAGS = (_ARRAY, _FLOAT, _LONG, _TUPLE, _DICT)
_DTYPES = {"float64", "int64", "bool", "longdouble"}


def encode(value):
    """``value`` as JSON-ready data; a ``TypeError`` names what cannot go."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.floating) and np.finfo(value.dtype).bits > 64:
        return {_LONG: _long_text(value)}
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    if isinstance(value, np.ndarray):
        return {_ARRAY: _array(value)}
    if isinstance(value, tuple):
        return {_TUPLE: [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {_DICT: [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"a {type(value).__name__} cannot be written to JSON")


def decode(data):
    """The value :func:`encode` was given; a ``ValueError`` for data it could
    not have written."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        raise ValueError(f"unexpected {type(data).__name__} in the file")
    tags = [key for key in data if key in _TAGS]
    if not tags:
        return {key: decode(value) for key, value in data.items()}
    if len(data) != 1:
        raise ValueError(f"a {tags[0]} entry with other keys: {sorted(data)}")
    tag, body = tags[0], data[tags[0]]
    if tag == _FLOAT:
        if body not in ("nan", "inf", "-inf"):
            raise ValueError(f"unknown special float {body!r}")
        return float(body)
    if tag == _LONG:
        return np.longdouble(_text(body))
    if tag == _TUPLE:
        return tuple(decode(v) for v in _list(body))
    if tag == _DICT:
        return {_hashable(decode(k)): decode(v) for k, v in map(_pair, _list(body))}
    return _read_array(body)


def _float(value: float):
    if math.isfinite(value):
        return value
    return {_FLOAT: "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _long_text(value) -> str:
    return np.format_float_scientific(value, unique=True)


def _array(array: np.ndarray) -> dict:
    kind = array.dtype.kind
    if kind == "f" and array.dtype.itemsize > 8:
        dtype, data = "longdouble", [_long_text(v) for v in array.ravel()]
    elif kind == "f":
        dtype = "float64"
        data = [_float(float(v)) for v in array.astype(float).ravel()]
    elif kind in "iu":
        dtype, data = "int64", [int(v) for v in array.ravel()]
    elif kind == "b":
        dtype, data = "bool", [bool(v) for v in array.ravel()]
    else:
        raise TypeError(f"an array of dtype {array.dtype} cannot be written to JSON")
    return {"dtype": dtype, "shape": list(array.shape), "data": data}


def _read_array(body) -> np.ndarray:
    if not isinstance(body, dict) or set(body) != {"dtype", "shape", "data"}:
        raise ValueError("an array entry needs exactly dtype, shape and data")
    dtype, shape, data = body["dtype"], _list(body["shape"]), _list(body["data"])
    if dtype not in _DTYPES:
        raise ValueError(f"unknown array dtype {dtype!r}")
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"bad array shape {shape!r}")
    if dtype == "longdouble":
        values = np.array([_text(v) for v in data], dtype=np.longdouble)
    elif dtype == "float64":
        values = np.array([_number(decode(v)) for v in data], dtype=float)
    else:  # int64 and bool arrays hold exactly their kind (a float would be cut)
        kind = bool if dtype == "bool" else int
        if not all(type(v) is kind for v in data):
            raise ValueError(f"an array of dtype {dtype} holds other values")
        try:
            values = np.array(data, dtype=dtype)
        except OverflowError as exc:
            raise ValueError(f"an {dtype} array holds a value out of range") from exc
    if values.size != math.prod(shape):
        raise ValueError(f"an array of shape {shape} holds {values.size} values")
    return values.reshape(shape)


def _number(value):
    if isinstance(value, (bool, int, float)):
        return value
    raise ValueError(f"expected a number, got {value!r}")


def _text(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _list(value) -> list:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {type(value).__name__}")
    return value


def _pair(value) -> list:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("a dict entry must be a [key, value] pair")
    return value


def _hashable(key):
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, (dict, np.ndarray)):
        raise ValueError("a dict key must be a number, string or tuple")
    return key
