"""Inference helpers of the results: confidence levels, linear constraints on
the parameters, and the joint Wald tests of :meth:`wald_test_terms`.

PLUME's parameter vector is hyperplane-major, ``[w_1, ..., w_K]`` with each
block ordered like the design's ``p`` columns (then any extra parameters, such
as the label-flip model's ``flip_logit``). A design column therefore has one
parameter in every block: a term "is zero" only when its columns are zero in
every hyperplane, which is the joint test built here.
"""

from __future__ import annotations

import numbers
import re

import numpy as np
import pandas as pd
from patsy import DesignInfo, PatsyError
from statsmodels.stats.contrast import WaldTestResults
from statsmodels.tools.tools import nan_dot

from ._aliasing import Aliasing, of_model
from ._compat import formula_spec, term_slices
from ._validation import check_choice

__all__ = [
    "check_alpha",
    "fit_aliasing",
    "fixed_params",
    "held_by_design",
    "identified_parts",
    "parse_constraints",
    "term_constraints",
]


def fixed_params(results) -> np.ndarray:
    """Which parameters a fit holds fixed, not estimated: an L1 fit's zeros
    (``trimmed``) and a flip rate at its boundary 0 (the last)."""
    fixed = np.zeros(len(results.params), dtype=bool)
    trimmed = getattr(results, "trimmed", None)
    if trimmed is not None:
        fixed |= np.asarray(trimmed, dtype=bool)
    fixed[-1] |= bool(results.mle_retvals.get("boundary", False))
    return fixed


def fit_aliasing(results) -> Aliasing | None:
    """The :class:`~plumestats._aliasing.Aliasing` a fit's variances were
    computed with: its design's, for the unpenalised fit of a rank-deficient
    design; None for any other fit, or one pickled or loaded without it."""
    if "unidentified" not in results.mle_retvals:
        return None
    return of_model(results.model)


def held_by_design(results) -> np.ndarray:
    """The coefficients of a rank-deficient design's dependent columns, held
    while its unpenalised fit's information was inverted (all False for any
    other fit)."""
    aliasing = fit_aliasing(results)
    size = len(results.params)
    if aliasing is None:
        return np.zeros(size, dtype=bool)
    return aliasing.in_faces(aliasing.dependent, results.k, size)


def identified_parts(results, combinations: np.ndarray) -> tuple[np.ndarray, ...]:
    """The covariance and ``combinations`` (linear combinations of the
    parameters, which are its last axis) to take their variances from, less
    the parameters the fit held fixed, which have no variance: a flip rate at
    its boundary 0, an L1 fit's zeros and, for the unpenalised fit of a
    rank-deficient design, the dependent columns' coefficients (held while
    the information was inverted: a generalised inverse, which gives every
    estimable combination its variance). There the covariance is the one
    before the unidentified coefficients' variances were set to NaN, and a
    combination that is not estimable (:class:`~plumestats._aliasing.Aliasing`)
    is NaN. Any other NaN variance (singular information) stays, so that its
    standard errors are NaN, not zero."""
    held = fixed_params(results)
    aliasing = fit_aliasing(results)
    if aliasing is None:
        cov = np.asarray(results.cov_params(), dtype=float)
    else:
        cov = results._identified_cov
        held = held | held_by_design(results)
        flat = combinations.reshape(-1, held.size)
        ok = aliasing.estimable(flat, results.k).reshape(combinations.shape[:-1])
        combinations = np.where(ok[..., None], combinations, np.nan)
    if not held.any():
        return cov, combinations
    free = ~held
    return cov[np.ix_(free, free)], combinations[..., free]


def check_alpha(alpha, name: str = "alpha") -> float:
    """A significance level strictly between 0 and 1.

    In ``q = ppf(1 - alpha / 2)`` an ``alpha`` outside (0, 1) gives, silently,
    infinite bounds (0), reversed ones (1 to 2) or NaN (below 0, above 2);
    refuse it.
    """
    if isinstance(alpha, np.ndarray) and alpha.ndim == 0:
        alpha = alpha.item()  # np.array(0.1), as statsmodels accepts
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, numbers.Real)
        or not 0.0 < float(alpha) < 1.0
    ):
        raise ValueError(
            f"{name} must be a number strictly between 0 and 1 (one minus the "
            f"confidence level: 0.05 gives 95% intervals), got {alpha!r}"
        )
    return float(alpha)


