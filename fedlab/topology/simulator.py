r"""Time simulator (thesis Algorithm 5): wall-clock timeline of synchronous decentralised training.

With indices corrected (spec erratum E5), silo :math:`i` has finished its :math:`k`-th local
computation (and can send its :math:`k`-th update) at

.. math:: t_i(k) = \max_{j \in \mathcal{N}_i^+ \cup \{i\}} \Big[t_j(k-1) + l(j,i) +
          \frac{M}{\min\big(C_{UP}(j)/|\mathcal{N}_j^-|,\ C_{DN}(i)/|\mathcal{N}_i^+|,\ A(j',i')\big)}
          \Big] + s\,T_c(i),

with a zero transfer term for :math:`j = i`. Computation is charged at the receiver; every circuit
visits each node once as sender and once as receiver, so the slope :math:`t_i(K)/K` tends to the
cycle time (2.5) of the overlay. The training itself runs elsewhere as fast as the hardware allows;
the simulator only rebuilds the timeline on the given network.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from fedlab._validation import check_array, check_int, check_real
from fedlab.topology.delays import DelayParams, check_network_args, overlay_arcs, transfer_ms
from fedlab.topology.data import Connectivity

__all__ = ["simulate_wall_clock", "rounds_within", "growth_rate"]


def _transfer_matrix(overlay: nx.DiGraph, conn: Connectivity, params: DelayParams) -> np.ndarray:
    """``T[j, i]`` = latency + transmission time of arc ``j -> i`` (eq. 2.3 without computation)."""
    src, dst = overlay_arcs(overlay, conn)
    outdeg = np.bincount(src, minlength=conn.n)[src]
    indeg = np.bincount(dst, minlength=conn.n)[dst]
    T = np.full((conn.n, conn.n), -np.inf)
    T[src, dst] = transfer_ms(src, dst, conn, params, outdeg, indeg)
    return T


def _simulate_server(T: np.ndarray, comp: np.ndarray, server: int, n_rounds: int) -> np.ndarray:
    """Server-client rounds: the server waits for every upload, then broadcasts; silos compute."""
    silos = np.flatnonzero(np.arange(T.shape[0]) != server)
    t = np.zeros((n_rounds + 1, T.shape[0]))
    for k in range(n_rounds):
        collected = np.max(t[k, silos] + T[silos, server])
        t[k + 1, silos] = collected + T[server, silos] + comp[silos]
        t[k + 1, server] = collected
    return t


def simulate_wall_clock(overlay: nx.DiGraph, conn: Connectivity, params: DelayParams,
                        n_rounds: int) -> np.ndarray:
    r"""Timeline of ``n_rounds`` rounds of synchronous training on an overlay (thesis Algorithm 5).

    ``t[k, i]`` is the time at which silo :math:`i` has received the :math:`k`-th round of models
    from its in-neighbours and finished its next :math:`s` local steps (computation charged at the
    receiver, as in Algorithm 5). For a server overlay (``overlay.graph["server"] = c``, the STAR)
    the orchestrator waits for every upload, averages instantly and broadcasts; its column holds
    the time at which it has collected round :math:`k`.

    Parameters
    ----------
    overlay : networkx.DiGraph
        Strongly connected overlay on silos ``0..N-1``.
    conn : Connectivity
    params : DelayParams
    n_rounds : int
        Number of communication rounds ``K`` (>= 0).

    Returns
    -------
    numpy.ndarray, shape (K + 1, N)
        Times in ms with ``t[0] = 0``; :math:`t_i(K)/K \to \tau` (eq. 2.5) as :math:`K` grows.
    """
    n_rounds = check_int("n_rounds", n_rounds, low=0)
    check_network_args(conn, params)
    T = _transfer_matrix(overlay, conn, params)
    if not nx.is_strongly_connected(overlay):
        raise ValueError("overlay must be strongly connected.")
    comp = params.arrays(conn.n)[0]
    server = overlay.graph.get("server")
    if server is not None:
        return _simulate_server(T, comp, server, n_rounds)
    np.fill_diagonal(T, 0.0)
    t = np.zeros((n_rounds + 1, conn.n))
    for k in range(n_rounds):
        t[k + 1] = (t[k][:, None] + T).max(axis=0) + comp
    return t


def rounds_within(t: np.ndarray, budget_ms: float) -> int:
    """Number of rounds completed by every silo within a wall-clock budget (``t`` from the simulator).

    Parameters
    ----------
    t : array (K + 1, N)
        Times in ms, as :func:`simulate_wall_clock` returns them.
    budget_ms : float
        Wall-clock budget in ms (>= 0).
    """
    t = check_array("t", t, ndim=2)
    if 0 in t.shape:
        raise ValueError(f"t must hold at least one round of one silo, got shape {t.shape}.")
    budget_ms = check_real("budget_ms", budget_ms, low=0.0)
    done = np.flatnonzero(t.max(axis=1) <= budget_ms)
    return int(done[-1]) if done.size else 0


def growth_rate(t: np.ndarray) -> float:
    r"""The timeline's growth rate over its second half, :math:`\max_i (t_i(K) - t_i(h))/(K - h)` with
    :math:`h = \lfloor (K+1)/2 \rfloor` (ms per round): the cycle time (2.5) once the transient has passed.

    Parameters
    ----------
    t : array (K + 1, N)
        Times in ms, as :func:`simulate_wall_clock` returns them, with at least two rounds (K >= 2).
    """
    t = check_array("t", t, ndim=2)
    if t.shape[0] < 3 or t.shape[1] < 1:
        raise ValueError(f"t must hold at least two rounds (3 rows) of one silo, got shape {t.shape}.")
    half = t.shape[0] // 2
    return float(np.max((t[-1] - t[half]) / (t.shape[0] - 1 - half)))
