"""``fit()`` end to end: the options checked, the runs, the results.

The options are checked first, each with its own message; then either EM runs
from its starts (:mod:`plumestats._fitting`) or one of statsmodels' optimisers
runs (:mod:`plumestats._direct`); the best run becomes the results
(:mod:`plumestats._build`). Every model class and every row source takes this
one path.
"""

from __future__ import annotations

import warnings

from statsmodels.tools.sm_exceptions import ConvergenceWarning

from ._build import build_results
from ._covariance import BLOCK_COV_TYPES, canonical_cov_type, cluster_codes
from ._direct import fit_direct
from ._em import EMOptions
from ._fitting import best_run, em_runs, printer
from ._memory import check_fit_memory
from ._msteps import MSTEPS
from ._parallel import FitProgress, check_progress
from ._start import INIT_METHODS
from ._threads import with_fit_blas_threads
from ._validation import (
    check_choice,
    check_flag,
    check_identified,
    check_int,
    check_positive_float,
    check_row_labels,
    method_name,
    require_estimation_data,
)

__all__ = ["FIT_METHODS", "auto_chunksize", "check_fit_options", "fit_model"]

DIRECT_METHODS = ("newton", "bfgs", "lbfgs", "ncg", "cg", "nm", "powell")
FIT_METHODS = ("em", *DIRECT_METHODS)
# re-seating moves of a default EM fit: on 240 fits of four UCI sets (K = 2
# and 3, alpha 0 and 1e-3) three moves reached a higher maximum in 107 and a
# lower one in none, at a median 1.0 to 2.6 times one start (docs/benchmarks);
# penalised fits (0 < alpha < 1) add the penalty-path move: 1.9 to 2.7 times
# (heart and pima, K = 2 and 3; docs/benchmarks/maxima.md)
DEFAULT_RESEAT = 3


# The per-row temporaries of a block evaluated whole: the standardised rows,
# the Hessian weights (the K (K + 1) / 2 distinct pairs) and a few (K,)-rows,
# ~32 MB of them per block. Blocks are standardised and evaluated by slabs of
# rows now, so a block's size only bounds the moments pass and sets the order
# in which the sums are added; it was kept (that order decides their rounding).
_AUTO_BLOCK_BYTES = 32 * 2**20


