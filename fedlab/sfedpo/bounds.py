r"""Convergence bounds of SFedPO: Theorem 1 (6) and the term :math:`\mathcal B` (15).

Notation (spec ``dynamic.md`` §B): N clients with availability :math:`q_n` and aggregation weights :math:`p_n`,
M latent states with importance :math:`w_m` and heterogeneity :math:`d_m`, long-run state distributions
:math:`\pi_{n,m}`, sampling ratios :math:`\alpha_{n,m}`, T time steps per round, R rounds, local step size
:math:`\eta`, smoothness L, gradient variance :math:`\sigma^2`, :math:`\sum_m\|\nabla F_m\|^2\le G`.

Per client (7)-(8):

.. math::
    \alpha_n = \sum_m\pi_{n,m}\alpha_{n,m},\quad \beta_n = \sum_m\pi_{n,m}\alpha_{n,m}d_m,\quad
    \gamma_n = \frac1T\sum_{t=1}^T(1-\alpha_n)^t = \frac{(1-\alpha_n)(1-(1-\alpha_n)^T)}{T\alpha_n},\quad
    \beta'_n = 2\sum_m\pi_{n,m}\alpha_{n,m}^2 - \sum_m\pi_{n,m}^2\alpha_{n,m}^2 + \alpha_n^2,

and the bracket of (6)

.. math::
    Q_n = \underbrace{\frac{\beta_n}{\alpha_n}(1-\gamma_n)}_{t_1}
        + \underbrace{\frac{2G\gamma_n\beta'_n}{1-(1-\alpha_n)^2}}_{t_2}
        + \underbrace{2G\gamma_n\sum_m\Big(\frac{\pi_{n,m}\alpha_{n,m}}{\alpha_n} - w_m\Big)^2}_{t_3},
    \qquad s_n = L\eta\sigma^2 + Q_n \ (12).

Everything here is numpy; the DDS and SAW rules that minimise these terms, and Theorem 2's gap of a strategy
computed from a forecast, are in :mod:`fedlab.sfedpo.strategies`.
"""
from __future__ import annotations

import math

import numpy as np

from fedlab._validation import check_array, check_choice, check_int, check_real, check_simplex

__all__ = [
    "sfedpo_gamma",
    "theorem1_constants",
    "sfedpo_stepsize_ok",
    "sfedpo_client_stats",
    "heterogeneity_score",
    "dds_objective",
    "sfedpo_B",
    "theorem1_terms",
    "sfedpo_theorem1_bound",
    "LAST_TERMS",
]


# ------------------------------------------------------------------------------------ validation helpers

def _budget_array(name: str, value, shape=None) -> np.ndarray:
    arr = check_array(name, value)
    if shape is not None:
        arr = np.broadcast_to(arr, shape).astype(float)
    if np.any(arr <= 0) or np.any(arr > 1 + 1e-9):
        raise ValueError(f"{name} must lie in (0, 1], got values in [{arr.min():.4g}, {arr.max():.4g}].")
    return np.minimum(arr, 1.0)


def _pi_alpha(pi, alpha) -> tuple[np.ndarray, np.ndarray]:
    pi = check_array("pi", pi, nonnegative=True)
    if pi.ndim not in (1, 2):
        raise ValueError(f"pi must have shape (M,) or (N, M), got {pi.shape}.")
    if np.any(np.abs(pi.sum(-1) - 1) > 1e-6):
        raise ValueError(f"every row of pi must sum to 1, got sums {np.round(np.atleast_1d(pi.sum(-1))[:5], 6)}.")
    alpha = check_array("alpha", alpha, shape=pi.shape, nonnegative=True)
    if np.any(alpha > 1 + 1e-9):
        raise ValueError(f"alpha must lie in [0, 1], got maximum {alpha.max():.6g}.")
    return pi, np.minimum(alpha, 1.0)


def _vec(name: str, value, size: int, nonnegative: bool = True) -> np.ndarray:
    return check_array(name, value, shape=(size,), nonnegative=nonnegative)


# ------------------------------------------------------------------------------------ Theorem 1 pieces

