"""The PLUME paper's five UCI datasets: find a local copy, or download it once.

``load(name)`` looks in one folder (``data_home``, else ``$PLUMESTATS_DATA``,
else ``$XDG_CACHE_HOME/plumestats`` or ``~/.cache/plumestats``) for our clean
CSV ``<name>.csv`` or the UCI original file, and otherwise downloads the
original there. Whatever the source, the frame is checked against the row
count, outcome count and digest of our clean file before it is returned.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
from statsmodels.datasets.utils import Dataset

from ._uci_convert import convert_original, verify
from ._uci_specs import DATASETS, SPECS, UCISpec

__all__ = ["DATASETS", "get_data_home", "list_datasets", "load"]

_TIMEOUT = 60  # seconds; the largest file (adult.data) is about 4 MB


def list_datasets() -> dict[str, str]:
    """The datasets :func:`~plumestats.api.load_dataset` knows, as
    ``{name: one-line description}``.

    Returns
    -------
    dict
        ionosphere, heart, ilpd, pima and adult, the datasets of the PLUME
        paper's Table 1.
    """
    return dict(DATASETS)


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The folder that :func:`~plumestats.api.load_dataset` reads and downloads into.

    Parameters
    ----------
    data_home : str or path-like, optional
        Use this folder. Without it: the environment variable
        ``PLUMESTATS_DATA``; else ``$XDG_CACHE_HOME/plumestats``; else
        ``~/.cache/plumestats``. ``~`` is expanded. The folder is not created
        here, only when something is downloaded into it.

    Returns
    -------
    Path
    """
    if data_home is None:
        data_home = os.environ.get("PLUMESTATS_DATA") or None
    if data_home is None:
        cache = os.environ.get("XDG_CACHE_HOME") or Path("~") / ".cache"
        data_home = Path(cache) / "plumestats"
    return Path(data_home).expanduser()


def _fetch(url: str, destination: Path) -> None:
    """Download ``url`` to ``destination`` (atomically: no half-written file)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=destination.parent, suffix=".part")
    try:
        with (
            os.fdopen(handle, "wb") as out,
            urllib.request.urlopen(url, timeout=_TIMEOUT) as response,
        ):
            shutil.copyfileobj(response, out)
        os.replace(partial, destination)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _where_to_put(spec: UCISpec, folder: Path) -> str:
    return (
        f"put the UCI file {spec.original!r} (from {spec.url}) or our clean "
        f"{spec.clean!r} in {folder}, or pass data_home= (or set PLUMESTATS_DATA) "
        "to a folder that holds one"
    )


def _download(spec: UCISpec, folder: Path) -> Path:
    destination = folder / spec.original
    try:
        _fetch(spec.url, destination)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OSError(
            f"could not download {spec.name} from {spec.url} ({reason}); "
            f"without network access, {_where_to_put(spec, folder)}"
        ) from exc
    return destination


def _read_clean(path: Path, spec: UCISpec) -> pd.DataFrame:
    """Our clean CSV of ``spec``, or a ``ValueError`` naming the file."""
    try:
        return pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} is not a readable clean copy of {spec.name} ({exc}); remove "
            f"it, or {_where_to_put(spec, path.parent)}"
        ) from exc


def _check_name(name: str) -> UCISpec:
    if not isinstance(name, str) or name.lower() not in SPECS:
        raise ValueError(
            f"unknown dataset {name!r}; choose one of {sorted(SPECS)} "
            "(see plumestats.datasets.list_datasets())"
        )
    return SPECS[name.lower()]


def load(
    name: str,
    data_home: str | os.PathLike | None = None,
    *,
    as_frame: bool = True,
    download_if_missing: bool = True,
) -> pd.DataFrame | Dataset:
    """Load one of the PLUME paper's UCI datasets as our clean frame.

    Parameters
    ----------
    name : {"ionosphere", "heart", "ilpd", "pima", "adult"}
        The dataset (see :func:`list_datasets`).
    data_home : str or path-like, optional
        Folder with a local copy, and where a download goes (see
        ``get_data_home()`` for the default).
    as_frame : bool
        Return the DataFrame (default), or a statsmodels ``Dataset`` with
        ``data``, ``endog`` (the outcome), ``exog`` (the features),
        ``endog_name``, ``exog_name`` and ``names``, as statsmodels'
        ``load_pandas()`` does.
    download_if_missing : bool
        Download the UCI original when the folder has no copy; with False,
        raise ``FileNotFoundError`` instead.

    Returns
    -------
    DataFrame or Dataset
        The columns and dtypes of ``pd.read_csv`` of our clean ``<name>.csv``;
        the last column is the 0/1 outcome, 1 the class the paper treats as
        positive (the inside of the polyhedron).

    Raises
    ------
    ValueError
        Unknown name, or a local or downloaded file that is not the dataset
        (wrong shape, outcome counts or SHA-256 of the canonical CSV).
    FileNotFoundError
        No local copy and ``download_if_missing=False``.
    OSError
        The download failed; the message says which file to put where.

    Notes
    -----
    The folder is searched for ``<name>.csv`` first, then the original
    (``ionosphere.data``, ``heart.dat``, ``Indian Liver Patient Dataset
    (ILPD).csv``, ``pima-indians-diabetes.data``, ``adult.data``), which is
    converted. A frame converted from ``adult.data`` lists the rows in the UCI
    file's order; our ``adult.csv`` has them shuffled, which is why the digest
    is taken over sorted rows. The pima file has been withdrawn from the UCI
    archive; if its download fails, put a copy in the folder by hand.

    Examples
    --------
    >>> from plumestats.datasets import load
    >>> pima = load("pima", data_home="../shared/data")  # doctest: +SKIP
    >>> pima.shape  # doctest: +SKIP
    (768, 9)
    """
    spec = _check_name(name)
    folder = get_data_home(data_home)
    if folder.is_file():
        raise ValueError(
            f"data_home must be a folder, got the file {folder}; pass its folder, "
            f"data_home={str(folder.parent)!r}"
        )
    clean, original = folder / spec.clean, folder / spec.original
    if clean.is_file():
        source = clean
        frame = _read_clean(clean, spec)
    else:
        if not original.is_file():
            if not download_if_missing:
                raise FileNotFoundError(
                    f"no copy of {spec.name} in {folder}; "
                    f"{_where_to_put(spec, folder)}, or use download_if_missing=True"
                )
            _download(spec, folder)
        source = original
        frame = convert_original(original, spec)
    verify(frame, spec, source)
    if as_frame:
        return frame
    exog_names = list(spec.columns[:-1])
    return Dataset(
        data=frame,
        names=list(spec.columns),
        endog=frame[spec.outcome],
        exog=frame[exog_names],
        endog_name=spec.outcome,
        exog_name=exog_names,
        title=spec.name,
        description=spec.description,
    )
