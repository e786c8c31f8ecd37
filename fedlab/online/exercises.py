r"""Exercises of notebook 06 (online FL with mixture models, FEM-OMD, thesis §4.4), each with a checker
(:mod:`fedlab.exercises`).

- 6.1 *compute*: the horizon :math:`T^\times` where the two terms of the regret bound (4.42) are equal;
- 6.2 *compute*: the late-regret ratio :math:`\rho` of a :math:`\sqrt t` regret (the linear/sub-linear rule);
- 6.3 *implement*: the entropic mirror-descent step on the mixture weights (4.40)-(4.41);
- 6.4 *predict*: which number of samples per step :math:`n` gives the smallest regret in Fig. 4.9 (left).

Reference answers come from :mod:`fedlab.online.bounds`, :mod:`fedlab.online.algorithms` and
:mod:`fedlab.online.experiments`.
"""
from __future__ import annotations

import math

import numpy as np

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.online.algorithms import omd_step
from fedlab.online.bounds import regret_crossover_horizon
from fedlab.online.experiments import late_regret_ratio

__all__ = ["EXERCISES"]

# 6.1: n = 100 samples per step, m = 5 components, unit constants and D_X = 2
N_61, M_61 = 100, 5


def sqrt_regret_ratio(horizon: int = 400) -> float:
    r""":math:`\rho` (``late_regret_ratio``) of the regret curve :math:`R_t = \sqrt t`."""
    return late_regret_ratio(np.sqrt(np.arange(1, horizon + 1)))


def omd_weights(pi, grad, eta):
    r"""One entropic OMD step in probability space: :math:`\pi' \propto \pi\,e^{-\eta\hat\nabla}` (4.40)-(4.41)."""
    return np.exp(omd_step(np.log(pi), grad, eta))


def _omd_inputs(rng):
    m = int(rng.integers(2, 7))
    return rng.dirichlet(np.full(m, 2.0)), rng.normal(scale=2.0, size=m), float(rng.uniform(0.05, 1.0))


def _omd_ascent(pi, grad, eta):
    w = pi * np.exp(eta * grad)
    return w / w.sum()


def _omd_unnormalised(pi, grad, eta):
    return pi * np.exp(-eta * grad)


def _omd_forgets_pi(pi, grad, eta):
    w = np.exp(-eta * grad)
    return w / w.sum()


_LOG_M = math.log(M_61)

EXERCISES = {
    "6.1": NumberExercise(
        "6.1", "When does the gradient error dominate the regret bound?",
        "Set the two terms of (4.42), c_omd G sqrt(T log m) and D_X c_err T / sqrt(n), equal (unit constants, "
        "D_X = 2, the l1 diameter of the simplex) and solve for T.",
        [Mistake(N_61 * _LOG_M, "You dropped D_X = 2, the l1 diameter of the simplex in (4.42): the error term is "
                               "2 T / sqrt(n)."),
         Mistake(math.sqrt(N_61 * _LOG_M) / 2, "Solve sqrt(T log m) = 2 T / sqrt(n) for T itself: square both "
                                              "sides, T = n log m / 4, not sqrt(T)."),
         Mistake(N_61 * math.log10(M_61) / 4, "log m in (4.42) is the natural logarithm (D_R = sqrt(log m), "
                                              "Lemma H.4).")],
        answer=regret_crossover_horizon(M_61, N_61), rtol=5e-3),
    "6.2": NumberExercise(
        "6.2", "The late-regret ratio of a sqrt(t) regret",
        "rho = (per-step regret over the last quarter (3T/4, T]) / (per-step regret over the second quarter "
        "(T/4, T/2]); with R_t = sqrt(t) the windows have the same length, so rho is a ratio of increments of R.",
        [Mistake((7 / 3) ** -0.5, "That is the ratio of the derivatives at the windows' midpoints (7T/8 and 3T/8), "
                                  "an approximation: compute the increments R_T - R_{3T/4} and R_{T/2} - R_{T/4} "
                                  "exactly."),
         Mistake(1 / sqrt_regret_ratio(), "Upside down: the late window (3T/4, T] goes in the numerator."),
         Mistake(1.0, "rho = 1 is a linear regret; a sqrt(t) regret slows down, so its late per-step regret is "
                      "smaller."),
         Mistake((1 - math.sqrt(0.75)) / math.sqrt(0.25), "The early window is the second quarter (T/4, T/2], not "
                                                          "the first.")],
        answer=sqrt_regret_ratio(), rtol=2e-3),
    "6.3": FunctionExercise(
        "6.3", "The mirror-descent step on the mixture weights",
        "With the negative entropy as regulariser (4.40) the OMD step (4.41) is multiplicative: "
        "pi'_j proportional to pi_j exp(-eta grad_j), then normalised to the simplex.",
        [Mistake(_omd_ascent, "Sign: mirror descent moves against the gradient, exp(-eta grad_j)."),
         Mistake(_omd_unnormalised, "The weights must stay on the simplex: divide by sum_l pi_l exp(-eta grad_l)."),
         Mistake(_omd_forgets_pi, "The step starts from the current weights: multiply pi_j by exp(-eta grad_j), "
                                  "do not replace them.")],
        solution=omd_weights, make_inputs=_omd_inputs),
    "6.4": PredictionExercise(
        "6.4", "More samples per step, less regret?",
        "The gradient error of FEM-OMD is O(1/sqrt(n)) (Thm 4.4.5), so the linear term of (4.42) is "
        "2 T / sqrt(n): it shrinks as n grows.",
        [Mistake("n = 10", "At n = 10 with K = 3 batches the sample-splitting EM sees 3 samples per batch: it is "
                           "biased (section 7), and n = 30 has the smaller gradient error.")],
        choices=("n = 1", "n = 10", "n = 30"), predicted="n = 30"),
}
