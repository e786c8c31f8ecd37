r"""FEM-OMD: online federated learning with mixture models (thesis §4.4, Algorithms 14, 15 and 17).

At every time step :math:`t` each client :math:`c` first *plays* a model
:math:`\theta_{t,c} = \{(\omega_{t,j}, \pi_{t,c,j})\}_j` (global components, personal mixture weights),
suffers the loss :math:`\varphi_{t,c}(\theta_{t,c}) = \mathrm{KL}(\sum_j\pi^*_{t,c,j}\check P_{\omega^*_j}\,\|\,
\sum_j\pi_{t,c,j}\check P_{\omega_{t,j}})` (4.24), and only then receives :math:`n` samples of
:math:`\mathcal P_{t,c}`. FEM-OMD then

1. runs :math:`K` steps of federated EM on the new samples, starting from the current components
   (E-step (4.34), M-step (4.35)–(4.36), server synchronisation
   :math:`\tilde\omega_j = \sum_c\tilde\pi_{c,j}\tilde\omega_{c,j}/\sum_c\tilde\pi_{c,j}`);
2. averages the EM outputs over time,
   :math:`\omega_{t+1} = \frac{t}{t+1}\omega_t + \frac{1}{t+1}\tilde\omega^{(K+1)}_{t+1}`;
3. estimates the gradient of the loss w.r.t. the weights at the played :math:`\pi_{t,c}` (4.28),
   :math:`\hat\nabla_{t,c,j} = -\mathbb E_{Z\sim\sum_r\tilde\pi_{t,c,r}\check P_{\omega_{t+1,r}}}
   [\check P_{\omega_{t+1,j}}(Z)/\sum_l\pi_{t,c,l}\check P_{\omega_{t+1,l}}(Z)]` by Monte Carlo ("Approx_n");
4. takes the entropic mirror-descent step (4.41)
   :math:`\pi_{t+1,c,j}\propto\pi_{t,c,j}\exp(-\eta_t\hat\nabla_{t,c,j})`, computed in log space.

The module follows the index-corrected pseudo-code of the dynamic spec (§A.2.4): the running average
uses the previous :math:`\omega_t`; the M-step divides by the batch size :math:`n/K` (sample splitting,
all :math:`n` samples in every inner step when :math:`n < K`); the OMD denominator and the gradient are
client-specific. Mixture weights live in log space with a floor (:data:`fedlab.gmm.LOG_FLOOR`) and every ratio
of densities is formed in log space, so components whose weight goes to 0 never produce NaN or inf
(spec §A.5 item 12).

Every algorithm runs online on the engine, ``fedlab.engine.run(algorithm, stream, rounds=T,
order="evaluate_first")``: round :math:`t` first scores the played model on the step's data, then learns.

* Gaussian mixtures :math:`\check P_j = \mathcal N(\mu^*_j, \sigma^2 I_d)` (Algorithm 15), a numpy
  simulation with the exact loss and regret: :class:`GaussianFEMOMD` on a
  :class:`~fedlab.online.data.GMMEnvironment`, the federated EM of :mod:`fedlab.gmm` inside, the building blocks
  :func:`mixture_weight_gradient`, :func:`omd_step`, :func:`center_error`, and :func:`regret_curves`,
  :func:`played_weights`, :func:`logged` to read its History;
* the fully separated limit (spec fact A9): :class:`OMD`, entropic online mirror descent with exact gradients on
  the weights :math:`\pi^*_t` themselves (Theorem 4.4.3 without its error term);
* discriminative models :math:`\check P_\omega(x, y)\propto\exp(-\ell(h_\omega; x, y))` (Algorithm 17):
  :class:`FEMOMD` (components as stacked parameters trained with ``local_sgd`` on responsibility-weighted
  samples) on a stream ``t -> FederatedDataset``, and the thesis's baseline :class:`FedOMD`.

Each is registered as ``METHODS["online:<name>"]`` (:data:`PRESETS`).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import torch

from fedlab._rng import Stream, as_numpy_rng, numpy_rng, torch_generator
from fedlab._validation import (all_finite, check_array, check_bool, check_choice, check_int, check_real, check_simplex,
                                check_type)
from fedlab.engine import (FederatedDataset, History, LocalSGD, broadcast, local_sgd, metrics_from_proba,
                           weighted_average)
from fedlab.engine.local import DivergenceError
from fedlab.gmm import (LOG_FLOOR, check_client_weights, check_samples, em_step, gaussian_log_kernel, log_sum_exp,
                        log_weights)
from fedlab.models import Model, Params, init_stacked
from fedlab.algorithms.common import ServerState, check_data, check_solver, client_weights
from fedlab.algorithms import METHODS, FedAvg
from fedlab.online.data import LOG_CAP, STEP_CAP, GMMStep, sample_mixture

__all__ = [
    "STEP_SCHEDULES",
    "GMM_GRADIENTS",
    "DISCRIMINATIVE_GRADIENTS",
    "PI_INITS",
    "step_size",
    "omd_step",
    "mixture_weight_gradient",
    "center_error",
    "GaussianFEMOMDState",
    "GaussianFEMOMD",
    "regret_curves",
    "played_weights",
    "logged",
    "FEMOMDState",
    "FEMOMD",
    "FEDOMD_SCHEDULES",
    "FedOMD",
    "OMDState",
    "OMD",
    "PRESETS",
]

# ----------------------------------------------------------------------------------------- step sizes

def _eta_anytime(t: int, horizon: int | None, m: int, lr: float) -> float:
    return lr * math.sqrt(math.log(m) / t)


def _eta_fixed(t: int, horizon: int | None, m: int, lr: float) -> float:
    if horizon is None:
        raise ValueError("schedule='fixed' needs the horizon T (eta = lr * sqrt(log m / T)).")
    return lr * math.sqrt(math.log(m) / horizon)


def _eta_constant(t: int, horizon: int | None, m: int, lr: float) -> float:
    return lr


STEP_SCHEDULES: dict[str, Callable[[int, int | None, int, float], float]] = {
    "anytime": _eta_anytime,    # eta_t = lr sqrt(log m / t): sub-linear regret inside one run
    "fixed": _eta_fixed,        # Theorem 4.4.3: eta = D_R / (G_R sqrt T) with D_R = sqrt(log m), lr = 1/G_R
    "constant": _eta_constant,  # eta_t = lr
}
GMM_GRADIENTS = ("model", "samples")
DISCRIMINATIVE_GRADIENTS = ("model", "samples")
PI_INITS = ("uniform", "previous")


def step_size(schedule: str, t: int, n_components: int, lr: float, horizon: int | None = None) -> float:
    r"""OMD step :math:`\eta_t` of a schedule in :data:`STEP_SCHEDULES`.

    * ``"anytime"``: :math:`\eta_t = \eta_0\sqrt{\log m / t}` (dynamic spec A.7, decaying; default);
    * ``"fixed"``: :math:`\eta = \eta_0\sqrt{\log m / T}`, Theorem 4.4.3's
      :math:`D_{\mathcal R}/(G_{\mathcal R}\sqrt T)` with :math:`D_{\mathcal R} = \sqrt{\log m}` and
      :math:`\eta_0 = 1/G_{\mathcal R}`;
    * ``"constant"``: :math:`\eta = \eta_0`.

    Parameters
    ----------
    schedule : str
    t : int
        Step, 1-based.
    n_components : int
        :math:`m \ge 1` (:math:`\eta = 0` for the decaying schedules when :math:`m = 1`).
    lr : float
        :math:`\eta_0 > 0`.
    horizon : int, optional
        :math:`T`, required by ``"fixed"``.

    Returns
    -------
    float
    """
    check_choice("schedule", schedule, STEP_SCHEDULES)
    t = check_int("t", t, low=1)
    m = check_int("n_components", n_components, low=1)
    lr = check_real("lr", lr, low=0, low_open=True)
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
    return STEP_SCHEDULES[schedule](t, horizon, m, lr)


# ----------------------------------------------------------------------------------------- OMD in log space

def _normalise_log(log_w: np.ndarray) -> np.ndarray:
    out = log_w - log_sum_exp(log_w, -1, keepdims=True)
    out = np.maximum(out, LOG_FLOOR)
    return out - log_sum_exp(out, -1, keepdims=True)


def omd_log_step(log_pi: np.ndarray, grad: np.ndarray, eta: float, grad_clip: float | None) -> np.ndarray:
    if grad_clip is not None:
        grad = np.clip(grad, -grad_clip, grad_clip)
    with np.errstate(over="ignore", invalid="ignore"):
        step = np.clip(eta * grad, -STEP_CAP, STEP_CAP)
    return _normalise_log(log_pi - step)


def _check_log_weights(name: str, value: Any) -> np.ndarray:
    arr = check_array(name, value)
    if arr.ndim == 0:
        raise ValueError(f"{name} must have the components on its last axis, got a scalar.")
    return arr


def omd_step(log_pi: Any, grad: Any, lr: float, *, grad_clip: float | None = None) -> np.ndarray:
    r"""Entropic mirror-descent step on the simplex, in log space (eqs. (4.40)–(4.41)).

    .. math::
        \log\pi_{t+1,j} = \log\pi_{t,j} - \eta\hat\nabla_j - \log\sum_l \pi_{t,l}e^{-\eta\hat\nabla_l},

    i.e. :math:`\pi_{t+1,j}\propto\pi_{t,j}\exp(-\eta\hat\nabla_j)`. Adding a constant to the gradient does
    not change the result. Steps are capped at :math:`10^{300}` and log-weights floored at
    :data:`fedlab.gmm.LOG_FLOOR`, so the output is finite and sums to 1 even for huge gradients or weights that
    underflow to 0.

    Parameters
    ----------
    log_pi : array (..., m)
        Log of the current weights (need not be normalised; finite).
    grad : array (..., m)
        Gradient estimate :math:`\hat\nabla` (finite).
    lr : float
        Step :math:`\eta > 0`.
    grad_clip : float, optional
        Clip every gradient entry to :math:`[-\text{grad\_clip}, \text{grad\_clip}]` first (``> 0``).

    Returns
    -------
    np.ndarray (..., m)
        Normalised log-weights (``logsumexp = 0``).
    """
    log_pi = _check_log_weights("log_pi", log_pi)
    grad = check_array("grad", grad, shape=log_pi.shape)
    lr = check_real("lr", lr, low=0, low_open=True)
    if grad_clip is not None:
        grad_clip = check_real("grad_clip", grad_clip, low=0, low_open=True)
    return omd_log_step(log_pi, grad, lr, grad_clip)


# ----------------------------------------------------------------------------------------- Gaussian mixtures

def _log_neg_grad(z: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variance: float) -> np.ndarray:
    r"""log of :math:`-\hat\nabla_j = \mathrm{mean}_i f_j(z_i)/\sum_l\pi_l f_l(z_i)` for z (C, N, d) -> (C, m)."""
    lf = gaussian_log_kernel(z, means, variance)                         # (m, C, N)
    log_ratio = lf - log_sum_exp(log_pi.T[:, :, None] + lf, 0)[None]
    return (log_sum_exp(log_ratio, -1) - math.log(z.shape[1])).T


def _grad_from_log(log_neg: np.ndarray) -> np.ndarray:
    return -np.exp(np.minimum(log_neg, LOG_CAP))


def mixture_weight_gradient(pi: Any, means: Any, *, pi_tilde: Any = None, samples: Any = None, n_mc: int = 30,
                            rng: Any = None, variance: float = 1.0) -> np.ndarray:
    r"""Gradient of the mixture loss w.r.t. the weights at ``pi`` (eq. (4.28)), by Monte Carlo.

    .. math::
        \hat\nabla_{c,j} = -\frac1N\sum_{i=1}^N \frac{f_{\mu_j}(z_{c,i})}{\sum_l\pi_{c,l}f_{\mu_l}(z_{c,i})},

    with :math:`z_{c,i}` drawn from :math:`\sum_r\tilde\pi_{c,r}\mathcal N(\mu_r,\sigma^2I)` (``pi_tilde``, the
    "Approx_n" of Algorithm 15 line 14) or equal to the observed samples (``samples``, an estimate of the
    gradient at the true weights; dynamic spec A.5 item 6). Every estimate satisfies
    :math:`\sum_j\pi_{c,j}\hat\nabla_{c,j} = -1` (spec fact A1). Ratios are formed in log space and each
    entry is capped at :math:`10^{300}` in magnitude.

    Parameters
    ----------
    pi : array (C, m) or (m,)
        Played weights :math:`\pi_{t,c}` on the simplex.
    means : array (m, d)
        Component means (:math:`\mu_{t+1}`).
    pi_tilde : array (C, m) or (m,), optional
        Weights of the sampling mixture (EM estimate :math:`\tilde\pi^{(K+1)}_{t,c}`); exactly one of
        ``pi_tilde`` and ``samples`` is given.
    samples : array (C, n, d) or (n, d), optional
    n_mc : int
        Number N of Monte-Carlo draws per client (with ``pi_tilde``).
    rng : numpy Generator, int or None
    variance : float
        :math:`\sigma^2 > 0`.

    Returns
    -------
    np.ndarray (C, m)
        Non-positive entries.
    """
    mu = check_array("means", means, ndim=2)
    variance = check_real("variance", variance, low=0, low_open=True)
    if (pi_tilde is None) == (samples is None):
        raise ValueError("give exactly one of pi_tilde (Monte Carlo from the estimated mixture) and samples.")
    pi = check_simplex("pi", pi, size=mu.shape[0])
    if samples is not None:
        z = check_samples(samples, dim=mu.shape[1], name="samples")
        n_clients = z.shape[0]
    else:
        pt = check_simplex("pi_tilde", pi_tilde, size=mu.shape[0])
        n_clients = max(1 if pt.ndim == 1 else pt.shape[0], 1 if pi.ndim == 1 else pi.shape[0])
        pt = check_client_weights("pi_tilde", pt, n_clients, mu.shape[0])
        n_mc = check_int("n_mc", n_mc, low=1)
        z = sample_mixture(pt, mu, n_mc, variance=variance, rng=as_numpy_rng(rng))
    pi = check_client_weights("pi", pi, n_clients, mu.shape[0])
    return _grad_from_log(_log_neg_grad(z, log_weights(pi), mu, variance))


_PERMS: dict[int, np.ndarray] = {}


def center_error(means: Any, means_star: Any) -> float:
    r"""Label-switching-free centre error :math:`\min_\sigma\max_j\|\mu_j - \mu^*_{\sigma(j)}\|`.

    Exhaustive over permutations for :math:`m \le 7`; beyond, the assignment minimising the sum of squared
    distances (Hungarian algorithm) is used.

    Parameters
    ----------
    means, means_star : array (m, d)

    Returns
    -------
    float
    """
    mu = check_array("means", means, ndim=2)
    ms = check_array("means_star", means_star, shape=mu.shape)
    return _center_error(mu, ms)


def _center_error(mu: np.ndarray, ms: np.ndarray) -> float:
    m = mu.shape[0]
    dist = np.linalg.norm(mu[:, None, :] - ms[None], axis=-1)
    if m <= 7:
        if m not in _PERMS:
            _PERMS[m] = np.array(list(itertools.permutations(range(m))), dtype=np.int64)
        perms = _PERMS[m]
        return float(dist[np.arange(m), perms].max(1).min())
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(dist ** 2)
    return float(dist[rows, cols].max())


# ----------------------------------------------------------------------------------------- FEM-OMD for GMMs

@dataclass(frozen=True)
class GaussianFEMOMDState:
    """Played means ``(m, d)``, every client's log mixture weights ``(C, m)`` and the step count."""

    means: np.ndarray
    log_pi: np.ndarray
    round: int = 0

    @property
    def weights(self) -> np.ndarray:
        """Mixture weights :math:`\\pi_{t,c}`, shape (C, m)."""
        return np.exp(self.log_pi)


def _initial_means(means_star: np.ndarray, init_scale: float, rng: np.random.Generator) -> np.ndarray:
    m, d = means_star.shape
    if m > 1:
        dist = np.linalg.norm(means_star[:, None] - means_star[None], axis=-1)
        sep = float(dist[~np.eye(m, dtype=bool)].min())
    else:
        sep = 1.0
    return means_star + init_scale * sep / math.sqrt(d) * rng.standard_normal((m, d))


def _inner_em(x: np.ndarray, means: np.ndarray, log_pi0: np.ndarray, n_steps: int, split: bool,
              variance: float) -> tuple[np.ndarray, np.ndarray]:
    """K federated EM steps (Algorithm 15 lines 5-12) from ``means`` and ``log_pi0``: step k uses batch k of size
    n // K with ``split`` and n >= K, else all n samples. Returns the last weights (C, m) and means (m, d)."""
    n = x.shape[1]
    b = n // n_steps if (split and n >= n_steps) else n
    mu, log_pi = means, log_pi0
    for k in range(n_steps):
        pi_tilde, mu, _ = em_step(x[:, k * b:(k + 1) * b] if b < n else x, log_pi, mu, variance)
        log_pi = log_weights(pi_tilde)
    return pi_tilde, mu


class GaussianFEMOMD:
    r"""FEM-OMD for Gaussian mixtures (Algorithm 15, index-corrected; dynamic spec §A.2.4) on a
    :class:`~fedlab.online.data.GMMEnvironment`.

    Run with ``fedlab.engine.run(algorithm, environment, rounds=T, seed=seed, order="evaluate_first")``. At step t
    ``evaluate`` scores the played :math:`(\mu_t, \pi_{t,c})` — ``kl``, the loss :math:`\varphi_{t,c}` (4.24),
    ``comparator_kl`` (the best fixed model in hindsight, so :func:`regret_curves` is the regret (4.25)),
    ``center_error`` (:func:`center_error` of :math:`\mu_t`, the same for every client) and ``weight_j``
    (:math:`\pi_{t,c,j}`) — then ``round`` runs :math:`K` federated EM steps on the step's samples
    (:func:`fedlab.gmm.em_step`), averages the means over time, estimates the weight gradient at the played weights
    and takes the entropic OMD step with :math:`\eta_t` from :data:`STEP_SCHEDULES`. Its info (History.log, read
    with :func:`logged`): ``eta``, ``grad_err`` :math:`\|\nabla_{t,c} - \hat\nabla_{t,c}\|_\infty` (the true
    gradient (4.27) estimated on the loss draws), ``grad_norm`` :math:`\|\hat\nabla_{t,c}\|_\infty` (after
    clipping) and ``true_grad_norm`` :math:`\|\nabla_{t,c}\|_\infty` (never clipped: the clip bounds the estimate,
    not the exact gradient the error is measured against), lists over clients.

    Parameters
    ----------
    n_em_steps : int
        Inner EM steps :math:`K \ge 1`.
    lr : float
        :math:`\eta_0 > 0` of the step schedule.
    schedule : {"anytime", "fixed", "constant"}
        ``"fixed"`` uses the environment's horizon T.
    split : bool
        Sample splitting in the inner loop.
    grad_clip : float or None
        Clip gradient entries to :math:`[-\text{grad\_clip}, \text{grad\_clip}]` (default 10; None: no clip).
    gradient : {"model", "samples"}
        Monte-Carlo under the estimated mixture ("Approx_n", default) or the observed samples.
    pi_init : {"uniform", "previous"}
        :math:`\tilde\pi^{(1)}_{t,c}`: uniform, or the played :math:`\pi_{t,c}` (Assumption 29 is unrealistic).
    n_mc : int, optional
        Monte-Carlo draws of the gradient (default: the step's n).
    means_init : array (m, d), optional
        :math:`\mu_1`; default :math:`\mu^* + \xi`, :math:`\mathbb E\|\xi_j\|^2 = (\text{init\_scale}\cdot\text{sep})^2`
        with sep the smallest centre distance (Assumption 28 radius for ``init_scale = 1/16``), drawn from
        ``(seed, 0, Stream.ONLINE_INIT)``.
    init_scale : float
        ``>= 0``.
    """

    def __init__(self, *, n_em_steps: int = 3, lr: float = 1.0, schedule: str = "anytime", split: bool = True,
                 grad_clip: float | None = 10.0, gradient: str = "model", pi_init: str = "uniform",
                 n_mc: int | None = None, means_init: Any = None, init_scale: float = 1.0 / 16) -> None:
        self.n_em_steps = check_int("n_em_steps", n_em_steps, low=1)
        self.lr = check_real("lr", lr, low=0, low_open=True)
        self.schedule = check_choice("schedule", schedule, STEP_SCHEDULES)
        self.split = check_bool("split", split)
        self.grad_clip = None if grad_clip is None else check_real("grad_clip", grad_clip, low=0, low_open=True)
        self.gradient = check_choice("gradient", gradient, GMM_GRADIENTS)
        self.pi_init = check_choice("pi_init", pi_init, PI_INITS)
        self.n_mc = None if n_mc is None else check_int("n_mc", n_mc, low=1)
        self.means_init = None if means_init is None else check_array("means_init", means_init, ndim=2)
        self.init_scale = check_real("init_scale", init_scale, low=0)

    def init(self, data: GMMStep, seed: int) -> GaussianFEMOMDState:
        if not isinstance(data, GMMStep):
            raise TypeError(f"data must be a GMMStep (GaussianFEMOMD runs on a GMMEnvironment's steps), got "
                            f"{type(data).__name__}.")
        mu_star = data.means_star
        if self.means_init is None:
            means = _initial_means(mu_star, self.init_scale, numpy_rng(seed, 0, Stream.ONLINE_INIT))
        else:
            means = check_array("means_init", self.means_init, shape=mu_star.shape).copy()
        m = mu_star.shape[0]
        return GaussianFEMOMDState(means, np.full((data.weights_star.shape[0], m), -math.log(m)), 0)

    def round(self, state: GaussianFEMOMDState, data: GMMStep, seed: int) -> tuple[GaussianFEMOMDState, dict]:
        t, m = state.round + 1, state.log_pi.shape[1]
        log_pi0 = np.full_like(state.log_pi, -math.log(m)) if self.pi_init == "uniform" else state.log_pi
        pi_tilde, mu_em = _inner_em(data.samples, state.means, log_pi0, self.n_em_steps, self.split, data.variance)
        mu = t / (t + 1) * state.means + mu_em / (t + 1)                # running average, previous mu_t
        if self.gradient == "model":
            n_mc = data.samples.shape[1] if self.n_mc is None else self.n_mc
            z = sample_mixture(pi_tilde, mu, n_mc, variance=data.variance, rng=numpy_rng(seed, t, Stream.ONLINE_GRAD))
        else:
            z = data.samples
        g = _grad_from_log(_log_neg_grad(z, state.log_pi, mu, data.variance))   # at the played weights
        if self.grad_clip is not None:
            g = np.maximum(g, -self.grad_clip)
        eta = STEP_SCHEDULES[self.schedule](t, data.horizon, m, self.lr)
        exact = data.true_gradient(state.log_pi)
        info = {"eta": eta, "grad_err": np.abs(g - exact).max(1).tolist(), "grad_norm": np.abs(g).max(1).tolist(),
                "true_grad_norm": np.abs(exact).max(1).tolist()}
        return GaussianFEMOMDState(mu, omd_log_step(state.log_pi, g, eta, None), t), info

    def evaluate(self, state: GaussianFEMOMDState, data: GMMStep) -> dict[str, np.ndarray]:
        """``kl``, ``comparator_kl``, ``center_error`` and ``weight_j`` of the played model, arrays (C,).

        The loss is recorded as ``kl``, not ``*loss``: the engine's divergence check does not apply to it, since an
        adversarial environment can make the played model's KL large at any step.
        """
        loss, comparator = data.losses(state.log_pi, state.means)
        out = {"kl": loss, "comparator_kl": comparator,
               "center_error": np.full(loss.shape, _center_error(state.means, data.means_star))}
        out.update({f"weight_{j}": w for j, w in enumerate(state.weights.T)})
        return out


def _clients_metric(history: History, name: str) -> np.ndarray:
    check_type("history", history, History)
    if name not in history.clients:
        raise ValueError(f"history holds no {name!r} (a GaussianFEMOMD run has it); recorded: "
                         f"{sorted(history.clients)}.")
    return np.stack(history.clients[name])


def regret_curves(history: History) -> np.ndarray:
    r"""Regret of every client along a :class:`GaussianFEMOMD` run, shape (T, C).

    :math:`R_{t,c} = \sum_{s\le t}\varphi_{s,c}(\theta_{s,c}) - \varphi_{s,c}(\mu^*,\bar\pi^*_c)`; at
    :math:`t = T` this is the regret (4.25) exactly (up to Monte Carlo).
    """
    return np.cumsum(_clients_metric(history, "kl") - _clients_metric(history, "comparator_kl"), axis=0)


def played_weights(history: History) -> np.ndarray:
    r"""The weights :math:`\pi_{t,c}` every client played along a :class:`GaussianFEMOMD` run, shape (T, C, m)."""
    check_type("history", history, History)
    names = sorted((k for k in history.clients if k.startswith("weight_")), key=lambda k: int(k.split("_")[1]))
    if not names:
        raise ValueError(f"history holds no weight_j (a GaussianFEMOMD run has them); recorded: "
                         f"{sorted(history.clients)}.")
    return np.stack([_clients_metric(history, k) for k in names], axis=-1)


def logged(history: History, name: str) -> np.ndarray:
    """The per-round entry ``name`` of ``History.log`` as an array, rounds first (``grad_err``: (T, C), ``eta``: (T,))."""
    check_type("history", history, History)
    check_type("name", name, str)
    if not history.log or any(name not in entry for entry in history.log):
        raise ValueError(f"name={name!r} is not in history.log at every round (recorded: "
                         f"{sorted(history.log[0]) if history.log else 'nothing'}).")
    return np.array([entry[name] for entry in history.log], dtype=float)


# ----------------------------------------------------------------------------------------- discriminative models

@dataclass(frozen=True)
class FEMOMDState:
    """Global components stacked ``(m, ...)``, every client's log mixture weights ``(C, m)`` and the step count."""

    params: Params
    log_pi: np.ndarray
    round: int = 0

    @property
    def weights(self) -> np.ndarray:
        """Mixture weights :math:`\\pi_{t,c}`, shape (C, m)."""
        return np.exp(self.log_pi)


def _rows(n_clients: int, m: int) -> torch.Tensor:
    return torch.arange(n_clients).repeat_interleave(m)                  # row c*m + j <- client c


class FEMOMD:
    r"""FEM-OMD for discriminative models (Algorithm 17) on the engine.

    Component :math:`j` is a model :math:`h_{\omega_j}` and
    :math:`\check P_{\omega}(x, y)\propto\exp(-\ell(h_\omega(x), y))`, i.e. :math:`p_\omega(y|x)` for the
    cross-entropy. Client :math:`c` predicts with the mixture
    :math:`p_{t,c}(y|x) = \sum_j\pi_{t,c,j}\,p_{\omega_{t,j}}(y|x)`. One round (= one time step) on the step's
    samples ``data.train``:

    1. every client starts from the broadcast components and :math:`\tilde\pi^{(1)}` (uniform or its
       :math:`\pi_{t,c}`); K times: E-step (4.44)
       :math:`w_{c,i,j}\propto\tilde\pi_{c,j}p_{\tilde\omega_j}(y_i|x_i)`, weights (4.45)
       :math:`\tilde\pi_{c,j} = \frac1{n_c}\sum_iw_{c,i,j}`, components (4.46): ``solver.local_steps`` SGD steps
       of the responsibility-weighted loss :math:`\frac1{n_c}\sum_iw_{c,i,j}\ell_i` (``local_sgd`` with
       ``rows``/``sample_weight``; the EM step ``solver.lr`` is separate from the OMD step, spec A.5 item 7),
       then the server synchronisation
       :math:`\tilde\omega_j = \sum_c\tilde\pi_{c,j}\tilde\omega_{c,j}/\sum_c\tilde\pi_{c,j}`;
    2. :math:`\omega_{t+1} = \frac{t}{t+1}\omega_t + \frac1{t+1}\tilde\omega^{(K+1)}` (``average="running"``, as
       printed) or :math:`\omega_{t+1} = \tilde\omega^{(K+1)}` (``average="last"``);
    3. gradient at the played weights, with the samples' inputs:
       ``gradient="model"``:
       :math:`\hat\nabla_{c,j} = -\frac1{n_c}\sum_i\sum_y q_{c}(y|x_i)\,p_j(y|x_i)/\sum_l\pi_{t,c,l}p_l(y|x_i)`
       with :math:`q_c = \sum_r\tilde\pi_{c,r}p_{\omega_{t+1,r}}` (the expectation of line 13, exact over the labels);
       ``gradient="samples"``: the observed labels :math:`y_i` instead of the sum over :math:`q_c`;
    4. :func:`omd_step` with :math:`\eta_t` from :data:`STEP_SCHEDULES`.

    Online, ``fedlab.engine.run(algorithm, stream, rounds=T, order="evaluate_first")`` on a stream
    ``t -> FederatedDataset`` (the step's samples in ``train``, held-out ones in ``test``) scores the played model
    before it learns: ``History.clients["test_accuracy"][t]`` is :math:`\mathrm{Acc}(h_{t,c}, \mathcal S'_{t,c})`
    of (4.47). On a fixed data set every round re-uses the same samples.

    Parameters
    ----------
    model : Model
        A classifier (cross-entropy).
    solver : LocalSGD
        Local solver of the M-step (4.46).
    n_components : int
        :math:`m \ge 1` (default 3).
    lr : float
        OMD step :math:`\eta_0 > 0`.
    schedule : {"anytime", "fixed", "constant"}
    horizon : int, optional
        :math:`T`, required by ``schedule="fixed"``.
    n_em_steps : int
        K.
    grad_clip : float or None
    gradient : {"model", "samples"}
    pi_init : {"uniform", "previous"}
    average : {"running", "last"}
    backend : {"auto", "batched", "loop"}
    """

    def __init__(self, model: Model, solver: LocalSGD, *, n_components: int = 3, lr: float = 1.0,
                 schedule: str = "anytime", horizon: int | None = None, n_em_steps: int = 1,
                 grad_clip: float | None = 10.0, gradient: str = "model", pi_init: str = "uniform",
                 average: str = "running", backend: str = "auto") -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model must be a fedlab Model, got {type(model).__name__}.")
        if not model.is_classifier:
            raise ValueError(f"FEMOMD needs a classifier (loss='cross_entropy'), got loss={model.loss_name!r}.")
        check_solver(solver)
        self.model, self.solver = model, solver
        self.n_components = check_int("n_components", n_components, low=1)
        self.lr = check_real("lr", lr, low=0, low_open=True)
        self.schedule = check_choice("schedule", schedule, STEP_SCHEDULES)
        self.horizon = None if horizon is None else check_int("horizon", horizon, low=1)
        if self.schedule == "fixed" and self.horizon is None:
            raise ValueError("schedule='fixed' needs horizon=T (eta = lr * sqrt(log m / T)).")
        self.n_em_steps = check_int("n_em_steps", n_em_steps, low=1)
        self.grad_clip = None if grad_clip is None else check_real("grad_clip", grad_clip, low=0, low_open=True)
        self.gradient = check_choice("gradient", gradient, DISCRIMINATIVE_GRADIENTS)
        self.pi_init = check_choice("pi_init", pi_init, PI_INITS)
        self.average = check_choice("average", average, ("running", "last"))
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    # -- helpers --------------------------------------------------------------------------------
    def _log_proba(self, params: Params, x: torch.Tensor) -> torch.Tensor:
        """log p_j(y|x) for every component and sample: params (m, ...), x (C, n, ...) -> (C, m, n, classes)."""
        c, n, m = x.shape[0], x.shape[1], self.n_components
        pooled = x.reshape(1, c * n, *x.shape[2:]).expand(m, *([-1] * (x.dim() - 1)))   # every sample, per component
        out = self.model.forward_stacked(params, pooled)                                 # (m, C n, classes)
        return torch.log_softmax(out.double(), dim=-1).view(m, c, n, -1).transpose(0, 1)

    @staticmethod
    def _sync(params_rows: Params, pi_tilde: torch.Tensor, fallback: Params) -> Params:
        c, m = pi_tilde.shape
        total = pi_tilde.sum(0)
        w = pi_tilde / total.clamp_min(1e-300)
        out = {}
        for k, v in params_rows.items():
            rows = v.view(c, m, *v.shape[1:]).double()
            mixed = torch.einsum("cm,cm...->m...", w, rows).to(v.dtype)
            keep = (total <= 0).view(m, *([1] * (v.dim() - 1)))
            out[k] = torch.where(keep, fallback[k], mixed)
        return out

    # -- the algorithm protocol -------------------------------------------------------------------
    def init(self, data: FederatedDataset, seed: int) -> FEMOMDState:
        check_data(self.model, data)
        params = init_stacked(self.model, self.n_components, torch_generator(seed, 0, Stream.ONLINE_INIT), same=False)
        params = {k: v.to(data.device) for k, v in params.items()}      # drawn on the CPU: the same on every device
        log_pi = np.full((data.n_clients, self.n_components), -math.log(self.n_components))
        return FEMOMDState(params, log_pi, 0)

    def round(self, state: FEMOMDState, data: FederatedDataset, seed: int) -> tuple[FEMOMDState, dict]:
        train, m = data.train, self.n_components
        c = train.n_clients
        if state.log_pi.shape != (c, m):
            raise ValueError(f"the state holds weights for {state.log_pi.shape[0]} clients, the data has {c}.")
        t = state.round + 1
        rows = _rows(c, m)
        mask = train.mask.double()                                       # (C, n)
        n_c = mask.sum(1).clamp_min(1.0)
        y = train.y.clamp_min(0)
        log_pi0 = np.full((c, m), -math.log(m)) if self.pi_init == "uniform" else state.log_pi
        log_pt = torch.as_tensor(log_pi0, device=train.x.device)
        omega = state.params
        pi_tilde = torch.exp(log_pt)
        losses = []
        for k in range(self.n_em_steps):
            with torch.no_grad():
                logp = self._log_proba(omega, train.x)                  # (C, m, n, classes)
                ll = logp.gather(-1, y[:, None, :, None].expand(c, m, -1, 1)).squeeze(-1)   # (C, m, n)
                a = log_pt[:, :, None] + ll
                resp = torch.exp(a - torch.logsumexp(a, dim=1, keepdim=True)) * mask[:, None, :]
                pi_tilde = resp.sum(2) / n_c[:, None]                    # (4.45)
            start = {kk: v.repeat(c, *([1] * (v.dim() - 1))) for kk, v in omega.items()}
            weight = resp.reshape(c * m, -1).to(train.x.dtype)
            new_rows, loss = local_sgd(self.model, start, train, self.solver, key=(seed, state.round, Stream.ONLINE_EM, k),
                                       rows=rows, sample_weight=weight, backend=self.backend)
            losses.append(float(loss.mean()))
            omega = self._sync(new_rows, pi_tilde, omega)
            log_pt = torch.log(pi_tilde).clamp_min(LOG_FLOOR)
        if self.average == "running":
            omega = {k: (t / (t + 1)) * state.params[k] + omega[k] / (t + 1) for k in omega}
        with torch.no_grad():
            logp = self._log_proba(omega, train.x)                      # (C, m, n, classes), at omega_{t+1}
            log_pi = torch.as_tensor(state.log_pi, device=train.x.device)
            log_den = torch.logsumexp(log_pi[:, :, None, None] + logp, dim=1, keepdim=True)   # (C, 1, n, classes)
            log_ratio = logp - log_den                                  # log p_j / sum_l pi_l p_l
            if self.gradient == "model":
                log_q = torch.logsumexp(torch.log(pi_tilde.clamp_min(1e-300))[:, :, None, None] + logp, dim=1,
                                        keepdim=True)
                per_sample = torch.logsumexp(log_q + log_ratio, dim=-1)  # (C, m, n)
            else:
                per_sample = log_ratio.gather(-1, y[:, None, :, None].expand(c, m, -1, 1)).squeeze(-1)
            per_sample = per_sample.masked_fill(mask[:, None, :] == 0, -math.inf)
            log_neg = torch.logsumexp(per_sample, dim=-1) - torch.log(n_c)[:, None]
        g = _grad_from_log(log_neg.cpu().numpy())
        if self.grad_clip is not None:
            g = np.maximum(g, -self.grad_clip)
        eta = STEP_SCHEDULES[self.schedule](t, self.horizon, m, self.lr)
        new_log_pi = omd_log_step(state.log_pi, g, eta, None) if m > 1 else state.log_pi
        if not all(all_finite(v) for v in omega.values()):
            raise DivergenceError(f"FEM-OMD components became non-finite at step {t}; try a smaller solver lr "
                                  f"(now {self.solver.lr}).")
        info = {"eta": float(eta), "local_loss": float(np.mean(losses)),
                "pi_tilde_mean": pi_tilde.mean(0).tolist(), "max_abs_grad": float(np.abs(g).max())}
        return FEMOMDState(omega, new_log_pi, t), info

    @torch.no_grad()
    def predict_proba(self, state: FEMOMDState, x: torch.Tensor) -> torch.Tensor:
        r"""Mixture predictions :math:`\sum_j\pi_{c,j}p_{\omega_j}(y|x)` of every client on its samples.

        ``x`` has shape (C, n, ...); returns probabilities (C, n, classes).
        """
        logp = self._log_proba(state.params, x)
        log_pi = torch.as_tensor(state.log_pi, device=logp.device)
        return torch.exp(torch.logsumexp(log_pi[:, :, None, None] + logp, dim=1))

    def evaluate(self, state: FEMOMDState, data: FederatedDataset) -> dict[str, np.ndarray]:
        """``train_loss``/``train_accuracy`` and ``test_*`` of every client's mixture, arrays (C,)."""
        out = metrics_from_proba(self.predict_proba(state, data.train.x).float(), data.train, "train_")
        out.update(metrics_from_proba(self.predict_proba(state, data.test.x).float(), data.test, "test_"))
        return out


