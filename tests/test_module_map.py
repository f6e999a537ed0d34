"""The module map (issue 28): modules under 600 lines with one job, no import
cycle, no private name across modules except the named internal API, short
functions, and a README layout table that names every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import plumestats
from plumestats._spec import INTERNAL_API

# the package the tests import (the installed one in CI's sdist job)
PACKAGE = Path(plumestats.__file__).resolve().parent
README = Path(__file__).resolve().parents[1] / "README.md"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# statsmodels' (and the standard library's) own private names, used as
# statsmodels' own subclasses use them
LIBRARY_PRIVATE = {
    "_cache",  # cache_readonly's store
    "_data_attr",  # what remove_data() drops
    "_init_keys",  # the constructor keywords a model is rebuilt from
    "_wrap_attrs",
    "_wrap_methods",
    "_transform_predict_exog",  # the results' design for new rows
    "_datatype",  # statsmodels' ModelData: 0 for ndarray, 1 for pandas
    "_results",  # a results wrapper's results
    "_getframe",  # sys._getframe, for warnings at the caller's line
}


def _modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text())
        for path in sorted(PACKAGE.rglob("*.py"))
    }


MODULES = _modules()


def _module_name(relative: str) -> str:
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _imports(relative: str, tree: ast.Module) -> set[str]:
    """The plumestats modules ``relative`` imports, anywhere in it."""
    here = _module_name(relative).split(".")
    package = here if relative.endswith("__init__.py") else here[:-1]
    known = {_module_name(name) for name in MODULES}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith("plumestats."):
                target = node.module.split(".")[1:]
            else:
                continue
            dotted = ".".join(target)
            for alias in node.names:  # `from . import _dask` names a module
                submodule = f"{dotted}.{alias.name}" if dotted else alias.name
                found.add(submodule if submodule in known else dotted)
    return {name for name in found if name in known and name}


def test_every_module_is_short():
    lengths = {name: len((PACKAGE / name).read_text().splitlines()) for name in MODULES}
    assert {n: size for n, size in lengths.items() if size >= MAX_MODULE_LINES} == {}


def test_no_import_cycle():
    graph = {_module_name(name): _imports(name, tree) for name, tree in MODULES.items()}
    # the package's __init__ imports its public modules; none imports it back
    # except through a public entry point, which the graph below counts too
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.extend([*path[path.index(nxt) :], nxt])
                return True
            if nxt not in state and visit(nxt, [*path, nxt]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    assert cycle == [], " -> ".join(cycle)


def _defined_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, class attributes,
    attributes it assigns (``obj._name = ...``) and keyword arguments it
    passes to its own constructors."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.keyword) and node.arg:  # Holder(_name=...)
            names.add(node.arg)
    return {name for name in names if name.startswith("_")}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _names_a_module(importer: str, node: ast.ImportFrom, name: str) -> bool:
    """``from . import _dask`` imports a module, not a private name."""
    known = {_module_name(module) for module in MODULES}
    package = _module_name(importer).split(".")[:-1]
    if node.module:
        package = [*package, *node.module.split(".")]
    return ".".join([*package, name]) in known


def _private_by_name(node: ast.AST) -> str | None:
    """The private name in ``getattr(obj, "_name", ...)`` (or ``hasattr``,
    ``setattr``) on an object other than ``self``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr", "setattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and _is_private(node.args[1].value)
    ):
        return None
    first = node.args[0]
    if isinstance(first, ast.Name) and first.id in ("self", "cls"):
        return None
    return node.args[1].value


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


def test_no_private_name_crosses_modules():
    imported, used = [], []
    for name, tree in MODULES.items():
        own = _defined_private_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                imported += [
                    f"{name}: {alias.name}"
                    for alias in node.names
                    if _is_private(alias.name)
                    and not _names_a_module(name, node, alias.name)
                    and (node.level or (node.module or "").startswith("plumestats"))
                ]
            elif _private_by_name(node) and _private_by_name(node) not in (
                own | INTERNAL_API | LIBRARY_PRIVATE
            ):
                used.append(f"{name}: getattr(..., {_private_by_name(node)!r})")
            elif (
                isinstance(node, ast.Attribute)
                and _is_private(node.attr)
                and not (
                    isinstance(node.value, ast.Name)
                    and node.value.id in ("self", "cls")
                )
                and node.attr not in own
                and node.attr not in INTERNAL_API | LIBRARY_PRIVATE
            ):
                used.append(f"{name}: .{node.attr}")
    assert imported == []
    assert used == []


def _code_lines(function: ast.FunctionDef) -> int:
    body = function.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:]  # the docstring
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def test_functions_are_short():
    long = {
        f"{name}::{node.name}": _code_lines(node)
        for name, tree in MODULES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _code_lines(node) > MAX_FUNCTION_LINES
    }
    assert long == {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_readme_layout_names_the_module(module):
    text = README.read_text()
    table = text[text.index("## Layout") :]
    table = table[: table.index("\n## ", 4)] if "\n## " in table[4:] else table
    stem = module.rsplit("/", 1)[-1]
    spelled = {f"`plumestats/{module}`", f"`{module}`", f"`{stem}`"}
    if stem == "__init__.py":
        spelled |= {f"`plumestats/{module.removesuffix('__init__.py')}`"}
    assert any(name in table for name in spelled), f"{module} is not in the table"
