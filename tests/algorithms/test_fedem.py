"""FedEM (Algorithm 7), D-FedEM (Algorithm 8) and new-client adaptation on the engine (spec §11.1–11.2)."""
import networkx as nx
import numpy as np
import pytest
import torch

from fedlab.algorithms import FedAvg
from fedlab.algorithms.fedem import (DecentralizedMixtureState, DFedEM, FedEM, MixtureState, PI_INITS,
                                     component_losses, consensus_distance, e_step)
from fedlab.fedem.data import make_synthetic_mixture
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, gossip, run
from fedlab.fedem.experiments import component_cosines
from fedlab.models import MLP, LinearModel
from fedlab.mixing import fmmc_weights, metropolis_weights, second_largest_eigenvalue_modulus


SOLVER = LocalSGD(lr=0.1, local_steps=3, batch_size=8)


@pytest.mark.parametrize("backend", ["batched", "loop"])
@pytest.mark.parametrize("participation", [1.0, 0.5])
@pytest.mark.parametrize("model", [LinearModel(5, 3), MLP(5, (8,), 3)], ids=["linear", "mlp"])
def test_fedem_with_one_component_is_fedavg(small_data, model, participation, backend):
    fa, ha = run(FedAvg(model, SOLVER, participation=participation, backend=backend), small_data, rounds=5, seed=3)
    fe, he = run(FedEM(model, SOLVER, n_components=1, participation=participation, backend=backend), small_data,
                 rounds=5, seed=3)
    for k in fa.params:
        assert torch.equal(fa.params[k], fe.params[k][0])
    assert np.array_equal(np.array(ha.clients["test_accuracy"]), np.array(he.clients["test_accuracy"]))
    assert [e["participants"] for e in ha.log] == [e["participants"] for e in he.log]


def test_responsibilities_sum_to_one_and_weights_stay_in_the_simplex(small_data):
    model = LinearModel(5, 3)
    alg = FedEM(model, SOLVER, n_components=3)
    state, history = run(alg, small_data, rounds=4, seed=0)
    assert state.params["weight"].shape == (3, 3, 5) and state.pi.shape == (6, 3)
    assert torch.allclose(state.pi.sum(1), torch.ones(6, dtype=torch.float64)) and (state.pi >= 0).all()
    q = e_step(torch.log(state.pi), component_losses(model, state.params, small_data.train))
    assert torch.allclose(q.sum(1), torch.ones_like(q[:, 0]))
    assert all(np.isfinite(e["nll"]) for e in history.log)
    assert set(history.clients) == {"train_loss", "train_accuracy", "test_loss", "test_accuracy"}


def test_symmetric_start_keeps_components_equal(small_data):
    model = LinearModel(5, 3)
    alg = FedEM(model, SOLVER, n_components=3)
    one = model.init(torch.Generator().manual_seed(0))
    same = {k: v.unsqueeze(0).repeat(3, *[1] * v.dim()) for k, v in one.items()}
    state = MixtureState(same, torch.full((6, 3), 1 / 3, dtype=torch.float64))
    for _ in range(3):
        state, _ = alg.round(state, small_data, 0)
    assert torch.allclose(state.params["weight"][0], state.params["weight"][1])
    assert torch.allclose(state.pi, torch.full((6, 3), 1 / 3, dtype=torch.float64))
    broken, _ = run(alg, small_data, rounds=3, seed=0)  # distinct initial components
    assert not torch.allclose(broken.params["weight"][0], broken.params["weight"][1])


def test_random_and_explicit_initial_weights(small_data):
    model = LinearModel(5, 3)
    s = FedEM(model, SOLVER, n_components=2, pi_init="random").init(small_data, 0)
    assert not torch.allclose(s.pi, torch.full((6, 2), 0.5, dtype=torch.float64))
    pi0 = np.tile([0.3, 0.7], (6, 1))
    s = FedEM(model, SOLVER, n_components=2, pi_init=pi0).init(small_data, 0)
    assert np.allclose(s.pi.numpy(), pi0)
    with pytest.raises(ValueError, match="pi_init"):
        FedEM(model, SOLVER, n_components=2, pi_init="dirichlet")
    with pytest.raises(ValueError, match="pi_init"):
        FedEM(model, SOLVER, n_components=2, pi_init=np.ones((6, 2))).init(small_data, 0)
    assert PI_INITS == ("uniform", "random")


