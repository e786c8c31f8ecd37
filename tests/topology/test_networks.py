"""Networks: site table, the project's network tables (against the authors' GML files), GML, routing, G_c."""
import networkx as nx
import numpy as np
import pytest

from fedlab.topology import (NETWORKS, Connectivity, connectivity_graph, great_circle_km, load_network,
                             make_connectivity, network_from_sites, random_geometric_network, read_gml_network,
                             read_network_csv, read_sites)
from fedlab.topology.data import NETWORKS_DIR, SITES_CSV


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


def test_site_table_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="site table not found"):
        read_sites(tmp_path / "absent.csv")
    bad = tmp_path / "sites.csv"
    bad.write_text("# comment\nnetwork,site,latitude\ngaia,Virginia,39.0\n")
    with pytest.raises(ValueError, match=r"missing \['longitude'\]"):
        read_sites(bad)
    assert SITES_CSV.is_file()


@pytest.mark.parametrize("name, n, links", [("gaia", 11, 55), ("aws_na", 22, 231)])
def test_synthetic_networks_are_full_meshes(name, n, links):
    """F-N1 for the networks built from the project's own coordinates."""
    net = load_network(name)
    assert (net.n_silos, net.n_links) == (n, links)
    assert net.positions.shape == (n, 2)
    assert all(d > 0 for _, _, d in net.graph.edges(data="distance"))


@pytest.mark.parametrize("name, n, links, max_degree, diameter, zero_length", [
    ("gaia", 11, 55, 10, 1, 0), ("aws_na", 22, 231, 21, 1, 0), ("geant", 40, 61, 10, 8, 0),
    ("exodus", 79, 147, 12, 10, 70), ("ebone", 87, 161, 11, 11, 74)])
def test_published_networks_ship_with_the_project(name, n, links, max_degree, diameter, zero_length):
    """F-N1, F-N2: the thesis's node/link counts, max degree, hop diameter and co-located routers (spec 5.1)."""
    net = load_network(name, authors_km=True)
    assert net.name == name and net.graph.graph["name"] == name
    assert (net.n_silos, net.n_links) == (n, links)
    assert max(d for _, d in net.graph.degree()) == max_degree
    assert nx.diameter(net.graph) == diameter
    assert sum(d == 0 for _, _, d in net.graph.edges(data="distance")) == zero_length


def graph_fingerprint(net) -> str:
    """sha256 (16 hex digits) of a network's labels, links in order with lengths, coordinates and latencies."""
    import hashlib
    import json

    edges = [[str(u), str(v), float(d)] for u, v, d in net.graph.edges(data="distance")]
    body = {"names": list(net.names), "edges": edges,
            "positions": None if net.positions is None else net.positions.tolist(),
            "latency": connectivity_graph(net).latency_ms.tolist()}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", NETWORKS)
def test_project_tables_equal_the_authors_gml(reference_gml, reference_fingerprints, name):
    """Nodes, labels, coordinates, links (in order) and link lengths are those of the authors' GML file (or, without
    the file, of its recorded fingerprint)."""
    ours = load_network(name, authors_km=True)
    assert graph_fingerprint(ours) == reference_fingerprints[name]
    if reference_gml(name) is None:
        return
    ref = read_gml_network(reference_gml(name), name)
    assert graph_fingerprint(ref) == reference_fingerprints[name]
    assert ours.names == ref.names
    assert list(ours.graph.edges(data="distance")) == list(ref.graph.edges(data="distance"))
    assert {v: list(ours.graph.adj[v]) for v in ours.graph} == {v: list(ref.graph.adj[v]) for v in ref.graph}
    assert (ours.positions is None) == (ref.positions is None)
    if ref.positions is not None:
        np.testing.assert_array_equal(ours.positions, ref.positions)
    np.testing.assert_array_equal(connectivity_graph(ours).latency_ms, connectivity_graph(ref).latency_ms)


def test_network_tables_cite_their_sources():
    sources = {"gaia": "Gaia", "aws_na": "AWS", "geant": "Topology Zoo", "exodus": "Rocketfuel", "ebone": "Rocketfuel"}
    for name, source in sources.items():
        for table in ("nodes", "links"):
            lines = (NETWORKS_DIR / f"{name}_{table}.csv").read_text(encoding="utf-8").splitlines()
            head = " ".join(line[2:] for line in lines if line.startswith("# "))
            assert source in head and "omarfoq/communication-in-cross-silo-fl" in head
    assert "CC BY-SA 3.0" in (NETWORKS_DIR / "geant_links.csv").read_text(encoding="utf-8")


