"""Issue 4: every way the input can be wrong ends in a specific, helpful error or a
statsmodels warning — never a bare numpy/scipy/patsy traceback, never NaN
parameters reported as a success.

Each test states what a user *should* get. The expected messages are matched on a
fragment that names the problem (the argument, the column, the count of bad rows)
rather than on a full sentence, so the wording stays free. The table of cases, with
the status of each, is docs/errors.md.
"""

from __future__ import annotations

import functools
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import unwrapped
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    HessianInversionWarning,
    MissingDataError,
    ModelWarning,
    PerfectSeparationWarning,
)

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit

FORMULA = "y ~ x1 + x2"


# --------------------------------------------------------------------- helpers
@functools.cache
def _simulated(nobs: int, k: int, seed: int, noise: float) -> pd.DataFrame:
    data, _ = ps.simulate_polyhedron(nobs, d=2, k=k, noise=noise, random_state=seed)
    return data


def simulated(nobs=200, k=2, seed=0, noise=0.1) -> pd.DataFrame:
    """A small simulated polyhedron problem (a fresh copy, safe to modify)."""
    return _simulated(nobs, k, seed, noise).copy()


def design(data: pd.DataFrame) -> np.ndarray:
    """Array-interface design: a constant and x1, x2 (named const, x1, x2)."""
    return np.column_stack([np.ones(len(data)), data[["x1", "x2"]].to_numpy()])


def names_column_and_count(column: str, count: int) -> str:
    """A pattern for a message that names a column and a count, in either order."""
    col, num = rf"\b{re.escape(column)}\b", rf"\b{count}\b"
    return rf"(?s)({col}.*{num}|{num}.*{col})"


