"""The papers' CNNs: FedAvg rounds per second of the engine (loop, batched, auto) against a plain PyTorch loop.

Each case is FedAvg with E = 5 local SGD steps of batch 32 on the package's models (``fedlab.models``): the FEMNIST
CNN (28x28 grey images, 62 classes, 2.3 M parameters) with 100 and with 20 clients, and the CIFAR CNN (32x32 colour
images, 10 classes, 0.9 M parameters) with 20 clients, on 200 random images per client (the real data sets' shapes:
speed does not depend on the pixel values, and nothing needs to be downloaded).

The engine trains with ``fedlab.algorithms.FedAvg`` and ``fedlab.engine.run`` under each backend; the plain loop is
what one writes with PyTorch alone: one ``nn.Module``, and per client a copy of the global ``state_dict`` into it,
E steps of ``torch.optim.SGD`` on minibatches drawn with replacement, then the size-weighted average. A measurement
runs ``--rounds`` rounds and times every round after the first (the first is the warm-up, and where ``auto`` times
both backends once for the shape); the engine's evaluations at the start and the end of a run are not timed.

All variants of a case are measured in one process, one torch thread, interleaved ``--repeats`` times; the table
shows the median rounds/s of each and the median over the repeats of engine/plain (absolute speeds vary between
machines and with load: compare the ratios), and the backend ``auto`` chose. Usage:
``python benchmarks/cnn.py [--repeats 5] [--rounds 3] [--only femnist-100] [--quick]`` (``--quick``: 3 clients
of 40 images, 2 rounds, one repeat: a smoke run of the script, not a measurement).
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import fedlab  # noqa: F401  (sets one torch thread)
from fedlab.algorithms import FedAvg
from fedlab.engine import FederatedDataset, LocalSGD, run
from fedlab.engine import local as engine_local
from fedlab.models import cifar_cnn, femnist_cnn

LOCAL_STEPS, BATCH, LR = 5, 32, 0.05
CASES = {  # name: (model factory, image shape, classes, clients)
    "femnist-100": (femnist_cnn, (1, 28, 28), 62, 100),
    "femnist-20": (femnist_cnn, (1, 28, 28), 62, 20),
    "cifar-20": (cifar_cnn, (3, 32, 32), 10, 20),
}
VARIANTS = ("plain", "loop", "batched", "auto")


def images(shape: tuple[int, ...], n_classes: int, n_clients: int, n_samples: int) -> FederatedDataset:
    """``n_samples`` random images of ``shape`` per client (a real data set's shapes, for timing only)."""
    rng = np.random.default_rng(0)
    xs = [rng.random((n_samples, *shape), dtype=np.float32) for _ in range(n_clients)]
    ys = [rng.integers(0, n_classes, n_samples) for _ in range(n_clients)]
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.0, n_classes=n_classes)


class PlainLoop:
    """FedAvg as written with PyTorch alone: one module, the global state_dict loaded into it for every client."""

    def __init__(self, model, data: FederatedDataset, seed: int = 0) -> None:
        self.module = copy.deepcopy(model._module)  # the same architecture as an ordinary nn.Module
        self.clients = [data.train.client(k)[:2] for k in range(data.n_clients)]
        sizes = np.array([len(y) for _, y in self.clients], dtype=float)
        self.weights = (sizes / sizes.sum()).tolist()
        self.state = {k: v.clone() for k, v in self.module.state_dict().items()}
        self.generator = torch.Generator().manual_seed(seed)

    def round(self) -> None:
        new = {k: torch.zeros_like(v) for k, v in self.state.items()}
        for (x, y), w in zip(self.clients, self.weights):
            self.module.load_state_dict(self.state)
            opt = torch.optim.SGD(self.module.parameters(), lr=LR)
            for _ in range(LOCAL_STEPS):
                idx = torch.randint(len(y), (BATCH,), generator=self.generator)
                opt.zero_grad()
                F.cross_entropy(self.module(x[idx]), y[idx]).backward()
                opt.step()
            for k, v in self.module.state_dict().items():
                new[k].add_(v, alpha=w)
        self.state = new


