"""Delay model (eq. 2.3), cycle time (eq. 2.5) and its closed forms."""
import networkx as nx
import numpy as np
import pytest

from fedlab.topology import (MODEL_SIZES, DelayParams, connectivity_delays, connectivity_graph, cycle_time,
                             degree_one_delays, load_network, make_connectivity, max_cycle_mean,
                             overlay_delays, overlay_from_edges, preset_params, star_overlay, throughput)


def toy(n=4, seed=0, access=1e9, compute=None):
    rng = np.random.default_rng(seed)
    lat = rng.uniform(5, 50, size=(n, n))
    avail = rng.uniform(1e8, 1e9, size=(n, n))
    conn = make_connectivity(lat, avail)
    params = DelayParams(model_bits=1e7, compute_ms=rng.uniform(1, 20, n) if compute is None else compute,
                         local_steps=2, up_bps=access, dn_bps=access)
    return conn, params


def test_eq_2_3_by_hand():
    conn, params = toy()
    overlay = overlay_from_edges(4, [(0, 1), (0, 2), (0, 3), (1, 2)], directed=True)
    W = overlay_delays(overlay, conn, params)
    comp = 2 * np.asarray(params.compute_ms)
    # arc 0 -> 1: out-degree of 0 is 3, in-degree of 1 is 1
    rate = min(1e9 / 3, 1e9 / 1, conn.available_bps[0, 1])
    assert W[0, 1] == pytest.approx(comp[0] + conn.latency_ms[0, 1] + 1000 * 1e7 / rate)
    # arc 1 -> 2: in-degree of 2 is 2
    rate = min(1e9 / 1, 1e9 / 2, conn.available_bps[1, 2])
    assert W[1, 2] == pytest.approx(comp[1] + conn.latency_ms[1, 2] + 1000 * 1e7 / rate)
    assert np.allclose(np.diag(W), comp)
    assert W[2, 0] == -np.inf


def test_edge_capacitated_delays_do_not_depend_on_the_overlay():
    conn, params = toy(access=np.inf)
    d_c = connectivity_delays(conn, params)
    for edges in ([(0, 1), (1, 2), (2, 3)], [(0, 1), (0, 2), (0, 3)]):
        W = overlay_delays(overlay_from_edges(4, edges), conn, params, self_loops=False)
        arcs = np.isfinite(W)
        assert np.allclose(W[arcs], d_c[arcs])


def test_degree_one_delays_are_the_ring_delays():
    conn, params = toy()
    ring = overlay_from_edges(4, [(0, 2), (2, 1), (1, 3), (3, 0)], directed=True)
    W = overlay_delays(ring, conn, params, self_loops=False)
    d1 = degree_one_delays(conn, params)
    assert np.allclose(W[np.isfinite(W)], d1[np.isfinite(W)])
    assert np.all(d1[np.isfinite(d1)] >= connectivity_delays(conn, params)[np.isfinite(d1)] - 1e-12)


def test_ring_closed_form():
    """F-C5: tau(ring) = max(mean arc delay, max_i s T_c(i))."""
    conn, params = toy(n=6, seed=2)
    order = [0, 3, 1, 5, 2, 4]
    ring = overlay_from_edges(6, zip(order, order[1:] + order[:1]), directed=True)
    d1 = degree_one_delays(conn, params)
    mean = np.mean([d1[a, b] for a, b in zip(order, order[1:] + order[:1])])
    assert cycle_time(ring, conn, params) == pytest.approx(max(mean, 2 * np.max(params.compute_ms)))
    slow = params.replace(compute_ms=np.r_[np.zeros(5), 1e4])
    assert cycle_time(ring, conn, slow) == pytest.approx(2 * 1e4)   # self-loop floor


def test_tree_closed_form_lemma_c2_node_capacitated():
    """F-C5 / Lemma C.2: tau(tree) = max over edges of (d_o(i,j) + d_o(j,i)) / 2 with degrees."""
    conn, params = toy(n=7, seed=3, access=2e8)
    tree = nx.random_labeled_tree(7, seed=3)
    overlay = overlay_from_edges(7, tree.edges)
    W = overlay_delays(overlay, conn, params)
    expected = max((W[u, v] + W[v, u]) / 2 for u, v in tree.edges)
    assert cycle_time(overlay, conn, params) == pytest.approx(max(expected, np.max(np.diag(W))))


