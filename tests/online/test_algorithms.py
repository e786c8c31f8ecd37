"""FEM-OMD (fedlab.online.algorithms): building blocks, the GMM simulation, the discriminative variant, online on
the engine."""
import json
import math

import numpy as np
import pytest
import torch

from fedlab._rng import Stream, numpy_rng
from fedlab.online import algorithms as F
from fedlab.gmm import LOG_FLOOR
from fedlab.online.algorithms import (FEMOMD, OMD, PRESETS, STEP_SCHEDULES, GaussianFEMOMD, center_error, logged,
                                      mixture_weight_gradient, omd_step, played_weights, regret_curves, step_size)
from fedlab.engine import ClientData, FederatedDataset, History, LocalSGD, local_sgd, run
from fedlab.online.data import GMMEnvironment, make_gmm_stream, mixture_kl, sample_mixture
from fedlab.online.experiments import LINEAR_RATIO, gmm_regret, late_regret_ratio, run_fem_omd_gmm
from fedlab.models import LinearModel

MU3 = np.array([[4.0, 0.0], [-2.0, 3.4641], [-2.0, -3.4641]])


def _on_simplex(log_pi):
    p = np.exp(log_pi)
    return np.all(np.isfinite(log_pi)) and np.allclose(p.sum(-1), 1.0) and np.all(p >= 0)


# ----------------------------------------------------------------------------------------- step sizes, OMD

def test_every_step_schedule():
    for name in STEP_SCHEDULES:
        eta = step_size(name, 4, 3, 2.0, horizon=100)
        assert eta > 0
    assert step_size("anytime", 4, 3, 2.0) == pytest.approx(2 * math.sqrt(math.log(3) / 4))
    assert step_size("fixed", 4, 3, 2.0, horizon=100) == pytest.approx(2 * math.sqrt(math.log(3) / 100))
    assert step_size("constant", 4, 3, 2.0) == 2.0
    with pytest.raises(ValueError, match="horizon"):
        step_size("fixed", 1, 3, 1.0)
    with pytest.raises(ValueError, match="lr"):
        step_size("anytime", 1, 3, 0.0)
    with pytest.raises(ValueError, match="schedule"):
        step_size("nope", 1, 3, 1.0)


def test_omd_step_is_the_multiplicative_update_and_shift_invariant():
    rng = np.random.default_rng(0)
    pi, g = rng.dirichlet(np.ones(4), size=5), rng.normal(size=(5, 4))
    new = omd_step(np.log(pi), g, 0.3)
    expected = pi * np.exp(-0.3 * g)
    np.testing.assert_allclose(np.exp(new), expected / expected.sum(1, keepdims=True), rtol=1e-12)
    # fact A3: invariant to a constant added to the gradient, stays on the simplex
    np.testing.assert_allclose(omd_step(np.log(pi), g + 7.0, 0.3), new, atol=1e-12)
    assert _on_simplex(new)
    np.testing.assert_allclose(np.exp(omd_step(np.log(pi), g, 0.3, grad_clip=0.1)),
                               np.exp(omd_step(np.log(pi), np.clip(g, -0.1, 0.1), 0.3)))


def test_omd_step_extreme_inputs_stay_finite_on_the_simplex():
    log_pi = np.array([[0.0, -1e4, -700.0], [-1e-300, -5000.0, -2000.0]])
    for grad in (np.array([[-1.0, -1e300, -1e10]] * 2), np.array([[1e308, -1e308, 0.0]] * 2)):
        for lr in (1e-8, 1.0, 1e6):
            new = omd_step(log_pi, grad, lr)
            assert _on_simplex(new) and np.all(new >= LOG_FLOOR - 1e-9)
    # weights pushed to 0 come back when their gradient says so
    out = omd_step(np.array([0.0, LOG_FLOOR]), np.array([0.0, -2e3]), 1.0)
    assert np.exp(out[1]) > 0.99


def test_omd_step_rejects_bad_inputs():
    with pytest.raises(ValueError, match="lr"):
        omd_step(np.zeros(3), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="lr"):
        omd_step(np.zeros(3), np.zeros(3), -1.0)
    with pytest.raises(ValueError, match="grad"):
        omd_step(np.zeros(3), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="log_pi"):
        omd_step(np.array([0.0, np.nan]), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="grad_clip"):
        omd_step(np.zeros(2), np.zeros(2), 1.0, grad_clip=0.0)


# ----------------------------------------------------------------------------------------- EM pieces

