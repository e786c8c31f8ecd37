"""Experiments of the SFedPO chapter (fedlab.sfedpo.experiments); fact B11 on the published tables."""
import json

import numpy as np
import pytest

from fedlab.sfedpo.data import make_temporal_shift
from fedlab.engine import LocalSGD
from fedlab.experiments import grid, sweep
from fedlab.sfedpo.algorithms import PRESETS
from fedlab.sfedpo.experiments import (DEFAULT_METHODS, EXPLORER_STRATEGIES, METHOD_LABELS, bound_explorer,
                                       budget_from_buffer, compare_methods, explorer_draws, make_bound_environment,
                                       make_environment, method_bound, mixture_ceiling, summarize,
                                       training_mixture)
from fedlab.models import LinearModel

TINY = dict(n_clients=6, n_states=4, n_classes=3, dim=4, n_rounds=3, n_steps=2, capacity=16, eval_every=1, tail=2)


def test_bound_environment_and_budget():
    env = make_bound_environment(n_clients=5, seed=1)
    assert env["pi"].shape == (5, 12) and np.allclose(env["pi"].sum(1), 1)
    assert env["d"].max() == pytest.approx(1) and np.allclose(env["w"], 1 / 12) and env["q"].shape == (5,)
    assert budget_from_buffer(400, 200) == 0.5 and budget_from_buffer(100, 200) == 1.0
    with pytest.raises(ValueError, match="capacity"):
        budget_from_buffer(0, 10)


def test_bound_explorer_orders_the_strategies():
    env = make_bound_environment(seed=1)
    out = bound_explorer(env)
    assert out["strategies"] == list(EXPLORER_STRATEGIES) and out["delta_sum"] == 0 and out["rho"] == 0
    b = {k: out[k]["bound"] for k in out["strategies"]}
    assert b["DDS"] < b["uniform"] and b["DDS + SAW"] < b["uniform"] and b["exact QPs"] < b["DDS"]
    assert out["DDS + SAW"]["B"] < out["uniform"]["B"]
    assert not out["stepsize"]["ok"] and out["stepsize"]["c"] == pytest.approx(0.05)  # L T eta > 1/(2M) = 1/24
    assert np.allclose(np.sum(np.array(out["DDS"]["alpha"]) * env["pi"], 1), 0.5)
    assert sum(out["DDS + SAW"]["p"]) == pytest.approx(1)
    json.dumps(out)


def test_bound_explorer_oracles_and_shift_speed():
    env = make_bound_environment(seed=2)
    fast = bound_explorer(env, speed=1.0, oracle="stationary")
    assert fast["delta_sum"] == 0                    # i.i.d. states: the long-run distribution is exact
    slow_exact = bound_explorer(env, speed=0.2, oracle="exact", n_draws=4)
    slow_stat = bound_explorer(env, speed=0.2, oracle="stationary", n_draws=4)
    assert slow_exact["delta_sum"] == 0 and slow_stat["delta_sum"] > 1
    assert slow_stat["DDS"]["bound"] > slow_exact["DDS"]["bound"]   # a wrong forecast costs bound
    noisy = bound_explorer(env, eps=0.1, n_draws=4)
    assert noisy["delta_sum"] > 0
    with pytest.raises(ValueError, match="oracle"):
        bound_explorer(env, oracle="bayes")
    with pytest.raises(ValueError, match="strategies"):
        bound_explorer(env, strategies=("greedy",))


def test_method_bound_and_training_mixture():
    data = make_temporal_shift(n_clients=6, n_states=4, n_classes=3, dim=4, n_rounds=3, n_steps=2, capacity=16,
                               concentrations=(0.1, 100.0), seed=0)
    model, solver = LinearModel(4, 3), LocalSGD(lr=0.01)
    unif = method_bound(PRESETS["fedavg_buffer"](model, solver), data)
    dds = method_bound(PRESETS["sfedpo_dds"](model, solver), data)
    assert dds["bound"] < unif["bound"] and dds["B"] < unif["B"]
    assert unif["terms"]["bound"] == pytest.approx(unif["bound"])
    static = method_bound(PRESETS["fedavg_static"](model, solver), data)
    assert np.isnan(static["bound"]) and np.isnan(static["B"])  # the mixture update (1) does not hold
    mix = training_mixture(data.pi, np.full_like(data.pi, 0.5), np.full(6, 1 / 6), data.q)
    assert mix.sum() == pytest.approx(1) and mix == pytest.approx(data.q @ data.pi / data.q.sum())
    with pytest.raises(ValueError, match="p must sum to 1"):  # aggregation weights lie on the simplex
        training_mixture(data.pi, np.ones_like(data.pi), np.zeros(6), data.q)


def test_compare_methods_and_summarize():
    records = sweep(compare_methods, grid(scenario=["full", "partial"], **{k: [v] for k, v in TINY.items()},
                                          methods=[("sfedpo_dds", "fedavg_buffer")]), [0, 1], executor="sequential",
                    progress=False)
    res = records[0]["result"]
    json.dumps(res)
    assert res["methods"] == ["sfedpo_dds", "fedavg_buffer"] and res["rounds"] == [0, 1, 2, 3]
    for m in res["methods"]:
        assert 0 <= res["accuracy"][m] <= 100 and len(res["curves"][m]) == 4
        assert res["bound"][m] > 0 and 0 <= res["mixture_l1"][m] <= 2 and 0 <= res["buffer_l1"][m] <= 2
    assert res["bound"]["sfedpo_dds"] < res["bound"]["fedavg_buffer"]
    rows = summarize(records)
    assert len(rows) == 2 and rows[0]["n_seeds"] == 2
    assert rows[0]["fedavg_buffer"]["diff"] == (0.0, 0.0)
    assert len(rows[0]["curves"]["sfedpo_dds"][0]) == 4
    assert rows[0]["diff_curves"]["fedavg_buffer"] == ([0.0] * 4, [0.0] * 4)
    no_base = summarize(records, baseline="fedavg_latest")
    assert no_base[0]["sfedpo_dds"]["diff"] is None
    with pytest.raises(ValueError, match="methods"):
        compare_methods(methods=("flash",), **TINY)


