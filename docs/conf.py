"""Sphinx configuration of the plumestats documentation.

Build with ``python -m sphinx -n -W --keep-going -b html docs docs/_build/html``
(needs ``pip install "plumestats[docs]"``). Nothing here executes notebooks: the
only code run at build time is five quick examples, whose printed output and
figures the pages show (a few seconds).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import shutil
import sys
from pathlib import Path

import matplotlib

import plumestats

matplotlib.use("Agg")  # examples save figures; never open a window

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = DOCS / "generated"  # autosummary stubs and example output (not in git)
# Start from nothing: a stub left by a name since removed from plumestats.api
# would be a page outside every toctree, which -W turns into an error.
shutil.rmtree(GENERATED, ignore_errors=True)
GENERATED.mkdir()

project = "plumestats"
author = "plumestats developers"
copyright = "plumestats developers"
release = plumestats.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: $...$ and $$...$$ maths as in docs/model.md, ::: fences, heading anchors
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# The API pages are generated from plumestats.api.__all__ (see api.rst and the
# module template): a public name added there is documented without editing docs.
autosummary_generate = True
autosummary_ignore_module_all = False
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections already give types

# numpydoc's own member tables need every inherited statsmodels method to have a
# stub page; the class template lists methods and attributes itself instead.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping = {}  # offline builds: no inventories fetched

html_theme = "pydata_sphinx_theme"
html_title = f"plumestats {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []


# Docstrings inherited from these packages are written for their own Sphinx
# sites (:ref: labels, glossary terms we do not have); rendered here they fail -W.
_FOREIGN = ("sklearn",)
_ROLE = re.compile(r":[\w:]+:`([^`<]*?)\s*(?:<[^`]*>)?`")


def _summarise_foreign_docstring(app, what, name, obj, options, lines):
    """Show an inherited third-party member by its summary line and its origin."""
    module = getattr(obj, "__module__", None) or ""
    if not module.startswith(_FOREIGN) or not lines:
        return
    summary = []
    for line in lines:
        if not line.strip():
            break
        summary.append(_ROLE.sub(r"\1", line.strip()))
    lines[:] = [
        " ".join(summary),
        "",
        f"Inherited from ``{module}``; see that package's documentation.",
    ]


def setup(app):
    app.connect("autodoc-process-docstring", _summarise_foreign_docstring)


def _run_example(name: str, argv: list[str]) -> None:
    """Run ``examples/<name>.py`` as a user would; keep its printed output."""
    buffer = io.StringIO()
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    sys.argv = [name, *argv]
    try:
        with contextlib.redirect_stdout(buffer):
            runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name="__main__")
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
    (GENERATED / f"{name}_output.txt").write_text(buffer.getvalue())


_run_example("quickstart", [])
_run_example("label_flips", [])
_run_example("many_faces", [])
_run_example("real_data", ["--figure", str(GENERATED / "real_data.png")])
# interpretation.md shows the figures this example saves to its default folder
# (examples/output/, not in git), so a fresh clone must make them first.
_run_example("polyhedron_plots", ["--output-dir", str(ROOT / "examples" / "output")])