def test_homogeneous_compute_shifts_cycle_time_linearly():
    """F-C6: tau(s) - tau(s') = (s - s') T_c for any fixed overlay."""
    conn, params = toy(n=5, compute=7.5)
    overlay = overlay_from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)], directed=True)
    taus = [cycle_time(overlay, conn, params.replace(local_steps=s)) for s in (1, 5, 10)]
    assert taus[1] - taus[0] == pytest.approx(4 * 7.5)
    assert taus[2] - taus[1] == pytest.approx(5 * 7.5)


def test_star_cycle_time_formula():
    """Spec section 3.4: tau_STAR = s T_c + max_i [up(i) + down(i)], the server does not train."""
    conn, params = toy(n=5, compute=10.0)
    star = star_overlay(conn, params, center=2)
    n = conn.n
    expected = 0.0
    for i in range(n):
        if i == 2:
            continue
        up = conn.latency_ms[i, 2] + 1000 * 1e7 / min(1e9, 1e9 / (n - 1), conn.available_bps[i, 2])
        down = conn.latency_ms[2, i] + 1000 * 1e7 / min(1e9 / (n - 1), 1e9, conn.available_bps[2, i])
        expected = max(expected, up + down)
    assert cycle_time(star, conn, params) == pytest.approx(2 * 10.0 + expected)
    # as a decentralised overlay the centre would also train: one more computation per round trip
    plain = nx.DiGraph(star)
    plain.graph.pop("server")
    assert 2 * cycle_time(plain, conn, params) == pytest.approx(cycle_time(star, conn, params) + 20.0)


def test_cycle_time_requires_a_strong_overlay_inside_g_c():
    conn, params = toy()
    with pytest.raises(ValueError, match="strongly connected"):
        cycle_time(overlay_from_edges(4, [(0, 1), (1, 2), (2, 3)], directed=True), conn, params)
    arcs = ~np.eye(4, dtype=bool)
    arcs[0, 3] = False
    sparse = make_connectivity(np.ones((4, 4)), 1e9, arcs=arcs)
    with pytest.raises(ValueError, match=r"arc \(0, 3\)"):
        cycle_time(overlay_from_edges(4, [(0, 3), (3, 1), (1, 2), (2, 0)], directed=True), sparse, params)
    with pytest.raises(ValueError, match="nodes"):
        cycle_time(overlay_from_edges(3, [(0, 1), (1, 2)]), conn, params)
    with pytest.raises(TypeError, match="overlay"):
        cycle_time(nx.complete_graph(4), conn, params)


@pytest.mark.parametrize("field, value, match", [
    ("model_bits", 0.0, "model_bits"), ("up_bps", 0.0, "up_bps"), ("dn_bps", -1e9, "dn_bps"),
    ("up_bps", [1e9, np.nan], "up_bps"), ("compute_ms", -1.0, "compute_ms"), ("local_steps", -1, "local_steps")])
def test_delay_params_validation(field, value, match):
    kwargs = {"model_bits": 1e6, "compute_ms": 1.0, "local_steps": 1, "up_bps": 1e9, "dn_bps": 1e9}
    kwargs[field] = value
    with pytest.raises(ValueError, match=match):
        DelayParams(**kwargs)


def test_delay_params_per_silo_length_is_checked():
    conn, _ = toy()
    params = DelayParams(model_bits=1e6, up_bps=[1e9, 1e9])
    with pytest.raises(ValueError, match="up_bps"):
        params.arrays(conn.n)


def test_presets_and_throughput():
    assert set(MODEL_SIZES) == {"shakespeare", "femnist", "sent140", "sub_inaturalist", "inaturalist"}
    for name in MODEL_SIZES:
        params = preset_params(name, access_bps=1e9, local_steps=3)
        assert params.local_steps == 3 and params.up_bps == params.dn_bps == 1e9
    with pytest.raises(ValueError, match="preset"):
        preset_params("imagenet")
    assert throughput(250.0) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="tau_ms"):
        throughput(0.0)


def test_overlay_from_edges_validation():
    assert sorted(overlay_from_edges(3, [(0, 1)]).edges) == [(0, 1), (1, 0)]
    with pytest.raises(ValueError, match="edges"):
        overlay_from_edges(3, [(0, 5)])


def test_cycle_time_equals_karp_on_own_gaia():
    conn = connectivity_graph(load_network("gaia"))
    params = preset_params("sub_inaturalist")
    ring = overlay_from_edges(11, zip(range(11), list(range(1, 11)) + [0]), directed=True)
    assert cycle_time(ring, conn, params) == pytest.approx(max_cycle_mean(overlay_delays(ring, conn, params)))