def _reference_responsibilities(x, pi, mu):
    dens = np.exp(-0.5 * ((x[:, None, :] - mu[None]) ** 2).sum(-1))
    r = pi * dens
    return r / r.sum(1, keepdims=True)


def _plain_em(x, mu, pi, steps, batch):
    """Textbook sample-splitting EM on one data set (no federation)."""
    for k in range(steps):
        xb = x[k * batch:(k + 1) * batch]
        r = _reference_responsibilities(xb, pi, mu)
        pi = r.mean(0)
        mu = (r[:, :, None] * xb[:, None, :]).sum(0) / r.sum(0)[:, None]
    return pi, mu


# ----------------------------------------------------------------------------------------- gradient, loss

def test_gradient_identity_fact_a1_and_truth_fact_a2():
    rng = np.random.default_rng(3)
    pi, pt = rng.dirichlet(np.ones(3), size=4), rng.dirichlet(np.ones(3), size=4)
    g = mixture_weight_gradient(pi, MU3, pi_tilde=pt, n_mc=17, rng=0)
    assert g.shape == (4, 3) and np.all(g <= 0)
    np.testing.assert_allclose((pi * g).sum(-1), -1.0, atol=1e-12)
    gs = mixture_weight_gradient(pi, MU3, samples=rng.normal(size=(4, 5, 2)))
    np.testing.assert_allclose((pi * gs).sum(-1), -1.0, atol=1e-12)
    # at pi = pi*, mu = mu* the exact gradient is -1 for every component (MC with 2e5 draws)
    pi_star = np.array([0.5, 0.3, 0.2])
    g_true = mixture_weight_gradient(pi_star, MU3 / 3, pi_tilde=pi_star, n_mc=200_000, rng=1)
    np.testing.assert_allclose(g_true, -1.0, atol=2e-2)
    with pytest.raises(ValueError, match="exactly one"):
        mixture_weight_gradient(pi, MU3)
    with pytest.raises(ValueError, match="n_mc"):
        mixture_weight_gradient(pi, MU3, pi_tilde=pt, n_mc=0)


def test_gradient_finite_when_played_weights_vanish():
    pi = np.array([[1.0, 0.0, 0.0]])
    g = mixture_weight_gradient(pi, MU3, pi_tilde=np.array([0.0, 0.0, 1.0]), n_mc=20, rng=0)
    assert np.all(np.isfinite(g)) and np.all(g <= 0) and g[0, 2] < -1e10


