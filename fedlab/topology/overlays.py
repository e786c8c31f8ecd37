r"""Overlay design (thesis section 2.1.3): STAR, MST, delta-MBST and RING.

Every builder takes the connectivity graph and the delay parameters and returns the overlay as a
``networkx.DiGraph`` on silos ``0..N-1`` (an undirected overlay holds both arcs of each edge).

* ``mst``: Kruskal on :math:`d^{(u)}(i,j) = (d_c(i,j) + d_c(j,i))/2`, optimal for edge-capacitated
  networks and undirected overlays (Prop. 2.1.1); ties between equally light edges are broken as
  networkx's Kruskal breaks them (the authors' tree), or by degree (``ties="degree"``).
* ``delta_mbst``: Algorithm 3, the best of the cube Hamiltonian path of the MST (6-approximation,
  Prop. 2.1.5) and the delta-PRIM trees (Algorithm 4), on the symmetrised degree-one delays.
* ``ring``: a directed Christofides tour on the degree-one delays :math:`d'` (3N-approximation,
  Props. 2.1.3 and 2.1.6).
* ``star``: the server-client baseline; the orchestrator only averages.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix

from fedlab._validation import check_array, check_bool, check_choice, check_int, check_type
from fedlab.topology.delays import (DelayParams, check_network_args, connectivity_delays, cycle_time,
                                    degree_one_delays, overlay_from_edges)
from fedlab.topology.data import Connectivity

__all__ = [
    "OVERLAYS",
    "design_overlay",
    "star_overlay",
    "mst_overlay",
    "delta_mbst_overlay",
    "ring_overlay",
    "MST_TIES",
    "prim_tree",
    "kruskal_tree",
    "delta_prim",
    "cube_path",
    "christofides_tour",
]


def _symmetric_weights(W: np.ndarray) -> np.ndarray:
    r"""Undirected weights :math:`(W_{ij} + W_{ji})/2` on pairs with both arcs, ``inf`` elsewhere."""
    both = np.isfinite(W) & np.isfinite(W.T)
    out = np.where(both, (np.where(both, W, 0) + np.where(both, W.T, 0)) / 2, np.inf)
    np.fill_diagonal(out, np.inf)
    return out


def _check_weights(weights) -> np.ndarray:
    W = check_array("weights", weights, finite=False)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"weights must be a square (n, n) matrix, got shape {W.shape}.")
    if np.any(np.isnan(W)) or not np.allclose(np.where(np.isfinite(W), W, 0),
                                              np.where(np.isfinite(W.T), W.T, 0)):
        raise ValueError("weights must be symmetric without nan (inf marks a missing edge).")
    if np.any(W < 0):
        raise ValueError(f"weights must be non-negative delays, got minimum {W.min():.6g}.")
    return W


def _bounded_prim(W: np.ndarray, delta: int | None, root: int = 0) -> list[tuple[int, int]]:
    """Prim's algorithm from ``root``, optionally never letting a tree node exceed degree ``delta``.

    Dense O(n^2) version: ``key[v]`` is the lightest edge from a non-saturated tree node to ``v``;
    when a node saturates, the keys that used it are recomputed.
    """
    n = W.shape[0]
    in_tree = np.zeros(n, dtype=bool)
    in_tree[root] = True
    deg = np.zeros(n, dtype=np.int64)
    key, parent = W[root].copy(), np.full(n, root)
    edges = []
    for _ in range(n - 1):
        cand = np.where(in_tree, np.inf, key)
        v = int(np.argmin(cand))
        if not np.isfinite(cand[v]):
            raise ValueError("no spanning tree: the undirected connectivity graph is disconnected "
                             "or too sparse for the degree bound.")
        u = int(parent[v])
        edges.append((u, v))
        in_tree[v] = True
        deg[u] += 1
        deg[v] += 1
        if delta is None or deg[v] < delta:
            better = W[v] < key
            key, parent = np.where(better, W[v], key), np.where(better, v, parent)
        if delta is not None and deg[u] >= delta:
            _rekey(W, in_tree, deg, delta, u, key, parent)
    return edges


def _rekey(W, in_tree, deg, delta, saturated, key, parent) -> None:
    """Recompute keys of outside nodes whose best parent just saturated (in place)."""
    affected = np.flatnonzero(~in_tree & (parent == saturated))
    if affected.size == 0:
        return
    avail = np.flatnonzero(in_tree & (deg < delta))
    if avail.size == 0:
        key[affected] = np.inf
        return
    sub = W[np.ix_(avail, affected)]
    best = np.argmin(sub, axis=0)
    key[affected] = sub[best, np.arange(affected.size)]
    parent[affected] = avail[best]


def prim_tree(weights, root: int = 0) -> nx.Graph:
    """Minimum-weight spanning tree by Prim's algorithm [Pri57] (Table 2.1, Prop. 2.1.1).

    Parameters
    ----------
    weights : array_like, shape (n, n)
        Symmetric edge weights, ``inf`` for a missing edge.
    root : int
        Start node.

    Returns
    -------
    networkx.Graph
        The tree on ``0..n-1`` with edge attribute ``weight``.
    """
    W = _check_weights(weights)
    root = check_int("root", root, low=0, high=W.shape[0] - 1)
    return _tree_graph(W, _bounded_prim(W, None, root))


class _Forest:
    """Union-find over ``0..n-1`` (path halving)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def root(self, v: int) -> int:
        while self.parent[v] != v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def join(self, u: int, v: int) -> bool:
        """Merge the trees of ``u`` and ``v``; False when they already were one tree."""
        ru, rv = self.root(u), self.root(v)
        if ru == rv:
            return False
        self.parent[rv] = ru
        return True


