"""The kNN-Per chapter's data (fedlab.knnper.data): digits split over clients, train / validation / test."""
import numpy as np
import pytest
import torch

from fedlab.knnper.data import (N_DIGITS, SplitFederation, concat_clients, digits_split, old_and_new_clients,
                                shifted_splits, shrink_clients)


def test_digits_split_fractions_and_determinism():
    s = digits_split(10, 0.3, seed=1)
    total = s.train.n + s.val.n + s.test.n
    assert int(total.sum()) == 1797 and int(total.min()) >= 10
    assert np.all(np.abs(s.test.n.numpy() - 0.2 * total.numpy()) <= 1)
    assert np.all(s.train.n.numpy() >= 1)
    s2 = digits_split(10, 0.3, seed=1)
    assert torch.equal(s.train.x, s2.train.x) and torch.equal(s.test.y, s2.test.y)
    assert not torch.equal(digits_split(10, 0.3, seed=2).train.n, s.train.n)
    pool = digits_split(5, 1.0, seed=0, val_fraction=0.0, test_fraction=0.3, min_size=20, pool=np.arange(500))
    assert int((pool.train.n + pool.test.n).sum()) == 500 and int(pool.val.n.sum()) == 0


def test_digits_split_bad_inputs():
    with pytest.raises(ValueError, match="min_size"):
        digits_split(5, 0.3, min_size=2)
    with pytest.raises(ValueError, match="val_fraction"):
        digits_split(5, 0.3, val_fraction=0.7)


def test_concat_clients_and_split_federation():
    s = digits_split(6, 0.5, seed=0)
    tv = concat_clients(s.train, s.val)
    assert tv.n.tolist() == (s.train.n + s.val.n).tolist()
    assert torch.equal(tv.client(2)[1], torch.cat([s.train.client(2)[1], s.val.client(2)[1]]))
    assert s.trainval.n.tolist() == tv.n.tolist()
    assert s.federated(with_validation=False).train.n.tolist() == s.train.n.tolist()
    assert s.federated().train.n.tolist() == tv.n.tolist()
    sub = s.select([1, 3])
    assert sub.n_clients == 2 and torch.equal(sub.test.n, s.test.n[[1, 3]])
    with pytest.raises(ValueError, match="same number"):
        concat_clients(s.train, s.val.select([0]))
    with pytest.raises(ValueError, match="same clients"):
        SplitFederation(s.train, s.val.select([0]), s.test, 10)



def test_shrink_clients_keeps_a_fraction_and_the_test_sets():
    split = digits_split(6, 0.3, 0)
    assert shrink_clients(split, 1.0) is split
    half = shrink_clients(split, 0.5, seed=1)
    n, kept = split.train.n.numpy(), half.train.n.numpy()
    assert np.all(kept == np.maximum(1, np.floor(0.5 * n + 1e-9)))
    assert np.array_equal(half.test.n.numpy(), split.test.n.numpy())
    assert np.all(half.val.n.numpy() <= split.val.n.numpy())
    with pytest.raises(ValueError, match="capacity"):
        shrink_clients(split, 0.0)


def test_old_and_new_clients_partition_the_split():
    split = digits_split(8, 0.3, seed=0)
    old, new, ids = old_and_new_clients(split, 3, seed=1)
    assert old.n_clients == 5 and new.n_clients == 3
    assert sorted(ids["old_clients"].tolist() + ids["new_clients"].tolist()) == list(range(8))
    assert torch.equal(new.test.n, split.test.n[ids["new_clients"]])
    again = old_and_new_clients(split, 3, seed=1)[2]
    assert np.array_equal(again["new_clients"], ids["new_clients"])
    with pytest.raises(ValueError, match="n_new"):
        old_and_new_clients(split, 8)


def test_shifted_splits_use_disjoint_pools():
    a, b = shifted_splits(4, 0.3, seed=0)
    total = sum(int((s.train.n + s.val.n + s.test.n).sum()) for s in (a, b))
    assert total == N_DIGITS and int(a.val.n.sum()) == int(b.val.n.sum()) == 0
    assert a.n_clients == b.n_clients == 4