def auto_chunksize(n_cols: int, k: int) -> int:
    """Rows per block for ``fit(chunksize="auto")``: about 32 MB of per-row
    temporaries, and at least 1024 rows (numpy's per-call overhead)."""
    per_row = 8 * (2 * n_cols + k * (k + 1) // 2 + 8 * k)
    return max(1024, _AUTO_BLOCK_BYTES // per_row)


def check_fit_options(
    *, method, mstep, init, alpha, maxiter, n_init, reseat
) -> tuple[float, int, int, int]:
    """Validate the options :meth:`PolyhedralMixtureLogit.fit` shares with its
    variants; ``method`` is ``(value, allowed)``. Returns ``alpha``,
    ``maxiter``, ``n_init`` and ``reseat`` as numbers."""
    check_choice(method[0], "method", method[1])
    check_choice(mstep, "mstep", tuple(MSTEPS))
    check_choice(init, "init", INIT_METHODS)
    if reseat is None:  # the default: the moves where EM can make them
        reseat = DEFAULT_RESEAT if method[0] == "em" else 0
    reseat = check_int(reseat, "reseat", minimum=0)
    if reseat and method[0] != "em":
        raise ValueError(
            f"reseat needs method='em' (it moves a face and reruns EM); got "
            f"method={method[0]!r}"
        )
    return (
        check_positive_float(alpha, "alpha", allow_zero=True),
        check_int(maxiter, "maxiter", minimum=0),
        check_int(n_init, "n_init"),
        reseat,
    )


def _method_on_data(model, method):
    """``method`` as statsmodels' optimisers read it (:func:`method_name`),
    once the estimation data are known to be there (a clear error after
    ``remove_data()``, not a NoneType traceback)."""
    require_estimation_data(model, "fit needs", "build the model again from it")
    return method_name(method, FIT_METHODS)


@with_fit_blas_threads
def fit_model(
    model,
    start_params,
    method: str,
    maxiter: int,
    tol: float,
    *,
    mstep: str,
    init: str,
    n_init: int,
    random_state,
    alpha: float,
    em_tol: float,
    em_overrelax: float,
    newton_finish: bool,
    disp: bool,
    callback,
    cov_type: str,
    cov_kwds: dict | None,
    use_t: bool | None,
    chunksize: int | str | None,
    reseat: int,
    full_output: bool,
    retall: bool,
    progress: bool,
    **kwargs,
):
    """:meth:`PolyhedralMixtureLogit.fit` for ``model`` (whose signature holds
    the defaults and whose docstring says what the options mean): the options
    checked, the runs (EM from the starts, or one of statsmodels'
    optimisers), then the results from one pass over the rows. statsmodels'
    ``warn_convergence`` is taken, and ``skip_hessian`` (the covariance always
    needs the Hessian)."""
    method = _method_on_data(model, method)
    warn_convergence = _statsmodels_switches(kwargs)
    reseat = _moves_asked(model, start_params, reseat)
    alpha, maxiter, n_init, reseat = check_fit_options(
        method=(method, FIT_METHODS),
        mstep=mstep,
        init=init,
        alpha=alpha,
        maxiter=maxiter,
        n_init=n_init,
        reseat=reseat,
    )
    cov_type = canonical_cov_type(cov_type)
    check_identified(model, alpha)
    chunksize = check_chunksize(model, chunksize, method, cov_type)
    if cov_type == "cluster" and model._row_source is None:
        # bad labels refused before the runs, not by the covariance after them
        cluster_codes(cov_kwds or {}, model.exog.shape[0])
        labels = getattr(model.data, "row_labels", None)
        check_row_labels((cov_kwds or {})["groups"], labels, "groups")
    check_memory(model, chunksize, slabs=method == "em")
    use_t = check_flag(use_t, "use_t", allow_none=True)
    retall = check_flag(retall, "retall")
    full_output = check_flag(full_output, "full_output")
    reporter = FitProgress(check_progress(progress))
    shared = {
        "start_params": start_params,
        "maxiter": maxiter,
        "init": init,
        "random_state": random_state,
        "retall": retall,
        "progress": reporter,
    }
    # EM's own options, by the names of fit's keywords
    em = {"tol": tol, "em_tol": em_tol, "em_overrelax": em_overrelax}
    em.update(newton_finish=newton_finish, mstep=mstep, n_init=n_init)
    if method == "em":
        em.update(alpha=alpha, chunksize=chunksize)
        problem, scaling, internal, retvals, optimizer, n_runs = _run_em(
            model, shared, em, disp=disp, callback=callback, reseat=reseat, **kwargs
        )
    else:
        _refuse_em_options(method, **em)
        if method == "newton":  # statsmodels' newton stops on tol too
            kwargs["tol"] = check_positive_float(tol, "tol")
        problem, scaling, internal, retvals, optimizer, n_runs = _run_direct(
            model, shared, method, alpha, disp=disp, callback=callback, **kwargs
        )
    reporter.close()
    settings = {
        "optimizer": optimizer,
        "method": method,
        "init": "start_params" if start_params is not None else init,
        "n_init": n_runs,
        "alpha": alpha,
        "gating": model.gating,
        "maxiter": maxiter,
        **(
            _em_settings(em, chunksize=chunksize, reseat=reseat)
            if method == "em"
            else _optimizer_settings(kwargs)
        ),
        **model._extra_settings(),
    }
    options = {
        "cov_type": cov_type,
        "cov_kwds": cov_kwds or {},
        "use_t": use_t,
        "disp": disp,
        "full_output": full_output,
    }
    with warnings.catch_warnings():
        if not warn_convergence:  # statsmodels' switch for its own notice
            warnings.filterwarnings(
                "ignore", "The fit did not converge", ConvergenceWarning
            )
        return build_results(
            model, problem, scaling, internal, retvals, settings, options=options
        )


def _em_settings(em: dict, *, chunksize, reseat: int) -> dict:
    """What ``mle_settings`` records of an EM fit's own options."""
    return {
        "mstep": em["mstep"],
        "tol": em["tol"],
        "em_tol": em["em_tol"],
        "em_overrelax": em["em_overrelax"],
        "newton_finish": bool(em["newton_finish"]),
        "chunksize": chunksize,
        "reseat": reseat,
    }


def _optimizer_settings(optimizer_kwargs: dict) -> dict:
    """What ``mle_settings`` records of a fit by one of statsmodels'
    optimisers: the keywords it was given (``gtol``, and ``tol`` for
    ``"newton"``, as statsmodels records them; not a function such as
    ``fhess_p``, which no file or pickle could hold), and EM's options as not
    applied (``None``: no M-step, finish, row blocks or moves), as an L1
    fit's."""
    return {
        "mstep": None,
        "tol": optimizer_kwargs.get("tol"),
        "em_tol": None,
        "em_overrelax": None,
        "newton_finish": False,
        "chunksize": None,
        "reseat": 0,
        **{
            key: value for key, value in optimizer_kwargs.items() if not callable(value)
        },
    }


def _statsmodels_switches(kwargs: dict) -> bool:
    """statsmodels' ``warn_convergence`` (returned) and ``skip_hessian`` (the
    covariance always needs the Hessian), taken out of ``kwargs``."""
    check_flag(kwargs.pop("skip_hessian", False), "skip_hessian")
    return check_flag(kwargs.pop("warn_convergence", True), "warn_convergence")


def _moves_asked(model, start_params, reseat):
    """``reseat`` as given, or 0 where no move can be made (one face) or none
    was asked of given start values (the default, ``None``, with them)."""
    if reseat is not None:  # checked whatever K (k="auto" fits K = 1 too)
        check_int(reseat, "reseat", minimum=0)
    if model.k == 1 or (start_params is not None and reseat is None):
        return 0
    if start_params is not None and model.spec.flips and reseat:
        raise ValueError(
            "reseat moves a face of the PLUME fit a label-flip fit starts from; "
            "with start_params (which start the label-flip fit itself) pass "
            "reseat=0, or leave start_params out"
        )
    return reseat


# what EM's own options are when not given (fit's defaults)
_EM_DEFAULTS = {
    "n_init": 1,
    "mstep": "newton",
    "em_overrelax": EMOptions.overrelax,
    **{name: getattr(EMOptions, name) for name in ("em_tol", "tol", "newton_finish")},
}


def _refuse_em_options(method: str, **given) -> None:
    """statsmodels' optimisers run once, from one start, by their own rules:
    EM's options would be silently ignored (``tol`` is statsmodels' own for
    ``"newton"``)."""
    ignored = [
        name
        for name, value in given.items()
        if value != _EM_DEFAULTS[name] and not (name == "tol" and method == "newton")
    ]
    if ignored:
        raise ValueError(
            f"{', '.join(ignored)} only appl{'y' if len(ignored) > 1 else 'ies'} "
            f"to method='em'; method={method!r} "
            "runs statsmodels' optimiser once, from one start (pass maxiter and "
            "the optimiser's own keywords, e.g. gtol for 'bfgs')"
        )


def _run_em(model, shared: dict, em: dict, *, disp, callback, reseat, **kwargs):
    """EM from every start (and the re-seating moves); the best run."""
    if kwargs:
        raise TypeError(f"fit got unexpected arguments: {sorted(kwargs)}")
    reporter = shared["progress"]
    options = EMOptions(
        maxiter=shared["maxiter"],
        tol=check_positive_float(em["tol"], "tol"),
        em_tol=check_positive_float(em["em_tol"], "em_tol"),
        overrelax=_check_overrelax(em["em_overrelax"], model),
        newton_finish=bool(em["newton_finish"]),
        callback=reporter.callback(printer() if disp else None),
        retall=shared["retall"],
    )
    problem, scaling, runs, reseats, paths = em_runs(
        model,
        start_params=shared["start_params"],
        options=options,
        mstep=em["mstep"],
        init=shared["init"],
        n_init=em["n_init"],
        random_state=shared["random_state"],
        alpha=em["alpha"],
        chunksize=em["chunksize"],
        disp=bool(disp),
        reseat=reseat,
        progress=reporter,
        callback=callback,
    )
    internal, retvals = best_run(problem, runs, reseats, paths)
    flips = ", label flips" if model.spec.flips else ""
    optimizer = f"EM ({em['mstep']} M-step){flips}"
    return problem, scaling, internal, retvals, optimizer, len(runs)


def _check_overrelax(value, model) -> float:
    """``em_overrelax``: a finite number of at least 1, and 1 for the hard
    gate, whose EM steps are never over-relaxed (it would be recorded in
    ``mle_settings`` and do nothing)."""
    value = check_positive_float(value, "em_overrelax")
    if value < 1.0:
        raise ValueError(
            f"em_overrelax must be at least 1 (1: plain EM steps), got {value}"
        )
    if value != 1.0 and model.spec.hard:
        raise ValueError(
            "em_overrelax over-relaxes the soft gate's EM steps; SPLA1's (the "
            "hard gate's) search L itself and take none: leave em_overrelax at 1"
        )
    return value


def _run_direct(model, shared: dict, method: str, alpha: float, **options):
    """One of statsmodels' optimisers on the log-likelihood (``options``:
    ``disp``, ``callback`` and the optimiser's own keywords)."""
    if alpha > 0:
        raise ValueError(
            "alpha > 0 needs method='em'; statsmodels' optimisers run on "
            "the unpenalised log-likelihood"
        )
    disp, callback = options.pop("disp"), options.pop("callback")
    problem, scaling, internal, retvals = fit_direct(
        model,
        method=method,
        disp=disp,
        callback=callback,
        optimizer_kwargs=options,
        **shared,
    )
    return problem, scaling, internal, retvals, f"statsmodels {method}", 1


def check_memory(model, chunksize, slabs: bool = True) -> None:
    """Refuse a fit that would not fit in memory, before it starts (a Dask
    model's partitions live on the workers: not checked here). ``slabs``: the
    engine's fit, whose Hessian weights are never whole (statsmodels'
    optimisers build them for all rows)."""
    if model._row_source is None:
        auto = auto_chunksize(model.k_vars, model.k)
        check_fit_memory(
            int(model.exog.shape[0]), model.k_vars, model.k, chunksize, auto, slabs
        )


def check_chunksize(model, chunksize, method, cov_type):
    """Validated ``chunksize``: ``None`` or a number of rows."""
    blocked = chunksize is not None or model._row_source is not None
    if blocked and method != "em":
        raise ValueError(
            f"method={method!r} needs the whole design in memory; fits by row "
            "blocks (chunksize, Dask input) use method='em'"
        )
    if blocked and cov_type not in BLOCK_COV_TYPES:
        raise ValueError(
            f"cov_type={cov_type!r} needs every observation's score or "
            "leverage, which fits by row blocks (chunksize, Dask input) do "
            f"not keep; use one of {list(BLOCK_COV_TYPES)}, or fit in memory"
        )
    if chunksize is None:
        return None
    if model._row_source is not None:
        raise ValueError(
            "chunksize is for in-memory data; a model on Dask collections "
            "works by its partitions (rechunk the arrays to change them)"
        )
    if isinstance(chunksize, str):
        check_choice(chunksize, "chunksize", ("auto",))
        return auto_chunksize(model.k_vars, model.k)
    return check_int(chunksize, "chunksize")
