r"""Exercises of notebook 03 (FedEM), each checking the reader's answer (see :mod:`fedlab.exercises`).

- 3.1 (compute): the E-step (3.12) for one sample and three components;
- 3.2 (implement): one EM update of a client's mixture weights, (3.12) then (3.13);
- 3.3 (compute): the largest constant step size Theorem 3.5.3 admits (Lemma E.4);
- 3.4 (predict): which method has the best average accuracy on the synthetic mixture (Table 3.2).

The reference answers are computed with the package's own functions (``e_step``, ``update_pi``,
``fedem_max_step``).
"""
from __future__ import annotations

import numpy as np

from fedlab.algorithms.fedem import e_step, update_pi
from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.fedem.bounds import fedem_max_step

__all__ = ["EXERCISES"]

# Exercise 3.1: a client's weights and one sample's losses under the three components
PI, LOSSES = np.array([0.5, 0.3, 0.2]), np.array([1.2, 0.4, 2.0])
# Exercise 3.3: smoothness, dissimilarity and local steps
L_SMOOTH, BETA, LOCAL_STEPS = 2.0, 3.0, 10


def _normalised(v: np.ndarray) -> np.ndarray:
    return v / v.sum()


def em_weights(pi: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """A client's new mixture weights after one E-step (3.12) and the update (3.13); ``losses`` is (M, n)."""
    return update_pi(e_step(np.log(pi), losses))


def _em_inputs(rng: np.random.Generator) -> tuple:
    m, n = int(rng.integers(2, 5)), int(rng.integers(3, 21))
    return rng.dirichlet(np.ones(m)), rng.exponential(1.0, size=(m, n))


def _posterior(pi, losses, sign=-1.0, prior=True):
    logits = (np.log(pi)[:, None] if prior else 0.0) + sign * losses
    q = np.exp(logits - logits.max(axis=0))
    return q / q.sum(axis=0)


def _summed(pi, losses):
    return _posterior(pi, losses).sum(axis=1)


def _sign_error(pi, losses):
    return _posterior(pi, losses, sign=1.0).mean(axis=1)


def _no_prior(pi, losses):
    return _posterior(pi, losses, prior=False).mean(axis=1)


def _hard(pi, losses):
    best = np.argmax(np.log(pi)[:, None] - losses, axis=0)
    return np.bincount(best, minlength=len(pi)) / losses.shape[1]


EXERCISES = {
    "3.1": NumberExercise(
        "3.1", "The E-step for one sample",
        "Eq. (3.12): $q(z = m) \\propto \\pi_m \\exp(-\\ell_m)$, normalised over the components $m$ (section 2): the "
        "loss is a negative log-likelihood.",
        [Mistake(_normalised(PI * np.exp(LOSSES)), "Sign error: the loss is a negative log-likelihood, so the "
                                                   "likelihood is $\\exp(-\\ell_m)$; a component that fits the "
                                                   "sample badly must get less responsibility."),
         Mistake(_normalised(np.exp(-LOSSES)), "You forgot the prior: the responsibilities weigh the likelihoods by "
                                               "the client's mixture weights $\\pi_m$."),
         Mistake(PI * np.exp(-LOSSES), "Normalise: the responsibilities of one sample sum to one over the "
                                       "components."),
         Mistake(_normalised(PI * LOSSES), "The likelihood of component $m$ is $\\exp(-\\ell_m)$, not the loss "
                                           "$\\ell_m$ itself."),
         Mistake(PI, "Those are the prior weights $\\pi$: the E-step updates them with the sample's likelihoods "
                     "$\\exp(-\\ell_m)$.")],
        answer=e_step(np.log(PI)[None], LOSSES[None, :, None])[0, :, 0], rtol=2e-3),
    "3.2": FunctionExercise(
        "3.2", "One EM update of a client's mixture weights",
        "Proposition 3.5.2: the E-step (3.12) gives each sample's responsibilities "
        "$q_i(m) \\propto \\pi_m\\exp(-\\ell_{m,i})$, and (3.13) averages them over the client's $n$ samples: "
        "$\\pi_m = \\frac1n\\sum_i q_i(m)$.",
        [Mistake(_summed, "Divide by the number of samples $n$: (3.13) is an average, so the new weights sum to one."),
         Mistake(_sign_error, "Sign error: the likelihood of component $m$ is $\\exp(-\\ell_{m,i})$; a component "
                              "with a large loss must get less responsibility."),
         Mistake(_no_prior, "The responsibilities weigh the likelihoods by the current weights $\\pi_m$ (3.12): "
                            "without them the update forgets the previous iterate."),
         Mistake(_hard, "That is hard EM (each sample to its most likely component); FedEM keeps the soft "
                        "responsibilities $q_i(m)$ of (3.12).")],
        solution=em_weights, make_inputs=_em_inputs),
    "3.3": NumberExercise(
        "3.3", "The largest step size of Theorem 3.5.3",
        "Lemma E.4: FedEM's constant step size must satisfy "
        "$\\eta \\le \\frac1J\\min\\{\\frac1{2\\sqrt2L}, \\frac1{4L\\beta}\\}$, with $J$ local steps.",
        [Mistake(fedem_max_step(L_SMOOTH, BETA, 1), "The bound is divided by the number of local steps $J$: more "
                                                   "local steps need smaller steps."),
         Mistake(fedem_max_step(L_SMOOTH, 0.0, LOCAL_STEPS), "Both conditions must hold, so take the smaller of "
                                                             "the two terms: with $\\beta = 3$ the dissimilarity "
                                                             "term $1/(4L\\beta)$ is the binding one."),
         Mistake(LOCAL_STEPS * fedem_max_step(L_SMOOTH, BETA, 1), "Divide by $J$, do not multiply: more local steps "
                                                                 "need smaller steps.")],
        answer=fedem_max_step(L_SMOOTH, BETA, LOCAL_STEPS), rtol=2e-3),
    "3.4": PredictionExercise(
        "3.4", "Who wins on the synthetic mixture",
        "Table 3.2 and Assumption 8: the synthetic clients mix three shared distributions with their own weights, "
        "the setting FedEM's mixture of components is built for.",
        [Mistake("FedAvg", "One global model cannot fit three conflicting labelling functions: FedAvg pays the "
                           "discrepancy between each client and the mixture."),
         Mistake("Local", "A local model sees only the client's own samples, as few as fifty here: it pays a large "
                          "variance (Prop. 1.2.4) that the shared components avoid."),
         Mistake("Ditto", "Ditto regularises each personal model towards one global model; FedEM's three components "
                          "match the data's three distributions, and each client only fits its weights.")],
        choices=("FedEM", "FedAvg", "Local", "Ditto"), predicted="FedEM"),
}
"""The chapter's exercises by label."""
