"""Is the optimum a regular interior maximum? Numbers that say whether ``bse`` means
anything, computed once from what a fit already holds."""

from __future__ import annotations

import sys
import warnings
from dataclasses import astuple, dataclass

import numpy as np
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

from ._em import KINK_STOP
from .sm_exceptions import LocalMaximaWarning

__all__ = [
    "FitDiagnostics",
    "caller_stacklevel",
    "compute_diagnostics",
    "restart_note",
    "warn_at_caller",
    "warn_diagnostics",
    "warn_if_restarts_disagree",
    "warn_if_unsettled",
]

# Condition number of the per-observation information (standardised features)
# above which a direction counts as flat. Regular fits in the test suite and the
# coverage study stay below about 1e5; fits at gamma = 1e-4 (a nearly uniform
# gate) reach 8e9 with valid, if large, standard errors. Above 1e10 the inverse
# is within a few hundred-fold of what the Cholesky factorisation refuses.
CONDITION_LIMIT = 1e10
# Newton decrement g' I^{-1} g above which the estimates are not at a stationary
# point: the remaining Newton step is up to sqrt(0.01) = 0.1 standard errors.
DECREMENT_LIMIT = 1e-2
# Starts whose final objectives are further apart than this (log-likelihood
# units) ended at different maxima that matter: a likelihood-ratio statistic
# of 2 units, beyond rounding and the flat ridges of a penalised fit.
RESTART_SPREAD_LIMIT = 1.0
# Two experts whose scores differ by less than this share of their size (root
# mean square on the sample) are one expert counted twice.
DUPLICATE_LIMIT = 1e-2
# A hard-gating fit stopped by the kink rule with a larger score (per
# observation, standardised) than this sits on a kink, not at a smooth maximum
KINK_SCORE = 1e-5

FLAG_TEXT = {
    "not_converged": "the optimiser did not converge",
    "separation": "the data are (quasi-)separated: the maximum is at infinity",
    "not_positive_definite": (
        "the observed information is not positive definite: a saddle, a ridge or "
        "a boundary, not an interior maximum"
    ),
    "ill_conditioned": (
        "the observed information is nearly singular (condition number above "
        f"{CONDITION_LIMIT:.0e}): a nearly flat direction"
    ),
    "not_stationary": (
        "the score is not zero at the estimates (Newton decrement above "
        f"{DECREMENT_LIMIT:g})"
    ),
    "collapsed_expert": (
        "an expert is collapsed: it owns fewer observations than it has "
        "parameters, or duplicates another expert"
    ),
    "on_kink": (
        "the hard gate's maximum sits on a kink (faces tie on some rows), where "
        "the observed information is one-sided: the standard errors depend on "
        "the side the fit ended on"
    ),
}


@dataclass(frozen=True, eq=False)
class FitDiagnostics:
    """Whether the optimum is a regular interior maximum.

    The information is taken per observation and in the standardised
    coordinates the engine works in (features centred and scaled; the same
    maximum), so that the numbers do not depend on the units of the features
    or on N.

    Attributes
    ----------
    condition_number : float
        Largest over smallest eigenvalue of the information (``inf`` when the
        smallest is not positive).
    min_eigenvalue : float
        Smallest eigenvalue of the information per observation, standardised
        coordinates. Zero or negative: no interior maximum.
    max_abs_score : float
        Largest absolute component of the score (gradient of the objective,
        penalty included) per observation, standardised coordinates.
    newton_decrement : float
        :math:`g' I^{-1} g` (total, not per observation): twice the rise of the
        log-likelihood a Newton step would still give; its square root bounds
        the distance to the maximum in standard errors.
    gate_mass : ndarray, shape (K,)
        Observations each expert owns, :math:`\\sum_n g_k(x_n)`.
    n_perfect : int
        Observations fitted with probability above ``1 - 1e-8``.
    flags : tuple of str
        Keys of :data:`FLAG_TEXT` that apply; empty for a regular maximum.
    """

    condition_number: float
    min_eigenvalue: float
    max_abs_score: float
    newton_decrement: float
    gate_mass: np.ndarray
    n_perfect: int
    flags: tuple[str, ...]

    def _key(self) -> tuple:
        return (*astuple(self)[:4], tuple(self.gate_mass), self.n_perfect, self.flags)

    # by value, gate_mass included (a generated __eq__ compared the array's
    # truth value, which raised)
    def __eq__(self, other) -> bool:
        if not isinstance(other, FitDiagnostics):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def interior(self) -> bool:
        """True when no flag is raised: ``bse`` can be taken at face value."""
        return not self.flags

    @property
    def messages(self) -> list[str]:
        """One sentence per flag."""
        return [FLAG_TEXT[flag] for flag in self.flags]

    def __str__(self) -> str:
        verdict = (
            "regular interior maximum" if self.interior else "; ".join(self.messages)
        )
        return (
            f"condition number {self.condition_number:.3g}, smallest eigenvalue "
            f"{self.min_eigenvalue:.3g}, largest |score| {self.max_abs_score:.3g}, "
            f"Newton decrement {self.newton_decrement:.3g}: {verdict}"
        )


