"""PolyhedralClassifier: scikit-learn's estimator checks, and behaviour against
independent truth (statsmodels' Logit at K = 1, the engine, invariances)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose, assert_array_equal
from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

# plumestats.sklearn needs validate_data and __sklearn_tags__ (scikit-learn 1.6)
pytest.importorskip("sklearn", minversion="1.6")

from conftest import logistic_data
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from plumestats import (
    HardPolyhedralLogit,
    LabelFlipPolyhedralLogit,
    PolyhedralMixtureLogit,
)
from plumestats.api import FlipRateBoundaryWarning
from plumestats.datasets import simulate_polyhedron
from plumestats.sklearn import PolyhedralClassifier


# k=3 is left out: check_estimators_nan_inf fits 10 rows of 3 features, fewer
# than the k * (3 + 1) = 12 parameters, which the engine refuses by design.
@parametrize_with_checks(
    [
        PolyhedralClassifier(),
        PolyhedralClassifier(k=1),
        PolyhedralClassifier(gamma=np.inf),
        PolyhedralClassifier(inside=0, alpha=1e-3, mstep="bfgs"),
        PolyhedralClassifier(label_flips=True, alpha=1e-3),
    ]
)
def test_sklearn_compatible(estimator, check):
    # the checks' tiny, often separable data make the engine report separation,
    # re-issued as scikit-learn's ConvergenceWarning, and their clean labels a
    # flip rate of 0 (label_flips=True): expected there, not an error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        warnings.simplefilter("ignore", FlipRateBoundaryWarning)
        check(estimator)


@pytest.fixture(scope="module")
def polygon():
    data, _ = simulate_polyhedron(400, d=2, k=3, noise=0.05, random_state=3)
    return data[["x1", "x2"]], data["y"].to_numpy()


def test_k1_matches_statsmodels_logit():
    data = logistic_data(400, d=3, seed=1)
    X, y = data[["x1", "x2", "x3"]], data["y"]
    clf = PolyhedralClassifier(k=1, alpha=0.0).fit(X, y)
    logit = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
    assert_allclose(clf.predict_proba(X)[:, 1], logit.predict(), atol=1e-6)
    assert_allclose(clf.intercept_[0], logit.params["const"], atol=1e-6)
    assert_allclose(clf.coef_[0], logit.params[["x1", "x2", "x3"]], atol=1e-6)
    # at K = 1 the decision function is the linear predictor
    assert_allclose(clf.decision_function(X), logit.fittedvalues, atol=1e-6)


def test_matches_the_engine(polygon):
    X, y = polygon
    clf = PolyhedralClassifier(k=3, gamma=2.0, alpha=0.0).fit(X, y)
    res = PolyhedralMixtureLogit(y, sm.add_constant(X), k=3, gamma=2.0).fit()
    assert_allclose(clf.results_.params, res.params, rtol=1e-10)
    assert_allclose(clf.predict_proba(X)[:, 1], res.predict(), rtol=1e-9, atol=1e-12)
    assert list(clf.results_.params.index[:3]) == ["h1:Intercept", "h1:x1", "h1:x2"]


def test_auto_k_keeps_logistic_regression_on_a_half_space():
    # logistic data: more faces do not pay for their parameters under BIC
    data = logistic_data(400, d=3, seed=1)
    X, y = data[["x1", "x2", "x3"]], data["y"]
    clf = PolyhedralClassifier().fit(X, y)
    assert clf.k_ == 1 and sorted(clf.bic_) == [1, 2, 3]
    assert clf.bic_[1] == min(clf.bic_.values())
    single = PolyhedralClassifier(k=1).fit(X, y)
    assert_allclose(clf.predict_proba(X), single.predict_proba(X), rtol=1e-12)
    assert clf.coef_.shape == (1, 3)


def test_default_penalty_is_logistic_regressions_on_standardised_features():
    # alpha="auto" is 1/n: LogisticRegression(C=1)'s penalty, 0.5 ||b||^2 in
    # total, on the features scaled as StandardScaler scales them
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    data = logistic_data(300, d=3, seed=4)
    X, y = data[["x1", "x2", "x3"]] * [1.0, 50.0, 0.01], data["y"]
    ours = PolyhedralClassifier(k=1).fit(X, y)
    theirs = make_pipeline(StandardScaler(), LogisticRegression(tol=1e-12)).fit(X, y)
    assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
    with pytest.raises(ValueError, match='alpha must be a number >= 0 or "auto"'):
        PolyhedralClassifier(alpha="large").fit(X, y)


def test_auto_k_finds_the_faces_of_a_polygon(polygon):
    X, y = polygon  # a triangle with 5% label noise
    clf = PolyhedralClassifier(random_state=0).fit(X, y)
    assert clf.k_ == 3 and clf.coef_.shape == (3, 2)
    for k, bic in clf.bic_.items():
        fixed = PolyhedralClassifier(k=k, random_state=0).fit(X, y)
        assert bic == pytest.approx(fixed.results_.bic, rel=1e-12)
    assert clf.score(X, y) > PolyhedralClassifier(k=1).fit(X, y).score(X, y) + 0.1
    # a sequence is the candidates, each fitted
    assert sorted(PolyhedralClassifier(k=[2, 1]).fit(X, y).bic_) == [1, 2]


def test_auto_k_skips_candidates_with_more_parameters_than_samples():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]] * 2)
    y = np.array([0, 1, 0, 1] * 2)
    clf = PolyhedralClassifier().fit(X, y)  # K = 3 would have 9 for 8 samples
    assert sorted(clf.bic_) == [1, 2]


def test_auto_k_says_which_candidates_it_left_out(polygon, monkeypatch):
    """A candidate beyond K = 1 that cannot be fitted is left out of
    k="auto" with scikit-learn's FitFailedWarning naming it (it was left out
    without a word); a bad option is refused, not read as such a failure
    (reseat=-1 gave K = 1 silently)."""
    X, y = polygon
    fit_model = PolyhedralClassifier._fit_model

    def failing(self, y_float, design, k, sample_weight=None):
        if k == 2:
            raise np.linalg.LinAlgError("a made-up failure")
        return fit_model(self, y_float, design, k, sample_weight)

    monkeypatch.setattr(PolyhedralClassifier, "_fit_model", failing)
    with pytest.warns(FitFailedWarning, match=r"left out K = 2, .*made-up failure"):
        clf = PolyhedralClassifier(random_state=0).fit(X, y)
    assert 2 not in clf.bic_ and clf.k_ == 3
    monkeypatch.undo()
    with pytest.raises(ValueError, match="reseat must be an integer >= 0"):
        PolyhedralClassifier(reseat=-1).fit(X, y)


@pytest.mark.parametrize("k", ["two", [], [1.5], [True], 2.0, None])
def test_bad_k_is_named(polygon, k):
    X, y = polygon
    with pytest.raises((ValueError, TypeError), match="k must be"):
        PolyhedralClassifier(k=k).fit(X, y)


def test_an_array_of_ks_too_large_gets_the_fits_own_error():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), np.r_[np.zeros(6), np.ones(6)]
    with pytest.raises(ValueError, match="20 parameters but only 12 observations"):
        PolyhedralClassifier(k=np.array([1, 5]), alpha=0).fit(X, y)


def test_a_flip_rate_at_its_boundary_is_a_converged_fit():
    # little label noise: the flip rate's estimate is 0, a maximum on the
    # boundary, which the label-flip guide says to silence with its own class
    data, _ = simulate_polyhedron(200, d=2, k=3, noise=0.05, random_state=0)
    X, y = data[["x1", "x2"]], data["y"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = PolyhedralClassifier(k=3, label_flips=True).fit(X, y)
    categories = {warning.category for warning in caught}
    assert clf.converged_
    assert categories == {FlipRateBoundaryWarning}
    # in the estimator's words: no engine class or parameter named
    (message,) = {str(warning.message) for warning in caught}
    assert "label_flips=False" in message
    assert "PolyhedralMixtureLogit" not in message and "flip_logit" not in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", FlipRateBoundaryWarning)
        PolyhedralClassifier(k=3, label_flips=True).fit(X, y)


def test_labels_of_compatible_types_are_one_class():
    # str and np.str_ (or int and np.int64) sort together, as scikit-learn's
    # own classifiers take them
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    labels = np.where(X[:, 0] > 0, "yes", "no")
    y = np.array([str(v) if i % 2 else v for i, v in enumerate(labels)], dtype=object)
    assert {type(v) for v in y} == {str, np.str_}
    clf = PolyhedralClassifier(k=1).fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]


@pytest.mark.parametrize(
    ("weight", "match"), [(0, "all zero"), (-1.0, "negative"), (np.nan, "missing")]
)
def test_one_bad_sample_weight_for_all_is_named(weight, match):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    with pytest.raises(ValueError, match=f"^sample_weight .*{match}"):
        PolyhedralClassifier(k=1).fit(X, X[:, 0] > 0, sample_weight=weight)


def test_label_flips_match_the_engine():
    data, _ = simulate_polyhedron(3000, d=2, k=2, noise=0.1, random_state=0)
    X, y = data[["x1", "x2"]], data["y"].to_numpy()
    clf = PolyhedralClassifier(k=2, alpha=1e-6, label_flips=True).fit(X, y)
    res = LabelFlipPolyhedralLogit(y, sm.add_constant(X), k=2).fit(alpha=1e-6)
    assert_allclose(clf.results_.params, res.params, rtol=1e-10)
    assert clf.flip_rate_ == pytest.approx(res.flip_rate)
    assert 0.07 < clf.flip_rate_ < 0.13
    # probabilities of the labels as observed, never beyond the noise floors
    proba = clf.predict_proba(X)[:, 1]
    assert_allclose(proba, res.predict(), rtol=1e-9, atol=1e-12)
    assert proba.min() >= clf.flip_rate_ * (1 - 1e-9)
    assert proba.max() <= 1 - clf.flip_rate_ * (1 - 1e-9)
    assert_array_equal(clf.predict(X), (proba > 0.5).astype(int))
    assert clf.coef_.shape == (2, 2) and clf.intercept_.shape == (2,)


def test_label_flips_need_soft_gating(polygon):
    X, y = polygon
    with pytest.raises(ValueError, match="finite gamma"):
        PolyhedralClassifier(gamma=np.inf, label_flips=True).fit(X, y)


def test_hard_gating_is_spla1(polygon):
    X, y = polygon
    clf = PolyhedralClassifier(k=3, gamma=np.inf, alpha=0.0).fit(X, y)
    # the estimator makes no moves (reseat=0, its docs say why)
    res = HardPolyhedralLogit(y, sm.add_constant(X), k=3).fit(reseat=0)
    assert_allclose(clf.predict_proba(X)[:, 1], res.predict(), rtol=1e-9, atol=1e-12)
    assert clf.results_.model.gating == "hard"


def test_label_coding_invariance(polygon):
    X, y = polygon
    reference = PolyhedralClassifier(k=3).fit(X, y)
    for labels in (np.array(["out", "zin"]), np.array([False, True]), [-5, 7]):
        coded = np.asarray(labels)[y]
        clf = PolyhedralClassifier(k=3).fit(X, coded)
        assert_array_equal(clf.classes_, np.sort(np.asarray(labels)))
        assert_allclose(clf.predict_proba(X), reference.predict_proba(X), atol=1e-10)
        assert_array_equal(clf.predict(X), np.asarray(labels)[reference.predict(X)])


def test_inside_picks_the_class_that_forms_the_polyhedron(polygon):
    X, y = polygon
    # swapping the labels and the inside index gives the same polyhedron
    swapped = PolyhedralClassifier(k=3, inside=0).fit(X, 1 - y)
    direct = PolyhedralClassifier(k=3, inside=1).fit(X, y)
    assert_allclose(swapped.coef_, direct.coef_, rtol=1e-8)
    assert_allclose(
        swapped.predict_proba(X)[:, ::-1], direct.predict_proba(X), atol=1e-10
    )
    assert direct.score(X, y) > 0.9


def test_predict_agrees_with_decision_function(polygon):
    X, y = polygon
    clf = PolyhedralClassifier(k=3, gamma=0.5).fit(X, y)
    decision = clf.decision_function(X)
    assert_array_equal(clf.predict(X), clf.classes_[(decision > 0).astype(int)])
    proba = clf.predict_proba(X)
    assert_allclose(proba.sum(axis=1), 1.0)
    assert_allclose(np.log(proba[:, 1] / proba[:, 0]), decision, atol=1e-8)
    assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-12)


def test_pipeline_with_standard_scaler(polygon):
    X, y = polygon
    # internal standardisation is an exact reparametrisation, so scaling the
    # features first changes the weights but not a single prediction
    pipe = make_pipeline(StandardScaler(), PolyhedralClassifier(k=3)).fit(X, y)
    plain = PolyhedralClassifier(k=3).fit(X, y)
    assert_allclose(pipe.predict_proba(X), plain.predict_proba(X), atol=1e-6)
    assert pipe.score(X, y) == plain.score(X, y)


def test_grid_search_on_pima(pima):
    X, y = pima.drop(columns="diabetes"), pima["diabetes"]
    search = GridSearchCV(
        make_pipeline(StandardScaler(), PolyhedralClassifier(alpha=1e-4)),
        {"polyhedralclassifier__k": [1, 2], "polyhedralclassifier__gamma": [1, 5]},
        cv=3,
        error_score="raise",
    )
    search.fit(X, y)
    assert search.cv_results_["mean_test_score"].shape == (4,)
    # logistic regression reaches about 0.77 on pima; every setting is near it
    assert np.all(search.cv_results_["mean_test_score"] > 0.7)
    # StandardScaler hands on an array: the engine names its columns x1..x8
    names = search.best_estimator_[-1].results_.model.exog_names
    assert names == ["Intercept", *(f"x{j}" for j in range(1, 9))]


def test_feature_names_reach_the_results(polygon):
    X, y = polygon
    clf = PolyhedralClassifier(k=2).fit(X, y)
    assert_array_equal(clf.feature_names_in_, ["x1", "x2"])
    assert clf.n_features_in_ == 2
    assert list(clf.results_.model.exog_names) == ["Intercept", "x1", "x2"]


def test_multiclass_is_refused_with_a_clear_message(polygon):
    X, _ = polygon
    y = np.arange(len(X)) % 3
    with pytest.raises(ValueError, match=r"is a binary classifier.*OneVsRest"):
        PolyhedralClassifier().fit(X, y)
    with pytest.raises(ValueError, match="only 1 class"):
        PolyhedralClassifier().fit(X, np.ones(len(X)))
    # the label as the user wrote it, not numpy's repr (np.str_('a')), also
    # from labels held as Python objects
    for labels in (["a"] * len(X), pd.Series(["a"] * len(X), dtype=object)):
        with pytest.raises(ValueError, match=r"only 1 class: 'a'$"):
            PolyhedralClassifier().fit(X, labels)


@pytest.mark.parametrize("inside", [2, -1, True, "a"])
def test_bad_inside(polygon, inside):
    X, y = polygon
    with pytest.raises(ValueError, match="inside must be 0 or 1, the index"):
        PolyhedralClassifier(inside=inside).fit(X, y)


def test_engine_warnings_reach_users():
    # two points per class that one hyperplane separates: no finite maximum
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    with pytest.warns(SklearnConvergenceWarning, match="separation") as caught:
        clf = PolyhedralClassifier(k=1, alpha=0.0).fit(X, y)
    # one warning, in a class that filters of either library catch
    (warning,) = [w for w in caught if issubclass(w.category, Warning)]
    assert issubclass(warning.category, PerfectSeparationWarning)
    assert issubclass(warning.category, SklearnConvergenceWarning)
    assert warning.filename == __file__  # points at the caller's line
    assert not clf.converged_ and clf.separated_
    # its advice names this estimator's parameter, not the engine's fit keyword
    assert "PolyhedralClassifier(alpha=1e-3)" in str(warning.message)
    assert "fit(" not in str(warning.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a penalty gives a regular maximum
        assert PolyhedralClassifier(k=1, alpha=1e-2).fit(X, y).converged_


def test_non_convergence_is_both_libraries_convergence_warning(polygon):
    X, y = polygon
    with pytest.warns(SklearnConvergenceWarning, match="did not converge") as caught:
        clf = PolyhedralClassifier(k=3, max_iter=2).fit(X, y)
    (warning,) = caught
    assert issubclass(warning.category, ConvergenceWarning)
    assert not issubclass(warning.category, PerfectSeparationWarning)
    assert not clf.converged_ and not clf.separated_


def test_rank_deficient_features_do_not_warn(polygon):
    """A duplicated feature (or one-hot columns beside the added intercept) is
    harmless to predictions: its CollinearityWarning is inference-only, like
    HessianInversionWarning (the Notes), also when the model's design check
    raises it (it was let through from there)."""
    X, y = polygon
    X = X.assign(x3=X["x1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = PolyhedralClassifier(k=3, alpha=1e-3).fit(X, y)
    assert np.all(np.isfinite(clf.coef_))


def test_random_state_forms(polygon):
    X, y = polygon
    fits = [
        PolyhedralClassifier(k=3, n_init=2, init="random", random_state=rs).fit(X, y)
        for rs in (5, np.random.RandomState(5), np.random.default_rng(5))
    ]
    for clf in fits:
        assert clf.score(X, y) > 0.85


def test_import_plumestats_does_not_import_sklearn():
    code = "import sys, plumestats, plumestats.api; sys.exit('sklearn' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_pandas_labels_and_frames(polygon):
    X, y = polygon
    labels = pd.Series(np.where(y == 1, "inside", "outside"), dtype="category")
    clf = PolyhedralClassifier(k=3, inside=0).fit(X, labels)
    assert_array_equal(clf.classes_, ["inside", "outside"])
    assert clf.score(X, labels) > 0.9


def test_a_feature_named_intercept_keeps_its_name():
    # the design's own constant was also called "Intercept": two columns of one
    # name, refused since duplicate names are (a patsy dmatrix has that column)
    data, _ = simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=0)
    X, y = data[["x1", "x2"]], data["y"]
    clf = PolyhedralClassifier(k=2, random_state=0).fit(X, y)
    renamed = X.rename(columns={"x2": "Intercept"})
    clf_renamed = PolyhedralClassifier(k=2, random_state=0).fit(renamed, y)
    assert_allclose(clf_renamed.predict_proba(renamed), clf.predict_proba(X))
    assert "h1:Intercept" in clf_renamed.results_.params.index
    assert "h1:_Intercept" in clf_renamed.results_.params.index


def test_engine_advice_and_errors_speak_the_estimators_words(polygon):
    X, y = polygon
    with pytest.warns(SklearnConvergenceWarning, match=r"Increase max_iter\.$"):
        PolyhedralClassifier(k=2, max_iter=2).fit(X, y)
    # a class whose samples all weigh 0: y and sample_weight, not the
    # engine's endog and freq_weights
    weights = np.where(y == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^y must .* positive sample_weight") as info:
        PolyhedralClassifier(k=1).fit(X, y, sample_weight=weights)
    assert "freq_weights" not in str(info.value) and "endog" not in str(info.value)


def test_missing_labels_in_a_pandas_series_are_named(polygon):
    # pandas' text dtype with None: scikit-learn's own check said only
    # "Input contains NaN"
    X, y = polygon
    labels = pd.Series(np.where(y == 1, "in", "out"), dtype=object)
    labels.iloc[3] = None
    with pytest.raises(ValueError, match=r"y has 1 missing labels .* at sample 3"):
        PolyhedralClassifier(k=1).fit(X, labels)


def test_a_failed_refit_leaves_the_fitted_estimator_as_it_was(polygon):
    X, y = polygon
    clf = PolyhedralClassifier(k=2, random_state=0).fit(X, y)
    before = (clf.predict(X), clf.classes_.copy(), list(clf.feature_names_in_))
    labels = np.where(y == 1, "pos", "neg")
    with pytest.raises(ValueError, match="gamma"):
        clf.set_params(gamma=-1.0).fit(X.to_numpy(), labels)
    # the labels of the failed fit did not replace the fitted model's
    assert_array_equal(clf.predict(X), before[0])
    assert_array_equal(clf.classes_, before[1])
    assert list(clf.feature_names_in_) == before[2]
    # a refit that succeeds replaces every fitted attribute (no stale names)
    clf.set_params(gamma=1.0).fit(X.to_numpy(), labels)
    assert set(clf.classes_) == {"neg", "pos"} and not hasattr(clf, "feature_names_in_")


def test_fits_in_threads_leave_the_warning_machinery_intact(polygon):
    from concurrent.futures import ThreadPoolExecutor

    X, y = polygon
    filters = list(warnings.filters)

    def fit(i):
        return PolyhedralClassifier(k=1 + i % 3, random_state=0).fit(X, y).k_

    with ThreadPoolExecutor(2) as pool:
        assert sorted(set(pool.map(fit, range(8)))) == [1, 2, 3]
    assert warnings.filters == filters
    with pytest.warns(UserWarning, match="still shown"):
        warnings.warn("still shown", UserWarning, stacklevel=1)
