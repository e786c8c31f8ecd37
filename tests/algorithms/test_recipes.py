"""The authors' training recipe in the algorithms: clients keep their optimizer across rounds (FedAvg, Local, FedEM),
FedAvg+ fine-tunes with one optimizer over shuffled passes, and algorithms that cannot keep it refuse it."""
import numpy as np
import pytest
import torch

from fedlab._rng import Stream
from fedlab.algorithms import APFL, DFedEM, FedAvg, FedAvgPlus, FedEM, Local
from fedlab.algorithms.common import sample_participants
from fedlab.algorithms.personalized import finetune
from fedlab.engine import FederatedDataset, LocalSGD, MultiStepLR, draw_epochs, run
from fedlab.models import MLP

SIZES = (6, 11, 9, 14)
RECIPE = LocalSGD(lr=0.05, batch_size=4, momentum=0.9, weight_decay=5e-4, epochs=1, schedule=MultiStepLR((2,)),
                  keep_state=True)


@pytest.fixture(scope="module")
def fed():
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=(n, 5)).astype(np.float32) for n in SIZES]
    ys = [rng.integers(0, 3, n) for n in SIZES]
    return FederatedDataset.from_client_arrays(xs, ys, n_classes=3, seed=0)


def _epoch_batches(data, solver, key, client):
    idx, valid = draw_epochs(data.n, solver.epochs, solver.batch_size, key)
    return [idx[client, s][valid[client, s]] for s in range(idx.shape[1]) if valid[client, s].any()]


def _reference_fedavg(model, fed, solver, rounds, seed, participants):
    """FedAvg as the authors' code runs it: each client keeps a torch SGD optimizer and loads the global model into
    it when sampled; the server averages the sampled clients' models by their sizes."""
    train = fed.train
    global_params = {k: v.clone() for k, v in FedAvg(model, solver).init(fed, seed).params.items()}
    clients = [{k: torch.nn.Parameter(v.clone()) for k, v in global_params.items()} for _ in SIZES]
    optimizers = [torch.optim.SGD(list(c.values()), lr=solver.lr, momentum=solver.momentum,
                                  weight_decay=solver.weight_decay) for c in clients]
    for t in range(rounds):
        chosen = participants[t]
        for k in chosen:
            with torch.no_grad():
                for name, p in clients[k].items():
                    p.copy_(global_params[name])
            for group in optimizers[k].param_groups:
                group["lr"] = solver.lr_at(t)
            for batch in _epoch_batches(train, solver, (seed, t, Stream.LOCAL), k):
                optimizers[k].zero_grad()
                model.per_sample_loss(model.forward(clients[k], train.x[k][batch]), train.y[k][batch]).mean().backward()
                optimizers[k].step()
        weights = np.array([int(train.n[k]) for k in chosen], dtype=float)
        weights /= weights.sum()
        global_params = {name: sum(float(w) * clients[k][name].detach() for w, k in zip(weights, chosen))
                         for name in global_params}
    return global_params


@pytest.mark.parametrize("backend", ["batched", "loop"])
def test_fedavg_with_the_authors_recipe_equals_clients_that_keep_their_torch_optimizer(fed, backend):
    model, seed, rounds = MLP(5, (4,), 3), 0, 4
    alg = FedAvg(model, RECIPE, participation=0.5, backend=backend)
    state, _ = run(alg, fed, rounds=rounds, seed=seed, progress=False)
    participants = [sample_participants(0.5, len(SIZES), seed, t).tolist() for t in range(rounds)]
    expected = _reference_fedavg(model, fed, RECIPE, rounds, seed, participants)
    for k in expected:
        torch.testing.assert_close(state.params[k], expected[k], rtol=1e-5, atol=1e-6)
    assert state.optimizer.steps.tolist() == [sum(k in p for p in participants) * int(np.ceil(n / 4))
                                              for k, n in enumerate(fed.train.n.tolist())]


