"""Memory a fit will need, checked before it is spent.

A fit in memory holds per-row arrays of the gate and the Hessian weights,
``(nobs, K (K + 1) / 2)`` among them: K = 200 on 20,000 rows asks for several
GiB and died in numpy's bare ``MemoryError``. :func:`check_fit_memory`
estimates the peak from the sizes alone and refuses a fit that would exceed
the memory available (or the cap in the environment variable
``PLUMESTATS_MEMORY_LIMIT``), with the estimate and the way out.

The estimate was calibrated with ``tracemalloc`` on fits of 2e4 to 2e5 rows,
K = 2 to 40 and p = 3 to 30 (in memory and by blocks), and again when the
Hessian weights became the distinct pairs only (6e3 to 3e4 rows, K = 2 to 40,
p = 3: from 0 to 10% above the measured peak). Since the engine evaluates
designs and blocks by slabs of rows, the Hessian weights are counted for one
slab (6e3 to 1e5 rows, p = 3 and 20, K = 2 to 40, three iterations: from
0.99 to 1.5 times the measured peak in memory); and since blocks are
standardised slab by slab too, a fit by blocks counts the larger of its
moments pass and one slab's iteration (2e4 to 1e5 rows, the same p and K:
1.09 to 1.37 times with ``chunksize="auto"``, 0.95 with blocks of 5,000
rows).
"""

from __future__ import annotations

import os
import re

from ._design import kept_bytes
from ._objectives import slab_rows

__all__ = ["MEMORY_LIMIT_VARIABLE", "check_fit_memory", "check_parameter_count"]

MEMORY_LIMIT_VARIABLE = "PLUMESTATS_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# bytes per parameter of a model that is only built: its name and its slot
_BYTES_PER_NAME = 128


def memory_limit() -> int | None:
    """The bytes a fit may use: ``PLUMESTATS_MEMORY_LIMIT`` (e.g. ``8G``,
    ``512M`` or a number of bytes) if set, else 80% of the memory the system
    has available (Linux's ``MemAvailable``), else ``None`` (unknown: no
    check)."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if text:
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", text, re.IGNORECASE)
        if match is None:
            raise ValueError(
                f"{MEMORY_LIMIT_VARIABLE}={text!r} is not a size; write e.g. 8G, "
                "512M or a number of bytes"
            )
        return int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    available = _available_bytes()
    # leave room for the rest of the process and for other programs
    return None if available is None else int(_SHARE_OF_AVAILABLE * available)


_SHARE_OF_AVAILABLE = 0.8


def _available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def fit_peak_bytes(
    nobs: int, n_cols: int, k: int, block_rows: int | None, slabs: bool = True
) -> int:
    """Estimated peak memory of a fit beyond its data: per-row arrays for
    all ``nobs`` rows in memory; by blocks of ``block_rows``, the larger of
    the pass that chooses the standardisation (two copies of a block) and a
    pass of the iterations (one slab's standardised rows, with the centres
    and scales tiled to its shape, and its per-row arrays,
    :func:`~plumestats._objectives.slab_rows`); and the dense ``(K p, K p)``
    matrices of the Newton steps. In memory a design of one slab also keeps
    products for its Grams (:func:`~plumestats._design.kept_bytes`), and the
    Hessian weights are one slab's too, unless ``slabs`` is false
    (statsmodels' optimisers, which build them for every row)."""
    pairs = 2.25 * k * (k + 1) / 2
    per_row = 14 * k + 12
    dense = 4 * (k * n_cols) ** 2
    slab = slab_rows(k)
    if block_rows is None:
        weight_rows = min(nobs, slab) if slabs else nobs
        state = nobs * (per_row + 2.5 * n_cols)
        kept = kept_bytes(nobs, n_cols) / 8 if nobs <= slab else 0.0
        return int(8 * (state + weight_rows * pairs + dense + kept))
    block = min(block_rows, nobs)
    moments = block * 2 * n_cols
    iterations = min(block, slab) * (per_row + pairs + 3 * n_cols)
    return int(8 * (max(moments, iterations) + dense))


def _size(n_bytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1024
    return f"{n_bytes:.3g} PiB"  # pragma: no cover


def _limit_words(limit: int) -> str:
    if os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip():
        return f"the limit {MEMORY_LIMIT_VARIABLE} sets ({_size(limit)})"
    return f"the memory available ({_size(limit)})"


def check_fit_memory(
    nobs: int,
    n_cols: int,
    k: int,
    block_rows: int | None,
    auto_rows: int,
    slabs: bool = True,
) -> None:
    """Refuse, with a ``MemoryError`` that gives the estimate and the way out,
    a fit whose estimated peak exceeds :func:`memory_limit`; ``auto_rows`` is
    the block size of ``chunksize="auto"`` (``slabs``: see
    :func:`fit_peak_bytes`)."""
    limit = memory_limit()
    if limit is None:
        return
    need = fit_peak_bytes(nobs, n_cols, k, block_rows, slabs)
    if need <= limit:
        return
    dense = fit_peak_bytes(0, n_cols, k, 0)
    if dense > limit:
        way_out = (
            f"the {k * n_cols} parameters' Newton matrices alone need "
            f"{_size(dense)}: use a smaller k or fewer columns"
        )
    elif block_rows is None:
        way_out = (
            'fit by row blocks, fit(chunksize="auto") (about '
            f"{_size(fit_peak_bytes(nobs, n_cols, k, auto_rows))}), or use a "
            "smaller k"
        )
    else:
        way_out = "use smaller blocks (chunksize) or a smaller k"
    raise MemoryError(
        f"this fit would need about {_size(need)} (k={k}, {n_cols} columns, "
        f"{nobs} rows{'' if block_rows is None else f', blocks of {block_rows}'}"
        f"), more than {_limit_words(limit)}; {way_out}. The check reads "
        f"{MEMORY_LIMIT_VARIABLE} if set."
    )


def check_parameter_count(k: int, n_cols: int) -> None:
    """Refuse a model whose parameter names alone would not fit in memory
    (``k=2**62`` tried to build 1.4e19 names)."""
    limit = memory_limit()
    n_params = k * n_cols
    if limit is None or n_params * _BYTES_PER_NAME <= limit:
        return
    raise MemoryError(
        f"k={k} with {n_cols} columns makes {n_params:.3g} parameters, whose "
        f"names alone need about {_size(n_params * _BYTES_PER_NAME)}, more than "
        f"{_limit_words(limit)}; use a smaller k"
    )
