"""Paper mode's loaders on small files in the real formats (TFF's HDF5 archives, MNIST IDX, CIFAR-100 binary)."""
import dataclasses
import io
import re
import tarfile

import numpy as np
import pytest
import torch

from real_formats import write_mnist_files, write_tar_bz2, write_tff_h5
from fedlab.data.fetch import DATASETS
from fedlab.engine import FederatedDataset
from fedlab.models import char_lstm, cifar_cnn, femnist_cnn
from fedlab.algorithms import METHODS
from fedlab.engine import LocalSGD
from fedlab.data.federated import VOCABULARY, encode_text, group_clients, load_federated, load_femnist, load_partitioned, load_shakespeare, next_character_samples, read_tff_clients
from fedlab.paper_mode import MODELS, PaperSetting, check_seed_means, mean_over_seeds, seconds_per_round, seed_mean_at, setting_from_dict, settings_table, stand_in_data, sweep_seed_means, sweep_settings


@pytest.fixture
def femnist(data_cache, tmp_path):
    rng = np.random.default_rng(0)
    sizes = {"f0001_00": (7, 2), "f0002_11": (4, 3), "f0003_05": (9, 1), "f0004_40": (5, 0)}  # the last: no test
    for split, column in (("train", 0), ("test", 1)):
        write_tff_h5(tmp_path / f"fed_emnist_{split}.h5",
            {cid: {"pixels": rng.random((n[column], 28, 28), dtype=np.float32),
                   "label": rng.integers(0, 62, n[column]).astype(np.int32)}
             for cid, n in sizes.items() if n[column]})
    (data_cache / "femnist").mkdir(parents=True)
    write_tar_bz2(data_cache / "femnist" / "fed_emnist.tar.bz2", [tmp_path / "fed_emnist_train.h5", tmp_path / "fed_emnist_test.h5"])
    return sizes


@pytest.fixture
def shakespeare(data_cache, tmp_path):
    text = {"THE_TEMPEST_PROSPERO": ("Now my charms are all o'erthrown, and what strength I have's mine own. " * 3,
                                     "Which is most faint: now, 'tis true, I must be here confined by you."),
            "HAMLET_OPHELIA": ("O, what a noble mind is here o'erthrown!", "Short."),
            "KING_LEAR_FOOL": ("Have more than thou showest, speak less than thou knowest. " * 2,
                               "Lend less than thou owest, ride more than thou goest; learn more than thou trowest.")}
    for split, column in (("train", 0), ("test", 1)):
        write_tff_h5(tmp_path / f"shakespeare_{split}.h5",
            {cid: {"snippets": np.array([t[column].encode()])} for cid, t in text.items()})
    (data_cache / "shakespeare").mkdir(parents=True)
    write_tar_bz2(data_cache / "shakespeare" / "shakespeare.tar.bz2",
             [tmp_path / "shakespeare_train.h5", tmp_path / "shakespeare_test.h5"])
    return text


def test_femnist_keeps_one_client_per_writer(femnist):
    data = load_femnist()
    assert isinstance(data, FederatedDataset) and data.n_classes == 62
    assert data.n_clients == 3                                   # the writer without test samples is left out
    assert data.train.n.tolist() == [7, 4, 9] and data.test.n.tolist() == [2, 3, 1]
    assert data.train.feature_shape == (1, 28, 28)
    assert load_federated("femnist", n_clients=2, seed=1).n_clients == 2
    assert load_femnist(fraction=0.5, seed=1).n_clients == 2 and load_femnist(fraction=0.01).n_clients == 1
    with pytest.raises(ValueError, match="n_clients or fraction, not both"):
        load_femnist(n_clients=2, fraction=0.5)
    with pytest.raises(ValueError, match="fraction"):
        load_femnist(fraction=1.5)


