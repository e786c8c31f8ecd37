r"""Tracking bound of Dynamic FedAvg under a random-walk minimiser (Rizk, Vlaski, Sayed; spec ``dynamic.md`` C.3-C.4).

The paper states only Theorem 1 (28), :math:`\mathbb E\|w^o_i-w_i\|^2 \le O(\gamma^i) + O(\mu)(\sigma_s^2+\epsilon^2)
+ O(\mu^{-1})\sigma_q^2`, without proofs. The spec (C.4) derives an explicit form by neglecting the incremental
error :math:`d_i` (O(μ²), zero when :math:`E_k = 1`) and using Lemma 1:

.. math::
    \mathbb E\|e_i\|^2 \lesssim \lambda\,\mathbb E\|e_{i-1}\|^2 + \mu^2(\sigma_s^2+\epsilon^2) + \sigma_q^2,\qquad
    \lambda = 1 - 2\mu\nu + \mu^2(\delta^2+\beta_s^2),

    \mathrm{MSD}_\infty \lesssim \frac{\mu^2(\sigma_s^2+\epsilon^2)+\sigma_q^2}{2\mu\nu-\mu^2(\delta^2+\beta_s^2)}
    \quad(\mu < 2\nu/(\delta^2+\beta_s^2)),

three terms: *data variability* :math:`\sigma_s^2`, *model variability* :math:`\epsilon^2` (both O(μ)) and the
*tracking* term :math:`\sigma_q^2/(2\nu\mu)` (:math:`\propto 1/\mu`), hence a U-shape in μ and an optimal step.

**It is an approximation, not a proven bound.** Two steps are not rigorous: the incremental error :math:`d_i`
(21) is dropped, although with :math:`E_k > 1` it adds O(μ²) terms to both the contraction and the noise; and for
the least-squares model (:func:`ls_lemma1_constants`) the Lipschitz constant δ of Assumption 1 does not exist
almost surely (Gaussian features), so :math:`\beta_s^2` uses the mean-square constant
:math:`\mathbb E\|\nabla Q(w)-\nabla Q(w')\|^2\le\delta_Q^2\|w-w'\|^2`. The functions below keep the name
"bound" for the formula; notebook 08 calls its curve the *approximate bound (C.4)*.

Symbols (spec §0.1): ``n_agents`` K, ``n_active`` L, ``lr`` μ, ``strong_nu`` ν, ``delta`` δ (gradient Lipschitz),
``drift_var`` :math:`\sigma_q^2`.
"""
from __future__ import annotations

import math

import numpy as np

from fedlab._validation import check_array, check_bool, check_int, check_real

__all__ = [
    "tau_s",
    "tau_eps",
    "lemma1_constants",
    "dfl_contraction",
    "dfl_msd_bound",
    "dfl_msd_terms",
    "dfl_msd_approx",
    "dfl_transient",
    "dfl_opt_mu",
    "dfl_opt_msd",
    "scalar_quadratic_msd",
    "ls_noise_at_opt",
    "ls_msd_prediction",
    "ls_lemma1_constants",
]


def _lr(mu) -> np.ndarray:
    arr = check_array("mu", mu)
    if np.any(arr <= 0):
        raise ValueError(f"mu (the step size lr) must be > 0, got {arr}.")
    return arr


def _var(name: str, value) -> float:
    value = check_real(name, value)
    if value < 0:
        raise ValueError(f"{name} is a variance and must be >= 0, got {value}.")
    return value


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def tau_s(n_samples, batch, local_steps):
    r"""Minibatch factor (27): :math:`\tau_{s,k} = \frac{N_k-B_k}{(N_k-1)B_kE_k}`.

    It is the variance of a mean of :math:`B_k` draws *without replacement* out of :math:`N_k` points relative to
    the population variance, divided by the :math:`E_k` independent epochs. :math:`\tau_{s,k} = 0` for full
    batches (:math:`B_k = N_k`); ``n_samples = inf`` (fresh samples) gives :math:`1/(B_kE_k)`.

    Parameters
    ----------
    n_samples : float or array, >= batch (``np.inf`` allowed)
    batch : int or array, >= 1
    local_steps : int or array, >= 1
    """
    n = check_array("n_samples", n_samples, finite=False)
    b = check_array("batch", batch)
    e = check_array("local_steps", local_steps)
    if np.any(np.isnan(n)) or np.any(n < 1):
        raise ValueError(f"n_samples must be >= 1 (or inf), got {n}.")
    if np.any(b < 1) or np.any(e < 1):
        raise ValueError(f"batch and local_steps must be >= 1, got {b} and {e}.")
    if np.any(b > n):
        raise ValueError(f"batch must not exceed n_samples (sampling without replacement), got {b} > {n}.")
    n, b, e = np.broadcast_arrays(n, b, e)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(np.isinf(n), 1.0, (n - b) / np.where(n > 1, n - 1, 1.0))
    ratio = np.where(n == b, 0.0, ratio)
    return _out(ratio / (b * e))


