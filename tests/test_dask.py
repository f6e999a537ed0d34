"""The model on Dask collections: same fit as in memory, on a LocalCluster.

The cluster runs in this process (``processes=False``) to keep the tests fast;
the code path -- persisted partitions, one task per partition per pass, a tree
sum -- is the one a remote cluster runs. Needs the ``dask`` extra; without it
the tests are skipped with the reason, except under ``CI``, whose test command
installs it.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pandas as pd
import pytest
from conftest import unwrapped
from numpy.testing import assert_allclose, assert_array_equal

import plumestats.api as ps

if importlib.util.find_spec("distributed") is None:
    REASON = 'the Dask tests need the dask extra: pip install -e ".[dask]"'
    if os.environ.get("CI"):
        pytest.fail(f"{REASON}; CI's test command installs it", pytrace=False)
    pytest.skip(REASON, allow_module_level=True)

import dask.array as da
import dask.dataframe as dd
from distributed import Client, LocalCluster

# Only the order of the sums differs from the in-memory fit.
RTOL = 1e-8


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as dask_client,
    ):
        yield dask_client


@pytest.fixture(scope="module")
def triangle():
    data, _ = ps.simulate_polyhedron(4000, d=3, k=3, noise=0.05, random_state=1)
    return data


def _arrays(data):
    exog = np.column_stack([np.ones(len(data)), data[["x1", "x2", "x3"]]])
    return data["y"].to_numpy(), exog


@pytest.fixture(scope="module")
def reference(triangle):
    return ps.PolyhedralMixtureLogit(*_arrays(triangle), k=3).fit()


@pytest.fixture(scope="module")
def dask_fit(client, triangle):
    y, exog = _arrays(triangle)
    model = ps.PolyhedralMixtureLogit(
        da.from_array(y, chunks=700), da.from_array(exog, chunks=(700, 2)), k=3
    )
    return model.fit()


def test_chunked_and_dask_fits_equal_the_in_memory_fit(reference, dask_fit):
    """The issue's first "must show": same params and L to 1e-8 relative."""
    in_memory = reference
    chunked = reference.model.fit(chunksize=900)
    for fit in (chunked, dask_fit):
        assert_allclose(fit.params, in_memory.params, rtol=RTOL)
        assert_allclose(fit.llf, in_memory.llf, rtol=RTOL)
        assert fit.n_iter == in_memory.n_iter
    retvals = dask_fit.mle_retvals
    runs = [*retvals["restarts_llf_history"], *retvals["reseat_llf_history"]]
    iterations = sum(len(history) - 1 for history in runs)  # the moves' runs too
    assert retvals["data_passes"] <= 2 * iterations + 10 * len(runs)


def test_dask_fit_progress_counts_its_passes(dask_fit, capsys):
    # the bar's text names the passes over the partitions as they are made
    shown = dask_fit.model.fit(progress=True)
    text = capsys.readouterr().err.replace("\r", "\n")
    assert "passes over the data" in text and "1/1" in text
    assert_allclose(shown.params, dask_fit.params, rtol=RTOL)
    assert shown.n_iter == dask_fit.n_iter


def test_dask_reseat_makes_the_in_memory_moves(client):
    # a fit with a move that raises the objective (tests/test_reseat.py); the
    # moves are read on the rows the starts use, gathered from the partitions
    data, _ = ps.simulate_polyhedron(16000, d=3, k=6, random_state=5)
    y = data["y"].to_numpy()[:6000]
    exog = np.column_stack([np.ones(6000), data[["x1", "x2", "x3"]].to_numpy()[:6000]])
    in_memory = ps.PolyhedralMixtureLogit(y, exog, k=6).fit(
        alpha=1e-4, random_state=5, reseat=6
    )
    lazy = ps.PolyhedralMixtureLogit(
        da.from_array(y, chunks=1500), da.from_array(exog, chunks=(1500, 4)), k=6
    ).fit(alpha=1e-4, random_state=5, reseat=6)
    moves = in_memory.mle_retvals["reseat_llf"]
    assert moves.max() > in_memory.mle_retvals["restarts_llf"].max() + 10
    assert_allclose(lazy.mle_retvals["reseat_llf"], moves, rtol=1e-8)
    assert_allclose(lazy.params, in_memory.params, rtol=1e-7)