def assert_refused_or_warned(build_and_fit, *names: str) -> None:
    """A ValueError, or a statsmodels ModelWarning, whose message names every one of
    ``names`` (issue 4 allows either for a rank-deficient design); when the fit goes
    ahead with a warning it must not report NaN parameters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = build_and_fit()
        except ValueError as exc:
            messages, res = [str(exc)], None
        else:
            messages = [
                str(w.message) for w in caught if issubclass(w.category, ModelWarning)
            ]
    found = [
        m for m in messages if all(re.search(rf"\b{re.escape(n)}\b", m) for n in names)
    ]
    assert found, (
        f"expected a ValueError or a statsmodels warning naming {names}; got "
        f"{[f'{w.category.__name__}: {str(w.message)[:120]}' for w in caught]}"
    )
    if res is not None:
        assert np.all(np.isfinite(np.asarray(res.params)))


@pytest.fixture(scope="module")
def fitted_with_factor():
    """A fit with a categorical factor, for the prediction tests."""
    data = simulated(300, seed=1)
    data["g"] = np.array(["a", "b", "c"])[np.arange(len(data)) % 3]
    res = ps.plume("y ~ x1 + x2 + C(g)", data, k=2).fit()
    return data, res


# ===================================================================== outcome
@pytest.mark.parametrize("interface", ["formula", "array"])
@pytest.mark.parametrize("kind", ["numeric", "strings"])
def test_outcome_with_three_levels_is_refused(interface, kind):
    data = simulated()
    levels = np.arange(len(data)) % 3
    data["y"] = levels if kind == "numeric" else np.array(["a", "b", "c"])[levels]
    with pytest.raises(ValueError, match=r"(?s)\b3\b.*level|level.*\b3\b"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2)
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2)


@pytest.mark.parametrize("interface", ["formula", "array"])
@pytest.mark.parametrize("value", [1, 0, "yes"])
def test_outcome_with_one_level_is_refused(interface, value):
    data = simulated().assign(y=value)
    with pytest.raises(ValueError, match=r"(?s)\b1\b.*level|level.*\b1\b|one level"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2)
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2)


CODINGS = {
    # name: (recode 0/1 -> coding, label of the class coded 1 in the summary)
    "minus_one_plus_one": (lambda y: 2 * y - 1, "1"),
    "strings_no_yes": (lambda y: np.where(y == 1, "yes", "no"), "yes"),
    "booleans": (lambda y: y == 1, "True"),
    # text that reads like booleans was taken for patsy's names of a boolean
    # outcome by the array interface: 400 "missing values"
    "strings_true_false": (lambda y: np.where(y == 1, "True", "False"), "True"),
    "categorical": (
        lambda y: pd.Categorical(
            np.where(y == 1, "yes", "no"), categories=["no", "yes"]
        ),
        "yes",
    ),
}


@pytest.fixture(scope="module")
def reference_fit():
    data = simulated(300, seed=2)
    return data, ps.plume(FORMULA, data, k=2).fit()


@pytest.mark.parametrize("coding", list(CODINGS))
def test_two_level_outcome_codings_are_accepted_by_formula(coding, reference_fit):
    """Strings, booleans, categoricals and -1/+1 map to 0/1 (the second level is the
    inside class), give the 0/1 fit, and the summary shows the inside label."""
    data, reference = reference_fit
    recode, label = CODINGS[coding]
    recoded = data.assign(y=recode(data["y"].to_numpy()))
    res = ps.plume(FORMULA, recoded, k=2).fit()
    np.testing.assert_allclose(res.params, reference.params, rtol=1e-8, atol=1e-10)
    assert res.llf == pytest.approx(reference.llf, rel=1e-10)
    np.testing.assert_allclose(res.predict(recoded), reference.predict(data))
    assert re.search(rf"Inside class:\s+{re.escape(label)}\b", unwrapped(res.summary()))


@pytest.mark.parametrize("coding", list(CODINGS))
def test_two_level_outcome_codings_are_accepted_by_arrays(coding, reference_fit):
    data, _ = reference_fit
    exog = design(data)
    reference = PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
    recode, label = CODINGS[coding]
    endog = pd.Series(recode(data["y"].to_numpy()), name="y")
    res = PolyhedralMixtureLogit(endog, exog, k=2).fit()
    np.testing.assert_allclose(res.params, reference.params, rtol=1e-8, atol=1e-10)
    assert re.search(rf"Inside class:\s+{re.escape(label)}\b", unwrapped(res.summary()))


def test_categorical_outcome_follows_its_declared_order_on_every_path(reference_fit):
    """Categories ["yes", "no"] code "no" as 1 whether the categorical is passed
    bare, in a Series or through a formula (a bare one was coded by sorted
    labels, so the inside class depended on the wrapping)."""
    data, _ = reference_fit
    labels = pd.Categorical(
        np.where(data["y"] == 1, "yes", "no"), categories=["yes", "no"]
    )
    exog = data[["x1", "x2"]].assign(Intercept=1.0)[["Intercept", "x1", "x2"]]
    options = {"k": 2, "inside": 0}  # the simulated polyhedron holds "yes"
    models = {
        "bare": PolyhedralMixtureLogit(labels, exog, **options),
        "index": PolyhedralMixtureLogit(pd.CategoricalIndex(labels), exog, **options),
        "series": PolyhedralMixtureLogit(pd.Series(labels, name="y"), exog, **options),
        "formula": ps.plume(FORMULA, data.assign(y=labels), **options),
    }
    fits = {name: model.fit() for name, model in models.items()}
    for name, model in models.items():
        assert model.outcome_mapping == {"yes": 0, "no": 1}, name
        np.testing.assert_array_equal(model.endog, 1.0 - data["y"].to_numpy())
        np.testing.assert_allclose(
            fits[name].params, fits["formula"].params, rtol=1e-8, atol=1e-10
        )


def test_text_true_false_outcome_as_a_bare_array(reference_fit):
    data, _ = reference_fit
    endog = np.where(data["y"] == 1, "True", "False")
    model = PolyhedralMixtureLogit(endog, design(data), k=2)
    assert model.outcome_mapping == {"False": 0, "True": 1}
    np.testing.assert_array_equal(model.endog, data["y"].to_numpy())


def test_inside_accepts_a_string_label(reference_fit):
    data, _ = reference_fit
    recoded = data.assign(y=np.where(data["y"] == 1, "yes", "no"))
    by_label = ps.plume(FORMULA, recoded, k=2, inside="no")
    assert by_label._inside_code == 0
    with pytest.raises(ValueError, match=r"inside must be one of.*'no'.*'yes'"):
        ps.plume(FORMULA, recoded, k=2, inside="maybe")
    # the array interface too (it resolved the label against the 0/1 codes)
    endog, exog = recoded["y"], design(data)
    assert PolyhedralMixtureLogit(endog, exog, k=2, inside="no")._inside_code == 0
    assert PolyhedralMixtureLogit(endog, exog, k=2, inside="yes")._inside_code == 1
    with pytest.raises(ValueError, match=r"inside must be one of.*'no'.*'yes'"):
        PolyhedralMixtureLogit(endog, exog, k=2, inside="maybe")


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_nan_in_outcome_with_missing_none_is_an_error(interface):
    data = simulated().astype({"y": float})
    data.loc[5, "y"] = np.nan
    with pytest.raises(ValueError, match=r"(?s)\b1 missing value.*missing='drop'"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, missing="none")
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2, missing="none")


def test_nan_in_outcome_is_dropped_by_the_formula_default():
    data = simulated().astype({"y": float})
    data.loc[[5, 9], "y"] = np.nan
    res = ps.plume(FORMULA, data, k=2).fit()  # statsmodels: formulas drop by default
    assert res.nobs == len(data) - 2
    clean = ps.plume(FORMULA, data.dropna(), k=2).fit()
    assert res.llf == pytest.approx(clean.llf, rel=1e-12)


def test_outcome_left_with_one_class_after_dropping_rows():
    """missing='drop' removed every row of one class: say so, not just 'one level'."""
    data = simulated()
    data.loc[data["y"] == 0, "x1"] = np.nan
    with pytest.raises(ValueError, match=r"(?is)level.*drop|drop.*level"):
        ps.plume(FORMULA, data, k=2, missing="drop")


def test_outcome_error_mentions_dropping_only_when_rows_were_dropped():
    data = simulated()
    data["x3"] = np.arange(len(data)) % 3
    with pytest.raises(ValueError, match=r"two levels, found 3") as caught:
        ps.plume("x3 ~ x1 + x2", data, k=2)  # the formula default, missing="drop"
    assert "missing='drop'" not in str(caught.value)
    data.loc[[0, 1], "x1"] = np.nan
    with pytest.raises(ValueError, match=r"missing='drop' removed 2 rows"):
        ps.plume("x3 ~ x1 + x2", data, k=2)


def test_outcome_with_two_columns_is_refused():
    """A slip such as endog=data[["y", "x1"]] must not be decoded silently."""
    data = simulated()
    with pytest.raises(ValueError, match=r"one column"):
        PolyhedralMixtureLogit(data[["y", "x1"]], design(data), k=2)
    with pytest.raises(ValueError, match=r"one column"):
        PolyhedralMixtureLogit(data[["y", "x1"]].to_numpy(), design(data), k=2)


@pytest.mark.parametrize(
    "formula", ["y + x1 ~ x2", "y + z ~ x2", "label + y ~ x2", "1 + y ~ x2"]
)
def test_formula_with_several_outcome_terms_is_refused(formula):
    """patsy gives "y + x1" two columns, as it gives a string outcome's two
    indicator columns; it must not be decoded as an outcome with levels y, x1."""
    data = simulated()
    data["z"] = 1 - data["y"]
    data["label"] = np.where(data["y"] == 1, "yes", "no")
    with pytest.raises(ValueError, match=r"left-hand side must be one outcome"):
        ps.plume(formula, data, k=2)


@pytest.mark.parametrize("formula", ["", "x1 + x2", "~ x1 + x2"])
def test_formula_without_an_outcome_is_refused(formula):
    with pytest.raises(ValueError, match=r"has no outcome.*'y ~ x1 \+ x2'"):
        ps.plume(formula, simulated(), k=2)


@pytest.mark.parametrize("outcome", ["label", "C(label)", "flag"])
def test_one_non_numeric_outcome_term_still_decodes(outcome, reference_fit):
    """One term with two indicator columns (strings, C(), booleans) is one outcome."""
    data, reference = reference_fit
    recoded = data.assign(
        label=np.where(data["y"] == 1, "yes", "no"), flag=data["y"] == 1
    )
    res = ps.plume(f"{outcome} ~ x1 + x2", recoded, k=2).fit()
    assert list(res.model.outcome_mapping.values()) == [0, 1]
    assert res.llf == pytest.approx(reference.llf, rel=1e-10)


# ==================================================================== features
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("interface", ["formula", "array"])
def test_bad_feature_values_with_missing_none_name_column_and_count(bad, interface):
    data = simulated()
    data.loc[[3, 7], "x1"] = bad
    with pytest.raises(ValueError, match=names_column_and_count("x1", 2)):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, missing="none").fit()
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2).fit()


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_infinite_values_are_not_called_missing(interface):
    """With missing='none' an inf was counted as a "missing value" and the fix
    offered was missing='drop', which then refused it: each kind is named, with
    its own fix."""
    data = simulated()
    data.loc[[1, 2], "x1"] = np.nan
    data.loc[3, "x2"] = np.inf
    with pytest.raises(ValueError) as caught:
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, missing="none")
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2)
    message = str(caught.value)
    assert "'x1' (2 missing values)" in message
    assert "'x2' (1 infinite value)" in message
    assert re.search(r"infinite values yourself", message)
    data.loc[[1, 2], "x1"] = 0.0
    with pytest.raises(ValueError) as caught:
        PolyhedralMixtureLogit(data["y"], design(data), k=2)
    assert "missing" not in str(caught.value).split(";")[0]
    assert "pass missing='drop'" not in str(caught.value)


@pytest.mark.parametrize("bad", [np.inf, -np.inf], ids=["inf", "-inf"])
def test_inf_in_features_is_not_missing_under_drop(bad):
    """statsmodels drops NaN only; an infinite feature is an error naming it."""
    data = simulated()
    data.loc[[3, 7], "x1"] = bad
    with pytest.raises(ValueError, match=names_column_and_count("x1", 2)):
        ps.plume(FORMULA, data, k=2, missing="drop").fit()


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_missing_drop_drops_rows(interface):
    data = simulated().astype({"y": float})
    data.loc[[3, 7], "x1"] = np.nan
    data.loc[11, "y"] = np.nan
    if interface == "formula":
        model = ps.plume(FORMULA, data, k=2, missing="drop")
    else:
        model = PolyhedralMixtureLogit(data["y"], design(data), k=2, missing="drop")
    res = model.fit()
    assert res.nobs == len(data) - 3
    assert model.endog.shape == (len(data) - 3,)
    clean = ps.plume(FORMULA, data.dropna(), k=2).fit()
    assert res.llf == pytest.approx(clean.llf, rel=1e-10)


NULLABLE = {
    # column: (nullable dtype, how to make the column that dtype)
    "Float64": ("x1", lambda col: col.astype("Float64")),
    "Int64": ("x1", lambda col: col.astype("Int64")),  # x1 rounded below
    "boolean outcome": ("y", lambda col: (col == 1).astype("boolean")),
    "string factor": ("g", lambda col: col.astype("string")),
}


@pytest.mark.parametrize(
    ("case", "interface"),
    [
        (case, interface)
        for case in NULLABLE
        for interface in ("formula", "array")
        # the array interface takes numeric features only
        if not (case == "string factor" and interface == "array")
    ],
)
def test_pandas_nullable_columns_with_missing_values(case, interface):
    """pd.NA in a nullable column is a missing value: missing='drop' drops its
    row, as NaN in a NumPy column (patsy raised 'boolean value of NA is
    ambiguous', or "Cannot interpret 'BooleanDtype'" for a boolean outcome)."""
    column, make = NULLABLE[case]
    data = simulated()
    data["g"] = np.array(["a", "b", "c"])[np.arange(len(data)) % 3]
    formula = FORMULA + " + C(g)"
    if column == "x1" and case == "Int64":
        data["x1"] = (data["x1"] * 10).round()
    plain = data.copy()
    data[column] = make(data[column])
    data.loc[4, column] = pd.NA
    plain.loc[4, column] = np.nan
    if interface == "formula":
        res = ps.plume(formula, data, k=2).fit()
        clean = ps.plume(formula, plain.dropna(), k=2).fit()
    else:
        exog = data[["x1", "x2"]].assign(const=1.0)
        res = PolyhedralMixtureLogit(data["y"], exog, k=2, missing="drop").fit()
        clean = PolyhedralMixtureLogit(
            plain.dropna()["y"].astype(float),
            plain.dropna()[["x1", "x2"]].assign(const=1.0),
            k=2,
        ).fit()
    assert res.nobs == len(data) - 1
    assert res.llf == pytest.approx(clean.llf, rel=1e-10)
    if interface == "array" and column != "y":
        new, plain_new = exog.iloc[:6], plain[["x1", "x2"]].assign(const=1.0)
        got = np.asarray(res.predict(new), dtype=float)
        assert np.isnan(got[4])
        expected = np.asarray(res.predict(plain_new.iloc[:6].drop(index=4)))
        np.testing.assert_allclose(np.delete(got, 4), expected)
        # rows of the design itself: the incomplete one kept as NaN, as Logit
        np.testing.assert_allclose(res.get_prediction(new).predicted, got)
    if interface == "formula" and column != "y":
        # predicting at nullable rows: NaN for the incomplete row (predict),
        # dropped (get_prediction), the others as for NumPy columns
        new = data.iloc[:6]
        got = np.asarray(res.predict(new), dtype=float)
        assert np.isnan(got[4])
        expected = np.asarray(res.predict(plain.iloc[:6].drop(index=4)))
        np.testing.assert_allclose(np.delete(got, 4), expected)
        np.testing.assert_allclose(res.get_prediction(new).predicted, expected)


@pytest.mark.parametrize("case", list(NULLABLE))
def test_pandas_nullable_columns_without_missing_values(case):
    """A complete nullable column fits and predicts as its NumPy twin (a complete
    "string" column raised AttributeError: StringDtype has no numpy_dtype)."""
    column, make = NULLABLE[case]
    plain = simulated()
    plain["g"] = np.array(["a", "b", "c"])[np.arange(len(plain)) % 3]
    if case == "Int64":
        plain["x1"] = (plain["x1"] * 10).round()
    data = plain.copy()
    data[column] = make(data[column])
    formula = FORMULA + " + C(g)"
    res = ps.plume(formula, data, k=2).fit()
    twin = ps.plume(formula, plain, k=2).fit()
    assert res.llf == pytest.approx(twin.llf, rel=1e-10)
    np.testing.assert_allclose(res.predict(data.iloc[:5]), twin.predict(plain.iloc[:5]))


@pytest.mark.parametrize("interface", ["formula", "array"])
@pytest.mark.parametrize("column", ["x1", "y"])
def test_missing_raise_raises_naming_the_column(interface, column):
    data = simulated().astype({"y": float})
    data.loc[[3, 7], column] = np.nan
    # statsmodels' own class for missing='raise' is accepted, with a message that
    # names the column (for an array outcome: endog or its name y)
    pattern = r"\bx1\b" if column == "x1" else r"\b(y|endog)\b"
    with pytest.raises((MissingDataError, ValueError), match=pattern):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, missing="raise")
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2, missing="raise")


