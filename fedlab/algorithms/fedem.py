r"""FedEM and D-FedEM: federated expectation-maximization for a mixture of distributions (thesis §3.5).

Under the mixture assumption (Assumption 8, eq. (3.2)) client :math:`t` draws its samples from
:math:`M` shared distributions with private weights :math:`\pi_t \in \Delta^M`. EM on the negative
log-likelihood (3.6) alternates (Proposition 3.5.2)

.. math::
    q_t(z^{(i)}_t = m) &\propto \pi_{tm} \exp\big(-\ell(h_{\theta_m}(x^{(i)}_t), y^{(i)}_t)\big)  &\text{(3.12)}\\
    \pi_{tm} &= \tfrac{1}{n_t}\textstyle\sum_i q_t(z^{(i)}_t = m)                                   &\text{(3.13)}\\
    \theta_m &\in \arg\min_\theta \textstyle\sum_t \sum_i q_t(z^{(i)}_t = m)\,\ell(h_\theta(x^{(i)}_t), y^{(i)}_t)  &\text{(3.14)}

FedEM (Algorithm 7) runs (3.12)–(3.13) on the clients and replaces (3.14) by E local SGD steps on
the :math:`q`-weighted loss followed by server averaging; D-FedEM (Algorithm 8) replaces the server
average by gossip with a doubly stochastic mixing matrix. Clients predict with the
:math:`\pi_t`-mixture of the components' predictive distributions (eq. (3.5)). A client that joins
after training keeps the components fixed and fits only :math:`\pi` on its local data (§3.5.3.2).

On the engine, FedEM trains the :math:`M` components of every participating client as rows of one
stacked tensor (``rows`` repeats each client :math:`M` times, ``sample_weight`` holds the
responsibilities), so one batched ``local_sgd`` call runs all the local work of a round.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import Stream, numpy_rng, torch_generator
from fedlab._validation import (all_finite, check_array, check_bool, check_choice, check_int, check_real, check_simplex,
                                check_type)
from fedlab.engine import (ClientData, FederatedDataset, LocalSGD, OptimizerState, check_mixing_matrix,
                           check_model_data, gossip, metrics_from_outputs, metrics_from_proba, model_outputs, resolve_device,
                           weighted_average)
from fedlab.models import Model, Params, check_model, check_param_dict, check_params
from fedlab.algorithms.common import (BACKENDS, Participation, check_data, check_mixing, check_participation,
                                       check_solver, check_weights, client_weights, population_optimizer,
                                       sample_participants, train_rows)

__all__ = [
    "e_step",
    "update_pi",
    "mixture_proba",
    "mixture_log_likelihood",
    "component_losses",
    "mixture_metrics",
    "fit_mixture_weights",
    "init_components",
    "consensus_distance",
    "MixtureState",
    "DecentralizedMixtureState",
    "FedEM",
    "DFedEM",
    "PI_INITS",
]

PI_INITS = ("uniform", "random")
MixingSpec = Union[np.ndarray, Callable[[int, np.random.Generator], np.ndarray]]
_LOG_FLOOR = 1e-12
_CHUNK = 32   # clients a chunk in component_losses: cut to similar sizes, their padding is small
_SAMPLES = 4096   # packed samples a forward pass in component_losses (bounds a large model's activations)


# ----------------------------------------------------------------------------------------------
# E-step, M-step for the weights, mixture prediction


def _as_float64(name: str, value) -> Tensor:
    if isinstance(value, Tensor):
        if not all_finite(value):
            raise ValueError(f"{name} must contain only finite values.")
        return value.detach().to(torch.float64)
    return torch.as_tensor(check_array(name, value), dtype=torch.float64)


def _like(result: Tensor, reference):
    return result if isinstance(reference, Tensor) else result.cpu().numpy()


def _check_mask(mask, shape: tuple) -> Tensor:
    arr = mask if isinstance(mask, Tensor) else np.asarray(mask)
    integer = (arr.dtype == torch.bool or not arr.is_floating_point()) if isinstance(arr, Tensor) else \
        arr.dtype.kind in "biu"
    if not integer:
        raise TypeError(f"mask must be a boolean array of valid samples, got dtype {arr.dtype}.")
    mask_t = arr.to(torch.bool) if isinstance(arr, Tensor) else torch.as_tensor(arr, dtype=torch.bool)
    if tuple(mask_t.shape) != tuple(shape):
        raise ValueError(f"mask must have shape {tuple(shape)}, got {tuple(mask_t.shape)}.")
    return mask_t


def e_step(log_pi, losses):
    r"""Responsibilities :math:`q(z^{(i)} = m) = \mathrm{softmax}_m(\log\pi_m - \ell_{m,i})` (thesis eq. (3.12)).

    Computed in log space, so large losses never underflow to 0/0.

    Parameters
    ----------
    log_pi : array-like or Tensor, shape (..., M)
        Log mixture weights (use :math:`\log\max(\pi, 10^{-12})`).
    losses : array-like or Tensor, shape (..., M, n)
        Per-sample losses :math:`\ell(h_{\theta_m}(x_i), y_i)` (negative log-likelihoods up to a constant).

    Returns
    -------
    q : same type as ``losses``, shape (..., M, n), float64
        Non-negative, summing to 1 over the component axis.
    """
    lp, ls = _as_float64("log_pi", log_pi), _as_float64("losses", losses)
    if ls.dim() < 2 or lp.shape != ls.shape[:-1]:
        raise ValueError(f"log_pi must have shape (..., M) and losses (..., M, n); got {tuple(lp.shape)} and "
                         f"{tuple(ls.shape)}.")
    return _like(torch.softmax(lp.unsqueeze(-1) - ls, dim=-2), losses)


def update_pi(q, mask=None):
    r"""Mixture weights :math:`\pi_m = \frac{1}{n}\sum_i q(z^{(i)} = m)` over the valid samples (thesis eq. (3.13)).

    Parameters
    ----------
    q : array-like or Tensor, shape (..., M, n)
        Responsibilities.
    mask : array-like or Tensor of bool, shape (..., n), optional
        Valid samples (padding excluded); default all.

    Returns
    -------
    pi : same type as ``q``, shape (..., M), rows in the simplex.

    Raises
    ------
    ValueError
        When a client has no valid sample.
    """
    qt = _as_float64("q", q)
    if qt.dim() < 2:
        raise ValueError(f"q must have shape (..., M, n), got {tuple(qt.shape)}.")
    _check_probabilities("q", qt)
    m = torch.ones(qt.shape[:-2] + qt.shape[-1:], dtype=torch.bool, device=qt.device) if mask is None else \
        _check_mask(mask, qt.shape[:-2] + qt.shape[-1:])
    count = m.sum(-1)
    if bool((count == 0).any()):
        bad = torch.nonzero(count.reshape(-1) == 0).flatten().tolist()
        raise ValueError(f"update_pi: clients {bad[:10]} have no data; the weights (3.13) are undefined.")
    w = m.unsqueeze(-2).to(torch.float64)
    return _like((qt * w).sum(-1) / count.unsqueeze(-1), q)


def mixture_proba(pi, probs):
    r"""Personalized prediction :math:`p(y|x) = \sum_m \pi_m\, p_{\theta_m}(y|x)` (thesis eq. (3.5), (E.274)).

    Mixes predicted probabilities, not logits.

    Parameters
    ----------
    pi : array-like or Tensor, shape (..., M)
    probs : array-like or Tensor, shape (..., M, n, C)
        Each component's predicted class probabilities.

    Returns
    -------
    same type as ``probs``, shape (..., n, C)
    """
    pt, pr = _as_float64("pi", pi), _as_float64("probs", probs)
    if pr.dim() < 3 or pt.shape != pr.shape[:-2]:
        raise ValueError(f"pi must have shape (..., M) and probs (..., M, n, C); got {tuple(pt.shape)} and "
                         f"{tuple(pr.shape)}.")
    check_simplex("pi", pt.cpu().numpy())
    _check_probabilities("probs", pr)
    return _like((pt.unsqueeze(-1).unsqueeze(-1) * pr).sum(-3), probs)


def _check_probabilities(name: str, values: Tensor) -> None:
    if values.numel() and (float(values.min()) < 0 or float(values.max()) > 1 + 1e-9):
        raise ValueError(f"{name} must hold probabilities in [0, 1], got values in [{float(values.min()):.4g}, "
                         f"{float(values.max()):.4g}].")


def mixture_log_likelihood(log_pi: Tensor, losses: Tensor, mask: Tensor) -> Tensor:
    r"""Per-client mean log-likelihood :math:`\frac{1}{n_t}\sum_i \log\sum_m \pi_{tm} e^{-\ell_{m,i}}` (minus eq. (3.6) up to a constant).

    Parameters
    ----------
    log_pi : Tensor (K, M); losses : Tensor (K, M, n); mask : Tensor (K, n) bool

    Returns
    -------
    Tensor (K,) float64
    """
    lp, ls = _as_float64("log_pi", log_pi), _as_float64("losses", losses)
    if lp.dim() != 2 or ls.dim() != 3 or tuple(ls.shape[:2]) != tuple(lp.shape):
        raise ValueError(f"log_pi must have shape (K, M) and losses (K, M, n); got {tuple(lp.shape)} and "
                         f"{tuple(ls.shape)}.")
    mask = _check_mask(mask, (ls.shape[0], ls.shape[2]))
    ll = torch.logsumexp(lp.unsqueeze(-1) - ls, dim=-2)
    ll = torch.where(mask, ll, torch.zeros((), dtype=ll.dtype, device=ll.device))
    return ll.sum(-1) / mask.sum(-1).clamp_min(1)


def _log(pi: Tensor) -> Tensor:
    return torch.log(pi.clamp_min(_LOG_FLOOR))


# ----------------------------------------------------------------------------------------------
# Components on the engine


def init_components(model: Model, n_components: int, seed: int, device: str | torch.device = "cpu") -> Params:
    """``M`` independently drawn components stacked ``(M, ...)``.

    Drawn in sequence from the generator of ``(seed, INIT)``, so component 0 is the initial model
    FedAvg uses with the same seed (FedEM with M = 1 is FedAvg). Distinct components break the
    symmetry of EM (identical components keep identical responsibilities forever). They are placed on ``device``.
    """
    check_model(model)
    n_components = check_int("n_components", n_components, low=1)
    gen = torch_generator(seed, Stream.INIT)
    draws = [model.init(gen) for _ in range(n_components)]
    device = resolve_device(device)
    return {k: torch.stack([d[k] for d in draws]).to(device) for k in draws[0]}


def _split_components(params: Params, n_clients: int, n_components: int) -> list[Params]:
    """Per-client stacked params ``(K*M, ...)`` (client-major rows) -> M dicts of ``(K, ...)``."""
    return [{k: v.reshape(n_clients, n_components, *v.shape[1:])[:, m] for k, v in params.items()}
            for m in range(n_components)]


def _shared_components(params: Params, n_clients: int) -> list[Params]:
    """Shared components ``(M, ...)`` -> M dicts of ``(K, ...)`` (expanded views)."""
    n_components = next(iter(params.values())).shape[0]
    return [{k: v[m].unsqueeze(0).expand(n_clients, *v.shape[1:]) for k, v in params.items()}
            for m in range(n_components)]


@torch.no_grad()
def _component_outputs(model: Model, components: list[Params], data: ClientData) -> Tensor:
    """Outputs of every component on every client's samples, shape ``(K, M, n_max, out)``."""
    return torch.stack([model_outputs(model, comp, data) for comp in components], dim=1)


