"""Robustness cases of the Markovian-data chapter (notebook 09): chains, streams, algorithms, bounds, claims."""
from __future__ import annotations

import functools

import numpy as np

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Flag, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.markovian"
N_CLIENTS, N_ROUNDS, N_LOCAL = 2, 3, 2
FLIP = np.array([[0.8, 0.2], [0.2, 0.8]])
CONSTANTS = {"delta0": 1.0, "sigma2": 1.0, "smooth_L": 2.0, "het_theta2": 0.5, "het_delta2": 1.5}


@functools.cache
def problem():
    from fedlab.markovian.data import make_markov_regression

    return make_markov_regression(N_CLIENTS, dim=3, rng=0)


@functools.cache
def states():
    from fedlab.markovian.data import two_state_streams

    return two_state_streams(0.2, n_clients=N_CLIENTS, n_rounds=N_ROUNDS, n_local=N_LOCAL, rng=0)


@functools.cache
def streams():
    from fedlab.markovian.data import markov_streams

    return markov_streams(problem(), states())


@functools.cache
def streaming_history():
    from fedlab.markovian.algorithms import run_streaming_fl

    return run_streaming_fl(problem(), states(), algorithms=("minibatch",))["minibatch"]


def history_kind(**kw):
    return Obj(streaming_history(), extra=(w.history(),), **kw)


def streams_kind(**kw):
    return Obj(fresh(streams), extra=(w.fed(),), **kw)


RATE = dict(positive=True, nonempty=False, extra=(np.ones((2, 2)),))
"""A step size: a positive number or one per row."""
COMMON = {"n_rounds": Int(10, low=1), "mixing_time": Real(2.0, low=0, low_open=True), "sigma2": Real(1.0, low=0),
          "n_clients": Int(2, low=1), "n_local": Int(4, low=1), "tv_sum": Real(0.0, low=0)}
COMPLEXITY = {"eps": Real(0.1, low=0, low_open=True), "smooth_L": Real(1.0, low=0, low_open=True),
              "delta0": Real(1.0, low=0), "sigma2": Real(1.0, low=0), "mixing_time": Real(2.0, low=0, low_open=True),
              "n_clients": Int(2, low=1), "stationary": Flag(True)}

CASES = [
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.flip_matrix", {"flip_prob": Real(0.2, low=0, high=1),
                                   "back_prob": Real(None, low=0, high=1, optional=True)},
         edge=("flip_prob", "back_prob")),
    Case(f"{M}.data.state_marginals", {"P": Arr(FLIP, stochastic=True, also=("init",)),
                                       "init": Kind("stationary", extra=(BAD_TEXT, 5, -1, 1.5, np.array([0.5, 0.6]),
                                                                         np.array([1.0]))),
                                       "n_steps": Int(3, low=1)}),
    Case(f"{M}.data.distance_to_stationarity", {"P": Arr(FLIP, stochastic=True), "t_max": Int(3, low=0)}),
    Case(f"{M}.data.mixing_time", {"P": Arr(FLIP, stochastic=True), "eps": Real(0.25, low=0, high=2, low_open=True,
                                                                               high_open=True),
                                   "t_max": Int(100, low=1)}),
    Case(f"{M}.data.flip_prob_from_mixing_time", {"mixing_time": Arr((2.0, 10.0), nonempty=False, extra=(0.5,)),
                                                  "mapping": Choice("inverse")}),
    Case(f"{M}.data.two_state_streams", {"flip_prob": Arr(0.2, prob=True, nonempty=False, extra=(0.0, 1.0,
                                                                                            np.full(3, 0.2)),
                                                          also=("n_clients",)),
                                         "n_clients": Int(N_CLIENTS, low=1), "n_rounds": Int(N_ROUNDS, low=1),
                                         "n_local": Int(N_LOCAL, low=1), "mode": Choice("markov"),
                                         "start": Choice("state0"), "rng": Rng(0)},
         edge=("n_clients", "n_rounds", "n_local")),
    Case(f"{M}.data.stream_marginals", {"flip_prob": Arr(0.2, prob=True, nonempty=False, extra=(0.0, 1.0)),
                                        "n_steps": Int(3, low=1), "start": Choice("state0")}),
    Case(f"{M}.data.MarkovRegression", {
        "features": Arr(fresh(lambda: problem().features), ndim=3, also=("optima", "stat_dist")),
        "optima": Arr(fresh(lambda: problem().optima), link=True, also=("features",)),
        "stat_dist": Arr(fresh(lambda: problem().stat_dist), simplex=True, also=("features",)),
        "noise_high": Real(0.01, low=0), "reg_lambda": Real(0.01, low=0)}),
    Case(f"{M}.data.MarkovRegression.constants", {"w0": Arr(None, optional=True, extra=(np.zeros(2),
                                                                                        np.full(3, NAN))),
                                                  "radius": Real(None, low=0, optional=True)},
         fn=lambda **kw: problem().constants(**kw)),
    Case(f"{M}.data.make_markov_regression", {"n_clients": Int(2, low=1), "dim": Int(3, low=1),
                                              "optima": Choice("per_client"), "noise_high": Real(0.01, low=0),
                                              "reg_lambda": Real(0.01, low=0), "rng": Rng(0)},
         edge=("n_clients", "dim", "noise_high", "reg_lambda")),
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.data.MarkovStreams", {
        "features": Arr(fresh(lambda: streams().features), ndim=4, also=("targets", "stat_dist", "states")),
        "targets": Arr(fresh(lambda: streams().targets), ndim=3, link=True, also=("features",)),
        "stat_dist": Arr(fresh(lambda: streams().stat_dist), simplex=True, link=True, also=("features",)),
        "states": Arr(fresh(lambda: streams().states), integer=True, nonneg=True, high=2, ndim=4,
                      also=("features", "copies")),
        "noise_high": Real(0.01, low=0), "reg_lambda": Real(0.01, low=0),
        "copies": Int(1, low=1, also=("features", "states"))}, edge=("noise_high", "reg_lambda")),
    Case(f"{M}.data.markov_streams", {"problem": Obj(fresh(problem), extra=([], [w.fed()]), also=("states",)),
                                            "states": Arr(fresh(states), integer=True, nonneg=True, high=2,
                                                          also=("problem",))}),
    Case(f"{M}.algorithms.StreamingMinibatchSGD", {"lr_global": Arr(0.01, **RATE),
                                                   "w0": Arr(None, optional=True, extra=(np.full(3, NAN),))}),
    Case(f"{M}.algorithms.StreamingMinibatchSGD.init", {"data": streams_kind(also=("w0", "lr_global")),
                                                        "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.markovian.algorithms", fromlist=["x"]).StreamingMinibatchSGD(
             0.01).init(**kw)),
    Case(f"{M}.algorithms.StreamingLocalSGDM", {"lr_local": Arr(0.001, **RATE),
                                                "lr_global": Arr(None, optional=True, extra=(0.0, NAN, -1.0)),
                                                "momentum_beta": Arr(0.5, prob=True, positive=True, nonempty=False),
                                                "w0": Arr(None, optional=True, extra=(np.full(3, NAN),)),
                                                "v0": Arr(None, optional=True, extra=(np.full(3, NAN),))}),
    Case(f"{M}.algorithms.streaming_algorithm", {"name": Choice("minibatch"), "lr_global": Arr(0.01, **RATE),
                                                 "lr_local": Arr(0.001, **RATE),
                                                 "momentum_beta": Arr(0.1, prob=True, positive=True,
                                                                      nonempty=False),
                                                 "w0": Arr(None, optional=True, extra=(np.full(3, NAN),))}),
    Case(f"{M}.algorithms.run_streaming_fl", {
        "problem": Obj(fresh(problem), extra=([],), also=("states",)),
        "states": Arr(fresh(states), integer=True, nonneg=True, high=2, also=("problem",)),
        "algorithms": Kind(("minibatch",), extra=((BAD_TEXT,), (), BAD_TEXT)),
        "lr_global": Arr(0.01, **RATE), "lr_local": Arr(0.001, **RATE),
        "momentum_beta": Arr(0.1, prob=True, positive=True, nonempty=False),
        "w0": Arr(None, optional=True, extra=(np.full(3, NAN), np.zeros(5))), "seed": Int(0, low=0),
        "eval_every": Int(1, low=1)}),
    *[Case(f"{M}.algorithms.{name}", {"history": history_kind(also=("metric",)),
                                      "metric": Kind("grad_norm2", extra=(BAD_TEXT, 3), also=("history",)), **extra})
      for name, extra in (("replica_curves", {}), ("average", {}),
                          ("floor", {"fraction": Real(0.2, low=0, high=1, low_open=True)}))],
    # ---------------------------------------------------------------- bounds
    *[Case(f"{M}.bounds.{name}", {"p": Arr(np.array([0.5, 0.5]), simplex=True, also=("q",)),
                                  "q": Arr(np.array([0.2, 0.8]), simplex=True, link=True, also=("p",))})
      for name in ("tv_l1", "tv_sup")],
    Case(f"{M}.bounds.two_state_tv", {"flip_prob": Arr(0.2, prob=True, nonempty=False, extra=(0.0, 1.0)),
                                      "t": Arr(np.arange(3.0), nonneg=True, nonempty=False)}),
    Case(f"{M}.bounds.two_state_mixing_time", {"flip_prob": Arr(0.2, prob=True, nonempty=False, extra=(0.0, 1.0)),
                                               "eps": Real(0.25, low=0, high=2, low_open=True, high_open=True)}),
    Case(f"{M}.bounds.product_two_state_tv", {"n_clients": Int(2, low=1), "flip_prob": Real(0.2, low=0, high=1,
                                                                                            low_open=True,
                                                                                            high_open=True),
                                              "t": Arr(np.arange(3.0), nonneg=True, nonempty=False)}),
    Case(f"{M}.bounds.product_two_state_mixing_time", {"n_clients": Int(2, low=1),
                                                       "flip_prob": Real(0.2, low=0, high=1, low_open=True,
                                                                         high_open=True),
                                                       "eps": Real(0.25, low=0, high=2, low_open=True,
                                                                   high_open=True),
                                                       "t_max": Int(1000, low=1)}),
    Case(f"{M}.bounds.product_mixing_time_bound", {"mixing_times": Arr((2.0, 3.0), nonneg=True, ndim=1,
                                                                       extra=(np.array([0.5]),))}),
    Case(f"{M}.bounds.tv_series_geometric", {"mixing_time": Real(2.0, low=0, low_open=True),
                                             "n_local": Int(4, low=1), "n_rounds": Int(10, low=1)}),
    Case(f"{M}.bounds.lemma_c2", {"mixing_time": Real(2.0, low=0, low_open=True, also=("n_local",)),
                                  "n_local": Int(4, low=1, also=("mixing_time",))}),
    Case(f"{M}.bounds.minibatch_bound", {"delta0": Real(1.0, low=0), "lr_global": Real(0.01, low=0, low_open=True,
                                                                                      also=("smooth_L",)),
                                         **COMMON, "smooth_L": Real(None, low=0, low_open=True, optional=True)},
         edge=("delta0", "n_rounds", "sigma2", "n_clients", "n_local")),
    Case(f"{M}.bounds.local_sgd_bound", {"delta0": Real(1.0, low=0), "lr_local": Real(0.001, low=0, low_open=True),
                                         **COMMON, "smooth_L": Real(1.0, low=0, low_open=True),
                                         "het_theta2": Real(0.5, low=0), "het_delta2": Real(1.5, low=1),
                                         "check_step": Flag(True)},
         edge=("delta0", "n_rounds", "sigma2", "n_clients", "n_local", "het_theta2", "het_delta2")),
    Case(f"{M}.bounds.local_sgdm_bound", {"delta0": Real(1.0, low=0), "smooth_L": Real(1.0, low=0, low_open=True),
                                          "momentum_beta": Real(0.5, low=0, high=1, low_open=True),
                                          "lr_global": Real(0.01, low=0, low_open=True), **COMMON},
         edge=("delta0", "momentum_beta", "n_rounds", "sigma2", "n_clients", "n_local")),
    Case(f"{M}.bounds.minibatch_complexity", dict(COMPLEXITY)),
    Case(f"{M}.bounds.local_sgd_complexity", {**COMPLEXITY, "het_theta2": Real(0.5, low=0),
                                              "het_delta2": Real(1.5, low=1)}),
    Case(f"{M}.bounds.local_sgdm_complexity", {**COMPLEXITY, "momentum_beta": Real(0.5, low=0, high=1,
                                                                                  low_open=True)}),
    Case(f"{M}.bounds.table1_complexity", {
        "algorithm": Choice("minibatch"), "eps": Arr((0.1, 0.01), positive=True, nonempty=False),
        "smooth_L": Real(1.0, low=0, low_open=True), "delta0": Real(1.0, low=0), "sigma2": Real(1.0, low=0),
        "mixing_time": Arr(1.0, positive=True, nonempty=False), "n_clients": Arr(1, positive=True, nonempty=False,
                                                                                  extra=(0.5,)),
        "momentum_beta": Real(1.0, low=0, high=1, low_open=True), "het_theta2": Real(0.0, low=0),
        "het_delta2": Real(1.0, low=1), "stationary": Flag(True)}),
    Case(f"{M}.bounds.step_conditions_local_sgdm", {
        "lr_local": Real(0.001, low=0, low_open=True), "n_local": Int(4, low=1),
        "smooth_L": Real(1.0, low=0, low_open=True), "momentum_beta": Real(0.5, low=0, high=1, low_open=True),
        "n_clients": Int(2, low=1), "delta0": Real(1.0, low=0), "n_rounds": Int(10, low=1), "G0": Real(1.0, low=0),
        "lr_global": Real(0.01, low=0, low_open=True)}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.experiments.markov_experiment", {
        "n_clients": Int(2, low=1), "n_local": Int(2, low=1), "n_rounds": Int(3, low=1),
        "mixing_times": Arr((2.0,), ndim=1, extra=(np.array([0.5]),)), "mapping": Choice("inverse"),
        "modes": Kind(("markov",), extra=((BAD_TEXT,), (), BAD_TEXT)), "start": Choice("state0"),
        "algorithms": Kind(("minibatch",), extra=((BAD_TEXT,), (), BAD_TEXT)),
        "lr_global": Real(0.01, low=0, low_open=True), "lr_local": Real(0.001, low=0, low_open=True),
        "momentum_beta": Real(0.1, low=0, high=1, low_open=True), "reg_lambda": Real(0.01, low=0),
        "dim": Int(3, low=1), "n_replicas": Int(1, low=1), "init": Choice("zeros"),
        "tail": Real(0.8, low=0, high=1, low_open=True), "every": Int(1, low=1), "seed": Int(0, low=0)},
         edge=("n_clients", "n_local", "n_rounds", "momentum_beta", "reg_lambda", "dim", "tail")),
    Case(f"{M}.experiments.markov_problems", {"seed": Int(0, low=0), "n_clients": Int(2, low=1),
                                              "n_replicas": Int(1, low=1), "dim": Int(3, low=1),
                                              "reg_lambda": Real(0.01, low=0), "optima": Choice("per_client")}),
    Case("fedlab.tables.loglog_slope", {"x": Arr((1.0, 2.0, 4.0), positive=True, ndim=1, also=("y",)),
                                           "y": Arr((1.0, 4.0, 16.0), positive=True, link=True, also=("x",))}),
    Case(f"{M}.experiments.explicit_bounds", {
        "constants": Obj(CONSTANTS, extra=({}, [1], {**CONSTANTS, "sigma2": NAN}, {**CONSTANTS, "smooth_L": 0.0})),
        "n_clients": Int(2, low=1), "n_local": Int(4, low=1), "n_rounds": Int(10, low=1),
        "mixing_time": Real(2.0, low=0, low_open=True), "tv_sum": Real(0.0, low=0),
        "lr_global": Real(0.01, low=0, low_open=True), "lr_local": Real(0.001, low=0, low_open=True),
        "momentum_beta": Real(0.1, low=0, high=1, low_open=True)},
         edge=("n_clients", "n_local", "n_rounds", "momentum_beta")),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_log_curves", {"x": Arr(np.arange(3.0), ndim=1, also=("curves",)),
                                        "curves": Obj({"a": [1.0, 0.5, 0.25]},
                                                      extra=({}, [1], {"a": [1.0]}, {"a": [NAN, 1.0, 1.0]},
                                                             {"a": BAD_TEXT}), also=("x",)),
                                        "ax": AX, "logy": Flag(True),
                                        "styles": Kind(None, extra=(BAD_TEXT, [1], {"a": 3}))}),
    Case(f"{M}.plots.plot_loglog", {"x": Arr((1.0, 2.0, 4.0), positive=True, ndim=1, also=("ys",)),
                                    "ys": Obj({"a": [1.0, 0.5, 0.25]}, extra=({}, [1], {"a": [1.0]},
                                                                              {"a": [-1.0, 1.0, 1.0]},
                                                                              {"a": [NAN, 1.0, 1.0]}),
                                              also=("x",)),
                                    "ax": AX, "fit": Flag(True),
                                    "styles": Kind(None, extra=(BAD_TEXT, [1], {"a": 3}))}),
]


