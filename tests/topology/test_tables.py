"""Reproduction of the thesis's cycle-time tables on the five networks (spec sections 7 and 9).

Every network comes from the project's data (``data/networks/``). Gaia and AWS NA use the authors'
distances here (``load_network(name, authors_km=True)``); the project's own coordinates are checked
separately at the end (ranking only).
"""
import numpy as np
import pytest

from fedlab.topology import (DelayParams, connectivity_graph, cycle_time, load_network, overlay_from_edges,
                             preset_params)
from fedlab.topology.experiments import compare_overlays, matcha_schedules
from fedlab.topology.overlays import _symmetric_weights
from fedlab.topology.delays import connectivity_delays
from fedlab.topology.published import KNOWN_ERRATA, NETWORK_ORDER, SETTINGS, TABLES

DETERMINISTIC = ("star", "mst", "delta_mbst", "ring")


@pytest.fixture(scope="module")
def conns():
    return {name: connectivity_graph(load_network(name, authors_km=True)) for name in NETWORK_ORDER}


@pytest.fixture(scope="module")
def schedules(conns):
    return {name: matcha_schedules(conn) for name, conn in conns.items()}


def params_of(table):
    s = SETTINGS[table]
    return preset_params(s["preset"], access_bps=s["access_bps"], local_steps=s["local_steps"])


@pytest.fixture(scope="module")
def measured(conns):
    return {table: {name: compare_overlays(conn, params_of(table), names=DETERMINISTIC)
                    for name, conn in conns.items()} for table in TABLES}


@pytest.fixture(scope="module")
def matcha_2_5(conns, schedules):
    params = params_of("table_2_5")
    return {name: compare_overlays(conns[name], params, names=("matcha", "matcha+"), matcha_rounds=1000, seed=0,
                                   schedules=schedules[name]) for name in NETWORK_ORDER}


def close(measured, paper, abs_tol=None, rel_tol=None):
    return abs(measured - paper) <= (abs_tol if abs_tol is not None else rel_tol * paper)


@pytest.mark.parametrize("network", NETWORK_ORDER)
def test_table_2_5_star_mst_delta_mbst_ring(measured, network):
    """F-T1, F-T2, F-T3: STAR and MST within 1 ms, delta-MBST = MST, RING within 4 %."""
    got, paper = measured["table_2_5"][network], TABLES["table_2_5"][network]
    assert close(got["star"], paper["star"], abs_tol=1.0)
    assert close(got["mst"], paper["mst"], abs_tol=1.0)
    assert got["delta_mbst"] == pytest.approx(got["mst"])
    assert close(got["ring"], paper["ring"], rel_tol=0.04)


@pytest.mark.parametrize("network", NETWORK_ORDER)
def test_table_2_5_matcha(matcha_2_5, network):
    """F-T4: MATCHA within 3 %, MATCHA+ within 4 % (K = 1000, seed 0)."""
    paper = TABLES["table_2_5"][network]
    assert close(matcha_2_5[network]["matcha"], paper["matcha"], rel_tol=0.03)
    assert close(matcha_2_5[network]["matcha+"], paper["matcha+"], rel_tol=0.04)


@pytest.mark.parametrize("table", ["appendix_table_1", "appendix_table_2"])
@pytest.mark.parametrize("network", NETWORK_ORDER)
def test_appendix_tables(measured, table, network):
    """F-T5: STAR and MST within 0.5 ms (Géant STAR of App. C.2.1's Table 2 is an erratum: 863.0), RING within 2 %."""
    got, paper = measured[table][network], TABLES[table][network]
    star = KNOWN_ERRATA.get((table, network, "star"), paper["star"])
    assert close(got["star"], star, abs_tol=0.5)
    assert close(got["mst"], paper["mst"], abs_tol=0.5)
    assert close(got["ring"], paper["ring"], rel_tol=0.02)


@pytest.mark.parametrize("network", NETWORK_ORDER)
def test_table_2_6(measured, network):
    """F-T6: STAR within 1.5 ms, MST within 1 ms, delta-MBST within 1 %, RING within 2 %.

    Exceptions, reported in the notebook: on Exodus the MST is not unique (70 zero-length links
    tie) and with 1 Gbps access links the cycle time depends on which MST is taken (degrees enter
    eq. 2.3); Prim's tie-break gives a different tree than networkx's Kruskal used by the authors
    (see the next test), and delta-MBST lands 1.6 % above the paper for the same reason.
    """
    got, paper = measured["table_2_6"][network], TABLES["table_2_6"][network]
    assert close(got["star"], paper["star"], abs_tol=1.5)
    assert close(got["ring"], paper["ring"], rel_tol=0.02)
    if network == "exodus":
        assert paper["mst"] < got["mst"] < 1.1 * paper["mst"]
        assert close(got["delta_mbst"], paper["delta_mbst"], rel_tol=0.02)
    else:
        assert close(got["mst"], paper["mst"], abs_tol=1.0)
        assert close(got["delta_mbst"], paper["delta_mbst"], rel_tol=0.01)


