r"""kNN-Per: personalization through local memorization (thesis §3.6, Algorithm 12).

A global model :math:`h_S` is trained with FedAvg (3.28). Each client :math:`t` then makes one forward
pass over its local data and stores the pairs (representation, label) in a datastore (3.29)

.. math::
    (\mathcal K_t, \mathcal V_t) = \{(\phi_{h_S}(x_t^{(i)}), y_t^{(i)})\}_i ,

where :math:`\phi_{h_S}` is the global model's last hidden layer. At inference it retrieves the
:math:`k` nearest keys of :math:`\phi_{h_S}(x)` (3.30)–(3.31), forms the kernel estimate (3.32) with
the scaled Euclidean distance :math:`d_\sigma(z, z') = \|z - z'\|_2/\sigma` (3.40),

.. math::
    [h^{(k)}_{S_t}(x)]_y \propto \sum_{i=1}^k \mathbb 1\{y = y_{\pi^{(i)}_t(x)}\}
        \exp\{-d_\sigma(\phi_{h_S}(x), \phi_{h_S}(x_{\pi^{(i)}_t(x)}))\},

and predicts with the interpolation of probabilities (3.33)

.. math::
    h_{t,\lambda_t}(x) = \lambda_t\, h^{(k)}_{S_t}(x) + (1 - \lambda_t)\, h_S(x),

:math:`\lambda_t` chosen on a local validation set from the grid
:math:`\{0, .1, .3, .5, .7, .9, 1\}` (ties go to the smallest :math:`\lambda`, i.e. to the global model).
A client that joins after training simply builds its own datastore with the downloaded global model.

Implementation notes (personalization spec §7.2–7.3): the kernel is stabilised by subtracting the
smallest retrieved distance before exponentiating (exact after normalisation); ``k`` is capped at the
datastore size; the reference code's kernel :math:`\exp(-\|z-z'\|^2/(p\,\sigma))` is available as
``kernel="exp_sqdist_over_dim"``; the datastore capacity is a fraction :math:`c\in[0,1]` of the local
data, keeping a uniformly random subset of :math:`\lfloor c\,n_t\rfloor` entries (nested across
capacities for a given seed). Nearest neighbours come from ``torch.cdist`` + ``topk`` (default) or
scikit-learn's ``NearestNeighbors`` (``backend="sklearn"``); no hand-written search.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import all_finite, check_array, check_bool, check_choice, check_int, check_real, check_type
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, check_model_data, metrics_from_proba
from fedlab.models import MLP, Model, ModuleModel, Params, SmallCNN, check_model, check_params
from fedlab.algorithms.common import (ServerState, evaluate_global)
from fedlab.algorithms import (APFL, METHODS, ClusteredFL, Ditto, FedAvg, FedAvgPlus, FedEM, FedRep, Local)

__all__ = [
    "PRESETS",
    "LAMBDA_GRID",
    "KERNELS",
    "KNN_BACKENDS",
    "DISTANCE_RESOLUTION",
    "UPDATE_STRATEGIES",
    "TIE_RULES",
    "LAMBDA_SELECTIONS",
    "FEATURES",
    "embedding_dim",
    "embed",
    "embed_and_proba",
    "client_features",
    "ClientFeatures",
    "capacity_size",
    "knn_search",
    "kernel_weights",
    "knn_proba",
    "interpolate",
    "lambda_accuracies",
    "select_lambda",
    "Datastore",
    "build_datastores",
    "KNNPerModel",
    "personalize",
    "accuracy_grid",
    "KNNPer",
    "param_count",
    "cost_table",
]

LAMBDA_GRID = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
"""The thesis' grid for :math:`\\lambda_t` (§3.6.3)."""

TIE_RULES = ("smallest", "largest")


# ----------------------------------------------------------------------------------------------
# Representations: the global model's last hidden layer


FEATURE_CHUNK = 2048
"""Samples per forward pass in :func:`client_features`."""


def _mlp_features(model: MLP, params: Params, x: Tensor) -> tuple[Tensor, Tensor]:
    """Post-ReLU output of the last hidden layer and the logits, with the same operations as ``MLP.forward``."""
    h = x.flatten(1)
    n_layers = len(model.hidden) + 1
    for i in range(n_layers - 1):
        h = torch.relu(torch.addmm(params[f"b{i}"], h, params[f"w{i}"]))
    last = n_layers - 1
    return h, torch.addmm(params[f"b{last}"], h, params[f"w{last}"])


def _cnn_features(model: SmallCNN, params: Params, x: Tensor) -> tuple[Tensor, Tensor]:
    """Flattened pooled feature map before the linear head, and the logits (as ``SmallCNN.forward``)."""
    import torch.nn.functional as F

    x = x.reshape(-1, model.in_channels, model.image_size, model.image_size)
    h = F.max_pool2d(torch.relu(F.conv2d(x, params["conv1.w"], params["conv1.b"], padding=1)), 2)
    h = F.max_pool2d(torch.relu(F.conv2d(h, params["conv2.w"], params["conv2.b"], padding=1)), 2)
    h = h.flatten(1)
    return h, torch.addmm(params["head.b"], h, params["head.w"])


def _module_features(model: ModuleModel, params: Params, x: Tensor) -> tuple[Tensor, Tensor]:
    """The papers' models (:class:`~fedlab.models.PaperCNN`, :class:`~fedlab.models.CharLSTM`): their own
    representation, with the module's forward."""
    return model.features(params, x)


FEATURES: dict[type, Callable[[Model, Params, Tensor], tuple[Tensor, Tensor]]] = {
    MLP: _mlp_features,
    SmallCNN: _cnn_features,
    ModuleModel: _module_features,
}
"""Model class -> ``(representation, logits)`` function; add an entry to give kNN-Per a new architecture (a
:class:`~fedlab.models.ModuleModel` needs a module with ``feature_dim`` and ``forward(x, features=True)``)."""


def _features_fn(model: Model):
    for cls, fn in FEATURES.items():
        if isinstance(model, cls) and not (cls is ModuleModel and model.feature_dim is None):
            return fn
    raise TypeError(f"kNN-Per needs a model with a hidden representation ({', '.join(c.__name__ for c in FEATURES)} "
                    f"with one), got {getattr(model, 'name', type(model).__name__)}.")


