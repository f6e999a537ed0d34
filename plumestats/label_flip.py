r"""PLUME with randomly flipped labels: a polyhedron seen through label noise.

A logistic expert cannot flatten to a noise floor: where labels are flipped at
random, PLUME's faces move off the polytope to explain the wrong labels
near them (``benchmarks/label_noise.py`` measures it). This model adds the
flip rate as a parameter of the likelihood instead (Copas, 1988):

.. math::

    P(y \mid x) = \frac{\lambda}{2} + (1 - \lambda)\,
    \sum_k g_k(x)\, \sigma(y\, w_k' x), \qquad \lambda = \operatorname{expit}(\eta),

i.e. each label is a coin toss with probability :math:`\lambda`, flipped with
probability :math:`\varepsilon = \lambda / 2`. The maths and the EM are in
``plumestats._flip``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from scipy.special import expit, logit
from statsmodels.base import wrapper as wrap
from statsmodels.base.model import LikelihoodModelResults
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    PerfectSeparationWarning,
)
from statsmodels.tools.tools import nan_dot

from . import _dask, _fitting
from ._compat import cache_readonly
from ._covariance import invert_information, warn_singular_information
from ._em import EMOptions
from ._flip import (
    BOUNDARY_LAM,
    flip_gradient,
    flip_neg_hessian,
    flip_state,
    run_flip_em,
)
from ._inference import check_alpha
from ._likelihood import Terms, compute_terms, linear_scores
from ._progress import FitProgress, check_progress
from ._validation import (
    check_choice,
    check_flag,
    check_identified,
    check_positive_float,
    float_vector,
)
from .model import PolyhedralMixtureLogit, check_fit_options
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
    endog, exog, k, gamma, missing, inside
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

    Only in-memory data, EM fits and soft gating: there is no ``chunksize``,
    Dask input or SPLA1 variant yet.

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

    _params_layout = f"hyperplane-major, then {FLIP_PARAM}"

    def __init__(
        self,
        endog,
        exog,
        k: int = 2,
        gamma: float = 1.0,
        missing: str = "none",
        inside=1,
        **kwargs,
    ):
        if _dask.is_dask_collection(endog) or _dask.is_dask_collection(exog):
            raise TypeError(
                f"{type(self).__name__} needs in-memory data; Dask collections "
                "are supported by PolyhedralMixtureLogit only"
            )
        super().__init__(
            endog, exog, k=k, gamma=gamma, missing=missing, inside=inside, **kwargs
        )
        self.nparams = self.k * self.k_vars + 1
        self.k_extra = 1
        # statsmodels' convention (NegativeBinomial's alpha): df_model counts
        # the regression parameters less the null's intercept, k_extra the
        # others (llr_pvalue adds it back)
        self.df_model = float(self.nparams - self.k_extra - 1)
        self.df_resid = float(self.nobs - self.nparams)
        self.data.param_names = [*self.data.param_names, FLIP_PARAM]

    # ------------------------------------------------------------------ maths
    def _state(self, params):
        problem = _UserProblem(self)
        return problem, flip_state(problem, self._check_params(params))

    def loglikeobs(self, params):
        r""":math:`l_n = \log[\lambda/2 + (1 - \lambda) p(y_n \mid x_n)]`."""
        return self._state(params)[1].loglikeobs

    def score_obs(self, params):
        """Per-observation gradients, ``(nobs, K p + 1)``; see
        ``plumestats._flip`` for the formulas."""
        state = self._state(params)[1]
        plume = state.clean[:, None] * state.terms.score_weights(self.gamma)
        theta = (plume[:, :, None] * self.exog[:, None, :]).reshape(self.nobs, -1)
        return np.column_stack([theta, state.noise - state.lam])

    def score(self, params):
        """Gradient of the log-likelihood, ``(K p + 1,)``."""
        problem, state = self._state(params)
        return flip_gradient(problem, params, state)

    def hessian(self, params):
        """Hessian of the log-likelihood, ``(K p + 1, K p + 1)``."""
        problem, state = self._state(params)
        return -flip_neg_hessian(problem, state)

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
        from ._prediction import flip_log_odds_and_jacobian

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
        tol: float = 1e-8,
        *,
        mstep: str = "newton",
        init: str = "kmeans",
        n_init: int = 1,
        random_state=None,
        alpha: float = 0.0,
        em_tol: float = 1e-3,
        flip_start: float = 0.05,
        disp: bool = False,
        cov_type: str = "nonrobust",
        cov_kwds: dict | None = None,
        use_t: bool | None = None,
        reseat: int = 0,
        full_output: bool = True,
        retall: bool = False,
        progress: bool = False,
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
        maxiter, tol, mstep, init, n_init, random_state, alpha, em_tol, reseat
            As for :meth:`PolyhedralMixtureLogit.fit`. Each of the ``n_init``
            PLUME runs (and each of PLUME's re-seating moves; with
            ``start_params`` there are none) starts one label-flip run, and the
            best label-flip
            log-likelihood is kept (``mle_retvals["restarts_llf"]`` has them
            all); ``maxiter`` applies to each run of either. The L2 penalty
            ``alpha`` is on the hyperplanes' standardised slopes, not on the
            flip rate.
        flip_start : float, default 0.05
            Flip rate the EM starts from, in ``(0, 0.5)``.
        disp : bool
            Print a final message.
        cov_type, cov_kwds, use_t, full_output, retall
            As for :meth:`PolyhedralMixtureLogit.fit`; the sandwiches count
            ``flip_logit`` among the parameters.
        progress : bool, default False
            Show a progress bar on standard error, as for
            :meth:`PolyhedralMixtureLogit.fit`: PLUME's runs, then the
            label-flip runs started from them.

        Returns
        -------
        LabelFlipPolyhedralLogitResults
        """
        if kwargs:
            raise TypeError(f"fit got unexpected arguments: {sorted(kwargs)}")
        alpha, maxiter, n_init, reseat = check_fit_options(
            method=(method, ("em",)),
            mstep=mstep,
            init=init,
            cov_type=cov_type,
            alpha=alpha,
            maxiter=maxiter,
            n_init=n_init,
            reseat=reseat,
        )
        check_identified(self, alpha)
        self._check_memory(None)
        use_t = check_flag(use_t, "use_t", allow_none=True)
        full_output = check_flag(full_output, "full_output")
        flip_start = check_positive_float(flip_start, "flip_start")
        if not flip_start < 0.5:
            raise ValueError(
                f"flip_start must be below 0.5 (a flip rate of 0.5 makes the labels "
                f"pure noise), got {flip_start!r}"
            )
        reporter = FitProgress(check_progress(progress))
        options = EMOptions(
            maxiter=maxiter,
            tol=check_positive_float(tol, "tol"),
            em_tol=check_positive_float(em_tol, "em_tol"),
            retall=check_flag(retall, "retall"),
            callback=reporter.callback(),
        )
        reseats: list = []
        if start_params is None:
            # each PLUME run is the start of one label-flip run: the flips can
            # move the faces to another local maximum, so the restarts are
            # compared on the label-flip likelihood, not on PLUME's
            problem, scaling, plume_runs, reseats = _fitting.em_runs(
                self,
                start_params=None,
                options=options,
                mstep=mstep,
                init=init,
                n_init=n_init,
                random_state=random_state,
                alpha=alpha,
                reseat=reseat,
                progress=reporter,
            )
            eta_start = float(logit(2.0 * flip_start))
            starts = [
                np.append(run.params, eta_start) for run in [*plume_runs, *reseats]
            ]
        else:
            start = self._check_params(float_vector(start_params, "start_params"))
            if not np.all(np.isfinite(start)):
                raise ValueError(
                    f"start_params must be finite; {int(np.sum(~np.isfinite(start)))}"
                    " values are infinite"
                )
            problem, scaling = _fitting.build_problem(self, alpha)
            theta = scaling.to_internal(start[:-1].reshape(self.k, -1)).ravel()
            starts = [np.append(theta, start[-1])]
            reporter.start(0, problem)
        runs = _flip_runs(problem, starts, options, mstep, reporter)
        # the runs from PLUME's re-seating moves come last
        restarts = runs[: len(runs) - len(reseats)]
        trace = max(runs, key=lambda run: run.objective)
        order = _fitting.canonical_permutation(problem, trace.params[:-1])
        faces = _fitting.user_weights(self.k, order)
        internal = np.append(faces(trace.params[:-1]), trace.params[-1])
        cov, singular, max_abs_score = _covariance(
            problem, scaling, internal, trace.boundary
        )
        params = np.append(
            scaling.to_user(internal[:-1].reshape(self.k, -1)).ravel(), internal[-1]
        )
        retvals = {
            "converged": trace.converged,
            "iterations": len(trace.steps),
            "message": trace.message,
            "llf_history": np.asarray(trace.llf_history),
            "steps": list(trace.steps),
            "n_em_steps": trace.n_em,
            "n_newton_steps": trace.n_newton,
            "max_abs_score": max_abs_score,
            "boundary": trace.boundary,
            "separation": trace.diverged,
            "restarts_llf": np.array([run.objective for run in restarts]),
            "restarts_converged": np.array([run.converged for run in restarts]),
            "reseat_llf": np.array([run.objective for run in runs[len(restarts) :]]),
            "information_singular": singular,
        }
        if trace.path is not None:
            retvals["allvecs"] = trace.path
        user_faces = _fitting.user_weights(self.k, order, scaling)
        _fitting.finish_retvals(
            retvals,
            lambda vector: np.append(user_faces(vector[:-1]), vector[-1]),
            full_output,
        )
        settings = {
            "optimizer": f"EM ({mstep} M-step), label flips",
            "method": "em",
            "mstep": mstep,
            "init": "start_params" if start_params is not None else init,
            "n_init": len(restarts),
            "alpha": alpha,
            "gating": self.gating,
            "maxiter": options.maxiter,
            "tol": tol,
            "em_tol": em_tol,
            "flip_start": flip_start,
            "chunksize": None,
            "reseat": reseat,
        }
        self._warn(trace, singular)
        mlefit = LikelihoodModelResults(
            self, params, normalized_cov_params=cov, scale=1.0
        )
        mlefit.mle_retvals = retvals
        mlefit.mle_settings = settings
        results = LabelFlipPolyhedralLogitResults(
            self, mlefit, cov_type=cov_type, cov_kwds=cov_kwds or {}, use_t=use_t
        )
        if disp:
            status = "converged" if trace.converged else "did not converge"
            print(
                f"Label-flip fit {status}: llf = {results.llf:.6f}, flip rate "
                f"{results.flip_rate:.4g}, {trace.n_em} EM and {trace.n_newton} "
                "Newton iterations"
            )
        return LabelFlipPolyhedralLogitResultsWrapper(results)

    @staticmethod
    def _warn(trace, singular) -> None:
        if trace.boundary:
            # held where the flip rate crossed the floor BOUNDARY_LAM / 2: a
            # Newton step may have carried it a little below
            held = expit(trace.params[-1]) / 2
            warnings.warn(
                "The estimated flip rate is at its boundary, 0 (held at "
                f"{held:.2g}, at most {BOUNDARY_LAM / 2:g}): the labels show no "
                "random flips, and the fit is PolyhedralMixtureLogit's. flip_logit "
                "has no standard error.",
                FlipRateBoundaryWarning,
                stacklevel=3,
            )
        if trace.diverged:
            warnings.warn(
                "The weights grow without bound: once the flip rate explains the "
                "wrong labels, the clean labels are separated by a polytope and "
                "the likelihood keeps rising towards hard faces (a maximum at "
                "infinity; standard errors mean nothing). Use an L2 penalty, e.g. "
                "fit(alpha=1e-4).",
                PerfectSeparationWarning,
                stacklevel=3,
            )
        elif not trace.converged:
            warnings.warn(
                f"The fit did not converge: {trace.message} after "
                f"{len(trace.steps)} iterations. Increase maxiter, or add a small "
                "L2 penalty (alpha) if the weights keep growing.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if singular is not None and not trace.diverged:
            warn_singular_information(singular, stacklevel=3)


def _flip_runs(problem, starts, options, mstep, reporter) -> list:
    """One label-flip EM run from each start, counted on the fit's bar."""
    reporter.more_runs(len(starts), "label flips")
    runs = []
    for begin in starts:
        runs.append(run_flip_em(problem, begin, options, mstep))
        reporter.run_done(runs[-1])
    reporter.close()
    return runs


def _covariance(problem, scaling, internal: np.ndarray, boundary: bool):
    """Covariance of the user-unit parameters from the joint observed
    information in the engine's standardised coordinates (as for PLUME), the
    reason it is singular (or None), and the largest score at the estimate.

    At the boundary eps = 0, ``flip_logit`` has no interior maximum: the faces'
    covariance is then PLUME's given eps = 0, and ``flip_logit``'s is NaN.
    """
    state = flip_state(problem, internal)
    neg_hess = flip_neg_hessian(problem, state)
    grad = flip_gradient(problem, internal, state)
    size = internal.size - 1
    if boundary:
        neg_hess[size, :size] = neg_hess[:size, size] = 0.0
        neg_hess[size, size] = 1.0
        grad = grad[:size]
    cov_internal, singular = invert_information(neg_hess)
    jac = np.zeros((size + 1, size + 1))
    jac[:size, :size] = np.kron(np.eye(problem.k), scaling.jacobian_to_user())
    jac[size, size] = 1.0
    cov = jac @ cov_internal @ jac.T
    if boundary:
        cov[size, :] = cov[:, size] = np.nan
    return cov, singular, float(np.max(np.abs(grad)))


class _UserProblem:
    """What ``plumestats._flip`` needs of a problem, on the model's own
    (user-unit, unpenalised) design: the model's likelihood methods share the
    engine's formulas."""

    def __init__(self, model: LabelFlipPolyhedralLogit):
        self._model = model
        self.exog = model.exog
        self.gamma = model.gamma
        self.nobs = model.nobs
        self.ridge = np.zeros(model.nparams - 1)

    def terms(self, theta: np.ndarray) -> Terms:
        model = self._model
        scores = linear_scores(theta, model.exog, model.k)
        return compute_terms(scores, model._y_inside, self.gamma)

    def penalty(self, theta: np.ndarray) -> float:
        return 0.0


class LabelFlipPolyhedralLogitResults(PolyhedralMixtureLogitResults):
    """Results of :class:`LabelFlipPolyhedralLogit`: PLUME's, plus the flip
    rate (``flip_rate``, ``flip_rate_bse``, ``flip_rate_conf_int()``).

    Marginal effects (:meth:`get_margeff`) are those of the observed label's
    probability, the flip rate's uncertainty included. What is defined for
    PLUME's likelihood only (the Rademacher bound, the bootstrap, the fit
    diagnostics, responsibilities) raises ``NotImplementedError``.
    """

    def cov_params(
        self, r_matrix=None, column=None, scale=None, cov_p=None, other=None
    ):
        """statsmodels' ``cov_params``. With the flip rate at its boundary
        (``flip_logit``'s variance NaN), a linear combination that leaves
        ``flip_logit`` out is PLUME's, not NaN: ``0 * NaN`` counts as 0 there,
        so ``t_test``, ``f_test`` and ``wald_test`` on the faces work."""
        if r_matrix is None or not self.mle_retvals.get("boundary"):
            return super().cov_params(
                r_matrix=r_matrix, column=column, scale=scale, cov_p=cov_p, other=other
            )
        if column is not None:
            raise ValueError("Column should be specified without other arguments.")
        cov = super().cov_params(scale=scale) if cov_p is None else np.asarray(cov_p)
        one_row = np.ndim(r_matrix) == 1  # statsmodels returns a scalar then
        r_matrix = np.atleast_2d(r_matrix)
        other = r_matrix if other is None else np.atleast_2d(other)
        out = nan_dot(r_matrix, nan_dot(cov, other.T))
        return out[0, 0] if one_row and out.shape == (1, 1) else out

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
        """Wald interval of ``flip_logit`` mapped to the flip rate (it stays
        inside ``(0, 0.5)``, unlike the delta-method one)."""
        alpha = check_alpha(alpha)
        eta = float(np.asarray(self.params)[-1])
        half = stats.norm.isf(alpha / 2.0) * float(np.asarray(self.bse)[-1])
        return float(expit(eta - half) / 2.0), float(expit(eta + half) / 2.0)

    @cache_readonly
    def llr_pvalue(self) -> float:
        """Chi-squared p-value of ``llr`` against the intercept-only logit, on
        ``df_model + 1`` degrees of freedom (the null has no flip rate either);
        as indicative as PLUME's for K > 1, and the flip rate's null value 0 is
        on the boundary."""
        return float(stats.chi2.sf(self.llr, self.df_model + self.model.k_extra))

    def _plume_only(self, *args, **kwargs):
        raise NotImplementedError(
            "not available for LabelFlipPolyhedralLogit: it is defined for "
            "PolyhedralMixtureLogit's likelihood"
        )

    rademacher_bound = bootstrap = responsibilities = _plume_only
    face_shares = _plume_only

    @property
    def diagnostics(self):
        self._plume_only()

    def summary(self, yname=None, xname=None, title=None, alpha: float = 0.05):
        """Summary tables: the header, one block per hyperplane, the flip rate."""
        from ._summary import build_summary

        alpha = check_alpha(alpha)
        return build_summary(self, yname=yname, xname=xname, title=title, alpha=alpha)


class LabelFlipPolyhedralLogitResultsWrapper(PolyhedralMixtureLogitResultsWrapper):
    pass


wrap.populate_wrapper(
    LabelFlipPolyhedralLogitResultsWrapper, LabelFlipPolyhedralLogitResults
)
