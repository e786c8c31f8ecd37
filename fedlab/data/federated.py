r"""The real data sets as :class:`~fedlab.engine.FederatedDataset`\ s, from ``$FEDLAB_DATA``.

* FEMNIST and Shakespeare keep their **natural** split: one client per writer, one per speaking role, with
  the train/test split TensorFlow Federated publishes (files from ``python -m fedlab data fetch femnist``).
* MNIST, Fashion-MNIST, EMNIST, CIFAR-10 and CIFAR-100 are centralised: the experiment partitions the training
  images over ``n_clients`` clients with one of :data:`fedlab.data.PARTITIONERS` (thesis §3.5.6: Dirichlet for
  CIFAR-10, Pachinko over the superclasses for CIFAR-100, §1.6.2 for the pathological split), then splits each
  client's samples into train and test (``test_fraction``, as the FedEM code does).

Shakespeare is LEAF's next-character task: every window of ``seq_len`` characters (a ``stride`` apart) of a
role's lines predicts the character that follows; characters are indices into :data:`VOCABULARY`
(``string.printable``, as in the FedEM code), stored as floats in ``x`` (the engine stores features as float32;
:func:`fedlab.models.char_lstm` casts them back).

"""
from __future__ import annotations

import string
import tarfile
from pathlib import Path
from typing import Any, Callable, Mapping

import h5py
import numpy as np
import torch

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_choice, check_int, check_path, check_real, check_sequence, check_type
from fedlab.data.fetch import DATASETS, require
from fedlab.data.partition import partition, train_test_split_clients
from fedlab.data.vision import load_cifar10, load_cifar100, load_emnist, load_fashion_mnist, load_mnist
from fedlab.engine import ClientData, FederatedDataset

__all__ = ["VOCABULARY", "encode_text", "next_character_samples", "read_tff_clients", "load_femnist",
           "load_shakespeare", "group_clients", "load_partitioned", "FEDERATED_LOADERS", "load_federated"]

VOCABULARY = string.printable
_INDEX = {c: i for i, c in enumerate(VOCABULARY)}
_SPACE = _INDEX[" "]
_TFF_FILES = {"femnist": ("fed_emnist_train.h5", "fed_emnist_test.h5"),
              "shakespeare": ("shakespeare_train.h5", "shakespeare_test.h5")}


def encode_text(text: str) -> np.ndarray:
    """Character indices into :data:`VOCABULARY` (a character outside it becomes a space)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}.")
    return np.fromiter((_INDEX.get(c, _SPACE) for c in text), dtype=np.int64, count=len(text))


def next_character_samples(codes: np.ndarray, seq_len: int = 80, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Windows ``codes[i : i + seq_len]`` (``i`` a multiple of ``stride``) and the character after each.

    Returns ``x`` of shape ``(n, seq_len)`` and ``y`` of shape ``(n,)`` (``n = 0`` when the text is too short).
    """
    codes = np.asarray(codes)
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise ValueError(f"codes must be a 1-D integer array, got dtype {codes.dtype} and shape {codes.shape}.")
    seq_len, stride = check_int("seq_len", seq_len, low=1), check_int("stride", stride, low=1)
    starts = np.arange(0, len(codes) - seq_len, stride)
    x = codes[starts[:, None] + np.arange(seq_len)] if len(starts) else np.zeros((0, seq_len), np.int64)
    return x, codes[starts + seq_len]


def _extracted(name: str) -> tuple[Path, Path]:
    """The train and test HDF5 files of ``name``, extracted from its archive on first use."""
    require(name)
    dataset = DATASETS[name]
    folder = dataset.folder
    targets = [folder / f for f in _TFF_FILES[name]]
    if not all(t.is_file() for t in targets):
        archive = folder / dataset.files[0].name
        try:
            with tarfile.open(archive, "r:*") as tar:
                members = {Path(m.name).name: m for m in tar if m.isfile()}
                for target in targets:
                    if target.name not in members:
                        raise ValueError(f"{archive} lacks {target.name}: not the published archive.")
                    part = target.with_name(target.name + ".part")
                    with tar.extractfile(members[target.name]) as src, part.open("wb") as out:
                        out.write(src.read())
                    part.replace(target)
        except (tarfile.TarError, EOFError, OSError) as err:
            raise ValueError(f"{archive} is not a readable archive ({err}); delete it and fetch it again.") from err
    return targets[0], targets[1]


def read_tff_clients(path: str | Path, fields: tuple[str, ...]) -> dict[str, dict[str, np.ndarray]]:
    """Read a TensorFlow Federated HDF5 file: ``examples/<client id>/<field>`` for each client, in id order."""
    path = check_path("path", path)
    try:
        with h5py.File(path, "r") as f:
            examples = f["examples"]
            return {cid: {fld: examples[cid][fld][()] for fld in fields} for cid in sorted(examples)}
    except (OSError, KeyError) as err:
        raise ValueError(f"{path} is not a TFF client file with fields {fields} ({err}).") from err


def _optional_count(n_clients) -> int | None:
    return None if n_clients is None else check_int("n_clients", n_clients, low=1)


def _optional_fraction(fraction, n_clients) -> float | None:
    if fraction is not None and n_clients is not None:
        raise ValueError("give n_clients or fraction, not both.")
    return None if fraction is None else check_real("fraction", fraction, low=0, high=1, low_open=True)


def _choose_clients(ids: list[str], n_clients: int | None, seed: int, fraction: float | None = None) -> list[str]:
    """``n_clients`` of ``ids``, or a ``fraction`` of them (at least one), drawn at random with ``seed``; all
    when both are None."""
    if fraction is not None:
        n_clients = max(1, int(round(fraction * len(ids))))
    if n_clients is None:
        return ids
    n_clients = check_int("n_clients", n_clients, low=1, high=len(ids))
    pick = np.sort(as_numpy_rng(seed).choice(len(ids), size=n_clients, replace=False))
    return [ids[i] for i in pick]


def _dataset(train: list[tuple[np.ndarray, np.ndarray]], test: list[tuple[np.ndarray, np.ndarray]],
             n_classes: int) -> FederatedDataset:
    return FederatedDataset(ClientData.from_arrays([x for x, _ in train], [y for _, y in train]),
                            ClientData.from_arrays([x for x, _ in test], [y for _, y in test], allow_empty=True),
                            n_classes)


def load_femnist(*, n_clients: int | None = None, fraction: float | None = None, seed: int = 0) -> FederatedDataset:
    """FEMNIST by writer (62 classes, images ``(1, 28, 28)`` in [0, 1]): TFF's train and test samples of each
    writer; ``n_clients`` writers, or a ``fraction`` of them (LEAF's user sampling), drawn at random with
    ``seed`` (all 3,400 by default).

    The padded tensors hold ``n_clients x`` the largest writer's samples: all writers need about 5 GB.
    """
    n_clients, seed = _optional_count(n_clients), check_int("seed", seed, low=0)
    fraction = _optional_fraction(fraction, n_clients)
    train_path, test_path = _extracted("femnist")
    train = read_tff_clients(train_path, ("pixels", "label"))
    test = read_tff_clients(test_path, ("pixels", "label"))
    ids = _choose_clients([c for c in train if c in test], n_clients, seed, fraction)
    pairs = [[_writer_samples(path, c, d[c]) for c in ids] for path, d in ((train_path, train), (test_path, test))]
    return _dataset(pairs[0], pairs[1], 62)


