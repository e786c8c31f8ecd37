"""Time simulator (Algorithm 5): its slope is the cycle time (eq. 2.5)."""
import numpy as np
import pytest

from fedlab.topology import (DelayParams, connectivity_graph, cycle_time, load_network, make_connectivity,
                             mst_overlay, overlay_from_edges, preset_params, ring_overlay, rounds_within,
                             simulate_wall_clock, star_overlay)


@pytest.fixture(scope="module")
def aws():
    return connectivity_graph(load_network("aws_na")), preset_params("sub_inaturalist", access_bps=1e9)


@pytest.mark.parametrize("builder", [mst_overlay, ring_overlay])
def test_slope_matches_karp_on_aws_na(aws, builder):
    """F-C12: |max_i t_i(400)/400 - tau| <= 1e-3 tau; every silo within 1e-2 (bounded offsets)."""
    conn, params = aws
    overlay = builder(conn, params)
    tau = cycle_time(overlay, conn, params)
    t = simulate_wall_clock(overlay, conn, params, 400)
    assert t.shape == (401, conn.n) and np.all(t[0] == 0)
    assert abs(t[-1].max() / 400 - tau) <= 1e-3 * tau
    assert np.all(np.abs(t[-1] / 400 - tau) <= 1e-2 * tau)
    assert np.all(np.diff(t, axis=0) > 0)


def test_star_rounds_take_the_star_cycle_time(aws):
    conn, params = aws
    star = star_overlay(conn, params)
    tau = cycle_time(star, conn, params)
    t = simulate_wall_clock(star, conn, params, 50)
    assert np.allclose(np.diff(t[:, 1:], axis=0).max(axis=1), tau)


def test_heterogeneous_compute_and_bounded_deviation():
    rng = np.random.default_rng(0)
    conn = make_connectivity(rng.uniform(5, 40, (6, 6)), rng.uniform(1e8, 1e9, (6, 6)))
    params = DelayParams(model_bits=2e7, compute_ms=rng.uniform(1, 60, 6), local_steps=3,
                         up_bps=rng.uniform(1e8, 1e9, 6), dn_bps=rng.uniform(1e8, 1e9, 6))
    overlay = overlay_from_edges(6, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (4, 1)], directed=True)
    tau = cycle_time(overlay, conn, params)
    t = simulate_wall_clock(overlay, conn, params, 500)
    k = np.arange(501)[:, None]
    deviation = np.abs(t - k * tau)
    assert deviation[-100:].max() <= deviation.max() < 20 * tau   # bounded, not growing with k
    assert t[-1] / 500 == pytest.approx(np.full(6, tau), rel=1e-2)


def test_rounds_within_and_validation(aws):
    conn, params = aws
    overlay = mst_overlay(conn, params)
    t = simulate_wall_clock(overlay, conn, params, 20)
    assert rounds_within(t, t[7].max()) == 7
    assert rounds_within(t, 0.0) == 0
    with pytest.raises(ValueError, match="budget_ms"):
        rounds_within(t, -1.0)
    with pytest.raises(ValueError, match="n_rounds"):
        simulate_wall_clock(overlay, conn, params, -1)
    with pytest.raises(ValueError, match="strongly connected"):
        simulate_wall_clock(overlay_from_edges(conn.n, [(0, 1)], directed=True), conn, params, 3)


def test_growth_rate_is_the_cycle_time(aws):
    from fedlab.topology import growth_rate, ring_overlay

    conn, params = aws
    overlay = ring_overlay(conn, params)
    t = simulate_wall_clock(overlay, conn, params, 60)
    assert growth_rate(t) == pytest.approx(cycle_time(overlay, conn, params), rel=1e-2)
    with pytest.raises(ValueError, match="t must"):
        growth_rate(t[:2])
