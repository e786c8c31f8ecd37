"""Consensus matrices: local-degree (eqs. 2.12-2.13), Metropolis, FMMC, SLEM."""
import networkx as nx
import numpy as np
import pytest

from fedlab.mixing import (exact_average, fmmc_weights, local_degree_weights, metropolis_weights,
                           second_largest_eigenvalue_modulus, slem)


def random_connected_graphs(count=8, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        G = nx.gnp_random_graph(int(rng.integers(4, 16)), 0.35, seed=int(rng.integers(1 << 30)))
        if nx.is_connected(G):
            out.append(G)
    return out


def assert_symmetric_doubly_stochastic(W, G):
    n = G.number_of_nodes()
    adj = nx.to_numpy_array(G, nodelist=range(n)) > 0
    assert W.shape == (n, n)
    assert np.allclose(W, W.T, atol=1e-8)
    assert np.allclose(W.sum(axis=0), 1, atol=1e-6) and np.allclose(W.sum(axis=1), 1, atol=1e-6)
    assert W.min() >= -1e-8
    assert np.all(W[~adj & ~np.eye(n, dtype=bool)] == 0)


@pytest.mark.parametrize("rule", [local_degree_weights, metropolis_weights, fmmc_weights])
def test_consensus_matrices_are_symmetric_doubly_stochastic(rule):
    for G in random_connected_graphs(6):
        assert_symmetric_doubly_stochastic(rule(G), G)


def test_local_degree_equals_metropolis_on_undirected_graphs():
    G = nx.star_graph(4)
    W = local_degree_weights(G)
    assert np.allclose(W, metropolis_weights(G))
    assert W[0, 1] == pytest.approx(1 / 5) and W[1, 1] == pytest.approx(4 / 5)


def test_fmmc_mixes_at_least_as_fast_as_metropolis():
    for G in random_connected_graphs(5, seed=1):
        assert slem(fmmc_weights(G)) <= slem(metropolis_weights(G)) + 1e-6
        assert slem(fmmc_weights(G)) < 1


def test_fmmc_without_self_loops_has_zero_diagonal():
    G = nx.complete_graph(5)
    W = fmmc_weights(G, self_loops=False)
    assert np.allclose(np.diag(W), 0, atol=1e-6)
    assert np.allclose(W.sum(axis=1), 1)


@pytest.mark.parametrize("n", [5, 11, 22])
def test_directed_ring_weights(n):
    """F-C13: on the directed ring, A = (I + P)/2 and SLEM = cos(pi/N) (0.9898 for N = 22)."""
    ring = nx.DiGraph([(i, (i + 1) % n) for i in range(n)])
    W = local_degree_weights(ring)
    P = np.zeros((n, n))
    P[(np.arange(n) + 1) % n, np.arange(n)] = 1   # row i receives from i - 1
    assert np.allclose(W, (np.eye(n) + P) / 2)
    assert np.allclose(W.sum(axis=0), 1) and np.allclose(W.sum(axis=1), 1)
    assert second_largest_eigenvalue_modulus(W) == pytest.approx(np.cos(np.pi / n))


def test_array_input_and_exact_average():
    adj = nx.to_numpy_array(nx.path_graph(4))
    assert np.allclose(metropolis_weights(adj), metropolis_weights(nx.path_graph(4)))
    assert slem(exact_average(6)) == pytest.approx(0.0, abs=1e-12)
    assert second_largest_eigenvalue_modulus(np.ones((1, 1))) == 0.0


def test_slem_removes_only_the_consensus_eigenvalue():
    # Rows sum to 1 but another eigenvalue dominates: the SLEM reports it, not the consensus 1.
    assert slem([[2.0, -1.0], [0.0, 1.0]]) == pytest.approx(2.0)
    cycle = nx.cycle_graph(4)
    assert slem(np.eye(4) - nx.laplacian_matrix(cycle).toarray()) == pytest.approx(3.0)
    W = metropolis_weights(nx.path_graph(5))  # symmetric doubly stochastic: the 2-norm formula of the docstring
    assert slem(W) == pytest.approx(np.linalg.norm(W - np.ones((5, 5)) / 5, 2))


def test_bad_graphs_raise():
    disconnected = nx.Graph([(0, 1), (2, 3)])
    for rule in (local_degree_weights, metropolis_weights, fmmc_weights):
        with pytest.raises(ValueError, match="connected"):
            rule(disconnected)
    with pytest.raises(ValueError, match="undirected"):
        metropolis_weights(nx.DiGraph([(0, 1), (1, 2), (2, 0)]))
    with pytest.raises(ValueError, match="square"):
        metropolis_weights(np.ones((2, 3)))
    with pytest.raises(ValueError, match="nodes 0..n-1"):
        metropolis_weights(nx.relabel_nodes(nx.path_graph(3), {0: "a"}))
    with pytest.raises(ValueError, match="W"):
        second_largest_eigenvalue_modulus(np.ones((2, 3)))


def test_a_row_that_sums_to_one_gets_a_zero_diagonal_not_a_rounding_error():
    from fedlab.mixing import _with_diagonal

    w = np.array([[0.0, 0.1, 0.1, 0.8000000000000002], [0.1, 0.0, 0.0, 0.0], [0.1, 0.0, 0.0, 0.0],
                  [0.8, 0.0, 0.0, 0.0]])
    assert 1.0 - w[0].sum() == -2.0 ** -52          # the first row sums to one up to rounding
    out = _with_diagonal(w)
    assert out[0, 0] == 0.0 and out[1, 1] == 0.9 and np.allclose(out.sum(1), 1, rtol=0, atol=1e-15)