def test_geant_has_positions_and_rocketfuel_has_none():
    assert load_network("geant").positions.shape == (40, 2)
    assert load_network("ebone").positions is None


def test_every_network_name_is_dispatched():
    assert set(NETWORKS) == {"gaia", "aws_na", "geant", "exodus", "ebone"}
    for name in NETWORKS:
        assert load_network(name).name == name


def test_authors_km_changes_only_the_synthetic_networks():
    """The authors geocoded AWS NA's "San José" in Costa Rica; the real networks exist in one version only."""
    for name in ("geant", "exodus", "ebone"):
        a, b = load_network(name), load_network(name, authors_km=True)
        assert list(a.graph.edges(data="distance")) == list(b.graph.edges(data="distance"))
    ours, authors = load_network("aws_na"), load_network("aws_na", authors_km=True)
    sj, pa = ours.names.index("San Jose"), ours.names.index("Palo Alto")
    assert ours.graph[sj][pa]["distance"] < 30 < 4800 < authors.graph[sj][pa]["distance"]
    assert load_network("gaia", authors_km=True).positions is None
    with pytest.raises(TypeError, match="authors_km"):
        load_network("gaia", authors_km="yes")


def test_unknown_network_name():
    with pytest.raises(ValueError, match="name must be one of"):
        load_network("arpanet")


def write_tables(folder, nodes, links):
    (folder / "toy_nodes.csv").write_text("# a toy\nid,label,latitude,longitude\n" + nodes, encoding="utf-8")
    (folder / "toy_links.csv").write_text("source,target,distance_km\n" + links, encoding="utf-8")
    return folder / "toy_nodes.csv", folder / "toy_links.csv"


def test_read_network_csv_round_trip(tmp_path):
    nodes, links = write_tables(tmp_path, '0,"A, x",0.0,0.0\n1,B,0.0,1.0\n2,C,1.0,1.0\n', "1,2,50.5\n0,1,10.0\n")
    net = read_network_csv(nodes, links)
    assert net.name == "toy" and net.names == ["A, x", "B", "C"]
    assert list(net.graph.edges(data="distance")) == [(0, 1, 10.0), (1, 2, 50.5)]
    assert list(net.graph.adj[1]) == [2, 0]          # links are added in row order
    np.testing.assert_array_equal(net.positions, [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    nodes, links = write_tables(tmp_path, "0,A,,\n1,B,,\n", "0,1,3.0\n")
    assert read_network_csv(nodes, links, name="pair").positions is None


@pytest.mark.parametrize("nodes, links, match", [
    ("1,A,,\n0,B,,\n", "0,1,1.0\n", "0..N-1"),
    ("0,A,1.0,1.0\n1,B,,\n", "0,1,1.0\n", "every node or for none"),
    ("0,A,,\n1,B,,\n", "0,0,1.0\n", "two distinct nodes"),
    ("0,A,,\n1,B,,\n", "0,2,1.0\n", "two distinct nodes"),
    ("0,A,,\n1,B,,\n", "0,1,1.0\n1,0,2.0\n", "appear once"),
    ("0,A,,\n1,B,,\n", "0,1,far\n", r"numbers in \['distance_km'\]"),
    ("x,A,,\n", "", r"numbers in \['id'\]"),
])
def test_read_network_csv_rejects_bad_tables(tmp_path, nodes, links, match):
    with pytest.raises(ValueError, match=match):
        read_network_csv(*write_tables(tmp_path, nodes, links))


def test_read_network_csv_missing_file_or_column(tmp_path):
    nodes, links = write_tables(tmp_path, "0,A,,\n1,B,,\n", "0,1,1.0\n")
    with pytest.raises(FileNotFoundError, match="link table not found"):
        read_network_csv(nodes, tmp_path / "absent.csv")
    links.write_text("source,target\n0,1\n")
    with pytest.raises(ValueError, match="distance_km"):
        read_network_csv(nodes, links)


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
