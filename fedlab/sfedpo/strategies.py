r"""SFedPO's strategy: data-driven sampling (DDS, eq. (10)-(11), Algorithm 2), shift-aware aggregation (SAW, (14))
and Theorem 2 (16), the gap of a strategy computed from a forecast :math:`\hat\pi` instead of :math:`\pi`.

The rules minimise the terms of Theorem 1 (:mod:`fedlab.sfedpo.bounds`); :class:`fedlab.sfedpo.algorithms.SFedPO`
applies them every round. See the algorithms module for the choice between the paper's two printed DDS scores.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_simplex
from fedlab.sfedpo.bounds import heterogeneity_score, sfedpo_B, sfedpo_gamma
from fedlab.sfedpo.data import perturb_oracle

__all__ = [
    "SCORE_VARIANTS", "dds_scores", "dds_alpha", "dds_alpha_exact", "uniform_alpha", "SAMPLING_RULES",
    "sampling_ratios", "saw_weights", "saw_exact", "AGGREGATION_RULES", "aggregation_weights",
    "strategy", "theorem2_gap", "theorem2_sweep", "theorem2_constants",
]

SCORE_VARIANTS = ("eq10", "oracle")


# ------------------------------------------------------------------------------------ DDS

def _budget(alpha_n, name: str = "alpha_n") -> float:
    return check_real(name, alpha_n, low=0, high=1, low_open=True)


def _dists(name: str, value) -> np.ndarray:
    """State distributions: a probability vector (M,) or a non-empty stack (N, M)."""
    arr = check_simplex(name, value, ndim=(1, 2))
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one distribution over at least one state, got shape "
                         f"{arr.shape}.")
    return arr


def _theory(G, n_steps, L, eta, sigma2) -> None:
    """The constants every strategy function takes, validated up front (they reach the rules only sometimes)."""
    check_real("G", G, low=0, low_open=True)
    check_int("n_steps", n_steps, low=1)
    check_real("L", L, low=0)
    check_real("eta", eta, low=0)
    check_real("sigma2", sigma2, low=0)


def _tuning(a1, b1, a2, b2, variant) -> None:
    for name, value in (("a1", a1), ("b1", b1), ("a2", a2), ("b2", b2)):
        check_real(name, value)
    check_choice("variant", variant, SCORE_VARIANTS)


def dds_scores(w, d, pi_hat, alpha_n: float, a1: float = 0.1, b1: float = 0.2, variant: str = "eq10") -> np.ndarray:
    r"""DDS scores (10): :math:`(w_m - a_1d_m + b_1)/(1 + c\,\hat\pi_{n,m})`, shaped like ``pi_hat``.

    :math:`c = (1-\alpha_n)/\alpha_n` for ``variant="eq10"`` (the default, (10)/(87)) and
    :math:`c = \alpha_n/(1-\alpha_n)` for ``"oracle"`` (§5/App. G); see the module docstring. The theory has
    :math:`a_1 = (1-\gamma_n)/(4G\gamma_n)`, :math:`b_1 = \lambda_1/(4G\gamma_n)`; in practice both are tuned
    (robust ranges :math:`a_1\in[0.05, 0.25]`, :math:`b_1\in[0.15, 0.35]`).

    Parameters
    ----------
    w, d : array-like (M,)
        State importance and heterogeneity.
    pi_hat : array-like (M,) or (N, M)
        Forecast state distributions.
    alpha_n : float in (0, 1]
        Sampling budget (``"oracle"`` needs :math:`\alpha_n < 1`).
    a1, b1 : float
    variant : {"eq10", "oracle"}
    """
    pi_hat = _dists("pi_hat", pi_hat)
    m = pi_hat.shape[-1]
    w = check_array("w", w, shape=(m,), nonnegative=True)
    d = check_array("d", d, shape=(m,), nonnegative=True)
    alpha_n = _budget(alpha_n)
    a1 = check_real("a1", a1)
    b1 = check_real("b1", b1)
    variant = check_choice("variant", variant, SCORE_VARIANTS)
    if variant == "eq10":
        c = (1 - alpha_n) / alpha_n
    else:
        if alpha_n >= 1:
            raise ValueError("variant 'oracle' divides by 1 - alpha_n: alpha_n must be < 1.")
        c = alpha_n / (1 - alpha_n)
    return (w - a1 * d + b1) / (1 + c * pi_hat)


def _algorithm2(score: np.ndarray, pi: np.ndarray, alpha_n: float) -> np.ndarray:
    a = np.zeros_like(pi)
    active = [m for m in range(len(pi)) if pi[m] > 0]
    res, found = alpha_n, True
    relu = np.maximum(score, 0.0)
    while found and active:
        found = False
        total = sum(pi[m] * relu[m] for m in active)
        if total <= 0:
            mass = sum(pi[m] for m in active)
            for m in active:
                a[m] = max(res, 0.0) / mass
            break
        for m in active:
            raw = res * relu[m] / total
            a[m] = min(raw, 1.0)
            if raw >= 1.0:
                a[m] = 1.0
                res -= pi[m]
                active.remove(m)
                found = True
                break
    return np.clip(a, 0.0, 1.0)


def dds_alpha(scores, pi_hat, alpha_n: float) -> np.ndarray:
    r"""Sampling ratios from DDS scores by Algorithm 2 (budget-aware projection of (11)).

    :math:`\hat\alpha_{n,m} = \min(\tilde\alpha\,\mathrm{ReLU}(\mathrm{score}_m)/S, 1)` over the states still free,
    where :math:`S = \sum\hat\pi\,\mathrm{ReLU}(\mathrm{score})`; a ratio reaching 1 is fixed, its mass
    :math:`\hat\pi_{n,m}` is taken off the residual budget :math:`\tilde\alpha` and the pass restarts. States with
    :math:`\hat\pi_{n,m} = 0` get 0; if every score is non-positive the residual budget is spread uniformly. Result:
    :math:`0\le\hat\alpha\le 1` and :math:`\sum_m\hat\pi_{n,m}\hat\alpha_{n,m} = \alpha_n` (fact B1). Cost
    :math:`O(M^2)` per client.

    Parameters
    ----------
    scores : array-like (M,) or (N, M)
        :func:`dds_scores`.
    pi_hat : array-like, same shape
    alpha_n : float in (0, 1]

    Returns
    -------
    ndarray shaped like ``pi_hat``.
    """
    pi_hat = _dists("pi_hat", pi_hat)
    scores = check_array("scores", scores, shape=pi_hat.shape)
    alpha_n = _budget(alpha_n)
    out = np.stack([_algorithm2(s, p, alpha_n) for s, p in zip(np.atleast_2d(scores), np.atleast_2d(pi_hat))])
    return out[0] if pi_hat.ndim == 1 else out


def _waterfill(v: np.ndarray, c: np.ndarray, g: np.ndarray, ub: np.ndarray, target: float) -> np.ndarray:
    r"""Solve :math:`\sum_i g_i\,\mathrm{clip}((\lambda + v_i)/c_i, 0, u_i) = \text{target}` for :math:`\lambda`.

    The left side is continuous, piecewise linear and non-decreasing in :math:`\lambda` (:math:`g, c > 0`): evaluate it
    at the breakpoints, locate the segment and interpolate.
    """
    def f(lam):
        return float(g @ np.clip((lam + v) / c, 0.0, ub))

    br = np.concatenate([-v, np.where(np.isfinite(ub), c * np.where(np.isfinite(ub), ub, 0) - v, np.nan)])
    br = np.unique(br[np.isfinite(br)])
    vals = np.array([f(b) for b in br])
    if target <= vals[0] + 1e-15:
        lam = br[0]
    elif target >= vals[-1]:
        if np.all(np.isfinite(ub)):
            lam = br[-1]
        else:  # the unbounded coordinates keep growing linearly past the last breakpoint
            slope = float(np.sum(g / c * ~np.isfinite(ub)))
            lam = br[-1] + (target - vals[-1]) / slope
    else:
        i = int(np.searchsorted(vals, target, side="left"))
        lo, hi = br[i - 1], br[i]
        flo, fhi = vals[i - 1], vals[i]
        lam = hi if fhi == flo else lo + (target - flo) * (hi - lo) / (fhi - flo)
    return np.clip((lam + v) / c, 0.0, ub)


def _exact_one(pi: np.ndarray, alpha_n: float, d: np.ndarray, w: np.ndarray, G: float, T: int) -> np.ndarray:
    out = np.zeros_like(pi)
    on = pi > 0
    if alpha_n >= 1:  # the budget forces every reachable state to be fully refreshed
        out[on] = 1.0
        return out
    gamma = sfedpo_gamma(alpha_n, T)
    a = (1 - gamma) / (4 * G * gamma)
    c = (2 - pi[on]) / (2 - alpha_n) + pi[on] / alpha_n
    out[on] = _waterfill(w[on] - a * d[on], c, pi[on], np.ones(int(on.sum())), alpha_n)
    return out


def _exact_cvxpy(pi: np.ndarray, alpha_n: float, d: np.ndarray, w: np.ndarray, G: float, T: int) -> np.ndarray:
    import cvxpy as cp

    gamma = sfedpo_gamma(alpha_n, T) if alpha_n < 1 else 0.0
    x = cp.Variable(len(pi))
    obj = ((1 - gamma) / alpha_n * (pi * d) @ x
           + 2 * G * gamma / (1 - (1 - alpha_n) ** 2) * cp.sum(cp.multiply(2 * pi - pi ** 2, cp.square(x)))
           + 2 * G * gamma * cp.sum_squares(cp.multiply(pi / alpha_n, x) - w))
    cp.Problem(cp.Minimize(obj), [x >= 0, x <= 1, pi @ x == alpha_n]).solve()
    return np.clip(np.where(pi > 0, x.value, 0.0), 0.0, 1.0)


def dds_alpha_exact(pi, alpha_n: float, d, w, *, G: float = 1.0, n_steps: int = 5,
                    method: str = "waterfill") -> np.ndarray:
    r"""The exact minimiser of the DDS problem (82) at a fixed budget (spec §B.6, [derived]).

    .. math::
        \min_{\alpha}\ \frac{\beta_n}{\alpha_n}(1-\gamma_n) + \frac{2G\gamma_n\beta'_n}{1-(1-\alpha_n)^2}
        + 2G\gamma_n\sum_m\Big(\frac{\pi_m\alpha_m}{\alpha_n} - w_m\Big)^2\quad
        \text{s.t. } \sum_m\pi_m\alpha_m = \alpha_n,\ 0\le\alpha_m\le 1.

    The objective is a separable convex quadratic, so the KKT point is
    :math:`\alpha_m = \mathrm{clip}\big((\lambda + w_m - a\,d_m)/c_m, 0, 1\big)` with
    :math:`a = (1-\gamma_n)/(4G\gamma_n)` and :math:`c_m = (2-\pi_m)/(2-\alpha_n) + \pi_m/\alpha_n`, where
    :math:`\lambda` is set by the budget (a monotone piecewise-linear equation, solved exactly).
    States with :math:`\pi_m = 0` get 0 (they do not enter (82)).

    Parameters
    ----------
    pi : array-like (M,) or (N, M)
    alpha_n : float in (0, 1]
    d, w : array-like (M,)
    G : float > 0
    n_steps : int
        T (through :math:`\gamma_n`).
    method : {"waterfill", "cvxpy"}
        ``cvxpy`` solves the QP numerically (a cross-check).
    """
    pi = _dists("pi", pi)
    m = pi.shape[-1]
    d = check_array("d", d, shape=(m,), nonnegative=True)
    w = check_array("w", w, shape=(m,), nonnegative=True)
    alpha_n = _budget(alpha_n)
    G = check_real("G", G, low=0, low_open=True)
    sfedpo_gamma(0.5, n_steps)  # validates n_steps
    solver = {"waterfill": _exact_one, "cvxpy": _exact_cvxpy}[check_choice("method", method, ("waterfill", "cvxpy"))]
    out = np.stack([solver(p, alpha_n, d, w, G, int(n_steps)) for p in np.atleast_2d(pi)])
    return out[0] if pi.ndim == 1 else out


def uniform_alpha(pi, alpha_n: float) -> np.ndarray:
    r"""Uniform sampling :math:`\alpha_{n,m} = \alpha_n` for every state (the "original" methods of Table 2)."""
    pi = _dists("pi", pi)
    return np.full(pi.shape, _budget(alpha_n))


def _rule_dds(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return dds_alpha(dds_scores(w, d, pi, alpha_budget, a1, b1, variant), pi, alpha_budget)


def _rule_exact(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return dds_alpha_exact(pi, alpha_budget, d, w, G=G, n_steps=n_steps)


def _rule_uniform(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return uniform_alpha(pi, alpha_budget)


def _rule_latest(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return np.ones_like(check_simplex("pi", pi, ndim=(1, 2)))


#: Sampling rules :math:`\hat\pi\mapsto\hat\alpha`: DDS (10)+Algorithm 2, the exact QP (82), uniform
#: (:math:`\alpha_n`), and "latest" (:math:`\alpha = 1`: the buffer is fully replaced by the current state's data).
SAMPLING_RULES: dict[str, Callable] = {"dds": _rule_dds, "exact": _rule_exact, "uniform": _rule_uniform,
                                       "latest": _rule_latest}


def sampling_ratios(rule: str, pi_hat, *, alpha_budget: float = 0.5, d=None, w=None, a1: float = 0.1,
                    b1: float = 0.2, variant: str = "eq10", G: float = 1.0, n_steps: int = 5) -> np.ndarray:
    r"""Sampling ratios :math:`\hat\alpha` (shaped like ``pi_hat``) of a rule of :data:`SAMPLING_RULES`.

    ``d`` and ``w`` default to zeros and the uniform :math:`1/M`.
    """
    rule = check_choice("rule", rule, SAMPLING_RULES)
    pi_hat = _dists("pi_hat", pi_hat)
    _budget(alpha_budget, "alpha_budget")
    check_real("G", G, low=0, low_open=True)
    check_int("n_steps", n_steps, low=1)
    m = pi_hat.shape[-1]
    d = np.zeros(m) if d is None else d
    w = np.full(m, 1.0 / m) if w is None else w
    return SAMPLING_RULES[rule](pi_hat, alpha_budget, d, w, a1, b1, variant, G, n_steps)


# ------------------------------------------------------------------------------------ SAW

def _mask(mask, n: int) -> np.ndarray:
    if mask is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(mask)
    if mask.dtype != bool:
        idx = check_array("mask", mask, ndim=1, dtype=np.int64)
        if np.any(idx < 0) or np.any(idx >= n):
            raise ValueError(f"mask indices must lie in [0, {n}).")
        mask = np.zeros(n, dtype=bool)
        mask[idx] = True
    elif mask.shape != (n,):
        raise ValueError(f"mask must have shape ({n},), got {mask.shape}.")
    if not mask.any():
        raise ValueError("mask selects no client.")
    return mask


def _q_s(q, s) -> tuple[np.ndarray, np.ndarray]:
    q = check_array("q", q, ndim=1)
    if q.size == 0 or np.any(q <= 0) or np.any(q > 1):
        raise ValueError(f"q must be a non-empty array of availability probabilities in (0, 1], got {q[:5]}.")
    s = check_array("s", s, shape=q.shape)
    return q, s


def saw_weights(q, s, a2: float = 1.0, b2: float = 0.0, mask=None) -> np.ndarray:
    r"""Shift-aware aggregation weights (14): :math:`p_n\propto\mathrm{ReLU}(1/q_n - a_2s_n + b_2)` over ``mask``.

    Normalised over the clients of ``mask`` (the participants :math:`S_r`; default: all); 0 elsewhere. When every
    score is non-positive the weights fall back to uniform over ``mask``. With :math:`a_2 = 0` and equal
    :math:`q_n` they are uniform; with equal :math:`q_n` a larger :math:`s_n` gets a smaller :math:`p_n` (fact B8).

    Parameters
    ----------
    q : array-like (N,)
        Availability probabilities in (0, 1].
    s : array-like (N,)
        Heterogeneity scores (12).
    a2, b2 : float
        Tunable constants (robust ranges :math:`a_2\in[0.5, 2]`, :math:`b_2\in[0, 1]`).
    mask : bool array (N,) or index array, optional

    Returns
    -------
    ndarray (N,), a probability vector.
    """
    q, s = _q_s(q, s)
    a2 = check_real("a2", a2)
    b2 = check_real("b2", b2)
    mask = _mask(mask, len(q))
    psi = np.where(mask, np.maximum(1 / q - a2 * s + b2, 0.0), 0.0)
    if psi.sum() <= 0:
        return mask / mask.sum()
    return psi / psi.sum()


def saw_exact(q, s, *, L: float = 1.0, eta: float = 0.01, sigma2: float = 1.0, lam2: float = 0.0,
              mask=None) -> np.ndarray:
    r"""Exact minimiser of SAW's surrogate problem (92) over ``mask`` (spec §B.6, [derived]).

    .. math::
        \min_p\ L\eta\sigma^2\sum_n p_n^2q_n + \frac53\sum_n p_nq_ns_n - \lambda_2\sum_n p_nq_n
        \quad\text{s.t. }\sum_n p_n = 1,\ p_n\ge 0,

    whose KKT point is :math:`p_n = \max\{0, (\nu/q_n + \lambda_2 - \frac53 s_n)/(2L\eta\sigma^2)\}` with :math:`\nu`
    fixed by :math:`\sum p = 1` (water-filling, solved exactly).

    Parameters
    ----------
    q, s : array-like (N,)
    L, eta, sigma2 : float, with :math:`L\eta\sigma^2 > 0`
    lam2 : float
        The balancing multiplier :math:`\lambda_2`.
    mask : bool array (N,) or index array, optional
    """
    q, s = _q_s(q, s)
    c = check_real("L", L, low=0) * check_real("eta", eta, low=0) * check_real("sigma2", sigma2, low=0)
    if c <= 0:
        raise ValueError("saw_exact needs L * eta * sigma2 > 0 (otherwise (92) is linear).")
    lam2 = check_real("lam2", lam2)
    mask = _mask(mask, len(q))
    out = np.zeros(len(q))
    qm, sm = q[mask], s[mask]
    # p = clip((nu + q (lam2 - 5/3 s)) / (2 c q), 0, inf)
    out[mask] = _waterfill(qm * (lam2 - 5 / 3 * sm), 2 * c * qm, np.ones(len(qm)), np.full(len(qm), np.inf), 1.0)
    return out / out.sum()


def _agg_saw(q, s, mask, a2, b2, L, eta, sigma2, lam2):
    return saw_weights(q, s, a2, b2, mask)


def _agg_saw_exact(q, s, mask, a2, b2, L, eta, sigma2, lam2):
    return saw_exact(q, s, L=L, eta=eta, sigma2=sigma2, lam2=lam2, mask=mask)


def _agg_uniform(q, s, mask, a2, b2, L, eta, sigma2, lam2):
    q, _ = _q_s(q, s)
    mask = _mask(mask, len(q))
    return mask / mask.sum()


#: Aggregation rules: SAW (14), the exact surrogate QP (92), and uniform :math:`1/|S_r|`.
AGGREGATION_RULES: dict[str, Callable] = {"saw": _agg_saw, "saw_exact": _agg_saw_exact, "uniform": _agg_uniform}


def aggregation_weights(rule: str, q, s, mask=None, *, a2: float = 1.0, b2: float = 0.0, L: float = 1.0,
                        eta: float = 0.01, sigma2: float = 1.0, lam2: float = 0.0) -> np.ndarray:
    """Aggregation weights (N,) of a rule of :data:`AGGREGATION_RULES`, normalised over ``mask``."""
    rule = check_choice("rule", rule, AGGREGATION_RULES)
    for name, value in (("L", L), ("eta", eta), ("sigma2", sigma2)):
        check_real(name, value, low=0)
    check_real("lam2", lam2)
    return AGGREGATION_RULES[rule](q, s, mask, a2, b2, L, eta, sigma2, lam2)


# ------------------------------------------------------------------------------------ Theorem 2

def strategy(pi_hat, *, q, d, w, alpha_budget: float = 0.5, G: float = 1.0, n_steps: int = 5, L: float = 1.0,
             eta: float = 0.01, sigma2: float = 1.0, a1: float = 0.1, b1: float = 0.2, a2: float = 1.0,
             b2: float = 0.0, variant: str = "eq10", sampling: str = "dds",
             aggregation: str = "saw") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""SFedPO's strategy computed from a forecast :math:`\hat\pi`: sampling ratios, heterogeneity scores, weights.

    :math:`\hat\alpha` = the ``sampling`` rule of :data:`fedlab.sfedpo.algorithms.SAMPLING_RULES` (DDS by default),
    :math:`\hat s_n` = (12) with :math:`\hat\pi, \hat\alpha`, :math:`\hat p` = the ``aggregation`` rule over all N
    clients ((14) by default).

    Returns
    -------
    alpha (N, M), s (N,), p (N,)
    """

    pi_hat = np.atleast_2d(_dists("pi_hat", pi_hat))
    check_choice("sampling", sampling, SAMPLING_RULES)
    check_choice("aggregation", aggregation, AGGREGATION_RULES)
    _budget(alpha_budget, "alpha_budget")
    _theory(G, n_steps, L, eta, sigma2)
    _tuning(a1, b1, a2, b2, variant)
    a = sampling_ratios(sampling, pi_hat, alpha_budget=alpha_budget, d=d, w=w, a1=a1, b1=b1, variant=variant, G=G,
                        n_steps=n_steps)
    eff = (pi_hat * a).sum(-1)
    s = heterogeneity_score(pi_hat, a, d, w, G=G, n_steps=n_steps, L=L, eta=eta, sigma2=sigma2,
                            budget=np.where(eff > 0, eff, alpha_budget))
    p = aggregation_weights(aggregation, q, s, a2=a2, b2=b2, L=L, eta=eta, sigma2=sigma2)
    return a, s, p


def theorem2_gap(pi, pi_hat, *, q, d, w, alpha_budget: float = 0.5, G: float = 1.0, n_steps: int = 5,
                 L: float = 1.0, eta: float = 0.01, sigma2: float = 1.0, a1: float = 0.1, b1: float = 0.2,
                 a2: float = 1.0, b2: float = 0.0, variant: str = "eq10", sampling: str = "dds",
                 aggregation: str = "saw") -> dict:
    r"""The degradation :math:`|\mathcal B(\hat\alpha, \hat p) - \mathcal B(\alpha, p)|` of Theorem 2 (16).

    :math:`(\alpha, p)` is the strategy computed from the true :math:`\pi`, :math:`(\hat\alpha, \hat p)` the one
    computed from the forecast :math:`\hat\pi` (:func:`strategy`). Both are evaluated under the *true* :math:`\pi`:
    :math:`\mathcal B(\hat\alpha, \hat p)` uses :math:`\tilde s_n` of (120)-(122) (true :math:`\pi`, :math:`\hat\alpha`,
    the fixed budget :math:`\alpha_n`; (120)'s last term reads :math:`\pi\hat\alpha`, spec §B.5).

    Returns
    -------
    dict: ``gap`` (signed :math:`\mathcal B(\hat\alpha,\hat p) - \mathcal B(\alpha,p)`), ``abs_gap``, ``B_true``,
    ``B_hat``, ``delta`` (per-client :math:`\delta_n`, list) and ``delta_sum`` (:math:`\sum_n\delta_n`).
    """
    pi = np.atleast_2d(_dists("pi", pi))
    pi_hat = np.atleast_2d(_dists("pi_hat", pi_hat))
    if pi_hat.shape != pi.shape:
        raise ValueError(f"pi_hat must have the shape of pi {pi.shape}, got {pi_hat.shape}.")
    kw = dict(q=q, d=d, w=w, alpha_budget=alpha_budget, G=G, n_steps=n_steps, L=L, eta=eta, sigma2=sigma2, a1=a1,
              b1=b1, a2=a2, b2=b2, variant=variant, sampling=sampling, aggregation=aggregation)
    a, s, p = strategy(pi, **kw)
    a_hat, _, p_hat = strategy(pi_hat, **kw)
    q = check_array("q", q)
    s_tilde = heterogeneity_score(pi, a_hat, d, w, G=G, n_steps=n_steps, L=L, eta=eta, sigma2=sigma2,
                                  budget=alpha_budget)
    b_true = sfedpo_B(L, eta, sigma2, p, q, s)
    b_hat = sfedpo_B(L, eta, sigma2, p_hat, q, s_tilde)
    delta = np.abs(pi_hat - pi).sum(1)
    return {"gap": b_hat - b_true, "abs_gap": abs(b_hat - b_true), "B_true": b_true, "B_hat": b_hat,
            "delta": delta.tolist(), "delta_sum": float(delta.sum())}


def theorem2_sweep(pi, eps_values: Sequence[float], *, n_draws: int = 20, rng=None, **kwargs) -> dict:
    r"""Theorem 2 in numbers: :math:`|\Delta\mathcal B|` against :math:`\sum_n\delta_n` for perturbed oracles.

    For each :math:`\varepsilon` draws ``n_draws`` forecasts :math:`\hat\pi` =
    :func:`~fedlab.sfedpo.data.perturb_oracle` (:math:`\pi, \varepsilon`) and records :func:`theorem2_gap`
    (keyword arguments are passed on).

    Returns
    -------
    dict of lists: ``eps``, ``mean_abs_gap``, ``std_abs_gap``, ``max_abs_gap``, ``mean_delta_sum``, ``ratio``
    (mean :math:`|\Delta\mathcal B| / \sum\delta`, 0 at :math:`\varepsilon = 0`), and the raw ``abs_gaps`` /
    ``delta_sums`` (n_eps, n_draws).
    """

    eps = check_array("eps_values", eps_values, ndim=1, nonnegative=True)
    if eps.size == 0:
        raise ValueError("eps_values must not be empty.")
    n_draws = check_int("n_draws", n_draws, low=1)
    rng = as_numpy_rng(rng)
    pi = np.atleast_2d(_dists("pi", pi))
    gaps = np.zeros((eps.size, n_draws))
    deltas = np.zeros((eps.size, n_draws))
    for i, e in enumerate(eps):
        for j in range(n_draws):
            res = theorem2_gap(pi, perturb_oracle(pi, float(e), rng), **kwargs)
            gaps[i, j], deltas[i, j] = res["abs_gap"], res["delta_sum"]
    ratio = np.divide(gaps.mean(1), deltas.mean(1), out=np.zeros(eps.size), where=deltas.mean(1) > 0)
    return {"eps": eps.tolist(), "mean_abs_gap": gaps.mean(1).tolist(), "std_abs_gap": gaps.std(1).tolist(),
            "max_abs_gap": gaps.max(1).tolist(), "mean_delta_sum": deltas.mean(1).tolist(), "ratio": ratio.tolist(),
            "abs_gaps": gaps.tolist(), "delta_sums": deltas.tolist()}


def theorem2_constants(pi, *, q, d, w, alpha_budget: float = 0.5, G: float = 1.0, n_steps: int = 5,
                       L: float = 1.0, eta: float = 0.01, sigma2: float = 1.0, a1: float = 0.1, b1: float = 0.2,
                       a2: float = 1.0, b2: float = 0.0, variant: str = "eq10") -> dict:
    r"""Explicit first-order constants of Theorem 2's proof chain (App. G), at the true strategy.

    Evaluates, for the DDS rule (11) (without Algorithm 2's clipping, as in the proof) and SAW (14):

    * :math:`L_s = \max_m |w_m - a_1d_m + b_1|\,c`, with :math:`c` the denominator slope ((10):
      :math:`(1-\alpha_n)/\alpha_n`; "oracle": :math:`\alpha_n/(1-\alpha_n)`), the Lipschitz constant (99) of the
      score in :math:`\pi_{n,m}`;
    * :math:`C_1 = \alpha_n[L_s/S_n + \|\mathrm{ReLU(score)}\|_1(L_s + \|\mathrm{ReLU(score)}\|_\infty)/S_n^2]`
      from (103)-(104) (the :math:`\alpha_n` factor of (11) included);
    * :math:`C_2` (106), :math:`C_3` (112), :math:`C_4` (115), :math:`C_s = C_2 + C_3 + C_4` (116), and
      :math:`\tilde C_s` of (128) from (126)-(127);
    * :math:`C_5 = a_2\max_nC_{s,n}/Z`, :math:`C_6 = \psi_{\max}a_2\max_nC_{s,n}/Z^2` from (118)
      (at :math:`\hat Z = Z`);
    * the first-order coefficient ``K`` of (134) with :math:`\epsilon = \sum_n p_nq_n`, :math:`\mathcal B_{\max}` = the
      bracket of (15): :math:`|\Delta\mathcal B|\lesssim K\sum_n\delta_n` (:math:`O(\delta^2)` terms dropped).

    The constants are worst-case products; ``K`` is typically orders of magnitude above the measured
    :math:`|\Delta\mathcal B|/\sum\delta` (:func:`theorem2_sweep`).

    Returns
    -------
    dict: ``L_s``, ``C1``, ``C2``, ``C3``, ``C4``, ``Cs``, ``Cs_tilde`` (lists over clients), ``C5``, ``C6``,
    ``B_max``, ``eps``, ``K``.
    """

    pi = np.atleast_2d(_dists("pi", pi))
    a, s, p = strategy(pi, q=q, d=d, w=w, alpha_budget=alpha_budget, G=G, n_steps=n_steps, L=L, eta=eta,
                       sigma2=sigma2, a1=a1, b1=b1, a2=a2, b2=b2, variant=variant)
    q = check_array("q", q)
    d = np.asarray(d, dtype=float)
    w = np.asarray(w, dtype=float)
    an = float(alpha_budget)
    slope = (1 - an) / an if variant == "eq10" else an / (1 - an)
    num = np.abs(w - a1 * d + b1)
    L_s = float(num.max() * slope)
    relu = np.maximum(dds_scores(w, d, pi, an, a1, b1, variant), 0)
    S = (pi * relu).sum(1)
    S = np.where(S > 0, S, np.inf)
    C1 = an * (L_s / S + relu.sum(1) * (L_s + relu.max(1)) / S ** 2)
    gamma = sfedpo_gamma(an, n_steps)
    d_max = float(d.max()) if d.size else 0.0
    pi_max = pi.max(1)
    a_max = np.minimum(a.max(1), 1.0)
    C2 = (1 - gamma) * d_max * (C1 + 1) / an
    denom = 1 - (1 - an) ** 2
    C3 = 2 * G * gamma / denom * ((4 * pi_max * a_max + 2 * pi_max ** 2 * a_max) * C1
                                  + (2 * a_max ** 2 + 2 * pi_max * a_max ** 2))
    C4 = 2 * G * gamma * 4 * (a_max + C1 * pi_max) / an
    Cs = C2 + C3 + C4
    Cs_tilde = ((1 - gamma) * d_max / an + 2 * G * gamma / denom * (4 * pi_max * a_max + 2 * pi_max ** 2 * a_max)
                + 2 * G * gamma * 4 * pi_max / an) * C1
    psi = np.maximum(1 / q - a2 * s + b2, 0)
    Z = float(psi.sum())
    if Z <= 0:
        raise ValueError("every SAW score is zero: Theorem 2 needs positive aggregation weights.")
    C5 = a2 * float(Cs.max()) / Z
    C6 = float(psi.max()) * a2 * float(Cs.max()) / Z ** 2
    eps = float(p @ q)
    B_max = float(L * eta * sigma2 * (p ** 2 @ q) + 5 / 3 * (p * q) @ s)
    qn = float(q.sum())
    pq_max = float((p * q).max())
    K = (B_max * (C5 + C6) * qn / eps ** 2
         + (L * eta * sigma2 * (2 * C5 * pq_max + 2 * C6 * eps)
            + 5 / 3 * (C5 * float((q * s).max()) + C6 * float(q @ s) + float(Cs_tilde.max()) * pq_max)) / eps)
    return {"L_s": L_s, "C1": C1.tolist(), "C2": C2.tolist(), "C3": C3.tolist(), "C4": C4.tolist(),
            "Cs": Cs.tolist(), "Cs_tilde": Cs_tilde.tolist(), "C5": C5, "C6": C6, "B_max": B_max, "eps": eps,
            "K": float(K)}
