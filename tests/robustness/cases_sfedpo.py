"""Robustness cases of the SFedPO chapter (notebook 07): states, buffers, oracles, DDS/SAW, bounds, experiments."""
from __future__ import annotations

import functools

import numpy as np
import torch

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Fixed, Flag, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.sfedpo"
N, S = 3, 4
"""Clients and states of the small environment."""
PI = np.array([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]])
ALPHA = np.full((N, S), 0.5)
D = np.array([0.1, 0.5, 0.2, 0.0])
W = np.full(S, 0.25)
Q = np.array([0.3, 0.5, 0.9])
SCORES = np.array([1.0, 2.0, 0.5])
P = np.array([0.2, 0.3, 0.5])
SMALL_ENV = dict(n_clients=N, n_states=S, n_classes=3, concentrations=(0.5, 100.0), seed=0)
SMALL_DATA = dict(n_clients=N, n_states=S, n_classes=3, dim=2, n_rounds=2, n_steps=2, capacity=5,
                  concentrations=(0.5, 100.0), test_per_client=3, test_per_state=3, seed=0)


@functools.cache
def space():
    from fedlab.sfedpo.data import make_state_space

    return make_state_space(S, 3, 2, concentrations=(0.5, 100.0), rng=0)


@functools.cache
def shift():
    from fedlab.sfedpo.data import make_temporal_shift

    return make_temporal_shift(**SMALL_DATA)


@functools.cache
def env():
    from fedlab.sfedpo.experiments import make_bound_environment

    return make_bound_environment(**SMALL_ENV)


@functools.cache
def model():
    from fedlab.models import LinearModel

    return LinearModel(2, 3)


@functools.cache
def explorer():
    from fedlab.sfedpo.experiments import bound_explorer

    return bound_explorer(env(), n_draws=2, n_rounds=5)


@functools.cache
def sweep():
    from fedlab.sfedpo.strategies import theorem2_sweep

    return theorem2_sweep(PI, (0.0, 0.1), n_draws=2, rng=0, q=Q, d=D, w=W)


COMPARE = dict(methods=("sfedpo", "fedavg_buffer"), n_clients=N, n_states=S, n_classes=3, dim=2, n_rounds=2,
               n_steps=2, capacity=5, batch_size=4, eval_every=1, tail=1)


@functools.cache
def compared():
    from fedlab.sfedpo.experiments import compare_methods

    return compare_methods(**COMPARE)


@functools.cache
def summary_row():
    from fedlab.sfedpo.experiments import summarize

    return summarize([{"config": {"scenario": "full"}, "seed": 0, "result": compared()}])[0]


@functools.cache
def ablation_gains_result():
    from fedlab.sfedpo.experiments import ablation_gains

    return ablation_gains(ablation_records(), "alpha_budget")


def ablation_records():
    from fedlab.sfedpo.experiments import compare_methods

    result = compare_methods(**{**COMPARE, "methods": ("sfedpo", "sfedpo_saw")})
    return [{"config": {"alpha_budget": 0.5, "scenario": "partial"}, "seed": 0, "result": result}]


def pi_kind(**kw):
    return Arr(PI, simplex=True, **kw)


def vec(value, **kw):
    return Arr(value, ndim=1, link=True, **kw)


def sfedpo():
    from fedlab.engine import LocalSGD
    from fedlab.sfedpo.algorithms import SFedPO

    return SFedPO(model(), LocalSGD(lr=0.1, local_steps=1, batch_size=4))


STATE_ARGS = {"d": vec(D, nonneg=True, also=("pi", "pi_hat")), "w": vec(W, nonneg=True, also=("pi", "pi_hat"))}
THEORY = {"G": Real(1.0, low=0, low_open=True), "n_steps": Int(2, low=1), "L": Real(1.0, low=0),
          "eta": Real(0.01, low=0), "sigma2": Real(1.0, low=0)}
TUNING = {"a1": Real(0.1), "b1": Real(0.2), "a2": Real(1.0), "b2": Real(0.0), "variant": Choice("eq10")}
STRATEGY = {"q": vec(Q, prob=True, positive=True, also=("pi", "pi_hat", "s")), **STATE_ARGS,
            "alpha_budget": Real(0.5, low=0, high=1, low_open=True), **THEORY, **TUNING}

