import numpy as np
import pytest

from fedlab.data import (PARTITIONERS, ClientArrays, Partition, label_skew, partition, partition_dirichlet,
                         partition_iid, partition_pachinko, partition_pathological, train_test_split_clients)

Y10 = np.repeat(np.arange(10), 60)                 # 600 samples, 10 balanced classes
Y_FINE = np.repeat(np.arange(20), 15)              # 300 samples, 20 fine labels
COARSE_OF_FINE = np.arange(20) // 4                # 5 coarse labels of 4 fine labels

SCHEMES = {
    "iid": (Y10, {"n_clients": 7}),
    "dirichlet": (Y10, {"n_clients": 12, "alpha": 0.3}),
    "pathological": (Y10, {"n_clients": 12, "classes_per_client": 2}),
    "pachinko": (Y_FINE, {"n_clients": 9, "alpha": 0.3, "beta": 10.0, "coarse_of_fine": COARSE_OF_FINE}),
}


def test_every_key_is_tested():
    assert set(SCHEMES) == set(PARTITIONERS)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_every_sample_exactly_once_and_histograms(scheme):
    y, kwargs = SCHEMES[scheme]
    part = partition(y, scheme, rng=0, **kwargs)
    assert isinstance(part, Partition) and len(part) == kwargs["n_clients"]
    assert part.covers(y.size)
    hist = part.label_histograms(y)
    assert hist.shape == (kwargs["n_clients"], y.max() + 1)
    assert np.array_equal(hist.sum(axis=1), part.sizes)
    assert np.array_equal(hist.sum(axis=0), np.bincount(y))


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_determinism_given_seed(scheme):
    y, kwargs = SCHEMES[scheme]
    a, b = partition(y, scheme, rng=3, **kwargs), partition(y, scheme, rng=3, **kwargs)
    c = partition(y, scheme, rng=4, **kwargs)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert any(not np.array_equal(p, q) for p, q in zip(a, c))


def test_a_missing_option_of_the_scheme_is_named():
    with pytest.raises(TypeError, match="scheme 'dirichlet' needs the option\\(s\\) alpha"):
        partition(Y10, "dirichlet", n_clients=4, rng=0)
    with pytest.raises(TypeError, match="n_clients, classes_per_client"):
        partition(Y10, "pathological")


def test_iid_sizes_differ_by_at_most_one():
    sizes = partition_iid(np.zeros(103, np.int64), 10, rng=0).sizes
    assert sizes.sum() == 103 and sizes.max() - sizes.min() <= 1


def test_dirichlet_small_alpha_more_skewed_and_min_size():
    skew = {a: label_skew(partition_dirichlet(Y10, 20, a, rng=0).label_histograms(Y10)) for a in (0.1, 1.0, 100.0)}
    assert skew[0.1] > skew[1.0] > skew[100.0]
    assert partition_dirichlet(Y10, 20, 0.5, min_size=15, rng=0).sizes.min() >= 15


def test_dirichlet_gives_up_after_max_tries():
    with pytest.raises(ValueError, match="max_tries=3"):
        partition_dirichlet(Y10, 30, 0.01, min_size=20, max_tries=3, rng=0)
    with pytest.raises(ValueError, match="min_size"):
        partition_dirichlet(Y10, 30, 1.0, min_size=21)


def test_dirichlet_label_groups():
    part = partition_dirichlet(Y10, 8, 0.2, n_label_groups=3, rng=0)
    assert part.covers(Y10.size)
    hist = part.label_histograms(Y10)
    # classes of one group are spread with the same proportions: clients with a class of a group
    # tend to hold the other classes of that group, so no client mixes all 10 classes evenly.
    assert label_skew(hist) > 0.3
    with pytest.raises(ValueError):
        partition_dirichlet(Y10, 8, 0.2, n_label_groups=11)


def test_pathological_classes_per_client():
    for k in (1, 2, 3):
        part = partition_pathological(Y10, 10, k, rng=1)
        n_classes_held = (part.label_histograms(Y10) > 0).sum(axis=1)
        assert n_classes_held.max() <= k and part.covers(Y10.size)
    assert ((partition_pathological(Y10, 10, 2, rng=0).label_histograms(Y10) > 0).sum(axis=1) == 2).all()