def test_dask_results_inference_and_summary(dask_fit, reference):
    assert_allclose(dask_fit.bse, reference.bse, rtol=1e-6)
    assert_allclose(dask_fit.llnull, reference.llnull, rtol=1e-12)
    assert_allclose(dask_fit.aic, reference.aic, rtol=1e-10)
    assert_allclose(dask_fit.bic, reference.bic, rtol=1e-10)
    assert dask_fit.nobs == reference.nobs
    assert dask_fit.df_model == reference.df_model
    text = unwrapped(dask_fit.summary())
    assert "No. Observations:" in text and "4000" in text
    assert "hyperplane h3" in text


def test_dask_results_reduce_over_the_partitions(dask_fit, reference):
    """What the results take from the rows (perfectly fitted rows, gate mass,
    the Gram matrix, the largest row norm, the confusion matrix) is summed per
    partition, never brought to the driver, and equals the in-memory fit's."""
    assert dask_fit.chunksize is None  # the partitions are the blocks
    diagnostics, expected = dask_fit.diagnostics, reference.diagnostics
    assert_allclose(diagnostics.gate_mass, expected.gate_mass, rtol=RTOL)
    assert_allclose(diagnostics.condition_number, expected.condition_number, rtol=RTOL)
    assert diagnostics.n_perfect == expected.n_perfect
    assert diagnostics.flags == expected.flags
    assert_allclose(dask_fit._radius, reference._radius, rtol=RTOL)
    assert_allclose(
        dask_fit.rademacher_bound().log_total,
        reference.rademacher_bound().log_total,
        rtol=RTOL,
    )
    assert_array_equal(dask_fit.pred_table(), reference.pred_table())


def test_dask_predictions(dask_fit, reference, triangle):
    _, exog = _arrays(triangle)
    fitted = dask_fit.predict()
    assert isinstance(fitted, da.Array)  # lazy on the estimation sample
    assert_allclose(fitted.compute(), reference.predict(), rtol=1e-7)
    new = exog[:50] + 0.1
    assert_allclose(dask_fit.predict(new), reference.predict(new), rtol=1e-7)
    lazy = dask_fit.predict(da.from_array(new, chunks=(20, 4)), which="gate")
    assert_allclose(lazy.compute(), reference.predict(new, which="gate"), rtol=1e-7)
    llobs = dask_fit.model.loglikeobs(dask_fit.params)
    assert_allclose(float(llobs.sum().compute()), dask_fit.llf, rtol=1e-12)


def test_dask_model_derivatives_match_in_memory(dask_fit, reference):
    params = np.asarray(reference.params) * 1.1
    assert_allclose(
        dask_fit.model.score(params), reference.model.score(params), rtol=1e-9
    )
    assert_allclose(
        dask_fit.model.hessian(params), reference.model.hessian(params), rtol=1e-9
    )


def test_dask_dataframe_with_names_and_hc0(client, triangle):
    frame = dd.from_pandas(triangle, npartitions=3)
    exog = frame[["x1", "x2", "x3"]].assign(Intercept=1.0)
    model = ps.PolyhedralMixtureLogit(frame["y"], exog, k=3)
    fit = model.fit(cov_type="HC0")
    pandas_exog = triangle[["x1", "x2", "x3"]].assign(Intercept=1.0)
    expected = ps.PolyhedralMixtureLogit(triangle["y"], pandas_exog, k=3).fit(
        cov_type="HC0"
    )
    assert isinstance(fit.params, pd.Series)
    assert list(fit.params.index) == list(expected.params.index)
    assert_allclose(fit.params, expected.params, rtol=RTOL)
    assert_allclose(fit.bse, expected.bse, rtol=1e-6)


@pytest.fixture(scope="module")
def named_reference(triangle):
    """The in-memory fit of the design a Dask DataFrame gives, with its names."""
    exog = triangle[["x1", "x2", "x3"]].assign(Intercept=1.0)
    return ps.PolyhedralMixtureLogit(triangle["y"], exog, k=3).fit()


