"""Plots of the FedEM chapter; every ``plot_*`` returns ``(fig, data)`` with the plotted arrays."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_simplex, check_type
from fedlab.engine import History
from fedlab.gmm import GMMState, responsibilities
from fedlab.plots import check_axes, figure_axes

__all__ = ["plot_gmm_em", "plot_effect_of_m", "plot_simplex", "simplex_coordinates", "plot_clustered_tolerance"]


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
    if not isinstance(states, list) or not states or not all(isinstance(s, GMMState) for s in states):
        raise TypeError("states must be the non-empty list of GMMState of federated_gmm_em.")
    check_type("history", history, History)
    if "log_likelihood" not in history.clients:
        raise ValueError("history must record the log-likelihood (the History of federated_gmm_em).")
    check_axes("axes", axes, n=2)
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


def plot_effect_of_m(m_values, average, bottom_decile, *, highlight: int | None = None, ax=None, scale: float = 100.0):
    """Average and bottom-decile accuracy against the number of components M (mean ± std over seeds).

    Parameters
    ----------
    m_values : array (L,)
    average, bottom_decile : arrays (n_seeds, L) or (L,)
    highlight : int, optional
        An M value to mark.
    """
    m = check_array("m_values", m_values, ndim=1)
    if m.size == 0 or np.any(m < 1) or np.any(m != np.round(m)):
        raise ValueError(f"m_values must hold numbers of components (integers >= 1), got {m.tolist()}.")
    curves = {}
    for label, name, runs in (("average", "average", average), ("bottom decile", "bottom_decile", bottom_decile)):
        curves[label] = np.atleast_2d(check_array(name, runs))
        if curves[label].ndim != 2 or curves[label].shape[1] != m.size:
            raise ValueError(f"{name} must have shape (n_seeds, {m.size}) or ({m.size},), got {np.shape(runs)}.")
        if np.any((curves[label] < 0) | (curves[label] > 1)):
            raise ValueError(f"{name} must hold accuracies in [0, 1].")
    if highlight is not None:
        check_int("highlight", highlight, low=1)
    scale = check_real("scale", scale, low=0, low_open=True)
    fig, ax = figure_axes(ax, (4.8, 3.4))
    data = {"M": m}
    for label, runs in curves.items():
        runs = scale * runs
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
    return _planar("pi", pi)


def _planar(name: str, pi) -> np.ndarray:
    pi = check_simplex(name, pi, ndim=2, size=3)
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    return (pi / pi.sum(1, keepdims=True)) @ corners


def plot_simplex(pi_true, pi_learned=None, *, ax=None, title: str | None = None):
    """Clients' mixture weights on the triangle (M = 3): true π* (circles) and learned π (crosses), joined."""
    true_xy = _planar("pi_true", pi_true)
    if len(true_xy) == 0:
        raise ValueError("pi_true must hold at least one client.")
    learned_xy = None if pi_learned is None else _planar("pi_learned", pi_learned)
    if learned_xy is not None and learned_xy.shape != true_xy.shape:
        raise ValueError(f"pi_learned must have the shape of pi_true {np.shape(pi_true)}, got {np.shape(pi_learned)}.")
    fig, ax = figure_axes(ax, (4.2, 3.8))
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2], [0.0, 0.0]])
    ax.plot(corners[:, 0], corners[:, 1], "k-", lw=0.8)
    for i, c in enumerate(corners[:3]):
        ax.annotate(f"m={i}", c, xytext=(-6 if i == 0 else 4, -12 if i < 2 else 4), textcoords="offset points")
    ax.scatter(true_xy[:, 0], true_xy[:, 1], s=18, facecolor="none", edgecolor="tab:blue", label="true π*")
    data = {"true": true_xy}
    if learned_xy is not None:
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


def plot_clustered_tolerance(tol_2, average, n_clusters, *, references=None, ax=None, scale: float = 100.0):
    r"""Clustered FL against its split tolerance :math:`\text{tol}_2` (log axis): average accuracy (mean ± std over
    seeds, left axis) and the number of clusters found (right axis), with horizontal ``references``
    (``{label: accuracy}``, e.g. FedAvg and FedEM).

    Parameters
    ----------
    tol_2 : array (G,)
    average, n_clusters : arrays (S, G)
        Per seed and tolerance.

    Returns ``(fig, data)`` with ``tol_2``, ``mean``, ``std``, ``clusters`` (seed mean) and ``references``.
    """
    tol = check_array("tol_2", tol_2, ndim=1, nonnegative=True)
    avg = np.atleast_2d(check_array("average", average))
    ncl = np.atleast_2d(check_array("n_clusters", n_clusters, nonnegative=True))
    if tol.size == 0:
        raise ValueError("tol_2 must hold at least one tolerance.")
    if avg.shape[1] != tol.size or ncl.shape != avg.shape:
        raise ValueError(f"average and n_clusters must have shape (seeds, {tol.size}), got {avg.shape} and {ncl.shape}.")
    refs = dict(check_type("references", references, dict, optional=True) or {})
    for label, v in refs.items():
        check_real(f"references[{label!r}]", v)
    check_real("scale", scale, low=0, low_open=True)
    fig, ax = figure_axes(ax, (5.5, 3.4))
    mean, std = scale * avg.mean(0), scale * avg.std(0)
    ax.errorbar(tol, mean, yerr=std, marker="o", capsize=2, color="tab:blue", label="Clustered FL")
    for i, (label, v) in enumerate(refs.items()):
        ax.axhline(scale * v, ls="--", lw=1, color=f"C{i + 1}", label=label)
    ax.set(xscale="log", xlabel=r"split tolerance tol$_2$ (tol$_1$ fixed)", ylabel="average test accuracy")
    ax.legend(fontsize=7, loc="lower left")
    twin = ax.twinx()
    clusters = ncl.mean(0)
    twin.step(tol, clusters, where="mid", color="0.4")
    twin.set_ylabel("clusters found", color="0.4")
    return fig, {"tol_2": tol, "mean": mean, "std": std, "clusters": clusters,
                 "references": {k: scale * float(v) for k, v in refs.items()}}
