r"""Decentralised SGD with gossip: local steps, then :math:`\Theta \leftarrow W_t \Theta` (DPASGD, thesis eq. (2.2))."""
from __future__ import annotations

from typing import Callable, Union

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_choice
from fedlab.engine import FederatedDataset, LocalSGD, broadcast, check_mixing_matrix, evaluate, gossip
from fedlab.models import Model, check_model
from fedlab.algorithms.common import (BACKENDS, ClientsState, check_data, check_mixing, check_solver, initial_params,
                                       population_optimizer, train_rows)

__all__ = ["DecentralizedSGD"]

MixingSpec = Union[np.ndarray, Callable[[int, np.random.Generator], np.ndarray]]


class DecentralizedSGD:
    """Every client keeps its model, runs E local steps and averages with its neighbours.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
    mixing_matrix : array (K, K) or callable
        A doubly stochastic gossip matrix, or ``f(round, rng) -> W_t`` for time-varying
        topologies (MATCHA's random matchings).
    """

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD, mixing_matrix: MixingSpec, *, backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)
        self.backend = check_choice("backend", backend, BACKENDS)
        self.mixing_matrix = check_mixing(mixing_matrix)

    def _matrix(self, round_: int, n: int, seed: int) -> np.ndarray:
        w = self.mixing_matrix
        if callable(w):
            w = w(round_, numpy_rng(seed, round_, Stream.SAMPLING))
        return check_mixing_matrix(w, n)

    def init(self, data: FederatedDataset, seed: int) -> ClientsState:
        check_data(self.model, data)
        if not callable(self.mixing_matrix):
            check_mixing_matrix(self.mixing_matrix, data.n_clients)
        params = initial_params(self.model, seed, data.device)
        return ClientsState(broadcast(params, data.n_clients),
                            optimizer=population_optimizer(self.solver, params, data.n_clients))

    def round(self, state: ClientsState, data: FederatedDataset, seed: int) -> tuple[ClientsState, dict]:
        new, loss, optimizer = train_rows(self.model, self.solver, state.params, data.train,
                                          key=(seed, state.round, Stream.LOCAL), round_index=state.round,
                                          optimizer=state.optimizer, state_rows=np.arange(data.n_clients),
                                          backend=self.backend)
        mixed = gossip(new, self._matrix(state.round, data.n_clients, seed))
        return ClientsState(mixed, state.round + 1, optimizer), {"local_loss": float(loss.mean())}

    def evaluate(self, state: ClientsState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate(self.model, state.params, data.train, data.test)
