"""The parametric-bootstrap likelihood-ratio test of K against more faces,
``compare_lr_test(..., method="bootstrap")``.

Its size is measured by ``python -m benchmarks.lr_bootstrap``; here: the
statistic and the chi-square p-value are those of ``method="chi2"``, a draw
is what the documented procedure gives when done by hand (outcomes from the
restricted fit, both models refitted with the original fits' restart
policy), the p-value is the documented rank, the draws do not depend on
``n_jobs``, and a triangle rejects one face at the smallest p-value possible.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from conftest import logistic_data

import plumestats.api as ps


@pytest.fixture(scope="module")
def half_space():
    data = logistic_data(300, d=2, seed=5)
    small = ps.plume("y ~ x1 + x2", data, k=1).fit()
    large = ps.plume("y ~ x1 + x2", data, k=2).fit(n_init=2, init="mixed")
    return data, small, large


def test_bootstrap_p_value_is_the_rank_of_the_statistic(half_space):
    _, small, large = half_space
    chi2 = ps.compare_lr_test(small, large)
    boot = ps.compare_lr_test(small, large, method="bootstrap", n_boot=19)
    assert boot[:3] == tuple(chi2)
    assert boot.n_boot == 19 and boot.statistics.size + boot.n_failed == 19
    assert np.all(boot.statistics >= 0)
    exceed = np.sum(boot.statistics >= boot.statistic)
    assert boot.bootstrap_pvalue == (1 + exceed) / (1 + boot.statistics.size)


def test_a_draw_is_the_documented_procedure_by_hand(half_space):
    data, small, large = half_space
    boot = ps.compare_lr_test(
        small, large, method="bootstrap", n_boot=1, random_state=3
    )
    # the draw by hand: outcomes from the restricted fit's probabilities, both
    # models refitted with the original fits' starts (K = 2: two mixed starts)
    rng = np.random.default_rng(np.random.SeedSequence(3).spawn(1)[0])
    drawn = data.assign(y=(rng.random(len(data)) < small.predict()).astype(float))
    seed = int(rng.integers(2**31 - 1))
    llf_small = ps.plume("y ~ x1 + x2", drawn, k=1).fit(random_state=seed).llf
    llf_large = (
        ps.plume("y ~ x1 + x2", drawn, k=2)
        .fit(random_state=seed, n_init=2, init="mixed")
        .llf
    )
    expected = max(0.0, 2 * (llf_large - llf_small))
    assert boot.statistics[0] == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_the_draws_do_not_depend_on_n_jobs(half_space):
    pytest.importorskip("joblib", reason="n_jobs=2 needs the parallel extra")
    _, small, large = half_space
    options = {"method": "bootstrap", "n_boot": 8, "random_state": 1}
    serial = ps.compare_lr_test(small, large, **options)
    parallel = ps.compare_lr_test(small, large, **options, n_jobs=2)
    np.testing.assert_array_equal(serial.statistics, parallel.statistics)


def test_a_triangle_rejects_one_face():
    data, _ = ps.simulate_polyhedron(300, d=2, k=3, noise=0.05, random_state=1)
    one = ps.plume("y ~ x1 + x2", data, k=1).fit()
    two = ps.plume("y ~ x1 + x2", data, k=2).fit()
    boot = ps.compare_lr_test(one, two, method="bootstrap", n_boot=9, random_state=0)
    assert boot.bootstrap_pvalue == 1 / (1 + boot.statistics.size)
    assert boot.statistic > 10 * boot.statistics.max()


def test_bootstrap_needs_two_plume_fits_on_one_design(half_space):
    data, small, large = half_space
    logit = smf.logit("y ~ x1 + x2", data).fit(disp=0)
    with pytest.raises(ValueError, match=r"restricted is a .*Logit.* fit"):
        ps.compare_lr_test(logit, large, method="bootstrap")
    other = ps.plume("y ~ x1", data, k=2).fit()
    with pytest.raises(ValueError, match="different designs"):
        ps.compare_lr_test(small, other, method="bootstrap")
    with pytest.raises(ValueError, match="method must be one of"):
        ps.compare_lr_test(small, large, method="permutation")
    with pytest.raises(ValueError, match="n_boot"):
        ps.compare_lr_test(small, large, method="bootstrap", n_boot=0)
    with pytest.raises(ValueError, match="random_state must be"):
        ps.compare_lr_test(small, large, method="bootstrap", random_state=-1)


def test_select_k_tests_up_to_the_faces_of_a_triangle():
    data, _ = ps.simulate_polyhedron(400, d=2, k=3, noise=0.05, random_state=1)
    sel = ps.select_k(
        "y ~ x1 + x2",
        data,
        ks=(1, 2, 3, 4),
        gammas=(1.0,),
        criterion="lr_bootstrap",
        n_boot=19,
        random_state=0,
    )
    assert sel.chosen == (3, 1.0) and sel.best.model.k == 3
    pvalues = sel.table.set_index("k")["lr_pvalue"]
    assert np.isnan(pvalues[1])  # nothing below K = 1 to test against
    # K = 2 and 3 each beat the K below at the smallest p-value 19 draws give,
    # K = 4 does not beat K = 3: the tests stop there
    assert pvalues[2] == pvalues[3] == 1 / 20 and pvalues[4] > 0.05
    # the same test by hand, on the same fits and seed (select_k's default
    # makes no re-seating moves)
    two = ps.plume("y ~ x1 + x2", data, k=2).fit(random_state=0, reseat=0)
    three = ps.plume("y ~ x1 + x2", data, k=3).fit(random_state=0, reseat=0)
    four = ps.plume("y ~ x1 + x2", data, k=4).fit(random_state=0, reseat=0)
    assert three.llf == pytest.approx(sel.table.set_index("k")["llf"][3], rel=1e-12)
    by_hand = ps.compare_lr_test(
        three, four, method="bootstrap", n_boot=19, random_state=0
    )
    assert by_hand.bootstrap_pvalue == pvalues[4]
    assert two.llf < three.llf


def _lr_selection(data, **options):
    return ps.select_k(
        "y ~ x1 + x2",
        data,
        ks=(1, 2),
        gammas=(1.0,),
        criterion="lr_bootstrap",
        n_boot=19,
        **options,
    )


def test_select_k_lr_bootstrap_is_reproducible_without_a_seed(half_space):
    # random_state=None is documented as a fixed seed; the draws once took
    # fresh entropy from it (one face is the truth: K = 2's p-value varies
    # from draws to draws)
    data = half_space[0]
    tables = [_lr_selection(data).table for _ in range(2)]
    seeded = _lr_selection(data, random_state=0).table
    for table in tables:
        pd.testing.assert_frame_equal(table, seeded)


def test_select_k_lr_bootstrap_does_not_depend_on_n_jobs_with_restarts(half_space):
    # with n_jobs > 1 the chosen fit is refitted from the worker's estimate:
    # its record of the starts must stay the worker's, which the test's
    # refits to draws repeat
    pytest.importorskip("joblib", reason="n_jobs=2 needs the parallel extra")
    options = {"n_init": 2, "random_state": 0}
    serial = _lr_selection(half_space[0], **options, n_jobs=1)
    parallel = _lr_selection(half_space[0], **options, n_jobs=2)
    pd.testing.assert_frame_equal(serial.table, parallel.table, rtol=1e-9)
    for key in ("init", "n_init", "reseat"):
        assert parallel.best.mle_settings[key] == serial.best.mle_settings[key]
    np.testing.assert_allclose(
        parallel.best.mle_retvals["restarts_llf"],
        serial.best.mle_retvals["restarts_llf"],
        rtol=1e-9,
    )


def test_select_k_lr_bootstrap_bad_options():
    data = logistic_data(200, d=2, seed=2)
    with pytest.raises(ValueError, match="label_flips=True is not supported"):
        ps.select_k(
            "y ~ x1 + x2", data, ks=(1, 2), criterion="lr_bootstrap", label_flips=True
        )
    with pytest.raises(ValueError, match="test_level"):
        ps.select_k("y ~ x1 + x2", data, ks=(1, 2), test_level=1.5)


@pytest.mark.parametrize(
    ("n_boot", "test_level", "refused"),
    [
        (19, 0.05, False),
        (18, 0.05, True),
        (9, 0.1, False),
        (8, 0.1, True),
        (99, 0.01, False),
        (98, 0.01, True),
        (199, 0.005, False),
    ],
)
def test_select_k_refuses_draws_too_few_to_reject(n_boot, test_level, refused):
    # the smallest p-value is 1 / (n_boot + 1); it must reach test_level
    data = logistic_data(60, d=1, seed=2)
    run = functools.partial(
        ps.select_k,
        "y ~ x1",
        data,
        ks=(1,),  # one candidate: no test is run, only the options checked
        criterion="lr_bootstrap",
        n_boot=n_boot,
        test_level=test_level,
    )
    if refused:
        with pytest.raises(ValueError, match=r"use n_boot >= \d+") as error:
            run()
        assert f"use n_boot >= {n_boot + 1}" in str(error.value)
    else:
        assert run().chosen[0] == 1
