r"""Finite Markov chains: the transition-matrix check and the stationary law shared by the chapters
(client availability, Markovian streams, temporal shifts)."""
from __future__ import annotations

import numpy as np

from fedlab._validation import check_array

__all__ = ["check_transition_matrix", "stationary_distribution"]


def check_transition_matrix(P, name: str = "P", atol: float = 1e-8) -> np.ndarray:
    """Return ``P`` as a float array (S, S) or (..., S, S), or raise if it is not row-stochastic.

    Raises
    ------
    ValueError
        When ``P`` is not square, has negative or non-finite entries, or a row does not sum to 1.
    """
    arr = check_array(name, P)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 1:
        raise ValueError(f"{name} must be a square transition matrix (S, S), got shape {arr.shape}.")
    if np.any(arr < 0):
        raise ValueError(f"{name} must have non-negative entries (a transition matrix), got minimum {arr.min():.4g}.")
    sums = arr.sum(-1)
    if np.any(np.abs(sums - 1.0) > atol):
        bad = np.flatnonzero(np.abs(sums.reshape(-1) - 1.0) > atol)[:5]
        raise ValueError(f"{name} must be row-stochastic (rows summing to 1); rows {bad.tolist()} sum to "
                         f"{np.round(sums.reshape(-1)[bad], 6).tolist()}.")
    return arr


def _stationary_one(P: np.ndarray) -> np.ndarray:
    s = P.shape[0]
    lhs = np.vstack([P.T - np.eye(s), np.ones((1, s))])
    rhs = np.concatenate([np.zeros(s), [1.0]])
    pi, _, rank, _ = np.linalg.lstsq(lhs, rhs, rcond=None)
    if rank < s:
        raise ValueError("P has several stationary distributions (it is not irreducible); pass an irreducible chain.")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def stationary_distribution(P) -> np.ndarray:
    r"""Stationary law :math:`\rho^\top \mathbf P = \rho^\top`, :math:`\sum_i \rho_i = 1` (thesis Assumption 3).

    Least-squares solution of :math:`[(\mathbf P^\top - \mathbf I); \mathbf 1^\top]\rho = (0, 1)`, unique for
    irreducible chains.

    Parameters
    ----------
    P : array (S, S) or (..., S, S)
        Row-stochastic transition matrices.

    Returns
    -------
    array (S,) or (..., S)

    Raises
    ------
    ValueError
        When ``P`` is not a transition matrix or has several stationary laws.
    """
    P = check_transition_matrix(P)
    flat = P.reshape(-1, *P.shape[-2:])
    return np.stack([_stationary_one(p) for p in flat]).reshape(P.shape[:-1])
