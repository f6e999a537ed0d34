"""Memory is checked before it is spent: a fit that would not fit is refused
with the estimate and the way out, not by numpy's bare ``MemoryError``."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import plumestats.api as ps
from plumestats._memory import fit_peak_bytes, memory_limit
from plumestats.model import auto_chunksize


def _design(nobs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    exog = np.column_stack([np.ones(nobs), rng.normal(size=(nobs, 2))])
    return rng.integers(0, 2, nobs), exog


@pytest.mark.parametrize(
    ("nobs", "k", "chunksize"),
    [(6000, 12, None), (6000, 3, None), (30000, 6, "auto"), (30000, 6, None)],
)
def test_estimate_bounds_the_measured_peak(nobs, k, chunksize):
    endog, exog = _design(nobs)
    model = ps.PolyhedralMixtureLogit(endog, exog, k=k)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # three iterations do not converge
            model.fit(maxiter=3, chunksize=chunksize)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    block = None if chunksize is None else auto_chunksize(3, k)
    estimate = fit_peak_bytes(nobs, 3, k, block)
    # errs high, but not by much: within a factor 0.9 to 3 of what numpy took
    assert 0.9 * peak <= estimate <= 3 * peak + 2e6


def test_a_fit_beyond_the_limit_is_refused_before_it_starts(monkeypatch):
    endog, exog = _design(20000)
    model = ps.PolyhedralMixtureLogit(endog, exog, k=200)
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", "256M")
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError, match=r"would need about 795 MiB") as info:
            model.fit()
        spent = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert spent < 50e6  # refused before the (20000, 200) arrays
    message = str(info.value)
    assert 'fit(chunksize="auto")' in message and "smaller k" in message
    assert "PLUMESTATS_MEMORY_LIMIT" in message


def test_the_way_out_works(monkeypatch):
    endog, exog = _design(20000)
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", "40M")  # in memory: about 50 MB
    model = ps.PolyhedralMixtureLogit(endog, exog, k=20)
    with pytest.raises(MemoryError, match="chunksize"):
        model.fit(maxiter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert model.fit(maxiter=2, chunksize="auto").nobs == 20000


def test_dense_matrices_beyond_the_limit_name_k(monkeypatch):
    endog, exog = _design(10000)  # more rows than the 6000 parameters
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", "100M")
    model = ps.PolyhedralMixtureLogit(endog, exog, k=2000)
    with pytest.raises(MemoryError, match=r"Newton matrices alone need .* smaller k"):
        model.fit(chunksize="auto")


@pytest.mark.parametrize("k", [2**62, 10**12])
def test_absurd_k_is_refused_at_once(k):
    endog, exog = _design(50)
    with pytest.raises(MemoryError, match=f"k={k} with 3 columns makes"):
        ps.PolyhedralMixtureLogit(endog, exog, k=k)


@pytest.mark.parametrize("text", ["lots", "8 X", "-1G"])
def test_a_bad_limit_is_named(monkeypatch, text):
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", text)
    with pytest.raises(ValueError, match=r"PLUMESTATS_MEMORY_LIMIT=.* is not a size"):
        memory_limit()


@pytest.mark.parametrize(("text", "value"), [("8G", 8 * 2**30), ("512MiB", 2**29)])
def test_limit_units(monkeypatch, text, value):
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", text)
    assert memory_limit() == value
