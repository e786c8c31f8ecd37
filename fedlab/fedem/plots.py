"""Plots of the FedEM chapter; every ``plot_*`` returns ``(fig, data)`` with the plotted arrays."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_int
from fedlab.gmm import responsibilities
from fedlab.plots import figure_axes

__all__ = ["plot_gmm_em", "plot_method_bars", "plot_effect_of_m", "plot_simplex", "simplex_coordinates"]


def plot_gmm_em(x, states, history, iteration: int, *, axes=None):
    """EM on a 2-D Gaussian mixture at one iteration: points coloured by responsibility, means, 2σ circles,
    and the log-likelihood curve.

    Parameters
    ----------
    x : array (n, 2)
        The samples of the (single) client.
    states : list of GMMState
        The iterates of :func:`fedlab.gmm.federated_gmm_em`.
    history : History
        Its ``log_likelihood`` record.
    iteration : int
        In ``[0, len(states) - 1]``.
    axes : pair of matplotlib axes, optional

    Returns
    -------
    fig, data
        ``data`` holds ``means`` (M, 2), ``weights`` (M,), ``variances`` (M,), ``assignment`` (n,),
        ``log_likelihood`` (n_iter + 1,) and ``iteration``.
    """
    import matplotlib.pyplot as plt

    x = check_array("x", x, ndim=2)
    if x.shape[1] != 2:
        raise ValueError(f"x must have 2 columns, got {x.shape[1]}.")
    last = len(states) - 1
    it = check_int("iteration", iteration, low=0, high=last)
    _, ll = history.curve("log_likelihood")
    if len(ll) != last + 1:
        raise ValueError(f"history must record the log-likelihood of the {last + 1} states, got {len(ll)} values.")
    state = states[it]
    means, var, w = state.means, state.variances, state.weights[0]
    assign = responsibilities(x, w, means, var)[0].argmax(-1)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    else:
        fig = axes[0].figure
    ax, ax_ll = axes
    colors = plt.get_cmap("tab10")
    ax.scatter(x[:, 0], x[:, 1], c=[colors(a % 10) for a in assign], s=6, alpha=0.5)
    t = np.linspace(0, 2 * np.pi, 100)
    for m, (mu, v) in enumerate(zip(means, var)):
        ax.plot(mu[0], mu[1], "kx", ms=10, mew=2)
        ax.plot(mu[0] + 2 * np.sqrt(v) * np.cos(t), mu[1] + 2 * np.sqrt(v) * np.sin(t), color=colors(m % 10))
        ax.annotate(f"π={w[m]:.2f}", mu, xytext=(5, 5), textcoords="offset points", fontsize=8)
    ax.set_title(f"EM iteration {it}")
    ax.set_aspect("equal", adjustable="datalim")
    ax_ll.plot(np.arange(last + 1), ll, "-", color="tab:blue")
    ax_ll.plot([it], [ll[it]], "o", color="tab:red")
    ax_ll.set_xlabel("iteration")
    ax_ll.set_ylabel("mean log-likelihood")
    fig.tight_layout()
    return fig, {"means": means, "weights": w, "variances": var, "assignment": assign,
                 "log_likelihood": ll, "iteration": it}


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


def plot_effect_of_m(m_values, average, bottom_decile, *, highlight: int | None = None, ax=None, scale: float = 100.0):
    """Average and bottom-decile accuracy against the number of components M (mean ± std over seeds).

    Parameters
    ----------
    m_values : array (L,)
    average, bottom_decile : arrays (n_seeds, L) or (L,)
    highlight : int, optional
        An M value to mark.
    """
    fig, ax = figure_axes(ax, (4.8, 3.4))
    m = np.asarray(m_values)
    data = {"M": m}
    for label, runs in (("average", average), ("bottom decile", bottom_decile)):
        runs = scale * np.atleast_2d(np.asarray(runs, dtype=float))
        mean, std = runs.mean(0), runs.std(0)
        ax.errorbar(m, mean, yerr=std, marker="o", capsize=3, label=label)
        data[label] = {"mean": mean, "std": std}
    if highlight is not None:
        ax.axvline(highlight, color="grey", ls=":", lw=1)
        data["highlight"] = int(highlight)
    ax.set_xlabel("number of components M")
    ax.set_ylabel("test accuracy (%)")
    ax.set_xticks(m)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig, data


def simplex_coordinates(pi) -> np.ndarray:
    """Barycentric points of the 2-simplex ``(n, 3)`` -> planar coordinates ``(n, 2)`` of an equilateral triangle."""
    pi = check_array("pi", pi, ndim=2, nonnegative=True)
    if pi.shape[1] != 3:
        raise ValueError(f"pi must have 3 columns (M = 3), got {pi.shape[1]}.")
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    return (pi / pi.sum(1, keepdims=True)) @ corners


def plot_simplex(pi_true, pi_learned=None, *, ax=None, title: str | None = None):
    """Clients' mixture weights on the triangle (M = 3): true π* (circles) and learned π (crosses), joined."""
    fig, ax = figure_axes(ax, (4.2, 3.8))
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2], [0.0, 0.0]])
    ax.plot(corners[:, 0], corners[:, 1], "k-", lw=0.8)
    for i, c in enumerate(corners[:3]):
        ax.annotate(f"m={i}", c, xytext=(-6 if i == 0 else 4, -12 if i < 2 else 4), textcoords="offset points")
    true_xy = simplex_coordinates(pi_true)
    ax.scatter(true_xy[:, 0], true_xy[:, 1], s=18, facecolor="none", edgecolor="tab:blue", label="true π*")
    data = {"true": true_xy}
    if pi_learned is not None:
        learned_xy = simplex_coordinates(pi_learned)
        ax.scatter(learned_xy[:, 0], learned_xy[:, 1], s=14, marker="x", color="tab:red", label="learned π")
        for a, b in zip(true_xy, learned_xy):
            ax.plot([a[0], b[0]], [a[1], b[1]], color="grey", lw=0.5)
        data["learned"] = learned_xy
    ax.set_aspect("equal")
    ax.axis("off")
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    if title:
        ax.set_title(title)
    return fig, data
