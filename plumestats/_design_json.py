"""A formula model's patsy design, as plain data and back.

To predict on new data a formula model needs patsy's ``DesignInfo``: the
factors' code, the categorical levels and contrasts, and the state that the
stateful transforms (``center``, ``standardize``, ``bs``, ...) learned from the
training data. statsmodels' pickles rebuild it by running the formula on the
whole training frame again; a JSON export stores it instead:

- each factor's code (checked against the safe formula grammar when read
  back, since patsy will run it), its type, column count and levels;
- each stateful transform's learned attributes (numbers and arrays), by the
  name patsy gives the transform in the factor's code;
- each term's columns and contrast matrices.

Reading it back builds the factors with patsy's own code (an empty namespace
holding numpy as ``np`` and ``numpy``, and patsy's functions), fresh transform
objects of the classes the code names, their learned attributes set from the
file, and a ``DesignInfo`` from patsy's public classes; nothing in the file
names a class or holds code beyond the factors' checked text.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from patsy import (
    ContrastMatrix,
    DesignInfo,
    EvalEnvironment,
    EvalFactor,
    FactorInfo,
    ModelDesc,
    SubtermInfo,
    Term,
)

from ._formula_safety import (
    NUMPY_MODULES,
    PATSY_FUNCTIONS,
    check_safe_code,
    formula_factor_codes,
)
from ._json_codec import decode, encode

__all__ = ["design_from_json", "design_to_json", "formula_data_columns"]

# the classes of patsy's stateful transforms (patsy.state, patsy.splines,
# patsy.mgcv_cubic_splines)
_TRANSFORM_CLASSES = frozenset({"Center", "Standardize", "BS", "CR", "CC", "TE"})
# what patsy may evaluate a loaded formula with, besides its own functions
_NAMESPACE = {"np": np, "numpy": np}
# levels the file may hold: the types JSON writes back as themselves
_LEVEL_TYPES = (bool, int, float, str)


class ExportError(ValueError):
    """A fit whose design cannot be written to JSON."""


def formula_data_columns(formula: str, frame_columns) -> list[str]:
    """The names in ``formula`` that are data columns: those of the training
    frame when it is known, else every name that is not a function."""
    import ast

    names = []
    for code in formula_factor_codes(formula):
        for node in ast.walk(ast.parse(code.strip(), mode="eval")):
            if isinstance(node, ast.Name):
                name = node.id
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Q"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                name = node.args[0].value
            else:
                continue
            if name not in names:
                names.append(name)
    if frame_columns is not None:
        known = {str(c) for c in frame_columns}
        return [name for name in names if name in known]
    return [n for n in names if n not in PATSY_FUNCTIONS and n not in NUMPY_MODULES]


def design_to_json(design: DesignInfo) -> dict:
    """The design's factors, transforms' state and terms as JSON-ready data;
    an :class:`ExportError` for what a file cannot carry."""
    if not isinstance(design, DesignInfo):
        raise ExportError(
            f"the model's formula design is a {type(design).__name__}, not patsy's "
            "DesignInfo (another formula engine); only patsy designs can be "
            "exported"
        )
    factors = []
    for factor, info in design.factor_infos.items():
        if not isinstance(factor, EvalFactor):
            raise ExportError(f"the factor {factor!r} is not a formula term")
        factors.append(_factor_to_json(factor, info))
    terms = [
        {
            "factors": [f.code for f in term.factors],
            "subterms": [_subterm_to_json(sub) for sub in subterms],
        }
        for term, subterms in design.term_codings.items()
    ]
    return {
        "column_names": list(design.column_names),
        "factors": factors,
        "terms": terms,
    }


def _factor_to_json(factor: EvalFactor, info: FactorInfo) -> dict:
    transforms = {}
    for name, obj in info.state.get("transforms", {}).items():
        kind = type(obj).__name__
        if kind not in _TRANSFORM_CLASSES:
            raise ExportError(
                f"the term {factor.code!r} uses the stateful transform {kind}, "
                "which is not one of patsy's own"
            )
        try:
            transforms[name] = {"class": kind, "state": encode(vars(obj))}
        except TypeError as exc:
            raise ExportError(
                f"the state of {kind} in {factor.code!r} cannot be exported: {exc}"
            ) from exc
    categories = None
    if info.categories is not None:
        odd = [c for c in info.categories if not isinstance(c, (*_LEVEL_TYPES,))]
        odd = [c for c in odd if not isinstance(c, (np.generic,))]
        if odd:
            raise ExportError(
                f"the levels of {factor.code!r} include {odd[0]!r} "
                f"({type(odd[0]).__name__}); only numbers, strings and booleans "
                "can be exported"
            )
        categories = encode(list(info.categories))
    return {
        "code": factor.code,
        "type": info.type,
        "num_columns": info.num_columns,
        "categories": categories,
        "transforms": transforms,
    }


def _subterm_to_json(sub: SubtermInfo) -> dict:
    return {
        "factors": [f.code for f in sub.factors],
        "num_columns": int(sub.num_columns),
        "contrasts": [
            {
                "factor": factor.code,
                "matrix": encode(np.asarray(matrix.matrix, dtype=float)),
                "suffixes": list(matrix.column_suffixes),
            }
            for factor, matrix in sub.contrast_matrices.items()
        ],
    }


def design_from_json(data: dict, columns, formula: str) -> DesignInfo:
    """The ``DesignInfo`` :func:`design_to_json` wrote, its factors' code
    checked against the safe grammar with ``columns`` as the data's names
    (an ``UnsafeFormulaError`` otherwise); a ``ValueError``, ``KeyError`` or
    ``TypeError`` for a malformed entry. The factors point into ``formula``,
    so that patsy's errors show where, as for the fit."""
    columns = frozenset(columns)
    origins = _origins(formula)
    env = EvalEnvironment([dict(_NAMESPACE)])
    factors = {}
    infos = {}
    for entry in data["factors"]:
        code = entry["code"]
        check_safe_code(code, columns)
        factor = EvalFactor(code, origin=origins.get(code))
        state: dict = {}
        # patsy's own set-up: the code rewritten to call fresh transform
        # objects, and the namespace it is evaluated in (tokenised, not run)
        factor.memorize_passes_needed(state, env)
        _restore_transforms(code, state["transforms"], entry["transforms"])
        categories = entry["categories"]
        if categories is not None:
            categories = tuple(decode(categories))
            if not all(isinstance(c, _LEVEL_TYPES) for c in categories):
                raise ValueError(f"the levels of {code!r} are not numbers or strings")
        factors[code] = factor
        infos[factor] = FactorInfo(
            factor,
            entry["type"],
            state,
            num_columns=entry["num_columns"],
            categories=categories,
        )
    term_codings = OrderedDict()
    for entry in data["terms"]:
        term = Term([factors[code] for code in entry["factors"]])
        term_codings[term] = [
            _subterm_from_json(sub, factors) for sub in entry["subterms"]
        ]
    return DesignInfo(list(data["column_names"]), infos, term_codings)