def _sorted_pairs(W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite pairs ``i < j`` in row-major order, stably sorted by weight (networkx's Kruskal order)."""
    iu, ju = np.triu_indices(W.shape[0], 1)
    keep = np.isfinite(W[iu, ju])
    iu, ju = iu[keep], ju[keep]
    order = np.argsort(W[iu, ju], kind="stable")
    return iu[order], ju[order], W[iu[order], ju[order]]


def _kruskal_index(W: np.ndarray) -> list[tuple[int, int]]:
    """Kruskal keeping, among equally light edges, the first in row-major order."""
    forest = _Forest(W.shape[0])
    iu, ju, _ = _sorted_pairs(W)
    return [(int(u), int(v)) for u, v in zip(iu, ju) if forest.join(int(u), int(v))]


def _kruskal_degree(W: np.ndarray) -> list[tuple[int, int]]:
    """Kruskal taking, within each class of equally light edges, the edge whose endpoints have the
    smallest tree degree first (``max`` of the two, then their sum, then row-major order).

    Any maximal forest of a weight class, added to the lighter classes, extends to a minimum spanning
    tree (matroid exchange), so the result is a minimum spanning tree of least-degree flavour.
    """
    n = W.shape[0]
    forest, deg, edges = _Forest(n), np.zeros(n, dtype=np.int64), []
    iu, ju, w = _sorted_pairs(W)
    starts = np.flatnonzero(np.r_[True, ~np.isclose(w[1:], w[:-1], rtol=1e-12, atol=0.0)])
    for lo, hi in zip(starts, np.r_[starts[1:], w.size]):
        group = [(int(u), int(v)) for u, v in zip(iu[lo:hi], ju[lo:hi])]
        while group:
            group = [(u, v) for u, v in group if forest.root(u) != forest.root(v)]
            if not group:
                break
            u, v = min(group, key=lambda e: (max(deg[e[0]], deg[e[1]]), deg[e[0]] + deg[e[1]]))
            forest.join(u, v)
            deg[u] += 1
            deg[v] += 1
            edges.append((u, v))
    return edges


MST_TIES = {"index": _kruskal_index, "degree": _kruskal_degree}


def kruskal_tree(weights, ties: str = "index") -> nx.Graph:
    """Minimum-weight spanning tree by Kruskal's algorithm (Table 2.1, Prop. 2.1.1), with a tie rule.

    When several spanning trees have the minimum weight (Exodus and Ebone have zero-length links),
    the tie rule picks one; their cycle times (eq. 2.5) differ as soon as access links make degrees
    cost time (eq. 2.3).

    Parameters
    ----------
    weights : array_like, shape (n, n)
        Symmetric edge weights, ``inf`` for a missing edge.
    ties : {"index", "degree"}
        ``"index"``: among equally light edges the first pair ``(i, j)``, ``i < j``, in row-major
        order, which is the tree ``networkx.minimum_spanning_tree(algorithm="kruskal")`` returns on
        ``networkx.from_numpy_array(weights)`` (the authors' code); ``"degree"``: the edge whose
        endpoints have the smallest current tree degree (a least-degree minimum spanning tree).

    Returns
    -------
    networkx.Graph
        The tree on ``0..n-1`` with edge attribute ``weight``.
    """
    W = _check_weights(weights)
    check_choice("ties", ties, MST_TIES)
    edges = MST_TIES[ties](W)
    if len(edges) != W.shape[0] - 1:
        raise ValueError("no spanning tree: the graph of finite weights is disconnected.")
    return _tree_graph(W, edges)


def delta_prim(weights, delta: int, root: int = 0) -> nx.Graph:
    r"""Degree-bounded Prim, delta-PRIM (thesis Algorithm 4 [AR19]).

    Grows a tree from ``root``, adding at each step the lightest edge :math:`(u,v)` with
    :math:`u` in the tree, :math:`v` outside and :math:`\deg_T(u) < \delta`.

    Parameters
    ----------
    weights : array_like, shape (n, n)
        Symmetric edge weights, ``inf`` for a missing edge.
    delta : int
        Degree bound :math:`\delta \ge 2`.
    root : int
        Start node :math:`v_0`.

    Returns
    -------
    networkx.Graph
        A spanning tree with maximum degree at most ``delta``.
    """
    W = _check_weights(weights)
    delta = check_int("delta", delta, low=2)
    root = check_int("root", root, low=0, high=W.shape[0] - 1)
    return _tree_graph(W, _bounded_prim(W, delta, root))


def _tree_graph(W: np.ndarray, edges) -> nx.Graph:
    tree = nx.Graph()
    tree.add_nodes_from(range(W.shape[0]))
    tree.add_edges_from((u, v, {"weight": float(W[u, v])}) for u, v in edges)
    return tree


def cube_path(tree: nx.Graph, root: int = 0) -> list[int]:
    r"""Hamiltonian path of the cube :math:`\mathcal{T}^3` of a tree (Algorithm 3, line 8).

    Depth-first search from ``root``: vertices at even depth are output when first entered,
    vertices at odd depth when finished. Consecutive vertices are at tree distance at most 3
    (the cube of a connected graph is Hamiltonian, Karaganis 1968), so the path's bottleneck is at
    most 3 times the tree's on metric weights [AR16, Thm. 8].

    Parameters
    ----------
    tree : networkx.Graph
        A tree.
    root : int
        DFS root.

    Returns
    -------
    list of int
        The vertices in path order.
    """
    if not isinstance(tree, nx.Graph) or tree.is_directed() or not nx.is_tree(tree):
        raise ValueError("tree must be an undirected networkx tree.")
    if isinstance(root, (bool, np.bool_)) or root not in tree:
        raise ValueError(f"root must be a node of tree, got {root!r}.")
    depth, order = {root: 0}, [root]
    stack = [(root, iter(sorted(tree[root])))]
    while stack:
        node, children = stack[-1]
        child = next((c for c in children if c not in depth), None)
        if child is None:
            stack.pop()
            if depth[node] % 2:
                order.append(node)
            continue
        depth[child] = depth[node] + 1
        if depth[child] % 2 == 0:
            order.append(child)
        stack.append((child, iter(sorted(tree[child]))))
    return order


def _greedy_matching(W: np.ndarray, nodes: np.ndarray) -> list[tuple[int, int]]:
    """Perfect matching of ``nodes`` taking the lightest available pair first."""
    sub = W[np.ix_(nodes, nodes)]
    iu, ju = np.triu_indices(nodes.size, 1)
    order = np.argsort(sub[iu, ju], kind="stable")
    used, pairs = np.zeros(nodes.size, dtype=bool), []
    for a, b in zip(iu[order], ju[order]):
        if not (used[a] or used[b]):
            used[a] = used[b] = True
            pairs.append((int(nodes[a]), int(nodes[b])))
    return pairs


def _candidate_pairs(C: np.ndarray, k_nn: int) -> np.ndarray:
    """Upper-triangular mask of the pairs joining each node to its ``k_nn`` cheapest partners."""
    k = C.shape[0]
    nearest = np.argsort(C, axis=1, kind="stable")[:, :min(k_nn, k - 1)]
    mask = np.zeros((k, k), dtype=bool)
    mask[np.repeat(np.arange(k), nearest.shape[1]), nearest.ravel()] = True
    return np.triu(mask | mask.T, 1)


def _solve_matching_lp(C: np.ndarray, cand: np.ndarray, cuts: list):
    """LP relaxation of perfect matching on the candidate pairs with odd-set cuts (HiGHS)."""
    k = C.shape[0]
    iu, ju = np.nonzero(cand)
    cols = np.arange(iu.size)
    a_eq = csr_matrix((np.ones(2 * iu.size), (np.r_[iu, ju], np.r_[cols, cols])), shape=(k, iu.size))
    a_ub = csr_matrix(-(np.array(cuts)[:, iu] != np.array(cuts)[:, ju]).astype(float)) if cuts else None
    res = linprog(C[iu, ju], A_ub=a_ub, b_ub=-np.ones(len(cuts)) if cuts else None, A_eq=a_eq,
                  b_eq=np.ones(k), bounds=(0, None), method="highs")
    return res, iu, ju


def _reduced_costs(C: np.ndarray, res, cuts: list) -> np.ndarray:
    """Reduced cost of every pair under the LP duals (degree duals y, odd-set duals z >= 0)."""
    y = res.eqlin.marginals
    rc = C - y[:, None] - y[None, :]
    for z, s in zip(-res.ineqlin.marginals if cuts else [], cuts):
        if z > 0:
            rc -= z * (s[:, None] != s[None, :])
    return rc


def _violated_odd_sets(x: np.ndarray, iu, ju, frac: np.ndarray, k: int) -> list:
    """Odd components of the fractional support whose boundary carries less than 1."""
    graph = nx.Graph()
    graph.add_edges_from(zip(iu[frac].tolist(), ju[frac].tolist()))
    cuts = []
    for comp in nx.connected_components(graph):
        s = np.zeros(k, dtype=bool)
        s[list(comp)] = True
        if len(comp) % 2 and x[s[iu] != s[ju]].sum() < 1 - 1e-7:
            cuts.append(s)
    return cuts


def _lp_matching(C: np.ndarray, k_nn: int = 10, max_rounds: int = 300, patience: int = 5):
    """Minimum-weight perfect matching by LP with Edmonds' odd-set cuts and column generation.

    The LP starts on each node's ``k_nn`` cheapest pairs; pairs with negative reduced cost (priced
    against all pairs) are added and violated odd-set inequalities are cut until the LP optimum is
    integral, which then is an optimal perfect matching of the complete graph. Returns ``None``
    (the caller falls back to the blossom algorithm) when no violated odd set is found, or when
    ``patience`` successive rounds of cuts leave the LP value unchanged: with many equally light
    pairs (zero-length links) the cuts then only move between degenerate optima.
    """
    k = C.shape[0]
    cand, cuts = _candidate_pairs(C, k_nn), []
    scale = 1e-9 * max(1.0, float(np.abs(C[np.triu_indices(k, 1)]).max()))
    best, stalled = -np.inf, 0
    for _ in range(max_rounds):
        res, iu, ju = _solve_matching_lp(C, cand, cuts)
        if res.status == 2:
            cand = np.triu(np.ones((k, k), dtype=bool), 1)
            continue
        if res.status != 0:
            return None
        negative = np.triu(_reduced_costs(C, res, cuts) < -scale, 1) & ~cand
        if negative.any():
            cand |= negative
            continue
        frac = (res.x > 1e-9) & (res.x < 1 - 1e-9)
        if not frac.any():
            chosen = res.x > 0.5
            return list(zip(iu[chosen].tolist(), ju[chosen].tolist()))
        new = _violated_odd_sets(res.x, iu, ju, frac, k)
        stalled = stalled + 1 if res.fun <= best + scale else 0
        best = max(best, res.fun)
        if not new or stalled > patience:
            return None
        cuts += new
    return None


def _blossom_matching(W: np.ndarray, nodes: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-weight perfect matching by Edmonds' blossom algorithm (networkx, O(n^3))."""
    graph = nx.Graph()
    iu, ju = np.triu_indices(nodes.size, 1)
    graph.add_weighted_edges_from(
        (int(nodes[a]), int(nodes[b]), float(W[nodes[a], nodes[b]])) for a, b in zip(iu, ju))
    return [tuple(sorted(e)) for e in nx.min_weight_matching(graph)]


def _exact_matching(W: np.ndarray, nodes: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-weight perfect matching of ``nodes``: LP with odd-set cuts, else blossom."""
    if nodes.size == 0:
        return []
    C = W[np.ix_(nodes, nodes)].copy()
    np.fill_diagonal(C, np.inf)
    pairs = _lp_matching(C) if nodes.size > 2 else [(0, 1)]
    if pairs is None:
        return _blossom_matching(W, nodes)
    return [tuple(sorted((int(nodes[a]), int(nodes[b])))) for a, b in pairs]


_MATCHINGS = {"exact": _exact_matching, "greedy": _greedy_matching}


def christofides_tour(weights, matching: str = "exact") -> list[int]:
    r"""Christofides' tour [MPT02] on a complete graph (Props. 2.1.3, 2.1.6).

    Minimum spanning tree, perfect matching of its odd-degree vertices, Eulerian circuit of the
    union, shortcut of repeated vertices. With ``matching="exact"`` (minimum-weight perfect matching:
    an LP with Edmonds' odd-set cuts and pricing over all pairs, certified integral, else networkx's
    blossom algorithm) the tour is a 1.5-approximation of the optimal TSP tour on metric weights;
    ``"greedy"`` is a heuristic without that guarantee.

    Parameters
    ----------
    weights : array_like, shape (n, n)
        Symmetric weights of a complete graph (finite off the diagonal).
    matching : {"exact", "greedy"}

    Returns
    -------
    list of int
        The ``n`` vertices in tour order (the tour closes back to the first).
    """
    W = _check_weights(weights)
    check_choice("matching", matching, _MATCHINGS)
    n = W.shape[0]
    if not np.isfinite(W[~np.eye(n, dtype=bool)]).all():
        raise ValueError("weights must describe a complete graph (finite off the diagonal).")
    tree = _bounded_prim(W, None, 0)
    deg = np.bincount(np.array(tree).ravel(), minlength=n)
    multi = nx.MultiGraph()
    multi.add_nodes_from(range(n))
    multi.add_edges_from(tree)
    multi.add_edges_from(_MATCHINGS[matching](W, np.flatnonzero(deg % 2)))
    tour, seen = [], set()
    for u, _ in nx.eulerian_circuit(multi, source=0):
        if u not in seen:
            seen.add(u)
            tour.append(u)
    return tour


def _undirected_overlay(n: int, edges, name: str, **attrs) -> nx.DiGraph:
    overlay = overlay_from_edges(n, edges, name=name)
    overlay.graph.update(attrs)
    return overlay


def _load_center(conn: Connectivity) -> int:
    """Silo of highest load centrality [Bra08] on G_c weighted by latency (first on ties)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(conn.n))
    src, dst = np.nonzero(conn.arcs)
    graph.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), conn.latency_ms[src, dst].tolist()))
    load = nx.load_centrality(graph, weight="weight")
    return int(np.argmax([load[v] for v in range(conn.n)]))


