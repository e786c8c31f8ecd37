r"""Federated EM for isotropic Gaussian mixtures, shared by the FedEM (notebook 03) and FEM-OMD (notebook 06) chapters.

Client :math:`c` holds :math:`n` samples of :math:`\sum_j\pi_{c,j}\mathcal N(\mu_j, \sigma^2_j I_d)`: the components
are shared, the weights personal (Assumption 8 of §3.5, Assumption 26 of §4.4). One federated EM iteration is

* the E-step on every client, (3.12) / (4.34):
  :math:`w_{c,i,j} = \pi_{c,j}f_j(x_{c,i}) / \sum_l\pi_{c,l}f_l(x_{c,i})` with :math:`f_j` the density of
  :math:`\mathcal N(\mu_j, \sigma^2_j I_d)`;
* the local M-step, (3.13) / (4.35)–(4.36): :math:`\tilde\pi_{c,j} = \frac1n\sum_iw_{c,i,j}`,
  :math:`\tilde\mu_{c,j} = \sum_iw_{c,i,j}x_{c,i}/\sum_iw_{c,i,j}` (and the second moment
  :math:`\tilde s_{c,j} = \sum_iw_{c,i,j}\|x_{c,i}\|^2/\sum_iw_{c,i,j}` when the variances are learned);
* the server synchronisation, (3.14) / Algorithm 15 line 11:
  :math:`\mu_j = \sum_c\tilde\pi_{c,j}\tilde\mu_{c,j}/\sum_c\tilde\pi_{c,j}` and
  :math:`\sigma^2_j = (\sum_c\tilde\pi_{c,j}\tilde s_{c,j}/\sum_c\tilde\pi_{c,j} - \|\mu_j\|^2)/d`.

Clients hold the same number of samples, so the synchronisation *is* the M-step on the pooled samples (dynamic
spec A.8, fact A4): every iteration is an exact EM step of the federated likelihood (3.6), and the
log-likelihood never decreases. Everything runs in log space with the clients stacked: samples ``x`` (C, n, d),
weights (C, m), means (m, d), variances (m,).

Entry points: :class:`FederatedGMMEM` (the iterations as an engine algorithm; :func:`federated_gmm_em` runs it
with :func:`fedlab.engine.run` and records the per-client log-likelihood), :func:`em_step` (one iteration, which
FEM-OMD runs on its sample-split batches), and the checked pieces :func:`responsibilities`,
:func:`local_m_step`, :func:`server_step`, :func:`log_likelihood`, :func:`seed_means`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from fedlab._rng import Stream, as_numpy_rng, numpy_rng
from fedlab._validation import check_array, check_bool, check_int, check_real, check_simplex
from fedlab.engine import History, run

__all__ = [
    "LOG_FLOOR",
    "VARIANCE_FLOOR",
    "check_samples",
    "check_client_weights",
    "responsibilities",
    "LocalStatistics",
    "local_m_step",
    "server_step",
    "em_step",
    "log_likelihood",
    "seed_means",
    "GMMState",
    "FederatedGMMEM",
    "federated_gmm_em",
]

LOG_FLOOR = -1000.0      # log-weights never go below this: exp() underflows to 0 but the log stays finite
VARIANCE_FLOOR = 1e-6    # learned variances never go below this


# ----------------------------------------------------------------------------------------- numeric kernels
# Unchecked: they run in the inner loops of the EM and of FEM-OMD, on arrays their callers have checked.

def log_sum_exp(a: np.ndarray, axis: int = 0, keepdims: bool = False) -> np.ndarray:
    """log-sum-exp with the max shift (rows that are all -inf give -inf); faster than scipy's for small arrays."""
    mx = np.max(a, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True)) + mx
    return out if keepdims else np.squeeze(out, axis=axis)


def log_weights(pi: np.ndarray) -> np.ndarray:
    """:math:`\\max(\\log\\pi, \\text{LOG\\_FLOOR})` elementwise: a zero weight gets a finite log."""
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(pi), LOG_FLOOR)


