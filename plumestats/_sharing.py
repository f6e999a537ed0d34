"""Results as a JSON file that is safe to share, and back.

A pickle can run any code when it is loaded; a JSON export cannot. It holds
what a results object keeps after ``remove_data()`` (the estimates, their
covariance, the fit's statistics and settings, the model's names and
counts) and, for a formula model, the patsy design needed to apply the
formula to new data (:mod:`plumestats._design_json`). Loading it restores the
same attributes a pickle would restore, from a fixed list of fields, onto
the same classes: ``predict`` (through the formula), ``get_prediction``,
``summary``, ``conf_int``, ``t_test`` and the other methods that need no
estimation sample work as after ``remove_data()``.

Not exported: the estimation data (as after ``remove_data()``); a
bootstrap's replicates; per-iteration parameter paths (``retall``). A
formula outside the safe grammar (:mod:`plumestats._formula_safety`), which
loading would have to run as code, is refused at export.
"""

from __future__ import annotations

import json
import numbers
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
from patsy import PatsyError
from statsmodels.base.data import ModelData, PandasData

from ._aliasing import Aliasing, of_model
from ._covariance import canonical_cov_type
from ._design_json import (
    ExportError,
    design_from_json,
    design_to_json,
    formula_data_columns,
)
from ._diagnostics import FitDiagnostics
from ._formula_safety import UnsafeFormulaError, check_safe_formula
from ._json_codec import decode, encode
from ._spec import ModelSpec
from ._validation import check_int

__all__ = [
    "EXPORTABLE",
    "FORMAT",
    "FORMAT_VERSION",
    "load_json",
    "register_exportable",
    "results_from_json",
    "to_json",
]

FORMAT = "plumestats-results"
FORMAT_VERSION = 1

# the attributes a fit keeps after remove_data(), written as they are
_MODEL_FIELDS = (
    "_exog_named",
    "k_constant",
    "_init_keys",
    "nparams",
    "k",
    "gamma",
    "outcome_mapping",
    "inside",
    "_inside_code",
    "nobs",
    "k_vars",
    "k_extra",
    "df_model",
    "df_resid",
)
_RESULTS_FIELDS = (
    "nobs",
    "df_model",
    "df_resid",
    "params",
    "k_constant",
    "normalized_cov_params",
    "scale",
    "_use_t",
    "mle_settings",
    "k",
    "gamma",
    "k_params",
    "outcome_mapping",
    "chunksize",
    "cov_type",
    "_radius",
    "_llf",
    "_llnull",
    "_confusion",
)
# present only for some fits (robust covariances, clusters, frequency
# weights) or exports (the L1 counts came after the format)
_OPTIONAL_RESULTS_FIELDS = (
    "cov_params_default",
    "df_resid_inference",
    "_weighted_rows",  # the rows of a fit with frequency weights
    "trimmed",  # which parameters an L1 fit set to zero
    "nnz_params",
    # a rank-deficient design's covariances before the unidentified rows were
    # masked: what its estimable combinations read
    "_bread_held",
    "_robust_held",
)
# the data arrays and per-observation values that a loaded fit has none of
_MODEL_DATA_ATTR = ["exog", "endog", "data.exog", "data.endog", "_y_inside"]
# mle_retvals entries that hold parameter paths (retall), not statistics
_RETVALS_LEFT_OUT = ("allvecs",)


# The model classes an export can name, each with its results and wrapper
# classes. Their modules register them (register_exportable), so that this
# module imports none of them and the results can import it: no import cycle.
EXPORTABLE: dict[str, tuple[type, type, type]] = {}


def register_exportable(model_cls: type, results_cls: type, wrapper_cls: type) -> None:
    """Let :func:`to_json` export fits of ``model_cls`` and :func:`load_json`
    rebuild them."""
    EXPORTABLE[model_cls.__name__] = (model_cls, results_cls, wrapper_cls)


# ------------------------------------------------------------------ export
def to_json(results) -> str:
    """The JSON text of a results object (see :mod:`plumestats._sharing`)."""
    results = getattr(results, "_results", results)
    model = results.model
    name = type(model).__name__
    if name not in EXPORTABLE:
        raise ExportError(f"a {name} cannot be exported to JSON")
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "plumestats_version": _version(),
        "model": {"class": name, **_model_part(model)},
        "results": _results_part(results),
    }
    return json.dumps(document, indent=1, allow_nan=False)


def _version() -> str:
    try:
        return version("plumestats")
    except PackageNotFoundError:  # a source tree, not installed
        return "0+unknown"


