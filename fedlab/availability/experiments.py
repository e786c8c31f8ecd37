r"""Experiments of the availability chapter (thesis §2.2.6): CA-Fed against the baselines.

One run = one data set (:data:`fedlab.availability.data.AVAILABILITY_DATASETS`), one availability population and
trace, one method, one seed. Everything random derives from the seed through separate streams, so all methods of a
seed share the data, the availability trace, the initial model and the minibatches (common random numbers).

The model is a multinomial logistic regression with ridge ``weight_decay`` (strongly convex, as in the
thesis), trained with plain SGD; target importance :math:`\alpha_k\propto n_k^{train}`; the reported accuracy is
the α-weighted mean of the clients' test accuracies.
"""
from __future__ import annotations

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_bool, check_choice, check_int, check_real, check_simplex, check_type
from fedlab.availability.algorithms import PRESETS
from fedlab.availability.data import (AVAILABILITY_DATASETS, DIGITS_SPLITS, LAYOUTS, AvailabilityEstimator,
                                      MarkovAvailability, digits_federation, leaf_federation, make_population,
                                      spatial_population)
from fedlab.engine import History, LocalSGD, run
from fedlab.models import LinearModel

__all__ = ["AUTHORS_OPTIMIZER", "DEFAULT_LR", "METHOD_LABELS", "availability_setup", "method_label",
           "comparison_configs", "by_label", "seed_stats", "seed_values", "format_spread", "run_availability",
           "summarize_run", "estimator_errors", "step_size_configs", "tune_step_sizes", "curves_by",
           "exclusion_when_available"]

DEFAULT_LR = {"leaf": 0.02, "digits": 0.1}
AUTHORS_OPTIMIZER = {"momentum": 0.9, "weight_decay": 1e-2, "server_momentum": 0.9, "server_weight_decay": 1e-2}
"""The authors' code's optimisers (spec §4.2): local and server SGD, both with momentum 0.9 and weight decay 1e-2."""



def availability_setup(dataset: str, n_clients: int, rounds: int, seed: int, *, layout: str = "code3",
                       g: float = 0.4, nu: float = 0.9, eps: float = 1e-2, t_prior: int = 0,
                       heterogeneity: float = 0.5, split: str = "client"):
    """Data set, availability population, training trace ``(rounds, N)`` and prior trace ``(t_prior, N)`` of a seed.

    ``heterogeneity`` is γ = δ for ``"leaf"`` and the Dirichlet concentration for ``"digits"``. The population's
    groups and the trace's uniforms depend only on the seed, so ``nu = 0`` gives the same groups as ``nu = 0.9``.
    ``layout="spatial"`` is Fig. 2.15's population (:func:`spatial_population`; ``g``, ``nu`` and ``eps`` unused);
    ``split`` is the digits split (:func:`digits_federation`).
    """
    check_choice("dataset", dataset, AVAILABILITY_DATASETS)
    n_clients = check_int("n_clients", n_clients, low=2)
    rounds = check_int("rounds", rounds, low=1)
    t_prior = check_int("t_prior", t_prior, low=0)
    check_real("heterogeneity", heterogeneity, low=0, low_open=dataset == "digits")
    check_choice("layout", layout, (*LAYOUTS, "spatial"))
    check_choice("split", split, DIGITS_SPLITS)
    if dataset == "leaf":
        data = leaf_federation(n_clients, seed, gamma=heterogeneity, delta=heterogeneity)
    else:
        data = digits_federation(n_clients, seed, dirichlet=heterogeneity, split=split)
    if layout == "spatial":
        population = spatial_population(n_clients)
    else:
        population = make_population(n_clients, g=g, nu=nu, eps=eps, layout=layout,
                                     rng=numpy_rng(seed, Stream.AVAILABILITY_POPULATION))
    # the prior rounds come first, training continues the same chains
    full = population.simulate(t_prior + rounds, rng=numpy_rng(seed, Stream.AVAILABILITY_TRACE))
    return data, population, full[t_prior:], full[:t_prior]