def gaussian_log_kernel(x: np.ndarray, means: np.ndarray, variances: Any) -> np.ndarray:
    r"""Log-densities of the components up to a constant common to all of them, component axis first.

    With variances (m,): :math:`\log\mathcal N(x; \mu_j, \sigma^2_jI_d) + \frac d2\log 2\pi =
    -\frac{\|x-\mu_j\|^2}{2\sigma^2_j} - \frac d2\log\sigma^2_j`; with one shared variance (a float) the
    common :math:`-\frac d2\log\sigma^2` is dropped too. ``x`` (..., d), ``means`` (m, d) -> (m, ...). The squared
    distance is expanded (:math:`\|x\|^2 - 2\mu_j^\top x + \|\mu_j\|^2`, clipped at 0): one matrix product.
    """
    shape = (-1,) + (1,) * (x.ndim - 1)
    sq = np.einsum("...d,...d->...", x, x)[None] - 2.0 * np.einsum("jd,...d->j...", means, x)
    sq += np.einsum("jd,jd->j", means, means).reshape(shape)
    if np.ndim(variances) == 0:
        return -0.5 * np.maximum(sq, 0.0) / variances
    var = np.reshape(variances, shape)
    return -0.5 * np.maximum(sq, 0.0) / var - (0.5 * x.shape[-1]) * np.log(var)


