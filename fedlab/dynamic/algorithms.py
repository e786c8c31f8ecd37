r"""Dynamic Federated Averaging (Rizk, Vlaski, Sayed; Algorithm 1) under a drifting minimiser.

Algorithm 1: at iteration i the server samples L of the K agents without replacement; each sampled agent starts
from :math:`w_{i-1}` and runs :math:`E_k` epochs of minibatch SGD (minibatch :math:`B_k`) with the *normalised*
step :math:`\mu/E_k`, incrementally (eq. (11): gradients at the latest local iterate); the server averages
:math:`w_i = \frac1L\sum_{\ell\in\mathcal L_i} w_{\ell,E_\ell}` (eq. (12)). The :math:`\mu/E_k` normalisation
keeps agents with many epochs from biasing the limit point towards their own minimisers.

Two implementations:

* :func:`dynamic_fedavg` — a **vectorised numpy simulation** on the drifting least-squares problem of
  :mod:`fedlab.dynamic.data` (what notebook 08 uses). For squared loss an epoch is an affine map
  :math:`w\mapsto(I-\alpha\hat H)w + \alpha\hat g`, so the E_k epochs of every sampled agent compose into one
  affine map computed in bulk for a chunk of iterations and for R runs at once (several step sizes, drift and
  offset variances sharing the same random draws); only the server recursion is a Python loop. Samples are fresh
  (:math:`N_k = \infty`) and the minimiser follows the random walk (17).
* :class:`DynamicFedAvg` — the same algorithm for any ``fedlab`` model on a static ``FederatedDataset``, written
  on the engine (``local_sgd`` with ``LocalSGD(lr=mu/E_k, local_steps=E_k, batch_size=B_k)`` per group of agents
  with equal budgets). The engine draws minibatches with replacement (the paper: without); with equal budgets it
  is FedAvg with uniform weights.

Also here: the closed-form full-gradient fixed point (normalisation bias, spec C.7) and the scalar noisy-gradient
tracking recursion behind the bound of spec C.4.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.signal import lfilter

from fedlab._rng import Stream, as_numpy_rng, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real
from fedlab.dynamic.data import DriftingLeastSquares
from fedlab.engine import DivergenceError, FederatedDataset, LocalSGD, broadcast, local_sgd, weighted_average
from fedlab.models import Model
from fedlab.algorithms._common import (ServerState, check_solver, evaluate_global, initial_params)
from fedlab.algorithms import METHODS

__all__ = [
    "DynamicRun",
    "draw_budgets",
    "dynamic_fedavg",
    "dynamic_fedavg_fixed_point",
    "noisy_gradient_tracking",
    "DynamicFedAvg",
]


def _check_budget(name: str, value, n_agents: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = np.full(n_agents, arr)
    if arr.shape != (n_agents,) or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
        raise ValueError(f"{name} must be a positive integer or one positive integer per agent ({n_agents},), "
                         f"got {value!r}.")
    return arr.astype(int)


def _check_active(n_active, n_agents: int) -> int:
    if isinstance(n_active, bool) or not isinstance(n_active, (int, np.integer)):
        raise TypeError(f"n_active (agents per round L) must be an integer, got {n_active!r}.")
    if not 1 <= n_active <= n_agents:
        raise ValueError(f"n_active (agents per round L) must lie in [1, K] = [1, {n_agents}], got {n_active}.")
    return int(n_active)


def draw_budgets(n_agents: int, *, local_steps_range=(1, 10), batch_range=(10, 20), rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Heterogeneous agent budgets: :math:`E_k\\sim U\\{a..b\\}` epochs and :math:`B_k\\sim U\\{a..b\\}` minibatch sizes
    (the paper's ranges [1, 10] and [10, 20]). Returns ``(local_steps, batch)``, each (K,) int."""
    k = check_int("n_agents", n_agents, low=1)
    e_lo, e_hi = (check_int("local_steps_range", x, low=1) for x in local_steps_range)
    b_lo, b_hi = (check_int("batch_range", x, low=1) for x in batch_range)
    if e_lo > e_hi or b_lo > b_hi:
        raise ValueError(f"ranges must be (low, high) with low <= high, got {local_steps_range}, {batch_range}.")
    rng = as_numpy_rng(rng)
    return rng.integers(e_lo, e_hi + 1, size=k), rng.integers(b_lo, b_hi + 1, size=k)


