"""Robustness cases of the kNN-Per chapter (notebook 04): features, datastores, data, bounds, experiments, plots,
published numbers, claims and paper mode."""
from __future__ import annotations

import functools

import numpy as np
import torch

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Int, Kind, Obj, Real, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.knnper"
GRID = (0.0, 0.5, 1.0)


@functools.cache
def mlp():
    from fedlab.models import MLP

    return MLP(w.DIM, (4,), w.N_CLASSES)


def mlp_params():
    return mlp().init(torch.Generator().manual_seed(0))


@functools.cache
def features():
    from fedlab.knnper.algorithms import client_features

    return client_features(mlp(), mlp_params(), w.clients())


@functools.cache
def stores():
    from fedlab.knnper.algorithms import build_datastores

    return tuple(build_datastores(features()))


@functools.cache
def new_features():
    from fedlab.knnper.experiments import new_client_features

    return new_client_features(n_clients=4, rounds=1, new_fraction=0.5)


def mlp_kind(**kw):
    return Obj(fresh(mlp), extra=(w.model(), w.solver()), **kw)


def mlp_params_kind(**kw):
    bad = mlp_params()
    bad["b0"][0] = NAN
    return Obj(fresh(mlp_params), extra=({}, bad, w.single_params()), **kw)


def features_kind(**kw):
    return Obj(fresh(features), extra=(w.clients(),), **kw)


def proba(n=4, c=3, seed=0):
    p = np.random.default_rng(seed).random((n, c))
    return p / p.sum(1, keepdims=True)


SMALL = {"n_clients": Int(4, low=2), "rounds": Int(1, low=0), "local_steps": Int(1, low=1),
         "batch_size": Int(4, low=1), "lr": Real(0.1, low=0, low_open=True), "seed": Int(0, low=0),
         "alpha": Real(0.3, low=0, low_open=True)}
"""Small, valid training settings of the experiments."""


def real_setting():
    """The FEMNIST setting shrunk to the robustness files, on a small model."""
    from fedlab.knnper.real_data import SETTINGS

    return w.tiny(SETTINGS["femnist"], model="mnist_mlp")


def small_split():
    from fedlab.knnper.data import digits_split

    return digits_split(n_clients=3)


def claims_results():
    """A small, valid results mapping of the chapter's claims (fedlab.knnper.claims.RESULT_KEYS)."""
    run = {"methods": {m: {"average": 0.9, "bottom_decile": 0.8} for m in ("knnper", "fedavg", "ditto")},
           "diagnosis": {"clients_all_tied": 0, "validation_sizes": [5], "shared": 0.9, "oracle": 0.9},
           "new_clients": [0]}
    sens = {"k_values": [7, 14], "best_by_k": [0.9, 0.9], "sigma_values": [0.1, 100.0], "best_by_sigma": [0.9, 0.9],
            "n_test": 100, "store_sizes": [10]}
    return {"alpha": 0.3, "n_clients": 4, "n_large": 2, "k": 10, "main_runs": [run, run], "new_runs": [run],
            "decide_runs": [run], "sensitivity": [sens], "sensitivity_small": sens,
            "capacity_curves": {"capacities": [0.0, 0.3, 1.0], "accuracy": {0.3: [0.8, 0.85, 0.9]}},
            "fig_3_7": {"capacities": [1.0], "accuracy": {0.3: {"global": [[0.8]], "knnper": [[0.9]]}}},
            "fig_3_11": {"capacities": [1.0], "accuracy": {"knnper": [[0.9]]}},
            "lambda_opt": {"sizes": [1, 2], "lambda_opt": [0.1, 0.2], "correlation": 1.0},
            "quality": {"rounds": [1, 2], "global": [0.5, 0.6], "knn_only": [0.6, 0.7]},
            "system": {"delta_c": [0.0, 0.4], "all": [0.9, 0.8], "weak": [0.9, 0.8], "strong": [0.9, 0.8]},
            "shift": {"k0": 2, "accuracy": {s: [0.9, 0.9, 0.5, 0.9] for s in ("fixed", "fifo", "concat")},
                      "global": [0.9] * 4, "n_test": [10] * 4},
            "bound": {"L_star": 0.05, "disc": 0.3, "n": 1e4, "d_H": 10, "gamma1": 0.5, "gamma2": 0.5},
            "cost": {m: {"upload_bytes": 1} for m in ("fedavg", "fedem", "knnper")}, "new_clients_test_digits": 100}


