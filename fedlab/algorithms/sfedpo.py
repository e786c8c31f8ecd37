r"""SFedPO: streaming FL with a prediction oracle (DDS + SAW, Algorithms 1-2) and its baselines.

Each round (Algorithm 1, spec ``dynamic.md`` §B.4): clients are available independently with probability
:math:`q_n`; an available client gets a forecast :math:`\hat\pi_n` from the oracle, computes its sampling
ratios :math:`\hat\alpha_{n,m}` (**DDS**), starts from :math:`\bar x^{(r)}`, and at each of the T time steps
replaces :math:`\mathrm{round}(\hat\alpha_{n,m_t}D)` buffer samples by fresh samples of its current state
:math:`m_t`, then takes an SGD step on a minibatch of the buffer. The server averages the updates with the
shift-aware weights :math:`\hat p_n` (**SAW**) and takes a server step.

**DDS** (§B.3). Score (10)/(87) and normalisation (11):

.. math::
    \mathrm{score}_n(m) = \frac{w_m - a_1d_m + b_1}{1 + \frac{1-\alpha_n}{\alpha_n}\hat\pi_{n,m}},\qquad
    \hat\alpha_{n,m} = \frac{\alpha_n\,\mathrm{ReLU}(\mathrm{score}_n(m))}
                             {\sum_{m'}\hat\pi_{n,m'}\mathrm{ReLU}(\mathrm{score}_n(m'))},

with Algorithm 2 clipping ratios at 1 and redistributing the budget. **Which score.** The paper prints two
inconsistent denominators: :math:`1 + \frac{1-\alpha_n}{\alpha_n}\hat\pi` in (10)/(87) and
:math:`1 + \frac{\alpha_n}{1-\alpha_n}\hat\pi` in §5/App. G (they coincide at the experiments' :math:`\alpha_n = 0.5`).
We use **(10)** by default (``variant="eq10"``); ``variant="oracle"`` gives the other. Neither is the exact
KKT solution of the sampling problem (82): ``sampling="exact"`` (:func:`dds_alpha_exact`) solves (82) exactly
(separable convex QP, water-filling on the budget multiplier; denominator
:math:`(2-\pi_m)/(2-\alpha_n) + \pi_m/\alpha_n`, spec §B.7 item 2).

**SAW** (§B.4). :math:`\hat p_n = \mathrm{ReLU}(1/q_n - a_2\hat s_n + b_2) / \sum_{j\in S_r}\mathrm{ReLU}(\cdot)`
(14), normalised over the participants :math:`S_r` (Algorithm 1; (14) normalises over all N, which would shrink the
model), with :math:`\hat s_n` the heterogeneity score (12) under :math:`\hat\pi, \hat\alpha`.
``aggregation="saw_exact"`` solves the surrogate QP (92) exactly. The server step is 1 (Algorithm 1's :math:`\eta`
there is presumably a typo, spec §B.7 item 6); ``server="fedexp"`` uses FedEXP's extrapolated step instead.

**Baselines** (§B.8 at CPU scale, :data:`METHOD_CONFIGS`): FedAvg on the latest data (full replacement every
step, the paper's treatment of methods without a sampling mechanism: FedOGD, and FedOMD, which is FedOGD with a
Euclidean mirror map), FedAvg on the buffer with uniform sampling :math:`\alpha_{n,m}=\alpha_n` and
:math:`p_n = 1/|S_r|` (the "original" methods of Table 2), a reservoir buffer (a uniform sample of the whole
stream, the long-term distribution DRSR targets), a buffer that is never refreshed, DDS or SAW alone, and the
modularity pairs FedProx / FedEXP with and without SFedPO.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from .._rng import numpy_rng
from .._validation import check_array, check_choice, check_real
from ..bounds.sfedpo import heterogeneity_score, sfedpo_gamma
from ..data.temporal_shift import BUFFER_RULES, BufferBank, PredictionOracle, TemporalShiftDataset
from ..engine import LocalSGD, broadcast, evaluate, local_sgd, metrics_from_outputs, model_outputs, weighted_average
from ..models import Model, Params
from ._common import STREAM_LOCAL, STREAM_SAMPLING, check_solver, initial_params

_STREAM_EVICT = 11  # randomness of the buffers' update rules, keyed (seed, round, _STREAM_EVICT, step)

__all__ = [
    "SCORE_VARIANTS",
    "dds_scores",
    "dds_alpha",
    "dds_alpha_exact",
    "uniform_alpha",
    "SAMPLING_RULES",
    "sampling_ratios",
    "saw_weights",
    "saw_exact",
    "AGGREGATION_RULES",
    "aggregation_weights",
    "SERVER_RULES",
    "fedexp_step",
    "SFedPOState",
    "SFedPO",
    "METHOD_CONFIGS",
    "make_method",
]

SCORE_VARIANTS = ("eq10", "oracle")


# ------------------------------------------------------------------------------------ DDS

def _budget(alpha_n) -> float:
    return check_real("alpha_n", alpha_n, low=0, high=1, low_open=True)


def _pi_matrix(name: str, pi) -> np.ndarray:
    pi = check_array(name, pi, nonnegative=True)
    if pi.ndim not in (1, 2) or pi.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (M,) or (N, M), got {pi.shape}.")
    if np.any(np.abs(pi.sum(-1) - 1) > 1e-6):
        raise ValueError(f"every row of {name} must sum to 1, got sums {np.round(np.atleast_1d(pi.sum(-1))[:5], 6)}.")
    return pi


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
    pi_hat = _pi_matrix("pi_hat", pi_hat)
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
    pi_hat = _pi_matrix("pi_hat", pi_hat)
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
    pi = _pi_matrix("pi", pi)
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
    pi = _pi_matrix("pi", pi)
    return np.full(pi.shape, _budget(alpha_n))


def _rule_dds(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return dds_alpha(dds_scores(w, d, pi, alpha_budget, a1, b1, variant), pi, alpha_budget)


def _rule_exact(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return dds_alpha_exact(pi, alpha_budget, d, w, G=G, n_steps=n_steps)


def _rule_uniform(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return uniform_alpha(pi, alpha_budget)


def _rule_latest(pi, alpha_budget, d, w, a1, b1, variant, G, n_steps):
    return np.ones_like(_pi_matrix("pi", pi))


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
    pi_hat = _pi_matrix("pi_hat", pi_hat)
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
    return AGGREGATION_RULES[rule](q, s, mask, a2, b2, L, eta, sigma2, lam2)


# ------------------------------------------------------------------------------------ server step

def fedexp_step(deltas: Params, p, eps: float = 1e-3) -> float:
    r"""FedEXP's server step (Jhunjhunwala et al., 2023) with weights :math:`p`:
    :math:`\eta_g = \max\{1, \sum_n p_n\|\Delta_n\|^2 / (2(\|\sum_n p_n\Delta_n\|^2 + \epsilon))\}`.

    Parameters
    ----------
    deltas : dict of Tensor (R, ...)
        Client updates :math:`\Delta_n = x_{n,T} - \bar x`.
    p : array-like (R,)
        Aggregation weights summing to 1.
    eps : float > 0
    """
    n_rows = next(iter(deltas.values())).shape[0]
    p = check_array("p", p, shape=(n_rows,), nonnegative=True)
    eps = check_real("eps", eps, low=0, low_open=True)
    pt = torch.as_tensor(p / p.sum(), dtype=torch.float64)
    sq = sum(v.double().flatten(1).pow(2).sum(1) for v in deltas.values())
    mean_sq = sum(torch.tensordot(pt, v.double(), dims=1).pow(2).sum() for v in deltas.values())
    return max(1.0, float((pt @ sq) / (2 * (mean_sq + eps))))


SERVER_RULES = ("avg", "fedexp")


# ------------------------------------------------------------------------------------ the algorithm

@dataclass(frozen=True)
class SFedPOState:
    r"""Global model :math:`\bar x^{(r)}`, the clients' buffers and the number of rounds done."""

    params: Params
    buffers: BufferBank = field(repr=False)
    round: int = 0


