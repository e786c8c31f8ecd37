"""Notebook 01 (``notebooks/01_topology.ipynb``): throughput-optimal topology design for cross-silo FL (thesis §2.1).

Networks and connectivity graphs, the delay model (eq. 2.3), cycle time as maximum cycle mean
(eq. 2.5, Karp), overlays (STAR, MST, delta-MBST, RING, MATCHA(+)) and the time simulator (Algorithm 5).
The consensus matrices are core (:mod:`fedlab.mixing`) and re-exported here.

Modules: ``data`` (the five networks, the connectivity model and the silos' training data), ``bounds`` (the
max-plus theory: Karp's maximum cycle mean, the worked examples of §2.1.3, the slow-link limit), ``delays`` (eq. 2.3
and the cycle time of an overlay, the Table 2.4 model sizes), ``overlays``, ``matcha``, ``simulator`` (Algorithm 5),
``algorithms`` (DPASGD scored at the average model, registered as ``METHODS["topology:dpasgd"]``), ``experiments``,
``claims`` (the chapter's claims from its results), ``published`` (the thesis's numbers), ``real_data`` (paper mode)
and ``plots``.

Entry points
------------
- ``load_network`` / ``make_connectivity``: the five networks of §2.1.4.2 and their connectivity graphs;
- ``design_overlay`` and ``cycle_time``: an overlay and its cycle time (eq. 2.5);
- ``compare_overlays``: every overlay on a network (Tables 2.5, 2.6 and App. C.2.1's Tables 1 and 2);
- ``simulate_wall_clock``: the timeline of Algorithm 5;
- ``train_overlays`` / ``time_to_target``: DPASGD on each overlay against wall-clock time (Fig. 2.8, C.1-C.14);
- ``mst_ties``: equally light minimum spanning trees and their cycle times;
- ``claims.chapter_claims``: the notebook's claims from its results.
- ``exercises.EXERCISES``: the notebook's numbered exercises, each checking the reader's answer with a hint
  (:mod:`fedlab.exercises`).
"""
from fedlab.mixing import (exact_average, fmmc_weights, local_degree_weights, metropolis_weights,
                           second_largest_eigenvalue_modulus, slem)
from fedlab.topology.algorithms import PRESETS, AveragedDPASGD
from fedlab.topology.bounds import (critical_circuit, example_1a, example_1b, example_2, karp_agreement,
                                    max_cycle_mean, max_cycle_mean_bruteforce, simulate_maxplus, star_ring_limit)
from fedlab.topology.data import (NETWORKS, Connectivity, Network, connectivity_graph, great_circle_km, load_network,
                                  make_connectivity, network_from_sites, random_geometric_network, read_gml_network,
                                  read_network_csv, read_sites, topology_federation)
from fedlab.topology.delays import (MODEL_SIZES, DelayParams, connectivity_delays, cycle_time, degree_one_delays,
                                    overlay_delays, overlay_from_edges, preset_params, throughput)
from fedlab.topology.experiments import (ALL_OVERLAYS, MST_RULES, TARGET_FRACTION, TRAINED_OVERLAYS, TRAINING_METRICS,
                                         compare_overlays, complete_cycle_time, matcha_schedules, mst_ties, ranking,
                                         ring_ratio, strictly_ordered, table_2_5_ranking, time_to_target,
                                         train_overlays, training_target)
from fedlab.topology.matcha import (MATCHA_RULES, MatchaSchedule, greedy_matchings, matcha_alpha, matcha_cycle_time,
                                    matcha_probabilities, matcha_round_times, matcha_schedule, matcha_weights,
                                    matching_decomposition, round_robin_matchings, sample_matcha_rounds)
from fedlab.topology.overlays import (MST_TIES, OVERLAYS, christofides_tour, cube_path, delta_mbst_overlay, delta_prim,
                                      design_overlay, kruskal_tree, mst_overlay, prim_tree, ring_overlay, star_overlay)
from fedlab.topology.simulator import growth_rate, rounds_within, simulate_wall_clock

__all__ = [
    "ALL_OVERLAYS", "MATCHA_RULES", "MODEL_SIZES", "MST_RULES", "MST_TIES", "NETWORKS", "OVERLAYS", "PRESETS",
    "TARGET_FRACTION", "TRAINED_OVERLAYS", "TRAINING_METRICS",
    "AveragedDPASGD", "Connectivity", "DelayParams", "MatchaSchedule", "Network",
    "christofides_tour", "compare_overlays", "complete_cycle_time", "connectivity_delays", "connectivity_graph",
    "critical_circuit", "cube_path", "cycle_time", "degree_one_delays",
    "delta_mbst_overlay", "delta_prim", "design_overlay", "exact_average", "example_1a", "example_1b", "example_2",
    "fmmc_weights", "great_circle_km", "greedy_matchings", "growth_rate", "karp_agreement", "kruskal_tree",
    "load_network", "local_degree_weights",
    "make_connectivity", "matcha_alpha", "matcha_cycle_time", "matcha_probabilities",
    "matcha_round_times", "matcha_schedule", "matcha_schedules", "matcha_weights",
    "matching_decomposition", "max_cycle_mean", "max_cycle_mean_bruteforce", "metropolis_weights",
    "mst_overlay", "mst_ties", "network_from_sites", "overlay_delays", "overlay_from_edges", "preset_params",
    "prim_tree", "random_geometric_network", "ranking", "read_gml_network", "read_network_csv", "read_sites",
    "ring_overlay", "ring_ratio", "rounds_within", "round_robin_matchings", "sample_matcha_rounds",
    "second_largest_eigenvalue_modulus", "simulate_maxplus", "simulate_wall_clock", "slem", "star_overlay",
    "star_ring_limit", "strictly_ordered", "table_2_5_ranking", "throughput", "time_to_target", "topology_federation",
    "train_overlays", "training_target",
]
