"""Paper mode of the SFedPO chapter on small Fashion-MNIST IDX files."""
import dataclasses

import numpy as np
import pytest

from real_formats import write_mnist_files
from fedlab import paper_mode as paper
from fedlab.claims import VERDICTS
from fedlab.models import LinearModel
from fedlab.sfedpo import real_data as rd
from fedlab.sfedpo.claims import paper_claims


@pytest.fixture
def fashion(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    monkeypatch.setitem(paper.MODELS, "femnist_cnn", lambda c: LinearModel(28 * 28, c))  # fast stand-in model
    folder = tmp_path / "cache" / "fashion_mnist"
    labels = np.repeat(np.arange(10), 6)
    write_mnist_files(folder, labels, labels)
    return folder


def tiny(name="fashion_mnist"):
    return dataclasses.replace(rd.SETTINGS[name], clients=4, rounds=2, local_steps=2, batch_size=4, seeds=1)


def test_images_follow_the_states(fashion):
    data = rd.image_temporal_shift(tiny(), "partial", seed=0, capacity=8, n_states=12, test_per_client=5,
                                   test_per_state=5)
    assert data.train.feature_shape == (1, 28, 28) and data.n_states == 12
    assert ((data.pi > 0).sum(1) <= 10).all()
    fresh = data.fresh(0, 1, np.full(4, 3, dtype=np.int64))
    assert all(x.shape == (3, 1, 28, 28) and m == data.step_states(0)[n, 0] for n, (x, y, m) in enumerate(fresh))


def test_run_paper_feeds_the_claims(fashion, tmp_path):
    results = rd.run_paper(seeds=1, datasets=("fashion_mnist",), settings={"fashion_mnist": tiny()},
                           store=tmp_path / "store")
    assert set(results["fashion_mnist"]) == set(rd.SCENARIOS)
    claims = paper_claims(results)
    measured = [c for c in claims if "Fashion" in c.source]
    assert measured and all(c.measured is not None and c.verdict in VERDICTS[:4] for c in measured)
    assert all(c.n_seeds == 1 and c.scale == "paper" and c.kind == "experiment" for c in measured)
    assert all(c.verdict == "not run" for c in claims if "CIFAR" in c.source)


def test_expected_seconds_are_positive(monkeypatch):
    for name, (shape, classes, _) in list(paper.DATA_SHAPES.items()):
        monkeypatch.setitem(paper.DATA_SHAPES, name, (shape, classes, 12))
    monkeypatch.setitem(paper.MODELS, "cifar_cnn", lambda c: LinearModel(3 * 32 * 32, c))
    seconds = rd.expected_seconds(n_clients=2, settings={n: tiny(n) for n in rd.DATASETS})
    assert set(seconds) == set(rd.DATASETS) and all(v > 0 for v in seconds.values())


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="datasets"):
        rd.run_paper(datasets=("mnist",))
    with pytest.raises(ValueError, match="scenario"):
        rd.sfedpo_paper_run(setting=dataclasses.asdict(tiny()), scenario="some")
