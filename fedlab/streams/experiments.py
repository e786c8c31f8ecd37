r"""Experiments of the data-streams chapter (thesis §4.3.4; chapter spec §5.3-5.4).

* **A** (``task="logistic"``): the paper's synthetic logistic regression with historical and fresh clients;
  metric: test accuracy (%) averaged over clients.
* **B** (``task="linear"``): linear regression :math:`y = \langle x, \theta_m\rangle + \sigma\xi`,
  :math:`x\sim\mathcal U[-1,1]^{d}`, no bias; since :math:`\mathbb E[xx^\top] = I/3` for every client the
  exact excess risk of the target mixture :math:`\alpha = n` is
  :math:`\tfrac13\|\theta - \sum_m n_m\theta_m\|^2` (squared error), so no test set is needed.

:func:`compare_strategies` runs Fresh, Historical, Uniform, Ours and a grid of :math:`p_{hist}` on one
draw of the data (same data and same initial model for every strategy: paired comparisons) and returns a
JSON-serialisable dict; :func:`sweep` runs it over seeds. :func:`summarize` turns records into mean ± std
rows. :func:`bayes_accuracy_draws` gives the distribution of the synthetic generator's Bayes accuracy over draws of
:math:`\theta_0`, the ceiling of every strategy. The published numbers are in :mod:`fedlab.streams.published`.
"""
from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_simplex
from fedlab.algorithms.common import initial_params
from fedlab.streams.algorithms import PRESETS, strategy_weights
from fedlab.streams.bounds import estimate_ratio, optimal_p_hist, p_hist_weights
from fedlab.streams.data import StreamSynthetic, make_stream_synthetic, synthetic_case_study
from fedlab.engine import ClientData, LocalSGD, broadcast, check_model_data, local_sgd, run
from fedlab.experiments.aggregate import group_by_config
from fedlab.models import LinearModel, Params, check_model, check_params

__all__ = [
    "LinearNoBias",
    "excess_risk",
    "estimate_constants",
    "compare_strategies",
    "summarize",
    "bayes_accuracy_draws",
    "STRATEGY_ORDER",
    "OPTIMIZERS",
]

STRATEGY_ORDER = ("fresh", "historical", "uniform", "ours")


class LinearNoBias(LinearModel):
    r"""Least-squares model :math:`f_\theta(x) = \langle\theta, x\rangle` without bias (the bias stays 0)."""

    def __init__(self, in_features: int) -> None:
        super().__init__(in_features, 1, loss="mse", zero_init=True)

    def forward(self, params: Params, x: Tensor) -> Tensor:
        return torch.addmm(params["bias"] * 0, x.flatten(1), params["weight"].T)

    def forward_stacked(self, params: Params, x: Tensor) -> Tensor:
        return torch.baddbmm(params["bias"].unsqueeze(1) * 0, x.flatten(2), params["weight"].transpose(1, 2))

    def loss_and_grad_stacked(self, params, x, y, weight):
        loss, (gw, gb) = super().loss_and_grad_stacked({"weight": params["weight"], "bias": params["bias"] * 0},
                                                       x, y, weight)
        return loss, [gw, torch.zeros_like(gb)]


def excess_risk(params: Params, theta, n) -> float:
    r"""Exact excess squared-error risk :math:`\tfrac13\|w - \sum_m n_m\theta_m\|^2 + b^2` for :math:`x\sim\mathcal U[-1,1]^d`."""
    theta = check_array("theta", theta, ndim=2)
    if theta.shape[1] == 0:
        raise ValueError(f"theta must have shape (K, d) with d >= 1, got {theta.shape}.")
    n = check_simplex("n", n, ndim=1, size=theta.shape[0])
    check_params(LinearNoBias(theta.shape[1]), params, stacked=False)
    target = n @ theta
    w = params["weight"].detach().double().numpy().ravel()
    b = float(params["bias"].detach().double().sum())
    return float(np.sum((w - target) ** 2) / 3 + b ** 2)


OPTIMIZERS = {"fedavg": "streaming_fedavg", "fedprox": "streaming_fedprox", "scaffold": "streaming_scaffold"}
"""The FL optimizers of Algorithm 13 that :func:`compare_strategies` runs (thesis §4.3.4.7), as keys of the chapter's
:data:`~fedlab.streams.algorithms.PRESETS`: FedAvg, FedProx (the same algorithm with a proximal local solver) and
SCAFFOLD (:class:`~fedlab.streams.algorithms.StreamingScaffold`)."""


def _train(algorithm, data, seed, horizon):
    return run(algorithm, data, rounds=horizon, seed=seed, eval_every=horizon, progress=False)