def embedding_dim(model: Model) -> int:
    """Dimension :math:`p` of the representation :math:`\\phi_{h_S}` (last hidden layer)."""
    _features_fn(model)
    if isinstance(model, MLP):
        if not model.hidden:
            raise ValueError("an MLP without hidden layers has no representation; give it at least one hidden layer.")
        return model.hidden[-1]
    if isinstance(model, ModuleModel):
        return model.feature_dim
    return model.channels[1] * (model.image_size // 4) ** 2


@torch.no_grad()
def embed_and_proba(model: Model, params: Params, x, *, stacked: bool = False) -> tuple[Tensor, Tensor]:
    r"""Representation :math:`\phi_{h_S}(x)` and predicted probabilities :math:`h_S(x)` in one forward pass.

    Parameters
    ----------
    model : MLP, SmallCNN or a paper model (:data:`FEATURES`)
    params : dict of Tensor
        One model (``stacked=False``, x of shape (n, ...)) or one model per row (``stacked=True``, every
        parameter with a leading axis R and x of shape (R, n, ...)).
    x : array-like or Tensor

    Returns
    -------
    embedding : Tensor (n, p) or (R, n, p)
    proba : Tensor (n, C) or (R, n, C)
        Softmax of the logits (exactly ``softmax(model.forward(params, x))``).
    """
    fn = _features_fn(model)
    stacked = check_bool("stacked", stacked)
    check_params(model, params, stacked=stacked)
    x = x if isinstance(x, Tensor) else torch.as_tensor(check_array("x", x), dtype=torch.float32)
    if not all_finite(x):
        raise ValueError("x must contain only finite values.")
    if stacked:
        if x.dim() < 3 or x.shape[0] != next(iter(params.values())).shape[0]:
            raise ValueError(f"stacked x must have shape (R, n, ...) with R = {next(iter(params.values())).shape[0]}, "
                             f"got {tuple(x.shape)}.")
        emb, logits = torch.func.vmap(lambda p, xx: fn(model, p, xx))(params, x)
    else:
        if x.dim() < 2:
            raise ValueError(f"x must have shape (n, ...), got {tuple(x.shape)}.")
        emb, logits = fn(model, params, x)
    return emb, torch.softmax(logits, dim=-1)


def embed(model: Model, params: Params, x, *, stacked: bool = False) -> Tensor:
    r"""Representation :math:`\phi_{h_S}(x)`: the output of the model's last hidden layer (after ReLU).

    See :func:`embed_and_proba` for the arguments; returns shape (n, p), or (R, n, p) when ``stacked``.
    """
    return embed_and_proba(model, params, x, stacked=stacked)[0]


@dataclass(frozen=True, eq=False)
class ClientFeatures:
    """Per-client global-model features of a :class:`ClientData`: one forward pass, computed once.

    Attributes
    ----------
    keys : list of np.ndarray (n_k, p), float32
        Representations :math:`\\phi_{h_S}(x)` of client k's samples.
    proba : list of np.ndarray (n_k, C), float64
        Global model's predicted probabilities :math:`h_S(x)`.
    labels : list of np.ndarray (n_k,), int64
    """

    keys: list
    proba: list
    labels: list

    def __post_init__(self) -> None:
        parts = {name: check_type(name, getattr(self, name), list) for name in ("keys", "proba", "labels")}
        if not parts["keys"] or len({len(v) for v in parts.values()}) > 1:
            raise ValueError(f"keys, proba and labels must hold one entry per client (>= 1), got "
                             f"{[len(v) for v in parts.values()]}.")
        for t, (k, p, y) in enumerate(zip(*parts.values())):
            k, p, y = check_array(f"keys[{t}]", k, ndim=2), check_array(f"proba[{t}]", p, ndim=2), np.asarray(y)
            if y.ndim != 1 or y.dtype.kind not in "iu" or len(k) != len(y) or len(p) != len(y):
                raise ValueError(f"keys[{t}], proba[{t}] and labels[{t}] must describe the same {len(y)} samples "
                                 f"(labels: integers).")

    @property
    def n_clients(self) -> int:
        return len(self.keys)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(y) for y in self.labels], dtype=np.int64)

    @property
    def n_classes(self) -> int:
        return int(self.proba[0].shape[1])

    def concat(self, other: "ClientFeatures") -> "ClientFeatures":
        """Client-wise concatenation (e.g. train ∪ validation)."""
        if other.n_clients != self.n_clients:
            raise ValueError(f"other must have {self.n_clients} clients, got {other.n_clients}.")
        return ClientFeatures([np.concatenate([a, b]) for a, b in zip(self.keys, other.keys)],
                              [np.concatenate([a, b]) for a, b in zip(self.proba, other.proba)],
                              [np.concatenate([a, b]) for a, b in zip(self.labels, other.labels)])


@torch.no_grad()
def client_features(model: Model, params: Params, data: ClientData) -> ClientFeatures:
    """Representations and global probabilities of every client's samples (padding removed), on the CPU.

    The global model is the same for every client, so the population is evaluated in one pass, in chunks of
    :data:`FEATURE_CHUNK` samples (a paper-scale CNN's activations would not fit at once).
    """
    if not isinstance(data, ClientData):
        raise TypeError(f"data must be a ClientData, got {type(data).__name__}.")
    if data.y.is_floating_point():
        raise ValueError("kNN-Per is for classification: data.y must hold integer labels.")
    _features_fn(model)
    check_model_data(model, data)
    check_params(model, params, stacked=False)
    flat = data.x[data.mask]
    parts = [embed_and_proba(model, params, flat[i: i + FEATURE_CHUNK]) for i in range(0, len(flat), FEATURE_CHUNK)]
    if not parts:
        p, c = embedding_dim(model), model.n_outputs()
        return ClientFeatures([np.zeros((0, p), np.float32)] * data.n_clients, [np.zeros((0, c))] * data.n_clients,
                              [np.zeros(0, np.int64)] * data.n_clients)
    sizes = data.n.tolist()
    emb = torch.cat([e for e, _ in parts]).float().cpu()
    proba = torch.cat([q for _, q in parts]).double().cpu()
    labels = data.y[data.mask].cpu()
    return ClientFeatures([k.numpy() for k in torch.split(emb, sizes)], [q.numpy() for q in torch.split(proba, sizes)],
                          [y.numpy().astype(np.int64) for y in torch.split(labels, sizes)])


