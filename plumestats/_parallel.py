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

Progress of long work (restarts, model selection, the bootstrap, fits by
blocks): a ``tqdm.auto`` bar, which renders in a terminal and in Jupyter, or
plain lines on standard error where tqdm is not installed.

Progress is shown only on request (``progress=True``): library calls stay
silent by default, the command line turns it on.
"""

from __future__ import annotations

import numbers
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "FitProgress",
    "Lines",
    "check_n_jobs",
    "check_progress",
    "effective_n_jobs",
    "progress_bar",
    "run_seeded",
    "run_tasks",
    "seed_chunks",
]

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


# seeded runs per task of a worker at most: a chunk's fits take a second or
# less, so the bar moves, while the payload is pickled once per chunk only
_MAX_CHUNK = 10


def run_seeded(
    function: Callable[[Any, Any], Any],
    payload,
    seeds: Sequence,
    n_workers: int,
    bar,
) -> list:
    """``[function(payload, seed) for seed in seeds]``, in ``n_workers``
    processes when that is more than 1, in the order of ``seeds``.

    The seeds go out in :func:`seed_chunks`; ``payload`` (the data and
    settings) is pickled once per chunk.
    """
    chunks = seed_chunks(seeds, n_workers)
    done = run_tasks(
        _seeded_chunk,
        [(function, payload, chunk) for chunk in chunks],
        n_workers,
        bar,
        weights=[len(chunk) for chunk in chunks],
    )
    return [outcome for chunk in done for outcome in chunk]


def seed_chunks(seeds: Sequence, n_workers: int) -> list[list]:
    """Seeds in chunks: about four per worker, for balance, of at most
    ``_MAX_CHUNK`` each, so that the bar moves; one per seed when serial."""
    if n_workers == 1:
        return [[seed] for seed in seeds]
    size = min(max(len(seeds) // (4 * n_workers), 1), _MAX_CHUNK)
    return [list(seeds[i : i + size]) for i in range(0, len(seeds), size)]


def _seeded_chunk(task) -> list:
    """One worker task of :func:`run_seeded`."""
    function, payload, seeds = task
    return [function(payload, seed) for seed in seeds]


# seconds between two refreshes of a fit's iteration count: an EM iteration
# in memory takes milliseconds, and redrawing the bar for each would cost more
_POSTFIX_INTERVAL = 0.2


def check_progress(value) -> bool:
    """``progress`` as a bool; anything else is refused by name."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    hint = (
        " (progress is off by default; pass True to show it)" if value is None else ""
    )
    raise ValueError(f"progress must be True or False, got {value!r}{hint}")


class _Silent:
    """The bar of ``progress=False``: every call does nothing."""

    total = 0

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


class Lines:
    """Periodic ``label: done/total (elapsed) message`` lines on standard error,
    the fallback of :func:`progress_bar` without tqdm (same methods as a bar).

    Parameters
    ----------
    total : int
        Number of steps expected.
    label : str
        What is running, printed at the start of each line.
    interval : float
        Minimum number of seconds between two lines (the last step always
        prints), so that thousands of quick steps do not flood the terminal.

    Examples
    --------
    >>> lines = Lines(3, "fits", interval=3600)
    >>> for _ in range(3):
    ...     lines.update()
    """

    def __init__(self, total: int, label: str, interval: float = 1.0):
        self.total = int(total)
        self.label = label
        self.interval = float(interval)
        self.n = 0
        self.postfix = ""
        self._start = time.perf_counter()
        self._last = -float("inf")

    def update(self, n: int = 1) -> None:
        """Count ``n`` finished steps and print a line if it is time to."""
        self.n += n
        self._print(final=self.n >= self.total)

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        """What the current step is doing, shown on the next line printed."""
        self.postfix = text
        if refresh:
            self._print(final=False)

    def close(self) -> None:
        pass

    def _print(self, final: bool) -> None:
        now = time.perf_counter()
        if not final and now - self._last < self.interval:
            return
        self._last = now
        suffix = f" {self.postfix}" if self.postfix else ""
        print(
            f"{self.label}: {self.n}/{self.total} ({now - self._start:.1f} s){suffix}",
            file=sys.stderr,
            flush=True,
        )


def progress_bar(total: int, label: str, enabled: bool, unit: str = "fit"):
    """A progress bar of ``total`` steps: tqdm's (``tqdm.auto``: a widget in
    Jupyter, text on standard error elsewhere) when ``enabled``, plain
    :class:`Lines` if tqdm is not installed, and one that shows nothing when
    not ``enabled``. Close it when done."""
    if not enabled:
        return _Silent()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        # asked for progress without the extra: lines, not an error
        return Lines(total, label)
    return tqdm(total=total, desc=label, unit=unit, file=sys.stderr, leave=True)


class FitProgress:
    """One bar per fit: its EM runs (the ``n_init`` starts), with the current
    run's iteration, objective and, for fits by row blocks, passes over the
    data beside it.

    Cheap: the iteration text is refreshed at most every 0.2 seconds, so a
    fit in memory (milliseconds per iteration) pays almost nothing, and a fit
    by blocks or on Dask (seconds per pass) shows every iteration.

    Parameters
    ----------
    enabled : bool
        Show it; ``False`` makes every method a no-op.
    label : str
        What the bar says it is doing.
    """

    def __init__(self, enabled: bool, label: str = "fit"):
        self.enabled = bool(enabled)
        self.label = label
        self.bar = _Silent()
        self.problem = None
        self.stage = ""
        self._last = -float("inf")

    def start(self, runs: int, problem=None) -> None:
        """Open the bar for ``runs`` EM runs on ``problem``."""
        self.bar = progress_bar(runs, self.label, self.enabled, unit="run")
        self.problem = problem

    def more_runs(self, runs: int, stage: str) -> None:
        """``runs`` more runs follow (label flips after PLUME's runs)."""
        if self.enabled:
            self.bar.total += runs
            self.stage = stage
            self.bar.set_postfix_str(stage)

    def set_stage(self, stage: str) -> None:
        """Name what the next iterations belong to (``"re-seating"``)."""
        self.stage = stage

    def callback(self, user_callback=None):
        """The EM callback: the user's (if any), then the bar's text."""
        if not self.enabled:
            return user_callback

        def report(iteration, value, kind, params):
            if user_callback is not None:
                user_callback(iteration, value, kind, params)
            self.iteration(iteration, value)

        return report

    def iteration(self, iteration: int, value: float | None = None) -> None:
        """Show the current iteration (at most every 0.2 seconds)."""
        now = time.perf_counter()
        if not self.enabled or now - self._last < _POSTFIX_INTERVAL:
            return
        self._last = now
        parts = [self.stage] if self.stage else []
        parts.append(f"iteration {iteration}")
        blocks = self.problem is not None and not self.problem.source.single
        passes = self.problem.passes if blocks else None
        if passes is not None:
            parts.append(f"{passes} passes over the data")
        if value is not None:
            parts.append(f"objective {value:.8g}")
        self.bar.set_postfix_str(", ".join(parts))

    def run_done(self, trace=None) -> None:
        """Count one finished EM run (``trace``: its iterations and objective
        replace the last iteration shown)."""
        if self.enabled and trace is not None:
            stage = f"{self.stage}, " if self.stage else ""
            self.bar.set_postfix_str(
                f"{stage}last run: {len(trace.steps)} iterations, objective "
                f"{trace.objective:.8g}",
                refresh=False,
            )
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
