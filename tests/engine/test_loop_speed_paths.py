"""The local solvers' fast paths keep the plain maths: rows trained in place in reused memory, SGD steps without
temporaries, no copied optimizer state for plain SGD, vmap(grad) gradients, the auto choice, the broadcast check."""

import pytest
import torch
from torch import nn

from fedlab.engine import LocalSGD, broadcast, initial_optimizer_state, local_train
from fedlab.engine import local as engine_local
from fedlab.models import MLP, ModuleModel, PaperCNN, check_params, init_stacked


def _module_model():
    return ModuleModel(lambda: nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3)))


def _reference_loop(model, params, data, solver, key):
    """The loop path as first written: a clone per row, ``p.sub_(lr * g)``, the rows stacked at the end."""
    idx = engine_local.draw_batches(data.n, solver.local_steps, solver.batch_size, key)
    rows = []
    for c in range(data.n_clients):
        theta = {k: v[c].detach().clone() for k, v in params.items()}
        for e in range(solver.local_steps):
            leaf = {k: v.requires_grad_(True) for k, v in theta.items()}
            batch = idx[c, e]
            loss = model.per_sample_loss(model.forward(leaf, data.x[c][batch]), data.y[c][batch]).mean()
            grads = torch.autograd.grad(loss, list(leaf.values()))
            theta = {k: v.detach() for k, v in leaf.items()}
            for p, g in zip(theta.values(), grads):
                p.sub_(solver.lr * g)
        rows.append(theta)
    return {k: torch.stack([r[k] for r in rows]) for k in params}


@pytest.mark.parametrize("model", [MLP(5, (7,), 3), _module_model()], ids=["mlp", "module"])
def test_loop_path_is_bit_identical_to_the_plain_loop(small_clients, model):
    solver = LocalSGD(lr=0.1, local_steps=4, batch_size=8)
    params = broadcast(model.init(torch.Generator().manual_seed(0)), small_clients.n_clients)
    result = local_train(model, params, small_clients, solver, key=(2, 1), backend="loop")
    expected = _reference_loop(model, params, small_clients, solver, (2, 1))
    for k in params:
        assert torch.equal(result.params[k], expected[k]), k


def test_plain_sgd_carries_its_state_without_copies(small_clients):
    model = MLP(5, (7,), 3)
    params = init_stacked(model, small_clients.n_clients, torch.Generator().manual_seed(0), same=False)
    fresh = local_train(model, params, small_clients, LocalSGD(lr=0.1, local_steps=2), key=(0, 0), backend="loop")
    assert fresh.optimizer_state.steps.tolist() == [2] * small_clients.n_clients
    assert all(not bool(t.any()) and t.shape == params[k].shape
               for k, t in fresh.optimizer_state.moments["buf"].items())
    solver = LocalSGD(lr=0.1, local_steps=2, keep_state=True)
    start = initial_optimizer_state(solver, params)
    for backend in ("loop", "batched"):
        kept = local_train(model, params, small_clients, solver, key=(0, 0), backend=backend, optimizer_state=start)
        assert kept.optimizer_state.steps.tolist() == [2] * small_clients.n_clients
        assert start.steps.tolist() == [0] * small_clients.n_clients          # the input is not changed
        assert all(t is start.moments["buf"][k] for k, t in kept.optimizer_state.moments["buf"].items())


def test_a_step_never_scales_gradients_that_share_memory():
    theta = {"a": torch.ones(4), "b": torch.ones(4)}
    g = torch.full((4,), 2.0)
    work = {"moments": {}, "steps": torch.zeros(1, dtype=torch.long), "fresh": True, "scratch": [None, None]}
    engine_local._step(theta, [g, g], work, None, LocalSGD(lr=0.5), 0.5, stacked=False, own_grads=True)
    assert theta["a"].tolist() == theta["b"].tolist() == [0.0] * 4 and g.tolist() == [2.0] * 4
    expanded = torch.full((1,), 2.0).expand(4)                      # one element stored for four
    engine_local._step(theta, [expanded, torch.ones(4)], work, None, LocalSGD(lr=0.5), 0.5, stacked=False,
                       own_grads=True)
    assert theta["a"].tolist() == [-1.0] * 4 and expanded.tolist() == [2.0] * 4
    assert engine_local._unshared([torch.ones(3, 2).t(), torch.ones(2)])          # transposed is dense
    assert not engine_local._unshared([torch.ones(3)[::2]])


