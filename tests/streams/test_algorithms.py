"""Algorithm 13, its strategies and lambda rules (fedlab.streams.algorithms)."""
import numpy as np
import pytest
import torch

from fedlab.algorithms.fedavg import FedAvg
from fedlab.streams.algorithms import (LAMBDA_RULES, STRATEGIES, StreamingFedAvg, StreamState,
                                       algorithm13_gradient, local_sample_weights, sample_weight_schedule,
                                       strategy_weights)
from fedlab.streams.bounds import importance_from_schedule, optimal_weights
from fedlab.streams.data import (ConstantArrivals, PoissonArrivals, StaticArrivals, make_case_study,
                                 make_stream_dataset, make_stream_synthetic)
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, local_sgd, run
from fedlab.models import LinearModel


def _case(horizon=4, b=2, n_hist=6, dim=3):
    syn = make_stream_synthetic(4, dim=dim, eps=0.2, rng=0)
    xs, ys = syn.sample([n_hist, n_hist, b * horizon, b * horizon], rng=1)
    txs, tys = syn.sample([5] * 4, rng=2)
    return make_case_study(xs[:2], ys[:2], xs[2:], ys[2:], horizon=horizon, test_xs=txs, test_ys=tys, n_classes=2)


MODEL = LinearModel(3, 2)
SOLVER = LocalSGD(lr=0.3, local_steps=2, batch_size=4)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_strategy(strategy):
    n = np.array([0.1, 0.1, 0.4, 0.4])
    p = strategy_weights(strategy, n, 2, p_hist=0.5, ratio=0.3)
    assert np.isclose(p.sum(), 1) and p.min() >= 0
    expected = {"fresh": 0.0, "historical": 1.0, "uniform": 0.2, "fixed": 0.5,
                "ours": optimal_weights(0.3, n, 2)[:2].sum()}[strategy]
    assert p[:2].sum() == pytest.approx(expected)


def test_strategy_errors():
    n = [0.5, 0.5]
    with pytest.raises(ValueError, match="strategy"):
        strategy_weights("best", n, 1)
    with pytest.raises(ValueError, match="p_hist"):
        strategy_weights("fixed", n, 1)
    with pytest.raises(ValueError, match="ratio"):
        strategy_weights("ours", n, 1)


@pytest.mark.parametrize("rule", list(LAMBDA_RULES))
def test_every_lambda_rule(rule):
    data = _case()
    lam = sample_weight_schedule(data, rule, p=np.full(4, 0.25) if rule == "client" else None)
    assert len(lam) == 4 and lam[2].shape == (4, 8)
    for k, s in enumerate(data.schedules()):
        assert np.all(lam[k][~s.in_memory] == 0) and np.all(lam[k][s.in_memory] > 0)


def test_lambda_rules_importances():
    data = make_stream_dataset([np.zeros((10, 1))], [np.zeros(10, dtype=int)], [ConstantArrivals(2)], [4],
                               horizon=5)
    inv = importance_from_schedule(sample_weight_schedule(data, "inverse_stay"))
    assert inv.n_eff == pytest.approx(10)  # Uniform: N_eff = N
    data = _case(horizon=5)
    p = np.array([0.3, 0.2, 0.1, 0.4])
    imp = importance_from_schedule(sample_weight_schedule(data, "client", p=p))
    assert np.allclose(imp.p_rounds, p) and np.allclose(imp.q, 0.2) and np.allclose(imp.p_clients, p)
    # Uniform importances in lambda terms: lambda_hist / lambda_fresh = 1/T (spec 2.2)
    lam = sample_weight_schedule(data, "client", p=data.fractions)
    assert lam[0].max() / lam[2].max() == pytest.approx(1 / 5)
    with pytest.raises(ValueError, match="needs the client importances"):
        sample_weight_schedule(data, "client")
    with pytest.raises(TypeError, match="StreamDataset"):
        sample_weight_schedule([1, 2], "ones")


def test_local_sample_weights_scale():
    lam = np.array([1.0, 3.0, 0.0, 4.0])
    w = local_sample_weights(lam)
    assert w.mean() == pytest.approx(1.0) and np.allclose(w, 4 * lam / 8)
    with pytest.raises(ValueError, match="positive sum"):
        local_sample_weights([0.0, 0.0])


def _weighted_objective_grad(params, x, y, lam):
    leaf = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    losses = MODEL.per_sample_loss(MODEL.forward(leaf, x), y)
    obj = (torch.as_tensor(lam, dtype=torch.float32) * losses).sum() / float(lam.sum())
    return torch.cat([g.flatten() for g in torch.autograd.grad(obj, list(leaf.values()))])


