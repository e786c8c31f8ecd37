"""Experiments of the data-streams chapter (fedlab.streams.experiments)."""
import math
import json

import numpy as np
import pytest
import torch

from fedlab.experiments import sweep
from fedlab.streams.algorithms import PRESETS
from fedlab.streams.experiments import (OPTIMIZERS, STRATEGY_ORDER, LinearNoBias, bayes_accuracy_draws,
                                        compare_strategies, estimate_constants, excess_risk, summarize)

SMALL = dict(n_total=200, horizon=5, m_hist=2, m_fresh=2, dim=4, local_steps=2, batch_size=8, test_per_client=20,
             estimate_steps=3, grid=(0.0, 0.5, 1.0))


def test_linear_no_bias_and_excess_risk():
    model = LinearNoBias(3)
    p = model.init(torch.Generator().manual_seed(0))
    assert torch.all(p["bias"] == 0) and torch.all(p["weight"] == 0)
    x = torch.randn(2, 5, 3)
    stacked = {k: v.unsqueeze(0).repeat(2, *[1] * v.dim()) for k, v in p.items()}
    stacked["bias"] = stacked["bias"] + 1.0  # ignored by the forward pass
    _, grads = model.loss_and_grad_stacked(stacked, x, torch.randn(2, 5), None)
    assert torch.all(grads[1] == 0)
    assert torch.allclose(model.forward_stacked(stacked, x), torch.zeros(2, 5, 1))
    theta = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    params = {"weight": torch.tensor([[0.5, 0.5, 0.0]]), "bias": torch.zeros(1)}
    assert excess_risk(params, theta, [0.5, 0.5]) == pytest.approx(0.0)
    params["weight"] = torch.tensor([[1.5, 0.5, 0.0]])
    assert excess_risk(params, theta, [0.5, 0.5]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("task", ["logistic", "linear"])
def test_compare_strategies_small(task):
    res = compare_strategies(task=task, h=0.3, seed=0, lr=0.2, **SMALL)
    json.dumps(res)
    assert set(res["values"]) == set(STRATEGY_ORDER) and len(res["grid_values"]) == 3
    assert res["h"] <= res["p_hat"] <= 1 and res["ratio"] > 0
    # Fresh and Historical are the grid's end points, trained on the same data from the same model
    assert res["values"]["fresh"] == pytest.approx(res["grid_values"][0])
    assert res["values"]["historical"] == pytest.approx(res["grid_values"][-1])
    best = max(res["grid_values"]) if task == "logistic" else min(res["grid_values"])
    assert res["best_grid_value"] == best
    assert res == compare_strategies(task=task, h=0.3, seed=0, lr=0.2, **SMALL) | {"seconds": res["seconds"]}


def test_summarize_over_seeds():
    records = sweep(compare_strategies, [dict(h=0.3, **SMALL)], seeds=[0, 1], executor="sequential", progress=False)
    rows = summarize(records)
    assert len(rows) == 1
    row = rows[0]
    assert row["n_seeds"] == 2 and len(row["grid_mean"]) == 3
    for s in (*STRATEGY_ORDER, "optimal"):
        assert f"{s}_mean" in row and f"{s}_std" in row
    vals = [r["result"]["values"]["historical"] - r["result"]["values"]["uniform"] for r in records]
    assert row["hist_minus_unif_mean"] == pytest.approx(np.mean(vals), abs=1e-3)
    assert len(row["ours_minus_best_seeds"]) == 2
    assert summarize([{"config": {}, "seed": 0, "result": None, "error": "x"}]) == []


def test_estimate_constants_on_logistic_data():
    from fedlab.engine import ClientData
    from fedlab.models import LinearModel
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (40, 5)).astype(np.float32) for _ in range(3)]
    ys = [(x @ np.ones(5) > 0).astype(np.int64) for x in xs]
    model = LinearModel(5, 2, zero_init=True)
    c = estimate_constants(model, ClientData.from_arrays(xs, ys), steps=10, lr=0.5, seed=0)
    assert c["loss_bound"] == pytest.approx(math.log(2), abs=1e-6)  # zero init: loss ln 2
    assert c["grad_bound"] > 0 and c["diameter"] > 0 and c["d"] == 12
    assert c == estimate_constants(model, ClientData.from_arrays(xs, ys), steps=10, lr=0.5, seed=0)  # same seed
    with pytest.raises(TypeError, match="ClientData"):
        estimate_constants(model, xs)


@pytest.mark.parametrize("optimizer", ["fedprox", "scaffold"])
def test_compare_strategies_other_optimizers(optimizer):
    base = compare_strategies(seed=0, **SMALL)
    out = compare_strategies(seed=0, optimizer=optimizer, **SMALL)
    assert out["ratio"] == base["ratio"] and out["bayes"] == base["bayes"]   # same data and estimate
    assert 50 <= out["bayes"] <= 100 and all(0 <= v <= 100 for v in out["values"].values())
    assert out["values"] != base["values"]
    with pytest.raises(ValueError, match="optimizer"):
        compare_strategies(optimizer="adam", **SMALL)


def test_bayes_accuracy_bounds_the_strategies_on_average():
    out = compare_strategies(seed=0, **{**SMALL, "n_total": 2000, "horizon": 10})
    assert out["bayes"] >= max(out["values"].values()) - 5    # a ceiling, up to test-set noise
    assert compare_strategies(task="linear", seed=0, **SMALL)["bayes"] is None


def test_optimizers_are_the_chapter_presets():
    assert set(OPTIMIZERS.values()) <= set(PRESETS)
    assert PRESETS[OPTIMIZERS["fedprox"]].solver_options == {"prox_mu": 0.1}


def test_bayes_accuracy_draws():
    acc = bayes_accuracy_draws(50, n_samples=2000, seed=0)
    assert acc.shape == (50,) and np.all((50 <= acc) & (acc <= 100))
    assert np.array_equal(acc, bayes_accuracy_draws(50, n_samples=2000, seed=0))
    assert not np.array_equal(acc, bayes_accuracy_draws(50, n_samples=2000, seed=1))
    # a larger d gives more separable clients
    assert bayes_accuracy_draws(20, dim=200, n_samples=500).mean() > acc.mean()
    with pytest.raises(ValueError, match="n_draws"):
        bayes_accuracy_draws(0)
