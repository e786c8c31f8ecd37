"""The FedEM exercises (fedlab.fedem.exercises): the checkers' contract and the references recomputed directly."""
import math

import numpy as np
import pytest

from fedlab.fedem import exercises as ex
from fedlab.fedem.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("3.1", [1 / 3, 1 / 3, 1 / 3]), ("3.3", 0.25)])
def test_number_exercises_accept_the_reference_and_reject_the_anticipated_mistakes(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_em_checker_tells_the_mistakes_apart():
    assert_exercise_checks(EXERCISES["3.2"], unrelated=lambda pi, losses: np.full(len(pi), 1 / len(pi)))


def test_the_prediction_checker_grades_against_the_run():
    exercise = EXERCISES["3.4"]
    for mistake in exercise.mistakes:
        assert_exercise_checks(exercise, unrelated=exercise.predicted, outcome=mistake.answer)
        feedback = exercise.check(mistake.answer, exercise.predicted)
        assert feedback.correct is False and feedback.hint == mistake.hint
    assert exercise.check(exercise.predicted, exercise.predicted).correct


def test_the_e_step_is_bayes_rule_written_out():
    joint = [p * math.exp(-loss) for p, loss in zip(ex.PI, ex.LOSSES)]
    np.testing.assert_allclose(EXERCISES["3.1"].reference(), [j / sum(joint) for j in joint], rtol=1e-12)


def test_the_em_update_is_the_average_posterior_and_increases_the_likelihood():
    rng = np.random.default_rng(11)
    for _ in range(5):
        pi, losses = ex._em_inputs(rng)
        m, n = losses.shape
        post = [[pi[k] * math.exp(-losses[k, i]) for k in range(m)] for i in range(n)]
        want = [sum(row[k] / sum(row) for row in post) / n for k in range(m)]
        new = ex.em_weights(pi, losses)
        np.testing.assert_allclose(new, want, rtol=1e-10)
        loglik = lambda w: np.log(w @ np.exp(-losses)).sum()  # noqa: E731 - the mixture log-likelihood
        assert loglik(new) >= loglik(pi) - 1e-12


def test_the_step_size_is_the_smaller_condition_over_the_local_steps():
    want = min(1 / (2 * math.sqrt(2) * ex.L_SMOOTH), 1 / (4 * ex.L_SMOOTH * ex.BETA)) / ex.LOCAL_STEPS
    assert float(EXERCISES["3.3"].reference()) == pytest.approx(want, rel=1e-12)
