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

The authors' training recipes need more, each an option of :class:`LocalSGD` whose default keeps the plain
solver: ``optimizer="adam"``/``"adamw"`` (``torch.optim.Adam``/``AdamW`` semantics), ``epochs`` (shuffled passes
over each client's data with a partial last batch, so a larger client takes more steps), ``schedule`` (the step
size of round t is ``lr * schedule(t)``: :class:`MultiStepLR`, :class:`InverseSqrtLR`, :class:`CosineLR`), and
``keep_state`` (each client's momentum buffer or Adam moments live from round to round, as a client that keeps its
``torch.optim`` optimizer does): :func:`local_train` then takes and returns the :class:`OptimizerState`.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch
from torch import Tensor

from fedlab._rng import check_key, torch_generator
from fedlab._validation import check_bool, check_callable, check_choice, check_int, check_real, check_type
from fedlab.models import Model, Params, check_param_dict, check_params
from fedlab.engine.population import ClientData, check_model_data

__all__ = ["LocalSGD", "OPTIMIZERS", "MultiStepLR", "InverseSqrtLR", "CosineLR", "OptimizerState", "LocalResult",
           "SCHEDULES", "RECIPE_OPTIONS", "solver_from_recipe", "initial_optimizer_state", "DivergenceError", "PARAMETER_NORM_LIMIT", "draw_batches", "draw_epochs", "local_train", "local_sgd",
           "BACKENDS"]

