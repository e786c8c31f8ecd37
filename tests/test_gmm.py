"""The federated Gaussian-mixture EM (fedlab.gmm): E-step, local M-step, synchronisation, log-likelihood, the engine run."""
import itertools
import math

import numpy as np
import pytest

from fedlab.data import make_gaussian_mixture
from fedlab.engine import run
from fedlab.gmm import (LOG_FLOOR, VARIANCE_FLOOR, FederatedGMMEM, GMMState, LocalStatistics, check_client_weights,
                        check_samples, em_step, federated_gmm_em, gaussian_log_kernel, local_m_step, log_likelihood,
                        log_sum_exp, log_weights, responsibilities, seed_means, server_step)

MU3 = np.array([[4.0, 0.0], [-2.0, 3.4641], [-2.0, -3.4641]])


def _reference_responsibilities(x, pi, mu, var=1.0):
    var = np.broadcast_to(var, (len(mu),))
    dens = np.exp(-0.5 * ((x[:, None, :] - mu[None]) ** 2).sum(-1) / var) / var ** (x.shape[1] / 2)
    r = pi * dens
    return r / r.sum(1, keepdims=True)


def _gmm_clients(means=(-4.0, 0.0, 4.0), n_clients=10, n=500, seed=0):
    """1-D Gaussian mixture with unit variance, per-client weights ~ Dirichlet(1): (C, n, 1) and (C, m)."""
    rng = np.random.default_rng(seed)
    pis = rng.dirichlet(np.ones(len(means)), size=n_clients)
    xs = [(np.asarray(means)[rng.choice(len(means), size=n, p=pi)] + rng.standard_normal(n))[:, None] for pi in pis]
    return np.stack(xs), pis


# ----------------------------------------------------------------------------------------- kernels and checks

def test_kernels():
    a = np.array([[0.0, -np.inf], [1.0, -np.inf], [-2.0, -np.inf]])
    np.testing.assert_allclose(log_sum_exp(a, 0), [np.log(np.exp(0) + np.e + np.exp(-2)), -np.inf])
    assert log_sum_exp(a, 0, keepdims=True).shape == (1, 2)
    np.testing.assert_array_equal(log_weights(np.array([1.0, 0.0])), [0.0, LOG_FLOOR])
    rng = np.random.default_rng(0)
    x, var = rng.normal(size=(4, 5, 2)), np.array([0.5, 1.0, 2.0])
    sq = ((x[None] - MU3[:, None, None]) ** 2).sum(-1)
    np.testing.assert_allclose(gaussian_log_kernel(x, MU3, var),
                               -0.5 * sq / var[:, None, None] - np.log(var)[:, None, None], atol=1e-10)
    # one shared variance drops the common -d/2 log(sigma^2)
    np.testing.assert_allclose(gaussian_log_kernel(x, MU3, 2.0), -0.25 * sq, atol=1e-10)


def test_check_samples_and_client_weights():
    x = np.zeros((3, 4, 2))
    assert check_samples(x).shape == (3, 4, 2) and check_samples(x[0]).shape == (1, 4, 2)
    assert check_samples(list(x)).shape == (3, 4, 2)
    with pytest.raises(ValueError, match="same number of samples"):
        check_samples([np.zeros((3, 1)), np.zeros((0, 1))])
    with pytest.raises(ValueError, match="at least one client"):
        check_samples([])
    with pytest.raises(ValueError, match="d = 3"):
        check_samples(x, dim=3)
    with pytest.raises(ValueError, match="shape"):
        check_samples(np.zeros((2, 0, 2)))
    with pytest.raises(ValueError, match="finite"):
        check_samples(np.full((2, 2), np.nan))
    assert check_client_weights("pi", [0.5, 0.5], 3, 2).shape == (3, 2)
    with pytest.raises(ValueError, match="pi must have shape"):
        check_client_weights("pi", np.full((2, 2), 0.5), 3, 2)
    with pytest.raises(ValueError, match="simplex"):
        check_client_weights("pi", [0.5, 0.6], 3, 2)


# ----------------------------------------------------------------------------------------- E-step, M-step, sync

def test_responsibilities():
    rng = np.random.default_rng(0)
    x, pi = rng.normal(size=(2, 7, 2)), rng.dirichlet(np.ones(3), size=2)
    r = responsibilities(x, pi, MU3 / 4)
    assert r.shape == (2, 7, 3)
    for c in range(2):
        np.testing.assert_allclose(r[c], _reference_responsibilities(x[c], pi[c], MU3 / 4), rtol=1e-10)
    var = np.array([0.5, 1.0, 3.0])
    np.testing.assert_allclose(responsibilities(x[0], pi[0], MU3 / 4, var)[0],
                               _reference_responsibilities(x[0], pi[0], MU3 / 4, var), rtol=1e-10)
    r0 = responsibilities(x[0], np.array([0.0, 0.5, 0.5]), MU3)
    assert r0.shape == (1, 7, 3) and np.all(r0[..., 0] == 0) and np.allclose(r0.sum(-1), 1)
    with pytest.raises(ValueError, match="variances"):
        responsibilities(x, pi, MU3, 0.0)
    with pytest.raises(ValueError, match="variances"):
        responsibilities(x, pi, MU3, np.ones(2))
    with pytest.raises(ValueError, match="simplex"):
        responsibilities(x, np.array([0.5, 0.5, 0.5]), MU3)
    with pytest.raises(ValueError, match="x must have shape"):
        responsibilities(np.zeros((2, 4, 3)), pi, MU3)