CASES = [
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.state_discrepancy", {"class_dist": Arr(np.full((S, 3), 1 / 3), simplex=True, ndim=2),
                                         "kind": Choice("kl"), "normalize": Flag(True)}),
    Case(f"{M}.data.StateSpace", {
        "class_dist": Arr(fresh(lambda: space().class_dist), simplex=True, ndim=2, also=("means", "shifts")),
        "means": Arr(fresh(lambda: space().means), ndim=2, link=True, also=("class_dist",)),
        "shifts": Arr(fresh(lambda: space().shifts), ndim=2, link=True, also=("class_dist", "means")),
        "noise": Real(1.0, low=0),
        "cluster": Arr(None, optional=True, extra=(np.array([0, 1]), np.array([-1, 0, 0, 0]))),
        "concentration": Arr(None, optional=True, extra=(np.array([1.0]), np.full(S, -1.0)))}),
    Case(f"{M}.data.StateSpace.sample", {"state": Int(0, low=0, high=S - 1), "size": Int(3, low=0), "rng": Rng(0)},
         fn=lambda **kw: space().sample(**kw)),
    Case(f"{M}.data.make_state_space", {"n_states": Int(S, low=1), "n_classes": Int(3, low=2), "dim": Int(2, low=1),
                                        "concentrations": Arr((0.5, 100.0), positive=True, ndim=1,
                                                              extra=(np.ones(S + 1),), also=("n_states",)),
                                        "sep": Real(1.0, low=0, low_open=True), "feature_shift": Real(0.0, low=0),
                                        "noise": Real(1.0, low=0), "rng": Rng(0)}, edge=("n_classes", "dim", "noise")),
    Case(f"{M}.data.make_state_distributions", {
        "n_clients": Int(N, low=1), "n_states": Int(S, low=1), "scenario": Choice("full"),
        "cluster": Arr(None, optional=True, extra=(np.array([0, 1]), np.array([0.5, 0, 0, 0]))),
        "concentration": Real(1.0, low=0, low_open=True), "states_per_client": Int(2, low=1),
        "heavy_fraction": Real(0.5, low=0, high=1), "heavy_clusters": Kind((0, 1), extra=((1.5,), BAD_TEXT, (-1,))),
        "rng": Rng(0)}, edge=("n_clients", "n_states", "states_per_client", "heavy_fraction")),
    Case(f"{M}.data.availability_probabilities", {"n_clients": Int(N, low=1), "mean": Real(0.2, low=0, high=1,
                                                                                          low_open=True),
                                                  "std": Real(0.01, low=0),
                                                  "low": Real(0.01, low=0, high=1, low_open=True), "rng": Rng(0)},
         edge=("n_clients", "mean", "std", "low")),
    Case(f"{M}.data.lazy_transition", {"pi": pi_kind(), "speed": Real(0.5, low=0, high=1)}),
    Case(f"{M}.data.shift_persistence", {"speed": Real(0.5, low=0, high=1), "n_steps": Int(2, low=1)}),
    Case(f"{M}.data.round_state_distribution", {"pi": pi_kind(also=("start",)), "speed": Real(0.5, low=0, high=1),
                                                "start": Arr(np.array([0, 1, 2]), integer=True, nonneg=True, high=S,
                                                             link=True, also=("pi",)),
                                                "n_steps": Int(2, low=1)}),
    Case(f"{M}.data.simulate_states", {"pi": pi_kind(also=("transitions",)), "n_steps_total": Int(4, low=0),
                                       "speed": Real(0.5, low=0, high=1),
                                       "transitions": Arr(None, optional=True,
                                                          extra=(np.ones((N, S, S)), np.full((N, S, S), NAN),
                                                                 np.eye(S))),
                                       "rng": Rng(0)}, edge=("n_steps_total", "speed")),
    Case(f"{M}.data.BufferBank", {"x": Arr(np.zeros((N, 2, 2)), ndim=3, also=("y", "states")),
                                  "y": Arr(np.zeros((N, 2), dtype=np.int64), integer=True, nonneg=True, link=True,
                                           also=("x",)),
                                  "states": Arr(np.zeros((N, 2), dtype=np.int64), integer=True, nonneg=True,
                                                link=True, also=("x",)),
                                  "rule": Choice("random")}),
    Case(f"{M}.data.perturb_oracle", {"pi": pi_kind(also=("noise",)), "eps": Real(0.1, low=0), "rng": Rng(0),
                                      "noise": Arr(None, optional=True, extra=(np.full((N, S), 2.0),
                                                                              np.zeros((N, S - 1))))}),
    Case(f"{M}.data.bayes_oracle", {"counts": Arr(np.ones((N, S)), nonneg=True, also=("alpha0",)),
                                    "alpha0": Arr(1.0, positive=True, nonempty=False,
                                                  extra=(np.ones(S - 1),), also=("counts",))}),
    Case(f"{M}.data.oracle_error", {"pi": pi_kind(also=("pi_hat",)), "pi_hat": pi_kind(link=True, also=("pi",))}),
    Case(f"{M}.data.PredictionOracle", {"kind": Choice("exact"), "eps": Real(0.0, low=0),
                                        "prior": Real(1.0, low=0, low_open=True), "redraw": Flag(False)}),
    Case(f"{M}.data.PredictionOracle.predict", {"data": Obj(fresh(shift), extra=(w.fed(),)),
                                                "round_": Int(0, low=0, high=1), "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.sfedpo.data", fromlist=["x"]).PredictionOracle("exact").predict(**kw)),
    Case(f"{M}.data.TemporalShiftDataset", {
        "train": Obj(fresh(lambda: shift().train), extra=(w.fed(),)),
        "test": Obj(fresh(lambda: shift().test), extra=(w.fed(),)),
        "space": Obj(fresh(space), extra=(w.fed(),)),
        "pi": Arr(fresh(lambda: shift().pi), simplex=True, ndim=2, link=True, also=("train", "space")),
        "q": Arr(fresh(lambda: shift().q), prob=True, positive=True, link=True, optional=True),
        "w": Arr(fresh(lambda: shift().w), simplex=True, link=True, optional=True),
        "d": Arr(fresh(lambda: shift().d), nonneg=True, link=True, optional=True),
        "speed": Real(1.0, low=0, high=1), "n_steps": Int(2, low=1, also=("states",)),
        "states": Arr(fresh(lambda: shift().states), integer=True, nonneg=True, high=S, ndim=2, link=True,
                      also=("pi", "n_steps")),
        "state_test": Obj(fresh(lambda: shift().state_test), extra=(w.fed(), w.clients())),
        "seed": Int(0, low=0)}),
    Case(f"{M}.data.make_temporal_shift", {
        "n_clients": Int(N, low=1), "n_states": Int(S, low=1), "n_classes": Int(3, low=2), "dim": Int(2, low=1),
        "scenario": Choice("full"), "speed": Real(1.0, low=0, high=1), "n_rounds": Int(2, low=1),
        "n_steps": Int(2, low=1), "capacity": Int(5, low=1),
        "concentrations": Arr((0.5, 100.0), positive=True, ndim=1),
        "sep": Real(1.0, low=0, low_open=True), "feature_shift": Real(0.0, low=0), "noise": Real(1.0, low=0),
        "pi_concentration": Real(1.0, low=0, low_open=True), "states_per_client": Int(2, low=1),
        "heavy_fraction": Real(0.5, low=0, high=1), "q_mean": Real(0.3, low=0, high=1, low_open=True),
        "q_std": Real(0.05, low=0), "discrepancy": Choice("kl"),
        "w": Arr(None, optional=True, extra=(np.full(S, 0.5), np.full(S - 1, 1 / (S - 1)))),
        "test_per_client": Int(3, low=1), "test_per_state": Int(3, low=1), "seed": Int(0, low=0)},
         edge=("n_clients", "n_classes", "dim", "speed", "n_rounds", "n_steps", "capacity", "noise",
               "states_per_client", "heavy_fraction", "q_mean", "q_std", "test_per_client", "test_per_state")),
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.sfedpo_gamma", {"alpha_n": Arr(0.5, prob=True, positive=True, nonempty=False),
                                      "n_steps": Int(2, low=1), "form": Choice("closed")}),
    Case(f"{M}.bounds.theorem1_constants", {"c_squared": Real(0.2, low=0, high=0.5, high_open=True)}),
    Case(f"{M}.bounds.sfedpo_stepsize_ok", {"L": Real(1.0, low=0, low_open=True), "n_steps": Int(2, low=1),
                                            "eta": Real(0.01, low=0, low_open=True), "n_states": Int(S, low=1),
                                            "n_active": Int(None, low=1, optional=True)}),
    *[Case(f"{M}.bounds.{name}", {"pi": pi_kind(also=("alpha", "d", "w")),
                                  "alpha": Arr(ALPHA, prob=True, link=True, also=("pi",)),
                                  **STATE_ARGS, "G": Real(1.0, low=0), "n_steps": Int(2, low=1),
                                  "budget": Arr(None, optional=True, extra=(np.full(N, 2.0), np.full(N, NAN))),
                                  **extra})
      for name, extra in (("sfedpo_client_stats", {}), ("dds_objective", {}),
                          ("heterogeneity_score", {"L": Real(1.0, low=0), "eta": Real(0.01, low=0),
                                                   "sigma2": Real(1.0, low=0)}))],
    Case(f"{M}.bounds.sfedpo_B", {"L": Real(1.0, low=0), "eta": Real(0.01, low=0), "sigma2": Real(1.0, low=0),
                                  "p": Arr(P, simplex=True, ndim=1, also=("q", "s")),
                                  "q": vec(Q, prob=True, positive=True, also=("p",)),
                                  "s": vec(SCORES, also=("p",))}),
    *[Case(f"{M}.bounds.{name}", {"F1": Real(1.0, low=0), "L": Real(1.0, low=0, low_open=True),
                                  "eta": Real(0.01, low=0, low_open=True), "n_steps": Int(2, low=1),
                                  "n_rounds": Int(5, low=1), "sigma2": Real(1.0, low=0), "G": Real(1.0, low=0),
                                  **STATE_ARGS, "pi": pi_kind(also=("alpha", "d", "w", "p", "q")),
                                  "alpha": Arr(ALPHA, prob=True, link=True, also=("pi",)),
                                  "p": Arr(P, simplex=True, ndim=1, link=True, also=("pi", "q")),
                                  "q": vec(Q, prob=True, positive=True, also=("pi", "p")),
                                  "last_term": Choice("printed")})
      for name in ("theorem1_terms", "sfedpo_theorem1_bound")],
    # ---------------------------------------------------------------- strategies
    Case(f"{M}.strategies.dds_scores", {**STATE_ARGS, "pi_hat": pi_kind(also=("w", "d")),
                                        "alpha_n": Real(0.5, low=0, high=1, low_open=True),
                                        "a1": Real(0.1), "b1": Real(0.2), "variant": Choice("eq10")}),
    Case(f"{M}.strategies.dds_alpha", {"scores": Arr(np.ones((N, S)), link=True, also=("pi_hat",)),
                                       "pi_hat": pi_kind(also=("scores",)),
                                       "alpha_n": Real(0.5, low=0, high=1, low_open=True)}, edge=("alpha_n",)),
    Case(f"{M}.strategies.dds_alpha_exact", {"pi": pi_kind(also=("d", "w")), **STATE_ARGS,
                                             "alpha_n": Real(0.5, low=0, high=1, low_open=True),
                                             "G": Real(1.0, low=0, low_open=True), "n_steps": Int(2, low=1),
                                             "method": Choice("waterfill")}),
    Case(f"{M}.strategies.uniform_alpha", {"pi": pi_kind(), "alpha_n": Real(0.5, low=0, high=1, low_open=True)}),
    Case(f"{M}.strategies.sampling_ratios", {"rule": Choice("dds"), "pi_hat": pi_kind(also=("d", "w")),
                                             "alpha_budget": Real(0.5, low=0, high=1, low_open=True),
                                             "d": vec(D, nonneg=True, optional=True, also=("pi_hat",)),
                                             "w": vec(W, nonneg=True, optional=True, also=("pi_hat",)),
                                             "a1": Real(0.1), "b1": Real(0.2), "variant": Choice("eq10"),
                                             "G": Real(1.0, low=0, low_open=True), "n_steps": Int(2, low=1)},
         edge=("alpha_budget", "n_steps")),
    Case(f"{M}.strategies.saw_weights", {"q": Arr(Q, prob=True, positive=True, ndim=1, also=("s",)),
                                         "s": vec(SCORES, also=("q",)), "a2": Real(1.0), "b2": Real(0.0),
                                         "mask": Arr(None, optional=True,
                                                     extra=(np.array([5]), np.zeros(N, dtype=bool),
                                                            np.array([True]), np.array([0.5])))}),
    Case(f"{M}.strategies.saw_exact", {"q": Arr(Q, prob=True, positive=True, ndim=1, also=("s",)),
                                       "s": vec(SCORES, also=("q",)), "L": Real(1.0, low=0, low_open=True),
                                       "eta": Real(0.01, low=0, low_open=True),
                                       "sigma2": Real(1.0, low=0, low_open=True), "lam2": Real(0.0),
                                       "mask": Arr(None, optional=True,
                                                   extra=(np.array([5]), np.zeros(N, dtype=bool)))}),
    Case(f"{M}.strategies.aggregation_weights", {"rule": Choice("saw"),
                                                 "q": Arr(Q, prob=True, positive=True, ndim=1, also=("s",)),
                                                 "s": vec(SCORES, also=("q",)),
                                                 "mask": Arr(None, optional=True, extra=(np.array([5]),)),
                                                 "a2": Real(1.0), "b2": Real(0.0), "L": Real(1.0, low=0),
                                                 "eta": Real(0.01, low=0), "sigma2": Real(1.0, low=0),
                                                 "lam2": Real(0.0)}),
    Case(f"{M}.strategies.strategy", {"pi_hat": pi_kind(also=("q", "d", "w")), **STRATEGY,
                                      "sampling": Choice("dds"), "aggregation": Choice("saw")},
         edge=("alpha_budget", "n_steps", "L", "eta", "sigma2")),
    Case(f"{M}.strategies.theorem2_gap", {"pi": pi_kind(also=("pi_hat", "q", "d", "w")),
                                          "pi_hat": pi_kind(link=True, also=("pi", "q", "d", "w")), **STRATEGY,
                                          "sampling": Choice("dds"), "aggregation": Choice("saw")}),
    Case(f"{M}.strategies.theorem2_sweep", {"pi": pi_kind(also=("q", "d", "w")),
                                            "eps_values": Arr((0.0, 0.1), nonneg=True, ndim=1),
                                            "n_draws": Int(2, low=1), "rng": Rng(0),
                                            "q": vec(Q, prob=True, positive=True, also=("pi", "pi_hat", "s")),
                                            **STATE_ARGS}),
    Case(f"{M}.strategies.theorem2_constants", {"pi": pi_kind(also=("q", "d", "w")), **STRATEGY}),
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.fedexp_step", {
        "deltas": Obj(fresh(lambda: {"w": torch.ones(N, 2)}), extra=({}, {"w": torch.full((N, 2), NAN)}),
                      also=("p",)),
        "p": Arr(P, simplex=True, link=True, also=("deltas",)), "eps": Real(1e-3, low=0, low_open=True)}),
    Case(f"{M}.algorithms.SFedPO", {
        "model": Obj(fresh(model), extra=(w.solver(),)), "solver": Obj(w.solver(), extra=(w.model(),)),
        "sampling": Choice("dds"), "aggregation": Choice("saw"),
        "oracle": Obj(None, optional=True, extra=("exact",)),
        "alpha_budget": Real(0.5, low=0, high=1, low_open=True), "a1": Real(0.1), "b1": Real(0.2),
        "variant": Choice("eq10"), "a2": Real(1.0), "b2": Real(0.0), "G": Real(1.0, low=0, low_open=True),
        "L": Real(1.0, low=0), "sigma2": Real(1.0, low=0), "lam2": Real(0.0), "buffer_rule": Choice("random"),
        "server": Choice("avg"), "server_lr": Real(1.0, low=0, low_open=True), "backend": Choice("auto")},
         edge=("alpha_budget", "L", "sigma2")),
    Case(f"{M}.algorithms.SFedPO.init", {"data": Obj(fresh(shift), extra=(w.fed(),)), "seed": Int(0, low=0)},
         fn=lambda **kw: sfedpo().init(**kw)),
    Case(f"{M}.algorithms.SFedPO.strategy", {"pi_hat": pi_kind(also=("data",)),
                                             "data": Obj(fresh(shift), extra=(w.fed(),)),
                                             "mask": Arr(None, optional=True, extra=(np.array([5]),))},
         fn=lambda **kw: sfedpo().strategy(**kw)),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.experiments.make_bound_environment", {
        "n_clients": Int(N, low=1), "n_states": Int(S, low=1), "n_classes": Int(3, low=2), "scenario": Choice("full"),
        "concentrations": Arr((0.5, 100.0), positive=True, ndim=1), "q_mean": Real(0.2, low=0, high=1, low_open=True),
        "q_std": Real(0.01, low=0), "states_per_client": Int(2, low=1), "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.budget_from_buffer", {"capacity": Int(10, low=1), "arrivals": Int(2, low=1)}),
    Case(f"{M}.experiments.bound_explorer", {
        "env": Obj(fresh(env), extra=({}, {"pi": PI}, [1])), "alpha_budget": Real(0.5, low=0, high=1, low_open=True),
        "speed": Real(1.0, low=0, high=1), "oracle": Choice("exact"), "eps": Real(0.0, low=0),
        "n_steps": Int(2, low=1), "n_rounds": Int(5, low=1), **TUNING, "G": Real(1.0, low=0, low_open=True),
        "L": Real(1.0, low=0, low_open=True), "eta": Real(0.01, low=0, low_open=True), "sigma2": Real(1.0, low=0),
        "F1": Real(1.0, low=0), "lam2": Real(0.0), "n_draws": Int(2, low=1),
        "strategies": Kind(("uniform",), extra=((BAD_TEXT,), (), BAD_TEXT)), "last_term": Choice("printed"),
        "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.method_bound", {"method": Obj(fresh(sfedpo), extra=(w.model(),)),
                                           "data": Obj(fresh(shift), extra=(w.fed(),)),
                                           "F1": Real(1.0, low=0), "last_term": Choice("printed")}),
    Case(f"{M}.experiments.training_mixture", {"pi": pi_kind(also=("alpha", "p", "q")),
                                               "alpha": Arr(ALPHA, prob=True, link=True, also=("pi",)),
                                               "p": Arr(P, simplex=True, ndim=1, link=True, also=("pi",)),
                                               "q": vec(Q, prob=True, positive=True, also=("pi",))}),
    Case(f"{M}.experiments.make_environment", {
        "scenario": Choice("full"), "speed": Real(1.0, low=0, high=1), "n_clients": Int(N, low=1),
        "n_states": Int(S, low=1), "n_classes": Int(3, low=2), "dim": Int(2, low=1), "n_rounds": Int(2, low=1),
        "n_steps": Int(2, low=1), "capacity": Int(5, low=1), "sep": Real(1.0, low=0, low_open=True),
        "feature_shift": Real(0.0, low=0), "q_mean": Real(0.3, low=0, high=1, low_open=True),
        "q_std": Real(0.05, low=0), "seed": Int(0, low=0)},
         edge=("speed", "n_clients", "n_classes", "dim", "n_rounds", "n_steps", "capacity", "q_mean", "q_std")),
    Case(f"{M}.experiments.compare_methods", {
        "methods": Kind(COMPARE["methods"], extra=((BAD_TEXT,), (), BAD_TEXT)), "scenario": Choice("full"),
        "speed": Real(1.0, low=0, high=1), "oracle": Choice("exact"), "eps": Real(0.0, low=0),
        "n_clients": Int(N, low=1), "n_states": Int(S, low=1), "n_classes": Int(3, low=2), "dim": Int(2, low=1),
        "n_rounds": Int(2, low=1), "n_steps": Int(2, low=1), "capacity": Int(5, low=1),
        "alpha_budget": Real(0.5, low=0, high=1, low_open=True), "lr": Real(0.1, low=0, low_open=True),
        "batch_size": Int(4, low=1), "sep": Real(1.0, low=0, low_open=True), "feature_shift": Real(0.0, low=0),
        "q_mean": Real(0.3, low=0, high=1, low_open=True), "q_std": Real(0.05, low=0), "a1": Real(0.1),
        "b1": Real(0.2), "a2": Real(1.0), "b2": Real(0.0), "model": Choice("linear"), "hidden": Int(4, low=1),
        "eval_every": Int(1, low=1), "tail": Int(1, low=1), "seed": Int(0, low=0)},
         edge=("speed", "n_clients", "n_classes", "dim", "n_rounds", "n_steps", "capacity", "alpha_budget",
               "batch_size", "q_mean", "q_std", "hidden")),
    Case(f"{M}.experiments.make_model", {"model": Choice("linear"), "dim": Int(2, low=1), "n_classes": Int(3, low=2),
                                         "hidden": Int(4, low=1)}),
    Case(f"{M}.experiments.ablation_configs", {"param": Choice("alpha_budget"),
                                               "values": Kind(None, extra=((), BAD_TEXT, 3)),
                                               "scenario": Choice("partial")}),
    Case(f"{M}.experiments.ablation_gains", {"records": Obj(fresh(ablation_records), extra=([], [3], [{"seed": 0}], 3),
                                                            also=("param",)),
                                             "param": Kind("alpha_budget", extra=(BAD_TEXT, 3, "a1"),
                                                           also=("records",))}),
    Case(f"{M}.experiments.mixture_ceiling", {"result": Obj(fresh(compared), extra=({}, [1]), also=("data",)),
                                              "data": Obj(fresh(shift), extra=(w.fed(),), also=("result",)),
                                              "n_samples": Int(50, low=1), "rng": Int(0, low=0)}),
    Case(f"{M}.experiments.explorer_draws", {"seeds": Kind((0,), extra=((), BAD_TEXT, (-1,), (1.5,))),
                                             "scenario": Choice("full"),
                                             "strategies": Kind(("uniform",), extra=((BAD_TEXT,), (), BAD_TEXT))}),
    Case(f"{M}.experiments.summarize", {
        "records": Obj(fresh(lambda: [{"config": {"scenario": "full"}, "seed": 0, "result": compared()}]),
                       extra=(3, [3], [{"seed": 0}])),
        "baseline": Kind("fedavg_buffer", extra=(3,)), "digits": Int(2, low=0)}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_state_trajectories", {"states": Arr(fresh(lambda: shift().states), integer=True,
                                                              nonneg=True, ndim=2),
                                                "n_steps": Int(2, low=1),
                                                "clients": Kind(None, extra=((5,), (-1,), (1.5,), BAD_TEXT)),
                                                "max_steps": Int(10, low=1), "ax": AX}),
    Case(f"{M}.plots.plot_sampling_ratios", {"alphas": Obj({"dds": ALPHA}, extra=({}, {"dds": -ALPHA}, [1],
                                                                                 {"dds": np.ones(S)})),
                                             "pi": Arr(None, optional=True, extra=(np.ones((N + 1, S)),)),
                                             "axes": AX}),
    Case(f"{M}.plots.plot_client_scores", {"scores": Obj({"dds": SCORES}, extra=({}, [1], {"dds": [NAN]},
                                                                                {"a": [1.0], "b": [1.0, 2.0]})),
                                           "ax": AX}),
    Case(f"{M}.plots.plot_bound_decomposition", {"result": Obj(fresh(explorer), extra=({}, [1])), "ax": AX,
                                                 "strategies": Kind(None, extra=((BAD_TEXT,), (), BAD_TEXT)),
                                                 }),
    Case(f"{M}.plots.plot_bound_sweep", {"x": Arr(np.arange(3.0), ndim=1, also=("values",)), "xlabel": Fixed("x"),
                                         "values": Obj({"a": [1.0, 2.0, 3.0]}, extra=({}, [1], {"a": [1.0]},
                                                                                     {"a": [NAN, 1.0, 2.0]})),
                                         "ax": AX, "marker": Real(None, optional=True)}),
    Case(f"{M}.plots.plot_theorem2", {"sweep": Obj(fresh(sweep), extra=({}, [1])),
                                      "K": Real(None, optional=True, low=0), "ax": AX}),
    Case(f"{M}.plots.plot_method_curves", {"row": Obj(fresh(summary_row), extra=({}, [1])),
                                           "methods": Kind(None, extra=((BAD_TEXT,), (), BAD_TEXT)),
                                           "labels": Kind(None, extra=(BAD_TEXT, [1])),
                                           "relative": Flag(False), "ax": AX}),
    Case(f"{M}.plots.plot_bound_vs_accuracy", {"rows": Obj(fresh(lambda: [summary_row()]), extra=([], [1], [{}])),
                                               "baseline": Kind("fedavg_buffer", extra=(BAD_TEXT, 3)),
                                               "methods": Kind(None, extra=((BAD_TEXT,), BAD_TEXT)),
                                               "key": Kind("scenario", extra=(3,)), "ax": AX}),
    Case(f"{M}.plots.plot_ablations", {"ablations": Obj(fresh(lambda: [ablation_gains_result()]),
                                                        extra=([], [{}], BAD_TEXT, [3])),
                                       "labels": Kind(None, extra=(BAD_TEXT, [1])), "axes": AX,
                                       "ncols": Int(4, low=1)}),
    Case(f"{M}.plots.plot_oracle_sweep", {"eps": Arr((0.0, 0.1), nonneg=True, ndim=1, also=("means", "stds")),
                                          "means": Obj({"a": [60.0, 59.0]}, extra=({}, [1], {"a": [1.0]},
                                                                                   {"a": [NAN, 1.0]})),
                                          "stds": Obj(None, optional=True, extra=({"b": [1.0, 1.0]}, [1],
                                                                                  {"a": [-1.0, 1.0]})),
                                          "ax": AX}),
]


