"""Presentation only: the statsmodels-style summary of a PLUME fit."""

from __future__ import annotations

import textwrap

import numpy as np
from scipy import stats
from statsmodels.iolib.summary import Summary, summary_params

from ._diagnostics import other_intervals, restart_note

__all__ = ["build_summary", "build_summary2"]


def _inside_label(results) -> str:
    code = results.model.spec.inside_code
    labels = [
        str(level) for level, value in results.outcome_mapping.items() if value == code
    ]
    return labels[0] if labels else str(code)


def _outcome_note(results) -> str:
    code = results.model.spec.inside_code
    label = _inside_label(results)
    coded = "" if label == str(code) else f" ({label})"
    prediction = "" if code == 1 else " predict() still gives P(y = 1 | x)."
    return (
        f"Outcome coded {code}{coded} is the inside of the polyhedron "
        "{x : min_k h_k'x >= 0}. Hyperplanes are ordered by decreasing share of "
        f"the sample that their gate owns.{prediction}"
    )


def _diagnostics_note(results) -> str | None:
    diag = getattr(results, "_diagnostics", None)
    if diag is None:  # a fit pickled before the diagnostics existed
        return None
    numbers = (
        f"condition number {diag.condition_number:.3g}, smallest eigenvalue "
        f"{diag.min_eigenvalue:.3g} (information per observation, standardised "
        f"features), largest |score| {diag.max_abs_score:.3g}"
    )
    if diag.interior:
        return f"Diagnostics: {numbers}; a regular interior maximum."
    elsewhere = _other_intervals(results)
    other = "" if elsewhere is None else f"; {elsewhere}"
    return (
        f"Warning: the optimum is not a regular interior maximum: "
        f"{'; '.join(diag.messages)}. The standard errors should not be taken at "
        f"face value (see results.diagnostics{other}). Diagnostics: {numbers}."
    )


def _other_intervals(results) -> str | None:
    """:func:`~plumestats._diagnostics.other_intervals` of a fit."""
    penalised = bool(results.mle_settings.get("alpha", 0.0))
    return other_intervals(results.model, penalised)


def _flip_note(results, alpha) -> str:
    if results.mle_retvals.get("boundary"):
        return (
            "Label flips: the flip rate is at its boundary, 0 (no random flips "
            "seen); flip_logit has no standard error and the hyperplanes are "
            "PolyhedralMixtureLogit's."
        )
    low, high = results.flip_rate_conf_int(alpha)
    return (
        f"Label flips: an estimated {results.flip_rate:.4g} of labels are flipped "
        f"at random ({100 * (1 - alpha):g}% CI {low:.4g} to {high:.4g}); "
        "flip_logit = logit(2 * flip rate), and predict() gives "
        "P(observed y = 1 | x) = flip + (1 - 2 flip) P_clean (which='clean' for "
        "P_clean)."
    )


def _check_xname(results, xname) -> list[str]:
    """``xname`` as a list: one name per design column (one block's, the same
    for every hyperplane) or one per parameter; any other length would shift
    the table's rows against the numbers."""
    model = results.model
    n_params = len(model.data.param_names)
    if isinstance(xname, str) or len(xname) not in (model.k_vars, n_params):
        got = repr(xname) if isinstance(xname, str) else f"{len(xname)} names"
        if n_params == model.k_vars:  # k=1: the two readings coincide
            expected = f"{n_params} names (one per parameter, as in params.index)"
        else:
            expected = (
                f"{model.k_vars} names (one per design column, used for every "
                f"hyperplane) or of {n_params} (one per parameter, as in "
                "params.index)"
            )
        raise ValueError(f"xname must be a list of {expected}; got {got}")
    return [str(name) for name in xname]


