r"""Generalization bound of kNN-Per (thesis Theorem 3.6.1, eq. (3.38); proof in appendix F).

Binary labels, :math:`k = 1`, Euclidean distance, under Assumptions 18–21. For client :math:`t` with
:math:`n_t` local samples, :math:`n = \sum_t n_t`, representation dimension :math:`p`, VC dimension
:math:`d_{\mathcal H}`, label discrepancy
:math:`\mathrm{disc} = \mathrm{disc}_{\mathcal H}(\bar{\mathcal D}, \mathcal D_t)` (3.37) and
:math:`L^\star = \mathcal L_{\mathcal D_t}(h^\star_t)`:

.. math::
    B(\lambda) = (1+\lambda) L^\star + c_1(1-\lambda)\,\mathrm{disc}
        + c_2\lambda\,\rho(n_t,p)\,(\mathrm{disc}+1)
        + c_3(1-\lambda)\,E + c_5\lambda\,E\,\rho(n_t,p),                              \quad (3.38)

with the 1-NN rate :math:`\rho(n_t, p) = \sqrt p\, n_t^{-1/(p+1)}` and
:math:`E = \sqrt{d_{\mathcal H}/n}\,\sqrt{c_4 + \log(n/d_{\mathcal H})}`.

Corrections (personalization spec §7.4, §12.3): the printed :math:`\sqrt p/(p+1/\sqrt{n_t})` is a broken
rendering of :math:`\sqrt p/\sqrt[p+1]{n_t}` ((F.653)–(F.654), [SB14, Thm 19.3]); the appendix restatement
(F.631) moves the "+1" between the :math:`c_1` and :math:`c_2` terms, but (F.637) supports the main-text
form used here; :math:`n = \sum_{t=1}^T n_t` (not :math:`\sum_{t=1}^M`). Constants from (F.637) and
Lemma F.1: :math:`c_1 = 2`, :math:`c_2 = \max(12\gamma_2, 6\gamma_1)`, :math:`c_3 = \delta_1`,
:math:`c_4 = \delta_2`, :math:`c_5 = 6\gamma_2\delta_1`, with :math:`\delta_1 = 4`,
:math:`\delta_2 = \max(4/\sqrt{d_{\mathcal H}}, 1)`.

:math:`B` is affine in :math:`\lambda`: :math:`B(\lambda) = B(0) + \lambda s`, so it is minimised at an
endpoint, and :math:`\lambda = 1` is preferred exactly when :math:`\rho(n_t,p) < r^\star`, i.e. when
:math:`n_t > n_t^\star = (\sqrt p / r^\star)^{p+1}` (:func:`lambda_preference_threshold`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_real

__all__ = [
    "KNNBoundConstants",
    "knn_bound_constants",
    "knn_rate",
    "estimation_term",
    "theorem_3_6_1",
    "bound_intercept_slope",
    "lambda_preference_threshold",
    "best_lambda",
]


@dataclass(frozen=True)
class KNNBoundConstants:
    """The constants :math:`c_1..c_5` of Theorem 3.6.1 (from (F.637) and Lemma F.1)."""

    c1: float
    c2: float
    c3: float
    c4: float
    c5: float


def knn_bound_constants(gamma1: float, gamma2: float, d_H: float, *, delta1: float = 4.0,
                        delta2: float | None = None) -> KNNBoundConstants:
    r"""Constants of (3.38): :math:`c_1 = 2`, :math:`c_2 = \max(12\gamma_2, 6\gamma_1)`, :math:`c_3 = \delta_1`,
    :math:`c_4 = \delta_2`, :math:`c_5 = 6\gamma_2\delta_1`.

    Parameters
    ----------
    gamma1, gamma2 : float > 0
        Constants of the representation assumption (Assumption 21, eq. (3.36)).
    d_H : float >= 1
        VC dimension of the hypothesis class.
    delta1 : float > 0
        Lemma F.1 constant (default 4).
    delta2 : float > 0, optional
        Lemma F.1 constant; default :math:`\max(4/\sqrt{d_{\mathcal H}}, 1)`.
    """
    gamma1 = check_real("gamma1", gamma1, low=0, low_open=True)
    gamma2 = check_real("gamma2", gamma2, low=0, low_open=True)
    d_H = check_real("d_H", d_H, low=1)
    delta1 = check_real("delta1", delta1, low=0, low_open=True)
    delta2 = max(4.0 / np.sqrt(d_H), 1.0) if delta2 is None else check_real("delta2", delta2, low=0, low_open=True)
    return KNNBoundConstants(2.0, max(12 * gamma2, 6 * gamma1), delta1, delta2, 6 * gamma2 * delta1)


def _positive_array(name: str, value, low: float = 0.0, low_open: bool = True) -> np.ndarray:
    arr = check_array(name, value)
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one number, got {value!r}.")
    bad = arr <= low if low_open else arr < low
    if np.any(bad):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got minimum {arr.min()}.")
    return arr


def knn_rate(n_t, p) -> np.ndarray | float:
    r"""1-NN rate :math:`\rho(n_t, p) = \sqrt p\; n_t^{-1/(p+1)}` ([SB14, Thm 19.3]; (F.653)–(F.654)).

    Parameters
    ----------
    n_t : float or array, >= 1
        Local dataset (datastore) size.
    p : float or array, >= 1
        Representation dimension.
    """
    n_t = _positive_array("n_t", n_t, low=1, low_open=False)
    p = _positive_array("p", p, low=1, low_open=False)
    out = np.sqrt(p) * np.exp(-np.log(n_t) / (p + 1))
    return float(out) if out.ndim == 0 else out


def estimation_term(n: float, d_H: float, c4: float) -> float:
    r"""Estimation term :math:`E = \sqrt{d_{\mathcal H}/n}\,\sqrt{c_4 + \log(n/d_{\mathcal H})}` (Lemma F.1).

    Needs :math:`n > d_{\mathcal H}`.
    """
    d_H = check_real("d_H", d_H, low=1)
    n = check_real("n", n, low=d_H, low_open=True)
    c4 = check_real("c4", c4, low=0, low_open=True)
    return float(np.sqrt(d_H / n) * np.sqrt(c4 + np.log(n / d_H)))


def _check_common(L_star, disc, n, d_H, gamma1, gamma2, delta1, delta2):
    L_star = check_real("L_star", L_star, low=0, high=1)
    disc = check_real("disc", disc, low=0, high=1)
    c = knn_bound_constants(gamma1, gamma2, d_H, delta1=delta1, delta2=delta2)
    return L_star, disc, c, estimation_term(n, d_H, c.c4)


def bound_intercept_slope(L_star: float, disc: float, n_t, n: float, p, d_H: float, gamma1: float, gamma2: float,
                          *, delta1: float = 4.0, delta2: float | None = None):
    r"""Intercept :math:`B(0)` and slope :math:`s` of the affine bound :math:`B(\lambda) = B(0) + \lambda s`.

    .. math::
        B(0) = L^\star + c_1\,\mathrm{disc} + c_3 E, \qquad
        s = L^\star - c_1\,\mathrm{disc} + c_2\,\rho\,(\mathrm{disc}+1) - c_3 E + c_5 E \rho.

    ``n_t`` and ``p`` may be arrays (broadcast together); returns ``(B0, s)`` (floats or arrays).
    """
    L_star, disc, c, e = _check_common(L_star, disc, n, d_H, gamma1, gamma2, delta1, delta2)
    rho = np.asarray(knn_rate(n_t, p), dtype=float)
    b0 = L_star + c.c1 * disc + c.c3 * e
    s = L_star - c.c1 * disc + c.c2 * rho * (disc + 1) - c.c3 * e + c.c5 * e * rho
    b0_out = np.broadcast_to(np.asarray(b0, float), rho.shape)
    if rho.ndim == 0:
        return float(b0), float(s)
    return b0_out.copy(), s


def theorem_3_6_1(lam, L_star: float, disc: float, n_t, n: float, p, d_H: float, gamma1: float, gamma2: float,
                  *, delta1: float = 4.0, delta2: float | None = None):
    r"""Right-hand side of Theorem 3.6.1 (eq. (3.38), corrected form; see the module docstring).

    Parameters
    ----------
    lam : float or array in [0, 1]
        Interpolation weight :math:`\lambda_t` (the theorem states (0, 1); the endpoints are its
        special cases: :math:`\lambda = 0` is the global-model bound [Man+20], :math:`\lambda = 1` the
        1-NN bound [SB14, Thm 19.3]).
    L_star : float in [0, 1]
        :math:`\mathcal L_{\mathcal D_t}(h^\star_t)`, the best loss in the class on client t.
    disc : float in [0, 1]
        Label discrepancy :math:`\mathrm{disc}_{\mathcal H}(\bar{\mathcal D}, \mathcal D_t)` (3.37).
    n_t : float or array >= 1
        Local dataset size.
    n : float > d_H
        Total number of samples :math:`\sum_t n_t`.
    p : float or array >= 1
        Representation dimension.
    d_H : float >= 1
        VC dimension.
    gamma1, gamma2 : float > 0
        Assumption 21 constants.
    delta1, delta2 :
        Lemma F.1 constants (see :func:`knn_bound_constants`).

    Returns
    -------
    float or np.ndarray
        Broadcast over ``lam``, ``n_t`` and ``p``.

    Examples
    --------
    >>> round(float(theorem_3_6_1(0.5, 0.1, 0.2, 100, 10000, 16, 10, 1.0, 1.0)), 3)
    25.806
    """
    lam_arr = check_array("lam", lam)
    if lam_arr.size == 0 or np.any((lam_arr < 0) | (lam_arr > 1)):
        raise ValueError(f"lam must lie in [0, 1], got {lam!r}.")
    b0, s = bound_intercept_slope(L_star, disc, n_t, n, p, d_H, gamma1, gamma2, delta1=delta1, delta2=delta2)
    out = np.asarray(b0) + lam_arr * np.asarray(s)
    return float(out) if out.ndim == 0 else out


def lambda_preference_threshold(L_star: float, disc: float, n: float, p: float, d_H: float, gamma1: float,
                                gamma2: float, *, delta1: float = 4.0, delta2: float | None = None) -> float:
    r"""Local size :math:`n_t^\star` above which the bound prefers the kNN model (:math:`\lambda = 1`).

    With :math:`r^\star = (c_1\,\mathrm{disc} + c_3 E - L^\star)/(c_2(\mathrm{disc}+1) + c_5 E)`,
    the slope is negative iff :math:`\rho(n_t, p) < r^\star`, i.e.
    :math:`n_t > n_t^\star = (\sqrt p/r^\star)^{p+1}`. Returns ``inf`` when :math:`r^\star \le 0` (the
    global model is always preferred) or when the threshold overflows (large ``p``: the 1-NN rate is
    cursed by dimension, so the bound is vacuous), and ``1.0`` when every :math:`n_t \ge 1` qualifies.
    """
    L_star, disc, c, e = _check_common(L_star, disc, n, d_H, gamma1, gamma2, delta1, delta2)
    p = check_real("p", p, low=1)
    r_star = (c.c1 * disc + c.c3 * e - L_star) / (c.c2 * (disc + 1) + c.c5 * e)
    if r_star <= 0:
        return float("inf")
    log_thr = (p + 1) * (0.5 * np.log(p) - np.log(r_star))
    if log_thr > 700:
        return float("inf")
    return float(max(np.exp(log_thr), 1.0))


def best_lambda(L_star: float, disc: float, n_t, n: float, p, d_H: float, gamma1: float, gamma2: float,
                **kwargs):
    """The minimiser of the (affine) bound over [0, 1]: 1.0 if the slope is negative, else 0.0."""
    _, s = bound_intercept_slope(L_star, disc, n_t, n, p, d_H, gamma1, gamma2, **kwargs)
    out = np.where(np.asarray(s) < 0, 1.0, 0.0)
    return float(out) if out.ndim == 0 else out
