"""Plots render to PNG with the Agg backend and draw what they claim to draw."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import plumestats.api as ps

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from plumestats.plotting import (  # noqa: E402
    SELECT_K_COLUMNS,
    plot_convergence,
    plot_polyhedron,
    plot_select_k,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "polyhedron_plots.py"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def formula_fit():
    data, _ = ps.simulate_polyhedron(600, d=2, k=3, noise=0.03, random_state=1)
    rng = np.random.default_rng(0)
    data["z"] = np.where(rng.random(len(data)) < 0.3, "a", "b")
    data["x3"] = rng.standard_normal(len(data))
    return data, ps.plume("y ~ x1 + x2 + x3 + C(z)", data, k=3).fit(n_init=3)


def _check_png(path: Path, fig) -> None:
    assert path.is_file() and path.stat().st_size > 10_000
    height, width = matplotlib.image.imread(path).shape[:2]
    expected = np.round(fig.get_size_inches() * fig.dpi).astype(int)
    assert (width, height) == tuple(expected)


def _face_lines(ax):
    return [line for line in ax.get_lines() if line.get_label().startswith("h")]


def test_polyhedron_from_a_formula(formula_fit, tmp_path):
    data, results = formula_fit
    fig = plot_polyhedron(results, x="x1", y="x2", grid_points=80)
    fig.savefig(tmp_path / "poly.png")
    _check_png(tmp_path / "poly.png", fig)
    ax = fig.axes[0]
    lines = _face_lines(ax)
    assert [line.get_label() for line in lines] == ["h1", "h2", "h3"]
    assert len(ax.collections) >= 2  # one scatter per class, plus contours
    # each drawn line is its hyperplane's zero set, others held at mean / mode
    for face, line in enumerate(lines):
        xy = np.column_stack([line.get_xdata(), line.get_ydata()])
        xy = xy[~np.isnan(xy).any(axis=1)]
        grid = pd.DataFrame({"x1": xy[:, 0], "x2": xy[:, 1]})
        grid["x3"] = data["x3"].mean()
        grid["z"] = "b"  # the mode
        scores = np.asarray(results.predict(grid, which="linear"))[:, face]
        spread = np.ptp(np.asarray(results.predict(data, which="linear"))[:, face])
        # contour vertices are linear interpolations on the grid: exact here
        assert_allclose(scores, 0.0, atol=1e-8 * spread)


def test_polyhedron_from_arrays_and_given_axes(tmp_path):
    data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.03, random_state=2)
    exog = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    results = ps.PolyhedralMixtureLogit(data["y"].to_numpy(), exog, k=2).fit()
    fig, ax = plt.subplots()
    assert plot_polyhedron(results, x=1, y="x2", grid_points=50, ax=ax) is fig
    assert len(_face_lines(ax)) == 2
    labels = {text.get_text() for text in ax.get_legend().get_texts()}
    assert {"y = 0", "y = 1", "h1", "h2"} <= labels


def _drawn_points(ax, label: str) -> np.ndarray:
    (points,) = [c for c in ax.collections if c.get_label() == label]
    return np.asarray(points.get_offsets())


@pytest.mark.parametrize("kind", ["shuffled frame", "formula, a row dropped"])
def test_points_are_drawn_in_their_own_class(kind):
    # the rows of a frame with its own index: drawn by position, not by a
    # label of another row
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.03, random_state=2)
    data = data.sample(frac=1.0, random_state=0)
    if kind == "shuffled frame":
        exog = data[["x1", "x2"]].assign(const=1.0)
        results = ps.PolyhedralMixtureLogit(data["y"], exog, k=2).fit()
    else:
        data.loc[data.index[5], "x1"] = np.nan
        results = ps.plume("y ~ x1 + x2", data, k=2).fit()
    fig = plot_polyhedron(results, x="x1", y="x2", grid_points=30)
    complete = data.dropna()
    for label, code in (("y = 0", 0), ("y = 1", 1)):
        expected = complete.loc[complete["y"] == code, ["x1", "x2"]].to_numpy()
        drawn = _drawn_points(fig.axes[0], label)
        assert_allclose(np.sort(drawn, axis=0), np.sort(expected, axis=0))
    plt.close(fig)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"x": "x9", "y": "x2"}, ValueError, "x='x9' is not a feature"),
        ({"x": "x1", "y": "x1"}, ValueError, "two different features"),
        ({"x": "x1", "y": "x2", "at": {"w": 1}}, ValueError, "not features"),
        ({"x": "x1", "y": "x2", "grid_points": 3}, ValueError, "grid_points"),
    ],
)
def test_polyhedron_bad_arguments(formula_fit, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_polyhedron(formula_fit[1], **kwargs)


def test_convergence_of_a_penalised_fit_says_what_it_climbs():
    """An L2 fit's history is L minus its penalty, not L (it ends below llf)."""
    polygon_data, _ = ps.simulate_polyhedron(400, d=2, k=2, noise=0.1, random_state=0)
    results = ps.plume("y ~ x1 + x2", polygon_data, k=2).fit(alpha=0.05)
    axes = plot_convergence(results).axes[0]
    assert axes.get_ylabel() == "penalised objective (alpha=0.05)"
    assert results.llf_history[-1] < results.llf
    plain = ps.plume("y ~ x1 + x2", polygon_data, k=2).fit()
    assert plot_convergence(plain).axes[0].get_ylabel() == "log-likelihood L"
    plt.close("all")


