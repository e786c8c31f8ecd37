"""The exercise checkers' core (fedlab.exercises): the three kinds, hints, tolerance, the headless reference run."""
import numpy as np
import pytest

from fedlab.exercises import (REFERENCE_ENV, Feedback, FunctionExercise, Mistake, NumberExercise, PredictionExercise,
                              exercise_table, reference_run)
from helpers import assert_exercise_checks

NUMBER = NumberExercise("5.1", "A bound", "Revisit (4.12).", [Mistake(-2.5, "Check the sign."), Mistake(0.25, "1/N?")],
                        answer=2.5, rtol=1e-2)


def mean(x):
    return x.mean(axis=0)


FUNCTION = FunctionExercise("2.3", "Aggregate", "Average the rows.", [Mistake(lambda x: x.sum(axis=0), "Divide by N.")],
                            solution=mean, make_inputs=lambda rng: (rng.normal(size=(4, 3)),))
PREDICTION = PredictionExercise("3.2", "Who wins", "Think of heterogeneity.",
                                [Mistake("FedAvg", "One model cannot fit every client.")],
                                choices=("FedAvg", "FedEM", "Local"), predicted="FedEM")


def test_the_contract_holds_for_each_kind():
    assert_exercise_checks(NUMBER, unrelated=7.0)
    assert_exercise_checks(FUNCTION, unrelated=lambda x: x.max(axis=0))
    assert_exercise_checks(PREDICTION, unrelated="Local", outcome="FedEM")


def test_number_tolerance_is_stated_and_applied():
    assert NUMBER.check(2.52).correct and "relative 0.01" in NUMBER.check(2.52).message
    assert NUMBER.check(2.6).correct is False
    assert NumberExercise("1.1", "t", "h", answer=0.0, atol=1e-3).check(5e-4).correct


def test_an_empty_answer_waits_for_the_reader_and_checks_the_reference_in_a_headless_run(monkeypatch):
    for ex in (NUMBER, FUNCTION):
        assert ex.check(...).correct is None and "replace `...`" in ex.check(...).message
    assert FUNCTION.check(lambda x: None).correct is None
    assert PREDICTION.check(..., "FedEM").correct is None
    monkeypatch.setenv(REFERENCE_ENV, "1")
    assert reference_run()
    for feedback in (NUMBER.check(...), FUNCTION.check(...), PREDICTION.check(..., "FedEM")):
        assert feedback.correct is True and "headless run" in feedback.message
    assert PREDICTION.check(..., "FedAvg").correct is False


def test_a_function_that_raises_is_named():
    feedback = FUNCTION.check(lambda x: x.undefined())
    assert feedback.correct is False and "AttributeError" in feedback.message


def test_the_function_checker_accepts_torch_outputs_and_does_not_let_the_reader_mutate_inputs():
    torch = pytest.importorskip("torch")
    assert FUNCTION.check(lambda x: torch.as_tensor(x).mean(dim=0)).correct

    def mutating(x):
        x[:] = 0
        return x.mean(axis=0)
    assert FUNCTION.check(mutating).correct is False


def test_bad_answers_and_definitions_name_the_argument():
    with pytest.raises(TypeError, match="answer must be a number"):
        NUMBER.check("two")
    with pytest.raises(ValueError, match="answer must be finite"):
        NUMBER.check(np.nan)
    with pytest.raises(ValueError, match="answer must be one of"):
        PREDICTION.check("Ditto", "FedEM")
    with pytest.raises(TypeError, match="needs the run's outcome"):
        PREDICTION.check("FedEM")
    with pytest.raises(TypeError, match="answer must be a function"):
        FUNCTION.check(3)
    with pytest.raises(ValueError, match="label"):
        NumberExercise("5", "t", "h", answer=1.0)
    with pytest.raises(ValueError, match="hint"):
        NumberExercise("5.1", "t", "", answer=1.0)
    with pytest.raises(ValueError, match="rtol"):
        NumberExercise("5.1", "t", "h", answer=1.0, rtol=0)
    with pytest.raises(ValueError, match="choices"):
        PredictionExercise("5.1", "t", "h", choices=("a",), predicted="a")
    with pytest.raises(TypeError, match="solution must be callable"):
        FunctionExercise("5.1", "t", "h", make_inputs=lambda rng: ())


def test_feedback_reads_as_its_message_and_the_table_lists_exercises():
    assert repr(Feedback("1.1", True, "Exercise 1.1: correct.")) == "Exercise 1.1: correct."
    assert exercise_table({"5.1": NUMBER, "2.3": FUNCTION}) == [("5.1", "compute", "A bound"),
                                                                ("2.3", "implement", "Aggregate")]
    with pytest.raises(ValueError, match="keyed by their labels"):
        exercise_table({"5.9": NUMBER})