def test_mixture_kl():
    pi = np.array([[0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(mixture_kl(pi, MU3, pi, MU3, n_mc=50, rng=0), 0.0, atol=1e-12)
    kl = mixture_kl(pi, MU3, pi[::-1], MU3, n_mc=4000, rng=0)
    assert kl.shape == (2,) and np.all(kl > 0.1)
    with pytest.raises(ValueError, match="pi_q"):
        mixture_kl(pi, MU3, np.ones(3), MU3)
    with pytest.raises(ValueError, match="variance"):
        mixture_kl(pi, MU3, pi, MU3, variance=0.0)


def test_comparator_is_the_time_average_fact_a8():
    # sum_s KL(P*_s || P_pi) (mu = mu*) is smallest at pi = mean_s pi*_s
    rng = np.random.default_rng(4)
    pis = rng.dirichlet(np.full(3, 0.3), size=20)
    pbar = pis.mean(0)

    def total(q):
        return mixture_kl(pis, MU3 / 2, np.tile(q, (20, 1)), MU3 / 2, n_mc=20_000, rng=5).sum()

    best = total(pbar)
    for q in rng.dirichlet(np.ones(3), size=10):
        assert total(q) >= best - 1e-3
    for eps in (0.02, -0.02):
        assert total(pbar + eps * np.array([1.0, -1.0, 0.0])) >= best - 1e-3


def test_center_error_is_permutation_free():
    assert center_error(MU3[[2, 0, 1]], MU3) == pytest.approx(0.0)
    assert center_error(MU3 + [0.1, 0.0], MU3) == pytest.approx(0.1)
    mu8 = np.random.default_rng(0).normal(0, 10, size=(8, 3))
    assert center_error(mu8[::-1] + 0.01, mu8) == pytest.approx(0.01 * math.sqrt(3))
    with pytest.raises(ValueError, match="means_star"):
        center_error(MU3, MU3[:2])


# ----------------------------------------------------------------------------------------- GMM simulation

def _run(stream, **options):
    return run_fem_omd_gmm(stream, **options)


def test_fem_omd_gmm_history_and_determinism():
    stream = make_gmm_stream(n_clients=4, horizon=15, seed=0)
    sa, a = _run(stream, n_samples=6, seed=3)
    sb, b = _run(stream, n_samples=6, seed=3)
    np.testing.assert_array_equal(regret_curves(a), regret_curves(b))
    np.testing.assert_array_equal(sa.means, sb.means)
    assert isinstance(a, History) and a.rounds == list(range(15)) and sa.round == 15
    regret = regret_curves(a)
    assert regret.shape == (15, 4) and played_weights(a).shape == (15, 4, 3)
    np.testing.assert_allclose(regret[-1], (np.stack(a.clients["kl"]) - np.stack(a.clients["comparator_kl"])).sum(0))
    assert logged(a, "grad_err").shape == (15, 4) and logged(a, "eta").shape == (15,)
    assert np.all(np.stack(a.clients["kl"]) > -0.05) and np.all(np.isfinite(logged(a, "grad_err")))
    np.testing.assert_allclose(played_weights(a)[0], 1 / 3)                   # pi_1 is uniform
    np.testing.assert_allclose(a.curve("center_error", "max")[1], a.curve("center_error", "min")[1])
    json.dumps(a.to_dict())
    _, c = _run(stream, n_samples=6, seed=3, gradient="samples", pi_init="previous", schedule="fixed", split=False,
                grad_clip=None, n_mc=3)
    assert np.all(np.isfinite(regret_curves(c)))
    np.testing.assert_allclose(logged(c, "eta"), math.sqrt(math.log(3) / 15))   # the fixed step uses T


def test_history_readers_reject_other_histories():
    h = History()
    h.record(0, {"train_loss": np.zeros(2)})
    for reader in (regret_curves, played_weights):
        with pytest.raises(ValueError, match="GaussianFEMOMD"):
            reader(h)
    with pytest.raises(ValueError, match="grad_err"):
        logged(h, "grad_err")


def test_weights_stay_on_simplex_with_vanishing_components():
    # pi* puts exactly zero weight on components, no clipping, huge constant steps
    rng = np.random.default_rng(0)
    w = np.zeros((30, 3, 3))
    w[np.arange(30)[:, None], np.arange(3)[None], rng.integers(0, 3, size=(30, 3))] = 1.0
    for lr in (1.0, 1e4):
        env = GMMEnvironment(MU3 * 3, w, n_samples=2, seed=1)
        state, hist = run(GaussianFEMOMD(lr=lr, schedule="constant", grad_clip=None), env, rounds=30, seed=1,
                          order="evaluate_first")
        pi = played_weights(hist)
        assert np.all(np.isfinite(pi)) and np.allclose(pi.sum(-1), 1.0) and np.all(pi >= 0)
        assert np.all(np.isfinite(state.means)) and np.all(np.isfinite(np.stack(hist.clients["kl"])))
    assert pi.min() == 0.0                        # some weights really underflowed to 0 ...
    assert np.all(np.isfinite(regret_curves(hist)))  # ... without any NaN


def test_one_client_reduces_to_centralized_online_em():
    stream = make_gmm_stream(n_clients=1, horizon=12, spread=3.0, seed=2)
    env = GMMEnvironment(stream.means, stream.weights, n_samples=9, seed=4)
    algorithm = GaussianFEMOMD(n_em_steps=3)
    state = algorithm.init(env(0), 4)
    mu = state.means
    for t in range(1, 13):
        state, _ = algorithm.round(state, env(t - 1), 4)
        x = sample_mixture(stream.weights[t - 1], stream.means, 9, rng=numpy_rng(4, t, Stream.ONLINE_DATA))[0]
        _, mu_em = _plain_em(x, mu, np.full(3, 1 / 3), 3, 3)
        mu = t / (t + 1) * mu + mu_em / (t + 1)
        np.testing.assert_allclose(state.means, mu, atol=1e-10)


def test_fewer_samples_than_em_steps_use_every_sample_in_each_step():
    # n < K: sample splitting is off, every inner step uses all n samples (dynamic spec A.5 item 4)
    stream = make_gmm_stream(n_clients=3, horizon=4, seed=1)
    split, _ = _run(stream, n_samples=2, n_em_steps=3, split=True, seed=0)
    whole, _ = _run(stream, n_samples=2, n_em_steps=3, split=False, seed=0)
    np.testing.assert_array_equal(split.means, whole.means)
    other, _ = _run(stream, n_samples=6, n_em_steps=3, split=True, seed=0)
    assert not np.allclose(other.means, _run(stream, n_samples=6, n_em_steps=3, split=False, seed=0)[0].means)


def test_sublinear_regret_on_well_separated_mixture():
    stream = make_gmm_stream(n_clients=10, horizon=200, spread=6.0, seed=0)
    state, hist = _run(stream, n_samples=30, seed=0)
    assert late_regret_ratio(regret_curves(hist).mean(1)) < LINEAR_RATIO   # a linear regret has ratio 1
    assert center_error(state.means, stream.means) < 0.2


def test_more_samples_and_more_clients_help_facts_a11_a12():
    # spec defaults: s = 4, K = 3, T = 200, clip 10, eta0 = 1 decaying; 3-seed means of R_T / T
    def mean_rate(**kw):
        return np.mean([gmm_regret(seed=s, **kw)["regret_per_step"] for s in range(3)])

    n1 = mean_rate(n_samples=1, n_clients=20)
    assert mean_rate(n_samples=30, n_clients=20) < n1            # ~0.13 vs ~0.19
    assert n1 < mean_rate(n_samples=1, n_clients=5)              # ~0.19 vs ~0.39


def test_fem_omd_gmm_rejects_bad_inputs():
    w = np.full((5, 2, 3), 1 / 3)
    with pytest.raises(ValueError, match="weights_star.*simplex"):
        GMMEnvironment(MU3, np.full((5, 2, 3), 0.5))
    with pytest.raises(ValueError, match="weights_star.*simplex"):
        GMMEnvironment(MU3, np.where(np.arange(3) == 0, 1.5, -0.25) * np.ones((5, 2, 3)))
    with pytest.raises(ValueError, match="weights_star"):
        GMMEnvironment(MU3, np.full((5, 3), 1 / 3))
    with pytest.raises(ValueError, match="variance"):
        GMMEnvironment(MU3, w, variance=0.0)
    with pytest.raises(ValueError, match="variance"):
        GMMEnvironment(MU3, w, variance=-1.0)
    with pytest.raises(ValueError, match="n_samples"):
        GMMEnvironment(MU3, w, n_samples=0)
    with pytest.raises(ValueError, match="means_star"):
        GMMEnvironment(np.zeros(3), w)
    with pytest.raises(ValueError, match="lr"):
        GaussianFEMOMD(lr=0.0)
    with pytest.raises(ValueError, match="lr"):
        GaussianFEMOMD(lr=-0.5)
    with pytest.raises(ValueError, match="gradient"):
        GaussianFEMOMD(gradient="exact")
    with pytest.raises(ValueError, match="pi_init"):
        GaussianFEMOMD(pi_init="oracle")
    with pytest.raises(ValueError, match="n_em_steps"):
        GaussianFEMOMD(n_em_steps=0)
    with pytest.raises(ValueError, match="means_init"):
        GaussianFEMOMD(means_init=np.zeros((2, 2))).init(GMMEnvironment(MU3, w)(0), 0)
    with pytest.raises(TypeError, match="GMMEnvironment"):
        GaussianFEMOMD().init(_clients(), 0)


# ----------------------------------------------------------------------------------------- discriminative FEM-OMD

def _clients(seed=0, n_clients=3, n=12):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(n, 5)).astype(np.float32) for _ in range(n_clients)]
    ys = [rng.integers(0, 3, size=n) for _ in range(n_clients)]
    return FederatedDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(xs, ys), 3)


