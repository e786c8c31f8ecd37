"""Plots of the SFedPO chapter (fedlab.sfedpo.plots): assertions on the returned data, never on pixels."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlab.sfedpo.strategies import (theorem2_sweep)
from fedlab.sfedpo.experiments import bound_explorer, make_bound_environment
from fedlab.sfedpo.plots import (plot_bound_decomposition, plot_bound_sweep, plot_bound_vs_accuracy,
                                 plot_client_scores, plot_method_curves, plot_oracle_sweep,
                                 plot_sampling_ratios, plot_state_trajectories, plot_theorem2)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def fake_row(scenario="full"):
    row = {"scenario": scenario, "methods": ["sfedpo", "fedavg_buffer"], "rounds": [0, 5, 10],
           "curves": {"sfedpo": ([20, 80, 90], [0, 1, 1]), "fedavg_buffer": ([20, 79, 89], [0, 1, 1])},
           "diff_curves": {"sfedpo": ([0, 1, 1], [0, 0.1, 0.1]), "fedavg_buffer": ([0, 0, 0], [0, 0, 0])},
           "baseline": "fedavg_buffer"}
    row["sfedpo"] = {"bound": (40.0, 1.0), "diff": (0.5, 0.2)}
    row["fedavg_buffer"] = {"bound": (44.0, 1.0), "diff": (0.0, 0.0)}
    return row


def test_plot_state_trajectories():
    states = np.array([[0, 0, 1, 1, 2, 2], [3, 3, 3, 3, 3, 1]])
    fig, data = plot_state_trajectories(states, n_steps=2, max_steps=4)
    assert data["states"].shape == (2, 4) and data["clients"] == [0, 1]
    assert data["change_rate"] == pytest.approx(3 / 10)
    with pytest.raises(ValueError, match="clients"):
        plot_state_trajectories(states, clients=[5])


def test_plot_sampling_ratios_and_scores():
    a = np.random.default_rng(0).random((4, 3))
    fig, data = plot_sampling_ratios({"DDS": a, "uniform": np.full((4, 3), 0.5)}, pi=np.eye(4, 3))
    assert set(data["alphas"]) == {"DDS", "uniform"}
    with pytest.raises(ValueError, match="alphas"):
        plot_sampling_ratios({})
    fig, data = plot_client_scores({"a": [1, 2, 3], "b": [2, 1, 0]})
    assert data["scores"]["b"].tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match="one value per client"):
        plot_client_scores({"a": [1, 2], "b": [1]})


def test_plot_bound_decomposition_and_sweep():
    out = bound_explorer(make_bound_environment(n_clients=4, seed=0))
    fig, data = plot_bound_decomposition(out)
    assert np.allclose(data["totals"], [out[s]["bound"] for s in out["strategies"]])
    fig, data = plot_bound_sweep([1, 2, 3], {"DDS": [3, 2, 1]}, xlabel="D", marker=2)
    assert data["x"].tolist() == [1, 2, 3] and data["DDS"].tolist() == [3, 2, 1]
    with pytest.raises(ValueError, match="values"):
        plot_bound_sweep([1, 2], {"DDS": [1, 2, 3]}, xlabel="D")


def test_plot_theorem2():
    env = make_bound_environment(n_clients=4, seed=0)
    sw = theorem2_sweep(env["pi"], [0.0, 0.02, 0.05], n_draws=3, rng=0, q=env["q"], d=env["d"], w=env["w"])
    fig, data = plot_theorem2(sw, K=5.0)
    assert data["gap"].shape == (3, 3) and "K_line" in data
    assert data["K_line"][0] == pytest.approx(5.0 * min(d for d in sw["mean_delta_sum"] if d > 1e-9))
    fig, data = plot_theorem2(sw)
    assert "K_line" not in data


def test_plot_method_results():
    fig, data = plot_method_curves(fake_row(), labels={"sfedpo": "SFedPO"})
    assert data["sfedpo"]["mean"].tolist() == [20, 80, 90]
    fig, data = plot_method_curves(fake_row(), relative=True)
    assert data["sfedpo"]["mean"].tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="diff_curves"):
        plot_method_curves({**fake_row(), "diff_curves": {}}, relative=True)
    fig, data = plot_bound_vs_accuracy([fake_row("full"), fake_row("partial")])
    assert data["full"]["bound_change_pct"] == pytest.approx([100 * (40 - 44) / 44])
    assert data["partial"]["acc_diff"].tolist() == [0.5]
    fig, data = plot_oracle_sweep([0, 0.05], {"full": [90, 89]}, {"full": [1, 1]})
    assert data["full"]["mean"].tolist() == [90, 89]
    with pytest.raises(ValueError, match="means"):
        plot_oracle_sweep([0, 0.05], {"full": [90]})


def test_plot_ablations_data():
    from fedlab.sfedpo.plots import plot_ablations

    abl = {"figure": "Fig. 2d", "param": "alpha_budget", "method": "sfedpo", "values": [0.2, 0.6],
           "gain": {"sfedpo_saw": [(0.3, 0.1), (0.1, 0.05)]}}
    fig, data = plot_ablations([abl, {**abl, "param": "a1", "figure": "Fig. 3a"}], labels={"sfedpo": "SFedPO"})
    np.testing.assert_allclose(data["alpha_budget"]["x"], [0.2, 0.6])
    np.testing.assert_allclose(data["alpha_budget"]["gain"]["sfedpo_saw"][0], [0.3, 0.1])
    np.testing.assert_allclose(data["a1"]["gain"]["sfedpo_saw"][1], [0.1, 0.05])
    assert sum(ax.get_visible() for ax in fig.axes) == 2
    with pytest.raises(ValueError, match="ablations"):
        plot_ablations([{"param": "x"}])
