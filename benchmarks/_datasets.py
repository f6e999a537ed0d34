"""The five UCI datasets of the paper's Table 1, read by path, with their formulas.

Shared by the benchmark scripts. Never copy the data into the project: they are read
from ``--data-dir`` (default ``../shared/data`` beside the project root).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"

_OUTCOMES = {
    "ionosphere": "good",
    "heart": "disease",
    "ilpd": "liver_patient",
    "pima": "diabetes",
    "adult": "high_income",
}
# columns a model cannot use: a02 is constant on ionosphere; adult's education_num
# is an exact function of education
_DROP = {"ionosphere": ["a02"], "adult": ["education_num"]}
_CATEGORICAL = {
    "heart": ["chest_pain_type", "rest_elec_card_graph", "peak_exercise_slope", "thal"],
}

DATASETS = tuple(_OUTCOMES)


def load(name: str, data_dir: Path = DEFAULT_DATA_DIR) -> tuple[pd.DataFrame, str]:
    """The data frame and a formula for ``name`` (string columns one-hot via C())."""
    path = Path(data_dir) / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: pass --data-dir pointing at the folder with the "
            "UCI CSVs (../shared/data beside the project root)"
        )
    frame = pd.read_csv(path)
    outcome = _OUTCOMES[name]
    terms = []
    for column in frame.columns:
        if column == outcome or column in _DROP.get(name, []):
            continue
        categorical = column in _CATEGORICAL.get(
            name, []
        ) or not pd.api.types.is_numeric_dtype(frame[column])
        terms.append(f"C({column})" if categorical else column)
    return frame, f"{outcome} ~ " + " + ".join(terms)
