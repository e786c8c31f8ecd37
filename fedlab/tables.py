"""Tables and statistics for the notebooks: markdown tables, ``mean ± std``, paired t statistics, power-law fits.

Examples
--------
>>> print(markdown_table(["method", "|Δ| (pp)"], [["FedAvg", 0.5], ["a|b", None]]))
| method | \\|Δ\\| (pp) |
|---|---|
| FedAvg | 0.5 |
| a\\|b |  |
>>> mean_pm_std((91.234, 0.456))
'91.23 ± 0.46'
>>> paired_direction(1.5, 0.5, n=5)
'significant gain'
>>> paired_direction(1.5, 1.0, n=3)          # t = 2.1 < 4.30, the 95 % critical value with 2 degrees of freedom
'inconclusive'
>>> [round(v, 2) for v in mean_interval([1.0, 2.0, 3.0])]
[2.0, -0.48, 4.48]
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np
from scipy import stats

from fedlab._validation import check_array, check_int, check_real

__all__ = ["markdown_table", "show_table", "mean_pm_std", "paired_t", "t_critical", "mean_interval",
           "paired_direction", "loglog_slope"]


def _cell(value: Any) -> str:
    """One cell's text: ``None`` is empty, a ``|`` is escaped so that it cannot split the row."""
    return "" if value is None else str(value).replace("|", r"\|")


def _check_cells(name: str, value: Any) -> Sequence:
    """A sequence (a list, tuple or array; not a string) of cells or rows."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a list of cells, got {type(value).__name__}.")
    return value


def markdown_table(header: Sequence, rows: Sequence[Sequence]) -> str:
    """A GitHub-flavoured markdown table; every row must have as many cells as ``header``."""
    header = list(_check_cells("header", header))
    if not header:
        raise ValueError("header must name at least one column.")
    lines = ["| " + " | ".join(map(_cell, header)) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(_check_cells("rows", rows)):
        row = list(_check_cells(f"rows[{i}]", row))
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header has {len(header)}.")
        lines.append("| " + " | ".join(map(_cell, row)) + " |")
    return "\n".join(lines)


def show_table(header: Sequence, rows: Sequence[Sequence]) -> None:
    """Display :func:`markdown_table` in a notebook (rendered markdown)."""
    from IPython.display import Markdown, display

    display(Markdown(markdown_table(header, rows)))


def mean_pm_std(ms: tuple[float, float] | None, digits: int = 2) -> str:
    """``"m ± s"`` of a ``(mean, std)`` pair with ``digits`` decimals; ``"n/a"`` when absent or not finite."""
    digits = check_int("digits", digits, low=0)
    if ms is None:
        return "n/a"
    if not isinstance(ms, (tuple, list, np.ndarray)) or len(ms) != 2:
        raise TypeError(f"ms must be a (mean, std) pair or None, got {ms!r}.")
    mean, std = ms
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in ms) or std < 0:
        raise ValueError(f"ms must hold a mean and a non-negative std, got {ms!r}.")
    if not np.isfinite(mean):
        return "n/a"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def paired_t(mean: float, std: float, n: int) -> float:
    r"""Paired t statistic :math:`\bar d / (s/\sqrt{n-1})` of a difference measured on ``n`` seeds.

    ``std`` is the population standard deviation of the ``n`` paired differences (``np.std``); a zero spread gives
    :math:`\pm\infty` (or 0 for a zero mean).
    """
    mean, std = check_real("mean", mean), check_real("std", std, low=0)
    n = check_int("n", n, low=1)
    if std == 0:
        return float(np.sign(mean) * np.inf) if mean else 0.0
    return mean / (std / np.sqrt(max(n - 1, 1)))


def t_critical(n: int, level: float = 0.95) -> float:
    """Two-sided Student-t critical value for a mean over ``n`` values (``n - 1`` degrees of freedom); infinite for
    ``n = 1``, where no interval can be formed."""
    n, level = check_int("n", n, low=1), check_real("level", level, low=0, high=1, low_open=True, high_open=True)
    return float(stats.t.ppf(0.5 + level / 2, n - 1)) if n > 1 else float("inf")


def mean_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    r"""``(mean, low, high)``: the mean of ``values`` (one per seed) and its Student-t confidence interval
    :math:`\bar x \pm t_{n-1} s / \sqrt n`, ``s`` the sample standard deviation (``ddof = 1``).

    One value gives an infinite interval: a single seed cannot bound its own noise.
    """
    values = check_array("values", values, ndim=1)
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"values must hold at least one finite number per seed, got {values.tolist()!r}.")
    mean = float(values.mean())
    if values.size == 1:
        return mean, -float("inf"), float("inf")
    half = t_critical(values.size, level) * float(values.std(ddof=1)) / np.sqrt(values.size)
    return mean, float(mean - half), float(mean + half)


def paired_direction(mean: float, std: float, n: int, *, negligible: float = 0.2, level: float = 0.95) -> str:
    """Verdict on a paired difference over ``n`` seeds: ``"≈ 0"`` below ``negligible`` in absolute value, else a
    significant gain or loss when ``|t|`` (:func:`paired_t`) exceeds the Student-t critical value with ``n - 1``
    degrees of freedom (:func:`t_critical`), else ``"inconclusive"``: the seeds cannot tell the sign."""
    negligible = check_real("negligible", negligible, low=0)
    if abs(check_real("mean", mean)) < negligible:
        return "≈ 0"
    t, critical = paired_t(mean, std, n), t_critical(n, level)
    return "significant gain" if t > critical else ("significant loss" if t < -critical else "inconclusive")


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (the exponent of a power law y ∝ x^a)."""
    x = check_array("x", x, ndim=1)
    y = check_array("y", y, ndim=1, shape=(x.size,))
    if x.size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("loglog_slope needs at least two points with positive x and y.")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
