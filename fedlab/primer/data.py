r"""Data of the primer: scikit-learn's digits split over clients, and the quadratic clients of the drift picture.

:func:`digits_federation` splits the 1,797 digits over C clients with Dirichlet(α) label proportions (the
federation of sections 3, 5 and 6 of the notebook). :class:`QuadraticClients` are the two quadratic clients of
section 4: client k minimises :math:`F_k(w) = \tfrac12 (w-c_k)^\top A_k (w-c_k)` and the federation minimises
:math:`F = \sum_k p_k F_k` (thesis eq. (1.1)), whose minimiser is
:math:`w^\star = (\sum_k p_k A_k)^{-1}\sum_k p_k A_k c_k`.

Examples
--------
>>> import numpy as np
>>> clients = QuadraticClients(np.array([[0.0, 0.0], [2.0, 2.0]]), np.stack([np.eye(2)] * 2), np.full(2, 0.5))
>>> clients.optimum().tolist()
[1.0, 1.0]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_int, check_simplex
from fedlab.data import load_digits_arrays, partition_dirichlet
from fedlab.engine import FederatedDataset

__all__ = ["digits_federation", "QuadraticClients"]


def digits_federation(n_clients: int, alpha: float, seed: int) -> FederatedDataset:
    """scikit-learn's digits split over ``n_clients`` with Dirichlet(``alpha``) label proportions, 25% test."""
    check_int("seed", seed, low=0)
    x, y = load_digits_arrays()
    part = partition_dirichlet(y, n_clients, alpha, min_size=10, rng=seed)
    return FederatedDataset.from_client_arrays([x[i] for i in part.indices], [y[i] for i in part.indices],
                                               test_fraction=0.25, n_classes=10, seed=seed)


@dataclass(frozen=True)
class QuadraticClients:
    """Quadratic local objectives: centres ``c`` (K, d), curvatures ``A`` (K, d, d) SPD, weights ``p`` (K,)."""

    centers: np.ndarray
    curvatures: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        c = check_array("centers", self.centers, ndim=2)
        k, d = c.shape
        a = check_array("curvatures", self.curvatures, shape=(k, d, d))
        if not np.allclose(a, np.swapaxes(a, 1, 2)) or np.linalg.eigvalsh(a).min() <= 0:
            raise ValueError("curvatures must be symmetric positive definite matrices.")
        check_simplex("weights", self.weights, ndim=1, size=k)

    def optimum(self) -> np.ndarray:
        """Minimiser :math:`w^\\star` of the weighted global objective."""
        a_bar = np.einsum("k,kij->ij", self.weights, self.curvatures)
        return np.linalg.solve(a_bar, np.einsum("k,kij,kj->i", self.weights, self.curvatures, self.centers))

    def objective(self, w: np.ndarray) -> float:
        diff = np.asarray(w) - self.centers
        return float(0.5 * np.einsum("k,ki,kij,kj->", self.weights, diff, self.curvatures, diff))
