"""The exercises of notebook 06 (fedlab.online.exercises): checkers, hints and independent reference values."""
import math

import numpy as np
import pytest

from fedlab.online.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("6.1", 100.0), ("6.2", 0.3), ("6.3", lambda pi, grad, eta: pi)])
def test_each_checker_accepts_the_reference_and_names_each_mistake(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_prediction_checker_against_either_outcome():
    ex = EXERCISES["6.4"]
    assert_exercise_checks(ex, unrelated="n = 1", outcome="n = 30")
    assert_exercise_checks(ex, unrelated="n = 30", outcome="n = 10")


def test_references_agree_with_the_direct_formulas():
    # 6.1: sqrt(T log m) = 2 T / sqrt(n)  <=>  T = n log(m) / 4
    assert float(EXERCISES["6.1"].reference()) == pytest.approx(100 * math.log(5) / 4)
    # 6.2: R_t = sqrt(t), equal windows: (1 - sqrt(3/4)) / (sqrt(1/2) - sqrt(1/4))
    assert float(EXERCISES["6.2"].reference()) == pytest.approx((1 - math.sqrt(0.75)) / (math.sqrt(0.5) - 0.5))


def test_the_omd_reference_is_the_multiplicative_update():
    pi, grad, eta = np.array([0.5, 0.3, 0.2]), np.array([1.0, -2.0, 0.5]), 0.4
    w = pi * np.exp(-eta * grad)
    np.testing.assert_allclose(EXERCISES["6.3"].reference()(pi, grad, eta), w / w.sum())