@dataclass(frozen=True)
class DynamicRun:
    r"""Result of :func:`dynamic_fedavg` for R runs.

    Attributes
    ----------
    msd : array (R, T+1)
        :math:`\|w^o_i - w_i\|^2`, i = 0..T.
    lr, drift_var, offset_var : arrays (R,)
        The run's :math:`\mu`, :math:`\sigma_q^2`, :math:`\sigma_c^2`.
    w : array (R, d)
        Final iterates.
    w_opt : array (R, d)
        Final minimisers :math:`w^o_T`.
    """

    msd: np.ndarray
    lr: np.ndarray
    drift_var: np.ndarray
    offset_var: np.ndarray
    w: np.ndarray
    w_opt: np.ndarray

    def steady_state(self, tail: int) -> np.ndarray:
        """Mean MSD over the last ``tail`` iterations, per run (R,)."""
        tail = check_int("tail", tail, low=1, high=self.msd.shape[1])
        return self.msd[:, -tail:].mean(1)

    def msd_db(self) -> np.ndarray:
        """:math:`10\\log_{10}` MSD, (R, T+1)."""
        return 10 * np.log10(np.maximum(self.msd, 1e-300))


def _rows(lr, drift_var, offset_var):
    arrs = []
    for name, val, low_open in (("lr", lr, True), ("drift_var", drift_var, False), ("offset_var", offset_var, False)):
        a = check_array(name, val)
        if a.ndim > 1:
            raise ValueError(f"{name} must be a scalar or 1-D, got shape {a.shape}.")
        if np.any(a <= 0) if low_open else np.any(a < 0):
            what = "step sizes must be > 0" if name == "lr" else "variances must be >= 0"
            raise ValueError(f"{name}: {what}, got {a}.")
        arrs.append(np.atleast_1d(a))
    try:
        out = np.broadcast_arrays(*arrs)
    except ValueError as err:
        raise ValueError("lr, drift_var and offset_var must be scalars or 1-D arrays of the same length.") from err
    return [a.astype(float).copy() for a in out]


def _chunk_draws(rng: np.random.Generator, c: int, problem: DriftingLeastSquares, n_l: int, e_k: np.ndarray,
                 b_k: np.ndarray, full_gradient: bool):
    """Random draws of ``c`` iterations: sampled agents (C, L), minibatch Hessians H (C, L, E, d, d), noise terms
    g = (1/B) sum_b h_b xi_b (C, L, E, d) (times sigma_n) and standard-normal drift steps (C, d).

    A minibatch gradient of agent k at w is then ``H (w - w*_k) - g``. Epochs e >= E_k are drawn but unused.
    """
    big_k, d = problem.n_agents, problem.dim
    e_max, b_max = int(e_k.max()), int(b_k.max())
    agents = np.argsort(rng.random((c, big_k)), axis=1)[:, :n_l]                # (C, L) without replacement
    ba, va = b_k[agents], problem.feature_var[agents]
    if full_gradient:
        h_hat = va[..., None, None, None] * np.eye(d) * np.ones((1, 1, e_max, 1, 1))
        g_noise = np.zeros((c, n_l, e_max, d))
    else:
        h = rng.standard_normal((c, n_l, e_max, b_max, d)) * np.sqrt(va)[..., None, None, None]
        noise = rng.standard_normal((c, n_l, e_max, b_max))
        bmask = (np.arange(b_max) < ba[..., None])[:, :, None, :]                # (C, L, 1, B)
        hm = h * (bmask / ba[..., None, None])[..., None]                        # masked, divided by B_k
        h_hat = np.einsum("clebi,clebj->cleij", hm, h)
        g_noise = problem.noise_std * np.einsum("clebi,cleb->clei", hm, noise)
    steps = rng.standard_normal((c, d))
    return agents, h_hat, g_noise, steps


