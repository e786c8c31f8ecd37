r"""The method of the topology chapter: DPASGD (thesis eq. 2.2) on an overlay, scored at the silos' average model.

Registered as ``METHODS["topology:dpasgd"]`` (it needs the overlay's ``mixing_matrix=``); :data:`PRESETS` holds the
chapter's methods by short name.
"""
from __future__ import annotations

import numpy as np

from fedlab.algorithms import METHODS, DecentralizedSGD
from fedlab.engine import FederatedDataset, broadcast, evaluate, weighted_average

__all__ = ["AveragedDPASGD", "PRESETS"]


class AveragedDPASGD(DecentralizedSGD):
    r"""Decentralised periodic averaging SGD (2.2) whose metrics are those of the average model.

    Training is :class:`fedlab.algorithms.DecentralizedSGD`: :math:`s` local steps, then
    :math:`\mathbf w_i \leftarrow \sum_j A_{i,j}\mathbf w_j` with the overlay's consensus matrix. Each
    silo keeps its own model, and on heterogeneous data a poorly mixing overlay leaves each one
    fitted to its own silo; to compare overlays on the same footing, :meth:`evaluate` scores
    :math:`\bar{\mathbf w}(k) = \frac1N\sum_i \mathbf w_i(k)` (the server model for the STAR) on
    every silo's data.

    Parameters
    ----------
    model, solver, mixing_matrix, backend
        As for :class:`fedlab.algorithms.DecentralizedSGD`.
    """

    def evaluate(self, state, data: FederatedDataset) -> dict[str, np.ndarray]:
        n = data.n_clients
        mean = weighted_average(state.params, np.ones(n))
        return evaluate(self.model, broadcast(mean, n), data.train, data.test)


METHODS.register("dpasgd", AveragedDPASGD, chapter="topology", label="DPASGD")

PRESETS = METHODS.presets("topology")
"""The chapter's methods by short name: ``PRESETS["dpasgd"](model, solver, mixing_matrix=A)``."""
