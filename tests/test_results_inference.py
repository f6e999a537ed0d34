"""Inference on the results: Wald tests by term, constraints, confidence levels.

The oracles are statsmodels' ``Logit`` at K = 1 and, for K > 1, statsmodels'
own ``wald_test`` given the joint constraint explicitly (and the quadratic form
``b' V^{-1} b`` by hand).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from conftest import logistic_data, unwrapped
from scipy import stats

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit
from plumestats.sm_exceptions import FlipRateBoundaryWarning


def _with_groups(data: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A three-level factor unrelated to the outcome: a term of two columns."""
    rng = np.random.default_rng(seed)
    return data.assign(g=rng.choice(["a", "b", "c"], size=len(data)))


@pytest.fixture(scope="module")
def pair_k1():
    data = _with_groups(logistic_data(500, d=2, seed=11), 11)
    formula = "y ~ x1 + x2 + C(g)"
    logit = smf.logit(formula, data).fit(disp=0)
    return logit, ps.plume(formula, data, k=1).fit()


@pytest.fixture(scope="module")
def fit_k2():
    data, _ = ps.simulate_polyhedron(1200, d=2, k=2, noise=0.05, random_state=3)
    data = _with_groups(data, 3)
    return data, ps.plume("y ~ x1 + x2 + C(g)", data, k=2).fit()


def _joint(columns, k):
    """The joint constraint string: every column zero in every hyperplane."""
    return ", ".join(f"h{i}:{c} = 0" for i in range(1, k + 1) for c in columns)


def _quadratic_form(res, names):
    """``b' V^{-1} b`` for the parameters ``names``, by hand."""
    b = res.params[names].to_numpy()
    cov = res.cov_params().loc[names, names].to_numpy()
    return float(b @ np.linalg.solve(cov, b))


