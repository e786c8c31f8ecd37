r"""The data of the online-mixtures chapter (thesis §4.4.5): federated Gaussian-mixture streams and environments,
mixture-structured streams of labelled pools, and the Dirichlet weights of the separated limit.

* :class:`GMMStream` / :func:`make_gmm_stream`: the synthetic environment of §4.4.5.1 (fixed centres, Dirichlet
  weights drawn for every step and client);
* :class:`GMMEnvironment`: that stream as engine data, ``env(t)`` is the :class:`GMMStep` that draws the clients'
  samples and scores a played mixture with the loss (4.24), :func:`mixture_kl` (the same loss between any two
  spherical Gaussian mixtures) and :func:`sample_mixture` (draws of a mixture, per client);
* :func:`dirichlet_weights`: the weights :math:`\pi^*_t\sim\mathrm{Dir}(\alpha 1_m)` of the fully separated limit
  (spec fact A9);
* :class:`MixtureStream` and :class:`DigitsMixtureStream`: the mixture-structured stream of §4.4.5.2 on any labelled
  pools (the real images: :mod:`fedlab.online.real_data`) and on scikit-learn's digits.

Every draw derives from ``(seed, t, Stream.ONLINE_*)``: equal seeds give equal streams.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedlab._rng import Stream, as_numpy_rng, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_simplex
from fedlab.data.digits import load_digits_arrays
from fedlab.engine import ClientData, FederatedDataset
from fedlab.gmm import check_client_weights, gaussian_log_kernel, log_sum_exp, log_weights

__all__ = [
    "GMM_CENTERS",
    "DIGITS_STREAM_MODES",
    "WEIGHT_PROCESSES",
    "LOG_CAP",
    "STEP_CAP",
    "sample_mixture",
    "mixture_kl",
    "GMMStream",
    "make_gmm_stream",
    "GMMStep",
    "GMMEnvironment",
    "dirichlet_weights",
    "MixtureStream",
    "DigitsMixtureStream",
]

GMM_CENTERS = ("circle", "paper")
DIGITS_STREAM_MODES = ("label_groups", "permutation")
WEIGHT_PROCESSES = ("iid", "fixed")
STEP_CAP = 1e300
"""Largest magnitude of a gradient entry, a density ratio or an OMD step (keeps ``exp`` finite)."""
LOG_CAP = math.log(STEP_CAP)
"""Largest log-magnitude of a gradient entry or a density ratio."""


# ----------------------------------------------------------------------------------------- Gaussian mixtures

def _check_variance(variance: Any) -> float:
    return check_real("variance", variance, low=0, low_open=True)


def _sample_mixture(rng: np.random.Generator, pi: np.ndarray, means: np.ndarray, n: int, variance: float) -> np.ndarray:
    """n draws per row of ``pi`` (C, m) from :math:`\\sum_j\\pi_j\\mathcal N(\\mu_j,\\sigma^2I)`: (C, n, d)."""
    cdf = np.cumsum(pi, axis=-1)
    u = rng.random((pi.shape[0], n)) * cdf[:, -1:]
    z = np.minimum((u[..., None] > cdf[:, None, :]).sum(-1), pi.shape[1] - 1)
    return means[z] + math.sqrt(variance) * rng.standard_normal((pi.shape[0], n, means.shape[1]))


def sample_mixture(pi: Any, means: Any, n: int, *, variance: float = 1.0, rng: Any = None) -> np.ndarray:
    r"""``n`` draws for every client from its spherical Gaussian mixture
    :math:`\sum_j\pi_{c,j}\mathcal N(\mu_j, \sigma^2I_d)`.

    Parameters
    ----------
    pi : array (C, m) or (m,)
        Mixture weights on the simplex, one row per client.
    means : array (m, d)
    n : int
        Draws per client (>= 1).
    variance : float
        :math:`\sigma^2 > 0`.
    rng : numpy Generator, int or None

    Returns
    -------
    np.ndarray (C, n, d)

    >>> sample_mixture([[1.0, 0.0]], [[0.0, 0.0], [9.0, 9.0]], 4, rng=0).shape
    (1, 4, 2)
    """
    mu = check_array("means", means, ndim=2)
    w = check_simplex("pi", pi, size=mu.shape[0], ndim=(1, 2))
    n = check_int("n", n, low=1)
    variance = _check_variance(variance)
    return _sample_mixture(as_numpy_rng(rng), w.reshape(-1, mu.shape[0]), mu, n, variance)


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
    out[bad] = log_sum_exp(log_pi[bad[0]].T + flat[:, bad[1]], 0)
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
    mp = check_array("means_p", means_p, ndim=2)
    mq = check_array("means_q", means_q, ndim=2)
    if mq.shape[1] != mp.shape[1]:
        raise ValueError(f"means_q must have dimension {mp.shape[1]}, got shape {mq.shape}.")
    pp, pq = check_simplex("pi_p", pi_p, size=mp.shape[0]), check_simplex("pi_q", pi_q, size=mq.shape[0])
    c = max(1 if pp.ndim == 1 else pp.shape[0], 1 if pq.ndim == 1 else pq.shape[0])
    pp, pq = check_client_weights("pi_p", pp, c, mp.shape[0]), check_client_weights("pi_q", pq, c, mq.shape[0])
    n_mc = check_int("n_mc", n_mc, low=1)
    variance = _check_variance(variance)
    rng = as_numpy_rng(rng)
    z = mp[:, None, :] + math.sqrt(variance) * rng.standard_normal((mp.shape[0], n_mc, mp.shape[1]))
    log_p = _mixture_log_density(log_weights(pp), _density_parts(gaussian_log_kernel(z, mp, variance)))  # (C, m_P n)
    log_q = _mixture_log_density(log_weights(pq), _density_parts(gaussian_log_kernel(z, mq, variance)))
    return np.einsum("cr,cr->c", pp, (log_p - log_q).reshape(c, mp.shape[0], n_mc).mean(-1))


# ----------------------------------------------------------------------------------------- the GMM environment

@dataclass(frozen=True)
class GMMStream:
    """True centres ``means`` (m, d) and weights ``weights`` (T, C, m) of a federated GMM stream."""

    means: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        means = check_array("means", self.means, ndim=2)
        if 0 in means.shape:
            raise ValueError(f"means must have shape (m, d) with m, d >= 1, got {means.shape}.")
        weights = check_simplex("weights", self.weights, ndim=3, size=means.shape[0])
        if 0 in weights.shape[:2]:
            raise ValueError(f"weights must have shape (T, C, m) with T, C >= 1, got {weights.shape}.")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "weights", weights)

    @property
    def n_components(self) -> int:
        return int(self.means.shape[0])

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])

    @property
    def horizon(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_clients(self) -> int:
        return int(self.weights.shape[1])

    @property
    def min_separation(self) -> float:
        """Smallest distance between two centres (``inf`` for one component)."""
        if self.n_components < 2:
            return float("inf")
        dist = np.linalg.norm(self.means[:, None] - self.means[None], axis=-1)
        return float(dist[~np.eye(self.n_components, dtype=bool)].min())


def make_gmm_stream(*, n_components: int = 3, dim: int = 2, n_clients: int = 20, horizon: int = 200,
                    spread: float = 4.0, alpha: float = 0.1, centers: str = "circle", weight_floor: float = 1e-12,
                    seed: int = 0) -> GMMStream:
    r"""The synthetic environment of §4.4.5.1: fixed centres, i.i.d. Dirichlet weights per step and client.

    * ``centers="circle"`` (dynamic spec A.7, [assumption]):
      :math:`\mu^*_j = s(\cos 2\pi j/m, \sin 2\pi j/m, 0, \dots)`, so the smallest centre distance is
      :math:`2s\sin(\pi/m)` (:math:`s\sqrt3` for m = 3) and ``spread`` is a clean separation knob;
    * ``centers="paper"``: :math:`\mu^*_j\sim\mathcal N(0, sI_d)` (``spread`` read as a variance, as
      ":math:`\mathcal N(0, s\mathbf I_d)`" in the thesis); with d = 2, m = 3 two centres are often close.

    Weights :math:`\pi^*_{t,c}\sim\mathrm{Dir}(\alpha 1_m)`, floored at ``weight_floor`` and renormalised.

    Parameters
    ----------
    n_components, dim, n_clients, horizon : int
        m (>= 1), d (>= 2 for ``"circle"``), C and T.
    spread : float
        s > 0.
    alpha : float
        Dirichlet concentration > 0 (0.1 in the thesis).
    centers : {"circle", "paper"}
    weight_floor : float
        In [0, 1/m).
    seed : int

    Returns
    -------
    GMMStream
    """
    m = check_int("n_components", n_components, low=1)
    d = check_int("dim", dim, low=1)
    c = check_int("n_clients", n_clients, low=1)
    t = check_int("horizon", horizon, low=1)
    s = check_real("spread", spread, low=0, low_open=True)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    check_choice("centers", centers, GMM_CENTERS)
    floor = check_real("weight_floor", weight_floor, low=0, high=1.0 / m, high_open=True)
    seed = check_int("seed", seed, low=0)
    rng = numpy_rng(seed, 0, Stream.ONLINE_ENV)
    if centers == "circle":
        if d < 2:
            raise ValueError(f"centers='circle' needs dim >= 2, got dim={d}.")
        angle = 2 * np.pi * np.arange(m) / m
        means = np.zeros((m, d))
        means[:, 0], means[:, 1] = s * np.cos(angle), s * np.sin(angle)
    else:
        means = math.sqrt(s) * rng.standard_normal((m, d))
    weights = rng.dirichlet(np.full(m, alpha), size=(t, c))
    weights = np.maximum(weights, floor)
    return GMMStream(means, weights / weights.sum(-1, keepdims=True))


class GMMStep:
    r"""Step :math:`t` of a federated Gaussian-mixture stream: the clients' samples and what scores the played model.

    :math:`\mathcal P_{t,c} = \sum_j\pi^*_{t,c,j}\mathcal N(\mu^*_j, \sigma^2I_d)`. Built by :class:`GMMEnvironment`.

    Attributes
    ----------
    t : int
        The step, 1-based.
    horizon : int
        T.
    means_star : np.ndarray (m, d)
    weights_star : np.ndarray (C, m)
        :math:`\pi^*_{t,c}`.
    log_comparator : np.ndarray (C, m)
        :math:`\log\bar\pi^*_c`, the time-averaged weights of the best fixed model in hindsight.
    samples : np.ndarray (C, n, d)
        :math:`\mathcal S_{t,c}`.
    loss_draws : np.ndarray (m, L, d)
        L draws of each :math:`\mathcal N(\mu^*_r, \sigma^2I)`, shared by the clients (stratified Monte Carlo).
    variance : float
        :math:`\sigma^2`, known to the clients.
    """

    def __init__(self, t: int, horizon: int, means_star: np.ndarray, weights_star: np.ndarray,
                 log_comparator: np.ndarray, samples: np.ndarray, loss_draws: np.ndarray, variance: float) -> None:
        self.t, self.horizon, self.variance = t, horizon, variance
        self.means_star, self.weights_star, self.log_comparator = means_star, weights_star, log_comparator
        self.samples, self.loss_draws = samples, loss_draws
        self._log_w = log_weights(weights_star)
        # component densities of the true mixture at the m * L draws
        self._star = _density_parts(gaussian_log_kernel(loss_draws, means_star, variance))

    def _shape(self) -> tuple[int, int, int]:
        return self.weights_star.shape[0], self.loss_draws.shape[0], self.loss_draws.shape[1]

    def losses(self, log_pi: np.ndarray, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""The KL loss (4.24) of the played model and of the comparator, on the same draws.

        :math:`\varphi_{t,c}(\mu, \pi_c)` and :math:`\varphi_{t,c}(\mu^*, \bar\pi^*_c)` (common random numbers), for
        ``log_pi`` (C, m) and ``means`` (m, d); two arrays (C,).
        """
        star = self._star
        play = _density_parts(gaussian_log_kernel(self.loss_draws, means, self.variance))
        # mixture densities at the draws, scaled by exp(-max_l log f_l(z)): P = D * exp(mx)
        d_p, d_q = np.exp(self._log_w) @ star[2], np.exp(log_pi) @ play[2]
        d_bar = np.exp(self.log_comparator) @ star[2]
        if min(d_p.min(), d_q.min(), d_bar.min()) > 0:                # in place: these are (C, m L) arrays
            p_minus_q = np.log(np.divide(d_p, d_q, out=d_q), out=d_q)
            p_minus_q += star[1] - play[1]
            p_minus_bar = np.log(np.divide(d_p, d_bar, out=d_bar), out=d_bar)
        else:                                                          # some density underflowed: log path
            log_p = _mixture_log_density(self._log_w, star)
            p_minus_q = log_p - _mixture_log_density(log_pi, play)
            p_minus_bar = log_p - _mixture_log_density(self.log_comparator, star)
        shape, ws = self._shape(), self.weights_star
        return (np.einsum("cr,cr->c", ws, p_minus_q.reshape(shape).mean(-1)),
                np.einsum("cr,cr->c", ws, p_minus_bar.reshape(shape).mean(-1)))

    def true_gradient(self, log_pi: np.ndarray) -> np.ndarray:
        r"""The exact gradient (4.27) at the played weights, estimated on the loss draws, (C, m).

        :math:`\nabla_{t,c,j} = -\sum_r\pi^*_{t,c,r}\,\mathbb E_{z\sim\mathcal N(\mu^*_r,\sigma^2I)}
        [f^*_j(z)/\sum_l\pi_{t,c,l}f^*_l(z)]`.
        """
        star, (c, m, n_draws) = self._star, self._shape()
        d_den = np.exp(log_pi) @ star[2]
        if d_den.min() > 0:                                            # exp(mx) / P_played(z), in place
            inv = np.minimum(np.divide(1.0, d_den, out=d_den), STEP_CAP, out=d_den)
        else:
            inv = np.exp(np.minimum(star[1] - _mixture_log_density(log_pi, star), LOG_CAP))
        weighted = inv.reshape(c, m, n_draws)
        weighted *= self.weights_star[:, :, None]
        return -(weighted.reshape(c, -1) @ star[2].T) / n_draws