@functools.cache
def batch_result():
    from fedlab.markovian.experiments import markov_experiment

    return markov_experiment(n_clients=2, n_local=2, n_rounds=3, mixing_times=[2.0], modes=["markov", "independent"],
                             algorithms=["minibatch"], dim=3, n_replicas=1, every=1)


RESULT_BAD = ({}, [1], {"keys": []})
"""Objects that are not markov_experiment results."""

CASES += [
    Case(f"{M}.experiments.batch_dependence_ratio", {
        "result": Obj(fresh(batch_result), extra=RESULT_BAD + ({**batch_result(), "keys": ["2|markov"]},))}),
    Case(f"{M}.experiments.final_values", {"result": Obj(fresh(batch_result), extra=RESULT_BAD),
                                           "fraction": Real(0.5, low=0, high=1, low_open=True)}),
    Case(f"{M}.plots.plot_curve_panels", {
        "x": Arr(np.arange(3.0), ndim=1, also=("panels", "curves")),
        "panels": Obj({"p": {"a": [1.0, 0.5, 0.25]}}, extra=({}, [1], {"p": {"a": [1.0]}}, {"p": 3}, {"p": {}}),
                      also=("x", "curves")),
        "ncols": Int(2, low=1), "styles": Kind(None, extra=(BAD_TEXT, [1], {"a": 3}))}),
    Case(f"{M}.plots.plot_batch_crossover", {
        "k_over_tau": Arr(np.ones((2, 3)), positive=True, ndim=2, also=("ratios", "labels")),
        "ratios": Obj({"a": np.ones((2, 3))}, extra=({}, [1], {"a": np.ones((2, 2))}, {"a": -np.ones((2, 3))},
                                                    {"a": np.full((2, 3), NAN)}), also=("k_over_tau",)),
        "labels": Kind(None, extra=(["x"], BAD_TEXT)),
        "band": Kind((0.5, 2.0), extra=((2.0, 0.5), (0.0, 1.0), (NAN, 1.0), BAD_TEXT, (1.0,))),
        "ax": Kind(None, extra=(BAD_TEXT, 3))}),
]