class SFedPO:
    r"""Algorithm 1 (SFedPO) and, through its options, the baselines of :data:`METHOD_CONFIGS`.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        Step size :math:`\eta` and minibatch; each of the T time steps runs ``solver.local_steps`` SGD steps
        (1 in the paper) on the buffer after its update. ``prox_mu > 0`` gives FedProx (anchor
        :math:`\bar x^{(r)}`). Momentum is not supported (the buffer changes between steps).
    sampling : str
        Key of :data:`SAMPLING_RULES` (``"dds"``, ``"exact"``, ``"uniform"``, ``"latest"``).
    aggregation : str
        Key of :data:`AGGREGATION_RULES` (``"saw"``, ``"saw_exact"``, ``"uniform"``).
    oracle : PredictionOracle, optional
        Default: the perfect oracle ``PredictionOracle("exact")``.
    alpha_budget : float in (0, 1]
        Sampling budget :math:`\alpha_n` (0.5 in the paper).
    a1, b1, variant : DDS constants and score form (see :func:`dds_scores`).
    a2, b2 : SAW constants.
    G, L, sigma2 : float
        Constants of the bound used by DDS ("exact") and by the heterogeneity score (12) (:math:`\eta` =
        ``solver.lr``).
    lam2 : float
        :math:`\lambda_2` of ``"saw_exact"``.
    buffer_rule : str
        Eviction rule of :data:`~fedlab.data.temporal_shift.BUFFER_RULES` (``"random"``: the mixture update (1)).
    server : {"avg", "fedexp"}
    server_lr : float
        Server step :math:`\eta_g` of ``"avg"`` (1 = plain weighted averaging).
    backend : {"auto", "batched", "loop"}
    """

    def __init__(self, model: Model, solver: LocalSGD, *, sampling: str = "dds", aggregation: str = "saw",
                 oracle: PredictionOracle | None = None, alpha_budget: float = 0.5, a1: float = 0.1,
                 b1: float = 0.2, variant: str = "eq10", a2: float = 1.0, b2: float = 0.0, G: float = 1.0,
                 L: float = 1.0, sigma2: float = 1.0, lam2: float = 0.0, buffer_rule: str = "random",
                 server: str = "avg", server_lr: float = 1.0, backend: str = "auto") -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model must be a fedlab Model, got {type(model).__name__}.")
        check_solver(solver)
        if solver.momentum:
            raise ValueError("SFedPO does not support momentum (the buffer changes at every time step); "
                             f"got momentum={solver.momentum}.")
        if oracle is not None and not isinstance(oracle, PredictionOracle):
            raise TypeError(f"oracle must be a PredictionOracle, got {type(oracle).__name__}.")
        self.model, self.solver = model, solver
        self.sampling = check_choice("sampling", sampling, SAMPLING_RULES)
        self.aggregation = check_choice("aggregation", aggregation, AGGREGATION_RULES)
        self.oracle = PredictionOracle("exact") if oracle is None else oracle
        self.alpha_budget = _budget(alpha_budget)
        self.a1, self.b1 = check_real("a1", a1), check_real("b1", b1)
        self.variant = check_choice("variant", variant, SCORE_VARIANTS)
        if self.variant == "oracle" and self.alpha_budget >= 1:
            raise ValueError("variant 'oracle' divides by 1 - alpha_n: alpha_budget must be < 1.")
        self.a2, self.b2 = check_real("a2", a2), check_real("b2", b2)
        self.G = check_real("G", G, low=0, low_open=True)
        self.L = check_real("L", L, low=0)
        self.sigma2 = check_real("sigma2", sigma2, low=0)
        self.lam2 = check_real("lam2", lam2)
        self.buffer_rule = check_choice("buffer_rule", buffer_rule, BUFFER_RULES)
        self.server = check_choice("server", server, SERVER_RULES)
        self.server_lr = check_real("server_lr", server_lr, low=0, low_open=True)
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    @staticmethod
    def _check(data) -> TemporalShiftDataset:
        if not isinstance(data, TemporalShiftDataset):
            raise TypeError(f"data must be a TemporalShiftDataset (fedlab.data.temporal_shift), got "
                            f"{type(data).__name__}.")
        return data

    def strategy(self, pi_hat, data: TemporalShiftDataset, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""Sampling ratios (N, M), heterogeneity scores :math:`\hat s` (N,) and weights (N,) for forecasts ``pi_hat``.

        Weights are normalised over ``mask`` (default: all clients, as in the theory's fixed :math:`p_n`).
        """
        data = self._check(data)
        a = sampling_ratios(self.sampling, pi_hat, alpha_budget=self.alpha_budget, d=data.d, w=data.w, a1=self.a1,
                            b1=self.b1, variant=self.variant, G=self.G, n_steps=data.n_steps)
        pi_hat = np.atleast_2d(pi_hat)
        eff = (pi_hat * a).sum(1)
        s = heterogeneity_score(pi_hat, a, data.d, data.w, G=self.G, n_steps=data.n_steps, L=self.L,
                                eta=self.solver.lr, sigma2=self.sigma2, budget=np.where(eff > 0, eff, 1.0))
        p = aggregation_weights(self.aggregation, data.q, s, mask, a2=self.a2, b2=self.b2, L=self.L,
                                eta=self.solver.lr, sigma2=self.sigma2, lam2=self.lam2)
        return a, s, p

    def init(self, data: TemporalShiftDataset, seed: int) -> SFedPOState:
        data = self._check(data)
        return SFedPOState(initial_params(self.model, seed), data.initial_bank(self.buffer_rule), 0)

    def round(self, state: SFedPOState, data: TemporalShiftDataset, seed: int) -> tuple[SFedPOState, dict]:
        data = self._check(data)
        r = state.round
        if r >= data.n_rounds:
            raise ValueError(f"round {r} is beyond the data set's horizon R={data.n_rounds}.")
        mask = numpy_rng(seed, r, STREAM_SAMPLING).random(data.n_clients) < data.q
        chosen = np.flatnonzero(mask)
        if len(chosen) == 0:
            return SFedPOState(state.params, state.buffers, r + 1), {
                "participants": [], "p_round": [], "local_loss": float("nan"), "server_lr": 0.0, "refreshed": 0}
        pi_hat = self.oracle.predict(data, r, seed)
        alpha, _, p_all = self.strategy(pi_hat, data, mask)
        p = p_all[chosen]
        bank = state.buffers.copy()
        steps = data.step_states(r)
        start = broadcast(state.params, len(chosen))
        params, losses, refreshed = start, [], 0
        rows = np.arange(data.n_clients)
        for t in range(1, data.n_steps + 1):
            # round(alpha_{n, m_t} D) fresh samples of the current state for each participant, 0 for the others
            sizes = np.where(mask, np.rint(alpha[rows, steps[:, t - 1]] * data.capacity), 0).astype(np.int64)
            fresh = data._fresh(r, t, sizes)
            rng = numpy_rng(seed, r, _STREAM_EVICT, t)
            for n in chosen:
                if fresh[n] is not None:  # None: the ratio of the current state is 0 (e.g. a state the forecast missed)
                    x, y, m = fresh[n]
                    refreshed += bank._replace(int(n), x, y, m, rng)
            params, loss = local_sgd(self.model, params, bank.client_data(chosen), self.solver,
                                     key=(seed, r, STREAM_LOCAL, t), anchor=start, backend=self.backend)
            losses.append(loss)
        mean = weighted_average(params, p)
        if self.server == "fedexp":
            deltas = {k: params[k] - start[k] for k in params}
            eta_g = fedexp_step(deltas, p)
        else:
            eta_g = self.server_lr
        new = {k: state.params[k] + eta_g * (mean[k] - state.params[k]) for k in mean}
        info = {"participants": chosen.tolist(), "p_round": [float(v) for v in p],
                "local_loss": float(torch.stack(losses).mean()), "server_lr": float(eta_g), "refreshed": refreshed}
        return SFedPOState(new, bank, r + 1), info

    def evaluate(self, state: SFedPOState, data: TemporalShiftDataset) -> dict[str, np.ndarray]:
        r"""Per-client metrics on the current buffers (``train_*``) and the clients' test sets (``test_*``), and
        the global objective (3) on ``data.state_test`` weighted by :math:`w` (``global_loss``/``global_accuracy``,
        the same value repeated for every client)."""
        data = self._check(data)
        k = data.n_clients
        out = evaluate(self.model, broadcast(state.params, k), state.buffers.client_data(), data.test)
        m = data.n_states
        glob = metrics_from_outputs(self.model, model_outputs(self.model, broadcast(state.params, m), data.state_test),
                                    data.state_test)
        for name, values in glob.items():
            out[f"global_{name}"] = np.full(k, float(np.nansum(data.w * values)))
        return out


# ------------------------------------------------------------------------------------ methods

#: Named configurations of :class:`SFedPO` (keyword overrides; ``prox_mu`` changes the solver). The paper's
#: baselines that need machinery outside this CPU-scale setting (FedDrift's clustering, Flash's drift detector,
#: FedEWC/FLwF-2T's Fisher or distillation terms, IS/ODE's per-sample valuation) are not included.
METHOD_CONFIGS: dict[str, dict] = {
    "sfedpo": dict(sampling="dds", aggregation="saw"),
    "sfedpo_dds": dict(sampling="dds", aggregation="uniform"),
    "sfedpo_saw": dict(sampling="uniform", aggregation="saw"),
    "sfedpo_exact": dict(sampling="exact", aggregation="saw_exact"),
    "fedavg_buffer": dict(sampling="uniform", aggregation="uniform"),
    "fedavg_latest": dict(sampling="latest", aggregation="uniform"),
    "fedavg_reservoir": dict(sampling="uniform", aggregation="uniform", buffer_rule="reservoir"),
    "fedavg_static": dict(sampling="uniform", aggregation="uniform", buffer_rule="keep"),
    "fedprox_buffer": dict(sampling="uniform", aggregation="uniform", prox_mu=0.1),
    "fedprox_sfedpo": dict(sampling="dds", aggregation="saw", prox_mu=0.1),
    "fedexp_buffer": dict(sampling="uniform", aggregation="uniform", server="fedexp"),
    "fedexp_sfedpo": dict(sampling="dds", aggregation="saw", server="fedexp"),
}


def make_method(name: str, model: Model, solver: LocalSGD, **overrides) -> SFedPO:
    """Build a method of :data:`METHOD_CONFIGS` (``overrides`` update its options, e.g. ``oracle=``, ``a1=``).

    ``prox_mu`` is a solver option: it replaces ``solver.prox_mu`` (FedProx).
    """
    name = check_choice("name", name, METHOD_CONFIGS)
    check_solver(solver)
    options = {**METHOD_CONFIGS[name], **overrides}
    mu = options.pop("prox_mu", None)
    if mu is not None:
        solver = LocalSGD(**{**solver.__dict__, "prox_mu": check_real("prox_mu", mu, low=0)})
    return SFedPO(model, solver, **options)
