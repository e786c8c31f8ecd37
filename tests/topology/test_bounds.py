"""Max-plus machinery: Karp's maximum cycle mean, critical circuits, the recursion (2.4), Examples 1-2."""
import itertools

import networkx as nx
import numpy as np
import pytest

from fedlab.topology import critical_circuit, max_cycle_mean, max_cycle_mean_bruteforce, simulate_maxplus


def random_digraph(rng, n, density=0.5, loops=True):
    W = rng.normal(size=(n, n)) * rng.integers(1, 5)
    W[rng.random((n, n)) > density] = -np.inf
    if not loops:
        np.fill_diagonal(W, -np.inf)
    return W


def undirected(n, delays):
    """Delay matrix of an undirected overlay from {(i, j): d} (same delay both ways)."""
    W = np.full((n, n), -np.inf)
    for (i, j), d in delays.items():
        W[i, j] = W[j, i] = d
    return W


def ring(order, d):
    n = len(order)
    W = np.full((n, n), -np.inf)
    for a, b in zip(order, order[1:] + order[:1]):
        W[a, b] = d[a, b]
    return W


def test_karp_equals_bruteforce_on_300_random_digraphs():
    """F-C1: Karp = max over nx.simple_cycles of mean delay, including non-strong graphs."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        n = int(rng.integers(1, 8))
        W = random_digraph(rng, n, density=rng.uniform(0.2, 0.8), loops=rng.random() < 0.5)
        try:
            expected = max_cycle_mean_bruteforce(W)
        except ValueError:
            with pytest.raises(ValueError, match="no circuit|no arc"):
                max_cycle_mean(W)
            continue
        assert max_cycle_mean(W) == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked >= 300


def test_critical_circuit_is_a_circuit_with_mean_tau():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 9))
        W = random_digraph(rng, n, density=0.6)
        try:
            tau = max_cycle_mean(W)
        except ValueError:
            continue
        circuit = critical_circuit(W)
        arcs = list(zip(circuit, circuit[1:] + circuit[:1]))
        assert len(set(circuit)) == len(circuit)
        assert all(np.isfinite(W[u, v]) for u, v in arcs)
        assert np.mean([W[u, v] for u, v in arcs]) == pytest.approx(tau, abs=1e-9)


def test_karp_handles_components():
    W = np.full((5, 5), -np.inf)
    W[0, 1], W[1, 0] = 1.0, 3.0          # mean 2
    W[2, 3], W[3, 4], W[4, 2] = 4, 4, 4  # mean 4
    W[1, 2] = 100.0                      # arc between components is on no circuit
    assert max_cycle_mean(W) == pytest.approx(4.0)
    assert sorted(critical_circuit(W)) == [2, 3, 4]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_plus_inf_are_not_delays(bad):
    with pytest.raises(ValueError, match="W must hold delays"):
        max_cycle_mean([[0.0, bad], [1.0, 0.0]])


def test_self_loop_is_a_circuit():
    W = np.array([[5.0, 1.0], [1.0, -np.inf]])
    assert max_cycle_mean(W) == 5.0
    assert critical_circuit(W) == [0]


def test_example_1a_directed_ring_beats_best_undirected_overlay():
    """F-C2 (eqs. 2.6-2.7): undirected {1-2, 2-3} has tau = 3, the ring 1->2->3->1 has 8/3."""
    d = {(0, 1): 1, (1, 2): 3, (0, 2): 4}
    full = undirected(3, d)
    assert max_cycle_mean(undirected(3, {(0, 1): 1, (1, 2): 3})) == pytest.approx(3.0)
    assert max_cycle_mean(ring([0, 1, 2], full)) == pytest.approx(8 / 3)
    # it is the best undirected overlay: every connected undirected overlay on 3 nodes
    best = min(max_cycle_mean(undirected(3, dict(sub))) for k in (2, 3)
               for sub in itertools.combinations(d.items(), k))
    assert best == pytest.approx(3.0)


@pytest.mark.parametrize("n", [3, 5, 10, 20])
def test_example_1b_ring_is_arbitrarily_faster(n):
    """F-C3 (eqs. 2.8-2.9): unit path 1..n plus node n+1 at delay n from n; delays = path sums."""
    under = nx.path_graph(n)
    under.add_edge(n - 1, n, weight=n)
    nx.set_edge_attributes(under, {e: 1 for e in nx.path_graph(n).edges}, "weight")
    lengths = dict(nx.all_pairs_dijkstra_path_length(under))
    d = np.array([[lengths[i][j] for j in range(n + 1)] for i in range(n + 1)], dtype=float)
    W_under = np.where(nx.to_numpy_array(under, nodelist=range(n + 1)) > 0, d, -np.inf)
    assert max_cycle_mean(W_under) == pytest.approx(n)
    assert max_cycle_mean(ring(list(range(n + 1)), d)) == pytest.approx((4 * n - 2) / (n + 1))


def example_2(N):
    """Delays (2.10): 0 inside {0..N-1}, 1 whenever an end point is in {N..2N-1}."""
    d = np.ones((2 * N, 2 * N))
    d[:N, :N] = 0.0
    return d


@pytest.mark.parametrize("N", [3, 5, 8])
def test_example_2_overlay_cycle_time(N):
    """F-C4 (corrects the thesis's 2/(N+2)): the overlay (2.11) has tau = 2/(N+1)."""
    d = example_2(N)
    W = np.full_like(d, -np.inf)
    for i in range(N - 1):
        W[i, i + 1] = d[i, i + 1]
    for K in range(N, 2 * N):
        W[N - 1, K], W[K, 0] = d[N - 1, K], d[K, 0]
    assert max_cycle_mean(W) == pytest.approx(2 / (N + 1))


@pytest.mark.parametrize("N", [3, 4])
def test_example_2_best_ring_is_n_times_worse(N):
    """F-C4: the best Hamiltonian cycle has tau = (N+1)/(2N) (brute force)."""
    d = example_2(N)
    best = min(np.mean([d[a, b] for a, b in zip((0,) + p, p + (0,))])
               for p in itertools.permutations(range(1, 2 * N)))
    assert best == pytest.approx((N + 1) / (2 * N))


def test_np_hardness_gadget_forward_direction():
    """F-C7 (Prop. 2.1.2): a Hamiltonian cycle of D has tau = (N+2)/N in the gadget G_c."""
    rng = np.random.default_rng(3)
    for N in (4, 5, 6):
        order = list(rng.permutation(N))
        E = set(zip(order, order[1:] + order[:1])) | {tuple(rng.choice(N, 2, replace=False)) for _ in range(N)}
        v0 = 0
        d = np.full((N, N), 2.0)
        for i, j in itertools.permutations(range(N), 2):
            if (i, j) in E:
                d[i, j] = 2.0 if v0 in (i, j) else 1.0
            else:
                d[i, j] = 3.0 if j == v0 else 2.0
        assert max_cycle_mean(ring(order, d)) == pytest.approx((N + 2) / N)


def test_simulate_maxplus_slope_is_the_cycle_time_and_deviation_bounded():
    rng = np.random.default_rng(4)
    W = rng.uniform(1, 10, size=(6, 6))
    W[rng.random((6, 6)) < 0.4] = -np.inf
    np.fill_diagonal(W, 2.0)
    W[np.arange(6), (np.arange(6) + 1) % 6] = 3.0  # strongly connected
    tau = max_cycle_mean(W)
    t = simulate_maxplus(W, 600)
    assert t.shape == (601, 6)
    k = np.arange(601)[:, None]
    assert np.abs(t - k * tau).max() < 10 * np.nanmax(np.where(np.isfinite(W), W, np.nan))
    assert t[-1] / 600 == pytest.approx(np.full(6, tau), rel=1e-2)


def test_simulate_maxplus_initial_times():
    W = np.array([[1.0, 2.0], [3.0, 1.0]])
    t = simulate_maxplus(W, 1, t0=[0.0, 10.0])
    assert np.allclose(t[1], [13.0, 11.0])


@pytest.mark.parametrize("bad, match", [
    (np.zeros((2, 3)), "square"),
    (np.array([[np.inf]]), r"\+inf"),
    (np.full((3, 3), -np.inf), "no arc"),
    (np.array([[-np.inf, 1.0], [-np.inf, -np.inf]]), "no circuit"),
])
def test_bad_delay_matrices_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        max_cycle_mean(bad)


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="n_steps"):
        simulate_maxplus(np.eye(2), -1)
    with pytest.raises(ValueError, match="t0"):
        simulate_maxplus(np.eye(2), 1, t0=[0.0])
    with pytest.raises(ValueError, match="W"):
        max_cycle_mean_bruteforce(np.eye(11))


