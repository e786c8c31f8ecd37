"""Plots shared by the chapters: label histograms, learning curves with seed bands, the client-drift picture."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_type

__all__ = ["figure_axes", "check_axes", "plot_label_histograms", "plot_curves", "plot_method_bars", "plot_client_drift"]


def check_axes(name: str, value, n: int | None = None):
    """Return ``value`` when it is None, a matplotlib ``Axes`` or (with ``n``) a sequence of ``n`` of them, else
    raise a ``TypeError`` naming ``name``."""
    from matplotlib.axes import Axes

    if n is not None:
        check_int("n", n, low=1)
    if value is None or (n is None and isinstance(value, Axes)):
        return value
    if n is not None and not isinstance(value, (str, Axes)) and hasattr(value, "__len__") and len(value) == n \
            and all(isinstance(a, Axes) for a in np.ravel(np.asarray(value, dtype=object))):
        return value
    expected = "a matplotlib Axes" if n is None else f"a sequence of {n} matplotlib Axes"
    raise TypeError(f"{name} must be None or {expected}, got {type(value).__name__}.")


def figure_axes(ax=None, figsize=(5, 3.4)):
    """``(fig, ax)``: a new figure of size ``figsize`` when ``ax`` is None, else ``ax`` and its figure."""
    import matplotlib.pyplot as plt

    check_axes("ax", ax)
    check_array("figsize", figsize, shape=(2,))
    if min(figsize) <= 0:
        raise ValueError(f"figsize must be two positive sizes in inches, got {figsize!r}.")
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def plot_label_histograms(histograms, *, ax=None, title: str | None = None):
    """Stacked bars of each client's label counts ``(K, C)``; returns ``(fig, data)``."""
    import matplotlib.pyplot as plt

    h = check_array("histograms", histograms, ndim=2, nonnegative=True)
    if h.size == 0:
        raise ValueError(f"histograms must hold at least one client and one class, got shape {h.shape}.")
    fig, ax = figure_axes(ax, (6, 3))
    bottom = np.zeros(h.shape[0])
    colors = plt.get_cmap("tab10" if h.shape[1] <= 10 else "tab20")
    for c in range(h.shape[1]):
        ax.bar(np.arange(h.shape[0]), h[:, c], bottom=bottom, color=colors(c % colors.N), width=0.9)
        bottom += h[:, c]
    ax.set_xlabel("client")
    ax.set_ylabel("samples (colour = label)")
    if title:
        ax.set_title(title)
    return fig, {"histograms": h, "sizes": bottom}


def plot_curves(curves: dict, *, ax=None, xlabel: str = "round", ylabel: str = ""):
    """Mean ± std bands: ``curves[label] = (x, runs)`` with ``runs`` of shape (n_seeds, len(x))."""
    check_type("curves", curves, dict)
    checked = {label: _curve(label, entry) for label, entry in curves.items()}
    fig, ax = figure_axes(ax)
    data = {}
    for label, (x, runs) in checked.items():
        mean, std = runs.mean(0), runs.std(0)
        ax.plot(x, mean, label=label)
        ax.fill_between(x, mean - std, mean + std, alpha=0.2)
        data[label] = {"x": np.asarray(x), "mean": mean, "std": std}
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig, data


def _curve(label, entry) -> tuple[np.ndarray, np.ndarray]:
    """One entry ``(x, runs)`` of :func:`plot_curves`: runs (n_seeds, len(x)) (NaN marks a missing point)."""
    if not isinstance(entry, (tuple, list)) or len(entry) != 2:
        raise TypeError(f"curves[{label!r}] must be a pair (x, runs), got {type(entry).__name__}.")
    x = check_array(f"curves[{label!r}] x", entry[0], ndim=1)
    runs = np.atleast_2d(check_array(f"curves[{label!r}] runs", entry[1], finite=False))
    if runs.ndim != 2 or runs.shape[1] != x.size:
        raise ValueError(f"curves[{label!r}] runs must have shape (n_seeds, {x.size}), got {runs.shape}.")
    return x, runs


