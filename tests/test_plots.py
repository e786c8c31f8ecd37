import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from fedlab.engine import run
from fedlab.primer.algorithms import QuadraticFedAvg, drift_paths
from fedlab.primer.data import QuadraticClients
from fedlab.plots import (check_axes, figure_axes, plot_client_drift, plot_curves, plot_label_histograms,
                          plot_method_bars)


def test_plot_label_histograms_returns_counts():
    h = np.array([[3, 0, 1], [0, 2, 2]])
    fig, data = plot_label_histograms(h, title="t")
    assert np.array_equal(data["histograms"], h) and data["sizes"].tolist() == [4, 4]
    with pytest.raises(ValueError, match="histograms"):
        plot_label_histograms(np.ones(3))


def test_plot_curves_mean_and_std():
    x = np.arange(3)
    fig, data = plot_curves({"a": (x, [[1, 2, 3], [3, 4, 5]])}, ylabel="acc")
    assert np.allclose(data["a"]["mean"], [2, 3, 4]) and np.allclose(data["a"]["std"], [1, 1, 1])


def test_plot_client_drift_passes_the_paths_through():
    clients = QuadraticClients(np.array([[1.0, 0.0], [0.0, 1.0]]), np.stack([np.eye(2)] * 2), np.array([0.5, 0.5]))
    _, history = run(QuadraticFedAvg(np.zeros(2), local_steps=2, lr=0.1), clients, rounds=3, progress=False)
    server, local = drift_paths(history)
    fig, data = plot_client_drift(clients, server, local, optimum=clients.optimum())
    assert data["local"].shape == (3, 2, 3, 2) and np.allclose(data["optimum"], [0.5, 0.5])


def test_check_axes_and_figure_axes():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    assert check_axes("ax", None) is None and check_axes("ax", axes[0]) is axes[0]
    assert check_axes("axes", axes, 2) is axes
    for value, n in (("ax", None), (3, None), (axes, None), (axes, 3), ([axes[0], "x"], 2)):
        with pytest.raises(TypeError, match="must be None or"):
            check_axes("axes", value, n)
    assert figure_axes(axes[1]) == (fig, axes[1])
    with pytest.raises(ValueError, match="figsize must be two positive sizes"):
        figure_axes(None, (0, 3))
    plt.close("all")


def test_plot_method_bars():
    res = {"FedAvg": {"average": [0.7, 0.72], "bottom_decile": [0.6, 0.62]},
           "FedEM": {"average": [0.85, 0.83], "bottom_decile": [0.75, 0.73]}}
    fig, data = plot_method_bars(res)
    assert data["FedEM"]["average"]["mean"] == pytest.approx(84.0)
    assert data["FedAvg"]["bottom_decile"]["std"] == pytest.approx(1.0)
