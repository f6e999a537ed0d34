"""The bad-input catalogue (``tests/bad_input_cases.py``), case by case.

Every case gets what it promises: a clear error from plumestats' own code (or,
for the scikit-learn estimator's own validation, scikit-learn's) holding the
named fragment, a statsmodels warning, or a correct fit; and no case leaks a
``RuntimeWarning`` or a warning of another library. ``docs/errors.md`` lists
every case (``test_the_docs_list_every_case``).
"""

from __future__ import annotations

import traceback
import warnings
from pathlib import Path

import pytest
from bad_input_cases import CASES, Case
from statsmodels.tools.sm_exceptions import ModelWarning

import plumestats

PACKAGE = Path(plumestats.__file__).resolve().parent
ERRORS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


def _innermost_file(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    return frames[-1].filename if frames else ""


def _allowed_warning(category) -> bool:
    if issubclass(category, ModelWarning):  # statsmodels' and plumestats' own
        return True
    try:
        from sklearn.exceptions import ConvergenceWarning
    except ImportError:  # pragma: no cover - the sklearn extra
        return False
    return issubclass(category, ConvergenceWarning)


def _run(case: Case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return case.run(), None, caught
        except Exception as exc:  # the case decides what is allowed
            return None, exc, caught


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_case(case):
    if case.name.startswith("sklearn"):
        pytest.importorskip("sklearn")
    value, error, caught = _run(case)
    leaked = [w for w in caught if not _allowed_warning(w.category)]
    assert not leaked, f"leaked {leaked[0].category.__name__}: {leaked[0].message}"
    if case.outcome == "refuses":
        assert error is not None, f"no error; got {value!r}"
        assert isinstance(error, case.kind), f"{type(error).__name__}: {error}"
        assert case.says in str(error), str(error)
        origin = Path(_innermost_file(error)).resolve()
        if case.origin == "plumestats":
            assert PACKAGE in origin.parents, (
                f"raised in {origin}, not by plumestats: {type(error).__name__}: "
                f"{error}"
            )
        return
    assert error is None, f"{type(error).__name__}: {error}"
    if case.outcome == "warns":
        messages = [str(w.message) for w in caught if issubclass(w.category, case.kind)]
        assert any(case.says in m for m in messages), [str(w.message) for w in caught]
    if case.check is not None:
        assert case.check(value), f"the check failed on {value!r}"


def test_the_catalogue_has_two_hundred_named_cases():
    names = [case.name for case in CASES]
    assert len(set(names)) == len(names), "two cases share a name"
    assert len(names) >= 200


def test_the_docs_list_every_case():
    page = ERRORS_PAGE.read_text()
    missing = [case.name for case in CASES if f"| {case.name} |" not in page]
    assert not missing, (
        f"docs/errors.md lacks {len(missing)} catalogue cases, e.g. {missing[:3]}; "
        "regenerate its catalogue section with "
        "`python tests/test_bad_input_catalogue.py`"
    )


def catalogue_markdown() -> str:
    """The catalogue section of docs/errors.md."""
    lines = [
        "| case | what the user gets |",
        "|---|---|",
    ]
    for case in CASES:
        if case.outcome == "refuses":
            kinds = case.kind if isinstance(case.kind, tuple) else (case.kind,)
            got = f'`{"`/`".join(k.__name__ for k in kinds)}` "... {case.says} ..."'
        elif case.outcome == "warns":
            got = f'`{case.kind.__name__}` "... {case.says} ..."'
        else:
            got = "a correct fit"
        got = got.replace("|", "\\|")
        lines.append(f"| {case.name} | {got} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(catalogue_markdown())
