"""Formulas see the caller's names, as ``smf.logit``'s do (statsmodels' eval_env).

patsy evaluates every term of a formula as Python. A name that is not a column
of the data (a threshold, a function the analyst wrote) is looked up in the
namespace ``eval_env`` names: by default the caller's. ``np.log(...)`` resolves
from any module that imported numpy, so these tests use names that exist only
in a local scope.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose
from patsy import EvalEnvironment

import plumestats.api as ps
from plumestats._compat import STATSMODELS_EVAL_ENV_MAPPING
from plumestats.model import PolyhedralMixtureLogit

FORMULA = "y ~ I(x > cut) + square(z)"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"x": rng.normal(size=400), "z": rng.normal(size=400)})
    data["y"] = (data.x - 0.5 * data.z**2 + rng.normal(size=400) > -0.5).astype(int)
    return data


ENTRY_POINTS = {
    "plume": ps.plume,
    "spla1": ps.spla1,
    "plume_flip": ps.plume_flip,
    "from_formula": PolyhedralMixtureLogit.from_formula,
}


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
@pytest.mark.parametrize("eval_env", [None, 0, 1])
def test_local_variable_and_function_resolve(name, eval_env, frame):
    cut = 0.25

    def square(values):
        return np.asarray(values) ** 2

    kwargs = {} if eval_env is None else {"eval_env": eval_env}
    model = ENTRY_POINTS[name](FORMULA, frame, k=2, **kwargs)
    expected = np.column_stack([np.ones(len(frame)), frame.x > cut, square(frame.z)])
    assert_allclose(np.asarray(model.exog), expected)
    assert list(model.exog_names) == ["Intercept", "I(x > cut)[T.True]", "square(z)"]


def test_k1_equals_logit_with_local_names(frame):
    cut = 0.25

    def square(values):
        return np.asarray(values) ** 2

    logit = smf.logit(FORMULA, frame).fit(disp=0)
    plume = ps.plume(FORMULA, frame, k=1).fit()
    assert_allclose(plume.params, logit.params, rtol=1e-8)
    # new data go through the same terms, with the names captured at the fit
    new = frame.head(7)
    assert_allclose(plume.predict(new), logit.predict(new), rtol=1e-8)
    assert square(3) == 9 and cut


def test_select_k_sees_the_callers_names(frame):
    cut = 0.25

    def square(values):
        return np.asarray(values) ** 2

    sel = ps.select_k(FORMULA, frame, ks=(1,))
    assert list(sel.best.model.exog_names)[1:] == ["I(x > cut)[T.True]", "square(z)"]
    assert_allclose(sel.best.model.exog[:, 1], frame.x > cut)
    assert square(2) == 4


def _outer_scope(frame, eval_env):
    cut = -0.25  # the outer frame's threshold differs from the inner one
    assert cut
    return _inner_scope(frame, eval_env)


def _inner_scope(frame, eval_env):
    cut = 0.25

    def square(values):
        return np.asarray(values) ** 2

    assert cut and square(1) == 1
    return ps.plume("y ~ I(x > cut)", frame, k=1, eval_env=eval_env)


@pytest.mark.parametrize(("eval_env", "threshold"), [(1, 0.25), (2, -0.25)])
def test_depth_counts_frames_above_the_caller(frame, eval_env, threshold):
    # 1 is the caller (as smf.logit's 1); 2 is the caller's caller
    model = _outer_scope(frame, eval_env)
    assert_allclose(model.exog[:, 1], frame.x > threshold)


def test_depth_matches_smf_logit(frame):
    def inner(fn, eval_env):
        cut = 0.25
        assert cut
        return fn("y ~ I(x > cut)", frame, eval_env=eval_env)

    def outer(fn, eval_env):
        cut = -0.25
        assert cut
        return inner(fn, eval_env)

    plume_k1 = functools.partial(ps.plume, k=1)  # a partial adds no frame
    for depth in (None, 1, 2):
        assert_allclose(outer(plume_k1, depth).exog, outer(smf.logit, depth).exog)


def test_empty_namespace_refuses_local_names(frame):
    cut = 0.25
    assert cut
    with pytest.raises(ValueError, match="name 'cut' is not defined"):
        ps.plume("y ~ I(x > cut)", frame, k=1, eval_env=-1)
    # columns of the data still resolve
    model = ps.plume("y ~ x", frame, k=1, eval_env=-1)
    assert list(model.exog_names) == ["Intercept", "x"]


@pytest.mark.parametrize("bad", ["caller", 1.5, True, -2])
def test_bad_eval_env_is_named(frame, bad):
    error = ValueError if bad == -2 else TypeError
    with pytest.raises(error, match="eval_env"):
        ps.plume("y ~ x", frame, k=1, eval_env=bad)


def test_patsy_environment_is_used_as_given(frame):
    env = EvalEnvironment([{"cut": 0.25}])
    # statsmodels 0.15 deprecates patsy environments (in favour of a dict)
    expect = (
        pytest.warns(FutureWarning)
        if STATSMODELS_EVAL_ENV_MAPPING
        else contextlib.nullcontext()
    )
    with expect:
        model = ps.plume("y ~ I(x > cut)", frame, k=1, eval_env=env)
    assert_allclose(model.exog[:, 1], frame.x > 0.25)


def test_dict_namespace_with_either_statsmodels(frame):
    # statsmodels 0.15 takes a dict; with 0.14 it becomes a patsy environment
    model = ps.plume("y ~ I(x > cut)", frame, k=1, eval_env={"cut": 0.25})
    assert_allclose(model.exog[:, 1], frame.x > 0.25)


def test_select_k_in_worker_processes_sees_the_callers_names(frame):
    # the candidate fits run in joblib's workers: the names are captured first
    pytest.importorskip("joblib")
    cut = 0.25

    def square(values):
        return np.asarray(values) ** 2

    options = {"ks": (1, 2), "gammas": (1.0,), "alpha": 1e-2}
    serial = ps.select_k(FORMULA, frame, **options)
    parallel = ps.select_k(FORMULA, frame, n_jobs=2, **options)
    assert_allclose(parallel.table["llf"], serial.table["llf"], rtol=1e-10)
    assert_allclose(parallel.best.model.exog[:, 1], frame.x > cut)
    assert square(2) == 4


def test_subset_rows_are_the_only_ones_checked():
    # statsmodels' from_formula keeps the subset's rows before anything else
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=200)})
    data["y"] = (rng.random(200) < 1 / (1 + np.exp(-data.x1))).astype(int)
    data.loc[0, "x1"] = np.inf
    data.loc[1, "x1"] = np.nan
    keep = data.index >= 2
    ours = ps.plume("y ~ x1", data, k=1, subset=keep, missing="raise").fit()
    reference = smf.logit("y ~ x1", data, subset=keep, missing="raise").fit(disp=0)
    assert ours.nobs == reference.nobs == 198
    assert_allclose(ours.params, reference.params, rtol=1e-8)


def test_a_stray_text_token_among_numbers_is_named():
    # a "?" for a missing value, as in UCI files, would make a factor of the
    # whole column
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=100), "y": np.arange(100) % 2})
    data["x2"] = rng.normal(size=100).astype(str)
    data.loc[7, "x2"] = "?"
    with pytest.raises(ValueError, match=r"'x2' holds numbers with 1 text .*'\?'"):
        ps.plume("y ~ x1 + x2", data, k=1)
    # text codes with few numbers stay a factor, as before
    data["x2"] = np.where(np.arange(100) % 3, "1", "2")
    data.loc[7, "x2"] = "x"
    ps.plume("y ~ x1 + x2", data, k=1)


def test_names_inside_strings_are_no_columns():
    # an unused all-NaN column 'a' and an all-inf 'b' named only inside
    # strings of the formula: statsmodels fits every row, so does plume
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=200), "g": rng.choice(list("abc"), 200)})
    data["my x"] = rng.normal(size=200)
    data["y"] = (rng.random(200) < 0.5).astype(int)
    data["a"], data["b"], data["x"] = np.nan, np.inf, np.nan
    for formula in ("y ~ x1 + C(g, Treatment('a'))", "y ~ I(g == 'b') + Q('my x')"):
        ours = ps.plume(formula, data, k=1).fit()
        reference = smf.logit(formula, data).fit(disp=0)
        assert ours.nobs == reference.nobs == 200
        assert_allclose(ours.params, reference.params, rtol=1e-6)


def _outcome_frame():
    data, _ = ps.simulate_polyhedron(600, d=2, k=2, noise=0.05, random_state=0)
    data["ys"] = np.where(data.y == 1, "yes", "no")
    data["ypm"] = 2 * data.y - 1
    return data


def test_an_outcome_coded_by_a_contrast_is_refused():
    """C(ys, Sum) gives patsy's +-1 columns, no 0/1 outcome: it was fitted as
    one, to an impossible log-likelihood (statsmodels refuses any outcome of
    several columns)."""
    data = _outcome_frame()
    for coding in ("Sum", "Helmert", "Poly"):
        with pytest.raises(ValueError, match="coded by a contrast"):
            ps.plume(f"C(ys, {coding}) ~ x1 + x2", data, k=1)


def test_outcome_levels_come_from_the_factor_not_its_column_names():
    data = _outcome_frame()
    plain = ps.plume("ys ~ x1 + x2", data, k=1).fit()
    ordered = ps.plume("C(ys, levels=['yes', 'no']) ~ x1 + x2", data, k=1, inside="no")
    assert ordered.endog_names == "C(ys, levels=['yes', 'no'])"
    assert ordered.outcome_mapping == {"yes": 0, "no": 1}
    assert_allclose(ordered.fit().params, -plain.params, rtol=1e-8)
    # numeric codes stay numbers: inside=-1 names the level -1
    codes = ps.plume("C(ypm) ~ x1 + x2", data, k=1, inside=-1)
    assert codes.outcome_mapping == {-1: 0, 1: 1}
    assert_allclose(codes.fit().params, -plain.params, rtol=1e-8)
    # also where statsmodels subsets the rows for frequency weights (a row
    # dropped), which loses the outcome's design info
    data.loc[3, "x1"] = np.nan
    weights = 1.0 + np.arange(len(data)) % 3
    weighted = ps.plume("C(ypm) ~ x1 + x2", data, k=1, inside=-1, freq_weights=weights)
    assert weighted.outcome_mapping == {-1: 0, 1: 1}


def test_an_unused_category_of_the_outcome_is_no_level():
    data = _outcome_frame()
    data["yc"] = pd.Categorical(data.ys, categories=["maybe", "no", "yes"])
    by_formula = ps.plume("yc ~ x1 + x2", data, k=1)
    assert by_formula.outcome_mapping == {"no": 0, "yes": 1}
    exog = data[["x1", "x2"]].assign(const=1.0)
    by_arrays = ps.PolyhedralMixtureLogit(data.yc, exog, k=1).fit()
    assert_allclose(by_formula.fit().llf, by_arrays.llf, rtol=1e-10)


def test_text_columns_inside_expressions_are_the_expressions_business():
    """An expression that converts a text column itself (an attribute, or
    pd.to_numeric) is the expression's business (statsmodels fits these); a
    column read as it is, alone or in an expression patsy would make a
    factor of (I(t), np.log(t)), is refused as numbers stored as text."""
    data = _outcome_frame()
    rng = np.random.default_rng(0)
    data["zip"] = [f"{z:05d}" for z in rng.integers(0, 99999, len(data))]
    data["bp"] = data.x2.round(3).astype(str)
    data.loc[[3, 9], "bp"] = "?"
    for formula in (
        "y ~ x1 + I(zip.str.startswith('0'))",
        "y ~ x1 + I(pd.to_numeric(bp, errors='coerce'))",
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the two '?' rows dropped
            ours = ps.plume(formula, data, k=1).fit()
            theirs = smf.logit(formula, data).fit(disp=0)
        assert_allclose(ours.params, theirs.params, rtol=1e-6)
    for formula in ("y ~ x1 + zip", "y ~ x1 + bp", "y ~ I(zip)", "y ~ np.log(bp)"):
        with pytest.raises(ValueError, match=r"column '(zip|bp)' holds numbers"):
            ps.plume(formula, data, k=1)


def test_formula_errors_are_caught_as_statsmodels_users_catch_them():
    """``smf.logit`` raises patsy's ``PatsyError`` where a formula cannot be
    applied (an unseen level or a missing column in new data, a name that is
    nowhere): plumestats' clearer ``ValueError`` is one too, so ``except
    PatsyError`` written for Logit still catches it (a parity probe's find)."""
    from patsy import PatsyError

    data = pd.DataFrame({"x": np.arange(60.0) % 7, "g": ["a", "b", "c"] * 20})
    data["y"] = (np.arange(60) % 4 == 0).astype(int)
    res = ps.plume("y ~ x + C(g)", data, k=1).fit()
    logit = smf.logit("y ~ x + C(g)", data).fit(disp=0)
    for new in ({"x": [1.0], "g": ["zzz"]}, {"g": ["a"]}):
        with pytest.raises(PatsyError):
            logit.predict(pd.DataFrame(new))
        with pytest.raises(PatsyError, match="could not apply the model's formula"):
            res.predict(pd.DataFrame(new))
        with pytest.raises(ValueError, match="could not apply the model's formula"):
            res.predict(pd.DataFrame(new))
    with pytest.raises(PatsyError, match="could not build the design"):
        ps.plume("y ~ x + not_a_column_anywhere", data)
