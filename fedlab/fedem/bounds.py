r"""The conditions of FedEM's and D-FedEM's convergence theorems (thesis Theorems 3.5.3 and 3.5.4, App. E.3–E.4).

Both theorems give rates without constants (:math:`O(1/\sqrt K)` for the gradient in :math:`\Theta`); what the
thesis makes explicit is when they apply:

* Theorem 3.5.3 (FedEM), "for :math:`K` large enough": the step size :math:`\eta = a_0/\sqrt K` must satisfy
  Lemma E.4's :math:`J\eta \le \min\{1/(2\sqrt2 L), 1/(4L\beta)\}` with :math:`J` local steps,
  :math:`L` the smoothness constant (Assumption 12) and :math:`\beta` the dissimilarity constant
  (Assumption 14) — :func:`fedem_max_step`; the lemma's statement prints :math:`1/(2\sqrt{2L})`, its proof
  uses :math:`1/(2\sqrt2 L)` (personalization spec §4.3), which we follow;
* Assumption 15 (D-FedEM's mixing): :math:`\mathbb E\|\Xi W_{l,\tau} - \bar\Xi\|_F^2 \le (1-p)
  \|\Xi - \bar\Xi\|_F^2`; for a fixed symmetric doubly stochastic :math:`W` it holds with :math:`\tau = 1` and
  :math:`p = 1 - \mathrm{SLEM}(W)^2` (:func:`mixing_parameter`), since one gossip step contracts the disagreement
  by :math:`\mathrm{SLEM}(W)`;
* Theorem 3.5.4 (D-FedEM): :math:`\eta \le \min\{1/(4L), p/(92\tau L), 1/(4\beta L), p/(32\sqrt2\,\tau\beta)\}`
  (App. E.4) — :func:`dfedem_max_step`.

Examples
--------
>>> round(fedem_max_step(1.0, 1.0, local_steps=10), 4)
0.025
>>> mixing_parameter([[0.5, 0.5], [0.5, 0.5]])   # exact averaging: one step reaches consensus
1.0
>>> round(dfedem_max_step(1.0, 1.0, p=1.0), 5)
0.01087
"""
from __future__ import annotations

import math

import numpy as np

from fedlab._validation import check_array, check_int, check_real
from fedlab.mixing import second_largest_eigenvalue_modulus

__all__ = ["fedem_max_step", "mixing_parameter", "dfedem_max_step"]


def fedem_max_step(L: float, beta: float, local_steps: int) -> float:
    r"""The largest constant step size Theorem 3.5.3 admits: :math:`\frac1J\min\{\frac1{2\sqrt2 L},
    \frac1{4L\beta}\}` (Lemma E.4), with ``L`` > 0 the smoothness constant, ``beta`` >= 0 the dissimilarity
    constant of Assumption 14 and ``local_steps`` = J."""
    L = check_real("L", L, low=0, low_open=True)
    beta = check_real("beta", beta, low=0)
    J = check_int("local_steps", local_steps, low=1)
    return min(1 / (2 * math.sqrt(2) * L), math.inf if beta == 0 else 1 / (4 * L * beta)) / J


def mixing_parameter(W) -> float:
    r""":math:`p` of Assumption 15 for a fixed symmetric doubly stochastic mixing matrix ``W`` (:math:`\tau = 1`):
    :math:`1 - \mathrm{SLEM}(W)^2`, in [0, 1]; 0 when ``W`` does not contract the disagreement (a disconnected
    graph)."""
    W = check_array("W", W, ndim=2)
    if W.shape[0] != W.shape[1] or not np.allclose(W, W.T, atol=1e-9):
        raise ValueError(f"W must be a symmetric square matrix, got shape {W.shape}.")
    if np.any(W < -1e-12) or not np.allclose(W.sum(1), 1.0, atol=1e-6):
        raise ValueError("W must be doubly stochastic (non-negative, rows and columns summing to 1).")
    return float(max(0.0, 1.0 - second_largest_eigenvalue_modulus(W) ** 2))


def dfedem_max_step(L: float, beta: float, p: float, tau: int = 1) -> float:
    r"""The largest constant step size Theorem 3.5.4 admits (App. E.4): :math:`\min\{\frac1{4L},
    \frac{p}{92\tau L}, \frac1{4\beta L}, \frac{p}{32\sqrt2\,\tau\beta}\}`, with ``p`` in (0, 1] and ``tau`` of
    Assumption 15 (:func:`mixing_parameter`)."""
    L = check_real("L", L, low=0, low_open=True)
    beta = check_real("beta", beta, low=0)
    p = check_real("p", p, low=0, high=1, low_open=True)
    tau = check_int("tau", tau, low=1)
    terms = [1 / (4 * L), p / (92 * tau * L)]
    if beta > 0:
        terms += [1 / (4 * beta * L), p / (32 * math.sqrt(2) * tau * beta)]
    return min(terms)
