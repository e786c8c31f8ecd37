r"""Paper mode of the data-streams chapter: Tables 4.3-4.5 (paper Tables 2, 4, 5) on the real data sets.

The case study of thesis §4.3.3-4.3.4: :math:`M_{hist}` historical clients hold a static data set and take part in
every round; fresh clients see each sample once. Every run compares the client weightings of
:data:`fedlab.streams.algorithms.STRATEGIES` (Fresh, Historical, Uniform, Ours) and the oracle *Optimal* (best
test accuracy over :math:`p_{hist}\in\{0, 0.2, 0.5, 0.8, 1\}`) with
:class:`~fedlab.streams.algorithms.StreamingFedAvg` (Algorithm 13) on the engine.

* **CIFAR-10 / CIFAR-100** (§4.3.4.2-3): :math:`M = 50`, :math:`M_{hist} = 25`. The 50,000 training images are split
  at random into :math:`hN` historical and :math:`(1-h)N` fresh samples, each group spread over its 25 clients
  (Dirichlet(0.4) for CIFAR-10, Pachinko for CIFAR-100), then every client's samples into train/test. A fresh
  client receives :math:`b_m = \lfloor N_m / T\rfloor` samples per round and keeps only them (FIFO, :math:`C_m=b_m`).
* **FEMNIST / Shakespeare** (§4.3.4.4-5): natural clients (writers, speaking roles), a fraction
  :math:`M_{hist}/M \in \{5, 20, 50\}\,\%` of them historical (the tables' "N_hist/N" is really
  :math:`M_{hist}/M`, captions of Figs. 4.7-4.8). Historical clients take part in every round; each fresh client is
  online in **one** round (FEMNIST) or **two consecutive** rounds (Shakespeare, half of its samples in each), holding
  only the samples of that round (memory rule ``"current"``). The fresh clients' rounds are a random permutation.

"Ours" estimates :math:`\hat B, \hat G, \hat D` on half of the historical data
(:func:`fedlab.streams.experiments.estimate_constants`, at most ``ESTIMATE_CLIENTS`` historical clients), then
:math:`\hat c_2/\hat c_1` (eq. G.839) with :math:`d` the number of model parameters and :math:`M - M_{hist}` fresh
clients, and trains with :math:`\hat p^* = \arg\min\psi`. The metric is the last iterate's test accuracy (%)
averaged over clients (§4.3.4). :func:`fedlab.streams.claims.paper_claims` turns :func:`run_paper`'s output into the
chapter's real-data claims.
"""
from __future__ import annotations

import time
from typing import Mapping

import numpy as np

from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.data.partition import partition, train_test_split_clients
from fedlab.data.vision import load_cifar10, load_cifar100
from fedlab.engine import LocalSGD, run
from fedlab.paper_mode import PaperSetting, check_settings, seconds_per_round, stand_in_data, sweep_settings
from fedlab.streams.algorithms import StreamingFedAvg, strategy_weights
from fedlab.streams.bounds import estimate_ratio, p_hist_weights
from fedlab.streams.data import StreamDataset, make_case_study, make_stream_dataset
from fedlab.streams.experiments import STRATEGY_ORDER, estimate_constants

__all__ = ["DATASETS", "FRACTIONS", "GRID", "SETTINGS", "PAPER_NAMES", "ESTIMATE_CLIENTS", "case_study", "compare_on",
           "stream_paper_run", "run_paper", "expected_seconds"]

DATASETS: tuple[str, ...] = ("cifar10", "cifar100", "femnist", "shakespeare")
FRACTIONS: tuple[float, ...] = (0.05, 0.2, 0.5)
"""The historical fractions of Tables 4.4, 4.3 and 4.5 (:math:`N_{hist}/N`, or :math:`M_{hist}/M` for the natural
data sets)."""
GRID: tuple[float, ...] = (0.0, 0.2, 0.5, 0.8, 1.0)
"""The :math:`p_{hist}` grid over which *Optimal* is the best (§4.3.4)."""
ESTIMATE_CLIENTS = 100
PAPER_NAMES = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "femnist": "FEMNIST", "shakespeare": "Shakespeare"}
_M = 50  # CIFAR clients, half of them historical (§4.3.4.2: M_hist = 25)

