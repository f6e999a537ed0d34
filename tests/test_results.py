"""The results object: report, counts, bound, prediction, persistence."""

from __future__ import annotations

import io
import math
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from conftest import logistic_data, unwrapped

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit
from plumestats.formula.api import plume


@pytest.fixture(scope="module")
def fitted():
    data, _ = ps.simulate_polyhedron(1500, d=2, k=3, noise=0.05, random_state=4)
    return data, plume("y ~ x1 + x2", data, k=3, gamma=2.0).fit()


def test_parameter_names_are_hyperplane_major(fitted):
    _, res = fitted
    expected = [f"h{i}:{c}" for i in (1, 2, 3) for c in ("Intercept", "x1", "x2")]
    assert list(res.params.index) == expected
    assert list(res.bse.index) == expected
    assert not any(name.startswith("par") for name in res.model.data.param_names)
    np.testing.assert_array_equal(res.hyperplanes.to_numpy().ravel(), res.params)
    assert list(res.hyperplanes.index) == ["h1", "h2", "h3"]
    assert list(res.hyperplanes.columns) == ["Intercept", "x1", "x2"]


def test_counts_and_information_criteria(fitted):
    _, res = fitted
    k_params = 3 * 3
    assert res.df_model == k_params - 1
    assert res.df_resid == res.nobs - k_params
    assert res.aic == pytest.approx(-2 * res.llf + 2 * k_params, rel=1e-14)
    assert res.bic == pytest.approx(
        -2 * res.llf + math.log(res.nobs) * k_params, rel=1e-14
    )
    assert res.llf == pytest.approx(res.model.loglike(res.params.to_numpy()))
    assert res.llr == pytest.approx(2 * (res.llf - res.llnull))
    assert res.prsquared == pytest.approx(1 - res.llf / res.llnull)


def test_inference_quantities_are_consistent(fitted):
    _, res = fitted
    cov = res.cov_params()
    assert list(cov.index) == list(res.params.index)
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(cov)))
    np.testing.assert_allclose(
        np.linalg.inv(-res.model.hessian(res.params.to_numpy())),
        cov,
        rtol=1e-8,
        atol=1e-12,
    )
    np.testing.assert_allclose(res.tvalues, res.params / res.bse)
    ci = res.conf_int()
    np.testing.assert_allclose(ci[0], res.params - 1.959963984540054 * res.bse)


def test_summary_has_header_and_one_block_per_hyperplane(fitted):
    _, res = fitted
    text = unwrapped(res.summary())
    for label in (
        "Dep. Variable:",
        "Method:",
        "EM (Newton M-step)",
        "Hyperplanes (K):",
        "gamma:",
        "No. Observations:",
        "Df Residuals:",
        "Df Model:",
        "converged:",
        "EM iterations:",
        "L2 penalty:",
        "Inside class:",
        "Log-Likelihood:",
        "LL-Null:",
        "Pseudo R-squ.:",
        "LLR p-value:",
        "AIC:",
        "BIC:",
        "Rademacher",
    ):
        assert label in text, label
    for k in (1, 2, 3):
        assert f"hyperplane h{k}" in text
    assert text.count("P>|z|") == 3
    assert "non-regular" in text
    assert len(res.summary().tables) == 4


def test_summary_latex_escapes_the_notes(fitted):
    """The notes' ``%`` commented out the rest of their line in LaTeX and
    their ``_`` (``cov_type``) stopped it compiling; the text keeps them."""
    _, res = fitted
    summary = res.summary()
    latex = summary.as_latex()
    notes = latex.split("\\end{center}")[-1]
    assert re.search(r"(?<!\\)[%_]", notes) is None
    assert "rademacher\\_bound()" in notes
    assert "rademacher_bound()" in unwrapped(summary)  # the text as it was
    assert summary.as_latex() == latex  # the notes are restored after


def test_summary_notes_are_wrapped_to_the_tables_width(fitted):
    """Each footnote is wrapped to the widest table, its continuation lines
    under its text (they were single lines of up to 400 characters)."""
    _, res = fitted
    summary = res.summary()
    width = max(
        len(line) for table in summary.tables for line in str(table).split("\n")
    )
    notes = str(summary).split("\n\n", 1)[1].splitlines()
    assert notes[0].startswith("[1] ") and len(notes) > summary.extra_txt.count("[")
    assert all(len(line) <= width for line in notes)
    assert all(line.startswith(("[", "    ")) for line in notes)