# ----------------------------------------------------------------------------------------------
# Nearest neighbours and the kernel estimate (3.30)-(3.32)


def _search_sklearn(query: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric="euclidean").fit(keys)
    dist, idx = nn.kneighbors(query)
    return dist.astype(np.float64), idx.astype(np.int64)


DISTANCE_RESOLUTION = 2 ** -32
"""Neighbours are ranked on distances rounded to this fraction of the row's largest distance, ties to the lower
index, so that float noise (another CPU's kernels) cannot reorder equidistant keys."""


def _search_torch(query: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    # exact differences, not the |x|^2 + |y|^2 - 2xy expansion, whose rounding depends on the BLAS kernel
    d = torch.cdist(torch.from_numpy(query).double(), torch.from_numpy(keys).double(),
                    compute_mode="donot_use_mm_for_euclid_dist")
    scale = d.amax(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)
    rank = torch.round(d / scale / DISTANCE_RESOLUTION).long() * d.shape[1] + torch.arange(d.shape[1])
    idx = torch.topk(rank, k, dim=1, largest=False, sorted=True).indices
    return d.gather(1, idx).numpy(), idx.numpy()


KNN_BACKENDS = {"torch": _search_torch, "sklearn": _search_sklearn}


def _as_2d(name: str, value) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.detach().cpu().numpy()
    arr = check_array(name, value, ndim=2)
    return arr


def knn_search(query, keys, k: int, *, backend: str = "torch") -> tuple[np.ndarray, np.ndarray]:
    r"""The :math:`k_{eff} = \min(k, m)` nearest keys of every query in Euclidean distance (3.30)–(3.31).

    Parameters
    ----------
    query : array-like (n, p)
    keys : array-like (m, p), m >= 1
    k : int >= 1
    backend : {"torch", "sklearn"}
        ``torch.cdist`` + ``topk`` in float64 (default; equidistant keys in index order, whatever the CPU, see
        :data:`DISTANCE_RESOLUTION`) or scikit-learn's ``NearestNeighbors`` (brute force); they agree to 1e-6.

    Returns
    -------
    dist : np.ndarray (n, k_eff), float64, sorted increasingly per row
    idx : np.ndarray (n, k_eff), int64, indices into ``keys``
    """
    k = check_int("k", k, low=1)
    check_choice("backend", backend, KNN_BACKENDS)
    q, kk = _as_2d("query", query), _as_2d("keys", keys)
    if len(kk) == 0:
        raise ValueError("keys is empty: the datastore holds no entry, so no neighbour can be retrieved.")
    if q.shape[1] != kk.shape[1]:
        raise ValueError(f"query and keys must have the same dimension, got {q.shape[1]} and {kk.shape[1]}.")
    k_eff = min(k, len(kk))
    if len(q) == 0:
        return np.zeros((0, k_eff)), np.zeros((0, k_eff), dtype=np.int64)
    return KNN_BACKENDS[backend](q, kk, k_eff)


KERNELS: dict[str, Callable[[np.ndarray, float, int], np.ndarray]] = {
    # exponent a_i of w_i = exp(-a_i)
    "exp_dist": lambda dist, sigma, dim: dist / sigma,                      # thesis (3.32) + (3.40)
    "exp_sqdist_over_dim": lambda dist, sigma, dim: dist ** 2 / (dim * sigma),  # reference code (FAISS L2 / p)
}
"""Kernel exponents: ``w_i = exp(-KERNELS[name](d_i, sigma, p))`` with :math:`d_i` the Euclidean distance."""


def kernel_weights(dist, *, sigma: float = 1.0, kernel: str = "exp_dist", dim: int = 1) -> np.ndarray:
    r"""Normalised kernel weights of retrieved neighbours, stabilised.

    :math:`w_i = e^{-(a_i - \min_j a_j)} / \sum_l e^{-(a_l - \min_j a_j)}` with :math:`a_i = d_i/\sigma`
    (``exp_dist``, thesis (3.32), (3.40)) or :math:`a_i = d_i^2/(p\sigma)` (``exp_sqdist_over_dim``,
    reference code). Subtracting the minimum leaves the normalised weights unchanged and avoids 0/0.

    Parameters
    ----------
    dist : array-like (n, k), non-negative distances
    sigma : float > 0
        Length scale (temperature).
    kernel : {"exp_dist", "exp_sqdist_over_dim"}
    dim : int >= 1
        Representation dimension p (used by ``exp_sqdist_over_dim``).

    Returns
    -------
    np.ndarray (n, k), rows sum to 1.
    """
    d = check_array("dist", dist, ndim=2, nonnegative=True)
    sigma = check_real("sigma", sigma, low=0, low_open=True)
    check_choice("kernel", kernel, KERNELS)
    dim = check_int("dim", dim, low=1)
    if d.shape[1] == 0:
        raise ValueError("dist must have at least one neighbour per row.")
    a = KERNELS[kernel](d, sigma, dim)
    w = np.exp(-(a - a.min(axis=1, keepdims=True)))
    return w / w.sum(axis=1, keepdims=True)


def knn_proba(query, keys, values, *, k: int, n_classes: int, sigma: float = 1.0, kernel: str = "exp_dist",
              backend: str = "torch") -> np.ndarray:
    r"""kNN estimate :math:`h^{(k)}_{S_t}(x)` of the label distribution (thesis eq. (3.32)).

    Parameters
    ----------
    query : array-like (n, p)
        Representations of the inputs to classify.
    keys : array-like (m, p), m >= 1
        Datastore keys.
    values : array-like of int (m,)
        Datastore labels in ``[0, n_classes)``.
    k : int >= 1
        Neighbours (capped at m).
    n_classes : int >= 1
    sigma, kernel :
        See :func:`kernel_weights`.
    backend : {"torch", "sklearn"}

    Returns
    -------
    np.ndarray (n, n_classes), float64, rows in the probability simplex.
    """
    n_classes = check_int("n_classes", n_classes, low=1)
    vals = np.asarray(values.detach().cpu().numpy() if isinstance(values, Tensor) else values)
    kk = _as_2d("keys", keys)
    if vals.ndim != 1 or len(vals) != len(kk):
        raise ValueError(f"values must have shape ({len(kk)},), got {vals.shape}.")
    if vals.size and (vals.dtype.kind not in "iu" or vals.min() < 0 or vals.max() >= n_classes):
        raise ValueError(f"values must be integer labels in [0, {n_classes}).")
    dist, idx = knn_search(query, kk, k, backend=backend)
    w = kernel_weights(dist, sigma=sigma, kernel=kernel, dim=kk.shape[1]) if len(dist) else dist
    out = np.zeros((len(dist), n_classes))
    np.add.at(out, (np.repeat(np.arange(len(dist)), dist.shape[1]), vals[idx].ravel()), w.ravel())
    return out


def _lam(name: str, lam) -> float:
    return check_real(name, lam, low=0, high=1)


def _probabilities(name: str, value) -> np.ndarray:
    """Probabilities (array-like or Tensor): finite, in [0, 1]."""
    arr = check_array(name, value.detach().cpu().numpy() if isinstance(value, Tensor) else value)
    if np.any((arr < 0) | (arr > 1 + 1e-9)):
        raise ValueError(f"{name} must hold probabilities in [0, 1], got values in [{arr.min():.4g}, {arr.max():.4g}].")
    return arr


def interpolate(p_knn, p_global, lam):
    r"""Interpolated prediction :math:`\lambda\,p_{kNN} + (1-\lambda)\,p_{global}` (thesis eq. (3.33)).

    Parameters
    ----------
    p_knn, p_global : array-like or Tensor (n, C)
        Probability vectors (``p_knn`` is ignored when ``lam == 0``, so it may be all zeros).
    lam : float in [0, 1], or array-like (n,) of such floats (one per row)

    Returns
    -------
    Same type as ``p_global``, shape (n, C). ``lam = 0`` returns ``p_global`` and ``lam = 1`` returns
    ``p_knn`` exactly.
    """
    as_tensor = isinstance(p_global, Tensor)
    g = _probabilities("p_global", p_global)
    q = _probabilities("p_knn", p_knn)
    if g.ndim != 2 or q.shape != g.shape:
        raise ValueError(f"p_knn and p_global must have the same shape (n, C), got {q.shape} and {g.shape}.")
    if np.ndim(lam) == 0:
        lam_arr = np.full((len(g), 1), _lam("lam", lam))
    else:
        lam_arr = check_array("lam", lam, ndim=1, shape=(len(g),))
        if np.any((lam_arr < 0) | (lam_arr > 1)):
            raise ValueError(f"lam must lie in [0, 1], got values in [{lam_arr.min()}, {lam_arr.max()}].")
        lam_arr = lam_arr[:, None]
    out = np.where(lam_arr == 0, g, np.where(lam_arr == 1, q, lam_arr * q + (1 - lam_arr) * g))
    return torch.from_numpy(out).to(p_global.dtype) if as_tensor else out


def lambda_accuracies(p_knn, p_global, y, grid: Sequence[float] = LAMBDA_GRID) -> np.ndarray:
    """Accuracy of :math:`\\lambda p_{kNN} + (1-\\lambda) p_{global}` for every :math:`\\lambda` of ``grid``.

    Parameters
    ----------
    p_knn, p_global : array-like (n, C)
    y : array-like of int (n,)
    grid : sequence of floats in [0, 1]

    Returns
    -------
    np.ndarray (len(grid),); NaN when n = 0.
    """
    grid_arr = check_grid("grid", grid)
    q = _probabilities("p_knn", p_knn)
    g = _probabilities("p_global", p_global)
    y = np.asarray(y)
    if q.shape != g.shape or q.ndim != 2 or y.shape != (len(g),):
        raise ValueError(f"p_knn, p_global must be (n, C) and y (n,), got {q.shape}, {g.shape}, {y.shape}.")
    if y.size and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= g.shape[1]):
        raise ValueError(f"y must hold integer labels in [0, {g.shape[1]}).")
    if len(y) == 0:
        return np.full(len(grid_arr), np.nan)
    mix = grid_arr[:, None, None] * q[None] + (1 - grid_arr[:, None, None]) * g[None]
    return (mix.argmax(-1) == y[None]).mean(1)