def time_plain(model, data: FederatedDataset, rounds: int) -> float:
    """Rounds per second of the plain loop over rounds 2..``rounds``."""
    plain = PlainLoop(model, data)
    stamps = []
    for _ in range(rounds):
        plain.round()
        stamps.append(time.perf_counter())
    return (rounds - 1) / (stamps[-1] - stamps[0])


def time_engine(model, data: FederatedDataset, backend: str, rounds: int) -> float:
    """Rounds per second of ``fedlab.engine.run`` (FedAvg, ``backend``) over rounds 2..``rounds``."""
    stamps = []
    algorithm = FedAvg(model, LocalSGD(lr=LR, local_steps=LOCAL_STEPS, batch_size=BATCH), backend=backend)
    run(algorithm, data, rounds=rounds, eval_every=rounds, progress=False,
        callback=lambda state, info: stamps.append(time.perf_counter()))
    return (rounds - 1) / (stamps[-1] - stamps[0])


def auto_choice(model, data: FederatedDataset) -> str:
    """The backend ``auto`` settled on for every client's row of ``model`` on ``data`` in this process."""
    shape = (model.signature(), data.n_clients)
    chosen = {name for key, name in engine_local._AUTO_CACHE.items()
              if key[:2] == shape and tuple(key[3]) == tuple(data.train.feature_shape)}
    return "/".join(sorted(chosen)) or "?"


def measure(name: str, repeats: int, rounds: int, n_clients: int | None, n_samples: int) -> dict:
    factory, shape, n_classes, clients = CASES[name]
    clients = clients if n_clients is None else n_clients
    model, data = factory(n_classes), images(shape, n_classes, clients, n_samples)
    speeds = {v: [] for v in VARIANTS}
    for _ in range(repeats):
        for variant in VARIANTS:
            speeds[variant].append(time_plain(model, data, rounds) if variant == "plain"
                                   else time_engine(model, data, variant, rounds))
    ratios = {v: statistics.median(s / p for s, p in zip(speeds[v], speeds["plain"])) for v in VARIANTS[1:]}
    return {"clients": clients, "median": {v: statistics.median(s) for v, s in speeds.items()}, "ratio": ratios,
            "auto": auto_choice(model, data)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved measurements of every variant")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per measurement (the first is not timed)")
    parser.add_argument("--only", choices=sorted(CASES), action="append", help="run only this case (repeatable)")
    parser.add_argument("--quick", action="store_true", help="3 clients of 40 images, 2 rounds, 1 repeat (smoke)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.rounds < 2:
        parser.error("--repeats must be >= 1 and --rounds >= 2")
    repeats, rounds = (1, 2) if args.quick else (args.repeats, args.rounds)
    n_clients, n_samples = (3, 40) if args.quick else (None, 200)
    print(f"FedAvg, E={LOCAL_STEPS}, batch {BATCH}, lr {LR}, torch threads={torch.get_num_threads()}, "
          f"{repeats} interleaved repeats of {rounds} rounds (first untimed)" + (" [quick: not a measurement]"
                                                                                if args.quick else ""))
    header = (f"{'case':<14}{'clients':>8}" + "".join(f"{v:>9}" for v in VARIANTS)
              + "".join(f"{v + '/plain':>14}" for v in VARIANTS[1:]) + f"{'auto chose':>12}")
    print(header + "\n" + "-" * len(header))
    for name in args.only or list(CASES):
        r = measure(name, repeats, rounds, n_clients, n_samples)
        print(f"{name:<14}{r['clients']:>8}" + "".join(f"{r['median'][v]:9.3f}" for v in VARIANTS)
              + "".join(f"{r['ratio'][v]:14.2f}" for v in VARIANTS[1:]) + f"{r['auto']:>12}", flush=True)
    print("(rounds/s, medians; engine/plain: median over the repeats of the ratio in each; auto chose: the backend "
          "its one-off timing picked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
