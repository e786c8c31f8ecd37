r"""The chapter's data: the five networks of thesis section 2.1.4.2, the model of G_c, and the silos' training data.

An *underlay* is the physical network (thesis section 2.1.2.2); here every underlay node hosts one
silo. The *connectivity graph* :math:`\mathcal{G}_c` holds, for every ordered pair of silos, the
end-to-end latency :math:`l(i,j)` and the available bandwidth :math:`A(i',j')` of the core path.
The operative model (spec section 5.3) routes on shortest paths by distance and sets

.. math:: l(i,j) = 0.0085 \cdot \mathrm{km}(i,j) + 4 \ \text{ms}, \qquad
          A(i',j') = C_{\mathrm{core}} / \mathrm{hops}(i,j),

with the 4 ms counted once per path [Gue+04].

Data sources
------------
Every network ships with the repository (``data/``; sources and licences in ``data/README.md``):

* Gaia (11 AWS regions, [Hsi+17]) and AWS North America (22 AWS sites, [AWS20]) are full meshes
  built from ``data/sites.csv``: city coordinates written for this project, great-circle distances.
  The link lengths published by the thesis authors (state centroids; AWS NA's "San José" geocoded in
  Costa Rica) are in ``data/networks/`` as well (``load_network(name, authors_km=True)``).
* Géant (Internet Topology Zoo, ``Geant2012``, [Kni+11]; CC BY-SA 3.0), Exodus (AS 3967) and Ebone
  (AS 1755) (Rocketfuel, [Spr+04]) are read from ``data/networks/<name>_nodes.csv`` and
  ``<name>_links.csv``: the nodes, coordinates, links and per-link ``distance`` in km of the variants
  published by the thesis authors in ``github.com/omarfoq/communication-in-cross-silo-fl``
  (``graph_utils/data/``, Apache-2.0).

:func:`read_gml_network` reads the same facts from GML files (Topology Zoo, Rocketfuel or the
authors' files), and :func:`read_network_csv` any network written in the project's two-table format.

Training data
-------------
:func:`topology_federation` splits LEAF Synthetic over the silos of a network: the CPU-scale stand-in for the thesis's
iNaturalist and LEAF silos (section 2.1.4.3) on which the overlays train (the real data sets are the paper mode's,
:mod:`fedlab.topology.real_data`).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from fedlab._rng import Stream, as_numpy_rng, derive_seed, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_path, check_real, check_type
from fedlab.data import make_leaf_synthetic
from fedlab.engine import FederatedDataset

__all__ = [
    "Network",
    "Connectivity",
    "NETWORKS",
    "load_network",
    "read_network_csv",
    "read_gml_network",
    "network_from_sites",
    "read_sites",
    "great_circle_km",
    "random_geometric_network",
    "connectivity_graph",
    "make_connectivity",
    "topology_federation",
    "SITES_CSV",
    "NETWORKS_DIR",
    "LATENCY_MS_PER_KM",
    "LATENCY_BASE_MS",
    "AUTHORS_KM",
]

EARTH_RADIUS_KM = 6371.0088
LATENCY_MS_PER_KM = 0.0085
LATENCY_BASE_MS = 4.0
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
SITES_CSV = DATA_DIR / "sites.csv"
NETWORKS_DIR = DATA_DIR / "networks"
AUTHORS_KM = " (authors' km)"
"""Suffix naming Gaia or AWS NA on the authors' link lengths (``load_network(name, authors_km=True)``) in tables."""


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

    def __post_init__(self) -> None:
        check_type("name", self.name, str)
        if not isinstance(self.graph, nx.Graph) or self.graph.is_directed():
            raise TypeError(f"graph must be an undirected networkx.Graph, got {type(self.graph).__name__}.")
        if self.positions is not None:
            object.__setattr__(self, "positions", check_array("positions", self.positions,
                                                              shape=(self.graph.number_of_nodes(), 2)))

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
    for name, value, bound in (("lat1", lat1, 90), ("lon1", lon1, 360), ("lat2", lat2, 90), ("lon2", lon2, 360)):
        if np.any(np.abs(check_array(name, value)) > bound):
            raise ValueError(f"{name} must be in decimal degrees within [-{bound}, {bound}], got {value!r}.")
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
    sites: dict[str, list[tuple[str, float, float]]] = {}
    for row in _read_csv(SITES_CSV if path is None else check_path("path", path), "site table",
                         ("network", "site", "latitude", "longitude")):
        lat, lon = _numbers(row, ("latitude", "longitude"), float, Path(SITES_CSV if path is None else path))
        sites.setdefault(row["network"], []).append((row["site"], lat, lon))
    return sites


