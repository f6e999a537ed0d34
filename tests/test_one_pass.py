"""The results read the data at most once after the final fit (issue 28).

A counting row source records every pass over the rows: the engine's passes
(:meth:`Problem._pass`, in memory or by blocks) and the model's own
per-row evaluations (``loglike``, ``score``, ``hessian``, ``predict`` on the
training rows). After the fit hands its estimate to the results builder, one
pass gives llf, the information, the robust meat, the gate mass, the Gram
matrix and the confusion matrix; reading the usual results afterwards reads
nothing more.
"""

from __future__ import annotations

import numpy as np
import pytest

import plumestats.api as ps
from plumestats import _fit, _problem
from plumestats import model as model_module


@pytest.fixture
def passes(monkeypatch):
    """A list that grows by one entry per pass over the rows, and the index
    at which the results builder started."""
    record = {"passes": [], "built_at": None}

    def counting(original, label):
        def wrapped(*args, **kwargs):
            record["passes"].append(label)
            return original(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(
        _problem.Problem, "_pass", counting(_problem.Problem._pass, "engine")
    )
    for name in ("_user_rows", "_user_sums"):
        original = getattr(model_module.PolyhedralMixtureLogit, name)
        monkeypatch.setattr(
            model_module.PolyhedralMixtureLogit, name, counting(original, name)
        )
    build = _fit.build_results

    def marking(*args, **kwargs):
        record["built_at"] = len(record["passes"])
        return build(*args, **kwargs)

    monkeypatch.setattr(_fit, "build_results", marking)
    return record


def _touch_results(res) -> None:
    """What a user reads after a fit: none of it should read the rows again."""
    res.summary()
    res.pred_table()
    for name in ("llf", "llnull", "llr", "llr_pvalue", "prsquared", "aic", "bic"):
        np.asarray(getattr(res, name))
    read = (res.bse, res.tvalues, res.pvalues, res.conf_int(), res.cov_params())
    assert all(item is not None for item in read)
    assert res.diagnostics.condition_number > 0


@pytest.mark.parametrize(
    "make",
    [ps.PolyhedralMixtureLogit, ps.HardPolyhedralLogit, ps.LabelFlipPolyhedralLogit],
)
@pytest.mark.parametrize("chunksize", [None, 200])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0"])
def test_results_read_the_data_at_most_once(passes, make, chunksize, cov_type):
    data, _ = ps.simulate_polyhedron(900, d=2, k=2, noise=0.05, random_state=2)
    exog = data[["x1", "x2"]].assign(const=1.0)
    res = make(data["y"], exog, k=2).fit(
        chunksize=chunksize, cov_type=cov_type, alpha=1e-3
    )
    assert passes["built_at"] is not None, "the results builder was not reached"
    _touch_results(res)
    after = passes["passes"][passes["built_at"] :]
    assert len(after) <= 1, after
    assert after == ["engine"]  # the one pass is the builder's
