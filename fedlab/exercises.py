"""Exercises that check the reader's answer: numbered, with a stated tolerance and a hint for each anticipated mistake.

Three kinds, one class each:

- :class:`NumberExercise` (*compute by hand from the theory*): the reader types a number (or a short vector);
- :class:`PredictionExercise` (*predict, then run*): the reader writes a prediction, the next cell runs the
  experiment and the checker compares the prediction with what the run measured;
- :class:`FunctionExercise` (*write a piece of the algorithm*): the reader's function is run against the package's
  own on random inputs.

``exercise.check(answer)`` returns a :class:`Feedback` whose text is "correct" or "not yet" with a hint. An anticipated
wrong answer (a :class:`Mistake`: a sign error, a forgotten 1/N, an erratum's value, ...) gets its own hint, anything
else the exercise's generic hint. No message contains the reference answer: the solution under the exercise does.

A notebook's answer cell holds ``...`` for the reader to replace. A headless run (papermill, the tests) sets
``FEDLAB_REFERENCE_ANSWERS=1``; a checker then checks the exercise's reference answer in place of ``...``, so every
checker runs in CI while the reader still sees an empty answer.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedlab._validation import check_callable, check_int, check_real, check_sequence, check_type

__all__ = ["REFERENCE_ENV", "KINDS", "Feedback", "Mistake", "Exercise", "NumberExercise", "PredictionExercise",
           "FunctionExercise", "reference_run", "exercise_table"]

REFERENCE_ENV = "FEDLAB_REFERENCE_ANSWERS"
KINDS = ("compute", "predict", "implement")
_LABEL = re.compile(r"^\d+\.\d+$")


def reference_run() -> bool:
    """Whether this is a headless run that checks the reference answers (``FEDLAB_REFERENCE_ANSWERS=1``)."""
    return os.environ.get(REFERENCE_ENV) == "1"


@dataclass(frozen=True)
class Feedback:
    """What a checker says: ``correct`` is True, False ("not yet") or None (no answer yet); ``message`` the text."""

    label: str
    correct: bool | None
    message: str
    hint: str = ""

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return bool(self.correct)


@dataclass(frozen=True)
class Mistake:
    """An anticipated wrong answer (a number, a choice, or a wrong implementation) and the hint it gets."""

    answer: Any
    hint: str


@dataclass(frozen=True)
class Exercise:
    """Base of the three kinds: ``label`` "5.2" (chapter.number), a ``title``, a generic ``hint``, the mistakes."""

    label: str
    title: str
    hint: str
    mistakes: Sequence[Mistake] = ()
    kind = ""

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not _LABEL.match(self.label):
            raise ValueError(f"label must be 'chapter.number' such as '5.2', got {self.label!r}.")
        for name in ("title", "hint"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"Exercise {self.label}: {name} must be a non-empty string, got "
                                 f"{getattr(self, name)!r}.")
        mistakes = tuple(check_sequence("mistakes", self.mistakes))
        for i, mistake in enumerate(mistakes):
            check_type(f"mistakes[{i}]", mistake, Mistake)
        object.__setattr__(self, "mistakes", mistakes)

    # --- what each kind defines
    def reference(self) -> Any:
        """The reference answer (what ``...`` becomes in a headless run)."""
        raise NotImplementedError

    def matches(self, answer: Any, target: Any) -> bool:
        """Whether ``answer`` equals ``target`` under the exercise's tolerance."""
        raise NotImplementedError

    def tolerance(self) -> str:
        """The tolerance in words, as the feedback states it."""
        return ""

    def validate(self, answer: Any) -> Any:
        """``answer`` in the form :meth:`matches` compares; raise TypeError/ValueError naming ``answer`` otherwise."""
        return answer

    def is_unanswered(self, answer: Any) -> bool:
        return answer is ... or answer is None

    # --- shared
    def check(self, answer: Any) -> Feedback:
        """Say whether ``answer`` is correct; "not yet" comes with the hint of the mistake it matches, or the generic one."""
        prefix = f"Exercise {self.label}: "
        if self.is_unanswered(answer):
            if not reference_run():
                return Feedback(self.label, None, prefix + "replace `...` with your answer, then run the cell again.")
            answer, prefix = self.reference(), prefix + "(reference answer, headless run) "
        answer = self.validate(answer)
        if self.matches(answer, self.reference()):
            tolerance = self.tolerance()
            return Feedback(self.label, True, prefix + "correct" + (f" ({tolerance})." if tolerance else "."))
        hint = next((m.hint for m in self.mistakes if self.matches(answer, self.validate(m.answer))), self.hint)
        return Feedback(self.label, False, prefix + "not yet. Hint: " + hint, hint)