def test_vmapped_gradients_are_laid_out_like_the_parameters():
    model = ModuleModel(lambda: PaperCNN(1, 16, (4, 6), 12, 5))
    g = torch.Generator().manual_seed(0)
    params = init_stacked(model, 3, g, same=False)
    x, y = torch.rand(3, 8, 1, 16, 16, generator=g), torch.randint(0, 5, (3, 8), generator=g)
    weight = torch.rand(3, 8, generator=g)
    loss, grads = model.loss_and_grad_stacked(params, x, y, weight)
    assert all(t.is_contiguous() and t.shape == params[k].shape for k, t in zip(params, grads))
    ref_loss, ref_grads = _autograd_through_vmap(model, params, x, y, weight)
    assert torch.allclose(loss, ref_loss, atol=1e-6)
    for a, b in zip(grads, ref_grads):
        assert torch.allclose(a, b, atol=1e-6)


def _autograd_through_vmap(model, params, x, y, weight):
    leaf = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    per_row = (model.per_sample_loss(model.forward_stacked(leaf, x), y) * weight).mean(1)
    return per_row.detach(), torch.autograd.grad(per_row.sum(), list(leaf.values()))


def test_auto_keeps_the_faster_backend_despite_one_slow_run(small_clients, monkeypatch):
    import time

    model = MLP(5, (7,), 3)
    params = broadcast(model.init(torch.Generator().manual_seed(0)), small_clients.n_clients)
    calls = {"loop": 0}
    real_loop, real_batched = engine_local._loop, engine_local._batched

    def loop(*args):
        calls["loop"] += 1
        if calls["loop"] == 2:                                         # the first timed run is paused
            time.sleep(0.3)
        return real_loop(*args)

    def batched(*args):
        time.sleep(0.02)
        return real_batched(*args)
    monkeypatch.setattr(engine_local, "BACKENDS", {"batched": batched, "loop": loop})
    monkeypatch.setattr(engine_local, "_AUTO_CACHE", {})
    idx = engine_local.draw_batches(small_clients.n, 1, 8, (0, 0))
    rows = torch.arange(small_clients.n_clients)
    assert engine_local._choose_backend(model, params, small_clients, rows, idx, None, LocalSGD(lr=0.1)) == "loop"
    assert calls["loop"] >= 3


def test_broadcast_params_are_checked_once_per_distinct_entry():
    model = MLP(2, (3,), 2)
    single = model.init(torch.Generator().manual_seed(0))
    params = broadcast(single, 1000)
    assert check_params(model, params, rows=1000) is params
    single["w0"][1, 2] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        check_params(model, broadcast(single, 1000), rows=1000)


def test_loop_output_memory_is_reused_only_once_released(small_clients):
    """The loop path hands its previous output's memory out again (no fresh pages to fault in) only when the caller
    holds neither it nor a view of it; results never change."""
    model, solver = MLP(5, (7,), 3), LocalSGD(lr=0.1, local_steps=2)
    params = broadcast(model.init(torch.Generator().manual_seed(0)), small_clients.n_clients)

    def train():
        return local_train(model, params, small_clients, solver, key=(1, 0), backend="loop").params

    first = train()
    name = next(iter(first))
    expected = {k: v.clone() for k, v in first.items()}
    view, address = first[name][1:], first[name].data_ptr()
    del first
    second = train()                          # a view of the first output is held: fresh memory
    assert second[name].data_ptr() != address and torch.equal(view, expected[name][1:])
    address = {k: v.data_ptr() for k, v in second.items()}
    del second
    third = train()                           # nothing holds the second output: its memory again
    assert {k: v.data_ptr() for k, v in third.items()} == address
    assert all(torch.equal(third[k], expected[k]) for k in expected)
