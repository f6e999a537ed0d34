"""A safe grammar for formulas that come from someone else.

patsy evaluates every term of a formula as Python code: ``"y ~ x1 +
I(__import__('os').system('rm -rf ~'))"`` runs a shell command. The command
line takes formulas typed by whoever runs it, and a JSON export carries a
formula to whoever loads it, so both accept only the formulas that
:func:`check_safe_formula` accepts: each factor's code is parsed with
Python's :mod:`ast` and walked with an allow-list. Nothing is evaluated here.

The grammar, in the terms of a factor's code:

- column names (bare, or quoted as ``Q("name with spaces")``), numbers,
  ``True``/``False``;
- arithmetic ``+ - * / // % **``, bitwise ``& | ^ ~``, ``not``/``and``/``or``,
  comparisons ``== != < <= > >=`` (a string may be compared with:
  ``c == 'u'``), parentheses;
- ``I(expr)``; ``C(expr, contrast, levels=[...])`` with patsy's contrasts
  (``Treatment(reference=...)``, ``Sum``, ``Helmert``, ``Poly``, ``Diff``)
  and literal levels;
- patsy's stateful transforms ``center``, ``standardize``, ``scale`` and
  splines ``bs``, ``cr``, ``cc``, ``te``, with literal options;
- the numpy functions in :data:`NUMPY_FUNCTIONS` (``np.log(x)``,
  ``np.clip(x, 0, 1)``, ``np.where(x > 0, x, 0)``; positional arguments only)
  and the constants ``np.pi``, ``np.e``, ``np.inf``, ``np.nan``.

Anything else (other attributes, subscripts, lambdas, comprehensions, calls of
anything not listed, strings anywhere but in a comparison, ``C()``'s levels and
the transforms' options, names that are not columns) is refused with an
:class:`UnsafeFormulaError` naming the piece.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable

import numpy as np
from patsy import EvalFactor, ModelDesc, PatsyError

__all__ = [
    "NUMPY_FUNCTIONS",
    "SAFE_GRAMMAR",
    "UnsafeFormulaError",
    "check_safe_formula",
    "formula_factor_codes",
]

_NUMPY_GROUPS = (
    # exponentials and logarithms
    ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp"),
    # powers, roots, absolute value, sign, rounding
    ("sqrt", "cbrt", "square", "power", "reciprocal", "abs", "absolute", "fabs"),
    ("sign", "floor", "ceil", "trunc", "rint", "round"),
    # trigonometric and hyperbolic
    ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot"),
    ("sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"),
    ("deg2rad", "rad2deg", "degrees", "radians"),
    # arithmetic
    ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide"),
    ("mod", "fmod", "remainder", "negative", "positive"),
    # comparisons, minimum and maximum
    ("minimum", "maximum", "fmin", "fmax", "clip", "where", "heaviside"),
    ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"),
    # logic and tests
    ("logical_and", "logical_or", "logical_not", "logical_xor"),
    ("isnan", "isfinite", "isinf"),
)
# elementwise numpy functions: they compute on numbers and nothing else
NUMPY_FUNCTIONS = frozenset(
    name for group in _NUMPY_GROUPS for name in group if hasattr(np, name)
)
NUMPY_CONSTANTS = frozenset({"pi", "e", "inf", "nan"})
NUMPY_MODULES = frozenset({"np", "numpy"})
CONTRASTS = frozenset({"Treatment", "Sum", "Helmert", "Poly", "Diff"})
TRANSFORMS = frozenset({"center", "standardize", "scale", "bs", "cr", "cc"})
PATSY_FUNCTIONS = frozenset({"C", "I", "Q", "te"}) | TRANSFORMS

SAFE_GRAMMAR = (
    "column names, numbers, operators, comparisons, C(), I(), Q(), "
    "center/standardize/scale, bs/cr/cc/te and numpy's elementwise functions "
    "such as np.log"
)

_BINARY = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
)
_UNARY = (ast.UAdd, ast.USub, ast.Not, ast.Invert)
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# what a refused construct is called in the message
_KINDS = {
    ast.Subscript: "a subscript",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.Attribute: "an attribute",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment",
    ast.IfExp: "a conditional expression",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.List: "a list",
    ast.Tuple: "a tuple",
    ast.Starred: "a starred argument",
    ast.Await: "an await",
    ast.Yield: "a yield",
    ast.YieldFrom: "a yield",
}


class UnsafeFormulaError(ValueError):
    """A formula outside the safe grammar (see :func:`check_safe_formula`).

    Attributes
    ----------
    piece : str
        The offending piece of the formula's code.
    name : str or None
        For a name that is neither a column nor an allowed function, the name.
    """

    def __init__(self, message: str, piece: str, name: str | None = None):
        super().__init__(message)
        self.piece = piece
        self.name = name


def formula_factor_codes(formula: str) -> list[str]:
    """The code of every factor of ``formula`` (both sides), as patsy parses
    it; a formula patsy cannot parse gives a ``PatsyError``."""
    desc = ModelDesc.from_formula(formula)
    codes = []
    for term in [*desc.lhs_termlist, *desc.rhs_termlist]:
        for factor in term.factors:
            if not isinstance(factor, EvalFactor):  # pragma: no cover - patsy's own
                raise UnsafeFormulaError(
                    f"the formula's factor {factor!r} is not code patsy parsed",
                    repr(factor),
                )
            if factor.code not in codes:
                codes.append(factor.code)
    return codes


def check_safe_formula(formula: str, columns: Iterable) -> None:
    """Refuse a formula that is more than columns, operators and known functions.

    Formulas are Python: patsy evaluates each term as code. This accepts only
    a safe grammar, and evaluates nothing. Each term's code is parsed with
    Python's ``ast`` and may hold:

    - column names (also ``Q("name with spaces")``), numbers, ``True`` and
      ``False``;
    - the operators ``+ - * / // % ** & | ^ ~``, ``not``, ``and``, ``or`` and
      the comparisons ``== != < <= > >=`` (a string may be an operand of a
      comparison: ``I(c == 'u')``; a power of numbers alone must be a literal
      to a literal exponent of at most 1000, as Python computes it digit by
      digit);
    - ``I(expr)``; ``C(expr, contrast, levels=[...])`` with patsy's contrasts
      (``Treatment(reference=...)``, ``Sum``, ``Helmert``, ``Poly``,
      ``Diff``) and literal levels;
    - ``center``, ``standardize``, ``scale``, ``bs``, ``cr``, ``cc`` and
      ``te`` with literal options;
    - numpy's elementwise functions (``np.log``, ``np.exp``, ``np.sqrt``,
      ``np.abs``, ``np.clip``, ``np.where``, the trigonometric ones, ...;
      positional arguments only) and ``np.pi``, ``np.e``, ``np.inf``,
      ``np.nan``.

    Anything else is refused: other attributes, subscripts, lambdas,
    comprehensions, calls of anything else, strings elsewhere, names that are
    not columns. A formula patsy cannot parse passes (patsy then refuses it
    before running any of it).

    Parameters
    ----------
    formula : str
        A patsy formula, e.g. ``"y ~ x1 + np.log(x2) + C(g)"``.
    columns : iterable
        The names of the data's columns; any other name is refused.

    Raises
    ------
    UnsafeFormulaError
        A ``ValueError`` naming the piece that is not in the grammar.

    Examples
    --------
    >>> from plumestats.api import check_safe_formula
    >>> check_safe_formula("y ~ x1 + np.log(x2)", ["y", "x1", "x2"])
    >>> check_safe_formula("y ~ I(__import__('os').getcwd())", ["y"])
    Traceback (most recent call last):
    ...
    plumestats._formula_safety.UnsafeFormulaError: the formula ...
    """
    if not isinstance(formula, str):
        raise TypeError(
            f"formula must be a string such as 'y ~ x1 + x2', got "
            f"{type(formula).__name__}"
        )
    try:
        codes = formula_factor_codes(formula)
    except PatsyError:
        return  # not a formula: patsy refuses it before evaluating anything
    names = frozenset(str(column) for column in columns)
    for code in codes:
        check_safe_code(code, names, formula)


def check_safe_code(code: str, columns: frozenset, formula: str | None = None):
    """Refuse one factor's code unless it is in the safe grammar."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError as exc:
        raise _refusal(formula, code, code, "is not a Python expression") from exc
    _Walker(code, columns, formula).expression(tree.body)


