"""Seeds derived from (seed, round, stream) so that any round of any run can be replayed; the stream ids."""
from __future__ import annotations

import numbers

import numpy as np
import torch

_MASK = (1 << 64) - 1


class Stream:
    """Random-stream ids: which draw a key belongs to, in ``(seed, round, stream, ...)`` or ``(seed, stream, ...)``.

    Every id of the package is here. Within the core and within each chapter the ids are distinct (a test checks
    it), so no two uses of one key collide. A few ids recur across chapters (11, 31, 101, 102): runs of different
    chapters never share a key, and the ids are kept so that the notebooks' published numbers stay the same.
    """

    # core: engine and generic algorithms
    LOCAL = 0                   # minibatches of local SGD
    SAMPLING = 1                # client sampling / participation
    INIT = 2                    # initial parameters
    PERSONAL = 3                # personalisation steps (fine-tuning, Ditto, FedRep heads, kNN-Per stores)
    # availability
    AVAILABILITY_DATA = 101
    AVAILABILITY_POPULATION = 102
    AVAILABILITY_TRACE = 103
    AVAILABILITY_PRIOR = 104
    # fedem
    FEDEM_NEW_CLIENTS = 31
    # knnper: (seed, step, KNNPER_SPLIT) with step 0 partition, 1 split, 2 new-client order, 3 pool order,
    # 4 capacity subsets
    KNNPER_SPLIT = 11
    # knnper: (seed, 0, id), the new clients' personalisation steps in unseen_clients
    KNNPER_NEW_DITTO = 7
    KNNPER_NEW_FEDREP = 8
    # streams
    STREAMS_ESTIMATE = 97
    # online
    ONLINE_DATA = 20
    ONLINE_GRAD = 21
    ONLINE_LOSS = 22
    ONLINE_INIT = 23
    ONLINE_EM = 24
    ONLINE_ENV = 30
    ONLINE_POOL = 31
    ONLINE_WEIGHTS = 32
    ONLINE_DRAW = 33
    # sfedpo
    SFEDPO_STATE_SPACE = 0
    SFEDPO_STATE_LAWS = 1
    SFEDPO_AVAILABILITY = 2
    SFEDPO_EVICT = 11
    SFEDPO_FRESH = 101
    SFEDPO_ORACLE = 102
    # markovian
    MARKOV_NOISE = 11
    # topology
    TOPOLOGY_DATA = 41

    @classmethod
    def groups(cls) -> dict[str, dict[str, int]]:
        """Ids by owner: ``"core"`` or the chapter named by the prefix (``"AVAILABILITY_DATA"`` -> availability)."""
        out: dict[str, dict[str, int]] = {}
        for name, value in vars(cls).items():
            if name.isupper():
                owner = name.split("_")[0].lower() if "_" in name else "core"
                out.setdefault(owner, {})[name] = value
        return out


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def derive_seed(*keys: int) -> int:
    """Mix integer keys, e.g. ``(seed, round, client)``, into one 63-bit seed (order matters).

    Raises
    ------
    TypeError, ValueError
        When a key is not an integer, or the first one (the ``seed``) is negative.
    """
    state = 0
    for i, key in enumerate(keys):
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, numbers.Integral):
            name = "seed" if i == 0 else f"key[{i}]"
            raise TypeError(f"{name} must be an integer, got {key!r} of type {type(key).__name__}.")
        if i == 0 and key < 0:
            raise ValueError(f"seed must be a non-negative integer, got {key}.")
        state = _splitmix64(state ^ (int(key) & _MASK))
    return state >> 1


def check_key(key, name: str = "key") -> tuple[int, ...]:
    """Return a random key, a non-empty tuple or list of integers such as ``(seed, round, stream)`` whose first
    entry (the seed) is non-negative, as a tuple; else raise naming ``name``."""
    if not isinstance(key, (tuple, list)) or not key:
        raise TypeError(f"{name} must be a non-empty tuple of integers such as (seed, round, stream), got {key!r}.")
    for i, k in enumerate(key):
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(f"{name}[{i}] must be an integer, got {k!r} of type {type(k).__name__}.")
    if key[0] < 0:
        raise ValueError(f"{name}[0] (the seed) must be non-negative, got {key[0]}.")
    return tuple(key)


def torch_generator(*keys: int) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded from ``derive_seed(*keys)``."""
    return torch.Generator().manual_seed(derive_seed(*keys))


def numpy_rng(*keys: int) -> np.random.Generator:
    """A numpy ``Generator`` seeded from ``derive_seed(*keys)``."""
    return np.random.default_rng(derive_seed(*keys))


def as_numpy_rng(rng: np.random.Generator | int | None, name: str = "rng") -> np.random.Generator:
    """Normalise a seed argument: a Generator is returned as is, a non-negative int or None seeds a new one.

    Raises
    ------
    TypeError, ValueError
        Naming ``name`` when ``rng`` is none of these.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"{name} must be a numpy Generator, a non-negative int or None, got {rng!r} of type "
                        f"{type(rng).__name__}.")
    if rng < 0:
        raise ValueError(f"{name} must be a numpy Generator, a non-negative int or None, got {rng}.")
    return np.random.default_rng(rng)
