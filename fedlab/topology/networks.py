r"""Underlays and connectivity graphs: the five networks of thesis section 2.1.4.2 and the model of G_c.

An *underlay* is the physical network (thesis section 2.1.2.2); here every underlay node hosts one
silo. The *connectivity graph* :math:`\mathcal{G}_c` holds, for every ordered pair of silos, the
end-to-end latency :math:`l(i,j)` and the available bandwidth :math:`A(i',j')` of the core path.
The operative model (spec section 5.3) routes on shortest paths by distance and sets

.. math:: l(i,j) = 0.0085 \cdot \mathrm{km}(i,j) + 4 \ \text{ms}, \qquad
          A(i',j') = C_{\mathrm{core}} / \mathrm{hops}(i,j),

with the 4 ms counted once per path [Gue+04].

Data sources
------------
* Gaia (11 AWS regions, [Hsi+17]) and AWS North America (22 AWS sites, [AWS20]) are full meshes
  built from ``data/sites.csv``: city coordinates written for this project, great-circle distances.
* Géant (Internet Topology Zoo, ``Geant2012``, [Kni+11]), Exodus (AS 3967) and Ebone (AS 1755)
  (Rocketfuel, [Spr+04]) are read from GML files with a per-link ``distance`` in km, as published
  by the thesis authors in ``github.com/omarfoq/communication-in-cross-silo-fl``
  (``graph_utils/data/``, Apache-2.0; Topology Zoo data are CC BY-SA). They are looked up in the
  data cache ``$FEDLAB_DATA/networks/`` (default ``~/.cache/fedlab/networks/``) or given by path.
"""
from __future__ import annotations

import csv
import hashlib
import os
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real

__all__ = [
    "Network",
    "Connectivity",
    "NETWORKS",
    "GML_FILES",
    "load_network",
    "read_gml_network",
    "network_from_sites",
    "read_sites",
    "great_circle_km",
    "random_geometric_network",
    "connectivity_graph",
    "make_connectivity",
    "data_dir",
    "SITES_CSV",
    "LATENCY_MS_PER_KM",
    "LATENCY_BASE_MS",
]

EARTH_RADIUS_KM = 6371.0088
LATENCY_MS_PER_KM = 0.0085
LATENCY_BASE_MS = 4.0
SITES_CSV = Path(__file__).resolve().parents[2] / "data" / "sites.csv"
GML_FILES = {"gaia": "gaia.gml", "aws_na": "amazon_us.gml", "geant": "geantdistance.gml",
             "exodus": "exodus.gml", "ebone": "ebone.gml"}
# SHA-256 of the files published by the thesis authors (snapshot 01b2aa38, 2022-10-10).
KNOWN_SHA256 = {
    "gaia.gml": "8ae5bb6a4bb6676e8e79184273b20e6fa92d961dd1f4bc08b9c65af0f18119c2",
    "amazon_us.gml": "1971219ca43b5bb6a0ad69fccbb4112f2821a0fe147eb5d5607889ba1ec0f355",
    "geantdistance.gml": "51fa3a65a900a7397992ce64dbf28f47a6e3e7ae4bc67ea4539050ad9d2785e1",
    "exodus.gml": "e119b951acc7fed6672878a8e611a65b0cacbf2cdb09c00d250d762e1c886ab2",
    "ebone.gml": "a6a8c12f7ec48c9712079c0d9ecbf8dd7586153cd19a49be31c7a6a44b19fe6a",
}
_REPO_URL = "https://github.com/omarfoq/communication-in-cross-silo-fl/tree/master/graph_utils/data"


@dataclass(frozen=True, eq=False)
class Network:
    """An underlay: undirected graph on silos ``0..N-1`` with link ``distance`` in km.

    Attributes
    ----------
    name : str
        Network name.
    graph : networkx.Graph
        Nodes ``0..N-1`` (attribute ``label``); edges carry ``distance`` (km).
    positions : numpy.ndarray or None, shape (N, 2)
        ``(latitude, longitude)`` in degrees when known (for drawing only).
    """

    name: str
    graph: nx.Graph
    positions: np.ndarray | None = None

    @property
    def names(self) -> list[str]:
        """Silo labels in index order."""
        return [str(self.graph.nodes[v].get("label", v)) for v in range(self.graph.number_of_nodes())]

    @property
    def n_silos(self) -> int:
        return self.graph.number_of_nodes()

    @property
    def n_links(self) -> int:
        return self.graph.number_of_edges()


