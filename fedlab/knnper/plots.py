"""Plots of the kNN-Per chapter; every ``plot_*`` returns ``(fig, data)`` with the plotted arrays."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_simplex, check_type
from fedlab.knnper.bounds import knn_rate, lambda_preference_threshold, theorem_3_6_1
from fedlab.plots import check_axes, figure_axes

__all__ = [
    "plot_accuracy_surface",
    "plot_lambda_curves",
    "plot_lambda_opt",
    "plot_sensitivity",
    "plot_quality",
    "plot_shift",
    "plot_prediction",
    "plot_bound",
]


def _unit_interval(name: str, value, *, missing_ok: bool = False, **shape) -> np.ndarray:
    """An array of numbers in [0, 1] (capacities, weights, accuracies); with ``missing_ok``, NaN marks a missing
    accuracy."""
    arr = check_array(name, value, finite=not missing_ok, **shape)
    if np.any(np.isinf(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must hold numbers in [0, 1], got values in [{np.nanmin(arr):.4g}, "
                         f"{np.nanmax(arr):.4g}].")
    return arr


def _curves(name: str, curves, n: int, *, missing_ok: bool = False) -> dict:
    """``curves[label]``: accuracies in [0, 1], (n,) or (runs, n) (NaN for a missing point with ``missing_ok``)."""
    check_type(name, curves, dict)
    if not curves:
        raise ValueError(f"{name} must hold at least one curve.")
    out = {}
    for label, values in curves.items():
        runs = np.atleast_2d(_unit_interval(f"{name}[{label!r}]", values, missing_ok=missing_ok))
        if runs.ndim != 2 or runs.shape[1] != n:
            raise ValueError(f"{name}[{label!r}] must have {n} points per run (one per x), got shape "
                             f"{np.shape(values)}.")
        out[label] = runs
    return out


def plot_accuracy_surface(capacities, lambdas, accuracy, *, marker=None, ax=None, title: str | None = None):
    """Heat map of accuracy over (λ, capacity) (thesis Fig. 3.2/3.3 in one picture).

    Parameters
    ----------
    capacities : array (C,)
    lambdas : array (L,)
    accuracy : array (C, L)
    marker : (lam, capacity), optional
        Point to highlight (e.g. the slider setting).
    """
    caps = _unit_interval("capacities", capacities, ndim=1)
    lams = _unit_interval("lambdas", lambdas, ndim=1)
    acc = _unit_interval("accuracy", accuracy, missing_ok=True, shape=(len(caps), len(lams)))
    if 0 in acc.shape:
        raise ValueError("capacities and lambdas must hold at least one value each.")
    if marker is not None:
        _unit_interval("marker", marker, shape=(2,))
    fig, ax = figure_axes(ax, (5, 3.8))
    im = ax.imshow(acc, origin="lower", aspect="auto", cmap="viridis",
                   extent=(lams[0] - 0.05, lams[-1] + 0.05, caps[0] - 0.05, caps[-1] + 0.05))
    fig.colorbar(im, ax=ax, label="test accuracy")
    best = np.unravel_index(np.nanargmax(acc), acc.shape)
    ax.plot(lams[best[1]], caps[best[0]], "w*", ms=12, label=f"best {acc[best]:.3f}")
    if marker is not None:
        ax.plot(marker[0], marker[1], "rx", ms=10, mew=2, label="slider")
    ax.set_xlabel("λ (weight of the kNN model)")
    ax.set_ylabel("capacity (fraction of local data)")
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    return fig, {"capacities": caps, "lambdas": lams, "accuracy": acc, "best": (float(lams[best[1]]),
                                                                                 float(caps[best[0]]))}


def plot_lambda_curves(lambdas, curves: dict, *, ax=None, xlabel: str = "λ", ylabel: str = "test accuracy",
                       title: str | None = None):
    """One accuracy curve per setting: ``curves[label] = values (L,)`` or ``runs (S, L)`` (mean ± std band)."""
    lams = _unit_interval("lambdas", lambdas, ndim=1)
    checked = _curves("curves", curves, len(lams), missing_ok=True)
    fig, ax = figure_axes(ax)
    data = {}
    for label, runs in checked.items():
        mean, std = runs.mean(0), runs.std(0)
        ax.plot(lams, mean, marker="o", ms=3, label=str(label))
        if len(runs) > 1:
            ax.fill_between(lams, mean - std, mean + std, alpha=0.2)
        data[label] = {"x": lams, "mean": mean, "std": std}
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig, data


def plot_lambda_opt(sizes, lambda_opt, *, ax=None):
    """Scatter of :math:`\\lambda_{opt}` against the datastore size :math:`n_t` (thesis Fig. 3.9), with a trend line."""
    n = check_array("sizes", sizes, nonnegative=True).ravel()
    lam = check_array("lambda_opt", lambda_opt).ravel()
    if np.any((lam > 1) | ((lam < 0) & (lam != -1))):
        raise ValueError("lambda_opt must hold weights in [0, 1] (or -1 for a client without test data).")
    if n.shape != lam.shape:
        raise ValueError(f"sizes and lambda_opt must have the same number of points, got {n.size} and {lam.size}.")
    ok = (lam >= 0) & (n > 0)
    fig, ax = figure_axes(ax)
    ax.scatter(n[ok], lam[ok], s=12, alpha=0.6)
    corr = float(np.corrcoef(n[ok], lam[ok])[0, 1]) if ok.sum() > 2 and np.std(lam[ok]) > 0 else float("nan")
    if ok.sum() > 2:
        slope, icpt = np.polyfit(n[ok], lam[ok], 1)
        xs = np.linspace(n[ok].min(), n[ok].max(), 20)
        ax.plot(xs, icpt + slope * xs, "k--", lw=1, label=f"linear fit (corr {corr:.2f})")
        ax.legend(fontsize=8)
    ax.set_xlabel("datastore size $n_t$")
    ax.set_ylabel("$\\lambda_{opt}$ (on test)")
    return fig, {"sizes": n[ok], "lambda_opt": lam[ok], "correlation": corr}


def _positive(name: str, value, **shape) -> np.ndarray:
    """A non-empty array of positive numbers."""
    arr = check_array(name, value, ndim=None if shape else 1, **shape)
    if arr.size == 0 or np.any(arr <= 0):
        raise ValueError(f"{name} must hold positive numbers, got {value!r}.")
    return arr


def _spread_in(values: np.ndarray, accuracy: np.ndarray, span) -> float:
    """max − min of ``accuracy`` over the points whose value lies in ``span = (low, high)``."""
    inside = (values >= span[0]) & (values <= span[1])
    return float(np.ptp(accuracy[inside])) if inside.any() else float("nan")


def plot_sensitivity(k_values, best_by_k, sigma_values, best_by_sigma, *, k_span=(7, 14), sigma_span=(0.1, 100.0),
                     axes=None, title: str | None = None):
    r"""Best-over-λ accuracy against k and against σ, with the thesis' ranges shaded (thesis Figs. 3.6 and 3.8).

    Parameters
    ----------
    k_values : array of int (A,)
    best_by_k : array (A,) or (runs, A)
        Accuracies in [0, 1] (runs: mean ± std band).
    sigma_values : array (B,) > 0
    best_by_sigma : array (B,) or (runs, B)
    k_span, sigma_span : (low, high)
        The ranges the thesis calls insensitive (CIFAR-10: k ∈ [7, 14], σ ∈ [0.1, 100]).
    axes : two matplotlib Axes, optional

    Returns
    -------
    fig, dict with ``k``, ``by_k`` and ``sigma``, ``by_sigma`` (means over runs) and ``k_spread``,
    ``sigma_spread`` (max − min of the means inside the spans).
    """
    ks, sig = _positive("k_values", k_values), _positive("sigma_values", sigma_values)
    by_k = _curves("best_by_k", {"k": best_by_k}, len(ks))["k"]
    by_sigma = _curves("best_by_sigma", {"sigma": best_by_sigma}, len(sig))["sigma"]
    spans = {}
    for name, span in (("k_span", k_span), ("sigma_span", sigma_span)):
        lo, hi = _positive(name, span, shape=(2,))
        if lo > hi:
            raise ValueError(f"{name} must be (low, high) with low <= high, got {span!r}.")
        spans[name] = (lo, hi)
    if check_axes("axes", axes, 2) is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    else:
        fig = axes[0].figure
    data = {"k": ks, "sigma": sig}
    for ax, x, runs, name, span, label in ((axes[0], ks, by_k, "by_k", spans["k_span"], "k (σ = 1)"),
                                           (axes[1], sig, by_sigma, "by_sigma", spans["sigma_span"], "σ (k = 10)")):
        mean, std = runs.mean(0), runs.std(0)
        ax.plot(x, mean, marker="o", ms=3)
        if len(runs) > 1:
            ax.fill_between(x, mean - std, mean + std, alpha=0.2)
        ax.axvspan(*span, color="grey", alpha=0.15, label="thesis' insensitive range")
        ax.set_xlabel(label)
        ax.set_ylabel("best test accuracy over λ")
        ax.legend(fontsize=8)
        data[name] = mean
    axes[1].set_xscale("log")
    data["k_spread"] = _spread_in(ks, data["by_k"], spans["k_span"])
    data["sigma_spread"] = _spread_in(sig, data["by_sigma"], spans["sigma_span"])
    if title:
        fig.suptitle(title)
    return fig, data


def plot_quality(global_acc, knn_acc: dict, *, ax=None):
    """kNN accuracy against the global model's accuracy along training (thesis Fig. 3.4/3.5)."""
    g = _unit_interval("global_acc", global_acc, ndim=1)
    checked = {label: runs[0] for label, runs in _curves("knn_acc", knn_acc, len(g)).items()}
    fig, ax = figure_axes(ax)
    data = {"global": g}
    for label, v in checked.items():
        ax.plot(g, v, marker="o", label=label)
        data[label] = v
    lo, hi = float(min(g.min(), *(np.min(v) for v in data.values()))), 1.0
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls=":", label="y = x")
    ax.set_xlabel("global model test accuracy")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=8)
    return fig, data


