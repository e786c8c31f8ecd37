"""Where the engine computes: ``device=`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"meta"``...), else the
``FEDLAB_DEVICE`` environment variable, else the CPU.

Every tensor the engine creates follows the data's device; random draws (initial models, minibatches) are made
on the CPU generator and moved, so a run draws the same minibatches on every device and its numbers differ
between devices only by floating-point rounding. :data:`ALLOCATOR_ENV` is how the processes that train on the CPU
set up their memory allocator.
"""
from __future__ import annotations

import os

import torch

__all__ = ["ENV_VAR", "ALLOCATOR_ENV", "resolve_device"]

ENV_VAR = "FEDLAB_DEVICE"
ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": str(2 ** 32), "MALLOC_TRIM_THRESHOLD_": str(2 ** 36)}
"""glibc's allocator settings for the processes that train (sweep workers, headless notebook kernels): freed memory
stays in the process for the next allocation. Without them, every tensor of more than a few MB (a step's gathered
minibatches, FedEM's per-sample losses) is a fresh mapping whose pages fault in again: up to a quarter of a FedEM
run on the paper-size synthetic data. Read when a process starts; other C libraries ignore them."""


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device to compute on: ``device`` if given, else ``$FEDLAB_DEVICE``, else ``cpu``.

    Raises
    ------
    ValueError
        Naming the argument (or the environment variable) when it is not a device name, or names a CUDA
        device this machine does not have.
    """
    source, value = ("device", device) if device is not None else (ENV_VAR, os.environ.get(ENV_VAR) or "cpu")
    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"{source} must be a device name such as 'cpu' or 'cuda', got {type(value).__name__}.")
    try:
        resolved = torch.device(value)
    except (RuntimeError, ValueError) as err:
        raise ValueError(f"{source}={value!r} is not a torch device name (e.g. 'cpu', 'cuda', 'cuda:1').") from err
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if resolved.index is not None and resolved.index >= count or count == 0:
            raise ValueError(f"{source}={value!r} but this machine has {count} CUDA device(s) available "
                             f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'}).")
    return resolved