class TestWaldTestTerms:
    def test_k1_table_equals_logit(self, pair_k1):
        logit, res = pair_k1
        ours = res.wald_test_terms().table
        # scalar=True: statsmodels 0.15's default, 0.14's legacy default holds
        # each statistic as an array in an object column
        theirs = logit.wald_test_terms(scalar=True).table
        assert list(ours.index) == ["Intercept", "C(g)", "x1", "x2"]
        assert list(ours.index) == list(theirs.index)
        assert list(ours.columns) == list(theirs.columns)
        np.testing.assert_array_equal(ours["df_constraint"], theirs["df_constraint"])
        np.testing.assert_allclose(ours["statistic"], theirs["statistic"], rtol=1e-6)
        np.testing.assert_allclose(ours["pvalue"], theirs["pvalue"], rtol=1e-5)
        # the same printed layout (column headers and row names)
        assert str(res.wald_test_terms()).splitlines()[0].split() == (
            str(logit.wald_test_terms(scalar=True)).splitlines()[0].split()
        )

    def test_k1_options_equal_logit(self, pair_k1):
        logit, res = pair_k1
        kwargs = {"skip_single": True, "combine_terms": ["x"]}
        ours = res.wald_test_terms(**kwargs).table
        theirs = logit.wald_test_terms(**kwargs, scalar=True).table
        assert list(ours.index) == list(theirs.index) == ["C(g)", "x"]
        np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-5)

    def test_k2_each_term_is_tested_in_every_hyperplane(self, fit_k2):
        _, res = fit_k2
        table = res.wald_test_terms().table
        columns = {
            "Intercept": ["Intercept"],
            "C(g)": ["C(g)[T.b]", "C(g)[T.c]"],
            "x1": ["x1"],
            "x2": ["x2"],
        }
        assert list(table.index) == list(columns)
        for term, cols in columns.items():
            joint = res.wald_test(_joint(cols, 2), scalar=True)
            names = [f"h{i}:{c}" for i in (1, 2) for c in cols]
            assert table.loc[term, "df_constraint"] == 2 * len(cols)
            assert table.loc[term, "statistic"] == pytest.approx(
                float(joint.statistic), rel=1e-10
            )
            assert table.loc[term, "statistic"] == pytest.approx(
                _quadratic_form(res, names), rel=1e-8
            )
            assert table.loc[term, "pvalue"] == pytest.approx(float(joint.pvalue))
        # the first hyperplane's columns alone (what statsmodels would test)
        # give another statistic: the test must not be that one
        first = res.wald_test("h1:x1 = 0", scalar=True)
        assert table.loc["x1", "statistic"] != pytest.approx(float(first.statistic))

    def test_k2_combine_terms_and_extra_constraints(self, fit_k2):
        _, res = fit_k2
        extra = np.zeros((1, len(res.params)))
        extra[0, list(res.params.index).index("h2:x2")] = 1.0
        table = res.wald_test_terms(
            skip_single=True,
            combine_terms=["x"],
            extra_constraints=[("h2:x2 alone", extra)],
        ).table
        assert list(table.index) == ["C(g)", "x", "h2:x2 alone"]
        combined = res.wald_test(_joint(["x1", "x2"], 2), scalar=True)
        assert table.loc["x", "df_constraint"] == 4
        assert table.loc["x", "statistic"] == pytest.approx(
            float(combined.statistic), rel=1e-10
        )
        single = res.wald_test("h2:x2 = 0", scalar=True)
        assert table.loc["h2:x2 alone", "statistic"] == pytest.approx(
            float(single.statistic), rel=1e-10
        )
        with pytest.raises(ValueError, match=r"combine_terms entry 'z' .* terms are"):
            res.wald_test_terms(combine_terms=["z"])

    def test_array_interface_tests_each_column_in_every_hyperplane(self, fit_k2):
        data, formula_fit = fit_k2
        exog = np.asarray(formula_fit.model.exog)
        res = PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
        table = res.wald_test_terms().table
        names = list(res.model.exog_names)
        assert list(table.index) == names
        assert set(table["df_constraint"]) == {2}
        for column in names:
            joint = res.wald_test(_joint([column], 2), scalar=True)
            assert table.loc[column, "statistic"] == pytest.approx(
                float(joint.statistic), rel=1e-10
            )
        # the formula fit's terms, on the same design, give the same tests
        np.testing.assert_allclose(
            table.loc[names[-1], "statistic"],
            formula_fit.wald_test_terms().table.loc["x2", "statistic"],
            rtol=1e-6,
        )

    def test_label_flip_terms_leave_out_the_flip_rate(self):
        data, _ = ps.simulate_polyhedron(2000, d=2, k=2, noise=0.1, random_state=1)
        res = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=1e-6)
        assert res.params.index[-1] == "flip_logit"
        table = res.wald_test_terms().table
        assert list(table.index) == ["Intercept", "x1", "x2"]
        for term in table.index:
            names = [f"h1:{term}", f"h2:{term}"]
            assert table.loc[term, "df_constraint"] == 2
            assert table.loc[term, "statistic"] == pytest.approx(
                _quadratic_form(res, names), rel=1e-8
            )


class TestSummaryNames:
    def test_logit_refuses_a_wrong_length_and_so_do_we(self, pair_k1):
        logit, res = pair_k1
        with pytest.raises(ValueError, match="same length"):
            logit.summary(xname=["a", "b"])
        for method in (res.summary, res.summary2):
            with pytest.raises(ValueError, match=r"list of 5 names \(one per param"):
                method(xname=["a", "b"])

    def test_k2_accepts_one_block_or_every_parameter(self, fit_k2):
        _, res = fit_k2
        p = res.model.k_vars
        block = [f"v{j}" for j in range(p)]
        every = [f"w{j}" for j in range(2 * p)]
        for method in (res.summary, res.summary2):
            for wrong in (block[:-1], [*every, "extra"], "v0"):
                with pytest.raises(
                    ValueError, match=rf"list of {p} names.*or of {2 * p}"
                ):
                    method(xname=wrong)
        tables = res.summary(xname=block).tables[1:]
        # each hyperplane's rows keep their own numbers under the given names
        for k, table in enumerate(tables):
            rows = [str(row[0].data).strip() for row in table[1:]]
            assert rows == block
            coefs = [float(str(row[1].data)) for row in table[1:]]
            np.testing.assert_allclose(
                coefs, res.params.iloc[k * p : (k + 1) * p], atol=5e-5
            )
        tables = res.summary(xname=every).tables[1:]
        assert [str(row[0].data).strip() for row in tables[1][1:]] == every[p:]
        assert list(res.summary2(xname=every).tables[1].index) == every
        assert list(res.summary2(xname=block).tables[1].index) == [
            f"h{k}:{name}" for k in (1, 2) for name in block
        ]


