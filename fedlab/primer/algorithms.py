r"""The primer's own Algorithm: exact FedAvg on quadratic clients (the client-drift picture), and the registry.

With E local gradient steps of size :math:`\eta`, client k returns :math:`c_k + B_k (w - c_k)` with
:math:`B_k = (I-\eta A_k)^E`; :class:`QuadraticFedAvg` runs these rounds on
:class:`~fedlab.primer.data.QuadraticClients` through :func:`fedlab.engine.run`, and :func:`drift_paths` reads the
server iterates and the clients' local paths back from the History. The rounds converge to the fixed point
:math:`w^E` solving :math:`(I-\sum_k p_k B_k)\,w = \sum_k p_k (I-B_k) c_k` (:func:`fedavg_fixed_point`, in closed
form): with E = 1 it is :math:`w^\star` (FedAvg is gradient descent on (1.1), thesis eq. (1.8)); it differs from
:math:`w^\star` as soon as E > 1 and the :math:`A_k` differ (client drift, [Kar+20a]).

The primer trains softmax regressions with the core methods ``METHODS["fedavg"]``, ``["local"]`` and
``["centralized"]``; its own Algorithm is registered as ``METHODS["primer:quadratic_fedavg"]`` (:data:`PRESETS`).

Examples
--------
>>> import numpy as np
>>> from fedlab.engine import run
>>> from fedlab.primer.data import QuadraticClients
>>> clients = QuadraticClients(np.array([[0.0, 0.0], [2.0, 2.0]]), np.stack([np.eye(2)] * 2), np.full(2, 0.5))
>>> state, history = run(QuadraticFedAvg(np.zeros(2), local_steps=2, lr=1.0), clients, rounds=3, progress=False)
>>> state.w.tolist(), drift_paths(history)[1].shape
([1.0, 1.0], (3, 2, 3, 2))
>>> skewed = QuadraticClients(np.array([[2.0, 0.0], [-1.0, 2.0]]),
...                           np.array([np.diag([2.0, 0.3]), np.diag([0.3, 2.0])]), np.full(2, 0.5))
>>> bool(np.allclose(fedavg_fixed_point(skewed, local_steps=1, lr=0.2), skewed.optimum()))
True
>>> bool(np.linalg.norm(fedavg_fixed_point(skewed, local_steps=20, lr=0.2) - skewed.optimum()) > 0.1)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_int, check_real, check_type
from fedlab.algorithms import METHODS
from fedlab.engine import History
from fedlab.primer.data import QuadraticClients

__all__ = ["QuadraticState", "QuadraticFedAvg", "drift_paths", "fedavg_fixed_point", "PRESETS"]


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
    """The point FedAvg converges to with E local steps (the module docstring's :math:`w^E`), in closed form."""
    check_type("clients", clients, QuadraticClients)
    check_int("local_steps", local_steps, low=1)
    check_real("lr", lr, low=0, low_open=True)
    k, d = clients.centers.shape
    b = np.array([np.linalg.matrix_power(np.eye(d) - lr * a, local_steps) for a in clients.curvatures])
    lhs = np.eye(d) - np.einsum("k,kij->ij", clients.weights, b)
    rhs = np.einsum("k,kij,kj->i", clients.weights, np.eye(d) - b, clients.centers)
    return np.linalg.solve(lhs, rhs)


METHODS.register("quadratic_fedavg", QuadraticFedAvg, chapter="primer", label="FedAvg on quadratics (exact gradients)")

PRESETS = METHODS.presets("primer")
"""The chapter's own methods by short name (``QuadraticFedAvg`` takes ``w0``, ``local_steps`` and ``lr``)."""
