r"""Per-client containers and partitioners that split a labelled dataset across clients.

Every partitioner takes a label vector ``y`` and returns a :class:`Partition`, a list of index
arrays (one per client) in which every sample appears exactly once. The schemes are those the
thesis uses to simulate statistical heterogeneity (thesis §1.6.2, §3.5.6, §3.6.3):

* ``"iid"``: a uniform random split into near-equal parts;
* ``"dirichlet"``: per-class proportions :math:`p_y \sim \mathrm{Dir}(\alpha 1_K)` across the
  :math:`K` clients [Wan+20a; HQB19];
* ``"pathological"``: each client holds samples of ``classes_per_client`` classes [McM+17];
* ``"pachinko"``: a two-level Dirichlet over coarse then fine labels [LM06; Red+21].
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_type

__all__ = [
    "ClientArrays",
    "Partition",
    "partition_iid",
    "partition_dirichlet",
    "partition_pathological",
    "partition_pachinko",
    "PARTITIONERS",
    "partition",
    "train_test_split_clients",
    "label_skew",
]


def _check_labels(name: str, y: Any) -> np.ndarray:
    """Return ``y`` as a non-empty 1-D int64 array of non-negative labels."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty.")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer labels, got dtype {arr.dtype}.")
    if arr.min() < 0:
        raise ValueError(f"{name} must hold non-negative labels, got minimum {arr.min()}.")
    return arr.astype(np.int64, copy=False)


def _histograms(label_arrays: Sequence[np.ndarray], n_classes: int) -> np.ndarray:
    """Stack ``bincount``s of several label arrays into a (K, n_classes) count matrix."""
    out = np.zeros((len(label_arrays), n_classes), dtype=np.int64)
    for k, labels in enumerate(label_arrays):
        if labels.size and labels.max() >= n_classes:
            raise ValueError(f"labels of client {k} reach {labels.max()}, expected < n_classes={n_classes}.")
        out[k] = np.bincount(labels, minlength=n_classes)
    return out


