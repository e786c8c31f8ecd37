"""Pieces every algorithm builds on, core and chapter alike: server and clients states, argument checks, client
weights, client sampling, initial parameters and the global model's evaluation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import Stream, numpy_rng, torch_generator
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_simplex, check_type
from fedlab.engine import (ClientData, FederatedDataset, LocalSGD, OptimizerState, broadcast, check_mixing_matrix,
                           check_model_data, evaluate, initial_optimizer_state, local_train, resolve_device)
from fedlab.models import Model, Params, check_model, check_param_dict, check_params

__all__ = ["WEIGHTS", "BACKENDS", "Participation", "ServerState", "ClientsState", "check_solver",
           "population_optimizer", "train_rows", "check_weights",
           "check_data", "check_mixing", "initial_params", "client_weights", "check_participation",
           "sample_participants", "evaluate_global"]

WEIGHTS = ("size", "uniform")
BACKENDS = ("auto", "batched", "loop")


Participation = Union[float, Callable[[int, np.random.Generator], np.ndarray]]


@dataclass(frozen=True)
class ServerState:
    """One global model, the number of rounds done, and the clients' optimizer state when the solver keeps it."""

    params: Params
    round: int = 0
    optimizer: OptimizerState | None = None

    def __post_init__(self) -> None:
        check_type("params", self.params, dict)
        check_int("round", self.round, low=0)
        check_type("optimizer", self.optimizer, OptimizerState, optional=True)


@dataclass(frozen=True)
class ClientsState(ServerState):
    """One model per client, stacked ``(K, ...)``, the number of rounds done, and the clients' optimizer state when
    the solver keeps it (the fields and checks of :class:`ServerState`)."""


STATEFUL = "FedAvg, FedProx, FedAvg+, Local, Centralized, decentralised SGD, FedEM and the availability methods"
"""The algorithms that keep their clients' optimizer state and follow a step-size schedule (:func:`train_rows`):
their class attribute ``keeps_optimizer_state`` is true."""


def check_solver(solver, *, stateful: bool = False) -> LocalSGD:
    """Return ``solver`` if it is a :class:`LocalSGD`, else raise a ``TypeError`` naming it. An algorithm that does not
    keep optimizer state across rounds (``stateful=False``) refuses a solver with ``keep_state`` or ``schedule``,
    which it would otherwise silently ignore."""
    if not isinstance(solver, LocalSGD):
        raise TypeError(f"solver must be a LocalSGD, got {type(solver).__name__}.")
    if not check_bool("stateful", stateful) and (solver.keep_state or solver.schedule is not None):
        raise ValueError(f"solver.keep_state and solver.schedule need an algorithm that keeps its clients' optimizer "
                         f"state and follows the round ({STATEFUL}); this one does not: got keep_state="
                         f"{solver.keep_state}, schedule={solver.schedule!r}.")
    return solver


def population_optimizer(solver: LocalSGD, params: Params, n_rows: int) -> OptimizerState | None:
    """The zero optimizer state of ``n_rows`` copies of ``params`` (one per client, or per client and component)
    when ``solver.keep_state``, else ``None``."""
    check_type("solver", solver, LocalSGD)
    check_param_dict("params", params, stacked=False)
    n_rows = check_int("n_rows", n_rows, low=1)
    return initial_optimizer_state(solver, broadcast(params, n_rows)) if solver.keep_state else None


def train_rows(model: Model, solver: LocalSGD, params: Params, data: ClientData, *, key: tuple, round_index: int,
               optimizer: OptimizerState | None, state_rows, **options) -> tuple[Params, Tensor, OptimizerState | None]:
    """One round of :func:`~fedlab.engine.local_train` for rows whose optimizer state is rows ``state_rows`` of the
    population's ``optimizer`` (``None`` when the solver keeps none). Returns the new rows, their local loss and the
    population's new optimizer state; ``options`` are local_train's (``rows``, ``anchor``, ...)."""
    if optimizer is None:
        result = local_train(model, params, data, solver, key=key, round_index=round_index, **options)
        return result.params, result.local_loss, None
    check_type("optimizer", optimizer, OptimizerState)
    state_rows = check_array("state_rows", state_rows, ndim=1, dtype=np.int64)
    if state_rows.size == 0 or state_rows.min() < 0 or state_rows.max() >= len(optimizer.steps):
        raise ValueError(f"state_rows must index the {len(optimizer.steps)} rows of optimizer, got {state_rows.tolist()}.")
    result = local_train(model, params, data, solver, key=key, round_index=round_index,
                         optimizer_state=optimizer.select(state_rows), **options)
    return result.params, result.local_loss, optimizer.assign(state_rows, result.optimizer_state)


