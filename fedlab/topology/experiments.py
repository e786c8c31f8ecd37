"""Experiments of the topology chapter.

* Cycle times of every overlay on a network: Tables 2.5, 2.6 and the two tables of App. C.2.1 (``compare_overlays``),
  the orderings that section 2.1.4.5 reads in them (``strictly_ordered``, ``table_2_5_ranking``), and the cycle time of
  the complete connectivity graph (``complete_cycle_time``: MATCHA with every matching active).
* Training with DPASGD on each overlay, against rounds and against the wall-clock time of the
  network: Fig. 2.8, Figs. C.1-C.14 and the speed-up columns of Tables 2.5 and 2.6
  (``train_overlays``, ``training_target``, ``time_to_target``, ``ring_ratio``).
* Equally light minimum spanning trees (``mst_ties``).
"""
from __future__ import annotations

from typing import Mapping

import networkx as nx
import numpy as np

from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.engine import FederatedDataset, LocalSGD, run, solver_from_recipe
from fedlab.mixing import exact_average, local_degree_weights
from fedlab.models import LinearModel, Model, check_model
from fedlab.topology.algorithms import AveragedDPASGD
from fedlab.topology.delays import DelayParams, check_network_args, connectivity_delays, cycle_time, overlay_from_edges
from fedlab.topology.matcha import (MatchaSchedule, matcha_cycle_time, matcha_round_times, matcha_schedule,
                                    matcha_weights, sample_matcha_rounds)
from fedlab.topology.data import Connectivity
from fedlab.topology.overlays import MST_TIES, OVERLAYS, kruskal_tree, prim_tree
from fedlab.topology.simulator import simulate_wall_clock

__all__ = ["ALL_OVERLAYS", "TRAINED_OVERLAYS", "TRAINING_METRICS", "TARGET_FRACTION", "matcha_schedules",
           "compare_overlays", "ranking", "strictly_ordered", "table_2_5_ranking", "complete_cycle_time",
           "training_target", "ring_ratio",
           "train_overlays", "time_to_target", "MST_RULES", "mst_ties"]

ALL_OVERLAYS = ("star", "matcha", "matcha+", "mst", "delta_mbst", "ring")
TRAINED_OVERLAYS = ("star", "matcha+", "mst", "delta_mbst", "ring")
TRAINING_METRICS = ("train_loss", "train_accuracy", "test_loss", "test_accuracy")
TARGET_FRACTION = 0.95
"""The training target: this fraction of the STAR's final training accuracy on the same network and setting."""


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


def strictly_ordered(row: Mapping[str, float], order, gap: float = 0.03) -> bool:
    """Whether ``row[order[0]] < row[order[1]] < ...``, each value below the next divided by ``1 + gap``.

    >>> strictly_ordered({"ring": 95.0, "mst": 122.0, "star": 902.0}, ("ring", "mst", "star"))
    True
    >>> strictly_ordered({"ring": 100.0, "mst": 102.0}, ("ring", "mst"))
    False
    """
    check_type("row", row, Mapping)
    order = check_type("order", order, (tuple, list))
    if len(order) < 2:
        raise ValueError(f"order must name at least two entries of row, got {order!r}.")
    for name in order:
        if name not in row:
            raise ValueError(f"order names {name!r}, which row does not hold (it holds {sorted(row)}).")
        check_real(f"row[{name!r}]", row[name])
    divisor = 1 + check_real("gap", gap, low=0.0)
    return all(row[a] < row[b] / divisor for a, b in zip(order, order[1:]))


MST_FASTEST = ("geant",)
"""Networks on which section 2.1.4.5 has the MST faster than the RING (Table 2.5)."""


