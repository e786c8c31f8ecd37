"""The authors' training recipes in the local solver, each checked against ``torch.optim`` on the same minibatches:
optimizer state kept across rounds (SGD momentum and weight decay, Adam, AdamW), shuffled epochs with a partial
last batch, and learning-rate schedules, in the batched and the loop backends."""
import math

import numpy as np
import pytest
import torch

from fedlab.engine import (ClientData, CosineLR, InverseSqrtLR, LocalSGD, MultiStepLR, draw_batches, draw_epochs,
                           initial_optimizer_state, local_sgd, local_train)
from fedlab._rng import torch_generator
from fedlab.models import MLP

SIZES = (5, 9, 13)


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(n, 4)).astype(np.float32) for n in SIZES]
    ys = [rng.integers(0, 3, n) for n in SIZES]
    model = MLP(4, (6,), 3)
    params = {k: torch.stack([v] * len(SIZES)) for k, v in model.init(torch.Generator().manual_seed(1)).items()}
    return model, ClientData.from_arrays(xs, ys), params


def _batches(solver, data, key):
    """Each client's minibatches (index tensors, the valid entries only), as local_train draws them."""
    if solver.epochs is None:
        idx = draw_batches(data.n, solver.local_steps, solver.batch_size, key)
        return [[idx[k, s] for s in range(idx.shape[1])] for k in range(len(SIZES))]
    idx, valid = draw_epochs(data.n, solver.epochs, solver.batch_size, key)
    return [[idx[k, s][valid[k, s]] for s in range(idx.shape[1]) if valid[k, s].any()] for k in range(len(SIZES))]


def _torch_optimizer(solver, leaves):
    if solver.optimizer == "sgd":
        return torch.optim.SGD(leaves, lr=solver.lr, momentum=solver.momentum, weight_decay=solver.weight_decay)
    cls = torch.optim.Adam if solver.optimizer == "adam" else torch.optim.AdamW
    return cls(leaves, lr=solver.lr, betas=solver.betas, eps=solver.eps, weight_decay=solver.weight_decay)


def _reference(model, data, params, solver, rounds):
    """Every client trained by its own ``torch.optim`` optimizer, kept across rounds when ``keep_state``."""
    out = {k: [] for k in params}
    for c in range(len(SIZES)):
        leaves = {k: torch.nn.Parameter(v[c].clone()) for k, v in params.items()}
        opt = _torch_optimizer(solver, list(leaves.values()))
        for t in range(rounds):
            if not solver.keep_state and t:
                opt = _torch_optimizer(solver, list(leaves.values()))
            for group in opt.param_groups:
                group["lr"] = solver.lr_at(t)
            for batch in _batches(solver, data, (0, t, 0))[c]:
                opt.zero_grad()
                model.per_sample_loss(model.forward(leaves, data.x[c][batch]), data.y[c][batch]).mean().backward()
                opt.step()
        for k in params:
            out[k].append(leaves[k].detach())
    return {k: torch.stack(v) for k, v in out.items()}


def _engine(model, data, params, solver, rounds, backend):
    state = None
    for t in range(rounds):
        result = local_train(model, params, data, solver, key=(0, t, 0), backend=backend, round_index=t,
                             optimizer_state=state if solver.keep_state else None)
        params, state = result.params, result.optimizer_state
    return params


