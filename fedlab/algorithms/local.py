r"""Baselines without federation: Local (each client alone) and Centralized (all data pooled)."""
from __future__ import annotations

import numpy as np

from fedlab._rng import Stream
from fedlab._validation import check_choice
from fedlab.engine import FederatedDataset, LocalSGD, broadcast, evaluate
from fedlab.models import Model, check_model
from fedlab.algorithms.common import (BACKENDS, ClientsState, ServerState, check_data, check_solver, evaluate_global,
                                       initial_params, population_optimizer, train_rows)

__all__ = ["Local", "Centralized"]


class Local:
    """Every client trains its own model on its own data; no communication (a personalised baseline)."""

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD, *, backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)
        self.backend = check_choice("backend", backend, BACKENDS)

    def init(self, data: FederatedDataset, seed: int) -> ClientsState:
        check_data(self.model, data)
        params = initial_params(self.model, seed, data.device)
        return ClientsState(broadcast(params, data.n_clients),
                            optimizer=population_optimizer(self.solver, params, data.n_clients))

    def round(self, state: ClientsState, data: FederatedDataset, seed: int) -> tuple[ClientsState, dict]:
        new, loss, optimizer = train_rows(self.model, self.solver, state.params, data.train,
                                          key=(seed, state.round, Stream.LOCAL), round_index=state.round,
                                          optimizer=state.optimizer, state_rows=np.arange(data.n_clients),
                                          backend=self.backend)
        return ClientsState(new, state.round + 1, optimizer), {"local_loss": float(loss.mean())}

    def evaluate(self, state: ClientsState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate(self.model, state.params, data.train, data.test)


class Centralized:
    """SGD on the union of all clients' data: E steps per "round", one model evaluated on every client."""

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD) -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)

    def init(self, data: FederatedDataset, seed: int) -> ServerState:
        check_data(self.model, data)
        params = initial_params(self.model, seed, data.device)
        return ServerState(params, optimizer=population_optimizer(self.solver, params, 1))

    def round(self, state: ServerState, data: FederatedDataset, seed: int) -> tuple[ServerState, dict]:
        new, loss, optimizer = train_rows(self.model, self.solver, broadcast(state.params, 1), data.train.pooled(),
                                          key=(seed, state.round, Stream.LOCAL), round_index=state.round,
                                          optimizer=state.optimizer, state_rows=[0], backend="loop")
        return ServerState({k: v[0] for k, v in new.items()}, state.round + 1, optimizer), \
            {"local_loss": float(loss[0])}

    def evaluate(self, state: ServerState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate_global(self.model, state.params, data.train, data.test)
