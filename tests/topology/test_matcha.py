"""MATCHA(+): matchings, the probability SDP, the mixing weight, rounds and empirical cycle time."""
import networkx as nx
import numpy as np
import pytest

from fedlab.topology import (DelayParams, MatchaSchedule, greedy_matchings, make_connectivity, matcha_alpha,
                             matcha_cycle_time, matcha_probabilities, matcha_round_times, matcha_schedule,
                             matcha_weights, matching_decomposition, overlay_delays, overlay_from_edges,
                             round_robin_matchings, sample_matcha_rounds)
from fedlab.mixing import second_largest_eigenvalue_modulus
from fedlab.topology.matcha import _laplacians


def assert_decomposition(matchings, graph):
    seen = set()
    for m in matchings:
        nodes = m.ravel()
        assert len(set(nodes)) == nodes.size            # a matching
        edges = {tuple(sorted(e)) for e in m.tolist()}
        assert not edges & seen                          # disjoint
        seen |= edges
    assert seen == {tuple(sorted(e)) for e in graph.edges}


@pytest.mark.parametrize("n", range(2, 13))
def test_round_robin_is_a_one_factorisation(n):
    matchings = round_robin_matchings(n)
    assert len(matchings) == (n - 1 if n % 2 == 0 else n)
    assert_decomposition(matchings, nx.complete_graph(n))


def test_greedy_matchings_on_sparse_graphs():
    for seed in range(5):
        graph = nx.connected_watts_strogatz_graph(30, 4, 0.3, seed=seed)
        matchings = greedy_matchings(graph)
        assert_decomposition(matchings, graph)
        assert len(matchings) <= 2 * max(d for _, d in graph.degree()) - 1
    assert len(matching_decomposition(nx.complete_graph(6))) == 5


def test_probabilities_meet_budget_and_beat_uniform():
    graph = nx.connected_watts_strogatz_graph(16, 4, 0.3, seed=1)
    matchings = matching_decomposition(graph)
    p = matcha_probabilities(matchings, 16, budget=0.5)
    L = _laplacians(matchings, 16)
    assert np.all((p >= 0) & (p <= 1)) and p.sum() <= 0.5 * len(matchings) + 1e-5
    lam2 = lambda q: np.linalg.eigvalsh(np.tensordot(q, L, axes=1))[1]  # noqa: E731
    assert lam2(p) >= lam2(np.full(len(matchings), 0.5)) - 1e-5


def test_complete_graph_probabilities_reach_the_bound():
    """On K_n, lambda_2 <= C_b n (trace bound) and the SDP attains it."""
    matchings = round_robin_matchings(10)
    p = matcha_probabilities(matchings, 10, budget=0.5)
    assert np.linalg.eigvalsh(np.tensordot(p, _laplacians(matchings, 10), axes=1))[1] == pytest.approx(5.0, rel=1e-4)


def test_alpha_minimises_the_expected_contraction():
    graph = nx.cycle_graph(8)
    matchings = matching_decomposition(graph)
    p = np.array([0.6, 0.4])
    alpha = matcha_alpha(matchings, p, 8)
    L = _laplacians(matchings, 8)
    lbar = np.tensordot(p, L, 1)
    quad = lbar @ lbar + 2 * np.tensordot(p * (1 - p), L, 1)
    rho = lambda a: np.linalg.eigvalsh(np.eye(8) - 2 * a * lbar + a * a * quad - 1 / 8)[-1]  # noqa: E731
    assert all(rho(alpha) <= rho(a) + 1e-9 for a in np.linspace(0, 1, 101))


