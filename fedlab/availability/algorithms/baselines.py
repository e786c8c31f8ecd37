r"""FedAvg-style training under heterogeneous, correlated client availability, and its baselines (thesis §2.2.6).

At round :math:`t` the clients :math:`\mathcal A_t` are available (an availability trace or any
``participation`` callable). Each available client with :math:`q_k>0` runs E local SGD steps from
:math:`\mathbf w_{t,0}` and the server applies eqs. (2.15)-(2.16) without projection:

.. math::
    \mathbf w_{t+1,0}=\mathbf w_{t,0}+\bar\eta\sum_{k\in\mathcal A_t}q_k\,(\mathbf w^k_{t,E}-\mathbf w_{t,0}).

With ``server_momentum`` :math:`m>0` or ``server_weight_decay`` :math:`\lambda_s>0` the server is the authors' code's
SGD optimiser on the pseudo-gradient :math:`\mathbf g_t=-\sum_kq_k\Delta^k_t+\lambda_s\mathbf w_{t,0}` (spec §4.2):
:math:`\mathbf b_t=m\mathbf b_{t-1}+\mathbf g_t`, :math:`\mathbf w_{t+1,0}=\mathbf w_{t,0}-\bar\eta\mathbf b_t` (a round in
which nobody trains leaves both unchanged).

The weights :math:`\mathbf q` are **not** renormalised (except by AdaFed), so training minimises the
biased objective with :math:`p_k\propto\pi_kq_k` (2.17). Baselines (§2.2.6.1, spec §3.5):

- ``Unbiased``: :math:`q_k=\alpha_k/\hat\pi_k` for every available client.
- ``MoreAvailable``: the same, but only for the "more available" clients (:math:`\hat\pi_k>1/2`).
- ``LessCorrelated``: the same, but only for the weakly correlated clients (:math:`|\hat\lambda_k|<1/2`);
  the Guideline-B-only counterpart of ``MoreAvailable``.
- ``AdaFed`` [Tan+22a]: :math:`q_k=(\alpha_k/\hat\pi_k)/\sum_{j\in\mathcal A_t}\alpha_j/\hat\pi_j`.
- ``F3AST`` [RVd23], as simplified in the authors' code: among the available clients, the K with the
  largest :math:`\alpha_k^2/\tilde\pi_k^2`, weights :math:`\alpha_k/\tilde\pi_k`, where
  :math:`\tilde\pi_k=(1-\beta_F)\hat\pi_k+\beta_F\mathbb 1\{k\in\mathcal A_t\}`.

:math:`\hat\pi` is the true :math:`\pi` (``estimator="oracle"``, the thesis default) or the Bayesian estimate
from the availability observed so far (``"bayes"``, optionally warm-started on ``prior_trace``).
All methods share the run's random keys: with the same seed they see the same availability and the same
minibatches (common random numbers).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, replace

import numpy as np
import torch

from fedlab._rng import Stream
from fedlab._validation import check_array, check_choice, check_int, check_real
from fedlab.availability.data import AvailabilityEstimator, check_priors, trace_participation
from fedlab.engine import FederatedDataset, LocalSGD, OptimizerState, broadcast
from fedlab.models import Model, Params, check_model
from fedlab.algorithms.common import (check_data, check_solver, check_weights, client_weights, initial_params,
                                       population_optimizer, sample_participants, train_rows)
from fedlab.availability.algorithms._metrics import global_metrics

__all__ = ["AvailabilityState", "AvailabilityAlgorithm", "Unbiased", "MoreAvailable", "LessCorrelated", "AdaFed",
           "F3AST"]


@dataclass(frozen=True, eq=False)
class AvailabilityState:
    """Global model, rounds done, availability estimator, (CA-Fed) loss estimates, the server's momentum buffer and,
    when the solver keeps it, the clients' optimizer state."""

    params: Params
    round: int = 0
    estimator: AvailabilityEstimator | None = None
    f_hat: np.ndarray | None = None
    f_star: np.ndarray | None = None
    server_buffer: Params | None = None
    optimizer: OptimizerState | None = None