def test_pathological_errors():
    with pytest.raises(ValueError, match="number of classes"):
        partition_pathological(Y10, 4, 2)
    with pytest.raises(ValueError):
        partition_pathological(Y10, 10, 11)
    with pytest.raises(ValueError, match="empty"):
        partition_pathological(np.array([0, 0, 1, 1, 1, 1, 1]), 6, 1, rng=0)


def test_pachinko_sizes_and_skew():
    part = partition_pachinko(Y_FINE, 9, 0.3, 10.0, COARSE_OF_FINE, rng=0)
    assert part.sizes.max() - part.sizes.min() <= 1
    coarse = COARSE_OF_FINE[Y_FINE]
    skew = {a: label_skew(partition_pachinko(Y_FINE, 9, a, 10.0, COARSE_OF_FINE, rng=0).label_histograms(coarse))
            for a in (0.05, 100.0)}
    assert skew[0.05] > skew[100.0] + 0.2


def test_pachinko_errors():
    with pytest.raises(ValueError, match="coarse_of_fine"):
        partition_pachinko(Y_FINE, 5, 0.3, 10.0, COARSE_OF_FINE[:10])
    with pytest.raises(ValueError):
        partition_pachinko(Y_FINE, 5, 0.3, 0.0, COARSE_OF_FINE)


@pytest.mark.parametrize("call, error", [
    (lambda: partition_iid(Y10, 0), ValueError),
    (lambda: partition_iid(Y10, 601), ValueError),
    (lambda: partition_iid(Y10.astype(float), 2), TypeError),
    (lambda: partition_iid(Y10.reshape(2, -1), 2), ValueError),
    (lambda: partition_iid(np.array([0, -1]), 2), ValueError),
    (lambda: partition_iid(np.array([], np.int64), 1), ValueError),
    (lambda: partition_dirichlet(Y10, 5, 0.0), ValueError),
    (lambda: partition_dirichlet(Y10, 5, -1.0), ValueError),
    (lambda: partition_dirichlet(Y10, 5, "a"), TypeError),
    (lambda: partition_dirichlet(Y10, 5, 1.0, rng="x"), TypeError),
    (lambda: partition(Y10, "shards", n_clients=2), ValueError),
])
def test_bad_inputs(call, error):
    with pytest.raises(error):
        call()


def test_partition_take_and_container():
    x = np.arange(Y10.size * 2).reshape(-1, 2)
    part = partition_iid(Y10, 4, rng=0)
    data = part.take(x, Y10)
    assert isinstance(data, ClientArrays) and data.n_classes == 10
    assert np.array_equal(data.xs[1], x[part[1]]) and np.array_equal(data.sizes, part.sizes)
    with pytest.raises(ValueError, match="same length"):
        part.take(x[:-1], Y10)
    with pytest.raises(TypeError):
        Partition([np.array([0.5])])
    assert not Partition([np.array([0, 1]), np.array([1])]).covers(2)


def test_train_test_split_clients():
    xs = [np.arange(n * 3).reshape(n, 3) for n in (1, 2, 10)]
    ys = [np.arange(n) for n in (1, 2, 10)]
    xtr, xte, ytr, yte = train_test_split_clients(xs, ys, 0.3, rng=0)
    assert [len(a) for a in xtr] == [1, 1, 7] and [len(a) for a in xte] == [0, 1, 3]
    for k in range(3):
        assert np.array_equal(np.sort(np.concatenate([ytr[k], yte[k]])), ys[k])
        assert np.array_equal(xtr[k][:, 0] // 3, ytr[k])
    again = train_test_split_clients(xs, ys, 0.3, rng=0)
    assert np.array_equal(again[3][2], yte[2])
    assert all(len(a) >= 1 for a in train_test_split_clients(xs, ys, 0.99, rng=0)[0])


@pytest.mark.parametrize("args", [
    ([np.zeros((2, 1))], [np.zeros(2)], 1.0),
    ([np.zeros((2, 1))], [np.zeros(2)], -0.1),
    ([np.zeros((0, 1))], [np.zeros(0)], 0.2),
    ([np.zeros((2, 1))], [np.zeros(3)], 0.2),
    ([np.zeros((2, 1))], [], 0.2),
])
def test_train_test_split_bad_inputs(args):
    with pytest.raises(ValueError):
        train_test_split_clients(*args)


def test_label_skew_extremes():
    assert label_skew(np.full((4, 3), 5)) == 0.0
    assert label_skew(np.eye(4) * 10) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        label_skew(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        label_skew(-np.ones((2, 2)))