class GMMEnvironment:
    r"""The federated Gaussian-mixture stream of §4.4.5.1 as engine data: ``env(t)`` is the :class:`GMMStep` t + 1.

    :math:`\mathcal P_{t,c} = \sum_j\pi^*_{t,c,j}\mathcal N(\mu^*_j,\sigma^2I_d)`, the weights chosen by the
    environment (possibly adversarially). Step t draws the n samples of every client from
    ``(seed, t, Stream.ONLINE_DATA)`` and the loss draws from ``(seed, t, Stream.ONLINE_LOSS)``; the comparator is
    the best fixed model in hindsight :math:`(\mu^*, \bar\pi^*_c)`, :math:`\bar\pi^*_c = \frac1T\sum_s\pi^*_{s,c}`.

    Parameters
    ----------
    means_star : array (m, d)
        True centres :math:`\mu^*_j`.
    weights_star : array (T, C, m)
        True weights :math:`\pi^*_{t,c}` on the simplex.
    n_samples : int
        Samples per client and step, :math:`n \ge 1`.
    n_mc_loss : int
        Draws per component to estimate the loss and the true gradient (>= 1).
    variance : float
        Known component variance :math:`\sigma^2 > 0` (1 in the thesis).
    seed : int
    """

    def __init__(self, means_star: Any, weights_star: Any, *, n_samples: int = 30, n_mc_loss: int = 200,
                 variance: float = 1.0, seed: int = 0) -> None:
        self.means_star = check_array("means_star", means_star, ndim=2)
        m = self.means_star.shape[0]
        self.weights_star = check_simplex("weights_star", weights_star, size=m)
        if self.weights_star.ndim != 3 or 0 in self.weights_star.shape[:2]:
            raise ValueError("weights_star must have shape (T, C, m) with at least one step and one client, got "
                             f"{self.weights_star.shape}.")
        self.n_samples = check_int("n_samples", n_samples, low=1)
        self.n_mc_loss = check_int("n_mc_loss", n_mc_loss, low=1)
        self.variance = _check_variance(variance)
        self.seed = check_int("seed", seed, low=0)
        self.log_comparator = log_weights(self.weights_star.mean(0))

    @property
    def horizon(self) -> int:
        return int(self.weights_star.shape[0])

    def __call__(self, t: int) -> GMMStep:
        t = check_int("t", t, low=0, high=self.horizon - 1)
        mu, ws, step = self.means_star, self.weights_star[t], t + 1
        shape = (mu.shape[0], self.n_mc_loss, mu.shape[1])
        z = mu[:, None, :] + math.sqrt(self.variance) * numpy_rng(self.seed, step, Stream.ONLINE_LOSS).standard_normal(shape)
        x = _sample_mixture(numpy_rng(self.seed, step, Stream.ONLINE_DATA), ws, mu, self.n_samples, self.variance)
        return GMMStep(step, self.horizon, mu, ws, self.log_comparator, x, z, self.variance)


