import numpy as np
import pytest
import torch
from torch import nn

from fedlab.engine import ClientData, DivergenceError, LocalSGD, draw_batches, local_sgd, local_train
from fedlab.engine import local as engine_local
from fedlab.models import MLP, LinearModel, ModuleModel, SmallCNN, init_stacked

from helpers import make_clients

SOLVERS = [LocalSGD(lr=0.1, local_steps=4, batch_size=8),
           LocalSGD(lr=0.05, local_steps=3, batch_size=5, momentum=0.9, weight_decay=1e-3, prox_mu=0.5, radius=1.5)]


def _stack(model, k, seed=0):
    return init_stacked(model, k, torch.Generator().manual_seed(seed), same=False)


def _assert_same(a, b, tol=1e-6):
    for k in a:
        assert torch.allclose(a[k], b[k], atol=tol, rtol=0), (k, float((a[k] - b[k]).abs().max()))


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("model", [LinearModel(5, 3), MLP(5, (7,), 3),
                                   ModuleModel(lambda: nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3)))],
                         ids=["linear", "mlp", "module"])
def test_batched_equals_loop(small_clients, model, solver):
    _assert_batched_equals_loop(model, small_clients, solver, key=(3, 1))


def _assert_batched_equals_loop(model, data, solver, key):
    params = _stack(model, data.n_clients)
    a, la = local_sgd(model, params, data, solver, key=key, backend="batched")
    b, lb = local_sgd(model, params, data, solver, key=key, backend="loop")
    _assert_same(a, b)
    assert torch.allclose(la, lb, atol=1e-6)


def _unequal_clients():
    """Clients of 2, 7, 12, ... samples (local epochs end at different steps)."""
    xs, ys = make_clients()
    return ClientData.from_arrays([x[: 2 + 5 * k] for k, x in enumerate(xs)], [y[: 2 + 5 * k] for k, y in enumerate(ys)])


def test_batched_equals_loop_regression_and_weights():
    xs, ys = make_clients(regression=True)
    weights = [np.random.default_rng(k).uniform(0, 2, len(y)) for k, y in enumerate(ys)]
    data = ClientData.from_arrays(xs, ys, weights)
    model = LinearModel(5, 1, loss="mse")
    params = _stack(model, data.n_clients)
    a, _ = local_sgd(model, params, data, SOLVERS[1], key=(0, 0), backend="batched")
    b, _ = local_sgd(model, params, data, SOLVERS[1], key=(0, 0), backend="loop")
    _assert_same(a, b)


def test_batched_equals_loop_cnn():
    rng = np.random.default_rng(0)
    xs = [rng.random((n, 1, 8, 8), dtype=np.float32) for n in (6, 9, 4)]
    ys = [rng.integers(0, 10, len(x)) for x in xs]
    data = ClientData.from_arrays(xs, ys)
    model = SmallCNN(1, 8, 10, channels=(3, 4))
    params = _stack(model, 3)
    a, _ = local_sgd(model, params, data, LocalSGD(lr=0.1, local_steps=2, batch_size=4), key=(1,), backend="batched")
    b, _ = local_sgd(model, params, data, LocalSGD(lr=0.1, local_steps=2, batch_size=4), key=(1,), backend="loop")
    _assert_same(a, b)


def test_auto_backend_gives_the_same_numbers(small_clients):
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    a, _ = local_sgd(model, params, small_clients, SOLVERS[0], key=(9,), backend="auto")
    b, _ = local_sgd(model, params, small_clients, SOLVERS[0], key=(9,), backend="loop")
    _assert_same(a, b)


def test_loop_matches_torch_optim_sgd(small_clients):
    """Independent reference: nn.Linear + torch.optim.SGD (momentum, weight decay) on the same batches."""
    solver = LocalSGD(lr=0.05, local_steps=5, batch_size=6, momentum=0.8, weight_decay=0.01)
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    ours, _ = local_sgd(model, params, small_clients, solver, key=(4, 2), backend="batched")
    idx = draw_batches(small_clients.n, solver.local_steps, solver.batch_size, (4, 2))
    for k in range(small_clients.n_clients):
        layer = nn.Linear(5, 3)
        with torch.no_grad():
            layer.weight.copy_(params["weight"][k]), layer.bias.copy_(params["bias"][k])
        opt = torch.optim.SGD(layer.parameters(), lr=0.05, momentum=0.8, weight_decay=0.01)
        x, y, _ = small_clients.client(k)
        for e in range(solver.local_steps):
            opt.zero_grad()
            nn.functional.cross_entropy(layer(x[idx[k, e]]), y[idx[k, e]]).backward()
            opt.step()
        assert torch.allclose(ours["weight"][k], layer.weight.detach(), atol=1e-6)


