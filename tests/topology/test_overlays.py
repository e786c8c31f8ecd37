"""Overlays: dispatch table, Prim/delta-PRIM, cube path, Christofides, and Props. 2.1.1, 2.1.3, 2.1.5, 2.1.6."""
import itertools

import networkx as nx
import numpy as np
import pytest

from fedlab.topology.experiments import OVERLAYS
from fedlab.topology import (DelayParams, christofides_tour, connectivity_graph, cube_path, cycle_time,
                             degree_one_delays, delta_mbst_overlay, delta_prim, design_overlay, load_network,
                             kruskal_tree, make_connectivity, max_cycle_mean, mst_overlay, overlay_delays,
                             overlay_from_edges, preset_params, prim_tree, ring_overlay, star_overlay)
from fedlab.topology.overlays import _symmetric_weights


def all_spanning_trees(n):
    """Every labelled tree on n nodes, from Prüfer sequences."""
    for seq in itertools.product(range(n), repeat=n - 2):
        yield list(nx.from_prufer_sequence(list(seq)).edges) if n > 2 else [(0, 1)]


def euclidean_instance(rng, n, access):
    """Silos at random points; l = Euclidean distance, symmetric A: a Euclidean G_c."""
    xy = rng.random((n, 2)) * 100
    lat = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    conn = make_connectivity(lat, np.inf if access == "node" else rng.uniform(1e8, 1e9) * np.ones((n, n)))
    cap = rng.uniform(1e8, 1e9) if access == "node" else np.inf
    params = DelayParams(model_bits=1e7, compute_ms=3.0, local_steps=1, up_bps=cap, dn_bps=np.inf)
    return conn, params


@pytest.fixture(scope="module")
def gaia():
    return connectivity_graph(load_network("gaia")), preset_params("sub_inaturalist", access_bps=1e9)


def test_every_overlay_key_builds_a_strong_overlay(gaia):
    conn, params = gaia
    assert set(OVERLAYS) == {"star", "mst", "delta_mbst", "ring"}
    for name in OVERLAYS:
        overlay = design_overlay(name, conn, params)
        assert sorted(overlay.nodes) == list(range(conn.n))
        assert nx.is_strongly_connected(overlay)
        assert cycle_time(overlay, conn, params) > 0
    with pytest.raises(ValueError, match="name must be one of"):
        design_overlay("torus", conn, params)


