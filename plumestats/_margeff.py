r"""Marginal effects of PLUME on P(y = 1 | x), with delta-method standard errors.

Notation (one observation): scores :math:`a_k = w_k' x`, gate
:math:`g = \operatorname{softmax}(-\gamma a)`, :math:`c = +1` when the class coded
1 is inside the polyhedron and :math:`c = -1` when it is outside, experts
:math:`e_k = \sigma(c a_k)`, :math:`h_k = \sigma(a_k)\sigma(-a_k)` and

.. math::

    P = \sum_k g_k e_k .

Differentiating the gate, :math:`\partial g_k / \partial a_j = -\gamma g_k
(\delta_{kj} - g_j)`, gives

.. math::

    D_j = \frac{\partial P}{\partial a_j} = g_j\,[c h_j - \gamma (e_j - P)],
    \qquad
    \frac{\partial P}{\partial x} = \sum_j D_j w_j ,

and, with :math:`h_j' = h_j (1 - 2\sigma(a_j))`,

.. math::

    H_{jl} = \frac{\partial^2 P}{\partial a_j \partial a_l}
    = \delta_{jl}\,[c g_j h_j (1 - 2\sigma(a_j) - \gamma) - \gamma D_j]
      + \gamma (D_j g_l + g_j D_l).

The Jacobian of the effect :math:`m = \sum_j D_j w_j` with respect to
hyperplane :math:`l`'s weights is
:math:`\partial m_r / \partial w_{lq} = \delta_{rq} D_l + \sum_j w_{jr} H_{jl} x_q`.
The hard model, :math:`P = \sigma(c \min_k a_k)`, is the same algebra with a
one-hot gate on the arg-min and :math:`\gamma = 0` (the owner does not change
under a small perturbation, away from ties).

With label flips (``LabelFlipPolyhedralLogit``, :math:`\lambda = \sigma(\eta)
= 2\varepsilon`) the observed label has :math:`P_o = \lambda / 2 + (1 - \lambda)
P`: its score derivatives are :math:`(1 - \lambda) D` and :math:`(1 - \lambda)
H`, so the algebra above holds with :math:`P_o` in the elasticities, and the
flip parameter adds one Jacobian column. With :math:`\partial P_o / \partial
\eta = \lambda (1 - \lambda)(1/2 - P)` and :math:`\partial m / \partial \eta
= -\lambda m`, the effect :math:`s_r m_r` (:math:`s` as below) has
:math:`\partial (s_r m_r) / \partial \eta = s_r m_r\,[-\lambda -
\mathbb{1}_{ey}\, (\partial P_o / \partial \eta) / P_o]`.

The presentation (``summary``, ``summary_frame``, ``conf_int``, ``pvalues``) is
statsmodels' own :class:`~statsmodels.discrete.discrete_margins.DiscreteMargins`.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy.special import expit
from statsmodels.discrete.discrete_margins import DiscreteMargins

from ._inference import check_alpha, fixed_params, identified_parts
from ._likelihood import face_products, linear_scores
from ._validation import require_estimation_data
from ._weights import as_numpy_weights

__all__ = ["PolyhedralMargins", "prediction_derivatives"]

AT_CHOICES = ("overall", "mean", "median", "zero", "all")
METHOD_CHOICES = ("dydx", "eyex", "dyex", "eydx")


def prediction_derivatives(
    params: np.ndarray, exog: np.ndarray, spec, second: bool = True
):
    """P(y = 1 | x) and its first (and second) derivatives in the scores.

    Parameters
    ----------
    params : ndarray, shape (K p,)
        Hyperplane-major weights.
    exog : ndarray, shape (n, p)
        Design rows.
    spec : ModelSpec
        K, the gate and the sign of the inside class
        (:class:`~plumestats._spec.ModelSpec`).
    second : bool
        Also return the ``(n, K, K)`` second derivatives.

    Returns
    -------
    prob : ndarray, shape (n,)
        P(y = 1 | x).
    first : ndarray, shape (n, K)
        ``D[n, j] = dP_n / da_nj``.
    second : ndarray, shape (n, K, K) or None
        ``H[n, j, l] = d2 P_n / da_nj da_nl``.
    """
    k, sign = spec.k, spec.sign
    scores = linear_scores(params, exog, k)
    gate = spec.gate.probabilities(scores)
    prob = spec.gate.mean(scores, sign)
    # a hard gate has no gate terms in the derivatives
    gamma = 0.0 if spec.hard else spec.gate.gamma
    expert = expit(sign * scores)
    curvature = expit(scores) * expit(-scores)
    first = gate * (sign * curvature - gamma * (expert - prob[:, None]))
    if not second:
        return prob, first, None
    diag = sign * gate * curvature * (1.0 - 2.0 * expit(scores) - gamma)
    diag -= gamma * first
    hess = gamma * (first[:, :, None] * gate[:, None, :])
    hess += np.swapaxes(hess, 1, 2)
    idx = np.arange(k)
    hess[:, idx, idx] += diag
    return prob, first, hess


class _Derivatives:
    """Effects of one design on P(y = 1 | x) and their parameter Jacobian
    (the observed label's P with label flips, whose Jacobian gains a column)."""

    def __init__(self, model, params: np.ndarray):
        self.k = model.k
        self.spec = model.spec
        params = np.asarray(params, dtype=float)
        # lambda = 2 eps for the label-flip model (params end with flip_logit)
        self.flip = expit(params[-1]) if model.k_extra else None
        self.params = params[: model.k * model.k_vars]
        self.weights = self.params.reshape(self.k, -1)

    def _terms(self, exog, second=True):
        """Observed P, d(observed P)/d(eta) (None without flips), and the
        score derivatives of the observed P."""
        prob, first, hess = prediction_derivatives(self.params, exog, self.spec, second)
        if self.flip is None:
            return prob, None, first, hess
        lam = self.flip
        dprob_deta = lam * (1.0 - lam) * (0.5 - prob)
        first = (1.0 - lam) * first
        hess = None if hess is None else (1.0 - lam) * hess
        return 0.5 * lam + (1.0 - lam) * prob, dprob_deta, first, hess

    def dprob_dparams(self, exog, method):
        """``dP/dparams`` per row, ``(n, K p [+ 1])``; divided by P for ``ey``
        methods."""
        prob, dprob_deta, first, _ = self._terms(exog, second=False)
        jac = face_products(first, exog)
        if dprob_deta is not None:
            jac = np.column_stack([jac, dprob_deta])
        return jac / prob[:, None] if "ey" in method else jac

    def predict(self, exog, method):
        prob = self._terms(exog, second=False)[0]
        return np.log(prob) if "ey" in method else prob

    def continuous(self, exog, method, average, share=None):
        """Effects ``(n, p)`` (or their mean) and the mean Jacobian ``(p, K p)``.

        The effect of observation ``n`` on column ``r`` is ``s_nr m_nr`` with
        ``s = x`` for ``ex`` methods and ``1 / P`` for ``ey`` methods; the
        Jacobian is formed already averaged over the rows (``O(n K p^2)`` work,
        ``O(n K p)`` memory), never per observation. The means weigh row ``n``
        by ``share[n]`` (summing to 1: ``f_n / sum f`` with frequency weights).
        """
        nobs, nvars = exog.shape
        share = np.full(nobs, 1.0 / nobs) if share is None else share
        prob, dprob_deta, first, hess = self._terms(exog)
        effects = first @ self.weights  # m[n, r] = sum_j D_nj w_jr
        scale = np.ones_like(effects)
        if "ex" in method:
            scale = scale * exog
        if "ey" in method:
            scale = scale / prob[:, None]
        # T[n, r, l] = sum_j w_jr H_njl, weighted by s_nr, contracted with x_nq
        weighted = scale[:, :, None] * np.einsum("jr,njl->nrl", self.weights, hess)
        if "ey" in method:
            # d(1/P)/dw_lq = -D_l x_q / P^2: the quotient rule's second term
            weighted -= (scale * effects / prob[:, None])[:, :, None] * first[:, None]
        jac = (weighted.reshape(nobs, -1).T @ (share[:, None] * exog)).reshape(
            nvars, self.k, nvars
        )
        own = (share[:, None] * scale).T @ first  # delta_rq * mean(s_nr D_nl)
        idx = np.arange(nvars)
        jac[idx, :, idx] += own
        jac = jac.reshape(nvars, -1)
        effects = scale * effects
        if dprob_deta is not None:
            rate = -self.flip - ("ey" in method) * dprob_deta / prob
            jac = np.column_stack([jac, share @ (effects * rate[:, None])])
        if average:
            effects = share @ effects
        return effects, jac


def _margeff_exog(model, exog, at, atexog, weights, constant):
    """The design at which the effects are evaluated (statsmodels' rules;
    with frequency ``weights`` the mean and median are the observations';
    ``constant`` marks the design's constant columns, 1 at ``at="zero"``).
    ``exog`` is the caller's own float copy of the design: a dict
    ``atexog`` sets its columns in place."""
    if atexog is not None:
        if isinstance(atexog, dict):
            names = list(model.exog_names)
            for key, value in atexog.items():
                if isinstance(key, str):
                    if key not in names:
                        raise ValueError(
                            f"atexog key {key!r} is not a column of the design; "
                            f"use one of {names} or a column index"
                        )
                    key = names.index(key)
                if not isinstance(key, (int, np.integer)) or not (
                    -len(names) <= key < len(names)
                ):
                    raise ValueError(
                        f"atexog keys must be column indices in [0, {len(names)}) "
                        f"or column names, got {key!r}"
                    )
                exog[:, key] = _finite(value, f"value of {names[key]!r}")
        else:
            atexog = _finite(atexog, "rows", model.exog_names)
            if atexog.shape[-1] != exog.shape[1] or atexog.ndim > 2:
                columns = ", ".join(map(str, model.exog_names))
                raise ValueError(
                    f"atexog must have {exog.shape[1]} columns like the design "
                    f"({columns}), got shape {atexog.shape}; "
                    "or pass a dict {column: value}"
                )
            exog = np.atleast_2d(atexog)
    if at == "mean":
        exog = np.average(exog, axis=0, weights=weights)[None, :]
    elif at == "median" and weights is None:
        exog = np.median(exog, axis=0, keepdims=True)
    elif at == "median":
        exog = np.array([_weighted_median(column, weights) for column in exog.T])[None]
    elif at == "zero":
        exog = np.where(constant, 1.0, 0.0)[None, :]
    return exog


def _finite(values, what: str, names=None) -> np.ndarray:
    """``atexog``'s ``values`` (one, or rows of the design's ``names``) as
    finite numbers, or a ``ValueError`` saying which are not (NaN read as
    overflowing scores, infinity gave NaN effects)."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"atexog's {what} must be numbers: {exc}") from exc
    finite = np.isfinite(array)
    if finite.all():
        return array
    if array.ndim == 0 or names is None or array.shape[-1] != len(names):
        where = f"got {values!r}" if array.ndim == 0 else "some are not"
    else:
        bad = ~finite.reshape(-1, len(names)).all(axis=0)
        where = "not in " + ", ".join(
            repr(n) for n, b in zip(names, bad, strict=True) if b
        )
    raise ValueError(
        f"atexog's {what} must be finite numbers (no NaN or infinity); {where}"
    )


def _frame_rows(results, frame) -> np.ndarray:
    """The design rows of a DataFrame (or Series) ``atexog``, as ``predict``
    reads it: by column name; new data through a formula model's formula,
    unless the frame holds the design's own columns."""
    if isinstance(frame, pd.DataFrame):
        # named before a formula turns a missing value into a dropped row
        numbers = frame.select_dtypes("number")
        _finite(numbers.to_numpy(dtype=float, na_value=np.nan), "rows", numbers.columns)
    names = getattr(frame, "columns", getattr(frame, "index", None))
    own_columns = set(map(str, names)) == set(results.model.exog_names)
    transform = hasattr(results.model, "formula") and not own_columns
    rows = results._transform_predict_exog(frame, transform=transform)
    rows = rows[0] if isinstance(rows, tuple) else rows  # (rows, row labels)
    return np.asarray(rows, dtype=float)


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The median of the values repeated ``weights`` times (the mean of the
    two middle ones when the weight splits exactly in half, as np.median)."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    half = cumulative[-1] / 2.0
    low = values[order][np.searchsorted(cumulative, half, side="left")]
    high = values[order][np.searchsorted(cumulative, half, side="right")]
    return 0.5 * (low + high)


def _discrete_columns(exog, effects_idx, kind):
    """Columns of 0/1 dummies or of non-negative counts (statsmodels' rules)."""
    whole = np.all(exog % 1.0 == 0, axis=0)
    dummy = whole & (exog.min(axis=0) == 0) & (exog.max(axis=0) == 1)
    if kind == "dummy":
        return np.flatnonzero(dummy & effects_idx)
    return np.flatnonzero(whole & ~dummy & np.all(exog >= 0, axis=0) & effects_idx)


def _table_view(margins):
    """A shallow copy of ``margins`` for statsmodels' tables, which read
    ``results.model``: its class's name, its names, ``exog`` (the constant
    column, by ``exog.var(0)``) and ``k_extra`` (parameters taken to be the
    last ``exog_names``, and dropped). The copy's model is a stand-in with
    ``k_extra = 0`` (the flip model's flip rate is not a column) and, for a
    Dask model, whose lazy design cannot answer ``var``, two rows with its
    constant columns. Neither the model nor ``margins`` changes: other
    threads may be using them."""
    model = margins.results.model
    exog = model.exog
    if not isinstance(exog, np.ndarray):
        constant = getattr(margins, "_constant", None)
        if constant is None:  # margins pickled before they kept it
            constant = np.asarray(exog).var(axis=0) == 0
        exog = np.vstack([np.zeros(constant.size), ~constant])
    table_model = type(type(model).__name__, (), {})()
    vars(table_model).update(
        endog_names=model.endog_names,
        exog_names=model.exog_names,
        exog=exog,
        k_extra=0,
    )
    view = copy.copy(margins)
    view.results = SimpleNamespace(model=table_model)
    return view


def _check_discrete_options(at: str, method: str, dummy, count) -> None:
    """Refuse ``dummy``/``count`` with the options they are not defined for,
    naming exactly the offending ones and what to use instead."""
    discrete = " and ".join(
        name for name, on in (("dummy=True", dummy), ("count=True", count)) if on
    )
    problems, fixes = [], []
    if method in ("dyex", "eyex"):  # d/d log x has no 0 -> 1 counterpart
        problems.append(f"method={method!r}")
        fixes.append("method='dydx' or 'eydx'")
    if at in ("median", "zero"):
        problems.append(f"at={at!r}")
        fixes.append("at='overall', 'mean' or 'all'")
    if discrete and problems:
        raise ValueError(
            f"{discrete} (a difference of predictions) is not supported with "
            f"{' and '.join(problems)}; use {' and '.join(fixes)}, or drop "
            f"{discrete}"
        )


class PolyhedralMargins(DiscreteMargins):
    """Marginal effects of a PLUME fit on P(y = 1 | x).

    Mirrors statsmodels' ``DiscreteMargins`` (``margeff``, ``margeff_se``,
    ``margeff_cov``, ``tvalues``, ``pvalues``, ``conf_int``, ``summary_frame``,
    ``summary``); see
    :meth:`PolyhedralMixtureLogitResults.get_margeff <plumestats.results.\
PolyhedralMixtureLogitResults.get_margeff>` for the options.
    """

    def get_margeff(self, at, method, atexog, dummy, count):
        """Compute the effects (called by ``__init__``, as statsmodels does); the
        options are those of ``PolyhedralMixtureLogitResults.get_margeff``."""
        self._reset()
        if not isinstance(at, str) or at.lower() not in AT_CHOICES:
            raise ValueError(f"at must be one of {list(AT_CHOICES)}, got {at!r}")
        if not isinstance(method, str) or method.lower() not in METHOD_CHOICES:
            raise ValueError(
                f"method must be one of {list(METHOD_CHOICES)}, got {method!r}"
            )
        at, method = at.lower(), method.lower()
        _check_discrete_options(at, method, dummy, count)
        self.margeff_options = {"method": method, "at": at}
        results = self.results
        model = results.model
        require_estimation_data(model, "marginal effects need", "refit the model")
        params = np.asarray(results.params, dtype=float)
        # the design in memory (a Dask model's too: the effects read its rows)
        design = np.array(model.exog, dtype=float)
        effects_idx = design.var(axis=0) != 0  # constants get no effect
        self._constant = ~effects_idx  # (the summary tables read it)
        dummy_idx = _discrete_columns(design, effects_idx, "dummy") if dummy else []
        count_idx = _discrete_columns(design, effects_idx, "count") if count else []
        self.dummy_idx = np.asarray(dummy_idx) if len(dummy_idx) else None
        self.count_idx = np.asarray(count_idx) if len(count_idx) else None
        # the sample's weights, unless atexog replaces its rows by new ones
        new_rows = atexog is not None and not isinstance(atexog, dict)
        weights = None if new_rows else as_numpy_weights(model.freq_weights)
        if isinstance(atexog, (pd.DataFrame, pd.Series)):
            atexog = _frame_rows(results, atexog)
        exog = _margeff_exog(model, design, at, atexog, weights, ~effects_idx)
        share = np.full(len(exog), 1.0 / len(exog))
        if weights is not None and at == "overall":
            share = weights / np.sum(weights)  # the average over the observations
        deriv = _Derivatives(model, params)
        effects, jac = deriv.continuous(exog, method, at != "all", share)
        for columns, shift in ((dummy_idx, None), (count_idx, 1.0)):
            for col in columns:
                self._discrete_effect(
                    deriv, exog, col, shift, method, effects, jac, share=share
                )
        if at == "all":
            self.margeff = effects[:, effects_idx]
            return
        cov, jac = identified_parts(results, jac)
        cov = jac @ cov @ jac.T
        self.margeff_cov = cov[effects_idx][:, effects_idx]
        self.margeff_se = np.sqrt(np.diag(self.margeff_cov))
        self.margeff = effects[effects_idx]
        # a column whose parameters an L1 fit set to 0 on every face: its
        # effect is 0 given the zeros, with no variance; NaN, as their bse
        faces = fixed_params(results)[: model.k * model.k_vars]
        zeroed = faces.reshape(model.k, model.k_vars).all(axis=0)
        self.margeff_se[zeroed[effects_idx]] = np.nan

    def conf_int(self, alpha: float = 0.05):
        return super().conf_int(check_alpha(alpha))

    def summary_frame(self, alpha: float = 0.05):
        return DiscreteMargins.summary_frame(_table_view(self), check_alpha(alpha))

    def summary(self, alpha: float = 0.05):
        return DiscreteMargins.summary(_table_view(self), check_alpha(alpha))

    conf_int.__doc__ = DiscreteMargins.conf_int.__doc__
    summary_frame.__doc__ = DiscreteMargins.summary_frame.__doc__
    summary.__doc__ = DiscreteMargins.summary.__doc__

    @staticmethod
    def _discrete_effect(deriv, exog, col, shift, method, effects, jac, *, share):
        """A dummy's change from 0 to 1, or a count's from x - 1 to x + 1 (halved),
        and its Jacobian, averaged with the rows' ``share``; ``effects`` and
        ``jac`` are updated in place."""
        low, high = exog.copy(), exog.copy()
        if shift is None:
            low[:, col], high[:, col], half = 0.0, 1.0, 1.0
        else:
            low[:, col] -= shift
            high[:, col] += shift
            half = 0.5
        change = half * (deriv.predict(high, method) - deriv.predict(low, method))
        if effects.ndim == 2:
            effects[:, col] = change
        else:
            effects[col] = share @ change
        dhigh = deriv.dprob_dparams(high, method)
        dlow = deriv.dprob_dparams(low, method)
        jac[col] = half * (share @ (dhigh - dlow))
