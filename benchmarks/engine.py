"""FedAvg rounds per second: batched engine vs the engine's loop vs a reference-style per-client loop.

Prints rounds/s and the ratios measured in this one run (absolute speeds vary between machines and
with load; ratios are what to compare). Usage: ``python benchmarks/engine.py [--seconds 3] [--device cuda]``
(``--device cuda`` on a machine without a CUDA device says so and exits with status 1).

Workloads (100 clients, E = 5 local steps, batch 32, one torch thread):
- logistic regression on LEAF Synthetic(1, 1), d = 60, 10 classes, 200 samples per client;
- an MLP 64-200-200-10 and a small CNN on scikit-learn's digits split iid over the clients;
- paper scale: the FEMNIST CNN (28x28, 62 classes, 2.3 M parameters) and the CIFAR CNN (32x32x3, 10 classes,
  0.9 M parameters) on 200 random images per client: the real data sets' shapes (speed does not depend on
  the pixel values, and nothing needs to be downloaded).
The reference loop is written the way the thesis repositories do it: a fresh ``nn.Module``, optimizer
and shuffled ``DataLoader`` per client per round, then a state-dict average.

A last row times the authors' recipe on the logistic workload: one shuffled epoch per round (a partial last
batch), SGD with momentum 0.9 and weight decay 5e-4 whose state every client keeps across rounds; its reference
loop keeps one module and one optimizer per client, loads the global model into it and runs its ``DataLoader``
once per round, as the FedEM code does.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import fedlab  # noqa: F401  (sets one torch thread)
from fedlab.algorithms import FedAvg
from fedlab.data import load_digits_arrays, make_leaf_synthetic, partition_iid
from fedlab.engine import FederatedDataset, LocalSGD, resolve_device
from fedlab.models import MLP, LinearModel, ModuleModel, SmallCNN, cifar_cnn, femnist_cnn

N_CLIENTS, LOCAL_STEPS, BATCH, LR = 100, 5, 32, 0.05


def _synthetic() -> FederatedDataset:
    arrays = make_leaf_synthetic(1.0, 1.0, n_clients=N_CLIENTS, n_samples=200, rng=0)
    return FederatedDataset.from_client_arrays(arrays.xs, arrays.ys, test_fraction=0.0, n_classes=10)


def _digits(images: bool) -> FederatedDataset:
    x, y = load_digits_arrays(images=images)
    part = partition_iid(y, N_CLIENTS, rng=0)
    return FederatedDataset.from_client_arrays([x[i] for i in part.indices], [y[i] for i in part.indices],
                                               test_fraction=0.0, n_classes=10)


def _images(shape: tuple[int, ...], n_classes: int) -> FederatedDataset:
    """200 random images of ``shape`` per client (a real data set's shapes, for timing only)."""
    rng = np.random.default_rng(0)
    xs = [rng.random((200, *shape), dtype=np.float32) for _ in range(N_CLIENTS)]
    ys = [rng.integers(0, n_classes, 200) for _ in range(N_CLIENTS)]
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.0, n_classes=n_classes)


def _as_module(model) -> nn.Module:
    """The same architecture as an ordinary nn.Module, for the reference loop."""
    if isinstance(model, ModuleModel):
        return copy.deepcopy(model._module)
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

    def __init__(self, model, data: FederatedDataset, device: torch.device) -> None:
        self.factory = lambda: _as_module(model).to(device)
        self.device = device
        self.clients = [data.train.client(k)[:2] for k in range(data.n_clients)]
        self.sizes = np.array([len(c[1]) for c in self.clients], dtype=float)
        self.state = self.factory().state_dict()  # the data stay on the device, as the engine's do

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


RECIPE = LocalSGD(lr=LR, batch_size=BATCH, momentum=0.9, weight_decay=5e-4, epochs=1, keep_state=True)
"""The authors' local solver (FedEM's code): one epoch, momentum and weight decay, the optimizer kept by the client."""


