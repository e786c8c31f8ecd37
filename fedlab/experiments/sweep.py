"""Parameter sweeps: a grid of configs times a list of seeds, run in parallel and resumable.

``sweep(fn, configs, seeds, store=...)`` calls ``fn(**config, seed=seed)`` for every pair that the
store does not hold yet, saves each result as soon as it finishes, and returns the records in the
order configs x seeds. Re-running an interrupted sweep therefore only runs what is missing. A run is
claimed in the store just before it starts (:meth:`ResultStore.claim`), so two sweeps sharing a store
never compute the same run: one computes it, the other waits for its record. Worker processes die
with the sweep that spawned them.
Executors: ``"sequential"`` (in this process), ``"processes"`` (local spawned processes, the
default) and Dask distributed (a ``dask.distributed.Client`` or a scheduler address ``"tcp://..."``).
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import itertools
import multiprocessing
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from fedlab._validation import check_bool, check_choice, check_int
from fedlab.engine.device import ALLOCATOR_ENV
from fedlab.engine.replicas import lockstep
from fedlab.experiments.store import ResultStore, config_key, function_name, to_jsonable

__all__ = ["grid", "sweep", "SweepError", "EXECUTORS", "KEEP_WORKERS_ENV", "close_workers"]

_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "FEDLAB_NUM_THREADS")
_DASK_HINT = "pip install 'fedlab-workbook[scale]'"


class SweepError(RuntimeError):
    """Raised at the end of a sweep when some runs failed; the successful ones are stored.

    Attributes
    ----------
    failures : list of dict
        ``{"config", "seed", "key", "error", "traceback"}`` per failed run.
    records : list of dict
        The successful records, in the sweep's order.
    """

    def __init__(self, failures: list[dict], records: list[dict]) -> None:
        self.failures = failures
        self.records = records
        lines = [f"{len(failures)} run(s) failed (the {len(records)} successful run(s) are kept; "
                 "re-running the sweep retries only the failed ones):"]
        for f in failures[:20]:
            lines.append(f"  config={f['config']!r} seed={f['seed']}: {f['error']}")
        if len(failures) > 20:
            lines.append(f"  ... and {len(failures) - 20} more (see SweepError.failures)")
        super().__init__("\n".join(lines))


# ----------------------------------------------------------------------------------------- grids

def _axis_values(name: str, values: Any) -> list:
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"grid axis {name!r} must be 1-D, got an array of shape {values.shape}.")
        values = values.tolist()
    elif isinstance(values, (list, tuple, range)):
        values = list(values)
    else:  # a scalar (or a string, a dict, ...) is a fixed value
        values = [values]
    if not values:
        raise ValueError(f"grid axis {name!r} is empty; every axis needs at least one value.")
    return values


def _one_grid(axes: Mapping) -> list[dict]:
    if not isinstance(axes, Mapping):
        raise TypeError(f"grid takes dicts of axes, got {type(axes).__name__}.")
    if not axes:
        raise ValueError("grid needs at least one axis, e.g. grid(lr=[0.1, 0.01]); got an empty grid.")
    for name in axes:
        if not isinstance(name, str):
            raise TypeError(f"grid axis names must be strings, got {name!r}.")
        if name == "seed":
            raise ValueError("'seed' cannot be a grid axis: pass the seeds to sweep(..., seeds=...).")
    names = list(axes)
    columns = [_axis_values(n, axes[n]) for n in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*columns)]


def grid(axes: Mapping | Sequence[Mapping] | None = None, /, **kwargs: Any) -> list[dict]:
    """Cartesian product of parameter axes, as a list of config dicts.

    Parameters
    ----------
    axes : dict or list of dict, optional
        Axes as a dict ``{name: values}``, or a list of such dicts whose grids are concatenated
        (like scikit-learn's ``ParameterGrid``). Mutually exclusive with ``**kwargs``.
    **kwargs
        Axes as keywords, ``name=values``. ``values`` is a list, tuple, range or 1-D array; any other
        value (number, string, dict) is a fixed value.

    Returns
    -------
    list of dict
        One dict per combination; the last axis varies fastest.

    Examples
    --------
    >>> grid(lr=[0.1, 0.01], mu=[0, 1])
    [{'lr': 0.1, 'mu': 0}, {'lr': 0.1, 'mu': 1}, {'lr': 0.01, 'mu': 0}, {'lr': 0.01, 'mu': 1}]
    >>> grid([{"method": "fedavg"}, {"method": "fedprox", "mu": [0.1, 1.0]}])
    [{'method': 'fedavg'}, {'method': 'fedprox', 'mu': 0.1}, {'method': 'fedprox', 'mu': 1.0}]
    """
    if axes is not None and kwargs:
        raise TypeError("grid takes either a dict/list of dicts or keyword axes, not both.")
    if axes is None:
        return _one_grid(kwargs)
    if isinstance(axes, Mapping):
        return _one_grid(axes)
    if isinstance(axes, (list, tuple)):
        if not axes:
            raise ValueError("axes is an empty list of grids.")
        return [c for g in axes for c in _one_grid(g)]
    raise TypeError(f"axes must be a dict or a list of dicts, got {type(axes).__name__}.")


# ------------------------------------------------------------------------------------ one run

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _limit_threads(n: int) -> None:
    for name in _THREAD_ENV:
        os.environ.setdefault(name, str(n))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(int(os.environ["FEDLAB_NUM_THREADS"]))


def _execute(fn: Callable, config: dict, seed: int, threads: int | None = None) -> dict:
    """Run ``fn(**config, seed=seed)`` and return an outcome dict; never raises an ``Exception``."""
    if threads is not None:
        _limit_threads(threads)
    started, t0 = _now(), time.perf_counter()
    try:
        result = to_jsonable(fn(**config, seed=seed), "result")
        outcome = {"ok": True, "result": result}
    except Exception as err:
        outcome = {"ok": False, "error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()}
    outcome["meta"] = {"wall_time_s": time.perf_counter() - t0, "started_at": started,
                       "finished_at": _now(), "host": socket.gethostname(), "pid": os.getpid()}
    return outcome


def _execute_unit(fn: Callable, config: dict, seeds: list[int], threads: int | None = None) -> list[dict]:
    """:func:`_execute` for each seed; several seeds run as replicas in lockstep (:func:`fedlab.engine.lockstep`),
    their local training merged (each outcome's wall time is then the group's)."""
    if len(seeds) == 1:
        return [_execute(fn, config, seeds[0], threads)]
    if threads is not None:
        _limit_threads(threads)
    return lockstep([lambda s=s: _execute(fn, config, s) for s in seeds])


def _failure(message: str) -> dict:
    return {"ok": False, "error": message, "traceback": "", "meta": {}}


@dataclass(frozen=True)
class _Task:
    index: int
    config: dict
    seed: int
    key: str


# -------------------------------------------------------------------------------- executors

def _units(tasks: Iterator[_Task], size: int) -> Iterator[list[_Task]]:
    """Consecutive tasks of one config, at most ``size`` at a time (a unit of work: its seeds run in lockstep)."""
    unit: list[_Task] = []
    for task in tasks:
        if unit and (len(unit) == size or task.config is not unit[0].config):
            yield unit
            unit = []
        unit.append(task)
    if unit:
        yield unit


def _finish(unit: list[_Task], outcomes: list[dict], on_done: Callable) -> None:
    for task, outcome in zip(unit, outcomes):
        on_done(task, outcome)


def _run_sequential(fn: Callable, units: Iterator[list[_Task]], on_done: Callable, max_workers: int | None) -> None:
    for unit in units:
        _finish(unit, _execute_unit(fn, unit[0].config, [t.seed for t in unit]), on_done)


@contextlib.contextmanager
def _worker_env():
    """Set single-thread variables and :data:`ALLOCATOR_ENV` (unless already set) while child processes are spawned."""
    wanted = {**dict.fromkeys(_THREAD_ENV, "1"), **ALLOCATOR_ENV}
    added = [name for name in wanted if name not in os.environ]
    for name in added:
        os.environ[name] = wanted[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _exit_with_parent(parent: int) -> None:
    """Make this worker die with the sweep's process: PDEATHSIG on Linux, and a watchdog thread anywhere."""
    import ctypes
    import signal
    import threading

    with contextlib.suppress(Exception):  # Linux: the kernel kills us when the parent dies
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="fedlab-exit-with-parent", daemon=True).start()


