"""The packaging files agree with each other: the dependency floors in
pyproject.toml are the versions the floor job of ``.ci/run`` pins, and the
citation file names the version being released."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ("numpy", "scipy", "statsmodels", "pandas", "patsy")


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="reading TOML needs Python 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _floors(requirements) -> dict[str, str]:
    """``{name: version}`` of the ``name>=version`` requirements."""
    floors = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement)
        assert match, f"a core dependency is not written 'name>=version': {requirement}"
        floors[match[1].lower()] = match[2]
    return floors


def test_floor_job_pins_the_floors_of_pyproject():
    oldest = ROOT / ".ci" / "oldest.txt"
    if not oldest.is_file():
        pytest.skip(".ci/oldest.txt is not here (an sdist does not carry .ci/)")
    pins = {}
    for line in oldest.read_text().splitlines():
        requirement = line.split("#")[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9.]+)", requirement)
        if match:
            pins[match[1].lower()] = match[2]
    floors = _floors(_pyproject()["project"]["dependencies"])
    assert sorted(floors) == sorted(CORE)
    assert {name: pins.get(name) for name in CORE} == floors


def test_citation_names_the_package_version_and_the_papers_authors():
    citation = ROOT / "CITATION.cff"
    if not citation.is_file():
        pytest.skip("CITATION.cff is not here")
    text = citation.read_text()
    version = _pyproject()["project"]["version"]
    assert re.search(rf"^version: {re.escape(version)}$", text, re.MULTILINE)
    authors = [("Shah", "Kulin"), ("Sastry", "P. S."), ("Manwani", "Naresh")]
    for family, given in authors:
        assert f"family-names: {family}\n      given-names: {given}" in text
