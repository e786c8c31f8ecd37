"""EM building blocks of FedEM: E-step, weight update, mixture prediction (spec §11.1); the Gaussian-mixture EM
is tested in tests/test_gmm.py."""
import numpy as np
import pytest
import torch

from fedlab.algorithms import fedem as fedem_module
from fedlab.algorithms.fedem import (component_losses, e_step, fit_mixture_weights, init_components,
                                     mixture_log_likelihood, mixture_metrics, mixture_proba, update_pi)
from fedlab.engine import ClientData
from fedlab.models import LinearModel, MLP


def test_e_step_is_a_distribution_and_matches_the_direct_formula():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(4), size=5)
    losses = rng.uniform(0, 3, size=(5, 4, 7))
    q = e_step(np.log(pi), losses)
    assert isinstance(q, np.ndarray) and q.shape == (5, 4, 7)
    assert (q >= 0).all() and np.allclose(q.sum(1), 1, atol=1e-12)
    direct = pi[:, :, None] * np.exp(-losses)
    assert np.allclose(q, direct / direct.sum(1, keepdims=True), atol=1e-6)
    q_t = e_step(torch.as_tensor(np.log(pi)), torch.as_tensor(losses))
    assert isinstance(q_t, torch.Tensor) and np.allclose(q_t.numpy(), q)


def test_e_step_is_stable_for_huge_losses():
    q = e_step(np.log([0.5, 0.5]), np.array([[1e4, 2e4], [1e4 + 1, 3e4]]))  # (M=2, n=2)
    assert np.isfinite(q).all() and np.allclose(q.sum(0), 1)
    assert np.allclose(q[:, 0], [1 / (1 + np.exp(-1)), 1 - 1 / (1 + np.exp(-1))])
    assert np.allclose(q[:, 1], [1.0, 0.0])


def test_e_step_shape_errors():
    with pytest.raises(ValueError, match="log_pi"):
        e_step(np.zeros(3), np.zeros((2, 5)))
    with pytest.raises(ValueError, match="finite"):
        e_step(np.array([0.0, np.nan]), np.zeros((2, 5)))


def test_update_pi_is_the_mean_responsibility():
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(3), size=(2, 6)).transpose(0, 2, 1)  # (2, 3, 6)
    pi = update_pi(q)
    assert np.allclose(pi, q.mean(-1)) and np.allclose(pi.sum(-1), 1)
    mask = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=bool)
    pi_m = update_pi(q, mask)
    assert np.allclose(pi_m[0], q[0, :, :3].mean(-1)) and np.allclose(pi_m[1], q[1].mean(-1))


def test_update_pi_rejects_a_client_without_data():
    q = np.full((2, 3, 4), 1 / 3)
    with pytest.raises(ValueError, match="no data"):
        update_pi(q, np.array([[True] * 4, [False] * 4]))
    with pytest.raises(ValueError, match="mask"):
        update_pi(q, np.ones((2, 5), dtype=bool))


def test_mixture_proba_mixes_probabilities():
    probs = np.array([[[0.9, 0.1]], [[0.2, 0.8]]])  # (M=2, n=1, C=2)
    out = mixture_proba(np.array([0.25, 0.75]), probs)
    assert np.allclose(out, [[0.25 * 0.9 + 0.75 * 0.2, 0.25 * 0.1 + 0.75 * 0.8]])
    assert np.allclose(out.sum(-1), 1)
    with pytest.raises(ValueError, match="pi"):
        mixture_proba(np.ones(3) / 3, probs)


def test_mixture_log_likelihood_matches_direct_sum():
    rng = np.random.default_rng(2)
    pi = rng.dirichlet(np.ones(3), size=2)
    losses = rng.uniform(0, 2, size=(2, 3, 5))
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    ll = mixture_log_likelihood(torch.log(torch.as_tensor(pi)), torch.as_tensor(losses), mask).numpy()
    direct = np.log((pi[:, :, None] * np.exp(-losses)).sum(1))
    assert np.allclose(ll, [direct[0, :4].mean(), direct[1].mean()])


def test_init_components_are_distinct_and_start_with_fedavgs_model():
    from fedlab.algorithms.common import initial_params

    model = MLP(4, (5,), 3)
    comps = init_components(model, 3, seed=7)
    first = initial_params(model, 7)
    assert all(torch.equal(comps[k][0], first[k]) for k in first)
    assert not torch.equal(comps["w0"][0], comps["w0"][1])
    with pytest.raises(ValueError, match="n_components"):
        init_components(model, 0, seed=0)


def _gmm_clients(means=(-4.0, 0.0, 4.0), n_clients=10, n=500, seed=0):
    """1-D Gaussian mixture with unit variance, per-client weights ~ Dirichlet(1)."""
    rng = np.random.default_rng(seed)
    pis = rng.dirichlet(np.ones(len(means)), size=n_clients)
    xs = []
    for pi in pis:
        z = rng.choice(len(means), size=n, p=pi)
        xs.append((np.asarray(means)[z] + rng.standard_normal(n))[:, None])
    return xs, pis