def _best_center(conn: Connectivity, params: DelayParams) -> int:
    """Silo that minimises the STAR cycle time."""
    taus = [cycle_time(star_overlay(conn, params, center=c), conn, params) for c in range(conn.n)]
    return int(np.argmin(taus))


def star_overlay(conn: Connectivity, params: DelayParams | None = None, center: int | str = 0) -> nx.DiGraph:
    r"""Server-client STAR: arcs :math:`c \leftrightarrow i` for every silo :math:`i \ne c`.

    The orchestrator :math:`c` averages exactly and does not train; :func:`cycle_time` then gives
    :math:`\tau = \max_{i \ne c} [s T_c(i) + d(i \to c) + d(c \to i)]` with eq. (2.3) transfer
    times (spec section 3.4).

    Parameters
    ----------
    conn : Connectivity
    params : DelayParams, optional
        Needed only for ``center="best"``.
    center : int or {"load", "best"}
        The orchestrator. The thesis puts it "at the node with the highest load centrality"
        [Bra08] (``"load"``, on :math:`\mathcal{G}_c` weighted by latency); on a complete
        Euclidean :math:`\mathcal{G}_c` every load is zero and that rule selects the first silo,
        hence the default ``0``. ``"best"`` picks the silo minimising :math:`\tau`.

    Returns
    -------
    networkx.DiGraph
        With ``graph["server"] = c``.
    """
    check_network_args(conn)
    check_type("params", params, DelayParams, optional=True)
    if isinstance(center, str):
        check_choice("center", center, ("load", "best"))
        if center == "best" and params is None:
            raise ValueError("params is required for center='best'.")
        center = _load_center(conn) if center == "load" else _best_center(conn, params)
    center = check_int("center", center, low=0, high=conn.n - 1)
    missing = [i for i in range(conn.n) if i != center and not (conn.arcs[i, center] and conn.arcs[center, i])]
    if missing:
        raise ValueError(f"center {center} is not connected both ways to silo {missing[0]} in G_c.")
    edges = [(center, i) for i in range(conn.n) if i != center]
    return _undirected_overlay(conn.n, edges, "star", server=center)