# ----------------------------------------------------------------------------------------- the separated limit

def dirichlet_weights(*, n_components: int = 3, alpha: float = 0.1, horizon: int = 1000, floor: float = 1e-12,
                      seed: int = 0) -> np.ndarray:
    r"""Weights :math:`\pi^*_t\sim\mathrm{Dir}(\alpha 1_m)`, one per step, floored at ``floor`` and renormalised.

    The environment of the fully separated limit (spec fact A9), drawn from ``(seed, 0, Stream.ONLINE_ENV)``.

    Parameters
    ----------
    n_components : int
        m >= 2.
    alpha : float
        Dirichlet concentration > 0.
    horizon : int
        T >= 1.
    floor : float
        In [0, 1/m).
    seed : int

    Returns
    -------
    np.ndarray (T, m)

    >>> dirichlet_weights(n_components=3, horizon=4).shape
    (4, 3)
    """
    m = check_int("n_components", n_components, low=2)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    horizon = check_int("horizon", horizon, low=1)
    floor = check_real("floor", floor, low=0, high=1.0 / m, high_open=True)
    rng = numpy_rng(check_int("seed", seed, low=0), 0, Stream.ONLINE_ENV)
    pi_star = np.maximum(rng.dirichlet(np.full(m, alpha), size=horizon), floor)
    pi_star /= pi_star.sum(1, keepdims=True)
    return pi_star


