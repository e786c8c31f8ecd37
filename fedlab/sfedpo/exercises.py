r"""Exercises of notebook 07 (SFedPO: streaming FL with a prediction oracle), each with a checker
(:mod:`fedlab.exercises`).

- 7.1 *compute*: the staleness :math:`\gamma_n` of Theorem 1 (7), and the erratum of (79);
- 7.2 *compute*: a DDS sampling ratio, score (10) then Algorithm 2;
- 7.3 *implement*: the shift-aware aggregation weights SAW (14);
- 7.4 *predict*: which method of the simulation has the smallest Theorem 1 bound.

Reference answers come from :mod:`fedlab.sfedpo.bounds` and :mod:`fedlab.sfedpo.strategies`.
"""
from __future__ import annotations

import numpy as np

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.sfedpo.bounds import sfedpo_gamma
from fedlab.sfedpo.strategies import dds_alpha, dds_scores, saw_weights

__all__ = ["EXERCISES"]

# 7.1: budget alpha_n = 0.2, T = 10 time steps per round
ALPHA_71, T_71 = 0.2, 10
# 7.2: two states, forecast (0.8, 0.2), w = (0.5, 0.5), d = 0, a1 = 0.1, b1 = 0.2, budget 0.25
PI_72, W_72, D_72, ALPHA_72 = np.array([0.8, 0.2]), np.array([0.5, 0.5]), np.zeros(2), 0.25


def rare_state_ratio(variant: str = "eq10", pi=PI_72) -> float:
    """DDS sampling ratio of the second (rare) state: scores (10), then Algorithm 2."""
    scores = dds_scores(W_72, D_72, pi, ALPHA_72, 0.1, 0.2, variant=variant)
    return float(dds_alpha(scores, pi, ALPHA_72)[1])


def _forgets_pi() -> float:
    scores = dds_scores(W_72, D_72, PI_72, ALPHA_72, 0.1, 0.2)
    return float(ALPHA_72 * scores[1] / scores.sum())


def saw(q, s, a2, b2):
    r"""SAW (14): :math:`p_n \propto \mathrm{ReLU}(1/q_n - a_2 s_n + b_2)`, normalised."""
    return saw_weights(q, s, a2=a2, b2=b2)


def _saw_inputs(rng):
    n = int(rng.integers(2, 9))
    s = rng.uniform(0, 6, size=n)
    s[rng.integers(n)] = 0.0  # one client with a positive score: the weights never fall back to uniform
    return rng.uniform(0.1, 1.0, size=n), s, float(rng.uniform(0.5, 2.0)), float(rng.uniform(0.0, 1.0))


def _saw_q(q, s, a2, b2):
    psi = np.maximum(q - a2 * s + b2, 0.0)
    return psi / psi.sum()


def _saw_no_relu(q, s, a2, b2):
    psi = 1 / q - a2 * s + b2
    return psi / psi.sum()


def _saw_unnormalised(q, s, a2, b2):
    return np.maximum(1 / q - a2 * s + b2, 0.0)


EXERCISES = {
    "7.1": NumberExercise(
        "7.1", "The staleness gamma_n",
        "gamma_n = (1/T) sum_{t=1}^T (1 - alpha_n)^t (7): a geometric sum from t = 1 to T, divided by T.",
        [Mistake(T_71 * sfedpo_gamma(ALPHA_71, T_71), "That is the sum without the 1/T: (79) drops it, but "
                                                       "Theorem 1 uses (7), an average over the T steps."),
         Mistake(sfedpo_gamma(ALPHA_71, T_71) / (1 - ALPHA_71), "The sum starts at t = 1: the first term is "
                                                                 "(1 - alpha_n), not 1."),
         Mistake((1 - ALPHA_71) ** T_71, "(1 - alpha_n)^T is only the last term: gamma_n averages the T terms.")],
        answer=sfedpo_gamma(ALPHA_71, T_71), rtol=2e-3),
    "7.2": NumberExercise(
        "7.2", "A DDS sampling ratio",
        "Score (10): (w_m - a1 d_m + b1) / (1 + (1 - alpha_n)/alpha_n pi_m); Algorithm 2 then scales the scores so "
        "that sum_m pi_m alpha_m = alpha_n (no ratio reaches 1 here).",
        [Mistake(ALPHA_72, "That is uniform sampling: DDS gives each state a ratio proportional to its score."),
         Mistake(rare_state_ratio("oracle"), "You used the score of §5 / App. G, with alpha_n/(1 - alpha_n) in the "
                                             "denominator; (10) has (1 - alpha_n)/alpha_n."),
         Mistake(_forgets_pi(), "Algorithm 2 normalises by S = sum_m pi_m ReLU(score_m), weighted by the forecast, "
                                "so that the budget sum_m pi_m alpha_m = alpha_n holds.")],
        answer=rare_state_ratio(), rtol=5e-3),
    "7.3": FunctionExercise(
        "7.3", "Shift-aware aggregation weights",
        "SAW (14): p_n proportional to ReLU(1/q_n - a2 s_n + b2), normalised over the clients.",
        [Mistake(_saw_q, "SAW divides by the availability: rarely available clients get the larger weight 1/q_n."),
         Mistake(_saw_no_relu, "Clip negative scores at 0 (ReLU) before normalising: a weight cannot be negative."),
         Mistake(_saw_unnormalised, "The weights are a probability vector: divide by their sum.")],
        solution=saw, make_inputs=_saw_inputs),
    "7.4": PredictionExercise(
        "7.4", "Which method has the smallest bound?",
        "Look at which terms of Theorem 1 (6) carry the staleness gamma_n (7), and at gamma_n when alpha_n = 1.",
        [Mistake("SFedPO (DDS + SAW)", "DDS and SAW minimise the bound at a fixed budget alpha_n = 0.5. FedAvg on "
                                       "the latest data has alpha_n = 1: gamma_n = 0 removes t2, t3 and the 1/R "
                                       "term, so the bound rewards freshness whatever the training mixture."),
         Mistake("FedAvg, uniform buffer sampling", "Uniform buffer sampling is the baseline DDS improves on at the "
                                                    "same budget alpha_n = 0.5: its bound is not the smallest.")],
        choices=("SFedPO (DDS + SAW)", "DDS only", "FedAvg, uniform buffer sampling", "FedAvg on the latest data"),
        predicted="SFedPO (DDS + SAW)"),
}
