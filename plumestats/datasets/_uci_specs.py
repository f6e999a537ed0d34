"""What each of the paper's five UCI datasets is: files, columns, outcome, checks.

The expected digests are those of the canonical CSV (see
:func:`plumestats.datasets._uci_convert.canonical_digest`) of the clean files in
the project's shared data folder; they were computed, and can be recomputed, with::

    python -c "import pandas as pd; from plumestats.datasets._uci_convert import \\
    canonical_digest as d; [print(n, d(pd.read_csv(f'../shared/data/{n}.csv')))
    for n in ('ionosphere', 'heart', 'ilpd', 'pima', 'adult')]"

A file converted from the UCI original must give the same digest, which proves
that it holds exactly the rows of our clean frame.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DATASETS", "SPECS", "UCISpec"]

_ARCHIVE = "https://archive.ics.uci.edu/ml/machine-learning-databases"


@dataclass(frozen=True)
class UCISpec:
    """One dataset: where the original lives and what its clean frame is."""

    name: str
    description: str
    original: str  # file name of the UCI original
    url: str
    sep: str
    columns: tuple[str, ...]  # clean names; the outcome is last
    not_int: tuple[str, ...]  # float or string columns; the others are integers
    outcome_levels: tuple  # the two raw codes of the outcome
    positive: object  # the raw code that becomes outcome 1
    dropna: bool  # drop rows with a missing value (adult's "?")
    nrows: int
    npositive: int
    sha256: str

    @property
    def outcome(self) -> str:
        return self.columns[-1]

    @property
    def clean(self) -> str:
        return f"{self.name}.csv"

    @property
    def int_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.not_int)


def _names(words: str) -> tuple[str, ...]:
    return tuple(words.split())


_IONOSPHERE_FEATURES = tuple(f"a{j:02d}" for j in range(1, 35))

SPECS: dict[str, UCISpec] = {
    spec.name: spec
    for spec in (
        UCISpec(
            name="ionosphere",
            description="Radar returns from the ionosphere; 1 = good return "
            "(351 rows, 34 numeric features)",
            original="ionosphere.data",
            url=f"{_ARCHIVE}/ionosphere/ionosphere.data",
            sep=",",
            columns=(*_IONOSPHERE_FEATURES, "good"),
            not_int=_IONOSPHERE_FEATURES[2:],
            outcome_levels=("g", "b"),
            positive="g",
            dropna=False,
            nrows=351,
            npositive=225,
            sha256="7b2fe11b23189a759a963aeacbe6555725087908e741d50eb44963003b96cd7a",
        ),
        UCISpec(
            name="heart",
            description="Statlog heart disease; 1 = disease present "
            "(270 rows, 13 features, 4 of them category codes)",
            original="heart.dat",
            url=f"{_ARCHIVE}/statlog/heart/heart.dat",
            sep=r"\s+",
            columns=_names(
                "age sex chest_pain_type rest_blood_pr serum_chol fast_blood_sugar "
                "rest_elec_card_graph max_heart_rate angina oldpeak "
                "peak_exercise_slope major_vessels thal disease"
            ),
            not_int=("oldpeak",),
            outcome_levels=(1, 2),
            positive=2,
            dropna=False,
            nrows=270,
            npositive=120,
            sha256="f20e39770f2921ddd6d69bedf712a5a6f4ce8dac08bff29859f7244baa73f891",
        ),
        UCISpec(
            name="ilpd",
            description="Indian liver patients; 1 = liver patient "
            "(583 rows, 10 features, gender a string, 4 missing ag_ratio)",
            original="Indian Liver Patient Dataset (ILPD).csv",
            url=f"{_ARCHIVE}/00225/Indian%20Liver%20Patient%20Dataset%20(ILPD).csv",
            sep=",",
            columns=_names(
                "age gender total_bilirubin direct_bilirubin alkaline_phosphatase "
                "alt ast total_protein albumin ag_ratio liver_patient"
            ),
            not_int=_names(
                "gender total_bilirubin direct_bilirubin total_protein albumin ag_ratio"
            ),
            outcome_levels=(1, 2),
            positive=1,
            dropna=False,
            nrows=583,
            npositive=416,
            sha256="16aa9a710656ed039f2f9df390cb240f35e3972f4e183d5626cda65fa76996e8",
        ),
        UCISpec(
            name="pima",
            description="Pima Indians diabetes; 1 = diabetes "
            "(768 rows, 8 numeric features, zeros mean not measured)",
            original="pima-indians-diabetes.data",
            url=f"{_ARCHIVE}/pima-indians-diabetes/pima-indians-diabetes.data",
            sep=",",
            columns=_names(
                "pregnancies glucose blood_pressure skin_thickness insulin bmi "
                "pedigree age diabetes"
            ),
            not_int=("bmi", "pedigree"),
            outcome_levels=(0, 1),
            positive=1,
            dropna=False,
            nrows=768,
            npositive=268,
            sha256="81ce62c5caf0c2ef9d20900c7c2bdba6100fe21468a834639a1c007af0f70441",
        ),
        UCISpec(
            name="adult",
            description="Census income (adult.data, rows with missing values "
            "removed); 1 = income > 50K (30162 rows, 14 features, 8 strings)",
            original="adult.data",
            url=f"{_ARCHIVE}/adult/adult.data",
            sep=",",
            columns=_names(
                "age workclass fnlwgt education education_num marital_status "
                "occupation relationship race sex capital_gain capital_loss "
                "hours_per_week native_country high_income"
            ),
            not_int=_names(
                "workclass education marital_status occupation relationship race sex "
                "native_country"
            ),
            outcome_levels=("<=50K", ">50K"),
            positive=">50K",
            dropna=True,
            nrows=30162,
            npositive=7508,
            sha256="7fee9e625977dbb244a10914d12125670d9fe89bc4a05b12825e2f055cebab43",
        ),
    )
}

#: One line per dataset, as ``{name: description}``.
DATASETS: dict[str, str] = {name: spec.description for name, spec in SPECS.items()}
