"""Robust covariances, t inference and statsmodels' fit keywords.

HC0 and the cluster sandwiches are statsmodels' own, so at K = 1 they equal
``Logit``'s. HC1 to HC3 follow R's ``sandwich::vcovHC`` for a glm; they are
checked against that definition written out here with numpy (statsmodels'
``Logit`` returns HC0 for all three, which the last test of that group pins).
At K > 1 the leverage of HC2 and HC3 is ``get_influence().hat_matrix_diag``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import unwrapped
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import expit

import plumestats.api as ps


@pytest.fixture(scope="module")
def spector():
    data = sm.datasets.spector.load_pandas()
    return data.endog, sm.add_constant(data.exog)


@pytest.fixture(scope="module")
def logistic():
    """A larger logistic sample, with clusters of correlated rows."""
    rng = np.random.default_rng(11)
    nobs = 600
    groups = rng.integers(0, 40, nobs)
    shared = rng.normal(size=40)[groups]
    x = np.column_stack([rng.normal(size=nobs) + shared, rng.normal(size=nobs)])
    exog = sm.add_constant(pd.DataFrame(x, columns=["x1", "x2"]))
    prob = expit(0.3 + x @ np.array([1.0, -0.7]) + 0.8 * shared)
    endog = pd.Series((rng.random(nobs) < prob).astype(float), name="y")
    return endog, exog, groups, rng.integers(0, 12, nobs)


def _glm_definition(endog, exog, power: float, scale: float = 1.0) -> np.ndarray:
    """R's vcovHC for a logistic glm: bread (X'WX)^-1, meat sum s s' / (1-h)^power,
    h the glm hat values diag(W^1/2 X (X'WX)^-1 X'W^1/2)."""
    x = np.asarray(exog, dtype=float)
    y = np.asarray(endog, dtype=float)
    beta = sm.Logit(y, x).fit(disp=0, tol=1e-14, maxiter=100).params
    p = expit(x @ beta)
    w = p * (1 - p)
    bread = np.linalg.inv(x.T @ (w[:, None] * x))
    hat = w * np.einsum("ij,jk,ik->i", x, bread, x)
    scores = (y - p)[:, None] * x / ((1 - hat) ** (power / 2))[:, None]
    return scale * bread @ (scores.T @ scores) @ bread


class TestLogitParityAtK1:
    @pytest.mark.parametrize("cov_type", ["HC0", "cluster"])
    def test_statsmodels_sandwiches(self, logistic, cov_type):
        endog, exog, groups, _ = logistic
        # statsmodels warns on an empty cov_kwds: pass it only with clusters
        kwds = {"cov_kwds": {"groups": groups}} if cov_type == "cluster" else {}
        logit = sm.Logit(endog, exog).fit(disp=0, cov_type=cov_type, **kwds)
        ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(
            cov_type=cov_type, **kwds
        )
        assert_allclose(ours.cov_params(), logit.cov_params(), rtol=1e-8)

    @pytest.mark.parametrize(
        "options",
        [
            {"use_correction": False},
            {"use_correction": True, "df_correction": False},
            {"two_way": True},
            {"two_way": True, "use_correction": False},
        ],
        ids=["no-correction", "no-df-correction", "two-way", "two-way-no-correction"],
    )
    def test_cluster_options(self, logistic, options):
        endog, exog, groups, other = logistic
        options = dict(options)
        if options.pop("two_way", False):
            options["groups"] = np.column_stack([groups, other])
        else:
            options["groups"] = groups
        logit = sm.Logit(endog, exog).fit(
            disp=0, cov_type="cluster", cov_kwds=dict(options), use_t=True
        )
        ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(
            cov_type="cluster", cov_kwds=dict(options), use_t=True
        )
        assert_allclose(ours.cov_params(), logit.cov_params(), rtol=1e-8)
        # df_correction: t inference on G - 1 degrees of freedom, as statsmodels
        assert_allclose(ours.pvalues, logit.pvalues, rtol=1e-8)
        assert_allclose(ours.conf_int(), logit.conf_int(), rtol=1e-8)

    @pytest.mark.parametrize(("cov_type", "power"), [("HC2", 1.0), ("HC3", 2.0)])
    def test_hc2_hc3_equal_the_glm_definition(self, logistic, cov_type, power):
        endog, exog, _, _ = logistic
        ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(cov_type=cov_type)
        assert_allclose(
            ours.cov_params(), _glm_definition(endog, exog, power), rtol=1e-8
        )

    def test_hc1_is_hc0_times_n_over_n_minus_p(self, logistic):
        endog, exog, _, _ = logistic
        nobs, n_params = exog.shape
        ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(cov_type="HC1")
        expected = _glm_definition(endog, exog, 0.0, nobs / (nobs - n_params))
        assert_allclose(ours.cov_params(), expected, rtol=1e-8)

    def test_on_spector_too(self, spector):
        endog, exog = spector
        for cov_type, power in [("HC2", 1.0), ("HC3", 2.0)]:
            ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(cov_type=cov_type)
            assert_allclose(
                ours.cov_params(), _glm_definition(endog, exog, power), rtol=1e-8
            )

    def test_statsmodels_logit_aliases_them_and_we_do_not(self, spector):
        endog, exog = spector
        fits = {
            cov_type: ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(cov_type=cov_type)
            for cov_type in ("HC0", "HC1", "HC2", "HC3")
        }
        logit_hc0 = sm.Logit(endog, exog).fit(disp=0, cov_type="HC0").bse
        logit_hc3 = sm.Logit(endog, exog).fit(disp=0, cov_type="HC3").bse
        assert_allclose(logit_hc3, logit_hc0, rtol=1e-12)  # statsmodels' wart
        bse = {name: np.asarray(fit.bse) for name, fit in fits.items()}
        # 32 rows: the corrections are large and ordered as for any glm here
        assert np.all(bse["HC0"] < bse["HC1"])
        assert np.all(bse["HC2"] < bse["HC3"])
        assert fits["HC3"].cov_kwds["description"].startswith("Standard errors")


class TestPolyhedron:
    @pytest.fixture(scope="class")
    @staticmethod
    def model():
        data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.05, random_state=4)
        return ps.plume("y ~ x1 + x2", data, k=2)

    @pytest.mark.parametrize(("cov_type", "power"), [("HC2", 1.0), ("HC3", 2.0)])
    def test_leverage_is_get_influence(self, model, cov_type, power):
        plain = model.fit()
        robust = model.fit(cov_type=cov_type)
        assert_allclose(robust.params, plain.params, rtol=1e-12)
        leverage = plain.get_influence().hat_matrix_diag
        assert np.all((leverage > 0) & (leverage < 1))
        scores = model.score_obs(np.asarray(plain.params))
        scores = scores / ((1 - leverage) ** (power / 2))[:, None]
        bread = np.asarray(plain.cov_params())
        assert_allclose(
            robust.cov_params(), bread @ scores.T @ scores @ bread, rtol=1e-8
        )

    def test_hc1_by_blocks_equals_in_memory(self, model):
        whole = model.fit(cov_type="HC1")
        blocks = model.fit(cov_type="HC1", chunksize=150)
        assert_allclose(blocks.bse, whole.bse, rtol=1e-7)
        hc0 = model.fit(cov_type="HC0")
        nobs, n_params = model.nobs, model.nparams
        assert_allclose(
            whole.cov_params(), hc0.cov_params() * nobs / (nobs - n_params), rtol=1e-10
        )

    @pytest.mark.parametrize("cov_type", ["HC2", "HC3", "cluster"])
    def test_blocks_refuse_what_needs_every_row(self, model, cov_type):
        kwds = {"groups": np.arange(model.nobs) % 5} if cov_type == "cluster" else {}
        with pytest.raises(ValueError, match=f"cov_type='{cov_type}' needs every"):
            model.fit(cov_type=cov_type, cov_kwds=kwds, chunksize=100)

    def test_label_flip_model_takes_them(self, model):
        data = model.data.frame
        flip = ps.plume_flip("y ~ x1 + x2", data, k=2)
        plain = flip.fit(alpha=1e-4)
        robust = flip.fit(alpha=1e-4, cov_type="HC3", use_t=True)
        leverage = plain.get_influence().hat_matrix_diag
        scores = flip.score_obs(np.asarray(plain.params)) / (1 - leverage)[:, None]
        bread = np.asarray(plain.cov_params())
        assert_allclose(
            robust.cov_params(), bread @ scores.T @ scores @ bread, rtol=1e-8
        )
        assert robust.use_t


class TestUseT:
    def test_k1_equals_logit_with_t(self, spector):
        endog, exog = spector
        logit = sm.Logit(endog, exog).fit(disp=0, use_t=True)
        ours = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(use_t=True)
        assert ours.use_t
        assert_allclose(ours.pvalues, logit.pvalues, rtol=1e-8)
        assert_allclose(ours.conf_int(), logit.conf_int(), rtol=1e-8)
        expected = 2 * stats.t.sf(np.abs(ours.tvalues), ours.df_resid)
        assert_allclose(ours.pvalues, expected, rtol=1e-12)
        test = ours.t_test("GPA = 0")
        assert_allclose(test.pvalue, logit.t_test("GPA = 0").pvalue, rtol=1e-8)
        assert_allclose(
            ours.f_test("GPA = 0, TUCE = 0").pvalue,
            logit.f_test("GPA = 0, TUCE = 0").pvalue,
            rtol=1e-8,
        )

    def test_summary_shows_t(self, spector):
        endog, exog = spector
        text = ps.PolyhedralMixtureLogit(endog, exog, k=1).fit(use_t=True).summary()
        assert "P>|t|" in str(text)
        assert "P>|z|" in str(
            ps.PolyhedralMixtureLogit(endog, exog, k=1).fit().summary()
        )

    def test_default_is_normal(self, spector):
        endog, exog = spector
        assert not ps.PolyhedralMixtureLogit(endog, exog, k=1).fit().use_t


class TestOptimiserKeywords:
    @pytest.fixture(scope="class")
    @staticmethod
    def model():
        data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=2)
        return ps.plume("y ~ x1 + x2", data, k=2)

    # lbfgs keeps no path of its own: the iterates its callback saw
    @pytest.mark.parametrize("method", ["em", "bfgs", "newton", "lbfgs"])
    def test_retall_keeps_the_path(self, model, method):
        start = np.asarray(model.fit().params) * 0.9
        res = model.fit(start_params=start, method=method, retall=True)
        path = res.mle_retvals["allvecs"]
        assert_allclose(path[-1], res.params, rtol=1e-10, atol=1e-12)
        assert all(vector.shape == (model.nparams,) for vector in path)
        if method == "em":
            # the start, then one vector per iteration, in the user's units
            assert len(path) == res.n_iter + 1
            assert_allclose(path[0], start, rtol=1e-10)
        assert "allvecs" not in model.fit(method=method).mle_retvals

    def test_full_output_false_drops_the_records(self, model):
        res = model.fit(full_output=False)
        assert "llf_history" not in res.mle_retvals
        assert res.converged and res.mle_retvals["iterations"] > 0
        unwrapped(res.summary())  # the summary reads only what stays
        with pytest.raises(ValueError, match="full_output=False"):
            res.llf_history  # noqa: B018
        assert_allclose(res.params, model.fit().params, rtol=1e-12)

    @pytest.mark.parametrize("argument", ["use_t", "full_output", "retall"])
    def test_flags_are_checked(self, model, argument):
        with pytest.raises(ValueError, match=f"{argument} must be True"):
            model.fit(**{argument: "yes"})


class TestBadCovarianceInput:
    @pytest.fixture(scope="class")
    @staticmethod
    def model(logistic):
        endog, exog, _, _ = logistic
        return ps.PolyhedralMixtureLogit(endog, exog, k=1)

    def test_missing_cluster_label_is_refused(self, model):
        groups = np.arange(model.nobs, dtype=float) % 7
        groups[3] = np.nan
        with pytest.raises(ValueError, match="1 missing cluster labels"):
            model.fit(cov_type="cluster", cov_kwds={"groups": groups})

    def test_wrong_length_groups(self, model):
        with pytest.raises(ValueError, match="one label per observation"):
            model.fit(cov_type="cluster", cov_kwds={"groups": np.arange(10)})

    def test_one_cluster(self, model):
        with pytest.raises(ValueError, match="at least two clusters"):
            model.fit(cov_type="cluster", cov_kwds={"groups": np.zeros(model.nobs)})

    def test_unknown_cluster_option(self, model):
        groups = np.arange(model.nobs) % 7
        with pytest.raises(ValueError, match=r"unknown cov_kwds.*'df_correction'"):
            model.fit(cov_type="cluster", cov_kwds={"groups": groups, "maxlags": 2})

    def test_hc_takes_no_options(self, model):
        with pytest.raises(ValueError, match="cov_type='HC2' takes no cov_kwds"):
            model.fit(cov_type="HC2", cov_kwds={"groups": [1, 2]})

    def test_text_cluster_labels(self, model):
        numbers = np.arange(model.nobs) % 7
        text = np.array([f"g{n}" for n in numbers], dtype=object)
        by_text = model.fit(cov_type="cluster", cov_kwds={"groups": list(text)})
        by_number = model.fit(cov_type="cluster", cov_kwds={"groups": numbers})
        assert_allclose(by_text.bse, by_number.bse, rtol=1e-12)


def test_cluster_needs_two_clusters_with_observations():
    # the second cluster's rows all weigh 0: one cluster of observations
    rng = np.random.default_rng(0)
    exog = sm.add_constant(rng.normal(size=(100, 2)))
    endog = (rng.random(100) < expit(exog @ [0.2, 1.0, -1.0])).astype(float)
    weights, groups = np.ones(100), np.zeros(100)
    weights[:5], groups[:5] = 0.0, 1.0
    model = ps.PolyhedralMixtureLogit(endog, exog, k=1, freq_weights=weights)
    with pytest.raises(ValueError, match="two clusters with observations"):
        model.fit(cov_type="cluster", cov_kwds={"groups": groups})


def _units_data():
    data, _ = ps.simulate_polyhedron(150, d=2, k=2, noise=0.05, random_state=1)
    exog = sm.add_constant(data[["x1", "x2"]].to_numpy())
    return data["y"].to_numpy(), exog


@pytest.mark.parametrize("cov_type", ["HC0", "HC1"])
@pytest.mark.parametrize("chunksize", [None, 40])
def test_robust_errors_follow_the_columns_units(cov_type, chunksize):
    """A column in other units, or far from 0, changes its slope's standard
    error by its scale only (the sandwich by its definition, computed here
    from score_obs); the meat's root, taken in the user's units, lost the
    small directions of such designs (60% and 44% off)."""
    endog, exog = _units_data()
    scale = np.array([1.0, 1e4, 1e-4])
    base = ps.PolyhedralMixtureLogit(endog, exog, k=2).fit(cov_type=cov_type)
    scaled = ps.PolyhedralMixtureLogit(endog, exog * scale, k=2).fit(
        cov_type=cov_type, chunksize=chunksize
    )
    assert_allclose(scaled.bse * np.tile(scale, 2), base.bse, rtol=1e-8)
    shift = np.array([0.0, 1e5, 0.0])
    shifted = ps.PolyhedralMixtureLogit(endog, exog + shift, k=2).fit(
        cov_type=cov_type, chunksize=chunksize
    )
    slopes = [1, 2, 4, 5]
    assert_allclose(shifted.bse[slopes], base.bse[slopes], rtol=1e-5)
    # the sandwich written out, in the scaled units
    bread = scaled.normalized_cov_params
    scores = scaled.model.score_obs(scaled.params)
    sandwich = bread @ scores.T @ scores @ bread
    if cov_type == "HC1":
        sandwich *= scaled.nobs / scaled.df_resid
    assert_allclose(scaled.bse, np.sqrt(np.diag(sandwich)), rtol=1e-6)


def _refit_changes(formula, data, k, alpha, rows, weights=None):
    """``params - params without row i`` by refits from the fit's maximum
    (the exact changes the one-step ``d_params`` approximates), and the fit."""
    full = ps.plume(formula, data, k=k, freq_weights=weights).fit(alpha=alpha)
    changes = []
    for row in rows:
        keep = np.arange(len(data)) != row
        kept_weights = None if weights is None else weights[keep]
        refit = ps.plume(formula, data[keep], k=k, freq_weights=kept_weights).fit(
            alpha=alpha, start_params=full.params
        )
        changes.append(np.asarray(full.params - refit.params))
    return full, np.array(changes)


@pytest.mark.parametrize(
    ("formula", "k", "weighted"),
    [
        ("y ~ x1 + x2", 1, False),
        ("y ~ x1 + x2 + C(g)", 1, True),
        ("y ~ x1 + x2 - 1", 1, False),
        ("y ~ x1 + x2 + C(g)", 2, False),
    ],
    ids=["k1", "factor-weights", "no-intercept", "k2-factor"],
)
def test_penalised_influence_follows_the_refits(formula, k, weighted):
    """With an L2 penalty the scores sum to the penalty's gradient, and the
    penalty (on the slopes scaled by the columns' own spread) is a sum over
    the rows: dropping a row takes its share out. The one-step changes and
    Cook's distance must track refits without each row, an outlying row
    (row 1, five standard deviations out) included, as closely as an
    unpenalised fit's do. statsmodels' formula gave changes about 100 times
    the refits'; a share of the penalty's gradient in proportion to the
    rows' weights gave the outlier a Cook's distance of 0.0000 for 0.0117."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.1, random_state=1)
    data["g"] = np.random.default_rng(3).choice(list("abc"), len(data))
    data.loc[1, "x2"] = data["x2"].mean() - 5 * data["x2"].std()
    weights = None
    if weighted:
        weights = np.random.default_rng(0).integers(1, 4, len(data)).astype(float)
    rows = [0, 1, 2]
    fit, exact = _refit_changes(formula, data, k, 0.03, rows, weights)
    influence = fit.get_influence()
    ours = influence.d_params[rows]
    error = np.abs(ours - exact).max(1) / np.abs(exact).max(1)
    assert error.max() < 0.06
    cov = fit.cov_params().to_numpy()
    exact_cooks = np.einsum("ij,ij->i", exact, np.linalg.solve(cov, exact.T).T)
    exact_cooks /= exact.shape[1]
    assert_allclose(influence.cooks_distance[0][rows], exact_cooks, rtol=0.12)


def test_penalised_influence_with_orthogonal_contrasts():
    """A balanced factor in Helmert contrasts: its columns' correlation is
    exactly 0, but not without a row, so the row's share of the term's
    penalty has its cross terms (left out, the contrast's change was three
    times the refit's)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=240), "g": np.tile(list("abc"), 80)})
    score = data["x1"] + np.select([data["g"] == "a", data["g"] == "b"], [-3, 3], 0)
    data["y"] = (rng.random(240) < expit(score)).astype(float)
    fit, exact = _refit_changes("y ~ x1 + C(g, Helmert)", data, 1, 0.2, [0, 1, 2])
    ours = fit.get_influence().d_params[[0, 1, 2]]
    assert_allclose(ours, exact, rtol=0.05, atol=2e-4)


def test_lr_test_takes_no_weights_as_ones():
    """statsmodels' GLM keeps frequency weights of ones: it and a PLUME fit
    without weights are fits of the same data (refused as different)."""
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.15, random_state=1)
    glm = sm.GLM(
        data["y"], sm.add_constant(data[["x1", "x2"]]), family=sm.families.Binomial()
    ).fit()
    ones = ps.plume("y ~ x1 + x2", data, k=1, freq_weights=np.ones(300)).fit()
    larger = ps.plume("y ~ x1 + x2", data, k=2).fit()
    tests = [ps.compare_lr_test(small, larger) for small in (glm, ones)]
    assert tests[0].df == tests[1].df == 3
    assert tests[0].statistic == pytest.approx(tests[1].statistic, rel=1e-6)
    # GLM counts a weighted fit's rows, PLUME their weights: the same data
    weights = np.arange(300) % 3 + 1.0
    exog = sm.add_constant(data[["x1", "x2"]])
    family = sm.families.Binomial()
    weighted = sm.GLM(data["y"], exog, family=family, freq_weights=weights).fit()
    larger = ps.plume("y ~ x1 + x2", data, k=2, freq_weights=weights).fit()
    assert ps.compare_lr_test(weighted, larger).df == 3
    # var_weights weigh the log-likelihood otherwise: not the same data
    scaled = sm.GLM(data["y"], exog, family=family, var_weights=weights).fit()
    with pytest.raises(ValueError, match="var_weights"):
        ps.compare_lr_test(scaled, ps.plume("y ~ x1 + x2", data, k=2).fit())
