"""select_k, stratified folds and compare_lr_test,
against simulated truth, statsmodels and hand computation."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import logistic_data
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

from plumestats import LabelFlipPolyhedralLogit
from plumestats._candidate_fits import stratified_folds
from plumestats.api import (
    compare_lr_test,
    plume,
    select_k,
    simulate_plume,
    simulate_polyhedron,
)
from plumestats.selection import SELECT_K_COLUMNS, _keep_k1_unless_beaten

# select_k summarises candidates that stopped short (K above the truth) in one
# warning; expected on these grids, every other warning is still an error
SUMMARY_WARNING = (
    "ignore:\\d+ of \\d+ candidate fits:"
    "statsmodels.tools.sm_exceptions.ConvergenceWarning"
)


@pytest.mark.filterwarnings(SUMMARY_WARNING)
def test_bic_recovers_three_faces():
    # Measured on seeds 0-19 (N = 300, 10% label noise, the default grid):
    # K = 3 chosen 20 times of 20, about 0.4 s a seed.
    chosen = []
    for seed in range(10):
        data, _ = simulate_polyhedron(300, d=2, k=3, noise=0.1, random_state=seed)
        chosen.append(select_k("y ~ x1 + x2", data).chosen[0])
    assert sum(k == 3 for k in chosen) >= 9, chosen


@pytest.fixture(scope="module")
def polygon() -> pd.DataFrame:
    data, _ = simulate_polyhedron(300, d=2, k=3, noise=0.1, random_state=0)
    return data


@pytest.fixture(scope="module")
def cv_selection(polygon):
    return select_k(
        "y ~ x1 + x2", polygon, ks=(1, 2, 3), gammas=(1.0, 5.0), criterion="cv", cv=5
    )


def test_table_layout(cv_selection):
    table = cv_selection.table
    assert tuple(table.columns) == SELECT_K_COLUMNS
    assert table[["k", "gamma"]].fillna(-1).values.tolist() == [
        [1, -1],
        [2, 1.0],
        [2, 5.0],
        [3, 1.0],
        [3, 5.0],
    ]
    assert table["converged"].dtype == bool


def test_table_matches_direct_fits(polygon, cv_selection):
    table = cv_selection.table.set_index(["k", "gamma"])
    res = plume("y ~ x1 + x2", polygon, k=2, gamma=5.0).fit(reseat=0)
    assert_allclose(
        table.loc[(2, 5.0), ["llf", "aic", "bic"]], [res.llf, res.aic, res.bic]
    )
    logit = sm.Logit.from_formula("y ~ x1 + x2", polygon).fit(disp=0)
    row = cv_selection.table.iloc[0]
    assert_allclose([row.llf, row.aic, row.bic], [logit.llf, logit.aic, logit.bic])


def test_cv_columns_by_hand(polygon, cv_selection):
    """The K = 2, gamma = 1 row recomputed from its folds with statsmodels-free
    arithmetic: held-out P(observed y) from each fold's own fit."""
    folds = cv_selection.folds
    y = polygon["y"].to_numpy()
    logprob = np.empty(len(y))
    for fold in range(5):
        test = folds == fold
        # select_k's fits make no moves by default
        res = plume("y ~ x1 + x2", polygon[~test], k=2, gamma=1.0).fit(reseat=0)
        p1 = np.asarray(res.predict(polygon[test]))
        logprob[test] = np.log(np.where(y[test] == 1, p1, 1 - p1))
    fold_loss = [-logprob[folds == f].mean() for f in range(5)]
    row = cv_selection.table.iloc[1]
    assert_allclose(row.cv_logloss, -logprob.mean(), rtol=1e-6)
    assert_allclose(
        row.cv_logloss_se, np.std(fold_loss, ddof=1) / np.sqrt(5), rtol=1e-5
    )
    assert_allclose(row.cv_accuracy, np.mean(logprob > np.log(0.5)))


def test_cv_choice_and_best(cv_selection):
    table = cv_selection.table
    best_row = table.loc[table["cv_logloss"].idxmin()]
    assert cv_selection.chosen == (best_row.k, best_row.gamma)
    assert cv_selection.chosen[0] == 3
    assert cv_selection.best.k == 3 and cv_selection.best.gamma == best_row.gamma
    assert_allclose(cv_selection.best.llf, best_row.llf)
    assert table["cv_accuracy"].iloc[-1] > table["cv_accuracy"].iloc[0] + 0.2