def test_fedem_with_one_component_keeps_the_same_state_as_fedavg(fed):
    model = MLP(5, (4,), 3)
    fedavg, _ = run(FedAvg(model, RECIPE), fed, rounds=3, seed=1, progress=False)
    fedem, _ = run(FedEM(model, RECIPE, n_components=1), fed, rounds=3, seed=1, progress=False)
    for k in fedavg.params:
        torch.testing.assert_close(fedem.params[k][0], fedavg.params[k], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(fedem.optimizer.moments["buf"][k], fedavg.optimizer.moments["buf"][k],
                                   rtol=1e-5, atol=1e-6)


def test_fedem_keeps_a_state_per_client_and_component(fed):
    state, _ = run(FedEM(MLP(5, (4,), 3), RECIPE, n_components=2, participation=0.5), fed, rounds=2, seed=0,
                   progress=False)
    steps = state.optimizer.steps.reshape(len(SIZES), 2)
    assert bool((steps[:, 0] == steps[:, 1]).all()) and int(steps.sum()) > 0


def test_local_keeps_each_clients_optimizer(fed):
    """Local with a kept state counts every client's steps over the rounds and trains differently from restarting."""
    model = MLP(5, (4,), 3)
    keep = LocalSGD(lr=0.05, batch_size=4, momentum=0.9, epochs=1, keep_state=True)
    state, _ = run(Local(model, keep), fed, rounds=2, seed=0, progress=False)
    restart, _ = run(Local(model, LocalSGD(lr=0.05, batch_size=4, momentum=0.9, epochs=1)), fed, rounds=2, seed=0,
                     progress=False)
    assert state.optimizer.steps.tolist() == [2 * int(np.ceil(n / 4)) for n in fed.train.n.tolist()]
    assert restart.optimizer is None
    assert not torch.allclose(state.params[next(iter(state.params))], restart.params[next(iter(restart.params))])


def test_fedavg_plus_fine_tunes_with_one_optimizer_over_shuffled_passes(fed):
    model = MLP(5, (4,), 3)
    params = FedAvg(model, RECIPE).init(fed, 0).params
    solver = LocalSGD(lr=0.05, batch_size=4, momentum=0.9, epochs=1)
    tuned = finetune(model, params, fed.train, solver, key=(0, 7, 1), epochs=2)
    tuned_solver = LocalSGD(lr=0.05, batch_size=4, momentum=0.9, epochs=2)
    for k in range(len(SIZES)):
        leaves = {n: torch.nn.Parameter(v.clone()) for n, v in params.items()}
        opt = torch.optim.SGD(list(leaves.values()), lr=0.05, momentum=0.9)
        for batch in _epoch_batches(fed.train, tuned_solver, (0, 7, 1), k):
            opt.zero_grad()
            model.per_sample_loss(model.forward(leaves, fed.train.x[k][batch]), fed.train.y[k][batch]).mean().backward()
            opt.step()
        for n in params:
            torch.testing.assert_close(tuned[n][k], leaves[n].detach(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="whole number of passes"):
        finetune(model, params, fed.train, solver, key=(0, 7, 1), epochs=1.5)
    state, _ = run(FedAvgPlus(model, RECIPE), fed, rounds=2, seed=0, progress=False)
    assert state.optimizer is not None and state.optimizer.steps.sum() > 0


@pytest.mark.parametrize("build", [
    lambda model, solver: APFL(model, solver),
    lambda model, solver: DFedEM(model, solver, np.full((4, 4), 0.25), n_components=2),
], ids=["APFL", "DFedEM"])
def test_algorithms_that_cannot_keep_the_state_refuse_it(build):
    with pytest.raises(ValueError, match="solver.keep_state and solver.schedule need an algorithm"):
        build(MLP(5, (4,), 3), RECIPE)


def test_decentralized_sgd_keeps_each_silos_adam(fed):
    """DPASGD with the topology code's recipe: every silo keeps its Adam moments; the step decays as 1/sqrt(round)."""
    from fedlab.algorithms import DecentralizedSGD
    from fedlab.engine import InverseSqrtLR

    solver = LocalSGD(lr=0.01, batch_size=4, optimizer="adam", schedule=InverseSqrtLR(), keep_state=True)
    state, _ = run(DecentralizedSGD(MLP(5, (4,), 3), solver, np.full((4, 4), 0.25)), fed, rounds=3, seed=0,
                   progress=False)
    assert state.optimizer.steps.tolist() == [3, 3, 3, 3] and set(state.optimizer.moments) == {"m", "v"}