@dataclass(frozen=True)
class NumberExercise(Exercise):
    """Compute a number (or a short vector) from the theory; correct within ``rtol`` relative or ``atol`` absolute."""

    answer: float | Sequence[float] = 0.0
    rtol: float = 1e-3
    atol: float = 0.0
    kind = "compute"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_tolerances(self)
        object.__setattr__(self, "answer", self.validate(self.answer))

    def reference(self) -> np.ndarray:
        return self.answer

    def validate(self, answer: Any) -> np.ndarray:
        try:
            value = np.asarray(answer, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"answer must be a number (Exercise {self.label}), got {answer!r}.") from None
        if not np.all(np.isfinite(value)):
            raise ValueError(f"answer must be finite (Exercise {self.label}), got {answer!r}.")
        if isinstance(self.answer, np.ndarray) and value.shape != self.answer.shape:
            expected = "a number" if self.answer.ndim == 0 else f"{self.answer.size} numbers"
            raise ValueError(f"answer must be {expected} (Exercise {self.label}), got {answer!r}.")
        return value

    def matches(self, answer: np.ndarray, target: np.ndarray) -> bool:
        return answer.shape == target.shape and bool(np.allclose(answer, target, rtol=self.rtol, atol=self.atol))

    def tolerance(self) -> str:
        parts = ([f"relative {self.rtol:g}"] if self.rtol else []) + ([f"absolute {self.atol:g}"] if self.atol else [])
        return "tolerance: " + " or ".join(parts)


@dataclass(frozen=True)
class PredictionExercise(Exercise):
    """Predict an outcome among ``choices`` before running; :meth:`check` compares it with the run's ``outcome``.

    ``predicted`` is the reference prediction (what the paper says). Each wrong choice may have its own hint
    (``mistakes``: ``Mistake(choice, hint)``), explaining why the run comes out differently.
    """

    choices: Sequence[str] = ()
    predicted: str = ""
    kind = "predict"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "choices", tuple(check_sequence("choices", self.choices)))
        if len(self.choices) < 2 or not all(isinstance(c, str) for c in self.choices):
            raise ValueError(f"Exercise {self.label}: choices must hold at least two outcomes (strings), got "
                             f"{self.choices!r}.")
        if self.predicted not in self.choices:
            raise ValueError(f"Exercise {self.label}: predicted must be one of {list(self.choices)}, got "
                             f"{self.predicted!r}.")

    def reference(self) -> str:
        return self.predicted

    def validate(self, answer: Any) -> str:
        if answer not in self.choices:
            raise ValueError(f"answer must be one of {list(self.choices)} (Exercise {self.label}), got {answer!r}.")
        return answer

    def matches(self, answer: str, target: str) -> bool:
        return answer == target

    def check(self, answer: Any, outcome: Any = None) -> Feedback:  # noqa: D102 - documented in the class
        if outcome is None:
            raise TypeError(f"Exercise {self.label}: check(prediction, outcome) needs the run's outcome, one of "
                            f"{list(self.choices)}.")
        outcome = self.validate(outcome)
        prefix = f"Exercise {self.label}: "
        if self.is_unanswered(answer):
            if not reference_run():
                return Feedback(self.label, None, prefix + "write your prediction in place of `...` before running.")
            answer, prefix = self.predicted, prefix + "(the paper's prediction, headless run) "
        answer = self.validate(answer)
        if answer == outcome:
            return Feedback(self.label, True, prefix + f"correct: the run gives {outcome!r}, as you predicted.")
        hint = next((m.hint for m in self.mistakes if m.answer == answer), self.hint)
        return Feedback(self.label, False, prefix + f"not yet: the run gives {outcome!r}. Hint: {hint}", hint)


