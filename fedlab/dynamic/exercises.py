r"""Exercises of notebook 08 (dynamic federated learning, Rizk, Vlaski and Sayed), each with a checker
(:mod:`fedlab.exercises`).

- 8.1 *compute*: the participation factor :math:`\tau_\epsilon` (27) of the notebook's set-up;
- 8.2 *compute*: the steady-state MSD of the approximate bound (C.4);
- 8.3 *implement*: the minibatch factor :math:`\tau_{s,k}` (27);
- 8.4 *predict*: where the measured MSD is smallest over the step sizes when the minimiser drifts.

Reference answers come from :mod:`fedlab.dynamic.bounds`.
"""
from __future__ import annotations

from fedlab.dynamic.bounds import dfl_msd_approx, dfl_msd_bound, tau_eps, tau_s
from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise

__all__ = ["EXERCISES"]

# 8.1: K = 20 agents, L = 7 per round (the notebook's set-up)
K_81, L_81 = 20, 7
# 8.2: mu, nu, delta, beta_s^2, sigma_s^2, eps^2, sigma_q^2
BOUND_82 = dict(mu=0.1, strong_nu=1.0, delta=2.0, beta_s2=0.5, sigma_s2=1.0, eps2=0.2, sigma_q2=1e-3)


def _bound(**changes) -> float:
    return float(dfl_msd_bound(**{**BOUND_82, **changes}))


def minibatch_factor(n_samples, batch, local_steps):
    r""":math:`\tau_{s,k} = (N_k-B_k)/((N_k-1)B_kE_k)` (27)."""
    return tau_s(n_samples, batch, local_steps)


def _tau_s_inputs(rng):
    n = int(rng.integers(2, 200))
    return n, int(rng.integers(1, n + 1)), int(rng.integers(1, 11))


def _tau_s_with_replacement(n_samples, batch, local_steps):
    return 1 / (batch * local_steps)


def _tau_s_no_epochs(n_samples, batch, local_steps):
    return (n_samples - batch) / ((n_samples - 1) * batch)


def _tau_s_n_not_n_minus_1(n_samples, batch, local_steps):
    return (n_samples - batch) / (n_samples * batch * local_steps)


EXERCISES = {
    "8.1": NumberExercise(
        "8.1", "The participation factor",
        "tau_eps = (K - L)/(K - 1) (27): the variance of a mean of L agents drawn without replacement out of K, "
        "relative to one agent; 0 under full participation, 1 for L = 1.",
        [Mistake((K_81 - L_81) / K_81, "Sampling without replacement: the finite-population correction divides by "
                                       "K - 1, not K (check: L = 1 must give 1)."),
         Mistake(L_81 / K_81, "L/K is the participation rate; tau_eps measures the agents left out, (K - L)/(K - 1)."),
         Mistake((L_81 - 1) / (K_81 - 1), "That is 1 - tau_eps: tau_eps must vanish under full participation L = K.")],
        answer=tau_eps(K_81, L_81), rtol=2e-3),
    "8.2": NumberExercise(
        "8.2", "The steady state of the approximate bound",
        "MSD_inf = (mu^2 (sigma_s^2 + eps^2) + sigma_q^2) / (2 mu nu - mu^2 (delta^2 + beta_s^2)) (spec C.4, from the "
        "recursion with Lemma 1's constants).",
        [Mistake(float(dfl_msd_approx(0.1, 1.0, 1.0, 0.2, 1e-3)), "That is the small-mu form mu a/(2 nu) + "
                                                                  "sigma_q^2/(2 nu mu): keep mu^2 (delta^2 + beta_s^2) "
                                                                  "in the denominator."),
         Mistake(_bound(beta_s2=0.0), "The denominator has delta^2 + beta_s^2: the minibatch and participation "
                                      "noise (Lemma 1) also slow the contraction."),
         Mistake(_bound(eps2=0.0), "The O(mu) noise is sigma_s^2 + eps^2: the model variability eps^2 of partial "
                                   "participation adds to the data variability."),
         Mistake(float(BOUND_82["sigma_q2"] / (2 * 0.1 * 1.0)), "That is the tracking term alone; add the data and "
                                                                 "model terms mu^2 (sigma_s^2 + eps^2) over the same "
                                                                 "denominator.")],
        answer=_bound(), rtol=2e-3),
    "8.3": FunctionExercise(
        "8.3", "The minibatch factor",
        "tau_s,k (27) is the variance of a minibatch mean of B_k draws without replacement out of N_k points, relative "
        "to the population variance, divided by the E_k independent epochs: (N_k - B_k)/((N_k - 1) B_k E_k).",
        [Mistake(_tau_s_with_replacement, "Draws without replacement: multiply 1/(B E) by the finite-population "
                                          "correction (N - B)/(N - 1), which is 0 for a full batch."),
         Mistake(_tau_s_no_epochs, "The E_k epochs average independent minibatch gradients: divide by E_k too."),
         Mistake(_tau_s_n_not_n_minus_1, "The finite-population correction is (N - B)/(N - 1): with B = 1 the factor "
                                         "must be 1/E.")],
        solution=minibatch_factor, make_inputs=_tau_s_inputs),
    "8.4": PredictionExercise(
        "8.4", "The best step size under drift",
        "Theorem 1 (28): O(mu)(sigma_s^2 + eps^2) + O(1/mu) sigma_q^2. With drift the tracking term grows as mu "
        "shrinks and the noise term as mu grows: a U-shape in mu.",
        [Mistake("the smallest step", "That holds without drift, where the MSD is O(mu). With sigma_q^2 > 0 the "
                                      "tracking term sigma_q^2/(2 nu mu) explodes at small steps.")],
        choices=("the smallest step", "a step inside the grid", "the largest step"),
        predicted="a step inside the grid"),
}
