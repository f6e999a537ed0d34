"""Reproduce Table 1 of the PLUME paper (accuracy on five UCI datasets).

Run with ``python examples/table1.py``. This is a thin front door to the
benchmark script ``benchmarks/table1.py``, which does the work: repeated
stratified 10-fold cross-validation with nested selection of K, gamma and the
L2 penalty, for PLUME (three M-steps), SPLA1, statsmodels' ``Logit``, an RBF
SVM and CART. It needs the ``bench`` extra (``pip install "plumestats[bench]"``,
for scikit-learn and matplotlib) and the UCI CSVs in ``../shared/data`` (or
``--data-dir DIR``).

With no arguments it runs the benchmark's ``--quick`` smoke test (heart and
pima, one repeat, 3 outer folds, reduced grids; about a minute) and writes
``table1_quick.md``, ``.csv`` and ``.png`` to ``benchmarks/results``.
Arguments, if given, are passed on to the benchmark as they are, e.g.
``python examples/table1.py --quick --datasets heart --no-timing --output /tmp``.

The table published in ``benchmarks/results/table1.md`` is five runs, one
per dataset, with the paper's 10 repeats (one on adult), combined into one
report (about 4.5 hours on two cores in all)::

    python benchmarks/table1.py --jobs 2 --datasets ionosphere \
        --methods plume-newton plume-gradient plume-bfgs logit svm cart \
        --name table1_ionosphere_10repeats_inner2
    python benchmarks/table1.py --jobs 2 --datasets heart \
        --name table1_heart_10repeats_inner2
    (the same for ilpd and pima)
    python benchmarks/table1.py --jobs 2 --datasets adult --name table1_adult_inner2
    python benchmarks/table1_combine.py table1_ionosphere_10repeats_inner2 \
        table1_heart_10repeats_inner2 table1_ilpd_10repeats_inner2 \
        table1_pima_10repeats_inner2 table1_adult_inner2

SPLA1, which has no gamma, is left out on ionosphere to save time (its 91.19
is in ``table1_ionosphere_10repeats_gammas-0.5-1-5.md``).

See ``python benchmarks/table1.py --help`` for every option.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "table1.py"
# how the published table1.md was made (the commands are in the docstring)
FULL_COMMAND = (
    "python benchmarks/table1.py --jobs 2 --datasets NAME --name STEM, once per "
    "dataset, then python benchmarks/table1_combine.py STEM ..."
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for extra in ("sklearn", "matplotlib"):
        if importlib.util.find_spec(extra) is None:
            raise ImportError(
                f'the Table 1 benchmark needs {extra}: pip install "plumestats[bench]"'
            )
    if not argv:
        argv = ["--quick"]
    print(f"Running: python benchmarks/table1.py {' '.join(argv)}")
    if "--quick" in argv:
        print(f"(a smoke run; the full table, as published: {FULL_COMMAND})\n")
    sys.stdout.flush()  # our lines before the benchmark's
    # A process of its own, exactly as the command printed above would run it.
    return subprocess.run(
        [sys.executable, str(BENCHMARK), *argv], check=False
    ).returncode


if __name__ == "__main__":
    sys.exit(main())