def tau_eps(n_agents: int, n_active: int) -> float:
    r"""Participation factor (27): :math:`\tau_\epsilon = (K-L)/(K-1)`: 0 under full participation, 1 for L = 1.

    Raises ``ValueError`` unless :math:`1\le L\le K`.
    """
    k = check_int("n_agents", n_agents, low=1)
    if isinstance(n_active, bool) or not isinstance(n_active, (int, np.integer)):
        raise TypeError(f"n_active (agents per round L) must be an integer, got {n_active!r}.")
    if not 1 <= n_active <= k:
        raise ValueError(f"n_active (agents per round L) must lie in [1, K] = [1, {k}], got {n_active}.")
    return 0.0 if k == 1 else (k - n_active) / (k - 1)


def lemma1_constants(delta: float, tau_s_vec, tau_eps_value: float, datavar_vec, gradnorm2_vec, n_agents: int,
                     n_active: int) -> tuple[float, float, float]:
    r"""Lemma 1, eqs. (24)-(26), exactly as printed:

    .. math::
        \beta_s^2 = \frac1{KL}\sum_k(6\tau_{s,k}+2\tau_\epsilon)\delta^2,\quad
        \sigma_s^2 = \frac3{KL}\sum_k\tau_{s,k}\,\mathbb E\|\nabla Q_k(w^o;x)-\nabla P_k(w^o)\|^2,\quad
        \epsilon^2 = \frac2{KL}\sum_k\tau_\epsilon^2\,\mathbb E\|\nabla P_k(w^o)\|^2

    (note :math:`\tau_\epsilon` squared in :math:`\epsilon^2` but not in :math:`\beta_s^2`).

    Parameters
    ----------
    delta : float >= 0
    tau_s_vec, datavar_vec, gradnorm2_vec : arrays (K,), >= 0
        :math:`\tau_{s,k}`, data variability, :math:`\mathbb E\|\nabla P_k(w^o)\|^2`.
    tau_eps_value : float in [0, 1]
    n_agents, n_active : int
        K and L (1 <= L <= K).

    Returns
    -------
    (beta_s2, sigma_s2, eps2)
    """
    dl = check_real("delta", delta, low=0)
    k = check_int("n_agents", n_agents, low=1)
    tau_eps(k, n_active)  # validates L
    te = check_real("tau_eps_value", tau_eps_value, low=0, high=1)
    ts = check_array("tau_s_vec", tau_s_vec, ndim=1, shape=(k,), nonnegative=True)
    dv = check_array("datavar_vec", datavar_vec, ndim=1, shape=(k,), nonnegative=True)
    gn = check_array("gradnorm2_vec", gradnorm2_vec, ndim=1, shape=(k,), nonnegative=True)
    kl = k * n_active
    beta_s2 = float(np.sum(6 * ts + 2 * te) * dl ** 2 / kl)
    sigma_s2 = float(3 * np.sum(ts * dv) / kl)
    eps2 = float(2 * te ** 2 * np.sum(gn) / kl)
    return beta_s2, sigma_s2, eps2