def test_femnist_archive_is_extracted_once(femnist, data_cache):
    load_femnist()
    assert (data_cache / "femnist" / "fed_emnist_train.h5").is_file()
    (data_cache / "femnist" / "fed_emnist.tar.bz2").unlink()         # the extracted files suffice afterwards...
    with pytest.raises(FileNotFoundError, match="data fetch femnist"):   # ...but require() wants the archive
        load_femnist()


def test_shakespeare_is_next_character_prediction_by_role(shakespeare):
    data = load_shakespeare(seq_len=10, stride=5)
    assert data.n_classes == len(VOCABULARY) == 100
    assert data.n_clients == 2                                  # OPHELIA's test line is shorter than a window
    x, y, _ = data.train.client(1)
    text = shakespeare["THE_TEMPEST_PROSPERO"][0]
    assert "".join(VOCABULARY[int(c)] for c in x[1]) == text[5:15] and VOCABULARY[int(y[1])] == text[15]
    every = load_shakespeare(seq_len=10, stride=1, fraction=0.5, seed=0)     # LEAF's windows at every position
    assert every.n_clients == 1
    assert int(every.train.n[0]) in (len(t[0]) - 10 for t in shakespeare.values())


def write_femnist(data_cache, tmp_path, pixels, labels):
    """A FEMNIST archive whose train and test files hold one writer ``f0001`` with these fields."""
    for split in ("train", "test"):
        write_tff_h5(tmp_path / f"fed_emnist_{split}.h5", {"f0001": {"pixels": pixels, "label": labels}})
    (data_cache / "femnist").mkdir(parents=True, exist_ok=True)
    for h5 in data_cache.glob("femnist/*.h5"):
        h5.unlink()                                             # extracted from the previous archive
    write_tar_bz2(data_cache / "femnist" / "fed_emnist.tar.bz2",
                  [tmp_path / "fed_emnist_train.h5", tmp_path / "fed_emnist_test.h5"])
    return data_cache / "femnist" / "fed_emnist_train.h5"


def test_wrong_femnist_writers_are_named(data_cache, tmp_path):
    pixels, labels = np.zeros((3, 28, 28), np.float32), np.array([0, 61, 5], np.int32)
    path = write_femnist(data_cache, tmp_path, pixels, labels)
    assert load_femnist().train.n.tolist() == [3]
    write_femnist(data_cache, tmp_path, np.zeros((3, 14, 14), np.float32), labels)
    with pytest.raises(ValueError, match=re.escape(f"{path}, writer f0001: pixels must have shape (n, 28, 28)")):
        load_femnist()
    write_femnist(data_cache, tmp_path, pixels, np.array([0, 70, 5], np.int32))
    with pytest.raises(ValueError, match=re.escape(f"{path}, writer f0001: labels must lie in [0, 61], found [70]")):
        load_femnist()
    write_femnist(data_cache, tmp_path, pixels, np.zeros(4, np.int32))
    with pytest.raises(ValueError, match=re.escape(f"{path}, writer f0001: 3 images but labels of shape (4,)")):
        load_femnist()


def test_shakespeare_snippets_stored_as_numbers_are_named(data_cache, tmp_path):
    for split in ("train", "test"):
        write_tff_h5(tmp_path / f"shakespeare_{split}.h5", {"HAMLET_OPHELIA": {"snippets": np.arange(300)}})
    (data_cache / "shakespeare").mkdir(parents=True)
    write_tar_bz2(data_cache / "shakespeare" / "shakespeare.tar.bz2",
                  [tmp_path / "shakespeare_train.h5", tmp_path / "shakespeare_test.h5"])
    path = data_cache / "shakespeare" / "shakespeare_train.h5"
    with pytest.raises(ValueError, match=re.escape(f"{path}, role HAMLET_OPHELIA: snippets must be lines of text")):
        load_shakespeare(seq_len=5)


