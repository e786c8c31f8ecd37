"""The engine on a requested device: ``device=`` / ``FEDLAB_DEVICE``, data moves, every tensor follows the data.

This machine may have no accelerator, so placement is checked two ways: tensors moved to torch's ``meta`` device
stay there, and a whole run with the *default* device set to ``meta`` must give bit-identical results on CPU data
(any tensor the engine created without following the data's device would land on ``meta`` and fail the run).
"""
import numpy as np
import pytest
import torch

from fedlab.algorithms import METHODS
from fedlab.algorithms.common import initial_params
from fedlab.engine import FederatedDataset, LocalSGD, draw_batches, local_sgd, resolve_device, run
from fedlab.engine.device import ENV_VAR
from fedlab.models import MLP, LinearModel, SmallCNN

SOLVER = LocalSGD(lr=0.05, local_steps=2, batch_size=4, momentum=0.9, weight_decay=1e-3)
CORE = sorted(name for name in METHODS if METHODS[name].chapter == "core" and METHODS[name].takes_solver)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    sizes = (6, 9, 4, 7)
    xs = [rng.normal(size=(n, 5)).astype(np.float32) for n in sizes]
    ys = [rng.integers(0, 3, size=n) for n in sizes]
    return FederatedDataset.from_client_arrays(xs, ys, n_classes=3, seed=0)


def _options(name, k):
    mixing = np.full((k, k), 1 / k)
    return {"fedprox": {"mu": 0.1}, "dsgd": {"mixing_matrix": mixing}, "d-fedem": {"mixing_matrix": mixing}}.get(name, {})