def dynamic_fedavg(problem: DriftingLeastSquares, *, lr, n_iters: int, n_active: int, local_steps=1, batch=10,
                   drift_var=None, offset_var=None, normalize: bool = True, incremental: bool = True,
                   full_gradient: bool = False, w_init=None, seed: int = 0, chunk: int = 256) -> DynamicRun:
    r"""Simulate Dynamic FedAvg (Algorithm 1) on a drifting least-squares problem, R runs at once.

    Iteration i uses data generated at the current model :math:`w^\star_{i-1}`, then the model drifts
    (:math:`w^\star_i = w^\star_{i-1} + q_i`) and the MSD is :math:`\|w^o_i - w_i\|^2` — the convention of the
    error recursion (19) and of spec C.4 (:math:`\nabla P(w^o_{i-1}) = 0`). All runs share the random draws
    (agents, features, label noise, standardised drift steps): differences between runs come only from
    :math:`\mu`, :math:`\sigma_q^2`, :math:`\sigma_c^2` (common random numbers).

    Parameters
    ----------
    problem : DriftingLeastSquares
    lr : float or array (R,)
        Step size :math:`\mu > 0`.
    n_iters : int
        Iterations T.
    n_active : int in [1, K]
        Agents per iteration L (sampled without replacement).
    local_steps, batch : int or int array (K,)
        Epochs :math:`E_k` and minibatch sizes :math:`B_k`.
    drift_var, offset_var : float or array (R,), optional
        :math:`\sigma_q^2` and :math:`\sigma_c^2` per run (default: the problem's).
    normalize : bool
        Step :math:`\mu/E_k` (Algorithm 1) or :math:`\mu` (plain FedAvg, biased when the :math:`E_k` differ).
    incremental : bool
        Eq. (11) (gradients at the latest local iterate) or eq. (9) (all at :math:`w_{i-1}`).
    full_gradient : bool
        Use :math:`\nabla P_k` exactly (no sampling noise), as in the normalisation-bias demo.
    w_init : array (d,), "zeros" or "optimum", optional
        :math:`w_0`: zeros (default), a given point, or the run's initial minimiser :math:`w^o_0` (no transient:
        the MSD starts at 0 and builds up to its steady state in :math:`\approx 1/(2\mu\nu)` iterations).
    seed : int
    chunk : int
        Iterations whose random draws are made in one block (memory vs speed).

    Returns
    -------
    DynamicRun
    """
    if not isinstance(problem, DriftingLeastSquares):
        raise TypeError(f"problem must be a DriftingLeastSquares, got {type(problem).__name__}.")
    big_k, d = problem.n_agents, problem.dim
    t_total = check_int("n_iters", n_iters, low=1)
    n_l = _check_active(n_active, big_k)
    e_k = _check_budget("local_steps", local_steps, big_k)
    b_k = _check_budget("batch", batch, big_k)
    chunk = check_int("chunk", chunk, low=1)
    check_int("seed", seed)
    lr, sq, sc = _rows(lr, problem.drift_var if drift_var is None else drift_var,
                       problem.offset_var if offset_var is None else offset_var)
    n_rows = lr.size
    z = problem.offset_dirs
    zbar = problem.feature_var @ z / problem.feature_var.sum()
    c_scale = np.sqrt(sc / d)                                                    # (R,)
    if isinstance(w_init, str):
        check_choice("w_init", w_init, ("zeros", "optimum"))
        w = (np.zeros((n_rows, d)) if w_init == "zeros"
             else problem.w_start + c_scale[:, None] * zbar)                     # start at w^o_0 (no transient)
    else:
        w = np.zeros((n_rows, d)) if w_init is None else np.tile(check_array("w_init", w_init, shape=(d,)), (n_rows, 1))
    q_scale = np.sqrt(sq / d)
    w_star = np.tile(problem.w_start, (n_rows, 1))                               # common model w*_{i}, per run
    msd = np.empty((n_rows, t_total + 1))
    msd[:, 0] = np.sum((w_star + c_scale[:, None] * zbar - w) ** 2, -1)
    lr_u, inv = np.unique(lr, return_inverse=True)                              # distinct step sizes
    n_u = lr_u.size
    rng = numpy_rng(seed, Stream.SAMPLING)
    e_max = int(e_k.max())
    eye = np.eye(d)
    done = 0
    while done < t_total:
        c = min(chunk, t_total - done)
        agents, h_hat, g_noise, steps = _chunk_draws(rng, c, problem, n_l, e_k, b_k, full_gradient)
        ea = e_k[agents]
        walk = np.concatenate([np.zeros((1, d)), np.cumsum(steps, axis=0)])     # (C+1, d) standardised walk
        start_model = w_star[:, None, :] + q_scale[:, None, None] * walk[None, :-1]  # (R, C, d)
        # Epochs act on delta = w - w*_k as delta -> (I - alpha H_e) delta + alpha sigma_n g_e, so an agent's E_k
        # epochs compose to w_k = w*_k + A (w - w*_k) + n with (A, n) depending on mu only (not on the drift or
        # the offsets): compose them once per distinct step size, then b_r = (I - A) w*_k + n per run.
        alpha = lr_u[:, None, None] / (ea[None] if normalize else 1.0)         # (U, C, L)
        emask = (np.arange(e_max)[None, None, :] < ea[..., None])              # (C, L, E)
        if incremental:
            a_mat = np.broadcast_to(eye, (n_u, c, n_l, d, d)).copy()
            n_vec = np.zeros((n_u, c, n_l, d))
            for e in range(e_max):
                al = alpha * emask[None, :, :, e]                               # (U, C, L)
                m_e = eye - al[..., None, None] * h_hat[None, :, :, e]
                a_mat = m_e @ a_mat
                n_vec = np.einsum("uclij,uclj->ucli", m_e, n_vec) + al[..., None] * g_noise[None, :, :, e]
        else:
            em = emask[None, ..., None]
            a_mat = eye - alpha[..., None, None] * np.sum(h_hat[None] * em[..., None], axis=3)
            n_vec = alpha[..., None] * np.sum(g_noise[None] * em, axis=3)
        a_bar = a_mat.mean(2)                                                   # (U, C, d, d)
        z_bar_u = z[agents][None] - np.einsum("uclij,clj->ucli", a_mat, z[agents])
        b_bar_u = z_bar_u.mean(2)                                               # mean_L (I - A) z_k: (U, C, d)
        n_bar = n_vec.mean(2)
        a_r = a_bar[inv]                                                        # (R, C, d, d)
        b_bar = (start_model - np.einsum("rcij,rcj->rci", a_r, start_model)
                 + c_scale[:, None, None] * b_bar_u[inv] + n_bar[inv])
        a_bar = a_r
        opt = w_star[:, None, :] + q_scale[:, None, None] * walk[None, 1:] + c_scale[:, None, None] * zbar
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(c):
                w = np.einsum("rij,rj->ri", a_bar[:, i], w) + b_bar[:, i]
                msd[:, done + i + 1] = np.sum((opt[:, i] - w) ** 2, -1)
        if not np.all(np.isfinite(msd[:, done + c])):
            bad = lr[~np.isfinite(msd[:, done + c])]
            raise DivergenceError(f"Dynamic FedAvg diverged for step sizes {np.unique(bad)[:5]}; use a smaller lr.")
        w_star = w_star + q_scale[:, None] * walk[-1]
        done += c
    return DynamicRun(msd, lr, sq, sc, w, w_star + c_scale[:, None] * zbar)


