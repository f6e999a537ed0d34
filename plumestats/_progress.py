"""A tiny progress reporter for anything that runs many fits.

Shared by the model-selection and benchmark code: lines on standard error when a
person is watching (``sys.stderr.isatty()``), silence in tests and logs.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Periodic ``label: done/total (elapsed) message`` lines on standard error.

    Parameters
    ----------
    total : int
        Number of steps expected.
    label : str
        What is running, printed at the start of each line.
    enabled : bool or None
        ``None`` reports only when standard error is a terminal, so that tests,
        pipes and logs stay quiet; ``True``/``False`` override.
    interval : float
        Minimum number of seconds between two lines (the last step always
        prints), so that thousands of quick steps do not flood the terminal.

    Examples
    --------
    >>> progress = Progress(3, "fits", enabled=False)
    >>> for _ in range(3):
    ...     progress.step("k=1")
    """

    def __init__(
        self, total: int, label: str, enabled: bool | None = None, interval=1.0
    ):
        self.total = int(total)
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.interval = float(interval)
        self.done = 0
        self._start = time.perf_counter()
        self._last = -float("inf")

    def step(self, message: str = "") -> None:
        """Count one finished step and print a line if it is time to."""
        self.done += 1
        now = time.perf_counter()
        if not self.enabled:
            return
        if self.done < self.total and now - self._last < self.interval:
            return
        self._last = now
        elapsed = now - self._start
        suffix = f" {message}" if message else ""
        print(
            f"{self.label}: {self.done}/{self.total} ({elapsed:.1f} s){suffix}",
            file=sys.stderr,
            flush=True,
        )