# dask's parquet reader calls reset_index(inplace=True), which pandas 3.1 deprecates
@pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")
def test_dask_read_parquet_of_several_files(
    client, triangle, named_reference, tmp_path
):
    """The user guide's recipe: dd.read_parquet over several files. Dask merges
    the partitions of the one-column endog (two of four here) but not those of
    the design; the outcome takes the design's row blocks."""
    pytest.importorskip("pyarrow", reason="dd.read_parquet needs pyarrow")
    for i in range(4):
        part = triangle.iloc[1000 * i : 1000 * (i + 1)]
        part.to_parquet(tmp_path / f"part{i}.parquet", index=False)
    ddf = dd.read_parquet(str(tmp_path / "*.parquet"))
    assert ddf.npartitions == 4
    exog = ddf[["x1", "x2", "x3"]].assign(Intercept=1.0)
    fit = ps.PolyhedralMixtureLogit(ddf["y"], exog, k=3).fit()
    assert fit.model._row_source.n_partitions == 4
    assert list(fit.params.index) == list(named_reference.params.index)
    assert_allclose(fit.params, named_reference.params, rtol=RTOL)
    assert_allclose(fit.llf, named_reference.llf, rtol=RTOL)
    assert fit.n_iter == named_reference.n_iter
    # a new design read the same way: lazy, with its row chunks known
    fitted = fit.predict(exog)
    assert fitted.chunks[0] == (1000,) * 4
    assert_allclose(fitted.compute(), named_reference.predict(), rtol=1e-7)


def test_dask_endog_and_exog_partitioned_differently(client, triangle, reference):
    """Rows pair up by position whatever the partitions: a Dask Series in 3
    partitions with a masked array (unknown chunk sizes) in 5."""
    y, exog = _arrays(triangle)
    design = da.from_array(exog, chunks=(800, 4))
    design = design[da.from_array(np.ones(len(y), dtype=bool), chunks=800)]
    assert np.isnan(design.shape[0])
    outcome = dd.from_pandas(triangle["y"], npartitions=3)
    fit = ps.PolyhedralMixtureLogit(outcome, design, k=3).fit()
    assert fit.model.exog.chunks[0] == (800,) * 5
    assert_allclose(fit.params, reference.params, rtol=RTOL)
    assert_allclose(fit.llf, reference.llf, rtol=RTOL)
    fitted = fit.predict(design)  # lazy, its rows counted on a copy
    assert fitted.chunks[0] == (800,) * 5
    assert np.isnan(design.shape[0])  # the caller's array is left as it was
    assert_allclose(fitted.compute(), reference.predict(), rtol=1e-7)


def _with_category(triangle):
    frame = triangle.copy()
    frame["c"] = np.random.default_rng(2).choice(["a", "b", "c"], len(frame))
    return frame


def test_dask_design_with_indicator_columns(client, triangle):
    """The user guide's categorical design: known categories as a dtype, then
    dd.get_dummies; the same fit as pandas' get_dummies in memory."""
    frame = _with_category(triangle)
    ddf = dd.from_pandas(frame, npartitions=3)
    levels = sorted(ddf["c"].unique().compute())
    ddf = ddf.astype({"c": pd.CategoricalDtype(levels)})
    columns = ["x1", "x2", "x3", "c"]
    exog = dd.get_dummies(ddf[columns], columns=["c"], drop_first=True, dtype=float)
    fit = ps.PolyhedralMixtureLogit(ddf["y"], exog.assign(Intercept=1.0), k=3).fit()
    expected_exog = pd.get_dummies(
        frame[columns], columns=["c"], drop_first=True, dtype=float
    ).assign(Intercept=1.0)
    expected = ps.PolyhedralMixtureLogit(frame["y"], expected_exog, k=3).fit()
    assert "h1:c_b" in fit.params.index and "h1:c_c" in fit.params.index
    assert list(fit.params.index) == list(expected.params.index)
    assert_allclose(fit.params, expected.params, rtol=RTOL)
    assert_allclose(fit.llf, expected.llf, rtol=RTOL)
    # the dummies' effects read the design's values (len() of a lazy
    # array with unknown chunks stopped them)
    for options in ({"dummy": True}, {"count": True}):
        assert_allclose(
            fit.get_margeff(**options).margeff,
            expected.get_margeff(**options).margeff,
            rtol=1e-6,
        )
    # the table finds the constant column without the lazy design's variance
    ours, theirs = fit.get_margeff(at="zero"), expected.get_margeff(at="zero")
    assert_allclose(ours.summary_frame(), theirs.summary_frame(), rtol=1e-6)
    assert "h1:" not in str(ours.summary()) and "c_b" in str(ours.summary())
    # ... from a stand-in: the model itself keeps its lazy design throughout
    # (another thread predicting with it got two rows)
    assert isinstance(fit.model.exog, da.Array) and fit.model.k_extra == 0
    assert ours.results is fit._results  # the margins too (a copy renders them)


