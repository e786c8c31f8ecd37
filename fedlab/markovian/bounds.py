r"""Calculators for streaming FL with Markovian data (Huynh, Egan, Neglia, Gorce; spec ``dynamic.md`` part D).

Everything is pure numpy and follows the paper's conventions:

* total variation in the **L1 convention** of Def. 3.2, :math:`\|\mu-\nu\|_{TV} = 2\sup_A|\mu(A)-\nu(A)|
  = \sum_x|\mu(x)-\nu(x)|` (range [0, 2]); :func:`tv_sup` gives the sup convention (range [0, 1]);
* the mixing time :math:`\tau = \tau(1/4)` of Def. 3.3, :math:`\tau(\varepsilon) = \inf\{t\ge1: d(t)\le\varepsilon\}`
  with :math:`d(t) = \sup_x \|P^t(x,\cdot)-\pi\|_{TV}`;
* the explicit (constant-carrying) forms of Theorems 4.5, 4.7 and 4.9 proved in appendices D-F, with the
  corrections listed in the spec (D.5): 16 instead of 17/2 in Lemma F.5 and 32 instead of 64 in Cor. D.3.

Symbols (spec §0.1): ``n_clients`` = M, ``n_local`` = K (samples = local steps per round), ``n_rounds`` = T,
``lr_global`` = :math:`\gamma`, ``lr_local`` = :math:`\eta`, ``momentum_beta`` = :math:`\beta`,
``smooth_L`` = L, ``sigma2`` = :math:`\sigma^2` (uniform gradient noise, Ass. 4.3), ``het_theta2``,
``het_delta2`` = :math:`\theta^2, \delta^2` (bounded gradient dissimilarity, Ass. 4.4),
``delta0`` = :math:`\Delta_0 = F(w_0)-F^*`, ``mixing_time`` = :math:`\tau`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real

__all__ = [
    "tv_l1",
    "tv_sup",
    "two_state_tv",
    "two_state_mixing_time",
    "product_two_state_tv",
    "product_two_state_mixing_time",
    "product_mixing_time_bound",
    "tv_series_geometric",
    "lemma_c2",
    "minibatch_bound",
    "local_sgd_bound",
    "local_sgdm_bound",
    "minibatch_complexity",
    "local_sgd_complexity",
    "local_sgdm_complexity",
    "table1_complexity",
    "TABLE1_ALGORITHMS",
    "step_conditions_local_sgdm",
]


# ------------------------------------------------------------------------------ total variation

def _two_distributions(p, q) -> tuple[np.ndarray, np.ndarray]:
    p = check_array("p", p, nonnegative=True)
    q = check_array("q", q, nonnegative=True)
    if p.shape != q.shape or p.ndim == 0:
        raise ValueError(f"p and q must be probability vectors of the same shape, got {p.shape} and {q.shape}.")
    for name, arr in (("p", p), ("q", q)):
        sums = arr.sum(-1)
        if np.any(np.abs(sums - 1.0) > 1e-6):
            raise ValueError(f"{name} must sum to 1 along its last axis, got sums {np.round(sums, 6)}.")
    return p, q


def tv_l1(p, q) -> float | np.ndarray:
    r"""Total variation in the L1 convention of paper D (Def. 3.2): :math:`\sum_x |p(x)-q(x)| \in [0, 2]`.

    Parameters
    ----------
    p, q : array (..., S)
        Probability vectors (last axis sums to 1).

    Returns
    -------
    float or array (...)
    """
    p, q = _two_distributions(p, q)
    out = np.abs(p - q).sum(-1)
    return float(out) if out.ndim == 0 else out


def tv_sup(p, q) -> float | np.ndarray:
    r"""Total variation in the sup convention, :math:`\sup_A|p(A)-q(A)| = \tfrac12\sum_x|p(x)-q(x)| \in [0,1]`.

    This is the convention of Pinsker's inequality :math:`\|P-Q\|^2 \le \mathrm{KL}(P\|Q)/2` (thesis Lemma H.6).
    """
    return tv_l1(p, q) / 2.0


def _check_flip(p) -> np.ndarray:
    arr = check_array("flip_prob", p)
    if np.any(arr <= 0) or np.any(arr >= 1):
        raise ValueError(f"flip_prob must lie in (0, 1) (p = 0 never mixes, p = 1 is periodic), got {arr}.")
    return arr


def two_state_tv(flip_prob, t) -> float | np.ndarray:
    r"""Exact :math:`d(t)` of the symmetric two-state chain with flip probability p: :math:`|1-2p|^t` (L1 TV).

    From either state, :math:`P^t(x, x) = (1 + (1-2p)^t)/2`, so :math:`\|P^t(x,\cdot)-\pi\|_{TV} = |1-2p|^t`
    with :math:`\pi = (1/2, 1/2)` [spec D.4, derived].

    Parameters
    ----------
    flip_prob : float or array in (0, 1)
    t : int or array of int >= 0
    """
    p = _check_flip(flip_prob)
    t = check_array("t", t, nonnegative=True)
    out = np.abs(1.0 - 2.0 * p) ** t
    return float(out) if out.ndim == 0 else out


def two_state_mixing_time(flip_prob, eps: float = 0.25) -> int | np.ndarray:
    r"""Mixing time :math:`\tau(\varepsilon) = \max(1, \lceil \ln(1/\varepsilon) / (-\ln|1-2p|) \rceil)`.

    For small p this is :math:`\approx \ln 4/(2p) \approx 0.69/p` at :math:`\varepsilon = 1/4`
    (p = 0.01 gives 69) [spec D.4].

    Parameters
    ----------
    flip_prob : float or array in (0, 1)
    eps : float in (0, 2)
        TV level (L1 convention).
    """
    p = _check_flip(flip_prob)
    eps = check_real("eps", eps, low=0, high=2, low_open=True, high_open=True)
    rho = np.abs(1.0 - 2.0 * p)
    with np.errstate(divide="ignore"):
        raw = np.where(rho > 0, np.log(1.0 / eps) / -np.log(np.where(rho > 0, rho, 0.5)), 0.0)
    tau = np.maximum(1, np.ceil(raw - 1e-9)).astype(int)
    return int(tau) if tau.ndim == 0 else tau


def _log_binom(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def product_two_state_tv(n_clients: int, flip_prob: float, t) -> float | np.ndarray:
    r"""Exact L1 TV of M independent symmetric two-state chains (all started in state 0) to their uniform law.

    With :math:`r = (1-2p)^t`, :math:`a = (1+r)/2`, :math:`b = (1-r)/2`, the product law puts mass
    :math:`a^{M-j}b^j` on each of the :math:`\binom Mj` states with j ones, hence

    .. math:: \|QP^t - \pi\|_{TV} = \sum_{j=0}^M \binom Mj \,|a^{M-j}b^j - 2^{-M}|.

    By symmetry every starting state gives the same value, so this is also :math:`d(t)` of the product chain
    [spec D.4]. Computed in log space (stable for M in the thousands).

    Parameters
    ----------
    n_clients : int >= 1
    flip_prob : float in (0, 1)
    t : int or array of int >= 0
    """
    m = check_int("n_clients", n_clients, low=1)
    p = float(_check_flip(check_real("flip_prob", flip_prob)))
    t_arr = check_array("t", t, nonnegative=True)
    j = np.arange(m + 1, dtype=float)
    logc = _log_binom(m, j)
    out = np.empty(t_arr.shape)
    for idx, tt in np.ndenumerate(t_arr):
        r = (1.0 - 2.0 * p) ** tt
        a, b = (1.0 + r) / 2.0, (1.0 - r) / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            log_a = np.log(a)
            log_b = np.log(b) if b > 0 else -np.inf
            log_mass = np.where(j == 0, m * log_a, (m - j) * log_a + j * log_b)
        # C(M,j) a^(M-j) b^j and C(M,j) 2^-M are both binomial pmfs: well scaled even for large M
        out[idx] = float(np.sum(np.abs(np.exp(logc + log_mass) - np.exp(logc - m * np.log(2.0)))))
    return float(out) if out.ndim == 0 else out


def product_two_state_mixing_time(n_clients: int, flip_prob: float, eps: float = 0.25, t_max: int = 10 ** 7) -> int:
    """Exact :math:`\\tau(\\varepsilon)` of M independent two-state chains (bisection on the monotone d(t)).

    p = 0.01 gives 69, 74, 115, 172 for M = 1, 2, 10, 100 [spec D.4].
    """
    m = check_int("n_clients", n_clients, low=1)
    _check_flip(check_real("flip_prob", flip_prob))
    eps = check_real("eps", eps, low=0, high=2, low_open=True, high_open=True)
    t_max = check_int("t_max", t_max, low=1)
    eps = eps + 1e-12  # d(t) = eps exactly counts as mixed
    lo, hi = 1, 1
    while product_two_state_tv(m, flip_prob, hi) > eps:
        lo, hi = hi, hi * 2
        if hi > t_max:
            raise ValueError(f"the product chain does not reach TV {eps} within t_max = {t_max} steps.")
    if product_two_state_tv(m, flip_prob, lo) <= eps:
        return lo
    while hi - lo > 1:  # invariant: d(lo) > eps >= d(hi)
        mid = (lo + hi) // 2
        if product_two_state_tv(m, flip_prob, mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def product_mixing_time_bound(mixing_times) -> int:
    r"""Proposition B.5: the product of M independent chains mixes in :math:`\tau\le(\lceil\log_4 M\rceil+1)\max_m\tau_m`.

    The main text's :math:`\max_m\tau_m \ln M` is *not* a valid bound (it fails at M = 2, spec D.3).

    Parameters
    ----------
    mixing_times : array (M,) of int >= 1
        :math:`\tau_m` of each client's chain.
    """
    taus = check_array("mixing_times", mixing_times, ndim=1, nonnegative=True)
    if taus.size == 0 or np.any(taus < 1):
        raise ValueError(f"mixing_times must be a non-empty list of values >= 1, got {taus}.")
    m = taus.size
    log4 = 0 if m == 1 else math.ceil(math.log(m, 4) - 1e-12)
    return int((log4 + 1) * int(np.ceil(taus.max())))


def tv_series_geometric(mixing_time: float, n_local: int, n_rounds: int) -> float:
    r"""Uniform-ergodicity bound on the TV series: :math:`\sum_{t=0}^{T-1}(1/4)^{\lfloor Kt/\tau\rfloor}` (Ass. 3.4)."""
    tau = check_real("mixing_time", mixing_time, low=0, low_open=True)
    k = check_int("n_local", n_local, low=1)
    t = check_int("n_rounds", n_rounds, low=1)
    steps = np.floor(k * np.arange(t) / tau)
    return float(np.sum(0.25 ** steps))


def lemma_c2(mixing_time: float, n_local: int) -> float:
    r"""Lemma C.2: if :math:`K\ge\tau`, :math:`\sum_{t\ge0}\|QP^{Kt}-\pi\|_{TV} \le 2\tau/(K\ln 4) + 1`."""
    tau = check_real("mixing_time", mixing_time, low=0, low_open=True)
    k = check_int("n_local", n_local, low=1)
    if k < tau:
        raise ValueError(f"Lemma C.2 needs n_local >= mixing_time (K >= tau), got K = {k} < tau = {tau}.")
    return 2.0 * tau / (k * math.log(4.0)) + 1.0


# ------------------------------------------------------------------------------ explicit bounds

def _common(delta0, n_rounds, mixing_time, sigma2, n_clients, n_local, tv_sum):
    return (check_real("delta0", delta0, low=0), check_int("n_rounds", n_rounds, low=1),
            check_real("mixing_time", mixing_time, low=0, low_open=True), check_real("sigma2", sigma2, low=0),
            check_int("n_clients", n_clients, low=1), check_int("n_local", n_local, low=1),
            check_real("tv_sum", tv_sum, low=0))


def minibatch_bound(delta0: float, lr_global: float, n_rounds: int, mixing_time: float, sigma2: float,
                    n_clients: int, n_local: int, tv_sum: float = 0.0, smooth_L: float | None = None) -> float:
    r"""Explicit Minibatch SGD bound (Theorem 4.5 / D.2), valid for :math:`\gamma \le 1/L`:

    .. math:: \frac1T\sum_{t<T}\mathbb E\|\nabla F(w_t)\|^2 \le \frac{2\Delta_0}{\gamma T}
              + \frac{2\tau\sigma^2}{MK} + \frac{\sigma^2}{T}\sum_{t<T}\|QP^{Kt}-\pi\|_{TV}.

    ``tv_sum`` = 0 for a stationary start (Q = π). Passing ``smooth_L`` checks :math:`\gamma\le 1/L`.
    Test vector: (1, 1, 1000, 69, 1, 10, 100) gives 0.14 [spec D.4].

    Examples
    --------
    >>> round(minibatch_bound(1, 1, 1000, 69, 1, 10, 100), 2)
    0.14
    """
    d0, t, tau, s2, m, k, tv = _common(delta0, n_rounds, mixing_time, sigma2, n_clients, n_local, tv_sum)
    gamma = check_real("lr_global", lr_global, low=0, low_open=True)
    if smooth_L is not None and gamma > 1.0 / check_real("smooth_L", smooth_L, low=0, low_open=True) + 1e-12:
        raise ValueError(f"Theorem 4.5 needs lr_global <= 1/L = {1 / smooth_L:.4g}, got {gamma}.")
    return 2 * d0 / (gamma * t) + 2 * tau * s2 / (m * k) + s2 * tv / t


def local_sgd_bound(delta0: float, lr_local: float, n_local: int, n_rounds: int, mixing_time: float, sigma2: float,
                    n_clients: int, smooth_L: float, het_theta2: float, het_delta2: float,
                    tv_sum: float = 0.0, check_step: bool = True) -> float:
    r"""Explicit Local SGD bound (Theorem 4.7 / E.2) with :math:`\tilde\eta = \eta K \le 1/(10L\delta^2)`:

    .. math:: \frac{98}{45}\frac{\Delta_0}{\tilde\eta T} + \frac{196}{45}\frac{\tau\sigma^2}{MK}
              + \frac{40}{45}\frac{L\tilde\eta(\theta^2+\sigma^2)}{\delta^2}
              + \frac{98}{45}\frac{\sigma^2}{T}\sum_t\|QP^{Kt}-\pi\|_{TV}.

    Test vector: (1, 1e-3, 100, 1000, 69, 1, 10, 1, 1, 1) gives 0.500089 [spec D.4].
    """
    d0, t, tau, s2, m, k, tv = _common(delta0, n_rounds, mixing_time, sigma2, n_clients, n_local, tv_sum)
    eta = check_real("lr_local", lr_local, low=0, low_open=True)
    big_l = check_real("smooth_L", smooth_L, low=0, low_open=True)
    th2 = check_real("het_theta2", het_theta2, low=0)
    de2 = check_real("het_delta2", het_delta2, low=1)
    check_step = check_bool("check_step", check_step)
    et = eta * k
    if check_step and et > 1.0 / (10 * big_l * de2) * (1 + 1e-9):
        raise ValueError(f"Theorem 4.7 needs lr_local * n_local <= 1/(10 L delta^2) = {1 / (10 * big_l * de2):.4g}, "
                         f"got {et:.4g}; pass check_step=False to evaluate the expression anyway.")
    return (98 / 45 * d0 / (et * t) + 196 / 45 * tau * s2 / (m * k) + 40 / 45 * big_l * et * (th2 + s2) / de2
            + 98 / 45 * s2 * tv / t)


def local_sgdm_bound(delta0: float, smooth_L: float, momentum_beta: float, lr_global: float, n_rounds: int,
                     mixing_time: float, sigma2: float, n_clients: int, n_local: int, tv_sum: float = 0.0) -> float:
    r"""Explicit Local SGD-M bound (Theorem 4.9, from Lemmas F.1 + F.5 with the corrected constant 16):

    .. math:: \frac43\Big[\frac{2\Delta_0}{\gamma T} + \frac72\frac{L\Delta_0}{\beta T} + 16\frac{\tau\sigma^2}{MK}
              + \frac{15}{2}\frac{\sigma^2}{T}\sum_t\|QP^{Kt}-\pi\|_{TV}\Big].

    Valid under the step conditions of :func:`step_conditions_local_sgdm` (:math:`\gamma\le\beta/(\sqrt{60}L)`).
    Test vector: (1, 1, 0.1, 0.1/sqrt(60), 1000, 69, 1, 10, 100) gives 1.725226 [spec D.4].
    """
    d0, t, tau, s2, m, k, tv = _common(delta0, n_rounds, mixing_time, sigma2, n_clients, n_local, tv_sum)
    big_l = check_real("smooth_L", smooth_L, low=0, low_open=True)
    beta = check_real("momentum_beta", momentum_beta, low=0, high=1, low_open=True)
    gamma = check_real("lr_global", lr_global, low=0, low_open=True)
    return 4 / 3 * (2 * d0 / (gamma * t) + 3.5 * big_l * d0 / (beta * t) + 16 * tau * s2 / (m * k) + 7.5 * s2 * tv / t)


# ------------------------------------------------------------------------------ complexities

def _eps_etc(eps, smooth_L, delta0, sigma2, mixing_time, n_clients, stationary):
    if not isinstance(stationary, (bool, np.bool_)):
        raise TypeError(f"stationary must be a bool, got {stationary!r}.")
    return (check_real("eps", eps, low=0, low_open=True), check_real("smooth_L", smooth_L, low=0, low_open=True),
            check_real("delta0", delta0, low=0), check_real("sigma2", sigma2, low=0),
            check_real("mixing_time", mixing_time, low=0, low_open=True), check_int("n_clients", n_clients, low=1))


def minibatch_complexity(eps: float, *, smooth_L: float, delta0: float, sigma2: float, mixing_time: float,
                         n_clients: int, stationary: bool = True) -> dict:
    r"""Corollary D.3 (explicit constants, :math:`\gamma = 1/L`): the K and T that guarantee
    :math:`\mathbb E\|\nabla F(\hat w_T)\|^2 \le \varepsilon^2` for Minibatch SGD.

    * stationary: :math:`K \ge 4\tau\sigma^2/(M\varepsilon^2)`, :math:`T \ge 4L\Delta_0/\varepsilon^2`;
    * non-stationary: :math:`K \ge 8\tau\sigma^2/(M\varepsilon^2)`, :math:`T\ge 8(L\Delta_0\vee\sigma^2)/\varepsilon^2`,
      with :math:`\varepsilon \le \sqrt{8\sigma^2/M}` so that :math:`K\ge\tau` (Lemma C.2 applies).

    Returns
    -------
    dict with ``n_local`` (K_min), ``n_rounds`` (T_min), ``samples`` (K·T), ``eps_max`` (non-stationary
    validity limit, ``inf`` when stationary) and ``residual``: the :math:`M\varepsilon^4/(32\ln4(L\Delta_0\vee\sigma^2))`
    excess of the non-stationary case (the paper prints 64; 32 is what the stated K, T give, spec D.3).
    Test: eps = 0.1, tau = 69, sigma2 = 1, M = 10, L = Delta0 = 1 gives K = 2760, T = 400 (stationary) and
    K = 5520, T = 800, eps_max = 0.894 (non-stationary).
    """
    eps, big_l, d0, s2, tau, m = _eps_etc(eps, smooth_L, delta0, sigma2, mixing_time, n_clients, stationary)
    if stationary:
        k_min, t_min, eps_max, residual = 4 * tau * s2 / (m * eps ** 2), 4 * big_l * d0 / eps ** 2, math.inf, 0.0
    else:
        scale = max(big_l * d0, s2)
        k_min, t_min = 8 * tau * s2 / (m * eps ** 2), 8 * scale / eps ** 2
        eps_max = math.sqrt(8 * s2 / m)
        residual = m * eps ** 4 / (32 * math.log(4) * scale) if scale > 0 else 0.0
    k_int, t_int = math.ceil(k_min - 1e-9), math.ceil(t_min - 1e-9)
    return {"n_local": k_int, "n_rounds": t_int, "samples": k_int * t_int, "eps_max": eps_max, "residual": residual}


def local_sgd_complexity(eps: float, *, smooth_L: float, delta0: float, sigma2: float, mixing_time: float,
                         n_clients: int, het_theta2: float, het_delta2: float, stationary: bool = True) -> dict:
    r"""Corollary E.3 (explicit constants) for Local SGD.

    * stationary: :math:`K\ge\frac{196}{15}\frac{\tau\sigma^2}{M\varepsilon^2}`,
      :math:`\eta = \frac38\frac{\delta^2\varepsilon^2}{KL(\theta^2+\sigma^2)}\wedge\frac1{10KL\delta^2}`,
      :math:`T\ge\frac{98}{15}\frac{\Delta_0}{\eta K\varepsilon^2}` (each of the three bound terms is then
      exactly :math:`\varepsilon^2/3` when the first step condition binds);
    * non-stationary: 196/9, 9/40 and :math:`T\ge\frac{98}{9}\frac{\Delta_0\vee\sigma^2}{\eta K\varepsilon^2}`,
      with :math:`\varepsilon\le\sqrt{(196/9)\sigma^2/M}`.

    Returns dict with ``n_local``, ``lr_local``, ``n_rounds``, ``samples``, ``eps_max``.
    """
    eps, big_l, d0, s2, tau, m = _eps_etc(eps, smooth_L, delta0, sigma2, mixing_time, n_clients, stationary)
    th2 = check_real("het_theta2", het_theta2, low=0)
    de2 = check_real("het_delta2", het_delta2, low=1)
    c_k, c_eta, c_t = (196 / 15, 3 / 8, 98 / 15) if stationary else (196 / 9, 9 / 40, 98 / 9)
    k_int = math.ceil(c_k * tau * s2 / (m * eps ** 2) - 1e-9)
    k_int = max(k_int, 1)
    noise = th2 + s2
    eta = min(c_eta * de2 * eps ** 2 / (k_int * big_l * noise) if noise > 0 else math.inf, 1 / (10 * k_int * big_l * de2))
    scale = d0 if stationary else max(d0, s2)
    t_int = math.ceil(c_t * scale / (eta * k_int * eps ** 2) - 1e-9)
    eps_max = math.inf if stationary else math.sqrt(196 / 9 * s2 / m)
    return {"n_local": k_int, "lr_local": eta, "n_rounds": t_int, "samples": k_int * t_int, "eps_max": eps_max}


def local_sgdm_complexity(eps: float, *, smooth_L: float, delta0: float, sigma2: float, mixing_time: float,
                          n_clients: int, momentum_beta: float, stationary: bool = True) -> dict:
    r"""K and T making the explicit Local SGD-M bound (:func:`local_sgdm_bound`, :math:`\gamma = \beta/(\sqrt{60}L)`)
    at most :math:`\varepsilon^2` [derived from Theorem F.6; the paper gives only Corollary 4.10's O-form].

    * stationary, half of :math:`\varepsilon^2` each:
      :math:`K \ge \frac{128}{3}\frac{\tau\sigma^2}{M\varepsilon^2}` and
      :math:`T \ge \frac83(2\sqrt{60}+\tfrac72)\frac{L\Delta_0}{\beta\varepsilon^2}`;
    * non-stationary, a third each, with the TV series bounded by Lemma C.2 (:math:`K\ge\tau`):
      :math:`K \ge 64\frac{\tau\sigma^2}{M\varepsilon^2}`,
      :math:`T \ge 4\big[(2\sqrt{60}+\tfrac72)\frac{L\Delta_0}{\beta}\vee 10\sigma^2(1+\tfrac{2\tau}{K\ln4})\big]/\varepsilon^2`.

    Returns dict with ``n_local``, ``lr_global``, ``n_rounds``, ``samples``, ``eps_max``.
    """
    eps, big_l, d0, s2, tau, m = _eps_etc(eps, smooth_L, delta0, sigma2, mixing_time, n_clients, stationary)
    beta = check_real("momentum_beta", momentum_beta, low=0, high=1, low_open=True)
    gamma = beta / (math.sqrt(60) * big_l)
    c_det = (2 * math.sqrt(60) + 3.5) * big_l * d0 / beta
    if stationary:
        k_int = max(1, math.ceil(128 / 3 * tau * s2 / (m * eps ** 2) - 1e-9))
        t_int = math.ceil(8 / 3 * c_det / eps ** 2 - 1e-9)
        eps_max = math.inf
    else:
        k_int = max(1, math.ceil(64 * tau * s2 / (m * eps ** 2) - 1e-9), math.ceil(tau))
        tv = 2 * tau / (k_int * math.log(4)) + 1
        t_int = math.ceil(4 * max(c_det, 10 * s2 * tv) / eps ** 2 - 1e-9)
        eps_max = math.sqrt(64 * s2 / m)
    return {"n_local": k_int, "lr_global": gamma, "n_rounds": t_int, "samples": k_int * t_int, "eps_max": eps_max}


TABLE1_ALGORITHMS = ("lower_bound_iid", "minibatch", "local", "local_momentum")


def table1_complexity(algorithm: str, eps, *, smooth_L: float = 1.0, delta0: float = 1.0, sigma2: float = 1.0,
                      mixing_time=1.0, n_clients=1, momentum_beta: float = 1.0, het_theta2: float = 0.0,
                      het_delta2: float = 1.0, stationary: bool = True) -> dict:
    r"""Table 1 of paper D as formulas with all hidden constants set to 1: communication T and samples K·T.

    ==============  ===============================================  ===========================================
    algorithm       communication T                                  sample complexity KT
    ==============  ===============================================  ===========================================
    lower bound     :math:`L\Delta_0/\varepsilon^2`                  :math:`L\Delta_0\sigma/(M\varepsilon^3)`
    Minibatch SGD   :math:`A/\varepsilon^2`                          :math:`\tau A\sigma^2/(M\varepsilon^4)`
    Local SGD       :math:`(A/\varepsilon^2)\,h`                     :math:`\tau A\sigma^2 h/(M\varepsilon^4)`
    Local SGD-M     :math:`A_\beta/\varepsilon^2`                    :math:`\tau A_\beta\sigma^2/(M\varepsilon^4)`
    ==============  ===============================================  ===========================================

    with :math:`A = L\Delta_0` (stationary) or :math:`L\Delta_0\vee\sigma^2` (non-stationary),
    :math:`A_\beta = L\Delta_0/\beta` or :math:`L\Delta_0/\beta\vee\sigma^2`, and
    :math:`h = \delta^2\vee(\theta^2+\sigma^2)/(\delta^2\varepsilon^2)`. The non-stationary Local SGD-M entry
    uses Corollary 4.10's :math:`/\varepsilon^2` (Table 1 prints it without, spec D.5.3).

    ``eps``, ``mixing_time`` and ``n_clients`` may be arrays (broadcast), for plots against M, τ or ε.

    Returns
    -------
    dict with ``n_rounds`` (T), ``samples`` (KT) and ``n_local`` (K = samples / T).
    """
    check_choice("algorithm", algorithm, TABLE1_ALGORITHMS)
    eps = check_array("eps", eps)
    tau = check_array("mixing_time", mixing_time)
    m = check_array("n_clients", n_clients)
    if np.any(eps <= 0) or np.any(tau <= 0) or np.any(m < 1):
        raise ValueError("eps and mixing_time must be > 0 and n_clients >= 1.")
    big_l = check_real("smooth_L", smooth_L, low=0, low_open=True)
    d0 = check_real("delta0", delta0, low=0)
    s2 = check_real("sigma2", sigma2, low=0)
    beta = check_real("momentum_beta", momentum_beta, low=0, high=1, low_open=True)
    th2 = check_real("het_theta2", het_theta2, low=0)
    de2 = check_real("het_delta2", het_delta2, low=1)
    if not isinstance(stationary, (bool, np.bool_)):
        raise TypeError(f"stationary must be a bool, got {stationary!r}.")
    shape = np.broadcast(eps, tau, m).shape
    a = big_l * d0 if stationary else max(big_l * d0, s2)
    if algorithm == "lower_bound_iid":
        t = big_l * d0 / eps ** 2
        samples = big_l * d0 * math.sqrt(s2) / (m * eps ** 3)
    elif algorithm == "minibatch":
        t = a / eps ** 2
        samples = tau * a * s2 / (m * eps ** 4)
    elif algorithm == "local":
        h = np.maximum(de2, (th2 + s2) / (de2 * eps ** 2))
        t = a / eps ** 2 * h
        samples = tau * a * s2 * h / (m * eps ** 4)
    else:
        ab = big_l * d0 / beta if stationary else max(big_l * d0 / beta, s2)
        t = ab / eps ** 2
        samples = tau * ab * s2 / (m * eps ** 4)
    t, samples = np.broadcast_to(t, shape).astype(float), np.broadcast_to(samples, shape).astype(float)
    return {"n_rounds": t, "samples": samples, "n_local": samples / t}


def step_conditions_local_sgdm(*, lr_local: float, n_local: int, smooth_L: float, momentum_beta: float,
                               n_clients: int, delta0: float, n_rounds: int, G0: float, lr_global: float) -> dict:
    r"""The step-size conditions of Lemma F.5 / Theorem 4.9 for Local SGD-M, with the one that binds.

    .. math:: \eta K L \le \frac1{2\beta}\wedge\frac1{\sqrt{120MK\beta^2}}\wedge\sqrt{\frac{L\Delta_0}{360\beta^3TG_0}}
              \wedge\frac{1/225}{1-\beta}\wedge\frac{1/525}{\beta\gamma LT},\qquad \gamma\le\frac{\beta}{\sqrt{60}L}.

    Returns
    -------
    dict with ``etaKL`` (the value :math:`\eta KL`), ``limits`` (name -> right-hand side), ``binding`` (name of the
    smallest limit), ``eta_max`` (largest admissible :math:`\eta`), ``gamma_max`` (:math:`\beta/(\sqrt{60}L)`) and
    ``satisfied`` (both conditions hold).
    """
    eta = check_real("lr_local", lr_local, low=0, low_open=True)
    k = check_int("n_local", n_local, low=1)
    big_l = check_real("smooth_L", smooth_L, low=0, low_open=True)
    beta = check_real("momentum_beta", momentum_beta, low=0, high=1, low_open=True)
    m = check_int("n_clients", n_clients, low=1)
    d0 = check_real("delta0", delta0, low=0)
    t = check_int("n_rounds", n_rounds, low=1)
    g0 = check_real("G0", G0, low=0)
    gamma = check_real("lr_global", lr_global, low=0, low_open=True)
    limits = {
        "1/(2 beta)": 1 / (2 * beta),
        "1/sqrt(120 M K beta^2)": 1 / math.sqrt(120 * m * k * beta ** 2),
        "sqrt(L D0/(360 beta^3 T G0))": math.sqrt(big_l * d0 / (360 * beta ** 3 * t * g0)) if g0 > 0 else math.inf,
        "(1/225)/(1-beta)": (1 / 225) / (1 - beta) if beta < 1 else math.inf,
        "(1/525)/(beta gamma L T)": (1 / 525) / (beta * gamma * big_l * t),
    }
    binding = min(limits, key=limits.get)
    gamma_max = beta / (math.sqrt(60) * big_l)
    eta_kl = eta * k * big_l
    return {"etaKL": eta_kl, "limits": limits, "binding": binding, "eta_max": limits[binding] / (k * big_l),
            "gamma_max": gamma_max, "satisfied": bool(eta_kl <= limits[binding] and gamma <= gamma_max * (1 + 1e-12))}
