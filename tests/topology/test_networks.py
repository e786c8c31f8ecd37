"""Networks: site table, GML loading, data cache messages, routing and the connectivity model."""
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from fedlab.topology import (GML_FILES, NETWORKS, Connectivity, connectivity_graph, data_dir, great_circle_km,
                             load_network, make_connectivity, network_from_sites, random_geometric_network,
                             read_gml_network, read_sites)

NET_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "networks"
needs_shared = pytest.mark.skipif(not NET_DIR.is_dir(), reason=f"shared network data not found at {NET_DIR}")


def test_great_circle_known_distances():
    quarter = np.pi / 2 * 6371.0088
    assert great_circle_km(0, 0, 0, 90) == pytest.approx(quarter)
    assert great_circle_km(90, 0, -90, 0) == pytest.approx(2 * quarter)
    assert great_circle_km(10, 20, 30, 40) == pytest.approx(great_circle_km(30, 40, 10, 20))
    # Dublin-Frankfurt ~ 1090 km (authors' geodesic value 1091.0)
    assert great_circle_km(53.3498, -6.2603, 50.1109, 8.6821) == pytest.approx(1090, abs=10)


def test_site_table_has_the_thesis_sites():
    sites = read_sites()
    assert [s[0] for s in sites["gaia"]] == ["Virginia", "California", "Oregon", "Dublin", "Frankfurt", "Tokyo",
                                             "Seoul", "Singapore", "Sydney", "Mumbai", "Sao Paulo"]
    assert len(sites["aws_na"]) == 22 and sites["aws_na"][0][0] == "Ashburn"
    for rows in sites.values():
        for _, lat, lon in rows:
            assert -90 <= lat <= 90 and -180 <= lon <= 180


@pytest.mark.parametrize("name, n, links", [("gaia", 11, 55), ("aws_na", 22, 231)])
def test_synthetic_networks_are_full_meshes(name, n, links):
    """F-N1 for the networks built from the project's own coordinates."""
    net = load_network(name)
    assert (net.n_silos, net.n_links) == (n, links)
    assert net.positions.shape == (n, 2)
    assert all(d > 0 for _, _, d in net.graph.edges(data="distance"))


@needs_shared
@pytest.mark.parametrize("name, n, links, max_degree", [
    ("gaia", 11, 55, 10), ("aws_na", 22, 231, 21), ("geant", 40, 61, 10), ("exodus", 79, 147, 12),
    ("ebone", 87, 161, 11)])
def test_gml_networks_counts(name, n, links, max_degree):
    """F-N1, F-N2: node/link counts of the thesis and underlay max degree (Géant: 10)."""
    net = load_network(name, path=NET_DIR / GML_FILES[name]) if name in ("gaia", "aws_na") \
        else load_network(name, data_dir=NET_DIR)
    assert (net.n_silos, net.n_links) == (n, links)
    assert max(d for _, d in net.graph.degree()) == max_degree
    assert nx.is_connected(net.graph)


@needs_shared
def test_geant_has_positions_and_rocketfuel_has_none():
    assert load_network("geant", data_dir=NET_DIR).positions.shape == (40, 2)
    assert load_network("ebone", data_dir=NET_DIR).positions is None


def test_every_network_name_is_dispatched():
    assert set(NETWORKS) == {"gaia", "aws_na", "geant", "exodus", "ebone"}
    for name in NETWORKS:
        try:
            net = load_network(name, data_dir=NET_DIR if NET_DIR.is_dir() else None)
        except FileNotFoundError:
            continue
        assert net.name == name


def test_unknown_network_name():
    with pytest.raises(ValueError, match="name must be one of"):
        load_network("arpanet")


