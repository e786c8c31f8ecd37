"""Paper mode of the online-mixtures chapter (Fig. 4.10) on small MNIST and CIFAR-10 files in the real formats."""
import dataclasses

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from real_formats import write_cifar10_archive, write_mnist_files
from fedlab.claims import VERDICTS
from fedlab.models import MLP
from fedlab.online import real_data as rd
from fedlab.online.claims import paper_claims
from fedlab.online.plots import plot_paper_regret
from fedlab.paper_mode import MODELS, settings_table


@pytest.fixture
def real_files(tmp_path, monkeypatch):
    """Small MNIST IDX files (every class in both files) and a small CIFAR-10 archive under ``$FEDLAB_DATA``."""
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "mnist"
    write_mnist_files(folder, np.arange(60) % 10, np.arange(20) % 10)
    write_cifar10_archive(tmp_path / "cache" / "cifar10", per_batch=20)
    return tmp_path


def tiny(name, **changes):
    s = rd.SETTINGS[name]
    loader = {**s.loader, "comparator": {**s.loader["comparator"], "epochs": 1, "batch_size": 8}}
    return dataclasses.replace(s, **{"clients": 3, "rounds": 6, "seeds": 1, "loader": loader, **changes})


def test_settings_follow_the_paper():
    assert set(rd.SETTINGS) == set(rd.DATASETS) == {"mnist", "cifar10"}
    for name, n in (("mnist", 6), ("cifar10", 5)):
        s = rd.SETTINGS[name]
        assert s.clients == 10 and s.rounds == 1000 and s.batch_size == n
        assert s.loader["stream"] == {"n_components": 4, "n_samples": n, "n_test": 1, "alpha": 0.1}
    assert rd.SETTINGS["cifar10"].model == "cifar_cnn" and "mnist_mlp" in MODELS
    mlp = rd.SETTINGS["mnist"].build_model()
    assert isinstance(mlp, MLP) and mlp.hidden == (200,) and mlp.n_outputs() == 10
    header, rows = settings_table(rd.SETTINGS)
    assert [r[0] for r in rows] == ["mnist", "cifar10"] and "ours" in rows[0][-1]


def test_run_paper_feeds_the_claims_and_resumes_from_the_store(real_files):
    settings = {n: tiny(n) for n in rd.DATASETS}
    store = real_files / "store"
    results = rd.run_paper(settings=settings, store=store)
    for name in rd.DATASETS:
        mean = results[name]["mean"]
        assert results[name]["seeds"] == [0] and len(mean["t"]) == 6 and 0 <= mean["comparator_accuracy"] <= 1
        assert all(len(mean[m]["regret"]) == 6 and len(mean[m]["regret_runs"]) == 1 for m in rd.TABLE_METHODS)
    claims = paper_claims(results)
    assert len(claims) == 3 and all(c.measured is not None and c.verdict in VERDICTS[:4] for c in claims)
    assert all("rule: ρ" in c.why and c.scale == "paper" for c in claims)
    fig, data = plot_paper_regret(results)
    assert len(data) == 2 and all(set(d) >= {"FEM-OMD", "FedOMD"} for d in data.values())
    assert rd.run_paper(settings=settings, store=store) == results          # read back, not rerun


def test_claims_without_results_say_how_to_fetch():
    claims = paper_claims(None)
    assert len(claims) == 3 and all(c.verdict == "not run" for c in claims)
    assert all("python -m fedlab data fetch" in c.why for c in claims)
    assert "mnist" in claims[0].why and "cifar10" in claims[-1].why


def test_absent_files_stop_with_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="python -m fedlab data fetch mnist"):
        rd.paper_stream(rd.SETTINGS["mnist"])


def test_the_comparator_is_trained_by_the_engine():
    from fedlab.algorithms import Centralized
    from fedlab.engine import ClientData, FederatedDataset, LocalSGD, run
    from fedlab.models import LinearModel

    rng = np.random.default_rng(0)
    x, y = rng.random((40, 4), dtype=np.float32), np.arange(40) % 3
    predict = rd.train_central(LinearModel(4, 3), x, y, epochs=2, batch_size=8, lr=0.5, momentum=0.9, seed=1)
    pooled = ClientData.from_arrays([x], [y])
    state, _ = run(Centralized(LinearModel(4, 3), LocalSGD(lr=0.5, local_steps=5, batch_size=8, momentum=0.9)),
                   FederatedDataset(pooled, pooled), rounds=2, seed=1)
    logits = LinearModel(4, 3).forward(state.params, __import__("torch").as_tensor(x))
    np.testing.assert_array_equal(predict(x), logits.argmax(-1).numpy())
    assert predict(np.zeros((0, 4))).shape == (0,)


def test_expected_seconds_are_positive():
    seconds = rd.expected_seconds(settings={n: tiny(n) for n in rd.DATASETS})
    assert set(seconds) == set(rd.DATASETS) and all(v > 0 for v in seconds.values())


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="datasets"):
        rd.run_paper(datasets=("femnist",))
    with pytest.raises(ValueError, match="seed"):
        rd.online_paper_run(setting=dataclasses.asdict(tiny("mnist")), seed=-1)
    with pytest.raises(ValueError, match="setting.dataset"):
        rd.online_paper_run(setting=dataclasses.asdict(dataclasses.replace(tiny("mnist"), dataset="femnist")))
    with pytest.raises(ValueError, match="setting.loader"):
        rd.run_paper(settings={"mnist": tiny("mnist", loader={})})
    with pytest.raises(TypeError, match="settings"):
        rd.expected_seconds(settings=3)
    with pytest.raises(ValueError, match="epochs"):
        rd.train_central(MLP(4, (3,), 2), np.zeros((4, 4)), np.zeros(4, int), epochs=0, batch_size=2, lr=0.1)
    with pytest.raises(ValueError, match="results"):
        plot_paper_regret({"mnist": {"mean": {}}})
