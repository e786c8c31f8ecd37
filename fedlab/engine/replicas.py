"""Replicas as a batch dimension: R independent runs (seeds, or points of a grid) trained as one stacked population.

:func:`lockstep` runs R tasks (any Python callables that train through :func:`~fedlab.engine.local_train`, e.g.
:func:`~fedlab.engine.run` of any algorithm, or a notebook's experiment function) in R threads. Whenever every
live task waits in ``local_train``, their calls are merged: the rows of all replicas are trained in one call, each
row with its own parameters, data, minibatches (drawn from its own replica's key) and optimizer state, and every
replica gets its rows back. Each replica keeps its own aggregation, sampling and randomness, since all of those
run in its own thread on its own state, so a replica's History is the one it has when run alone: bit for bit with
an explicit backend (``"auto"`` times the backends and may pick differently for a merged call). Calls that cannot
be merged (another model, solver or minibatch shape; another step size, except for SGD, whose merged rows each step
with their own) run one after the other in the same phase.
:func:`run_replicas` is the common case: one algorithm over several seeds.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import torch

from fedlab._validation import check_callable, check_int, check_sequence
from fedlab.engine.local import JOB_HOOK, LocalJob, LocalResult, OptimizerState, execute
from fedlab.engine.population import ClientData
from fedlab.engine.runner import run

__all__ = ["lockstep", "run_replicas"]

T = TypeVar("T")


def _stack_data(datas: Sequence[ClientData]) -> ClientData:
    """The clients of ``datas`` one after the other, padded to the largest client."""
    n_max = max(d.x.shape[1] for d in datas)

    def pad(t: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(t, [0, 0] * (t.dim() - 2) + [0, n_max - t.shape[1]])

    weight = None if datas[0].weight is None else torch.cat([pad(d.weight) for d in datas])
    return ClientData(torch.cat([pad(d.x) for d in datas]), torch.cat([pad(d.y) for d in datas]),
                      torch.cat([d.n for d in datas]), weight)


def _merge_key(job: LocalJob) -> tuple:
    """Jobs with equal keys train together: same model, solver, backend, shapes and options, and the same step size
    unless the solver is SGD (whose rows then step with their own job's: a step-size grid trains as one)."""
    sgd = job.solver.optimizer == "sgd"
    return (job.model.signature(), replace(job.solver, lr=1.0) if sgd else job.solver, None if sgd else job.lr,
            job.backend, tuple(job.idx.shape[1:]), job.valid is None,
            job.weight is None, job.anchor is None, job.optimizer_state is None, job.data.feature_shape,
            job.data.x.dtype, job.data.y.dtype, job.data.x.device)


class _Lockstep:
    """R replica threads that take turns: one runs until it waits in ``local_train`` (or ends), then the next; once
    every live replica waits, the pending jobs run, merged. One thread runs at a time, so no two fight for the GIL."""

    def __init__(self, n: int) -> None:
        self.turn = [threading.Event() for _ in range(n)]
        self.paused = threading.Event()
        self.ended = [False] * n
        self.pending: dict[int, LocalJob] = {}
        self.done: dict[int, LocalResult | BaseException] = {}
        self.stacked: dict[tuple, tuple[list, ClientData]] = {}

    # --- in a replica's thread
    def submit(self, replica: int, job: LocalJob) -> LocalResult:
        self.pending[replica] = job
        self.pause(replica)
        out = self.done.pop(replica)
        if isinstance(out, BaseException):
            raise out
        return out

    def pause(self, replica: int) -> None:
        """Hand the turn back to the driver and wait for the next one."""
        self.turn[replica].clear()
        self.paused.set()
        self.turn[replica].wait()

    def end(self, replica: int) -> None:
        self.ended[replica] = True
        self.paused.set()

    # --- in the calling thread
    def drive(self) -> None:
        """Give each live replica its turn until all have ended; run the jobs they wait on after every sweep."""
        live = list(range(len(self.turn)))
        while live:
            for replica in live:
                self.paused.clear()
                self.turn[replica].set()
                self.paused.wait()
            live = [r for r in live if not self.ended[r]]
            groups: dict[tuple, list[int]] = {}
            for replica, job in self.pending.items():
                groups.setdefault(_merge_key(job), []).append(replica)
            for replicas in groups.values():
                self.done.update(self._run_group([(r, self.pending[r]) for r in replicas]))
            self.pending.clear()

    def _run_group(self, jobs: list[tuple[int, LocalJob]]) -> dict[int, LocalResult | BaseException]:
        if len(jobs) > 1:
            try:
                merged = execute(self._merged([job for _, job in jobs]))
                return dict(zip((r for r, _ in jobs), _split(merged, [len(job.rows) for _, job in jobs])))
            except Exception:   # noqa: BLE001 - a replica's error is raised in its own thread, by the run below
                pass
        out = {}
        for replica, job in jobs:
            try:
                out[replica] = execute(job)
            except Exception as exc:  # noqa: BLE001 - raised again in the replica's thread
                out[replica] = exc
        return out

    def _merged(self, jobs: list[LocalJob]) -> LocalJob:
        """One job training the rows of ``jobs`` (their data stacked once per combination of data objects)."""
        datas = [job.data for job in jobs]
        if all(d is datas[0] for d in datas):
            data, offsets = datas[0], [0] * len(jobs)
        else:
            key = tuple(id(d) for d in datas)
            if key not in self.stacked:   # the data objects are kept alive with their stack, so ids stay theirs
                self.stacked[key] = (datas, _stack_data(datas))
            data = self.stacked[key][1]
            offsets = torch.cumsum(torch.tensor([0] + [d.n_clients for d in datas[:-1]]), 0).tolist()

        def cat(name: str):
            values = [getattr(job, name) for job in jobs]
            if values[0] is None:
                return None
            if isinstance(values[0], dict):
                return {k: torch.cat([v[k] for v in values]) for k in values[0]}
            return torch.cat(values)

        first = jobs[0]
        rows = torch.cat([job.rows + offset for job, offset in zip(jobs, offsets)])
        state = None if first.optimizer_state is None else OptimizerState.concat([j.optimizer_state for j in jobs])
        lrs = [job.lr for job in jobs]
        lr = lrs[0] if all(v == lrs[0] for v in lrs) else torch.cat(
            [torch.full((len(job.rows),), job.lr, dtype=torch.float64, device=rows.device) for job in jobs])
        return LocalJob(first.model, cat("params"), data, rows, cat("idx"), cat("valid"), cat("weight"), first.solver,
                        cat("anchor"), lr, state, first.backend)


def _split(result: LocalResult, sizes: list[int]) -> list[LocalResult]:
    """``result``'s rows back to the jobs it merged (``sizes`` rows each, in order)."""
    out, start = [], 0
    for size in sizes:
        part = slice(start, start + size)
        state = None if result.optimizer_state is None else result.optimizer_state.select(part)
        out.append(LocalResult({k: v[part] for k, v in result.params.items()}, result.local_loss[part], state))
        start += size
    return out


def lockstep(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``tasks`` (callables without arguments) as replicas whose local training is merged; their results in order.
    Called by a task of another lockstep, it runs them one after the other (their local training already joins the
    outer lockstep's).

    Raises
    ------
    The first failing task's exception, once every task has ended, with a note naming the replica.
    """
    tasks = list(check_sequence("tasks", tasks, nonempty=True))
    for i, task in enumerate(tasks):
        check_callable(f"tasks[{i}]", task)
    if getattr(JOB_HOOK, "submit", None) is not None:
        return [task() for task in tasks]
    meeting = _Lockstep(len(tasks))
    results: list[Any] = [None] * len(tasks)
    errors: dict[int, BaseException] = {}

    def replica(i: int) -> None:
        meeting.turn[i].wait()
        JOB_HOOK.submit = lambda job: meeting.submit(i, job)
        try:
            results[i] = tasks[i]()
        except BaseException as exc:  # noqa: BLE001 - re-raised below, naming the replica
            errors[i] = exc
        finally:
            JOB_HOOK.submit = None
            meeting.end(i)

    threads = [threading.Thread(target=replica, args=(i,), name=f"replica-{i}", daemon=True) for i in range(len(tasks))]
    for thread in threads:
        thread.start()
    meeting.drive()
    for thread in threads:
        thread.join()
    if errors:
        i = min(errors)
        errors[i].add_note(f"(in replica {i} of {len(tasks)} run in lockstep)")
        raise errors[i]
    return results


def run_replicas(algorithm: Any, data: Any, *, seeds: Sequence[int], rounds: int, **options) -> list[tuple[Any, Any]]:
    """:func:`~fedlab.engine.run` of ``algorithm`` for every seed, trained as one population; ``(state, History)``
    per seed, each equal to ``run(algorithm, data, rounds=rounds, seed=seed, **options)`` made alone.

    ``algorithm`` and ``data`` are one for all seeds or a sequence with one per seed (e.g. each seed's data set).
    """
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(check_sequence("seeds", seeds, nonempty=True))]
    algorithms = _per_seed("algorithm", algorithm, len(seeds))
    datas = _per_seed("data", data, len(seeds))
    options = {"progress": False, **options}
    return lockstep([lambda a=a, d=d, s=s: run(a, d, rounds=rounds, seed=s, **options)
                     for a, d, s in zip(algorithms, datas, seeds)])


def _per_seed(name: str, value: Any, n: int) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must be one for all seeds or one per seed ({n}), got {len(value)}.")
        return list(value)
    return [value] * n
