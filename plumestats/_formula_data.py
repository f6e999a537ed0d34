"""What a formula reads from a DataFrame: checks and preparation before patsy.

statsmodels hands the formula and the frame to patsy, whose errors do not name
the column at fault and which cannot read some pandas data. Here, before it:
the left-hand side must be one outcome (:func:`check_formula_outcome`),
pandas' nullable columns become NumPy ones (:func:`numpy_backed`), and NaN or
infinite values that ``missing`` will not drop are named
(:func:`precheck_formula_data`). :mod:`plumestats._newdata` prepares new data
for prediction with the same functions.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from patsy import EvalEnvironment, ModelDesc, PatsyError
from patsy.eval import ast_names

from ._compat import STATSMODELS_EVAL_ENV_MAPPING
from ._dask import is_dask_collection
from ._design_checks import count_not_kept, raise_if_bad, refuse_complex
from ._design_json import formula_data_columns
from ._diagnostics import caller_stacklevel
from ._validation import check_choice

__all__ = [
    "FormulaDataError",
    "announce_transform_drops",
    "captured_namespace",
    "check_design_values",
    "check_formula_outcome",
    "eval_env_for_statsmodels",
    "formula_columns",
    "model_from_formula",
    "numpy_backed",
    "precheck_formula_data",
    "refuse_numbers_as_text",
    "with_columns",
]


class FormulaDataError(ValueError, PatsyError):
    """A formula that cannot be applied to the data: a ``ValueError`` that
    leads with the cause, and patsy's ``PatsyError``, which statsmodels
    raises there, so that ``except PatsyError`` written for ``smf.logit``
    catches it too."""

    def __init__(self, message: str):
        ValueError.__init__(self, message)
        self.message, self.origin = message, None


def check_formula_outcome(formula) -> None:
    """Refuse a formula whose left-hand side is not exactly one term.

    patsy turns ``"y + x1 ~ x2"`` into two outcome columns, which look just like
    the two indicator columns of a string outcome ``"label ~ x2"``; only the
    terms of the left-hand side tell them apart (one term, however many
    columns, is one outcome). A formula without an outcome (``"x1 + x2"``,
    ``"~ x1"``, ``""``) would otherwise reach statsmodels, which unpacks the
    design's column names as endog and exog.
    """
    if not isinstance(formula, str):  # statsmodels itself needs a string
        raise TypeError(
            f"formula must be a string such as 'y ~ x1 + x2', got "
            f"{type(formula).__name__}"
        )
    # a syntax error is a PatsyError, which from_formula words for the user
    terms = [term.name() for term in ModelDesc.from_formula(formula).lhs_termlist]
    if len(terms) == 1:
        return
    if not terms:
        raise ValueError(
            f"the formula {formula!r} has no outcome: write it as "
            "'outcome ~ features', e.g. 'y ~ x1 + x2'"
        )
    raise ValueError(
        "the formula's left-hand side must be one outcome, got "
        f"{len(terms)} terms: {' + '.join(terms)}. Put the features on the right "
        "of '~' (e.g. 'y ~ x1 + x2'); to model a combination of columns as the "
        "outcome, write it as one term, e.g. 'I(a + b) ~ x1'"
    )


def eval_env_for_statsmodels(eval_env, frames_below: int = 1):
    """statsmodels' ``eval_env`` for a ``Model.from_formula`` call made
    ``frames_below`` frames under the function the user called (a dict of
    names is taken with either statsmodels release).

    The user's ``eval_env`` means what ``smf.logit``'s means: the default, ``0``
    and ``1`` are the caller's namespace (statsmodels documents ``0``, but its
    code counts from its own frame, so there ``1`` is the caller and ``0`` an
    internal frame: both spellings give the caller here), ``n >= 2`` is ``n - 1``
    frames further up, ``-1`` an empty namespace, and a patsy
    ``EvalEnvironment`` (or, with statsmodels >= 0.15, a dict) is used as given.
    """
    if eval_env is None:
        eval_env = 0
    if isinstance(eval_env, EvalEnvironment):
        return eval_env
    if isinstance(eval_env, Mapping):
        # statsmodels 0.15 takes a dict; 0.14 hands eval_env to patsy as is
        if STATSMODELS_EVAL_ENV_MAPPING:
            return eval_env
        return EvalEnvironment([dict(eval_env)])
    if isinstance(eval_env, bool) or not isinstance(eval_env, (int, np.integer)):
        raise TypeError(
            "eval_env must be an integer depth (0 or 1: the calling namespace; "
            "-1: an empty one) or a patsy EvalEnvironment, got "
            f"{type(eval_env).__name__}"
        )
    if eval_env == -1:
        # statsmodels 0.15 warns (FutureWarning) on its own EvalEnvironment({})
        return {} if STATSMODELS_EVAL_ENV_MAPPING else -1
    if eval_env < -1:
        raise ValueError(
            f"eval_env must be -1 (an empty namespace), 0 or 1 (the calling "
            f"namespace) or a larger depth, got {eval_env}"
        )
    frames_up = max(int(eval_env) - 1, 0)
    # statsmodels' 1 is the caller of Model.from_formula
    return frames_up + frames_below + 1


def captured_namespace(formula: str, data, eval_env=0):
    """The names a formula reads from outside ``data``, captured now from the
    namespace ``eval_env`` names for the caller of the function that calls
    this one, as an ``eval_env`` for ``from_formula`` that can travel to
    another process (a dict).

    Only the names the formula uses are kept (``np``, a threshold, a function
    of the caller's), not the caller's whole namespace.
    """
    resolved = eval_env_for_statsmodels(eval_env, frames_below=2)
    if isinstance(resolved, EvalEnvironment):
        namespace = resolved.namespace
    elif isinstance(resolved, Mapping):
        namespace = resolved
    elif resolved == -1:
        namespace = {}
    else:
        # statsmodels counts from Model.from_formula (its 1 is that one's
        # caller), capture() from here: one frame fewer
        namespace = EvalEnvironment.capture(resolved - 1).namespace
    columns = set(map(str, getattr(data, "columns", getattr(data, "keys", list)())))
    names = {
        name
        for term in ModelDesc.from_formula(formula).lhs_termlist
        + ModelDesc.from_formula(formula).rhs_termlist
        for factor in term.factors
        for name in ast_names(factor.code)
        if name not in columns
    }
    # a plain dict: it can travel to a worker (patsy refuses to pickle its
    # EvalEnvironment), and from_formula takes it with either statsmodels
    return {name: namespace[name] for name in names if name in namespace}


def formula_columns(formula: str, columns) -> list:
    """The columns of ``columns`` that ``formula`` reads: the names of its
    factors' code and ``Q("...")``'s, as patsy parses them (a name inside a
    string, ``Treatment('a')``, is no column). A formula patsy cannot parse
    falls back to the names as whole words of its text (``x1`` is not
    ``x10``); patsy's own error then follows."""
    try:
        named = set(formula_data_columns(formula, columns))
    except (PatsyError, SyntaxError, ValueError):
        return [
            c
            for c in columns
            if re.search(rf"(?<![\w.]){re.escape(str(c))}(?![\w.])", formula)
        ]
    return [c for c in columns if str(c) in named]


def precheck_formula_data(formula: str, data, missing: str) -> None:
    """NaN or infinite values in the columns a formula uses, named, before patsy's
    own error ('factor contains missing values') which does not name them."""
    if not isinstance(data, pd.DataFrame):
        return
    used = formula_columns(formula, data.columns)
    refuse_complex(data[used], "the data")
    numeric = [c for c in used if pd.api.types.is_numeric_dtype(data[c].dtype)]
    counts = {}
    if missing != "drop":
        text = [c for c in used if c not in numeric]
        counts = {c: (int(data[c].isna().sum()), 0) for c in text}
    n_nan, n_inf = count_not_kept(data[numeric], missing)
    counts.update({c: (n_nan[j], n_inf[j]) for j, c in enumerate(numeric)})
    raise_if_bad("the data", counts)
    if missing == "drop" and used and data[used].isna().any(axis=1).all():
        empty = [c for c in used if data[c].isna().all()]
        which = f" ({', '.join(map(repr, empty))} has no value)" if empty else ""
        raise ValueError(
            f"no observations are left after missing='drop': every row has a "
            f"missing value in a column the formula uses{which}"
        )


def numpy_backed(frame: pd.DataFrame, columns=None) -> pd.DataFrame:
    """``frame`` with pandas' nullable columns among ``columns`` (default: all)
    converted to NumPy ones, ``pd.NA`` becoming NaN.

    patsy tests ``pd.NA`` for truth (``TypeError: boolean value of NA is
    ambiguous``) and does not know the ``boolean`` dtype. Nullable numbers
    become float64 when they hold a missing value (as a NumPy integer column
    with NaN would) and keep their NumPy type otherwise, so that ``C(code)``
    has the same levels either way; booleans and strings with a missing value
    become object columns with NaN, which patsy treats as missing.
    """
    converted = {}
    for column in frame.columns if columns is None else columns:
        values = frame[column]
        dtype = values.dtype
        if not isinstance(dtype, pd.api.extensions.ExtensionDtype) or isinstance(
            dtype, pd.CategoricalDtype
        ):
            continue
        missing = values.isna()
        if getattr(dtype, "na_value", None) is not pd.NA:
            continue  # e.g. pandas' default "str" dtype, missing as NaN: patsy's fine
        if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            if missing.any():
                converted[column] = values.astype(object).where(~missing, np.nan)
            else:
                # pandas' StringDtype has no numpy_dtype: its strings are objects
                target = getattr(dtype, "numpy_dtype", np.dtype(object))
                converted[column] = values.to_numpy(dtype=target)
        elif pd.api.types.is_numeric_dtype(dtype):
            if missing.any():
                converted[column] = values.to_numpy(dtype=float, na_value=np.nan)
            else:
                target = getattr(dtype, "numpy_dtype", np.dtype(float))
                converted[column] = values.to_numpy(dtype=target)
    return with_columns(frame, converted)


def with_columns(frame: pd.DataFrame, columns: dict) -> pd.DataFrame:
    """``frame`` (not changed) with ``columns`` replaced (its labels need not
    be strings, as ``assign``'s keywords must)."""
    if not columns:
        return frame
    frame = frame.copy(deep=False)
    for column, values in columns.items():
        frame[column] = values
    return frame


def refuse_numbers_as_text(formula: str, data) -> None:
    """Refuse a column of numbers stored as text that the formula uses as a
    number: patsy makes it a factor with one level per distinct value (a
    400-level factor from 400 rows), and the error that followed spoke of
    parameters, never of text. A column inside ``C(...)`` is meant as a
    factor, and one an expression converts itself
    (``I(zip.str.startswith('0'))``, ``I(pd.to_numeric(bp, errors='coerce'))``)
    is the expression's business: both are left alone
    (:func:`_columns_read_as_they_are`), as is a column of few distinct
    values (text codes)."""
    if not isinstance(data, pd.DataFrame):
        return
    for column in _columns_read_as_they_are(formula, data.columns):
        values = data[column]
        if values.dtype.kind in "mM" or isinstance(values.dtype, pd.PeriodDtype):
            _refuse_many_dates(column, values)
            continue
        if pd.api.types.is_numeric_dtype(values.dtype) or isinstance(
            values.dtype, pd.CategoricalDtype
        ):
            continue
        present = values.dropna()
        numbers = pd.to_numeric(present, errors="coerce")
        if len(present) and numbers.notna().all() and _many_levels(present):
            raise ValueError(
                f"column {column!r} holds numbers stored as text (e.g. "
                f"{present.iloc[0]!r}), which the formula would make a factor "
                f"with {present.nunique()} levels; convert it first, "
                f"data[{column!r}] = pd.to_numeric(data[{column!r}]), or write "
                f"{_as_factor(column)} if it really is a category"
            )
        _refuse_stray_text(column, present, numbers)


def _many_levels(present: pd.Series) -> bool:
    """Whether a factor of these values would have too many levels to be
    meant as one: more than 20, and more than half the rows (text codes and
    a few dates have few)."""
    return present.nunique() > max(20, len(present) / 2)


def _refuse_many_dates(column, values) -> None:
    """Refuse a column of dates or durations that patsy would make a factor
    of many levels (one per distinct date, as numbers stored as text); a few
    distinct dates are a factor, as ``C(column)`` would make them."""
    present = values.dropna()
    if _many_levels(present):
        raise ValueError(
            f"column {column!r} holds dates or durations ({values.dtype}), which "
            f"the formula would make a factor with {present.nunique()} levels; "
            "convert it "
            f"to numbers first, e.g. data[{column!r}].dt.days for durations or "
            f"days since a date, or write {_as_factor(column)} if it really is "
            "a category"
        )


def _columns_read_as_they_are(formula: str, columns) -> list:
    """The columns of ``columns`` that ``formula`` reads as they are, where
    patsy would take their text for a factor: by name or ``Q("name")``,
    alone or inside an expression (``I(t)``, ``np.log(t)``); not inside
    ``C(...)`` (a factor, meant so), as the object of an attribute
    (``zip.str.startswith('0')``, ``t.astype(float)``) or inside
    ``pd.to_numeric(...)``, which convert the text themselves. All the
    columns it reads when patsy or Python cannot parse a term."""
    try:
        description = ModelDesc.from_formula(formula)
    except (PatsyError, SyntaxError, ValueError):
        return formula_columns(formula, columns)
    by_name = {str(column): column for column in columns}
    found: set = set()
    for term in description.lhs_termlist + description.rhs_termlist:
        for factor in term.factors:
            try:
                tree = ast.parse(factor.code.strip(), mode="eval")
            except SyntaxError:
                found.update(formula_columns(factor.code, columns))
                continue
            _read_as_they_are(tree.body, False, by_name, found)
    return [column for column in columns if column in found]


def _read_as_they_are(node, converted: bool, by_name: dict, found: set) -> None:
    """Add to ``found`` the columns ``node`` reads unconverted."""
    name = _column_named(node)
    if name is not None:
        if name in by_name and not converted:
            found.add(by_name[name])
        return
    if isinstance(node, ast.Attribute):
        _read_as_they_are(node.value, True, by_name, found)
        return
    if isinstance(node, ast.Call):
        called = ast.unparse(node.func)
        converts = called == "C" or called.rsplit(".", 1)[-1] == "to_numeric"
        _read_as_they_are(node.func, converted, by_name, found)
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            _read_as_they_are(argument, converted or converts, by_name, found)
        return
    for child in ast.iter_child_nodes(node):
        _read_as_they_are(child, converted, by_name, found)


def _column_named(node) -> str | None:
    """The column ``node`` names: ``x``, or ``Q("x")``."""
    if isinstance(node, ast.Name):
        return node.id
    quoted = (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Q"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )
    return node.args[0].value if quoted else None


def _as_factor(column) -> str:
    """How a formula names ``column`` as a factor."""
    column = str(column)
    return f"C({column})" if column.isidentifier() else f"C(Q({column!r}))"


def _refuse_stray_text(column, present: pd.Series, numbers: pd.Series) -> None:
    """Refuse a column of numbers with a few text tokens among them (a "?"
    for a missing value, as in UCI files): read as text, the formula would
    make it a factor with a level per number, silently. Codes (few
    distinct numbers) are left alone: they may well be a category."""
    odd = present[numbers.isna()]
    if odd.empty or len(odd) > 0.1 * len(present):
        return
    tokens = odd.astype(str).unique()
    if len(tokens) > 3 or numbers.nunique() <= 10:
        return
    listed = ", ".join(repr(token) for token in tokens)
    raise ValueError(
        f"column {column!r} holds numbers with {len(odd)} text value(s) among "
        f"them ({listed}; the first at index {odd.index[0]!r}), which would make the "
        "formula read the whole column as a factor; mark them missing, e.g. "
        f"pd.read_csv(..., na_values=[{tokens[0]!r}]) or data[{column!r}] = "
        f"pd.to_numeric(data[{column!r}], errors='coerce'); or write "
        f"{_as_factor(column)} if it really is a category"
    )


def check_design_values(exog, missing: str) -> None:
    """Infinite values in a formula's design, named by its column (the term):
    patsy's ``missing='drop'`` drops NaN rows only, and statsmodels' own error,
    "exog contains inf or nans", names no column."""
    if not isinstance(exog, pd.DataFrame):
        return
    values = exog.to_numpy(dtype=float, copy=False)
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    counts = bad.sum(axis=0)
    listed = ", ".join(
        f"{name!r} ({count} rows)"
        for name, count in zip(exog.columns, counts, strict=True)
        if count
    )
    raise ValueError(
        f"the formula's terms give non-finite values in {listed} (e.g. a "
        "division by zero, or np.log of 0); missing='drop' drops rows with "
        "missing values in the data, not these: change the term, or drop those "
        "rows from the data first"
    )


def announce_transform_drops(model, data, formula: str) -> None:
    """A ``ValueWarning`` counting the rows that ``missing='drop'`` dropped
    although their data were complete: a transform made them NaN (``np.log``
    of a negative value). Rows dropped for missing values in the data are
    counted beside them."""
    from statsmodels.tools.sm_exceptions import ValueWarning

    if not isinstance(data, pd.DataFrame):
        return
    used = formula_columns(formula, data.columns)
    incomplete = int(data[used].isna().any(axis=1).sum()) if used else 0
    n_rows = int(model.exog.shape[0])  # nobs counts frequency weights
    transformed = len(data) - n_rows - incomplete
    if transformed <= 0:
        return
    also = (
        f", besides {incomplete} with missing values in the data" if incomplete else ""
    )
    warnings.warn(
        f"The formula's transforms gave missing values (NaN) on {transformed} rows "
        f"whose data are complete (e.g. np.log of a value <= 0), and "
        f"missing='drop' dropped them{also}: {n_rows} of {len(data)} rows are "
        "used. Check the transforms, or pass missing='raise' to stop at such rows.",
        ValueWarning,
        stacklevel=caller_stacklevel(),
    )


def _formula_data(data):
    """The data a formula reads: a DataFrame, or a dict of columns as one
    (statsmodels' own formulas took dicts; 0.15 deprecates them there)."""
    if isinstance(data, Mapping):
        try:
            return pd.DataFrame(data)
        except ValueError as exc:  # columns of different lengths, scalars only
            raise ValueError(
                f"data, a dict of columns, is no table: {exc}; give every "
                "column one value per observation"
            ) from exc
    unnamed = isinstance(data, np.ndarray) and data.dtype.names is None
    if data is None or unnamed or isinstance(data, (list, tuple)):
        # (patsy reads anything indexed by name: a record array too)
        raise TypeError(
            "data must be a DataFrame (or a dict of columns) holding the "
            f"formula's variables, got {type(data).__name__}"
        )
    return data


def _columns_of(data) -> list:
    """The names of a frame's (or a record array's) columns."""
    columns = getattr(data, "columns", None)
    if columns is None:
        columns = getattr(getattr(data, "dtype", None), "names", None) or ()
    return list(columns)


def _reads_intercept_column(formula: str) -> bool:
    """Whether a term of the formula is a variable named ``Intercept``, whose
    column's name would clash with the constant term's (patsy then fails
    with "mismatch between column_names and columns coded")."""
    try:
        terms = ModelDesc.from_formula(formula).rhs_termlist
    except (PatsyError, SyntaxError, ValueError):
        return False  # patsy's own error follows
    names = [[f.name() for f in term.factors] for term in terms]
    # (the constant term is the one without factors)
    return [] in names and ["Intercept"] in names


def model_from_formula(build, formula, data, subset, drop_cols, *args, **kwargs):
    """:meth:`PolyhedralMixtureLogit.from_formula`: the checks before patsy
    and after it, around ``build``, statsmodels' ``from_formula`` of the
    model class."""
    kwargs["eval_env"] = eval_env_for_statsmodels(
        kwargs.get("eval_env"), frames_below=2
    )
    missing = kwargs.get("missing", "drop")
    check_choice(missing, "missing", ("none", "drop", "raise"))
    if is_dask_collection(data):
        raise TypeError(
            "formulas need an in-memory DataFrame (patsy); for a Dask "
            "DataFrame build the design with Dask operations and pass "
            "PolyhedralMixtureLogit(ddf['y'], ddf[columns].assign(Intercept=1.0)"
            ", k=...): see the user guide's page on large data"
        )
    data = _formula_data(data)
    if subset is not None and isinstance(data, pd.DataFrame):
        # statsmodels' from_formula keeps these rows first: the checks below
        # look at the rows the model uses, not at the excluded ones
        data, subset = data.loc[subset], None
    if len(data) == 0:
        raise ValueError("there are no observations: the data frame is empty")
    try:
        check_formula_outcome(formula)
        if _reads_intercept_column(formula) and "Intercept" in _columns_of(data):
            raise ValueError(
                "the formula reads a column named 'Intercept', the name patsy "
                "gives the constant term; rename the column, e.g. "
                "data.rename(columns={'Intercept': 'intercept_column'})"
            )
        if isinstance(data, pd.DataFrame):
            # patsy cannot read pd.NA or the "boolean" dtype
            data = numpy_backed(data, formula_columns(formula, data.columns))
        precheck_formula_data(formula, data, missing)
        refuse_numbers_as_text(formula, data)
        # a transform's NaN (np.log of a negative) is announced below, with
        # its count, instead of numpy's RuntimeWarning
        with np.errstate(divide="ignore", invalid="ignore"):
            model = build(formula, data, subset, drop_cols, *args, **kwargs)
    except PatsyError as exc:
        hint = ""
        if "NameError" in str(exc):
            hint = (
                "\nA name that is not a column of the data is looked up where "
                "the formula was given (eval_env): define it there, or add it "
                "as a column."
            )
        raise FormulaDataError(
            f"could not build the design from the formula {formula!r}: {exc}{hint}"
        ) from exc
    if missing == "drop":
        used = data if subset is None else data.loc[subset]
        announce_transform_drops(model, used, formula)
    return model
