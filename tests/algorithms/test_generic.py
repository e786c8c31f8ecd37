import numpy as np
import pytest
import torch

from fedlab.methods import METHODS
from fedlab.algorithms import Centralized, DecentralizedSGD, FedAvg, FedProx, Local
from fedlab.algorithms.common import check_data, check_mixing, check_weights, client_weights
from fedlab.engine import DivergenceError, FederatedDataset, LocalSGD, local_sgd, run
from fedlab.models import MLP, LinearModel

from helpers import make_clients

SOLVER = LocalSGD(lr=0.1, local_steps=3, batch_size=8)


def _curves(history):
    return {name: np.array(vals) for name, vals in history.clients.items()}


def _assert_histories_equal(a, b, tol=0.0):
    ca, cb = _curves(a), _curves(b)
    assert ca.keys() == cb.keys()
    for name in ca:
        assert np.allclose(ca[name], cb[name], atol=tol, equal_nan=True), name


def test_same_seed_same_history(small_data):
    alg = FedAvg(LinearModel(5, 3), SOLVER, participation=0.5)
    _, h1 = run(alg, small_data, rounds=4, seed=7)
    _, h2 = run(alg, small_data, rounds=4, seed=7)
    _, h3 = run(alg, small_data, rounds=4, seed=8)
    _assert_histories_equal(h1, h2)
    assert h1.log == h2.log
    assert not np.allclose(_curves(h1)["train_loss"], _curves(h3)["train_loss"])


def test_batched_and_loop_runs_agree(small_data):
    model = LinearModel(5, 3)
    _, hb = run(FedAvg(model, SOLVER, backend="batched"), small_data, rounds=5, seed=1)
    _, hl = run(FedAvg(model, SOLVER, backend="loop"), small_data, rounds=5, seed=1)
    _assert_histories_equal(hb, hl, 1e-5)


def test_fedavg_with_one_client_is_centralized_sgd():
    xs, ys = make_clients(n_clients=1, sizes=[40])
    data = FederatedDataset.from_client_arrays(xs, ys, seed=0)
    model = LinearModel(5, 3)
    fed_state, _ = run(FedAvg(model, SOLVER), data, rounds=6, seed=2)
    cen_state, _ = run(Centralized(model, SOLVER), data, rounds=6, seed=2)
    for k in fed_state.params:
        assert torch.allclose(fed_state.params[k], cen_state.params[k], atol=1e-6)


def test_fedavg_round_is_weighted_average_of_local_updates(small_data):
    model = LinearModel(5, 3)
    alg = FedAvg(model, SOLVER)
    state = alg.init(small_data, 0)
    new_state, info = alg.round(state, small_data, 0)
    start = {k: v.unsqueeze(0).repeat(small_data.n_clients, *[1] * v.dim()) for k, v in state.params.items()}
    local, _ = local_sgd(model, start, small_data.train, SOLVER, key=(0, 0, 0))
    p = small_data.train.n.double() / small_data.train.n.sum()
    expected = (p.view(-1, 1, 1).float() * local["weight"]).sum(0)
    assert torch.allclose(new_state.params["weight"], expected, atol=1e-6)
    assert info["participants"] == list(range(small_data.n_clients)) and new_state.round == 1


def test_client_sampling_fraction_and_mask(small_data):
    alg = FedAvg(LinearModel(5, 3), SOLVER, participation=0.5)
    _, h = run(alg, small_data, rounds=5, seed=0)
    assert all(len(entry["participants"]) == 3 for entry in h.log)
    assert len({tuple(e["participants"]) for e in h.log}) > 1
    only_two = FedAvg(LinearModel(5, 3), SOLVER, participation=lambda t, rng: np.arange(6) < 2)
    _, h2 = run(only_two, small_data, rounds=2, seed=0)
    assert all(e["participants"] == [0, 1] for e in h2.log)
    nobody = FedAvg(LinearModel(5, 3), SOLVER, participation=lambda t, rng: np.zeros(6, bool))
    state, _ = run(nobody, small_data, rounds=2, seed=0)
    init = nobody.init(small_data, 0)
    assert all(torch.equal(state.params[k], init.params[k]) for k in init.params)