def select_lambda(p_knn, p_global, y, grid: Sequence[float] = LAMBDA_GRID, *, tie: str = "smallest") -> float:
    r"""The :math:`\lambda` of ``grid`` with the best validation accuracy (thesis §3.6.1, grid of §3.6.3).

    Ties (frequent on small validation sets) go to the smallest :math:`\lambda` (prefer the global model
    when indifferent; spec §7.3) or, with ``tie="largest"``, to the largest. An empty validation set
    makes every :math:`\lambda` tie.

    Returns
    -------
    float, an element of ``grid``.
    """
    check_choice("tie", tie, TIE_RULES)
    acc = lambda_accuracies(p_knn, p_global, y, grid)
    grid_arr = np.asarray(grid, dtype=float)
    acc = np.nan_to_num(acc, nan=0.0)
    best = np.flatnonzero(acc >= acc.max() - 1e-12)
    tied = grid_arr[best]
    return float(tied.min() if tie == "smallest" else tied.max())


# ----------------------------------------------------------------------------------------------
# Datastores


def capacity_size(n: int, capacity: float) -> int:
    r"""Entries kept by a datastore of capacity :math:`c` over :math:`n` samples: :math:`\lfloor c\,n\rfloor`."""
    n = check_int("n", n, low=0)
    capacity = check_real("capacity", capacity, low=0, high=1)
    return int(np.floor(capacity * n + 1e-9))


