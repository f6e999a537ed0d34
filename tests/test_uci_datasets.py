"""The UCI loaders against our clean CSVs, in every way a copy can arrive.

The original-format files are generated here from the clean CSVs by the inverse
conversion (the UCI layouts: no header, the raw outcome codes, heart's
space-separated ``70.0``-style numbers, adult's ``", "`` separators and ``?``
for missing values), so converting them back must give the identical frame.
"""

from __future__ import annotations

import shutil
import urllib.error
from pathlib import Path

import pandas as pd
import pytest

from plumestats.datasets import _uci, get_data_home, list_datasets, load
from plumestats.datasets._uci_convert import canonical_digest
from plumestats.datasets._uci_specs import SPECS

NAMES = ["ionosphere", "heart", "ilpd", "pima", "adult"]


def write_original(name: str, clean: pd.DataFrame, folder: Path) -> Path:
    """Write ``clean`` back in the layout of the UCI original file."""
    spec = SPECS[name]
    frame = clean.copy()
    y = frame.pop(spec.outcome).to_numpy()
    low, high = spec.outcome_levels
    negative = high if spec.positive == low else low
    frame[spec.outcome] = [spec.positive if v == 1 else negative for v in y]
    path = folder / spec.original
    if name == "ionosphere":
        # the original writes five decimals ("0.03760", "1.00000" for a09)
        features = frame.columns[2:-1]
        frame[features] = frame[features].astype(float)
        frame.to_csv(path, header=False, index=False, float_format="%.5f")
    elif name == "heart":
        features = frame.columns[:-1]
        frame[features] = frame[features].astype(float)
        frame.to_csv(path, sep=" ", header=False, index=False, float_format="%.1f")
    elif name == "adult":
        lines = [", ".join(map(str, row)) for row in frame.itertuples(index=False)]
        # a row with a missing value, which the conversion must drop
        missing = lines[0].split(", ")
        missing[1] = "?"
        lines.insert(3, ", ".join(missing))
        path.write_text("\n".join(lines) + "\n\n")
    else:
        frame.to_csv(path, header=False, index=False)
    return path


@pytest.fixture(scope="module")
def originals(data_dir, tmp_path_factory) -> Path:
    """A folder with all five datasets in their UCI original layout."""
    folder = tmp_path_factory.mktemp("uci_originals")
    for name in NAMES:
        write_original(name, pd.read_csv(data_dir / f"{name}.csv"), folder)
    return folder


@pytest.mark.parametrize("name", NAMES)
def test_clean_copy_is_read_as_is(name, data_dir):
    expected = pd.read_csv(data_dir / f"{name}.csv")
    pd.testing.assert_frame_equal(load(name, data_home=data_dir), expected)


@pytest.mark.parametrize("name", NAMES)
def test_original_converts_to_the_clean_frame(name, data_dir, originals, tmp_path):
    shutil.copy(originals / SPECS[name].original, tmp_path)
    expected = pd.read_csv(data_dir / f"{name}.csv")
    pd.testing.assert_frame_equal(load(name, data_home=tmp_path), expected)


def test_header_row_in_original_is_skipped(data_dir, tmp_path):
    # some mirrors of the ILPD file carry a header row
    clean = pd.read_csv(data_dir / "ilpd.csv")
    path = write_original("ilpd", clean, tmp_path)
    path.write_text(
        "Age,Gender,TB,DB,Alkphos,Sgpt,Sgot,TP,ALB,A/G Ratio,Selector\n"
        + path.read_text()
    )
    pd.testing.assert_frame_equal(load("ilpd", data_home=tmp_path), clean)


def test_byte_order_mark_and_trailing_spaces_are_read_through(data_dir, tmp_path):
    """A byte-order mark made the first row look like a header (one row
    lost); a text field's trailing space failed the digest unexplained."""
    clean = pd.read_csv(data_dir / "pima.csv")
    (tmp_path / "bom").mkdir()
    (tmp_path / "spaces").mkdir()
    path = write_original("pima", clean, tmp_path / "bom")
    path.write_text("\ufeff" + path.read_text(), encoding="utf-8")
    pd.testing.assert_frame_equal(load("pima", data_home=tmp_path / "bom"), clean)
    clean = pd.read_csv(data_dir / "adult.csv")
    path = write_original("adult", clean, tmp_path / "spaces")
    path.write_text(path.read_text().replace(", Male,", ", Male ,"))
    pd.testing.assert_frame_equal(load("adult", data_home=tmp_path / "spaces"), clean)


@pytest.mark.parametrize(
    "content", ["", "a,b\n1,2\n1,2,3\n", b"\xff\xfe\x00".decode("latin-1")]
)
def test_an_unreadable_clean_copy_is_named(tmp_path, content):
    (tmp_path / "pima.csv").write_text(content, encoding="latin-1")
    with pytest.raises(ValueError, match=r"pima\.csv is not a readable clean copy"):
        load("pima", data_home=tmp_path)