_UNSTATED = ("T, E, K and b_m are not reported (§4.3.4); the learning rate was grid-searched over "
             "10^-3.5 ... 10^-1 on validation data and the model retrained on train + validation: we take {lr} from "
             "that grid without a search, T={rounds}, E={steps}, K={batch}, plain SGD, last iterate, 3 seeds.")

SETTINGS: dict[str, PaperSetting] = {
    "cifar10": PaperSetting(
        "cifar10", "cifar_cnn", _M, rounds=100, local_steps=5, batch_size=32, lr=10 ** -1.5, seeds=3,
        paper="Table 4.2: M=50 (M_hist=25 historical, 25 fresh), N=50,000, Dirichlet(0.4) label split inside each "
              "group, a shallow CNN (2 conv + 2 FC: our McMahan CNN). 20 % of each client's samples are its test set. "
              + _UNSTATED.format(lr="10^-1.5", rounds=100, steps=5, batch=32),
        loader={"scheme": "dirichlet", "alpha": 0.4, "test_fraction": 0.2}),
    "cifar100": PaperSetting(
        "cifar100", "cifar_cnn", _M, rounds=100, local_steps=5, batch_size=32, lr=10 ** -1.5, seeds=3,
        paper="Table 4.2: M=50 (25 historical, 25 fresh), N=50,000, two-stage Pachinko split (Reddi et al. 2021: "
              "alpha=0.1 over superclasses, beta=10 inside them) in each group, the same CNN as CIFAR-10. "
              + _UNSTATED.format(lr="10^-1.5", rounds=100, steps=5, batch=32),
        loader={"scheme": "pachinko", "alpha": 0.1, "beta": 10.0, "test_fraction": 0.2}),
    "femnist": PaperSetting(
        "femnist", "femnist_cnn", None, rounds=100, local_steps=5, batch_size=32, lr=10 ** -1, seeds=3,
        paper="Table 4.2: 3,597 writers, N=817,851, a 2-layer fully connected net; TFF's archive has 3,400 writers "
              "(all kept) and we train the FEMNIST CNN (the project has no 2-FC FEMNIST model). Fresh writers are "
              "online in one round. " + _UNSTATED.format(lr="10^-1", rounds=100, steps=5, batch=32),
        loader={}),
    "shakespeare": PaperSetting(
        "shakespeare", "char_lstm", None, rounds=100, local_steps=5, batch_size=32, lr=10 ** -1, seeds=3,
        paper="Table 4.2: 916 roles with at least 2 lines, N=3,436,096 characters, stacked LSTM (8-dim embedding, "
              "2x256), 80-character sequences; we keep TFF's roles with at least 2 windows of 80 characters (stride "
              "80, fewer samples than the paper's stride 1). Fresh roles are online in two consecutive rounds. "
              + _UNSTATED.format(lr="10^-1", rounds=100, steps=5, batch=32),
        loader={"seq_len": 80, "stride": 80, "min_samples": 2}),
}


# ------------------------------------------------------------------------------------ the case study

def _check_setting(setting) -> PaperSetting:
    setting = check_type("setting", setting, PaperSetting)
    check_choice("setting.dataset", setting.dataset, DATASETS)
    return setting


