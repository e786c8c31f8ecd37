"""Small valid objects the robustness cases build their calls from (each built once, on first use)."""
from __future__ import annotations

import functools

import numpy as np
import torch

from fedlab.engine import ClientData, FederatedDataset, LocalSGD, run
from fedlab.models import LinearModel, init_stacked

N_CLIENTS, DIM, N_CLASSES = 4, 5, 3


def _clients(seed: int = 0, sizes=(6, 9, 5, 8)):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(DIM, N_CLASSES))
    xs = [rng.normal(size=(n, DIM)).astype(np.float32) + k for k, n in enumerate(sizes)]
    ys = [np.argmax(x @ w, axis=1) for x in xs]
    return xs, ys


@functools.cache
def client_arrays():
    """``(xs, ys)``: four clients, five features, three classes."""
    return _clients()


@functools.cache
def fed() -> FederatedDataset:
    xs, ys = client_arrays()
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=N_CLASSES, seed=0)


def clients() -> ClientData:
    return fed().train


@functools.cache
def model() -> LinearModel:
    return LinearModel(DIM, N_CLASSES)


@functools.cache
def solver() -> LocalSGD:
    return LocalSGD(lr=0.1, local_steps=2, batch_size=4)


def params(rows: int = N_CLIENTS):
    """Stacked parameters of :func:`model`, one row per client."""
    return init_stacked(model(), rows, torch.Generator().manual_seed(0))


def single_params():
    return model().init(torch.Generator().manual_seed(0))


@functools.cache
def history():
    """The History of two FedAvg rounds on :func:`fed`."""
    from fedlab.algorithms import FedAvg

    return run(FedAvg(model(), solver()), fed(), rounds=2)[1]


def ring(n: int = 4) -> np.ndarray:
    """A doubly stochastic ring mixing matrix."""
    w = np.eye(n) / 2
    for i in range(n):
        w[i, (i + 1) % n] += 0.25
        w[i, (i - 1) % n] += 0.25
    return w


def stochastic(n: int = 3) -> np.ndarray:
    """A row-stochastic matrix with positive entries."""
    p = np.arange(1, n * n + 1, dtype=float).reshape(n, n)
    return p / p.sum(1, keepdims=True)