def _duplicated(score_gram: np.ndarray) -> bool:
    """Whether two faces score the rows alike: ``sum_n (a_ni - a_nj)^2``
    below :data:`DUPLICATE_LIMIT` squared of the larger ``sum_n a_n^2``,
    from the Gram of the faces' scores (``G_ii + G_jj - 2 G_ij``)."""
    size = np.diagonal(score_gram)
    gap = size[:, None] + size[None, :] - 2.0 * score_gram
    scale = np.maximum(size[:, None], size[None, :])
    off = ~np.eye(len(size), dtype=bool)
    return bool(np.any(gap[off] < DUPLICATE_LIMIT**2 * scale[off]))


def compute_diagnostics(
    model,
    neg_hess_internal: np.ndarray,
    grad_internal: np.ndarray,
    retvals: dict,
    alpha: float,
    data_sums,
) -> FitDiagnostics:
    """Diagnostics of a fit from the information and score in the engine's
    standardised coordinates (penalty included) and the fit's ``retvals``.

    What they need from the data (perfectly fitted rows, gate mass, the Gram
    of the faces' scores) comes from the fit's one pass over the rows, ``data_sums``
    (:class:`plumestats._problem.DataSums`).
    """
    nobs = model.nobs
    info = neg_hess_internal / nobs
    finite = np.all(np.isfinite(info)) and np.all(np.isfinite(grad_internal))
    if finite:
        eigenvalues = np.linalg.eigvalsh(0.5 * (info + info.T))
        smallest, largest = float(eigenvalues[0]), float(eigenvalues[-1])
    else:
        smallest, largest = -np.inf, np.inf
    condition = largest / smallest if smallest > 0 else np.inf
    decrement = np.nan
    if smallest > 0 and np.isfinite(condition):
        try:
            step = np.linalg.solve(neg_hess_internal, grad_internal)
            decrement = float(grad_internal @ step)
        except np.linalg.LinAlgError:
            # an eigenvalue of 1e-300 is positive, but LU still finds the
            # matrix singular: no Newton decrement to report
            pass
    n_perfect, gate_mass = data_sums.n_perfect, data_sums.gate_mass
    # under a penalty, experts shrink together by design and the information
    # stays regular; only an unpenalised collapse leaves a flat direction
    collapsed = model.k > 1 and alpha == 0.0
    if collapsed:
        collapsed = bool(np.any(gate_mass < model.k_vars)) or _duplicated(
            data_sums.score_gram
        )
    flags = []
    if not retvals.get("converged", False):
        flags.append("not_converged")
    if retvals.get("separation"):
        flags.append("separation")
    if not smallest > 0 or retvals.get("information_singular") is not None:
        flags.append("not_positive_definite")
    elif condition > CONDITION_LIMIT:
        flags.append("ill_conditioned")
    # the hard model's maximum often sits on a kink (two faces tie), where the
    # score of the active pieces need not vanish
    kinked_gate = model.spec.gate.kinked and model.k > 1
    if decrement > DECREMENT_LIMIT and not model.spec.gate.kinked:
        flags.append("not_stationary")
    if collapsed:
        flags.append("collapsed_expert")
    # a refit from the estimate (1e-6 away) gave a standard error twice as
    # large: at a kink the Hessian weight of the owning face jumps. The kink
    # rule also stops runs at smooth maxima, whose score has vanished
    # (per observation at most 3e-7 in 64 simulated fits; 1e-3 to 0.5 on kinks)
    score = float(np.max(np.abs(grad_internal))) / nobs
    if kinked_gate and retvals.get("message") == KINK_STOP and score > KINK_SCORE:
        flags.append("on_kink")
    return FitDiagnostics(
        condition_number=float(condition),
        min_eigenvalue=smallest,
        max_abs_score=score,
        newton_decrement=decrement,
        gate_mass=np.asarray(gate_mass, dtype=float),
        n_perfect=n_perfect,
        flags=tuple(flags),
    )


