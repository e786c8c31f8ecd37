r"""The client population as padded, stacked tensors.

``ClientData`` stores K clients' samples in one tensor ``x`` of shape ``(K, n_max, *features)`` with
their true sizes ``n`` (clients may have unequal sizes), optional per-sample weights, and a mask of
the valid (non-padded) entries. Batched local steps index into it with one ``gather``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._validation import check_int, check_real

__all__ = ["ClientData", "FederatedDataset"]


def _as_tensor(name: str, value, dtype: torch.dtype | None = None) -> Tensor:
    try:
        t = torch.as_tensor(np.asarray(value) if not isinstance(value, Tensor) else value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be array-like, got {type(value).__name__}.") from err
    return t.to(dtype) if dtype is not None else t


@dataclass(frozen=True, eq=False)
class ClientData:
    r"""K clients' samples, padded to the largest client.

    Attributes
    ----------
    x : Tensor, shape (K, n_max, *features)
    y : Tensor, shape (K, n_max)
        int64 labels for classification, float for regression.
    n : Tensor, shape (K,)
        Number of valid samples per client (entries beyond ``n[k]`` are padding).
    weight : Tensor, shape (K, n_max), optional
        Per-sample weights :math:`w_i` of the local objective
        :math:`F_k(\theta) = \frac{1}{n_k}\sum_i w_i \ell_i(\theta)`; ``None`` means all ones.
    """

    x: Tensor
    y: Tensor
    n: Tensor
    weight: Tensor | None = None
    mask: Tensor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.x.dim() < 2 or self.y.shape != self.x.shape[:2]:
            raise ValueError(f"x must have shape (K, n_max, ...) and y shape (K, n_max); got x {tuple(self.x.shape)}"
                             f" and y {tuple(self.y.shape)}.")
        if self.n.shape != (self.x.shape[0],):
            raise ValueError(f"n must have shape ({self.x.shape[0]},), got {tuple(self.n.shape)}.")
        if self.weight is not None and self.weight.shape != self.y.shape:
            raise ValueError(f"weight must have shape {tuple(self.y.shape)}, got {tuple(self.weight.shape)}.")
        mask = torch.arange(self.x.shape[1]).unsqueeze(0) < self.n.unsqueeze(1)
        object.__setattr__(self, "mask", mask)

    @classmethod
    def from_arrays(cls, xs: Sequence, ys: Sequence, weights: Sequence | None = None, *,
                    allow_empty: bool = False) -> "ClientData":
        """Stack per-client arrays ``xs[k]`` of shape ``(n_k, *features)`` and ``ys[k]`` of shape ``(n_k,)``."""
        if len(xs) == 0 or len(xs) != len(ys):
            raise ValueError(f"xs and ys must be non-empty lists of equal length, got {len(xs)} and {len(ys)}.")
        xs = [_as_tensor(f"xs[{k}]", x, torch.float32) for k, x in enumerate(xs)]
        ys = [_as_tensor(f"ys[{k}]", y) for k, y in enumerate(ys)]
        features = xs[0].shape[1:]
        for k, (x, y) in enumerate(zip(xs, ys)):
            if x.shape[1:] != features:
                raise ValueError(f"xs[{k}] has feature shape {tuple(x.shape[1:])}, expected {tuple(features)}.")
            if y.dim() != 1 or y.shape[0] != x.shape[0]:
                raise ValueError(f"ys[{k}] must have shape ({x.shape[0]},), got {tuple(y.shape)}.")
            if x.shape[0] == 0 and not allow_empty:
                raise ValueError(f"client {k} has no samples; every client needs at least one.")
        n = torch.tensor([x.shape[0] for x in xs], dtype=torch.long)
        n_max = max(int(n.max()), 1)
        y_dtype = torch.long if all(not y.is_floating_point() for y in ys) else torch.float32
        x_pad = torch.zeros((len(xs), n_max, *features), dtype=torch.float32)
        y_pad = torch.zeros((len(xs), n_max), dtype=y_dtype)
        for k, (x, y) in enumerate(zip(xs, ys)):
            x_pad[k, : len(x)] = x
            y_pad[k, : len(y)] = y.to(y_dtype)
        w_pad = None
        if weights is not None:
            if len(weights) != len(xs):
                raise ValueError(f"weights must have one entry per client ({len(xs)}), got {len(weights)}.")
            w_pad = torch.zeros((len(xs), n_max), dtype=torch.float32)
            for k, w in enumerate(weights):
                w = _as_tensor(f"weights[{k}]", w, torch.float32)
                if w.shape != (int(n[k]),) or bool((w < 0).any()) or not bool(torch.isfinite(w).all()):
                    raise ValueError(f"weights[{k}] must be {int(n[k])} finite non-negative numbers.")
                w_pad[k, : len(w)] = w
        return cls(x_pad, y_pad, n, w_pad)

    @property
    def n_clients(self) -> int:
        return int(self.x.shape[0])

    @property
    def feature_shape(self) -> tuple[int, ...]:
        return tuple(self.x.shape[2:])

    def client(self, k: int) -> tuple[Tensor, Tensor, Tensor | None]:
        """Client ``k``'s samples without padding: ``(x, y, weight)``."""
        k = check_int("k", k, low=0, high=self.n_clients - 1)
        m = int(self.n[k])
        w = None if self.weight is None else self.weight[k, :m]
        return self.x[k, :m], self.y[k, :m], w

    def select(self, clients: Sequence[int] | Tensor) -> "ClientData":
        """The sub-population of the given client indices (in that order)."""
        idx = torch.as_tensor(clients, dtype=torch.long)
        if idx.dim() != 1 or len(idx) == 0 or int(idx.min()) < 0 or int(idx.max()) >= self.n_clients:
            raise ValueError(f"clients must be a non-empty list of indices in [0, {self.n_clients}).")
        w = None if self.weight is None else self.weight[idx]
        return ClientData(self.x[idx], self.y[idx], self.n[idx], w)

    def with_weight(self, weight: Tensor | None) -> "ClientData":
        """The same samples with new per-sample weights ``(K, n_max)`` (``None`` removes them)."""
        return ClientData(self.x, self.y, self.n, weight)

    def pooled(self) -> "ClientData":
        """All clients' samples as one client (the centralized data set)."""
        m = self.mask
        w = None if self.weight is None else self.weight[m].unsqueeze(0)
        return ClientData(self.x[m].unsqueeze(0), self.y[m].unsqueeze(0), self.n.sum().reshape(1), w)

    def label_histograms(self, n_classes: int) -> np.ndarray:
        """Per-client label counts, shape ``(K, n_classes)``."""
        hist = np.zeros((self.n_clients, n_classes), dtype=np.int64)
        for k in range(self.n_clients):
            hist[k] = np.bincount(self.client(k)[1].numpy(), minlength=n_classes)[:n_classes]
        return hist


