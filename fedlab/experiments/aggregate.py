r"""Mean and standard deviation across seeds of sweep records, and printable table rows.

For a config run with seeds :math:`s = 1..S` and a metric :math:`m_s` (a number or a curve),
:math:`\bar m = \frac1S \sum_s m_s` and
:math:`\hat\sigma = \sqrt{\frac{1}{S - \mathrm{ddof}} \sum_s (m_s - \bar m)^2}`, elementwise for curves.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from fedlab._validation import check_int

__all__ = ["aggregate_seeds", "to_table"]

Metric = str | Callable[[Any], Any] | None


def _metric_name(metric: Metric) -> str:
    if metric is None:
        return "result"
    if isinstance(metric, str):
        return metric
    if callable(metric):
        return getattr(metric, "__name__", "metric")
    raise TypeError(f"metric must be None, a result key (str) or a callable, got {type(metric).__name__}.")


def _extract(result: Any, metric: Metric, config: Any) -> Any:
    if metric is None:
        return result
    if callable(metric):
        return metric(result)
    if not isinstance(result, Mapping) or metric not in result:
        available = sorted(result) if isinstance(result, Mapping) else type(result).__name__
        raise ValueError(f"metric {metric!r} is not in the result of config {config!r}; available: {available}.")
    return result[metric]


def _shape(value: Any) -> Any:
    try:
        return np.shape(value)
    except ValueError:
        return "ragged"


def _check_records(records: Any) -> Iterable:
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be an iterable of run records (dicts), got {type(records).__name__}.")
    return records


def group_by_config(records: Iterable[Mapping]) -> list[list[Mapping]]:
    """Records grouped by config (and function), seeds together, in first-appearance order.

    Records carrying an ``"error"`` (failed runs) are skipped; a record without ``"config"``, ``"seed"``
    and ``"result"`` raises a ``TypeError``.
    """
    groups: dict[str, list] = {}
    for i, record in enumerate(_check_records(records)):
        if not isinstance(record, Mapping) or any(k not in record for k in ("config", "seed", "result")):
            raise TypeError(f"records[{i}] must be a dict with 'config', 'seed' and 'result', got {record!r:.80}.")
        if "error" in record:
            continue
        key = json.dumps({"fn": record.get("fn"), "config": record["config"]}, sort_keys=True, default=str)
        groups.setdefault(key, []).append(record)
    return list(groups.values())


def aggregate_seeds(records: Iterable[Mapping], metric: Metric = None, *, ddof: int = 0) -> list[dict]:
    """Group records by config (ignoring the seed) and average a metric across seeds.

    Parameters
    ----------
    records : iterable of dict
        Records with ``"config"``, ``"seed"`` and ``"result"`` (from :func:`sweep` or
        ``ResultStore.records()``); records carrying an ``"error"`` are skipped.
    metric : str, callable or None
        ``result[metric]``, ``metric(result)``, or the result itself when None. Each value is a
        number or a curve (list of numbers, or nested lists of one shape across seeds).
    ddof : int
        Delta degrees of freedom of the std (0 as ``numpy.std``; 1 for the sample std).

    Returns
    -------
    list of dict
        Per config, in first-appearance order: ``{"config", "metric", "seeds", "n_seeds", "mean",
        "std"}`` with ``mean``/``std`` floats for scalars and numpy arrays (curve shape) for curves.
    """
    ddof = check_int("ddof", ddof, low=0)
    name = _metric_name(metric)
    groups = []
    for recs in group_by_config(records):
        seeds = [r["seed"] for r in recs]
        if len(set(seeds)) < len(seeds):
            raise ValueError(f"records hold a seed twice for config {recs[0]['config']!r}: {seeds}.")
        groups.append({"config": recs[0]["config"], "seeds": seeds,
                       "values": [_extract(r["result"], metric, r["config"]) for r in recs]})

    out = []
    for group in groups:
        try:
            values = np.asarray(group["values"], dtype=float)
        except (TypeError, ValueError) as err:
            shapes = [_shape(v) for v in group["values"]]
            raise ValueError(f"metric {name!r} of config {group['config']!r} must be numbers or curves of one "
                             f"length across seeds, got shapes {shapes}.") from err
        n = len(values)
        if n - ddof <= 0:
            raise ValueError(f"config {group['config']!r} has {n} seed(s), too few for ddof={ddof}.")
        mean, std = values.mean(axis=0), values.std(axis=0, ddof=ddof)
        if values.ndim == 1:
            mean, std = float(mean), float(std)
        out.append({"config": group["config"], "metric": name, "seeds": group["seeds"], "n_seeds": n,
                    "mean": mean, "std": std})
    return out


def to_table(records: Iterable[Mapping], metrics: Metric | Sequence[Metric], *, ddof: int = 0,
             digits: int | None = 4, point: int = -1) -> list[dict]:
    """Rows ``{**config, "n_seeds", "<metric>_mean", "<metric>_std", ...}`` for printing or a DataFrame.

    Parameters
    ----------
    records : iterable of dict
        As for :func:`aggregate_seeds`.
    metrics : str, callable or list of them
        Metrics to tabulate; for a curve the value at index ``point`` (default: the last) is used.
    ddof : int
        Delta degrees of freedom of the std.
    digits : int or None
        Round the numbers to this many decimals (None: no rounding).
    point : int
        Index into curves (1-D metrics).

    Returns
    -------
    list of dict
        One row per config, in first-appearance order.
    """
    records = list(_check_records(records))
    if isinstance(metrics, (str, type(None))) or callable(metrics):
        metrics = [metrics]
    if not isinstance(metrics, Sequence) or not metrics:
        raise ValueError(f"metrics must be a metric or a non-empty list of metrics, got {metrics!r}.")
    if digits is not None:
        digits = check_int("digits", digits, low=0)
    point = check_int("point", point)
    rows: dict[str, dict] = {}
    for metric in metrics:
        name = _metric_name(metric)
        for agg in aggregate_seeds(records, metric, ddof=ddof):
            row = rows.setdefault(json.dumps(agg["config"], sort_keys=True, default=str),
                                  {**agg["config"], "n_seeds": agg["n_seeds"]})
            for stat in ("mean", "std"):
                value = agg[stat]
                if isinstance(value, np.ndarray):
                    if value.ndim != 1:
                        raise ValueError(f"metric {name!r} has shape {value.shape}; to_table handles numbers "
                                         "and 1-D curves.")
                    value = float(value[check_int("point", point, low=-len(value), high=len(value) - 1)])
                row[f"{name}_{stat}"] = round(value, digits) if digits is not None else value
    return list(rows.values())