def test_dask_categorize_then_get_dummies(client, triangle):
    """The recipe the user guide used to give: ddf.categorize() and the dummies
    of its column next to the numeric ones. Dask 2026.8's optimiser fails on
    that frame (its compute() too); the error says what to do instead. Should
    a later Dask build it, the fit must equal the in-memory one."""
    frame = _with_category(triangle)
    ddf = dd.from_pandas(frame, npartitions=3).categorize(columns=["c"])
    exog = dd.concat(
        [
            ddf[["x1", "x2", "x3"]].assign(Intercept=1.0),
            dd.get_dummies(ddf[["c"]], drop_first=True, dtype=float),
        ],
        axis=1,
    )
    try:
        fit = ps.PolyhedralMixtureLogit(ddf["y"], exog, k=3).fit()
    except ValueError as exc:
        assert "ddf.categorize()" in str(exc)
        assert "pd.CategoricalDtype(levels)" in str(exc)
        return
    expected_exog = pd.concat(
        [
            frame[["x1", "x2", "x3"]].assign(Intercept=1.0),
            pd.get_dummies(frame[["c"]], drop_first=True, dtype=float),
        ],
        axis=1,
    )
    expected = ps.PolyhedralMixtureLogit(frame["y"], expected_exog, k=3).fit()
    assert_allclose(fit.params, expected.params, rtol=RTOL)


def test_dask_bad_input_is_a_clear_error(client, triangle):
    y, exog = _arrays(triangle)
    dy, dx = da.from_array(y, chunks=1000), da.from_array(exog, chunks=(1000, 4))
    with pytest.raises(ValueError, match="dropna"):
        ps.PolyhedralMixtureLogit(dy, dx, k=2, missing="drop")
    holed = exog.copy()
    holed[5, 2] = np.nan
    with pytest.raises(ValueError, match="1 missing or infinite"):
        ps.PolyhedralMixtureLogit(dy, da.from_array(holed, chunks=(1000, 4)), k=2)
    with pytest.raises(ValueError, match="endog must have two levels"):
        ps.PolyhedralMixtureLogit(dy * 2 + np.arange(len(y)) % 3, dx, k=2)
    frame = dd.from_pandas(triangle, npartitions=2)
    with pytest.raises(TypeError, match="formulas need an in-memory DataFrame"):
        ps.plume("y ~ x1 + x2", frame, k=2)
    model = ps.PolyhedralMixtureLogit(dy, dx, k=2)
    with pytest.raises(ValueError, match="partitions"):
        model.fit(chunksize=100)
    with pytest.raises(ValueError, match="use method='em'"):
        model.fit(method="bfgs")


def test_dask_columns_of_extreme_magnitude_are_refused_by_name(client):
    # the same bound as in memory (check_magnitudes), from the block moments
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.05, random_state=0)
    exog = np.column_stack([np.ones(400), data[["x1", "x2"]].to_numpy()])
    exog[:, 2] *= 1e-200
    with pytest.raises(ValueError, match=r"extreme magnitude: 'x2'"):
        ps.PolyhedralMixtureLogit(
            da.from_array(data["y"].to_numpy(), chunks=100),
            da.from_array(exog, chunks=(100, 3)),
            k=2,
        )


