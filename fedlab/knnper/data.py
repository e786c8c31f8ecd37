r"""The kNN-Per chapter's data: scikit-learn's digits split over clients, each client cut train / validation / test.

Setting (personalization spec §10.3): the 1,797 digits split over clients with Dirichlet(α) label proportions
(:func:`digits_split`), each client's data cut 60 % train / 20 % validation / 20 % test (thesis §3.6.3, the
FEMNIST/Shakespeare protocol); the clients of a :class:`SplitFederation` can be split into old ones (training) and
new ones joining afterwards (:func:`old_and_new_clients`), shrunk to a fraction of their data
(:func:`shrink_clients`, the thesis' "capacity"), or drawn twice from two disjoint pools of digits for a
distribution shift (:func:`shifted_splits`, Fig. 3.13).

>>> split = digits_split(n_clients=5, alpha=0.5, seed=0)
>>> split.n_clients, split.n_classes
(5, 10)
>>> int(split.train.n.sum() + split.val.n.sum() + split.test.n.sum())
1797
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_int, check_real, check_type
from fedlab.data import load_digits_arrays, partition_dirichlet
from fedlab.engine import ClientData, FederatedDataset
from fedlab.knnper.algorithms import capacity_size

__all__ = ["N_DIGITS", "SplitFederation", "concat_clients", "digits_split", "old_and_new_clients", "shrink_clients",
           "shifted_splits"]

N_DIGITS = 1797
"""Samples in scikit-learn's digits."""


def _arrays(data: ClientData, k: int) -> tuple[np.ndarray, np.ndarray]:
    x, y, _ = data.client(k)
    return x.numpy(), y.numpy()


def concat_clients(a: ClientData, b: ClientData) -> ClientData:
    """Client-wise union of two populations of the same clients (e.g. train ∪ validation)."""
    check_type("a", a, ClientData)
    check_type("b", b, ClientData)
    if a.n_clients != b.n_clients:
        raise ValueError(f"a and b must have the same number of clients, got {a.n_clients} and {b.n_clients}.")
    xs, ys = [], []
    for k in range(a.n_clients):
        (xa, ya), (xb, yb) = _arrays(a, k), _arrays(b, k)
        xs.append(np.concatenate([xa, xb]))
        ys.append(np.concatenate([ya, yb]))
    return ClientData.from_arrays(xs, ys, allow_empty=True)


@dataclass(frozen=True, eq=False)
class SplitFederation:
    """Train / validation / test samples of the same K clients."""

    train: ClientData
    val: ClientData
    test: ClientData
    n_classes: int

    def __post_init__(self) -> None:
        for name in ("train", "val", "test"):
            check_type(name, getattr(self, name), ClientData)
        check_int("n_classes", self.n_classes, low=1)
        if not (self.train.n_clients == self.val.n_clients == self.test.n_clients):
            raise ValueError("train, val and test must hold the same clients.")
        FederatedDataset(self.train, self.test, self.n_classes)  # the labels fit n_classes
        FederatedDataset(self.val, self.test, self.n_classes)

    @property
    def n_clients(self) -> int:
        return self.train.n_clients

    @property
    def trainval(self) -> ClientData:
        """Train ∪ validation (what the final models are trained on)."""
        return concat_clients(self.train, self.val)

    def federated(self, *, with_validation: bool = True) -> FederatedDataset:
        """``FederatedDataset(train [∪ val], test)``."""
        return FederatedDataset(self.trainval if with_validation else self.train, self.test, self.n_classes)

    def select(self, clients: Sequence[int]) -> "SplitFederation":
        """The sub-federation of the given clients."""
        return SplitFederation(self.train.select(clients), self.val.select(clients), self.test.select(clients),
                               self.n_classes)


def _split_indices(ix: np.ndarray, fractions: tuple[float, float], rng: np.random.Generator):
    ix = rng.permutation(ix)
    n = len(ix)
    n_test = int(math.floor(fractions[1] * n + 0.5))
    n_val = int(math.floor(fractions[0] * n + 0.5))
    n_val = min(n_val, n - n_test - 1)
    return ix[n_test + n_val:], ix[n_test: n_test + n_val], ix[:n_test]