def test_mst_is_optimal_among_undirected_spanning_trees_edge_capacitated():
    """Prop. 2.1.1 / F-C8: brute force over all spanning trees (n <= 5), asymmetric delays."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(3, 6))
        conn = make_connectivity(rng.uniform(1, 50, (n, n)), rng.uniform(1e8, 1e9, (n, n)))
        params = DelayParams(model_bits=1e7, compute_ms=rng.uniform(0, 10, n), local_steps=1,
                             up_bps=np.inf, dn_bps=np.inf)
        best = min(cycle_time(overlay_from_edges(n, t), conn, params) for t in all_spanning_trees(n))
        assert cycle_time(mst_overlay(conn, params), conn, params) == pytest.approx(best, rel=1e-12)


def test_trees_suffice_among_undirected_overlays_lemma_c1():
    """Lemma C.1: no connected undirected overlay beats the best tree (edge-capacitated, n = 4)."""
    rng = np.random.default_rng(1)
    pairs = list(itertools.combinations(range(4), 2))
    for _ in range(20):
        conn = make_connectivity(rng.uniform(1, 50, (4, 4)), 1e9)
        params = DelayParams(model_bits=1e7, compute_ms=2.0, up_bps=np.inf, dn_bps=np.inf)
        taus = [cycle_time(overlay_from_edges(4, sub), conn, params)
                for k in range(3, 7) for sub in itertools.combinations(pairs, k)
                if nx.is_connected(overlay_from_edges(4, sub).to_undirected())]
        assert cycle_time(mst_overlay(conn, params), conn, params) == pytest.approx(min(taus))


def strong_optimum(conn, params):
    """Brute-force MCT: minimal cycle time over all strong spanning subdigraphs (n = 4)."""
    arcs = [a for a in itertools.permutations(range(conn.n), 2)]
    best = np.inf
    for mask in range(1, 2 ** len(arcs)):
        chosen = [a for b, a in enumerate(arcs) if mask >> b & 1]
        overlay = overlay_from_edges(conn.n, chosen, directed=True)
        if len(chosen) >= conn.n and nx.is_strongly_connected(overlay):
            best = min(best, cycle_time(overlay, conn, params))
    return best


@pytest.mark.parametrize("access", ["edge", "node"])
def test_christofides_ring_is_a_3n_approximation(access):
    """Props. 2.1.3 (edge-capacitated) and 2.1.6 (node-capacitated) / F-C9 on Euclidean G_c, n = 4."""
    rng = np.random.default_rng(2)
    for _ in range(2):
        conn, params = euclidean_instance(rng, 4, access)
        tau_ring = cycle_time(ring_overlay(conn, params), conn, params)
        tau_opt = strong_optimum(conn, params)
        assert tau_opt <= tau_ring <= 3 * conn.n * tau_opt
        # Lemma C.3: the optimal Hamiltonian ring is within 2N of the optimum
        best_ring = min(cycle_time(overlay_from_edges(4, zip((0,) + p, p + (0,)), directed=True), conn, params)
                        for p in itertools.permutations(range(1, 4)))
        assert best_ring <= tau_ring + 1e-9 and best_ring <= 2 * conn.n * tau_opt


def test_algorithm_3_is_a_6_approximation():
    """Prop. 2.1.5 / F-C10: node-capacitated Euclidean, C_DN = A = inf, undirected optimum by brute force."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(25):
        conn, params = euclidean_instance(rng, 5, "node")
        best = min(cycle_time(overlay_from_edges(5, t), conn, params) for t in all_spanning_trees(5))
        tau = cycle_time(delta_mbst_overlay(conn, params), conn, params)
        assert best - 1e-9 <= tau <= 6 * best
        worst = max(worst, tau / best)
        # Lemmas C.4 and C.5: d_u is Euclidean and the MBST bottleneck is at most the optimum
        d_u = _symmetric_weights(degree_one_delays(conn, params))
        off = ~np.eye(5, dtype=bool)
        assert np.allclose(d_u, d_u.T)
        assert all(d_u[i, j] <= d_u[i, k] + d_u[k, j] + 1e-9 for i, j, k in itertools.permutations(range(5), 3))
        assert max(w for _, _, w in prim_tree(np.where(off, d_u, np.inf)).edges(data="weight")) <= best + 1e-9
    assert worst < 2.0  # far inside the bound in practice (spec: about 1.27)


def test_cube_path_is_hamiltonian_in_the_cube_of_the_tree():
    """F-C11: consecutive vertices (and last-to-first) are within tree distance 3."""
    rng = np.random.default_rng(4)
    for n in list(range(2, 40)) * 3:
        tree = nx.random_labeled_tree(n, seed=int(rng.integers(1 << 30)))
        root = int(rng.integers(n))
        path = cube_path(tree, root)
        assert sorted(path) == list(range(n)) and path[0] == root
        dist = dict(nx.all_pairs_shortest_path_length(tree))
        assert all(dist[a][b] <= 3 for a, b in zip(path, path[1:] + path[:1]))


