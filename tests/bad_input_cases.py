"""The catalogue of bad and extreme inputs (docs/errors.md, "The catalogue").

Each case is one named input and what a user must get for it: an error of a
given class whose message holds a fragment naming the argument or the fix
(``refuses``), a statsmodels warning (``warns``), or a correct fit (``fits``,
with a check of what makes it correct). ``tests/test_bad_input_catalogue.py``
runs them all and checks, besides, that no case leaks a ``RuntimeWarning`` and
that no error comes out of numpy, scipy, patsy, pandas or statsmodels
unexplained: the innermost frame of every error is plumestats' own code.

The fragments are plain text (not patterns), so that the table in the docs
reads as the messages do.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from conftest import unwrapped
from statsmodels.tools.sm_exceptions import (
    CollinearityWarning,
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationWarning,
    ValueWarning,
)

import plumestats.api as ps
from plumestats import PolyhedralMixtureLogit as PM


@dataclass(frozen=True)
class Case:
    """One input and what the user gets for it."""

    name: str
    run: Callable[[], object]
    outcome: str  # "refuses", "warns" or "fits"
    kind: type | None = None  # the error or warning class
    says: str = ""  # a fragment of the message
    check: Callable[[object], bool] | None = None  # for fits
    # errors a third-party API raises by its own contract (scikit-learn's
    # validation of X for the estimator), besides plumestats' own
    origin: str = "plumestats"


CASES: list[Case] = []


def refuses(name, run, kind, says, origin="plumestats"):
    CASES.append(Case(name, run, "refuses", kind, says, origin=origin))


def warns(name, run, kind, says, check=None):
    CASES.append(Case(name, run, "warns", kind, says, check))


def fits(name, run, check=None):
    CASES.append(Case(name, run, "fits", check=check))


# ------------------------------------------------------------------ data
@functools.cache
def _frame(nobs: int = 200, seed: int = 0) -> pd.DataFrame:
    data, _ = ps.simulate_polyhedron(nobs, d=2, k=2, noise=0.1, random_state=seed)
    return data


def frame(nobs: int = 200, seed: int = 0) -> pd.DataFrame:
    """A small simulated two-face problem: x1, x2 and a 0/1 y (a copy)."""
    return _frame(nobs, seed).copy()


def design(data=None) -> np.ndarray:
    data = frame() if data is None else data
    return np.column_stack([np.ones(len(data)), data[["x1", "x2"]].to_numpy()])


def outcome(data=None) -> np.ndarray:
    return (frame() if data is None else data)["y"].to_numpy()


@functools.cache
def formula_fit():
    return ps.plume("y ~ x1 + x2", frame(), k=2).fit()


@functools.cache
def array_fit():
    exog = frame()[["x1", "x2"]].assign(const=1.0)
    return PM(frame()["y"], exog, k=2).fit()


def fit_ok(res) -> bool:
    """A fit that reached a regular maximum with finite estimates."""
    return bool(res.converged) and np.all(np.isfinite(np.asarray(res.params)))


def same_llf_as_plain(res, nobs=200) -> bool:
    return abs(res.llf - ps.plume("y ~ x1 + x2", frame(nobs), k=2).fit().llf) < 1e-6


def with_column(name, values):
    data = frame()
    data[name] = values
    return data


N = 200
RNG = np.random.default_rng(12345)
NOISE = RNG.normal(size=N)

# ================================================================ outcome
refuses(
    "outcome with three levels (arrays)",
    lambda: PM(np.arange(N) % 3, design(), k=2),
    ValueError,
    "two levels, found 3",
)
refuses(
    "outcome with three text levels (formula)",
    lambda: ps.plume(
        "g ~ x1", with_column("g", np.array(["a", "b", "c"] * 67)[:N]), k=2
    ),
    ValueError,
    "two levels, found 3",
)
refuses(
    "outcome coded by a contrast, C(g, Sum) (formula)",
    lambda: ps.plume(
        "C(g, Sum) ~ x1", with_column("g", np.array(["a", "b"] * 100)[:N]), k=2
    ),
    ValueError,
    "coded by a contrast",
)
refuses(
    "outcome with one level (arrays)",
    lambda: PM(np.ones(N), design(), k=2),
    ValueError,
    "two levels, found 1",
)
refuses(
    "outcome with one level (formula)",
    lambda: ps.plume("y ~ x1", with_column("y", np.zeros(N, int)), k=2),
    ValueError,
    "two levels, found 1",
)
refuses(
    "continuous outcome",
    lambda: PM(NOISE, design(), k=2),
    ValueError,
    "two levels, found 200",
)
refuses(
    "outcome of two columns (arrays)",
    lambda: PM(np.column_stack([outcome(), outcome()]), design(), k=2),
    ValueError,
    "one column of outcomes",
)
refuses(
    "outcome shorter than the design",
    lambda: PM(outcome()[:150], design(), k=2),
    ValueError,
    "endog has 150 rows but exog has 200",
)
refuses(
    "all-missing outcome, missing='none'",
    lambda: PM(np.full(N, np.nan), design(), k=2),
    ValueError,
    "missing",
)
refuses(
    "all-missing outcome, missing='drop'",
    lambda: PM(np.full(N, np.nan), design(), k=2, missing="drop"),
    ValueError,
    "no observations",
)
refuses(
    "None in a text outcome, missing='none'",
    lambda: PM(np.array(["a", "b", None, "a"] * 50, dtype=object), design(), k=2),
    ValueError,
    "missing",
)
refuses(
    "infinite value in the outcome",
    lambda: PM(np.where(np.arange(N) == 3, np.inf, outcome()), design(), k=2),
    ValueError,
    "endog",
)
refuses(
    "complex outcome",
    lambda: PM(outcome() + 0j, design(), k=2),
    ValueError,
    "complex",
)
refuses(
    "empty outcome and design",
    lambda: PM(np.empty(0), np.empty((0, 3)), k=2),
    ValueError,
    "no observations",
)
refuses(
    "a single observation",
    lambda: PM(np.array([1.0]), np.ones((1, 2)), k=1),
    ValueError,
    "only 1 observation",
)
refuses(
    "outcome None",
    lambda: PM(None, design(), k=2),
    ValueError,
    "endog must hold one outcome per observation",
)
refuses(
    "outcome a scalar",
    lambda: PM(1, design(), k=2),
    ValueError,
    "endog must hold one outcome per observation",
)
fits(
    "outcome coded -1/+1",
    lambda: PM(2 * outcome() - 1, design(), k=2).fit(),
    fit_ok,
)
fits(
    "outcome coded as booleans",
    lambda: PM(outcome().astype(bool), design(), k=2).fit(),
    fit_ok,
)
fits(
    "outcome coded as text 'no'/'yes'",
    lambda: PM(np.where(outcome() == 1, "yes", "no"), design(), k=2).fit(),
    fit_ok,
)
fits(
    "outcome as a column vector (N, 1)",
    lambda: PM(outcome()[:, None], design(), k=2).fit(),
    fit_ok,
)
refuses(
    "outcome coded 0/0.5",
    lambda: PM(outcome() / 2, design(), k=2),
    ValueError,
    "found levels 0 and 0.5",
)
fits(
    "text 'True'/'False' outcome (arrays)",
    lambda: PM(outcome().astype(bool).astype(str), design(), k=2).fit(),
    fit_ok,
)
fits(
    "categorical outcome with an unused third category",
    lambda: PM(
        pd.Categorical(np.where(outcome() == 1, "in", "out"), ["in", "out", "x"]),
        design(),
        k=2,
    ).fit(),
    fit_ok,
)
fits(
    "nullable Int64 outcome with pd.NA, missing='drop' (formula)",
    lambda: ps.plume(
        "y ~ x1 + x2",
        with_column("y", pd.array(np.where(np.arange(N) == 5, -1, outcome()))).assign(
            y=lambda d: d["y"].mask(d["y"] == -1)
        ),
        k=2,
    ).fit(),
    lambda res: res.nobs == N - 1,
)
fits(
    "boolean outcome with pd.NA, missing='drop' (formula)",
    lambda: ps.plume(
        "y ~ x1 + x2",
        with_column(
            "y",
            pd.array([None if i == 7 else bool(v) for i, v in enumerate(outcome())]),
        ),
        k=2,
    ).fit(),
    lambda res: res.nobs == N - 1,
)
refuses(
    "outcome column missing from the data",
    lambda: ps.plume("yy ~ x1", frame(), k=2),
    ValueError,
    "yy",
)
refuses(
    "a text outcome with one class left after missing='drop'",
    lambda: ps.plume(
        "g ~ x1",
        with_column("g", np.where(np.arange(N) < 190, None, "a")),
        k=2,
    ),
    ValueError,
    "two levels",
)

# ================================================================ design
refuses("exog None", lambda: PM(outcome(), None, k=2), ValueError, "exog is required")
refuses(
    "three-dimensional exog",
    lambda: PM(outcome(), np.ones((N, 2, 2)), k=2),
    ValueError,
    "got 3 dimensions",
)
refuses(
    "exog without columns",
    lambda: PM(outcome(), np.empty((N, 0)), k=2),
    ValueError,
    "no columns",
)
refuses(
    "text exog (arrays)",
    lambda: PM(outcome(), np.array([["a", "b"]] * N), k=2),
    ValueError,
    "numeric",
)
refuses(
    "NaN in exog, missing='none'",
    lambda: PM(outcome(), np.where(np.arange(N)[:, None] == 2, np.nan, design()), k=2),
    ValueError,
    "missing value",
)
refuses(
    "infinite value in exog",
    lambda: PM(outcome(), np.where(np.arange(N)[:, None] == 2, np.inf, design()), k=2),
    ValueError,
    "infinite",
)
refuses(
    "-inf in exog with missing='drop'",
    lambda: PM(
        outcome(),
        np.where(np.arange(N)[:, None] == 2, -np.inf, design()),
        k=2,
        missing="drop",
    ),
    ValueError,
    "infinite",
)
refuses(
    "complex exog",
    lambda: PM(outcome(), design() + 0j, k=2),
    ValueError,
    "complex",
)
refuses(
    "sparse exog",
    lambda: PM(outcome(), __import__("scipy.sparse").sparse.csr_matrix(design()), k=2),
    TypeError,
    "sparse",
)
refuses(
    "ragged list of rows",
    lambda: PM([0, 1, 0], [[1, 2], [1], [1, 2, 3]], k=1),
    ValueError,
    "table of numbers",
)
refuses(
    "repeated column names",
    lambda: PM(outcome(), pd.DataFrame(design(), columns=["a", "b", "a"]), k=2),
    ValueError,
    "more than one column named 'a'",
)
refuses(
    "column labels 2 and '2' (one name as text)",
    lambda: PM(outcome(), pd.DataFrame(design(), columns=[2, "2", "c"]), k=2),
    ValueError,
    "more than one column named 2 and '2'",
)
warns(
    "a constant column of 1e13 beside the intercept",
    lambda: ps.plume("y ~ x1 + x2 + z", with_column("z", 1e13), k=1).fit(),
    CollinearityWarning,
    "rank deficient",
    # the slopes and their SEs of the fit without it (it made the
    # Hessian's scale 1e26 times the others' and stopped them short)
    lambda res: (
        np.allclose(
            res.params[["h1:x1", "h1:x2"]],
            ps.plume("y ~ x1 + x2", frame(), k=1).fit().params[["h1:x1", "h1:x2"]],
            rtol=1e-6,
        )
        and np.allclose(
            res.bse[["h1:x1", "h1:x2"]],
            ps.plume("y ~ x1 + x2", frame(), k=1).fit().bse[["h1:x1", "h1:x2"]],
            rtol=1e-6,
        )
    ),
)
refuses(
    "a column beyond 1e150",
    lambda: PM(outcome(), design() * np.array([1, 1e160, 1]), k=2),
    ValueError,
    "columns of extreme magnitude",
)
refuses(
    "a column below 1e-150",
    lambda: PM(outcome(), design() * np.array([1, 1e-200, 1]), k=2),
    ValueError,
    "columns of extreme magnitude",
)
refuses(
    "datetime column in an array-interface DataFrame",
    lambda: PM(
        outcome(),
        pd.DataFrame({"c": 1.0, "t": pd.date_range("2020-01-01", periods=N)}),
        k=2,
    ),
    ValueError,
    "not numeric",
)
refuses(
    "categorical column in an array-interface DataFrame",
    lambda: PM(
        outcome(),
        pd.DataFrame({"c": 1.0, "g": pd.Categorical(np.arange(N) % 2)}),
        k=2,
    ),
    ValueError,
    "encode a categorical",
)
refuses(
    "object column of text in an array-interface DataFrame",
    lambda: PM(outcome(), pd.DataFrame({"c": 1.0, "g": ["a"] * N}), k=2),
    ValueError,
    "not numeric",
)
fits(
    "exog as a list of rows",
    lambda: PM(outcome(), design().tolist(), k=2).fit(),
    fit_ok,
)
fits(
    "integer and boolean columns",
    lambda: PM(
        outcome(),
        pd.DataFrame(
            {"c": 1, "b": np.arange(N) % 2 == 0, "x": frame()["x1"].to_numpy()}
        ),
        k=2,
    ).fit(alpha=1e-3),
    fit_ok,
)
fits(
    "float32 design",
    lambda: PM(outcome(), design().astype(np.float32), k=2).fit(),
    lambda res: abs(res.llf - PM(outcome(), design(), k=2).fit().llf) < 1e-3,
)
fits(
    "Fortran-ordered design",
    lambda: PM(outcome(), np.asfortranarray(design()), k=2).fit(),
    lambda res: abs(res.llf - PM(outcome(), design(), k=2).fit().llf) < 1e-9,
)
fits(
    "a strided view of a wider design",
    lambda: PM(outcome(), np.column_stack([design(), NOISE])[:, [0, 1, 2]], k=2).fit(),
    lambda res: abs(res.llf - PM(outcome(), design(), k=2).fit().llf) < 1e-9,
)
fits(
    "a design without a constant",
    lambda: PM(outcome(), design()[:, 1:], k=2).fit(),
    lambda res: np.all(np.isfinite(np.asarray(res.params))),
)
fits(
    "nullable Float64 column with pd.NA, missing='drop'",
    lambda: PM(
        outcome(),
        pd.DataFrame(design(), columns=["c", "x1", "x2"])
        .astype("Float64")
        .mask((np.arange(N) == 4)[:, None] & np.array([False, True, False])),
        k=2,
        missing="drop",
    ).fit(),
    lambda res: res.nobs == N - 1,
)
fits(
    "MultiIndex columns",
    lambda: PM(
        outcome(),
        pd.DataFrame(
            design(),
            columns=pd.MultiIndex.from_tuples([("c", ""), ("x", "1"), ("x", "2")]),
        ),
        k=2,
    ).fit(),
    lambda res: list(res.model.exog_names) == ["c", "x_1", "x_2"],
)
fits(
    "integer column labels",
    lambda: PM(outcome(), pd.DataFrame(design(), columns=[2, 1, 0]), k=2).fit(),
    fit_ok,
)
warns(
    "a one-row frame of one class (its intercept runs off to infinity)",
    lambda: ps.plume("y ~ c0", pd.DataFrame({"c0": ["v"], "y": [True]}), k=1).fit(),
    PerfectSeparationWarning,
    "separation",
)
warns(
    "two constant columns",
    lambda: PM(outcome(), np.column_stack([design(), np.full(N, 2.0)]), k=2),
    CollinearityWarning,
    "constant besides the intercept",
)
warns(
    "an all-zero column",
    lambda: PM(outcome(), np.column_stack([design(), np.zeros(N)]), k=2),
    CollinearityWarning,
    "all zero",
)
warns(
    "a duplicated column",
    lambda: PM(outcome(), np.column_stack([design(), design()[:, 1]]), k=2),
    CollinearityWarning,
    "linear combinations",
)
warns(
    "fit of a design with a duplicated column",
    lambda: PM(outcome(), np.column_stack([design(), design()[:, 1]]), k=2).fit(),
    CollinearityWarning,
    "are not identified (their estimates are arbitrary and their standard "
    "errors NaN; the other coefficients are estimable)",
)
warns(
    "L1 fit of a design with a duplicated column, every slope trimmed",
    lambda: PM(
        outcome(), np.column_stack([design(), design()[:, 1]]), k=2
    ).fit_regularized(method="l1", alpha=1e3),
    HessianInversionWarning,
    "a collapsed or redundant expert",
)
WIDE = np.column_stack([np.ones(10), RNG.normal(size=(10, 14))])
warns(
    "more columns than rows",
    lambda: PM(outcome()[:10], WIDE, k=1),
    CollinearityWarning,
    "15 columns but only 10 rows",
)
fits(
    "more columns than rows, with a penalty",
    lambda: PM(outcome()[:10], WIDE, k=1).fit(alpha=1e-2),
    lambda res: np.all(np.isfinite(np.asarray(res.bse))),
)
refuses(
    "more parameters than rows without a penalty",
    lambda: PM(
        outcome()[:8], np.column_stack([np.ones(8), RNG.normal(size=(8, 9))]), k=1
    ).fit(),
    ValueError,
    "parameters but only 8 observations",
)

# ================================================================ model arguments
for bad_k in (0, -1, 2.5, "2", None, True, float("nan")):
    refuses(
        f"k={bad_k!r}",
        lambda bad_k=bad_k: PM(outcome(), design(), k=bad_k),
        ValueError,
        "k must be an integer >= 1",
    )
refuses(
    "k=2**62",
    lambda: PM(outcome(), design(), k=2**62),
    MemoryError,
    "use a smaller k",
)
fits("k as numpy int64", lambda: PM(outcome(), design(), k=np.int64(2)).fit(), fit_ok)
for bad_gamma in (0, -1, float("nan"), "1", None, [1.0, 2.0]):
    refuses(
        f"gamma={bad_gamma!r}",
        lambda bad_gamma=bad_gamma: PM(outcome(), design(), k=2, gamma=bad_gamma),
        ValueError,
        "gamma must be a finite number > 0",
    )
refuses(
    "gamma=inf",
    lambda: PM(outcome(), design(), k=2, gamma=np.inf),
    ValueError,
    "hard-gating model",
)
refuses(
    "gamma=1e-6",
    lambda: PM(outcome(), design(), k=2, gamma=1e-6),
    ValueError,
    "gamma must be at least",
)
refuses(
    "gamma=1e7",
    lambda: PM(outcome(), design(), k=2, gamma=1e7),
    ValueError,
    "gamma must be at most",
)
fits(
    "gamma as numpy float32",
    lambda: PM(outcome(), design(), k=2, gamma=np.float32(2)).fit(),
    fit_ok,
)
refuses(
    "missing='zap'",
    lambda: PM(outcome(), design(), k=2, missing="zap"),
    ValueError,
    "missing must be one of",
)
refuses(
    "inside=2",
    lambda: PM(outcome(), design(), k=2, inside=2),
    ValueError,
    "inside must be",
)
refuses(
    "inside a label the outcome does not have",
    lambda: PM(np.where(outcome() == 1, "yes", "no"), design(), k=2, inside="maybe"),
    ValueError,
    "inside must be one of",
)
refuses(
    "misspelt model keyword (gama=2)",
    lambda: PM(outcome(), design(), k=2, gama=2.0),
    TypeError,
    "gama",
)
refuses(
    "formula= on the array model",
    lambda: PM(outcome(), design(), k=2, formula="y ~ x"),
    TypeError,
    "formula= is set by from_formula",
)
refuses(
    "HardPolyhedralLogit with a finite gamma",
    lambda: ps.HardPolyhedralLogit(outcome(), design(), k=2, gamma=2.0),
    TypeError,
    "gamma = inf",
)

# ================================================================ formulas
refuses(
    "formula not a string",
    lambda: ps.plume(123, frame(), k=2),
    TypeError,
    "formula must be a string",
)
refuses(
    "empty formula", lambda: ps.plume("", frame(), k=2), ValueError, "has no outcome"
)
refuses(
    "formula without ~",
    lambda: ps.plume("x1 + x2", frame(), k=2),
    ValueError,
    "has no outcome",
)
refuses(
    "two outcome terms",
    lambda: ps.plume("y + x1 ~ x2", frame(), k=2),
    ValueError,
    "left-hand side must be one outcome",
)
refuses(
    "formula syntax error",
    lambda: ps.plume("y ~ x1 +", frame(), k=2),
    ValueError,
    "could not build the design from the formula",
)
refuses(
    "a name that is neither a column nor defined",
    lambda: ps.plume("y ~ x1 + zz", frame(), k=2),
    ValueError,
    "name 'zz' is not defined",
)
refuses(
    "empty data frame",
    lambda: ps.plume("y ~ x1", frame().iloc[:0], k=2),
    ValueError,
    "no observations",
)
refuses(
    "NaN in a formula column, missing='none'",
    lambda: ps.plume(
        "y ~ x1 + x2",
        with_column("x1", np.where(np.arange(N) == 1, np.nan, NOISE)),
        k=2,
        missing="none",
    ),
    ValueError,
    "x1",
)
refuses(
    "infinite value in a formula column",
    lambda: ps.plume(
        "y ~ x1 + x2",
        with_column("x1", np.where(np.arange(N) == 1, np.inf, NOISE)),
        k=2,
    ),
    ValueError,
    "x1",
)
refuses(
    "a term that divides by zero, I(x1/0)",
    lambda: ps.plume("y ~ I(x1/0) + x2", frame(), k=2),
    ValueError,
    "'I(x1 / 0)' (200 rows)",
)
warns(
    "np.log of negative values drops rows",
    lambda: ps.plume("y ~ np.log(x1 + 1) + x2", frame(), k=2),
    ValueWarning,
    "missing='drop' dropped them",
)
refuses(
    "numbers stored as text",
    lambda: ps.plume(
        "y ~ x1 + x2", with_column("x1", [f"{v:.4f}" for v in NOISE]), k=2
    ),
    ValueError,
    "numbers stored as text",
)
refuses(
    "text column inside arithmetic",
    lambda: ps.plume(
        "y ~ I(x1 - 1) + x2", with_column("x1", np.array(["a", "b"] * 100)), k=2
    ),
    ValueError,
    "x1",
)
warns(
    "categorical with an unused level",
    lambda: ps.plume(
        "y ~ x1 + C(g)",
        with_column("g", pd.Categorical(np.arange(N) % 2, categories=[0, 1, 2])),
        k=2,
    ),
    CollinearityWarning,
    "unused category level",
)
refuses(
    "unknown reference level in Treatment()",
    lambda: ps.plume(
        "y ~ x1 + C(g, Treatment(reference='zz'))",
        with_column("g", np.array(["a", "b"] * 100)),
        k=2,
    ),
    ValueError,
    "could not build the design",
)
refuses(
    "formula with no columns (y ~ 0)",
    lambda: ps.plume("y ~ 0", frame(), k=2),
    ValueError,
    "no columns",
)
warns(
    "intercept only, k=2 (y ~ 1)",
    lambda: ps.plume("y ~ 1", frame(), k=2).fit(),
    HessianInversionWarning,
    "cannot be inverted",
)
fits(
    "formula without an intercept (- 1)",
    lambda: ps.plume("y ~ x1 + x2 - 1", frame(), k=2).fit(),
    lambda res: "Intercept" not in res.model.exog_names,
)
fits(
    "Q() for a column name with a space",
    lambda: ps.plume(
        "y ~ Q('x 1') + x2", frame().rename(columns={"x1": "x 1"}), k=2
    ).fit(),
    lambda res: abs(res.llf - formula_fit().llf) < 1e-8,
)
fits(
    "boolean feature column",
    lambda: ps.plume("y ~ x1 + b", with_column("b", np.arange(N) % 3 == 0), k=2).fit(),
    lambda res: "b[T.True]" in res.model.exog_names,
)
fits(
    "a subset mask",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2, subset=np.arange(N) < 150).fit(),
    lambda res: res.nobs == 150,
)
fits(
    "data as a dict of columns",
    lambda: ps.plume(
        "y ~ x1 + x2", {c: frame()[c].to_numpy() for c in ("y", "x1", "x2")}, k=2
    ).fit(),
    lambda res: abs(res.llf - formula_fit().llf) < 1e-8,
)
refuses(
    "eval_env of the wrong kind",
    lambda: ps.plume("y ~ x1", frame(), k=2, eval_env="caller"),
    TypeError,
    "eval_env must be an integer depth",
)
refuses(
    "eval_env below -1",
    lambda: ps.plume("y ~ x1", frame(), k=2, eval_env=-3),
    ValueError,
    "eval_env must be -1",
)
refuses(
    "one class left after missing='drop' (formula)",
    lambda: ps.plume(
        "y ~ x1",
        with_column("x1", np.where(frame()["y"] == 1, np.nan, frame()["x1"])),
        k=2,
    ),
    ValueError,
    "after missing='drop' removed",
)

# ================================================================ fit options
FIT_REFUSALS = [
    ("maxiter=-1", {"maxiter": -1}, ValueError, "maxiter must be an integer >= 0"),
    ("maxiter=1.5", {"maxiter": 1.5}, ValueError, "maxiter must be an integer"),
    ("tol=0", {"tol": 0}, ValueError, "tol must be a finite number > 0"),
    ("tol=nan", {"tol": float("nan")}, ValueError, "tol must be a finite number"),
    ("em_tol=-1", {"em_tol": -1}, ValueError, "em_tol must be a finite number > 0"),
    ("em_overrelax=0.5", {"em_overrelax": 0.5}, ValueError, "at least 1"),
    (
        "em_overrelax=inf",
        {"em_overrelax": float("inf")},
        ValueError,
        "em_overrelax must be a finite number",
    ),
    ("alpha=-1", {"alpha": -1}, ValueError, "alpha must be a finite number >= 0"),
    ("alpha=nan", {"alpha": float("nan")}, ValueError, "alpha must be a finite number"),
    ("alpha as text", {"alpha": "1e-3"}, ValueError, "alpha must be a finite number"),
    ("alpha=inf", {"alpha": float("inf")}, ValueError, "alpha must be a finite number"),
    ("n_init=0", {"n_init": 0}, ValueError, "n_init must be an integer >= 1"),
    ("n_init=2.5", {"n_init": 2.5}, ValueError, "n_init must be an integer"),
    ("random_state as text", {"random_state": "abc"}, ValueError, "random_state"),
    ("random_state=-1", {"random_state": -1}, ValueError, "random_state"),
    ("random_state=True", {"random_state": True}, ValueError, "random_state"),
    (
        "random_state=RandomState(0)",
        {"random_state": np.random.RandomState(0)},
        ValueError,
        "a numpy Generator",
    ),
    ("method='lm'", {"method": "lm"}, ValueError, "method must be one of"),
    ("mstep='simplex'", {"mstep": "simplex"}, ValueError, "mstep must be one of"),
    ("init='pca'", {"init": "pca"}, ValueError, "init must be one of"),
    ("cov_type='HC4'", {"cov_type": "HC4"}, ValueError, "cov_type must be one of"),
    (
        "cluster without groups",
        {"cov_type": "cluster"},
        ValueError,
        "needs the cluster labels",
    ),
    (
        "cluster labels with NaN",
        {
            "cov_type": "cluster",
            "cov_kwds": {
                "groups": np.where(np.arange(N) == 0, np.nan, np.arange(N) % 5)
            },
        },
        ValueError,
        "missing cluster labels",
    ),
    (
        "cluster labels of the wrong length",
        {"cov_type": "cluster", "cov_kwds": {"groups": np.arange(10)}},
        ValueError,
        "one label per observation",
    ),
    (
        "one cluster",
        {"cov_type": "cluster", "cov_kwds": {"groups": np.zeros(N)}},
        ValueError,
        "at least two clusters",
    ),
    (
        "cov_kwds with HC0",
        {"cov_type": "HC0", "cov_kwds": {"groups": [1]}},
        ValueError,
        "takes no cov_kwds",
    ),
    (
        "use_t as text",
        {"use_t": "yes"},
        ValueError,
        "use_t must be True, False or None",
    ),
    ("retall as text", {"retall": "no"}, ValueError, "retall must be True or False"),
    ("full_output as text", {"full_output": "all"}, ValueError, "full_output must be"),
    (
        "start_params of the wrong length",
        {"start_params": np.zeros(5)},
        ValueError,
        "start_params must have 6 values",
    ),
    (
        "start_params with NaN",
        {"start_params": np.full(6, np.nan)},
        ValueError,
        "start_params must be finite",
    ),
    (
        "start_params as text",
        {"start_params": "abc"},
        ValueError,
        "start_params must be an array of numbers",
    ),
    (
        "start_params of 1e200",
        {"start_params": np.full(6, 1e200)},
        ValueError,
        "far beyond the scale of the data",
    ),
    (
        "start_params of 1e200 with bfgs",
        {"start_params": np.full(6, 1e200), "method": "bfgs"},
        ValueError,
        "far beyond the scale of the data",
    ),
    ("chunksize=0", {"chunksize": 0}, ValueError, "chunksize must be an integer >= 1"),
    ("chunksize as text", {"chunksize": "big"}, ValueError, "chunksize must be one of"),
    (
        "chunksize with bfgs",
        {"chunksize": 50, "method": "bfgs"},
        ValueError,
        "needs the whole design in memory",
    ),
    (
        "HC3 by row blocks",
        {"chunksize": 50, "cov_type": "HC3"},
        ValueError,
        "needs every observation",
    ),
    ("reseat=-1", {"reseat": -1}, ValueError, "reseat must be an integer >= 0"),
    (
        "reseat with bfgs",
        {"reseat": 2, "method": "bfgs"},
        ValueError,
        "reseat needs method='em'",
    ),
    ("unknown fit keyword", {"foo": 1}, TypeError, "foo"),
    (
        "unknown optimiser keyword",
        {"method": "newton", "gtol": 1e-3},
        TypeError,
        "gtol",
    ),
    (
        "alpha with a statsmodels optimiser",
        {"method": "nm", "alpha": 1e-3},
        ValueError,
        "alpha > 0 needs method='em'",
    ),
]
for label, options, kind, says in FIT_REFUSALS:
    refuses(
        f"fit({label})",
        lambda options=options: ps.plume("y ~ x1 + x2", frame(), k=2).fit(**options),
        kind,
        says,
    )
refuses(
    "fit(reseat=-1) at k=1",
    lambda: PM(outcome(), design(), k=1).fit(reseat=-1),
    ValueError,
    "reseat must be an integer >= 0",
)
fits(
    "full_output=1 and retall=0, statsmodels' integer flags",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit(full_output=1, retall=0),
    fit_ok,
)
fits(
    "maxiter as numpy int",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit(maxiter=np.int64(200)),
    fit_ok,
)
warns(
    "alpha=1e300 collapses the faces",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit(alpha=1e300, maxiter=50),
    ConvergenceWarning,
    "shrinks every slope to about zero",
)
warns(
    "maxiter=2",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit(maxiter=2),
    ConvergenceWarning,
    "did not converge",
)
warns(
    "separable data without a penalty",
    lambda: ps.plume(
        "y ~ x1 + x2", with_column("y", (frame()["x1"] > 0).astype(int)), k=1
    ).fit(),
    PerfectSeparationWarning,
    "fit(alpha=1e-3)",
)
fits(
    "separable data with a penalty",
    lambda: ps.plume(
        "y ~ x1 + x2", with_column("y", (frame()["x1"] > 0).astype(int)), k=1
    ).fit(alpha=1e-2),
    fit_ok,
)
refuses(
    "fit_regularized(method='lasso')",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit_regularized(method="lasso"),
    ValueError,
    "method must be one of",
)
fits(
    "fit_regularized(method='l1')",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2).fit_regularized(method="l1"),
    lambda res: res.converged and res.nnz_params >= 2,
)
refuses(
    "wald_test of an L1 fit's zero",
    lambda: _l1_fit(alpha=1e3).wald_test("h1:x1 = 0"),
    ValueError,
    "which the fit holds fixed with no variance (an L1 fit's zero)",
)
refuses(
    "wald_test of a coefficient a duplicated column leaves unidentified",
    lambda: _duplicated_fit().wald_test("h1:x1 = 0"),
    ValueError,
    "along a null direction of the design",
)
refuses(
    "L1 alpha of the wrong length",
    lambda: _l1_fit(alpha=[0.0, 1.0, 1.0]),
    ValueError,
    "one per parameter",
)
refuses(
    "L1 alpha negative",
    lambda: _l1_fit(alpha=-1.0),
    ValueError,
    "alpha must be finite and >= 0",
)
refuses(
    "L1 alpha with a NaN",
    lambda: _l1_fit(alpha=[0.0, np.nan, 1.0, 0.0, 1.0, 1.0]),
    ValueError,
    "alpha must be finite and >= 0",
)
refuses(
    "L1 alpha as text",
    lambda: _l1_fit(alpha="strong"),
    ValueError,
    "alpha must be an array of numbers",
)
refuses(
    "L1 trim_mode='foo'",
    lambda: _l1_fit(trim_mode="foo"),
    ValueError,
    "trim_mode must be one of",
)
refuses(
    "L1 with cov_type='HC0'",
    lambda: _l1_fit(cov_type="HC0"),
    ValueError,
    "cov_type must be one of",
)
refuses(
    "L1 on a label-flip model",
    lambda: ps.plume_flip("y ~ x1 + x2", frame(), k=2).fit_regularized(
        alpha=1.0, method="l1"
    ),
    ValueError,
    "is for PolyhedralMixtureLogit",
)
warns(
    "L1 with maxiter=1",
    lambda: _l1_fit(alpha=20.0, maxiter=1),
    ConvergenceWarning,
    "did not converge",
)
refuses(
    "label-flip fit with flip_start=0.5",
    lambda: ps.plume_flip("y ~ x1 + x2", frame(), k=2).fit(flip_start=0.5),
    ValueError,
    "flip_start must be below 0.5",
)
refuses(
    "label-flip fit with method='bfgs'",
    lambda: ps.plume_flip("y ~ x1 + x2", frame(), k=2).fit(method="bfgs"),
    ValueError,
    "method must be one of",
)

# ================================================================ results
RESULT_REFUSALS = [
    (
        "predict(an array) on a formula model",
        lambda r: r.predict(np.zeros((3, 2))),
        TypeError,
        "pass a DataFrame",
    ),
    (
        "predict(a list) on a formula model",
        lambda r: r.predict([[0.1, 0.2]]),
        TypeError,
        "with the columns 'x1', 'x2'",
    ),
    (
        "get_prediction(an array) on a formula model",
        lambda r: r.get_prediction(np.zeros((3, 2))),
        TypeError,
        "pass a DataFrame",
    ),
    (
        "predict a frame missing a column",
        lambda r: r.predict(frame().drop(columns="x2")),
        ValueError,
        "x2",
    ),
    (
        "predict which='foo'",
        lambda r: r.predict(frame(), which="foo"),
        ValueError,
        "which must be one of",
    ),
    (
        "predict text in a numeric column",
        lambda r: r.predict(with_column("x1", ["a"] * N)),
        ValueError,
        "x1",
    ),
    (
        "get_prediction alpha=1.5",
        lambda r: r.get_prediction(frame()).summary_frame(alpha=1.5),
        ValueError,
        "alpha must be",
    ),
    ("conf_int alpha=0", lambda r: r.conf_int(alpha=0), ValueError, "alpha must be"),
    (
        "conf_int method='foo'",
        lambda r: r.conf_int(method="foo"),
        ValueError,
        "method must be one of",
    ),
    (
        "conf_int method='profile' of a penalised fit",
        lambda r: r.model.fit(alpha=1e-2).conf_int(method="profile"),
        ValueError,
        "refit with alpha=0",
    ),
    ("t_test of an empty constraint", lambda r: r.t_test(""), ValueError, "is empty"),
    (
        "t_test of an unknown name",
        lambda r: r.t_test("h1:zz = 0"),
        ValueError,
        "'h1:zz' is not a parameter name",
    ),
    (
        "t_test of a bare column at k=2",
        lambda r: r.t_test("x1 = 0"),
        ValueError,
        "name its hyperplane",
    ),
    (
        "f_test of a 3x3 identity",
        lambda r: r.f_test(np.eye(3)),
        ValueError,
        "one column per parameter (6",
    ),
    (
        "wald_test of a matrix of the wrong width",
        lambda r: r.wald_test(np.ones((1, 4)), scalar=True),
        ValueError,
        "one column per parameter",
    ),
    (
        "t_test of (R, q) with q too long",
        lambda r: r.t_test((np.eye(6)[:1], [0, 1])),
        ValueError,
        "one value per row",
    ),
    (
        "t_test of an empty list",
        lambda r: r.t_test([]),
        ValueError,
        "one column per parameter",
    ),
    ("summary alpha=2", lambda r: r.summary(alpha=2), ValueError, "alpha must be"),
    (
        "summary with xname of the wrong length",
        lambda r: r.summary(xname=["a"]),
        ValueError,
        "xname",
    ),
    (
        "bootstrap n_boot=0",
        lambda r: r.bootstrap(n_boot=0),
        ValueError,
        "n_boot must be an integer",
    ),
    (
        "bootstrap n_jobs=0",
        lambda r: r.bootstrap(n_boot=2, n_jobs=0),
        ValueError,
        "n_jobs",
    ),
    (
        "get_margeff at='foo'",
        lambda r: r.get_margeff(at="foo"),
        ValueError,
        "at must be one of",
    ),
    (
        "get_margeff method='x'",
        lambda r: r.get_margeff(method="x"),
        ValueError,
        "method must be one of",
    ),
    (
        "info_criteria('foo')",
        lambda r: r.info_criteria("foo"),
        ValueError,
        "crit must be one of",
    ),
    ("rademacher_bound delta=0", lambda r: r.rademacher_bound(0), ValueError, "delta"),
    (
        "summary(cov_type='HC3')",
        lambda r: r.summary(cov_type="HC3"),
        ValueError,
        "refit with fit(cov_type",
    ),
    (
        "t_test_pairwise at k=2",
        lambda r: r.t_test_pairwise("x1"),
        NotImplementedError,
        "test them with t_test",
    ),
]
for label, call, kind, says in RESULT_REFUSALS:
    refuses(label, lambda call=call: call(formula_fit()), kind, says)
refuses(
    "predict a default-labelled frame on a named model",
    lambda: array_fit().predict(pd.DataFrame(design()[:3])),
    ValueError,
    "frame.to_numpy()",
)
refuses(
    "predict an array of the wrong width",
    lambda: array_fit().predict(np.ones((3, 5))),
    ValueError,
    "columns",
)
fits(
    "predict an empty frame",
    lambda: formula_fit().predict(frame().iloc[:0]),
    lambda out: len(out) == 0,
)
fits(
    "predict a row with NaN",
    lambda: formula_fit().predict(
        with_column("x1", np.where(np.arange(N) == 0, np.nan, frame()["x1"]))
    ),
    lambda out: np.isnan(np.asarray(out)[0]) and np.isfinite(np.asarray(out)[1:]).all(),
)
fits(
    "predict a frame with columns in another order and extras",
    lambda: array_fit().predict(frame()[["x2", "y", "x1"]].assign(const=1.0, z="a")),
    lambda out: np.allclose(np.asarray(out), np.asarray(array_fit().predict())),
)
fits(
    "predict a dict of columns on a formula model",
    lambda: formula_fit().predict({"x1": [0.1, 0.2], "x2": [0.0, 0.5]}),
    lambda out: len(out) == 2,
)
refuses(
    "get_margeff after remove_data",
    lambda: _removed().get_margeff(),
    ValueError,
    "remove_data",
)
refuses(
    "refit after remove_data",
    lambda: _removed().model.fit(),
    ValueError,
    "fit needs the estimation data, which remove_data",
)
refuses(
    "loglike after remove_data",
    lambda: (res := _removed()).model.loglike(res.params),
    ValueError,
    "the likelihood needs the estimation data, which remove_data",
)
refuses(
    "fit_regularized after remove_data",
    lambda: _removed().model.fit_regularized(alpha=1.0),
    ValueError,
    "fit_regularized needs the estimation data, which remove_data",
)
fits(
    "predict one row as a 1-D array after remove_data",
    lambda: _removed(array=True).predict(design()[2]),
    lambda out: np.allclose(
        out, PM(outcome(), design(), k=2).fit().predict(design()[2:3])
    ),
)
fits(
    "predict one row as a Series after remove_data",
    lambda: _removed(array=True).predict(pd.Series(design()[2])),
    lambda out: np.allclose(
        out, PM(outcome(), design(), k=2).fit().predict(design()[2:3])
    ),
)
fits(
    "summary after remove_data",
    lambda: unwrapped(_removed().summary()),
    lambda text: "hyperplane h1" in text,
)


def _removed(array=False):
    if array:
        res = PM(outcome(), design(), k=2).fit()
    else:
        res = ps.plume("y ~ x1 + x2", frame(), k=2).fit()
    res.remove_data()
    return res


# ================================================================ selection
SELECT_REFUSALS = [
    ("select_k ks as text", {"ks": "2"}, ValueError, "ks"),
    (
        "select_k ks=[0]",
        {"ks": [0]},
        ValueError,
        "every k in ks must be an integer >= 1",
    ),
    ("select_k gammas=[-1]", {"gammas": [-1.0]}, ValueError, "gamma"),
    (
        "select_k criterion='r2'",
        {"criterion": "r2"},
        ValueError,
        "criterion must be one of",
    ),
    (
        "select_k cv=1",
        {"criterion": "cv", "cv": 1},
        ValueError,
        "cv must be an integer >= 2",
    ),
    (
        "select_k n_se=-1",
        {"criterion": "cv", "n_se": -1},
        ValueError,
        "n_se must be a finite number",
    ),
    ("select_k n_se with BIC", {"n_se": 1.0}, ValueError, "use it with criterion='cv'"),
    (
        "select_k lr_bootstrap with n_boot=9",
        {"criterion": "lr_bootstrap", "n_boot": 9},
        ValueError,
        "use n_boot >= 19",
    ),
    (
        "select_k label flips with a hard gate",
        {"label_flips": True, "ks": (1, 2), "gammas": [np.inf]},
        ValueError,
        "needs soft gates",
    ),
]
for label, options, kind, says in SELECT_REFUSALS:
    refuses(
        label,
        lambda options=options: ps.select_k(
            "y ~ x1 + x2", frame(), **{"ks": (1,), **options}
        ),
        kind,
        says,
    )
refuses(
    "compare_lr_test of fits on different data",
    lambda: ps.compare_lr_test(
        ps.plume("y ~ x1", frame(), k=1).fit(),
        ps.plume("y ~ x1 + x2", frame(150), k=2).fit(),
    ),
    ValueError,
    "same",
)
refuses(
    "compare_lr_test with the larger model first",
    lambda: ps.compare_lr_test(
        formula_fit(), ps.plume("y ~ x1 + x2", frame(), k=1).fit()
    ),
    ValueError,
    "restricted",
)


# ================================================================ scikit-learn
def _classifier(**options):
    from plumestats.sklearn import PolyhedralClassifier

    return PolyhedralClassifier(**options)


try:
    from sklearn.exceptions import NotFittedError as NOT_FITTED
except ImportError:  # the sklearn cases skip without scikit-learn
    NOT_FITTED = None

X_SK = frame()[["x1", "x2"]].to_numpy()
SKLEARN_REFUSALS = [
    (
        "sklearn labels with None",
        {},
        np.array(["a", "b", None, "a"] * 50, dtype=object),
        ValueError,
        "missing labels",
    ),
    (
        "sklearn labels of mixed types",
        {},
        np.array(["a", 1, "b", 2] * 50, dtype=object),
        ValueError,
        "mixes labels of types",
    ),
    (
        "sklearn three classes",
        {},
        np.arange(N) % 3,
        ValueError,
        "Only binary classification",
    ),
    ("sklearn one class", {}, np.ones(N), ValueError, "only 1 class"),
    ("sklearn k=0", {"k": 0}, outcome(), ValueError, "k must be an integer >= 1"),
    ("sklearn inside=2", {"inside": 2}, outcome(), ValueError, "inside must be 0 or 1"),
    ("sklearn alpha=-1", {"alpha": -1.0}, outcome(), ValueError, "alpha must be"),
    (
        "sklearn max_iter=-1",
        {"max_iter": -1},
        outcome(),
        ValueError,
        "max_iter must be an integer >= 0",
    ),
    ("sklearn inside=np.True_", {"inside": np.True_}, outcome(), ValueError, "0 or 1"),
    (
        'sklearn reseat=-1 with k="auto"',
        {"reseat": -1},
        outcome(),
        ValueError,
        "reseat must be an integer >= 0",
    ),
]
for label, options, labels, kind, says in SKLEARN_REFUSALS:
    refuses(
        label,
        lambda options=options, labels=labels: _classifier(**options).fit(X_SK, labels),
        kind,
        says,
    )
refuses(
    "sklearn X with NaN",
    lambda: _classifier().fit(
        np.where(np.arange(N)[:, None] == 0, np.nan, X_SK), outcome()
    ),
    ValueError,
    "NaN",
    origin="sklearn",
)
refuses(
    "sklearn predict before fit",
    lambda: _classifier().predict(X_SK),
    NOT_FITTED,
    "not fitted",
    origin="sklearn",
)
refuses(
    "sklearn predict with the wrong number of features",
    lambda: _classifier(k=1).fit(X_SK, outcome()).predict(np.ones((3, 5))),
    ValueError,
    "features",
    origin="sklearn",
)
fits(
    "sklearn hard gate (gamma=inf)",
    lambda: _classifier(gamma=np.inf).fit(X_SK, outcome()),
    lambda clf: clf.converged_,
)
fits(
    "sklearn text labels",
    lambda: _classifier().fit(X_SK, np.where(outcome() == 1, "in", "out")),
    lambda clf: list(clf.classes_) == ["in", "out"],
)


# ================================================================ named columns
fits(
    "predict by integer column labels on a model fitted on [2, 1, 0]",
    lambda: _integer_labels_fit().predict(
        pd.DataFrame(design()[:5], columns=[2, 1, 0])[[0, 1, 2]]
    ),
    lambda out: np.allclose(
        np.asarray(out), np.asarray(_integer_labels_fit().predict(design()[:5]))
    ),
)
fits(
    "predict a MultiIndex-column frame on itself",
    lambda: _multiindex_fit()[1].predict(_multiindex_fit()[0]),
    lambda out: np.allclose(
        np.asarray(out), np.asarray(_multiindex_fit()[1].predict())
    ),
)


@functools.cache
def _integer_labels_fit():
    return PM(outcome(), pd.DataFrame(design(), columns=[2, 1, 0]), k=2).fit()


@functools.cache
def _multiindex_fit():
    columns = pd.MultiIndex.from_tuples([("c", ""), ("x", "1"), ("x", "2")])
    exog = pd.DataFrame(design(), columns=columns)
    return exog, PM(outcome(), exog, k=2).fit()


def _duplicated_fit():
    """The two-face fit of a design whose x1 is duplicated (warned at the
    model: the catalogue's case for that warning is elsewhere)."""
    frame_ = frame().assign(x1_again=frame()["x1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)
        model = ps.plume("y ~ x1 + x2 + x1_again", frame_, k=2)
    return model.fit()


def _l1_fit(alpha=1.0, **options):
    """An L1 fit of the two-face frame (K p = 6 parameters)."""
    model = ps.plume("y ~ x1 + x2", frame(), k=2)
    return model.fit_regularized(alpha=alpha, method="l1", **options)


# ============================================================ frequency weights
def _fit_without_row_4(freq_weights):
    """A formula fit with these weights, whose formula drops row 4 (x1 NaN)."""
    data = with_column("x1", np.where(np.arange(N) == 4, np.nan, frame()["x1"]))
    return ps.plume("y ~ x1 + x2", data, k=2, freq_weights=freq_weights).fit()


def _weights(**changes) -> np.ndarray:
    weights = np.ones(N)
    for position, value in changes.items():
        weights[int(position.removeprefix("at"))] = value
    return weights


refuses(
    "freq_weights with a negative weight",
    lambda: PM(outcome(), design(), k=2, freq_weights=_weights(at7=-1.0)),
    ValueError,
    "1 negative values (the first, -1.0, at row 7)",
)
refuses(
    "freq_weights with NaN",
    lambda: PM(outcome(), design(), k=2, freq_weights=_weights(at3=np.nan)),
    ValueError,
    "1 missing or infinite values",
)
refuses(
    "freq_weights all zero",
    lambda: PM(outcome(), design(), k=2, freq_weights=np.zeros(N)),
    ValueError,
    "freq_weights are all zero",
)
refuses(
    "freq_weights of the wrong length",
    lambda: PM(outcome(), design(), k=2, freq_weights=np.ones(N - 1)),
    ValueError,
    "freq_weights has 199 values but the data have 200 rows",
)
refuses(
    "freq_weights of the wrong length (formula)",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2, freq_weights=np.ones(3)),
    ValueError,
    "freq_weights has 3 values but the data have 200 rows",
)
refuses(
    "freq_weights as two columns",
    lambda: PM(outcome(), design(), k=2, freq_weights=np.ones((N, 2))),
    ValueError,
    "one number per observation",
)
refuses(
    "freq_weights as text",
    lambda: PM(outcome(), design(), k=2, freq_weights=np.array(["one"] * N)),
    ValueError,
    "freq_weights must be numbers",
)
refuses(
    "sklearn sample_weight of the wrong length",
    lambda: _classifier().fit(X_SK, outcome(), sample_weight=np.ones(3)),
    ValueError,
    "give one weight per sample",
)
refuses(
    "sklearn label_flips='no'",
    lambda: _classifier(label_flips="no").fit(X_SK, outcome()),
    ValueError,
    "label_flips must be True or False",
)
refuses(
    "sklearn negative sample_weight",
    lambda: _classifier().fit(X_SK, outcome(), sample_weight=-np.ones(N)),
    ValueError,
    "negative",
)
refuses(
    "LR bootstrap with non-integer freq_weights",
    lambda: ps.compare_lr_test(*_half_weighted_fits(), method="bootstrap", n_boot=3),
    ValueError,
    "whole-number freq_weights",
)
fits(
    "freq_weights with a missing weight on a row the formula drops",
    lambda: _fit_without_row_4(_weights(at4=np.nan)),
    lambda res: res.nobs == N - 1 and fit_ok(res),
)
fits(
    "freq_weights with zeros (rows left out)",
    lambda: PM(outcome(), design(), k=2, freq_weights=_weights(at0=0.0)).fit(),
    lambda res: np.allclose(
        res.params, PM(outcome()[1:], design()[1:], k=2).fit().params, atol=1e-8
    ),
)


@functools.cache
def _half_weighted_fits():
    weights = np.full(N, 0.5)
    return tuple(
        PM(outcome(), design(), k=k, freq_weights=weights).fit() for k in (1, 2)
    )


# ====================================================== Logit's model methods
refuses(
    "fit_regularized(refit=True)",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=1).fit_regularized(
        alpha=1.0, refit=True
    ),
    ValueError,
    "refit=True is not available",
)
refuses(
    "fit_constrained",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=1).fit_constrained("x1 = 0"),
    NotImplementedError,
    "fit_constrained is not available",
)
refuses(
    "hessian_factor",
    lambda: PM(outcome(), design(), k=1).hessian_factor(np.zeros(3)),
    NotImplementedError,
    "use model.hessian(params)",
)
refuses(
    "get_margeff(atexog={column: NaN})",
    lambda: formula_fit().get_margeff(atexog={1: np.nan}),
    ValueError,
    "atexog's value of 'x1'",
)
refuses(
    "get_margeff(atexog=rows with infinity)",
    lambda: formula_fit().get_margeff(atexog=np.array([[1.0, np.inf, 0.0]])),
    ValueError,
    "must be finite numbers",
)
refuses(
    "get_margeff(atexog={column: text})",
    lambda: formula_fit().get_margeff(atexog={"x1": "a"}),
    ValueError,
    "must be numbers",
)
fits(
    "predict with a dict of columns (arrays model)",
    lambda: array_fit().predict({"x2": [0.5], "x1": [0.0], "const": [1.0]}),
    lambda got: np.allclose(
        np.asarray(got), array_fit().predict(np.array([[0.0, 0.5, 1.0]]))
    ),
)


