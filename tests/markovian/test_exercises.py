"""The exercises of notebook 09 (fedlab.markovian.exercises): checkers, hints and independent reference values."""
import numpy as np
import pytest

from fedlab.markovian.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("9.1", 50), ("9.2", 300), ("9.3", lambda p: 1 / p)])
def test_each_checker_accepts_the_reference_and_names_each_mistake(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_prediction_checker_against_either_outcome():
    ex = EXERCISES["9.4"]
    assert_exercise_checks(ex, unrelated="about sqrt(tau) (slope 0.3 to 0.7)", outcome="about linear (slope above 0.7)")
    assert_exercise_checks(ex, unrelated="about linear (slope above 0.7)", outcome="flat (slope below 0.3)")


def _brute_mixing_time(p, eps=0.25):
    """The first t >= 1 with max_x sum_y |P^t(x, y) - 1/2| <= eps, by matrix powers."""
    P, Pt = np.array([[1 - p, p], [p, 1 - p]]), np.eye(2)
    for t in range(1, 100_000):
        Pt = Pt @ P
        if np.abs(Pt - 0.5).sum(axis=1).max() <= eps:
            return t
    raise AssertionError("no mixing")


def test_references_agree_with_matrix_powers_and_proposition_b5():
    assert float(EXERCISES["9.1"].reference()) == _brute_mixing_time(0.02)
    assert float(EXERCISES["9.2"].reference()) == (2 + 1) * 30  # ceil(log_4 10) = 2
    solution = EXERCISES["9.3"].reference()
    for p in (0.003, 0.05, 0.2, 0.45):
        assert solution(p) == _brute_mixing_time(p)