def _check_components(model: Model, components, data: ClientData) -> list[Params]:
    """Components as M dicts of stacked ``(K, ...)`` parameters: shared ones ``(M, ...)`` are expanded."""
    check_model_data(model, data)
    if isinstance(components, dict):
        check_params(model, components, name="components")
        return _shared_components(components, data.n_clients)
    check_type("components", components, list)
    if not components:
        raise ValueError("components must hold at least one component.")
    for m, comp in enumerate(components):
        check_params(model, comp, rows=data.n_clients, name=f"components[{m}]")
    return components


@torch.no_grad()
def component_losses(model: Model, components: list[Params] | Params, data: ClientData, clients=None) -> Tensor:
    r"""Per-sample losses :math:`\ell(h_{\theta_m}(x_i), y_i)` of every component on every client, ``(K, M, n_max)`` float64.

    The work follows the valid samples, not the padding (the E-step (3.12) runs on every training sample every
    round): shared components run on the clients' samples packed end to end; per-client components take the clients
    in order of size, a chunk at a time, each chunk cut to its largest client.

    Parameters
    ----------
    model : Model
    components : dict of Tensor (M, ...) (shared components) or list of M dicts of Tensor (K, ...)
        (per-client copies, as in D-FedEM).
    data : ClientData
    clients : sequence of int, optional
        Only these clients (rows of the result, in this order); default all.

    Returns
    -------
    Tensor (len(clients), M, n_max); padded entries are meaningless (mask them with ``data.mask``).
    """
    comps = _check_components(model, components, data)
    rows = torch.arange(data.n_clients, device=data.device) if clients is None else data.check_clients(clients)
    if isinstance(components, dict):
        return _shared_losses(model, components, data, rows)
    n = data.n[rows]
    losses = torch.zeros((len(rows), len(comps), data.x.shape[1]), dtype=torch.float64, device=data.device)
    for part in torch.argsort(n, stable=True).split(_CHUNK):
        length, chunk = int(n[part].max()), rows[part]
        x, y = data.x[:, :length].index_select(0, chunk), data.y[:, :length].index_select(0, chunk)
        for m, comp in enumerate(comps):
            outputs = model.forward_stacked({k: v[chunk] for k, v in comp.items()}, x)
            losses[part, m, :length] = model.per_sample_loss(outputs, y).to(torch.float64)
    return losses