# ============================================ new data of another dtype
def _new_rows(**columns):
    return frame().head(3).assign(**columns)


def _predicted_as_floats(res) -> bool:
    """The predictions at the first rows with x1 = 1, 0, 1 (as floats)."""
    return np.allclose(
        np.asarray(res), formula_fit().predict(_new_rows(x1=[1.0, 0.0, 1.0]))
    )


fits(
    "predict with booleans where the formula used numbers",
    lambda: formula_fit().predict(_new_rows(x1=[True, False, True])),
    _predicted_as_floats,
)
fits(
    "predict with a categorical of numbers where the formula used numbers",
    lambda: formula_fit().predict(_new_rows(x1=pd.Categorical([1.0, 0.0, 1.0]))),
    _predicted_as_floats,
)
fits(
    "predict with numbers in an object column",
    lambda: formula_fit().predict(
        _new_rows(x1=pd.Series([1.0, 0.0, 1.0], dtype=object))
    ),
    _predicted_as_floats,
)
refuses(
    "predict with dates where the formula used numbers",
    lambda: formula_fit().predict(_new_rows(x1=pd.Timestamp("2020-01-01"))),
    ValueError,
    "dates or durations",
)
refuses(
    "predict with two columns of one name (formula)",
    lambda: formula_fit().predict(
        pd.concat([frame().head(3)[["x1"]], frame().head(3)[["x1", "x2"]]], axis=1)
    ),
    ValueError,
    "more than one column named 'x1'",
)
refuses(
    "a formula reading a column of dates",
    lambda: ps.plume(
        "y ~ x1 + t",
        frame().assign(t=pd.Timestamp("2020-01-01") + pd.to_timedelta(NOISE, "D")),
        k=1,
    ),
    ValueError,
    "holds dates or durations",
)
refuses(
    "a column of durations (arrays)",
    lambda: PM(outcome(), frame()[["x1"]].assign(t=pd.to_timedelta(NOISE, "D")), k=1),
    ValueError,
    "'t' (timedelta64",
)


