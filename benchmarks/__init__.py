"""plumestats' benchmarks: scripts that print tables and write reports.

Run each from the project root as a module, e.g. ``python -m benchmarks.fit_speed
--quick``; ``--help`` lists its options. The maintained benchmarks are
``table1``, ``fit_speed``, ``polyhedral`` (with ``polyhedral_oracle``, the Bayes
oracle it is scored against), ``coverage``, ``scale`` and
``bootstrap_parallel``; they use plumestats' public API only. Their shared
options, data loader and report provenance are in :mod:`benchmarks._common`;
the current report of each is in ``benchmarks/results``.
"""