def _method(method: str, model, solver, trace, population: MarkovAvailability, *, server_lr, kappa2, estimator,
            prior_trace, f3ast_k, server_momentum, server_weight_decay):
    kwargs = dict(participation=trace, pi=population.client_pi, lam=population.client_lambda, server_lr=server_lr,
                  server_momentum=server_momentum, server_weight_decay=server_weight_decay,
                  estimator=estimator, prior_trace=prior_trace if len(prior_trace) else None)
    if method == "cafed":
        kwargs["kappa2"] = kappa2
    if method == "f3ast":
        kwargs["k"] = f3ast_k
    return PRESETS[method](model, solver, **kwargs)


def summarize_run(history, population: MarkovAvailability, alpha: np.ndarray, *, at: int = 40) -> dict:
    """Curves and summary numbers of one run (α-weighted accuracy, included clients, group weights, exclusions)."""
    check_type("history", history, History)
    check_type("population", population, MarkovAvailability)
    alpha = check_simplex("alpha", alpha, shape=(population.n_clients,))
    check_int("at", at, low=0)
    if not history.log or "weights" not in history.log[0] or "test_accuracy" not in history.clients:
        raise ValueError("history must be a run of an availability method (its log has no client weights).")
    rounds = np.asarray(history.rounds)
    acc = np.array([np.nansum(alpha * a) for a in history.clients["test_accuracy"]])
    loss = np.array([np.nansum(alpha * v) for v in history.clients["train_loss"]])
    log = history.log
    weights = np.array([entry["weights"] for entry in log])            # (T, N)
    n_trained = np.array([len(entry["trained"]) for entry in log])
    n_active = np.array([len(entry["active"]) for entry in log])
    after = rounds >= 1
    half = rounds >= rounds[-1] / 2
    at_idx = int(np.argmin(np.abs(rounds - min(at, rounds[-1]))))
    groups = {name: float(weights[:, population.group == g].sum(1).mean())
              for g, name in enumerate(population.group_names)}
    out = {
        "rounds": rounds.tolist(), "accuracy": acc.tolist(), "train_loss": loss.tolist(),
        "final_accuracy": float(acc[-1]), "max_accuracy": float(acc.max()),
        "time_avg_accuracy": float(acc[after].mean()), "std_second_half": float(acc[half].std()),
        "accuracy_at": float(acc[at_idx]), "at": int(rounds[at_idx]),
        "final_loss": float(loss[-1]),
        "mean_included": float(n_trained.mean()), "mean_available": float(n_active.mean()),
        "included": n_trained.tolist(), "group_weights": groups,
        "group": population.group.tolist(), "group_names": list(population.group_names),
    }
    if log and "excluded" in log[0]:
        excl = np.zeros(weights.shape, dtype=bool)
        for t, entry in enumerate(log):
            excl[t, entry["excluded"]] = True
        out["excluded"] = [entry["excluded"] for entry in log]
        out["n_excluded"] = excl.sum(1).tolist()
        out["group_exclusion"] = {name: float(excl[:, population.group == g].mean())
                                  for g, name in enumerate(population.group_names)}
    return out


