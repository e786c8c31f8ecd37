r"""Data streams and client memories (thesis §4.3.1, Fig. 4.1; Marfoq et al., AISTATS 2023).

Client :math:`m` receives :math:`b_m^{(t)} = N_m^{(t)} - N_m^{(t-1)}` new i.i.d. samples from
:math:`\mathcal P_m` at round :math:`t` (an *arrival process*) and keeps at most :math:`C_m` of them in a
*memory* :math:`\mathcal M_m^{(t)} = \mathrm{Update}(\mathcal M_m^{(t-1)}, \mathcal B_m^{(t)})`. Samples
are identified by their arrival index :math:`i \in \{0, \dots, N_m - 1\}` (the order in which they
arrived), so a memory rule sees arrival times only, never features or labels, as the thesis requires.

Three layers, usable separately (the SFedPO chapter reuses them):

* arrival processes (:data:`ARRIVALS`): ``counts(horizon, rng) -> (T,)`` integers;
* :class:`Memory` (stateful, one client, rules in :data:`MEMORY_RULES`) and :func:`simulate_memory`,
  which records the whole run as a :class:`MemorySchedule` (a boolean matrix ``in_memory[t, i]``);
* :class:`StreamDataset`, a :class:`~fedlab.engine.FederatedDataset` whose ``train`` holds every sample
  collected over the horizon (the aggregate data set :math:`\mathcal S` of the thesis) and which returns
  the round-:math:`t` memories as a :class:`~fedlab.engine.ClientData` (``memory(t)``).

:func:`make_case_study` builds the historical + fresh clients of thesis §4.3.3,
:class:`StreamSynthetic` the synthetic clients of §4.3.4.1 (logistic, or linear regression) and
:func:`synthetic_case_study` the two together (the case study on synthetic clients).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_type
from fedlab.data.memory import MEMORY_RULES
from fedlab.engine.population import ClientData, FederatedDataset

__all__ = [
    "ConstantArrivals",
    "StaticArrivals",
    "PoissonArrivals",
    "IntermittentArrivals",
    "ARRIVALS",
    "make_arrivals",
    "arrival_counts",
    "Memory",
    "MEMORY_RULES",
    "MemorySchedule",
    "simulate_memory",
    "StreamDataset",
    "make_stream_dataset",
    "make_case_study",
    "StreamSynthetic",
    "make_stream_synthetic",
    "case_study_sizes",
    "synthetic_case_study",
]


# ------------------------------------------------------------------------------------ arrival processes

@dataclass(frozen=True)
class ConstantArrivals:
    r"""Constant rate: :math:`b^{(t)} = b` for every round (the fresh clients of thesis §4.3.3).

    Parameters
    ----------
    rate : int
        Samples per round :math:`b \ge 0`.
    """

    rate: int

    def __post_init__(self) -> None:
        check_int("rate", self.rate, low=0)

    def counts(self, horizon: int, rng=None) -> np.ndarray:
        """Arrivals per round, shape ``(horizon,)``."""
        return np.full(check_int("horizon", horizon, low=1), self.rate, dtype=np.int64)


@dataclass(frozen=True)
class StaticArrivals:
    r"""A static data set: ``size`` samples at the first round, none afterwards (historical clients).

    Parameters
    ----------
    size : int
        :math:`N_m \ge 1`, all available at :math:`t = 1`.
    """

    size: int

    def __post_init__(self) -> None:
        check_int("size", self.size, low=1)

    def counts(self, horizon: int, rng=None) -> np.ndarray:
        out = np.zeros(check_int("horizon", horizon, low=1), dtype=np.int64)
        out[0] = self.size
        return out


@dataclass(frozen=True)
class PoissonArrivals:
    r"""Poisson arrivals: :math:`b^{(t)} \sim \mathrm{Poisson}(\mu)` i.i.d. over rounds.

    Parameters
    ----------
    rate : float
        Mean :math:`\mu > 0` samples per round.
    """

    rate: float

    def __post_init__(self) -> None:
        check_real("rate", self.rate, low=0, low_open=True)

    def counts(self, horizon: int, rng=None) -> np.ndarray:
        return as_numpy_rng(rng).poisson(self.rate, size=check_int("horizon", horizon, low=1)).astype(np.int64)


@dataclass(frozen=True)
class IntermittentArrivals:
    r"""An intermittently connected client: ``rate`` samples in the rounds it is online, none otherwise.

    The online rounds are either given (``rounds``, 0-based; e.g. one round for FEMNIST's fresh clients,
    two consecutive rounds for Shakespeare's, thesis §4.3.4) or drawn i.i.d. with probability ``p_online``.

    Parameters
    ----------
    rate : int
        Samples received in an online round (>= 1).
    p_online : float
        Probability of being online in a round, in (0, 1] (ignored when ``rounds`` is given).
    rounds : sequence of int, optional
        The online rounds.
    """

    rate: int
    p_online: float = 0.5
    rounds: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        check_int("rate", self.rate, low=1)
        check_real("p_online", self.p_online, low=0, high=1, low_open=True)
        if self.rounds is not None:
            object.__setattr__(self, "rounds", tuple(check_int("rounds", r, low=0) for r in self.rounds))

    def counts(self, horizon: int, rng=None) -> np.ndarray:
        horizon = check_int("horizon", horizon, low=1)
        if self.rounds is None:
            online = as_numpy_rng(rng).random(horizon) < self.p_online
        else:
            if any(r >= horizon for r in self.rounds):
                raise ValueError(f"rounds must be < horizon={horizon}, got {list(self.rounds)}.")
            online = np.zeros(horizon, dtype=bool)
            online[list(self.rounds)] = True
        return np.where(online, self.rate, 0).astype(np.int64)


ARRIVALS: dict[str, type] = {
    "constant": ConstantArrivals,
    "static": StaticArrivals,
    "poisson": PoissonArrivals,
    "intermittent": IntermittentArrivals,
}


def make_arrivals(kind: str, **kwargs):
    """Build an arrival process from :data:`ARRIVALS` by name, e.g. ``make_arrivals("poisson", rate=2.5)``."""
    return ARRIVALS[check_choice("kind", kind, ARRIVALS)](**kwargs)


def arrival_counts(process, horizon: int, rng=None) -> np.ndarray:
    """Counts ``(horizon,)`` of an arrival process, or validate an explicit array of counts."""
    if hasattr(process, "counts"):
        return process.counts(horizon, rng)
    horizon = check_int("horizon", horizon, low=1)
    as_numpy_rng(rng)  # validated even though explicit counts draw nothing
    counts = check_array("counts", process, ndim=1, nonnegative=True)
    if counts.shape != (horizon,) or np.any(counts != np.round(counts)):
        raise ValueError(f"counts must be {horizon} non-negative integers (one per round), got shape {counts.shape}.")
    return counts.astype(np.int64)


# ------------------------------------------------------------------------------------ memories

class Memory:
    r"""One client's cache of at most ``capacity`` sample ids, updated by a rule of :data:`MEMORY_RULES`.

    ``update(batch)`` implements :math:`\mathcal M^{(t)} = \mathrm{Update}(\mathcal M^{(t-1)}, \mathcal B^{(t)})`:

    * ``"fifo"``: evict the oldest samples (thesis Fig. 4.1; ``capacity = b`` keeps the current batch);
    * ``"keep"``: keep-historical, fill once and never update (a static data set);
    * ``"current"``: only the current batch (empty in rounds without arrivals);
    * ``"random"``: admit new samples, evict uniformly random old ones;
    * ``"reservoir"``: reservoir sampling, a uniform sample of everything seen so far.

    The random rules use ``rng`` only (never the samples), so the memory stays independent of the data.
    Batches larger than the capacity keep their newest samples (``keep``: the first ones).

    Parameters
    ----------
    capacity : int
        :math:`C_m \ge 0`.
    rule : str
        Key of :data:`MEMORY_RULES`.
    rng : numpy Generator, int or None
        Randomness of the ``random`` and ``reservoir`` rules.
    """

    def __init__(self, capacity: int, rule: str = "fifo", rng=None) -> None:
        self.capacity = check_int("capacity", capacity, low=0)
        self.rule = check_choice("rule", rule, MEMORY_RULES)
        self._rng = as_numpy_rng(rng)
        self._contents = np.zeros(0, dtype=np.int64)
        self.seen = 0

    @property
    def contents(self) -> np.ndarray:
        """Sample ids currently stored, in arrival order."""
        return self._contents.copy()

    def __len__(self) -> int:
        return len(self._contents)

    def update(self, batch) -> np.ndarray:
        """Insert the new ``batch`` of sample ids; return the ids that are not (or no longer) stored."""
        batch = check_array("batch", batch, ndim=1, dtype=np.int64)
        if len(batch) and len(self._contents) and batch.min() <= self._contents.max():
            raise ValueError("batch ids must be new (larger than every stored id): samples arrive in order.")
        if len(np.unique(batch)) != len(batch):
            raise ValueError("batch ids must be distinct.")
        before = np.concatenate([self._contents, batch])
        self._insert(batch)
        return np.setdiff1d(before, self._contents)

    def _insert(self, batch: np.ndarray) -> None:
        """Apply the rule to a validated batch (no eviction bookkeeping)."""
        self._contents = MEMORY_RULES[self.rule](self._contents, batch, self.capacity, self.seen, self._rng)
        self.seen += len(batch)


@dataclass(frozen=True, eq=False)
class MemorySchedule:
    r"""Which samples one client holds at each round: ``in_memory[t, i]`` for :math:`i \in \mathcal I^{(t)}`.

    Attributes
    ----------
    in_memory : ndarray of bool, shape (T, N)
        Sample ``i`` (arrival index) is in the memory used at round ``t`` (0-based).
    arrival : ndarray of int, shape (N,)
        Round at which each sample arrived.
    """

    in_memory: np.ndarray
    arrival: np.ndarray

    @property
    def horizon(self) -> int:
        return int(self.in_memory.shape[0])

    @property
    def n_samples(self) -> int:
        """:math:`N_m`, every sample received over the horizon."""
        return int(self.in_memory.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        r""":math:`|\mathcal I^{(t)}|` per round, shape (T,)."""
        return self.in_memory.sum(1)

    @property
    def stay_times(self) -> np.ndarray:
        r"""Number of rounds :math:`\tau_i` each sample spends in memory, shape (N,)."""
        return self.in_memory.sum(0)

    def indices(self, t: int) -> np.ndarray:
        r"""Arrival indices :math:`\mathcal I^{(t)}` in memory at round ``t`` (0-based)."""
        return np.flatnonzero(self.in_memory[check_int("t", t, low=0, high=self.horizon - 1)])


def simulate_memory(counts, capacity: int, rule: str = "fifo", rng=None) -> MemorySchedule:
    """Run a :class:`Memory` over a stream with ``counts[t]`` arrivals per round and record its contents.

    Parameters
    ----------
    counts : array-like of int, shape (T,)
        Arrivals per round (e.g. ``ConstantArrivals(2).counts(T)``).
    capacity : int
    rule : str
        Key of :data:`MEMORY_RULES`.
    rng : numpy Generator, int or None

    Returns
    -------
    MemorySchedule
    """
    counts = check_array("counts", counts, ndim=1, nonnegative=True)
    if len(counts) == 0 or np.any(counts != np.round(counts)):
        raise ValueError(f"counts must be a non-empty 1-D array of non-negative integers, got {counts[:10]}.")
    counts = counts.astype(np.int64)
    memory = Memory(capacity, rule, rng)
    n_total = int(counts.sum())
    in_memory = np.zeros((len(counts), n_total), dtype=bool)
    arrival = np.repeat(np.arange(len(counts)), counts)
    start = 0
    for t, b in enumerate(counts):
        memory._insert(np.arange(start, start + b, dtype=np.int64))
        start += b
        in_memory[t, memory._contents] = True
    return MemorySchedule(in_memory, arrival)


# ------------------------------------------------------------------------------------ stream data set

@dataclass(frozen=True, eq=False)
class StreamDataset(FederatedDataset):
    r"""Clients' streams and their memories over a horizon of T rounds.

    ``train`` holds every sample collected by the end (:math:`\mathcal S_m`, in arrival order, so that
    :math:`N_m` = ``train.n[m]``); evaluating on it gives the empirical risk over clients and time.
    ``memory(t)`` returns the memories :math:`\mathcal M_m^{(t)}` used at round ``t`` (0-based).

    Attributes
    ----------
    memory_index : Tensor of int64, shape (T, K, C_max)
        Arrival indices of the samples in memory (entries beyond ``memory_count`` are padding).
    memory_count : Tensor of int64, shape (T, K)
        :math:`|\mathcal I_m^{(t)}|`.
    historical : Tensor of bool, shape (K,)
        Which clients are historical (static data) in the case study; all False otherwise.
    """

    memory_index: Tensor | None = None
    memory_count: Tensor | None = None
    historical: Tensor | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_index is None or self.memory_count is None:
            raise ValueError("StreamDataset needs memory_index (T, K, C_max) and memory_count (T, K).")
        for name in ("memory_index", "memory_count"):
            value = check_type(name, getattr(self, name), Tensor)
            if value.dtype != torch.long:
                raise TypeError(f"{name} must be a tensor of int64, got dtype {value.dtype}.")
        check_type("historical", self.historical, Tensor, optional=True)
        if self.historical is not None and self.historical.dtype != torch.bool:
            raise TypeError(f"historical must be a tensor of bool, got dtype {self.historical.dtype}.")
        k = self.train.n_clients
        if self.memory_index.dim() != 3 or self.memory_index.shape[1] != k or \
                self.memory_count.shape != self.memory_index.shape[:2]:
            raise ValueError(f"memory_index must have shape (T, {k}, C_max) and memory_count (T, {k}); got "
                             f"{tuple(self.memory_index.shape)} and {tuple(self.memory_count.shape)}.")
        if self.historical is None:
            object.__setattr__(self, "historical", torch.zeros(k, dtype=torch.bool))
        elif self.historical.shape != (k,):
            raise ValueError(f"historical must have shape ({k},), got {tuple(self.historical.shape)}.")
        count, index = self.memory_count, self.memory_index
        if bool((count < 0).any()) or bool((count > index.shape[2]).any()):
            raise ValueError(f"memory_count must lie in [0, {index.shape[2]}] (C_max), got "
                             f"[{int(count.min())}, {int(count.max())}].")
        used = torch.arange(index.shape[2]) < count.unsqueeze(-1)
        n = self.train.n.view(1, k, 1).expand_as(index)
        if bool((index < 0).any()) or bool((index >= n)[used].any()) or bool((index >= self.train.x.shape[1]).any()):
            raise ValueError("memory_index must hold arrival indices in [0, train.n[k]) (padding: in [0, n_max)).")

    @classmethod
    def from_schedules(cls, xs: Sequence, ys: Sequence, schedules: Sequence[MemorySchedule], *,
                       test_xs: Sequence | None = None, test_ys: Sequence | None = None,
                       n_classes: int | None = None, historical=None) -> "StreamDataset":
        """Assemble per-client streams ``xs[k]`` (arrival order, length ``N_k``) and their schedules."""
        if not (len(xs) == len(ys) == len(schedules)) or len(xs) == 0:
            raise ValueError(f"xs, ys and schedules must be non-empty with one entry per client, got "
                             f"{len(xs)}, {len(ys)} and {len(schedules)}.")
        horizons = {s.horizon for s in schedules}
        if len(horizons) != 1:
            raise ValueError(f"every schedule must have the same horizon, got {sorted(horizons)}.")
        for k, (x, s) in enumerate(zip(xs, schedules)):
            if len(x) != s.n_samples:
                raise ValueError(f"xs[{k}] has {len(x)} samples but its schedule receives {s.n_samples}.")
        train = ClientData.from_arrays(xs, ys)
        if test_xs is None:
            test = ClientData.from_arrays([np.asarray(x)[:0] for x in xs], [np.asarray(y)[:0] for y in ys],
                                          allow_empty=True)
        else:
            test = ClientData.from_arrays(test_xs, test_ys, allow_empty=True)
        horizon = horizons.pop()
        c_max = max(1, max(int(s.sizes.max()) for s in schedules))
        index = torch.zeros((horizon, len(xs), c_max), dtype=torch.long)
        count = torch.zeros((horizon, len(xs)), dtype=torch.long)
        for k, s in enumerate(schedules):
            for t in range(horizon):
                ids = np.flatnonzero(s.in_memory[t])
                index[t, k, : len(ids)] = torch.from_numpy(ids)
                count[t, k] = len(ids)
        hist = None if historical is None else torch.as_tensor(np.asarray(historical, dtype=bool))
        if n_classes is None and not train.y.is_floating_point():
            n_classes = int(train.y.max()) + 1
        return cls(train, test, n_classes, index, count, hist)

    @property
    def horizon(self) -> int:
        """Number of rounds T."""
        return int(self.memory_index.shape[0])

    @property
    def n_samples(self) -> np.ndarray:
        """:math:`N_m`, shape (K,)."""
        return self.train.n.numpy().astype(np.int64)

    @property
    def fractions(self) -> np.ndarray:
        r""":math:`n_m = N_m / N`, shape (K,)."""
        n = self.n_samples.astype(float)
        return n / n.sum()

    @property
    def m_hist(self) -> int:
        """Number of historical clients (they come first in the case study)."""
        return int(self.historical.sum())

    def in_memory(self, k: int) -> np.ndarray:
        """Client ``k``'s schedule as a boolean matrix ``(T, N_k)``."""
        k = check_int("k", k, low=0, high=self.n_clients - 1)
        out = np.zeros((self.horizon, int(self.train.n[k])), dtype=bool)
        idx, cnt = self.memory_index[:, k].numpy(), self.memory_count[:, k].numpy()
        for t in range(self.horizon):
            out[t, idx[t, : cnt[t]]] = True
        return out

    def schedules(self) -> list[MemorySchedule]:
        """Every client's :class:`MemorySchedule` (arrival rounds inferred as the first round in memory)."""
        out = []
        for k in range(self.n_clients):
            im = self.in_memory(k)
            seen = im.any(0)
            arrival = np.where(seen, im.argmax(0), -1)
            out.append(MemorySchedule(im, arrival))
        return out

    def memory(self, t: int, weight: Tensor | None = None) -> ClientData:
        r"""The memories of round ``t`` (0-based) as a :class:`ClientData` of all K clients.

        Parameters
        ----------
        t : int
        weight : Tensor, shape (K, C_max), optional
            Per-sample weights aligned with ``memory_index[t]`` (the engine's :math:`w_i`).

        Returns
        -------
        ClientData with ``n = memory_count[t]`` (clients with an empty memory have ``n = 0``).
        """
        t = check_int("t", t, low=0, high=self.horizon - 1)
        idx = self.memory_index[t]
        rows = torch.arange(self.n_clients).unsqueeze(1)
        return ClientData(self.train.x[rows, idx], self.train.y[rows, idx], self.memory_count[t], weight)


def make_stream_dataset(xs: Sequence, ys: Sequence, arrivals: Sequence, capacities: Sequence[int],
                        rules: str | Sequence[str] = "fifo", *, horizon: int, test_xs: Sequence | None = None,
                        test_ys: Sequence | None = None, n_classes: int | None = None, historical=None,
                        rng=None) -> StreamDataset:
    """Stream each client's samples through an arrival process and a memory.

    Parameters
    ----------
    xs, ys : sequences of arrays
        Client ``k``'s samples in arrival order; the first ``sum(counts_k)`` are used.
    arrivals : sequence
        Per client, an arrival process (:data:`ARRIVALS`) or an explicit ``(horizon,)`` count array.
    capacities : sequence of int
        :math:`C_m` per client.
    rules : str or sequence of str
        Memory rule(s) of :data:`MEMORY_RULES`.
    horizon : int
        Number of rounds T.
    test_xs, test_ys : sequences of arrays, optional
        Held-out samples per client.
    n_classes : int, optional
    historical : array-like of bool (K,), optional
    rng : numpy Generator, int or None
        Randomness of the arrival processes and of the random memory rules.

    Returns
    -------
    StreamDataset
    """
    horizon = check_int("horizon", horizon, low=1)
    for name, value in (("xs", xs), ("ys", ys), ("arrivals", arrivals), ("capacities", capacities)):
        check_sequence(name, value)
    if not isinstance(rules, str):
        check_sequence("rules", rules)
        for rule in rules:
            check_choice("rules", rule, MEMORY_RULES)
    k = len(xs)
    if not (len(ys) == len(arrivals) == len(capacities) == k) or k == 0:
        raise ValueError(f"xs, ys, arrivals and capacities need one entry per client ({k}), got "
                         f"{len(ys)}, {len(arrivals)} and {len(capacities)}.")
    rules = [rules] * k if isinstance(rules, str) else list(rules)
    if len(rules) != k:
        raise ValueError(f"rules must be a string or one rule per client ({k}), got {len(rules)}.")
    rng = as_numpy_rng(rng)
    schedules, xs_used, ys_used = [], [], []
    for m in range(k):
        counts = arrival_counts(arrivals[m], horizon, rng)
        need = int(counts.sum())
        if need > len(xs[m]):
            raise ValueError(f"client {m} receives {need} samples over the horizon but xs[{m}] has only {len(xs[m])}.")
        schedules.append(simulate_memory(counts, capacities[m], rules[m], rng))
        xs_used.append(np.asarray(xs[m])[:need])
        ys_used.append(np.asarray(ys[m])[:need])
    return StreamDataset.from_schedules(xs_used, ys_used, schedules, test_xs=test_xs, test_ys=test_ys,
                                        n_classes=n_classes, historical=historical)


def make_case_study(hist_xs: Sequence, hist_ys: Sequence, fresh_xs: Sequence, fresh_ys: Sequence, *,
                    horizon: int, test_xs: Sequence | None = None, test_ys: Sequence | None = None,
                    n_classes: int | None = None) -> StreamDataset:
    r"""Historical and fresh clients of thesis §4.3.3 (clients ``0..M_hist-1`` are historical).

    Historical client :math:`m` holds its :math:`N_m` samples from the first round and never updates its
    memory; fresh client :math:`m` receives :math:`b_m = N_m / T` samples per round and keeps only them
    (FIFO with :math:`C_m = b_m`), so each fresh sample is used once and each historical one T times.

    Parameters
    ----------
    hist_xs, hist_ys : sequences of arrays
        Historical data sets (``M_hist`` clients, possibly none).
    fresh_xs, fresh_ys : sequences of arrays
        Fresh streams; ``len(fresh_xs[m])`` must be a positive multiple of ``horizon``.
    horizon : int
    test_xs, test_ys : sequences of arrays (historical clients first), optional
    n_classes : int, optional

    Returns
    -------
    StreamDataset with ``historical`` set.
    """
    horizon = check_int("horizon", horizon, low=1)
    check_sequence("hist_xs", hist_xs)
    check_sequence("hist_ys", hist_ys, size=len(hist_xs))
    check_sequence("fresh_xs", fresh_xs)
    check_sequence("fresh_ys", fresh_ys, size=len(fresh_xs))
    for name, seq in (("hist_xs", hist_xs), ("hist_ys", hist_ys), ("fresh_xs", fresh_xs), ("fresh_ys", fresh_ys)):
        for k, value in enumerate(seq):
            check_array(f"{name}[{k}]", value)
    arrivals, capacities, rules = [], [], []
    for k, x in enumerate(hist_xs):
        arrivals.append(StaticArrivals(len(x)))
        capacities.append(len(x))
        rules.append("keep")
    for k, x in enumerate(fresh_xs):
        if len(x) == 0 or len(x) % horizon:
            raise ValueError(f"fresh_xs[{k}] has {len(x)} samples; it needs a positive multiple of horizon={horizon} "
                             "(b_m samples per round).")
        b = len(x) // horizon
        arrivals.append(ConstantArrivals(b))
        capacities.append(b)
        rules.append("fifo")
    historical = [True] * len(hist_xs) + [False] * len(fresh_xs)
    return make_stream_dataset(list(hist_xs) + list(fresh_xs), list(hist_ys) + list(fresh_ys), arrivals,
                               capacities, rules, horizon=horizon, test_xs=test_xs, test_ys=test_ys,
                               n_classes=n_classes, historical=historical)


# ------------------------------------------------------------------------------------ synthetic clients

@dataclass(frozen=True, eq=False)
class StreamSynthetic:
    r"""Client distributions of the paper's synthetic data set (thesis §4.3.4.1).

    :math:`\theta_0 \sim \mathcal N(0, I_d)`, :math:`\theta_m \sim \mathcal N(\theta_0, \varepsilon^2 I_d)`,
    :math:`x \sim \mathcal U([-1, 1]^d)` and :math:`y \sim \mathrm{Bernoulli}(\sigma(\langle x, \theta_m\rangle))`
    (``task="logistic"``) or :math:`y = \langle x, \theta_m\rangle + \sigma_\xi \xi` (``task="linear"``).

    Attributes
    ----------
    theta : ndarray (K, d)
    theta0 : ndarray (d,)
    task : {"logistic", "linear"}
    noise : float
        Label noise :math:`\sigma_\xi` of the linear task.
    """

    theta: np.ndarray
    theta0: np.ndarray
    task: str = "logistic"
    noise: float = 0.0

    def __post_init__(self) -> None:
        theta = check_array("theta", self.theta, ndim=2)
        if theta.shape[0] == 0 or theta.shape[1] == 0:
            raise ValueError(f"theta must have shape (K, d) with K, d >= 1, got {theta.shape}.")
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "theta0", check_array("theta0", self.theta0, shape=(theta.shape[1],)))
        check_choice("task", self.task, ("logistic", "linear"))
        object.__setattr__(self, "noise", check_real("noise", self.noise, low=0))

    def sample(self, sizes, rng=None) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Draw ``sizes[k]`` i.i.d. samples from each client: lists ``xs`` (float32) and ``ys``."""
        sizes = check_array("sizes", sizes, shape=(len(self.theta),), nonnegative=True).astype(np.int64)
        rng = as_numpy_rng(rng)
        xs, ys = [], []
        for k, n in enumerate(sizes):
            x = rng.uniform(-1.0, 1.0, size=(n, self.theta.shape[1]))
            z = x @ self.theta[k]
            if self.task == "logistic":
                y = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.int64)
            else:
                y = (z + self.noise * rng.standard_normal(n)).astype(np.float32)
            xs.append(x.astype(np.float32))
            ys.append(y)
        return xs, ys

    def bayes_accuracy(self, k: int, n: int = 20000, rng=None) -> float:
        """Monte-Carlo accuracy of client ``k``'s Bayes classifier (logistic task)."""
        x = as_numpy_rng(rng).uniform(-1.0, 1.0, size=(n, self.theta.shape[1]))
        p = 1.0 / (1.0 + np.exp(-x @ self.theta[k]))
        return float(np.maximum(p, 1 - p).mean())


