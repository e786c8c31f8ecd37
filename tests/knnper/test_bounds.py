"""Theorem 3.6.1 calculator (fedlab.knnper.bounds): spec §11.4 facts."""
import numpy as np
import pytest

from fedlab.knnper.bounds import (bound_intercept_slope, best_lambda, estimation_term, knn_bound_constants,
                                  knn_rate, lambda_preference_threshold, theorem_3_6_1)

ARGS = dict(L_star=0.05, disc=0.3, n=5000, p=2, d_H=10, gamma1=0.5, gamma2=0.5)


def _bound(lam, n_t, **over):
    a = {**ARGS, **over}
    return theorem_3_6_1(lam, a["L_star"], a["disc"], n_t, a["n"], a["p"], a["d_H"], a["gamma1"], a["gamma2"])


def test_constants_from_the_proof():
    c = knn_bound_constants(0.5, 0.2, 16)
    assert (c.c1, c.c2, c.c3, c.c4, c.c5) == pytest.approx((2.0, max(12 * 0.2, 6 * 0.5), 4.0, 1.0, 6 * 0.2 * 4))
    assert knn_bound_constants(1.0, 1.0, 4).c4 == pytest.approx(2.0)  # max(4/sqrt(d_H), 1)
    c2 = knn_bound_constants(0.1, 0.3, 4, delta1=2.0, delta2=3.0)
    assert (c2.c2, c2.c3, c2.c4, c2.c5) == pytest.approx((3.6, 2.0, 3.0, 6 * 0.3 * 2.0))


def test_knn_rate_is_the_1nn_rate():
    assert knn_rate(100, 2) == pytest.approx(np.sqrt(2) * 100 ** (-1 / 3))
    assert np.allclose(knn_rate(np.array([1, 8]), 1), [1.0, np.sqrt(1 / 8)])
    assert np.all(np.diff(knn_rate(np.logspace(0, 6, 20), 5)) < 0)
    with pytest.raises(ValueError, match="n_t"):
        knn_rate(0.5, 2)
    with pytest.raises(ValueError, match="p"):
        knn_rate(10, 0)


def test_estimation_term():
    assert estimation_term(1000, 10, 1.0) == pytest.approx(np.sqrt(10 / 1000) * np.sqrt(1 + np.log(100)))
    with pytest.raises(ValueError, match="n must be"):
        estimation_term(5, 10, 1.0)


def test_bound_is_affine_in_lambda():
    for n_t in (10, 1000):
        b0, b1, bh = _bound(0.0, n_t), _bound(1.0, n_t), _bound(0.5, n_t)
        assert bh == pytest.approx((b0 + b1) / 2, rel=1e-12)
        lams = np.linspace(0, 1, 11)
        assert np.allclose(np.diff(_bound(lams, n_t), 2), 0, atol=1e-12)
    b0, s = bound_intercept_slope(**{**ARGS, "n_t": 50})
    assert _bound(0.37, 50) == pytest.approx(b0 + 0.37 * s)


def test_lambda_zero_is_the_global_model_bound():
    e = np.sqrt(10 / 5000) * np.sqrt(max(4 / np.sqrt(10), 1) + np.log(5000 / 10))
    expected = 0.05 + 2 * 0.3 + 4.0 * e
    assert _bound(0.0, 20) == pytest.approx(expected)
    assert _bound(0.0, 20) == pytest.approx(_bound(0.0, 20000))
    assert _bound(0.0, 20, p=7) == pytest.approx(_bound(0.0, 20, p=2))


def test_lambda_one_is_the_knn_bound_and_decreases_in_n_t():
    c = knn_bound_constants(0.5, 0.5, 10)
    e = estimation_term(5000, 10, c.c4)
    for n_t in (3, 40, 900):
        rho = np.sqrt(2) * n_t ** (-1 / 3)
        assert _bound(1.0, n_t) == pytest.approx(2 * 0.05 + c.c2 * rho * 1.3 + c.c5 * e * rho)
    vals = _bound(1.0, np.logspace(0, 8, 30))
    assert np.all(np.diff(vals) <= 1e-12)


def test_preference_threshold_separates_the_two_regimes():
    thr = lambda_preference_threshold(**ARGS)
    assert 1 < thr < np.inf
    for n_t in (thr * 1.5, thr * 20):
        assert _bound(1.0, n_t) < _bound(0.0, n_t)
        assert best_lambda(**{**ARGS, "n_t": n_t}) == 1.0
    for n_t in (thr / 1.5, max(1.0, thr / 20)):
        assert _bound(1.0, n_t) > _bound(0.0, n_t)
        assert best_lambda(**{**ARGS, "n_t": n_t}) == 0.0
    assert np.array_equal(best_lambda(**{**ARGS, "n_t": np.array([thr / 2, thr * 2])}), [0.0, 1.0])


def test_threshold_is_vacuous_in_high_dimension_or_without_heterogeneity():
    assert lambda_preference_threshold(**{**ARGS, "p": 1280}) == np.inf  # curse of dimensionality
    iid = {**ARGS, "disc": 0.0, "L_star": 0.5}
    assert lambda_preference_threshold(**iid) == np.inf  # r* <= 0: the global model always wins


def test_bound_bad_inputs():
    with pytest.raises(ValueError, match="lam"):
        _bound(1.2, 10)
    with pytest.raises(ValueError, match="lam"):
        _bound(np.array([0.1, -0.1]), 10)
    with pytest.raises(ValueError, match="L_star"):
        _bound(0.5, 10, L_star=1.5)
    with pytest.raises(ValueError, match="disc"):
        _bound(0.5, 10, disc=-0.1)
    with pytest.raises(ValueError, match="gamma1"):
        _bound(0.5, 10, gamma1=0.0)
    with pytest.raises(ValueError, match="d_H"):
        _bound(0.5, 10, d_H=0.5)
    with pytest.raises(ValueError, match="n must be"):
        _bound(0.5, 10, n=5)