def test_stale_aggregation_matches_under_full_participation(small_data):
    model = LinearModel(5, 3)
    a, _ = run(FedEM(model, SOLVER, n_components=2), small_data, rounds=3, seed=1)
    b, _ = run(FedEM(model, SOLVER, n_components=2, aggregation="stale"), small_data, rounds=3, seed=1)
    assert torch.allclose(a.params["weight"], b.params["weight"])
    c, _ = run(FedEM(model, SOLVER, n_components=2, participation=0.5), small_data, rounds=3, seed=1)
    d, _ = run(FedEM(model, SOLVER, n_components=2, participation=0.5, aggregation="stale"), small_data, rounds=3,
               seed=1)
    assert not torch.allclose(c.params["weight"], d.params["weight"])


def test_only_participants_update_their_weights(small_data):
    alg = FedEM(LinearModel(5, 3), SOLVER, n_components=2, participation=lambda t, rng: np.arange(6) < 2)
    state, _ = run(alg, small_data, rounds=2, seed=0)
    assert torch.allclose(state.pi[2:], torch.full((4, 2), 0.5, dtype=torch.float64))
    assert not torch.allclose(state.pi[:2], torch.full((2, 2), 0.5, dtype=torch.float64))
    nobody = FedEM(LinearModel(5, 3), SOLVER, participation=lambda t, rng: np.zeros(6, bool))
    s, h = run(nobody, small_data, rounds=1, seed=0)
    assert h.log[0]["participants"] == [] and s.round == 1


def _gaussian_clients(n_clients=8, n=300, seed=0):
    """1-D mixture of N(-4,1), N(0,1), N(4,1) as regression clients of LinearModel(1, 1, mse) with x = 0."""
    rng = np.random.default_rng(seed)
    pis = rng.dirichlet(np.ones(3), size=n_clients)
    xs, ys = [], []
    for pi in pis:
        z = rng.choice(3, size=n, p=pi)
        xs.append(np.zeros((n, 1), np.float32))
        ys.append((np.array([-4.0, 0.0, 4.0])[z] + rng.standard_normal(n)).astype(np.float32))
    data = FederatedDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(xs, ys))
    return data, pis


def test_fedem_on_the_engine_recovers_a_gaussian_mixture():
    data, pis = _gaussian_clients()
    model = LinearModel(1, 1, loss="mse", zero_init=False)
    alg = FedEM(model, LocalSGD(lr=0.2, local_steps=10, batch_size=32), n_components=3)
    init = alg.init(data, 0)
    state = MixtureState({"weight": torch.zeros(3, 1, 1), "bias": torch.tensor([[-1.0], [0.5], [1.0]])}, init.pi)
    state, history = run(alg, data, rounds=60, seed=0, state=state, eval_every=60)
    means = np.sort(state.params["bias"].numpy().ravel())
    assert np.allclose(means, [-4, 0, 4], atol=0.35)
    order = np.argsort(state.params["bias"].numpy().ravel())
    assert np.abs(state.pi.numpy()[:, order] - pis).max() < 0.1
    nll = np.array([e["nll"] for e in history.log])
    assert nll[-1] < nll[0] - 1.0


def test_new_clients_learn_only_their_weights():
    d = make_synthetic_mixture(n_clients=30, dim=10, n_max=200, n_test=200, rng=0)
    seen, unseen = d.split_clients(0.8)
    model = LinearModel(10, 2)
    alg = FedEM(model, LocalSGD(lr=0.25, local_steps=10, batch_size=32), n_components=3)
    state, _ = run(alg, seen.federated(), rounds=60, seed=0, eval_every=60)
    before = {k: v.clone() for k, v in state.params.items()}
    pi1, m1 = alg.adapt(state, unseen.federated(), seed=0, n_iter=1)
    pi50, m50 = alg.adapt(state, unseen.federated(), seed=0, n_iter=50)
    assert all(torch.equal(before[k], state.params[k]) for k in before)
    assert pi50.shape == (6, 3) and np.allclose(pi50.sum(1), 1)
    assert set(m50) == {"train_loss", "train_accuracy", "test_loss", "test_accuracy"}
    assert m50["train_loss"].mean() <= m1["train_loss"].mean() + 1e-9  # more EM steps: higher likelihood


