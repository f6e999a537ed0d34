"""Checks of arguments at the boundary, with expected-versus-got messages."""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ._design import DesignMatrix, as_design

__all__ = [
    "MAX_GAMMA",
    "MIN_GAMMA",
    "as_grid",
    "check_choice",
    "check_flag",
    "check_gamma",
    "check_identified",
    "check_int",
    "check_params",
    "check_positive_float",
    "check_row_labels",
    "float_vector",
    "refuse_repeated_labels",
    "require_estimation_data",
    "without_data",
]


def check_int(value, name: str, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (bools are refused: ``k=True`` is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_flag(value, name: str, allow_none: bool = False):
    """``True`` or ``False`` (numpy's booleans, and the integers 0 and 1 that
    statsmodels' own signatures use, too; ``None`` if allowed)."""
    if value is None and allow_none:
        return None
    is_int = isinstance(value, numbers.Integral) and value in (0, 1)
    if not (isinstance(value, (bool, np.bool_)) or is_int):
        allowed = "True, False or None" if allow_none else "True or False"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return bool(value)


def check_positive_float(value, name: str, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (or ``>= 0``)."""
    bound = ">= 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {bound}, got {value}")
    return value


# Beyond this the soft gate equals the hard one to within rounding at any
# sensible scale of the scores, while its curvature (gamma**2) swamps the
# experts' in the Newton steps: EM stalls at its start (seen from gamma = 1e8)
# and gamma**2 overflows from about 1e154.
MAX_GAMMA = 1e6
# Below this the gate is soft only for weights of order 1 / gamma, where the
# experts' probabilities are 0 or 1 to rounding: at 1e-6 a simulated fit
# with a finite maximum (llf -111.52, |w| ~ 2e6) was called separated, and
# its maximum refused as a start (``_fitting._MAX_START_WEIGHT``); from 1e-5
# the default fit missed that maximum by 2.8 units (1e-4: 0.28).
MIN_GAMMA = 1e-4


def check_gamma(
    value, name: str = "gamma", hard: str | None = "HardPolyhedralLogit (ps.spla1)"
) -> float:
    """A gate sharpness: finite, at least :data:`MIN_GAMMA` and at most
    :data:`MAX_GAMMA`.

    ``hard`` says where the caller offers the hard-gating limit (``None``: it
    does not), for the messages.
    """
    if isinstance(value, numbers.Real) and value == np.inf:
        if hard is None:
            raise ValueError(
                f"{name} must be finite: this model has no hard-gating variant "
                "(gamma = inf)"
            )
        raise ValueError(
            f"{name}=inf is the hard-gating model: use {hard} for it, or a finite "
            "gamma here"
        )
    value = check_positive_float(value, name)
    if value < MIN_GAMMA:
        raise ValueError(
            f"{name} must be at least {MIN_GAMMA:.0e}, got {value:g}: below that the "
            "gate is soft only for weights of order 1/gamma, where every expert's "
            "probability is 0 or 1 and the fit cannot tell a distant maximum from "
            "separation"
        )
    if value > MAX_GAMMA:
        remedy = (
            f"for the hard-gating limit use {hard}"
            if hard
            else "this model has no hard-gating variant"
        )
        raise ValueError(
            f"{name} must be at most {MAX_GAMMA:.0e}, got {value:g}: beyond that the "
            "gate is already hard to within rounding and the fit loses precision; "
            f"{remedy}"
        )
    return value


def float_vector(values, name: str) -> np.ndarray:
    """``values`` as a float array, or a ``ValueError`` naming ``name`` (NumPy's
    own, "could not convert string to float", does not say which argument)."""
    if not isinstance(values, str | bytes | dict | set):
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            pass
    shown = repr(values)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ValueError(
        f"{name} must be an array of numbers, got a {type(values).__name__}: {shown}"
    )


def as_grid(values, name: str) -> list:
    """A grid of candidate values; a single number is a grid of one."""
    if isinstance(values, numbers.Number):
        return [values]
    if isinstance(values, np.ndarray) and values.ndim == 0:
        return [values.item()]
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValueError(
            f"{name} must be a number or a sequence of numbers, got {values!r}"
        )
    return list(values)


def check_identified(model, alpha: float) -> None:
    """More parameters than observations are identified only under a penalty:
    refused at ``fit`` for ``alpha == 0`` (a ridge fit of a wide design is fine)."""
    k, n_cols, n_params = model.k, model.k_vars, model.nparams
    if alpha == 0 and n_params > model.nobs:
        extra = n_params - k * n_cols  # the label-flip model's flip rate
        counted = f"k * p = {k} * {n_cols}" + (f" + {extra}" if extra else "")
        raise ValueError(
            f"the model has {counted} = {n_params} parameters but only "
            f"{model.nobs} observations, too few to identify them without a "
            "penalty; use a smaller k, fewer columns, or an L2 penalty, e.g. "
            "fit(alpha=1e-3)"
        )


def check_choice(value, name: str, allowed: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    allowed = tuple(allowed)
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


def method_name(method, allowed: Iterable[str]):
    """``method`` as statsmodels' optimisers read it, in any case (``"BFGS"``
    is ``"bfgs"``) where that is one of ``allowed``; anything else as given,
    so that its refusal quotes the user's spelling."""
    if isinstance(method, str) and method.lower() in tuple(allowed):
        return method.lower()
    return method


def require_estimation_data(model, what: str, remedy: str) -> None:
    """Raise a clear ``ValueError`` when ``remove_data()`` dropped the sample
    that ``what`` needs; ``remedy`` says what to do instead."""
    if model.exog is None:
        raise ValueError(f"{what} the estimation data, {without_data(model)}; {remedy}")


def without_data(model) -> str:
    """Why ``model`` has no estimation data: ``remove_data()`` dropped them,
    or (in its own words) a JSON export never held them."""
    return getattr(model, "_without_data", "which remove_data() dropped")


def estimation_design(model) -> DesignMatrix:
    """The model's design in the user's units, as the likelihood reads it,
    or a clear error after ``remove_data()`` (not a NoneType traceback)."""
    require_estimation_data(model, "the likelihood needs", "refit the model")
    return as_design(np.asarray(model.exog, dtype=float))


def check_params(model, params) -> np.ndarray:
    """A parameter vector of ``model``'s length, as floats, without NaN."""
    params = np.asarray(params, dtype=float)
    if params.shape != (model.nparams,):
        raise ValueError(
            f"params must have {model.nparams} values (k={model.k} hyperplanes of "
            f"{model.k_vars} coefficients, {model._params_layout}), got shape "
            f"{params.shape}"
        )
    if np.isnan(params).any():
        raise ValueError(f"params contain {int(np.isnan(params).sum())} NaN values")
    return params


# Without a seed, fits and draws are still reproducible: a statistician
# expects the same data to give the same table. Pass random_state to vary them.
DEFAULT_SEED = 0


def seed_entropy(random_state) -> int:
    """The entropy of a ``SeedSequence`` for ``random_state``: ``None`` is
    :data:`DEFAULT_SEED`, an int >= 0 itself, and a numpy Generator gives one
    draw. Anything else gets a ``ValueError`` that names the three forms."""
    if random_state is None:
        return DEFAULT_SEED
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63 - 1))
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return int(random_state)
    raise ValueError(
        "random_state must be None, a non-negative integer or a numpy "
        f"Generator; got {random_state!r}"
    )


