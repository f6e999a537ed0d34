"""The ``plumestats`` command's argument parser: its help pages and options.

One short function per subcommand and per group of options, in the order
the help pages list them. The commands themselves live in
:mod:`plumestats.cli`, which hands them in as the subcommands' ``run``; this
module imports nothing of plumestats but its version (no import cycle).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["PROG", "make_parser"]

PROG = "plumestats"

_DESCRIPTION = """\
PLUME: polyhedral classification as a probabilistic model. The class coded 1
is modelled as the inside of a polyhedron with K faces; K = 1 is logistic
regression."""

_EPILOG = """\
examples:
  plumestats fit pima.csv "diabetes ~ glucose + bmi + age" --k 2
  plumestats fit heart.csv "disease ~ age + C(thal)" --k 3 --gamma 2 --json
  plumestats fit pima.csv "diabetes ~ glucose + np.log(age)" --output fit.json
  plumestats fit pima.csv "diabetes ~ glucose + bmi" --label-flips --alpha 1e-6
  plumestats predict fit.json new.csv --output preds.csv
  plumestats predict fit.json new.csv --intervals --alpha 0.1

Formulas are Python code: by default only a safe grammar is run (column names,
numbers, operators, C(), I(), Q(), center/standardize/scale, bs/cr/cc/te and
numpy functions such as np.log); --unsafe-formula runs any formula.
--output FILE.json writes JSON, safe to share; any other name a pickle, which
'predict' loads too: only load pickles you made or trust (unpickling can run
arbitrary code). An existing output is replaced only with --force."""

Command = Callable[[argparse.Namespace], None]


def make_parser(fit: Command, predict: Command) -> argparse.ArgumentParser:
    """The argument parser of the ``plumestats`` command.

    Parameters
    ----------
    fit, predict : callable
        The commands, called with the parsed arguments (``args.run(args)``).

    Returns
    -------
    argparse.ArgumentParser
        The parser, with the subcommands ``fit`` and ``predict``.
    """
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_fit(commands, fit)
    _add_predict(commands, predict)
    return parser


def _subcommand(commands, name: str, summary: str, description: str):
    # the examples close every help page; keep the descriptions' line breaks
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _force_option(command) -> None:
    # both commands' --output follows the same rules (plumestats._cli_files)
    command.add_argument(
        "--force", action="store_true", help="replace an existing --output file"
    )


# ---------------------------------------------------------------- fit
def _add_fit(commands, run: Command) -> None:
    fit = _subcommand(
        commands,
        "fit",
        "fit PLUME to a CSV file and print the summary",
        "Fit PLUME (with --hard, SPLA1; with --label-flips, PLUME with label flips)\n"
        "to DATA with a patsy formula and print the summary, or with --json the\n"
        "estimates as JSON. Rows with missing values in the formula's columns are\n"
        "dropped.",
    )
    fit.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    fit.add_argument(
        "formula", metavar="FORMULA", help='patsy formula, e.g. "y ~ x1 + C(g)"'
    )
    _model_options(fit)
    _em_options(fit)
    _variant_options(fit)
    _inference_options(fit)
    _output_options(fit)
    fit.set_defaults(run=run)


def _model_options(fit) -> None:
    """The model: faces, gate, penalty, the class inside."""
    fit.add_argument("--k", type=int, default=2, help="number of faces (default 2)")
    fit.add_argument(
        "--gamma", type=float, default=1.0, help="gate sharpness (default 1)"
    )
    fit.add_argument(
        "--alpha", type=float, default=0.0, help="L2 penalty on the slopes (default 0)"
    )
    fit.add_argument(
        "--inside",
        type=int,
        choices=(0, 1),
        default=1,
        help="the outcome code that forms the polyhedron (default 1)",
    )
    fit.add_argument(
        "--freq-weights",
        metavar="COLUMN",
        help="the column of DATA holding frequency weights: how many "
        "observations each row stands for",
    )


def _em_options(fit) -> None:
    """The fit's algorithm: M-step solver, starts, re-seating, seed."""
    fit.add_argument(
        "--mstep",
        choices=("newton", "gradient", "bfgs"),
        default="newton",
        help="EM M-step solver (default newton)",
    )
    fit.add_argument(
        "--n-init",
        type=int,
        default=1,
        metavar="N",
        help="number of EM starts, the best kept (default 1)",
    )
    fit.add_argument(
        "--reseat",
        type=int,
        default=None,
        metavar="N",
        help="re-seating moves after the starts, each kept only if it raises the "
        "likelihood (default: fit's, 3 with K > 1; 0 for the starts alone)",
    )
    fit.add_argument(
        "--random-state", type=int, metavar="SEED", help="seed of the starts"
    )
    fit.add_argument(
        "--maxiter",
        type=int,
        default=500,
        metavar="N",
        help="most iterations of each EM run (default 500, fit's maxiter)",
    )
    fit.add_argument(
        "--chunksize",
        type=_chunksize,
        default=None,
        metavar="N|auto",
        help="fit by blocks of N rows (auto: a size that fits in memory), for "
        "data whose fit would not fit in memory at once (default: in one block)",
    )