def _init_worker(parent: int) -> None:
    """A worker dies with the sweep's process, runs one thread, and leaves Ctrl-C to it (the sweep stops its workers;
    an idle kept worker would otherwise print a KeyboardInterrupt when a Jupyter kernel is interrupted or shut down)."""
    import signal

    _exit_with_parent(parent)
    _limit_threads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_MAIN_GUARD_HINT = ("if the sweep is started from a script, protect its entry point with "
                    "`if __name__ == \"__main__\":` (worker processes import the script again)")


def _check_not_bootstrapping() -> None:
    """Refuse to start workers from a worker that is still importing the main script (no ``__main__`` guard)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(f"sweep(executor='processes') was called while a worker process imported the main "
                           f"script: {_MAIN_GUARD_HINT}.")


def _windowed(submit: Callable, wait_any: Callable, units: Iterator[list[_Task]], on_done: Callable,
              window: int) -> None:
    """Keep at most ``window`` units in flight, pulling the next unit (and so its claims) only when a slot frees."""
    in_flight: dict = {}

    def start(unit: list[_Task]) -> None:
        try:
            in_flight[submit(unit)] = unit
        except Exception as err:  # a broken pool refuses new work
            _finish(unit, [_outcome_of(err)] * len(unit), on_done)

    for unit in itertools.islice(units, window):
        start(unit)
    while in_flight:
        for fut in wait_any(list(in_flight)):
            unit = in_flight.pop(fut)
            try:
                outcomes = fut.result()
            except Exception as err:
                outcomes = [_outcome_of(err)] * len(unit)
            _finish(unit, outcomes, on_done)
            for nxt in itertools.islice(units, 1):
                start(nxt)


def _outcome_of(err: Exception) -> dict:
    """The failure outcome of a run whose worker died or could not take it."""
    if isinstance(err, BrokenProcessPool):
        hint = f"; {_MAIN_GUARD_HINT}" if getattr(sys.modules.get("__main__"), "__file__", None) else ""
        return _failure(f"worker process died ({type(err).__name__}: {err}); runs that had not finished are lost, "
                        f"finished ones are stored{hint}")
    return _failure(f"{type(err).__name__}: {err}")  # e.g. arguments that cannot be pickled, dask's KilledWorker


KEEP_WORKERS_ENV = "FEDLAB_KEEP_WORKERS"
"""When this variable is ``1``, the ``"processes"`` executor keeps its workers from one sweep to the next in this
process, so that a notebook's sweeps start them once (headless workbook runs set it). Kept workers are replaced when
the worker count, the environment or ``sys.path`` changes, and after an error; they hold the package as it was
when they started, so an interactive session that edits the package leaves the variable unset."""

_KEPT: dict = {}
"""The kept pool (``"pool"``) and what it was started with (``"key"``)."""


def _pool(n: int) -> ProcessPoolExecutor:
    """``n`` spawned workers: the kept ones when :data:`KEEP_WORKERS_ENV` is set and they still fit, else new ones
    (kept for the next sweep when the variable is set)."""
    key = (n, tuple(sorted(os.environ.items())), tuple(sys.path))
    kept = _KEPT.get("pool")
    if kept is not None and _KEPT["key"] == key and not getattr(kept, "_broken", False):
        return kept
    close_workers()
    pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(os.getpid(),))
    if os.environ.get(KEEP_WORKERS_ENV) == "1":
        _KEPT.update(pool=pool, key=key)
    return pool


def close_workers() -> None:
    """Stop the workers kept between sweeps (see :data:`KEEP_WORKERS_ENV`), if any."""
    pool = _KEPT.pop("pool", None)
    _KEPT.pop("key", None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_processes(fn: Callable, units: Iterator[list[_Task]], on_done: Callable, max_workers: int | None) -> None:
    _check_not_bootstrapping()
    n = max_workers or os.cpu_count() or 1
    with _worker_env():
        pool = _pool(n)
        interrupted = True
        try:
            _windowed(lambda u: pool.submit(_execute_unit, fn, u[0].config, [t.seed for t in u], 1),
                      lambda futs: wait(futs, return_when=FIRST_COMPLETED).done, units, on_done, n)
            interrupted = False
        finally:
            if interrupted:  # Ctrl-C or an error while saving: do not wait for the running tasks
                for proc in list(getattr(pool, "_processes", {}).values()):
                    proc.terminate()
                if _KEPT.get("pool") is pool:
                    _KEPT.clear()
            if interrupted or _KEPT.get("pool") is not pool:
                pool.shutdown(wait=not interrupted, cancel_futures=True)


def _run_dask(client: Any, fn: Callable, units: Iterator[list[_Task]], on_done: Callable) -> None:
    from distributed import wait as dask_wait

    window = max(1, sum(client.nthreads().values()))
    submitted: list = []

    def submit(unit: list[_Task]):
        fut = client.submit(_execute_unit, fn, unit[0].config, [t.seed for t in unit], 1, pure=False)
        submitted.append(fut)
        return fut

    try:
        _windowed(submit, lambda futs: dask_wait(futs, return_when="FIRST_COMPLETED").done, units, on_done, window)
    except BaseException:
        client.cancel(submitted)
        raise


EXECUTORS = {"sequential": _run_sequential, "processes": _run_processes}
"""Local executors by name; a dask ``Client`` or a ``"tcp://..."`` address selects Dask."""


def _import_dask_client():
    try:
        from distributed import Client
    except ImportError as err:
        raise ImportError(f"the Dask executor needs dask.distributed: {_DASK_HINT}") from err
    return Client


def _resolve_executor(executor: Any) -> tuple[str, Any]:
    """Return ``(kind, client_or_address)`` with kind in EXECUTORS or ``"dask"``."""
    if isinstance(executor, str):
        if "://" in executor:
            _import_dask_client()
            return "dask", executor
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {sorted(EXECUTORS)}, a dask.distributed.Client or a "
                             f"scheduler address such as 'tcp://127.0.0.1:8786', got {executor!r}.")
        return executor, None
    if type(executor).__module__.split(".")[0] == "distributed":
        if isinstance(executor, _import_dask_client()):
            return "dask", executor
    raise TypeError(f"executor must be a string ({sorted(EXECUTORS)} or 'tcp://host:port') or a "
                    f"dask.distributed.Client, got {type(executor).__name__}.")


def _check_fn(fn: Any, kind: str) -> None:
    if not callable(fn):
        raise TypeError(f"fn must be a callable, got {type(fn).__name__}.")
    if kind == "sequential":
        return
    hint = ("define it at the top level of a .py module and import it, or use executor='sequential'")
    if not inspect.isfunction(fn):
        raise TypeError(f"fn must be a module-level function to run in worker processes, got a "
                        f"{type(fn).__name__} ({fn!r}); put fixed arguments into the configs and {hint}.")
    module, qualname = fn.__module__, fn.__qualname__
    if "<lambda>" in qualname or "<locals>" in qualname:
        raise TypeError(f"fn {module}.{qualname} is a lambda or a nested function (closure), which worker "
                        f"processes cannot import; {hint}.")
    if module == "__main__":
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        if kind == "processes" and not (main_file and os.path.isfile(main_file)):
            raise TypeError(f"fn {qualname} is defined in a notebook or interactive session, which spawned "
                            f"worker processes cannot import; {hint}.")
        return
    obj: Any = None
    with contextlib.suppress(Exception):
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    if obj is not fn:
        raise TypeError(f"fn {module}.{qualname} cannot be imported by that name in a worker; {hint}.")


def _check_call(fn: Callable, configs: list[dict]) -> None:
    """Every run's call ``fn(**config, seed=seed)`` must match ``fn``'s parameters (checked before any run)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: its runs will say
        return
    for i, config in enumerate(configs):
        try:
            signature.bind(**config, seed=0)
        except TypeError as err:
            raise TypeError(f"fn cannot be called as fn(**configs[{i}], seed=...): {err}.") from None


