"""The exercises of notebook 08 (fedlab.dynamic.exercises): checkers, hints and independent reference values."""
import numpy as np
import pytest

from fedlab.dynamic.exercises import EXERCISES
from helpers import assert_exercise_checks


@pytest.mark.parametrize("label, unrelated", [("8.1", 0.2), ("8.2", 0.5), ("8.3", lambda n, b, e: b / n)])
def test_each_checker_accepts_the_reference_and_names_each_mistake(label, unrelated):
    assert_exercise_checks(EXERCISES[label], unrelated=unrelated)


def test_the_prediction_checker_against_either_outcome():
    ex = EXERCISES["8.4"]
    assert_exercise_checks(ex, unrelated="the largest step", outcome="a step inside the grid")
    assert_exercise_checks(ex, unrelated="a step inside the grid", outcome="the smallest step")


def test_references_agree_with_the_direct_formulas():
    assert float(EXERCISES["8.1"].reference()) == pytest.approx(13 / 19)
    mu, nu, b, a, s = 0.1, 1.0, 4 + 0.5, 1.0 + 0.2, 1e-3
    assert float(EXERCISES["8.2"].reference()) == pytest.approx((mu ** 2 * a + s) / (2 * mu * nu - mu ** 2 * b))


def test_the_minibatch_factor_is_the_variance_of_a_minibatch_mean_without_replacement():
    # brute force: the variance of the mean of B of N points drawn without replacement, over all subsets
    from itertools import combinations
    x = np.array([0.3, -1.2, 2.0, 0.7, -0.4])
    n, b = len(x), 2
    means = [np.mean(x[list(c)]) for c in combinations(range(n), b)]
    ratio = np.var(means) / np.var(x)
    assert EXERCISES["8.3"].reference()(n, b, 1) == pytest.approx(ratio)
    assert EXERCISES["8.3"].reference()(n, b, 3) == pytest.approx(ratio / 3)
