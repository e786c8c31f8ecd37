"""Experiments of the online-mixtures notebook (fedlab.online.experiments) and its plots (fedlab.online.plots)."""
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlab.online.data import make_gmm_stream
from fedlab.online.experiments import (LINEAR_RATIO, digits_stream_regret, gmm_regret, late_regret_ratio,
                                       separated_limit_regret, sublinear_from)
from fedlab.online.plots import plot_regret, plot_regret_bounds, plot_weight_paths


def test_late_regret_ratio_reads_the_shape_whatever_the_transient():
    t = np.arange(1, 401)
    assert late_regret_ratio(0.1 * t) == pytest.approx(1.0)
    assert late_regret_ratio(50.0 + 0.1 * t) == pytest.approx(1.0)          # linear after a large transient
    assert late_regret_ratio(3 * t ** 0.5) == pytest.approx((7 / 3) ** -0.5, abs=0.01)
    assert late_regret_ratio(np.minimum(t, 150.0)) == 0.0                   # stops growing
    assert math.isnan(late_regret_ratio(-t.astype(float)))                  # falling: undefined
    assert late_regret_ratio(t ** 0.5) < LINEAR_RATIO < late_regret_ratio(t ** 0.9)
    with pytest.raises(ValueError, match="regret"):
        late_regret_ratio([1.0, 2.0, 3.0])


def test_the_rule_dates_the_sub_linear_regime():
    t = np.arange(1.0, 1001.0)
    assert sublinear_from(t, np.sqrt(t)) == 10                              # sub-linear from the first checkpoint
    assert sublinear_from(t, 0.3 * t) is None                               # linear to the end
    assert sublinear_from(t, 100.0 + 0.3 * t) is None                       # linear after a transient, too
    bent = np.minimum(t, 300.0) + 0.01 * t                                  # linear, then nearly flat
    assert 300 < sublinear_from(t, bent) <= 600
    assert sublinear_from(t, -np.ones(1000)) == 10                          # never above the comparator
    late = np.where(t < 500, 1.0, t - 499.0)                                # flat, then growing
    assert sublinear_from(t, late) is None
    with pytest.raises(ValueError, match="values"):
        sublinear_from(t, t[:5])
    with pytest.raises(ValueError, match="four"):
        sublinear_from(t[:3], t[:3])


def test_gmm_regret_summary_is_json_and_bounds_dominate():
    res = gmm_regret(n_samples=10, n_clients=5, horizon=40, seed=0)
    json.dumps(res)
    assert len(res["t"]) == len(res["mean_regret"]) == len(res["bound_443"]) == len(res["bound_442"]) == 40
    assert len(res["center_error"]) == 41
    assert res["regret_per_step"] == pytest.approx(res["mean_regret"][-1] / 40)
    assert np.all(np.asarray(res["bound_443"]) >= np.asarray(res["mean_regret"]))
    assert res["min_separation"] == pytest.approx(4 * math.sqrt(3))
    assert gmm_regret(n_samples=10, n_clients=5, horizon=40, seed=0) == res
    t, regret = np.arange(1, 41), np.asarray(res["mean_regret"])
    window = t >= 10
    assert res["slope"] == pytest.approx(np.polyfit(np.log(t[window]), np.log(regret[window]), 1)[0])


def test_separated_limit_regret_within_theorem_443_fact_a9():
    for m, alpha, horizon in ((3, 0.1, 1000), (3, 1.0, 1000), (5, 0.5, 2000)):
        for seed in range(2):
            res = separated_limit_regret(n_components=m, alpha=alpha, horizon=horizon, seed=seed)
            assert res["valid"] and res["max_grad"] <= res["grad_bound"]
            assert 0 < res["ratio"] <= 1.0
            assert res["eta"] == pytest.approx(math.sqrt(math.log(m)) / (res["grad_bound"] * math.sqrt(horizon)))
    with pytest.raises(ValueError, match="n_components"):
        separated_limit_regret(n_components=1)


