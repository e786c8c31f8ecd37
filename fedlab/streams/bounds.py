r"""Bound calculators for federated learning on data streams (thesis §4.3, appendix G; AISTATS 2023).

With historical clients :math:`m \le M_{hist}` (static data) and fresh clients (only the current batch),
constant per-client sample weights give client importances :math:`p \in \Delta^{M-1}` and Corollary 4.3.5
bounds the true error by (eq. 4.17)

.. math::
    \psi(p; c) = c_0 + c_1 \sqrt{\textstyle\sum_{m > M_{hist}} p_m^2} + c_2 \sqrt{\textstyle\sum_m p_m^2 / n_m},

a gradient-variability term (fresh clients only) plus a generalization term
(:math:`\sum_m p_m^2/n_m = N / N_{eff}`). Its minimiser depends only on :math:`r = c_2/c_1`, on
:math:`n` and on :math:`M_F = M - M_{hist}`. When the fresh clients have equal sizes, with
:math:`h = N_{hist}/N`, :math:`s = h(1-h)` and :math:`\kappa = r\sqrt{M_F}`,

.. math::
    p^*_{hist} = 1 \text{ if } \kappa^2 \le h, \qquad
    p^*_{hist} = h + \frac{s}{\sqrt{\kappa^2 - s}} \text{ otherwise}

(closed form derived in the chapter spec, checked against cvxpy). :func:`optimal_weights` uses it, or a
conic solver (cvxpy/CLARABEL) for general sizes. The ratio is estimated as (eq. G.839)
:math:`\hat c_2/\hat c_1 \approx (B + \sqrt{d/N}) / (G D \sqrt{M - M_{hist}})`.

Functions taking ``ratio`` accept ``numpy.inf`` (:math:`c_1 = 0`: pure generalization, Uniform).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_simplex
from fedlab.streams.published import REPORTED_P_HIST, REPORTED_RATIOS, TABLE_4_1

__all__ = [
    "psi",
    "psi_general",
    "l1_distance_bound",
    "n_eff",
    "effective_sample_size",
    "Importance",
    "importance_from_schedule",
    "p_hist_weights",
    "optimal_p_hist",
    "optimal_weights",
    "OPTIMIZERS",
    "psi_closed_form",
    "historical_threshold",
    "crossover_ratio",
    "crossover_fraction",
    "psi_constants",
    "ratio_exact",
    "estimate_ratio",
    "ratio_spread",
    "table_4_1_check",
]


# ------------------------------------------------------------------------------------ validation

def _check_fractions(n) -> np.ndarray:
    arr = check_array("n", n, ndim=1, nonnegative=True)
    if arr.size == 0 or abs(arr.sum() - 1.0) > 1e-6:
        raise ValueError(f"n must be client fractions N_m/N (non-negative, summing to 1), got sum {arr.sum():.6g}.")
    return arr


def _check_m_hist(m_hist, size: int) -> int:
    return check_int("m_hist", m_hist, low=0, high=size)


def _check_ratio(ratio) -> float:
    if isinstance(ratio, (int, float, np.floating, np.integer)) and not isinstance(ratio, bool) and ratio == np.inf:
        return math.inf
    return check_real("ratio", ratio, low=0)


def _values(name: str, value, *, high: float | None = None, inf_ok: bool = False,
            positive: bool = False) -> np.ndarray:
    """A number or array of numbers (the vectorised functions broadcast them), non-negative (positive with
    ``positive``), at most ``high``, finite unless ``inf_ok`` allows +inf; else raise naming ``name``."""
    arr = check_array(name, value, finite=False)
    if np.any(np.isnan(arr)) or (not inf_ok and np.any(np.isinf(arr))):
        raise ValueError(f"{name} must be {'a number' if inf_ok else 'finite'} (no NaN), got {value!r}.")
    low_bad = np.any(arr <= 0) if positive else np.any(arr < 0)
    if low_bad or (high is not None and np.any(arr > high)):
        interval = f"{'(' if positive else '['}0, {high if high is not None else 'inf'}]"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}.")
    return arr


def _gen_sum(p: np.ndarray, n: np.ndarray) -> float:
    r""":math:`\sum_m p_m^2/n_m`, with :math:`0/0 = 0` and :math:`p_m > 0 = n_m` infinite."""
    pos = n > 0
    if np.any(p[~pos] > 0):
        return math.inf
    return float(np.sum(p[pos] ** 2 / n[pos]))


# ------------------------------------------------------------------------------------ psi and N_eff

def psi(p, n, m_hist: int, c1: float = 1.0, c2: float = 1.0, c0: float = 0.0) -> float:
    r"""The bound :math:`\psi(p; c)` of Corollary 4.3.5 (eq. 4.17).

    .. math:: \psi = c_0 + c_1\sqrt{\textstyle\sum_{m>M_{hist}} p_m^2} + c_2\sqrt{\textstyle\sum_m p_m^2/n_m}

    Parameters
    ----------
    p : array-like (M,)
        Client importances in the simplex.
    n : array-like (M,)
        Fractions :math:`n_m = N_m/N` (historical clients first).
    m_hist : int
        Number of historical clients :math:`M_{hist}`.
    c1, c2, c0 : float
        Non-negative constants (:math:`c_0` never changes the minimiser; 0 by default).

    Returns
    -------
    float (``inf`` if a client without samples gets weight).

    Examples
    --------
    >>> n = [0.4, 0.4, 0.1, 0.1]                      # two historical clients, then two fresh ones
    >>> round(psi([0.25] * 4, n, m_hist=2), 4), round(psi([0.45, 0.45, 0.05, 0.05], n, m_hist=2), 4)
    (1.6036, 1.1015)
    """
    n = _check_fractions(n)
    p = check_simplex("p", p, ndim=1, size=len(n))
    m_hist = _check_m_hist(m_hist, len(n))
    c1, c2, c0 = (check_real(k, v, low=0) for k, v in (("c1", c1), ("c2", c2), ("c0", c0)))
    gen = _gen_sum(p, n)
    return c0 + c1 * float(np.sqrt(np.sum(p[m_hist:] ** 2))) + (c2 * math.sqrt(gen) if c2 else 0.0)


def psi_general(p, n, alpha, m_hist: int, c1: float, c2_tilde: float, disc_max: float, c0: float = 0.0) -> float:
    r"""The bound of Corollary 4.3.5' for a general target :math:`\alpha` (appendix G.4).

    .. math::
        c_0 + c_1\sqrt{\textstyle\sum_{m>M_{hist}} p_m^2} + 2\Delta\,\|\alpha - p\|_1
        + \tilde c_2\sqrt{\textstyle\sum_m p_m^2/n_m}

    Parameters
    ----------
    p, n, alpha : array-like (M,)
        Importances, fractions and target importances (all in the simplex).
    m_hist : int
    c1 : float
        :math:`\sigma_0\sqrt{M_F}(D + 2/\sqrt T)`.
    c2_tilde : float
        The complexity constant (:func:`psi_constants`).
    disc_max : float
        :math:`\Delta = \max_{m,m'}\mathrm{disc}(\mathcal P_m, \mathcal P_{m'})`.
    c0 : float
    """
    n = _check_fractions(n)
    p = check_simplex("p", p, ndim=1, size=len(n))
    alpha = check_array("alpha", alpha, shape=(len(n),), nonnegative=True)
    if abs(alpha.sum() - 1) > 1e-6:
        raise ValueError(f"alpha must lie in the simplex, got sum {alpha.sum():.6g}.")
    m_hist = _check_m_hist(m_hist, len(n))
    c1, c2_tilde, disc_max, c0 = (check_real(k, v, low=0) for k, v in
                                  (("c1", c1), ("c2_tilde", c2_tilde), ("disc_max", disc_max), ("c0", c0)))
    return (c0 + c1 * float(np.sqrt(np.sum(p[m_hist:] ** 2))) + 2 * disc_max * float(np.abs(alpha - p).sum())
            + c2_tilde * math.sqrt(_gen_sum(p, n)))


def l1_distance_bound(p, n) -> tuple[float, float]:
    r""":math:`\|p - n\|_1` and its bound :math:`\sqrt{\sum_m p_m^2/n_m - 1}` (eqs. G.820-G.825)."""
    n = _check_fractions(n)
    p = check_simplex("p", p, ndim=1, size=len(n))
    return float(np.abs(p - n).sum()), math.sqrt(max(_gen_sum(p, n) - 1.0, 0.0))


def n_eff(p, n, n_total: float) -> float:
    r"""Effective sample size of the case study, :math:`N_{eff} = N / \sum_m p_m^2/n_m` (§4.3.3).

    Every sample of client :math:`m` then has importance :math:`p_{m,i} = p_m/N_m`. Lemma 4.3.2:
    :math:`N_{eff} \le N`, with equality iff :math:`p = n`.
    """
    n = _check_fractions(n)
    p = check_simplex("p", p, ndim=1, size=len(n))
    n_total = check_real("n_total", n_total, low=0, low_open=True)
    return n_total / _gen_sum(p, n)


def effective_sample_size(p_samples) -> float:
    r""":math:`N_{eff} = (\sum_{m,i} p_{m,i}^2)^{-1}` for sample importances summing to 1 (Lemma 4.3.2).

    Parameters
    ----------
    p_samples : array-like, or sequence of per-client arrays
        All :math:`p_{m,i}` (flattened).
    """
    if isinstance(p_samples, (list, tuple)):
        p_samples = np.concatenate([check_array("p_samples", q, ndim=1, nonnegative=True) for q in p_samples])
    arr = check_array("p_samples", p_samples, nonnegative=True).ravel()
    if arr.size == 0 or abs(arr.sum() - 1) > 1e-6:
        raise ValueError(f"p_samples must be sample importances summing to 1, got sum {arr.sum():.6g}.")
    return float(1.0 / np.sum(arr ** 2))


@dataclass(frozen=True)
class Importance:
    r"""Importances induced by a sample-weight schedule :math:`\lambda` (eqs. 4.5, 4.6, 4.13).

    Attributes
    ----------
    p_samples : list of ndarray (N_m,)
        :math:`p_{m,i}`, summing to 1 over clients and samples.
    p_clients : ndarray (M,)
        :math:`p_m = \sum_i p_{m,i} = \sum_t q^{(t)} p_m^{(t)}`.
    p_rounds : ndarray (T, M)
        Aggregation weights :math:`p_m^{(t)}` (rows of zeros for rounds without weight).
    q : ndarray (T,)
        Round weights :math:`q^{(t)}`.
    n_eff : float
        :math:`N_{eff} = 1/\sum p_{m,i}^2`.
    """

    p_samples: list
    p_clients: np.ndarray
    p_rounds: np.ndarray
    q: np.ndarray
    n_eff: float


def importance_from_schedule(weights: Sequence) -> Importance:
    r"""Client, round and sample importances of a weight schedule :math:`\lambda_m^{(t,j)}` (§4.3.1).

    .. math::
        p_m^{(t)} = \frac{\sum_{j\in\mathcal I_m^{(t)}}\lambda_m^{(t,j)}}{\sum_{m'}\sum_{j}\lambda_{m'}^{(t,j)}},\quad
        q^{(t)} = \frac{\sum_{m,j}\lambda_m^{(t,j)}}{\sum_{s,m,j}\lambda_m^{(s,j)}},\quad
        p_{m,i} = \frac{\sum_t \lambda_m^{(t,i)}}{\sum_{s,m',j}\lambda_{m'}^{(s,j)}}

    (eqs. 4.5, 4.6, 4.13).

    Parameters
    ----------
    weights : sequence of arrays (T, N_m)
        Per client, :math:`\lambda_m^{(t,i)}` for sample ``i`` at round ``t`` (0 when not in memory).

    Returns
    -------
    Importance
    """
    if len(check_sequence("weights", weights)) == 0:
        raise ValueError("weights must hold one (T, N_m) array per client.")
    lam = [check_array(f"weights[{m}]", w, ndim=2, nonnegative=True) for m, w in enumerate(weights)]
    horizons = {w.shape[0] for w in lam}
    if len(horizons) != 1:
        raise ValueError(f"weights must give every client the same number of rounds T, got {sorted(horizons)}.")
    per_round = np.stack([w.sum(1) for w in lam], axis=1)  # (T, M)
    total = per_round.sum()
    if total <= 0:
        raise ValueError("weights must have a positive total.")
    round_mass = per_round.sum(1)
    p_rounds = np.divide(per_round, round_mass[:, None], out=np.zeros_like(per_round),
                         where=round_mass[:, None] > 0)
    p_samples = [w.sum(0) / total for w in lam]
    return Importance(p_samples, np.array([ps.sum() for ps in p_samples]), p_rounds, round_mass / total,
                      effective_sample_size(p_samples))


def p_hist_weights(p_hist: float, n, m_hist: int) -> np.ndarray:
    r"""Client importances for a total historical weight :math:`p_{hist}` (spec §2.1, one weight per group).

    .. math::
        p_m = p_{hist}\,\frac{N_m}{N_{hist}}\ (m \le M_{hist}),\qquad
        p_m = (1 - p_{hist})\,\frac{N_m}{N - N_{hist}}\ (m > M_{hist}).

    ``p_hist = 1`` is Historical, ``p_hist = 0`` Fresh and ``p_hist = h`` Uniform (:math:`p = n`).
    """
    n = _check_fractions(n)
    m_hist = _check_m_hist(m_hist, len(n))
    p_hist = check_real("p_hist", p_hist, low=0, high=1)
    h = float(n[:m_hist].sum())
    if (h == 0 and p_hist > 0) or (h == 1 and p_hist < 1):
        raise ValueError(f"p_hist={p_hist} is impossible with historical fraction h={h:.6g}.")
    p = np.zeros(len(n))
    if h > 0:
        p[:m_hist] = p_hist * n[:m_hist] / h
    if h < 1:
        p[m_hist:] = (1 - p_hist) * n[m_hist:] / (1 - h)
    return p


# ------------------------------------------------------------------------------------ minimisers

def optimal_p_hist(ratio, h, m_fresh: int):
    r"""Closed-form :math:`p^*_{hist} = \arg\min\psi` for equal-size fresh clients (spec §3.10).

    .. math::
        p^*_{hist} = \begin{cases} 1, & \kappa^2 \le h \\ h + \dfrac{h(1-h)}{\sqrt{\kappa^2 - h(1-h)}}, & \kappa^2 > h
        \end{cases}\qquad \kappa = \frac{c_2}{c_1}\sqrt{M_F}

    Vectorised over ``ratio`` and ``h`` (numpy broadcasting).

    Parameters
    ----------
    ratio : float or array
        :math:`c_2/c_1 \ge 0` (``inf`` allowed: Uniform).
    h : float or array
        :math:`N_{hist}/N \in [0, 1]`.
    m_fresh : int
        :math:`M_F = M - M_{hist} \ge 1` (0 only with ``h = 1``).

    Returns
    -------
    float or ndarray
    """
    r = _values("ratio", ratio, inf_ok=True)
    hh = _values("h", h, high=1.0)
    m_fresh = check_int("m_fresh", m_fresh, low=0)
    if m_fresh == 0:
        if np.any(hh < 1):
            raise ValueError("m_fresh=0 (no fresh client) requires h = 1.")
        out = np.ones(np.broadcast(r, hh).shape)
        return float(out) if out.ndim == 0 else out
    s = hh * (1 - hh)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa2 = r ** 2 * m_fresh
        interior = hh + np.where(np.isinf(kappa2), 0.0, s / np.sqrt(np.maximum(kappa2 - s, 1e-300)))
    out = np.where((kappa2 <= hh) & (hh > 0), 1.0, np.where(hh == 0, 0.0, np.minimum(interior, 1.0)))
    return float(out) if out.ndim == 0 else out


def _active_groups(n: np.ndarray, m_hist: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.arange(len(n))
    return idx[(idx < m_hist) & (n > 0)], idx[(idx >= m_hist) & (n > 0)]


def _equal_fresh(n: np.ndarray, fresh: np.ndarray, rtol: float = 1e-9) -> bool:
    return len(fresh) == 0 or bool(np.ptp(n[fresh]) <= rtol * n[fresh].max())


def _closed(ratio: float, n: np.ndarray, m_hist: int) -> np.ndarray:
    hist, fresh = _active_groups(n, m_hist)
    if not _equal_fresh(n, fresh):
        raise ValueError("the closed form needs equal-size fresh clients; use method='cvxpy' (or 'auto').")
    h = float(n[hist].sum())
    x = optimal_p_hist(ratio, h, len(fresh)) if len(fresh) else 1.0
    p = np.zeros(len(n))
    if h > 0:
        p[hist] = x * n[hist] / h
    if len(fresh):
        p[fresh] = (1 - x) / len(fresh)
    return p


_CVX_CACHE: dict = {}


def _cvxpy(ratio: float, n: np.ndarray, m_hist: int) -> np.ndarray:
    import cvxpy as cp

    hist, fresh = _active_groups(n, m_hist)
    active = np.concatenate([hist, fresh])
    p = np.zeros(len(n))
    if np.isinf(ratio):  # pure generalization term: minimised by p = n
        return n.copy()
    key = (tuple(np.round(n[active], 15)), len(hist))
    if key not in _CVX_CACHE:
        var = cp.Variable(len(active))
        r = cp.Parameter(nonneg=True)
        fresh_term = cp.norm(var[len(hist):], 2) if len(fresh) else 0
        objective = fresh_term + r * cp.norm(cp.multiply(var, 1 / np.sqrt(n[active])), 2)
        _CVX_CACHE[key] = (cp.Problem(cp.Minimize(objective), [var >= 0, cp.sum(var) == 1]), var, r)
    problem, var, r = _CVX_CACHE[key]
    r.value = ratio
    for solver in ("CLARABEL", "SCS"):
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError:
            continue
        if var.value is not None and problem.status in ("optimal", "optimal_inaccurate"):
            break
    else:
        raise RuntimeError(f"cvxpy could not minimise psi (status {problem.status!r}).")
    sol = np.clip(np.asarray(var.value, dtype=float), 0, None)
    p[active] = sol / sol.sum()
    return p


OPTIMIZERS = {"closed": _closed, "cvxpy": _cvxpy}


def optimal_weights(ratio, n, m_hist: int, method: str = "auto") -> np.ndarray:
    r"""The minimiser :math:`p^* = \arg\min_{p\in\Delta} \psi(p; c)` of eq. (4.17) ("Ours" in §4.3.4).

    Parameters
    ----------
    ratio : float
        :math:`c_2/c_1 \ge 0` (``inf``: Uniform).
    n : array-like (M,)
        Fractions :math:`n_m` (historical clients first); clients with :math:`n_m = 0` get :math:`p_m = 0`.
    m_hist : int
    method : {"auto", "closed", "cvxpy"}
        ``closed``: the closed form (equal-size fresh clients; historical weights proportional to
        :math:`n_m`, fresh weights equal); ``cvxpy``: a conic solver (CLARABEL, then SCS);
        ``auto``: closed form when the fresh sizes are equal (relative 1e-9), cvxpy otherwise.

    Returns
    -------
    ndarray (M,) in the simplex.
    """
    ratio = _check_ratio(ratio)
    n = _check_fractions(n)
    m_hist = _check_m_hist(m_hist, len(n))
    method = check_choice("method", method, ("auto", *OPTIMIZERS))
    if method == "auto":
        method = "closed" if _equal_fresh(n, _active_groups(n, m_hist)[1]) else "cvxpy"
    return OPTIMIZERS[method](ratio, n, m_hist)


def psi_closed_form(ratio, h, m_fresh: int) -> dict:
    r"""Closed-form quantities of the case study at :math:`p^*` (spec §3.10), in units of :math:`c_1`, :math:`c_0 = 0`.

    With :math:`x = p_{hist}`, the optimal split inside each group gives
    :math:`\psi(x) = (1-x)/\sqrt{M_F} + r\sqrt{x^2/h + (1-x)^2/(1-h)}`.

    Parameters
    ----------
    ratio, h : float or arrays (broadcast)
    m_fresh : int

    Returns
    -------
    dict of float or ndarray
        ``p_hist`` (:math:`p^*_{hist}`), ``kappa``, ``psi_star``, ``psi_hist`` (:math:`= r/\sqrt h`),
        ``psi_unif`` (:math:`= (1-h)/\sqrt{M_F} + r`), ``gap_hist`` (:math:`\psi_{hist}-\psi^*`),
        ``gap_unif``, ``hist_minus_unif``, ``n_eff_ratio`` (:math:`N^*_{eff}/N`) and
        ``fresh_noise`` (:math:`\sqrt{\sum_F p_m^{*2}} = (1-p^*_{hist})/\sqrt{M_F}`).
    """
    x = optimal_p_hist(ratio, h, m_fresh)
    r = np.asarray(ratio, dtype=float)
    hh = np.asarray(h, dtype=float)
    mf = max(m_fresh, 1)

    def value(xv):
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(xv == 0, 0.0, xv ** 2 / hh)
            b = np.where(xv == 1, 0.0, (1 - xv) ** 2 / (1 - hh))
            gen = a + b
            return (1 - xv) / math.sqrt(mf) + np.where(r == 0, 0.0, r * np.sqrt(gen)), gen

    psi_star, gen_star = value(x)
    psi_hist, _ = value(np.ones_like(hh))
    psi_unif, _ = value(hh)
    out = {"p_hist": x, "kappa": r * math.sqrt(m_fresh), "psi_star": psi_star, "psi_hist": psi_hist,
           "psi_unif": psi_unif, "gap_hist": psi_hist - psi_star, "gap_unif": psi_unif - psi_star,
           "hist_minus_unif": psi_hist - psi_unif, "n_eff_ratio": 1.0 / gen_star,
           "fresh_noise": (1 - np.asarray(x)) / math.sqrt(mf)}
    return {k: (float(v) if np.ndim(v) == 0 else np.asarray(v)) for k, v in out.items()}


def historical_threshold(h, m_fresh: int):
    r"""Largest :math:`c_2/c_1` at which Historical is optimal: :math:`\sqrt{h/M_F}` (spec §3.10).

    Valid for any fresh sizes (first-order optimality at :math:`p_F = 0`).
    """
    h = _values("h", h, high=1.0)
    m_fresh = check_int("m_fresh", m_fresh, low=1)
    return np.sqrt(h / m_fresh)[()]


def crossover_ratio(h, m_fresh: int):
    r"""Ratio below which :math:`\psi_{hist} < \psi_{unif}`: :math:`\sqrt h(1+\sqrt h)/\sqrt{M_F}` (spec §3.10)."""
    hh = _values("h", h, high=1.0)
    m_fresh = check_int("m_fresh", m_fresh, low=1)
    return (np.sqrt(hh) * (1 + np.sqrt(hh)) / math.sqrt(m_fresh))[()]


def crossover_fraction(ratio, m_fresh: int):
    r"""Fraction :math:`h_\times = ((\sqrt{1+4\kappa}-1)/2)^2` above which Historical beats Uniform in :math:`\psi`."""
    ratio = _values("ratio", ratio)
    m_fresh = check_int("m_fresh", m_fresh, low=1)
    kappa = ratio * math.sqrt(m_fresh)
    return (((np.sqrt(1 + 4 * kappa) - 1) / 2) ** 2)[()]


# ------------------------------------------------------------------------------------ constants

def psi_constants(*, sigma0: float, diameter: float, horizon: int, m_fresh: int, loss_bound: float,
                  pdim: float, n_total: float, disc_max: float = 0.0, version: str = "thesis") -> dict:
    r"""Constants :math:`c_1, c_2` of eq. (4.19)-(4.20).

    .. math::
        c_1 = \sigma_0\sqrt{M_F}\,(D + 2/\sqrt T),\qquad
        c_2 = 10B\sqrt{1+\log(N/\mathrm{Pdim})}\sqrt{\mathrm{Pdim}/N} + 2\Delta \ \text{(thesis)}

    and :math:`c_2 = 4\sqrt{1+\log(N/\mathrm{VCdim})}\sqrt{\mathrm{VCdim}/N} + 2\Delta` in the paper
    (``version="paper"``; ``pdim`` is then the VC dimension).

    Returns
    -------
    dict with ``c1``, ``c2``, ``ratio``.
    """
    version = check_choice("version", version, ("thesis", "paper"))
    sigma0 = check_real("sigma0", sigma0, low=0)
    diameter = check_real("diameter", diameter, low=0)
    horizon = check_int("horizon", horizon, low=1)
    m_fresh = check_int("m_fresh", m_fresh, low=0)
    loss_bound = check_real("loss_bound", loss_bound, low=0)
    n_total = check_real("n_total", n_total, low=0, low_open=True)
    pdim = check_real("pdim", pdim, low=0, high=n_total, low_open=True)
    disc_max = check_real("disc_max", disc_max, low=0)
    c1 = sigma0 * math.sqrt(m_fresh) * (diameter + 2 / math.sqrt(horizon))
    complexity = math.sqrt(1 + math.log(n_total / pdim)) * math.sqrt(pdim / n_total)
    c2 = (10 * loss_bound if version == "thesis" else 4.0) * complexity + 2 * disc_max
    return {"c1": c1, "c2": c2, "ratio": c2 / c1 if c1 > 0 else math.inf}


def ratio_exact(**kwargs) -> float:
    r""":math:`c_2/c_1` from the explicit constants (eq. G.834); keyword arguments of :func:`psi_constants`."""
    return psi_constants(**kwargs)["ratio"]


def estimate_ratio(loss_bound, grad_bound, diameter, d, n_total, m_fresh):
    r"""The heuristic :math:`\hat c_2/\hat c_1 \approx (B + \sqrt{d/N}) / (G D \sqrt{M - M_{hist}})` (eq. G.839).

    Obtained from eq. (G.834) with :math:`\sqrt{1+\log(N/\mathrm{Pdim})}\approx 2`, :math:`D + 2/\sqrt T \approx D`,
    :math:`\mathrm{Pdim}\approx d/(10B)^2`, :math:`\sigma_0 \approx 2G` and :math:`\Delta \approx B`.
    Vectorised over its arguments.

    Parameters
    ----------
    loss_bound : float
        :math:`B`, bound on the loss.
    grad_bound : float
        :math:`G`, bound on the gradient norm.
    diameter : float
        :math:`D`, diameter of :math:`\Theta` (estimated as a distance travelled by SGD).
    d : int
        Number of model parameters.
    n_total : int
        :math:`N`, samples over the whole horizon.
    m_fresh : int
        :math:`M - M_{hist} \ge 1`.
    """
    args = {"loss_bound": loss_bound, "grad_bound": grad_bound, "diameter": diameter, "d": d,
            "n_total": n_total, "m_fresh": m_fresh}
    arrs = {}
    for name, value in args.items():
        arrs[name] = _values(name, value, positive=name in ("grad_bound", "diameter", "n_total", "m_fresh"))
    if np.any(arrs["m_fresh"] != np.round(arrs["m_fresh"])):
        raise ValueError(f"m_fresh must be a positive integer (number of fresh clients), got {m_fresh!r}.")
    out = (arrs["loss_bound"] + np.sqrt(arrs["d"] / arrs["n_total"])) / (
        arrs["grad_bound"] * arrs["diameter"] * np.sqrt(arrs["m_fresh"]))
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------------------ the published values

def ratio_spread(loss_bound: float, grad_bound: float, diameter: float, d: float, n_total: float, m_fresh: int,
                 rounding: float = 0.05) -> float:
    r"""How far (G.839) moves when :math:`B, G, D` move by ``rounding`` (Table 4.1 prints them with one decimal).

    The ratio grows with :math:`B` and falls with :math:`G` and :math:`D`, so its extremes over the box
    :math:`[B \pm r] \times [G \pm r] \times [D \pm r]` are two of its corners; returns the larger distance from
    :func:`estimate_ratio` at the printed values to either corner.

    >>> round(ratio_spread(2.3, 5.5, 1.0, 3_353_034, 50_000, 25), 4)
    0.0257
    """
    rounding = check_real("rounding", rounding, low=0)
    loss_bound, d = check_real("loss_bound", loss_bound, low=0), check_real("d", d, low=0)
    n_total, m_fresh = check_real("n_total", n_total, low=0, low_open=True), check_int("m_fresh", m_fresh, low=1)
    for name, value in (("grad_bound", grad_bound), ("diameter", diameter)):
        if check_real(name, value, low=0, low_open=True) <= rounding:
            raise ValueError(f"{name} must exceed rounding={rounding} (the ratio's corner divides by "
                             f"{name} - rounding), got {value!r}.")
    est = estimate_ratio(loss_bound, grad_bound, diameter, d, n_total, m_fresh)
    high = estimate_ratio(loss_bound + rounding, grad_bound - rounding, diameter - rounding, d, n_total, m_fresh)
    low = estimate_ratio(max(loss_bound - rounding, 0.0), grad_bound + rounding, diameter + rounding, d, n_total,
                         m_fresh)
    return float(max(high - est, est - low))


def table_4_1_check(tolerance: float = 0.005) -> list[dict]:
    r"""Recompute the published :math:`\hat c_2/\hat c_1` and :math:`\hat p^*_{hist}` from Table 4.1.

    For each data set and historical fraction :math:`h`: the estimator (G.839) on Table 4.1's constants,
    the reported ratio, and :math:`p^*_{hist}` from the closed form at the *reported* ratio (equal-size
    groups, :math:`h` taken as the fraction; for FEMNIST/Shakespeare the fraction is really
    :math:`M_{hist}/M`, so the mapping is only indicative there).

    Returns
    -------
    list of dict
        Rows ``{"dataset", "h", "m_fresh", "ratio_formula", "ratio_reported", "ratio_match",
        "p_hist_from_reported", "p_hist_reported", "p_hist_match"}`` (match: within ``tolerance`` after
        the reported two decimals; ratios: within one unit of the reported third decimal, 0.001).
    """
    tolerance = check_real("tolerance", tolerance, low=0)
    rows = []
    for name, c in TABLE_4_1.items():
        for h, m_fresh in c["m_fresh"].items():
            formula = estimate_ratio(c["B"], c["G"], c["D"], c["d"], c["N"], m_fresh)
            reported = REPORTED_RATIOS[name][h]
            p_rep = REPORTED_P_HIST[name][h]
            p_calc = optimal_p_hist(reported, h, m_fresh)
            rows.append({"dataset": name, "h": h, "m_fresh": m_fresh, "ratio_formula": formula,
                         "ratio_reported": reported,
                         "ratio_match": bool(abs(formula - reported) < 1e-3),
                         "p_hist_from_reported": p_calc, "p_hist_reported": p_rep,
                         "p_hist_match": bool(abs(p_calc - p_rep) <= tolerance + 1e-12)})
    return rows
