"""Experiment functions and plot helpers of the availability chapter."""
import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlab.availability.algorithms.cafed import cafed_tradeoff
from fedlab.availability.data import (AVAILABILITY_DATASETS, DIGITS_SPLITS, SPATIAL_LAMBDA, SPATIAL_PI,
                                      digits_federation, spatial_population)
from fedlab.availability.experiments import (AUTHORS_OPTIMIZER, DEFAULT_LR, availability_setup, curves_by,
                                             estimator_errors, exclusion_when_available, format_spread,
                                             run_availability, seed_stats, seed_values, step_size_configs,
                                             tune_step_sizes)
from fedlab.availability.plots import (plot_availability_raster, plot_chain_memory, plot_client_weights,
                                       plot_group_weights, plot_minimizer_path, plot_step_size_grid, plot_tradeoff)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.parametrize("dataset", sorted(AVAILABILITY_DATASETS))
def test_setup_is_seed_deterministic(dataset):
    data, pop, trace, prior = availability_setup(dataset, 12, 20, seed=3, t_prior=5)
    data2, pop2, trace2, prior2 = availability_setup(dataset, 12, 20, seed=3, t_prior=5)
    assert data.n_clients == 12 and trace.shape == (20, 12) and prior.shape == (5, 12)
    assert np.array_equal(trace, trace2) and np.array_equal(pop.group, pop2.group)
    assert np.array_equal(data.train.x.numpy(), data2.train.x.numpy())
    _, pop0, _, _ = availability_setup(dataset, 12, 20, seed=3, nu=0.0)
    assert np.array_equal(pop0.group, pop.group) and np.all(np.abs(pop0.client_lambda) < 0.1)
    assert dataset in DEFAULT_LR


def test_run_availability_results_are_json_and_consistent():
    res = {m: run_availability(dataset="digits", method=m, rounds=15, n_clients=8, seed=0, kappa2=1e6)
           for m in ("unbiased", "cafed", "more_available")}
    for r in res.values():
        json.dumps(r)
        assert len(r["rounds"]) == 16 and len(r["accuracy"]) == 16
        assert 0 <= r["final_accuracy"] <= 1 and r["max_accuracy"] >= r["final_accuracy"]
        assert r["at"] == 15 and set(r["group_weights"]) == set(r["group_names"])
    assert res["cafed"]["accuracy"] == res["unbiased"]["accuracy"]  # kappa2 = 1e6: identical run
    assert "availability" in res["cafed"] and "group_exclusion" in res["cafed"]
    assert res["more_available"]["group_weights"]["less available, correlated"] == 0
    assert res["unbiased"]["mean_included"] == pytest.approx(res["unbiased"]["mean_available"])


def test_run_availability_bayes_and_validation():
    r = run_availability(dataset="leaf", method="f3ast", rounds=5, n_clients=8, estimator="bayes", t_prior=20,
                         f3ast_k=2, seed=1)
    assert max(r["included"]) <= 2
    with pytest.raises(ValueError, match="method"):
        run_availability(method="fedsgd", rounds=2)
    with pytest.raises(ValueError, match="dataset"):
        run_availability(dataset="mnist", rounds=2)


def test_estimator_errors_decrease():
    out = estimator_errors([10, 1000, 100], n_clients=40, seeds=(0, 1))
    pi_err, lam_err = np.mean(out["pi_error"], 0), np.mean(out["lambda_error"], 0)
    assert out["priors"] == [10, 1000, 100]
    assert pi_err[1] < pi_err[2] < pi_err[0] and lam_err[1] < lam_err[0]


