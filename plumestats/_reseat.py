"""Re-seat the idlest face: a move out of a local maximum EM cannot leave.

A fit with many faces can end with two faces on one side of the polyhedron (or
one face owning nothing) while the outside points beyond another side are
called inside. That is a local maximum: no small change of the idle face
reaches the missed points, so EM stays. The move drops the face whose gate owns
the least of the outside class (``sum_n g_nk`` over the outside points),
fits a new face to the inside class against the outside points the fit calls
inside, runs EM from there, and keeps the result only if it raises the
objective; it repeats from the better fit until a move fails, there is nothing
left to re-seat, or ``max_moves`` moves were made. Which face is idle and
which points are missed is read on a sample of at most 5000 rows, the rows the
start values are computed from, so that a fit by row blocks (or on Dask) makes
the same moves as one in memory, at a cost that does not grow with N; each
move's EM run uses every row.

The move is split-and-merge EM's idea (Ueda et al., 2000, *Neural Computation*
12, 2109-2128) in the form a polyhedron suggests: the face to merge away is the
one that owns least, and where to split is read off the misclassified outside
points rather than searched for.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._em import EMOptions, EMTrace, run_em
from ._problem import Problem
from ._rows import InMemoryRows
from ._start import fit_logistic

__all__ = ["reseat_faces"]

# log(1/2): an outside observation below it is called inside by the fit
_LOG_HALF = np.log(0.5)


def reseat_faces(
    problem,
    sample: tuple,
    best: EMTrace,
    options: EMOptions,
    mstep: str,
    intercept_index: int | None,
    max_moves: int,
) -> list[EMTrace]:
    """The EM runs of up to ``max_moves`` re-seating moves from ``best``.

    ``problem`` is the fit's (in memory or by blocks); ``sample`` the
    standardised rows ``(exog, y_pm)`` the moves are read on. Returns every
    run made (accepted or not), in order; the caller keeps the best objective
    among them and ``best``.
    """
    on_sample = Problem(
        InMemoryRows.standardised(*sample), replace(problem.spec, alpha=0.0)
    )
    runs: list[EMTrace] = []
    current = best
    for _ in range(max_moves):
        start = _reseated_start(on_sample, current.params, intercept_index)
        if start is None:
            break
        trace = run_em(problem, start, options, mstep)
        runs.append(trace)
        if not trace.objective > current.objective + _gain_floor(current.objective):
            break
        current = trace
    return runs


def _gain_floor(value: float) -> float:
    # a move that only re-finds the same maximum differs by rounding
    return 1e-10 * max(1.0, abs(value))


def _reseated_start(
    problem: Problem, params: np.ndarray, intercept_index: int | None
) -> np.ndarray | None:
    """``params`` with its idlest face replaced by a fit to the missed outside
    points of ``problem`` (the sample), or None when the fit misses none."""
    terms = problem.rows(params)
    outside = problem.source.y_pm < 0
    missed = outside & (terms.loglikeobs < _LOG_HALF)
    if not missed.any():
        return None
    # what a face is for is the outside points beyond it: a face that owns
    # inside points only is idle
    idle = int(np.argmin(terms.gate.T @ outside))
    # the new face sees the inside class and the missed outside points only:
    # the other outside points are already outside some face
    weights = np.where(outside & ~missed, 0.0, 1.0)
    face = fit_logistic(
        problem.source.design, problem.source.y_pm, intercept_index, weights=weights
    )
    start = np.array(params, dtype=float, copy=True).reshape(problem.k, -1)
    start[idle] = face
    return start.ravel()