def test_femomd_on_the_engine_runner(small_data):
    algo = FEMOMD(LinearModel(5, 3), LocalSGD(lr=0.5, batch_size=8), n_components=2, n_em_steps=2)
    state, hist = run(algo, small_data, rounds=4, seed=0)
    assert state.round == 4 and state.params["weight"].shape == (2, 3, 5)
    assert np.allclose(state.weights.sum(1), 1.0) and np.all(np.isfinite(state.log_pi))
    assert set(hist.clients) == {"train_loss", "train_accuracy", "test_loss", "test_accuracy"}
    assert hist.final("train_accuracy") > 0.4
    json.dumps(hist.log)
    proba = algo.predict_proba(state, small_data.train.x)
    assert torch.allclose(proba.sum(-1), torch.ones(()).double())


def test_femomd_with_one_client_is_local_em():
    data = _clients(n_clients=1)
    solver = LocalSGD(lr=0.3, batch_size=12)
    algo = FEMOMD(LinearModel(5, 3), solver, n_components=2, average="last", backend="loop")
    state = algo.init(data, 0)
    new, _ = algo.round(state, data, seed=7)
    # reference: E-step with uniform weights, one local_sgd call on the responsibility-weighted loss
    x, y = data.train.x, data.train.y
    logp = torch.stack([torch.log_softmax(LinearModel(5, 3).forward({k: v[j] for k, v in state.params.items()},
                                                                    x[0]).double(), -1)[torch.arange(12), y[0]]
                        for j in range(2)])
    resp = torch.softmax(logp, dim=0)
    ref, _ = local_sgd(LinearModel(5, 3), state.params, data.train, solver, key=(7, 0, Stream.ONLINE_EM, 0),
                       rows=[0, 0], sample_weight=resp.float(), backend="loop")
    for k in ref:
        torch.testing.assert_close(new.params[k], ref[k], atol=1e-5, rtol=1e-5)


