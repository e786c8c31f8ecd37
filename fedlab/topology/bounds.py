r"""The chapter's theory: cycle times as maximum cycle means (max-plus algebra), its worked examples and limits.

A synchronous round-based system whose silo :math:`i` waits for its in-neighbours is a linear
system in the max-plus algebra (thesis eq. 2.4),

.. math:: t_i(k+1) = \max_{j \in \mathcal{N}_i^+ \cup \{i\}} \big(t_j(k) + d_o(j, i)\big),

whose cycle time is the maximum cycle mean of the delay digraph (thesis eq. 2.5),

.. math:: \tau(\mathcal{G}_o) = \max_{\gamma} \frac{d_o(\gamma)}{|\gamma|},

with :math:`|\gamma|` the number of arcs of the circuit :math:`\gamma` [Bac92, Thm. 3.23].

Delay matrices are dense ``(n, n)`` arrays ``W`` with ``W[u, v]`` the delay of arc ``u -> v`` and
``-inf`` for a missing arc; the diagonal holds self-loops.

* Karp's algorithm and the recursion: :func:`max_cycle_mean`, :func:`critical_circuit`,
  :func:`max_cycle_mean_bruteforce` (the reference), :func:`simulate_maxplus`, :func:`karp_agreement`.
* The worked examples of section 2.1.3, as delay matrices: :func:`example_1a` and :func:`example_1b` (a directed
  ring beats every undirected overlay, by an unbounded factor) and :func:`example_2` (a ring can be
  :math:`\Omega(N)` worse than the best overlay).
* The slow-access-link limit of the STAR against the RING, :func:`star_ring_limit`.

>>> path, ring = example_1a()
>>> round(max_cycle_mean(path), 4), round(max_cycle_mean(ring), 4)
(3.0, 2.6667)
>>> round(max_cycle_mean(example_2(5)), 4), star_ring_limit(40)
(0.3333, 78)
"""
from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from fedlab._validation import check_array, check_int

__all__ = ["max_cycle_mean", "critical_circuit", "max_cycle_mean_bruteforce", "simulate_maxplus", "karp_agreement",
           "example_1a", "example_1b", "example_2", "star_ring_limit"]


def _check_delays(W) -> np.ndarray:
    """Validate a delay matrix and return it as float64 with ``-inf`` for missing arcs."""
    W = check_array("W", W, ndim=2, finite=False)
    if W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square (n, n) matrix, got shape {W.shape}.")
    if np.any(np.isnan(W)) or np.any(W == np.inf):
        raise ValueError("W must hold delays, and -inf for a missing arc: NaN and +inf are not delays.")
    return W