@pytest.mark.parametrize(
    "column, value", [("batch", 3.0), ("zero_col", 0.0)], ids=["constant", "zeros"]
)
def test_constant_column_besides_the_intercept(column, value):
    data = simulated().assign(**{column: value})
    assert_refused_or_warned(
        lambda: ps.plume(f"{FORMULA} + {column}", data, k=2).fit(), column
    )


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_duplicated_column(interface):
    data = simulated().assign(x3=lambda d: d["x1"])

    def build_and_fit():
        if interface == "formula":
            return ps.plume(f"{FORMULA} + x3", data, k=2).fit()
        exog = pd.DataFrame(design(data), columns=["const", "x1", "x2"])
        return PolyhedralMixtureLogit(data["y"], exog.assign(x3=data["x1"]), k=2).fit()

    assert_refused_or_warned(build_and_fit, "x1", "x3")


def test_collinear_columns():
    data = simulated().assign(x3=lambda d: d["x1"] + 2 * d["x2"])
    assert_refused_or_warned(
        lambda: ps.plume(f"{FORMULA} + x3", data, k=2).fit(), "x1", "x2", "x3"
    )


def test_more_parameters_than_observations_suggests_a_smaller_k():
    data = simulated(200, seed=3)
    small = pd.concat([data[data.y == 0].head(5), data[data.y == 1].head(5)])
    model = ps.plume(FORMULA, small, k=5)  # 15 parameters, 10 observations
    with pytest.raises(ValueError, match=r"smaller k.*L2 penalty") as info:
        model.fit()
    assert re.search(r"\b15\b", str(info.value)) and re.search(
        r"\b10\b", str(info.value)
    )
    with pytest.raises(ValueError, match=r"5 \* 3 \+ 1 = 16 parameters.*L2"):
        ps.plume_flip(FORMULA, small, k=5).fit()
    # k * p = n, but the flip rate is one parameter more
    with pytest.raises(ValueError, match=r"2 \* 3 \+ 1 = 7 parameters but only 6"):
        ps.plume_flip(FORMULA, small.iloc[2:8], k=2).fit()


