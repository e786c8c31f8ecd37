"""Experiment functions of notebook 08 (fedlab.dynamic.experiments) and the plot helpers of fedlab.dynamic.plots."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlab.dynamic.bounds import dfl_opt_mu
from fedlab.experiments import grid, sweep
from fedlab.dynamic.experiments import (db, dfl_learning_curves, dfl_logistic_curves, dfl_logistic_setup,
                                        dfl_logistic_step_sweep, dfl_normalization_bias, dfl_setup,
                                        dfl_step_sweep)
from fedlab.dynamic.plots import plot_msd_vs_step, plot_normalization_bias
from fedlab.markovian.plots import plot_log_curves, plot_loglog


@pytest.fixture(scope="module")
def small_sweep():
    return dfl_step_sweep(lrs=(0.01, 0.1, 1.0), drift_vars=(0.0, 1e-3), n_iters=600, tail=300, n_grid=20, seed=0)


def test_setup_is_seed_deterministic():
    p1, e1, b1 = dfl_setup(3)
    p2, e2, b2 = dfl_setup(3)
    assert np.array_equal(p1.feature_var, p2.feature_var) and np.array_equal(e1, e2) and np.array_equal(b1, b2)
    assert e1.min() >= 1 and e1.max() <= 10 and b1.min() >= 10 and b1.max() <= 20


def test_step_sweep_output(small_sweep):
    r = small_sweep
    assert np.shape(r["steady"]) == (2, 3) and np.shape(r["bound_fine"]) == (2, 20)
    assert np.allclose(r["steady_db"], db(r["steady"]))
    c = r["constants"]
    assert r["mu_star"][1] == pytest.approx(dfl_opt_mu(c["strong_nu"], c["delta"], c["beta_s2"], c["sigma_s2"],
                                                       c["eps2"], 1e-3))
    assert r["mu_star"][0] == 0.0 and r["bound"][0][2] == float("inf")      # mu = 1 beyond the validity range
    assert r["mu_max"] == pytest.approx(2 * c["strong_nu"] / (c["delta"] ** 2 + c["beta_s2"]))
    assert r["argmin_measured"][1] in r["lrs"]
    res = sweep(dfl_step_sweep, grid(lrs=[(0.05, 0.1)], drift_vars=[(1e-4,)], n_iters=50, tail=10, n_grid=5),
                seeds=[0, 1], executor="sequential")
    assert len(res) == 2 and res[0]["result"]["steady"] != res[1]["result"]["steady"]


def test_learning_curves_and_bias():
    r = dfl_learning_curves(lrs=[0.01, 0.1], n_iters=400, tail=100, every=50, seed=0)
    assert r["iterations"] == list(range(0, 401, 50)) and np.shape(r["msd_db"]) == (2, 9)
    assert r["floor"][1] > r["floor"][0] and r["iters_to_3db"][1] < r["iters_to_3db"][0]
    vbar = dfl_setup(0)[0].feature_var.mean()
    expected = 100 * 20 * np.log10(1 - 0.01 * vbar)                       # (1 - mu vbar)^2 per iteration, in dB
    assert r["decay_db_per_100"][0] == pytest.approx(expected, rel=0.15)
    b = dfl_normalization_bias(lrs=(0.01, 0.1), n_iters=2000, seed=0)
    assert np.allclose(b["closed_form"]["normalized"], b["simulated"]["normalized"], rtol=1e-6)
    assert np.allclose(b["closed_form"]["unnormalized"], b["simulated"]["unnormalized"], rtol=1e-6)
    assert db([1.0, 0.1]) == pytest.approx([0.0, -10.0])


def test_plot_msd_vs_step(small_sweep):
    r = small_sweep
    steady = np.array([r["steady"], r["steady"]])
    fig, data = plot_msd_vs_step(r["lrs"], steady, r["drift_vars"], fine_lrs=r["fine_lrs"], bound=r["bound_fine"],
                                 prediction=r["prediction_fine"], mu_star=r["mu_star"])
    assert np.allclose(data["sim_db_mean"], db(r["steady"])) and np.allclose(data["sim_db_std"], 0)
    assert data["bound_db"].shape == (2, 20) and np.allclose(data["mu_star"], r["mu_star"])
    plt.close(fig)
    with pytest.raises(ValueError, match="shape"):
        plot_msd_vs_step(r["lrs"], np.ones((2, 2)), r["drift_vars"])


def test_other_plots():
    fig, data = plot_normalization_bias([0.01, 0.1], [1e-4, 1e-3], [2e-2, 3e-2])
    assert np.allclose(data["normalized"], [1e-4, 1e-3])
    plt.close(fig)
    fig, data = plot_log_curves([0, 1, 2], {"a": [1.0, 0.5, 0.2], "b": [[1.0, 0.4, 0.1], [1.0, 0.6, 0.3]]})
    assert np.allclose(data["b"]["mean"], [1.0, 0.5, 0.2])
    plt.close(fig)
    fig, data = plot_loglog([1, 10, 100], {"a": [1.0, 0.1, 0.01]}, xlabel="M")
    assert data["slopes"]["a"] == pytest.approx(-1.0)
    plt.close(fig)
    with pytest.raises(ValueError, match="points"):
        plot_log_curves([0, 1], {"a": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="positive"):
        plot_loglog([0, 1], {"a": [1.0, 2.0]})


def test_logistic_setup_and_step_sweep():
    ls, e_ls, b_ls = dfl_setup(3)
    lg, e_lg, b_lg = dfl_logistic_setup(3)
    assert np.array_equal(ls.feature_var, lg.feature_var) and np.array_equal(e_ls, e_lg) and np.array_equal(b_ls, b_lg)
    r = dfl_logistic_step_sweep(lrs=(0.03, 0.3), drift_vars=(0.0, 1e-2), n_agents=6, n_active=3, n_iters=60, tail=30)
    assert np.array(r["steady"]).shape == (2, 2) and len(r["argmin_measured"]) == 2
    assert np.allclose(r["steady_db"], 10 * np.log10(r["steady"]))
    assert r["steady"][1][0] > r["steady"][0][0]                # drift raises the MSD at a small step
    assert r["optimum_norm"] > 0
    with pytest.raises(ValueError, match="drift_vars"):
        dfl_logistic_step_sweep(drift_vars=(), n_iters=2, tail=1)


def test_logistic_curves():
    r = dfl_logistic_curves(lrs=[0.1, 1.0, 0.1], drift_vars=0.0, offset_vars=[0.1, 0.1, 1.0], n_agents=6, n_active=3,
                            n_iters=100, tail=30, every=20)
    assert r["iterations"] == [0, 20, 40, 60, 80, 100] and np.array(r["msd_db"]).shape == (3, 6)
    assert r["lr"] == [0.1, 1.0, 0.1] and r["offset_var"] == [0.1, 0.1, 1.0]
    assert r["iters_to_3db"][1] < r["iters_to_3db"][0]          # the larger step converges faster
    assert len(r["curvature"]) == 3 and r["curvature"][2] > r["curvature"][0] > 0.02
    with pytest.raises(ValueError, match="offset_vars"):
        dfl_logistic_curves(offset_vars=[], n_iters=2, tail=1)
