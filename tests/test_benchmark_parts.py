"""The parts of the maintained benchmarks checked on their own: Table 1's
selection rules, the Bayes oracle's version-space sampler and face fits, and
the shared provenance (``benchmarks._common``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import numpy as np
import pytest
from scipy import stats


def _benchmark_module(name):
    """A module of the ``benchmarks`` package (they need the ``bench`` extra)."""
    pytest.importorskip("sklearn", reason="the benchmarks need [bench]")
    return importlib.import_module(f"benchmarks.{name}")


def _table1_fits():
    return _benchmark_module("_table1_fits")


def test_table1_gate_keeps_logistic_unless_polyhedron_clearly_wins():
    fits = _table1_fits()
    rng = np.random.default_rng(0)
    base = rng.normal(-0.5, 0.3, 400)  # per-row validation log-likelihoods
    noise = rng.normal(0.0, 0.05, 400)  # paired SE of the difference ~0.0025
    logistic = fits.PolySetting(1, 1e-3)
    small = fits.PolySetting(2, 1e-3, 1.0, 1)
    large = fits.PolySetting(3, 1e-3, 1.0, 1)

    def scores(gain_small, gain_large):
        return {
            logistic: base,
            small: base + gain_small + noise,
            large: base + gain_large + noise[::-1],
        }

    # a polyhedron within one SE of logistic regression: K = 1 is kept
    assert fits.choose(scores(0.0, 0.001), "gate") == logistic
    assert fits.choose(scores(0.0, 0.001), "best") == large
    # a clear gain: the best polyhedron, not the smallest K near it (one-se)
    clear = scores(0.05, 0.051)
    assert fits.choose(clear, "gate") == large
    assert fits.choose(clear, "one-se") == small
    # two SEs ask for more than one
    marginal = scores(0.0, 0.004)
    assert fits.choose(marginal, "gate", n_se=1.0) == large
    assert fits.choose(marginal, "gate", n_se=2.0) == logistic
    # a failed K = 1 fit (minus infinity) cannot be kept
    failed = {**scores(0.0, 0.001), logistic: np.full(400, -np.inf)}
    assert fits.choose(failed, "gate") == large
    with pytest.raises(ValueError, match="rule must be"):
        fits.choose(clear, "smallest")


def test_table1_gate_mle_fits_logistic_regression_without_penalty():
    fits = _table1_fits()
    rng = np.random.default_rng(1)
    base = rng.normal(-0.6, 0.3, 300)
    shrunk = fits.PolySetting(1, 1e-2)  # the better validation log-likelihood
    light = fits.PolySetting(1, 1e-4)
    polytope = fits.PolySetting(2, 1e-3, 1.0, 1)
    noise = rng.normal(0.0, 0.05, 300)  # paired SE of the difference ~0.003
    scores = {shrunk: base + 0.01, light: base, polytope: base + 0.011 + noise}
    # the gate keeps K = 1 (its best penalty is the yardstick) ...
    assert fits.choose(scores, "gate") == shrunk
    # ... and gate-mle fits that K = 1 without a penalty, as Logit does
    assert fits.choose(scores, "gate-mle") == fits.PolySetting(1, 0.0)
    # a polyhedron that clearly wins is chosen as under "gate"
    clear = {**scores, polytope: base + 0.2 + noise}
    assert fits.choose(clear, "gate-mle") == fits.choose(clear, "gate") == polytope


def test_table1_repeated_inner_cv_averages_each_row():
    fits = _table1_fits()
    design = np.zeros((3, 1))

    def split(rows):
        rows = np.asarray(rows)
        return fits.Split(design, np.ones(3), design[: rows.size], rows, rows)

    # two cross-validations of rows 10..13, folds shuffled differently
    splits = [split([12, 10]), split([13, 11]), split([11, 10]), split([13, 12])]
    values = [np.array([1.0, 0.0]), np.array([1.0, 1.0])]
    values += [np.array([0.0, 1.0]), np.array([0.0, 1.0])]
    # rows 10, 11, 12, 13 in order, each the mean of its two validations
    pooled = fits.pool_by_row(values, splits)
    np.testing.assert_array_equal(pooled, [0.5, 0.5, 1.0, 0.5])
    # one cross-validation: the same scores, rows in data-set order
    np.testing.assert_array_equal(
        fits.pool_by_row(values[:2], splits[:2]), [0.0, 1.0, 1.0, 1.0]
    )


def test_table1_warm_starts_walk_alpha_then_gamma():
    fits = _table1_fits()
    grids = fits.Grids((1, 2), (0.2, 1.0), (1e-4, 1e-2), (1, 0), (), (), (), ())
    settings = fits.plume_candidates(grids)
    for warm in (None, "alpha", "grid"):
        previous: dict = {}
        starts = {}  # each setting's start: the (K, gamma, inside, alpha) it came from
        for setting in fits.search_order(settings, warm):
            start = fits.warm_params(previous, 0, setting, warm)
            starts[setting] = None if start is None else tuple(start)
            origin = (setting.k, setting.gamma, setting.inside, setting.alpha)
            fits.remember(previous, 0, setting, np.array(origin, dtype=object))
        for s, origin in starts.items():
            same_path = (s.k, s.gamma, s.inside)
            if warm is None or (s.alpha == 1e-2 and (warm == "alpha" or s.k == 1)):
                # no warm start, or the first alpha of an alpha path
                assert origin is None
            elif s.alpha == 1e-4:  # the larger alpha of the same K/gamma/inside
                assert origin == (*same_path, 1e-2)
            elif s.gamma == 0.2:  # the first setting of a K/inside: cold
                assert origin is None
            else:  # the smaller gamma's fit at this K/inside/alpha
                assert origin == (s.k, 0.2, s.inside, 1e-2)
    grid_order = fits.search_order(settings, "grid")
    k2_inside1 = [(s.gamma, s.alpha) for s in grid_order if s.k == 2 and s.inside == 1]
    assert k2_inside1 == [(0.2, 1e-2), (0.2, 1e-4), (1.0, 1e-2), (1.0, 1e-4)]
    # on another inner fold nothing is known yet
    assert fits.warm_params(previous, 1, settings[-1], "grid") is None
    with pytest.raises(ValueError, match="warm_start must be"):
        fits.select("plume", [], grids, "logloss", fits.FitContext(), True, "best")


@pytest.mark.parametrize("warm", [None, "alpha", "grid"])
def test_table1_selection_runs_with_each_warm_start(warm):
    fits = _table1_fits()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(120, 2))
    y = (np.min(x @ [[1.0, -1.0], [1.0, 1.0]], axis=1) > -0.3).astype(float)
    rows = np.arange(120)
    splits = [
        fits.Split(x[rows % 2 == f], y[rows % 2 == f], x[rows % 2 != f],
                   y[rows % 2 != f], rows[rows % 2 != f])
        for f in (0, 1)
    ]  # fmt: skip
    grids = fits.Grids((1, 2), (0.5, 1.0), (1e-2, 1e-3), (1,), (), (), (), ())
    selection = fits.select(
        "plume", splits, grids, "logloss", fits.FitContext(n_init=1), warm, "best"
    )
    assert isinstance(selection.seconds, float) and selection.seconds > 0
    assert selection.setting in fits.plume_candidates(grids)
    assert selection.failures == 0


def test_table1_fits_pass_the_em_options_on(monkeypatch):
    """--em-tol and --em-overrelax reach every PLUME fit of the harness."""
    fits = _table1_fits()
    seen = []
    original = fits.PolyhedralMixtureLogit.fit

    def spy(self, *args, **kwargs):
        seen.append((kwargs["em_tol"], kwargs["em_overrelax"]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(fits.PolyhedralMixtureLogit, "fit", spy)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(150, 2))
    y = (np.min(x @ [[1.0, -1.0], [1.0, 1.0]], axis=1) > -0.3).astype(float)
    context = fits.FitContext(n_init=1, em_tol=1e-2, em_overrelax=2.0)
    fitted = fits.fit_poly(x, y, fits.PolySetting(2, 1e-3, 1.0, 1), context, False)
    assert seen == [(1e-2, 2.0)] and np.isfinite(fitted.llf)
    assert fits.FitContext().em_overrelax == 1.0  # the library's plain steps


def test_table1_protocol_is_warm_with_an_earlier_hand_over_unless_told():
    """The protocol's defaults: alpha-warm starts and em_tol = 1e-2; ``--warm-start
    none --em-tol 1e-3`` is the cold protocol of the earlier reports."""
    table1 = _benchmark_module("table1")
    config = table1.make_config(table1.parse_args([]))
    assert (config.warm_start, config.em_tol) == ("alpha", 1e-2)
    cold = table1.parse_args(["--warm-start", "none", "--em-tol", "1e-3"])
    assert (cold.warm_start, cold.em_tol) == (None, 1e-3)
    assert table1.parse_args(["--warm-start"]).warm_start == "alpha"
    assert table1.parse_args(["--warm-start", "grid"]).warm_start == "grid"


def test_polyhedral_oracle_refuses_the_bayes_oracle_on_noisy_labels(capsys):
    polyhedral_oracle = _benchmark_module("polyhedral_oracle")
    with pytest.raises(SystemExit):
        polyhedral_oracle.parse_args(["--noise", "0.1"])
    assert "add --draws 0 with --noise" in capsys.readouterr().err
    assert polyhedral_oracle.parse_args(["--noise", "0.1", "--draws", "0"]).draws == 0


def test_version_space_draws_are_uniform_on_the_sphere():
    version_space = _benchmark_module("_version_space")
    rng = np.random.default_rng(0)
    # the positive octant of the sphere in R^3: by Archimedes' theorem each
    # coordinate of a uniform point is uniform on [0, 1]; the chart's density
    # varies by a factor 5 across this wide version space, so the rejection
    # step is exercised
    draws = version_space.sample_version_space(np.eye(3), 3000, rng=rng)
    assert np.allclose(np.linalg.norm(draws, axis=1), 1) and np.all(draws >= 0)
    for coordinate in draws.T:
        assert stats.kstest(coordinate, "uniform").pvalue > 1e-3
    # in the plane: the arc of angles [0.3, 1.1], uniform in angle
    arc = np.array([[-np.sin(0.3), np.cos(0.3)], [np.sin(1.1), -np.cos(1.1)]])
    draws = version_space.sample_version_space(arc, 3000, rng=rng)
    angle = np.arctan2(draws[:, 1], draws[:, 0])
    assert stats.kstest((angle - 0.3) / 0.8, "uniform").pvalue > 1e-3


def test_version_space_draws_match_rejection_sampling_in_four_dimensions():
    version_space = _benchmark_module("_version_space")
    rng = np.random.default_rng(3)
    # ten constraints around e1 in R^4: about 5% of the sphere, so uniform
    # points on the sphere kept when they satisfy all of them are an
    # independent reference (the chart's density and the rounding both matter)
    tilt = rng.standard_normal((10, 4))
    tilt[:, 0] = 0
    signed = 0.6 * np.eye(4)[0] + tilt / np.linalg.norm(tilt, axis=1, keepdims=True)
    sphere = rng.standard_normal((400000, 4))
    sphere /= np.linalg.norm(sphere, axis=1, keepdims=True)
    reference = sphere[np.all(sphere @ signed.T >= 0, axis=1)]
    draws = version_space.sample_version_space(signed, 5000, rng=rng)
    # hit-and-run draws are correlated: allow for a third of them being free
    standard_error = reference.std(axis=0) / np.sqrt(5000 / 3)
    assert np.all(
        np.abs(draws.mean(axis=0) - reference.mean(axis=0)) < 4 * standard_error
    )
    probes = rng.standard_normal((5, 4))
    shares = (draws @ probes.T >= 0).mean(axis=0)
    np.testing.assert_allclose(
        shares, (reference @ probes.T >= 0).mean(axis=0), atol=0.03
    )


def test_version_space_of_a_thin_cone_keeps_every_point_on_its_side():
    version_space = _benchmark_module("_version_space")
    rng = np.random.default_rng(1)
    # 400 noise-free points of a halfspace in R^5: a thin version space that
    # the rounded hit-and-run must stay in, around the true direction
    truth = np.array([0.3, 1.0, -0.5, 0.2, 0.0])
    points = np.column_stack([np.ones(400), rng.standard_normal((400, 4))])
    signed = np.sign(points @ truth)[:, None] * points
    draws = version_space.sample_version_space(signed, 500, rng=rng)
    assert np.all(signed @ draws.T >= -1e-9)
    assert np.all(draws @ truth / np.linalg.norm(truth) > 0.95)
    # one point leaves a whole hemisphere, which no chart around its centre holds
    with pytest.raises(ValueError, match="reaches the edge of its chart"):
        version_space.sample_version_space(np.eye(3)[:1], 5, rng=rng)
    with pytest.raises(ValueError, match="version space is empty"):
        version_space.sample_version_space(np.vstack([signed, -signed[:1]]), 5, rng=rng)


def test_polyhedral_oracle_fits_each_true_face():
    polyhedral = _benchmark_module("_polyhedral_fits")
    polyhedral_oracle = _benchmark_module("polyhedral_oracle")
    # told the owner of every point, each face is a logistic regression: with
    # 4000 noise-free points in the plane it lands on the true face
    split = polyhedral.make_split(polyhedral.Setting(2, 3, 0.0, 0), 4000, 4000)
    fitted = polyhedral_oracle.oracle_hyperplanes(split, alpha=1e-4)
    truth = split.truth.to_numpy(dtype=float)
    normal = fitted[:, 1:] / np.linalg.norm(fitted[:, 1:], axis=1, keepdims=True)
    true_normal = truth[:, 1:] / np.linalg.norm(truth[:, 1:], axis=1, keepdims=True)
    # rows are in the truth's order: no matching needed
    assert np.all(np.sum(normal * true_normal, axis=1) > 0.999)
    gap = polyhedral_oracle.oracle_gap(split, alpha=1e-4)
    assert -1.0 < gap <= 0.0  # noise-free: the truth scores 100%


def test_table1_timing_pass_times_only_the_methods_run():
    table1 = _benchmark_module("table1")
    labels = [e[0] for e in table1.timing_estimators([], "heart", 0, ("plume-bfgs",))]
    assert labels == ["plume-bfgs", "logit"]  # Logit: the reference of the ratios
    every = [e[0] for e in table1.timing_estimators([], "heart", 0)]
    assert every == ["plume-newton", "plume-gradient", "plume-bfgs", "spla1", "logit"]


def test_reports_name_the_module_and_no_path(tmp_path):
    common = importlib.import_module("benchmarks._common")
    root = common.REPO_ROOT
    argv = [
        "--data-dir",
        str(root.parent / "shared" / "data"),
        f"--output={tmp_path}",
        "--name",
        "x y",
        str(root / "benchmarks" / "results"),
    ]
    assert common.command_line("table1", argv) == (
        "python -m benchmarks.table1 --data-dir ../shared/data "
        f"'--output=<elsewhere>/{tmp_path.name}' --name 'x y' benchmarks/results"
    )
    run = common.Run("fit_speed", argv)
    header = "\n".join(run.header("sklearn"))
    assert "python -m benchmarks.fit_speed --data-dir ../shared/data" in header
    for word in (
        "plumestats ",
        "python 3.",
        "numpy ",
        "scipy ",
        "statsmodels ",
        "pandas ",
        "- BLAS: ",
        "OMP_NUM_THREADS=",
        "load average",
    ):
        assert word in header
    # the sdist job tests the installed package: not this checkout's
    states = ("git ", "not a git checkout", "imported from outside this checkout")
    assert any(state in header for state in states)
    # a peer's version is printed where it is installed (the sdist job has none)
    if importlib.util.find_spec("sklearn") is not None:
        assert "sklearn " in header
    for path in (str(root), str(tmp_path), sys.executable, os.sep + "tmp"):
        assert path not in header


def test_uci_formula_uses_every_column_but_the_dropped_ones(data_dir):
    common = importlib.import_module("benchmarks._common")
    frame, formula = common.load_uci("heart", data_dir)
    outcome, terms = formula.split(" ~ ")
    assert outcome == "disease" == frame.columns[-1]
    terms = terms.split(" + ")
    assert len(terms) == frame.shape[1] - 1
    assert "C(thal)" in terms and "age" in terms
    _, adult = common.load_uci("adult", data_dir)
    assert "education_num" not in adult and "C(education)" in adult
    with pytest.raises(SystemExit, match="--data-dir"):
        common.load_uci("pima", data_dir / "missing")


def test_maxima_starts_needed_for_a_95_percent_rate():
    maxima = _benchmark_module("maxima")
    # 1 - (1 - p)^n >= 0.95: p = 0.5 needs 5 starts (0.969), 4 give only 0.9375
    assert maxima.starts_needed(0.5) == "5"
    assert maxima.starts_needed(1 / 40) == "119"
    assert maxima.starts_needed(1.0) == "1"
    assert maxima.starts_needed(0.0) == "none reached"


def test_maxima_wider_cases_add_heart_with_every_column_and_ilpd(data_dir):
    maxima = _benchmark_module("maxima")
    issue = [(c.name, c.k) for c in maxima.cases(data_dir, [2, 3])]
    wider = maxima.cases(data_dir, [2, 3], wider=True)
    assert [(c.name, c.k) for c in wider if (c.name, c.k) in issue] == issue
    extra = [c for c in wider if (c.name, c.k) not in issue]
    assert [(c.name, c.k) for c in extra] == [
        ("heart, every column", 2),
        ("ilpd", 2),
        ("heart, every column", 3),
        ("ilpd", 3),
    ]
    assert "C(thal)" in extra[0].formula and "serum_chol" in extra[0].formula
