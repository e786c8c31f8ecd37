r"""Update rules of a bounded client memory of sample ids (thesis §4.3.1; shared by notebooks 05 and 07).

A rule maps ``(old ids, new batch of ids, capacity, samples seen so far, rng)`` to the new contents, at most
``capacity`` ids in arrival order. The data-streams chapter keeps one :class:`fedlab.streams.data.Memory` per
client; SFedPO's buffers (:mod:`fedlab.sfedpo.data`) reuse the rules that keep a buffer full.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["MEMORY_RULES"]


def _fifo(old: np.ndarray, batch: np.ndarray, capacity: int, seen: int, rng) -> np.ndarray:
    """First in, first out: keep the ``capacity`` most recent samples."""
    return np.concatenate([old, batch])[-capacity:] if capacity else old[:0]


def _keep(old: np.ndarray, batch: np.ndarray, capacity: int, seen: int, rng) -> np.ndarray:
    """Keep-historical: fill the memory once, then never replace (a static data set)."""
    return np.concatenate([old, batch])[:capacity]


def _current(old: np.ndarray, batch: np.ndarray, capacity: int, seen: int, rng) -> np.ndarray:
    """Only the current batch (its newest ``capacity`` samples); empty in rounds without arrivals."""
    return batch[-capacity:] if capacity else batch[:0]


def _random(old: np.ndarray, batch: np.ndarray, capacity: int, seen: int, rng) -> np.ndarray:
    """Random replacement: admit the new batch, evict old samples chosen uniformly at random."""
    batch = batch[-capacity:] if capacity else batch[:0]
    n_keep = min(len(old), capacity - len(batch))
    kept = np.sort(rng.choice(old, size=n_keep, replace=False)) if n_keep < len(old) else old
    return np.concatenate([kept, batch])


def _reservoir(old: np.ndarray, batch: np.ndarray, capacity: int, seen: int, rng) -> np.ndarray:
    """Reservoir sampling (Vitter's Algorithm R): after k arrivals every sample is kept w.p. C/k."""
    slots = list(old)
    for offset, sample in enumerate(batch):
        k = seen + offset + 1  # 1-based arrival count of this sample
        if len(slots) < capacity:
            slots.append(sample)
        else:
            j = int(rng.integers(k))
            if j < capacity:
                slots[j] = sample
    return np.sort(np.asarray(slots, dtype=np.int64))


MEMORY_RULES: dict[str, Callable] = {
    "fifo": _fifo,
    "keep": _keep,
    "current": _current,
    "random": _random,
    "reservoir": _reservoir,
}