def test_plot_raster_and_chain_memory():
    trace = np.array([[1, 0, 1], [1, 1, 0]], bool)
    fig, data = plot_availability_raster(trace, group=[1, 0, 1], group_names=("a", "b"), excluded=[[2], [0]])
    assert data["order"].tolist() == [1, 0, 2]
    assert data["image"].tolist() == [[0, 1], [1, 2], [2, 0]]
    fig, data = plot_chain_memory(0.1, [0.0, 0.9], lags=5, trace=np.ones((50, 2), bool), trace_lambda=0.9)
    np.testing.assert_allclose(data["curves"][0.9], 0.1 + 0.9 ** np.arange(6) * 0.9)
    np.testing.assert_allclose(data["empirical"], 1.0)


def test_plot_tradeoff_and_weights():
    alpha, pi = np.full(6, 1 / 6), np.array([0.9, 0.9, 0.1, 0.1, 0.1, 0.1])
    lam, gap = np.array([0, 0, 0.9, 0.8, 0, 0]), np.array([0.05, 0.07, 0.6, 0.4, 0.3, 0.2])
    path = cafed_tradeoff(alpha, pi, lam, gap, np.logspace(-3, 1, 9))
    fig, data = plot_tradeoff(path["kappa2"], path["opt"], path["bias"], path["n_excluded"], current=0.3)
    np.testing.assert_allclose(data["total"], path["total"])
    fig, data = plot_client_weights(path["q"][4], path["p"][4], alpha, excluded=path["excluded"][4], group=[0, 0, 1, 1, 2, 2])
    assert data["excluded"].tolist() == path["excluded"][4]
    fig, data = plot_group_weights({"A": {"g1": (0.5, 0.1), "g2": 0.2}, "B": {"g1": 0.3, "g2": (0.1, 0.0)}})
    np.testing.assert_allclose(data["groups"]["g1"]["mean"], [0.5, 0.3])
    np.testing.assert_allclose(data["groups"]["g1"]["std"], [0.1, 0.0])
    with pytest.raises(ValueError, match="at least one"):
        plot_group_weights({})
    fig, data = plot_minimizer_path([0.0, 1.0], [[0.1, 0.9], [0.9, 0.1]], [0.9, 0.1], b0=0.5)
    assert data["q_star"].shape == (2, 2)


def test_labels_configs_and_seed_stats():
    from fedlab.availability.experiments import by_label, comparison_configs, method_label, seed_stats

    assert method_label({"method": "cafed", "kappa2": 0.1}) == "CA-Fed (κ̄²=0.1)"
    assert method_label({"method": "unbiased", "nu": 0.0}) == "Unbiased (ν=0)"
    assert method_label({"method": "adafed"}) == "AdaFed"
    configs = comparison_configs("leaf", kappa2_grid=[1.0, 10.0], rounds=3)
    labels = [method_label(c) for c in configs]
    assert labels == ["Unbiased", "More available", "Less correlated", "AdaFed", "CA-Fed (κ̄²=1)", "CA-Fed (κ̄²=10)",
                      "Unbiased (ν=0)"]
    assert all(c["rounds"] == 3 and c["dataset"] == "leaf" for c in configs)
    records = [{"config": {"method": "adafed"}, "seed": s, "result": {"x": float(s)}} for s in (0, 1)]
    records += [{"config": {"method": "unbiased"}, "seed": s, "result": {"x": 2.0 * s}} for s in (0, 1)]
    records.append({"config": {"method": "f3ast"}, "seed": 0, "result": None, "error": "boom"})
    grouped = by_label(records)
    assert set(grouped) == {"AdaFed", "Unbiased"}
    assert seed_stats(grouped["AdaFed"], "x") == (0.5, 0.5)
    assert seed_stats(grouped["Unbiased"], "x", grouped["AdaFed"]) == (0.5, 0.5)
    with pytest.raises(ValueError, match="no seeds"):
        seed_stats({}, "x")
    with pytest.raises(ValueError, match="method"):
        method_label({"method": "nope"})


