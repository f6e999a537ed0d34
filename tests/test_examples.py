"""Every example runs as a user would run it (with small settings where slow)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import statsmodels.formula.api as smf

import plumestats.api as ps

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))

# Command-line arguments of the smoke run; "{tmp}" is a fresh folder and
# "{data}" the benchmark data. An example not listed runs with no arguments.
SMOKE_ARGS = {
    "real_data.py": ["--nobs", "1500", "--k-max", "2", "--figure", "{tmp}/fig.png"],
    "dask_cluster.py": ["--nobs", "6000"],
    "table1.py": [
        "--quick",
        "--datasets",
        "heart",
        "--methods",
        "plume-newton",
        "logit",
        "--no-timing",
        "--data-dir",
        "{data}",
        "--output",
        "{tmp}",
    ],
}
# What an example must print (every example must print something) and write.
EXPECTED_OUTPUT = {
    "quickstart.py": ["PolyhedralMixtureLogit Regression Results", "AIC"],
    "real_data.py": ["LR = ", "hyperplane h2", "Predictions for three profiles"],
    "table1.py": ["| heart | plume-newton |", "| heart | logit |"],
    "dask_cluster.py": ["PolyhedralMixtureLogit Regression Results", "P(y = 1 | x) at"],
    "label_flips.py": ["label flips", "flip rate: 0.104", "LR test of no flips"],
    "many_faces.py": [
        "idle: ['h3'] owns no point of the outside class",
        "  restarts      -0.06937",
        "  move 1        -0.05658",
        "  with reseat   [0.99",  # every true face matched
    ],
}
EXPECTED_FILES = {
    "real_data.py": ["fig.png"],
    "table1.py": ["table1_quick.md", "table1_quick.png"],
}


def test_the_documented_examples_exist():
    names = {path.name for path in EXAMPLES}
    assert set(EXPECTED_OUTPUT) <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, request, tmp_path, capfd, monkeypatch):
    args = SMOKE_ARGS.get(path.name, [])
    if "{data}" in args:
        data_dir = request.getfixturevalue("data_dir")
        args = [a.replace("{data}", str(data_dir)) for a in args]
    if path.name in ("real_data.py", "table1.py", "polyhedron_plots.py"):
        pytest.importorskip("matplotlib", reason="the example's figure needs [plot]")
    if path.name == "table1.py":
        pytest.importorskip("sklearn", reason="the Table 1 benchmark needs [bench]")
    if path.name == "dask_cluster.py":
        for name in ("distributed", "pyarrow"):
            pytest.importorskip(name, reason="the Dask example needs [dask]")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    monkeypatch.setattr(sys, "argv", [str(path), *args])
    monkeypatch.chdir(tmp_path)  # anything written by default lands here

    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:  # table1.py exits with the benchmark's status
        assert exc.code in (None, 0)
    # capfd: table1.py runs the benchmark in a child process
    out = capfd.readouterr().out
    assert out.strip()
    for fragment in EXPECTED_OUTPUT.get(path.name, []):
        assert fragment in out
    for name in EXPECTED_FILES.get(path.name, []):
        assert (tmp_path / name).stat().st_size > 0


def test_real_data_k1_is_statsmodels_logit():
    """The example's K = 1 baseline is statsmodels' Logit on the fair data."""
    example = runpy.run_path(str(EXAMPLES_DIR / "real_data.py"), run_name="not_main")
    data = example["load_fair"](800)
    assert len(data) == 800 and set(data["affair"]) == {0, 1}
    res = ps.plume(example["FORMULA"], data, k=1).fit()
    logit = smf.logit(example["FORMULA"], data).fit(disp=0)
    np.testing.assert_allclose(
        res.params.to_numpy(), logit.params.to_numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(res.llf, logit.llf, rtol=1e-10)
