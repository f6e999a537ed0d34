"""Data for examples, tests and benchmarks.

``simulate_polyhedron`` draws points labelled by a known polyhedron,
``simulate_plume`` outcomes from a known PLUME model; ``load``
reads the PLUME paper's five UCI datasets (``list_datasets()`` names them).
"""

from ._simulate import simulate_plume, simulate_polyhedron
from ._uci import DATASETS, get_data_home, list_datasets, load

__all__ = [
    "DATASETS",
    "get_data_home",
    "list_datasets",
    "load",
    "simulate_plume",
    "simulate_polyhedron",
]
