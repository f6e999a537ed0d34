r"""Profile-likelihood confidence intervals: ``conf_int(method="profile")``.

For each parameter :math:`\theta_j` the interval is the set of values ``b``
whose profile log-likelihood

.. math:: l_p(b) = \max_{\theta:\ \theta_j = b} L(\theta)

is within :math:`\tfrac12 \chi^2_1(1 - \alpha)` of the maximum: the values a
likelihood-ratio test at level :math:`\alpha` does not reject. That is what R's
``confint`` gives for a glm (MASS's profiling). Unlike a Wald interval it does
not assume the log-likelihood quadratic, so it follows a skewed or flat
likelihood, and it is the same whatever the parametrisation.

Each endpoint is a root of :math:`l_p(b) - (\hat L - \tfrac12 \chi^2_1)`,
bracketed by stepping out from the estimate in units of its standard error and
then found by Brent's method; each :math:`l_p(b)` is a damped Newton
maximisation over the other parameters (the engine's
:func:`~plumestats._msteps.ascent_step`, with the model's analytic score and
Hessian), started from the solution at the nearest ``b`` already profiled.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize, stats
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from ._diagnostics import caller_stacklevel
from ._fitting import build_problem
from ._msteps import ascent_step
from ._problem import user_jacobian
from ._threads import with_fit_blas_threads

__all__ = ["profile_intervals"]

# how far out (in Wald half-widths) an endpoint is looked for before the
# profile is called flat on that side (the endpoint is then infinite)
_MAX_WIDTHS = 2.0**12
_INNER_STEPS = 200
_INNER_TOL = 1e-10
# a maximisation out of steps warns if as many more steps at its last gain
# would raise the profile by this much (the cut-off is about 1.92)
_UNFINISHED_GAIN = 1e-4
_ROOT_XTOL = 1e-10
# a profile this much (relative) above the fit's log-likelihood found a
# better maximum: the fit is not the MLE, and its intervals would mislead
_BETTER = 1e-7
# the flip rate a boundary fit's profile also starts from: 0.018 (logit -4)
_FLIP_START_LOGIT = -4.0


@with_fit_blas_threads
def profile_intervals(results, alpha: float) -> np.ndarray:
    """Profile-likelihood intervals of every parameter.

    Parameters
    ----------
    results : PolyhedralMixtureLogitResults
        An unpenalised fit with a smooth gate and its data in memory. The
        intervals read the likelihood only: the fit's ``cov_type`` does not
        enter (its standard errors only set the first step of the search).
    alpha : float
        One minus the confidence level.

    Returns
    -------
    ndarray, shape (n_params, 2)
        Lower and upper endpoints; an infinite one where the profile stays
        above the cut-off (with a ``ConvergenceWarning``); NaN for a
        coefficient the design leaves unidentified (``mle_retvals
        ["unidentified"]``).
    """
    _check_profilable(results)
    model = results.model
    estimate = np.asarray(results.params, dtype=float)
    top = model.loglike(estimate)
    drop = 0.5 * stats.chi2.ppf(1.0 - alpha, 1)
    widths = stats.norm.ppf(1.0 - alpha / 2) * np.asarray(results.bse, dtype=float)
    # a coefficient a rank-deficient design leaves unidentified has a flat
    # profile: NaN, as its Wald interval and bootstrap (a search along it
    # reported arbitrary ends, or failed in Brent's method)
    unidentified = np.zeros(estimate.size, dtype=bool)
    unidentified |= results.mle_retvals.get("unidentified", False)
    intervals = np.full((estimate.size, 2), np.nan)
    maps = _to_user(model)
    boundary = results.mle_retvals.get("boundary", False)
    for j in np.flatnonzero(~unidentified):
        profile = _Profile(model, estimate, j, (top, drop), maps, boundary)
        width = widths[j] if np.isfinite(widths[j]) and widths[j] > 0 else 1.0
        for side, sign in enumerate((-1.0, 1.0)):
            intervals[j, side] = profile.endpoint(sign, width)
    return intervals


def _check_profilable(results) -> None:
    model = results.model
    problems = []
    if results.mle_settings.get("method") == "l1":
        problems.append(
            "the fit is L1-penalised (fit_regularized(method='l1')), and a "
            "profile of the unpenalised likelihood is not its interval"
        )
    if results.mle_settings.get("alpha", 0.0) != 0.0:
        problems.append(
            "the fit is penalised (alpha > 0), and a profile of the penalised "
            "objective is no likelihood-ratio interval; refit with alpha=0"
        )
    if model.spec.gate.kinked and model.k > 1:  # one face has no kinks: Logit
        problems.append(
            "the hard-gating likelihood has kinks where Newton's method cannot "
            "profile it; use method='wald' or method='bootstrap'"
        )
    if model.exog is None or model._row_source is not None:
        problems.append(
            "profiling refits the model many times in memory; it needs the "
            "estimation data as NumPy arrays (not removed, not on Dask)"
        )
    if results.mle_retvals.get("separation", False):
        problems.append(
            "the fit is separated (its maximum is at infinity), so the "
            "likelihood-ratio intervals are unbounded; fit with alpha > 0 and "
            "use method='wald' or method='bootstrap'"
        )
    if problems:
        raise ValueError(f"conf_int(method='profile'): {problems[0]}")


def _to_user(model) -> tuple[np.ndarray, np.ndarray]:
    """``J`` with user parameters ``= J @`` the engine's (standardised
    columns), the coordinates the profile's Newton steps take, and its
    inverse."""
    problem, scaling = build_problem(model, 0.0)
    n_extra = problem.objective.n_extra
    return (
        user_jacobian(scaling, model.k, n_extra),
        user_jacobian(scaling, model.k, n_extra, internal=True),
    )


class _Profile:
    """The profile of one parameter: ``l_p(b) - target`` and its roots.

    The other parameters are maximised in the engine's coordinates ``w``
    (standardised columns, ``user = J w``), where the likelihood is as well
    conditioned as the fit's; in the user's, a column far from 0 (x + 1000)
    or in other units than its neighbours (x * 1e4 beside z * 1e-4) made
    minus the Hessian numerically singular, and the maximisation stopped
    short without a word. Holding user parameter ``j`` at ``b`` is the linear
    constraint ``a'w = b`` (``a``: row ``j`` of ``J``), which fixes ``w_j``
    given the rest: ``w = e_j b / a_j + E v`` over the free ``v``.
    """

    def __init__(
        self, model, estimate: np.ndarray, index: int, cut, maps, boundary=False
    ):
        self.model = model
        self.estimate = estimate
        self.index = index
        top, drop = cut
        self.top, self.target = top, top - drop
        self.name = model.data.param_names[index]
        to_user, self.to_internal = maps
        row = to_user[index]
        eliminate = np.delete(np.eye(estimate.size), index, axis=1)
        eliminate[index] = -np.delete(row, index) / row[index]
        # user parameters = anchor * b + basis @ v
        self.anchor = to_user[:, index] / row[index]
        self.basis = to_user @ eliminate
        # the maximiser at every b profiled so far: warm starts for the next
        self.solved: dict[float, np.ndarray] = {float(estimate[index]): estimate}
        self._warned = False  # that a maximisation stopped short
        # a label-flip fit's rate held at its boundary, profiled over (its
        # logit is the last coordinate, unchanged by the standardisation)
        self.flip_at_boundary = bool(boundary) and index != estimate.size - 1

    def __call__(self, value: float) -> float:
        profiled = self.maximise(value)
        if not np.isfinite(profiled):
            raise ValueError(
                f"the profile log-likelihood of {self.name} is not finite at "
                f"{value:.6g}; use method='wald' or method='bootstrap'"
            )
        if profiled > self.top + _BETTER * (1.0 + abs(self.top)):
            raise ValueError(
                f"profiling {self.name} found a higher log-likelihood "
                f"({profiled:.10g}) than the fit's ({self.top:.10g}): the fit is "
                "not at the maximum. Refit (more starts, n_init) and profile that"
            )
        return profiled - self.target

    def endpoint(self, sign: float, width: float) -> float:
        """The root on one side: bracketed by doubling steps out, then Brent."""
        inner, step = float(self.estimate[self.index]), width
        while step <= _MAX_WIDTHS * width:
            outer = float(self.estimate[self.index]) + sign * step
            if self(outer) < 0.0:
                # to a share of the interval's scale: parameters of a column
                # in large units are tiny, and an absolute tolerance is not
                root = optimize.brentq(self, inner, outer, xtol=_ROOT_XTOL * width)
                return float(root)
            inner, step = outer, 2.0 * step
        warnings.warn(
            f"the profile log-likelihood of {self.name} stays above the cut-off "
            f"up to {sign * _MAX_WIDTHS * width:+.4g} from the estimate; that "
            "endpoint is reported as infinite",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
        return sign * np.inf

    def maximise(self, value: float) -> float:
        """``l_p(value)``: the log-likelihood maximised over the other
        parameters with parameter ``index`` held at ``value``."""
        # warm from the nearest solution between the estimate and value: one
        # beyond it (a bracket's far end, where the faces may have run off to
        # another branch of the profile) would carry that branch inwards
        centre = float(self.estimate[self.index])
        inward = [b for b in self.solved if (b - centre) * (value - b) >= 0.0]
        nearest = min(inward, key=lambda b: abs(b - value))
        free = np.delete(self.to_internal @ self.solved[nearest], self.index)
        free, loglike = self._climb(value, free)
        if self.flip_at_boundary:
            # a flip rate held at 0 has a score that underflows: Newton from
            # there keeps it at 0 where the profile rises with a free rate (an
            # upper end 5.71 where the profile's is 6.35), or runs it to the
            # other end; a second start from a small rate (_FLIP_START_LOGIT)
            # lets it move (twice a boundary fit's profile time)
            other = free.copy()
            other[-1] = _FLIP_START_LOGIT
            other, other_loglike = self._climb(value, other)
            if other_loglike > loglike:
                free, loglike = other, other_loglike
        if value != centre:
            # the estimate stays the start of both sides: a maximisation there
            # (Brent's method evaluates the bracket's inner end) can only drift
            # along flat directions, e.g. a flip rate held at its boundary run
            # further out to where its score underflows, which then held the
            # rate at 0 on the other side (an upper end 1.53 for 1.72)
            self.solved[float(value)] = self._user(value, free)
        return loglike

    def _climb(self, value: float, free: np.ndarray) -> tuple[np.ndarray, float]:
        """Damped Newton steps over the engine's free coordinates from
        ``free``, parameter ``index`` at ``value``: the maximiser and its
        log-likelihood."""
        memory: dict = {}
        loglike = self.model.loglike(self._user(value, free))
        for _ in range(_INNER_STEPS):  # Newton: a handful from a warm start
            params = self._user(value, free)
            grad = self.basis.T @ self.model.score(params)
            neg_hess = -self.basis.T @ self.model.hessian(params) @ self.basis
            found = ascent_step(
                lambda trial: self._evaluate(value, trial),
                free,
                grad,
                neg_hess,
                loglike,
                memory=memory,
            )
            if found is None:
                break  # no ascent left: the maximum, to rounding
            new_free, new_loglike, _, _ = found
            moved = np.max(np.abs(new_free - free))
            free = new_free
            gain, loglike = new_loglike - loglike, new_loglike
            if moved <= _INNER_TOL or gain <= _INNER_TOL**2:
                break
        else:
            # a crawl whose steps gain next to nothing leaves the profile
            # where it is for the root search (a slow ridge at K = 2 with a
            # column shifted by 1000: 3e-9 a step after 200 steps)
            if gain * _INNER_STEPS > _UNFINISHED_GAIN:
                self._stopped_short(value)
        return free, loglike

    def _stopped_short(self, value: float) -> None:
        """Warn (once per parameter) that a maximisation used all its steps
        still gaining: the profile there may be below its maximum, which
        moves the endpoint inwards (an interval too short)."""
        if self._warned:
            return
        self._warned = True
        warnings.warn(
            f"profiling {self.name}: the maximisation over the other parameters "
            f"at {value:.6g} stopped after {_INNER_STEPS} Newton steps without "
            "converging, so the interval may be too short; compare "
            "method='wald' or method='bootstrap'",
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )

    def _user(self, value: float, free: np.ndarray) -> np.ndarray:
        """The user's parameters with parameter ``index`` at ``value`` and the
        engine's other coordinates at ``free``."""
        return self.anchor * value + self.basis @ free

    def _evaluate(self, value: float, free: np.ndarray):
        """``(L, L)`` there (the line search's ``evaluate``, whose state is the
        value itself)."""
        loglike = self.model.loglike(self._user(value, free))
        return loglike, loglike
