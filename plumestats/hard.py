"""The hard-gating polyhedral classifier of Manwani & Sastry (2010), SPLA1."""

from __future__ import annotations

import numbers

import numpy as np

from ._sharing import register_exportable
from ._spec import HardGate
from .model import PolyhedralMixtureLogit
from .results import (
    PolyhedralMixtureLogitResults,
    PolyhedralMixtureLogitResultsWrapper,
)

__all__ = ["HardPolyhedralLogit"]


class HardPolyhedralLogit(PolyhedralMixtureLogit):
    r"""SPLA1: :math:`P(y = 1 \mid x) = \sigma(\min_k w_k' x)`.

    The gamma -> infinity limit of :class:`PolyhedralMixtureLogit`: the gate is the
    indicator of the hyperplane with the smallest score. Fitting alternates between
    assigning each point to its active hyperplane (the arg-min) and raising the
    K resulting logistic log-likelihoods with the chosen M-step solver; because
    that alternating surrogate does not bound the log-likelihood from below, each
    step is line-searched on the log-likelihood itself, so it never decreases. The
    same engine, options and results object as PLUME, so the two compare in one
    table.

    Parameters
    ----------
    endog, exog, k, missing, inside, freq_weights
        As for :class:`PolyhedralMixtureLogit`. ``gamma`` is infinite by
        definition: ``gamma=np.inf`` is accepted, a finite one is a
        ``TypeError`` pointing to :class:`PolyhedralMixtureLogit`.

    Notes
    -----
    The log-likelihood is not differentiable where two scores tie (a set of
    measure zero); the score and Hessian are those of the active pieces. Standard
    errors are conditional on the assignment of points to faces.

    References
    ----------
    N. Manwani and P. S. Sastry, "Learning polyhedral classifiers using logistic
    function", ACML 2010.
    """

    def __init__(
        self, endog, exog, k: int = 2, missing: str = "none", inside=1, **kwargs
    ):
        gamma = kwargs.pop("gamma", np.inf)
        super().__init__(
            endog, exog, k=k, gamma=gamma, missing=missing, inside=inside, **kwargs
        )
        self._init_keys.remove("gamma")  # not a setting of this model

    def _check_gamma(self, gamma) -> float:
        # gamma = inf defines the model; a finite one is PLUME's
        if not (isinstance(gamma, numbers.Real) and gamma == np.inf):
            raise TypeError(
                f"{type(self).__name__} has gamma = inf by definition (hard "
                f"gating) and takes no gamma; got gamma={gamma!r}. For a finite "
                "gamma use PolyhedralMixtureLogit(..., gamma=...)"
            )
        return np.inf

    def _gate(self, gamma: float) -> HardGate:
        return HardGate()


register_exportable(
    HardPolyhedralLogit,
    PolyhedralMixtureLogitResults,
    PolyhedralMixtureLogitResultsWrapper,
)