def test_synthetic_mixture_end_to_end():
    """Spec §11.1.8 (soft): FedEM beats FedAvg by >= 8 pp and Local by >= 3 pp; components recovered."""
    from fedlab.algorithms import Local

    d = make_synthetic_mixture(n_clients=50, dim=20, n_max=300, n_test=500, rng=0)
    fed = d.federated()
    model, solver = LinearModel(20, 2), LocalSGD(lr=0.25, local_steps=10, batch_size=32)
    acc = {}
    for name, alg in (("fedem", FedEM(model, solver, n_components=3)), ("fedavg", FedAvg(model, solver)),
                      ("local", Local(model, solver))):
        state, h = run(alg, fed, rounds=200, seed=0, eval_every=200)
        acc[name] = h.final("test_accuracy")
        if name == "fedem":
            cos = component_cosines(state.params, d.meta["theta"])
    assert acc["fedem"] - acc["fedavg"] >= 0.08 and acc["fedem"] - acc["local"] >= 0.03
    assert cos.min() >= 0.9 and np.median(cos) >= 0.98


def test_clustering_recovery_with_one_hot_weights():
    """Spec §11.1.7: with one-hot π*, argmax of the learned π gives the true clusters."""
    d = make_synthetic_mixture(n_clients=30, n_components=2, dim=10, n_max=200, n_test=100, one_hot_weights=True,
                               rng=1)
    alg = FedEM(LinearModel(10, 2), LocalSGD(lr=0.5, local_steps=10, batch_size=32), n_components=2)
    state, _ = run(alg, d.federated(), rounds=60, seed=0, eval_every=60)
    learned, truth = state.pi.numpy().argmax(1), d.pi.argmax(1)
    assert np.all(learned == truth) or np.all(learned == 1 - truth)
    assert component_cosines(state.params, d.meta["theta"]).min() >= 0.99


def test_bad_inputs(small_data):
    model = LinearModel(5, 3)
    with pytest.raises(ValueError, match="n_components"):
        FedEM(model, SOLVER, n_components=0)
    with pytest.raises(TypeError, match="n_components"):
        FedEM(model, SOLVER, n_components=2.0)
    with pytest.raises(TypeError, match="solver"):
        FedEM(model, 0.1)
    with pytest.raises(TypeError, match="model"):
        FedEM("linear", SOLVER)
    with pytest.raises(ValueError, match="aggregation"):
        FedEM(model, SOLVER, aggregation="mean")
    empty = FederatedDataset(ClientData(torch.zeros(2, 3, 5), torch.zeros(2, 3, dtype=torch.long), torch.tensor([3, 0])),
                             ClientData(torch.zeros(2, 3, 5), torch.zeros(2, 3, dtype=torch.long), torch.tensor([3, 3])))
    with pytest.raises(ValueError, match="no training data"):
        FedEM(model, SOLVER).init(empty, 0)
    with pytest.raises(ValueError, match="no training data"):
        DFedEM(model, SOLVER, np.eye(2)).init(empty, 0)


# ---------------------------------------------------------------------------- D-FedEM


def test_dfedem_with_complete_averaging_equals_fedem_with_uniform_weights(small_data):
    """Spec §11.2.15."""
    model = LinearModel(5, 3)
    w = np.full((6, 6), 1 / 6)
    a, ha = run(FedEM(model, SOLVER, n_components=3, weights="uniform"), small_data, rounds=5, seed=3)
    b, hb = run(DFedEM(model, SOLVER, w, n_components=3), small_data, rounds=5, seed=3)
    assert isinstance(b, DecentralizedMixtureState) and b.params["weight"].shape == (18, 3, 5)
    per_client = b.params["weight"].reshape(6, 3, 3, 5)
    assert torch.allclose(per_client, a.params["weight"].unsqueeze(0).expand_as(per_client), atol=1e-6)
    assert torch.allclose(a.pi, b.pi, atol=1e-6)
    assert np.allclose(np.array(ha.clients["test_accuracy"]), np.array(hb.clients["test_accuracy"]))
    assert all(e["consensus"] < 1e-10 for e in hb.log)


