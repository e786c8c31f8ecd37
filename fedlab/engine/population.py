r"""The client population as padded, stacked tensors.

``ClientData`` stores K clients' samples in one tensor ``x`` of shape ``(K, n_max, *features)`` with
their true sizes ``n`` (clients may have unequal sizes), optional per-sample weights, and a mask of
the valid (non-padded) entries. Batched local steps index into it with one ``gather``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._validation import all_finite, check_bool, check_int, check_real, check_sequence, check_type
from fedlab.models import Model, check_model

__all__ = ["ClientData", "FederatedDataset", "check_model_data"]


def _as_tensor(name: str, value, dtype: torch.dtype | None = None) -> Tensor:
    """``value`` as a tensor of numbers (bool, int or float; cast to ``dtype``), finite when it holds floats."""
    arr = value if isinstance(value, Tensor) else np.asarray(value)
    if arr.dtype == object or (isinstance(arr, np.ndarray) and arr.dtype.kind not in "biuf"):
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__} of dtype {arr.dtype}.")
    t = torch.as_tensor(arr)
    t = t.to(dtype) if dtype is not None else t
    if t.is_floating_point() and not all_finite(t):
        raise ValueError(f"{name} must contain only finite values.")
    return t


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
        self._check_types()
        if self.x.dim() < 2 or self.y.shape != self.x.shape[:2]:
            raise ValueError(f"x must have shape (K, n_max, ...) and y shape (K, n_max); got x {tuple(self.x.shape)}"
                             f" and y {tuple(self.y.shape)}.")
        if self.n.shape != (self.x.shape[0],):
            raise ValueError(f"n must have shape ({self.x.shape[0]},), got {tuple(self.n.shape)}.")
        if self.n.numel() and (int(self.n.min()) < 0 or int(self.n.max()) > self.x.shape[1]):
            raise ValueError(f"n must hold client sizes in [0, n_max={self.x.shape[1]}], got values in "
                             f"[{int(self.n.min())}, {int(self.n.max())}].")
        if self.weight is not None and self.weight.shape != self.y.shape:
            raise ValueError(f"weight must have shape {tuple(self.y.shape)}, got {tuple(self.weight.shape)}.")
        self._check_values()
        mask = torch.arange(self.x.shape[1], device=self.x.device).unsqueeze(0) < self.n.unsqueeze(1)
        object.__setattr__(self, "mask", mask)

    def _check_types(self) -> None:
        for name in ("x", "y", "n"):
            check_type(name, getattr(self, name), Tensor)
        check_type("weight", self.weight, Tensor, optional=True)
        if not self.x.is_floating_point():
            raise TypeError(f"x must be a float tensor, got dtype {self.x.dtype}.")
        if self.n.is_floating_point() or self.n.dtype == torch.bool:
            raise TypeError(f"n must be an integer tensor of client sizes, got dtype {self.n.dtype}.")
        if self.y.dtype == torch.bool or (self.weight is not None and not self.weight.is_floating_point()):
            raise TypeError(f"y must hold integer labels or float targets and weight floats; got y {self.y.dtype}"
                            f"{'' if self.weight is None else f' and weight {self.weight.dtype}'}.")

    def _check_values(self) -> None:
        if not all_finite(self.x):
            raise ValueError("x must contain only finite values (NaN or infinite features found).")
        if self.y.is_floating_point() and not all_finite(self.y):
            raise ValueError("y must contain only finite values (NaN or infinite targets found).")
        if not self.y.is_floating_point() and self.y.numel() and int(self.y.min()) < 0:
            raise ValueError(f"y must hold non-negative class labels, got minimum {int(self.y.min())}.")
        _check_weight(self.weight)

    @classmethod
    def _derived(cls, x: Tensor, y: Tensor, n: Tensor, weight: Tensor | None) -> "ClientData":
        """A ClientData cut from a validated one (``select``, ``pooled``, ``with_weight``): its samples are not
        checked again, so that the algorithms can build one every round at no cost."""
        out = cls.__new__(cls)
        for name, value in (("x", x), ("y", y), ("n", n), ("weight", weight)):
            object.__setattr__(out, name, value)
        object.__setattr__(out, "mask", torch.arange(x.shape[1], device=x.device).unsqueeze(0) < n.unsqueeze(1))
        return out

    def valid_samples(self, clients: Sequence[int] | Tensor | None = None) -> tuple[Tensor, Tensor]:
        """The clients' valid samples without padding, client after client: ``x (N, *features)`` and ``y (N,)``
        (weights are not included). All clients (the default, or all in order) are packed once per ClientData."""
        idx = None if clients is None else self.check_clients(clients)
        if idx is None or torch.equal(idx, torch.arange(self.n_clients, device=self.device)):
            return self._packed
        n_max = self.x.shape[1]
        flat = (idx.unsqueeze(1) * n_max + torch.arange(n_max, device=self.device))[self.mask.index_select(0, idx)]
        return self.x.flatten(0, 1).index_select(0, flat), self.y.flatten().index_select(0, flat)

    @functools.cached_property
    def _packed(self) -> tuple[Tensor, Tensor]:
        return self.x[self.mask], self.y[self.mask]

    @functools.cached_property
    def label_max(self) -> int | None:
        """The largest class label among the valid samples (None for float targets or no samples)."""
        if self.y.is_floating_point() or not bool(self.mask.any()):
            return None
        return int(torch.where(self.mask, self.y, -1).max())  # fixed shapes: no copy of the valid labels

    @classmethod
    def from_arrays(cls, xs: Sequence, ys: Sequence, weights: Sequence | None = None, *,
                    allow_empty: bool = False) -> "ClientData":
        """Stack per-client arrays ``xs[k]`` of shape ``(n_k, *features)`` and ``ys[k]`` of shape ``(n_k,)``."""
        check_sequence("xs", xs), check_sequence("ys", ys)
        allow_empty = check_bool("allow_empty", allow_empty)
        if len(xs) == 0 or len(xs) != len(ys):
            raise ValueError(f"xs and ys must be non-empty lists of equal length, got {len(xs)} and {len(ys)}.")
        xs = [_as_tensor(f"xs[{k}]", x, torch.float32) for k, x in enumerate(xs)]
        ys = [_as_tensor(f"ys[{k}]", y) for k, y in enumerate(ys)]
        features = xs[0].shape[1:]
        for k, (x, y) in enumerate(zip(xs, ys)):
            if x.dim() < 1 or x.shape[1:] != features:
                raise ValueError(f"xs[{k}] has feature shape {tuple(x.shape[1:])}, expected {tuple(features)}.")
            if y.dim() != 1 or y.shape[0] != x.shape[0]:
                raise ValueError(f"ys[{k}] must have shape ({x.shape[0]},), got {tuple(y.shape)}.")
            if x.shape[0] == 0 and not allow_empty:
                raise ValueError(f"xs[{k}] has no samples; every client needs at least one.")
        n = torch.tensor([x.shape[0] for x in xs], dtype=torch.long)
        n_max = max(int(n.max()), 1)
        y_dtype = torch.long if all(not y.is_floating_point() for y in ys) else torch.float32
        x_pad = torch.zeros((len(xs), n_max, *features), dtype=torch.float32)
        y_pad = torch.zeros((len(xs), n_max), dtype=y_dtype)
        for k, (x, y) in enumerate(zip(xs, ys)):
            x_pad[k, : len(x)] = x
            y_pad[k, : len(y)] = y.to(y_dtype)
        return cls(x_pad, y_pad, n, None if weights is None else _pad_weights(weights, n, n_max))

    @property
    def n_clients(self) -> int:
        return int(self.x.shape[0])

    @property
    def device(self) -> torch.device:
        """Where the samples are (every tensor of a ClientData is on this device)."""
        return self.x.device

    def to(self, device: str | torch.device) -> "ClientData":
        """The same clients on ``device`` (``self`` when they are there already)."""
        device = torch.device(device)
        if self.x.device == device:
            return self
        move = (lambda t: None if t is None else t.to(device))
        return ClientData._derived(move(self.x), move(self.y), move(self.n), move(self.weight))

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
        idx = self.check_clients(clients)
        w = None if self.weight is None else self.weight[idx]
        return ClientData._derived(self.x[idx], self.y[idx], self.n[idx], w)

    def check_clients(self, clients: Sequence[int] | Tensor) -> Tensor:
        """``clients`` as a long tensor on this data's device, when it is a non-empty 1-D list of client indices."""
        arr = clients if isinstance(clients, Tensor) else np.asarray(clients)
        kind_ok = (not arr.is_floating_point() and arr.dtype != torch.bool) if isinstance(arr, Tensor) else \
            arr.dtype.kind in "iu"
        if not kind_ok or arr.ndim != 1 or len(arr) == 0 or int(arr.min()) < 0 or int(arr.max()) >= self.n_clients:
            raise ValueError(f"clients must be a non-empty 1-D list of client indices in [0, {self.n_clients}), got "
                             f"{clients!r:.80}.")
        return torch.as_tensor(arr, dtype=torch.long, device=self.device)

    def with_weight(self, weight: Tensor | None) -> "ClientData":
        """The same samples with new per-sample weights ``(K, n_max)`` (``None`` removes them)."""
        check_type("weight", weight, Tensor, optional=True)
        if weight is not None:
            if not weight.is_floating_point() or weight.shape != self.y.shape:
                raise ValueError(f"weight must be a float tensor of shape {tuple(self.y.shape)}, got dtype "
                                 f"{weight.dtype} and shape {tuple(weight.shape)}.")
            _check_weight(weight)
        return ClientData._derived(self.x, self.y, self.n, weight)

    def pooled(self) -> "ClientData":
        """All clients' samples as one client (the centralized data set)."""
        m = self.mask
        w = None if self.weight is None else self.weight[m].unsqueeze(0)
        return ClientData._derived(self.x[m].unsqueeze(0), self.y[m].unsqueeze(0), self.n.sum().reshape(1), w)

    def label_histograms(self, n_classes: int) -> np.ndarray:
        """Per-client label counts, shape ``(K, n_classes)``."""
        hist = np.zeros((self.n_clients, n_classes), dtype=np.int64)
        for k in range(self.n_clients):
            hist[k] = np.bincount(self.client(k)[1].cpu().numpy(), minlength=n_classes)[:n_classes]
        return hist