def table_2_5_ranking(rows: Mapping[str, Mapping[str, float]], gap: float = 0.03) -> dict[str, dict[str, bool]]:
    """The orderings section 2.1.4.5 reads in Table 2.5, on each network, with gaps larger than ``gap`` only.

    Parameters
    ----------
    rows : mapping
        ``{network: {overlay: cycle time}}`` with the six overlays; a network name may carry a suffix after a space
        (``"gaia (authors' km)"``).
    gap : float
        Relative gap below which two cycle times do not count as ordered.

    Returns
    -------
    dict
        ``{network: {"RING vs MST": ..., "designed < MATCHA < STAR": ..., "δ-MBST = MST": ...}}``: RING faster than
        MST (MST faster on Géant), MST, δ-MBST and RING faster than MATCHA, itself faster than STAR, and δ-MBST equal
        to MST (to 1e-9 ms).
    """
    check_type("rows", rows, Mapping)
    out = {}
    for name, t in rows.items():
        check_type(f"rows[{name!r}]", t, Mapping)
        missing = {"star", "matcha", "mst", "delta_mbst", "ring"} - set(t)
        if missing:
            raise ValueError(f"rows[{name!r}] must hold the cycle times of {sorted(missing)}, got {sorted(t)}.")
        for overlay in ("star", "matcha", "mst", "delta_mbst", "ring"):
            check_real(f"rows[{name!r}][{overlay!r}]", t[overlay])
        mst_first = str(name).split(" ")[0] in MST_FASTEST
        out[name] = {
            "RING vs MST": strictly_ordered(t, ("mst", "ring") if mst_first else ("ring", "mst"), gap),
            "designed < MATCHA < STAR": all(strictly_ordered(t, (o, "matcha", "star"), gap)
                                            for o in ("mst", "delta_mbst", "ring")),
            "δ-MBST = MST": abs(t["delta_mbst"] - t["mst"]) < 1e-9,
        }
    return out


def complete_cycle_time(conn: Connectivity, params: DelayParams) -> float:
    """Cycle time (ms) of the complete connectivity graph as an undirected overlay: MATCHA with every matching active
    in every round (budget :math:`C_b = 1`)."""
    check_network_args(conn, params)
    return cycle_time(overlay_from_edges(conn.n, nx.complete_graph(conn.n).edges), conn, params)


def _matcha_plan(schedule: MatchaSchedule, conn: Connectivity, params: DelayParams, rounds: int, seed: int):
    """MATCHA(+) rounds: the local-degree matrix of each round's matchings and the barrier clock (ms)."""
    active = sample_matcha_rounds(schedule, rounds, seed)
    durations = matcha_round_times(schedule, conn, params, rounds, seed)  # same seed: the same active rows

    def mixing(t: int, _rng) -> np.ndarray:
        return matcha_weights(schedule, active[t], rule="local_degree")

    return mixing, np.r_[0.0, np.cumsum(durations)], float(durations.mean())


def _overlay_plan(name: str, conn: Connectivity, params: DelayParams, rounds: int):
    """Consensus matrix (local degree; exact averaging for the STAR), Algorithm 5's clock (ms) and tau."""
    overlay = OVERLAYS[name](conn, params)
    clock = simulate_wall_clock(overlay, conn, params, rounds).max(axis=1)
    mixing = exact_average(conn.n) if name == "star" else local_degree_weights(overlay)
    return mixing, clock, cycle_time(overlay, conn, params)


def _train(mixing, data: FederatedDataset, rounds: int, solver: LocalSGD, seed: int, eval_every: int, model,
           backend: str, device) -> dict[str, list]:
    """One DPASGD run on the engine: the average model's metrics at the evaluated rounds."""
    model = LinearModel(data.train.x.shape[-1], data.n_classes) if model is None else model
    algorithm = AveragedDPASGD(model, solver, mixing, backend=backend)
    _, history = run(algorithm, data, rounds=rounds, seed=seed, eval_every=eval_every, progress=False, device=device)
    out = {"round": [int(r) for r in history.curve("train_loss")[0]]}
    out.update({name: [float(v) for v in history.curve(name)[1]] for name in TRAINING_METRICS})
    return out


def _same_mixing(a, b) -> bool:
    return not callable(a) and not callable(b) and np.array_equal(a, b)


