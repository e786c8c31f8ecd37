"""The drifting least-squares generator (fedlab.dynamic.data)."""
import numpy as np
import pytest
from scipy.optimize import minimize

from fedlab.dynamic.data import (DriftingLeastSquares, DriftingLogistic, logistic_risk_curvature,
                                 logistic_risk_minimizer, make_drifting_least_squares, make_drifting_logistic,
                                 random_walk, sample_least_squares)


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


# ---------------------------------------------------------------- the paper's logistic model (29)

def _logistic_grad_mc(problem, w, n=200_000, seed=1):
    """Monte-Carlo gradient of the aggregate population risk at ``w``."""
    rng = np.random.default_rng(seed)
    u = problem.agent_optima(problem.w_start)
    g = np.zeros(2)
    for k in range(problem.n_agents):
        h = rng.standard_normal((n, 2)) * np.sqrt(problem.feature_var[k])
        y = np.sign(h @ u[k])
        g -= ((1 / (1 + np.exp(y * (h @ w))))[:, None] * y[:, None] * h).mean(0) / problem.n_agents
    return g + 2 * problem.reg_rho * w


def test_drifting_logistic_shares_the_least_squares_draws():
    ls = make_drifting_least_squares(6, 2, rng=3)
    lg = make_drifting_logistic(6, rng=3)
    assert np.array_equal(ls.feature_var, lg.feature_var) and np.array_equal(ls.offset_dirs, lg.offset_dirs)
    assert np.array_equal(ls.w_start, lg.w_start) and lg.dim == 2 and lg.n_agents == 6
    assert np.allclose(lg.agent_optima(lg.w_start), ls.agent_optima(ls.w_start))
    assert lg.with_(reg_rho=0.1).reg_rho == 0.1
    with pytest.raises(ValueError, match="offset_dirs"):
        DriftingLogistic(np.ones(3), np.ones((3, 3)))
    with pytest.raises(ValueError, match="reg_rho"):
        DriftingLogistic(np.ones(3), np.ones((3, 2)), reg_rho=0.0)


def test_logistic_minimizer_is_a_stationary_point_of_the_population_risk():
    problem = make_drifting_logistic(5, rng=0)
    w = problem.optimum(problem.w_start)
    assert np.linalg.norm(_logistic_grad_mc(problem, w)) < 2e-3              # MC error ~1e-3
    assert np.linalg.norm(_logistic_grad_mc(problem, 0.8 * w)) > 2e-2         # elsewhere it is not
    fine = logistic_risk_minimizer(problem.feature_var, problem.agent_optima(problem.w_start), problem.reg_rho,
                                   n_angle=64, n_radius=96)
    assert np.allclose(w, fine, atol=1e-8)                                    # quadrature converged
    # batched, with per-entry offset variances; a warm start with a few steps gives the same point
    ws = np.stack([problem.w_start, problem.w_start + 0.3])
    batch = problem.optimum(ws, np.array([0.1, 1.0]))
    assert np.allclose(batch[0], w)
    warm = logistic_risk_minimizer(problem.feature_var, problem.agent_optima(ws, np.array([0.1, 1.0])),
                                   problem.reg_rho, w_init=batch + 0.01, newton_steps=4)
    assert np.allclose(warm, batch, atol=1e-9)


def test_logistic_minimizer_depends_on_directions_only_and_shrinks_with_rho():
    problem = make_drifting_logistic(4, offset_var=0.0, rng=1)
    w1 = problem.optimum(problem.w_start)
    w2 = problem.optimum(3 * problem.w_start)                 # sign labels: the scale of w* is irrelevant
    assert np.allclose(w1, w2, atol=1e-9)
    assert abs(w1 @ np.array([-problem.w_start[1], problem.w_start[0]])) < 1e-8   # aligned with w* (no offsets)
    assert np.linalg.norm(problem.with_(reg_rho=0.1).optimum(problem.w_start)) < np.linalg.norm(w1)


def test_logistic_curvature():
    problem = make_drifting_logistic(5, rng=0)
    w = problem.optimum(problem.w_start)
    eig = logistic_risk_curvature(problem.feature_var, problem.agent_optima(problem.w_start), problem.reg_rho, w)
    assert eig.shape == (2,) and 2 * problem.reg_rho < eig[0] <= eig[1]
    far = logistic_risk_curvature(problem.feature_var, problem.agent_optima(problem.w_start), problem.reg_rho, 50 * w)
    assert far[0] == pytest.approx(2 * problem.reg_rho, abs=1e-3)            # saturated margins: only the ridge left
    with pytest.raises(ValueError, match="w must have shape"):
        logistic_risk_curvature(problem.feature_var, problem.agent_optima(problem.w_start), 0.01, np.zeros(3))