def compare_strategies(*, task: str = "logistic", h: float = 0.2, n_total: int = 1000, horizon: int = 50,
                       m_hist: int = 5, m_fresh: int = 5, dim: int = 20, eps: float = 0.1, noise: float = 0.0,
                       local_steps: int = 5, batch_size: int = 32, lr: float = 0.25,
                       grid: Sequence[float] = (0.0, 0.2, 0.5, 0.8, 1.0), test_per_client: int = 500,
                       estimate_fraction: float = 0.5, estimate_steps: int = 20, optimizer: str = "fedavg",
                       prox_mu: float = 0.1, seed: int = 0) -> dict:
    r"""Fresh, Historical, Uniform, Ours and a :math:`p_{hist}` grid on one draw of the synthetic case study.

    "Ours" estimates :math:`\hat B, \hat G, \hat D` on ``estimate_fraction`` of the historical data
    (:func:`estimate_constants`, SGD with the training ``lr`` and ``batch_size``), then
    :math:`\hat c_2/\hat c_1` (G.839) with :math:`d` = the effective number of parameters (``dim + 1`` for the
    logistic model, ``dim`` for the linear one) and :math:`N` = all samples over the horizon, and trains with
    :math:`\hat p^* = \arg\min\psi`.

    The logistic model is a 2-class softmax regression (zero init), equivalent to logistic regression with
    twice the learning rate (``lr=0.25`` here is the spec's 0.5). Every run starts from the same model.
    ``optimizer`` picks the FL optimizer of Algorithm 13 (:data:`OPTIMIZERS`; FedProx with ``prox_mu``).

    Returns
    -------
    dict
        ``h`` (realised), ``n_total``, ``constants``, ``ratio``, ``p_hat`` (:math:`\hat p^*_{hist}`),
        ``metric`` name, ``values`` {strategy: value} for the four strategies, ``grid`` and ``grid_values``,
        ``best_grid_p``/``best_grid_value`` (the oracle "Optimal"), ``avg_values`` (q-averaged iterate),
        ``bayes`` (logistic task: the test accuracy (%) of the clients' true :math:`\theta_m`, averaged over
        clients, the ceiling of any strategy; None for the linear task), ``n_test`` (logistic task: the clients'
        test sizes behind each accuracy; None for the linear task), ``seconds``.
    """
    start = time.perf_counter()
    task = check_choice("task", task, ("logistic", "linear"))
    grid = [check_real("grid", g, low=0, high=1) for g in check_sequence("grid", grid, nonempty=True)]
    check_real("estimate_fraction", estimate_fraction, low=0, high=1, low_open=True)
    check_int("estimate_steps", estimate_steps, low=1)
    optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
    prox_mu = check_real("prox_mu", prox_mu, low=0, low_open=True)
    data, gen = synthetic_case_study(task=task, h=h, n_total=n_total, horizon=horizon, m_hist=m_hist,
                                     m_fresh=m_fresh, dim=dim, eps=eps, noise=noise,
                                     test_per_client=test_per_client, seed=seed)
    n = data.fractions
    h_real = float(n[:m_hist].sum())
    if task == "logistic":
        model, d_eff = LinearModel(dim, 2, zero_init=True), dim + 1
    else:
        model, d_eff = LinearNoBias(dim), dim
    solver = LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size)
    method, options = PRESETS[OPTIMIZERS[optimizer]], {"prox_mu": prox_mu} if optimizer == "fedprox" else {}
    consts = estimate_constants(model, data.train.select(list(range(m_hist))), fraction=estimate_fraction,
                                steps=estimate_steps, lr=lr, batch_size=batch_size, seed=seed)
    ratio = estimate_ratio(consts["loss_bound"], consts["grad_bound"], consts["diameter"], d_eff,
                           int(data.n_samples.sum()), m_fresh)
    runs = {s: strategy_weights(s, n, m_hist, ratio=ratio) for s in STRATEGY_ORDER}
    grid = [float(g) for g in grid]
    for g in grid:
        runs[f"grid={g:g}"] = p_hist_weights(g, n, m_hist)

    cache: dict[tuple, tuple[float, float]] = {}

    def measure(p):
        key = tuple(np.round(p, 12))
        if key not in cache:
            state, history = _train(method(model, solver, weights=p, **options), data, seed, horizon)
            if task == "logistic":
                cache[key] = (100 * history.final("test_accuracy", "mean"),
                              100 * history.final("test_accuracy_avg", "mean"))
            else:
                cache[key] = (excess_risk(state.params, gen.theta, n), excess_risk(state.avg_params, gen.theta, n))
        return cache[key]

    values = {name: measure(p) for name, p in runs.items()}
    grid_values = [values[f"grid={g:g}"][0] for g in grid]
    best = int(np.argmax(grid_values) if task == "logistic" else np.argmin(grid_values))
    p_hat = float(optimal_p_hist(ratio, h_real, m_fresh))
    return {
        "task": task, "h": h_real, "n_total": int(data.n_samples.sum()),
        "metric": "test accuracy (%)" if task == "logistic" else "excess risk",
        "constants": {k: float(v) for k, v in consts.items()}, "d": d_eff, "ratio": float(ratio), "p_hat": p_hat,
        "values": {s: values[s][0] for s in STRATEGY_ORDER},
        "avg_values": {s: values[s][1] for s in STRATEGY_ORDER},
        "grid": grid, "grid_values": grid_values,
        "best_grid_p": grid[best], "best_grid_value": grid_values[best],
        "bayes": _bayes(gen, seed) if task == "logistic" else None,
        "n_test": data.test.n.tolist() if task == "logistic" else None,
        "seconds": time.perf_counter() - start,
    }