def test_several_models_per_client_share_minibatches(small_clients):
    """Rows mapped to the same client (FedEM's components) train exactly as separate calls."""
    model = LinearModel(5, 3)
    m = 3
    rows = torch.arange(small_clients.n_clients).repeat_interleave(m)
    params = _stack(model, len(rows))
    together, _ = local_sgd(model, params, small_clients, SOLVERS[0], key=(1, 2), rows=rows)
    for j in range(m):
        sel = torch.arange(j, len(rows), m)
        alone, _ = local_sgd(model, {k: v[sel] for k, v in params.items()}, small_clients, SOLVERS[0], key=(1, 2))
        _assert_same({k: v[sel] for k, v in together.items()}, alone)


@pytest.mark.parametrize("model", [LinearModel(5, 3), MLP(5, (7,), 3)], ids=["linear", "mlp"])
def test_components_of_a_client_are_gathered_once(small_clients, model, monkeypatch):
    """Rows in runs of one client (FedEM's components) take their shared minibatch once, and train as if each had
    its own copy; rows that do not come in such runs are trained row by row."""
    rows = torch.arange(small_clients.n_clients).repeat_interleave(3)
    idx = draw_batches(small_clients.n, 2, 4, (0,))[rows]
    assert engine_local._copies(rows, idx, None) == 3
    assert engine_local._copies(rows.flip(0), idx.flip(0), None) == 3
    assert engine_local._copies(rows[1:], idx[1:], None) == 1        # runs of unequal length
    other = idx.clone()
    other[1, 0, 0] = (other[1, 0, 0] + 1) % int(small_clients.n[0])
    assert engine_local._copies(rows, other, None) == 1              # a run whose minibatches differ
    params = _stack(model, len(rows))
    solver = LocalSGD(lr=0.1, epochs=1, batch_size=3, momentum=0.9)
    once, _ = local_sgd(model, params, small_clients, solver, key=(4,), rows=rows, backend="batched")
    monkeypatch.setattr(engine_local, "_copies", lambda *args: 1)
    each, _ = local_sgd(model, params, small_clients, solver, key=(4,), rows=rows, backend="batched")
    _assert_same(once, each)


@pytest.mark.parametrize("solver", [LocalSGD(lr=0.1, epochs=2, batch_size=3, momentum=0.9, weight_decay=1e-3),
                                    LocalSGD(lr=0.01, epochs=1, batch_size=2, optimizer="adam", prox_mu=0.1)],
                         ids=["momentum", "adam"])
def test_epochs_of_unequal_clients_train_only_the_rows_with_data(solver):
    """A step past a small client's data trains the other rows alone (batched equals the loop), and the small
    client's parameters and optimizer state stay as they were."""
    _assert_batched_equals_loop(LinearModel(5, 3), _unequal_clients(), solver, key=(2, 0))