def test_a_penalty_fits_more_parameters_than_observations():
    # a ridge fit of a wide design is identified; it used to be refused at
    # construction, whatever the penalty
    data, _ = ps.simulate_polyhedron(100, d=50, k=2, noise=0.0, random_state=0)
    exog = np.column_stack([np.ones(100), data.drop(columns="y").to_numpy()])
    model = ps.PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2)
    assert model.nparams == 102 > model.nobs
    res = model.fit(alpha=1e-2)
    assert res.converged
    assert np.isfinite(res.bse).all()
    assert res.df_resid == -2  # nobs - K p, as statsmodels counts it


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_empty_data(interface):
    data = simulated().iloc[:0]
    with pytest.raises(ValueError, match=r"(?i)empty|no observations|\b0 obs"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2).fit()
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=1).fit()


def test_exog_as_lists_is_accepted_like_logit():
    """Lists of rows are a design, as for statsmodels' Logit (GenericLikelihood-
    Model read exog.shape: "'list' object has no attribute 'shape'")."""
    data = simulated()
    exog = design(data)
    expected = PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
    for rows in (exog.tolist(), tuple(map(tuple, exog))):
        res = PolyhedralMixtureLogit(data["y"].tolist(), rows, k=2).fit()
        np.testing.assert_allclose(res.params, expected.params, rtol=1e-12)
    with pytest.raises(ValueError, match=r"same number of columns"):
        PolyhedralMixtureLogit([0, 1, 0], [[1.0, 2.0], [1.0], [1.0, 3.0]], k=1)


@pytest.mark.parametrize("interface", ["formula", "array", "frame"])
def test_exog_without_columns_is_refused(interface):
    data = simulated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "Mean of empty slice" came first
        with pytest.raises(ValueError, match=r"exog has no columns.*constant"):
            if interface == "formula":
                ps.plume("y ~ 0", data, k=2)
            elif interface == "array":
                PolyhedralMixtureLogit(data["y"], np.empty((len(data), 0)), k=2)
            else:
                PolyhedralMixtureLogit(data["y"], data[[]], k=2)


def test_repeated_column_names_are_refused():
    """Two columns named x1 gave two parameters named h1:x1 without a word."""
    data = simulated()
    exog = pd.DataFrame(design(data), columns=["const", "x1", "x1"])
    with pytest.raises(ValueError, match=r"more than one column named 'x1'"):
        PolyhedralMixtureLogit(data["y"], exog, k=2)


@pytest.mark.parametrize(
    "where", ["outcome array", "outcome series", "outcome formula", "feature"]
)
def test_complex_values_are_refused(where):
    """NumPy would keep the real parts with only a ComplexWarning."""
    data = simulated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"complex values"):
            if where == "outcome array":
                PolyhedralMixtureLogit(data["y"].to_numpy(complex), design(data), k=2)
            elif where == "outcome series":
                PolyhedralMixtureLogit(data["y"].astype(complex), design(data), k=2)
            elif where == "outcome formula":
                ps.plume(FORMULA, data.astype({"y": complex}), k=2)
            else:
                exog = pd.DataFrame(design(data), columns=["const", "x1", "x2"])
                PolyhedralMixtureLogit(data["y"], exog.astype({"x1": complex}), k=2)


def test_sparse_exog_says_to_densify():
    from scipy import sparse

    data = simulated()
    with pytest.raises(TypeError, match=r"sparse.*not supported.*toarray\(\)"):
        PolyhedralMixtureLogit(data["y"], sparse.csr_matrix(design(data)), k=2)


def test_no_rows_left_after_dropping_missing_values():
    """An all-NaN column under missing='drop' leaves no rows: say so, and name
    the column (it was numpy's zero-size reduction error)."""
    data = simulated()
    exog = design(data)
    exog[:, 2] = np.nan
    with pytest.raises(ValueError, match=r"no observations are left.*'x2'"):
        PolyhedralMixtureLogit(data["y"], exog, k=2, missing="drop")
    # NaN spread over the outcome and a feature, no column empty
    y = data["y"].to_numpy(dtype=float, copy=True)
    exog = design(data)
    y[::2], exog[1::2, 1] = np.nan, np.nan
    with pytest.raises(ValueError, match=r"no observations are left"):
        PolyhedralMixtureLogit(y, exog, k=2, missing="drop")


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_single_row(interface):
    data = simulated().iloc[:1]
    with pytest.raises(ValueError, match=r"(?i)\b1 (observation|row)"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=1).fit()
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=1).fit()


def test_non_numeric_feature_column_is_named():
    data = simulated()
    exog = pd.DataFrame(design(data), columns=["const", "x1", "x2"]).assign(grp="a")
    with pytest.raises((TypeError, ValueError), match=r"\bgrp\b"):
        PolyhedralMixtureLogit(data["y"], exog, k=2)


def test_endog_and_exog_of_different_lengths():
    data = simulated()
    with pytest.raises(ValueError, match=r"endog has 199 rows but exog has 200"):
        PolyhedralMixtureLogit(data["y"].to_numpy()[:-1], design(data), k=2)


def test_exog_is_required():
    data = simulated()
    with pytest.raises(ValueError, match=r"exog is required"):
        PolyhedralMixtureLogit(data["y"], None, k=2)


def test_unknown_column_in_the_formula_is_named():
    # patsy's message, raised as a ValueError that names the formula and column
    with pytest.raises(ValueError, match=r"(?s)formula.*\bx9\b"):
        ps.plume("y ~ x1 + x9", simulated(), k=2)


# =================================================================== arguments
@pytest.mark.parametrize(
    "k", [0, -1, 2.5, "2", None, True, np.nan], ids=lambda v: repr(v)
)
def test_bad_k_names_the_argument(k):
    with pytest.raises(ValueError, match=r"k must be an integer >= 1"):
        ps.plume(FORMULA, simulated(), k=k)


@pytest.mark.parametrize(
    "gamma",
    [0, -1.0, np.nan, -np.inf, "1", None, np.array([1.0, 2.0])],
    ids=lambda v: repr(v),
)
def test_bad_gamma_names_the_argument(gamma):
    with pytest.raises(ValueError, match=r"gamma must be a finite number > 0"):
        ps.plume(FORMULA, simulated(), k=2, gamma=gamma)


def test_infinite_gamma_points_to_the_hard_model():
    with pytest.raises(ValueError, match=r"gamma=inf is the hard-gating model.*spla1"):
        ps.plume(FORMULA, simulated(), k=2, gamma=np.inf)
    with pytest.raises(ValueError, match=r"must be finite: this model has no hard"):
        ps.plume_flip(FORMULA, simulated(), k=2, gamma=np.inf)


@pytest.mark.parametrize("gamma", [1e-5, 1e-6, 1e-300], ids=lambda v: repr(v))
def test_tiny_gamma_is_refused_before_it_misreads_a_distant_maximum(gamma):
    # at 1e-6 a fit with a finite maximum at |w| ~ 2e6 was called separated
    with pytest.raises(ValueError, match=r"gamma must be at least 1e-04, got"):
        ps.plume(FORMULA, simulated(), k=2, gamma=gamma)
    with pytest.raises(
        ValueError, match=r"every gamma in gammas but np.inf \(SPLA1\) must be at least"
    ):
        ps.select_k(FORMULA, simulated(), ks=(2,), gammas=(1.0, gamma))
    assert ps.plume(FORMULA, simulated(), k=2, gamma=1e-4).fit().converged


