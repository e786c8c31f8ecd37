"""Mixture-structured data sets of the FedEM chapter (fedlab.fedem.data)."""
import numpy as np
import pytest

from fedlab.data import load_digits_arrays
from fedlab.fedem.data import (DIGITS_MIXTURE_MODES, LABEL_MODES, MixtureDataset, make_digits_mixture,
                               make_synthetic_mixture, mixture_client_sizes, official_buggy_labels)
from fedlab.engine import FederatedDataset

SMALL = dict(n_clients=12, dim=6, n_max=120, n_test=40)


def test_client_sizes_follow_the_reference_recipe():
    sizes = mixture_client_sizes(500, n_min=50, n_max=300, rng=0)
    assert sizes.dtype == np.int64 and sizes.min() >= 50 and sizes.max() <= 300
    assert (sizes == 300).any() and (sizes < 100).any()  # heavy-tailed, capped
    with pytest.raises(ValueError, match="n_max"):
        mixture_client_sizes(3, n_min=10, n_max=5)


def test_synthetic_statistics():
    d = make_synthetic_mixture(**SMALL, rng=0)
    assert isinstance(d, MixtureDataset) and d.n_clients == 12 and d.n_components == 3
    assert np.all((d.train.sizes >= 50) & (d.train.sizes <= 120)) and np.all(d.test.sizes == 40)
    assert np.allclose(d.pi.sum(1), 1) and (d.pi >= 0).all()
    theta = d.meta["theta"]
    assert theta.shape == (3, 6) and np.abs(theta).max() <= 1
    assert all(x.dtype == np.float32 and np.abs(x).max() <= 1 for x in d.train.xs)
    assert all(set(np.unique(y)) <= {0, 1} for y in d.train.ys)
    assert all(len(z) == len(y) for z, y in zip(d.z_train, d.train.ys))


def test_synthetic_labels_follow_the_latent_component():
    d = make_synthetic_mixture(**SMALL, noise_level=0.0, rng=1)
    theta = d.meta["theta"]
    for x, y, z in zip(d.train.xs + d.test.xs, d.train.ys + d.test.ys, d.z_train + d.z_test):
        expected = (np.einsum("nd,nd->n", x.astype(float), theta[z]) > 0).astype(int)
        assert np.array_equal(y, expected)
    # latent counts follow the client's weights (multinomial): frequencies near pi for large n
    big = make_synthetic_mixture(n_clients=3, dim=4, n_min=1000, n_max=1000, n_test=2000, rng=2)
    for pi, z in zip(big.pi, big.z_test):
        assert np.allclose(np.bincount(z, minlength=3) / len(z), pi, atol=0.05)


def test_noise_flips_few_labels_and_bernoulli_mode_flips_more():
    kw = dict(n_clients=4, dim=10, n_min=500, n_max=500, n_test=10)
    d = make_synthetic_mixture(**kw, noise_level=0.1, rng=3)
    b = make_synthetic_mixture(**kw, label_mode="bernoulli", rng=3)

    def agreement(data):
        th = data.meta["theta"]
        return np.mean(np.concatenate([(np.einsum("nd,nd->n", x, th[z]) > 0) == y
                                       for x, y, z in zip(data.train.xs, data.train.ys, data.z_train)]))

    assert agreement(d) > 0.93
    assert agreement(b) < agreement(d)


def test_official_bug_labels_by_hand():
    labels = [np.array([1, 1, 1]), np.array([0, 1]), np.array([1])]
    y, owner = official_buggy_labels(labels, counts=[3, 2, 1], n=6)
    assert y.tolist() == [1, 1, 1, 0, 0, 0]         # comp 2 wrote [0:1], comp 1 [0:2], comp 0 [0:3]; tail stays 0
    assert owner.tolist() == [2, 1, 0, -1, -1, -1]
    y, owner = official_buggy_labels([np.array([1]), np.array([1, 1, 1, 1])], counts=[1, 4], n=5)
    assert y.tolist() == [1, 1, 1, 1, 0] and owner.tolist() == [1, 1, 1, 1, -1]


def test_buggy_generator_has_a_constant_zero_tail():
    d = make_synthetic_mixture(**SMALL, replicate_official_bug=True, rng=0)
    tails = np.concatenate([y[z == -1] for y, z in zip(d.train.ys, d.z_train)])
    assert tails.size > 0 and np.all(tails == 0)
    frac = np.mean(np.concatenate([z == -1 for z in d.z_test]))
    assert 0.1 < frac < 0.9
    fixed = make_synthetic_mixture(**SMALL, rng=0)
    assert all((z >= 0).all() for z in fixed.z_train)
    assert d.meta["replicate_official_bug"] and not fixed.meta["replicate_official_bug"]