def test_sync_equals_pooled_m_step_fact_a4():
    rng = np.random.default_rng(1)
    x, pi = rng.normal(0, 3, size=(5, 12, 2)), rng.dirichlet(np.ones(3), size=5)
    stats = local_m_step(x, pi, MU3)
    r = responsibilities(x, pi, MU3)
    np.testing.assert_allclose(stats.weights, r.mean(1))
    means, var = server_step(stats, MU3, learn_variance=True)
    flat, pooled_x = r.reshape(-1, 3), x.reshape(-1, 1, 2)
    pooled = (flat[:, :, None] * pooled_x).sum(0) / flat.sum(0)[:, None]
    np.testing.assert_allclose(means, pooled, atol=1e-12)
    spread = (flat * ((pooled_x - pooled[None]) ** 2).sum(-1)).sum(0) / (2 * flat.sum(0))
    np.testing.assert_allclose(var, spread, rtol=1e-10)
    np.testing.assert_array_equal(server_step(stats, MU3, 2.0)[1], np.full(3, 2.0))   # variances kept
    # a component nobody weighs keeps its mean and variance
    stats0 = local_m_step(x, np.tile([0.5, 0.5, 0.0], (5, 1)), MU3)
    assert np.all(stats0.weights[:, 2] == 0) and np.allclose(stats0.means[:, 2], MU3[2])
    means0, var0 = server_step(stats0, MU3, np.array([1.0, 1.0, 7.0]), learn_variance=True)
    np.testing.assert_allclose(means0[2], MU3[2])
    assert var0[2] == 7.0
    with pytest.raises(ValueError, match="stats.weights"):
        server_step(stats._replace(weights=-stats.weights), MU3)
    with pytest.raises(ValueError, match="sq_norms"):
        server_step(stats._replace(sq_norms=None), MU3, learn_variance=True)
    with pytest.raises(TypeError, match="LocalStatistics"):
        server_step((stats.weights, stats.means), MU3)


def test_em_step_is_local_then_server_step_and_textbook_em_for_one_client():
    rng = np.random.default_rng(2)
    x, pi = rng.normal(0, 3, size=(4, 9, 2)), rng.dirichlet(np.ones(3), size=4)
    var = np.array([1.0, 2.0, 0.5])
    w, means, new_var = em_step(x, np.log(pi), MU3, var, learn_variance=True)
    stats = local_m_step(x, pi, MU3, var)
    ref_means, ref_var = server_step(stats, MU3, var, learn_variance=True)
    np.testing.assert_allclose(w, stats.weights, atol=1e-14)
    np.testing.assert_allclose(means, ref_means, atol=1e-12)
    np.testing.assert_allclose(new_var, ref_var, atol=1e-12)
    assert isinstance(stats, LocalStatistics)
    # one client: the textbook EM update
    r = _reference_responsibilities(x[0], pi[0], MU3)
    w1, m1, v1 = em_step(x[:1], np.log(pi[:1]), MU3, 1.0)
    np.testing.assert_allclose(w1[0], r.mean(0), atol=1e-12)
    np.testing.assert_allclose(m1, (r[:, :, None] * x[0][:, None]).sum(0) / r.sum(0)[:, None], atol=1e-12)
    assert v1 == 1.0
    # variances are floored
    _, _, tiny = em_step(np.zeros((1, 4, 2)), np.log(np.full((1, 3), 1 / 3)), MU3, np.ones(3), learn_variance=True)
    assert np.all(tiny >= VARIANCE_FLOOR)


def test_log_likelihood_by_hand():
    x = np.array([[0.0], [1.0]])
    ll = log_likelihood(x, [1.0], np.array([[0.0]]))
    np.testing.assert_allclose(ll, [np.mean(-0.5 * x[:, 0] ** 2 - 0.5 * np.log(2 * np.pi))])
    pi, var = np.array([0.3, 0.7]), np.array([0.5, 2.0])
    mu = np.array([[-1.0], [2.0]])
    dens = sum(p * np.exp(-0.5 * (x[:, 0] - m) ** 2 / v) / np.sqrt(2 * np.pi * v) for p, m, v in zip(pi, mu[:, 0], var))
    np.testing.assert_allclose(log_likelihood(x, pi, mu, var), [np.mean(np.log(dens))])
    with pytest.raises(ValueError, match="means"):
        log_likelihood(x, pi, np.zeros(2))


def test_seed_means_picks_spread_samples():
    x = np.concatenate([np.full((50, 2), -10.0), np.full((50, 2), 10.0), np.zeros((50, 2))])
    means = seed_means(x, 3, rng=0)
    assert means.shape == (3, 2) and sorted(means[:, 0]) == [-10.0, 0.0, 10.0]
    np.testing.assert_array_equal(seed_means(x, 3, rng=0), means)
    with pytest.raises(ValueError, match="n_components"):
        seed_means(x, 0)
    with pytest.raises(ValueError, match="at least one sample"):
        seed_means(np.zeros((0, 2)), 1)