def mst_overlay(conn: Connectivity, params: DelayParams, ties: str = "index") -> nx.DiGraph:
    r"""Minimum spanning tree overlay (Prop. 2.1.1).

    Kruskal on :math:`\mathcal{G}_c^{(u)}` (pairs with both arcs in :math:`\mathcal{E}_c`) weighted by
    :math:`d^{(u)}(i,j) = (d_c(i,j) + d_c(j,i))/2` with the edge-capacitated delays
    :math:`d_c = s T_c(i) + l(i,j) + M/A(i',j')`. Optimal (minimal cycle time among undirected
    overlays) when the network is edge-capacitated; with finite access links its cycle time is
    still evaluated with the degree-dependent eq. (2.3), and equally light trees can differ.

    Parameters
    ----------
    conn : Connectivity
    params : DelayParams
    ties : {"index", "degree"}
        Tie rule of :func:`kruskal_tree`: ``"index"`` reproduces the authors' networkx tree,
        ``"degree"`` prefers low-degree endpoints among equally light edges.

    Returns
    -------
    networkx.DiGraph
        Both arcs of every tree edge.
    """
    check_network_args(conn, params)
    check_choice("ties", ties, MST_TIES)
    tree = kruskal_tree(_symmetric_weights(connectivity_delays(conn, params)), ties)
    return _undirected_overlay(conn.n, tree.edges, "mst")


