"""The drifting least-squares generator (fedlab.dynamic.data)."""
import numpy as np
import pytest
from scipy.optimize import minimize

from fedlab.dynamic.data import (DriftingLeastSquares, make_drifting_least_squares, random_walk,
                                 sample_least_squares)


def test_make_problem_shapes_and_ranges():
    p = make_drifting_least_squares(20, 3, offset_var=0.2, drift_var=1e-3, noise_std=0.3, rng=0)
    assert (p.n_agents, p.dim) == (20, 3)
    assert p.feature_var.min() >= 0.5 and p.feature_var.max() <= 2.0
    assert p.offsets.shape == (20, 3) and p.w_start.shape == (3,)
    assert np.allclose(p.offsets, np.sqrt(0.2 / 3) * p.offset_dirs)
    q = make_drifting_least_squares(20, 3, offset_var=0.2, rng=0)
    assert np.array_equal(p.feature_var, q.feature_var)                       # seed-deterministic
    assert p.with_(drift_var=0.5).drift_var == 0.5 and p.drift_var == 1e-3


def test_offsets_have_the_nominal_mean_square():
    p = make_drifting_least_squares(20_000, 4, offset_var=0.3, rng=1)
    assert np.mean(np.sum(p.offsets ** 2, -1)) == pytest.approx(0.3, rel=0.03)


def test_optimum_minimises_the_aggregate_risk():
    p = make_drifting_least_squares(6, 2, offset_var=1.0, rng=2)
    w_star = np.array([0.3, -1.0])
    res = minimize(lambda w: float(p.risk(w, w_star)), np.zeros(2), tol=1e-12)
    assert np.allclose(res.x, p.optimum(w_star), atol=1e-6)
    assert np.allclose(p.optimum(w_star) - w_star, p.mean_offset)
    assert p.agent_optima(w_star).shape == (6, 2)


def test_random_walk_increments_have_variance_sigma_q2():
    walk = random_walk(50_000, 2, 1e-3, start=np.ones(2), rng=0)
    assert walk.shape == (50_001, 2) and np.allclose(walk[0], 1.0)
    assert np.mean(np.sum(np.diff(walk, axis=0) ** 2, -1)) == pytest.approx(1e-3, rel=0.02)
    assert np.allclose(random_walk(5, 3, 0.0, rng=0), 0.0)


def test_samples_have_the_model_statistics():
    p = make_drifting_least_squares(3, 2, offset_var=0.5, noise_std=0.2, rng=3)
    w_star = np.array([1.0, -0.5])
    h, y = sample_least_squares(p, w_star, np.array([0, 2]), 100_000, rng=4)
    assert h.shape == (2, 100_000, 2) and y.shape == (2, 100_000)
    for row, k in enumerate([0, 2]):
        assert np.var(h[row]) == pytest.approx(p.feature_var[k], rel=0.02)
        # least-squares fit on the samples recovers the agent's optimum w* + c_k
        fit = np.linalg.lstsq(h[row], y[row], rcond=None)[0]
        assert np.allclose(fit, w_star + p.offsets[k], atol=0.01)
        resid = y[row] - h[row] @ (w_star + p.offsets[k])
        assert np.std(resid) == pytest.approx(0.2, rel=0.02)


@pytest.mark.parametrize("kwargs,match", [
    (dict(offset_var=-0.1), "offset_var"),
    (dict(drift_var=-1e-3), "drift_var"),
    (dict(noise_std=-1.0), "noise_std"),
    (dict(feature_var_range=(0.0, 1.0)), "feature_var_range"),
])
def test_bad_problem_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_drifting_least_squares(5, 2, rng=0, **kwargs)


def test_bad_direct_construction_and_sampling_raise():
    with pytest.raises(ValueError, match="positive variances"):
        DriftingLeastSquares(np.array([1.0, -2.0]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one row per agent"):
        DriftingLeastSquares(np.array([1.0, 2.0]), np.zeros((3, 2)))
    p = make_drifting_least_squares(3, 2, rng=0)
    with pytest.raises(ValueError, match="agents"):
        sample_least_squares(p, np.zeros(2), np.array([0, 3]), 4)
    with pytest.raises(TypeError, match="DriftingLeastSquares"):
        sample_least_squares("problem", np.zeros(2), np.array([0]), 4)
    with pytest.raises(ValueError, match="drift_var"):
        random_walk(10, 2, -1.0)