def test_digits_stream_regret_learns_with_persistent_weights():
    res = digits_stream_regret(n_clients=5, horizon=60, weights="fixed", seed=0)
    json.dumps(res)
    assert len(res["t"]) == len(res["fem_omd"]["regret"]) == len(res["single"]["accuracy"]) == 60
    assert res["comparator_accuracy"] > 0.9
    assert res["fem_omd"]["mean_accuracy"] > 0.6 and res["single"]["mean_accuracy"] > 0.6
    assert np.allclose(np.sum(res["final_weights"], 1), 1.0)


def test_plot_regret_data():
    t = np.arange(1, 11)
    runs = np.stack([t * 0.5, t * 1.5])
    fig, data = plot_regret({"a": (t, runs)}, bounds={"b": (t, 3 * t)}, loglog=True, title="x")
    np.testing.assert_allclose(data["a"]["mean"], t)
    np.testing.assert_allclose(data["bounds"]["b"]["y"], 3 * t)
    _, per = plot_regret({"a": (t, runs)}, bounds={"b": (t, 3 * t)}, per_step=True)
    np.testing.assert_allclose(per["a"]["mean"], 1.0)
    np.testing.assert_allclose(per["bounds"]["b"]["y"], 3.0)
    with pytest.raises(ValueError, match="points"):
        plot_regret({"a": (t[:-1], runs)})
    plt.close("all")


def test_plot_regret_bounds_data():
    t = np.logspace(0, 3, 20)
    fig, data = plot_regret_bounds(t, 3, [1, 30])
    assert data[30]["crossover"] == pytest.approx(30 * math.log(3) / 4)
    np.testing.assert_allclose(data[1]["bound"], np.sqrt(t * math.log(3)) + 2 * t)
    with pytest.raises(ValueError, match="n_values"):
        plot_regret_bounds(t, 3, [0])
    plt.close("all")


def test_plot_weight_paths_data():
    ps = np.tile([0.2, 0.8], (30, 1))
    fig, data = plot_weight_paths(np.tile([0.5, 0.5], (31, 1)), ps, window=7)
    assert data["pi"].shape == (30, 2)
    np.testing.assert_allclose(data["pi_star_smooth"], ps)
    ramp = np.stack([np.arange(30.0), np.zeros(30)], 1)
    _, d2 = plot_weight_paths(np.zeros((30, 2)), ramp, window=3)
    np.testing.assert_allclose(d2["pi_star_smooth"][5:, 0], np.arange(4.0, 29.0))
    with pytest.raises(ValueError, match="pi must have shape"):
        plot_weight_paths(np.zeros((5, 2)), ps)
    plt.close("all")


def test_run_fem_omd_gmm_is_the_engine_run_on_the_stream():
    from fedlab.engine import run
    from fedlab.online.algorithms import GaussianFEMOMD, regret_curves
    from fedlab.online.data import GMMEnvironment
    from fedlab.online.experiments import run_fem_omd_gmm

    stream = make_gmm_stream(n_clients=3, horizon=6, seed=1)
    state, history = run_fem_omd_gmm(stream, n_samples=5, n_em_steps=2, lr=0.5, seed=2)
    env = GMMEnvironment(stream.means, stream.weights, n_samples=5, seed=2)
    ref_state, ref = run(GaussianFEMOMD(n_em_steps=2, lr=0.5), env, rounds=6, seed=2, order="evaluate_first")
    np.testing.assert_array_equal(regret_curves(history), regret_curves(ref))
    np.testing.assert_array_equal(state.means, ref_state.means)
    assert history.rounds == list(range(6)) and state.round == 6
    with pytest.raises(TypeError, match="GMMStream"):
        run_fem_omd_gmm(stream.means)