# ======================================== Series used by position
def _weight_series():
    return pd.Series(_weights(), index=frame().index)


refuses(
    "freq_weights a Series in another order than the data",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=2, freq_weights=_weight_series()[::-1]),
    ValueError,
    "freq_weights.reindex(data.index)",
)
refuses(
    "cluster groups a Series of other rows",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=1).fit(
        cov_type="cluster",
        cov_kwds={"groups": pd.Series(np.arange(N) % 10, index=np.arange(N) + N)},
    ),
    ValueError,
    "groups is a pandas object whose index is not the data's rows",
)
fits(
    "freq_weights a Series of the data's rows, one row dropped by the formula",
    lambda: _fit_without_row_4(_weight_series()),
    lambda res: res.nobs == _weights().sum() - _weights()[4] and fit_ok(res),
)


# ============================================ messages in the user's words
refuses(
    "formula data None",
    lambda: ps.plume("y ~ x1 + x2", None, k=1),
    TypeError,
    "data must be a DataFrame (or a dict of columns)",
)
refuses(
    "formula data a dict of columns of different lengths",
    lambda: ps.plume("y ~ x1", {"y": [0.0, 1.0, 0.0], "x1": [1.0, 2.0]}, k=1),
    ValueError,
    "give every column one value per observation",
)
refuses(
    "freq_weights a column's name",
    lambda: ps.plume("y ~ x1 + x2", frame(), k=1, freq_weights="w"),
    ValueError,
    "for a column of the data pass data['w']",
)
refuses(
    "get_prediction with row_labels of another length",
    lambda: formula_fit().get_prediction(frame().head(1), row_labels=["a", "b"]),
    ValueError,
    "row_labels has 2 labels for 1 rows",
)
refuses(
    "select_k by cross-validation with a class too rare, named by its label",
    lambda: ps.select_k(
        "label ~ x1",
        frame().assign(label=np.where(np.arange(N) < 4, "n", "y")),
        ks=[1],
        criterion="cv",
        cv=5,
    ),
    ValueError,
    "class 'n' has 4",
)