def _fifo(store: "Datastore", keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    size = len(store)
    all_k, all_v = np.concatenate([store.keys, keys]), np.concatenate([store.values, values])
    return all_k[len(all_k) - size:], all_v[len(all_v) - size:]


UPDATE_STRATEGIES = {
    "fifo": _fifo,                                                      # evict the oldest, constant size
    "concat": lambda s, k, v: (np.concatenate([s.keys, k]), np.concatenate([s.values, v])),  # append
    "fixed": lambda s, k, v: (s.keys, s.values),                         # never update
}
"""Datastore update rules under a data stream (thesis §3.6.3, "Robustness to distribution shift")."""


@dataclass(frozen=True, eq=False)
class Datastore:
    r"""A client's key-value store :math:`(\mathcal K_t, \mathcal V_t)` (thesis eq. (3.29)), oldest entries first.

    Parameters
    ----------
    keys : np.ndarray (m, p)
        Representations.
    values : np.ndarray of int (m,)
        Labels in ``[0, n_classes)``.
    n_classes : int
    """

    keys: np.ndarray
    values: np.ndarray
    n_classes: int

    def __post_init__(self) -> None:
        keys = _as_2d("keys", self.keys).astype(np.float32)
        vals = np.asarray(self.values)
        n_classes = check_int("n_classes", self.n_classes, low=1)
        if vals.ndim != 1 or len(vals) != len(keys):
            raise ValueError(f"values must have shape ({len(keys)},), got {vals.shape}.")
        if vals.size and (vals.dtype.kind not in "iu" or vals.min() < 0 or vals.max() >= n_classes):
            raise ValueError(f"values must be integer labels in [0, {n_classes}).")
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "values", vals.astype(np.int64))
        object.__setattr__(self, "n_classes", n_classes)

    def __len__(self) -> int:
        return int(len(self.values))

    @property
    def dim(self) -> int:
        return int(self.keys.shape[1])

    @property
    def nbytes(self) -> int:
        """Memory of the stored keys (float32) and labels (int64), in bytes."""
        return int(self.keys.nbytes + self.values.nbytes)

    @classmethod
    def build(cls, keys, values, n_classes: int, *, capacity: float = 1.0, rng=None) -> "Datastore":
        r"""Keep a uniformly random subset of :math:`\lfloor c\,n\rfloor` of the ``n`` given pairs.

        For a fixed ``rng`` seed the subsets are nested across capacities (the first entries of one
        random permutation), which makes capacity sweeps monotone in the stored data.
        """
        keys = _as_2d("keys", keys)
        size = capacity_size(len(keys), capacity)
        if size == len(keys):
            return cls(keys, np.asarray(values), n_classes)
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        keep = np.sort(rng.permutation(len(keys))[:size])
        return cls(keys[keep], np.asarray(values)[keep], n_classes)

    def update(self, keys, values, strategy: str = "fifo") -> "Datastore":
        """A new datastore after receiving a batch.

        ``fifo`` evicts the oldest entries (constant size), ``concat`` appends, ``fixed`` ignores the batch.
        """
        check_choice("strategy", strategy, UPDATE_STRATEGIES)
        new = Datastore(keys, values, self.n_classes)
        if new.dim != self.dim and len(self):
            raise ValueError(f"keys must have dimension {self.dim}, got {new.dim}.")
        k, v = UPDATE_STRATEGIES[strategy](self, new.keys, new.values)
        return Datastore(k, v, self.n_classes)

    def proba(self, query, *, k: int = 10, sigma: float = 1.0, kernel: str = "exp_dist",
              backend: str = "torch") -> np.ndarray:
        """kNN label distribution of the queries (n, C); see :func:`knn_proba`. Raises if the store is empty."""
        if len(self) == 0:
            raise ValueError("the datastore is empty: the kNN model is undefined (use lam=0, i.e. the global model).")
        return knn_proba(query, self.keys, self.values, k=k, n_classes=self.n_classes, sigma=sigma, kernel=kernel,
                         backend=backend)


def build_datastores(features: ClientFeatures, *, capacity: float = 1.0, seed: int = 0) -> list[Datastore]:
    """One datastore per client from precomputed features, each a random subset of ``floor(capacity * n_k)``.

    Client k's subset is drawn from ``(seed, k)`` (nested across capacities).
    """
    check_type("features", features, ClientFeatures)
    check_real("capacity", capacity, low=0, high=1)
    check_int("seed", seed, low=0)
    return [Datastore.build(keys, labels, features.n_classes, capacity=capacity,
                            rng=numpy_rng(seed, k, Stream.PERSONAL))
            for k, (keys, labels) in enumerate(zip(features.keys, features.labels))]


# ----------------------------------------------------------------------------------------------
# The personalised predictors


@dataclass(frozen=True, eq=False)
class KNNPerModel:
    r"""The personalised predictors :math:`h_{t,\lambda_t}` of K clients (thesis eq. (3.33)).

    Attributes
    ----------
    model : Model
    params : dict of Tensor
        The global model :math:`h_S` (unstacked).
    datastores : tuple of Datastore, one per client
    lambdas : np.ndarray (K,)
        Interpolation weights :math:`\lambda_t`.
    k, sigma, kernel, backend :
        kNN settings (see :func:`knn_proba`).
    """

    model: Model
    params: Params
    datastores: tuple
    lambdas: np.ndarray
    k: int = 10
    sigma: float = 1.0
    kernel: str = "exp_dist"
    backend: str = "torch"
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        _features_fn(self.model)
        check_params(self.model, self.params, stacked=False)
        stores = check_type("datastores", self.datastores, (tuple, list))
        if not stores or not all(isinstance(s, Datastore) for s in stores):
            raise TypeError("datastores must be a non-empty tuple of Datastore, one per client.")
        check_type("info", self.info, dict)
        check_int("k", self.k, low=1)
        check_real("sigma", self.sigma, low=0, low_open=True)
        check_choice("kernel", self.kernel, KERNELS)
        check_choice("backend", self.backend, KNN_BACKENDS)
        lam = check_array("lambdas", self.lambdas, ndim=1, shape=(len(self.datastores),))
        if np.any((lam < 0) | (lam > 1)):
            raise ValueError(f"lambdas must lie in [0, 1], got values in [{lam.min()}, {lam.max()}].")
        empty = [t for t, s in enumerate(self.datastores) if len(s) == 0 and lam[t] > 0]
        if empty:
            raise ValueError(f"clients {empty[:10]} have an empty datastore but lambda > 0; the kNN model is undefined "
                             f"there (use capacity > 0 or lambda = 0).")
        object.__setattr__(self, "lambdas", lam)
        object.__setattr__(self, "datastores", tuple(self.datastores))

    @property
    def n_clients(self) -> int:
        return len(self.datastores)

    def knn_proba(self, features: ClientFeatures) -> list[np.ndarray]:
        """Per-client kNN distributions of the queries in ``features`` (zeros for empty datastores)."""
        self._check_clients(features.n_clients)
        out = []
        for store, q in zip(self.datastores, features.keys):
            if len(store) == 0 or len(q) == 0:
                out.append(np.zeros((len(q), store.n_classes)))
            else:
                out.append(store.proba(q, k=self.k, sigma=self.sigma, kernel=self.kernel, backend=self.backend))
        return out

    def _check_clients(self, n: int) -> None:
        if n != self.n_clients:
            raise ValueError(f"expected data for {self.n_clients} clients, got {n}.")

    def predict_proba_features(self, features: ClientFeatures) -> list[np.ndarray]:
        """Per-client interpolated probabilities (3.33) from precomputed features."""
        return [interpolate(q, g, float(lam)) for q, g, lam in
                zip(self.knn_proba(features), features.proba, self.lambdas)]

    def predict_proba(self, data: ClientData) -> Tensor:
        """Interpolated probabilities of every client's samples, padded: shape (K, n_max, C)."""
        self._check_clients(data.n_clients)
        feats = client_features(self.model, self.params, data)
        probs = self.predict_proba_features(feats)
        c = self.datastores[0].n_classes
        out = torch.zeros((data.n_clients, data.x.shape[1], c), dtype=torch.float64)
        out[..., 0] = 1.0  # padding: any probability vector
        for t, p in enumerate(probs):
            out[t, : len(p)] = torch.from_numpy(p)
        return out

    def predict(self, data: ClientData) -> Tensor:
        """Predicted labels (K, n_max) (padding entries are meaningless)."""
        return self.predict_proba(data).argmax(-1)

    def evaluate(self, data: ClientData, prefix: str = "test_") -> dict[str, np.ndarray]:
        """Per-client ``{prefix}loss`` (log-loss) and ``{prefix}accuracy`` of the personalised predictors."""
        return metrics_from_proba(self.predict_proba(data), data, prefix)

    def memory_bytes(self, include_model: bool = True) -> np.ndarray:
        """Client memory: datastore (float32 keys + int64 labels) plus, optionally, the global model (float32)."""
        model_bytes = sum(int(v.numel()) * 4 for v in self.params.values()) if include_model else 0
        return np.array([s.nbytes + model_bytes for s in self.datastores], dtype=np.int64)