def _arcs(W: np.ndarray):
    """Arrays ``(src, dst, w)`` of the finite entries of ``W``, sorted by destination."""
    dst, src = np.nonzero(np.isfinite(W).T)
    return src, dst, W[src, dst]


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Strongly connected component label of every node."""
    graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    return connected_components(graph, directed=True, connection="strong")[1]


def _karp_component(src, dst, w, m: int, want_pred: bool):
    r"""Karp's recursion on one strongly connected component with nodes ``0..m-1``.

    ``D[k, v]`` is the largest weight of a walk with exactly ``k`` arcs from node 0 to ``v``;
    then :math:`\tau = \max_v \min_{k<m} (D_m(v) - D_k(v)) / (m - k)` [Kar78]. Arcs must be sorted
    by destination. Costs O(m |E|) time and O(m^2) memory.
    """
    starts = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
    heads = dst[starts]
    D = np.full((m + 1, m), -np.inf)
    D[0, 0] = 0.0
    pred = np.zeros((m + 1, m), dtype=np.int64) if want_pred else None
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, src.size]))
    for k in range(1, m + 1):
        cand = D[k - 1, src] + w
        best = np.maximum.reduceat(cand, starts)
        D[k, heads] = best
        if want_pred:
            idx = np.where(cand == best[group], np.arange(src.size), src.size)
            first = np.minimum.reduceat(idx, starts)
            pred[k, heads] = src[np.minimum(first, src.size - 1)]
    Dm = D[m]
    with np.errstate(invalid="ignore"):
        ratios = (Dm[None, :] - D[:m]) / (m - np.arange(m))[:, None]
    ratios = np.where(np.isfinite(D[:m]), ratios, np.inf)
    mu = np.where(np.isfinite(Dm), ratios.min(axis=0), -np.inf)
    v_star = int(np.argmax(mu))
    return float(mu[v_star]), v_star, pred


def _component_arcs(labels, comp, src, dst, w):
    """Arcs inside component ``comp``, re-indexed to ``0..m-1`` (still sorted by destination)."""
    nodes = np.flatnonzero(labels == comp)
    local = np.full(labels.size, -1)
    local[nodes] = np.arange(nodes.size)
    inside = (labels[src] == comp) & (labels[dst] == comp)
    return nodes, local[src[inside]], local[dst[inside]], w[inside]


def _karp(W: np.ndarray, want_pred: bool = False):
    """Best ``(mu, nodes, src, dst, w, v_star, pred)`` over the strongly connected components."""
    src, dst, w = _arcs(W)
    if src.size == 0:
        raise ValueError("W has no arc, hence no circuit: the cycle time is undefined.")
    labels = _components(W.shape[0], src, dst)
    best = None
    for comp in np.unique(labels):
        nodes, s, d, ww = _component_arcs(labels, comp, src, dst, w)
        if s.size == 0:
            continue  # a single node without self-loop has no circuit
        mu, v_star, pred = _karp_component(s, d, ww, nodes.size, want_pred)
        if best is None or mu > best[0]:
            best = (mu, nodes, s, d, ww, v_star, pred)
    if best is None:
        raise ValueError("W has no circuit (the digraph is acyclic): the cycle time is undefined.")
    return best


def max_cycle_mean(W) -> float:
    r"""Maximum cycle mean of a weighted digraph (cycle time, thesis eq. 2.5), by Karp's algorithm.

    .. math:: \tau = \max_{\gamma} \frac{\sum_{(u,v)\in\gamma} W_{uv}}{|\gamma|},

    the maximum over elementary circuits :math:`\gamma` (self-loops included), :math:`|\gamma|` the
    number of arcs. Karp's theorem [Kar78] is applied to every strongly connected component, in
    O(|V| |E|) time with one vectorised pass over the arcs per level.

    Parameters
    ----------
    W : array_like, shape (n, n)
        ``W[u, v]`` is the delay of arc ``u -> v``; ``-inf`` marks a missing arc (``nan`` is an error).

    Returns
    -------
    float
        The maximum cycle mean (the cycle time :math:`\tau`; the throughput is :math:`1/\tau`).
    """
    return _karp(_check_delays(W))[0]


def _walk_back(pred: np.ndarray, v_star: int, m: int) -> list[int]:
    """The walk of ``m`` arcs ending at ``v_star`` that realises ``D[m, v_star]``, in forward order."""
    walk = [v_star]
    for k in range(m, 0, -1):
        walk.append(int(pred[k, walk[-1]]))
    return walk[::-1]


def _cycles_of_walk(walk: list[int]):
    """Elementary cycles obtained by cutting a walk at its first repeated vertices (stack method)."""
    stack, position = [], {}
    for v in walk:
        if v in position:
            start = position[v]
            cycle = stack[start:]
            for u in cycle:
                del position[u]
            del stack[start:]
            yield cycle
        position[v] = len(stack)
        stack.append(v)


def _cycle_mean(W: np.ndarray, cycle) -> float:
    arcs = zip(cycle, cycle[1:] + cycle[:1])
    return float(np.mean([W[u, v] for u, v in arcs]))


def critical_circuit(W) -> list[int]:
    r"""A critical circuit: an elementary circuit whose mean delay equals the cycle time (eq. 2.5).

    Karp's table is stored with the arg-max predecessor of every level; the walk of ``n`` arcs that
    attains the maximum of Karp's formula contains a critical cycle (Chaturvedi & McConnell,
    2017), which is extracted and checked against :func:`max_cycle_mean`.

    Parameters
    ----------
    W : array_like, shape (n, n)
        Delay matrix, ``-inf`` for missing arcs.

    Returns
    -------
    list of int
        Nodes ``[i_1, ..., i_p]`` of the circuit ``i_1 -> i_2 -> ... -> i_p -> i_1``.
    """
    W = _check_delays(W)
    mu, nodes, s, d, ww, v_star, pred = _karp(W, want_pred=True)
    Wc = np.full((nodes.size, nodes.size), -np.inf)
    Wc[s, d] = ww
    cycles = list(_cycles_of_walk(_walk_back(pred, v_star, nodes.size)))
    best = max(cycles, key=lambda c: _cycle_mean(Wc, c))
    if not np.isclose(_cycle_mean(Wc, best), mu, rtol=1e-9, atol=1e-9):
        raise RuntimeError("internal error: the extracted circuit is not critical.")
    return [int(nodes[v]) for v in best]


def max_cycle_mean_bruteforce(W) -> float:
    """Maximum cycle mean by enumerating every elementary circuit (reference for tests, n <= 8).

    Parameters
    ----------
    W : array_like, shape (n, n)
        Delay matrix, ``-inf`` for missing arcs.

    Returns
    -------
    float
        :math:`\\max_\\gamma d(\\gamma)/|\\gamma|` over ``networkx.simple_cycles`` (thesis eq. 2.5).
    """
    W = _check_delays(W)
    check_int("n (size of W)", W.shape[0], low=1, high=10)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(W.shape[0]))
    graph.add_edges_from(zip(*np.nonzero(np.isfinite(W))))
    means = [_cycle_mean(W, c) for c in nx.simple_cycles(graph)]
    if not means:
        raise ValueError("W has no circuit (the digraph is acyclic): the cycle time is undefined.")
    return max(means)


def simulate_maxplus(W, n_steps: int, t0=None) -> np.ndarray:
    r"""Iterate the max-plus recursion (thesis eq. 2.4) for ``n_steps`` steps.

    .. math:: t_v(k+1) = \max_{u:\,(u,v)} \big(t_u(k) + W_{uv}\big)

    Put the self-loop delays :math:`d_o(i,i) = s\,T_c(i)` on the diagonal of ``W`` as in (2.4).
    By [Bac92, Sect. 7.3.4], :math:`t_i(k)/k \to \tau` for every node of a strong digraph.

    Parameters
    ----------
    W : array_like, shape (n, n)
        Delay matrix, ``-inf`` for missing arcs.
    n_steps : int
        Number of steps ``K`` (>= 0).
    t0 : array_like, shape (n,), optional
        Initial times (default zeros).

    Returns
    -------
    numpy.ndarray, shape (K + 1, n)
        ``t[k, i]``; a node without in-arcs gets ``-inf`` after the first step.
    """
    W = _check_delays(W)
    n = W.shape[0]
    n_steps = check_int("n_steps", n_steps, low=0)
    t = np.empty((n_steps + 1, n))
    t[0] = 0.0 if t0 is None else check_array("t0", t0, shape=(n,))
    src, dst, w = _arcs(W)
    starts = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]]) if src.size else np.array([], int)
    heads = dst[starts]
    for k in range(n_steps):
        t[k + 1] = -np.inf
        if src.size:
            t[k + 1, heads] = np.maximum.reduceat(t[k, src] + w, starts)
    return t



def karp_agreement(n_graphs: int = 200, seed: int = 0) -> int:
    """How many of ``n_graphs`` random digraphs (2 to 6 nodes, arcs with probability 1/2, normal delays) get the same
    maximum cycle mean from Karp's algorithm and from enumeration (to 1e-9; an acyclic draw, which both refuse,
    counts as agreeing).

    Parameters
    ----------
    n_graphs : int
        Number of random digraphs (>= 1).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    int
        The number of agreements (``n_graphs`` when Karp is right on every draw).
    """
    n_graphs, seed = check_int("n_graphs", n_graphs, low=1), check_int("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    agree = 0
    for _ in range(n_graphs):
        n = int(rng.integers(2, 7))
        W = np.where(rng.random((n, n)) < 0.5, rng.normal(size=(n, n)), -np.inf)
        try:
            agree += abs(max_cycle_mean(W) - max_cycle_mean_bruteforce(W)) < 1e-9
        except ValueError:  # acyclic: both refuse
            agree += 1
    return int(agree)


def _ring_delays(order: list[int], d: np.ndarray) -> np.ndarray:
    """The delay matrix of the directed ring visiting ``order`` on the delays ``d``."""
    W = np.full_like(d, -np.inf)
    for a, b in zip(order, order[1:] + order[:1]):
        W[a, b] = d[a, b]
    return W


def example_1a() -> tuple[np.ndarray, np.ndarray]:
    r"""Example 1a (Fig. 2.2a): three silos with delays 1 (1–2), 3 (2–3) and 4 (1–3) in both directions.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The delay matrices of the best undirected overlay (the path 1–2–3, :math:`\tau = 3`) and of the directed ring
        1 → 2 → 3 → 1 (:math:`\tau = 8/3`).
    """
    d = np.array([[0, 1, 4], [1, 0, 3], [4, 3, 0]], dtype=float)
    path = np.where(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]) > 0, d, -np.inf)
    return path, _ring_delays([0, 1, 2], d)


def example_1b(n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Example 1b (Fig. 2.2b, eqs. 2.8–2.9): a unit-delay path on silos :math:`1..n` plus silo :math:`n+1` at delay
    :math:`n` from silo :math:`n`; the connectivity delays are the path sums.

    Parameters
    ----------
    n : int
        Length of the unit path (>= 2).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The delay matrices of the undirected overlay (the underlay itself, :math:`\tau = n`) and of the directed ring
        :math:`1 \to \dots \to n+1 \to 1` (:math:`\tau = (4n-2)/(n+1)`, eq. 2.9).
    """
    n = check_int("n", n, low=2)
    under = nx.path_graph(n)
    nx.set_edge_attributes(under, 1, "weight")
    under.add_edge(n - 1, n, weight=n)
    sp = dict(nx.all_pairs_dijkstra_path_length(under))
    d = np.array([[sp[i][j] for j in range(n + 1)] for i in range(n + 1)], dtype=float)
    undirected = np.where(nx.to_numpy_array(under, nodelist=range(n + 1)) > 0, d, -np.inf)
    return undirected, _ring_delays(list(range(n + 1)), d)


