r"""Delay model of an overlay (thesis eq. 2.3) and its cycle time (eq. 2.5).

For an arc :math:`(i,j)` of the overlay :math:`\mathcal{G}_o` (thesis eq. 2.3),

.. math:: d_o(i,j) = s\,T_c(i) + l(i,j) + \frac{M}{\min\left(\frac{C_{UP}(i)}{|\mathcal{N}_i^-|},
          \frac{C_{DN}(j)}{|\mathcal{N}_j^+|}, A(i',j')\right)}, \qquad d_o(i,i) = s\,T_c(i),

with :math:`|\mathcal{N}_i^-|` the out-degree of :math:`i` and :math:`|\mathcal{N}_j^+|` the
in-degree of :math:`j`. Units: ``M`` in bits, capacities in bit/s, times in ms, so the transmission
term is :math:`1000\,M/\text{rate}` ms. *Edge-capacitated* networks have
:math:`C_{UP} = C_{DN} = \infty` (pass ``np.inf``), *node-capacitated* ones finite access links.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_type
from fedlab.topology.bounds import max_cycle_mean
from fedlab.topology.data import Connectivity

__all__ = [
    "DelayParams",
    "MODEL_SIZES",
    "preset_params",
    "overlay_delays",
    "connectivity_delays",
    "degree_one_delays",
    "cycle_time",
    "throughput",
    "overlay_from_edges",
]

# Table 2.4 models; M is the size used by the authors' simulator in bits (spec section 5.3, E9).
MODEL_SIZES = {
    "shakespeare": {"model_bits": 3_385_747.0, "compute_ms": 389.6},
    "femnist": {"model_bits": 4_843_243.0, "compute_ms": 4.6},
    "sent140": {"model_bits": 19_269_416.0, "compute_ms": 9.8},
    "sub_inaturalist": {"model_bits": 44_961_717.0, "compute_ms": 25.4},
    "inaturalist": {"model_bits": 161.06e6, "compute_ms": 946.7},
}


def _check_capacity(name: str, value) -> np.ndarray:
    """A scalar or per-silo capacity in bit/s: > 0, ``inf`` allowed (an unconstrained link)."""
    arr = check_array(name, value, finite=False)
    if arr.ndim > 1 or np.any(~(arr > 0)):
        raise ValueError(f"{name} must be a scalar or a 1-D array of capacities > 0 (bit/s, inf "
                         f"allowed), got {value!r}.")
    return arr


@dataclass(frozen=True, eq=False)
class DelayParams:
    r"""Silo-side parameters of eq. (2.3).

    Attributes
    ----------
    model_bits : float
        Model size :math:`M` in bits (> 0).
    compute_ms : float or array_like, shape (N,)
        :math:`T_c(i)`, time of one local update in ms (>= 0).
    local_steps : int
        Number :math:`s` of local steps per communication round (>= 0).
    up_bps, dn_bps : float or array_like, shape (N,)
        Access capacities :math:`C_{UP}(i)`, :math:`C_{DN}(i)` in bit/s (> 0, ``inf`` allowed).
    """

    model_bits: float
    compute_ms: float | np.ndarray = 0.0
    local_steps: int = 1
    up_bps: float | np.ndarray = 1e10
    dn_bps: float | np.ndarray = 1e10

    def __post_init__(self):
        check_real("model_bits", self.model_bits, low=0.0, low_open=True)
        if check_array("compute_ms", self.compute_ms, nonnegative=True).ndim > 1:
            raise ValueError("compute_ms must be a scalar or a 1-D array (one value per silo).")
        check_int("local_steps", self.local_steps, low=0)
        _check_capacity("up_bps", self.up_bps)
        _check_capacity("dn_bps", self.dn_bps)

    def arrays(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(s * T_c, C_UP, C_DN)`` broadcast to length ``n``."""
        out = []
        for name, value in (("compute_ms", self.compute_ms), ("up_bps", self.up_bps),
                            ("dn_bps", self.dn_bps)):
            arr = np.asarray(value, dtype=float)
            if arr.ndim == 1 and arr.size != n:
                raise ValueError(f"{name} must have {n} entries (one per silo), got {arr.size}.")
            out.append(np.broadcast_to(arr, (n,)).astype(float))
        return self.local_steps * out[0], out[1], out[2]

    def replace(self, **changes) -> "DelayParams":
        """A copy with some fields changed."""
        fields = {k: getattr(self, k) for k in ("model_bits", "compute_ms", "local_steps",
                                                "up_bps", "dn_bps")}
        fields.update(changes)
        return DelayParams(**fields)


