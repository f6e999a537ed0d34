"""Smoke tests: the benchmark scripts run end to end on small settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script, *args):
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


def test_fit_speed_quick(data_dir, tmp_path):
    output = tmp_path / "fit_speed.md"
    stdout = _run(
        "fit_speed.py", "--quick", "--data-dir", str(data_dir), "--output", str(output)
    )
    assert "pima" in stdout
    text = output.read_text()
    assert "| pima |" in text and "ratio" in text


def test_init_compare_small(data_dir, tmp_path):
    output = tmp_path / "init.md"
    stdout = _run(
        "init_compare.py",
        "--data-dir",
        str(data_dir),
        "--datasets",
        "pima",
        "--ks",
        "2",
        "--output",
        str(output),
    )
    assert "kmeans" in stdout
    assert "| pima | 2 |" in output.read_text()