def dfl_contraction(mu, strong_nu: float, delta: float, beta_s2: float):
    r"""Contraction factor :math:`\lambda = 1 - 2\mu\nu + \mu^2(\delta^2+\beta_s^2)` of the MSD recursion."""
    mu = _lr(mu)
    nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
    dl = check_real("delta", delta, low=0)
    b2 = _var("beta_s2", beta_s2)
    return _out(1 - 2 * mu * nu + mu ** 2 * (dl ** 2 + b2))


def dfl_msd_terms(mu, strong_nu: float, delta: float, beta_s2: float, sigma_s2: float, eps2: float,
                  sigma_q2: float) -> dict:
    r"""The bound's three parts over the common denominator :math:`D = 2\mu\nu-\mu^2(\delta^2+\beta_s^2)`:
    ``data`` :math:`\mu^2\sigma_s^2/D`, ``model`` :math:`\mu^2\epsilon^2/D`, ``tracking`` :math:`\sigma_q^2/D`
    (``inf`` where :math:`D\le0`)."""
    lam = np.asarray(dfl_contraction(mu, strong_nu, delta, beta_s2), dtype=float)
    mu = np.asarray(_lr(mu), dtype=float)
    s2, e2, q2 = _var("sigma_s2", sigma_s2), _var("eps2", eps2), _var("sigma_q2", sigma_q2)
    den = 1.0 - lam
    ok = den > 0
    safe = np.where(ok, den, 1.0)
    return {name: _out(np.where(ok, num / safe, np.inf)) for name, num in
            (("data", mu ** 2 * s2), ("model", mu ** 2 * e2), ("tracking", q2 + 0 * mu))}


def dfl_msd_bound(mu, strong_nu: float, delta: float, beta_s2: float, sigma_s2: float, eps2: float, sigma_q2: float):
    r"""Steady-state MSD of the spec's approximate bound (C.4; :math:`d_i` dropped, see the module docstring):

    .. math:: \mathrm{MSD}_\infty \lesssim \frac{\mu^2(\sigma_s^2+\epsilon^2)+\sigma_q^2}{2\mu\nu-\mu^2(\delta^2+\beta_s^2)},

    ``inf`` when :math:`\mu \ge 2\nu/(\delta^2+\beta_s^2)` (no contraction). Test vector
    ``dfl_msd_bound(0.05, 1, 2, 0.5, 1, 0.2, 1e-4) = 0.0349296``.
    """
    terms = dfl_msd_terms(mu, strong_nu, delta, beta_s2, sigma_s2, eps2, sigma_q2)
    return _out(np.asarray(terms["data"]) + np.asarray(terms["model"]) + np.asarray(terms["tracking"]))


def dfl_msd_approx(mu, strong_nu: float, sigma_s2: float, eps2: float, sigma_q2: float):
    r"""Small-μ form :math:`\mu(\sigma_s^2+\epsilon^2)/(2\nu) + \sigma_q^2/(2\nu\mu)` of the bound (Theorem 1's shape)."""
    mu = _lr(mu)
    nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
    a = _var("sigma_s2", sigma_s2) + _var("eps2", eps2)
    return _out(mu * a / (2 * nu) + _var("sigma_q2", sigma_q2) / (2 * nu * mu))


def dfl_transient(i, e0: float, mu: float, strong_nu: float, delta: float, beta_s2: float, sigma_s2: float,
                  eps2: float, sigma_q2: float):
    r"""Transient bound :math:`\mathbb E\|e_i\|^2 \le \lambda^i\,\mathbb E\|e_0\|^2 + (1-\lambda^i)\mathrm{MSD}_\infty`."""
    i = check_array("i", i, nonnegative=True)
    e0 = _var("e0", e0)
    check_real("mu", mu, low=0, low_open=True)
    lam = dfl_contraction(mu, strong_nu, delta, beta_s2)
    if lam >= 1:
        return _out(np.full(i.shape, np.inf))
    lam = max(lam, 0.0)
    msd = dfl_msd_bound(mu, strong_nu, delta, beta_s2, sigma_s2, eps2, sigma_q2)
    return _out(lam ** i * e0 + (1 - lam ** i) * msd)


