"""The Examples sections of plumestats' docstrings run and print what they show.

The same check as ``python -m pytest --doctest-modules plumestats``, one test
per module that has examples, so the default test run covers it; a module
whose optional extra is missing is skipped with the reason.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import plumestats

# the package the tests import (the installed one in CI's sdist job)
PACKAGE = Path(plumestats.__file__).resolve().parent
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py")
    if ">>>" in path.read_text(encoding="utf-8")
)
EXTRA_OF_MODULE = {"plumestats.sklearn": ("sklearn", "sklearn")}


def test_modules_with_examples_are_found():
    assert {"plumestats.model", "plumestats.formula.api"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name in EXTRA_OF_MODULE:
        module, extra = EXTRA_OF_MODULE[name]
        pytest.importorskip(module, reason=f"{name} needs the {extra} extra")
    result = doctest.testmod(
        importlib.import_module(name),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} docstring examples of {name} failed"