def test_resolve_device_default_argument_and_environment(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve_device() == torch.device("cpu")
    monkeypatch.setenv(ENV_VAR, "meta")
    assert resolve_device() == torch.device("meta")
    assert resolve_device("cpu") == torch.device("cpu")          # the argument wins over the environment


@pytest.mark.parametrize("value, error, match", [("gpu0", ValueError, "device='gpu0' is not a torch device"),
                                                 (3, TypeError, "device must be a device name")])
def test_resolve_device_rejects_bad_names(value, error, match):
    with pytest.raises(error, match=match):
        resolve_device(value)


def test_bad_environment_variable_is_named(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "tpu")
    with pytest.raises(ValueError, match=f"{ENV_VAR}='tpu'"):
        resolve_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_missing_cuda_is_a_clear_error():
    with pytest.raises(ValueError, match="0 CUDA device"):
        resolve_device("cuda")


def test_data_moves_with_every_tensor(data):
    assert data.to("cpu") is data
    meta = data.to("meta")
    for part in (meta.train, meta.test):
        assert {t.device.type for t in (part.x, part.y, part.n, part.mask)} == {"meta"}
    assert meta.device == torch.device("meta") and meta.n_classes == 3
    weighted = data.train.with_weight(torch.ones_like(data.train.y, dtype=torch.float32)).to("meta")
    assert weighted.weight.device.type == "meta"


def test_initial_models_and_minibatches_are_drawn_once_for_every_device(data):
    model = SmallCNN()
    cpu, meta = initial_params(model, 3), initial_params(model, 3, "meta")
    assert {v.device.type for v in meta.values()} == {"meta"} and cpu.keys() == meta.keys()
    with torch.device("meta"):
        assert torch.equal(draw_batches(data.train.n, 2, 4, (0, 1, 2)), draw_batches(data.train.n, 2, 4, (0, 1, 2)))


@pytest.mark.parametrize("name", CORE)
def test_every_core_method_follows_the_data_device(name, data):
    """With the default device set to ``meta``, a run on CPU data is unchanged: nothing it created was left on the
    default device."""
    model = MLP(5, (8,), 3)
    algorithm = METHODS[name](model, SOLVER, **_options(name, data.n_clients))
    _, expected = run(algorithm, data, rounds=2, seed=1)
    with torch.device("meta"):
        _, got = run(algorithm, data, rounds=2, seed=1, device="cpu")
    for metric, values in expected.clients.items():
        np.testing.assert_array_equal(np.asarray(got.clients[metric]), np.asarray(values), err_msg=metric)


@pytest.mark.parametrize("backend", ["batched", "loop"])
@pytest.mark.parametrize("model", [LinearModel(5, 3), MLP(5, (8,), 3)], ids=["linear", "mlp"])
def test_local_sgd_backends_follow_the_data_device(backend, model, data):
    params = {k: v.unsqueeze(0).repeat(data.n_clients, *[1] * v.dim()) for k, v in initial_params(model, 0).items()}
    expected, _ = local_sgd(model, params, data.train, SOLVER, key=(0, 0, 0), backend=backend)
    with torch.device("meta"):
        got, _ = local_sgd(model, params, data.train, SOLVER, key=(0, 0, 0), backend=backend)
    for k in expected:
        assert torch.equal(got[k], expected[k]), k


def test_run_moves_the_data_to_the_requested_device(data, monkeypatch):
    seen = []

    class Probe(METHODS["fedavg"].cls):
        def init(self, d, seed):
            seen.append(d.device)
            return super().init(d, seed)

    run(Probe(LinearModel(5, 3), SOLVER), data, rounds=1, device="cpu")
    monkeypatch.setenv(ENV_VAR, "cpu")
    run(Probe(LinearModel(5, 3), SOLVER), data, rounds=1)
    assert seen == [torch.device("cpu")] * 2


def test_stream_data_moves_too(data):
    algorithm = METHODS["fedavg"](LinearModel(5, 3), SOLVER)
    _, expected = run(algorithm, lambda t: data, rounds=2)
    with torch.device("meta"):
        _, got = run(algorithm, lambda t: data, rounds=2, device="cpu")
    np.testing.assert_array_equal(np.asarray(got.clients["test_accuracy"]), np.asarray(expected.clients["test_accuracy"]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("model", [LinearModel(5, 3), SmallCNN(1, 8, 10)], ids=["linear", "cnn"])
def test_cuda_batched_loop_and_cpu_agree(model):
    rng = np.random.default_rng(1)
    shape = (5,) if isinstance(model, LinearModel) else (1, 8, 8)
    classes = 3 if isinstance(model, LinearModel) else 10
    xs = [rng.normal(size=(n, *shape)).astype(np.float32) for n in (6, 9, 4)]
    d = FederatedDataset.from_client_arrays(xs, [rng.integers(0, classes, size=len(x)) for x in xs], seed=0)
    results = {}
    for device in ("cpu", "cuda"):
        for backend in ("batched", "loop"):
            state, _ = run(METHODS["fedavg"](model, SOLVER, backend=backend), d, rounds=3, device=device)
            results[device, backend] = {k: v.cpu() for k, v in state.params.items()}
    reference = results["cpu", "loop"]
    for key, params in results.items():
        for k in params:
            torch.testing.assert_close(params[k], reference[k], atol=1e-5, rtol=1e-4, msg=f"{key} {k}")


def _fedem_epochs(data, device):
    """FedEM (3 components: rows that share their client's minibatches) with one-epoch momentum steps on clients of
    unequal sizes (steps that train only some rows), on ``device``: its parameters and π, on the CPU."""
    from fedlab.algorithms.fedem import FedEM

    solver = LocalSGD(lr=0.05, epochs=1, batch_size=3, momentum=0.9, weight_decay=1e-3)
    state, _ = run(FedEM(LinearModel(5, 3), solver, backend="batched"), data, rounds=3, device=device)
    return {**{k: v.cpu() for k, v in state.params.items()}, "pi": state.pi.cpu()}


def test_fedem_components_and_partial_epochs_follow_the_data(data):
    with torch.device("meta"):
        got = _fedem_epochs(data, "cpu")
    for k, v in _fedem_epochs(data, "cpu").items():
        assert torch.equal(got[k], v), k


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_fedem_components_and_partial_epochs_agree_with_cpu(data):
    cpu, cuda = _fedem_epochs(data, "cpu"), _fedem_epochs(data, "cuda")
    for k in cpu:
        torch.testing.assert_close(cuda[k], cpu[k], atol=1e-5, rtol=1e-4, msg=k)
