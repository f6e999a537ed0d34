"""Smoke tests: every maintained benchmark runs end to end on small settings,
as ``python -m benchmarks.<name>`` from the project root, and its report
carries its provenance without a machine path."""

from __future__ import annotations

import csv
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(name, *args):
    """``python -m benchmarks.<name> <args>`` from the project root."""
    completed = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


def _benchmark_module(name):
    """A module of the ``benchmarks`` package (they need the ``bench`` extra)."""
    pytest.importorskip("sklearn", reason="the benchmarks need [bench]")
    return importlib.import_module(f"benchmarks.{name}")


def _assert_provenance(text, command):
    """The provenance lines of a report: the command as run, no paths."""
    assert f"- command: `{command}" in text
    for line in ("plumestats ", "numpy ", "- BLAS: ", "- threads: ", "- load average"):
        assert line in text
    assert str(ROOT) not in text and sys.executable not in text


def test_fit_speed_quick(data_dir, tmp_path):
    stdout = _run("fit_speed", "--quick", "--data-dir", data_dir, "--output", tmp_path)
    assert "pima" in stdout
    text = (tmp_path / "fit_speed_quick.md").read_text()
    assert "| pima |" in text and "ratio" in text
    _assert_provenance(text, "python -m benchmarks.fit_speed --quick --data-dir ")


def test_fit_speed_also_at_the_default_threads(data_dir, tmp_path):
    pytest.importorskip("threadpoolctl")
    _run(
        "fit_speed",
        *("--quick", "--repeats", "1", "--blas-threads", "1"),
        "--also-default-threads",
        *("--data-dir", data_dir, "--output", tmp_path),
    )
    text = (tmp_path / "fit_speed_quick.md").read_text()
    first, second = text.split("## At the default BLAS threads")
    assert "| pima |" in first and "| pima |" in second
    assert "PLUMESTATS_BLAS_THREADS threads (unset (1))" in second


def test_maxima_quick(data_dir, tmp_path):
    stdout = _run(
        "maxima",
        "--quick",
        "--strategies",
        "default",
        "n_init=2,init=mixed",
        "--per-start",
        "3",
        "--data-dir",
        data_dir,
        "--output",
        tmp_path,
    )
    text = (tmp_path / "maxima_quick.md").read_text()
    # single starts by kind: 3 of each, against the table's best-known value
    lines = text.splitlines()
    per_start = [
        line.split(" | ") for line in lines if line.startswith("| pima | 2 | -")
    ]
    default = next(line for line in lines if line.startswith("| pima | 2 | default"))
    assert len(per_start) == 1
    assert float(per_start[0][2]) == float(default.split(" | ")[-1].rstrip(" |"))
    assert all("/3 (" in cell for cell in per_start[0][3:]) and len(per_start[0]) == 7
    for row in ("| heart | 2 | default |", "| pima | 2 | n_init=2,init=mixed |"):
        assert row in stdout and row in text
    rows = [
        line.split(" | ") for line in text.splitlines() if line.startswith("| heart")
    ]
    reached = [int(row[3].split("/")[0]) for row in rows]
    assert all(0 <= count <= 2 for count in reached)  # two seeds each
    _assert_provenance(text, "python -m benchmarks.maxima --quick --strategies ")


def test_defaults_quick(data_dir, tmp_path):
    pytest.importorskip("sklearn", reason="the defaults benchmark needs [bench]")
    stdout = _run("defaults", "--quick", "--data-dir", data_dir, "--output", tmp_path)
    text = (tmp_path / "defaults_quick.md").read_text()
    rows = [
        line.split(" | ") for line in text.splitlines() if line.startswith("| heart")
    ]
    assert [row[3] for row in rows] == [
        "LogisticRegression()",
        "PolyhedralClassifier()",
        "PolyhedralClassifier(k=2, alpha=0)",
        "LogisticRegression(max_iter=10000)",
        "StandardScaler() + LogisticRegression()",
    ]
    assert all(row in stdout for row in text.splitlines() if row.startswith("| heart"))
    assert rows[0][5].startswith("+0.00 ± 0.00")  # the reference against itself
    assert all(50 < float(row[4]) <= 100 for row in rows)
    chosen = rows[1][6]  # K of each of the 3 folds, by BIC
    assert sum(int(part.split(": ")[1]) for part in chosen.split(", ")) == 3
    _assert_provenance(text, "python -m benchmarks.defaults --quick --data-dir ")


