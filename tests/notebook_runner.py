"""Run one notebook in its own process, the way the suite runs every notebook.

Each run gets a fresh interpreter, so a fresh asyncio loop and fresh ZMQ sockets: notebooks that shared one
long-lived loop in the pytest process occasionally lost the wake-up of a kernel reply and sat idle until
papermill's timeout fired. A cell that runs longer than ``cell_timeout`` seconds, or a notebook longer than
``timeout``, fails the test instead of stalling it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def execute_isolated(path: Path, out: Path, *, parameters: dict | None = None, cell_timeout: int = 120,
                     timeout: int = 300) -> float:
    """Execute ``path`` into ``out`` with papermill in a subprocess; return the wall time in seconds."""
    cmd = [sys.executable, "-m", "papermill", str(path), str(out), "--kernel", "python3", "--cwd",
           str(path.parent), "--execution-timeout", str(cell_timeout), "--no-progress-bar"]
    for name, value in (parameters or {}).items():
        cmd += ["-p", name, str(value)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{path.name} did not finish within {timeout} s") from exc
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise AssertionError(f"{path.name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed
