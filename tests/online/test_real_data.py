"""Paper mode of the online-mixtures chapter (Fig. 4.10) on small MNIST and CIFAR-10 files in the real formats."""
import dataclasses

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from real_formats import write_cifar10_archive, write_mnist_files
from fedlab._rng import Stream, numpy_rng
from fedlab.claims import VERDICTS
from fedlab.models import MLP
from fedlab.online import real_data as rd
from fedlab.online.experiments import DigitsMixtureStream, MixtureStream, sublinear_from
from fedlab.online.plots import plot_paper_regret
from fedlab.paper import MODELS, settings_table


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
        assert all(len(mean[m]["regret"]) == 6 and len(mean[m]["regret_runs"]) == 1 for m in rd.METHODS)
    claims = rd.paper_claims(results)
    assert len(claims) == 3 and all(c.measured is not None and c.verdict in VERDICTS[:3] for c in claims)
    assert all("rule" in c.statement or "same rule" in c.statement for c in claims)
    fig, data = plot_paper_regret(results)
    assert len(data) == 2 and all(set(d) >= {"FEM-OMD", "FedOMD"} for d in data.values())
    assert rd.run_paper(settings=settings, store=store) == results          # read back, not rerun


def test_claims_without_results_say_how_to_fetch():
    claims = rd.paper_claims(None)
    assert len(claims) == 3 and all(c.verdict == "not run" for c in claims)
    assert all("python -m fedlab data fetch" in c.why for c in claims)
    assert "mnist" in claims[0].why and "cifar10" in claims[-1].why


def test_absent_files_stop_with_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="python -m fedlab data fetch mnist"):
        rd.paper_stream(rd.SETTINGS["mnist"])


def test_the_rule_dates_the_sub_linear_regime():
    t = np.arange(1.0, 1001.0)
    assert sublinear_from(t, np.sqrt(t)) == 10                              # sub-linear from the first checkpoint
    assert sublinear_from(t, 0.3 * t) is None                               # linear to the end
    bent = np.minimum(t, 300.0) + 0.01 * t                                  # linear, then nearly flat
    assert 300 < sublinear_from(t, bent) <= 600
    assert sublinear_from(t, -np.ones(1000)) == 10                          # never above the comparator
    with pytest.raises(ValueError, match="values"):
        sublinear_from(t, t[:5])


def test_the_stream_takes_any_pools_and_digits_is_a_case_of_it():
    rng = np.random.default_rng(0)
    pools = [(rng.random((n, 3, 4, 4), dtype=np.float32), np.arange(n) % 10) for n in (50, 20)]
    s = MixtureStream(*pools, n_clients=2, n_components=4, n_samples=5, seed=1)
    d = s(3)
    assert d.train.x.shape == (2, 5, 3, 4, 4) and d.test.x.shape == (2, 1, 3, 4, 4) and d.n_classes == 10
    raw = s.samples(3)
    assert all(np.all(s.groups[y] == z) for y, z in zip(raw["y"], raw["z"]))
    digits = DigitsMixtureStream(n_clients=2, seed=1)
    rng = numpy_rng(1, 0, Stream.ONLINE_POOL)
    rng.permutation(len(digits.y))                                          # the pool split's draw
    same = MixtureStream((digits.x[digits.train_pool], digits.y[digits.train_pool]),
                         (digits.x[digits.test_pool], digits.y[digits.test_pool]), n_clients=2, seed=1,
                         groups_rng=rng)
    np.testing.assert_array_equal(same.groups, digits.groups)
    np.testing.assert_array_equal(same(5).train.x, digits(5).train.x)
    with pytest.raises(ValueError, match="test"):
        MixtureStream(pools[0], (pools[1][0], np.zeros(20, dtype=int)), n_components=4)
    with pytest.raises(ValueError, match="n_components"):
        MixtureStream(*pools, n_components=11)


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
    with pytest.raises(TypeError, match="results"):
        rd.paper_claims([1])
    with pytest.raises(TypeError, match="settings"):
        rd.expected_seconds(settings=3)
    with pytest.raises(ValueError, match="epochs"):
        rd.train_central(MLP(4, (3,), 2), np.zeros((4, 4)), np.zeros(4, int), epochs=0, batch_size=2, lr=0.1)
    with pytest.raises(ValueError, match="results"):
        plot_paper_regret({"mnist": {"mean": {}}})
