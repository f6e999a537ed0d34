"""Dask input: the model on ``dask.array`` / ``dask.dataframe`` collections.

The design and outcome are persisted on the workers once; every pass of the EM
engine (:class:`plumestats._problem.Problem`) is then one task per partition,
standardising its rows and returning their sums, tree-summed by Dask: only
``(K p)^2``-sized arrays travel to the driver. Whatever scheduler is active runs
it: a ``dask.distributed.Client`` on a ``LocalCluster`` or on a remote cluster
(``Client("tcp://scheduler:8786")``), or Dask's local threads.

Per-observation quantities of the estimation sample (``loglikeobs``,
``score_obs``, ``predict()`` without new data) come back as lazy Dask arrays.

Dask is an optional dependency (the ``dask`` extra), imported only here and only
when a Dask collection is passed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ._design import as_design
from ._design_checks import (
    DesignSummary,
    add_block,
    combine_summaries,
    names_from_variance,
)
from ._memory import check_parameter_count
from ._objectives import combine_sums, slab_sums
from ._outcome import encode_outcome, prepare_endog
from ._rows import combine_moments, design_moments, scaling_from_moments
from ._validation import check_row_labels, refuse_repeated_labels
from ._weights import refuse_all_zero, refuse_weights

__all__ = [
    "DaskRows",
    "import_dask",
    "is_dask_collection",
    "read_collections",
    "rows_of",
]


def import_dask():
    """``(dask, dask.array)``, or an ImportError naming the extra."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            'fitting on Dask collections needs Dask: pip install "plumestats[dask]"'
        ) from exc
    return dask, da


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a Dask collection (checked without importing Dask)."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] in {"dask", "dask_expr"} and hasattr(obj, "dask")


def _as_dask_array(obj, what: str, da):
    """A 2-D (design) or 1-D (outcome) Dask array and the column names.

    The row chunk sizes may be unknown (NaN): a Dask DataFrame's are, and so
    are an array's after a boolean mask; :func:`_known_rows` counts them. The
    array is not built with ``to_dask_array(lengths=True)``: that counts the
    rows of the optimised frame but checks the count against the frame's
    partitions before optimisation, and the optimiser may merge partitions
    (``read_parquet`` of several files, projected on one column, does:
    dask/dask#12411).
    """
    names = None
    if hasattr(obj, "to_dask_array"):  # dask DataFrame or Series
        # the labels as they are (an integer label stays one, as statsmodels
        # keeps it in memory: new data's columns are matched by it)
        if hasattr(obj, "columns"):
            names = list(obj.columns)
        elif getattr(obj, "name", None) is not None:
            names = [obj.name]
        obj = _frame_values(obj, what)
    elif not isinstance(obj, da.Array):
        # a pandas or NumPy object beside Dask ones: its values, with the
        # names a pandas object carries (Dask would wrap the pandas object)
        if isinstance(obj, pd.DataFrame):
            names = list(obj.columns)
        elif isinstance(obj, pd.Series) and obj.name is not None:
            names = [obj.name]
        obj = da.asarray(np.asarray(obj))
    return obj, names


def _frame_values(frame, what: str):
    """``frame.to_dask_array()``, with a clear error for Dask's fault on
    categorized frames."""
    try:
        with warnings.catch_warnings():
            # a text outcome (pandas' string dtype) becomes objects: that is
            # what the outcome's coding expects, so Dask's notice is noise
            warnings.filterwarnings(
                "ignore", "Dask currently has limited support", UserWarning
            )
            return frame.to_dask_array()
    except ValueError as exc:
        expr = getattr(frame, "expr", None)  # dask-expr's query; legacy: none
        nodes = expr.walk() if expr is not None else ()
        if not any(type(node).__name__ == "Categorize" for node in nodes):
            raise
        dask, _ = import_dask()
        raise ValueError(
            f"Dask {dask.__version__} could not build {what}: its query optimiser "
            "fails when columns of a ddf.categorize() frame are used in separate "
            f"pieces, e.g. the numeric columns and the dummies ({exc}); give the "
            "column its categories as a dtype instead: ddf = ddf.astype({'c': "
            "pd.CategoricalDtype(levels)}) with levels = "
            "sorted(ddf['c'].unique().compute())"
        ) from exc


