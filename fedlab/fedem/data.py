r"""Federated data sets with a mixture structure (FedEM's mixture assumption, thesis §3.5.1).

Every client :math:`t` draws each of its samples from one of :math:`M` shared latent distributions
:math:`\tilde{\mathcal D}_m`, chosen with the client's own weights :math:`\pi^*_t \in \Delta^M`
(Assumption 8, eq. (3.2)): :math:`z \sim \mathcal M(\pi^*_t)`, :math:`(x, y) \mid z = m \sim \tilde{\mathcal D}_m`.

* :func:`make_synthetic_mixture`: the synthetic benchmark of the FedEM paper (mixture of logistic
  models with a shared uniform input marginal, personalization spec §10.1), with the reference
  repository's label-overwrite bug available as an explicit option;
* :func:`make_digits_mixture`: scikit-learn's digits split so that clients draw from ``M`` latent
  groups with Dirichlet weights (label permutations: concept shift with a shared :math:`p(x)`, or
  disjoint label groups: label shift).

Both return a :class:`MixtureDataset` holding train/test :class:`ClientArrays`, the true weights
:math:`\Pi^*` and the latent component of every sample. The notebook's configurations (:data:`SYNTHETIC_SMALL`,
:data:`SYNTHETIC_PAPER`, :data:`DIGITS_MIXTURE`) are chosen by name with :func:`make_dataset`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_simplex, check_type
from fedlab.data.digits import load_digits_arrays
from fedlab.data.partition import ClientArrays

__all__ = [
    "MixtureDataset",
    "make_synthetic_mixture",
    "make_digits_mixture",
    "mixture_client_sizes",
    "official_buggy_labels",
    "LABEL_MODES",
    "DIGITS_MIXTURE_MODES",
    "SYNTHETIC_SMALL",
    "SYNTHETIC_PAPER",
    "DIGITS_MIXTURE",
    "DATASETS",
    "make_dataset",
]

LABEL_MODES = ("round", "bernoulli")
DIGITS_MIXTURE_MODES = ("permutation", "label_groups")


@dataclass(frozen=True)
class MixtureDataset:
    """Train and test samples of the same clients, with the mixture ground truth.

    Attributes
    ----------
    train, test : ClientArrays
        Per-client samples; ``train.xs[t]`` has shape (n_t, d).
    pi : np.ndarray, shape (T, M)
        True mixture weights :math:`\\Pi^*` (rows in the simplex).
    z_train, z_test : list of np.ndarray
        Latent component of every sample (``-1`` where the buggy generator left a constant label).
    meta : dict
        Generator-specific ground truth (``theta`` (M, d) for the synthetic data, ``permutations`` or
        ``groups`` for digits) and the generator's arguments.
    """

    train: ClientArrays
    test: ClientArrays
    pi: np.ndarray
    z_train: list
    z_test: list
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_type("train", self.train, ClientArrays)
        check_type("test", self.test, ClientArrays)
        t = self.train.n_clients
        if self.test.n_clients != t:
            raise ValueError(f"train and test must hold the same clients, got {t} and {self.test.n_clients}.")
        check_simplex("pi", self.pi, ndim=2, shape=(t, None))
        for name in ("z_train", "z_test"):
            z = check_type(name, getattr(self, name), list)
            sizes = (self.train if name == "z_train" else self.test).sizes
            if len(z) != t or any(np.shape(zc) != (n,) for zc, n in zip(z, sizes)):
                raise ValueError(f"{name} must hold the latent component of every sample of the {t} clients.")
        check_type("meta", self.meta, dict)

    @property
    def n_clients(self) -> int:
        return self.train.n_clients

    @property
    def n_components(self) -> int:
        return int(self.pi.shape[1])

    def subset(self, clients: Sequence[int]) -> "MixtureDataset":
        """The same data restricted to ``clients`` (in that order), e.g. seen vs unseen clients."""
        idx = np.asarray(clients, dtype=np.int64)
        if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= self.n_clients:
            raise ValueError(f"clients must be a non-empty list of indices in [0, {self.n_clients}), got {clients!r}.")

        def take(arrays: ClientArrays) -> ClientArrays:
            return ClientArrays([arrays.xs[i] for i in idx], [arrays.ys[i] for i in idx], arrays.n_classes,
                                arrays.meta)

        return MixtureDataset(take(self.train), take(self.test), self.pi[idx], [self.z_train[i] for i in idx],
                              [self.z_test[i] for i in idx], self.meta)

    def split_clients(self, train_fraction: float) -> tuple["MixtureDataset", "MixtureDataset"]:
        """First ``floor(train_fraction * T)`` clients (seen in training) and the rest (unseen, join later).

        This is the reference code's ``--train_tasks_frac`` protocol (thesis Table 3.3: 80 % / 20 %).
        """
        frac = check_real("train_fraction", train_fraction, low=0, high=1, low_open=True, high_open=True)
        n_seen = int(np.floor(frac * self.n_clients))
        if n_seen < 1 or n_seen >= self.n_clients:
            raise ValueError(f"train_fraction={frac} leaves no client on one side (T = {self.n_clients}).")
        return self.subset(range(n_seen)), self.subset(range(n_seen, self.n_clients))

    def federated(self):
        """The engine's :class:`~fedlab.engine.FederatedDataset` (float32 inputs, int64 labels)."""
        from fedlab.engine import ClientData, FederatedDataset

        return FederatedDataset(ClientData.from_arrays(self.train.xs, self.train.ys),
                                ClientData.from_arrays(self.test.xs, self.test.ys, allow_empty=True),
                                self.train.n_classes)


