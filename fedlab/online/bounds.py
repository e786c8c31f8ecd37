r"""Regret bounds of online federated learning with mixture models (thesis §4.4, appendix H).

FEM-OMD plays mixture weights :math:`\pi_{t,c}\in\Delta^{m-1}` with entropic online mirror descent on
gradients estimated by federated EM. The thesis states its guarantees with :math:`O(\cdot)`; the
functions below expose the hidden constants as arguments (defaults "as printed") so that the bounds
can be evaluated and plotted:

* Theorem 4.4.3 (OMD with inexact gradients, eq. (4.39)):
  :math:`\sum_t\psi_t(x_t) - \min_x\sum_s\psi_s(x) \le D_{\mathcal R}G_{\mathcal R}\sqrt T
  + D_{\mathcal X}\sum_t\|\nabla\psi_t(x_t) - \hat\nabla_t\|` -> :func:`omd_inexact_regret_bound`,
  with the step :math:`\eta = D_{\mathcal R}/(G_{\mathcal R}\sqrt T)` -> :func:`omd_stepsize`;
* its application (4.42) and Theorem 4.4.2 (4.38): :math:`R_{T,c} = O(\sqrt{T\log m}) + O(T\varepsilon)`,
  :math:`\varepsilon \asymp 1/\sqrt n` -> :func:`fem_omd_regret_bound`, :func:`fem_omd_regret_bound_eps`,
  :func:`regret_crossover_horizon`;
* the sample condition of Theorems 4.4.1/4.4.2 -> :func:`em_sample_requirement`, :func:`em_accuracy`;
* Assumption 27 (separation, (4.29)) -> :func:`separation_required`;
* Theorem 4.4.4 (4.43) -> :func:`gradient_error_bound`;
* the supporting lemmas H.4 and H.6–H.9 -> :func:`neg_entropy`, :func:`neg_entropy_diameter`,
  :func:`gauss_kl`, :func:`gauss_tv_sup`, :func:`gauss_tv_sup_upper`, :func:`mixture_tv_sup_upper`.

Total variation comes in two conventions (dynamic spec §0.2): :math:`\int|dP-dQ|\in[0,2]` and
:math:`\sup_A|P(A)-Q(A)|\in[0,1]` (half of it). Pinsker's inequality in the form of Lemma H.6,
:math:`\|P-Q\|_{TV}^2\le \mathrm{KL}(P\|Q)/2`, holds for the sup convention, which is the one used by every
``*_tv_sup*`` function here (the discrete ``tv_l1``/``tv_sup`` live in :mod:`fedlab.markovian.bounds`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_simplex

__all__ = [
    "omd_inexact_regret_bound",
    "omd_stepsize",
    "eta_anytime",
    "fem_omd_regret_bound",
    "fem_omd_regret_bound_eps",
    "regret_crossover_horizon",
    "em_sample_requirement",
    "em_accuracy",
    "separation_required",
    "gradient_error_bound",
    "neg_entropy",
    "neg_entropy_diameter",
    "gauss_kl",
    "gauss_tv_sup",
    "gauss_tv_sup_upper",
    "mixture_tv_sup_upper",
]


def _horizon(name: str, value: Any) -> np.ndarray | float:
    """A positive horizon, scalar or array (returned as float or float array)."""
    arr = check_array(name, value)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be positive, got minimum {arr.min()}.")
    return float(arr) if arr.ndim == 0 else arr


def _means(name: str, value: Any) -> np.ndarray:
    arr = check_array(name, value)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be a mean (d,) or means (m, d), got shape {arr.shape}.")
    return arr


def omd_inexact_regret_bound(horizon: int, diam_r: float, grad_bound: float, diam_x: float,
                             grad_err: Any) -> float:
    r"""Theorem 4.4.3 (eq. (4.39)): regret bound of OMD run on inexact gradients.

    .. math::
        \sum_{t=1}^T \psi_t(x_t) - \min_{x\in\mathcal X}\sum_{s=1}^T\psi_s(x)
        \le D_{\mathcal R} G_{\mathcal R}\sqrt T + D_{\mathcal X}\sum_{t=1}^T \|\nabla\psi_t(x_t) - \hat\nabla_t\|,

    valid for convex :math:`\psi_t`, :math:`\|\hat\nabla_t\|^*_t \le G_{\mathcal R}` and the fixed step
    :math:`\eta = D_{\mathcal R}/(G_{\mathcal R}\sqrt T)` (:func:`omd_stepsize`). The constant 1 in front of
    the first term is as printed (dynamic spec A.5 item 8).

    Parameters
    ----------
    horizon : int
        :math:`T \ge 1`.
    diam_r : float
        :math:`D_{\mathcal R} = \sqrt{\max_{x,y}\mathcal R(x)-\mathcal R(y)}` (``sqrt(log m)`` for the
        negative entropy on the simplex, :func:`neg_entropy_diameter`), ``>= 0``.
    grad_bound : float
        :math:`G_{\mathcal R} \ge 0`.
    diam_x : float
        :math:`D_{\mathcal X}` (2 for the simplex in :math:`\ell_1`, as in (4.42)), ``>= 0``.
    grad_err : float or array (T,)
        :math:`\|\nabla\psi_t(x_t) - \hat\nabla_t\|` per step, non-negative; a scalar is a constant error.

    Returns
    -------
    float
    """
    horizon = check_int("horizon", horizon, low=1)
    diam_r = check_real("diam_r", diam_r, low=0)
    grad_bound = check_real("grad_bound", grad_bound, low=0)
    diam_x = check_real("diam_x", diam_x, low=0)
    err = check_array("grad_err", grad_err, nonnegative=True)
    if err.ndim == 0:
        total = float(err) * horizon
    elif err.shape == (horizon,):
        total = float(err.sum())
    else:
        raise ValueError(f"grad_err must be a number or an array of shape ({horizon},), got shape {err.shape}.")
    return diam_r * grad_bound * math.sqrt(horizon) + diam_x * total


def omd_stepsize(horizon: int, n_components: int, grad_bound: float = 1.0) -> float:
    r"""The fixed OMD step of Theorem 4.4.3 on the simplex: :math:`\eta = \sqrt{\log m}/(G_{\mathcal R}\sqrt T)`.

    Parameters
    ----------
    horizon : int
        :math:`T \ge 1`.
    n_components : int
        :math:`m \ge 2` (for :math:`m = 1` the simplex is a point and :math:`\eta = 0`).
    grad_bound : float
        :math:`G_{\mathcal R} > 0`.

    Returns
    -------
    float
    """
    horizon = check_int("horizon", horizon, low=1)
    m = check_int("n_components", n_components, low=1)
    g = check_real("grad_bound", grad_bound, low=0, low_open=True)
    return math.sqrt(math.log(m)) / (g * math.sqrt(horizon))


def eta_anytime(t: Any, n_components: int, eta0: float = 1.0) -> np.ndarray | float:
    r"""Anytime (decaying) step :math:`\eta_t = \eta_0\sqrt{\log m / t}` (dynamic spec A.4, [derived]).

    Parameters
    ----------
    t : int or array of int
        Step(s), 1-based, ``>= 1``.
    n_components : int
        :math:`m \ge 1`.
    eta0 : float
        :math:`\eta_0 > 0`.

    Returns
    -------
    float or np.ndarray (same shape as ``t``)
    """
    t_arr = check_array("t", t)
    if np.any(t_arr < 1):
        raise ValueError(f"t must be >= 1 (1-based steps), got minimum {t_arr.min()}.")
    m = check_int("n_components", n_components, low=1)
    eta0 = check_real("eta0", eta0, low=0, low_open=True)
    out = eta0 * np.sqrt(math.log(m) / t_arr)
    return float(out) if out.ndim == 0 else out


def fem_omd_regret_bound(horizon: Any, n_components: int, n_samples: int, *, grad_bound: float = 1.0,
                         c_omd: float = 1.0, diam_x: float = 2.0, c_err: float = 1.0) -> np.ndarray | float:
    r"""Evaluable form of (4.42) with :math:`\|\nabla_t - \hat\nabla_t\| \le c_{err}/\sqrt n` (Theorems 4.4.2, 4.4.5).

    .. math::
        R_{T,c} \le c_{omd}\,G_{\mathcal R}\sqrt{T\log m} + D_{\mathcal X}\,c_{err}\,\frac{T}{\sqrt n},

    the ":math:`O(\sqrt{T\log m} + T/\sqrt n)`" form of the thesis summary. The constants are unknown in the
    thesis; the defaults are 1, and :math:`D_{\mathcal X} = 2` (the :math:`\ell_1` diameter of the simplex,
    the factor 2 of (4.42)).

    Parameters
    ----------
    horizon : int or array
        :math:`T > 0`.
    n_components : int
        :math:`m \ge 1`.
    n_samples : int
        Samples per client and step :math:`n \ge 1`.
    grad_bound, c_omd, diam_x, c_err : float
        Non-negative constants.

    Returns
    -------
    float or np.ndarray

    Examples
    --------
    >>> round(float(fem_omd_regret_bound(1000, 3, 30)), 2)
    398.29
    """
    t = _horizon("horizon", horizon)
    m = check_int("n_components", n_components, low=1)
    n = check_int("n_samples", n_samples, low=1)
    g = check_real("grad_bound", grad_bound, low=0)
    c_omd = check_real("c_omd", c_omd, low=0)
    diam_x = check_real("diam_x", diam_x, low=0)
    c_err = check_real("c_err", c_err, low=0)
    return c_omd * g * np.sqrt(t * math.log(m)) + diam_x * c_err * t / math.sqrt(n)


def fem_omd_regret_bound_eps(horizon: Any, n_components: int, eps: float, *, grad_bound: float = 1.0,
                             c_omd: float = 1.0, diam_x: float = 2.0, c_eps: float = 1.0) -> np.ndarray | float:
    r"""Theorem 4.4.2 (eq. (4.38)) with explicit constants.

    .. math::
        R_{T,c} \le c_{omd}G_{\mathcal R}\sqrt{T\log m} + D_{\mathcal X}c_\varepsilon T\varepsilon.

    :math:`\varepsilon` is the EM accuracy of Theorem 4.4.1 (:func:`em_accuracy`); Theorem 4.4.5 turns it into
    the gradient error :math:`\|\nabla_{t,c} - \tilde\nabla_{t,c}\| = O(\varepsilon)` (constant :math:`c_\varepsilon`).

    Parameters
    ----------
    horizon : int or array
        :math:`T > 0`.
    n_components : int
    eps : float
        :math:`\varepsilon \ge 0`.
    grad_bound, c_omd, diam_x, c_eps : float
        Non-negative constants.

    Returns
    -------
    float or np.ndarray
    """
    t = _horizon("horizon", horizon)
    m = check_int("n_components", n_components, low=1)
    eps = check_real("eps", eps, low=0)
    g = check_real("grad_bound", grad_bound, low=0)
    c_omd = check_real("c_omd", c_omd, low=0)
    diam_x = check_real("diam_x", diam_x, low=0)
    c_eps = check_real("c_eps", c_eps, low=0)
    return c_omd * g * np.sqrt(t * math.log(m)) + diam_x * c_eps * t * eps


def regret_crossover_horizon(n_components: int, n_samples: int, *, grad_bound: float = 1.0, c_omd: float = 1.0,
                             diam_x: float = 2.0, c_err: float = 1.0) -> float:
    r"""Horizon where the two terms of :func:`fem_omd_regret_bound` are equal.

    .. math::
        T^\times = \frac{c_{omd}^2 G_{\mathcal R}^2\, n\log m}{D_{\mathcal X}^2 c_{err}^2}
        \quad (= n\log(m)/4 \text{ with the defaults}).

    Beyond :math:`T^\times` the :math:`T/\sqrt n` term dominates (for :math:`n = 30, m = 3`: 8.24).

    Returns
    -------
    float
    """
    m = check_int("n_components", n_components, low=1)
    n = check_int("n_samples", n_samples, low=1)
    g = check_real("grad_bound", grad_bound, low=0)
    c_omd = check_real("c_omd", c_omd, low=0)
    diam_x = check_real("diam_x", diam_x, low=0, low_open=True)
    c_err = check_real("c_err", c_err, low=0, low_open=True)
    return (c_omd * g) ** 2 * n * math.log(m) / (diam_x * c_err) ** 2


def em_sample_requirement(dim: int, eps: float, beta: float, n_components: int, horizon: int, n_em_steps: int,
                          delta: float, *, c2: float = 1.0) -> float:
    r"""Sample condition of Theorems 4.4.1/4.4.2: :math:`n \ge \frac{C'' d}{\beta\varepsilon^2}\log^2(m^2TK/\delta)`.

    :math:`C''` is "a sufficiently large universal constant" (unknown, default 1).

    Parameters
    ----------
    dim : int
        :math:`d \ge 1`.
    eps : float
        Target accuracy :math:`\varepsilon > 0`.
    beta : float
        :math:`\beta \in (0, 1/m]`, the weight floor of Assumption 30.
    n_components, horizon, n_em_steps : int
        :math:`m, T, K \ge 1`.
    delta : float
        Failure probability :math:`\delta \in (0, 1)`.
    c2 : float
        :math:`C'' > 0`.

    Returns
    -------
    float
    """
    d = check_int("dim", dim, low=1)
    eps = check_real("eps", eps, low=0, low_open=True)
    m = check_int("n_components", n_components, low=1)
    beta = check_real("beta", beta, low=0, high=1.0 / m, low_open=True)
    t = check_int("horizon", horizon, low=1)
    k = check_int("n_em_steps", n_em_steps, low=1)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True)
    c2 = check_real("c2", c2, low=0, low_open=True)
    return c2 * d / (beta * eps ** 2) * math.log(m ** 2 * t * k / delta) ** 2


def em_accuracy(n_samples: int, dim: int, beta: float, n_components: int, horizon: int, n_em_steps: int,
                delta: float, *, c2: float = 1.0) -> float:
    r"""The sample condition of Theorem 4.4.2 inverted: :math:`\varepsilon = \sqrt{C''d/(\beta n)}\,\log(m^2TK/\delta)`.

    Parameters
    ----------
    n_samples : int
        :math:`n \ge 1`.
    dim, n_components, horizon, n_em_steps : int
    beta, delta, c2 : float
        As in :func:`em_sample_requirement`.

    Returns
    -------
    float
        The accuracy :math:`\varepsilon` that ``n_samples`` guarantee (``em_sample_requirement(..., eps)``
        returns ``n_samples`` back).
    """
    n = check_int("n_samples", n_samples, low=1)
    d = check_int("dim", dim, low=1)
    m = check_int("n_components", n_components, low=1)
    beta = check_real("beta", beta, low=0, high=1.0 / m, low_open=True)
    t = check_int("horizon", horizon, low=1)
    k = check_int("n_em_steps", n_em_steps, low=1)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True)
    c2 = check_real("c2", c2, low=0, low_open=True)
    return math.sqrt(c2 * d / (beta * n)) * math.log(m ** 2 * t * k / delta)


def separation_required(n_components: int, pi_min: float, *, c1: float = 128.0) -> float:
    r"""Assumption 27 (eq. (4.29)): the minimal centre distance :math:`C'\sqrt{\log(m/\pi_{min})}`, :math:`C' \ge 128`.

    Examples (dynamic spec A.4): ``separation_required(3, 0.1) = 236.06``, ``(4, 0.05) = 267.95``,
    ``(10, 0.01) = 336.42`` — far above the spreads :math:`s \le 5` of the experiments.

    Parameters
    ----------
    n_components : int
        :math:`m \ge 1`.
    pi_min : float
        :math:`\min_{l,t}\pi^*_{t,l} \in (0, 1/m]`.
    c1 : float
        :math:`C' > 0` (the thesis requires :math:`\ge 128`).

    Returns
    -------
    float
    """
    m = check_int("n_components", n_components, low=1)
    pi_min = check_real("pi_min", pi_min, low=0, high=1.0 / m, low_open=True)
    c1 = check_real("c1", c1, low=0, low_open=True)
    return c1 * math.sqrt(math.log(m / pi_min))


def gradient_error_bound(means: Any, means_star: Any, pi_tilde: Any, pi_star: Any, *, gamma: float = 1.0) -> float:
    r"""Theorem 4.4.4 (eq. (4.43)): bound on :math:`\pi_{t,c,j}\,|\nabla_{t,c,j} - \tilde\nabla_{t,c,j}|` for every j.

    .. math::
        \pi_{t,c,j}\,|\nabla_{t,c,j} - \tilde\nabla_{t,c,j}| \le \left(\tfrac12 + \gamma\right)
        \sup_q\|\mu_{t+1,q} - \mu^*_q\| + \|\tilde\pi^{(K+1)}_{t,c} - \pi^*_{t,c}\|_1 .

    The proof (App. H.3) adds Lemma H.9 (factor 1/2) and Lemma H.1 (an absolute constant :math:`\gamma < 1`);
    the printed 3/2 is the default ``gamma = 1``. The :math:`\ell_1` norm is over the whole weight vector, as
    in Lemma H.9 (the printed per-component index is a typo).

    Parameters
    ----------
    means, means_star : array (m, d)
        :math:`\mu_{t+1}` and :math:`\mu^*` (same labelling).
    pi_tilde, pi_star : array (m,)
        :math:`\tilde\pi^{(K+1)}_{t,c}` and :math:`\pi^*_{t,c}` on the simplex.
    gamma : float
        :math:`\gamma \ge 0`.

    Returns
    -------
    float
    """
    mu = check_array("means", means, ndim=2)
    mu_star = check_array("means_star", means_star, shape=mu.shape)
    m = mu.shape[0]
    pt = check_simplex("pi_tilde", pi_tilde, size=m)
    ps = check_simplex("pi_star", pi_star, size=m)
    if pt.ndim != 1 or ps.ndim != 1:
        raise ValueError(f"pi_tilde and pi_star must be vectors of shape ({m},).")
    gamma = check_real("gamma", gamma, low=0)
    return (0.5 + gamma) * float(np.linalg.norm(mu - mu_star, axis=1).max()) + float(np.abs(pt - ps).sum())


def neg_entropy(pi: Any) -> np.ndarray | float:
    r"""Negative entropy, the OMD regulariser of (4.40): :math:`\mathcal R(\pi) = \sum_j \pi_j\log\pi_j`.

    With the convention :math:`0\log 0 = 0`.

    Parameters
    ----------
    pi : array (..., m)
        Probability vectors on the last axis.

    Returns
    -------
    float or np.ndarray (leading shape)
    """
    p = check_simplex("pi", pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    out = terms.sum(-1)
    return float(out) if out.ndim == 0 else out


def neg_entropy_diameter(n_components: int) -> float:
    r"""Lemma H.4: :math:`D_{\mathcal R} = \sqrt{\sup_{\pi,\pi'}\mathcal R(\pi) - \mathcal R(\pi')} = \sqrt{\log m}`.

    The supremum is reached between a vertex (:math:`\mathcal R = 0`) and the uniform vector
    (:math:`\mathcal R = -\log m`).
    """
    m = check_int("n_components", n_components, low=1)
    return math.sqrt(math.log(m))


def gauss_kl(mu1: Any, mu2: Any, *, variance: float = 1.0) -> float:
    r"""Lemma H.7: KL between two Gaussians with the same isotropic covariance.

    .. math::
        \mathrm{KL}(\mathcal N(\mu,\sigma^2I)\,\|\,\mathcal N(\mu',\sigma^2I)) = \|\mu-\mu'\|^2/(2\sigma^2).

    Parameters
    ----------
    mu1, mu2 : array (d,)
    variance : float
        Shared isotropic variance :math:`\sigma^2 > 0` (1 in the thesis).
    """
    a = check_array("mu1", mu1, ndim=1)
    b = check_array("mu2", mu2, shape=a.shape)
    var = check_real("variance", variance, low=0, low_open=True)
    return float(np.sum((a - b) ** 2) / (2.0 * var))


def gauss_tv_sup(mu1: Any, mu2: Any, *, variance: float = 1.0) -> float:
    r"""Exact sup-convention TV between :math:`\mathcal N(\mu,\sigma^2 I)` and :math:`\mathcal N(\mu',\sigma^2 I)`.

    It equals :math:`2\Phi(\Delta/2\sigma) - 1`.

    :math:`\Delta = \|\mu-\mu'\|`; e.g. 0.3829 for :math:`\Delta = 1` (dynamic spec A.8, fact A6).
    """
    a = check_array("mu1", mu1, ndim=1)
    b = check_array("mu2", mu2, shape=a.shape)
    var = check_real("variance", variance, low=0, low_open=True)
    delta = float(np.linalg.norm(a - b)) / math.sqrt(var)
    return math.erf(delta / (2.0 * math.sqrt(2.0)))


def gauss_tv_sup_upper(mu1: Any, mu2: Any, *, variance: float = 1.0) -> float:
    r"""Lemma H.8 (Pinsker + H.7): :math:`\|f_\mu - f_{\mu'}\|_{TV} \le \|\mu-\mu'\|/(2\sigma)`."""
    a = check_array("mu1", mu1, ndim=1)
    b = check_array("mu2", mu2, shape=a.shape)
    var = check_real("variance", variance, low=0, low_open=True)
    return float(np.linalg.norm(a - b)) / (2.0 * math.sqrt(var))


def mixture_tv_sup_upper(pi: Any, means: Any, pi2: Any, means2: Any, *, variance: float = 1.0) -> float:
    r"""Lemma H.9: upper bound on the TV distance between two Gaussian mixtures.

    .. math::
        \Big\|\sum_i\pi_i f_{\mu_i} - \sum_i\pi'_i f_{\mu'_i}\Big\|_{TV}
        \le \sum_i\pi_i\|\mu_i-\mu'_i\|/(2\sigma) + \|\pi-\pi'\|_1 .

    Parameters
    ----------
    pi, pi2 : array (m,)
        Mixture weights on the simplex.
    means, means2 : array (m, d)
    variance : float
        Shared component variance :math:`\sigma^2 > 0`.
    """
    mu = check_array("means", means, ndim=2)
    mu2 = check_array("means2", means2, shape=mu.shape)
    p = check_simplex("pi", pi, size=mu.shape[0])
    q = check_simplex("pi2", pi2, size=mu.shape[0])
    if p.ndim != 1 or q.ndim != 1:
        raise ValueError("pi and pi2 must be vectors.")
    var = check_real("variance", variance, low=0, low_open=True)
    return float(np.sum(p * np.linalg.norm(mu - mu2, axis=1)) / (2.0 * math.sqrt(var)) + np.abs(p - q).sum())
