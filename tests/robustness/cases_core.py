"""Robustness cases of the core: engine, models, mixing, Markov chains, GMM, data, algorithms, experiments, claims,
tables and plots."""
from __future__ import annotations

import numpy as np
import torch

import world as w
from harness import (BAD_TEXT, NAN, Arr, Case, Choice, File, Fixed, Flag, Int, Kind, Obj, Real, Rng, fresh)

from fedlab.algorithms import METHODS, FedAvg
from fedlab.claims import Claim, save_claims
from fedlab.data.fetch import fetch_command, require
from fedlab.paper_mode import PaperSetting, stand_in_data
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, initial_optimizer_state
from fedlab.models import LinearModel

AX = Kind(None, extra=(BAD_TEXT, 3))
"""A matplotlib ``ax`` argument: None or an Axes."""


def model_kind(with_data=True, **kw):
    """A model argument: wrong types include a solver, and with data a model of another input size."""
    extra = (LocalSGD(lr=0.1),) + ((LinearModel(w.DIM + 2, w.N_CLASSES),) if with_data else ())
    return Obj(w.model(), extra=extra, **kw)


def solver_kind():
    return Obj(w.solver(), extra=(w.model(), {"lr": 0.1}))


def fed_kind():
    """A FederatedDataset for the world's model: wrong types, wider features, labels beyond its outputs."""
    xs, ys = w.client_arrays()
    wide = FederatedDataset.from_client_arrays([np.hstack([x, x]) for x in xs], ys)
    labels = FederatedDataset.from_client_arrays(xs, [y + 4 for y in ys])
    return Obj(fresh(w.fed), extra=(w.clients(), wide, labels))


def clients_kind(**kw):
    """ClientData: wrong types, NaN features, the wrong feature size, labels out of range."""
    xs, ys = w.client_arrays()
    nan_x = [x.copy() for x in xs]
    nan_x[1][0, 0] = np.nan
    wide = [np.hstack([x, x]) for x in xs]
    labels = [y + 5 for y in ys]
    return Obj(fresh(w.clients), extra=(ClientData.from_arrays(wide, ys), ClientData.from_arrays(xs, labels),
                                        w.client_arrays()), **kw)


def params_kind(rows=w.N_CLIENTS, model_aware=True, fixed_rows=True, **kw):
    """Stacked params: an empty dict, a NaN entry, integer tensors, the wrong number of rows (when the call fixes
    it), and (for functions that know the model) the wrong shapes."""
    bad_nan = w.params(rows)
    bad_nan["weight"][0, 0, 0] = np.nan
    wrong_shape = {k: v[..., :1] for k, v in w.params(rows).items()}
    extra = ({}, bad_nan, {"w": torch.zeros(rows, 2, dtype=torch.long)}) + \
        ((w.params(rows + 1),) if fixed_rows else ()) + ((wrong_shape,) if model_aware else ())
    return Obj(fresh(lambda: w.params(rows)), extra=extra, **kw)


def single_params_kind(empty_ok=False):
    bad = w.single_params()
    bad["bias"][0] = np.nan
    return Obj(fresh(w.single_params), extra=(bad, {"w": torch.zeros(2, dtype=torch.long)}) +
               (() if empty_ok else ({}, w.params())))


def history_kind():
    return Obj(w.history(), extra=({"rounds": [0]},))


def _tensor_clients():
    d = w.clients()
    return d.x.clone(), d.y.clone(), d.n.clone()


CYCLE = np.roll(np.eye(3), 1, axis=1)
"""A deterministic, periodic transition matrix: entries exactly 0 and 1."""

SETTING = PaperSetting("mnist", "mnist_logistic", 2, 1, 1, 4, 0.1, 1, "")
CLAIM = Claim("03_fedem", "Table 3.2", "accuracy (%)", paper=80.0, measured=79.0, rule="tolerance", tolerance=2.0,
              kind="experiment", scale="smoke")


def claims_file() -> str:
    """A claims file holding :data:`CLAIM`, as ``save_claims`` writes it."""
    path = f"{w.scratch()}/claims.json"
    save_claims([CLAIM], path)
    return path


