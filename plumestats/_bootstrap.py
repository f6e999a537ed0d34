"""Nonparametric bootstrap of a PLUME fit, with each replicate's experts aligned to
the original fit (label switching), and the expert alignment itself."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import linear_sum_assignment

from ._em import EMOptions
from ._inference import check_alpha
from ._parallel import check_progress, effective_n_jobs, progress_bar, run_seeded
from ._penalty import model_terms, with_terms
from ._validation import check_choice, seed_entropy, without_data

__all__ = [
    "BootstrapResults",
    "RefitSpec",
    "align_experts",
    "no_bootstrap_message",
    "resampled_weights",
    "run_bootstrap",
]


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
        information, a coefficient the resample leaves unidentified, an
        error); and whose experts had to be permuted to match the
        fit (label switching, among the successful ones: the replicate's run
        swapped faces, not merely the order the results list them in).
    random_state : int
        The seed used (drawn from a Generator; ``None`` is the fixed seed 0).
    """

    params: pd.DataFrame
    bse: pd.Series
    n_boot: int
    n_failed: int
    n_switched: int
    random_state: int | None = None
    failures: tuple = field(default=(), repr=False)
    # the fit's own estimates, the centre of the normal intervals
    estimate: pd.Series | None = field(default=None, repr=False)

    @property
    def failed_share(self) -> float:
        """Share of the replicates that failed."""
        return self.n_failed / self.n_boot

    @property
    def switched_share(self) -> float:
        """Share of the successful replicates whose experts were relabelled."""
        n_ok = self.n_boot - self.n_failed
        return self.n_switched / n_ok if n_ok else float("nan")

    def conf_int(self, alpha: float = 0.05, kind: str = "percentile") -> pd.DataFrame:
        """Bootstrap confidence intervals.

        Parameters
        ----------
        alpha : float, default 0.05
            ``1 - alpha`` intervals.
        kind : {"percentile", "normal"}
            ``"percentile"``: the ``alpha/2`` and ``1 - alpha/2`` quantiles of
            the replicates. ``"normal"``: the fit's estimate plus or minus
            ``z_{1 - alpha/2}`` bootstrap standard errors, which covered
            better at N = 500 with three faces, where the replicates' spread is
            skewed (docs/benchmarks/coverage.md, ``coverage_profile``).
        """
        alpha = check_alpha(alpha)
        check_choice(kind, "kind", ("percentile", "normal"))
        if kind == "normal":
            if self.estimate is None:
                raise ValueError(
                    "kind='normal' needs the fit's estimate; rerun bootstrap()"
                )
            half = stats.norm.ppf(1 - alpha / 2) * self.bse.to_numpy()
            centre = np.asarray(self.estimate, dtype=float)
            bounds = np.column_stack([centre - half, centre + half])
        else:
            quantiles = [alpha / 2, 1 - alpha / 2]
            bounds = np.quantile(self.params.to_numpy(), quantiles, axis=0).T
        return pd.DataFrame(bounds, index=self.params.columns, columns=[0, 1])

    def __str__(self) -> str:
        return (
            f"Nonparametric bootstrap: {self.n_boot} replicates, "
            f"{self.n_failed} failed ({100 * self.failed_share:.1f}%), "
            f"{self.n_switched} relabelled ({100 * self.switched_share:.1f}% of "
            "the successful ones)"
        )


@dataclass(frozen=True)
class RefitSpec:
    """What a worker needs to refit replicates: the model's class and
    settings and its data, not the model (whose formula data, pandas frames
    and cached results would be pickled with it), sent once per chunk of
    replicates."""

    model_class: type
    endog: np.ndarray
    exog: np.ndarray
    model_options: dict
    fit_options: dict
    start: np.ndarray
    # the rows' frequency weights (None: each row one observation)
    freq_weights: np.ndarray | None = None
    # the formula's terms, which the penalty and the starts measure by
    terms: tuple = ()
    # the coefficients a rank-deficient design leaves unidentified (None: none)
    unidentified: np.ndarray | None = None

    @classmethod
    def of(cls, results) -> RefitSpec:
        """The class, settings, data and estimate of a fit."""
        model, settings = results.model, results.mle_settings
        if settings.get("method") == "l1":
            raise ValueError(
                "the bootstrap refits by EM, without the L1 penalty: it is not "
                "available for an L1 fit (fit_regularized(method='l1'))"
            )
        return cls(
            model_class=type(model),
            endog=np.asarray(model.endog),
            exog=np.asarray(model.exog),
            model_options={
                "k": model.k,
                **({} if model.spec.hard else {"gamma": model.gamma}),
                "inside": model.spec.inside_code,
            },
            fit_options=_em_options(settings),
            start=np.asarray(results.params, dtype=float),
            freq_weights=(
                None
                if model.freq_weights is None
                else np.asarray(model.freq_weights, dtype=float)
            ),
            terms=model_terms(model),
            unidentified=results.mle_retvals.get("unidentified"),
        )


def _em_options(settings: dict) -> dict:
    """The EM options of the replicates' refits: the fit's own, or EM's
    defaults for a fit by one of statsmodels' optimisers (whose ``tol`` and
    ``maxiter`` are the optimiser's, and which records EM's options as
    ``None``)."""
    em = settings["method"] == "em"
    return {
        "alpha": settings["alpha"],
        "maxiter": settings["maxiter"] if em else EMOptions.maxiter,
        "mstep": settings["mstep"] or "newton",
        "tol": settings["tol"] if em else EMOptions.tol,
        "em_tol": settings["em_tol"] if em else EMOptions.em_tol,
        # (absent from results pickled before it existed: the default)
        "em_overrelax": settings.get("em_overrelax") or EMOptions.overrelax,
        "newton_finish": settings["newton_finish"] if em else True,
    }


