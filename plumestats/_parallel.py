"""Independent fits in parallel by joblib's rules (an optional dependency).

``n_jobs`` means what it means in joblib and scikit-learn: ``1`` or ``None``
runs in this process, ``-1`` uses every core, ``-2`` all but one (``n_cpus + 1
+ n_jobs``), and ``0`` is refused. Serial work never imports joblib.

Workers are joblib's default backend, loky (unless a ``joblib.parallel_config``
context chooses another): processes started afresh, so a script needs no
``if __name__ == "__main__":`` guard, and arguments are pickled with
cloudpickle, so classes defined in a notebook or a script (``__main__``)
travel too. loky limits the BLAS and OpenMP threads of each worker to
``n_cpus // n_jobs``, so the workers do not oversubscribe the cores
(``joblib.parallel_config(inner_max_num_threads=...)`` overrides it).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["check_n_jobs", "effective_n_jobs", "run_tasks"]

_INSTALL = 'pip install "plumestats[parallel]"'


def check_n_jobs(n_jobs) -> int:
    """``n_jobs`` validated (an integer other than 0, or None for 1); not yet
    resolved against the number of cores."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise ValueError(
            f"n_jobs must be an integer (1 for serial, -1 for all cores) or None, "
            f"got {n_jobs!r}"
        )
    if n_jobs == 0:
        raise ValueError(
            "n_jobs=0 would run nothing: use 1 (or None) to run in this process, "
            "a positive number of worker processes, or -1 for all cores"
        )
    return int(n_jobs)


def _joblib(n_jobs: int):
    try:
        import joblib
    except ImportError as exc:
        raise ImportError(
            f"n_jobs={n_jobs} runs in parallel with joblib, an optional "
            f"dependency: {_INSTALL} (or use n_jobs=1)"
        ) from exc
    return joblib


def effective_n_jobs(n_jobs) -> int:
    """The number of worker processes ``n_jobs`` asks for (1: this process).

    Negative values count from the number of cores joblib sees (which honours
    CPU affinity and container limits): ``n_cpus + 1 + n_jobs``, at least 1.
    Anything but 1 or None needs joblib.
    """
    n_jobs = check_n_jobs(n_jobs)
    if n_jobs == 1:
        return 1
    joblib = _joblib(n_jobs)
    if n_jobs < 0:
        return max(joblib.cpu_count() + 1 + n_jobs, 1)
    return n_jobs


def run_tasks(
    function: Callable[[Any], Any],
    tasks: Sequence,
    n_workers: int,
    bar,
    weights: Iterable[int] | None = None,
) -> list:
    """``[function(task) for task in tasks]``, in ``n_workers`` processes
    when that is more than 1; results in the order of ``tasks``.

    ``bar`` (a progress bar) advances by each task's weight (default 1) as
    its result arrives.
    """
    weights = [1] * len(tasks) if weights is None else list(weights)
    if n_workers == 1 or len(tasks) <= 1:
        results = []
        for task, weight in zip(tasks, weights, strict=True):
            results.append(function(task))
            bar.update(weight)
        return results
    joblib = _joblib(n_workers)
    runner = joblib.Parallel(n_jobs=min(n_workers, len(tasks)), return_as="generator")
    results = []
    outputs = runner(joblib.delayed(function)(task) for task in tasks)
    for output, weight in zip(outputs, weights, strict=True):
        results.append(output)
        bar.update(weight)
    return results
