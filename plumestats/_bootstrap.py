"""Nonparametric bootstrap of a PLUME fit, with each replicate's experts aligned to
the original fit (label switching), and the expert alignment itself."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import linear_sum_assignment
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
)

from ._inference import check_alpha
from ._progress import Progress

__all__ = ["BootstrapResults", "align_experts", "run_bootstrap"]

# the fit's own diagnostics; a replicate that raises one is counted as failed
_FIT_WARNINGS = (ConvergenceWarning, HessianInversionWarning, PerfectSeparationWarning)


def align_experts(
    reference: np.ndarray, candidate: np.ndarray, gram: np.ndarray
) -> np.ndarray:
    r"""The permutation of ``candidate``'s experts that best matches ``reference``.

    The cost of matching expert :math:`j` of the candidate to expert :math:`i` of
    the reference is the mean squared difference of their scores on the data,

    .. math::

        c_{ij} = \frac1N \sum_n (w_i' x_n - v_j' x_n)^2
               = (w_i - v_j)' G (w_i - v_j), \qquad G = X'X / N,

    minimised over permutations by the Hungarian algorithm
    (:func:`scipy.optimize.linear_sum_assignment`). Scores rather than raw
    coefficients make the match independent of the units of the features (a
    coefficient of a feature measured in grams would otherwise dominate), and
    unlike unit normals they keep the sharpness of a face, which is identified.

    Parameters
    ----------
    reference, candidate : ndarray, shape (K, p)
        Hyperplanes, one per row.
    gram : ndarray, shape (p, p)
        ``X'X / N`` of the design the scores are compared on.

    Returns
    -------
    ndarray of int, shape (K,)
        ``candidate[perm]`` is aligned with ``reference`` row by row.
    """
    diff = reference[:, None, :] - candidate[None, :, :]
    cost = np.einsum("ijp,pq,ijq->ij", diff, gram, diff)
    _, perm = linear_sum_assignment(cost)
    return perm


@dataclass(frozen=True)
class BootstrapResults:
    """Bootstrap replicates of the parameters, aligned to the original fit.

    Attributes
    ----------
    params : DataFrame, shape (n_ok, K p)
        The successful replicates' estimates, experts aligned to the fit.
    bse : Series
        Bootstrap standard errors (standard deviation of the replicates).
    n_boot, n_failed, n_switched : int
        Replicates drawn; that failed (no convergence, separation, a singular
        information, an error); and whose experts had to be permuted to match the
        fit (label switching, among the successful ones).
    random_state : int or None
        The seed used.
    """

    params: pd.DataFrame
    bse: pd.Series
    n_boot: int
    n_failed: int
    n_switched: int
    random_state: int | None = None
    failures: tuple = field(default=(), repr=False)

    @property
    def failed_share(self) -> float:
        """Share of the replicates that failed."""
        return self.n_failed / self.n_boot

    @property
    def switched_share(self) -> float:
        """Share of the successful replicates whose experts were relabelled."""
        n_ok = self.n_boot - self.n_failed
        return self.n_switched / n_ok if n_ok else float("nan")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Percentile intervals: the ``alpha/2`` and ``1 - alpha/2`` quantiles."""
        alpha = check_alpha(alpha)
        quantiles = np.quantile(
            self.params.to_numpy(), [alpha / 2, 1 - alpha / 2], axis=0
        )
        return pd.DataFrame(quantiles.T, index=self.params.columns, columns=[0, 1])

    def __str__(self) -> str:
        return (
            f"Nonparametric bootstrap: {self.n_boot} replicates, "
            f"{self.n_failed} failed ({100 * self.failed_share:.1f}%), "
            f"{self.n_switched} relabelled ({100 * self.switched_share:.1f}% of "
            "the successful ones)"
        )


def _refit(model, settings, start, rows):
    """One replicate: the model on resampled rows, started from the fit."""
    replicate = type(model)(
        model.endog[rows],
        model.exog[rows],
        k=model.k,
        **({} if model._hard else {"gamma": model.gamma}),
        inside=model._inside_code,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = replicate.fit(
            start_params=start,
            alpha=settings["alpha"],
            maxiter=settings["maxiter"],
            tol=settings["tol"],
            em_tol=settings["em_tol"],
            mstep=settings["mstep"] or "newton",
        )
    problems = [
        w.category.__name__ for w in caught if issubclass(w.category, _FIT_WARNINGS)
    ]
    if not res.converged:
        problems.append("not converged")
    params = np.asarray(res.params)
    if not np.all(np.isfinite(params)):
        problems.append("non-finite estimates")
    return params, problems


def _one_replicate(model, settings, start, seed):
    rows = np.random.default_rng(seed).integers(0, model.nobs, model.nobs)
    try:
        return _refit(model, settings, start, rows)
    except (ValueError, np.linalg.LinAlgError) as exc:
        # a resample can lose a class or make a column constant
        return np.full(start.size, np.nan), [f"{type(exc).__name__}: {exc}"]


def run_bootstrap(
    results,
    n_boot: int,
    random_state: int | None,
    n_jobs: int,
    progress: bool | None = None,
) -> BootstrapResults:
    """Refit ``n_boot`` resamples of the data; see
    :meth:`PolyhedralMixtureLogitResults.bootstrap`."""
    model = results.model
    settings = results.mle_settings
    start = np.asarray(results.params, dtype=float)
    # one independent stream per replicate: the same seed gives the same
    # replicates whatever n_jobs is
    seeds = np.random.SeedSequence(random_state).spawn(n_boot)
    reporter = Progress(n_boot, "bootstrap", enabled=progress)
    if n_jobs == 1:
        outcomes = []
        for seed in seeds:
            outcomes.append(_one_replicate(model, settings, start, seed))
            reporter.step()
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn, not fork: forking a process whose BLAS or other threads hold
        # a lock can deadlock the children
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=n_jobs, mp_context=context) as pool:
            outcomes = []
            for outcome in pool.map(
                _one_replicate,
                [model] * n_boot,
                [settings] * n_boot,
                [start] * n_boot,
                seeds,
            ):
                outcomes.append(outcome)
                reporter.step()
    weights = start.reshape(model.k, -1)
    gram = model.exog.T @ model.exog / model.nobs
    aligned, failures, n_switched = [], [], 0
    for params, problems in outcomes:
        if problems:
            failures.append(tuple(problems))
            continue
        perm = align_experts(weights, params.reshape(model.k, -1), gram)
        n_switched += int(np.any(perm != np.arange(model.k)))
        aligned.append(params.reshape(model.k, -1)[perm].ravel())
    names = list(results.model.data.param_names)
    draws = pd.DataFrame(np.reshape(aligned, (-1, start.size)), columns=names)
    if len(draws) < 2:
        raise ValueError(
            f"only {len(draws)} of {n_boot} bootstrap replicates succeeded "
            f"(first failure: {failures[0] if failures else 'none'}); the fit is "
            "not stable under resampling. Try a smaller k or an L2 penalty (alpha)."
        )
    return BootstrapResults(
        params=draws,
        bse=draws.std(ddof=1),
        n_boot=n_boot,
        n_failed=len(failures),
        n_switched=n_switched,
        random_state=random_state,
        failures=tuple(failures),
    )


def bootstrap_pvalues(params: np.ndarray, bse: np.ndarray) -> np.ndarray:
    """Two-sided normal p-values of ``params / bse``."""
    return 2 * stats.norm.sf(np.abs(params / bse))
