"""Reproduce Table 1 of the PLUME paper (accuracy on five UCI datasets).

Run with ``python examples/table1.py``. This is a thin front door to the
benchmark ``python -m benchmarks.table1``, which does the work: repeated
stratified 10-fold cross-validation with nested selection of K, gamma and the
L2 penalty, for PLUME (three M-steps), SPLA1, statsmodels' ``Logit``, an RBF
SVM and CART. It needs the ``bench`` extra (``pip install "plumestats[bench]"``,
for scikit-learn and matplotlib) and the UCI CSVs in ``../shared/data`` (or
``--data-dir DIR``).

With no arguments it runs the benchmark's ``--quick`` smoke test (heart and
pima, one repeat, 3 outer folds, reduced grids; about a minute) and writes
``table1_quick.md``, ``.csv`` and ``.png`` to ``benchmarks/results``.
Arguments, if given, are passed on to the benchmark as they are, e.g.
``python examples/table1.py --quick --datasets heart --no-timing``.

The whole table, with the paper's 10 repeats (one on adult)::

    python -m benchmarks.table1 --jobs 2

The report published in ``benchmarks/results/table1.md`` is one such run
(about two hours on two cores); its command, commit and run time are listed
in it.

See ``python -m benchmarks.table1 --help`` for every option.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # where the ``benchmarks`` package is
FULL_COMMAND = "python -m benchmarks.table1 --jobs 2"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for extra in ("sklearn", "matplotlib"):
        if importlib.util.find_spec(extra) is None:
            raise ImportError(
                f'the Table 1 benchmark needs {extra}: pip install "plumestats[bench]"'
            )
    if not argv:
        argv = ["--quick"]
    print(f"Running: python -m benchmarks.table1 {' '.join(argv)}")
    if "--quick" in argv:
        print(f"(a smoke run; the full table: {FULL_COMMAND})\n")
    sys.stdout.flush()  # our lines before the benchmark's
    # A process of its own, as the command printed above would run it; the
    # project root on its path, so that it finds the package from any folder
    # (and relative paths in the arguments keep meaning this folder's).
    path = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
    command = [sys.executable, "-m", "benchmarks.table1", *argv]
    return subprocess.run(command, check=False, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
