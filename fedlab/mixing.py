r"""Consensus (mixing) matrices for the averaging step of DPASGD (thesis eq. 2.2).

* :func:`local_degree_weights`: the local-degree rule of the thesis (eqs. 2.12-2.13, [LB03]),
  for undirected overlays and for directed ones such as the RING.
* :func:`metropolis_weights`: Metropolis-Hastings weights of an undirected graph.
* :func:`fmmc_weights`: the fastest-mixing symmetric chain on the graph [BDX03] (an SDP).
* :func:`second_largest_eigenvalue_modulus`: the mixing rate of a consensus matrix.

Graphs can be given as a ``networkx`` graph with nodes ``0..n-1`` or as an ``(n, n)`` adjacency
array (diagonal ignored). Rows of the returned ``W`` aggregate: ``x <- W x``.
"""
from __future__ import annotations

import cvxpy as cp
import networkx as nx
import numpy as np

from fedlab._validation import check_array, check_bool, check_choice

__all__ = [
    "local_degree_weights",
    "metropolis_weights",
    "fmmc_weights",
    "second_largest_eigenvalue_modulus",
    "slem",
    "exact_average",
]


def _adjacency(G, directed_ok: bool = False) -> np.ndarray:
    """Boolean adjacency (zero diagonal) of a graph or array; checks connectivity."""
    if isinstance(G, nx.Graph):
        n = G.number_of_nodes()
        if set(G.nodes) != set(range(n)):
            raise ValueError("G must have nodes 0..n-1.")
        adj = nx.to_numpy_array(G, nodelist=range(n), weight=None) > 0
        directed = G.is_directed()
    else:
        adj = check_array("G", G, ndim=2) != 0
        if adj.shape[0] != adj.shape[1]:
            raise ValueError(f"G must be a square adjacency matrix, got shape {adj.shape}.")
        directed = not np.array_equal(adj, adj.T)
    np.fill_diagonal(adj, False)
    if adj.shape[0] < 1:
        raise ValueError("G must have at least one node.")
    if directed and not directed_ok:
        raise ValueError("G must be undirected (a symmetric adjacency).")
    graph = nx.from_numpy_array(adj.astype(int), create_using=nx.DiGraph if directed else nx.Graph)
    connected = nx.is_strongly_connected(graph) if directed else nx.is_connected(graph)
    if not connected:
        raise ValueError("G must be connected (strongly connected if directed).")
    return adj


def _with_diagonal(W: np.ndarray) -> np.ndarray:
    """``W`` with the diagonal that makes every row sum to one; a row already summing to one gives 0, not the
    -2e-16 that another CPU's rounding of the sum can leave."""
    np.fill_diagonal(W, 0.0)
    diagonal = 1.0 - W.sum(axis=1)
    np.fill_diagonal(W, np.where(np.abs(diagonal) < 1e-12, np.maximum(diagonal, 0.0), diagonal))
    return W


def local_degree_weights(G) -> np.ndarray:
    r"""Local-degree consensus matrix (thesis eqs. 2.12-2.13, [LB03]).

    .. math:: A_{i,j} = \frac{1}{1 + \max\{d_i, d_j\}} \ \text{for every arc } j \to i, \qquad
              A_{i,i} = 1 - \sum_{j \ne i} A_{i,j},

    with :math:`d` the degree (undirected overlay) or the in-degree (directed overlay: "the larger
    in-degree of its two incident nodes"). On an undirected graph this coincides with
    :func:`metropolis_weights` and is symmetric and doubly stochastic; on a directed ring every
    in-degree is 1 and :math:`A = (I + P)/2` with :math:`P` the cyclic shift (doubly stochastic,
    not symmetric). On other digraphs rows sum to one but columns need not.

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph or array_like, shape (n, n)
        Connected overlay; arc ``j -> i`` means ``i`` receives ``j``'s model.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    adj = _adjacency(G, directed_ok=True)
    receive = adj.T  # receive[i, j]: arc j -> i
    deg = receive.sum(axis=1).astype(float)
    W = np.where(receive, 1.0 / (1.0 + np.maximum(deg[:, None], deg[None, :])), 0.0)
    return _with_diagonal(W)


def metropolis_weights(G) -> np.ndarray:
    r"""Metropolis-Hastings weights of an undirected graph (Xiao, Boyd & Lall 2005).

    .. math:: W_{ij} = \frac{1}{1 + \max\{d_i, d_j\}} \ \text{for } \{i,j\} \in E, \qquad
              W_{ii} = 1 - \sum_{j \ne i} W_{ij}.

    Symmetric, doubly stochastic, non-negative, computable from the neighbours' degrees only.

    Parameters
    ----------
    G : networkx.Graph or array_like, shape (n, n)
        Connected undirected graph.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    adj = _adjacency(G)
    deg = adj.sum(axis=1).astype(float)
    W = np.where(adj, 1.0 / (1.0 + np.maximum(deg[:, None], deg[None, :])), 0.0)
    return _with_diagonal(W)


