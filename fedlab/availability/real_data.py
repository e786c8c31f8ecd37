r"""Paper mode of the availability chapter: CA-Fed against the baselines on MNIST and CIFAR-10 (thesis §2.2.6,
Fig. 2.11b-c, Table 4 of the CA-Fed paper's appendix).

:math:`N = 100` clients with a Dirichlet(0.5) class split, each a two-state Markov chain of the thesis population
(:func:`fedlab.availability.data.make_population`, ``layout="code3"``: Fig. 2.11d's three groups, :math:`g = 0.4`,
:math:`\nu = 0.9`, :math:`\varepsilon = 10^{-2}`). Every method of :data:`TABLE_METHODS` trains with its own step
sizes :math:`(\eta, \bar\eta)` of Table 4 (:data:`fedlab.availability.published.TABLE_4_STEP_SIZES`) and the
authors' optimisers (local and server SGD with
momentum 0.9 and weight decay :math:`10^{-2}`, :data:`fedlab.availability.experiments.AUTHORS_OPTIMIZER`). All
methods of a seed share the data, the availability trace and the initial model. The metric is the α-weighted test
accuracy after :math:`T = 200` rounds (:func:`fedlab.availability.experiments.summarize_run`); the claims on it
are :func:`fedlab.availability.claims.paper_claims`.

FedVARP and MIFA, which the thesis names among related work, are not implemented in
:mod:`fedlab.availability`; no claim compares with them.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_choice, check_int, check_type
from fedlab.availability.algorithms import PRESETS
from fedlab.availability.data import make_population
from fedlab.availability.experiments import AUTHORS_OPTIMIZER, summarize_run
from fedlab.availability.published import F3AST_K, TABLE_4_STEP_SIZES
from fedlab.engine import run
from fedlab.paper_mode import PaperSetting, check_settings, seconds_per_round, stand_in_data, sweep_settings

__all__ = ["AUTHORS_RECIPE", "DATASETS", "TABLE_METHODS", "SETTINGS", "availability_paper_run", "run_paper",
           "expected_seconds"]

DATASETS: tuple[str, ...] = ("mnist", "cifar10")
TABLE_METHODS: tuple[str, ...] = ("unbiased", "more_available", "adafed", "f3ast", "cafed")
"""Fig. 2.11's methods, keys of :data:`fedlab.availability.algorithms.PRESETS` (CA-Fed with
:math:`\\bar\\kappa^2 = 1`)."""

_COMMON = ("N=100 clients, Dirichlet(0.5) class split, 10 runs, T=200 rounds (Fig. 2.11), batch 32, Table 4's "
           "step sizes per method, the authors' momentum-0.9 / weight-decay-1e-2 SGD on clients and server. E is "
           "the authors' local epochs; the thesis does not give it: we take E=5 local steps. The availability "
           "population is the code's three groups (Fig. 2.11d; the text's four equal groups are ambiguous). ")

AUTHORS_RECIPE = {"momentum": AUTHORS_OPTIMIZER["momentum"], "weight_decay": AUTHORS_OPTIMIZER["weight_decay"],
                  "keep_state": True}
"""The CA-Fed code's local solver: SGD with momentum 0.9 and weight decay 1e-2, each client's optimizer kept from one
round in which it trains to the next."""

SETTINGS: dict[str, PaperSetting] = {
    "mnist": PaperSetting(
        "mnist", "mnist_logistic", 100, rounds=200, local_steps=5, batch_size=32, lr=0.1, seeds=10,
        paper=_COMMON + "MNIST: multinomial logistic regression with ridge 1e-2; the original train/test split with "
              "20 % of train held out for validation: we split each client's share of the 60,000 training images "
              "80/20 into train and test (CA-Fed's losses are computed on the training part).",
        loader={"scheme": "dirichlet", "alpha": 0.5, "test_fraction": 0.2}, recipe=AUTHORS_RECIPE),
    "cifar10": PaperSetting(
        "cifar10", "cifar_cnn", 100, rounds=200, local_steps=5, batch_size=32, lr=0.03, seeds=10,
        paper=_COMMON + "CIFAR-10: a CNN with 2 conv layers and 1 FC layer (the code: 2 conv + 2 FC), here the "
              "McMahan CIFAR CNN (2 conv + 2 FC); each client's share split 80/20 into train and test.",
        loader={"scheme": "dirichlet", "alpha": 0.5, "test_fraction": 0.2}, recipe=AUTHORS_RECIPE),
}


def _check_setting(setting) -> PaperSetting:
    setting = check_type("setting", setting, PaperSetting)
    check_choice("setting.dataset", setting.dataset, DATASETS)
    return setting


def _algorithm(method: str, setting: PaperSetting, population, trace, lr: float, server_lr: float):
    solver = setting.solver(lr, method=PRESETS[method].cls)
    options = {"kappa2": 1.0} if method == "cafed" else {"k": min(F3AST_K, population.n_clients)} \
        if method == "f3ast" else {}
    return PRESETS[method](setting.build_model(), solver, participation=trace, pi=population.client_pi,
                           lam=population.client_lambda, server_lr=server_lr,
                           server_momentum=AUTHORS_OPTIMIZER["server_momentum"],
                           server_weight_decay=AUTHORS_OPTIMIZER["server_weight_decay"], **options)


def _population(n_clients: int, rounds: int, seed: int):
    population = make_population(n_clients, rng=numpy_rng(seed, Stream.AVAILABILITY_POPULATION))
    return population, population.simulate(rounds, rng=numpy_rng(seed, Stream.AVAILABILITY_TRACE))


def availability_paper_run(*, setting: Mapping, method: str, seed: int = 0, device=None) -> dict:
    """One method of Fig. 2.11 on one seed of a real data set (``setting`` as ``dataclasses.asdict``).

    Returns :func:`fedlab.availability.experiments.summarize_run`'s dict plus ``method``, ``lr`` and ``server_lr``.
    """
    check_type("setting", setting, Mapping)
    setting = _check_setting(PaperSetting(**setting))
    method = check_choice("method", method, TABLE_METHODS)
    seed = check_int("seed", seed, low=0)
    data = setting.load(seed)
    population, trace = _population(data.n_clients, setting.rounds, seed)
    lr, server_lr = TABLE_4_STEP_SIZES[setting.dataset][method]
    algorithm = _algorithm(method, setting, population, trace, lr, server_lr)
    _, history = run(algorithm, data, rounds=setting.rounds, seed=seed, eval_every=max(1, setting.rounds // 20),
                     progress=False, device=device)
    n = data.train.n.cpu().numpy().astype(float)
    out = summarize_run(history, population, n / n.sum())
    out.update({"method": method, "lr": lr, "server_lr": server_lr})
    return out


def run_paper(*, seeds: int | None = None, device=None, datasets=DATASETS, settings: Mapping | None = None,
              store=None) -> dict:
    """Every method of :data:`TABLE_METHODS` on every setting, ``seeds`` seeds (default the setting's 10), stored with
    :func:`fedlab.experiments.sweep` (resumable).

    Returns
    -------
    dict
        ``{dataset: {method: {"final_accuracy": [per seed], "time_avg_accuracy": [...], "mean_included": [...]}}}``.
    """
    runs = sweep_settings(availability_paper_run, SETTINGS if settings is None else settings, datasets,
                          [{"method": m} for m in TABLE_METHODS], seeds=seeds, device=device, store=store)
    keys = ("final_accuracy", "time_avg_accuracy", "mean_included")
    return {name: {m: {key: [r["result"][key] for r in records if r["config"]["method"] == m] for key in keys}
                   for m in TABLE_METHODS} for name, records in runs.items()}


def expected_seconds(device=None, n_clients: int | None = None, settings: Mapping | None = None) -> dict[str, float]:
    """Expected total run time (s) per setting on this machine: :func:`fedlab.paper_mode.seconds_per_round` of CA-Fed
    on :func:`fedlab.paper_mode.stand_in_data` with ``n_clients >= 4`` clients (default 4, all available; the population
    needs its three groups), scaled linearly
    to the population's mean number of available clients (:math:`0.5 \\cdot 0.9 + 0.5 \\cdot 0.1` of N), the rounds,
    the five methods and the seeds."""
    n_clients = 4 if n_clients is None else check_int("n_clients", n_clients, low=4)
    out = {}
    for name, setting in check_settings(settings, SETTINGS, _check_setting).items():
        data = stand_in_data(setting, n_clients=n_clients)
        population, _ = _population(n_clients, 1, 0)
        trace = np.ones((4, n_clients), dtype=bool)
        algorithm = _algorithm("cafed", setting, population, trace, setting.lr, 1.0)
        per_client = seconds_per_round(algorithm, data, rounds=2, device=device) / n_clients
        available = 0.5 * (setting.clients or 100)
        out[name] = per_client * available * setting.rounds * len(TABLE_METHODS) * setting.seeds
    return out