@dataclass(frozen=True, eq=False)
class FederatedDataset:
    """Train and test samples of the same K clients, and the number of classes (``None``: regression)."""

    train: ClientData
    test: ClientData
    n_classes: int | None = None

    def __post_init__(self) -> None:
        if self.train.n_clients != self.test.n_clients:
            raise ValueError(f"train and test must have the same clients, got {self.train.n_clients} and "
                             f"{self.test.n_clients}.")

    @property
    def n_clients(self) -> int:
        return self.train.n_clients

    @classmethod
    def from_client_arrays(cls, xs: Sequence, ys: Sequence, *, test_fraction: float = 0.2,
                           n_classes: int | None = None, seed: int = 0) -> "FederatedDataset":
        """Split each client's ``(xs[k], ys[k])`` at random into train and test (at least one train sample)."""
        check_real("test_fraction", test_fraction, low=0, high=1, high_open=True)
        rng = np.random.default_rng(seed)
        tr_x, tr_y, te_x, te_y = [], [], [], []
        for k, (x, y) in enumerate(zip(xs, ys)):
            x, y = np.asarray(x), np.asarray(y)
            if len(x) == 0:
                raise ValueError(f"client {k} has no samples; every client needs at least one.")
            perm = rng.permutation(len(x))
            n_test = min(int(round(test_fraction * len(x))), len(x) - 1)
            te, tr = perm[:n_test], perm[n_test:]
            tr_x.append(x[tr]), tr_y.append(y[tr]), te_x.append(x[te]), te_y.append(y[te])
        if n_classes is None and all(np.issubdtype(np.asarray(y).dtype, np.integer) for y in ys):
            n_classes = int(max(np.max(y) for y in ys if len(y))) + 1
        return cls(ClientData.from_arrays(tr_x, tr_y),
                   ClientData.from_arrays(te_x, te_y, allow_empty=True), n_classes)
