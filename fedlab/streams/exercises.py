r"""Exercises of notebook 05 (FL on data streams, thesis §4.3), each with a checker (:mod:`fedlab.exercises`).

- 5.1 *compute*: the ratio :math:`c_2/c_1` below which Historical is optimal, :math:`\sqrt{h/M_F}` (spec §3.10);
- 5.2 *compute*: :math:`p_{hist}` of FedAvg weighting by the samples in memory (:math:`\lambda\equiv1`, eq. 4.13);
- 5.3 *compute*: :math:`N_{eff}` of a FIFO memory with :math:`\lambda\equiv1` (Lemma 4.3.2);
- 5.4 *implement*: the bound :math:`\psi(p; c)` of Corollary 4.3.5 (eq. 4.17);
- 5.5 *predict*: which baseline loses most at :math:`N_{hist}/N = 0.05` in experiment A.

Reference answers come from :mod:`fedlab.streams.bounds` and :mod:`fedlab.streams.algorithms`.
"""
from __future__ import annotations

import math

import numpy as np

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.streams.algorithms import sample_weight_schedule
from fedlab.streams.bounds import historical_threshold, importance_from_schedule, psi
from fedlab.streams.data import ConstantArrivals, StaticArrivals, simulate_memory

__all__ = ["EXERCISES"]

# 5.1: M = 50, M_hist = 25, N_hist/N = 0.2
H_51, M_FRESH_51, M_51 = 0.2, 25, 50
# 5.2: one historical client with 1000 samples, one fresh client with 20 per round, T = 200
HIST_52, BATCH_52, T_52 = 1000, 20, 200
# 5.3: one client, b = 2, FIFO C = 4, T = 5
BATCH_53, CAPACITY_53, T_53 = 2, 4, 5


def memory_fedavg_p_hist(n_hist: int = HIST_52, batch: int = BATCH_52, horizon: int = T_52) -> float:
    """:math:`p_{hist}` when each round weighs clients by the samples in memory (eq. 4.13 with lambda = 1)."""
    case = [simulate_memory(StaticArrivals(n_hist).counts(horizon), n_hist, "keep"),
            simulate_memory(ConstantArrivals(batch).counts(horizon), batch, "fifo")]
    return float(importance_from_schedule(sample_weight_schedule(case, "ones")).p_clients[0])


def fifo_n_eff(rule: str = "ones", batch: int = BATCH_53, capacity: int = CAPACITY_53, horizon: int = T_53) -> float:
    """:math:`N_{eff}` of one client with constant arrivals and a FIFO memory under the weight rule ``rule``."""
    fifo = simulate_memory(ConstantArrivals(batch).counts(horizon), capacity, "fifo")
    return importance_from_schedule(sample_weight_schedule([fifo], rule)).n_eff


def bound_psi(p, n, m_hist, c1, c2):
    r""":math:`\psi(p; c) = c_1\sqrt{\sum_{m>M_{hist}} p_m^2} + c_2\sqrt{\sum_m p_m^2/n_m}` (4.17), c_0 = 0."""
    return psi(p, n, m_hist, c1=c1, c2=c2)


def _psi_inputs(rng):
    m = int(rng.integers(2, 9))
    return (rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m)), int(rng.integers(1, m)),
            float(rng.uniform(0.1, 2)), float(rng.uniform(0.1, 2)))


def _psi_all_clients(p, n, m_hist, c1, c2):
    return c1 * np.sqrt(np.sum(p ** 2)) + c2 * np.sqrt(np.sum(p ** 2 / n))


def _psi_off_by_one(p, n, m_hist, c1, c2):
    return c1 * np.sqrt(np.sum(p[m_hist + 1:] ** 2)) + c2 * np.sqrt(np.sum(p ** 2 / n))


def _psi_no_root(p, n, m_hist, c1, c2):
    return c1 * np.sqrt(np.sum(p[m_hist:] ** 2)) + c2 * np.sum(p ** 2 / n)