def example_2(N: int) -> np.ndarray:
    r"""Example 2 (eqs. 2.10–2.11): :math:`N` fast silos (delay 0 among them) and :math:`N` slow ones (delay 1).

    The overlay (2.11) has the arcs :math:`i \to i+1` among the fast silos and :math:`N \to K \to 1` through every
    slow silo :math:`K`; its circuits :math:`C_K` have :math:`N+1` arcs and delay 2, so :math:`\tau = 2/(N+1)` (the
    thesis prints :math:`2/(N+2)`), while every Hamiltonian cycle has :math:`\tau \ge 1/2`.

    Parameters
    ----------
    N : int
        Number of fast (and of slow) silos (>= 2).

    Returns
    -------
    numpy.ndarray, shape (2N, 2N)
        The delay matrix of the overlay (2.11).
    """
    N = check_int("N", N, low=2)
    W = np.full((2 * N, 2 * N), -np.inf)
    W[np.arange(N - 1), np.arange(1, N)] = 0
    W[N - 1, N:], W[N:, 0] = 1, 1
    return W


def star_ring_limit(n_silos: int) -> int:
    r"""The limit of :math:`\tau_\text{STAR}/\tau_\text{RING}` as the access links slow down, :math:`2(N-1)`.

    With :math:`N` silos and access capacity :math:`C \to 0`, eq. (2.3) is dominated by the transfer term. The STAR's
    centre uploads to and downloads from its :math:`N-1` silos through one access link, so a round lasts
    :math:`2(N-1)M/C`; each ring silo sends one model and receives one, so the ring's arcs last :math:`M/C`. The
    thesis quotes :math:`2N` (= 80 on Géant) as the factor (section 2.1.4.5).

    Parameters
    ----------
    n_silos : int
        Number of silos :math:`N` (>= 2).
    """
    return 2 * (check_int("n_silos", n_silos, low=2) - 1)