def _writer_samples(path: Path, writer: str, fields: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One FEMNIST writer's images ``(n, 1, 28, 28)`` and labels in [0, 62), the file and writer named in errors."""
    pixels, labels = fields["pixels"], fields["label"]
    where = f"{path}, writer {writer}"
    if pixels.ndim != 3 or pixels.shape[1:] != (28, 28):
        raise ValueError(f"{where}: pixels must have shape (n, 28, 28), got {pixels.shape}.")
    if labels.shape != (len(pixels),):
        raise ValueError(f"{where}: {len(pixels)} images but labels of shape {labels.shape}; expected one label per "
                         f"image, shape ({len(pixels)},).")
    bad = labels[(labels < 0) | (labels > 61)]
    if bad.size:
        raise ValueError(f"{where}: labels must lie in [0, 61], found {bad[:5].tolist()}.")
    return pixels[:, None].astype(np.float32), labels.astype(np.int64)


def load_shakespeare(*, n_clients: int | None = None, fraction: float | None = None, seq_len: int = 80,
                     stride: int = 80, min_samples: int = 2, seed: int = 0) -> FederatedDataset:
    """Shakespeare by speaking role, LEAF's next-character task (:func:`next_character_samples` on each role's
    concatenated lines, train and test as TFF splits them). Roles with fewer than ``min_samples`` training
    windows or no test window are left out; then ``n_clients`` roles, or a ``fraction`` of them, are drawn at
    random with ``seed`` (only those are cut into windows: ``stride=1``, every position, stays affordable)."""
    seq_len, stride = check_int("seq_len", seq_len, low=1), check_int("stride", stride, low=1)
    min_samples, seed = check_int("min_samples", min_samples, low=1), check_int("seed", seed, low=0)
    n_clients = _optional_count(n_clients)
    fraction = _optional_fraction(fraction, n_clients)
    train_path, test_path = _extracted("shakespeare")
    train, test = (_role_texts(path, read_tff_clients(path, ("snippets",))) for path in (train_path, test_path))

    def n_windows(text: str) -> int:
        return len(range(0, len(text) - seq_len, stride))

    ids = [c for c in train if c in test and n_windows(train[c]) >= min_samples and n_windows(test[c]) >= 1]
    if not ids:
        raise ValueError(f"no speaking role has {min_samples} training windows of {seq_len + 1} characters.")
    ids = _choose_clients(ids, n_clients, seed, fraction)
    samples = [[next_character_samples(encode_text(texts[c]), seq_len, stride) for c in ids] for texts in (train, test)]
    return _dataset(*([(x.astype(np.float32), y) for x, y in part] for part in samples), len(VOCABULARY))


def _role_texts(path: Path, clients: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, str]:
    """Each role's snippets (text lines, bytes or str) concatenated into one text; the file and role named in
    errors."""
    for cid, fields in clients.items():
        snippets = fields["snippets"]
        if snippets.ndim != 1 or not all(isinstance(s, (bytes, str)) for s in snippets):
            raise ValueError(f"{path}, role {cid}: snippets must be lines of text (bytes or str), got dtype "
                             f"{snippets.dtype} and shape {snippets.shape}.")
    return {cid: "".join(s.decode("utf-8", "replace") if isinstance(s, bytes) else s for s in fields["snippets"])
            for cid, fields in clients.items()}


def group_clients(data: FederatedDataset, groups) -> FederatedDataset:
    """A data set whose client ``j`` holds the train and test samples of the clients ``groups[j]`` of ``data``
    (e.g. writers pooled into the silos of a cross-silo network). Each client may appear in one group at most."""
    check_type("data", data, FederatedDataset)
    groups = [[check_int("groups", k, low=0, high=data.n_clients - 1) for k in check_sequence("groups", g, nonempty=True)]
              for g in check_sequence("groups", groups, nonempty=True)]
    members = [k for g in groups for k in g]
    if len(set(members)) != len(members):
        raise ValueError("groups must not share a client; a client appears in more than one group.")

    def pooled(part, group):
        x, y, _ = zip(*(part.client(k) for k in group))
        return torch.cat(x).cpu().numpy(), torch.cat(y).cpu().numpy()

    return _dataset(*([pooled(part, g) for g in groups] for part in (data.train, data.test)), data.n_classes)


_CENTRALISED: dict[str, tuple[Callable, int]] = {
    "mnist": (lambda: load_mnist("train", as_float=True), 10),
    "fashion_mnist": (lambda: load_fashion_mnist("train", as_float=True), 10),
    "emnist": (lambda: load_emnist("train", as_float=True), 62),
    "cifar10": (lambda: load_cifar10("train", as_float=True), 10),
    "cifar100": (lambda: load_cifar100("train", as_float=True), 100),
}


def load_partitioned(name: str, *, n_clients: int, scheme: str = "dirichlet", test_fraction: float = 0.2,
                     data_fraction: float = 1.0, seed: int = 0, **scheme_options: Any) -> FederatedDataset:
    """A centralised data set's training images over ``n_clients`` clients (``scheme``: a key of
    :data:`fedlab.data.PARTITIONERS` with its options, e.g. ``alpha=0.3``), each client's samples split into
    train and test. ``data_fraction < 1`` first keeps that fraction of the images, drawn at random (e.g. the
    10 % of EMNIST of thesis §3.5.6). For CIFAR-100's ``"pachinko"``, the superclasses of the file are passed
    for you."""
    name = check_choice("name", name, _CENTRALISED)
    n_clients = check_int("n_clients", n_clients, low=1)
    test_fraction = check_real("test_fraction", test_fraction, low=0, high=1, high_open=True)
    data_fraction = check_real("data_fraction", data_fraction, low=0, high=1, low_open=True)
    seed = check_int("seed", seed, low=0)
    require(name)
    reader, n_classes = _CENTRALISED[name]
    images, labels, *coarse = reader()
    rng = as_numpy_rng(seed)
    if data_fraction < 1:
        keep = np.sort(rng.choice(len(labels), size=max(n_clients, int(round(data_fraction * len(labels)))),
                                  replace=False))
        images, labels, coarse = images[keep], labels[keep], [c[keep] for c in coarse]
    if scheme == "pachinko" and coarse:
        scheme_options.setdefault("coarse_of_fine", _coarse_of_fine(labels, coarse[0]))
    parts = partition(labels, scheme, n_clients=n_clients, rng=rng, **scheme_options)
    xs_train, xs_test, ys_train, ys_test = train_test_split_clients(
        [images[idx] for idx in parts], [labels[idx] for idx in parts], test_fraction, rng=rng)
    return _dataset(list(zip(xs_train, ys_train)), list(zip(xs_test, ys_test)), n_classes)


def _coarse_of_fine(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    mapping = np.zeros(int(fine.max()) + 1, dtype=np.int64)
    mapping[fine] = coarse
    return mapping


FEDERATED_LOADERS: dict[str, Callable[..., FederatedDataset]] = {
    "femnist": load_femnist,
    "shakespeare": load_shakespeare,
    **{name: (lambda name: lambda **kw: load_partitioned(name, **kw))(name) for name in _CENTRALISED},
}


def load_federated(name: str, **options: Any) -> FederatedDataset:
    """``FEDERATED_LOADERS[name](**options)``: any data set of :data:`fedlab.data.fetch.DATASETS` as the engine's
    FederatedDataset (stops with the fetch command when its files are absent)."""
    check_choice("name", name, FEDERATED_LOADERS)
    return FEDERATED_LOADERS[name](**options)