def _chunksize(text: str):
    """``--chunksize``: ``auto`` or a number of rows."""
    if text == "auto":
        return text
    try:
        rows = int(text)
    except ValueError:
        rows = 0
    if rows < 1:
        raise argparse.ArgumentTypeError(
            f"must be a number of rows >= 1 or auto, got {text!r}"
        )
    return rows


def _variant_options(fit) -> None:
    """SPLA1 or the label-flip model instead of PLUME, one at most."""
    variant = fit.add_mutually_exclusive_group()
    variant.add_argument(
        "--hard",
        action="store_true",
        help="fit SPLA1, the hard-gating limit (gamma is not used)",
    )
    variant.add_argument(
        "--label-flips",
        action="store_true",
        help="fit PLUME with a share of randomly flipped labels, estimated "
        "(LabelFlipPolyhedralLogit; use a small --alpha, e.g. 1e-6)",
    )


def _inference_options(fit) -> None:
    """The covariance of the estimates and z or t inference."""
    fit.add_argument(
        "--cov-type",
        choices=("nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"),
        default="nonrobust",
        help="covariance of the estimates: observed information (default), a "
        "heteroscedasticity-robust sandwich (HC0-HC3, as R's sandwich::vcovHC) or "
        "cluster-robust (with --cluster)",
    )
    fit.add_argument(
        "--cluster",
        metavar="COLUMN",
        help="with --cov-type cluster: the column of DATA holding the cluster labels",
    )
    fit.add_argument(
        "--use-t",
        action="store_true",
        help="t and F inference (df_resid degrees of freedom) instead of z and chi2",
    )


def _output_options(fit) -> None:
    """``fit``'s output file, its formula's grammar and what it prints."""
    fit.add_argument(
        "--output",
        metavar="FILE",
        help="save the results: FILE.json as JSON, safe to share "
        "(results.save_json); any other name as a pickle (results.save)",
    )
    _force_option(fit)
    fit.add_argument(
        "--unsafe-formula",
        action="store_true",
        help="run a formula outside the safe grammar (any Python: attributes, "
        "other functions); only for a formula you would run as code",
    )
    fit.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (it goes to stderr, so stdout stays clean for "
        "piping either way)",
    )
    fit.add_argument(
        "--json",
        action="store_true",
        help="print params, bse, llf, aic, bic, the Rademacher bound (PLUME) and "
        "the flip rate (--label-flips) as JSON",
    )


# ---------------------------------------------------------------- predict
def _add_predict(commands, run: Command) -> None:
    predict = _subcommand(
        commands,
        "predict",
        "P(y = 1 | x) for each row of a CSV file from a saved fit",
        "Write P(y = 1 | x) for each row of NEW, with NEW's row index, from a fit "
        "saved\nby 'plumestats fit --output'. Rows with missing values get an empty "
        "prediction.",
    )
    predict.add_argument(
        "model",
        metavar="MODEL",
        help="a fit saved by 'plumestats fit --output': JSON (.json, or any file "
        "holding a JSON export) or a pickle",
    )
    predict.add_argument("data", metavar="NEW.csv", help="CSV file with a header row")
    predict.add_argument(
        "--index-col", metavar="COLUMN", help="column of NEW to use as the row index"
    )
    predict.add_argument(
        "--intervals",
        action="store_true",
        help="add the standard error and confidence interval of each prediction "
        "(columns se, ci_lower, ci_upper; results.get_prediction)",
    )
    predict.add_argument(
        "--alpha",
        type=float,
        default=None,  # None: not given, so that it is not silently ignored
        help="with --intervals: 1 - confidence level (default 0.05)",
    )
    predict.add_argument("--output", metavar="FILE", help="CSV file (default stdout)")
    _force_option(predict)
    predict.set_defaults(run=run)
