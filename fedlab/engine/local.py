r"""Local solvers: E steps of minibatch SGD on every client at once (batched) or one by one (loop).

One local step of client :math:`k` on the minibatch :math:`\mathcal B` is

.. math::
    g = \frac{1}{|\mathcal B|}\sum_{i\in\mathcal B} w_i \nabla \ell_i(\theta)
        + \lambda_{wd}\,\theta + \mu\,(\theta - \theta^{anchor}),\qquad
    v \leftarrow \beta v + g,\qquad \theta \leftarrow \Pi_{\|\theta\|\le R}(\theta - \eta v),

i.e. ``torch.optim.SGD`` semantics plus the FedProx proximal term (Li et al., 2020, with
:math:`\mu/2\|\theta-\theta^{anchor}\|^2`) and an optional projection on the ball of radius R.
Minibatch indices are drawn uniformly with replacement from ``(seed, round, stream)`` for the whole
population, so the batched and loop paths see the same samples and any round can be replayed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import check_key, torch_generator
from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.models import Model, Params, check_params
from fedlab.engine.population import ClientData, check_model_data

__all__ = ["LocalSGD", "DivergenceError", "PARAMETER_NORM_LIMIT", "draw_batches", "local_sgd", "BACKENDS"]


PARAMETER_NORM_LIMIT = 1e6
"""Divergence criterion of local training: a row whose parameters' Euclidean norm exceeds this (or is not
finite) has diverged. The workbook's models stay many orders of magnitude below it."""


class DivergenceError(FloatingPointError):
    """Raised when training diverges: a non-finite loss or parameter, a parameter norm above
    :data:`PARAMETER_NORM_LIMIT`, or a loss above :data:`fedlab.engine.runner.LOSS_GROWTH_LIMIT` times its
    initial value."""


@dataclass(frozen=True)
class LocalSGD:
    r"""Configuration of the local solver.

    Parameters
    ----------
    lr : float
        Step size :math:`\eta > 0`.
    local_steps : int
        Number E of local steps per round (>= 1).
    batch_size : int
        Minibatch size (>= 1), drawn with replacement.
    momentum : float
        Heavy-ball coefficient :math:`\beta \in [0, 1)`; the buffer restarts every round.
    weight_decay : float
        :math:`\lambda_{wd} \ge 0`.
    prox_mu : float
        Proximal coefficient :math:`\mu \ge 0` towards the anchor (FedProx, Ditto).
    radius : float or None
        Project every client's parameters on the Euclidean ball of this radius after each step.
    """

    lr: float
    local_steps: int = 1
    batch_size: int = 32
    momentum: float = 0.0
    weight_decay: float = 0.0
    prox_mu: float = 0.0
    radius: float | None = None

    def __post_init__(self) -> None:
        check_real("lr", self.lr, low=0, low_open=True)
        check_int("local_steps", self.local_steps, low=1)
        check_int("batch_size", self.batch_size, low=1)
        check_real("momentum", self.momentum, low=0, high=1, high_open=True)
        check_real("weight_decay", self.weight_decay, low=0)
        check_real("prox_mu", self.prox_mu, low=0)
        if self.radius is not None:
            check_real("radius", self.radius, low=0, low_open=True)


def draw_batches(n: Tensor, steps: int, batch_size: int, key: Sequence[int]) -> Tensor:
    """Minibatch indices for every client: shape ``(K, steps, batch_size)``, ``idx[k] < n[k]``.

    The draw depends only on ``key`` (e.g. ``(seed, round, stream)``) and the sizes ``n``, not on ``n``'s device.
    """
    check_type("n", n, Tensor)
    if n.dim() != 1 or n.is_floating_point() or n.dtype == torch.bool:
        raise TypeError(f"n must be a 1-D integer tensor of client sizes, got dtype {n.dtype} and shape "
                        f"{tuple(n.shape)}.")
    if n.numel() == 0 or bool((n < 1).any()):
        raise ValueError("n: every client needs at least one sample to draw a minibatch (and n one client).")
    steps, batch_size = check_int("steps", steps, low=1), check_int("batch_size", batch_size, low=1)
    check_key(key)
    # drawn on the CPU generator whatever the device, so every device trains on the same minibatches
    generator = torch_generator(*key)
    u = torch.rand((len(n), steps, batch_size), dtype=torch.float64, generator=generator, device=generator.device)
    idx = (u.to(n.device) * n.view(-1, 1, 1)).long()
    return torch.minimum(idx, (n - 1).view(-1, 1, 1))