def mixture_client_sizes(n_clients: int, *, n_min: int = 50, n_max: int = 1000, rng=None) -> np.ndarray:
    r"""Local training sizes of the FedEM synthetic data: :math:`n_t = \min(\lfloor \mathrm{LogN}(4, 2)\rfloor + n_{min}, n_{max})`.

    Parameters
    ----------
    n_clients : int
    n_min, n_max : int
        Offset (50) and cap (1000) of the reference code, ``1 <= n_min <= n_max``.
    rng : numpy Generator, int or None

    Returns
    -------
    np.ndarray of int64, shape (n_clients,)
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    n_min = check_int("n_min", n_min, low=1)
    n_max = check_int("n_max", n_max, low=n_min)
    rng = as_numpy_rng(rng)
    return np.minimum(rng.lognormal(4.0, 2.0, size=n_clients).astype(np.int64) + n_min, n_max)


def official_buggy_labels(labels_by_component: Sequence[np.ndarray], counts: Sequence[int], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels as the reference generator writes them (``current_index`` never advances).

    Component ``m`` writes its ``counts[m]`` labels into positions ``[0, counts[m])``; later components
    overwrite earlier ones and positions ``>= max(counts)`` keep the initial label 0.

    Parameters
    ----------
    labels_by_component : list of arrays
        ``labels_by_component[m]`` has length ``counts[m]``: the labels component ``m`` computed.
    counts : sequence of int
        Multinomial counts :math:`(N_1, \\dots, N_M)`, summing to ``n``.
    n : int
        Number of samples.

    Returns
    -------
    y : np.ndarray of int64, shape (n,)
    owner : np.ndarray of int64, shape (n,)
        Component whose label survived at each position, ``-1`` for the constant-0 tail.
    """
    n = check_int("n", n, low=0)
    counts = check_array("counts", counts, ndim=1, nonnegative=True)
    if np.any(counts != np.round(counts)) or counts.sum() != n:
        raise ValueError(f"counts must be whole numbers summing to n={n}, got {counts.tolist()}.")
    counts = counts.astype(np.int64)
    if not isinstance(labels_by_component, (list, tuple)) or len(labels_by_component) != len(counts):
        raise TypeError(f"labels_by_component must be a list of {len(counts)} label arrays (one per count).")
    for m, (labels, c) in enumerate(zip(labels_by_component, counts)):
        arr = np.asarray(labels)
        if arr.dtype.kind not in "iu" or arr.shape != (c,):
            raise ValueError(f"labels_by_component[{m}] must hold {c} integer labels, got {arr.dtype} {arr.shape}.")
    y = np.zeros(n, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)
    for m, (labels, c) in enumerate(zip(labels_by_component, counts)):
        y[:c] = labels
        owner[:c] = m
    return y, owner


def _mixture_labels(x: np.ndarray, z: np.ndarray, theta: np.ndarray, noise_level: float, label_mode: str,
                    rng: np.random.Generator) -> np.ndarray:
    logit = np.einsum("nd,nd->n", x, theta[z]) + noise_level * rng.standard_normal(len(x))
    if label_mode == "round":
        return (logit > 0).astype(np.int64)  # round(sigmoid(l)) = 1{l > 0} (ties have probability 0)
    return (rng.random(len(x)) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)