def preset_params(preset: str = "sub_inaturalist", access_bps=1e10, local_steps: int = 1) -> DelayParams:
    """Delay parameters of a Table 2.4 model with symmetric access links.

    Parameters
    ----------
    preset : {"shakespeare", "femnist", "sent140", "sub_inaturalist", "inaturalist"}
        Model (sets ``M`` and ``T_c``).
    access_bps : float or array_like
        :math:`C_{UP} = C_{DN}` in bit/s (10 Gbps in Table 2.5, 1 Gbps in Table 2.6).
    local_steps : int
        :math:`s`.

    Returns
    -------
    DelayParams
    """
    check_choice("preset", preset, MODEL_SIZES)
    _check_capacity("access_bps", access_bps)
    return DelayParams(local_steps=local_steps, up_bps=access_bps, dn_bps=access_bps, **MODEL_SIZES[preset])


def transfer_ms(src, dst, conn: Connectivity, params: DelayParams, outdeg, indeg) -> np.ndarray:
    """Latency plus transmission time of arcs ``src -> dst`` (eq. 2.3 without computation)."""
    _, up, dn = params.arrays(conn.n)
    rate = np.minimum(np.minimum(up[src] / outdeg, dn[dst] / indeg), conn.available_bps[src, dst])
    return conn.latency_ms[src, dst] + 1000.0 * params.model_bits / rate


def arc_delays(src, dst, conn: Connectivity, params: DelayParams, outdeg, indeg) -> np.ndarray:
    """Vectorised eq. (2.3) for arcs ``src -> dst`` with the given degrees (arrays per arc)."""
    comp, _, _ = params.arrays(conn.n)
    return comp[src] + transfer_ms(src, dst, conn, params, outdeg, indeg)


_NO_PARAMS = object()


def check_network_args(conn: Connectivity, params=_NO_PARAMS) -> None:
    """The connectivity graph and (when passed) the delay parameters of a call: a Connectivity, a DelayParams."""
    check_type("conn", conn, Connectivity)
    if params is not _NO_PARAMS:
        check_type("params", params, DelayParams)


def overlay_arcs(overlay: nx.DiGraph, conn: Connectivity) -> tuple[np.ndarray, np.ndarray]:
    """Validated arc arrays of an overlay on silos ``0..N-1`` (self-loops dropped)."""
    check_type("conn", conn, Connectivity)
    if not isinstance(overlay, nx.DiGraph):
        raise TypeError(f"overlay must be a networkx.DiGraph, got {type(overlay).__name__}.")
    if set(overlay.nodes) != set(range(conn.n)):
        raise ValueError(f"overlay must have exactly the nodes 0..{conn.n - 1} of the connectivity "
                         f"graph, got {overlay.number_of_nodes()} nodes.")
    arcs = np.array([(u, v) for u, v in overlay.edges if u != v], dtype=np.int64).reshape(-1, 2)
    if arcs.size == 0:
        raise ValueError("overlay has no arc.")
    if not conn.arcs[arcs[:, 0], arcs[:, 1]].all():
        u, v = arcs[~conn.arcs[arcs[:, 0], arcs[:, 1]]][0]
        raise ValueError(f"overlay arc ({u}, {v}) is not in the connectivity graph.")
    return arcs[:, 0], arcs[:, 1]


def overlay_delays(overlay: nx.DiGraph, conn: Connectivity, params: DelayParams,
                   self_loops: bool = True) -> np.ndarray:
    r"""Delay matrix :math:`d_o` of an overlay (thesis eq. 2.3, node-capacitated general case).

    Parameters
    ----------
    overlay : networkx.DiGraph
        Overlay on silos ``0..N-1`` (arcs must belong to :math:`\mathcal{G}_c`).
    conn : Connectivity
        Latencies and available bandwidths.
    params : DelayParams
        Model size, computation times, local steps, access capacities.
    self_loops : bool
        Put :math:`d_o(i,i) = s\,T_c(i)` on the diagonal (the recursion 2.4 includes them).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        ``W[i, j] = d_o(i, j)`` in ms, ``-inf`` for non-arcs.
    """
    check_network_args(conn, params)
    self_loops = check_bool("self_loops", self_loops)
    src, dst = overlay_arcs(overlay, conn)
    outdeg = np.bincount(src, minlength=conn.n)[src]
    indeg = np.bincount(dst, minlength=conn.n)[dst]
    W = np.full((conn.n, conn.n), -np.inf)
    W[src, dst] = arc_delays(src, dst, conn, params, outdeg, indeg)
    if self_loops:
        np.fill_diagonal(W, params.arrays(conn.n)[0])
    return W


def _all_arcs(conn: Connectivity) -> tuple[np.ndarray, np.ndarray]:
    return np.nonzero(conn.arcs)


def connectivity_delays(conn: Connectivity, params: DelayParams) -> np.ndarray:
    r"""Connectivity-graph delays :math:`d_c(i,j) = s\,T_c(i) + l(i,j) + M/A(i',j')` (edge-capacitated).

    These do not depend on the overlay; they are the arc delays of every overlay of an
    edge-capacitated network (thesis section 2.1.3.1, Prop. 2.1.1 and 2.1.3).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        ``-inf`` where :math:`(i,j) \notin \mathcal{E}_c` and on the diagonal.
    """
    check_network_args(conn, params)
    src, dst = _all_arcs(conn)
    edge_params = params.replace(up_bps=np.inf, dn_bps=np.inf)
    W = np.full((conn.n, conn.n), -np.inf)
    W[src, dst] = arc_delays(src, dst, conn, edge_params, 1.0, 1.0)
    return W


