"""Personalized-FL baselines and the shared evaluation protocol (fedlab.algorithms.personalized)."""
import networkx as nx
import numpy as np
import pytest
import torch

from fedlab._rng import Stream
from fedlab.algorithms import METHODS, FedAvg
from fedlab.algorithms.personalized import (APFL, PROTOCOL, ClusteredFL, ClusterState, Ditto, FedAvgPlus,
                                            FedRep, FineTuneState, PersonalState, PFedMe, finetune,
                                            history_scores, protocol_scores)
from fedlab.engine import FederatedDataset, LocalSGD, broadcast, evaluate, local_sgd, run
from fedlab.mixing import metropolis_weights
from fedlab.models import MLP, LinearModel

from helpers import make_clients

SOLVER = LocalSGD(lr=0.1, local_steps=3, batch_size=8)


def test_protocol_scores_weighted_average_and_bottom_decile():
    acc = np.linspace(0.0, 0.9, 10)
    n_test = np.arange(1, 11)
    s = protocol_scores({"test_accuracy": acc}, n_test)
    assert s["average"] == pytest.approx((acc * n_test).sum() / n_test.sum())
    assert s["bottom_decile"] == pytest.approx(np.percentile(acc, 10))
    assert set(PROTOCOL) == {"average", "bottom_decile"}
    with pytest.raises(ValueError, match="test_accuracy"):
        protocol_scores({"accuracy": acc}, n_test)
    with pytest.raises(ValueError, match="n_test"):
        protocol_scores({"test_accuracy": acc}, n_test[:3])


def test_history_scores_match_history_reductions(small_data):
    _, h = run(FedAvg(LinearModel(5, 3), SOLVER), small_data, rounds=3, seed=0)
    s = history_scores(h)
    assert s["average"] == h.final("test_accuracy", "weighted")
    assert s["bottom_decile"] == h.final("test_accuracy", "bottom_decile")
    assert history_scores(h, 0)["average"] == h.curve("test_accuracy")[1][0]


def test_finetune_runs_one_epoch_per_client():
    from fedlab.engine import ClientData

    xs, ys = make_clients(n_clients=3, sizes=[6, 20, 9])
    data = ClientData.from_arrays(xs, ys)
    model = LinearModel(5, 3)
    params = model.init(torch.Generator().manual_seed(0))
    solver = LocalSGD(lr=0.1, batch_size=8)
    out = finetune(model, params, data, solver, key=(0, 1, 3))
    assert out["weight"].shape == (3, 3, 5)
    start = {n: v.unsqueeze(0).repeat(3, *[1] * v.dim()) for n, v in params.items()}
    one = LocalSGD(lr=0.1, local_steps=1, batch_size=8)
    s0, _ = local_sgd(model, start, data, one, key=(0, 1, 3, 0))
    s1, _ = local_sgd(model, s0, data, one, key=(0, 1, 3, 1))
    s2, _ = local_sgd(model, s1, data, one, key=(0, 1, 3, 2))
    assert torch.allclose(out["weight"][0], s0["weight"][0])  # 6 samples: 1 step
    assert torch.allclose(out["weight"][2], s1["weight"][2])  # 9 samples: 2 steps
    assert torch.allclose(out["weight"][1], s2["weight"][1])  # 20 samples: 3 steps
    two = finetune(model, params, data, solver, key=(0, 1, 3), epochs=2, clients=[0])
    assert torch.allclose(two["weight"][0], s1["weight"][0])
    with pytest.raises(ValueError, match="epochs"):
        finetune(model, params, data, solver, key=(0,), epochs=0)


def test_fedavg_plus_trains_like_fedavg_and_personalizes(small_data):
    model = LinearModel(5, 3)
    fa, ha = run(FedAvg(model, SOLVER), small_data, rounds=4, seed=2)
    plus = FedAvgPlus(model, SOLVER, finetune_lr=0.05)
    fp, hp = run(plus, small_data, rounds=4, seed=2)
    assert isinstance(fp, FineTuneState) and fp.seed == 2
    assert all(torch.equal(fa.params[k], fp.params[k]) for k in fa.params)
    assert not np.allclose(np.array(ha.clients["train_loss"]), np.array(hp.clients["train_loss"]))
    assert hp.final("train_loss") < ha.final("train_loss")
    again = plus.evaluate(fp, small_data)  # deterministic
    assert np.array_equal(again["test_accuracy"], hp.clients["test_accuracy"][-1])
    personal, metrics = plus.adapt(fp, small_data, seed=2)  # the run's seed: evaluate's fine-tuning
    assert personal["weight"].shape == (6, 3, 5)
    assert np.array_equal(metrics["test_accuracy"], hp.clients["test_accuracy"][-1])


