"""Paper mode of the topology chapter on small TFF-format FEMNIST and Shakespeare files."""
import dataclasses

import numpy as np
import pytest

from real_formats import write_tar_bz2, write_tff_h5
from fedlab.claims import VERDICTS
from fedlab.topology import real_data as rd
from fedlab.topology.claims import paper_claims
from fedlab.topology.published import TABLE_2_3

N_USERS = 140


@pytest.fixture
def femnist(data_cache, tmp_path):
    rng = np.random.default_rng(0)
    for split, extra in (("train", 3), ("test", 0)):                   # one test sample per writer
        write_tff_h5(tmp_path / f"fed_emnist_{split}.h5",
                     {f"f{k:04d}": {"pixels": rng.random((1 + k % 3 * extra, 28, 28), dtype=np.float32),
                                    "label": rng.integers(0, 62, 1 + k % 3 * extra).astype(np.int32)}
                      for k in range(N_USERS)})
    (data_cache / "femnist").mkdir(parents=True)
    write_tar_bz2(data_cache / "femnist" / "fed_emnist.tar.bz2",
                  [tmp_path / "fed_emnist_train.h5", tmp_path / "fed_emnist_test.h5"])


@pytest.fixture
def shakespeare(data_cache, tmp_path):
    line = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer "
    for split, repeat in (("train", 2), ("test", 1)):
        write_tff_h5(tmp_path / f"shakespeare_{split}.h5",
                     {f"ROLE_{k:03d}": {"snippets": np.array([(line * repeat)[k % 7:].encode()])}
                      for k in range(N_USERS)})
    (data_cache / "shakespeare").mkdir(parents=True)
    write_tar_bz2(data_cache / "shakespeare" / "shakespeare.tar.bz2",
                  [tmp_path / "shakespeare_train.h5", tmp_path / "shakespeare_test.h5"])


def tiny(name, model="mnist_logistic", **loader):
    """A few rounds of a small model (logistic regression on the images) on the tiny files."""
    return dataclasses.replace(rd.SETTINGS[name], model=model, rounds=3, batch_size=4,
                               loader={**rd.SETTINGS[name].loader, **loader})


def test_settings_follow_the_paper():
    assert set(rd.SETTINGS) == set(rd.DATASETS) <= set(TABLE_2_3)
    assert all(s.clients == 22 and s.local_steps == 1 for s in rd.SETTINGS.values())
    assert rd.SETTINGS["femnist"].batch_size == 128 and rd.SETTINGS["shakespeare"].batch_size == 512
    assert rd.SETTINGS["shakespeare"].loader["stride"] == 1              # LEAF: a sample at every position


def test_writers_per_silo_are_log_normal_with_the_papers_moments():
    counts = rd.writers_per_silo(20000, seed=1)
    assert counts.min() >= 1 and counts.dtype == np.int64
    assert abs(counts.mean() - 5) < 0.05 and abs(counts.std() - 1.5) < 0.1
    assert np.array_equal(rd.writers_per_silo(22, 3), rd.writers_per_silo(22, 3))
    with pytest.raises(ValueError, match="n_silos"):
        rd.writers_per_silo(0)
    with pytest.raises(ValueError, match="mean"):
        rd.writers_per_silo(3, mean=0)


def test_silos_pool_distinct_users(femnist):
    data = rd.silo_data(rd.SETTINGS["femnist"], 22, seed=0)
    counts = rd.writers_per_silo(22, 0)
    assert data.n_clients == 22 and data.n_classes == 62
    assert np.all(data.test.n.numpy() == counts)                      # one test sample per writer
    assert int(data.train.n.sum()) > counts.sum()


def test_run_paper_feeds_the_claims(femnist, tmp_path):
    results = rd.run_paper(datasets=("femnist",), settings={"femnist": tiny("femnist")}, store=tmp_path / "store")
    result = results["femnist"]
    assert set(result["curves"]) == set(rd.TRAINED_OVERLAYS) and result["seeds"] == 1
    assert len(result["silo_samples"]) == 22
    assert all(c["time_s"][-1] > 0 for c in result["curves"].values())
    claims = paper_claims(results)
    femnist_claims = [c for c in claims if "FEMNIST" in c.source]
    assert len(femnist_claims) == 4 and all(c.verdict in VERDICTS and c.verdict != "not run" for c in femnist_claims)
    assert all(c.verdict == "not run" for c in claims if "Shakespeare" in c.source)
    again = rd.run_paper(datasets=("femnist",), settings={"femnist": tiny("femnist")}, store=tmp_path / "store")
    assert again == results


def test_shakespeare_silos_train_the_character_model(shakespeare, tmp_path):
    results = rd.run_paper(datasets=("shakespeare",), settings={"shakespeare": tiny("shakespeare", "char_lstm", seq_len=5, stride=40)},
                           store=tmp_path / "store")
    samples = results["shakespeare"]["silo_samples"]
    assert len(samples) == 22 and min(samples) > 0


def test_claims_without_results_say_how_to_fetch():
    claims = paper_claims(None)
    assert len(claims) == 8 and all(c.verdict == "not run" for c in claims)
    assert all("python -m fedlab data fetch" in c.why for c in claims)
    with pytest.raises(TypeError, match="results"):
        paper_claims([1])


def test_runs_reject_other_data_sets():
    setting = dataclasses.asdict(dataclasses.replace(rd.SETTINGS["femnist"], dataset="mnist"))
    with pytest.raises(ValueError, match="setting.dataset"):
        rd.topology_paper_run(setting=setting)


def test_expected_seconds_are_positive():
    seconds = rd.expected_seconds(settings={"femnist": tiny("femnist")})
    assert set(seconds) == {"femnist"} and seconds["femnist"] > 0


def test_seeds_are_averaged_curve_by_curve(femnist, tmp_path):
    runs = [rd.topology_paper_run(setting=dataclasses.asdict(tiny("femnist")), seed=s) for s in (0, 1)]
    both = rd.run_paper(seeds=2, datasets=("femnist",), settings={"femnist": tiny("femnist")},
                        store=tmp_path / "store")["femnist"]
    assert both["seeds"] == 2 and len(both["silo_samples"]) == 44
    for overlay in ("matcha+", "ring"):
        for field in ("train_loss", "time_s"):
            expected = np.mean([r["curves"][overlay][field] for r in runs], axis=0)
            assert np.allclose(both["curves"][overlay][field], expected)
