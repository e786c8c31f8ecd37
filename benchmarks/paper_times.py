"""Expected run time of every paper-mode experiment on this machine (``make run MODE=paper``), without the data.

Each chapter's ``real_data.expected_seconds`` times a few rounds of its methods on random stand-in data of the real
data set's shapes (``fedlab.paper_mode.stand_in_data``) and scales them to the paper's clients, rounds, methods and seeds
(each function's docstring says how). Usage: ``python benchmarks/paper_times.py [--device cuda] [--only NAME]``
(``--device cuda`` on a machine without a CUDA device says so and exits with status 1).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

import torch

import fedlab  # noqa: F401  (sets one torch thread)
from fedlab.engine import resolve_device

CHAPTERS = {"01_topology": "topology", "02_availability": "availability", "03_fedem": "fedem",
            "04_knnper": "knnper", "05_data_streams": "streams", "06_online_mixtures": "online",
            "07_sfedpo": "sfedpo"}
"""The notebooks with a paper mode and their chapter packages."""


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:8.1f} h" if seconds >= 3600 else f"{seconds / 60:8.1f} min"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1...")
    parser.add_argument("--only", default="", help="only the notebooks whose name contains this")
    args = parser.parse_args()
    try:
        device = resolve_device(args.device)
    except ValueError as err:
        print(f"benchmarks/paper_times.py: {str(err).rstrip('.')}: nothing to measure on it here.", file=sys.stderr)
        return 1
    print(f"paper mode, expected run time per experiment, device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")
          + f", torch threads={torch.get_num_threads()}")
    total = 0.0
    for notebook, package in CHAPTERS.items():
        if args.only not in notebook:
            continue
        start = time.perf_counter()
        times = importlib.import_module(f"fedlab.{package}.real_data").expected_seconds(device=device)
        for name, seconds in times.items():
            print(f"{notebook:<22}{name:<16}{_hours(seconds)}")
        total += sum(times.values())
        print(f"{'':<22}{'(measured in':<16}{time.perf_counter() - start:8.1f} s)")
    print(f"{'total':<38}{_hours(total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