def check_weights(weights, name: str = "weights"):
    """Validate aggregation weights at construction: ``"size"``, ``"uniform"`` or a probability vector (its length
    is checked against the clients by :func:`client_weights`)."""
    if isinstance(weights, str):
        return check_choice(name, weights, WEIGHTS)
    return check_simplex(name, weights, ndim=1)


def check_data(model: Model, data, name: str = "data") -> FederatedDataset:
    """Return ``data`` when it is a FederatedDataset whose train and test samples fit ``model`` (feature shape,
    labels within the model's outputs), else raise naming ``name``: done once, at ``init``."""
    check_type(name, data, FederatedDataset)
    check_model_data(model, data.train, f"{name}.train")
    check_model_data(model, data.test, f"{name}.test")
    return data


def check_mixing(mixing_matrix):
    """A gossip matrix at construction: a callable ``(round, rng) -> W``, or a doubly stochastic square array (its
    size is checked against the clients at ``init``)."""
    if callable(mixing_matrix):
        return mixing_matrix
    w = check_array("mixing_matrix", mixing_matrix, ndim=2)
    return check_mixing_matrix(w, w.shape[0] if w.shape[0] else 1)


def initial_params(model: Model, seed: int, device: str | torch.device = "cpu") -> Params:
    """The run's initial model, drawn from ``(seed, INIT)`` (on the CPU generator: the same on every device) and
    placed on ``device``; every client starts from it."""
    model, seed, device = check_model(model), check_int("seed", seed, low=0), resolve_device(device)
    return {k: v.to(device) for k, v in model.init(torch_generator(seed, Stream.INIT)).items()}


def client_weights(weights, data: ClientData, name: str = "weights") -> np.ndarray:
    """Aggregation weights p_k: ``"size"`` (n_k / n), ``"uniform"`` (1/K) or an explicit probability vector."""
    check_type("data", data, ClientData)
    if isinstance(weights, str):
        if weights == "size":
            n = data.n.cpu().numpy().astype(float)
            return n / n.sum()
        if weights == "uniform":
            return np.full(data.n_clients, 1.0 / data.n_clients)
        raise ValueError(f"{name} must be 'size', 'uniform' or a probability vector, got {weights!r}.")
    return check_simplex(name, weights, ndim=1, size=data.n_clients)


def check_participation(participation: Participation) -> Participation:
    """Validate a participation fraction in (0, 1] or a callable ``(round, rng) -> mask``."""
    if callable(participation):
        return participation
    return check_real("participation", participation, low=0, high=1, low_open=True)


def sample_participants(participation: Participation, n_clients: int, seed: int, round_: int) -> np.ndarray:
    """Indices of the clients taking part in round ``round_``.

    A float q samples ``max(1, round(qK))`` clients uniformly without replacement; a callable gets
    ``(round, rng)`` and returns a boolean mask of shape (K,) or an index array.
    """
    participation = check_participation(participation)
    n_clients = check_int("n_clients", n_clients, low=1)
    rng = numpy_rng(check_int("seed", seed, low=0), check_int("round_", round_, low=0), Stream.SAMPLING)
    if callable(participation):
        chosen = np.asarray(participation(round_, rng))
        if chosen.dtype == bool:
            if chosen.shape != (n_clients,):
                raise ValueError(f"participation mask must have shape ({n_clients},), got {chosen.shape}.")
            chosen = np.flatnonzero(chosen)
        return np.sort(chosen.astype(int))
    if participation >= 1.0:
        return np.arange(n_clients)
    m = max(1, int(round(participation * n_clients)))
    return np.sort(rng.choice(n_clients, size=m, replace=False))


def evaluate_global(model: Model, params: Params, train: ClientData, test: ClientData) -> dict[str, np.ndarray]:
    """Per-client metrics of one global model."""
    params = check_params(model, params, stacked=False)
    check_type("train", train, ClientData)
    check_type("test", test, ClientData)
    return evaluate(model, broadcast(params, train.n_clients), train, test)
