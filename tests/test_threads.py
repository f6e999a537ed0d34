"""A fit runs with one BLAS thread (threadpoolctl), and gives the threads back."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import plumestats.api as ps
from plumestats import _l1, _threads

try:
    import threadpoolctl
except ImportError:  # the tests that read the threads skip
    threadpoolctl = None


def _blas_threads() -> list[int]:
    return [
        info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    ]


def _model(k=2):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 2))
    y = (np.minimum(x[:, 0], x[:, 1]) + rng.logistic(size=300) > 0).astype(float)
    return ps.PolyhedralMixtureLogit(y, np.column_stack([np.ones(300), x]), k=k)


def _fit_seeing_threads(model, **options):
    """Fit, recording the BLAS threads at every iteration."""
    seen = []
    model.fit(
        callback=lambda *_: seen.append(_blas_threads()),
        reseat=0,
        alpha=1e-3,
        **options,
    )
    assert seen
    return seen


def _threads_seen_by(monkeypatch, module, name: str) -> list:
    """The BLAS threads at every call of ``module.name`` (a list filled as
    the test runs)."""
    seen = []
    real = getattr(module, name)

    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recording)
    return seen


@pytest.fixture
def two_threads():
    """BLAS at two threads around the test (as OpenBLAS starts on 2 cores)."""
    if threadpoolctl is None:
        pytest.skip("threadpoolctl is not installed")
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can see")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        threads = _blas_threads()
        if threads != [2] * len(threads):
            pytest.skip(f"BLAS refuses two threads here ({threads})")
        yield threads


def test_a_fit_runs_with_one_blas_thread_and_restores_them(two_threads):
    seen = _fit_seeing_threads(_model())
    assert all(threads == [1] * len(two_threads) for threads in seen)
    assert _blas_threads() == two_threads


def test_the_l1_solver_runs_with_one_blas_thread(two_threads, monkeypatch):
    """From given start values (no EM start fit), inside the L1 solver."""
    model = _model()
    start = model.fit(alpha=1e-3, reseat=0).params
    seen = _threads_seen_by(monkeypatch, _l1, "_solve")
    model.fit_regularized(alpha=0.01, method="l1", start_params=start)
    assert seen == [[1] * len(two_threads)]
    assert _blas_threads() == two_threads


def test_fits_in_several_threads_give_the_threads_back():
    """Two fits at once, in two Python threads, at BLAS's own threads: both
    start under the limit, and when both have ended the threads are back
    (the one that set the limit gives them back, whichever ends first)."""
    if threadpoolctl is None or not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can see")
    default = _blas_threads()
    if max(default) < 2:
        pytest.skip("BLAS runs one thread here already")
    both_running = threading.Barrier(2, timeout=60)
    first_done = threading.Event()
    seen = {"first": [], "second": []}

    def callback(name):
        def record(*_):
            if not seen[name]:
                seen[name].append(_blas_threads())
                both_running.wait()
                if name == "second":  # stay in the fit until the first ends
                    first_done.wait(timeout=60)

        return record

    def run(name):
        _model().fit(callback=callback(name), reseat=0, alpha=1e-3)
        if name == "first":
            first_done.set()

    workers = [threading.Thread(target=run, args=(n,)) for n in ("first", "second")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    one = [1] * len(default)
    assert seen["first"] == [one] and seen["second"] == [one]
    assert _blas_threads() == default


def test_the_environment_sets_another_number(two_threads, monkeypatch):
    monkeypatch.setenv(_threads.ENV_VARIABLE, "0")  # leave BLAS as it is
    assert all(threads == two_threads for threads in _fit_seeing_threads(_model()))
    monkeypatch.setenv(_threads.ENV_VARIABLE, " 1 ")
    one = [1] * len(two_threads)
    assert all(threads == one for threads in _fit_seeing_threads(_model()))
    assert _blas_threads() == two_threads


@pytest.mark.parametrize("text", ["two", "-1", "1.5", "+2", "1_0", "\u0663"])
def test_a_bad_thread_number_is_refused_by_name(monkeypatch, text):
    monkeypatch.setenv(_threads.ENV_VARIABLE, text)
    with pytest.raises(ValueError, match="PLUMESTATS_BLAS_THREADS must be a whole"):
        _model().fit(reseat=0, alpha=1e-3)


def test_an_empty_variable_means_the_default(monkeypatch):
    monkeypatch.setenv(_threads.ENV_VARIABLE, "")
    assert _threads._thread_limit() == 1


def test_without_threadpoolctl_the_threads_are_left_alone(two_threads, monkeypatch):
    limited = _model().fit(reseat=0, alpha=1e-3)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    _threads._CACHE["modules"] = -1  # build the view again
    try:
        seen = _fit_seeing_threads(_model())
        free = _model().fit(reseat=0, alpha=1e-3)
    finally:
        # the next fit builds it again, threadpoolctl back (not the count
        # before: with no module imported since, the empty view would stay)
        _threads._CACHE["modules"] = -1
    assert all(threads == two_threads for threads in seen)
    np.testing.assert_allclose(free.params, limited.params, rtol=1e-10)


def test_profile_intervals_run_with_one_blas_thread(two_threads, monkeypatch):
    from plumestats import _profile

    res = _model(k=1).fit()
    seen = _threads_seen_by(monkeypatch, _profile, "ascent_step")
    res.conf_int(method="profile")
    assert seen and all(threads == [1] * len(two_threads) for threads in seen)
    assert _blas_threads() == two_threads


def test_a_fit_in_another_thread_leaves_the_control_to_the_next():
    """threadpoolctl (3.8) lets one thread at a time set OpenBLAS's threads:
    a fit in a worker thread that lives on (a thread pool's) hands that back
    when its fit ends, so a fit in the main thread meanwhile is limited too."""
    if threadpoolctl is None or not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can see")
    default = _blas_threads()
    if max(default) < 2:
        pytest.skip("BLAS runs one thread here already")
    seen = {}
    fitted, main_done = threading.Event(), threading.Event()

    def worker_fit():
        seen["worker"] = _fit_seeing_threads(_model())
        fitted.set()
        main_done.wait(timeout=60)  # alive, as a pool's thread stays

    worker = threading.Thread(target=worker_fit)
    worker.start()
    try:
        assert fitted.wait(timeout=120)
        seen["main"] = _fit_seeing_threads(_model())
    finally:
        main_done.set()
        worker.join(timeout=120)
    one = [1] * len(default)
    assert all(threads == one for threads in seen["worker"] + seen["main"])
    assert _blas_threads() == default
