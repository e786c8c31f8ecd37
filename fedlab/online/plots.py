"""Plots of the online-mixtures chapter (thesis §4.4): regret curves with bounds, the bound panel, weight paths."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_bool, check_int, check_sequence, check_type
from fedlab.online.bounds import fem_omd_regret_bound, regret_crossover_horizon
from fedlab.plots import plot_curves
from fedlab.plots import figure_axes

__all__ = ["plot_regret", "plot_regret_panels", "plot_regret_bounds", "plot_weight_paths", "plot_paper_regret"]

PAPER_LABELS = {"fem_omd": "FEM-OMD", "fedomd": "FedOMD"}
"""The methods of the paper-mode figure (Fig. 4.10) and their labels."""


def plot_regret(curves: dict, *, bounds: dict | None = None, ax=None, loglog: bool = False, per_step: bool = False,
                title: str | None = None):
    r"""Average regret :math:`\bar R_t` (mean ± std over seeds) with optional bound curves (dashed).

    Parameters
    ----------
    curves : dict
        ``{label: (t, runs)}`` with ``runs`` of shape (n_seeds, T).
    bounds : dict, optional
        ``{label: (t, values)}``, drawn dashed.
    ax : matplotlib Axes, optional
    loglog : bool
        Logarithmic axes (a straight line of slope 1 is linear regret, 1/2 is :math:`\sqrt t`).
    per_step : bool
        Plot :math:`\bar R_t / t` instead of :math:`\bar R_t` (bounds are divided too).
    title : str, optional

    Returns
    -------
    fig, data
        ``data[label] = {"x", "mean", "std"}`` for the curves, ``data["bounds"][label] = {"x", "y"}``.
    """
    check_type("curves", curves, dict)
    if not curves:
        raise ValueError("curves must hold at least one {label: (t, runs)} entry.")
    check_type("bounds", bounds, dict, optional=True)
    for name, entries in (("curves", curves), ("bounds", bounds or {})):
        for label, entry in entries.items():
            if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
                raise TypeError(f"{name}[{label!r}] must be a pair (t, values), got {type(entry).__name__}.")
    loglog, per_step = check_bool("loglog", loglog), check_bool("per_step", per_step)
    fig, ax = figure_axes(ax)
    scaled = {}
    for label, (t, runs) in curves.items():
        t = check_array(f"curves[{label!r}] t", t, ndim=1)
        runs = np.atleast_2d(check_array(f"curves[{label!r}] runs", runs, finite=False))
        if runs.shape[1] != t.shape[0]:
            raise ValueError(f"curves[{label!r}]: runs have {runs.shape[1]} points, t has {t.shape[0]}.")
        scaled[label] = (t, runs / t if per_step else runs)
    _, data = plot_curves(scaled, ax=ax, xlabel="time step t", ylabel=r"$\bar R_t/t$" if per_step else r"$\bar R_t$")
    data["bounds"] = {}
    for label, (t, values) in (bounds or {}).items():
        t = check_array(f"bounds[{label!r}] t", t, ndim=1)
        y = check_array(f"bounds[{label!r}] values", values, shape=t.shape)
        y = y / t if per_step else y
        ax.plot(t, y, ls="--", lw=1.2, label=label)
        data["bounds"][label] = {"x": t, "y": y}
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=7)
    return fig, data


def plot_regret_panels(panels: dict, *, axes=None, loglog: bool = True, suptitle: str | None = None):
    r"""Side-by-side regret panels (e.g. the three of Fig. 4.9), each drawn by :func:`plot_regret`.

    Parameters
    ----------
    panels : dict
        ``{panel title: {label: (t, runs)}}`` with ``runs`` of shape (n_seeds, T).
    axes : sequence of matplotlib Axes, optional
        One per panel.
    loglog : bool
        Logarithmic axes.
    suptitle : str, optional

    Returns
    -------
    fig, data
        ``data[panel title]`` is :func:`plot_regret`'s data of that panel.
    """
    check_type("panels", panels, dict)
    if not panels:
        raise ValueError("panels must hold at least one {title: curves} entry.")
    for title, curves in panels.items():
        check_type(f"panels[{title!r}]", curves, dict)
        for label, entry in curves.items():
            name = f"panels[{title!r}][{label!r}]"
            if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
                raise TypeError(f"{name} must be a pair (t, runs), got {type(entry).__name__}.")
            t = check_array(f"{name} t", entry[0], ndim=1)
            runs = np.atleast_2d(check_array(f"{name} runs", entry[1], finite=False))
            if runs.shape[1] != t.shape[0]:
                raise ValueError(f"{name}: runs have {runs.shape[1]} points, t has {t.shape[0]}.")
    loglog = check_bool("loglog", loglog)
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.4), squeeze=False)
        axes = axes[0]
    else:
        axes = list(check_sequence("axes", axes, size=len(panels)))
        fig = axes[0].figure
    data = {}
    for ax, (title, curves) in zip(axes, panels.items()):
        _, data[title] = plot_regret(curves, ax=ax, loglog=loglog, title=title)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    return fig, data


def plot_regret_bounds(horizons, n_components: int, n_values, *, ax=None, **constants):
    r"""The bound of (4.42) against T for several n, with the crossovers.

    The curves are :math:`c_{omd}G\sqrt{T\log m} + D_{\mathcal X}c_{err}T/\sqrt n`.

    A vertical line marks, for each n, the horizon :math:`T^\times = n\log(m)/4` (default constants) beyond
    which the :math:`T/\sqrt n` term dominates (:func:`~fedlab.online.bounds.regret_crossover_horizon`).

    Parameters
    ----------
    horizons : array (H,)
        Positive horizons.
    n_components : int
    n_values : sequence of int
        Samples per step n.
    ax : matplotlib Axes, optional
    **constants
        ``grad_bound``, ``c_omd``, ``diam_x``, ``c_err`` of :func:`~fedlab.online.bounds.fem_omd_regret_bound`.

    Returns
    -------
    fig, data
        ``data[n] = {"T", "bound", "crossover"}``.
    """
    t = check_array("horizons", horizons, ndim=1)
    if t.size == 0 or np.any(t <= 0):
        raise ValueError(f"horizons must be a non-empty array of positive horizons, got {t.tolist()}.")
    m = check_int("n_components", n_components, low=1)
    check_sequence("n_values", n_values, nonempty=True)
    fig, ax = figure_axes(ax)
    data = {}
    for i, n in enumerate(n_values):
        n = check_int("n_values", n, low=1)
        bound = np.asarray(fem_omd_regret_bound(t, m, n, **constants), dtype=float)
        cross = regret_crossover_horizon(m, n, **constants)
        line, = ax.plot(t, bound, label=f"n = {n}")
        ax.axvline(cross, color=line.get_color(), ls=":", lw=1)
        data[n] = {"T": t, "bound": bound, "crossover": cross}
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("regret bound")
    ax.set_title(r"$\sqrt{T\log m} + 2T/\sqrt{n}$ (dotted: crossover $T = n\log(m)/4$)", fontsize=9)
    ax.legend(fontsize=7)
    return fig, data


def plot_weight_paths(pi, pi_star, *, ax=None, window: int = 20, title: str | None = None):
    r"""Played weights :math:`\pi_{t,c}` of one client against its environment :math:`\pi^*_{t,c}`.

    :math:`\pi^*` is drawn as dots (it is re-drawn every step) and as its running mean over ``window`` steps;
    the solid lines are the weights the client plays.

    Parameters
    ----------
    pi : array (T+1, m) or (T, m)
        Played weights (the last row, after the final step, is dropped when there are T+1 rows).
    pi_star : array (T, m)
    ax : matplotlib Axes, optional
    window : int
        Width of the running mean, >= 1.
    title : str, optional

    Returns
    -------
    fig, data
        ``{"t", "pi", "pi_star", "pi_star_smooth"}``.
    """
    ps = check_array("pi_star", pi_star, ndim=2, nonnegative=True)
    p = check_array("pi", pi, ndim=2, nonnegative=True)
    if p.shape[0] == ps.shape[0] + 1:
        p = p[:-1]
    if p.shape != ps.shape:
        raise ValueError(f"pi must have shape {ps.shape} (or one more row), got {np.shape(pi)}.")
    window = check_int("window", window, low=1)
    fig, ax = figure_axes(ax, (6, 3.2))
    t = np.arange(1, ps.shape[0] + 1)
    kernel = np.ones(window) / window
    smooth = np.stack([np.convolve(ps[:, j], kernel, mode="full")[: len(t)] / np.minimum(t, window) * window
                       for j in range(ps.shape[1])], axis=1)
    for j in range(ps.shape[1]):
        line, = ax.plot(t, p[:, j], lw=1.6, label=rf"$\pi_{{t,{j}}}$ played")
        ax.scatter(t, ps[:, j], s=4, color=line.get_color(), alpha=0.25)
        ax.plot(t, smooth[:, j], ls="--", lw=1, color=line.get_color())
    ax.set_xlabel("time step t")
    ax.set_ylabel("mixture weight")
    ax.set_ylim(-0.02, 1.02)
    default = rf"played $\pi_{{t,c}}$ (solid), $\pi^*_{{t,c}}$ (dots, dashed: {window}-step mean)"
    ax.set_title(title or default, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    return fig, {"t": t, "pi": p, "pi_star": ps, "pi_star_smooth": smooth}


def plot_paper_regret(results: dict, *, axes=None, loglog: bool = False):
    r"""Fig. 4.10 on the real data: per setting of :func:`fedlab.online.real_data.run_paper`'s ``results``, the
    accuracy regret :math:`\bar R'_t` (4.47) of FEM-OMD and FedOMD (mean ± std over seeds), by
    :func:`plot_regret_panels`.

    Returns
    -------
    fig, data
        As :func:`plot_regret_panels`, one panel per setting.
    """
    check_type("results", results, dict)
    if not results:
        raise ValueError("results must hold at least one setting (run_paper's output).")
    panels = {}
    for name, entry in results.items():
        mean = entry.get("mean") if isinstance(entry, dict) else None
        if not isinstance(mean, dict) or any(not isinstance(mean.get(m), dict) for m in PAPER_LABELS):
            raise ValueError(f"results[{name!r}] must be run_paper's entry, with FEM-OMD's and FedOMD's curves.")
        title = f"{name}: {len(entry.get('seeds', []))} seed(s), h* accuracy {mean['comparator_accuracy']:.2f}"
        panels[title] = {label: (np.asarray(mean["t"], float), mean[m]["regret_runs"])
                         for m, label in PAPER_LABELS.items()}
    fig, data = plot_regret_panels(panels, axes=axes, loglog=loglog,
                                   suptitle="Fig. 4.10 on the real data: accuracy regret (4.47)")
    for ax in fig.axes[:len(panels)]:
        ax.set_ylabel(r"accuracy regret $\bar R'_t$")
    return fig, data