def _row_labels(results, xname) -> list[str]:
    """The coefficient tables' row label of every parameter, in ``params``
    order: each hyperplane's block is labelled by the design columns (or
    ``xname``), any extra parameter by its own name."""
    model = results.model
    param_names = list(model.data.param_names)
    if xname is None:
        xname = list(model.exog_names)
    else:
        xname = _check_xname(results, xname)
        if len(xname) == len(param_names) and len(xname) != model.k_vars:
            return xname
    return xname * results.k + param_names[results.k * model.k_vars :]


def _bootstrap_columns(params, boot, alpha):
    bse = boot.bse.to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        tvalues = params / bse
    pvalues = 2 * stats.norm.sf(np.abs(tvalues))
    return bse, tvalues, pvalues, boot.conf_int(alpha).to_numpy()


class _Summary(Summary):
    """statsmodels' ``Summary`` whose LaTeX escapes the notes: they hold
    ``%`` ("95% intervals", which commented out the rest of the line) and
    ``_`` (``cov_type``, an error outside maths), and statsmodels adds them
    as they are."""

    def as_latex(self) -> str:
        notes = self.extra_txt
        if notes is not None:
            self.extra_txt = _latex_text(notes)
        try:
            return super().as_latex()
        finally:
            self.extra_txt = notes


# LaTeX's special characters in running text, each replaced once
_LATEX_SPECIALS = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }
)


