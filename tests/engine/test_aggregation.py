import numpy as np
import pytest
import torch

from fedlab.engine import broadcast, check_mixing_matrix, gossip, weighted_average


def test_weighted_average_matches_numpy():
    rng = np.random.default_rng(0)
    p = {"w": torch.tensor(rng.normal(size=(4, 3, 2)), dtype=torch.float32)}
    w = np.array([1.0, 0.0, 2.0, 1.0])
    expected = np.tensordot(w / w.sum(), p["w"].numpy(), axes=1)
    assert np.allclose(weighted_average(p, w)["w"].numpy(), expected, atol=1e-6)


@pytest.mark.parametrize("w, match", [([1, 1], "shape"), ([-1, 1, 1], "non-negative"), ([0, 0, 0], "positive sum")])
def test_weighted_average_bad_weights(w, match):
    with pytest.raises(ValueError, match=match):
        weighted_average({"w": torch.zeros(3, 2)}, w)


def test_broadcast_and_gossip():
    p = broadcast({"w": torch.arange(3.0)}, 4)
    assert p["w"].shape == (4, 3)
    rng = np.random.default_rng(1)
    stacked = {"w": torch.tensor(rng.normal(size=(4, 3)), dtype=torch.float32)}
    mix = np.full((4, 4), 0.25)
    out = gossip(stacked, mix)["w"].numpy()
    assert np.allclose(out, stacked["w"].numpy().mean(0), atol=1e-6)
    ring = 0.5 * np.eye(4) + 0.25 * (np.roll(np.eye(4), 1, 1) + np.roll(np.eye(4), -1, 1))
    assert np.allclose(gossip(stacked, ring)["w"].numpy(), ring @ stacked["w"].numpy(), atol=1e-6)


def test_check_mixing_matrix():
    with pytest.raises(ValueError, match="rows must sum"):
        check_mixing_matrix(np.full((2, 2), 0.3), 2)
    with pytest.raises(ValueError, match="doubly stochastic"):
        check_mixing_matrix(np.array([[1.0, 0.0], [0.5, 0.5]]), 2)
    with pytest.raises(ValueError, match="shape"):
        check_mixing_matrix(np.eye(3), 2)
    with pytest.raises(ValueError, match="non-negative"):
        check_mixing_matrix(np.array([[1.5, -0.5], [-0.5, 1.5]]), 2)
    assert check_mixing_matrix(np.array([[1.0, 0.0], [0.5, 0.5]]), 2, doubly_stochastic=False).shape == (2, 2)
