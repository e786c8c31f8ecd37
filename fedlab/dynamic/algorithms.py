r"""Dynamic Federated Averaging (Rizk, Vlaski, Sayed; Algorithm 1) under a drifting minimiser.

Algorithm 1: at iteration i the server samples L of the K agents without replacement; each sampled agent starts
from :math:`w_{i-1}` and runs :math:`E_k` epochs of minibatch SGD (minibatch :math:`B_k`) with the *normalised*
step :math:`\mu/E_k`, incrementally (eq. (11): gradients at the latest local iterate); the server averages
:math:`w_i = \frac1L\sum_{\ell\in\mathcal L_i} w_{\ell,E_\ell}` (eq. (12)). The :math:`\mu/E_k` normalisation
keeps agents with many epochs from biasing the limit point towards their own minimisers.

Two implementations, both Algorithms run by :func:`fedlab.engine.run`:

* :class:`DynamicFedAvgLS` — a **vectorised numpy simulation** on the drifting least-squares problem of
  :mod:`fedlab.dynamic.data` (what notebook 08 uses; the numpy path of ``run``, History entries = runs). For
  squared loss an epoch is an affine map :math:`w\mapsto(I-\alpha\hat H)w + \alpha\hat g`, so the E_k epochs of
  every sampled agent compose into one affine map computed in bulk for a block of iterations and for R runs at
  once (several step sizes, drift and offset variances sharing the same random draws); a round applies the
  server recursion. Samples are fresh (:math:`N_k = \infty`) and the minimiser follows the random walk (17).
  :func:`msd_curves`, :func:`steady_state` and :func:`msd_db` read its History.
* :class:`DynamicFedAvgLogistic` — the paper's own experiment: the same simulation on the drifting logistic problem
  (29) of :mod:`fedlab.dynamic.data`, R runs at once, one epoch at a time (the updates are not affine).
* :class:`DynamicFedAvg` — the same algorithm for any ``fedlab`` model on a static ``FederatedDataset``, written
  on the engine (``local_sgd`` with ``LocalSGD(lr=mu/E_k, local_steps=E_k, batch_size=B_k)`` per group of agents
  with equal budgets). The engine draws minibatches with replacement (the paper: without); with equal budgets it
  is FedAvg with uniform weights.

Also here: the closed-form full-gradient fixed point (normalisation bias, spec C.7) and the scalar noisy-gradient
tracking recursion behind the bound of spec C.4 (:class:`NoisyGradientTracking`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from scipy.special import expit

from fedlab._rng import Stream, as_numpy_rng, numpy_rng
from fedlab._validation import (check_array, check_bool, check_choice, check_int, check_real, check_sequence,
                                check_type)
from fedlab.dynamic.data import DriftingLeastSquares, DriftingLogistic, logistic_risk_minimizer
from fedlab.engine import (DivergenceError, FederatedDataset, History, LocalSGD, broadcast, local_sgd,
                           weighted_average)
from fedlab.models import Model, check_model
from fedlab.algorithms.common import (ServerState, check_data, check_solver, evaluate_global, initial_params)
from fedlab.algorithms import METHODS

__all__ = [
    "draw_budgets",
    "LeastSquaresRuns",
    "DynamicFedAvgLS",
    "DynamicFedAvgLogistic",
    "msd_curves",
    "steady_state",
    "msd_db",
    "dynamic_fedavg_fixed_point",
    "TrackingErrors",
    "NoisyGradientTracking",
    "DynamicFedAvg",
    "PRESETS",
]


def _budget_values(name: str, value) -> np.ndarray:
    """A positive integer or a 1-D array of them (one per agent; the length is checked against K later)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.ndim > 1 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
        raise ValueError(f"{name} must be a positive integer or one positive integer per agent, got {value!r:.80}.")
    return arr


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
    e_lo, e_hi = _int_range("local_steps_range", local_steps_range)
    b_lo, b_hi = _int_range("batch_range", batch_range)
    rng = as_numpy_rng(rng)
    return rng.integers(e_lo, e_hi + 1, size=k), rng.integers(b_lo, b_hi + 1, size=k)


