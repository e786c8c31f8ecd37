import numpy as np
import pytest

from fedlab.primer.toys import QuadraticClients, fedavg_fixed_point, fedavg_quadratic


def _clients():
    return QuadraticClients(np.array([[1.0, 0.0], [-1.0, 2.0]]),
                            np.array([[[2.0, 0.0], [0.0, 0.5]], [[0.5, 0.0], [0.0, 3.0]]]), np.array([0.5, 0.5]))


def test_one_local_step_converges_to_the_optimum():
    c = _clients()
    server, local = fedavg_quadratic(c, np.zeros(2), local_steps=1, lr=0.2, rounds=300)
    assert np.allclose(server[-1], c.optimum(), atol=1e-8)
    assert local.shape == (300, 2, 2, 2)


def test_many_local_steps_drift_to_the_closed_form_fixed_point():
    c = _clients()
    server, _ = fedavg_quadratic(c, np.zeros(2), local_steps=10, lr=0.2, rounds=300)
    fixed = fedavg_fixed_point(c, local_steps=10, lr=0.2)
    assert np.allclose(server[-1], fixed, atol=1e-8)
    assert np.linalg.norm(fixed - c.optimum()) > 0.05
    assert c.objective(fixed) > c.objective(c.optimum())


def test_optimum_matches_brute_force_minimisation():
    c = _clients()
    grid = np.stack(np.meshgrid(np.linspace(-2, 3, 201), np.linspace(-2, 3, 201)), -1).reshape(-1, 2)
    best = grid[np.argmin([c.objective(w) for w in grid])]
    assert np.allclose(best, c.optimum(), atol=0.03)


def test_bad_inputs():
    with pytest.raises(ValueError, match="positive definite"):
        QuadraticClients(np.zeros((1, 2)), -np.eye(2)[None], np.ones(1))
    with pytest.raises(ValueError, match="sum to 1"):
        QuadraticClients(np.zeros((2, 2)), np.stack([np.eye(2)] * 2), np.ones(2))
    with pytest.raises(ValueError, match="local_steps"):
        fedavg_quadratic(_clients(), np.zeros(2), local_steps=0, lr=0.1, rounds=1)
    with pytest.raises(ValueError, match="w0"):
        fedavg_quadratic(_clients(), np.zeros(3), local_steps=1, lr=0.1, rounds=1)
