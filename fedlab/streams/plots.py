r"""Plots of the data-streams chapter (thesis §4.3): memories, Fig. 4.2, Fig. G.22, Fig. 4.3, strategy results.

Every ``plot_*`` returns ``(fig, data)`` with the plotted arrays in ``data``.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from fedlab._validation import check_array, check_bool, check_int, check_real, check_sequence, check_simplex
from fedlab.streams.bounds import (crossover_fraction, historical_threshold, optimal_p_hist, optimal_weights,
                                   psi_closed_form)
from fedlab.plots import figure_axes
from fedlab.streams.data import MemorySchedule

__all__ = [
    "plot_memory_schedule",
    "plot_p_hist_vs_ratio",
    "plot_bound_tradeoff",
    "plot_psi_gaps",
    "plot_client_weights",
    "plot_bound_explorer",
    "plot_strategy_comparison",
    "plot_p_hist_curve",
]

_COLORS = {"fresh": "tab:green", "historical": "tab:red", "uniform": "tab:blue", "ours": "tab:purple",
           "optimal": "tab:gray"}


def _ratios(ratios) -> np.ndarray:
    r = np.logspace(-2.5, 1.5, 161) if ratios is None else check_array("ratios", ratios, ndim=1, nonnegative=True)
    if r.size == 0:
        raise ValueError("ratios must not be empty.")
    return r


def _h_values(h_values) -> np.ndarray:
    hs = check_array("h_values", h_values, ndim=1)
    if hs.size == 0 or np.any((hs < 0) | (hs > 1)):
        raise ValueError(f"h_values must be a non-empty list of fractions N_hist/N in [0, 1], got {hs.tolist()}.")
    return hs


def _row(name: str, row, keys: Sequence[str]) -> Mapping:
    """A result row (a mapping) holding ``keys``, else raise naming ``name`` and the missing keys."""
    if not isinstance(row, Mapping):
        raise TypeError(f"{name} must be a mapping (a row of fedlab.streams.experiments.summarize), got "
                        f"{type(row).__name__}.")
    missing = [k for k in keys if k not in row]
    if missing:
        raise ValueError(f"{name} lacks the keys {missing} (rows come from fedlab.streams.experiments.summarize).")
    return row


def _check_split(m: int, m_hist: int) -> tuple[int, int]:
    m = check_int("m", m, low=2)
    m_hist = check_int("m_hist", m_hist, low=1, high=m - 1)
    return m, m_hist


def plot_memory_schedule(schedule, *, ax=None, title: str | None = None):
    r"""Which sample (column, arrival order) is in memory at which round (row): thesis Fig. 4.1.

    Parameters
    ----------
    schedule : MemorySchedule or bool array (T, N)
    """
    if isinstance(schedule, MemorySchedule):
        schedule = schedule.in_memory
    im = check_array("schedule", schedule, ndim=2)
    if np.any((im != 0) & (im != 1)):
        raise ValueError("schedule must be a MemorySchedule or a (T, N) boolean (0/1) array, got other values.")
    im = im.astype(bool)
    fig, ax = figure_axes(ax, (5.5, 2.8))
    ax.imshow(im, aspect="auto", cmap="Blues", interpolation="nearest", origin="upper")
    ax.set_xlabel("sample (arrival order)")
    ax.set_ylabel("round t")
    ax.set_title(title or "samples in memory")
    return fig, {"in_memory": im, "sizes": im.sum(1), "stay_times": im.sum(0)}


def plot_p_hist_vs_ratio(h_values: Sequence[float] = (0.05, 0.2, 0.5), m: int = 50, m_hist: int = 25, *,
                         ratios=None, mark: float | None = None, ax=None):
    r"""Fig. 4.2: optimal :math:`p^*_{hist}` against :math:`c_2/c_1` (log axis) for several :math:`N_{hist}/N`.

    Dashed lines: Uniform (:math:`p_{hist} = h`); markers: the switch to Historical at :math:`\sqrt{h/M_F}`;
    vertical line: ``mark`` (e.g. the CIFAR-10 estimate 0.15).
    """
    m, m_hist = _check_split(m, m_hist)
    r = _ratios(ratios)
    hs = _h_values(h_values)
    if mark is not None:
        check_real("mark", mark, low=0, low_open=True)
    fig, ax = figure_axes(ax)
    data = {"ratios": r, "h_values": hs, "p_hist": {}, "threshold": {}}
    for i, h in enumerate(hs):
        color = f"C{i}"
        p = optimal_p_hist(r, h, m - m_hist)
        thr = float(historical_threshold(h, m - m_hist))
        ax.semilogx(r, p, color=color, label=f"$N_{{hist}}/N$ = {h:g}")
        ax.axhline(h, color=color, ls=":", lw=0.8)
        ax.plot([thr], [1.0], "o", color=color, ms=4)
        data["p_hist"][float(h)], data["threshold"][float(h)] = p, thr
    if mark is not None:
        ax.axvline(check_real("mark", mark, low=0, low_open=True), color="k", ls="--", lw=0.8)
        data["mark"] = float(mark)
    ax.set_xlabel("$c_2/c_1$")
    ax.set_ylabel(r"$p^*_{hist}$")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"optimal historical weight (M={m}, $M_{{hist}}$={m_hist})", fontsize=9)
    ax.legend(fontsize=7)
    return fig, data


def plot_bound_tradeoff(h_values: Sequence[float] = (0.05, 0.2, 0.5), m: int = 50, m_hist: int = 25, *,
                        ratios=None, mark: float | None = None):
    r"""Fig. G.22: :math:`N^*_{eff}/N`, the fresh-noise term and :math:`p^*_{hist}` against :math:`c_2/c_1`.

    The noise term :math:`\sqrt{\sum_F p_m^{*2}}` is normalised by its Uniform value :math:`(1-h)/\sqrt{M_F}`
    (the thesis does not define its "normalized gradient noise"; this is the spec's choice).
    """
    import matplotlib.pyplot as plt

    m, m_hist = _check_split(m, m_hist)
    r = _ratios(ratios)
    hs = _h_values(h_values)
    if mark is not None:
        check_real("mark", mark, low=0, low_open=True)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    data = {"ratios": r, "n_eff_ratio": {}, "noise": {}, "p_hist": {}}
    for i, h in enumerate(hs):
        q = psi_closed_form(r, h, m - m_hist)
        noise = q["fresh_noise"] / ((1 - h) / math.sqrt(m - m_hist))
        for ax, key, y in zip(axes, ("n_eff_ratio", "noise", "p_hist"), (q["n_eff_ratio"], noise, q["p_hist"])):
            ax.semilogx(r, y, color=f"C{i}", label=f"h = {h:g}")
            data[key][float(h)] = y
    for ax, lab in zip(axes, (r"$N^*_{eff}/N$", "fresh noise / Uniform's", r"$p^*_{hist}$")):
        ax.set_xlabel("$c_2/c_1$")
        ax.set_ylabel(lab)
        if mark is not None:
            ax.axvline(mark, color="k", ls="--", lw=0.8)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig, data


def plot_psi_gaps(ratios: Sequence[float] = (10 ** -1.3, 0.15, 10 ** -0.5), m: int = 50, m_hist: int = 25, *,
                  h_values=None, mark_h: float | None = None):
    r"""Fig. 4.3: :math:`\psi_{hist}-\psi^*`, :math:`\psi_{unif}-\psi^*` and :math:`\psi_{hist}-\psi_{unif}` against
    :math:`N_{hist}/N` for several :math:`c_2/c_1` (units of :math:`c_1`, :math:`c_0 = 0`).

    Marks the crossover :math:`h_\times` where Historical and Uniform tie.
    """
    import matplotlib.pyplot as plt

    m, m_hist = _check_split(m, m_hist)
    rs = check_array("ratios", ratios, ndim=1, nonnegative=True)
    if rs.size == 0:
        raise ValueError("ratios must not be empty.")
    hs = np.linspace(0.01, 0.99, 99) if h_values is None else _h_values(h_values)
    if mark_h is not None:
        check_real("mark_h", mark_h, low=0, high=1)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    data = {"h": hs, "gap_hist": {}, "gap_unif": {}, "hist_minus_unif": {}, "crossover": {}}
    for i, r in enumerate(rs):
        q = psi_closed_form(r, hs, m - m_hist)
        hx = float(crossover_fraction(r, m - m_hist))
        for ax, key in zip(axes, ("gap_hist", "gap_unif", "hist_minus_unif")):
            ax.plot(hs, q[key], color=f"C{i}", label=f"$c_2/c_1$ = {r:.3g}")
            data[key][float(r)] = q[key]
        if hx < 1:
            axes[2].plot([hx], [0.0], "o", color=f"C{i}", ms=4)
        data["crossover"][float(r)] = hx
    for ax, lab in zip(axes, (r"$\psi_{hist}-\psi^*$", r"$\psi_{unif}-\psi^*$", r"$\psi_{hist}-\psi_{unif}$")):
        ax.set_xlabel("$N_{hist}/N$")
        ax.set_ylabel(lab + "  (units of $c_1$)")
        if mark_h is not None:
            ax.axvline(mark_h, color="k", ls="--", lw=0.8)
    axes[2].axhline(0, color="k", lw=0.6)
    axes[0].set_yscale("symlog", linthresh=1e-3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig, data


def plot_client_weights(p, m_hist: int, *, n=None, ax=None, title: str | None = None):
    """Bars of per-client importances :math:`p_m` (historical red, fresh green), with :math:`n_m` as ticks."""
    p = check_simplex("p", p, ndim=1)
    m_hist = check_int("m_hist", m_hist, low=0, high=len(p))
    fig, ax = figure_axes(ax, (5, 2.8))
    colors = [_COLORS["historical"]] * m_hist + [_COLORS["fresh"]] * (len(p) - m_hist)
    ax.bar(np.arange(len(p)), p, color=colors, width=0.85)
    data = {"p": p, "m_hist": m_hist}
    if n is not None:
        n = check_simplex("n", n, ndim=1, size=len(p))
        ax.plot(np.arange(len(p)), n, "k_", ms=8, label="$n_m$ (Uniform)")
        ax.legend(fontsize=7)
        data["n"] = n
    ax.set_xlabel("client (historical | fresh)")
    ax.set_ylabel("$p_m$")
    ax.set_title(title or f"$p_{{hist}}$ = {p[:m_hist].sum():.3f}", fontsize=9)
    return fig, data


def plot_bound_explorer(ratio: float = 0.15, h: float = 0.2, m: int = 50, m_hist: int = 25, *,
                        unequal: bool = False, seed: int = 0, h_values: Sequence[float] = (0.05, 0.2, 0.5)):
    r"""The slider panel: Fig. 4.2 (with the slider's :math:`h`), Fig. 4.3 at the slider's ratio, and :math:`p^*`.

    With ``unequal=True`` the fresh clients get Dirichlet(1) sizes and :math:`p^*` is computed by cvxpy
    (the closed form no longer applies); otherwise every group has equal sizes.

    Returns
    -------
    fig, data
        ``data["readout"]`` holds ``p_hist``, ``kappa``, ``n_eff_ratio``, ``psi_star``, ``psi_hist``,
        ``psi_unif`` (units of :math:`c_1`) and the thresholds.
    """
    import matplotlib.pyplot as plt

    from fedlab.streams.bounds import n_eff, psi

    ratio = check_real("ratio", ratio, low=0, low_open=True)
    h = check_real("h", h, low=0, high=1, low_open=True, high_open=True)
    m, m_hist = _check_split(m, m_hist)
    unequal = check_bool("unequal", unequal)
    check_int("seed", seed, low=0)
    h_values = _h_values(h_values)
    m_fresh = m - m_hist
    n = np.concatenate([np.full(m_hist, h / m_hist), np.full(m_fresh, (1 - h) / m_fresh)])
    if unequal:
        n[m_hist:] = (1 - h) * np.random.default_rng(seed).dirichlet(np.ones(m_fresh))
    p = optimal_weights(ratio, n, m_hist)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3))
    hs = sorted(set(float(x) for x in h_values) | {h})
    _, d42 = plot_p_hist_vs_ratio(hs, m, m_hist, mark=ratio, ax=axes[0])
    hgrid = np.linspace(0.01, 0.99, 99)
    q = psi_closed_form(ratio, hgrid, m_fresh)
    axes[1].plot(hgrid, q["gap_hist"], label=r"$\psi_{hist}-\psi^*$", color=_COLORS["historical"])
    axes[1].plot(hgrid, q["gap_unif"], label=r"$\psi_{unif}-\psi^*$", color=_COLORS["uniform"])
    axes[1].plot(hgrid, q["hist_minus_unif"], label=r"$\psi_{hist}-\psi_{unif}$", color="k", lw=0.8)
    axes[1].axhline(0, color="k", lw=0.4)
    axes[1].axvline(h, color="k", ls="--", lw=0.8)
    axes[1].set_ylim(-0.2, 0.6)
    axes[1].set_xlabel("$N_{hist}/N$")
    axes[1].set_title(f"bound gaps at $c_2/c_1$ = {ratio:.3g} (units of $c_1$)", fontsize=9)
    axes[1].legend(fontsize=7)
    _, dbar = plot_client_weights(p, m_hist, n=n, ax=axes[2])
    fig.tight_layout()
    readout = {"p_hist": float(p[:m_hist].sum()), "kappa": ratio * math.sqrt(m_fresh),
               "n_eff_ratio": n_eff(p, n, 1.0), "psi_star": psi(p, n, m_hist, 1.0, ratio),
               "psi_hist": psi(np.concatenate([n[:m_hist] / h, np.zeros(m_fresh)]), n, m_hist, 1.0, ratio),
               "psi_unif": psi(n, n, m_hist, 1.0, ratio),
               "historical_threshold": float(historical_threshold(h, m_fresh)),
               "crossover_h": float(crossover_fraction(ratio, m_fresh))}
    return fig, {"p": p, "n": n, "readout": readout, "fig42": d42, "gaps": {"h": hgrid, **q}}


def plot_strategy_comparison(rows: Sequence[Mapping], *, key: str = "h", ax=None, ylabel: str | None = None,
                             strategies: Sequence[str] = ("fresh", "historical", "uniform", "ours", "optimal")):
    """Grouped bars (mean ± std over seeds) of the strategies, one group per row of ``summarize``."""
    check_sequence("strategies", strategies, nonempty=True)
    for s in strategies:
        if not isinstance(s, str):
            raise TypeError(f"strategies must be names of strategies (strings), got {s!r}.")
    if not isinstance(key, str):
        raise TypeError(f"key must be the name of a column of the rows (a string), got {key!r}.")
    check_sequence("rows", rows, nonempty=True)
    for i, r in enumerate(rows):
        _row(f"rows[{i}]", r, ())
        if key not in r:
            raise ValueError(f"key={key!r} is not a column of rows[{i}] (columns: {sorted(r)}).")
        missing = [s for s in strategies if f"{s}_mean" not in r or f"{s}_std" not in r]
        if missing:
            raise ValueError(f"strategies {missing} have no '<name>_mean'/'<name>_std' columns in rows[{i}].")
    fig, ax = figure_axes(ax, (6, 3.2))
    width = 0.8 / len(strategies)
    data = {"groups": [r[key] for r in rows]}
    for j, s in enumerate(strategies):
        mean = np.array([r[f"{s}_mean"] for r in rows], dtype=float)
        std = np.array([r[f"{s}_std"] for r in rows], dtype=float)
        ax.bar(np.arange(len(rows)) + (j - (len(strategies) - 1) / 2) * width, mean, width, yerr=std,
               color=_COLORS.get(s, f"C{j}"), label=s, capsize=2)
        data[s] = {"mean": mean, "std": std}
    ax.set_xticks(np.arange(len(rows)))
    ax.set_xticklabels([f"{key} = {r[key]:g}" if isinstance(r[key], (int, float)) else str(r[key]) for r in rows])
    ax.set_ylabel(ylabel or rows[0].get("metric", ""))
    lo = min(np.min(d["mean"] - d["std"]) for k, d in data.items() if k != "groups")
    hi = max(np.max(d["mean"] + d["std"]) for k, d in data.items() if k != "groups")
    ax.set_ylim(max(0.0, lo - 0.1 * (hi - lo)), hi + 0.05 * (hi - lo))
    ax.legend(fontsize=6, ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig, data


def plot_p_hist_curve(row: Mapping, *, ax=None, title: str | None = None):
    r"""Fig. 4.4 analogue: the metric against :math:`p_{hist}` (grid, mean ± std), with Uniform (:math:`p_{hist}=h`)
    and Ours (:math:`\hat p^*_{hist}`) marked."""
    _row("row", row, ("grid", "grid_mean", "grid_std", "h_mean", "uniform_mean", "uniform_std", "p_hat_mean",
                      "p_hat_std", "ours_mean", "ours_std"))
    g = check_array("row['grid']", row["grid"], ndim=1)
    mean = check_array("row['grid_mean']", row["grid_mean"], shape=g.shape)
    std = check_array("row['grid_std']", row["grid_std"], shape=g.shape)
    for k in ("h_mean", "uniform_mean", "uniform_std", "p_hat_mean", "p_hat_std", "ours_mean", "ours_std"):
        check_real(f"row['{k}']", row[k])
    fig, ax = figure_axes(ax, (4.2, 3.2))
    ax.errorbar(g, mean, yerr=std, fmt="o-", color="k", ms=3, capsize=2, label="grid")
    ax.errorbar([row["h_mean"]], [row["uniform_mean"]], yerr=[row["uniform_std"]], fmt="s",
                color=_COLORS["uniform"], label="Uniform")
    ax.errorbar([row["p_hat_mean"]], [row["ours_mean"]], yerr=[row["ours_std"]], xerr=[row["p_hat_std"]], fmt="D",
                color=_COLORS["ours"], label="Ours")
    ax.set_xlabel("$p_{hist}$")
    ax.set_ylabel(row.get("metric", ""))
    ax.set_title(title or "", fontsize=9)
    ax.legend(fontsize=7)
    return fig, {"grid": g, "mean": mean, "std": std, "uniform": (row["h_mean"], row["uniform_mean"]),
                 "ours": (row["p_hat_mean"], row["ours_mean"])}