def fmmc_weights(G, self_loops: bool = True, solver: str | None = None) -> np.ndarray:
    r"""Fastest-mixing symmetric consensus matrix on a graph (FMMC, Boyd, Diaconis & Xiao [BDX03]).

    .. math:: \min_W \ \| W - \tfrac1n \mathbf{1}\mathbf{1}^\top \|_2 \ \text{ s.t. }
              W = W^\top,\ W\mathbf{1} = \mathbf{1},\ W \ge 0,\ W_{ij} = 0 \text{ for } \{i,j\} \notin E,

    an SDP solved with cvxpy; its optimum is the smallest second-largest eigenvalue modulus over
    symmetric stochastic matrices on :math:`G`. The solution is cleaned (negatives clipped,
    symmetrised, diagonal reset) so that rows sum exactly to one with a non-negative diagonal.

    Parameters
    ----------
    G : networkx.Graph or array_like, shape (n, n)
        Connected undirected graph.
    self_loops : bool
        Allow :math:`W_{ii} > 0` (Boyd et al.); ``False`` forces a zero diagonal.
    solver : str or None
        cvxpy solver.

    Returns
    -------
    numpy.ndarray, shape (n, n)
    """
    adj = _adjacency(G)
    self_loops = check_bool("self_loops", self_loops)
    if solver is not None:
        check_choice("solver", solver, cp.installed_solvers())
    n = adj.shape[0]
    if n == 1:
        return np.ones((1, 1))
    allowed = adj | (np.eye(n, dtype=bool) if self_loops else False)
    W = cp.Variable((n, n), symmetric=True)
    cons = [W >= 0, cp.sum(W, axis=1) == 1, W[~allowed] == 0] if (~allowed).any() else \
        [W >= 0, cp.sum(W, axis=1) == 1]
    cp.Problem(cp.Minimize(cp.norm(W - np.ones((n, n)) / n, 2)), cons).solve(solver=solver)
    if W.value is None:
        raise RuntimeError("the FMMC SDP did not solve.")
    out = np.where(allowed, np.maximum(W.value, 0.0), 0.0)
    out = (out + out.T) / 2
    np.fill_diagonal(out, 0.0)
    out /= max(1.0, out.sum(axis=1).max())  # solver tolerance: keep the diagonal non-negative
    return _with_diagonal(out)


def second_largest_eigenvalue_modulus(W) -> float:
    r"""Second-largest eigenvalue modulus of a consensus matrix (SLEM).

    Since :math:`W\mathbf{1} = \mathbf{1}`, the eigenvalues of :math:`W` are the consensus eigenvalue 1 and
    those of :math:`P W` on :math:`\mathbf{1}^\perp`, with :math:`P = I - \mathbf{1}\mathbf{1}^\top/n`; the SLEM
    is the largest modulus among the latter, the spectral radius of :math:`P W P`. For a symmetric doubly
    stochastic :math:`W` it equals :math:`\|W - \mathbf{1}\mathbf{1}^\top/n\|_2`, the factor by which
    disagreement contracts per step. It exceeds 1 when :math:`W` amplifies disagreement (e.g. :math:`I - L`).

    Parameters
    ----------
    W : array_like, shape (n, n)
        A consensus matrix: rows summing to 1 (entries may be negative, e.g. MATCHA's :math:`I - \alpha L`).

    Returns
    -------
    float
        The largest eigenvalue modulus once the consensus eigenvalue 1 is removed (0 for ``n == 1``).
    """
    W = check_array("W", W, ndim=2)
    if W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"W must be square, got shape {W.shape}.")
    if not np.allclose(W.sum(1), 1.0, rtol=0, atol=1e-6):
        raise ValueError(f"W must be a consensus matrix with rows summing to 1, got row sums in "
                         f"[{W.sum(1).min():.4g}, {W.sum(1).max():.4g}].")
    n = W.shape[0]
    P = np.eye(n) - 1.0 / n
    M = P @ W @ P
    eig = np.linalg.eigvalsh((M + M.T) / 2) if np.allclose(W, W.T) else np.linalg.eigvals(M)
    return float(np.abs(eig).max())


slem = second_largest_eigenvalue_modulus


def exact_average(n: int) -> np.ndarray:
    """Exact averaging :math:`\\mathbf{1}\\mathbf{1}^\\top/n` (the STAR's orchestrator)."""
    from fedlab._validation import check_int
    n = check_int("n", n, low=1)
    return np.full((n, n), 1.0 / n)
