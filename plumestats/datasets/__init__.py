"""Data for examples, tests and benchmarks."""

from ._simulate import simulate_polyhedron

__all__ = ["simulate_polyhedron"]
