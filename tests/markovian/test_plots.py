"""Plots of notebook 09 (fedlab.markovian.plots) added for Figs. 3/4 and the Fig. 7 crossover."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlab.markovian.plots import plot_batch_crossover, plot_curve_panels  # noqa: E402


def test_plot_curve_panels():
    panels = {"K = 10": {"a": [[1.0, 0.5, 0.2], [1.0, 0.7, 0.4]]}, "K = 100": {"a": [1.0, 0.1, 0.01], "b": [2, 1, 1]}}
    fig, data = plot_curve_panels([0, 5, 10], panels, ncols=3, title="Fig. 3")
    assert set(data) == {"K = 10", "K = 100"}
    assert np.allclose(data["K = 10"]["a"]["mean"], [1.0, 0.6, 0.3])
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one panel"):
        plot_curve_panels([0, 1], {})
    with pytest.raises(ValueError, match="ncols"):
        plot_curve_panels([0, 1], {"p": {"a": [1, 2]}}, ncols=0)


def test_plot_batch_crossover():
    x = np.array([[0.1, 1.0, 10.0], [0.01, 0.1, 1.0]])
    ratios = {"Minibatch": np.array([[0.2, 0.9, 1.1], [0.03, 0.2, 1.0]]), "Local": np.ones((2, 3))}
    fig, data = plot_batch_crossover(x, ratios, labels=["τ = 7", "τ = 69"])
    assert np.array_equal(data["k_over_tau"], x) and np.array_equal(data["Minibatch"], ratios["Minibatch"])
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="labels"):
        plot_batch_crossover(x, ratios, labels=["one"])
    with pytest.raises(ValueError, match="band"):
        plot_batch_crossover(x, ratios, band=(2.0, 0.5))
    with pytest.raises(ValueError, match="positive"):
        plot_batch_crossover(-x, ratios)
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="single panel"):
        plot_batch_crossover(x, ratios, ax=ax)
    plt.close(fig)
