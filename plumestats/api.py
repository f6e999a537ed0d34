"""Public names of plumestats in one namespace (``import plumestats.api as ps``)."""

from .bounds import RademacherBound, rademacher_bound
from .datasets import list_datasets, simulate_polyhedron
from .datasets import load as load_dataset
from .formula.api import plume, spla1
from .hard import HardPolyhedralLogit
from .model import PolyhedralMixtureLogit
from .plotting import plot_convergence, plot_polyhedron, plot_select_k
from .results import PolyhedralMixtureLogitResults
from .selection import compare_lr_test, select_k

__all__ = [
    "HardPolyhedralLogit",
    "PolyhedralMixtureLogit",
    "PolyhedralMixtureLogitResults",
    "RademacherBound",
    "compare_lr_test",
    "list_datasets",
    "load_dataset",
    "plot_convergence",
    "plot_polyhedron",
    "plot_select_k",
    "plume",
    "rademacher_bound",
    "select_k",
    "simulate_polyhedron",
    "spla1",
]
