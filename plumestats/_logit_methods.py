"""statsmodels ``Logit``'s model methods beyond ``GenericLikelihoodModel``'s:
the one with a meaning for PLUME (``get_distribution``), and, refused by
name with what to use instead, those that rest on one linear predictor and
a link (PLUME has one predictor per face and no link), where a script written
for ``smf.logit`` would otherwise meet an ``AttributeError`` or statsmodels'
bare ``NotImplementedError``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["LogitMethods"]

# why the methods below that ``Logit`` has are refused
_PLUME = "PLUME has one linear predictor per face, and no link function"


class LogitMethods:
    """Mixed into the models: ``Logit``'s methods, or a clear refusal."""

    def get_distribution(self, params, exog=None, offset=None):
        """The outcome's distribution at ``exog``: Bernoulli with success
        probability ``predict(params, exog)`` (the class coded 1), a frozen
        ``scipy.stats`` distribution, as ``Logit.get_distribution`` returns.

        Parameters
        ----------
        params : array_like
            The model's parameters (``results.params``).
        exog : array_like, optional
            Design rows, taken by position as ``predict`` takes them
            (the results' ``predict`` applies a formula); by default the
            estimation rows.
        offset : None
            Accepted as ``Logit`` takes it; an offset is not part of PLUME.
        """
        if offset is not None:
            raise ValueError(
                "offset is not supported: PLUME has no offset (each face has "
                "its own linear predictor); pass offset=None"
            )
        probability = np.asarray(self.predict(params, exog), dtype=float)
        return stats.bernoulli(probability)

    def fit_constrained(self, constraints, start_params=None, **fit_kwds):
        """Not available: statsmodels fits a constrained ``Logit`` as a
        model of fewer columns with an offset, which needs one linear
        predictor. Test a constraint with the results' ``t_test`` or
        ``wald_test``, or fit the model without a column and compare the two
        fits with :func:`~plumestats.api.compare_lr_test`."""
        raise NotImplementedError(
            "fit_constrained is not available: statsmodels' moves the "
            f"constraints into an offset of one linear predictor, and {_PLUME}. "
            "Test the constraint "
            "with results.t_test / wald_test (e.g. 'h1:x1 = h2:x1'), or fit "
            "the model without a column and compare the fits with "
            "ps.compare_lr_test(smaller, larger)"
        )

    def hessian_factor(self, params, scale=None, observed=True):
        """Not available: the Hessian is no weighted Gram of the design
        (``exog' diag(w) exog``) but one block per pair of faces; use
        ``hessian``."""
        raise NotImplementedError(
            "hessian_factor is not available: it weighs one linear predictor, "
            f"and {_PLUME} (the Hessian has one block per pair of faces): use "
            "model.hessian(params)"
        )

    def score_factor(self, params):
        """Not available: the score of a row is one weight per face times
        the row; use ``score_obs``."""
        raise NotImplementedError(
            "score_factor is not available: it weighs one linear predictor, "
            f"and {_PLUME}: use model.score_obs(params), one row per observation"
        )

    def cdf(self, X):
        """Not available: PLUME has no link function; use ``predict``."""
        raise NotImplementedError(
            f"cdf is Logit's link function, and {_PLUME}: use "
            "model.predict(params, exog) for the probabilities"
        )

    def pdf(self, X):
        """Not available: PLUME has no link function; use ``predict``."""
        raise NotImplementedError(
            f"pdf is the derivative of Logit's link function, and {_PLUME}: use "
            "model.predict(params, exog) for the probabilities"
        )
