"""PolyhedralMixtureLogit: the PLUME model on statsmodels' likelihood machinery."""

from __future__ import annotations

import numpy as np
from statsmodels.base.model import GenericLikelihoodModel, LikelihoodModel

from . import _dask, _fitting, _validation
from ._compat import cache_readonly
from ._data import (
    check_given,
    finish_arrays,
    observation_count,
    prepare_arrays,
    prepare_weights,
)
from ._design_checks import check_design
from ._diagnostics import warn_at_caller
from ._fit import auto_chunksize, check_fit_options, fit_model
from ._formula_data import model_from_formula
from ._l1 import fit_l1, regularized_method
from ._logit_methods import LogitMethods
from ._outcome import resolve_inside
from ._prediction import (
    deriv_mean_dparams,
    deriv_score_obs_dendog,
    log_odds_and_jacobian,
    predict_at,
)
from ._sharing import register_exportable
from ._spec import HardGate, ModelSpec, SoftGate
from ._validation import check_choice, check_gamma, check_int, check_params
from .results import (
    PolyhedralMixtureLogitResults,
    PolyhedralMixtureLogitResultsWrapper,
)

__all__ = [
    "PolyhedralMixtureLogit",
    "auto_chunksize",
    "check_fit_options",
]

PREDICT_WHICH = ("mean", "var", "decision", "gate", "expert", "linear")