def train_overlays(conn: Connectivity, params: DelayParams, data: FederatedDataset, *, rounds: int, lr: float,
                   names=TRAINED_OVERLAYS, batch_size: int = 32, seed: int = 0, eval_every: int = 1,
                   schedules: dict | None = None, model: Model | None = None, backend: str = "batched",
                   device=None, recipe: dict | None = None) -> dict:
    r"""Train DPASGD (2.2) on each overlay and put every round on the network's wall clock.

    Each overlay trains the same model from the same seed with :math:`s` = ``params.local_steps``
    local steps per round; the consensus step uses the local-degree weights (2.12)-(2.13), exact
    averaging for the STAR, and for MATCHA(+) the local-degree weights of each round's random union
    of matchings. Round :math:`k` ends at :math:`\max_i t_i(k)` of the time simulator (Algorithm 5,
    whose slope is the cycle time (2.5)); MATCHA(+) rounds last their barrier duration. The clock is
    exact, not timed. Overlays with the same consensus matrix (e.g. MST = δ-MBST) train once.

    Parameters
    ----------
    conn : Connectivity
    params : DelayParams
    data : FederatedDataset
        One client per silo (``data.n_clients == conn.n``).
    rounds : int
        Communication rounds (>= 1).
    lr : float
        SGD step size.
    names : sequence of str
        Among ``"star", "matcha", "matcha+", "mst", "delta_mbst", "ring"``.
    batch_size : int
    seed : int
        Seed of the training and of MATCHA's random matchings.
    eval_every : int
        Evaluate every ``eval_every`` rounds (and at the end).
    schedules : dict, optional
        Precomputed :func:`matcha_schedules`.
    model : Model, optional
        The model every silo trains (default: multinomial logistic regression on the features).
    backend : {"batched", "loop", "auto"}
        The engine's local-training path.
    device : str or torch.device, optional
        Where to train (:func:`fedlab.engine.resolve_device`).
    recipe : dict, optional
        The local solver's training recipe (:func:`fedlab.engine.solver_from_recipe`), e.g. the authors' Adam with
        its 1/√round decay and its moments kept across rounds (paper mode).

    Returns
    -------
    dict
        ``{"tau_ms": {name: tau}, "curves": {name: {"round", "time_s", "train_loss", "train_accuracy",
        "test_loss", "test_accuracy"}}}``, lists at the evaluated rounds (JSON-serialisable).
    """
    check_network_args(conn, params)
    check_type("data", data, FederatedDataset)
    if data.n_clients != conn.n:
        raise ValueError(f"data must have one client per silo ({conn.n}), got {data.n_clients}.")
    rounds = check_int("rounds", rounds, low=1)
    lr = check_real("lr", lr, low=0.0, low_open=True)
    names = [check_choice("names", name, ALL_OVERLAYS) for name in check_type("names", names, (tuple, list))]
    if not names:
        raise ValueError("names must list at least one overlay.")
    batch_size, eval_every = check_int("batch_size", batch_size, low=1), check_int("eval_every", eval_every, low=1)
    check_int("seed", seed, low=0)
    model = check_model(model) if model is not None else None
    solver = solver_from_recipe(check_type("recipe", recipe, dict, optional=True) or {}, lr=lr,
                                local_steps=max(params.local_steps, 1), batch_size=batch_size, rounds=rounds)
    if any(name.startswith("matcha") for name in names):
        schedules = matcha_schedules(conn) if schedules is None else check_type("schedules", schedules, dict)
    out, trained = {"tau_ms": {}, "curves": {}}, []
    for name in names:
        if name.startswith("matcha"):
            mixing, clock, tau = _matcha_plan(schedules[name], conn, params, rounds, seed)
        else:
            mixing, clock, tau = _overlay_plan(name, conn, params, rounds)
        curves = next((c for m, c in trained if _same_mixing(m, mixing)), None)
        if curves is None:
            curves = _train(mixing, data, rounds, solver, seed, eval_every, model, backend, device)
            trained.append((mixing, curves))
        out["tau_ms"][name] = tau
        out["curves"][name] = {**curves, "time_s": [float(clock[r]) / 1000 for r in curves["round"]]}
    return out


