"""Topology design at scale: every deterministic overlay on a 1,000-silo random geometric network.

Builds a connected random geometric underlay (``n`` silos in a 4000 km square), its complete
connectivity graph (all-pairs shortest paths, 0.0085 ms/km + 4 ms, 1 Gbps / hops), then each
deterministic overlay (STAR, MST, delta-MBST, RING) and its cycle time with Karp's algorithm. Prints
the wall-clock time of every step (target: < 5 s each) and, for reference, a few ratios measured in
this one run against straightforward alternatives. Usage:
``python benchmarks/topology.py [--n 1000] [--seed 0] [--skip-exact-ring]``.
"""
from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np

from fedlab.topology import (connectivity_graph, cycle_time, delta_mbst_overlay, mst_overlay, preset_params,
                             random_geometric_network, ring_overlay, simulate_maxplus, star_overlay)
from fedlab.topology.delays import connectivity_delays, overlay_delays
from fedlab.topology.overlays import _symmetric_weights, prim_tree


def timed(label: str, fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    print(f"  {label:<38s} {elapsed:8.3f} s")
    return out, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-exact-ring", action="store_true",
                        help="skip Christofides with the exact (blossom) matching, the slow step")
    args = parser.parse_args()
    params = preset_params("sub_inaturalist", access_bps=1e10)
    print(f"random geometric network, n = {args.n}, seed = {args.seed}, sub-iNaturalist, 10 Gbps access")
    net, _ = timed("underlay (random geometric graph)", random_geometric_network, args.n, rng=args.seed)
    print(f"  -> {net.n_links} links")
    conn, _ = timed("connectivity graph (all pairs)", connectivity_graph, net)

    builders = {"star": star_overlay, "mst": mst_overlay, "delta_mbst": delta_mbst_overlay,
                "ring (Christofides, greedy matching)": lambda c, p: ring_overlay(c, p, matching="greedy")}
    if not args.skip_exact_ring:
        builders["ring (Christofides, exact matching)"] = ring_overlay
    taus, overlays, totals = {}, {}, {}
    for name, build in builders.items():
        print(f"{name}:")
        overlays[name], t_build = timed("build overlay", build, conn, params)
        taus[name], t_tau = timed("cycle time (Karp)", cycle_time, overlays[name], conn, params)
        totals[name] = t_build + t_tau
    print("summary (overlay + cycle time, target < 5 s each):")
    for name, total in totals.items():
        print(f"  {name:<38s} {total:8.3f} s  {'ok' if total < 5 else 'OVER'}   tau = {taus[name]:.1f} ms")

    print("reference ratios (one run):")
    W = _symmetric_weights(connectivity_delays(conn, params))
    _, ours = timed("Prim (dense numpy)", prim_tree, W)
    G = nx.from_numpy_array(np.where(np.isfinite(W), W, 0.0))
    _, ref = timed("networkx.minimum_spanning_tree", nx.minimum_spanning_tree, G)
    print(f"  -> networkx / ours = {ref / ours:.1f}x")
    ring = overlays["ring (Christofides, greedy matching)"]
    D = overlay_delays(ring, conn, params)
    _, karp = timed("Karp on the ring", cycle_time, ring, conn, params)
    t, sim = timed("max-plus simulation, 5n steps", simulate_maxplus, D, 5 * args.n)
    tau = taus["ring (Christofides, greedy matching)"]
    print(f"  -> slope t(5n)/5n = {t[-1].max() / (5 * args.n):.2f} ms vs Karp {tau:.2f} ms; "
          f"simulation / Karp time = {sim / karp:.1f}x")


if __name__ == "__main__":
    main()
