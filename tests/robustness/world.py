"""Small valid objects the robustness cases build their calls from (each built once, on first use)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import torch

from fedlab.engine import ClientData, FederatedDataset, LocalSGD, run
from fedlab.models import LinearModel, init_stacked

N_CLIENTS, DIM, N_CLASSES = 4, 5, 3


def _clients(seed: int = 0, sizes=(6, 9, 5, 8)):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(DIM, N_CLASSES))
    xs = [rng.normal(size=(n, DIM)).astype(np.float32) + k for k, n in enumerate(sizes)]
    ys = [np.argmax(x @ w, axis=1) for x in xs]
    return xs, ys


@functools.cache
def client_arrays():
    """``(xs, ys)``: four clients, five features, three classes."""
    return _clients()


@functools.cache
def fed() -> FederatedDataset:
    xs, ys = client_arrays()
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=N_CLASSES, seed=0)


def clients() -> ClientData:
    return fed().train


@functools.cache
def model() -> LinearModel:
    return LinearModel(DIM, N_CLASSES)


@functools.cache
def solver() -> LocalSGD:
    return LocalSGD(lr=0.1, local_steps=2, batch_size=4)


def params(rows: int = N_CLIENTS):
    """Stacked parameters of :func:`model`, one row per client."""
    return init_stacked(model(), rows, torch.Generator().manual_seed(0))


def single_params():
    return model().init(torch.Generator().manual_seed(0))


@functools.cache
def history():
    """The History of two FedAvg rounds on :func:`fed`."""
    from fedlab.algorithms import FedAvg

    return run(FedAvg(model(), solver()), fed(), rounds=2)[1]


def ring(n: int = 4) -> np.ndarray:
    """A doubly stochastic ring mixing matrix."""
    w = np.eye(n) / 2
    for i in range(n):
        w[i, (i + 1) % n] += 0.25
        w[i, (i - 1) % n] += 0.25
    return w


def stochastic(n: int = 3) -> np.ndarray:
    """A row-stochastic matrix with positive entries."""
    p = np.arange(1, n * n + 1, dtype=float).reshape(n, n)
    return p / p.sum(1, keepdims=True)


@functools.cache
def data_folder() -> str:
    """A ``$FEDLAB_DATA`` folder with every data set of ``fedlab.data.fetch`` as small files in its real format
    (written once per process, removed at exit): the valid calls of the loaders and paper runs read it."""
    import atexit
    import shutil

    from real_formats import idx_gz, write_cifar10_archive, write_mnist_files, write_tar_bz2, write_tff_h5

    root = Path(tempfile.mkdtemp(prefix="fedlab-robustness-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    rng = np.random.default_rng(0)
    for name in ("mnist", "fashion_mnist"):
        write_mnist_files(root / name, np.arange(60) % 10, np.arange(20) % 10)
    (root / "emnist" / "gzip").mkdir(parents=True)
    for split, n in (("train", 124), ("test", 62)):
        for part, array in (("images-idx3", rng.integers(0, 256, (n, 28, 28))), ("labels-idx1", np.arange(n) % 62)):
            (root / "emnist" / "gzip" / f"emnist-byclass-{split}-{part}-ubyte.gz").write_bytes(idx_gz(array))
    write_cifar10_archive(root / "cifar10", per_batch=20)
    (root / "cifar100" / "cifar-100-binary").mkdir(parents=True)
    for split, n in (("train", 200), ("test", 100)):
        fine = np.arange(n) % 100
        records = np.concatenate([fine[:, None] % 20, fine[:, None], rng.integers(0, 256, (n, 3072))], 1)
        (root / "cifar100" / "cifar-100-binary" / f"{split}.bin").write_bytes(records.astype(np.uint8).tobytes())
    line = "Now my charms are all o'erthrown, and what strength I have's mine own, which is most faint. "
    tff = {"femnist": ("fed_emnist", lambda k, n: {"pixels": rng.random((n, 28, 28), dtype=np.float32),
                                                   "label": rng.integers(0, 62, n).astype(np.int32)}),
           "shakespeare": ("shakespeare", lambda k, n: {"snippets": np.array([(line * n)[k:].encode()])})}
    for (name, (stem, client)), clients in zip(tff.items(), (130, 10)):  # AWS NA's 22 silos pool ~113 writers
        (root / name).mkdir()
        for split, n in (("train", 6), ("test", 2)):
            write_tff_h5(root / f"{stem}_{split}.h5", {f"c{k:03d}": client(k, n) for k in range(clients)})
        write_tar_bz2(root / name / f"{stem}.tar.bz2", [root / f"{stem}_{s}.h5" for s in ("train", "test")])
    return str(root)


@functools.cache
def served_file():
    """A RemoteFile that an HTTP server on 127.0.0.1 (a daemon thread of this process) publishes: what fetch and
    download get, offline."""
    import hashlib
    import http.server
    import threading

    from fedlab.data.fetch import RemoteFile

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    folder = Path(data_folder()) / "http"
    folder.mkdir(exist_ok=True)
    content = b"a published file\n"
    (folder / "a.bin").write_bytes(content)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return RemoteFile("a.bin", f"http://127.0.0.1:{server.server_address[1]}/a.bin", hashlib.md5(content).hexdigest())


def catalog() -> dict:
    """A catalog of one data set, :func:`served_file`."""
    from fedlab.data.fetch import DataSet

    return {"served": DataSet("served", "a published file", "none", (served_file(),))}


def scratch() -> str:
    """A fresh empty folder (inside :func:`data_folder`, removed with it)."""
    return tempfile.mkdtemp(dir=data_folder())


def written(name: str, text: str) -> str:
    """The path of a file ``name`` holding ``text``, in a fresh folder."""
    path = Path(scratch()) / name
    path.write_text(text)
    return str(path)


def tiny(setting, **changes):
    """A paper setting shrunk to :func:`data_folder`'s files: 4 clients, 2 rounds of one step on 4 samples, 1 seed."""
    import dataclasses

    return dataclasses.replace(setting, **{"clients": 4, "rounds": 2, "local_steps": 1, "batch_size": 4, "seeds": 1,
                                           **changes})