def run_availability(*, dataset: str = "leaf", method: str = "cafed", kappa2: float = 1.0, rounds: int = 100,
                     n_clients: int = 24, layout: str = "code3", lr: float | None = None, local_steps: int = 5,
                     batch_size: int = 32, server_lr: float = 1.0, weight_decay: float = 1e-2,
                     momentum: float = 0.0, server_momentum: float = 0.0, server_weight_decay: float = 0.0,
                     keep_state: bool = False,
                     f3ast_k: int | None = None, estimator: str = "oracle", t_prior: int = 0,
                     heterogeneity: float = 0.5, split: str = "client", nu: float = 0.9, eval_every: int = 1,
                     seed: int = 0) -> dict:
    r"""Train one availability method on one seed and return JSON-serialisable curves and summaries.

    Parameters
    ----------
    dataset : {"leaf", "digits"}
    method : {"unbiased", "more_available", "less_correlated", "adafed", "f3ast", "cafed"}
    kappa2 : float
        CA-Fed's :math:`\bar\kappa^2` (ignored by the other methods).
    rounds, n_clients, local_steps, batch_size : int
    layout : {"code3", "thesis4", "spatial"}
        Availability groups (``fedlab.availability.data.LAYOUTS``), or Fig. 2.15's clusters.
    lr : float or None
        Local step size (default ``DEFAULT_LR[dataset]``); ``server_lr`` is :math:`\bar\eta`.
    weight_decay : float
        Ridge coefficient of the local objectives.
    momentum : float in [0, 1)
        Local heavy-ball coefficient (the buffer restarts every round).
    server_momentum, server_weight_decay : float
        The server optimiser's momentum and weight decay (0: the plain update (2.16); the authors' code: 0.9 and
        1e-2, see :data:`AUTHORS_OPTIMIZER`).
    keep_state : bool
        Each client keeps its local optimizer (its momentum buffer) from one round in which it trains to the next,
        as the authors' code does (full mode).
    f3ast_k : int or None
        F3AST's clients per round (default N/4).
    estimator : {"oracle", "bayes"}
    t_prior : int
        Rounds of availability observed before training (Bayesian warm start).
    heterogeneity : float
        γ = δ (leaf) or the Dirichlet concentration (digits).
    split : {"client", "cluster", "iid"}
        The digits split (:func:`digits_federation`).
    nu : float
        :math:`\lambda` of the correlated groups (0 removes the temporal correlation, same groups and :math:`\pi`).
    eval_every : int
        Evaluate the model every ``eval_every`` rounds (and at the end).
    seed : int

    Returns
    -------
    dict
        See :func:`summarize_run`, plus ``"config"``-like fields ``method``, ``kappa2``, ``pi`` and ``lam``, and
        ``n_test``: the test-set size worth one sample of the α-weighted accuracy in the worst case,
        :math:`\min_k n_k^{test}/\alpha_k` (one test sample of client :math:`k` moves it by :math:`\alpha_k/n_k^{test}`).
    """
    check_choice("method", method, PRESETS)
    check_real("kappa2", kappa2, low=0)
    if lr is not None:
        check_real("lr", lr, low=0, low_open=True)
    if f3ast_k is not None:
        check_int("f3ast_k", f3ast_k, low=1)
    data, population, trace, prior_trace = availability_setup(dataset, n_clients, rounds, seed, layout=layout,
                                                              t_prior=t_prior, heterogeneity=heterogeneity, nu=nu,
                                                              split=split)
    lr = DEFAULT_LR[dataset] if lr is None else lr
    model = LinearModel(data.train.feature_shape[0], 10)
    solver = LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size, weight_decay=weight_decay,
                      momentum=momentum, keep_state=keep_state)
    algo = _method(method, model, solver, trace, population, server_lr=server_lr, kappa2=kappa2,
                   estimator=estimator, prior_trace=prior_trace, f3ast_k=f3ast_k, server_momentum=server_momentum,
                   server_weight_decay=server_weight_decay)
    _, history = run(algo, data, rounds=rounds, seed=seed, eval_every=eval_every, progress=False)
    n = data.train.n.numpy().astype(float)
    out = summarize_run(history, population, n / n.sum())
    n_test = data.test.n.numpy().astype(float)
    out["n_test"] = int(np.min((n_test * n.sum() / np.maximum(n, 1))[n_test > 0]))
    out.update({"method": method, "kappa2": float(kappa2), "pi": population.client_pi.tolist(),
                "lam": population.client_lambda.tolist()})
    if method == "cafed":
        out["availability"] = trace.astype(int).tolist()
    return out


