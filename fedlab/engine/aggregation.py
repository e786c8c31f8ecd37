r"""Server aggregation and decentralised gossip on stacked parameters."""
from __future__ import annotations

import numpy as np
import torch

from fedlab._validation import check_array, check_bool, check_int, check_real
from fedlab.models import Params, check_param_dict

__all__ = ["weighted_average", "broadcast", "gossip", "check_mixing_matrix"]


def weighted_average(params: Params, weights) -> Params:
    r"""Server aggregation :math:`\bar\theta = \sum_r p_r \theta_r / \sum_r p_r` (thesis Algorithm 1, line 9).

    Parameters
    ----------
    params : dict of Tensor (R, ...)
    weights : array-like (R,), non-negative with a positive sum

    Returns
    -------
    dict of Tensor (...)
    """
    n_rows = check_param_dict("params", params)
    w = check_array("weights", weights, shape=(n_rows,), nonnegative=True)
    if w.sum() <= 0:
        raise ValueError("weights must have a positive sum.")
    w_t = torch.as_tensor(w / w.sum(), dtype=torch.float64, device=_device(params))
    return {k: torch.tensordot(w_t.to(v.dtype), v, dims=1) for k, v in params.items()}


def _device(params: Params) -> torch.device:
    return next(iter(params.values())).device


def broadcast(params: Params, n_rows: int) -> Params:
    """Stack ``n_rows`` copies of one model's parameters (expanded views, copied on first write)."""
    check_int("n_rows", n_rows, low=1)
    check_param_dict("params", params, stacked=False, nonempty=False)
    return {k: v.unsqueeze(0).expand(n_rows, *v.shape) for k, v in params.items()}


def check_mixing_matrix(matrix, n: int, *, doubly_stochastic: bool = True, atol: float = 1e-6) -> np.ndarray:
    """Validate a gossip matrix: shape ``(n, n)``, non-negative, rows (and columns) summing to 1."""
    n = check_int("n", n, low=1)
    doubly_stochastic = check_bool("doubly_stochastic", doubly_stochastic)
    atol = check_real("atol", atol, low=0)
    w = check_array("mixing_matrix", matrix, shape=(n, n), nonnegative=True)
    if not np.allclose(w.sum(1), 1.0, atol=atol):
        raise ValueError(f"mixing_matrix rows must sum to 1, got row sums in [{w.sum(1).min():.4g}, "
                         f"{w.sum(1).max():.4g}].")
    if doubly_stochastic and not np.allclose(w.sum(0), 1.0, atol=atol):
        raise ValueError(f"mixing_matrix must be doubly stochastic; column sums lie in [{w.sum(0).min():.4g}, "
                         f"{w.sum(0).max():.4g}].")
    return w


def gossip(params: Params, mixing_matrix) -> Params:
    r"""One gossip step :math:`\theta_i \leftarrow \sum_j W_{ij}\,\theta_j` (the consensus step of thesis eq. (2.2)).

    Parameters
    ----------
    params : dict of Tensor (K, ...)
    mixing_matrix : array-like (K, K), row-stochastic (checked; column sums are not required here)
    """
    n = check_param_dict("params", params)
    w = torch.as_tensor(check_mixing_matrix(mixing_matrix, n, doubly_stochastic=False), device=_device(params))
    return {k: torch.tensordot(w.to(v.dtype), v, dims=1) for k, v in params.items()}
