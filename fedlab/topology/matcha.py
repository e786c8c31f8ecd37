r"""MATCHA and MATCHA+ [Wan+19a]: random unions of matchings (thesis section 2.1.4.4).

1. A base graph is decomposed into matchings :math:`M_1..M_m` by edge colouring: MATCHA starts
   from the connectivity graph :math:`\mathcal{G}_c`, MATCHA+ from the underlay :math:`\mathcal{G}_u`.
2. Activation probabilities maximise the algebraic connectivity of the expected graph under a
   communication budget :math:`C_b` (an SDP):

   .. math:: \max_{p,\gamma,\beta} \gamma \ \text{ s.t. } 0 \le p \le 1,\ \sum_j p_j \le C_b m,\
             \sum_j p_j L_j - \gamma I + \beta \mathbf{1}\mathbf{1}^\top \succeq 0.

3. The mixing step :math:`W_k = I - \alpha L_k` uses the :math:`\alpha` minimising the spectral
   norm of :math:`\mathbb{E}[W_k^\top W_k] - \mathbf{1}\mathbf{1}^\top/N` (MATCHA's second SDP,
   solved here as the equivalent one-dimensional convex problem).
4. Each round activates every matching independently with probability :math:`p_j`, redrawn until
   at least one is active (the thesis's modification, keeping :math:`s` fixed).

The empirical cycle time is the mean round duration under a barrier model: round :math:`k` lasts
the largest eq. (2.3) delay among its active arcs, with that round's degrees (spec section 3.5).
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import networkx as nx
import numpy as np
from scipy.optimize import minimize_scalar

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_type
from fedlab.topology.delays import DelayParams, arc_delays, check_network_args
from fedlab.topology.data import Connectivity

__all__ = [
    "MatchaSchedule",
    "round_robin_matchings",
    "greedy_matchings",
    "matching_decomposition",
    "matcha_probabilities",
    "matcha_alpha",
    "matcha_schedule",
    "sample_matcha_rounds",
    "matcha_round_times",
    "matcha_cycle_time",
    "matcha_weights",
    "MATCHA_RULES",
]


@dataclass(frozen=True, eq=False)
class MatchaSchedule:
    """Matchings, activation probabilities and mixing weight of MATCHA.

    Attributes
    ----------
    n : int
        Number of silos.
    matchings : list of numpy.ndarray, each shape (k_j, 2)
        Disjoint edge sets.
    probabilities : numpy.ndarray, shape (m,)
        Activation probability of each matching.
    alpha : float
        Mixing weight of :math:`W_k = I - \\alpha L_k`.
    """

    n: int
    matchings: list
    probabilities: np.ndarray
    alpha: float

    def __post_init__(self) -> None:
        check_int("n", self.n, low=2)
        object.__setattr__(self, "matchings", _check_matchings(self.matchings, self.n))
        object.__setattr__(self, "probabilities", _check_probabilities(self.probabilities, len(self.matchings)))
        check_real("alpha", self.alpha, low=0.0)


def _check_matchings(matchings, n: int) -> list[np.ndarray]:
    """Matchings as int arrays (k, 2) of silos in [0, n), none of which meets a silo twice."""
    if not isinstance(matchings, (list, tuple)) or not matchings:
        raise TypeError(f"matchings must be a non-empty list of (k, 2) arrays of silo pairs, got {matchings!r:.80}.")
    out = []
    for j, edges in enumerate(matchings):
        arr = np.asarray(edges)
        if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
            raise TypeError(f"matchings[{j}] must be an integer array (k, 2) of silo pairs, got {arr.dtype} "
                            f"{arr.shape}.")
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            raise ValueError(f"matchings[{j}] must join silos in [0, {n}), got values in [{arr.min()}, {arr.max()}].")
        if len(np.unique(arr)) != arr.size:
            raise ValueError(f"matchings[{j}] is not a matching: a silo appears in two of its pairs.")
        out.append(arr.astype(np.int64))
    return out


def _check_probabilities(probabilities, m: int) -> np.ndarray:
    p = check_array("probabilities", probabilities, shape=(m,))
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"probabilities must lie in [0, 1], got values in [{p.min():.4g}, {p.max():.4g}].")
    return p


def _check_solver(solver: str | None) -> str | None:
    return solver if solver is None else check_choice("solver", solver, cp.installed_solvers())


def _check_base(graph: nx.Graph, name: str = "base_graph", connected: bool = True) -> int:
    if not isinstance(graph, nx.Graph) or graph.is_directed():
        raise TypeError(f"{name} must be an undirected networkx.Graph, got {type(graph).__name__}.")
    n = graph.number_of_nodes()
    if n < 2 or set(graph.nodes) != set(range(n)):
        raise ValueError(f"{name} must have nodes 0..N-1 with N >= 2, got {sorted(graph.nodes)[:5]}...")
    if connected and not nx.is_connected(graph):
        raise ValueError(f"{name} must be connected.")
    return n


def round_robin_matchings(n: int) -> list[np.ndarray]:
    """1-factorisation of the complete graph :math:`K_n` by the circle (round-robin) method.

    ``n - 1`` perfect matchings for even ``n``, ``n`` near-perfect ones for odd ``n``.

    Parameters
    ----------
    n : int
        Number of nodes (>= 2).

    Returns
    -------
    list of numpy.ndarray, each shape (k, 2)
    """
    n = check_int("n", n, low=2)
    size = n + (n % 2)
    rounds = []
    for r in range(size - 1):
        pairs = [(r, size - 1)] + [((r + k) % (size - 1), (r - k) % (size - 1)) for k in range(1, size // 2)]
        rounds.append(np.array([sorted(p) for p in pairs if max(p) < n], dtype=np.int64).reshape(-1, 2))
    return rounds


def greedy_matchings(graph: nx.Graph) -> list[np.ndarray]:
    """Matchings from a greedy colouring of the line graph (largest-first strategy).

    Uses at most :math:`2\\Delta - 1` colours (``Delta`` on the three real underlays).

    Parameters
    ----------
    graph : networkx.Graph

    Returns
    -------
    list of numpy.ndarray, each shape (k, 2)
    """
    _check_base(graph, "graph", connected=False)
    colours = nx.greedy_color(nx.line_graph(graph), strategy="largest_first")
    classes: dict[int, list] = {}
    for edge, colour in colours.items():
        classes.setdefault(colour, []).append(sorted(edge))
    return [np.array(sorted(classes[c]), dtype=np.int64) for c in sorted(classes)]


def matching_decomposition(base_graph: nx.Graph) -> list[np.ndarray]:
    """Decompose a base graph into matchings: round robin if complete, greedy colouring otherwise."""
    n = _check_base(base_graph)
    if base_graph.number_of_edges() == n * (n - 1) // 2:
        return round_robin_matchings(n)
    return greedy_matchings(base_graph)


def _laplacians(matchings, n: int) -> np.ndarray:
    """Laplacian of every matching, shape (m, n, n)."""
    out = np.zeros((len(matchings), n, n))
    for j, edges in enumerate(matchings):
        u, v = edges[:, 0], edges[:, 1]
        out[j, u, u] += 1
        out[j, v, v] += 1
        out[j, u, v] -= 1
        out[j, v, u] -= 1
    return out


def matcha_probabilities(matchings, n: int, budget: float = 0.5, solver: str | None = "SCS") -> np.ndarray:
    r"""Activation probabilities maximising :math:`\lambda_2(\sum_j p_j L_j)` (MATCHA's first SDP).

    Parameters
    ----------
    matchings : list of array_like, each shape (k, 2)
    n : int
        Number of silos.
    budget : float
        Communication budget :math:`C_b \in (0, 1]` (0.5 in the thesis).
    solver : str or None
        cvxpy solver (SCS is 4-6x faster than Clarabel here, with the same :math:`\lambda_2` to
        1e-6); ``None`` lets cvxpy choose.

    Returns
    -------
    numpy.ndarray, shape (m,)
        Probabilities in [0, 1] with :math:`\sum_j p_j \le C_b m` exactly (solver tolerance removed).
    """
    n = check_int("n", n, low=2)
    budget = check_real("budget", budget, low=0.0, high=1.0, low_open=True)
    solver = _check_solver(solver)
    L = _laplacians(_check_matchings(matchings, n), n)
    m = L.shape[0]
    p, gamma, beta = cp.Variable(m), cp.Variable(), cp.Variable()
    lap = cp.reshape(L.reshape(m, -1).T @ p, (n, n), order="C")
    cons = [p >= 0, p <= 1, cp.sum(p) <= budget * m]
    lmi = lap - gamma * np.eye(n) + beta * np.ones((n, n))
    cons.append((lmi + lmi.T) / 2 >> 0)
    cp.Problem(cp.Maximize(gamma), cons).solve(solver=solver)
    if p.value is None:
        raise RuntimeError("the MATCHA probability SDP did not solve.")
    probs = np.clip(p.value, 0.0, 1.0)
    return probs * min(1.0, budget * m / probs.sum())  # remove the solver's tolerance on the budget


def matcha_alpha(matchings, probabilities, n: int) -> float:
    r"""Mixing weight :math:`\alpha` of :math:`W_k = I - \alpha L_k` (MATCHA's second SDP).

    MATCHA solves

    .. math:: \min_{\alpha,\beta,\rho} \rho \ \text{ s.t. } \alpha^2 \le \beta,\
              I - 2\alpha\bar L + \beta(\bar L^2 + 2\tilde L) - \tfrac1N \mathbf{1}\mathbf{1}^\top
              \preceq \rho I,

    with :math:`\bar L = \sum_j p_j L_j` and :math:`\tilde L = \sum_j p_j(1-p_j) L_j`. As
    :math:`\bar L^2 + 2\tilde L \succeq 0`, the optimum has :math:`\beta = \alpha^2` and
    :math:`\rho(\alpha) = \lambda_{\max}(I - 2\alpha\bar L + \alpha^2(\bar L^2 + 2\tilde L)
    - \mathbf{1}\mathbf{1}^\top/N)` is convex in :math:`\alpha`: the same optimum is found here
    by a bounded scalar search (exact and faster than an SDP solver).

    Returns
    -------
    float
    """
    n = check_int("n", n, low=2)
    L = _laplacians(_check_matchings(matchings, n), n)
    p = _check_probabilities(probabilities, L.shape[0])
    lbar = np.tensordot(p, L, axes=1)
    quad = lbar @ lbar + 2 * np.tensordot(p * (1 - p), L, axes=1)
    centre = np.eye(n) - np.ones((n, n)) / n

    def rho(alpha: float) -> float:
        return float(np.linalg.eigvalsh(centre - 2 * alpha * lbar + alpha ** 2 * quad)[-1])

    return float(minimize_scalar(rho, bounds=(0.0, 2.0), method="bounded",
                                 options={"xatol": 1e-9}).x)


def matcha_schedule(base_graph: nx.Graph, budget: float = 0.5, solver: str | None = "SCS") -> MatchaSchedule:
    """MATCHA's matchings, probabilities and mixing weight for a base graph.

    Parameters
    ----------
    base_graph : networkx.Graph
        Connected, nodes ``0..N-1``: :math:`\\mathcal{G}_c` (MATCHA) or the underlay (MATCHA+).
    budget : float
        Communication budget :math:`C_b`.
    solver : str or None
        cvxpy solver of the probability SDP.

    Returns
    -------
    MatchaSchedule
    """
    n = _check_base(base_graph)
    solver = _check_solver(solver)
    matchings = matching_decomposition(base_graph)
    p = matcha_probabilities(matchings, n, budget, solver)
    return MatchaSchedule(n, matchings, p, matcha_alpha(matchings, p, n))


def sample_matcha_rounds(schedule: MatchaSchedule, n_rounds: int, rng=None) -> np.ndarray:
    """Active matchings of each round, redrawn until at least one is active.

    Parameters
    ----------
    schedule : MatchaSchedule
    n_rounds : int
    rng : numpy.random.Generator or int or None

    Returns
    -------
    numpy.ndarray of bool, shape (n_rounds, m)
    """
    check_type("schedule", schedule, MatchaSchedule)
    n_rounds = check_int("n_rounds", n_rounds, low=1)
    p = schedule.probabilities
    if not np.any(p > 0):
        raise ValueError("schedule has no matching with positive probability.")
    gen = as_numpy_rng(rng)
    active = gen.random((n_rounds, p.size)) < p
    empty = ~active.any(axis=1)
    while empty.any():
        active[empty] = gen.random((int(empty.sum()), p.size)) < p
        empty = ~active.any(axis=1)
    return active


def _round_time(schedule: MatchaSchedule, row: np.ndarray, conn: Connectivity, params: DelayParams) -> float:
    """Barrier duration of one round: the largest eq. (2.3) delay among its active arcs."""
    edges = np.concatenate([schedule.matchings[j] for j in np.flatnonzero(row)])
    src, dst = np.r_[edges[:, 0], edges[:, 1]], np.r_[edges[:, 1], edges[:, 0]]
    deg = np.bincount(src, minlength=conn.n)
    return float(arc_delays(src, dst, conn, params, deg[src], deg[dst]).max())


def matcha_round_times(schedule: MatchaSchedule, conn: Connectivity, params: DelayParams,
                       n_rounds: int = 1000, rng=0) -> np.ndarray:
    """Duration (ms) of each of ``n_rounds`` MATCHA rounds (barrier model, eq. 2.3 per round).

    The wall-clock time after ``k`` rounds is ``np.cumsum(round_times)[k - 1]``.

    Returns
    -------
    numpy.ndarray, shape (n_rounds,)
    """
    check_type("schedule", schedule, MatchaSchedule)
    check_network_args(conn, params)
    if schedule.n != conn.n:
        raise ValueError(f"schedule has {schedule.n} silos but conn has {conn.n}.")
    edges = np.concatenate(schedule.matchings)
    if not conn.arcs[edges[:, 0], edges[:, 1]].all() or not conn.arcs[edges[:, 1], edges[:, 0]].all():
        raise ValueError("schedule uses a pair of silos that is not in the connectivity graph.")
    active = sample_matcha_rounds(schedule, n_rounds, rng)
    return np.array([_round_time(schedule, row, conn, params) for row in active])


def matcha_cycle_time(schedule: MatchaSchedule, conn: Connectivity, params: DelayParams,
                      n_rounds: int = 1000, rng=0) -> float:
    """Empirical cycle time of MATCHA(+): mean barrier round duration over ``n_rounds`` rounds (ms)."""
    return float(matcha_round_times(schedule, conn, params, n_rounds, rng).mean())


def _local_degree(L: np.ndarray) -> np.ndarray:
    """Local-degree weights (eqs. 2.12-2.13) of the graph with Laplacian ``L`` (components allowed)."""
    deg = np.diag(L)
    W = np.where(L < 0, 1.0 / (1.0 + np.maximum(deg[:, None], deg[None, :])), 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(axis=1))
    return W


MATCHA_RULES = ("matcha", "local_degree")


def matcha_weights(schedule: MatchaSchedule, active, rule: str = "matcha") -> np.ndarray:
    r"""Consensus matrix of one MATCHA round (``active``: bool per matching).

    ``rule="matcha"``: :math:`W_k = I - \alpha L_k` [Wan+19a], with :math:`L_k` the Laplacian of the
    union of the active matchings; its diagonal is negative where :math:`\alpha \deg_k(i) > 1`.
    ``rule="local_degree"``: the local-degree weights (2.12)-(2.13) of the same union, which the
    thesis states every overlay uses: symmetric, doubly stochastic and non-negative.

    Returns
    -------
    numpy.ndarray, shape (N, N)
    """
    check_type("schedule", schedule, MatchaSchedule)
    check_choice("rule", rule, MATCHA_RULES)
    active = np.asarray(active)
    if active.dtype != bool:
        raise TypeError(f"active must be a bool array (one flag per matching), got dtype {active.dtype}.")
    if active.shape != (len(schedule.matchings),):
        raise ValueError(f"active must have shape ({len(schedule.matchings)},), got {active.shape}.")
    L = _laplacians(schedule.matchings, schedule.n)[active].sum(axis=0)
    return _local_degree(L) if rule == "local_degree" else np.eye(schedule.n) - schedule.alpha * L