OPTIMIZERS = ("sgd", "adam", "adamw")


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
    optimizer : {"sgd", "adam", "adamw"}
        The update rule, as ``torch.optim.SGD``, ``Adam`` (weight decay added to the gradient) or ``AdamW``
        (decoupled weight decay); ``momentum`` is SGD's, ``betas`` and ``eps`` Adam's.
    epochs : int or None
        When given, a round is ``epochs`` shuffled passes over each client's data in batches of ``batch_size``
        (a partial last batch; a client with n samples takes ``epochs * ceil(n / batch_size)`` steps) instead of
        ``local_steps`` batches drawn with replacement.
    schedule : callable or None
        The step size of round t is ``lr * schedule(t)`` (e.g. :class:`MultiStepLR`).
    keep_state : bool
        Keep each client's optimizer state (momentum buffer, Adam moments and step count) from round to round;
        the algorithm passes it to :func:`local_train` and stores what it returns.
    """

    lr: float
    local_steps: int = 1
    batch_size: int = 32
    momentum: float = 0.0
    weight_decay: float = 0.0
    prox_mu: float = 0.0
    radius: float | None = None
    optimizer: str = "sgd"
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    epochs: int | None = None
    schedule: Callable[[int], float] | None = None
    keep_state: bool = False

    def __post_init__(self) -> None:
        check_real("lr", self.lr, low=0, low_open=True)
        check_int("local_steps", self.local_steps, low=1)
        check_int("batch_size", self.batch_size, low=1)
        check_real("momentum", self.momentum, low=0, high=1, high_open=True)
        check_real("weight_decay", self.weight_decay, low=0)
        check_real("prox_mu", self.prox_mu, low=0)
        if self.radius is not None:
            check_real("radius", self.radius, low=0, low_open=True)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.optimizer != "sgd" and self.momentum:
            raise ValueError(f"momentum is SGD's; optimizer {self.optimizer!r} uses betas, got momentum={self.momentum}.")
        if not isinstance(self.betas, tuple) or len(self.betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2), got {self.betas!r}.")
        for i, beta in enumerate(self.betas):
            check_real(f"betas[{i}]", beta, low=0, high=1, high_open=True)
        check_real("eps", self.eps, low=0, low_open=True)
        if self.epochs is not None:
            check_int("epochs", self.epochs, low=1)
        if self.schedule is not None:
            check_callable("schedule", self.schedule)
        check_bool("keep_state", self.keep_state)

    def lr_at(self, round_index: int) -> float:
        """The step size of round ``round_index``: ``lr * schedule(round_index)``."""
        round_index = check_int("round_index", round_index, low=0)
        factor = 1.0 if self.schedule is None else check_real("schedule(round)", self.schedule(round_index), low=0)
        return self.lr * factor


@dataclass(frozen=True)
class MultiStepLR:
    """Step-size factor ``gamma ** (number of milestones <= t)``: ÷10 at rounds 100 and 150 is
    ``MultiStepLR((100, 150))`` (the FedEM and kNN-Per code's schedule)."""

    milestones: tuple
    gamma: float = 0.1

    def __post_init__(self) -> None:
        check_type("milestones", self.milestones, tuple)
        rounds = [check_int("milestones", m, low=1) for m in self.milestones]
        if not rounds or rounds != sorted(set(rounds)):
            raise ValueError(f"milestones must be an increasing tuple of rounds >= 1, got {self.milestones!r}.")
        check_real("gamma", self.gamma, low=0, low_open=True)

    def __call__(self, round_index: int) -> float:
        return self.gamma ** sum(round_index >= m for m in self.milestones)


@dataclass(frozen=True)
class InverseSqrtLR:
    r"""Step-size factor :math:`1/\sqrt{\max(t, 1)}` at round t: the authors' "sqrt" schedule (a ``LambdaLR`` stepped
    once a round, whose first two rounds both use the full step)."""

    def __call__(self, round_index: int) -> float:
        return 1.0 / float(np.sqrt(max(round_index, 1)))


@dataclass(frozen=True)
class CosineLR:
    r"""Step-size factor :math:`f + (1 - f)\,(1 + \cos(\pi t / T))/2` over ``total_rounds`` T, then ``floor`` f."""

    total_rounds: int
    floor: float = 0.0

    def __post_init__(self) -> None:
        check_int("total_rounds", self.total_rounds, low=1)
        check_real("floor", self.floor, low=0, high=1)

    def __call__(self, round_index: int) -> float:
        t = min(round_index, self.total_rounds)
        return self.floor + (1 - self.floor) * 0.5 * (1 + float(np.cos(np.pi * t / self.total_rounds)))


@dataclass(frozen=True)
class OptimizerState:
    """Each row's optimizer state after a round: SGD's momentum buffer ``buf``, or Adam's moments ``m`` and ``v``,
    by parameter name, stacked ``(R, ...)``, and the steps each row has taken, ``steps`` (R,).

    :meth:`select` and :meth:`assign` keep a population's state when only some clients train in a round.
    """

    moments: dict
    steps: Tensor

    def select(self, rows) -> "OptimizerState":
        """The state of ``rows`` (indices into this state's rows, or a slice of them)."""
        idx = rows if isinstance(rows, slice) else torch.as_tensor(np.asarray(rows), dtype=torch.long,
                                                                      device=self.steps.device)
        return OptimizerState({k: {n: t[idx] for n, t in m.items()} for k, m in self.moments.items()},
                              self.steps[idx])

    def assign(self, rows, part: "OptimizerState") -> "OptimizerState":
        """A copy of this state whose ``rows`` hold ``part``'s."""
        idx = torch.as_tensor(np.asarray(rows), dtype=torch.long, device=self.steps.device)
        moments = {}
        for k, m in self.moments.items():
            moments[k] = {}
            for n, t in m.items():
                t = t.clone()
                t[idx] = part.moments[k][n]
                moments[k][n] = t
        steps = self.steps.clone()
        steps[idx] = part.steps
        return OptimizerState(moments, steps)

    @classmethod
    def concat(cls, states: Sequence["OptimizerState"]) -> "OptimizerState":
        """The rows of ``states`` one after the other (the inverse of :meth:`select` on consecutive ranges)."""
        first = states[0]
        return cls({k: {n: torch.cat([s.moments[k][n] for s in states]) for n in m} for k, m in first.moments.items()},
                   torch.cat([s.steps for s in states]))

    def to(self, device) -> "OptimizerState":
        return OptimizerState({k: {n: t.to(device) for n, t in m.items()} for k, m in self.moments.items()},
                              self.steps.to(device))


def initial_optimizer_state(solver: LocalSGD, params: Params) -> OptimizerState:
    """The zero state of ``params``' rows (as a fresh ``torch.optim`` optimizer: no step taken)."""
    check_type("solver", solver, LocalSGD)
    rows = check_param_dict("params", params)
    names = ("buf",) if solver.optimizer == "sgd" else ("m", "v")
    return OptimizerState({k: {n: torch.zeros_like(p) for n, p in params.items()} for k in names},
                          torch.zeros(rows, dtype=torch.long, device=next(iter(params.values())).device))


SCHEDULES: dict[str, Callable[[int], Callable[[int], float]]] = {
    "multi_step": lambda rounds: MultiStepLR(tuple(sorted({max(1, rounds // 2), max(1, 3 * (rounds // 4))}))),
    "sqrt": lambda rounds: InverseSqrtLR(),
    "cosine": lambda rounds: CosineLR(rounds),
}
"""The authors' step-size schedules by their code's names, built for a number of rounds: ``multi_step`` divides
the step by 10 at half and three quarters of the rounds, ``sqrt`` is :class:`InverseSqrtLR`."""
RECIPE_OPTIONS = frozenset({"momentum", "weight_decay", "optimizer", "epochs", "keep_state", "schedule"})
"""What a recipe (:func:`solver_from_recipe`) may set."""


def solver_from_recipe(recipe, *, lr: float, local_steps: int = 1, batch_size: int = 32, rounds: int,
                       method: type | None = None) -> LocalSGD:
    """The local solver of a training recipe: ``recipe`` maps :data:`RECIPE_OPTIONS` to values (JSON-ready; the
    ``schedule`` by its name in :data:`SCHEDULES`, built for ``rounds``). For an algorithm class ``method`` that
    cannot keep its optimizer across rounds (its ``keeps_optimizer_state`` is false) the kept state and the
    schedule are left out."""
    recipe = dict(check_type("recipe", recipe, dict))
    unknown = sorted(set(recipe) - RECIPE_OPTIONS)
    if unknown:
        raise ValueError(f"recipe takes {sorted(RECIPE_OPTIONS)}, got {unknown}.")
    schedule = recipe.pop("schedule", None)
    if schedule is not None:
        recipe["schedule"] = SCHEDULES[check_choice("recipe['schedule']", schedule, SCHEDULES)](
            check_int("rounds", rounds, low=1))
    if method is not None and not getattr(check_type("method", method, type), "keeps_optimizer_state", False):
        recipe.update(keep_state=False, schedule=None)
    plain = LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size)
    try:
        return replace(plain, **recipe)
    except (TypeError, ValueError) as err:
        raise type(err)(f"recipe: {err}") from None


class LocalResult(NamedTuple):
    """What :func:`local_train` returns: the rows' parameters, their mean minibatch loss (float64) and their
    optimizer state (for ``keep_state``)."""

    params: Params
    local_loss: Tensor
    optimizer_state: OptimizerState


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


_SORT_CHUNK = 32   # clients a sort in draw_epochs: sorted by size, each sort cut to its largest client


def draw_epochs(n: Tensor, epochs: int, batch_size: int, key: Sequence[int]) -> tuple[Tensor, Tensor]:
    """Shuffled passes over every client's data: indices ``(K, S, batch_size)`` and a mask of the valid entries.

    Each of the ``epochs`` passes is a fresh permutation of client k's ``n[k]`` samples cut into batches of
    ``batch_size`` (the last one partial); ``S = epochs * ceil(max(n) / batch_size)``, and a client's steps beyond
    its own ``ceil(n[k] / batch_size)`` per pass hold no valid entry. The draw depends only on ``key`` and ``n``.
    """
    check_type("n", n, Tensor)
    if n.dim() != 1 or n.is_floating_point() or n.dtype == torch.bool or n.numel() == 0 or bool((n < 1).any()):
        raise ValueError("n must be a non-empty 1-D integer tensor of client sizes, each >= 1.")
    epochs, batch_size = check_int("epochs", epochs, low=1), check_int("batch_size", batch_size, low=1)
    check_key(key)
    n_cpu, n_max = n.cpu(), int(n.max())       # drawn on the CPU whatever the device (and the default device)
    per_pass = -(-n_max // batch_size)
    generator = torch_generator(*key)
    u = torch.rand((len(n), epochs, n_max), dtype=torch.float64, generator=generator, device=generator.device)
    positions = torch.arange(n_max, device=n_cpu.device)
    u.masked_fill_(positions >= n_cpu.view(-1, 1, 1), 2.0)          # padding sorts last
    order = positions.expand(len(n), epochs, n_max).clone()
    u_np, order_np = u.numpy(), order.numpy()   # numpy's sort: about 2.5 times torch's on the CPU
    for part in torch.argsort(n_cpu, stable=True).split(_SORT_CHUNK):   # clients of similar sizes, cut to the largest
        length, part = int(n_cpu[part].max()), part.numpy()
        order_np[part, :, :length] = np.argsort(u_np[part, :, :length], axis=-1)
    pad = per_pass * batch_size - n_max
    order = torch.nn.functional.pad(order, (0, pad))
    valid = torch.nn.functional.pad(positions < n_cpu.view(-1, 1, 1), (0, pad)).expand_as(order)
    shape = (len(n), epochs * per_pass, batch_size)
    return order.reshape(shape).to(n.device), valid.reshape(shape).to(n.device)


def _start_state(solver: LocalSGD, params: Params, state: OptimizerState | None) -> dict:
    """The rows' optimizer state as working tensors (copies, updated in place by :func:`_step`), and ``"scratch"``,
    where :func:`_step` writes each parameter's scaled step.

    SGD without momentum reads and writes no buffer: its buffers are not copied but handed on unchanged in ``"held"``
    (the starting state's, or zeros broadcast from one element), and only the step counts are working copies."""
    scratch = [None] * len(params)
    if solver.optimizer == "sgd" and not solver.momentum:
        first = next(iter(params.values()))
        if state is None:
            held = {"buf": [torch.zeros((), dtype=p.dtype, device=p.device).expand(p.shape) for p in params.values()]}
            steps = torch.zeros(first.shape[0], dtype=torch.long, device=first.device)
        else:
            held, steps = {k: [m[n] for n in params] for k, m in state.moments.items()}, state.steps.clone()
        return {"moments": {}, "held": held, "steps": steps, "fresh": bool((steps == 0).any()), "scratch": scratch}
    state = initial_optimizer_state(solver, params) if state is None else state
    return {"moments": {k: [m[n].clone() for n in params] for k, m in state.moments.items()},
            "steps": state.steps.clone(), "fresh": bool((state.steps == 0).any()), "scratch": scratch}


def _step(theta: Params, grads: Sequence[Tensor], work: dict, anchor: Params | None, solver: LocalSGD,
          lr: float | Tensor, stacked: bool, own_grads: bool = False, active: Tensor | None = None) -> None:
    """One optimizer step in place on ``theta`` (stacked rows or a single client) and on its state ``work``.

    SGD's step ``lr * g`` takes no temporary, with ``p.sub_(lr * g)``'s rounding (``p.add_(g, alpha=-lr)`` would fuse
    the multiply-add and round differently): it is scaled in place in ``g`` when ``g`` belongs to this step (made
    here, or ``own_grads``: the gradients were computed for this step alone, and each fills memory of its own), else
    written into ``work["scratch"]``, made at the first step and reused by the next ones. ``active`` (stacked plain
    SGD only): the rows that step; the others' step is zeroed (exact: ``x * 1`` and ``p - 0`` round to themselves).
    ``lr`` may be a tensor of per-row step sizes (stacked SGD: replicas of a step-size grid merged by
    :func:`~fedlab.engine.lockstep`); ``g * lr`` then rounds as with each row's own float."""
    work["steps"] += 1 if active is None else active
    own_grads = own_grads and _unshared(grads)
    for i, (name, p) in enumerate(theta.items()):
        g, own = grads[i], own_grads
        if solver.weight_decay and solver.optimizer != "adamw":
            g, own = g + solver.weight_decay * p, True
        if solver.prox_mu:
            g, own = g + solver.prox_mu * (p - anchor[name]), True
        if active is not None:
            g, own = g * _rows_view(active.to(g.dtype), g, stacked), True
        if solver.optimizer == "sgd":
            if solver.momentum:
                buf, own = work["moments"]["buf"][i], False
                if work["fresh"]:       # some row takes its first step: its buffer starts at its gradient
                    first = _rows_view(work["steps"] == 1, p, stacked)
                    g = buf.copy_(torch.where(first, g, buf * solver.momentum + g))
                else:
                    g = buf.mul_(solver.momentum).add_(g)
            row_lr = _rows_view(lr.to(g.dtype), g, stacked) if isinstance(lr, Tensor) else lr
            p.sub_(g.mul_(row_lr) if own else _scaled(g, row_lr, work["scratch"], i))
        else:
            _adam(p, g, work, i, solver, lr, stacked)
    if solver.radius is not None:
        _project(theta, solver.radius, stacked)


def _unshared(tensors: Sequence[Tensor]) -> bool:
    """Whether each tensor fills memory of its own: dense (contiguous up to the order of its axes, so no element is
    stored twice) and sharing no storage with another of ``tensors``."""
    for t in tensors:
        expected = 1
        for stride, size in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n > 1):
            if stride != expected:
                return False
            expected *= size
    return len({t.untyped_storage().data_ptr() for t in tensors}) == len(tensors)


def _scaled(g: Tensor, lr: float | Tensor, scratch: list, i: int) -> Tensor:
    """``lr * g`` written into ``scratch[i]`` (allocated like ``g`` when missing or of another shape)."""
    if scratch[i] is None or scratch[i].shape != g.shape:
        scratch[i] = torch.empty_like(g)
    return torch.mul(g, lr, out=scratch[i])


def _adam(p: Tensor, g: Tensor, work: dict, i: int, solver: LocalSGD, lr: float, stacked: bool) -> None:
    """``torch.optim.Adam``/``AdamW``'s update of one parameter, with each row's own step count."""
    beta1, beta2 = solver.betas
    if solver.optimizer == "adamw" and solver.weight_decay:
        p.mul_(1 - lr * solver.weight_decay)
    m, v = work["moments"]["m"][i], work["moments"]["v"][i]
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    steps = work["steps"].to(torch.float64)
    step_size = _rows_view((lr / (1 - beta1 ** steps)).to(p.dtype), p, stacked)
    correction = _rows_view(torch.sqrt(1 - beta2 ** steps).to(p.dtype), p, stacked)
    p.sub_(step_size * m / (v.sqrt() / correction + solver.eps))


def _rows_view(values: Tensor, p: Tensor, stacked: bool) -> Tensor:
    """Per-row values shaped to broadcast against a stacked parameter (a scalar for a single client)."""
    return values.view(-1, *([1] * (p.dim() - 1))) if stacked else values.reshape(())


def _project(theta: Params, radius: float, stacked: bool) -> None:
    dims = 1 if stacked else 0
    sq = sum(p.pow(2).flatten(dims).sum(-1) for p in theta.values())
    scale = torch.clamp(radius / torch.sqrt(sq).clamp_min(1e-30), max=1.0)
    for p in theta.values():
        p.mul_(scale.view(-1, *([1] * (p.dim() - 1))) if stacked else scale)


def _batched(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor, valid: Tensor | None,
             weight: Tensor | None, solver: LocalSGD, anchor: Params | None, lr: float | Tensor,
             state: OptimizerState | None) -> LocalResult:
    """All rows at once: one forward/backward per step on that step's minibatches, gathered when the step comes (a
    gather of the whole round's would write and re-read every row's features once more). A step in which a row has no
    valid entry (a smaller client's end of an epoch) trains only the rows that have one, and leaves the others and
    their state as they were."""
    n_max = data.x.shape[1]
    shape = (*idx.shape,)
    copies = _copies(rows, idx, valid)   # rows sharing a client, and so its minibatches, are gathered once
    flat = (rows.view(-1, 1, 1) * n_max + idx)[::copies]
    yb = data.y.flatten().index_select(0, flat.flatten()).view(-1, *shape[1:])
    if weight is None:
        wb = None
    else:  # weights are per row, not per client
        wflat = (torch.arange(len(rows), device=idx.device).view(-1, 1, 1) * n_max + idx).flatten()
        wb = weight.flatten().index_select(0, wflat).view(shape)
    if valid is not None:     # a partial batch's mean over its valid entries
        share = valid.to(data.x.dtype) * (shape[-1] / valid.sum(-1, keepdim=True).clamp_min(1))
        wb = share if wb is None else wb * share
    theta = {k: v.detach().clone() for k, v in params.items()}
    work = _start_state(solver, theta, state)
    own_grads = type(model).loss_and_grad_stacked is Model.loss_and_grad_stacked   # its gradients: autograd's
    total = torch.zeros(len(rows), dtype=torch.float64, device=data.device)
    step_active = None if valid is None else valid[::copies].any(-1)    # (R / copies, S): the groups each step trains
    n_active = [len(flat)] * shape[1] if valid is None else step_active.sum(0).tolist()
    for e in range(shape[1]):
        if n_active[e] == 0:
            continue
        groups = None if n_active[e] == len(flat) else torch.nonzero(step_active[:, e]).flatten()
        batch = _StepBatch(data, flat[:, e], yb[:, e], None if wb is None else wb[:, e], copies)
        if groups is None or _masks_rows(solver, n_active[e], len(flat)):
            active = None if groups is None else step_active[:, e].repeat_interleave(copies)
            total += _train_step(model, theta, work, anchor, solver, lr, own_grads, batch, active)
            work["fresh"] = False
        else:
            sel = (groups.view(-1, 1) * copies + torch.arange(copies, device=groups.device)).flatten()
            total[sel] += _train_rows_step(model, theta, work, anchor, solver, lr, own_grads, batch.of(groups, sel),
                                           sel)
    return LocalResult(theta, total / _steps_taken(valid, shape), _state_of(work, theta))


class _StepBatch(NamedTuple):
    """One step's minibatches: flat indices of the features (one row of them per group of ``copies`` rows), their
    labels, and the per-row weights."""

    data: ClientData
    flat: Tensor
    y: Tensor
    weight: Tensor | None
    copies: int

    def of(self, groups: Tensor, rows: Tensor) -> "_StepBatch":
        return self._replace(flat=self.flat[groups], y=self.y[groups],
                             weight=None if self.weight is None else self.weight[rows])

    def loss_and_grad(self, model: Model, theta: Params) -> tuple[Tensor, list[Tensor]]:
        x = self.data.x.flatten(0, 1).index_select(0, self.flat.flatten())
        x = x.view(*self.flat.shape, *self.data.feature_shape)
        return model.loss_and_grad_stacked(theta, x, self.y, self.weight,
                                           **({} if self.copies == 1 else {"copies": self.copies}))


def _masks_rows(solver: LocalSGD, n_active: int, n_groups: int) -> bool:
    """Whether a step in which only ``n_active`` of ``n_groups`` groups of rows have data trains every row with a
    zero step for the others (plain SGD, when most rows train: cheaper than taking the rows out and back)."""
    return solver.optimizer == "sgd" and not solver.momentum and solver.radius is None and 2 * n_active >= n_groups


def _train_step(model: Model, theta: Params, work: dict, anchor: Params | None, solver: LocalSGD,
                lr: float | Tensor, own_grads: bool, batch: _StepBatch, active: Tensor | None = None) -> Tensor:
    """One optimizer step of every row in place; returns the rows' minibatch losses. With ``active`` (plain SGD,
    see :func:`_masks_rows`), the other rows, whose minibatches hold no sample and so have a zero loss, keep their
    parameters and step counts: their step is multiplied by zero."""
    per_row, grads = batch.loss_and_grad(model, theta)
    _step(theta, grads, work, anchor, solver, lr, stacked=True, own_grads=own_grads, active=active)
    return per_row


def _train_rows_step(model: Model, theta: Params, work: dict, anchor: Params | None, solver: LocalSGD,
                     lr: float | Tensor, own_grads: bool, batch: _StepBatch, rows: Tensor) -> Tensor:
    """One optimizer step of ``rows`` alone: their parameters and state taken out, stepped, and written back."""
    sub = {k: v[rows] for k, v in theta.items()}
    sub_work = {"moments": {k: [t[rows] for t in ts] for k, ts in work["moments"].items()},
                "steps": work["steps"][rows], "fresh": work["fresh"], "scratch": [None] * len(theta)}
    per_row = _train_step(model.select_rows(rows), sub, sub_work,
                          None if anchor is None else {k: v[rows] for k, v in anchor.items()}, solver,
                          lr[rows] if isinstance(lr, Tensor) else lr, own_grads, batch)
    for k, v in theta.items():
        v[rows] = sub[k]
    for k, ts in work["moments"].items():
        for t, t_sub in zip(ts, sub_work["moments"][k]):
            t[rows] = t_sub
    work["steps"][rows] = sub_work["steps"]
    return per_row


def _copies(rows: Tensor, idx: Tensor, valid: Tensor | None) -> int:
    """``c`` when the rows come in runs of ``c`` consecutive rows of one client, with the same minibatches (FedEM's
    components, ``rows = repeat(clients, M)``), else 1."""
    others = torch.nonzero(rows != rows[0])
    c = int(others[0]) if len(others) else len(rows)     # the first run's length
    if c == 1 or len(rows) % c:
        return 1

    def runs_agree(t: Tensor | None) -> bool:
        return t is None or bool((t.view(-1, c, *t.shape[1:]) == t[::c].unsqueeze(1)).all())

    return c if runs_agree(rows) and runs_agree(idx) and runs_agree(valid) else 1


def _steps_taken(valid: Tensor | None, shape: tuple) -> Tensor | float:
    """Each row's number of steps (a float for draws with replacement, where every row takes them all)."""
    return float(shape[1]) if valid is None else valid.any(-1).sum(-1).to(torch.float64)


def _state_of(work: dict, theta: Params) -> OptimizerState:
    moments = {**work.get("held", {}), **work["moments"]}
    return OptimizerState({k: dict(zip(theta, m)) for k, m in moments.items()}, work["steps"])


def _loop(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor, valid: Tensor | None,
          weight: Tensor | None, solver: LocalSGD, anchor: Params | None, lr: float | Tensor,
          state: OptimizerState | None) -> LocalResult:
    """The reference path: one client after another, the same maths as :func:`_batched`. Each row trains in place in
    its row of the stacked result (nothing to stack afterwards), and its steps reuse one set of step buffers."""
    stacked = _loop_output(params)
    losses_out = torch.zeros(len(rows), dtype=torch.float64, device=data.device)
    start = _start_state(solver, params, state)
    for r, c in enumerate(rows.tolist()):
        theta = {k: v[r] for k, v in stacked.items()}
        for k, p in theta.items():
            p.copy_(params[k][r].detach())
        anchor_r = None if anchor is None else {k: v[r] for k, v in anchor.items()}
        work = {"moments": {k: [t[r] for t in m] for k, m in start["moments"].items()},
                "steps": start["steps"][r], "fresh": bool(start["steps"][r] == 0), "scratch": start["scratch"]}
        for e in range(idx.shape[1]):
            batch = idx[r, e] if valid is None else idx[r, e][valid[r, e]]
            if len(batch) == 0:
                continue
            leaf = {k: v.detach().requires_grad_(True) for k, v in theta.items()}
            losses = model.per_sample_loss(model.forward(leaf, data.x[c][batch]), data.y[c][batch])
            if weight is not None:
                losses = losses * weight[r][batch]
            loss = losses.mean()
            grads = torch.autograd.grad(loss, list(leaf.values()))
            _step(theta, grads, work, anchor_r, solver, float(lr[r]) if isinstance(lr, Tensor) else lr, stacked=False,
                  own_grads=True)
            work["fresh"] = False
            losses_out[r] += loss.detach()
    return LocalResult(stacked, losses_out / _steps_taken(valid, idx.shape), _state_of(start, stacked))


_LOOP_OUTPUT = threading.local()
_storage_use_count = getattr(torch._C, "_storage_Use_Count", None)   # absent: every call allocates


def _loop_output(params: Params) -> Params:
    """Empty tensors shaped like ``params`` for :func:`_loop` to train its rows in.

    On the CPU, fresh memory costs a page fault per 4 KiB page at its first write: for 20 rows of the FEMNIST CNN
    (160 MiB) about 70 ms, 3 % of a round, which a plain PyTorch loop does not pay. So this thread's previous output
    is handed out again when nothing but this cache holds its memory any more (the caller dropped it, e.g. after
    averaging). The cache keeps the buffers and gives out views, so that a caller's reference, or a view of it,
    counts as a user of the memory. It holds one output per thread (for 100 rows of the FEMNIST CNN, 0.9
    GiB) until the next call."""
    if next(iter(params.values())).device.type != "cpu" or _storage_use_count is None:
        return {k: torch.empty(v.shape, dtype=v.dtype, device=v.device) for k, v in params.items()}
    layout = tuple((k, tuple(v.shape), v.dtype) for k, v in params.items())
    held = getattr(_LOOP_OUTPUT, "held", None)
    if held is None or held[0] != layout or any(_storage_use_count(b.untyped_storage()._cdata) > 2
                                                 for b in held[1].values()):   # 2: the buffer and this call's handle
        held = (layout, {k: torch.empty(v.shape, dtype=v.dtype, device="cpu") for k, v in params.items()})
        _LOOP_OUTPUT.held = held
    return {k: b[:] for k, b in held[1].items()}


BACKENDS = {"batched": _batched, "loop": _loop}
_AUTO_CACHE: dict[tuple, str] = {}
_PROBES = 3


def _choose_backend(model: Model, params: Params, data: ClientData, rows: Tensor, idx: Tensor,
                    weight: Tensor | None, solver: LocalSGD) -> str:
    """Time one local step of each backend on these inputs (once per shape) and keep the faster.

    Each backend's time is its best of up to ``_PROBES`` runs, taken in turns after a warm-up, so that the process
    being paused (other programs on the cores) in one run does not decide; after two runs each, they stop early once
    one backend's best is under half the other's."""
    if len(rows) == 1:
        return "loop"
    key = (model.signature(), len(rows), solver.batch_size, data.feature_shape, weight is not None)
    if key not in _AUTO_CACHE:
        probe = LocalSGD(lr=solver.lr, local_steps=1, batch_size=solver.batch_size)
        calls = {name: (lambda fn=fn: fn(model, params, data, rows, idx[:, :1], None, weight, probe, None, probe.lr,
                                       None)) for name, fn in BACKENDS.items()}
        for step in calls.values():
            step()                                                            # warm-up
        best = {name: float("inf") for name in calls}
        for turn in range(_PROBES):
            for name, step in calls.items():
                start = time.perf_counter()
                step()
                best[name] = min(best[name], time.perf_counter() - start)
            if turn and 2 * min(best.values()) < max(best.values()):
                break
        _AUTO_CACHE[key] = min(best, key=best.get)
    return _AUTO_CACHE[key]


def local_train(model: Model, params: Params, data: ClientData, solver: LocalSGD, *, key: Sequence[int],
                rows: Sequence[int] | Tensor | None = None, sample_weight: Tensor | None = None,
                anchor: Params | None = None, backend: str = "auto", round_index: int = 0,
                optimizer_state: OptimizerState | None = None) -> LocalResult:
    """One round of local training on each row of stacked parameters: :func:`local_sgd`'s work, with the round's
    step size (``solver.lr_at(round_index)``) and the rows' optimizer state.

    ``optimizer_state`` (from the previous round's :class:`LocalResult`, for ``solver.keep_state``) is where the
    rows' momentum buffers or Adam moments start; ``None`` starts them at zero, as a fresh ``torch.optim``
    optimizer. The other parameters and the divergence checks are :func:`local_sgd`'s. Returns a
    :class:`LocalResult` ``(params, local_loss, optimizer_state)``; ``optimizer_state`` is new (the input is not
    changed), so any round can be replayed.
    """
    check_choice("backend", backend, ("auto", *BACKENDS))
    check_model_data(model, data)
    check_type("solver", solver, LocalSGD)
    check_key(key)
    lr = solver.lr_at(round_index)
    rows_t = _check_rows(rows, data.n_clients, data.device)
    n_rows = len(rows_t)
    check_params(model, params, rows=n_rows)
    if anchor is not None:
        check_params(model, anchor, rows=n_rows, name="anchor")
    if optimizer_state is not None:
        _check_optimizer_state(optimizer_state, solver, params)
    weight = data.weight[rows_t] if sample_weight is None and data.weight is not None else sample_weight
    if sample_weight is not None:
        _check_sample_weight(sample_weight, (n_rows, data.x.shape[1]))
    if solver.epochs is None:
        idx, valid = draw_batches(data.n, solver.local_steps, solver.batch_size, key)[rows_t], None
    else:
        idx, valid = (t[rows_t] for t in draw_epochs(data.n, solver.epochs, solver.batch_size, key))
    anchor = anchor if solver.prox_mu else None
    if solver.prox_mu and anchor is None:
        anchor = {k: v.detach().clone() for k, v in params.items()}
    job = LocalJob(model, params, data, rows_t, idx, valid, weight, solver, anchor, lr, optimizer_state, backend)
    submit = getattr(JOB_HOOK, "submit", None)   # set in the threads of fedlab.engine.replicas.lockstep
    return submit(job) if submit is not None else execute(job)


class LocalJob(NamedTuple):
    """One validated :func:`local_train` call, minibatches drawn: what a backend needs."""

    model: Model
    params: Params
    data: ClientData
    rows: Tensor
    idx: Tensor
    valid: Tensor | None
    weight: Tensor | None
    solver: LocalSGD
    anchor: Params | None
    lr: float | Tensor          # a tensor (R,): per-row step sizes of plain-SGD jobs merged by lockstep
    optimizer_state: OptimizerState | None
    backend: str


JOB_HOOK = threading.local()
"""``JOB_HOOK.submit(job) -> LocalResult``, when set in a thread, receives that thread's :class:`LocalJob` s instead
of :func:`execute` (:func:`fedlab.engine.replicas.lockstep` merges the jobs of its replicas)."""


def execute(job: LocalJob) -> LocalResult:
    """Run a :class:`LocalJob` on its backend (``"auto"``: the faster one) and check the result for divergence."""
    backend = job.backend
    if backend == "auto":
        backend = _choose_backend(job.model, job.params, job.data, job.rows, job.idx, job.weight, job.solver)
    result = BACKENDS[backend](job.model, job.params, job.data, job.rows, job.idx, job.valid, job.weight, job.solver,
                               job.anchor, job.lr, job.optimizer_state)
    if not bool(torch.isfinite(result.local_loss).all()):
        bad = torch.nonzero(~torch.isfinite(result.local_loss)).flatten().tolist()
        raise DivergenceError(f"local training diverged (non-finite loss) on rows {bad[:10]}; "
                              f"try a smaller lr (now {_lr_text(job.lr)}).")
    _check_parameter_norms(result.params, job.lr)
    return result


def local_sgd(model: Model, params: Params, data: ClientData, solver: LocalSGD, *, key: Sequence[int],
              rows: Sequence[int] | Tensor | None = None, sample_weight: Tensor | None = None,
              anchor: Params | None = None, backend: str = "auto") -> tuple[Params, Tensor]:
    """Run ``solver.local_steps`` SGD steps (or ``solver.epochs`` passes) on each row of stacked parameters.

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

    The optimizer state starts at zero (a round's momentum restarts) and the step size is ``solver.lr``; an
    algorithm that keeps the state or follows a schedule calls :func:`local_train`.
    """
    check_type("solver", solver, LocalSGD)
    if solver.keep_state or solver.schedule is not None:
        raise ValueError("solver.keep_state and solver.schedule need the round and the rows' optimizer state: "
                         "local_sgd starts a fresh optimizer at the solver's lr (use local_train), got "
                         f"keep_state={solver.keep_state}, schedule={solver.schedule!r}.")
    result = local_train(model, params, data, solver, key=key, rows=rows, sample_weight=sample_weight,
                         anchor=anchor, backend=backend)
    return result.params, result.local_loss


def _check_optimizer_state(state, solver: LocalSGD, params: Params) -> None:
    check_type("optimizer_state", state, OptimizerState)
    names = {"buf"} if solver.optimizer == "sgd" else {"m", "v"}
    rows = next(iter(params.values())).shape[0]
    shapes_ok = set(state.moments) == names and all(
        set(m) == set(params) and all(m[k].shape == params[k].shape for k in params) for m in state.moments.values())
    if not shapes_ok or tuple(state.steps.shape) != (rows,):
        raise ValueError(f"optimizer_state must hold {sorted(names)} for the {rows} rows of params (a state of "
                         f"optimizer {solver.optimizer!r}, from local_train), got {sorted(state.moments)} for "
                         f"{tuple(state.steps.shape)} rows.")


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


def _lr_text(lr: float | Tensor) -> str:
    return f"{sorted(set(lr.tolist()))} per row" if isinstance(lr, Tensor) else str(lr)


def _check_parameter_norms(params: Params, lr: float | Tensor) -> None:
    """Raise :class:`DivergenceError` when a row's parameter norm is not finite or exceeds the limit."""
    # float32 norms: a norm beyond float32's range is past the limit anyway, and no float64 copy of the rows is made
    norms = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.detach().reshape(p.shape[0], -1), dim=1)
                                                  for p in params.values()]), dim=0)
    bad = ~torch.isfinite(norms) | (norms > PARAMETER_NORM_LIMIT)
    if bool(bad.any()):
        rows = torch.nonzero(bad).flatten().tolist()
        raise DivergenceError(f"local training diverged on rows {rows[:10]}: parameter norm {float(norms[rows[0]]):.3g} "
                              f"(criterion: not finite or > {PARAMETER_NORM_LIMIT:g}); "
                              f"try a smaller lr (now {_lr_text(lr)}).")
