"""One BLAS thread while a fit runs (threadpoolctl, an optional dependency).

The engine's BLAS calls are small: Newton systems of ``K p`` unknowns, and
Gram products of row blocks sized to stay in cache (:mod:`plumestats._design`).
More BLAS threads do not make them faster, and OpenBLAS's threads, spinning
between calls, take the core the numpy work in between needs. On a 2-core
machine with OpenBLAS's default of 2 threads, adult's K = 2 fit (30,162 x 96)
took 1.13 to 1.23 s against 0.37 to 0.48 s with one thread, and a wide design
(5,000 x 400, K = 2, 60 iterations) 13.0 to 13.7 s against 8.6 to 8.7 s; small
and tall designs (pima, ionosphere, 2e5 x 21 at K = 3) took the same time
either way. So a fit runs with one BLAS thread, as scikit-learn's ``KMeans``
runs its loops, when threadpoolctl is installed (``pip install
"plumestats[blas]"``; scikit-learn brings it too). Without it the threads are
left as they are.

The environment variable ``PLUMESTATS_BLAS_THREADS`` sets another number of
threads for the fits (``0``: leave BLAS as it is), for a design wide enough
that its products share out well on many cores.

A BLAS library's threads are the whole process's, so fits running at the
same time in several Python threads share one limit: the thread whose fit
starts first sets it and gives the threads back when its fit ends; fits in
other threads meanwhile run under it and touch nothing (each restoring what
it had found would leave the process at one thread, and threadpoolctl 3.8
lets only the thread that set a limit change it again). A fit still running
after the first has ended runs with BLAS's own threads.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import TypeVar

__all__ = ["ENV_VARIABLE", "fit_blas_threads", "with_fit_blas_threads"]

ENV_VARIABLE = "PLUMESTATS_BLAS_THREADS"

_Function = TypeVar("_Function", bound=Callable)


class _SharedLimit:
    """The limit the running fits share: set by the thread whose fit starts
    first (its nested fits count), restored by that thread alone."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holder: int | None = None
        self._depth = 0
        self._limiter = None

    def enter(self, limit: int) -> None:
        with self._lock:
            me = threading.get_ident()
            if self._holder is None:
                controller = _controller()
                self._holder, self._depth = me, 0
                self._limiter = None
                if controller is not None:
                    # entered and left as a context, so that threadpoolctl
                    # (3.8) hands the control of OpenBLAS back on leaving
                    self._limiter = controller.limit(limits=limit, user_api="blas")
                    self._limiter.__enter__()
            if self._holder == me:
                self._depth += 1

    def leave(self) -> None:
        with self._lock:
            if self._holder != threading.get_ident():
                return
            self._depth -= 1
            if self._depth == 0:
                if self._limiter is not None:
                    self._limiter.__exit__(None, None, None)
                self._holder, self._limiter = None, None


_SHARED = _SharedLimit()


@contextmanager
def fit_blas_threads() -> Iterator[None]:
    """The BLAS threads a fit runs with: limited to ``PLUMESTATS_BLAS_THREADS``
    (default 1) while the context is open, unless a fit in another thread
    holds the limit already; nothing without threadpoolctl or with ``0``."""
    limit = _thread_limit()
    if limit:
        _SHARED.enter(limit)
    try:
        yield
    finally:
        if limit:
            _SHARED.leave()


def with_fit_blas_threads(function: _Function) -> _Function:
    """``function`` run inside :func:`fit_blas_threads` (the fit entry points)."""

    @wraps(function)
    def limited(*args, **kwargs):
        with fit_blas_threads():
            return function(*args, **kwargs)

    return limited  # type: ignore[return-value]


def _thread_limit() -> int:
    """``PLUMESTATS_BLAS_THREADS`` as a number of threads (0: no limit; unset
    or empty: 1)."""
    text = os.environ.get(ENV_VARIABLE, "").strip() or "1"
    if not (text.isascii() and text.isdigit()):
        raise ValueError(
            f"{ENV_VARIABLE} must be a whole number of BLAS threads for the fits "
            f"(1 by default, 0 to leave BLAS as it is); got {text!r}"
        )
    return int(text)


_CACHE: dict = {"modules": -1, "controller": None}


def _controller():
    """threadpoolctl's view of the loaded BLAS libraries, or ``None``
    (threadpoolctl missing, or unable to inspect this process). Built again
    only when modules were imported since (a library loaded later is seen
    then): a ``threadpool_limits`` context inspects the libraries afresh, 0.8
    ms a fit, against 0.01 ms for a built controller's ``limit``."""
    if _CACHE["modules"] != len(sys.modules):
        _CACHE["controller"] = _new_controller()
        _CACHE["modules"] = len(sys.modules)
    return _CACHE["controller"]


def _new_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    try:
        with warnings.catch_warnings():
            # e.g. two OpenMP runtimes loaded: threadpoolctl's advice, not ours
            warnings.simplefilter("ignore")
            return ThreadpoolController()
    except Exception:  # a process threadpoolctl cannot inspect: no limit
        return None
