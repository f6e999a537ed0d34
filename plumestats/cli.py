"""The ``plumestats`` command line: fit a model from a CSV file, predict from it.

Every bad input ends in one line on stderr, ``plumestats: error: ...``, and a
non-zero exit status; tracebacks are kept for bugs. Ctrl-C ends in
``plumestats: interrupted`` and status 130. Output files are guarded and
written whole (:mod:`plumestats._cli_files`); formulas are checked against a
safe grammar before patsy runs them (:mod:`plumestats._formula_safety`) unless
``--unsafe-formula`` is given. The parser and its help pages are built in
:mod:`plumestats._cli_parser`.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import math
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ._advice import in_cli_words
from ._cli_files import FileRefused, check_output, write_atomically
from ._cli_parser import PROG, make_parser

__all__ = ["build_parser", "main"]


class CLIError(Exception):
    """Bad input, reported as one line on stderr with exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``plumestats`` command."""
    return make_parser(fit=_fit, predict=_predict)


# ---------------------------------------------------------------- helpers
def _read_csv(path: str, index_col: str | None = None, text_columns=()) -> pd.DataFrame:
    _check_input(path)
    try:
        frame = pd.read_csv(path, dtype={name: str for name in text_columns})
    except (ValueError, UnicodeDecodeError) as exc:
        raise CLIError(f"could not read {path} as CSV: {_first_line(exc)}") from exc
    except OSError as exc:  # no permission, a device error
        raise CLIError(f"could not read {path}: {exc.strerror or exc}") from exc
    if index_col is not None:
        if index_col not in frame.columns:
            raise CLIError(
                f"--index-col {index_col!r} is not a column of {path}; the columns "
                f"are {', '.join(map(str, frame.columns))}"
            )
        # the labels are a copy: the formula may read the column too
        frame.index = pd.Index(frame[index_col], name=index_col)
    return frame


def _check_input(path: str) -> None:
    # any readable file that is not a folder: a named pipe or a process
    # substitution (<(gunzip -c data.csv.gz)) too
    if not os.path.exists(path):
        raise CLIError(f"no such file: {path}")
    if os.path.isdir(path):
        raise CLIError(f"{path} is a folder, not a file")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _missing_name(exc: BaseException) -> str | None:
    """The name patsy could not find, if a NameError is behind ``exc``."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, NameError):
            return exc.name
        exc = exc.__cause__ or exc.__context__
    return None


def _explain(
    exc: Exception, data: pd.DataFrame, path: str, outcome: str | None = None
) -> CLIError:
    """One line for a model error, naming a missing column and its look-alikes."""
    name = _missing_name(exc)
    if name is not None and name not in data.columns:
        return _unknown_column(name, data, path)
    # the library's advice (fit(alpha=...)) as this command's options
    message = in_cli_words(_first_line(exc))
    if outcome and message.startswith("endog must"):
        # the model's word for the outcome means little on the command line
        message = f"the outcome {outcome!r} must" + message[len("endog must") :]
    return CLIError(message)


def _unknown_column(name: str, data: pd.DataFrame, path: str) -> CLIError:
    """One line naming a column that is not in the data, and its look-alikes."""
    columns = [str(c) for c in data.columns]
    close = difflib.get_close_matches(name, columns, n=3)
    hint = (
        f"did you mean {', '.join(map(repr, close))}?"
        if close
        else f"the columns are {', '.join(columns[:12])}"
        + (", ..." if len(columns) > 12 else "")
    )
    if len(columns) == 1 and any(mark in columns[0] for mark in ";\t|"):
        # one column whose name holds another separator: not a comma's file
        hint += "; the file seems not to be comma-separated (save it as CSV)"
    return CLIError(f"column {name!r} is not in {path}; {hint}")


def _finite(value):
    """JSON has no NaN or infinity: they become null."""
    value = float(value)
    return value if math.isfinite(value) else None