def test_convergence_draws_every_restart(formula_fit, tmp_path):
    results = formula_fit[1]
    retvals = results.mle_retvals
    assert len(retvals["restarts_llf_history"]) == 3
    # the restarts, then the default re-seating moves' runs
    histories = [*retvals["restarts_llf_history"], *retvals["reseat_llf_history"]]
    assert len(histories) == 3 + retvals["reseat_llf"].size
    fig = plot_convergence(results)
    fig.savefig(tmp_path / "conv.png")
    _check_png(tmp_path / "conv.png", fig)
    lines = fig.axes[0].get_lines()
    assert len(lines) == len(histories)
    for line, history in zip(lines, histories, strict=True):
        assert_allclose(line.get_ydata(), history)
        assert np.all(np.diff(history) >= -1e-9 * abs(history[-1]))  # EM: L rises
    kept = [line for line in lines if "kept" in line.get_label()]
    assert len(kept) == 1 and kept[0].get_ydata()[-1] == pytest.approx(results.llf)


def test_convergence_marks_a_kept_path_move(data_dir):
    """Heart at K = 3: the penalty-path move's run is the one kept. It is
    drawn and marked; the plot had marked the first start (-94.41) and left
    the path run out."""
    heart = pd.read_csv(data_dir / "heart.csv")
    formula = (
        "disease ~ age + C(sex) + C(chest_pain_type) + max_heart_rate + oldpeak"
        " + C(thal)"
    )
    results = ps.plume(formula, heart, k=3).fit(alpha=1e-3, random_state=0)
    lines = plot_convergence(results).axes[0].get_lines()
    kept = [line for line in lines if "kept" in line.get_label()]
    assert len(kept) == 1 and kept[0].get_label() == "penalty-path move (kept)"
    assert_allclose(kept[0].get_ydata(), results.mle_retvals["llf_history"])
    assert len(lines) == 1 + results.mle_retvals["reseat_llf"].size + 1
    plt.close("all")


def _select_k_table(with_cv: bool) -> pd.DataFrame:
    rows = [{"k": 1, "gamma": np.nan, "aic": 600.0, "bic": 610.0}]
    rows += [
        {"k": k, "gamma": g, "aic": 500.0 - k * g, "bic": 520.0 - k}
        for g in (1.0, 4.0)
        for k in (2, 3)
    ]
    table = pd.DataFrame(rows).reindex(columns=list(SELECT_K_COLUMNS))
    table["llf"] = -table["aic"] / 2
    table["converged"] = table["k"] != 3
    if with_cv:
        table["cv_accuracy"] = np.linspace(0.7, 0.9, 5)
        table["cv_accuracy_se"] = 0.01
        table["cv_logloss"] = np.linspace(0.5, 0.3, 5)
        table["cv_logloss_se"] = 0.02
    return table


@pytest.mark.parametrize("with_cv", [False, True])
def test_select_k_panels_and_lines(with_cv, tmp_path):
    fig = plot_select_k(_select_k_table(with_cv))
    fig.savefig(tmp_path / "select.png")
    _check_png(tmp_path / "select.png", fig)
    assert len(fig.axes) == (4 if with_cv else 2)
    for ax in fig.axes:
        # the caps of error bars are Line2Ds too, with markers but no line
        data_lines = [line for line in ax.get_lines() if line.get_linestyle() != "None"]
        assert len(data_lines) == 2  # one per gamma, each starting at K = 1
        for line in data_lines:
            assert list(line.get_xdata()) == [1, 2, 3]
    if with_cv:
        # error bars: vertical segments as LineCollections on the cv panels
        from matplotlib.collections import LineCollection

        bars = [c for c in fig.axes[2].collections if isinstance(c, LineCollection)]
        assert len(bars) == 2  # one set per gamma
        heights = [np.ptp(segment[:, 1]) for segment in bars[0].get_segments()]
        assert_allclose(heights, 0.02)  # two standard errors of 0.01


def test_select_k_takes_one_criterion_by_name():
    # "bic" is one criterion, not the letters b, i and c
    fig = plot_select_k(_select_k_table(False), criteria="bic")
    assert len(fig.axes) == 1


def test_select_k_takes_what_select_k_returns(tmp_path):
    # the docs pass select_k's result itself; it used to take only its .table
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    chosen = ps.select_k("y ~ x1 + x2", data, ks=(1, 2), gammas=(1.0,))
    fig = plot_select_k(chosen)
    assert len(fig.axes) == 2
    for ax, criterion in zip(fig.axes, ("aic", "bic"), strict=True):
        line = next(line for line in ax.get_lines() if line.get_linestyle() != "None")
        assert_allclose(
            np.asarray(line.get_ydata(), float), chosen.table[criterion].to_numpy(float)
        )


