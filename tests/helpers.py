"""Small data sets shared by the tests."""
import numpy as np


def make_clients(n_clients=6, dim=5, n_classes=3, sizes=None, seed=0, regression=False):
    """Small heterogeneous classification (or regression) clients with unequal sizes."""
    rng = np.random.default_rng(seed)
    sizes = sizes or [int(s) for s in rng.integers(5, 30, size=n_clients)]
    w = rng.normal(size=(dim, n_classes))
    xs, ys = [], []
    for k, n in enumerate(sizes):
        x = (rng.normal(size=(n, dim)) + 0.5 * k).astype(np.float32)
        if regression:
            ys.append((x @ w[:, 0] + 0.1 * rng.normal(size=n)).astype(np.float32))
        else:
            ys.append(np.argmax(x @ w + rng.normal(size=(n, n_classes)), axis=1))
        xs.append(x)
    return xs, ys


def assert_exercise_checks(exercise, unrelated, outcome=None):
    """The contract of every checker (fedlab.exercises): the reference answer is correct, each anticipated mistake
    is "not yet" with its own hint, an unrelated answer is "not yet" with the generic hint, and no message of a
    number exercise contains the reference value. ``outcome`` is the run's outcome for a prediction exercise."""
    from fedlab.exercises import PredictionExercise

    def check(answer):
        return exercise.check(answer, outcome) if isinstance(exercise, PredictionExercise) else exercise.check(answer)

    reference = exercise.reference() if not isinstance(exercise, PredictionExercise) else outcome
    feedback = check(reference)
    assert feedback.correct is True, feedback.message
    assert "correct" in feedback.message
    assert exercise.mistakes, f"Exercise {exercise.label} anticipates no mistake"
    for mistake in exercise.mistakes:
        if isinstance(exercise, PredictionExercise) and mistake.answer == outcome:
            continue
        wrong = check(mistake.answer)
        assert wrong.correct is False and wrong.hint == mistake.hint, (exercise.label, mistake.answer, wrong.message)
        assert wrong.hint != exercise.hint, f"Exercise {exercise.label}: a mistake repeats the generic hint"
    other = check(unrelated)
    assert other.correct is False and other.hint == exercise.hint, other.message
    if exercise.kind == "compute":
        shown = [f"{float(v):.3g}" for v in np.ravel(exercise.reference())]
        for message in (feedback.message, other.message, *(check(m.answer).message for m in exercise.mistakes)):
            assert not any(s in message for s in shown if len(s) > 2), message