def estimator_errors(priors, *, n_clients: int = 100, layout: str = "code3", seeds=(0,)) -> dict:
    r"""Mean absolute errors :math:`\frac1N\sum_k|\hat\pi_k-\pi_k|` and :math:`\frac1N\sum_k|\hat\lambda_k-\lambda_k|` of
    the Bayesian estimators after observing each chain for :math:`t'` rounds (Fig. 2.14a analogue).

    Parameters
    ----------
    priors : sequence of int
        Observation lengths :math:`t'`.
    n_clients : int
    layout : str
    seeds : sequence of int

    Returns
    -------
    dict
        ``priors`` (P,), ``pi_error`` and ``lambda_error`` of shape (len(seeds), P).
    """
    if isinstance(priors, (str, bytes)) or not isinstance(priors, (list, tuple, np.ndarray)) or len(priors) == 0:
        raise TypeError(f"priors must be a non-empty sequence of observation lengths, got {priors!r}.")
    priors = [check_int(f"priors[{i}]", t, low=1) for i, t in enumerate(priors)]
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (list, tuple, np.ndarray)) or len(seeds) == 0:
        raise TypeError(f"seeds must be a non-empty sequence of seeds, got {seeds!r}.")
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(seeds)]
    check_int("n_clients", n_clients, low=1)
    check_choice("layout", layout, LAYOUTS)
    pi_err, lam_err = [], []
    for seed in seeds:
        pop = make_population(n_clients, layout=layout, rng=numpy_rng(seed, Stream.AVAILABILITY_POPULATION))
        trace = pop.simulate(max(priors), rng=numpy_rng(seed, Stream.AVAILABILITY_PRIOR))
        est = AvailabilityEstimator.empty(n_clients)
        row_pi, row_lam, done = [], [], 0
        for t in sorted(priors):
            est = est.observe_trace(trace[done:t])
            done = t
            row_pi.append(float(np.abs(est.pi_hat - pop.client_pi).mean()))
            row_lam.append(float(np.abs(est.lambda_hat - pop.client_lambda).mean()))
        order = np.argsort(np.argsort(priors))
        pi_err.append(np.array(row_pi)[order].tolist())
        lam_err.append(np.array(row_lam)[order].tolist())
    return {"priors": list(priors), "pi_error": pi_err, "lambda_error": lam_err}


METHOD_LABELS = {name: method.label for name, method in PRESETS.items()}


def method_label(config: dict) -> str:
    """Readable label of a ``run_availability`` config, e.g. ``"CA-Fed (κ̄²=1)"`` or ``"Unbiased (ν=0)"``."""
    check_type("config", config, dict)
    label = METHOD_LABELS[check_choice("config['method']", config.get("method", "cafed"), METHOD_LABELS)]
    if config.get("method", "cafed") == "cafed":
        label += f" (κ̄²={config.get('kappa2', 1.0):g})"
    if config.get("nu", 0.9) != 0.9:
        label += f" (ν={config['nu']:g})"
    return label


def comparison_configs(dataset: str, *, kappa2_grid=(1.0,), baselines=("unbiased", "more_available", "less_correlated",
                       "adafed"), no_correlation: bool = True, **common) -> list[dict]:
    r"""Configs for :func:`run_availability`: the baselines, CA-Fed for each :math:`\bar\kappa^2` and, optionally,
    Unbiased without temporal correlation (``nu=0``). ``common`` is added to every config."""
    check_choice("dataset", dataset, AVAILABILITY_DATASETS)
    baselines = [check_choice("baselines", m, PRESETS) for m in check_type("baselines", baselines, (tuple, list))]
    kappa2_grid = [check_real("kappa2_grid", k, low=0) for k in check_type("kappa2_grid", kappa2_grid, (tuple, list))]
    no_correlation = check_bool("no_correlation", no_correlation)
    configs = [{"dataset": dataset, "method": m, **common} for m in baselines]
    configs += [{"dataset": dataset, "method": "cafed", "kappa2": float(k), **common} for k in kappa2_grid]
    if no_correlation:
        configs.append({"dataset": dataset, "method": "unbiased", "nu": 0.0, **common})
    return configs


def by_label(records) -> dict:
    """Group sweep records ``{"config", "seed", "result"}`` as ``{label: {seed: result}}`` (see :func:`method_label`)."""
    out: dict = {}
    if isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise TypeError(f"records must be an iterable of sweep records, got {type(records).__name__}.")
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not {"config", "seed", "result"} <= set(rec):
            raise TypeError(f"records[{i}] must be a dict with 'config', 'seed' and 'result', got {rec!r:.80}.")
        if "error" in rec:
            continue
        out.setdefault(method_label(rec["config"]), {})[rec["seed"]] = rec["result"]
    return out