RECIPES = {
    "sgd momentum, weight decay, state kept": LocalSGD(lr=0.1, local_steps=3, batch_size=4, momentum=0.9,
                                                       weight_decay=5e-4, keep_state=True),
    "sgd momentum restarted each round": LocalSGD(lr=0.1, local_steps=3, batch_size=4, momentum=0.9),
    "adam, state kept": LocalSGD(lr=0.01, local_steps=3, batch_size=4, optimizer="adam", weight_decay=1e-3,
                                 keep_state=True),
    "adamw, state kept": LocalSGD(lr=0.01, local_steps=3, batch_size=4, optimizer="adamw", weight_decay=0.1,
                                  keep_state=True),
    "epochs, partial last batch": LocalSGD(lr=0.1, batch_size=4, momentum=0.9, epochs=2, keep_state=True),
    "epochs with adam and a multi-step schedule": LocalSGD(lr=0.01, batch_size=4, optimizer="adam", epochs=1,
                                                          schedule=MultiStepLR((1, 2)), keep_state=True),
    "1/sqrt(t) schedule": LocalSGD(lr=0.1, local_steps=2, batch_size=4, schedule=InverseSqrtLR()),
    "cosine schedule": LocalSGD(lr=0.1, local_steps=2, batch_size=4, momentum=0.5, schedule=CosineLR(3),
                                keep_state=True),
}


@pytest.mark.parametrize("backend", ["batched", "loop"])
@pytest.mark.parametrize("recipe", RECIPES, ids=list(RECIPES))
def test_recipes_equal_torch_optim_on_the_same_minibatches(setup, recipe, backend):
    model, data, params = setup
    solver = RECIPES[recipe]
    expected = _reference(model, data, params, solver, rounds=3)
    got = _engine(model, data, params, solver, rounds=3, backend=backend)
    for k in params:
        torch.testing.assert_close(got[k], expected[k], rtol=1e-5, atol=1e-6)


def test_epochs_give_larger_clients_more_steps_and_a_partial_last_batch(setup):
    _, data, _ = setup
    idx, valid = draw_epochs(data.n, 2, 4, (0, 0, 0))
    assert idx.shape == (3, 2 * math.ceil(13 / 4), 4)
    steps = valid.any(-1).sum(-1).tolist()
    assert steps == [2 * math.ceil(n / 4) for n in SIZES]                       # 4, 6, 8 steps
    for k, n in enumerate(SIZES):
        per_pass = idx[k].reshape(2, -1)[:, :math.ceil(n / 4) * 4]
        ok = valid[k].reshape(2, -1)[:, :math.ceil(n / 4) * 4]
        for e in range(2):                                                        # each pass: a permutation
            assert sorted(per_pass[e][ok[e]].tolist()) == list(range(n))
    assert valid[0].sum(-1).tolist()[:2] == [4, 1]                               # 5 samples: 4 + a partial 1
    again, _ = draw_epochs(data.n, 2, 4, (0, 0, 0))
    assert torch.equal(idx, again) and not torch.equal(idx, draw_epochs(data.n, 2, 4, (0, 1, 0))[0])


def test_epochs_follow_the_keys_uniforms_for_clients_of_any_size():
    """More clients than one sort takes, of very different sizes: each pass orders a client's samples by the key's
    uniform draws (one per sample and pass, drawn for the padded layout), whatever the other clients."""
    sizes = torch.tensor([1, 200, 7, 64] * 20)
    idx, valid = draw_epochs(sizes, 2, 16, (5, 1, 2))
    u = torch.rand((len(sizes), 2, 200), dtype=torch.float64, generator=torch_generator(5, 1, 2))
    per_pass = idx.reshape(len(sizes), 2, -1)
    for k, n in enumerate(sizes.tolist()):
        for e in range(2):
            drawn = per_pass[k, e][valid.reshape(len(sizes), 2, -1)[k, e]]
            assert drawn.tolist() == torch.argsort(u[k, e, :n]).tolist()


def test_the_default_solver_is_the_plain_one(setup):
    """No option set: local_train is local_sgd (a new state each round) and keeps nothing from earlier rounds."""
    model, data, params = setup
    solver = LocalSGD(lr=0.1, local_steps=3, batch_size=4, momentum=0.9)
    plain = local_sgd(model, params, data, solver, key=(0, 0, 0), backend="batched")
    result = local_train(model, params, data, solver, key=(0, 0, 0), backend="batched")
    for k in params:
        assert torch.equal(plain[0][k], result.params[k])
    assert result.optimizer_state.steps.tolist() == [3, 3, 3]
    zero = initial_optimizer_state(solver, params)
    assert all(bool((t == 0).all()) for t in zero.moments["buf"].values())


