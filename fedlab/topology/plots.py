"""Plots of the topology chapter: overlays on a map, cycle-time bars, sweeps, timelines, training curves.

Every ``plot_*`` returns ``(fig, data)`` where ``data`` holds the plotted arrays.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from fedlab._validation import check_array, check_bool, check_real, check_type
from fedlab.plots import figure_axes
from fedlab.topology.delays import overlay_arcs
from fedlab.topology.data import Connectivity

__all__ = ["layout_positions", "plot_overlay", "plot_cycle_times", "plot_sweep", "plot_timeline", "plot_training",
           "plot_bandwidths"]


def layout_positions(conn) -> np.ndarray:
    """2-D coordinates of the silos: ``(longitude, latitude)`` when known, else classical MDS.

    Classical MDS is applied to the routed distances (or latencies) of the connectivity graph.

    Returns
    -------
    numpy.ndarray, shape (N, 2)
    """
    check_type("conn", conn, Connectivity)
    if conn.positions is not None:
        return np.asarray(conn.positions, dtype=float)[:, ::-1]
    D = conn.distance_km if conn.distance_km is not None else conn.latency_ms
    D = (D + D.T) / 2
    n = D.shape[0]
    J = np.eye(n) - np.ones((n, n)) / n
    B = -0.5 * J @ (D ** 2) @ J
    vals, vecs = np.linalg.eigh(B)
    top = np.argsort(vals)[::-1][:2]
    return vecs[:, top] * np.sqrt(np.maximum(vals[top], 0.0))


def plot_overlay(conn, overlay: nx.DiGraph, *, ax=None, title: str | None = None):
    """Draw an overlay over the underlay: undirected edges as lines, one-way arcs as arrows.

    Parameters
    ----------
    conn : fedlab.topology.Connectivity
    overlay : networkx.DiGraph
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data`` has ``positions`` (N, 2), ``edges`` (two-way pairs), ``arcs`` (one-way arcs)
        and ``underlay_edges``.
    """
    overlay_arcs(overlay, conn)
    fig, ax = figure_axes(ax, (5, 4))
    pos = layout_positions(conn)
    under = np.array(list(conn.underlay.edges()), dtype=int).reshape(-1, 2) if conn.underlay is not None \
        else np.zeros((0, 2), dtype=int)
    for u, v in under:
        ax.plot(pos[[u, v], 0], pos[[u, v], 1], color="0.85", lw=0.6, zorder=1)
    arcs = {(u, v) for u, v in overlay.edges if u != v}
    edges = np.array(sorted({tuple(sorted(a)) for a in arcs if a[::-1] in arcs}), dtype=int).reshape(-1, 2)
    one_way = np.array(sorted(a for a in arcs if a[::-1] not in arcs), dtype=int).reshape(-1, 2)
    for u, v in edges:
        ax.plot(pos[[u, v], 0], pos[[u, v], 1], color="tab:blue", lw=1.4, zorder=2)
    for u, v in one_way:
        ax.annotate("", xy=pos[v], xytext=pos[u], zorder=2,
                    arrowprops={"arrowstyle": "-|>", "color": "tab:red", "lw": 1.2, "shrinkA": 3, "shrinkB": 3})
    server = overlay.graph.get("server")
    colors = ["tab:orange" if i == server else "k" for i in range(conn.n)]
    ax.scatter(pos[:, 0], pos[:, 1], s=14, c=colors, zorder=3)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title or overlay.graph.get("name", "overlay"), fontsize=9)
    return fig, {"positions": pos, "edges": edges, "arcs": one_way, "underlay_edges": under}


def plot_cycle_times(table: dict, *, paper: dict | None = None, ax=None, logy: bool = True):
    """Grouped bars of cycle times: ``table[network][overlay]`` in ms; paper values as markers.

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data`` has ``networks``, ``overlays``, ``values`` (n_networks, n_overlays) and
        ``paper`` (same shape, ``nan`` where absent).
    """
    _check_table("table", table)
    if paper is not None:
        _check_table("paper", paper)
    logy = check_bool("logy", logy)
    fig, ax = figure_axes(ax, (8, 3.4))
    networks = list(table)
    overlays = list(dict.fromkeys(o for row in table.values() for o in row))
    values = np.array([[table[n].get(o, np.nan) for o in overlays] for n in networks], dtype=float)
    ref = np.array([[(paper or {}).get(n, {}).get(o, np.nan) for o in overlays] for n in networks], dtype=float)
    width = 0.8 / len(overlays)
    x = np.arange(len(networks))
    for j, name in enumerate(overlays):
        xs = x - 0.4 + (j + 0.5) * width
        ax.bar(xs, values[:, j], width, label=name)
        if paper is not None:
            ax.scatter(xs, ref[:, j], marker="_", color="k", s=60, zorder=3,
                       label="paper" if j == 0 else None)
    ax.set_xticks(x, networks, rotation=15, ha="right")
    ax.set_ylabel("cycle time (ms)")
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=4)
    return fig, {"networks": networks, "overlays": overlays, "values": values, "paper": ref}


def _check_table(name: str, table) -> None:
    """Cycle times ``table[network][overlay]``: a non-empty dict of dicts of positive finite numbers (ms)."""
    check_type(name, table, dict)
    if not table or not all(isinstance(row, dict) and row for row in table.values()):
        raise ValueError(f"{name} must map each network to a non-empty dict overlay -> cycle time (ms).")
    for network, row in table.items():
        for overlay, value in row.items():
            check_real(f"{name}[{network!r}][{overlay!r}]", value, low=0.0, low_open=True)


def plot_sweep(x, curves: dict, *, ax=None, xlabel: str = "", ylabel: str = "cycle time (ms)",
               logx: bool = True, logy: bool = True):
    """One line per overlay over a swept parameter (e.g. access capacity, Fig. 2.9; s, Fig. 2.10).

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data`` has ``x`` and ``curves`` (name -> array).
    """
    x = check_array("x", x, ndim=1)
    check_type("curves", curves, dict)
    if not curves:
        raise ValueError("curves must hold at least one curve.")
    checked = {name: check_array(f"curves[{name!r}]", y, shape=(x.size,)) for name, y in curves.items()}
    logx, logy = check_bool("logx", logx), check_bool("logy", logy)
    fig, ax = figure_axes(ax)
    data = {"x": x, "curves": {}}
    for name, y in checked.items():
        ax.plot(x, y, marker="o", ms=3, label=name)
        data["curves"][name] = y
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    return fig, data


def plot_timeline(t, tau: float | None = None, *, ax=None):
    """Average time per round :math:`t_i(k)/k` of every silo, converging to the cycle time.

    Parameters
    ----------
    t : array_like, shape (K + 1, N)
        Simulated times (e.g. from ``simulate_wall_clock``).
    tau : float, optional
        Cycle time drawn as a dashed line.

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data`` has ``k`` (K,), ``per_round`` (K, N) and ``tau``.
    """
    t = check_array("t", t, ndim=2, nonnegative=True)
    if t.shape[0] < 2 or t.shape[1] < 1:
        raise ValueError(f"t must hold at least one round after t[0] for one silo, got shape {t.shape}.")
    if tau is not None:
        check_real("tau", tau, low=0.0, low_open=True)
    fig, ax = figure_axes(ax)
    k = np.arange(1, t.shape[0])
    per_round = t[1:] / k[:, None]
    ax.plot(k, per_round, color="tab:blue", lw=0.6, alpha=0.5)
    if tau is not None:
        ax.axhline(tau, color="k", ls="--", lw=1, label=f"cycle time {tau:.1f} ms")
        ax.legend(fontsize=8)
    ax.set(xlabel="round k", ylabel="t_i(k) / k (ms)")
    return fig, {"k": k, "per_round": per_round, "tau": tau}


def _check_training(result) -> dict:
    check_type("result", result, dict)
    curves = result.get("curves")
    if not isinstance(curves, dict) or not curves:
        raise ValueError("result must be a train_overlays result with at least one curve.")
    return curves


def plot_training(result: dict, metric: str = "train_loss", *, axes=None, title: str | None = None):
    """A metric of each overlay against communication rounds and against wall-clock time (Fig. 2.8, C.1-C.14).

    Parameters
    ----------
    result : dict
        From :func:`fedlab.topology.train_overlays`.
    metric : str
        ``"train_loss"``, ``"train_accuracy"``, ``"test_loss"`` or ``"test_accuracy"``.
    axes : pair of matplotlib Axes, optional
        Left: against rounds; right: against wall-clock time (log scale).
    title : str, optional
        Prefix of both panel titles.

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data[name]`` has ``round``, ``time_s`` and ``values`` (arrays at the evaluated rounds).
    """
    import matplotlib.pyplot as plt

    curves = _check_training(result)
    check_type("metric", metric, str)
    if any(metric not in c for c in curves.values()):
        raise ValueError(f"metric {metric!r} is not recorded in result.")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    else:
        if len(axes) != 2:
            raise ValueError(f"axes must be two matplotlib Axes, got {len(axes)}.")
        fig = axes[0].figure
    data = {}
    for name, c in curves.items():
        data[name] = {"round": np.asarray(c["round"]), "time_s": np.asarray(c["time_s"]),
                      "values": np.asarray(c[metric], dtype=float)}
        axes[0].plot(data[name]["round"], data[name]["values"], label=name)
        axes[1].plot(np.maximum(data[name]["time_s"], 1e-3), data[name]["values"], label=name)
    axes[0].set(xlabel="communication rounds", ylabel=metric)
    axes[1].set(xlabel="wall-clock time (s)", ylabel=metric, xscale="log")
    if title:
        axes[0].set_title(f"{title}: against rounds", fontsize=9)
        axes[1].set_title(f"{title}: against wall-clock time", fontsize=9)
    axes[1].legend(fontsize=8)
    return fig, data


def plot_bandwidths(conn, *, ax=None, title: str | None = None):
    """Histogram of the available bandwidth :math:`A(i',j')` between pairs of silos (Fig. 2.3a).

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        ``data`` has ``mbps`` (the available bandwidth of every ordered pair of distinct silos, Mbit/s),
        and the distinct ``values`` with their ``counts``.
    """
    check_type("conn", conn, Connectivity)
    pairs = conn.arcs & ~np.eye(conn.n, dtype=bool)
    mbps = conn.available_bps[pairs] / 1e6
    if not np.all(np.isfinite(mbps)):
        raise ValueError("conn must have finite available bandwidths (an underlay routed with core links).")
    values, counts = np.unique(np.round(mbps, 1), return_counts=True)
    fig, ax = figure_axes(ax)
    ax.bar([f"{v:g}" for v in values], counts, color="tab:blue")
    ax.set(xlabel="available bandwidth A(i', j') (Mbit/s)", ylabel="ordered silo pairs")
    ax.tick_params(axis="x", labelsize=7, rotation=45)
    if title:
        ax.set_title(title, fontsize=9)
    return fig, {"mbps": mbps, "values": values, "counts": counts}