def _refusal(formula, code, piece, reason, name=None) -> UnsafeFormulaError:
    where = f"the formula {formula!r}" if formula is not None else f"the term {code!r}"
    grammar = (
        ""
        if name is not None
        else f"; formulas are Python code, and only a safe grammar is accepted: "
        f"{SAFE_GRAMMAR}"
    )
    return UnsafeFormulaError(
        f"{where} is refused: {piece!r} {reason}{grammar}", piece, name
    )


def _reads_data(node) -> bool:
    """Whether an expression involves a column (any name but numpy's
    constants)."""
    return any(
        isinstance(child, ast.Name) and child.id not in NUMPY_MODULES
        for child in ast.walk(node)
    )


def _number(node):
    """The value of a numeric literal (signed), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    return None


def _int_bits(node) -> float:
    """An upper bound on the size in bits of the Python integer a constant
    expression (no column in it) can make, 0 where it makes a float (numpy
    bounds those), ``inf`` where nothing bounds it."""
    value = _number(node)
    if value is not None:
        return float(abs(value).bit_length()) if isinstance(value, int) else 0.0
    if isinstance(node, ast.Constant) or _is_numpy_constant(node):
        return 0.0  # None, a bool, np.pi
    if isinstance(node, ast.UnaryOp):
        return _int_bits(node.operand)
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return 1.0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        # numpy's result from int64-sized input is a numpy int64 or float,
        # and stays one in arithmetic with small Python integers: bounded
        return 0.0 if max(map(_int_bits, node.args), default=0.0) <= 63 else np.inf
    if not isinstance(node, ast.BinOp):
        return np.inf
    left, right = _int_bits(node.left), _int_bits(node.right)
    if isinstance(node.op, ast.Div):
        return 0.0  # true division makes a float
    if isinstance(node.op, ast.Mult):
        return left + right
    if isinstance(node.op, ast.Pow):
        exponent = _number(node.right)
        if exponent is None:
            return np.inf
        if not isinstance(exponent, int) or exponent < 0:
            return 0.0  # a float
        base = _number(node.left)
        if isinstance(base, int):  # |b| ** e < 2 ** (e log2 |b| + 1)
            return math.floor(exponent * math.log2(max(abs(base), 1))) + 1.0
        return left * exponent
    return max(left, right) + 1.0  # + - // % & | ^


def _is_numpy_constant(node) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and _is_numpy_name(node.value)
        and node.attr in NUMPY_CONSTANTS
    )


def _is_numpy_name(node) -> bool:
    return isinstance(node, ast.Name) and node.id in NUMPY_MODULES


class _Walker:
    """Walks one factor's syntax tree; every method refuses what it does not
    know."""

    def __init__(self, code: str, columns: frozenset, formula: str | None):
        self.code = code
        self.columns = columns
        self.formula = formula

    def refuse(self, node, reason, name=None):
        raise _refusal(self.formula, self.code, ast.unparse(node), reason, name)

    # ---------------------------------------------------------- expressions
    def expression(self, node, string_ok: bool = False) -> None:
        """A value: columns, numbers and operators over them."""
        if isinstance(node, ast.Constant):
            self.constant(node, string_ok)
        elif isinstance(node, ast.Name):
            self.column(node.id, node)
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINARY):
                self.refuse(node, "uses an operator the safe grammar does not take")
            if isinstance(node.op, ast.Pow):
                self.power(node)
            self.expression(node.left)
            self.expression(node.right)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
            self.expression(node.operand)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                self.expression(value)
        elif isinstance(node, ast.Compare):
            if not all(isinstance(op, _COMPARE) for op in node.ops):
                self.refuse(node, "uses a comparison other than == != < <= > >=")
            for operand in [node.left, *node.comparators]:
                self.expression(operand, string_ok=True)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Attribute):
            self.numpy_constant(node)
        else:
            kind = _KINDS.get(type(node), f"a {type(node).__name__} expression")
            self.refuse(node, f"is {kind}, which the safe grammar does not take")

    def power(self, node: ast.BinOp) -> None:
        """A power of numbers alone is computed by Python exactly, digit by
        digit (``9 ** 9 ** 9`` would take the machine's memory): only a
        literal to a literal exponent of at most 1000 is taken."""
        if _reads_data(node.left) or _reads_data(node.right):
            return  # an array: floats overflow to inf at once
        exponent = _number(node.right)
        base_is_number = _number(node.left) is not None or _is_numpy_constant(node.left)
        if not base_is_number or exponent is None or abs(exponent) > 1000:
            self.refuse(
                node,
                "is a power of numbers alone; write a number, or a literal to "
                "a literal exponent of at most 1000",
            )

    def constant(self, node, string_ok: bool) -> None:
        value = node.value
        if isinstance(value, (bool, int, float)):
            return
        if isinstance(value, str) and string_ok:
            return
        what = "a string" if isinstance(value, str) else f"a {type(value).__name__}"
        self.refuse(
            node,
            f"is {what}; strings may only be compared with (c == 'u') or be "
            "C()'s levels and the transforms' options",
        )

    def column(self, name: str, node) -> None:
        if name in self.columns and not name.startswith("__"):
            # (a file's list of columns may name __debug__, Python's True)
            return
        if name in PATSY_FUNCTIONS or name in CONTRASTS or name in NUMPY_MODULES:
            self.refuse(node, "is a function, used here as a value")
        self.refuse(
            node,
            "is neither a column of the data nor an allowed function",
            name=name,
        )

    def numpy_constant(self, node) -> None:
        if _is_numpy_constant(node):
            return
        self.refuse(
            node,
            "is an attribute; only numpy's constants (np.pi, np.e, np.inf, "
            "np.nan) and functions (np.log, ...) are",
        )

    # ---------------------------------------------------------------- calls
    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _is_numpy_name(func.value):
            if func.attr not in NUMPY_FUNCTIONS:
                self.refuse(
                    node,
                    f"calls np.{func.attr}, which is not one of the allowed "
                    "numpy functions (elementwise ones such as np.log, np.exp, "
                    "np.sqrt, np.abs, np.clip, np.where)",
                )
            if node.keywords:
                self.refuse(node, "passes keyword arguments to a numpy function")
            if not _reads_data(node) and max(map(_int_bits, node.args), default=0) > 63:
                # Python's integers have no size limit, and numpy keeps one
                # beyond int64 as an object: np.square(9 ** 999), nested,
                # doubles its digits each time (a hang at predict)
                self.refuse(
                    node,
                    "applies numpy to an integer beyond int64; write it as a "
                    "float (9e999 overflows to inf at once), or give it a column",
                )
            self.arguments(node, node.args)
            return
        if not isinstance(func, ast.Name) or func.id not in PATSY_FUNCTIONS:
            hint = ""
            if isinstance(func, ast.Name) and func.id in NUMPY_FUNCTIONS:
                hint = f" (write np.{func.id})"
            self.refuse(
                node,
                f"calls {ast.unparse(func)}, which is not an allowed function{hint}",
            )
        getattr(self, f"call_{func.id}", self.call_transform)(node)

    def arguments(self, node, args) -> None:
        for arg in args:
            if isinstance(arg, ast.Starred):
                self.refuse(arg, "is a starred argument")
            if isinstance(arg, ast.Constant) and arg.value is None:
                continue  # np.clip(x, 0, None): an open bound
            self.expression(arg)

    def call_I(self, node) -> None:
        if len(node.args) != 1 or node.keywords:
            self.refuse(node, "must be I(expression), one argument")
        self.expression(node.args[0])

    def call_Q(self, node) -> None:
        args = node.args
        if (
            len(args) != 1
            or node.keywords
            or not isinstance(args[0], ast.Constant)
            or not isinstance(args[0].value, str)
        ):
            self.refuse(node, "must be Q('column name'), one string")
        self.column(args[0].value, node)

    def call_C(self, node) -> None:
        if not node.args or len(node.args) > 2:
            self.refuse(node, "must be C(column, contrast, levels=[...])")
        self.expression(node.args[0])
        if len(node.args) == 2:
            self.contrast(node.args[1])
        for keyword in node.keywords:
            if keyword.arg == "contrast":
                self.contrast(keyword.value)
            elif keyword.arg == "levels":
                self.literal(keyword.value)
            else:
                self.refuse(node, f"passes C() an unknown option {keyword.arg!r}")

    def contrast(self, node) -> None:
        if isinstance(node, ast.Name) and node.id in CONTRASTS:
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in CONTRASTS
        ):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                self.literal(value)
            if any(k.arg is None for k in node.keywords):
                self.refuse(node, "passes ** arguments")
            return
        self.refuse(
            node,
            "is not one of patsy's contrasts (Treatment, Sum, Helmert, Poly, "
            "Diff, bare or with literal options)",
        )

    def call_te(self, node) -> None:
        self.arguments(node, node.args)
        self.options(node)

    def call_transform(self, node) -> None:
        """center, standardize, scale, bs, cr, cc: one column expression, then
        literal options."""
        if not node.args:
            self.refuse(node, "needs the column to transform as first argument")
        self.expression(node.args[0])
        for arg in node.args[1:]:
            self.literal(arg)
        self.options(node)

    def options(self, node) -> None:
        for keyword in node.keywords:
            if keyword.arg is None:
                self.refuse(node, "passes ** arguments")
            self.literal(keyword.value)

    def literal(self, node) -> None:
        """A literal option: numbers, strings, booleans, None and lists or
        tuples of them (levels, knots, a constraint matrix)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                self.literal(element)
        elif isinstance(node, ast.UnaryOp) and isinstance(
            node.op, (ast.USub, ast.UAdd)
        ):
            self.literal(node.operand)
        elif not (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (bool, int, float, str, type(None)))
        ):
            self.refuse(node, "is not a literal (a number, string or list of them)")
