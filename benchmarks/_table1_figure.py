"""The figure of ``table1.py``'s report: accuracy against fit time per
dataset, beside the paper's best polyhedral accuracy and the tuned peers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ._table1_reference import PAPER, PEER_COLUMNS, PEERS

PLOTTED_PEERS = PEER_COLUMNS[:4]  # the majority-class rate would squash the axis


def plot(summary: pd.DataFrame, path: Path) -> None:
    """Accuracy against median fit time, one panel per dataset; the paper's best
    polyhedral accuracy as a dashed line, the tuned peers as grey markers in the
    right margin (they have no fit time on this axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(summary["dataset"]))
    methods = list(dict.fromkeys(summary["method"]))
    colours = dict(zip(methods, plt.cm.tab10.colors, strict=False))
    fig, axes = plt.subplots(
        1, len(datasets), figsize=(4.4 * len(datasets), 4.2), squeeze=False
    )
    for ax, name in zip(axes[0], datasets, strict=True):
        for row in summary[summary["dataset"] == name].itertuples():
            ax.errorbar(
                row.median_fit_seconds,
                row.accuracy_mean,
                yerr=row.accuracy_std,
                fmt="o",
                color=colours[row.method],
                label=row.method,
                capsize=3,
            )
        ax.axhline(
            PAPER[name]["accuracy"],
            color="black",
            linestyle="--",
            linewidth=1,
            label="paper best polyhedral",
        )
        plot_peers(ax, name)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(name)
        ax.set_xlabel("median fit time, s (log)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("accuracy % (mean ± sd)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8
    )
    fig.tight_layout(rect=(0, 0.16, 0.98, 1), w_pad=2.5)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_peers(ax: Any, name: str) -> None:
    """The tuned peers as markers just right of the panel, inside its y-range."""
    from matplotlib.transforms import blended_transform_factory

    edge = blended_transform_factory(ax.transAxes, ax.transData)
    values = dict(zip(PEER_COLUMNS, PEERS[name], strict=True))
    for column, marker in zip(PLOTTED_PEERS, "sDv^", strict=True):
        ax.scatter(
            1.03,
            values[column],
            marker=marker,
            color="grey",
            transform=edge,
            label=f"peer: {column}",
            zorder=3,
            clip_on=False,
        )
    low, high = ax.get_ylim()
    shown = [values[c] for c in PLOTTED_PEERS]
    ax.set_ylim(min(low, min(shown) - 0.5), max(high, max(shown) + 0.5))