class TestRemoveData:
    @pytest.fixture
    def fresh(self, fit_k2):
        data, _ = fit_k2
        return data, ps.plume("y ~ x1 + x2 + C(g)", data, k=2).fit()

    def test_results_keep_no_data_arrays(self, fresh):
        data, res = fresh
        assert res.endog.shape == (len(data),) and res.exog.shape[0] == len(data)
        # cache two per-observation values
        assert res.resid_dev.shape == res.fittedvalues.shape == (len(data),)
        assert res.score_obsv.shape == (len(data), len(res.params))
        res.remove_data()
        inner = res._results
        assert inner.endog is None and inner.exog is None
        assert res.model.endog is None and res.model.exog is None
        for name in ("fittedvalues", "resid_dev", "score_obsv"):
            assert inner._cache.get(name) is None
        # what is left is small: no array as long as the sample
        sizes = [
            np.size(value)
            for value in vars(inner).values()
            if isinstance(value, np.ndarray)
        ]
        assert max(sizes) < len(data)

    def test_sample_predictions_say_the_data_were_removed(self, fresh):
        data, res = fresh
        new = data.iloc[:6]
        expected = res.predict(new)
        frame = res.get_prediction(new).summary_frame()
        res.remove_data()
        for call in (res.predict, res.get_prediction, lambda: res.pred_table(0.3)):
            with pytest.raises(ValueError, match=r"remove_data\(\) dropped"):
                call()
        # the table at 0.5 comes from the fit's one pass over the rows
        assert res.pred_table().sum() == res.nobs
        with pytest.raises(ValueError, match="pass exog"):
            res.predict()
        np.testing.assert_allclose(res.predict(new), expected, rtol=1e-14)
        pd.testing.assert_frame_equal(res.get_prediction(new).summary_frame(), frame)
        assert "hyperplane h2" in unwrapped(res.summary())

    def test_save_without_data_round_trips(self, fresh, tmp_path):
        data, res = fresh
        new = data.iloc[:6]
        full, slim = tmp_path / "full.pickle", tmp_path / "slim.pickle"
        # the design alone is nobs * p doubles (save(remove_data=True) removes
        # the data from res itself, as statsmodels does)
        design_bytes = 8 * res.model.exog.size
        res.save(full)
        res.save(slim, remove_data=True)
        loaded = ps.PolyhedralMixtureLogitResults.load(slim)
        assert loaded.endog is None and loaded.exog is None
        assert loaded.model.exog is None
        assert slim.stat().st_size < full.stat().st_size
        assert full.stat().st_size - slim.stat().st_size >= design_bytes
        np.testing.assert_array_equal(loaded.params, res.params)
        np.testing.assert_allclose(loaded.predict(new), res.predict(new), rtol=1e-14)
        pd.testing.assert_frame_equal(
            loaded.get_prediction(new).summary_frame(),
            res.get_prediction(new).summary_frame(),
        )
        assert unwrapped(loaded.summary()).count("hyperplane h") == 2


