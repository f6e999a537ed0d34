"""Reading in-memory data into a model: the checks before statsmodels' data
handling, and what the model takes from it after.

Every model is built by one path (``PolyhedralMixtureLogit.__init__``): the
data are read here (arrays, DataFrames, a formula's design) or by
``plumestats._dask.read_collections`` (Dask collections); each returns the 0/1
outcome and a :class:`~plumestats._validation.DesignSummary` of the design,
from which the model's set-up checks and names the columns alike.
"""

from __future__ import annotations

import numpy as np

from ._compat import FORMULA_SPEC_KEYWORDS
from ._formula_data import check_design_values
from ._memory import check_parameter_count
from ._validation import (
    coerce_exog,
    design_summary,
    encode_outcome,
    precheck_data,
    prepare_endog,
    statsmodels_exog_names,
)

__all__ = ["FORMULA_KEYWORDS", "check_given", "finish_arrays", "prepare_arrays"]

# what statsmodels' from_formula passes on to the model, besides our arguments
FORMULA_KEYWORDS = frozenset({"missing_idx", "formula", "hasconst"}) | (
    FORMULA_SPEC_KEYWORDS
)


def check_given(model, endog, exog, kwargs: dict) -> None:
    """Both data arguments are there, and no keyword is unknown."""
    if exog is None:
        raise ValueError("exog is required; pass a design with a constant column")
    if endog is None or np.ndim(endog) == 0:
        raise ValueError(
            "endog must hold one outcome per observation (an array, list or "
            f"Series), got {'None' if endog is None else type(endog).__name__}"
        )
    unknown = set(kwargs) - FORMULA_KEYWORDS
    if unknown:
        raise TypeError(
            f"{type(model).__name__} got unexpected keyword arguments: "
            f"{sorted(unknown)}"
        )


def prepare_arrays(endog, exog, k: int, missing: str, kwargs: dict):
    """``(endog, exog, mapping, n_given)`` checked and prepared for
    statsmodels' data handling, whose own errors do not name the column."""
    exog = coerce_exog(exog)
    if np.ndim(exog) == 2:
        check_parameter_count(k, int(exog.shape[1]))
    if np.size(endog) == 0:
        raise ValueError(
            "there are no observations: endog is empty (after dropping missing "
            "values, if missing='drop')"
        )
    if np.size(endog) == 1:
        raise ValueError("there is only 1 observation; a fit needs both classes")
    from_formula = "formula" in kwargs
    if from_formula and "missing_idx" not in kwargs:
        raise TypeError(
            "formula= is set by from_formula; to fit a formula use "
            "ps.plume(formula, data, ...) (or the model's from_formula)"
        )
    if from_formula:  # patsy has built the design: name a term's inf
        check_design_values(exog, missing)
    else:
        _check_array_shapes(endog, exog)
        precheck_data(endog, exog, missing)
    endog, mapping = prepare_endog(endog)
    return endog, exog, mapping, np.shape(endog)[0]


def _check_array_shapes(endog, exog) -> None:
    if np.shape(endog)[0] != np.shape(exog)[0]:
        raise ValueError(
            f"endog has {np.shape(endog)[0]} rows but exog has "
            f"{np.shape(exog)[0]}: give one outcome per row of the design"
        )
    if np.ndim(endog) == 2 and np.shape(endog)[1] != 1:
        raise ValueError(
            f"endog must be one column of outcomes, got {np.shape(endog)[1]} columns"
        )


def finish_arrays(model, mapping, n_given: int, missing: str, kwargs: dict):
    """After statsmodels' data handling: the 0/1 outcome (its coding named on
    the model) and the design's summary."""
    # GenericLikelihoodModel copies every keyword onto the instance; the patsy
    # design info cannot be pickled and already lives on model.data, which
    # knows how to pickle it (as for statsmodels' own formula models).
    for keyword in FORMULA_SPEC_KEYWORDS:
        model.__dict__.pop(keyword, None)
    try:
        y01, coding, yname = encode_outcome(model.endog, model.data.ynames)
    except ValueError as exc:
        error = _after_dropping(exc, model, n_given, missing, kwargs)
        if error is exc:
            raise
        raise error from exc
    if y01.ndim != np.ndim(model.data.endog):
        # a formula's string outcome came as indicator columns: one name now
        model.data.ynames = yname
    model.outcome_mapping = mapping or coding
    orig = model.data.orig_exog
    if isinstance(orig, np.ndarray) and orig.dtype.names is None:
        # statsmodels would name the columns from exog.var(0), an (n, p)
        # temporary; the same names, computed by row blocks
        model.data.xnames = statsmodels_exog_names(model.exog)
    return y01, design_summary(model.exog)


def _after_dropping(exc, model, n_given, missing, kwargs) -> ValueError:
    """The outcome's error, with the rows ``missing='drop'`` removed (by
    statsmodels here, and before by patsy for a formula)."""
    dropped = n_given - model.endog.shape[0]
    if kwargs.get("missing_idx") is not None:
        dropped += int(np.sum(kwargs["missing_idx"]))
    if missing != "drop" or dropped == 0:
        return exc
    return ValueError(
        f"{exc} (after missing='drop' removed {dropped} "
        f"row{'s' if dropped != 1 else ''} with missing values)"
    )