def REAL_SETTING():
    """The Fashion-MNIST setting shrunk to the robustness files, on a softmax regression."""
    from fedlab.sfedpo.real_data import SETTINGS

    return w.tiny(SETTINGS["fashion_mnist"], model="mnist_logistic")


def REAL_SETTING_DICT():
    import dataclasses

    return dataclasses.asdict(REAL_SETTING())


CASES += [
    # ---------------------------------------------------------------- paper mode (fedlab.sfedpo.real_data)
    Case(f"{M}.real_data.image_temporal_shift", {"setting": Obj(REAL_SETTING(), extra=("fashion_mnist",)),
                                                 "scenario": Choice("full"), "seed": Int(0, low=0),
                                                 "capacity": Int(8, low=1), "n_states": Int(12, low=6),
                                                 "test_per_client": Int(5, low=1), "test_per_state": Int(5, low=1)},
         edge=("capacity", "n_states", "test_per_client", "test_per_state")),
    Case(f"{M}.real_data.sfedpo_paper_run", {"setting": Obj(REAL_SETTING_DICT(), extra=("fashion_mnist", [1])),
                                             "scenario": Choice("full"), "seed": Int(0, low=0),
                                             "methods": Kind(("sfedpo",), extra=((), (BAD_TEXT,), 3)),
                                             "tail": Int(4, low=1)}, skip=("device",)),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, low=1, optional=True),
                                      "datasets": Kind(("fashion_mnist",), extra=((), ("mnist",), 3)),
                                      "settings": Kind(fresh(lambda: {"fashion_mnist": REAL_SETTING()}),
                                                       extra=(BAD_TEXT, 3))}, skip=("device", "store")),
    Case(f"{M}.real_data.expected_seconds", {"n_clients": Int(None, low=2, optional=True),
                                             "settings": Kind(fresh(lambda: {"fashion_mnist": REAL_SETTING()}),
                                                              extra=(BAD_TEXT, 3))}, skip=("device",),
         edge=("n_clients",)),
]