# ------------------------------------------------------------ wald_test_terms
def _design_terms(model) -> list[tuple[str, list[int]]] | None:
    """``(term name, design column indices)`` of a formula model's terms, or
    ``None`` without a formula."""
    spec = formula_spec(model.data)
    if spec is None:
        return None
    columns = list(range(model.k_vars))
    return [(name, columns[where]) for name, where in term_slices(spec)]


def term_constraints(
    model, n_params: int, skip_single: bool, combine_terms
) -> tuple[list, list]:
    """The constraint matrices of :meth:`wald_test_terms`.

    Each term (each column without a formula) gets the rows of the identity
    that pick its columns in every hyperplane, ``K * len(columns)`` rows; each
    ``combine_terms`` entry stacks the rows of every term (column) whose name
    contains it, as statsmodels does. ``skip_single`` leaves out the terms of
    a single design column. Returns ``(constraints, combined)``, lists of
    ``(name, matrix)``.
    """
    identity = np.eye(n_params)
    p = model.k_vars

    def rows(columns: list[int]) -> np.ndarray:
        return identity[[k * p + j for k in range(model.k) for j in columns]]

    terms = _design_terms(model)
    if terms is None:  # the design's columns stand for the terms
        terms = [(name, [j]) for j, name in enumerate(model.exog_names)]
    constraints = [
        (name, rows(columns))
        for name, columns in terms
        if not (skip_single and len(columns) == 1)
    ]
    combined = []
    for part in combine_terms:
        matched = [columns for name, columns in terms if part in name]
        if not matched:
            raise ValueError(
                f"combine_terms entry {part!r} is not part of any term's name; "
                f"the terms are {[name for name, _ in terms]}"
            )
        combined.append((part, rows([j for columns in matched for j in columns])))
    return constraints, combined


# ------------------------------------------------------- string constraints
def _is_named_form(r_matrix) -> bool:
    """A constraint given by parameter names (a string, a list of strings or a
    ``{name: value}`` dict) rather than by matrices."""
    if isinstance(r_matrix, (str, dict)):
        return True
    return (
        isinstance(r_matrix, list)
        and len(r_matrix) > 0
        and all(isinstance(item, str) for item in r_matrix)
    )


def _unknown_token(exc: Exception, known) -> str | None:
    """The name patsy could not recognise, read from where its error points
    (``None`` when the word there is a known name: the syntax is at fault)."""
    origin = getattr(exc, "origin", None)
    if origin is None:
        return None
    # patsy points where it stopped recognising, which may be inside a name
    # ("h1:x1x" at "x"): the whole word around that point
    before = re.search(r"[^\s=,+\-*/()]*$", origin.code[: origin.start])
    after = re.match(r"[^\s=,+\-*/()]*", origin.code[origin.start :])
    word = before.group(0) + after.group(0)
    # a factor's column ("C(thal)[T.6]", "h2:C(g)[T.b]") is a word with
    # brackets: read it whole, not as the "C" before its parenthesis
    factor = _FACTOR_COLUMN.match(origin.code, origin.start - len(before.group(0)))
    if factor is not None:
        word = factor.group(0)
    # "h1:x12" reads as the name h1:x1, then a stray number
    return word if word and word not in known else None


# a (prefixed) column of a formula's transformed term: name(...)[level]
_FACTOR_COLUMN = re.compile(r"[\w.:]*[\w.]\([^()]*(\([^()]*\)[^()]*)*\)(\[[^\]]*\])?")


