"""Minibatch SGD, Local SGD and Local SGD-M on Markovian streams, run by the engine (fedlab.markovian.algorithms)."""
import numpy as np
import pytest
import torch

from fedlab._rng import Stream, numpy_rng
from fedlab.engine import ClientData, DivergenceError, History, LocalSGD, local_sgd, run
from fedlab.algorithms import METHODS
from fedlab.markovian.algorithms import (PRESETS, StreamingLocalSGDM, StreamingMinibatchSGD, average, floor,
                                         replica_curves, run_streaming_fl, streaming_algorithm)
from fedlab.markovian.data import MarkovStreams, make_markov_regression, markov_streams, two_state_streams
from fedlab.models import LinearModel

RATES = {"minibatch": dict(lr_global=0.05), "local": dict(lr_local=0.02),
         "local_momentum": dict(lr_local=0.02, lr_global=0.05, momentum_beta=0.3)}


def literal(problem, states, algorithm, *, eta=1e-3, gamma=0.01, beta=0.1, seed=0):
    """Algorithms 1-3 of paper D written client by client and step by step (same noise draws as the simulator)."""
    rng = numpy_rng(seed, Stream.MARKOV_NOISE)
    n_rounds, m, k = states.shape
    v_feat, b = problem.features, problem.targets
    lam, h = problem.reg_lambda, problem.noise_high
    w, v = np.zeros(problem.dim), np.zeros(problem.dim)
    out = [np.sum(problem.gradient(w) ** 2)]

    def grad(point, c, s, e):
        return (point @ v_feat[c, s] - (b[c, s] + e)) * v_feat[c, s] + lam * point / (1 + point ** 2) ** 2

    for t in range(n_rounds):
        noise = rng.random((1, m, k))[0] * h
        if algorithm == "minibatch":
            g = np.mean([grad(w, c, states[t, c, j], noise[c, j]) for c in range(m) for j in range(k)], axis=0)
            w = w - gamma * g
        else:
            finals = []
            for c in range(m):
                wc = w.copy()
                for j in range(k):
                    gj = grad(wc, c, states[t, c, j], noise[c, j])
                    if algorithm == "local":
                        wc = wc - eta * gj
                    else:
                        wc = wc - eta * (beta * gj + (1 - beta) * v)
                finals.append(wc)
            if algorithm == "local":
                w = np.mean(finals, axis=0)
            else:
                v = sum(w - f for f in finals) / (eta * m * k)
                w = w - gamma * v
        out.append(np.sum(problem.gradient(w) ** 2))
    return np.array(out), w


@pytest.fixture(scope="module")
def small():
    prob = make_markov_regression(4, dim=3, rng=0)
    states = two_state_streams(0.2, n_clients=4, n_rounds=6, n_local=5, rng=1)
    return prob, states


@pytest.mark.parametrize("name", list(PRESETS))
def test_engine_runs_equal_the_literal_pseudocode(small, name):
    prob, states = small
    data = markov_streams(prob, states)
    state, history = run(streaming_algorithm(name, **RATES[name]), data, rounds=data.n_rounds, seed=4)
    ref, w_ref = literal(prob, states, name, eta=0.02, gamma=0.05, beta=0.3, seed=4)
    rounds, values = replica_curves(history)
    assert rounds.tolist() == list(range(7)) and values.shape == (1, 7)
    assert np.allclose(values[0], ref, rtol=1e-10) and np.allclose(state.w[0], w_ref, rtol=1e-10)
    assert state.round == 6 and len(history.log) == 6


def test_streams_are_consumed_in_their_order():
    """Without noise, Minibatch SGD only sees the multiset of a round's samples; Local SGD walks them in order."""
    prob = make_markov_regression(3, dim=2, noise_high=0.0, rng=0)
    states = two_state_streams(0.3, n_clients=3, n_rounds=4, n_local=6, rng=2)
    shuffled = states[:, :, ::-1].copy()
    final = {}
    for name in ("minibatch", "local"):
        alg = streaming_algorithm(name, lr_global=0.05, lr_local=0.05)
        final[name] = [run(alg, markov_streams(prob, s), rounds=4)[0].w for s in (states, shuffled)]
    assert np.allclose(*final["minibatch"], rtol=1e-12)
    assert not np.allclose(*final["local"], rtol=1e-6)


