r"""Bounds of FL under heterogeneous and correlated client availability (thesis §2.2.3, appendix D).

With aggregation weights :math:`\mathbf q\ge 0` and availabilities :math:`\pi`, training converges to the
minimiser of the *biased* objective :math:`F_B=\sum_k p_kF_k`, :math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` (2.17),
instead of the target :math:`F=\sum_k\alpha_kF_k` (2.14). The error splits as (Thm 2.2.2, eq. (2.23))

.. math::
    \epsilon = F(\mathbf w)-F^* \le 2\kappa^2\,(\epsilon_{opt}+\epsilon_{bias}),\qquad
    \epsilon_{bias}\le\kappa^2\chi^2_{\alpha\|p}\Gamma\ (2.24),\qquad
    \epsilon_{bias}\le 4\kappa^2 d_{TV}^2(\alpha,p)\Gamma'\ (2.28),

and :math:`\epsilon_{opt}` is bounded through :math:`\bar\epsilon_{opt}(\mathbf q)` of Thm 2.2.3, eq. (2.26):

.. math::
    \Big(\sum_{t\le T}\eta_t\Big)\mathbb E[F_B(\bar{\mathbf w}_T)-F_B^*] \le \bar\epsilon_{opt}(\mathbf q) =
    \frac{\tfrac12\mathbf q^\top\Sigma\mathbf q+v}{\pi^\top\mathbf q}+\psi+\frac{\phi}{\ln(1/\lambda(\mathbf P))}.

The proof (D.172)-(D.174) gives this form; the main text drops the factor :math:`\sum_{t\le T}\eta_t` and
Thm D.20 misplaces it (spec §2.3, §7.1). Conventions (spec §5.1): :math:`\eta_t=\eta_1/t`,
:math:`\eta_0:=\eta_1`, :math:`\mathcal J_t` clamped at 0, :math:`\phi` summed up to ``t_max``.

All functions are numpy (cvxpy for the two convex programs) and accept a leading batch axis on ``q``.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_int, check_simplex, check_real
from fedlab.markov import check_transition_matrix

__all__ = [
    "biased_importance",
    "unbiased_weights",
    "chi2_divergence",
    "tv_distance",
    "eps_bias",
    "eps_bias_tv",
    "bias_bound",
    "bias_bound_tv",
    "total_error_bound",
    "heterogeneity",
    "ergodicity_constants",
    "correlation_horizon",
    "max_step_size",
    "BoundConstants",
    "bound_constants",
    "eps_opt",
    "eps_opt_quadratic",
    "opt_quadratic_terms",
    "EpsOptMinimizer",
    "minimize_eps_opt",
    "minimize_eps_opt_cvxpy",
    "total_error_objective",
    "minimize_total_error_cvxpy",
    "SubsetBounds",
    "subset_bounds",
    "best_subset",
]


# ----------------------------------------------------------------------------------- weights and divergences

def _check_pi(pi, size: int | None = None, *, positive: bool = True) -> np.ndarray:
    pi = check_array("pi", pi, ndim=1, shape=None if size is None else (size,))
    if pi.size == 0:
        raise ValueError("pi must hold at least one client.")
    if np.any(pi < 0) or np.any(pi > 1):
        raise ValueError(f"pi must lie in [0, 1] (probabilities), got values in [{pi.min():.4g}, {pi.max():.4g}].")
    if positive and np.any(pi == 0):
        raise ValueError("pi must be positive: a client that is never available cannot be weighted by 1/pi.")
    return pi


def _check_q(q, n: int, name: str = "q") -> np.ndarray:
    q = check_array(name, q, nonnegative=True)
    if q.ndim == 0 or q.shape[-1] != n:
        raise ValueError(f"{name} must have shape (..., {n}), got {q.shape}.")
    return q


def biased_importance(pi, q) -> np.ndarray:
    r"""Biased importance :math:`\mathbf p=\pi\,\tilde\odot\,\mathbf q`, :math:`p_k=\pi_kq_k/\sum_h\pi_hq_h`, eq. (2.17).

    Parameters
    ----------
    pi : array (N,)
        Stationary availabilities in [0, 1].
    q : array (..., N)
        Non-negative aggregation weights (need not sum to 1), with :math:`\pi^\top\mathbf q>0`.

    Returns
    -------
    array (..., N) on the simplex.
    """
    pi = _check_pi(pi, positive=False)
    q = _check_q(q, len(pi))
    w = pi * q
    total = w.sum(-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("q must give positive weight to some available client (pi^T q > 0).")
    return w / total


def unbiased_weights(alpha, pi) -> np.ndarray:
    r"""Unbiased aggregation :math:`q_k=\alpha_k/\pi_k`, which gives :math:`\mathbf p=\alpha` and :math:`F_B=F` (§2.2.3.3).

    Parameters
    ----------
    alpha : array (N,)
        Target importance on the simplex.
    pi : array (N,)
        Positive availabilities.
    """
    alpha = check_simplex("alpha", alpha, ndim=1)
    pi = _check_pi(pi, len(alpha))
    return alpha / pi


def chi2_divergence(alpha, p) -> np.ndarray:
    r""":math:`\chi^2_{\alpha\|p}=\sum_k(\alpha_k-p_k)^2/p_k=\sum_k\alpha_k^2/p_k-1` (Thm 2.2.2); ``inf`` if some
    :math:`p_k=0<\alpha_k`.

    Parameters
    ----------
    alpha : array (N,), probability vector
    p : array (..., N), probability vectors
    """
    alpha = check_simplex("alpha", alpha, ndim=1)
    p = check_simplex("p", p, size=len(alpha))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, (alpha - p) ** 2 / np.where(p > 0, p, 1.0), np.where(alpha > 0, np.inf, 0.0))
    return terms.sum(-1)


def tv_distance(alpha, p) -> np.ndarray:
    r"""Total-variation distance :math:`d_{TV}(\alpha,\mathbf p)=\frac12\sum_k|\alpha_k-p_k|` (Thm 2.2.4)."""
    alpha = check_simplex("alpha", alpha, ndim=1)
    p = check_simplex("p", p, size=len(alpha))
    return 0.5 * np.abs(alpha - p).sum(-1)


def eps_bias(alpha, pi, q) -> np.ndarray:
    r""":math:`\bar\epsilon_{bias}(\mathbf q)=\chi^2_{\alpha\|\pi\tilde\odot\mathbf q}`, eq. (2.24) (diverges if a
    client is excluded).

    Examples
    --------
    >>> import numpy as np
    >>> float(eps_bias(np.array([0.5, 0.5]), pi=np.array([0.9, 0.3]), q=np.array([0.5, 0.5])))  # p = (0.75, 0.25)
    0.3333333333333333
    """
    return chi2_divergence(alpha, biased_importance(pi, q))


def eps_bias_tv(alpha, pi, q) -> np.ndarray:
    r""":math:`\bar\epsilon'_{bias}(\mathbf q)=d_{TV}^2(\alpha,\pi\tilde\odot\mathbf q)`, eq. (2.28); equals
    :math:`(1-\alpha(S))^2` when :math:`\mathbf q\propto\alpha/\pi` on the included set :math:`S`."""
    return tv_distance(alpha, biased_importance(pi, q)) ** 2


def bias_bound(alpha, pi, q, *, kappa2: float, gamma: float) -> np.ndarray:
    r"""Bias bound :math:`\epsilon_{bias}\le\kappa^2\,\chi^2_{\alpha\|p}\,\Gamma`, eq. (2.24).

    Parameters
    ----------
    kappa2 : float >= 0
        :math:`\kappa^2=(L/\mu)^2`.
    gamma : float >= 0
        Heterogeneity :math:`\Gamma` of eq. (2.22).
    """
    kappa2 = check_real("kappa2", kappa2, low=0)
    gamma = check_real("gamma", gamma, low=0)
    return kappa2 * gamma * eps_bias(alpha, pi, q)


def bias_bound_tv(alpha, pi, q, *, kappa2: float, gamma_prime: float) -> np.ndarray:
    r"""Alternative bias bound :math:`\epsilon_{bias}\le4\kappa^2\,d_{TV}^2(\alpha,p)\,\Gamma'`, eq. (2.28) (Thm 2.2.4)."""
    kappa2 = check_real("kappa2", kappa2, low=0)
    gamma_prime = check_real("gamma_prime", gamma_prime, low=0)
    return 4 * kappa2 * gamma_prime * eps_bias_tv(alpha, pi, q)


def total_error_bound(eps_opt_value, eps_bias_value, *, kappa2: float) -> np.ndarray:
    r"""Error decomposition :math:`\epsilon\le2\kappa^2(\epsilon_{opt}+\epsilon_{bias})`, eq. (2.23)."""
    kappa2 = check_real("kappa2", kappa2, low=0)
    opt = check_array("eps_opt_value", eps_opt_value, nonnegative=True)
    bias = check_array("eps_bias_value", eps_bias_value, finite=False, nonnegative=True)
    if np.any(np.isnan(bias)):
        raise ValueError("eps_bias_value must not contain NaN (inf is allowed: an unbounded chi^2).")
    if opt.shape != bias.shape and opt.ndim and bias.ndim:
        raise ValueError(f"eps_opt_value and eps_bias_value must have the same shape, got {opt.shape} and "
                         f"{bias.shape}.")
    return 2 * kappa2 * (opt + bias)


def heterogeneity(f_at, f_star) -> float:
    r"""Heterogeneity :math:`\max_k\{F_k(\mathbf w)-F_k^*\}`: :math:`\Gamma` at :math:`\mathbf w=\mathbf w^*` (2.22),
    :math:`\Gamma'` at :math:`\mathbf w=\mathbf w_B^*` (Thm 2.2.4).

    Parameters
    ----------
    f_at : array (N,)
        Local objectives :math:`F_k(\mathbf w)`.
    f_star : array (N,)
        Local minima :math:`F_k^*` (so ``f_at >= f_star`` up to rounding).
    """
    f_at = check_array("f_at", f_at, ndim=1)
    f_star = check_array("f_star", f_star, shape=f_at.shape)
    if np.any(f_at < f_star - 1e-9):
        raise ValueError("f_star must be the local minima: f_at >= f_star for every client.")
    return float(np.max(f_at - f_star))


# -------------------------------------------------------------------------------------- chain constants

def ergodicity_constants(P) -> tuple[float, int]:
    r"""Constants :math:`(C_P, T_P)` of the geometric ergodicity bound (2.18), Lemma D.17, for a diagonalisable chain.

    With :math:`\mathbf P=\mathbf U\mathbf J\mathbf U^{-1}` and all Jordan blocks of size 1,
    :math:`C_P=\sqrt{M-1}\,\|\mathbf U\|_F\|\mathbf U^{-1}\|_F` and :math:`T_P=0`. For a single two-state
    chain the sharper exact value is :math:`C_P=\max(\pi,1-\pi)` (spec §1.3); for independent two-state
    clients :math:`C_P=\sum_k\max(\pi_k,1-\pi_k)` is valid (spec §1.3).

    Parameters
    ----------
    P : array (M, M), row-stochastic, diagonalisable

    Returns
    -------
    C_P : float
    T_P : int
    """
    P = check_transition_matrix(P)
    if P.ndim != 2:
        raise ValueError(f"P must be one (M, M) transition matrix, got shape {P.shape}.")
    vals, U = np.linalg.eig(P)
    if np.linalg.cond(U) > 1e10:
        raise ValueError("P is not (numerically) diagonalisable; Lemma D.17 needs its Jordan form.")
    m = P.shape[0]
    c_p = np.sqrt(max(m - 1, 0)) * np.linalg.norm(U) * np.linalg.norm(np.linalg.inv(U))
    return float(c_p), 0


def correlation_horizon(t, *, c_p: float, h: float, mixing: float, t_p: int = 0) -> np.ndarray:
    r""":math:`\mathcal J_t=\min\{\max\{\lceil\ln(2C_PHt)/\ln(1/\lambda(\mathbf P))\rceil, T_P, 0\}, t\}` (Thm 2.2.3).

    The extra clamp at 0 handles :math:`2C_PHt<1` (spec §5.1).

    Parameters
    ----------
    t : int or array of int >= 1
    c_p, h : float > 0
    mixing : float in (0, 1)
        :math:`\lambda(\mathbf P)`.
    t_p : int >= 0
    """
    t = check_array("t", t)
    if t.size == 0 or np.any(t < 1) or np.any(t != np.round(t)):
        raise ValueError(f"t must hold integers >= 1 (rounds), got {np.ravel(t)[:5].tolist()}.")
    c_p = check_real("c_p", c_p, low=0, low_open=True)
    h = check_real("h", h, low=0, low_open=True)
    mixing = check_real("mixing", mixing, low=0, high=1, low_open=True, high_open=True)
    t_p = check_int("t_p", t_p, low=0)
    j = np.ceil(np.log(2 * c_p * h * t) / np.log(1 / mixing))
    return np.minimum(np.maximum(np.maximum(j, t_p), 0), t).astype(np.int64)


def max_step_size(L: float, E: int, Q: float) -> float:
    r"""Largest initial step allowed by (2.25): :math:`\eta_1=1/(2L(1+2EQ))`."""
    L = check_real("L", L, low=0, low_open=True)
    E = check_int("E", E, low=1)
    Q = check_real("Q", Q, low=0, low_open=True)
    return 1.0 / (2 * L * (1 + 2 * E * Q))


@functools.lru_cache(maxsize=512)
def _phi_series(c_p: float, h: float, mixing: float, t_p: int, t_max: int) -> float:
    r""":math:`\sum_{t=1}^{t_{max}}\ln(2C_PHt)/\max(t-\mathcal J_t,1)^2`, i.e. :math:`\phi/(2EDGQ\eta_1^2)` with
    :math:`\eta_0:=\eta_1`."""
    t = np.arange(1, t_max + 1, dtype=np.float64)
    j = correlation_horizon(t, c_p=c_p, h=h, mixing=mixing, t_p=t_p)
    return float(np.sum(np.log(2 * c_p * h * t) / np.maximum(t - j, 1.0) ** 2))


@dataclass(frozen=True)
class BoundConstants:
    r"""Constants of Thm 2.2.3 for given :math:`(E, L, D, G, H, \Gamma, \mathrm{diam}(W), M, Q, C_P, T_P, \lambda(\mathbf P))`.

    Attributes
    ----------
    eta1 : float
        Initial step size (:math:`\eta_t=\eta_1/t`).
    sum_eta2 : float
        :math:`\sum_{t\ge1}\eta_t^2=\eta_1^2\pi^2/6`.
    sigma_scale : float
        :math:`c=2(E+1)\sum_t\eta_t^2`, so :math:`\Sigma_{kk}=c\,\sigma_k^2\pi_k`.
    v, psi, phi : float
        As in Thm 2.2.3.
    correlation_term : float
        :math:`\phi/\ln(1/\lambda(\mathbf P))`.
    """

    eta1: float
    sum_eta2: float
    sigma_scale: float
    v: float
    psi: float
    phi: float
    correlation_term: float

    def horizon_sum(self, T: int) -> float:
        r""":math:`\sum_{t=1}^T\eta_t=\eta_1H_T` (divide :math:`\bar\epsilon_{opt}` by it to bound :math:`\mathbb E[\epsilon_{opt}]`)."""
        T = check_int("T", T, low=1)
        return float(self.eta1 * np.sum(1.0 / np.arange(1, T + 1)))


def bound_constants(*, Q: float, mixing: float, E: int = 5, L: float = 1.0, D: float = 1.0, G: float = 2.0,
                    H: float = 1.0, gamma: float = 0.5, diam: float = 1.0, M: float = 4, c_p: float = 1.0,
                    t_p: int = 0, eta1: float | None = None, t_max: int = 10**6) -> BoundConstants:
    r"""Constants :math:`v,\psi,\phi` of Thm 2.2.3 (eq. (2.26)) with :math:`\eta_t=\eta_1/t`.

    .. math::
        v=\tfrac2E\mathrm{diam}(W)^2+\tfrac{MQ}4\sum_t(\eta_t^2+\tfrac1{t^2}),\quad
        \psi=(4L(1+EQ)\Gamma+2E^2G^2)\sum_t\eta_t^2+H\sum_{t=1}^{T_P-1}\eta_t,\quad
        \phi=2EDGQ\sum_t\ln(2C_PHt)\,\eta_{t-\mathcal J_t}^2.

    The first two series use the closed form :math:`\pi^2/6` (the thesis' (D.161) writes :math:`\pi/6`, a typo);
    :math:`\phi` is truncated at ``t_max`` (changes < 1e-5 between 1e5 and 1e6) and cached.

    Parameters
    ----------
    Q : float > 0
        :math:`\|\mathbf q\|_1`.
    mixing : float in (0, 1)
        :math:`\lambda(\mathbf P)` of the (reduced) availability chain.
    E, L, D, G, H, gamma, diam, M, c_p, t_p : constants of Assumptions 3-7 and Lemma 2.2.1
        (``gamma`` is :math:`\Gamma`, ``M`` the number of joint states).
    eta1 : float or None
        Initial step; default :func:`max_step_size` (the largest allowed by (2.25)).
    t_max : int
        Truncation of the :math:`\phi` series.
    """
    Q = check_real("Q", Q, low=0, low_open=True)
    mixing = check_real("mixing", mixing, low=0, high=1, low_open=True, high_open=True)
    E = check_int("E", E, low=1)
    for name, val in (("L", L), ("D", D), ("G", G), ("H", H), ("diam", diam), ("M", M), ("c_p", c_p)):
        check_real(name, val, low=0, low_open=True)
    gamma = check_real("gamma", gamma, low=0)
    t_p = check_int("t_p", t_p, low=0)
    t_max = check_int("t_max", t_max, low=1)
    eta1 = max_step_size(L, E, Q) if eta1 is None else check_real("eta1", eta1, low=0, low_open=True)
    zeta2 = np.pi ** 2 / 6
    sum_eta2 = eta1 ** 2 * zeta2
    v = 2 / E * diam ** 2 + M * Q / 4 * (sum_eta2 + zeta2)
    psi = (4 * L * (1 + E * Q) * gamma + 2 * E ** 2 * G ** 2) * sum_eta2 + H * eta1 * np.sum(
        1.0 / np.arange(1, max(t_p, 1)))
    phi = 2 * E * D * G * Q * eta1 ** 2 * _phi_series(float(c_p), float(H), float(mixing), t_p, t_max)
    return BoundConstants(eta1, sum_eta2, 2 * (E + 1) * sum_eta2, float(v), float(psi), float(phi),
                          float(phi / np.log(1 / mixing)))


def eps_opt(q, pi, sigma2, *, mixing: float, T: int | None = None, **constants) -> np.ndarray:
    r"""Optimisation-error bound :math:`\bar\epsilon_{opt}(\mathbf q)` of Thm 2.2.3, eq. (2.26)/(D.194).

    .. math::
        \bar\epsilon_{opt}(\mathbf q)=\frac{\tfrac12\mathbf q^\top\Sigma\mathbf q+v}{\pi^\top\mathbf q}+\psi
        +\frac{\phi}{\ln(1/\lambda(\mathbf P))},\qquad \Sigma=\mathrm{diag}(2(E+1)\sigma_k^2\pi_k\textstyle\sum_t\eta_t^2),

    where :math:`v,\psi,\phi` depend on :math:`\mathbf q` through :math:`Q=\|\mathbf q\|_1` (:func:`bound_constants`).

    Parameters
    ----------
    q : array (..., N)
        Aggregation weights.
    pi : array (N,)
        Availabilities.
    sigma2 : float or array (N,)
        Gradient-noise variances :math:`\sigma_k^2`.
    mixing : float
        :math:`\lambda(\mathbf P)`.
    T : int, optional
        If given, divide by :math:`\sum_{t\le T}\eta_t` to bound :math:`\mathbb E[\epsilon_{opt}]` at round T.
    **constants
        Passed to :func:`bound_constants` (``E, L, D, G, H, gamma, diam, M, c_p, t_p, eta1, t_max``).

    Returns
    -------
    array (...)
    """
    pi = _check_pi(pi, positive=False)
    q = _check_q(q, len(pi))
    sigma2 = _per_client("sigma2", sigma2, pi.shape)
    Qs = q.sum(-1)
    out = np.empty(Qs.shape)
    for idx in np.ndindex(Qs.shape):
        c = bound_constants(Q=float(Qs[idx]), mixing=mixing, **constants)
        A = c.sigma_scale * sigma2 * pi
        val = eps_opt_quadratic(q[idx], pi, A, c.v, c.psi + c.correlation_term)
        out[idx] = val / c.horizon_sum(T) if T is not None else val
    return out if out.ndim else float(out)


def eps_opt_quadratic(q, pi, A, B: float, C: float = 0.0) -> np.ndarray:
    r"""The quadratic-over-linear objective of (D.200): :math:`J(\mathbf q)=\frac{\frac12\mathbf q^\top
    \mathrm{diag}(A)\mathbf q+B}{\pi^\top\mathbf q}+C`, i.e. :math:`\bar\epsilon_{opt}` with
    :math:`A=\Sigma_{kk}`, :math:`B=v`, :math:`C=\psi+\phi/\ln(1/\lambda)`."""
    pi = _check_pi(pi, positive=False)
    q = _check_q(q, len(pi))
    A = _per_client("A", A, pi.shape)
    B, C = check_real("B", B, low=0), check_real("C", C)
    denom = q @ pi
    with np.errstate(divide="ignore"):
        return np.where(denom > 0, (0.5 * (q ** 2) @ A + B) / np.where(denom > 0, denom, 1.0) + C, np.inf)


def _per_client(name: str, value, shape: tuple, *, positive: bool = False) -> np.ndarray:
    """A per-client constant (the diagonal ``A`` of Sigma, the variances ``sigma2``): a scalar or an array of
    ``shape``, non-negative (positive with ``positive``), broadcast to ``shape``."""
    arr = check_array(name, value, nonnegative=True)
    if arr.ndim and arr.shape != shape:
        raise ValueError(f"{name} must be a scalar or have shape {shape}, got {arr.shape}.")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be positive.")
    return np.broadcast_to(arr, shape).astype(float)


def opt_quadratic_terms(pi, sigma2, *, Q: float, mixing: float, **constants) -> tuple[np.ndarray, float, float]:
    r"""``(A, B, C)`` such that :math:`\bar\epsilon_{opt}(\mathbf q)=J(\mathbf q)` of (D.200) on
    :math:`\{\|\mathbf q\|_1=Q\}`: :math:`A_{kk}=2(E+1)\pi_k\sigma_k^2\sum_t\eta_t^2`, :math:`B=v`,
    :math:`C=\psi+\phi/\ln(1/\lambda)` (spec §2.6)."""
    pi = _check_pi(pi)
    sigma2 = _per_client("sigma2", sigma2, pi.shape)
    c = bound_constants(Q=Q, mixing=mixing, **constants)
    return c.sigma_scale * sigma2 * pi, c.v, c.psi + c.correlation_term


# ------------------------------------------------------------------------------ minimising eps_opt (D.5)

@dataclass(frozen=True, eq=False)
class EpsOptMinimizer:
    r"""Solution of (D.200): weights :math:`\mathbf q^*`, multipliers :math:`\iota^*=J^*-C` and :math:`\theta^*`,
    and the support (an upper set of :math:`\pi`)."""

    q: np.ndarray
    iota: float
    theta: float
    support: np.ndarray

    @property
    def value(self) -> float:
        r""":math:`J^*-C=\iota^*`."""
        return self.iota


def _check_min_inputs(pi, A, B, Q) -> tuple[np.ndarray, np.ndarray, float, float]:
    pi = _check_pi(pi)
    A = _per_client("A", A, pi.shape, positive=True)
    B = check_real("B", B, low=0)
    Q = check_real("Q", Q, low=0, low_open=True)
    return pi, A, B, Q


def _candidate(pi, A, B, Q, S) -> tuple[np.ndarray, float, float]:
    s0, s1, s2 = np.sum(1 / A[S]), np.sum(pi[S] / A[S]), np.sum(pi[S] ** 2 / A[S])
    delta = s0 * s2 - s1 ** 2
    q = np.zeros_like(pi)
    if delta > 1e-12 * max(s0 * s2, 1e-300):
        iota = (np.sqrt(s0 * (2 * B * delta + s2 * Q ** 2)) - s1 * Q) / delta
        theta = (iota * s1 - Q) / s0
        q[S] = (iota * pi[S] - theta) / A[S]
    else:  # constant pi on S
        pbar = float(np.mean(pi[S]))
        q[S] = Q / (A[S] * s0)
        iota = (0.5 * np.sum(A[S] * q[S] ** 2) + B) / (pbar * Q)
        theta = iota * pbar - Q / s0
    return q, float(iota), float(theta)


def minimize_eps_opt(pi, A, B: float, Q: float = 1.0) -> EpsOptMinimizer:
    r"""Closed-form minimiser of :math:`\bar\epsilon_{opt}` on :math:`\{\mathbf q\ge0,\|\mathbf q\|_1=Q\}`, (D.200)-(D.215).

    KKT (D.212): :math:`q_k^*=(\iota^*\pi_k-\theta^*)/A_{kk}` on the support :math:`S`, 0 elsewhere. With
    :math:`S_0=\sum_S1/A_{kk}`, :math:`S_1=\sum_S\pi_k/A_{kk}`, :math:`S_2=\sum_S\pi_k^2/A_{kk}`,
    :math:`\Delta=S_0S_2-S_1^2` and the stationarity in :math:`s`, :math:`\theta^*Q=B-\frac12\mathbf q^{*\top}A\mathbf q^*`:

    .. math::
        \iota^*=\frac{\sqrt{S_0(2B\Delta+S_2Q^2)}-S_1Q}{\Delta},\qquad\theta^*=\frac{\iota^*S_1-Q}{S_0}

    (spec §2.6, explicit form of (D.214)-(D.215)). The optimal support is an upper set in :math:`\pi`,
    :math:`S=\{k:\pi_k>\theta^*/\iota^*\}`: prefixes of clients sorted by decreasing :math:`\pi` are tried and the
    feasible one with the smallest :math:`\iota^*` is kept. Guideline A: low-:math:`\pi` clients are
    excluded once :math:`B` is large enough.

    Parameters
    ----------
    pi : array (N,)
        Positive availabilities.
    A : float or array (N,)
        Positive diagonal of :math:`\Sigma`.
    B : float >= 0
        :math:`v`.
    Q : float > 0
        :math:`\|\mathbf q\|_1`.

    Returns
    -------
    EpsOptMinimizer
    """
    pi, A, B, Q = _check_min_inputs(pi, A, B, Q)
    levels = np.unique(pi)[::-1]
    best = None
    for level in levels:
        S = pi >= level
        q, iota, theta = _candidate(pi, A, B, Q, S)
        tol = 1e-10 * max(1.0, abs(iota))
        feasible = np.all(q[S] > -1e-12 * Q) and np.all(iota * pi[~S] <= theta + tol)
        if feasible and (best is None or iota < best[1] - 1e-15):
            best = (np.maximum(q, 0.0), iota, theta, np.flatnonzero(S))
    if best is None:  # numerical corner: fall back to the prefix with the smallest objective
        cands = [(_candidate(pi, A, B, Q, pi >= lv), lv) for lv in levels]
        (q, iota, theta), lv = min(cands, key=lambda c: c[0][1])
        best = (np.maximum(q, 0.0), iota, theta, np.flatnonzero(pi >= lv))
    return EpsOptMinimizer(*best)


def _cvxpy():
    try:
        import cvxpy as cp
    except ImportError as err:  # pragma: no cover - cvxpy is a dependency
        raise ImportError("cvxpy is needed for the convex programs: pip install cvxpy") from err
    return cp


def _solve(problem, cp) -> None:
    if "CLARABEL" in cp.installed_solvers():  # tight tolerances (q is accurate to ~sqrt(gap)); at this level
        with warnings.catch_warnings():       # CLARABEL may report "optimal_inaccurate", which is accepted
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    else:  # pragma: no cover
        problem.solve()
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy did not solve the problem (status {problem.status}).")


def minimize_eps_opt_cvxpy(pi, A, B: float, Q: float = 1.0) -> EpsOptMinimizer:
    r"""(D.200) solved with cvxpy in the perspective variables :math:`s=1/\pi^\top\mathbf q`, :math:`\mathbf y=s\mathbf q`
    (§D.5.1): :math:`\min\frac1{2s}\mathbf y^\top A\mathbf y+Bs` s.t. :math:`\pi^\top\mathbf y=1`,
    :math:`\mathbf 1^\top\mathbf y=Qs`, :math:`\mathbf y\ge0`. Reference for :func:`minimize_eps_opt`;
    ``theta`` is recovered from the KKT conditions."""
    cp = _cvxpy()
    pi, A, B, Q = _check_min_inputs(pi, A, B, Q)
    y, s = cp.Variable(len(pi), nonneg=True), cp.Variable(pos=True)
    obj = 0.5 * cp.quad_over_lin(cp.multiply(np.sqrt(A), y), s) + B * s
    _solve(cp.Problem(cp.Minimize(obj), [pi @ y == 1, cp.sum(y) == Q * s]), cp)
    q = np.maximum(np.asarray(y.value) / float(s.value), 0.0)
    q *= Q / q.sum()
    iota = float(eps_opt_quadratic(q, pi, A, B))
    theta = (B - 0.5 * np.sum(A * q ** 2)) / Q
    return EpsOptMinimizer(q, iota, float(theta), np.flatnonzero(q > 1e-6 * Q))


# --------------------------------------------------------------------------- total error problem (2.27)

def total_error_objective(q, alpha, pi, A, B: float, C: float = 0.0, *, kappa2: float, gamma: float = 1.0) -> np.ndarray:
    r"""Objective of the total-error problem (2.27) with the bias weighted by :math:`\bar\kappa^2\Gamma`:

    .. math::
        \bar\epsilon_{opt}(\mathbf q)+\bar\kappa^2\,\Gamma\,\chi^2_{\alpha\|\pi\tilde\odot\mathbf q}.

    Up to the factor :math:`2\kappa^2`, this is the bound (2.23)-(2.24) with :math:`\kappa^2=\bar\kappa^2`; the
    thesis writes (2.27) with the constants dropped. Small :math:`\bar\kappa^2` favours fast optimisation,
    large :math:`\bar\kappa^2` the unbiased weights.

    Parameters
    ----------
    q : array (..., N)
    alpha : array (N,), target importance
    pi, A, B, C : as in :func:`eps_opt_quadratic`
    kappa2 : float >= 0
    gamma : float >= 0
        :math:`\Gamma`.
    """
    kappa2 = check_real("kappa2", kappa2, low=0)
    gamma = check_real("gamma", gamma, low=0)
    return eps_opt_quadratic(q, pi, A, B, C) + kappa2 * gamma * eps_bias(alpha, pi, q)


def minimize_total_error_cvxpy(alpha, pi, A, B: float, C: float = 0.0, *, kappa2: float, gamma: float = 1.0,
                               Q: float = 1.0) -> np.ndarray:
    r"""Solve (2.27) through its convex reformulation (spec §2.4 correction).

    :math:`\chi^2` is *not* convex in :math:`\mathbf q` on :math:`\{\|\mathbf q\|_1=Q\}` unless :math:`\pi` is
    constant (Prop. D.23 holds only then). In the perspective variables :math:`s=1/\pi^\top\mathbf q`,
    :math:`\mathbf y=s\mathbf q`, :math:`p_k=\pi_ky_k` is linear and

    .. math::
        \min_{\mathbf y\ge0,s>0}\ \tfrac12\textstyle\sum_kA_{kk}y_k^2/s+Bs+C
        +\bar\kappa^2\Gamma\big(\sum_k\alpha_k^2/(\pi_ky_k)-1\big)
        \quad\text{s.t.}\ \pi^\top\mathbf y=1,\ \mathbf 1^\top\mathbf y=Qs

    is jointly convex (``quad_over_lin`` + ``inv_pos``). With :math:`\bar\kappa^2\Gamma>0` every
    :math:`q_k>0`: the :math:`\chi^2` bound never excludes a client.

    Returns
    -------
    q : array (N,) with :math:`\|\mathbf q\|_1=Q`.
    """
    cp = _cvxpy()
    alpha = check_simplex("alpha", alpha, ndim=1)
    pi, A, B, Q = _check_min_inputs(pi, A, B, Q)
    if len(alpha) != len(pi):
        raise ValueError(f"alpha and pi must have the same length, got {len(alpha)} and {len(pi)}.")
    kappa2 = check_real("kappa2", kappa2, low=0)
    gamma = check_real("gamma", gamma, low=0)
    C = check_real("C", C)
    y, s = cp.Variable(len(pi), nonneg=True), cp.Variable(pos=True)
    obj = 0.5 * cp.quad_over_lin(cp.multiply(np.sqrt(A), y), s) + B * s + C
    if kappa2 * gamma > 0:
        obj = obj + kappa2 * gamma * (cp.sum(cp.multiply(alpha ** 2 / pi, cp.inv_pos(y))) - 1)
    _solve(cp.Problem(cp.Minimize(obj), [pi @ y == 1, cp.sum(y) == Q * s]), cp)
    q = np.maximum(np.asarray(y.value) / float(s.value), 0.0)
    return q * (Q / q.sum())


# ---------------------------------------------------------------- Guidelines A and B: subsets of clients

@dataclass(frozen=True, eq=False)
class SubsetBounds:
    r"""Bound terms for every non-empty included set :math:`S` (rows of ``masks``).

    Attributes
    ----------
    masks : bool array (2^N - 1, N)
    eps_opt : array (2^N - 1,)
        :math:`\bar\epsilon_{opt}(\mathbf q_S)/\sum_{t\le T}\eta_t` with the reduced chain's
        :math:`\lambda(\mathbf P_S)`, :math:`M=2^{|S|}` and :math:`C_P=\sum_S\max(\pi_k,1-\pi_k)`.
    tv2 : array
        :math:`d_{TV}^2(\alpha,\mathbf p_S)=(1-\alpha(S))^2`.
    mixing : array
        :math:`\lambda(\mathbf P_S)=\max_{k\in S}(|\lambda_k|+1)/2`.
    gamma_prime : float
    """

    masks: np.ndarray
    eps_opt: np.ndarray
    tv2: np.ndarray
    mixing: np.ndarray
    gamma_prime: float

    def bias(self, kappa2: float) -> np.ndarray:
        r""":math:`4\bar\kappa^2d_{TV}^2\Gamma'` for every subset (eq. (2.28) with :math:`\kappa^2=\bar\kappa^2`)."""
        return 4 * check_real("kappa2", kappa2, low=0) * self.tv2 * self.gamma_prime


def subset_bounds(alpha, pi, lam, *, sigma2=1.0, gamma_prime: float = 1.0, T: int = 200, Q: float = 1.0,
                  **constants) -> SubsetBounds:
    r"""Evaluate the bound terms of every included set :math:`S` (brute force, :math:`N\le12`).

    On :math:`S` the weights follow Guideline C, :math:`\mathbf q_S\propto\alpha/\pi` rescaled to
    :math:`\|\mathbf q_S\|_1=Q`, so :math:`\mathbf p_S=\alpha|_S/\alpha(S)` and :math:`d_{TV}=1-\alpha(S)`.
    Excluding a client changes :math:`\pi^\top\mathbf q` (Guideline A) and the reduced chain
    :math:`\mathbf P_S=\bigotimes_{k\in S}\mathbf P_k` with :math:`\lambda(\mathbf P_S)=\max_{k\in S}\lambda(\mathbf P_k)`
    (Prop. D.27, Guideline B). A qualitative tool: the bound is vacuous in absolute terms (spec §2.3).

    Parameters
    ----------
    alpha, pi, lam : arrays (N,)
        Target importance, availabilities and second eigenvalues.
    sigma2 : float or array (N,)
    gamma_prime : float
        :math:`\Gamma'` (treated as fixed).
    T : int
        Horizon: :math:`\bar\epsilon_{opt}` is divided by :math:`\sum_{t\le T}\eta_t`.
    Q : float
    **constants
        ``E, L, D, G, H, gamma, diam, eta1, t_max`` for :func:`bound_constants`.
    """
    alpha = check_simplex("alpha", alpha, ndim=1)
    n = len(alpha)
    if n > 12:
        raise ValueError(f"subset_bounds enumerates 2^N subsets; N must be <= 12, got {n}.")
    pi = _check_pi(pi, n)
    lam = check_array("lam", lam, shape=(n,))
    if np.any(np.abs(lam) >= 1):
        raise ValueError("lam must lie in (-1, 1) (irreducible, aperiodic chains).")
    gamma_prime = check_real("gamma_prime", gamma_prime, low=0)
    T, Q = check_int("T", T, low=1), check_real("Q", Q, low=0, low_open=True)
    sigma2 = _per_client("sigma2", sigma2, pi.shape)
    masks = np.array(list(itertools.product([False, True], repeat=n))[1:])[:, ::-1]
    mix_k = (np.abs(lam) + 1) / 2
    cpk = np.maximum(pi, 1 - pi)
    eps, tv2, mixing = np.empty(len(masks)), np.empty(len(masks)), np.empty(len(masks))
    for i, S in enumerate(masks):
        q = np.where(S, alpha / pi, 0.0)
        q *= Q / q.sum()
        mixing[i] = mix_k[S].max()
        eps[i] = eps_opt(q, pi, sigma2, mixing=float(mixing[i]), T=T, M=2.0 ** S.sum(), c_p=float(cpk[S].sum()),
                         **constants)
        tv2[i] = alpha[~S].sum() ** 2
    return SubsetBounds(masks, eps, tv2, mixing, gamma_prime)


def best_subset(bounds: SubsetBounds, kappa2: float) -> dict:
    r"""The included set minimising :math:`\bar\epsilon_{opt}(S)+4\bar\kappa^2d_{TV}^2(S)\Gamma'` for one
    :math:`\bar\kappa^2`; returns ``{"included", "excluded", "eps_opt", "bias", "total", "mixing"}``."""
    if not isinstance(bounds, SubsetBounds):
        raise TypeError(f"bounds must be a SubsetBounds (from subset_bounds), got {type(bounds).__name__}.")
    bias = bounds.bias(kappa2)
    total = bounds.eps_opt + bias
    i = int(np.argmin(total))
    S = bounds.masks[i]
    return {"included": np.flatnonzero(S).tolist(), "excluded": np.flatnonzero(~S).tolist(),
            "eps_opt": float(bounds.eps_opt[i]), "bias": float(bias[i]), "total": float(total[i]),
            "mixing": float(bounds.mixing[i])}