def _stars(ax):
    """The offsets of the star markers (the chosen candidate) on a panel."""
    return [
        collection.get_offsets().tolist()
        for collection in ax.collections
        if collection.get_label().startswith("chosen")
    ]


def test_a_threshold_factor_is_held_at_its_majority_level():
    # I(x3 > -1) is categorical; the raw x3 was held at its mode, which for
    # unique values is the smallest: the minority level
    from plumestats.plotting import _polyhedron_frame

    data, _ = ps.simulate_polyhedron(400, d=3, k=2, noise=0.05, random_state=0)
    results = ps.plume("y ~ x1 + x2 + I(x3 > -1)", data, k=2).fit()
    held = _polyhedron_frame(results, "x1", "x2", None, None)[3]
    assert (data["x3"] > -1).mean() > 0.5 and held["x3"] > -1
    # a numeric code of a category (few values) is still held at its mode
    data["n"] = np.where(np.arange(400) % 4 == 0, 1, 2)
    results = ps.plume("y ~ x1 + x2 + C(n)", data, k=2).fit()
    assert _polyhedron_frame(results, "x1", "x2", None, None)[3]["n"] == 2


def test_a_formula_fit_without_its_data_asks_for_them():
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    results = ps.plume("y ~ x1 + x2", data, k=2).fit()
    results.remove_data()
    with pytest.raises(ValueError, match=r"remove_data.*pass data="):
        plot_polyhedron(results, "x1", "x2")
    plt.close(plot_polyhedron(results, "x1", "x2", data=data, grid_points=20))


def test_select_k_with_the_hard_gate():
    # select_k's gammas take np.inf for SPLA1: its line and its star
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    selection = ps.select_k("y ~ x1 + x2", data, ks=(1, 2), gammas=(1.0, np.inf))
    fig = plot_select_k(selection, chosen=(2, np.inf))
    ax = fig.axes[0]
    labels = {text.get_text() for text in ax.get_legend().get_texts()}
    assert {"gamma = 1", "gamma = inf"} <= labels
    hard = selection.table[np.isinf(selection.table["gamma"])]
    assert _stars(ax) == [[[2.0, float(hard["aic"].iloc[0])]]]
    plt.close(fig)


def test_select_k_marks_the_chosen_candidate(tmp_path):
    data, _ = ps.simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    selection = ps.select_k("y ~ x1 + x2", data, ks=(1, 2, 3), gammas=(1.0, 2.0))
    k, gamma = selection.chosen
    fig = plot_select_k(selection)
    fig.savefig(tmp_path / "chosen.png")
    _check_png(tmp_path / "chosen.png", fig)
    row = selection.table[
        (selection.table["k"] == k) & (selection.table["gamma"] == gamma)
    ]
    for ax, criterion in zip(fig.axes, ("aic", "bic"), strict=True):
        # one star per panel, at the chosen candidate's value
        assert _stars(ax) == [[[k, row[criterion].iloc[0]]]]
    legend = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert f"chosen by bic: K = {k}, gamma = {gamma:g}" in legend


def test_select_k_marks_a_chosen_k1_on_a_plain_table():
    fig = plot_select_k(_select_k_table(False), chosen=(1, np.nan))
    assert _stars(fig.axes[1]) == [[[1.0, 610.0]]]
    assert not _stars(plot_select_k(_select_k_table(False)).axes[0])
    with pytest.raises(ValueError, match="is not a candidate"):
        plot_select_k(_select_k_table(False), chosen=(5, 1.0))


def test_select_k_rejects_other_tables():
    with pytest.raises(TypeError, match=r"what select_k returns \(or its .table"):
        plot_select_k([1, 2])
    with pytest.raises(ValueError, match="lacks the columns"):
        plot_select_k(pd.DataFrame({"k": [1, 2], "aic": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="criteria must be among"):
        plot_select_k(_select_k_table(False), criteria=["r2"])


def test_missing_matplotlib_names_the_extra(formula_fit, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"plumestats\[plot\]"):
        plot_convergence(formula_fit[1])


def test_example_script_saves_the_three_plots(tmp_path, capsys):
    import runpy

    namespace = runpy.run_path(str(EXAMPLE))
    namespace["main"](
        [
            "--output-dir",
            str(tmp_path),
            "--nobs",
            "400",
            "--n-init",
            "2",
            "--max-k",
            "2",
        ]
    )
    for name in ("polyhedron.png", "convergence.png", "select_k.png"):
        path = tmp_path / name
        assert path.is_file() and path.stat().st_size > 10_000
        height, width = matplotlib.image.imread(path).shape[:2]
        assert width >= 400 and height >= 300
    assert "saved" in capsys.readouterr().out