def test_femomd_weights_survive_extreme_steps():
    data = _clients()
    algo = FEMOMD(LinearModel(5, 3), LocalSGD(lr=0.5, batch_size=6), n_components=3, lr=1e6,
                  schedule="constant", grad_clip=None, gradient="samples", pi_init="previous")
    state = algo.init(data, 0)
    for _ in range(5):
        state, info = algo.round(state, data, 0)
        assert np.all(np.isfinite(state.log_pi)) and np.allclose(state.weights.sum(1), 1.0)
    assert np.isfinite(info["max_abs_grad"])


def test_femomd_rejects_bad_arguments():
    solver = LocalSGD(lr=0.1)
    with pytest.raises(ValueError, match="classifier"):
        FEMOMD(LinearModel(5, 1, loss="mse"), solver, n_components=2)
    with pytest.raises(TypeError, match="solver"):
        FEMOMD(LinearModel(5, 3), "sgd", n_components=2)
    with pytest.raises(TypeError, match="model"):
        FEMOMD("linear", solver, n_components=2)
    with pytest.raises(ValueError, match="lr"):
        FEMOMD(LinearModel(5, 3), solver, n_components=2, lr=0.0)
    with pytest.raises(ValueError, match="horizon"):
        FEMOMD(LinearModel(5, 3), solver, n_components=2, schedule="fixed")
    with pytest.raises(ValueError, match="average"):
        FEMOMD(LinearModel(5, 3), solver, n_components=2, average="ema")
    algo = FEMOMD(LinearModel(5, 3), solver, n_components=2)
    state = algo.init(_clients(n_clients=3), 0)
    with pytest.raises(ValueError, match="clients"):
        algo.round(state, _clients(n_clients=2), 0)


def test_femomd_online_on_the_engine_scores_before_learning():
    streams = {t: _clients(seed=t) for t in range(4)}
    algo = FEMOMD(LinearModel(5, 3), LocalSGD(lr=0.5, batch_size=6), n_components=2)
    state, hist = run(algo, streams.__getitem__, rounds=4, seed=1, order="evaluate_first")
    assert hist.rounds == [0, 1, 2, 3] and state.round == 4 and len(hist.log) == 4
    np.testing.assert_array_equal(hist.n_train, streams[0].train.n.numpy())
    # step t is scored with the model played at t, before it learns from step t's samples
    played = algo.init(streams[0], 1)
    for t in range(4):
        metrics = algo.evaluate(played, streams[t])
        for name, values in metrics.items():
            np.testing.assert_array_equal(hist.clients[name][t], values)
        played, info = algo.round(played, streams[t], 1)
        assert hist.log[t] == {"round": t + 1, **info}
    for k in state.params:
        torch.testing.assert_close(state.params[k], played.params[k], rtol=0, atol=0)


