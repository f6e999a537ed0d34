"""What differs between the statsmodels releases plumestats supports (0.14, 0.15).

- ``cache_readonly`` moved to ``statsmodels.tools._decorators`` in 0.15.
- After ``remove_data()`` every cached attribute holds ``None``: 0.15's
  ``cache_readonly`` computes such a value again, 0.14's (pandas') returns the
  ``None`` (a summary then fails on ``prsquared = None``).
- A pandas nullable column (``Float64``, ``Int64``, ``boolean``) holding
  ``pd.NA``: 0.14 casts the frame to an object array and refuses it, 0.15
  reads ``pd.NA`` as NaN (which ``missing="drop"`` then drops).
- ``predict`` on new data that the formula cannot read: 0.15 chains patsy's
  error (``raise ... from``), 0.14 raises a new one in its ``except`` block.
- A formula model's design description: 0.14's ``from_formula`` passes patsy's
  ``DesignInfo`` as ``design_info=`` and keeps it at ``model.data.design_info``;
  0.15 passes ``model_spec=`` (patsy's ``DesignInfo`` or formulaic's
  ``ModelSpec``) and keeps it at ``model.data.model_spec``. 0.15 also names and
  slices terms through its ``FormulaManager``, which 0.14 does not have.
"""

from __future__ import annotations

import pandas as pd

try:  # statsmodels >= 0.15
    from statsmodels.tools._decorators import cache_readonly
except ImportError:  # statsmodels 0.14
    from statsmodels.tools.decorators import cache_readonly

from statsmodels import __version__ as _sm_version

# statsmodels >= 0.15 reads formulas through its FormulaManager, which takes a
# dict as eval_env; 0.14 hands eval_env to patsy, which takes an int or an
# EvalEnvironment only
STATSMODELS_EVAL_ENV_MAPPING = tuple(int(p) for p in _sm_version.split(".")[:2]) >= (
    0,
    15,
)

try:  # statsmodels >= 0.15: patsy or formulaic model specs
    from statsmodels.formula._manager import FormulaManager
except ImportError:  # statsmodels 0.14 (patsy only)
    FormulaManager = None

__all__ = [
    "FORMULA_SPEC_KEYWORDS",
    "STATSMODELS_EVAL_ENV_MAPPING",
    "cache_readonly",
    "formula_spec",
    "nullable_as_float",
    "original_error",
    "recompute_removed",
    "term_slices",
]

# the keyword that carries the design description from from_formula to the
# model: "model_spec" in statsmodels 0.15, "design_info" in 0.14
FORMULA_SPEC_KEYWORDS = frozenset({"model_spec", "design_info"})


def formula_spec(data):
    """The formula's design description on a model's ``data``, or ``None``
    for a model built from arrays (either statsmodels release)."""
    spec = getattr(data, "model_spec", None)
    if spec is None:
        spec = getattr(data, "design_info", None)
    return spec


def term_slices(spec) -> list[tuple[str, slice]]:
    """``(term name, design column slice)`` for every term of ``spec``."""
    if FormulaManager is None:  # statsmodels 0.14: patsy's DesignInfo
        return [(term.name(), spec.slice(term)) for term in spec.terms]
    manager = FormulaManager()
    return [
        (manager.get_term_name(term), manager.get_slice(spec, term))
        for term in spec.terms
    ]


def nullable_as_float(frame):
    """``frame`` with its nullable numeric columns as float64, ``pd.NA`` as
    NaN, as statsmodels 0.15 reads them; anything else is returned as is."""
    if not isinstance(frame, pd.DataFrame):
        return frame
    nullable = [
        column
        for column, dtype in frame.dtypes.items()
        if isinstance(dtype, pd.api.extensions.ExtensionDtype)
        and pd.api.types.is_numeric_dtype(dtype)
    ]
    if not nullable:
        return frame
    return frame.astype(dict.fromkeys(nullable, "float64"))


def original_error(exc: BaseException) -> BaseException:
    """The error that statsmodels re-raised as ``exc`` (``exc`` itself when it
    re-raised none): 0.15 chains it as the cause, 0.14 leaves it the context."""
    if exc.__cause__ is not None:
        return exc.__cause__
    if exc.__context__ is not None and "original error message" in str(exc):
        return exc.__context__
    return exc


def recompute_removed(results) -> None:
    """Let the cached attributes that ``remove_data()`` set to ``None`` compute
    again, as statsmodels 0.15 does: from what the results keep, or with an
    error that names the removed data."""
    cache = results._cache
    for key in [key for key, value in cache.items() if value is None]:
        del cache[key]