def test_worked_examples_as_delay_matrices():
    """bounds.example_1a/1b/2 give the cycle times of section 2.1.3 (Example 2 corrected: 2/(N + 1))."""
    from fedlab.topology import example_1a, example_1b, example_2

    path, directed = example_1a()
    assert max_cycle_mean(path) == pytest.approx(3.0) and max_cycle_mean(directed) == pytest.approx(8 / 3)
    for n in (3, 5, 10):
        under, ring_ = example_1b(n)
        assert max_cycle_mean(under) == pytest.approx(n)
        assert max_cycle_mean(ring_) == pytest.approx((4 * n - 2) / (n + 1))
    for N in (3, 5, 8):
        assert max_cycle_mean(example_2(N)) == pytest.approx(2 / (N + 1))
    with pytest.raises(ValueError, match="n"):
        example_1b(1)
    with pytest.raises(ValueError, match="N"):
        example_2(1)


def test_karp_agreement_counts_every_draw():
    from fedlab.topology import karp_agreement

    assert karp_agreement(30, seed=1) == 30
    with pytest.raises(ValueError, match="n_graphs"):
        karp_agreement(0)


def test_star_ring_limit_is_reached_by_slow_access_links():
    """τ_STAR / τ_RING tends to 2(N - 1) as the access links slow down (not the 2N the thesis quotes)."""
    from fedlab.topology import (connectivity_graph, cycle_time, load_network, preset_params, ring_overlay,
                                 star_overlay, star_ring_limit)

    conn = connectivity_graph(load_network("gaia"))
    params = preset_params("sub_inaturalist", access_bps=1e5)
    ratio = cycle_time(star_overlay(conn), conn, params) / cycle_time(ring_overlay(conn, params), conn, params)
    assert star_ring_limit(conn.n) == 2 * (conn.n - 1) == 20
    assert ratio == pytest.approx(star_ring_limit(conn.n), rel=1e-3)
    with pytest.raises(ValueError, match="n_silos"):
        star_ring_limit(1)
