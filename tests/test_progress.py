"""Progress: off by default, on request a tqdm bar (or plain lines without
tqdm) on standard error, for restarts, fits by blocks, statsmodels'
optimisers, the label-flip fit, select_k and the bootstrap; the results are
the same either way. The command line shows it unless --no-progress."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import plumestats.api as ps
from plumestats._parallel import Lines, check_progress
from plumestats.cli import main


@pytest.fixture(params=["tqdm", "lines"])
def bar(request, monkeypatch):
    """Progress through tqdm, or through plain lines as without tqdm."""
    if request.param == "tqdm":
        pytest.importorskip("tqdm", reason='the tqdm bar needs "[progress]"')
    else:
        monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # the import fails
    return request.param


@pytest.fixture(scope="module")
def polygon():
    data, _ = ps.simulate_polyhedron(300, d=2, k=3, noise=0.05, random_state=0)
    return data


@pytest.fixture(scope="module")
def model(polygon):
    return ps.plume("y ~ x1 + x2", polygon, k=3)


def _shown(capsys) -> str:
    """Standard error, with tqdm's carriage-return redraws as lines."""
    captured = capsys.readouterr()
    assert captured.out == ""  # progress never goes to standard output
    return captured.err.replace("\r", "\n")


def _quiet_and_shown(capsys, run):
    """``run(False)`` and ``run(True)`` (progress off and on): their results
    and what the second wrote; the first writes nothing."""
    quiet = run(False)
    assert capsys.readouterr().err == ""
    shown = run(True)
    return quiet, shown, _shown(capsys)


def test_restarts(bar, model, capsys):
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: model.fit(n_init=3, reseat=1, progress=on)
    )
    assert_array_equal(shown.params, quiet.params)
    assert "fit" in text and "3/3" in text
    assert "last run: " in text and "iterations, objective -" in text


def test_fit_by_row_blocks_shows_passes(bar, model, capsys):
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: model.fit(chunksize=100, progress=on)
    )
    assert_array_equal(shown.params, quiet.params)
    assert "passes over the data" in text and "1/1" in text


def test_statsmodels_optimiser_and_label_flips(bar, model, polygon, capsys):
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: model.fit(method="bfgs", progress=on)
    )
    assert_array_equal(shown.params, quiet.params)
    assert "fit" in text and "1/1" in text
    flips = ps.plume_flip("y ~ x1 + x2", polygon, k=3)
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: flips.fit(n_init=2, alpha=1e-4, progress=on, reseat=0)
    )
    assert_array_equal(shown.params, quiet.params)
    # two PLUME runs (no re-seating moves), then one label-flip run from each
    assert "4/4" in text and "label flips" in text


def test_select_k(bar, polygon, capsys):
    grid = {"ks": (1, 2), "gammas": (1.0,), "criterion": "cv", "cv": 2}
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: ps.select_k("y ~ x1 + x2", polygon, **grid, progress=on)
    )
    pd.testing.assert_frame_equal(shown.table, quiet.table)
    # two candidates, each on all the data and on two folds
    assert "select_k" in text and "6/6" in text


def test_bootstrap(bar, model, capsys):
    fit = model.fit()
    quiet, shown, text = _quiet_and_shown(
        capsys, lambda on: fit.bootstrap(n_boot=4, random_state=0, progress=on)
    )
    pd.testing.assert_frame_equal(shown.params, quiet.params)
    assert "bootstrap" in text and "4/4" in text


def test_parallel_bootstrap_counts_the_replicates(bar, model, capsys):
    pytest.importorskip("joblib", reason='n_jobs > 1 needs "[parallel]"')
    fit = model.fit()
    fit.bootstrap(n_boot=5, random_state=0, n_jobs=2, progress=True)
    assert "5/5" in _shown(capsys)


@pytest.mark.parametrize("bad", [None, "yes", 1])
def test_progress_must_be_a_bool(bad, model):
    assert check_progress(np.bool_(True)) is True
    hint = ".*off by default; pass True" if bad is None else ""
    with pytest.raises(ValueError, match=f"True or False, got {bad!r}{hint}"):
        model.fit(progress=bad)
    with pytest.raises(ValueError, match="progress must be True or False"):
        ps.select_k("y ~ x1 + x2", model.data.frame, ks=1, progress=bad)


def test_lines_are_rate_limited(capsys):
    lines = Lines(1000, "fits", interval=3600)
    for _ in range(1000):
        lines.update()
    # the first step and the last print; everything in between is within the hour
    shown = capsys.readouterr().err.strip().splitlines()
    assert [line.split(" (")[0] for line in shown] == [
        "fits: 1/1000",
        "fits: 1000/1000",
    ]


def test_command_line_shows_progress_unless_told_not_to(polygon, tmp_path, capsys):
    csv = tmp_path / "polygon.csv"
    polygon.to_csv(csv, index=False)
    args = ["fit", str(csv), "y ~ x1 + x2", "--k", "3", "--n-init", "2", "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "2/2" in captured.err.replace("\r", "\n")
    shown = json.loads(captured.out)  # stdout holds the JSON alone
    assert main([*args, "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out) == shown