def _bayes(gen: StreamSynthetic, seed: int) -> float:
    """Mean over clients of the Bayes classifier's accuracy (%), Monte Carlo."""
    rng = np.random.default_rng([seed, 3])
    return 100 * float(np.mean([gen.bayes_accuracy(k, rng=rng) for k in range(len(gen.theta))]))


def bayes_accuracy_draws(n_draws: int = 2000, *, n_clients: int = 11, dim: int = 20, eps: float = 0.1,
                         n_samples: int = 4000, seed: int = 0) -> np.ndarray:
    r"""The synthetic generator's Bayes accuracy (%) over ``n_draws`` independent draws of :math:`\theta_0`.

    Each draw is a :func:`~fedlab.streams.data.make_stream_synthetic` of ``n_clients`` clients (§4.3.4.1:
    :math:`\theta_0\sim\mathcal N(0, I_d)`, :math:`\theta_m\sim\mathcal N(\theta_0,\varepsilon^2 I_d)`,
    :math:`x\sim\mathcal U[-1,1]^d`); its value is the accuracy of the clients' true :math:`\theta_m`, averaged over
    clients, :math:`100\,\mathbb E_x[\max(\sigma(\langle x,\theta_m\rangle), 1-\sigma(\langle x,\theta_m\rangle))]`,
    estimated on ``n_samples`` inputs shared by the clients of a draw (Monte Carlo standard error below 0.3 pp). No
    strategy trained on that draw's data can beat it on average, so the distribution says which published accuracies
    the generator as stated can produce.

    >>> acc = bayes_accuracy_draws(20, n_samples=500)
    >>> acc.shape, bool(50 < acc.min() <= acc.max() < 100)
    ((20,), True)
    """
    n_draws = check_int("n_draws", n_draws, low=1)
    n_clients = check_int("n_clients", n_clients, low=1)
    dim = check_int("dim", dim, low=1)
    eps = check_real("eps", eps, low=0)
    n_samples = check_int("n_samples", n_samples, low=1)
    rng = np.random.default_rng([check_int("seed", seed, low=0), 6])
    out = np.empty(n_draws)
    for i in range(n_draws):
        theta = make_stream_synthetic(n_clients, dim, eps, rng=rng).theta
        p = 1.0 / (1.0 + np.exp(-rng.uniform(-1.0, 1.0, size=(n_samples, dim)) @ theta.T))
        out[i] = 100 * float(np.maximum(p, 1 - p).mean())
    return out


def summarize(records: Sequence[Mapping], *, digits: int = 3) -> list[dict]:
    r"""Mean ± std over seeds of :func:`compare_strategies` records, grouped by config.

    Returns
    -------
    list of dict
        Per config: the config, ``n_seeds``, ``h``, ``p_hat``/``ratio`` (and ``bayes`` when recorded) (mean, std),
        for each strategy and
        ``optimal`` (best grid point per seed) ``<name>_mean``/``<name>_std``, the grid curve
        (``grid``, ``grid_mean``, ``grid_std``), ``argmin_or_max`` per seed and the paired differences
        ``hist_minus_unif``, ``fresh_minus_unif``, ``ours_minus_best``, ``ours_minus_unif`` (mean, std, per seed).
    """
    digits = check_int("digits", digits, low=0)
    rows = []
    for recs in group_by_config(records):
        res = [r["result"] for r in recs]
        row = {**recs[0]["config"], "n_seeds": len(res), "seeds": [r["seed"] for r in recs]}
        row["metric"] = res[0]["metric"]

        def stat(name, vals):
            vals = np.asarray(vals, dtype=float)
            row[f"{name}_mean"] = round(float(vals.mean()), digits)
            row[f"{name}_std"] = round(float(vals.std()), digits)

        stat("h", [r["h"] for r in res])
        stat("ratio", [r["ratio"] for r in res])
        stat("p_hat", [r["p_hat"] for r in res])
        if all(r.get("bayes") is not None for r in res):
            stat("bayes", [r["bayes"] for r in res])
        for s in STRATEGY_ORDER:
            stat(s, [r["values"][s] for r in res])
            stat(f"avg_{s}", [r["avg_values"][s] for r in res])
        stat("optimal", [r["best_grid_value"] for r in res])
        grid_vals = np.array([r["grid_values"] for r in res], dtype=float)
        row["grid"] = res[0]["grid"]
        row["grid_mean"] = np.round(grid_vals.mean(0), digits).tolist()
        row["grid_std"] = np.round(grid_vals.std(0), digits).tolist()
        row["best_grid_p"] = [r["best_grid_p"] for r in res]
        diffs = {
            "hist_minus_unif": [r["values"]["historical"] - r["values"]["uniform"] for r in res],
            "fresh_minus_unif": [r["values"]["fresh"] - r["values"]["uniform"] for r in res],
            "ours_minus_best": [r["values"]["ours"] - r["best_grid_value"] for r in res],
            "ours_minus_unif": [r["values"]["ours"] - r["values"]["uniform"] for r in res],
        }
        for name, vals in diffs.items():
            stat(name, vals)
            row[f"{name}_seeds"] = np.round(vals, digits).tolist()
        rows.append(row)
    return rows