def test_dfedem_on_a_sparse_graph_mixes_and_can_scale_by_size(small_data):
    model = LinearModel(5, 3)
    ring = metropolis_weights(nx.cycle_graph(6))
    alg = DFedEM(model, SOLVER, ring, n_components=2)
    state, h = run(alg, small_data, rounds=4, seed=0)
    assert all(e["consensus"] > 0 for e in h.log)
    avg = alg.average_components(state)
    assert avg["weight"].shape == (2, 3, 5)
    s2, _ = run(DFedEM(model, SOLVER, ring, n_components=2, weight_by_size=True), small_data, rounds=4, seed=0)
    assert not torch.allclose(state.params["weight"], s2.params["weight"])
    pi, metrics = alg.adapt(state, small_data, seed=0, n_iter=5)
    assert pi.shape == (6, 2) and metrics["test_accuracy"].shape == (6,)
    timevar = DFedEM(model, SOLVER, lambda t, rng: ring if t % 2 else np.eye(6), n_components=2)
    run(timevar, small_data, rounds=2, seed=0)


def test_dfedem_rejects_bad_mixing_matrices(small_data):
    model = LinearModel(5, 3)
    row_only = np.full((6, 6), 1 / 6)
    row_only[0] = [1, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="doubly stochastic"):
        DFedEM(model, SOLVER, row_only).init(small_data, 0)
    with pytest.raises(ValueError, match="shape"):
        DFedEM(model, SOLVER, np.eye(5)).init(small_data, 0)
    with pytest.raises(ValueError, match="non-negative"):
        DFedEM(model, SOLVER, 2 * np.eye(6) - np.full((6, 6), 1 / 6)).init(small_data, 0)
    bad_callable = DFedEM(model, SOLVER, lambda t, rng: row_only)
    with pytest.raises(ValueError, match="doubly stochastic"):
        bad_callable.round(bad_callable.init(small_data, 0), small_data, 0)


def test_consensus_distance():
    p = {"w": torch.tensor([[1.0, 0.0], [3.0, 0.0]])}
    assert consensus_distance(p, 2) == pytest.approx(2.0)
    assert consensus_distance({"w": torch.ones(4, 3)}, 4) == 0.0


def _random_graphs():
    for n, seed in ((10, 0), (20, 1), (15, 2)):
        g = nx.gnp_random_graph(n, 0.4, seed=seed)
        if nx.is_connected(g):
            yield g


def test_mixing_matrix_facts():
    """Spec §11.2.11–14: doubly stochastic, zero off-graph, SLEM < 1, FMMC <= Metropolis, contraction, average."""
    rng = np.random.default_rng(0)
    graphs = list(_random_graphs())
    assert len(graphs) >= 2
    for g in graphs:
        n = g.number_of_nodes()
        adj = nx.to_numpy_array(g) > 0
        wf, wm = fmmc_weights(g), metropolis_weights(g)
        for w in (wf, wm):
            assert np.allclose(w, w.T) and (w >= -1e-12).all()
            assert np.allclose(w.sum(0), 1, atol=1e-6) and np.allclose(w.sum(1), 1, atol=1e-6)
            assert np.all(np.abs(w[~(adj | np.eye(n, dtype=bool))]) < 1e-8)
        sf, sm = second_largest_eigenvalue_modulus(wf), second_largest_eigenvalue_modulus(wm)
        assert sf < 1 and sm < 1 and sf <= sm + 1e-6
        xi = torch.as_tensor(rng.standard_normal((n, 4)))
        mixed = gossip({"x": xi}, wf)["x"]
        dev = (xi - xi.mean(0)).norm()
        assert (mixed - mixed.mean(0)).norm() <= sf * dev + 1e-9
        assert torch.allclose(mixed.mean(0), xi.mean(0), atol=1e-12)


def test_dfedem_close_to_fedem_on_synthetic_mixture():
    """Spec §11.2.16 (soft): D-FedEM on ER(0.5) with FMMC within 3 pp of FedEM."""
    from fedlab.fedem.experiments import erdos_renyi_mixing

    d = make_synthetic_mixture(n_clients=30, dim=10, n_max=200, n_test=200, rng=2)
    fed = d.federated()
    model, solver = LinearModel(10, 2), LocalSGD(lr=0.25, local_steps=10, batch_size=32)
    w, _ = erdos_renyi_mixing(30, 0.5, seed=0)
    _, hf = run(FedEM(model, solver, n_components=3), fed, rounds=80, seed=0, eval_every=80)
    _, hd = run(DFedEM(model, solver, w, n_components=3), fed, rounds=80, seed=0, eval_every=80)
    assert abs(hf.final("test_accuracy") - hd.final("test_accuracy")) <= 0.03