def _records():
    from fedlab.markovian.experiments import markov_experiment

    return [{"config": {"n_clients": 2}, "seed": 0, "result": markov_experiment(
        n_clients=2, n_local=2, n_rounds=3, mixing_times=[2.0], modes=["markov"], algorithms=["minibatch"], dim=3,
        n_replicas=1, every=1)}]


def _results():
    from fedlab.markovian.claims import example_results

    return example_results()


CASES += [
    Case(f"{M}.experiments.replica_ratios", {
        "result": Obj(fresh(batch_result), extra=RESULT_BAD + ({**batch_result(), "keys": ["2|markov"]},)),
        "mixing_time": Real(2.0, low=1, extra=(3.0,))}),
    Case(f"{M}.experiments.seed_end_values", {
        "records": Obj(fresh(_records), extra=([], {}, [3], [{"config": {}, "seed": 0, "result": {}}])),
        "fraction": Real(1 / 6, low=0, high=1, low_open=True)}),
    Case(f"{M}.experiments.replica_exponents", {
        "x": Arr((1.0, 2.0, 4.0), positive=True, ndim=1, also=("floors",)),
        "floors": Arr(np.array([[1.0, 0.5, 0.25], [1.0, 1.0, 1.0]]), positive=True, ndim=2, also=("x",),
                      extra=(np.ones((2, 2)), np.ones((0, 3))))}),
    Case(f"{M}.claims.chapter_claims", {
        "results": Obj(fresh(_results), extra=({}, [1], {**_results(), "fig7": {}},
                                                {**_results(), "exponents": {}},
                                                {**_results(), "product": {**_results()["product"],
                                                                           "n_clients": [1, 3, 4]}})),
        "scale": Choice("smoke")}),
    Case(f"{M}.claims.example_results", {"holds": Flag(True), "n_seeds": Int(3, low=2)}, edge=("n_seeds",)),
]