# ----------------------------------------------------------------------------------------- the FedOMD baseline

FEDOMD_SCHEDULES = ("anytime", "constant")


class FedOMD(FedAvg):
    r"""FedOMD (Mitra, Hassani and Pappas, 2021) with the Euclidean mirror map: the baseline of thesis §4.4.5.2.

    With the regulariser :math:`\mathcal R(\theta) = \frac12\|\theta\|_2^2` (the ":math:`L_2`-regularized
    implementation"), the mirror step :math:`\theta\leftarrow\arg\min_\theta\eta_t\langle g,\theta\rangle +
    D_{\mathcal R}(\theta, \theta_t)` is the gradient step :math:`\theta_t - \eta_tg`: every client runs
    ``solver.local_steps`` online gradient steps on the samples of step t from the broadcast global model, and the
    server averages. One global model, no mixture: clients play the same model whatever their weights. The step is
    :math:`\eta_t = \eta_0/\sqrt t` (``"anytime"``, the schedule behind FedOMD's :math:`O(\sqrt T)` regret) or
    :math:`\eta_0` (``"constant"``), with :math:`\eta_0` = ``solver.lr``; an :math:`L_2` penalty on the loss is
    ``solver.weight_decay``.

    Run online with ``fedlab.engine.run(FedOMD(...), stream, rounds=T, order="evaluate_first")``; the info of round
    t holds ``lr`` (:math:`\eta_t`) and ``local_loss``.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
    schedule : {"anytime", "constant"}
    weights : "size", "uniform" or array (K,)
        Server weights.
    backend : {"auto", "batched", "loop"}
    """

    def __init__(self, model: Model, solver: LocalSGD, *, schedule: str = "anytime", weights="uniform",
                 backend: str = "auto") -> None:
        super().__init__(model, solver, participation=1.0, weights=weights, backend=backend)
        self.schedule = check_choice("schedule", schedule, FEDOMD_SCHEDULES)

    def round(self, state: ServerState, data: FederatedDataset, seed: int) -> tuple[ServerState, dict]:
        t = state.round + 1
        lr = self.solver.lr / math.sqrt(t) if self.schedule == "anytime" else self.solver.lr
        start = broadcast(state.params, data.n_clients)
        new, loss = local_sgd(self.model, start, data.train, replace(self.solver, lr=lr),
                              key=(seed, state.round, Stream.LOCAL), anchor=start, backend=self.backend)
        p = client_weights(self.weights, data.train)
        return ServerState(weighted_average(new, p), t), {"lr": lr, "local_loss": float(loss.mean())}