def _fresh_streams(xs, ys, horizon: int) -> tuple[list, list, int]:
    """Truncate fresh clients to a multiple of T; those with fewer than T samples are dropped."""
    keep = [k for k, x in enumerate(xs) if len(x) >= horizon]
    cut = [len(xs[k]) // horizon * horizon for k in keep]
    return [xs[k][:c] for k, c in zip(keep, cut)], [ys[k][:c] for k, c in zip(keep, cut)], len(xs) - len(keep)


def _centralised(setting: PaperSetting, h: float, seed: int) -> tuple[StreamDataset, int, int]:
    """CIFAR's historical and fresh groups (module docstring); returns the data, M_hist and dropped fresh clients."""
    options = dict(setting.loader)
    scheme, test_fraction = options.pop("scheme"), options.pop("test_fraction", 0.2)
    if setting.dataset == "cifar10":
        images, labels = load_cifar10("train", as_float=True)
    else:
        images, labels, coarse = load_cifar100("train", as_float=True)
        mapping = np.zeros(int(labels.max()) + 1, dtype=np.int64)
        mapping[labels] = coarse
        options["coarse_of_fine"] = mapping
    rng = np.random.default_rng([seed, 5, 0])
    order = rng.permutation(len(labels))
    n_hist = int(round(h * len(labels)))
    groups = []
    m = setting.clients or _M
    for idx, n_clients in ((order[:n_hist], m // 2), (order[n_hist:], m - m // 2)):
        parts = partition(labels[idx], scheme, n_clients=n_clients, rng=rng, **options)
        groups.append(train_test_split_clients([images[idx[p]] for p in parts], [labels[idx[p]] for p in parts],
                                               test_fraction, rng=rng))
    (hx, hx_test, hy, hy_test), (fx, fx_test, fy, fy_test) = groups
    kept = [k for k in range(len(fx)) if len(fx[k]) >= setting.rounds]
    fx, fy, dropped = _fresh_streams(fx, fy, setting.rounds)
    data = make_case_study(hx, hy, fx, fy, horizon=setting.rounds, test_xs=hx_test + [fx_test[k] for k in kept],
                           test_ys=hy_test + [fy_test[k] for k in kept], n_classes=100 if scheme == "pachinko" else 10)
    return data, len(hx), dropped


def _online_counts(n: int, start: int, horizon: int, rounds_online: int) -> np.ndarray:
    counts = np.zeros(horizon, dtype=np.int64)
    if rounds_online == 2 and start + 1 < horizon and n >= 2:
        counts[start], counts[start + 1] = (n + 1) // 2, n // 2
    else:
        counts[start] = n
    return counts


def _natural(setting: PaperSetting, h: float, seed: int) -> tuple[StreamDataset, int, int]:
    """FEMNIST / Shakespeare: a fraction ``h`` of the natural clients historical, the others online once or twice."""
    fed = setting.load(seed)
    rng = np.random.default_rng([seed, 5, 1])
    order = rng.permutation(fed.n_clients)
    m_hist = max(1, int(round(h * fed.n_clients)))
    if m_hist >= fed.n_clients:
        raise ValueError(f"h={h} leaves no fresh client among {fed.n_clients}.")
    horizon, online = setting.rounds, 2 if setting.dataset == "shakespeare" else 1
    starts = rng.permutation(fed.n_clients - m_hist) % horizon
    xs, ys, tx, ty, arrivals, capacities, rules = [], [], [], [], [], [], []
    for j, k in enumerate(order):
        x, y, _ = fed.train.client(int(k))
        xt, yt, _ = fed.test.client(int(k))
        xs.append(x.numpy()), ys.append(y.numpy()), tx.append(xt.numpy()), ty.append(yt.numpy())
        n = len(x)
        if j < m_hist:
            counts, capacity, rule = _online_counts(n, 0, horizon, 1), n, "keep"
        else:
            counts = _online_counts(n, int(starts[j - m_hist]), horizon, online)
            capacity, rule = int(counts.max()), "current"
        arrivals.append(counts), capacities.append(capacity), rules.append(rule)
    data = make_stream_dataset(xs, ys, arrivals, capacities, rules, horizon=horizon, test_xs=tx, test_ys=ty,
                               n_classes=fed.n_classes, historical=[j < m_hist for j in range(len(order))], rng=rng)
    return data, m_hist, 0


def case_study(setting: PaperSetting, h: float, seed: int = 0) -> tuple[StreamDataset, int, int]:
    r"""The historical + fresh clients of thesis §4.3.3 built from a real data set (module docstring).

    Parameters
    ----------
    setting : PaperSetting
        One of :data:`SETTINGS` (possibly shrunk with :func:`dataclasses.replace`).
    h : float in (0, 1)
        :math:`N_{hist}/N` (CIFAR) or :math:`M_{hist}/M` (FEMNIST, Shakespeare).
    seed : int

    Returns
    -------
    (StreamDataset, m_hist, dropped)
        Historical clients first; ``dropped`` fresh clients had fewer than T samples.
    """
    setting = _check_setting(setting)
    h = check_real("h", h, low=0, high=1, low_open=True, high_open=True)
    seed = check_int("seed", seed, low=0)
    builder = _centralised if setting.dataset in ("cifar10", "cifar100") else _natural
    return builder(setting, h, seed)


def _accuracy(model, solver, p, data, setting, seed, device) -> float:
    algorithm = StreamingFedAvg(model, solver, weights=p)
    _, history = run(algorithm, data, rounds=data.horizon, seed=seed, eval_every=data.horizon, progress=False,
                     device=device)
    return 100 * history.final("test_accuracy", "mean")


def compare_on(data: StreamDataset, setting: PaperSetting, m_hist: int, *, seed: int = 0, device=None) -> dict:
    r"""Fresh, Historical, Uniform, Ours and the :math:`p_{hist}` grid (:data:`GRID`) on one case study.

    Returns
    -------
    dict
        ``h`` (realised :math:`\sum_{m\le M_{hist}} n_m`), ``m_hist``, ``m_fresh``, ``constants``, ``ratio``
        (:math:`\hat c_2/\hat c_1`), ``p_hat`` (:math:`\hat p^*_{hist}`), ``values`` {strategy: accuracy %},
        ``grid``, ``grid_values``, ``optimal`` (best grid value), ``best_grid_p``.
    """
    data = check_type("data", data, StreamDataset)
    setting = _check_setting(setting)
    m_hist = check_int("m_hist", m_hist, low=1, high=data.n_clients - 1)
    seed = check_int("seed", seed, low=0)
    model = setting.build_model()
    solver = LocalSGD(lr=setting.lr, local_steps=setting.local_steps, batch_size=setting.batch_size)
    hist = list(range(m_hist))[:ESTIMATE_CLIENTS]
    consts = estimate_constants(model, data.train.select(hist), lr=setting.lr, batch_size=setting.batch_size,
                                seed=seed)
    n, m_fresh = data.fractions, data.n_clients - m_hist
    ratio = float(estimate_ratio(consts["loss_bound"], consts["grad_bound"], consts["diameter"], consts["d"],
                                 int(data.n_samples.sum()), m_fresh))
    runs = {s: strategy_weights(s, n, m_hist, ratio=ratio) for s in STRATEGY_ORDER}
    runs.update({f"grid={g:g}": p_hist_weights(g, n, m_hist) for g in GRID})
    cache: dict[tuple, float] = {}
    values = {}
    for name, p in runs.items():
        key = tuple(np.round(p, 12))
        if key not in cache:
            cache[key] = _accuracy(model, solver, p, data, setting, seed, device)
        values[name] = cache[key]
    grid_values = [values[f"grid={g:g}"] for g in GRID]
    best = int(np.argmax(grid_values))
    return {"h": float(n[:m_hist].sum()), "m_hist": m_hist, "m_fresh": m_fresh,
            "constants": {k: float(v) for k, v in consts.items()}, "ratio": ratio,
            "p_hat": float(runs["ours"][:m_hist].sum()), "values": {s: values[s] for s in STRATEGY_ORDER},
            "grid": list(GRID), "grid_values": grid_values, "optimal": grid_values[best],
            "best_grid_p": GRID[best]}


def stream_paper_run(*, setting: Mapping, h: float, seed: int = 0, device=None) -> dict:
    """One (data set, fraction, seed) of Tables 4.3-4.5: :func:`case_study` then :func:`compare_on`.

    ``setting`` is a :class:`PaperSetting` as a dict (``dataclasses.asdict``), so that sweeps can store it.
    """
    check_type("setting", setting, Mapping)
    setting = _check_setting(PaperSetting(**setting))
    start = time.perf_counter()
    data, m_hist, dropped = case_study(setting, h, seed)
    out = compare_on(data, setting, m_hist, seed=seed, device=device)
    out.update({"dataset": setting.dataset, "h_nominal": float(h), "dropped_fresh": dropped,
                "seconds": time.perf_counter() - start})
    return out


def run_paper(*, seeds: int | None = None, device=None, datasets=DATASETS, settings: Mapping | None = None,
              store=None) -> dict:
    """Every setting of :data:`SETTINGS` (or ``settings``) at the three fractions, with ``seeds`` seeds each
    (default: the setting's), stored with :func:`fedlab.experiments.sweep` so an interrupted run resumes.

    Returns
    -------
    dict
        ``{dataset: {str(h): [result of stream_paper_run per seed]}}``.
    """
    runs = sweep_settings(stream_paper_run, SETTINGS if settings is None else settings, datasets,
                          [{"h": h} for h in FRACTIONS], seeds=seeds, device=device, store=store)
    return {name: {f"{h:g}": [r["result"] for r in records if r["config"]["h"] == h] for h in FRACTIONS}
            for name, records in runs.items()}


# ------------------------------------------------------------------------------------ run time

def _stand_in_study(setting: PaperSetting, n_clients: int) -> StreamDataset:
    fed = stand_in_data(setting, n_clients=n_clients)
    half = max(1, n_clients // 2)
    xs = [fed.train.client(k)[0].numpy() for k in range(n_clients)]
    ys = [fed.train.client(k)[1].numpy() for k in range(n_clients)]
    horizon = 3
    return make_case_study(xs[:half], ys[:half], [x[: len(x) // horizon * horizon] for x in xs[half:]],
                           [y[: len(y) // horizon * horizon] for y in ys[half:]], horizon=horizon,
                           n_classes=fed.n_classes)


def _participants(setting: PaperSetting) -> float:
    """Clients training per round, averaged over the three fractions (all 50 for CIFAR; historical plus the
    fresh clients online in a round for the natural data sets, with 3,400 writers / 715 roles)."""
    if setting.dataset in ("cifar10", "cifar100"):
        return float(setting.clients or _M)
    m = setting.clients or {"femnist": 3400, "shakespeare": 715}[setting.dataset]
    online = 2 if setting.dataset == "shakespeare" else 1
    return float(np.mean([h * m + (1 - h) * m * online / setting.rounds for h in FRACTIONS]))


def expected_seconds(device=None, n_clients: int | None = None, settings: Mapping | None = None) -> dict[str, float]:
    """Expected total run time (s) of every setting on this machine.

    Measured with :func:`fedlab.paper_mode.seconds_per_round` on :func:`fedlab.paper_mode.stand_in_data` (``n_clients``
    clients, default 4, half historical and half fresh, all training each round), then scaled linearly: by the
    clients training per round in the paper's layout, the rounds, the 7 distinct weightings per run (4 strategies
    and the grid, Fresh and Historical shared), the 3 fractions and the seeds.
    """
    n_clients = 4 if n_clients is None else check_int("n_clients", n_clients, low=2)
    out = {}
    for name, setting in check_settings(settings, SETTINGS, _check_setting).items():
        data = _stand_in_study(setting, n_clients)
        algorithm = StreamingFedAvg(setting.build_model(), LocalSGD(lr=setting.lr, local_steps=setting.local_steps,
                                                                    batch_size=setting.batch_size))
        per_round = seconds_per_round(algorithm, data, rounds=2, device=device)
        out[name] = per_round / n_clients * _participants(setting) * setting.rounds * 7 * len(FRACTIONS) * setting.seeds
    return out