def _select(val: ClientFeatures, datastores: list, *, k, sigma, kernel, backend, grid, tie,
            selection) -> np.ndarray:
    """λ per client (or shared) on validation features; clients with empty stores get λ = 0."""
    q_val = []
    for store, q in zip(datastores, val.keys):
        if len(store) == 0 or len(q) == 0:
            q_val.append(np.zeros((len(q), store.n_classes)))
        else:
            q_val.append(store.proba(q, k=k, sigma=sigma, kernel=kernel, backend=backend))
    empty = np.array([len(s) == 0 for s in datastores])
    if selection == "shared":
        usable = [t for t in range(len(datastores)) if not empty[t]]
        if not usable:
            return np.zeros(len(datastores))
        lam = select_lambda(np.concatenate([q_val[t] for t in usable]), np.concatenate([val.proba[t] for t in usable]),
                            np.concatenate([val.labels[t] for t in usable]), grid, tie=tie)
        return np.where(empty, 0.0, lam)
    return np.array([0.0 if empty[t] else select_lambda(q_val[t], val.proba[t], val.labels[t], grid, tie=tie)
                     for t in range(len(datastores))])


LAMBDA_SELECTIONS = ("client", "shared")
"""How :func:`personalize` selects λ: one per client on its validation set, or one shared on the pooled sets."""


def personalize(model: Model, params: Params, datastore: ClientData, *, validation: ClientData | None = None,
                lam=None, k: int = 10, sigma: float = 1.0, kernel: str = "exp_dist", capacity: float = 1.0,
                lambda_grid: Sequence[float] = LAMBDA_GRID, lambda_selection: str = "client", tie: str = "smallest",
                include_validation: bool = False, seed: int = 0, backend: str = "torch") -> KNNPerModel:
    r"""Build every client's datastore with the global model and choose :math:`\lambda_t` (Algorithm 12).

    Works the same for clients seen at training and for new clients: only the (frozen) global model is
    needed.

    Parameters
    ----------
    model : MLP, SmallCNN or a paper model (:data:`FEATURES`)
    params : dict of Tensor
        Global model :math:`h_S` (unstacked).
    datastore : ClientData
        Each client's local samples that go into its datastore (3.29).
    validation : ClientData, optional
        Each client's validation samples, used to select :math:`\lambda_t` when ``lam`` is None.
    lam : float in [0, 1], array (K,), or None
        Fixed interpolation weight(s); ``None`` selects them on ``validation`` from ``lambda_grid``.
    k : int >= 1
        Neighbours (thesis: 10).
    sigma : float > 0
        Length scale of the distance (3.40).
    kernel : {"exp_dist", "exp_sqdist_over_dim"}
    capacity : float in [0, 1]
        Fraction of the local samples kept in the datastore (random subset). With capacity 0 the
        datastores are empty and :math:`\lambda_t = 0`: the global model.
    lambda_grid : sequence of floats in [0, 1]
    lambda_selection : {"client", "shared"}
        One :math:`\lambda_t` per client on its own validation set (thesis), or one shared value chosen
        on the pooled validation sets (less noisy with tiny validation sets).
    tie : {"smallest", "largest"}
        Tie rule of :func:`select_lambda`.
    include_validation : bool
        After selecting :math:`\lambda`, add the validation samples to the datastores (the thesis
        retrains on train ∪ validation).
    seed : int
        Draw of the capacity subsets.
    backend : {"torch", "sklearn"}

    Returns
    -------
    KNNPerModel

    Raises
    ------
    ValueError
        For ``k < 1``, ``lam`` or ``capacity`` outside [0, 1], a client with an empty datastore and
        :math:`\lambda > 0`, or ``lam=None`` without ``validation``.
    """
    k = check_int("k", k, low=1)
    sigma = check_real("sigma", sigma, low=0, low_open=True)
    check_choice("kernel", kernel, KERNELS)
    capacity = check_real("capacity", capacity, low=0, high=1)
    check_choice("lambda_selection", lambda_selection, LAMBDA_SELECTIONS)
    check_choice("tie", tie, TIE_RULES)
    check_choice("backend", backend, KNN_BACKENDS)
    check_int("seed", seed, low=0)
    check_type("datastore", datastore, ClientData)
    check_type("validation", validation, ClientData, optional=True)
    include_validation = check_bool("include_validation", include_validation)
    check_grid("lambda_grid", lambda_grid)
    if lam is None and validation is None:
        raise ValueError("give either lam (fixed interpolation weight) or validation data to select it on.")
    if validation is not None and validation.n_clients != datastore.n_clients:
        raise ValueError(f"validation must have the {datastore.n_clients} clients of datastore, got "
                         f"{validation.n_clients}.")
    if lam is not None:
        lam_arr = np.full(datastore.n_clients, _lam("lam", lam)) if np.ndim(lam) == 0 else \
            check_array("lam", lam, ndim=1, shape=(datastore.n_clients,))
        if np.any((lam_arr < 0) | (lam_arr > 1)):
            raise ValueError(f"lam must lie in [0, 1], got values in [{lam_arr.min()}, {lam_arr.max()}].")
    feats = client_features(model, params, datastore)
    stores = build_datastores(feats, capacity=capacity, seed=seed)
    info: dict = {"capacity": capacity, "lambda_selection": "fixed" if lam is not None else lambda_selection}
    if lam is None:
        val = client_features(model, params, validation)
        lam_arr = _select(val, stores, k=k, sigma=sigma, kernel=kernel, backend=backend,
                          grid=lambda_grid, tie=tie, selection=lambda_selection)
        if include_validation:
            stores = build_datastores(feats.concat(val), capacity=capacity, seed=seed)
            lam_arr = np.where([len(s) == 0 for s in stores], 0.0, lam_arr)
    elif include_validation:
        if validation is None:
            raise ValueError("include_validation=True needs validation data.")
        stores = build_datastores(feats.concat(client_features(model, params, validation)), capacity=capacity,
                                  seed=seed)
    return KNNPerModel(model, {kk: v.detach().clone() for kk, v in params.items()}, tuple(stores),
                       np.asarray(lam_arr, dtype=float), k, sigma, kernel, backend, info)


