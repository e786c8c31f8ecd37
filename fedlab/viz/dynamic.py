"""Plots of notebooks 08 (Dynamic FL under drift) and 09 (Markovian streams); each returns ``(fig, data)``."""
from __future__ import annotations

import numpy as np

from .._validation import check_array

__all__ = ["plot_msd_vs_step", "plot_normalization_bias", "plot_log_curves", "plot_loglog"]


def _axes(ax, figsize=(5.2, 3.6)):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def _db(x):
    return 10 * np.log10(np.maximum(np.asarray(x, dtype=float), 1e-300))


def plot_msd_vs_step(lrs, steady, drift_vars, *, fine_lrs=None, bound=None, prediction=None, mu_star=None, ax=None,
                     title: str | None = None):
    """Steady-state MSD (dB) against the step size: simulation (dots, mean ± std over seeds) and bound (lines).

    Parameters
    ----------
    lrs : array (n_mu,)
    steady : array (n_seeds, n_drift, n_mu) or (n_drift, n_mu)
        Simulated steady-state MSD (linear scale).
    drift_vars : array (n_drift,)
    fine_lrs : array (n_grid,), optional
    bound, prediction : arrays (n_drift, n_grid), optional
        The C.4 bound (solid) and the exact-noise prediction (dotted); ``inf`` is not drawn.
    mu_star : array (n_drift,), optional
        Optimal step of the bound, marked with a star on the bound curve.
    """
    import matplotlib.pyplot as plt

    lrs = check_array("lrs", lrs, ndim=1)
    sim = check_array("steady", steady, nonnegative=True)
    if sim.ndim == 2:
        sim = sim[None]
    drift_vars = check_array("drift_vars", drift_vars, ndim=1)
    if sim.shape[1:] != (drift_vars.size, lrs.size):
        raise ValueError(f"steady must have shape (n_seeds, {drift_vars.size}, {lrs.size}), got {sim.shape}.")
    fig, ax = _axes(ax, (6, 4))
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.85, drift_vars.size))
    sim_db = _db(sim)
    data = {"lrs": lrs, "sim_db_mean": sim_db.mean(0), "sim_db_std": sim_db.std(0), "drift_vars": drift_vars}
    for i, q in enumerate(drift_vars):
        ax.errorbar(lrs, sim_db.mean(0)[i], yerr=sim_db.std(0)[i], fmt="o", color=colors[i], ms=5, capsize=2,
                    label=f"simulation, $\\sigma_q^2$={q:g}")
        if bound is not None:
            b = np.asarray(bound, dtype=float)[i]
            ok = np.isfinite(b)
            ax.plot(np.asarray(fine_lrs)[ok], _db(b[ok]), "-", color=colors[i], lw=1.5)
        if prediction is not None:
            p = np.asarray(prediction, dtype=float)[i]
            ok = np.isfinite(p)
            ax.plot(np.asarray(fine_lrs)[ok], _db(p[ok]), ":", color=colors[i], lw=1.2)
        if mu_star is not None and bound is not None and mu_star[i] > 0:
            fl = np.asarray(fine_lrs)
            j = int(np.argmin(np.abs(np.log(fl) - np.log(mu_star[i]))))
            ax.plot([mu_star[i]], [_db(np.asarray(bound)[i][j])], "*", color=colors[i], ms=14, mec="k")
    if bound is not None:
        ax.plot([], [], "k-", label="bound (C.4)")
        data["bound_db"] = _db(np.asarray(bound, dtype=float))
    if prediction is not None:
        ax.plot([], [], "k:", label="exact-noise prediction")
        data["prediction_db"] = _db(np.asarray(prediction, dtype=float))
    if mu_star is not None:
        ax.plot([], [], "k*", ms=10, label=r"$\mu^\star$ of the bound")
        data["mu_star"] = np.asarray(mu_star, dtype=float)
    ax.set_xscale("log")
    ax.set_xlabel(r"step size $\mu$")
    ax.set_ylabel("steady-state MSD (dB)")
    ax.legend(fontsize=7, loc="best")
    if title:
        ax.set_title(title)
    return fig, data


def plot_normalization_bias(lrs, normalized, unnormalized, *, ax=None):
    r"""Bias :math:`\|w_\infty-w^o\|` against μ, normalised (:math:`\mu/E_k`) vs plain steps (log-log)."""
    lrs = check_array("lrs", lrs, ndim=1)
    a = check_array("normalized", normalized, shape=(lrs.size,), nonnegative=True)
    b = check_array("unnormalized", unnormalized, shape=(lrs.size,), nonnegative=True)
    fig, ax = _axes(ax)
    ax.loglog(lrs, a, "o-", label=r"normalised steps $\mu/E_k$ (Algorithm 1)")
    ax.loglog(lrs, b, "s--", label=r"plain steps $\mu$ (FedAvg)")
    ax.set_xlabel(r"step size $\mu$")
    ax.set_ylabel(r"$\|w_\infty - w^o\|$")
    ax.legend(fontsize=8)
    return fig, {"lrs": lrs, "normalized": a, "unnormalized": b}


def plot_log_curves(x, curves: dict, *, ax=None, xlabel: str = "round", ylabel: str = "", logy: bool = True,
                    styles: dict | None = None):
    """Curves ``{label: y}`` (or ``{label: runs (n_seeds, len(x))}``, drawn as mean ± std) on a log y-axis."""
    fig, ax = _axes(ax)
    x = np.asarray(x, dtype=float)
    data = {}
    for label, y in curves.items():
        runs = np.atleast_2d(np.asarray(y, dtype=float))
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
    fig, ax = _axes(ax)
    x = check_array("x", x, ndim=1)
    if np.any(x <= 0):
        raise ValueError("x must be positive for a log-log plot.")
    data = {"x": x, "slopes": {}}
    for label, y in ys.items():
        runs = np.atleast_2d(np.asarray(y, dtype=float))
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
