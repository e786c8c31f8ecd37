"""The exercises of notebook 07 (fedlab.sfedpo.exercises): checkers, hints and independent reference values."""
import numpy as np
import pytest

from fedlab.sfedpo.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("7.1", 0.9), ("7.2", 0.9),
                                              ("7.3", lambda q, s, a2, b2: np.full(len(q), 1 / len(q)))])
def test_each_checker_accepts_the_reference_and_names_each_mistake(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_prediction_checker_against_either_outcome():
    ex = EXERCISES["7.4"]
    assert_exercise_checks(ex, unrelated="DDS only", outcome="FedAvg on the latest data")
    assert_exercise_checks(ex, unrelated="DDS only", outcome="SFedPO (DDS + SAW)")


def test_references_agree_with_the_direct_formulas():
    # 7.1: gamma = (1/T) sum_{t=1}^T (1 - a)^t, a = 0.2, T = 10
    assert float(EXERCISES["7.1"].reference()) == pytest.approx(np.mean(0.8 ** np.arange(1, 11)))
    # 7.2: scores (0.7 / (1 + 3 pi_m)), scaled so that sum_m pi_m alpha_m = 0.25
    pi = np.array([0.8, 0.2])
    score = 0.7 / (1 + 3 * pi)
    alpha = 0.25 * score / np.dot(pi, score)
    assert float(EXERCISES["7.2"].reference()) == pytest.approx(alpha[1])
    assert np.dot(pi, alpha) == pytest.approx(0.25) and alpha.max() < 1


def test_the_saw_reference_is_eq_14_written_out():
    q, s = np.array([0.2, 0.25, 0.5]), np.array([0.5, 1.0, 4.0])
    psi = np.array([5 - 0.5, 4 - 1.0, 0.0])
    np.testing.assert_allclose(EXERCISES["7.3"].reference()(q, s, 1.0, 0.0), psi / psi.sum())
