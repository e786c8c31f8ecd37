"""Experiment functions of the primer notebook (module level, so sweep workers can import them)."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array, check_choice, check_int, check_real
from fedlab.algorithms import Centralized, FedAvg, Local
from fedlab.data import load_digits_arrays, partition_dirichlet
from fedlab.engine import FederatedDataset, LocalSGD, run
from fedlab.models import LinearModel

__all__ = ["PRIMER_METHODS", "digits_federation", "train_on_digits", "rounds_to_reach"]

PRIMER_METHODS = {"fedavg": FedAvg, "local": Local, "centralized": Centralized}


def digits_federation(n_clients: int, alpha: float, seed: int) -> FederatedDataset:
    """scikit-learn's digits split over ``n_clients`` with Dirichlet(``alpha``) label proportions, 25% test."""
    check_int("seed", seed, low=0)
    x, y = load_digits_arrays()
    part = partition_dirichlet(y, n_clients, alpha, min_size=10, rng=seed)
    return FederatedDataset.from_client_arrays([x[i] for i in part.indices], [y[i] for i in part.indices],
                                               test_fraction=0.25, n_classes=10, seed=seed)


def train_on_digits(*, method: str, alpha: float, local_steps: int, participation: float, rounds: int,
                    n_clients: int, lr: float = 0.5, batch_size: int = 16, seed: int = 0) -> dict:
    """Train a softmax regression with ``method`` on the digits federation; return curves and final metrics
    (``n_test``: the clients' test-set sizes).

    Examples
    --------
    >>> out = train_on_digits(method="fedavg", alpha=1.0, local_steps=1, participation=1.0, rounds=3, n_clients=5)
    >>> out["rounds"], 0.0 <= out["final_accuracy"] <= 1.0
    ([0, 1, 2, 3], True)
    """
    check_choice("method", method, PRIMER_METHODS)
    check_real("participation", participation, low=0, high=1, low_open=True)
    check_int("rounds", rounds, low=0)
    solver = LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size)
    data = digits_federation(n_clients, alpha, seed)
    kwargs = {"participation": participation} if method == "fedavg" else {}
    _, history = run(PRIMER_METHODS[method](LinearModel(64, 10), solver, **kwargs), data, rounds=rounds, seed=seed,
                     progress=False)
    rounds_axis, acc = history.curve("test_accuracy")
    return {"rounds": rounds_axis.tolist(), "test_accuracy": acc.tolist(),
            "train_loss": history.curve("train_loss")[1].tolist(),
            "final_accuracy": float(acc[-1]),
            "bottom_decile": history.final("test_accuracy", "bottom_decile"), "n_test": data.test.n.tolist()}


def rounds_to_reach(rounds, accuracy, target: float) -> float:
    """First round at which ``accuracy`` reaches ``target`` (``inf`` if never)."""
    rounds = check_array("rounds", rounds, ndim=1)
    hit = np.flatnonzero(check_array("accuracy", accuracy, shape=rounds.shape) >= check_real("target", target))
    return float(rounds[hit[0]]) if hit.size else float("inf")