def _check_weight(weight: Tensor | None) -> None:
    if weight is not None and (not all_finite(weight) or (weight.numel() and float(weight.min()) < 0)):
        raise ValueError("weight must hold finite non-negative per-sample weights.")


def _pad_weights(weights: Sequence, n: Tensor, n_max: int) -> Tensor:
    """Per-client sample weights padded to ``(K, n_max)``."""
    check_sequence("weights", weights)
    if len(weights) != len(n):
        raise ValueError(f"weights must have one entry per client ({len(n)}), got {len(weights)}.")
    w_pad = torch.zeros((len(n), n_max), dtype=torch.float32)
    for k, w in enumerate(weights):
        w = _as_tensor(f"weights[{k}]", w, torch.float32)
        if w.shape != (int(n[k]),) or bool((w < 0).any()):
            raise ValueError(f"weights[{k}] must be {int(n[k])} finite non-negative numbers.")
        w_pad[k, : len(w)] = w
    return w_pad


def check_model_data(model: Model, data: ClientData, name: str = "data") -> None:
    """Raise naming ``name`` when ``data`` does not fit ``model``: its samples' feature shape, and for a classifier
    integer labels within the model's outputs ``[0, n_outputs)``.

    Cheap: the model checks a shape, and the largest label is computed once per ``ClientData``.
    """
    check_model(model)
    check_type(name, data, ClientData)
    model.check_features(data.feature_shape, name)
    if not model.is_classifier:
        return
    if data.y.is_floating_point():
        raise TypeError(f"{name}.y must hold integer class labels for a classifier, got dtype {data.y.dtype}.")
    n_out = model.n_outputs()
    if n_out is not None and data.label_max is not None and data.label_max >= n_out:
        raise ValueError(f"{name} has the label {data.label_max} but the model has {n_out} outputs: labels must lie "
                         f"in [0, {n_out}).")


