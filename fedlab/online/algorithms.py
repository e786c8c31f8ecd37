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
client-specific. Mixture weights live in log space with a floor (:data:`LOG_FLOOR`) and every ratio of
densities is formed in log space, so components whose weight goes to 0 never produce NaN or inf
(spec §A.5 item 12).

Two instances:

* Gaussian mixtures :math:`\check P_j = \mathcal N(\mu^*_j, \sigma^2 I_d)` (Algorithm 15), a numpy
  simulation with the exact loss and regret: :func:`fem_omd_gmm` and its building blocks
  (:func:`gmm_responsibilities`, :func:`em_local_step`, :func:`sync_means`, :func:`federated_em`,
  :func:`mixture_weight_gradient`, :func:`omd_step`, :func:`mixture_kl`, :func:`center_error`);
* discriminative models :math:`\check P_\omega(x, y)\propto\exp(-\ell(h_\omega; x, y))` (Algorithm 17) on the
  engine: :class:`FEMOMD` (components as stacked parameters trained with ``local_sgd`` on
  responsibility-weighted samples) and the online loop :func:`run_online`.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from fedlab._rng import Stream, as_numpy_rng, numpy_rng, torch_generator
from fedlab._validation import check_array, check_choice, check_int, check_real, check_simplex
from fedlab.engine import FederatedDataset, History, LocalSGD, local_sgd, metrics_from_proba
from fedlab.engine.local import DivergenceError
from fedlab.models import Model, Params, init_stacked
from fedlab.algorithms._common import check_solver
from fedlab.algorithms import METHODS

__all__ = [
    "LOG_FLOOR",
    "STEP_SCHEDULES",
    "GMM_GRADIENTS",
    "DISCRIMINATIVE_GRADIENTS",
    "PI_INITS",
    "step_size",
    "omd_step",
    "gmm_responsibilities",
    "em_local_step",
    "sync_means",
    "federated_em",
    "mixture_weight_gradient",
    "mixture_kl",
    "center_error",
    "GMMRun",
    "fem_omd_gmm",
    "FEMOMDState",
    "FEMOMD",
    "run_online",
]

LOG_FLOOR = -1000.0        # log-weights never go below this: exp() underflows to 0 but the log stays finite
_LOG_CAP = math.log(1e300)  # largest log-magnitude of a gradient entry or of a step (keeps exp() finite)
_STEP_CAP = 1e300

# random streams (keys (seed, t, stream)); the data stream does not depend on the algorithm's options


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

def _lse(a: np.ndarray, axis: int = 0, keepdims: bool = False) -> np.ndarray:
    """log-sum-exp with the max shift (rows that are all -inf give -inf); faster than scipy's for small arrays."""
    mx = np.max(a, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True)) + mx
    return out if keepdims else np.squeeze(out, axis=axis)


def _normalise_log(log_w: np.ndarray) -> np.ndarray:
    out = log_w - _lse(log_w, -1, keepdims=True)
    out = np.maximum(out, LOG_FLOOR)
    return out - _lse(out, -1, keepdims=True)


def omd_log_step(log_pi: np.ndarray, grad: np.ndarray, eta: float, grad_clip: float | None) -> np.ndarray:
    if grad_clip is not None:
        grad = np.clip(grad, -grad_clip, grad_clip)
    with np.errstate(over="ignore", invalid="ignore"):
        step = np.clip(eta * grad, -_STEP_CAP, _STEP_CAP)
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
    :data:`LOG_FLOOR`, so the output is finite and sums to 1 even for huge gradients or weights that
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

def _check_variance(variance: Any) -> float:
    return check_real("variance", variance, low=0, low_open=True)


def _log_weights(pi: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(pi), LOG_FLOOR)


def _log_gauss(x: np.ndarray, means: np.ndarray, variance: float) -> np.ndarray:
    """Unnormalised log-density :math:`-\\|x-\\mu_j\\|^2/2\\sigma^2`, component axis first.

    x (..., d), means (m, d) -> (m, ...).
    """
    sq = np.einsum("...d,...d->...", x, x)[None] - 2.0 * np.einsum("jd,...d->j...", means, x)
    sq += np.einsum("jd,jd->j", means, means).reshape((-1,) + (1,) * (x.ndim - 1))
    return -0.5 * np.maximum(sq, 0.0) / variance


def _check_means(name: str, value: Any) -> np.ndarray:
    return check_array(name, value, ndim=2)


