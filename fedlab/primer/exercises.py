r"""Exercises of notebook 00 (the primer), each checking the reader's answer (see :mod:`fedlab.exercises`).

- 0.1 (compute): FedAvg's fixed point on the two quadratic clients of §4 with $E = 2$ local steps;
- 0.2 (compute): the label skew (mean total-variation distance to the pooled label distribution) of three clients;
- 0.3 (implement): the server's aggregation with partial participation (thesis Algorithm 1);
- 0.4 (predict): what a smaller step size does to the drift of the fixed point at $E = 20$;
- 0.5 (predict): which number of local steps reaches 85 % accuracy in the fewest rounds ([McM+17]);
- 0.6 (predict): who wins on clients that see few classes, FedAvg, Local or Centralized (Props 1.2.4-1.2.5).

The reference answers are computed with the package's own functions (``fedavg_fixed_point``, ``label_skew``,
``weighted_average``).
"""
from __future__ import annotations

import numpy as np
import torch

from fedlab.data import label_skew
from fedlab.engine.aggregation import weighted_average
from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise
from fedlab.primer.algorithms import fedavg_fixed_point
from fedlab.primer.data import QuadraticClients

__all__ = ["EXERCISES"]

# §4's two quadratic clients (the drift figure), and the local steps and step size of Exercise 0.1
QUAD = QuadraticClients(centers=np.array([[2.0, 0.0], [-1.0, 2.0]]),
                        curvatures=np.array([[[2.0, 0.0], [0.0, 0.3]], [[0.3, 0.0], [0.0, 2.0]]]),
                        weights=np.array([0.5, 0.5]))
E_STEPS, LR = 2, 0.2

# Exercise 0.2: label counts of three clients over three classes
HISTOGRAMS = np.array([[0, 2, 8], [2, 0, 5], [0, 4, 1]])


def _contractions(clients: QuadraticClients, steps: int, lr: float) -> np.ndarray:
    """Diagonals of B_k = (I - lr A_k)^E (the curvatures are diagonal)."""
    return np.array([np.diag(np.linalg.matrix_power(np.eye(2) - lr * a, steps)) for a in clients.curvatures])


def _swapped_fixed_point() -> np.ndarray:
    """The fixed point with B_k and I - B_k exchanged."""
    b, p = _contractions(QUAD, E_STEPS, LR), QUAD.weights[:, None]
    return (p * b * QUAD.centers).sum(0) / (p * b).sum(0)