def _refit(spec: RefitSpec, rows, weights=None):
    """One replicate: the model on resampled rows (or on every row, with
    resampled frequency weights), started from the fit. Its warnings are the
    replicate's own (a resample can make a column constant): none reaches
    the user, and the replicate's status decides whether it failed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        replicate = with_terms(
            spec.model_class(
                spec.endog[rows],
                spec.exog[rows],
                freq_weights=weights,
                **spec.model_options,
            ),
            spec.terms,
        )
        res = replicate.fit(start_params=spec.start, **spec.fit_options)
    return _in_start_order(res), _failures(res, spec.unidentified)


def _in_start_order(res) -> np.ndarray:
    """A replicate's estimates with its faces in the order of its start (the
    fit's): the results list the faces by decreasing gate mass, and a resample
    that only changes that order has switched no labels."""
    order = np.asarray(res.mle_retvals["face_order"])
    faces = np.asarray(res.params).reshape(order.size, -1)
    in_start_order = np.empty_like(faces)
    in_start_order[order] = faces
    return in_start_order.ravel()


def _failures(res, unidentified=None) -> list[str]:
    """Why a replicate's fit cannot count: no convergence, separation, a
    singular information, non-finite estimates, or a coefficient the
    resample leaves unidentified that the fit's design (``unidentified``)
    identifies (its estimate is then arbitrary: a level the resample lost).
    The fit's advisory diagnostics (an ill-conditioned information, a
    collapsed expert: a converged fit whose standard errors the bootstrap is
    there to check) do not count."""
    retvals = res.mle_retvals
    problems = []
    known = True if unidentified is None else ~np.asarray(unidentified, dtype=bool)
    if np.any(np.asarray(retvals.get("unidentified", False)) & known):
        problems.append("coefficients not identified by the resample")
    if not res.converged:
        problems.append("not converged")
    if retvals.get("separation"):
        problems.append("separation")
    if retvals.get("information_singular") is not None:
        problems.append("singular information")
    if not np.all(np.isfinite(np.asarray(res.params))):
        problems.append("non-finite estimates")
    return problems


def _one_replicate(spec: RefitSpec, seed: np.random.SeedSequence):
    rng = np.random.default_rng(seed)
    n_rows = spec.endog.shape[0]
    if spec.freq_weights is None:
        rows, weights = rng.integers(0, n_rows, n_rows), None
    else:
        # the observations are resampled, as from the rows repeated: each
        # row's new weight is how often its observations were drawn
        rows, weights = slice(None), resampled_weights(spec.freq_weights, rng)
    try:
        return _refit(spec, rows, weights)
    except (ValueError, np.linalg.LinAlgError) as exc:
        # a resample can lose a class or make a column constant
        return np.full(spec.start.size, np.nan), [f"{type(exc).__name__}: {exc}"]


def run_bootstrap(
    results,
    n_boot: int,
    random_state: int | np.random.Generator | None,
    n_jobs: int | None = 1,
    progress: bool = False,
) -> BootstrapResults:
    """Refit ``n_boot`` resamples of the data; see
    :meth:`PolyhedralMixtureLogitResults.bootstrap`."""
    n_workers = effective_n_jobs(n_jobs)
    enabled = check_progress(progress)
    model = results.model
    spec = RefitSpec.of(results)
    start = spec.start
    # one independent stream per replicate: the same seed gives the same
    # replicates whatever n_jobs is (and however they are chunked)
    entropy = seed_entropy(random_state)
    seeds = np.random.SeedSequence(entropy).spawn(n_boot)
    bar = progress_bar(n_boot, "bootstrap", enabled, unit="replicate")
    try:
        outcomes = run_seeded(_one_replicate, spec, seeds, n_workers, bar)
    finally:
        bar.close()
    weights = start.reshape(model.k, -1)
    exog = np.asarray(model.exog, dtype=float)
    rows = exog if spec.freq_weights is None else exog * spec.freq_weights[:, None]
    gram = rows.T @ exog / model.nobs
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
    if spec.unidentified is not None:  # arbitrary in every replicate: no spread
        draws.loc[:, np.asarray(spec.unidentified, dtype=bool)] = np.nan
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
        random_state=entropy,
        failures=tuple(failures),
        estimate=pd.Series(start, index=names),
    )


def resampled_weights(freq_weights: np.ndarray, rng) -> np.ndarray:
    """A resample of ``round(sum f)`` observations drawn with replacement
    from the rows repeated ``f_n`` times, as new frequency weights:
    ``Multinomial(round(sum f), f / sum f)``."""
    total = float(np.sum(freq_weights))
    units = max(round(total), 1)
    return rng.multinomial(units, freq_weights / total).astype(float)


def bootstrap_pvalues(params: np.ndarray, bse: np.ndarray) -> np.ndarray:
    """Two-sided normal p-values of ``params / bse``."""
    return 2 * stats.norm.sf(np.abs(params / bse))


def no_bootstrap_message(model) -> str:
    """Why results hold no bootstrap, and how to get one (a JSON export keeps
    none, and has no data to run one)."""
    if getattr(model, "exog", None) is None:
        exported = hasattr(model, "_without_data")  # a JSON export's model
        return (
            "these results hold no bootstrap"
            + (" (a JSON export keeps none)" if exported else "")
            + ", and running one refits the model on the estimation data, "
            f"{without_data(model)}: refit the model to bootstrap it"
        )
    return "no bootstrap has been run: call results.bootstrap(n_boot=...) first"
