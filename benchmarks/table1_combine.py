"""One Table 1 report from several runs of ``table1.py`` under one protocol.

What it is for
    A full ``table1.py`` run of the five datasets with the paper's 10 repeats
    takes about 4.5 hours on two cores; it is run dataset by dataset
    (``--datasets ionosphere --name table1_ionosphere_...``) and the runs are
    combined here into the one table the paper has.

How
    Each run is read back from its files (``STEM.csv``, ``STEM_timing.csv``,
    ``STEM.md``). Their protocols must be the same, line for line, except the
    repeats of the outer loop (which datasets ran); a difference stops the
    combination and names the line. No dataset may come from two runs. The
    summaries, tables, timing and targets are then computed from the fold
    records exactly as ``table1.py`` computes them (combining one run gives its
    own tables back), and the report lists every source run: its command, git
    commit, date, versions, load and run time.

Usage
    python benchmarks/table1_combine.py table1_ionosphere_10repeats_inner2 \\
        table1_heart_10repeats_inner2 table1_ilpd_10repeats_inner2 \\
        table1_pima_10repeats_inner2 table1_adult_inner2 --name table1
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _table1_report as report
from _datasets import DATASETS
from table1 import METHODS

RESULTS_DIR = Path(__file__).resolve().parent / "results"
# The outer-loop line names the datasets of its run and their repeats; the rest
# of the protocol must match between the runs.
REPEATS_PATTERN = re.compile(r"repeats: (?P<repeats>[^()]*?) \(adult")


class ProtocolMismatch(ValueError):
    """The runs were made under different protocols."""


@dataclass
class Run:
    """One run of ``table1.py``, read back from its files."""

    stem: str
    records: pd.DataFrame
    timing: pd.DataFrame
    header: list[str]
    protocol: list[str]

    @property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(self.records["dataset"]))

    @property
    def repeats(self) -> str:
        """``heart 10, pima 10``: the run's datasets and their repeats."""
        for line in self.protocol:
            match = REPEATS_PATTERN.search(line)
            if match:
                return match["repeats"]
        raise ProtocolMismatch(f"{self.stem}.md: no outer-loop repeats line")


def section(text: str, heading: str, stem: str) -> list[str]:
    """The lines under ``heading`` up to the next level-2 heading."""
    lines = text.splitlines()
    try:
        start = lines.index(heading) + 1
    except ValueError:
        raise ProtocolMismatch(f"{stem}.md has no '{heading}' section") from None
    end = next(
        (i for i in range(start, len(lines)) if lines[i].startswith("## ")),
        len(lines),
    )
    return [line for line in lines[start:end] if line.strip()]


def read(folder: Path, stem: str) -> Run:
    records, timing, text = report.read_run(folder, stem)
    header = [line for line in text.split("## Protocol")[0].splitlines()[1:] if line]
    return Run(stem, records, timing, header, section(text, "## Protocol", stem))


def shared_protocol(runs: list[Run]) -> list[str]:
    """The protocol common to all runs, its outer-loop line naming every
    dataset; raises :class:`ProtocolMismatch` on any other difference."""
    first = runs[0]
    blank = [REPEATS_PATTERN.sub("repeats: * (adult", line) for line in first.protocol]
    for run in runs[1:]:
        other = [
            REPEATS_PATTERN.sub("repeats: * (adult", line) for line in run.protocol
        ]
        if other != blank:
            differing = next(
                (a, b)
                for a, b in zip_longest(blank, other, fillvalue="(no line)")
                if a != b
            )
            raise ProtocolMismatch(
                f"{first.stem} and {run.stem} differ in their protocol:\n"
                f"  {first.stem}: {differing[0]}\n  {run.stem}: {differing[1]}\n"
                "combine only runs made with the same options and code"
            )
    seen: dict[str, str] = {}
    for run in runs:
        for name in run.datasets:
            if name in seen:
                raise ProtocolMismatch(
                    f"{name} is in both {seen[name]} and {run.stem}; "
                    "pass each dataset's run once"
                )
            seen[name] = run.stem
    # "heart 10, pima 10" per run -> one list in the paper's dataset order
    parts = {part.split()[0]: part for run in runs for part in run.repeats.split(", ")}
    repeats = ", ".join(parts[name] for name in DATASETS if name in parts)
    return [
        REPEATS_PATTERN.sub(f"repeats: {repeats} (adult", line)
        for line in first.protocol
    ]


def in_dataset_order(frame: pd.DataFrame, method_column: str) -> pd.DataFrame:
    """Rows ordered as one ``table1.py`` run orders them: by the paper's
    dataset order, then by ``table1.METHODS`` (so that the columns of the
    glance table do not depend on which run lacked a method)."""
    if frame.empty:
        return frame
    dataset_rank = frame["dataset"].map({name: i for i, name in enumerate(DATASETS)})
    method_rank = frame[method_column].map({name: i for i, name in enumerate(METHODS)})
    order = pd.DataFrame({"d": dataset_rank, "m": method_rank.fillna(len(METHODS))})
    keep = order.sort_values(["d", "m"], kind="stable").index
    return frame.loc[keep].reset_index(drop=True)


def combined_text(
    stem: str, runs: list[Run]
) -> tuple[str, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The report, fold records, summary and timing rows of the combination."""
    protocol = shared_protocol(runs)
    records = in_dataset_order(
        pd.concat([r.records for r in runs], ignore_index=True), "method"
    )
    timing = in_dataset_order(
        pd.concat([r.timing for r in runs if not r.timing.empty], ignore_index=True)
        if any(not r.timing.empty for r in runs)
        else pd.DataFrame(),
        "estimator",
    )
    summary = report.summarise(records)
    datasets = list(dict.fromkeys(records["dataset"]))
    sources = []
    for run in runs:
        sources += [
            f"- **{', '.join(run.datasets)}**: `{run.stem}.md`",
            *(f"  {line}" for line in run.header),
        ]
    text = "\n".join(
        [
            "# PLUME paper, Table 1: nested cross-validation",
            "",
            f"Combined by `benchmarks/table1_combine.py` from {len(runs)} runs of "
            "`table1.py` under one protocol (checked line by line); the "
            "fit times of different runs were measured at different times.",
            "",
            "## Source runs",
            "",
            *sources,
            "",
            "## Protocol",
            "",
            *protocol,
            "",
            report.results_text(stem, records, summary, timing, datasets),
        ]
    )
    return text, records, summary, timing


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("stems", nargs="+", help="file stems of the runs to combine")
    parser.add_argument(
        "--input",
        type=Path,
        default=RESULTS_DIR,
        help=f"folder of the runs' files (default {RESULTS_DIR})",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="folder for the combined files (default: --input)",
    )
    parser.add_argument("--name", default="table1", help="stem of the combined files")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.name in args.stems:
        print(f"--name {args.name} would overwrite a source run", file=sys.stderr)
        return 2
    missing = [s for s in args.stems if not (args.input / f"{s}.csv").is_file()]
    if missing:
        print(f"no such run in {args.input}: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        runs = [read(args.input, stem) for stem in args.stems]
        runs.sort(key=lambda run: min(DATASETS.index(name) for name in run.datasets))
        text, records, summary, timing = combined_text(args.name, runs)
    except ProtocolMismatch as exc:
        print(f"cannot combine: {exc}", file=sys.stderr)
        return 1
    output = args.output or args.input
    paths = report.write_files(output, args.name, records, summary, timing, text)
    print("written: " + ", ".join(str(p) for p in paths.values()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
