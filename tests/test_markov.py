import numpy as np
import pytest

from fedlab.markov import check_transition_matrix, stationary_distribution


def test_stationary_matches_the_leading_left_eigenvector():
    rng = np.random.default_rng(0)
    for _ in range(20):
        P = rng.random((5, 5))
        P /= P.sum(1, keepdims=True)
        w, v = np.linalg.eig(P.T)
        ref = np.real(v[:, np.argmin(np.abs(w - 1))])
        assert np.allclose(stationary_distribution(P), ref / ref.sum(), atol=1e-10)


def test_batched_chains():
    P = np.stack([[[0.9, 0.1], [0.3, 0.7]], [[0.5, 0.5], [0.5, 0.5]]])
    assert np.allclose(stationary_distribution(P), [[0.75, 0.25], [0.5, 0.5]])


def test_reducible_and_bad_matrices():
    with pytest.raises(ValueError, match="several stationary"):
        stationary_distribution(np.eye(2))
    with pytest.raises(ValueError, match="row-stochastic"):
        check_transition_matrix([[0.5, 0.2], [0.5, 0.5]])
    with pytest.raises(ValueError, match="non-negative"):
        check_transition_matrix([[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="square"):
        check_transition_matrix(np.ones((2, 3)) / 3)
