"""What five seeds (or five step sizes) cost against one: run one at a time, or as replicas of one population.

For each workload, one process times (interleaved, ``--repeats`` times, medians) a one-seed sweep, a five-seed sweep
run seed after seed, and the same five seeds as replicas in lockstep (``sweep(replicas=True)``, which calls
:func:`fedlab.engine.lockstep`), all with the sequential executor and one torch thread, and prints the two ratios to
one seed. The "5 step sizes" workload does the same over a step-size grid (one seed): its runs differ only in their
step size, which lockstep merges too. Replicas merge their local training into one stacked call per round; what
they save is the per-call overhead, not the arithmetic, so the gain is largest for small models and few clients.
Usage: ``python benchmarks/replicas.py [--repeats 3] [--quick] [--device cuda]`` (on a GPU only the engine's own
workloads run: the chapters' experiments train on the CPU; ``--device cuda`` on a machine without a CUDA device says
so and exits with status 1).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

import fedlab  # noqa: F401  (sets one torch thread)
from fedlab.algorithms import FedAvg
from fedlab.data import make_leaf_synthetic
from fedlab.engine import FederatedDataset, LocalSGD, lockstep, resolve_device, run
from fedlab.experiments import sweep

SEEDS = [0, 1, 2, 3, 4]
STEP_SIZES = [0.05, 0.1, 0.02, 0.2, 0.01]


def fedavg_logistic(*, n_clients: int, rounds: int, seed: int, device: str = "cpu", eval_every: int = 1,
                    lr: float = 0.05) -> float:
    """FedAvg (batched engine, E = 5, batch 16) on LEAF Synthetic(1, 1) with ``n_clients`` clients of 60 samples,
    evaluated every ``eval_every`` rounds (replicas merge local training, not evaluation)."""
    from fedlab.models import LinearModel

    arrays = make_leaf_synthetic(1.0, 1.0, n_clients=n_clients, n_samples=60, rng=0)
    data = FederatedDataset.from_client_arrays(arrays.xs, arrays.ys, test_fraction=0.25, n_classes=10)
    algorithm = FedAvg(LinearModel(60, 10), LocalSGD(lr=lr, local_steps=5, batch_size=16), backend="batched")
    return float(run(algorithm, data, rounds=rounds, seed=seed, progress=False, device=device,
                     eval_every=eval_every)[1].final("test_accuracy"))


def workloads(quick: bool, device: torch.device) -> dict:
    """name -> (function, config, axis): engine runs over seeds or step sizes (``axis``) and (on the CPU) three
    chapters' main experiments over seeds at their smoke sizes."""
    from fedlab.availability.experiments import run_availability
    from fedlab.fedem.experiments import compare_methods
    from fedlab.streams.experiments import compare_strategies

    rounds = 3 if quick else 50
    cases = {f"FedAvg, {n} clients": (fedavg_logistic, dict(n_clients=n, rounds=rounds, device=str(device)), "seed")
             for n in (10, 100)}
    cases["FedAvg, 100 clients, eval at end"] = (fedavg_logistic, dict(n_clients=100, rounds=rounds,
                                                                       device=str(device), eval_every=rounds), "seed")
    cases["FedAvg, 100 clients, 5 step sizes"] = (fedavg_logistic, dict(n_clients=100, rounds=rounds, seed=0,
                                                                        device=str(device)), "lr")
    if not quick and device.type == "cpu":
        cases.update({"03 FedEM compare_methods": (compare_methods, dict(rounds=30), "seed"),
                      "05 streams compare_strategies": (compare_strategies, dict(h=0.2), "seed"),
                      "02 CA-Fed run_availability": (run_availability, dict(method="cafed", rounds=60), "seed")})
    return cases


def _seconds(fn, config: dict, axis: str, n: int, replicas: bool) -> float:
    """Seconds for the first ``n`` seeds (or step sizes) of a workload, in turn or as replicas."""
    start = time.perf_counter()
    if axis == "seed":
        sweep(fn, [config], SEEDS[:n], executor="sequential", replicas=replicas, progress=False)
    else:
        tasks = [lambda lr=lr: fn(lr=lr, **config) for lr in STEP_SIZES[:n]]
        lockstep(tasks) if replicas else [task() for task in tasks]
    return time.perf_counter() - start     # the results are read back to the CPU: the device's work is done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians are shown)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a check that the script runs)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1...")
    args = parser.parse_args()
    try:
        device = resolve_device(args.device)
    except ValueError as err:
        print(f"benchmarks/replicas.py: {str(err).rstrip('.')}: nothing to measure on it here.", file=sys.stderr)
        return 1
    print(f"{'workload':<36}{'1 run':>9}{'5 in turn':>11}{'5 replicas':>12}{'turn/1':>8}{'replicas/1':>11}")
    for name, (fn, config, axis) in workloads(args.quick, device).items():
        times: dict[str, list[float]] = {"one": [], "turn": [], "replicas": []}
        for _ in range(args.repeats):
            times["one"].append(_seconds(fn, config, axis, 1, False))
            times["turn"].append(_seconds(fn, config, axis, 5, False))
            times["replicas"].append(_seconds(fn, config, axis, 5, True))
        one, turn, together = (statistics.median(times[k]) for k in ("one", "turn", "replicas"))
        print(f"{name:<36}{one:8.2f}s{turn:10.2f}s{together:11.2f}s{turn / one:7.2f}x{together / one:10.2f}x",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