def _origins(formula: str) -> dict:
    """Where each factor's code sits in the formula (patsy's ``Origin``)."""
    desc = ModelDesc.from_formula(formula)
    return {
        factor.code: factor.origin
        for term in [*desc.lhs_termlist, *desc.rhs_termlist]
        for factor in term.factors
    }


def _restore_transforms(code: str, fresh: dict, stored: dict) -> None:
    """Give patsy's fresh transform objects the state the file holds."""
    if set(fresh) != set(stored):
        raise ValueError(
            f"the term {code!r} has the transforms {sorted(fresh)}, the file "
            f"{sorted(stored)}"
        )
    for name, obj in fresh.items():
        entry = stored[name]
        if entry["class"] != type(obj).__name__:
            raise ValueError(
                f"the file gives {name} of {code!r} the class {entry['class']!r}, "
                f"patsy makes a {type(obj).__name__}"
            )
        state = decode(entry["state"])
        if not isinstance(state, dict) or not all(
            isinstance(key, str) and key.isidentifier() and not key.startswith("__")
            for key in state
        ):
            raise ValueError(f"the state of {name} in {code!r} is not a set of fields")
        # exactly the learned fields, as unpickling would leave them
        vars(obj).clear()
        vars(obj).update(state)


def _subterm_from_json(entry: dict, factors: dict) -> SubtermInfo:
    contrasts = {
        factors[item["factor"]]: ContrastMatrix(
            np.asarray(decode(item["matrix"]), dtype=float), list(item["suffixes"])
        )
        for item in entry["contrasts"]
    }
    return SubtermInfo(
        [factors[code] for code in entry["factors"]],
        contrasts,
        int(entry["num_columns"]),
    )
