"""Robustness cases of the primer chapter (notebook 00)."""
from __future__ import annotations

import numpy as np

from harness import Arr, Case, Choice, Int, Obj, Real, fresh

from fedlab.engine import History


def _clients():
    from fedlab.primer.toys import QuadraticClients

    return QuadraticClients(np.array([[0.0, 0.0], [1.0, 2.0]]), np.stack([np.eye(2), 2 * np.eye(2)]),
                            np.array([0.5, 0.5]))


def _drift_history():
    from fedlab.engine import run
    from fedlab.primer.toys import QuadraticFedAvg

    return run(QuadraticFedAvg(np.zeros(2), local_steps=2, lr=0.1), _clients(), rounds=2)[1]


CASES = [
    Case("fedlab.primer.experiments.digits_federation", {"n_clients": Int(3, low=1), "alpha": Real(0.5, low=0,
                                                                                                   low_open=True),
                                                         "seed": Int(0, low=0)}, edge=("n_clients",)),
    Case("fedlab.primer.experiments.train_on_digits", {
        "method": Choice("fedavg"), "alpha": Real(0.5, low=0, low_open=True), "local_steps": Int(1, low=1),
        "participation": Real(1.0, low=0, high=1, low_open=True), "rounds": Int(1, low=0),
        "n_clients": Int(3, low=1)}, edge=("rounds", "n_clients")),
    Case("fedlab.primer.experiments.rounds_to_reach", {
        "rounds": Arr([0, 1, 2], link=True, also=("accuracy",)),
        "accuracy": Arr([0.1, 0.5, 0.9], link=True, also=("rounds",)),
        "target": Real(0.5)}),
    Case("fedlab.primer.toys.QuadraticClients", {
        "centers": Arr(np.zeros((2, 2)), ndim=2, also=("curvatures", "weights")),
        "curvatures": Arr(np.stack([np.eye(2)] * 2), extra=(-np.stack([np.eye(2)] * 2),)),
        "weights": Arr(np.full(2, 0.5), simplex=True, link=True)}),
    Case("fedlab.primer.toys.QuadraticFedAvg", {"w0": Arr(np.zeros(2), ndim=1), "local_steps": Int(2, low=1),
                                                "lr": Real(0.1, low=0, low_open=True)}, edge=("local_steps",)),
    Case("fedlab.primer.toys.QuadraticFedAvg.init", {"clients": Obj(fresh(_clients), extra=(np.zeros(2),)),
                                                     "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.primer.toys", fromlist=["x"]).QuadraticFedAvg(
             np.zeros(2), local_steps=2, lr=0.1).init(**kw)),
    Case("fedlab.primer.toys.drift_paths", {"history": Obj(fresh(_drift_history), extra=(History(),))}),
    Case("fedlab.primer.toys.fedavg_fixed_point", {"clients": Obj(fresh(_clients), extra=(np.zeros(2),)),
                                                   "local_steps": Int(2, low=1),
                                                   "lr": Real(0.1, low=0, low_open=True)}, edge=("local_steps",)),
]
