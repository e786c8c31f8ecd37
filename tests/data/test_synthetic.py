import numpy as np
import pytest

from fedlab.data import (ClientArrays, label_skew, make_gaussian_mixture, make_gaussian_mixture_clients,
                         make_leaf_synthetic)


def mean_label_entropy(hist):
    p = hist / hist.sum(axis=1, keepdims=True)
    logp = np.log(np.where(p > 0, p, 1.0))
    return float(-(p * logp).sum(axis=1).mean())


def test_leaf_shapes_dtypes_and_meta():
    data = make_leaf_synthetic(1.0, 1.0, n_clients=5, n_samples=20, dim=7, n_classes=4, rng=0)
    assert isinstance(data, ClientArrays) and len(data) == 5 and data.n_classes == 4
    assert all(x.shape == (20, 7) and x.dtype == np.float32 for x in data.xs)
    assert all(y.shape == (20,) and y.dtype == np.int64 for y in data.ys)
    assert data.meta["W"].shape == (5, 7, 4) and data.meta["b"].shape == (5, 4) and data.meta["v"].shape == (5, 7)
    hist = data.label_histograms()
    assert hist.shape == (5, 4) and np.array_equal(hist.sum(axis=1), data.sizes)


def test_leaf_labels_are_argmax_of_client_softmax_model():
    data = make_leaf_synthetic(0.5, 0.5, n_clients=4, n_samples=50, dim=6, n_classes=5, rng=1)
    for k, (x, y) in enumerate(zip(data.xs, data.ys)):
        logits = x.astype(np.float64) @ data.meta["W"][k] + data.meta["b"][k]
        assert np.array_equal(y, logits.argmax(axis=1))


def test_leaf_covariance_is_diagonal_power_law():
    dim = 8
    data = make_leaf_synthetic(0.0, 0.0, n_clients=1, n_samples=20000, dim=dim, rng=2)
    centred = data.xs[0].astype(np.float64) - data.meta["v"][0]
    cov = np.cov(centred, rowvar=False)
    expected = np.arange(1, dim + 1) ** -1.2
    np.testing.assert_allclose(data.meta["sigma_diag"], expected)
    np.testing.assert_allclose(np.diag(cov), expected, rtol=0.05)
    assert np.abs(cov - np.diag(np.diag(cov))).max() < 0.02


def test_leaf_determinism_and_seed_sensitivity():
    a = make_leaf_synthetic(1, 1, n_clients=3, n_samples=10, rng=7)
    b = make_leaf_synthetic(1, 1, n_clients=3, n_samples=10, rng=7)
    c = make_leaf_synthetic(1, 1, n_clients=3, n_samples=10, rng=8)
    assert all(np.array_equal(p, q) for p, q in zip(a.xs, b.xs))
    assert all(np.array_equal(p, q) for p, q in zip(a.ys, b.ys))
    assert not np.array_equal(a.xs[0], c.xs[0])


def test_leaf_sizes_options():
    sizes = np.array([3, 5, 8])
    data = make_leaf_synthetic(1, 1, n_samples=sizes, dim=4, rng=0)
    assert np.array_equal(data.sizes, sizes)
    logn = make_leaf_synthetic(1, 1, n_clients=40, n_samples="lognormal", dim=4, rng=0)
    assert len(logn) == 40 and logn.sizes.min() >= 50 and len(set(logn.sizes.tolist())) > 10
    assert len(make_leaf_synthetic(1, 1, n_samples=5, dim=3, rng=0)) == 100


def test_leaf_iid_variant_shares_model_and_input_distribution():
    data = make_leaf_synthetic(1, 1, n_clients=20, n_samples=200, iid=True, rng=0)
    assert np.all(data.meta["W"] == data.meta["W"][0]) and np.all(data.meta["v"] == 0)
    non_iid = make_leaf_synthetic(1, 1, n_clients=20, n_samples=200, rng=0)
    assert label_skew(data.label_histograms()) < 0.15 < label_skew(non_iid.label_histograms())


def test_leaf_label_skew_grows_with_beta_and_ignores_alpha():
    entropies = [mean_label_entropy(make_leaf_synthetic(0.0, beta, n_clients=50, n_samples=100, rng=0)
                                    .label_histograms()) for beta in (0.0, 3.0, 10.0)]
    assert entropies[0] > entropies[1] > entropies[2]
    # u_k shifts all logits of a sample equally: labels do not depend on alpha.
    low = make_leaf_synthetic(0.0, 1.0, n_clients=5, n_samples=30, rng=3)
    high = make_leaf_synthetic(5.0, 1.0, n_clients=5, n_samples=30, rng=3)
    assert all(np.array_equal(p, q) for p, q in zip(low.ys, high.ys))


