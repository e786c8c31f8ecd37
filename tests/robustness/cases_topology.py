"""Robustness cases of the topology chapter (notebook 01): delays, bounds (max-plus), MATCHA, data (networks),
overlays, training, claims, published formulas, plots."""
from __future__ import annotations

import functools

import networkx as nx
import numpy as np

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, File, Fixed, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.topology"


@functools.cache
def conn():
    from fedlab.topology import make_connectivity

    rng = np.random.default_rng(0)
    return make_connectivity(rng.uniform(5, 50, (4, 4)), rng.uniform(1e8, 1e9, (4, 4)))


@functools.cache
def params():
    from fedlab.topology import DelayParams

    return DelayParams(model_bits=1e7, compute_ms=5.0, local_steps=1, up_bps=1e9, dn_bps=1e9)


def overlay():
    from fedlab.topology import overlay_from_edges

    return overlay_from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=True)


@functools.cache
def schedule():
    from fedlab.topology import MatchaSchedule, round_robin_matchings

    return MatchaSchedule(4, round_robin_matchings(4), np.full(3, 0.5), 0.3)


def delays():
    w = np.full((3, 3), -np.inf)
    w[0, 1], w[1, 2], w[2, 0], w[1, 1] = 1.0, 2.0, 3.0, 0.5
    return w


def weights():
    rng = np.random.default_rng(1)
    w = rng.uniform(1, 5, (5, 5))
    return (w + w.T) / 2


def conn_kind(**kw):
    return Obj(fresh(conn), extra=(nx.complete_graph(4),), **kw)


def params_kind(**kw):
    return Obj(fresh(params), extra=({"model_bits": 1e7},), **kw)


def overlay_kind(**kw):
    return Obj(fresh(overlay), extra=(nx.DiGraph([(0, 9)]), nx.DiGraph([(0, 1)])), **kw)


def schedule_kind(**kw):
    return Obj(fresh(schedule), extra=(nx.complete_graph(4),), **kw)


TABLE = {"gaia": {"star": 100.0, "ring": 50.0}}
ROW = {"star": 391.0, "matcha": 228.0, "matcha+": 228.0, "mst": 138.0, "delta_mbst": 138.0, "ring": 118.0}
HITS = {"ring": {"round": 3, "time_s": 1.0}, "star": {"round": 3, "time_s": 4.0}}
RESULT = {"curves": {"ring": {"round": [0, 1], "time_s": [0.0, 0.5], "train_loss": [2.0, 1.0],
                              "train_accuracy": [0.1, 0.6], "test_loss": [2.0, 1.1], "test_accuracy": [0.1, 0.5]}}}
STAR_RESULT = {"curves": {**RESULT["curves"], "star": RESULT["curves"]["ring"]}}


def claim_results():
    """The smallest results mapping fedlab.topology.claims.chapter_claims accepts (smoke-like: no training)."""
    from fedlab.topology.published import NETWORK_ORDER, TABLE_2_4, TABLES

    sweep = {"capacity_bps": np.array([1e6, 1e8, 7e9]), **{o: np.ones(3) for o in
                                                           ("star", "matcha+", "mst", "delta_mbst", "ring")}}
    return {"tables": {k: TABLES[k] for k in ("table_2_5", "table_2_6")}, "matcha_rounds": 10,
            "complete_gc_2_6": {n: 1.0 for n in NETWORK_ORDER},
            "mst_ties_2_6": {n: {"index": 1.0} for n in NETWORK_ORDER},
            "zero_length_links": {n: 0 for n in NETWORK_ORDER},
            "examples": {"1a": (3.0, 2.7), "1b": {3: (3.0, 2.5)}, "2": {3: 0.5}}, "karp": (1, 1),
            "access_sweep": sweep, "fast_centre": {"star": 2.0, "delta_mbst": 2.0, "ring": 1.0},
            "steps_sweep": {"s": [1, 2], "star_over_ring": [2.0, 1.5]},
            "timelines": {"ring": np.outer(np.arange(5), [10.0])}, "timeline_tau_ms": {"ring": 10.0},
            "training": {"10 Gbps": {}, "100 Mbps": {}}, "train_rounds": 1, "target_fraction": 0.95,
            "model_mib": {k: 1.0 for k in TABLE_2_4}, "bandwidth_mbps": np.array([1.0]), "paper": None}