def other_intervals(model, penalised: bool) -> str | None:
    """Where a fit whose standard errors are in doubt finds other intervals:
    the bootstrap; for label-flip fits, which do not offer it, the profile
    where it runs (unpenalised, smooth, in memory); else None."""
    if not model.spec.flips:
        return "results.bootstrap()"
    kinked = model.spec.gate.kinked and model.k > 1
    if penalised or kinked or model._row_source is not None:
        return None
    return "results.conf_int(method='profile')"


def warn_diagnostics(
    diagnostics: FitDiagnostics, model, penalised: bool, stacklevel: int
) -> None:
    """Warn about what the fit's own warnings (convergence, separation, singular
    information) have not already said."""
    warned = {"not_converged", "separation", "not_positive_definite"}
    if warned & set(diagnostics.flags):
        return
    # not_stationary alone is left to the summary: whether the optimiser
    # stopped is the engine's call, and it warns itself when it did not; so is
    # on_kink, where many hard-gating fits with several faces stop (38 of 64
    # simulated ones in a review): its note in the summary is enough
    quiet = ("not_stationary", "on_kink")
    new = [flag for flag in diagnostics.flags if flag not in quiet]
    if new:
        warnings.warn(
            "The optimum may not be a regular interior maximum: "
            + "; ".join(FLAG_TEXT[flag] for flag in new)
            + f" ({diagnostics}). Standard errors may be unreliable; try "
            + ("a smaller k" if model.k > 1 else "dropping nearly collinear columns")
            + _or_other_intervals(model, penalised, "an L2 penalty (alpha)"),
            HessianInversionWarning,
            stacklevel=stacklevel + 1,
        )


def _or_other_intervals(model, penalised: bool, penalty: str) -> str:
    """The end of the advice: the penalty, and other intervals if any."""
    other = other_intervals(model, penalised)
    return f", {penalty}." if other is None else f", {penalty}, or {other}."


def warn_if_unsettled(model, retvals, alpha, n_perfect: int) -> bool:
    """Convergence and separation warnings; returns whether separation was seen.

    Separation has one warning class on every path, statsmodels'
    ``PerfectSeparationWarning``, when the run found it
    (``retvals["separation"]``: diverging weights, or a direction to infinity
    along which only perfectly fitted rows move, at a converged fit or one
    stopped by ``maxiter``). Perfectly fitted rows alone (``n_perfect``) are
    no separation: a fit stopped short of its maximum, or at a singular one
    (collinear columns), has them too, and gets the warning of its own.
    """
    separated = bool(retvals.get("separation"))
    if separated:
        warnings.warn(
            _separation_message(model.nobs, n_perfect, alpha),
            PerfectSeparationWarning,
            stacklevel=caller_stacklevel(),
        )
    elif not retvals["converged"]:
        warnings.warn(
            f"The fit did not converge: {retvals['message']} after "
            f"{retvals['iterations']} iterations (largest |score| "
            f"{retvals['max_abs_score']:.3g}). "
            + retvals.get("remedy", _convergence_remedy(alpha, model.k)),
            ConvergenceWarning,
            stacklevel=caller_stacklevel(),
        )
    return separated


