"""Paper mode of the data-streams chapter on small files in the real formats (CIFAR binary, TFF HDF5 archives)."""
import dataclasses

import numpy as np
import pytest

from real_formats import write_tar_bz2, write_tff_h5
from fedlab import paper_mode as paper

from fedlab.claims import VERDICTS
from fedlab.streams.claims import paper_claims
from fedlab.models import LinearModel
from fedlab.streams import real_data as rd


@pytest.fixture
def small_models(monkeypatch):
    """Softmax regressions in place of the papers' CNNs: the same data path, a fraction of the time."""
    monkeypatch.setitem(paper.MODELS, "cifar_cnn", lambda c: LinearModel(3 * 32 * 32, c))
    monkeypatch.setitem(paper.MODELS, "femnist_cnn", lambda c: LinearModel(28 * 28, c))


def write_cifar10(data_cache, per_batch: int = 40) -> None:
    rng = np.random.default_rng(0)
    folder = data_cache / "cifar10" / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        labels = np.arange(per_batch) % 10
        records = np.concatenate([labels[:, None], rng.integers(0, 256, (per_batch, 3072))], 1).astype(np.uint8)
        (folder / name).write_bytes(records.tobytes())


def write_femnist(data_cache, tmp_path, writers: int = 10) -> None:
    rng = np.random.default_rng(1)
    for split, n in (("train", 6), ("test", 2)):
        write_tff_h5(tmp_path / f"fed_emnist_{split}.h5",
            {f"f{k:04d}_00": {"pixels": rng.random((n, 28, 28), dtype=np.float32),
                              "label": rng.integers(0, 62, n).astype(np.int32)} for k in range(writers)})
    (data_cache / "femnist").mkdir(parents=True)
    write_tar_bz2(data_cache / "femnist" / "fed_emnist.tar.bz2",
             [tmp_path / "fed_emnist_train.h5", tmp_path / "fed_emnist_test.h5"])


def write_shakespeare(data_cache, tmp_path, roles: int = 6) -> None:
    line = "Now my charms are all o'erthrown, and what strength I have's mine own, which is most faint. "
    for split, reps in (("train", 4), ("test", 2)):
        write_tff_h5(tmp_path / f"shakespeare_{split}.h5",
            {f"PLAY_ROLE_{k}": {"snippets": np.array([(line * reps)[k:].encode()])} for k in range(roles)})
    (data_cache / "shakespeare").mkdir(parents=True)
    write_tar_bz2(data_cache / "shakespeare" / "shakespeare.tar.bz2",
             [tmp_path / "shakespeare_train.h5", tmp_path / "shakespeare_test.h5"])


def tiny(name, **extra):
    options = {"rounds": 2, "local_steps": 1, "batch_size": 4, "seeds": 1, **extra}
    if name.startswith("cifar"):
        options["clients"] = 4
    return dataclasses.replace(rd.SETTINGS[name], **options)


def test_settings_cover_the_datasets():
    assert set(rd.SETTINGS) == set(rd.DATASETS)
    for setting in rd.SETTINGS.values():
        assert setting.paper and setting.seeds == 3
    assert rd.SETTINGS["cifar10"].clients == 50


def test_cifar_case_study_has_the_historical_fraction(data_cache):
    write_cifar10(data_cache)
    data, m_hist, dropped = rd.case_study(tiny("cifar10"), 0.5, seed=0)
    assert m_hist == 2 and data.m_hist == 2 and dropped == 0
    assert data.horizon == 2 and abs(data.fractions[:2].sum() - 0.5) < 0.1
    # fresh clients keep only the current batch
    assert (data.memory_count[0, 2:] == data.memory_count[1, 2:]).all()


def test_natural_fresh_clients_are_online_once_or_twice(data_cache, tmp_path):
    write_femnist(data_cache, tmp_path)
    write_shakespeare(data_cache, tmp_path)
    femnist, m_hist, _ = rd.case_study(tiny("femnist"), 0.2, seed=0)
    assert m_hist == 2 and (femnist.memory_count[:, :m_hist] > 0).all()
    assert ((femnist.memory_count[:, m_hist:] > 0).sum(0) == 1).all()
    shakespeare, m_hist, _ = rd.case_study(tiny("shakespeare"), 0.5, seed=0)
    online = (shakespeare.memory_count[:, m_hist:] > 0).sum(0)
    assert set(online.tolist()) <= {1, 2} and (online == 2).any()


def test_run_paper_feeds_the_claims(data_cache, tmp_path, small_models):
    write_cifar10(data_cache)
    write_femnist(data_cache, tmp_path)
    settings = {"cifar10": tiny("cifar10"), "femnist": tiny("femnist")}
    results = rd.run_paper(seeds=1, datasets=("cifar10", "femnist"), settings=settings)
    run = results["cifar10"]["0.2"][0]
    assert set(run["values"]) == {"fresh", "historical", "uniform", "ours"}
    assert run["optimal"] == max(run["grid_values"]) and 0 <= run["p_hat"] <= 1 and run["ratio"] > 0
    claims = paper_claims(results)
    measured = [c for c in claims if c.measured is not None]
    # one seed bounds nothing: the claims over seeds are inconclusive, the qualitative ones decided
    assert measured and all(c.verdict in VERDICTS[:4] for c in measured)
    assert all(c.verdict == "inconclusive" and c.n_seeds == 1 for c in measured if c.seeds is not None)
    assert {c.source.split(",")[1].strip() for c in measured} >= {"CIFAR-10", "FEMNIST"}
    assert all(c.verdict == "not run" for c in claims if "Shakespeare" in c.source)


def test_run_paper_resumes_from_its_store(data_cache, tmp_path, small_models):
    write_cifar10(data_cache)
    settings = {"cifar10": tiny("cifar10")}
    first = rd.run_paper(seeds=1, datasets=("cifar10",), settings=settings, store=tmp_path / "store")
    again = rd.run_paper(seeds=1, datasets=("cifar10",), settings=settings, store=tmp_path / "store")
    assert first == again


def test_expected_seconds_are_positive(monkeypatch):
    for name, (shape, classes, _) in list(paper.DATA_SHAPES.items()):
        monkeypatch.setitem(paper.DATA_SHAPES, name, (shape, classes, 12))  # small stand-in clients
    settings = {name: tiny(name) for name in rd.DATASETS}
    seconds = rd.expected_seconds(n_clients=2, settings=settings)
    assert set(seconds) == set(rd.DATASETS) and all(v > 0 for v in seconds.values())


def test_bad_arguments_are_named(data_cache):
    with pytest.raises(ValueError, match="datasets"):
        rd.run_paper(datasets=("mnist",))
    with pytest.raises(ValueError, match="h"):
        rd.case_study(rd.SETTINGS["cifar10"], 1.5)
    with pytest.raises(TypeError, match="setting"):
        rd.case_study("cifar10", 0.2)
    with pytest.raises(ValueError, match="n_clients"):
        rd.expected_seconds(n_clients=1)
