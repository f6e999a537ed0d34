"""Lower-case formula aliases, as in ``statsmodels.formula.api``.

>>> import plumestats.formula.api as psf
>>> res = psf.plume("y ~ x1 + x2", data, k=3, gamma=1.0).fit()  # doctest: +SKIP
"""

from ..hard import HardPolyhedralLogit
from ..label_flip import LabelFlipPolyhedralLogit
from ..model import PolyhedralMixtureLogit

plume = PolyhedralMixtureLogit.from_formula
spla1 = HardPolyhedralLogit.from_formula
plume_flip = LabelFlipPolyhedralLogit.from_formula

__all__ = ["plume", "plume_flip", "spla1"]