class AvailabilityAlgorithm(abc.ABC):
    r"""Abstract base class: one round of eq. (2.16) with weights from :meth:`weights`, which each method defines.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        Local solver (E = ``solver.local_steps``, :math:`\eta` = ``solver.lr``).
    participation : bool array (T, N) or callable
        Availability trace, or ``f(round, rng) -> mask`` (see ``fedlab.availability.data.trace_participation``).
    pi : array (N,), optional
        True availabilities (needed by ``estimator="oracle"``).
    lam : array (N,), optional
        True second eigenvalues (CA-Fed's oracle ordering).
    alpha : "size", "uniform" or array (N,)
        Target importance :math:`\alpha` (2.14).
    server_lr : float
        :math:`\bar\eta>0`.
    server_momentum : float in [0, 1)
        Heavy-ball coefficient of the server optimiser (the authors' code: 0.9).
    server_weight_decay : float >= 0
        Weight decay of the server optimiser (the authors' code: 1e-2).
    estimator : {"oracle", "bayes"}
    prior_trace : bool array (t', N), optional
        Rounds observed before training to warm-start the Bayesian estimator (Fig. 2.14).
    prior : (n, m)
        Beta prior of :math:`\hat\pi`.
    backend : {"batched", "loop", "auto"}
        Local-SGD path; ``batched`` (default) is deterministic to the bit.
    """

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD, *, participation, pi=None, lam=None, alpha="size",
                 server_lr: float = 1.0, server_momentum: float = 0.0, server_weight_decay: float = 0.0,
                 estimator: str = "oracle", prior_trace=None, prior=(1.0, 1.0), backend: str = "batched") -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)
        if isinstance(participation, np.ndarray):
            if participation.dtype != bool or participation.ndim != 2 or 0 in participation.shape:
                raise ValueError(f"participation must be a bool trace (T, N), got {participation.dtype} "
                                 f"{participation.shape}.")
            participation = trace_participation(participation)
        if not callable(participation):
            raise TypeError("participation must be a boolean trace (T, N) or a callable (round, rng) -> mask, "
                            f"got {type(participation).__name__}.")
        self.participation = participation
        self.estimator = check_choice("estimator", estimator, ("oracle", "bayes"))
        if self.estimator == "oracle" and pi is None:
            raise ValueError("estimator='oracle' needs the true availabilities pi.")
        self.pi = None if pi is None else check_array("pi", pi, ndim=1)
        if self.pi is not None and (self.pi.size == 0 or np.any(self.pi <= 0) or np.any(self.pi > 1)):
            raise ValueError(f"pi must lie in (0, 1], one availability per client, got {self.pi!r:.80}.")
        self.lam = None if lam is None else check_array("lam", lam, shape=(None if pi is None else len(self.pi),))
        self.alpha = check_weights(alpha, "alpha")
        self.server_lr = check_real("server_lr", server_lr, low=0, low_open=True)
        self.server_momentum = check_real("server_momentum", server_momentum, low=0, high=1, high_open=True)
        self.server_weight_decay = check_real("server_weight_decay", server_weight_decay, low=0)
        self.prior_trace = None if prior_trace is None else np.asarray(prior_trace)
        if self.prior_trace is not None and (self.prior_trace.dtype != bool or self.prior_trace.ndim != 2):
            raise ValueError(f"prior_trace must be a bool trace (t', N), got {self.prior_trace.dtype} "
                             f"{self.prior_trace.shape}.")
        self.prior = check_priors(prior)[0]
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    # -- pieces the subclasses use --------------------------------------------------------------
    def _check_sizes(self, n: int) -> None:
        for name in ("pi", "lam"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise ValueError(f"{name} has {len(value)} entries but the data has {n} clients.")
        if self.prior_trace is not None and (self.prior_trace.ndim != 2 or self.prior_trace.shape[1] != n):
            raise ValueError(f"prior_trace must have shape (t', {n}), got {self.prior_trace.shape}.")

    def _alpha(self, data: FederatedDataset) -> np.ndarray:
        return client_weights(self.alpha, data.train, "alpha")

    def availability(self, estimator: AvailabilityEstimator) -> tuple[np.ndarray, np.ndarray | None]:
        r"""``(pi_hat, lam_hat)``: the truth in oracle mode, else the Bayesian estimates."""
        if self.estimator == "oracle":
            return self.pi, self.lam
        return estimator.pi_hat, estimator.lambda_hat

    # -- the algorithm protocol ---------------------------------------------------------------
    def init(self, data: FederatedDataset, seed: int) -> AvailabilityState:
        check_data(self.model, data)
        n = data.n_clients
        self._check_sizes(n)
        self._alpha(data)  # validate early
        est = AvailabilityEstimator.empty(n, prior=self.prior)
        if self.prior_trace is not None:
            est = est.observe_trace(self.prior_trace)
        params = initial_params(self.model, seed)
        return AvailabilityState(params, 0, est, optimizer=population_optimizer(self.solver, params, n))

    @abc.abstractmethod
    def weights(self, state: AvailabilityState, data: FederatedDataset, mask: np.ndarray, pi_hat: np.ndarray,
                lam_hat: np.ndarray | None) -> tuple[np.ndarray, dict, dict]:
        """``(q, info, state_updates)``: aggregation weights (N,), zero for clients that do not train."""

    def round(self, state: AvailabilityState, data: FederatedDataset, seed: int) -> tuple[AvailabilityState, dict]:
        n = data.n_clients
        active = self._available(n, seed, state.round)
        mask = np.zeros(n, dtype=bool)
        mask[active] = True
        est = state.estimator.observe(mask)
        pi_hat, lam_hat = self.availability(est)
        q, info, updates = self.weights(replace(state, estimator=est), data, mask, pi_hat, lam_hat)
        q = np.where(mask, q, 0.0)
        trained = np.flatnonzero(q > 0)
        params, buffer, local_loss = state.params, state.server_buffer, float("nan")
        optimizer = state.optimizer
        if len(trained):
            start = broadcast(state.params, len(trained))
            new, loss, optimizer = train_rows(self.model, self.solver, start, data.train,
                                              key=(seed, state.round, Stream.LOCAL), round_index=state.round,
                                              optimizer=state.optimizer, state_rows=trained, rows=trained,
                                              backend=self.backend)
            if self.server_momentum or self.server_weight_decay:
                params, buffer = self._server_step(state, q[trained], {k: new[k] - start[k] for k in new})
            else:
                w = torch.as_tensor(self.server_lr * q[trained])
                params = {k: v + torch.tensordot(w.to(v.dtype), new[k] - start[k], dims=1)
                          for k, v in state.params.items()}
            local_loss = float(loss.mean())
        info = {"active": active.tolist(), "trained": trained.tolist(), "weights": q.tolist(),
                "local_loss": local_loss, **info}
        return replace(state, params=params, round=state.round + 1, estimator=est, server_buffer=buffer,
                       optimizer=optimizer, **updates), info

    def _available(self, n: int, seed: int, round_: int) -> np.ndarray:
        """The clients available at ``round_``, sorted: read off the trace when the participation is one (it draws
        nothing), else from :func:`~fedlab.algorithms.common.sample_participants`."""
        if getattr(self.participation, "trace", None) is None:
            return sample_participants(self.participation, n, seed, round_)
        mask = self.participation(round_)
        if mask.shape != (n,):
            raise ValueError(f"participation mask must have shape ({n},), got {mask.shape}.")
        return np.flatnonzero(mask)

    def _server_step(self, state: AvailabilityState, q: np.ndarray, deltas: Params) -> tuple[Params, Params]:
        """Server SGD with momentum and weight decay on the pseudo-gradient (module docstring)."""
        w = torch.as_tensor(q)
        grad = {k: self.server_weight_decay * v - torch.tensordot(w.to(v.dtype), deltas[k], dims=1)
                for k, v in state.params.items()}
        if state.server_buffer is not None:
            grad = {k: self.server_momentum * state.server_buffer[k] + g for k, g in grad.items()}
        return {k: v - self.server_lr * grad[k] for k, v in state.params.items()}, grad

    def evaluate(self, state: AvailabilityState, data: FederatedDataset) -> dict[str, np.ndarray]:
        """The global model's per-client train and test metrics, on the real samples only
        (:func:`~fedlab.availability.algorithms._metrics.global_metrics`)."""
        return global_metrics(self.model, state.params, data.train, data.test)


class Unbiased(AvailabilityAlgorithm):
    r"""Unbiased aggregation :math:`q_k=\alpha_k/\hat\pi_k` for every available client (:math:`\mathbf p=\alpha`)."""

    def weights(self, state, data, mask, pi_hat, lam_hat):
        return np.where(mask, self._alpha(data) / pi_hat, 0.0), {}, {}


class MoreAvailable(AvailabilityAlgorithm):
    r"""Only the "more available" clients (:math:`\hat\pi_k>` ``threshold``), with :math:`q_k=\alpha_k/\hat\pi_k`
    (unnormalised, like CA-Fed with a fixed exclusion set)."""

    def __init__(self, model: Model, solver: LocalSGD, *, threshold: float = 0.5, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.threshold = check_real("threshold", threshold, low=0, high=1)

    def weights(self, state, data, mask, pi_hat, lam_hat):
        keep = mask & (pi_hat > self.threshold)
        return np.where(keep, self._alpha(data) / pi_hat, 0.0), {}, {}


class LessCorrelated(AvailabilityAlgorithm):
    r"""Only the weakly correlated clients (:math:`|\hat\lambda_k|<` ``threshold``), with :math:`q_k=\alpha_k/\hat\pi_k`
    (unnormalised): Guideline B applied alone, as ``MoreAvailable`` applies Guideline A alone."""

    def __init__(self, model: Model, solver: LocalSGD, *, threshold: float = 0.5, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.threshold = check_real("threshold", threshold, low=0, high=1)
        if self.estimator == "oracle" and self.lam is None:
            raise ValueError("LessCorrelated with estimator='oracle' needs the true second eigenvalues lam.")

    def weights(self, state, data, mask, pi_hat, lam_hat):
        keep = mask & (np.abs(lam_hat) < self.threshold)
        return np.where(keep, self._alpha(data) / pi_hat, 0.0), {}, {}


class AdaFed(AvailabilityAlgorithm):
    r"""AdaFed with full participation [Tan+22a]: :math:`q_k=(\alpha_k/\hat\pi_k)/\sum_{j\in\mathcal A_t}\alpha_j/\hat\pi_j`."""

    def weights(self, state, data, mask, pi_hat, lam_hat):
        r = np.where(mask, self._alpha(data) / pi_hat, 0.0)
        total = r.sum()
        return (r / total if total > 0 else r), {}, {}


class F3AST(AvailabilityAlgorithm):
    r"""F3AST [RVd23] as in the authors' code: the ``k`` available clients with the largest
    :math:`\alpha_k^2/\tilde\pi_k^2` (stable order on ties), weights :math:`\alpha_k/\tilde\pi_k`, with
    :math:`\tilde\pi_k=(1-\beta_F)\hat\pi_k+\beta_F\mathbb 1\{k\in\mathcal A_t\}`.

    Parameters
    ----------
    k : int or None
        Clients per round; default ``max(1, round(N/4))``.
    smoothing : float in [0, 1)
        :math:`\beta_F` (the code's 1e-3).
    """

    def __init__(self, model: Model, solver: LocalSGD, *, k: int | None = None, smoothing: float = 1e-3,
                 **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.k = None if k is None else check_int("k", k, low=1)
        self.smoothing = check_real("smoothing", smoothing, low=0, high=1, high_open=True)

    def weights(self, state, data, mask, pi_hat, lam_hat):
        alpha = self._alpha(data)
        k = self.k if self.k is not None else max(1, round(data.n_clients / 4))
        pi_f = (1 - self.smoothing) * pi_hat + self.smoothing * mask
        active = np.flatnonzero(mask)
        score = alpha[active] ** 2 / pi_f[active] ** 2
        chosen = active[np.argsort(-score, kind="stable")[:k]]
        q = np.zeros(data.n_clients)
        q[chosen] = alpha[chosen] / pi_f[chosen]
        return q, {}, {}