class TestDfModelWithoutConstant:
    """llnull is the intercept-only logit whether or not the design has a
    constant, so the LR test has K p - 1 degrees of freedom, as Logit's."""

    def test_k1_equals_logit(self):
        data = logistic_data(400, d=2, seed=12)
        formula = "y ~ x1 + x2 - 1"
        logit = smf.logit(formula, data).fit(disp=0)
        res = ps.plume(formula, data, k=1).fit()
        assert res.model.k_constant == 0
        assert res.df_model == logit.df_model == 1
        assert res.llr_pvalue == pytest.approx(logit.llr_pvalue, rel=1e-6)

        def df_model_cell(summary):
            line = next(row for row in str(summary).splitlines() if "Df Model" in row)
            return line.split("Df Model:")[1].split()[0]

        assert df_model_cell(res.summary()) == df_model_cell(logit.summary()) == "1"

    def test_k2_and_label_flips_count_every_parameter_but_one(self):
        data, _ = ps.simulate_polyhedron(1200, d=2, k=2, noise=0.1, random_state=3)
        formula = "y ~ x1 + x2 - 1"
        res = ps.plume(formula, data, k=2).fit()
        assert res.model.k_constant == 0
        assert res.df_model == 2 * 2 - 1
        assert res.llr_pvalue == pytest.approx(stats.chi2.sf(res.llr, 3), rel=1e-12)
        # without intercepts the faces cannot reach the polytope and the flip
        # rate goes to its boundary; the counts are what is checked here
        with pytest.warns(FlipRateBoundaryWarning):
            flips = ps.plume_flip(formula, data, k=2).fit(alpha=1e-6)
        assert flips.df_model == 2 * 2  # every parameter but one: flip_logit too
        # the LR test counts flip_logit too: K p + 1 parameters against one
        assert flips.llr_pvalue == pytest.approx(
            stats.chi2.sf(flips.llr, 2 * 2), rel=1e-12
        )


BAD_LEVELS = [1.5, -0.1, 0.0, 1.0, float("nan"), True, "0.05"]


class TestConfidenceLevel:
    """``alpha`` is one minus the confidence level: outside (0, 1) the normal
    quantile gives reversed bounds (alpha > 1) or NaN (alpha < 0)."""

    @pytest.mark.parametrize("alpha", BAD_LEVELS)
    def test_every_interval_refuses_alpha_outside_0_1(self, fit_k2, alpha):
        data, res = fit_k2
        prediction = res.get_prediction(data.iloc[:4])
        margins = res.get_margeff()
        calls = [
            lambda: res.conf_int(alpha),
            lambda: res.conf_int(alpha=alpha, method="bootstrap"),
            lambda: res.summary(alpha=alpha),
            lambda: res.summary2(alpha=alpha),
            lambda: prediction.conf_int(alpha=alpha),
            lambda: prediction.summary_frame(alpha=alpha),
            lambda: margins.conf_int(alpha),
            lambda: margins.summary_frame(alpha=alpha),
            lambda: margins.summary(alpha=alpha),
        ]
        for call in calls:
            with pytest.raises(ValueError, match="alpha must be a number strictly"):
                call()

    def test_valid_levels_still_give_the_normal_interval(self, fit_k2):
        data, res = fit_k2
        z = stats.norm.isf(0.05)  # alpha = 0.1
        ci = res.conf_int(alpha=0.1)
        np.testing.assert_allclose(ci[1] - ci[0], 2 * z * res.bse, rtol=1e-12)
        # a 0-d array is a number, as statsmodels takes it
        pd.testing.assert_frame_equal(res.conf_int(alpha=np.array(0.1)), ci)
        frame = res.get_prediction(data.iloc[:4]).summary_frame(alpha=0.1)
        assert (frame["ci_lower"] < frame["predicted"]).all()
        assert (frame["predicted"] < frame["ci_upper"]).all()

    def test_label_flip_and_bootstrap_intervals(self):
        data, _ = ps.simulate_polyhedron(2000, d=2, k=2, noise=0.1, random_state=1)
        flips = ps.plume_flip("y ~ x1 + x2", data, k=2).fit(alpha=1e-6)
        low, high = flips.flip_rate_conf_int(0.05)
        assert 0 < low < flips.flip_rate < high < 0.5
        for alpha in (1.5, -0.1):
            for call in (flips.flip_rate_conf_int, flips.summary, flips.conf_int):
                with pytest.raises(ValueError, match="alpha must be a number"):
                    call(alpha=alpha)
        res = ps.plume("y ~ x1 + x2", data.iloc[:400], k=1).fit()
        boot = res.bootstrap(n_boot=3, random_state=0, progress=False)
        with pytest.raises(ValueError, match="alpha must be a number strictly"):
            boot.conf_int(alpha=2)