@dataclass(frozen=True)
class FunctionExercise(Exercise):
    """Write a function; it is compared with ``solution`` on ``trials`` random inputs ``make_inputs(rng) -> args``.

    Outputs (numbers or arrays) agree within ``rtol``/``atol``. ``mistakes`` hold wrong implementations
    (``Mistake(wrong_function, hint)``); a function that agrees with one of them on every input gets its hint.
    A function returning None (the body still ``...``) counts as no answer.
    """

    solution: Callable[..., Any] | None = None
    make_inputs: Callable[[np.random.Generator], tuple] | None = None
    trials: int = 20
    rtol: float = 1e-6
    atol: float = 1e-9
    seed: int = 0
    kind = "implement"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("solution", "make_inputs"):
            check_callable(name, getattr(self, name))
        check_int("trials", self.trials, low=1)
        check_int("seed", self.seed, low=0)
        _check_tolerances(self)

    def _inputs(self) -> list[tuple]:
        rng = np.random.default_rng(self.seed)
        return [tuple(self.make_inputs(rng)) for _ in range(self.trials)]

    def reference(self) -> Callable[..., Any]:
        return self.solution

    def is_unanswered(self, answer: Any) -> bool:
        if answer is ... or answer is None:
            return True
        return callable(answer) and _call(answer, self._inputs()[0]) is None

    def validate(self, answer: Any) -> Callable[..., Any]:
        if not callable(answer):
            raise TypeError(f"answer must be a function (Exercise {self.label}), got {answer!r}.")
        return answer

    def matches(self, answer: Callable, target: Callable) -> bool:
        for args in self._inputs():
            got, want = _call(answer, args), target(*args)
            if isinstance(got, Exception) or not _close(got, want, self.rtol, self.atol):
                return False
        return True

    def tolerance(self) -> str:
        return (f"agrees with the package's function on {self.trials} random inputs within relative {self.rtol:g} "
                f"or absolute {self.atol:g}")

    def check(self, answer: Any) -> Feedback:  # noqa: D102 - documented in the class
        if callable(answer) and not self.is_unanswered(answer):
            for args in self._inputs():
                got = _call(answer, args)
                if isinstance(got, Exception):
                    message = f"Exercise {self.label}: not yet: your function raised {type(got).__name__}: {got}"
                    return Feedback(self.label, False, message + f". Hint: {self.hint}", self.hint)
        return super().check(answer)


def _check_tolerances(exercise: NumberExercise | FunctionExercise) -> None:
    rtol, atol = check_real("rtol", exercise.rtol, low=0), check_real("atol", exercise.atol, low=0)
    if rtol + atol == 0:
        raise ValueError(f"Exercise {exercise.label}: rtol and atol must not both be 0.")


def _call(function: Callable, args: tuple) -> Any:
    """``function(*args)`` on copies of array arguments, or the exception it raised."""
    try:
        return function(*(a.copy() if hasattr(a, "copy") else a for a in args))
    except Exception as exc:  # noqa: BLE001 - the reader's code may raise anything; the feedback names it
        return exc


def _close(got: Any, want: Any, rtol: float, atol: float) -> bool:
    try:
        got, want = np.asarray(_numpy(got), dtype=float), np.asarray(_numpy(want), dtype=float)
    except (TypeError, ValueError):
        return False
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _numpy(value: Any) -> Any:
    """Tensors (torch) to numpy, tuples element-wise; anything else unchanged."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if isinstance(value, (tuple, list)):
        return [_numpy(v) for v in value]
    return value


def exercise_table(exercises: Mapping[str, Exercise]) -> list[tuple[str, str, str]]:
    """``(label, kind, title)`` per exercise, in order; raise ValueError when a key differs from its label."""
    check_type("exercises", exercises, Mapping)
    for key, ex in exercises.items():
        check_type(f"exercises[{key!r}]", ex, Exercise)
    wrong = [key for key, ex in exercises.items() if key != ex.label]
    if wrong:
        raise ValueError(f"exercises must be keyed by their labels; keys {wrong} differ from their exercise's label.")
    return [(ex.label, ex.kind, ex.title) for ex in exercises.values()]