def test_aic_and_bic_columns_without_cv(polygon):
    sel = select_k("y ~ x1 + x2", polygon, ks=(1, 2), gammas=(2.0,), criterion="aic")
    assert sel.table[["cv_accuracy", "cv_logloss_se"]].isna().all().all()
    assert sel.criterion == "aic" and sel.chosen == (2, 2.0)
    res = sel.best
    nobs, n_params = res.nobs, len(res.params)
    assert_allclose(res.aic, -2 * res.llf + 2 * n_params)
    assert_allclose(res.bic, -2 * res.llf + np.log(nobs) * n_params)


def test_a_single_k_or_gamma_is_a_grid_of_one(polygon):
    """ks=2, gammas=1.0 (was "'int' object is not iterable")."""
    scalar = select_k("y ~ x1 + x2", polygon, ks=2, gammas=1.0)
    grid = select_k("y ~ x1 + x2", polygon, ks=(2,), gammas=(1.0,))
    pd.testing.assert_frame_equal(scalar.table, grid.table)
    assert list(scalar.table["k"]) == [2]


def test_hard_gating_candidate(polygon):
    sel = select_k("y ~ x1 + x2", polygon, ks=(3,), gammas=(np.inf,))
    assert sel.best.model.gating == "hard"
    assert np.isinf(sel.table["gamma"].iloc[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"criterion": "loo"}, "criterion must be one of"),
        ({"ks": ()}, "ks is empty"),
        ({"ks": (0, 1)}, "every k in ks must be an integer >= 1"),
        (
            {"gammas": (-1.0,)},
            "every gamma in gammas but np.inf .SPLA1. must be a finite number > 0",
        ),
        (
            {"gammas": ("1",)},
            "every gamma in gammas but np.inf .SPLA1. must be a finite number > 0",
        ),
        ({"ks": "2"}, "ks must be a number or a sequence of numbers"),
        ({"criterion": "cv", "cv": 1}, "cv must be an integer >= 2"),
        ({"criterion": "cv", "cross_validate": False}, "needs cross_validate"),
    ],
)
def test_bad_arguments(polygon, kwargs, message):
    with pytest.raises(ValueError, match=message):
        select_k("y ~ x1 + x2", polygon, **kwargs)


def test_stratified_folds():
    y = np.r_[np.zeros(53), np.ones(27)]
    folds = stratified_folds(y, 10, np.random.default_rng(0))
    counts = np.bincount(folds, minlength=10)
    assert counts.max() - counts.min() <= 1
    for cls in (0, 1):
        per_fold = np.bincount(folds[y == cls], minlength=10)
        assert per_fold.max() - per_fold.min() <= 1
    assert_array_equal(folds, stratified_folds(y, 10, np.random.default_rng(0)))
    with pytest.raises(ValueError, match=r"class 1\.0 has 27; use fewer folds"):
        stratified_folds(y, 30, np.random.default_rng(0))


def test_compare_lr_test_matches_statsmodels():
    data = logistic_data(400, d=3, seed=2)
    # statsmodels' own compare_lr_test (on OLS results) is the oracle
    small = sm.OLS.from_formula("x3 ~ x1", data).fit()
    large = sm.OLS.from_formula("x3 ~ x1 + x2 + y", data).fit()
    assert_allclose(compare_lr_test(small, large), large.compare_lr_test(small))
    # K = 1 PLUME fits are Logit fits: the same test from either
    logit = [
        sm.Logit.from_formula(f, data).fit(disp=0)
        for f in ("y ~ x1", "y ~ x1 + x2 + x3")
    ]
    ours = compare_lr_test(
        plume("y ~ x1", data, k=1).fit(), plume("y ~ x1 + x2 + x3", data, k=1).fit()
    )
    assert_allclose(ours[:2], compare_lr_test(*logit)[:2], rtol=1e-6)
    assert ours.df == 2
    assert_allclose(ours.pvalue, stats.chi2.sf(2 * (logit[1].llf - logit[0].llf), 2))


