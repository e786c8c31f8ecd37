"""FedEM's paper mode (thesis §3.5.6) on small files in CIFAR-10's binary format, with the settings shrunk."""
import dataclasses
import re

import pytest

from real_formats import write_cifar10_archive
from fedlab.fedem import real_data
from fedlab.fedem.claims import paper_claims
from fedlab.fedem.real_data import DATASETS, SETTINGS, expected_seconds, run_paper, run_setting


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDLAB_RESULTS", raising=False)
    write_cifar10_archive(tmp_path / "cache" / "cifar10")
    return tmp_path / "cache"


def _small(name: str, **changes) -> real_data.PaperSetting:
    return dataclasses.replace(SETTINGS[name], **{"clients": 6, "rounds": 2, "local_steps": 1, "batch_size": 8,
                                                  **changes})


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cache = tmp_path_factory.mktemp("fedem_paper")
    mp = pytest.MonkeyPatch()
    mp.setenv("FEDLAB_DATA", str(cache / "data"))
    mp.delenv("FEDLAB_RESULTS", raising=False)
    write_cifar10_archive(cache / "data" / "cifar10")
    settings = {"cifar10": _small("cifar10"), "cifar10_sampling": _small("cifar10_sampling", rounds=1, seeds=2)}
    try:
        yield run_paper(datasets=["cifar10"], settings=settings, store=cache / "store"), settings, cache / "store"
    finally:
        mp.undo()


def test_every_data_set_has_a_setting_with_the_papers_text():
    assert {s.dataset for s in SETTINGS.values()} == set(DATASETS)
    for setting in SETTINGS.values():
        assert setting.paper and setting.build_model() is not None
    assert SETTINGS["cifar10"].clients == 80 and SETTINGS["cifar100"].clients == 100
    assert SETTINGS["shakespeare"].rounds == 80 and SETTINGS["femnist"].rounds == 200
    assert SETTINGS["cifar10_sampling"].rounds == 1200 and SETTINGS["cifar10_sampling"].seeds == 3


def test_paper_run_feeds_every_cifar10_claim(results):
    results = results[0]
    assert set(results) == {"cifar10", "cifar10_sampling"}
    assert results["cifar10_sampling"]["seeds"] == [0, 1]
    methods = results["cifar10"]["mean"]["methods"]
    assert set(methods) == {"Local", "FedAvg", "FedProx", "FedAvg+", "Clustered FL", "pFedMe", "FedEM"}
    assert all(0 <= m["average"] <= 1 for m in methods.values())
    assert set(results["cifar10"]["mean"]["unseen"]) == {"FedAvg", "FedAvg+", "FedEM"}
    claims = paper_claims(results)
    cifar = [c for c in claims if re.search(r"CIFAR10(,|$)", c.source)]
    assert len(cifar) == 7 * 2 + 2 + 3 + 1 + 2 + 2 + 5 + 1
    assert all(c.measured is not None and c.verdict != "not run" for c in cifar)
    others = [c for c in claims if "FEMNIST" in c.source]
    assert others and all(c.verdict == "not run" and "fetch femnist" in c.why for c in others)


def test_a_paper_run_resumes_from_its_store(results, monkeypatch):
    first, settings, store = results
    monkeypatch.setattr(real_data.PaperSetting, "load", lambda *a, **k: pytest.fail("a stored run ran again"))
    again = run_paper(datasets=["cifar10"], settings=settings, store=store)
    assert again == first


def test_claims_without_results_say_how_to_fetch_the_data():
    claims = paper_claims(None)
    assert len(claims) > 100
    assert all(c.verdict == "not run" and "python -m fedlab data fetch" in c.why for c in claims)
    sources = {c.source for c in claims}
    assert "Table 3.2, CIFAR100, FedEM" in sources and "Table 7 (App. E.14), CIFAR10, APFL" in sources
    paper = {(c.source, c.statement): c.paper for c in claims}
    assert paper[("Table 3.2, FEMNIST, FedEM", "average test accuracy (%)")] == 79.9
    assert paper[("Table 3.3, CIFAR100, FedEM", "unseen clients: test accuracy (%)")] == 47.5


def test_run_setting_checks_its_arguments(cache):
    with pytest.raises(TypeError, match="setting"):
        run_setting(name="cifar10", setting="cifar10", seed=0)
    with pytest.raises(ValueError, match="seed"):
        run_setting(name="cifar10", setting=dataclasses.asdict(_small("cifar10")), seed=-1)
    with pytest.raises(ValueError, match="datasets"):
        run_paper(datasets=["imagenet"])
    with pytest.raises(TypeError, match="results"):
        paper_claims([1])


def test_expected_seconds_are_positive():
    times = expected_seconds(n_clients=1, settings={"cifar10_sampling": _small("cifar10_sampling")})
    assert set(times) == {"cifar10_sampling"} and times["cifar10_sampling"] > 0
    with pytest.raises(ValueError, match="n_clients"):
        expected_seconds(n_clients=0)