def _mbst_candidates(W: np.ndarray, deltas):
    """Algorithm 3's candidate trees: the cube path of the MST, then delta-PRIM for each delta.

    With the default ``deltas`` the loop stops once a delta-PRIM tree has maximum degree below
    delta: the bound never bound, so every larger delta returns the same tree.
    """
    n = W.shape[0]
    path = cube_path(_tree_graph(W, _bounded_prim(W, None, 0)), 0)
    path_edges = list(zip(path, path[1:]))
    if all(np.isfinite(W[u, v]) for u, v in path_edges):
        yield "cube", path_edges
    stop_early = deltas is None
    for delta in (range(2, max(n, 3)) if deltas is None else deltas):
        edges = _bounded_prim(W, delta, 0)
        yield delta, edges
        if stop_early and np.bincount(np.array(edges).ravel(), minlength=n).max() < delta:
            break


def delta_mbst_overlay(conn: Connectivity, params: DelayParams, deltas=None,
                       return_candidates: bool = False):
    r"""delta-MBST overlay: Algorithm 3 (6-approximation, Prop. 2.1.5).

    On :math:`\mathcal{G}_c^{(u)}` weighted by :math:`d^{(u)} = (d'(i,j) + d'(j,i))/2` (degree-one
    delays; Algorithm 3 line 3 when :math:`C_{DN} = A = \infty`), the candidates are the
    Hamiltonian path of the cube of the MST (lines 6-9) and the delta-PRIM trees (lines 10-11);
    the one with the smallest cycle time under eq. (2.3) is returned (line 13).

    Parameters
    ----------
    conn : Connectivity
    params : DelayParams
    deltas : iterable of int, optional
        Degree bounds to try (each >= 2). Default ``2..N-1``, stopping early once the bound no
        longer binds (same candidates, fewer runs).
    return_candidates : bool
        Also return ``{label: cycle time}`` for every candidate.

    Returns
    -------
    networkx.DiGraph or (networkx.DiGraph, dict)
        The overlay (``graph["choice"]`` names the winning candidate).
    """
    check_network_args(conn, params)
    return_candidates = check_bool("return_candidates", return_candidates)
    if deltas is not None:
        if isinstance(deltas, (str, bytes)) or not hasattr(deltas, "__iter__"):
            raise TypeError(f"deltas must be an iterable of degree bounds (int >= 2), got {deltas!r}.")
        deltas = [check_int(f"deltas[{i}]", d, low=2) for i, d in enumerate(deltas)]
    W = _symmetric_weights(degree_one_delays(conn, params))
    best, taus = None, {}
    for label, edges in _mbst_candidates(W, deltas):
        overlay = _undirected_overlay(conn.n, edges, "delta_mbst", choice=label)
        taus[label] = cycle_time(overlay, conn, params)
        if best is None or taus[label] < taus[best[0]]:
            best = (label, overlay)
    if best is None:
        raise ValueError("deltas must contain at least one degree bound >= 2.")
    return (best[1], taus) if return_candidates else best[1]