def _int_range(name: str, value) -> tuple[int, int]:
    """A (low, high) pair of positive integers with low <= high."""
    if len(check_sequence(name, value)) != 2:
        raise ValueError(f"{name} must be a pair (low, high), got {value!r}.")
    lo, hi = (check_int(name, x, low=1) for x in value)
    if lo > hi:
        raise ValueError(f"{name} must be (low, high) with low <= high, got {tuple(value)}.")
    return lo, hi


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


def _mean_offset_dir(problem: DriftingLeastSquares) -> np.ndarray:
    r""":math:`\bar z = \sum_k v_k z_k / \sum_k v_k`; a run's aggregate minimiser is
    :math:`w^\star + \sqrt{\sigma_c^2/d}\,\bar z`."""
    return problem.feature_var @ problem.offset_dirs / problem.feature_var.sum()


def _check_horizon(round_: int, n_iters: int) -> None:
    if round_ >= n_iters:
        raise ValueError(f"the simulation was built for n_iters = {n_iters} iterations (its random draws are made "
                         f"for that horizon); round {round_} is beyond it: build it with a larger n_iters.")


@dataclass(frozen=True)
class LeastSquaresRuns:
    r"""State of :class:`DynamicFedAvgLS`: R runs of Algorithm 1 advanced together.

    Attributes
    ----------
    w : array (R, d)
        Iterates :math:`w_i`.
    w_opt : array (R, d)
        Aggregate minimisers :math:`w^o_i` of the runs (the MSD's reference).
    w_star : array (R, d)
        Common model :math:`w^\star` at the end of the current block of draws (the start of the next one).
    lr, drift_var, offset_var : arrays (R,)
        Each run's :math:`\mu`, :math:`\sigma_q^2`, :math:`\sigma_c^2`.
    rng : Generator
        The one generator of every random draw, advanced block by block.
    block : tuple of arrays or None
        The current block of C iterations: ``(a, b, opt)`` with the server's affine maps
        :math:`w_i = a_i w_{i-1} + b_i`, ``a`` (R, C, d, d), ``b`` (R, C, d), and the minimisers ``opt`` (R, C, d).
    round : int
        Iterations done.
    """

    w: np.ndarray
    w_opt: np.ndarray
    w_star: np.ndarray
    lr: np.ndarray
    drift_var: np.ndarray
    offset_var: np.ndarray
    rng: np.random.Generator
    block: tuple | None = None
    round: int = 0