class ReferenceRecipeLoop:
    """The authors' recipe as their code runs it: a persistent module and optimizer per client, one shuffled pass of
    its ``DataLoader`` per round."""

    def __init__(self, model, data: FederatedDataset, device: torch.device) -> None:
        clients = [data.train.client(k)[:2] for k in range(data.n_clients)]
        self.modules = [_as_module(model).to(device) for _ in clients]
        self.optimizers = [torch.optim.SGD(m.parameters(), lr=LR, momentum=RECIPE.momentum,
                                           weight_decay=RECIPE.weight_decay) for m in self.modules]
        self.loaders = [DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=True) for x, y in clients]
        self.sizes = np.array([len(c[1]) for c in clients], dtype=float)
        self.state = copy.deepcopy(self.modules[0].state_dict())

    def round(self) -> None:
        for module, opt, loader in zip(self.modules, self.optimizers, self.loaders):
            module.load_state_dict(self.state)
            for xb, yb in loader:
                opt.zero_grad()
                F.cross_entropy(module(xb), yb).backward()
                opt.step()
        w = self.sizes / self.sizes.sum()
        self.state = {k: sum(float(wi) * m.state_dict()[k] for wi, m in zip(w, self.modules)) for k in self.state}


def _engine_round(model, data, backend, solver=None):
    solver = LocalSGD(lr=LR, local_steps=LOCAL_STEPS, batch_size=BATCH) if solver is None else solver
    alg = FedAvg(model, solver, backend=backend)
    state = alg.init(data, 0)

    def step():
        nonlocal state
        state, _ = alg.round(state, data, 0)
    return step


def rounds_per_second(step, seconds: float, device: torch.device) -> float:
    step()  # warm-up (and the auto backend's one-off calibration)
    _sync(device)
    count, start = 0, time.perf_counter()
    while count < 3 or time.perf_counter() - start < seconds:
        step()
        count += 1
    _sync(device)
    return count / (time.perf_counter() - start)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per measurement")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1...")
    args = parser.parse_args()
    try:
        device = resolve_device(args.device)
    except ValueError as err:
        print(f"benchmarks/engine.py: {str(err).rstrip('.')}: nothing to measure on it here.", file=sys.stderr)
        return 1
    workloads = {"logistic (Synthetic(1,1))": (LinearModel(60, 10), _synthetic()),
                 "MLP 64-200-200-10 (digits)": (MLP(64, (200, 200), 10), _digits(False)),
                 "small CNN (digits)": (SmallCNN(1, 8, 10), _digits(True)),
                 "FEMNIST CNN (paper scale)": (femnist_cnn(), _images((1, 28, 28), 62)),
                 "CIFAR CNN (paper scale)": (cifar_cnn(), _images((3, 32, 32), 10))}
    print(f"FedAvg, {N_CLIENTS} clients, E={LOCAL_STEPS}, batch {BATCH}, device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")
          + f", torch threads={torch.get_num_threads()}")
    header = f"{'workload':<28}{'batched':>9}{'loop':>9}{'auto':>9}{'ref':>9}{'bat/ref':>9}{'bat/loop':>9}{'auto/loop':>10}"
    print(header + "\n" + "-" * len(header))
    for name, (model, data) in workloads.items():
        data = data.to(device)
        r = {b: rounds_per_second(_engine_round(model, data, b), args.seconds, device)
             for b in ("batched", "loop", "auto")}
        r["ref"] = rounds_per_second(ReferenceLoop(model, data, device).round, args.seconds, device)
        print(f"{name:<28}{r['batched']:9.2f}{r['loop']:9.2f}{r['auto']:9.2f}{r['ref']:9.2f}"
              f"{r['batched'] / r['ref']:9.1f}{r['batched'] / r['loop']:9.1f}{r['auto'] / r['loop']:10.2f}")
    model, data = LinearModel(60, 10), _synthetic().to(device)
    r = {b: rounds_per_second(_engine_round(model, data, b, RECIPE), args.seconds, device)
         for b in ("batched", "loop", "auto")}
    r["ref"] = rounds_per_second(ReferenceRecipeLoop(model, data, device).round, args.seconds, device)
    print(f"{'logistic, authors recipe':<28}{r['batched']:9.2f}{r['loop']:9.2f}{r['auto']:9.2f}{r['ref']:9.2f}"
          f"{r['batched'] / r['ref']:9.1f}{r['batched'] / r['loop']:9.1f}{r['auto'] / r['loop']:10.2f}")
    print("(rounds/s; ratios from this run; the last row keeps every client's optimizer over one epoch a round)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