def degree_one_delays(conn: Connectivity, params: DelayParams) -> np.ndarray:
    r"""Degree-one delays :math:`d'(i,j) = s T_c(i) + l(i,j) + M/\min(C_{UP}(i), C_{DN}(j), A(i',j'))`.

    :math:`d'` equals :math:`d_o` on every arc of a ring (all degrees 1); Christofides runs on it
    (Prop. 2.1.6) and Algorithm 3 uses its symmetrisation.

    Returns
    -------
    numpy.ndarray, shape (N, N)
        ``-inf`` where :math:`(i,j) \notin \mathcal{E}_c` and on the diagonal.
    """
    check_network_args(conn, params)
    src, dst = _all_arcs(conn)
    W = np.full((conn.n, conn.n), -np.inf)
    W[src, dst] = arc_delays(src, dst, conn, params, 1.0, 1.0)
    return W


def _server_cycle_time(overlay: nx.DiGraph, conn: Connectivity, params: DelayParams) -> float:
    """Cycle time of a server-client overlay: the server only averages (it does not train).

    One round takes two max-plus steps (upload, then broadcast), so with the server's computation
    set to zero, :math:`\\tau = 2 \\times` the maximum cycle mean, i.e.
    :math:`\\max_i [s T_c(i) + \\mathrm{up}(i) + \\mathrm{down}(i)]` on a star.
    """
    server = overlay.graph["server"]
    comp = np.array(params.arrays(conn.n)[0])
    comp[server] = 0.0
    W = overlay_delays(overlay, conn, params.replace(compute_ms=comp, local_steps=1), self_loops=False)
    return 2.0 * max_cycle_mean(W)


def cycle_time(overlay: nx.DiGraph, conn: Connectivity, params: DelayParams) -> float:
    r"""Cycle time :math:`\tau(\mathcal{G}_o)` in ms: the maximum cycle mean of :math:`d_o` (eq. 2.5).

    Overlays carrying ``overlay.graph["server"] = c`` (the STAR) are server-client systems: silo
    ``c`` only averages and a round is upload + broadcast (spec section 3.4).

    Parameters
    ----------
    overlay : networkx.DiGraph
        Strongly connected overlay on silos ``0..N-1``.
    conn : Connectivity
    params : DelayParams

    Returns
    -------
    float
        :math:`\tau` in ms; the throughput is :math:`1/\tau` rounds per ms.

    Examples
    --------
    >>> from fedlab.topology import connectivity_graph, design_overlay, load_network, preset_params
    >>> conn, params = connectivity_graph(load_network("gaia")), preset_params()
    >>> round(cycle_time(design_overlay("ring", conn, params), conn, params))
    118
    >>> round(cycle_time(design_overlay("star", conn, params), conn, params))
    390
    """
    check_network_args(conn, params)
    overlay_arcs(overlay, conn)
    if not nx.is_strongly_connected(overlay):
        raise ValueError("overlay must be strongly connected (a strong spanning subdigraph of G_c).")
    if overlay.graph.get("server") is not None:
        return _server_cycle_time(overlay, conn, params)
    return max_cycle_mean(overlay_delays(overlay, conn, params))


def throughput(tau_ms: float) -> float:
    """Throughput in communication rounds per second, ``1000 / tau_ms`` (section 2.1.2.3)."""
    return 1000.0 / check_real("tau_ms", tau_ms, low=0.0, low_open=True)


def overlay_from_edges(n: int, edges, directed: bool = False, name: str = "custom") -> nx.DiGraph:
    """An overlay DiGraph on ``0..n-1`` from edges (both arcs of each edge unless ``directed``).

    Parameters
    ----------
    n : int
        Number of silos.
    edges : iterable of (int, int)
        Edges (undirected) or arcs (``directed=True``).
    directed : bool
    name : str

    Returns
    -------
    networkx.DiGraph
    """
    n = check_int("n", n, low=1)
    directed = check_bool("directed", directed)
    check_type("name", name, str)
    if isinstance(edges, (str, bytes)) or not hasattr(edges, "__iter__"):
        raise TypeError(f"edges must be an iterable of (int, int) pairs, got {type(edges).__name__}.")
    graph = nx.DiGraph(name=name)
    graph.add_nodes_from(range(n))
    for i, edge in enumerate(edges):
        if not isinstance(edge, (tuple, list, np.ndarray)) or len(edge) != 2:
            raise TypeError(f"edges[{i}] must be a pair (u, v) of silos, got {edge!r}.")
        u, v = (check_int(f"edges[{i}]", node) for node in edge)
        if not (0 <= u < n and 0 <= v < n):
            raise ValueError(f"edges must join nodes in 0..{n - 1}, got ({u}, {v}).")
        graph.add_edge(u, v)
        if not directed:
            graph.add_edge(v, u)
    return graph