def test_missing_gml_explains_what_to_download(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    with pytest.raises(FileNotFoundError) as err:
        load_network("ebone")
    message = str(err.value)
    assert "ebone.gml" in message and str(tmp_path / "networks") in message and "github.com" in message


GML = """graph [
  node [ id 0 label "A" Latitude 0.0 Longitude 0.0 ]
  node [ id 1 label "B" Latitude 0.0 Longitude 1.0 ]
  node [ id 2 label "C" Latitude 1.0 Longitude 1.0 ]
  edge [ source 0 target 1 ]
  edge [ source 1 target 2 distance 50.0 ]
]
"""


def test_read_gml_fills_missing_distances_from_coordinates(tmp_path):
    path = tmp_path / "toy.gml"
    path.write_text(GML)
    net = read_gml_network(path)
    assert net.names == ["A", "B", "C"]
    assert net.graph[0][1]["distance"] == pytest.approx(great_circle_km(0, 0, 0, 1))
    assert net.graph[1][2]["distance"] == 50.0


def test_cache_file_with_unexpected_hash_warns(tmp_path, monkeypatch):
    (tmp_path / "networks").mkdir()
    (tmp_path / "networks" / "ebone.gml").write_text(GML)
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path))
    with pytest.warns(UserWarning, match="SHA-256"):
        net = load_network("ebone")
    assert net.n_silos == 3


def test_disconnected_underlay_is_rejected():
    graph = nx.Graph()
    graph.add_edge(0, 1, distance=1.0)
    graph.add_edge(2, 3, distance=1.0)
    from fedlab.topology import Network
    with pytest.raises(ValueError, match="disconnected"):
        connectivity_graph(Network("split", graph))


def test_connectivity_model_latency_once_per_path_and_bandwidth_per_hop():
    """Spec section 5.3: l = 0.0085 km + 4 (once per path), A = C_core / hops; ties by fewest hops."""
    from fedlab.topology import Network
    graph = nx.Graph()
    graph.add_nodes_from(range(4))
    graph.add_edge(0, 1, distance=100.0)
    graph.add_edge(1, 2, distance=200.0)
    graph.add_edge(2, 3, distance=0.0)
    graph.add_edge(1, 3, distance=200.0)   # tie with 1-2-3: fewest hops wins
    conn = connectivity_graph(Network("toy", graph), core_bps=1e9)
    assert conn.latency_ms[0, 2] == pytest.approx(0.0085 * 300 + 4)
    assert conn.available_bps[0, 2] == pytest.approx(1e9 / 2)
    assert conn.hops[1, 3] == 1 and conn.available_bps[1, 3] == pytest.approx(1e9)
    assert conn.latency_ms[2, 3] == pytest.approx(4.0)
    assert np.allclose(conn.latency_ms, conn.latency_ms.T) and np.all(np.diag(conn.latency_ms) == 0)
    assert conn.is_complete and conn.n == 4


def test_connectivity_graph_arguments_are_validated():
    net = load_network("gaia")
    with pytest.raises(ValueError, match="core_bps"):
        connectivity_graph(net, core_bps=0.0)
    with pytest.raises(ValueError, match="ms_per_km"):
        connectivity_graph(net, ms_per_km=-1.0)
    with pytest.raises(TypeError, match="network"):
        connectivity_graph(nx.complete_graph(3))


def test_make_connectivity_validation():
    lat = np.ones((3, 3))
    assert isinstance(make_connectivity(lat, 1e9), Connectivity)
    with pytest.raises(ValueError, match="latency_ms"):
        make_connectivity(-lat, 1e9)
    with pytest.raises(ValueError, match="available_bps"):
        make_connectivity(lat, 0.0)
    with pytest.raises(ValueError, match="available_bps"):
        make_connectivity(lat, -np.ones((3, 3)))
    arcs = np.zeros((3, 3), dtype=bool)
    arcs[0, 1] = arcs[1, 0] = True
    with pytest.raises(ValueError, match="disconnected"):
        make_connectivity(lat, 1e9, arcs=arcs)
    with pytest.raises(ValueError, match="names"):
        make_connectivity(lat, 1e9, names=["a"])
    conn = make_connectivity(lat, np.inf, arcs=~np.eye(3, dtype=bool) & ~np.eye(3, k=1, dtype=bool))
    assert not conn.is_complete


def test_network_from_sites_rejects_bad_input():
    with pytest.raises(ValueError, match="sites"):
        network_from_sites("x", [("a", 0.0, 0.0)])
    with pytest.raises(ValueError, match="latitude"):
        network_from_sites("x", [("a", np.nan, 0.0), ("b", 1.0, 1.0)])


def test_random_geometric_network_is_connected_and_seeded():
    a, b = random_geometric_network(60, rng=1), random_geometric_network(60, rng=1)
    assert a.n_silos == 60 and nx.is_connected(a.graph)
    assert sorted(a.graph.edges) == sorted(b.graph.edges)
    with pytest.raises(ValueError, match="n"):
        random_geometric_network(1)