def test_thesis_setup_constants():
    """Spec §6.1.6: g = 0.4 gives pi in {0.9, 0.1}; nu = 0.9; eps = 0.01; N = 100."""
    from fedlab.availability.data import make_population

    pop = make_population(100, layout="thesis4", rng=0)
    assert set(np.round(pop.client_pi, 12)) == {0.9, 0.1}
    corr = np.isin(pop.group, [0, 2])
    np.testing.assert_allclose(pop.client_lambda[corr], 0.9)
    assert np.abs(pop.client_lambda[~corr]).max() < 0.05 and np.abs(pop.client_lambda[~corr]).std() < 0.02
    assert np.bincount(pop.group).tolist() == [25, 25, 25, 25]


@pytest.mark.parametrize("n_clients", [24, 100])
def test_digits_federation_scales_to_thesis_size(n_clients):
    from fedlab.availability.data import digits_federation

    data = digits_federation(n_clients, seed=0)
    assert data.n_clients == n_clients and int(data.train.n.min()) >= 3


def test_authors_optimizer_reaches_the_algorithms():
    base = dict(dataset="leaf", method="unbiased", rounds=6, n_clients=8, eval_every=3, seed=0)
    plain = run_availability(**base)
    assert run_availability(**base, momentum=0.0, server_momentum=0.0, server_weight_decay=0.0) == plain
    heavy = run_availability(**base, **AUTHORS_OPTIMIZER)
    assert heavy["accuracy"] != plain["accuracy"] and heavy["rounds"] == plain["rounds"]
    assert AUTHORS_OPTIMIZER == {"momentum": 0.9, "weight_decay": 1e-2, "server_momentum": 0.9,
                                 "server_weight_decay": 1e-2}


def _fake_records(scores):
    """Sweep-like records: scores[(method, lr, server_lr)] = [per-seed final accuracy]."""
    return [{"config": {"method": m, "kappa2": 1.0, "lr": lr, "server_lr": slr}, "seed": s,
             "result": {"final_accuracy": v, "accuracy": [v]}}
            for (m, lr, slr), vals in scores.items() for s, v in enumerate(vals)]


def test_step_size_configs_and_tuning():
    configs = step_size_configs("leaf", ["unbiased", "cafed"], [0.01, 0.1], [1.0], rounds=3, **AUTHORS_OPTIMIZER)
    assert len(configs) == 4 and {c["method"] for c in configs} == {"unbiased", "cafed"}
    assert all(c["momentum"] == 0.9 and c["rounds"] == 3 for c in configs)
    with pytest.raises(ValueError, match="lrs"):
        step_size_configs("leaf", ["unbiased"], [], [1.0])
    recs = _fake_records({("unbiased", 0.01, 1.0): [0.5, 0.7], ("unbiased", 0.1, 1.0): [0.6, 0.5],
                          ("unbiased", 0.01, 0.3): [0.1, 0.1], ("unbiased", 0.1, 0.3): [0.9, 0.8],
                          ("cafed", 0.01, 1.0): [0.2, 0.3]})
    tuned = tune_step_sizes(recs)
    assert tuned["Unbiased"]["best"] == (0.1, 0.3) and tuned["Unbiased"]["lrs"] == [0.01, 0.1]
    np.testing.assert_allclose(tuned["Unbiased"]["grid"], [[0.1, 0.6], [0.85, 0.55]])
    assert tuned["Unbiased"]["runs"] == {0: recs[6]["result"], 1: recs[7]["result"]}
    assert tuned["CA-Fed (κ̄²=1)"]["best"] == (0.01, 1.0)
    with pytest.raises(TypeError, match="records"):
        tune_step_sizes([{"config": {"method": "unbiased"}, "seed": 0, "result": {}}])
    assert tuned["Unbiased"]["config"] == recs[6]["config"] and tuned["CA-Fed (κ̄²=1)"]["config"] == recs[8]["config"]
    clash = [dict(recs[0], config=dict(recs[0]["config"], rounds=99)), *recs]
    with pytest.raises(ValueError, match="two configs of 'Unbiased'"):
        tune_step_sizes(clash)
    fig, data = plot_step_size_grid(tuned)
    assert data["Unbiased"]["best"] == (0.1, 0.3) and data["Unbiased"]["grid"].shape == (2, 2)
    assert len(fig.axes) == 2