@pytest.mark.parametrize("kwargs, error", [
    ({"alpha": -1.0}, ValueError),
    ({"beta": float("nan")}, ValueError),
    ({"n_samples": 0}, ValueError),
    ({"n_samples": np.array([3, -2])}, ValueError),
    ({"n_samples": np.array([3, 0])}, ValueError),
    ({"n_samples": np.array([3.0, 2.0])}, TypeError),
    ({"n_samples": "uniform"}, ValueError),
    ({"n_samples": np.array([3, 4]), "n_clients": 3}, ValueError),
    ({"n_clients": 0}, ValueError),
    ({"n_classes": 1}, ValueError),
    ({"dim": 0}, ValueError),
    ({"rng": "seed"}, TypeError),
])
def test_leaf_bad_inputs(kwargs, error):
    args = {"alpha": 1.0, "beta": 1.0, "n_clients": 2, "n_samples": 5}
    args.update(kwargs)
    alpha, beta = args.pop("alpha"), args.pop("beta")
    with pytest.raises(error):
        make_leaf_synthetic(alpha, beta, **args)


def test_client_arrays_validation_and_split():
    with pytest.raises(ValueError, match="one entry per client"):
        ClientArrays([np.zeros((2, 1))], [], 2)
    with pytest.raises(ValueError, match="rows"):
        ClientArrays([np.zeros((2, 1))], [np.zeros(3, np.int64)], 2)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        ClientArrays([np.zeros((2, 1))], [np.array([0, 2])], 2)
    data = make_leaf_synthetic(1, 1, n_clients=4, n_samples=10, dim=3, rng=0)
    train, test = data.train_test_split(0.3, rng=0)
    assert np.array_equal(train.sizes, [7] * 4) and np.array_equal(test.sizes, [3] * 4)
    assert train.meta is data.meta


def test_gaussian_mixture_matches_requested_mixture():
    means = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    weights = np.array([0.5, 0.3, 0.2])
    sample = make_gaussian_mixture(3, 2, 20000, means=means, weights=weights, cov_scale=[1.0, 0.25, 4.0], rng=0)
    x, z = sample.x, sample.z
    assert x.shape == (20000, 2) and z.shape == (20000,) and z.dtype == np.int64
    np.testing.assert_allclose(np.bincount(z) / z.size, weights, atol=0.015)
    for m, var in enumerate([1.0, 0.25, 4.0]):
        np.testing.assert_allclose(x[z == m].mean(axis=0), means[m], atol=0.1)
        np.testing.assert_allclose(x[z == m].var(axis=0), var, rtol=0.08)
    assert sample.covariances.shape == (3, 2, 2) and sample.covariances[2, 0, 0] == 4.0
    assert np.array_equal(sample.weights, weights) and np.array_equal(sample.means, means)


def test_gaussian_mixture_defaults_and_determinism():
    a = make_gaussian_mixture(4, 3, 50, rng=1)
    b = make_gaussian_mixture(4, 3, 50, rng=1)
    assert np.array_equal(a.x, b.x) and np.allclose(a.weights, 0.25) and a.means.shape == (4, 3)


@pytest.mark.parametrize("kwargs", [
    {"weights": [0.5, 0.6]},
    {"weights": [0.5, 0.4, 0.1]},
    {"weights": [1.2, -0.2]},
    {"means": np.zeros((3, 2))},
    {"cov_scale": -1.0},
    {"cov_scale": [1.0, 0.0]},
    {"n_samples": 0},
    {"n_components": 0},
])
def test_gaussian_mixture_bad_inputs(kwargs):
    args = {"n_components": 2, "dim": 2, "n_samples": 10}
    args.update(kwargs)
    with pytest.raises(ValueError):
        make_gaussian_mixture(args.pop("n_components"), args.pop("dim"), args.pop("n_samples"), **args)


def test_gaussian_mixture_clients():
    data = make_gaussian_mixture_clients(6, 3, 2, np.array([5, 6, 7, 8, 9, 10]), alpha=0.5, rng=0)
    assert len(data) == 6 and data.n_classes == 3 and np.array_equal(data.sizes, [5, 6, 7, 8, 9, 10])
    assert data.meta["weights"].shape == (6, 3) and np.allclose(data.meta["weights"].sum(axis=1), 1.0)
    assert data.xs[0].shape == (5, 2) and data.label_histograms().sum() == 45
    skewed = make_gaussian_mixture_clients(20, 3, 2, 100, alpha=0.05, rng=0)
    mixed = make_gaussian_mixture_clients(20, 3, 2, 100, alpha=100.0, rng=0)
    assert label_skew(skewed.label_histograms()) > label_skew(mixed.label_histograms()) + 0.3
    again = make_gaussian_mixture_clients(20, 3, 2, 100, alpha=0.05, rng=0)
    assert np.array_equal(skewed.xs[3], again.xs[3])
    with pytest.raises(ValueError):
        make_gaussian_mixture_clients(3, 2, 2, 10, alpha=0.0)
    with pytest.raises(ValueError):
        make_gaussian_mixture_clients(3, 2, 2, np.array([1, 2]))