def test_data_home_pointing_at_a_file_says_so(data_dir):
    with pytest.raises(ValueError, match="data_home must be a folder"):
        load("pima", data_home=data_dir / "pima.csv")


@pytest.mark.parametrize("name", NAMES)
def test_expected_digest_is_that_of_the_clean_file(name, data_dir):
    frame = pd.read_csv(data_dir / f"{name}.csv")
    assert canonical_digest(frame) == SPECS[name].sha256
    assert canonical_digest(frame.iloc[::-1]) == SPECS[name].sha256  # order-free


def test_altered_value_fails_the_digest(originals, tmp_path):
    text = (originals / "pima-indians-diabetes.data").read_text().splitlines()
    text[0] = text[0].replace("148", "149", 1)
    (tmp_path / "pima-indians-diabetes.data").write_text("\n".join(text) + "\n")
    with pytest.raises(ValueError, match=r"SHA-256.*remove"):
        load("pima", data_home=tmp_path)


def test_missing_row_fails_the_counts(originals, tmp_path):
    lines = (originals / "heart.dat").read_text().splitlines()
    (tmp_path / "heart.dat").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(ValueError, match=r"269 rows .* expected 270"):
        load("heart", data_home=tmp_path)


def test_unknown_outcome_code_is_named(originals, tmp_path):
    text = (originals / "ionosphere.data").read_text()
    (tmp_path / "ionosphere.data").write_text(text.replace(",g\n", ",x\n", 1))
    with pytest.raises(ValueError, match=r"one of \['g', 'b'\], found \['x'\]"):
        load("ionosphere", data_home=tmp_path)


def test_wrong_file_layout_is_named(tmp_path):
    (tmp_path / "pima-indians-diabetes.data").write_text("1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match=r"3 fields per line.* has 9"):
        load("pima", data_home=tmp_path)


def test_download_goes_to_the_cache_once(originals, data_dir, tmp_path, monkeypatch):
    calls = []

    def fake_fetch(url, destination):
        calls.append(url)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(originals / Path(destination).name, destination)

    monkeypatch.setattr(_uci, "_fetch", fake_fetch)
    cache = tmp_path / "cache"
    expected = pd.read_csv(data_dir / "heart.csv")
    for _ in range(2):
        pd.testing.assert_frame_equal(load("heart", data_home=cache), expected)
    assert calls == [SPECS["heart"].url]
    assert (cache / "heart.dat").is_file()


def test_no_network_says_which_file_goes_where(tmp_path, monkeypatch):
    def offline(url, destination):
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(_uci, "_fetch", offline)
    folder = tmp_path / "nowhere"
    with pytest.raises(OSError, match="could not download ilpd") as info:
        load("ilpd", data_home=folder)
    message = str(info.value)
    assert str(folder) in message
    assert "'Indian Liver Patient Dataset (ILPD).csv'" in message
    assert "'ilpd.csv'" in message
    assert "Name or service not known" in message


def test_no_download_when_told_not_to(tmp_path, monkeypatch):
    monkeypatch.setattr(_uci, "_fetch", pytest.fail)
    with pytest.raises(FileNotFoundError, match=r"no copy of adult in .*adult\.data"):
        load("adult", data_home=tmp_path, download_if_missing=False)


def test_data_home_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("PLUMESTATS_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_home() == tmp_path / "xdg" / "plumestats"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert get_data_home() == Path.home() / ".cache" / "plumestats"
    monkeypatch.setenv("PLUMESTATS_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"


def test_environment_variable_is_read(data_dir, monkeypatch):
    monkeypatch.setenv("PLUMESTATS_DATA", str(data_dir))
    assert load("pima").shape == (768, 9)


def test_dataset_bunch(data_dir):
    bunch = load("pima", data_home=data_dir, as_frame=False)
    frame = pd.read_csv(data_dir / "pima.csv")
    pd.testing.assert_series_equal(bunch.endog, frame["diabetes"])
    pd.testing.assert_frame_equal(bunch.exog, frame.drop(columns="diabetes"))
    assert bunch.endog_name == "diabetes"
    assert bunch.names == list(frame.columns)


def test_unknown_name_lists_the_choices():
    with pytest.raises(ValueError, match=r"unknown dataset 'iris'.*'pima'"):
        load("iris")


def test_list_datasets_describes_the_five():
    described = list_datasets()
    assert list(described) == NAMES
    for name, line in described.items():
        assert str(SPECS[name].nrows) in line and "\n" not in line


def test_real_fetch_writes_the_whole_file_or_nothing(originals, tmp_path):
    # urllib's file:// scheme runs the real download code without a network
    source = originals / "heart.dat"
    destination = tmp_path / "cache" / "heart.dat"
    _uci._fetch(source.as_uri(), destination)
    assert destination.read_bytes() == source.read_bytes()
    with pytest.raises(urllib.error.URLError):
        _uci._fetch((tmp_path / "absent.dat").as_uri(), tmp_path / "cache" / "x.dat")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["heart.dat"]
