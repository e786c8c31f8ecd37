"""Plots shared by the chapters: label histograms, learning curves with seed bands, the client-drift picture."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array

__all__ = ["figure_axes", "plot_label_histograms", "plot_curves", "plot_client_drift"]


def figure_axes(ax=None, figsize=(5, 3.4)):
    """``(fig, ax)``: a new figure of size ``figsize`` when ``ax`` is None, else ``ax`` and its figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def plot_label_histograms(histograms, *, ax=None, title: str | None = None):
    """Stacked bars of each client's label counts ``(K, C)``; returns ``(fig, data)``."""
    import matplotlib.pyplot as plt

    h = check_array("histograms", histograms, ndim=2, nonnegative=True)
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
    fig, ax = figure_axes(ax)
    data = {}
    for label, (x, runs) in curves.items():
        runs = np.atleast_2d(np.asarray(runs, dtype=float))
        mean, std = runs.mean(0), runs.std(0)
        ax.plot(x, mean, label=label)
        ax.fill_between(x, mean - std, mean + std, alpha=0.2)
        data[label] = {"x": np.asarray(x), "mean": mean, "std": std}
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig, data


def plot_client_drift(clients, server, local, *, optimum=None, fixed_point=None, ax=None, title=None):
    """The drift picture: clients' local paths (thin), server iterates (thick), optimum and fixed point."""
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