def _apply_update(theta: Params, grads: Sequence[Tensor], buf: list | None, anchor: Params | None,
                  solver: LocalSGD, stacked: bool) -> list:
    """One SGD step in place on ``theta`` (stacked rows or a single client); returns the momentum buffer."""
    new_buf = []
    for i, (name, p) in enumerate(theta.items()):
        g = grads[i]
        if solver.weight_decay:
            g = g + solver.weight_decay * p
        if solver.prox_mu:
            g = g + solver.prox_mu * (p - anchor[name])
        if solver.momentum:
            g = g if buf is None else buf[i].mul_(solver.momentum).add_(g)
            new_buf.append(g)
        p.sub_(solver.lr * g)
    if solver.radius is not None:
        _project(theta, solver.radius, stacked)
    return new_buf


def _project(theta: Params, radius: float, stacked: bool) -> None:
    dims = 1 if stacked else 0
    sq = sum(p.pow(2).flatten(dims).sum(-1) for p in theta.values())
    scale = torch.clamp(radius / torch.sqrt(sq).clamp_min(1e-30), max=1.0)
    for p in theta.values():
        p.mul_(scale.view(-1, *([1] * (p.dim() - 1))) if stacked else scale)


def _batched(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor,
             weight: Tensor | None, solver: LocalSGD, anchor: Params | None) -> tuple[Params, Tensor]:
    """All rows at once: one gather for the round's minibatches, one forward/backward per step."""
    n_max = data.x.shape[1]
    flat = (rows.view(-1, 1, 1) * n_max + idx).flatten()
    shape = (*idx.shape,)
    xb = data.x.flatten(0, 1).index_select(0, flat).view(*shape, *data.feature_shape)
    yb = data.y.flatten().index_select(0, flat).view(shape)
    if weight is None:
        wb = None
    else:  # weights are per row, not per client
        wflat = (torch.arange(len(rows), device=idx.device).view(-1, 1, 1) * n_max + idx).flatten()
        wb = weight.flatten().index_select(0, wflat).view(shape)
    theta = {k: v.detach().clone() for k, v in params.items()}
    buf, total = None, torch.zeros(len(rows), dtype=torch.float64, device=data.device)
    for e in range(solver.local_steps):
        per_row, grads = model.loss_and_grad_stacked(theta, xb[:, e], yb[:, e], None if wb is None else wb[:, e])
        buf = _apply_update(theta, grads, buf, anchor, solver, stacked=True)
        total += per_row
    return theta, total / solver.local_steps


def _loop(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor,
          weight: Tensor | None, solver: LocalSGD, anchor: Params | None) -> tuple[Params, Tensor]:
    """The reference path: one client after another, the same maths as :func:`_batched`."""
    out_rows, losses_out = [], torch.zeros(len(rows), dtype=torch.float64, device=data.device)
    for r, c in enumerate(rows.tolist()):
        theta = {k: v[r].detach().clone() for k, v in params.items()}
        anchor_r = None if anchor is None else {k: v[r] for k, v in anchor.items()}
        buf = None
        for e in range(solver.local_steps):
            batch = idx[r, e]
            leaf = {k: v.requires_grad_(True) for k, v in theta.items()}
            losses = model.per_sample_loss(model.forward(leaf, data.x[c][batch]), data.y[c][batch])
            if weight is not None:
                losses = losses * weight[r][batch]
            loss = losses.mean()
            grads = torch.autograd.grad(loss, list(leaf.values()))
            theta = {k: v.detach() for k, v in leaf.items()}
            buf = _apply_update(theta, grads, buf, anchor_r, solver, stacked=False)
            losses_out[r] += loss.detach()
        out_rows.append(theta)
    stacked = {k: torch.stack([t[k] for t in out_rows]) for k in params}
    return stacked, losses_out / solver.local_steps


BACKENDS = {"batched": _batched, "loop": _loop}
_AUTO_CACHE: dict[tuple, str] = {}


def _choose_backend(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor,
                    weight: Tensor | None, solver: LocalSGD, anchor: Params | None) -> str:
    """Time one local step of each backend on these inputs (once per shape) and keep the faster."""
    if len(rows) == 1:
        return "loop"
    key = (model.signature(), len(rows), solver.batch_size, data.feature_shape, weight is not None)
    if key not in _AUTO_CACHE:
        probe = LocalSGD(lr=solver.lr, local_steps=1, batch_size=solver.batch_size)
        timings = {}
        for name, fn in BACKENDS.items():
            fn(model, params, data, rows, idx[:, :1], weight, probe, None)  # warm-up
            start = time.perf_counter()
            fn(model, params, data, rows, idx[:, :1], weight, probe, None)
            timings[name] = time.perf_counter() - start
        _AUTO_CACHE[key] = min(timings, key=timings.get)
    return _AUTO_CACHE[key]