def make_stream_synthetic(n_clients: int, dim: int = 20, eps: float = 0.1, *, task: str = "logistic",
                          noise: float = 0.0, rng=None) -> StreamSynthetic:
    r"""Draw :math:`\theta_0` and the clients' :math:`\theta_m` of :class:`StreamSynthetic`.

    Parameters
    ----------
    n_clients : int
    dim : int
        Feature dimension d (the model adds a bias: 21 parameters for d = 20, as in Table 4.1).
    eps : float
        Client heterogeneity :math:`\varepsilon \ge 0`.
    task : {"logistic", "linear"}
    noise : float
        Label noise of the linear task.
    rng : numpy Generator, int or None
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    dim = check_int("dim", dim, low=1)
    eps = check_real("eps", eps, low=0)
    task = check_choice("task", task, ("logistic", "linear"))
    noise = check_real("noise", noise, low=0)
    rng = as_numpy_rng(rng)
    theta0 = rng.standard_normal(dim)
    theta = theta0 + eps * rng.standard_normal((n_clients, dim))
    return StreamSynthetic(theta, theta0, task, noise)


# ------------------------------------------------------------------------------------ the synthetic case study

def case_study_sizes(h: float, n_total: int, horizon: int, m_hist: int, m_fresh: int) -> tuple[int, int]:
    r"""Per-client historical size :math:`\mathrm{round}(hN/M_{hist})` and fresh rate
    :math:`b = \max(1, \mathrm{round}((1-h)N/(M_F T)))` (spec §5.3; the realised :math:`h` differs slightly)."""
    h = check_real("h", h, low=0, high=1, low_open=True, high_open=True)
    n_total = check_int("n_total", n_total, low=1)
    horizon = check_int("horizon", horizon, low=1)
    m_hist = check_int("m_hist", m_hist, low=1)
    m_fresh = check_int("m_fresh", m_fresh, low=1)
    return max(1, int(round(h * n_total / m_hist))), max(1, int(round((1 - h) * n_total / (m_fresh * horizon))))


def synthetic_case_study(*, task: str = "logistic", h: float = 0.2, n_total: int = 1000, horizon: int = 50,
                         m_hist: int = 5, m_fresh: int = 5, dim: int = 20, eps: float = 0.1, noise: float = 0.0,
                         test_per_client: int = 500, seed: int = 0) -> tuple[StreamDataset, StreamSynthetic]:
    """Historical + fresh clients drawn from :class:`StreamSynthetic` (spec §5.3/§5.4).

    Returns the :class:`StreamDataset` (historical clients first; a test set of ``test_per_client``
    samples per client for the logistic task, none for the linear one) and the generator (true
    :math:`\\theta_m`).
    """
    task = check_choice("task", task, ("logistic", "linear"))
    seed = check_int("seed", seed, low=0)
    n_h, b = case_study_sizes(h, n_total, horizon, m_hist, m_fresh)
    gen = make_stream_synthetic(m_hist + m_fresh, dim, eps, task=task, noise=noise,
                                rng=np.random.default_rng([seed, 0]))
    xs, ys = gen.sample([n_h] * m_hist + [b * horizon] * m_fresh, rng=np.random.default_rng([seed, 1]))
    test_xs = test_ys = None
    if task == "logistic":
        test_xs, test_ys = gen.sample([check_int("test_per_client", test_per_client, low=1)] * (m_hist + m_fresh),
                                      rng=np.random.default_rng([seed, 2]))
    data = make_case_study(xs[:m_hist], ys[:m_hist], xs[m_hist:], ys[m_hist:], horizon=horizon,
                           test_xs=test_xs, test_ys=test_ys, n_classes=2 if task == "logistic" else None)
    return data, gen
