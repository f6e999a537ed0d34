"""Every variant on every row source: the same fit in memory, by row blocks and
on Dask (issue 28).

Soft PLUME, SPLA1 and label-flip PLUME are fitted on the same data held as
NumPy arrays (one block), by blocks of rows (``chunksize``) and as Dask
arrays; each gives the same parameter names, warning classes and
``df_model``, and params, llf and bse equal to 1e-8. The designs: a plain
polytope, one with a duplicated column (collinear), a separable one and one
with indicator columns of a factor. Then the Dask defects the bad-input tries
found, gone because Dask input now goes through the model's one constructor:
NumPy's names for constant columns, the same collinearity warnings, "no
observations" for empty input, named errors for text, no leaked
RuntimeWarning.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from statsmodels.tools.sm_exceptions import CollinearityWarning

import plumestats.api as ps

if importlib.util.find_spec("dask") is None:  # pragma: no cover - the extra
    pytest.skip(
        'the Dask sources need the dask extra: pip install ".[dask]"',
        allow_module_level=True,
    )

import dask.array as da
import dask.dataframe as dd

RTOL = 1e-8
MODELS = {
    "soft": (ps.PolyhedralMixtureLogit, {"gamma": 2.0}),
    "hard": (ps.HardPolyhedralLogit, {}),
    "flips": (ps.LabelFlipPolyhedralLogit, {}),
}


def _design(kind: str) -> tuple[np.ndarray, pd.DataFrame]:
    data, _ = ps.simulate_polyhedron(1200, d=2, k=2, noise=0.08, random_state=3)
    exog = data[["x1", "x2"]].assign(const=1.0)
    y = data["y"].to_numpy()
    if kind == "collinear":
        exog = exog.assign(x1_again=exog["x1"])
    elif kind == "separable":
        y = ((exog["x1"] < 0.4) & (exog["x2"] < 0.6)).astype(int).to_numpy()
    elif kind == "categorical":
        level = np.random.default_rng(3).integers(0, 3, len(exog))
        exog = exog.assign(g_b=(level == 1) * 1.0, g_c=(level == 2) * 1.0)
    return y, exog


def _fit(make, options, endog, exog, **fit_options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make(endog, exog, k=2, **options)
        res = model.fit(**fit_options)
    return res, sorted({w.category.__name__ for w in caught})


def _sources(y, exog):
    """The same rows as NumPy-backed pandas, by blocks, and as Dask."""
    return {
        "memory": ((y, exog), {}),
        "blocks": ((y, exog), {"chunksize": 256}),
        "dask": (
            (
                da.from_array(y, chunks=300),
                dd.from_pandas(exog, npartitions=4),
            ),
            {},
        ),
    }


@pytest.mark.parametrize("variant", list(MODELS))
@pytest.mark.parametrize("kind", ["plain", "collinear", "separable", "categorical"])
def test_every_source_gives_the_same_fit(variant, kind):
    make, options = MODELS[variant]
    y, exog = _design(kind)
    # a penalty keeps the separable (and flip) fits finite, so that the
    # estimates themselves can be compared; without it see the next test
    fit_options = {"alpha": 1e-3}
    fits = {
        name: _fit(make, options, *data, **fit_options, **extra)
        for name, (data, extra) in _sources(y, exog).items()
    }
    reference, categories = fits["memory"]
    for name, (res, got_categories) in fits.items():
        assert list(res.params.index) == list(reference.params.index), name
        assert got_categories == categories, name
        # every identified parameter but the null's: collinear columns count
        # once per face (statsmodels' rank), penalty or not
        identified = res.model.k * res.model.rank + res.model.k_extra
        assert res.df_model == reference.df_model == identified - 1
        assert_allclose(res.params, reference.params, rtol=RTOL, atol=1e-9)
        assert_allclose(res.llf, reference.llf, rtol=RTOL)
        assert_allclose(res.bse, reference.bse, rtol=RTOL, equal_nan=True)


@pytest.mark.parametrize("variant", ["soft", "hard"])
def test_separation_is_reported_alike_on_every_source(variant):
    make, options = MODELS[variant]
    y, exog = _design("separable")
    seen = {
        name: _fit(make, options, *data, **extra)[1]
        for name, (data, extra) in _sources(y, exog).items()
    }
    assert "PerfectSeparationWarning" in seen["memory"]
    assert seen["blocks"] == seen["dask"] == seen["memory"]


# ------------------------------------------------------------ Dask's defects
def _dask(y, exog, **options):
    return ps.PolyhedralMixtureLogit(
        da.from_array(np.asarray(y), chunks=300),
        da.from_array(np.asarray(exog, dtype=float), chunks=(300, -1)),
        **options,
    )


def test_constant_and_zero_columns_get_numpys_names():
    y, exog = _design("plain")
    values = np.column_stack(
        [exog.to_numpy(), np.zeros(len(exog)), np.full(len(exog), 2.0)]
    )
    with pytest.warns(CollinearityWarning) as in_memory:
        numpy_model = ps.PolyhedralMixtureLogit(y, values, k=2)
    with pytest.warns(CollinearityWarning) as on_dask:
        dask_model = _dask(y, values, k=2)
    names = list(dask_model.data.param_names)
    assert names == list(numpy_model.data.param_names)
    assert len(set(names)) == len(names)  # no two "h1:const"
    assert [str(w.message) for w in on_dask] == [str(w.message) for w in in_memory]
    res = dask_model.fit(alpha=1e-2)
    test = res.t_test("h1:x1 = 0")  # constraints by name work
    assert np.isfinite(test.pvalue)


@pytest.mark.parametrize("kind", ["collinear", "categorical"])
def test_collinearity_warns_as_in_memory(kind):
    y, exog = _design(kind)
    if kind == "categorical":  # every level's indicator beside the intercept
        exog = exog.assign(g_a=1.0 - exog["g_b"] - exog["g_c"])
    with pytest.warns(CollinearityWarning) as in_memory:
        ps.PolyhedralMixtureLogit(y, exog, k=2)
    with pytest.warns(CollinearityWarning) as on_dask:
        ps.PolyhedralMixtureLogit(
            da.from_array(y, chunks=300), dd.from_pandas(exog, npartitions=4), k=2
        )
    assert [str(w.message) for w in on_dask] == [str(w.message) for w in in_memory]


def test_empty_input_says_no_observations():
    empty = np.empty((0, 3))
    with pytest.raises(ValueError, match="no observations"):
        _dask(np.empty(0), empty, k=2)
    with pytest.raises(ValueError, match="no observations"):
        ps.PolyhedralMixtureLogit(np.empty(0), empty, k=2)


def test_text_outcome_and_text_column_are_named():
    y, exog = _design("plain")
    labels = np.where(y == 1, "in", "out")
    fitted = ps.PolyhedralMixtureLogit(
        dd.from_pandas(pd.Series(labels, name="label"), npartitions=3),
        dd.from_pandas(exog, npartitions=3),
        k=2,
    )
    assert fitted.outcome_mapping == {"in": 0, "out": 1}
    texty = exog.assign(note=np.where(y == 1, "a", "b"))
    with pytest.raises(
        ValueError, match=r"exog columns 'note' \(\w+\) are not numeric"
    ):
        ps.PolyhedralMixtureLogit(y, texty, k=2)
    with pytest.raises(
        ValueError, match=r"exog columns 'note' \(\w+\) are not numeric"
    ):
        ps.PolyhedralMixtureLogit(
            da.from_array(y, chunks=300), dd.from_pandas(texty, npartitions=3), k=2
        )


def test_infinite_values_are_named_without_runtime_warnings():
    y, exog = _design("plain")
    holed = exog.to_numpy().copy()
    holed[7, 1] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning fails the test
        with pytest.raises(ValueError, match=r"'x2' \(1 rows\)"):
            ps.PolyhedralMixtureLogit(
                da.from_array(y, chunks=300),
                dd.from_pandas(
                    pd.DataFrame(holed, columns=exog.columns), npartitions=3
                ),
                k=2,
            )