def test_thesis_fig49_configs_and_regret_summary():
    from fedlab.online.experiments import regret_summary, thesis_fig49_configs
    from fedlab.online.published import THESIS_FIG49

    panels = thesis_fig49_configs(horizon=10, dim=3, n_values=(1, 30), c_values=(5, 100), s_values=(1.0,))
    assert [len(panels[k]) for k in ("n", "C", "s")] == [2, 2, 1]
    assert all(c["centers"] == "paper" and c["dim"] == 3 and c["horizon"] == 10 for p in panels.values() for c in p)
    assert [c["n_clients"] for c in panels["C"]] == [5, 100] and all(c["n_samples"] == 1 for c in panels["C"])
    assert panels["n"][0]["n_clients"] == THESIS_FIG49["n_clients"] == 50
    assert panels["s"][0]["spread"] == 1.0 and panels["s"][0]["n_samples"] == 30
    cfg = {**panels["C"][0], "horizon": 12}
    runs = [gmm_regret(**cfg, n_mc_loss=10, seed=s) for s in (0, 1)]
    summary = regret_summary(runs)
    json.dumps(summary)
    assert np.shape(summary["runs"]) == (2, 12)
    assert summary["slope"] == pytest.approx(np.mean([r["slope"] for r in runs]))
    assert summary["rate"] == pytest.approx(np.mean([r["regret_per_step"] for r in runs]))
    with pytest.raises(ValueError, match="horizon"):
        regret_summary([runs[0], gmm_regret(**{**cfg, "horizon": 5}, n_mc_loss=10)])
    with pytest.raises(ValueError, match="horizon"):
        thesis_fig49_configs(horizon=1)


def test_gradient_error_breakdown_splits_at_the_clip():
    from fedlab.engine import History
    from fedlab.online.experiments import gradient_error_breakdown

    history = History()
    history.log = [{"grad_err": [0.1, 50.0], "true_grad_norm": [1.0, 60.0]},
                   {"grad_err": [0.3, 0.2], "true_grad_norm": [2.0, 3.0]}]
    out = gradient_error_breakdown(history, clip=10.0)
    assert out["share_above"] == pytest.approx(0.25) and out["mean_above"] == pytest.approx(50.0)
    assert out["mean_below"] == pytest.approx(0.2) and out["share_of_total"] == pytest.approx(50.0 / 50.6)
    assert out["max_true_norm"] == 60.0 and out["mean"] == pytest.approx(50.6 / 4)
    assert math.isnan(gradient_error_breakdown(history, clip=100.0)["mean_above"])
    stream = make_gmm_stream(n_clients=3, horizon=5, seed=0)
    from fedlab.online.experiments import run_fem_omd_gmm

    real = gradient_error_breakdown(run_fem_omd_gmm(stream, n_samples=5, n_mc_loss=10)[1])
    assert 0.0 <= real["share_above"] <= 1.0 and real["median"] <= real["mean"] + 1e-12


def test_digits_stream_regret_has_the_fedomd_baseline():
    res = digits_stream_regret(n_clients=3, horizon=20, seed=0)
    assert len(res["fedomd"]["regret"]) == len(res["fedomd"]["accuracy"]) == 20
    assert 0.0 <= res["fedomd"]["mean_accuracy"] <= 1.0
    slower = digits_stream_regret(n_clients=3, horizon=20, lr_fedomd=1e-4, seed=0)
    assert slower["fem_omd"] == res["fem_omd"] and slower["fedomd"] != res["fedomd"]


def test_plot_regret_panels_data():
    from fedlab.online.plots import plot_regret_panels

    t = np.arange(1, 6)
    panels = {"left": {"a": (t, np.stack([t, 2 * t]))}, "right": {"b": (t, np.stack([t ** 0.5]))}}
    fig, data = plot_regret_panels(panels, loglog=True, suptitle="Fig. 4.9")
    np.testing.assert_allclose(data["left"]["a"]["mean"], 1.5 * t)
    np.testing.assert_allclose(data["right"]["b"]["mean"], t ** 0.5)
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="panels"):
        plot_regret_panels({})