def _conflicting_clients():
    """Six clients, two groups with the same inputs distribution and different labelling rules."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 3))
    xs, ys = [], []
    for k in range(6):
        x = rng.normal(size=(60, 4)).astype(np.float32)
        y = np.argmax(x @ w, axis=1)
        xs.append(x)
        ys.append(y if k < 3 else (y + 1) % 3)
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=0)


def test_clustered_fl_without_split_is_fedavg(small_data):
    model = LinearModel(5, 3)
    fa, _ = run(FedAvg(model, SOLVER), small_data, rounds=4, seed=1)
    cf, h = run(ClusteredFL(model, SOLVER, tol_1=0.0, tol_2=1e9), small_data, rounds=4, seed=1)
    assert isinstance(cf, ClusterState) and cf.clusters == (0,) * 6
    assert torch.allclose(fa.params["weight"], cf.params["weight"][0], atol=1e-7)
    assert all(e["n_clusters"] == 1 for e in h.log)


def test_clustered_fl_separates_conflicting_groups():
    data = _conflicting_clients()
    alg = ClusteredFL(LinearModel(4, 3), LocalSGD(lr=0.2, local_steps=5, batch_size=16), tol_1=1e9, tol_2=0.0,
                      max_clusters=2)
    state, h = run(alg, data, rounds=20, seed=0, eval_every=20)
    clusters = np.array(state.clusters)
    assert len(set(clusters[:3])) == 1 and len(set(clusters[3:])) == 1 and clusters[0] != clusters[3]
    assert h.log[0]["splits"] == [0] and state.params["weight"].shape[0] == 2
    _, hf = run(FedAvg(LinearModel(4, 3), LocalSGD(lr=0.2, local_steps=5, batch_size=16)), data, rounds=20, seed=0,
                eval_every=20)
    assert h.final("test_accuracy") > hf.final("test_accuracy") + 0.2


def test_clustered_fl_warmup_and_partial_participation():
    data = _conflicting_clients()
    alg = ClusteredFL(LinearModel(4, 3), SOLVER, tol_1=1e9, tol_2=0.0, warmup=3, participation=0.5)
    state, h = run(alg, data, rounds=4, seed=0)
    assert all(e["n_clusters"] == 1 for e in h.log[:3])
    with pytest.raises(ValueError, match="tol_1"):
        ClusteredFL(LinearModel(4, 3), SOLVER, tol_1=-1.0)


def test_ditto_global_model_is_fedavgs(small_data):
    model = LinearModel(5, 3)
    fa, _ = run(FedAvg(model, SOLVER), small_data, rounds=4, seed=5)
    dt, _ = run(Ditto(model, SOLVER, lam=0.5), small_data, rounds=4, seed=5)
    assert isinstance(dt, PersonalState)
    assert all(torch.equal(fa.params[k], dt.params[k]) for k in fa.params)
    assert dt.personal["weight"].shape == (6, 3, 5)


def test_ditto_penalty_interpolates_between_global_and_local(small_data):
    model = LinearModel(5, 3)
    strong, _ = run(Ditto(model, SOLVER, lam=50.0, personal_lr=0.01), small_data, rounds=5, seed=0)
    weak, _ = run(Ditto(model, SOLVER, lam=1e-4), small_data, rounds=5, seed=0)

    def gap(state):
        return float((state.personal["weight"] - state.params["weight"]).norm())

    assert gap(strong) < gap(weak)


def test_apfl_with_alpha_zero_predicts_with_the_global_model(small_data):
    model = LinearModel(5, 3)
    alg = APFL(model, SOLVER, alpha=0.0)
    state, h = run(alg, small_data, rounds=3, seed=0)
    glob = alg.evaluate_global(state, small_data)
    assert np.allclose(h.clients["test_accuracy"][-1], glob["test_accuracy"])
    one, _ = run(APFL(model, SOLVER, alpha=1.0), small_data, rounds=3, seed=0)
    assert not torch.allclose(one.personal["weight"], one.params["weight"].unsqueeze(0).expand(6, 3, 5))
    with pytest.raises(ValueError, match="alpha"):
        APFL(model, SOLVER, alpha=1.5)


def test_pfedme_round_formula(small_data):
    model = LinearModel(5, 3)
    solver = LocalSGD(lr=0.1, local_steps=1, batch_size=8)
    alg = PFedMe(model, solver, lam=2.0, inner_steps=2, beta=1.0)
    state = alg.init(small_data, 0)
    new, _ = alg.round(state, small_data, 0)
    w0 = {k: v.unsqueeze(0).repeat(6, *[1] * v.dim()) for k, v in state.params.items()}
    theta, _ = local_sgd(model, w0, small_data.train, alg.inner, key=(0, 0, 0, 0), anchor=w0)
    w1 = {k: w0[k] - 0.1 * 2.0 * (w0[k] - theta[k]) for k in w0}
    p = small_data.train.n.double() / small_data.train.n.sum()
    expected = (p.view(-1, 1, 1).float() * w1["weight"]).sum(0)
    assert torch.allclose(new.params["weight"], expected, atol=1e-6)
    assert torch.allclose(new.personal["weight"], theta["weight"], atol=1e-6)
    with pytest.raises(ValueError, match="lam"):
        PFedMe(model, LocalSGD(lr=0.5), lam=4.0)


def test_fedrep_shares_the_body_and_keeps_heads():
    xs, ys = make_clients(n_clients=4)
    data = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=0)
    model = MLP(5, (6,), 3)
    alg = FedRep(model, SOLVER, head_steps=2)
    state, h = run(alg, data, rounds=3, seed=0)
    assert set(state.params) == {"w0", "b0"} and set(state.personal) == {"w1", "b1"}
    assert state.personal["w1"].shape == (4, 6, 3)
    assert not torch.allclose(state.personal["w1"][0], state.personal["w1"][1])
    assert h.final("train_loss") < h.curve("train_loss")[1][0]
    with pytest.raises(NotImplementedError):
        alg.evaluate_global(state, data)
    with pytest.raises(ValueError, match="head_keys"):
        FedRep(model, SOLVER, head_keys=("nope",)).init(data, 0)


def test_fedrep_with_an_all_head_model_is_local_training(small_data):
    alg = FedRep(LinearModel(5, 3), SOLVER)
    state, h = run(alg, small_data, rounds=2, seed=0)
    assert state.params == {} and state.personal["weight"].shape == (6, 3, 5)


@pytest.mark.parametrize("cls", [FedAvgPlus, ClusteredFL, PFedMe, APFL, Ditto, FedRep])
def test_every_baseline_learns_and_handles_sampling(cls):
    data = _conflicting_clients()
    model = MLP(4, (8,), 3) if cls is FedRep else LinearModel(4, 3)
    alg = cls(model, LocalSGD(lr=0.1, local_steps=3, batch_size=8), participation=0.5)
    _, h = run(alg, data, rounds=6, seed=0)
    assert h.final("train_loss") < h.curve("train_loss")[1][0]
    assert all(len(e["participants"]) == 3 for e in h.log)
    nobody = cls(model, LocalSGD(lr=0.1), participation=lambda t, rng: np.zeros(6, bool))
    s, _ = run(nobody, data, rounds=1, seed=0)
    assert s.round == 1


def test_baselines_reject_bad_solvers():
    with pytest.raises(TypeError, match="solver"):
        Ditto(LinearModel(4, 3), 0.1)
    with pytest.raises(ValueError, match="finetune_epochs"):
        FedAvgPlus(LinearModel(4, 3), SOLVER, finetune_epochs=0)


def _seen_unseen():
    data = _conflicting_clients()
    seen, new = [0, 1, 3, 4], [2, 5]
    return (FederatedDataset(data.train.select(seen), data.test.select(seen), 3),
            FederatedDataset(data.train.select(new), data.test.select(new), 3))


ADAPT_OPTIONS = {"fedavg+": {}, "clustered": {"tol_1": 1e9, "tol_2": 0.0, "max_clusters": 2}, "pfedme": {},
                 "apfl": {}, "ditto": {}, "fedrep": {}, "fedem": {"n_components": 2},
                 "d-fedem": {"n_components": 2, "mixing_matrix": metropolis_weights(nx.cycle_graph(4))}}
"""Every core method with ``adapt`` and the options it is built with here."""


def _adapted(name, seed, **options):
    seen, new = _seen_unseen()
    model = MLP(4, (8,), 3) if name == "fedrep" else LinearModel(4, 3)
    alg = METHODS.build(name, model, LocalSGD(lr=0.1, local_steps=3, batch_size=8), **ADAPT_OPTIONS[name])
    state, _ = run(alg, seen, rounds=3, seed=0)
    return alg, state, new, alg.adapt(state, new, seed=seed, **options)


def _flat_state(personal) -> list[np.ndarray]:
    if isinstance(personal, dict):
        return [v.numpy() for v in personal.values()]
    if isinstance(personal, torch.Tensor):
        return [personal.numpy()]
    if isinstance(personal, np.ndarray):
        return [personal]
    return [np.asarray(personal.clusters), *(v.numpy() for v in personal.params.values())]


def test_adapt_options_cover_every_core_method_with_adapt():
    assert {n for n, m in METHODS.items() if m.chapter == "core" and hasattr(m.cls, "adapt")} == set(ADAPT_OPTIONS)


@pytest.mark.parametrize("name", sorted(ADAPT_OPTIONS))
def test_adapt_protocol_returns_personal_state_and_per_client_metrics(name):
    _, _, new, result = _adapted(name, seed=1)
    assert isinstance(result, tuple) and len(result) == 2
    personal, metrics = result
    assert {"train_loss", "train_accuracy", "test_loss", "test_accuracy"} <= set(metrics)
    for key, values in metrics.items():
        assert isinstance(values, np.ndarray) and values.shape == (new.n_clients,), key
    _, _, _, (again, same) = _adapted(name, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(_flat_state(personal), _flat_state(again)))
    assert all(np.array_equal(metrics[k], same[k], equal_nan=True) for k in metrics)


@pytest.mark.parametrize("name", sorted(ADAPT_OPTIONS))
def test_adapt_rejects_a_bad_seed(name):
    alg, state, new, _ = _adapted(name, seed=0)
    with pytest.raises(ValueError, match="seed"):
        alg.adapt(state, new, seed=-1)


@pytest.mark.parametrize("cls", [PFedMe, APFL, Ditto, FedRep])
def test_new_clients_personalize_from_the_shared_model(cls):
    seen, new = _seen_unseen()
    model = MLP(4, (8,), 3) if cls is FedRep else LinearModel(4, 3)
    alg = cls(model, LocalSGD(lr=0.1, local_steps=3, batch_size=8))
    state, _ = run(alg, seen, rounds=5, seed=0)
    personal, out = alg.adapt(state, new, seed=1)
    assert set(out) == {"train_loss", "train_accuracy", "test_loss", "test_accuracy"}
    assert out["test_accuracy"].shape == (2,)
    assert all(v.shape[0] == 2 for v in personal.values())
    assert np.array_equal(out["test_loss"], evaluate(model, personal, new.train, new.test)["test_loss"])
    other, _ = alg.adapt(state, new, seed=2)
    assert any(not torch.equal(personal[k], other[k]) for k in personal)
    fixed, _ = alg.adapt(state, new, seed=1, steps=4)
    assert any(not torch.equal(personal[k], fixed[k]) for k in personal)
    for bad in ({"epochs": 0.0}, {"steps": 0}, {"stream": (-1,)}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            alg.adapt(state, new, seed=1, **bad)


def test_ditto_adapt_steps_run_one_proximal_local_sgd_on_the_given_key():
    seen, new = _seen_unseen()
    model = LinearModel(4, 3)
    alg = Ditto(model, LocalSGD(lr=0.1, local_steps=3, batch_size=8), lam=0.5)
    state, _ = run(alg, seen, rounds=3, seed=0)
    personal, _ = alg.adapt(state, new, seed=4, steps=7, stream=(0, 9))
    start = broadcast(state.params, 2)
    solver = LocalSGD(lr=0.1, local_steps=7, batch_size=8, prox_mu=0.5)
    expected, _ = local_sgd(model, {k: v.clone() for k, v in start.items()}, new.train, solver, key=(4, 0, 9),
                            anchor=start, backend=alg.backend)
    assert all(torch.allclose(personal[k], expected[k], atol=1e-6) for k in expected)
    default, _ = alg.adapt(state, new, seed=4, steps=7)
    same, _ = alg.adapt(state, new, seed=4, steps=7, stream=(Stream.PERSONAL,))
    assert all(torch.equal(default[k], same[k]) for k in default)


@pytest.mark.parametrize("cls", [APFL, FedRep])
def test_adapt_steps_are_epochs_times_the_local_steps(cls):
    seen, new = _seen_unseen()
    alg = cls(MLP(4, (8,), 3), LocalSGD(lr=0.1, local_steps=3, batch_size=8))
    state, _ = run(alg, seen, rounds=3, seed=0)
    by_steps, _ = alg.adapt(state, new, seed=4, steps=6, stream=(0, 9))
    by_epochs, _ = alg.adapt(state, new, seed=4, epochs=2.0, stream=(0, 9))
    assert all(torch.equal(by_steps[k], by_epochs[k]) for k in by_steps)
    if cls is FedRep:  # the shared body stays frozen
        assert all(torch.equal(by_steps[b][i], state.params[b]) for b in state.params for i in range(2))


def test_ditto_new_clients_stay_near_the_global_model_with_a_strong_penalty():
    seen, new = _seen_unseen()
    alg = Ditto(LinearModel(4, 3), LocalSGD(lr=0.1, local_steps=3, batch_size=8), lam=9.0, personal_lr=0.1)
    state, _ = run(alg, seen, rounds=5, seed=0)
    _, near = alg.adapt(state, new, seed=0)
    glob = alg.evaluate_global(state, new)
    _, free = Ditto(LinearModel(4, 3), LocalSGD(lr=0.1, local_steps=3, batch_size=8), lam=1e-6).adapt(state, new,
                                                                                                     seed=0, epochs=5)
    assert free["train_loss"].mean() < near["train_loss"].mean()
    assert np.abs(near["train_loss"] - glob["train_loss"]).mean() < 0.5 * np.abs(free["train_loss"] - glob["train_loss"]).mean()


def test_clustered_fl_new_clients_join_their_group():
    seen, new = _seen_unseen()
    alg = ClusteredFL(LinearModel(4, 3), LocalSGD(lr=0.2, local_steps=5, batch_size=16), tol_1=1e9, tol_2=0.0,
                      max_clusters=2)
    state, _ = run(alg, seen, rounds=15, seed=0)
    clusters = np.array(state.clusters)  # seen clients 0, 1 (rule A) and 3, 4 (rule B)
    assert clusters[0] == clusters[1] != clusters[2] == clusters[3]
    joined, out = alg.adapt(state, new, seed=0)
    assert isinstance(joined, ClusterState) and joined.clusters == (clusters[0], clusters[2])
    assert np.array_equal(out["test_accuracy"], alg.evaluate(joined, new)["test_accuracy"])
    assert out["test_accuracy"].mean() > 0.8


def test_finetune_proximal_term_is_anchored_at_the_start(small_clients):
    model = LinearModel(5, 3)
    params = model.init(torch.Generator().manual_seed(0))
    tight = finetune(model, params, small_clients, LocalSGD(lr=0.05, batch_size=4, prox_mu=19.0), key=(0,), epochs=3)
    loose = finetune(model, params, small_clients, LocalSGD(lr=0.05, batch_size=4), key=(0,), epochs=3)
    drift = lambda p: float((p["weight"] - params["weight"]).norm())
    assert drift(tight) < 0.5 * drift(loose)