# ----------------------------------------------------------------------------------------- the separated limit

@dataclass(frozen=True)
class OMDState:
    """Every client's log weights ``(C, m)`` and the step count."""

    log_pi: np.ndarray
    round: int = 0

    @property
    def weights(self) -> np.ndarray:
        """Weights :math:`\\pi_{t,c}`, shape (C, m)."""
        return np.exp(self.log_pi)


class OMD:
    r"""Entropic online mirror descent on the simplex with exact gradients: the fully separated limit of FEM-OMD.

    When the components do not overlap, the loss (4.24) of played weights :math:`\pi` is
    :math:`\psi_t(\pi) = \mathrm{KL}(\pi^*_t\|\pi)` with the exact gradient :math:`-\pi^*_t/\pi` (spec fact A9), and
    FEM-OMD reduces to Algorithm 16 without gradient error: Theorem 4.4.3 applies with its first term only. The data
    of round t is :math:`\pi^*_t`, an array (C, m) on the simplex (one row per client; a stream ``t -> array``).
    ``evaluate`` scores the played weights, ``kl`` :math:`= \mathrm{KL}(\pi^*_t\|\pi_t)` per client; ``round``
    takes the step :func:`omd_step` with :math:`\eta_t` from :data:`STEP_SCHEDULES` (``"constant"``: the fixed
    :math:`\eta` of the theorem, e.g. :func:`fedlab.online.bounds.omd_stepsize`). Its info: ``eta`` and
    ``max_grad`` (:math:`\max_c\|\nabla_{t,c}\|_\infty`, what :math:`G_{\mathcal R}` must bound).

    Parameters
    ----------
    lr : float
        :math:`\eta_0 > 0`.
    schedule : {"anytime", "fixed", "constant"}
    horizon : int, optional
        T, required by ``schedule="fixed"``.

    >>> from fedlab.engine import run
    >>> pi_star = np.array([[0.9, 0.1], [0.8, 0.2], [0.9, 0.1]])
    >>> state, history = run(OMD(lr=0.5, schedule="constant"), lambda t: pi_star[t][None], rounds=3,
    ...                      order="evaluate_first", progress=False)
    >>> bool(state.weights[0, 0] > 0.5)
    True
    """

    def __init__(self, *, lr: float = 1.0, schedule: str = "constant", horizon: int | None = None) -> None:
        self.lr = check_real("lr", lr, low=0, low_open=True)
        self.schedule = check_choice("schedule", schedule, STEP_SCHEDULES)
        self.horizon = None if horizon is None else check_int("horizon", horizon, low=1)
        if self.schedule == "fixed" and self.horizon is None:
            raise ValueError("schedule='fixed' needs horizon=T (eta = lr * sqrt(log m / T)).")

    @staticmethod
    def _weights(data: Any) -> np.ndarray:
        pi_star = check_simplex("data", data, ndim=2)
        if 0 in pi_star.shape:
            raise ValueError(f"data must hold the weights of at least one client, shape (C, m), got {pi_star.shape}.")
        return pi_star

    def init(self, data: Any, seed: int) -> OMDState:
        c, m = self._weights(data).shape
        check_int("seed", seed, low=0)
        return OMDState(np.full((c, m), -math.log(m)), 0)

    def round(self, state: OMDState, data: Any, seed: int) -> tuple[OMDState, dict]:
        pi_star = self._weights(data)
        if pi_star.shape != state.log_pi.shape:
            raise ValueError(f"data must have the state's shape {state.log_pi.shape}, got {pi_star.shape}.")
        t, m = state.round + 1, pi_star.shape[1]
        grad = -pi_star / np.exp(state.log_pi)
        eta = STEP_SCHEDULES[self.schedule](t, self.horizon, m, self.lr)
        info = {"eta": eta, "max_grad": float(np.abs(grad).max())}
        return OMDState(omd_log_step(state.log_pi, grad, eta, None), t), info

    def evaluate(self, state: OMDState, data: Any) -> dict[str, np.ndarray]:
        """``kl``: :math:`\\mathrm{KL}(\\pi^*_t\\|\\pi_t)` of every client, array (C,)."""
        pi_star = self._weights(data)
        return {"kl": np.sum(pi_star * (np.log(pi_star) - np.log(np.exp(state.log_pi))), axis=-1)}


# ----------------------------------------------------------------------------------------- the chapter's methods

for _name, _cls, _label in [
        ("gaussian_fem_omd", GaussianFEMOMD, "FEM-OMD for Gaussian mixtures (Algorithm 15)"),
        ("omd", OMD, "entropic OMD, exact gradients (separated limit)"),
        ("fem_omd", FEMOMD, "FEM-OMD"), ("fedomd", FedOMD, "FedOMD (Euclidean)")]:
    METHODS.register(_name, _cls, chapter="online", label=_label)

PRESETS = METHODS.presets("online")
"""The chapter's methods by short name. ``fem_omd`` and ``fedomd`` build as ``PRESETS[name](model, solver,
**options)``; the numpy simulations ``gaussian_fem_omd`` and ``omd`` take no model: build them from their class,
``PRESETS[name].cls(**options)``."""
