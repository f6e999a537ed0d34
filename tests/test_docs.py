"""The documentation builds with warnings as errors, and its API reference is complete.

One Sphinx build per session (about 15 s: autosummary stubs and two quick
examples, no notebooks). It needs the ``docs`` extra; without it the tests are
skipped with the reason, except under ``CI``, whose test command installs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import tempfile
from html import unescape
from pathlib import Path

import pytest

import plumestats.api as ps

DOCS = Path(__file__).resolve().parents[1] / "docs"
BUILD_NEEDS = ("sphinx", "numpydoc", "myst_parser", "pydata_sphinx_theme", "matplotlib")


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    """The site built with ``sphinx-build -n -W --keep-going -b html`` (nitpicky: a
    cross-reference that resolves nowhere fails the build)."""
    missing = [name for name in BUILD_NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        reason = (
            f'building the docs needs {", ".join(missing)}: pip install -e ".[docs]"'
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI's test command installs the docs extra")
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("html")
    cmd = [sys.executable, "-m", "sphinx", "-n", "-W", "--keep-going", "-b", "html"]
    with _one_build_at_a_time():
        proc = subprocess.run(
            [*cmd, "-q", str(DOCS), str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stderr[-5000:]}"
    return out


@contextlib.contextmanager
def _one_build_at_a_time():
    """Hold a lock on this checkout's docs while Sphinx builds them.

    A build empties and refills ``docs/generated`` (the autosummary stubs
    and the examples' output): pytest-xdist without ``--dist loadfile``
    spreads this file's tests over workers, each builds, and one build
    emptied the folder under the other (``FileExistsError`` and missing
    pages, 12 errors of 14 tests). Where ``fcntl`` is missing (Windows) the
    builds are not serialised: run with ``--dist loadfile`` there.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    digest = hashlib.sha1(str(DOCS).encode()).hexdigest()[:12]
    lock = Path(tempfile.gettempdir()) / f"plumestats-docs-{digest}.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _text(path: Path) -> str:
    assert path.is_file(), f"{path.name} was not built"
    return unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def _public_members(cls) -> list[str]:
    # a warning's args, add_note and with_traceback are Python's, not ours
    builtin = set(dir(BaseException)) if issubclass(cls, BaseException) else set()
    return [
        name for name in dir(cls) if not name.startswith("_") and name not in builtin
    ]


def test_every_public_name_has_an_api_page(html):
    index = _text(html / "generated" / "plumestats.api.html")
    assert ps.__all__
    for name in ps.__all__:
        assert re.search(rf"\b{re.escape(name)}\b", index), f"{name} not listed"
        page = _text(html / "generated" / f"plumestats.api.{name}.html")
        assert name in page


@pytest.mark.parametrize(
    "cls",
    [
        ps.PolyhedralMixtureLogitResults,
        *[
            getattr(ps, name)
            for name in ps.__all__
            if inspect.isclass(getattr(ps, name))
            and name != "PolyhedralMixtureLogitResults"
        ],
    ],
    ids=lambda cls: cls.__name__,
)
def test_every_public_member_of_a_class_is_documented(html, cls):
    stem = f"plumestats.api.{cls.__name__}"
    page = _text(html / "generated" / f"{stem}.html")
    for member in _public_members(cls):
        assert re.search(rf"\b{re.escape(member)}\b", page), f"{member} missing"
        assert (html / "generated" / f"{stem}.{member}.html").is_file()


def test_the_scikit_learn_estimator_has_its_api_pages(html):
    from plumestats.sklearn import PolyhedralClassifier

    stem = "plumestats.sklearn.PolyhedralClassifier"
    page = _text(html / "generated" / f"{stem}.html")
    for member in ("fit", "predict", "predict_proba", "decision_function", "score"):
        assert re.search(rf"\b{member}\b", page), f"{member} missing"
        assert (html / "generated" / f"{stem}.{member}.html").is_file()
    assert PolyhedralClassifier.__doc__.split("\n")[0].strip() in page


def test_results_summary_methods_are_the_ones_users_call(html):
    # the statsmodels names users look for, inherited or ours
    page = _text(
        html / "generated" / "plumestats.api.PolyhedralMixtureLogitResults.html"
    )
    for name in (
        "bse",
        "pvalues",
        "conf_int",
        "t_test",
        "wald_test",
        "summary",
        "summary2",
        "predict",
        "get_prediction",
        "resid_pearson",
        "get_influence",
        "rademacher_bound",
        "remove_data",
        "save",
        "load",
    ):
        assert re.search(rf"\b{name}\b", page)


def test_pages_render_the_model_the_examples_and_the_benchmarks(html):
    model = _text(html / "model.html")
    assert "Rademacher" in model and "label switching" in model
    examples = _text(html / "examples.html")
    # the real-data example's printed output and figure, produced at build time
    assert "Information criteria by number of faces" in examples
    assert (html / "_images" / "real_data.png").is_file()
    table1 = _text(html / "benchmarks" / "table1.html")
    assert "nested cross-validation" in table1
    assert (html / "_images" / "table1.png").is_file()
    for page in ("errors.html", "getting_started.html", "user_guide/index.html"):
        assert (html / page).is_file()
