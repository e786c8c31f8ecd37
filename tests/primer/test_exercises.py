"""The primer's exercises (fedlab.primer.exercises): the checkers' contract and the references recomputed directly."""
import numpy as np
import pytest

from fedlab.primer import exercises as ex
from fedlab.primer.algorithms import fedavg_fixed_point
from fedlab.primer.exercises import EXERCISES
from helpers import assert_exercise_checks


def test_number_exercises_accept_the_reference_and_reject_the_anticipated_mistakes():
    assert_exercise_checks(EXERCISES["0.1"], unrelated=[0.0, 0.0])
    assert_exercise_checks(EXERCISES["0.2"], unrelated=0.9)


def test_the_aggregation_checker_tells_the_mistakes_apart():
    assert_exercise_checks(EXERCISES["0.3"], unrelated=lambda models, sizes, sampled: models.max(axis=0))


@pytest.mark.parametrize("label", ["0.4", "0.5", "0.6"])
def test_prediction_exercises_grade_against_the_run(label):
    exercise = EXERCISES[label]
    for mistake in exercise.mistakes:  # the run disagrees with the paper: the paper's prediction gets the generic hint
        assert_exercise_checks(exercise, unrelated=exercise.predicted, outcome=mistake.answer)
        feedback = exercise.check(mistake.answer, exercise.predicted)  # the run agrees with the paper
        assert feedback.correct is False and feedback.hint == mistake.hint
    assert exercise.check(exercise.predicted, exercise.predicted).correct


def test_the_fixed_point_is_where_fedavg_with_exact_gradients_converges():
    w, p = np.array([-2.0, -1.5]), ex.QUAD.weights
    for _ in range(2000):
        local = []
        for c, a in zip(ex.QUAD.centers, ex.QUAD.curvatures):
            v = w.copy()
            for _ in range(ex.E_STEPS):
                v = v - ex.LR * a @ (v - c)
            local.append(v)
        w = p @ np.array(local)
    np.testing.assert_allclose(EXERCISES["0.1"].reference(), w, rtol=1e-9)
    b = np.array([[(1 - ex.LR * a[i, i]) ** ex.E_STEPS for i in range(2)] for a in ex.QUAD.curvatures])
    by_hand = (p[:, None] * (1 - b) * ex.QUAD.centers).sum(0) / (p[:, None] * (1 - b)).sum(0)
    np.testing.assert_allclose(EXERCISES["0.1"].reference(), by_hand, rtol=1e-12)


def test_the_label_skew_is_the_mean_total_variation_to_the_pooled_distribution():
    h = ex.HISTOGRAMS.astype(float)
    pooled = h.sum(0) / h.sum()
    tv = [0.5 * sum(abs(h[k, c] / h[k].sum() - pooled[c]) for c in range(h.shape[1])) for k in range(h.shape[0])]
    assert float(EXERCISES["0.2"].reference()) == pytest.approx(sum(tv) / len(tv), rel=1e-12)


def test_the_aggregation_reference_is_the_renormalised_weighted_mean():
    rng = np.random.default_rng(3)
    for _ in range(5):
        models, sizes, sampled = ex._aggregation_inputs(rng)
        assert 2 <= sampled.sum() < sampled.size
        want = sum(sizes[c] * models[c] for c in np.flatnonzero(sampled)) / sizes[sampled].sum()
        np.testing.assert_allclose(ex.aggregate(models, sizes, sampled), want, rtol=1e-12)


def test_a_smaller_step_size_brings_the_fixed_point_closer_to_the_optimum():
    drift = {lr: np.linalg.norm(fedavg_fixed_point(ex.QUAD, local_steps=20, lr=lr) - ex.QUAD.optimum())
             for lr in (0.2, 0.02)}
    assert drift[0.02] < drift[0.2]
    assert EXERCISES["0.4"].predicted == "closer to w*"
