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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import lru_cache, wraps
from typing import TypeVar

__all__ = ["ENV_VARIABLE", "fit_blas_threads", "with_fit_blas_threads"]

_Function = TypeVar("_Function", bound=Callable)

ENV_VARIABLE = "PLUMESTATS_BLAS_THREADS"


def fit_blas_threads() -> AbstractContextManager:
    """The BLAS threads a fit runs with: a context that limits them to
    ``PLUMESTATS_BLAS_THREADS`` (default 1) and restores them on exit, or
    one that does nothing (``0``, or threadpoolctl not installed)."""
    limit = _thread_limit()
    controller = _controller() if limit else None
    if controller is None:
        return nullcontext()
    return controller.limit(limits=limit, user_api="blas")


def with_fit_blas_threads(function: _Function) -> _Function:
    """``function`` run inside :func:`fit_blas_threads` (the fit entry points)."""

    @wraps(function)
    def limited(*args, **kwargs):
        with fit_blas_threads():
            return function(*args, **kwargs)

    return limited  # type: ignore[return-value]


def _thread_limit() -> int:
    """``PLUMESTATS_BLAS_THREADS`` as a number of threads (0: no limit)."""
    text = os.environ.get(ENV_VARIABLE, "1").strip()
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(
            f"{ENV_VARIABLE} must be a whole number of BLAS threads for the fits "
            f"(1 by default, 0 to leave BLAS as it is); got {text!r}"
        )
    return value


@lru_cache(maxsize=1)
def _controller():
    """threadpoolctl's view of the loaded BLAS libraries, built once (a
    ``threadpool_limits`` context inspects them afresh: 0.8 ms a fit,
    against 0.01 ms for the controller's ``limit``), or ``None`` without
    threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()
