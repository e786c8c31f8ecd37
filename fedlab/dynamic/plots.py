"""Plots of notebook 08 (Dynamic FL under drift); each returns ``(fig, data)``."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array
from fedlab.plots import figure_axes

__all__ = ["plot_msd_vs_step", "plot_normalization_bias"]


def _db(x):
    return 10 * np.log10(np.maximum(np.asarray(x, dtype=float), 1e-300))


def _steps(name: str, value) -> np.ndarray:
    arr = check_array(name, value, ndim=1)
    if arr.size == 0 or np.any(arr <= 0):
        raise ValueError(f"{name} must be a non-empty list of positive step sizes, got {arr.tolist()}.")
    return arr


def plot_msd_vs_step(lrs, steady, drift_vars, *, fine_lrs=None, bound=None, prediction=None, mu_star=None, ax=None,
                     title: str | None = None):
    """Steady-state MSD (dB) against the step size: simulation (dots, mean ± std over seeds) and the approximate
    bound of spec C.4 (lines; it drops the incremental error, so it is not a proven bound).

    Parameters
    ----------
    lrs : array (n_mu,)
    steady : array (n_seeds, n_drift, n_mu) or (n_drift, n_mu)
        Simulated steady-state MSD (linear scale).
    drift_vars : array (n_drift,)
    fine_lrs : array (n_grid,), optional
    bound, prediction : arrays (n_drift, n_grid), optional
        The C.4 approximate bound (solid) and the exact-noise prediction (dotted); ``inf`` is not drawn.
    mu_star : array (n_drift,), optional
        Optimal step of the approximate bound, marked with a star on its curve.
    """
    import matplotlib.pyplot as plt

    lrs = _steps("lrs", lrs)
    sim = check_array("steady", steady, nonnegative=True)
    if sim.ndim == 2:
        sim = sim[None]
    drift_vars = check_array("drift_vars", drift_vars, ndim=1, nonnegative=True)
    if sim.ndim != 3 or sim.shape[0] == 0 or sim.shape[1:] != (drift_vars.size, lrs.size):
        raise ValueError(f"steady must have shape (n_seeds >= 1, {drift_vars.size}, {lrs.size}), got {sim.shape}.")
    if fine_lrs is not None:
        fine_lrs = _steps("fine_lrs", fine_lrs)
    for name, value in (("bound", bound), ("prediction", prediction)):
        if value is None:
            continue
        if fine_lrs is None:
            raise ValueError(f"{name} is drawn against fine_lrs: give fine_lrs too.")
        arr = check_array(name, value, shape=(drift_vars.size, fine_lrs.size), finite=False)
        if np.any(np.isnan(arr)) or np.any(arr < 0):
            raise ValueError(f"{name} must hold MSD values >= 0 (inf: not drawn), got NaN or negative entries.")
    if mu_star is not None:
        if bound is None:
            raise ValueError("mu_star is marked on the bound curve: give bound (and fine_lrs) too.")
        mu_star = check_array("mu_star", mu_star, shape=(drift_vars.size,), nonnegative=True)
    fig, ax = figure_axes(ax, (6, 4))
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
        ax.plot([], [], "k-", label="approximate bound (C.4, $d_i$ dropped)")
        data["bound_db"] = _db(np.asarray(bound, dtype=float))
    if prediction is not None:
        ax.plot([], [], "k:", label="exact-noise prediction")
        data["prediction_db"] = _db(np.asarray(prediction, dtype=float))
    if mu_star is not None:
        ax.plot([], [], "k*", ms=10, label=r"$\mu^\star$ of the approximation")
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
    lrs = _steps("lrs", lrs)
    a = check_array("normalized", normalized, shape=(lrs.size,), nonnegative=True)
    b = check_array("unnormalized", unnormalized, shape=(lrs.size,), nonnegative=True)
    fig, ax = figure_axes(ax, (5.2, 3.6))
    ax.loglog(lrs, a, "o-", label=r"normalised steps $\mu/E_k$ (Algorithm 1)")
    ax.loglog(lrs, b, "s--", label=r"plain steps $\mu$ (FedAvg)")
    ax.set_xlabel(r"step size $\mu$")
    ax.set_ylabel(r"$\|w_\infty - w^o\|$")
    ax.legend(fontsize=8)
    return fig, {"lrs": lrs, "normalized": a, "unnormalized": b}