def _as_json(res, formula: str) -> dict:
    from .label_flip import LabelFlipPolyhedralLogitResults

    params = res.params
    flips = isinstance(getattr(res, "_results", res), LabelFlipPolyhedralLogitResults)
    bound = None
    # the bound is for PLUME's soft gate only (not SPLA1, not the flip model)
    if np.isfinite(res.gamma) and not flips:
        terms = res.rademacher_bound()
        bound = {
            key: _finite(value)
            for key, value in dataclasses.asdict(terms).items()
            if key not in ("weight_norms", "nobs", "k")
        }
        bound["vacuous"] = bool(terms.vacuous)
    return {
        "formula": formula,
        "k": int(res.k),
        "gamma": _finite(res.gamma),
        # observations (frequency weights may make them a non-whole sum)
        "nobs": int(res.nobs) if float(res.nobs).is_integer() else float(res.nobs),
        "converged": bool(res.mle_retvals.get("converged", False)),
        "params": {str(n): _finite(v) for n, v in params.items()},
        "bse": {str(n): _finite(v) for n, v in res.bse.items()},
        "llf": _finite(res.llf),
        "aic": _finite(res.aic),
        "bic": _finite(res.bic),
        "bound": bound,
        "flip_rate": _finite(res.flip_rate) if flips else None,
    }


def _report_warnings(caught) -> None:
    for item in caught:
        message = in_cli_words(_first_line(item.message))
        print(f"{PROG}: warning: {message}", file=sys.stderr)


def _covariance_options(args: argparse.Namespace, data: pd.DataFrame, model) -> dict:
    """``cov_type`` and, for clusters, the labels of the rows the model kept."""
    if (args.cov_type == "cluster") != (args.cluster is not None):
        raise CLIError(
            "--cov-type cluster and --cluster COLUMN go together: name the column "
            "of cluster labels, e.g. --cov-type cluster --cluster school"
        )
    if args.cluster is None:
        return {"cov_type": args.cov_type}
    _check_column(args.cluster, "--cluster", data, args.data)
    # the rows the formula kept (rows with missing values were dropped)
    groups = data[args.cluster].loc[model.data.row_labels]
    if groups.isna().any():  # refused before the fit, not after it
        first = data.index.get_loc(groups.index[groups.isna().to_numpy()][0])
        raise CLIError(
            f"the --cluster column {args.cluster!r} has {int(groups.isna().sum())} "
            f"missing cluster labels (the first in data row {first + 1}) among the "
            "rows the model uses; give every row a cluster, or leave those rows out"
        )
    return {"cov_type": "cluster", "cov_kwds": {"groups": groups.to_numpy()}}