def test_local_keeps_personal_parameters(small_data):
    model = LinearModel(5, 3)
    alg = Local(model, SOLVER)
    state, h = run(alg, small_data, rounds=3, seed=0)
    w = state.params["weight"]
    assert w.shape[0] == small_data.n_clients and not torch.allclose(w[0], w[1])
    assert h.final("train_loss") < h.curve("train_loss")[1][0]


def test_decentralized_with_complete_averaging_is_fedavg():
    xs, ys = make_clients(sizes=[20] * 4, n_clients=4)
    data = FederatedDataset.from_client_arrays(xs, ys, seed=0)
    model = LinearModel(5, 3)
    d_state, _ = run(DecentralizedSGD(model, SOLVER, np.full((4, 4), 0.25)), data, rounds=3, seed=3)
    f_state, _ = run(FedAvg(model, SOLVER, weights="uniform"), data, rounds=3, seed=3)
    for r in range(4):
        assert torch.allclose(d_state.params["weight"][r], f_state.params["weight"], atol=1e-6)


def test_decentralized_with_identity_is_local(small_data):
    model = LinearModel(5, 3)
    d_state, _ = run(DecentralizedSGD(model, SOLVER, np.eye(6)), small_data, rounds=3, seed=0)
    l_state, _ = run(Local(model, SOLVER), small_data, rounds=3, seed=0)
    assert torch.allclose(d_state.params["weight"], l_state.params["weight"], atol=1e-6)


def test_decentralized_time_varying_matrix(small_data):
    calls = []

    def matrices(t, rng):
        calls.append(t)
        return np.eye(6) if t % 2 else np.full((6, 6), 1 / 6)

    run(DecentralizedSGD(LinearModel(5, 3), SOLVER, matrices), small_data, rounds=3, seed=0)
    assert calls == [0, 1, 2]


def test_fedprox_differs_from_fedavg_and_checks_mu(small_data):
    model = LinearModel(5, 3)
    a, _ = run(FedAvg(model, SOLVER), small_data, rounds=2, seed=0)
    b, _ = run(FedProx(model, SOLVER, mu=1.0), small_data, rounds=2, seed=0)
    assert not torch.allclose(a.params["weight"], b.params["weight"])
    with pytest.raises(ValueError, match="mu"):
        FedProx(model, SOLVER, mu=0.0)


def test_divergence_stops_the_run():
    xs, ys = make_clients(regression=True)
    data = FederatedDataset.from_client_arrays([x * 100 for x in xs], ys, seed=0)
    with pytest.raises(DivergenceError):
        run(FedAvg(LinearModel(5, 1, loss="mse"), LocalSGD(lr=5.0, local_steps=10)), data, rounds=20, seed=0)


def _method_options(name, data):
    """The options each method needs beyond (model, solver) on a plain FederatedDataset."""
    k = data.n_clients
    availability = {"participation": lambda t, rng: rng.random(k) < 0.7, "pi": np.full(k, 0.7), "lam": np.full(k, 0.2)}
    if name.startswith("availability:"):
        return availability
    return {"fedprox": {"mu": 0.1}, "dsgd": {"mixing_matrix": np.full((k, k), 1 / k)},
            "d-fedem": {"mixing_matrix": np.full((k, k), 1 / k)}, "fedem:d-fedem": {"mixing_matrix": np.full((k, k), 1 / k)},
            "topology:dpasgd": {"mixing_matrix": np.full((k, k), 1 / k)},
            "knnper:knnper": {"lam": 0.5}, "knnper:knnper_shared": {"lam": 0.5}}.get(name, {})


def _stream_only(name):
    """Methods that need their chapters' stream data sets (run in their own tests)."""
    return name.split(":")[0] in ("streams", "sfedpo")