def check_grid(name: str, values) -> np.ndarray:
    """A non-empty 1-D grid of numbers in [0, 1] (capacities or interpolation weights)."""
    arr = check_array(name, values, ndim=1)
    if arr.size == 0 or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must be a non-empty sequence of numbers in [0, 1], got {list(arr)}.")
    return arr


def accuracy_grid(store: ClientFeatures, query: ClientFeatures, *, capacities: Sequence[float],
                  lambdas: Sequence[float], k: int = 10, sigma: float = 1.0, kernel: str = "exp_dist", seed: int = 0,
                  backend: str = "torch") -> np.ndarray:
    r"""Per-client accuracy of :math:`h_{t,\lambda}` over a grid of capacities and (shared) :math:`\lambda`.

    Features are computed once; for each capacity the datastores are random subsets (nested across
    capacities, :func:`build_datastores`), the kNN distributions of the queries are computed once and
    every :math:`\lambda` is a cheap linear combination. A client whose datastore is empty at some
    capacity predicts with the global model for every :math:`\lambda` (the capacity-0 fallback).

    Parameters
    ----------
    store : ClientFeatures
        Samples that may enter the datastores.
    query : ClientFeatures
        Evaluation samples of the same clients.
    capacities, lambdas : sequences of floats in [0, 1]
    k, sigma, kernel, seed, backend :
        See :func:`personalize`.

    Returns
    -------
    np.ndarray (len(capacities), len(lambdas), K)
        Accuracy of each client (NaN for clients without queries).
    """
    caps, lams = check_grid("capacities", capacities), check_grid("lambdas", lambdas)
    check_type("store", store, ClientFeatures)
    check_type("query", query, ClientFeatures)
    check_real("sigma", sigma, low=0, low_open=True)
    check_choice("kernel", kernel, KERNELS)
    check_choice("backend", backend, KNN_BACKENDS)
    if store.n_clients != query.n_clients:
        raise ValueError(f"store and query must have the same clients, got {store.n_clients} and {query.n_clients}.")
    k = check_int("k", k, low=1)
    out = np.full((len(caps), len(lams), store.n_clients), np.nan)
    for i, c in enumerate(caps):
        stores = build_datastores(store, capacity=float(c), seed=seed)
        for t, (ds, q, g, y) in enumerate(zip(stores, query.keys, query.proba, query.labels)):
            if len(q) == 0:
                continue
            if len(ds) == 0:
                out[i, :, t] = (g.argmax(1) == y).mean()
                continue
            p = ds.proba(q, k=k, sigma=sigma, kernel=kernel, backend=backend)
            out[i, :, t] = lambda_accuracies(p, g, y, lams)
    return out


# ----------------------------------------------------------------------------------------------
# The engine algorithm: FedAvg training, kNN-Per evaluation


