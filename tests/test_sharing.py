"""Results exported to JSON and loaded back (``plumestats._sharing``).

Oracle: the fit itself. The loaded object must predict what the fit predicts
(to 1e-12; in fact bit for bit), show the same summary, and hold the same
attributes as the fit after ``remove_data()``, which is what a pickle of a
slim fit restores.
"""

from __future__ import annotations

import json
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import plumestats.api as ps
from plumestats._sharing import FORMAT_VERSION, results_from_json

# tolerance of the round trip: the same numbers, so the same arithmetic; 1e-12
# leaves room for nothing but the order of summation
TOL = 1e-12


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    frame, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=3)
    rng = np.random.default_rng(3)
    frame["g"] = rng.choice(["a", "b", "c"], len(frame))
    frame["school"] = np.arange(len(frame)) % 12
    frame["label"] = np.where(frame["y"] == 1, "in", "out")
    return frame


@pytest.fixture(scope="module")
def new_data(data) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    new = data.sample(60, random_state=7).drop(columns=["y", "label"])
    new["x1"] += rng.normal(scale=0.1, size=len(new))
    new.iloc[3, new.columns.get_loc("x2")] = np.nan  # a row that predicts NaN
    return new.reset_index(drop=True)


def _fit(kind: str, data: pd.DataFrame):
    if kind == "formula":
        return ps.plume(
            "y ~ x1 + center(x2) + C(g, Treatment(reference='b'))", data, k=2
        ).fit()
    if kind == "splines":
        formula = "y ~ standardize(x1) + bs(x2, df=3) + np.log(np.abs(x1) + 1)"
        return ps.plume(formula, data, k=2).fit(alpha=1e-3)
    if kind == "hard":
        return ps.spla1("y ~ x1 + scale(x2)", data, k=2).fit()
    if kind == "flips":
        return ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=1e-6)
    if kind == "labels_inside_0":
        return ps.plume("label ~ x1 + x2 + C(g)", data, k=2, inside="in").fit(
            cov_type="HC1"
        )
    if kind == "cluster":
        return ps.plume("y ~ x1 + x2", data, k=2).fit(
            cov_type="cluster", cov_kwds={"groups": data["school"]}, use_t=True
        )
    if kind == "chunked":
        return ps.plume("y ~ x1 + x2", data, k=2).fit(chunksize=100)
    design = data[["x1", "x2"]].assign(const=1.0)
    if kind == "frame":
        return ps.PolyhedralMixtureLogit(data["y"], design, k=2).fit()
    return ps.PolyhedralMixtureLogit(
        data["y"].to_numpy(), design.to_numpy(), k=2, gamma=2.0
    ).fit()


KINDS = [
    "formula",
    "splines",
    "hard",
    "flips",
    "labels_inside_0",
    "cluster",
    "chunked",
    "frame",
    "array",
]


@pytest.fixture(scope="module")
def fits(data):
    with warnings.catch_warnings():
        # a collapsed expert or the like would not matter here: the round
        # trip must reproduce whatever the fit holds
        warnings.simplefilter("ignore")
        return {kind: _fit(kind, data) for kind in KINDS}


def _rows(kind, new_data):
    if kind not in ("frame", "array"):
        return new_data
    design = new_data[["x1", "x2"]].assign(const=1.0)
    return design if kind == "frame" else design.to_numpy()


@pytest.mark.parametrize("kind", KINDS)
def test_loaded_fit_predicts_as_the_fit(kind, fits, new_data, tmp_path):
    res = fits[kind]
    path = tmp_path / "fit.json"
    res.save_json(path)
    loaded = ps.load_json(path)
    rows = _rows(kind, new_data)
    for which in ("mean", "linear", "gate"):
        expected = np.asarray(res.predict(rows, which=which), dtype=float)
        got = np.asarray(loaded.predict(rows, which=which), dtype=float)
        np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL)
        assert np.isnan(got[3]).all()
    expected = res.get_prediction(rows).summary_frame(alpha=0.1)
    got = loaded.get_prediction(rows).summary_frame(alpha=0.1)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=TOL)
    np.testing.assert_allclose(loaded.conf_int(), res.conf_int(), rtol=TOL)
    for name in ("params", "bse", "pvalues", "tvalues"):
        np.testing.assert_allclose(
            np.asarray(getattr(loaded, name)), np.asarray(getattr(res, name)), rtol=TOL
        )
    for name in ("llf", "llnull", "aic", "bic", "prsquared", "llr_pvalue", "nobs"):
        assert getattr(loaded, name) == getattr(res, name), name
    assert type(loaded._results) is type(res._results)
    assert type(loaded.params) is type(res.params)


