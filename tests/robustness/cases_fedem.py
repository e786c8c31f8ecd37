"""Robustness cases of the FedEM chapter (notebook 03): mixture data, experiments, claims and plots."""
from __future__ import annotations

import functools

import numpy as np
import torch

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.fedem"
SMALL = {"n_clients": 4, "n_components": 2, "dim": 3, "n_min": 5, "n_max": 8, "n_test": 4}
TRAIN = {"rounds": Int(1, low=0), "local_steps": Int(1, low=1), "batch_size": Int(4, low=1),
         "lr": Real(0.1, low=0, low_open=True)}
"""The training options of the experiments (``**training``), small."""


@functools.cache
def mixture():
    from fedlab.fedem.data import make_synthetic_mixture

    return make_synthetic_mixture(rng=0, **SMALL)


def data_kwargs_kind():
    return Obj(dict(SMALL), optional=True, extra=([], {"n_clients": -1}, {"nope": 1}), also=("n_clients",))


@functools.cache
def gmm_run():
    from fedlab.gmm import federated_gmm_em

    x = np.random.default_rng(0).normal(size=(20, 2))
    states, history = federated_gmm_em(x, 2, n_iter=2)
    return x, states, history


def mixture_kind(**kw):
    return Obj(fresh(mixture), extra=(w.fed(),), **kw)



def claims_results():
    """A small valid ``results`` mapping of :func:`fedlab.fedem.claims.chapter_claims` (two seeds)."""
    two = {"average": [0.7, 0.72], "bottom_decile": [0.6, 0.62]}
    table = {m: dict(two) for m in ("local", "fedavg", "fedprox", "fedavg+", "clustered", "pfedme", "fedem")}
    bug = {**table, "clustered": {**two, "n_clusters": [1, 1]}}
    acc = {"average": 0.7}
    return {"setting": {"n_clients": 4, "dim": 3, "rounds": 1, "seed": 0},
            "toy": {"Local": acc, "FedAvg": acc, "FedEM (M=2)": acc},
            "em": {"centralized_steps": [0.1], "federated_monotone": True},
            "synthetic": table, "synthetic_bug": bug, "digits": {"fedavg": two, "fedem": two},
            "oracle": {"synthetic": 0.9, "synthetic_bug": 0.8}, "constant_tail": 0.2,
            "effect_of_m": {"average": [[0.6, 0.7, 0.7, 0.7, 0.7]] * 2}, "m1_gap": 0.0,
            "unseen": {"FedAvg": acc, "FedAvg+": acc, "FedEM (1 EM step)": acc, "FedEM (50 EM steps)": acc,
                       "pi_entropy": {"seen": 0.3, "unseen": {1: 0.9, 50: 0.5}}},
            "decentralized": {"FedEM": acc, "D-FedEM (FMMC)": {"average": 0.7, "consensus": [1.0, 0.5]},
                              "slem": {"fmmc": 0.2, "metropolis": 0.3}},
            "clustered": {"tol_2": [1.6, 0.8], "average": [[0.7, 0.72]] * 2, "n_clusters": [[1, 2]] * 2,
                          "fedem": [0.7, 0.72]},
            "sampling": {"rates": [0.2, 1.0], "average": {"fedavg+": [[0.6, 0.7]] * 2, "fedem": [[0.65, 0.7]] * 2}}}


def real_setting():
    """The FEMNIST setting shrunk to the robustness files, on a small model."""
    from fedlab.fedem.real_data import SETTINGS

    return w.tiny(SETTINGS["femnist"], model="mnist_logistic")


