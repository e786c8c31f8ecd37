"""Robustness cases of the primer chapter (notebook 00)."""
from __future__ import annotations

import numpy as np

from harness import BAD_TEXT, NAN, Arr, Case, Choice, Flag, Int, Kind, Obj, Real, fresh

from fedlab.engine import History

P = "fedlab.primer"


def _clients():
    from fedlab.primer.data import QuadraticClients

    return QuadraticClients(np.array([[0.0, 0.0], [1.0, 2.0]]), np.stack([np.eye(2), 2 * np.eye(2)]),
                            np.array([0.5, 0.5]))


def _drift_history():
    from fedlab.engine import run
    from fedlab.primer.algorithms import QuadraticFedAvg

    return run(QuadraticFedAvg(np.zeros(2), local_steps=2, lr=0.1), _clients(), rounds=2)[1]


def _records():
    """Two seeds of one FedAvg config, as ``sweep`` returns them."""
    return [{"config": {"method": "fedavg", "alpha": 1.0, "local_steps": 5}, "seed": s,
             "result": {"rounds": [0, 1], "test_accuracy": [0.1, 0.9], "final_accuracy": 0.9,
                        "bottom_decile": 0.8}} for s in (0, 1)]


def _results():
    from fedlab.primer.claims import example_results

    return example_results()


RECORDS = Obj(fresh(_records), extra=([], {}, [3], [{"config": {}, "seed": 0, "result": {}}]))
"""Sweep records of train_on_digits, and objects that are not."""

CASES = [
    Case(f"{P}.data.digits_federation", {"n_clients": Int(3, low=1), "alpha": Real(0.5, low=0, low_open=True),
                                         "seed": Int(0, low=0)}, edge=("n_clients",)),
    Case(f"{P}.data.QuadraticClients", {
        "centers": Arr(np.zeros((2, 2)), ndim=2, also=("curvatures", "weights")),
        "curvatures": Arr(np.stack([np.eye(2)] * 2), extra=(-np.stack([np.eye(2)] * 2),)),
        "weights": Arr(np.full(2, 0.5), simplex=True, link=True)}),
    Case(f"{P}.algorithms.QuadraticFedAvg", {"w0": Arr(np.zeros(2), ndim=1), "local_steps": Int(2, low=1),
                                             "lr": Real(0.1, low=0, low_open=True)}, edge=("local_steps",)),
    Case(f"{P}.algorithms.QuadraticFedAvg.init", {"clients": Obj(fresh(_clients), extra=(np.zeros(2),)),
                                                  "seed": Int(0, low=0)},
         fn=lambda **kw: __import__(f"{P}.algorithms", fromlist=["x"]).QuadraticFedAvg(
             np.zeros(2), local_steps=2, lr=0.1).init(**kw)),
    Case(f"{P}.algorithms.drift_paths", {"history": Obj(fresh(_drift_history), extra=(History(),))}),
    Case(f"{P}.algorithms.fedavg_fixed_point", {"clients": Obj(fresh(_clients), extra=(np.zeros(2),)),
                                            "local_steps": Int(2, low=1), "lr": Real(0.1, low=0, low_open=True)},
         edge=("local_steps",)),
    Case(f"{P}.experiments.train_on_digits", {
        "method": Choice("fedavg"), "alpha": Real(0.5, low=0, low_open=True), "local_steps": Int(1, low=1),
        "participation": Real(1.0, low=0, high=1, low_open=True), "rounds": Int(1, low=0),
        "n_clients": Int(3, low=1)}, edge=("rounds", "n_clients")),
    Case(f"{P}.experiments.rounds_to_reach", {
        "rounds": Arr([0, 1, 2], link=True, also=("accuracy",)),
        "accuracy": Arr([0.1, 0.5, 0.9], link=True, also=("rounds",)),
        "target": Real(0.5)}),
    Case(f"{P}.experiments.seed_values", {"records": RECORDS, "metric": Choice("final_accuracy")}),
    Case(f"{P}.experiments.seed_curves", {"records": RECORDS}),
    Case(f"{P}.experiments.seed_rounds_to_reach", {"records": RECORDS, "target": Real(0.85, low=0, high=1)},
         edge=("target",)),
    Case(f"{P}.plots.plot_sweep_curves", {
        "rounds": Arr([0, 1], ndim=1, also=("curves",)),
        "curves": Obj({("fedavg", 1.0, 1): [[0.1, 0.5]]}, extra=({}, [1], {("fedavg", 1.0, 1): [[0.1]]},
                                                                  {("fedavg", 1.0, 1): BAD_TEXT}),
                      also=("rounds", "alphas")),
        "alphas": Kind((1.0,), extra=((), (NAN,), (BAD_TEXT,), (2.0,)), also=("curves",)),
        "steps": Kind((1,), extra=((1.5,), (BAD_TEXT,))),
        "axes": Kind(None, extra=(BAD_TEXT, 3)),
        "ylim": Kind((0.3, 1.0), extra=((NAN, 1.0), (0.3,), BAD_TEXT))}),
    Case(f"{P}.claims.chapter_claims", {
        "results": Obj(fresh(_results), extra=({}, [1], {**_results(), "drift": {1: 0.0}},
                                                {**_results(), "final_accuracy": {}})),
        "scale": Choice("smoke")}),
    Case(f"{P}.claims.example_results", {"holds": Flag(True), "n_seeds": Int(3, low=2)}, edge=("n_seeds",)),
]