def _model_part(model) -> dict:
    data = model.data
    part = {field: encode(getattr(model, field)) for field in _MODEL_FIELDS}
    aliasing = of_model(model)  # a rank-deficient design's null directions
    if aliasing is not None:
        part["aliasing"] = encode(dict(vars(aliasing)))
    part["data"] = {
        "pandas": isinstance(data, PandasData),
        "ynames": encode(data.ynames),
        "xnames": encode(list(data.xnames)),
        "param_names": encode(list(data.param_names)),
        "const_idx": encode(data.const_idx),
        "k_constant": encode(data.k_constant),
    }
    formula = getattr(model, "formula", None)
    part["formula"] = formula
    if formula is None:
        return part
    columns = getattr(data, "_columns", None)  # a fit loaded from JSON
    if columns is None:
        columns = formula_data_columns(formula, getattr(_frame(data), "columns", None))
    try:
        check_safe_formula(formula, columns)
    except UnsafeFormulaError as exc:
        raise ExportError(
            f"{exc}. A JSON file carries only formulas in the safe grammar "
            "(plumestats.api.check_safe_formula), since loading it evaluates the "
            "formula on new data; save a pickle instead (results.save)"
        ) from exc
    spec = getattr(data, "model_spec", None) or getattr(data, "design_info", None)
    part["columns"] = columns
    part["design"] = design_to_json(spec)
    return part


def _frame(data):
    return getattr(data, "frame", None)


def _results_part(results) -> dict:
    part = {field: encode(getattr(results, field)) for field in _RESULTS_FIELDS}
    for field in _OPTIONAL_RESULTS_FIELDS:
        if field in vars(results):
            part[field] = encode(getattr(results, field))
    part["mle_retvals"] = _plain_entries(results.mle_retvals, _RETVALS_LEFT_OUT)
    # the cluster labels are data: the number of clusters and the wording stay
    part["cov_kwds"] = _plain_entries(results.cov_kwds, ("groups",))
    diagnostics = vars(results).get("_diagnostics")
    part["diagnostics"] = (
        None if diagnostics is None else encode(dict(vars(diagnostics)))
    )
    return part


def _plain_entries(mapping: dict, left_out) -> dict:
    """The entries of ``mapping`` that are plain data (numbers, text, arrays),
    less ``left_out``."""
    out = {}
    for key, value in mapping.items():
        if key in left_out:
            continue
        try:
            out[key] = encode(value)
        except TypeError:
            continue  # e.g. a callback: nothing a reader could use
    return out


