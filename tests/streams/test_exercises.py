"""The exercises of notebook 05 (fedlab.streams.exercises): checkers, hints and independent reference values."""
import math

import numpy as np
import pytest

from fedlab.streams.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("5.1", 0.5), ("5.2", 0.5), ("5.3", 7.0),
                                              ("5.4", lambda p, n, m_hist, c1, c2: c1 + c2)])
def test_each_checker_accepts_the_reference_and_names_each_mistake(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_prediction_checker_against_either_outcome():
    ex = EXERCISES["5.5"]
    assert_exercise_checks(ex, unrelated="Uniform", outcome="Historical")
    assert_exercise_checks(ex, unrelated="Historical", outcome="Fresh")


def test_references_agree_with_the_direct_formulas():
    # 5.1: kappa^2 = h with kappa = r sqrt(M_F)
    assert float(EXERCISES["5.1"].reference()) == pytest.approx(math.sqrt(0.2 / 25))
    # 5.2: N_hist / (N_hist + (N - N_hist)/T) with N_hist/N = 0.2, T = 200
    assert float(EXERCISES["5.2"].reference()) == pytest.approx(0.2 / (0.2 + 0.8 / 200))
    # 5.3: rounds used per sample, FIFO C = 4, b = 2, T = 5: batches 1-4 used twice, batch 5 once
    uses = np.array([2, 2, 2, 2, 2, 2, 2, 2, 1, 1], dtype=float)
    p = uses / uses.sum()
    assert float(EXERCISES["5.3"].reference()) == pytest.approx(1 / np.sum(p ** 2)) == pytest.approx(324 / 34)


def test_the_psi_reference_is_eq_4_17_written_out():
    p, n = np.array([0.4, 0.2, 0.3, 0.1]), np.array([0.2, 0.3, 0.25, 0.25])
    expected = 2 * math.sqrt(0.09 + 0.01) + 3 * math.sqrt(0.16 / 0.2 + 0.04 / 0.3 + 0.09 / 0.25 + 0.01 / 0.25)
    assert EXERCISES["5.4"].reference()(p, n, 2, 2.0, 3.0) == pytest.approx(expected)