def _read_csv(path: Path, what: str, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of a CSV table whose ``#`` lines are comments, after checking that ``columns`` are present."""
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found at {path} (the project's tables ship with the fedlab "
                                "repository under data/).")
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(line for line in fh if not line.lstrip().startswith("#"))
        missing = sorted(set(columns) - set(reader.fieldnames or ()))
        if missing:
            raise ValueError(f"{what} {path} must have the columns {list(columns)}, missing {missing}.")
        return list(reader)


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
    check_type("name", name, str)
    if not isinstance(sites, (list, tuple)) or not all(isinstance(s, (list, tuple)) and len(s) == 3 for s in sites):
        raise TypeError(f"sites must be a list of (label, latitude, longitude) triples, got {sites!r:.80}.")
    if len(sites) < 2:
        raise ValueError(f"sites must list at least 2 sites, got {len(sites)}.")
    lat = check_array("sites latitude", [s[1] for s in sites], ndim=1)
    lon = check_array("sites longitude", [s[2] for s in sites], ndim=1)
    if np.any(np.abs(lat) > 90) or np.any(np.abs(lon) > 360):
        raise ValueError("sites must hold latitudes in [-90, 90] and longitudes in [-360, 360] (decimal degrees).")
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
    path = check_path("path", path)
    check_type("name", name, str, optional=True)
    if not path.is_file():
        raise FileNotFoundError(f"path {path} does not exist.")
    raw = nx.read_gml(path, label="id")
    graph = nx.convert_node_labels_to_integers(nx.Graph(raw), ordering="default")
    positions = _gml_positions(graph)
    _fill_distances(graph, positions, path)
    graph.graph = {"name": name or path.stem}
    return Network(name or path.stem, graph, positions)


def _numbers(row: dict[str, str], keys: tuple[str, ...], cast, path: Path) -> tuple:
    """The fields ``keys`` of a table row converted by ``cast``, or an error naming the table and the row."""
    try:
        return tuple(cast(row[key]) for key in keys)
    except (TypeError, ValueError) as err:
        raise ValueError(f"table {path}: the row {dict(row)} must hold numbers in {list(keys)}.") from err


def _csv_positions(rows: list[dict[str, str]], path: Path) -> np.ndarray | None:
    """``(latitude, longitude)`` of every node, or None when the table gives none."""
    given = [bool((row["latitude"] or "").strip() and (row["longitude"] or "").strip()) for row in rows]
    if not any(given):
        return None
    if not all(given):
        raise ValueError(f"node table {path} must give latitude and longitude for every node or for none.")
    return np.array([_numbers(row, ("latitude", "longitude"), float, path) for row in rows])


def _add_links(graph: nx.Graph, rows: list[dict[str, str]], path: Path) -> None:
    """Add one undirected link per row, in row order, refusing self-loops, repeats and unknown nodes."""
    n = graph.number_of_nodes()
    for row in rows:
        u, v = _numbers(row, ("source", "target"), int, path)
        (km,) = _numbers(row, ("distance_km",), float, path)
        if u == v or not (0 <= u < n and 0 <= v < n) or graph.has_edge(u, v):
            raise ValueError(f"link table {path}: link ({u}, {v}) must join two distinct nodes among "
                             f"0..{n - 1} and appear once.")
        graph.add_edge(u, v, distance=km)


def read_network_csv(nodes_path: str | os.PathLike, links_path: str | os.PathLike,
                     name: str | None = None) -> Network:
    """Read an underlay from the project's two tables (the format of ``data/networks/``).

    ``#`` lines are comments. The node table has the columns ``id, label, latitude, longitude``
    (ids ``0..N-1`` in row order; coordinates in decimal degrees, for drawing, given for every node
    or left empty for all). The link table has ``source, target, distance_km``: one undirected link
    per row, its length in km. Links are added in row order.

    Parameters
    ----------
    nodes_path, links_path : path-like
        Node and link tables.
    name : str, optional
        Network name (default: the node table's stem without ``_nodes``).

    Returns
    -------
    Network
    """
    nodes_path, links_path = check_path("nodes_path", nodes_path), check_path("links_path", links_path)
    check_type("name", name, str, optional=True)
    nodes = _read_csv(nodes_path, "node table", ("id", "label", "latitude", "longitude"))
    links = _read_csv(links_path, "link table", ("source", "target", "distance_km"))
    ids = [_numbers(row, ("id",), int, nodes_path)[0] for row in nodes]
    if ids != list(range(len(nodes))):
        raise ValueError(f"node table {nodes_path} must number its nodes 0..N-1 in row order, got {ids[:10]}.")
    name = name or nodes_path.stem.removesuffix("_nodes")
    graph = nx.Graph(name=name)
    graph.add_nodes_from((v, {"label": row["label"]}) for v, row in enumerate(nodes))
    _add_links(graph, links, links_path)
    return Network(name, graph, _csv_positions(nodes, nodes_path))


def _load_published(name: str) -> Network:
    """The thesis authors' variant of a network, from ``data/networks/``."""
    return read_network_csv(NETWORKS_DIR / f"{name}_nodes.csv", NETWORKS_DIR / f"{name}_links.csv", name)


def _load_sites(name: str) -> Network:
    """A full mesh on the project's own site coordinates (``data/sites.csv``)."""
    return network_from_sites(name, read_sites()[name])


NETWORKS = {
    "gaia": partial(_load_sites, "gaia"),
    "aws_na": partial(_load_sites, "aws_na"),
    "geant": partial(_load_published, "geant"),
    "exodus": partial(_load_published, "exodus"),
    "ebone": partial(_load_published, "ebone"),
}


def load_network(name: str, authors_km: bool = False) -> Network:
    """Load one of the five underlays of the thesis (section 2.1.4.2, Table 2.5) from the project's data.

    Parameters
    ----------
    name : {"gaia", "aws_na", "geant", "exodus", "ebone"}
        Network name. Gaia and AWS NA are built from ``data/sites.csv`` (great-circle distances);
        Géant, Exodus and Ebone are read from ``data/networks/`` (the authors' link lengths).
    authors_km : bool
        Gaia and AWS NA with the link lengths published by the thesis authors instead
        (``data/networks/``; what reproduces their tables). Géant, Exodus and Ebone only exist in
        that version, so it does not change them.

    Returns
    -------
    Network
    """
    check_choice("name", name, NETWORKS)
    if not isinstance(authors_km, bool):
        raise TypeError(f"authors_km must be a bool, got {authors_km!r}.")
    network = _load_published(name) if authors_km else NETWORKS[name]()
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

    def __post_init__(self) -> None:
        lat = check_array("latency_ms", self.latency_ms, ndim=2)
        n = lat.shape[0]
        if lat.shape != (n, n) or n < 2:
            raise ValueError(f"latency_ms must be a square (N, N) matrix with N >= 2, got {lat.shape}.")
        arcs = np.asarray(self.arcs)
        if arcs.dtype != bool or arcs.shape != (n, n):
            raise TypeError(f"arcs must be a bool array of shape ({n}, {n}), got {arcs.dtype} {arcs.shape}.")
        avail = check_array("available_bps", self.available_bps, shape=(n, n), finite=False)
        off = arcs & ~np.eye(n, dtype=bool)
        if np.any(lat < 0):
            raise ValueError(f"latency_ms must be >= 0, got minimum {lat.min():.6g}.")
        if np.any(np.isnan(avail)) or np.any(avail < 0) or np.any(~(avail[off] > 0)):
            raise ValueError("available_bps must be > 0 on every arc (inf allowed), got minimum "
                             f"{np.nanmin(avail[off]):.6g}.")
        if not _strongly_connected(off):
            raise ValueError("arcs must form a strongly connected digraph (the connectivity graph is disconnected).")
        names = check_type("names", self.names, tuple)
        if names and (len(names) != n or not all(isinstance(x, str) for x in names)):
            raise ValueError(f"names must hold {n} silo labels (str), got {names!r:.80}.")
        check_type("name", self.name, str)

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
    mask = ~np.eye(n, dtype=bool) if arcs is None else np.asarray(arcs).copy()
    if mask.dtype.kind not in "biu" or mask.shape != (n, n) or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"arcs must be a bool (or 0/1) array of shape ({n}, {n}), got {mask.dtype} {mask.shape}.")
    mask = mask.astype(bool)
    np.fill_diagonal(mask, False)
    avail = check_array("available_bps", available_bps, finite=False)
    if avail.ndim not in (0, 2) or (avail.ndim == 2 and avail.shape != (n, n)):
        raise ValueError(f"available_bps must be a scalar or an ({n}, {n}) matrix, got shape {avail.shape}.")
    avail = np.broadcast_to(avail, (n, n)).copy()
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
    if names is not None and (isinstance(names, str) or not isinstance(names, (list, tuple, np.ndarray))):
        raise TypeError(f"names must be a sequence of {n} silo labels, got {names!r}.")
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


