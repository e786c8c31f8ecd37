"""Experiment helpers (compare_overlays, ranking) and the paper's tables (fedlab.topology.paper)."""
import numpy as np
import pytest

from fedlab.topology.experiments import ALL_OVERLAYS, compare_overlays, matcha_schedules, ranking
from fedlab.topology import connectivity_graph, load_network, make_connectivity, preset_params
from fedlab.topology.paper import KNOWN_ERRATA, NETWORK_ORDER, OVERLAY_ORDER, SETTINGS, TABLES, TOLERANCES


@pytest.fixture(scope="module")
def gaia():
    return connectivity_graph(load_network("gaia")), preset_params("sub_inaturalist")


def test_compare_overlays_returns_every_requested_overlay(gaia):
    conn, params = gaia
    got = compare_overlays(conn, params, matcha_rounds=50)
    assert list(got) == list(ALL_OVERLAYS)
    assert all(v > 0 for v in got.values())
    assert got["matcha"] == pytest.approx(got["matcha+"])   # full mesh: same base graph
    assert ranking(got)[0] == "ring" and ranking(got)[-1] == "star"
    again = compare_overlays(conn, params, names=("matcha",), matcha_rounds=50, seed=0,
                             schedules=matcha_schedules(conn))
    assert again["matcha"] == pytest.approx(got["matcha"], rel=1e-3)


def test_compare_overlays_validation(gaia):
    conn, params = gaia
    with pytest.raises(ValueError, match="names"):
        compare_overlays(conn, params, names=("hypercube",))
    with pytest.raises(ValueError, match="matcha_rounds"):
        compare_overlays(conn, params, names=("matcha",), matcha_rounds=0)
    bare = make_connectivity(conn.latency_ms, conn.available_bps)
    with pytest.raises(ValueError, match="underlay"):
        compare_overlays(bare, params, names=("matcha+",), matcha_rounds=5)


def test_ranking_orders_by_cycle_time():
    assert ranking({"a": 3.0, "b": 1.0, "c": 2.0}) == ["b", "c", "a"]


def test_paper_tables_are_complete():
    for table, rows in TABLES.items():
        assert list(rows) == list(NETWORK_ORDER) and table in SETTINGS and table in TOLERANCES
        for row in rows.values():
            assert list(row) == list(OVERLAY_ORDER)


def test_paper_tables_follow_the_local_step_shift_except_the_erratum():
    """F-C6 on the paper's data: Table C.2 - Table C.1 = 5 x 25.4 ms for STAR, MST and RING (+-0.2)."""
    for network in NETWORK_ORDER:
        for overlay in ("star", "mst", "ring"):
            c1, c2 = TABLES["table_c1"][network][overlay], TABLES["table_c2"][network][overlay]
            c2 = KNOWN_ERRATA.get(("table_c2", network, overlay), c2)
            assert c2 - c1 == pytest.approx(5 * 25.4, abs=0.25)
    assert TABLES["table_c2"]["geant"]["star"] - TABLES["table_c1"]["geant"]["star"] == pytest.approx(-127.0)


def test_every_published_cycle_time_has_a_tolerance():
    for table in TABLES:
        assert set(TOLERANCES[table]) == set(OVERLAY_ORDER)
        for kind, tol in TOLERANCES[table].values():
            assert kind in ("abs", "rel") and tol > 0
    assert TOLERANCES["table_2_5"]["star"] == ("abs", 1.0) and TOLERANCES["table_2_5"]["ring"] == ("rel", 0.04)
    assert TOLERANCES["table_2_6"]["matcha"] == TOLERANCES["table_2_5"]["matcha"]
    assert np.isclose(TOLERANCES["table_2_6"]["delta_mbst"][1], 0.01)