# ============================================= a review's finds (2026-11-28)
@functools.cache
def _numpy_fit():
    return PM(outcome(), design(), k=2).fit()


fits(
    "predict with a dict of columns in another order (model on arrays)",
    lambda: _numpy_fit().predict({"x2": [0.5], "x1": [0.0], "const": [1.0]}),
    lambda got: np.allclose(
        np.asarray(got), _numpy_fit().predict(np.array([[1.0, 0.0, 0.5]]))
    ),
)
fits(
    "a formula with a column of three dates (a factor, as patsy reads it)",
    lambda: ps.plume(
        "y ~ x1 + day",
        frame().assign(
            day=pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(N) % 3, "D")
        ),
        k=1,
    ).fit(),
    lambda res: len(res.params) == 4 and fit_ok(res),
)
refuses(
    "get_margeff(atexog=a frame with NaN)",
    lambda: formula_fit().get_margeff(
        atexog=pd.DataFrame({"x1": [np.nan], "x2": [0.0]})
    ),
    ValueError,
    "must be finite numbers (no NaN or infinity); not in 'x1'",
)
fits(
    "predict with pd.NA in an object column of numbers",
    lambda: formula_fit().predict(
        _new_rows(x1=pd.Series([1.0, pd.NA, 1.0], dtype=object, index=range(3)))
    ),
    lambda got: (
        np.isnan(np.asarray(got)[1])
        and np.allclose(
            np.asarray(got)[[0, 2]],
            np.asarray(formula_fit().predict(_new_rows(x1=[1.0, 0.0, 1.0])))[[0, 2]],
        )
    ),
)