COLUMNS = ["Intercept", "x1", "x2"]


def _square_rows(nobs: int):
    """A two-face polyhedron's rows with an intercept column, and its Dask
    frame in three partitions."""
    rows, _ = ps.simulate_polyhedron(nobs, d=2, k=2, noise=0.05, random_state=0)
    rows["Intercept"] = 1.0
    return rows, dd.from_pandas(rows, npartitions=3)


def _fit(endog, exog, **options):
    return ps.PolyhedralMixtureLogit(endog, exog, k=2, **options).fit()


def test_an_empty_partition_after_dropna(client):
    # dropna, the remedy for missing values on Dask, can leave a partition
    # without rows; its sums are zero, not an error
    rows, _ = _square_rows(3000)
    rows["x2"] = rows["x2"].where(rows.index < 2000)
    ddf = dd.from_pandas(rows, npartitions=3).dropna()
    complete = rows.dropna()
    reference = _fit(complete["y"], complete[COLUMNS])
    assert_allclose(_fit(ddf["y"], ddf[COLUMNS]).params, reference.params, rtol=1e-8)


def test_an_empty_partition_with_weights(client):
    """The weights' checks read no empty chunk (argmax has no answer on one);
    a negative weight is still found, at its position among the rows."""
    rows, _ = _square_rows(3000)
    rows["w"] = (np.arange(len(rows)) % 3).astype(float)
    rows["x2"] = rows["x2"].where((rows.index < 1000) | (rows.index >= 2000))
    ddf = dd.from_pandas(rows, npartitions=3).dropna()
    complete = rows.dropna()
    reference = _fit(complete["y"], complete[COLUMNS], freq_weights=complete["w"])
    ours = _fit(ddf["y"], ddf[COLUMNS], freq_weights=ddf["w"])
    assert_allclose(ours.params, reference.params, rtol=1e-8)
    rows.loc[2500, "w"] = -1.0
    ddf = dd.from_pandas(rows, npartitions=3).dropna()
    with pytest.raises(ValueError, match=r"1 negative values .* at row 1500"):
        _fit(ddf["y"], ddf[COLUMNS], freq_weights=ddf["w"])


def test_weighted_results_that_read_the_weights(client):
    """Marginal effects and TIC/GBIC of a weighted Dask fit are the in-memory
    fit's (they indexed the lazy Dask weights and stopped)."""
    rows, ddf = _square_rows(3000)
    weights = (np.arange(len(rows)) % 3).astype(float)
    ours = _fit(ddf["y"], ddf[COLUMNS], freq_weights=da.from_array(weights, 1000))
    reference = _fit(rows["y"], rows[COLUMNS], freq_weights=weights)
    assert_allclose(ours.get_margeff().margeff, reference.get_margeff().margeff)
    for criterion in ("tic", "gbic"):
        assert_allclose(
            ours.info_criteria(criterion), reference.info_criteria(criterion)
        )


def test_per_row_results_of_a_dask_dataframe_model(client):
    # labelled by position: the model's data object is built from two rows
    rows, ddf = _square_rows(3000)
    ours, reference = _fit(ddf["y"], ddf[COLUMNS]), _fit(rows["y"], rows[COLUMNS])
    y_array = da.from_array(rows["y"].to_numpy(), chunks=1000)
    arrays = _fit(y_array, da.from_array(rows[COLUMNS].to_numpy(), chunks=(1000, 3)))
    for name in ("responsibilities", "gate_probabilities", "active_face"):
        got, expected = getattr(ours, name)(), getattr(reference, name)()
        assert len(got) == len(rows)
        assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float))
        # from Dask arrays, arrays, as from NumPy ones
        assert isinstance(getattr(arrays, name)(), np.ndarray)


