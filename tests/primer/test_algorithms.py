"""The primer's quadratic clients, exact FedAvg on them and its closed-form fixed point (client drift)."""
import numpy as np
import pytest

from fedlab.engine import History, run
from fedlab.algorithms import METHODS
from fedlab.primer.algorithms import PRESETS, QuadraticFedAvg, drift_paths, fedavg_fixed_point
from fedlab.primer.data import QuadraticClients


def _clients():
    return QuadraticClients(np.array([[1.0, 0.0], [-1.0, 2.0]]),
                            np.array([[[2.0, 0.0], [0.0, 0.5]], [[0.5, 0.0], [0.0, 3.0]]]), np.array([0.5, 0.5]))


def _fedavg(clients, rounds, **options):
    return run(QuadraticFedAvg(np.zeros(2), **options), clients, rounds=rounds, progress=False)


def test_one_local_step_converges_to_the_optimum():
    c = _clients()
    state, history = _fedavg(c, 300, local_steps=1, lr=0.2)
    server, local = drift_paths(history)
    assert np.allclose(server[-1], c.optimum(), atol=1e-8) and np.array_equal(server[-1], state.w)
    assert local.shape == (300, 2, 2, 2) and server.shape == (301, 2) and state.round == 300


def test_many_local_steps_drift_to_the_closed_form_fixed_point():
    c = _clients()
    state, _ = _fedavg(c, 300, local_steps=10, lr=0.2)
    fixed = fedavg_fixed_point(c, local_steps=10, lr=0.2)
    assert np.allclose(state.w, fixed, atol=1e-8)
    assert np.linalg.norm(fixed - c.optimum()) > 0.05
    assert c.objective(fixed) > c.objective(c.optimum())


def test_rounds_are_exact_gradient_steps_and_the_objective_is_recorded():
    c = _clients()
    _, history = _fedavg(c, 2, local_steps=3, lr=0.1)
    server, local = drift_paths(history)
    for t in range(2):
        w = server[t]
        for k in range(2):
            path = [w]
            for _ in range(3):
                path.append(path[-1] - 0.1 * c.curvatures[k] @ (path[-1] - c.centers[k]))
            assert np.allclose(local[t, k], path, rtol=1e-14)
        assert np.allclose(server[t + 1], c.weights @ local[t, :, -1], rtol=1e-14)
    assert history.rounds == [0, 1, 2]
    objective = history.per_client("objective")                               # F_k(w_2), one per client
    assert objective.shape == (2,) and c.weights @ objective == pytest.approx(c.objective(server[-1]))
    assert History.from_dict(history.to_dict()).log == history.log          # the paths are JSON-safe


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
        QuadraticFedAvg(np.zeros(2), local_steps=0, lr=0.1)
    with pytest.raises(ValueError, match="lr"):
        QuadraticFedAvg(np.zeros(2), local_steps=1, lr=0.0)
    with pytest.raises(ValueError, match="w0"):
        run(QuadraticFedAvg(np.zeros(3), local_steps=1, lr=0.1), _clients(), rounds=1, progress=False)
    with pytest.raises(TypeError, match="QuadraticClients"):
        run(QuadraticFedAvg(np.zeros(2), local_steps=1, lr=0.1), np.zeros(2), rounds=1, progress=False)
    with pytest.raises(ValueError, match="at least one round"):
        drift_paths(_fedavg(_clients(), 0, local_steps=1, lr=0.1)[1])
    with pytest.raises(TypeError, match="History"):
        drift_paths([])


def test_the_primer_registers_its_algorithm():
    assert PRESETS["quadratic_fedavg"] is METHODS["primer:quadratic_fedavg"]
    assert PRESETS["quadratic_fedavg"].cls is QuadraticFedAvg and PRESETS["quadratic_fedavg"].chapter == "primer"
