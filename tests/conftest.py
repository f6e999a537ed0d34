"""Shared fixtures: the benchmark datasets by path, and small simulated problems."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

# 50 examples per property in the default run; `--hypothesis-profile=slow` runs 1000
settings.register_profile("default", max_examples=50, deadline=None)
settings.register_profile("slow", max_examples=1000, deadline=None)
settings.load_profile("default")

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def pytest_addoption(parser):
    parser.addoption(
        "--data-dir",
        default=str(DEFAULT_DATA_DIR),
        help="folder holding the UCI benchmark CSVs (default: ../shared/data)",
    )


@pytest.fixture(scope="session")
def data_dir(request) -> Path:
    """The shared datasets; skipped when absent, but an error under CI."""
    path = Path(request.config.getoption("--data-dir"))
    if not (path / "pima.csv").is_file():
        reason = f"benchmark data not found in {path} (pass --data-dir)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must have ../shared/data")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def pima(data_dir) -> pd.DataFrame:
    return pd.read_csv(data_dir / "pima.csv")


def logistic_data(nobs: int = 400, d: int = 3, seed: int = 0) -> pd.DataFrame:
    """Data from a logistic model (K = 1 truth)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((nobs, d))
    beta = np.linspace(-1.0, 1.0, d)
    y = rng.random(nobs) < 1.0 / (1.0 + np.exp(-(0.3 + x @ beta)))
    data = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(d)])
    data["y"] = y.astype(int)
    return data


def unwrapped(summary) -> str:
    """A summary's text with its wrapped footnotes joined again (a line
    continued under its ``[n] `` label), so that a phrase of a note is found
    whatever the wrapping, and a phrase that must be absent cannot hide
    across a line break."""
    return re.sub(r"\n {4,5}(?=\S)", " ", str(summary))