def test_group_clients_pools_writers_into_silos(femnist):
    data = load_femnist()
    silos = group_clients(data, [[2, 0], [1]])
    assert silos.n_clients == 2 and silos.n_classes == 62
    assert silos.train.n.tolist() == [16, 4] and silos.test.n.tolist() == [3, 3]
    x, y, _ = silos.train.client(0)
    assert torch.equal(x[:9], data.train.client(2)[0]) and torch.equal(y[9:], data.train.client(0)[1])
    with pytest.raises(ValueError, match="share a client"):
        group_clients(data, [[0, 1], [1]])
    with pytest.raises(ValueError, match="groups"):
        group_clients(data, [[0, 3]])


def test_character_windows_and_codes():
    codes = encode_text("abcdefg")
    x, y = next_character_samples(codes, seq_len=3, stride=2)
    assert x.tolist() == [encode_text("abc").tolist(), encode_text("cde").tolist()]
    assert y.tolist() == encode_text("df").tolist()
    assert encode_text("é")[0] == VOCABULARY.index(" ")
    assert next_character_samples(codes, seq_len=9)[0].shape == (0, 9)
    with pytest.raises(ValueError, match="codes must be a 1-D integer array"):
        next_character_samples(np.zeros((2, 2)), 1)
    with pytest.raises(TypeError, match="text must be a str"):
        encode_text(b"abc")


def test_a_tff_file_without_the_fields_is_named(tmp_path):
    write_tff_h5(tmp_path / "x.h5", {"a": {"other": np.zeros(3)}})
    with pytest.raises(ValueError, match="x.h5 is not a TFF client file"):
        read_tff_clients(tmp_path / "x.h5", ("pixels",))


def test_centralised_sets_are_partitioned_then_split(data_cache):
    folder = data_cache / "mnist"
    labels = np.repeat(np.arange(10), 12)
    write_mnist_files(folder, labels, labels[:10])
    data = load_partitioned("mnist", n_clients=6, scheme="pathological", classes_per_client=2, test_fraction=0.25)
    assert data.n_clients == 6 and data.n_classes == 10
    assert int(data.train.n.sum() + data.test.n.sum()) == 120
    hist = data.train.label_histograms(10) + data.test.label_histograms(10)
    assert ((hist > 0).sum(1) == 2).all()
    tenth = load_partitioned("mnist", n_clients=4, data_fraction=0.1, alpha=0.5)
    assert int(tenth.train.n.sum() + tenth.test.n.sum()) == 12
    with pytest.raises(ValueError, match="data_fraction"):
        load_partitioned("mnist", n_clients=4, data_fraction=0)