def _known_rows(array):
    """``array`` with its row chunk sizes known, counted on its partitions if
    they were not (on persisted partitions nothing is recomputed)."""
    if any(np.isnan(size) for size in array.chunks[0]):
        _, da = import_dask()
        # a new Array on the same graph: compute_chunk_sizes() sets the chunks
        # in place, and the array may be the caller's own
        array = da.Array(array.dask, array.name, array.chunks, meta=array)
        array = array.compute_chunk_sizes()
    return array


def _standardised(x, y, w, scaling, kernel, arguments):
    return kernel(scaling.transform_exog(x), y, weights=w, **arguments)


def _summary_block(x, y, w=None):
    """One partition's moments (for the standardisation) and design summary
    (for the checks), as the in-memory design gets them."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: counted
        moments = design_moments(x, np.asarray(y), w)
    empty = DesignSummary(
        np.zeros(x.shape[1], dtype=np.intp),
        np.full(x.shape[1], np.inf),
        np.full(x.shape[1], -np.inf),
        np.zeros((0, x.shape[1])),
    )
    return moments, add_block(empty, x, None if w is None else np.asarray(w) > 0)


def _combine_blocks(left, right):
    return (
        combine_moments(left[0], right[0]),
        combine_summaries(left[1], right[1]),
    )


class DaskRows:
    """The row source of :class:`~plumestats._problem.Problem` on Dask
    (``plumestats._rows`` describes the interface).

    Parameters
    ----------
    exog : dask.array.Array, shape (n, p)
        The raw design, persisted, one chunk across the columns.
    y_pm : dask.array.Array, shape (n,)
        Outcomes in ``{-1, +1}``, chunked like the rows of ``exog``.
    scaling : DesignScaling
        Standardisation applied to each partition inside its task.
    weights : dask.array.Array, shape (n,), optional
        Frequency weights, chunked like the rows of ``exog``.
    """

    # the partitions are the blocks
    single = False

    def __init__(self, exog, y_pm, scaling, moments=None, weights=None):
        self.exog = exog
        self.y_pm = y_pm
        self.weights = weights
        self.scaling = scaling
        self.moments = moments
        self.radius = None if moments is None else float(moments["radius"])
        self.nobs, self.n_cols = (int(size) for size in exog.shape)
        self.weight_sum = self.nobs if moments is None else moments["weight"]
        self.n_partitions = exog.numblocks[0]

    def _weight_blocks(self) -> list:
        if self.weights is None:
            return [None] * self.n_partitions
        return list(self.weights.to_delayed().ravel())

    def _tree(self, parts, combine):
        dask, _ = import_dask()
        combine = dask.delayed(combine, pure=True)
        # pairwise: the driver receives one result, each worker combines its own
        while len(parts) > 1:
            pairs = [
                combine(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)
            ]
            parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
        return dask.compute(parts[0])[0]

    def reduce(self, kernel=slab_sums, combine=combine_sums, **arguments) -> dict:
        """``combine`` over the partitions of ``kernel(z_block, y_block, ...)``
        (the engine's sums by default, each partition evaluated at once:
        :func:`~plumestats._objectives.slab_sums`)."""
        dask, _ = import_dask()
        task = dask.delayed(_standardised, pure=True)
        xs = self.exog.to_delayed().ravel()
        ys = self.y_pm.to_delayed().ravel()
        parts = [
            task(x, y, w, self.scaling, kernel, arguments)
            for x, y, w in zip(xs, ys, self._weight_blocks(), strict=True)
        ]
        return self._tree(parts, combine)

    def take(self, rows: np.ndarray) -> tuple:
        """Standardised design rows, outcomes and weights (``None`` without)
        at sorted row indices."""
        dask, _ = import_dask()
        weights = None if self.weights is None else self.weights[rows]
        x, y, w = dask.compute(self.exog[rows], self.y_pm[rows], weights)
        return self.scaling.transform_exog(np.asarray(x, dtype=float)), y, w


def _summaries(source):
    dask, _ = import_dask()
    task = dask.delayed(_summary_block, pure=True)
    parts = [
        task(x, y, w)
        for x, y, w in zip(
            source.exog.to_delayed().ravel(),
            source.y_pm.to_delayed().ravel(),
            source._weight_blocks(),
            strict=True,
        )
    ]
    return source._tree(parts, _combine_blocks)


def _checked_weights(dask, da, freq_weights, x):
    """The frequency weights as a persisted Dask array chunked like ``x``'s
    rows, checked (in one pass) as the in-memory model checks them."""
    w, _ = _as_dask_array(freq_weights, "freq_weights", da)
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    w = _known_rows(w.astype(float).persist()) if w.ndim == 1 else w
    if w.ndim != 1 or w.shape[0] != x.shape[0]:
        raise ValueError(
            f"freq_weights must be one number per row ({x.shape[0]} rows), got "
            f"shape {w.shape}"
        )
    if w.chunks[0] != x.chunks[0]:
        w = w.rechunk((x.chunks[0],)).persist()
    # argmax has no answer on the empty chunk of a partition a filter or
    # dropna emptied: the checks read the weights without empty chunks
    filled = tuple(size for size in w.chunks[0] if size)
    checked = w if len(filled) in (0, len(w.chunks[0])) else w.rechunk((filled,))
    for bad, what in (
        (~da.isfinite(checked), "missing or infinite"),
        (checked < 0, "negative"),
    ):
        count, first = dask.compute(bad.sum(), da.argmax(bad))
        if count:
            refuse_weights(int(count), what, float(w[first].compute()), int(first))
    if not float(w.sum().compute()) > 0:
        refuse_all_zero()
    return w


def read_collections(model, endog, exog, k: int, missing: str, freq_weights=None):
    """Read Dask collections into ``model``: its data object (names, as
    statsmodels would make them), its lazy ``endog`` (0/1) and ``exog``, the
    outcome's coding; returns the 0/1 outcome and the design summary, from
    one pass over the partitions (persisted on the workers first). No
    per-observation array is brought to the driver."""
    dask, da = import_dask()
    if missing == "drop":  # "raise" is what Dask input does anyway
        raise ValueError(
            "missing='drop' is not available for Dask input: drop the incomplete "
            "rows first, e.g. ddf = ddf.dropna()"
        )
    _refuse_text_columns(exog)
    endog, exog, freq_weights = _check_pandas_rows(endog, exog, freq_weights)
    x, xnames = _as_dask_array(exog, "exog", da)
    if xnames is not None:
        refuse_repeated_labels(xnames)
    y, ynames = _as_dask_array(endog, "endog", da)
    x, y = _persisted(dask, x, y)
    if x.shape[0] == 0:
        raise ValueError("there are no observations: the Dask collections have no rows")
    check_parameter_count(k, int(x.shape[1]))
    w = None if freq_weights is None else _checked_weights(dask, da, freq_weights, x)
    moments, summary = _summaries(DaskRows(x, y, scaling=None, weights=w))
    names = xnames or names_from_variance(moments["m2"] / moments["nobs"])
    _refuse_non_finite(summary.n_not_finite, names)
    mapping = _outcome_mapping(moments["yvalues"])
    one = next(level for level, code in mapping.items() if code == 1)
    _data_object(model, moments, names, xnames, ynames)
    model.exog, model.endog = x, (y == one).astype(float)
    model.outcome_mapping = mapping
    model._dask_moments = moments
    if w is not None:
        model.freq_weights = w
    return model.endog, summary


def _check_pandas_rows(endog, exog, freq_weights) -> tuple:
    """``(endog, exog, freq_weights)``, refusing a pandas part beside a Dask
    frame whose index is not the frame's rows. The parts pair by position,
    as Dask ones do; in memory such a part is refused (statsmodels' "not
    aligned", the weights' check), and here a Series in another order
    weighed or labelled the wrong rows without a word. The frame is then
    persisted first, so that its index is read from memory, not by a pass
    of its own (a CSV would be read twice)."""
    parts = {"endog": endog, "exog": exog, "freq_weights": freq_weights}
    pandas_parts = [
        name
        for name, part in parts.items()
        if isinstance(part, (pd.Series, pd.DataFrame))
    ]
    framed = next(
        (
            name
            for name in ("exog", "endog", "freq_weights")
            if is_dask_collection(parts[name]) and hasattr(parts[name], "index")
        ),
        None,
    )
    if not pandas_parts or framed is None:
        return endog, exog, freq_weights  # beside Dask arrays: by position
    parts[framed] = parts[framed].persist()
    labels = pd.Index(parts[framed].index.compute())
    for name in pandas_parts:
        check_row_labels(
            parts[name],
            labels,
            name,
            fix=f"give it the Dask {framed}'s index, or make it a column of that frame",
        )
    return parts["endog"], parts["exog"], parts["freq_weights"]


def _outcome_mapping(levels: np.ndarray) -> dict:
    """The outcome's coding from its distinct values: labels as for a pandas
    Series (sorted), numbers and booleans as for an array."""
    _, mapping = prepare_endog(pd.Series(levels))
    if mapping is None:
        _, mapping, _ = encode_outcome(levels)
    return mapping


def _refuse_non_finite(counts: np.ndarray, names: list[str]) -> None:
    """Missing or infinite values, named by column, with Dask's remedy."""
    if counts.any():
        listed = ", ".join(
            f"{names[j]!r} ({counts[j]} rows)" for j in np.flatnonzero(counts)
        )
        raise ValueError(
            f"exog has {int(counts.sum())} missing or infinite values, in "
            f"{listed}; drop or impute those rows first (e.g. ddf.dropna())"
        )


def _refuse_text_columns(exog) -> None:
    """A Dask DataFrame's text columns, named (their cast to numbers failed
    deep in a task)."""
    dtypes = getattr(exog, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return
    text = [
        f"{str(column)!r} ({dtype})"
        for column, dtype in dtypes.items()
        if not (
            pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        )
    ]
    if text:
        raise ValueError(
            f"exog columns {', '.join(text)} are not numeric; convert them "
            "first, or encode a categorical (e.g. dd.get_dummies)"
        )


def _persisted(dask, x, y):
    """The design and outcome persisted as they come, their partitions counted
    and paired (a task reads block i of both)."""
    if x.ndim != 2:
        raise ValueError(f"exog must be 2-dimensional, got {x.ndim} dimensions")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError("endog must be one column of outcomes")
    # Each pipeline runs once. endog and exog are optimised separately, so
    # their partitions need not match even when both come from one frame
    # (Dask merges the partitions of a narrow projection of read_parquet);
    # only the order of the rows does.
    x = x.astype(float).rechunk({1: -1})  # one partition spans all columns
    x, y = dask.persist(x, y)
    x, y = _known_rows(x), _known_rows(y)
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"endog has {y.shape[0]} rows but exog has {x.shape[0]}; they must match"
        )
    if y.chunks[0] != x.chunks[0]:
        y = y.rechunk((x.chunks[0],)).persist()
    return x, y


def _data_object(model, moments, names, xnames, ynames) -> None:
    """statsmodels' data object (names, the wrapping of parameter-shaped
    output) from two rows (pandas output, as statsmodels gives it, for a Dask
    DataFrame's input); the counts that need every row are set after."""
    from statsmodels.base.data import handle_data

    head = np.vstack([moments["first"][0], moments["first"][0] + 1.0])
    head_y = np.array([0.0, 1.0])
    if xnames is not None:
        head = pd.DataFrame(head, columns=names)
        head_y = pd.Series(head_y, name=ynames[0] if ynames else "y")
    model.data = handle_data(head_y, head, missing="none", hasconst=None)
    if xnames is not None:
        # the two stand-in rows' labels are no row labels of the data: the
        # per-row results are labelled by position (the partitions' own
        # index would need a pass of its own); a Dask array's come as arrays
        model.data._cache["row_labels"] = pd.RangeIndex(int(moments["nobs"]))
    model.data.xnames = names
    model.data.ynames = ynames[0] if ynames else "y"
    constant = (moments["max"] == moments["min"]) & (moments["first"][0] != 0)
    model.k_constant = int(constant.any())
    model.data.k_constant = model.k_constant
    model.data.const_idx = int(np.flatnonzero(constant)[0]) if constant.any() else None
    model._data_attr = ["exog", "endog"]
    model._init_keys = []


def rows_of(model, summary) -> DaskRows:
    """The model's row source, after its set-up: the outcome coded for the
    inside class persisted beside the design."""
    dask, _ = import_dask()
    moments = model.__dict__.pop("_dask_moments")
    (model._y_inside,) = dask.persist(model._y_inside)
    return DaskRows(
        model.exog,
        model._y_inside,
        scaling_from_moments(moments),
        moments,
        weights=model.freq_weights,
    )


def map_rows(function, exog, *, columns: int | None, **arguments):
    """``function(block, **arguments)`` lazily over the row partitions of a Dask
    design; ``columns`` is the width of a 2-D result, ``None`` for a vector."""
    _, da = import_dask()
    exog, _ = _as_dask_array(exog, "exog", da)
    # the rows counted (one pass over the pipeline): the result's chunks are known
    exog = _known_rows(exog.astype(float).rechunk({1: -1}))
    if columns is None:
        return exog.map_blocks(
            function, drop_axis=1, dtype=float, meta=np.empty(0), **arguments
        )
    return exog.map_blocks(
        function,
        chunks=(exog.chunks[0], (columns,)),
        dtype=float,
        meta=np.empty((0, 0)),
        **arguments,
    )


def user_sums(model, params: np.ndarray, key: str):
    """One of the objective's sums (``"grad"`` or ``"hess"``, or ``"L"``) in
    the user's units, from one pass over the persisted partitions in the
    engine's: the scores are unchanged by the reparametrisation, so the chain
    rule through ``J = I_K (x) B`` is exact (``J' g``, ``J' H J``)."""
    source = model._row_source
    objective = model.spec.objective()
    size = model.k * model.k_vars
    internal = source.scaling.to_internal(params[:size].reshape(model.k, -1))
    internal = np.append(internal.ravel(), params[size:])
    sums = source.reduce(objective=objective, params=internal, need=frozenset({key}))
    if key == "L":
        return float(sums["L"])
    from ._problem import user_jacobian

    jacobian = user_jacobian(source.scaling, model.k, objective.n_extra, internal=True)
    if key == "grad":
        return jacobian.T @ sums["grad"]
    return jacobian.T @ sums[key] @ jacobian


def loglike(model, params: np.ndarray) -> float:
    """``L`` in one pass over the partitions."""
    return user_sums(model, params, "L")


def _loglikeobs_rows(x, y, w=None, *, params, spec):
    rows = spec.objective().rows(as_design(x), y, params)
    values = np.minimum(rows.loglikeobs, 0.0)
    return values if w is None else values * w


def _score_obs_rows(x, y, w=None, *, params, spec):
    objective = spec.objective()
    design = as_design(x)
    scores = objective.score_rows(design, objective.rows(design, y, params))
    return scores if w is None else scores * w[:, None]


def _per_row(function, model, params, index: str, **options):
    """``function`` lazily over the partitions of the estimation sample (its
    rows times their frequency weights)."""
    _, da = import_dask()
    weights = () if model.freq_weights is None else (model.freq_weights, "i")
    return da.blockwise(
        function,
        index,
        model.exog,
        "ij",
        model._y_inside,
        "i",
        *weights,
        concatenate=True,
        dtype=float,
        params=params,
        spec=model.spec,
        **options,
    )


def loglikeobs(model, params: np.ndarray):
    """Lazy ``(nobs,)`` Dask array of the observation log-likelihoods."""
    return _per_row(_loglikeobs_rows, model, params, "i", meta=np.empty(0))


def score_obs(model, params: np.ndarray):
    """Lazy ``(nobs, K p)`` Dask array of the observation scores."""
    return _per_row(
        _score_obs_rows,
        model,
        params,
        "ik",
        new_axes={"k": model.nparams},
        meta=np.empty((0, 0)),
    )