def seed_stats(runs: dict, metric: str, other: dict | None = None) -> tuple[float, float]:
    """Mean and std over seeds of ``result[metric]`` (``runs = {seed: result}``), or of the paired difference
    ``runs[s][metric] - other[s][metric]`` over the common seeds when ``other`` is given."""
    vals = seed_values(runs, metric, other)
    return float(vals.mean()), float(vals.std())


def seed_values(runs: dict, metric: str, other: dict | None = None) -> np.ndarray:
    """Per-seed values (sorted seeds) of ``result[metric]``, or of the paired difference with ``other`` over the
    common seeds; see :func:`seed_stats`."""
    for name, value in (("runs", runs), ("other", {} if other is None else other)):
        if not isinstance(value, dict) or not all(isinstance(r, dict) and metric in r for r in value.values()):
            raise ValueError(f"{name} must map seeds to results holding the metric {metric!r}.")
    seeds = sorted(runs) if other is None else sorted(set(runs) & set(other))
    if not seeds:
        raise ValueError("no seeds to aggregate: runs (and other) share none.")
    return np.array([runs[s][metric] - (other[s][metric] if other is not None else 0.0) for s in seeds], float)


def format_spread(values, *, scale: float = 1.0, fmt: str = "{:.3f}") -> str:
    """``"mean ± std"`` of per-seed ``values`` times ``scale`` with three seeds or more, else ``"mean [min, max]"``
    (a standard deviation of two seeds says little)."""
    values = check_type("values", values, (list, tuple, np.ndarray))
    check_real("scale", scale)
    vals = scale * np.asarray(values, float).ravel()
    if vals.size == 0 or not np.all(np.isfinite(vals)):
        raise ValueError(f"values must be a non-empty sequence of finite numbers, got {values!r:.80}.")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format string such as '{{:.3f}}', got {type(fmt).__name__}.")
    if vals.size >= 3:
        return f"{fmt.format(vals.mean())} ± {fmt.replace('+', '').format(vals.std())}"
    return f"{fmt.format(vals.mean())} [{fmt.format(vals.min())}, {fmt.format(vals.max())}]"


def step_size_configs(dataset: str, methods, lrs, server_lrs, **common) -> list[dict]:
    r"""Configs for :func:`run_availability`: every method on the grid ``lrs`` x ``server_lrs`` of local and server
    step sizes (Table 4's protocol: each method gets its own best pair). ``common`` is added to every config, e.g.
    ``**AUTHORS_OPTIMIZER`` and ``kappa2``."""
    check_choice("dataset", dataset, AVAILABILITY_DATASETS)
    methods = [check_choice("methods", m, PRESETS) for m in check_type("methods", methods, (tuple, list))]
    grids = {}
    for name, grid in (("lrs", lrs), ("server_lrs", server_lrs)):
        grid = check_type(name, grid, (tuple, list))
        if not grid:
            raise ValueError(f"{name} must hold at least one step size, got {grid!r}.")
        grids[name] = [check_real(f"{name}[{i}]", v, low=0, low_open=True) for i, v in enumerate(grid)]
    return [{"dataset": dataset, "method": m, "lr": float(lr), "server_lr": float(slr), **common}
            for m in methods for lr in grids["lrs"] for slr in grids["server_lrs"]]


def tune_step_sizes(records, metric: str = "final_accuracy") -> dict:
    r"""Pick each method's best (local, server) step sizes from the records of a :func:`step_size_configs` sweep.

    A pair's score is the mean of ``result[metric]`` over the seeds (a diverged run, NaN, scores lowest).

    Returns
    -------
    dict
        ``{label: {"lrs", "server_lrs", "grid" (L, S) seed means, "best": (lr, server_lr), "runs": {seed: result},
        "config": the best pair's config}}`` with ``label`` from :func:`method_label`. Run ``config`` again on seeds the
        tuning did not see to judge the method: the best of a grid, judged on the seeds that chose it, is biased upward.
    """
    if isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise TypeError(f"records must be an iterable of sweep records, got {type(records).__name__}.")
    if not isinstance(metric, str):
        raise TypeError(f"metric must be the name of a result field, got {type(metric).__name__}.")
    cells, configs = {}, {}
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not {"config", "seed", "result"} <= set(rec) \
                or not {"lr", "server_lr"} <= set(rec["config"]):
            raise TypeError(f"records[{i}] must be a step-size sweep record (config with lr and server_lr), "
                            f"got {rec!r:.80}.")
        if metric not in rec["result"]:
            raise ValueError(f"records[{i}]'s result has no metric {metric!r}.")
        cell = (method_label(rec["config"]), rec["config"]["lr"], rec["config"]["server_lr"])
        if configs.setdefault(cell, rec["config"]) != rec["config"]:
            raise ValueError(f"records[{i}]: two configs of {cell[0]!r} at steps {cell[1:]} differ; tune one "
                             f"step_size_configs grid at a time.")
        cells.setdefault(cell[0], {}).setdefault(cell[1:], {})[rec["seed"]] = rec["result"]
    return {label: _best_cell(grid, metric, configs, label) for label, grid in cells.items()}


