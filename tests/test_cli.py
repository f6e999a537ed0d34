"""The ``plumestats`` command line, run as a user runs it (a subprocess).

Oracles: the same fit made in-process through ``plumestats.formula.api``, and
the saved pickle loaded in-process.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import plumestats
from plumestats import PolyhedralMixtureLogit
from plumestats.cli import main
from plumestats.datasets import simulate_polyhedron
from plumestats.formula.api import plume, plume_flip
from plumestats.results import (
    PolyhedralMixtureLogitResults,
    PolyhedralMixtureLogitResultsWrapper,
)

FORMULA = "diabetes ~ glucose + bmi + age"


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "plumestats", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture(scope="module")
def pima_csv(data_dir):
    return data_dir / "pima.csv"


@pytest.fixture(scope="module")
def saved_fit(pima_csv, tmp_path_factory):
    """``fit --json --output`` once: the JSON and the pickle's path."""
    path = tmp_path_factory.mktemp("cli") / "model.pickle"
    done = run("fit", pima_csv, FORMULA, "--k", "2", "--json", "--output", path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), path


@pytest.fixture(scope="module")
def in_process(pima):
    return plume(FORMULA, pima, k=2, gamma=1.0).fit()


def test_fit_prints_the_summary(pima_csv):
    done = run("fit", pima_csv, FORMULA, "--k", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "PolyhedralMixtureLogit Regression Results" in done.stdout
    for name in ("hyperplane h1", "hyperplane h2", "glucose", "Log-Likelihood"):
        assert name in done.stdout
    assert done.stderr == ""


def test_json_has_the_estimates(saved_fit, in_process):
    payload, _ = saved_fit
    assert {"params", "bse", "llf", "aic", "bic", "bound"} <= set(payload)
    assert payload["flip_rate"] is None
    names = list(in_process.params.index)
    assert list(payload["params"]) == names
    # the same deterministic fit in two processes: equal to rounding
    np.testing.assert_allclose(
        [payload["params"][n] for n in names], in_process.params, rtol=1e-8
    )
    np.testing.assert_allclose(
        [payload["bse"][n] for n in names], in_process.bse, rtol=1e-6
    )
    for key in ("llf", "aic", "bic"):
        np.testing.assert_allclose(payload[key], getattr(in_process, key), rtol=1e-10)
    bound = in_process.rademacher_bound()
    np.testing.assert_allclose(payload["bound"]["log_total"], bound.log_total)
    assert payload["bound"]["vacuous"] is bound.vacuous


def test_fit_options_reach_the_model(pima, pima_csv):
    options = ["--k", "3", "--gamma", "2", "--alpha", "0.01", "--inside", "0"]
    options += ["--mstep", "bfgs", "--n-init", "2", "--random-state", "5", "--json"]
    options += ["--reseat", "3"]
    done = run("fit", pima_csv, "diabetes ~ glucose + bmi", *options)
    assert done.returncode == 0, done.stderr
    expected = plume("diabetes ~ glucose + bmi", pima, k=3, gamma=2.0, inside=0).fit(
        mstep="bfgs", n_init=2, random_state=5, alpha=0.01, reseat=3
    )
    payload = json.loads(done.stdout)
    assert payload["k"] == 3 and payload["gamma"] == 2.0
    np.testing.assert_allclose(payload["llf"], expected.llf, rtol=1e-8)


@pytest.mark.parametrize("cov_type", ["HC3", "cluster"])
def test_covariance_options_reach_the_fit(pima, pima_csv, cov_type, capsys):
    options = ["--k", "1", "--cov-type", cov_type, "--use-t", "--json"]
    kwds = {}
    if cov_type == "cluster":
        options += ["--cluster", "pregnancies"]
        kwds = {"cov_kwds": {"groups": pima["pregnancies"]}}
    assert main(["fit", str(pima_csv), FORMULA, *options]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = plume(FORMULA, pima, k=1).fit(cov_type=cov_type, use_t=True, **kwds)
    np.testing.assert_allclose(list(payload["bse"].values()), expected.bse, rtol=1e-10)


def test_cluster_labels_follow_the_rows_the_formula_keeps(pima, tmp_path, capsys):
    data = pima.copy()
    data.loc[[3, 10, 200], "bmi"] = np.nan  # rows the formula drops
    path = tmp_path / "holes.csv"
    data.to_csv(path, index=False)
    args = ["fit", str(path), FORMULA, "--k", "1", "--json"]
    assert main([*args, "--cov-type", "cluster", "--cluster", "age"]) == 0
    payload = json.loads(capsys.readouterr().out)
    kept = data.dropna(subset=["bmi"])
    expected = plume(FORMULA, kept, k=1).fit(
        cov_type="cluster", cov_kwds={"groups": kept["age"]}
    )
    assert payload["nobs"] == len(kept)
    np.testing.assert_allclose(list(payload["bse"].values()), expected.bse, rtol=1e-10)


def test_label_flips_fit_and_predict(pima, tmp_path, capsys):
    # in-process: the option's plumbing, against the same fit made directly
    csv, model = tmp_path / "pima.csv", tmp_path / "flips.pickle"
    pima.to_csv(csv, index=False)
    formula = "diabetes ~ glucose + bmi + age"
    args = ["fit", str(csv), formula, "--label-flips", "--alpha", "1e-6"]
    assert main([*args, "--json", "--output", str(model)]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = plume_flip(formula, pima, k=2).fit(alpha=1e-6)
    assert list(payload["params"]) == list(expected.params.index)
    assert list(payload["params"])[-1] == "flip_logit"
    np.testing.assert_allclose(payload["llf"], expected.llf, rtol=1e-8)
    np.testing.assert_allclose(payload["flip_rate"], expected.flip_rate, rtol=1e-6)
    assert payload["bound"] is None  # the Rademacher bound is PLUME's only
    assert main(args) == 0
    assert "label flips" in capsys.readouterr().out
    (tmp_path / "new.csv").write_text("glucose,bmi,age\n120,30,40\n")
    assert main(["predict", str(model), str(tmp_path / "new.csv")]) == 0
    predicted = float(capsys.readouterr().out.splitlines()[1].split(",")[1])
    new = pd.DataFrame({"glucose": [120], "bmi": [30], "age": [40]})
    np.testing.assert_allclose(predicted, expected.predict(new), rtol=1e-8)
    with pytest.raises(SystemExit) as info:
        main([*args, "--hard"])
    assert info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_predict_round_trip(saved_fit, pima, in_process, tmp_path):
    _, model = saved_fit
    new = pima.drop(columns="diabetes").iloc[::7].copy()
    new.iloc[0, 1] = np.nan  # a row with a missing value predicts empty (NaN)
    new_csv, out_csv = tmp_path / "new.csv", tmp_path / "preds.csv"
    new.to_csv(new_csv, index=False)
    done = run("predict", model, new_csv, "--output", out_csv)
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out_csv, index_col=0)
    frame = pd.read_csv(new_csv)
    pd.testing.assert_index_equal(got.index, frame.index)
    loaded = PolyhedralMixtureLogitResults.load(model)
    np.testing.assert_allclose(got["predicted"], loaded.predict(frame), rtol=1e-12)
    np.testing.assert_allclose(got["predicted"], in_process.predict(frame), rtol=1e-8)
    assert np.isnan(got["predicted"].iloc[0])


def test_predict_intervals(saved_fit, pima, tmp_path, capsys):
    _, model = saved_fit
    new = pima.drop(columns="diabetes").iloc[:6].copy()
    new.loc[new.index[2], "glucose"] = np.nan  # its row stays, empty
    new.to_csv(tmp_path / "new.csv", index=False)
    args = ["predict", str(model), str(tmp_path / "new.csv"), "--intervals"]
    assert main([*args, "--alpha", "0.1"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert list(got.columns) == ["predicted", "se", "ci_lower", "ci_upper"]
    assert got.iloc[2].isna().all() and got.drop(index=2).notna().all().all()
    loaded = PolyhedralMixtureLogitResults.load(model)
    expected = loaded.get_prediction(new.dropna()).summary_frame(alpha=0.1)
    np.testing.assert_allclose(got.dropna().to_numpy(), expected.to_numpy(), rtol=1e-9)
    assert main([*args, "--alpha", "1.5"]) == 1
    _one_error_line(capsys.readouterr().err, "--alpha must be between 0 and 1")


def test_predict_to_stdout_keeps_the_index_column(saved_fit, pima, tmp_path, capsys):
    _, model = saved_fit
    new = pima.iloc[:5].drop(columns="diabetes")
    new.insert(0, "id", [f"p{i}" for i in range(5)])
    new.to_csv(tmp_path / "new.csv", index=False)
    args = ["predict", str(model), str(tmp_path / "new.csv"), "--index-col", "id"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "id,predicted" and lines[1].startswith("p0,")


@pytest.mark.parametrize("intervals", [[], ["--intervals"]])
def test_repeated_index_labels_with_a_missing_value(
    saved_fit, pima, tmp_path, capsys, intervals
):
    # the labels only label the output: repeated ones, next to a row with a
    # missing value, once made pandas refuse to reindex
    _, model = saved_fit
    new = pima.iloc[:5].drop(columns="diabetes")
    new.insert(0, "id", ["a", "a", "b", "b", "c"])
    new.loc[new.index[2], "glucose"] = np.nan
    new.to_csv(tmp_path / "new.csv", index=False)
    args = ["predict", str(model), str(tmp_path / "new.csv"), "--index-col", "id"]
    assert main([*args, *intervals]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert list(got.index) == ["a", "a", "b", "b", "c"]
    assert got["predicted"].isna().tolist() == [False, False, True, False, False]


def _bad_cases(tmp):
    (tmp / "dict.pickle").write_bytes(pickle.dumps({"params": [1.0]}))
    (tmp / "text.pickle").write_text("not a pickle\n")
    (tmp / "empty.csv").write_text("")
    return {
        "missing file": (
            ["fit", tmp / "nope.csv", "y ~ x"],
            "no such file: .*nope.csv",
        ),
        "empty file": (
            ["fit", tmp / "empty.csv", "y ~ x"],
            "could not read .*empty.csv as CSV",
        ),
        "bad formula": (
            ["fit", "{pima}", "diabetes ~ glucose +"],
            "could not build the design from the formula",
        ),
        "unknown column": (
            ["fit", "{pima}", "diabetes ~ glucos + bmi"],
            "column 'glucos' is not in .*pima.csv; did you mean 'glucose'",
        ),
        "unknown outcome": (
            ["fit", "{pima}", "diabetez ~ bmi"],
            "column 'diabetez' .* did you mean 'diabetes'",
        ),
        "outcome not binary": (
            ["fit", "{pima}", "age ~ glucose"],
            "the outcome 'age' must have two levels, found 52",
        ),
        "two outcome terms": (
            ["fit", "{pima}", "diabetes + age ~ glucose"],
            "left-hand side must be one outcome, got 2 terms: diabetes \\+ age",
        ),
        "empty formula": (["fit", "{pima}", ""], "formula '' has no outcome"),
        "formula without ~": (
            ["fit", "{pima}", "glucose + bmi"],
            "formula 'glucose \\+ bmi' has no outcome",
        ),
        "bad k": (["fit", "{pima}", FORMULA, "--k", "0"], "--k must be an integer"),
        # the library's advice in the command's options, not fit's keywords
        "bad n-init": (["fit", "{pima}", FORMULA, "--n-init", "0"], ": --n-init must"),
        "infinite gamma": (["fit", "{pima}", FORMULA, "--gamma", "inf"], "use --hard"),
        "cluster without column": (
            ["fit", "{pima}", FORMULA, "--cov-type", "cluster"],
            "--cov-type cluster and --cluster COLUMN go together",
        ),
        "column without cluster": (
            ["fit", "{pima}", FORMULA, "--cluster", "age"],
            "--cov-type cluster and --cluster COLUMN go together",
        ),
        "unknown cluster column": (
            ["fit", "{pima}", FORMULA, "--cov-type", "cluster", "--cluster", "ag"],
            "--cluster column 'ag' is not in .*pima.csv; did you mean 'age'",
        ),
        "pickle of something else": (
            ["predict", tmp / "dict.pickle", "{pima}"],
            "dict.pickle is not a plumestats result .*holds a dict",
        ),
        "not a pickle": (
            ["predict", tmp / "text.pickle", "{pima}"],
            "text.pickle is not a plumestats result",
        ),
        "missing model": (["predict", tmp / "no.pickle", "{pima}"], "no such file"),
    }


BAD_CASES = [
    "missing file",
    "empty file",
    "bad formula",
    "unknown column",
    "unknown outcome",
    "outcome not binary",
    "two outcome terms",
    "empty formula",
    "formula without ~",
    "bad k",
    "bad n-init",
    "infinite gamma",
    "cluster without column",
    "column without cluster",
    "unknown cluster column",
    "pickle of something else",
    "not a pickle",
    "missing model",
]


def _one_error_line(stderr: str, pattern: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("plumestats: error: ")
    assert re.search(pattern, lines[0]), lines[0]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_is_one_line(case, pima_csv, tmp_path, capsys):
    # in-process for speed (an uncaught exception would fail the test); the
    # subprocess test below checks the same for a real process
    args, pattern = _bad_cases(tmp_path)[case]
    args = [str(a).replace("{pima}", str(pima_csv)) for a in args]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, pattern)


@pytest.mark.parametrize("case", ["unknown column", "not a pickle"])
def test_bad_input_in_a_real_process(case, pima_csv, tmp_path):
    args, pattern = _bad_cases(tmp_path)[case]
    done = run(*[str(a).replace("{pima}", str(pima_csv)) for a in args])
    assert done.returncode == 1
    _one_error_line(done.stderr, pattern)


@pytest.mark.parametrize("command", ["fit", "predict"])
def test_an_unreadable_file_is_one_line(
    saved_fit, tmp_path, capsys, monkeypatch, command
):
    # chmod 000 does not stop root: the read itself is made to fail
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    _, model = saved_fit
    data = tmp_path / "data.csv"
    data.write_text("y,x1\n1,0.5\n0,0.1\n")
    if command == "fit":
        monkeypatch.setattr(pd, "read_csv", refuse)
        args = ["fit", str(data), "y ~ x1"]
    else:
        monkeypatch.setattr(Path, "read_bytes", refuse)
        args = ["predict", str(model), str(data)]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "could not read .*: Permission denied")


@pytest.mark.parametrize("suffix", [".json", ".pickle"])
def test_text_codes_that_look_like_numbers_in_the_new_data(tmp_path, capsys, suffix):
    # levels '1', '2' and 'x' at the fit; a new file with only 1 and 2 is
    # read as numbers by pandas, but the factor's levels are text
    rng = np.random.default_rng(0)
    train = pd.DataFrame(
        {
            "x1": rng.normal(size=90),
            "code": np.array(["1", "2", "x"] * 30),
            "y": rng.integers(0, 2, 90),
        }
    )
    train.to_csv(tmp_path / "train.csv", index=False)
    train.iloc[:6].query("code != 'x'").to_csv(tmp_path / "new.csv", index=False)
    model = tmp_path / f"fit{suffix}"
    args = ["fit", str(tmp_path / "train.csv"), "y ~ x1 + C(code)"]
    assert main([*args, "--k", "1", "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "new.csv")]) == 0
    predicted = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert predicted.shape == (4, 1) and predicted["predicted"].between(0, 1).all()


def test_new_data_missing_a_column(saved_fit, tmp_path, capsys):
    _, model = saved_fit
    (tmp_path / "new.csv").write_text("glucose,bmi\n120,30\n")
    assert main(["predict", str(model), str(tmp_path / "new.csv")]) == 1
    _one_error_line(capsys.readouterr().err, "column 'age' is not in .*new.csv")


def test_new_data_with_text_in_a_numeric_column(saved_fit, tmp_path, capsys):
    _, model = saved_fit
    (tmp_path / "new.csv").write_text("glucose,bmi,age\n120,30,50\n110,n/a?,40\n")
    for extra in ([], ["--intervals"]):
        assert main(["predict", str(model), str(tmp_path / "new.csv"), *extra]) == 1
        _one_error_line(
            capsys.readouterr().err,
            "column 'bmi' of .*new.csv must hold numbers, but data row 2 holds "
            "'n/a\\?'",
        )


def test_new_data_with_only_a_header(saved_fit, tmp_path, capsys):
    _, model = saved_fit
    (tmp_path / "new.csv").write_text("glucose,bmi,age\n")
    assert main(["predict", str(model), str(tmp_path / "new.csv")]) == 1
    _one_error_line(capsys.readouterr().err, "new.csv has no rows to predict at")


def test_predict_alpha_needs_intervals(saved_fit, pima, tmp_path, capsys):
    """--alpha without --intervals would be ignored: it is an error instead."""
    _, model = saved_fit
    pima.iloc[:3].to_csv(tmp_path / "new.csv", index=False)
    args = ["predict", str(model), str(tmp_path / "new.csv"), "--alpha", "0.1"]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "--alpha .* add --intervals")


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"plumestats {plumestats.__version__}"
    with pytest.raises(SystemExit) as info:
        main(["fit", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    options = (
        "--k",
        "--gamma",
        "--alpha",
        "--inside",
        "--mstep",
        "--n-init",
        "--reseat",
    )
    for option in options:
        assert option in text
    assert "examples:" in text and "plumestats predict" in text


def test_console_script_is_installed():
    scripts = entry_points(group="console_scripts", name="plumestats")
    assert [ep.value for ep in scripts] == ["plumestats.cli:main"]
    exe = shutil.which("plumestats")
    if exe is None:
        pytest.skip("the console script is not on PATH in this environment")
    done = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert done.stdout.strip() == f"plumestats {plumestats.__version__}"


def test_predict_into_a_closed_pipe_ends_quietly(saved_fit, pima, tmp_path):
    # `plumestats predict ... | head -1`: the reader stops early. The output
    # (about 250 kB) outgrows the pipe's buffer, so the write meets the closed
    # end; that ended in a BrokenPipeError traceback.
    _, path = saved_fit
    many = tmp_path / "many.csv"
    pd.concat([pima] * 12, ignore_index=True).to_csv(many, index=False)
    command = [sys.executable, "-m", "plumestats", "predict", str(path), str(many)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout.readline().strip() == ",predicted"
        process.stdout.close()
        stderr = process.stderr.read()
        status = process.wait(timeout=120)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert status == 1


def test_predict_with_text_inside_a_numeric_expression(tmp_path):
    # c holds text rightly in I((c == 'u') * 1.0); predict refused it as a
    # numeric column holding text
    data, _ = simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    data["c"] = np.where(data["x1"] > 0, "u", "v")
    csv, model = tmp_path / "train.csv", tmp_path / "fit.pickle"
    data.to_csv(csv, index=False)
    formula = "y ~ x1 + x2 + I((c == 'u') * 1.0)"
    assert run("fit", csv, formula, "--output", model).returncode == 0
    done = run("predict", model, csv)
    assert done.returncode == 0, done.stderr
    expected = plume(formula, data, k=2).fit().predict(data)
    got = pd.read_csv(io.StringIO(done.stdout), index_col=0)["predicted"]
    np.testing.assert_allclose(got.to_numpy(), np.asarray(expected), rtol=1e-6)


@pytest.mark.parametrize("module", ["np", "numpy"])
def test_predict_reads_the_pickle_fit_wrote_whatever_numpy_is_called(tmp_path, module):
    # the command's formulas may read numpy as numpy; statsmodels evaluates
    # the formula again when it unpickles the fit, and found only np
    data, _ = simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    data["x3"] = np.exp(data["x2"])
    csv, model = tmp_path / "train.csv", tmp_path / "fit.pickle"
    data.to_csv(csv, index=False)
    formula = f"y ~ x1 + {module}.log(x3)"
    assert run("fit", csv, formula, "--output", model).returncode == 0
    done = run("predict", model, csv)
    assert done.returncode == 0, done.stderr
    expected = plume("y ~ x1 + np.log(x3)", data, k=2).fit().predict(data)
    got = pd.read_csv(io.StringIO(done.stdout), index_col=0)["predicted"]
    np.testing.assert_allclose(got.to_numpy(), np.asarray(expected), rtol=1e-6)


# ------------------------------------------- output files (issue 27)
@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    """A small training file: fits in well under a second."""
    data, _ = simulate_polyhedron(300, d=2, k=2, noise=0.05, random_state=0)
    path = tmp_path_factory.mktemp("small") / "train.csv"
    data.to_csv(path, index=False)
    return path


SMALL = "y ~ x1 + x2"


def _digest(path) -> bytes:
    return hashlib.sha256(Path(path).read_bytes()).digest()


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(".part"))


def test_fit_never_writes_over_its_training_data(small_csv, tmp_path):
    # the case: --output train.csv replaced the data with a pickle
    train = tmp_path / "train.csv"
    shutil.copy(small_csv, train)
    before = _digest(train)
    done = run("fit", train, SMALL, "--output", train, "--force")
    assert done.returncode == 1
    _one_error_line(done.stderr, "--output .*train.csv is DATA.csv .*an input")
    assert _digest(train) == before


def test_predict_never_writes_over_its_model(small_csv, tmp_path):
    model = tmp_path / "fit.pickle"
    assert run("fit", small_csv, SMALL, "--output", model).returncode == 0
    before = _digest(model)
    for output in (model, small_csv):
        done = run("predict", model, small_csv, "--output", output, "--force")
        assert done.returncode == 1
        _one_error_line(done.stderr, "is (MODEL|NEW.csv) .*an input of this command")
    assert _digest(model) == before


def test_links_to_an_input_are_the_input(small_csv, tmp_path, capsys):
    train = tmp_path / "train.csv"
    shutil.copy(small_csv, train)
    before = _digest(train)
    (tmp_path / "link.csv").symlink_to(train)
    os.link(train, tmp_path / "hard.csv")
    for name in ("link.csv", "hard.csv"):
        args = ["fit", str(train), SMALL, "--output", str(tmp_path / name)]
        assert main([*args, "--force"]) == 1
        _one_error_line(capsys.readouterr().err, "is DATA.csv .*an input")
    assert _digest(train) == before


def test_a_symbolic_link_as_output_is_refused(small_csv, tmp_path, capsys):
    # a link pointing elsewhere is not written through (nor replaced)
    (tmp_path / "out.pickle").symlink_to(tmp_path / "elsewhere.pickle")
    args = ["fit", str(small_csv), SMALL, "--output", str(tmp_path / "out.pickle")]
    assert main([*args, "--force"]) == 1
    _one_error_line(capsys.readouterr().err, "is a symbolic link .*elsewhere.pickle")
    assert not (tmp_path / "elsewhere.pickle").exists()
    assert (tmp_path / "out.pickle").is_symlink()


def test_an_existing_output_needs_force(small_csv, tmp_path, capsys):
    out = tmp_path / "preds.csv"
    out.write_text("keep me\n")
    model = tmp_path / "fit.json"
    assert main(["fit", str(small_csv), SMALL, "--output", str(model)]) == 0
    capsys.readouterr()
    args = ["predict", str(model), str(small_csv), "--output", str(out)]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "preds.csv exists; add --force")
    assert out.read_text() == "keep me\n"
    assert main([*args, "--force"]) == 0
    assert out.read_text().startswith(",predicted\n")
    assert _leftovers(tmp_path) == []
    # the replaced file keeps its permissions
    out.chmod(0o640)
    assert main([*args, "--force"]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize(
    ("where", "pattern"),
    [
        ("nope/fit.pickle", "the folder .*nope does not exist; create it first"),
        ("folder", "--output .*folder is a folder; give a file name in it"),
        ("folder/", "--output .*folder/ is a folder"),
        ("train.txt/fit.pickle", "the folder .*train.txt is not a folder"),
        # a missing folder with a slash is no folder to give a file name in
        ("nope/", "--output .*nope/: the folder .*nope does not exist"),
        ("train.txt/", "the folder .*train.txt is not a folder; give a file name$"),
    ],
)
def test_bad_output_folders_are_one_line(where, pattern, small_csv, tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "train.txt").write_text("")
    done = run("fit", small_csv, SMALL, "--output", f"{tmp_path}/{where}")
    assert done.returncode == 1
    _one_error_line(done.stderr, pattern)


def test_an_empty_output_is_refused(small_csv, capsys):
    # an unset shell variable (--output "$OUT") must not pass silently
    assert main(["fit", str(small_csv), SMALL, "--output", ""]) == 1
    _one_error_line(capsys.readouterr().err, "--output is empty; give a file name")


def test_bad_outputs_are_refused_before_the_fit(
    small_csv, tmp_path, capsys, monkeypatch
):
    # no fit is lost to a bad path: the check comes first
    from plumestats import model as model_module

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before checking --output")

    monkeypatch.setattr(model_module.PolyhedralMixtureLogit, "fit", no_fit)
    args = ["fit", str(small_csv), SMALL, "--output", str(tmp_path / "no/fit.json")]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "does not exist")


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(
    small_csv, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "fit.pickle"
    out.write_bytes(b"the previous fit")

    def half_then_interrupt(self, fname, remove_data=False):
        Path(fname).write_bytes(b"half a pick")
        raise KeyboardInterrupt

    # the wrapper's save pickles the wrapper, as statsmodels' does
    wrapper = PolyhedralMixtureLogitResultsWrapper
    monkeypatch.setattr(wrapper, "save", half_then_interrupt)
    args = [
        "fit",
        str(small_csv),
        SMALL,
        "--output",
        str(out),
        "--force",
        "--no-progress",
    ]
    assert main(args) == 130
    assert capsys.readouterr().err == "plumestats: interrupted\n"
    assert out.read_bytes() == b"the previous fit"
    assert _leftovers(tmp_path) == []


def test_a_failed_write_leaves_no_temporary(tmp_path):
    from plumestats._cli_files import FileRefused, write_atomically

    def full_disk(path):
        Path(path).write_text("partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(FileRefused, match=r"could not write .*No space left"):
        write_atomically(str(tmp_path / "out.csv"), full_disk)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    """A real process and a real SIGINT. The data come through a named pipe,
    so the test knows when the command is running: its open() of the pipe
    returns only once the command has opened the other end, and the command
    then waits for the rows.

    The writer closes after the signal, as a terminal's Ctrl-C also stops
    the program feeding the pipe. Kept open, a SIGINT that lands while
    pandas' C parser works between two reads would wait for more rows: the
    parser's next read blocks before Python runs the handler (seen under
    load, 2 runs in 12)."""
    pipe = tmp_path / "data.csv"
    os.mkfifo(pipe)
    output = tmp_path / "fit.json"
    command = [sys.executable, "-m", "plumestats", "fit", str(pipe), SMALL]
    with subprocess.Popen(
        [*command, "--output", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        with open(pipe, "w") as writer:  # blocks until the command reads
            writer.write("y,x1,x2\n")
            writer.flush()
            process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130
    assert stderr == "plumestats: interrupted\n" and stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


def test_a_named_pipe_is_read_as_data(small_csv, tmp_path):
    # `plumestats fit <(gunzip -c data.csv.gz) ...` gives a pipe, not a file
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    pipe = tmp_path / "data.csv"
    os.mkfifo(pipe)
    command = [sys.executable, "-m", "plumestats", "fit", str(pipe), SMALL, "--json"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        with open(pipe, "w") as writer:
            writer.write(Path(small_csv).read_text())
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert json.loads(stdout)["nobs"] == 300


# -------------------------------------------------- formulas (issue 27)
def test_the_attack_is_refused_and_does_not_run(small_csv, tmp_path):
    formula = "y ~ x1 + I(__import__('os').system('touch PWNED'))"
    done = run("fit", small_csv, formula, cwd=tmp_path)
    assert done.returncode == 1
    _one_error_line(done.stderr, "is refused: .*__import__.* add --unsafe-formula")
    assert not (tmp_path / "PWNED").exists()


def test_unsafe_formula_runs_python_when_asked(small_csv, tmp_path):
    # the proof that the code runs: it leaves a file behind
    touch = "(__import__('pathlib').Path('RAN').touch() or 0)"
    formula = f"y ~ x1 + I({touch} + x2)"
    done = run("fit", small_csv, formula, "--k", "1", "--json", cwd=tmp_path)
    assert done.returncode == 1 and not (tmp_path / "RAN").exists()
    done = run(
        "fit",
        small_csv,
        formula,
        "--k",
        "1",
        "--json",
        "--unsafe-formula",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "RAN").exists()
    expected = plume(SMALL, pd.read_csv(small_csv), k=1).fit()
    np.testing.assert_allclose(json.loads(done.stdout)["llf"], expected.llf, rtol=1e-9)


def test_the_safe_grammar_takes_what_formulas_usually_hold(small_csv, tmp_path, capsys):
    data = pd.read_csv(small_csv)
    data["g"] = np.where(data["x1"] > 0, "left", "right")
    data.to_csv(tmp_path / "train.csv", index=False)
    formula = "y ~ np.log(np.abs(x1) + 1) + center(x2) + C(g, Treatment('right'))"
    assert main(["fit", str(tmp_path / "train.csv"), formula, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = plume(formula, data, k=2).fit()
    np.testing.assert_allclose(payload["llf"], expected.llf, rtol=1e-9)


def test_names_outside_numpy_are_not_the_command_lines(small_csv, capsys):
    # patsy looked names up in the CLI module's own namespace (pd, os, json...)
    args = ["fit", str(small_csv), "y ~ x1 + I(pd.Series(x2))", "--unsafe-formula"]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "column 'pd' is not in .*train.csv")


# ---------------------------------------------------- JSON files (issue 27)
def test_fit_to_json_then_predict_matches_the_pickle(small_csv, tmp_path):
    as_json, as_pickle = tmp_path / "fit.json", tmp_path / "fit.pickle"
    formula = "y ~ x1 + standardize(x2) + np.exp(x1 / 4)"
    assert run("fit", small_csv, formula, "--output", as_json).returncode == 0
    assert run("fit", small_csv, formula, "--output", as_pickle).returncode == 0
    json.loads(as_json.read_text())  # it is JSON
    new = tmp_path / "new.csv"
    pd.read_csv(small_csv).drop(columns="y").iloc[::3].to_csv(new, index=False)
    from_json = run("predict", as_json, new, "--intervals")
    from_pickle = run("predict", as_pickle, new, "--intervals")
    assert from_json.returncode == 0, from_json.stderr
    got = pd.read_csv(io.StringIO(from_json.stdout), index_col=0)
    expected = pd.read_csv(io.StringIO(from_pickle.stdout), index_col=0)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-12)
    # a JSON export is recognised by its content, whatever its name
    renamed = tmp_path / "fit.model"
    shutil.copy(as_json, renamed)
    done = run("predict", renamed, new)
    assert done.returncode == 0, done.stderr


def test_a_bad_json_model_is_one_line(small_csv, tmp_path, capsys):
    (tmp_path / "broken.json").write_text('{"format": "plumestats-results"')
    args = ["predict", str(tmp_path / "broken.json"), str(small_csv)]
    assert main(args) == 1
    _one_error_line(capsys.readouterr().err, "broken.json is not a plumestats JSON")
    model = tmp_path / "fit.json"
    assert main(["fit", str(small_csv), SMALL, "--output", str(model)]) == 0
    capsys.readouterr()
    document = json.loads(model.read_text())
    document["format_version"] = 99
    model.write_text(json.dumps(document))
    assert main(["predict", str(model), str(small_csv)]) == 1
    _one_error_line(capsys.readouterr().err, "written by a newer plumestats")


def test_json_output_needs_a_safe_formula_even_when_unsafe_is_allowed(
    small_csv, tmp_path, capsys
):
    formula = "y ~ x1 + I(abs(x2))"  # Python's abs: not in the grammar
    out = tmp_path / "fit.json"
    args = ["fit", str(small_csv), formula, "--output", str(out), "--unsafe-formula"]
    assert main(args) == 1
    _one_error_line(
        capsys.readouterr().err, "fit.json: .*calls abs.* a name not ending in .json"
    )
    assert not out.exists()


def test_fit_with_frequency_weights_from_a_column(small_csv, tmp_path, capsys):
    data = pd.read_csv(small_csv)
    data["count"] = np.arange(len(data)) % 3
    path = tmp_path / "counts.csv"
    data.to_csv(path, index=False)
    args = ["fit", str(path), SMALL, "--k", "1", "--json"]
    assert main([*args, "--freq-weights", "count"]) == 0
    payload = json.loads(capsys.readouterr().out)
    repeated = data.loc[np.repeat(data.index, data["count"])]
    expected = plume(SMALL, repeated, k=1).fit()
    assert payload["nobs"] == len(repeated)
    np.testing.assert_allclose(list(payload["params"].values()), expected.params)
    assert main([*args, "--freq-weights", "counts"]) == 1
    _one_error_line(capsys.readouterr().err, "--freq-weights column 'counts' is not")


def test_help_examples_run_on_the_shared_data(data_dir, tmp_path, capsys):
    """Each `plumestats fit` example of --help runs on the dataset it names
    (np.log(bmi) met pima's 11 zero BMIs)."""
    from plumestats._cli_parser import _EPILOG

    examples = [
        shlex.split(line.strip())[1:]
        for line in _EPILOG.splitlines()
        if line.strip().startswith("plumestats fit ")
    ]
    assert examples
    for example in examples:
        example[1] = str(data_dir / example[1])
        example = [
            tmp_path / "fit.json" if part == "fit.json" else part for part in example
        ]
        assert main([*map(str, example), "--no-progress", "--force"]) == 0, example
    capsys.readouterr()


def test_a_fit_too_large_for_memory_is_one_line_naming_the_option(
    small_csv, monkeypatch, capsys
):
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", "20K")
    assert main(["fit", str(small_csv), SMALL, "--no-progress"]) == 1
    _one_error_line(capsys.readouterr().err, r"--chunksize auto")


def test_chunksize_fits_by_blocks(small_csv, monkeypatch, capsys):
    """--chunksize reaches the fit: under a memory limit that refuses the
    fit in one block, blocks of 70 rows fit, with the same estimates."""
    assert main(["fit", str(small_csv), SMALL, "--no-progress", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    monkeypatch.setenv("PLUMESTATS_MEMORY_LIMIT", "60K")
    args = ["fit", str(small_csv), SMALL, "--no-progress", "--json"]
    assert main(args) == 1
    capsys.readouterr()
    assert main([*args, "--chunksize", "70"]) == 0
    blocks = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(blocks["llf"], whole["llf"], rtol=1e-10)


def test_index_col_may_be_a_column_the_model_reads(small_csv, tmp_path, capsys):
    model = tmp_path / "fit.json"
    assert (
        main(["fit", str(small_csv), SMALL, "--no-progress", "--output", str(model)])
        == 0
    )
    capsys.readouterr()
    new = tmp_path / "new.csv"
    pd.read_csv(small_csv).head(5).to_csv(new, index=False)
    assert main(["predict", str(model), str(new), "--index-col", "x1"]) == 0
    by_x1 = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert main(["predict", str(model), str(new)]) == 0
    plain = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    np.testing.assert_array_equal(by_x1["predicted"], plain["predicted"])
    np.testing.assert_array_equal(by_x1.index, pd.read_csv(new)["x1"])


def test_index_col_of_a_model_fitted_on_arrays_is_no_column(
    small_csv, tmp_path, capsys
):
    """A model fitted on arrays reads the new data by position: the index
    column is not one of them."""
    train = pd.read_csv(small_csv)
    design = np.column_stack([np.ones(len(train)), train[["x1", "x2"]].to_numpy()])
    res = PolyhedralMixtureLogit(train["y"].to_numpy(), design, k=2).fit()
    model = tmp_path / "arrays.pickle"
    res.save(model)
    new = pd.DataFrame(
        {"id": ["r1", "r2"], "c": 1.0, "a": [0.1, 0.5], "b": [0.2, -1.0]}
    )
    new.to_csv(tmp_path / "new.csv", index=False)
    assert (
        main(["predict", str(model), str(tmp_path / "new.csv"), "--index-col", "id"])
        == 0
    )
    got = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert list(got.index) == ["r1", "r2"]
    np.testing.assert_allclose(
        got["predicted"], res.predict(new[["c", "a", "b"]].to_numpy())
    )


def test_warnings_advise_the_commands_options(tmp_path, capsys):
    # a separable sample: the separation warning's remedy is --alpha, not
    # the Python API's fit(alpha=1e-3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 2))
    path = tmp_path / "separable.csv"
    pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": (x[:, 0] > 0).astype(int)}).to_csv(
        path, index=False
    )
    assert main(["fit", str(path), "y ~ a + b", "--k", "1"]) == 0
    warning = next(
        line for line in capsys.readouterr().err.splitlines() if "separation" in line
    )
    assert "--alpha 1e-3, or a smaller --k" in warning
    assert "fit(" not in warning


@pytest.mark.parametrize(
    ("change", "options", "pattern"),
    [
        # text among numbers: fixed in the file, counted as the file's rows
        (
            {"x1": (2, "abc")},
            [],
            r"'abc'; the first in data row 3\).*correct them in the file",
        ),
        (
            {"w": (7, np.nan)},
            ["--freq-weights", "w"],
            r"the --freq-weights column has 1 missing .*in data row 8",
        ),
        (
            {"g": (5, np.nan)},
            ["--cov-type", "cluster", "--cluster", "g"],
            r"the --cluster column 'g' has 1 missing cluster labels .*data row 6\)",
        ),
    ],
)
def test_data_errors_name_the_commands_options_and_rows(
    change, options, pattern, small_csv, tmp_path, capsys
):
    data = pd.read_csv(small_csv).assign(w=1.0, g=lambda d: np.arange(len(d)) % 5)
    data = data.astype({"x1": object})
    for column, (row, value) in change.items():
        data.loc[row, column] = value
    path = tmp_path / "edited.csv"
    data.to_csv(path, index=False)
    assert main(["fit", str(path), SMALL, *options]) == 1
    message = capsys.readouterr().err
    _one_error_line(message, pattern)
    assert "pd." not in message and "cov_kwds" not in message


def test_the_users_names_are_never_reworded(small_csv, tmp_path, capsys):
    # a column named like the library's keyword: the command's own messages,
    # which name it, are not rewritten into option names
    data = pd.read_csv(small_csv).assign(freq_weights=1.0)
    path = tmp_path / "weights.csv"
    data.to_csv(path, index=False)
    assert main(["fit", str(path), SMALL, "--freq-weights", "freq_weight"]) == 1
    _one_error_line(capsys.readouterr().err, r"did you mean 'freq_weights'\?$")
    assert main(["fit", str(path), "y ~ x1 + freq_weight"]) == 1
    _one_error_line(capsys.readouterr().err, r"did you mean 'freq_weights'\?$")
    # the library's own phrasings still read as the command's
    data.loc[:, "freq_weights"] = 0.0
    data.to_csv(path, index=False)
    assert main(["fit", str(path), SMALL, "--freq-weights", "freq_weights"]) == 1
    _one_error_line(capsys.readouterr().err, "the --freq-weights column is all zeros")


def test_maxiter_is_an_option_and_the_advice_names_it(small_csv, capsys):
    # the library's "Increase maxiter" can be followed on the command line
    assert main(["fit", str(small_csv), SMALL, "--maxiter", "2", "--reseat", "0"]) == 0
    warning = next(
        line
        for line in capsys.readouterr().err.splitlines()
        if "did not converge" in line
    )
    assert "Increase --maxiter, or add a small L2 penalty (--alpha)" in warning
    assert main(["fit", str(small_csv), SMALL, "--maxiter", "-1"]) == 1
    _one_error_line(capsys.readouterr().err, "--maxiter must be an integer >= 0")
