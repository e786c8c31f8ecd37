"""Experiment functions of the primer (digits runs) and the per-seed values its claims judge."""
import pytest

from fedlab.primer.data import digits_federation
from fedlab.primer.experiments import (rounds_to_reach, seed_curves, seed_rounds_to_reach, seed_values,
                                       train_on_digits)


def test_digits_federation_uses_every_sample_once():
    fed = digits_federation(8, 0.5, seed=0)
    assert fed.n_clients == 8 and int(fed.train.n.sum() + fed.test.n.sum()) == 1797
    assert fed.n_classes == 10


def test_train_on_digits_learns_and_is_deterministic():
    kwargs = dict(method="fedavg", alpha=1.0, local_steps=2, participation=1.0, rounds=5, n_clients=5, seed=1)
    a, b = train_on_digits(**kwargs), train_on_digits(**kwargs)
    assert a == b
    assert a["final_accuracy"] > a["test_accuracy"][0] + 0.2
    assert len(a["rounds"]) == len(a["test_accuracy"]) == 6


def test_rounds_to_reach():
    assert rounds_to_reach([0, 5, 10], [0.1, 0.8, 0.9], 0.8) == 5
    assert rounds_to_reach([0, 5], [0.1, 0.2], 0.8) == float("inf")


def test_unknown_method():
    with pytest.raises(ValueError, match="method"):
        train_on_digits(method="nope", alpha=1.0, local_steps=1, participation=1.0, rounds=1, n_clients=2)


def _records():
    """Two seeds (listed out of order) of two configs, as ``sweep`` returns them."""
    out = []
    for seed in (1, 0):
        for method in ("fedavg", "local"):
            acc = [0.1, 0.5 + 0.1 * seed, 0.9 if method == "fedavg" else 0.6]
            out.append({"config": {"method": method, "alpha": 0.1, "local_steps": 5}, "seed": seed,
                        "result": {"rounds": [0, 5, 10], "test_accuracy": acc, "final_accuracy": acc[-1],
                                   "bottom_decile": acc[-1] - 0.2}})
    return out


def test_seed_values_are_ordered_by_seed_and_paired():
    values = seed_values(_records(), "final_accuracy")
    assert list(values) == [("fedavg", 0.1, 5), ("local", 0.1, 5)]
    assert values[("fedavg", 0.1, 5)] == [0.9, 0.9] and values[("local", 0.1, 5)] == [0.6, 0.6]
    assert seed_values(_records(), "bottom_decile")[("local", 0.1, 5)] == pytest.approx([0.4, 0.4])
    rounds, curves = seed_curves(_records())
    assert rounds == [0, 5, 10] and curves[("fedavg", 0.1, 5)] == [[0.1, 0.5, 0.9], [0.1, 0.6, 0.9]]
    assert seed_rounds_to_reach(_records(), 0.55) == {("fedavg", 0.1, 5): [10.0, 5.0],
                                                     ("local", 0.1, 5): [10.0, 5.0]}
    assert seed_rounds_to_reach(_records(), 0.95)[("local", 0.1, 5)] == [float("inf")] * 2


def test_seed_values_reject_records_that_are_not_sweep_records():
    with pytest.raises(ValueError, match="records"):
        seed_values([], "final_accuracy")
    with pytest.raises(ValueError, match=r"records\[0\].*config\['alpha'\]"):
        seed_values([{"config": {"method": "fedavg", "local_steps": 1}, "seed": 0, "result": {}}], "final_accuracy")
    with pytest.raises(ValueError, match="metric"):
        seed_values(_records(), "test_accuracy")
