"""kNN-Per's paper mode (thesis §3.6.3) on small files in CIFAR-10's binary format, with the settings shrunk."""
import dataclasses
import re

import numpy as np
import pytest
import torch

from real_formats import write_cifar10_archive
from fedlab.engine import ClientData
from fedlab.knnper import real_data
from fedlab.knnper import algorithms as knn_algorithms
from fedlab.knnper.algorithms import client_features, embed_and_proba, embedding_dim
from fedlab.knnper.claims import paper_claims
from fedlab.knnper.real_data import DATASETS, SETTINGS, expected_seconds, run_paper, run_setting
from fedlab.paper_mode import MODELS


def _small(name: str, **changes):
    return dataclasses.replace(SETTINGS[name], **{"clients": 6, "rounds": 2, "local_steps": 1, "batch_size": 8,
                                                  **changes})


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cache = tmp_path_factory.mktemp("knnper_paper")
    mp = pytest.MonkeyPatch()
    mp.setenv("FEDLAB_DATA", str(cache / "data"))
    mp.delenv("FEDLAB_RESULTS", raising=False)
    write_cifar10_archive(cache / "data" / "cifar10")
    settings = {"cifar10": _small("cifar10")}
    try:
        yield run_paper(datasets=["cifar10"], settings=settings, store=cache / "store"), settings, cache / "store"
    finally:
        mp.undo()


def test_every_data_set_has_a_setting_with_the_papers_text():
    assert set(SETTINGS) == set(DATASETS) == {s.dataset for s in SETTINGS.values()}
    assert SETTINGS["cifar10"].clients == 200 and SETTINGS["femnist"].rounds == 1000
    assert SETTINGS["shakespeare"].rounds == 300 and all(s.paper for s in SETTINGS.values())


@pytest.mark.parametrize("name, shape, dim", [("femnist_cnn", (1, 28, 28), 2048), ("cifar_cnn", (3, 32, 32), 512),
                                              ("char_lstm", (12,), 1024)])
def test_paper_models_give_their_last_hidden_layer(name, shape, dim):
    model = MODELS[name](62 if name == "femnist_cnn" else 10 if name == "cifar_cnn" else 100)
    params = model.init(torch.Generator().manual_seed(0))
    x = torch.rand((5, *shape)) * (99 if name == "char_lstm" else 1)
    x = x.floor() if name == "char_lstm" else x
    emb, proba = embed_and_proba(model, params, x)
    assert emb.shape == (5, dim) and embedding_dim(model) == dim
    torch.testing.assert_close(proba, torch.softmax(model.forward(params, x), -1))


def test_client_features_split_by_client_in_chunks(monkeypatch):
    model = MODELS["cifar_cnn"](10)
    params = model.init(torch.Generator().manual_seed(0))
    data = ClientData.from_arrays([np.random.rand(n, 3, 32, 32).astype(np.float32) for n in (3, 1)],
                                  [np.arange(n) for n in (3, 1)])
    whole = client_features(model, params, data)
    monkeypatch.setattr(knn_algorithms, "FEATURE_CHUNK", 2)
    feats = client_features(model, params, data)
    assert feats.sizes.tolist() == [3, 1] and feats.keys[0].shape == (3, 512) and feats.proba[1].shape == (1, 10)
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(feats.keys, whole.keys))


def test_settings_need_a_model_with_a_representation():
    settings = {"cifar10": dataclasses.replace(SETTINGS["cifar10"], model="mnist_logistic")}
    with pytest.raises(ValueError, match="must have a representation"):
        run_paper(settings=settings, datasets=("cifar10",))


def test_paper_run_feeds_every_cifar10_claim(results):
    results = results[0]
    methods = results["cifar10"]["mean"]["methods"]
    assert set(methods) == {"Local", "FedAvg", "FedAvg+", "ClusteredFL", "Ditto", "FedRep", "APFL", "kNN-Per"}
    assert all(0 <= m["average"] <= 1 for m in methods.values())
    assert set(results["cifar10"]["mean"]["unseen"]) == {"FedAvg", "FedAvg+", "ClusteredFL", "Ditto", "FedRep",
                                                         "APFL", "kNN-Per"}
    claims = paper_claims(results)
    cifar = [c for c in claims if re.search(r"CIFAR-10(,|$)", c.source)]
    assert len(cifar) == 2 * 8 + 2 + 7 + 1 + 2
    assert all(c.measured is not None and c.verdict != "not run" for c in cifar)
    others = [c for c in claims if "Shakespeare" in c.source]
    assert others and all(c.verdict == "not run" and "fetch shakespeare" in c.why for c in others)


def test_a_paper_run_resumes_from_its_store(results, monkeypatch):
    first, settings, store = results
    monkeypatch.setattr(real_data.PaperSetting, "load", lambda *a, **k: pytest.fail("a stored run ran again"))
    assert run_paper(datasets=["cifar10"], settings=settings, store=store) == first


def test_claims_without_results_say_how_to_fetch_the_data():
    claims = paper_claims(None)
    assert all(c.verdict == "not run" and "python -m fedlab data fetch" in c.why for c in claims)
    paper = {(c.source, c.statement): c.paper for c in claims}
    assert paper[("Table 3.5, FEMNIST, kNN-Per", "average test accuracy (%)")] == 88.2
    assert paper[("Table 3.6, CIFAR-100, kNN-Per", "unseen clients: test accuracy (%)")] == 56.1
    assert paper[("§3.6.3, CIFAR-10", "kNN-Per − Local, average test accuracy (pp)")] == 25.0
    assert not any("pFedGP" in c.source or "v2" in c.source for c in claims)


def test_bad_arguments_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path))
    with pytest.raises(TypeError, match="setting"):
        run_setting(name="cifar10", setting=None, seed=0)
    with pytest.raises(ValueError, match="datasets"):
        run_paper(datasets=["emnist"])
    with pytest.raises(ValueError, match="model"):
        run_paper(settings={"x": dataclasses.replace(SETTINGS["cifar10"], model="mnist_logistic")})
    with pytest.raises(TypeError, match="results"):
        paper_claims("results")


def test_expected_seconds_are_positive():
    times = expected_seconds(n_clients=1, settings={"cifar10": _small("cifar10")})
    assert set(times) == {"cifar10"} and times["cifar10"] > 0
    with pytest.raises(ValueError, match="n_clients"):
        expected_seconds(n_clients=0)