def dfl_opt_mu(strong_nu: float, delta: float, beta_s2: float, sigma_s2: float, eps2: float, sigma_q2: float, *,
               exact: bool = True) -> float:
    r"""Step size minimising the MSD bound.

    With :math:`a = \sigma_s^2+\epsilon^2`, :math:`b = \delta^2+\beta_s^2`, :math:`s = \sigma_q^2`, setting the
    derivative of :math:`(\mu^2a+s)/(2\mu\nu-\mu^2b)` to zero gives :math:`\nu a\mu^2 + bs\mu - \nu s = 0`, so
    [derived]

    .. math:: \mu^\star = \frac{-bs+\sqrt{b^2s^2+4\nu^2as}}{2\nu a}
              \;\approx\; \sqrt{\sigma_q^2/(\sigma_s^2+\epsilon^2)} \quad(\text{small }s;\ ``exact=False``).

    Edge cases: :math:`s = 0` gives 0 (the bound decreases to 0 as μ → 0); :math:`a = 0` gives :math:`\nu/b`.
    """
    nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
    dl = check_real("delta", delta, low=0)
    b = dl ** 2 + _var("beta_s2", beta_s2)
    a = _var("sigma_s2", sigma_s2) + _var("eps2", eps2)
    s = _var("sigma_q2", sigma_q2)
    exact = check_bool("exact", exact)
    if s == 0:
        return 0.0
    if not exact:
        if a == 0:
            raise ValueError("the approximation sqrt(sigma_q2/(sigma_s2+eps2)) needs sigma_s2 + eps2 > 0.")
        return math.sqrt(s / a)
    if a == 0:
        if b == 0:
            raise ValueError("with no noise and delta = beta_s2 = 0 the bound decreases for ever in mu.")
        return nu / b
    return (-b * s + math.sqrt(b * b * s * s + 4 * nu * nu * a * s)) / (2 * nu * a)


def dfl_opt_msd(strong_nu: float, delta: float, beta_s2: float, sigma_s2: float, eps2: float, sigma_q2: float) -> float:
    r"""The bound at :math:`\mu^\star`; :math:`\approx\sqrt{\sigma_q^2(\sigma_s^2+\epsilon^2)}/\nu` for small drift."""
    mu = dfl_opt_mu(strong_nu, delta, beta_s2, sigma_s2, eps2, sigma_q2)
    if mu == 0:
        return 0.0
    return dfl_msd_bound(mu, strong_nu, delta, beta_s2, sigma_s2, eps2, sigma_q2)


def scalar_quadratic_msd(mu, strong_nu: float, sigma_s2: float, sigma_q2: float):
    r"""Exact steady state of :math:`e_i = (1-\mu\nu)e_{i-1}+\mu s_i+q_i`: :math:`(\mu^2\sigma_s^2+\sigma_q^2)/(1-(1-\mu\nu)^2)`
    (``inf`` when :math:`|1-\mu\nu|\ge1`); checkable fact C3."""
    mu = _lr(mu)
    nu = check_real("strong_nu", strong_nu, low=0, low_open=True)
    s2, q2 = _var("sigma_s2", sigma_s2), _var("sigma_q2", sigma_q2)
    den = 1 - (1 - mu * nu) ** 2
    return _out(np.where(den > 0, (mu ** 2 * s2 + q2) / np.where(den > 0, den, 1.0), np.inf))


def _ls_parts(feature_var, offsets):
    v = check_array("feature_var", feature_var, ndim=1)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError(f"feature_var must be a non-empty vector of positive variances, got {v}.")
    c = check_array("offsets", offsets, ndim=2, shape=(v.size, None))
    u = v @ c / v.sum() - c                                   # w^o - w*_k
    return v, c, np.sum(u ** 2, -1)


