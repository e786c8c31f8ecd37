"""Module-level worker functions for tests/test_experiments.py (importable by spawned processes)."""
from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import numpy as np


def _mark(marker_dir: str | None, name: str) -> None:
    if marker_dir is not None:
        (Path(marker_dir) / f"{name}.{uuid.uuid4().hex}.run").touch()


def executions(marker_dir, name: str) -> int:
    """How many times the run ``name`` started (one marker file per execution)."""
    return len(list(Path(marker_dir).glob(f"{name}.*.run")))


def noisy_descent(lr, n_steps=4, seed=0, marker_dir=None, fail_seed=None, crash_x=None, x=0, sleep=0.0):
    """A tiny seeded 'training curve'; optionally fails, kills its process once, or sleeps."""
    _mark(marker_dir, f"x{x}-lr{lr}-s{seed}")
    if crash_x is not None and x == crash_x and seed == 0:
        flag = Path(marker_dir) / "crashed.flag"
        if not flag.exists():
            flag.touch()
            os._exit(3)  # the worker process dies without cleanup
    if fail_seed is not None and seed == fail_seed:
        raise ValueError(f"diverged at lr={lr}")
    if sleep:
        time.sleep(sleep)
    rng = np.random.default_rng(seed)
    curve = np.cumprod(np.full(n_steps, 1.0 - lr)) + 0.01 * rng.standard_normal(n_steps)
    return {"loss": curve[-1], "curve": curve, "steps": np.int64(n_steps), "x": x}


def returns_object(a, seed):
    """A worker whose result is not JSON-serialisable."""
    return {"ok": 1.0, "model": object()}


def worker_settings(a, seed):
    """The thread and allocator environment and torch's thread count seen by the worker."""
    import sys
    torch = sys.modules.get("torch")
    names = ("OMP_NUM_THREADS", "FEDLAB_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    return {**{name: os.environ.get(name) for name in names},
            "torch_threads": None if torch is None else torch.get_num_threads()}


def slow_run(x, seed, marker_dir, sleep=1.0):
    """Marks its start (with its pid) and its end, sleeping in between."""
    (Path(marker_dir) / f"start-{x}-{seed}-{os.getpid()}").touch()
    time.sleep(sleep)
    (Path(marker_dir) / f"end-{x}-{seed}").touch()
    return {"x": x, "nan": float("nan"), "inf": float("-inf")}


def fedavg_run(lr, seed, rounds=3):
    """A small FedAvg run on the engine (batched backend): the final loss and the per-round participants."""
    from fedlab.algorithms import FedAvg
    from fedlab.engine import FederatedDataset, LocalSGD, run
    from fedlab.models import LinearModel

    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(12, 4)).astype(np.float32) + k for k in range(5)]
    ys = [rng.integers(0, 3, size=12) for _ in range(5)]
    data = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=0)
    algorithm = FedAvg(LinearModel(4, 3), LocalSGD(lr=lr, local_steps=2, batch_size=4), participation=0.6,
                       backend="batched")
    _, history = run(algorithm, data, rounds=rounds, seed=seed, progress=False)
    return {"loss": history.clients["train_loss"][-1].tolist(), "log": [e["participants"] for e in history.log]}


def worker_pid(seed=0):
    """The process that ran this seed."""
    return os.getpid()


def ignores_ctrl_c(seed=0):
    """Whether this process ignores SIGINT."""
    import signal

    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN
