"""Finite Markov chains shared by the chapters: checks, stationary laws and the sampler (fedlab.markov)."""
import numpy as np
import pytest

from fedlab.markov import check_transition_matrix, sample_chains, stationary_distribution


def test_stationary_matches_the_leading_left_eigenvector():
    rng = np.random.default_rng(0)
    for _ in range(20):
        P = rng.random((5, 5))
        P /= P.sum(1, keepdims=True)
        w, v = np.linalg.eig(P.T)
        ref = np.real(v[:, np.argmin(np.abs(w - 1))])
        assert np.allclose(stationary_distribution(P), ref / ref.sum(), atol=1e-10)


def test_batched_chains():
    P = np.stack([[[0.9, 0.1], [0.3, 0.7]], [[0.5, 0.5], [0.5, 0.5]]])
    assert np.allclose(stationary_distribution(P), [[0.75, 0.25], [0.5, 0.5]])


def test_reducible_and_bad_matrices():
    with pytest.raises(ValueError, match="several stationary"):
        stationary_distribution(np.eye(2))
    with pytest.raises(ValueError, match="row-stochastic"):
        check_transition_matrix([[0.5, 0.2], [0.5, 0.5]])
    with pytest.raises(ValueError, match="non-negative"):
        check_transition_matrix([[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="square"):
        check_transition_matrix(np.ones((2, 3)) / 3)


# ------------------------------------------------------------------------------ sample_chains

def _random_chain(s, seed):
    rng = np.random.default_rng(seed)
    p = rng.random((s, s)) ** 3
    return p / p.sum(1, keepdims=True)


def _markovian_reference(P, n_steps, n_chains, init, rng):
    """The sampler the Markovian-streams chapter had before the shared one, written step by step."""
    rng = np.random.default_rng(rng)
    q = stationary_distribution(P) if isinstance(init, str) else (np.eye(len(P))[init] if np.ndim(init) == 0
                                                                   else np.asarray(init, float))
    cum = np.cumsum(P, axis=1)
    cum[:, -1] = 1.0
    u = rng.random((n_chains, n_steps))
    out = np.empty((n_chains, n_steps), dtype=np.int64)
    out[:, 0] = np.searchsorted(np.cumsum(q), u[:, 0], side="right").clip(max=len(P) - 1)
    for t in range(1, n_steps):
        out[:, t] = (u[:, t, None] >= cum[out[:, t - 1]]).sum(1)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_draws_equal_the_markovian_chapters_former_sampler(seed):
    P = _random_chain(3, seed)
    assert np.array_equal(sample_chains(P, 200, n_chains=4, rng=seed),
                          _markovian_reference(P, 200, 4, "stationary", seed))
    assert np.array_equal(sample_chains(P, 50, n_chains=3, start=2, rng=seed), _markovian_reference(P, 50, 3, 2, seed))
    law = [0.2, 0.0, 0.8]
    assert np.array_equal(sample_chains(P, 50, n_chains=3, law=law, rng=seed), _markovian_reference(P, 50, 3, law, seed))


def test_sampled_chains_have_the_right_transitions_and_law():
    P = _random_chain(3, 1)
    x = sample_chains(P, 20_000, n_chains=4, rng=0)
    assert x.shape == (4, 20_000) and x.dtype == np.int64 and x.min() >= 0 and x.max() <= 2
    counts = np.zeros((3, 3))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    assert np.allclose(counts / counts.sum(1, keepdims=True), P, atol=0.01)
    assert np.allclose(np.bincount(x.ravel(), minlength=3) / x.size, stationary_distribution(P), atol=0.01)
    assert np.all(sample_chains(P, 1, n_chains=5, start=2, rng=0) == 2)
    assert sample_chains(P, 0, n_chains=3, rng=0).shape == (3, 0)


def test_per_chain_matrices_laws_and_starts():
    P = np.stack([_random_chain(4, s) for s in range(3)])
    x = sample_chains(P, 30, law=np.eye(4)[[0, 1, 3]], rng=2)
    assert x.shape == (3, 30) and x[:, 0].tolist() == [0, 1, 3]
    u = np.random.default_rng(2).random((3, 30))
    for c in range(3):   # chain c with its own matrix equals a one-chain run with that matrix and its uniforms
        assert np.array_equal(sample_chains(P[c], 30, start=[x[c, 0]], uniforms=u[c:c + 1])[0], x[c])
    starts = sample_chains(P, 5, start=[3, 2, 1], rng=0)
    assert starts[:, 0].tolist() == [3, 2, 1]


def test_supplied_uniforms_follow_the_inverse_cdf():
    P = np.array([[0.25, 0.75], [0.6, 0.4]])
    u = np.array([[0.5, 0.2, 0.7, 0.59, 0.61]])
    # start from law (0.5, 0.5): 0.5 -> state 1; from 1: 0.2 < 0.6 -> 0; from 0: 0.7 >= 0.25 -> 1; 0.59 -> 0; 0.61 -> 1
    assert sample_chains(P, 5, law=[0.5, 0.5], uniforms=u).tolist() == [[1, 0, 1, 0, 1]]


def test_hold_samples_the_lazy_chain():
    P = _random_chain(3, 4)
    rng = np.random.default_rng(5)
    kappa, n = 0.3, 40_000
    hold = rng.random((2, n - 1)) >= kappa
    x = sample_chains(P, n, start=[0, 0], uniforms=rng.random((2, n)), hold=hold)
    assert np.all(x[:, 1:][hold] == x[:, :-1][hold])
    counts = np.zeros((3, 3))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    lazy = (1 - kappa) * np.eye(3) + kappa * P
    assert np.allclose(counts / counts.sum(1, keepdims=True), lazy, atol=0.015)


def test_sampler_rejects_bad_arguments():
    P = _random_chain(2, 0)
    with pytest.raises(ValueError, match="not both"):
        sample_chains(P, 3, start=0, law=[0.5, 0.5])
    with pytest.raises(ValueError, match="not both"):
        sample_chains(P, 3, rng=0, uniforms=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="number of chains"):
        sample_chains(P, 3, n_chains=2, start=[0, 1, 1])
    with pytest.raises(ValueError, match="uniforms"):
        sample_chains(P, 3, uniforms=np.ones((1, 3)))
    with pytest.raises(TypeError, match="hold"):
        sample_chains(P, 3, n_chains=1, hold=np.zeros((1, 3), dtype=bool))
    with pytest.raises(TypeError, match="start"):
        sample_chains(P, 3, start=0.5)
    with pytest.raises(ValueError, match="start"):
        sample_chains(P, 3, start=2)
    with pytest.raises(ValueError, match="law"):
        sample_chains(P, 3, law=[0.5, 0.6])
    with pytest.raises(ValueError, match="row-stochastic"):
        sample_chains([[0.5, 0.2], [0.5, 0.5]], 3)
    with pytest.raises(ValueError, match="n_steps"):
        sample_chains(P, -1)