def _check_inputs(name: str, x: Any) -> np.ndarray:
    """One client's inputs: an array of numbers with a sample axis, finite when it holds floats."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf" or arr.ndim < 1:
        raise TypeError(f"{name} must be an array of numbers with a sample axis, got dtype {arr.dtype} and shape "
                        f"{arr.shape}.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values.")
    return arr


@dataclass
class ClientArrays:
    """Per-client arrays ``xs[k]`` (n_k, ...) and integer labels ``ys[k]`` (n_k,).

    Parameters
    ----------
    xs, ys : list of np.ndarray
        Inputs and labels of each client; ``len(xs[k]) == len(ys[k])``.
    n_classes : int
        Number of classes; labels lie in ``[0, n_classes)``.
    meta : dict
        Generator ground truth (true parameters, mixture weights, ...), shared by splits.
    """

    xs: list[np.ndarray]
    ys: list[np.ndarray]
    n_classes: int
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.n_classes = check_int("n_classes", self.n_classes, low=1)
        check_type("xs", self.xs, (list, tuple))
        check_type("ys", self.ys, (list, tuple))
        check_type("meta", self.meta, dict)
        if len(self.xs) != len(self.ys):
            raise ValueError(f"xs and ys must have one entry per client, got {len(self.xs)} and {len(self.ys)}.")
        self.xs = [_check_inputs(f"xs[{k}]", x) for k, x in enumerate(self.xs)]
        self.ys = [np.asarray(y) for y in self.ys]
        for k, (x, y) in enumerate(zip(self.xs, self.ys)):
            if y.ndim != 1 or len(x) != len(y):
                raise ValueError(f"client {k}: xs[{k}] has {len(x)} rows but ys[{k}] has shape {y.shape}.")
            if y.dtype.kind not in "iu":
                raise TypeError(f"ys[{k}] must hold integer labels, got dtype {y.dtype}.")
            if y.size and (y.min() < 0 or y.max() >= self.n_classes):
                raise ValueError(f"ys[{k}] must lie in [0, {self.n_classes}), got range [{y.min()}, {y.max()}].")

    def __len__(self) -> int:
        return len(self.xs)

    @property
    def n_clients(self) -> int:
        """Number of clients ``K``."""
        return len(self.xs)

    @property
    def sizes(self) -> np.ndarray:
        """Local dataset sizes ``n_k``, shape (K,)."""
        return np.array([len(y) for y in self.ys], dtype=np.int64)

    def label_histograms(self) -> np.ndarray:
        """Label counts per client, shape (K, n_classes); row ``k`` sums to ``n_k``."""
        return _histograms(self.ys, self.n_classes)

    def train_test_split(self, test_fraction: float, *, rng=None) -> tuple[ClientArrays, ClientArrays]:
        """Split every client with :func:`train_test_split_clients`; returns ``(train, test)``."""
        xtr, xte, ytr, yte = train_test_split_clients(self.xs, self.ys, test_fraction, rng=rng)
        return (ClientArrays(xtr, ytr, self.n_classes, self.meta),
                ClientArrays(xte, yte, self.n_classes, self.meta))


@dataclass(frozen=True)
class Partition:
    """Index arrays, one per client, into a dataset of ``n`` samples.

    Parameters
    ----------
    indices : sequence of 1-D integer arrays
        ``indices[k]`` lists the samples held by client ``k``.
    """

    indices: list[np.ndarray]

    def __post_init__(self) -> None:
        arrays = [np.asarray(ix) for ix in check_type("indices", self.indices, (list, tuple))]
        if not arrays:
            raise ValueError("indices must hold one index array per client, got none.")
        for k, ix in enumerate(arrays):
            if ix.ndim != 1 or (ix.size and ix.dtype.kind not in "iu"):
                raise TypeError(f"indices[{k}] must be a 1-D integer array, got shape {ix.shape}, dtype {ix.dtype}.")
            if ix.size and ix.min() < 0:
                raise ValueError(f"indices[{k}] must hold non-negative sample indices, got {ix.min()}.")
        object.__setattr__(self, "indices", [ix.astype(np.int64, copy=False) for ix in arrays])

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, k: int) -> np.ndarray:
        return self.indices[k]

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter(self.indices)

    @property
    def n_clients(self) -> int:
        """Number of clients ``K``."""
        return len(self.indices)

    @property
    def sizes(self) -> np.ndarray:
        """Samples per client, shape (K,)."""
        return np.array([ix.size for ix in self.indices], dtype=np.int64)

    def covers(self, n_samples: int) -> bool:
        """Whether every index in ``range(n_samples)`` appears exactly once."""
        flat = np.concatenate(self.indices) if self.indices else np.zeros(0, np.int64)
        return flat.size == n_samples and np.array_equal(np.sort(flat), np.arange(n_samples))

    def label_histograms(self, y: Any, n_classes: int | None = None) -> np.ndarray:
        """Label counts per client, shape (K, C) with ``C = n_classes`` (default ``max(y) + 1``)."""
        y = _check_labels("y", y)
        n_classes = int(y.max()) + 1 if n_classes is None else check_int("n_classes", n_classes, low=1)
        return _histograms([y[ix] for ix in self.indices], n_classes)

    def take(self, x: Any, y: Any, n_classes: int | None = None) -> ClientArrays:
        """Gather ``x[indices[k]]``, ``y[indices[k]]`` into :class:`ClientArrays`."""
        x, y = np.asarray(x), _check_labels("y", y)
        if len(x) != len(y):
            raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}.")
        n_classes = int(y.max()) + 1 if n_classes is None else check_int("n_classes", n_classes, low=1)
        return ClientArrays([x[ix] for ix in self.indices], [y[ix] for ix in self.indices], n_classes)


def _check_n_clients(n_clients: Any, n_samples: int) -> int:
    return check_int("n_clients", n_clients, low=1, high=n_samples)


def _split_class_indices(groups: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> Partition:
    """Cut the shuffled indices of each group ``g`` into ``counts[g, k]`` samples for client ``k``."""
    parts: list[list[np.ndarray]] = [[] for _ in range(counts.shape[1])]
    for g, row in zip(np.unique(groups), counts):
        idx = rng.permutation(np.flatnonzero(groups == g))
        for k, chunk in enumerate(np.split(idx, np.cumsum(row)[:-1])):
            parts[k].append(chunk)
    return Partition([np.concatenate(p) for p in parts])


def partition_iid(y: Any, n_clients: int, *, rng=None) -> Partition:
    """Shuffle the samples and cut them into ``n_clients`` parts whose sizes differ by at most one.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Labels (only their number is used).
    n_clients : int
        Number of clients ``K``, ``1 <= K <= n``.
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    Partition
    """
    y = _check_labels("y", y)
    n_clients = _check_n_clients(n_clients, y.size)
    perm = as_numpy_rng(rng).permutation(y.size)
    return Partition(np.array_split(perm, n_clients))


def _label_groups(y: np.ndarray, n_groups: int, rng: np.random.Generator) -> np.ndarray:
    """Map labels to ``n_groups`` random groups of near-equal numbers of classes (FedEM's CIFAR-10 split)."""
    classes = np.unique(y)
    n_groups = check_int("n_label_groups", n_groups, low=1, high=classes.size)
    lut = np.zeros(int(y.max()) + 1, dtype=np.int64)
    for g, members in enumerate(np.array_split(rng.permutation(classes), n_groups)):
        lut[members] = g
    return lut[y]


def partition_dirichlet(y: Any, n_clients: int, alpha: float, *, min_size: int = 1, max_tries: int = 1000,
                        n_label_groups: int | None = None, rng=None) -> Partition:
    r"""Dirichlet label partition: class ``y`` is spread over clients with proportions :math:`p_y`.

    For each class :math:`y`, draw :math:`p_y \sim \mathrm{Dir}(\alpha 1_K)` and counts
    :math:`(n_{y,1}, \dots, n_{y,K}) \sim \mathrm{Mult}(n_y, p_y)`; client :math:`k` receives
    :math:`n_{y,k}` random samples of class :math:`y` (thesis §3.6.3, following [Wan+20a]).
    Small :math:`\alpha` gives few classes per client, large :math:`\alpha` approaches iid. The whole
    draw is repeated until every client holds at least ``min_size`` samples.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Labels.
    n_clients : int
        Number of clients ``K``.
    alpha : float
        Dirichlet concentration, ``> 0``.
    min_size : int
        Minimum samples per client (0 allows empty clients).
    max_tries : int
        Draws attempted before giving up with a ``ValueError``.
    n_label_groups : int or None
        If given, classes are first shuffled into this many groups and the Dirichlet split is
        applied per group (the FedEM repository's CIFAR-10 split, 3 groups); ``None`` = per class.
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    Partition
    """
    y = _check_labels("y", y)
    n_clients = _check_n_clients(n_clients, y.size)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    min_size = check_int("min_size", min_size, low=0, high=y.size // n_clients)
    max_tries = check_int("max_tries", max_tries, low=1)
    rng = as_numpy_rng(rng)
    groups = y if n_label_groups is None else _label_groups(y, n_label_groups, rng)
    group_sizes = np.unique(groups, return_counts=True)[1]
    for _ in range(max_tries):
        props = rng.dirichlet(np.full(n_clients, alpha), size=group_sizes.size)
        counts = rng.multinomial(group_sizes, props)
        if counts.sum(axis=0).min() >= min_size:
            return _split_class_indices(groups, counts, rng)
    raise ValueError(f"partition_dirichlet: no draw in max_tries={max_tries} gave every client >= "
                     f"min_size={min_size} samples; increase alpha or max_tries, or lower min_size.")


def partition_pathological(y: Any, n_clients: int, classes_per_client: int, *, rng=None) -> Partition:
    """Pathological split [McM+17]: sort by label, cut class-aligned shards, ``classes_per_client`` per client.

    Classes are laid in a random cyclic order and client ``k`` takes the window of
    ``classes_per_client`` consecutive classes starting at position ``k * classes_per_client``; each
    class is then cut into near-equal shards, one per client holding it. Unlike the fixed-size shards
    of [McM+17], shards never straddle two classes, so every client has at most
    ``classes_per_client`` distinct labels and every class is used.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Labels.
    n_clients : int
        Number of clients ``K``; ``K * classes_per_client`` must be at least the number of classes.
    classes_per_client : int
        Classes per client, between 1 and the number of classes present in ``y``.
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    Partition
    """
    y = _check_labels("y", y)
    n_clients = _check_n_clients(n_clients, y.size)
    classes = np.unique(y)
    k = check_int("classes_per_client", classes_per_client, low=1, high=classes.size)
    if n_clients * k < classes.size:
        raise ValueError(f"n_clients * classes_per_client = {n_clients * k} must be >= the number of "
                         f"classes ({classes.size}), otherwise some samples would be left out.")
    rng = as_numpy_rng(rng)
    order = rng.permutation(classes)
    held = order[(np.arange(n_clients)[:, None] * k + np.arange(k)) % classes.size]
    held = held[rng.permutation(n_clients)]
    parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
    for c in classes:
        holders = np.flatnonzero((held == c).any(axis=1))
        for h, chunk in zip(holders, np.array_split(rng.permutation(np.flatnonzero(y == c)), holders.size)):
            parts[h].append(chunk)
    result = Partition([np.concatenate(p) for p in parts])
    if result.sizes.min() == 0:
        raise ValueError("partition_pathological left a client empty: some class has fewer samples than "
                         "clients holding it; use fewer clients or more classes_per_client.")
    return result


def _capped_multinomial(rng: np.random.Generator, m: int, weights: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Draw ``m`` labels from ``weights`` without exceeding ``capacity``, renormalising over the labels left.

    Equivalent to drawing one label at a time and removing a label once exhausted (FedEM's loop),
    done in a few multinomial batches.
    """
    counts = np.zeros_like(capacity)
    while m > 0:
        room = capacity - counts
        p = np.where(room > 0, weights, 0.0)
        p = p if p.sum() > 0 else (room > 0).astype(float)
        take = np.minimum(rng.multinomial(m, p / p.sum()), room)
        counts += take
        m -= int(take.sum())
    return counts


def partition_pachinko(y: Any, n_clients: int, alpha: float, beta: float, coarse_of_fine: Any, *,
                       rng=None) -> Partition:
    r"""Pachinko allocation [LM06; Red+21]: a Dirichlet over coarse labels, then over fine labels.

    Client :math:`k` draws :math:`\pi_k \sim \mathrm{Dir}(\alpha 1_{C})` over the :math:`C` coarse
    labels and, for each coarse label :math:`c`, :math:`\rho_{k,c} \sim \mathrm{Dir}(\beta 1_{|c|})`
    over its fine labels; each of its samples is a coarse label from :math:`\pi_k`, then a fine label
    from :math:`\rho_{k,c}`, then a random unused sample of that fine label. Exhausted labels are removed
    and the weights renormalised (thesis §3.5.6/§3.6.3; FedEM repository's ``pachinko_allocation_split``).
    Clients get ``n // K`` or ``n // K + 1`` samples so that every sample is used once (FedEM drops the
    remainder).

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Fine labels.
    n_clients : int
        Number of clients ``K``.
    alpha, beta : float
        Coarse- and fine-level concentrations, ``> 0`` (CIFAR-100 in the thesis: 0.4 or 0.3, and 10).
    coarse_of_fine : array-like of int, shape (n_fine,)
        Coarse label of each fine label.
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    Partition
    """
    y = _check_labels("y", y)
    n_clients = _check_n_clients(n_clients, y.size)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    beta = check_real("beta", beta, low=0.0, low_open=True)
    coarse_of_fine = _check_labels("coarse_of_fine", coarse_of_fine)
    if y.max() >= coarse_of_fine.size:
        raise ValueError(f"coarse_of_fine has {coarse_of_fine.size} entries but y holds fine label {y.max()}.")
    rng = as_numpy_rng(rng)
    fine_left = np.bincount(y, minlength=coarse_of_fine.size)
    pools = [rng.permutation(np.flatnonzero(y == f)) for f in range(coarse_of_fine.size)]
    sizes = np.diff(np.linspace(0, y.size, n_clients + 1).astype(np.int64))
    parts = []
    for n_k in rng.permutation(sizes):
        fine_counts = _pachinko_client(rng, int(n_k), alpha, beta, coarse_of_fine, fine_left)
        parts.append(np.concatenate([pools[f][fine_left[f]:fine_left[f] + c] for f, c in enumerate(fine_counts)]))
    return Partition(parts)


def _pachinko_client(rng, n_k, alpha, beta, coarse_of_fine, fine_left) -> np.ndarray:
    """Fine-label counts of one Pachinko client; decrements ``fine_left`` in place."""
    n_coarse = int(coarse_of_fine.max()) + 1
    coarse_left = np.bincount(coarse_of_fine, weights=fine_left, minlength=n_coarse).astype(np.int64)
    coarse_counts = _capped_multinomial(rng, n_k, rng.dirichlet(np.full(n_coarse, alpha)), coarse_left)
    fine_counts = np.zeros_like(fine_left)
    for c in np.flatnonzero(coarse_counts):
        fines = np.flatnonzero(coarse_of_fine == c)
        weights = rng.dirichlet(np.full(fines.size, beta))
        fine_counts[fines] = _capped_multinomial(rng, int(coarse_counts[c]), weights, fine_left[fines])
    fine_left -= fine_counts
    return fine_counts


PARTITIONERS: dict[str, Callable[..., Partition]] = {
    "iid": partition_iid,
    "dirichlet": partition_dirichlet,
    "pathological": partition_pathological,
    "pachinko": partition_pachinko,
}


def partition(y: Any, scheme: str, **kwargs: Any) -> Partition:
    """Dispatch to ``PARTITIONERS[scheme](y, **kwargs)``; see the individual partitioners. An option the scheme
    needs and ``kwargs`` lacks (``alpha`` of ``"dirichlet"``) is named in a TypeError."""
    fn = PARTITIONERS[check_choice("scheme", scheme, PARTITIONERS)]
    missing = [name for name, p in inspect.signature(fn).parameters.items()
               if name != "y" and p.default is p.empty and name not in kwargs]
    if missing:
        raise TypeError(f"scheme {scheme!r} needs the option(s) {', '.join(missing)}, got only {sorted(kwargs)}.")
    return fn(y, **kwargs)


def train_test_split_clients(xs: Sequence[Any], ys: Sequence[Any], test_fraction: float, *,
                             rng=None) -> tuple[list, list, list, list]:
    """Split each client's data at random into train and test parts (not stratified).

    Client ``k`` with ``n_k`` samples puts ``min(round(test_fraction * n_k), n_k - 1)`` of them in
    its test part, so every client keeps at least one training sample.

    Parameters
    ----------
    xs, ys : sequences of arrays
        Per-client inputs (n_k, ...) and targets (n_k, ...); every client must be non-empty.
    test_fraction : float
        Fraction in [0, 1).
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    xs_train, xs_test, ys_train, ys_test : lists of arrays
        In scikit-learn's ``train_test_split`` order.
    """
    test_fraction = check_real("test_fraction", test_fraction, low=0.0, high=1.0, high_open=True)
    check_type("xs", xs, (list, tuple))
    check_type("ys", ys, (list, tuple))
    if len(xs) != len(ys):
        raise ValueError(f"xs and ys must have one entry per client, got {len(xs)} and {len(ys)}.")
    rng = as_numpy_rng(rng)
    out: tuple[list, list, list, list] = ([], [], [], [])
    for k, (x, y) in enumerate(zip(xs, ys)):
        x, y = np.asarray(x), np.asarray(y)
        if len(x) != len(y) or len(x) == 0:
            raise ValueError(f"xs[{k}] and ys[{k}] must hold the same number (>= 1) of samples, got {len(x)} inputs "
                             f"and {len(y)} targets.")
        n_test = min(int(np.floor(test_fraction * len(x) + 0.5)), len(x) - 1)
        perm = rng.permutation(len(x))
        test, train = perm[:n_test], perm[n_test:]
        for lst, arr in zip(out, (x[train], x[test], y[train], y[test])):
            lst.append(arr)
    return out


def label_skew(histograms: Any) -> float:
    r"""Mean total-variation distance between client label distributions and the pooled one.

    :math:`\frac{1}{K}\sum_k \frac12 \sum_c |p_{k,c} - p_c|` with :math:`p_{k,\cdot}` the label
    distribution of client :math:`k` and :math:`p` the pooled one; 0 for identical label mixes, close
    to 1 when clients hold disjoint rare classes. Empty clients are ignored.

    Parameters
    ----------
    histograms : array-like, shape (K, C)
        Label counts per client (e.g. ``Partition.label_histograms``).

    Returns
    -------
    float
    """
    h = check_array("histograms", histograms, ndim=2, nonnegative=True)
    h = h[h.sum(axis=1) > 0]
    if h.size == 0:
        raise ValueError("histograms must contain at least one non-empty client.")
    pooled = h.sum(axis=0) / h.sum()
    local = h / h.sum(axis=1, keepdims=True)
    return float(0.5 * np.abs(local - pooled).sum(axis=1).mean())