@functools.cache
def federation():
    from fedlab.topology import topology_federation

    return topology_federation(4, 0)


def real_setting():
    """The FEMNIST setting shrunk to the robustness files (22 silos: AWS NA's), on a softmax regression."""
    from fedlab.topology.real_data import SETTINGS

    return w.tiny(SETTINGS["femnist"], clients=22, model="mnist_logistic")


def real_setting_dict():
    import dataclasses

    return dataclasses.asdict(real_setting())


def mnist_setting():
    import dataclasses

    return dataclasses.replace(real_setting(), dataset="mnist")


GML = """graph [
  node [ id 0 label "A" Latitude 0.0 Longitude 0.0 ]
  node [ id 1 label "B" Latitude 0.0 Longitude 1.0 ]
  edge [ source 0 target 1 ]
]
"""


def ring4():
    from fedlab.mixing import local_degree_weights

    return local_degree_weights(overlay())

CASES = [
    # ---------------------------------------------------------------- delays
    Case(f"{M}.delays.DelayParams", {"model_bits": Real(1e7, low=0, low_open=True),
                                     "compute_ms": Arr(0.0, nonneg=True, nonempty=False),
                                     "local_steps": Int(1, low=0),
                                     "up_bps": Arr(1e10, positive=True, finite=False, nonempty=False,
                                                   extra=(NAN,)),
                                     "dn_bps": Arr(1e10, positive=True, finite=False, nonempty=False,
                                                   extra=(NAN,))}, edge=("local_steps",)),
    Case(f"{M}.delays.preset_params", {"preset": Choice("femnist"),
                                       "access_bps": Arr(1e10, positive=True, finite=False, nonempty=False,
                                                         extra=(NAN,)),
                                       "local_steps": Int(1, low=0)}, edge=("local_steps",)),
    Case(f"{M}.delays.overlay_delays", {"overlay": overlay_kind(also=("conn",)), "conn": conn_kind(also=("overlay",)),
                                        "params": params_kind()}),
    Case(f"{M}.delays.connectivity_delays", {"conn": conn_kind(), "params": params_kind()}),
    Case(f"{M}.delays.degree_one_delays", {"conn": conn_kind(), "params": params_kind()}),
    Case(f"{M}.delays.cycle_time", {"overlay": overlay_kind(also=("conn",)), "conn": conn_kind(also=("overlay",)),
                                    "params": params_kind()}),
    Case(f"{M}.delays.throughput", {"tau_ms": Real(10.0, low=0, low_open=True)}),
    Case(f"{M}.delays.overlay_from_edges", {"n": Int(4, low=1), "edges": Obj([(0, 1), (1, 2)],
                                                                             extra=([(0, 9)], [(0,)], [(0.5, 1)]))}),
    # ---------------------------------------------------------------- experiments, simulator
    Case(f"{M}.experiments.matcha_schedules", {"conn": conn_kind(), "budget": Real(0.5, low=0, high=1,
                                                                                    low_open=True)}, edge=("budget",)),
    Case(f"{M}.experiments.compare_overlays", {"conn": conn_kind(), "params": params_kind(),
                                               "names": Kind(("star",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                               "matcha_rounds": Int(10, low=1), "seed": Int(0, low=0),
                                               "schedules": Obj(None, optional=True, extra=({"matcha": 3},))},
         edge=("matcha_rounds",)),
    Case(f"{M}.data.topology_federation", {"n_silos": Int(4, low=2), "seed": Int(0, low=0),
                                                   "heterogeneity": Real(0.5, low=0), "max_samples": Int(60, low=10)},
         edge=("n_silos", "heterogeneity", "max_samples")),
    Case(f"{M}.experiments.train_overlays", {"conn": conn_kind(also=("data",)), "params": params_kind(),
                                             "data": Obj(fresh(federation), extra=(fresh(lambda: __import__(
                                                 "fedlab.topology", fromlist=["x"]).topology_federation(5, 0)), 3),
                                                 also=("conn",)),
                                             "rounds": Int(2, low=1), "lr": Real(0.05, low=0, low_open=True),
                                             "names": Kind(("star", "ring"), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                             "batch_size": Int(8, low=1)}, edge=("rounds", "batch_size")),
    Case(f"{M}.experiments.time_to_target", {"result": Obj(RESULT, extra=({"curves": {}}, 3)), "target": Real(0.5),
                                             "metric": Choice("train_accuracy")}),
    Case(f"{M}.experiments.mst_ties", {"conn": conn_kind(), "params": params_kind()}),
    Case(f"{M}.algorithms.AveragedDPASGD", {
        "model": Obj(fresh(lambda: __import__("fedlab.models", fromlist=["x"]).LinearModel(60, 10)),
                     extra=({"lr": 0.1},)),
        "solver": Obj(fresh(lambda: __import__("fedlab.engine", fromlist=["x"]).LocalSGD(0.1)), extra=({"lr": 0.1},)),
        "mixing_matrix": Arr(fresh(ring4), stochastic=True)}),
    Case(f"{M}.experiments.ranking", {"cycle_times": Obj({"star": 100.0}, extra=({"star": NAN}, {"star": "x"}))}),
    Case(f"{M}.simulator.simulate_wall_clock", {"overlay": overlay_kind(also=("conn",)),
                                                "conn": conn_kind(also=("overlay",)), "params": params_kind(),
                                                "n_rounds": Int(3, low=0)}, edge=("n_rounds",)),
    Case(f"{M}.simulator.rounds_within", {"t": Arr(np.array([[0.0, 0.0], [1.0, 1.5], [2.5, 2.0]]), ndim=2),
                                          "budget_ms": Real(2.0, low=0)}),
    # ---------------------------------------------------------------- matcha
    Case(f"{M}.matcha.MatchaSchedule", {"n": Int(4, low=2), "matchings": Obj(fresh(lambda: schedule().matchings),
                                                                             extra=([], [np.array([[0, 9]])])),
                                        "probabilities": Arr(np.full(3, 0.5), prob=True, link=True,
                                                             also=("matchings",)),
                                        "alpha": Real(0.3, low=0)}, edge=("alpha",)),
    Case(f"{M}.matcha.round_robin_matchings", {"n": Int(4, low=2)}),
    Case(f"{M}.matcha.greedy_matchings", {"graph": Obj(nx.cycle_graph(4), extra=(nx.DiGraph([(0, 1)]),))}),
    Case(f"{M}.matcha.matching_decomposition", {"base_graph": Obj(nx.cycle_graph(4),
                                                                  extra=(nx.Graph([(0, 1), (2, 3)]),))}),
    Case(f"{M}.matcha.matcha_probabilities", {"matchings": Obj(fresh(lambda: schedule().matchings), extra=([],)),
                                              "n": Int(4, low=2), "budget": Real(0.5, low=0, high=1, low_open=True),
                                              "solver": Kind("SCS", extra=(BAD_TEXT, 3))}),
    Case(f"{M}.matcha.matcha_alpha", {"matchings": Obj(fresh(lambda: schedule().matchings), extra=([],)),
                                      "probabilities": Arr(np.full(3, 0.5), prob=True, link=True,
                                                           also=("matchings",)),
                                      "n": Int(4, low=2)}),
    Case(f"{M}.matcha.matcha_schedule", {"base_graph": Obj(nx.cycle_graph(4), extra=(nx.Graph([(0, 1), (2, 3)]),)),
                                         "budget": Real(0.5, low=0, high=1, low_open=True),
                                         "solver": Kind("SCS", extra=(BAD_TEXT, 3))}, edge=("budget",)),
    Case(f"{M}.matcha.sample_matcha_rounds", {"schedule": schedule_kind(), "n_rounds": Int(3, low=1), "rng": Rng(0)},
         edge=("n_rounds",)),
    Case(f"{M}.matcha.matcha_round_times", {"schedule": schedule_kind(also=("conn",)),
                                            "conn": conn_kind(also=("schedule",)), "params": params_kind(),
                                            "n_rounds": Int(3, low=1), "rng": Rng(0)}),
    Case(f"{M}.matcha.matcha_cycle_time", {"schedule": schedule_kind(also=("conn",)),
                                           "conn": conn_kind(also=("schedule",)), "params": params_kind(),
                                           "n_rounds": Int(3, low=1), "rng": Rng(0)}),
    Case(f"{M}.matcha.matcha_weights", {"schedule": schedule_kind(), "active": Arr(np.ones(3, bool), finite=False,
                                                                                   link=True,
                                                                                   extra=(np.ones(3) * 0.5,)),
                                        "rule": Choice("matcha")}),
    # ---------------------------------------------------------------- bounds (max-plus)
    *[Case(f"{M}.bounds.{name}", {"W": Arr(fresh(delays), square=True,
                                            extra=(np.full((3, 3), -np.inf), np.full((3, 3), np.inf)))})
      for name in ("max_cycle_mean", "critical_circuit", "max_cycle_mean_bruteforce")],
    Case(f"{M}.bounds.simulate_maxplus", {"W": Arr(fresh(delays), square=True),
                                           "n_steps": Int(3, low=0), "t0": Arr(None, optional=True,
                                                                               extra=(np.zeros(2),))}),
    # ---------------------------------------------------------------- data (networks)
    Case(f"{M}.data.Network", {"name": Kind("n", extra=(3,)), "graph": Obj(nx.path_graph(3),
                                                                               extra=(nx.DiGraph([(0, 1)]),)),
                                   "positions": Arr(None, optional=True, extra=(np.zeros((2, 2)),))}),
    Case(f"{M}.data.Connectivity", {
        "latency_ms": Arr(np.ones((3, 3)), nonneg=True, square=True, also=("available_bps", "arcs")),
        "available_bps": Arr(np.full((3, 3), 1e9), nonneg=True, finite=False, square=True,
                             extra=(NAN, np.array([[1, 0, 1], [1, 1, 1], [1, 1, 1]]) * 1e9), also=("latency_ms",)),
        "arcs": Arr(np.ones((3, 3), bool), finite=False, square=True, also=("latency_ms",)),
        "names": Kind((), extra=(3,)), "name": Kind("custom", extra=(3,))}),
    Case(f"{M}.data.load_network", {"name": Choice("gaia"), "authors_km": Kind(False, extra=(BAD_TEXT, 2))}),
    Case(f"{M}.data.read_network_csv", {
        "nodes_path": File("data/networks/gaia_nodes.csv", extra=("/nonexistent/robustness/nodes.csv",)),
        "links_path": File("data/networks/gaia_links.csv", extra=("/nonexistent/robustness/links.csv",
                                                                  "data/networks/gaia_nodes.csv")),
        "name": Kind(None, extra=(3,))}),
    Case(f"{M}.data.read_gml_network", {"path": File(fresh(lambda: w.written("toy.gml", GML)),
                                                         extra=("/nonexistent/robustness/n.gml",)),
                                            "name": Fixed(None)}),
    Case(f"{M}.data.network_from_sites", {"name": Kind("n", extra=(3,)),
                                              "sites": Obj([("a", 0.0, 0.0), ("b", 10.0, 20.0)],
                                                           extra=([("a", 0.0, 0.0)], [("a", NAN, 0.0), ("b", 1, 1)],
                                                                  [("a", 100.0, 0.0), ("b", 1, 1)], [3, 4]))}),
    Case(f"{M}.data.read_sites", {"path": File(None, optional=True, extra=("/nonexistent/robustness/sites.csv",
                                                                "data/networks/gaia_links.csv"))}),
    Case(f"{M}.data.great_circle_km", {"lat1": Arr(10.0, nonempty=False, extra=(100.0,)),
                                           "lon1": Arr(20.0, nonempty=False, extra=(400.0,)),
                                           "lat2": Arr(30.0, nonempty=False, extra=(-100.0,)),
                                           "lon2": Arr(40.0, nonempty=False)}),
    Case(f"{M}.data.random_geometric_network", {"n": Int(5, low=2), "radius": Real(None, low=0, low_open=True,
                                                                                       optional=True),
                                                    "size_km": Real(4000.0, low=0, low_open=True), "rng": Rng(0)},
         edge=("n",)),
    Case(f"{M}.data.connectivity_graph", {
        "network": Obj(fresh(lambda: __import__("fedlab.topology", fromlist=["x"]).load_network("gaia")),
                       extra=(nx.path_graph(3),)),
        "core_bps": Real(1e9, low=0, low_open=True, inf_ok=True), "ms_per_km": Real(0.0085, low=0),
        "base_ms": Real(4.0, low=0)}),
    Case(f"{M}.data.make_connectivity", {
        "latency_ms": Arr(np.ones((3, 3)), finite=False, square=True, also=("available_bps", "arcs"),
                          extra=(np.array([[0, NAN, 1], [1, 0, 1], [1, 1, 0]]), -np.ones((3, 3)))),
        "available_bps": Arr(1e9, positive=True, finite=False, nonempty=False, extra=(NAN, np.ones((2, 2)))),
        "arcs": Arr(None, optional=True, finite=False, extra=(np.zeros((3, 3), bool), np.ones((2, 2), bool))),
        "names": Kind(None, extra=(3, ("a",)))}),
    # ---------------------------------------------------------------- overlays
    Case(f"{M}.overlays.design_overlay", {"name": Choice("star"), "conn": conn_kind(), "params": params_kind()}),
    Case(f"{M}.overlays.star_overlay", {"conn": conn_kind(), "params": Obj(None, optional=True, extra=({},)),
                                        "center": Kind(0, extra=(9, -1, 1.5, BAD_TEXT))}),
    Case(f"{M}.overlays.mst_overlay", {"conn": conn_kind(), "params": params_kind(), "ties": Choice("index")}),
    Case(f"{M}.overlays.kruskal_tree", {"weights": Arr(fresh(weights), square=True, nonneg=True, finite=False,
                                                       extra=(np.full((5, 5), NAN),)),
                                        "ties": Choice("index")}),
    Case(f"{M}.overlays.delta_mbst_overlay", {"conn": conn_kind(), "params": params_kind(),
                                              "deltas": Kind(None, extra=([0], [1.5], BAD_TEXT)),
                                              "return_candidates": Kind(False, extra=(BAD_TEXT, 2))}),
    Case(f"{M}.overlays.ring_overlay", {"conn": conn_kind(), "params": params_kind(), "matching": Choice("exact")}),
    Case(f"{M}.overlays.prim_tree", {"weights": Arr(fresh(weights), square=True, nonneg=True, finite=False,
                                                    extra=(np.full((5, 5), NAN),)),
                                     "root": Int(0, low=0, high=4)}),
    Case(f"{M}.overlays.delta_prim", {"weights": Arr(fresh(weights), square=True, nonneg=True, finite=False,
                                                     extra=(np.full((5, 5), NAN),)),
                                      "delta": Int(2, low=2), "root": Int(0, low=0, high=4)}, edge=("root",)),
    Case(f"{M}.overlays.cube_path", {"tree": Obj(nx.path_graph(4), extra=(nx.cycle_graph(4),)),
                                     "root": Int(0, low=0, high=3)}),
    Case(f"{M}.overlays.christofides_tour", {"weights": Arr(fresh(weights), square=True, nonneg=True, finite=False,
                                                            extra=(np.full((5, 5), NAN),)),
                                             "matching": Choice("exact")}),
    Case(f"{M}.bounds.karp_agreement", {"n_graphs": Int(5, low=1), "seed": Int(0, low=0)}, edge=("n_graphs", "seed")),
    Case(f"{M}.bounds.example_1a", {}),
    Case(f"{M}.bounds.example_1b", {"n": Int(3, low=2)}, edge=("n",)),
    Case(f"{M}.bounds.example_2", {"N": Int(3, low=2)}, edge=("N",)),
    Case(f"{M}.bounds.star_ring_limit", {"n_silos": Int(40, low=2)}, edge=("n_silos",)),
    # ---------------------------------------------------------------- orderings, targets, claims, published
    Case(f"{M}.experiments.strictly_ordered", {"row": Obj({"a": 1.0, "b": 2.0}, extra=({"a": NAN, "b": 1.0},)),
                                               "order": Kind(("a", "b"), extra=(("a",), ("a", "z"), BAD_TEXT, 3)),
                                               "gap": Real(0.03, low=0)}, edge=("gap",)),
    Case(f"{M}.experiments.table_2_5_ranking", {"rows": Obj({"gaia": ROW}, extra=({"gaia": 3}, {"gaia": {"star": 1.0}},
                                                                                  {"gaia": {**ROW, "ring": NAN}})),
                                                "gap": Real(0.03, low=0)}, edge=("gap",)),
    Case(f"{M}.experiments.complete_cycle_time", {"conn": conn_kind(), "params": params_kind()}),
    Case(f"{M}.experiments.training_target", {"result": Obj(STAR_RESULT, extra=(RESULT, {"curves": {}})),
                                              "fraction": Real(0.95, low=0, low_open=True, high=1)},
         edge=("fraction",)),
    Case(f"{M}.experiments.ring_ratio", {"hits": Obj(HITS, extra=({"star": HITS["star"]}, {"ring": {}, "star": {}})),
                                         "other": Kind("star", extra=("torus", "ring", 3)),
                                         "field": Choice("time_s")}),
    Case(f"{M}.simulator.growth_rate", {"t": Arr(np.outer(np.arange(5), [1.0, 2.0]), ndim=2,
                                                 extra=(np.zeros((2, 2)),))}),
    Case(f"{M}.published.example_1b_ring", {"n": Int(3, low=1)}, edge=("n",)),
    Case(f"{M}.published.example_2_printed", {"N": Int(3, low=1)}, edge=("N",)),
    Case(f"{M}.claims.chapter_claims", {"results": Obj(fresh(claim_results),
                                                       extra=({}, [1])),
                                        "scale": Choice("smoke")}),
    Case(f"{M}.claims.paper_claims", {"results": Kind(None, extra=(BAD_TEXT, 3, [1]))}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.layout_positions", {"conn": conn_kind()}),
    Case(f"{M}.plots.plot_overlay", {"conn": conn_kind(also=("overlay",)), "overlay": overlay_kind(also=("conn",)),
                                     "ax": AX}),
    Case(f"{M}.plots.plot_cycle_times", {"table": Obj(TABLE, extra=({"gaia": {"star": NAN}}, {}, {"gaia": {}},
                                                                     {"gaia": {"star": -1.0}})),
                                         "paper": Obj(None, optional=True, extra=({"gaia": {"star": "x"}},)),
                                         "ax": AX,
                                         "logy": Kind(True, extra=(BAD_TEXT,))}),
    Case(f"{M}.plots.plot_sweep", {"x": Arr([1.0, 2.0], ndim=1, link=True, also=("curves",)),
                                   "curves": Obj({"a": [1.0, 2.0]}, extra=({"a": [1.0]}, {}, {"a": [NAN, 1]}),
                                                 also=("x",)),
                                   "ax": AX, "logx": Kind(True, extra=(BAD_TEXT,)),
                                   "logy": Kind(True, extra=(BAD_TEXT,))}),
    Case(f"{M}.plots.plot_training", {"result": Obj(RESULT, extra=({"curves": {}}, 3)),
                                      "metric": Kind("train_loss", extra=("f1", 3)),
                                      "axes": Kind(None, extra=([1, 2, 3],))}),
    Case(f"{M}.plots.plot_bandwidths", {"conn": conn_kind(), "ax": AX}),
    Case(f"{M}.plots.plot_timeline", {"t": Arr(np.array([[0.0, 0.0], [1.0, 1.5], [2.5, 2.0]]), ndim=2, nonneg=True),
                                      "tau": Real(None, low=0, low_open=True, optional=True), "ax": AX}),
    # ---------------------------------------------------------------- paper mode (fedlab.topology.real_data)
    Case(f"{M}.real_data.writers_per_silo", {"n_silos": Int(22, low=1), "seed": Int(0, low=0),
                                             "mean": Real(5.0, low=0, low_open=True), "std": Real(1.5, low=0)},
         edge=("n_silos", "std")),
    Case(f"{M}.real_data.silo_data", {"setting": Obj(fresh(real_setting), extra=("femnist", mnist_setting())),
                                      "n_silos": Int(3, low=1), "seed": Int(0, low=0)}, edge=("n_silos",)),
    Case(f"{M}.real_data.topology_paper_run", {"setting": Obj(fresh(real_setting_dict), extra=("femnist", [1])),
                                               "seed": Int(0, low=0)}, skip=("device",)),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, low=1, optional=True),
                                      "datasets": Kind(("femnist",), extra=((), ("mnist",), 3)),
                                      "settings": Kind(fresh(lambda: {"femnist": real_setting()}),
                                                       extra=(BAD_TEXT, 3))}, skip=("device", "store")),
    Case(f"{M}.real_data.expected_seconds", {"settings": Kind(fresh(lambda: {"femnist": real_setting()}),
                                                              extra=(BAD_TEXT, 3, {"femnist": 3}))},
         skip=("device",)),
]
