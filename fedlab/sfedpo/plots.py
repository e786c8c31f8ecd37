r"""Plots of the SFedPO chapter: state trajectories, sampling ratios, Theorem 1's decomposition, Theorem 2,
bound sweeps and the simulation results.

Every ``plot_*`` returns ``(fig, data)`` with the plotted arrays in ``data``.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.ticker import NullFormatter

from fedlab._validation import check_array, check_bool, check_int, check_real, check_sequence, check_type
from fedlab.plots import check_axes, figure_axes

__all__ = [
    "plot_state_trajectories",
    "plot_sampling_ratios",
    "plot_client_scores",
    "plot_bound_decomposition",
    "plot_bound_sweep",
    "plot_theorem2",
    "plot_method_curves",
    "plot_bound_vs_accuracy",
    "plot_oracle_sweep",
    "plot_ablations",
]

_TERMS = ("init", "variance", "local_variance", "drift_t1", "drift_t2", "drift_t3", "last")
_TERM_LABELS = {"init": "F(x¹)/(TηR)", "variance": "Lησ² Σp²q", "local_variance": "(5/3)Lησ² Σpq",
                "drift_t1": "(5/3)Σpq·t₁ (heterogeneity)", "drift_t2": "(5/3)Σpq·t₂ (buffer variance)",
                "drift_t3": "(5/3)Σpq·t₃ (mismatch with w)", "last": "1/R term"}


def plot_state_trajectories(states, *, n_steps: int = 1, clients: Sequence[int] | None = None, max_steps: int = 100,
                            ax=None, title: str | None = None):
    r"""Latent state of a few clients over time steps (colour = state); round boundaries every ``n_steps``.

    Parameters
    ----------
    states : array-like (N, S) of int
        E.g. ``TemporalShiftDataset.states``.
    n_steps : int
        T (vertical lines between rounds).
    clients : sequence of int, optional
        Rows to show (default: the first 6).
    max_steps : int
    """
    st = check_array("states", states, ndim=2, dtype=np.int64)
    if st.size == 0:
        raise ValueError(f"states must hold at least one client and one step, got shape {st.shape}.")
    if np.any(st < 0):
        raise ValueError(f"states must hold state ids >= 0, got minimum {st.min()}.")
    n_steps = check_int("n_steps", n_steps, low=1)
    rows = list(range(min(6, st.shape[0]))) if clients is None else [check_int("clients", c, low=0,
                                                                              high=st.shape[0] - 1) for c in clients]
    shown = st[rows, : check_int("max_steps", max_steps, low=1)]
    fig, ax = figure_axes(ax, (7, 0.45 * len(rows) + 1.2))
    ax.imshow(shown, aspect="auto", cmap="tab20", interpolation="nearest", vmin=0, vmax=max(19, int(st.max())))
    for x in np.arange(n_steps, shown.shape[1], n_steps):
        ax.axvline(x - 0.5, color="white", lw=0.5)
    ax.set_yticks(range(len(rows)), [f"client {c}" for c in rows])
    ax.set_xlabel("time step")
    ax.set_title(title or "latent state (colour) per time step")
    changes = (np.diff(st, axis=1) != 0).mean()
    return fig, {"states": shown, "clients": rows, "change_rate": float(changes)}


def plot_sampling_ratios(alphas: Mapping[str, np.ndarray], *, pi=None, axes=None):
    r"""Heatmaps of sampling ratios :math:`\alpha_{n,m}` (clients × states), one panel per strategy.

    Parameters
    ----------
    alphas : dict label -> array (N, M)
    pi : array-like (N, M), optional
        States a client never visits (:math:`\pi_{n,m} = 0`) are greyed out.
    """
    import matplotlib.pyplot as plt

    check_type("alphas", alphas, Mapping)
    if not alphas:
        raise ValueError("alphas must hold at least one strategy.")
    mats = {k: check_array(f"alphas[{k!r}]", v, ndim=2, nonnegative=True) for k, v in alphas.items()}
    shapes = {a.shape for a in mats.values()}
    if len(shapes) != 1:
        raise ValueError(f"alphas must all have the same shape (N, M), got {sorted(shapes)}.")
    if pi is not None:
        pi = check_array("pi", pi, shape=shapes.pop(), nonnegative=True)
    check_axes("axes", axes, len(mats))
    if axes is None:
        fig, axes = plt.subplots(1, len(mats), figsize=(3.6 * len(mats), 3.2), squeeze=False)
        axes = axes[0]
    else:
        fig = np.atleast_1d(axes)[0].figure
    mask = None if pi is None else pi <= 0
    for ax, (label, a) in zip(np.atleast_1d(axes), mats.items()):
        shown = np.ma.masked_where(mask, a) if mask is not None else a
        im = ax.imshow(shown, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("state m")
        ax.set_ylabel("client n")
    fig.colorbar(im, ax=list(np.atleast_1d(axes)), shrink=0.8, label="α_{n,m}")
    return fig, {"alphas": mats}


def plot_client_scores(scores: Mapping[str, Sequence[float]], *, ax=None, ylabel: str = "Q_n = t₁ + t₂ + t₃"):
    """Grouped bars of a per-client quantity (e.g. :math:`Q_n`) for several strategies."""
    check_type("scores", scores, Mapping)
    if not scores:
        raise ValueError("scores must hold at least one strategy.")
    vals = {k: check_array(f"scores[{k!r}]", v, ndim=1) for k, v in scores.items()}
    n = {len(v) for v in vals.values()}
    if len(n) != 1:
        raise ValueError(f"scores must give every strategy one value per client, got lengths {sorted(n)}.")
    n = n.pop()
    fig, ax = figure_axes(ax, (7, 3))
    width = 0.8 / len(vals)
    for i, (label, v) in enumerate(vals.items()):
        ax.bar(np.arange(n) + (i - (len(vals) - 1) / 2) * width, v, width=width, label=label)
    ax.set_xlabel("client n")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig, {"scores": vals}


def plot_bound_decomposition(result: Mapping, *, ax=None, strategies: Sequence[str] | None = None):
    r"""Stacked bars of Theorem 1's bound, term by term (each term times :math:`18/\sum p_nq_n`).

    Parameters
    ----------
    result : dict
        Output of :func:`fedlab.sfedpo.experiments.bound_explorer`.
    strategies : keys of ``result`` to show (default: ``result["strategies"]``).
    """
    check_type("result", result, Mapping)
    if strategies is None:
        if "strategies" not in result:
            raise ValueError("result must be a bound_explorer result (it has no 'strategies').")
        strategies = result["strategies"]
    names = list(check_sequence("strategies", strategies))
    if not names:
        raise ValueError("strategies must name at least one strategy to plot.")
    for s in names:
        entry = result.get(s) if isinstance(s, str) else None
        if not (isinstance(entry, Mapping) and isinstance(entry.get("terms"), Mapping)
                and all(t in entry["terms"] for t in (*_TERMS, "prefactor"))):
            raise ValueError(f"strategies: result holds no bound terms for {s!r} (a bound_explorer result does for "
                             f"each of its strategies).")
    parts = np.array([[result[s]["terms"][t] * result[s]["terms"]["prefactor"] for t in _TERMS] for s in names])
    fig, ax = figure_axes(ax, (6, 3.4))
    bottom = np.zeros(len(names))
    for j, t in enumerate(_TERMS):
        ax.bar(range(len(names)), parts[:, j], bottom=bottom, label=_TERM_LABELS[t])
        bottom += parts[:, j]
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylabel("Theorem 1 bound (6)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig, {"strategies": names, "terms": list(_TERMS), "parts": parts, "totals": bottom}


def plot_bound_sweep(x, values: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str = "Theorem 1 bound",
                     ax=None, marker: float | None = None):
    """Lines ``values[label]`` against ``x`` (a bound against buffer size, shift speed or oracle error)."""
    x = check_array("x", x, ndim=1)
    check_type("values", values, Mapping)
    if not values:
        raise ValueError("values must hold at least one curve.")
    if marker is not None:
        check_real("marker", marker)
    fig, ax = figure_axes(ax)
    data = {"x": x}
    for label, v in values.items():
        v = check_array(f"values[{label!r}]", v, shape=x.shape)
        ax.plot(x, v, marker=".", label=label)
        data[label] = v
    if marker is not None:
        ax.axvline(marker, color="gray", ls=":", lw=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    return fig, data


def plot_theorem2(sweep: Mapping, *, K: float | None = None, ax=None):
    r"""Theorem 2: measured :math:`|\mathcal B(\hat\alpha,\hat p) - \mathcal B(\alpha,p)|` against
    :math:`\sum_n\delta_n`.

    Points are single draws, the line their mean per :math:`\varepsilon`; ``K`` (e.g. from
    :func:`fedlab.sfedpo.bounds.theorem2_constants`) adds the first-order bound :math:`K\sum\delta` (log axes).
    """
    check_type("sweep", sweep, Mapping)
    missing = [k for k in ("abs_gaps", "delta_sums", "mean_delta_sum", "mean_abs_gap") if k not in sweep]
    if missing:
        raise ValueError(f"sweep lacks {missing}: pass a theorem2_sweep result.")
    gaps = check_array("sweep['abs_gaps']", sweep["abs_gaps"], ndim=2)
    deltas = check_array("sweep['delta_sums']", sweep["delta_sums"], shape=gaps.shape)
    md = check_array("sweep['mean_delta_sum']", sweep["mean_delta_sum"], shape=gaps.shape[:1])
    mg = check_array("sweep['mean_abs_gap']", sweep["mean_abs_gap"], shape=gaps.shape[:1])
    if K is not None:
        check_real("K", K, low=0)
    keep, pos = deltas > 1e-9, md > 1e-9  # eps = 0 has no error to plot on log axes
    fig, ax = figure_axes(ax)
    ax.scatter(deltas[keep], gaps[keep], s=6, alpha=0.4, color="tab:blue", label="single forecasts")
    ax.plot(md[pos], mg[pos], "o-", color="tab:red", ms=4, label="mean per ε")
    data = {"delta": deltas, "gap": gaps, "mean_delta": md, "mean_gap": mg}
    if pos.any():
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):   # the axes span about a decade: label the decades only
            axis.set_minor_formatter(NullFormatter())
    if K is not None and pos.any():
        xs = np.geomspace(md[pos].min(), md.max(), 50)
        ax.plot(xs, K * xs, "k--", lw=1, label=f"first-order bound K·Σδ (K = {K:.3g})")
        data["K_line"] = K * xs
    ax.set_xlabel("Σ_n δ_n = Σ ||π̂_n − π_n||₁")
    ax.set_ylabel("|B(α̂, p̂) − B(α, p)|")
    ax.legend(fontsize=7)
    return fig, data


def plot_method_curves(row: Mapping, *, methods: Sequence[str] | None = None, labels: Mapping[str, str] | None = None,
                       relative: bool = False, ax=None, title: str | None = None):
    """Accuracy curves (mean ± std over seeds) of a :func:`fedlab.sfedpo.experiments.summarize` row.

    With ``relative`` the curves are the paired differences to the row's baseline (``diff_curves``).
    """
    check_type("row", row, Mapping)
    missing = [k for k in ("methods", "rounds", "curves") if k not in row]
    if missing:
        raise ValueError(f"row lacks {missing}: pass a row of fedlab.sfedpo.experiments.summarize.")
    relative = check_bool("relative", relative)
    check_type("labels", labels, Mapping, optional=True)
    methods = list(row["methods"] if methods is None else check_sequence("methods", methods, nonempty=True))
    key = "diff_curves" if relative else "curves"
    if relative and not row.get(key):
        raise ValueError("this row has no diff_curves (the baseline was not run).")
    unknown = [m for m in methods if not isinstance(m, str) or m not in row[key]]
    if unknown:
        raise ValueError(f"methods {unknown} have no curves in row (it has {sorted(row[key])}).")
    x = np.asarray(row["rounds"])
    fig, ax = figure_axes(ax)
    data = {"rounds": x}
    for m in methods:
        mean, std = (np.asarray(v, dtype=float) for v in row[key][m])
        label = (labels or {}).get(m, m)
        ax.plot(x, mean, label=label)
        ax.fill_between(x, mean - std, mean + std, alpha=0.15)
        data[m] = {"mean": mean, "std": std}
    ax.set_xlabel("round")
    ax.set_ylabel(f"accuracy − {row.get('baseline', 'baseline')} (pp)" if relative
                  else "accuracy on the global objective (%)")
    if relative:
        ax.axhline(0, color="gray", lw=0.8)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return fig, data


def plot_bound_vs_accuracy(rows: Sequence[Mapping], *, baseline: str = "fedavg_buffer",
                           methods: Sequence[str] | None = None, key: str = "scenario", ax=None):
    r"""For each method and config: relative change of the bound vs the baseline (x) against the paired accuracy
    difference (y, pp, mean ± std). Points left of 0 improve the bound; points above 0 improve accuracy."""
    check_sequence("rows", rows, nonempty=True)
    check_type("baseline", baseline, str)
    check_type("key", key, str)
    if methods is not None:
        check_sequence("methods", methods)
    for i, row in enumerate(rows):
        check_type(f"rows[{i}]", row, Mapping)
        if "methods" not in row:
            raise ValueError(f"rows[{i}] has no 'methods': pass rows of fedlab.sfedpo.experiments.summarize.")
        if baseline not in row["methods"] or baseline not in row:
            raise ValueError(f"baseline={baseline!r} was not run in rows[{i}] (methods: {row['methods']}).")
        unknown = [m for m in (methods or ()) if m not in row["methods"]]
        if unknown:
            raise ValueError(f"methods {unknown} were not run in rows[{i}] (methods: {row['methods']}).")
    fig, ax = figure_axes(ax, (5.2, 3.6))
    data = {}
    markers = "osD^v<>"
    for i, row in enumerate(rows):
        ms = [m for m in (row["methods"] if methods is None else methods)
              if m != baseline and m in row["methods"] and np.isfinite(row[m]["bound"][0])]
        b0 = row[baseline]["bound"][0]
        xs = np.array([100 * (row[m]["bound"][0] - b0) / b0 for m in ms])
        ys = np.array([row[m]["diff"][0] for m in ms])
        es = np.array([row[m]["diff"][1] for m in ms])
        ax.errorbar(xs, ys, yerr=es, fmt=markers[i % len(markers)], capsize=2, label=str(row.get(key, i)))
        for x, y, m in zip(xs, ys, ms):
            ax.annotate(m.replace("sfedpo", "SF").replace("fedavg_", ""), (x, y), fontsize=6,
                        xytext=(3, 3), textcoords="offset points")
        data[str(row.get(key, i))] = {"methods": ms, "bound_change_pct": xs, "acc_diff": ys, "acc_std": es}
    ax.axhline(0, color="gray", lw=0.8)
    ax.axvline(0, color="gray", lw=0.8)
    ax.set_xlabel(f"Theorem 1 bound vs {baseline} (%)")
    ax.set_ylabel(f"accuracy − {baseline} (pp)")
    ax.legend(fontsize=7, title=key, title_fontsize=7)
    return fig, data


def plot_oracle_sweep(eps, means: Mapping[str, Sequence[float]], stds: Mapping[str, Sequence[float]] | None = None,
                      *, ax=None, ylabel: str = "accuracy (%)"):
    """Accuracy against the oracle perturbation ε (one line per scenario; Table 3)."""
    eps = check_array("eps", eps, ndim=1, nonnegative=True)
    check_type("means", means, Mapping)
    if not means:
        raise ValueError("means must hold at least one curve.")
    check_type("stds", stds, Mapping, optional=True)
    if stds is not None and set(stds) != set(means):
        raise ValueError(f"stds must have the keys of means {sorted(means)}, got {sorted(stds)}.")
    fig, ax = figure_axes(ax)
    data = {"eps": eps}
    for label, m in means.items():
        m = check_array(f"means[{label!r}]", m, shape=eps.shape)
        s = np.zeros_like(m) if stds is None else check_array(f"stds[{label!r}]", stds[label], shape=eps.shape,
                                                                 nonnegative=True)
        ax.errorbar(eps, m, yerr=s, marker="o", capsize=2, label=label)
        data[label] = {"mean": m, "std": s}
    ax.set_xlabel("oracle perturbation ε")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig, data


def plot_ablations(ablations: Sequence[Mapping], *, labels: Mapping[str, str] | None = None, axes=None,
                   ncols: int = 4):
    r"""Paired gain (pp) of each ablation's method over its baselines against the ablated parameter (Figs. 2-3).

    Parameters
    ----------
    ablations : sequence of dict
        :func:`~fedlab.sfedpo.experiments.ablation_gains` outputs, one panel each.
    labels : dict, optional
        Display names of methods.
    axes : sequence of matplotlib Axes, optional
        One per ablation.
    ncols : int
        Panels per row when ``axes`` is None.

    Returns
    -------
    fig, data
        ``data[param] = {"x", "gain": {baseline: (mean, std) arrays}}``.
    """
    import matplotlib.pyplot as plt

    check_sequence("ablations", ablations, nonempty=True)
    for a in ablations:
        if not isinstance(a, Mapping) or not {"param", "values", "gain", "method", "figure"} <= set(a):
            raise ValueError("ablations must hold ablation_gains outputs (param, values, gain, method, figure).")
    check_type("labels", labels, Mapping, optional=True)
    labels = labels or {}
    ncols = check_int("ncols", ncols, low=1)
    check_axes("axes", axes, len(ablations))
    if axes is None:
        nrows = -(-len(ablations) // ncols)
        fig, grid = plt.subplots(nrows, min(ncols, len(ablations)), figsize=(4 * min(ncols, len(ablations)),
                                                                            3 * nrows), squeeze=False)
        for ax in grid.ravel()[len(ablations):]:
            ax.set_visible(False)
        axes = grid.ravel()[:len(ablations)]
    else:
        fig = np.atleast_1d(axes)[0].figure
    data = {}
    for ax, a in zip(np.atleast_1d(axes), ablations):
        x = check_array(f"ablation {a['param']!r} values", a["values"], ndim=1)
        entry = {"x": x, "gain": {}}
        for base, ms in a["gain"].items():
            ms = check_array(f"ablation {a['param']!r} gain[{base!r}]", ms, shape=(x.size, 2))
            ax.errorbar(x, ms[:, 0], yerr=ms[:, 1], marker="o", capsize=3,
                        label=f"{labels.get(a['method'], a['method'])} − {labels.get(base, base)}")
            entry["gain"][base] = (ms[:, 0], ms[:, 1])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlabel(a["param"])
        ax.set_ylabel("paired gain (pp)")
        ax.set_title(a["figure"], fontsize=9)
        ax.legend(fontsize=6)
        data[a["param"]] = entry
    fig.tight_layout()
    return fig, data