def ls_noise_at_opt(feature_var, offsets, batch, n_active: int, noise_std: float, local_steps=1) -> float:
    r"""Exact variance of the aggregate gradient noise at :math:`w^o` for the least-squares model (spec C.4).

    With :math:`u_k = w^o - w^\star_k`, :math:`\nabla P_k(w^o) = v_ku_k` and data variability
    :math:`v_k^2(d+1)\|u_k\|^2 + dv_k\sigma_n^2` (Gaussian features),

    .. math:: S = \frac{\tau_\epsilon}{L}\,\frac1K\sum_kv_k^2\|u_k\|^2
                 + \frac1{LK}\sum_k\frac{v_k^2(d+1)\|u_k\|^2 + dv_k\sigma_n^2}{B_kE_k}

    (a mean of L agents drawn without replacement; :math:`E_k` normalised epochs act as one minibatch of
    :math:`B_kE_k` up to O(μ)).

    Parameters
    ----------
    feature_var : array (K,)
    offsets : array (K, d)
        :math:`c_k` (``problem.offsets``).
    batch, local_steps : int or array (K,)
    n_active : int in [1, K]
    noise_std : float >= 0
    """
    v, c, u2 = _ls_parts(feature_var, offsets)
    k, d = c.shape
    te = tau_eps(k, n_active)
    b = check_array("batch", batch)
    e = check_array("local_steps", local_steps)
    if np.any(b < 1) or np.any(e < 1):
        raise ValueError(f"batch and local_steps must be >= 1, got {b} and {e}.")
    sn = check_real("noise_std", noise_std, low=0)
    model = te / n_active * np.mean(v ** 2 * u2)
    data = np.sum((v ** 2 * (d + 1) * u2 + d * v * sn ** 2) / (b * e)) / (n_active * k)
    return float(model + data)


def ls_msd_prediction(mu, feature_var, noise_at_opt: float, sigma_q2: float):
    r"""Steady-state MSD predicted with the exact noise S: :math:`(\mu^2S+\sigma_q^2)/(1-(1-\mu\bar v)^2)`,
    :math:`\bar v` = mean feature variance (checkable fact C9; within ~30% of simulation)."""
    v = check_array("feature_var", feature_var, ndim=1)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError(f"feature_var must be a non-empty vector of positive variances, got {v}.")
    return scalar_quadratic_msd(mu, float(v.mean()), _var("noise_at_opt", noise_at_opt), sigma_q2)


def ls_lemma1_constants(feature_var, offsets, batch, n_active: int, noise_std: float, local_steps=1,
                        n_samples=np.inf) -> dict:
    r"""Lemma 1's constants for the least-squares model, ready for :func:`dfl_msd_bound`.

    * ``strong_nu`` = ``delta`` = :math:`\bar v`: strong convexity and Lipschitz constant of the aggregate gradient
      :math:`\frac1K\sum_k\nabla P_k` (the only ones the C.4 derivation uses);
    * :math:`\delta_Q^2 = \max_kv_k^2(d+2)` replaces :math:`\delta^2` inside :math:`\beta_s^2`: Gaussian features
      have no almost-sure Lipschitz constant, but :math:`\mathbb E\|\nabla Q_k(w;x)-\nabla Q_k(w';x)\|^2
      = v_k^2(d+2)\|w-w'\|^2` is the mean-square version the gradient-noise bound needs;
    * data variability :math:`v_k^2(d+1)\|u_k\|^2 + dv_k\sigma_n^2`, :math:`\mathbb E\|\nabla P_k(w^o)\|^2 = v_k^2\|u_k\|^2`,
      combined by (24)-(27) with :math:`\tau_{s,k}` = :func:`tau_s` (``n_samples`` = ∞: fresh samples).

    Returns dict with ``strong_nu``, ``delta``, ``beta_s2``, ``sigma_s2``, ``eps2``, ``delta_q2``.
    """
    v, c, u2 = _ls_parts(feature_var, offsets)
    k, d = c.shape
    te = tau_eps(k, n_active)
    sn = check_real("noise_std", noise_std, low=0)
    ts = np.broadcast_to(tau_s(n_samples, batch, local_steps), (k,))
    delta_q2 = float(np.max(v ** 2 * (d + 2)))
    datavar = v ** 2 * (d + 1) * u2 + d * v * sn ** 2
    beta_s2, sigma_s2, eps2 = lemma1_constants(math.sqrt(delta_q2), ts, te, datavar, v ** 2 * u2, k, n_active)
    vbar = float(v.mean())
    return {"strong_nu": vbar, "delta": vbar, "beta_s2": beta_s2, "sigma_s2": sigma_s2, "eps2": eps2,
            "delta_q2": delta_q2}
