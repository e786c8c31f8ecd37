r"""FedAvg (McMahan et al. 2017) and FedProx (Li et al. 2020) on the stacked engine.

Each round the server samples clients :math:`S_t`, broadcasts :math:`\theta^t`, every sampled client runs
E local SGD steps, and the server sets :math:`\theta^{t+1} = \sum_{k\in S_t} p_k \theta_k^{t+1} /
\sum_{k\in S_t} p_k` (thesis Algorithm 1 for objective (1.1)). FedProx adds :math:`\frac{\mu}{2}\|\theta-\theta^t\|^2` to the
local objective. With a solver that keeps its state (``LocalSGD(keep_state=True)``), every client keeps its
optimizer (momentum buffer or Adam moments) from one round in which it trains to the next and loads the new
global model into it, as the authors' code does. This module is the pattern the chapters copy: a frozen state,
``init``, ``round`` and ``evaluate``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from fedlab._rng import Stream
from fedlab._validation import check_choice, check_real
from fedlab.engine import FederatedDataset, LocalSGD, broadcast, weighted_average
from fedlab.models import Model, check_model
from fedlab.algorithms.common import (BACKENDS, Participation, ServerState, check_data, check_participation,
                                       check_solver, check_weights, client_weights, evaluate_global, initial_params,
                                       population_optimizer, sample_participants, train_rows)

__all__ = ["FedAvg", "FedProx"]


class FedAvg:
    """Federated averaging with client sampling.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        Local solver (E = ``solver.local_steps``).
    participation : float in (0, 1] or callable
        Fraction of clients sampled per round, or ``f(round, rng) -> mask`` (e.g. an availability trace).
    weights : "size", "uniform" or array (K,)
        Aggregation weights :math:`p_k`.
    backend : {"auto", "batched", "loop"}
    """

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD, *, participation: Participation = 1.0,
                 weights="size", backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)
        self.participation = check_participation(participation)
        self.weights = check_weights(weights)
        self.backend = check_choice("backend", backend, BACKENDS)

    def init(self, data: FederatedDataset, seed: int) -> ServerState:
        check_data(self.model, data)
        client_weights(self.weights, data.train)  # validate early
        params = initial_params(self.model, seed, data.device)
        return ServerState(params, optimizer=population_optimizer(self.solver, params, data.n_clients))

    def round(self, state: ServerState, data: FederatedDataset, seed: int) -> tuple[ServerState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return ServerState(state.params, state.round + 1, state.optimizer), \
                {"participants": [], "local_loss": float("nan")}
        start = broadcast(state.params, len(chosen))
        new, loss, optimizer = train_rows(self.model, self.solver, start, data.train,
                                          key=(seed, state.round, Stream.LOCAL), round_index=state.round,
                                          optimizer=state.optimizer, state_rows=chosen, rows=chosen, anchor=start,
                                          backend=self.backend)
        p = client_weights(self.weights, data.train)[chosen]
        info = {"participants": chosen.tolist(), "local_loss": float(loss.mean())}
        return ServerState(weighted_average(new, p), state.round + 1, optimizer), info

    def evaluate(self, state: ServerState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate_global(self.model, state.params, data.train, data.test)


class FedProx(FedAvg):
    r"""FedAvg whose local objective adds :math:`\frac{\mu}{2}\|\theta - \theta^t\|^2` (``mu`` > 0)."""

    def __init__(self, model: Model, solver: LocalSGD, *, mu: float, **kwargs) -> None:
        mu = check_real("mu", mu, low=0, low_open=True)
        super().__init__(model, replace(check_solver(solver, stateful=True), prox_mu=mu), **kwargs)
        self.mu = mu
