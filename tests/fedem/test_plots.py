"""Plot helpers of the FedEM chapter: assert on the returned data, never on pixels."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlab.data import make_gaussian_mixture
from fedlab.gmm import federated_gmm_em
from fedlab.fedem.plots import (plot_clustered_tolerance, plot_effect_of_m, plot_gmm_em, plot_simplex,
                                 simplex_coordinates)


def teardown_function():
    plt.close("all")


def test_plot_gmm_em():
    s = make_gaussian_mixture(2, 2, 200, means=[[-4, 0], [4, 0]], rng=0)
    states, history = federated_gmm_em(s.x, 2, n_iter=5, seed=0)
    fig, data = plot_gmm_em(s.x, states, history, 5)
    assert data["means"].shape == (2, 2) and data["assignment"].shape == (200,)
    assert np.allclose(data["weights"], states[5].weights[0]) and data["iteration"] == 5
    np.testing.assert_array_equal(data["log_likelihood"], history.curve("log_likelihood")[1])
    assert len(np.unique(data["assignment"])) == 2
    _, first = plot_gmm_em(s.x, states, history, 0)
    np.testing.assert_array_equal(first["means"], states[0].means)
    with pytest.raises(ValueError, match="iteration"):
        plot_gmm_em(s.x, states, history, 6)
    with pytest.raises(ValueError, match="2 columns"):
        plot_gmm_em(np.zeros((3, 3)), states, history, 0)
    with pytest.raises(ValueError, match="history"):
        plot_gmm_em(s.x, states[:3], history, 0)




def test_plot_effect_of_m():
    fig, data = plot_effect_of_m([1, 2, 3], [[0.7, 0.8, 0.85], [0.72, 0.8, 0.83]], [[0.6, 0.7, 0.75]] * 2,
                                 highlight=2)
    assert np.allclose(data["average"]["mean"], [71, 80, 84]) and data["highlight"] == 2


def test_simplex():
    xy = simplex_coordinates(np.eye(3))
    assert np.allclose(xy, [[0, 0], [1, 0], [0.5, np.sqrt(3) / 2]])
    fig, data = plot_simplex(np.full((4, 3), 1 / 3), np.eye(3)[[0, 1, 2, 0]])
    assert np.allclose(data["true"], [[0.5, np.sqrt(3) / 6]] * 4) and data["learned"].shape == (4, 2)
    with pytest.raises(ValueError, match="3 entries on its last axis"):
        simplex_coordinates(np.full((2, 2), 0.5))


def test_plot_clustered_tolerance():
    fig, data = plot_clustered_tolerance([1.6, 0.8, 0.4], [[0.7, 0.8, 0.9], [0.6, 0.8, 0.7]], [[1, 2, 16], [1, 2, 14]],
                                         references={"FedAvg": 0.65})
    np.testing.assert_allclose(data["mean"], [65.0, 80.0, 80.0])
    np.testing.assert_allclose(data["clusters"], [1, 2, 15])
    assert data["references"] == {"FedAvg": 65.0} and len(fig.axes) == 2
    with pytest.raises(ValueError, match="average"):
        plot_clustered_tolerance([1.0, 2.0], [[0.5]], [[1]])
