"""Robustness cases of the exercise checkers (fedlab.exercises), the full-scale records (fedlab.records) and the
replicas of the engine (fedlab.engine.replicas)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

import world as w
from harness import BAD_TEXT, Case, File, Int, Kind, Obj, Real, fresh

from fedlab.algorithms import FedAvg
from fedlab.exercises import Mistake, NumberExercise
from fedlab.records import Record, make_record

LABEL = Kind("1.1", extra=("1", "one.two", 3, None))
TEXT = Kind("text", extra=("", "  ", 3, None))
MISTAKES = Obj((Mistake(2.0, "hint"),), extra=((2.0,), ("a",)))


def _notebook() -> str:
    """A notebook that imports a chapter package (the primer), in a temporary folder."""
    path = Path(tempfile.mkdtemp(prefix="fedlab-records-")) / "00_toy.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("from fedlab.primer import data")]), path)
    return str(path)


NOTEBOOK = File(fresh(_notebook), extra=("/nonexistent/robustness/nb.ipynb",))


def _record() -> Record:
    return make_record(_notebook(), seconds=1.0, claims=[], headlines={})


def _number() -> NumberExercise:
    return NumberExercise("1.1", "t", "h", answer=1.0)


CASES = [
    Case("fedlab.exercises.NumberExercise", {"label": LABEL, "title": TEXT, "hint": TEXT, "mistakes": MISTAKES,
                                             "answer": Kind(1.0, extra=(BAD_TEXT, float("nan"))), "rtol": Real(1e-3, low=0), "atol": Real(1e-9, low=0)},
         edge=("rtol", "atol")),
    Case("fedlab.exercises.PredictionExercise", {
        "label": LABEL, "title": TEXT, "hint": TEXT, "mistakes": Obj((), extra=((3,),)),
        "choices": Obj(("a", "b"), extra=(("a",), (1, 2), "ab")), "predicted": Kind("a", extra=("c", 3, None))}),
    Case("fedlab.exercises.FunctionExercise", {
        "label": LABEL, "title": TEXT, "hint": TEXT, "mistakes": Obj((), extra=((3,),)),
        "solution": Obj(sum, optional=False), "make_inputs": Obj(lambda rng: ([1.0, 2.0],)),
        "trials": Int(2, low=1), "rtol": Real(1e-6, low=0), "atol": Real(1e-9, low=0), "seed": Int(0, low=0)},
         edge=("trials", "seed")),
    Case("fedlab.exercises.exercise_table", {"exercises": Obj(fresh(lambda: {"1.1": _number()}),
                                                               extra=({"1.2": _number()}, {"1.1": 3}, [1]))}),
    Case("fedlab.exercises.NumberExercise.check", {"answer": Kind(1.0, extra=(BAD_TEXT, [1.0, 2.0], float("nan")))},
         fn=lambda answer: _number().check(answer)),
    Case("fedlab.records.chapter_package", {"notebook": NOTEBOOK, "package": Obj(None, optional=True)}),
    Case("fedlab.records.content_hash", {"notebook": NOTEBOOK, "package": Obj(None, optional=True)}),
    Case("fedlab.records.git_commit", {"root": File(".")}),
    Case("fedlab.records.make_record", {"notebook": NOTEBOOK, "seconds": Real(1.0, low=0),
                                        "claims": Obj(fresh(list), extra=([3], "claims")),
                                        "headlines": Obj(fresh(dict), extra=([("a", "1")],))}, edge=("seconds",)),
    Case("fedlab.records.write_record", {"record": Obj(fresh(_record), extra=({"notebook": "x"},)),
                                         "folder": File(fresh(lambda: tempfile.mkdtemp(prefix="fedlab-records-")),
                                                        extra=(__file__,))}),
    Case("fedlab.records.load_records", {"folder": File(fresh(lambda: tempfile.mkdtemp(prefix="fedlab-records-"))),
                                         "notebooks": File(".")}),
    Case("fedlab.engine.replicas.lockstep", {"tasks": Obj([lambda: 1, lambda: 2], extra=([], [3], 5))}),
    Case("fedlab.engine.replicas.run_replicas", {
        "algorithm": Obj(fresh(lambda: FedAvg(w.model(), w.solver())), extra=(w.solver(),)),
        "data": Obj(fresh(w.fed), extra=(w.clients(),)), "seeds": Obj([0, 1], extra=([], [-1], [1.5], 3)),
        "rounds": Int(1, low=0)}, edge=("rounds",)),
]