EXERCISES = {
    "5.1": NumberExercise(
        "5.1", "Where Historical switches on",
        "Write psi as a function of x = p_hist (the closed form of section 3) and ask when its left derivative at "
        "x = 1 is <= 0: this gives kappa^2 <= h with kappa = (c2/c1) sqrt(M_F) (spec §3.10, Cor. 4.3.5).",
        [Mistake(H_51 / M_FRESH_51, "You found h / M_F: the condition kappa^2 <= h bounds the square of the ratio, "
                                    "take the square root."),
         Mistake(math.sqrt(H_51 / M_51), "Only the fresh clients enter the variability term of (4.17): kappa uses "
                                         "M_F = M - M_hist, not M."),
         Mistake(math.sqrt(H_51), "You dropped M_F: the variability term is c1 (1 - x)/sqrt(M_F), so kappa = "
                                  "(c2/c1) sqrt(M_F).")],
        answer=float(historical_threshold(H_51, M_FRESH_51)), rtol=5e-3),
    "5.2": NumberExercise(
        "5.2", "FedAvg weighted by memory size",
        "With lambda = 1 a sample's importance (4.13) counts every round it spends in memory: a historical sample is "
        "used T times, a fresh sample once. Add up each group's weight over the T rounds.",
        [Mistake(0.2, "0.2 = N_hist/N is Uniform (every sample counted once). With lambda = 1 the historical samples "
                      "are in memory, and counted, at every one of the T rounds."),
         Mistake(1.0, "Close, but the fresh client still holds (N - N_hist)/T samples at each round: p_hist is "
                      "slightly below 1."),
         Mistake(1 - memory_fedavg_p_hist(), "That is the fresh client's weight 1 - p_hist.")],
        answer=memory_fedavg_p_hist(), rtol=1e-3),
    "5.3": NumberExercise(
        "5.3", "Effective sample size of a FIFO memory",
        "List which samples are in memory at each of the T = 5 rounds, count how many rounds each sample is used "
        "(lambda = 1), normalise to importances p_i (4.13) and take N_eff = 1 / sum_i p_i^2 (Lemma 4.3.2).",
        [Mistake(fifo_n_eff("inverse_stay"), "N_eff = N holds when every sample has importance 1/N, i.e. with "
                                             "lambda = 1/tau. With lambda = 1 the last batch is used once, the "
                                             "others twice."),
         Mistake(1 / fifo_n_eff(), "You stopped at sum_i p_i^2: N_eff is its inverse."),
         Mistake(fifo_n_eff(horizon=T_53 - 1), "Count T = 5 rounds: the fifth batch arrives at round 5 and is used "
                                               "once.")],
        answer=fifo_n_eff(), rtol=1e-3),
    "5.4": FunctionExercise(
        "5.4", "The bound psi",
        "Eq. (4.17): the variability term sums p_m^2 over the fresh clients only, the generalization term p_m^2/n_m "
        "over all clients, and each term is a square root.",
        [Mistake(_psi_all_clients, "Historical clients have static data and no gradient drift: the c1 term sums "
                                   "over the fresh clients m > M_hist only."),
         Mistake(_psi_off_by_one, "Off by one: with 0-based indices the fresh clients are p[m_hist:], not "
                                  "p[m_hist + 1:]."),
         Mistake(_psi_no_root, "The generalization term is c2 sqrt(sum_m p_m^2/n_m) = c2 sqrt(N/N_eff): keep the "
                               "square root.")],
        solution=bound_psi, make_inputs=_psi_inputs),
    "5.5": PredictionExercise(
        "5.5", "Which baseline loses most with few historical samples?",
        "At small N_hist/N most of the data arrive on the fresh clients; Uniform counts every sample once (N_eff = N). "
        "Which one ignores the most data? (Fig. 4.3: psi_hist - psi* is largest at "
        "small h).",
        [Mistake("Fresh", "Fresh only drops the 5 % of samples held by historical clients, and Uniform keeps them "
                          "all: Historical drops 95 % of the data.")],
        choices=("Fresh", "Historical", "Uniform"), predicted="Historical"),
}
