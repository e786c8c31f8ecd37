"""Plots of the availability chapter: traces, chain memory, CA-Fed's trade-off, weights per group."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_type
from fedlab.availability.data import check_trace
from fedlab.plots import check_axes, figure_axes

__all__ = ["plot_availability_raster", "plot_chain_memory", "plot_tradeoff", "plot_client_weights",
           "plot_group_weights", "plot_minimizer_path", "plot_step_size_grid"]

_GROUP_COLORS = ["tab:blue", "tab:red", "tab:orange", "tab:green", "tab:purple", "tab:brown"]


def plot_availability_raster(trace, *, group=None, group_names=(), excluded=None, ax=None, title=None):
    """Clients x rounds raster of a trace ``(T, N)``: available (dark), unavailable (white) and, if ``excluded``
    (list of per-round excluded client lists, or a bool array ``(T, N)``) is given, available-but-excluded (red).

    Clients are sorted by ``group`` (stable). Returns ``(fig, data)`` with ``order`` and ``image`` (N, T) holding
    0 = unavailable, 1 = available (trained), 2 = available but excluded.
    """
    from matplotlib.colors import ListedColormap

    trace = check_trace(trace)
    T, n = trace.shape
    group = _check_group(group, n)
    names = check_type("group_names", group_names, (tuple, list))
    if names and len(names) <= group.max():
        raise ValueError(f"group_names must name every group (labels up to {group.max()}), got {names!r}.")
    order = np.argsort(group, kind="stable")
    image = trace.astype(int)
    if excluded is not None:
        image = np.where(trace & _excluded_mask(excluded, T, n), 2, image)
    image = image[:, order].T
    fig, ax = figure_axes(ax, (7, 3.2))
    ax.imshow(image, aspect="auto", interpolation="nearest", cmap=ListedColormap(["white", "0.25", "tab:red"]),
              vmin=0, vmax=2)
    bounds = np.flatnonzero(np.diff(group[order])) + 0.5
    for b in bounds:
        ax.axhline(b, color="tab:blue", lw=1)
    if group_names:
        starts = np.r_[0, bounds + 0.5]
        ends = np.r_[bounds + 0.5, n]
        ax.set_yticks((starts + ends - 1) / 2)
        ax.set_yticklabels([group_names[g] for g in np.unique(group[order])], fontsize=7)
    ax.set_xlabel("round")
    ax.set_ylabel("client (sorted by group)")
    if title:
        ax.set_title(title, fontsize=9)
    return fig, {"order": order, "image": image}


def _check_group(group, n: int) -> np.ndarray:
    """Group labels (N,) >= 0 (default: one group)."""
    if group is None:
        return np.zeros(n, int)
    arr = np.asarray(group)
    if arr.shape != (n,) or arr.dtype.kind not in "iu" or (n and arr.min() < 0):
        raise ValueError(f"group must hold one integer label >= 0 per client ({n}), got {arr.dtype} {arr.shape}.")
    return arr


def _excluded_mask(excluded, T: int, n: int) -> np.ndarray:
    """Excluded clients as a bool array (T, N): given as one, or as per-round lists of client indices."""
    if isinstance(excluded, np.ndarray) and excluded.dtype == bool:
        if excluded.shape != (T, n):
            raise ValueError(f"excluded must have shape ({T}, {n}), got {excluded.shape}.")
        return excluded
    if isinstance(excluded, (str, bytes)) or not isinstance(excluded, (list, tuple)):
        raise TypeError(f"excluded must be a bool array (T, N) or per-round lists of clients, got {excluded!r:.80}.")
    ex = np.zeros((T, n), dtype=bool)
    for t, ks in enumerate(excluded[:T]):
        ex[t, _client_indices(f"excluded[{t}]", ks, n)] = True
    return ex


def _client_indices(name: str, value, n: int) -> np.ndarray:
    arr = np.asarray(value if isinstance(value, (list, tuple, np.ndarray)) else [value])
    if arr.size and (arr.dtype.kind not in "iu" or arr.ndim != 1 or arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{name} must hold client indices in [0, {n}), got {value!r:.80}.")
    return arr.astype(int)


def plot_chain_memory(pi, lams, *, lags=30, trace=None, trace_lambda=None, ax=None):
    r"""How long a two-state chain remembers being active: :math:`P(\text{active at }t+h\mid\text{active at }t)=
    \pi+\lambda^h(1-\pi)` for each :math:`\lambda` in ``lams`` (from :math:`\mathbf P^h=\mathbf 1\rho^\top+
    \lambda^h(\mathbf I-\mathbf 1\rho^\top)`), optionally with the empirical curve of a trace ``(T, N)`` whose
    clients all share :math:`\pi` (labelled with ``trace_lambda``).

    Returns ``(fig, data)``: ``data["lags"]``, ``data["curves"][lam]`` and, if given, ``data["empirical"]``.
    """
    pi = check_real("pi", pi, low=0, high=1)
    lams = np.atleast_1d(check_array("lams", lams))
    if lams.ndim != 1 or lams.size == 0 or np.any(np.abs(lams) > 1):
        raise ValueError(f"lams must hold second eigenvalues in [-1, 1], got {lams!r}.")
    h = np.arange(0, check_int("lags", lags, low=1) + 1)
    if trace_lambda is not None:
        check_real("trace_lambda", trace_lambda, low=-1, high=1)
    tr = None if trace is None else check_trace(trace)
    fig, ax = figure_axes(ax, (4.8, 3.2))
    data = {"lags": h, "curves": {}}
    for lam in lams:
        curve = pi + lam ** h * (1 - pi)
        ax.plot(h, curve, label=f"λ = {lam:g}")
        data["curves"][float(lam)] = curve
    if tr is not None:
        emp = np.array([(tr[: len(tr) - k] & tr[k:]).sum() / max(tr[: len(tr) - k].sum(), 1) for k in h])
        ax.plot(h, emp, "k.", ms=4, label="simulated" + ("" if trace_lambda is None else f" (λ = {trace_lambda:g})"))
        data["empirical"] = emp
    ax.axhline(pi, color="0.5", ls=":", lw=1)
    ax.set_xlabel("lag h (rounds)")
    ax.set_ylabel("P(active at t+h | active at t)")
    ax.legend(fontsize=7)
    return fig, data


def plot_tradeoff(kappa2, opt, bias, n_excluded, *, current=None, axes=None, title=None):
    r"""CA-Fed's proxy terms against :math:`\bar\kappa^2` (log axis) and the number of excluded clients.

    Parameters
    ----------
    kappa2, opt, bias, n_excluded : arrays (G,)
        Grid and, for each value, the optimisation term, bias term and number excluded.
    current : float, optional
        Draw a vertical line at this :math:`\bar\kappa^2`.

    Returns ``(fig, data)`` with the plotted arrays (``total = opt + bias``).
    """
    import matplotlib.pyplot as plt

    k = check_array("kappa2", kappa2, ndim=1, nonnegative=True)
    opt = check_array("opt", opt, shape=k.shape)
    bias = check_array("bias", bias, shape=k.shape, nonnegative=True)
    nex = check_array("n_excluded", n_excluded, shape=k.shape, nonnegative=True)
    if k.size == 0:
        raise ValueError("kappa2 must hold at least one value.")
    if np.any(nex != np.round(nex)):
        raise ValueError("n_excluded must hold numbers of clients (whole numbers).")
    if current is not None:
        check_real("current", current, low=0)
    check_axes("axes", axes, n=2)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    fig = axes[0].figure
    axes[0].plot(k, opt, label=r"opt: $\langle\hat F-\hat F^*,\tilde p\rangle$")
    axes[0].plot(k, bias, label=r"bias: $4\bar\kappa^2 d_{TV}^2\hat\Gamma'$")
    axes[0].plot(k, opt + bias, "k", lw=2, label="total (2.33)")
    axes[1].step(k, nex, where="post")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel(r"$\bar\kappa^2$")
        if current is not None:
            ax.axvline(current, color="0.4", ls="--", lw=1)
    axes[0].legend(fontsize=7)
    axes[0].set_ylabel("proxy value")
    axes[1].set_ylabel("# excluded clients")
    if title:
        axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    return fig, {"kappa2": k, "opt": opt, "bias": bias, "total": opt + bias, "n_excluded": nex}


def plot_client_weights(q, p, alpha, *, excluded=(), group=None, ax=None, title=None):
    r"""Bars of the weights :math:`q_k` and of the biased importance :math:`p_k` against :math:`\alpha_k`;
    excluded clients are hatched. Returns ``(fig, data)``."""
    q = check_array("q", q, ndim=1, nonnegative=True)
    p = check_array("p", p, shape=q.shape, nonnegative=True)
    alpha = check_array("alpha", alpha, shape=q.shape, nonnegative=True)
    group = _check_group(group, len(q))
    ex = np.zeros(len(q), bool)
    ex[_client_indices("excluded", excluded, len(q))] = True
    fig, ax = figure_axes(ax, (5.5, 3.2))
    x = np.arange(len(q))
    colors = [_GROUP_COLORS[g % len(_GROUP_COLORS)] for g in group]
    ax.bar(x - 0.2, q / max(q.sum(), 1e-300), width=0.4, color=colors, alpha=0.5, label="q (normalised)")
    bars = ax.bar(x + 0.2, p, width=0.4, color=colors, label="p (biased importance)")
    for b, e in zip(bars, ex):
        if e:
            b.set_hatch("//")
            b.set_facecolor("0.85")
    ax.plot(x, alpha, "k_", ms=14, mew=2, label=r"target $\alpha$")
    ax.set_xticks(x)
    ax.set_xlabel("client")
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return fig, {"q": q, "p": p, "alpha": alpha, "excluded": np.flatnonzero(ex)}


def plot_group_weights(weights: dict, *, ax=None, title=None):
    r"""Grouped bars of cumulative weights :math:`\frac1T\sum_t\sum_{k\in g}q_k^{(t)}` (Fig. 2.11d):
    ``weights[method][group] = (mean, std)`` or a number. Returns ``(fig, data)``."""
    methods = list(check_type("weights", weights, dict))
    if not methods:
        raise ValueError("weights must hold at least one method.")
    groups = list(check_type(f"weights[{methods[0]!r}]", weights[methods[0]], dict))
    for m in methods:
        if not isinstance(weights[m], dict) or list(weights[m]) != groups:
            raise ValueError(f"weights[{m!r}] must map the groups {groups} to a weight or a (mean, std) pair.")
        for g, v in weights[m].items():
            check_array(f"weights[{m!r}][{g!r}]", v, shape=(2,) if isinstance(v, (tuple, list)) else ())
    fig, ax = figure_axes(ax, (6.5, 3.2))
    width = 0.8 / len(groups)
    data = {}
    for j, g in enumerate(groups):
        vals = [weights[m][g] for m in methods]
        mean = np.array([v[0] if isinstance(v, (tuple, list)) else v for v in vals], float)
        std = np.array([v[1] if isinstance(v, (tuple, list)) else 0.0 for v in vals], float)
        ax.bar(np.arange(len(methods)) + (j - (len(groups) - 1) / 2) * width, mean, width, yerr=std,
               color=_GROUP_COLORS[j % len(_GROUP_COLORS)], label=g, capsize=2)
        data[g] = {"mean": mean, "std": std}
    ax.set_xticks(np.arange(len(methods)))
    ax.set_xticklabels(methods, fontsize=7, rotation=20)
    ax.set_ylabel("cumulative weight")
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return fig, {"methods": methods, "groups": data}


def plot_minimizer_path(B, q_star, pi, *, b0=None, ax=None):
    r"""Minimiser :math:`\mathbf q^*(B)` of :math:`\bar\epsilon_{opt}` (D.200) against :math:`B=v`, one line per client
    (coloured by :math:`\pi_k`), with the uniform point :math:`B_0` marked. Returns ``(fig, data)``."""
    B = check_array("B", B, ndim=1, nonnegative=True)
    q_star = check_array("q_star", q_star, shape=(len(B), None), nonnegative=True)
    pi = check_array("pi", pi, shape=(q_star.shape[1],))
    if np.any((pi < 0) | (pi > 1)) or B.size == 0:
        raise ValueError("pi must hold availabilities in [0, 1] and B at least one value.")
    if b0 is not None:
        check_real("b0", b0, low=0)
    fig, ax = figure_axes(ax, (4.8, 3.2))
    levels = np.unique(pi)
    for k in range(q_star.shape[1]):
        first = np.flatnonzero(pi == pi[k])[0] == k
        ax.plot(B, q_star[:, k], color=_GROUP_COLORS[int(np.searchsorted(levels, pi[k])) % len(_GROUP_COLORS)],
                label=f"π = {pi[k]:g}" if first else None)
    if b0 is not None:
        ax.axvline(b0, color="0.4", ls="--", lw=1, label=r"$B_0$ (uniform $q^*$)")
    ax.set_xlabel(r"$B = v$ (grows with diam$(W)^2$ and $M$)")
    ax.set_ylabel(r"$q_k^*$")
    ax.legend(fontsize=7)
    return fig, {"B": B, "q_star": q_star, "pi": pi}


def plot_step_size_grid(tuned: dict, *, axes=None, title=None):
    r"""The step-size search of each method (Table 4's protocol): seed-mean score against the local step size, one
    line per server step size, the chosen pair starred. ``tuned`` is the output of
    ``fedlab.availability.experiments.tune_step_sizes``. Returns ``(fig, data)``, ``data[label]`` holding ``lrs``,
    ``server_lrs``, ``grid`` (L, S) and ``best``."""
    import matplotlib.pyplot as plt

    labels = list(check_type("tuned", tuned, dict))
    if not labels:
        raise ValueError("tuned must hold at least one method.")
    data = {}
    for label in labels:
        entry = tuned[label]
        if not isinstance(entry, dict) or not {"lrs", "server_lrs", "grid", "best"} <= set(entry):
            raise ValueError(f"tuned[{label!r}] must hold lrs, server_lrs, grid and best (see tune_step_sizes).")
        lrs = check_array(f"tuned[{label!r}]['lrs']", entry["lrs"], ndim=1, nonnegative=True)
        slrs = check_array(f"tuned[{label!r}]['server_lrs']", entry["server_lrs"], ndim=1, nonnegative=True)
        grid = check_array(f"tuned[{label!r}]['grid']", entry["grid"], shape=(len(lrs), len(slrs)), finite=False)
        data[label] = {"lrs": lrs, "server_lrs": slrs, "grid": grid, "best": tuple(entry["best"])}
    check_axes("axes", axes, n=len(labels))
    if axes is None:
        fig, axes = plt.subplots(1, len(labels), figsize=(3.4 * len(labels), 3), sharey=True, squeeze=False)
        axes = axes[0]
    fig = axes[0].figure
    for ax, label in zip(axes, labels):
        d = data[label]
        for j, slr in enumerate(d["server_lrs"]):
            ax.plot(d["lrs"], d["grid"][:, j], marker="o", ms=3, label=f"server {slr:g}")
        best = d["best"]
        i, j = list(d["lrs"]).index(best[0]), list(d["server_lrs"]).index(best[1])
        ax.plot(best[0], d["grid"][i, j], "k*", ms=12)
        ax.set(xscale="log", xlabel="local step size", title=f"{label}: best {best[0]:g} / {best[1]:g}")
        ax.title.set_fontsize(8)
    axes[0].set_ylabel("final accuracy (seed mean)")
    axes[0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig, data