def test_one_hot_weights():
    d = make_synthetic_mixture(**SMALL, one_hot_weights=True, rng=0)
    assert set(np.unique(d.pi)) <= {0.0, 1.0} and np.all(d.pi.sum(1) == 1)
    for pi, z in zip(d.pi, d.z_train):
        assert np.all(z == pi.argmax())


def test_synthetic_is_seed_deterministic():
    a, b = make_synthetic_mixture(**SMALL, rng=5), make_synthetic_mixture(**SMALL, rng=5)
    assert all(np.array_equal(x, y) for x, y in zip(a.train.xs, b.train.xs))
    c = make_synthetic_mixture(**SMALL, rng=6)
    assert not np.array_equal(a.pi, c.pi)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_components=0), ValueError, "n_components"),
    (dict(alpha=0.0), ValueError, "alpha"),
    (dict(label_mode="sigmoid"), ValueError, "label_mode"),
    (dict(noise_level=-1.0), ValueError, "noise_level"),
    (dict(dim=2.5), TypeError, "dim"),
])
def test_synthetic_bad_inputs(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_synthetic_mixture(**{**SMALL, **kwargs})


def test_label_modes_table():
    for mode in LABEL_MODES:
        assert make_synthetic_mixture(n_clients=2, dim=3, n_max=60, n_test=5, label_mode=mode, rng=0).n_clients == 2


def _original_labels():
    x, y = load_digits_arrays()
    return {row.tobytes(): label for row, label in zip(x, y)}


def test_digits_permutation_mixture():
    d = make_digits_mixture(12, n_components=3, alpha=0.5, rng=0)
    perms = d.meta["permutations"]
    assert perms.shape == (3, 10) and np.array_equal(perms[0], np.arange(10))
    assert all(sorted(p) == list(range(10)) for p in perms)
    lookup = _original_labels()
    total = 0
    for xs, ys, zs in ((d.train.xs, d.train.ys, d.z_train), (d.test.xs, d.test.ys, d.z_test)):
        for x, y, z in zip(xs, ys, zs):
            orig = np.array([lookup[row.tobytes()] for row in x])
            assert np.array_equal(y, perms[z, orig])
            total += len(y)
    assert total == 1797  # every image used once
    assert np.all(d.test.sizes >= 1) and np.all(d.train.sizes >= 1)


def test_digits_label_groups_mixture():
    d = make_digits_mixture(10, n_components=3, mode="label_groups", rng=1)
    groups = d.meta["groups"]
    assert sorted(np.bincount(groups).tolist()) == [3, 3, 4]
    for y, z in zip(d.train.ys, d.z_train):
        assert np.array_equal(groups[y], z)
    # clients favour the groups with large weights
    counts = np.stack([np.bincount(z, minlength=3) for z in d.z_train])
    assert np.mean(counts.argmax(1) == d.pi.argmax(1)) >= 0.7


def test_digits_bad_inputs():
    with pytest.raises(ValueError, match="mode"):
        make_digits_mixture(5, mode="rotation")
    with pytest.raises(ValueError, match="n_components"):
        make_digits_mixture(5, n_components=11, mode="label_groups")
    with pytest.raises(ValueError, match="min_size"):
        make_digits_mixture(100, min_size=50)
    with pytest.raises(ValueError, match="max_tries"):
        make_digits_mixture(60, alpha=0.05, min_size=29, max_tries=2, rng=0)
    assert set(DIGITS_MIXTURE_MODES) == {"permutation", "label_groups"}


def test_subset_split_and_federated():
    d = make_synthetic_mixture(**SMALL, rng=0)
    seen, unseen = d.split_clients(0.75)
    assert seen.n_clients == 9 and unseen.n_clients == 3
    assert np.array_equal(unseen.pi, d.pi[9:]) and np.array_equal(unseen.train.xs[0], d.train.xs[9])
    fed = d.federated()
    assert isinstance(fed, FederatedDataset) and fed.n_clients == 12 and fed.n_classes == 2
    assert fed.train.n.tolist() == d.train.sizes.tolist()
    with pytest.raises(ValueError, match="clients"):
        d.subset([12])
    with pytest.raises(ValueError, match="train_fraction"):
        d.split_clients(0.01)