def test_local_sgd_is_momentum_with_beta_one_and_gamma_eta_k(small):
    prob, states = small
    data = markov_streams(prob, states)
    a = run(StreamingLocalSGDM(0.02), data, rounds=6, seed=1)[1]
    b = run(StreamingLocalSGDM(0.02, lr_global=0.02 * 5, momentum_beta=1.0), data, rounds=6, seed=1)[1]
    assert np.allclose(replica_curves(a)[1], replica_curves(b)[1], rtol=1e-9)


def test_one_local_step_matches_the_engine():
    """K = 1 and lambda = 0: a local step is one SGD step of LinearModel(mse) on the round's sample."""
    prob = make_markov_regression(5, dim=3, reg_lambda=0.0, rng=2)
    states = two_state_streams(0.3, n_clients=5, n_rounds=1, n_local=1, rng=3)
    ours = run(StreamingLocalSGDM(0.1), markov_streams(prob, states), rounds=1, seed=7)[0]
    noise = numpy_rng(7, Stream.MARKOV_NOISE).random((1, 5, 1))[0, :, 0] * prob.noise_high
    s = states[0, :, 0]
    xs = [prob.features[c, s[c]][None] for c in range(5)]
    ys = [np.array([prob.targets[c, s[c]] + noise[c]]) for c in range(5)]
    data = ClientData.from_arrays(xs, ys)
    model = LinearModel(3, 1, loss="mse", zero_init=True)
    start = {k: v.unsqueeze(0).repeat(5, *([1] * v.dim())) for k, v in model.init(torch.Generator()).items()}
    new, _ = local_sgd(model, start, data, LocalSGD(lr=0.1, local_steps=1, batch_size=1), key=(0, 0, 0))
    assert np.allclose(new["weight"][:, 0].double().numpy().mean(0), ours.w[0], rtol=1e-5, atol=1e-7)


def test_run_streaming_fl_uses_common_random_numbers(small):
    prob, states = small
    both = run_streaming_fl(prob, states, lr_global=0.05, lr_local=0.02, momentum_beta=0.3, seed=2)
    assert list(both) == ["minibatch", "local", "local_momentum"]
    data = markov_streams(prob, states)
    for name, history in both.items():
        alone = run(streaming_algorithm(name, **RATES[name]), data, rounds=6, seed=2)[1]
        assert isinstance(history, History) and history.rounds == alone.rounds
        assert np.allclose(replica_curves(history)[1], replica_curves(alone)[1], rtol=1e-10)
    only = run_streaming_fl(prob, states, algorithms=["local_momentum"], seed=2)
    assert list(only) == ["local_momentum"]
    sparse = run_streaming_fl(prob, states, algorithms=["local"], eval_every=4, seed=2)["local"]
    assert sparse.rounds == [0, 4, 6]


def test_replicas_with_different_problems_and_parameters():
    probs = [make_markov_regression(3, dim=2, rng=s) for s in range(2)]
    states = np.stack([two_state_streams(0.1, n_clients=3, n_rounds=4, n_local=3, rng=s) for s in range(2)])
    batch = run(StreamingMinibatchSGD([0.01, 0.05]), markov_streams(probs, states), rounds=4)[1]
    for r in range(2):
        single = run(StreamingMinibatchSGD(0.05 if r else 0.01), markov_streams(probs[r], states[r]), rounds=4)[1]
        # the noise of replica r is row r of the batched draw: compare the noise-free first gradient norm
        assert replica_curves(batch)[1][r, 0] == pytest.approx(replica_curves(single)[1][0, 0])
    assert replica_curves(batch)[1].shape == (2, 5) and floor(batch, 0.5).shape == (2,)
    assert np.allclose(average(batch), replica_curves(batch)[1][:, :-1].mean(1))