def _check_labels(data: ClientData, n_classes: int, where: str) -> None:
    if data.y.is_floating_point():
        raise TypeError(f"n_classes={n_classes} needs integer labels, but {where}.y holds floats.")
    if data.label_max is not None and data.label_max >= n_classes:
        raise ValueError(f"n_classes={n_classes} but {where} holds the label {data.label_max}: labels must lie in "
                         f"[0, n_classes).")


@dataclass(frozen=True, eq=False)
class FederatedDataset:
    """Train and test samples of the same K clients, and the number of classes (``None``: regression)."""

    train: ClientData
    test: ClientData
    n_classes: int | None = None

    def __post_init__(self) -> None:
        check_type("train", self.train, ClientData)
        check_type("test", self.test, ClientData)
        if self.train.n_clients != self.test.n_clients:
            raise ValueError(f"train and test must have the same clients, got {self.train.n_clients} and "
                             f"{self.test.n_clients}.")
        if self.train.feature_shape != self.test.feature_shape:
            raise ValueError(f"train and test must have the same feature shape, got {self.train.feature_shape} and "
                             f"{self.test.feature_shape}.")
        if self.n_classes is not None:
            object.__setattr__(self, "n_classes", check_int("n_classes", self.n_classes, low=1))
            _check_labels(self.train, self.n_classes, "train")
            _check_labels(self.test, self.n_classes, "test")

    @property
    def n_clients(self) -> int:
        return self.train.n_clients

    @property
    def device(self) -> torch.device:
        """Where the samples are."""
        return self.train.device

    def to(self, device: str | torch.device) -> "FederatedDataset":
        """The same data set on ``device`` (``self`` when it is there already); see :func:`fedlab.engine.resolve_device`."""
        device = torch.device(device)
        if self.train.device == device and self.test.device == device:
            return self
        out = FederatedDataset.__new__(FederatedDataset)
        for name, value in (("train", self.train.to(device)), ("test", self.test.to(device)),
                            ("n_classes", self.n_classes)):
            object.__setattr__(out, name, value)
        return out

    @classmethod
    def from_client_arrays(cls, xs: Sequence, ys: Sequence, *, test_fraction: float = 0.2,
                           n_classes: int | None = None, seed: int = 0) -> "FederatedDataset":
        """Split each client's ``(xs[k], ys[k])`` at random into train and test (at least one train sample).

        ``n_classes`` defaults to the largest label + 1 when the labels are integers (else: regression).
        """
        check_sequence("xs", xs), check_sequence("ys", ys)
        if len(xs) == 0 or len(xs) != len(ys):
            raise ValueError(f"xs and ys must be non-empty lists of equal length, got {len(xs)} and {len(ys)}.")
        check_real("test_fraction", test_fraction, low=0, high=1, high_open=True)
        if n_classes is not None:
            check_int("n_classes", n_classes, low=1)
        rng = np.random.default_rng(check_int("seed", seed, low=0))
        tr_x, tr_y, te_x, te_y = [], [], [], []
        for k, (x, y) in enumerate(zip(xs, ys)):
            x, y = _as_tensor(f"xs[{k}]", x).numpy(), _as_tensor(f"ys[{k}]", y).numpy()
            if x.ndim < 1 or len(x) == 0:
                raise ValueError(f"xs[{k}] has no samples; every client needs at least one.")
            if y.shape != (len(x),):
                raise ValueError(f"ys[{k}] must have shape ({len(x)},), got {y.shape}.")
            perm = rng.permutation(len(x))
            n_test = min(int(round(test_fraction * len(x))), len(x) - 1)
            te, tr = perm[:n_test], perm[n_test:]
            tr_x.append(x[tr]), tr_y.append(y[tr]), te_x.append(x[te]), te_y.append(y[te])
        if n_classes is None and all(np.issubdtype(y.dtype, np.integer) for y in tr_y):
            n_classes = int(max(max(np.max(y) for y in tr_y if len(y)), max((np.max(y) for y in te_y if len(y)),
                                                                             default=0))) + 1
        return cls(ClientData.from_arrays(tr_x, tr_y),
                   ClientData.from_arrays(te_x, te_y, allow_empty=True), n_classes)