def _ring_from_tour(n: int, tour) -> nx.DiGraph:
    return overlay_from_edges(n, zip(tour, tour[1:] + tour[:1]), directed=True, name="ring")


def ring_overlay(conn: Connectivity, params: DelayParams, matching: str = "exact") -> nx.DiGraph:
    r"""Directed RING from Christofides' tour on the degree-one delays (Props. 2.1.3 and 2.1.6).

    The tour is computed on :math:`(d'(i,j) + d'(j,i))/2`; on a ring every degree is one so
    :math:`d_o = d'` and :math:`\tau = \max(\frac1N \sum_k d'(i_k, i_{k+1}), \max_i s T_c(i))`.
    Of the two orientations of the tour, the one with the smaller cycle time is kept (they are
    equal when :math:`d'` is symmetric).

    Parameters
    ----------
    conn : Connectivity
        Must be complete (Christofides needs every pair).
    params : DelayParams
    matching : {"exact", "greedy"}
        Matching step of Christofides (see :func:`christofides_tour`).

    Returns
    -------
    networkx.DiGraph
    """
    check_network_args(conn, params)
    if not conn.is_complete:
        raise ValueError("conn must be a complete connectivity graph for the Christofides ring.")
    tour = christofides_tour(_symmetric_weights(degree_one_delays(conn, params)), matching)
    forward, backward = _ring_from_tour(conn.n, tour), _ring_from_tour(conn.n, tour[::-1])
    if cycle_time(backward, conn, params) < cycle_time(forward, conn, params) - 1e-12:
        return backward
    return forward


OVERLAYS = {
    "star": star_overlay,
    "mst": mst_overlay,
    "delta_mbst": delta_mbst_overlay,
    "ring": ring_overlay,
}


def design_overlay(name: str, conn: Connectivity, params: DelayParams, **kwargs) -> nx.DiGraph:
    """Build the overlay ``name`` (a key of :data:`OVERLAYS`) for a connectivity graph.

    Parameters
    ----------
    name : {"star", "mst", "delta_mbst", "ring"}
    conn : Connectivity
    params : DelayParams
    **kwargs
        Passed to the builder (e.g. ``center=`` for the star, ``deltas=`` for delta-MBST).

    Returns
    -------
    networkx.DiGraph
    """
    check_choice("name", name, OVERLAYS)
    check_network_args(conn, params)
    return OVERLAYS[name](conn, params, **kwargs)
