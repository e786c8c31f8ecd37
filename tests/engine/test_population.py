import numpy as np
import pytest

import torch

from fedlab.engine import ClientData, FederatedDataset, check_model_data
from fedlab.models import LinearModel

from helpers import make_clients


def test_from_arrays_pads_unequal_clients():
    xs, ys = make_clients(sizes=[3, 7, 1])
    data = ClientData.from_arrays(xs, ys)
    assert data.x.shape == (3, 7, 5) and data.n.tolist() == [3, 7, 1]
    assert data.mask.sum(1).tolist() == [3, 7, 1]
    x, y, w = data.client(1)
    assert np.allclose(x.numpy(), xs[1]) and np.array_equal(y.numpy(), ys[1]) and w is None
    assert data.feature_shape == (5,)


def test_pooled_select_and_histograms():
    xs, ys = make_clients(sizes=[4, 6, 5])
    data = ClientData.from_arrays(xs, ys)
    pooled = data.pooled()
    assert pooled.n_clients == 1 and int(pooled.n[0]) == 15
    assert np.allclose(pooled.x[0, :4].numpy(), xs[0])
    sub = data.select([2, 0])
    assert sub.n.tolist() == [5, 4]
    hist = data.label_histograms(3)
    assert hist.sum(1).tolist() == [4, 6, 5]
    assert np.array_equal(hist[1], np.bincount(ys[1], minlength=3))


def test_valid_samples_are_the_clients_end_to_end():
    xs, ys = make_clients(sizes=[3, 7, 1])
    data = ClientData.from_arrays(xs, ys)
    x, y = data.valid_samples()
    assert np.allclose(x.numpy(), np.concatenate(xs)) and np.array_equal(y.numpy(), np.concatenate(ys))
    assert data.valid_samples([0, 1, 2])[0] is x                 # all clients: packed once
    x, y = data.valid_samples(np.array([2, 0, 2]))
    assert np.allclose(x.numpy(), np.concatenate([xs[2], xs[0], xs[2]]))
    assert np.array_equal(y.numpy(), np.concatenate([ys[2], ys[0], ys[2]]))
    with pytest.raises(ValueError, match="clients"):
        data.valid_samples([3])


def test_weights_are_padded_and_checked():
    xs, ys = make_clients(sizes=[2, 3])
    data = ClientData.from_arrays(xs, ys, [np.ones(2), np.full(3, 0.5)])
    assert data.weight.shape == (2, 3) and float(data.weight[0, 2]) == 0.0
    with pytest.raises(ValueError, match=r"weights\[1\]"):
        ClientData.from_arrays(xs, ys, [np.ones(2), -np.ones(3)])
    with pytest.raises(ValueError, match="one entry per client"):
        ClientData.from_arrays(xs, ys, [np.ones(2)])


@pytest.mark.parametrize("xs, ys, match", [
    ([np.zeros((2, 3)), np.zeros((2, 4))], [np.zeros(2, int), np.zeros(2, int)], "feature shape"),
    ([np.zeros((2, 3))], [np.zeros(3, int)], r"ys\[0\]"),
    ([np.zeros((0, 3))], [np.zeros(0, int)], "no samples"),
    ([], [], "non-empty"),
])
def test_bad_client_arrays(xs, ys, match):
    with pytest.raises(ValueError, match=match):
        ClientData.from_arrays(xs, ys)


def test_federated_split_keeps_every_sample_once():
    xs, ys = make_clients(sizes=[10, 4, 1])
    fed = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.3, seed=1)
    assert fed.n_classes == 3
    assert (fed.train.n + fed.test.n).tolist() == [10, 4, 1]
    assert bool((fed.train.n >= 1).all())
    for k in range(3):
        both = np.concatenate([fed.train.client(k)[0].numpy(), fed.test.client(k)[0].numpy()])
        assert sorted(map(tuple, both.round(5))) == sorted(map(tuple, xs[k].round(5)))
    with pytest.raises(ValueError, match="test_fraction"):
        FederatedDataset.from_client_arrays(xs, ys, test_fraction=1.0)


def test_train_and_test_must_match():
    xs, ys = make_clients(sizes=[3, 3])
    with pytest.raises(ValueError, match="same clients"):
        FederatedDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(xs[:1], ys[:1]))


def test_client_index_checked():
    xs, ys = make_clients(sizes=[3, 3])
    with pytest.raises(ValueError, match="k must"):
        ClientData.from_arrays(xs, ys).client(2)


def test_label_max_and_check_model_data():
    xs, ys = make_clients(sizes=[4, 6])
    data = ClientData.from_arrays(xs, ys)
    assert data.label_max == max(int(y.max()) for y in ys)
    assert ClientData.from_arrays(xs, [y.astype(np.float32) for y in ys]).label_max is None
    check_model_data(LinearModel(5, 3), data)
    with pytest.raises(ValueError, match=r"train has samples of shape \(5,\) .* takes 4 input"):
        check_model_data(LinearModel(4, 3), data, "train")
    with pytest.raises(ValueError, match=r"data has the label 2 but the model has 2 outputs"):
        check_model_data(LinearModel(5, 2), data)
    with pytest.raises(TypeError, match="data must be a ClientData"):
        check_model_data(LinearModel(5, 3), xs)
    with pytest.raises(TypeError, match=r"data.y must hold integer class labels"):
        check_model_data(LinearModel(5, 3), ClientData.from_arrays(xs, [y.astype(np.float32) for y in ys]))


def test_derived_data_keep_their_checks_and_new_weights_are_checked():
    xs, ys = make_clients(sizes=[4, 6, 5])
    data = ClientData.from_arrays(xs, ys)
    weighted = data.with_weight(torch.ones(3, 6))
    assert weighted.weight.shape == (3, 6) and weighted.select([1]).weight.shape == (1, 6)
    assert data.pooled().mask.sum() == 15 and data.select([2, 0]).mask.sum(1).tolist() == [5, 4]
    for weight, match in [(torch.full((3, 6), -1.0), "non-negative"), (torch.ones(3, 5), "shape"),
                          (torch.full((3, 6), float("nan")), "finite")]:
        with pytest.raises(ValueError, match=f"weight .*{match}|{match}"):
            data.with_weight(weight)
    for bad in ([3], [], [0.5], [[0, 1]], "0", [True]):
        with pytest.raises(ValueError, match="clients must be a non-empty 1-D list of client indices"):
            data.select(bad)
    assert data.check_clients(np.array([2, 0])).tolist() == [2, 0]