def plot_shift(steps, accuracy: dict, k0: int, *, baseline=None, ax=None):
    """Accuracy per step for each datastore strategy, with the shift at ``k0`` (thesis Fig. 3.13)."""
    x = check_array("steps", steps, ndim=1, nonnegative=True)
    checked = {label: runs[0] for label, runs in _curves("accuracy", accuracy, len(x)).items()}
    k0 = check_int("k0", k0, low=0)
    b = None if baseline is None else _unit_interval("baseline", baseline, shape=(len(x),))
    fig, ax = figure_axes(ax, (6, 3.4))
    data = {}
    for label, v in checked.items():
        ax.plot(x, v, marker="o", ms=3, label=label)
        data[label] = v
    if b is not None:
        ax.plot(x, b, color="grey", ls="--", label="global model")
        data["global"] = b
    ax.axvline(k0 - 0.5, color="red", lw=0.8)
    ax.text(k0 - 0.4, ax.get_ylim()[0] + 0.02, "shift", color="red", fontsize=8)
    ax.set_xlabel("time step")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=8)
    return fig, data


def plot_prediction(p_knn, p_global, lam: float, *, true_label: int | None = None, ax=None):
    """Bars of :math:`p_{kNN}`, :math:`p_{global}` and their mixture (3.33) for one input."""
    q = check_simplex("p_knn", p_knn, ndim=1)
    g = check_simplex("p_global", p_global, shape=(len(q),))
    lam = check_real("lam", lam, low=0, high=1)
    if true_label is not None:
        check_int("true_label", true_label, low=0, high=len(q) - 1)
    mix = lam * q + (1 - lam) * g
    fig, ax = figure_axes(ax, (5, 3))
    x = np.arange(len(q))
    for off, vals, label in ((-0.27, q, "kNN"), (0.0, g, "global"), (0.27, mix, f"mixture λ={lam:.2f}")):
        ax.bar(x + off, vals, width=0.27, label=label)
    if true_label is not None:
        ax.axvline(true_label, color="k", lw=0.8, ls=":")
    ax.set_xticks(x)
    ax.set_xlabel("class")
    ax.set_ylabel("probability")
    ax.legend(fontsize=8)
    return fig, {"p_knn": q, "p_global": g, "mixture": mix, "prediction": int(mix.argmax())}