def _e_step(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Responsibilities (m, C, n), component axis first: x (C, n, d), log_pi (C, m)."""
    a = log_pi.T[:, :, None] + gaussian_log_kernel(x, means, var)
    return np.exp(a - log_sum_exp(a, 0, keepdims=True))


class LocalStatistics(NamedTuple):
    r"""What the clients send after their local M-step (C clients, m components, dimension d).

    Attributes
    ----------
    weights : np.ndarray (C, m)
        :math:`\tilde\pi_{c,j} = \frac1n\sum_iw_{c,i,j}`, the updated weights (3.13).
    means : np.ndarray (C, m, d)
        :math:`\tilde\mu_{c,j}`; a component with no responsibility at a client keeps the broadcast mean there
        (its weight in the synchronisation is 0).
    sq_norms : np.ndarray (C, m) or None
        :math:`\tilde s_{c,j} = \sum_iw_{c,i,j}\|x_{c,i}\|^2/\sum_iw_{c,i,j}` (0 without responsibility); only
        needed to learn the variances.
    """

    weights: np.ndarray
    means: np.ndarray
    sq_norms: np.ndarray | None


def _local_m_step(x: np.ndarray, r: np.ndarray, means: np.ndarray, second_moment: bool) -> LocalStatistics:
    mass = r.sum(-1).T                                                   # (C, m)
    safe = mass > 0
    denom = np.where(safe, mass, 1.0)
    local = np.where(safe[..., None], np.einsum("mcb,cbd->cmd", r, x) / denom[..., None], means[None])
    sq = None
    if second_moment:
        sq = np.where(safe, np.einsum("mcb,cb->cm", r, np.einsum("cbd,cbd->cb", x, x)) / denom, 0.0)
    return LocalStatistics(mass / x.shape[1], local, sq)


def _server_step(stats: LocalStatistics, means: np.ndarray, var: np.ndarray,
                 learn_variance: bool) -> tuple[np.ndarray, np.ndarray]:
    total = stats.weights.sum(0)                                        # (m,)
    ok = total > 0
    denom = np.where(ok, total, 1.0)
    new_means = np.where(ok[:, None], np.einsum("cm,cmd->md", stats.weights, stats.means) / denom[:, None], means)
    if not learn_variance:
        return new_means, var
    second = np.einsum("cm,cm->m", stats.weights, stats.sq_norms) / denom
    spread = (second - np.einsum("md,md->m", new_means, new_means)) / means.shape[1]
    return new_means, np.where(ok, np.maximum(spread, VARIANCE_FLOOR), var)


def em_step(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variances: Any, *,
            learn_variance: bool = False) -> tuple[np.ndarray, np.ndarray, Any]:
    r"""One federated EM iteration: E-step (3.12)/(4.34), local M-step (3.13)/(4.35)–(4.36), synchronisation (3.14).

    The kernel behind :class:`FederatedGMMEM` (which checks its data once, at ``init``) and FEM-OMD's inner loop.

    Parameters
    ----------
    x : np.ndarray (C, n, d)
        The samples (or batch) of every client.
    log_pi : np.ndarray (C, m)
        Log-weights :math:`\log\pi_{c}` (floored at :data:`LOG_FLOOR`).
    means : np.ndarray (m, d)
        Current means, kept by a component that no client gives weight to.
    variances : float or np.ndarray (m,)
        One shared variance or one per component.
    learn_variance : bool
        Also update the variances (otherwise they are returned unchanged).

    Returns
    -------
    weights : np.ndarray (C, m)
        :math:`\tilde\pi_c`.
    means : np.ndarray (m, d)
    variances : float or np.ndarray (m,)
    """
    mu = _check_means(means)
    xs = check_samples(x, dim=mu.shape[1])
    lp = check_array("log_pi", log_pi, shape=(xs.shape[0], mu.shape[0]), finite=False)
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise ValueError("log_pi must hold log-weights (finite or -inf, not NaN or +inf).")
    var = _check_variances(variances, mu.shape[0])
    return _em_step(xs, lp, mu, var if np.ndim(variances) else variances,
                    check_bool("learn_variance", learn_variance))


def _em_step(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, variances: Any,
             learn_variance: bool) -> tuple[np.ndarray, np.ndarray, Any]:
    stats = _local_m_step(x, _e_step(x, log_pi, means, variances), means, learn_variance)
    new_means, new_var = _server_step(stats, means, variances, learn_variance)
    return stats.weights, new_means, new_var


def _log_likelihood(x: np.ndarray, log_pi: np.ndarray, means: np.ndarray, var: np.ndarray) -> np.ndarray:
    a = log_pi.T[:, :, None] + gaussian_log_kernel(x, means, var)
    return log_sum_exp(a, 0).mean(-1) - 0.5 * x.shape[-1] * math.log(2 * math.pi)


# ----------------------------------------------------------------------------------------- checked pieces

def check_samples(x: Any, *, dim: int | None = None, name: str = "x") -> np.ndarray:
    """Clients' samples as an array (C, n, d) with n >= 1: from an array (C, n, d), one client's (n, d), or a list
    of C arrays (n, d) of the same shape; ``dim`` fixes d."""
    if dim is not None:
        dim = check_int("dim", dim, low=1)
    if isinstance(x, (list, tuple)):
        if len(x) == 0:
            raise ValueError(f"{name} must hold at least one client.")
        shapes = sorted({np.shape(xc) for xc in x})
        if len(shapes) > 1:
            raise ValueError(f"{name}: every client must hold the same number of samples of the same dimension, "
                             f"got the shapes {shapes[:5]}.")
    arr = check_array(name, x)
    arr = arr[None] if arr.ndim == 2 else arr
    if arr.ndim != 3 or 0 in arr.shape[:2] or (dim is not None and arr.shape[-1] != dim):
        need = "" if dim is None else f" with d = {dim}"
        raise ValueError(f"{name} must have shape (C, n, d) or (n, d){need} and n >= 1, got {np.shape(x)}.")
    return arr


def check_client_weights(name: str, value: Any, n_clients: int, n_components: int) -> np.ndarray:
    """Mixture weights on the simplex as an array (C, m): one row per client, or one (m,) row for all."""
    n_clients, n_components = check_int("n_clients", n_clients, low=1), check_int("n_components", n_components, low=1)
    arr = check_simplex(name, value, size=n_components)
    if arr.ndim == 1:
        arr = np.broadcast_to(arr, (n_clients, n_components))
    if arr.shape != (n_clients, n_components):
        raise ValueError(f"{name} must have shape ({n_components},) or ({n_clients}, {n_components}), got {arr.shape}.")
    return arr


def _check_variances(variances: Any, n_components: int) -> np.ndarray:
    var = check_array("variances", variances)
    if var.ndim > 1 or (var.ndim == 1 and var.shape[0] != n_components) or np.any(var <= 0):
        raise ValueError(f"variances must be a positive float or {n_components} positive values, got {variances!r}.")
    return np.broadcast_to(var, (n_components,)).astype(float)


def _check_means(means: Any) -> np.ndarray:
    mu = check_array("means", means, ndim=2)
    if 0 in mu.shape:
        raise ValueError(f"means must hold at least one component of dimension >= 1, got shape {mu.shape}.")
    return mu


def _checked(x: Any, weights: Any, means: Any, variances: Any):
    mu = _check_means(means)
    xs = check_samples(x, dim=mu.shape[1])
    pi = check_client_weights("weights", weights, xs.shape[0], mu.shape[0])
    return xs, log_weights(pi), mu, _check_variances(variances, mu.shape[0])


def responsibilities(x: Any, weights: Any, means: Any, variances: Any = 1.0) -> np.ndarray:
    r"""E-step (3.12) / (4.34), in log space: the responsibility of each component for each sample.

    .. math::
        w_{c,i,j} = \frac{\pi_{c,j}f_j(x_{c,i})}{\sum_l\pi_{c,l}f_l(x_{c,i})},\qquad
        f_j = \text{density of }\mathcal N(\mu_j, \sigma^2_jI_d).

    Parameters
    ----------
    x : array (C, n, d), (n, d) or list of C arrays (n, d)
    weights : array (C, m) or (m,)
        Mixture weights on the simplex (a zero weight gives a zero responsibility).
    means : array (m, d)
    variances : float or array (m,)
        :math:`\sigma^2_j > 0`.

    Returns
    -------
    np.ndarray (C, n, m)
        Rows on the simplex.
    """
    xs, log_pi, mu, var = _checked(x, weights, means, variances)
    return _e_step(xs, log_pi, mu, var).transpose(1, 2, 0)


def local_m_step(x: Any, weights: Any, means: Any, variances: Any = 1.0) -> LocalStatistics:
    r"""E-step then local M-step of every client, (3.12)–(3.13) / (4.34)–(4.36), the M-step dividing by n.

    .. math::
        \tilde\pi_{c,j} = \frac1n\sum_{i=1}^n w_{c,i,j},\qquad
        \tilde\mu_{c,j} = \frac{\sum_iw_{c,i,j}x_{c,i}}{\sum_iw_{c,i,j}},\qquad
        \tilde s_{c,j} = \frac{\sum_iw_{c,i,j}\|x_{c,i}\|^2}{\sum_iw_{c,i,j}}.

    Parameters
    ----------
    x : array (C, n, d), (n, d) or list of C arrays (n, d)
    weights : array (C, m) or (m,)
        Current weights on the simplex.
    means : array (m, d)
        Current (synchronised) means.
    variances : float or array (m,)

    Returns
    -------
    LocalStatistics
    """
    xs, log_pi, mu, var = _checked(x, weights, means, variances)
    return _local_m_step(xs, _e_step(xs, log_pi, mu, var), mu, True)


def server_step(stats: LocalStatistics, means: Any, variances: Any = 1.0, *,
                learn_variance: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Server synchronisation (3.14) / Algorithm 15 line 11, from the clients' :class:`LocalStatistics`.

    .. math::
        \mu_j = \frac{\sum_c\tilde\pi_{c,j}\tilde\mu_{c,j}}{\sum_c\tilde\pi_{c,j}},\qquad
        \sigma^2_j = \frac1d\Big(\frac{\sum_c\tilde\pi_{c,j}\tilde s_{c,j}}{\sum_c\tilde\pi_{c,j}} - \|\mu_j\|^2\Big).

    With equal client sizes this is the M-step on the pooled samples (dynamic spec A.8, fact A4). Learned variances
    are floored at :data:`VARIANCE_FLOOR`; a component that no client weighs keeps its mean and variance.

    Parameters
    ----------
    stats : LocalStatistics
    means : array (m, d)
        The means before the step (kept by unweighted components).
    variances : float or array (m,)
    learn_variance : bool

    Returns
    -------
    means : np.ndarray (m, d)
    variances : np.ndarray (m,)
    """
    if not isinstance(stats, LocalStatistics):
        raise TypeError(f"stats must be the LocalStatistics of local_m_step, got {type(stats).__name__}.")
    mu = _check_means(means)
    local = check_array("stats.means", stats.means, shape=(None,) + mu.shape)
    pi = check_array("stats.weights", stats.weights, shape=local.shape[:2], nonnegative=True)
    var = _check_variances(variances, mu.shape[0])
    learn_variance = check_bool("learn_variance", learn_variance)
    sq = None
    if learn_variance:
        if stats.sq_norms is None:
            raise ValueError("learn_variance needs stats.sq_norms (the second moments of local_m_step).")
        sq = check_array("stats.sq_norms", stats.sq_norms, shape=pi.shape, nonnegative=True)
    return _server_step(LocalStatistics(pi, local, sq), mu, var, learn_variance)


def log_likelihood(x: Any, weights: Any, means: Any, variances: Any = 1.0) -> np.ndarray:
    r"""Mean log-likelihood of every client's samples, :math:`\frac1n\sum_i\log\sum_j\pi_{c,j}
    \mathcal N(x_{c,i}; \mu_j, \sigma^2_jI_d)`; the federated objective (3.6) is minus their mean.

    Parameters
    ----------
    x : array (C, n, d), (n, d) or list of C arrays (n, d)
    weights : array (C, m) or (m,)
    means : array (m, d)
    variances : float or array (m,)

    Returns
    -------
    np.ndarray (C,)
    """
    return _log_likelihood(*_checked(x, weights, means, variances))


def seed_means(x: Any, n_components: int, rng: Any = None) -> np.ndarray:
    """Greedy k-means++ seeding (as scikit-learn): among ``2 + log m`` candidates drawn with probability
    ∝ squared distance to the chosen means, keep the one that lowers the k-means potential most.

    Parameters
    ----------
    x : array (N, d)
        Pooled samples (N >= 1).
    n_components : int
        m >= 1.
    rng : numpy Generator, int or None

    Returns
    -------
    np.ndarray (m, d)
        Samples of ``x``.
    """
    x = check_array("x", x, ndim=2)
    if len(x) == 0:
        raise ValueError("x must hold at least one sample.")
    m = check_int("n_components", n_components, low=1)
    rng = as_numpy_rng(rng)
    means = [x[rng.integers(len(x))]]
    d2 = ((x - means[0]) ** 2).sum(-1)
    n_trials = 2 + int(np.log(m))
    for _ in range(1, m):
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(len(x), 1.0 / len(x))
        cand = rng.choice(len(x), size=n_trials, p=p)
        cand_d2 = np.minimum(d2[None], ((x[None, :, :] - x[cand][:, None, :]) ** 2).sum(-1))
        best = int(np.argmin(cand_d2.sum(1)))
        means.append(x[cand[best]])
        d2 = cand_d2[best]
    return np.array(means, dtype=float)


# ----------------------------------------------------------------------------------------- on the engine

@dataclass(frozen=True)
class GMMState:
    """Shared means (m, d) and variances (m,), every client's log-weights (C, m), the iteration count."""

    means: np.ndarray
    variances: np.ndarray
    log_weights: np.ndarray
    round: int = 0

    @property
    def weights(self) -> np.ndarray:
        """Mixture weights :math:`\\pi_c`, shape (C, m)."""
        return np.exp(self.log_weights)


def _stacked(data: Any) -> np.ndarray:
    """The samples ``init`` checked, as (C, n, d)."""
    x = np.asarray(data, dtype=float)
    return x[None] if x.ndim == 2 else x


class FederatedGMMEM:
    r"""Federated EM for an isotropic Gaussian mixture (thesis §3.5, eqs. (3.12)–(3.14)) as an engine algorithm.

    The data are the clients' samples, an array (C, n, d) (:func:`check_samples`); :func:`fedlab.engine.run` takes
    them on its numpy path. A round is one :func:`em_step` on all samples; ``evaluate`` gives every client's mean
    log-likelihood (``"log_likelihood"``, (C,)), which never decreases.

    Parameters
    ----------
    n_components : int
        m >= 1.
    variance : float
        Known (or initial, if learned) component variance :math:`\sigma^2 > 0`.
    learn_variance : bool
    means_init : array (m, d), optional
        Default: :func:`seed_means` on the pooled samples, drawn from ``(seed, 0, Stream.INIT)`` (a server-side
        convenience; EM only finds a local maximum, and a bad start, e.g. two means in one cluster, can stay stuck).
    weights_init : array (C, m) or (m,), optional
        On the simplex; default uniform.
    """

    def __init__(self, n_components: int, *, variance: float = 1.0, learn_variance: bool = False,
                 means_init: Any = None, weights_init: Any = None) -> None:
        self.n_components = check_int("n_components", n_components, low=1)
        self.variance = check_real("variance", variance, low=0, low_open=True)
        self.learn_variance = check_bool("learn_variance", learn_variance)
        self.means_init = None if means_init is None else check_array("means_init", means_init,
                                                                      shape=(self.n_components, None))
        self.weights_init = None if weights_init is None else check_simplex("weights_init", weights_init,
                                                                            size=self.n_components, ndim=(1, 2))

    def init(self, data: Any, seed: int) -> GMMState:
        x = check_samples(data, name="data")
        c, m, d = x.shape[0], self.n_components, x.shape[2]
        if self.means_init is None:
            means = seed_means(x.reshape(-1, d), m, numpy_rng(seed, 0, Stream.INIT))
        else:
            means = check_array("means_init", self.means_init, shape=(m, d)).copy()
        if self.weights_init is None:
            log_pi = np.full((c, m), -math.log(m))
        else:
            log_pi = log_weights(check_client_weights("weights_init", self.weights_init, c, m))
        return GMMState(means, np.full(m, self.variance), log_pi, 0)

    def round(self, state: GMMState, data: Any, seed: int) -> tuple[GMMState, dict]:
        pi, means, var = _em_step(_stacked(data), state.log_weights, state.means, state.variances,
                                  self.learn_variance)
        return GMMState(means, var, log_weights(pi), state.round + 1), {}

    def evaluate(self, state: GMMState, data: Any) -> dict[str, np.ndarray]:
        """``log_likelihood``: every client's mean log-likelihood, shape (C,)."""
        return {"log_likelihood": _log_likelihood(_stacked(data), state.log_weights, state.means, state.variances)}


def federated_gmm_em(x: Any, n_components: int, *, n_iter: int = 100, means_init: Any = None,
                     weights_init: Any = None, variance: float = 1.0, learn_variance: bool = False,
                     seed: int = 0) -> tuple[list[GMMState], History]:
    r"""Run :class:`FederatedGMMEM` for ``n_iter`` iterations with :func:`fedlab.engine.run`.

    One client (``x`` of shape (n, d)) is centralized EM.

    Parameters
    ----------
    x : array (C, n, d), (n, d) or list of C arrays (n, d)
        Every client holds the same number n >= 1 of samples.
    n_components : int
    n_iter : int
        EM iterations (>= 0).
    means_init, weights_init, variance, learn_variance
        See :class:`FederatedGMMEM`.
    seed : int
        For the default initial means.

    Returns
    -------
    states : list of GMMState
        The iterates, ``states[k]`` after k iterations (``states[0]`` is the initialisation).
    History
        ``clients["log_likelihood"][k]``: every client's mean log-likelihood after k iterations; with equal client
        sizes ``History.curve("log_likelihood")`` is the mean log-likelihood of the pooled samples.
    """
    data = check_samples(x)
    n_iter = check_int("n_iter", n_iter, low=0)
    algorithm = FederatedGMMEM(n_components, variance=variance, learn_variance=learn_variance,
                               means_init=means_init, weights_init=weights_init)
    states = [algorithm.init(data, check_int("seed", seed, low=0))]
    _, history = run(algorithm, data, rounds=n_iter, seed=seed, state=states[0], progress=False,
                     callback=lambda state, info: states.append(state))
    return states, history
