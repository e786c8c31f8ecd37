"""Experiments of the online-mixtures notebook (fedlab.online.experiments) and its plots (fedlab.online.plots)."""
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlab.online.experiments import (DIGITS_STREAM_MODES, GMM_CENTERS, DigitsMixtureStream,
                                       digits_stream_regret, gmm_regret, loglog_slope, make_gmm_stream,
                                       separated_limit_regret)
from fedlab.online.plots import plot_regret, plot_regret_bounds, plot_weight_paths


def test_make_gmm_stream_every_center_mode():
    for centers in GMM_CENTERS:
        s = make_gmm_stream(n_components=3, dim=2, n_clients=4, horizon=6, spread=2.0, centers=centers, seed=1)
        assert s.means.shape == (3, 2) and s.weights.shape == (6, 4, 3)
        assert np.allclose(s.weights.sum(-1), 1.0) and s.weights.min() >= 1e-12 * 0.99
        assert (s.n_components, s.dim, s.n_clients, s.horizon) == (3, 2, 4, 6)
    circle = make_gmm_stream(n_components=3, spread=2.0, seed=0)
    assert circle.min_separation == pytest.approx(2.0 * math.sqrt(3))
    assert np.allclose(np.linalg.norm(circle.means, axis=1), 2.0)
    again = make_gmm_stream(n_components=3, spread=2.0, seed=0)
    np.testing.assert_array_equal(circle.weights, again.weights)
    assert make_gmm_stream(n_components=1, horizon=2).min_separation == math.inf
    with pytest.raises(ValueError, match="dim"):
        make_gmm_stream(dim=1)
    with pytest.raises(ValueError, match="alpha"):
        make_gmm_stream(alpha=0.0)
    with pytest.raises(ValueError, match="centers"):
        make_gmm_stream(centers="grid")


def test_loglog_slope():
    t = np.arange(1, 401)
    assert loglog_slope(t, 3 * t ** 0.5) == pytest.approx(0.5)
    assert loglog_slope(t, 0.1 * t) == pytest.approx(1.0)
    assert math.isnan(loglog_slope(t, t - 200.0))
    with pytest.raises(ValueError, match="values"):
        loglog_slope(t, t[:-1])
    with pytest.raises(ValueError, match="window"):
        loglog_slope([1.0, 2.0], [1.0, 2.0], start=0.9)


def test_gmm_regret_summary_is_json_and_bounds_dominate():
    res = gmm_regret(n_samples=10, n_clients=5, horizon=40, seed=0)
    json.dumps(res)
    assert len(res["t"]) == len(res["mean_regret"]) == len(res["bound_443"]) == len(res["bound_442"]) == 40
    assert len(res["center_error"]) == 41
    assert res["regret_per_step"] == pytest.approx(res["mean_regret"][-1] / 40)
    assert np.all(np.asarray(res["bound_443"]) >= np.asarray(res["mean_regret"]))
    assert res["min_separation"] == pytest.approx(4 * math.sqrt(3))
    assert gmm_regret(n_samples=10, n_clients=5, horizon=40, seed=0) == res


def test_separated_limit_regret_within_theorem_443_fact_a9():
    for m, alpha, horizon in ((3, 0.1, 1000), (3, 1.0, 1000), (5, 0.5, 2000)):
        for seed in range(2):
            res = separated_limit_regret(n_components=m, alpha=alpha, horizon=horizon, seed=seed)
            assert res["valid"] and res["max_grad"] <= res["grad_bound"]
            assert 0 < res["ratio"] <= 1.0
            assert res["eta"] == pytest.approx(math.sqrt(math.log(m)) / (res["grad_bound"] * math.sqrt(horizon)))
    with pytest.raises(ValueError, match="n_components"):
        separated_limit_regret(n_components=1)


def test_digits_stream_every_mode():
    for mode in DIGITS_STREAM_MODES:
        s = DigitsMixtureStream(n_clients=3, n_components=3, n_samples=5, n_test=2, mode=mode, seed=0)
        d = s(4)
        assert d.n_clients == 3 and d.train.x.shape == (3, 5, 64) and d.test.x.shape == (3, 2, 64)
        raw = s.samples(4)
        for x, y, z in zip(raw["x"], raw["y"], raw["z"]):
            if mode == "label_groups":
                assert np.all(s.groups[y] == z)               # labels of a component lie in its class group
            else:
                idx = [int(np.flatnonzero((s.x == xi).all(1))[0]) for xi in x]
                np.testing.assert_array_equal(y, s.permutations[z, s.y[idx]])
        np.testing.assert_array_equal(s(4).train.x, d.train.x)  # deterministic in (seed, t)
        assert not np.allclose(s.weights(1), s.weights(2))
    fixed = DigitsMixtureStream(n_clients=3, weights="fixed", seed=0)
    np.testing.assert_array_equal(fixed.weights(1), fixed.weights(7))
    x, y = fixed.pooled(3)
    assert x.shape == (3 * 3 * 6, 64) and y.shape == (54,)
    with pytest.raises(ValueError, match="n_components"):
        DigitsMixtureStream(n_components=11)
    with pytest.raises(ValueError, match="weights"):
        DigitsMixtureStream(weights="drift")


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
    from fedlab.online.algorithms import GaussianFEMOMD, GMMEnvironment, regret_curves
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
    from fedlab.online.experiments import THESIS_FIG49, regret_summary, thesis_fig49_configs

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
