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
from patsy import DesignInfo, PatsyError

from ._compat import formula_spec, term_slices

__all__ = ["check_alpha", "parse_constraints", "term_constraints"]


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
    # "h1:x12" reads as the name h1:x1, then a stray number
    return word if word and word not in known else None


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