@pytest.mark.parametrize("pandas_part", ["endog", "exog", "freq_weights"])
def test_one_pandas_part_beside_dask_ones(client, pandas_part):
    rows, _ = _square_rows(1500)
    rows["w"] = 2.0
    ddf = dd.from_pandas(rows, npartitions=3)
    parts = {"endog": ddf["y"], "exog": ddf[COLUMNS], "freq_weights": ddf["w"]}
    in_memory = {"endog": rows["y"], "exog": rows[COLUMNS], "freq_weights": rows["w"]}
    parts[pandas_part] = in_memory[pandas_part]
    ours = _fit(parts["endog"], parts["exog"], freq_weights=parts["freq_weights"])
    reference = _fit(rows["y"], rows[COLUMNS], freq_weights=rows["w"])
    assert list(ours.params.index) == list(reference.params.index)
    assert_allclose(ours.params, reference.params, rtol=1e-7)


def test_missing_outcomes_and_missing_raise_on_dask(client):
    rows, ddf = _square_rows(300)
    # missing="raise" is what Dask input does anyway
    raised = _fit(ddf["y"], ddf[COLUMNS], missing="raise")
    assert_allclose(raised.params, _fit(ddf["y"], ddf[COLUMNS]).params)
    # a text outcome with a None, and a float one with a NaN: Dask's remedy
    text = rows.assign(y=np.where(rows["y"] == 1, "yes", "no").astype(object))
    text.loc[5, "y"] = None
    number = rows.assign(y=rows["y"].astype(float))
    number.loc[5, "y"] = np.nan
    for frame in (text, number):
        outcome = dd.from_pandas(frame, npartitions=3)["y"]
        with pytest.raises(ValueError, match=r"endog has missing values.*dropna"):
            ps.PolyhedralMixtureLogit(outcome, ddf[COLUMNS], k=2)


def test_remove_data_drops_the_partitions(client):
    rows, ddf = _square_rows(1500)
    res = _fit(ddf["y"], ddf[COLUMNS])
    res.remove_data()
    assert res.model._row_source is None
    np.testing.assert_allclose(
        res.predict(rows[COLUMNS].iloc[:5]),
        _fit(rows["y"], rows[COLUMNS]).predict(rows[COLUMNS].iloc[:5]),
        rtol=1e-7,
    )


def test_integer_column_labels_stay_labels(client):
    """A Dask frame's integer column labels name the parameters as they do
    in memory, and a one-row Series of new data is read by them (they were
    made text, and the row was read by position)."""
    rows, _ = _square_rows(600)
    exog = rows[COLUMNS].set_axis([2, 1, 0], axis=1)
    ours = _fit(dd.from_pandas(rows["y"], npartitions=3), dd.from_pandas(exog, 3))
    reference = _fit(rows["y"], exog)
    assert list(ours.model.exog_names) == [2, 1, 0]
    row = exog.iloc[0][[0, 1, 2]]  # the columns in another order
    assert_allclose(ours.predict(row), reference.predict(row), rtol=1e-8)
    doubled = exog.set_axis([2, "2", 0], axis=1)
    with pytest.raises(ValueError, match="more than one column named 2 and '2'"):
        _fit(dd.from_pandas(rows["y"], npartitions=3), dd.from_pandas(doubled, 3))


@pytest.mark.parametrize("pandas_part", ["endog", "freq_weights"])
def test_a_pandas_part_in_another_order_is_refused(client, pandas_part):
    """Beside a Dask frame a pandas part pairs by position: one whose index
    is not the frame's rows is refused, as in memory (a shuffled Series of
    weights was used by position without a word)."""
    rows, ddf = _square_rows(600)
    rows["w"] = np.arange(len(rows)) % 3 + 1.0
    ddf = dd.from_pandas(rows, npartitions=3)
    parts = {"endog": ddf["y"], "freq_weights": ddf["w"]}
    parts[pandas_part] = rows[{"endog": "y", "freq_weights": "w"}[pandas_part]]
    parts[pandas_part] = parts[pandas_part].sample(frac=1.0, random_state=0)
    with pytest.raises(ValueError, match=f"{pandas_part} is a pandas object whose"):
        _fit(parts["endog"], ddf[COLUMNS], freq_weights=parts["freq_weights"])
