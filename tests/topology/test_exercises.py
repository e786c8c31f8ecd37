"""The topology exercises (fedlab.topology.exercises): the checkers' contract and the references recomputed directly."""
import itertools

import numpy as np
import pytest

import fedlab.topology as ft
from fedlab.topology import exercises as ex
from fedlab.topology.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label", ["1.1", "1.2"])
def test_number_exercises_accept_the_reference_and_reject_the_anticipated_mistakes(label):
    assert_exercise_checks(EXERCISES[label], unrelated=1234.0)


def test_the_weights_checker_tells_the_mistakes_apart():
    assert_exercise_checks(EXERCISES["1.3"], unrelated=lambda adj: np.full(adj.shape, 1.0 / len(adj)))


def test_the_prediction_checker_grades_against_the_run():
    exercise = EXERCISES["1.4"]
    for mistake in exercise.mistakes:
        assert_exercise_checks(exercise, unrelated=exercise.predicted, outcome=mistake.answer)
        feedback = exercise.check(mistake.answer, exercise.predicted)
        assert feedback.correct is False and feedback.hint == mistake.hint
    assert exercise.check(exercise.predicted, exercise.predicted).correct


def test_the_ring_cycle_time_is_the_mean_arc_delay_and_the_brute_force_maximum_cycle_mean():
    arcs = [12.0 + ex.LATENCY_MS[i, (i + 1) % 4] + 1000 * 30e6 / 4e8 for i in range(4)]
    assert float(EXERCISES["1.1"].reference()) == pytest.approx(np.mean(arcs), rel=1e-12)
    W = ft.overlay_delays(ex.RING, ex.FOUR_SILOS, ex.FOUR_PARAMS)
    assert ft.max_cycle_mean_bruteforce(W) == pytest.approx(np.mean(arcs), rel=1e-12)


def test_the_star_cycle_time_is_the_slowest_upload_and_broadcast():
    shared = 1000 * 30e6 / (4e8 / 3)                   # the orchestrator's access link, shared by three silos
    rounds = [12.0 + ex.LATENCY_MS[i, 0] + shared + ex.LATENCY_MS[0, i] + shared for i in (1, 2, 3)]
    assert float(EXERCISES["1.2"].reference()) == pytest.approx(max(rounds), rel=1e-12)


def test_the_local_degree_reference_follows_the_formula_entry_by_entry():
    (adj,) = ex._random_graph(np.random.default_rng(5))
    n, d = len(adj), adj.sum(axis=1)
    want = np.zeros((n, n))
    for i, j in itertools.product(range(n), repeat=2):
        if i != j and adj[i, j]:
            want[i, j] = 1 / (1 + max(d[i], d[j]))
    want += np.diag(1 - want.sum(axis=1))
    np.testing.assert_allclose(EXERCISES["1.3"].reference()(adj), want, atol=1e-12)
    np.testing.assert_allclose(want, want.T)
    np.testing.assert_allclose(want.sum(axis=0), 1.0)


def test_only_the_star_keeps_its_cycle_time_when_silo_0_computes_twenty_times_slower():
    conn = ft.connectivity_graph(ft.load_network("gaia"))
    base = ft.preset_params("sub_inaturalist", access_bps=1e10)
    slow = base.replace(compute_ms=np.r_[20 * 25.4, np.full(conn.n - 1, 25.4)])
    same = [ex.OVERLAY_LABELS[name] for name in ex.OVERLAY_LABELS
            if np.isclose(ft.cycle_time(ft.design_overlay(name, conn, base), conn, base),
                          ft.cycle_time(ft.design_overlay(name, conn, slow), conn, slow))]
    assert same == [EXERCISES["1.4"].predicted]
