"""The data of the online-mixtures chapter (fedlab.online.data): GMM streams and environments, the separated limit's
weights, mixture-structured streams of labelled pools."""
import math

import numpy as np
import pytest

from fedlab._rng import Stream, numpy_rng
from fedlab.online.data import (DIGITS_STREAM_MODES, GMM_CENTERS, DigitsMixtureStream, GMMEnvironment, GMMStep,
                                MixtureStream, dirichlet_weights, make_gmm_stream, sample_mixture)

MU3 = np.array([[4.0, 0.0], [-2.0, 3.4641], [-2.0, -3.4641]])


def test_sample_mixture_draws_each_clients_mixture():
    means = np.array([[0.0, 0.0], [50.0, 50.0]])
    x = sample_mixture([[1.0, 0.0], [0.0, 1.0]], means, 200, variance=0.01, rng=0)
    assert x.shape == (2, 200, 2)
    np.testing.assert_allclose(x.mean(1), means, atol=0.05)
    np.testing.assert_array_equal(sample_mixture([0.5, 0.5], means, 3, rng=1),
                                  sample_mixture([[0.5, 0.5]], means, 3, rng=1))
    with pytest.raises(ValueError, match="pi"):
        sample_mixture([0.5, 0.6], means, 3)
    with pytest.raises(ValueError, match="n"):
        sample_mixture([0.5, 0.5], means, 0)


def test_dirichlet_weights_are_floored_simplex_rows():
    w = dirichlet_weights(n_components=3, alpha=0.1, horizon=50, seed=2)
    assert w.shape == (50, 3) and np.allclose(w.sum(1), 1.0) and w.min() >= 1e-12 * 0.99
    np.testing.assert_array_equal(w, dirichlet_weights(n_components=3, alpha=0.1, horizon=50, seed=2))
    with pytest.raises(ValueError, match="n_components"):
        dirichlet_weights(n_components=1)
    with pytest.raises(ValueError, match="floor"):
        dirichlet_weights(n_components=3, floor=0.5)


def test_make_gmm_stream_every_center_mode():
    for centers in GMM_CENTERS:
        s = make_gmm_stream(n_components=3, dim=2, n_clients=4, horizon=6, spread=2.0, centers=centers, seed=1)
        assert s.means.shape == (3, 2) and s.weights.shape == (6, 4, 3)
        assert np.allclose(s.weights.sum(-1), 1.0) and s.weights.min() >= 1e-12 * 0.99
        assert (s.n_components, s.dim, s.n_clients, s.horizon) == (3, 2, 4, 6)
    circle = make_gmm_stream(n_components=3, spread=2.0, seed=0)
    assert circle.min_separation == pytest.approx(2.0 * math.sqrt(3))
    assert np.allclose(np.linalg.norm(circle.means, axis=1), 2.0)
    again = make_gmm_stream(n_components=3, spread=2.0, seed=0)
    np.testing.assert_array_equal(circle.weights, again.weights)
    assert make_gmm_stream(n_components=1, horizon=2).min_separation == math.inf
    with pytest.raises(ValueError, match="dim"):
        make_gmm_stream(dim=1)
    with pytest.raises(ValueError, match="alpha"):
        make_gmm_stream(alpha=0.0)
    with pytest.raises(ValueError, match="centers"):
        make_gmm_stream(centers="grid")


def test_digits_stream_every_mode():
    for mode in DIGITS_STREAM_MODES:
        s = DigitsMixtureStream(n_clients=3, n_components=3, n_samples=5, n_test=2, mode=mode, seed=0)
        d = s(4)
        assert d.n_clients == 3 and d.train.x.shape == (3, 5, 64) and d.test.x.shape == (3, 2, 64)
        raw = s.samples(4)
        for x, y, z in zip(raw["x"], raw["y"], raw["z"]):
            if mode == "label_groups":
                assert np.all(s.groups[y] == z)               # labels of a component lie in its class group
            else:
                idx = [int(np.flatnonzero((s.x == xi).all(1))[0]) for xi in x]
                np.testing.assert_array_equal(y, s.permutations[z, s.y[idx]])
        np.testing.assert_array_equal(s(4).train.x, d.train.x)  # deterministic in (seed, t)
        assert not np.allclose(s.weights(1), s.weights(2))
    fixed = DigitsMixtureStream(n_clients=3, weights="fixed", seed=0)
    np.testing.assert_array_equal(fixed.weights(1), fixed.weights(7))
    x, y = fixed.pooled(3)
    assert x.shape == (3 * 3 * 6, 64) and y.shape == (54,)
    with pytest.raises(ValueError, match="n_components"):
        DigitsMixtureStream(n_components=11)
    with pytest.raises(ValueError, match="weights"):
        DigitsMixtureStream(weights="drift")