def test_state_selection_and_assignment(setup):
    model, data, params = setup
    solver = LocalSGD(lr=0.1, local_steps=2, batch_size=4, momentum=0.9, keep_state=True)
    state = local_train(model, params, data, solver, key=(0, 0, 0)).optimizer_state
    name = next(iter(params))
    part = state.select([2, 0])
    assert part.steps.tolist() == [2, 2] and torch.equal(part.moments["buf"][name][1], state.moments["buf"][name][0])
    merged = initial_optimizer_state(solver, params).assign([2, 0], part)
    assert merged.steps.tolist() == [2, 0, 2] and torch.equal(merged.moments["buf"][name][2],
                                                              state.moments["buf"][name][2])
    assert bool((merged.moments["buf"][name][1] == 0).all())


def test_schedules():
    assert [MultiStepLR((100, 150))(t) for t in (0, 99, 100, 149, 150)] == pytest.approx([1, 1, 0.1, 0.1, 0.01])
    assert [InverseSqrtLR()(t) for t in (0, 1, 4)] == pytest.approx([1.0, 1.0, 0.5])
    assert [CosineLR(4)(t) for t in (0, 2, 4, 9)] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert LocalSGD(lr=0.2, schedule=MultiStepLR((2,))).lr_at(2) == pytest.approx(0.02)


@pytest.mark.parametrize("kw, match", [
    ({"optimizer": "rmsprop"}, "optimizer must be one of"),
    ({"optimizer": "adam", "momentum": 0.9}, "momentum is SGD's"),
    ({"betas": (0.9,)}, "betas must be a pair"),
    ({"betas": (0.9, 1.0)}, r"betas\[1\]"),
    ({"eps": 0.0}, "eps"),
    ({"epochs": 0}, "epochs"),
    ({"schedule": 0.5}, "schedule"),
    ({"keep_state": 1}, "keep_state"),
])
def test_bad_options_name_the_argument(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        LocalSGD(lr=0.1, **kw)


def test_a_state_of_another_optimizer_is_refused(setup):
    model, data, params = setup
    sgd_state = local_train(model, params, data, LocalSGD(lr=0.1, momentum=0.5), key=(0, 0, 0)).optimizer_state
    with pytest.raises(ValueError, match="optimizer_state must hold"):
        local_train(model, params, data, LocalSGD(lr=0.1, optimizer="adam"), key=(0, 0, 0),
                    optimizer_state=sgd_state)


def test_a_recipe_names_the_authors_schedule_and_leaves_out_what_an_algorithm_cannot_keep():
    from fedlab.algorithms import APFL, FedAvg
    from fedlab.engine import solver_from_recipe

    recipe = {"momentum": 0.9, "weight_decay": 5e-4, "epochs": 1, "schedule": "multi_step", "keep_state": True}
    solver = solver_from_recipe(recipe, lr=0.1, batch_size=128, rounds=200, method=FedAvg)
    assert solver.keep_state and solver.schedule == MultiStepLR((100, 150)) and solver.epochs == 1
    plain = solver_from_recipe(recipe, lr=0.1, batch_size=128, rounds=200, method=APFL)
    assert not plain.keep_state and plain.schedule is None and plain.momentum == 0.9
    assert solver_from_recipe({"schedule": "sqrt"}, lr=0.1, rounds=5).schedule == InverseSqrtLR()
    assert solver_from_recipe({}, lr=0.1, rounds=5) == LocalSGD(lr=0.1)
    with pytest.raises(ValueError, match=r"recipe: momentum"):
        solver_from_recipe({"momentum": 2.0}, lr=0.1, rounds=5)
    with pytest.raises(ValueError, match="recipe takes"):
        solver_from_recipe({"nesterov": True}, lr=0.1, rounds=5)