def test_cube_path_bottleneck_at_most_three_times_mst_on_metric_weights():
    """[AR16, Thm. 8] used by Prop. 2.1.5: B(H) <= 3 B(MST) when weights are metric."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        xy = rng.random((15, 2))
        W = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
        np.fill_diagonal(W, np.inf)
        tree = prim_tree(W)
        path = cube_path(tree, 0)
        b_tree = max(w for _, _, w in tree.edges(data="weight"))
        assert max(W[a, b] for a, b in zip(path, path[1:])) <= 3 * b_tree + 1e-12


def test_cube_path_rejects_non_trees():
    with pytest.raises(ValueError, match="tree"):
        cube_path(nx.cycle_graph(4))
    with pytest.raises(ValueError, match="root"):
        cube_path(nx.path_graph(3), root=7)


def test_prim_matches_networkx_mst_weight():
    rng = np.random.default_rng(6)
    for _ in range(30):
        n = int(rng.integers(2, 30))
        W = rng.random((n, n))
        W = (W + W.T) / 2
        np.fill_diagonal(W, np.inf)
        G = nx.from_numpy_array(np.where(np.isfinite(W), W, 0))
        expected = nx.minimum_spanning_tree(G).size(weight="weight")
        tree = prim_tree(W)
        assert nx.is_tree(tree) and tree.size(weight="weight") == pytest.approx(expected)


def test_delta_prim_respects_the_degree_bound():
    rng = np.random.default_rng(7)
    xy = rng.random((30, 2))
    W = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    np.fill_diagonal(W, np.inf)
    for delta in (2, 3, 4):
        tree = delta_prim(W, delta)
        assert nx.is_tree(tree) and tree.number_of_nodes() == 30
        assert max(d for _, d in tree.degree()) <= delta
    assert delta_prim(W, 29).size(weight="weight") == pytest.approx(prim_tree(W).size(weight="weight"))
    with pytest.raises(ValueError, match="delta"):
        delta_prim(W, 1)
    with pytest.raises(ValueError, match="weights"):
        delta_prim(np.ones((2, 3)), 2)


def test_delta_prim_fails_clearly_on_sparse_graphs():
    W = np.full((4, 4), np.inf)
    for a, b in [(0, 1), (0, 2), (0, 3)]:
        W[a, b] = W[b, a] = 1.0
    with pytest.raises(ValueError, match="spanning tree"):
        delta_prim(W, 2)


def test_delta_mbst_candidates_and_delta_argument(gaia):
    conn, params = gaia
    overlay, taus = delta_mbst_overlay(conn, params, return_candidates=True)
    assert "cube" in taus and 2 in taus
    assert cycle_time(overlay, conn, params) == pytest.approx(min(taus.values()))
    only3, taus3 = delta_mbst_overlay(conn, params, deltas=[3], return_candidates=True)
    assert set(taus3) == {"cube", 3}
    with pytest.raises(ValueError, match="delta"):
        delta_mbst_overlay(conn, params, deltas=[1])


def test_christofides_tour_and_its_guarantee():
    """Christofides (exact matching) is within 1.5 of the optimal tour on metric instances."""
    rng = np.random.default_rng(8)
    for _ in range(20):
        n = int(rng.integers(3, 8))
        xy = rng.random((n, 2))
        W = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
        np.fill_diagonal(W, np.inf)
        length = lambda t: sum(W[a, b] for a, b in zip(t, t[1:] + t[:1]))  # noqa: E731
        best = min(length((0,) + p) for p in itertools.permutations(range(1, n)))
        for matching in ("exact", "greedy"):
            tour = christofides_tour(W, matching)
            assert sorted(tour) == list(range(n))
        assert length(christofides_tour(W, "exact")) <= 1.5 * best + 1e-12
    with pytest.raises(ValueError, match="matching"):
        christofides_tour(W, "random")


def test_ring_overlay_closed_form_and_requirements(gaia):
    conn, params = gaia
    ring = ring_overlay(conn, params)
    d1 = degree_one_delays(conn, params)
    mean = np.mean([d1[u, v] for u, v in ring.edges])
    assert all(d == 1 for _, d in ring.out_degree()) and all(d == 1 for _, d in ring.in_degree())
    assert cycle_time(ring, conn, params) == pytest.approx(mean)
    assert cycle_time(ring_overlay(conn, params, matching="greedy"), conn, params) > 0
    arcs = ~np.eye(conn.n, dtype=bool)
    arcs[0, 1] = False
    incomplete = make_connectivity(conn.latency_ms, conn.available_bps, arcs=arcs)
    with pytest.raises(ValueError, match="complete"):
        ring_overlay(incomplete, params)


def test_star_centres(gaia):
    conn, params = gaia
    assert star_overlay(conn, params, center="load").graph["server"] == 0   # all loads are zero
    best = star_overlay(conn, params, center="best")
    assert cycle_time(best, conn, params) <= cycle_time(star_overlay(conn, params), conn, params)
    with pytest.raises(ValueError, match="center"):
        star_overlay(conn, params, center=99)
    with pytest.raises(ValueError, match="center"):
        star_overlay(conn, params, center="median")
    with pytest.raises(ValueError, match="params"):
        star_overlay(conn, None, center="best")


def test_mst_rejects_disconnected_undirected_connectivity():
    arcs = np.zeros((4, 4), dtype=bool)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)]:
        arcs[a, b] = True          # strongly connected, but no pair has both arcs
    conn = make_connectivity(np.ones((4, 4)), 1e9, arcs=arcs)
    params = DelayParams(model_bits=1e6)
    with pytest.raises(ValueError, match="disconnected"):
        mst_overlay(conn, params)


def test_designed_overlays_never_lose_to_their_own_candidates(gaia):
    """delta-MBST returns the best of its candidates, and MST = delta-MBST's unconstrained tree."""
    conn, params = gaia
    mst = cycle_time(mst_overlay(conn, params), conn, params)
    mbst = cycle_time(delta_mbst_overlay(conn, params), conn, params)
    assert mbst <= mst + 1e-9
    W = overlay_delays(mst_overlay(conn, params), conn, params)
    assert max_cycle_mean(W) == pytest.approx(mst)