def _check_seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
        seeds = [seeds]
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be an integer or a list of integers, got {seeds!r}.")
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(seeds)]
    if not seeds:
        raise ValueError("seeds must contain at least one seed, got an empty list.")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {seeds}.")
    return seeds


def _check_replicas(replicas: Any, n_seeds: int) -> int:
    """The number of seeds per unit of work: 1 without replicas, all seeds for ``True``, else the int given."""
    if isinstance(replicas, bool):
        return max(1, n_seeds) if replicas else 1
    return check_int("replicas", replicas, low=1)


def _check_configs(configs: Any) -> list[dict]:
    if isinstance(configs, Mapping):
        configs = [configs]
    if not isinstance(configs, (list, tuple)):
        raise TypeError(f"configs must be a list of dicts (e.g. from grid(...)), got {type(configs).__name__}.")
    if not configs:
        raise ValueError("configs is empty: nothing to run (did the grid have an empty axis?).")
    out = []
    for i, config in enumerate(configs):
        if not isinstance(config, Mapping):
            raise TypeError(f"configs[{i}] must be a dict, got {type(config).__name__}.")
        if "seed" in config:
            raise ValueError(f"configs[{i}] contains 'seed'; pass the seeds separately via seeds=.")
        to_jsonable(config, f"configs[{i}]")
        out.append(dict(config))
    return out