def _check_samples(x: Any, d: int) -> np.ndarray:
    arr = check_array("x", x)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[-1] != d or arr.shape[1] == 0:
        raise ValueError(f"x must have shape (C, n, d) or (n, d) with d = {d} and n >= 1, got {np.shape(x)}.")
    return arr


def _client_weights(name: str, value: Any, n_clients: int, m: int) -> np.ndarray:
    arr = check_simplex(name, value, size=m)
    if arr.ndim == 1:
        arr = np.broadcast_to(arr, (n_clients, m))
    if arr.shape != (n_clients, m):
        raise ValueError(f"{name} must have shape ({m},) or ({n_clients}, {m}), got {arr.shape}.")
    return arr


def _responsibilities(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variance: float) -> np.ndarray:
    """E-step (4.34) in log space: x (C, n, d), log_pi (C, m) -> r (m, C, n), component axis first."""
    a = log_pi.T[:, :, None] + _log_gauss(x, means, variance)
    return np.exp(a - _lse(a, 0, keepdims=True))


def gmm_responsibilities(x: Any, pi: Any, means: Any, *, variance: float = 1.0) -> np.ndarray:
    r"""E-step (4.34), in log space: the responsibility of each component for each sample.

    .. math::
        w_{c,i,j} = \frac{\pi_{c,j}f_{\mu_j}(x_{c,i})}{\sum_l\pi_{c,l}f_{\mu_l}(x_{c,i})}.

    Parameters
    ----------
    x : array (C, n, d) or (n, d)
        Samples of each client.
    pi : array (C, m) or (m,)
        Mixture weights on the simplex (a zero weight gives a zero responsibility).
    means : array (m, d)
        Component means :math:`\mu_j`; components are :math:`\mathcal N(\mu_j, \sigma^2 I_d)`.
    variance : float
        :math:`\sigma^2 > 0`.

    Returns
    -------
    np.ndarray (C, n, m)
        Rows on the simplex.
    """
    mu = _check_means("means", means)
    xs = _check_samples(x, mu.shape[1])
    pi = _client_weights("pi", pi, xs.shape[0], mu.shape[0])
    return _responsibilities(xs, _log_weights(pi), mu, _check_variance(variance)).transpose(1, 2, 0)


def _em_local(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variance: float):
    r = _responsibilities(x, log_pi, means, variance)                   # (m, C, b)
    mass = r.sum(-1).T                                                  # (C, m)
    pi_tilde = mass / x.shape[1]
    weighted = np.einsum("mcb,cbd->cmd", r, x)                          # (C, m, d)
    safe = mass[..., None] > 0
    local = np.where(safe, weighted / np.where(safe, mass[..., None], 1.0), means[None])
    return pi_tilde, local, mass, weighted