def dynamic_fedavg_fixed_point(problem: DriftingLeastSquares, lr: float, local_steps, *, normalize: bool = True,
                               w_star=None) -> np.ndarray:
    r"""Limit of Algorithm 1 with full gradients and full participation (L = K), in closed form.

    With :math:`\nabla P_k(w) = v_k(w - w^\star_k)`, agent k returns :math:`w^\star_k + \rho_k(w - w^\star_k)`,
    :math:`\rho_k = (1-\alpha_kv_k)^{E_k}`, :math:`\alpha_k = \mu/E_k` (normalised) or :math:`\mu`, so the server's
    fixed point is :math:`w_\infty = \sum_k(1-\rho_k)w^\star_k/\sum_k(1-\rho_k)`. Normalised steps give
    :math:`1-\rho_k = \mu v_k + O(\mu^2)` (bias O(μ) from :math:`w^o`); plain steps give weights
    :math:`\approx E_k v_k`, an O(1) bias towards agents with many epochs (spec C.7, checkable fact C7).

    Parameters
    ----------
    problem : DriftingLeastSquares
    lr : float > 0
    local_steps : int or int array (K,)
    normalize : bool
    w_star : array (d,), optional
        Common model (default ``problem.w_start``).
    """
    if not isinstance(problem, DriftingLeastSquares):
        raise TypeError(f"problem must be a DriftingLeastSquares, got {type(problem).__name__}.")
    mu = check_real("lr", lr, low=0, low_open=True)
    e_k = _check_budget("local_steps", local_steps, problem.n_agents)
    w_star = problem.w_start if w_star is None else check_array("w_star", w_star, shape=(problem.dim,))
    alpha = mu / e_k if normalize else np.full(e_k.shape, mu)
    rho = (1.0 - alpha * problem.feature_var) ** e_k
    if abs(rho.mean()) >= 1:
        raise ValueError(f"lr = {mu} is too large: the full-gradient iteration does not converge (mean rho = {rho.mean():.3g}).")
    weights = 1.0 - rho
    return weights @ problem.agent_optima(w_star) / weights.sum()