# ----------------------------------------------------------------------------------------- mixture streams

def _check_inputs(name: str, x: Any) -> np.ndarray:
    """Model inputs: a finite numeric array of shape (N, ...), N >= 1 (its dtype kept)."""
    x = check_array(name, x, dtype=None, finite=False)
    if x.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold numbers, got dtype {x.dtype}.")
    if x.ndim < 2 or len(x) == 0:
        raise ValueError(f"{name} must have shape (N, ...) with N >= 1 samples, got {x.shape}.")
    return check_array(name, x, dtype=None)


def _check_pool(name: str, pool: Any) -> tuple[np.ndarray, np.ndarray]:
    """A pool ``(x, y)``: ``x`` of shape (N, ...) and integer labels ``y`` >= 0 of shape (N,), N >= 1."""
    check_sequence(name, pool, size=2)
    x = _check_inputs(f"{name}[0]", pool[0])
    y = check_array(f"{name}[1]", pool[1], shape=(len(x),), nonnegative=True, dtype=np.int64)
    return x, y


class MixtureStream:
    r"""A mixture-structured stream over any labelled pools, for the discriminative FEM-OMD (§4.4.5.2).

    The training pool ``train = (x, y)`` and the test pool ``test`` are split into m base distributions:

    * ``"label_groups"`` (the thesis's construction): the ``n_classes`` classes cut into m random groups; component j
      draws a sample of a class in group j (label shift);
    * ``"permutation"``: component j draws any sample and relabels it with a fixed permutation
      :math:`\sigma_j` of the classes (:math:`\sigma_0` = identity; concept shift, a single model cannot fit it).

    At step t client c has weights :math:`\pi^*_{t,c}\sim\mathrm{Dir}(\alpha 1_m)` — drawn afresh at every step
    (``weights="iid"``, the thesis's environment) or once per client (``weights="fixed"``, a stationary
    personal mixture that online mirror descent can learn) — then counts
    :math:`\mathbf n_t\sim\mathcal M(n, \pi^*_{t,c})` of training samples and
    :math:`\mathbf n'_t\sim\mathcal M(n', \pi^*_{t,c})` of test samples from the m components (with
    replacement from the pools). ``stream(t)`` returns the step's :class:`~fedlab.engine.FederatedDataset`;
    every draw derives from ``(seed, t)``.

    Parameters
    ----------
    train, test : (x, y)
        Pools: ``x`` of shape (N, ...) (the model's input), ``y`` integer labels of shape (N,).
    n_classes : int, optional
        Default: the largest label + 1. Every component needs a sample in both pools.
    n_clients : int
        C (10 in the thesis).
    n_components : int
        m in [1, n_classes] (4 in the thesis).
    n_samples, n_test : int
        n >= 1 training and n' >= 1 test samples per client and step (6 and 1 for MNIST in the thesis).
    alpha : float
        Dirichlet concentration (0.1).
    mode : {"label_groups", "permutation"}
    weights : {"iid", "fixed"}
    seed : int
    groups_rng : numpy Generator, optional
        Draws the class groups (or permutations); default ``numpy_rng(seed, 0, Stream.ONLINE_POOL)``.
    """

    def __init__(self, train: Any, test: Any, *, n_classes: int | None = None, n_clients: int = 10,
                 n_components: int = 4, n_samples: int = 6, n_test: int = 1, alpha: float = 0.1,
                 mode: str = "label_groups", weights: str = "iid", seed: int = 0,
                 groups_rng: np.random.Generator | None = None) -> None:
        (self.x_train, self.y_train), (self.x_test, self.y_test) = _check_pool("train", train), _check_pool("test", test)
        top = int(max(self.y_train.max(), self.y_test.max())) + 1
        self.n_classes = top if n_classes is None else check_int("n_classes", n_classes, low=max(top, 1))
        self.n_clients = check_int("n_clients", n_clients, low=1)
        self.n_components = check_int("n_components", n_components, low=1, high=self.n_classes)
        self.n_samples = check_int("n_samples", n_samples, low=1)
        self.n_test = check_int("n_test", n_test, low=1)
        self.alpha = check_real("alpha", alpha, low=0, low_open=True)
        self.mode = check_choice("mode", mode, DIGITS_STREAM_MODES)
        self.weight_process = check_choice("weights", weights, WEIGHT_PROCESSES)
        self.seed = check_int("seed", seed, low=0)
        if groups_rng is not None and not isinstance(groups_rng, np.random.Generator):
            raise TypeError(f"groups_rng must be a numpy Generator, got {type(groups_rng).__name__}.")
        rng = numpy_rng(self.seed, 0, Stream.ONLINE_POOL) if groups_rng is None else groups_rng
        self._cache: dict[int, dict] = {}
        self._components(rng)

    def _components(self, rng: np.random.Generator) -> None:
        """Draw the class groups (or permutations) and index each component's samples in both pools."""
        m, k = self.n_components, self.n_classes
        if self.mode == "label_groups":
            self.groups = np.zeros(k, dtype=np.int64)
            for g, members in enumerate(np.array_split(rng.permutation(k), m)):
                self.groups[members] = g
            self.permutations = np.tile(np.arange(k), (m, 1))
            member = lambda y, j: np.flatnonzero(self.groups[y] == j)
        else:
            self.groups = None
            perms = [np.arange(k)]
            while len(perms) < m:
                p = rng.permutation(k)
                if not any(np.array_equal(p, q) for q in perms):
                    perms.append(p)
            self.permutations = np.stack(perms)
            member = lambda y, j: np.arange(len(y))
        self._pools = {"train": [member(self.y_train, j) for j in range(m)],
                       "test": [member(self.y_test, j) for j in range(m)]}
        for pool, parts in self._pools.items():
            empty = [j for j, idx in enumerate(parts) if len(idx) == 0]
            if empty:
                raise ValueError(f"{pool} has no sample of component(s) {empty} (classes "
                                 f"{np.flatnonzero(np.isin(self.groups, empty)).tolist()}).")

    def weights(self, t: int) -> np.ndarray:
        r""":math:`\pi^*_{t,c}` of every client, shape (C, m)."""
        t = check_int("t", t, low=0)
        key = t if self.weight_process == "iid" else 0
        w = numpy_rng(self.seed, key, Stream.ONLINE_WEIGHTS).dirichlet(np.full(self.n_components, self.alpha),
                                                                       size=self.n_clients)
        w = np.maximum(w, 1e-12)
        return w / w.sum(1, keepdims=True)

    def _draw(self, rng: np.random.Generator, pi: np.ndarray, n: int, pool: str) -> tuple[np.ndarray, np.ndarray]:
        counts = rng.multinomial(n, pi)
        idx, comp = [], []
        for j, k in enumerate(counts):
            if k:
                idx.append(rng.choice(self._pools[pool][j], size=k, replace=True))
                comp.append(np.full(k, j))
        return np.concatenate(idx), np.concatenate(comp)

    def _indices(self, t: int) -> dict:
        """Pool indices and components of step t's draws (cached: the images are gathered on demand)."""
        if t not in self._cache:
            pi = self.weights(t)
            rng = numpy_rng(self.seed, t, Stream.ONLINE_DRAW)
            out = {"train": [], "test": []}
            for c in range(self.n_clients):
                out["train"].append(self._draw(rng, pi[c], self.n_samples, "train"))
                out["test"].append(self._draw(rng, pi[c], self.n_test, "test"))
            self._cache[t] = out
        return self._cache[t]

    def samples(self, t: int) -> dict:
        """The raw draws of step t: lists (one per client) of ``x``, ``y``, ``z`` (component) for train and test."""
        t = check_int("t", t, low=0)
        out = {k: [] for k in ("x", "y", "z", "x_test", "y_test", "z_test")}
        for suffix, pool, x, y in (("", "train", self.x_train, self.y_train),
                                   ("_test", "test", self.x_test, self.y_test)):
            for idx, comp in self._indices(t)[pool]:
                out["x" + suffix].append(x[idx])
                out["y" + suffix].append(self.permutations[comp, y[idx]])
                out["z" + suffix].append(comp)
        return out

    def __call__(self, t: int) -> FederatedDataset:
        s = self.samples(t)
        return FederatedDataset(ClientData.from_arrays(s["x"], s["y"]),
                                ClientData.from_arrays(s["x_test"], s["y_test"]), self.n_classes)

    def pooled(self, horizon: int) -> tuple[np.ndarray, np.ndarray]:
        """All training samples of steps ``0..horizon-1``, pooled over clients: ``(x (N, ...), y (N,))``."""
        horizon = check_int("horizon", horizon, low=1)
        xs, ys = [], []
        for t in range(horizon):
            s = self.samples(t)
            xs.extend(s["x"])
            ys.extend(s["y"])
        return np.concatenate(xs), np.concatenate(ys)


