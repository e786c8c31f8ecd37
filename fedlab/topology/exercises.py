r"""Exercises of notebook 01 (topology design), each checking the reader's answer (see :mod:`fedlab.exercises`).

- 1.1 (compute): the cycle time of a directed ring of four silos, eqs. (2.3) and (2.5);
- 1.2 (compute): the cycle time of the STAR on the same silos, where the orchestrator's access links are shared;
- 1.3 (implement): the local-degree consensus weights (2.12)-(2.13);
- 1.4 (predict): which overlay's cycle time does not move when one silo computes twenty times slower.

The four silos of 1.1 and 1.2 (:data:`FOUR_SILOS`, :data:`FOUR_PARAMS`) and the reference answers are computed with
the package's own functions (``cycle_time``, ``local_degree_weights``).
"""
from __future__ import annotations

import numpy as np

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.mixing import local_degree_weights
from fedlab.topology.data import make_connectivity
from fedlab.topology.delays import DelayParams, cycle_time, overlay_from_edges
from fedlab.topology.overlays import star_overlay

__all__ = ["EXERCISES"]

# four silos: latencies l(i, j) in ms (symmetric), 12 ms per local step, one local step, a 30 Mbit model and
# 400 Mbps access links, core bandwidth unconstrained
LATENCY_MS = np.array([[0.0, 5.0, 20.0, 15.0],
                       [5.0, 0.0, 8.0, 18.0],
                       [20.0, 8.0, 0.0, 12.0],
                       [15.0, 18.0, 12.0, 0.0]])
FOUR_SILOS = make_connectivity(LATENCY_MS, name="four silos")
FOUR_PARAMS = DelayParams(model_bits=30e6, compute_ms=12.0, local_steps=1, up_bps=4e8, dn_bps=4e8)
RING = overlay_from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=True, name="ring 0-1-2-3")
STAR = star_overlay(FOUR_SILOS, center=0)

_TC = FOUR_PARAMS.local_steps * FOUR_PARAMS.compute_ms
_TRANSFER = 1000.0 * FOUR_PARAMS.model_bits / FOUR_PARAMS.up_bps          # one model over one access link, ms
_RING_LAT = np.array([LATENCY_MS[i, (i + 1) % 4] for i in range(4)])
_STAR_LAT = LATENCY_MS[0, 1:]


def _ring_mistakes() -> list[Mistake]:
    arcs = _TC + _RING_LAT + _TRANSFER
    return [Mistake(arcs.sum(), "The cycle time is the circuit's mean delay per arc (2.5), not its total delay: "
                                "divide by the number of arcs."),
            Mistake(arcs.sum() / 5, "$|\\gamma|$ counts the circuit's arcs: a ring of four silos has four arcs (the "
                                    "thesis writes the number of nodes of the closed path, counting the first twice)."),
            Mistake(arcs.max(), "With one circuit, the ring's cycle time is the mean of its arc delays, not the "
                                "largest one: the slow arc is compensated by the fast ones."),
            Mistake(arcs.mean() - _TC, "Each arc delay (2.3) starts with the sender's computation $s\\,T_c(i)$."),
            Mistake(arcs.mean() - _TRANSFER, "Each arc delay (2.3) includes sending the model: "
                                             "$M/\\min(C_{UP}, C_{DN}, A)$ with the degrees of a ring equal to one.")]


def _star_mistakes() -> list[Mistake]:
    far = _STAR_LAT.max()
    return [Mistake(_TC + 2 * far + 2 * _TRANSFER, "The orchestrator uploads to and downloads from three silos at "
                                                   "once: its access capacity is divided by its degree in (2.3)."),
            Mistake(_TC + 2 * far + 4 * _TRANSFER, "Only the orchestrator's side is shared: a silo uploads its one "
                                                   "model over its own full access link, which the orchestrator's "
                                                   "share $C_{DN}/3$ limits."),
            Mistake(_TC + far + 3 * _TRANSFER, "A round of the STAR is an upload and a broadcast: count both "
                                               "directions, $d(i\\to c) + d(c\\to i)$."),
            Mistake(2 * far + 6 * _TRANSFER, "The silos still train: add their computation $s\\,T_c(i)$ before the "
                                             "upload (the orchestrator only averages)."),
            Mistake(_TC / 2 + far + 3 * _TRANSFER, "That is the maximum cycle mean of the 2-cycles "
                                                   "$i\\to c\\to i$; a round of the STAR is the whole 2-cycle "
                                                   "(upload then broadcast), twice its mean.")]


def _local_degree(adjacency: np.ndarray) -> np.ndarray:
    return local_degree_weights(adjacency)


def _random_graph(rng: np.random.Generator) -> tuple[np.ndarray]:
    """A connected undirected graph: a random tree plus a few random edges, as a 0/1 adjacency matrix."""
    n = int(rng.integers(4, 9))
    adj = np.zeros((n, n), dtype=int)
    order = rng.permutation(n)
    for k in range(1, n):
        i, j = order[k], order[rng.integers(k)]
        adj[i, j] = adj[j, i] = 1
    for _ in range(int(rng.integers(1, n))):
        i, j = rng.choice(n, size=2, replace=False)
        adj[i, j] = adj[j, i] = 1
    return (adj,)


