r"""Toy problems that make a mechanism visible (used by the primer).

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

from fedlab._validation import check_array, check_int, check_real, check_simplex, check_type
from fedlab.engine import History

__all__ = ["QuadraticClients", "QuadraticState", "QuadraticFedAvg", "drift_paths", "fedavg_fixed_point"]


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


@dataclass(frozen=True)
class QuadraticState:
    """State of :class:`QuadraticFedAvg`: the server model ``w`` (d,) after ``round`` rounds."""

    w: np.ndarray
    round: int = 0


class QuadraticFedAvg:
    r"""Exact (noise-free) FedAvg on quadratic clients, an Algorithm on the numpy path of :func:`fedlab.engine.run`.

    The data is a :class:`QuadraticClients`. Each round every client starts from the server model
    :math:`w_t` and runs E gradient steps :math:`w \leftarrow w - \eta A_k (w - c_k)` on its
    :math:`F_k`; the server averages :math:`w_{t+1} = \sum_k p_k w^{(k)}_{t,E}` (thesis Algorithm 1 with full
    participation and exact gradients). The round's info holds the new server model ``w`` and the clients'
    paths ``local_paths`` (K, E + 1, d) as lists (:func:`drift_paths` reads them back); :meth:`evaluate`
    records ``objective`` (K,), every client's :math:`F_k(w_t)`.

    Parameters
    ----------
    w0 : array (d,)
        Initial server model.
    local_steps : int >= 1
        E.
    lr : float > 0
        :math:`\eta`.
    """

    def __init__(self, w0, *, local_steps: int, lr: float) -> None:
        self.w0 = check_array("w0", w0, ndim=1)
        if self.w0.size == 0:
            raise ValueError("w0 must have at least one coordinate.")
        self.local_steps = check_int("local_steps", local_steps, low=1)
        self.lr = check_real("lr", lr, low=0, low_open=True)

    def init(self, clients: QuadraticClients, seed: int) -> QuadraticState:
        if not isinstance(clients, QuadraticClients):
            raise TypeError(f"clients must be a QuadraticClients, got {type(clients).__name__}.")
        check_int("seed", seed, low=0)
        return QuadraticState(check_array("w0", self.w0, shape=(clients.centers.shape[1],)).copy())

    def round(self, state: QuadraticState, clients: QuadraticClients, seed: int) -> tuple[QuadraticState, dict]:
        paths = [np.repeat(state.w[None], clients.centers.shape[0], axis=0)]
        for _ in range(self.local_steps):
            paths.append(paths[-1] - self.lr * np.einsum("kij,kj->ki", clients.curvatures, paths[-1] - clients.centers))
        w = clients.weights @ paths[-1]
        return QuadraticState(w, state.round + 1), {"w": w.tolist(), "local_paths": np.stack(paths, 1).tolist()}

    def evaluate(self, state: QuadraticState, clients: QuadraticClients) -> dict[str, np.ndarray]:
        r"""``objective`` (K,): :math:`F_k(w_t) = \tfrac12 (w_t-c_k)^\top A_k (w_t-c_k)` of every client."""
        diff = state.w - clients.centers
        return {"objective": 0.5 * np.einsum("ki,kij,kj->k", diff, clients.curvatures, diff)}


def drift_paths(history: History) -> tuple[np.ndarray, np.ndarray]:
    r"""The drift picture of a :class:`QuadraticFedAvg` run of T >= 1 rounds.

    Returns
    -------
    server : array (T + 1, d)
        Server iterates :math:`w_0, \dots, w_T`.
    local : array (T, K, E + 1, d)
        Every client's local path inside every round.
    """
    if not isinstance(history, History):
        raise TypeError(f"history must be a History, got {type(history).__name__}.")
    if not history.log or "local_paths" not in history.log[0]:
        raise ValueError("history must hold at least one round of a QuadraticFedAvg run (its log has no local_paths).")
    local = np.array([entry["local_paths"] for entry in history.log])
    return np.vstack([local[:1, 0, 0], [entry["w"] for entry in history.log]]), local


def fedavg_fixed_point(clients: QuadraticClients, *, local_steps: int, lr: float) -> np.ndarray:
    """The point FedAvg converges to with E local steps (module docstring), in closed form."""
    check_type("clients", clients, QuadraticClients)
    check_int("local_steps", local_steps, low=1)
    check_real("lr", lr, low=0, low_open=True)
    k, d = clients.centers.shape
    b = np.array([np.linalg.matrix_power(np.eye(d) - lr * a, local_steps) for a in clients.curvatures])
    lhs = np.eye(d) - np.einsum("k,kij->ij", clients.weights, b)
    rhs = np.einsum("k,kij,kj->i", clients.weights, np.eye(d) - b, clients.centers)
    return np.linalg.solve(lhs, rhs)