def _gaussian_components(means):
    """Gaussian components as LinearModel(1, 1, mse) with zero inputs: loss = (y - mu)^2 / 2."""
    model = LinearModel(1, 1, loss="mse")
    m = len(means)
    return model, {"weight": torch.zeros(m, 1, 1), "bias": torch.tensor(means, dtype=torch.float32).view(m, 1)}


def _as_regression_clients(xs):
    return ClientData.from_arrays([np.zeros((len(x), 1), np.float32) for x in xs],
                                  [x[:, 0].astype(np.float32) for x in xs])


def test_new_client_weights_with_frozen_true_components():
    xs, pis = _gmm_clients(n_clients=4, n=200, seed=4)
    model, comps = _gaussian_components([-4.0, 0.0, 4.0])
    data = _as_regression_clients(xs)
    pi1, ll1 = fit_mixture_weights(model, comps, data, n_iter=1)
    pi50, ll50 = fit_mixture_weights(model, comps, data, n_iter=50, tol=0.0)
    assert ll1.shape == (2, 4) and ll50.shape == (51, 4)
    assert np.abs(pi1 - pis).max() < 0.1 and np.abs(pi50 - pis).max() < 0.1
    assert np.all(np.diff(ll50, axis=0) >= -1e-9)
    assert np.allclose(pi50.sum(1), 1)
    with pytest.raises(ValueError, match="pi_init"):
        fit_mixture_weights(model, comps, data, pi_init=np.ones((4, 3)))


def test_fit_mixture_weights_rejects_clients_without_data():
    model, comps = _gaussian_components([0.0, 1.0])
    empty = ClientData(torch.zeros(2, 3, 1), torch.zeros(2, 3), torch.tensor([3, 0]))
    with pytest.raises(ValueError, match="no training data"):
        fit_mixture_weights(model, comps, empty)


def test_component_losses_follow_each_client_packed_or_in_chunks(monkeypatch):
    """More clients than a chunk and more samples than a forward pass, of very different sizes: every valid loss is
    its client's own, for all clients, a subset in any order (a client twice), and per-client components (D-FedEM's,
    in chunks of similar size)."""
    monkeypatch.setattr(fedem_module, "_SAMPLES", 97)
    model = LinearModel(3, 2)
    comps = init_components(model, 2, seed=1)
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 40, size=70)
    data = ClientData.from_arrays([rng.normal(size=(n, 3)) for n in sizes], [rng.integers(0, 2, n) for n in sizes])
    losses = component_losses(model, comps, data)
    for t in (0, 17, 69):
        x, y, _ = data.client(t)
        for m in range(2):
            direct = model.per_sample_loss(model.forward({k: v[m] for k, v in comps.items()}, x), y).double()
            assert torch.allclose(losses[t, m, :sizes[t]], direct, atol=1e-6)
    chosen = [69, 3, 17, 3]
    subset = component_losses(model, comps, data, clients=chosen)
    assert subset.shape == (4, 2, data.x.shape[1])
    mask = data.mask[chosen].unsqueeze(1).expand_as(subset)
    assert torch.allclose(subset[mask], losses[chosen][mask], atol=1e-6)
    per_client = [{k: v[m].expand(70, *v.shape[1:]).clone() for k, v in comps.items()} for m in range(2)]
    full_mask = data.mask.unsqueeze(1).expand_as(losses)
    assert torch.allclose(component_losses(model, per_client, data)[full_mask], losses[full_mask])
    for bad in ([], [70], [0.5], [[0, 1]]):
        with pytest.raises(ValueError, match="clients"):
            component_losses(model, comps, data, clients=bad)


def test_component_losses_and_mixture_metrics():
    model = LinearModel(3, 2)
    comps = init_components(model, 2, seed=0)
    rng = np.random.default_rng(0)
    data = ClientData.from_arrays([rng.normal(size=(4, 3)), rng.normal(size=(6, 3))],
                                  [rng.integers(0, 2, 4), rng.integers(0, 2, 6)])
    losses = component_losses(model, comps, data)
    assert losses.shape == (2, 2, 6) and losses.dtype == torch.float64
    x, y, _ = data.client(1)
    direct = model.per_sample_loss(model.forward({k: v[1] for k, v in comps.items()}, x), y)
    assert torch.allclose(losses[1, 1], direct.double(), atol=1e-6)
    # with pi one-hot on component 0, the mixture predictor is component 0
    m = mixture_metrics(model, comps, np.array([[1.0, 0.0], [1.0, 0.0]]), data, "test_")
    probs = torch.softmax(model.forward({k: v[0] for k, v in comps.items()}, x), -1)
    acc = float((probs.argmax(-1) == y).float().mean())
    assert np.isclose(m["test_accuracy"][1], acc) and set(m) == {"test_loss", "test_accuracy"}
    with pytest.raises(ValueError, match="pi"):
        mixture_metrics(model, comps, np.ones((3, 2)) / 2, data)
    # regression: the mixture mean
    reg, rcomps = _gaussian_components([0.0, 2.0])
    rdata = _as_regression_clients([np.array([[1.0], [1.0]])])
    out = mixture_metrics(reg, rcomps, np.array([[0.5, 0.5]]), rdata)
    assert np.isclose(out["loss"][0], 0.0)