def test_seed_values_and_format_spread():
    runs = {1: {"a": 0.5}, 0: {"a": 0.2}, 2: {"a": 0.8}}
    other = {0: {"a": 0.1}, 1: {"a": 0.1}}
    np.testing.assert_allclose(seed_values(runs, "a"), [0.2, 0.5, 0.8])
    np.testing.assert_allclose(seed_values(runs, "a", other), [0.1, 0.4])
    assert seed_stats(runs, "a") == pytest.approx((0.5, np.std([0.2, 0.5, 0.8])))
    assert format_spread([0.2, 0.5, 0.8]) == f"0.500 ± {np.std([0.2, 0.5, 0.8]):.3f}"
    assert format_spread([0.1, 0.4], scale=100, fmt="{:+.1f}") == "+25.0 [+10.0, +40.0]"
    with pytest.raises(ValueError, match="values"):
        format_spread([])


def test_curves_by_groups_a_swept_key():
    recs = [{"config": {"method": "unbiased", "heterogeneity": h}, "seed": s, "result": {"final_accuracy": h + s}}
            for h in (0.5, 0.0) for s in (0, 1)]
    recs.append({"config": {"method": "cafed", "kappa2": 1.0, "heterogeneity": 0.0}, "seed": 0,
                 "result": {"final_accuracy": 0.3}})
    out = curves_by(recs, "heterogeneity")
    x, runs = out["Unbiased"]
    np.testing.assert_array_equal(x, [0.0, 0.5])
    np.testing.assert_array_equal(runs, [[0.0, 0.5], [1.0, 1.5]])
    np.testing.assert_array_equal(out["CA-Fed (κ̄²=1)"][1], [[0.3]])
    with pytest.raises(ValueError, match="heterogeneity"):
        curves_by([{"config": {"method": "unbiased"}, "seed": 0, "result": {}}], "heterogeneity")


def test_spatial_population_and_digits_splits():
    pop = spatial_population(20)
    assert pop.n_clients == 20 and len(pop.pi) == 10
    np.testing.assert_array_equal(pop.client_pi[::2], SPATIAL_PI)
    np.testing.assert_array_equal(pop.client_lambda[1::2], SPATIAL_LAMBDA)
    trace = pop.simulate(30, rng=0)
    assert np.array_equal(trace[:, 0], trace[:, 1]) and pop.group_names[9] == "cluster 9"
    with pytest.raises(ValueError, match="n_clients"):
        spatial_population(25)
    sizes = {}
    for split in DIGITS_SPLITS:
        d = digits_federation(20, 0, split=split)
        assert d.n_clients == 20
        sizes[split] = d.train.n.numpy()
        y = [set(d.train.y[k, : d.train.n[k]].tolist()) for k in range(20)]
        if split == "iid":
            assert min(len(s) for s in y) >= 5
    assert sizes["iid"].max() - sizes["iid"].min() <= 2
    with pytest.raises(ValueError, match="n_clusters"):
        digits_federation(15, 0, split="cluster")
    r = run_availability(dataset="digits", layout="spatial", split="cluster", n_clients=20, rounds=8,
                         method="cafed", kappa2=0.01, eval_every=8, seed=0)
    frac = exclusion_when_available(r)
    assert set(frac) == set(pop.group_names) and all(0 <= v <= 1 for v in frac.values())
    avail = np.array(r["availability"], bool)
    excl = np.zeros_like(avail)
    for t, c in enumerate(r["excluded"]):
        excl[t, c] = True
    group = np.array(r["group"])
    assert frac["cluster 9"] == pytest.approx((excl & avail)[:, group == 9].sum() / max(avail[:, group == 9].sum(), 1))
    with pytest.raises(ValueError, match="result"):
        exclusion_when_available({"availability": []})