def topology_federation(n_silos: int, seed: int = 0, *, heterogeneity: float = 0.5,
                        max_samples: int = 500) -> FederatedDataset:
    r"""LEAF Synthetic(:math:`\gamma, \delta`) split over the silos of a network, 20 % test per silo.

    Silo sizes are :math:`\min(\lfloor\mathrm{LogN}(4, 1)\rfloor + 50,` ``max_samples``:math:`)`; the
    CPU-scale stand-in for the thesis's iNaturalist and LEAF silos (section 2.1.4.3).

    Parameters
    ----------
    n_silos : int
        Number of silos (>= 2).
    seed : int
    heterogeneity : float
        :math:`\gamma = \delta \ge 0` of the generator.
    max_samples : int
        Cap on a silo's samples.
    """
    n_silos = check_int("n_silos", n_silos, low=2)
    check_int("seed", seed, low=0)
    heterogeneity = check_real("heterogeneity", heterogeneity, low=0.0)
    max_samples = check_int("max_samples", max_samples, low=10)
    rng = numpy_rng(seed, Stream.TOPOLOGY_DATA)
    sizes = np.minimum(rng.lognormal(4.0, 1.0, size=n_silos).astype(np.int64) + 50, max_samples)
    arrays = make_leaf_synthetic(heterogeneity, heterogeneity, n_samples=sizes, dim=60, n_classes=10, rng=rng)
    return FederatedDataset.from_client_arrays(arrays.xs, arrays.ys, test_fraction=0.2, n_classes=10,
                                               seed=derive_seed(seed, Stream.TOPOLOGY_DATA, 1))
