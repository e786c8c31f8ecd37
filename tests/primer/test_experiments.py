import pytest

from fedlab.primer.experiments import digits_federation, rounds_to_reach, train_on_digits


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