CASES = [
    # ---------------------------------------------------------------- engine.population
    Case("fedlab.engine.population.ClientData", {
        "x": Arr(fresh(lambda: _tensor_clients()[0]), also=("y", "n")),
        "y": Arr(fresh(lambda: _tensor_clients()[1]), also=("x",)),
        "n": Arr(fresh(lambda: _tensor_clients()[2]), nonneg=True, integer=True, high=w.clients().x.shape[1] + 1,
                 link=True, also=("x",)),
        "weight": Arr(None, optional=True, extra=(torch.full((3, 2), -1.0), torch.full(w.clients().y.shape, NAN))),
    }),
    Case("fedlab.engine.population.ClientData.from_arrays", {
        "xs": Obj(w.client_arrays()[0], extra=([], [np.full((3, w.DIM), np.nan)] * 4, [BAD_TEXT] * 4),
                  also=("ys",)),
        "ys": Obj(w.client_arrays()[1], extra=([np.zeros(2)] * 4, w.client_arrays()[1][:2]), also=("xs",)),
        "weights": Obj(None, optional=True, extra=([np.ones(2)], [-np.ones(6), None, None, None])),
    }),
    Case("fedlab.engine.population.FederatedDataset", {
        "train": Obj(w.clients()),
        "test": Obj(fed_kind().value().test, extra=(ClientData.from_arrays(*w._clients(sizes=(3, 3))),)),
        "n_classes": Int(w.N_CLASSES, low=1, optional=True, extra=(2,)),
    }),
    Case("fedlab.engine.population.FederatedDataset.from_client_arrays", {
        "xs": Obj(w.client_arrays()[0], extra=([], [np.full((3, w.DIM), np.nan)] * 4), also=("ys",)),
        "ys": Obj(w.client_arrays()[1], extra=([np.arange(6) + 7, *w.client_arrays()[1][1:]],),
                  also=("xs", "n_classes")),
        "test_fraction": Real(0.25, low=0, high=1, high_open=True),
        "n_classes": Int(w.N_CLASSES, low=1, optional=True, extra=(0, 2)),
        "seed": Int(0, low=0),
    }, edge=("test_fraction",)),
    # ---------------------------------------------------------------- engine.local
    Case("fedlab.engine.local.LocalSGD", {
        "lr": Real(0.1, low=0, low_open=True),
        "local_steps": Int(1, low=1), "batch_size": Int(32, low=1),
        "momentum": Real(0.0, low=0, high=1, high_open=True),
        "weight_decay": Real(0.0, low=0), "prox_mu": Real(0.0, low=0),
        "radius": Real(None, low=0, low_open=True, optional=True), "optimizer": Choice("sgd"),
        "betas": Kind((0.9, 0.999), extra=((0.9,), (0.9, 1.0), (-0.1, 0.9), BAD_TEXT)),
        "eps": Real(1e-8, low=0, low_open=True), "epochs": Int(None, low=1, optional=True),
        "schedule": Obj(None, optional=True, extra=(3,)), "keep_state": Flag(False),
    }, edge={"lr": [1e-12], "batch_size": [1], "momentum": [0.999], "epochs": [1]}),
    Case("fedlab.engine.local.MultiStepLR", {"milestones": Kind((100, 150), extra=((), (150, 100), (0,), BAD_TEXT, 3)),
                                             "gamma": Real(0.1, low=0, low_open=True)}),
    Case("fedlab.engine.local.InverseSqrtLR", {}),
    Case("fedlab.engine.local.CosineLR", {"total_rounds": Int(10, low=1), "floor": Real(0.0, low=0, high=1)},
         edge=("total_rounds", "floor")),
    Case("fedlab.engine.local.solver_from_recipe", {
        "recipe": Kind({"momentum": 0.9, "schedule": "multi_step", "keep_state": True},
                       extra=({"nesterov": True}, {"schedule": "step"}, {"momentum": 2.0}, 3, [])),
        "lr": Real(0.1, low=0, low_open=True), "local_steps": Int(1, low=1), "batch_size": Int(32, low=1),
        "rounds": Int(200, low=1), "method": Obj(None, optional=True, extra=(3, "FedAvg"))},
        edge=("local_steps", "batch_size", "rounds")),
    Case("fedlab.engine.local.initial_optimizer_state", {"solver": solver_kind(),
                                                         "params": params_kind(model_aware=False, fixed_rows=False)}),
    Case("fedlab.engine.local.draw_epochs", {
        "n": Arr(fresh(lambda: w.clients().n.clone()), positive=True, integer=True),
        "epochs": Int(2, low=1), "batch_size": Int(3, low=1),
        "key": Obj((0, 1), extra=((-1, 0), (1.5,), 3, ())),
    }, edge=("epochs", "batch_size")),
    Case("fedlab.engine.local.local_train", {
        "model": model_kind(also=("data",)),
        "params": params_kind(also=("rows",)),
        "data": clients_kind(also=("model",)),
        "solver": solver_kind(),
        "key": Obj((0, 1), extra=((-1, 0), 3)),
        "round_index": Int(0, low=0),
        "optimizer_state": Obj(None, optional=True, extra=(3, fresh(lambda: initial_optimizer_state(
            LocalSGD(lr=0.1, optimizer="adam"), w.params())))),
    }, edge=("round_index",)),
    Case("fedlab.engine.local.draw_batches", {
        "n": Arr(fresh(lambda: w.clients().n.clone()), positive=True, integer=True),
        "steps": Int(2, low=1), "batch_size": Int(3, low=1),
        "key": Obj((0, 1), extra=((-1, 0), (1.5,), 3, ())),
    }, edge=("steps", "batch_size")),
    Case("fedlab.engine.local.local_sgd", {
        "model": model_kind(also=("data",)),
        "params": params_kind(also=("rows",)),
        "data": clients_kind(also=("model",)),
        "solver": solver_kind(),
        "key": Obj((0, 1), extra=((-1, 0), 3)),
        "rows": Arr(None, optional=True, extra=([0, 9, 1, 2], [0.5, 1, 2, 3], [[0, 1]]), also=("params",)),
        "sample_weight": Arr(None, optional=True, extra=(torch.ones(4, 2), torch.full(w.clients().y.shape, NAN),
                                                         -torch.ones(w.clients().y.shape))),
        "anchor": Obj(None, optional=True, extra=({},)),
    }),
    # ---------------------------------------------------------------- engine.aggregation
    Case("fedlab.engine.aggregation.weighted_average", {
        "params": params_kind(model_aware=False, also=("weights",)),
        "weights": Arr(np.ones(w.N_CLIENTS), nonneg=True, ndim=1, link=True, extra=(np.zeros(w.N_CLIENTS),)),
    }, edge={"weights": [np.array([0.0, 0.0, 0.0, 1.0])]}),
    Case("fedlab.engine.aggregation.broadcast", {"params": single_params_kind(empty_ok=True), "n_rows": Int(3, low=1)},
         edge=("n_rows",)),
    Case("fedlab.engine.aggregation.gossip", {
        "params": params_kind(model_aware=False, also=("mixing_matrix",)),
        "mixing_matrix": Arr(w.ring(), stochastic=True, link=True),
    }, edge={"mixing_matrix": [np.eye(w.N_CLIENTS)]}),
    Case("fedlab.engine.aggregation.check_mixing_matrix", {
        "matrix": Arr(w.ring(), stochastic=True, also=("mixing_matrix",)),
        "n": Int(4, low=1, also=("mixing_matrix",)),
        "atol": Real(1e-6, low=0),
    }, edge=("atol",)),
    # ---------------------------------------------------------------- engine.evaluation
    Case("fedlab.engine.evaluation.model_outputs", {
        "model": model_kind(also=("data",)), "params": params_kind(), "data": clients_kind(also=("model",)),
        "chunk": Int(64, low=1),
    }, edge=("chunk",)),
    Case("fedlab.engine.evaluation.metrics_from_outputs", {
        "model": model_kind(also=("outputs", "data")),
        "outputs": Arr(fresh(lambda: torch.zeros(*w.clients().y.shape, w.N_CLASSES)), finite=False, link=True,
                       also=("data",)),
        "data": clients_kind(also=("outputs", "model")),
    }),
    Case("fedlab.engine.evaluation.metrics_from_proba", {
        "proba": Arr(fresh(lambda: torch.full((*w.clients().y.shape, w.N_CLASSES), 1 / w.N_CLASSES)), prob=True,
                     link=True, also=("data",)),
        "data": clients_kind(also=("proba",)),
    }, edge={"proba": [torch.nn.functional.one_hot(w.clients().y, w.N_CLASSES).float()]}),
    Case("fedlab.engine.evaluation.evaluate", {
        "model": model_kind(also=("train", "test")), "params": params_kind(),
        "train": clients_kind(also=("model",)), "test": Obj(fresh(lambda: w.fed().test), extra=(w.client_arrays(),)),
    }),
    # ---------------------------------------------------------------- engine.history, runner
    Case("fedlab.engine.history.History", {
        "n_train": Arr(None, optional=True, nonneg=True), "n_test": Arr(None, optional=True, nonneg=True),
        "rounds": Obj([], extra=([1.5],)), "clients": Obj({}, extra=([],)), "log": Obj([], extra=({},)),
    }),
    Case("fedlab.engine.history.History.curve", {"name": Choice("train_loss"), "reduce": Choice("weighted")},
         fn=lambda **kw: w.history().curve(**kw)),
    Case("fedlab.engine.history.History.per_client", {"name": Choice("train_loss"), "index": Int(-1)},
         fn=lambda **kw: w.history().per_client(**kw)),
    Case("fedlab.engine.runner.run", {
        "algorithm": Obj(FedAvg(w.model(), w.solver()), extra=(w.model(),)),
        "data": Obj(w.fed(), extra=(w.clients(),)),
        "rounds": Int(1, low=0), "seed": Int(0, low=0), "eval_every": Int(1, low=1),
        "progress": Kind(False, extra=(BAD_TEXT, 2)),
        "callback": Obj(None, optional=True),
        "order": Choice("train_first"),
    }, skip=("state",), edge=("rounds",)),
    # ---------------------------------------------------------------- models
    Case("fedlab.models.Model", {"loss": Choice("cross_entropy")}),
    Case("fedlab.models.LinearModel", {"in_features": Int(3, low=1), "out_features": Int(2, low=1)},
         edge=("in_features", "out_features")),
    Case("fedlab.models.MLP", {"in_features": Int(3, low=1), "hidden": Arr((4,), integer=True, positive=True,
                                                                            nonempty=False),
                               "out_features": Int(2, low=1)},
         edge={"in_features": [1], "out_features": [1], "hidden": [()]}),
    Case("fedlab.models.SmallCNN", {"in_channels": Int(1, low=1), "image_size": Int(8, low=4),
                                    "n_classes": Int(10, low=2),
                                    "channels": Arr((3, 4), integer=True, positive=True)},
         edge=("image_size", "n_classes")),
    Case("fedlab.models.ModuleModel", {"factory": Obj(lambda: torch.nn.Linear(3, 2), extra=(lambda: 3,))}),
    Case("fedlab.models.check_model", {"model": Obj(w.model(), extra=(w.solver(),)), "name": Fixed("model")}),
    Case("fedlab.models.check_param_dict", {"name": Fixed("params"),
                                            "params": params_kind(model_aware=False, fixed_rows=False,
                                                                  also=("rows",)),
                                            "stacked": Flag(True), "nonempty": Flag(True),
                                            "rows": Int(None, low=1, optional=True, extra=(w.N_CLIENTS + 1,),
                                                        also=("params",))}),
    Case("fedlab.models.check_params", {"model": model_kind(with_data=False, also=("params",)),
                                        "params": params_kind(fixed_rows=False, also=("rows", "model")),
                                        "stacked": Flag(True),
                                        "rows": Int(None, low=1, optional=True, extra=(w.N_CLIENTS + 1,),
                                                    also=("params",)),
                                        "name": Fixed("params")}),
    Case("fedlab.engine.population.check_model_data", {"model": model_kind(also=("data",)),
                                                       "data": clients_kind(also=("model",)),
                                                       "name": Fixed("data")}),
    Case("fedlab.models.init_stacked", {"model": model_kind(with_data=False), "n_rows": Int(2, low=1),
                                        "generator": Obj(torch.Generator().manual_seed(0), extra=(0,))},
         edge=("n_rows",)),
    # ---------------------------------------------------------------- mixing, markov
    Case("fedlab.mixing.local_degree_weights", {"G": Arr(w.ring() > 0, finite=False, square=True,
                                                         extra=(np.zeros((3, 3)), np.full((3, 3), np.nan)))}),
    Case("fedlab.mixing.metropolis_weights", {"G": Arr(w.ring() > 0, finite=False, square=True,
                                                       extra=(np.triu(np.ones((3, 3))),))}),
    Case("fedlab.mixing.fmmc_weights", {"G": Arr(w.ring() > 0, finite=False, square=True),
                                        "solver": Kind(None, extra=(BAD_TEXT, 3))}),
    Case("fedlab.mixing.second_largest_eigenvalue_modulus", {"W": Arr(w.ring(), rowsum=True)}),
    Case("fedlab.mixing.slem", {"W": Arr(w.ring(), rowsum=True)}),
    Case("fedlab.mixing.exact_average", {"n": Int(3, low=1)}, edge=("n",)),
    Case("fedlab.markov.check_transition_matrix", {"P": Arr(w.stochastic(), stochastic=True),
                                                   "atol": Real(1e-8, low=0)}, edge={"atol": [0.0], "P": [CYCLE]}),
    Case("fedlab.markov.stationary_distribution", {"P": Arr(w.stochastic(), stochastic=True)}, edge={"P": [CYCLE]}),
    Case("fedlab.markov.sample_chains", {
        "P": Arr(w.stochastic(), stochastic=True), "n_steps": Int(5, low=0),
        "start": Arr(None, optional=True, extra=(7, -1, 0.5)),
        "law": Arr(None, optional=True, extra=(np.array([0.5, 0.6, -0.1]), np.ones(2) / 2)),
        "n_chains": Int(None, low=1, optional=True), "rng": Rng(0),
        "uniforms": Fixed(None), "hold": Fixed(None),
    }, edge={"n_steps": [0], "n_chains": [1], "P": [CYCLE]}),
    # ---------------------------------------------------------------- gmm
    *[Case(f"fedlab.gmm.{name}", {
        "x": Arr(np.random.default_rng(0).normal(size=(2, 5, 2)), also=("means",)),
        "weights": Arr(np.full(2, 0.5), simplex=True, also=("means",)),
        "means": Arr(np.eye(2), ndim=2, also=("x", "weights")),
        "variances": Arr(1.0, positive=True, nonempty=False),
    }) for name in ("responsibilities", "local_m_step", "log_likelihood")],
    Case("fedlab.gmm.check_samples", {"x": Arr(np.ones((2, 5, 2)), also=("dim",)), "dim": Int(2, low=1,
                                                                                                optional=True)}),
    Case("fedlab.gmm.check_client_weights", {"value": Arr(np.full(2, 0.5), simplex=True, also=("w",)),
                                             "n_clients": Int(3, low=1, also=("w",)),
                                             "n_components": Int(2, low=1, also=("w",)),
                                             "name": Fixed("w")}, edge=("n_clients",)),
    Case("fedlab.gmm.server_step", {
        "stats": Obj(fresh(lambda: __import__("fedlab.gmm", fromlist=["x"]).local_m_step(
            np.ones((2, 5, 2)), np.full(2, 0.5), np.eye(2))), also=("means",)),
        "means": Arr(np.eye(2), ndim=2, also=("stats",)), "variances": Arr(1.0, positive=True, nonempty=False),
    }),
    Case("fedlab.gmm.em_step", {
        "x": Arr(np.ones((5, 2)), also=("means", "log_pi")),
        "log_pi": Arr(np.log(np.full((1, 2), 0.5)), also=("means",)),
        "means": Arr(np.eye(2), ndim=2, also=("x", "log_pi")), "variances": Arr(1.0, positive=True, nonempty=False),
    }),
    Case("fedlab.gmm.seed_means", {"x": Arr(np.random.default_rng(0).normal(size=(6, 2)), ndim=2),
                                   "n_components": Int(2, low=1), "rng": Rng(0)}, edge=("n_components",)),
    Case("fedlab.gmm.FederatedGMMEM", {"n_components": Int(2, low=1), "variance": Real(1.0, low=0, low_open=True),
                                       "means_init": Arr(None, optional=True),
                                       "weights_init": Arr(None, optional=True, simplex=True)}, edge=("n_components",)),
    Case("fedlab.gmm.federated_gmm_em", {"x": Arr(np.random.default_rng(0).normal(size=(2, 5, 2))),
                                         "n_components": Int(2, low=1), "n_iter": Int(2, low=0),
                                         "means_init": Arr(None, optional=True),
                                         "weights_init": Arr(None, optional=True, simplex=True),
                                         "variance": Real(1.0, low=0, low_open=True), "seed": Int(0, low=0)},
         edge=("n_components", "n_iter")),
    # ---------------------------------------------------------------- algorithms (edges: each option's closed bounds)
    *[Case(f"fedlab.algorithms.{mod}.{cls}", {"model": model_kind(with_data=False), "solver": solver_kind(), **extra},
           edge=tuple(a for a, kind in extra.items() if kind.edges()))
      for mod, cls, extra in [
          ("fedavg", "FedAvg", {"participation": Real(1.0, low=0, high=1, low_open=True),
                                "weights": Kind("size", extra=(BAD_TEXT, [0.5, 0.6], 3))}),
          ("fedavg", "FedProx", {"mu": Real(0.1, low=0, low_open=True)}),
          ("local", "Local", {}), ("local", "Centralized", {}),
          ("decentralized", "DecentralizedSGD", {"mixing_matrix": Arr(w.ring(), stochastic=True)}),
          ("fedem", "FedEM", {"n_components": Int(2, low=1), "pi_init": Choice("uniform"),
                              "weights": Kind("size", extra=(BAD_TEXT, 3)),
                              "participation": Real(1.0, low=0, high=1, low_open=True)}),
          ("fedem", "DFedEM", {"mixing_matrix": Arr(w.ring(), stochastic=True), "n_components": Int(2, low=1)}),
          ("personalized", "FedAvgPlus", {"finetune_epochs": Real(1.0, low=0, low_open=True),
                                          "finetune_lr": Real(None, low=0, low_open=True, optional=True)}),
          ("personalized", "ClusteredFL", {"tol_1": Real(0.4, low=0), "tol_2": Real(1.6, low=0),
                                           "warmup": Int(0, low=0), "max_clusters": Int(16, low=1)}),
          ("personalized", "PFedMe", {"lam": Real(1.0, low=0, low_open=True), "inner_steps": Int(5, low=1),
                                      "beta": Real(1.0, low=0, low_open=True)}),
          ("personalized", "APFL", {"alpha": Real(0.5, low=0, high=1)}),
          ("personalized", "Ditto", {"lam": Real(0.1, low=0, low_open=True),
                                     "personal_steps": Int(None, low=1, optional=True)}),
          ("personalized", "FedRep", {"head_keys": Obj(None, optional=True, extra=(("nope",),)),
                                      "head_steps": Int(None, low=1, optional=True)}),
      ]],
    # ---------------------------------------------------------------- the algorithms' shared pieces
    *[Case(f"fedlab.algorithms.common.{cls}", {"params": Obj(fresh(lambda: w.params(1)), extra=(3, [1.0])),
                                               "round": Int(0, low=0)}, edge=("round",))
      for cls in ("ServerState", "ClientsState")],
    Case("fedlab.algorithms.common.check_solver", {"solver": solver_kind()}),
    Case("fedlab.algorithms.common.population_optimizer", {
        "solver": Obj(LocalSGD(lr=0.1, momentum=0.9, keep_state=True), extra=(w.model(), 3)),
        "params": Obj(fresh(lambda: {k: v[0] for k, v in w.params(1).items()}), extra=({}, 3, [1.0])),
        "n_rows": Int(3, low=1)}, edge=("n_rows",)),
    Case("fedlab.algorithms.common.train_rows", {
        "model": model_kind(also=("data", "params")), "solver": solver_kind(),
        "params": params_kind(also=("state_rows",)), "data": clients_kind(also=("model",)),
        "key": Obj((0, 1), extra=((-1, 0), 3)), "round_index": Int(0, low=0),
        "optimizer": Obj(fresh(lambda: initial_optimizer_state(w.solver(), w.params())), optional=True,
                         extra=(3,)),
        "state_rows": Arr(np.arange(w.N_CLIENTS), ndim=1, integer=True, also=("params",),
                          extra=(np.array([0, 1, 2, 99]), np.array([0.5, 1, 2, 3]))),
    }, edge=("round_index",)),
    Case("fedlab.algorithms.common.check_weights", {"weights": Kind("size", extra=(BAD_TEXT, [0.5, 0.6], 3)),
                                                    "name": Fixed("weights")}),
    Case("fedlab.algorithms.common.check_data", {"model": model_kind(also=("data",)), "data": fed_kind(),
                                                 "name": Fixed("data")}),
    Case("fedlab.algorithms.common.check_mixing", {"mixing_matrix": Arr(w.ring(), stochastic=True)}),
    Case("fedlab.algorithms.common.initial_params", {"model": model_kind(with_data=False), "seed": Int(0, low=0),
                                                     "device": Kind("cpu", extra=("tpu", 3))}, edge=("seed",)),
    Case("fedlab.algorithms.common.client_weights", {"weights": Kind("uniform", extra=(BAD_TEXT, [0.5, 0.6], 3)),
                                                     "data": Obj(fresh(w.clients), extra=(3, w.fed())),
                                                     "name": Fixed("weights")}),
    Case("fedlab.algorithms.common.check_participation",
         {"participation": Real(0.5, low=0, high=1, low_open=True)}, edge=("participation",)),
    Case("fedlab.algorithms.common.sample_participants", {
        "participation": Real(0.5, low=0, high=1, low_open=True), "n_clients": Int(4, low=1), "seed": Int(0, low=0),
        "round_": Int(0, low=0)}, edge=("participation", "n_clients", "seed", "round_")),
    Case("fedlab.algorithms.common.evaluate_global", {
        "model": model_kind(with_data=False, also=("params",)),
        "params": Obj(fresh(lambda: {k: v[0] for k, v in w.params(1).items()}), extra=({}, 3)),
        "train": Obj(fresh(w.clients), extra=(3,)), "test": Obj(fresh(w.clients), extra=(3,))}),
    Case("fedlab.algorithms.personalized.FineTuneState.from_fedavg",
         {"state": Obj(fresh(lambda: FedAvg(w.model(), w.solver()).init(w.fed(), 0)), extra=(3, None)),
          "seed": Int(0, low=0)}),
    Case("fedlab.algorithms.fedavg.FedAvg.init", {"data": fed_kind(), "seed": Int(0, low=0)},
         fn=lambda **kw: FedAvg(w.model(), w.solver()).init(**kw)),
    Case("fedlab.algorithms.fedem.e_step", {"log_pi": Arr(np.log(np.full((2, 3), 1 / 3)), also=("losses",)),
                                            "losses": Arr(np.ones((2, 3, 4)), also=("log_pi",))}),
    Case("fedlab.algorithms.fedem.update_pi", {"q": Arr(np.full((2, 3, 4), 1 / 3), prob=True, nonempty=False),
                                               "mask": Arr(None, optional=True, finite=False,
                                                           extra=(np.ones((2, 5), bool),))}),
    Case("fedlab.algorithms.fedem.mixture_proba", {"pi": Arr(np.full((2, 3), 1 / 3), simplex=True,
                                                             also=("probs",)),
                                                   "probs": Arr(np.full((2, 3, 4, 2), 0.5), prob=True,
                                                                also=("pi",))}),
    Case("fedlab.algorithms.fedem.mixture_log_likelihood", {
        "log_pi": Arr(torch.log(torch.full((2, 3), 1 / 3)), also=("losses",)),
        "losses": Arr(torch.ones(2, 3, 4), also=("log_pi", "mask")),
        "mask": Arr(torch.ones(2, 4, dtype=torch.bool), finite=False, also=("losses",)),
    }),
    Case("fedlab.algorithms.fedem.component_losses", {"model": model_kind(also=("data",)),
                                                      "components": params_kind(rows=2, fixed_rows=False),
                                                      "data": clients_kind(also=("model",)),
                                                      "clients": Arr(None, optional=True, extra=([0, 9], [0.5]))}),
    Case("fedlab.algorithms.fedem.mixture_metrics", {"model": model_kind(also=("data",)),
                                                     "components": params_kind(rows=2, fixed_rows=False),
                                                     "pi": Arr(np.full((w.N_CLIENTS, 2), 0.5), simplex=True),
                                                     "data": clients_kind(also=("model", "pi"))}),
    Case("fedlab.algorithms.fedem.fit_mixture_weights", {"model": model_kind(also=("data",)),
                                                         "components": params_kind(rows=2, fixed_rows=False),
                                                         "data": clients_kind(also=("model",)),
                                                         "n_iter": Int(2, low=1), "tol": Real(1e-6, low=0),
                                                         "pi_init": Arr(None, optional=True, simplex=True)},
         edge=("n_iter", "tol")),
    Case("fedlab.algorithms.fedem.init_components", {"model": model_kind(with_data=False),
                                                     "n_components": Int(2, low=1),
                                                     "seed": Int(0, low=0)}, edge=("n_components",)),
    Case("fedlab.algorithms.fedem.consensus_distance", {"params": params_kind(model_aware=False,
                                                                              also=("n_clients",)),
                                                        "n_clients": Int(w.N_CLIENTS, low=1, also=("params",))}),
    Case("fedlab.algorithms.personalized.protocol_scores", {
        "metrics": Obj({"test_accuracy": np.full(w.N_CLIENTS, 0.5)},
                       extra=({}, {"test_accuracy": np.array([0.5, NAN, 2.0, 0.1])})),
        "n_test": Arr(np.ones(w.N_CLIENTS), nonneg=True, link=True, also=("metrics",)),
    }),
    Case("fedlab.algorithms.personalized.history_scores", {"history": history_kind(), "index": Int(-1)}),
    Case("fedlab.algorithms.personalized.finetune", {
        "model": model_kind(also=("data",)), "params": single_params_kind(),
        "data": clients_kind(also=("model",)), "solver": solver_kind(), "key": Obj((0, 1), extra=(3,)),
        "epochs": Real(1.0, low=0, low_open=True),
        "clients": Arr(None, optional=True, extra=([0, 9], [0.5])),
    }),
    Case("fedlab.algorithms.registry.Method", {"name": Kind("x", extra=(3, "")), "cls": Obj(FedAvg, extra=(len,)),
                                               "options": Obj({}, extra=([],)),
                                               "solver_options": Obj({}, extra=({"nope": 1},)),
                                               "chapter": Kind("core", extra=(3,)), "label": Kind("", extra=(3,))},
         auto=False),
    Case("fedlab.algorithms.registry.MethodRegistry", {}),
    Case("fedlab.algorithms.registry.METHODS.build", {"name": Choice("fedavg"), "model": model_kind(with_data=False),
                                                      "solver": solver_kind()},
         fn=lambda **kw: METHODS.build(**kw)),
    # ---------------------------------------------------------------- data
    Case("fedlab.data.digits.load_digits_arrays", {"images": Flag(False)}),
    Case("fedlab.data.partition.ClientArrays", {
        "xs": Obj(w.client_arrays()[0], extra=([np.full((6, 2), np.nan)] * 4,), also=("ys",)),
        "ys": Obj(w.client_arrays()[1], extra=([np.arange(6) + 9] * 4,), also=("xs", "n_classes")),
        "n_classes": Int(w.N_CLASSES, low=1, extra=(2,), also=("ys",)),
        "meta": Obj({}, extra=([],)),
    }),
    Case("fedlab.data.partition.Partition", {"indices": Obj([np.arange(3), np.arange(3, 5)],
                                                            extra=([np.array([0.5])], [np.array([-1])], []))}),
    Case("fedlab.data.partition.partition_iid", {"y": Arr(np.arange(20) % 3, integer=True, nonneg=True),
                                                 "n_clients": Int(4, low=1, high=20), "rng": Rng(0)},
         edge=("n_clients",)),
    Case("fedlab.data.partition.partition_dirichlet", {"y": Arr(np.arange(40) % 3, integer=True, nonneg=True),
                                                       "n_clients": Int(4, low=1, high=40),
                                                       "alpha": Real(0.5, low=0, low_open=True), "rng": Rng(0),
                                                       "n_label_groups": Int(None, low=1, optional=True)},
         edge={"n_clients": [1], "n_label_groups": [1]}),
    Case("fedlab.data.partition.partition_pathological", {"y": Arr(np.arange(40) % 4, integer=True, nonneg=True),
                                                          "n_clients": Int(4, low=1, high=40),
                                                          "classes_per_client": Int(2, low=1, high=4),
                                                          "rng": Rng(0)}, edge=("classes_per_client",)),
    Case("fedlab.data.partition.partition_pachinko", {"y": Arr(np.arange(40) % 4, integer=True, nonneg=True),
                                                      "n_clients": Int(4, low=1, high=40),
                                                      "alpha": Real(0.5, low=0, low_open=True),
                                                      "beta": Real(0.5, low=0, low_open=True),
                                                      "coarse_of_fine": Arr(np.array([0, 0, 1, 1]), integer=True,
                                                                            nonneg=True, extra=(np.array([0]),)),
                                                      "rng": Rng(0)}, edge=("n_clients",)),
    Case("fedlab.data.partition.partition", {"y": Arr(np.arange(20) % 3, integer=True, nonneg=True),
                                             "scheme": Choice("iid"), "n_clients": Int(4, low=1)}, edge=("n_clients",)),
    Case("fedlab.data.partition.train_test_split_clients", {
        "xs": Obj(w.client_arrays()[0], extra=([np.zeros((0, 2))],), also=("ys",)),
        "ys": Obj(w.client_arrays()[1], extra=([np.zeros(1)] * 4,), also=("xs",)),
        "test_fraction": Real(0.25, low=0, high=1, high_open=True), "rng": Rng(0),
    }, edge=("test_fraction",)),
    Case("fedlab.data.partition.label_skew", {"histograms": Arr(np.ones((3, 2)), nonneg=True, ndim=2)}),
    Case("fedlab.data.synthetic.make_leaf_synthetic", {"alpha": Real(0.5, low=0), "beta": Real(0.5, low=0),
                                                       "n_clients": Int(3, low=1, optional=True),
                                                       "n_samples": Int(10, low=1),
                                                       "dim": Int(4, low=1), "n_classes": Int(3, low=2),
                                                       "rng": Rng(0)},
         edge=("alpha", "beta", "n_clients", "n_samples", "dim", "n_classes")),
    Case("fedlab.data.synthetic.make_gaussian_mixture", {
        "n_components": Int(2, low=1), "dim": Int(2, low=1), "n_samples": Int(10, low=1),
        "means": Arr(None, optional=True, extra=(np.ones((3, 2)),)),
        "spread": Real(3.0, low=0), "cov_scale": Arr(1.0, positive=True, nonempty=False),
        "weights": Arr(None, optional=True, simplex=True), "rng": Rng(0),
    }, edge=("n_components", "dim", "n_samples", "spread")),
    Case("fedlab.data.synthetic.make_gaussian_mixture_clients", {"n_clients": Int(2, low=1),
                                                                 "n_samples": Int(5, low=1),
                                                                 "n_components": Int(2, low=1),
                                                                 "dim": Int(2, low=1), "rng": Rng(0)},
         edge=("n_clients", "n_samples", "n_components", "dim")),
    Case("fedlab.data.vision.file_hash", {"path": File(__file__, extra=("/nonexistent/robustness/file",)),
                                          "algorithm": Choice("sha256")}),
    Case("fedlab.data.vision.read_idx", {"source": File(b"\x00\x00\x08\x01\x00\x00\x00\x02\x01\x02",
                                                        extra=(b"\x00\x00\x08\x01\x00\x00\x00\x05\x01",
                                                               b"\x1f\x8b\x08\x00", b"", 3.5))}),
    Case("fedlab.data.vision.read_cifar_bin", {"source": File(bytes(3073), extra=(bytes(3072), b"\x1f\x8b", 3.5))}),
    Case("fedlab.data.vision.load_mnist", {"split": Choice("train"), "as_float": Flag(False),
                                           "verify": Kind(False, extra=(BAD_TEXT, 3))}),
    Case("fedlab.data.vision.load_fashion_mnist", {"split": Choice("train"), "as_float": Flag(False),
                                                   "verify": Kind(False, extra=(BAD_TEXT, 3))}),
    Case("fedlab.data.vision.load_emnist", {"split": Choice("train"), "subset": Choice("byclass"),
                                            "verify": Kind(False, extra=(BAD_TEXT, 3))}),
    Case("fedlab.data.vision.load_cifar10", {"split": Choice("train"), "verify": Kind(False, extra=(BAD_TEXT, 3))}),
    Case("fedlab.data.vision.read_cifar100_bin", {"source": File(bytes(3074), extra=(bytes(3073), b"\x1f\x8b", 3.5,
                                                                                 bytes([20]) + bytes(3073)))}),
    Case("fedlab.data.vision.load_cifar100", {"split": Choice("train"), "verify": Kind(False, extra=(BAD_TEXT, 3))}),
    # ---------------------------------------------------------------- real data: fetch and paper-mode loaders
    Case("fedlab.data.fetch.RemoteFile", {"name": Fixed("a.bin"), "url": Fixed("http://127.0.0.1:9/a.bin"),
                                          "digest": Fixed("0" * 32)}, auto=False),
    Case("fedlab.data.fetch.DataSet", {"name": Fixed("x"), "description": Fixed("x"), "clients": Fixed("none"),
                                       "files": Fixed(())}, auto=False),
    Case("fedlab.data.fetch.fetch_command", {"names": Fixed("mnist")}, fn=lambda names: fetch_command(names),
         auto=False),
    Case("fedlab.data.fetch.download", {"remote": Obj(fresh(w.served_file), extra=("http://127.0.0.1:9/a.bin",)),
                                        "folder": Fixed(fresh(w.scratch)), "progress": Flag(False)}),
    Case("fedlab.data.fetch.fetch", {"names": Kind(["served"], extra=([], "served", ["mnist"], 3)),
                                     "progress": Flag(False), "catalog": Fixed(fresh(w.catalog)),
                                     "echo": Fixed(lambda line: None)}),
    Case("fedlab.data.fetch.dataset_status", {}, skip=("catalog",)),
    Case("fedlab.data.fetch.is_present", {"name": Choice("mnist")}, skip=("catalog",)),
    Case("fedlab.data.fetch.require", {"names": Kind("mnist", extra=("imagenet", 3))}, fn=lambda names: require(names),
         auto=False),
    Case("fedlab.paper_mode.absent_claims", {"claims": Kind([CLAIM], extra=(3, [3], "claims")),
                                        "names": Kind(["femnist"], extra=([], "femnist", ["imagenet"], 3))}),
    Case("fedlab.paper_mode.start_paper_mode", {"names": Kind(["femnist"], extra=([], "femnist", ["imagenet"], 3)),
                                           "claims": Kind([CLAIM], extra=(3, [3], "claims"))}),
    Case("fedlab.paper_mode.PaperSetting", {"dataset": Choice("mnist"), "model": Choice("mnist_logistic"),
                                       "clients": Int(2, low=1, optional=True), "rounds": Int(1, low=1),
                                       "local_steps": Int(1, low=1), "batch_size": Int(4, low=1),
                                       "lr": Real(0.1, low=0, low_open=True), "seeds": Int(1, low=1),
                                       "paper": Fixed(""),
                                       "recipe": Kind({"momentum": 0.9, "schedule": "sqrt"},
                                                      extra=({"nesterov": True}, {"schedule": "step"}, 3))},
         auto=False,
         edge=("clients", "rounds", "local_steps", "batch_size", "seeds")),
    Case("fedlab.paper_mode.not_run_why", {"dataset": Choice("mnist")}),
    Case("fedlab.paper_mode.check_settings", {"settings": Kind(None, extra=({"a": 3}, 3, [SETTING])),
                                              "default": Obj({"a": SETTING}, extra=(3, [SETTING])),
                                              "check": Obj(None, optional=True, extra=(3,))}),
    Case("fedlab.paper_mode.settings_table", {"settings": Kind({"a": SETTING}, extra=({"a": 3}, 3, [SETTING]))}),
    Case("fedlab.paper_mode.sweep_settings", {"fn": Obj(lambda **kw: kw, extra=()), "settings": Kind({"mnist": SETTING},
                                                                                  extra=({"mnist": 3}, 3)),
                                         "datasets": Kind(["mnist"], extra=([], "mnist", ["cifar10"], 3)),
                                         "points": Fixed([{}]), "seeds": Int(None, low=1, optional=True)},
         skip=("device", "store")),
    Case("fedlab.paper_mode.sweep_seed_means", {"fn": Obj(lambda **kw: kw, extra=()), "settings": Kind({"mnist": SETTING},
                                                                                    extra=({"mnist": 3}, 3)),
                                           "datasets": Kind(["mnist"], extra=([], "mnist", ["cifar10"], 3)),
                                           "seeds": Int(None, low=1, optional=True),
                                           "average": Kind(None, extra=(3, BAD_TEXT))},
         skip=("device", "store", "named")),
    Case("fedlab.paper_mode.seed_mean_at", {"results": Kind({"mnist": {"mean": {"a": 1.0}}}, extra=(3, BAD_TEXT)),
                                       "name": Fixed("mnist")}),
    Case("fedlab.paper_mode.setting_from_dict", {"setting": Kind({"dataset": "mnist", "model": "mnist_logistic", "clients": 2,
                                                             "rounds": 1, "local_steps": 1, "batch_size": 4, "lr": 0.1,
                                                             "seeds": 1, "paper": ""},
                                                            extra=({"dataset": "mnist"}, 3, "mnist"))}),
    Case("fedlab.paper_mode.check_seed_means", {"results": Kind(None, extra=({"a": 3}, {"a": {"mean": 1}}, 3))}),
    Case("fedlab.paper_mode.mean_over_seeds", {"runs": Kind([{"a": 1.0}], extra=([], 3, "runs"))}),
    Case("fedlab.paper_mode.stand_in_data", {"setting": Obj(SETTING, extra=("mnist",)), "n_clients": Int(2, low=1,
                                                                                                    optional=True),
                                        "seed": Int(0, low=0)}, edge=("n_clients",)),
    Case("fedlab.paper_mode.seconds_per_round", {"algorithm": Obj(METHODS["fedavg"](LinearModel(784, 10), w.solver()),
                                                             extra=(w.solver(),)),
                                            "data": Fixed(fresh(lambda: stand_in_data(SETTING))),
                                            "rounds": Int(1, low=1)}, skip=("device",), edge=("rounds",)),
    Case("fedlab.data.federated.encode_text", {"text": Kind("abc", extra=(b"abc", 3, None))}),
    Case("fedlab.data.federated.next_character_samples", {"codes": Arr(np.arange(10), nonempty=False,
                                                                         extra=(np.zeros((2, 2)), np.ones(3) / 2)),
                                                 "seq_len": Int(3, low=1), "stride": Int(1, low=1)},
         edge=("seq_len", "stride")),
    Case("fedlab.data.federated.read_tff_clients", {"path": File(fresh(lambda: f"{w.data_folder()}/fed_emnist_train.h5"),
                                                        extra=(__file__, "/nonexistent/robustness/file.h5")),
                                           "fields": Fixed(("pixels",))}),
    Case("fedlab.data.federated.load_femnist", {"n_clients": Int(None, low=1, optional=True), "seed": Int(0, low=0),
                                       "fraction": Real(None, low=0, high=1, low_open=True, optional=True)},
         edge=("n_clients", "fraction")),
    Case("fedlab.data.federated.load_shakespeare", {"n_clients": Int(None, low=1, optional=True), "seq_len": Int(80, low=1),
                                           "fraction": Real(None, low=0, high=1, low_open=True, optional=True),
                                           "stride": Int(80, low=1), "min_samples": Int(2, low=1),
                                           "seed": Int(0, low=0)},
         edge=("n_clients", "seq_len", "fraction", "stride", "min_samples")),
    Case("fedlab.data.federated.group_clients", {"data": Obj(fresh(w.fed), extra=(w.clients(), 3)),
                                        "groups": Kind([[0, 2], [1]], extra=([], [[]], [[0, 99]], [[0], [0]], 3))}),
    Case("fedlab.data.federated.load_partitioned", {"name": Choice("mnist"), "n_clients": Int(4, low=1),
                                           "test_fraction": Real(0.2, low=0, high=1, high_open=True),
                                           "data_fraction": Real(1.0, low=0, high=1, low_open=True),
                                           "seed": Int(0, low=0), "alpha": Real(0.5, low=0, low_open=True)},
         auto=False, edge=("n_clients", "test_fraction", "data_fraction")),
    Case("fedlab.data.federated.load_federated", {"name": Choice("mnist"), "n_clients": Int(4, low=1),
                                         "alpha": Real(0.5, low=0, low_open=True)}, auto=False, edge=("n_clients",)),
    Case("fedlab.models.femnist_cnn", {"n_classes": Int(62, low=2)}, edge=("n_classes",)),
    Case("fedlab.models.cifar_cnn", {"n_classes": Int(10, low=2)}, edge=("n_classes",)),
    Case("fedlab.models.char_lstm", {"vocabulary": Int(100, low=2)}, edge=("vocabulary",)),
    Case("fedlab.engine.device.resolve_device", {"device": Kind(None, extra=("gpu0", 3, "cuda:7"))}),
    # ---------------------------------------------------------------- experiments
    Case("fedlab.experiments.aggregate.aggregate_seeds", {
        "records": Obj([{"config": {"a": 1}, "seed": 0, "result": {"m": 1.0}}],
                       extra=([{"seed": 0}], [3], {"config": {}})),
        "metric": Kind("m", extra=(3,)), "ddof": Int(0, low=0),
    }),
    Case("fedlab.experiments.aggregate.to_table", {
        "records": Obj([{"config": {"a": 1}, "seed": 0, "result": {"m": 1.0}}], extra=([{"seed": 0}],)),
        "metrics": Kind("m", extra=(3, [])), "ddof": Int(0, low=0), "digits": Int(4, low=0, optional=True),
        "point": Kind(-1, extra=(1.5, "3", None)),
    }, edge=("digits",)),
    Case("fedlab.experiments.store.ResultStore", {"path": File(fresh(lambda: __import__("tempfile").mkdtemp()),
                                                               extra=(__file__,))}),
    Case("fedlab.experiments.store.to_jsonable", {"obj": Kind({"a": 1}, extra=(object(), {1.5: 2}, {"a": {3}}),
                                                              also=("value",)), "name": Kind("value", extra=(3,))}),
    Case("fedlab.experiments.store.config_key", {"config": Obj({"a": 1}, extra=([1],)),
                                                 "seed": Int(None, low=0, optional=True),
                                                 "fn": Kind(None, extra=(3,))}),
    Case("fedlab.experiments.store.function_name", {"fn": Kind(None, extra=(3, 1.5))}),
    Case("fedlab.experiments.sweep.grid", {"axes": Kind({"a": [1, 2]}, extra=(3, [], [3]))}),
    Case("fedlab.experiments.sweep.close_workers", {}),
    Case("fedlab.experiments.sweep.sweep", {
        "fn": Obj(lambda a, seed: {"a": a}, extra=(lambda: None,)),
        "configs": Obj([{"a": 1}], extra=([3], {"seed": 1})),
        "seeds": Kind(0, extra=(-1, [0, 0], 1.5, BAD_TEXT)),
        "store": Kind(None, extra=(3,)), "executor": Kind("sequential", extra=(BAD_TEXT, 3)),
        "max_workers": Int(None, low=1, optional=True), "progress": Flag(False), "on_error": Choice("raise"),
        "replicas": Kind(False, extra=(0, -1, 1.5, BAD_TEXT, None)),
    }, edge={"max_workers": [1], "replicas": [True, 1, 2]}),
    # ---------------------------------------------------------------- claims, tables, plots
    Case("fedlab.claims.Claim", {
        "chapter": Kind("c", extra=("", 3)), "source": Kind("s", extra=("", 3)), "statement": Kind("x", extra=("",)),
        "paper": Kind(1.0, extra=(NAN, object())), "measured": Kind(1.0, extra=(object(),)),
        "rule": Choice("tolerance"), "kind": Choice("experiment"), "scale": Choice("smoke"),
        "tolerance": Real(0.1, low=0, optional=True), "relative": Flag(False),
        "holds": Kind(None, extra=(BAD_TEXT,)), "why": Kind("", extra=(3,)), "digits": Int(2, low=0),
    }, auto=False, edge=("tolerance", "digits")),
    Case("fedlab.claims.Claim", {
        "chapter": Kind("c"), "source": Kind("s"), "statement": Kind("x"), "paper": Kind(1.0), "measured": Kind(None),
        "rule": Choice("direction"), "kind": Choice("erratum"), "scale": Choice("full"),
        "seeds": Kind((1.0, 2.0), extra=((), (1.0, NAN), BAD_TEXT, 3)), "corrected": Kind(1.5, extra=(None, (2.0, 1.0))),
    }, fn=lambda **kw: Claim(**kw), auto=False),
    *[Case(f"fedlab.claims.{name}", {"claims": Obj([CLAIM], extra=([3],))})
      for name in ("tally", "tally_by_kind", "claims_table", "summary")],
    Case("fedlab.claims.result_at", {"results": Obj({"a": {"b": 1}}, extra=(3, {}, {"a": 3}, {"a": {}}))},
         fn=lambda results: __import__("fedlab.claims", fromlist=["x"]).result_at(results, "a", "b")),
    Case("fedlab.claims.check_results", {"results": Obj({"a": 1}, extra=(3, {}, [("a", 1)])),
                                         "keys": Obj({"a": "a number"}, extra=(3,))}),
    Case("fedlab.claims.ClaimBuilder", {"chapter": Kind("03_fedem", extra=(3,)), "scale": Choice("smoke")}),
    Case("fedlab.claims.show_claims", {"claims": Obj([], extra=([3],))}),
    Case("fedlab.claims.save_claims", {"claims": Obj([], extra=([3],)),
                                       "path": File(fresh(lambda: __import__("tempfile").mktemp(suffix=".json")),
                                                    extra=("/nonexistent/robustness/claims.json",))}),
    Case("fedlab.claims.load_claims", {"path": File(fresh(claims_file),
                                                    extra=(__file__, "/nonexistent/robustness/claims.json"))}),
    # ---------------------------------------------------------------- headlines
    Case("fedlab.headlines.Headline", {
        "name": Kind("a", extra=("", "a: b", 3)), "value": Kind(1.0, extra=(NAN, [1.0, "x"], None)),
        "tolerance": Real(0.1, low=0), "relative": Flag(False), "digits": Int(3, low=0, optional=True),
        "why": Kind("noise", extra=(3,)),
    }, auto=False, edge=("tolerance", "digits")),
    *[Case(f"fedlab.headlines.{name}", {"name": Kind("a", extra=("", 3)), "value": Kind(1.0, extra=(NAN,)),
                                        "digits": Int(3, low=0, optional=True)}, edge=("digits",))
      for name in ("exact", "computed")],
    Case("fedlab.headlines.accuracy", {"name": Kind("a", extra=("", 3)), "value": Kind(0.9, extra=(NAN,)),
                                       "n_test": Int(100, low=1), "samples": Int(1, low=1),
                                       "unit": Real(1.0, low=0, low_open=True), "digits": Int(3, low=0, optional=True)},
         edge=("n_test", "samples", "digits")),
    Case("fedlab.headlines.last_digit", {"name": Kind("a", extra=("", 3)), "value": Kind(0.2, extra=(NAN,)),
                                         "digits": Int(2, low=0), "source": Kind("simulation", extra=(3,))},
         edge=("digits",)),
    Case("fedlab.headlines.percentile_flip", {"client_accuracies": Kind([0.5, 0.9], extra=([[0.5]], [0.5])),
                                              "n_test": Kind([2, 10], extra=([1.5, 2], [-1, 2])),
                                              "q": Real(10.0, low=0, high=100)}, edge=("q",)),
    Case("fedlab.headlines.show_headlines", {"headlines": Obj([], extra=([3], "a: 1"))}),
    Case("fedlab.headlines.compare_headlines", {"stored": Obj([], extra=([3], "a", [{"nope": 1}])),
                                                "fresh": Obj([], extra=([3], "a", [{"nope": 1}]))}),
    Case("fedlab.tables.markdown_table", {"header": Obj(["a"], extra=([],)),
                                          "rows": Obj([[1]], extra=([[1, 2]], 3))}),
    Case("fedlab.tables.show_table", {"header": Obj(["a"], extra=([],)), "rows": Obj([[1]], extra=([[1, 2]], 3))}),
    Case("fedlab.tables.mean_pm_std", {"ms": Kind((1.0, 0.5), extra=((1.0,), (1.0, -1.0), BAD_TEXT)),
                                       "digits": Int(2, low=0)}, edge=("digits",)),
    Case("fedlab.tables.paired_t", {"mean": Real(1.0), "std": Real(0.5, low=0), "n": Int(3, low=1)}, edge=("std", "n")),
    Case("fedlab.tables.paired_direction", {"mean": Real(1.0), "std": Real(0.5, low=0), "n": Int(3, low=1),
                                            "negligible": Real(0.2, low=0),
                                            "level": Real(0.95, low=0, high=1, low_open=True, high_open=True)},
         edge=("std", "n", "negligible")),
    Case("fedlab.tables.t_critical", {"n": Int(3, low=1),
                                      "level": Real(0.95, low=0, high=1, low_open=True, high_open=True)}, edge=("n",)),
    Case("fedlab.tables.mean_interval", {"values": Arr([1.0, 2.0, 4.0], ndim=1),
                                         "level": Real(0.95, low=0, high=1, low_open=True, high_open=True)}),
    Case("fedlab.plots.figure_axes", {"ax": AX, "figsize": Arr((5, 3.4), positive=True)}),
    Case("fedlab.plots.check_axes", {"name": Fixed("ax"), "value": Kind(None, extra=(BAD_TEXT, 3), also=("ax",)),
                                     "n": Int(None, low=1, optional=True, also=("ax",))}, edge=("n",)),
    Case("fedlab.plots.plot_label_histograms", {"histograms": Arr(np.ones((3, 2)), nonneg=True, ndim=2), "ax": AX}),
    Case("fedlab.plots.plot_curves", {"curves": Obj({"a": ([0, 1], [[1.0, 2.0]])},
                                                    extra=({"a": ([0, 1, 2], [[1.0, 2.0]])}, {"a": 3}, [])),
                                      "ax": AX}),
    Case("fedlab.plots.plot_client_drift", {
        "clients": Obj(fresh(lambda: __import__("fedlab.primer.data", fromlist=["x"]).QuadraticClients(
            np.zeros((2, 2)), np.stack([np.eye(2)] * 2), np.full(2, 0.5))), extra=(np.zeros(2),),
            also=("local",)),
        "server": Arr(np.zeros((3, 2)), ndim=2), "local": Arr(np.zeros((2, 2, 3, 2)), ndim=4, also=("clients",)),
        "optimum": Arr(None, optional=True), "fixed_point": Arr(None, optional=True), "ax": AX,
    }),
]