class PolyhedralMixtureLogit(LogitMethods, GenericLikelihoodModel):
    r"""Polyhedral classification as a mixture of logistic experts (PLUME).

    .. math::

        P(y \mid x) = \sum_{k=1}^K g_k(x)\, \sigma(y\, w_k' x), \qquad
        g_k(x) = \frac{\exp(-\gamma\, w_k' x)}{\sum_j \exp(-\gamma\, w_j' x)},

    with :math:`y \in \{-1, +1\}` (the outcome coded 1 maps to +1). The gate reuses
    the experts' own hyperplanes: the hyperplane with the smallest score owns the
    point, so the class coded 1 is modelled as the inside of the polyhedron
    :math:`\{x : \min_k w_k' x \ge 0\}`. With ``k=1`` the model is logistic
    regression; as ``gamma`` grows it tends to the hard model
    :math:`\sigma(y \min_k w_k' x)`.

    Parameters
    ----------
    endog : array_like
        Binary outcome, coded 0/1, -1/+1 or boolean; 1 (or True) is the inside.
    exog : array_like
        ``(nobs, p)`` design. Include a constant column for the hyperplanes to have
        intercepts (formulas add one by default).
    k : int, default 2
        Number of hyperplanes (faces of the polyhedron). The model fits the K
        it is given, as a statsmodels model fits its specification; the
        default 2 is the smallest polyhedron, not a choice from the data.
        Choose K with :func:`~plumestats.api.select_k` (BIC, AIC or
        cross-validation; K = 1 is logistic regression). The scikit-learn
        estimator's default, ``PolyhedralClassifier(k="auto")``, does this by
        BIC over K = 1, 2, 3.
    gamma : float, default 1.0
        Sharpness of the gate, fixed (not estimated).
    missing : {"none", "drop", "raise"}
        statsmodels' handling of missing values.
    inside : int or label, default 1
        Which outcome forms the polyhedron: the code (1 or 0) or the original
        label. For some data the class coded 0 is the convex one; with
        ``inside=0`` the hyperplanes bound class 0, and ``predict`` still returns
        P(y = 1 | x).
    freq_weights : array_like, optional
        Frequency weights, one per row (GLM's ``freq_weights``): row ``n``
        stands for ``f_n`` identical observations, ``L = sum_n f_n l_n`` and
        ``nobs = sum_n f_n``, so integer weights give the fit on the rows
        repeated. Finite, ``>= 0``; a row of weight 0 is left out of the fit.

    Notes
    -----
    The parameter vector is hyperplane-major, ``[w_1, ..., w_K]``, each block
    ordered like the columns of ``exog``, with names ``h1:<column>``, ...

    References
    ----------
    K. Shah, P. S. Sastry and N. Manwani, "PLUME: Polyhedral Learning Using
    Mixture of Experts", arXiv preprint, 2019.

    Examples
    --------
    >>> import plumestats.api as ps
    >>> data, _ = ps.simulate_polyhedron(500, d=2, k=3, noise=0.05, random_state=1)
    >>> res = ps.plume("y ~ x1 + x2", data, k=3).fit()
    >>> res.params.shape
    (9,)
    """

    # the label-flip objective (LabelFlipPolyhedralLogit sets it)
    _flips = False
    # where the gamma -> inf limit of this model lives, for error messages
    _hard_variant: str | None = "HardPolyhedralLogit (ps.spla1)"
    # whether exog came with column names (a DataFrame or a formula): new
    # DataFrames are then matched to its columns by name (plumestats._newdata)
    _exog_named = False
    # how the parameter vector is laid out, for error messages
    _params_layout = "hyperplane-major"
    # a non-numeric outcome arrives from patsy as indicator columns, decoded here
    _formula_max_endog = None

    def __init__(
        self,
        endog,
        exog,
        k: int = 2,
        gamma: float = 1.0,
        missing: str = "none",
        inside=1,
        freq_weights=None,
        **kwargs,
    ):
        k = check_int(k, "k")
        gamma = self._check_gamma(gamma)
        check_choice(missing, "missing", ("none", "drop", "raise"))
        check_given(self, endog, exog, kwargs)
        self._exog_named = hasattr(exog, "columns")
        if _dask.is_dask_collection(endog) or _dask.is_dask_collection(exog):
            # the data stay on the Dask workers; see plumestats._dask
            y01, summary = _dask.read_collections(
                self, endog, exog, k, missing, freq_weights
            )
        else:
            endog, exog, outcome, n_given = prepare_arrays(
                endog, exog, k, missing, kwargs
            )
            weights = prepare_weights(freq_weights, exog, kwargs)
            super().__init__(endog, exog, missing=missing, **weights, **kwargs)
            y01, summary = finish_arrays(self, outcome, n_given, missing, kwargs)
        self._set_up(k, gamma, inside, y01, summary)

    def _set_up(self, k: int, gamma: float, inside, y01, summary) -> None:
        """What every model sets from its data, whatever holds them: the design
        checks (errors, and warnings naming the columns), the spec, the
        outcome coded for the inside class, the counts and the names."""
        n_rows, self.k_vars = (int(n) for n in self.exog.shape)
        self.rank, self._aliasing = check_design(summary, self.exog_names, n_rows)
        self.nobs = observation_count(self, n_rows)
        self.k, self.gamma, self.inside = k, gamma, inside
        self._inside_code = resolve_inside(inside, self.outcome_mapping)
        # +1 for the class inside the polyhedron, -1 outside
        sign = 1.0 if self._inside_code == 1 else -1.0
        self.spec = ModelSpec(k, self._gate(gamma), sign, flips=self._flips)
        self.endog = y01
        y_inside = 2.0 * y01
        y_inside -= 1.0  # in place in memory: one outcome-sized array, not three
        y_inside *= sign
        self._y_inside = y_inside
        self.nparams = self.spec.n_params(self.k_vars)
        self.k_extra = self.spec.n_extra
        # as statsmodels' discrete models: the identified parameters (a flip
        # rate too) less the intercept-only null's one, whatever the constant
        identified = k * self.rank + self.k_extra
        self.df_model = float(identified - 1)
        self.df_resid = float(self.nobs - identified)
        faces = [f"h{i + 1}:{name}" for i in range(k) for name in self.exog_names]
        self.data.param_names = faces + list(self._extra_names)
        self._init_keys.extend(["k", "gamma", "inside"])
        weighted = ["freq_weights"] if self.freq_weights is not None else []
        self._data_attr += ["_y_inside", *weighted]
        if _dask.is_dask_collection(self.exog):
            self._row_source = _dask.rows_of(self, summary)

    def _get_init_kwds(self):
        """statsmodels' keywords, ``inside`` coded 0/1 as ``endog`` is: then
        ``type(m)(m.endog, m.exog, **m._get_init_kwds())`` rebuilds ``m``."""
        return {**super()._get_init_kwds(), "inside": self._inside_code}

    # the names of the parameters beyond the faces' (the flip rate's logit)
    _extra_names: tuple = ()

    # a Dask-backed model's partitions (plumestats._dask.DaskRows)
    _row_source = None
    freq_weights = None  # one per row (None: each row is one observation)

    def initialize(self):
        # the generic one computes exog's rank to guess df_model: set in __init__
        LikelihoodModel.initialize(self)

    @classmethod
    def from_formula(cls, formula, data, subset=None, drop_cols=None, *args, **kwargs):
        """Create a model from a patsy formula and a DataFrame (statsmodels'
        ``from_formula``); ``missing`` defaults to ``"drop"`` as there.

        Names in the formula that are not columns of ``data`` (a threshold
        ``cut`` in ``I(x > cut)``, a function of yours) are looked up in the
        calling namespace, as with ``smf.logit``. ``eval_env`` chooses another
        one: ``-1`` an empty namespace, ``n >= 2`` the namespace ``n - 1``
        frames above the caller, or a patsy ``EvalEnvironment``. Formulas are
        Python: patsy evaluates every term as code, so only use formulas you
        would run as code.
        """
        return model_from_formula(
            super().from_formula, formula, data, subset, drop_cols, *args, **kwargs
        )

    def _check_gamma(self, gamma) -> float:
        """This model class's gamma, checked (the hard model's is inf)."""
        return check_gamma(gamma, hard=self._hard_variant)

    def _gate(self, gamma: float) -> SoftGate | HardGate:
        """The gate of this model class (the hard model's is SPLA1's)."""
        return SoftGate(gamma)

    @property
    def gating(self) -> str:
        """``"soft"`` (PLUME) or ``"hard"`` (SPLA1)."""
        return self.spec.gate.name

    @property
    def _hard(self) -> bool:
        return self.spec.hard

    # ------------------------------------------------------------------ maths
    def _check_params(self, params) -> np.ndarray:
        return check_params(self, params)

    def _user_rows(self, params):
        """The objective's per-row state at ``params`` on the design in the
        user's units (the statsmodels methods below read it)."""
        objective = self.spec.objective()
        design = self._user_design
        return objective, design, objective.rows(design, self._y_inside, params)

    @cache_readonly
    def _user_design(self):
        return _validation.estimation_design(self)

    def loglikeobs(self, params):
        r"""Observation log-likelihoods
        :math:`l_n = \log \sum_k g_k(x_n) \sigma(y_n w_k' x_n)`.

        A lazy Dask array for a model on Dask collections."""
        params = self._check_params(params)
        if self._row_source is not None:
            return _dask.loglikeobs(self, params)
        # a probability's log is <= 0; rounding in the gate can give +eps
        values = np.minimum(self._user_rows(params)[2].loglikeobs, 0.0)
        return values if self.freq_weights is None else values * self.freq_weights

    def loglike(self, params):
        """Log-likelihood ``L = sum_n l_n``."""
        if self._row_source is not None:
            return _dask.loglike(self, self._check_params(params))
        with np.errstate(over="ignore"):  # terms near -1e308 sum to -inf
            return float(self.loglikeobs(params).sum())

    def score_obs(self, params):
        r"""Per-observation gradients, ``(nobs, K p)``.

        :math:`\partial l_n / \partial w_k = [r_{nk} s_{nk} - \gamma (r_{nk} -
        g_{nk})]\, x_n`, with responsibilities :math:`r`, gate :math:`g` and
        :math:`s_{nk} = y_n \sigma(-y_n w_k' x_n)`, times the row's frequency
        weight (as GLM's). A lazy Dask array for a model on Dask collections.
        """
        params = self._check_params(params)
        if self._row_source is not None:
            return _dask.score_obs(self, params)
        objective, design, rows = self._user_rows(params)
        scores = objective.score_rows(design, rows)
        return (
            scores if self.freq_weights is None else scores * self.freq_weights[:, None]
        )

    def _log_odds_and_jacobian(self, params, exog, jacobian: bool = True):
        """``logit P(y = 1 | x)`` at ``exog`` and its gradient in ``params``
        (``plumestats._prediction``)."""
        return log_odds_and_jacobian(self, np.asarray(params), exog, jacobian)

    # statsmodels' influence measures' derivatives (plumestats._prediction)
    _deriv_score_obs_dendog = deriv_score_obs_dendog
    _deriv_mean_dparams = deriv_mean_dparams

    def score(self, params):
        """Gradient of the log-likelihood, ``(K p,)``."""
        return self._user_sums(params, "grad")

    def hessian(self, params):
        r"""Hessian of the log-likelihood, ``(K p, K p)``.

        Block :math:`(k, j)` is :math:`\sum_n M_{n,kj}\, x_n x_n'` with
        :math:`M_{n,kj} = \delta_{kj} r_k (e_k^2 - h_k) - r_k e_k r_j e_j -
        \gamma^2 (\delta_{kj} g_k - g_k g_j)`, :math:`e_k = s_k - \gamma`,
        :math:`h_k = \sigma(a_k)\sigma(-a_k)` (observation index dropped).
        """
        return self._user_sums(params, "hess")

    def _user_sums(self, params, key: str):
        """One of the objective's sums over the rows in the user's units (on
        Dask, from the partitions' sums in the engine's units)."""
        params = self._check_params(params)
        if self._row_source is not None:
            return _dask.user_sums(self, params, key)
        objective, design, rows = self._user_rows(params)
        need = frozenset({key})
        return objective.sums(design, rows, need, weights=self.freq_weights)[key]

    def information(self, params):
        """Observed information, minus the Hessian."""
        return -self.hessian(params)

    def predict(self, params, exog=None, which: str = "mean", **kwargs):
        """Predictions at ``params``.

        With Dask input (``exog`` a Dask collection, or the estimation sample of
        a model on Dask collections) the predictions are a lazy Dask array.
        ``exog`` is a design taken by position, as statsmodels' model-level
        ``predict`` takes it; the results' ``predict`` applies the formula, or
        matches a DataFrame to the model's columns by name.

        Parameters
        ----------
        params : array_like
            Hyperplane-major parameters.
        exog : array_like, optional
            Design rows (defaults to the estimation sample).
        which : {"mean", "var", "decision", "gate", "expert", "linear"}
            ``"mean"``: P(y = 1 | x); ``"var"``: the outcome's variance
            P (1 - P), as statsmodels' ``Logit``; ``"decision"``:
            ``min_k w_k' x`` (>= 0 inside the polyhedron); ``"gate"``: the K
            gate probabilities; ``"expert"``: the K experts' P(y = 1 | x, k);
            ``"linear"``: the K scores ``w_k' x`` (K = 1: one, as ``Logit``'s).
        """
        if kwargs:
            raise TypeError(f"predict got unexpected arguments: {sorted(kwargs)}")
        check_choice(which, "which", PREDICT_WHICH)
        return predict_at(self, params, exog, which)

    def _predict_settings(self, params, which) -> dict:
        return {"params": params, "spec": self.spec, "which": which}

    # ------------------------------------------------------------- estimation
    @property
    def start_params(self) -> np.ndarray:
        """Default start values (``init="kmeans"``, seed 0), in the user's units."""
        return _fitting.default_start(self)

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
        mstep: str = "newton",
        init: str = "kmeans",
        n_init: int = 1,
        random_state=None,
        alpha: float = 0.0,
        em_tol: float = 1e-3,
        em_overrelax: float = 1.0,
        newton_finish: bool = True,
        cov_type: str = "nonrobust",
        cov_kwds: dict | None = None,
        use_t: bool | None = None,
        chunksize: int | str | None = None,
        reseat: int | None = None,
        progress: bool = False,
        **kwargs,
    ):
        """Fit by EM with damped Newton M-steps, finished by Newton-Raphson on L.

        Parameters
        ----------
        start_params : array_like, optional
            Start values in the user's units (hyperplane-major). Overrides ``init``
            and ``n_init``.
        method : {"em", "newton", "bfgs", "lbfgs", "ncg", "cg", "nm", "powell"}
            ``"em"`` (default) runs the EM engine. The others run statsmodels' own
            optimiser of that name directly on the observed log-likelihood, with
            the analytic score and Hessian, from the ``init`` start (no penalty).
            Their stop is checked: at a saddle, short of the maximum, or after
            statsmodels' undamped ``"newton"`` met a singular Hessian, the fit
            is not converged and a ``ConvergenceWarning`` says why.
        maxiter : int, default 500
            Most iterations, EM and Newton steps together (0: results at the start).
        tol : float, default 1e-8
            Convergence: a full Newton step on L, at a point where minus the
            Hessian is positive definite, whose largest component (standardised
            coordinates) is below ``tol``. A small change in L alone never counts.
        mstep : {"newton", "gradient", "bfgs"}
            M-step solver on the EM surrogate Q: a Levenberg-Marquardt damped
            Newton step, gradient ascent, or a BFGS quasi-Newton step; each with
            Armijo backtracking, so each EM iteration raises L.
        init : {"kmeans", "directions", "logit", "random", "mixed"}
            Start values when ``start_params`` is not given: k-means of the
            outside class (one cluster, hence one face, each; see ``_start``),
            the same clustering by direction from the inside class's mean, a
            perturbed logistic fit, or standard normal weights on the
            standardised features; ``"mixed"`` cycles the restarts through
            ``"kmeans"``, ``"directions"`` and ``"logit"`` (k-means did as well
            as the others: docs/benchmarks/learned.md, "Restart strategies"; a
            second kind of start is a check on a fit with many faces).
        n_init : int, default 1
            Number of EM runs from different starts; the best objective is kept
            and every run's final value is in ``mle_retvals["restarts_llf"]``.
        reseat : int, optional
            Up to this many *re-seating moves* after the restarts (K > 1;
            default 3 with ``method="em"``, 0 with ``start_params``). A move
            takes the best fit so far, drops the face owning the fewest outside
            points, fits a new face to the inside class against the outside
            points the fit calls inside, and reruns EM; it is kept only if it
            raises the objective, and the moves stop at the first that does
            not: a way out of an idle face (owning none of the outside class)
            while the outside points beyond another side are missed. Each
            costs one EM run (``mle_retvals["reseat_llf"]``). With them
            (0 < alpha < 1) comes a *penalty-path move*: EM at alpha 1 from
            the first start, then at alpha, kept if higher (``"path_llf"``);
            on heart and pima at K = 2 and 3 they reach the best-known maximum
            in 120 of 120 fits (docs: benchmarks/maxima). A higher maximum can
            predict held-out data worse (docs: benchmarks/learned): choose K and
            alpha for prediction, or pass ``reseat=0``. The idle face and missed
            points are read on the starts' rows (at most 5000), so fits by
            blocks and on Dask make the same moves.
        random_state : int, numpy Generator or None
            Seed for the starts. ``None`` uses a fixed seed, so fits are
            reproducible by default.
        alpha : float, default 0
            L2 penalty on the slopes (not the intercepts) of the standardised
            features, per observation as in statsmodels: EM maximises
            ``L / N - alpha/2 * sum_k ||b_k||^2``, a factor's levels by their
            correlation (reference-level free); finite on separable data.
        em_tol : float, default 1e-3
            Relative change of L where EM hands over to Newton (moves: 0.01 or more).
        em_overrelax : float, default 1
            Above 1 (try 2), the soft gate's EM steps are over-relaxed: each also
            tried ``eta`` times as long, ``eta`` growing by this factor (at most
            64) while L rises more. Faster; may end at another maximum.
        newton_finish : bool, default True
            Finish with Newton-Raphson on L. With ``False`` this is plain
            (generalised) EM, stopping on a small change of L and a small gradient.
        disp : bool, default False
            Print one line per iteration and a final message.
        callback : callable, optional
            Called as ``callback(params)`` after each iteration (user units; by
            EM, the current run's faces in its own order), as statsmodels' own.
        cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}
            Covariance of the parameters: the inverse observed information, or
            a sandwich of it around the outer product of the observation
            scores ``s_n``: ``"HC0"``; ``"HC1"``, HC0 times ``n / (n - K p)``;
            ``"HC2"`` and ``"HC3"``, each score divided by ``sqrt(1 - h_n)``
            and by ``1 - h_n``, with ``h_n`` the generalised leverage
            (``get_influence().hat_matrix_diag``; at ``k=1`` the glm hat
            value), as R's ``sandwich::vcovHC`` defines them (statsmodels'
            ``Logit`` returns HC0 for all four); or ``"cluster"``, the
            cluster-robust sandwich. Fits by row blocks offer ``"nonrobust"``,
            ``"HC0"`` and ``"HC1"``.
        cov_kwds : dict, optional
            Options of ``cov_type="cluster"``, as statsmodels': ``groups``
            (one label per observation, or two columns for two-way
            clustering), ``use_correction`` (default True: the small-sample
            factor ``G/(G-1) (N-1)/(N-P)``) and ``df_correction`` (default
            True: with ``use_t``, t and F inference on ``G - 1`` degrees of
            freedom).
        use_t : bool, optional
            Base inference (``pvalues``, ``conf_int``, ``t_test``, the
            summary) on the t and F distributions, with ``df_resid`` degrees
            of freedom, instead of the normal and chi-squared ones (default).
        chunksize : int or "auto", optional
            Take the engine's sums over blocks of this many rows (``"auto"``:
            blocks of about 32 MB), so that the fit's memory beyond the data is
            ``O(chunksize * p + slab * K^2 + (K p)^2)``, not a standardised
            copy of the design and ``(nobs, K)`` arrays at each point. Estimates
            equal to rounding. The results' sums over the data are taken by
            blocks too (``llf``, the ``HC0`` meat, the diagnostics, the
            Rademacher bound's row norm; ``pred_table`` on request); what is
            per observation by nature (``predict()``, ``loglikeobs``,
            ``score_obs``, ``responsibilities()``, ``get_margeff(at="all")``)
            is ``nobs`` long, computed when asked for. On Dask collections the
            blocks are the partitions (leave ``chunksize`` out; user guide: large data).
        full_output : bool, default True
            Keep the per-iteration records in ``mle_retvals``
            (``llf_history``, ``steps``, every restart's history). ``False``
            drops them, as statsmodels' ``full_output=False`` drops its
            optimiser's output; the rest of ``mle_retvals`` (convergence,
            counts, messages), which the results read, stays.
        retall : bool, default False
            Keep the parameters after every iteration, start included, in
            ``mle_retvals["allvecs"]`` (user units, experts in the final
            order), as statsmodels' ``retall``.
        progress : bool, default False
            Show a progress bar on standard error (``tqdm.auto``: a widget in
            Jupyter; plain lines if tqdm is not installed, ``pip install
            "plumestats[progress]"``): the EM runs of the ``n_init`` starts,
            with the current run's iteration and objective (and, for fits by
            row blocks or on Dask, the passes over the data) beside it.
        **kwargs
            Only with a statsmodels optimiser: passed on to it (e.g. ``gtol``).

        Returns
        -------
        PolyhedralMixtureLogitResults
            The results, wrapped so that pandas input gives pandas output.

        Notes
        -----
        Experts are returned in a canonical order: by decreasing share of the
        estimation sample that their gate owns (mean gate probability), so the
        same data gives the same table whatever the start.
        """
        return fit_model(
            self,
            start_params=start_params,
            method=method,
            maxiter=maxiter,
            tol=tol,
            mstep=mstep,
            init=init,
            n_init=n_init,
            random_state=random_state,
            alpha=alpha,
            em_tol=em_tol,
            em_overrelax=em_overrelax,
            newton_finish=newton_finish,
            disp=disp,
            callback=callback,
            cov_type=cov_type,
            cov_kwds=cov_kwds,
            use_t=use_t,
            chunksize=chunksize,
            reseat=reseat,
            full_output=full_output,
            retall=retall,
            progress=progress,
            **kwargs,
        )

    def _extra_settings(self) -> dict:
        """Settings a variant adds to ``mle_settings``."""
        return {}

    def _report_extras(self, params) -> str:
        """What ``fit(disp=True)``'s closing report adds for a variant."""
        return ""

    def _warn_fit_extras(self, retvals: dict, params) -> None:
        """Warnings a variant adds to the fit's (the flip rate at 0)."""

    def fit_regularized(self, alpha=0, method: str | None = None, **kwargs):
        r"""Penalised fit: ``"l1"`` (sparse faces) or ``"l2"``.

        Parameters
        ----------
        alpha : float or array_like, default 0
            ``"l1"``: a number for every slope (each face's constant gets 0),
            or ``nparams`` weights :math:`\alpha_j` in ``params`` order, used
            as given; minimises statsmodels' ``Logit.fit_regularized``
            objective :math:`-L(w)/N + \sum_j \alpha_j |w_j| / N` on the
            user's parameters, so :math:`w_j = 0` where
            :math:`|\partial L/\partial w_j| \le \alpha_j`; k=1: statsmodels'
            result for the same weights (its number weighs the constant too).
            ``"l2"``: a number; :meth:`fit` maximises :math:`L/N -
            \tfrac{\alpha}{2} \sum_k \|b_k\|^2` as there (terms measured whole).
        method : {"l1", "l2"}, optional
            Default: statsmodels' ``"l1"``; without it, a penalty needs ``"l2"``.
        **kwargs
            ``"l2"``: to :meth:`fit`. ``"l1"``: statsmodels' options (``maxiter``,
            ``trim_mode``, ``qc_tol``, ``acc`` ...), others to the EM start's
            :meth:`fit`. ``trimmed`` zeros get NaN SEs; df count ``nnz_params``.
        """
        if regularized_method(self, method, alpha, kwargs) == "l1":
            return warn_at_caller(fit_l1, self, alpha, **kwargs)
        return warn_at_caller(self.fit, alpha=alpha, **kwargs)

    # the results of a fit (a variant's own, for label flips)
    _results_class = PolyhedralMixtureLogitResults
    _results_wrapper = PolyhedralMixtureLogitResultsWrapper


register_exportable(
    PolyhedralMixtureLogit,
    PolyhedralMixtureLogitResults,
    PolyhedralMixtureLogitResultsWrapper,
)