def test_rademacher_bound_matches_hand_computation(fitted):
    data, res = fitted
    bound = res.rademacher_bound(delta=0.1)
    design = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    radius = np.linalg.norm(design, axis=1).max()
    norms = np.linalg.norm(res.hyperplanes.to_numpy(), axis=1)
    n, k, gamma = len(data), 3, 2.0
    # the formula as printed, in logs only because the constants are huge
    log_common = (
        math.log1p(math.exp(norms.max() * radius))
        + gamma * (norms.max() + norms.min()) * radius
    )
    c1 = log_common + math.log(3 * math.sqrt(k - 1) / math.sqrt(2) + 1)
    c2 = math.log(3) + log_common
    complexity = c1 + math.log(norms.sum() * radius / math.sqrt(n))
    confidence = c2 + 0.5 * math.log(math.log(2 / 0.1) / (2 * n))
    assert bound.radius == pytest.approx(radius)
    np.testing.assert_allclose(bound.weight_norms, norms)
    assert bound.empirical_risk == pytest.approx(-res.llf / n)
    assert bound.log_c1 == pytest.approx(c1)
    assert bound.log_c2 == pytest.approx(c2)
    assert bound.log_complexity == pytest.approx(complexity)
    assert bound.log_confidence == pytest.approx(confidence)
    assert bound.log_total == pytest.approx(
        np.logaddexp.reduce([math.log(-res.llf / n), complexity, confidence])
    )
    assert bound.vacuous and bound.nobs == n and bound.k == 3


def test_rademacher_bound_small_case_by_hand():
    """A case small enough to compute in plain floating point."""
    weights = np.array([[0.1, 0.2], [0.05, -0.1]])
    exog = np.array([[1.0, 0.5], [1.0, -0.5], [1.0, 0.0], [1.0, 1.0]])
    bound = ps.rademacher_bound(weights, exog, mean_nll=0.6, gamma=1.0, delta=0.05)
    w = np.linalg.norm(weights, axis=1)
    r = math.sqrt(2.0)
    common = (1 + math.exp(w.max() * r)) * math.exp((w.max() + w.min()) * r)
    c1 = common * (3 * math.sqrt(1) / math.sqrt(2) + 1)
    c2 = 3 * common
    total = 0.6 + c1 * w.sum() * r / 2 + c2 * math.sqrt(math.log(40) / 8)
    assert bound.c1 == pytest.approx(c1, rel=1e-12)
    assert bound.c2 == pytest.approx(c2, rel=1e-12)
    assert bound.total == pytest.approx(total, rel=1e-12)
    assert bound.vacuous == (total > 1)
    assert "Rademacher bound" in str(bound)


def test_one_face_bound_does_not_depend_on_gamma():
    """With K = 1 the gate is constant: the model, and so its bound, is the
    same at every gamma (and for the hard model), logistic regression's
    (1 + e^{W R}) terms without the gate's factor."""
    data = logistic_data(300, d=2, seed=3)
    bounds = [
        ps.plume("y ~ x1 + x2", data, k=1, gamma=gamma).fit().rademacher_bound()
        for gamma in (0.5, 1.0, 5.0)
    ]
    bounds.append(ps.spla1("y ~ x1 + x2", data, k=1).fit().rademacher_bound())
    logs = [bound.log_total for bound in bounds]
    np.testing.assert_allclose(logs, logs[0], rtol=1e-9)
    w, r = bounds[0].weight_norms[0], bounds[0].radius
    assert bounds[0].c2 == pytest.approx(3 * (1 + math.exp(w * r)), rel=1e-12)
    assert bounds[0].c1 == pytest.approx(1 + math.exp(w * r), rel=1e-12)


@pytest.mark.parametrize(
    ("weights", "exog", "match"),
    [
        (np.ones(6), np.ones((4, 3)), "one row per face"),
        (np.ones((2, 3)), np.ones((4, 2)), "the hyperplanes' 3 columns"),
        (np.ones((2, 2)), np.array([[1.0, np.nan], [1.0, 0.0]]), "must be finite"),
    ],
)
def test_rademacher_bound_checks_its_inputs(weights, exog, match):
    """A flat parameter vector was read as one face of K p weights, and a
    missing value made the bound NaN yet 'non-vacuous'."""
    with pytest.raises(ValueError, match=match):
        ps.rademacher_bound(weights, exog, mean_nll=0.5, gamma=1.0)


def test_summary_shows_the_bound_as_a_reader_can_use_it(fitted):
    _, res = fitted
    bound = res.rademacher_bound(0.05)
    header = str(res.summary().tables[0])
    # vacuous: its log10, never a bare 1e+518-style number
    assert f"vacuous (log10 {bound.log10_total:.1f})" in header
    assert bound.log10_total == pytest.approx(bound.log_total / math.log(10))
    assert "e+" not in header.split("Rademacher bnd:")[1].split("\n")[0]
    note = unwrapped(res.summary()).split("Rademacher bound on")[1]
    assert f"10^{bound.log10_total:.1f}, above 1 and so vacuous" in note