def test_compare_lr_test_k_against_k_plus_one(polygon):
    two = plume("y ~ x1 + x2", polygon, k=2).fit()
    three = plume("y ~ x1 + x2", polygon, k=3).fit()
    result = compare_lr_test(two, three)
    assert result.df == 3
    assert_allclose(result.statistic, 2 * (three.llf - two.llf))
    assert_allclose(result.pvalue, stats.chi2.sf(result.statistic, 3))
    assert "non-regular" in compare_lr_test.__doc__
    with pytest.raises(ValueError, match="pass the smaller model first"):
        compare_lr_test(three, two)
    other = plume("y ~ x1 + x2", polygon.iloc[:200], k=3).fit()
    with pytest.raises(ValueError, match="different observations"):
        compare_lr_test(two, other)
    # as many observations, other data: the outcomes tell (before: a
    # confident statistic and p-value)
    shuffled = polygon.sample(frac=1.0, random_state=0).reset_index(drop=True)
    with pytest.raises(ValueError, match="different outcomes"):
        compare_lr_test(two, plume("y ~ x1 + x2", shuffled, k=3).fit())


def test_compare_lr_test_warns_on_a_worse_larger_fit():
    # only llf, df_model and nobs are read: stand-ins for a larger fit stuck
    # at a poorer local maximum than the restricted one
    small = SimpleNamespace(llf=-100.0, df_model=5.0, nobs=300)
    large = SimpleNamespace(llf=-101.0, df_model=8.0, nobs=300)
    with pytest.warns(ConvergenceWarning, match="worse local maximum"):
        result = compare_lr_test(small, large)
    assert result == (-2.0, 1.0, 3)


def test_string_outcome_and_inside_label(polygon):
    labelled = polygon.assign(lab=np.where(polygon["y"] == 1, "yes", "no"))
    grid = {"ks": (1, 3), "gammas": (1.0,), "criterion": "cv", "cv": 5}
    by_label = select_k("lab ~ x1 + x2", labelled, inside="yes", **grid)
    by_code = select_k("y ~ x1 + x2", polygon, **grid)
    assert_allclose(
        by_label.table.to_numpy(dtype=float),
        by_code.table.to_numpy(dtype=float),
        rtol=1e-10,
    )
    assert_array_equal(by_label.folds, by_code.folds)


def test_n_se_rule_on_paired_held_out_scores():
    rng = np.random.default_rng(0)
    base = rng.normal(-0.5, 0.3, 500)
    noise = rng.normal(0.0, 0.05, 500)  # SE of the paired difference ~0.0022
    noise -= noise.mean()  # so that the mean gain is exactly ``gain``
    table = pd.DataFrame({"k": [1, 2, 3], "cv_logloss": [0.5, 0.499, 0.4985]})

    def chosen(gain, n_se):
        held_out = [base, base + noise, base + gain + noise[::-1]]
        return _keep_k1_unless_beaten(table, held_out, 2, n_se)

    assert chosen(0.001, 1.0) == 0  # half an SE: logistic regression stays
    assert chosen(0.004, 1.0) == 2  # 1.8 SEs: the faces pay for themselves
    assert chosen(0.004, 2.0) == 0
    assert _keep_k1_unless_beaten(table, [base] * 3, 0, 1.0) == 0  # K = 1 best


@pytest.mark.filterwarnings(SUMMARY_WARNING)
def test_n_se_keeps_faces_that_pay(polygon, cv_selection):
    guarded = select_k(
        "y ~ x1 + x2",
        polygon,
        ks=(1, 2, 3),
        gammas=(1.0, 5.0),
        criterion="cv",
        cv=5,
        n_se=2.0,
    )
    assert guarded.chosen == cv_selection.chosen and guarded.chosen[0] == 3
    assert_array_equal(
        guarded.table.to_numpy(dtype=float), cv_selection.table.to_numpy(dtype=float)
    )
    # a margin no polyhedron can reach keeps logistic regression
    kept = select_k(
        "y ~ x1 + x2", polygon, ks=(1, 2), gammas=(1.0,), criterion="cv", cv=5, n_se=1e9
    )
    assert kept.chosen[0] == 1 and kept.best.k == 1


