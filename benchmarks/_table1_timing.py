"""The timing pass of ``table1.py``: PLUME at K = 2 (each M-step) and SPLA1
at K = 2 at their most chosen settings, and ``Logit``, timed on one training
fold in interleaved repeats (the ratios to ``Logit`` are the paper's
comparison)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._table1_fits import (
    Attempt,
    FitContext,
    Fitted,
    PolySetting,
    Split,
    attempt,
    fit_logit,
    fit_poly,
)

FALLBACK_PLUME = {"gamma": 1.0, "alpha": 1e-3, "inside": 1}


@dataclass
class TimingRow:
    """Repeated timed fits of one estimator on one dataset's first training fold."""

    dataset: str
    label: str
    setting: str
    seconds: list[float] = field(default_factory=list)
    iterations: list[float] = field(default_factory=list)
    warnings: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else np.nan


def modal_setting(
    records: list[dict[str, Any]], dataset_name: str, method: str, fallback: dict
) -> dict[str, Any]:
    """The most frequent (gamma, alpha, inside) of ``method``'s selections with
    K > 1 on ``dataset_name``; ``fallback`` when there are none."""
    chosen = Counter(
        (r["gamma"], r["alpha"], r["inside"])
        for r in records
        if r["dataset"] == dataset_name and r["method"] == method and (r["k"] or 0) > 1
    )
    if not chosen:
        return dict(fallback)
    gamma, alpha, inside = chosen.most_common(1)[0][0]
    return {"gamma": gamma, "alpha": alpha, "inside": inside}


def timing_estimators(
    records: list[dict[str, Any]],
    dataset_name: str,
    seed: int,
    methods: tuple[str, ...] | None = None,
) -> list[tuple[str, str, Callable[[np.ndarray, np.ndarray], Fitted]]]:
    """(label, setting, fit) of PLUME K = 2 with each M-step and SPLA1 K = 2,
    those of them in ``methods`` (None: all), and Logit, the reference of
    every ratio."""
    plume = modal_setting(records, dataset_name, "plume-newton", FALLBACK_PLUME)
    spla1 = modal_setting(records, dataset_name, "spla1", FALLBACK_PLUME)
    plume_setting = PolySetting(2, plume["alpha"], plume["gamma"], plume["inside"])
    spla1_setting = PolySetting(2, spla1["alpha"], None, spla1["inside"])
    estimators = [
        (
            f"plume-{mstep}",
            plume_setting.describe(),
            lambda X, y, m=mstep: fit_poly(
                X, y, plume_setting, FitContext(mstep=m, seed=seed), hard=False
            ),
        )
        for mstep in ("newton", "gradient", "bfgs")
    ]
    estimators.append(
        (
            "spla1",
            spla1_setting.describe(),
            lambda X, y: fit_poly(
                X, y, spla1_setting, FitContext(seed=seed), hard=True
            ),
        )
    )
    estimators.append(("logit", "K=1 unpenalised", fit_logit))
    if methods is None:
        return estimators
    return [e for e in estimators if e[0] in methods or e[0] == "logit"]


def time_estimators(
    name: str,
    split: Split,
    estimators: list[tuple[str, str, Callable[[np.ndarray, np.ndarray], Fitted]]],
    repeats: int,
) -> list[TimingRow]:
    """One untimed warm-up fit of each estimator, then ``repeats`` interleaved
    timed fits (the order reversed every other repeat)."""

    def run(fit: Callable[[np.ndarray, np.ndarray], Fitted]) -> Attempt:
        return attempt(lambda: fit(split.train, split.y_train))

    table = [TimingRow(name, label, setting) for label, setting, _ in estimators]
    for _, _, fit in estimators:
        run(fit)
    pairs = list(zip(estimators, table, strict=True))
    for rep in range(repeats):
        for (_, _, fit), row in pairs if rep % 2 == 0 else pairs[::-1]:
            record_timing(row, run(fit))
    return table


def record_timing(row: TimingRow, outcome: Attempt) -> None:
    """Store one timed fit in ``row``."""
    row.warnings.update(outcome.warnings)
    if outcome.fitted is None:
        row.errors.append(outcome.error or "")
        return
    row.seconds.append(outcome.fitted.seconds)
    row.iterations.append(outcome.fitted.iterations)
