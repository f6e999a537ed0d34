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
# a bad value named at the start of a message: "k must be an integer >= 1"
_NAMED_FIRST = re.compile(
    r"^(k|gamma|alpha|n_init|reseat|random_state|maxiter)\b(?= must)"
)

# fit's keywords (and the model's) and the command line's options for them
_CLI_OPTIONS = {
    "alpha": "--alpha",
    "chunksize": "--chunksize",
    "cov_type": "--cov-type",
    "gamma": "--gamma",
    "k": "--k",
    "maxiter": "--maxiter",
    "mstep": "--mstep",
    "n_init": "--n-init",
    "random_state": "--random-state",
    "reseat": "--reseat",
}
# the library's own phrasings, anchored, so that a column or a file of the
# user's that happens to be named freq_weights is never rewritten
_CLI_PATTERNS = (
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
    (re.compile(r"^cov_kwds\['groups'\] has\b"), "the --cluster column has"),
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

# fit's keywords and PolyhedralClassifier's parameters for them
_ESTIMATOR_PARAMS = {
    "alpha": "alpha",
    "init": "init",
    "maxiter": "max_iter",
    "mstep": "mstep",
    "n_init": "n_init",
    "reseat": "reseat",
}
_ESTIMATOR_WORDS = (
    (re.compile(r"\bIncrease maxiter\b"), "Increase max_iter"),
    (re.compile(r"^endog must\b"), "y must"),
    (re.compile(r"\bpositive freq_weights\b"), "positive sample_weight"),
    (re.compile(r"^freq_weights\b"), "sample_weight"),
)


def in_cli_words(text: str) -> str:
    """The library's message ``text`` with its advice as command-line
    options: ``fit(alpha=1e-3)`` becomes ``--alpha 1e-3``, a message that
    starts ``n_init must`` starts ``--n-init must``. For the library's
    messages only: the command's own name the user's columns and files,
    which are not rewritten."""

    def option(match: re.Match) -> str:
        flag = _CLI_OPTIONS.get(match.group(1))
        value = match.group(2).strip("\"'")
        return match.group(0) if flag is None else f"{flag} {value}"

    text = _FIT_CALL.sub(option, text)
    text = _NAMED_FIRST.sub(lambda match: _CLI_OPTIONS[match.group(1)], text)
    for pattern, replacement in _CLI_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def in_estimator_words(text: str, estimator: str = "PolyhedralClassifier") -> str:
    """The engine's message ``text`` with its advice as the estimator's
    parameters: ``fit(n_init=20)`` becomes ``PolyhedralClassifier(n_init=20)``,
    ``Increase maxiter`` ``Increase max_iter``, and the engine's
    ``freq_weights`` and ``endog`` ``sample_weight`` and ``y`` (anchored to
    the engine's phrasings: a feature named ``endog`` stays as it is)."""

    def parameter(match: re.Match) -> str:
        name = _ESTIMATOR_PARAMS.get(match.group(1))
        if name is None:
            return match.group(0)
        return f"{estimator}({name}={match.group(2)})"

    text = _FIT_CALL.sub(parameter, text)
    for pattern, word in _ESTIMATOR_WORDS:
        text = pattern.sub(word, text)
    return text
