r"""Closed-form toy problems that make a mechanism visible (used by the primer).

Client drift on quadratics: client k minimises :math:`F_k(w) = \tfrac12 (w-c_k)^\top A_k (w-c_k)`, the
federation minimises :math:`F = \sum_k p_k F_k` (thesis eq. (1.1)) whose minimiser is
:math:`w^\star = (\sum_k p_k A_k)^{-1}\sum_k p_k A_k c_k`. With E local gradient steps of size
:math:`\eta`, client k returns :math:`c_k + B_k (w - c_k)` with :math:`B_k = (I-\eta A_k)^E`, so FedAvg
converges to the fixed point :math:`w^E` solving :math:`(I-\sum_k p_k B_k)\,w = \sum_k p_k (I-B_k) c_k`,
which differs from :math:`w^\star` as soon as E > 1 and the :math:`A_k` differ ("client drift").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_int, check_simplex, check_real

__all__ = ["QuadraticClients", "fedavg_quadratic", "fedavg_fixed_point"]


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


def fedavg_quadratic(clients: QuadraticClients, w0, *, local_steps: int, lr: float, rounds: int):
    """Exact (noise-free) FedAvg on quadratic clients.

    Returns
    -------
    server : array (rounds + 1, d)
        Global iterates.
    local : array (rounds, K, local_steps + 1, d)
        Every client's local path inside every round (the drift picture).
    """
    check_int("local_steps", local_steps, low=1)
    check_int("rounds", rounds, low=0)
    check_real("lr", lr, low=0, low_open=True)
    w = check_array("w0", w0, shape=(clients.centers.shape[1],)).copy()
    k, d = clients.centers.shape
    server, local = [w.copy()], np.zeros((rounds, k, local_steps + 1, d))
    for t in range(rounds):
        paths = np.repeat(w[None], k, axis=0)
        local[t, :, 0] = paths
        for e in range(local_steps):
            paths = paths - lr * np.einsum("kij,kj->ki", clients.curvatures, paths - clients.centers)
            local[t, :, e + 1] = paths
        w = clients.weights @ paths
        server.append(w.copy())
    return np.array(server), local


def fedavg_fixed_point(clients: QuadraticClients, *, local_steps: int, lr: float) -> np.ndarray:
    """The point FedAvg converges to with E local steps (module docstring), in closed form."""
    check_int("local_steps", local_steps, low=1)
    check_real("lr", lr, low=0, low_open=True)
    k, d = clients.centers.shape
    b = np.array([np.linalg.matrix_power(np.eye(d) - lr * a, local_steps) for a in clients.curvatures])
    lhs = np.eye(d) - np.einsum("k,kij->ij", clients.weights, b)
    rhs = np.einsum("k,kij,kj->i", clients.weights, np.eye(d) - b, clients.centers)
    return np.linalg.solve(lhs, rhs)
