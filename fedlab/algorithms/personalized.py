r"""Personalized-FL baselines on the stacked engine (thesis §3.5.6 and §3.6.3 comparisons).

* :class:`FedAvgPlus` — FedAvg, then each client fine-tunes the global model with one epoch of
  local SGD before predicting ("FedAvg+" [Jia+23]);
* :class:`ClusteredFL` — Sattler et al. [SMS20]: one model per cluster; a cluster is split in two
  (by the cosine similarity of its clients' updates) when its average update is small and some
  client's update is large;
* :class:`PFedMe` — Dinh et al. [TTN20]: Moreau-envelope personalization;
* :class:`APFL` — Deng et al. [DKM20]: personal model :math:`\alpha v_t + (1-\alpha) w`;
* :class:`Ditto` — Li et al. [Li+21]: personal :math:`v_t` minimising :math:`f_t(v) + \frac\lambda2\|v - w\|^2`;
* :class:`FedRep` — Collins et al. [Col+21]: shared body, local head.

Every class follows the engine's algorithm protocol (``init``/``round``/``evaluate``) and reports
per-client metrics of the model each client would actually use. The evaluation protocol shared by the
personalization chapters is :data:`PROTOCOL`: the average test accuracy weighted by local test size,
and the bottom decile of client accuracies (``History.curve(reduce="weighted" / "bottom_decile")``);
:func:`protocol_scores` computes both.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from fedlab._rng import Stream, check_key
from fedlab._validation import check_array, check_choice, check_int, check_real, check_type
from fedlab.engine import (REDUCTIONS, ClientData, FederatedDataset, History, LocalSGD, OptimizerState, broadcast,
                           check_model_data, evaluate, local_sgd, weighted_average)
from fedlab.models import Model, Params, check_model, check_params
from fedlab.algorithms.common import (BACKENDS, Participation, ServerState, check_data, check_participation, check_solver,
                                       check_weights, client_weights, evaluate_global, initial_params,
                                       sample_participants)
from fedlab.algorithms.fedavg import FedAvg

__all__ = [
    "PROTOCOL",
    "protocol_scores",
    "history_scores",
    "finetune",
    "FineTuneState",
    "PersonalState",
    "ClusterState",
    "FedAvgPlus",
    "ClusteredFL",
    "PFedMe",
    "APFL",
    "Ditto",
    "FedRep",
]

PROTOCOL = {"average": ("test_accuracy", "weighted"), "bottom_decile": ("test_accuracy", "bottom_decile")}
"""Evaluation protocol of the personalization chapters: name -> (metric, History reduction)."""


def protocol_scores(metrics: dict, n_test) -> dict[str, float]:
    """``average`` (test accuracy weighted by local test size) and ``bottom_decile`` of per-client metrics.

    Parameters
    ----------
    metrics : dict of per-client arrays (K,)
        Must contain ``test_accuracy`` (e.g. an ``evaluate`` or ``adapt`` result).
    n_test : array-like (K,)
        Local test sizes.
    """
    if "test_accuracy" not in check_type("metrics", metrics, dict):
        raise ValueError(f"metrics must contain 'test_accuracy', got keys {sorted(metrics)}.")
    acc = check_array("metrics['test_accuracy']", metrics["test_accuracy"], ndim=1, finite=False)
    if np.any((acc < 0) | (acc > 1)):  # NaN marks a client without test samples
        raise ValueError("metrics['test_accuracy'] must hold accuracies in [0, 1] (or NaN for a client without test "
                         "samples).")
    w = check_array("n_test", n_test, shape=acc.shape, nonnegative=True)
    return {name: REDUCTIONS[red](np.asarray(metrics[metric], dtype=float), w) for name, (metric, red) in PROTOCOL.items()}


def history_scores(history: History, index: int = -1) -> dict[str, float]:
    """:data:`PROTOCOL` scores of a run at evaluation ``index`` (default: the last one)."""
    check_type("history", history, History)
    if "test_accuracy" not in history.clients:
        raise ValueError(f"history must hold test_accuracy, got {sorted(history.clients)}.")
    n = len(history.rounds)
    index = check_int("index", index, low=-n, high=n - 1)
    out = {}
    for name, (metric, red) in PROTOCOL.items():
        _, curve = history.curve(metric, red)
        out[name] = float(curve[index])
    return out


# ----------------------------------------------------------------------------------------------
# FedAvg+ : FedAvg followed by local fine-tuning


def _one_step(solver: LocalSGD, lr: float | None = None, **changes) -> LocalSGD:
    return replace(solver, local_steps=1, keep_state=False, schedule=None, **({"lr": lr} if lr is not None else {}),
                   **changes)


def finetune(model: Model, params: Params, data: ClientData, solver: LocalSGD, *, key: tuple, epochs: float = 1.0,
             clients=None, backend: str = "auto") -> Params:
    r"""Fine-tune a model on each client: :math:`\lceil \text{epochs}\cdot n_t / B\rceil` SGD steps on client :math:`t`.

    With ``solver.prox_mu > 0`` every step adds :math:`\mu(\theta - \theta^{start})`: the proximal term
    stays anchored at the starting model (Ditto's and pFedMe's personalization of a new client). A solver with
    ``epochs`` set fine-tunes as the authors' code does: ``epochs`` shuffled passes (a whole number) with one
    optimizer throughout, its momentum kept from step to step.

    Parameters
    ----------
    model : Model
    params : dict of Tensor (...)
        The starting (global) model.
    data : ClientData
    solver : LocalSGD
        Step size and batch size ``B`` (``local_steps`` is ignored; momentum restarts every step).
    key : tuple of int
        Random key prefix; step ``s`` uses ``(*key, s)``.
    epochs : float
        Passes over the local data (> 0).
    clients : sequence of int, optional
        Clients to fine-tune (default all).

    Returns
    -------
    dict of Tensor (len(clients), ...)
    """
    epochs = check_real("epochs", epochs, low=0, low_open=True)
    check_model_data(model, data)
    check_solver(solver, stateful=True)   # one fine-tuning: nothing to keep across rounds
    check_params(model, params, stacked=False)
    key = check_key(key)
    clients = np.arange(data.n_clients) if clients is None else _check_clients(clients, data.n_clients)
    if solver.epochs is not None:
        if epochs != int(epochs):
            raise ValueError(f"epochs must be a whole number of passes when solver.epochs is set, got {epochs}.")
        start = broadcast(params, len(clients))
        tuned = replace(solver, epochs=int(epochs), keep_state=False, schedule=None)
        return local_sgd(model, start, data, tuned, key=key, rows=clients, anchor=start, backend=backend)[0]
    steps = np.ceil(epochs * data.n[clients].cpu().numpy() / solver.batch_size).astype(int)
    current = {k: v.unsqueeze(0).repeat(len(clients), *([1] * v.dim())) for k, v in params.items()}
    start = {k: v.clone() for k, v in current.items()}
    one = _one_step(solver)
    for s in range(int(steps.max(initial=0))):
        active = np.flatnonzero(steps > s)
        rows = {k: v[active] for k, v in current.items()}
        new, _ = local_sgd(model, rows, data, one, key=(*key, s), rows=clients[active],
                           anchor={k: v[active] for k, v in start.items()}, backend=backend)
        for k in current:
            current[k][active] = new[k]
    return current


def _check_clients(clients, n_clients: int) -> np.ndarray:
    arr = np.asarray(clients)
    if arr.dtype.kind not in "iu" or arr.ndim != 1 or arr.size == 0:
        raise TypeError(f"clients must be a non-empty 1-D array of client indices, got {clients!r}.")
    if arr.min() < 0 or arr.max() >= n_clients:
        raise ValueError(f"clients must hold indices in [0, {n_clients}), got values in [{arr.min()}, {arr.max()}].")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class FineTuneState:
    """Global model, rounds done, the run's seed (fine-tuning draws its minibatches from it) and, when the solver
    keeps it, the clients' optimizer state."""

    params: Params
    round: int = 0
    seed: int = 0
    optimizer: OptimizerState | None = None

    @classmethod
    def from_fedavg(cls, state: ServerState, seed: int) -> "FineTuneState":
        """A FedAvg run's state (its global model and rounds done) as FedAvg+'s, fine-tuning from ``seed``: FedAvg+
        trains as FedAvg, so one FedAvg run serves both."""
        check_type("state", state, ServerState)
        return cls(state.params, state.round, check_int("seed", seed, low=0), state.optimizer)


