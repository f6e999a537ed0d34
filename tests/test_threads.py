"""A fit runs with one BLAS thread (threadpoolctl), and gives the threads back."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import plumestats.api as ps
from plumestats import _threads

threadpoolctl = pytest.importorskip("threadpoolctl")


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


@pytest.fixture
def two_threads():
    """BLAS at two threads around the test (as OpenBLAS starts on 2 cores)."""
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can see")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        yield _blas_threads()


def test_a_fit_runs_with_one_blas_thread_and_restores_them(two_threads):
    seen = []
    _model().fit(callback=lambda *_: seen.append(_blas_threads()), reseat=0, alpha=1e-3)
    assert seen and all(threads == [1] * len(two_threads) for threads in seen)
    assert _blas_threads() == two_threads


def test_the_l1_fit_runs_with_one_blas_thread(two_threads):
    seen = []
    model = _model()
    real = _threads.fit_blas_threads

    def recording():
        context = real()
        seen.append(context)
        return context

    _threads.fit_blas_threads = recording
    try:
        model.fit_regularized(alpha=0.01, method="l1")
    finally:
        _threads.fit_blas_threads = real
    assert seen  # the L1 fit and its start fit entered the limit
    assert _blas_threads() == two_threads


def test_the_environment_sets_another_number(two_threads, monkeypatch):
    seen = []
    monkeypatch.setenv(_threads.ENV_VARIABLE, "0")  # leave BLAS as it is
    _model().fit(callback=lambda *_: seen.append(_blas_threads()), reseat=0, alpha=1e-3)
    assert seen and all(threads == two_threads for threads in seen)


@pytest.mark.parametrize("text", ["two", "-1", "1.5"])
def test_a_bad_thread_number_is_refused_by_name(monkeypatch, text):
    monkeypatch.setenv(_threads.ENV_VARIABLE, text)
    with pytest.raises(ValueError, match="PLUMESTATS_BLAS_THREADS must be a whole"):
        _model().fit(reseat=0, alpha=1e-3)


def test_without_threadpoolctl_the_fit_is_the_same(monkeypatch):
    limited = _model().fit(reseat=0, alpha=1e-3)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    _threads._controller.cache_clear()
    try:
        free = _model().fit(reseat=0, alpha=1e-3)
    finally:
        _threads._controller.cache_clear()
    np.testing.assert_allclose(free.params, limited.params, rtol=1e-10)
