"""The round loop: orders, streams and data without client sizes."""
from dataclasses import dataclass, replace

import numpy as np
import pytest

from fedlab.engine import ORDERS, DivergenceError, run


@dataclass(frozen=True)
class Counter:
    value: np.ndarray
    round: int = 0


class Accumulate:
    """A numpy algorithm: each round adds the round's data (an array, one entry per copy) to the state."""

    def init(self, data, seed):
        return Counter(np.zeros_like(data, dtype=float))

    def round(self, state, data, seed):
        return replace(state, value=state.value + data, round=state.round + 1), {"seen": float(np.sum(data))}

    def evaluate(self, state, data):
        return {"value": state.value.copy(), "loss": state.value - data}


def test_train_first_records_round_zero_then_every_round():
    state, h = run(Accumulate(), np.array([1.0, 2.0]), rounds=3)
    assert h.rounds == [0, 1, 2, 3]
    assert h.per_client("value").tolist() == [3.0, 6.0]
    assert h.final("value") == 4.5                       # no client sizes: every copy weighs 1
    assert [e["seen"] for e in h.log] == [3.0, 3.0, 3.0]


def test_evaluate_first_scores_the_played_state_on_each_new_round():
    stream = lambda t: np.array([float(t)])               # noqa: E731
    state, h = run(Accumulate(), stream, rounds=4, order="evaluate_first")
    assert h.rounds == [0, 1, 2, 3]
    # the state played at round t has seen rounds 0..t-1: 0, 0, 1, 3; the loss compares it with round t's data
    assert [v[0] for v in h.clients["value"]] == [0.0, 0.0, 1.0, 3.0]
    assert [v[0] for v in h.clients["loss"]] == [0.0, -1.0, -1.0, 0.0]
    assert state.value.tolist() == [6.0]


def test_stream_with_train_first_uses_each_rounds_data():
    _, h = run(Accumulate(), lambda t: np.array([10.0 ** t]), rounds=3)
    assert h.per_client("value").tolist() == [111.0]


def test_bad_order_and_divergence():
    with pytest.raises(ValueError, match="order"):
        run(Accumulate(), np.ones(2), rounds=1, order="sideways")
    with pytest.raises(ValueError, match="eval_every"):
        run(Accumulate(), np.ones(2), rounds=1, order="evaluate_first", eval_every=2)
    with pytest.raises(DivergenceError, match="loss"):
        run(Accumulate(), np.array([np.inf]), rounds=1)
    assert ORDERS == ("train_first", "evaluate_first")


def test_an_exploding_loss_is_divergence_even_when_finite():
    from fedlab.engine import LOSS_GROWTH_LIMIT

    class Explode(Accumulate):
        def evaluate(self, state, data):
            return {"train_loss": 1.0 + state.value * LOSS_GROWTH_LIMIT}

    with pytest.raises(DivergenceError, match=r"train_loss diverged at round 2 .*criterion"):
        run(Explode(), np.array([0.6]), rounds=3)   # round 1: 61 <= 100 x 1; round 2: 121 > 100
    _, h = run(Explode(), np.array([1e-3]), rounds=3)
    assert len(h.rounds) == 4


@pytest.mark.parametrize("method, lr", [("fedavg", 1e30), ("fedavg", 1e4), ("local", 1e4)])
def test_real_divergence_is_detected(method, lr):
    from fedlab.algorithms import FedAvg, Local
    from fedlab.data import make_leaf_synthetic
    from fedlab.engine import FederatedDataset, LocalSGD
    from fedlab.models import LinearModel

    clients = make_leaf_synthetic(1, 1, n_clients=6, n_samples=60, rng=0)
    data = FederatedDataset.from_client_arrays(clients.xs, clients.ys, test_fraction=0.25, n_classes=10, seed=0)
    alg = {"fedavg": FedAvg, "local": Local}[method](LinearModel(60, 10), LocalSGD(lr=lr, local_steps=5))
    with pytest.raises(DivergenceError, match="diverged"):
        run(alg, data, rounds=10)