@pytest.mark.parametrize("kind", ["euclidean", "random", "ties"])
def test_exact_matching_lp_equals_blossom(kind):
    """The LP with odd-set cuts and pricing returns a minimum-weight perfect matching (vs networkx)."""
    from fedlab.topology.overlays import _blossom_matching, _exact_matching
    rng = np.random.default_rng({"euclidean": 0, "random": 1, "ties": 2}[kind])
    for _ in range(15):
        k = 2 * int(rng.integers(1, 30))
        if kind == "euclidean":
            xy = rng.random((k, 2))
            W = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
        else:
            W = rng.random((k, k)) if kind == "random" else rng.integers(0, 3, (k, k)).astype(float)
            W = W + W.T
        np.fill_diagonal(W, np.inf)
        nodes = rng.permutation(k + 3)[:k]          # matched nodes are a subset of a larger graph
        big = np.full((k + 3, k + 3), np.inf)
        big[np.ix_(nodes, nodes)] = W
        pairs = _exact_matching(big, nodes)
        assert sorted(np.ravel(pairs).tolist()) == sorted(nodes.tolist())
        cost = sum(big[a, b] for a, b in pairs)
        assert cost == pytest.approx(sum(big[a, b] for a, b in _blossom_matching(big, nodes)))


@pytest.mark.parametrize("k", [2, 3])
def test_prop_2_1_4_reduction_from_degree_constrained_spanning_tree(k):
    """Prop. 2.1.4: a spanning tree of max degree <= k exists iff the gadget's best tree has tau <= k + 1."""
    rng = np.random.default_rng(k)
    graphs = [nx.gnp_random_graph(int(rng.integers(3, 6)), 0.6, seed=int(rng.integers(1 << 30))) for _ in range(12)]
    outcomes = set()
    for graph in [g for g in graphs if nx.is_connected(g)] + [nx.star_graph(k + 1)]:   # the star has no such tree
        n = graph.number_of_nodes()
        # silo v -> v (M / C_UP = 1 ms) and its twin n + v (M / C_UP = k + 1 ms); l = 0, T_c = 0
        arcs = np.zeros((2 * n, 2 * n), dtype=bool)
        for u, v in list(graph.edges) + [(v, n + v) for v in range(n)]:
            arcs[u, v] = arcs[v, u] = True
        conn = make_connectivity(np.zeros((2 * n, 2 * n)), np.inf, arcs=arcs)
        up = np.r_[np.full(n, 1000.0), np.full(n, 1000.0 / (k + 1))]
        params = DelayParams(model_bits=1.0, compute_ms=0.0, up_bps=up, dn_bps=np.inf)
        trees = [list(t.edges) for t in nx.SpanningTreeIterator(graph)]
        best = min(cycle_time(overlay_from_edges(2 * n, t + [(v, n + v) for v in range(n)]), conn, params)
                   for t in trees)
        exists = any(max(d for _, d in nx.Graph(t).degree()) <= k for t in trees)
        assert (best <= k + 1 + 1e-9) == exists
        outcomes.add(exists)
    assert outcomes == {True, False}


