"""The grid of fits whose values are pinned before the one-engine redesign.

``python tests/golden_grid.py`` fits every entry of :data:`GRID` with the code
of the day and writes params, llf, bse, df_model and predictions to
``tests/golden_fits.json`` (with the commit it ran on); ``tests/test_golden.py``
refits the grid and requires the same values to 1e-8 relative. The entries:
soft PLUME at K = 1, 2, 3 with and without a penalty, SPLA1, label-flip PLUME,
each M-step, statsmodels' optimisers, each cov_type, ``use_t``, fits in
memory, by row blocks and on Dask, on simulated data and on the shared UCI
data (pima, heart).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import plumestats.api as ps

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden_fits.json"
DATA_DIR = HERE.parents[1] / "shared" / "data"

SIM = "y ~ x1 + x2 + x3"
PIMA = (
    "diabetes ~ pregnancies + glucose + blood_pressure + skin_thickness + insulin "
    "+ bmi + pedigree + age"
)
HEART = (
    "disease ~ age + C(sex) + C(chest_pain_type) + max_heart_rate + oldpeak + C(thal)"
)


def _entry(name, data, model, k, fit=None, source="memory", formula=None, **extra):
    return {
        "name": name,
        "data": data,
        "model": model,
        "k": k,
        "fit": fit or {},
        "source": source,
        "formula": formula
        or {"sim": SIM, "noisy": SIM, "pima": PIMA, "heart": HEART}[data],
        **extra,
    }


GRID = [
    _entry("plume k1", "sim", "plume", 1),
    _entry("plume k2", "sim", "plume", 2),
    _entry("plume k2 alpha", "sim", "plume", 2, {"alpha": 1e-3}),
    _entry("plume k3", "sim", "plume", 3),
    _entry("plume k3 alpha", "sim", "plume", 3, {"alpha": 1e-3}),
    _entry("plume k2 gamma 4", "sim", "plume", 2, {"alpha": 1e-3}, gamma=4.0),
    _entry("plume k2 inside 0", "sim", "plume", 2, {"alpha": 1e-3}, inside=0),
    _entry("plume k3 n_init 3", "sim", "plume", 3, {"n_init": 3, "random_state": 2}),
    _entry(
        "plume k2 mstep gradient",
        "sim",
        "plume",
        2,
        {"mstep": "gradient", "alpha": 1e-3, "maxiter": 3000},
    ),
    _entry("plume k2 mstep bfgs", "sim", "plume", 2, {"mstep": "bfgs", "alpha": 1e-3}),
    _entry(
        "plume k2 no newton finish",
        "sim",
        "plume",
        2,
        {"newton_finish": False, "alpha": 1e-3, "maxiter": 3000},
    ),
    _entry("plume k2 method newton", "sim", "plume", 2, {"method": "newton"}),
    _entry(
        "plume k2 method bfgs", "sim", "plume", 2, {"method": "bfgs", "maxiter": 2000}
    ),
    _entry("plume k2 HC0", "sim", "plume", 2, {"cov_type": "HC0"}),
    _entry("plume k2 HC1", "sim", "plume", 2, {"cov_type": "HC1"}),
    _entry("plume k2 HC2", "sim", "plume", 2, {"cov_type": "HC2"}),
    _entry("plume k2 HC3", "sim", "plume", 2, {"cov_type": "HC3"}),
    _entry(
        "plume k2 cluster", "sim", "plume", 2, {"cov_type": "cluster", "groups": 20}
    ),
    _entry("plume k2 use_t", "sim", "plume", 2, {"use_t": True}),
    _entry(
        "plume k2 chunked",
        "sim",
        "plume",
        2,
        {"alpha": 1e-3, "chunksize": 150},
        source="chunked",
    ),
    _entry(
        "plume k2 chunked HC0",
        "sim",
        "plume",
        2,
        {"cov_type": "HC0", "chunksize": 150},
        source="chunked",
    ),
    _entry("plume k3 dask", "sim", "plume", 3, {"alpha": 1e-3}, source="dask"),
    _entry("spla1 k2", "sim", "spla1", 2, {"alpha": 1e-3}),
    _entry("spla1 k3", "sim", "spla1", 3, {"alpha": 1e-3}),
    _entry(
        "spla1 k2 chunked",
        "sim",
        "spla1",
        2,
        {"alpha": 1e-3, "chunksize": 150},
        source="chunked",
    ),
    _entry("spla1 k2 dask", "sim", "spla1", 2, {"alpha": 1e-3}, source="dask"),
    _entry("flip k2", "noisy", "flip", 2, {"alpha": 1e-4}),
    _entry("flip k2 HC0", "noisy", "flip", 2, {"alpha": 1e-4, "cov_type": "HC0"}),
    _entry("flip k2 mstep bfgs", "noisy", "flip", 2, {"alpha": 1e-4, "mstep": "bfgs"}),
    _entry("pima k1", "pima", "plume", 1),
    _entry("pima k2 alpha", "pima", "plume", 2, {"alpha": 1e-3}),
    _entry(
        "pima k2 chunked",
        "pima",
        "plume",
        2,
        {"alpha": 1e-3, "chunksize": 200},
        source="chunked",
    ),
    _entry("heart k1", "heart", "plume", 1),
    _entry("heart k2 alpha", "heart", "plume", 2, {"alpha": 1e-2}),
    _entry("heart spla1 k2", "heart", "spla1", 2, {"alpha": 1e-2}),
]


def load_data(name: str, data_dir: Path = DATA_DIR) -> pd.DataFrame:
    if name == "sim":
        data, _ = ps.simulate_polyhedron(800, d=3, k=3, noise=0.05, random_state=7)
        return data
    if name == "noisy":
        data, _ = ps.simulate_polyhedron(1500, d=2, k=2, noise=0.0, random_state=3)
        rng = np.random.default_rng(3)
        flip = rng.random(len(data)) < 0.08
        data["y"] = np.where(flip, 1 - data["y"], data["y"])
        data["x3"] = rng.standard_normal(len(data))
        return data
    return pd.read_csv(data_dir / f"{name}.csv")


def _dask_model(entry, model):
    """The same design on Dask arrays (what the formula built in memory)."""
    import dask.array as da

    make = {"plume": ps.PolyhedralMixtureLogit, "spla1": ps.HardPolyhedralLogit}[
        entry["model"]
    ]
    exog = pd.DataFrame(np.asarray(model.exog), columns=model.exog_names)
    endog = np.asarray(model.endog)
    options = {"k": entry["k"]}
    if entry["model"] == "plume":
        options["gamma"] = entry.get("gamma", 1.0)
    return make(
        da.from_array(endog, chunks=200),
        da.from_array(exog.to_numpy(), chunks=(200, exog.shape[1])),
        **options,
    )


def fit_entry(entry, data: pd.DataFrame):
    """The results of one grid entry (warnings silenced: values are what count)."""
    make = {"plume": ps.plume, "spla1": ps.spla1, "flip": ps.plume_flip}[entry["model"]]
    options = {"k": entry["k"]}
    if entry["model"] != "spla1":
        options["gamma"] = entry.get("gamma", 1.0)
    if "inside" in entry:
        options["inside"] = entry["inside"]
    fit = dict(entry["fit"])
    groups = fit.pop("groups", None)
    if groups is not None:
        fit["cov_kwds"] = {"groups": np.arange(len(data)) % groups}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(entry["formula"], data, **options)
        if entry["source"] == "dask":
            model = _dask_model(entry, model)
        return model.fit(**fit)


def values_of(res, data: pd.DataFrame) -> dict:
    """What is pinned: params, llf, bse, df_model and P(y = 1 | x) on 25 rows."""
    if res.model._row_source is not None:  # Dask: predict the same rows by design
        rows = np.asarray(res.model.exog[:25].compute())
        predicted = np.asarray(res.model.predict(np.asarray(res.params), rows))
    else:
        predicted = np.asarray(res.predict(data.iloc[:25]), dtype=float)
    return {
        "params": np.asarray(res.params, dtype=float).tolist(),
        "llf": float(res.llf),
        "bse": np.asarray(res.bse, dtype=float).tolist(),
        "df_model": float(res.df_model),
        "predict": predicted.tolist(),
    }


def record(path: Path = GOLDEN) -> None:
    from distributed import Client, LocalCluster

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=HERE,
    ).stdout.strip()
    records = {}
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        for entry in GRID:
            data = load_data(entry["data"])
            records[entry["name"]] = values_of(fit_entry(entry, data), data)
            print(f"{entry['name']}: llf {records[entry['name']]['llf']:.10g}")
    payload = {
        "made_by": "python tests/golden_grid.py",
        "commit": commit,
        "fits": records,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN)