def test_make_environment_and_mixture_ceiling():
    res = compare_methods(methods=("sfedpo", "fedavg_latest"), **TINY)
    data = make_environment(**TINY)
    assert np.array_equal(data.states, make_environment(**TINY).states) and data.n_rounds == 3
    assert np.allclose(res["mixture"]["fedavg_latest"], training_mixture(data.pi, np.ones_like(data.pi),
                                                                         np.full(6, 1 / 6), data.q))
    ceil = mixture_ceiling(res, data, n_samples=2000)
    assert set(ceil) == {"w", "sfedpo", "fedavg_latest"} and all(0 <= v <= 100 for v in ceil.values())
    assert ceil["w"] >= max(ceil.values()) - 1.0  # the Bayes classifier of w is (nearly) the best on w


def test_oracle_error_is_recorded():
    res = compare_methods(methods=("sfedpo",), eps=0.1, **TINY)
    assert res["delta_sum"] > 0
    assert compare_methods(methods=("sfedpo",), **TINY)["delta_sum"] == 0
    assert set(METHOD_LABELS) == set(PRESETS) and set(DEFAULT_METHODS) <= set(PRESETS)


def test_make_model_and_compare_methods_with_an_mlp():
    from fedlab.models import MLP
    from fedlab.sfedpo.experiments import MODELS, make_model

    for name in MODELS:
        net = make_model(name, 4, 3, hidden=5)
        assert net.n_inputs() == 4 and net.n_outputs() == 3
    assert isinstance(make_model("mlp", 4, 3, hidden=5), MLP) and make_model("mlp", 4, 3, hidden=5).hidden == (5,)
    assert isinstance(make_model("linear", 4, 3), LinearModel)
    res = compare_methods(methods=("sfedpo", "fedavg_buffer"), model="mlp", hidden=8, **TINY)
    lin = compare_methods(methods=("sfedpo", "fedavg_buffer"), **TINY)
    assert res["mixture"] == lin["mixture"] and res["bound"] == lin["bound"]  # the strategy does not see the model
    assert res["curves"] != lin["curves"]
    again = compare_methods(methods=("sfedpo", "fedavg_buffer"), model="mlp", hidden=8, **TINY)
    assert again["accuracy"] == res["accuracy"] and again["curves"] == res["curves"]
    with pytest.raises(ValueError, match="model"):
        make_model("cnn", 4, 3)
    with pytest.raises(ValueError, match="hidden"):
        compare_methods(model="mlp", hidden=0, **TINY)


def test_ablation_configs_and_gains():
    from fedlab.sfedpo.experiments import ABLATIONS, ablation_configs, ablation_gains

    for param, (figure, values, method, baselines) in ABLATIONS.items():
        cfgs = ablation_configs(param, n_clients=6)
        assert [c[param] for c in cfgs] == list(values) and figure
        assert all(c["methods"] == (method, *baselines) and c["scenario"] == "partial" and c["n_clients"] == 6
                   for c in cfgs)
    tiny = {k: v for k, v in TINY.items()}
    cfgs = ablation_configs("alpha_budget", values=(0.3, 0.6), **tiny)
    records = sweep(compare_methods, cfgs, [0, 1], executor="sequential", progress=False)
    out = ablation_gains(records, "alpha_budget")
    json.dumps(out)
    assert out["values"] == [0.3, 0.6] and out["n_seeds"] == 2 and out["method"] == "sfedpo"
    by = {(r["config"]["alpha_budget"], r["seed"]): r["result"]["accuracy"] for r in records}
    gains = [by[(0.3, s)]["sfedpo"] - by[(0.3, s)]["sfedpo_saw"] for s in (0, 1)]
    assert out["gain"]["sfedpo_saw"][0] == pytest.approx((np.mean(gains), np.std(gains)))
    assert out["gain_seeds"]["sfedpo_saw"][0] == pytest.approx(gains)
    assert out["accuracy"]["sfedpo"][1] == pytest.approx(np.mean([by[(0.6, s)]["sfedpo"] for s in (0, 1)]))
    with pytest.raises(ValueError, match="alpha_budget"):
        ablation_configs("alpha_budget", alpha_budget=0.5)
    with pytest.raises(ValueError, match="param"):
        ablation_configs("lr")
    with pytest.raises(ValueError, match="a1"):
        ablation_gains(records, "a1")


def test_explorer_draws_repeat_the_explorer_per_seed():
    draws = explorer_draws([0, 3], n_draws=2, n_rounds=50)
    assert draws["seeds"] == [0, 3] and set(draws) == {"seeds", "uniform", "DDS + SAW"}
    for k, seed in enumerate((0, 3)):
        one = bound_explorer(make_bound_environment(scenario="full", seed=seed), n_draws=2, n_rounds=50, seed=seed)
        assert draws["uniform"][k] == one["uniform"]["bound"] and draws["DDS + SAW"][k] == one["DDS + SAW"]["bound"]
    assert explorer_draws([1], strategies=("exact QPs",), n_draws=1)["exact QPs"][0] > 0
    with pytest.raises(ValueError, match="seed"):
        explorer_draws([0], seed=1)
    with pytest.raises(ValueError, match="strategies"):
        explorer_draws([0], strategies=("best",))
    with pytest.raises(ValueError, match="seeds"):
        explorer_draws([])