def test_polyhedral_quick(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    pytest.importorskip("matplotlib", reason="the polyhedral benchmark needs [bench]")
    stdout = _run("polyhedral", "--quick", "--output", tmp_path)
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
        "table1",
        "--quick",
        "--data-dir",
        data_dir,
        "--output",
        folder,
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
    _assert_provenance(text, "python -m benchmarks.table1 --quick --data-dir ")
    with open(folder / "table1_smoke.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    methods = {row["method"] for row in rows}
    # the three M-steps, SPLA1, Logit, SVM and CART
    assert len(methods) == 7 and {"plume-bfgs", "spla1", "cart"} <= methods
    # 2 datasets x 3 outer folds per method
    assert len(rows) == 2 * 3 * len(methods)
    accuracies = [float(row["accuracy"]) for row in rows]
    assert all(0.5 < a <= 1.0 for a in accuracies)


def test_coverage_quick(tmp_path):
    pytest.importorskip("threadpoolctl", reason="the benchmarks need [bench]")
    stdout = _run("coverage", "--quick", "--profile", "--output", tmp_path)
    assert stdout == ""  # progress goes to stderr, results to the files
    table = pd.read_csv(tmp_path / "coverage_quick.csv")
    # one cell (K=2, d=2): six parameters, coverages are shares of 5 replicates
    assert len(table) == 6 and (table["reps"] == 5).all()
    for column in ("coverage_oim", "coverage_hc0", "coverage_profile"):
        assert table[column].between(0, 1).all()
        assert np.allclose(table[column] * 5, np.round(table[column] * 5))
    assert (table["se_ratio_oim"] > 0).all()
    text = (tmp_path / "coverage_quick.md").read_text()
    assert "| K | gamma | d | N |" in text and "cov_profile_min" in text
    _assert_provenance(text, "python -m benchmarks.coverage --quick --profile ")


def test_lr_bootstrap_quick(tmp_path):
    pytest.importorskip("threadpoolctl", reason="the benchmarks need [bench]")
    stdout = _run("lr_bootstrap", "--quick", "--output", tmp_path)
    text = (tmp_path / "lr_bootstrap_quick.md").read_text()
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    rows = [line.split(" | ") for line in lines if "face" in line]
    assert [row[0] for row in rows] == ["| one face (size)", "| two faces (power)"]
    assert all(line in stdout for line in lines)
    # 4 data sets: every rejection rate is a multiple of 25%
    rates = [float(cell.rstrip("%")) for row in rows for cell in row[4:6]]
    assert all(rate in (0.0, 25.0, 50.0, 75.0, 100.0) for rate in rates)
    _assert_provenance(text, "python -m benchmarks.lr_bootstrap --quick")


def test_polyhedral_quick_with_reseat_says_so(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    _run(
        "polyhedral",
        *("--quick", "--reseat", "--methods", "plume", "spla1"),
        *("--ds", "2", "--noises", "0", "--output", tmp_path),
    )
    text = (tmp_path / "polyhedral_quick.md").read_text()
    assert "`fit(alpha=a, n_init=1, random_state=s, reseat=K)`" in text
    assert "then re-seating moves, each kept only if it raises the objective" in text
    rows = [line for line in text.splitlines() if line.startswith("| PLUME |")]
    rows += [line for line in text.splitlines() if line.startswith("| SPLA1 |")]
    assert len(rows) == 2 and all("n_init=1, reseat=K (CV acc" in row for row in rows)


def test_polyhedral_bayes_quick_run_scores_plume_against_the_oracle(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    _run("polyhedral_bayes", "--quick", "--output", tmp_path)
    text = (tmp_path / "polyhedral_bayes_quick.md").read_text()
    assert text.startswith("# Polyhedral suite against the Bayes oracle")
    assert "200 draws per face, every 10th step after 200 of burn-in" in text
    rows = [
        line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| 2 |")
    ]
    assert len(rows) == 1
    d, k, seeds, oracle, plume, mean_diff, worst, within, choice = rows[0]
    assert (int(d), int(k), int(seeds)) == (2, 2, 1)
    # the columns agree: one seed, so mean and worst differences are PLUME - oracle
    assert float(mean_diff) == pytest.approx(float(plume) - float(oracle), abs=0.011)
    assert float(worst) == float(mean_diff)
    assert within.strip() == ("yes" if float(worst) >= -1 else "**no**")
    assert choice.strip().startswith("gamma 1, alpha ")


def test_polyhedral_oracle_small_run_writes_its_report(tmp_path):
    pytest.importorskip("sklearn", reason="the polyhedral benchmark needs [bench]")
    small = ["--d", "2", "--k", "2", "--seeds", "2", "--n-train", "300"]
    grid = ["--n-test", "1000", "--gammas", "1", "--alphas", "1e-3"]
    chain = ["--draws", "200", "--burn-in", "200"]
    _run("polyhedral_oracle", *small, *grid, *chain, "--output", tmp_path)
    text = (tmp_path / "polyhedral_oracle.md").read_text()
    assert text.startswith("# Polyhedral suite: PLUME against an oracle")
    assert (
        "- command: `python -m benchmarks.polyhedral_oracle --d 2" in text
        and "- setting: d=2, K=2, noise=0, 300 training" in text
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


def test_bootstrap_parallel_quick(tmp_path):
    pytest.importorskip("joblib", reason="the benchmark needs [parallel]")
    stdout = _run("bootstrap_parallel", "--quick", "--output", tmp_path)
    text = (tmp_path / "bootstrap_parallel_quick.md").read_text()
    assert text.strip() in stdout  # printed and written
    rows = [line.split("|")[1:-1] for line in text.splitlines()]
    rows = [cells for cells in rows if cells and cells[0].strip() in ("1", "2")]
    assert [cells[0].strip() for cells in rows] == ["1", "2"]
    # the same replicates whatever n_jobs; the speed-up is n_jobs=1's own 1.00
    assert all(cells[-1].strip() == "yes" for cells in rows)
    assert rows[0][5].strip() == rows[0][6].strip() == "1.00"
    assert float(rows[1][7]) > 0  # the first call, workers started
    _assert_provenance(text, "python -m benchmarks.bootstrap_parallel --quick")


def test_scale_small(tmp_path):
    # one small N in memory and by row blocks, each in a process of its own
    pytest.importorskip("matplotlib", reason="the figure needs [bench]")
    args = ["--sizes", "2e4", "--paths", "memory", "chunked", "--name", "scale_smoke"]
    _run("scale", *args, "--output", tmp_path)
    table = pd.read_csv(tmp_path / "scale_smoke.csv")
    assert list(table["path"]) == ["memory", "chunked"] and table["converged"].all()
    # the same rows on both paths: the same maximum, the blocks in passes
    np.testing.assert_allclose(table["llf"], table["llf"].iloc[0], rtol=1e-9)
    assert table["passes"].iloc[1] > table["iterations"].iloc[1]
    text = (tmp_path / "scale_smoke.md").read_text()
    _assert_provenance(text, "python -m benchmarks.scale --sizes 2e4 --paths memory")
    assert (tmp_path / "scale_smoke.png").stat().st_size > 0
