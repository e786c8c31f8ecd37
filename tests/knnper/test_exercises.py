"""The kNN-Per exercises (fedlab.knnper.exercises): the checkers' contract and the references recomputed directly."""
import math

import numpy as np
import pytest

from fedlab.knnper import exercises as ex
from fedlab.knnper.bounds import lambda_preference_threshold
from fedlab.knnper.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("4.1", 0.9), ("4.3", 5000.0)])
def test_number_exercises_accept_the_reference_and_reject_the_anticipated_mistakes(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_interpolation_checker_tells_the_mistakes_apart():
    assert_exercise_checks(EXERCISES["4.2"], unrelated=lambda dist, labels, p_global, lam, sigma: p_global)


def test_the_prediction_checker_grades_against_the_run():
    exercise = EXERCISES["4.4"]
    for mistake in exercise.mistakes:
        assert_exercise_checks(exercise, unrelated=exercise.predicted, outcome=mistake.answer)
        feedback = exercise.check(mistake.answer, exercise.predicted)
        assert feedback.correct is False and feedback.hint == mistake.hint
    assert exercise.check(exercise.predicted, exercise.predicted).correct


def test_the_one_input_prediction_is_the_formula_written_out():
    w = [math.exp(-d / ex.SIGMA) for d in ex.DISTANCES]
    p_knn_1 = sum(wi for wi, y in zip(w, ex.LABELS) if y == 1) / sum(w)
    want = ex.LAM * p_knn_1 + (1 - ex.LAM) * ex.P_GLOBAL[1]
    assert float(EXERCISES["4.1"].reference()) == pytest.approx(want, rel=1e-12)


def test_the_batch_interpolation_matches_a_loop():
    rng = np.random.default_rng(2)
    for _ in range(5):
        dist, labels, p_global, lam, sigma = ex._knn_inputs(rng)
        want = np.zeros_like(p_global)
        for i in range(len(dist)):
            w = np.exp(-dist[i] / sigma)
            for wj, y in zip(w / w.sum(), labels[i]):
                want[i, y] += lam * wj
            want[i] += (1 - lam) * p_global[i]
        np.testing.assert_allclose(ex.knn_per_proba(dist, labels, p_global, lam, sigma), want, rtol=1e-12)


def test_the_threshold_is_the_closed_form_and_the_package_threshold():
    want = (math.sqrt(ex.DIM) / ex.R_STAR) ** (ex.DIM + 1)
    assert float(EXERCISES["4.3"].reference()) == pytest.approx(want, rel=1e-9)
    # lambda_preference_threshold with constants whose r* equals R_STAR: c1 = 2, c2 = 12 gamma2, c3 = 4, c5 = 24 gamma2
    # with disc = 1, L* = 0 and n large (E -> 0): r* = 2 / (24 gamma2), so gamma2 = 1 / (12 R_STAR)
    got = lambda_preference_threshold(0.0, 1.0, 1e30, ex.DIM, 1.0, 1e-9, 1 / (12 * ex.R_STAR))
    assert got == pytest.approx(want, rel=1e-6)
