"""Plots of notebook 09 (streaming FL with Markovian data); each returns ``(fig, data)``."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_bool, check_type
from fedlab.plots import figure_axes

__all__ = ["plot_log_curves", "plot_loglog"]


def _series(name: str, series, styles) -> None:
    """``series`` a non-empty dict label -> values, ``styles`` None or a dict label -> dict of plot keywords."""
    check_type(name, series, dict)
    if not series:
        raise ValueError(f"{name} must hold at least one curve.")
    check_type("styles", styles, dict, optional=True)
    for label, style in (styles or {}).items():
        check_type(f"styles[{label!r}]", style, dict)


def plot_log_curves(x, curves: dict, *, ax=None, xlabel: str = "round", ylabel: str = "", logy: bool = True,
                    styles: dict | None = None):
    """Curves ``{label: y}`` (or ``{label: runs (n_seeds, len(x))}``, drawn as mean ± std) on a log y-axis."""
    x = check_array("x", x, ndim=1)
    _series("curves", curves, styles)
    logy = check_bool("logy", logy)
    fig, ax = figure_axes(ax, (5.2, 3.6))
    data = {}
    for label, y in curves.items():
        runs = np.atleast_2d(check_array(f"curves[{label!r}]", y))
        if runs.shape[1] != x.size:
            raise ValueError(f"curve {label!r} has {runs.shape[1]} points, x has {x.size}.")
        mean = runs.mean(0)
        style = (styles or {}).get(label, {})
        line, = ax.plot(x, mean, label=label, **style)
        if runs.shape[0] > 1:
            lo, hi = runs.min(0), runs.max(0)
            ax.fill_between(x, lo, hi, alpha=0.15, color=line.get_color())
        data[label] = {"x": x, "mean": mean}
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    return fig, data


def plot_loglog(x, ys: dict, *, ax=None, xlabel: str = "", ylabel: str = "", fit: bool = True,
                styles: dict | None = None):
    """Log-log points ``{label: y (n_x,) or (n_rep, n_x)}`` with a least-squares power-law fit; slopes in ``data``."""
    x = check_array("x", x, ndim=1)
    if np.any(x <= 0):
        raise ValueError("x must be positive for a log-log plot.")
    _series("ys", ys, styles)
    fit = check_bool("fit", fit)
    fig, ax = figure_axes(ax, (5.2, 3.6))
    data = {"x": x, "slopes": {}}
    for label, y in ys.items():
        runs = np.atleast_2d(check_array(f"ys[{label!r}]", y))
        if np.any(runs <= 0):
            raise ValueError(f"ys[{label!r}] must be positive for a log-log plot.")
        if runs.shape[1] != x.size:
            raise ValueError(f"series {label!r} has {runs.shape[1]} points, x has {x.size}.")
        mean = runs.mean(0)
        style = (styles or {}).get(label, {})
        slope = float(np.polyfit(np.log(x), np.log(mean), 1)[0]) if fit and x.size > 1 else float("nan")
        line, = ax.plot(x, mean, "o-", label=f"{label} (slope {slope:.2f})" if fit else label, **style)
        if runs.shape[0] > 1:
            ax.vlines(x, runs.min(0), runs.max(0), color=line.get_color(), alpha=0.4)
        data[label] = mean
        data["slopes"][label] = slope
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    return fig, data
