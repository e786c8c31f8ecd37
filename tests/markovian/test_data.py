"""Markov chains, client streams and the streaming regression (fedlab.markovian.data)."""
import numpy as np
import pytest

from fedlab.markovian.bounds import tv_l1, two_state_mixing_time
from fedlab.markovian.data import (FLIP_MAPPINGS, STARTS, STREAM_MODES, MarkovRegression,
                                   check_transition_matrix, distance_to_stationarity,
                                   flip_prob_from_mixing_time, make_markov_regression, mixing_time,
                                   state_marginals, stationary_distribution,
                                   stream_marginals, flip_matrix, two_state_streams)


def _random_chain(s, seed):
    rng = np.random.default_rng(seed)
    p = rng.random((s, s)) ** 3
    return p / p.sum(1, keepdims=True)


@pytest.mark.parametrize("seed", range(4))
def test_stationary_law_matches_numpy_eigendecomposition(seed):
    P = _random_chain(5, seed)
    vals, vecs = np.linalg.eig(P.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    assert np.allclose(stationary_distribution(P), v / v.sum(), atol=1e-10)
    assert np.allclose(stationary_distribution(P) @ P, stationary_distribution(P))


@pytest.mark.parametrize("seed", range(4))
def test_distance_and_mixing_time_match_eigendecomposition(seed):
    P = _random_chain(4, seed)
    vals, vecs = np.linalg.eig(P)
    inv = np.linalg.inv(vecs)
    pi = stationary_distribution(P)
    d = distance_to_stationarity(P, 30)
    for t in (0, 1, 5, 30):
        pt = np.real(vecs @ np.diag(vals ** t) @ inv)                         # P^t = V L^t V^-1
        assert d[t] == pytest.approx(max(tv_l1(np.clip(row, 0, None) / np.clip(row, 0, None).sum(), pi)
                                         for row in pt), abs=1e-9)
    for eps in (0.25, 0.01, 1e-6):
        tau = mixing_time(P, eps)
        full = distance_to_stationarity(P, tau)
        assert full[tau] <= eps + 1e-12 and (tau == 1 or full[tau - 1] > eps)


def test_mixing_time_of_reversible_chain_within_relaxation_bounds():
    """Levin-Peres (Thm 12.4/12.5) in the sup convention: (t_rel - 1) ln(1/(2e)) <= t_mix(e) <= t_rel ln(1/(e pi_min))."""
    rng = np.random.default_rng(7)
    w = rng.random((5, 5)) + 0.2
    w = w + w.T                                                                # symmetric weights: reversible walk
    P = w / w.sum(1, keepdims=True)
    pi = stationary_distribution(P)
    lam = np.sort(np.abs(np.linalg.eigvals(P)))[-2]
    t_rel = 1 / (1 - lam)
    for eps_sup in (0.125, 0.01):
        tau = mixing_time(P, 2 * eps_sup)                                      # L1 level = 2 x sup level
        assert (t_rel - 1) * np.log(1 / (2 * eps_sup)) <= tau <= t_rel * np.log(1 / (eps_sup * pi.min())) + 1


def test_two_state_mixing_time_by_matrix_powers():
    for p in (0.5, 0.25, 0.1, 0.05, 0.01):
        assert mixing_time(flip_matrix(p)) == two_state_mixing_time(p)
    assert np.allclose(stationary_distribution(flip_matrix(0.1, 0.3)), [0.75, 0.25])


@pytest.mark.parametrize("bad,match", [
    (np.array([[0.5, 0.4], [0.5, 0.5]]), "row-stochastic"),
    (np.array([[1.2, -0.2], [0.5, 0.5]]), "non-negative"),
    (np.ones((2, 3)) / 3, "square"),
    (np.array([[np.nan, 1.0], [0.5, 0.5]]), "finite"),
])
def test_non_stochastic_matrices_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        check_transition_matrix(bad)
    with pytest.raises(ValueError):
        mixing_time(bad)


def test_reducible_and_periodic_chains_raise():
    with pytest.raises(ValueError, match="stationary distributions"):
        stationary_distribution(np.eye(2))
    with pytest.raises(ValueError, match="does not mix"):
        mixing_time(np.array([[0.0, 1.0], [1.0, 0.0]]), t_max=64)


def test_state_marginals_are_matrix_powers():
    P = _random_chain(3, 1)
    marg = state_marginals(P, 0, 4)
    assert np.allclose(marg[0], [1, 0, 0]) and np.allclose(marg[3], np.linalg.matrix_power(P, 3)[0])


def test_flip_prob_mappings():
    assert flip_prob_from_mixing_time(100) == 0.01
    p = flip_prob_from_mixing_time(np.array([10, 100]), "exact")
    assert list(two_state_mixing_time(p)) == [10, 100]
    assert two_state_mixing_time(flip_prob_from_mixing_time(100)) == 69          # ~0.69 tau_m with p = 1/tau_m
    assert set(FLIP_MAPPINGS) == {"inverse", "exact"}
    with pytest.raises(ValueError, match=">= 1"):
        flip_prob_from_mixing_time(0.5)


# ------------------------------------------------------------------ streams

@pytest.mark.parametrize("start", STARTS)
def test_markov_and_iid_streams_have_the_same_marginals(start):
    p, m, t, k = 0.05, 20_000, 3, 7
    exact = stream_marginals(p, t * k, start)
    for mode in ("markov", "iid"):
        s = two_state_streams(p, n_clients=m, n_rounds=t, n_local=k, mode=mode, start=start, rng=1)
        assert s.shape == (t, m, k) and s.dtype == np.int8
        freq = s.transpose(0, 2, 1).reshape(t * k, m).mean(1)                   # time index s = t K + k
        assert np.allclose(freq, exact, atol=0.012), mode
    indep = two_state_streams(p, n_clients=m, n_rounds=t, n_local=k, mode="independent", start=start, rng=1)
    assert np.allclose(indep.mean(axis=(1,)), 0.5, atol=0.015)                 # restarts from pi


def test_stream_dependence_structure():
    p = 0.05
    s = two_state_streams(p, n_clients=500, n_rounds=20, n_local=10, mode="markov", start="stationary", rng=2)
    flat = s.transpose(1, 0, 2).reshape(500, -1).astype(float)                 # one chain per client, T*K long
    x = 2 * flat - 1
    assert np.mean(x[:, 1:] * x[:, :-1]) == pytest.approx(1 - 2 * p, abs=0.02)  # lag-1 correlation
    assert np.mean(flat[:, 1:] != flat[:, :-1]) == pytest.approx(p, abs=0.005)   # flips continue across rounds
    iid = two_state_streams(p, n_clients=500, n_rounds=20, n_local=10, mode="iid", start="stationary", rng=2)
    y = 2 * iid.transpose(1, 0, 2).reshape(500, -1).astype(float) - 1
    assert abs(np.mean(y[:, 1:] * y[:, :-1])) < 0.02
    ind = two_state_streams(p, n_clients=2000, n_rounds=20, n_local=10, mode="independent", rng=2)
    z = 2 * ind.astype(float) - 1
    assert abs(np.mean(z[1:, :, 0] * z[:-1, :, -1])) < 0.03                     # rounds are independent
    assert np.mean(z[:, :, 1:] * z[:, :, :-1]) == pytest.approx(1 - 2 * p, abs=0.02)


def _former_streams(p, m, t, k, mode, start, rng):
    """The chapter's stream sampler before the shared one (fedlab.markov.sample_chains): parities of the flips."""
    rng = np.random.default_rng(rng)
    p = np.broadcast_to(np.asarray(p, float), (m,))
    if mode == "markov":
        x0 = (rng.random(m) < 0.5) if start == "stationary" else np.zeros(m, dtype=bool)
        flips = rng.random((m, t * k - 1)) < p[:, None]
        parity = np.concatenate([np.zeros((m, 1), dtype=np.int64), np.cumsum(flips, axis=1)], axis=1) % 2
        return (parity ^ x0[:, None]).astype(np.int8).reshape(m, t, k).transpose(1, 0, 2)
    x0 = rng.random((t, m)) < 0.5
    flips = rng.random((t, m, k - 1)) < p[None, :, None]
    parity = np.concatenate([np.zeros((t, m, 1), dtype=np.int64), np.cumsum(flips, axis=2)], axis=2) % 2
    return (parity ^ x0[..., None]).astype(np.int8)


@pytest.mark.parametrize("seed", range(5))
def test_chain_streams_equal_the_former_sampler(seed):
    for mode in ("markov", "independent"):
        for start in STARTS:
            for p, k in (([0.1, 0.02, 0.5], 5), (0.3, 1)):
                new = two_state_streams(p, n_clients=3, n_rounds=7, n_local=k, mode=mode, start=start, rng=seed)
                assert new.dtype == np.int8
                assert np.array_equal(new, _former_streams(p, 3, 7, k, mode, start, seed)), (mode, start, k)


def test_streams_are_seed_deterministic_and_per_client_flips():
    a = two_state_streams([0.5, 0.001], n_clients=2, n_rounds=50, n_local=20, rng=3)
    b = two_state_streams([0.5, 0.001], n_clients=2, n_rounds=50, n_local=20, rng=3)
    assert np.array_equal(a, b)
    flips = np.sum(np.diff(a.transpose(1, 0, 2).reshape(2, -1), axis=1) != 0, axis=1)
    assert 400 < flips[0] < 600 and flips[1] <= 6                                # per-client flip probabilities
    assert set(STREAM_MODES) == {"markov", "independent", "iid"}


@pytest.mark.parametrize("kwargs,match", [
    (dict(flip_prob=0.0), r"\(0, 1\)"), (dict(flip_prob=[0.1, 0.2]), "shape"), (dict(mode="shuffled"), "mode"),
    (dict(start="state1"), "start"), (dict(n_local=0), "n_local"),
])
def test_bad_stream_arguments_raise(kwargs, match):
    args = dict(flip_prob=0.1, n_clients=3, n_rounds=2, n_local=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        two_state_streams(args.pop("flip_prob"), **args)


# ------------------------------------------------------------------ regression problem

def test_regression_gradients_match_finite_differences():
    prob = make_markov_regression(6, dim=4, rng=0)
    w = np.random.default_rng(1).normal(size=4)
    eps = 1e-6
    num = np.array([(prob.objective(w + eps * e) - prob.objective(w - eps * e)) / (2 * eps) for e in np.eye(4)])
    assert np.allclose(prob.gradient(w), num, atol=1e-6)
    assert prob.client_gradients(np.stack([w, w])).shape == (2, 6, 4)


def test_sample_gradients_average_to_the_client_gradients():
    prob = make_markov_regression(4, dim=3, rng=2)
    w = np.random.default_rng(3).normal(size=(4, 3))                           # one local model per client
    states = np.array([0, 1])
    noise_pts = np.linspace(0, prob.noise_high, 2001)
    # expectation over the stationary law (1/2, 1/2) and the uniform noise, by quadrature
    g = np.zeros((4, 3))
    for s in states:
        vals = np.stack([prob.sample_gradient(w, np.full(4, s), np.full(4, e)) for e in noise_pts])
        g += 0.5 * vals.mean(0)
    direct = np.stack([prob.client_gradients(w[m])[m] for m in range(4)])
    assert np.allclose(g, direct, atol=1e-9)


def test_hessian_of_the_quadratic_part_by_finite_differences():
    prob = make_markov_regression(5, dim=3, reg_lambda=0.0, rng=5)
    w, eps = np.array([0.2, -0.1, 0.4]), 1e-5
    num = np.stack([(prob.gradient(w + eps * e) - prob.gradient(w - eps * e)) / (2 * eps) for e in np.eye(3)])
    assert np.allclose(prob.hessian_quadratic(), num, atol=1e-7)


def test_minimizer_and_constants():
    prob = make_markov_regression(10, rng=0)
    c = prob.constants()
    assert np.linalg.norm(prob.gradient(c["w_star"])) < 1e-6
    assert c["delta0"] == pytest.approx(prob.objective(np.zeros(10)) - c["f_star"])
    assert c["smooth_L"] == pytest.approx(np.max(np.sum(prob.features ** 2, -1)) + prob.reg_lambda)
    # sigma2 and theta2 are upper bounds on the ball of the given radius: check at random points in it
    rng = np.random.default_rng(4)
    for _ in range(50):
        u = rng.normal(size=10)
        w = c["w_star"] + c["radius"] * rng.random() * u / np.linalg.norm(u)
        gm = prob.client_gradients(w)
        for s in (0, 1):
            for e in (0.0, prob.noise_high):
                dev = prob.sample_gradient(np.tile(w, (10, 1)), np.full(10, s), np.full(10, e)) - gm
                assert np.max(np.sum(dev ** 2, -1)) <= c["sigma2"] * (1 + 1e-9)
        assert np.mean(np.sum((gm - gm.mean(0)) ** 2, -1)) <= c["het_theta2"] * (1 + 1e-9)


def test_problem_options_and_validation():
    a = make_markov_regression(6, dim=3, optima="groups", rng=0)
    assert np.allclose(a.optima[0], a.optima[1]) and np.allclose(a.optima[3], a.optima[5])
    assert np.all(a.optima[:3] < 1) and np.all(a.optima[3:] >= 1)
    b = make_markov_regression(6, dim=3, rng=0)
    assert not np.allclose(b.optima[0], b.optima[1]) and np.all(b.optima[3:] >= 1)
    assert b.n_clients == 6 and b.n_states == 2 and b.dim == 3 and b.targets.shape == (6, 2)
    with pytest.raises(ValueError, match="stat_dist"):
        MarkovRegression(b.features, b.optima, np.array([0.7, 0.7]))
    with pytest.raises(ValueError, match="reg_lambda"):
        MarkovRegression(b.features, b.optima, np.array([0.5, 0.5]), reg_lambda=-1.0)
    with pytest.raises(ValueError, match="optima"):
        make_markov_regression(4, optima="shared")