def restart_note(retvals: dict, k: int) -> str | None:
    """What to say when the starts ended at different maxima (``None``:
    they agreed, or there was one start)."""
    spread = retvals.get("restarts_spread", 0.0)
    if not spread > RESTART_SPREAD_LIMIT:
        return None
    n_starts = len(retvals["restarts_llf"])
    # the default fit makes re-seating moves already: then other kinds of start
    moved = len(retvals.get("reseat_llf", ())) > 0
    further = (
        'or other kinds of start, fit(init="mixed")'
        if moved
        else f"or re-seating moves, fit(reseat={k})"
    )
    return (
        f"The {n_starts} starts ended at different maxima, {spread:.3g} "
        "log-likelihood units apart: the best is reported, and a higher one "
        f"may exist. Try more starts, e.g. fit(n_init=20), {further}."
    )


def warn_if_restarts_disagree(retvals: dict, k: int) -> None:
    """One ``LocalMaximaWarning`` when the starts ended at different maxima."""
    note = restart_note(retvals, k)
    if note is not None:
        warnings.warn(note, LocalMaximaWarning, stacklevel=caller_stacklevel())


# a penalty per observation beyond this outweighs any log-likelihood gain of a
# slope (L / N is at most log 2 away from the null): every slope shrinks to 0
_OVERWHELMING_ALPHA = 1.0


def _convergence_remedy(alpha: float, k: int) -> str:
    """What to try after a fit that did not converge, given its penalty."""
    if alpha == 0:
        return (
            "Increase maxiter, or add a small L2 penalty (alpha) if the weights "
            "keep growing."
        )
    if alpha >= _OVERWHELMING_ALPHA and k > 1:
        return (
            f"alpha={alpha:g} shrinks every slope to about zero, so the {k} "
            "faces collapse onto their intercepts, which are not identified: "
            "use a smaller alpha (1e-4 to 1e-1 is the usual range) or k=1."
        )
    return "Increase maxiter."


def _separation_message(nobs: float, n_perfect: int, alpha: float) -> str:
    if n_perfect:
        seen = (
            f"{n_perfect} of {nobs:g} observations are fitted with probability "
            "> 1 - 1e-8 and the fit did not reach a regular maximum"
        )
    else:
        seen = "the weights grow without bound while the likelihood barely rises"
    remedy = (
        "Use an L2 penalty, e.g. fit(alpha=1e-3), or a smaller k."
        if alpha == 0
        else f"Use a larger L2 penalty than alpha={alpha:g}, or a smaller k."
    )
    return (
        f"Perfect or quasi-perfect separation: {seen}. The likelihood has no "
        "finite maximum, so the parameters are not identified and their "
        f"standard errors mean nothing. {remedy}"
    )


def caller_stacklevel() -> int:
    """The ``stacklevel`` of a warning issued by the calling function that
    points at the first frame outside plumestats (the user's line), past
    statsmodels' results wrapper too (``results.conf_int()`` calls through
    it)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _inside(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    return level


def _inside(module: str) -> bool:
    # statsmodels' results wrapper and its base model (from_formula builds
    # the model that warns about its design) stand between the user and us
    return module.startswith("plumestats") or module in _STATSMODELS_BETWEEN


_STATSMODELS_BETWEEN = frozenset({"statsmodels.base.wrapper", "statsmodels.base.model"})


def warn_at_caller(function, *args, **kwargs):
    """``function(*args, **kwargs)``, its warnings re-issued at the first line
    outside plumestats (some, statsmodels' among them, point one frame up)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    stacklevel = caller_stacklevel()
    for caught_warning in caught:
        warnings.warn(caught_warning.message, caught_warning.category, stacklevel)
    return result