def plot_client_drift(clients, server, local, *, optimum=None, fixed_point=None, ax=None, title=None):
    """The drift picture: clients' local paths (thin), server iterates (thick), optimum and fixed point.

    ``clients`` has ``centers`` (K, 2); ``server`` (T, 2); ``local`` (T', K, steps, 2).
    """
    if not hasattr(clients, "centers"):
        raise TypeError(f"clients must have the client optima ``centers`` (K, 2), e.g. QuadraticClients, got "
                        f"{type(clients).__name__}.")
    centers = check_array("clients.centers", clients.centers, shape=(None, 2))
    server = check_array("server", server, shape=(None, 2))
    local = check_array("local", local, shape=(None, centers.shape[0], None, 2))
    if 0 in server.shape or 0 in local.shape:
        raise ValueError(f"server and local must hold at least one point, got shapes {server.shape} and "
                         f"{local.shape}.")
    for name, point in (("optimum", optimum), ("fixed_point", fixed_point)):
        if point is not None:
            check_array(name, point, shape=(2,))
    fig, ax = figure_axes(ax, (4.5, 4.2))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown"]
    for k in range(local.shape[1]):
        for t in range(local.shape[0]):
            ax.plot(local[t, k, :, 0], local[t, k, :, 1], color=colors[k % 5], lw=0.6, alpha=0.5)
        ax.scatter(*clients.centers[k], color=colors[k % 5], marker="s", s=40, label=f"client {k} optimum")
    ax.plot(server[:, 0], server[:, 1], "k.-", lw=1.5, ms=4, label="server iterates")
    if optimum is not None:
        ax.scatter(*optimum, color="red", marker="*", s=160, zorder=5, label="global optimum $w^*$")
    if fixed_point is not None:
        ax.scatter(*fixed_point, facecolor="none", edgecolor="k", s=120, zorder=5, label="FedAvg fixed point")
    ax.legend(fontsize=7, loc="best")
    if title:
        ax.set_title(title)
    return fig, {"server": server, "local": local, "optimum": optimum, "fixed_point": fixed_point}


def plot_method_bars(results: dict, *, metrics=("average", "bottom_decile"), ax=None, title: str | None = None,
                     scale: float = 100.0):
    """Grouped bars of per-seed scores, mean ± std across seeds.

    Parameters
    ----------
    results : dict
        ``results[method][metric]`` is a list of per-seed values (e.g. accuracies in [0, 1]).
    metrics : tuple of str
    scale : float
        Multiplier for display (100: percentages).

    Returns
    -------
    fig, data
        ``data[method][metric] = {"mean", "std", "values"}`` (scaled).
    """
    check_type("results", results, dict)
    metrics = check_type("metrics", metrics, (tuple, list))
    if not results or not metrics:
        raise ValueError("results and metrics must be non-empty.")
    for name, scores in results.items():
        check_type(f"results[{name!r}]", scores, dict)
        for metric in metrics:
            if metric not in scores:
                raise ValueError(f"metrics: results[{name!r}] has no {metric!r}, it has {sorted(scores)}.")
            check_array(f"results[{name!r}][{metric!r}]", scores[metric], ndim=1)
    scale = check_real("scale", scale, low=0, low_open=True)
    fig, ax = figure_axes(ax, (max(5.0, 0.8 * len(results) + 2), 3.4))
    methods = list(results)
    width = 0.8 / len(metrics)
    data: dict = {}
    for j, metric in enumerate(metrics):
        means, stds = [], []
        for name in methods:
            vals = scale * np.asarray(results[name][metric], dtype=float)
            data.setdefault(name, {})[metric] = {"mean": float(vals.mean()), "std": float(vals.std()),
                                                 "values": vals}
            means.append(vals.mean())
            stds.append(vals.std())
        pos = np.arange(len(methods)) + (j - (len(metrics) - 1) / 2) * width
        ax.bar(pos, means, width, yerr=stds, capsize=3, label=metric.replace("_", " "))
    ax.set_xticks(np.arange(len(methods)))
    ax.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("test accuracy (%)" if scale == 100 else "test accuracy")
    lo = min(d[m]["mean"] - d[m]["std"] for d in data.values() for m in metrics)
    ax.set_ylim(max(0.0, lo - 10), None)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig, data
