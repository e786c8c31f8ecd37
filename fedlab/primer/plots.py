"""Plots of the primer notebook: the sweep's learning curves, one panel per Dirichlet α (the core
:mod:`fedlab.plots` draws the label histograms and the client-drift picture)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from fedlab._validation import check_array, check_type
from fedlab.plots import check_axes, plot_curves

__all__ = ["plot_sweep_curves"]


def plot_sweep_curves(rounds, curves: Mapping, *, alphas: Sequence[float] = (100.0, 1.0, 0.1),
                      steps: Sequence[int] = (1, 5, 20), axes=None, ylim=(0.3, 1.0)):
    """Test accuracy against rounds, one panel per α: FedAvg for each E in ``steps``, Local and Centralized (mean ±
    std over the seeds). ``curves`` maps ``(method, alpha, local_steps)`` to the per-seed curves
    (:func:`fedlab.primer.experiments.seed_curves`); Local and Centralized are drawn at any E they were run with.

    Returns ``(fig, data)``, ``data[alpha]`` the :func:`fedlab.plots.plot_curves` data of the panel.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig, data = plot_sweep_curves([0, 1], {("fedavg", 1.0, 1): [[0.1, 0.5]]}, alphas=[1.0], steps=[1])
    >>> data[1.0]["FedAvg E=1"]["mean"].tolist()
    [0.1, 0.5]
    """
    import matplotlib.pyplot as plt

    x = check_array("rounds", rounds, ndim=1)
    check_type("curves", curves, Mapping)
    alphas = [float(a) for a in check_array("alphas", alphas, ndim=1)]
    steps = [int(e) for e in check_array("steps", steps, ndim=1, dtype=int)]
    if not alphas:
        raise ValueError("alphas must name at least one α of the sweep.")
    check_axes("axes", axes, len(alphas))
    ylim = check_array("ylim", ylim, shape=(2,))
    if axes is None:
        fig, axes = plt.subplots(1, len(alphas), figsize=(14, 3.4), sharey=True, squeeze=False)
    axes = np.ravel(axes)
    fig = axes[0].figure
    data = {}
    for ax, alpha in zip(axes, alphas):
        runs = {f"FedAvg E={e}": (x, curves[("fedavg", alpha, e)]) for e in steps if ("fedavg", alpha, e) in curves}
        runs.update({method.capitalize(): (x, curves[key]) for method in ("local", "centralized") for key in curves
                     if isinstance(key, tuple) and key[:2] == (method, alpha)})
        if not runs:
            raise ValueError(f"curves has no run at alpha = {alpha:g}.")
        _, data[alpha] = plot_curves(runs, ax=ax, ylabel="test accuracy")
        ax.set(title=f"alpha = {alpha:g}", ylim=tuple(ylim))
    return fig, data
