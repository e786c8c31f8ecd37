"""Plots of the data-streams chapter (fedlab.streams.plots): assertions on the returned data."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlab.streams.bounds import optimal_p_hist
from fedlab.streams.data import ConstantArrivals, simulate_memory
from fedlab.streams.plots import (plot_bound_explorer, plot_bound_tradeoff, plot_client_weights,
                                  plot_memory_schedule, plot_p_hist_curve, plot_psi_gaps,
                                  plot_p_hist_vs_ratio, plot_strategy_comparison)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_plot_memory_schedule():
    s = simulate_memory(ConstantArrivals(1).counts(6), 3, "fifo")
    _, data = plot_memory_schedule(s)
    assert data["sizes"].tolist() == [1, 2, 3, 3, 3, 3] and data["stay_times"].max() == 3
    with pytest.raises(ValueError, match="schedule"):
        plot_memory_schedule(np.zeros(3))


def test_plot_p_hist_vs_ratio():
    _, data = plot_p_hist_vs_ratio((0.05, 0.2), 50, 25, ratios=[0.01, 0.15, 10.0], mark=0.15)
    assert np.allclose(data["p_hist"][0.2], optimal_p_hist(np.array([0.01, 0.15, 10.0]), 0.2, 25))
    assert data["threshold"][0.05] == pytest.approx(np.sqrt(0.05 / 25)) and data["mark"] == 0.15
    with pytest.raises(ValueError, match="m_hist"):
        plot_p_hist_vs_ratio((0.2,), 5, 5)


def test_plot_bound_tradeoff():
    _, data = plot_bound_tradeoff((0.2,), 50, 25, ratios=[1e-3, 1e3])
    assert data["p_hist"][0.2][0] == 1.0 and data["n_eff_ratio"][0.2][0] == pytest.approx(0.2)
    assert data["noise"][0.2][-1] == pytest.approx(1.0, abs=1e-3)  # Uniform's noise


def test_plot_psi_gaps():
    _, data = plot_psi_gaps((0.15,), 50, 25, h_values=[0.05, 0.25, 0.5])
    assert data["crossover"][0.15] == pytest.approx(0.25)
    assert data["hist_minus_unif"][0.15][1] == pytest.approx(0.0, abs=1e-12)
    assert data["gap_hist"][0.15][0] == pytest.approx(0.33729, abs=1e-5)


def test_plot_client_weights():
    _, data = plot_client_weights([0.3, 0.2, 0.5], 2, n=[0.2, 0.2, 0.6])
    assert data["m_hist"] == 2 and np.allclose(data["n"], [0.2, 0.2, 0.6])
    with pytest.raises(ValueError, match="m_hist"):
        plot_client_weights([0.5, 0.5], 3)


def test_plot_bound_explorer():
    _, data = plot_bound_explorer(0.15, 0.2, 50, 25)
    assert data["readout"]["p_hist"] == pytest.approx(0.452195, abs=1e-6)
    assert data["readout"]["n_eff_ratio"] == pytest.approx(0.7156, abs=1e-4)
    assert data["readout"]["psi_star"] * np.sqrt(25) == pytest.approx(0.28689 * 5, abs=1e-4)
    assert data["readout"]["crossover_h"] == pytest.approx(0.25)
    _, unequal = plot_bound_explorer(0.15, 0.2, 10, 5, unequal=True, seed=1)
    assert np.isclose(unequal["p"].sum(), 1) and np.ptp(unequal["n"][5:]) > 0
    with pytest.raises(ValueError, match="h must"):
        plot_bound_explorer(0.15, 1.0)


def _row():
    return {"h": 0.2, "metric": "acc", "h_mean": 0.2, "p_hat_mean": 0.4, "p_hat_std": 0.01,
            "grid": [0, 0.5, 1], "grid_mean": [70, 72, 69], "grid_std": [1, 1, 1],
            **{f"{s}_{k}": v for s in ("fresh", "historical", "uniform", "ours", "optimal")
               for k, v in (("mean", 71.0), ("std", 0.5))}}


def test_plot_strategy_comparison_and_curve():
    _, data = plot_strategy_comparison([_row(), {**_row(), "h": 0.5}])
    assert data["groups"] == [0.2, 0.5] and data["ours"]["mean"].tolist() == [71.0, 71.0]
    _, curve = plot_p_hist_curve(_row())
    assert curve["mean"].tolist() == [70, 72, 69] and curve["ours"] == (0.4, 71.0)
