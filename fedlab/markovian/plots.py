"""Plots of notebook 09 (streaming FL with Markovian data); each returns ``(fig, data)``."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_bool, check_type
from fedlab.plots import figure_axes

__all__ = ["plot_log_curves", "plot_loglog", "plot_curve_panels", "plot_batch_crossover"]


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
    """Curves ``{label: y}`` (or ``{label: runs (n_seeds, len(x))}``: their mean, in a band from the lowest to the
    highest run) on a log y-axis."""
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


def plot_curve_panels(x, panels: dict, *, ncols: int = 3, xlabel: str = "round", ylabel: str = "",
                      styles: dict | None = None, title: str | None = None):
    """A grid of :func:`plot_log_curves` panels, ``{panel title: {label: y or runs}}``, sharing the y-axis.

    Returns ``(fig, data)`` with ``data[panel title]`` the panel's data (``{label: {"x", "mean"}}``).
    """
    import matplotlib.pyplot as plt

    check_type("panels", panels, dict)
    if not panels:
        raise ValueError("panels must hold at least one panel.")
    if isinstance(ncols, bool) or not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"ncols must be an integer >= 1, got {ncols!r}.")
    ncols = min(int(ncols), len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.3 * nrows), sharey=True, squeeze=False)
    data = {}
    for ax, (name, curves) in zip(axes.ravel(), panels.items()):
        _, data[name] = plot_log_curves(x, curves, ax=ax, xlabel=xlabel, ylabel=ylabel, styles=styles)
        ax.set_title(str(name), fontsize=9)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig, data


def plot_batch_crossover(k_over_tau, ratios: dict, *, labels=None, band=(0.5, 2.0), ax=None, title: str | None = None):
    r"""Floor ratio independent / dependent batches against :math:`K/\tau` (one line per mixing time), the band of
    "similar" floors shaded and :math:`K = \tau` marked (paper Fig. 7 and where it holds).

    Parameters
    ----------
    k_over_tau : array (n_tau, n_k)
        :math:`K/\tau` of every point (positive).
    ratios : dict algorithm -> array (n_tau, n_k)
        One panel per algorithm (``ax`` only with a single algorithm).
    labels : list of n_tau str, optional
    band : (low, high)
    """
    import matplotlib.pyplot as plt

    x = check_array("k_over_tau", k_over_tau, ndim=2)
    if np.any(x <= 0):
        raise ValueError("k_over_tau must be positive for a log axis.")
    _series("ratios", ratios, None)
    labels = [f"τ {i}" for i in range(x.shape[0])] if labels is None else list(labels)
    if len(labels) != x.shape[0]:
        raise ValueError(f"labels must name the {x.shape[0]} mixing times, got {len(labels)}.")
    lo, hi = check_array("band", band, shape=(2,))
    if not 0 < lo < hi:
        raise ValueError(f"band must be (low, high) with 0 < low < high, got {band!r}.")
    if ax is not None and len(ratios) > 1:
        raise ValueError("ax draws a single panel: give one algorithm in ratios, or no ax.")
    if ax is None:
        fig, axes = plt.subplots(1, len(ratios), figsize=(4.6 * len(ratios), 3.4), sharey=True, squeeze=False)
        axes = axes.ravel()
    else:
        fig, ax = figure_axes(ax)
        axes = [ax]
    data = {"k_over_tau": x}
    for a, (name, values) in zip(axes, ratios.items()):
        y = check_array(f"ratios[{name!r}]", values, shape=x.shape)
        if np.any(y <= 0):
            raise ValueError(f"ratios[{name!r}] must be positive for a log axis.")
        a.axhspan(lo, hi, color="0.9", zorder=0, label=f"similar: ratio in [{lo:g}, {hi:g}]")
        a.axvline(1.0, color="k", lw=0.8, ls="--")
        for i, label in enumerate(labels):
            a.plot(x[i], y[i], "o-", label=label)
        a.axhline(1.0, color="k", lw=0.6)
        a.set(xscale="log", yscale="log", xlabel=r"$K/\tau$", title=str(name))
        data[name] = y
    axes[0].set_ylabel("floor ratio independent / dependent")
    axes[0].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig, data