CASES = [
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.MixtureDataset", {
        "train": Obj(fresh(lambda: mixture().train), extra=(w.client_arrays(),), also=("test", "pi")),
        "test": Obj(fresh(lambda: mixture().test), extra=(w.client_arrays(),), also=("train",)),
        "pi": Arr(fresh(lambda: mixture().pi), simplex=True, link=True, also=("train",)),
        "z_train": Obj(fresh(lambda: mixture().z_train), extra=([],), also=("train",)),
        "z_test": Obj(fresh(lambda: mixture().z_test), extra=([],), also=("test",)),
        "meta": Obj({}, extra=([],))}),
    Case(f"{M}.data.make_synthetic_mixture", {"n_clients": Int(4, low=1), "n_components": Int(2, low=1),
                                              "dim": Int(3, low=1), "alpha": Real(0.4, low=0, low_open=True),
                                              "noise_level": Real(0.1, low=0), "n_min": Int(5, low=1),
                                              "n_max": Int(8, low=5), "n_test": Int(4, low=0),
                                              "label_mode": Choice("round"), "rng": Rng(0)},
         edge=("n_clients", "n_components", "dim", "noise_level", "n_min", "n_max", "n_test")),
    Case(f"{M}.data.make_digits_mixture", {"n_clients": Int(4, low=1), "n_components": Int(2, low=1),
                                           "alpha": Real(0.4, low=0, low_open=True), "mode": Choice("permutation"),
                                           "test_fraction": Real(0.25, low=0, high=1, high_open=True),
                                           "min_size": Int(10, low=1), "max_tries": Int(5, low=1), "rng": Rng(0)},
         edge=("n_clients", "n_components", "test_fraction", "min_size", "max_tries")),
    Case(f"{M}.data.mixture_client_sizes", {"n_clients": Int(4, low=1), "n_min": Int(5, low=1),
                                            "n_max": Int(8, low=5), "rng": Rng(0)},
         edge=("n_clients", "n_min", "n_max")),
    Case(f"{M}.data.official_buggy_labels", {
        "labels_by_component": Obj([np.array([1, 0]), np.array([1])], extra=([np.array([0.5])], [BAD_TEXT]),
                                   also=("counts",)),
        "counts": Arr([2, 1], integer=True, nonneg=True, link=True, also=("labels_by_component", "n")),
        "n": Int(3, low=0, also=("counts",), extra=(1,))}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.data.make_dataset", {"dataset": Choice("synthetic"), "seed": Int(0, low=0),
                                    **{k: Kind(v) for k, v in SMALL.items()}}),
    Case(f"{M}.experiments.model_for", {"data": mixture_kind()}),
    Case(f"{M}.experiments.build_method", {"name": Choice("fedavg", also=("method",)),
                                           "model": Obj(w.model(), extra=(w.solver(),)),
                                           "solver": Obj(w.solver(), extra=(w.model(),))}),
    Case(f"{M}.experiments.train_method", {"name": Choice("fedavg", also=("method",)),
                                           "data": Obj(fresh(w.fed), extra=(w.clients(),)),
                                           "model": Obj(w.model(), extra=(w.solver(),)), "seed": Int(0, low=0),
                                           "eval_every": Int(None, low=1, optional=True), **TRAIN},
         edge=("eval_every", "rounds", "batch_size")),
    Case(f"{M}.experiments.erdos_renyi_mixing", {"n": Int(4, low=1), "p": Real(0.5, low=0, high=1, low_open=True),
                                                 "seed": Int(0, low=0), "weights": Choice("metropolis"),
                                                 "max_tries": Int(100, low=1)}, edge=("n", "p")),
    Case(f"{M}.experiments.component_cosines", {
        "params": Obj(fresh(lambda: {"weight": torch.ones(2, 2, 3).cumsum(0)}), extra=({}, {"weight": torch.ones(3)}),
                      also=("theta",)),
        "theta": Arr(np.eye(2, 3), ndim=2, also=("params",))}),
    Case(f"{M}.experiments.match_components", {"pi_learned": Arr(np.full((3, 2), 0.5), simplex=True, link=True,
                                                                 also=("pi_true",)),
                                               "pi_true": Arr(np.full((3, 2), 0.5), simplex=True, link=True,
                                                              also=("pi_learned",))}),
    Case(f"{M}.experiments.oracle_accuracy", {"data": mixture_kind()}),
    *[Case(f"{M}.experiments.{name}", {"dataset": Choice("synthetic"), "seed": Int(0, low=0),
                                       "data_kwargs": data_kwargs_kind(), **TRAIN, **extra},
           edge=("rounds", "batch_size"))
      for name, extra in [
          ("compare_methods", {"methods": Kind(("local",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                               "method_kwargs": Obj(None, optional=True, extra=({"local": 3},)),
                               "eval_every": Int(None, low=1, optional=True)}),
          ("effect_of_m", {"m_values": Kind((1,), extra=((0,), (1.5,), ())),
                           "eval_every": Int(None, low=1, optional=True)}),
          ("unseen_clients", {"train_fraction": Real(0.5, low=0, high=1, low_open=True, high_open=True),
                              "n_iter": Kind((1,), extra=((0,), (1.5,), ()))}),
          ("sampling_rate_effect", {"rates": Kind((1.0,), extra=((0.0,), (1.5,), (NAN,), (), BAD_TEXT)),
                                    "methods": Kind(("fedavg",), extra=((BAD_TEXT,), BAD_TEXT, ())),
                                    "eval_every": Int(None, low=1, optional=True)}),
          ("clustered_tolerances", {"tol_2_values": Kind((1.0,), extra=((-1.0,), (NAN,), (), BAD_TEXT)),
                                    "tol_1": Real(0.4, low=0), "eval_every": Int(None, low=1, optional=True)}),
          ("decentralized_vs_server", {"p": Real(0.5, low=0, high=1, low_open=True),
                                       "train_with": Kind(("metropolis",), extra=((BAD_TEXT,), BAD_TEXT)),
                                       "server": Kind(False, extra=(BAD_TEXT,)),
                                       "eval_every": Int(None, low=1, optional=True)})]],
    Case(f"{M}.experiments.cluster_recovery", {"n_components": Int(2, low=1), "seed": Int(0, low=0),
                                               "data_kwargs": data_kwargs_kind(), **TRAIN}),
    Case(f"{M}.experiments.opposite_labels_demo", {"n_clients": Int(2, low=2), "n_samples": Int(4, low=2),
                                                   "dim": Int(2, low=1), "seed": Int(0, low=0), **TRAIN},
         edge=("n_samples", "dim", "rounds", "batch_size")),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_gmm_em", {"x": Arr(fresh(lambda: gmm_run()[0]), ndim=2),
                                    "states": Obj(fresh(lambda: gmm_run()[1]), extra=([],), also=("history",)),
                                    "history": Obj(fresh(lambda: gmm_run()[2]), extra=(w.history(),),
                                                   also=("states",)),
                                    "iteration": Int(1, low=0, high=2), "axes": Kind(None, extra=(BAD_TEXT, 3))}),
    Case("fedlab.plots.plot_method_bars", {"results": Obj({"fedem": {"average": [0.8, 0.9], "bottom_decile": [0.5, 0.6]}},
                                                        extra=({}, {"fedem": {"average": [NAN]}},
                                                               {"fedem": [0.5]})),
                                         "metrics": Kind(("average",), extra=((BAD_TEXT,), ())), "ax": AX,
                                         "scale": Real(100.0, low=0, low_open=True)}),
    Case(f"{M}.plots.plot_effect_of_m", {"m_values": Arr([1, 2], integer=True, positive=True, link=True,
                                                         also=("average", "bottom_decile")),
                                         "average": Arr([0.5, 0.6], prob=True, also=("m_values",),
                                                        extra=(np.zeros(3),)),
                                         "bottom_decile": Arr([0.4, 0.5], prob=True, also=("m_values",),
                                                              extra=(np.zeros(3),)),
                                         "highlight": Int(None, optional=True, low=1), "ax": AX,
                                         "scale": Real(100.0, low=0, low_open=True)}),
    Case(f"{M}.plots.plot_clustered_tolerance", {
        "tol_2": Arr([1.6, 0.8], nonneg=True, ndim=1),
        "average": Arr([[0.7, 0.8]], also=("tol_2",), extra=(np.zeros((1, 3)),)),
        "n_clusters": Arr([[1, 2]], nonneg=True, also=("tol_2", "average"), extra=(np.zeros((1, 3)),)),
        "references": Obj(None, optional=True, extra=({"FedAvg": NAN}, [1])), "ax": AX,
        "scale": Real(100.0, low=0, low_open=True)}),
    Case(f"{M}.plots.simplex_coordinates", {"pi": Arr(np.full((2, 3), 1 / 3), simplex=True, ndim=2,
                                                      nonempty=False)}),
    Case(f"{M}.plots.plot_simplex", {"pi_true": Arr(np.full((2, 3), 1 / 3), simplex=True, ndim=2),
                                     "pi_learned": Arr(None, optional=True, extra=(np.full((2, 3), 0.5),)),
                                     "ax": AX}),
    # ---------------------------------------------------------------- paper mode (real data, §3.5.6)
    Case(f"{M}.real_data.run_setting", {
        "name": Kind("femnist", extra=(3, None)),
        "setting": Obj(fresh(lambda: __import__("dataclasses").asdict(real_setting())),
                       extra=({"nope": 1}, {"dataset": "cifar10"}, [1])),
        "seed": Int(0, low=0)}),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, optional=True, low=1),
                                      "datasets": Kind(("femnist",), extra=((BAD_TEXT,), [], ("mnist",), 3)),
                                      "settings": Obj(fresh(lambda: {"femnist": real_setting()}), optional=True,
                                                      extra=({"x": 3}, [1]))}),
    # ---------------------------------------------------------------- bounds (Theorems 3.5.3-3.5.4)
    Case(f"{M}.bounds.fedem_max_step", {"L": Real(1.0, low=0, low_open=True), "beta": Real(1.0, low=0),
                                        "local_steps": Int(1, low=1)}, edge=("beta", "local_steps")),
    Case(f"{M}.bounds.mixing_parameter", {"W": Arr(np.full((3, 3), 1 / 3), stochastic=True, nonneg=True,
                                                   extra=(np.array([[0.9, 0.1], [0.2, 0.8]]),))}),
    Case(f"{M}.bounds.dfedem_max_step", {"L": Real(1.0, low=0, low_open=True), "beta": Real(1.0, low=0),
                                         "p": Real(0.5, low=0, high=1, low_open=True), "tau": Int(1, low=1)},
         edge=("beta", "p", "tau")),
    # ---------------------------------------------------------------- claims
    Case(f"{M}.claims.chapter_claims", {
        "results": Obj(fresh(claims_results), extra=({}, [1], {"toy": 3}, {**claims_results(), "m1_gap": "x"},
                                                     {**claims_results(), "digits": {"fedem": {"average": [NAN]}}},
                                                     {**claims_results(), "effect_of_m": {"average": [[0.5]]}})),
        "scale": Choice("smoke")}),
    Case(f"{M}.claims.paper_claims", {"results": Obj(None, optional=True,
                                                     extra=({"cifar10": 3}, {"cifar10": {"mean": 1}}, [1]))}),
    Case(f"{M}.claims.distance_to_paper", {
        "scores": Obj(fresh(lambda: claims_results()["synthetic"]),
                      extra=({}, [1], {"fedem": {"average": [0.5]}}, {**claims_results()["synthetic"],
                                                                        "fedem": {"average": [NAN]}}))}),
    Case(f"{M}.real_data.expected_seconds", {"n_clients": Int(1, optional=True, low=1),  # the edge, the fastest
                                             "settings": Obj(fresh(lambda: {"femnist": real_setting()}), optional=True,
                                                               extra=({"x": 3}, [1]))}),
]