def great_circle_km(lat1, lon1, lat2, lon2) -> np.ndarray:
    r"""Great-circle (haversine) distance in km on a sphere of radius 6371.0088 km.

    .. math:: d = 2R \arcsin\sqrt{\sin^2\tfrac{\Delta\varphi}{2}
              + \cos\varphi_1\cos\varphi_2\sin^2\tfrac{\Delta\lambda}{2}}

    Parameters
    ----------
    lat1, lon1, lat2, lon2 : array_like
        Coordinates in decimal degrees (broadcastable).

    Returns
    -------
    numpy.ndarray
        Distances in km.
    """
    p1, l1, p2, l2 = (np.radians(np.asarray(x, dtype=float)) for x in (lat1, lon1, lat2, lon2))
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin((l2 - l1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def read_sites(path: str | os.PathLike | None = None) -> dict[str, list[tuple[str, float, float]]]:
    """Read the site table (``data/sites.csv``): network -> list of ``(site, latitude, longitude)``.

    Parameters
    ----------
    path : path-like, optional
        CSV with columns ``network, site, latitude, longitude`` (``#`` lines are comments).

    Returns
    -------
    dict
        Sites per network, in file order.
    """
    path = Path(SITES_CSV if path is None else path)
    if not path.is_file():
        raise FileNotFoundError(f"site table not found at {path}; it ships with the fedlab "
                                "repository as data/sites.csv.")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = csv.DictReader(line for line in fh if not line.lstrip().startswith("#"))
        sites: dict[str, list[tuple[str, float, float]]] = {}
        for row in rows:
            sites.setdefault(row["network"], []).append(
                (row["site"], float(row["latitude"]), float(row["longitude"])))
    return sites


def network_from_sites(name: str, sites) -> Network:
    """Full-mesh underlay on the given sites, links weighted by great-circle distance (km).

    Parameters
    ----------
    name : str
        Network name.
    sites : sequence of (str, float, float)
        ``(label, latitude, longitude)`` per silo.

    Returns
    -------
    Network
    """
    if len(sites) < 2:
        raise ValueError(f"sites must list at least 2 sites, got {len(sites)}.")
    lat = check_array("latitude", [s[1] for s in sites], ndim=1)
    lon = check_array("longitude", [s[2] for s in sites], ndim=1)
    km = great_circle_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])
    graph = nx.Graph(name=name)
    for v, site in enumerate(sites):
        graph.add_node(v, label=str(site[0]))
    iu, ju = np.triu_indices(len(sites), 1)
    graph.add_edges_from((int(i), int(j), {"distance": float(km[i, j])}) for i, j in zip(iu, ju))
    return Network(name, graph, np.column_stack([lat, lon]))


def _gml_positions(graph: nx.Graph) -> np.ndarray | None:
    nodes = [graph.nodes[v] for v in graph.nodes]
    if all("Latitude" in d and "Longitude" in d for d in nodes):
        return np.array([[float(d["Latitude"]), float(d["Longitude"])] for d in nodes])
    return None


def _fill_distances(graph: nx.Graph, positions: np.ndarray | None, path: Path) -> None:
    """Give every edge a ``distance``: the file's value, else the great circle between end points."""
    for u, v, data in graph.edges(data=True):
        if "distance" in data:
            data["distance"] = float(data["distance"])
        elif positions is not None:
            data["distance"] = float(great_circle_km(*positions[u], *positions[v]))
        else:
            raise ValueError(f"{path}: edge ({u}, {v}) has no 'distance' and the nodes have no "
                             "Latitude/Longitude to compute it.")


