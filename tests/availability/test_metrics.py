"""Per-client metrics on the real samples only (fedlab.availability.algorithms._metrics): the engine's values, to the bit."""
import numpy as np
import pytest
import torch

from fedlab.algorithms.common import evaluate_global
from fedlab.availability.algorithms._metrics import CHUNK_CLIENTS, global_metrics, sample_metrics
from fedlab.availability.data import leaf_federation
from fedlab.engine import ClientData, FederatedDataset, broadcast, metrics_from_outputs, model_outputs
from fedlab.models import MLP, LinearModel
from helpers import make_clients


def _params(model, seed=0, scale=3.0):
    return {k: scale * v for k, v in model.init(torch.Generator().manual_seed(seed)).items()}


def _engine(model, params, data, clients):
    sub = data.select(clients)
    return metrics_from_outputs(model, model_outputs(model, broadcast(params, len(clients)), sub), sub)


@pytest.mark.parametrize("seed", [0, 1])
def test_leaf_metrics_equal_the_engines_bitwise(seed):
    data = leaf_federation(60, seed)
    model = LinearModel(data.train.feature_shape[0], 10)
    params = _params(model, seed)
    clients = np.sort(np.random.default_rng(seed).choice(60, 25, replace=False))
    ours, engine = sample_metrics(model, params, data.train, clients), _engine(model, params, data.train, clients)
    assert ours.keys() == engine.keys() == {"loss", "accuracy"}
    for key in ours:
        np.testing.assert_array_equal(ours[key], engine[key])
    full, ref = global_metrics(model, params, data.train, data.test), evaluate_global(model, params, data.train, data.test)
    assert list(full) == list(ref)
    for key in ref:
        np.testing.assert_array_equal(full[key], ref[key])


def test_several_chunks_repeated_clients_and_empty_clients():
    n_max = 3
    sizes = [n_max] * (CHUNK_CLIENTS + 6) + [0, 1]      # more real samples than one chunk, and an empty client
    xs, ys = make_clients(n_clients=len(sizes), sizes=[max(s, 1) for s in sizes], dim=4, n_classes=3, seed=2)
    xs[-2], ys[-2] = xs[-2][:0], ys[-2][:0]
    data = ClientData.from_arrays(xs, ys, allow_empty=True)
    model = LinearModel(4, 3)
    params = _params(model)
    clients = np.array([len(sizes) - 2, 5, 5, *range(len(sizes))])
    ours, engine = sample_metrics(model, params, data, clients), _engine(model, params, data, clients)
    for key in engine:
        np.testing.assert_array_equal(ours[key], engine[key])
    assert np.isnan(ours["loss"][0]) and np.isnan(ours["accuracy"][0])
    loss_only = sample_metrics(model, params, data, clients, accuracy=False)
    assert set(loss_only) == {"loss"}
    np.testing.assert_array_equal(loss_only["loss"], ours["loss"])


def test_other_models_take_the_engines_padded_path():
    xs, ys = make_clients(n_clients=6, dim=4, n_classes=3, seed=4)
    data = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.3, n_classes=3, seed=0)
    model = MLP(4, [5], 3)
    params = _params(model)
    clients = np.array([4, 1, 1])
    ours, engine = sample_metrics(model, params, data.train, clients), _engine(model, params, data.train, clients)
    for key in engine:
        np.testing.assert_array_equal(ours[key], engine[key])
    assert set(sample_metrics(model, params, data.train, clients, accuracy=False)) == {"loss"}
    full, ref = global_metrics(model, params, data.train, data.test), evaluate_global(model, params, data.train, data.test)
    for key in ref:
        np.testing.assert_array_equal(full[key], ref[key])


def test_regression_has_no_accuracy():
    xs, ys = make_clients(n_clients=5, dim=3, seed=3, regression=True)
    data = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.3, seed=0)
    model = LinearModel(3, 1, loss="mse")
    params = _params(model)
    out = global_metrics(model, params, data.train, data.test)
    ref = evaluate_global(model, params, data.train, data.test)
    assert list(out) == list(ref) == ["train_loss", "test_loss"]
    for key in ref:
        np.testing.assert_allclose(out[key], ref[key], rtol=1e-6)


def test_bad_inputs():
    xs, ys = make_clients(n_clients=4, dim=3, seed=0)
    data = ClientData.from_arrays(xs, ys)
    model = LinearModel(3, 3)
    params = _params(model)
    for clients in ([], [4], [-1], [[0, 1]], [0.5]):
        with pytest.raises(ValueError, match="clients must be"):
            sample_metrics(model, params, data, np.array(clients))
    with pytest.raises(TypeError, match="data"):
        sample_metrics(model, params, "data")
    with pytest.raises(ValueError, match="features"):
        sample_metrics(LinearModel(5, 3), _params(LinearModel(5, 3)), data)
    with pytest.raises(TypeError, match="test"):
        global_metrics(model, params, data, None)
