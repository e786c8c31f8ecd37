"""The availability exercises (fedlab.availability.exercises): the checkers' contract and the references recomputed
directly."""
import numpy as np
import pytest

from fedlab.availability import exercises as ex
from fedlab.availability.algorithms.cafed import cafed_weights
from fedlab.availability.data import simulate_availability
from fedlab.availability.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("2.1", [3.0, 7.0]), ("2.2", 0.05), ("2.3", 42.0)])
def test_number_exercises_accept_the_reference_and_reject_the_anticipated_mistakes(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_proxy_checker_tells_the_mistakes_apart():
    assert_exercise_checks(EXERCISES["2.4"], unrelated=lambda q, alpha, pi, gap, kappa2: float(gap.max()))


def test_the_prediction_checker_grades_against_the_run():
    exercise = EXERCISES["2.5"]
    for mistake in exercise.mistakes:
        assert_exercise_checks(exercise, unrelated=exercise.predicted, outcome=mistake.answer)
        feedback = exercise.check(mistake.answer, exercise.predicted)
        assert feedback.correct is False and feedback.hint == mistake.hint
    assert exercise.check(exercise.predicted, exercise.predicted).correct


def test_the_mean_runs_match_a_simulated_trace():
    trace = simulate_availability(np.full(200, ex.RARE_PI), np.full(200, ex.RARE_LAMBDA), 4000, rng=0)
    runs = {True: [], False: []}
    for column in trace.T:
        edges = np.flatnonzero(np.diff(column.astype(int))) + 1
        for run in np.split(column, edges)[1:-1]:              # complete runs only
            runs[bool(run[0])].append(len(run))
    active, inactive = EXERCISES["2.1"].reference()
    assert np.mean(runs[True]) == pytest.approx(active, rel=0.05)
    assert np.mean(runs[False]) == pytest.approx(inactive, rel=0.05)
    assert (active, inactive) == pytest.approx((1 / ((1 - 0.9) * 0.9), 1 / ((1 - 0.9) * 0.1)))


def test_the_bias_is_the_chi2_divergence_written_out():
    p = ex.BIAS_PI * ex.BIAS_Q / (ex.BIAS_PI * ex.BIAS_Q).sum()
    want = sum((a - pk) ** 2 / pk for a, pk in zip(ex.BIAS_ALPHA, p))
    assert float(EXERCISES["2.2"].reference()) == pytest.approx(want, rel=1e-12)


def test_the_threshold_is_where_the_two_proxies_cross():
    gap = ex.TOY["gap"]
    all_in, without_2 = gap.mean(), np.delete(gap, 2).mean()       # sum_S alpha g / alpha(S) with equal alphas
    want = (all_in - without_2) / (4 * (1 / 6) ** 2 * gap.max())
    kappa2 = float(EXERCISES["2.3"].reference())
    assert kappa2 == pytest.approx(want, rel=1e-9)
    assert cafed_weights(**ex.TOY, kappa2=kappa2 * 0.999).excluded == [2]
    assert cafed_weights(**ex.TOY, kappa2=kappa2 * 1.001).excluded == []


def test_the_proxy_reference_is_the_formula_written_out():
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, alpha, pi, gap, kappa2 = ex._proxy_inputs(rng)
        p = pi * q / np.sum(pi * q)
        tv = 0.5 * sum(abs(a - b) for a, b in zip(alpha, p))
        assert ex.proxy(q, alpha, pi, gap, kappa2) == pytest.approx(gap @ p + 4 * kappa2 * tv ** 2 * gap.max())
