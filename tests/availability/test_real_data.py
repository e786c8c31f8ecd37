"""Paper mode of the availability chapter on small MNIST IDX files."""
import dataclasses

import numpy as np
import pytest

from real_formats import write_mnist_files
from fedlab import paper_mode

from fedlab.availability import real_data as rd
from fedlab.availability.claims import paper_claims
from fedlab.availability.published import TABLE_4_STEP_SIZES


@pytest.fixture
def mnist(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "mnist"
    labels = np.repeat(np.arange(10), 16)
    write_mnist_files(folder, labels, labels[:10])
    return folder


def tiny(name):
    return dataclasses.replace(rd.SETTINGS[name], clients=6, rounds=3, seeds=1, local_steps=1, batch_size=4)


def test_settings_follow_the_paper():
    assert set(rd.SETTINGS) == set(rd.DATASETS) == set(TABLE_4_STEP_SIZES)
    assert all(s.clients == 100 and s.rounds == 200 and s.seeds == 10 for s in rd.SETTINGS.values())
    steps = TABLE_4_STEP_SIZES
    assert steps["mnist"]["cafed"] == (0.1, 1.0) and steps["cifar10"]["f3ast"] == (0.03, 0.3)
    assert all(set(v) == set(rd.TABLE_METHODS) for v in TABLE_4_STEP_SIZES.values())


def test_run_paper_feeds_the_claims(mnist, tmp_path):
    results = rd.run_paper(seeds=1, datasets=("mnist",), settings={"mnist": tiny("mnist")}, store=tmp_path / "store")
    assert set(results["mnist"]) == set(rd.TABLE_METHODS)
    assert all(0 <= v["final_accuracy"][0] <= 1 for v in results["mnist"].values())
    claims = paper_claims(results)
    mnist_claims = [c for c in claims if "MNIST" in c.source]
    assert len(mnist_claims) == 3 and all(c.measured is not None and c.verdict != "not run" for c in mnist_claims)
    assert all(c.verdict == "not run" for c in claims if "CIFAR" in c.source)
    again = rd.run_paper(seeds=1, datasets=("mnist",), settings={"mnist": tiny("mnist")}, store=tmp_path / "store")
    assert again == results


def test_expected_seconds_are_positive(monkeypatch):
    for name, (shape, classes, _) in list(paper_mode.DATA_SHAPES.items()):
        monkeypatch.setitem(paper_mode.DATA_SHAPES, name, (shape, classes, 12))  # small stand-in clients
    seconds = rd.expected_seconds(n_clients=4, settings={n: tiny(n) for n in rd.DATASETS})
    assert set(seconds) == set(rd.DATASETS) and all(v > 0 for v in seconds.values())


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="datasets"):
        rd.run_paper(datasets=("femnist",))
    with pytest.raises(ValueError, match="method"):
        rd.availability_paper_run(setting=dataclasses.asdict(tiny("mnist")), method="fedvarp")
    with pytest.raises(ValueError, match="n_clients"):
        rd.expected_seconds(n_clients=3)