def _with_rest_on_diagonal(off: np.ndarray) -> np.ndarray:
    np.fill_diagonal(off, 0.0)
    return off + np.diag(1.0 - off.sum(axis=1))


def _no_plus_one(adj):
    d = adj.sum(axis=1)
    return _with_rest_on_diagonal(np.where(adj > 0, 1.0 / np.maximum(d[:, None], d[None, :]), 0.0))


def _min_degree(adj):
    d = adj.sum(axis=1)
    return _with_rest_on_diagonal(np.where(adj > 0, 1.0 / (1.0 + np.minimum(d[:, None], d[None, :])), 0.0))


def _zero_diagonal(adj):
    d = adj.sum(axis=1)
    return np.where(adj > 0, 1.0 / (1.0 + np.maximum(d[:, None], d[None, :])), 0.0)


def _own_degree(adj):
    d = adj.sum(axis=1)
    return (adj + np.eye(len(adj))) / (1.0 + d[:, None])


OVERLAY_CHOICES = ("STAR", "MST", "δ-MBST", "RING", "none")
OVERLAY_LABELS = {"star": "STAR", "mst": "MST", "delta_mbst": "δ-MBST", "ring": "RING"}
"""The overlays of Exercise 1.4 and their labels among the choices."""

_SELF_LOOP = ("silo 0's self-loop $d_o(0,0) = s\\,T_c(0)$ in (2.4) is a circuit of mean $s\\,T_c(0)$: a silo cannot "
              "start a round before finishing its own computation, and every decentralised overlay contains it")

EXERCISES = {
    "1.1": NumberExercise(
        "1.1", "Cycle time of a four-silo ring",
        "Eq. (2.3) gives each arc's delay $s\\,T_c(i) + l(i,j) + M/\\min(C_{UP}(i)/|\\mathcal N_i^-|, "
        "C_{DN}(j)/|\\mathcal N_j^+|, A)$ in consistent units (ms); a directed ring has one circuit, so (2.5) is the "
        "mean of its arc delays (section 1).",
        _ring_mistakes(), answer=cycle_time(RING, FOUR_SILOS, FOUR_PARAMS), rtol=2e-3),
    "1.2": NumberExercise(
        "1.2", "Cycle time of the STAR on slow access links",
        "A round of the STAR is an upload $d(i\\to c)$ and a broadcast $d(c\\to i)$ after silo $i$'s computation, "
        "with (2.3)'s transfer times: the orchestrator's $C_{UP}$ and $C_{DN}$ are shared by its $N-1$ silos; "
        "$\\tau = \\max_{i\\ne c}[s\\,T_c(i) + d(i\\to c) + d(c\\to i)]$ (section 1).",
        _star_mistakes(), answer=cycle_time(STAR, FOUR_SILOS, FOUR_PARAMS), rtol=2e-3),
    "1.3": FunctionExercise(
        "1.3", "Local-degree consensus weights",
        "Local-degree rule [LB03], eqs. (2.12)-(2.13): $A_{i,j} = 1/(1+\\max\\{d_i, d_j\\})$ on every edge, "
        "$A_{i,i} = 1 - \\sum_{j\\ne i} A_{i,j}$, zero elsewhere.",
        [Mistake(_no_plus_one, "The denominator is $1 + \\max\\{d_i, d_j\\}$: without the 1 the diagonal can turn "
                               "negative (a leaf next to a degree-1 node keeps nothing)."),
         Mistake(_min_degree, "Use the larger of the two degrees, $\\max\\{d_i, d_j\\}$: with the smaller one a hub's "
                              "row can sum to more than one."),
         Mistake(_zero_diagonal, "Put the rest on the diagonal, $A_{i,i} = 1 - \\sum_{j\\ne i} A_{i,j}$ (2.13): "
                                 "each row must sum to one."),
         Mistake(_own_degree, "That is the equal-neighbour rule $1/(1+d_i)$, which uses only the receiver's degree: "
                              "it is not symmetric, so the average is not preserved. Use both endpoints' degrees.")],
        solution=_local_degree, make_inputs=_random_graph),
    "1.4": PredictionExercise(
        "1.4", "One slow silo",
        "Look at the circuits of (2.4), self-loops $d_o(i,i) = s\\,T_c(i)$ included, and at which silos train: "
        "the STAR's orchestrator only averages.",
        [Mistake("RING", "The ring's mean arc delay grows only by $(s\\,T_c(0) - s\\,T_c)/N$, but " + _SELF_LOOP + "."),
         Mistake("MST", "A tree's 2-cycles may avoid silo 0, but " + _SELF_LOOP + "."),
         Mistake("δ-MBST", "Bounding the degree does not help: " + _SELF_LOOP + "."),
         Mistake("none", "The STAR's orchestrator is silo 0 and it does not train: its computation time does not "
                         "enter $\\tau = \\max_{i\\ne c}[s\\,T_c(i) + d(i\\to c) + d(c\\to i)]$.")],
        choices=OVERLAY_CHOICES, predicted="STAR"),
}
"""The chapter's exercises by label."""
