"""Warnings of plumestats, beside statsmodels' (``statsmodels.tools.sm_exceptions``).

Each is a subclass of the statsmodels warning it refines, so a filter on the
statsmodels class still catches it, and a filter on this one catches only it.
"""

from __future__ import annotations

from statsmodels.tools.sm_exceptions import ConvergenceWarning

__all__ = ["FlipRateBoundaryWarning", "LocalMaximaWarning"]


class FlipRateBoundaryWarning(ConvergenceWarning):
    """The label-flip model's flip rate is at its boundary, 0.

    The labels show no random flips: the fit is PLUME's (faces, standard
    errors and log-likelihood), it converged, and ``flip_logit`` has no
    standard error. A regular outcome on clean labels, not a failed fit; silence
    it with ``warnings.simplefilter("ignore", FlipRateBoundaryWarning)``.
    """


class LocalMaximaWarning(ConvergenceWarning):
    """The starts of a fit ended at different local maxima.

    PLUME's likelihood has several maxima when K > 1. The fit reports the best
    of its starts (``n_init``); when they ended more than one log-likelihood
    unit apart (``mle_retvals["restarts_spread"]``) a higher maximum may exist
    that no start reached. More starts (``fit(n_init=20)``), other kinds of
    start (``fit(init="mixed")``) or, without them, re-seating moves
    (``fit(reseat=K)``) search further.
    """
