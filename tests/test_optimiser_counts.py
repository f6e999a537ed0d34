"""Iteration counts of statsmodels' optimisers run directly on the likelihood
(``fit(method=...)``): the optimiser's own count, checked against scipy."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import unwrapped
from scipy import optimize
from statsmodels.base.model import LikelihoodModel
from statsmodels.tools.sm_exceptions import ConvergenceWarning

import plumestats.api as ps


@pytest.fixture(scope="module")
def model_and_start():
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.05, random_state=4)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    em = model.fit()
    # a start off the maximum, the same for statsmodels and scipy
    return model, em.params.to_numpy() * 0.8


@pytest.mark.parametrize(
    ("method", "scipy_method", "norm"),
    [("bfgs", "BFGS", np.inf), ("cg", "CG", np.inf)],
)
def test_iterations_equal_scipy_nit(model_and_start, method, scipy_method, norm):
    """statsmodels reports only fcalls/gcalls for these; the count must be the
    iterations scipy's own minimize reports on the same objective."""
    model, start = model_and_start
    res = model.fit(method=method, start_params=start, maxiter=500)
    nobs = model.nobs
    # statsmodels' objective and gradient: minus the mean log-likelihood
    reference = optimize.minimize(
        lambda p: -model.loglike(p) / nobs,
        start,
        jac=lambda p: -model.score(p) / nobs,
        method=scipy_method,
        options={"gtol": 1e-5, "norm": norm, "maxiter": 500},
    )
    assert res.converged and reference.success
    assert res.mle_retvals["iterations"] == reference.nit > 0
    assert res.n_iter == reference.nit
    # statsmodels' own counts are kept as well
    assert res.mle_retvals["fcalls"] == reference.nfev
    shown = re.search(r"Iterations:\s+(\d+)", unwrapped(res.summary()))
    assert shown is not None and int(shown.group(1)) == reference.nit


@pytest.mark.parametrize("method", ["newton", "lbfgs"])
def test_statsmodels_own_count_is_kept(model_and_start, method):
    model, start = model_and_start
    res = model.fit(method=method, start_params=start)
    # the same optimiser through statsmodels' own fit, from the same start
    reference = LikelihoodModel.fit(
        model, start_params=start, method=method, disp=0, skip_hessian=True
    )
    assert res.mle_retvals["iterations"] == reference.mle_retvals["iterations"] > 0


def test_convergence_warning_counts_the_iterations():
    # noisy labels: no point is fitted with certainty, so an unfinished fit is
    # reported as unconverged, not as separated
    data, _ = ps.simulate_polyhedron(800, d=2, k=2, noise=0.2, random_state=4)
    model = ps.plume("y ~ x1 + x2", data, k=2)
    start = model.fit().params.to_numpy() * 0.8
    # statsmodels warns too ("Maximum Likelihood optimization failed ...")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        res = model.fit(method="bfgs", start_params=start, maxiter=3)
    ours = [str(w.message) for w in caught if "The fit did not" in str(w.message)]
    assert len(ours) == 1 and "did not converge after 3 iterations" in ours[0]
    assert res.mle_retvals["iterations"] == 3
