"""The conditions of Theorems 3.5.3 and 3.5.4 (fedlab.fedem.bounds)."""
import math

import networkx as nx
import numpy as np
import pytest

from fedlab.fedem.bounds import dfedem_max_step, fedem_max_step, mixing_parameter
from fedlab.mixing import metropolis_weights


def test_fedem_max_step_is_lemma_e4s_condition():
    assert fedem_max_step(2.0, 0.0, 1) == pytest.approx(1 / (4 * math.sqrt(2)))  # no dissimilarity term
    assert fedem_max_step(1.0, 2.0, 5) == pytest.approx(1 / 8 / 5)  # the β term binds when β > 1/√2
    assert fedem_max_step(1.0, 1.0, 10) == pytest.approx(fedem_max_step(1.0, 1.0, 1) / 10)
    with pytest.raises(ValueError, match="L"):
        fedem_max_step(0.0, 1.0, 1)
    with pytest.raises(ValueError, match="local_steps"):
        fedem_max_step(1.0, 1.0, 0)


def test_mixing_parameter_is_the_contraction_of_one_gossip_step():
    """Assumption 15 with τ = 1: ‖ΞW − Ξ̄‖² ≤ (1 − p)‖Ξ − Ξ̄‖² for any Ξ (spec §11.2, item 13)."""
    graph = nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=0)
    W = metropolis_weights(graph)
    p = mixing_parameter(W)
    assert 0 < p < 1
    rng = np.random.default_rng(0)
    for _ in range(20):
        xi = rng.standard_normal((3, 12))
        bar = xi.mean(1, keepdims=True)
        assert np.sum((xi @ W - bar) ** 2) <= (1 - p) * np.sum((xi - bar) ** 2) + 1e-12
    assert mixing_parameter(np.full((4, 4), 0.25)) == pytest.approx(1.0)
    assert mixing_parameter(np.eye(4)) == 0.0  # no communication: no contraction


def test_mixing_parameter_rejects_a_matrix_that_is_not_doubly_stochastic():
    with pytest.raises(ValueError, match="W"):
        mixing_parameter([[0.9, 0.2], [0.1, 0.8]])
    with pytest.raises(ValueError, match="W"):
        mixing_parameter([[1.5, -0.5], [-0.5, 1.5]])


def test_dfedem_max_step_shrinks_with_slower_mixing():
    fast, slow = dfedem_max_step(1.0, 1.0, p=0.9), dfedem_max_step(1.0, 1.0, p=0.1)
    assert slow < fast and slow == pytest.approx(0.1 / 92)
    assert dfedem_max_step(1.0, 1.0, p=0.5, tau=2) == pytest.approx(dfedem_max_step(1.0, 1.0, p=0.25))
    assert dfedem_max_step(1.0, 0.0, p=1.0) == pytest.approx(1 / 92)
    with pytest.raises(ValueError, match="p"):
        dfedem_max_step(1.0, 1.0, p=0.0)
