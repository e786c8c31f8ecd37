r"""Client streams under temporal shifts: latent states, Markov chains, limited buffers, prediction oracles.

The setting of SFedPO ("Streaming federated learning with a prediction oracle under temporal shifts", spec
``dynamic.md`` §B.1). There are :math:`M` latent states; state :math:`m` has a stationary distribution
:math:`\mathcal D_m` (here a label distribution :math:`p_m` over :math:`C` classes, Gaussian class-conditional
features and an optional per-state feature shift). Round :math:`r` has :math:`T` time steps; at step
:math:`t` client :math:`n` is in state :math:`m^{(r)}_{n,t}` and receives fresh samples of
:math:`\mathcal D_{m_{n,t}}`. Its long-run state distribution is :math:`\pi_n`.

* **Markov chains.** States follow the lazy chain :math:`P_n = (1-\kappa) I + \kappa\,\mathbf 1\pi_n^\top`
  (:func:`lazy_transition`): with probability :math:`\kappa` (the *shift speed*) the state is redrawn from
  :math:`\pi_n`, otherwise it stays. :math:`\pi_n` is stationary for every :math:`\kappa`; :math:`\kappa = 1`
  gives states i.i.d. :math:`\sim\pi_n` at every step (what Theorem 1's proof assumes) and :math:`\kappa = 0`
  no shift at all. The distribution of the states of a round given the state :math:`m_0` at its start is
  :math:`\pi^{(r)}_n = \rho\, e_{m_0} + (1-\rho)\pi_n`, :math:`\rho = \frac1T\sum_{t=1}^T(1-\kappa)^t`
  (:func:`round_state_distribution`): this is what a *perfect* oracle forecasts.
* **Limited buffers.** Client :math:`n` keeps :math:`D` samples. At a step in state :math:`m` it replaces
  :math:`\mathrm{round}(\alpha_{n,m} D)` of them by fresh samples of state :math:`m`; the evicted samples are chosen
  by an update rule of the data-streams chapter's memories (:data:`fedlab.data.memory.MEMORY_RULES`, default
  ``"random"``, i.e. uniform eviction, which realises the mixture update (1)
  :math:`\mathcal D_{n,t} = (1-\alpha_{n,m})\mathcal D_{n,t-1} + \alpha_{n,m}\mathcal D_m` in expectation).
  :class:`BufferBank` holds the N buffers.
* **Prediction oracles** (:class:`PredictionOracle`, :data:`ORACLES`): ``"exact"`` forecasts
  :math:`\pi^{(r)}_n`, ``"stationary"`` returns :math:`\pi_n`, ``"bayes"`` the Dirichlet posterior mean of the
  states observed so far (App. C.1, :func:`bayes_oracle`); ``eps > 0`` adds the paper's perturbation
  (uniform noise in :math:`[-\varepsilon, \varepsilon]`, clip at 0, renormalise; :func:`perturb_oracle`). The
  prediction error is :math:`\delta_n = \|\hat\pi_n - \pi_n\|_1` (:func:`oracle_error`).

:func:`make_temporal_shift` assembles a :class:`TemporalShiftDataset` (spec §B.9's synthetic environment:
12 states in 4 clusters with Dirichlet concentrations (0.05, 0.1, 0.5, 100) over 5 classes, 10-D features).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from scipy.special import xlogy

from fedlab._rng import Stream, as_numpy_rng, numpy_rng
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_simplex, check_type
from fedlab.engine.population import ClientData, FederatedDataset
from fedlab.markov import sample_chains, stationary_distribution
from fedlab.data.memory import MEMORY_RULES

__all__ = [
    "DISCREPANCIES",
    "state_discrepancy",
    "StateSpace",
    "make_state_space",
    "SCENARIOS",
    "make_state_distributions",
    "availability_probabilities",
    "lazy_transition",
    "stationary_distribution",
    "shift_persistence",
    "round_state_distribution",
    "simulate_states",
    "BUFFER_RULES",
    "BufferBank",
    "perturb_oracle",
    "bayes_oracle",
    "oracle_error",
    "ORACLES",
    "PredictionOracle",
    "TemporalShiftDataset",
    "make_temporal_shift",
]

# random streams of the data set (fresh samples, oracle noise): distinct from the engine's STREAM_* keys


def _as_dist_matrix(name: str, value, n_cols: int | None = None) -> np.ndarray:
    """Validate a row-stochastic matrix (each row non-negative, summing to 1)."""
    arr = check_array(name, value, ndim=2, nonnegative=True)
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} columns, got shape {arr.shape}.")
    if arr.shape[0] == 0 or np.any(np.abs(arr.sum(1) - 1) > 1e-6):
        raise ValueError(f"every row of {name} must sum to 1, got sums {np.round(arr.sum(1)[:5], 6).tolist()}.")
    return arr


# ------------------------------------------------------------------------------------ state heterogeneity

def _kl(p: np.ndarray) -> np.ndarray:
    c = p.shape[-1]
    return np.sum(xlogy(p, p * c), axis=-1)


def _l1(p: np.ndarray) -> np.ndarray:
    return np.abs(p - 1.0 / p.shape[-1]).sum(-1)


def _l2(p: np.ndarray) -> np.ndarray:
    return np.sqrt(((p - 1.0 / p.shape[-1]) ** 2).sum(-1))


def _js(p: np.ndarray) -> np.ndarray:
    u = np.full_like(p, 1.0 / p.shape[-1])
    mid = (p + u) / 2
    return 0.5 * np.sum(xlogy(p, p / mid), -1) + 0.5 * np.sum(xlogy(u, u / mid), -1)


#: Discrepancy between a state's class distribution and the uniform one (paper Table 7: L1, L2, JS, KL).
DISCREPANCIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {"kl": _kl, "l1": _l1, "l2": _l2, "js": _js}


def state_discrepancy(class_dist, kind: str = "kl", *, normalize: bool = True) -> np.ndarray:
    r"""Heterogeneity proxy :math:`d_m` of each state (spec §B.5 "C.2", paper App. H.1).

    :math:`d_m \propto \mathrm{div}(p_m \,\|\, \mathcal U_C)`, the divergence between state :math:`m`'s class
    distribution and the uniform one (KL in the paper's main experiments). With ``normalize`` the values are
    divided by their maximum (spec §B.9 [assumption]; all zeros stay zeros).

    Parameters
    ----------
    class_dist : array-like (M, C)
        Row-stochastic class distributions :math:`p_m`.
    kind : {"kl", "l1", "l2", "js"}
    normalize : bool

    Returns
    -------
    ndarray (M,), non-negative.
    """
    p = _as_dist_matrix("class_dist", class_dist)
    normalize = check_bool("normalize", normalize)
    d = np.maximum(DISCREPANCIES[check_choice("kind", kind, DISCREPANCIES)](p), 0.0)
    if normalize and d.max() > 0:
        d = d / d.max()
    return d


# ------------------------------------------------------------------------------------ state space

@dataclass(frozen=True, eq=False)
class StateSpace:
    r"""The :math:`M` stationary distributions :math:`\mathcal D_m` of the latent states.

    A sample of state :math:`m` is :math:`y\sim p_m` and :math:`x = \mu_y + s_m + \sigma\,\xi`,
    :math:`\xi\sim\mathcal N(0, I)`: label shift through :math:`p_m`, feature shift through :math:`s_m`.

    Attributes
    ----------
    class_dist : ndarray (M, C)
        :math:`p_m`.
    means : ndarray (C, dim)
        Class means :math:`\mu_c`.
    shifts : ndarray (M, dim)
        Per-state feature shifts :math:`s_m` (zeros for label shift only).
    noise : float
        :math:`\sigma`.
    cluster : ndarray (M,) of int
        Cluster of each state.
    concentration : ndarray (M,)
        Dirichlet concentration the state's :math:`p_m` was drawn with.
    """

    class_dist: np.ndarray
    means: np.ndarray
    shifts: np.ndarray
    noise: float = 1.0
    cluster: np.ndarray | None = None
    concentration: np.ndarray | None = None

    def __post_init__(self) -> None:
        p = _as_dist_matrix("class_dist", self.class_dist)
        means = check_array("means", self.means, ndim=2)
        if means.shape[0] != p.shape[1]:
            raise ValueError(f"means must have one row per class ({p.shape[1]}), got shape {means.shape}.")
        shifts = check_array("shifts", self.shifts, shape=(p.shape[0], means.shape[1]))
        check_real("noise", self.noise, low=0)
        object.__setattr__(self, "class_dist", p)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "shifts", shifts)
        if self.cluster is None:
            object.__setattr__(self, "cluster", np.zeros(p.shape[0], dtype=np.int64))
        else:
            cluster = check_array("cluster", self.cluster, shape=(p.shape[0],), dtype=np.int64)
            if np.any(cluster < 0):
                raise ValueError(f"cluster must hold non-negative cluster ids, got {cluster.tolist()}.")
            object.__setattr__(self, "cluster", cluster)
        if self.concentration is None:
            object.__setattr__(self, "concentration", np.full(p.shape[0], np.nan))
        else:  # NaN marks a state whose concentration is unknown
            conc = check_array("concentration", self.concentration, shape=(p.shape[0],), finite=False)
            if np.any(np.isinf(conc)) or np.any(conc <= 0):
                raise ValueError(f"concentration must hold positive numbers (or NaN: unknown), got {conc.tolist()}.")
            object.__setattr__(self, "concentration", conc)

    @property
    def n_states(self) -> int:
        return int(self.class_dist.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.class_dist.shape[1])

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])

    def discrepancy(self, kind: str = "kl", normalize: bool = True) -> np.ndarray:
        """:math:`d_m` of every state, see :func:`state_discrepancy`."""
        return state_discrepancy(self.class_dist, kind, normalize=normalize)

    def sample(self, state: int, size: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """``size`` i.i.d. samples of state ``state``: ``x`` float32 (size, dim) and ``y`` int64 (size,).

        Prefix-consistent: the first k samples do not depend on ``size`` for the same generator state.
        """
        state = check_int("state", state, low=0, high=self.n_states - 1)
        size = check_int("size", size, low=0)
        rng = as_numpy_rng(rng)
        feature_rng = np.random.default_rng(int(rng.integers(2 ** 63)))  # a separate stream for the features
        u = rng.random(size)
        xi = feature_rng.standard_normal((size, self.dim))
        # labels by inverse CDF of the uniforms (only the first `size` uniforms are used: prefix-consistent)
        y = np.minimum(np.searchsorted(np.cumsum(self.class_dist[state]), u, side="right"), self.n_classes - 1)
        x = self.means[y] + self.shifts[state] + self.noise * xi
        return x.astype(np.float32), y.astype(np.int64)

    def sample_mixture(self, weights, size: int, rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` samples of the mixture :math:`\\sum_m \\text{weights}_m \\mathcal D_m`: ``(x, y, states)``."""
        weights = check_array("weights", weights, shape=(self.n_states,), nonnegative=True)
        if abs(weights.sum() - 1) > 1e-6:
            raise ValueError(f"weights must sum to 1, got {weights.sum():.6g}.")
        size = check_int("size", size, low=0)
        rng = as_numpy_rng(rng)
        states = rng.choice(self.n_states, size=size, p=weights / weights.sum())
        x = np.zeros((size, self.dim), dtype=np.float32)
        y = np.zeros(size, dtype=np.int64)
        for m in np.unique(states):
            idx = np.flatnonzero(states == m)
            x[idx], y[idx] = self.sample(int(m), len(idx), rng)
        return x, y, states.astype(np.int64)

    def mixture_accuracy(self, train_weights, test_weights=None, *, n_samples: int = 20000, rng=None) -> float:
        r"""Accuracy on the mixture ``test_weights`` of the Bayes classifier of the mixture ``train_weights``.

        The Bayes classifier of :math:`\sum_m v_m\mathcal D_m` is
        :math:`\arg\max_c \sum_m v_m p_m(c)\,\mathcal N(x; \mu_c + s_m, \sigma^2 I)`; it is what a well-specified model
        trained on that mixture converges to (softmax regression is well specified without feature shift). With
        ``train_weights = test_weights`` this is the Bayes accuracy; the difference between the two measures how
        much accuracy the choice of the training mixture can buy at all (Monte Carlo over ``n_samples``).

        Parameters
        ----------
        train_weights : array-like (M,)
        test_weights : array-like (M,), optional
            Default: ``train_weights``.
        n_samples : int
        rng : numpy Generator, int or None
        """
        v = check_array("train_weights", train_weights, shape=(self.n_states,), nonnegative=True)
        u = v if test_weights is None else check_array("test_weights", test_weights, shape=(self.n_states,),
                                                         nonnegative=True)
        for name, arr in (("train_weights", v), ("test_weights", u)):
            if abs(arr.sum() - 1) > 1e-6:
                raise ValueError(f"{name} must sum to 1, got {arr.sum():.6g}.")
        if self.noise <= 0:
            raise ValueError("mixture_accuracy needs a positive feature noise.")
        x, y, _ = self.sample_mixture(u, check_int("n_samples", n_samples, low=1), rng)
        centers = self.shifts[:, None, :] + self.means[None, :, :]  # (M, C, dim)
        with np.errstate(divide="ignore"):
            logw = np.log(v)[:, None] + np.log(self.class_dist)
        pred = np.empty(len(y), dtype=np.int64)
        for lo in range(0, len(y), 2000):  # chunks bound the (n, M, C, dim) intermediate
            xc = x[lo: lo + 2000]
            sq = ((xc[:, None, None, :] - centers[None]) ** 2).sum(-1)  # log N(x; mu_c + s_m) up to a constant
            score = logw[None] - sq / (2 * self.noise ** 2)
            top = score.max(axis=(1, 2), keepdims=True)
            pred[lo: lo + 2000] = np.log(np.exp(score - top).sum(1)).argmax(1)  # log-sum over states, argmax class
        post_correct = pred == y
        return float(post_correct.mean())


def make_state_space(n_states: int = 12, n_classes: int = 5, dim: int = 10, *,
                     concentrations: Sequence[float] = (0.05, 0.1, 0.5, 100.0), sep: float = 1.0,
                     feature_shift: float = 0.0, noise: float = 1.0, rng=None) -> StateSpace:
    r"""States in clusters, each cluster with its own Dirichlet concentration (paper §6.1, spec §B.9).

    State :math:`m` belongs to cluster :math:`\lfloor m K / M\rfloor` (K = ``len(concentrations)``) and has
    :math:`p_m\sim\mathrm{Dir}(c_k \mathbf 1_C)`: small concentrations give label-skewed states, 100 nearly
    uniform ones. Class means :math:`\mu_c\sim\mathcal N(0, \mathrm{sep}^2 I)`; feature shifts
    :math:`s_m\sim\mathcal N(0, \mathrm{feature\_shift}^2 I)`.

    Parameters
    ----------
    n_states : int
        M >= 1 (the paper: 60 in 6 clusters; the CPU plan: 12 in 4 clusters).
    n_classes : int
        C >= 2.
    dim : int
    concentrations : sequence of float
        One Dirichlet concentration per cluster (at most ``n_states`` clusters).
    sep : float
        Scale of the class means (larger = easier).
    feature_shift : float
        Scale of the per-state feature shift (0: label shift only).
    noise : float
        Feature noise :math:`\sigma`.
    rng : numpy Generator, int or None
    """
    n_states = check_int("n_states", n_states, low=1)
    n_classes = check_int("n_classes", n_classes, low=2)
    dim = check_int("dim", dim, low=1)
    conc = check_array("concentrations", concentrations, ndim=1)
    if conc.size == 0 or conc.size > n_states or np.any(conc <= 0):
        raise ValueError(f"concentrations must hold between 1 and n_states={n_states} positive numbers, got {conc}.")
    sep = check_real("sep", sep, low=0, low_open=True)
    feature_shift = check_real("feature_shift", feature_shift, low=0)
    noise = check_real("noise", noise, low=0)
    rng = as_numpy_rng(rng)
    cluster = np.arange(n_states) * conc.size // n_states
    alpha = conc[cluster]
    class_dist = np.stack([rng.dirichlet(np.full(n_classes, a)) for a in alpha])
    # Dirichlet draws with tiny concentrations can underflow to exact zeros; keep rows stochastic
    class_dist = np.maximum(class_dist, 0.0)
    class_dist /= class_dist.sum(1, keepdims=True)
    means = sep * rng.standard_normal((n_classes, dim))
    shifts = feature_shift * rng.standard_normal((n_states, dim))
    return StateSpace(class_dist, means, shifts, noise, cluster.astype(np.int64), alpha)


# ------------------------------------------------------------------------------------ state distributions

def _full(n_clients, n_states, cluster, rng, concentration, states_per_client, heavy_fraction, heavy_clusters):
    pi = rng.dirichlet(np.full(n_states, concentration), size=n_clients)
    pi = np.maximum(pi, 1e-12)  # full access: every state has positive probability
    return pi / pi.sum(1, keepdims=True)


def _partial(n_clients, n_states, cluster, rng, concentration, states_per_client, heavy_fraction, heavy_clusters):
    k = min(states_per_client, n_states)
    heavy = np.flatnonzero(np.isin(cluster, heavy_clusters))
    n_heavy = int(round(heavy_fraction * n_clients)) if heavy.size else 0
    pi = np.zeros((n_clients, n_states))
    for n in range(n_clients):
        pool = heavy if n < n_heavy else np.arange(n_states)
        chosen = rng.choice(pool, size=min(k, pool.size), replace=False)
        pi[n, chosen] = rng.dirichlet(np.full(len(chosen), concentration))
    pi = np.where(pi > 0, np.maximum(pi, 1e-12), 0.0)
    return pi / pi.sum(1, keepdims=True)


#: How clients' long-run state distributions are drawn (paper §6.1: full- and partial-access scenarios).
SCENARIOS: dict[str, Callable] = {"full": _full, "partial": _partial}


def make_state_distributions(n_clients: int, n_states: int, scenario: str = "full", *, cluster=None,
                             concentration: float = 1.0, states_per_client: int = 3, heavy_fraction: float = 0.5,
                             heavy_clusters: Sequence[int] = (0, 1), rng=None) -> np.ndarray:
    r"""Clients' long-run state distributions :math:`\Pi = (\pi_{n,m})`, shape (N, M).

    * ``"full"``: :math:`\pi_n\sim\mathrm{Dir}(c\,\mathbf 1_M)`, every state reachable (mild heterogeneity);
    * ``"partial"``: each client reaches ``states_per_client`` random states (weights
      :math:`\sim\mathrm{Dir}(c\,\mathbf 1)`, 0 elsewhere); the first ``heavy_fraction`` of the clients draw them
      from ``heavy_clusters`` only (the label-skewed clusters; extreme heterogeneity).

    The paper does not say how full-access :math:`\pi_n` are generated (spec §B.7 item 8); Dir(1) is the spec's
    CPU plan.

    Parameters
    ----------
    n_clients, n_states : int
    scenario : {"full", "partial"}
    cluster : array-like (M,) of int, optional
        State clusters (needed by ``"partial"`` to find ``heavy_clusters``; default: one cluster).
    concentration : float
        Dirichlet concentration :math:`c > 0`.
    states_per_client : int
    heavy_fraction : float in [0, 1]
    heavy_clusters : sequence of int
    rng : numpy Generator, int or None
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    n_states = check_int("n_states", n_states, low=1)
    scenario = check_choice("scenario", scenario, SCENARIOS)
    concentration = check_real("concentration", concentration, low=0, low_open=True)
    states_per_client = check_int("states_per_client", states_per_client, low=1)
    heavy_fraction = check_real("heavy_fraction", heavy_fraction, low=0, high=1)
    cluster = np.zeros(n_states, dtype=np.int64) if cluster is None else \
        check_array("cluster", cluster, shape=(n_states,), dtype=np.int64)
    heavy = check_array("heavy_clusters", heavy_clusters, ndim=1, dtype=np.int64)
    if np.any(heavy < 0):
        raise ValueError(f"heavy_clusters must hold non-negative cluster ids, got {heavy.tolist()}.")
    return SCENARIOS[scenario](n_clients, n_states, cluster, as_numpy_rng(rng), concentration, states_per_client,
                               heavy_fraction, heavy)


def availability_probabilities(n_clients: int, mean: float = 0.2, std: float = 0.01, *, low: float = 0.01,
                               rng=None) -> np.ndarray:
    r"""Availability :math:`q_n\sim\mathcal N(\mu, s^2)` clipped to ``[low, 1]``.

    The paper (§6.1) uses :math:`\mathcal N(0.2, 0.01^2)`.
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    mean = check_real("mean", mean, low=0, high=1, low_open=True)
    std = check_real("std", std, low=0)
    low = check_real("low", low, low=0, high=1, low_open=True)
    return np.clip(mean + std * as_numpy_rng(rng).standard_normal(n_clients), low, 1.0)


# ------------------------------------------------------------------------------------ Markov chains

def lazy_transition(pi, speed: float) -> np.ndarray:
    r"""Transition matrix :math:`P = (1-\kappa) I + \kappa\,\mathbf 1\pi^\top` of the lazy chain of shift speed
    :math:`\kappa`.

    :math:`\pi` is stationary for every :math:`\kappa\in[0,1]`; :math:`\kappa = 1` draws an i.i.d. state at every
    step, :math:`\kappa = 0` never moves. The chain mixes in about :math:`1/\kappa` steps
    (:math:`\|e_m P^t - \pi\|_1 = (1-\kappa)^t\|e_m - \pi\|_1`).

    Parameters
    ----------
    pi : array-like (M,) or (N, M)
    speed : float in [0, 1]

    Returns
    -------
    ndarray (M, M) or (N, M, M)
    """
    pi = check_array("pi", pi)
    if pi.ndim not in (1, 2):
        raise ValueError(f"pi must be a distribution (M,) or a stack (N, M), got shape {pi.shape}.")
    _as_dist_matrix("pi", np.atleast_2d(pi))
    speed = check_real("speed", speed, low=0, high=1)
    m = pi.shape[-1]
    return (1 - speed) * np.eye(m) + speed * pi[..., None, :] * np.ones((m, 1))


def shift_persistence(speed: float, n_steps: int) -> float:
    r""":math:`\rho = \frac1T\sum_{t=1}^T(1-\kappa)^t`: the weight of the round's starting state in :math:`\pi^{(r)}`.

    1 without shift (:math:`\kappa = 0`), 0 for i.i.d. states (:math:`\kappa = 1`). It has the form of
    Theorem 1's :math:`\gamma_n` with :math:`\alpha_n` replaced by :math:`\kappa`.
    """
    speed = check_real("speed", speed, low=0, high=1)
    n_steps = check_int("n_steps", n_steps, low=1)
    return float(np.mean((1 - speed) ** np.arange(1, n_steps + 1)))


def round_state_distribution(pi, speed: float, start, n_steps: int) -> np.ndarray:
    r"""Distribution of the states of a round given its starting states: :math:`\rho e_{m_0} + (1-\rho)\pi`.

    :math:`\frac1T\sum_{t=1}^T e_{m_0}^\top P^t` for the lazy chain (:func:`lazy_transition`), with
    :math:`\rho` = :func:`shift_persistence`. This is the "next distribution" a perfect oracle forecasts.

    Parameters
    ----------
    pi : array-like (N, M)
    speed : float in [0, 1]
    start : array-like (N,) of int
        State of each client at the start of the round.
    n_steps : int
        T.

    Returns
    -------
    ndarray (N, M)
    """
    pi = _as_dist_matrix("pi", np.atleast_2d(check_array("pi", pi)))
    start = check_array("start", start, shape=(pi.shape[0],), dtype=np.int64)
    if np.any(start < 0) or np.any(start >= pi.shape[1]):
        raise ValueError(f"start must hold states in [0, {pi.shape[1]}), got {start[:10].tolist()}.")
    rho = shift_persistence(speed, n_steps)
    out = (1 - rho) * pi
    out[np.arange(pi.shape[0]), start] += rho
    return out


def simulate_states(pi, n_steps_total: int, *, speed: float = 1.0, transitions=None, rng=None) -> np.ndarray:
    r"""State trajectories :math:`m_{n,0}, \dots, m_{n,S}` of N clients, shape (N, S + 1).

    :math:`m_{n,0}\sim\pi_n`; then the lazy chain of shift speed ``speed`` (at each step the state is redrawn from
    :math:`\pi_n` with probability :math:`\kappa`, else it stays), or explicit per-client ``transitions``
    (N, M, M) whose stationary distributions should be :math:`\pi_n`. Sampled by
    :func:`fedlab.markov.sample_chains`; the lazy chain draws, in this order, the initial uniforms, the redraw
    events and one candidate uniform per step.

    Parameters
    ----------
    pi : array-like (N, M)
    n_steps_total : int
        S >= 0 transitions.
    speed : float in [0, 1]
    transitions : array-like (N, M, M), optional
    rng : numpy Generator, int or None
    """
    pi = _as_dist_matrix("pi", pi)
    s = check_int("n_steps_total", n_steps_total, low=0)
    speed = check_real("speed", speed, low=0, high=1)
    rng = as_numpy_rng(rng)
    n, m = pi.shape
    if transitions is None:
        u0 = rng.random((n, 1))
        hold = rng.random((n, s)) >= speed
        u = np.concatenate([u0, rng.random((n, s))], axis=1)
        redraw = np.broadcast_to(pi[:, None, :], (n, m, m))       # a move redraws the state from pi_n
        return sample_chains(redraw, s + 1, law=pi, uniforms=u, hold=hold)
    P = check_array("transitions", transitions, shape=(n, m, m), nonnegative=True)
    if np.any(np.abs(P.sum(-1) - 1) > 1e-6):
        raise ValueError("every row of transitions must sum to 1.")
    u0 = rng.random((n, 1))
    return sample_chains(P, s + 1, law=pi, uniforms=np.concatenate([u0, rng.random((n, s))], axis=1))


# ------------------------------------------------------------------------------------ buffers

#: Update rules of the data-streams chapter (:data:`~fedlab.data.memory.MEMORY_RULES`) that keep a buffer full:
#: ``random`` (uniform eviction, the mixture update (1)), ``fifo`` (evict the oldest), ``reservoir`` (a uniform
#: sample of everything offered so far) and ``keep`` (never replace: train on the initial data only).
BUFFER_RULES = ("random", "fifo", "reservoir", "keep")


class BufferBank:
    r"""N limited buffers of capacity D (features, labels and the state each sample came from).

    Which stored samples fresh ones replace is decided by an update rule of the data-streams chapter
    (:data:`fedlab.data.memory.MEMORY_RULES`, the rules of :class:`~fedlab.streams.data.Memory`; here one of
    :data:`BUFFER_RULES`). Like a :class:`~fedlab.streams.data.Memory`, the rule sees sample ids (arrival order)
    only, never the data. Buffers stay full. The bank holds plain arrays, so ``copy()`` is cheap (algorithm states
    are immutable: a round copies the bank, then replaces); the randomness of an update is passed to
    :meth:`replace`.

    Parameters
    ----------
    x : array-like (N, D, dim)
        Initial contents.
    y : array-like (N, D) of int
    states : array-like (N, D) of int
        Source state of each initial sample.
    rule : str
        Key of :data:`BUFFER_RULES`.
    """

    def __init__(self, x, y, states, rule: str = "random") -> None:
        x = check_array("x", x).astype(np.float32)
        if x.ndim < 3:
            raise ValueError(f"x must have shape (N, D, *features), got {x.shape}.")
        n, d = x.shape[:2]
        if d < 1:
            raise ValueError("buffers need a capacity D >= 1.")
        y = check_array("y", y, shape=(n, d), dtype=np.int64)
        states = check_array("states", states, shape=(n, d), dtype=np.int64)
        for name, arr in (("y", y), ("states", states)):
            if np.any(arr < 0):
                raise ValueError(f"{name} must be non-negative (labels, state ids), got minimum {arr.min()}.")
        self.rule = check_choice("rule", rule, BUFFER_RULES)
        self._update = MEMORY_RULES[self.rule]
        self.x, self.y, self.states = x.copy(), y.copy(), states.copy()
        self._ids = np.tile(np.arange(d, dtype=np.int64), (n, 1))  # arrival id of the sample in each slot
        self._seen = np.full(n, d, dtype=np.int64)                  # samples offered so far (= next id)

    @property
    def n_clients(self) -> int:
        return int(self.x.shape[0])

    @property
    def capacity(self) -> int:
        return int(self.x.shape[1])

    @property
    def seen(self) -> np.ndarray:
        """Number of samples offered to each buffer so far (the initial D included), shape (N,)."""
        return self._seen.copy()

    def copy(self) -> "BufferBank":
        out = copy.copy(self)
        out.x, out.y, out.states = self.x.copy(), self.y.copy(), self.states.copy()
        out._ids, out._seen = self._ids.copy(), self._seen.copy()
        return out

    def replace(self, client: int, x_new, y_new, state: int, rng=None) -> int:
        """Offer fresh samples of ``state`` to client ``client``'s buffer; return how many were stored.

        ``rng`` (Generator, int or None) drives the random rules (``random``: which samples are evicted;
        ``reservoir``: which fresh samples are admitted).
        """
        k = check_int("client", client, low=0, high=self.n_clients - 1)
        x_new = np.asarray(x_new, dtype=np.float32)
        y_new = np.asarray(y_new, dtype=np.int64)
        if len(y_new) != len(x_new) or x_new.shape[1:] != self.x.shape[2:]:
            raise ValueError(f"x_new must have shape (b, {self.x.shape[2:]}) and y_new (b,), got {x_new.shape} and "
                             f"{y_new.shape}.")
        return self._replace(k, x_new, y_new, int(state), as_numpy_rng(rng))

    def _replace(self, k: int, x_new: np.ndarray, y_new: np.ndarray, state: int, rng: np.random.Generator) -> int:
        b = len(x_new)
        if b == 0 or self.rule == "keep":
            self._seen[k] += b
            return 0
        first = int(self._seen[k])
        ids = np.arange(first, first + b, dtype=np.int64)
        old = np.sort(self._ids[k])
        kept = self._update(old, ids, self.capacity, first, rng)
        self._seen[k] += b
        new_kept = kept[kept >= first]
        if len(new_kept) == 0:
            return 0
        ids_k = self._ids[k]
        at = np.minimum(np.searchsorted(kept, ids_k), len(kept) - 1)
        slots = np.flatnonzero(kept[at] != ids_k)  # slots whose sample was evicted
        pos = new_kept - first
        self.x[k, slots], self.y[k, slots] = x_new[pos], y_new[pos]
        self.states[k, slots] = state
        self._ids[k, slots] = new_kept
        return int(len(new_kept))

    def client_data(self, clients: Sequence[int] | None = None) -> ClientData:
        """The buffers of ``clients`` (default: all) as a :class:`ClientData` (every client has D samples)."""
        idx = np.arange(self.n_clients) if clients is None else np.asarray(clients, dtype=np.int64)
        return ClientData(torch.from_numpy(self.x[idx]), torch.from_numpy(self.y[idx]),
                          torch.full((len(idx),), self.capacity, dtype=torch.long))

    def composition(self, n_states: int) -> np.ndarray:
        """Fraction of each buffer coming from each state, shape (N, n_states)."""
        n_states = check_int("n_states", n_states, low=int(self.states.max()) + 1)
        out = np.zeros((self.n_clients, n_states))
        for k in range(self.n_clients):
            out[k] = np.bincount(self.states[k], minlength=n_states) / self.capacity
        return out


# ------------------------------------------------------------------------------------ oracles

def perturb_oracle(pi, eps: float, rng=None, *, noise=None) -> np.ndarray:
    r"""The paper's noisy oracle (§6.3): :math:`\hat\pi\propto\max(0, \pi + u)`,
    :math:`u\sim\mathcal U[-\varepsilon,\varepsilon]^M`.

    Rows whose perturbation is all non-positive fall back to :math:`\pi`. ``noise`` (same shape as ``pi``, values in
    [-1, 1]) replaces the random draw, scaled by ``eps`` (so a fixed oracle error pattern can be reused).

    Parameters
    ----------
    pi : array-like (M,) or (N, M)
    eps : float >= 0
    rng : numpy Generator, int or None
    noise : array-like, optional

    Returns
    -------
    ndarray, same shape as ``pi``, rows summing to 1.
    """
    pi = check_array("pi", pi, nonnegative=True)
    if pi.ndim not in (1, 2):
        raise ValueError(f"pi must have shape (M,) or (N, M), got {pi.shape}.")
    _as_dist_matrix("pi", np.atleast_2d(pi))
    eps = check_real("eps", eps, low=0)
    if noise is None:
        noise = as_numpy_rng(rng).uniform(-1.0, 1.0, size=pi.shape)
    else:
        noise = check_array("noise", noise, shape=pi.shape)
        if np.any(np.abs(noise) > 1):
            raise ValueError("noise must lie in [-1, 1] (it is scaled by eps).")
    out = np.maximum(pi + eps * noise, 0.0)
    total = out.sum(-1, keepdims=True)
    return np.where(total > 0, out / np.where(total > 0, total, 1.0), pi)


def bayes_oracle(counts, alpha0=1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Dirichlet-posterior oracle (paper App. C.1): mean and variance of :math:`\pi_n` given state counts.

    With prior :math:`\mathrm{Dir}(\alpha_0)` and counts :math:`c_t`, the posterior is
    :math:`\mathrm{Dir}(\alpha_0 + c_t)`, its mean :math:`\hat\pi_m = (\alpha_0^m + c^m_t)/S_t` and variance
    :math:`(\alpha_0^m + c_t^m)(S_t - \alpha_0^m - c_t^m)/(S_t^2(S_t+1))`, :math:`S_t = \sum_j\alpha_0^j + t`
    (at most :math:`1/(4(S_t+1))`, decaying as :math:`O(1/t)`).

    Parameters
    ----------
    counts : array-like (M,) or (N, M)
        Observed state counts :math:`c_t \ge 0`.
    alpha0 : float or array-like (M,)
        Prior concentrations, positive.

    Returns
    -------
    mean, var : ndarrays shaped like ``counts``
    """
    counts = check_array("counts", counts, nonnegative=True)
    if counts.ndim not in (1, 2) or counts.size == 0:
        raise ValueError(f"counts must have shape (M,) or (N, M), got {counts.shape}.")
    a0 = check_array("alpha0", alpha0)
    if a0.ndim > 1 or (a0.ndim == 1 and a0.shape != (counts.shape[-1],)) or np.any(a0 <= 0):
        raise ValueError(f"alpha0 must be a positive number or {counts.shape[-1]} positive numbers, got {alpha0!r}.")
    a = a0 + counts
    s = a.sum(-1, keepdims=True)
    return a / s, a * (s - a) / (s ** 2 * (s + 1))


def oracle_error(pi, pi_hat) -> np.ndarray:
    r"""Prediction errors :math:`\delta_n = \|\hat\pi_n - \pi_n\|_1` (Theorem 2): shape (N,), a float for 1-D input."""
    pi = check_simplex("pi", pi, ndim=(1, 2))
    pi_hat = check_simplex("pi_hat", pi_hat, shape=pi.shape)
    out = np.abs(pi_hat - pi).sum(-1)
    return float(out) if np.ndim(out) == 0 else out


def _oracle_exact(data: "TemporalShiftDataset", round_: int, oracle: "PredictionOracle") -> np.ndarray:
    return data.round_distribution(round_)


def _oracle_stationary(data: "TemporalShiftDataset", round_: int, oracle: "PredictionOracle") -> np.ndarray:
    return data.pi.copy()


def _oracle_bayes(data: "TemporalShiftDataset", round_: int, oracle: "PredictionOracle") -> np.ndarray:
    return bayes_oracle(data.state_counts(round_), oracle.prior)[0]


#: Base forecasts of :class:`PredictionOracle`: the round's true state distribution, the long-run one, or the
#: Dirichlet posterior mean of the states observed before the round.
ORACLES: dict[str, Callable] = {"exact": _oracle_exact, "stationary": _oracle_stationary, "bayes": _oracle_bayes}


@dataclass(frozen=True)
class PredictionOracle:
    r"""Forecast :math:`\hat\pi_n^{(r)}` of each client's state distribution in round r, with a controllable error.

    Parameters
    ----------
    kind : {"exact", "stationary", "bayes"}
        Base forecast (:data:`ORACLES`). ``"exact"`` is the perfect oracle.
    eps : float >= 0
        Perturbation level of :func:`perturb_oracle` added on top (the paper's Table 3 uses "exact" + eps).
    prior : float
        Dirichlet prior concentration of ``"bayes"``.
    redraw : bool
        Draw new noise every round (True) or one fixed noise pattern per run (False, default: a biased oracle).
    """

    kind: str = "exact"
    eps: float = 0.0
    prior: float = 1.0
    redraw: bool = False

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, ORACLES)
        check_real("eps", self.eps, low=0)
        check_real("prior", self.prior, low=0, low_open=True)
        check_bool("redraw", self.redraw)

    def predict(self, data: "TemporalShiftDataset", round_: int, seed: int = 0) -> np.ndarray:
        """:math:`\\hat\\pi^{(r)}`, shape (N, M), for round ``round_`` (0-based) of ``data``."""
        if not isinstance(data, TemporalShiftDataset):
            raise TypeError(f"data must be a TemporalShiftDataset, got {type(data).__name__}.")
        round_ = check_int("round_", round_, low=0, high=data.n_rounds - 1)
        check_int("seed", seed, low=0)
        base = ORACLES[self.kind](data, round_, self)
        if self.eps == 0:
            return base
        rng = numpy_rng(seed, Stream.SFEDPO_ORACLE, round_ if self.redraw else 0)
        return perturb_oracle(base, self.eps, noise=rng.uniform(-1.0, 1.0, size=base.shape))


# ------------------------------------------------------------------------------------ the data set

@dataclass(frozen=True, eq=False)
class TemporalShiftDataset(FederatedDataset):
    r"""N clients whose data follow a Markov chain over latent states, with limited buffers.

    ``train`` holds the initial buffers (D samples of each client's initial state), ``test`` per-client test
    samples of :math:`\sum_m\pi_{n,m}\mathcal D_m`, ``state_test`` one row of test samples per state (the global
    objective (3) is the :math:`w`-weighted mean over its rows). Fresh samples are drawn on demand
    (:meth:`fresh`) from ``(seed, round, step)``, so every method sees the same stream.

    Attributes
    ----------
    space : StateSpace
    pi : ndarray (N, M)
        Long-run state distributions :math:`\pi_n`.
    q : ndarray (N,)
        Availability probabilities :math:`q_n`.
    w : ndarray (M,)
        Importance :math:`w_m` of the states in the global objective.
    d : ndarray (M,)
        Heterogeneity proxies :math:`d_m`.
    speed : float
        Shift speed :math:`\kappa` of the lazy chain.
    states : ndarray (N, R T + 1) of int
        State trajectories; round r uses steps ``r T + 1 .. r T + T`` and starts in ``states[:, r T]``.
    n_steps : int
        T, time steps per round.
    state_test : ClientData
        M rows of test samples, one per state.
    seed : int
        Seed of the fresh-sample stream.
    """

    space: StateSpace | None = None
    pi: np.ndarray | None = None
    q: np.ndarray | None = None
    w: np.ndarray | None = None
    d: np.ndarray | None = None
    speed: float = 1.0
    states: np.ndarray | None = None
    n_steps: int = 1
    state_test: ClientData | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.space is None or self.pi is None or self.states is None or self.state_test is None:
            raise ValueError("TemporalShiftDataset needs space, pi, states and state_test.")
        check_type("space", self.space, StateSpace)
        check_type("state_test", self.state_test, ClientData)
        check_int("seed", self.seed, low=0)
        n, m = self.n_clients, self.space.n_states
        object.__setattr__(self, "pi", _as_dist_matrix("pi", self.pi, m))
        if self.pi.shape[0] != n:
            raise ValueError(f"pi must have one row per client ({n}), got {self.pi.shape[0]}.")
        q = np.full(n, 1.0) if self.q is None else check_array("q", self.q, shape=(n,))
        if np.any(q <= 0) or np.any(q > 1):
            raise ValueError("q must lie in (0, 1].")
        w = np.full(m, 1.0 / m) if self.w is None else check_array("w", self.w, shape=(m,), nonnegative=True)
        if abs(w.sum() - 1) > 1e-6:
            raise ValueError(f"w must sum to 1, got {w.sum():.6g}.")
        d = self.space.discrepancy() if self.d is None else check_array("d", self.d, shape=(m,), nonnegative=True)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "d", d)
        check_real("speed", self.speed, low=0, high=1)
        check_int("n_steps", self.n_steps, low=1)
        st = check_array("states", self.states, ndim=2, dtype=np.int64)
        if st.shape[0] != n or (st.shape[1] - 1) % self.n_steps or st.shape[1] < self.n_steps + 1:
            raise ValueError(f"states must have shape ({n}, R*{self.n_steps} + 1), got {st.shape}.")
        if st.min() < 0 or st.max() >= m:
            raise ValueError(f"states must lie in [0, {m}).")
        object.__setattr__(self, "states", st)
        if self.state_test.n_clients != m:
            raise ValueError(f"state_test must have one row per state ({m}), got {self.state_test.n_clients}.")
        if self.state_test.feature_shape != self.train.feature_shape:
            raise ValueError(f"state_test must have samples of shape {self.train.feature_shape} (as train), got "
                             f"{self.state_test.feature_shape}.")

    @property
    def n_states(self) -> int:
        return self.space.n_states

    @property
    def n_rounds(self) -> int:
        """Horizon R (rounds covered by the state trajectories)."""
        return (self.states.shape[1] - 1) // self.n_steps

    @property
    def capacity(self) -> int:
        """Buffer size D."""
        return int(self.train.x.shape[1])

    def _round(self, round_: int) -> int:
        return check_int("round_", round_, low=0, high=self.n_rounds - 1)

    def start_states(self, round_: int) -> np.ndarray:
        """State of every client at the start of round ``round_`` (0-based), shape (N,)."""
        return self.states[:, self._round(round_) * self.n_steps]

    def step_states(self, round_: int) -> np.ndarray:
        """States at the T steps of round ``round_``, shape (N, T)."""
        r = self._round(round_)
        return self.states[:, r * self.n_steps + 1: (r + 1) * self.n_steps + 1]

    def round_distribution(self, round_: int) -> np.ndarray:
        r"""The true :math:`\pi^{(r)}_n` (:func:`round_state_distribution`), shape (N, M)."""
        return round_state_distribution(self.pi, self.speed, self.start_states(round_), self.n_steps)

    def state_counts(self, round_: int) -> np.ndarray:
        """Counts of the states each client visited before round ``round_`` (steps ``0 .. r T``), shape (N, M)."""
        r = self._round(round_)
        seen = self.states[:, : r * self.n_steps + 1]
        out = np.zeros((self.n_clients, self.n_states))
        for m in range(self.n_states):
            out[:, m] = (seen == m).sum(1)
        return out

    def fresh(self, round_: int, step: int, sizes) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Fresh samples of every client at step ``step`` (1..T) of round ``round_``: ``sizes[n]`` samples each.

        Returns one ``(x, y, state)`` per client (``x`` float32 (k, dim), ``y`` int64 (k,), the client's state at
        that step; ``None`` where ``sizes[n] = 0``). The draws depend only on ``(seed, round, step, client)``, and the
        first k samples do not depend on ``sizes`` (up to the capacity D): methods that refresh different amounts see
        the same stream.
        """
        step = check_int("step", step, low=1, high=self.n_steps)
        sizes = check_array("sizes", sizes, shape=(self.n_clients,), nonnegative=True, dtype=np.int64)
        round_ = self._round(round_)
        states = self.step_states(round_)[:, step - 1]
        cdf = np.cumsum(self.space.class_dist, axis=1)
        out = []
        for n, k in enumerate(sizes):
            if k == 0:
                out.append(None)
                continue
            m = int(states[n])
            rng = numpy_rng(self.seed, Stream.SFEDPO_FRESH, round_, step, n)
            u = rng.random(max(self.capacity, int(k)))[:k]  # a fixed-length draw first: later draws do not depend on k
            y = np.minimum(np.searchsorted(cdf[m], u, side="right"), self.space.n_classes - 1)
            out.append((self.features(y, m, rng), y.astype(np.int64), m))
        return out

    def features(self, y: np.ndarray, state: int, rng: np.random.Generator) -> np.ndarray:
        """Features of fresh samples with labels ``y`` in ``state``, drawn with ``rng`` (float32, (len(y), dim)):
        the class mean, the state's shift and Gaussian noise. Environments on real data override it."""
        space = self.space
        x = space.means[y] + space.shifts[state] + space.noise * rng.standard_normal((len(y), space.dim))
        return x.astype(np.float32)

    def initial_bank(self, rule: str = "random") -> BufferBank:
        """The initial buffers (``train``) as a :class:`BufferBank` with update rule ``rule``."""
        st = np.repeat(self.states[:, :1], self.capacity, axis=1)
        return BufferBank(self.train.x.numpy(), self.train.y.numpy(), st, rule)


def make_temporal_shift(n_clients: int = 20, n_states: int = 12, n_classes: int = 5, dim: int = 10, *,
                        scenario: str = "full", speed: float = 1.0, n_rounds: int = 60, n_steps: int = 5,
                        capacity: int = 200, concentrations: Sequence[float] = (0.05, 0.1, 0.5, 100.0),
                        sep: float = 1.0, feature_shift: float = 0.0, noise: float = 1.0,
                        pi_concentration: float = 1.0, states_per_client: int = 3, heavy_fraction: float = 0.5,
                        q_mean: float = 0.3, q_std: float = 0.05, discrepancy: str = "kl", w=None,
                        test_per_client: int = 100, test_per_state: int = 200, seed: int = 0) -> TemporalShiftDataset:
    r"""The synthetic temporal-shift environment of spec §B.9 as a :class:`TemporalShiftDataset`.

    States: :func:`make_state_space`; long-run distributions: :func:`make_state_distributions`
    (``scenario``); availability :math:`q_n\sim\mathcal N(q_{mean}, q_{std}^2)` clipped to [0.01, 1]; states: the
    lazy chain of speed :math:`\kappa` = ``speed`` (:func:`simulate_states`); initial buffers: ``capacity``
    samples of each client's initial state; :math:`w` uniform unless given; :math:`d_m` = normalised
    ``discrepancy`` to the uniform class distribution.

    Returns
    -------
    TemporalShiftDataset
    """
    seed = check_int("seed", seed, low=0)
    check_real("pi_concentration", pi_concentration, low=0, low_open=True)
    check_real("q_mean", q_mean, low=0, high=1, low_open=True)
    check_real("q_std", q_std, low=0)
    n_rounds = check_int("n_rounds", n_rounds, low=1)
    n_steps = check_int("n_steps", n_steps, low=1)
    capacity = check_int("capacity", capacity, low=1)
    test_per_client = check_int("test_per_client", test_per_client, low=1)
    test_per_state = check_int("test_per_state", test_per_state, low=1)
    space = make_state_space(n_states, n_classes, dim, concentrations=concentrations, sep=sep,
                             feature_shift=feature_shift, noise=noise, rng=numpy_rng(seed, Stream.SFEDPO_STATE_SPACE))
    pi = make_state_distributions(n_clients, n_states, scenario, cluster=space.cluster,
                                  concentration=pi_concentration, states_per_client=states_per_client,
                                  heavy_fraction=heavy_fraction, rng=numpy_rng(seed, Stream.SFEDPO_STATE_LAWS))
    q = availability_probabilities(n_clients, q_mean, q_std, rng=numpy_rng(seed, Stream.SFEDPO_AVAILABILITY))
    states = simulate_states(pi, n_rounds * n_steps, speed=speed, rng=numpy_rng(seed, 3))
    xs, ys, txs, tys = [], [], [], []
    for k in range(n_clients):
        x, y = space.sample(int(states[k, 0]), capacity, numpy_rng(seed, 4, k))
        tx, ty, _ = space.sample_mixture(pi[k], test_per_client, numpy_rng(seed, 5, k))
        xs.append(x), ys.append(y), txs.append(tx), tys.append(ty)
    sx, sy = zip(*(space.sample(m, test_per_state, numpy_rng(seed, 6, m)) for m in range(n_states)))
    d = space.discrepancy(check_choice("discrepancy", discrepancy, DISCREPANCIES))
    return TemporalShiftDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(txs, tys), n_classes,
                                space=space, pi=pi, q=q, w=w, d=d, speed=speed, states=states, n_steps=n_steps,
                                state_test=ClientData.from_arrays(list(sx), list(sy)), seed=seed)