def _shared_losses(model: Model, components: Params, data: ClientData, rows: Tensor) -> Tensor:
    """:func:`component_losses` of shared components ``(M, ...)``: each one's outputs on the valid samples of ``rows``
    end to end, :data:`_SAMPLES` at a time, written to their places in the padded result."""
    x, y = data.valid_samples(rows)
    n_comps, n_max = len(next(iter(components.values()))), data.x.shape[1]
    place = torch.nonzero(data.mask.index_select(0, rows).flatten()).flatten()   # row-major: the samples' order
    place = place // n_max * (n_comps * n_max) + place % n_max   # in the (rows, M, n_max) result, component 0
    losses = torch.zeros(len(rows) * n_comps * n_max, dtype=torch.float64, device=data.device)
    for m in range(n_comps):
        comp = {k: v[m] for k, v in components.items()}
        loss = torch.cat([model.per_sample_loss(model.forward(comp, xs), ys)
                          for xs, ys in zip(x.split(_SAMPLES), y.split(_SAMPLES))])
        losses.index_copy_(0, place + m * n_max, loss.to(torch.float64))
    return losses.view(len(rows), n_comps, n_max)


@torch.no_grad()
def mixture_metrics(model: Model, components: list[Params] | Params, pi, data: ClientData,
                    prefix: str = "") -> dict[str, np.ndarray]:
    r"""Per-client loss and accuracy of the personalized mixture predictor (eq. (3.5)).

    Classification: mixes the components' softmax probabilities with weights :math:`\pi_t`.
    Regression (``mse``): predicts the mixture mean :math:`\sum_m \pi_{tm} h_{\theta_m}(x)`.

    Parameters
    ----------
    model : Model
    components : dict (M, ...) or list of M dicts (K, ...)
    pi : array-like (K, M)
    data : ClientData
    prefix : str
        Prepended to the metric names (``"train_"``, ``"test_"``).
    """
    comps = _check_components(model, components, data)
    pi_t = _as_float64("pi", pi)
    if tuple(pi_t.shape) != (data.n_clients, len(comps)):
        raise ValueError(f"pi must have shape ({data.n_clients}, {len(comps)}), got {tuple(pi_t.shape)}.")
    check_simplex("pi", pi_t.cpu().numpy())
    out = _component_outputs(model, comps, data).to(torch.float64)
    if model.is_classifier:
        proba = (pi_t.view(*pi_t.shape, 1, 1) * torch.softmax(out, dim=-1)).sum(1)
        return metrics_from_proba(proba, data, prefix)
    mean = (pi_t.view(*pi_t.shape, 1, 1) * out).sum(1).to(torch.float32)
    return metrics_from_outputs(model, mean, data, prefix)


