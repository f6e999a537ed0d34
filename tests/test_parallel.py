"""n_jobs by joblib's rules: the workers' results equal the serial ones, a
script needs no main guard, classes defined in ``__main__`` (as in Jupyter)
travel to the workers, and joblib is needed only for n_jobs != 1."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import plumestats.api as ps
from plumestats._parallel import check_n_jobs, effective_n_jobs, seed_chunks

joblib = pytest.importorskip("joblib", reason='n_jobs > 1 needs "[parallel]"')

ROOT = Path(__file__).resolve().parents[1]
TRUTH = np.array([[1.0, -2.0, 0.0], [1.0, 1.0, -1.7]])


@pytest.fixture(scope="module")
def small_fit():
    data = ps.simulate_plume(300, TRUTH, gamma=1.0, random_state=2)
    return ps.plume("y ~ x1 + x2", data, k=2).fit()


@pytest.fixture(scope="module")
def polygon():
    data, _ = ps.simulate_polyhedron(240, d=2, k=3, noise=0.1, random_state=0)
    return data


def test_n_jobs_follows_joblib():
    cores = joblib.cpu_count()
    assert effective_n_jobs(None) == effective_n_jobs(1) == 1
    assert effective_n_jobs(-1) == cores == joblib.effective_n_jobs(-1)
    assert effective_n_jobs(-2) == max(cores - 1, 1) == joblib.effective_n_jobs(-2)
    # beyond the number of cores: one worker, as joblib
    assert effective_n_jobs(-cores - 5) == 1 == joblib.effective_n_jobs(-cores - 5)
    assert effective_n_jobs(3) == 3


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_bad_n_jobs_is_refused_by_name(bad, small_fit, polygon):
    pattern = "n_jobs=0 would run nothing" if bad == 0 else "n_jobs must be an integer"
    if bad is True:
        pattern = "n_jobs must be an integer"
    with pytest.raises(ValueError, match=pattern):
        check_n_jobs(bad)
    with pytest.raises(ValueError, match=pattern):
        small_fit.bootstrap(n_boot=2, n_jobs=bad)
    with pytest.raises(ValueError, match=pattern):
        ps.select_k("y ~ x1 + x2", polygon, ks=1, n_jobs=bad)


def test_without_joblib_only_serial_work_runs(small_fit, polygon, monkeypatch):
    serial = small_fit.bootstrap(n_boot=3, random_state=0, n_jobs=1)
    monkeypatch.setitem(sys.modules, "joblib", None)  # `import joblib` fails
    message = r'n_jobs=2 .* joblib, an optional dependency: pip install "plumestats\['
    with pytest.raises(ImportError, match=message):
        small_fit.bootstrap(n_boot=3, n_jobs=2)
    with pytest.raises(ImportError, match=r"n_jobs=-1 .*plumestats\[parallel\]"):
        ps.select_k("y ~ x1 + x2", polygon, ks=1, n_jobs=-1)
    for n_jobs in (1, None):
        again = small_fit.bootstrap(n_boot=3, random_state=0, n_jobs=n_jobs)
        pd.testing.assert_frame_equal(again.params, serial.params)


def test_bootstrap_replicates_do_not_depend_on_n_jobs(small_fit):
    serial = small_fit.bootstrap(n_boot=9, random_state=4)
    for n_jobs in (2, -1):
        parallel = small_fit.bootstrap(n_boot=9, random_state=4, n_jobs=n_jobs)
        pd.testing.assert_frame_equal(parallel.params, serial.params)
        assert parallel.failures == serial.failures
        assert parallel.n_switched == serial.n_switched


def test_chunks_keep_every_seed_in_order():
    seeds = list(range(203))
    for workers in (1, 2, 5, 64):
        chunks = seed_chunks(seeds, workers)
        assert [seed for chunk in chunks for seed in chunk] == seeds
        assert max(map(len, chunks)) <= (1 if workers == 1 else 10)
    # about four tasks per worker for balance while that keeps chunks small
    assert len(seed_chunks(seeds, 64)) == 203
    assert len(seed_chunks(list(range(40)), 2)) == 8


def _select(polygon, n_jobs, random_state=0):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selection = ps.select_k(
            "y ~ x1 + x2",
            polygon,
            ks=(1, 2, 3),
            gammas=(1.0,),
            criterion="cv",
            cv=3,
            random_state=random_state,
            n_jobs=n_jobs,
        )
    return selection, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("seed", [0, "generator"])
def test_select_k_does_not_depend_on_n_jobs(polygon, seed):
    def random_state():
        return np.random.default_rng(7) if seed == "generator" else seed

    serial, serial_warnings = _select(polygon, 1, random_state())
    parallel, parallel_warnings = _select(polygon, 2, random_state())
    pd.testing.assert_frame_equal(parallel.table, serial.table)
    assert_array_equal(parallel.folds, serial.folds)
    assert parallel.chosen == serial.chosen
    pd.testing.assert_series_equal(parallel.best.params, serial.best.params)
    # how the chosen fit got there is the worker's fit's, not the one-step
    # refit's that turns it into a formula fit
    assert parallel.best.n_iter == serial.best.n_iter
    assert_array_equal(parallel.best.llf_history, serial.best.llf_history)
    assert parallel.best.mle_retvals["steps"] == serial.best.mle_retvals["steps"]
    assert_array_equal(
        parallel.best.mle_retvals["face_order"], serial.best.mle_retvals["face_order"]
    )
    # the fits' warnings come back from the workers, in the same order
    assert parallel_warnings == serial_warnings


@pytest.mark.parametrize("kind", [np.random.SeedSequence, np.random.PCG64])
def test_select_k_takes_the_seeds_fit_takes(polygon, kind):
    """A SeedSequence or a bit generator gives one seed, as a Generator does."""
    first, second = (
        ps.select_k("y ~ x1 + x2", polygon, ks=(1, 2), random_state=kind(3))
        for _ in range(2)
    )
    pd.testing.assert_frame_equal(first.table, second.table)


def test_select_k_refuses_a_random_state_its_fits_would_share(polygon):
    # every fit would draw from the one RandomState in turn (numpy >= 2), so
    # the table would depend on n_jobs and on the order of the fits
    with pytest.raises(ValueError, match=r"random_state must be None.*RandomState"):
        ps.select_k(
            "y ~ x1 + x2",
            polygon,
            ks=(1, 2),
            random_state=np.random.RandomState(0),
        )


# A session's own code: no `if __name__ == "__main__":` guard, and a model
# class defined in __main__ (as a notebook defines it), which the workers
# cannot import and receive pickled by value.
SESSION = textwrap.dedent(
    """
    import numpy as np
    import plumestats.api as ps
    from plumestats import PolyhedralMixtureLogit

    class Mine(PolyhedralMixtureLogit):
        pass

    data, _ = ps.simulate_polyhedron(200, k=2, noise=0.05, random_state=0)
    exog = np.column_stack([np.ones(200), data[["x1", "x2"]]])
    for model in (ps.plume("y ~ x1 + x2", data, k=2), Mine(data["y"], exog, k=2)):
        res = model.fit()
        two = res.bootstrap(n_boot=4, random_state=0, n_jobs=2).params.to_numpy()
        one = res.bootstrap(n_boot=4, random_state=0).params.to_numpy()
        print(type(model).__name__, np.array_equal(two, one))
    """
)


def test_parallel_bootstrap_from_a_script_without_a_main_guard(tmp_path):
    # the class in __main__ stands for one defined in a notebook: workers
    # never import __main__ (a script's file, or none in Jupyter), so both
    # cases rest on the same by-value pickling
    script = tmp_path / "no_guard.py"
    script.write_text(SESSION)
    path = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        # the workers import this checkout's plumestats, as the session does
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *path])},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["PolyhedralMixtureLogit", "True", "Mine", "True"]