def _latex_text(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return text.translate(_LATEX_SPECIALS)


def build_summary(
    results, yname=None, xname=None, title=None, alpha=0.05, bootstrap=None
) -> Summary:
    """Header table, one coefficient block per hyperplane, and footnotes; with
    ``bootstrap``, its standard errors and percentile intervals."""
    hard = results.mle_settings["gating"] == "hard"
    # the label-flip model's results carry the flip rate; the bound is PLUME's
    flips = hasattr(results, "flip_rate")
    bound = None if hard or flips else results.rademacher_bound(0.05)
    if title is None:
        title = f"{type(results.model).__name__} Regression Results"
    smry = _Summary()
    labels = _row_labels(results, xname)
    p = results.model.k_vars
    smry.add_table_2cols(
        results,
        gleft=_model_rows(results, hard, bootstrap),
        gright=_fit_rows(results, bound),
        yname=yname,
        xname=labels[:p],
        title=title,
    )
    columns = _coefficient_columns(results, alpha, bootstrap)
    blocks = [
        (f"hyperplane h{k + 1}", slice(k * p, (k + 1) * p)) for k in range(results.k)
    ]
    if flips:
        blocks.append(("label flips", slice(results.k * p, None)))
    # bootstrap p-values are normal ones, whatever the fit's use_t
    use_t = bool(results.use_t) and bootstrap is None
    for label, rows in blocks:
        smry.tables.append(
            _coefficient_table(results, columns, rows, label, labels, alpha, use_t)
        )
    notes = _inference_notes(results, alpha, bootstrap, bound)
    # an L1 fit's zeros have NaN standard errors by design
    estimated = ~np.asarray(getattr(results, "trimmed", np.zeros(len(labels), bool)))
    notes += _fit_notes(
        results, bse=columns[1][: results.k * p][estimated[: results.k * p]]
    )
    if "alpha_l1" in results.mle_settings:
        notes.insert(1, _l1_note(results, labels))
    width = max(len(line) for table in smry.tables for line in str(table).splitlines())
    smry.add_extra_txt(
        [_footnote(f"[{i + 1}] ", note, width) for i, note in enumerate(notes)]
    )
    return smry


def _footnote(label: str, note: str, width: int) -> str:
    """A note wrapped to the tables' width, its lines after the first
    indented under its text (statsmodels' own notes come wrapped; ours
    were one line each, up to 400 characters)."""
    return textwrap.fill(
        note,
        width,
        initial_indent=label,
        subsequent_indent=" " * len(label),
        break_long_words=False,
        break_on_hyphens=False,
    )


def _model_rows(results, hard: bool, bootstrap) -> list:
    """The header's left column: the model, its settings and the fit's run."""
    settings = results.mle_settings
    retvals = results.mle_retvals
    if settings["method"] == "em":
        method = f"EM ({settings['mstep'].capitalize()} M-step)"
        iterations = f"{retvals['n_em_steps']} + {retvals['n_newton_steps']} NR"
    else:
        method = f"MLE ({settings['method']})"
        iterations = str(retvals["iterations"])
    penalty = ("L2 penalty:", f"{settings['alpha']:g}" if settings["alpha"] else "none")
    if "alpha_l1" in settings:
        penalty = ("L1 penalty:", _l1_alpha_text(results))
    return [
        ("Dep. Variable:", None),
        ("Model:", [type(results.model).__name__]),
        ("Method:", [method]),
        ("Date:", None),
        ("Time:", None),
        ("Hyperplanes (K):", [str(results.k)]),
        ("gamma:", ["inf (hard gate)" if hard else f"{results.gamma:g}"]),
        (penalty[0], [penalty[1]]),
        ("converged:", [str(results.converged)]),
        (
            "EM iterations:" if settings["method"] == "em" else "Iterations:",
            [iterations],
        ),
        ("Covariance Type:", [results.cov_type if bootstrap is None else "bootstrap"]),
    ]


def _l1_alpha_text(results) -> str:
    """An L1 fit's alpha: the one weight of every penalised parameter, or
    their range."""
    weights = np.asarray(results.mle_settings["alpha_l1"])
    penalised = weights[weights > 0]
    if penalised.size == 0:
        return "none"
    low, high = penalised.min(), penalised.max()
    return f"{high:g}" if low == high else f"{low:g} to {high:g}"


def _l1_note(results, labels) -> str:
    """Which coefficients an L1 fit set to zero, and what was minimised."""
    trimmed = np.asarray(results.trimmed)
    names = [
        f"h{index // results.model.k_vars + 1}:{labels[index]}"
        for index in np.flatnonzero(trimmed)
    ]
    shown = ", ".join(names[:20]) + (
        f" and {len(names) - 20} more" if len(names) > 20 else ""
    )
    zeros = f": {shown}" if names else ""
    return (
        f"L1-penalised fit: minimised -L/N + sum_j alpha_j |w_j| / N "
        f"(statsmodels' convention, user's units, alpha = {_l1_alpha_text(results)}"
        f" on the penalised parameters). {trimmed.sum()} of {trimmed.size} "
        f"coefficients are exactly zero (coef 0, std err nan){zeros}. Standard "
        f"errors come from the information of the {results.nnz_params} nonzero "
        "ones, given which are zero (no allowance for the selection)."
    )


def _fit_rows(results, bound) -> list:
    """The header's right column: counts, likelihoods, criteria, the bound."""
    return [
        ("No. Observations:", None),
        ("Df Residuals:", None),
        ("Df Model:", None),
        ("Log-Likelihood:", None),
        ("LL-Null:", [f"{results.llnull:#8.5g}"]),
        ("Pseudo R-squ.:", [f"{results.prsquared:#6.4g}"]),
        ("LLR p-value:", [f"{results.llr_pvalue:#6.4g}"]),
        ("AIC:", [f"{results.aic:#8.5g}"]),
        ("BIC:", [f"{results.bic:#8.5g}"]),
        ("Rademacher bnd:", ["n/a" if bound is None else bound.short]),
        ("Inside class:", [_inside_label(results)]),
    ]


def _coefficient_columns(results, alpha, bootstrap) -> tuple:
    """``params, bse, tvalues, pvalues, conf_int`` of every parameter, from the
    fit's covariance or from ``bootstrap``."""
    params = np.asarray(results.params)
    if bootstrap is not None:
        return (params, *_bootstrap_columns(params, bootstrap, alpha))
    return (
        params,
        np.asarray(results.bse),
        np.asarray(results.tvalues),
        np.asarray(results.pvalues),
        np.asarray(results.conf_int(alpha)),
    )


def _coefficient_table(
    results, columns, rows: slice, label: str, labels, alpha, use_t: bool
):
    """One block of the coefficient table, its label in the stub header."""
    table = summary_params(
        (results, *(column[rows] for column in columns)),
        yname=label,
        xname=labels[rows],
        alpha=alpha,
        use_t=use_t,
    )
    # label the block in its stub header, as statsmodels' MNLogit does
    table[0][0].data = label
    table[0][0]._datatype = None
    table[0][0].row = table[0][1].row
    return table


# observations per parameter from which the coverage study found K > 1 Wald
# intervals regular: every cell with 556 or more (N = 10000; K = 3, d = 5 at
# 2000 replicates included) held its level; with 111 to 278 (N = 2000 to 5000,
# d = 5) the worst covered 0.92 to 0.93, the HC0 sandwich 0.92 to 0.94; most
# cells at N = 500 held neither (benchmarks/results/coverage_k3.md, coverage.md)
_REGULAR_PER_PARAMETER = 500


def _inference_notes(results, alpha, bootstrap, bound) -> list[str]:
    """Notes on the outcome and on reading the inference: flips, bootstrap,
    covariance, the LLR test, the Rademacher bound."""
    notes = [_outcome_note(results)]
    rows = getattr(results, "_weighted_rows", None)
    if rows is not None:
        notes.append(
            f"Frequency weights: {rows} rows stand for {results.nobs:g} "
            "observations (No. Observations, the likelihood and the inference "
            "count each row as its weight)."
        )
    if hasattr(results, "flip_rate"):
        notes.append(_flip_note(results, alpha))
    if bootstrap is not None:
        notes.append(_bootstrap_note(bootstrap, alpha))
    if results.cov_type != "nonrobust" and bootstrap is None:
        notes.append(results.cov_kwds["description"])
    per_parameter = results.nobs / results.nnz_params  # an L1 fit's zeros: none
    if results.k > 1 and bootstrap is None and per_parameter < _REGULAR_PER_PARAMETER:
        note = _interval_note(per_parameter, results.cov_type)
        if hasattr(results, "flip_rate"):  # no bootstrap for label flips
            elsewhere = _other_intervals(results)
            note += " Label-flip fits have no bootstrap" + (
                "." if elsewhere is None else f"; {elsewhere} runs."
            )
        notes.append(note)
    if results.k > 1:
        notes.append(
            "LLR p-value: the test against the intercept-only logit is non-regular "
            "for K > 1 (the experts are not identified under the null); treat it as "
            "indicative only."
        )
    if bound is not None:
        notes.append(_bound_note(bound))
    return notes


def _interval_note(per_parameter: float, cov_type: str) -> str:
    """Which 95% interval the coverage study found to hold at this many
    observations per parameter; a fit that already uses HC0 is told so
    rather than advised to switch to it (HC0's worst cells at 28 to 83 per
    parameter: 0.83 to 0.93, benchmarks/results/coverage.csv)."""
    head = (
        f"Intervals: {per_parameter:.0f} observations per parameter. With K > 1 "
        f"and fewer than {_REGULAR_PER_PARAMETER} the coverage study found "
    )
    bootstrap = (
        "res.bootstrap(...).conf_int(kind='normal') covered 95-100%, erring wide"
    )
    guide = "; user guide: which interval to trust when."
    if cov_type == "HC0":
        return (
            head + "HC0 intervals (this fit's kind) covering 92-97% at 111 to 278 "
            "per parameter, where those from the observed information went down "
            "to 92%; at 28 to 83 per parameter both went down to 83-85%, and "
            + bootstrap
            + guide
        )
    return (
        head + "95% intervals from the observed information covering down to 92% "
        "(111 to 278 per parameter, where cov_type='HC0' covered 92-97%) "
        "and to 85% (28 to 83, where " + bootstrap + ")" + guide
    )


def _bootstrap_note(bootstrap, alpha) -> str:
    return (
        f"Standard errors and {100 * (1 - alpha):g}% percentile intervals from a "
        f"nonparametric bootstrap, {bootstrap.n_boot - bootstrap.n_failed} of "
        f"{bootstrap.n_boot} replicates ({bootstrap.n_failed} failed); experts "
        f"aligned to the fit, {100 * bootstrap.switched_share:.1f}% of "
        "replicates relabelled."
    )


def _bound_note(bound) -> str:
    value = (
        f"10^{bound.log10_total:.1f}, above 1 and so vacuous (it says nothing "
        "about the error rate)"
        if bound.vacuous
        else f"{bound.total:.4g}"
    )
    return (
        f"Rademacher bound on the misclassification risk at delta=0.05: "
        f"{value}; see results.rademacher_bound()."
    )


def _fit_notes(results, bse) -> list[str]:
    """Notes on the fit itself: penalty, separation, convergence, the
    hyperplanes' standard errors ``bse`` and the diagnostics."""
    settings = results.mle_settings
    retvals = results.mle_retvals
    notes = []
    if settings["alpha"] > 0:
        notes.append(
            f"L2-penalised fit: EM maximised L/N - alpha/2 * sum of squared slopes "
            f"on standardised features (a factor's levels by their correlation), "
            f"alpha = {settings['alpha']:g}; standard errors use the penalised "
            "information."
        )
    if retvals.get("separation"):
        notes.append(
            "Perfect or quasi-perfect separation: the likelihood has no finite "
            "maximum, the estimates are not identified; refit with alpha > 0."
        )
    if not results.converged:
        engine = "EM" if results.mle_settings.get("method") == "em" else "The fit"
        notes.append(f"{engine} did not converge: {retvals['message']}.")
    restarts = restart_note(retvals, results.k)
    if restarts is not None:
        notes.append(restarts)
    unidentified = retvals.get("unidentified")
    if unidentified is not None:
        notes.append(_unidentified_note(results, unidentified))
        bse = np.asarray(bse)[~unidentified[: np.size(bse)]]  # (the faces')
    if not np.all(np.isfinite(bse)):
        notes.append(
            "Standard errors are NaN: the observed information is not positive "
            "definite (no regular interior maximum)."
        )
    diagnostics = _diagnostics_note(results)
    if diagnostics is not None:
        notes.append(diagnostics)
    return notes


def _unidentified_note(results, unidentified: np.ndarray) -> str:
    """Which coefficients the rank-deficient design leaves unidentified."""
    columns = np.flatnonzero(unidentified[: results.model.k_vars])
    names = ", ".join(repr(results.model.exog_names[j]) for j in columns)
    where = " of every hyperplane" if results.k > 1 else ""
    return (
        f"The design matrix is rank deficient: the coefficients of {names}{where} "
        "are not identified (arbitrary estimates, NaN standard errors); the "
        "other coefficients are estimable."
    )


def build_summary2(
    results, yname=None, xname=None, title=None, alpha=0.05, float_format="%.4f"
):
    """statsmodels' ``summary2`` layout (one table of every parameter, as
    ``Logit.summary2``) with the outcome, K and gate in a closing note."""
    from statsmodels.iolib import summary2

    if xname is not None:
        xname = _check_xname(results, xname)
        if len(xname) == results.model.k_vars:
            # one block's names, as summary() takes them: name every hyperplane's
            names = [f"h{k + 1}:{name}" for k in range(results.k) for name in xname]
            xname = names + list(results.model.data.param_names[len(names) :])
    smry = summary2.Summary()
    smry.add_base(
        results=results,
        alpha=alpha,
        float_format=float_format,
        xname=xname,
        yname=yname,
        title=title,
    )
    gate = (
        "hard (SPLA1)"
        if results.model.spec.hard
        else f"soft, gamma = {results.gamma:g}"
    )
    smry.add_text(f"K = {results.k} hyperplanes, {gate}. {_outcome_note(results)}")
    if hasattr(results, "flip_rate"):
        smry.add_text(_flip_note(results, alpha))
    return smry
