"""Experiment functions of the primer notebook (module level, so sweep workers can import them), and the per-seed
values of a sweep that the chapter's claims judge.

The methods are the core registry's ``METHODS["fedavg"]``, ``["local"]`` and ``["centralized"]``
(:data:`fedlab.algorithms.METHODS`).
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from fedlab._validation import check_array, check_choice, check_int, check_real, check_type
from fedlab.algorithms import METHODS
from fedlab.engine import LocalSGD, run
from fedlab.models import LinearModel
from fedlab.primer.data import digits_federation

__all__ = ["DIGITS_METHODS", "train_on_digits", "rounds_to_reach", "seed_values", "seed_curves",
           "seed_rounds_to_reach"]

DIGITS_METHODS = ("fedavg", "local", "centralized")
"""The registry methods :func:`train_on_digits` compares (FedAvg takes the participation fraction)."""

RUN_KEY = ("method", "alpha", "local_steps")
"""The config fields that name a run of the primer's sweep."""


def train_on_digits(*, method: str, alpha: float, local_steps: int, participation: float, rounds: int,
                    n_clients: int, lr: float = 0.5, batch_size: int = 16, seed: int = 0) -> dict:
    """Train a softmax regression with ``METHODS[method]`` on the digits federation; return curves and final
    metrics (``n_test``: the clients' test-set sizes).

    Examples
    --------
    >>> out = train_on_digits(method="fedavg", alpha=1.0, local_steps=1, participation=1.0, rounds=3, n_clients=5)
    >>> out["rounds"], 0.0 <= out["final_accuracy"] <= 1.0
    ([0, 1, 2, 3], True)
    """
    check_choice("method", method, DIGITS_METHODS)
    check_real("participation", participation, low=0, high=1, low_open=True)
    check_int("rounds", rounds, low=0)
    solver = LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size)
    data = digits_federation(n_clients, alpha, seed)
    options = {"participation": participation} if method == "fedavg" else {}
    _, history = run(METHODS.build(method, LinearModel(64, 10), solver, **options), data, rounds=rounds, seed=seed,
                     progress=False)
    rounds_axis, acc = history.curve("test_accuracy")
    return {"rounds": rounds_axis.tolist(), "test_accuracy": acc.tolist(),
            "train_loss": history.curve("train_loss")[1].tolist(),
            "final_accuracy": float(acc[-1]),
            "bottom_decile": history.final("test_accuracy", "bottom_decile"), "n_test": data.test.n.tolist()}


def rounds_to_reach(rounds, accuracy, target: float) -> float:
    """First round at which ``accuracy`` reaches ``target`` (``inf`` if never)."""
    rounds = check_array("rounds", rounds, ndim=1)
    hit = np.flatnonzero(check_array("accuracy", accuracy, shape=rounds.shape) >= check_real("target", target))
    return float(rounds[hit[0]]) if hit.size else float("inf")


def _check_records(records) -> list[Mapping]:
    """``records`` as a list of sweep records of :func:`train_on_digits` (``config`` with :data:`RUN_KEY`, ``seed``,
    ``result``), else an error naming ``records``."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be a list of sweep records, got {type(records).__name__}.")
    records = list(records)
    if not records:
        raise ValueError("records must hold at least one sweep record.")
    for i, r in enumerate(records):
        check_type(f"records[{i}]", r, Mapping)
        missing = [k for k in ("config", "seed", "result") if k not in r]
        missing += [f"config[{k!r}]" for k in RUN_KEY if k not in r.get("config", {})]
        if missing:
            raise ValueError(f"records[{i}] is not a train_on_digits sweep record: it lacks {missing}.")
    return records


def _by_run(records: list[Mapping], value) -> dict[tuple, list[float]]:
    """``{(method, alpha, local_steps): [value(result) per seed, in increasing seed order]}``."""
    out: dict[tuple, list[tuple[int, float]]] = {}
    for r in records:
        out.setdefault(tuple(r["config"][k] for k in RUN_KEY), []).append((r["seed"], value(r["result"])))
    return {key: [v for _, v in sorted(pairs)] for key, pairs in out.items()}


def seed_values(records, metric: str) -> dict[tuple, list[float]]:
    """The per-seed values of a scalar ``metric`` of :func:`train_on_digits` (``"final_accuracy"``,
    ``"bottom_decile"``), ``{(method, alpha, local_steps): [value per seed]}`` in increasing seed order (so that the
    runs of two configs are paired by seed: same split, same sampling).

    >>> recs = [{"config": {"method": "fedavg", "alpha": 1.0, "local_steps": 5}, "seed": s,
    ...          "result": {"final_accuracy": 0.5 + s / 10}} for s in (1, 0)]
    >>> seed_values(recs, "final_accuracy")
    {('fedavg', 1.0, 5): [0.5, 0.6]}
    """
    records = _check_records(records)
    check_choice("metric", metric, ("final_accuracy", "bottom_decile"))
    return _by_run(records, lambda result: float(result[metric]))


def seed_curves(records) -> tuple[list, dict[tuple, list[list[float]]]]:
    """``(rounds, curves)``: the evaluation rounds and, per run, the test-accuracy curve of every seed,
    ``{(method, alpha, local_steps): [curve per seed]}`` keyed and ordered as :func:`seed_values`."""
    records = _check_records(records)
    return list(records[0]["result"]["rounds"]), _by_run(records, lambda result: list(result["test_accuracy"]))


def seed_rounds_to_reach(records, target: float) -> dict[tuple, list[float]]:
    """Per seed, the first round at which the run's test accuracy reaches ``target`` (``inf`` if never), keyed and
    ordered as :func:`seed_values`."""
    records = _check_records(records)
    target = check_real("target", target, low=0, high=1)
    return _by_run(records, lambda result: rounds_to_reach(result["rounds"], result["test_accuracy"], target))