def _best_cell(grid: dict, metric: str, configs: dict, label: str) -> dict:
    lrs, server_lrs = sorted({k[0] for k in grid}), sorted({k[1] for k in grid})
    score = np.full((len(lrs), len(server_lrs)), np.nan)
    for (lr, slr), runs in grid.items():
        score[lrs.index(lr), server_lrs.index(slr)] = np.mean([r[metric] for r in runs.values()])
    i, j = np.unravel_index(np.argmax(np.nan_to_num(score, nan=-np.inf)), score.shape)
    best = (lrs[i], server_lrs[j])
    return {"lrs": lrs, "server_lrs": server_lrs, "grid": score.tolist(), "best": best, "runs": grid[best],
            "config": dict(configs[(label, *best)])}


def curves_by(records, key: str, metric: str = "final_accuracy") -> dict:
    """Sweep records as ``{label: (x, runs)}`` for ``fedlab.plots.plot_curves``: ``x`` the sorted values of
    ``config[key]`` (e.g. ``"heterogeneity"``, Fig. 2.13, or ``"t_prior"``, Fig. 2.14b) and ``runs`` (seeds, len(x))
    the ``result[metric]`` of each seed (NaN where a run is missing)."""
    if not isinstance(key, str) or not isinstance(metric, str):
        raise TypeError(f"key and metric must be names, got {key!r} and {metric!r}.")
    table: dict = {}
    for label, runs in by_label([dict(r, config={k: v for k, v in r["config"].items() if k != key}, seed=(r["seed"],
                                      r["config"].get(key))) for r in _records(records, key)]).items():
        for (seed, value), result in runs.items():
            if metric not in result:
                raise ValueError(f"a result of {label!r} has no metric {metric!r}.")
            table.setdefault(label, {}).setdefault(value, {})[seed] = result[metric]
    out = {}
    for label, cols in table.items():
        x = sorted(cols)
        seeds = sorted({s for col in cols.values() for s in col})
        out[label] = (np.array(x, float), np.array([[cols[v].get(s, np.nan) for v in x] for s in seeds], float))
    return out


def _records(records, key: str) -> list[dict]:
    """The successful records of a sweep over ``config[key]``, validated."""
    if isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise TypeError(f"records must be an iterable of sweep records, got {type(records).__name__}.")
    records = list(records)
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not {"config", "seed", "result"} <= set(rec) or key not in rec["config"]:
            raise ValueError(f"records[{i}] must be a sweep record whose config sets the key {key!r}, got "
                             f"{rec!r:.80}.")
    return [r for r in records if "error" not in r]


def exclusion_when_available(result: dict) -> dict:
    """Per group, the fraction of the (client, round) pairs in which a client is available that CA-Fed excludes
    (Fig. 2.15's reading), from a CA-Fed result of :func:`run_availability`."""
    check_type("result", result, dict)
    if not {"availability", "excluded", "group", "group_names"} <= set(result):
        raise ValueError("result must be a CA-Fed run of run_availability (availability, excluded, group).")
    avail = np.asarray(result["availability"], bool)
    excl = np.zeros_like(avail)
    for t, clients in enumerate(result["excluded"]):
        excl[t, clients] = True
    group = np.asarray(result["group"])
    return {name: float((excl & avail)[:, group == g].sum() / max(avail[:, group == g].sum(), 1))
            for g, name in enumerate(result["group_names"])}