@pytest.mark.parametrize("gamma", [1e7, 1e8, 1e300], ids=lambda v: repr(v))
def test_huge_gamma_is_refused_before_it_stalls_or_overflows(gamma):
    # from 1e8 EM stalled at its start, from about 1e154 gamma**2 overflowed
    with pytest.raises(ValueError, match=r"gamma must be at most 1e\+06.*spla1"):
        ps.plume(FORMULA, simulated(), k=2, gamma=gamma)
    with pytest.raises(
        ValueError, match=r"every gamma in gammas but np.inf \(SPLA1\) must be at most"
    ):
        ps.select_k(FORMULA, simulated(), ks=(2,), gammas=(1.0, gamma))
    # each caller names its own way to the hard limit, or says there is none
    with pytest.raises(ValueError, match=r"at most.*no hard-gating variant"):
        ps.plume_flip(FORMULA, simulated(), k=2, gamma=gamma)
    with pytest.raises(ValueError, match=r"at most.*np.inf in gammas"):
        ps.select_k(FORMULA, simulated(), ks=(2,), gammas=(gamma,))
    pytest.importorskip("sklearn")
    from plumestats.sklearn import PolyhedralClassifier

    data = simulated()
    with pytest.raises(ValueError, match=r"PolyhedralClassifier\(gamma=np.inf\)"):
        PolyhedralClassifier(gamma=gamma).fit(data[["x1", "x2"]], data["y"])


def test_largest_gamma_fits_as_the_hard_model():
    data = simulated()
    soft = ps.plume(FORMULA, data, k=2, gamma=1e6).fit()
    hard = ps.spla1(FORMULA, data, k=2).fit()
    assert soft.converged
    assert soft.llf == pytest.approx(hard.llf, rel=1e-6)


def test_numpy_scalars_are_accepted_for_k_and_gamma():
    res = ps.plume(FORMULA, simulated(), k=np.int64(2), gamma=np.float64(2.0)).fit()
    assert res.k == 2 and res.gamma == 2.0


@pytest.mark.parametrize("maxiter", [-5, 1.5, "100", None], ids=lambda v: repr(v))
def test_bad_maxiter_names_the_argument(maxiter):
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=r"maxiter must be an integer >= 0"):
        model.fit(maxiter=maxiter)


@pytest.mark.parametrize("method", ["em", "bfgs", "newton"])
def test_maxiter_zero_gives_the_results_at_the_start(method):
    """As statsmodels' fit(start_params, maxiter=0): no iteration, a
    ConvergenceWarning, the results at the given values."""
    model = ps.plume(FORMULA, simulated(), k=2)
    start = model.fit().params.to_numpy() * 1.01
    with pytest.warns(ConvergenceWarning):
        res = model.fit(start_params=start, maxiter=0, method=method)
    np.testing.assert_allclose(res.params, start, rtol=1e-14)
    assert not res.mle_retvals["converged"]


@pytest.mark.parametrize(
    "tol", [0, -1e-8, np.nan, np.inf, "1e-8"], ids=lambda v: repr(v)
)
def test_bad_tol_names_the_argument(tol):
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=r"tol must be a finite number > 0"):
        model.fit(tol=tol)


@pytest.mark.parametrize(
    "argument, value, allowed",
    [
        ("mstep", "simplex", "'newton', 'gradient', 'bfgs'"),
        ("init", "pca", "'kmeans', 'directions', 'logit', 'random', 'mixed'"),
        ("cov_type", "HC4", "'nonrobust', 'HC0', 'HC1', 'HC2'"),
        ("method", "lm", "'em', 'newton'"),
    ],
)
def test_unknown_fit_choice_lists_the_allowed_values(argument, value, allowed):
    model = ps.plume(FORMULA, simulated(), k=2)
    pattern = rf"{argument} must be one of .*{re.escape(allowed)}.*{value}"
    with pytest.raises(ValueError, match=pattern):
        model.fit(**{argument: value})


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_unknown_missing_option_lists_the_allowed_values(interface):
    data = simulated()
    with pytest.raises(ValueError, match=r"missing must be one of 'none', 'drop'"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, missing="zap")
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2, missing="zap")


@pytest.mark.parametrize("method", ["em", "newton", "bfgs"])
def test_unknown_fit_keyword_is_a_type_error(method):
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(TypeError, match=r"\bfoo\b"):
        model.fit(method=method, foo=1)


@pytest.mark.parametrize("interface", ["formula", "array"])
def test_unknown_model_keyword_is_a_type_error(interface):
    """A typo such as gama=2 must not be accepted silently (gamma stays 1)."""
    data = simulated()
    with pytest.raises(TypeError, match=r"\bgama\b"):
        if interface == "formula":
            ps.plume(FORMULA, data, k=2, gama=2.0)
        else:
            PolyhedralMixtureLogit(data["y"], design(data), k=2, gama=2.0)


@pytest.mark.parametrize(
    "argument, value, pattern",
    [
        ("n_init", 0, r"n_init must be an integer >= 1"),
        ("alpha", -1.0, r"alpha must be a finite number >= 0"),
        ("alpha", np.nan, r"alpha must be a finite number >= 0"),
    ],
)
def test_bad_n_init_and_alpha_name_the_argument(argument, value, pattern):
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=pattern):
        model.fit(**{argument: value})


def test_bad_random_state_names_the_argument():
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises((TypeError, ValueError), match=r"random_state"):
        model.fit(random_state="abc")


def test_start_params_of_the_wrong_length():
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=r"start_params must have 6 values"):
        model.fit(start_params=np.zeros(5))


@pytest.mark.parametrize("bad", ["abc", {"h1:x1": 1.0}, ["a"] * 6])
@pytest.mark.parametrize("method", ["em", "bfgs"])
def test_start_params_that_are_not_numbers_are_named(bad, method):
    model = ps.plume(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=r"start_params must be an array of numbers"):
        model.fit(start_params=bad, method=method)
    flips = ps.plume_flip(FORMULA, simulated(), k=2)
    with pytest.raises(ValueError, match=r"start_params must be an array of numbers"):
        flips.fit(start_params=bad)


def test_hard_model_takes_no_finite_gamma():
    """gamma = inf defines SPLA1 (it was "got multiple values for keyword
    argument 'gamma'")."""
    data = simulated()
    for make in (
        lambda: ps.HardPolyhedralLogit(data["y"], design(data), k=2, gamma=2.0),
        lambda: ps.spla1(FORMULA, data, k=2, gamma=2.0),
    ):
        with pytest.raises(
            TypeError,
            match=r"gamma = inf by definition.*"
            r"PolyhedralMixtureLogit",
        ):
            make()
    hard = ps.HardPolyhedralLogit(data["y"], design(data), k=2, gamma=np.inf)
    assert hard.gamma == np.inf