def parse_constraints(model, r_matrix):
    """``(R, q)`` for a constraint given by parameter names, for statsmodels'
    ``t_test``, ``f_test`` and ``wald_test``; other forms come back unchanged.

    The names are ``h<k>:<column>``. With ``k=1`` the bare column names are
    accepted as well (``"x1 = 0"`` for ``"h1:x1 = 0"``): the one block is in
    the design's column order, so they pick the same parameters. A constraint
    that cannot be parsed raises a ``ValueError`` naming the unknown name (if
    that is the problem) and the valid ones.
    """
    if not _is_named_form(r_matrix):
        _check_matrix_form(model, r_matrix)
        return r_matrix
    if not (r_matrix if isinstance(r_matrix, dict) else "".join(r_matrix).strip()):
        raise ValueError(
            f"the constraint {r_matrix!r} is empty: write one by parameter "
            f"names, e.g. '{model.data.param_names[-1]} = 0'"
        )
    names = list(model.data.param_names)
    # with k = 1 the bare column names are further names of the first block's
    # parameters; their coefficients are added onto those (mixing is fine)
    bare = list(model.exog_names) if model.k == 1 else []
    try:
        constraint = DesignInfo(names + bare).linear_constraint(r_matrix)
    except (PatsyError, ValueError, IndexError) as exc:
        raise ValueError(_constraint_message(model, r_matrix, exc)) from exc
    coefs = constraint.coefs[:, : len(names)].copy()
    coefs[:, : len(bare)] += constraint.coefs[:, len(names) :]
    return coefs, constraint.constants


def _check_matrix_form(model, r_matrix) -> None:
    """A constraint matrix ``R`` (or ``(R, q)``) with one column per parameter
    and a ``q`` with one value per row, or a ``ValueError`` that says so (patsy
    said "wrong shape for coefs")."""
    matrix, values = (
        r_matrix
        if isinstance(r_matrix, tuple) and len(r_matrix) == 2
        else (r_matrix, None)
    )
    try:
        matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "r_matrix must be constraints by parameter name (e.g. 'h1:x1 = 0'), "
            f"a matrix of numbers or an (R, q) pair; got {type(r_matrix).__name__}"
        ) from exc
    n_params = len(model.data.param_names)
    if matrix.ndim != 2 or matrix.shape[1] != n_params or matrix.shape[0] == 0:
        raise ValueError(
            f"r_matrix must have one column per parameter ({n_params}: "
            f"{', '.join(model.data.param_names)}) and at least one row; got shape "
            f"{np.shape(matrix)}"
        )
    if values is not None and np.size(values) != matrix.shape[0]:
        raise ValueError(
            f"q of the (R, q) pair must have one value per row of R "
            f"({matrix.shape[0]}), got {np.size(values)}"
        )


def _constraint_message(model, r_matrix, exc: Exception) -> str:
    bare = list(model.exog_names) if model.k == 1 else []
    token = _unknown_token(exc, [*model.data.param_names, *bare])
    if token is not None and token in model.exog_names and model.k > 1:
        problem = (
            f"{token!r} is a design column, not a parameter: with k={model.k} "
            f"name its hyperplane, e.g. 'h1:{token}'"
        )
    elif token is not None:
        problem = f"{token!r} is not a parameter name"
    else:  # patsy's first line says what is malformed
        problem = str(exc).splitlines()[0]
    columns = ", ".join(repr(name) for name in model.exog_names)
    extras = list(model.data.param_names)[model.k * model.k_vars :]
    extra = f", and {', '.join(repr(name) for name in extras)}" if extras else ""
    if model.k == 1:
        pattern = "h1:<column> (or the bare column)"
    else:
        pattern = f"h<k>:<column> for k = 1..{model.k}"
    return (
        f"could not parse the constraint {r_matrix!r}: {problem}. The parameters "
        f"are named {pattern} with column one of {columns}{extra}; e.g. "
        f"'h1:{model.exog_names[-1]} = 0'"
    )


