"""Plots of the kNN-Per chapter (fedlab.knnper.plots): assertions on the returned data, never on pixels."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlab.knnper.bounds import lambda_preference_threshold, theorem_3_6_1
from fedlab.knnper.plots import (plot_accuracy_surface, plot_bound, plot_lambda_curves, plot_lambda_opt,
                                 plot_prediction, plot_quality, plot_shift)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_plot_accuracy_surface():
    acc = np.array([[0.8, 0.8, 0.8], [0.8, 0.9, 0.85]])
    fig, data = plot_accuracy_surface([0.0, 1.0], [0.0, 0.5, 1.0], acc, marker=(0.5, 1.0), title="t")
    assert data["best"] == (0.5, 1.0) and np.array_equal(data["accuracy"], acc)
    with pytest.raises(ValueError, match="accuracy"):
        plot_accuracy_surface([0.0, 1.0], [0.0, 1.0], acc)


def test_plot_lambda_curves():
    fig, data = plot_lambda_curves([0, 0.5, 1], {"k=1": [0.8, 0.9, 0.85], "k=5": [[0.8, 0.9, 0.8], [0.9, 0.9, 0.9]]})
    assert np.allclose(data["k=5"]["mean"], [0.85, 0.9, 0.85]) and np.allclose(data["k=1"]["std"], 0)
    with pytest.raises(ValueError, match="points"):
        plot_lambda_curves([0, 1], {"bad": [0.1, 0.2, 0.3]})


def test_plot_lambda_opt():
    fig, data = plot_lambda_opt([[10, 20, 30, 0]], [[0.1, 0.5, 0.9, -1]])
    assert data["sizes"].tolist() == [10, 20, 30] and data["correlation"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same number"):
        plot_lambda_opt([1, 2], [0.1])


def test_plot_quality_and_shift():
    fig, data = plot_quality([0.5, 0.9], {"kNN": [0.7, 0.92]})
    assert np.array_equal(data["kNN"], [0.7, 0.92])
    fig, data = plot_shift(range(4), {"fifo": [0.9, 0.9, 0.5, 0.8]}, 2, baseline=[0.8] * 4)
    assert np.array_equal(data["global"], [0.8] * 4)
    with pytest.raises(ValueError):
        plot_shift(range(4), {"fifo": [0.9]}, 2)


def test_plot_prediction():
    fig, data = plot_prediction([1.0, 0.0], [0.3, 0.7], 0.6, true_label=0)
    assert np.allclose(data["mixture"], [0.72, 0.28]) and data["prediction"] == 0


def test_plot_bound_data_matches_the_calculator():
    args = (0.05, 0.3, 5000, 2, 10, 0.5, 0.5)
    fig, data = plot_bound(*args, n_t_values=(10, 1000))
    assert np.allclose(data["vs_lambda"][10], theorem_3_6_1(data["lambdas"], *args[:2], 10, *args[2:]))
    assert data["threshold"] == pytest.approx(lambda_preference_threshold(*args))
    assert np.allclose(data["bound_lambda0"], data["bound_lambda0"][0])  # λ = 0 does not depend on n_t
    assert np.all(np.diff(data["bound_lambda1"]) <= 1e-12)


def test_plot_sensitivity():
    from fedlab.knnper.plots import plot_sensitivity

    fig, data = plot_sensitivity([1, 7, 10, 14], [[0.9, 0.8, 0.82, 0.81], [0.9, 0.8, 0.84, 0.81]],
                                 [0.1, 1.0, 1000.0], [0.9, 0.85, 0.5])
    assert data["by_k"].tolist() == pytest.approx([0.9, 0.8, 0.83, 0.81])
    assert data["k_spread"] == pytest.approx(0.03) and data["sigma_spread"] == pytest.approx(0.05)
    with pytest.raises(ValueError, match="k_span"):
        plot_sensitivity([1, 2], [0.5, 0.5], [1.0], [0.5], k_span=(5, 2))
    with pytest.raises(ValueError, match="sigma_values"):
        plot_sensitivity([1, 2], [0.5, 0.5], [0.0], [0.5])