def _zero_length_ties(rng, n=9):
    """Symmetric weights with many exact ties (co-located silos, as Exodus's zero-length links)."""
    w = rng.integers(1, 4, (n, n)).astype(float)
    w = np.triu(w, 1)
    w = w + w.T
    np.fill_diagonal(w, np.inf)
    return w


def test_kruskal_index_order_is_networkx_kruskal():
    """ties="index" returns networkx's Kruskal tree on from_numpy_array(weights) (the authors' code)."""
    rng = np.random.default_rng(0)
    for _ in range(30):
        W = _zero_length_ties(rng)
        ours = kruskal_tree(W)
        theirs = nx.minimum_spanning_tree(nx.from_numpy_array(np.where(np.isfinite(W), W, 0.0)), algorithm="kruskal")
        assert {frozenset(e) for e in ours.edges} == {frozenset(e) for e in theirs.edges}


def test_kruskal_degree_tie_break_keeps_the_minimum_weight_and_lowers_degrees():
    rng = np.random.default_rng(1)
    for _ in range(30):
        W = _zero_length_ties(rng)
        index, degree = kruskal_tree(W, "index"), kruskal_tree(W, "degree")
        assert nx.is_tree(degree) and degree.size(weight="weight") == pytest.approx(index.size(weight="weight"))
        assert degree.size(weight="weight") == pytest.approx(prim_tree(W).size(weight="weight"))
    # a star of equal weights around 0 and a path of equal weights: the degree rule picks the path
    W = np.full((4, 4), 1.0)
    np.fill_diagonal(W, np.inf)
    assert max(d for _, d in kruskal_tree(W, "index").degree()) == 3
    assert max(d for _, d in kruskal_tree(W, "degree").degree()) == 2


def test_kruskal_tree_validation():
    W = np.full((4, 4), np.inf)
    W[0, 1] = W[1, 0] = W[2, 3] = W[3, 2] = 1.0
    with pytest.raises(ValueError, match="disconnected"):
        kruskal_tree(W)
    with pytest.raises(ValueError, match="ties"):
        kruskal_tree(np.ones((3, 3)), ties="random")


def test_mst_overlay_reproduces_the_authors_tree_on_exodus():
    """Table 2.6 (2078 ms) with networkx's Kruskal order; the degree-aware tie-break is faster (section 5)."""
    conn, params = connectivity_graph(load_network("exodus")), preset_params("inaturalist", access_bps=1e9)
    assert cycle_time(mst_overlay(conn, params), conn, params) == pytest.approx(2078.3, abs=0.1)
    assert cycle_time(mst_overlay(conn, params, ties="degree"), conn, params) == pytest.approx(1808.9, abs=0.1)
    with pytest.raises(ValueError, match="ties"):
        mst_overlay(conn, params, ties="prim")


def test_ring_matching_gives_up_on_a_stalled_lp_and_stays_exact():
    """Exodus at 100 Mbps: the odd-set LP stalls between degenerate optima; blossom takes over (same length)."""
    conn, params = connectivity_graph(load_network("exodus")), preset_params("sub_inaturalist", access_bps=1e8)
    W = _symmetric_weights(degree_one_delays(conn, params))
    tour = christofides_tour(W)
    assert sorted(tour) == list(range(conn.n))
    length = sum(W[u, v] for u, v in zip(tour, tour[1:] + tour[:1]))
    assert length == pytest.approx(38557.699, abs=1e-2)
    assert cycle_time(ring_overlay(conn, params), conn, params) == pytest.approx(488.07, abs=0.01)