def test_a_bound_below_one_is_shown_as_its_value():
    # tiny weights, unit radius and 1e8 rows: a bound that says something
    bound = ps.rademacher_bound(
        np.array([[1e-3, 1e-3]]),
        None,
        mean_nll=0.3,
        gamma=1.0,
        radius=1.0,
        nobs=10**8,
    )
    assert not bound.vacuous and bound.total < 1
    assert bound.short == f"{bound.total:.3g}"


def test_predict_applies_the_formula_to_new_data(fitted):
    data, res = fitted
    new = data.iloc[:7].drop(columns="y")
    prob = res.predict(new)
    assert isinstance(prob, pd.Series) and list(prob.index) == list(new.index)
    np.testing.assert_allclose(prob, res.predict()[:7])
    assert np.all((prob > 0) & (prob < 1))
    gate = res.predict(new, which="gate")
    assert gate.shape == (7, 3)
    np.testing.assert_allclose(np.asarray(gate).sum(axis=1), 1.0)
    assert res.predict(new, which="expert").shape == (7, 3)
    decision = res.decision_function(new)
    np.testing.assert_allclose(
        decision, np.asarray(res.predict(new, which="linear")).min(axis=1)
    )
    with pytest.raises(ValueError, match="which must be one of"):
        res.predict(new, which="probability")


def test_pred_table_counts_classifications(fitted):
    data, res = fitted
    table = res.pred_table()
    predicted = res.predict() > 0.5
    y = data["y"].to_numpy()
    assert table[1, 1] == np.sum(predicted & (y == 1))
    assert table[0, 1] == np.sum(predicted & (y == 0))
    assert table.sum() == len(data)


def test_string_constraints_on_parameter_names(fitted):
    _, res = fitted
    test = res.t_test("h1:x1 = h2:x1")
    params, cov = res.params, res.cov_params()
    effect = params["h1:x1"] - params["h2:x1"]
    var = (
        cov.loc["h1:x1", "h1:x1"]
        + cov.loc["h2:x1", "h2:x1"]
        - 2 * cov.loc["h1:x1", "h2:x1"]
    )
    assert float(test.effect[0]) == pytest.approx(effect)
    assert float(test.sd[0, 0]) == pytest.approx(math.sqrt(var))
    wald = res.wald_test("h1:x1 = h2:x1, h1:x2 = h2:x2", scalar=True)
    names = list(params.index)
    restriction = np.zeros((2, len(names)))
    for row, column in enumerate(["x1", "x2"]):
        restriction[row, names.index(f"h1:{column}")] = 1.0
        restriction[row, names.index(f"h2:{column}")] = -1.0
    gap = restriction @ params.to_numpy()
    by_hand = gap @ np.linalg.solve(restriction @ cov.to_numpy() @ restriction.T, gap)
    assert float(wald.statistic) == pytest.approx(by_hand, rel=1e-10)
    assert wald.distribution == "chi2" and wald.df_denom == 2  # chi2 keeps its df here


def test_save_load_round_trip(tmp_path, fitted):
    data, res = fitted
    path = tmp_path / "plume.pickle"
    res.save(path)
    loaded = ps.PolyhedralMixtureLogitResults.load(path)
    np.testing.assert_array_equal(loaded.params, res.params)
    np.testing.assert_array_equal(loaded.predict(data), res.predict(data))


def test_remove_data_leaves_no_copy_of_the_design_or_the_clusters():
    # the model's cached design (a cluster, HC2/HC3 or tic request made it)
    # and the cluster labels stayed in the pickle of save(remove_data=True)
    rng = np.random.default_rng(0)
    exog = np.column_stack([np.ones(2000), rng.normal(size=(2000, 2))])
    endog = (rng.random(2000) < 0.5).astype(float)
    groups = rng.integers(0, 50, 2000)
    res = PolyhedralMixtureLogit(endog, exog, k=1).fit(
        cov_type="cluster", cov_kwds={"groups": groups}
    )
    stream = io.BytesIO()
    res.save(stream, remove_data=True)
    stream.seek(0)
    back = ps.PolyhedralMixtureLogitResults.load(stream)
    assert "_user_design" not in getattr(back.model, "_cache", {})
    assert "groups" not in back.cov_kwds
    np.testing.assert_allclose(back.bse, res.bse)
    # about the size of a nonrobust fit's, not the design's 48 kB
    assert len(stream.getvalue()) < 10_000