class KNNPer(FedAvg):
    r"""kNN-Per on the engine: FedAvg trains :math:`h_S`; evaluation personalises with local datastores.

    ``round`` is FedAvg's (thesis: "any FL algorithm can produce the base model"). ``evaluate`` builds
    each client's datastore from ``data.train`` with the current global model, chooses
    :math:`\lambda_t` (on ``validation`` or fixed ``lam``) and reports the personalised predictors'
    ``train_*``/``test_*`` metrics plus ``test_global_accuracy`` (the global model alone) and ``lambda``
    per client.

    Parameters
    ----------
    model : MLP, SmallCNN or a paper model (:data:`FEATURES`)
    solver : LocalSGD
    validation : ClientData, optional
        Per-client validation samples (same clients as the training data) to select :math:`\lambda_t`.
    lam : float in [0, 1] or None
        Fixed :math:`\lambda` (required when ``validation`` is None).
    k, sigma, kernel, capacity, lambda_grid, lambda_selection, tie, include_validation, knn_backend :
        See :func:`personalize`.
    seed : int
        Draw of the datastore subsets when ``capacity < 1``.
    participation, weights, backend :
        FedAvg's.
    """

    def __init__(self, model: Model, solver: LocalSGD, *, validation: ClientData | None = None, lam=None, k: int = 10,
                 sigma: float = 1.0, kernel: str = "exp_dist", capacity: float = 1.0,
                 lambda_grid: Sequence[float] = LAMBDA_GRID, lambda_selection: str = "client", tie: str = "smallest",
                 include_validation: bool = False, knn_backend: str = "torch", seed: int = 0, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.seed = check_int("seed", seed, low=0)
        embedding_dim(model)
        if lam is None and validation is None:
            raise ValueError("KNNPer needs either validation data (to select lambda) or a fixed lam.")
        if lam is not None:
            _lam("lam", lam)
        if validation is not None and not isinstance(validation, ClientData):
            raise TypeError(f"validation must be a ClientData, got {type(validation).__name__}.")
        self.validation, self.lam = validation, lam
        self.knn = dict(k=check_int("k", k, low=1), sigma=check_real("sigma", sigma, low=0, low_open=True),
                        kernel=check_choice("kernel", kernel, KERNELS),
                        capacity=check_real("capacity", capacity, low=0, high=1),
                        lambda_grid=tuple(check_grid("lambda_grid", lambda_grid).tolist()),
                        lambda_selection=check_choice("lambda_selection", lambda_selection, LAMBDA_SELECTIONS),
                        tie=check_choice("tie", tie, TIE_RULES),
                        include_validation=check_bool("include_validation", include_validation),
                        backend=check_choice("knn_backend", knn_backend, KNN_BACKENDS))

    def personalize(self, state: ServerState, datastore: ClientData, validation: ClientData | None = None,
                    seed: int | None = None) -> KNNPerModel:
        """Personalised predictors of the clients of ``datastore`` with the current global model."""
        val = self.validation if validation is None else validation
        return personalize(self.model, state.params, datastore, validation=val, lam=self.lam,
                           seed=self.seed if seed is None else seed, **self.knn)

    def evaluate(self, state: ServerState, data: FederatedDataset) -> dict[str, np.ndarray]:
        knn = self.personalize(state, data.train)
        out = knn.evaluate(data.train, "train_")
        out.update(knn.evaluate(data.test, "test_"))
        out["test_global_accuracy"] = evaluate_global(self.model, state.params, data.train, data.test)["test_accuracy"]
        out["lambda"] = knn.lambdas.copy()
        return out

    def adapt(self, state: ServerState, new_data: FederatedDataset, *, seed: int,
              validation: ClientData | None = None) -> tuple[KNNPerModel, dict[str, np.ndarray]]:
        r"""Clients unseen at training download :math:`h_S` and build their datastores (no training).

        Returns the personalised predictors and their per-client ``train_*``/``test_*`` metrics ``(K_new,)``;
        ``seed`` draws the datastore subsets when ``capacity < 1``. ``validation`` (the new clients' own
        samples) selects :math:`\lambda_t` unless the model was built with a fixed ``lam``.
        """
        seed = check_int("seed", seed, low=0)
        if validation is None and self.lam is None:
            raise ValueError("new clients need their own validation data to select lambda "
                             "(or construct KNNPer with lam).")
        knn = personalize(self.model, state.params, new_data.train, validation=validation, lam=self.lam, seed=seed,
                          **self.knn)
        out = knn.evaluate(new_data.train, "train_")
        out.update(knn.evaluate(new_data.test, "test_"))
        return knn, out


# ------------------------------------------------------------------------------------ the chapter's methods

for _name, _cls, _label, _options in [
        ("local", Local, "Local", {}), ("fedavg", FedAvg, "FedAvg", {}),
        ("fedavg+", FedAvgPlus, "FedAvg+", {"finetune_epochs": 1.0}), ("clustered", ClusteredFL, "ClusteredFL", {}),
        ("ditto", Ditto, "Ditto", {"lam": 0.1}), ("fedrep", FedRep, "FedRep", {}), ("apfl", APFL, "APFL", {"alpha": 0.5}),
        ("fedem", FedEM, "FedEM", {"n_components": 3}),
        ("knnper", KNNPer, "kNN-Per", {"lambda_selection": "client"}),
        ("knnper_shared", KNNPer, "kNN-Per (shared λ)", {"lambda_selection": "shared"})]:
    METHODS.register(_name, _cls, chapter="knnper", label=_label, **_options)

PRESETS = METHODS.presets("knnper")
"""The methods compared in the chapter by short name (kNN-Per's two variants are built on FedAvg's model by
:func:`fedlab.knnper.experiments.compare_methods`)."""


# ------------------------------------------------------------------------------------ cost and memory (§3.7)


def param_count(model: Model) -> int:
    """The number of scalar parameters of one client's ``model``."""
    return int(sum(int(np.prod(shape)) for shape in check_model(model).param_shapes().values()))


def cost_table(method: str, model: Model, n_train, *, n_components: int = 3) -> dict:
    r"""Bytes a client uploads per round and the memory it keeps, for one method (float32 parameters; thesis §3.7).

    FedEM sends and stores :math:`M` models; Ditto and APFL keep a personal model next to the global
    one; FedRep uploads only the body; kNN-Per uploads like FedAvg and stores the model plus a datastore
    of :math:`n_t` keys of dimension :math:`p` (float32) and labels (int64).

    Parameters
    ----------
    method : key of :data:`PRESETS`
    model : Model
    n_train : array-like (K,)
        Local dataset sizes (datastore sizes for kNN-Per).
    n_components : int
        FedEM's :math:`M`.

    Returns
    -------
    dict with ``upload_bytes`` (per round, per participating client) and ``memory_bytes`` (K,) lists.

    >>> cost_table("fedem", MLP(4, (3,), 2), [10])["upload_bytes"] == 3 * cost_table("fedavg", MLP(4, (3,), 2), [10])[
    ...     "upload_bytes"]
    True
    """
    check_choice("method", method, PRESETS)
    check_model(model)
    n_components = check_int("n_components", n_components, low=1)
    n = check_array("n_train", n_train, ndim=1, nonnegative=True)
    if np.any(n != np.round(n)):
        raise ValueError("n_train must hold sample counts (whole numbers).")
    n = n.astype(np.int64)
    params = model.init(torch.Generator().manual_seed(0))
    p_bytes = 4 * param_count(model)
    head = 4 * sum(int(v.numel()) for v in list(params.values())[-2:])
    upload = {"local": 0, "fedem": n_components * p_bytes, "fedrep": p_bytes - head}.get(method, p_bytes)
    if method == "fedem":
        memory = np.full(len(n), n_components * p_bytes + 8 * n_components)
    elif method in ("ditto", "apfl"):
        memory = np.full(len(n), 2 * p_bytes)
    elif method.startswith("knnper"):
        memory = p_bytes + n * (4 * embedding_dim(model) + 8)
    else:
        memory = np.full(len(n), p_bytes)
    return {"upload_bytes": int(upload), "memory_bytes": memory.astype(int).tolist()}