class FedAvgPlus(FedAvg):
    """FedAvg whose clients predict with the global model fine-tuned on their own data (FedAvg+).

    Training is FedAvg's; at evaluation every client runs ``finetune_epochs`` epochs of local SGD
    from the current global model (step size ``finetune_lr``, default the solver's), as the reference
    code's ``--locally_tune_clients``. The global model itself is unchanged.

    Parameters
    ----------
    model, solver, participation, weights, backend :
        As in :class:`~fedlab.algorithms.FedAvg`.
    finetune_epochs : float
    finetune_lr : float, optional
    """

    def __init__(self, model: Model, solver: LocalSGD, *, finetune_epochs: float = 1.0, finetune_lr: float | None = None,
                 **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.finetune_epochs = check_real("finetune_epochs", finetune_epochs, low=0, low_open=True)
        self.finetune_solver = solver if finetune_lr is None else \
            _one_step(solver, check_real("finetune_lr", finetune_lr, low=0, low_open=True))

    def init(self, data: FederatedDataset, seed: int) -> FineTuneState:
        return FineTuneState.from_fedavg(super().init(data, seed), seed)

    def round(self, state: FineTuneState, data: FederatedDataset, seed: int) -> tuple[FineTuneState, dict]:
        new, info = super().round(ServerState(state.params, state.round, state.optimizer), data, seed)
        return FineTuneState.from_fedavg(new, seed), info

    def personalize(self, state: FineTuneState, data: ClientData, seed: int | None = None) -> Params:
        """Each client's fine-tuned model, stacked ``(K, ...)``; minibatches from ``seed`` (default the run's)."""
        seed = state.seed if seed is None else check_int("seed", seed, low=0)
        return finetune(self.model, state.params, data, self.finetune_solver, epochs=self.finetune_epochs,
                        key=(seed, state.round, Stream.PERSONAL), backend=self.backend)

    def evaluate(self, state: FineTuneState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate(self.model, self.personalize(state, data.train), data.train, data.test)

    def adapt(self, state: FineTuneState, new_data: FederatedDataset, *,
              seed: int) -> tuple[Params, dict[str, np.ndarray]]:
        """Clients unseen at training fine-tune the global model on their data (as in :meth:`evaluate`).

        Returns their fine-tuned models stacked ``(K_new, ...)`` and per-client metrics ``(K_new,)``; the
        minibatches derive from ``(seed, state.round)``.
        """
        personal = self.personalize(state, new_data.train, seed)
        return personal, evaluate(self.model, personal, new_data.train, new_data.test)


# ----------------------------------------------------------------------------------------------
# Clustered FL


@dataclass(frozen=True)
class ClusterState:
    """One model per cluster stacked ``(C, ...)``, the cluster of every client (K,), rounds done."""

    params: Params
    clusters: tuple
    round: int = 0


def _flat(params: Params) -> torch.Tensor:
    return torch.cat([v.reshape(v.shape[0], -1).to(torch.float64) for v in params.values()], dim=1)


def _bipartition(updates: np.ndarray) -> np.ndarray:
    """Split rows in two by complete-linkage clustering of the cosine distances (Sattler et al.)."""
    from sklearn.cluster import AgglomerativeClustering

    norms = np.linalg.norm(updates, axis=1, keepdims=True)
    unit = updates / np.maximum(norms, 1e-30)
    dist = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    labels = AgglomerativeClustering(n_clusters=2, metric="precomputed", linkage="complete").fit(dist).labels_
    return labels


class ClusteredFL:
    r"""Clustered federated learning (Sattler, Müller, Samek 2020) on the engine.

    Every client trains its cluster's model for E local steps; :math:`\Delta_t` is its update. Within a
    cluster :math:`c`, if :math:`\|\sum_{t\in c} p_t\Delta_t\| < \text{tol}_1` (the cluster is near a
    stationary point of its joint objective) and :math:`\max_{t\in c}\|\Delta_t\| > \text{tol}_2` (some
    client is not) and the cluster has more than 2 participating clients, it is split in two by
    complete-linkage clustering of the cosine distances between updates. Then each cluster averages
    its clients' models. Tolerances default to the reference code's (0.4, 1.6); they depend on the
    scale of the updates (lr × E × model size), and the thesis notes they are hard to tune.

    Parameters
    ----------
    model, solver, participation, weights, backend :
        As in :class:`~fedlab.algorithms.FedAvg`.
    tol_1, tol_2 : float
    warmup : int
        No split before this round.
    max_clusters : int
    """

    def __init__(self, model: Model, solver: LocalSGD, *, tol_1: float = 0.4, tol_2: float = 1.6, warmup: int = 0,
                 max_clusters: int = 16, participation: Participation = 1.0, weights="size",
                 backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver)
        self.tol_1 = check_real("tol_1", tol_1, low=0)
        self.tol_2 = check_real("tol_2", tol_2, low=0)
        self.warmup = check_int("warmup", warmup, low=0)
        self.max_clusters = check_int("max_clusters", max_clusters, low=1)
        self.participation = check_participation(participation)
        self.weights = check_weights(weights)
        self.backend = check_choice("backend", backend, BACKENDS)

    def init(self, data: FederatedDataset, seed: int) -> ClusterState:
        check_data(self.model, data)
        client_weights(self.weights, data.train)
        params = {k: v.unsqueeze(0) for k, v in initial_params(self.model, seed, data.device).items()}
        return ClusterState(params, tuple([0] * data.n_clients))

    def round(self, state: ClusterState, data: FederatedDataset, seed: int) -> tuple[ClusterState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        clusters = np.asarray(state.clusters)
        if len(chosen) == 0:
            return ClusterState(state.params, state.clusters, state.round + 1), {"participants": [], "n_clusters":
                                                                                 int(clusters.max()) + 1}
        start = {k: v[torch.as_tensor(clusters[chosen], device=v.device)] for k, v in state.params.items()}
        new, loss = local_sgd(self.model, start, data.train, self.solver, key=(seed, state.round, Stream.LOCAL),
                              rows=chosen, anchor=start, backend=self.backend)
        updates = (_flat(new) - _flat(start)).cpu().numpy()
        p = client_weights(self.weights, data.train)
        n_clusters = int(clusters.max()) + 1
        new_clusters = clusters.copy()
        splits = []
        for c in range(n_clusters):
            members = np.flatnonzero(clusters[chosen] == c)
            if len(members) <= 2 or state.round < self.warmup or n_clusters + len(splits) >= self.max_clusters:
                continue
            w = p[chosen[members]] / p[chosen[members]].sum()
            mean_norm = float(np.linalg.norm(w @ updates[members]))
            max_norm = float(np.linalg.norm(updates[members], axis=1).max())
            if mean_norm < self.tol_1 and max_norm > self.tol_2:
                labels = _bipartition(updates[members])
                new_id = n_clusters + len(splits)
                new_clusters[chosen[members[labels == 1]]] = new_id
                splits.append(c)
        # Non-participating clients of a split cluster stay with its first half.
        params = {}
        total = n_clusters + len(splits)
        old_of = list(range(n_clusters)) + splits
        for k, v in state.params.items():
            rows = []
            for c in range(total):
                members = np.flatnonzero(new_clusters[chosen] == c)
                if len(members):
                    index = torch.as_tensor(members, device=new[k].device)
                    rows.append(weighted_average({k: new[k][index]}, p[chosen[members]])[k])
                else:
                    rows.append(v[old_of[c]])
            params[k] = torch.stack(rows)
        info = {"participants": chosen.tolist(), "local_loss": float(loss.mean()), "n_clusters": total,
                "splits": splits}
        return ClusterState(params, tuple(int(c) for c in new_clusters), state.round + 1), info

    def evaluate(self, state: ClusterState, data: FederatedDataset) -> dict[str, np.ndarray]:
        idx = torch.as_tensor(np.asarray(state.clusters), device=data.device)
        return evaluate(self.model, {k: v[idx] for k, v in state.params.items()}, data.train, data.test)

    def adapt(self, state: ClusterState, new_data: FederatedDataset, *,
              seed: int) -> tuple[ClusterState, dict[str, np.ndarray]]:
        """Clients unseen at training join the cluster whose model has the lowest loss on their training data.

        Returns the new clients' :class:`ClusterState` (the cluster models and each new client's cluster)
        and its per-client metrics ``(K_new,)``, as :meth:`evaluate`'s. The choice is deterministic: ``seed``
        (checked) draws nothing.
        """
        check_int("seed", seed, low=0)
        k = new_data.n_clients
        losses = np.stack([evaluate(self.model, broadcast({n: v[c] for n, v in state.params.items()}, k),
                                    new_data.train, new_data.train)["train_loss"]
                           for c in range(next(iter(state.params.values())).shape[0])])
        joined = ClusterState(state.params, tuple(int(c) for c in losses.argmin(0)), state.round)
        return joined, self.evaluate(joined, new_data)


# ----------------------------------------------------------------------------------------------
# Global + personal models: pFedMe, APFL, Ditto, FedRep


@dataclass(frozen=True)
class PersonalState:
    """A shared model ``params`` (...) and per-client personal parameters ``personal`` (K, ...); rounds done."""

    params: Params
    personal: Params
    round: int = 0


class _GlobalPersonal:
    """Shared plumbing: validation, client sampling, aggregation of the global model."""

    def __init__(self, model: Model, solver: LocalSGD, *, participation: Participation = 1.0, weights="size",
                 backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver)
        self.participation = check_participation(participation)
        self.weights = check_weights(weights)
        self.backend = check_choice("backend", backend, BACKENDS)

    def init(self, data: FederatedDataset, seed: int) -> PersonalState:
        check_data(self.model, data)
        client_weights(self.weights, data.train)
        params = initial_params(self.model, seed, data.device)
        return PersonalState(params, {k: v.clone() for k, v in broadcast(params, data.n_clients).items()})

    def _aggregate(self, new: Params, chosen: np.ndarray, data: FederatedDataset) -> Params:
        return weighted_average(new, client_weights(self.weights, data.train)[chosen])

    @staticmethod
    def _scatter(personal: Params, chosen: np.ndarray, rows: Params) -> Params:
        out = {k: v.clone() for k, v in personal.items()}
        for k in out:
            out[k][torch.as_tensor(chosen, device=out[k].device)] = rows[k]
        return out

    def personal_models(self, state: PersonalState) -> Params:
        """The model each client predicts with, stacked ``(K, ...)``."""
        return state.personal

    def evaluate(self, state: PersonalState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate(self.model, self.personal_models(state), data.train, data.test)

    def evaluate_global(self, state: PersonalState, data: FederatedDataset) -> dict[str, np.ndarray]:
        """Per-client metrics of the shared model alone."""
        return evaluate_global(self.model, state.params, data.train, data.test)

    def adapt(self, state: PersonalState, new_data: FederatedDataset, *, seed: int, epochs: float = 1.0,
              steps: int | None = None,
              stream: tuple[int, ...] = (Stream.PERSONAL,)) -> tuple[Params, dict[str, np.ndarray]]:
        """Personalize clients unseen at training from the shared model (each method's ``_adapt`` says how).

        Parameters
        ----------
        state : PersonalState
            The trained state; only the shared model (and, for FedRep, the mean head) is used.
        new_data : FederatedDataset
            The new clients: they train on ``new_data.train``.
        seed : int
            Minibatches are drawn from the key ``(seed, *stream)``.
        epochs : float
            Budget of personal SGD (> 0), in passes over the local data or in multiples of the method's
            local steps.
        steps : int, optional
            Instead of ``epochs``: this many SGD steps for every new client (e.g. the budget the personal
            parts got during training).
        stream : tuple of int
            The key's ids after ``seed`` (default: the personalisation stream).

        Returns
        -------
        personal : dict of Tensor (K_new, ...)
            The model each new client predicts with.
        metrics : dict of array (K_new,)
            ``train_*``/``test_*`` metrics of those models, as :meth:`evaluate`'s.
        """
        key = (check_int("seed", seed, low=0), *(check_int("stream", i, low=0) for i in stream))
        epochs = check_real("epochs", epochs, low=0, low_open=True)
        steps = None if steps is None else check_int("steps", steps, low=1)
        personal = self._adapt(state, new_data.train, key, epochs, steps)
        return personal, evaluate(self.model, personal, new_data.train, new_data.test)

    def _adapt(self, state: PersonalState, train: ClientData, key: tuple, epochs: float,
               steps: int | None) -> Params:
        raise NotImplementedError

    def _proximal(self, state: PersonalState, train: ClientData, solver: LocalSGD, key: tuple, epochs: float,
                  steps: int | None) -> Params:
        r"""SGD on :math:`f_t(v) + \frac{\mu}2\|v - w\|^2` from the shared :math:`w` (``solver.prox_mu`` = :math:`\mu`).

        ``epochs`` passes over each client's data (:func:`finetune`), or ``steps`` steps of one
        :func:`~fedlab.engine.local_sgd` run for every client.
        """
        if steps is None:
            return finetune(self.model, state.params, train, solver, key=key, epochs=epochs, backend=self.backend)
        start = broadcast(state.params, train.n_clients)
        personal, _ = local_sgd(self.model, {n: v.clone() for n, v in start.items()}, train,
                                LocalSGD(**{**solver.__dict__, "local_steps": steps}), key=key, anchor=start,
                                backend=self.backend)
        return personal


class PFedMe(_GlobalPersonal):
    r"""pFedMe (Dinh, Tran, Nguyen 2020): personalization with Moreau envelopes.

    Client :math:`t` keeps a local copy :math:`w_t` of the global model. In each of the R local rounds
    (R = ``solver.local_steps``) it approximately solves
    :math:`\theta_t = \arg\min_\theta f_t(\theta) + \frac\lambda2\|\theta - w_t\|^2` with ``inner_steps``
    SGD steps (step ``personal_lr``), then moves :math:`w_t \leftarrow w_t - \eta\lambda(w_t - \theta_t)`
    (:math:`\eta` = ``solver.lr``); the server sets :math:`w \leftarrow (1-\beta) w + \beta\sum_t p_t w_t`.
    Clients predict with :math:`\theta_t`. Deviation: each inner step draws a fresh minibatch (the paper
    reuses one minibatch for the K inner steps).

    Parameters
    ----------
    lam : float
        :math:`\lambda > 0` (paper: 15; thesis grid :math:`\{10^1..10^{-3}\}`); needs :math:`\eta\lambda \le 1`.
    inner_steps : int
    personal_lr : float, optional
        Default ``solver.lr``.
    beta : float
        Server step :math:`\beta \in (0, 2]`.
    """

    def __init__(self, model: Model, solver: LocalSGD, *, lam: float = 1.0, inner_steps: int = 5,
                 personal_lr: float | None = None, beta: float = 1.0, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.lam = check_real("lam", lam, low=0, low_open=True)
        if solver.lr * self.lam > 1:
            raise ValueError(f"pFedMe needs solver.lr * lam <= 1 (the w-update overshoots), got "
                             f"{solver.lr} * {self.lam}.")
        self.inner_steps = check_int("inner_steps", inner_steps, low=1)
        self.beta = check_real("beta", beta, low=0, high=2, low_open=True)
        personal_lr = solver.lr if personal_lr is None else check_real("personal_lr", personal_lr, low=0, low_open=True)
        self.inner = LocalSGD(lr=personal_lr, local_steps=self.inner_steps,
                              batch_size=solver.batch_size, weight_decay=solver.weight_decay, prox_mu=self.lam)

    def round(self, state: PersonalState, data: FederatedDataset, seed: int) -> tuple[PersonalState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return PersonalState(state.params, state.personal, state.round + 1), {"participants": []}
        w = {k: v.clone() for k, v in broadcast(state.params, len(chosen)).items()}
        theta = {k: v.clone() for k, v in w.items()}
        losses = []
        for r in range(self.solver.local_steps):
            theta, loss = local_sgd(self.model, theta, data.train, self.inner, key=(seed, state.round, Stream.LOCAL, r),
                                    rows=chosen, anchor=w, backend=self.backend)
            w = {k: w[k] - self.solver.lr * self.lam * (w[k] - theta[k]) for k in w}
            losses.append(float(loss.mean()))
        avg = self._aggregate(w, chosen, data)
        params = {k: (1 - self.beta) * state.params[k] + self.beta * avg[k] for k in avg}
        info = {"participants": chosen.tolist(), "local_loss": float(np.mean(losses))}
        return PersonalState(params, self._scatter(state.personal, chosen, theta), state.round + 1), info

    def _adapt(self, state: PersonalState, train: ClientData, key: tuple, epochs: float,
               steps: int | None) -> Params:
        r"""New clients: SGD on :math:`f_t(\theta) + \frac\lambda2\|\theta - w\|^2` from the global :math:`w`."""
        return self._proximal(state, train, self.inner, key, epochs, steps)


class APFL(_GlobalPersonal):
    r"""APFL (Deng, Kamani, Mahdavi 2020): adaptive personalized FL with a mixed model.

    Client :math:`t` keeps a local model :math:`v_t`; its personal model is
    :math:`\bar v_t = \alpha v_t + (1-\alpha) w`. At each local step, on the same minibatch,
    :math:`w \leftarrow w - \eta\nabla f_t(w)` and :math:`v_t \leftarrow v_t - \eta\alpha\nabla f_t(\bar v_t)`;
    the server averages the :math:`w`'s. Clients predict with :math:`\alpha v_t + (1-\alpha) w`.
    :math:`\alpha` is fixed (thesis grid :math:`\{0.1, 0.3, 0.5, 0.7, 0.9\}`).
    """

    def __init__(self, model: Model, solver: LocalSGD, *, alpha: float = 0.5, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.alpha = check_real("alpha", alpha, low=0, high=1)
        self.step = _one_step(solver)

    def round(self, state: PersonalState, data: FederatedDataset, seed: int) -> tuple[PersonalState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return PersonalState(state.params, state.personal, state.round + 1), {"participants": []}
        a = self.alpha
        w = {k: v.clone() for k, v in broadcast(state.params, len(chosen)).items()}
        v = {k: t[torch.as_tensor(chosen, device=t.device)].clone() for k, t in state.personal.items()}
        losses, c = [], len(chosen)
        rows = np.concatenate([chosen, chosen])  # w rows then v-bar rows: same client, same minibatch
        for e in range(self.solver.local_steps):
            vbar = {k: a * v[k] + (1 - a) * w[k] for k in v}
            both, loss = local_sgd(self.model, {k: torch.cat([w[k], vbar[k]]) for k in w}, data.train, self.step,
                                   key=(seed, state.round, Stream.LOCAL, e), rows=rows, backend=self.backend)
            v = {k: v[k] - a * (vbar[k] - both[k][c:]) for k in v}
            w = {k: both[k][:c] for k in w}
            losses.append(float(loss[:c].mean()))
        params = self._aggregate(w, chosen, data)
        info = {"participants": chosen.tolist(), "local_loss": float(np.mean(losses))}
        return PersonalState(params, self._scatter(state.personal, chosen, v), state.round + 1), info

    def personal_models(self, state: PersonalState) -> Params:
        k = next(iter(state.personal.values())).shape[0]
        glob = broadcast(state.params, k)
        return {name: self.alpha * state.personal[name] + (1 - self.alpha) * glob[name] for name in glob}

    def _adapt(self, state: PersonalState, train: ClientData, key: tuple, epochs: float,
               steps: int | None) -> Params:
        """New clients: SGD steps on :math:`v_t` from :math:`w`, with :math:`w` frozen.

        ``steps`` (default ``ceil(epochs × solver.local_steps)``) steps for every new client.
        """
        a, k = self.alpha, train.n_clients
        w = broadcast(state.params, k)
        v = {n: t.clone() for n, t in w.items()}
        for e in range(int(np.ceil(epochs * self.solver.local_steps)) if steps is None else steps):
            vbar = {n: a * v[n] + (1 - a) * w[n] for n in v}
            vbar_new, _ = local_sgd(self.model, vbar, train, self.step, key=(*key, e), backend=self.backend)
            v = {n: v[n] - a * (vbar[n] - vbar_new[n]) for n in v}
        return {n: a * v[n] + (1 - a) * w[n] for n in v}


class Ditto(_GlobalPersonal):
    r"""Ditto (Li et al. 2021): FedAvg for the global :math:`w` plus personal models.

    Each participating client runs FedAvg's local steps on :math:`w`, and ``personal_steps`` SGD steps on
    :math:`f_t(v_t) + \frac\lambda2\|v_t - w^k\|^2` anchored at the round's global model :math:`w^k`;
    clients predict with :math:`v_t` (thesis grid for λ: :math:`\{10^1, 10^0, 10^{-1}, 10^{-2}\}`).
    """

    def __init__(self, model: Model, solver: LocalSGD, *, lam: float = 0.1, personal_steps: int | None = None,
                 personal_lr: float | None = None, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.lam = check_real("lam", lam, low=0, low_open=True)
        steps = solver.local_steps if personal_steps is None else check_int("personal_steps", personal_steps, low=1)
        lr = solver.lr if personal_lr is None else check_real("personal_lr", personal_lr, low=0, low_open=True)
        self.personal_solver = LocalSGD(**{**solver.__dict__, "local_steps": steps, "prox_mu": self.lam, "lr": lr})

    def round(self, state: PersonalState, data: FederatedDataset, seed: int) -> tuple[PersonalState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return PersonalState(state.params, state.personal, state.round + 1), {"participants": []}
        start = broadcast(state.params, len(chosen))
        w, loss = local_sgd(self.model, start, data.train, self.solver, key=(seed, state.round, Stream.LOCAL),
                            rows=chosen, anchor=start, backend=self.backend)
        v = {k: t[torch.as_tensor(chosen, device=t.device)] for k, t in state.personal.items()}
        v, ploss = local_sgd(self.model, v, data.train, self.personal_solver, key=(seed, state.round, Stream.PERSONAL),
                             rows=chosen, anchor=start, backend=self.backend)
        info = {"participants": chosen.tolist(), "local_loss": float(loss.mean()), "personal_loss": float(ploss.mean())}
        return PersonalState(self._aggregate(w, chosen, data), self._scatter(state.personal, chosen, v),
                             state.round + 1), info

    def _adapt(self, state: PersonalState, train: ClientData, key: tuple, epochs: float,
               steps: int | None) -> Params:
        r"""New clients: SGD on :math:`f_t(v) + \frac\lambda2\|v - w\|^2` from the global :math:`w`."""
        return self._proximal(state, train, self.personal_solver, key, epochs, steps)


class _Frozen(Model):
    """``model`` with some parameters fixed per row; only the remaining ones are trained (batched path only)."""

    def __init__(self, model: Model, frozen: Params) -> None:
        super().__init__(model.loss_name)
        self._base, self._fixed = model, frozen

    def forward_stacked(self, params: Params, x: torch.Tensor) -> torch.Tensor:
        return self._base.forward_stacked({**params, **self._fixed}, x)

    def forward(self, params: Params, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - never called
        raise NotImplementedError("_Frozen models run on the batched backend only.")

    def select_rows(self, rows: torch.Tensor) -> "_Frozen":
        return _Frozen(self._base, {k: v[rows] for k, v in self._fixed.items()})

    def signature(self) -> tuple:
        return ("_Frozen", self._base.signature(), tuple(sorted(self._fixed)))

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        return {k: v for k, v in self._base.param_shapes().items() if k not in self._fixed}

    def n_inputs(self) -> int | None:
        return self._base.n_inputs()

    def n_outputs(self) -> int | None:
        return self._base.n_outputs()


def _check_head_keys(head_keys, model: Model) -> tuple[str, ...]:
    """Names of the head's parameters: a non-empty tuple or list of parameters of ``model``."""
    if isinstance(head_keys, str) or not isinstance(head_keys, (tuple, list)) or not head_keys:
        raise TypeError(f"head_keys must be a non-empty tuple of parameter names, got {head_keys!r}.")
    missing = [h for h in head_keys if h not in model.param_shapes()]
    if missing:
        raise ValueError(f"head_keys {missing} are not parameters of the model (it has {list(model.param_shapes())}).")
    return tuple(head_keys)


class FedRep(_GlobalPersonal):
    r"""FedRep (Collins et al. 2021): a shared representation (body) and a local head per client.

    Each participating client first trains its head for ``head_steps`` SGD steps with the body frozen,
    then the body for ``solver.local_steps`` steps with its new head frozen; the server averages the
    bodies. Clients predict with (shared body, own head). The head is ``head_keys`` (default: the last
    two parameters of ``model.init``, i.e. the last linear layer of :class:`~fedlab.models.MLP`). For a
    model that is all head (a linear model) FedRep is Local training.
    """

    def __init__(self, model: Model, solver: LocalSGD, *, head_keys: tuple | None = None, head_steps: int | None = None,
                 head_lr: float | None = None, participation: Participation = 1.0, weights="size") -> None:
        super().__init__(model, solver, participation=participation, weights=weights, backend="batched")
        self.head_keys = None if head_keys is None else _check_head_keys(head_keys, model)
        steps = solver.local_steps if head_steps is None else check_int("head_steps", head_steps, low=1)
        lr = solver.lr if head_lr is None else check_real("head_lr", head_lr, low=0, low_open=True)
        self.head_solver = LocalSGD(**{**solver.__dict__, "local_steps": steps, "lr": lr})

    def _keys(self, params: Params) -> tuple[list, list]:
        names = list(params)
        head = list(self.head_keys) if self.head_keys is not None else names[-2:]
        return [n for n in names if n not in head], head

    def init(self, data: FederatedDataset, seed: int) -> PersonalState:
        check_data(self.model, data)
        client_weights(self.weights, data.train)
        params = initial_params(self.model, seed, data.device)
        body, head = self._keys(params)
        heads = {k: v.clone() for k, v in broadcast({h: params[h] for h in head}, data.n_clients).items()}
        return PersonalState({b: params[b] for b in body}, heads)

    def round(self, state: PersonalState, data: FederatedDataset, seed: int) -> tuple[PersonalState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return PersonalState(state.params, state.personal, state.round + 1), {"participants": []}
        c = len(chosen)
        body = {k: v.clone() for k, v in broadcast(state.params, c).items()}
        heads = {k: t[torch.as_tensor(chosen, device=t.device)] for k, t in state.personal.items()}
        heads, hloss = local_sgd(_Frozen(self.model, body), heads, data.train, self.head_solver,
                                 key=(seed, state.round, Stream.PERSONAL), rows=chosen, backend="batched")
        loss = hloss
        if body:
            body, loss = local_sgd(_Frozen(self.model, heads), body, data.train, self.solver,
                                   key=(seed, state.round, Stream.LOCAL), rows=chosen, backend="batched")
            params = self._aggregate(body, chosen, data)
        else:
            params = state.params
        info = {"participants": chosen.tolist(), "local_loss": float(loss.mean()), "head_loss": float(hloss.mean())}
        return PersonalState(params, self._scatter(state.personal, chosen, heads), state.round + 1), info

    def personal_models(self, state: PersonalState) -> Params:
        k = next(iter(state.personal.values())).shape[0]
        return {**broadcast(state.params, k), **state.personal} if state.params else dict(state.personal)

    def _adapt(self, state: PersonalState, train: ClientData, key: tuple, epochs: float,
               steps: int | None) -> Params:
        """New clients: train a head (from the mean of the learned heads) with the body frozen.

        ``steps`` (default ``ceil(epochs × head_steps)``) steps for every new client.
        """
        k = train.n_clients
        heads = broadcast({n: v.mean(0) for n, v in state.personal.items()}, k)
        body = broadcast(state.params, k)
        n_steps = int(np.ceil(epochs * self.head_solver.local_steps)) if steps is None else steps
        solver = LocalSGD(**{**self.head_solver.__dict__, "local_steps": n_steps})
        heads, _ = local_sgd(_Frozen(self.model, body), heads, train, solver, key=key, backend="batched")
        return {**body, **heads}

    def evaluate_global(self, state: PersonalState, data: FederatedDataset) -> dict[str, np.ndarray]:
        raise NotImplementedError("FedRep has no global model (each client keeps its own head).")
