r"""The likelihood-ratio test of two fits, :func:`compare_lr_test`: the
chi-square reference (statsmodels' ``compare_lr_test``), the chi-bar-square
one for a flip rate at its boundary, and the parametric bootstrap for K
against more faces.

The chi-square reference of :math:`LR = 2(\ell_{full} - \ell_{restricted})` is
not valid when the null has fewer faces (the extra face is not identified
under it). The parametric bootstrap gives the test its size by simulation
instead (McLachlan, 1987, for the number of mixture components): draw
outcomes from the restricted fit, :math:`y^*_n \sim
\mathrm{Bernoulli}(\hat P(y = 1 \mid x_n))` at the observed :math:`x_n`, refit
both models to each draw with the restart policy of the original fits
(``init``, ``n_init``, ``reseat``, the penalty and tolerances), and refer the
observed statistic to the draws' statistics:

.. math:: p = \frac{1 + \#\{b : LR^*_b \ge LR\}}{1 + B}.

A draw is treated as the observed data were: its refits count as they end,
converged or not (a refit that stops for separation has a log-likelihood
near its supremum, as the observed fit would); those that did not converge
are counted (``n_unsettled``). Only a draw whose refit raises (e.g. a draw
with one class) is left out, and counted (``n_failed``). A draw whose larger
model ends below the smaller one (a worse local maximum; the larger model
nests the smaller) counts with statistic 0.

References
----------
G. J. McLachlan, "On bootstrapping the likelihood ratio test statistic for
the number of components in a normal mixture", Applied Statistics 36 (1987)
318-324.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from scipy import stats
from statsmodels.discrete.discrete_model import Logit
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from ._bootstrap import RefitSpec
from ._parallel import check_progress, effective_n_jobs, progress_bar, run_seeded
from ._penalty import with_terms
from ._validation import check_choice, check_int, seed_entropy
from .label_flip import LabelFlipPolyhedralLogit
from .model import PolyhedralMixtureLogit

__all__ = ["LRBootstrapResult", "LRTestResult", "compare_lr_test"]

# a larger model's log-likelihood this far (relative) below the smaller one's
# is rounding, not a worse maximum
_LLF_ROUNDING = 1e-8


class LRTestResult(NamedTuple):
    """Likelihood-ratio statistic, its chi-square p-value and degrees of freedom
    (unpacks like statsmodels' ``(lr_stat, p_value, df_diff)``)."""

    statistic: float
    pvalue: float
    df: int


def compare_lr_test(
    restricted,
    full,
    method: str = "chi2",
    *,
    n_boot: int = 99,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = 1,
    progress: bool = False,
) -> LRTestResult | LRBootstrapResult:
    r"""Likelihood-ratio test of a restricted fit against a larger one.

    Mirrors statsmodels' ``RegressionResults.compare_lr_test`` (for any two
    likelihood results, ``Logit`` included):
    :math:`LR = 2(\ell_{full} - \ell_{restricted})` referred to a chi-square
    with ``df`` = the difference in the number of parameters; or, with
    ``method="bootstrap"``, to its parametric-bootstrap distribution.

    Parameters
    ----------
    restricted : results
        The smaller fit (PLUME with fewer hyperplanes, or statsmodels' ``Logit``).
    full : results
        The larger fit, on the same observations.
    method : {"chi2", "bootstrap"}
        ``"bootstrap"``: also the parametric-bootstrap p-value
        (``plumestats._lr_test``): ``n_boot`` outcome vectors drawn
        from the restricted fit, both models refitted to each with the
        original fits' restart policy, the observed statistic ranked among
        theirs. The valid test of K against more faces; both fits must be
        ``PolyhedralMixtureLogit`` or ``HardPolyhedralLogit`` EM fits with
        their data. A fit from ``start_params`` is refitted from k-means
        starts (the draws have no start of their own), so give the observed
        fits the restart policy the draws should have.
    n_boot : int, default 99
        Bootstrap draws (``method="bootstrap"``).
    random_state : int, numpy Generator or None
        Seed of the draws and of the refits' starts (``None``: a fixed seed,
        as for the fits).
    n_jobs : int or None, default 1
        Worker processes for the draws (joblib's rules, as for
        ``bootstrap``); the same draws whatever ``n_jobs``.
    progress : bool, default False
        Show a progress bar of the draws.

    Returns
    -------
    LRTestResult or LRBootstrapResult
        Named tuples. ``LRTestResult`` is ``(statistic, pvalue, df)``, as
        statsmodels' ``compare_lr_test``. ``LRBootstrapResult`` (with
        ``method="bootstrap"``) starts with the same three, ``pvalue`` still
        the chi-square one, then ``bootstrap_pvalue`` (the p-value to read),
        ``n_boot``, ``n_failed`` (draws whose refit raised, left out),
        ``n_unsettled`` (draws kept whose refits did not both converge) and the
        draws' ``statistics``: unpack ``result[:3]``, or read the fields by
        name. ``df`` counts the identified parameters (``df_model + 1`` of
        each fit: an L1 fit's nonzero ones).

    Notes
    -----
    **The test of K against K + 1 hyperplanes is non-regular: its chi-square
    p-value is not valid.** Under the
    null of K hyperplanes, the (K + 1)-th is not identified: its weights can
    be anything if its gate never owns a point, or it duplicates another
    hyperplane (parameters on the boundary of, or unidentified in, the
    parameter space). Wilks' theorem needs a regular interior null, so the
    p-value is at best indicative, typically anti-conservative: for one face
    against two at N = 500 it rejected a true null in 11% (d = 2) and 33%
    (d = 5) of simulated data sets at the 5% level, where
    ``method="bootstrap"`` rejected in 5.5% and 6.5%
    (``python -m benchmarks.lr_bootstrap``). Use ``method="bootstrap"`` or
    information criteria (:func:`select_k`) instead.
    The test is regular for nested constraints within the same K, which
    ``results.wald_test`` / ``t_test`` also cover.

    **PLUME against PLUME with label flips** (the same design, K and gamma;
    for K = 1 also statsmodels' ``Logit`` against the flip model) tests
    :math:`\varepsilon = 0`, a null on the boundary of the parameter space.
    The statistic's reference distribution is then the mixture
    :math:`\tfrac12\chi^2_0 + \tfrac12\chi^2_1` (Self and Liang, 1987), and
    the p-value returned is :math:`\tfrac12 P(\chi^2_1 \ge LR)` for
    :math:`LR > 0`, not the conservative :math:`\chi^2_1` one (which rejects
    half as often under the null). When the flip fit is at
    :math:`\varepsilon = 0` the statistic is 0 and the p-value 1.

    References
    ----------
    S. G. Self and K.-Y. Liang, "Asymptotic properties of maximum likelihood
    estimators and likelihood ratio tests under nonstandard conditions", JASA
    82 (1987) 605-610.
    """
    check_choice(method, "method", ("chi2", "bootstrap"))
    if method == "bootstrap":
        n_boot = check_int(n_boot, "n_boot")
        _check_bootstrappable(restricted, full)
    counts = [_observations(fit) for fit in (restricted, full)]
    if counts[0] != counts[1]:
        raise ValueError(
            f"the two fits use different observations ({counts[0]} and "
            f"{counts[1]}); fit both on the same data"
        )
    _check_same_outcomes(restricted, full)
    _check_same_inside(restricted, full)
    # the identified parameters each fit counts (statsmodels' df_model + 1:
    # a collinear design's rank, an L1 fit's nonzero ones), as Logit's test
    n_small, n_large = (round(fit.df_model) + 1 for fit in (restricted, full))
    df = n_large - n_small
    if df == 0:
        raise ValueError(
            f"the two fits have as many parameters ({n_small}): the test compares "
            "a model with one nested in it, which has fewer"
        )
    if df < 0:
        raise ValueError(
            f"restricted has {n_small} parameters and full has {n_large}; pass "
            "the smaller model first: compare_lr_test(restricted, full)"
        )
    if method == "chi2":
        # (the bootstrap checked the weights with its other checks, and
        # calibrates any pair: select_k's best fit of each K can differ in
        # gamma)
        _check_same_freq_weights(restricted, full)
        _check_nested(restricted, full)
    statistic = 2.0 * (full.llf - restricted.llf)
    flips = _tests_no_flips(restricted, full)
    if flips and full.mle_retvals.get("boundary", False):
        # the flip rate's estimate is 0 and the two fits coincide; the rate held
        # at 5e-9 only costs the flip fit ~1e-8 per observation of log-likelihood
        statistic = 0.0
    if statistic < -_LLF_ROUNDING * (1.0 + abs(restricted.llf)):
        warnings.warn(
            f"the larger model's log-likelihood ({full.llf:.6g}) is below the "
            f"restricted one's ({restricted.llf:.6g}): its fit stopped at a worse "
            "local maximum. Refit it with more restarts (n_init).",
            ConvergenceWarning,
            stacklevel=2,
        )
    if flips:
        pvalue = 0.5 * stats.chi2.sf(statistic, 1) if statistic > 0 else 1.0
    else:
        pvalue = stats.chi2.sf(statistic, df)
    if method == "chi2":
        return LRTestResult(float(statistic), float(pvalue), df)
    boot_pvalue, draws, n_failed, n_unsettled = bootstrap_lr_pvalue(
        restricted, full, statistic, n_boot, random_state, n_jobs, progress
    )
    return LRBootstrapResult(
        float(statistic),
        float(pvalue),
        df,
        boot_pvalue,
        n_boot,
        n_failed,
        n_unsettled,
        draws,
    )


def _check_same_outcomes(restricted, full) -> None:
    """Fits of as many observations can still be of other data: their
    outcomes, where both are in memory, must be the same, row by row (the
    designs may differ: nested models)."""
    outcomes = [
        getattr(getattr(fit, "model", None), "endog", None)
        for fit in (restricted, full)
    ]
    if not all(isinstance(y, np.ndarray) for y in outcomes):
        return  # removed data, or on Dask: nothing to compare without a pass
    first, second = (np.asarray(y, dtype=float).ravel() for y in outcomes)
    if first.shape == second.shape and not np.array_equal(first, second):
        raise ValueError(
            "the two fits have different outcomes (as many observations, other "
            "values or another order): the test compares fits of the same data; "
            "fit both on it"
        )


def _check_same_inside(restricted, full) -> None:
    """Polyhedra of two faces or more of different classes are not nested
    (a fit of one face is any inside class's: only the face's sign
    changes)."""
    models = [getattr(fit, "model", None) for fit in (restricted, full)]
    codes = {getattr(model, "_inside_code", None) for model in models}
    both_several = all(getattr(model, "k", 1) > 1 for model in models)
    if both_several and None not in codes and len(codes) > 1:
        raise ValueError(
            "the two fits model different classes as the inside of the "
            "polyhedron (inside): they are not nested; fit both with the same "
            "inside"
        )


def _observations(fit) -> float:
    """The observations a fit counts: the rows, or with frequency weights
    their sum (PLUME's ``nobs``; statsmodels' GLM counts the rows)."""
    weights = getattr(getattr(fit, "model", None), "freq_weights", None)
    if isinstance(weights, np.ndarray):
        return float(np.sum(weights))
    return float(fit.nobs)


def _check_same_freq_weights(restricted, full) -> None:
    """Fits of the same rows with other frequency weights are fits of other
    data (both in memory: a Dask fit's weights would need a pass)."""
    models = [getattr(fit, "model", None) for fit in (restricted, full)]
    for model in models:
        var_weights = getattr(model, "var_weights", None)
        if var_weights is not None and not np.all(np.asarray(var_weights) == 1):
            raise ValueError(
                "a GLM fit with var_weights weighs the log-likelihood as no "
                "PLUME fit does: the two fits are not of the same data"
            )
    if not all(isinstance(getattr(m, "endog", None), np.ndarray) for m in models):
        return  # removed data, or on Dask
    small, big = (getattr(m, "freq_weights", None) for m in models)
    if not all(w is None or isinstance(w, np.ndarray) for w in (small, big)):
        return
    # no weights are ones (statsmodels' GLM keeps ones)
    small, big = (
        np.ones(model.endog.shape[0]) if weights is None else weights
        for model, weights in zip(models, (small, big), strict=True)
    )
    if not np.array_equal(small, big):
        raise ValueError(
            "the two fits have different freq_weights: the test compares fits "
            "of the same data; fit both with the same weights"
        )


def _gate(model):
    """What the faces' gate is, for nesting: None for one face (logistic
    regression, whatever the gate), else hard or soft with its gamma."""
    if getattr(model, "k", 1) == 1 or not isinstance(model, PolyhedralMixtureLogit):
        return None
    return ("hard",) if model.spec.hard else ("soft", float(model.gamma))


def _check_nested(restricted, full) -> None:
    """The chi-square reference needs ``restricted`` nested in ``full``: the
    same gate when both have several faces (soft gates of two gammas, or a
    soft and a hard one, are other models), and no flip rate in
    ``restricted`` that ``full`` lacks."""
    small, big = (getattr(fit, "model", None) for fit in (restricted, full))
    gates = _gate(small), _gate(big)
    if None not in gates and gates[0] != gates[1]:
        raise ValueError(
            "the two fits gate their faces differently (SPLA1's hard gate, or "
            "PLUME's with another gamma): they are not nested, and the "
            "chi-square test needs nested fits; fit both with the same model "
            "and gamma, or use method='bootstrap'"
        )
    if isinstance(small, LabelFlipPolyhedralLogit) and not isinstance(
        big, LabelFlipPolyhedralLogit
    ):
        raise ValueError(
            "restricted has a flip rate that full lacks: they are not nested; "
            "compare the label-flip fit with a larger label-flip fit"
        )


def _check_bootstrappable(restricted, full) -> None:
    """The bootstrap refits both models to simulated outcomes: both must be
    PLUME-family fits (no label flips) with their data, on the same design."""
    for name, results in (("restricted", restricted), ("full", full)):
        model = getattr(results, "model", None)
        if not isinstance(model, PolyhedralMixtureLogit) or isinstance(
            model, LabelFlipPolyhedralLogit
        ):
            raise ValueError(
                f"method='bootstrap' refits both models; {name} is a "
                f"{type(model).__name__} fit, and it needs PolyhedralMixtureLogit "
                "or HardPolyhedralLogit fits (fit K = 1 as ps.plume(..., k=1) "
                "rather than statsmodels' Logit)"
            )
        if model.exog is None or model._row_source is not None:
            raise ValueError(
                f"method='bootstrap' refits the models in memory; {name} has no "
                "estimation data as NumPy arrays (removed, or on Dask)"
            )
        if results.mle_settings.get("method", "em") != "em":
            raise ValueError(
                f"method='bootstrap' refits both models by EM with their starts; "
                f"{name} was fitted with method={results.mle_settings['method']!r}"
                "; refit it with the default method='em'"
            )
    _check_same_freq_weights(restricted, full)
    _check_whole_weights(restricted.model.freq_weights)
    same_design = np.array_equal(restricted.model.exog, full.model.exog)
    if not (same_design and np.array_equal(restricted.model.endog, full.model.endog)):
        raise ValueError(
            "method='bootstrap' draws outcomes at the observed design; the two "
            "fits have different designs or outcomes (fit both from the same "
            "formula and data)"
        )


def _check_whole_weights(weights) -> None:
    """Frequency weights the bootstrap can draw for: whole numbers (a draw is
    ``f_n`` outcomes per row)."""
    if weights is not None and not np.array_equal(weights, np.round(weights)):
        raise ValueError(
            "method='bootstrap' draws f_n outcomes for a row of frequency "
            "weight f_n, so it needs whole-number freq_weights; these are not "
            "(use method='chi2', or round the weights)"
        )


def _tests_no_flips(restricted, full) -> bool:
    """Whether ``full`` is ``restricted`` plus a flip rate: the same faces
    (design, K and, for K > 1, gamma, soft gating) with epsilon free."""
    big, small = getattr(full, "model", None), getattr(restricted, "model", None)
    if not isinstance(big, LabelFlipPolyhedralLogit) or isinstance(
        small, LabelFlipPolyhedralLogit
    ):
        return False
    if not _same_design(small, big):
        return False
    if isinstance(small, PolyhedralMixtureLogit):
        # with one face the gate is constant: the hard model is Logit too, and
        # the inside class only the face's sign; with more, the same inside
        # class (the polyhedron of the other class is another model)
        return small.k == big.k and (
            big.k == 1
            or (
                not small.spec.hard
                and small.gamma == big.gamma
                and small._inside_code == big._inside_code
            )
        )
    # statsmodels' Logit is PLUME with one face
    return isinstance(small, Logit) and big.k == 1


def _same_design(small, big) -> bool:
    """The same design matrix (a statsmodels ``Logit`` on arrays names its
    columns ``const, x1, ...`` where a formula says ``Intercept``); by the
    names alone when a fit no longer has its data."""
    in_memory = all(
        model.exog is not None and getattr(model, "_row_source", None) is None
        for model in (small, big)
    )
    if not in_memory:  # removed data, or Dask partitions
        return list(small.exog_names) == list(big.exog_names)
    small_exog, big_exog = np.asarray(small.exog), np.asarray(big.exog)
    return small_exog.shape == big_exog.shape and np.array_equal(small_exog, big_exog)


class LRBootstrapResult(NamedTuple):
    """The likelihood-ratio test with its parametric-bootstrap p-value."""

    statistic: float
    pvalue: float  # the chi-square p-value, for comparison (not valid for K)
    df: int
    bootstrap_pvalue: float
    n_boot: int
    n_failed: int  # draws left out: a refit raised (e.g. one class drawn)
    n_unsettled: int  # draws kept whose refits did not both converge
    statistics: np.ndarray  # the draws' LR statistics (failed draws left out)


def bootstrap_lr_pvalue(
    restricted, full, statistic: float, n_boot: int, random_state, n_jobs, progress
) -> tuple[float, np.ndarray, int, int]:
    """The bootstrap p-value of ``statistic``, the draws' statistics, and the
    numbers of failed and of unsettled draws."""
    specs = (_spec_of(restricted), _spec_of(full))
    probabilities = np.asarray(restricted.model.predict(restricted.params))
    seeds = np.random.SeedSequence(seed_entropy(random_state)).spawn(n_boot)
    bar = progress_bar(n_boot, "LR bootstrap", check_progress(progress), unit="draw")
    try:
        outcomes = run_seeded(
            _one_draw, (specs, probabilities), seeds, effective_n_jobs(n_jobs), bar
        )
    finally:
        bar.close()
    draws = np.array(outcomes, dtype=float)
    values, settled = draws[:, 0], draws[:, 1] == 1.0
    kept = np.isfinite(values)
    pvalue = (1.0 + np.sum(values[kept] >= statistic)) / (1.0 + kept.sum())
    counts = int(np.sum(~kept)), int(np.sum(kept & ~settled))
    if not kept.any():
        raise ValueError(
            f"every one of the {n_boot} bootstrap draws failed to refit (e.g. "
            "draws with one class); the restricted fit's probabilities are too "
            "close to 0 or 1 for the test"
        )
    return float(pvalue), values[kept], *counts


def _spec_of(results) -> RefitSpec:
    """How to refit ``results``' model to a draw: its own restart policy."""
    spec = RefitSpec.of(results)
    settings = results.mle_settings
    init = settings.get("init", "kmeans")
    policy = {
        "init": "kmeans" if init == "start_params" else init,
        "n_init": int(settings.get("n_init") or 1),
        "reseat": int(settings.get("reseat") or 0),
    }
    return replace(spec, fit_options={**spec.fit_options, **policy})


def _drawn_outcomes(spec: RefitSpec, probabilities: np.ndarray, rng):
    """Outcomes drawn at the observed design: one per row, or with (integer)
    frequency weights ``f_n`` one per observation, kept as two weighted rows
    per row, ``Binomial(f_n, p_n)`` of class 1 and the rest of class 0."""
    if spec.freq_weights is None:
        endog = (rng.random(probabilities.size) < probabilities).astype(float)
        return endog, spec.exog, None
    counts = spec.freq_weights.astype(np.int64)
    ones = rng.binomial(counts, probabilities).astype(float)
    endog = np.repeat([1.0, 0.0], probabilities.size)
    exog = np.vstack([spec.exog, spec.exog])
    return endog, exog, np.concatenate([ones, counts - ones])


def _one_draw(payload, seed) -> tuple[float, float]:
    """The LR statistic of one draw from the restricted fit (NaN if a refit
    raised), and 1.0 if both refits converged, else 0.0; ``payload`` is the
    two models' refit specs and the restricted fit's probabilities."""
    specs, probabilities = payload
    rng = np.random.default_rng(seed)
    endog, exog, weights = _drawn_outcomes(specs[0], probabilities, rng)
    fit_seed = int(rng.integers(2**31 - 1))
    values, settled = [], []
    for spec in specs:
        model = with_terms(
            spec.model_class(endog, exog, freq_weights=weights, **spec.model_options),
            spec.terms,
        )
        with warnings.catch_warnings():
            # a draw's warnings are the draw's: it counts as failed or not
            warnings.simplefilter("ignore")
            try:
                res = model.fit(random_state=fit_seed, **spec.fit_options)
            except (ValueError, np.linalg.LinAlgError):
                return np.nan, 0.0  # e.g. a draw with one class
        values.append(res.llf)
        settled.append(bool(res.converged))
    return max(0.0, 2.0 * (values[1] - values[0])), float(all(settled))
