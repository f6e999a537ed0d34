"""Smoke tests: the benchmark scripts run end to end on small settings."""

from __future__ import annotations

import csv
import importlib
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script, *args):
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


def test_fit_speed_quick(data_dir, tmp_path):
    output = tmp_path / "fit_speed.md"
    stdout = _run(
        "fit_speed.py", "--quick", "--data-dir", str(data_dir), "--output", str(output)
    )
    assert "pima" in stdout
    text = output.read_text()
    assert "| pima |" in text and "ratio" in text


def test_init_compare_small(data_dir, tmp_path):
    output = tmp_path / "init.md"
    stdout = _run(
        "init_compare.py",
        "--data-dir",
        str(data_dir),
        "--datasets",
        "pima",
        "--ks",
        "2",
        "--output",
        str(output),
    )
    assert "kmeans" in stdout
    assert "| pima | 2 |" in output.read_text()


def test_polyhedral_quick(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    pytest.importorskip("matplotlib", reason="the polyhedral benchmark needs [bench]")
    stdout = _run("polyhedral.py", "--quick", "--output", str(tmp_path))
    assert stdout == ""  # progress goes to stderr, results to the files
    paths = {ext: tmp_path / f"polyhedral_quick.{ext}" for ext in ("md", "csv", "png")}
    assert all(path.is_file() for path in paths.values())
    table = pd.read_csv(paths["csv"])
    expected = {
        "true polytope",
        "PLUME",
        "SPLA1",
        "Logit",
        "SVM (RBF)",
        "CART",
        "PLUME (K by BIC)",
        "PLUME or PLUME + flips",
    }
    assert set(table["method"]) == expected
    assert (table["status"] == "ok").all()
    assert np.isfinite(table["test_accuracy"]).all()
    assert table["test_accuracy"].between(0, 1).all()
    # two d x one K x two noise levels, one seed
    assert table.groupby("method").size().eq(4).all()
    text = paths["md"].read_text()
    assert "## Summary" in text and "| 5 | 2 | 0.10 |" in text
    # the extended grid can only match or beat PLUME's own CV score
    cv = (
        table.set_index(["d", "noise", "method"])["hyper_parameters"]
        .str.extract(r"CV acc ([0-9.]+)")[0]
        .astype(float)
    )
    for d, noise in {(d, n) for d, n, _ in cv.index}:
        assert cv[d, noise, "PLUME or PLUME + flips"] >= cv[d, noise, "PLUME"]


@pytest.fixture(scope="module")
def table1_smoke(data_dir, tmp_path_factory):
    """One ``table1.py --quick`` run (heart and pima), shared by the tests below."""
    pytest.importorskip("sklearn", reason="the Table 1 benchmark needs [bench]")
    pytest.importorskip("matplotlib", reason="the Table 1 benchmark needs [bench]")
    folder = tmp_path_factory.mktemp("table1")
    stdout = _run(
        "table1.py",
        "--quick",
        "--data-dir",
        str(data_dir),
        "--output",
        str(folder),
        "--name",
        "table1_smoke",
    )
    return folder, stdout


def test_table1_quick(table1_smoke):
    folder, stdout = table1_smoke
    assert "## Targets" in stdout
    for suffix in (".md", ".csv", "_summary.csv", "_timing.csv", ".png"):
        assert (folder / f"table1_smoke{suffix}").stat().st_size > 0
    text = (folder / "table1_smoke.md").read_text()
    assert "Figure (`table1_smoke.png`)" in text
    assert "| heart | plume-newton |" in text and "| pima | svm |" in text
    # two inner shuffles by default (DEFAULT_INNER_REPEATS)
    assert "2-fold CV repeated 2 times with different shuffles" in text
    with open(folder / "table1_smoke.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    methods = {row["method"] for row in rows}
    # the three M-steps, SPLA1, Logit, SVM and CART
    assert len(methods) == 7 and {"plume-bfgs", "spla1", "cart"} <= methods
    # 2 datasets x 3 outer folds per method
    assert len(rows) == 2 * 3 * len(methods)
    accuracies = [float(row["accuracy"]) for row in rows]
    assert all(0.5 < a <= 1.0 for a in accuracies)


def _split_table1_run(folder, stem):
    """Write the run ``stem`` again as one run per dataset, as if each dataset
    had been run alone (``--datasets NAME``); returns the new stems in the
    order pima, heart (not the run's order)."""
    records = pd.read_csv(folder / f"{stem}.csv", keep_default_na=False)
    timing = pd.read_csv(folder / f"{stem}_timing.csv", keep_default_na=False)
    text = (folder / f"{stem}.md").read_text()
    assert "repeats: heart 1, pima 1 (adult" in text
    stems = []
    for name in ("pima", "heart"):
        records[records["dataset"] == name].to_csv(
            folder / f"alone_{name}.csv", index=False
        )
        timing[timing["dataset"] == name].to_csv(
            folder / f"alone_{name}_timing.csv", index=False
        )
        alone = text.replace(
            "repeats: heart 1, pima 1 (adult", f"repeats: {name} 1 (adult"
        )
        (folder / f"alone_{name}.md").write_text(alone)
        stems.append(f"alone_{name}")
    return stems


def _after(text, heading):
    return text[text.index(heading) :]


def test_table1_combine_gives_back_the_run_it_was_split_from(table1_smoke):
    folder, _ = table1_smoke
    stems = _split_table1_run(folder, "table1_smoke")
    _run("table1_combine.py", *stems, "--input", str(folder), "--name", "joined")
    original = (folder / "table1_smoke.md").read_text()
    joined = (folder / "joined.md").read_text()
    # the protocol (with both datasets' repeats) and every table and target
    assert _after(joined, "## Protocol") == _after(original, "## Protocol").replace(
        "table1_smoke.png", "joined.png"
    )
    # each source run is listed with its command, in the paper's dataset order
    sources = joined[: joined.index("## Protocol")]
    assert sources.index("`alone_heart.md`") < sources.index("`alone_pima.md`")
    assert sources.count("- command: `") == 2
    for suffix in ("_summary.csv", "_timing.csv"):
        pd.testing.assert_frame_equal(
            pd.read_csv(folder / f"joined{suffix}"),
            pd.read_csv(folder / f"table1_smoke{suffix}"),
        )
    assert (folder / "joined.png").stat().st_size > 0


def test_table1_combine_refuses_runs_of_different_protocols(table1_smoke):
    folder, _ = table1_smoke
    pima, heart = _split_table1_run(folder, "table1_smoke")
    text = (folder / f"{pima}.md").read_text()
    (folder / f"{pima}.md").write_text(text.replace("n_init=1,", "n_init=3,"))
    command = [sys.executable, str(BENCHMARKS / "table1_combine.py"), "--input"]
    mismatch = subprocess.run(
        [*command, str(folder), heart, pima], capture_output=True, text=True
    )
    assert mismatch.returncode == 1
    assert "differ in their protocol" in mismatch.stderr
    assert "n_init=3" in mismatch.stderr and "n_init=1" in mismatch.stderr
    twice = subprocess.run(
        [*command, str(folder), heart, heart], capture_output=True, text=True
    )
    assert twice.returncode == 1 and "heart is in both" in twice.stderr
    missing = subprocess.run(
        [*command, str(folder), heart, "no_such_run"], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "no_such_run" in missing.stderr
    (folder / f"{pima}.md").write_text(text.replace("## Protocol", "## Setup"))
    unreadable = subprocess.run(
        [*command, str(folder), heart, pima], capture_output=True, text=True
    )
    assert unreadable.returncode == 1
    assert "has no '## Protocol' section" in unreadable.stderr
    assert not (folder / "table1.md").exists()


def test_coverage_quick(tmp_path):
    pytest.importorskip("threadpoolctl", reason="the benchmarks need [bench]")
    stdout = _run("coverage.py", "--quick", "--output", str(tmp_path))
    assert stdout == ""  # progress goes to stderr, results to the files
    table = pd.read_csv(tmp_path / "coverage_quick.csv")
    # one cell (K=2, d=2): six parameters, coverages are shares of 5 replicates
    assert len(table) == 6 and (table["reps"] == 5).all()
    for column in ("coverage_oim", "coverage_hc0"):
        assert table[column].between(0, 1).all()
        assert np.allclose(table[column] * 5, np.round(table[column] * 5))
    assert (table["se_ratio_oim"] > 0).all()
    assert "| K | gamma | d | N |" in (tmp_path / "coverage_quick.md").read_text()


def test_table1_rules_quick(data_dir, tmp_path):
    pytest.importorskip("sklearn", reason="the Table 1 benchmark needs [bench]")
    args = ["--quick", "--data-dir", str(data_dir), "--output", str(tmp_path)]
    _run("table1_rules.py", *args, "--cache-dir", str(tmp_path / "cache"))
    summary = pd.read_csv(tmp_path / "table1_rules_quick.csv")
    # Logit and 72 rules (4 inner schemes) on heart; accuracies are shares of rows
    assert len(summary) == 73 and set(summary["dataset"]) == {"heart"}
    assert "gate-mle1-ll/5" in set(summary["rule"])  # table1.py's default
    assert "gate-mle1-ll/5x2" in set(summary["rule"])  # --inner-repeats 2
    assert summary["accuracy"].between(50, 100).all()
    logit = summary.set_index("rule").loc["logit"]
    assert logit["minus_logit"] == 0
    # a second run reads every fold from the cache instead of refitting
    cache = sorted((tmp_path / "cache").iterdir())
    assert [path.name for path in cache] == ["heart_0_0.pkl", "heart_0_1.pkl"]
    written = [path.stat().st_mtime_ns for path in cache]
    _run("table1_rules.py", *args, "--cache-dir", str(tmp_path / "cache"))
    assert [path.stat().st_mtime_ns for path in cache] == written
    # a fold cached without one inner cross-validation gets only that one fitted
    _table1_fits()  # the pickles hold its settings
    with open(cache[0], "rb") as handle:
        stored = pickle.load(handle)
    second_shuffle = max(stored["inner"])  # (5 folds, inner repeat 1)
    kept = stored["inner"].pop(second_shuffle)
    stored["logit"] = np.zeros_like(stored["logit"])  # a marker, not refitted
    with open(cache[0], "wb") as handle:
        pickle.dump(stored, handle)
    _run("table1_rules.py", *args, "--cache-dir", str(tmp_path / "cache"))
    with open(cache[0], "rb") as handle:
        completed = pickle.load(handle)
    for criterion, values in enumerate(completed["inner"][second_shuffle]):
        for setting, row_scores in values.items():
            np.testing.assert_allclose(row_scores, kept[criterion][setting])
    assert not completed["logit"].any()
    # a wider gamma grid fits only the settings it adds, and scores them as a
    # run from an empty cache does; the narrower grid's replay ignores them
    wider = [*args, "--gammas", "1", "5"]
    _run("table1_rules.py", *wider, "--cache-dir", str(tmp_path / "cache"))
    _run("table1_rules.py", *wider, "--cache-dir", str(tmp_path / "fresh"))
    with open(cache[0], "rb") as handle:
        extended = pickle.load(handle)
    with open(tmp_path / "fresh" / cache[0].name, "rb") as handle:
        fresh = pickle.load(handle)
    assert not extended["logit"].any()  # the marker survived: nothing refitted
    added = set(extended["settings"]) - set(completed["settings"])
    assert added and {s.gamma for s in added} == {5.0}
    assert set(extended["settings"]) == set(fresh["settings"])
    for cv, pair in fresh["inner"].items():
        for criterion, values in enumerate(pair):
            for setting, row_scores in values.items():
                np.testing.assert_array_equal(
                    extended["inner"][cv][criterion][setting], row_scores
                )
    for setting, row_scores in fresh["outer"].items():
        np.testing.assert_array_equal(extended["outer"][setting], row_scores)
    wide = pd.read_csv(tmp_path / "table1_rules_quick_gammas-1-5.csv")
    assert len(wide) == 73
    narrow = pd.read_csv(tmp_path / "table1_rules_quick.csv")
    _run("table1_rules.py", *args, "--cache-dir", str(tmp_path / "cache"))
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "table1_rules_quick.csv"), narrow
    )


def _benchmark_module(name):
    """A module of ``benchmarks/`` (they need the ``bench`` extra)."""
    pytest.importorskip("sklearn", reason="the benchmarks need [bench]")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


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


def test_label_noise_quick():
    pytest.importorskip("sklearn", reason="the benchmarks need [bench]")
    # d = 2, K = 2, 10% of labels flipped: the label-flip likelihood finds the
    # flip rate and the true faces, where PLUME's sit outside them
    stdout = _run("label_noise.py", "--quick")
    row = [
        cell.strip() for cell in stdout.strip().splitlines()[-1].strip("|").split("|")
    ]
    true, plume, contaminated = (float(cell) for cell in row[3:6])
    eps, interval = row[7].split(" ")
    low, high = (float(v) for v in interval.strip("()").split("-"))
    shift_plume, shift_fixed = float(row[8]), float(row[9])
    assert contaminated >= true - 0.005 > plume
    assert abs(float(eps) - 0.1) < 0.02 and low < 0.1 < high
    assert shift_plume > 0.03 and abs(shift_fixed) < 0.01
    assert row[10] == "True"  # the label-flip fit converged


def test_reseat_heldout_small_run(data_dir, tmp_path):
    pytest.importorskip("sklearn", reason="the benchmarks need [bench]")
    output = tmp_path / "reseat.md"
    _run(
        "reseat_heldout.py",
        *("--data-dir", str(data_dir), "--datasets", "heart", "--ks", "3"),
        *("--folds", "3", "--repeats", "1", "--output", str(output)),
    )
    text = output.read_text()
    assert "`fit(alpha, n_init=3, random_state=repeat)` without and with" in text
    row = next(line for line in text.splitlines() if line.startswith("| heart | 3 |"))
    folds, better, *figures = (float(cell) for cell in row.split("|")[3:-1])
    assert folds == 3 and 0 <= better <= 3
    assert all(50 < share < 100 for share in figures[:2])
    assert all(-5 < loglik < 0 for loglik in figures[2:])


def test_polyhedral_quick_with_reseat_says_so(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    _run(
        "polyhedral.py",
        *("--quick", "--reseat", "--methods", "plume", "spla1"),
        *("--ds", "2", "--noises", "0", "--output", str(tmp_path)),
    )
    text = (tmp_path / "polyhedral_quick.md").read_text()
    assert "`fit(alpha=a, n_init=1, random_state=s, reseat=K)`" in text
    assert "then re-seating moves, each kept only if it raises the objective" in text
    rows = [line for line in text.splitlines() if line.startswith("| PLUME |")]
    rows += [line for line in text.splitlines() if line.startswith("| SPLA1 |")]
    assert len(rows) == 2 and all("n_init=1, reseat=K (CV acc" in row for row in rows)


def test_polyhedral_oracle_small_run_writes_its_report(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    output = tmp_path / "oracle.md"
    small = ["--d", "2", "--k", "2", "--seeds", "2", "--n-train", "300"]
    grid = ["--n-test", "1000", "--gammas", "1", "--alphas", "1e-3"]
    chain = ["--draws", "200", "--burn-in", "200"]
    _run("polyhedral_oracle.py", *small, *grid, *chain, "--output", str(output))
    text = output.read_text()
    assert text.startswith("# Polyhedral suite: PLUME against an oracle")
    assert (
        "- command: `" in text and "- setting: d=2, K=2, noise=0, 300 training" in text
    )
    assert "- Bayes oracle: told the owners too; " in text
    assert "200 draws per face, every 10th step after 200 of burn-in" in text
    rows = {
        line.split("|")[1].strip(" *"): line.split("|")[2:-1]
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| estimate")
    }
    assert set(rows) == {
        "oracle, alpha 0.001",
        "Bayes oracle, vote of 50 draws",
        "Bayes oracle, vote of 200 draws",
        "Bayes oracle, Bayes point",
        "PLUME, gamma 1, alpha 0.001",
        "oracle, best alpha per seed (test labels)",
        "PLUME, best gamma and alpha per seed (test labels)",
    }
    # noise-free: no polytope beats the true one, whose accuracy is 100%
    gaps = [float(cell) for cells in rows.values() for cell in cells]
    assert len(gaps) == 7 * 3 and all(-10 < g <= 0 for g in gaps)


def test_polyhedral_oracle_refuses_the_bayes_oracle_on_noisy_labels(capsys):
    polyhedral_oracle = _benchmark_module("polyhedral_oracle")
    with pytest.raises(SystemExit):
        polyhedral_oracle.parse_args(["--noise", "0.1"])
    assert "add --draws 0 with --noise" in capsys.readouterr().err
    assert polyhedral_oracle.parse_args(["--noise", "0.1", "--draws", "0"]).draws == 0


def test_version_space_draws_are_uniform_on_the_sphere():
    version_space = _benchmark_module("version_space")
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
    version_space = _benchmark_module("version_space")
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
    version_space = _benchmark_module("version_space")
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
    polyhedral = _benchmark_module("polyhedral")
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


def test_polyhedral_truth_start_quick():
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    stdout = _run("polyhedral_truth_start.py", "--quick")
    starts = [line.split("|")[4].strip() for line in stdout.splitlines()[2:]]
    assert starts == ["k-means x3", "truth x10"]


def test_restart_strategies_quick():
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    strategies = ["kmeans", "mixed", "kmeans+reseat"]
    stdout = _run("restart_strategies.py", "--quick", "--strategies", *strategies)
    row = next(line for line in stdout.splitlines() if line.startswith("| 2 | 3 | 0"))
    objectives = [float(cell) for cell in row.split("|")[4:-1:2]]
    assert len(objectives) == 3 and all(-1 < value < 0 for value in objectives)
    # a move is kept only when it raises the objective
    assert objectives[2] >= objectives[0]
    assert "- simulated: `mixed` against `kmeans`: better maximum in " in stdout
    assert "- simulated: `kmeans+reseat` against `kmeans`: better maximum in " in stdout
    assert "worse in 0" in stdout.split("`kmeans+reseat` against")[1].splitlines()[0]


def test_prediction_coverage_quick():
    pytest.importorskip("threadpoolctl", reason="the benchmarks need [bench]")
    stdout = _run("prediction_coverage.py", "--quick")
    lines = stdout.splitlines()
    rows = [line.split("|")[3:-1] for line in lines if line.startswith("| 400 ")]
    assert len(rows) == 2  # the 90% and 95% levels
    shares = np.array([[float(cell) for cell in row] for row in rows])
    assert shares.shape == (2, 3) and np.all((shares >= 0.5) & (shares <= 1))


def test_bootstrap_parallel_quick(tmp_path):
    pytest.importorskip("joblib", reason="the benchmark needs [parallel]")
    output = tmp_path / "bootstrap_parallel.md"
    stdout = _run("bootstrap_parallel.py", "--quick", "--output", str(output))
    text = output.read_text()
    assert text.strip() in stdout  # printed and written
    rows = [line.split("|")[1:-1] for line in text.splitlines()]
    rows = [cells for cells in rows if cells and cells[0].strip() in ("1", "2")]
    assert [cells[0].strip() for cells in rows] == ["1", "2"]
    # the same replicates whatever n_jobs; the speed-up is n_jobs=1's own 1.00
    assert all(cells[-1].strip() == "yes" for cells in rows)
    assert rows[0][5].strip() == rows[0][6].strip() == "1.00"
    assert float(rows[1][7]) > 0  # the first call, workers started
    # provenance without this machine's paths
    assert "- command: `python benchmarks/bootstrap_parallel.py --quick" in text
    assert str(BENCHMARKS.parent) not in text
