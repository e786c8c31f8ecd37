r"""Exercises of notebook 04 (kNN-Per), each checking the reader's answer (see :mod:`fedlab.exercises`).

- 4.1 (compute): kNN-Per's prediction for one input, from three neighbours and the global model, (3.32)-(3.33);
- 4.2 (implement): the same interpolation for a batch of inputs;
- 4.3 (compute): the local size $n_t^\star$ above which the bound (3.38) prefers the kNN endpoint;
- 4.4 (predict): which datastore recovers faster after a distribution shift, FIFO or concatenation (Fig. 3.13).

The reference answers are computed with the package's own functions (``knn_proba``, ``kernel_weights``,
``interpolate``, ``knn_rate``).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.knnper.algorithms import interpolate, kernel_weights, knn_proba
from fedlab.knnper.bounds import knn_rate

__all__ = ["EXERCISES"]

# Exercise 4.1: three neighbours (distances, labels), the global model's prediction, sigma and lambda
DISTANCES, LABELS = np.array([0.2, 0.9, 1.5]), np.array([0, 1, 1])
P_GLOBAL, SIGMA, LAM = np.array([0.7, 0.3]), 1.0, 0.6
# Exercise 4.3: the representation dimension and the rate r* below which the slope of (3.38) is negative
DIM, R_STAR = 16, 2.0


def _class1(weights: np.ndarray, lam: float = LAM) -> float:
    """The interpolated probability of class 1 with the given neighbour weights."""
    p_knn = float(weights[LABELS == 1].sum())
    return lam * p_knn + (1 - lam) * float(P_GLOBAL[1])


def _reference_class1() -> float:
    keys = DISTANCES[:, None]                       # 1-d keys at these distances from the query 0
    p_knn = knn_proba(np.zeros((1, 1)), keys, LABELS, k=3, n_classes=2, sigma=SIGMA)
    return float(interpolate(p_knn, P_GLOBAL[None], LAM)[0, 1])


def knn_per_proba(dist: np.ndarray, labels: np.ndarray, p_global: np.ndarray, lam: float, sigma: float) -> np.ndarray:
    """kNN-Per's prediction (3.33) for n inputs from their k neighbours' distances and labels (n, k)."""
    w = kernel_weights(dist, sigma=sigma)
    p_knn = np.zeros_like(p_global)
    np.add.at(p_knn, (np.repeat(np.arange(len(dist)), dist.shape[1]), labels.ravel()), w.ravel())
    return interpolate(p_knn, p_global, lam)


def _knn_inputs(rng: np.random.Generator) -> tuple:
    n, k, c = int(rng.integers(1, 6)), int(rng.integers(2, 8)), int(rng.integers(2, 6))
    dist = np.sort(rng.uniform(0.0, 3.0, size=(n, k)), axis=1)
    return (dist, rng.integers(0, c, size=(n, k)), rng.dirichlet(np.ones(c), size=n),
            float(rng.uniform(0.1, 0.9)), float(10 ** rng.uniform(-0.5, 0.5)))


def _variant(dist, labels, p_global, lam, sigma, *, weights=None, swap=False):
    w = np.exp(-dist / sigma) if weights is None else weights(dist, sigma)
    w = w / w.sum(axis=1, keepdims=True)
    p_knn = np.zeros_like(p_global)
    for i in range(len(dist)):
        np.add.at(p_knn[i], labels[i], w[i])
    return (1 - lam) * p_knn + lam * p_global if swap else lam * p_knn + (1 - lam) * p_global


def _majority(dist, labels, p_global, lam, sigma):
    return _variant(dist, labels, p_global, lam, sigma, weights=lambda d, s: np.ones_like(d))


def _swapped(dist, labels, p_global, lam, sigma):
    return _variant(dist, labels, p_global, lam, sigma, swap=True)


def _plus_sign(dist, labels, p_global, lam, sigma):
    return _variant(dist, labels, p_global, lam, sigma, weights=lambda d, s: np.exp(d / s))


def _squared(dist, labels, p_global, lam, sigma):
    return _variant(dist, labels, p_global, lam, sigma, weights=lambda d, s: np.exp(-d ** 2 / s))


def _threshold() -> float:
    """n_t* where the 1-NN rate rho(n_t, p) reaches r* (root of knn_rate, on a log scale)."""
    return float(np.exp(brentq(lambda log_n: knn_rate(np.exp(log_n), DIM) - R_STAR, 0.0, 200.0, xtol=1e-12)))


_W = np.exp(-DISTANCES / SIGMA)
_KERNEL_HINT = ("The thesis' kernel (3.32) is $\\exp(-d/\\sigma)$ on the distance itself; the reference code's "
                "$\\exp(-d^2/(p\\sigma))$ is another kernel (Exercise 4.5).")

EXERCISES = {
    "4.1": NumberExercise(
        "4.1", "kNN-Per's prediction for one input",
        "Eq. (3.32): the kNN estimate weighs each neighbour by $\\exp(-d/\\sigma)$, normalised over the $k$ "
        "neighbours, and sums the weights per label; eq. (3.33) mixes it with the global model: "
        "$\\lambda p_{kNN} + (1-\\lambda) p_{global}$.",
        [Mistake(_class1(np.full(3, 1 / 3)), "The neighbours are not equal: (3.32) weighs each by "
                                             "$\\exp(-d/\\sigma)$, so the nearest one (label 0) counts most."),
         Mistake(_class1(_W / _W.sum(), lam=1 - LAM), "$\\lambda$ is the weight of the kNN estimate and "
                                                      "$1-\\lambda$ that of the global model (3.33)."),
         Mistake(_class1(np.exp(DISTANCES) / np.exp(DISTANCES).sum()), "Sign error: the kernel $\\exp(-d/\\sigma)$ "
                                                                       "decreases with the distance."),
         Mistake(_class1(_W), "Normalise the kernel weights over the $k$ neighbours: $p_{kNN}$ is a probability "
                              "vector."),
         Mistake(_class1(np.exp(-DISTANCES ** 2) / np.exp(-DISTANCES ** 2).sum()), _KERNEL_HINT)],
        answer=_reference_class1(), rtol=2e-3),
    "4.2": FunctionExercise(
        "4.2", "The kNN interpolation",
        "For each input: weights $\\exp(-d_j/\\sigma)$ normalised over its $k$ neighbours (3.32), summed per label "
        "into $p_{kNN}$, then $\\lambda p_{kNN} + (1-\\lambda) p_{global}$ (3.33).",
        [Mistake(_majority, "Weigh the neighbours by the kernel $\\exp(-d/\\sigma)$, not equally: an unweighted vote "
                            "is the $\\sigma \\to \\infty$ limit."),
         Mistake(_swapped, "$\\lambda$ weighs the kNN estimate, $1-\\lambda$ the global model (3.33)."),
         Mistake(_plus_sign, "Sign error: the kernel $\\exp(-d/\\sigma)$ decreases with the distance."),
         Mistake(_squared, _KERNEL_HINT)],
        solution=knn_per_proba, make_inputs=_knn_inputs),
    "4.3": NumberExercise(
        "4.3", "How much local data before the kNN endpoint wins?",
        "The slope of (3.38) in $\\lambda$ is negative iff the 1-NN rate $\\rho(n_t, p) = \\sqrt p\\,n_t^{-1/(p+1)}$ "
        "is below $r^\\star$ (section 11); solve $\\rho(n_t, p) = r^\\star$ for $n_t$.",
        [Mistake((np.sqrt(DIM) / R_STAR) ** DIM, "The exponent of the 1-NN rate is $-1/(p+1)$, so invert it with "
                                                  "the power $p+1$."),
         Mistake((np.sqrt(DIM) / R_STAR) ** (1 / (DIM + 1)), "Solve for $n_t$: $n_t^{1/(p+1)} = \\sqrt p/r^\\star$ "
                                                              "gives $n_t = (\\sqrt p/r^\\star)^{p+1}$."),
         Mistake((DIM / R_STAR) ** (DIM + 1), "The rate has $\\sqrt p$ in front, not $p$."),
         Mistake(1.0, "Without the factor $\\sqrt p$ the rate is below $r^\\star$ for every $n_t$; keep it: in "
                      "dimension $p$ the 1-NN rate starts at $\\sqrt p$.")],
        answer=_threshold(), rtol=2e-3),
    "4.4": PredictionExercise(
        "4.4", "FIFO or concatenation after a distribution shift",
        "Fig. 3.13: after the shift, the datastore holds old entries that now mislead the kNN vote; what matters is "
        "how fast the new data outweigh them.",
        [Mistake("concatenate", "Concatenation keeps every old entry, so the stale neighbours keep voting until the "
                                "new data outnumber them; FIFO evicts them as new batches arrive."),
         Mistake("the same", "The two policies differ exactly in the old entries: FIFO evicts them, concatenation "
                             "keeps them, and they vote against the new distribution.")],
        choices=("FIFO", "concatenate", "the same"), predicted="FIFO"),
}
"""The chapter's exercises by label."""
