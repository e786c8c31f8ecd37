"""Sweeps: grid -> runs, a resumable on-disk result store, local or Dask executors, seed aggregates.

Examples
--------
>>> from fedlab.experiments import grid, sweep, aggregate_seeds   # doctest: +SKIP
>>> records = sweep(train, grid(lr=[0.1, 0.01]), seeds=[0, 1, 2], store="results/ch2")  # doctest: +SKIP
>>> aggregate_seeds(records, "accuracy")                          # doctest: +SKIP
"""
from fedlab.experiments.aggregate import aggregate_seeds, group_by_config, to_table
from fedlab.experiments.store import ResultStore, config_key, function_name, to_jsonable
from fedlab.experiments.sweep import EXECUTORS, KEEP_WORKERS_ENV, SweepError, close_workers, grid, sweep

__all__ = [
    "ResultStore",
    "to_jsonable",
    "config_key",
    "function_name",
    "grid",
    "sweep",
    "SweepError",
    "EXECUTORS",
    "KEEP_WORKERS_ENV",
    "close_workers",
    "aggregate_seeds",
    "group_by_config",
    "to_table",
]
