"""plumestats: polyhedral classification as a probabilistic model (PLUME).

A statsmodels-style package: :class:`PolyhedralMixtureLogit` fits a mixture of
logistic experts whose gate reuses the experts' hyperplanes, so that the class coded
1 is modelled as the inside of a polyhedron.
"""

from importlib.metadata import PackageNotFoundError, version

from .bounds import RademacherBound
from .hard import HardPolyhedralLogit
from .label_flip import LabelFlipPolyhedralLogit
from .model import PolyhedralMixtureLogit
from .results import PolyhedralMixtureLogitResults

try:
    __version__ = version("plumestats")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0+unknown"

__all__ = [
    "HardPolyhedralLogit",
    "LabelFlipPolyhedralLogit",
    "PolyhedralMixtureLogit",
    "PolyhedralMixtureLogitResults",
    "RademacherBound",
    "__version__",
]