def plot_bound(L_star: float, disc: float, n: float, p: float, d_H: float, gamma1: float, gamma2: float, *,
               n_t_values=(10, 100, 1000, 10_000), lambdas=None, n_t_range=None, axes=None):
    """Theorem 3.6.1 explorer: the bound against λ for several :math:`n_t`, and against :math:`n_t` at λ = 0 and 1.

    Returns ``(fig, data)`` with the curves and the threshold :math:`n_t^\\star`
    (:func:`~fedlab.knnper.bounds.lambda_preference_threshold`).
    """
    import matplotlib.pyplot as plt

    lams = np.linspace(0, 1, 21) if lambdas is None else _unit_interval("lambdas", lambdas, ndim=1)
    if isinstance(n_t_values, (str, bytes)) or not isinstance(n_t_values, (tuple, list, np.ndarray)) or \
            len(n_t_values) == 0:
        raise TypeError(f"n_t_values must be a non-empty sequence of datastore sizes, got {n_t_values!r}.")
    for i, n_t in enumerate(n_t_values):
        check_real(f"n_t_values[{i}]", n_t, low=1)
    thr = lambda_preference_threshold(L_star, disc, n, p, d_H, gamma1, gamma2)
    if n_t_range is None:
        hi = 1e6 if not np.isfinite(thr) else max(1e3, 100 * thr)
        n_t_range = np.logspace(0, np.log10(min(hi, 1e12)), 60)
    nts = check_array("n_t_range", n_t_range, ndim=1)
    if nts.size < 2 or np.any(nts < 1):
        raise ValueError(f"n_t_range must hold at least two datastore sizes >= 1, got {n_t_range!r}.")
    check_axes("axes", axes, n=2)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    fig = axes[0].figure
    data = {"lambdas": lams, "vs_lambda": {}, "n_t": nts, "threshold": thr}
    for n_t in n_t_values:
        b = theorem_3_6_1(lams, L_star, disc, n_t, n, p, d_H, gamma1, gamma2)
        axes[0].plot(lams, b, label=f"$n_t$ = {n_t:g}")
        data["vs_lambda"][n_t] = b
    axes[0].set_xlabel("λ")
    axes[0].set_ylabel("bound (3.38)")
    axes[0].legend(fontsize=8)
    b0 = theorem_3_6_1(0.0, L_star, disc, nts, n, p, d_H, gamma1, gamma2)
    b1 = theorem_3_6_1(1.0, L_star, disc, nts, n, p, d_H, gamma1, gamma2)
    axes[1].semilogx(nts, b0, label="λ = 0 (global model)")
    axes[1].semilogx(nts, b1, label="λ = 1 (1-NN)")
    if np.isfinite(thr):
        axes[1].axvline(thr, color="red", lw=0.8, ls="--", label=f"$n_t^*$ = {thr:.3g}")
    axes[1].set_xlabel("local datastore size $n_t$")
    axes[1].set_ylabel("bound (3.38)")
    axes[1].set_title(f"p = {p:g}: ρ = √p n_t^(-1/(p+1))", fontsize=9)
    axes[1].legend(fontsize=8)
    data.update(bound_lambda0=b0, bound_lambda1=b1, rate=knn_rate(nts, p))
    fig.tight_layout()
    return fig, data
