"""The library's advice in the words of its other front ends.

Warnings and errors say what to try in the Python API's terms
(``fit(alpha=1e-3)``, ``maxiter``, ``freq_weights``). The command line and
the scikit-learn estimator pass them on; these functions reword the advice
into their own options, so that the fix a message suggests can be typed
where it is read. Advice with no counterpart there (``fit(init="mixed")`` on
the command line) keeps the Python API's words, which still say what it is.
"""

from __future__ import annotations

import re

__all__ = ["in_cli_words", "in_estimator_words"]

# fit(name=value) in a message, e.g. "Try more starts, e.g. fit(n_init=20)"
_FIT_CALL = re.compile(r"\bfit\((\w+)=([^()]*)\)")
# a value's quotes, which an option on the command line goes without
_QUOTES = "\"'"

# fit's keywords (and the model's), and for each the command line's option and
# the estimator's parameter (None: that front end has none)
_KEYWORDS = {
    "alpha": ("--alpha", "alpha"),
    "chunksize": ("--chunksize", None),
    "cov_type": ("--cov-type", None),
    "gamma": ("--gamma", None),
    "init": (None, "init"),
    "k": ("--k", None),
    "maxiter": ("--maxiter", "max_iter"),
    "mstep": ("--mstep", "mstep"),
    "n_init": ("--n-init", "n_init"),
    "random_state": ("--random-state", None),
    "reseat": ("--reseat", "reseat"),
}
# the library's own phrasings, anchored, so that a column or a file of the
# user's that happens to be named freq_weights is never rewritten
_CLI_PATTERNS = (
    # a bad value named at the start of a message: "k must be an integer >= 1"
    (
        re.compile(r"^(k|gamma|alpha|n_init|reseat|random_state|maxiter)\b(?= must)"),
        lambda match: _KEYWORDS[match[1]][0],
    ),
    (re.compile(r"^gamma=inf\b"), "--gamma inf"),
    (re.compile(r"HardPolyhedralLogit \(ps\.spla1\)"), "--hard (instead of --gamma)"),
    (re.compile(r"\(chunksize\)"), "(--chunksize N)"),
    (re.compile(r"\bor a smaller k\b"), "or a smaller --k"),
    (re.compile(r"\bIncrease maxiter\b"), "Increase --maxiter"),
    (re.compile(r"\bsmall L2 penalty \(alpha\)"), "small L2 penalty (--alpha)"),
    (
        re.compile(
            r"^--random-state must be None, a non-negative integer or a numpy "
            r"Generator"
        ),
        "--random-state must be a non-negative integer",
    ),
    (
        re.compile(r"^freq_weights are all zero\b"),
        "the --freq-weights column is all zeros",
    ),
    (re.compile(r"^freq_weights (has|must)\b"), r"the --freq-weights column \1"),
    (re.compile(r"\bpositive freq_weights\b"), "positive --freq-weights values"),
    (re.compile(r"\(after missing='drop' removed\b"), "(after dropping"),
    (
        re.compile(r"\bafter missing='drop' dropped the rows\b"),
        "after dropping the rows",
    ),
    # text among a column's numbers: the fix is in the file, not in pandas
    (
        re.compile(r"mark them missing, e\.g\. pd\.read_csv\(.*?errors='coerce'\)"),
        "correct them in the file, or leave those cells empty (missing)",
    ),
    # the command reads a CSV by position: data row 1 is index 0
    (
        re.compile(r"the first at index (\d+)\)"),
        lambda match: f"the first in data row {int(match.group(1)) + 1})",
    ),
    (
        re.compile(r"\(the first, ([^,()]*), at row (\d+)\)"),
        lambda match: f"(the first, {match[1]}, in data row {int(match[2]) + 1})",
    ),
)

# the engine's phrasings in the estimator's words, anchored as above
_ESTIMATOR_WORDS = (
    (re.compile(r"\bIncrease maxiter\b"), "Increase max_iter"),
    (re.compile(r"^maxiter\b(?= must)"), "max_iter"),
    (re.compile(r"^endog must\b"), "y must"),
    (re.compile(r"\bpositive freq_weights\b"), "positive sample_weight"),
    (re.compile(r"^freq_weights\b"), "sample_weight"),
    # the label-flip fit at its boundary: the estimator's words
    (
        re.compile(
            r"the fit is PolyhedralMixtureLogit's\. flip_logit has no standard "
            r"error\."
        ),
        "the fit is that of label_flips=False (flip_rate_ is 0).",
    ),
)


def in_cli_words(text: str) -> str:
    """The library's message ``text`` with its advice as command-line
    options: ``fit(alpha=1e-3)`` becomes ``--alpha 1e-3``, a message that
    starts ``n_init must`` starts ``--n-init must``. For the library's
    messages only: the command's own name the user's columns and files,
    which are not rewritten."""

    def option(match: re.Match) -> str:
        flag = _KEYWORDS.get(match[1], (None, None))[0]
        if flag is None:
            return match[0]
        return f"{flag} {match[2].strip(_QUOTES)}"

    return _reword(text, option, _CLI_PATTERNS)


def in_estimator_words(text: str, estimator: str = "PolyhedralClassifier") -> str:
    """The engine's message ``text`` with its advice as the estimator's
    parameters: ``fit(n_init=20)`` becomes ``PolyhedralClassifier(n_init=20)``,
    ``Increase maxiter`` ``Increase max_iter``, and the engine's
    ``freq_weights`` and ``endog`` ``sample_weight`` and ``y`` (anchored to
    the engine's phrasings: a feature named ``endog`` stays as it is)."""

    def parameter(match: re.Match) -> str:
        name = _KEYWORDS.get(match[1], (None, None))[1]
        return match[0] if name is None else f"{estimator}({name}={match[2]})"

    return _reword(text, parameter, _ESTIMATOR_WORDS)


def _reword(text: str, call, patterns) -> str:
    """``text`` with each ``fit(name=value)`` replaced by ``call``'s words,
    then each of the front end's ``(pattern, replacement)`` applied."""
    text = _FIT_CALL.sub(call, text)
    for pattern, replacement in patterns:
        text = pattern.sub(replacement, text)
    return text