def digits_split(n_clients: int = 20, alpha: float = 0.3, seed: int = 0, *, val_fraction: float = 0.2,
                 test_fraction: float = 0.2, min_size: int = 10, pool: np.ndarray | None = None) -> SplitFederation:
    r"""Digits over ``n_clients`` with Dirichlet(α) label proportions, each client split train/val/test.

    Parameters
    ----------
    n_clients : int
    alpha : float > 0
        Dirichlet concentration (small = heterogeneous).
    seed : int
        Partition and splits.
    val_fraction, test_fraction : float
        Per-client fractions (thesis FEMNIST/Shakespeare protocol: 0.2 and 0.2).
    min_size : int >= 3
        Minimum samples per client (the partition is redrawn until it holds).
    pool : array of int, optional
        Restrict to these sample indices of the 1,797 digits (the distribution-shift experiment).
    """
    check_int("seed", seed, low=0)
    check_int("min_size", min_size, low=3)
    val_fraction = check_real("val_fraction", val_fraction, low=0, high=0.5)
    test_fraction = check_real("test_fraction", test_fraction, low=0, high=0.5)
    x, y = load_digits_arrays()
    if pool is not None:
        pool = np.asarray(pool)
        if pool.ndim != 1 or pool.dtype.kind not in "iu" or pool.size == 0 or pool.min() < 0 or pool.max() >= len(y):
            raise ValueError(f"pool must be a non-empty 1-D array of sample indices in [0, {len(y)}).")
        x, y = x[pool], y[pool]
    part = partition_dirichlet(y, n_clients, alpha, min_size=min_size, rng=numpy_rng(seed, 0, Stream.KNNPER_SPLIT))
    rng = numpy_rng(seed, 1, Stream.KNNPER_SPLIT)
    parts = [_split_indices(ix, (val_fraction, test_fraction), rng) for ix in part.indices]
    make = [ClientData.from_arrays([x[p[j]] for p in parts], [y[p[j]] for p in parts], allow_empty=True)
            for j in range(3)]
    return SplitFederation(*make, n_classes=10)


def old_and_new_clients(split: SplitFederation, n_new: int, seed: int = 0
                        ) -> tuple[SplitFederation, SplitFederation, dict[str, np.ndarray]]:
    """``(old, new, ids)``: ``n_new`` clients drawn at random join after training (thesis Table 3.6, Fig. 3.2), the
    others train; ``ids`` holds their indices in ``split`` (``"old_clients"``, ``"new_clients"``, sorted)."""
    check_type("split", split, SplitFederation)
    n_new = check_int("n_new", n_new, low=1, high=split.n_clients - 1)
    check_int("seed", seed, low=0)
    perm = numpy_rng(seed, 2, Stream.KNNPER_SPLIT).permutation(split.n_clients)
    ids = {"old_clients": np.sort(perm[n_new:]), "new_clients": np.sort(perm[:n_new])}
    return split.select(ids["old_clients"]), split.select(ids["new_clients"]), ids


def _keep_fraction(data: ClientData, capacity: float, rng: np.random.Generator) -> ClientData:
    """A random fraction ``capacity`` of each client's samples (at least one sample of a non-empty client)."""
    xs, ys = [], []
    for t in range(data.n_clients):
        x, y = _arrays(data, t)
        keep = np.sort(rng.permutation(len(y))[: max(1, capacity_size(len(y), capacity))]) if len(y) else []
        xs.append(x[keep])
        ys.append(y[keep])
    return ClientData.from_arrays(xs, ys, allow_empty=True)


def shrink_clients(split: SplitFederation, capacity: float, seed: int = 0) -> SplitFederation:
    r"""Every client keeps a random fraction ``capacity`` of its train and validation parts (thesis "capacity").

    The test parts are kept whole; a client keeps at least one train and one validation sample when it
    had any. ``capacity = 1`` returns ``split`` itself.
    """
    check_type("split", split, SplitFederation)
    capacity = check_real("capacity", capacity, low=0, high=1, low_open=True)
    check_int("seed", seed, low=0)
    if capacity == 1:
        return split
    rng = numpy_rng(seed, 4, Stream.KNNPER_SPLIT)
    return SplitFederation(_keep_fraction(split.train, capacity, rng), _keep_fraction(split.val, capacity, rng),
                           split.test, split.n_classes)


def shifted_splits(n_clients: int = 10, alpha: float = 0.3, seed: int = 0, *, test_fraction: float = 0.3,
                   min_size: int = 20) -> tuple[SplitFederation, SplitFederation]:
    r"""The same clients before and after a distribution shift (thesis Fig. 3.13; spec §10.3).

    The digits are split into two disjoint random pools A (900 digits) and B (the other 897), each partitioned over
    the same ``n_clients`` clients with Dirichlet(α) (client t gets :math:`S_t \subset A` and :math:`S'_t \subset
    B`), ``1 - test_fraction`` / ``test_fraction`` train/test inside each, no validation part.
    """
    check_int("seed", seed, low=0)
    perm = numpy_rng(seed, 3, Stream.KNNPER_SPLIT).permutation(N_DIGITS)
    pool_a, pool_b = np.sort(perm[:900]), np.sort(perm[900:])
    options = dict(val_fraction=0.0, test_fraction=test_fraction, min_size=min_size)
    return (digits_split(n_clients, alpha, seed, pool=pool_a, **options),
            digits_split(n_clients, alpha, seed + 7919, pool=pool_b, **options))