def check_row_labels(values, labels, name: str, kept=None, fix=None) -> None:
    """Refuse a pandas ``values`` (one per row: frequency weights, cluster
    labels) whose index is not the data's row ``labels``: they are used by
    position, as statsmodels uses them, and a Series in another order (or
    of other rows) would weigh the wrong rows without a word. ``kept``
    marks the rows of ``values`` a formula keeps (the others it dropped);
    ``fix`` replaces the remedy the message gives."""
    index = getattr(values, "index", None)
    # (a list's or a tuple's index is a method, not labels)
    if index is None or labels is None or callable(index) or callable(labels):
        return
    at = index if kept is None else index[np.asarray(kept, dtype=bool)]
    if len(at) == len(labels) and at.equals(labels):
        return
    if fix is None:
        fix = (
            f"pass it aligned by label, {name}.reindex(data.index), or by "
            f"position, {name}.to_numpy()"
        )
    raise ValueError(
        f"{name} is a pandas object whose index is not the data's rows, and it "
        f"is used by position; {fix}"
    )


def refuse_repeated_labels(columns) -> None:
    """Refuse a design whose column labels ``columns`` name one column
    twice: the parameter names are the labels as text, so 2 and "2" are
    one."""
    repeated = _repeated_labels(
        columns if isinstance(columns, pd.Index) else pd.Index(columns, dtype=object)
    )
    if repeated:
        raise ValueError(
            f"exog has more than one column named {repeated}; give each column a "
            "distinct name (the parameter names are made from them, as text)"
        )


def _repeated_labels(columns) -> str:
    """The column labels that are one name, as a phrase ("" if none): equal
    labels (``"a"`` twice; ``1`` and ``1.0``, equal to pandas), or labels that
    read the same as text, which the parameter names are made of (``2`` and
    ``"2"``)."""
    same = columns.duplicated(keep=False) | columns.map(str).duplicated(keep=False)
    groups: list[list] = []
    for label in columns[same]:  # (few: no quadratic work on a wide design)
        for group in groups:
            if _same_name(group[0], label):
                group.append(label)
                break
        else:
            groups.append([label])
    parts = []
    for group in (g for g in groups if len(g) > 1):
        # each label once, 1 and 1.0 apart (a set would merge them)
        distinct = list({(type(c), repr(c)): c for c in group}.values())
        parts.append(" and ".join(map(repr, distinct)))
    return ", ".join(parts)


def _same_name(left, right) -> bool:
    """Whether two column labels are one name: equal, both missing (None,
    NaN: pandas' duplicates), or the same as text."""
    try:
        equal = bool(left == right)
    except (TypeError, ValueError):  # labels that do not compare
        equal = False
    return equal or (_missing(left) and _missing(right)) or str(left) == str(right)


def _missing(label) -> bool:
    return label is None or (isinstance(label, float) and label != label)