def claims_results():
    """A small results mapping of fedlab.sfedpo.claims.chapter_claims: two seeds of the main experiment only."""
    from fedlab.sfedpo.published import SPEC_TEST_VECTOR

    main = [{"config": {"scenario": s}, "seed": k,
             "result": {"accuracy": {"fedavg_buffer": 60.0, "sfedpo": 61.0 + 0.1 * k}}}
            for s in ("full", "partial") for k in range(2)]
    return {"test_vectors": {**SPEC_TEST_VECTOR, "c18": 18.0, "c53": 5 / 3},
            "explorer": {"uniform": [44.0, 45.0], "DDS + SAW": [43.0, 43.5]},
            "theorem2": {"eps": [0.0, 0.1], "mean_abs_gap": [0.0, 0.01]}, "main": main, "modularity": [],
            "oracle": [], "deciding": {"records": [], "ceiling": {}}, "ablations": {},
            "ceiling": {"full": 0.0, "partial": 0.1}}


CASES += [
    # ---------------------------------------------------------------- claims (fedlab.sfedpo.claims)
    Case(f"{M}.claims.chapter_claims", {
        "results": Obj(fresh(claims_results), extra=({}, [1], {**claims_results(), "main": 3},
                                                     {**claims_results(), "explorer": {"uniform": [1.0]}})),
        "scale": Choice("smoke")}),
    Case(f"{M}.claims.paper_claims", {"results": Kind(None, extra=(BAD_TEXT, 3, [1]))}),
    Case(f"{M}.claims.paired_gains", {"records": Obj(fresh(lambda: claims_results()["main"]),
                                                     extra=([3], [{"seed": 0}], {"a": 1})),
                                      "method": Kind("sfedpo", extra=(3,)),
                                      "baseline": Kind("fedavg_buffer", extra=(3,))}),
    Case(f"{M}.claims.weakest_setting", {"settings": Obj({"a": [1.0, 2.0], "b": [0.0, 3.0]},
                                                         extra=({}, {"a": BAD_TEXT}, {"a": []}, {"a": [NAN]}))}),
]