def em_local_step(x: Any, pi: Any, means: Any, *, variance: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""One local EM update of every client (eqs. (4.34)–(4.36)), the M-step dividing by the batch size.

    .. math::
        \tilde\pi_{c,j} = \frac1b\sum_{i=1}^b w_{c,i,j},\qquad
        \tilde\mu_{c,j} = \frac{\sum_i w_{c,i,j}x_{c,i}}{\sum_i w_{c,i,j}}.

    Parameters
    ----------
    x : array (C, b, d) or (b, d)
        The batch of each client.
    pi : array (C, m) or (m,)
        Current weights :math:`\tilde\pi^{(k)}` on the simplex.
    means : array (m, d)
        Current (synchronised) means :math:`\tilde\mu^{(k)}`.
    variance : float
        :math:`\sigma^2 > 0`.

    Returns
    -------
    pi_tilde : np.ndarray (C, m)
    local_means : np.ndarray (C, m, d)
        A component with no responsibility at a client keeps the broadcast mean there (its weight in the
        synchronisation is 0).
    """
    mu = _check_means("means", means)
    xs = _check_samples(x, mu.shape[1])
    pi = _client_weights("pi", pi, xs.shape[0], mu.shape[0])
    pi_tilde, local, _, _ = _em_local(xs, _log_weights(pi), mu, _check_variance(variance))
    return pi_tilde, local


def _sync(pi_tilde: np.ndarray, local: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    total = pi_tilde.sum(0)                                             # (m,)
    num = np.einsum("cm,cmd->md", pi_tilde, local)
    ok = total[:, None] > 0
    return np.where(ok, num / np.where(ok, total[:, None], 1.0), fallback)


def sync_means(pi_tilde: Any, local_means: Any, fallback: Any) -> np.ndarray:
    r"""Server synchronisation of the means (Algorithm 15, line 11).

    .. math::
        \tilde\mu_j = \frac{\sum_c\tilde\pi_{c,j}\tilde\mu_{c,j}}{\sum_c\tilde\pi_{c,j}}.

    With equal batch sizes this is the pooled-data M-step :math:`\sum_{c,i}w_{c,i,j}x_{c,i}/\sum_{c,i}w_{c,i,j}`
    (dynamic spec A.8, fact A4).

    Parameters
    ----------
    pi_tilde : array (C, m)
        Local weights (non-negative).
    local_means : array (C, m, d)
    fallback : array (m, d)
        Mean kept by a component that no client gives weight to.

    Returns
    -------
    np.ndarray (m, d)
    """
    lm = check_array("local_means", local_means, ndim=3)
    pt = check_array("pi_tilde", pi_tilde, shape=lm.shape[:2], nonnegative=True)
    fb = check_array("fallback", fallback, shape=lm.shape[1:])
    return _sync(pt, lm, fb)


def _federated_em(x: np.ndarray, means: np.ndarray, log_pi0: np.ndarray, n_steps: int, split: bool,
                  variance: float) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[1]
    b = n // n_steps if (split and n >= n_steps) else n
    mu, log_pi = means, log_pi0
    pi_tilde = np.exp(log_pi0)
    for k in range(n_steps):
        xb = x[:, k * b:(k + 1) * b] if b < n else x
        pi_tilde, local, _, _ = _em_local(xb, log_pi, mu, variance)
        mu = _sync(pi_tilde, local, mu)
        log_pi = _log_weights(pi_tilde)
    return pi_tilde, mu


def federated_em(x: Any, means: Any, pi_init: Any, *, n_steps: int = 3, split: bool = True,
                 variance: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""The inner loop of Algorithm 15: K rounds of local EM steps and server synchronisation.

    It solves, in a distributed way, the pooled likelihood problem (4.26). With ``split`` the n samples
    are cut into K batches of size :math:`\lfloor n/K\rfloor` and step k uses batch k (sample splitting);
    with ``n < K`` or ``split=False`` every step uses all samples (dynamic spec A.5 item 4).

    Parameters
    ----------
    x : array (C, n, d) or (n, d)
    means : array (m, d)
        Starting means :math:`\tilde\mu^{(1)} = \mu_t`.
    pi_init : array (C, m) or (m,)
        :math:`\tilde\pi^{(1)}` on the simplex.
    n_steps : int
        :math:`K \ge 1`.
    split : bool
    variance : float
        :math:`\sigma^2 > 0`.

    Returns
    -------
    pi_tilde : np.ndarray (C, m)
        :math:`\tilde\pi^{(K+1)}_{t,c}`.
    means : np.ndarray (m, d)
        :math:`\tilde\mu^{(K+1)}_{t+1}`.
    """
    mu = _check_means("means", means)
    xs = _check_samples(x, mu.shape[1])
    pi = _client_weights("pi_init", pi_init, xs.shape[0], mu.shape[0])
    k = check_int("n_steps", n_steps, low=1)
    return _federated_em(xs, mu, _log_weights(pi), k, bool(split), _check_variance(variance))


def _sample_mixture(rng: np.random.Generator, pi: np.ndarray, means: np.ndarray, n: int, variance: float) -> np.ndarray:
    """n draws per row of ``pi`` (C, m) from :math:`\\sum_j\\pi_j\\mathcal N(\\mu_j,\\sigma^2I)`: (C, n, d)."""
    cdf = np.cumsum(pi, axis=-1)
    u = rng.random((pi.shape[0], n)) * cdf[:, -1:]
    z = np.minimum((u[..., None] > cdf[:, None, :]).sum(-1), pi.shape[1] - 1)
    return means[z] + math.sqrt(variance) * rng.standard_normal((pi.shape[0], n, means.shape[1]))


def _log_neg_grad(z: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variance: float) -> np.ndarray:
    r"""log of :math:`-\hat\nabla_j = \mathrm{mean}_i f_j(z_i)/\sum_l\pi_l f_l(z_i)` for z (C, N, d) -> (C, m)."""
    lf = _log_gauss(z, means, variance)                                  # (m, C, N)
    log_ratio = lf - _lse(log_pi.T[:, :, None] + lf, 0)[None]
    return (_lse(log_ratio, -1) - math.log(z.shape[1])).T


def _grad_from_log(log_neg: np.ndarray) -> np.ndarray:
    return -np.exp(np.minimum(log_neg, _LOG_CAP))


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
    mu = _check_means("means", means)
    variance = _check_variance(variance)
    if (pi_tilde is None) == (samples is None):
        raise ValueError("give exactly one of pi_tilde (Monte Carlo from the estimated mixture) and samples.")
    pi = check_simplex("pi", pi, size=mu.shape[0])
    if samples is not None:
        z = _check_samples(samples, mu.shape[1])
        n_clients = z.shape[0]
    else:
        pt = check_simplex("pi_tilde", pi_tilde, size=mu.shape[0])
        n_clients = max(1 if pt.ndim == 1 else pt.shape[0], 1 if pi.ndim == 1 else pi.shape[0])
        pt = _client_weights("pi_tilde", pt, n_clients, mu.shape[0])
        n_mc = check_int("n_mc", n_mc, low=1)
        rng = as_numpy_rng(rng)
        z = _sample_mixture(rng, pt, mu, n_mc, variance)
    pi = _client_weights("pi", pi, n_clients, mu.shape[0])
    return _grad_from_log(_log_neg_grad(z, _log_weights(pi), mu, variance))


def _density_parts(lf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Component log-densities lf (m, ...) flattened to (m, P), their max over components (P,) and exp(lf - max)."""
    flat = lf.reshape(lf.shape[0], -1)
    mx = flat.max(0)
    return flat, mx, np.exp(flat - mx)


def _mixture_log_density(log_pi: np.ndarray, parts: tuple) -> np.ndarray:
    """log sum_l pi_{c,l} f_l(z_p) for log_pi (C, m) -> (C, P): one matmul, exact log-sum-exp where it underflows."""
    flat, mx, e = parts
    dens = np.exp(log_pi) @ e
    if dens.min() > 0:
        return np.log(dens) + mx
    with np.errstate(divide="ignore"):
        out = np.log(dens) + mx
    bad = np.nonzero(dens <= 0)
    out[bad] = _lse(log_pi[bad[0]].T + flat[:, bad[1]], 0)
    return out


def mixture_kl(pi_p: Any, means_p: Any, pi_q: Any, means_q: Any, *, n_mc: int = 1000, rng: Any = None,
               variance: float = 1.0) -> np.ndarray:
    r"""Monte-Carlo KL between two spherical Gaussian mixtures, the loss (4.24) of the GMM instance.

    .. math::
        \mathrm{KL}(P\|Q) = \sum_r \pi^P_r\,
        \mathbb E_{z\sim\mathcal N(\mu^P_r,\sigma^2I)}\left[\log\frac{P(z)}{Q(z)}\right],
        \quad P = \sum_r\pi^P_r\mathcal N(\mu^P_r,\sigma^2I),\ Q = \sum_l\pi^Q_l\mathcal N(\mu^Q_l,\sigma^2I),

    estimated with ``n_mc`` draws per component of P (stratified sampling, unbiased); the draws are
    shared by the rows of ``pi_p`` / ``pi_q``.

    Parameters
    ----------
    pi_p, pi_q : array (C, m) or (m,)
        Weights on the simplex (rows paired).
    means_p, means_q : array (m, d)
    n_mc : int
    rng : numpy Generator, int or None
    variance : float

    Returns
    -------
    np.ndarray (C,)
    """
    mp = _check_means("means_p", means_p)
    mq = check_array("means_q", means_q, ndim=2)
    if mq.shape[1] != mp.shape[1]:
        raise ValueError(f"means_q must have dimension {mp.shape[1]}, got shape {mq.shape}.")
    pp, pq = check_simplex("pi_p", pi_p, size=mp.shape[0]), check_simplex("pi_q", pi_q, size=mq.shape[0])
    c = max(1 if pp.ndim == 1 else pp.shape[0], 1 if pq.ndim == 1 else pq.shape[0])
    pp, pq = _client_weights("pi_p", pp, c, mp.shape[0]), _client_weights("pi_q", pq, c, mq.shape[0])
    n_mc = check_int("n_mc", n_mc, low=1)
    variance = _check_variance(variance)
    rng = as_numpy_rng(rng)
    z = mp[:, None, :] + math.sqrt(variance) * rng.standard_normal((mp.shape[0], n_mc, mp.shape[1]))
    log_p = _mixture_log_density(_log_weights(pp), _density_parts(_log_gauss(z, mp, variance)))   # (C, m_P * n)
    log_q = _mixture_log_density(_log_weights(pq), _density_parts(_log_gauss(z, mq, variance)))
    return np.einsum("cr,cr->c", pp, (log_p - log_q).reshape(c, mp.shape[0], n_mc).mean(-1))


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
    mu = _check_means("means", means)
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


@dataclass(frozen=True)
class GMMRun:
    r"""Trajectory of :func:`fem_omd_gmm` (T steps, C clients, m components, dimension d).

    Attributes
    ----------
    loss : np.ndarray (T, C)
        :math:`\varphi_{t,c}(\theta_{t,c})`, the KL (4.24) of the played model (Monte Carlo).
    comparator_loss : np.ndarray (T, C)
        :math:`\varphi_{t,c}` of the best fixed model in hindsight, :math:`(\mu^*, \bar\pi^*_c)` with
        :math:`\bar\pi^*_c = \frac1T\sum_s\pi^*_{s,c}`, on the same draws (common random numbers).
    regret : np.ndarray (T, C)
        :math:`R_{t,c} = \sum_{s\le t}\varphi_{s,c}(\theta_{s,c}) - \varphi_{s,c}(\mu^*,\bar\pi^*_c)`; at
        :math:`t = T` this is the regret (4.25) exactly (up to Monte Carlo).
    grad_err : np.ndarray (T, C)
        :math:`\|\nabla_{t,c} - \hat\nabla_{t,c}\|_\infty`, the true gradient (4.27) estimated on the loss draws.
    grad_norm : np.ndarray (T, C)
        :math:`\|\hat\nabla_{t,c}\|_\infty` (after clipping).
    eta : np.ndarray (T,)
    pi : np.ndarray (T+1, C, m)
        Played weights :math:`\pi_{t,c}` (row 0 is the initialisation).
    means : np.ndarray (T+1, m, d)
        Played means :math:`\mu_t`.
    center_error : np.ndarray (T+1,)
        :func:`center_error` of ``means``.
    config : dict
    """

    loss: np.ndarray
    comparator_loss: np.ndarray
    regret: np.ndarray
    grad_err: np.ndarray
    grad_norm: np.ndarray
    eta: np.ndarray
    pi: np.ndarray
    means: np.ndarray
    center_error: np.ndarray
    config: dict = field(default_factory=dict)

    @property
    def horizon(self) -> int:
        return int(self.loss.shape[0])

    @property
    def mean_regret(self) -> np.ndarray:
        r""":math:`\bar R_t = \frac1C\sum_c R_{t,c}`, shape (T,)."""
        return self.regret.mean(1)

    @property
    def regret_per_step(self) -> float:
        r""":math:`\bar R_T / T`."""
        return float(self.mean_regret[-1] / self.horizon)

    def to_dict(self) -> dict:
        """JSON-serialisable summary: curves averaged over clients, final weights and means."""
        return {"t": list(range(1, self.horizon + 1)), "mean_regret": self.mean_regret.tolist(),
                "mean_loss": self.loss.mean(1).tolist(), "mean_comparator_loss": self.comparator_loss.mean(1).tolist(),
                "mean_grad_err": self.grad_err.mean(1).tolist(), "max_grad_norm": float(self.grad_norm.max()),
                "eta": self.eta.tolist(), "center_error": self.center_error.tolist(),
                "regret_per_step": self.regret_per_step, "final_means": self.means[-1].tolist(),
                "config": self.config}


def _initial_means(means_star: np.ndarray, init_scale: float, rng: np.random.Generator) -> np.ndarray:
    m, d = means_star.shape
    if m > 1:
        dist = np.linalg.norm(means_star[:, None] - means_star[None], axis=-1)
        sep = float(dist[~np.eye(m, dtype=bool)].min())
    else:
        sep = 1.0
    return means_star + init_scale * sep / math.sqrt(d) * rng.standard_normal((m, d))


def fem_omd_gmm(means_star: Any, weights_star: Any, *, n_samples: int = 30, n_em_steps: int = 3, lr: float = 1.0,
                schedule: str = "anytime", split: bool = True, grad_clip: float | None = 10.0,
                gradient: str = "model", pi_init: str = "uniform", n_mc: int | None = None,
                n_mc_loss: int = 200, means_init: Any = None, init_scale: float = 1.0 / 16,
                variance: float = 1.0, seed: int = 0, progress: bool | None = False) -> GMMRun:
    r"""Run FEM-OMD for Gaussian mixtures (Algorithm 15, index-corrected; dynamic spec §A.2.4) and measure its regret.

    The environment is :math:`\mathcal P_{t,c} = \sum_j\pi^*_{t,c,j}\mathcal N(\mu^*_j,\sigma^2I_d)`. Each step:
    score the played :math:`(\mu_t, \pi_{t,c})` (loss (4.24), regret (4.25) against
    :math:`(\mu^*,\bar\pi^*_c)`, the best fixed model in hindsight), draw n samples per client, run
    :func:`federated_em` (K steps), average the means over time, estimate the weight gradient
    (:func:`mixture_weight_gradient`) and take :func:`omd_step` with :math:`\eta_t` from
    :data:`STEP_SCHEDULES`.

    Parameters
    ----------
    means_star : array (m, d)
        True centres :math:`\mu^*_j`.
    weights_star : array (T, C, m)
        True weights :math:`\pi^*_{t,c}` on the simplex (chosen by the environment, possibly adversarially).
    n_samples : int
        Samples per client and step, :math:`n \ge 1`.
    n_em_steps : int
        Inner EM steps :math:`K \ge 1`.
    lr : float
        :math:`\eta_0 > 0` of the step schedule.
    schedule : {"anytime", "fixed", "constant"}
    split : bool
        Sample splitting in the inner loop.
    grad_clip : float or None
        Clip gradient entries to :math:`[-\text{grad\_clip}, \text{grad\_clip}]` (default 10; None: no clip).
    gradient : {"model", "samples"}
        Monte-Carlo under the estimated mixture ("Approx_n", default) or the observed samples.
    pi_init : {"uniform", "previous"}
        :math:`\tilde\pi^{(1)}_{t,c}`: uniform, or the played :math:`\pi_{t,c}` (Assumption 29 is unrealistic).
    n_mc : int, optional
        Monte-Carlo draws of the gradient (default ``n_samples``).
    n_mc_loss : int
        Draws per component to estimate the loss and the true gradient.
    means_init : array (m, d), optional
        :math:`\mu_1`; default :math:`\mu^* + \xi`, :math:`\mathbb E\|\xi_j\|^2 = (\text{init\_scale}\cdot\text{sep})^2`
        with sep the smallest centre distance (Assumption 28 radius for ``init_scale = 1/16``).
    init_scale : float
        ``>= 0``.
    variance : float
        Known component variance :math:`\sigma^2 > 0` (1 in the thesis).
    seed : int
    progress : bool or None

    Returns
    -------
    GMMRun
    """
    mu_star = _check_means("means_star", means_star)
    m, d = mu_star.shape
    w_star = check_simplex("weights_star", weights_star, size=m)
    if w_star.ndim != 3:
        raise ValueError(f"weights_star must have shape (T, C, m), got {w_star.shape}.")
    horizon, n_clients = w_star.shape[:2]
    if horizon < 1 or n_clients < 1:
        raise ValueError(f"weights_star must hold at least one step and one client, got shape {w_star.shape}.")
    n = check_int("n_samples", n_samples, low=1)
    k_steps = check_int("n_em_steps", n_em_steps, low=1)
    lr = check_real("lr", lr, low=0, low_open=True)
    check_choice("schedule", schedule, STEP_SCHEDULES)
    if grad_clip is not None:
        grad_clip = check_real("grad_clip", grad_clip, low=0, low_open=True)
    check_choice("gradient", gradient, GMM_GRADIENTS)
    check_choice("pi_init", pi_init, PI_INITS)
    n_mc = n if n_mc is None else check_int("n_mc", n_mc, low=1)
    n_mc_loss = check_int("n_mc_loss", n_mc_loss, low=1)
    init_scale = check_real("init_scale", init_scale, low=0)
    variance = _check_variance(variance)
    seed = check_int("seed", seed, low=0)
    if means_init is None:
        mu = _initial_means(mu_star, init_scale, numpy_rng(seed, 0, Stream.ONLINE_INIT))
    else:
        mu = check_array("means_init", means_init, shape=(m, d)).copy()
    sd = math.sqrt(variance)

    log_pi = np.full((n_clients, m), -math.log(m))
    log_w_star = _log_weights(w_star)
    log_pi_bar = _log_weights(w_star.mean(0))                               # comparator (C, m)
    out = {name: np.empty((horizon, n_clients)) for name in ("loss", "comp", "gerr", "gnorm")}
    eta = np.empty(horizon)
    pis, means, cerr = [np.exp(log_pi)], [mu.copy()], [_center_error(mu, mu_star)]
    for t in tqdm(range(1, horizon + 1), desc="FEM-OMD", disable=not progress, leave=False):
        ws, lws = w_star[t - 1], log_w_star[t - 1]
        # 1. score the played model on stratified draws z ~ N(mu*_r, s^2 I), shared by the clients
        z = mu_star[:, None, :] + sd * numpy_rng(seed, t, Stream.ONLINE_LOSS).standard_normal((m, n_mc_loss, d))
        star = _density_parts(_log_gauss(z, mu_star, variance))       # component densities at the m * L draws
        play = _density_parts(_log_gauss(z, mu, variance))
        shape = (n_clients, m, n_mc_loss)
        # mixture densities at the draws, scaled by exp(-max_l log f_l(z)): P = D * exp(mx)
        d_p, d_q = np.exp(lws) @ star[2], np.exp(log_pi) @ play[2]
        d_bar, d_den = np.exp(log_pi_bar) @ star[2], np.exp(log_pi) @ star[2]
        if min(d_p.min(), d_q.min(), d_bar.min(), d_den.min()) > 0:
            p_minus_q = np.log(d_p / d_q) + (star[1] - play[1])
            p_minus_bar = np.log(d_p / d_bar)
            inv = np.minimum(1.0 / d_den, _STEP_CAP)                  # exp(mx) / P_played(z)
        else:                                                          # some density underflowed: log path
            log_p = _mixture_log_density(lws, star)
            p_minus_q = log_p - _mixture_log_density(log_pi, play)
            p_minus_bar = log_p - _mixture_log_density(log_pi_bar, star)
            inv = np.exp(np.minimum(star[1] - _mixture_log_density(log_pi, star), _LOG_CAP))
        out["loss"][t - 1] = np.einsum("cr,cr->c", ws, p_minus_q.reshape(shape).mean(-1))
        out["comp"][t - 1] = np.einsum("cr,cr->c", ws, p_minus_bar.reshape(shape).mean(-1))
        # true gradient (4.27) at the played weights: -sum_r pi*_r mean_i f*_j(z_ri) / sum_l pi_l f*_l(z_ri)
        weighted = (inv.reshape(shape) * ws[:, :, None]).reshape(n_clients, -1)
        true_grad = -(weighted @ star[2].T) / n_mc_loss
        # 2. observe n samples per client
        x = _sample_mixture(numpy_rng(seed, t, Stream.ONLINE_DATA), ws, mu_star, n, variance)
        # 3. federated EM from the current means
        log_pi0 = np.full_like(log_pi, -math.log(m)) if pi_init == "uniform" else log_pi
        pi_tilde, mu_em = _federated_em(x, mu, log_pi0, k_steps, split, variance)
        # 4. running average of the EM outputs (t is 1-based; previous mu on the right-hand side)
        mu = t / (t + 1) * mu + mu_em / (t + 1)
        # 5. gradient estimate at the played weights
        if gradient == "model":
            zg = _sample_mixture(numpy_rng(seed, t, Stream.ONLINE_GRAD), pi_tilde, mu, n_mc, variance)
        else:
            zg = x
        g = _grad_from_log(_log_neg_grad(zg, log_pi, mu, variance))
        if grad_clip is not None:
            g = np.maximum(g, -grad_clip)
        out["gerr"][t - 1] = np.abs(g - true_grad).max(1)
        out["gnorm"][t - 1] = np.abs(g).max(1)
        # 6. entropic OMD step in log space
        eta[t - 1] = STEP_SCHEDULES[schedule](t, horizon, m, lr)
        log_pi = omd_log_step(log_pi, g, eta[t - 1], None)
        pis.append(np.exp(log_pi))
        means.append(mu.copy())
        cerr.append(_center_error(mu, mu_star))
    config = {"n_samples": n, "n_em_steps": k_steps, "lr": lr, "schedule": schedule, "split": bool(split),
              "grad_clip": grad_clip, "gradient": gradient, "pi_init": pi_init, "n_mc": n_mc,
              "n_mc_loss": n_mc_loss, "init_scale": init_scale, "variance": variance, "seed": seed,
              "n_clients": int(n_clients), "n_components": int(m), "dim": int(d), "horizon": int(horizon)}
    return GMMRun(loss=out["loss"], comparator_loss=out["comp"], regret=np.cumsum(out["loss"] - out["comp"], axis=0),
                  grad_err=out["gerr"], grad_norm=out["gnorm"], eta=eta, pi=np.stack(pis), means=np.stack(means),
                  center_error=np.array(cerr), config=config)


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

    With a fixed data set (``fedlab.engine.run``) every round re-uses the same samples.

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
        c, m = x.shape[0], self.n_components
        rows = _rows(c, m)
        stacked = {k: v.repeat(c, *([1] * (v.dim() - 1))) for k, v in params.items()}
        out = self.model.forward_stacked(stacked, x[rows])
        return torch.log_softmax(out.double(), dim=-1).view(c, m, x.shape[1], -1)

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
        params = init_stacked(self.model, self.n_components, torch_generator(seed, 0, Stream.ONLINE_INIT), same=False)
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
        log_pt = torch.as_tensor(log_pi0)
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
            log_pi = torch.as_tensor(state.log_pi)
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
        g = _grad_from_log(log_neg.numpy())
        if self.grad_clip is not None:
            g = np.maximum(g, -self.grad_clip)
        eta = STEP_SCHEDULES[self.schedule](t, self.horizon, m, self.lr)
        new_log_pi = omd_log_step(state.log_pi, g, eta, None) if m > 1 else state.log_pi
        if not all(bool(torch.isfinite(v).all()) for v in omega.values()):
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
        return torch.exp(torch.logsumexp(torch.as_tensor(state.log_pi)[:, :, None, None] + logp, dim=1))

    def evaluate(self, state: FEMOMDState, data: FederatedDataset) -> dict[str, np.ndarray]:
        """``train_loss``/``train_accuracy`` and ``test_*`` of every client's mixture, arrays (C,)."""
        out = metrics_from_proba(self.predict_proba(state, data.train.x).float(), data.train, "train_")
        out.update(metrics_from_proba(self.predict_proba(state, data.test.x).float(), data.test, "test_"))
        return out


def run_online(algorithm: Any, stream: Callable[[int], FederatedDataset], horizon: int, *, seed: int = 0,
               progress: bool | None = False) -> tuple[Any, History]:
    r"""The online protocol of §4.4.1: at each step, score the played model, then learn from the new samples.

    For :math:`t = 0, \dots, T-1`: ``data = stream(t)`` holds the step's samples :math:`\mathcal S_{t,c}`
    (``data.train``) and held-out samples :math:`\mathcal S'_{t,c}` (``data.test``);
    ``algorithm.evaluate(state, data)`` is recorded *before* ``algorithm.round(state, data, seed)``, so
    ``History.clients["test_accuracy"][t]`` is :math:`\mathrm{Acc}(h_{t,c}, \mathcal S'_{t,c})` of (4.47) and
    ``train_loss`` is the log-loss (4.21) of the played model on the samples it has not seen yet.

    Parameters
    ----------
    algorithm : object with ``init``, ``round`` and ``evaluate`` (e.g. :class:`FEMOMD`)
    stream : callable ``t -> FederatedDataset``
        Same clients at every step.
    horizon : int
        :math:`T \ge 1`.
    seed : int
    progress : bool or None

    Returns
    -------
    state, History
        ``History.rounds`` are the steps ``0..T-1``; ``History.log`` the per-step info.
    """
    horizon = check_int("horizon", horizon, low=1)
    seed = check_int("seed", seed, low=0)
    if not callable(stream):
        raise TypeError(f"stream must be callable t -> FederatedDataset, got {type(stream).__name__}.")
    data = stream(0)
    if not isinstance(data, FederatedDataset):
        raise TypeError(f"stream(0) must return a FederatedDataset, got {type(data).__name__}.")
    state = algorithm.init(data, seed)
    history = History(data.train.n.numpy().astype(float), data.test.n.numpy().astype(float))
    for t in tqdm(range(horizon), desc=type(algorithm).__name__, disable=not progress, leave=False):
        if t > 0:
            data = stream(t)
            if data.n_clients != history.n_train.shape[0]:
                raise ValueError(f"stream({t}) has {data.n_clients} clients, stream(0) had {history.n_train.shape[0]}.")
        metrics = algorithm.evaluate(state, data)
        for name, values in metrics.items():
            if name == "train_loss" and not np.all(np.isfinite(values)):
                raise DivergenceError(f"{name} is not finite at step {t}.")
        history.record(t, metrics)
        state, info = algorithm.round(state, data, seed)
        history.log.append({"round": int(state.round), **info})
    return state, history


METHODS.register("fem_omd", FEMOMD, chapter="online", label="FEM-OMD")