# ----------------------------------------------------------------------------------------- on the engine

def test_federated_gmm_em_recovers_the_mixture_and_never_decreases_the_likelihood():
    x, pis = _gmm_clients()
    states, history = federated_gmm_em(list(x), 3, n_iter=100, means_init=[[-1.0], [0.5], [1.0]])
    assert len(states) == 101 and [s.round for s in states] == list(range(101))
    assert states[-1].means.shape == (3, 1) and states[-1].weights.shape == (10, 3)
    assert history.rounds == list(range(101)) and history.clients["log_likelihood"][0].shape == (10,)
    ll = history.curve("log_likelihood")[1]
    assert np.all(np.diff(ll) >= -1e-12)
    # with equal client sizes the History's curve is the pooled mean log-likelihood
    final = states[-1]
    per_client = log_likelihood(x, final.weights, final.means, final.variances)
    np.testing.assert_allclose(history.clients["log_likelihood"][-1], per_client, atol=1e-12)
    assert ll[-1] == pytest.approx(per_client.mean(), abs=1e-12)
    assert np.allclose(np.sort(final.means[:, 0]), [-4, 0, 4], atol=0.15)
    assert np.abs(final.weights[:, np.argsort(final.means[:, 0])] - pis).max() < 0.08


def test_centralized_em_learns_the_variances_of_a_2d_mixture():
    sample = make_gaussian_mixture(3, 2, 1500, means=[[-5, 0], [5, 0], [0, 6]], weights=[0.2, 0.3, 0.5], rng=0)
    states, history = federated_gmm_em(sample.x, 3, n_iter=60, learn_variance=True, seed=1)
    assert np.all(np.diff(history.curve("log_likelihood")[1]) >= -1e-10)
    final = states[-1]
    perm = list(min(itertools.permutations(range(3)), key=lambda p: np.abs(final.means[list(p)] - sample.means).sum()))
    assert np.abs(final.means[perm] - sample.means).max() < 0.2
    assert np.abs(final.weights[0, perm] - sample.weights).max() < 0.03
    assert np.allclose(final.variances, 1.0, atol=0.15)


def test_federated_gmm_em_is_the_engine_run_and_deterministic():
    x, _ = _gmm_clients(n_clients=3, n=40, seed=3)
    algorithm = FederatedGMMEM(2, weights_init=[0.3, 0.7])
    state, history = run(algorithm, x, rounds=7, seed=5)
    states, again = federated_gmm_em(x, 2, n_iter=7, weights_init=[0.3, 0.7], seed=5)
    assert isinstance(state, GMMState) and state.round == 7
    np.testing.assert_array_equal(state.means, states[-1].means)
    np.testing.assert_array_equal(history.curve("log_likelihood")[1], again.curve("log_likelihood")[1])
    np.testing.assert_allclose(states[0].weights, np.tile([0.3, 0.7], (3, 1)))
    assert states[0].variances.tolist() == [1.0, 1.0]
    other = federated_gmm_em(x, 2, n_iter=0, seed=6)[0][0]
    assert not np.array_equal(other.means, states[0].means)   # the seeding depends on the seed
    assert federated_gmm_em(x[0], 2, n_iter=0)[0][0].log_weights.shape == (1, 2)   # (n, d): one client


def test_gmm_bad_inputs():
    with pytest.raises(ValueError, match="same number of samples"):
        federated_gmm_em([np.zeros((3, 1)), np.zeros((0, 1))], 2)
    with pytest.raises(ValueError, match="at least one client"):
        federated_gmm_em([], 2)
    with pytest.raises(ValueError, match="n_components"):
        federated_gmm_em(np.zeros((5, 1)), 0)
    with pytest.raises(ValueError, match="variance"):
        federated_gmm_em(np.zeros((5, 1)), 1, variance=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        federated_gmm_em(np.zeros((5, 1)), 1, n_iter=-1)
    with pytest.raises(ValueError, match="means_init"):
        federated_gmm_em(np.zeros((5, 2)), 2, means_init=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="weights_init"):
        federated_gmm_em(np.zeros((2, 5, 1)), 2, weights_init=np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="weights_init"):
        FederatedGMMEM(2, weights_init=[0.2, 0.2])
    assert math.isfinite(federated_gmm_em(np.zeros((5, 1)), 1, n_iter=2)[1].final("log_likelihood"))


def test_the_algorithm_takes_one_clients_samples_on_the_engine():
    x, _ = _gmm_clients(n_clients=1, n=60, seed=2)
    state, history = run(FederatedGMMEM(2, means_init=[[-1.0], [1.0]]), x[0], rounds=3)
    states, again = federated_gmm_em(x, 2, n_iter=3, means_init=[[-1.0], [1.0]])
    np.testing.assert_array_equal(state.means, states[-1].means)
    np.testing.assert_array_equal(history.clients["log_likelihood"][-1], again.clients["log_likelihood"][-1])
