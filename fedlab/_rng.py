"""Seeds derived from (seed, round, stream) so that any round of any run can be replayed."""
from __future__ import annotations

import numpy as np
import torch

_MASK = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def derive_seed(*keys: int) -> int:
    """Mix integer keys, e.g. ``(seed, round, client)``, into one 63-bit seed (order matters)."""
    state = 0
    for key in keys:
        state = _splitmix64(state ^ (int(key) & _MASK))
    return state >> 1


def torch_generator(*keys: int) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded from ``derive_seed(*keys)``."""
    return torch.Generator().manual_seed(derive_seed(*keys))


def numpy_rng(*keys: int) -> np.random.Generator:
    """A numpy ``Generator`` seeded from ``derive_seed(*keys)``."""
    return np.random.default_rng(derive_seed(*keys))


def as_numpy_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Normalise a seed argument: a Generator is returned as is, an int or None seeds a new one."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, an int or None, got {type(rng).__name__}.")