def test_algorithm13_gradient_is_unbiased():
    rng = np.random.default_rng(0)
    grads = rng.normal(size=(6, 3))
    lam = rng.uniform(0.1, 2.0, size=6)
    draws = np.array([algorithm13_gradient(grads, lam, 3, rng) for _ in range(6000)])
    full = (lam / lam.sum()) @ grads
    se = draws.std(0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(0) - full) < 5 * se + 1e-12)
    assert np.allclose(algorithm13_gradient(grads, lam, 10, rng), full)  # K >= |I|: full gradient
    with pytest.raises(ValueError, match="shape"):
        algorithm13_gradient(grads, lam[:3], 2)


def test_engine_stochastic_gradient_is_unbiased_for_the_weighted_objective():
    # R copies of one memory: one local step each (lr 1) gives R independent stochastic gradients
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    y = rng.integers(0, 2, size=6)
    lam = rng.uniform(0.1, 2.0, size=6)
    params = MODEL.init(torch.Generator().manual_seed(0))
    R = 3000
    data = ClientData.from_arrays([x] * R, [y] * R, [local_sample_weights(lam)] * R)
    start = {k: v.unsqueeze(0).repeat(R, *[1] * v.dim()) for k, v in params.items()}
    new, _ = local_sgd(MODEL, start, data, LocalSGD(lr=1.0, local_steps=1, batch_size=2), key=(0, 0, 0),
                       backend="batched")
    g = torch.cat([(start[k] - new[k]).flatten(1) for k in params], 1).double().numpy()
    true = _weighted_objective_grad(params, torch.as_tensor(x), torch.as_tensor(y), lam).numpy()
    se = g.std(0) / np.sqrt(R)
    assert np.all(np.abs(g.mean(0) - true) < 5 * se + 1e-6)


def test_aggregation_weights_follow_the_client_importances():
    data = _case()
    p = np.array([0.4, 0.1, 0.3, 0.2])
    algo = StreamingFedAvg(MODEL, SOLVER, weights=p)
    state, hist = run(algo, data, rounds=4, seed=0, progress=False)
    assert isinstance(state, StreamState) and state.round == 4
    for info in hist.log:
        assert info["participants"] == [0, 1, 2, 3] and np.allclose(info["p_round"], p)
    assert {"test_accuracy", "test_accuracy_avg", "train_loss_avg"} <= set(hist.clients)
    hist_only = StreamingFedAvg(MODEL, SOLVER, weights=strategy_weights("historical", data.fractions, 2))
    _, h2 = run(hist_only, data, rounds=2, seed=0, progress=False)
    assert h2.log[0]["participants"] == [0, 1]


def test_static_memories_reduce_to_fedavg():
    syn = make_stream_synthetic(3, dim=3, eps=0.2, rng=0)
    xs, ys = syn.sample([7, 9, 5], rng=1)
    stream = make_stream_dataset(xs, ys, [StaticArrivals(len(x)) for x in xs], [len(x) for x in xs], "keep",
                                 horizon=3, test_xs=xs, test_ys=ys, n_classes=2)
    fed = FederatedDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(xs, ys), 2)
    n = stream.fractions
    s1, _ = run(StreamingFedAvg(MODEL, SOLVER, weights=n), stream, rounds=3, seed=5, progress=False)
    s2, _ = run(FedAvg(MODEL, SOLVER, weights="size"), fed, rounds=3, seed=5, progress=False)
    for k in s1.params:
        assert torch.allclose(s1.params[k], s2.params[k], atol=1e-6)


def test_explicit_schedule_equals_rule_and_q_average():
    data = make_stream_dataset(*make_stream_synthetic(2, dim=3, rng=0).sample([12, 12], rng=1),
                               [ConstantArrivals(3), PoissonArrivals(1.5)], [6, 4], ["fifo", "reservoir"],
                               horizon=4, n_classes=2, rng=0)
    lam = sample_weight_schedule(data, "inverse_stay")
    s1, _ = run(StreamingFedAvg(MODEL, SOLVER, sample_weights="inverse_stay"), data, rounds=4, seed=1,
                progress=False)
    s2, _ = run(StreamingFedAvg(MODEL, SOLVER, sample_weights=lam), data, rounds=4, seed=1, progress=False)
    for k in s1.params:
        assert torch.allclose(s1.params[k], s2.params[k])
    # q-average by hand: theta_bar = sum_t q_t theta^(t), theta^(t) the model broadcast at round t
    algo = StreamingFedAvg(MODEL, SOLVER, sample_weights="ones")
    state = algo.init(data, 2)
    iterates, masses = [], []
    for _ in range(4):
        iterates.append(state.params["weight"].clone())
        state, info = algo.round(state, data, 2)
        masses.append(info["mass"])
    q = np.array(masses) / sum(masses)
    manual = sum(qi * it for qi, it in zip(q, iterates))
    assert torch.allclose(state.avg_params["weight"], manual.float(), atol=1e-6)
    assert state.avg_mass == pytest.approx(sum(masses))