def test_settings_share_the_replicas_streams_and_noise(small):
    prob, states = small
    data = markov_streams(prob, states)
    tiled = data.tile(2)
    assert isinstance(tiled, MarkovStreams) and tiled.n_rows == 2 and tiled.n_replicas == 1 and tiled.copies == 2
    pair = run(StreamingLocalSGDM([0.02, 0.01], [0.05, 0.05], [0.3, 0.3]), tiled, rounds=6, seed=3)[1]
    for i, eta in enumerate((0.02, 0.01)):
        one = run(StreamingLocalSGDM(eta, 0.05, 0.3), data, rounds=6, seed=3)[1]
        assert np.allclose(replica_curves(pair)[1][i], replica_curves(one)[1][0], rtol=1e-10)


def test_floor_and_average():
    h = History()
    for t, g in enumerate([4.0, 3.0, 2.0, 1.0, 1.0]):
        h.record(t, {"grad_norm2": np.array([g, 2 * g])})
    assert floor(h, 0.5).tolist() == [1.0, 2.0] and average(h).tolist() == [2.5, 5.0]
    sparse = History()
    for t, g in [(0, 4.0), (2, 2.0), (4, 1.0)]:
        sparse.record(t, {"grad_norm2": np.array([g])})
    assert floor(sparse, 0.5).tolist() == [1.0] and average(sparse).tolist() == [3.0]
    with pytest.raises(ValueError, match="fraction"):
        floor(h, 0.0)
    with pytest.raises(ValueError, match="grad_norm2"):
        floor(History(), 0.5)


def test_bad_inputs_raise(small):
    prob, states = small
    data = markov_streams(prob, states)
    with pytest.raises(ValueError, match="lr_global"):
        StreamingMinibatchSGD(0.0)
    with pytest.raises(ValueError, match="momentum_beta"):
        StreamingLocalSGDM(0.01, 0.01, momentum_beta=1.5)
    with pytest.raises(ValueError, match="lr_local"):
        run(StreamingLocalSGDM([0.01, 0.02]), data, rounds=1)
    with pytest.raises(ValueError, match="w0"):
        run(StreamingMinibatchSGD(0.01, w0=np.zeros(5)), data, rounds=1)
    with pytest.raises(ValueError, match="clients"):
        markov_streams(prob, states[:, :2])
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        markov_streams(prob, states + 2)
    with pytest.raises(TypeError, match="integer"):
        markov_streams(prob, states.astype(float))
    with pytest.raises(TypeError, match="MarkovRegression"):
        markov_streams("problem", states)
    with pytest.raises(TypeError, match="MarkovStreams"):
        run(StreamingMinibatchSGD(0.01), np.zeros(3), rounds=1)
    with pytest.raises(ValueError, match="holds 6 rounds|hold 6 rounds"):
        run(StreamingMinibatchSGD(0.01), data, rounds=7)
    with pytest.raises(ValueError, match="algorithms"):
        run_streaming_fl(prob, states, algorithms=["scaffold"])
    with pytest.raises(ValueError, match="name"):
        streaming_algorithm("scaffold")
    with pytest.raises(DivergenceError, match="diverged"):
        long = two_state_streams(0.2, n_clients=4, n_rounds=400, n_local=2, rng=0)
        run(StreamingMinibatchSGD(50.0), markov_streams(prob, long), rounds=400)


def test_the_three_methods_are_registered():
    assert list(PRESETS) == ["minibatch", "local", "local_momentum"]
    assert all(METHODS[f"markovian:{name}"] is method for name, method in PRESETS.items())
    assert [m.label for m in PRESETS.values()] == ["Minibatch SGD", "Local SGD", "Local SGD-M"]
    local = streaming_algorithm("local", lr_local=0.02, lr_global=0.5, momentum_beta=0.3)
    assert (local.lr_local, local.lr_global, local.momentum_beta) == (0.02, None, 1.0)     # β = 1, γ = ηK