def noisy_gradient_tracking(lr: float, strong_nu: float, sigma_s2: float, sigma_q2: float, *, n_iters: int,
                            dim: int = 2, n_runs: int = 1, rng=None) -> np.ndarray:
    r"""The scalar-curvature tracking recursion behind the bound of spec C.4.

    .. math:: e_i = (1-\mu\nu)e_{i-1} + \mu s_i + q_i,\quad s_i\sim\mathcal N(0,\tfrac{\sigma_s^2}dI),\;
              q_i\sim\mathcal N(0,\tfrac{\sigma_q^2}dI),\; e_0 = 0,

    whose exact steady state is :math:`(\mu^2\sigma_s^2+\sigma_q^2)/(1-(1-\mu\nu)^2)`
    (:func:`fedlab.dynamic.bounds.scalar_quadratic_msd`). Vectorised as a linear filter over time.

    Returns
    -------
    array (n_runs, n_iters + 1)
        :math:`\|e_i\|^2`.
    """
    mu = check_real("lr", lr, low=0, low_open=True)
    nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
    s2 = check_real("sigma_s2", sigma_s2, low=0)
    q2 = check_real("sigma_q2", sigma_q2, low=0)
    t = check_int("n_iters", n_iters, low=1)
    d = check_int("dim", dim, low=1)
    r = check_int("n_runs", n_runs, low=1)
    rng = as_numpy_rng(rng)
    u = (mu * np.sqrt(s2 / d) * rng.standard_normal((r, t, d)) + np.sqrt(q2 / d) * rng.standard_normal((r, t, d)))
    e = lfilter([1.0], [1.0, -(1.0 - mu * nu)], u, axis=1)
    return np.concatenate([np.zeros((r, 1)), np.sum(e ** 2, -1)], axis=1)