@functools.cache
def _level_fit():
    data = frame().assign(g=pd.Categorical(np.array(["a", "b", "c"])[np.arange(N) % 3]))
    return ps.plume("y ~ x1 + g", data, k=1).fit()


def _level_rows(categories):
    rows = frame().head(2)[["x1"]]
    return rows.assign(g=pd.Categorical(["b", "a"], categories=categories))


fits(
    "predict with a categorical of the fit's levels in another order",
    lambda: _level_fit().predict(_level_rows(["c", "b", "a"])),
    lambda got: np.allclose(
        np.asarray(got), _level_fit().predict(_level_rows(["a", "b", "c"]))
    ),
)
fits(
    "predict with a categorical of some of the fit's levels",
    lambda: _level_fit().predict(_level_rows(["b", "a"])),
    lambda got: np.allclose(
        np.asarray(got), _level_fit().predict(_level_rows(["a", "b", "c"]))
    ),
)
refuses(
    "a formula term reading a column named Intercept beside the constant",
    lambda: ps.plume("y ~ x1 + Intercept", frame().assign(Intercept=2.0), k=1),
    ValueError,
    "the name patsy gives the constant term",
)


@functools.cache
def _flag_fit():
    return ps.plume("y ~ x1 + b", frame().assign(b=frame()["x2"] > 0), k=1).fit()


