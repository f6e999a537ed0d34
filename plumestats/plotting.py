"""Plots of a PLUME fit: the polyhedron in two features, EM convergence, choice of K.

matplotlib is an optional extra (``pip install "plumestats[plot]"``), imported
only when a plot is drawn. Every function draws on ``ax`` when given (else on a
new figure) and returns the :class:`~matplotlib.figure.Figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._compat import formula_spec
from ._formula_data import formula_columns
from ._validation import without_data
from .selection import SELECT_K_COLUMNS, SelectKResults

__all__ = ["plot_convergence", "plot_polyhedron", "plot_select_k"]

PROBABILITY_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            'plotting needs matplotlib: pip install "plumestats[plot]"'
        ) from exc
    return plt


def _figure_and_axes(ax):
    if ax is None:
        fig, ax = _pyplot().subplots(figsize=(6.0, 5.0))
        return fig, ax
    _pyplot()
    return ax.figure, ax


# ----------------------------------------------------------------- polyhedron
def _formula_variables(model, frame: pd.DataFrame) -> tuple[set[str], set[str]]:
    """Columns of ``frame`` the formula's right-hand side uses, and those among
    them that enter as categorical factors (held at their mode)."""
    used, categorical = set(), set()
    for factor, info in formula_spec(model.data).factor_infos.items():
        # the factor's own names, as patsy parses it (not a name in a string)
        names = set(formula_columns(f"~ {factor.name()}", frame.columns))
        used |= names
        if info.type == "categorical":
            categorical |= names
    return used, categorical


def _typical_value(column: pd.Series, categorical: bool):
    """The mean of a numeric column, the mode of any other (or a categorical);
    a many-valued numeric column that a categorical factor reads (``I(x >
    1)``) is held at its median, whose level is the majority's for a
    threshold (its mode would be its smallest value, all being unique)."""
    values = column.dropna()
    numeric = pd.api.types.is_numeric_dtype(values)
    if pd.api.types.is_bool_dtype(values) or not numeric:
        return values.mode().iloc[0]
    if categorical:
        many = values.nunique() > _FEW_CODES
        return float(values.median()) if many else values.mode().iloc[0]
    return float(values.mean())


# numeric codes of a category (C(n)) take at most this many distinct values
_FEW_CODES = 20


def _polyhedron_frame(results, x, y, data, at):
    """Points to draw and a function mapping a grid of (x, y) to P and scores."""
    model = results.model
    k = results.k
    at = dict(at or {})
    formula = getattr(model, "formula", None)
    if formula is not None:
        frame = model.data.frame if data is None else data
        if frame is None:
            raise ValueError(_no_data(model))
        used, categorical = _formula_variables(model, frame)
        variables = sorted(used)
    else:
        names = list(model.exog_names)
        x = names[x] if isinstance(x, (int, np.integer)) else x
        y = names[y] if isinstance(y, (int, np.integer)) else y
        if data is None:
            if model.exog is None:
                raise ValueError(
                    f"{_no_data(model)} with columns {names} and {model.endog_names!r}"
                )
            frame = pd.DataFrame(model.exog, columns=names)
        else:
            frame = data
        categorical, variables = set(), names
    for name, role in ((x, "x"), (y, "y")):
        if name not in variables:
            raise ValueError(
                f"{role}={name!r} is not a feature of the model; choose one of "
                f"{[v for v in variables if v not in ('const', 'Intercept')]}"
            )
    if x == y:
        raise ValueError(f"x and y must be two different features, both are {x!r}")
    unknown = set(at) - set(variables)
    if unknown:
        raise ValueError(
            f"at names {sorted(unknown)}, which are not features of the model; "
            f"choose among {variables}"
        )
    missing = [name for name in variables if name not in frame.columns]
    if missing:
        raise ValueError(f"data has no column {missing}; it needs {variables}")
    held = {
        name: at[name]
        if name in at
        else _typical_value(frame[name], name in categorical)
        for name in variables
        if name not in (x, y)
    }

    def evaluate(grid_x, grid_y):
        grid = pd.DataFrame({x: grid_x.ravel(), y: grid_y.ravel()})
        for name, value in held.items():
            grid[name] = value
        if formula is not None:
            scores = results.predict(grid, which="linear")
            prob = results.predict(grid)
        else:
            exog = grid[variables].to_numpy(dtype=float)
            scores = model.predict(results.params, exog, which="linear")
            prob = model.predict(results.params, exog)
        shape = grid_x.shape
        scores = np.asarray(scores, dtype=float).reshape(*shape, k)
        return np.asarray(prob, dtype=float).reshape(shape), scores

    return frame, x, y, held, evaluate


def _classes(results, frame, estimation: bool):
    """Observed class (0/1 code) of the rows to draw, with their labels."""
    model = results.model
    labels = {code: label for label, code in results.outcome_mapping.items()}
    name = model.endog_names
    if estimation:
        if model.endog is None:  # a formula model keeps its frame, not y
            raise ValueError(_no_data(model))
        rows = model.data.row_labels
        if rows is not None and len(frame) != len(rows):
            # a formula's frame with the rows missing='drop' left out: the
            # estimation rows are found by label (an array model's frame is
            # its design, row for row)
            if not frame.index.is_unique:
                raise ValueError(
                    "the data's index repeats labels and the fit dropped rows, "
                    "so its rows cannot be matched to the estimation sample; "
                    "pass data= (the rows to draw), or refit on "
                    "data.reset_index(drop=True)"
                )
            frame = frame.loc[rows]
        return frame, np.asarray(model.endog, dtype=int), labels
    if name in frame.columns:
        codes = frame[name].map(results.outcome_mapping)
        keep = codes.notna()
        return frame[keep], codes[keep].to_numpy(dtype=int), labels
    return frame, None, labels


def plot_polyhedron(
    results,
    x: str | int,
    y: str | int,
    data: pd.DataFrame | None = None,
    at: Mapping[str, Any] | None = None,
    grid_points: int = 200,
    ax=None,
):
    r"""The fitted polyhedron in the plane of two features.

    Draws the data by class, each hyperplane's line :math:`w_k' x = 0`
    (labelled ``h1..hK``), the polyhedron :math:`\{x : \min_k w_k' x \ge 0\}`
    shaded, and contours of P(y = 1 | x) at 0.1, 0.25, 0.5, 0.75 and 0.9.

    Parameters
    ----------
    results : PolyhedralMixtureLogitResults
        A fit, from a formula or from arrays.
    x, y : str or int
        The two features: column names of the data for a formula model (as in
        the data, before the formula transforms them), design column names (or
        indices) for an array model.
    data : DataFrame, optional
        Points to draw (and to take typical values from); the estimation data
        by default.
    at : dict, optional
        Values to hold the other features at. By default numeric features are
        held at their mean and categorical ones at their most common level
        (a many-valued column in a categorical factor, ``I(x > 1)``, at its
        median).
    grid_points : int, default 200
        Grid resolution per axis.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The hyperplanes are drawn as the zero contours of the scores on the grid, so
    a formula that transforms ``x`` or ``y`` (``np.log(x1)``) gives the curves
    that the faces are in the data's units.
    """
    if not isinstance(grid_points, (int, np.integer)) or grid_points < 10:
        raise ValueError(f"grid_points must be an integer >= 10, got {grid_points!r}")
    frame, x, y, held, evaluate = _polyhedron_frame(results, x, y, data, at)
    points, classes, labels = _classes(results, frame, data is None)
    fig, ax = _figure_and_axes(ax)
    xs = pd.to_numeric(points[x], errors="coerce").to_numpy(dtype=float)
    ys = pd.to_numeric(points[y], errors="coerce").to_numpy(dtype=float)
    lows = np.nanmin([xs, ys], axis=1)
    highs = np.nanmax([xs, ys], axis=1)
    pad = 0.05 * np.where(highs > lows, highs - lows, 1.0)
    grid_x, grid_y = np.meshgrid(
        np.linspace(lows[0] - pad[0], highs[0] + pad[0], grid_points),
        np.linspace(lows[1] - pad[1], highs[1] + pad[1], grid_points),
    )
    prob, scores = evaluate(grid_x, grid_y)
    decision = scores.min(axis=-1)
    if np.nanmax(decision) >= 0:
        ax.contourf(
            grid_x, grid_y, decision, levels=[0, np.inf], colors=["C2"], alpha=0.15
        )
    probability = ax.contour(
        grid_x,
        grid_y,
        prob,
        levels=PROBABILITY_LEVELS,
        colors="0.4",
        linewidths=0.8,
        linestyles="dotted",
    )
    ax.clabel(probability, fmt="%.2g", fontsize=7)
    if classes is None:
        ax.scatter(xs, ys, s=8, color="0.3", label="data")
    else:
        for code, marker in ((0, "x"), (1, "o")):
            mask = classes == code
            ax.scatter(
                xs[mask],
                ys[mask],
                s=8,
                marker=marker,
                color=f"C{code}",
                alpha=0.6,
                label=f"{_endog_name(results)} = {labels[code]}",
            )
    _draw_faces(ax, grid_x, grid_y, scores)
    ax.set_xlim(grid_x[0, 0], grid_x[0, -1])
    ax.set_ylim(grid_y[0, 0], grid_y[-1, 0])
    ax.set_xlabel(str(x))
    ax.set_ylabel(str(y))
    held_text = ", ".join(
        f"{name}={value:.3g}" if isinstance(value, float) else f"{name}={value}"
        for name, value in held.items()
        if name not in ("const", "Intercept")
    )
    title = f"PLUME, K={results.k}: shaded min_k h_k'x >= 0"
    ax.set_title(f"{title}\n(at {held_text})" if held_text else title, fontsize=9)
    ax.legend(loc="best", fontsize=7)
    return fig


def _endog_name(results) -> str:
    name = results.model.endog_names
    return name if isinstance(name, str) else "y"


def _draw_faces(ax, grid_x, grid_y, scores):
    """Each face's zero line as one Line2D (NaN-separated pieces), labelled."""
    from contourpy import contour_generator  # matplotlib's own dependency

    for face in range(scores.shape[-1]):
        pieces = contour_generator(grid_x, grid_y, scores[..., face]).lines(0.0)
        pieces = [piece for piece in pieces if len(piece) > 1]
        if not pieces:
            continue  # this face does not cross the plotted window
        joined = np.concatenate(
            [np.vstack([piece, [np.nan, np.nan]]) for piece in pieces]
        )
        name = f"h{face + 1}"
        ax.plot(joined[:, 0], joined[:, 1], color=f"C{face + 3}", lw=2, label=name)
        longest = max(pieces, key=len)
        middle = longest[len(longest) // 2]
        ax.annotate(
            name,
            middle,
            color=f"C{face + 3}",
            fontsize=10,
            fontweight="bold",
            xytext=(4, 4),
            textcoords="offset points",
        )


# ---------------------------------------------------------------- convergence
def plot_convergence(results, ax=None):
    """The log-likelihood after each EM iteration, one line per restart.

    Parameters
    ----------
    results : PolyhedralMixtureLogitResults
        A fit: every restart is drawn, then every re-seating move's run, and
        the best (the one kept) is highlighted.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure
    """
    retvals = results.mle_retvals
    # the best run's history: a clear error when the fit kept none
    restarts = retvals.get("restarts_llf_history") or [results.llf_history]
    moves = list(retvals.get("reseat_llf_history") or [])
    paths = list(retvals.get("path_llf_history") or [])
    histories = [*restarts, *moves, *paths]
    labels = [f"restart {run + 1}" for run in range(len(restarts))]
    labels += [f"re-seating move {move + 1}" for move in range(len(moves))]
    labels += ["penalty-path move"] * len(paths)
    best = _kept_run(histories, retvals)
    fig, ax = _figure_and_axes(ax)
    for run, history in enumerate(histories):
        history = np.asarray(history, dtype=float)
        kept = run == best
        ax.plot(
            np.arange(len(history)),
            history,
            marker="." if len(history) < 60 else None,
            lw=2.0 if kept else 1.0,
            alpha=1.0 if kept else 0.6,
            # C3 marks the kept run; the others cycle through the rest
            color="C3" if kept else f"C{(0, 1, 2, 4, 5, 6, 7, 8, 9)[run % 9]}",
            zorder=3 if kept else 2,
            label=labels[run] + (" (kept)" if kept else ""),
        )
    ax.set_xlabel("iteration (EM and Newton steps)")
    # an L2-penalised fit climbs L minus its penalty: what its history holds
    alpha = float(results.mle_settings.get("alpha", 0.0))
    ax.set_ylabel(
        f"penalised objective (alpha={alpha:g})" if alpha else "log-likelihood L"
    )
    title = f"Convergence, K={results.k}, {len(restarts)} start(s)"
    if moves:
        title += f", {len(moves)} re-seating move(s)"
    if paths:
        title += ", a penalty-path move"
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    return fig


def _kept_run(histories: list, retvals: dict) -> int:
    """Which of ``histories`` is the run the fit kept: the one whose history
    is the fit's own (``llf_history``); the highest final value if none is
    (an export without the histories). Not simply the highest: a path move
    heading for separation can end higher and is not kept."""
    own = retvals.get("llf_history")
    if own is not None:
        for run, history in enumerate(histories):
            if np.array_equal(np.asarray(history), np.asarray(own)):
                return run
    finals = [np.asarray(history, dtype=float)[-1] for history in histories]
    return int(np.argmax(finals)) if len(finals) > 1 else 0


# ----------------------------------------------------------------- choice of K
def plot_select_k(table, criteria: Sequence[str] | None = None, ax=None, chosen=None):
    """Model-choice criteria against K, one line per gamma, the chosen
    candidate marked.

    Parameters
    ----------
    table : SelectKResults or DataFrame
        What :func:`~plumestats.api.select_k` returns, or its ``.table``: one
        row per candidate with columns ``k, gamma, llf, aic, bic, cv_accuracy,
        cv_accuracy_se, cv_logloss, cv_logloss_se, converged`` (cv columns all
        NaN when not cross-validated; gamma NaN for K = 1, whose row starts
        every gamma's line).
    criteria : sequence of str, optional
        Columns to draw, one panel each; by default ``aic`` and ``bic``, and
        ``cv_accuracy`` and ``cv_logloss`` (with one-standard-error bars) when
        they hold values.
    ax : matplotlib Axes or sequence of Axes, optional
        One Axes per criterion; a new figure otherwise.
    chosen : tuple, optional
        ``(k, gamma)`` to mark with a star on every panel (gamma NaN for
        K = 1); by default the candidate ``select_k`` chose, when ``table``
        is what it returns.

    Returns
    -------
    matplotlib.figure.Figure
        Fits that did not converge are drawn with hollow markers; the chosen
        candidate is a star, named in the legend with the criterion that chose
        it.
    """
    criterion_used = None
    if isinstance(table, SelectKResults):
        chosen = table.chosen if chosen is None else chosen
        criterion_used = table.criterion
        table = table.table
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "table must be what select_k returns (or its .table DataFrame), got "
            f"{type(table).__name__}"
        )
    absent = [c for c in SELECT_K_COLUMNS if c not in table.columns]
    if absent:
        raise ValueError(
            f"table lacks the columns {absent}; pass what plumestats.api.select_k "
            "returns"
        )
    if criteria is None:
        criteria = ["aic", "bic"] + [
            c for c in ("cv_accuracy", "cv_logloss") if table[c].notna().any()
        ]
    # one name is one criterion (list("bic") would be three letters)
    criteria = [criteria] if isinstance(criteria, str) else list(criteria)
    allowed = ("llf", "aic", "bic", "cv_accuracy", "cv_logloss")
    wrong = [c for c in criteria if c not in allowed]
    if wrong or not criteria:
        raise ValueError(f"criteria must be among {list(allowed)}, got {criteria}")
    if ax is None:
        fig, axes = _pyplot().subplots(
            1, len(criteria), figsize=(4.0 * len(criteria), 3.6), squeeze=False
        )
        axes = list(axes[0])
        fig.set_layout_engine("tight")
    else:
        axes = [ax] if not isinstance(ax, (list, tuple, np.ndarray)) else list(ax)
        if len(axes) != len(criteria):
            raise ValueError(
                f"ax must hold one Axes per criterion ({len(criteria)}: {criteria}), "
                f"got {len(axes)}"
            )
        fig = axes[0].figure
    single = table[table["gamma"].isna()]
    gammas = sorted(table["gamma"].dropna().unique()) or [np.nan]
    for panel, criterion in zip(axes, criteria, strict=True):
        for number, gamma in enumerate(gammas):
            # a K = 1 row has no gamma (NaN); the hard gate's is inf
            rows = single if pd.isna(gamma) else table[table["gamma"] == gamma]
            if not pd.isna(gamma):
                rows = pd.concat([single, rows])
            rows = rows.sort_values("k")
            color = f"C{number}"
            label = "K = 1" if pd.isna(gamma) else f"gamma = {gamma:g}"
            se = rows.get(f"{criterion}_se")
            panel.errorbar(
                rows["k"],
                rows[criterion],
                yerr=None if se is None or se.isna().all() else se,
                color=color,
                marker="o",
                capsize=3,
                label=label,
            )
            unsettled = ~rows["converged"].astype(bool)
            panel.scatter(
                rows["k"][unsettled],
                rows[criterion][unsettled],
                facecolors="white",
                edgecolors=color,
                zorder=4,
                s=36,
            )
        if chosen is not None:
            _mark_chosen(panel, table, criterion, chosen, criterion_used)
        panel.set_xlabel("K (hyperplanes)")
        panel.set_ylabel(criterion)
        panel.set_xticks(sorted(table["k"].unique()))
    axes[0].legend(fontsize=7)
    return fig


def _mark_chosen(panel, table, criterion, chosen, criterion_used) -> None:
    """A star on the chosen candidate's point of this panel."""
    k, gamma = chosen
    same_gamma = table["gamma"].isna() if pd.isna(gamma) else table["gamma"] == gamma
    row = table[(table["k"] == k) & same_gamma]
    if row.empty:
        raise ValueError(f"chosen={chosen} is not a candidate of the table")
    by = f" by {criterion_used}" if criterion_used else ""
    gate = "" if pd.isna(gamma) else f", gamma = {gamma:g}"
    panel.scatter(
        [k],
        [row[criterion].iloc[0]],
        marker="*",
        s=260,
        facecolors="gold",
        edgecolors="black",
        linewidths=0.8,
        zorder=6,
        label=f"chosen{by}: K = {k}{gate}",
    )


def _no_data(model) -> str:
    """Why a plot needs ``data=``: the estimation data are gone (dropped by
    ``remove_data()``, or never in a JSON export)."""
    return f"the plot needs the estimation data, {without_data(model)}; pass data="