class DynamicFedAvg:
    r"""Algorithm 1 on the engine, for any model and a static ``FederatedDataset``.

    Each round samples L of the K clients uniformly without replacement, runs on client k :math:`E_k` SGD steps
    with minibatch :math:`B_k` and step :math:`\mu/E_k` (``normalize=True``) or :math:`\mu`, and averages the L
    returned models with equal weights (eq. (12)). Clients with equal (E, B) are trained in one batched
    ``local_sgd`` call. The constructor follows FedAvg's (``model, solver, **kwargs``), so it fits ``METHODS``.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        ``solver.lr`` is :math:`\mu`; ``solver.local_steps`` and ``solver.batch_size`` are the default budgets; the
        other options (momentum, weight decay, ...) are passed on to every client.
    n_active : int in [1, K], optional
        L. Default: ``max(1, round(participation * K))``.
    participation : float in (0, 1]
        Used when ``n_active`` is None.
    local_steps, batch_size : int or int array (K,), optional
        Per-client budgets :math:`E_k`, :math:`B_k` (default: the solver's).
    normalize : bool
    backend : {"auto", "batched", "loop"}
    """

    def __init__(self, model: Model, solver: LocalSGD, *, n_active: int | None = None, participation: float = 1.0,
                 local_steps=None, batch_size=None, normalize: bool = True, backend: str = "auto") -> None:
        check_solver(solver)
        self.model, self.solver = model, solver
        if n_active is not None and (isinstance(n_active, bool) or not isinstance(n_active, (int, np.integer))
                                     or n_active < 1):
            raise ValueError(f"n_active (agents per round L) must be an integer >= 1, got {n_active!r}.")
        self.n_active = None if n_active is None else int(n_active)
        self.participation = check_real("participation", participation, low=0, high=1, low_open=True)
        self.local_steps = solver.local_steps if local_steps is None else local_steps
        self.batch_size = solver.batch_size if batch_size is None else batch_size
        self.normalize = bool(normalize)
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    def _budgets(self, n_clients: int) -> tuple[int, np.ndarray, np.ndarray]:
        n_l = self.n_active if self.n_active is not None else max(1, int(round(self.participation * n_clients)))
        return (_check_active(n_l, n_clients), _check_budget("local_steps", self.local_steps, n_clients),
                _check_budget("batch_size", self.batch_size, n_clients))

    def init(self, data: FederatedDataset, seed: int) -> ServerState:
        self._budgets(data.n_clients)  # validate early
        return ServerState(initial_params(self.model, seed))

    def round(self, state: ServerState, data: FederatedDataset, seed: int) -> tuple[ServerState, dict]:
        n_l, e_k, b_k = self._budgets(data.n_clients)
        rng = numpy_rng(seed, state.round, Stream.SAMPLING)
        chosen = np.sort(rng.choice(data.n_clients, size=n_l, replace=False))
        groups: dict[tuple[int, int], list[int]] = {}
        for k in chosen.tolist():
            groups.setdefault((int(e_k[k]), int(b_k[k])), []).append(k)
        rows, losses, new_parts = [], [], []
        for (e, b), members in sorted(groups.items()):
            lr = self.solver.lr / e if self.normalize else self.solver.lr
            solver = LocalSGD(**{**self.solver.__dict__, "lr": lr, "local_steps": e, "batch_size": b})
            start = broadcast(state.params, len(members))
            new, loss = local_sgd(self.model, start, data.train, solver, key=(seed, state.round, Stream.LOCAL),
                                  rows=members, anchor=start, backend=self.backend)
            new_parts.append(new)
            rows.extend(members)
            losses.append(loss)
        stacked = {name: torch.cat([p[name] for p in new_parts]) for name in state.params}
        avg = weighted_average(stacked, np.full(len(rows), 1.0 / len(rows)))
        local_loss = float(torch.cat(losses).mean())
        return ServerState(avg, state.round + 1), {"participants": sorted(rows), "local_loss": local_loss}

    def evaluate(self, state: ServerState, data: FederatedDataset) -> dict[str, np.ndarray]:
        return evaluate_global(self.model, state.params, data.train, data.test)


METHODS.register("dynamic_fedavg", DynamicFedAvg, chapter="dynamic", label="Dynamic FedAvg")