class TestStringConstraints:
    def test_k1_bare_column_names_equal_logit(self, pair_k1):
        logit, res = pair_k1
        ours, theirs = res.t_test("x1 = x2"), logit.t_test("x1 = x2")
        np.testing.assert_allclose(ours.effect, theirs.effect, rtol=1e-6)
        np.testing.assert_allclose(ours.sd, theirs.sd, rtol=1e-6)
        np.testing.assert_allclose(ours.sd, res.t_test("h1:x1 = h1:x2").sd)
        joint = "C(g)[T.b] = 0, C(g)[T.c] = 0"
        np.testing.assert_allclose(
            res.wald_test(joint).statistic,
            logit.wald_test(joint, scalar=True).statistic,
            rtol=1e-6,
        )
        both = ["x1 = 0", "x2 = 0"]
        np.testing.assert_allclose(
            res.f_test(both).fvalue, logit.f_test(both).fvalue, rtol=1e-6
        )
        # bare and h1: names mix (one raised "name its hyperplane" at k=1)
        mixed = res.t_test("h1:x1 = x2")
        np.testing.assert_allclose(mixed.effect, theirs.effect, rtol=1e-6)
        np.testing.assert_allclose(mixed.sd, theirs.sd, rtol=1e-6)
        np.testing.assert_allclose(
            res.f_test(["x1 = 0", "h1:x2 = 0"]).fvalue,
            logit.f_test(both).fvalue,
            rtol=1e-6,
        )

    @pytest.mark.parametrize(
        ("constraint", "named"),
        [
            ("h1:x1x = 0", "h1:x1x"),
            ("h1:x12 = 0", "h1:x12"),
            ("h1:x1:x3 = 0", "h1:x1:x3"),
        ],
    )
    def test_an_unknown_name_is_named_whole(self, fit_k2, constraint, named):
        # patsy points inside such names: 'x', ':x3' or a stray '2' were named
        _, res = fit_k2
        with pytest.raises(ValueError, match=rf"'{re.escape(named)}' is not a param"):
            res.t_test(constraint)

    @pytest.mark.parametrize("method", ["t_test", "f_test", "wald_test"])
    def test_unknown_names_are_named_with_the_valid_ones(self, pair_k1, method):
        _, res = pair_k1
        call = getattr(res, method)
        with pytest.raises(ValueError, match=r"'h1:x9' is not a parameter") as info:
            call("h1:x9 = 0")
        message = str(info.value)
        assert "h1:<column>" in message and "'C(g)[T.b]', 'C(g)[T.c]'" in message
        assert type(info.value.__cause__).__name__ == "PatsyError"
        with pytest.raises(ValueError, match=r"'zz' is not a parameter"):
            call(["h1:x1 = 0", "zz = 1"])
        with pytest.raises(ValueError, match="expected a noun"):
            call("h1:x1 = ")

    def test_k2_bare_column_asks_for_the_hyperplane(self, fit_k2):
        _, res = fit_k2
        with pytest.raises(
            ValueError,
            match=r"'x1' is a design column, not a parameter: with k=2 name its "
            r"hyperplane, e.g. 'h1:x1'.*h<k>:<column> for k = 1..2",
        ):
            res.t_test("x1 = 0")
        with pytest.raises(ValueError, match=r"'h3:x1' is not a parameter name"):
            res.wald_test("h3:x1 = 0")
        # a factor's column is read whole (the message named 'C')
        with pytest.raises(
            ValueError, match=r"'C\(g\)\[T.b\]' is a design column, not a param"
        ):
            res.t_test("C(g)[T.b] = 0")
        with pytest.raises(ValueError, match=r"'h1:C\(g\)\[T.z\]' is not a param"):
            res.t_test("h1:C(g)[T.z] = 0")
        # matrices and (R, q) tuples pass through unchanged
        restriction = np.eye(len(res.params))[[list(res.params.index).index("h1:x1")]]
        by_matrix = res.t_test(restriction)
        by_name = res.t_test("h1:x1 = 0")
        np.testing.assert_allclose(by_matrix.sd, by_name.sd)
        np.testing.assert_allclose(
            res.t_test((restriction, np.array([0.5]))).effect, by_name.effect
        )