def test_gmm_environment_steps():
    stream = make_gmm_stream(n_clients=4, horizon=5, seed=0)
    env = GMMEnvironment(stream.means, stream.weights, n_samples=7, n_mc_loss=11, seed=2)
    step = env(3)
    assert isinstance(step, GMMStep) and step.t == 4 and env.horizon == step.horizon == 5
    assert step.samples.shape == (4, 7, 2) and step.loss_draws.shape == (3, 11, 2)
    np.testing.assert_array_equal(step.weights_star, stream.weights[3])
    np.testing.assert_allclose(np.exp(step.log_comparator), stream.weights.mean(0))
    np.testing.assert_array_equal(env(3).samples, step.samples)              # deterministic in (seed, t)
    x = sample_mixture(stream.weights[3], stream.means, 7, rng=numpy_rng(2, 4, Stream.ONLINE_DATA))
    np.testing.assert_array_equal(step.samples, x)
    # playing the truth costs nothing; the comparator loss does not depend on the played model
    loss, comp = step.losses(np.log(step.weights_star), stream.means)
    np.testing.assert_allclose(loss, 0.0, atol=1e-12)
    np.testing.assert_array_equal(comp, step.losses(np.log(np.full((4, 3), 1 / 3)), stream.means + 1)[1])
    # the true gradient (4.27) at the true weights is -1 (fact A2, up to the Monte Carlo of the loss draws)
    big = GMMEnvironment(stream.means / 3, np.tile([0.5, 0.3, 0.2], (1, 2, 1)), n_mc_loss=50_000, seed=0)(0)
    np.testing.assert_allclose(big.true_gradient(np.log(big.weights_star)), -1.0, atol=2e-2)
    with pytest.raises(ValueError, match="t must be"):
        env(5)
    with pytest.raises(ValueError, match="n_mc_loss"):
        GMMEnvironment(stream.means, stream.weights, n_mc_loss=0)


def test_the_stream_takes_any_pools_and_digits_is_a_case_of_it():
    rng = np.random.default_rng(0)
    pools = [(rng.random((n, 3, 4, 4), dtype=np.float32), np.arange(n) % 10) for n in (50, 20)]
    s = MixtureStream(*pools, n_clients=2, n_components=4, n_samples=5, seed=1)
    d = s(3)
    assert d.train.x.shape == (2, 5, 3, 4, 4) and d.test.x.shape == (2, 1, 3, 4, 4) and d.n_classes == 10
    raw = s.samples(3)
    assert all(np.all(s.groups[y] == z) for y, z in zip(raw["y"], raw["z"]))
    digits = DigitsMixtureStream(n_clients=2, seed=1)
    rng = numpy_rng(1, 0, Stream.ONLINE_POOL)
    rng.permutation(len(digits.y))                                          # the pool split's draw
    same = MixtureStream((digits.x[digits.train_pool], digits.y[digits.train_pool]),
                         (digits.x[digits.test_pool], digits.y[digits.test_pool]), n_clients=2, seed=1,
                         groups_rng=rng)
    np.testing.assert_array_equal(same.groups, digits.groups)
    np.testing.assert_array_equal(same(5).train.x, digits(5).train.x)
    with pytest.raises(ValueError, match="test"):
        MixtureStream(pools[0], (pools[1][0], np.zeros(20, dtype=int)), n_components=4)
    with pytest.raises(ValueError, match="n_components"):
        MixtureStream(*pools, n_components=11)