@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
def test_non_finite_start_params(bad):
    model = ps.plume(FORMULA, simulated(), k=2)
    start = np.array([bad, 0.0, 0.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"start_params"):
        model.fit(start_params=start)


# ==================================================================== numerics
@pytest.mark.parametrize(
    "scale_x1, scale_x2",
    [(1e-8, 1e-8), (1e8, 1e8), (1e-8, 1e8)],
    ids=["both_1e-8", "both_1e8", "mixed"],
)
def test_extreme_feature_scales_fit_fine(scale_x1, scale_x2):
    data = simulated(300, seed=3)
    base = ps.plume(FORMULA, data, k=2).fit()
    scaled = data.assign(x1=data["x1"] * scale_x1, x2=data["x2"] * scale_x2)
    res = ps.plume(FORMULA, scaled, k=2).fit()  # no warning of any kind
    assert res.converged
    assert res.llf == pytest.approx(base.llf, rel=1e-8)
    np.testing.assert_allclose(res.predict(scaled), base.predict(data), atol=1e-6)
    assert np.all(np.isfinite(res.bse))


@pytest.mark.parametrize("gamma", [1e-4, 1e-2, 1.0, 10.0, 1e3])
def test_gamma_across_seven_orders_of_magnitude_fits_fine(gamma):
    data = simulated(400, seed=2)
    res = ps.plume(FORMULA, data, k=2, gamma=gamma).fit(maxiter=1000)
    assert res.converged
    assert np.isfinite(res.llf)
    assert np.all(np.isfinite(res.params)) and np.all(np.isfinite(res.bse))


@pytest.fixture(scope="module")
def array_model():
    data = simulated(100, seed=4)
    return PolyhedralMixtureLogit(data["y"].to_numpy(), design(data), k=2)


@pytest.mark.parametrize(
    "magnitude", [1e10, 1e100, 1e300, 1e308, np.finfo(float).max], ids=str
)
def test_huge_parameters_give_finite_or_minus_inf_without_warnings(
    magnitude, array_model
):
    params = magnitude * np.random.default_rng(1).uniform(-1, 1, array_model.nparams)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        llobs = array_model.loglikeobs(params)
        llf = array_model.loglike(params)
        prob = array_model.predict(params)
        gate = array_model.predict(params, which="gate")
    assert not np.isnan(llobs).any() and np.all(llobs <= 0)
    assert not np.isnan(llf) and llf <= 0
    assert np.all((prob >= 0) & (prob <= 1))
    np.testing.assert_allclose(gate.sum(axis=1), 1.0)


def test_nan_parameters_are_refused_by_loglike_and_predict(array_model):
    params = np.array([np.nan, 0.0, 0.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"(?is)params.*nan|nan.*params"):
        array_model.loglike(params)
    with pytest.raises(ValueError, match=r"(?is)params.*nan|nan.*params"):
        array_model.predict(params)


@pytest.mark.parametrize("which", ["loglike", "predict"])
def test_parameters_of_the_wrong_length_are_named(which, array_model):
    with pytest.raises(ValueError, match=r"(?s)params.*\b6\b"):
        getattr(array_model, which)(np.zeros(5))


def test_identical_experts_are_a_saddle_the_fit_escapes():
    """Two copies of the logit fit are a stationary point with zero gradient but
    negative curvature (a saddle, not a maximum): the fit must not stop there. It
    steps along the direction of negative curvature and goes on to a maximum."""
    data = simulated(300, seed=5)
    logit = ps.plume(FORMULA, data, k=1).fit()
    model = ps.plume(FORMULA, data, k=2)
    start = np.tile(np.asarray(logit.params), 2)
    assert np.linalg.eigvalsh(-model.hessian(start)).min() < 0
    with warnings.catch_warnings():
        # the maximum K = 2 reaches on these data may itself be separated
        warnings.simplefilter("ignore", PerfectSeparationWarning)
        warnings.simplefilter("ignore", HessianInversionWarning)
        res = model.fit(start_params=start)
    assert "escape" in res.mle_retvals["steps"]
    assert res.llf > model.loglike(start) + 1.0
    blocks = np.asarray(res.params).reshape(2, -1)
    assert not np.allclose(blocks[0], blocks[1])


def test_more_experts_than_the_data_support_give_nan_bse():
    """Intercept-only with k=2: L depends on (w1, w2) only through one probability,
    so the maximum is a ridge and the information is singular there. The fit must
    reach at least the k=1 likelihood and report NaN bse with a warning, not a
    'converged' fit with finite standard errors."""
    data = simulated(300, seed=0)
    logit = ps.plume("y ~ 1", data, k=1).fit()
    with (
        pytest.warns(HessianInversionWarning, match=r"cannot be inverted"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = ps.plume("y ~ 1", data, k=2).fit()
    assert np.all(np.isnan(np.asarray(res.bse)))
    assert res.llf >= logit.llf - 1e-8


def test_k_larger_than_the_distinct_points_gives_no_scipy_warning():
    """One binary feature: the outside class sits on two points, fewer than k=3
    k-means clusters. Only statsmodels warnings may come out, never a RuntimeWarning
    from scipy's k-means, and NaN bse must come with a HessianInversionWarning."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 200)
    y = (rng.random(200) < np.where(x == 1, 0.7, 0.3)).astype(int)
    data = pd.DataFrame({"x": x, "y": y})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ps.plume("y ~ x", data, k=3).fit()
    foreign = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if not issubclass(w.category, ModelWarning)
    ]
    assert not foreign
    assert np.all(np.isfinite(np.asarray(res.params)))
    if not np.all(np.isfinite(np.asarray(res.bse))):
        assert any(issubclass(w.category, HessianInversionWarning) for w in caught)


# ================================================================== prediction
def test_predict_with_a_missing_column_names_it(fitted_with_factor):
    data, res = fitted_with_factor
    with pytest.raises(ValueError, match=r"\bx2\b"):
        res.predict(data.drop(columns="x2"))


def test_predict_with_an_unseen_level_names_it(fitted_with_factor):
    data, res = fitted_with_factor
    new = data.iloc[:5].assign(g=["a", "b", "unseen_lvl", "a", "c"])
    with pytest.raises(ValueError, match=r"unseen_lvl"):
        res.predict(new)


@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
def test_predict_with_bad_values_gives_an_error_or_a_nan_row(bad, fitted_with_factor):
    """Either a ValueError naming the column, or the row's prediction is NaN (a
    valid probability for +inf) with the other rows unchanged and no warning."""
    data, res = fitted_with_factor
    new = data.iloc[:6].copy()
    new.loc[new.index[2], "x1"] = bad
    try:
        pred = res.predict(new)
    except ValueError as exc:
        assert re.search(r"\bx1\b", str(exc)), str(exc)
        return
    pred = np.asarray(pred, dtype=float)
    assert pred.shape == (6,)
    assert np.isnan(pred[2]) or (np.isinf(bad) and 0 <= pred[2] <= 1)
    clean = np.asarray(res.predict(new.drop(index=new.index[2])))
    np.testing.assert_allclose(np.delete(pred, 2), clean)


@pytest.mark.parametrize("path", ["predict", "get_prediction"])
def test_formula_prediction_errors_name_the_column(path, fitted_with_factor):
    """predict and get_prediction fail alike: a ValueError naming the column
    (get_prediction let patsy's PatsyError through; a text column the formula
    uses as a number gave "'DataFrame' object has no attribute 'dtype'")."""
    data, res = fitted_with_factor
    predict = getattr(res, path)
    with pytest.raises(ValueError, match=r"could not apply.*\bx2\b"):
        predict(data.iloc[:5].drop(columns="x2"))
    text = data.iloc[:5].astype({"x1": str})
    with pytest.raises(ValueError, match=r"uses 'x1' as numbers.*'x1' \(e\.g\."):
        predict(text)


def test_formula_model_predicts_at_a_row_given_as_a_series(fitted_with_factor):
    """A row of a frame with a text column is an object Series; it is read as
    one row, with its numbers as numbers."""
    data, res = fitted_with_factor
    expected = np.asarray(res.predict(data.iloc[[3]]))
    np.testing.assert_allclose(np.asarray(res.predict(data.iloc[3])), expected)
    got = res.get_prediction(data.iloc[3]).predicted
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize(
    ("formula", "label"), [("y ~ x1 + I(x2 ** 2)", 2), ("y ~ 0 + x1 + x2", 0)]
)
def test_a_row_whose_integer_label_appears_in_the_formula_is_a_row(formula, label):
    # the label 2 of I(x2 ** 2), or 0 of "0 +", was taken for a column's name
    data = simulated()
    res = ps.plume(formula, data, k=2).fit()
    expected = np.asarray(res.predict(data.loc[[label]]))
    np.testing.assert_allclose(np.asarray(res.predict(data.loc[label])), expected)


def test_text_inside_a_numeric_expression_is_not_blamed():
    # c holds text rightly in I((c == 'u') * 1.0): a missing x2 is the fault
    data = simulated().assign(c=lambda d: np.where(d.x1 > 0, "u", "v"))
    res = ps.plume("y ~ x1 + x2 + I((c == 'u') * 1.0)", data, k=2).fit()
    with pytest.raises(ValueError, match=r"name 'x2' is not defined") as raised:
        res.predict(data.drop(columns="x2").head())
    assert "'c'" not in str(raised.value)
    as_text = (
        data.head()
        .astype({"x1": str})
        .assign(x1=lambda d: d.x1.where(d.x1 != d.x1.iloc[0], "abc"))
    )
    with pytest.raises(ValueError, match=r"uses 'x1' as numbers") as raised:
        res.predict(as_text)
    assert "'c'" not in str(raised.value)


def test_prediction_at_no_complete_rows(fitted_with_factor):
    """No rows (a CSV header alone reads as text columns), or only incomplete
    ones: empty predictions, not patsy's text error or numpy's reshape error;
    an average of nothing is refused by name."""
    data, res = fitted_with_factor
    header_only = pd.DataFrame({c: pd.Series([], dtype=object) for c in data})
    assert len(res.predict(header_only)) == 0
    assert len(res.get_prediction(header_only).summary_frame()) == 0
    incomplete = data.iloc[:2].assign(x1=np.nan)
    assert np.isnan(np.asarray(res.predict(incomplete), dtype=float)).all()
    assert len(res.get_prediction(incomplete).summary_frame()) == 0
    with pytest.raises(ValueError, match=r"average=True needs at least one row"):
        res.get_prediction(incomplete, average=True)


def test_predict_with_a_design_of_the_wrong_width(fitted_with_factor):
    _, res = fitted_with_factor
    with pytest.raises(ValueError, match=r"exog has 2 columns but the model has 5"):
        res.predict(np.zeros((3, 2)), transform=False)


def test_wrong_width_is_named_with_integer_column_labels():
    # the design's columns 0, 1, 2: the message lists them (before: a
    # TypeError from joining integers)
    data = simulated(120, seed=5)
    exog = pd.DataFrame(np.column_stack([np.ones(120), data[["x1", "x2"]]]))
    res = PolyhedralMixtureLogit(data["y"], exog, k=1).fit(disp=0)
    with pytest.raises(ValueError, match=r"model has 3 \(0, 1, 2\)"):
        res.predict(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"like the design \(0, 1, 2\)"):
        res.get_margeff(atexog=np.ones((1, 2)))


def test_text_in_new_data_is_named_by_its_column(frame_model):
    # an array-interface model: numpy said "could not convert string to
    # float: 'a'", naming no column
    exog, res = frame_model
    new = exog.head(3).assign(x1=["a", "b", "c"])
    for rows in (new, new.to_numpy()):
        with pytest.raises(ValueError, match=r"column 'x1' of the new data must"):
            res.predict(rows)
    # rows of unequal length are no text: numpy's own message says what
    with pytest.raises(ValueError, match=r"inhomogeneous"):
        res.predict([[1.0, 2.0, 1.0], [1.0, 2.0]], transform=False)


def test_a_rank_deficient_design_warns_at_the_callers_line():
    data = simulated(120, seed=5).assign(x3=lambda d: 2.0 * d.x1)
    exog = data[["x1", "x2", "x3"]].assign(const=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ps.plume("y ~ x1 + x2 + x3", data, k=1)
        PolyhedralMixtureLogit(data["y"], exog, k=1)
    collinear = [w for w in caught if issubclass(w.category, CollinearityWarning)]
    assert len(collinear) == 2
    assert {w.filename for w in collinear} == {__file__}


@pytest.fixture(scope="module")
def frame_model():
    """An array-interface fit on a DataFrame, and its design (named columns)."""
    data = simulated(300, seed=3)
    exog = data[["x1", "x2"]].assign(const=1.0)
    return exog, PolyhedralMixtureLogit(data["y"], exog, k=2).fit()


PREDICTION_PATHS = {
    "predict": lambda res, new: res.predict(new),
    "decision_function": lambda res, new: res.decision_function(new),
    "get_prediction": lambda res, new: res.get_prediction(new).predicted,
    "gate_probabilities": lambda res, new: res.gate_probabilities(new),
}


@pytest.mark.parametrize("path", list(PREDICTION_PATHS))
def test_new_dataframe_columns_are_matched_by_name(path, frame_model):
    """A model fitted on a DataFrame reads a new one by column name: columns in
    another order, or extra columns, give the same predictions (statsmodels
    matches by position: reordered columns silently gave other numbers)."""
    exog, res = frame_model
    predict = PREDICTION_PATHS[path]
    new = exog.iloc[:5]
    expected = np.asarray(predict(res, new))
    reordered = new[["const", "x2", "x1"]]
    np.testing.assert_allclose(np.asarray(predict(res, reordered)), expected)
    extra = reordered.assign(y=1, note="a")  # ignored, as a formula ignores them
    np.testing.assert_allclose(np.asarray(predict(res, extra)), expected)
    # arrays stay positional
    np.testing.assert_allclose(np.asarray(predict(res, new.to_numpy())), expected)
    # a frame with pandas' default labels 0, 1, ... is matched by name too, so
    # it is refused here (it was read by position): the way out is an array
    for unnamed in (
        pd.DataFrame(new.to_numpy()),
        pd.DataFrame(new.to_numpy(), columns=[0, 1, 2]),
    ):
        with pytest.raises(ValueError, match=r"no column 'x1', 'x2', 'const'.*"):
            predict(res, unnamed)


@pytest.mark.parametrize("path", list(PREDICTION_PATHS))
def test_integer_column_labels_are_names(path):
    """A model fitted on columns labelled [2, 1, 0] predicts a frame with the
    labels 0, 1, 2 by name (it used them as positions: 4.6e-06 for 0.647)."""
    data = simulated(300, seed=4)
    exog = pd.DataFrame(
        {2: data["x1"].to_numpy(), 1: data["x2"].to_numpy(), 0: np.ones(300)}
    )
    res = PolyhedralMixtureLogit(data["y"], exog, k=2).fit()
    predict = PREDICTION_PATHS[path]
    new = exog.iloc[:5]
    expected = np.asarray(predict(res, new.to_numpy()))  # by position, as fitted
    np.testing.assert_allclose(np.asarray(predict(res, new[[0, 1, 2]])), expected)
    np.testing.assert_allclose(np.asarray(predict(res, new)), expected)
    # labels read from a CSV header are text: matched by their text
    as_text = new[[0, 2, 1]].rename(columns=str)
    np.testing.assert_allclose(np.asarray(predict(res, as_text)), expected)
    with pytest.raises(ValueError, match="no column 0"):
        predict(res, new[[1, 2]])


def test_multiindex_columns_predict_on_the_frame_they_were_fitted_on():
    data = simulated(300, seed=5)
    columns = pd.MultiIndex.from_tuples([("x", "1"), ("x", "2"), ("c", "")])
    exog = pd.DataFrame(
        np.column_stack([data["x1"], data["x2"], np.ones(300)]), columns=columns
    )
    res = PolyhedralMixtureLogit(data["y"], exog, k=2).fit()
    assert list(res.model.exog_names) == ["x_1", "x_2", "c"]  # statsmodels' names
    np.testing.assert_allclose(res.predict(exog), res.predict())
    shuffled = exog.iloc[:, [2, 0, 1]]
    np.testing.assert_allclose(res.predict(shuffled), res.predict())


@pytest.mark.parametrize("path", list(PREDICTION_PATHS))
def test_new_dataframe_with_a_renamed_or_missing_column_is_refused(path, frame_model):
    exog, res = frame_model
    predict = PREDICTION_PATHS[path]
    renamed = exog.iloc[:5].rename(columns={"x1": "z1"})
    with pytest.raises(ValueError, match=r"no column 'x1'.*does not know: 'z1'"):
        predict(res, renamed)
    with pytest.raises(ValueError, match=r"no column 'x2'"):
        predict(res, exog.iloc[:5].drop(columns="x2"))


def test_a_named_row_is_matched_by_name(frame_model):
    exog, res = frame_model
    row = exog.iloc[2]
    expected = float(np.asarray(res.predict(exog.iloc[[2]]))[0])
    got = res.predict(row[["x2", "const", "x1"]])
    assert float(np.asarray(got)[0]) == pytest.approx(expected, rel=1e-12)


def test_matching_by_name_survives_remove_data_and_pickling(frame_model):
    exog, res = frame_model
    new = exog.iloc[:5]
    expected = np.asarray(res.predict(new))
    stripped = pickle.loads(pickle.dumps(res))
    stripped.remove_data()
    stripped = pickle.loads(pickle.dumps(stripped))
    reordered = new[["x2", "const", "x1"]]
    np.testing.assert_allclose(np.asarray(stripped.predict(reordered)), expected)


def test_predict_with_an_unknown_which(fitted_with_factor):
    data, res = fitted_with_factor
    with pytest.raises(ValueError, match=r"which must be one of"):
        res.predict(data, which="prob")


# ================================================================= persistence
def test_save_load_round_trip_gives_identical_predictions(tmp_path):
    data = simulated(300, seed=6).astype({"x1": float})
    data["g"] = np.array(["a", "b"])[np.arange(len(data)) % 2]
    data.loc[4, "x1"] = np.nan  # dropped by the formula default
    res = ps.plume("y ~ x1 + x2 + C(g)", data, k=2).fit()
    path = tmp_path / "plume.pickle"
    res.save(path)
    loaded = ps.PolyhedralMixtureLogitResults.load(path)
    new = data.dropna().iloc[:50]
    np.testing.assert_array_equal(loaded.predict(new), res.predict(new))
    np.testing.assert_array_equal(loaded.params, res.params)
    assert loaded.nobs == res.nobs == len(data) - 1


# ================================================================= invariances
@pytest.fixture(scope="module")
def three_faces():
    data = simulated(300, k=3, seed=4, noise=0.05)
    return data, ps.plume(FORMULA, data, k=3).fit()


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffling_rows_changes_nothing(seed, three_faces):
    data, base = three_faces
    res = ps.plume(FORMULA, data.sample(frac=1, random_state=seed), k=3).fit()
    assert res.llf == pytest.approx(base.llf, rel=1e-8)
    np.testing.assert_allclose(
        res.hyperplanes.to_numpy(), base.hyperplanes.to_numpy(), rtol=1e-6, atol=1e-8
    )


def test_rescaling_a_feature_by_1000_keeps_the_predictions(three_faces):
    data, base = three_faces
    scaled = data.assign(x1=data["x1"] * 1000)
    res = ps.plume(FORMULA, scaled, k=3).fit()
    np.testing.assert_allclose(res.predict(scaled), base.predict(data), atol=1e-6)
    np.testing.assert_allclose(
        res.hyperplanes["x1"] * 1000, base.hyperplanes["x1"], rtol=1e-6
    )


def test_duplicating_every_row_doubles_the_loglikelihood(three_faces):
    data, base = three_faces
    doubled = ps.plume(FORMULA, pd.concat([data, data], ignore_index=True), k=3)
    params = np.asarray(base.params)
    assert doubled.loglike(params) == pytest.approx(2 * base.llf, rel=1e-12)
    away = params + 0.1  # away from the optimum, where the score is not ~0
    np.testing.assert_allclose(
        doubled.score(away), 2 * base.model.score(away), rtol=1e-10
    )


@pytest.mark.parametrize("scale", [1e154, 1e-200])
def test_columns_of_extreme_magnitude_are_refused_by_name(scale):
    # the fit collapsed to the null model, reported as converged, with overflow
    # RuntimeWarnings (1e154) or a false CollinearityWarning (both)
    data = simulated(400, seed=0)
    exog = design(data)
    exog[:, 1] *= scale
    with pytest.raises(ValueError, match=r"extreme magnitude: 'x1'.*rescale"):
        PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2)


def test_columns_just_inside_the_magnitude_bound_fit_as_in_standard_units():
    data = simulated(400, seed=0)
    reference = PolyhedralMixtureLogit(data["y"].to_numpy(), design(data), k=2).fit()
    for scale in (1e149, 1e-149):
        exog = design(data)
        exog[:, 1:] *= scale
        res = PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
        assert res.llf == pytest.approx(reference.llf, rel=1e-8)


def test_bad_cluster_labels_are_refused_before_the_fit(monkeypatch):
    # a missing label was refused by the covariance, after every EM run
    from plumestats import _fit

    def no_runs(*args, **kwargs):
        raise AssertionError("fitted before checking the cluster labels")

    monkeypatch.setattr(_fit, "_run_em", no_runs)
    data = simulated()
    groups = np.arange(len(data), dtype=float) % 5
    groups[3] = np.nan
    model = ps.plume(FORMULA, data, k=2)
    with pytest.raises(ValueError, match="1 missing cluster labels"):
        model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    with pytest.raises(ValueError, match="needs the cluster labels"):
        model.fit(cov_type="cluster")