# ------------------------------------------------------------------ import
def load_json(path):
    """The results saved by ``results.save_json(path)``.

    Parameters
    ----------
    path : str or path-like
        A file written by
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.save_json`.

    Returns
    -------
    PolyhedralMixtureLogitResults
        Wrapped as a fit's results are (pandas in, pandas out), of the class
        that was saved (label-flip results for a label-flip fit).

    Raises
    ------
    ValueError
        For a file that is not a plumestats JSON export, a malformed one, one
        written by a newer plumestats (a higher format version), or one whose
        formula is outside the safe grammar.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not a plumestats JSON export: not UTF-8 text ({exc}); a "
            "pickle (results.save) loads with PolyhedralMixtureLogitResults.load"
        ) from exc
    return results_from_json(text, source=str(path))


def results_from_json(text: str, source: str = "the JSON text"):
    """The results a JSON export holds (see :func:`load_json`)."""
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        # (a RecursionError: arrays nested deeper than Python's stack)
        raise ValueError(
            f"{source} is not a plumestats JSON export: not valid JSON ({exc})"
        ) from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(
            f"{source} is not a plumestats JSON export (it has no "
            f'"format": "{FORMAT}" entry); make one with results.save_json()'
        )
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"{source} has no valid format_version: {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{source} was written by a newer plumestats "
            f"({document.get('plumestats_version', 'unknown')}, format version "
            f"{version}); this one ({_version()}) reads format version "
            f"{FORMAT_VERSION}: upgrade plumestats to load it"
        )
    try:
        return _holding_together(_rebuild(document["model"], document["results"]))
    except UnsafeFormulaError as exc:
        raise ValueError(f"{source} holds a formula that is not safe: {exc}") from exc
    except (
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        IndexError,
        OverflowError,
        RecursionError,  # arrays nested deeper than the decoder's stack
    ) as exc:
        # (patsy's PatsyError, for a design that does not hold together, is a
        # ValueError here: see _model_data)
        missing = f"no {exc} entry" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(
            f"{source} is a malformed plumestats JSON export: {missing}"
        ) from exc


def _rebuild(model_part: dict, results_part: dict):
    name = model_part["class"]
    if name not in EXPORTABLE:
        raise ValueError(f"unknown model class {name!r}")
    model_cls, results_cls, wrapper_cls = EXPORTABLE[name]
    model = model_cls.__new__(model_cls)
    vars(model).update(_model_state(model_part))
    model.data = _model_data(model_part)
    _check_counts(model)
    sign = 1.0 if model._inside_code == 1 else -1.0
    model.spec = ModelSpec(model.k, model._gate(model.gamma), sign, model._flips)
    results = results_cls.__new__(results_cls)
    # what a remove_data()'d pickle would restore, field by field
    state = {field: decode(results_part[field]) for field in _RESULTS_FIELDS}
    for field in _OPTIONAL_RESULTS_FIELDS:
        if field in results_part:
            state[field] = decode(results_part[field])
    state["cov_type"] = canonical_cov_type(state["cov_type"])
    state["params"] = _vector(state["params"], model.nparams, "params")
    state["normalized_cov_params"] = _square(
        state["normalized_cov_params"], model.nparams, "normalized_cov_params"
    )
    for field in ("cov_params_default", "_bread_held", "_robust_held"):
        if field in state:
            state[field] = _square(state[field], model.nparams, field)
    state.update(
        model=model,
        endog=None,
        exog=None,
        _cache={},
        _data_attr=["endog", "exog"],
        _data_in_cache=list(_DATA_IN_CACHE),
        _block_scaling=None,
        mle_retvals=_mapping(decode(results_part["mle_retvals"])),
        cov_kwds=_mapping(decode(results_part["cov_kwds"])),
    )
    diagnostics = results_part.get("diagnostics")
    state["_diagnostics"] = None  # PLUME's only (not the label-flip model's)
    if diagnostics is not None:
        state["_diagnostics"] = FitDiagnostics(**_mapping(decode(diagnostics)))
    vars(results).update(state)
    return wrapper_cls(results)


def _holding_together(results):
    """``results``, once what its summary (standard errors and intervals
    among it) and information criteria read has been read: a field a hand
    edit damaged (a setting deleted, a count made text) fails here, as a
    malformed file, rather than later in a bare ``KeyError`` or
    ``TypeError`` of ``summary()`` or ``bic``. The rebuild checks the fields
    it reads itself; this reads the rest as the results will."""
    _mapping(results.outcome_mapping)  # (read by predict, which needs rows)
    results.summary()
    _ = results.bic  # (not in the summary)
    return results


_DATA_IN_CACHE = (
    "fittedvalues",
    "resid_response",
    "resid_pearson",
    "resid_dev",
    "score_obsv",
    "_leverage",
)


def _model_state(part: dict) -> dict:
    state = {field: decode(part[field]) for field in _MODEL_FIELDS}
    _check_model_numbers(state)
    state["outcome_mapping"] = _mapping(state["outcome_mapping"])
    # the design's rank is not written: the counts written give it
    identified = state["df_model"] + 1.0 - state["k_extra"]
    state["rank"] = round(identified / state["k"])
    # (absent: a full-rank design, or a file written before it)
    state["_aliasing"] = _aliasing(part.get("aliasing"), int(state["k_vars"]))
    state.update(
        exog=None,
        endog=None,
        _y_inside=None,
        _data_attr=list(_MODEL_DATA_ATTR),
        # require_estimation_data's words for why there are no data
        _without_data="which a JSON export does not hold",
    )
    if part.get("formula") is not None:
        state["formula"] = _text(part["formula"], "formula")
        state["missing_idx"] = None
    return state


def _check_model_numbers(state: dict) -> None:
    """The counts, gamma and side of a loaded model are what a fit writes (a
    file edited by hand can hold anything: k of 0 divided by zero)."""
    for name, minimum in (("k", 1), ("k_vars", 1), ("k_extra", 0), ("nparams", 1)):
        check_int(state[name], name, minimum=minimum)
    for name in ("nobs", "df_model", "df_resid", "gamma"):
        value = state[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a number, got {value!r}")
    if not state["nobs"] >= 0 or not state["gamma"] > 0:  # (NaN fails both)
        raise ValueError(
            f"nobs must be >= 0 and gamma > 0, got {state['nobs']!r} and "
            f"{state['gamma']!r}"
        )
    if state["_inside_code"] not in (0, 1) or isinstance(state["_inside_code"], bool):
        raise ValueError(f"_inside_code must be 0 or 1, got {state['_inside_code']!r}")


def _check_counts(model) -> None:
    """The counts and names of a loaded model agree with each other (a file
    edited by hand may not)."""
    names = list(model.data.xnames)
    if model.nparams != model.k * model.k_vars + model.k_extra:
        raise ValueError(
            f"nparams {model.nparams} is not k * k_vars + k_extra "
            f"({model.k} * {model.k_vars} + {model.k_extra})"
        )
    if len(names) != model.k_vars or len(model.data.param_names) != model.nparams:
        raise ValueError(
            f"{len(names)} column names and {len(model.data.param_names)} "
            f"parameter names for {model.k_vars} columns and {model.nparams} "
            "parameters"
        )
    spec = getattr(model.data, "model_spec", None)
    if spec is not None and list(spec.column_names) != names:
        raise ValueError(
            f"the design's columns {list(spec.column_names)} are not the model's "
            f"{names}"
        )


def _model_data(part: dict):
    """A statsmodels data object holding names only (as after remove_data)."""
    names = part["data"]
    formula = part.get("formula")
    if formula is not None:
        cls = _SharedFormulaData
    else:
        cls = PandasData if names["pandas"] else ModelData
    data = cls.__new__(cls)
    vars(data).update(
        endog=None,
        exog=None,
        orig_endog=None,
        orig_exog=None,
        const_idx=decode(names["const_idx"]),
        k_constant=decode(names["k_constant"]),
        _cache={"ynames": decode(names["ynames"]), "xnames": decode(names["xnames"])},
        _param_names=[str(n) for n in decode(names["param_names"])],
    )
    if formula is not None:
        columns = [_text(c, "columns") for c in part["columns"]]
        check_safe_formula(formula, columns)
        vars(data).update(
            formula=formula,
            missing_row_idx=None,
            frame=None,
            _columns=columns,
            _design_json=part["design"],
        )
        try:
            data.set_design()
        except PatsyError as exc:
            raise ValueError(
                f"the formula's design does not hold together: {exc}"
            ) from exc
    return data


class _SharedFormulaData(PandasData):
    """The names and patsy design of a formula fit loaded from JSON.

    patsy's design cannot be pickled, and statsmodels' own data rebuild it
    from the training frame, which a JSON export does not hold: this one
    pickles the design as the JSON data it was read from and rebuilds it
    from them.
    """

    def set_design(self) -> None:
        spec = design_from_json(self._design_json, self._columns, self.formula)
        # statsmodels 0.15 reads the design as model_spec, 0.14 as design_info
        self.model_spec = spec
        self.design_info = spec

    def __getstate__(self):
        state = dict(vars(self))
        state.pop("model_spec", None)
        state.pop("design_info", None)
        return state

    def __setstate__(self, state):
        vars(self).update(state)
        self.set_design()


def _vector(values, size: int, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.shape != (size,):
        raise ValueError(f"{name} has shape {values.shape}, expected ({size},)")
    return values


def _aliasing(data, n_cols: int) -> Aliasing:
    """A rank-deficient design's :class:`~plumestats._aliasing.Aliasing` from
    its export, its shapes checked (an empty one for ``None``)."""
    if data is None:
        return Aliasing()
    fields = _mapping(decode(data))
    try:
        dependent = tuple(int(j) for j in fields["dependent"])
        unidentified = tuple(int(j) for j in fields["unidentified"])
        basis = np.asarray(fields["null_basis"], dtype=float)
        scale = np.asarray(fields["scale"], dtype=float)
        tolerance = np.asarray(fields["tolerance"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"aliasing is malformed ({exc!r})") from None
    shapes = (basis.shape, scale.shape, tolerance.shape)
    expected = ((n_cols, len(dependent)), (n_cols,), (n_cols, len(dependent)))
    columns = (*dependent, *unidentified)
    if shapes != expected or not all(0 <= j < n_cols for j in columns):
        raise ValueError(
            f"aliasing has shapes {shapes}, expected {expected}, and columns "
            f"{columns} below {n_cols}"
        )
    return Aliasing(dependent, unidentified, basis, scale, tolerance)


def _square(values, size: int, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.shape != (size, size):
        raise ValueError(f"{name} has shape {values.shape}, expected ({size}, {size})")
    return values


def _mapping(value) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping, got {type(value).__name__}")
    return value


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, got {type(value).__name__}")
    return value