def _check_column(column: str, option: str, data: pd.DataFrame, path: str) -> None:
    """``column`` is a column of the CSV, or a one-line error with the near ones."""
    if column not in data.columns:
        close = difflib.get_close_matches(column, map(str, data.columns), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise CLIError(f"{option} column {column!r} is not in {path}{hint}")


# ---------------------------------------------------------------- commands
def _fit(args: argparse.Namespace) -> None:
    from .formula.api import plume, plume_flip, spla1

    _guard_output(args, {"DATA.csv": args.data})
    data = _read_csv(args.data)
    _check_formula(args, data)
    options = {"k": args.k, "inside": args.inside, "eval_env": _formula_namespace()}
    if not args.hard:
        options["gamma"] = args.gamma
    if args.freq_weights is not None:
        _check_column(args.freq_weights, "--freq-weights", data, args.data)
        options["freq_weights"] = data[args.freq_weights].to_numpy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            make = spla1 if args.hard else plume_flip if args.label_flips else plume
            model = make(args.formula, data, **options)
            res = model.fit(
                mstep=args.mstep,
                n_init=args.n_init,
                maxiter=args.maxiter,
                random_state=args.random_state,
                alpha=args.alpha,
                reseat=args.reseat,
                use_t=args.use_t,
                **_covariance_options(args, data, model),
                progress=not args.no_progress,
                chunksize=args.chunksize,
            )
        except (ValueError, TypeError, KeyError) as exc:
            outcome = args.formula.split("~")[0].strip()
            raise _explain(exc, data, args.data, outcome) from exc
        except MemoryError as exc:  # the fit's memory check: what to do here
            raise CLIError(in_cli_words(str(exc))) from exc
    _report_warnings(caught)
    if args.output:
        _save_fit(res, args.output)
        print(f"{PROG}: saved the fit to {args.output}", file=sys.stderr)
    if args.json:
        print(json.dumps(_as_json(res, args.formula), indent=2, allow_nan=False))
    else:
        print(res.summary())


def _unpickled(raw: bytes):
    """A pickled fit, read where its formula's names are found: statsmodels
    evaluates a formula model's formula again when it is unpickled, looking
    its names up in the frames that called it (this one is among the depths
    it tries, with 0.14 and 0.15), and a formula this command fits may read
    numpy as numpy, not np."""
    numpy = np  # noqa: F841 (read by the formula's evaluation, through the frame)
    return pickle.loads(raw)


def _load_results(path: str):
    from .results import PolyhedralMixtureLogitResults

    _check_input(path)
    try:
        raw = Path(path).read_bytes()  # once: the file may be a pipe
    except OSError as exc:  # no permission, a device error
        raise CLIError(f"could not read {path}: {exc.strerror or exc}") from exc
    if _is_json(path) or raw.lstrip()[:1] == b"{":
        res = _load_json(raw, path)
    else:
        try:
            res = _unpickled(raw)
        except Exception as exc:  # unpickling arbitrary bytes can raise almost anything
            raise CLIError(
                f"{path} is not a plumestats result (not a readable pickle: "
                f"{_first_line(exc)}); make one with 'plumestats fit ... --output'"
            ) from exc
    inner = getattr(res, "_results", res)
    if not isinstance(inner, PolyhedralMixtureLogitResults):
        raise CLIError(
            f"{path} is not a plumestats result (it holds a "
            f"{type(res).__name__}); make one with 'plumestats fit ... --output'"
        )
    return res


def _predict(args: argparse.Namespace) -> None:
    if args.alpha is None:
        args.alpha = 0.05
    elif not args.intervals:
        raise CLIError(
            "--alpha sets the confidence level of --intervals; add --intervals, "
            "or leave out --alpha"
        )
    if args.intervals and not 0 < args.alpha < 1:
        raise CLIError(f"--alpha must be between 0 and 1, got {args.alpha:g}")
    _guard_output(args, {"MODEL": args.model, "NEW.csv": args.data}, "predictions.csv")
    res = _load_results(args.model)
    data = _read_csv(args.data, args.index_col, _text_factor_columns(res))
    model = res.model
    if args.index_col is not None and not (
        hasattr(model, "formula") or args.index_col in list(model.exog_names)
    ):
        # a model read by position (fitted on arrays) would read it as a column
        data = data.drop(columns=args.index_col)
    if len(data) == 0:
        raise CLIError(f"{args.data} has no rows to predict at (only a header)")
    _check_numbers(res, data, args.data)
    # the rows are predicted by position and labelled after: --index-col's
    # labels only label the output, and may repeat
    by_position = data.reset_index(drop=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if args.intervals:
                out = _prediction_frame(res, by_position, args.alpha)
            else:
                predicted = np.asarray(res.predict(by_position), dtype=float)
                out = pd.DataFrame({"predicted": predicted})
        except (ValueError, TypeError, KeyError) as exc:
            raise _explain(exc, data, args.data) from exc
    out.index = data.index
    _report_warnings(caught)
    if args.output:
        write_atomically(args.output, out.to_csv)
        print(f"{PROG}: wrote {len(out)} predictions to {args.output}", file=sys.stderr)
    else:
        out.to_csv(sys.stdout)


def _text_factor_columns(res) -> list[str]:
    """The columns of the model's factors whose levels were text: read as
    text from the new CSV too, whose own values may look like numbers
    (codes '1', '2' and 'x' at the fit; a file with only 1 and 2 later)."""
    from ._compat import formula_spec
    from ._design_json import formula_data_columns

    design = formula_spec(getattr(res, "_results", res).model.data)
    if design is None or not hasattr(design, "factor_infos"):
        return []
    names = []
    for factor, info in design.factor_infos.items():
        categories = getattr(info, "categories", None) or ()
        if info.type == "categorical" and all(isinstance(c, str) for c in categories):
            names += formula_data_columns(f"~ {factor.code}", None)
    return list(dict.fromkeys(names))


def _check_numbers(res, data: pd.DataFrame, path: str) -> None:
    """One line naming a text value in a column the model reads as numbers
    (the CSV reader keeps such a column as text)."""
    from ._newdata import text_in_numeric_columns

    model = getattr(res, "_results", res).model
    for column in text_in_numeric_columns(model, data, whole_factor=True):
        values = data[column]
        text = values.notna() & pd.to_numeric(values, errors="coerce").isna()
        if not text.any():
            continue  # e.g. booleans read as text; patsy may still take them
        row = int(np.flatnonzero(text.to_numpy())[0])
        raise CLIError(
            f"column {column!r} of {path} must hold numbers, but data row {row + 1} "
            f"holds {values.iloc[row]!r}; correct it, or leave the cell empty for a "
            "missing value"
        )


def _prediction_frame(res, data: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """``get_prediction``'s summary frame, one row per input row (rows with a
    missing value empty), indexed like the input."""
    positions = np.arange(len(data))
    frame = res.get_prediction(data, row_labels=positions).summary_frame(alpha=alpha)
    frame = frame.reindex(positions)
    frame.index = data.index
    return frame


# ------------------------------------------------ files and formulas (issue 27)
def _is_json(path: str) -> bool:
    return path.lower().endswith(".json")


def _guard_output(args: argparse.Namespace, inputs: dict, example="fit.json") -> None:
    """Refuse an --output that would lose something, before any work
    (``example``: a name of the file the command writes, for the advice)."""
    if args.output is not None:
        check_output(args.output, inputs, force=args.force, example=example)


def _save_fit(res, output: str) -> None:
    """The fit as JSON (``.json``) or a pickle, written whole."""
    from ._design_json import ExportError

    if not _is_json(output):
        write_atomically(output, res.save)
        return
    try:
        text = res.to_json()
    except ExportError as exc:
        raise CLIError(
            f"could not write {output} as JSON: {exc}; or give --output a name "
            "not ending in .json for a pickle"
        ) from exc
    write_atomically(output, lambda path: Path(path).write_text(text, "utf-8"))


def _load_json(raw: bytes, path: str):
    from ._sharing import results_from_json

    try:
        return results_from_json(raw.decode("utf-8"), source=path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CLIError(_first_line(exc)) from exc


def _formula_namespace():
    """What a formula may name besides the columns: numpy as ``np`` or
    ``numpy``, as the safe grammar takes it (and, with --unsafe-formula,
    Python's builtins), not this module's names."""
    from ._compat import STATSMODELS_EVAL_ENV_MAPPING

    names = {"np": np, "numpy": np}
    if STATSMODELS_EVAL_ENV_MAPPING:
        return names
    from patsy import EvalEnvironment  # statsmodels 0.14 passes it to patsy

    return EvalEnvironment([names])


def _check_formula(args: argparse.Namespace, data: pd.DataFrame) -> None:
    """The formula in the safe grammar, unless --unsafe-formula; a JSON
    output needs it either way (loading the file evaluates the formula)."""
    from ._formula_safety import UnsafeFormulaError, check_safe_formula

    json_output = bool(args.output) and _is_json(args.output)
    if args.unsafe_formula and not json_output:
        return
    try:
        check_safe_formula(args.formula, data.columns)
    except UnsafeFormulaError as exc:
        if exc.name is not None:
            raise _unknown_column(exc.name, data, args.data) from exc
        if args.unsafe_formula:
            raise CLIError(
                f"--output {args.output}: {exc}; a JSON file carries only formulas "
                "in this grammar: give --output a name not ending in .json for a "
                "pickle"
            ) from exc
        raise CLIError(
            f"{exc}; to run it as Python anyway, add --unsafe-formula (only for a "
            "formula you would run as code)"
        ) from exc


def _interrupted() -> int:
    # Ctrl-C: the shell's status for SIGINT, and no half-written output
    # (write_atomically removes its temporary file on the way out)
    print(f"{PROG}: interrupted", file=sys.stderr)
    return 130


class _CtrlC:
    """Remembers a Ctrl-C while the command runs.

    Python turns SIGINT into a ``KeyboardInterrupt``, but a library may turn
    that into an error of its own: pandas' CSV reader reports "Calling
    read(nbytes) on source failed". The handler raises the interrupt as
    Python's does and notes it, so that such an error still ends as an
    interruption. A SIGINT that the parent process ignores stays ignored.
    """

    def __init__(self):
        self.pressed = False
        self._previous = None

    def _handler(self, signum, frame):
        self.pressed = True
        raise KeyboardInterrupt

    def __enter__(self):
        in_main = threading.current_thread() is threading.main_thread()
        if in_main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc_info):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 for bad input (one line on stderr), 2 for bad usage
        (argparse's convention), 130 when interrupted (Ctrl-C).
    """
    parser = build_parser()
    with _CtrlC() as ctrl_c:
        try:
            args = parser.parse_args(argv)
            args.run(args)
        except KeyboardInterrupt:
            return _interrupted()
        except (CLIError, FileRefused) as exc:
            if ctrl_c.pressed:  # a library reported Ctrl-C as an error of its own
                return _interrupted()
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            # the reader stopped early (`plumestats predict ... | head`): no
            # traceback; stdout goes to devnull so that the flush at exit cannot
            # raise again (the recipe of Python's signal documentation)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        except Exception:
            if ctrl_c.pressed:
                return _interrupted()
            raise  # a bug: its traceback
    return 0