def test_rounds_always_activate_a_matching_and_are_seeded():
    schedule = MatchaSchedule(4, round_robin_matchings(4), np.array([0.1, 0.1, 0.1]), 0.3)
    a = sample_matcha_rounds(schedule, 500, rng=3)
    assert a.shape == (500, 3) and a.any(axis=1).all()
    assert np.array_equal(a, sample_matcha_rounds(schedule, 500, rng=3))
    with pytest.raises(ValueError, match="positive probability"):
        sample_matcha_rounds(MatchaSchedule(4, round_robin_matchings(4), np.zeros(3), 0.3), 5)
    with pytest.raises(ValueError, match="n_rounds"):
        sample_matcha_rounds(schedule, 0)


def test_round_time_of_a_single_matching_is_the_overlay_delay():
    rng = np.random.default_rng(0)
    conn = make_connectivity(rng.uniform(5, 20, (4, 4)), 1e9)
    params = DelayParams(model_bits=1e7, compute_ms=5.0, up_bps=1e9, dn_bps=1e9)
    matchings = [np.array([[0, 1], [2, 3]])]
    schedule = MatchaSchedule(4, matchings, np.array([1.0]), 0.5)
    W = overlay_delays(overlay_from_edges(4, [(0, 1), (2, 3)]), conn, params, self_loops=False)
    times = matcha_round_times(schedule, conn, params, n_rounds=3)
    assert np.allclose(times, W[np.isfinite(W)].max())
    assert matcha_cycle_time(schedule, conn, params, n_rounds=3) == pytest.approx(W[np.isfinite(W)].max())


def test_schedule_end_to_end_and_mixing_matrices():
    schedule = matcha_schedule(nx.complete_graph(6))
    assert len(schedule.matchings) == 5 and 0 < schedule.alpha < 1
    for row in sample_matcha_rounds(schedule, 20, rng=0):
        W = matcha_weights(schedule, row)
        assert np.allclose(W, W.T) and np.allclose(W.sum(axis=1), 1)
    assert second_largest_eigenvalue_modulus(matcha_weights(schedule, np.ones(5, bool))) < 1
    with pytest.raises(ValueError, match="active"):
        matcha_weights(schedule, [True])


def test_bad_base_graphs_and_budgets():
    disconnected = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="connected"):
        matcha_schedule(disconnected)
    with pytest.raises(TypeError, match="base_graph"):
        matcha_schedule(nx.DiGraph([(0, 1), (1, 0)]))
    with pytest.raises(ValueError, match="budget"):
        matcha_probabilities(round_robin_matchings(4), 4, budget=0.0)


def test_schedule_must_fit_the_connectivity_graph():
    conn = make_connectivity(np.ones((3, 3)), 1e9)
    schedule = MatchaSchedule(4, round_robin_matchings(4), np.full(3, 0.5), 0.3)
    with pytest.raises(ValueError, match="silos"):
        matcha_round_times(schedule, conn, DelayParams(model_bits=1e6), 5)


def test_local_degree_rule_is_a_nonnegative_doubly_stochastic_matrix():
    """Eqs. (2.12)-(2.13) on each round's union of matchings: what the DPASGD runs of notebook 01 gossip with."""
    schedule = MatchaSchedule(6, round_robin_matchings(6), np.full(5, 0.5), 0.9)
    rows = sample_matcha_rounds(schedule, 30, rng=1)
    assert any(matcha_weights(schedule, row).min() < 0 for row in rows)   # I - alpha L_k with a large alpha
    for row in rows:
        W = matcha_weights(schedule, row, rule="local_degree")
        assert W.min() >= 0 and np.allclose(W, W.T) and np.allclose(W.sum(axis=1), 1)
        active = np.zeros((6, 6), bool)
        for j in np.flatnonzero(row):
            u, v = schedule.matchings[j].T
            active[u, v] = active[v, u] = True
        deg = active.sum(axis=1)
        i, j = np.argwhere(active)[0]
        assert W[i, j] == pytest.approx(1 / (1 + max(deg[i], deg[j])))
        assert np.all(W[~active & ~np.eye(6, dtype=bool)] == 0)
    with pytest.raises(ValueError, match="rule"):
        matcha_weights(schedule, rows[0], rule="metropolis")