refuses(
    "predict with a categorical of 1 and 0 where the fit's levels were booleans",
    lambda: _flag_fit().predict(
        frame().head(4).assign(b=pd.Categorical([1, 0, 1, 0], categories=[1, 0]))
    ),
    ValueError,
    "mismatching levels",
)
refuses(
    "a formula naming Intercept that the data do not have",
    lambda: ps.plume("y ~ x1 + Intercept", frame(), k=1),
    ValueError,
    "name 'Intercept' is not defined",
)


# ============================================ the variants' tools (2026-11-28)
@functools.cache
def _separated_fit():
    # two faces fit the noise-free polyhedron's labels exactly
    data, _ = ps.simulate_polyhedron(200, d=2, k=2, noise=0.0, random_state=0)
    return ps.plume("y ~ x1 + x2", data, k=2).fit()


refuses(
    "compare_lr_test of PLUME and a label-flip fit of the other inside class",
    lambda: ps.compare_lr_test(
        ps.plume("y ~ x1 + x2", frame(), k=2).fit(alpha=1e-6),
        ps.plume_flip("y ~ x1 + x2", frame(), k=2, inside=0).fit(alpha=1e-6),
    ),
    ValueError,
    "they are not nested",
)
fits(
    "compare_lr_test of a one-face fit of the other inside class against two faces",
    lambda: ps.compare_lr_test(
        ps.plume("y ~ x1 + x2", frame(), k=1, inside=0).fit(), formula_fit()
    ),
    lambda test: test.df == 3 and np.isfinite(test.statistic),
)
refuses(
    "compare_lr_test of two fits with as many parameters",
    lambda: ps.compare_lr_test(
        ps.spla1("y ~ x1 + x2", frame(), k=2).fit(), formula_fit()
    ),
    ValueError,
    "the two fits have as many parameters (6)",
)
refuses(
    "compare_lr_test of PLUME against SPLA1 with more faces (chi-square)",
    lambda: ps.compare_lr_test(
        formula_fit(), ps.spla1("y ~ x1 + x2", frame(), k=3).fit()
    ),
    ValueError,
    "gate their faces differently",
)
refuses(
    "compare_lr_test of a label-flip fit against PLUME with more faces",
    lambda: ps.compare_lr_test(
        ps.plume_flip("y ~ x1 + x2", frame(), k=1).fit(), formula_fit()
    ),
    ValueError,
    "has a flip rate that full lacks",
)
refuses(
    "compare_lr_test of fits with different freq_weights (chi-square)",
    lambda: ps.compare_lr_test(
        PM(outcome(), design(), k=1, freq_weights=np.arange(N) % 3 + 1.0).fit(),
        PM(outcome(), design(), k=2, freq_weights=np.arange(N)[::-1] % 3 + 1.0).fit(),
    ),
    ValueError,
    "different freq_weights",
)
refuses(
    "a joint wald_test of a separated fit",
    lambda: _separated_fit().wald_test("h1:x1 = 0, h2:x1 = 0", scalar=True),
    ValueError,
    "no Wald test: every standard error is NaN (the fit is separated",
)
fits(
    "wald_test_terms of a separated fit",
    lambda: _separated_fit().wald_test_terms(),
    lambda table: bool(table.table["statistic"].isna().all()),
)
fits(
    "get_influence of a separated one-face label-flip fit",
    lambda: (
        ps.plume_flip(
            "y ~ x1 + x2", frame().assign(y=(frame()["x1"] > 0).astype(int)), k=1
        )
        .fit()
        .get_influence()
        .summary_frame()
    ),
    lambda table: bool(table["cooks_d"].isna().all()),
)
