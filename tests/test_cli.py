"""The ``plumestats`` command line, run as a user runs it (a subprocess).

Oracles: the same fit made in-process through ``plumestats.formula.api``, and
the saved pickle loaded in-process.
"""

from __future__ import annotations

import io
import json
import pickle
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points

import numpy as np
import pandas as pd
import pytest

import plumestats
from plumestats.cli import main
from plumestats.datasets import simulate_polyhedron
from plumestats.formula.api import plume, plume_flip
from plumestats.results import PolyhedralMixtureLogitResults

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
        "bad k": (["fit", "{pima}", FORMULA, "--k", "0"], "k must be an integer"),
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