def _check_has_data(data: ClientData, where: str) -> None:
    empty = torch.nonzero(data.n < 1).flatten().tolist()
    if empty:
        raise ValueError(f"{where}: clients {empty[:10]} have no training data; every client needs at least one "
                         f"sample (the E-step and the weights (3.13) are undefined otherwise).")


@torch.no_grad()
def fit_mixture_weights(model: Model, components: Params, data: ClientData, *, n_iter: int = 50, tol: float = 1e-6,
                        pi_init=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Mixture weights of (new) clients with the components frozen: iterate (3.12)–(3.13) on local data.

    This is how a client unseen at training time personalizes (thesis §3.5.3.2): it downloads
    :math:`\Theta`, starts from uniform weights and runs E-steps and :math:`\pi`-updates on its own
    training samples; :math:`\Theta` never changes. ``n_iter=1`` is the thesis' literal recipe (one
    E-step and one update); iterating to convergence is EM on :math:`\pi` alone, which never
    decreases the local log-likelihood (personalization spec §4.4 measured clearly better accuracies).

    Parameters
    ----------
    model : Model
    components : dict of Tensor (M, ...)
        Trained shared components.
    data : ClientData
        The clients' local training samples (K clients).
    n_iter : int
        Maximum number of E + π iterations (>= 1).
    tol : float
        Stop when :math:`\max|\pi^{new} - \pi|` < tol.
    pi_init : array-like (K, M), optional
        Starting weights; default uniform.

    Returns
    -------
    pi : np.ndarray (K, M)
    log_likelihood : np.ndarray (n_done + 1, K)
        Per-client mean log-likelihood (up to a constant) before each iteration and at the end;
        non-decreasing along the first axis.
    """
    n_iter = check_int("n_iter", n_iter, low=1)
    tol = check_real("tol", tol, low=0)
    check_type("components", components, dict)
    losses = component_losses(model, components, data)
    _check_has_data(data, "fit_mixture_weights")
    n_comp = losses.shape[1]
    pi = torch.full((data.n_clients, n_comp), 1.0 / n_comp, dtype=torch.float64) if pi_init is None else \
        torch.as_tensor(check_simplex("pi_init", pi_init, shape=(data.n_clients, n_comp)), dtype=torch.float64)
    trace = [mixture_log_likelihood(_log(pi), losses, data.mask)]
    for _ in range(n_iter):
        new = update_pi(e_step(_log(pi), losses), data.mask)
        delta = float((new - pi).abs().max())
        pi = new
        trace.append(mixture_log_likelihood(_log(pi), losses, data.mask))
        if delta < tol:
            break
    return pi.numpy(), torch.stack(trace).numpy()


# ----------------------------------------------------------------------------------------------
# FedEM (Algorithm 7)


@dataclass(frozen=True)
class MixtureState:
    """Shared components stacked ``(M, ...)``, private weights ``pi`` (K, M) float64, rounds done."""

    params: Params
    pi: Tensor
    round: int = 0
    optimizer: OptimizerState | None = None     # per (client, component) row t * M + m, when the solver keeps it


def _initial_pi(kind, n_clients: int, n_components: int, seed: int, device: torch.device) -> Tensor:
    if not isinstance(kind, str):
        pi = check_simplex("pi_init", kind, shape=(n_clients, n_components))
    elif kind == "uniform":
        pi = np.full((n_clients, n_components), 1.0 / n_components)
    else:
        pi = numpy_rng(seed, Stream.INIT, 1).dirichlet(np.ones(n_components), size=n_clients)
    return torch.as_tensor(pi, dtype=torch.float64, device=device)


def _responsibility_weights(q: Tensor, data: ClientData, rows_clients: np.ndarray, scale=None) -> Tensor:
    """Sample weights ``(R, n_max)`` of the stacked rows: responsibilities × data weights × optional scale."""
    w = q.reshape(-1, q.shape[-1]).to(torch.float32)
    if data.weight is not None:
        w = w * data.weight[torch.as_tensor(rows_clients, device=data.device)]
    if scale is not None:
        w = w * torch.as_tensor(scale, dtype=torch.float32, device=data.device).view(-1, 1)
    return w.contiguous()


class FedEM:
    r"""Federated Expectation-Maximization (thesis Algorithm 7).

    Each round: sample clients; each sampled client runs the E-step (3.12) on its training set with
    the current components, updates its weights :math:`\pi_t` (3.13), and runs E local SGD steps on
    each component with the responsibilities as sample weights (the mean over the minibatch, as in the
    reference code); the server averages each component with weights :math:`p_t`.

    Parameters
    ----------
    model : Model
        Architecture of every component.
    solver : LocalSGD
        Local solver of the component updates (E = ``solver.local_steps``).
    n_components : int
        Number ``M`` of components (>= 1). ``M = 1`` is exactly FedAvg.
    participation : float in (0, 1] or callable
        Client sampling, as in :class:`~fedlab.algorithms.FedAvg`.
    weights : "size", "uniform" or array (K,)
        Aggregation weights :math:`p_t` (thesis: :math:`n_t/n`).
    aggregation : {"participants", "stale"}
        ``"participants"``: average over the sampled clients (weights renormalised, FedAvg's rule);
        ``"stale"``: non-sampled clients count with the previous components (eq. (3.39), the
        reference code's rule). Identical under full participation.
    pi_init : "uniform" (reference code), "random" (thesis: Dirichlet(1)) or array (K, M)
    backend : {"auto", "batched", "loop"}
    """

    keeps_optimizer_state = True

    def __init__(self, model: Model, solver: LocalSGD, *, n_components: int = 3, participation: Participation = 1.0,
                 weights="size", aggregation: str = "participants", pi_init="uniform", backend: str = "auto") -> None:
        self.model, self.solver = check_model(model), check_solver(solver, stateful=self.keeps_optimizer_state)
        self.n_components = check_int("n_components", n_components, low=1)
        self.participation = check_participation(participation)
        self.weights = check_weights(weights)
        self.aggregation = check_choice("aggregation", aggregation, ("participants", "stale"))
        self.pi_init = check_choice("pi_init", pi_init, PI_INITS) if isinstance(pi_init, str) else \
            check_simplex("pi_init", pi_init, ndim=2, size=self.n_components)
        self.backend = check_choice("backend", backend, BACKENDS)

    def init(self, data: FederatedDataset, seed: int) -> MixtureState:
        check_data(self.model, data)
        _check_has_data(data.train, type(self).__name__)
        client_weights(self.weights, data.train)
        comps = init_components(self.model, self.n_components, seed, data.device)
        optimizer = population_optimizer(self.solver, {k: v[0] for k, v in comps.items()},
                                         data.n_clients * self.n_components)
        return MixtureState(comps, _initial_pi(self.pi_init, data.n_clients, self.n_components, seed, data.device),
                            optimizer=optimizer)

    def _local_update(self, params_rows: Params, train: ClientData, clients: np.ndarray, pi: Tensor,
                      comps: Params | list[Params], key: tuple, scale=None, optimizer: OptimizerState | None = None
                      ) -> tuple[Params, Tensor, Tensor, float, OptimizerState | None]:
        """E-step, π update and local SGD for the given clients (``comps``: every client's components, as
        :func:`component_losses` takes them). Returns (new rows, new π, local loss, mean NLL, the population's
        optimizer state: row t * M + m is client t's component m)."""
        m = self.n_components
        rows = np.repeat(clients, m)
        if m == 1:  # q ≡ 1: the local objective is exactly FedAvg's
            new_pi = torch.ones((len(clients), 1), dtype=torch.float64, device=train.device)
            sample_weight = None if scale is None else _responsibility_weights(
                torch.ones((len(clients), 1, train.x.shape[1]), dtype=torch.float64, device=train.device), train, rows,
                scale)
            nll = float("nan")
        else:
            losses = component_losses(self.model, comps, train, clients)
            chosen = torch.as_tensor(clients, device=train.device)
            log_pi, mask, n = _log(pi), train.mask[chosen], train.n[chosen]
            q = e_step(log_pi, losses)
            new_pi = update_pi(q, mask)
            ll = mixture_log_likelihood(log_pi, losses, mask)
            nll = float(-(ll * n.double()).sum() / n.sum())
            sample_weight = _responsibility_weights(q, train, rows, None if scale is None else np.repeat(scale, m))
        state_rows = (clients[:, None] * m + np.arange(m)).ravel()
        new, loss, optimizer = train_rows(self.model, self.solver, params_rows, train, key=key, round_index=key[1],
                                          optimizer=optimizer, state_rows=state_rows, rows=rows,
                                          sample_weight=sample_weight, anchor=params_rows, backend=self.backend)
        return new, new_pi, loss, nll, optimizer

    def round(self, state: MixtureState, data: FederatedDataset, seed: int) -> tuple[MixtureState, dict]:
        chosen = sample_participants(self.participation, data.n_clients, seed, state.round)
        if len(chosen) == 0:
            return MixtureState(state.params, state.pi, state.round + 1, state.optimizer), \
                {"participants": [], "local_loss": float("nan"), "nll": float("nan")}
        m, c = self.n_components, len(chosen)
        start = {k: v.repeat(c, *([1] * (v.dim() - 1))) for k, v in state.params.items()}  # row r: comp r % M
        new, new_pi, loss, nll, optimizer = self._local_update(start, data.train, chosen, state.pi[chosen], state.params,
                                                               (seed, state.round, Stream.LOCAL),
                                                               optimizer=state.optimizer)
        p = client_weights(self.weights, data.train)
        agg = weighted_average({k: v.reshape(c, m, *v.shape[1:]) for k, v in new.items()}, p[chosen])
        if self.aggregation == "stale" and c < data.n_clients:
            s = float(p[chosen].sum())
            agg = {k: s * agg[k] + (1 - s) * state.params[k] for k in agg}
        pi = state.pi.clone()
        pi[torch.as_tensor(chosen, device=pi.device)] = new_pi
        info = {"participants": chosen.tolist(), "local_loss": float(loss.mean()), "nll": nll}
        return MixtureState(agg, pi, state.round + 1, optimizer), info

    def evaluate(self, state: MixtureState, data: FederatedDataset) -> dict[str, np.ndarray]:
        out = mixture_metrics(self.model, state.params, state.pi, data.train, "train_")
        out.update(mixture_metrics(self.model, state.params, state.pi, data.test, "test_"))
        return out

    def adapt(self, state: MixtureState, new_data: FederatedDataset, *, seed: int, n_iter: int = 50,
              tol: float = 1e-6) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Personalize clients unseen at training: fit π on their training data with frozen components.

        Returns ``(pi (K_new, M), per-client metrics (K_new,))`` (``train_*``/``test_*`` of the mixture
        predictor, as :meth:`evaluate`'s). See :func:`fit_mixture_weights`: EM on π is deterministic, so
        ``seed`` (checked) draws nothing.
        """
        check_int("seed", seed, low=0)
        pi, _ = fit_mixture_weights(self.model, state.params, new_data.train, n_iter=n_iter, tol=tol)
        metrics = mixture_metrics(self.model, state.params, pi, new_data.train, "train_")
        metrics.update(mixture_metrics(self.model, state.params, pi, new_data.test, "test_"))
        return pi, metrics


# ----------------------------------------------------------------------------------------------
# D-FedEM (Algorithm 8)


@dataclass(frozen=True)
class DecentralizedMixtureState:
    """Every client's copy of the components, rows ``(K*M, ...)`` client-major; ``pi`` (K, M); rounds done."""

    params: Params
    pi: Tensor
    round: int = 0


class DFedEM(FedEM):
    r"""Fully decentralized FedEM (thesis Algorithm 8): local EM steps, then gossip of the components.

    Client :math:`t` keeps its own :math:`\Theta_t`, runs the E-step and :math:`\pi_t` update with it,
    E local SGD steps per component, then averages with its neighbours,
    :math:`\theta_{m,t} \leftarrow \sum_s w_{s,t}\,\theta_{m,s}`. Every client starts from the same
    :math:`\Theta^0` (the theory allows any start).

    Parameters
    ----------
    model, solver, n_components, pi_init, backend :
        As in :class:`FedEM`.
    mixing_matrix : array (K, K) or callable ``(round, rng) -> W``
        Doubly stochastic (checked), e.g. FMMC or Metropolis weights of a connected graph
        (``fedlab.mixing``), or :math:`11^\top/K` (then D-FedEM = FedEM with uniform weights).
    weight_by_size : bool
        Scale client :math:`t`'s steps by :math:`T n_t / n` (the thesis' :math:`n_t/n` factor of Alg. 8,
        times T to keep the average step size; implemented by scaling the sample weights, which is
        exact for plain SGD). Default ``False`` = the reference code (targets the unweighted average
        of client objectives).
    """

    keeps_optimizer_state = False    # the gossip mixes models, not their optimizers

    def __init__(self, model: Model, solver: LocalSGD, mixing_matrix: MixingSpec, *, n_components: int = 3,
                 weight_by_size: bool = False, pi_init="uniform", backend: str = "auto") -> None:
        super().__init__(model, solver, n_components=n_components, pi_init=pi_init, backend=backend)
        self.mixing_matrix = check_mixing(mixing_matrix)
        self.weight_by_size = check_bool("weight_by_size", weight_by_size)

    def _matrix(self, round_: int, n: int, seed: int) -> np.ndarray:
        w = self.mixing_matrix
        if callable(w):
            w = w(round_, numpy_rng(seed, round_, Stream.SAMPLING))
        return check_mixing_matrix(w, n)

    def init(self, data: FederatedDataset, seed: int) -> DecentralizedMixtureState:
        check_data(self.model, data)
        _check_has_data(data.train, type(self).__name__)
        if not callable(self.mixing_matrix):
            check_mixing_matrix(self.mixing_matrix, data.n_clients)
        comps = init_components(self.model, self.n_components, seed, data.device)
        k = data.n_clients
        rows = {name: v.repeat(k, *([1] * (v.dim() - 1))) for name, v in comps.items()}
        return DecentralizedMixtureState(rows, _initial_pi(self.pi_init, k, self.n_components, seed, data.device))

    def round(self, state: DecentralizedMixtureState, data: FederatedDataset,
              seed: int) -> tuple[DecentralizedMixtureState, dict]:
        k, m = data.n_clients, self.n_components
        clients = np.arange(k)
        scale = None
        if self.weight_by_size:
            n = data.train.n.cpu().numpy().astype(float)
            scale = k * n / n.sum()
        comps = _split_components(state.params, k, m)
        new, pi, loss, nll, _ = self._local_update(state.params, data.train, clients, state.pi, comps,
                                                   (seed, state.round, Stream.LOCAL), scale)
        w = self._matrix(state.round, k, seed)
        mixed = gossip({name: v.reshape(k, m, *v.shape[1:]) for name, v in new.items()}, w)
        mixed = {name: v.reshape(k * m, *v.shape[2:]) for name, v in mixed.items()}
        info = {"local_loss": float(loss.mean()), "nll": nll, "consensus": consensus_distance(mixed, k)}
        return DecentralizedMixtureState(mixed, pi, state.round + 1), info

    def evaluate(self, state: DecentralizedMixtureState, data: FederatedDataset) -> dict[str, np.ndarray]:
        comps = _split_components(state.params, data.n_clients, self.n_components)
        out = mixture_metrics(self.model, comps, state.pi, data.train, "train_")
        out.update(mixture_metrics(self.model, comps, state.pi, data.test, "test_"))
        return out

    def average_components(self, state: DecentralizedMixtureState) -> Params:
        r"""Network average :math:`\bar\Theta = \frac1T\sum_t \Theta_t`, stacked ``(M, ...)``."""
        m = self.n_components
        return {name: v.reshape(-1, m, *v.shape[1:]).mean(0) for name, v in state.params.items()}

    def adapt(self, state: DecentralizedMixtureState, new_data: FederatedDataset, *, seed: int, n_iter: int = 50,
              tol: float = 1e-6) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """New clients fit π against the network-average components (see :meth:`FedEM.adapt`)."""
        shared = MixtureState(self.average_components(state), state.pi, state.round)
        return FedEM.adapt(self, shared, new_data, seed=seed, n_iter=n_iter, tol=tol)


def consensus_distance(params: Params, n_clients: int) -> float:
    r"""Disagreement :math:`\sum_t \|\Theta_t - \bar\Theta\|_F^2` of per-client stacked parameters (thesis eq. (3.18))."""
    n_rows = check_param_dict("params", params)
    n_clients = check_int("n_clients", n_clients, low=1)
    if n_rows % n_clients:
        raise ValueError(f"params have {n_rows} rows, not a multiple of n_clients={n_clients}.")
    total = 0.0
    for v in params.values():
        rows = v.reshape(n_clients, -1).to(torch.float64)
        total += float((rows - rows.mean(0, keepdim=True)).pow(2).sum())
    return total
