"""Public names of plumestats in one namespace (``import plumestats.api as ps``)."""

from ._formula_safety import UnsafeFormulaError, check_safe_formula
from ._lr_test import compare_lr_test
from ._sharing import load_json
from .bounds import HoldoutBound, RademacherBound, holdout_bound, rademacher_bound
from .datasets import list_datasets, simulate_plume, simulate_polyhedron
from .datasets import load as load_dataset
from .formula.api import plume, plume_flip, spla1
from .hard import HardPolyhedralLogit
from .label_flip import LabelFlipPolyhedralLogit, LabelFlipPolyhedralLogitResults
from .model import PolyhedralMixtureLogit
from .plotting import plot_convergence, plot_polyhedron, plot_select_k
from .results import PolyhedralMixtureLogitResults
from .selection import select_k
from .sm_exceptions import FlipRateBoundaryWarning, LocalMaximaWarning

__all__ = [
    "FlipRateBoundaryWarning",
    "HardPolyhedralLogit",
    "HoldoutBound",
    "LabelFlipPolyhedralLogit",
    "LabelFlipPolyhedralLogitResults",
    "LocalMaximaWarning",
    "PolyhedralMixtureLogit",
    "PolyhedralMixtureLogitResults",
    "RademacherBound",
    "UnsafeFormulaError",
    "check_safe_formula",
    "compare_lr_test",
    "holdout_bound",
    "list_datasets",
    "load_dataset",
    "load_json",
    "plot_convergence",
    "plot_polyhedron",
    "plot_select_k",
    "plume",
    "plume_flip",
    "rademacher_bound",
    "select_k",
    "simulate_plume",
    "simulate_polyhedron",
    "spla1",
]
