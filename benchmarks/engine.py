"""FedAvg rounds per second: batched engine vs the engine's loop vs a reference-style per-client loop.

Prints rounds/s and the ratios measured in this one run (absolute speeds vary between machines and
with load; ratios are what to compare). Usage: ``python benchmarks/engine.py [--seconds 3]``.

Workloads (100 clients, E = 5 local steps, batch 32, one torch thread):
- logistic regression on LEAF Synthetic(1, 1), d = 60, 10 classes, 200 samples per client;
- an MLP 64-200-200-10 and a small CNN on scikit-learn's digits split iid over the clients.
The reference loop is written the way the thesis repositories do it: a fresh ``nn.Module``, optimizer
and shuffled ``DataLoader`` per client per round, then a state-dict average.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import fedlab  # noqa: F401  (sets one torch thread)
from fedlab.algorithms import FedAvg
from fedlab.data import load_digits_arrays, make_leaf_synthetic, partition_iid
from fedlab.engine import FederatedDataset, LocalSGD
from fedlab.models import MLP, LinearModel, SmallCNN

N_CLIENTS, LOCAL_STEPS, BATCH, LR = 100, 5, 32, 0.05


def _synthetic() -> FederatedDataset:
    arrays = make_leaf_synthetic(1.0, 1.0, n_clients=N_CLIENTS, n_samples=200, rng=0)
    return FederatedDataset.from_client_arrays(arrays.xs, arrays.ys, test_fraction=0.0, n_classes=10)


def _digits(images: bool) -> FederatedDataset:
    x, y = load_digits_arrays(images=images)
    part = partition_iid(y, N_CLIENTS, rng=0)
    return FederatedDataset.from_client_arrays([x[i] for i in part.indices], [y[i] for i in part.indices],
                                               test_fraction=0.0, n_classes=10)


def _as_module(model) -> nn.Module:
    """The same architecture as an ordinary nn.Module, for the reference loop."""
    if isinstance(model, LinearModel):
        return nn.Linear(model.in_features, model.out_features)
    if isinstance(model, MLP):
        sizes = model._sizes()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        return nn.Sequential(nn.Flatten(), *layers[:-1])
    c1, c2 = model.channels
    return nn.Sequential(nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(c2 * (model.image_size // 4) ** 2, model.n_classes))


class ReferenceLoop:
    """Per-client objects re-created every round, as in the reference repositories."""

    def __init__(self, model, data: FederatedDataset) -> None:
        self.factory = lambda: _as_module(model)
        self.clients = [data.train.client(k)[:2] for k in range(data.n_clients)]
        self.sizes = np.array([len(c[1]) for c in self.clients], dtype=float)
        self.state = self.factory().state_dict()

    def round(self) -> None:
        states = []
        for x, y in self.clients:
            module = self.factory()
            module.load_state_dict(self.state)
            opt = torch.optim.SGD(module.parameters(), lr=LR)
            loader = DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=True)
            batches = iter(loader)
            for _ in range(LOCAL_STEPS):
                try:
                    xb, yb = next(batches)
                except StopIteration:
                    batches = iter(loader)
                    xb, yb = next(batches)
                opt.zero_grad()
                F.cross_entropy(module(xb), yb).backward()
                opt.step()
            states.append(module.state_dict())
        w = self.sizes / self.sizes.sum()
        self.state = {k: sum(float(wi) * s[k] for wi, s in zip(w, states)) for k in self.state}


def _engine_round(model, data, backend):
    alg = FedAvg(model, LocalSGD(lr=LR, local_steps=LOCAL_STEPS, batch_size=BATCH), backend=backend)
    state = alg.init(data, 0)

    def step():
        nonlocal state
        state, _ = alg.round(state, data, 0)
    return step


def rounds_per_second(step, seconds: float) -> float:
    step()  # warm-up (and the auto backend's one-off calibration)
    count, start = 0, time.perf_counter()
    while count < 3 or time.perf_counter() - start < seconds:
        step()
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per measurement")
    args = parser.parse_args()
    workloads = {"logistic (Synthetic(1,1))": (LinearModel(60, 10), _synthetic()),
                 "MLP 64-200-200-10 (digits)": (MLP(64, (200, 200), 10), _digits(False)),
                 "small CNN (digits)": (SmallCNN(1, 8, 10), _digits(True))}
    print(f"FedAvg, {N_CLIENTS} clients, E={LOCAL_STEPS}, batch {BATCH}, torch threads={torch.get_num_threads()}")
    header = f"{'workload':<28}{'batched':>9}{'loop':>9}{'auto':>9}{'ref':>9}{'bat/ref':>9}{'bat/loop':>9}{'auto/loop':>10}"
    print(header + "\n" + "-" * len(header))
    for name, (model, data) in workloads.items():
        r = {b: rounds_per_second(_engine_round(model, data, b), args.seconds) for b in ("batched", "loop", "auto")}
        r["ref"] = rounds_per_second(ReferenceLoop(model, data).round, args.seconds)
        print(f"{name:<28}{r['batched']:9.2f}{r['loop']:9.2f}{r['auto']:9.2f}{r['ref']:9.2f}"
              f"{r['batched'] / r['ref']:9.1f}{r['batched'] / r['loop']:9.1f}{r['auto'] / r['loop']:10.2f}")
    print("(rounds/s; ratios from this run)")


if __name__ == "__main__":
    main()