def _distributions(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return h / h.sum(axis=1, keepdims=True), h.sum(axis=0) / h.sum()


def _skew_without_half() -> float:
    p, pooled = _distributions(HISTOGRAMS)
    return float(np.abs(p - pooled).sum(axis=1).mean())


def _skew_to_uniform() -> float:
    p, _ = _distributions(HISTOGRAMS)
    return float(0.5 * np.abs(p - 1 / p.shape[1]).sum(axis=1).mean())


def _skew_to_mean_of_clients() -> float:
    p, _ = _distributions(HISTOGRAMS)
    return float(0.5 * np.abs(p - p.mean(axis=0)).sum(axis=1).mean())


def _skew_weighted_by_size() -> float:
    p, pooled = _distributions(HISTOGRAMS)
    n = HISTOGRAMS.sum(axis=1)
    return float((0.5 * np.abs(p - pooled).sum(axis=1) * n).sum() / n.sum())


def aggregate(local_models: np.ndarray, sizes: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """The server's new model: the sampled clients' models averaged with weights N_c, renormalised over the sample."""
    params = {"w": torch.as_tensor(local_models[sampled], dtype=torch.float64)}
    return weighted_average(params, sizes[sampled])["w"].numpy()


def _aggregation_inputs(rng: np.random.Generator) -> tuple:
    n_clients, dim = int(rng.integers(4, 9)), int(rng.integers(2, 6))
    sampled = np.zeros(n_clients, dtype=bool)                 # a sample of 2 .. n-1 clients
    sampled[rng.choice(n_clients, size=int(rng.integers(2, n_clients)), replace=False)] = True
    return rng.normal(size=(n_clients, dim)), rng.integers(5, 100, size=n_clients).astype(float), sampled


def _unnormalised(models, sizes, sampled):
    p = sizes / sizes.sum()
    return (p[sampled, None] * models[sampled]).sum(axis=0)


def _uniform_over_sample(models, sizes, sampled):
    return models[sampled].mean(axis=0)


def _all_clients(models, sizes, sampled):
    return (sizes[:, None] * models).sum(axis=0) / sizes.sum()


EXERCISES = {
    "0.1": NumberExercise(
        "0.1", "FedAvg's fixed point with two local steps",
        "FedAvg's fixed point solves $(I - \\sum_k p_k B_k) w = \\sum_k p_k (I - B_k) c_k$ with "
        "$B_k = (I - \\eta A_k)^E$ (section 4, thesis eq. (1.8)); the curvatures are diagonal, so solve it one "
        "coordinate at a time.",
        [Mistake(QUAD.optimum(), "That is the global optimum $w^\\star$, where FedAvg lands with $E = 1$; with $E = 2$ "
                                 "the contraction $B_k = (I - \\eta A_k)^2$ is not linear in $\\eta$ and the fixed point "
                                 "drifts away from $w^\\star$."),
         Mistake(QUAD.centers.mean(axis=0), "That is the plain average of the centres $c_k$: the clients' curvatures "
                                            "weigh the centres, through $I - B_k$."),
         Mistake(_swapped_fixed_point(), "You exchanged $B_k$ and $I - B_k$: $B_k$ is the part of the starting point "
                                         "a client keeps after its local steps, $I - B_k$ the part it moves towards "
                                         "its own centre $c_k$.")],
        answer=fedavg_fixed_point(QUAD, local_steps=E_STEPS, lr=LR), rtol=2e-3),
    "0.2": NumberExercise(
        "0.2", "Label skew of three clients",
        "The label skew is $\\frac1K\\sum_k \\frac12\\sum_c |p_{k,c} - p_c|$: each client's label distribution "
        "against the pooled one $p_c = \\sum_k n_{k,c} / \\sum_{k,c} n_{k,c}$ (section 3).",
        [Mistake(_skew_without_half(), "The total-variation distance has a factor 1/2 in front of the L1 distance "
                                       "(so that it lies in [0, 1])."),
         Mistake(_skew_to_uniform(), "Compare with the pooled label distribution, not the uniform one: the "
                                     "classes are not equally frequent in the federation."),
         Mistake(_skew_to_mean_of_clients(), "The pooled distribution counts samples, not clients: the clients have "
                                             "different sizes, so it is not the mean of their distributions."),
         Mistake(_skew_weighted_by_size(), "Average the clients' distances with equal weights 1/K, not weighted by "
                                           "their sizes.")],
        answer=label_skew(HISTOGRAMS), rtol=2e-3),
    "0.3": FunctionExercise(
        "0.3", "The server's aggregation with partial participation",
        "Thesis Algorithm 1: $\\mathbf w_{t+1} = \\sum_{c\\in\\mathcal C_t} p_c\\,\\mathbf w^{(c)} / "
        "\\sum_{c\\in\\mathcal C_t} p_c$ with $p_c = N_c/N$, over the sampled clients only.",
        [Mistake(_unnormalised, "Divide by $\\sum_{c\\in\\mathcal C_t} p_c$: the weights $p_c$ of the sampled "
                                "clients alone do not sum to one, so your model shrinks towards zero."),
         Mistake(_uniform_over_sample, "Weigh each sampled client by its size $N_c$, not uniformly: (1.1) weighs "
                                       "client $c$ by $N_c / N$."),
         Mistake(_all_clients, "Only the sampled clients $\\mathcal C_t$ send a model: the others are not part of "
                               "this round's average.")],
        solution=aggregate, make_inputs=_aggregation_inputs),
    "0.4": PredictionExercise(
        "0.4", "Drift against the step size",
        "Expand $B_k = (I - \\eta A_k)^E = I - \\eta E A_k + O(\\eta^2E^2)$ in the fixed-point equation of section 4: "
        "to first order in $\\eta E$ it is the optimality condition of (1.1).",
        [Mistake("farther from w*", "With $B_k \\approx I - \\eta E A_k$ the fixed point solves "
                                    "$\\sum_k p_k A_k (w - c_k) = 0$ up to $O(\\eta E)$: the drift scales with "
                                    "$\\eta E$, so a smaller $\\eta$ reduces it."),
         Mistake("unchanged", "The fixed point depends on $\\eta$ through $B_k = (I - \\eta A_k)^E$; only for $E = 1$ "
                              "is it $w^\\star$ whatever $\\eta$.")],
        choices=("closer to w*", "farther from w*", "unchanged"), predicted="closer to w*"),
    "0.5": PredictionExercise(
        "0.5", "Local steps against communication rounds",
        "[McM+17]: more local computation per round (larger $E$) reaches a target accuracy in fewer rounds, as long as "
        "the clients' drift stays small.",
        [Mistake("E = 1", "With $E = 1$ FedAvg is minibatch SGD: one gradient step per round. $E = 20$ does twenty "
                          "steps for the same communication, and on digits the drift they cause is small."),
         Mistake("E = 5", "Twenty local steps do more progress per round than five here: the drift they add is small "
                          "compared with the extra progress, at α = 1.")],
        choices=("E = 1", "E = 5", "E = 20"), predicted="E = 20"),
    "0.6": PredictionExercise(
        "0.6", "Local, FedAvg or Centralized on clients that see few classes",
        "Thesis §1.2.3.2, Props 1.2.4-1.2.5: a local model pays for its small sample, a global model for the "
        "discrepancy between the client's distribution and the mixture.",
        [Mistake("FedAvg", "At α = 0.1 a client's test set holds the same few classes as its training set: its "
                           "local model only separates those, while the global model pays the discrepancy between "
                           "the client's distribution and the mixture (Prop. 1.2.5)."),
         Mistake("Centralized", "Centralized training fits one model to the pooled data: like FedAvg it is a global "
                                "model, and pays the discrepancy between each client's labels and the mixture.")],
        choices=("FedAvg", "Local", "Centralized"), predicted="Local"),
}
"""The chapter's exercises by label."""