class DigitsMixtureStream(MixtureStream):
    r""":class:`MixtureStream` on scikit-learn's digits (§4.4.5.2 at small scale).

    The 1797 images (64 features in [0, 1]) are split once into a training pool (75 %) and a test pool, with the
    generator that then draws the class groups (so a seed gives the same stream as before the generalisation).
    ``x``/``y`` hold all the images, ``train_pool``/``test_pool`` the indices of each pool in them.

    Parameters
    ----------
    n_clients, n_components, n_samples, n_test, alpha, mode, weights, seed
        As :class:`MixtureStream` (``n_components`` in [1, 10]).
    """

    def __init__(self, *, n_clients: int = 10, n_components: int = 4, n_samples: int = 6, n_test: int = 1,
                 alpha: float = 0.1, mode: str = "label_groups", weights: str = "iid", seed: int = 0) -> None:
        seed = check_int("seed", seed, low=0)
        x, y = load_digits_arrays()
        self.x, self.y = x.astype(np.float32), y.astype(np.int64)
        rng = numpy_rng(seed, 0, Stream.ONLINE_POOL)
        perm = rng.permutation(len(y))
        cut = int(0.75 * len(y))
        self.train_pool, self.test_pool = np.sort(perm[:cut]), np.sort(perm[cut:])
        super().__init__((self.x[self.train_pool], self.y[self.train_pool]),
                         (self.x[self.test_pool], self.y[self.test_pool]), n_classes=10, n_clients=n_clients,
                         n_components=n_components, n_samples=n_samples, n_test=n_test, alpha=alpha, mode=mode,
                         weights=weights, seed=seed, groups_rng=rng)