RESULTS_ENV = "FEDLAB_RESULTS"  # default store of every sweep when set
_POLL_S = 0.2  # how often a sweep checks on runs that another sweep computes


def _wait_for_others(deferred: list[_Task], store: ResultStore | None, take_stored: Callable) -> list[_Task]:
    """Wait until every run claimed by another sweep has a record; return those whose claim was given up
    without a record (the other sweep died or the run failed there), to be computed here."""
    pending, free = list(deferred), []
    while pending:
        still = []
        for task in pending:
            if take_stored(task):
                continue
            held = store.claim(task.key)
            if held is None:
                still.append(task)
            else:
                held.release(done=False)
                free.append(task)
        pending = still
        if pending:
            time.sleep(_POLL_S)
    return free


def _as_store(store: Any) -> ResultStore | None:
    if store is None:
        shared = os.environ.get(RESULTS_ENV)
        return ResultStore(shared) if shared else None
    if isinstance(store, ResultStore):
        return store
    if isinstance(store, (str, os.PathLike)):
        return ResultStore(store)
    raise TypeError(f"store must be None, a folder path or a ResultStore, got {type(store).__name__}.")


# -------------------------------------------------------------------------------------- sweep

def sweep(fn: Callable, configs: Sequence[Mapping] | Mapping, seeds: Iterable[int] | int, *,
          store: ResultStore | str | os.PathLike | None = None, executor: Any = "processes",
          max_workers: int | None = None, progress: bool = True, on_error: str = "raise",
          replicas: bool | int = False) -> list[dict]:
    """Run ``fn(**config, seed=seed)`` for every config and seed, skipping runs already stored.

    Each result is saved to ``store`` as soon as its run finishes, so an interrupted sweep resumes
    where it stopped: re-running it executes only the missing runs and loses or duplicates nothing.

    Parameters
    ----------
    fn : callable
        Returns a JSON-serialisable result (numpy arrays/scalars are converted). Must be a
        module-level function of an importable module unless ``executor="sequential"``.
    configs : list of dict or dict
        Keyword arguments of ``fn`` (e.g. from :func:`grid`), without ``seed``.
    seeds : int or iterable of int
        Distinct non-negative seeds; each config runs once per seed.
    store : ResultStore, path or None
        Where results persist. ``None``: the folder named by the environment variable
        ``FEDLAB_RESULTS`` if it is set (the workbook's full mode sets it, so re-running reuses every
        finished run), else nothing is saved and everything runs.
    executor : {"processes", "sequential"}, dask.distributed.Client or str
        ``"processes"``: local spawned processes (one torch/BLAS thread each); ``"sequential"``: in
        this process; a ``Client`` or a scheduler address ``"tcp://host:port"``: Dask distributed
        (``pip install 'fedlab-workbook[scale]'``).
    max_workers : int, optional
        Number of local processes (default ``os.cpu_count()``); ignored by the other executors.
    progress : bool
        Show a ``tqdm.auto`` progress bar (silent when ``TQDM_DISABLE=1``).
    replicas : bool or int
        Run the seeds of a config as replicas of one population (:func:`fedlab.engine.lockstep`): their local
        training is merged into one stacked call per round, and each seed's result is the one it has alone (bit for
        bit with an explicit engine backend). ``True``: all of a config's missing seeds in one unit of work; an int:
        at most that many. ``False`` (default): one run per unit.
    on_error : {"raise", "collect"}
        A failing run never stops the others. ``"raise"``: raise :class:`SweepError` at the end,
        listing the failures. ``"collect"``: return the failed runs as records with
        ``"result": None`` and an ``"error"`` message.

    Returns
    -------
    list of dict
        ``{"config", "seed", "result", "key"}`` per run, in the order configs x seeds (the config
        and result as stored in JSON, e.g. tuples as lists).

    Raises
    ------
    SweepError
        When runs failed and ``on_error="raise"``; its ``records`` hold the successful runs.
    """
    check_choice("on_error", on_error, ("raise", "collect"))
    if max_workers is not None:
        max_workers = check_int("max_workers", max_workers, low=1)
    kind, target = _resolve_executor(executor)
    _check_fn(fn, kind)
    configs = _check_configs(configs)
    seeds = _check_seeds(seeds)
    progress = check_bool("progress", progress)
    unit_size = _check_replicas(replicas, len(seeds))
    store = _as_store(store)
    _check_call(fn, configs)
    name = function_name(fn)

    tasks, records, seen = [], [], {}
    for i, config in enumerate(configs):
        plain = to_jsonable(config, f"configs[{i}]")
        for seed in seeds:
            key = config_key(plain, seed, name)
            if key in seen:
                raise ValueError(f"configs[{i}] duplicates configs[{seen[key]}] ({plain!r}); configs must be "
                                 "distinct.")
            seen[key] = i
            records.append({"config": plain, "seed": seed, "result": None, "key": key})
            stored = store._read(key) if store is not None else None
            if stored is not None:
                records[-1]["result"] = stored["result"]
            else:
                tasks.append(_Task(len(records) - 1, config, seed, key))

    failures: list[dict] = []
    claims: dict[str, Any] = {}
    bar = tqdm(total=len(records), initial=len(records) - len(tasks), unit="run",
               desc=f"sweep {getattr(fn, '__name__', 'fn')}", **({} if progress else {"disable": True}))

    def take_stored(task: _Task) -> bool:
        """Fill the task's record from the store when another sweep has saved it meanwhile."""
        stored = store._read(task.key) if store is not None else None
        if stored is not None:
            records[task.index]["result"] = stored["result"]
            bar.update(1)
        return stored is not None

    def claimed(queue: list[_Task], deferred: list[_Task]) -> Iterator[_Task]:
        """The tasks of ``queue`` this sweep may compute, claimed one at a time; the others go to ``deferred``."""
        for task in queue:
            if store is None:
                yield task
                continue
            held = store.claim(task.key)
            if held is None:  # another live process computes it
                deferred.append(task)
            elif take_stored(task):
                held.release(done=True)
            else:
                claims[task.key] = held
                yield task

    def on_done(task: _Task, outcome: dict) -> None:
        record = records[task.index]
        if outcome["ok"]:
            if store is not None:
                meta = {**outcome["meta"], "executor": kind}
                store.save(record["config"], outcome["result"], meta, seed=task.seed, fn=name)
            record["result"] = outcome["result"]
        else:
            record["error"] = outcome["error"]
            failures.append({"config": record["config"], "seed": task.seed, "key": task.key,
                             "error": outcome["error"], "traceback": outcome["traceback"]})
            bar.set_postfix(failed=len(failures))
        if task.key in claims:
            claims.pop(task.key).release(done=outcome["ok"])
        bar.update(1)

    def run_all(queue: list[_Task]) -> list[_Task]:
        deferred: list[_Task] = []
        if kind == "dask":
            client, own = target, isinstance(target, str)
            if own:
                client = _import_dask_client()(target, set_as_default=False)
            try:
                _run_dask(client, fn, _units(claimed(queue, deferred), unit_size), on_done)
            finally:
                if own:
                    client.close()
        else:
            EXECUTORS[kind](fn, _units(claimed(queue, deferred), unit_size), on_done, max_workers)
        return deferred

    try:
        queue = tasks
        while queue:
            deferred = run_all(queue)
            queue = _wait_for_others(deferred, store, take_stored)
    finally:
        for held in claims.values():
            held.release(done=False)
        bar.close()

    if failures and on_error == "raise":
        failures.sort(key=lambda f: seen[f["key"]] * len(seeds) + seeds.index(f["seed"]))
        raise SweepError(failures, [r for r in records if "error" not in r])
    return records
