"""Cycle times of every overlay on a network: the experiment of thesis Tables 2.5, 2.6, C.1 and C.2."""
from __future__ import annotations

import networkx as nx
import numpy as np

from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.topology.delays import DelayParams, check_network_args, cycle_time
from fedlab.topology.matcha import MatchaSchedule, matcha_cycle_time, matcha_schedule
from fedlab.topology.networks import Connectivity
from fedlab.topology.overlays import OVERLAYS

__all__ = ["ALL_OVERLAYS", "matcha_schedules", "compare_overlays", "ranking"]

ALL_OVERLAYS = ("star", "matcha", "matcha+", "mst", "delta_mbst", "ring")


def _undirected_connectivity(conn: Connectivity) -> nx.Graph:
    """:math:`\\mathcal{G}_c^{(u)}`: pairs of silos joined by arcs in both directions."""
    graph = nx.Graph()
    graph.add_nodes_from(range(conn.n))
    graph.add_edges_from(zip(*np.nonzero(np.triu(conn.arcs & conn.arcs.T, 1))))
    return graph


def matcha_schedules(conn: Connectivity, budget: float = 0.5) -> dict[str, MatchaSchedule]:
    """MATCHA (base graph :math:`\\mathcal{G}_c`) and MATCHA+ (base graph: the underlay) schedules.

    They depend only on the base graphs, so they can be reused across delay parameters.

    Returns
    -------
    dict
        ``{"matcha": ..., "matcha+": ...}`` (MATCHA+ only when ``conn.underlay`` is known).
    """
    check_network_args(conn)
    out = {"matcha": matcha_schedule(_undirected_connectivity(conn), budget)}
    if conn.underlay is not None:
        out["matcha+"] = matcha_schedule(conn.underlay, budget)
    return out


def compare_overlays(conn: Connectivity, params: DelayParams, names=ALL_OVERLAYS,
                     matcha_rounds: int = 1000, seed: int = 0,
                     schedules: dict | None = None) -> dict[str, float]:
    """Cycle time (ms) of each named overlay on one network (one row of Table 2.5).

    Parameters
    ----------
    conn : Connectivity
    params : DelayParams
    names : iterable of str
        Among ``"star", "matcha", "matcha+", "mst", "delta_mbst", "ring"``.
    matcha_rounds : int
        Rounds averaged for MATCHA's empirical cycle time (1000 in the thesis).
    seed : int
        Seed of MATCHA's random matchings (the same for every parameter setting).
    schedules : dict, optional
        Precomputed :func:`matcha_schedules`.

    Returns
    -------
    dict
        ``{name: cycle time in ms}`` in the order of ``names``.
    """
    check_network_args(conn, params)
    names = [check_choice("names", name, ALL_OVERLAYS) for name in check_type("names", names, (tuple, list))]
    if not names:
        raise ValueError("names must list at least one overlay.")
    matcha_rounds = check_int("matcha_rounds", matcha_rounds, low=1)
    check_int("seed", seed, low=0)
    for key, schedule in (check_type("schedules", schedules, dict, optional=True) or {}).items():
        check_type(f"schedules[{key!r}]", schedule, MatchaSchedule)
    if any(name.startswith("matcha") for name in names) and schedules is None:
        schedules = matcha_schedules(conn)
    out = {}
    for name in names:
        if name.startswith("matcha"):
            if name not in schedules:
                raise ValueError(f"{name} needs the underlay (conn.underlay is None).")
            out[name] = matcha_cycle_time(schedules[name], conn, params, matcha_rounds, seed)
        else:
            out[name] = cycle_time(OVERLAYS[name](conn, params), conn, params)
    return out


def ranking(cycle_times: dict[str, float]) -> list[str]:
    """Overlay names from the fastest (smallest cycle time) to the slowest."""
    for name, value in check_type("cycle_times", cycle_times, dict).items():
        check_real(f"cycle_times[{name!r}]", value, low=0.0)
    return sorted(cycle_times, key=cycle_times.get)