@pytest.mark.parametrize("model", [LinearModel(5, 3), MLP(5, (4,), 3)], ids=["linear", "mlp"])
def test_zeroed_steps_of_rows_without_data_equal_training_the_others_alone(monkeypatch, model):
    """Plain SGD past a small client's data either trains every row with a zero step for the rows without data or
    takes the others out: the same bits, losses and step counts (weight decay and prox included)."""
    data = _unequal_clients()
    params = _stack(model, data.n_clients)
    solver = LocalSGD(lr=0.1, epochs=2, batch_size=3, weight_decay=1e-2, prox_mu=0.1)
    results = {}
    for masked in (True, False):
        monkeypatch.setattr(engine_local, "_masks_rows", lambda *args, masked=masked: masked)
        results[masked] = local_train(model, params, data, solver, key=(6, 1), backend="batched")
    for k in params:
        assert torch.equal(results[True].params[k], results[False].params[k]), k
    assert torch.equal(results[True].local_loss, results[False].local_loss)
    assert torch.equal(results[True].optimizer_state.steps, results[False].optimizer_state.steps)
    assert results[True].optimizer_state.steps.tolist() == [2 * -(-int(n) // 3) for n in data.n]   # 2 epochs of 3


def test_a_model_with_per_row_parts_trains_some_rows_alone():
    """A model that holds a frozen part per row (FedRep's) is narrowed to the rows a partial-epoch step trains: each
    row ends as it does trained alone."""
    from fedlab.algorithms.personalized import _Frozen

    data = _unequal_clients()
    base = MLP(5, (4,), 3)
    full = _stack(base, data.n_clients)
    head = {k: full[k] for k in ("w1", "b1")}      # frozen per row; the body (w0, b0) trains
    body = {k: full[k] for k in ("w0", "b0")}
    solver = LocalSGD(lr=0.1, epochs=1, batch_size=3)
    together, _ = local_sgd(_Frozen(base, head), body, data, solver, key=(5,), backend="batched")
    for k in range(data.n_clients):
        alone, _ = local_sgd(_Frozen(base, {n: v[k:k + 1] for n, v in head.items()}),
                             {n: v[k:k + 1] for n, v in body.items()},
                             data, solver, key=(5,), rows=[k], backend="batched")
        _assert_same({n: v[k:k + 1] for n, v in together.items()}, alone)


def test_per_sample_weights_scale_the_gradient(small_clients):
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    solver = LocalSGD(lr=0.1, local_steps=3, batch_size=4)
    doubled = small_clients.with_weight(2.0 * small_clients.mask.float())
    a, _ = local_sgd(model, params, doubled, solver, key=(0,))
    b, _ = local_sgd(model, params, small_clients, LocalSGD(lr=0.2, local_steps=3, batch_size=4), key=(0,))
    _assert_same(a, b, 1e-5)
    zero = torch.zeros_like(small_clients.mask, dtype=torch.float32)
    c, _ = local_sgd(model, params, small_clients, solver, key=(0,), sample_weight=zero)
    _assert_same(c, params, 0.0)


def test_prox_pulls_towards_anchor(small_clients):
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    anchor = {k: torch.zeros_like(v) for k, v in params.items()}
    free, _ = local_sgd(model, params, small_clients, LocalSGD(lr=0.1, local_steps=5), key=(0,))
    prox, _ = local_sgd(model, params, small_clients, LocalSGD(lr=0.1, local_steps=5, prox_mu=5.0), key=(0,),
                        anchor=anchor)
    assert prox["weight"].norm() < free["weight"].norm()


def test_projection_keeps_parameters_in_ball(small_clients):
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    out, _ = local_sgd(model, params, small_clients, LocalSGD(lr=1.0, local_steps=5, radius=0.3), key=(0,))
    norms = torch.sqrt(sum(v.pow(2).flatten(1).sum(1) for v in out.values()))
    assert bool((norms <= 0.3 + 1e-6).all())


def test_draw_batches_bounds_and_determinism():
    n = torch.tensor([1, 5, 50])
    a = draw_batches(n, 3, 7, (1, 2))
    assert a.shape == (3, 3, 7)
    assert bool((a >= 0).all()) and all(int(a[k].max()) < int(n[k]) for k in range(3))
    assert torch.equal(a, draw_batches(n, 3, 7, (1, 2)))
    assert not torch.equal(a, draw_batches(n, 3, 7, (1, 3)))
    counts = np.bincount(draw_batches(torch.tensor([4]), 1, 40000, (0,)).flatten().numpy(), minlength=4)
    assert np.allclose(counts / 40000, 0.25, atol=0.01)


def test_divergence_raises(small_clients):
    model = LinearModel(5, 1, loss="mse")
    xs, ys = make_clients(regression=True)
    data = ClientData.from_arrays([x * 1e3 for x in xs], ys)
    params = _stack(model, data.n_clients)
    with pytest.raises(DivergenceError, match="smaller lr"):
        local_sgd(model, params, data, LocalSGD(lr=10.0, local_steps=20), key=(0,))


@pytest.mark.parametrize("kwargs", [dict(lr=0), dict(lr=-1), dict(lr=0.1, local_steps=0),
                                    dict(lr=0.1, batch_size=0), dict(lr=0.1, momentum=1.0),
                                    dict(lr=0.1, prox_mu=-1), dict(lr=0.1, radius=0), dict(lr=float("nan"))])
def test_bad_solver(kwargs):
    with pytest.raises(ValueError):
        LocalSGD(**kwargs)


def test_bad_local_sgd_inputs(small_clients):
    model = LinearModel(5, 3)
    params = _stack(model, small_clients.n_clients)
    with pytest.raises(ValueError, match="rows"):
        local_sgd(model, params, small_clients, SOLVERS[0], key=(0,), rows=[0, 99])
    with pytest.raises(ValueError, match="rows"):
        local_sgd(model, params, small_clients, SOLVERS[0], key=(0,), rows=[0, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        local_sgd(model, params, small_clients, SOLVERS[0], key=(0,), sample_weight=torch.ones(2, 2))
    with pytest.raises(ValueError, match="backend"):
        local_sgd(model, params, small_clients, SOLVERS[0], key=(0,), backend="gpu")