def sfedpo_gamma(alpha_n, n_steps: int, form: str = "closed") -> np.ndarray | float:
    r""":math:`\gamma_n = \frac1T\sum_{t=1}^T(1-\alpha_n)^t` (7), by its definition or in closed form.

    Closed form :math:`(1-\alpha_n)(1-(1-\alpha_n)^T)/(T\alpha_n)` (spec §B.2): (0.5, 5) gives 0.19375. Note (79)
    drops the 1/T; Theorem 1 uses (7) (spec §B.7 item 3).

    Parameters
    ----------
    alpha_n : float or array-like in (0, 1]
    n_steps : int
        T >= 1.
    form : {"closed", "sum"}
    """
    a = _budget_array("alpha_n", alpha_n)
    t = check_int("n_steps", n_steps, low=1)
    form = check_choice("form", form, ("closed", "sum"))
    if form == "closed":
        out = (1 - a) * (1 - (1 - a) ** t) / (t * a)
    else:
        out = np.mean((1 - a[..., None]) ** np.arange(1, t + 1), axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def theorem1_constants(c_squared: float = 0.2) -> tuple[float, float]:
    r"""The constants of (6) from the proof (76)-(78), with :math:`c = LT\eta`.

    Returns :math:`1/(1/2 - 4c^2/(3(1-2c^2)))` and :math:`1/(1-2c^2)`, which are 18 and 5/3 at :math:`c^2 = 1/5`.
    """
    c2 = check_real("c_squared", c_squared, low=0, high=0.5, high_open=True)
    denom = 0.5 - 4 * c2 / (3 * (1 - 2 * c2))
    if denom <= 0:
        raise ValueError(f"c_squared={c2} makes the first constant infinite (needs 1/2 > 4c^2/(3(1-2c^2))).")
    return 1.0 / denom, 1.0 / (1 - 2 * c2)


def sfedpo_stepsize_ok(L: float, n_steps: int, eta: float, n_states: int, *,
                       n_active: int | None = None) -> dict:
    r"""Theorem 1's step-size condition :math:`LT\eta\le\min\{1/(2M), \sqrt{1/5}\}` (as printed).

    The proof needs :math:`LT|S_r|\eta\le 1/2` with :math:`|S_r|` the number of participating clients
    (spec §B.7 item 5); give ``n_active`` to check that version too.

    Returns
    -------
    dict with ``ok``, ``c`` (:math:`LT\eta`), ``limit`` and, with ``n_active``, ``ok_proof``/``limit_proof``.
    """
    L = check_real("L", L, low=0, low_open=True)
    t = check_int("n_steps", n_steps, low=1)
    eta = check_real("eta", eta, low=0, low_open=True)
    m = check_int("n_states", n_states, low=1)
    c = L * t * eta
    limit = min(1 / (2 * m), math.sqrt(1 / 5))
    out = {"ok": bool(c <= limit + 1e-15), "c": c, "limit": limit}
    if n_active is not None:
        n_active = check_int("n_active", n_active, low=1)
        out["limit_proof"] = 1 / (2 * n_active)
        out["ok_proof"] = bool(c <= out["limit_proof"] + 1e-15)
    return out


def sfedpo_client_stats(pi, alpha, d, w, *, G: float, n_steps: int, budget=None) -> dict[str, np.ndarray]:
    r"""Per-client quantities (7)-(8) and the three terms of Theorem 1's bracket.

    Parameters
    ----------
    pi : array-like (M,) or (N, M)
        State distributions :math:`\pi_n` (rows sum to 1).
    alpha : array-like, same shape
        Sampling ratios :math:`\alpha_{n,m}\in[0, 1]`.
    d, w : array-like (M,)
        Heterogeneity :math:`d_m \ge 0` and state importance :math:`w_m`.
    G : float
        Assumption 3's constant.
    n_steps : int
        T.
    budget : float or array-like (N,), optional
        Use this :math:`\alpha_n` instead of :math:`\sum_m\pi_{n,m}\alpha_{n,m}` (Theorem 2's evaluation
        (120)-(122) keeps the budget fixed while :math:`\sum_m\pi\hat\alpha` moves).

    Returns
    -------
    dict of arrays (N,) (floats for 1-D input): ``alpha_n``, ``beta``, ``gamma``, ``beta_prime``, ``t1``, ``t2``,
    ``t3``, ``Q``.
    """
    pi, alpha = _pi_alpha(pi, alpha)
    m = pi.shape[-1]
    d = _vec("d", d, m)
    w = _vec("w", w, m)
    G = check_real("G", G, low=0)
    t = check_int("n_steps", n_steps, low=1)
    eff = (pi * alpha).sum(-1)
    if budget is None:
        if np.any(eff <= 0):
            raise ValueError("every client needs a positive sampling budget sum_m pi_{n,m} alpha_{n,m}.")
        a_n = eff
    else:
        a_n = _budget_array("budget", budget, eff.shape)
    beta = (pi * alpha * d).sum(-1)
    gamma = np.asarray(sfedpo_gamma(a_n, t))
    beta_p = 2 * (pi * alpha ** 2).sum(-1) - (pi ** 2 * alpha ** 2).sum(-1) + a_n ** 2
    t1 = beta / a_n * (1 - gamma)
    t2 = 2 * G * gamma * beta_p / (1 - (1 - a_n) ** 2)
    t3 = 2 * G * gamma * ((pi * alpha / np.expand_dims(a_n, -1) - w) ** 2).sum(-1)
    out = {"alpha_n": a_n, "beta": beta, "gamma": gamma, "beta_prime": beta_p, "t1": t1, "t2": t2, "t3": t3,
           "Q": t1 + t2 + t3}
    if pi.ndim == 1:
        out = {k: float(v) for k, v in out.items()}
    return out


def heterogeneity_score(pi, alpha, d, w, *, G: float, n_steps: int, L: float, eta: float, sigma2: float,
                        budget=None) -> np.ndarray:
    r"""Heterogeneity scores :math:`s_n = L\eta\sigma^2 + Q_n` (12)/(90), shape (N,).

    See :func:`sfedpo_client_stats` for the arguments; ``L``, ``eta``, ``sigma2`` are :math:`L, \eta, \sigma^2`.
    """
    L = check_real("L", L, low=0)
    eta = check_real("eta", eta, low=0)
    sigma2 = check_real("sigma2", sigma2, low=0)
    stats = sfedpo_client_stats(np.atleast_2d(pi), np.atleast_2d(alpha), d, w, G=G, n_steps=n_steps, budget=budget)
    return L * eta * sigma2 + stats["Q"]


def dds_objective(pi, alpha, d, w, *, G: float, n_steps: int, budget=None) -> np.ndarray | float:
    r"""The objective of the DDS problem (82): :math:`Q_n = t_1 + t_2 + t_3` (at a fixed budget)."""
    return sfedpo_client_stats(pi, alpha, d, w, G=G, n_steps=n_steps, budget=budget)["Q"]


def sfedpo_B(L: float, eta: float, sigma2: float, p, q, s) -> float:
    r"""The term (15) of Theorem 2:
    :math:`\mathcal B = \frac{1}{\sum_n p_nq_n}\big[L\eta\sigma^2\sum_n p_n^2q_n + \frac53\sum_n p_nq_ns_n\big]`.

    Parameters
    ----------
    L, eta, sigma2 : float
    p : array-like (N,)
        Aggregation weights (non-negative; :math:`\sum_n p_nq_n > 0`).
    q : array-like (N,)
        Availability probabilities in (0, 1].
    s : array-like (N,)
        Heterogeneity scores (:func:`heterogeneity_score`).
    """
    L = check_real("L", L, low=0)
    eta = check_real("eta", eta, low=0)
    sigma2 = check_real("sigma2", sigma2, low=0)
    p = check_simplex("p", p, ndim=1)
    q = _budget_array("q", check_array("q", q, shape=p.shape))
    s = check_array("s", s, shape=p.shape)
    t0 = float(p @ q)
    if t0 <= 0:
        raise ValueError("sum_n p_n q_n must be positive.")
    return float((L * eta * sigma2 * (p ** 2 @ q) + 5 / 3 * (p * q) @ s) / t0)


def _last_printed(G, gamma, p, q, alpha_n, t, R):
    return float(np.sum(7 * G * gamma * q / (1 - (1 - alpha_n) ** (2 * t))) / R)


def _last_corrected(G, gamma, p, q, alpha_n, t, R):
    return float(np.sum(20 / 3 * G * gamma * p / (1 - (1 - alpha_n) ** (2 * t))) / R)


#: Last term of (6): as printed (:math:`7G\gamma_nq_n`) or with the proof's :math:`p_n\to q_n` slip fixed
#: (:math:`\frac53 4G\gamma_np_n`, spec §B.7 item 4).
LAST_TERMS = {"printed": _last_printed, "corrected": _last_corrected}


def theorem1_terms(F1: float, L: float, eta: float, n_steps: int, n_rounds: int, sigma2: float, G: float, d, w,
                   pi, alpha, p, q, *, last_term: str = "printed") -> dict:
    r"""The pieces of Theorem 1's bound (6); ``bound`` is their sum times :math:`18/\sum_n p_nq_n`.

    .. math::
        \min_r\mathbb E\|\nabla F(\bar x^{(r)})\|^2 \le \frac{18}{\sum_n p_nq_n}\Big[\frac{F(\bar x^{(1)})}{T\eta R}
        + L\eta\sigma^2\sum_n p_n^2q_n + \frac{5L\eta\sigma^2}{3}\sum_n p_nq_n + \frac53\sum_n p_nq_nQ_n
        + \frac1R\sum_n\frac{7G\gamma_nq_n}{1-(1-\alpha_n)^{2T}}\Big].

    Parameters
    ----------
    F1 : float
        :math:`F(\bar x^{(1)}) - F^*` (the theorem implicitly assumes :math:`F^*\ge 0`).
    L, eta : float
    n_steps, n_rounds : int
        T and R.
    sigma2, G : float
    d, w : array-like (M,)
    pi, alpha : array-like (N, M)
    p : array-like (N,)
        Fixed aggregation weights.
    q : array-like (N,)
    last_term : {"printed", "corrected"}

    Returns
    -------
    dict: ``init``, ``variance`` (:math:`L\eta\sigma^2\sum p^2q`), ``local_variance``, ``drift_t1``,
    ``drift_t2``, ``drift_t3`` (the :math:`\frac53\sum p_nq_n t_i` parts), ``last``, ``prefactor``
    (:math:`18/\sum p_nq_n`), ``bracket`` and ``bound``.
    """
    F1 = check_real("F1", F1, low=0)
    L = check_real("L", L, low=0, low_open=True)
    eta = check_real("eta", eta, low=0, low_open=True)
    t = check_int("n_steps", n_steps, low=1)
    R = check_int("n_rounds", n_rounds, low=1)
    sigma2 = check_real("sigma2", sigma2, low=0)
    last_term = check_choice("last_term", last_term, LAST_TERMS)
    pi, alpha = _pi_alpha(np.atleast_2d(pi), np.atleast_2d(alpha))
    n = pi.shape[0]
    p = check_simplex("p", p, shape=(n,))
    q = _budget_array("q", _vec("q", q, n))
    stats = sfedpo_client_stats(pi, alpha, d, w, G=G, n_steps=t)
    pq = p * q
    t0 = float(pq.sum())
    if t0 <= 0:
        raise ValueError("sum_n p_n q_n must be positive.")
    terms = {
        "init": F1 / (t * eta * R),
        "variance": L * eta * sigma2 * float(p ** 2 @ q),
        "local_variance": 5 * L * eta * sigma2 / 3 * t0,
        "drift_t1": 5 / 3 * float(pq @ stats["t1"]),
        "drift_t2": 5 / 3 * float(pq @ stats["t2"]),
        "drift_t3": 5 / 3 * float(pq @ stats["t3"]),
        "last": LAST_TERMS[last_term](G, stats["gamma"], p, q, stats["alpha_n"], t, R),
    }
    bracket = sum(terms.values())
    terms.update({"prefactor": 18 / t0, "bracket": bracket, "bound": 18 / t0 * bracket})
    return terms


def sfedpo_theorem1_bound(F1: float, L: float, eta: float, n_steps: int, n_rounds: int, sigma2: float, G: float,
                          d, w, pi, alpha, p, q, *, last_term: str = "printed") -> float:
    r"""Theorem 1's right-hand side (6); see :func:`theorem1_terms` for the arguments and the decomposition.

    The spec's test vector (§B.6) gives 43.352055.

    Examples
    --------
    >>> import numpy as np
    >>> pi, alpha = np.array([[0.7, 0.3], [0.2, 0.8]]), np.array([[0.4, 0.6], [0.5, 0.5]])
    >>> d, w, p, q = np.array([0.1, 0.3]), np.array([0.5, 0.5]), np.array([0.6, 0.4]), np.array([0.2, 0.3])
    >>> round(sfedpo_theorem1_bound(1, 1, 0.01, 5, 100, 1, 2, d, w, pi, alpha, p, q), 6)
    43.352055
    """
    return theorem1_terms(F1, L, eta, n_steps, n_rounds, sigma2, G, d, w, pi, alpha, p, q,
                          last_term=last_term)["bound"]
