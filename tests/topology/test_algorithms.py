"""AveragedDPASGD: DPASGD (2.2) trained as DecentralizedSGD, scored at the silos' average model."""
import numpy as np
import pytest

from fedlab.algorithms import DecentralizedSGD
from fedlab.engine import LocalSGD, broadcast, evaluate, run, weighted_average
from fedlab.mixing import exact_average, local_degree_weights
from fedlab.models import LinearModel
from fedlab.topology import AveragedDPASGD, overlay_from_edges, topology_federation


@pytest.fixture(scope="module")
def data():
    return topology_federation(5, seed=0)


def test_training_is_decentralized_sgd_and_metrics_are_the_average_models(data):
    ring = local_degree_weights(overlay_from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)], directed=True))
    model, solver = LinearModel(60, 10), LocalSGD(0.05, batch_size=8)
    ours, plain = AveragedDPASGD(model, solver, ring), DecentralizedSGD(model, solver, ring)
    state, _ = run(ours, data, rounds=3, seed=1, progress=False)
    reference, _ = run(plain, data, rounds=3, seed=1, progress=False)
    for key in state.params:
        assert np.allclose(state.params[key].numpy(), reference.params[key].numpy())
    mean = broadcast(weighted_average(state.params, np.ones(5)), 5)
    expected = evaluate(model, mean, data.train, data.test)
    got = ours.evaluate(state, data)
    assert set(got) == set(expected)
    for name in got:
        assert np.allclose(got[name], expected[name])
    assert not np.allclose(got["train_loss"], plain.evaluate(state, data)["train_loss"])


def test_with_exact_averaging_it_scores_like_decentralized_sgd(data):
    model, solver = LinearModel(60, 10), LocalSGD(0.05, batch_size=8)
    ours = AveragedDPASGD(model, solver, exact_average(5))
    state, _ = run(ours, data, rounds=2, seed=0, progress=False)
    plain = DecentralizedSGD(model, solver, exact_average(5)).evaluate(state, data)
    for name, values in ours.evaluate(state, data).items():
        assert np.allclose(values, plain[name], atol=1e-6)


def test_registered_in_the_method_registry():
    from fedlab.algorithms import METHODS
    from fedlab.topology import PRESETS

    assert METHODS["topology:dpasgd"].cls is AveragedDPASGD and set(PRESETS) == {"dpasgd"}
    ring = local_degree_weights(overlay_from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=True))
    algorithm = PRESETS["dpasgd"](LinearModel(60, 10), LocalSGD(0.1), mixing_matrix=ring)
    assert isinstance(algorithm, AveragedDPASGD)