def test_projection_and_empty_rounds():
    data = make_stream_dataset([np.ones((4, 3), np.float32)], [np.zeros(4, dtype=int)], [[2, 0, 2]], [2], "current",
                               horizon=3, n_classes=2)
    algo = StreamingFedAvg(MODEL, LocalSGD(lr=5.0, local_steps=3, batch_size=2), radius=0.5)
    state = algo.init(data, 0)
    state, info = algo.round(state, data, 0)
    norm = torch.sqrt(sum(v.pow(2).sum() for v in state.params.values()))
    assert float(norm) <= 0.5 + 1e-6
    state, info = algo.round(state, data, 0)  # empty memory: nobody trains
    assert info["participants"] == [] and state.round == 2
    state, _ = algo.round(state, data, 0)
    with pytest.raises(ValueError, match="beyond the streams' horizon"):
        algo.round(state, data, 0)


def test_algorithm_errors():
    data = _case()
    with pytest.raises(ValueError, match="not both"):
        StreamingFedAvg(MODEL, SOLVER, weights=[0.25] * 4, sample_weights="ones")
    with pytest.raises(ValueError, match="sample_weights"):
        StreamingFedAvg(MODEL, SOLVER, sample_weights="twice")
    with pytest.raises(ValueError, match="weights=p"):
        StreamingFedAvg(MODEL, SOLVER, sample_weights="client")
    with pytest.raises(ValueError, match="weights must sum to 1"):
        StreamingFedAvg(MODEL, SOLVER, weights=[0.5, 0.6])
    with pytest.raises(TypeError, match="solver"):
        StreamingFedAvg(MODEL, "sgd")
    with pytest.raises(TypeError, match="model"):
        StreamingFedAvg("linear", SOLVER)
    with pytest.raises(ValueError, match="one entry per client"):
        StreamingFedAvg(MODEL, SOLVER, weights=[0.5, 0.5]).init(data, 0)
    with pytest.raises(TypeError, match="StreamDataset"):
        fed = FederatedDataset(data.train, data.test, 2)
        StreamingFedAvg(MODEL, SOLVER).init(fed, 0)
    zero = [np.zeros((4, int(n))) for n in data.train.n]
    with pytest.raises(ValueError, match="no weight"):
        StreamingFedAvg(MODEL, SOLVER, sample_weights=zero).init(data, 0)
    with pytest.raises(ValueError, match="shape"):
        StreamingFedAvg(MODEL, SOLVER, sample_weights=[np.ones((3, 3))] * 4).init(data, 0)


def test_scaffold_with_one_client_is_single_sgd_steps():
    from fedlab._rng import Stream
    from fedlab.engine import broadcast
    from fedlab.streams.algorithms import StreamingScaffold

    data = _case()
    alg = StreamingScaffold(MODEL, SOLVER, weights=[1.0, 0.0, 0.0, 0.0])   # only client 0 trains
    state, _ = run(alg, data, rounds=2, seed=3, eval_every=2, progress=False)
    one = LocalSGD(lr=SOLVER.lr, local_steps=1, batch_size=SOLVER.batch_size)
    params = alg.init(data, 3).params
    for t in range(2):   # one client: c = c_1, the correction vanishes
        y = broadcast(params, 1)
        memory = data.memory(t, weight=torch.ones(data.memory_index.shape[1:])).select([0])
        for e in range(SOLVER.local_steps):
            y, _ = local_sgd(MODEL, y, memory, one, key=(3, t, Stream.LOCAL, e))
        params = {k: v[0] for k, v in y.items()}
    for k in params:
        assert torch.allclose(state.params[k], params[k], atol=1e-6)
        assert torch.allclose(state.control[k], state.client_controls[k][0], atol=1e-6)


def test_scaffold_controls_follow_the_client_weights():
    from fedlab.streams.algorithms import ScaffoldStreamState, StreamingScaffold

    data = _case()
    p = np.array([0.0, 0.0, 0.5, 0.5])   # Fresh: the historical clients never train
    alg = StreamingScaffold(MODEL, SOLVER, weights=p)
    state, _ = run(alg, data, rounds=3, seed=0, eval_every=3, progress=False)
    assert isinstance(state, ScaffoldStreamState) and state.round == 3
    for k, c in state.client_controls.items():
        assert torch.count_nonzero(c[:2]) == 0 and torch.count_nonzero(c[2:]) > 0
        assert torch.allclose(state.control[k], 0.5 * c[2] + 0.5 * c[3], atol=1e-6)
    metrics = alg.evaluate(state, data)
    assert metrics["test_accuracy"].shape == (4,) and "test_accuracy_avg" in metrics
    with pytest.raises(ValueError, match="plain SGD"):
        StreamingScaffold(MODEL, LocalSGD(lr=0.1, local_steps=2, batch_size=4, momentum=0.9))