def test_n_se_needs_cross_validation(polygon):
    with pytest.raises(ValueError, match="criterion='cv'"):
        select_k("y ~ x1 + x2", polygon, ks=(1, 2), n_se=1.0)
    with pytest.raises(ValueError, match="n_se"):
        select_k("y ~ x1 + x2", polygon, ks=(1, 2), criterion="cv", n_se=-1.0)


@pytest.fixture(scope="module")
def noisy_polygon():
    data, _ = simulate_polyhedron(1200, d=2, k=3, noise=0.1, random_state=4)
    return data


def test_select_k_under_label_flips(noisy_polygon):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning leaks from the candidates
        sel = select_k(
            "y ~ x1 + x2",
            noisy_polygon,
            ks=(1, 2, 3),
            gammas=(1.0,),
            alpha=1e-4,
            label_flips=True,
            criterion="cv",
            cv=4,
        )
    assert sel.chosen == (3, 1.0)
    assert isinstance(sel.best.model, LabelFlipPolyhedralLogit)
    assert list(sel.table.columns) == [*SELECT_K_COLUMNS, "flip_rate"]
    assert sel.table["converged"].all()
    assert 0.05 < sel.table["flip_rate"].iloc[-1] < 0.15
    assert sel.table["bic"].iloc[-1] == pytest.approx(sel.best.bic)
    # the held-out log-loss, recomputed through the flip model's own likelihood
    model = LabelFlipPolyhedralLogit.from_formula("y ~ x1 + x2", noisy_polygon, k=3)
    y, x = model.endog, model.exog
    logprob = np.empty(y.size)
    for fold in range(4):
        test = sel.folds == fold
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fold_fit = LabelFlipPolyhedralLogit(y[~test], x[~test], k=3).fit(
                alpha=1e-4, random_state=None
            )
        held_out = LabelFlipPolyhedralLogit(y[test], x[test], k=3)
        logprob[test] = held_out.loglikeobs(np.asarray(fold_fit.params))
    assert sel.table["cv_logloss"].iloc[-1] == pytest.approx(-logprob.mean(), rel=1e-9)


def test_select_k_flips_at_zero_are_regular_fits():
    clean = simulate_plume(800, [[1.0, 2.0, 0.5], [1.0, -1.5, 1.0]], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sel = select_k("y ~ x1 + x2", clean, ks=(1, 2), gammas=(1.0,), label_flips=True)
    assert sel.table["converged"].all()
    # the true two faces need no flips; one face uses them for the other face
    assert sel.table["flip_rate"].iloc[1] < 1e-6 < sel.table["flip_rate"].iloc[0]
    with pytest.raises(ValueError, match="label_flips=True needs soft gates"):
        select_k("y ~ x1 + x2", clean, ks=(2,), gammas=(np.inf,), label_flips=True)


def test_fold_fits_that_separate_are_counted():
    # one of K = 3's five fold fits separates (a hyperplane norm of about
    # 1e3): its held-out log-loss is 2.6 where K = 2's is 0.59, and before,
    # nothing in the table said why
    data, _ = simulate_polyhedron(300, d=2, k=3, noise=0.05, random_state=1)
    grid = {"ks": (1, 2, 3), "gammas": (1.0,), "criterion": "cv", "cv": 5}
    message = r"folds found separation \(k=3, gamma=1: 1 of 5\).*alpha=1e-3"
    with pytest.warns(PerfectSeparationWarning, match=message) as caught:
        sel = select_k("y ~ x1 + x2", data, random_state=3, **grid)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert sel.table["cv_separated"].tolist() == [0, 0, 1]
    # the advice works: with the penalty no fold separates, and the triangle
    # is chosen
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        penalised = select_k("y ~ x1 + x2", data, random_state=3, alpha=1e-3, **grid)
    assert penalised.table["cv_separated"].tolist() == [0, 0, 0]
    assert penalised.chosen[0] == 3
    bic = select_k("y ~ x1 + x2", data, ks=(1,), gammas=(1.0,))
    assert bic.table["cv_separated"].isna().all()  # no folds, no count
