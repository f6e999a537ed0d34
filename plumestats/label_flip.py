r"""PLUME with randomly flipped labels: a polyhedron seen through label noise.

A logistic expert cannot flatten to a noise floor: where labels are flipped at
random, PLUME's faces move off the polytope to explain the wrong labels
near them (docs/benchmarks/learned.md, "Label noise", measured it). This
model adds the flip rate as a parameter of the likelihood instead (Copas,
1988):

.. math::

    P(y \mid x) = \frac{\lambda}{2} + (1 - \lambda)\,
    \sum_k g_k(x)\, \sigma(y\, w_k' x), \qquad \lambda = \operatorname{expit}(\eta),

i.e. each label is a coin toss with probability :math:`\lambda`, flipped with
probability :math:`\varepsilon = \lambda / 2`. The maths is in
``plumestats._objectives`` (``FlipObjective``), fitted by the one EM engine.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from scipy.special import expit, logit
from statsmodels.base import wrapper as wrap

from ._compat import cache_readonly
from ._diagnostics import caller_stacklevel
from ._inference import check_alpha
from ._objectives import BOUNDARY_LAM
from ._prediction import flip_log_odds_and_jacobian
from ._sharing import register_exportable
from ._summary import build_summary
from ._validation import check_choice, check_positive_float, method_name
from .model import PolyhedralMixtureLogit
from .results import PolyhedralMixtureLogitResults, PolyhedralMixtureLogitResultsWrapper
from .sm_exceptions import FlipRateBoundaryWarning

__all__ = [
    "LabelFlipPolyhedralLogit",
    "LabelFlipPolyhedralLogitResults",
]

FLIP_PARAM = "flip_logit"
PREDICT_WHICH = ("mean", "var", "clean", "decision", "gate", "expert", "linear")


class LabelFlipPolyhedralLogit(PolyhedralMixtureLogit):
    r"""PLUME with a share of randomly flipped labels, estimated with the faces.

    .. math::

        P(y \mid x) = \varepsilon + (1 - 2\varepsilon)
        \sum_{k=1}^K g_k(x)\, \sigma(y\, w_k' x), \qquad
        \varepsilon = \operatorname{expit}(\eta) / 2 \in (0, 1/2),

    where the sum is :class:`PolyhedralMixtureLogit`'s model of the clean label.
    Where labels are noisy the faces then stay on the polytope instead of
    moving off it to explain the wrong labels near them, and predictions
    stay within ``[eps, 1 - eps]``.

    Parameters
    ----------
    endog, exog, k, gamma, missing, inside, freq_weights
        As for :class:`PolyhedralMixtureLogit`.

    Notes
    -----
    The parameter vector is PLUME's ``[w_1, ..., w_K]`` followed by
    ``flip_logit`` :math:`= \eta = \operatorname{logit}(2\varepsilon)`, the
    log-odds that a label is a coin toss: on that scale the likelihood is
    smooth and unbounded, so its Wald interval is meaningful; the results
    give :attr:`~LabelFlipPolyhedralLogitResults.flip_rate` and its interval
    on the natural scale. When the data show no label noise the estimate is
    at the boundary ``eps = 0`` (held at ``5e-9`` or a little below; a
    warning gives the value) and the fit is PLUME's.

    EM fits with soft gating, in memory, by row blocks (``chunksize``) or on
    Dask input; there is no SPLA1 variant yet.

    References
    ----------
    J. B. Copas, "Binary regression models for contaminated data", JRSS B 50
    (1988) 225-265.

    Examples
    --------
    >>> import plumestats.api as ps
    >>> data, _ = ps.simulate_polyhedron(
    ...     2000, d=2, k=3, noise=0.1, random_state=1)
    >>> res = ps.plume_flip("y ~ x1 + x2", data, k=3).fit(alpha=1e-6)
    >>> bool(0.05 < res.flip_rate < 0.15)
    True
    """

    _hard_variant = None  # the flip model has no hard-gating variant
    _flips = True

    _params_layout = f"hyperplane-major, then {FLIP_PARAM}"

    # the model's own parameter after the faces' (its count: the spec's)
    _extra_names = (FLIP_PARAM,)

    # ------------------------------------------------------------------ maths
    # loglikeobs, score_obs, score and hessian are PolyhedralMixtureLogit's:
    # the spec's objective (plumestats._objectives.FlipObjective) carries them

    def predict(self, params, exog=None, which: str = "mean", **kwargs):
        """Predictions at ``params``.

        Parameters
        ----------
        params : array_like
            Hyperplane-major weights, then ``flip_logit``.
        exog : array_like, optional
            Design rows (defaults to the estimation sample).
        which : {"mean", "var", "clean", "decision", "gate", "expert", "linear"}
            ``"mean"``: P(observed y = 1 | x) ``= eps + (1 - 2 eps) P_clean``;
            ``"var"``: the observed label's variance, ``mean (1 - mean)``;
            ``"clean"``: PLUME's P(y = 1 | x) without label flips; the others as
            for :meth:`PolyhedralMixtureLogit.predict` (they do not involve eps).
        """
        check_choice(which, "which", PREDICT_WHICH)
        params = self._check_params(params)
        base = "mean" if which == "clean" else which
        out = super().predict(params, exog, which=base, **kwargs)
        if which != "mean":
            return out
        lam = expit(params[-1])
        return 0.5 * lam + (1.0 - lam) * out

    def _log_odds_and_jacobian(self, params, exog, jacobian: bool = True):
        """Log-odds of the observed label and their gradient in ``params``
        (``flip_logit`` included)."""
        return flip_log_odds_and_jacobian(self, params, exog, jacobian)

    def _predict_settings(self, params, which) -> dict:
        return super()._predict_settings(params[:-1], which)

    # ------------------------------------------------------------- estimation
    @property
    def start_params(self) -> np.ndarray:
        """PLUME's default start values, then ``flip_logit`` for a 5% flip rate."""
        return np.append(super().start_params, logit(0.1))

    def fit(
        self,
        start_params=None,
        method: str = "em",
        maxiter: int = 500,
        full_output: bool = True,
        disp: bool = False,
        callback=None,
        retall: bool = False,
        *,
        tol: float = 1e-8,
        flip_start: float = 0.05,
        **kwargs,
    ):
        """Fit by EM (flip responsibilities, closed-form flip rate, PLUME
        M-steps), finished by Newton-Raphson on the joint log-likelihood.

        Parameters
        ----------
        start_params : array_like, optional
            ``K p + 1`` start values in the user's units (``flip_logit`` last).
            Without them, PLUME itself is fitted first (``init``, ``n_init``,
            ``random_state``, ``alpha``) and the flip rate starts at
            ``flip_start``.
        method : {"em"}
            Only EM.
        maxiter, tol
            As for :meth:`PolyhedralMixtureLogit.fit`; ``maxiter`` applies to
            each run, PLUME's and the label-flip one.
        full_output, disp, callback, retall
            As for :meth:`PolyhedralMixtureLogit.fit` (statsmodels' order:
            ``fit(start_params, method, maxiter, full_output, disp, ...)``);
            ``callback`` sees the PLUME runs' ``K p`` parameters, then the
            label-flip runs' ``K p + 1``.
        flip_start : float, default 0.05
            Flip rate the EM starts from, in ``(0, 0.5)``.
        **kwargs
            The other options of :meth:`PolyhedralMixtureLogit.fit` (``mstep``,
            ``init``, ``n_init``, ``random_state``, ``alpha``, ``em_tol``,
            ``em_overrelax``: the PLUME runs', not the label-flip runs' EM steps,
            ``reseat``, ``cov_type``, ``cov_kwds``, ``use_t``, ``chunksize``,
            ``progress``). Each of the
            ``n_init`` PLUME runs (and each of PLUME's re-seating moves; with
            ``start_params`` there are none) starts one label-flip run, and the
            best label-flip log-likelihood is kept
            (``mle_retvals["restarts_llf"]`` has them all). The L2 penalty
            ``alpha`` is on the hyperplanes' standardised slopes, not on the
            flip rate; the sandwiches count ``flip_logit`` among the
            parameters.

        Returns
        -------
        LabelFlipPolyhedralLogitResults
        """
        method = check_choice(method_name(method, ("em",)), "method", ("em",))
        flip_start = check_positive_float(flip_start, "flip_start")
        if not flip_start < 0.5:
            raise ValueError(
                f"flip_start must be below 0.5 (a flip rate of 0.5 makes the labels "
                f"pure noise), got {flip_start!r}"
            )
        # read by the fit's label-flip stage and settings, for this fit only
        self._flip_start = flip_start
        try:
            return super().fit(
                start_params,
                method,
                maxiter,
                full_output,
                disp,
                callback,
                retall,
                tol=tol,
                **kwargs,
            )
        finally:
            del self._flip_start

    # the flip rate the label-flip runs start from (fit(flip_start=...))
    _flip_start = 0.05

    def _extra_settings(self) -> dict:
        return {"flip_start": self._flip_start, "label_flips": True}

    def _report_extras(self, params) -> str:
        return f", flip rate {expit(params[-1]) / 2:.4g}"

    def _warn_fit_extras(self, retvals: dict, params) -> None:
        if retvals.get("boundary"):
            # held where the flip rate crossed the floor BOUNDARY_LAM / 2: a
            # Newton step may have carried it a little below
            held = expit(params[-1]) / 2
            warnings.warn(
                "The estimated flip rate is at its boundary, 0 (held at "
                f"{held:.2g}, at most {BOUNDARY_LAM / 2:g}): the labels show no "
                "random flips, and the fit is PolyhedralMixtureLogit's. flip_logit "
                "has no standard error.",
                FlipRateBoundaryWarning,
                stacklevel=caller_stacklevel(),
            )

    @property
    def _results_class(self):
        return LabelFlipPolyhedralLogitResults

    @property
    def _results_wrapper(self):
        return LabelFlipPolyhedralLogitResultsWrapper


class LabelFlipPolyhedralLogitResults(PolyhedralMixtureLogitResults):
    """Results of :class:`LabelFlipPolyhedralLogit`: PLUME's, plus the flip
    rate (``flip_rate``, ``flip_rate_bse``, ``flip_rate_conf_int()``).

    Marginal effects (:meth:`get_margeff`) are those of the observed label's
    probability, the flip rate's uncertainty included. What is defined for
    PLUME's likelihood only (the Rademacher bound, the bootstrap,
    ``responsibilities()`` and ``face_shares()``) raises
    ``NotImplementedError``.
    """

    @property
    def flip_rate(self) -> float:
        r"""Estimated share of flipped labels, :math:`\varepsilon =
        \operatorname{expit}(\eta) / 2`."""
        return float(expit(np.asarray(self.params)[-1]) / 2.0)

    @property
    def flip_rate_bse(self) -> float:
        r"""Delta-method standard error of
        :attr:`~plumestats.api.LabelFlipPolyhedralLogitResults.flip_rate`,
        :math:`\operatorname{se}(\eta)\, \lambda (1 - \lambda) / 2`."""
        lam = 2.0 * self.flip_rate
        return float(np.asarray(self.bse)[-1] * lam * (1.0 - lam) / 2.0)

    def flip_rate_conf_int(self, alpha: float = 0.05) -> tuple[float, float]:
        """Wald interval of ``flip_logit`` (``conf_int``'s: t with ``use_t``,
        the fit's ``cov_type``) mapped to the flip rate (it stays inside
        ``(0, 0.5)``, unlike the delta-method one)."""
        lower, upper = np.asarray(self.conf_int(check_alpha(alpha)))[-1]
        return float(expit(lower) / 2.0), float(expit(upper) / 2.0)

    @cache_readonly
    def llr_pvalue(self) -> float:
        """Chi-squared p-value of ``llr`` against the intercept-only logit, on
        ``df_model`` degrees of freedom (every parameter but the null's one,
        the flip rate's included); as indicative as PLUME's for K > 1, and the
        flip rate's null value 0 is on the boundary."""
        return np.float64(stats.chi2.sf(self.llr, self.df_model))

    def _plume_only(self, *args, **kwargs):
        raise NotImplementedError(
            "not available for LabelFlipPolyhedralLogit: it is defined for "
            "PolyhedralMixtureLogit's likelihood"
        )

    rademacher_bound = bootstrap = responsibilities = _plume_only
    # conf_int(method="bootstrap") asks for the bootstrap: refused the same way
    _require_bootstrap = _plume_only
    face_shares = _plume_only

    def summary(self, yname=None, xname=None, title=None, alpha: float = 0.05):
        """Summary tables: the header, one block per hyperplane, the flip rate."""
        alpha = check_alpha(alpha)
        return build_summary(self, yname=yname, xname=xname, title=title, alpha=alpha)


class LabelFlipPolyhedralLogitResultsWrapper(PolyhedralMixtureLogitResultsWrapper):
    pass


wrap.populate_wrapper(
    LabelFlipPolyhedralLogitResultsWrapper, LabelFlipPolyhedralLogitResults
)
register_exportable(
    LabelFlipPolyhedralLogit,
    LabelFlipPolyhedralLogitResults,
    LabelFlipPolyhedralLogitResultsWrapper,
)