def _without_clock(summary) -> str:
    # the summary's Date and Time are when it is printed
    text = re.sub(r"\d\d:\d\d:\d\d", "hh:mm:ss", str(summary))
    return re.sub(r"\w{3}, \d{2} \w{3} \d{4}", "date", text)


@pytest.mark.parametrize("kind", KINDS)
def test_loaded_fit_shows_the_same_summary(kind, fits):
    res = fits[kind]
    loaded = results_from_json(res.to_json())
    assert _without_clock(loaded.summary()) == _without_clock(res.summary())
    assert str(loaded.summary2()) == str(res.summary2())
    contrasts = np.eye(len(res.params))[:3]
    pd.testing.assert_frame_equal(
        loaded.t_test(contrasts).summary_frame(), res.t_test(contrasts).summary_frame()
    )
    pd.testing.assert_frame_equal(
        loaded.wald_test_terms().table, res.wald_test_terms().table
    )


@pytest.mark.parametrize("kind", ["formula", "flips", "frame", "array"])
def test_loaded_fit_has_the_attributes_of_a_slim_fit(kind, data):
    """The fields a JSON file restores are those of the fit after
    remove_data(): an attribute added to the results later must be exported
    too (or left out on purpose here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _fit(kind, data)
    loaded = results_from_json(res.to_json())
    res.remove_data()
    original, back = res._results, loaded._results
    assert set(vars(back)) == set(vars(original))
    assert set(vars(back.model)) == set(vars(original.model)) | {"_without_data"}
    # the data object: names, no arrays; a formula fit also its design, under
    # both of statsmodels' names for it (0.14: design_info, 0.15: model_spec)
    design = {"model_spec", "design_info"}
    extra = {"_columns", "_design_json"} | design
    assert set(vars(back.model.data)) - extra == set(vars(original.model.data)) - design
    assert set(vars(original.model.data)) & design <= set(vars(back.model.data))
    for name in ("k", "gamma", "inside", "k_vars", "nparams", "df_model", "df_resid"):
        assert getattr(back.model, name) == getattr(original.model, name)
    assert back.model.exog_names == original.model.exog_names
    assert back.model.endog_names == original.model.endog_names
    assert back.outcome_mapping == original.outcome_mapping
    assert back.mle_settings == original.mle_settings


def test_string_outcome_and_inside_label_survive(fits, data):
    res = fits["labels_inside_0"]
    loaded = results_from_json(res.to_json())
    assert loaded.model.inside == "in" and loaded.model._inside_code == 0
    assert loaded.outcome_mapping == {"in": 0, "out": 1}
    # the held-out bound reads the outcome's labels through the formula
    expected = res.holdout_bound(data.iloc[:100])
    assert loaded.holdout_bound(data.iloc[:100]) == expected


def test_unseen_level_is_refused_as_by_the_fit(fits, new_data):
    res = fits["formula"]
    loaded = results_from_json(res.to_json())
    bad = new_data.assign(g="z")
    with pytest.raises(ValueError) as expected:
        res.predict(bad)
    with pytest.raises(ValueError) as got:
        loaded.predict(bad)
    assert str(got.value) == str(expected.value)


def test_what_needs_the_data_says_so(fits):
    loaded = results_from_json(fits["formula"].to_json())
    with pytest.raises(ValueError, match="which a JSON export does not hold"):
        loaded.predict()
    with pytest.raises(ValueError, match="which a JSON export does not hold"):
        loaded.get_margeff()
    # (it said to call results.bootstrap() first, which a JSON export cannot)
    with pytest.raises(ValueError, match=r"hold no bootstrap \(a JSON export keeps"):
        loaded.conf_int(method="bootstrap")


def test_loaded_fit_pickles_and_exports_again(fits, new_data):
    res = fits["splines"]
    text = res.to_json()
    loaded = results_from_json(text)
    assert loaded.to_json() == text
    again = pickle.loads(pickle.dumps(loaded))
    np.testing.assert_allclose(
        again.predict(new_data), res.predict(new_data), rtol=TOL, atol=TOL
    )


def test_the_file_is_standard_json_with_a_version(fits, tmp_path):
    res = fits["hard"]  # gamma is infinite: no JavaScript literal for it
    text = res.to_json()

    def refuse(name):
        raise AssertionError(f"non-standard JSON literal {name}")

    document = json.loads(text, parse_constant=refuse)
    assert document["format"] == "plumestats-results"
    assert document["format_version"] == FORMAT_VERSION
    assert document["model"]["class"] == "HardPolyhedralLogit"
    assert results_from_json(text).gamma == np.inf
    path = tmp_path / "fit.json"
    res.save_json(str(path))
    loaded = ps.PolyhedralMixtureLogitResults.load_json(path)
    assert loaded.gamma == np.inf


def test_slim_fits_and_removed_data_export(data, new_data):
    res = _fit("formula", data)
    expected = res.predict(new_data)
    res.remove_data()
    loaded = results_from_json(res.to_json())
    np.testing.assert_allclose(loaded.predict(new_data), expected, rtol=TOL)


# ------------------------------------------------------------ refusals
def _document(res) -> dict:
    return json.loads(res.to_json())


def test_a_newer_format_is_refused(fits):
    document = _document(fits["formula"])
    document["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(ValueError, match=r"newer plumestats .*upgrade plumestats"):
        results_from_json(json.dumps(document))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: "not json {", "not valid JSON"),
        (lambda d: json.dumps([1, 2]), "not a plumestats JSON export"),
        (lambda d: json.dumps({**d, "format": "other"}), "not a plumestats JSON"),
        (lambda d: json.dumps({**d, "format_version": "1"}), "no valid format_ver"),
        (lambda d: json.dumps({**d, "results": {}}), "malformed .*no 'nobs' entry"),
        (
            lambda d: json.dumps({**d, "model": {**d["model"], "class": "os.system"}}),
            "malformed .*unknown model class",
        ),
        (
            lambda d: json.dumps(
                {**d, "results": {**d["results"], "params": [1.0, 2.0]}}
            ),
            "malformed .*params has shape",
        ),
        (
            lambda d: json.dumps(d).replace('"float64"', '"object"', 1),
            "malformed .*unknown array dtype",
        ),
        (
            lambda d: json.dumps({**d, "model": {**d["model"], "k": 3}}),
            "malformed .*nparams 10 is not k \\* k_vars",
        ),
        (
            lambda d: json.dumps(d).replace('"xnames": ["Intercept"', '"xnames": ["b"'),
            "malformed .*the design's columns .* are not the model's",
        ),
        (
            lambda d: json.dumps(d).replace('"num_columns": 1', '"num_columns": 2', 1),
            "malformed .*num_columns",
        ),
        # files edited by hand: a k of 0 divided by zero, the others loaded
        (
            lambda d: json.dumps({**d, "model": {**d["model"], "k": 0}}),
            "malformed .*k must be an integer >= 1, got 0",
        ),
        (
            lambda d: json.dumps({**d, "model": {**d["model"], "gamma": "x"}}),
            "malformed .*gamma must be a number",
        ),
        (
            lambda d: json.dumps({**d, "model": {**d["model"], "nobs": -3}}),
            "malformed .*nobs must be >= 0",
        ),
        (
            lambda d: json.dumps({**d, "results": {**d["results"], "cov_type": 5}}),
            "malformed .*cov_type must be one of",
        ),
        (lambda d: "[" * 100_000 + "]" * 100_000, "not valid JSON"),
        # valid JSON, nested deeper than the decoder's stack
        (
            lambda d: json.dumps(
                {
                    **d,
                    "results": {
                        **d["results"],
                        "nobs": json.loads("[" * 900 + "]" * 900),
                    },
                }
            ),
            "malformed .*recursion",
        ),
    ],
)
def test_malformed_files_get_a_clear_error(fits, change, message):
    document = _document(fits["formula"])
    with pytest.raises(ValueError, match=message):
        results_from_json(change(document))


def _edited(document: dict, path: tuple, value) -> str:
    """``document`` with the entry at ``path`` set to ``value`` (deleted for
    ``...``), as JSON."""
    edited = json.loads(json.dumps(document))
    entry = edited
    for key in path[:-1]:
        entry = entry[key]
    if value is ...:
        del entry[path[-1]]
    else:
        entry[path[-1]] = value
    return json.dumps(edited)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("results", "mle_settings", "method"), ...),
        (("results", "mle_retvals", "converged"), ...),
        (("results", "nobs"), "300"),
        (("results", "mle_settings", "alpha"), ...),
        (("results", "diagnostics", "condition_number"), None),
        (("results", "outcome_mapping"), "zz"),
        (("results", "k"), None),
    ],
)
def test_results_fields_edited_by_hand_are_a_malformed_file(fits, path, value):
    """A results field a hand edit damaged: the file loaded, then summary()
    or bic stopped with a bare KeyError, TypeError or AttributeError (a
    helper's 1191 single-field edits found about 40 such)."""
    document = _document(fits["formula"])
    with pytest.raises(ValueError, match="malformed plumestats JSON export"):
        results_from_json(_edited(document, path, value))


@pytest.mark.parametrize(
    ("dtype", "data", "message"),
    [
        ("int64", [1.5, 2.9], "holds other values"),  # was cut to [1, 2]
        ("bool", [2, 0.5], "holds other values"),  # was [True, True]
        ("int64", [2**70], "out of range"),  # was an OverflowError
    ],
)
def test_integer_and_boolean_arrays_hold_exactly_their_kind(dtype, data, message):
    from plumestats._json_codec import decode

    body = {"__ndarray__": {"dtype": dtype, "shape": [len(data)], "data": data}}
    with pytest.raises(ValueError, match=message):
        decode(body)


def test_an_unsafe_formula_in_a_file_is_refused_and_never_runs(
    fits, new_data, tmp_path, monkeypatch
):
    """A tampered file: the attack put into the formula and into a factor's
    code. Loading refuses it; nothing runs."""
    monkeypatch.chdir(tmp_path)
    attack = "I(__import__('os').system('touch PWNED'))"
    document = _document(fits["formula"])
    model = document["model"]
    model["formula"] = model["formula"].replace("x1", attack, 1)
    with pytest.raises(ValueError, match=r"not safe: .*__import__"):
        results_from_json(json.dumps(document))
    document = _document(fits["formula"])
    document["model"]["design"]["factors"][0]["code"] = attack
    with pytest.raises(ValueError, match=r"not safe|is refused"):
        results_from_json(json.dumps(document))
    # a column named like a function cannot make a call safe either
    document = _document(fits["formula"])
    document["model"]["columns"].append("__import__")
    document["model"]["design"]["factors"][0]["code"] = attack
    with pytest.raises(ValueError, match="__import__"):
        results_from_json(json.dumps(document))
    assert not (tmp_path / "PWNED").exists()


def test_a_tampered_transform_is_refused(fits):
    document = _document(fits["formula"])
    for factor in document["model"]["design"]["factors"]:
        for transform in factor["transforms"].values():
            transform["class"] = "Standardize"  # center's state is a Center's
    with pytest.raises(ValueError, match=r"malformed .*the class 'Standardize'"):
        results_from_json(json.dumps(document))


def test_formulas_a_file_cannot_carry_are_refused_at_export(data):
    cut = 0.5
    res = ps.plume("y ~ x1 + I(x2 > cut)", data, k=1).fit()
    assert cut  # the formula read it from here
    with pytest.raises(ValueError, match=r"'cut' is neither a column.*save a pickle"):
        res.to_json()

    def double(values):
        return 2 * values

    res = ps.plume("y ~ x1 + double(x2)", data, k=1).fit()
    with pytest.raises(ValueError, match=r"calls double.*save a pickle"):
        res.to_json()


def test_a_dask_fit_loads_as_a_fit_without_data(data, new_data):
    da = pytest.importorskip("dask.array", reason="needs the dask extra")
    design = data[["x1", "x2"]].assign(const=1.0).to_numpy()
    res = ps.PolyhedralMixtureLogit(
        da.from_array(data["y"].to_numpy(), chunks=100),
        da.from_array(design, chunks=100),
        k=2,
    ).fit()
    loaded = results_from_json(res.to_json())
    rows = new_data[["x1", "x2"]].assign(const=1.0).to_numpy()
    np.testing.assert_allclose(
        loaded.predict(rows), np.asarray(res.predict(rows)), rtol=TOL, atol=TOL
    )
    assert _without_clock(loaded.summary()) == _without_clock(res.summary())


def test_a_file_that_is_no_text_is_named(tmp_path, fits):
    path = tmp_path / "fit.pkl"
    fits["formula"].save(path)  # a pickle, given to load_json
    with pytest.raises(ValueError, match=r"fit\.pkl is not a plumestats JSON export"):
        ps.load_json(path)
