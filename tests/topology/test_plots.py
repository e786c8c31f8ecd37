"""Plot helpers of the topology chapter return (fig, data); tests look at data only."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlab.topology import (connectivity_graph, cycle_time, load_network, make_connectivity, mst_overlay,
                             preset_params, ring_overlay, simulate_wall_clock, star_overlay)
from fedlab.topology.plots import layout_positions, plot_cycle_times, plot_overlay, plot_sweep, plot_timeline


@pytest.fixture(scope="module")
def gaia():
    return connectivity_graph(load_network("gaia")), preset_params("sub_inaturalist")


def test_plot_overlay_data(gaia):
    conn, params = gaia
    fig, data = plot_overlay(conn, ring_overlay(conn, params))
    assert data["positions"].shape == (11, 2) and data["arcs"].shape == (11, 2) and data["edges"].size == 0
    assert data["underlay_edges"].shape == (55, 2)
    fig, data = plot_overlay(conn, mst_overlay(conn, params))
    assert data["edges"].shape == (10, 2) and data["arcs"].size == 0
    plt.close("all")


def test_layout_uses_coordinates_or_mds(gaia):
    conn, _ = gaia
    assert np.allclose(layout_positions(conn), conn.positions[:, ::-1])
    xy = np.array([[0, 0], [3, 0], [0, 4]], dtype=float)
    d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    pos = layout_positions(make_connectivity(d, 1e9))
    rebuilt = np.sqrt(((pos[:, None] - pos[None]) ** 2).sum(-1))
    assert np.allclose(rebuilt, d)


def test_plot_cycle_times_data():
    table = {"a": {"star": 3.0, "ring": 1.0}, "b": {"star": 4.0, "ring": 2.0}}
    fig, data = plot_cycle_times(table, paper={"a": {"star": 3.1}})
    assert data["overlays"] == ["star", "ring"] and np.allclose(data["values"], [[3, 1], [4, 2]])
    assert data["paper"][0, 0] == 3.1 and np.isnan(data["paper"][1, 1])
    plt.close("all")


def test_plot_sweep_and_timeline(gaia):
    conn, params = gaia
    fig, data = plot_sweep([1e8, 1e9], {"ring": [2.0, 1.0]}, xlabel="access")
    assert np.allclose(data["curves"]["ring"], [2.0, 1.0])
    with pytest.raises(ValueError, match="curves"):
        plot_sweep([1, 2], {"ring": [1.0]})
    star = star_overlay(conn)
    t = simulate_wall_clock(star, conn, params, 10)
    tau = cycle_time(star, conn, params)
    fig, data = plot_timeline(t, tau)
    assert data["per_round"].shape == (10, 11) and data["tau"] == tau
    plt.close("all")


def test_plot_training_data():
    from fedlab.topology.plots import plot_training

    result = {"curves": {"ring": {"round": [0, 1, 2], "time_s": [0.0, 0.5, 1.0], "train_loss": [2.0, 1.0, 0.5]},
                         "star": {"round": [0, 1, 2], "time_s": [0.0, 2.0, 4.0], "train_loss": [2.0, 1.1, 0.6]}}}
    fig, data = plot_training(result, "train_loss", title="Fig. 2.8")
    assert set(data) == {"ring", "star"}
    assert np.array_equal(data["star"]["time_s"], [0.0, 2.0, 4.0]) and np.array_equal(data["ring"]["values"],
                                                                                       [2.0, 1.0, 0.5])
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="metric"):
        plot_training(result, "test_accuracy")
    with pytest.raises(ValueError, match="axes"):
        plot_training(result, axes=[plt.gca()])
    plt.close("all")


def test_plot_bandwidths_data(gaia):
    from fedlab.topology.plots import plot_bandwidths

    conn = connectivity_graph(load_network("geant"))
    fig, data = plot_bandwidths(conn)
    assert data["mbps"].size == conn.n * (conn.n - 1)
    assert np.allclose(np.sort(data["values"]), np.sort(np.unique(np.round(1000 / conn.hops[conn.hops > 0], 1))))
    assert data["counts"].sum() == data["mbps"].size and data["mbps"].max() == pytest.approx(1000)
    plt.close(fig)
    with pytest.raises(ValueError, match="finite"):
        plot_bandwidths(make_connectivity(np.ones((3, 3)), np.inf))