def test_remove_data_keeps_summary_and_prediction(fitted):
    data, _ = fitted
    res = plume("y ~ x1 + x2", data, k=3, gamma=2.0).fit()
    before = unwrapped(res.summary()).splitlines()
    expected = res.predict(data.iloc[:5])
    res.remove_data()
    assert res.model.exog is None
    after = unwrapped(res.summary()).splitlines()
    # identical but for the time stamp
    assert [line for line in before if "Time:" not in line] == [
        line for line in after if "Time:" not in line
    ]
    np.testing.assert_allclose(res.predict(data.iloc[:5]), expected)
    assert pickle.loads(pickle.dumps(res)).llf == res.llf
    assert res.info_criteria("bic") == res.bic
    with pytest.raises(ValueError, match=r"remove_data.*use 'aic' or 'bic'"):
        res.info_criteria("tic")
    with pytest.raises(ValueError, match="crit must be one of 'aic', 'bic'"):
        res.info_criteria("hqic")


def test_cluster_covariance_needs_groups():
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=5)
    model = plume("y ~ x1 + x2", data, k=2)
    with pytest.raises(ValueError, match="groups"):
        model.fit(cov_type="cluster")
    res = model.fit(cov_type="cluster", cov_kwds={"groups": np.arange(400) % 20})
    assert res.cov_type == "cluster" and np.all(np.isfinite(res.bse))
    assert "cluster" in unwrapped(res.summary())


def test_array_interface_and_outcome_codings():
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=6)
    exog = np.column_stack([np.ones(400), data[["x1", "x2"]]])
    y01 = data["y"].to_numpy()
    reference = PolyhedralMixtureLogit(y01, exog, k=2).fit()
    assert reference.model.exog_names == ["const", "x1", "x2"]
    for coded in (2 * y01 - 1, y01.astype(bool)):
        res = PolyhedralMixtureLogit(coded, exog, k=2).fit()
        np.testing.assert_allclose(res.params, reference.params, rtol=1e-10)


def test_bad_arguments_name_the_argument():
    data, _ = ps.simulate_polyhedron(200, d=2, k=2, noise=0.1, random_state=7)
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        plume("y ~ x1 + x2", data, k=0)
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        plume("y ~ x1 + x2", data, gamma=-1)
    model = plume("y ~ x1 + x2", data, k=2)
    with pytest.raises(ValueError, match="mstep must be one of"):
        model.fit(mstep="simplex")
    with pytest.raises(ValueError, match="cov_type must be one of"):
        model.fit(cov_type="HC4")
    with pytest.raises(TypeError, match="unexpected arguments"):
        model.fit(maxfun=3)
    with pytest.raises(ValueError, match="start_params must have 6 values"):
        model.fit(start_params=np.zeros(5))


def test_summary2_is_statsmodels_layout_and_equals_logit_at_k1():
    data = logistic_data(300, d=2, seed=4)
    logit_table = smf.logit("y ~ x1 + x2", data).fit(disp=0).summary2().tables[1]
    res = ps.plume("y ~ x1 + x2", data, k=1).fit()
    table = res.summary2().tables[1]
    assert list(table.index) == ["h1:Intercept", "h1:x1", "h1:x2"]
    np.testing.assert_allclose(table.to_numpy(), logit_table.to_numpy(), rtol=1e-6)
    two = ps.plume("y ~ x1 + x2", data, k=2).fit(alpha=1e-3)
    text = str(two.summary2(xname=["const", "a", "b"], alpha=0.1))
    assert "h2:b" in text and "[0.05" in text
    assert "K = 2 hyperplanes, soft, gamma = 1." in text
    assert "Outcome coded 1 is the inside" in text


def test_takeuchi_penalty_is_near_the_parameter_count_when_the_model_is_right():
    """Under the right model J^{-1} I -> identity, so TIC's penalty trace
    approaches AIC's K p (here 6); misspecification is what would move it."""
    hyperplanes = np.array([[1.5, -1.0, 0.5], [-1.0, -1.5, 1.0]])
    traces = []
    for seed in range(4):
        data = ps.simulate_plume(2000, hyperplanes, gamma=1.0, random_state=seed)
        res = plume("y ~ x1 + x2", data, k=2, gamma=1.0).fit()
        traces.append((res.info_criteria("tic") + 2 * res.llf) / 2)
        assert res.info_criteria("aic") == pytest.approx(res.aic)
    assert abs(np.mean(traces) - 6) < 1.5


def test_summary_names_the_optimiser_that_did_not_converge():
    data = logistic_data(300, d=2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not converged; its information may not
        res = ps.plume("y ~ x1 + x2", data, k=2).fit(method="bfgs", maxiter=2)
    assert not res.converged
    text = unwrapped(res.summary())
    assert "The fit did not converge" in text and "EM did not" not in text