class InferenceMixin:
    """statsmodels' tests and intervals, with constraints named by parameter
    (``"h1:x1 = h2:x1"``), as methods of
    :class:`~plumestats.results.PolyhedralMixtureLogitResults`."""

    def cov_params(
        self, r_matrix=None, column=None, scale=None, cov_p=None, other=None
    ):
        """statsmodels' ``cov_params``. The parameters a fit holds fixed (an
        L1 fit's zeros, the label-flip model's flip rate at its boundary)
        and the coefficients a rank-deficient design leaves unidentified
        have NaN variances; a linear combination that leaves them out is the
        estimated parameters' alone: ``0 * NaN`` counts as 0 there, as
        statsmodels does after its own L1 fits, so that ``t_test``,
        ``f_test`` and ``wald_test`` work on the estimated parameters. Of a
        rank-deficient design's fit, an estimable combination has its
        variance (``x1 - x2`` when ``x4 = x1 + x2``), any other NaN
        (``identified_parts``)."""
        if r_matrix is None or not self._holds_fixed_params():
            return super().cov_params(
                r_matrix=r_matrix, column=column, scale=scale, cov_p=cov_p, other=other
            )
        if column is not None:
            raise ValueError("Column should be specified without other arguments.")
        cov = super().cov_params(scale=scale) if cov_p is None else np.asarray(cov_p)
        one_row = np.ndim(r_matrix) == 1  # statsmodels returns a scalar then
        r_matrix = np.atleast_2d(r_matrix)
        other = r_matrix if other is None else np.atleast_2d(other)
        if cov_p is None and "unidentified" in self.mle_retvals:
            r_matrix, other, cov = self._estimable_parts(r_matrix, other)
        out = nan_dot(r_matrix, nan_dot(cov, other.T))
        return out[0, 0] if one_row and out.shape == (1, 1) else out

    def _estimable_parts(self, r_matrix, other) -> tuple[np.ndarray, ...]:
        """``r_matrix``, ``other`` and the covariance of a rank-deficient
        design's fit (``identified_parts``): a combination that weighs a
        fixed parameter stays NaN, as :func:`~statsmodels.tools.tools.nan_dot`
        makes it."""
        fixed = fixed_params(self)
        both = np.vstack([r_matrix, other]).astype(float)
        both[np.any(both[:, fixed] != 0, axis=1)] = np.nan
        cov, both = identified_parts(self, both)
        return both[: len(r_matrix)], both[len(r_matrix) :], cov

    def _holds_fixed_params(self) -> bool:
        """Whether some parameter is held fixed, not estimated, or not
        identified (NaN variances by design)."""
        return bool(fixed_params(self).any()) or "unidentified" in self.mle_retvals

    def conf_int(self, alpha: float = 0.05, *, method: str = "wald"):
        """Confidence intervals of the parameters.

        Parameters
        ----------
        alpha : float
            One minus the confidence level, strictly between 0 and 1.
        method : {"wald", "profile", "bootstrap"}
            ``"wald"``: ``params +- z * bse`` with the fit's ``cov_type``;
            ``"profile"``: profile-likelihood intervals, the values of each
            parameter that a likelihood-ratio test at level ``alpha`` does
            not reject (R's ``confint`` for a glm; ``plumestats._profile``),
            for an unpenalised fit with a smooth gate, in memory;
            ``"bootstrap"``: percentile intervals of the last
            :meth:`bootstrap`.

        Returns
        -------
        DataFrame
            Lower and upper bounds, one row per parameter (the same shape
            for every method).
        """
        check_choice(method, "method", ("wald", "profile", "bootstrap"))
        alpha = check_alpha(alpha)
        if method == "wald":
            return super().conf_int(alpha)
        if method == "profile":
            from ._profile import profile_intervals

            return profile_intervals(self, alpha)
        return self._require_bootstrap().conf_int(alpha).to_numpy()

    def t_test(self, r_matrix, cov_p=None, use_t=None):
        """Wald (z) tests of linear constraints, as statsmodels' ``t_test``.

        Parameters
        ----------
        r_matrix : str, list of str, dict, array_like or (R, q) tuple
            The constraints; by name, e.g. ``"h1:x1 = h2:x1"`` (with ``k=1``
            also ``"x1 = 0"``). A name that is not a parameter's gives a
            ``ValueError`` that lists the valid ones.
        cov_p : array_like, optional
            Covariance to use instead of ``cov_params()``.
        use_t : bool, optional
            Use the t distribution (default: the fit's ``use_t``, False).

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
        """
        r_matrix = parse_constraints(self.model, r_matrix)
        return super().t_test(r_matrix, cov_p=cov_p, use_t=use_t)

    def f_test(self, r_matrix, cov_p=None, invcov=None):
        """Joint F test of linear constraints, as statsmodels' ``f_test``;
        ``r_matrix`` as for
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test`."""
        r_matrix = parse_constraints(self.model, r_matrix)
        self._refuse_untestable(r_matrix, cov_p, invcov)
        return super().f_test(r_matrix, cov_p=cov_p, invcov=invcov)

    def wald_test(
        self,
        r_matrix,
        cov_p=None,
        invcov=None,
        use_f=None,
        df_constraints=None,
        scalar: bool = True,
    ):
        """Joint Wald test of linear constraints, as statsmodels'
        ``wald_test``; ``r_matrix`` as for
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test`."""
        r_matrix = parse_constraints(self.model, r_matrix)
        self._refuse_untestable(r_matrix, cov_p, invcov)
        return super().wald_test(
            r_matrix,
            cov_p=cov_p,
            invcov=invcov,
            use_f=use_f,
            df_constraints=df_constraints,
            scalar=scalar,
        )

    def _untestable(self, r_matrix) -> tuple[int, np.ndarray, bool | None] | None:
        """The first row of the constraint matrix ``r_matrix`` that no Wald
        test can take, the parameters to name and whether they are held fixed
        (an L1 fit's zeros, a flip rate at its boundary: no variance) rather
        than not identified (a rank-deficient design), ``None`` when no
        parameter has a variance (a separated fit); None if every row can."""
        rows = np.atleast_2d(np.asarray(r_matrix, dtype=float))
        fixed = fixed_params(self)
        weighs_fixed = np.flatnonzero((rows[:, fixed] != 0).any(axis=1))
        if weighs_fixed.size:
            first = int(weighs_fixed[0])
            return first, (rows[first] != 0) & fixed, True
        if not np.isfinite(np.asarray(self.bse)).any():
            return 0, rows[0] != 0, None  # no variance at all (a separated fit)
        aliasing = fit_aliasing(self)
        if aliasing is None:
            return None
        bad = np.flatnonzero(~aliasing.estimable(rows, self.k))
        if not bad.size:
            return None
        weighed = rows[bad[0]] != 0
        if (weighed & self.mle_retvals["unidentified"]).any():
            weighed &= self.mle_retvals["unidentified"]
        return int(bad[0]), weighed, False

    def _refuse_untestable(self, r_matrix, cov_p, invcov) -> None:
        """A clear error for a joint test of what the fit does not estimate
        (statsmodels' says only "asymptotically non-normal")."""
        if cov_p is not None or invcov is not None:
            return
        # (a parsed constraint string is the pair (R, q))
        matrix = r_matrix[0] if isinstance(r_matrix, tuple) else r_matrix
        found = self._untestable(matrix)
        if found is None:
            return
        row, weighed, held = found
        if held is None:
            why = (
                "the fit is separated: its maximum is at infinity; fit with an L2 "
                "penalty (alpha > 0)"
                if self.mle_retvals.get("separation")
                else "its information matrix is singular"
            )
            raise ValueError(f"no Wald test: every standard error is NaN ({why})")
        names = ", ".join(
            repr(self.model.data.param_names[j]) for j in np.flatnonzero(weighed)
        )
        fixed = f"it weighs {names}, which the fit holds fixed with no variance ("
        if not held:
            why = (
                "the design matrix is rank deficient and the constraint weighs "
                f"{names} along a null direction of the design (coefficients it "
                "does not identify). Test an estimable combination (e.g. the "
                "difference of the coefficients of two duplicated columns), drop "
                "the dependent columns, or fit with an L2 penalty (alpha > 0)"
            )
        elif np.any(weighed & np.asarray(self.trimmed, dtype=bool)):
            why = fixed + (
                "an L1 fit's zero). Test the estimated parameters, or refit "
                "without the L1 penalty"
            )
        else:
            why = fixed + "a flip rate at its boundary 0). Test the other parameters"
        raise ValueError(f"constraint {row + 1} is not estimable: {why}")

    def t_test_pairwise(self, term_name, *args, **kwargs):
        """statsmodels' pairwise tests of a categorical term's levels, for
        ``k=1``; with several hyperplanes a level has one coefficient in each,
        so name them in
        :meth:`~plumestats.api.PolyhedralMixtureLogitResults.t_test` instead
        (``"h2:C(g)[T.b] = 0"``)."""
        if self.k > 1:
            raise NotImplementedError(
                f"t_test_pairwise compares the levels of one coefficient block; "
                f"with k={self.k} each level has one coefficient per hyperplane: "
                "test them with t_test, naming the hyperplane, e.g. "
                "'h1:C(g)[T.c] - h1:C(g)[T.b] = 0'"
            )
        return super().t_test_pairwise(term_name, *args, **kwargs)

    def score_test(self, *args, **kwargs):
        """Not available: statsmodels' score test of added variables needs the
        model's score at restricted parameters, which plumestats does not build.
        Fit the larger model and compare the two with
        :func:`~plumestats.api.compare_lr_test`, or test its coefficients with
        :meth:`wald_test`."""
        raise NotImplementedError(
            "score_test is not available: fit the model with the extra columns "
            "and use ps.compare_lr_test(smaller, larger), or wald_test on them"
        )

    def set_null_options(self, *args, **kwargs):
        """Not available: the null model is always the intercept-only logit,
        whose log-likelihood (``llnull``) is in closed form."""
        raise NotImplementedError(
            "set_null_options is not available: llnull is always the "
            "intercept-only logit's, in closed form"
        )

    def wald_test_terms(
        self,
        skip_single: bool = False,
        extra_constraints=None,
        combine_terms=None,
        scalar: bool = True,
    ):
        """Joint Wald tests that each term's coefficients are zero in every
        hyperplane.

        As statsmodels' ``wald_test_terms``, whose terms are column slices of
        the design, i.e. of the first hyperplane's block only. Here a term's
        test covers its columns in all K blocks, ``K * (columns of the term)``
        constraints; with ``k=1`` the table equals ``Logit``'s.

        Parameters
        ----------
        skip_single : bool, default False
            Leave out the terms of a single design column (for K > 1 their
            test still has K constraints, one per hyperplane).
        extra_constraints : list of (str, ndarray), optional
            More tests, as ``(name, constraint matrix)`` with one column per
            parameter (``len(params)``).
        combine_terms : list of str, optional
            Each string gives one more joint test, of every term whose name
            contains it (of every column, without a formula), in every
            hyperplane.
        scalar : bool, default True
            Return each statistic as a float (passed to :meth:`wald_test`).

        Returns
        -------
        statsmodels.stats.contrast.WaldTestResults
            ``table``: a DataFrame with one row per test and the columns
            ``statistic``, ``pvalue`` and ``df_constraint`` (printed as
            ``chi2``, ``P>chi2``, ``df constraint``).

        Notes
        -----
        Terms come from the formula (``Intercept``, ``C(g)``, ``x1``, ...);
        without one each design column is a term. A term the fit does not
        estimate (an L1 fit's zeros, coefficients a rank-deficient design
        leaves unidentified) gets NaN. The label-flip model's
        ``flip_logit`` belongs to no term; test it with :meth:`wald_test`.
        """
        constraints, combined = term_constraints(
            self.model, len(self.params), bool(skip_single), combine_terms or []
        )
        use_t = bool(self.use_t)
        rows, index = [], []
        for name, matrix in [*constraints, *combined, *(extra_constraints or [])]:
            if self._untestable(matrix):  # a term the fit does not estimate
                rows.append([np.nan, np.nan, len(matrix)] + [np.nan] * use_t)
                index.append(name)
                continue
            test = self.wald_test(matrix, scalar=scalar)
            # the rank-adjusted number of constraints, as statsmodels reports
            df_constraint = int(test.df_num if use_t else test.df_denom)
            row = [test.statistic, test.pvalue, df_constraint]
            if use_t:
                row.append(test.df_denom)
            rows.append(row)
            index.append(name)
        columns = ["statistic", "pvalue", "df_constraint"]
        if use_t:
            columns.append("df_denom")
        table = pd.DataFrame(rows, index=index, columns=columns)
        return WaldTestResults(None, ["chi2", "F"][use_t], None, table=table)