class DynamicFedAvgLS:
    r"""Dynamic FedAvg (Algorithm 1) simulated on a drifting least-squares problem, R runs at once.

    The numpy path of :func:`fedlab.engine.run`: the data is the
    :class:`~fedlab.dynamic.data.DriftingLeastSquares` problem, one round is one iteration i and
    :meth:`evaluate` records ``msd`` (R,), :math:`\|w^o_i - w_i\|^2` for every run. Iteration i uses data
    generated at the current model :math:`w^\star_{i-1}`, then the model drifts (:math:`w^\star_i = w^\star_{i-1}
    + q_i`, the random walk (17)) — the convention of the error recursion (19) and of spec C.4
    (:math:`\nabla P(w^o_{i-1}) = 0`). All runs share the random draws (agents, features, label noise,
    standardised drift steps): differences between runs come only from :math:`\mu`, :math:`\sigma_q^2`,
    :math:`\sigma_c^2` (common random numbers).

    The draws of ``chunk`` iterations are made in one block from one generator (``numpy_rng(seed,
    Stream.SAMPLING)``, carried by the state) and the E_k epochs of every sampled agent (affine maps, eq. (11))
    are composed in bulk for the block, once per distinct step size; each round then applies the averaged map
    (12). The last block is cut at the horizon ``n_iters``: a run of T <= ``n_iters`` rounds gives the first T
    iterations of the ``n_iters``-iteration simulation.

    Parameters
    ----------
    lr : float or array (R,)
        Step size :math:`\mu > 0`.
    n_iters : int
        Horizon T (the rounds to run, at most).
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
    chunk : int
        Iterations whose random draws are made in one block (memory vs speed).

    Examples
    --------
    >>> from fedlab.engine import run
    >>> from fedlab.dynamic.data import make_drifting_least_squares
    >>> algo = DynamicFedAvgLS(lr=[0.01, 0.1], n_iters=50, n_active=7)
    >>> state, history = run(algo, make_drifting_least_squares(rng=0), rounds=50, progress=False)
    >>> msd_curves(history).shape
    (2, 51)
    """

    def __init__(self, *, lr, n_iters: int, n_active: int, local_steps=1, batch=10, drift_var=None,
                 offset_var=None, normalize: bool = True, incremental: bool = True, full_gradient: bool = False,
                 w_init=None, chunk: int = 256) -> None:
        _rows(lr, 0.0 if drift_var is None else drift_var, 0.0 if offset_var is None else offset_var)  # validate
        check_int("n_active", n_active, low=1)
        _budget_values("local_steps", local_steps)
        _budget_values("batch", batch)
        if isinstance(w_init, str):
            check_choice("w_init", w_init, ("zeros", "optimum"))
        elif w_init is not None:
            check_array("w_init", w_init, ndim=1)
        self.lr, self.drift_var, self.offset_var, self.w_init = lr, drift_var, offset_var, w_init
        self.n_iters = check_int("n_iters", n_iters, low=1)
        self.chunk = check_int("chunk", chunk, low=1)
        self.n_active, self.local_steps, self.batch = int(n_active), local_steps, batch
        self.normalize, self.incremental, self.full_gradient = (check_bool("normalize", normalize),
                                                                check_bool("incremental", incremental),
                                                                check_bool("full_gradient", full_gradient))

    def _budgets(self, problem: DriftingLeastSquares) -> tuple[int, np.ndarray, np.ndarray]:
        """``(L, E_k, B_k)`` checked against the problem's K."""
        k = problem.n_agents
        return (_check_active(self.n_active, k), _check_budget("local_steps", self.local_steps, k),
                _check_budget("batch", self.batch, k))

    def init(self, problem: DriftingLeastSquares, seed: int) -> LeastSquaresRuns:
        if not isinstance(problem, DriftingLeastSquares):
            raise TypeError(f"problem must be a DriftingLeastSquares, got {type(problem).__name__}.")
        self._budgets(problem)
        d = problem.dim
        lr, sq, sc = _rows(self.lr, problem.drift_var if self.drift_var is None else self.drift_var,
                           problem.offset_var if self.offset_var is None else self.offset_var)
        c_scale, zbar = np.sqrt(sc / d), _mean_offset_dir(problem)
        if isinstance(self.w_init, str):
            w = (np.zeros((lr.size, d)) if self.w_init == "zeros"
                 else problem.w_start + c_scale[:, None] * zbar)                 # start at w^o_0 (no transient)
        else:
            w = (np.zeros((lr.size, d)) if self.w_init is None
                 else np.tile(check_array("w_init", self.w_init, shape=(d,)), (lr.size, 1)))
        w_star = np.tile(problem.w_start, (lr.size, 1))                          # common model w*_i, per run
        return LeastSquaresRuns(w, w_star + c_scale[:, None] * zbar, w_star, lr, sq, sc,
                                numpy_rng(seed, Stream.SAMPLING))

    def _epoch_maps(self, lr_u: np.ndarray, e_k: np.ndarray, agents: np.ndarray, h_hat: np.ndarray,
                    g_noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Compose every sampled agent's epochs, once per distinct step size.

        Epochs act on :math:`\delta = w - w^\star_k` as :math:`\delta\mapsto(I-\alpha H_e)\delta + \alpha\sigma_n
        g_e`, so an agent's :math:`E_k` epochs compose to :math:`w_k = w^\star_k + A(w - w^\star_k) + n` with
        ``(A, n)`` depending on :math:`\mu` only (not on the drift or the offsets). Returns ``A`` (U, C, L, d, d)
        and ``n`` (U, C, L, d).
        """
        (n_u,), (c, n_l, e_max, d) = lr_u.shape, g_noise.shape
        ea = e_k[agents]
        eye = np.eye(d)
        alpha = lr_u[:, None, None] / (ea[None] if self.normalize else 1.0)    # (U, C, L)
        emask = (np.arange(e_max)[None, None, :] < ea[..., None])              # (C, L, E)
        if not self.incremental:
            em = emask[None, ..., None]
            return (eye - alpha[..., None, None] * np.sum(h_hat[None] * em[..., None], axis=3),
                    alpha[..., None] * np.sum(g_noise[None] * em, axis=3))
        a_mat = np.broadcast_to(eye, (n_u, c, n_l, d, d)).copy()
        n_vec = np.zeros((n_u, c, n_l, d))
        for e in range(e_max):
            al = alpha * emask[None, :, :, e]                                   # (U, C, L)
            m_e = eye - al[..., None, None] * h_hat[None, :, :, e]
            a_mat = m_e @ a_mat
            n_vec = np.einsum("uclij,uclj->ucli", m_e, n_vec) + al[..., None] * g_noise[None, :, :, e]
        return a_mat, n_vec

    def _draw_block(self, state: LeastSquaresRuns, problem: DriftingLeastSquares) -> dict:
        r"""The next block's draws (:func:`_chunk_draws`) turned into the averaged server maps (12) of every run."""
        n_l, e_k, b_k = self._budgets(problem)
        d, z = problem.dim, problem.offset_dirs
        c = min(self.chunk, self.n_iters - state.round)
        agents, h_hat, g_noise, steps = _chunk_draws(state.rng, c, problem, n_l, e_k, b_k, self.full_gradient)
        q_scale, c_scale = np.sqrt(state.drift_var / d), np.sqrt(state.offset_var / d)
        lr_u, inv = np.unique(state.lr, return_inverse=True)                     # distinct step sizes
        walk = np.concatenate([np.zeros((1, d)), np.cumsum(steps, axis=0)])     # (C+1, d) standardised walk
        start_model = state.w_star[:, None, :] + q_scale[:, None, None] * walk[None, :-1]  # (R, C, d)
        a_mat, n_vec = self._epoch_maps(lr_u, e_k, agents, h_hat, g_noise)
        z_bar_u = z[agents][None] - np.einsum("uclij,clj->ucli", a_mat, z[agents])
        b_bar_u = z_bar_u.mean(2)                                               # mean_L (I - A) z_k: (U, C, d)
        a_r = a_mat.mean(2)[inv]                                                # (R, C, d, d)
        b_bar = (start_model - np.einsum("rcij,rcj->rci", a_r, start_model)
                 + c_scale[:, None, None] * b_bar_u[inv] + n_vec.mean(2)[inv])
        opt = (state.w_star[:, None, :] + q_scale[:, None, None] * walk[None, 1:]
               + c_scale[:, None, None] * _mean_offset_dir(problem))
        return {"block": (a_r, b_bar, opt), "w_star": state.w_star + q_scale[:, None] * walk[-1]}

    def round(self, state: LeastSquaresRuns, problem: DriftingLeastSquares, seed: int) -> tuple[LeastSquaresRuns, dict]:
        """One iteration of every run: :math:`w_i = \\bar A_i w_{i-1} + \\bar b_i` (the mean over the L agents)."""
        _check_horizon(state.round, self.n_iters)
        i = state.round % self.chunk
        if i == 0:
            state = replace(state, **self._draw_block(state, problem))
        a, b, opt = state.block
        with np.errstate(over="ignore", invalid="ignore"):
            w = np.einsum("rij,rj->ri", a[:, i], state.w) + b[:, i]
        if not np.isfinite(w).all():
            bad = ~np.all(np.isfinite(w), axis=1)
            raise DivergenceError(f"Dynamic FedAvg diverged for step sizes {np.unique(state.lr[bad])[:5]}; "
                                  f"use a smaller lr.")
        return replace(state, w=w, w_opt=opt[:, i], round=state.round + 1), {}

    def evaluate(self, state: LeastSquaresRuns, problem: DriftingLeastSquares) -> dict[str, np.ndarray]:
        r"""``msd`` (R,): :math:`\|w^o_i - w_i\|^2` of every run."""
        with np.errstate(over="ignore"):
            return {"msd": np.sum((state.w_opt - state.w) ** 2, -1)}


@dataclass(frozen=True)
class LogisticRuns:
    r"""State of :class:`DynamicFedAvgLogistic`: iterates ``w`` (R, 2), minimisers ``w_opt`` (R, 2), common models
    ``w_star`` (R, 2), each run's ``lr``, ``drift_var``, ``offset_var`` (R,), the generator ``rng`` and ``round``."""

    w: np.ndarray
    w_opt: np.ndarray
    w_star: np.ndarray
    lr: np.ndarray
    drift_var: np.ndarray
    offset_var: np.ndarray
    rng: np.random.Generator
    round: int = 0


class DynamicFedAvgLogistic:
    r"""Dynamic FedAvg (Algorithm 1) on the paper's drifting logistic problem (29), R runs at once.

    The numpy path of :func:`fedlab.engine.run` on a :class:`~fedlab.dynamic.data.DriftingLogistic` problem;
    one round is one iteration i and :meth:`evaluate` records ``msd`` (R,), :math:`\|w^o_i - w_i\|^2`. Each round
    samples L agents without replacement; agent k runs :math:`E_k` incremental epochs (11) on fresh minibatches
    of :math:`B_k` samples with the step :math:`\mu/E_k`,

    .. math:: w_{k,e} = w_{k,e-1} + \frac{\mu}{E_kB_k}\sum_b\gamma_bh_b\,\sigma(-\gamma_bh_b^\top w_{k,e-1})
              - \frac{2\mu\rho}{E_k}w_{k,e-1},

    the server averages (12), then the model drifts (17) and the reference :math:`w^o_i` is the minimiser of the
    population risk at :math:`w^\star_i` (:func:`~fedlab.dynamic.data.logistic_risk_minimizer`, three Newton steps
    warm-started at :math:`w^o_{i-1}`). As in :class:`DynamicFedAvgLS`, iteration i uses data generated at
    :math:`w^\star_{i-1}`, and all runs share the random draws (agents, features, standardised drift steps; a
    run's labels follow its own models), drawn from ``numpy_rng(seed, Stream.SAMPLING)``.

    Parameters
    ----------
    lr : float or array (R,)
        :math:`\mu > 0`.
    n_iters : int
        Horizon T (the rounds to run, at most).
    n_active : int in [1, K]
        L.
    local_steps, batch : int or int array (K,)
        :math:`E_k` and :math:`B_k`.
    drift_var, offset_var : float or array (R,), optional
        :math:`\sigma_q^2` and :math:`\sigma_c^2` per run (default: the problem's).
    w_init : "zeros" or "optimum"
        :math:`w_0 = 0` or the run's :math:`w^o_0` (no transient).
    """

    def __init__(self, *, lr, n_iters: int, n_active: int, local_steps=1, batch=10, drift_var=None,
                 offset_var=None, w_init: str = "zeros") -> None:
        _rows(lr, 0.0 if drift_var is None else drift_var, 0.0 if offset_var is None else offset_var)  # validate
        check_int("n_active", n_active, low=1)
        _budget_values("local_steps", local_steps)
        _budget_values("batch", batch)
        self.w_init = check_choice("w_init", w_init, ("zeros", "optimum"))
        self.lr, self.drift_var, self.offset_var = lr, drift_var, offset_var
        self.n_iters = check_int("n_iters", n_iters, low=1)
        self.n_active, self.local_steps, self.batch = int(n_active), local_steps, batch

    def _budgets(self, problem: DriftingLogistic) -> tuple[int, np.ndarray, np.ndarray]:
        k = problem.n_agents
        return (_check_active(self.n_active, k), _check_budget("local_steps", self.local_steps, k),
                _check_budget("batch", self.batch, k))

    def init(self, problem: DriftingLogistic, seed: int) -> LogisticRuns:
        check_type("problem", problem, DriftingLogistic)
        self._budgets(problem)
        lr, sq, sc = _rows(self.lr, problem.drift_var if self.drift_var is None else self.drift_var,
                           problem.offset_var if self.offset_var is None else self.offset_var)
        w_star = np.tile(problem.w_start, (lr.size, 1))
        w_opt = _logistic_optima(problem, w_star, sc)
        w = w_opt.copy() if self.w_init == "optimum" else np.zeros_like(w_star)
        return LogisticRuns(w, w_opt, w_star, lr, sq, sc, numpy_rng(seed, Stream.SAMPLING))

    def round(self, state: LogisticRuns, problem: DriftingLogistic, seed: int) -> tuple[LogisticRuns, dict]:
        """One iteration of every run: local epochs (11) of the L sampled agents, average (12), drift (17)."""
        _check_horizon(state.round, self.n_iters)
        n_l, e_k, b_k = self._budgets(problem)
        rng = state.rng
        agents = np.argsort(rng.random(problem.n_agents))[:n_l]
        e_a, b_a = e_k[agents], b_k[agents]
        e_max, b_max = int(e_a.max()), int(b_a.max())
        h = rng.standard_normal((n_l, e_max, b_max, 2)) * np.sqrt(problem.feature_var[agents])[:, None, None, None]
        step = rng.standard_normal(2)
        targets = problem.agent_optima(state.w_star, state.offset_var)[:, agents]          # (R, L, 2)
        yh = np.sign(np.einsum("lebj,rlj->rleb", h, targets))[..., None] * h[None]         # gamma h: (R, L, E, B, 2)
        yh *= (np.arange(b_max) < b_a[:, None])[None, :, None, :, None] / b_a[None, :, None, None, None]
        alpha = state.lr[:, None] / e_a[None, :]                                           # (R, L)
        wl = np.repeat(state.w[:, None, :], n_l, axis=1)
        for e in range(e_max):
            margin = np.einsum("rlbj,rlj->rlb", yh[:, :, e], wl) * b_a[None, :, None]
            grad = -np.einsum("rlb,rlbj->rlj", expit(-margin), yh[:, :, e]) + 2 * problem.reg_rho * wl
            wl = wl - (alpha * (e < e_a))[..., None] * grad
        w_star = state.w_star + np.sqrt(state.drift_var / 2)[:, None] * step
        w_opt = _logistic_optima(problem, w_star, state.offset_var, w_init=state.w_opt)
        return replace(state, w=wl.mean(1), w_opt=w_opt, w_star=w_star, round=state.round + 1), {}

    def evaluate(self, state: LogisticRuns, problem: DriftingLogistic) -> dict[str, np.ndarray]:
        r"""``msd`` (R,): :math:`\|w^o_i - w_i\|^2` of every run."""
        return {"msd": np.sum((state.w_opt - state.w) ** 2, -1)}


def _logistic_optima(problem: DriftingLogistic, w_star: np.ndarray, offset_var: np.ndarray, *,
                     w_init: np.ndarray | None = None) -> np.ndarray:
    """The runs' minimisers, computed once per distinct (common model, offset variance); a warm start takes three
    Newton steps, a cold one thirty."""
    key = np.column_stack([w_star, offset_var])
    uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    warm = None if w_init is None else w_init[first]
    opt = logistic_risk_minimizer(problem.feature_var, problem.agent_optima(uniq[:, :2], uniq[:, 2]),
                                  problem.reg_rho, w_init=warm, newton_steps=30 if w_init is None else 3,
                                  n_angle=16, n_radius=24)
    return opt[inv.ravel()]


def msd_curves(history: History) -> np.ndarray:
    """The recorded ``msd`` of every run, (R, n_records) (iterations ``history.rounds``)."""
    if not isinstance(history, History):
        raise TypeError(f"history must be a History, got {type(history).__name__}.")
    if "msd" not in history.clients:
        raise ValueError(f"history has no 'msd' metric (a run of DynamicFedAvgLS, DynamicFedAvgLogistic or "
                         f"NoisyGradientTracking); "
                         f"recorded: {sorted(history.clients)}.")
    return np.ascontiguousarray(np.array(history.clients["msd"]).T)   # rows contiguous: per-run reductions


def steady_state(history: History, tail: int) -> np.ndarray:
    """Mean MSD over the last ``tail`` records, per run (R,)."""
    msd = msd_curves(history)
    tail = check_int("tail", tail, low=1, high=msd.shape[1])
    return msd[:, -tail:].mean(1)


def msd_db(history: History) -> np.ndarray:
    """:math:`10\\log_{10}` MSD, (R, n_records)."""
    return 10 * np.log10(np.maximum(msd_curves(history), 1e-300))


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
    normalize = check_bool("normalize", normalize)
    w_star = problem.w_start if w_star is None else check_array("w_star", w_star, shape=(problem.dim,))
    alpha = mu / e_k if normalize else np.full(e_k.shape, mu)
    rho = (1.0 - alpha * problem.feature_var) ** e_k
    if abs(rho.mean()) >= 1:
        raise ValueError(f"lr = {mu} is too large: the full-gradient iteration does not converge (mean rho = {rho.mean():.3g}).")
    weights = 1.0 - rho
    return weights @ problem.agent_optima(w_star) / weights.sum()


@dataclass(frozen=True)
class TrackingErrors:
    """State of :class:`NoisyGradientTracking`: errors ``e`` (R, d), the noises ``u`` (R, T, d) of every step
    (drawn at ``init``) and the steps done ``round``."""

    e: np.ndarray
    u: np.ndarray
    round: int = 0


class NoisyGradientTracking:
    r"""The scalar-curvature tracking recursion behind the bound of spec C.4, R runs (numpy path of ``run``).

    .. math:: e_i = (1-\mu\nu)e_{i-1} + \mu s_i + q_i,\quad s_i\sim\mathcal N(0,\tfrac{\sigma_s^2}dI),\;
              q_i\sim\mathcal N(0,\tfrac{\sigma_q^2}dI),\; e_0 = 0,

    whose exact steady state is :math:`(\mu^2\sigma_s^2+\sigma_q^2)/(1-(1-\mu\nu)^2)`
    (:func:`fedlab.dynamic.bounds.scalar_quadratic_msd`). There is no data (run it on ``None``); one round is one
    step and :meth:`evaluate` records ``msd`` (R,), :math:`\|e_i\|^2`. The noises of all ``n_iters`` steps are
    drawn at ``init`` from ``numpy.random.default_rng(seed)`` (every :math:`s_i`, then every :math:`q_i`).

    Parameters
    ----------
    lr : float > 0
        :math:`\mu`.
    strong_nu : float > 0
        :math:`\nu`, the curvature.
    sigma_s2, sigma_q2 : float >= 0
        Gradient-noise and drift variances.
    n_iters : int
        Horizon T (the rounds to run, at most).
    dim : int
        d.
    n_runs : int
        R independent runs.
    """

    def __init__(self, lr: float, strong_nu: float, sigma_s2: float, sigma_q2: float, *, n_iters: int,
                 dim: int = 2, n_runs: int = 1) -> None:
        self.lr = check_real("lr", lr, low=0, low_open=True)
        self.strong_nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
        self.sigma_s2 = check_real("sigma_s2", sigma_s2, low=0)
        self.sigma_q2 = check_real("sigma_q2", sigma_q2, low=0)
        self.n_iters = check_int("n_iters", n_iters, low=1)
        self.dim = check_int("dim", dim, low=1)
        self.n_runs = check_int("n_runs", n_runs, low=1)

    def init(self, data: None, seed: int) -> TrackingErrors:
        shape = (self.n_runs, self.n_iters, self.dim)
        rng = as_numpy_rng(seed)
        u = (self.lr * np.sqrt(self.sigma_s2 / self.dim) * rng.standard_normal(shape)
             + np.sqrt(self.sigma_q2 / self.dim) * rng.standard_normal(shape))
        return TrackingErrors(np.zeros((self.n_runs, self.dim)), u)

    def round(self, state: TrackingErrors, data: None, seed: int) -> tuple[TrackingErrors, dict]:
        _check_horizon(state.round, self.n_iters)
        e = (1.0 - self.lr * self.strong_nu) * state.e + state.u[:, state.round]
        return replace(state, e=e, round=state.round + 1), {}

    def evaluate(self, state: TrackingErrors, data: None) -> dict[str, np.ndarray]:
        r"""``msd`` (R,): :math:`\|e_i\|^2`."""
        return {"msd": np.sum(state.e ** 2, -1)}


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
        check_model(model)
        check_solver(solver)
        self.model, self.solver = model, solver
        if local_steps is not None:
            _budget_values("local_steps", local_steps)
        if batch_size is not None:
            _budget_values("batch_size", batch_size)
        if n_active is not None and (isinstance(n_active, bool) or not isinstance(n_active, (int, np.integer))
                                     or n_active < 1):
            raise ValueError(f"n_active (agents per round L) must be an integer >= 1, got {n_active!r}.")
        self.n_active = None if n_active is None else int(n_active)
        self.participation = check_real("participation", participation, low=0, high=1, low_open=True)
        self.local_steps = solver.local_steps if local_steps is None else local_steps
        self.batch_size = solver.batch_size if batch_size is None else batch_size
        self.normalize = check_bool("normalize", normalize)
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    def _budgets(self, n_clients: int) -> tuple[int, np.ndarray, np.ndarray]:
        n_l = self.n_active if self.n_active is not None else max(1, int(round(self.participation * n_clients)))
        return (_check_active(n_l, n_clients), _check_budget("local_steps", self.local_steps, n_clients),
                _check_budget("batch_size", self.batch_size, n_clients))

    def init(self, data: FederatedDataset, seed: int) -> ServerState:
        check_data(self.model, data)
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


# ------------------------------------------------------------------------------------ the chapter's methods

for _name, _cls, _label in [
        ("dynamic_fedavg", DynamicFedAvg, "Dynamic FedAvg"),
        ("dynamic_fedavg_ls", DynamicFedAvgLS, "Dynamic FedAvg (least-squares simulation)"),
        ("dynamic_fedavg_logistic", DynamicFedAvgLogistic, "Dynamic FedAvg (logistic simulation)"),
        ("noisy_gradient_tracking", NoisyGradientTracking, "Noisy gradient tracking (scalar recursion)")]:
    METHODS.register(_name, _cls, chapter="dynamic", label=_label)

PRESETS = METHODS.presets("dynamic")
"""The chapter's engine algorithms by short name. ``PRESETS["dynamic_fedavg"](model, solver, **options)`` builds
Algorithm 1 on the engine; the three simulations take their own keyword arguments (build them directly, e.g.
``DynamicFedAvgLS(lr=..., n_iters=..., n_active=...)``), and are registered so that the registry lists every
algorithm of the workbook."""