def test_fedomd_is_online_gradient_descent_with_decaying_step():
    from fedlab.online.algorithms import FedOMD
    from fedlab.online.experiments import DigitsMixtureStream

    stream = DigitsMixtureStream(n_clients=3, n_components=2, n_samples=4, seed=0)
    algo = FedOMD(LinearModel(64, 10), LocalSGD(lr=0.4, batch_size=4), backend="batched")
    state, history = run(algo, stream, rounds=4, seed=0, order="evaluate_first", progress=False)
    assert state.round == 4
    np.testing.assert_allclose([e["lr"] for e in history.log], 0.4 / np.sqrt([1, 2, 3, 4]))
    assert len(history.clients["test_accuracy"]) == 4 and history.clients["test_accuracy"][0].shape == (3,)
    const = FedOMD(LinearModel(64, 10), LocalSGD(lr=0.4, batch_size=4), schedule="constant", backend="batched")
    _, h2 = run(const, stream, rounds=2, seed=0, order="evaluate_first", progress=False)
    assert [e["lr"] for e in h2.log] == [0.4, 0.4]
    # one round equals FedAvg's round with the step of that round (t = 1: the solver's own lr)
    from fedlab.algorithms import FedAvg

    data = stream(0)
    s_omd, _ = algo.round(algo.init(data, 0), data, 0)
    fedavg = FedAvg(LinearModel(64, 10), LocalSGD(lr=0.4, batch_size=4), weights="uniform", backend="batched")
    s_avg, _ = fedavg.round(fedavg.init(data, 0), data, 0)
    for k in s_omd.params:
        torch.testing.assert_close(s_omd.params[k], s_avg.params[k])
    with pytest.raises(ValueError, match="schedule"):
        FedOMD(LinearModel(64, 10), LocalSGD(lr=0.4), schedule="fixed")


def test_gaussian_fem_omd_logs_the_exact_gradient_norm():
    stream = make_gmm_stream(n_components=3, n_clients=4, horizon=6, seed=0)
    _, history = run_fem_omd_gmm(stream, n_samples=5, n_mc_loss=20, seed=0)
    true_norm, err, est = (F.logged(history, k) for k in ("true_grad_norm", "grad_err", "grad_norm"))
    assert true_norm.shape == (6, 4) and np.all(true_norm >= 1.0 - 0.2)  # sum_j pi_j grad_j = -1: some |grad_j| >= 1
    assert np.all(est <= 10.0 + 1e-12)
    assert np.all(err <= true_norm + est + 1e-9)


# ----------------------------------------------------------------------------------------- OMD, the separated limit

def test_omd_on_the_engine_is_the_exact_gradient_multiplicative_update():
    rng = np.random.default_rng(0)
    pi_star = rng.dirichlet(np.full(3, 0.5), size=(20, 2))
    state, history = run(OMD(lr=0.3, schedule="constant"), lambda t: pi_star[t], rounds=20, order="evaluate_first",
                         progress=False)
    log_pi, losses = np.full((2, 3), -math.log(3)), []
    for t in range(20):
        pi = np.exp(log_pi)
        losses.append(np.sum(pi_star[t] * (np.log(pi_star[t]) - np.log(pi)), -1))
        log_pi = omd_step(log_pi, -pi_star[t] / pi, 0.3)
    np.testing.assert_array_equal(np.stack(history.clients["kl"]), np.array(losses))
    np.testing.assert_array_equal(state.log_pi, log_pi)
    assert state.round == 20 and np.allclose(state.weights.sum(-1), 1.0)
    assert logged(history, "max_grad").shape == (20,) and np.all(logged(history, "eta") == 0.3)
    _, anytime = run(OMD(lr=1.0, schedule="anytime"), lambda t: pi_star[t], rounds=4, order="evaluate_first")
    np.testing.assert_allclose(logged(anytime, "eta"), np.sqrt(math.log(3) / np.arange(1, 5)))


def test_omd_rejects_bad_inputs():
    with pytest.raises(ValueError, match="lr"):
        OMD(lr=0.0)
    with pytest.raises(ValueError, match="horizon"):
        OMD(schedule="fixed")
    with pytest.raises(ValueError, match="data"):
        OMD().init(np.array([[0.5, 0.6]]), 0)
    state = OMD().init(np.full((2, 3), 1 / 3), 0)
    with pytest.raises(ValueError, match="shape"):
        OMD().round(state, np.full((1, 3), 1 / 3), 0)


def test_every_algorithm_of_the_chapter_is_registered():
    from fedlab.algorithms import METHODS
    from fedlab.online.algorithms import FedOMD

    assert {m.cls for m in PRESETS.values()} == {GaussianFEMOMD, OMD, FEMOMD, FedOMD}
    assert all(METHODS[f"online:{name}"] is m for name, m in PRESETS.items())
    model, solver = LinearModel(4, 2), LocalSGD(lr=0.1)
    assert isinstance(PRESETS["fem_omd"](model, solver, n_components=2), FEMOMD)
    assert isinstance(PRESETS["omd"].cls(lr=0.5), OMD)