@pytest.mark.parametrize("name", sorted(n for n, m in METHODS.items() if m.takes_solver))
def test_every_method_runs(name, small_data):
    """Every method built from (model, solver) runs on a plain data set; the others (simulations with their own
    arguments) run in their chapters' tests."""
    model = MLP(5, (8,), 3) if name.startswith("knnper:knnper") else LinearModel(5, 3)  # kNN-Per: hidden features
    alg = METHODS[name](model, SOLVER, **_method_options(name, small_data))
    if _stream_only(name):
        assert hasattr(alg, "round")
        return
    _, h = run(alg, small_data, rounds=2, seed=0)
    assert np.isfinite(h.final("train_loss"))


@pytest.mark.parametrize("kwargs, match", [(dict(participation=0.0), "participation"),
                                           (dict(participation=1.5), "participation"),
                                           (dict(backend="cuda"), "backend")])
def test_bad_fedavg_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FedAvg(LinearModel(5, 3), SOLVER, **kwargs)


def test_bad_weights_and_run_arguments(small_data):
    with pytest.raises(ValueError, match="sum to 1"):
        run(FedAvg(LinearModel(5, 3), SOLVER, weights=np.ones(6)), small_data, rounds=1)
    with pytest.raises(ValueError, match="rounds"):
        run(FedAvg(LinearModel(5, 3), SOLVER), small_data, rounds=-1)
    with pytest.raises(TypeError, match="solver"):
        FedAvg(LinearModel(5, 3), "sgd")
    with pytest.raises(ValueError, match="mixing_matrix"):
        run(DecentralizedSGD(LinearModel(5, 3), SOLVER, np.full((6, 6), 0.5)), small_data, rounds=1)


def test_registry_presets_and_errors():
    assert METHODS["sfedpo:fedprox_buffer"].solver_options == {"prox_mu": 0.1}
    alg = METHODS["sfedpo:fedprox_buffer"](LinearModel(5, 3), SOLVER)
    assert alg.solver.prox_mu == 0.1 and SOLVER.prox_mu == 0.0
    assert METHODS["fedem:fedprox"](LinearModel(5, 3), SOLVER, mu=0.3).mu == 0.3
    assert {"fem_omd", "fedomd"} <= set(METHODS.presets("online"))
    assert not METHODS["gmm_em"].takes_solver and METHODS["gmm_em"](2).n_components == 2
    with pytest.raises(TypeError, match=r"built from \(model, solver\)"):
        METHODS["fedavg"](LinearModel(5, 3))
    with pytest.raises(KeyError, match="unknown method 'fedsgd'"):
        METHODS["fedsgd"]
    with pytest.raises(ValueError, match="name must be one of"):
        METHODS.build("fedsgd", LinearModel(5, 3), SOLVER)
    with pytest.raises(TypeError, match="solver"):
        METHODS["fedavg"](LinearModel(5, 3), 0.1)
    with pytest.raises(ValueError, match="solver_options"):
        METHODS.register("x", FedAvg, chapter="test", solver_options={"speed": 2})
    with pytest.raises(ValueError, match="name"):
        METHODS.register("a:b", FedAvg)


def test_construction_checks_of_weights_mixing_and_data():
    xs, ys = make_clients(sizes=[4, 6])
    data = FederatedDataset.from_client_arrays(xs, ys, n_classes=3, seed=0)
    assert check_weights("size") == "size" and check_weights([0.5, 0.5]).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="weights must be one of"):
        check_weights("foo")
    with pytest.raises(ValueError, match="p must sum to 1"):
        check_weights([0.5, 0.6], "p")
    assert client_weights("uniform", data.train).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="weights must have 2 entries"):
        client_weights([1 / 3] * 3, data.train)
    assert check_mixing(np.full((2, 2), 0.5)).shape == (2, 2)
    schedule = lambda r, rng: np.eye(2)  # noqa: E731
    assert check_mixing(schedule) is schedule
    with pytest.raises(ValueError, match="mixing_matrix"):
        check_mixing(np.ones((2, 3)) / 3)
    assert check_data(LinearModel(5, 3), data) is data
    with pytest.raises(ValueError, match=r"train has samples of shape \(5,\)"):
        check_data(LinearModel(4, 3), data)
    with pytest.raises(TypeError, match="data must be a FederatedDataset"):
        check_data(LinearModel(5, 3), data.train)