class TestPredictColumns:
    @pytest.mark.parametrize("which", ["linear", "gate", "expert"])
    def test_per_hyperplane_predictions_are_named_h1_to_hk(self, fit_k2, which):
        data, res = fit_k2
        new = data.iloc[5:12]
        out = res.predict(new, which=which)
        assert isinstance(out, pd.DataFrame)
        assert list(out.columns) == ["h1", "h2"]
        assert list(out.index) == list(new.index)
        design = res.model.exog[5:12]
        expected = res.model.predict(res.params.to_numpy(), design, which=which)
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-14)
        if which == "linear":  # h_k'x, the hyperplanes' own scores
            np.testing.assert_allclose(
                out.to_numpy(), design @ res.hyperplanes.to_numpy().T, rtol=1e-12
            )
        # the one-column predictions stay Series
        assert isinstance(res.predict(new), pd.Series)


def test_pairwise_level_tests_are_logits_at_k1_and_refused_beyond(pair_k1, fit_k2):
    logit, res = pair_k1
    ours = res.t_test_pairwise("C(g)").result_frame
    theirs = logit.t_test_pairwise("C(g)").result_frame
    np.testing.assert_allclose(ours["coef"], theirs["coef"], rtol=1e-6)
    np.testing.assert_allclose(ours["std err"], theirs["std err"], rtol=1e-6)
    # at k = 2 it compared h1's levels only, under bare labels
    _, res2 = fit_k2
    with pytest.raises(NotImplementedError, match=r"naming the hyperplane"):
        res2.t_test_pairwise("C(g)")


@pytest.mark.parametrize(("nobs", "noted"), [(1998, True), (3000, False)])
def test_interval_note_fires_below_500_observations_per_parameter(nobs, noted):
    # the coverage study's threshold: K = 3, d = 5 Wald intervals held their
    # level from 556 observations per parameter (benchmarks/results/coverage_k3.md)
    truth = [[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]]  # 6 parameters
    data = ps.simulate_plume(nobs, truth, gamma=1.0, random_state=1)
    res = ps.plume("y ~ x1 + x2", data, k=2).fit()
    text = unwrapped(res.summary())
    assert ("Intervals:" in text) is noted
    if noted:
        assert f"Intervals: {nobs // 6} observations per parameter" in text
        assert "cov_type='HC0'" in text and "kind='normal'" in text
    logit = ps.plume("y ~ x1 + x2", data, k=1).fit()
    # K = 1 is logistic regression
    assert "Intervals:" not in unwrapped(logit.summary())
    if noted:  # a fit that already uses HC0 is told so, not advised to switch
        robust = ps.plume("y ~ x1 + x2", data, k=2).fit(cov_type="HC0")
        robust_text = " ".join(unwrapped(robust.summary()).split())
        assert "HC0 intervals (this fit's kind) covering 92-97%" in robust_text
        assert "where cov_type='HC0' covered" not in robust_text