def time_to_target(result: dict, target: float, metric: str = "train_accuracy") -> dict[str, dict]:
    """First evaluated round, and its wall-clock time, at which each overlay reaches ``target``.

    The thesis's training time (section 2.1.4.5): the time to reach a training-accuracy target.

    Parameters
    ----------
    result : dict
        From :func:`train_overlays`.
    target : float
        Level of ``metric`` to reach (at least ``target``; for a loss, at most).
    metric : str
        One of :data:`TRAINING_METRICS`.

    Returns
    -------
    dict
        ``{name: {"round": int or None, "time_s": float or None}}`` (None: never reached).
    """
    check_type("result", result, dict)
    if not isinstance(result.get("curves"), dict) or not result["curves"]:
        raise ValueError("result must be a train_overlays result with at least one curve.")
    target = check_real("target", target)
    metric = check_choice("metric", metric, TRAINING_METRICS)
    out = {}
    for name, curve in result["curves"].items():
        values = np.asarray(curve[metric], dtype=float)
        hit = values <= target if metric.endswith("loss") else values >= target
        k = int(np.argmax(hit)) if hit.any() else None
        out[name] = {"round": None if k is None else curve["round"][k],
                     "time_s": None if k is None else curve["time_s"][k]}
    return out


def training_target(result: dict, fraction: float = TARGET_FRACTION) -> float:
    """The training-accuracy target of a :func:`train_overlays` result: ``fraction`` of the STAR's final training
    accuracy (the thesis fixes one accuracy per network; ours is fixed before looking at the other overlays)."""
    check_type("result", result, dict)
    curve = result.get("curves", {}).get("star") if isinstance(result.get("curves"), dict) else None
    if not isinstance(curve, dict) or not curve.get("train_accuracy"):
        raise ValueError("result must be a train_overlays result with the STAR's training accuracy.")
    return check_real("fraction", fraction, low=0.0, low_open=True, high=1.0) * float(curve["train_accuracy"][-1])


def ring_ratio(hits: dict, other: str, field: str = "time_s") -> float | None:
    """``other`` / RING for the time (the RING's speed-up) or the rounds to the target, from :func:`time_to_target`'s
    result; ``None`` when either never reaches it."""
    check_type("hits", hits, dict)
    field = check_choice("field", field, ("time_s", "round"))
    if not isinstance(other, str) or other not in hits or other == "ring":
        raise ValueError(f"other must name an overlay of hits other than 'ring' ({sorted(hits)}), got {other!r}.")
    for name in (other, "ring"):
        if not isinstance(hits.get(name), dict) or field not in hits[name]:
            raise ValueError(f"hits must hold {name!r} with its {field!r} (a time_to_target result), "
                             f"got the overlays {sorted(hits)}.")
    a, b = hits[other][field], hits["ring"][field]
    return None if a is None or b is None else a / b


MST_RULES = (*MST_TIES, "prim")


def mst_ties(conn: Connectivity, params: DelayParams) -> dict[str, dict]:
    r"""Minimum spanning trees of :math:`d^{(u)}` (Prop. 2.1.1) by each tie rule, and their cycle times.

    ``"index"`` (Kruskal in networkx's order: the authors' tree), ``"degree"`` (Kruskal preferring
    low-degree endpoints among equally light edges) and ``"prim"`` (Prim from silo 0). All have the
    minimum total weight; with finite access links their cycle times under eq. (2.3) can differ.

    Returns
    -------
    dict
        ``{rule: {"weight": total d^(u) (ms), "max_degree": int, "tau_ms": cycle time}}``.
    """
    check_network_args(conn, params)
    W = _symmetric(connectivity_delays(conn, params))
    trees = {rule: kruskal_tree(W, rule) for rule in MST_TIES}
    trees["prim"] = prim_tree(W)
    return {rule: {"weight": float(tree.size(weight="weight")),
                   "max_degree": int(max(d for _, d in tree.degree())),
                   "tau_ms": cycle_time(overlay_from_edges(conn.n, tree.edges), conn, params)}
            for rule, tree in trees.items()}


def _symmetric(d: np.ndarray) -> np.ndarray:
    """:math:`(d_{ij} + d_{ji})/2` on pairs joined both ways, ``inf`` elsewhere (the MST's weights)."""
    both = np.isfinite(d) & np.isfinite(d.T)
    out = np.where(both, (np.where(both, d, 0.0) + np.where(both, d.T, 0.0)) / 2, np.inf)
    np.fill_diagonal(out, np.inf)
    return out