def local_sgd(model: Model, params: Params, data: ClientData, solver: LocalSGD, *, key: Sequence[int],
              rows: Sequence[int] | Tensor | None = None, sample_weight: Tensor | None = None,
              anchor: Params | None = None, backend: str = "auto") -> tuple[Params, Tensor]:
    """Run ``solver.local_steps`` SGD steps on each row of stacked parameters.

    Parameters
    ----------
    model : Model
    params : dict of Tensor, each of shape (R, ...)
        One row of parameters per trained model (a client, or a client's mixture component).
    data : ClientData
        The whole population (K clients); minibatches are drawn for all of it from ``key``.
    solver : LocalSGD
    key : sequence of int
        Random key, e.g. ``(seed, round, stream)``.
    rows : sequence of int, shape (R,), optional
        Client whose data row r trains on; default ``range(K)``. Several rows may share a client
        (FedEM's M components) and then see the same minibatches.
    sample_weight : Tensor, shape (R, n_max), optional
        Per-row sample weights (e.g. FedEM responsibilities); default: ``data.weight`` of the row's client.
    anchor : dict of Tensor (R, ...), optional
        Proximal anchor; default: the starting parameters.
    backend : {"auto", "batched", "loop"}
        ``auto`` times both paths once per shape and keeps the faster; results agree to 1e-6.

    Returns
    -------
    params : dict of Tensor (R, ...)
        The updated parameters.
    local_loss : Tensor (R,)
        Mean minibatch loss over the local steps (float64).
    """
    check_choice("backend", backend, ("auto", *BACKENDS))
    check_model_data(model, data)
    check_type("solver", solver, LocalSGD)
    check_key(key)
    rows_t = _check_rows(rows, data.n_clients, data.device)
    n_rows = len(rows_t)
    check_params(model, params, rows=n_rows)
    if anchor is not None:
        check_params(model, anchor, rows=n_rows, name="anchor")
    weight = data.weight[rows_t] if sample_weight is None and data.weight is not None else sample_weight
    if sample_weight is not None:
        _check_sample_weight(sample_weight, (n_rows, data.x.shape[1]))
    idx = draw_batches(data.n, solver.local_steps, solver.batch_size, key)[rows_t]
    anchor = anchor if solver.prox_mu else None
    if solver.prox_mu and anchor is None:
        anchor = {k: v.detach().clone() for k, v in params.items()}
    if backend == "auto":
        backend = _choose_backend(model, params, data, rows_t, idx, weight, solver, anchor)
    new_params, local_loss = BACKENDS[backend](model, params, data, rows_t, idx, weight, solver, anchor)
    if not bool(torch.isfinite(local_loss).all()):
        bad = torch.nonzero(~torch.isfinite(local_loss)).flatten().tolist()
        raise DivergenceError(f"local training diverged (non-finite loss) on rows {bad[:10]}; "
                              f"try a smaller lr (now {solver.lr}).")
    _check_parameter_norms(new_params, solver.lr)
    return new_params, local_loss


def _check_rows(rows, n_clients: int, device: torch.device) -> Tensor:
    """The rows' clients as a 1-D long tensor of indices in [0, K) on ``device`` (default: every client once)."""
    if rows is None:
        return torch.arange(n_clients, device=device)
    arr = rows if isinstance(rows, Tensor) else np.asarray(rows)
    integer = not (arr.is_floating_point() or arr.dtype == torch.bool) if isinstance(arr, Tensor) else \
        arr.dtype.kind in "iu"
    if not integer:
        raise TypeError(f"rows must be integer client indices, got dtype {arr.dtype}.")
    rows_t = torch.as_tensor(arr, dtype=torch.long, device=device)
    if rows_t.dim() != 1 or len(rows_t) == 0 or int(rows_t.min()) < 0 or int(rows_t.max()) >= n_clients:
        raise ValueError(f"rows must be a non-empty 1-D list of client indices in [0, {n_clients}).")
    return rows_t


def _check_sample_weight(weight, shape: tuple[int, int]) -> None:
    check_type("sample_weight", weight, Tensor)
    if tuple(weight.shape) != shape or not weight.is_floating_point():
        raise ValueError(f"sample_weight must be a float tensor of shape {shape}, got {weight.dtype} "
                         f"{tuple(weight.shape)}.")
    if not bool(torch.isfinite(weight).all()) or bool((weight < 0).any()):
        raise ValueError("sample_weight must hold finite non-negative weights.")


def _check_parameter_norms(params: Params, lr: float) -> None:
    """Raise :class:`DivergenceError` when a row's parameter norm is not finite or exceeds the limit."""
    # float32 norms: a norm beyond float32's range is past the limit anyway, and no float64 copy of the rows is made
    norms = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.detach().reshape(p.shape[0], -1), dim=1)
                                                  for p in params.values()]), dim=0)
    bad = ~torch.isfinite(norms) | (norms > PARAMETER_NORM_LIMIT)
    if bool(bad.any()):
        rows = torch.nonzero(bad).flatten().tolist()
        raise DivergenceError(f"local training diverged on rows {rows[:10]}: parameter norm {float(norms[rows[0]]):.3g} "
                              f"(criterion: not finite or > {PARAMETER_NORM_LIMIT:g}); try a smaller lr (now {lr}).")