def _synthetic_client(n: int, pi: np.ndarray, theta: np.ndarray, noise_level: float, label_mode: str, bug: bool,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = rng.multinomial(n, pi)
    x = rng.uniform(-1.0, 1.0, size=(n, theta.shape[1]))
    if bug:  # every component labels the leading slice x[0:N_m] (the reference code's indexing)
        per_comp = [_mixture_labels(x[:c], np.full(c, m), theta, noise_level, label_mode, rng)
                    for m, c in enumerate(counts)]
        y, z = official_buggy_labels(per_comp, counts, n)
    else:
        z = np.repeat(np.arange(len(pi)), counts)
        y = _mixture_labels(x, z, theta, noise_level, label_mode, rng)
    perm = rng.permutation(n)
    return x[perm].astype(np.float32), y[perm], z[perm]


def make_synthetic_mixture(n_clients: int = 300, *, n_components: int = 3, dim: int = 150, alpha: float = 0.4,
                           noise_level: float = 0.1, n_min: int = 50, n_max: int = 1000, n_test: int = 5000,
                           label_mode: str = "round", replicate_official_bug: bool = False,
                           one_hot_weights: bool = False, rng=None) -> MixtureDataset:
    r"""The FedEM synthetic benchmark: a mixture of ``M`` logistic models with a shared input marginal.

    Recipe (personalization spec §10.1; the thesis only says the data verify Assumptions 8–10):

    1. sizes :math:`n_t = \min(\lfloor \mathrm{LogN}(4, 2) \rfloor + n_{min}, n_{max})`;
    2. weights :math:`\pi^*_t \sim \mathrm{Dir}(\alpha 1_M)` (or one-hot on a uniform component when
       ``one_hot_weights``: the clustering variant of App. E.12);
    3. components :math:`\theta_m \sim U([-1, 1]^d)` (no bias);
    4. for each client and each set (train with :math:`n_t` samples, test with ``n_test``): counts
       :math:`(N_1..N_M) \sim \mathcal M(N, \pi^*_t)`, inputs :math:`x \sim U([-1, 1]^d)`, and for a sample of
       component :math:`m`, :math:`y = \mathrm{round}(\sigma(x^\top\theta_m + \varepsilon))`,
       :math:`\varepsilon \sim \mathcal N(0, \text{noise\_level}^2)` (``label_mode="bernoulli"`` draws
       :math:`y \sim \mathrm{Bernoulli}(\sigma(\cdot))` instead); then shuffle.

    ``replicate_official_bug=True`` reproduces the reference repository
    (``omarfoq/FedEM``, ``data/synthetic/generate_data.py``), whose loop never advances its write
    index: every component labels the same leading slice ``[0, N_m)``, later components overwrite
    earlier ones and every position beyond :math:`\max_m N_m` keeps label 0 whatever ``x`` is. Those
    labels are not explained by any mixture component, which caps the achievable accuracy; the
    notebook uses this flag to explain the paper's Synthetic numbers (Table 3.2). Off by default.

    Exact paper draws are not reproduced (the reference code seeds the legacy ``np.random``).

    Parameters
    ----------
    n_clients : int
        Number of clients ``T`` (300 in the paper).
    n_components : int
        Number ``M`` of latent components (3).
    dim : int
        Input dimension ``d`` (150).
    alpha : float
        Dirichlet concentration of the weights (0.4), ``> 0``.
    noise_level : float
        Standard deviation of the logit noise (0.1), ``>= 0``.
    n_min, n_max : int
        Offset and cap of the training sizes (50, 1000).
    n_test : int
        Test samples per client (5000 in the paper).
    label_mode : {"round", "bernoulli"}
    replicate_official_bug : bool
        Reproduce the label-overwrite bug of the reference generator.
    one_hot_weights : bool
        One-hot :math:`\pi^*_t` (clustered data, App. E.12).
    rng : numpy Generator, int or None

    Returns
    -------
    MixtureDataset
        Binary labels; ``meta`` holds ``theta`` (M, d) and ``sizes`` (T,). ``z_*`` is ``-1`` on the
        constant-0 positions of the buggy generator.

    Examples
    --------
    >>> data = make_synthetic_mixture(10, dim=5, n_min=10, n_max=20, n_test=10, rng=0)
    >>> data.n_clients, data.n_components, data.pi.shape
    (10, 3, (10, 3))
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    m = check_int("n_components", n_components, low=1)
    dim = check_int("dim", dim, low=1)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    noise_level = check_real("noise_level", noise_level, low=0)
    n_test = check_int("n_test", n_test, low=0)
    label_mode = check_choice("label_mode", label_mode, LABEL_MODES)
    replicate_official_bug = check_bool("replicate_official_bug", replicate_official_bug)
    one_hot_weights = check_bool("one_hot_weights", one_hot_weights)
    rng = as_numpy_rng(rng)
    sizes = mixture_client_sizes(n_clients, n_min=n_min, n_max=n_max, rng=rng)
    if one_hot_weights:
        pi = np.eye(m)[rng.integers(m, size=n_clients)]
    else:
        pi = rng.dirichlet(np.full(m, alpha), size=n_clients)
        pi = pi / pi.sum(axis=1, keepdims=True)
    theta = rng.uniform(-1.0, 1.0, size=(m, dim))
    sets = {"train": ([], [], []), "test": ([], [], [])}
    for t in range(n_clients):
        for name, n in (("train", int(sizes[t])), ("test", n_test)):
            x, y, z = _synthetic_client(n, pi[t], theta, noise_level, label_mode, bool(replicate_official_bug), rng)
            for lst, arr in zip(sets[name], (x, y, z)):
                lst.append(arr)
    meta = {"theta": theta, "sizes": sizes, "generator": "synthetic_mixture",
            "replicate_official_bug": bool(replicate_official_bug), "label_mode": label_mode, "alpha": alpha}
    train = ClientArrays(sets["train"][0], sets["train"][1], 2, meta)
    test = ClientArrays(sets["test"][0], sets["test"][1], 2, meta)
    return MixtureDataset(train, test, pi, sets["train"][2], sets["test"][2], meta)


def _digit_permutations(m: int, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Identity for group 0, then random label permutations (distinct from each other)."""
    perms = [np.arange(n_classes)]
    while len(perms) < m:
        p = rng.permutation(n_classes)
        if not any(np.array_equal(p, q) for q in perms):
            perms.append(p)
    return np.stack(perms)


def make_digits_mixture(n_clients: int = 30, *, n_components: int = 3, alpha: float = 0.4,
                        mode: str = "permutation", test_fraction: float = 0.25, min_size: int = 10,
                        max_tries: int = 1000, rng=None) -> MixtureDataset:
    r"""scikit-learn's digits split over clients that draw from ``M`` latent groups with Dirichlet weights.

    Client :math:`t` gets :math:`\pi^*_t \sim \mathrm{Dir}(\alpha 1_M)`. Two kinds of latent groups:

    * ``"permutation"`` (concept shift, Assumptions 8–9 hold): every image goes to a uniformly random
      client and draws :math:`z \sim \pi^*_t`; group :math:`m` relabels the digit with a fixed permutation
      :math:`\sigma_m` of the 10 classes (:math:`\sigma_0` = identity), so :math:`p_m(x)` is shared and
      :math:`p_m(y|x)` differs: one global model cannot fit every group.
    * ``"label_groups"`` (label shift, as the reference code's CIFAR-10 split): the 10 classes are cut
      into ``M`` random groups; an image of group :math:`g` goes to client :math:`t` with probability
      :math:`\propto \pi^*_{tg}`; labels are unchanged.

    Each client's samples are then split at random into train and test (``test_fraction``). The whole
    draw is repeated until every client holds at least ``min_size`` samples.

    Parameters
    ----------
    n_clients : int
    n_components : int
        Number ``M`` of latent groups (``<= 10`` for ``"label_groups"``).
    alpha : float
        Dirichlet concentration, ``> 0``.
    mode : {"permutation", "label_groups"}
    test_fraction : float in [0, 1)
    min_size : int
        Minimum samples per client (>= 2 so that train and test are both non-empty when
        ``test_fraction > 0``).
    max_tries : int
    rng : numpy Generator, int or None

    Returns
    -------
    MixtureDataset
        ``xs[t]`` float32 (n_t, 64) in [0, 1], labels in 0..9; ``meta`` holds ``permutations`` (M, 10)
        or ``groups`` (10,) (group of each class).
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    m = check_int("n_components", n_components, low=1)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    mode = check_choice("mode", mode, DIGITS_MIXTURE_MODES)
    test_fraction = check_real("test_fraction", test_fraction, low=0, high=1, high_open=True)
    max_tries = check_int("max_tries", max_tries, low=1)
    x, y = load_digits_arrays()
    min_size = check_int("min_size", min_size, low=1, high=len(y) // n_clients)
    if mode == "label_groups" and m > 10:
        raise ValueError(f"n_components must be <= 10 for mode='label_groups', got {m}.")
    rng = as_numpy_rng(rng)
    for _ in range(max_tries):
        pi = rng.dirichlet(np.full(m, alpha), size=n_clients)
        pi = pi / pi.sum(axis=1, keepdims=True)
        if mode == "permutation":
            client = rng.integers(n_clients, size=len(y))
            u = rng.random(len(y))[:, None]
            z = np.minimum((u > np.cumsum(pi[client], axis=1)).sum(1), m - 1)
        else:
            groups = np.zeros(10, dtype=np.int64)
            for g, members in enumerate(np.array_split(rng.permutation(10), m)):
                groups[members] = g
            z = groups[y]
            p = pi[:, z].T  # (n, T): p(client | group of the sample)
            p = p / p.sum(axis=1, keepdims=True)
            client = np.minimum((rng.random(len(y))[:, None] > np.cumsum(p, axis=1)).sum(1), n_clients - 1)
        if np.bincount(client, minlength=n_clients).min() >= min_size:
            break
    else:
        raise ValueError(f"make_digits_mixture: no draw in max_tries={max_tries} gave every client >= "
                         f"min_size={min_size} samples; lower n_clients or min_size, or raise alpha.")
    meta: dict[str, Any] = {"generator": "digits_mixture", "mode": mode, "alpha": alpha}
    if mode == "permutation":
        perms = _digit_permutations(m, 10, rng)
        labels = perms[z, y]
        meta["permutations"] = perms
    else:
        labels = y.copy()
        meta["groups"] = groups
    tr, te = ([], [], []), ([], [], [])
    for t in range(n_clients):
        idx = rng.permutation(np.flatnonzero(client == t))
        n_te = min(int(np.floor(test_fraction * len(idx) + 0.5)), len(idx) - 1)
        for lst, arr in zip(te, (x[idx[:n_te]], labels[idx[:n_te]], z[idx[:n_te]])):
            lst.append(arr)
        for lst, arr in zip(tr, (x[idx[n_te:]], labels[idx[n_te:]], z[idx[n_te:]])):
            lst.append(arr)
    train = ClientArrays(tr[0], tr[1], 10, meta)
    test = ClientArrays(te[0], te[1], 10, meta)
    return MixtureDataset(train, test, pi, tr[2], te[2], meta)


# ----------------------------------------------------------------------------------------------
# The notebook's configurations, by name

SYNTHETIC_SMALL = {"n_clients": 50, "n_components": 3, "dim": 20, "alpha": 0.4, "noise_level": 0.1, "n_min": 50,
                   "n_max": 300, "n_test": 500}
"""CPU-size synthetic mixture (personalization spec §10.2)."""

SYNTHETIC_PAPER = {"n_clients": 300, "n_components": 3, "dim": 150, "alpha": 0.4, "noise_level": 0.1, "n_min": 50,
                   "n_max": 1000, "n_test": 500}
"""The paper's synthetic configuration (T = 300, d = 150), with 500 instead of 5000 test samples per client."""

DIGITS_MIXTURE = {"n_clients": 30, "n_components": 3, "alpha": 0.4, "mode": "permutation", "test_fraction": 0.25}
"""Digits with three latent label permutations (concept shift)."""


def _synthetic(seed: int, **kwargs) -> MixtureDataset:
    return make_synthetic_mixture(**{**SYNTHETIC_SMALL, **kwargs}, rng=seed)


def _synthetic_bug(seed: int, **kwargs) -> MixtureDataset:
    return make_synthetic_mixture(**{**SYNTHETIC_SMALL, **kwargs, "replicate_official_bug": True}, rng=seed)


def _digits(seed: int, **kwargs) -> MixtureDataset:
    return make_digits_mixture(**{**DIGITS_MIXTURE, **kwargs}, rng=seed)


DATASETS: dict[str, Callable[..., MixtureDataset]] = {
    "synthetic": _synthetic,
    "synthetic_bug": _synthetic_bug,
    "digits": _digits,
}
"""Data sets by name: ``DATASETS[name](seed, **overrides) -> MixtureDataset`` (``synthetic_bug``: the reference
generator's label-overwrite bug, the generator of the thesis' Synthetic row)."""


def make_dataset(dataset: str, seed: int, **overrides: Any) -> MixtureDataset:
    """``DATASETS[dataset](seed, **overrides)``: the data of a seed (the data change with the seed)."""
    check_choice("dataset", dataset, DATASETS)
    generator = make_digits_mixture if dataset == "digits" else make_synthetic_mixture
    allowed = set(inspect.signature(generator).parameters) - {"rng"}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise TypeError(f"unknown data options (data_kwargs) {unknown}; the {dataset} data take {sorted(allowed)}.")
    return DATASETS[dataset](check_int("seed", seed, low=0), **overrides)
