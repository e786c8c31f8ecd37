r"""Exercises of notebook 09 (streaming FL with Markovian data, Huynh, Egan, Neglia and Gorce), each with a checker
(:mod:`fedlab.exercises`).

- 9.1 *compute*: the mixing time :math:`\tau(1/4)` of a two-state chain (Def. 3.3);
- 9.2 *compute*: Proposition B.5's mixing time bound for the product chain of M clients, and the main text's erratum;
- 9.3 *implement*: the two-state mixing time in closed form;
- 9.4 *predict*: how the noise floor of Minibatch SGD grows with the clients' mixing time.

Reference answers come from :mod:`fedlab.markovian.bounds`.
"""
from __future__ import annotations

import math

from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.markovian.bounds import product_mixing_time_bound, two_state_mixing_time

__all__ = ["EXERCISES"]

# 9.1: flip probability p = 0.02
P_91 = 0.02
# 9.2: M = 10 clients whose chains mix in at most 30 steps
M_92, TAU_92 = 10, 30


def mixing_time_two_state(flip_prob):
    r""":math:`\tau(1/4) = \max(1, \lceil\ln 4/(-\ln|1-2p|)\rceil)` (L1 total variation, Def. 3.3)."""
    return two_state_mixing_time(flip_prob)


def _p_inputs(rng):
    return (float(rng.uniform(0.002, 0.45)),)


def _mixing_floor(flip_prob):
    return max(1, math.floor(math.log(4) / -math.log(abs(1 - 2 * flip_prob))))


def _mixing_small_p(flip_prob):
    return max(1, math.ceil(math.log(4) / (2 * flip_prob)))


def _mixing_sup_convention(flip_prob):
    return max(1, math.ceil(math.log(2) / -math.log(abs(1 - 2 * flip_prob))))


EXERCISES = {
    "9.1": NumberExercise(
        "9.1", "The mixing time of a two-state chain",
        "From either state, ||P^t(x, .) - pi||_TV = |1 - 2p|^t in the L1 convention of Def. 3.2; tau(1/4) is the first "
        "t >= 1 at which it is <= 1/4 (Def. 3.3).",
        [Mistake(_mixing_floor(P_91), "The first t with d(t) <= 1/4 rounds ln 4 / (-ln|1 - 2p|) up, not down."),
         Mistake(_mixing_small_p(P_91), "ln 4/(2p) is the small-p approximation of -ln|1 - 2p| = 2p + O(p^2); "
                                        "compute the logarithm exactly."),
         Mistake(math.ceil(math.log(4) / -math.log(1 - P_91)), "The chain leaves its state with probability p but "
                                                              "d(t) decays as |1 - 2p|^t (the eigenvalue of P), not "
                                                              "(1 - p)^t."),
         Mistake(_mixing_sup_convention(P_91), "Def. 3.2 uses the L1 convention (range [0, 2]): d(t) = |1 - 2p|^t "
                                               "must reach 1/4, not 1/2.")],
        answer=two_state_mixing_time(P_91), rtol=0.0, atol=0.5),
    "9.2": NumberExercise(
        "9.2", "The mixing time of M clients together",
        "Proposition B.5: the product of M independent chains mixes in tau <= (ceil(log_4 M) + 1) max_m tau_m.",
        [Mistake(TAU_92 * math.log(M_92), "That is the main text's max_m tau_m ln M, which is not a valid bound (it "
                                          "fails already at M = 2, section 1): use Proposition B.5."),
         Mistake(math.ceil(math.log(M_92, 4)) * TAU_92, "Keep the + 1: with M = 1 the bound must be tau_1 itself."),
         Mistake((math.ceil(math.log2(M_92)) + 1) * TAU_92, "The logarithm is in base 4 (each doubling of the "
                                                             "steps squares the distance 1/4).")],
        answer=product_mixing_time_bound([TAU_92] * M_92), rtol=0.0, atol=0.5),
    "9.3": FunctionExercise(
        "9.3", "The two-state mixing time in closed form",
        "d(t) = |1 - 2p|^t (L1 convention); tau(1/4) = max(1, ceil(ln 4 / (-ln|1 - 2p|))).",
        [Mistake(_mixing_floor, "Round up: tau is the first step at which d(t) <= 1/4."),
         Mistake(_mixing_small_p, "ln 4/(2p) is only the small-p approximation: use -ln|1 - 2p|."),
         Mistake(_mixing_sup_convention, "The L1 convention of Def. 3.2: d(t) must reach 1/4, ln 4 in the "
                                         "numerator.")],
        solution=mixing_time_two_state, make_inputs=_p_inputs, atol=0.5),
    "9.4": PredictionExercise(
        "9.4", "The cost of slow mixing",
        "Theorem 4.5: the noise floor of Minibatch SGD is of order tau sigma^2 / (M K): linear in the mixing time "
        "(a log-log slope near 1).",
        [Mistake("flat (slope below 0.3)", "A flat floor is what i.i.d. samples give (the iid curve of section 5); "
                                           "with Markov streams K consecutive samples carry about K/tau independent "
                                           "ones.")],
        choices=("flat (slope below 0.3)", "about sqrt(tau) (slope 0.3 to 0.7)", "about linear (slope above 0.7)"),
        predicted="about linear (slope above 0.7)"),
}