def read_gml_network(path: str | os.PathLike, name: str | None = None) -> Network:
    """Read an underlay from GML (Topology Zoo / Rocketfuel files with per-link ``distance`` in km).

    Nodes are re-indexed ``0..N-1`` in file order (their ``label`` is kept). An edge without
    ``distance`` gets the great-circle distance of its end points when the nodes carry Topology
    Zoo ``Latitude``/``Longitude`` fields.

    Parameters
    ----------
    path : path-like
        GML file.
    name : str, optional
        Network name (default: the file stem).

    Returns
    -------
    Network
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {path} does not exist.")
    raw = nx.read_gml(path, label="id")
    graph = nx.convert_node_labels_to_integers(nx.Graph(raw), ordering="default")
    positions = _gml_positions(graph)
    _fill_distances(graph, positions, path)
    graph.graph = {"name": name or path.stem}
    return Network(name or path.stem, graph, positions)


def data_dir() -> Path:
    """The data cache: ``$FEDLAB_DATA`` or ``~/.cache/fedlab``."""
    return Path(os.environ.get("FEDLAB_DATA", "~/.cache/fedlab")).expanduser()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _find_gml(name: str, folder: str | os.PathLike | None) -> Path:
    """Locate the GML file of ``name`` in ``folder`` or in the cache, else explain what to do."""
    filename = GML_FILES[name]
    cache = data_dir() / "networks"
    candidates = ([Path(folder) / filename] if folder is not None else []) + [cache / filename]
    for candidate in candidates:
        if candidate.is_file():
            if _sha256(candidate) != KNOWN_SHA256[filename]:
                warnings.warn(f"{candidate} differs from the file published by the thesis authors "
                              "(SHA-256 mismatch); cycle times may differ from the paper.",
                              stacklevel=3)
            return candidate
    where = " or ".join(str(c.parent) for c in candidates)
    raise FileNotFoundError(
        f"network {name!r} needs the GML file {filename!r} (underlay with per-link 'distance' in km), "
        f"not found in {where}. Download it from {_REPO_URL}/{filename} and put it in {cache}/ "
        "(set FEDLAB_DATA to move the cache), or pass path=... or data_dir=... to load_network.")


def _load_sites(name: str, path=None, data_dir=None) -> Network:
    if path is not None:
        return read_gml_network(path, name)
    return network_from_sites(name, read_sites()[name])


def _load_gml(name: str, path=None, data_dir=None) -> Network:
    return read_gml_network(path if path is not None else _find_gml(name, data_dir), name)


NETWORKS = {
    "gaia": partial(_load_sites, "gaia"),
    "aws_na": partial(_load_sites, "aws_na"),
    "geant": partial(_load_gml, "geant"),
    "exodus": partial(_load_gml, "exodus"),
    "ebone": partial(_load_gml, "ebone"),
}


def load_network(name: str, path: str | os.PathLike | None = None,
                 data_dir: str | os.PathLike | None = None) -> Network:
    """Load one of the five underlays of the thesis (Table 2.5).

    Parameters
    ----------
    name : {"gaia", "aws_na", "geant", "exodus", "ebone"}
        Network name. Gaia and AWS NA are built from ``data/sites.csv`` (great-circle distances)
        unless ``path`` is given; the other three are read from GML.
    path : path-like, optional
        Explicit GML file (for Gaia/AWS NA: use the authors' ``gaia.gml``/``amazon_us.gml``).
    data_dir : path-like, optional
        Folder holding the GML files, searched before the cache ``$FEDLAB_DATA/networks``.

    Returns
    -------
    Network
    """
    check_choice("name", name, NETWORKS)
    network = NETWORKS[name](path=path, data_dir=data_dir)
    _check_underlay(network.graph)
    return network


def random_geometric_network(n: int, radius: float | None = None, size_km: float = 4000.0,
                             rng=None) -> Network:
    """A connected random geometric underlay: ``n`` points in a square, links shorter than ``radius``.

    Parameters
    ----------
    n : int
        Number of silos (>= 2).
    radius : float, optional
        Connection radius as a fraction of the side (default ``1.5 * sqrt(log(n) / (pi n))``).
    size_km : float
        Side of the square in km; link ``distance`` is the Euclidean length in km.
    rng : numpy.random.Generator or int or None
        Randomness; the radius grows by 10% until the graph is connected.

    Returns
    -------
    Network
    """
    n = check_int("n", n, low=2)
    size_km = check_real("size_km", size_km, low=0.0, low_open=True)
    gen = as_numpy_rng(rng)
    radius = 1.5 * np.sqrt(np.log(n) / (np.pi * n)) if radius is None else \
        check_real("radius", radius, low=0.0, low_open=True)
    xy = gen.random((n, 2))
    dist = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))
    while True:
        iu, ju = np.nonzero(np.triu(dist <= radius, 1))
        graph = nx.Graph()
        graph.add_nodes_from((v, {"label": str(v)}) for v in range(n))
        graph.add_edges_from((int(i), int(j), {"distance": float(dist[i, j] * size_km)})
                             for i, j in zip(iu, ju))
        if nx.is_connected(graph):
            return Network(f"rgg{n}", graph, None)
        radius *= 1.1


def _check_underlay(graph: nx.Graph) -> None:
    if set(graph.nodes) != set(range(graph.number_of_nodes())):
        raise ValueError("network graph must have the nodes 0..N-1 (silo indices).")
    if graph.number_of_nodes() < 2:
        raise ValueError(f"network must have at least 2 silos, got {graph.number_of_nodes()}.")
    if not nx.is_connected(graph):
        raise ValueError("network is disconnected: every pair of silos must be joined by a path.")
    bad = [(u, v, d) for u, v, d in graph.edges(data="distance") if not (d >= 0 and np.isfinite(d))]
    if bad:
        raise ValueError(f"network link distances must be finite and >= 0, got {bad[0]}.")


@dataclass(frozen=True, eq=False)
class Connectivity:
    r"""Connectivity graph :math:`\mathcal{G}_c`: latencies and available bandwidths of silo pairs.

    Attributes
    ----------
    latency_ms : numpy.ndarray, shape (N, N)
        :math:`l(i,j)` in ms (0 on the diagonal and on missing arcs).
    available_bps : numpy.ndarray, shape (N, N)
        :math:`A(i',j')` in bit/s (``inf`` allowed: an uncongested core).
    arcs : numpy.ndarray of bool, shape (N, N)
        ``arcs[i, j]`` iff silo ``i`` can send to ``j`` (:math:`(i,j)\in\mathcal{E}_c`).
    names : tuple of str
        Silo labels.
    name : str
        Network name.
    underlay : networkx.Graph or None
        The underlay (used by MATCHA+ and for drawing).
    positions : numpy.ndarray or None
        ``(lat, lon)`` of the silos, for drawing.
    hops : numpy.ndarray or None
        Hop count of the routed path.
    distance_km : numpy.ndarray or None
        Length of the routed path.
    """

    latency_ms: np.ndarray
    available_bps: np.ndarray
    arcs: np.ndarray
    names: tuple = ()
    name: str = "custom"
    underlay: nx.Graph | None = field(default=None, repr=False)
    positions: np.ndarray | None = field(default=None, repr=False)
    hops: np.ndarray | None = field(default=None, repr=False)
    distance_km: np.ndarray | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """Number of silos N."""
        return self.latency_ms.shape[0]

    @property
    def is_complete(self) -> bool:
        """True when every ordered pair of distinct silos is an arc."""
        return bool(self.arcs[~np.eye(self.n, dtype=bool)].all())


def _strongly_connected(arcs: np.ndarray) -> bool:
    n_comp = connected_components(csr_matrix(arcs), directed=True, connection="strong")[0]
    return n_comp == 1


def make_connectivity(latency_ms, available_bps=np.inf, arcs=None, names=None,
                      name: str = "custom", **extra) -> Connectivity:
    """Build and validate a connectivity graph from matrices (for toy examples and custom networks).

    Parameters
    ----------
    latency_ms : array_like, shape (N, N)
        End-to-end latency :math:`l(i,j)` in ms, >= 0 on arcs.
    available_bps : float or array_like, shape (N, N)
        Available bandwidth :math:`A(i',j')` in bit/s, > 0 on arcs (``inf`` allowed).
    arcs : array_like of bool, shape (N, N), optional
        Arc mask of :math:`\\mathcal{G}_c` (default: complete digraph). Must be strongly connected.
    names : sequence of str, optional
        Silo labels.
    name : str
        Network name.
    **extra
        ``underlay``, ``positions``, ``hops``, ``distance_km`` stored on the result.

    Returns
    -------
    Connectivity
    """
    lat = check_array("latency_ms", latency_ms, ndim=2, finite=False)
    n = lat.shape[0]
    if lat.shape != (n, n) or n < 2:
        raise ValueError(f"latency_ms must be a square (N, N) matrix with N >= 2, got {lat.shape}.")
    mask = ~np.eye(n, dtype=bool) if arcs is None else np.asarray(arcs, dtype=bool).copy()
    if mask.shape != (n, n):
        raise ValueError(f"arcs must have shape ({n}, {n}), got {mask.shape}.")
    np.fill_diagonal(mask, False)
    avail = np.broadcast_to(check_array("available_bps", available_bps, finite=False), (n, n)).copy()
    if np.any(np.isnan(lat[mask])) or np.any(lat[mask] < 0) or np.any(np.isinf(lat[mask])):
        raise ValueError("latency_ms must be finite and >= 0 on every arc, got minimum "
                         f"{np.nanmin(lat[mask]):.6g}.")
    if np.any(~(avail[mask] > 0)):
        raise ValueError("available_bps must be > 0 on every arc (inf allowed), got minimum "
                         f"{np.nanmin(avail[mask]):.6g}.")
    if not _strongly_connected(mask):
        raise ValueError("arcs must form a strongly connected digraph (the connectivity graph is "
                         "disconnected).")
    lat = np.where(mask, lat, 0.0)
    labels = tuple(str(x) for x in (names if names is not None else range(n)))
    if len(labels) != n:
        raise ValueError(f"names must have {n} entries, got {len(labels)}.")
    return Connectivity(lat, avail, mask, labels, name, **extra)


def _hop_counts(pred: np.ndarray) -> np.ndarray:
    """Hop count of every shortest path from scipy's predecessor matrix (-9999 at the source)."""
    n = pred.shape[0]
    parent = np.where(pred < 0, np.arange(n)[:, None], pred)
    hops = np.zeros((n, n), dtype=np.int64)
    for _ in range(n):
        new = np.take_along_axis(hops, parent, axis=1) + 1
        np.fill_diagonal(new, 0)
        if np.array_equal(new, hops):
            break
        hops = new
    return hops


def _route(graph: nx.Graph) -> tuple[np.ndarray, np.ndarray]:
    """Distance (km) and hop count of the distance-shortest path of every pair, fewest hops on ties."""
    n = graph.number_of_nodes()
    u, v, km = (np.array(x) for x in zip(*graph.edges(data="distance")))
    eps = 1e-7  # per-hop tie-break (km), far below any real length difference
    w = np.r_[km, km] + eps
    adj = csr_matrix((w, (np.r_[u, v], np.r_[v, u])), shape=(n, n))
    dist, pred = dijkstra(adj, directed=True, return_predecessors=True)
    hops = _hop_counts(pred)
    return np.maximum(dist - eps * hops, 0.0), hops


def connectivity_graph(network: Network, core_bps: float = 1e9,
                       ms_per_km: float = LATENCY_MS_PER_KM,
                       base_ms: float = LATENCY_BASE_MS) -> Connectivity:
    r"""Complete connectivity graph of an underlay (operative model of spec section 5.3).

    Every ordered pair of silos uses the distance-shortest underlay path (ties: fewest hops):

    .. math:: l(i,j) = \text{ms\_per\_km}\cdot \mathrm{km}(i,j) + \text{base\_ms}, \qquad
              A(i',j') = C_{\mathrm{core}} / \mathrm{hops}(i,j).

    Parameters
    ----------
    network : Network
        The underlay (connected, distances in km).
    core_bps : float
        Capacity :math:`C_{\mathrm{core}}` of every core link (bit/s, > 0; 1 Gbps in the thesis).
    ms_per_km, base_ms : float
        Latency model :math:`0.0085\,\mathrm{km} + 4` ms [Gue+04] (both >= 0).

    Returns
    -------
    Connectivity
    """
    if not isinstance(network, Network):
        raise TypeError(f"network must be a Network, got {type(network).__name__}.")
    _check_underlay(network.graph)
    core_bps = check_real("core_bps", core_bps, low=0.0, low_open=True)
    ms_per_km = check_real("ms_per_km", ms_per_km, low=0.0)
    base_ms = check_real("base_ms", base_ms, low=0.0)
    km, hops = _route(network.graph)
    latency = ms_per_km * km + base_ms
    np.fill_diagonal(latency, 0.0)
    avail = core_bps / np.maximum(hops, 1)
    return make_connectivity(latency, avail, names=network.names, name=network.name,
                             underlay=network.graph, positions=network.positions, hops=hops,
                             distance_km=km)