def test_cifar100_pachinko_uses_the_files_superclasses(data_cache):
    rng = np.random.default_rng(0)
    fine = np.repeat(np.arange(100), 3)
    coarse = fine % 20
    records = np.concatenate([coarse[:, None], fine[:, None], rng.integers(0, 256, (300, 3072))], 1).astype(np.uint8)
    folder = data_cache / "cifar100"
    folder.mkdir(parents=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("train.bin", "test.bin"):
            payload = records.tobytes()
            info = tarfile.TarInfo(f"cifar-100-binary/{name}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    (folder / "cifar-100-binary.tar.gz").write_bytes(buffer.getvalue())
    data = load_partitioned("cifar100", n_clients=4, scheme="pachinko", alpha=0.5, beta=1.0)
    assert data.n_classes == 100 and data.train.feature_shape == (3, 32, 32)


def test_absent_data_stop_with_the_fetch_command(data_cache):
    for name in DATASETS:
        with pytest.raises(FileNotFoundError, match=f"python -m fedlab data fetch {name}"):
            load_federated(name, **({} if name in ("femnist", "shakespeare") else {"n_clients": 2}))


def test_bad_loader_arguments(data_cache):
    with pytest.raises(ValueError, match="name"):
        load_federated("imagenet")
    with pytest.raises(ValueError, match="n_clients"):
        load_partitioned("mnist", n_clients=0)


@pytest.mark.parametrize("factory, shape, classes", [(femnist_cnn, (1, 28, 28), 62), (cifar_cnn, (3, 32, 32), 10),
                                                     (char_lstm, (12,), 100)])
def test_paper_models_train_on_stacked_rows(factory, shape, classes):
    model = factory()
    params = model.init(torch.Generator().manual_seed(0))
    stacked = {k: v.unsqueeze(0).repeat(2, *[1] * v.dim()) for k, v in params.items()}
    x = torch.rand((2, 3, *shape)) * (classes - 1 if factory is char_lstm else 1)
    if factory is char_lstm:
        x = x.floor()
    losses, grads = model.loss_and_grad_stacked(stacked, x, torch.randint(0, classes, (2, 3)), None)
    assert losses.shape == (2,) and len(grads) == len(params)
    row0 = model.forward(params, x[0])
    torch.testing.assert_close(model.forward_stacked(stacked, x)[0], row0)


def test_paper_setting_validates_and_builds_its_model():
    setting = PaperSetting("femnist", "femnist_cnn", None, 200, 1, 128, 0.1, 3, "FedEM: 1 epoch per round")
    assert setting.build_model().param_shapes()["head.weight"] == (62, 2048)
    with pytest.raises(ValueError, match="dataset"):
        PaperSetting("imagenet", "femnist_cnn", None, 1, 1, 1, 0.1, 1, "")
    with pytest.raises(ValueError, match="lr"):
        PaperSetting("femnist", "femnist_cnn", None, 1, 1, 1, 0.0, 1, "")


def test_stand_in_data_has_the_real_shapes_and_times_a_round():
    setting = PaperSetting("shakespeare", "char_lstm", 4, 10, 1, 8, 0.5, 1, "")
    data = stand_in_data(setting, n_clients=3)
    assert data.train.feature_shape == (80,) and data.n_classes == 100 and data.n_clients == 3
    assert float(data.train.x.max()) <= 99 and bool((data.train.x == data.train.x.floor()).all())
    small = stand_in_data(PaperSetting("mnist", "mnist_logistic", 2, 1, 1, 4, 0.1, 1, ""))
    algorithm = METHODS["fedavg"](MODELS["mnist_logistic"](10), LocalSGD(lr=0.1, local_steps=1, batch_size=4))
    assert small.n_clients == 2 and seconds_per_round(algorithm, small, rounds=1) > 0


def test_settings_table_puts_ours_next_to_the_papers():
    setting = PaperSetting("femnist", "femnist_cnn", None, 200, 1, 128, 0.1, 3, "FedEM: 200 rounds, 1 epoch")
    header, rows = settings_table({"Table 3.2, FEMNIST": setting})
    assert header[0] == "experiment" and header[-1] == "the paper's setting"
    assert rows == [["Table 3.2, FEMNIST", "femnist", "femnist_cnn", "all", 200, 128, "0.1",
                     "SGD, 1 step(s) a round, constant step", 3, "FedEM: 200 rounds, 1 epoch"]]
    with pytest.raises(TypeError, match="settings"):
        settings_table({"x": 3})


def test_a_recipe_builds_the_authors_solver():
    recipe = {"momentum": 0.9, "weight_decay": 5e-4, "epochs": 1, "schedule": "multi_step", "keep_state": True}
    setting = PaperSetting("femnist", "femnist_cnn", None, 200, 1, 128, 0.1, 3, "", recipe=recipe)
    solver = setting.solver(lr=0.03)
    assert (solver.lr, solver.momentum, solver.epochs, solver.keep_state) == (0.03, 0.9, 1, True)
    assert [solver.lr_at(t) for t in (99, 100, 150)] == pytest.approx([0.03, 0.003, 0.0003])
    assert setting.solver_text() == ("SGD, momentum 0.9, weight decay 0.0005, 1 epoch(s) a round, ÷10 at 1/2 and 3/4 "
                                     "of the rounds, optimizer kept across rounds")
    adam = PaperSetting("femnist", "femnist_cnn", None, 9, 1, 128, 0.001, 1, "",
                        recipe={"optimizer": "adam", "schedule": "sqrt", "keep_state": True})
    assert adam.solver().lr_at(4) == pytest.approx(0.0005) and "Adam" in adam.solver_text()
    with pytest.raises(ValueError, match="recipe takes"):
        PaperSetting("femnist", "femnist_cnn", None, 9, 1, 128, 0.1, 1, "", recipe={"nesterov": True})
    with pytest.raises(ValueError, match="schedule"):
        PaperSetting("femnist", "femnist_cnn", None, 9, 1, 128, 0.1, 1, "", recipe={"schedule": "step"})


def _record_run(*, setting, device, seed, point):
    return {"dataset": setting["dataset"], "device": device, "seed": seed, "point": point}


def test_sweep_settings_runs_every_point_and_seed_and_resumes(tmp_path):
    settings = {"mnist": PaperSetting("mnist", "mnist_logistic", 2, 1, 1, 4, 0.1, 2, "")}
    runs = sweep_settings(_record_run, settings, ["mnist"], [{"point": 1}, {"point": 2}], store=tmp_path)
    results = sorted((r["result"]["point"], r["result"]["seed"]) for r in runs["mnist"])
    assert results == [(1, 0), (1, 1), (2, 0), (2, 1)] and runs["mnist"][0]["result"]["device"] == "cpu"
    again = sweep_settings(_record_run, settings, ["mnist"], [{"point": 1}], seeds=1, store=tmp_path)
    assert [r["result"]["seed"] for r in again["mnist"]] == [0]
    with pytest.raises(ValueError, match="datasets"):
        sweep_settings(_record_run, settings, ["cifar10"], [{"point": 1}])


def _score_run(*, setting, device, seed):
    return {"score": {"a": float(seed), "b": 10.0 * seed}}


def test_sweep_seed_means_averages_each_settings_seeds_and_seed_mean_at_reads_them(tmp_path):
    settings = {"mnist": PaperSetting("mnist", "mnist_logistic", 2, 1, 1, 4, 0.1, 3, "")}
    results = sweep_seed_means(_score_run, settings, ["mnist"], store=tmp_path)
    assert results == {"mnist": {"seeds": [0, 1, 2], "mean": {"score": {"a": 1.0, "b": 10.0}}}}
    assert check_seed_means(results) is results
    last = sweep_seed_means(_score_run, settings, ["mnist"], store=tmp_path, average=lambda runs: runs[-1])
    assert last["mnist"]["mean"] == {"score": {"a": 2.0, "b": 20.0}}
    assert seed_mean_at(results, "mnist", "score", "b") == 10.0
    assert seed_mean_at(results, "mnist") == results["mnist"]["mean"]
    assert seed_mean_at(results, "cifar10", "score") is None and seed_mean_at(results, "mnist", "score", "c") is None
    with pytest.raises(TypeError, match="average"):
        sweep_seed_means(_score_run, settings, ["mnist"], store=tmp_path, average=3)


def test_settings_round_trip_through_a_sweep_and_seeds_average_leaf_by_leaf():
    setting = PaperSetting("mnist", "mnist_logistic", 2, 1, 1, 4, 0.1, 1, "")
    assert setting_from_dict(dataclasses.asdict(setting)) == setting
    with pytest.raises(TypeError, match="setting must hold a PaperSetting's fields"):
        setting_from_dict({"dataset": "mnist"})
    runs = [{"acc": 0.5, "name": "a", "inner": {"x": 1}}, {"acc": 0.7, "name": "b", "inner": {"x": 3}}]
    assert mean_over_seeds(runs) == {"acc": pytest.approx(0.6), "name": "a", "inner": {"x": 2.0}}
    assert check_seed_means(None) == {} and check_seed_means({"s": {"mean": {}}}) == {"s": {"mean": {}}}
    with pytest.raises(ValueError, match="results\\['s'\\] must be a dict with a 'mean' dict"):
        check_seed_means({"s": {"seeds": [0]}})
