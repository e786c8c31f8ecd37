import json

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from fedlab.engine import History


def _history():
    h = History(np.array([10.0, 30.0, 60.0]), np.array([1.0, 0.0, 3.0]))
    h.record(0, {"train_loss": [1.0, 2.0, 3.0], "test_accuracy": [0.5, np.nan, 1.0]})
    h.record(5, {"train_loss": [0.5, 1.0, 1.5], "test_accuracy": [1.0, np.nan, 0.0]})
    h.log.append({"round": 1, "participants": [0, 2]})
    return h


def test_reductions():
    h = _history()
    rounds, loss = h.curve("train_loss")
    assert rounds.tolist() == [0, 5]
    assert np.allclose(loss, [(10 + 60 + 180) / 100, (5 + 30 + 90) / 100])
    assert h.final("test_accuracy") == pytest.approx(0.25)  # client 1 has no test data
    assert h.final("train_loss", "mean") == pytest.approx(1.0)
    assert h.final("train_loss", "bottom_decile") == pytest.approx(np.percentile([0.5, 1.0, 1.5], 10))
    assert h.summary()["test_accuracy_bottom_decile"] == pytest.approx(np.nanpercentile([1.0, np.nan, 0.0], 10))


def test_json_round_trip(tmp_path):
    h = _history()
    h.save(tmp_path / "h.json")
    json.loads((tmp_path / "h.json").read_text())
    back = History.load(tmp_path / "h.json")
    assert back.rounds == h.rounds and back.log == h.log
    assert np.allclose(back.curve("train_loss")[1], h.curve("train_loss")[1])
    assert list(tmp_path.iterdir()) == [tmp_path / "h.json"]


def test_plot_returns_data():
    fig, data = _history().plot(["train_loss", "test_accuracy"])
    assert set(data) == {"train_loss", "test_accuracy"}
    assert np.allclose(data["train_loss"][1], _history().curve("train_loss")[1])
    assert len(fig.axes) == 2


def test_bad_names():
    with pytest.raises(ValueError, match="name must be a recorded metric"):
        _history().curve("nope")
    with pytest.raises(ValueError, match="reduce"):
        _history().curve("train_loss", "median")


def test_history_without_client_sizes_weights_every_entry_once():
    h = History()
    h.record(0, {"error": [1.0, 3.0]})
    assert h.n_train.tolist() == [1.0, 1.0] and h.final("error") == 2.0
    assert History.from_dict(json.loads(json.dumps(h.to_dict()))).final("error") == 2.0
    assert History().to_dict()["n_train"] is None