def test_exodus_mst_ties_explain_table_2_6(conns):
    """Kruskal's MST (networkx's default) has the same weight as ours and reproduces the paper's 2078."""
    import networkx as nx
    from fedlab.topology import mst_overlay
    conn, params = conns["exodus"], params_of("table_2_6")
    W = _symmetric_weights(connectivity_delays(conn, params))
    G = nx.from_numpy_array(np.where(np.isfinite(W), W, 0.0))
    kruskal = nx.minimum_spanning_tree(G, algorithm="kruskal")
    ours = mst_overlay(conn, params).to_undirected()
    assert sum(W[u, v] for u, v in ours.edges) == pytest.approx(kruskal.size(weight="weight"))
    tau = cycle_time(overlay_from_edges(conn.n, kruskal.edges), conn, params)
    assert close(tau, TABLES["table_2_6"]["exodus"]["mst"], abs_tol=1.0)


def test_rankings_of_tables_2_5_and_2_6(measured, matcha_2_5):
    """F-T7: only gaps larger than 3 % are asserted."""
    gap = lambda a, b: a < b / 1.03  # noqa: E731
    for network in NETWORK_ORDER:
        t = {**measured["table_2_5"][network], **matcha_2_5[network]}
        if network == "geant":
            assert gap(t["mst"], t["ring"])
        else:
            assert gap(t["ring"], t["mst"])
        for fast in ("mst", "delta_mbst", "ring"):
            assert gap(t[fast], t["matcha"])
        assert gap(t["matcha"], t["star"])
        if network in ("geant", "exodus", "ebone"):
            assert gap(t["matcha+"], t["matcha"])
        else:
            assert t["matcha+"] == pytest.approx(t["matcha"])
        u = measured["table_2_6"][network]
        assert gap(u["ring"], u["delta_mbst"]) and gap(u["delta_mbst"], u["mst"]) and gap(u["mst"], u["star"])


def test_table_2_6_ring_beats_matcha_plus(conns, schedules, measured):
    params = params_of("table_2_6")
    for network in NETWORK_ORDER:
        matcha_plus = compare_overlays(conns[network], params, names=("matcha+",), matcha_rounds=200,
                                       schedules=schedules[network])["matcha+"]
        assert measured["table_2_6"][network]["ring"] < matcha_plus / 1.03


def test_star_over_ring_ratios(measured):
    """F-T8: RING is ~3.3x (Gaia) to ~9.4x (Ebone) faster than STAR."""
    ratio = {n: measured["table_2_5"][n]["star"] / measured["table_2_5"][n]["ring"] for n in NETWORK_ORDER}
    assert ratio["gaia"] == pytest.approx(3.3, abs=0.1)
    assert ratio["ebone"] == pytest.approx(9.4, abs=0.2)


def geant_params(access):
    return DelayParams(model_bits=44_961_717, compute_ms=25.4, local_steps=1, up_bps=access, dn_bps=access)


def test_fig_2_9a_access_capacity_sweep(conns, schedules):
    """F-T9: STAR/RING and MATCHA+/RING at 100 Mbps, RING best at <= 3 Gbps, MST best at >= 6 Gbps."""
    conn = conns["geant"]
    names = ("star", "matcha+", "mst", "delta_mbst", "ring")
    at = {a: compare_overlays(conn, geant_params(a), names=names, matcha_rounds=300, schedules=schedules["geant"])
          for a in (1e6, 1e8, 1e9, 3e9, 6e9, 1e10)}
    assert 65 <= at[1e8]["star"] / at[1e8]["ring"] <= 80
    assert 4.5 <= at[1e8]["matcha+"] / at[1e8]["ring"] <= 6
    for a in (1e8, 1e9, 3e9):
        assert all(at[a]["ring"] < at[a][o] / 1.03 for o in names if o != "ring")
    for a in (6e9, 1e10):
        assert at[a]["mst"] == pytest.approx(at[a]["delta_mbst"])
        assert all(at[a]["mst"] <= at[a][o] for o in names)
    assert at[1e6]["star"] / at[1e6]["ring"] == pytest.approx(2 * (conn.n - 1), abs=2)


def test_fig_2_9b_fast_centre(conns):
    """F-T10: with the centre at 10 Gbps and others at 100 Mbps, STAR is ~2x RING and ~delta-MBST."""
    conn = conns["geant"]
    access = np.full(conn.n, 1e8)
    access[0] = 1e10
    got = compare_overlays(conn, geant_params(access), names=DETERMINISTIC)
    assert 1.8 <= got["star"] / got["ring"] <= 2.2
    assert abs(got["star"] - got["delta_mbst"]) / got["delta_mbst"] < 0.05


def test_fig_2_10_speedup_shrinks_with_local_steps(conns):
    """F-T11: the STAR/RING speed-up decreases with s and tends to 1 (Exodus, Table 2.6 parameters)."""
    conn = conns["exodus"]
    speedups = []
    for s in (1, 2, 5, 10, 20, 50, 100):
        got = compare_overlays(conn, preset_params("inaturalist", 1e9, s), names=("star", "ring"))
        speedups.append(got["star"] / got["ring"])
    assert np.all(np.diff(speedups) < 0) and speedups[-1] < 1.3 and speedups[0] > 20


def test_own_coordinates_keep_the_ranking():
    """Gaia and AWS NA from data/sites.csv: RING < MST = delta-MBST < MATCHA < STAR (Table 2.5)."""
    params = params_of("table_2_5")
    for name in ("gaia", "aws_na"):
        conn = connectivity_graph(load_network(name))
        got = compare_overlays(conn, params, matcha_rounds=300)
        assert got["ring"] < got["mst"] / 1.03 < got["matcha"] / 1.03 < got["star"] / 1.03 ** 2
        assert got["delta_mbst"] == pytest.approx(got["mst"])