CASES = [
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.embedding_dim", {"model": mlp_kind()}),
    *[Case(f"{M}.algorithms.{name}", {"model": mlp_kind(also=("x",)), "params": mlp_params_kind(),
                                      "x": Arr(np.ones((3, w.DIM)), nonempty=False, also=("model",)),
                                      "stacked": Kind(False, extra=(BAD_TEXT,))})
      for name in ("embed", "embed_and_proba")],
    Case(f"{M}.algorithms.client_features", {"model": mlp_kind(also=("data",)), "params": mlp_params_kind(),
                                             "data": Obj(fresh(w.clients), extra=(w.fed(),), also=("model",))}),
    Case(f"{M}.algorithms.ClientFeatures", {
        "keys": Obj(fresh(lambda: features().keys), extra=([], [np.full((2, 4), NAN)]), also=("proba", "labels")),
        "proba": Obj(fresh(lambda: features().proba), extra=([],), also=("keys", "labels")),
        "labels": Obj(fresh(lambda: features().labels), extra=([],), also=("keys", "proba"))}),
    Case(f"{M}.algorithms.capacity_size", {"n": Int(10, low=0), "capacity": Real(0.5, low=0, high=1)},
         edge=("n", "capacity")),
    Case(f"{M}.algorithms.knn_search", {"query": Arr(np.ones((2, 3)), ndim=2, nonempty=False, also=("keys",)),
                                        "keys": Arr(np.arange(12.0).reshape(4, 3), ndim=2, also=("query",)),
                                        "k": Int(2, low=1), "backend": Choice("torch")}, edge=("k",)),
    Case(f"{M}.algorithms.kernel_weights", {"dist": Arr(np.ones((2, 3)), ndim=2, nonneg=True, nonempty=False),
                                            "sigma": Real(1.0, low=0, low_open=True), "kernel": Choice("exp_dist"),
                                            "dim": Int(1, low=1)}),
    Case(f"{M}.algorithms.knn_proba", {"query": Arr(np.ones((2, 3)), ndim=2, nonempty=False, also=("keys",)),
                                       "keys": Arr(np.arange(12.0).reshape(4, 3), ndim=2, also=("query", "values")),
                                       "values": Arr(np.array([0, 1, 2, 1]), integer=True, nonneg=True, high=3,
                                                     link=True, also=("keys", "n_classes")),
                                       "k": Int(2, low=1), "n_classes": Int(3, low=1, also=("values",)),
                                       "sigma": Real(1.0, low=0, low_open=True), "kernel": Choice("exp_dist"),
                                       "backend": Choice("torch")}, edge=("k",)),
    Case(f"{M}.algorithms.interpolate", {"p_knn": Arr(proba(), simplex=True, also=("p_global",)),
                                         "p_global": Arr(proba(seed=1), simplex=True, also=("p_knn",)),
                                         "lam": Arr(0.5, nonempty=False, prob=True, extra=(np.ones(3),))}),
    *[Case(f"{M}.algorithms.{name}", {"p_knn": Arr(proba(), simplex=True, also=("p_global", "y")),
                                      "p_global": Arr(proba(seed=1), simplex=True, also=("p_knn", "y")),
                                      "y": Arr(np.array([0, 1, 2, 0]), integer=True, nonneg=True, high=3,
                                               link=True, also=("p_knn", "p_global")),
                                      "grid": Arr(GRID, prob=True)})
      for name in ("lambda_accuracies", "select_lambda")],
    Case(f"{M}.algorithms.Datastore", {"keys": Arr(np.ones((3, 2)), ndim=2, also=("values",)),
                                       "values": Arr(np.array([0, 1, 2]), integer=True, nonneg=True, high=3,
                                                     link=True, also=("keys", "n_classes")),
                                       "n_classes": Int(3, low=1, also=("values",))}),
    Case(f"{M}.algorithms.build_datastores", {"features": features_kind(), "capacity": Real(0.5, low=0, high=1),
                                              "seed": Int(0, low=0)}, edge=("capacity",)),
    Case(f"{M}.algorithms.KNNPerModel", {"model": mlp_kind(), "params": mlp_params_kind(),
                                         "datastores": Obj(fresh(stores), extra=((3,), ())),
                                         "lambdas": Arr(np.full(w.N_CLIENTS, 0.5), prob=True, link=True,
                                                        also=("datastores",)),
                                         "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True),
                                         "info": Obj({}, extra=([],))}, edge=("k",)),
    Case(f"{M}.algorithms.personalize", {"model": mlp_kind(also=("datastore",)), "params": mlp_params_kind(),
                                         "datastore": Obj(fresh(w.clients), extra=(w.fed(),), also=("model",)),
                                         "validation": Obj(None, optional=True, extra=(w.fed(),)),
                                         "lam": Arr(0.5, prob=True, nonempty=False, extra=(np.full(2, 0.5),)),
                                         "capacity": Real(1.0, low=0, high=1),
                                         "lambda_grid": Arr(GRID, prob=True),
                                         "include_validation": Kind(False, extra=(BAD_TEXT,))}),
    Case(f"{M}.algorithms.accuracy_grid", {"store": features_kind(also=("query",)),
                                           "query": features_kind(also=("store",)),
                                           "capacities": Arr((0.5, 1.0), prob=True),
                                           "lambdas": Arr(GRID, prob=True),
                                           "sigma": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.algorithms.KNNPer", {"model": mlp_kind(), "solver": Obj(w.solver(), extra=(w.model(),)),
                                    "validation": Obj(None, optional=True, extra=(w.fed(),)),
                                    "lam": Real(0.5, low=0, high=1, optional=True),
                                    "lambda_grid": Arr(GRID, prob=True),
                                    "capacity": Real(1.0, low=0, high=1)}, edge=("lam", "capacity")),
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.knn_bound_constants", {"gamma1": Real(1.0, low=0, low_open=True),
                                             "gamma2": Real(1.0, low=0, low_open=True),
                                             "d_H": Real(2.0, low=1),
                                             "delta1": Real(4.0, low=0, low_open=True),
                                             "delta2": Real(None, low=0, low_open=True, optional=True)}, edge=("d_H",)),
    Case(f"{M}.bounds.knn_rate", {"n_t": Arr(100.0, positive=True, nonempty=False),
                                  "p": Arr(3.0, positive=True, nonempty=False)}),
    Case(f"{M}.bounds.estimation_term", {"n": Real(100.0, low=2, low_open=True),
                                         "d_H": Real(2.0, low=1), "c4": Real(1.0, low=0, low_open=True)}),
    *[Case(f"{M}.bounds.{name}", {**lead, "L_star": Real(0.1, low=0), "disc": Real(0.2, low=0),
                                  "n_t": Arr(100.0, positive=True, nonempty=False),
                                  "n": Real(1000.0, low=2, low_open=True),
                                  "p": Arr(3.0, positive=True, nonempty=False),
                                  "d_H": Real(2.0, low=1), "gamma1": Real(1.0, low=0, low_open=True),
                                  "gamma2": Real(1.0, low=0, low_open=True)}, edge=("L_star", "disc", "d_H"))
      for name, lead in (("theorem_3_6_1", {"lam": Arr(0.5, prob=True, nonempty=False)}),
                         ("bound_intercept_slope", {}), ("best_lambda", {}))],
    Case(f"{M}.bounds.lambda_preference_threshold", {
        "L_star": Real(0.1, low=0), "disc": Real(0.2, low=0), "n": Real(1000.0, low=2, low_open=True),
        "p": Real(3.0, low=1), "d_H": Real(2.0, low=1),
        "gamma1": Real(1.0, low=0, low_open=True), "gamma2": Real(1.0, low=0, low_open=True)},
         edge=("L_star", "disc", "p", "d_H")),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.experiments.digits_model", {"hidden": Kind((4,), extra=((0,), (1.5,), BAD_TEXT, ()))}),
    Case(f"{M}.data.concat_clients", {"a": Obj(fresh(w.clients), extra=(w.fed(),), also=("b",)),
                                             "b": Obj(fresh(lambda: w.fed().test), extra=(w.fed(),), also=("a",))}),
    Case(f"{M}.data.SplitFederation", {"train": Obj(fresh(w.clients), extra=(w.fed(),), also=("val", "test")),
                                              "val": Obj(fresh(lambda: w.fed().test), extra=(w.fed(),),
                                                         also=("train",)),
                                              "test": Obj(fresh(lambda: w.fed().test), extra=(w.fed(),),
                                                          also=("train",)),
                                              "n_classes": Int(3, low=1, extra=(2,), also=("train", "test"))}),
    Case(f"{M}.data.digits_split", {"n_clients": Int(4, low=1), "alpha": Real(0.3, low=0, low_open=True),
                                           "seed": Int(0, low=0),
                                           "val_fraction": Real(0.2, low=0, high=0.5),
                                           "test_fraction": Real(0.2, low=0, high=0.5), "min_size": Int(10, low=3),
                                           "pool": Arr(None, optional=True, extra=(np.array([-1, 2]),
                                                                                   np.array([0.5]),
                                                                                   np.array([5000])))},
         edge=("n_clients", "val_fraction", "test_fraction", "min_size")),
    Case(f"{M}.data.old_and_new_clients", {"split": Obj(fresh(small_split), extra=(w.clients(), w.fed())),
                                          "n_new": Int(1, low=1, high=2), "seed": Int(0, low=0)}, edge=("n_new",)),
    Case(f"{M}.data.shifted_splits", {"n_clients": Int(3, low=1), "alpha": Real(0.3, low=0, low_open=True),
                                      "seed": Int(0, low=0), "test_fraction": Real(0.3, low=0, high=0.5),
                                      "min_size": Int(20, low=3)}),
    Case(f"{M}.experiments.scores", {"per_client_accuracy": Arr([0.5, 0.7], prob=True, finite=False, link=True,
                                                                also=("n_test",)),
                                     "n_test": Arr([3, 4], nonneg=True, link=True, also=("per_client_accuracy",))}),
    Case(f"{M}.experiments.train_global", {"data": Obj(fresh(lambda: __import__("fedlab.knnper.data",
                                                                                fromlist=["x"]).digits_split(
        n_clients=3).federated()), extra=(w.clients(), w.fed())),
        "rounds": Int(1, low=0), "seed": Int(0, low=0), "lr": Real(0.1, low=0, low_open=True),
        "local_steps": Int(1, low=1), "batch_size": Int(4, low=1),
        "hidden": Kind((4,), extra=((0,), BAD_TEXT)),
        "checkpoints": Kind((), extra=((-1,), (1.5,), BAD_TEXT))}, edge=("rounds", "batch_size")),
    Case(f"{M}.experiments.compare_methods", {**SMALL, "n_clients": Int(4, low=1),
                                              "methods": Kind(("local",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                              "lr_grid": Kind(None, extra=((NAN,), (), BAD_TEXT)),
                                              "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True),
                                              "finetune_epochs": Real(1.0, low=0, low_open=True),
                                              "ditto_lam": Real(0.1, low=0, low_open=True),
                                              "apfl_alpha": Real(0.5, low=0, high=1),
                                              "n_components": Int(3, low=1)},
         edge=("n_clients", "rounds", "batch_size", "k", "apfl_alpha", "n_components")),
    Case(f"{M}.experiments.lambda_selection_diagnosis", {**SMALL, "n_clients": Int(4, low=1), "k": Int(10, low=1),
                                                         "sigma": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.experiments.unseen_clients", {**SMALL, "new_fraction": Real(0.5, low=0, high=1, low_open=True,
                                                                           high_open=True),
                                             "methods": Kind(("fedavg",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                             "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True),
                                             "ditto_lam": Real(0.1, low=0, low_open=True),
                                             "finetune_epochs": Real(1.0, low=0, low_open=True),
                                             "n_components": Int(3, low=1)}),
    Case(f"{M}.data.shrink_clients", {"split": Obj(fresh(lambda: __import__(
        "fedlab.knnper.data", fromlist=["x"]).digits_split(n_clients=3)), extra=(w.clients(), w.fed())),
        "capacity": Real(0.5, low=0, high=1, low_open=True), "seed": Int(0, low=0)}, edge=("capacity",)),
    Case(f"{M}.experiments.new_client_capacity", {**SMALL, "new_fraction": Real(0.5, low=0, high=1, low_open=True,
                                                                                high_open=True),
                                                  "methods": Kind(("fedavg",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                                  "capacities": Kind((0.5, 1.0), extra=((0.0,), (1.5,), BAD_TEXT, ())),
                                                  "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True),
                                                  "ditto_lam": Real(0.1, low=0, low_open=True),
                                                  "finetune_epochs": Real(1.0, low=0, low_open=True),
                                                  "n_components": Int(3, low=1)}),
    Case(f"{M}.experiments.capacity_retrained", {**SMALL, "n_clients": Int(4, low=1), "capacities": Kind((0.5, 1.0),
                                                                             extra=((0.0,), (NAN,), BAD_TEXT, ())),
                                                 "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.experiments.hyperparameter_sensitivity", {**SMALL, "new_fraction": Real(0.5, low=0, high=1,
                                                                                       low_open=True, high_open=True),
                                                         "k_values": Kind((1, 10), extra=((0,), (1.5,), BAD_TEXT, ())),
                                                         "sigma_values": Kind((1.0,), extra=((0.0,), (NAN,), BAD_TEXT,
                                                                                             ())),
                                                         "lambdas": Arr(GRID, prob=True)}),
    Case(f"{M}.experiments.new_client_features", {**SMALL, "new_fraction": Real(0.5, low=0, high=1, low_open=True,
                                                                                high_open=True)}),
    Case(f"{M}.experiments.surface_from_features", {"feats": Obj(fresh(new_features), extra=(w.clients(),)),
                                                    "capacities": Arr((0.5, 1.0), prob=True),
                                                    "lambdas": Arr(GRID, prob=True), "k": Int(10, low=1),
                                                    "sigma": Real(1.0, low=0, low_open=True),
                                                    "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.sensitivity_from_features", {
        "feats": Obj(fresh(new_features), extra=(w.clients(),)),
        "k_values": Kind((1, 10), extra=((0,), (1.5,), BAD_TEXT, ())),
        "sigma_values": Kind((1.0,), extra=((0.0,), (NAN,), BAD_TEXT, ())), "lambdas": Arr(GRID, prob=True),
        "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.capacity_curve", {"feats": Obj(fresh(new_features), extra=(w.clients(),)),
                                             "capacities": Arr((0.0, 1.0), prob=True), "k": Int(10, low=1),
                                             "sigma": Real(1.0, low=0, low_open=True), "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.capacity_lambda_surface", {**SMALL, "capacities": Arr((0.5, 1.0), prob=True),
                                                      "lambdas": Arr(GRID, prob=True), "k": Int(10, low=1),
                                                      "sigma": Real(1.0, low=0, low_open=True),
                                                      "new_fraction": Real(0.5, low=0, high=1, low_open=True,
                                                                           high_open=True)}),
    Case(f"{M}.experiments.knn_vs_global_quality", {**{k: v for k, v in SMALL.items() if k != "rounds"},
                                                    "n_clients": Int(4, low=1),
                                                    "checkpoints": Kind((1,), extra=((-1,), (1.5,), (), BAD_TEXT)),
                                                    "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.experiments.distribution_shift", {**SMALL, "n_clients": Int(4, low=1), "k0": Int(2, low=1),
                                                 "n_steps": Int(3, low=3),
                                                 "lam": Real(0.7, low=0, high=1), "k": Int(5, low=1),
                                                 "sigma": Real(1.0, low=0, low_open=True),
                                                 "strategies": Kind(("fifo",), extra=((BAD_TEXT,), BAD_TEXT, ()))},
         edge=("n_clients", "rounds", "batch_size", "k0", "lam", "k")),
    Case(f"{M}.experiments.system_heterogeneity", {**SMALL, "delta_cs": Kind((0.0, 0.1), extra=((-0.1,), (0.6,),
                                                                                             (NAN,), ())),
                                                   "new_fraction": Real(0.5, low=0, high=1, low_open=True,
                                                                        high_open=True),
                                                   "lam": Real(None, low=0, high=1, optional=True),
                                                   "k": Int(10, low=1), "sigma": Real(1.0, low=0, low_open=True),
                                                   "features": Obj(None, optional=True, extra=(w.clients(),))}),
    Case(f"{M}.algorithms.param_count", {"model": Obj(fresh(mlp), extra=(w.solver(),))}),
    Case(f"{M}.algorithms.cost_table", {"method": Choice("fedavg"), "model": Obj(fresh(mlp), extra=(w.solver(),)),
                                         "n_train": Arr([3, 4], nonneg=True, integer=True, nonempty=False),
                                         "n_components": Int(3, low=1)}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_accuracy_surface", {"capacities": Arr((0.5, 1.0), prob=True, link=True,
                                                                also=("accuracy",)),
                                              "lambdas": Arr(GRID, prob=True, link=True, also=("accuracy",)),
                                              "accuracy": Arr(np.full((2, 3), 0.5), prob=True, finite=False,
                                                              also=("capacities", "lambdas")),
                                              "marker": Kind(None, extra=((NAN, 0.5), (0.5,), BAD_TEXT)), "ax": AX}),
    Case(f"{M}.plots.plot_lambda_curves", {"lambdas": Arr(GRID, prob=True, link=True, also=("curves",)),
                                           "curves": Obj({"a": [0.5, 0.6, 0.7]},
                                                         extra=({}, {"a": [0.5]}, {"a": [2.0, 1, 1]}),
                                                         also=("lambdas",)), "ax": AX}),
    Case(f"{M}.plots.plot_lambda_opt", {"sizes": Arr([10, 20], nonneg=True, link=True, also=("lambda_opt",)),
                                        "lambda_opt": Arr([0.5, 0.7], prob=True, link=True, also=("sizes",)),
                                        "ax": AX}),
    Case(f"{M}.plots.plot_sensitivity", {"k_values": Arr([1, 10], positive=True, link=True, also=("best_by_k",)),
                                         "best_by_k": Arr([0.5, 0.6], prob=True, link=True, also=("k_values",)),
                                         "sigma_values": Arr([0.1, 1.0], positive=True, link=True,
                                                             also=("best_by_sigma",)),
                                         "best_by_sigma": Arr([0.5, 0.6], prob=True, link=True,
                                                              also=("sigma_values",)),
                                         "k_span": Kind((7, 14), extra=((14, 7), (0, 1), BAD_TEXT)),
                                         "sigma_span": Kind((0.1, 100.0), extra=((NAN, 1.0), (-1.0, 1.0))),
                                         "axes": Kind(None, extra=(BAD_TEXT, 3))}),
    Case(f"{M}.plots.plot_quality", {"global_acc": Arr([0.5, 0.6], prob=True, link=True, also=("knn_acc",)),
                                     "knn_acc": Obj({5: [0.6, 0.7]}, extra=({}, {5: [0.5]}, {5: [NAN, 1]}),
                                                    also=("global_acc",)), "ax": AX}),
    Case(f"{M}.plots.plot_shift", {"steps": Arr([0, 1, 2], nonneg=True, link=True, also=("accuracy",)),
                                   "accuracy": Obj({"fifo": [0.5, 0.6, 0.7]}, extra=({}, {"fifo": [0.5]}),
                                                   also=("steps",)),
                                   "k0": Int(1, low=0), "baseline": Real(None, optional=True, low=0, high=1),
                                   "ax": AX}),
    Case(f"{M}.plots.plot_prediction", {"p_knn": Arr(proba(1)[0], simplex=True, also=("p_global",)),
                                        "p_global": Arr(proba(1, seed=1)[0], simplex=True, also=("p_knn",)),
                                        "lam": Real(0.5, low=0, high=1),
                                        "true_label": Int(None, optional=True, low=0, high=2), "ax": AX}),
    Case(f"{M}.plots.plot_bound", {"L_star": Real(0.1, low=0), "disc": Real(0.2, low=0),
                                   "n": Real(1000.0, low=2, low_open=True), "p": Real(3.0, low=1),
                                   "d_H": Real(2.0, low=1), "gamma1": Real(1.0, low=0, low_open=True),
                                   "gamma2": Real(1.0, low=0, low_open=True),
                                   "n_t_values": Kind((10, 100), extra=((0,), (NAN,), BAD_TEXT, ())),
                                   "lambdas": Arr(None, optional=True, extra=(np.array([1.5]),)),
                                   "n_t_range": Kind(None, extra=((10,), (0, 10), BAD_TEXT)),
                                   "axes": Kind(None, extra=(BAD_TEXT, 3))}),
    # ---------------------------------------------------------------- published numbers and claims
    Case(f"{M}.published.smallest_gain", {"table": Choice("3.5", extra=("3.7",)), "base": Choice("FedAvg",
                                                                                           extra=("kNN-Per",)),
                                          "column": Int(0, low=0, high=1)}, edge=("column",)),
    Case(f"{M}.claims.chapter_claims", {
        "results": Obj(fresh(claims_results), extra=({}, [1], {**claims_results(), "main_runs": []},
                                                     {k: v for k, v in claims_results().items() if k != "shift"})),
        "scale": Choice("smoke", extra=("paper",))}),
    # ---------------------------------------------------------------- paper mode (real data, §3.6.3)
    Case(f"{M}.real_data.run_setting", {
        "name": Kind("femnist", extra=(3, None)),
        "setting": Obj(fresh(lambda: __import__("dataclasses").asdict(real_setting())),
                       extra=({"nope": 1}, {"dataset": "cifar10"}, [1])),
        "seed": Int(0, low=0)}),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, optional=True, low=1),
                                      "datasets": Kind(("femnist",), extra=((BAD_TEXT,), [], ("emnist",), 3)),
                                      "settings": Obj(fresh(lambda: {"femnist": real_setting()}), optional=True,
                                                      extra=({"x": 3}, [1]))}),
    Case(f"{M}.claims.paper_claims", {"results": Obj(None, optional=True,
                                                        extra=({"cifar10": 3}, {"cifar10": {"mean": 1}}, [1]))}),
    Case(f"{M}.real_data.expected_seconds", {"n_clients": Int(1, optional=True, low=1),  # the edge, the fastest
                                             "settings": Obj(fresh(lambda: {"femnist": real_setting()}), optional=True,
                                                               extra=({"x": 3}, [1]))}),
]