def estimate_constants(model, data, *, params=None, fraction: float = 0.5, steps: int = 20, lr: float = 0.5,
                       batch_size: int = 32, seed: int = 0) -> dict:
    r"""Estimate :math:`\hat B, \hat G, \hat D` from a fraction of the historical data (appendix G.4.6).

    The thesis defines :math:`\hat D = \max_m\|\hat\theta^*_m - \theta^{(1)}\|`, with :math:`\hat\theta^*_m`
    a few SGD iterations from the initial model on a fraction of client :math:`m`'s historical data. How
    :math:`G` and :math:`B` were measured is not stated; as in the chapter spec, here

    * :math:`\hat B = \max_m \mathcal L_{S'_m}(\theta^{(1)})`, the loss at initialisation
      (ln 2, ln 10, ln 100 for Synthetic, CIFAR-10, CIFAR-100 in Table 4.1);
    * :math:`\hat G = \max_m \|\nabla\mathcal L_{S'_m}(\theta^{(1)})\|`, the full-gradient norm at initialisation;
    * :math:`\hat D = \max_m \|\hat\theta_m - \theta^{(1)}\|` after ``steps`` SGD steps (lr ``lr``,
      minibatch ``batch_size``);

    where :math:`S'_m` is a random ``fraction`` of client :math:`m`'s samples.

    Parameters
    ----------
    model : fedlab.models.Model
    data : fedlab.engine.ClientData
        The historical clients' data.
    params : dict of Tensor, optional
        :math:`\theta^{(1)}`; default ``initial_params(model, seed)`` (the training run's initial model).
    fraction : float in (0, 1]
    steps, batch_size : int
    lr : float
    seed : int

    Returns
    -------
    dict with ``loss_bound`` (B), ``grad_bound`` (G), ``diameter`` (D) and ``d`` (number of parameters).
    """
    fraction = check_real("fraction", fraction, low=0, high=1, low_open=True)
    steps = check_int("steps", steps, low=1)
    check_int("seed", seed, low=0)
    check_model(model)
    if not isinstance(data, ClientData):
        raise TypeError(f"data must be a ClientData of the historical clients, got {type(data).__name__}.")
    check_model_data(model, data)
    theta1 = initial_params(model, seed) if params is None else check_params(model, params, stacked=False)
    rng = numpy_rng(seed, 0, Stream.STREAMS_ESTIMATE)
    xs, ys = [], []
    for k in range(data.n_clients):
        x, y, _ = data.client(k)
        keep = np.sort(rng.permutation(len(x))[: max(1, int(round(fraction * len(x))))])
        xs.append(x[keep].numpy()), ys.append(y[keep].numpy())
    sub = ClientData.from_arrays(xs, ys)
    k = sub.n_clients
    start = broadcast(theta1, k)
    n_max = sub.x.shape[1]
    mean_weight = sub.mask.to(torch.float32) * (n_max / sub.n.to(torch.float32)).unsqueeze(1)
    loss, grads = model.loss_and_grad_stacked({n: v.contiguous() for n, v in start.items()}, sub.x, sub.y,
                                              mean_weight)
    grad_norm = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads))
    solver = LocalSGD(lr=check_real("lr", lr, low=0, low_open=True), local_steps=steps,
                      batch_size=check_int("batch_size", batch_size, low=1))
    moved, _ = local_sgd(model, start, sub, solver, key=(seed, 0, Stream.STREAMS_ESTIMATE))
    dist = torch.sqrt(sum((moved[n] - start[n]).flatten(1).pow(2).sum(1) for n in start))
    d = int(sum(v.numel() for v in theta1.values()))
    return {"loss_bound": float(loss.max()), "grad_bound": float(grad_norm.max()), "diameter": float(dist.max()),
            "d": d}
