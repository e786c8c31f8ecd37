"""Minibatch SGD, Local SGD and Local SGD-M on Markovian streams (fedlab.markovian.algorithms)."""
import numpy as np
import pytest
import torch

from fedlab._rng import Stream, numpy_rng
from fedlab.markovian.algorithms import (STREAMING_ALGORITHMS, StreamingRun, run_streaming_fl,
                                         streaming_local_sgd, streaming_local_sgdm, streaming_minibatch_sgd)
from fedlab.markovian.data import make_markov_regression, two_state_streams
from fedlab.engine import ClientData, DivergenceError, LocalSGD, local_sgd
from fedlab.models import LinearModel


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


@pytest.mark.parametrize("algorithm", list(STREAMING_ALGORITHMS))
def test_vectorised_algorithms_equal_the_literal_pseudocode(small, algorithm):
    prob, states = small
    kwargs = {"minibatch": dict(lr_global=0.05), "local": dict(lr_local=0.02),
              "local_momentum": dict(lr_local=0.02, lr_global=0.05, momentum_beta=0.3)}[algorithm]
    res = STREAMING_ALGORITHMS[algorithm](prob, states, seed=4, **kwargs)
    ref, w_ref = literal(prob, states, algorithm, eta=0.02, gamma=0.05, beta=0.3, seed=4)
    assert isinstance(res, StreamingRun) and res.algorithm == algorithm
    assert np.allclose(res.grad_norm2[0], ref, rtol=1e-10) and np.allclose(res.w[0], w_ref, rtol=1e-10)


def test_local_sgd_is_momentum_with_beta_one_and_gamma_eta_k(small):
    prob, states = small
    a = streaming_local_sgd(prob, states, lr_local=0.02, seed=1)
    b = streaming_local_sgdm(prob, states, lr_local=0.02, lr_global=0.02 * 5, momentum_beta=1.0, seed=1)
    assert np.allclose(a.grad_norm2, b.grad_norm2, rtol=1e-9)


def test_one_local_step_matches_the_engine(small):
    """K = 1 and lambda = 0: a local step is one SGD step of LinearModel(mse) on the round's sample."""
    prob = make_markov_regression(5, dim=3, reg_lambda=0.0, rng=2)
    states = two_state_streams(0.3, n_clients=5, n_rounds=1, n_local=1, rng=3)
    ours = streaming_local_sgd(prob, states, lr_local=0.1, seed=7)
    noise = numpy_rng(7, Stream.MARKOV_NOISE).random((1, 5, 1))[0, :, 0] * prob.noise_high
    s = states[0, :, 0]
    xs = [prob.features[c, s[c]][None] for c in range(5)]
    ys = [np.array([prob.targets[c, s[c]] + noise[c]]) for c in range(5)]
    data = ClientData.from_arrays(xs, ys)
    model = LinearModel(3, 1, loss="mse", zero_init=True)
    start = {k: v.unsqueeze(0).repeat(5, *([1] * v.dim())) for k, v in model.init(torch.Generator()).items()}
    new, _ = local_sgd(model, start, data, LocalSGD(lr=0.1, local_steps=1, batch_size=1), key=(0, 0, 0))
    assert np.allclose(new["weight"][:, 0].double().numpy().mean(0), ours.w[0], rtol=1e-5, atol=1e-7)


def test_run_streaming_fl_batches_with_common_random_numbers(small):
    prob, states = small
    both = run_streaming_fl(prob, states, lr_global=0.05, lr_local=0.02, momentum_beta=0.3, seed=2)
    assert list(both) == ["minibatch", "local", "local_momentum"]
    alone = {"minibatch": streaming_minibatch_sgd(prob, states, lr_global=0.05, seed=2),
             "local": streaming_local_sgd(prob, states, lr_local=0.02, seed=2),
             "local_momentum": streaming_local_sgdm(prob, states, lr_local=0.02, lr_global=0.05, momentum_beta=0.3,
                                                    seed=2)}
    for name, r in alone.items():
        assert np.allclose(both[name].grad_norm2, r.grad_norm2, rtol=1e-10)
    only = run_streaming_fl(prob, states, algorithms=["local_momentum"], seed=2)
    assert list(only) == ["local_momentum"]


def test_replicas_with_different_problems_and_parameters():
    probs = [make_markov_regression(3, dim=2, rng=s) for s in range(2)]
    states = np.stack([two_state_streams(0.1, n_clients=3, n_rounds=4, n_local=3, rng=s) for s in range(2)])
    batch = streaming_minibatch_sgd(probs, states, lr_global=[0.01, 0.05], seed=0)
    for r in range(2):
        single = streaming_minibatch_sgd(probs[r], states[r], lr_global=[0.01, 0.05][r], seed=0)
        # the noise of replica r is row r of the batched draw: compare the noise-free first step's gradient scale
        assert batch.grad_norm2[r, 0] == pytest.approx(single.grad_norm2[0, 0])
    assert batch.grad_norm2.shape == (2, 5) and batch.floor(0.5).shape == (2,) and batch.average().shape == (2,)
    assert np.allclose(batch.average(), batch.grad_norm2[:, :-1].mean(1))


def test_floor_and_average():
    run = StreamingRun(np.array([[4.0, 3.0, 2.0, 1.0, 1.0]]), np.zeros((1, 2)), "local")
    assert run.floor(0.5) == pytest.approx(1.0) and run.average() == pytest.approx(2.5)
    with pytest.raises(ValueError, match="fraction"):
        run.floor(0.0)


def test_bad_inputs_raise(small):
    prob, states = small
    with pytest.raises(ValueError, match="lr_global"):
        streaming_minibatch_sgd(prob, states, lr_global=0.0)
    with pytest.raises(ValueError, match="momentum_beta"):
        streaming_local_sgdm(prob, states, lr_local=0.01, lr_global=0.01, momentum_beta=1.5)
    with pytest.raises(ValueError, match="clients"):
        streaming_local_sgd(prob, states[:, :2], lr_local=0.01)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        streaming_local_sgd(prob, states + 2, lr_local=0.01)
    with pytest.raises(TypeError, match="integer"):
        streaming_local_sgd(prob, states.astype(float), lr_local=0.01)
    with pytest.raises(ValueError, match="algorithms"):
        run_streaming_fl(prob, states, algorithms=["scaffold"])
    with pytest.raises(TypeError, match="MarkovRegression"):
        streaming_local_sgd("problem", states, lr_local=0.01)
    with pytest.raises(DivergenceError, match="diverged"):
        streaming_minibatch_sgd(prob, two_state_streams(0.2, n_clients=4, n_rounds=400, n_local=2, rng=0),
                                lr_global=50.0)
