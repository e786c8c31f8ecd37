"""Broken data files are rejected with an error that names the file: truncated IDX and CIFAR files, cut-short
gzip streams, corrupt archives, labels out of range. A broken file is never read silently into other data.

Each example writes a valid file, breaks it (cut at a drawn byte, or a drawn byte overwritten) and loads it: the
load either returns exactly the original data (the damage hit bytes the reader never uses, such as the gzip
trailer after a complete tar archive) or raises a ``ValueError``/``OSError`` whose message names the file.
"""
from __future__ import annotations

import gzip
import io
import os
import struct
import tarfile
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import COUNTS
from fedlab.data.vision import load_cifar10, load_emnist, load_mnist, read_cifar_bin, read_idx

MODULE = "fedlab.data.vision"
_CIFAR_RECORD = 1 + 3 * 32 * 32


def idx_bytes(arr: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(np.uint8).tobytes()


def cifar_bytes(images: np.ndarray, labels: np.ndarray) -> bytes:
    return b"".join(bytes([int(lab)]) + img.tobytes() for img, lab in zip(images, labels))


RNG = np.random.default_rng(0)
IMAGES = RNG.integers(0, 256, size=(3, 28, 28), dtype=np.uint8)
LABELS = np.array([3, 1, 4], dtype=np.uint8)
CIFAR_IMAGES = RNG.integers(0, 256, size=(3, 3, 32, 32), dtype=np.uint8)
CIFAR_LABELS = np.array([9, 0, 4])
IDX = idx_bytes(IMAGES)
CIFAR = cifar_bytes(CIFAR_IMAGES, CIFAR_LABELS)


@contextmanager
def cache():
    """A fresh FEDLAB_DATA folder (hypothesis examples cannot share pytest's function-scoped fixtures)."""
    with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, {"FEDLAB_DATA": folder}):
        yield Path(folder)


def expect_named_rejection_or_original(load, names, original) -> None:
    """``load()`` returns ``original`` exactly, or raises ValueError/OSError naming one of ``names``."""
    COUNTS[MODULE] += 1
    try:
        out = load()
    except (ValueError, OSError) as err:
        assert any(str(n) in str(err) for n in names), f"the error does not name {names}: {err}"
        return
    out = out if isinstance(out, tuple) else (out,)
    assert len(out) == len(original) and all(np.array_equal(a, b) for a, b in zip(out, original)), \
        "a broken file was read into other data"


def cut(data: bytes, where: int) -> bytes:
    return data[: where % len(data)]


def flip(data: bytes, where: int, byte: int) -> bytes:
    i = where % len(data)
    return data[:i] + bytes([(data[i] + 1 + byte % 255) % 256]) + data[i + 1:]


positions = st.integers(0, 10 ** 6)
files = settings(max_examples=max(20, settings.default.max_examples))
"""Cheap examples: at least 20 per test, more with the deep profile."""


@files
@given(where=positions, zipped=st.booleans())
def test_truncated_idx_files_are_named(where, zipped):
    raw = gzip.compress(IDX) if zipped else IDX
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "images-idx3-ubyte"
        path.write_bytes(cut(raw, where))
        expect_named_rejection_or_original(lambda: read_idx(path), (path,), (IMAGES,))


@files
@given(where=positions, zipped=st.booleans())
def test_truncated_cifar_batches_are_named(where, zipped):
    raw = gzip.compress(CIFAR) if zipped else CIFAR
    short = cut(raw, where)
    if not zipped and short and len(short) % _CIFAR_RECORD == 0:
        short = short[:-1]  # a whole number of records is a valid, shorter batch
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data_batch_1.bin"
        path.write_bytes(short)
        expect_named_rejection_or_original(lambda: read_cifar_bin(path), (path,), (CIFAR_IMAGES, CIFAR_LABELS))


def write_mnist(folder: Path, images: bytes, labels: bytes) -> tuple[Path, Path]:
    (folder / "mnist").mkdir(parents=True, exist_ok=True)
    paths = folder / "mnist" / "train-images-idx3-ubyte.gz", folder / "mnist" / "train-labels-idx1-ubyte.gz"
    for path, content in zip(paths, (images, labels)):
        path.write_bytes(content)
    return paths


@files
@given(where=positions, byte=st.integers(0, 254), mode=st.sampled_from(["cut", "flip"]),
       target=st.sampled_from(["images", "labels"]))
def test_cut_short_or_corrupt_mnist_gzip_files_are_named(where, byte, mode, target):
    files = {"images": gzip.compress(IDX), "labels": gzip.compress(idx_bytes(LABELS))}
    files[target] = cut(files[target], where) if mode == "cut" else flip(files[target], where, byte)
    with cache() as folder:
        paths = write_mnist(folder, files["images"], files["labels"])
        expect_named_rejection_or_original(load_mnist, paths, (IMAGES[:, None], LABELS.astype(np.int64)))


@files
@given(label=st.integers(10, 255), position=st.integers(0, 2))
def test_mnist_labels_out_of_range_are_named(label, position):
    labels = LABELS.copy()
    labels[position] = label
    with cache() as folder:
        _, label_path = write_mnist(folder, gzip.compress(IDX), gzip.compress(idx_bytes(labels)))
        COUNTS[MODULE] += 1
        with pytest.raises(ValueError, match=r"labels must lie in \[0, 9\]") as info:
            load_mnist()
        assert str(label_path) in str(info.value)


def emnist_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("gzip/emnist-digits-train-images-idx3-ubyte.gz", gzip.compress(IDX))
        zf.writestr("gzip/emnist-digits-train-labels-idx1-ubyte.gz", gzip.compress(idx_bytes(LABELS)))
    return buffer.getvalue()


EMNIST_ZIP = emnist_zip()


@files
@given(where=positions, byte=st.integers(0, 254), mode=st.sampled_from(["cut", "flip"]))
def test_corrupt_emnist_archives_are_named(where, byte, mode):
    broken = cut(EMNIST_ZIP, where) if mode == "cut" else flip(EMNIST_ZIP, where, byte)
    with cache() as folder:
        (folder / "emnist").mkdir()
        archive = folder / "emnist" / "gzip.zip"
        archive.write_bytes(broken)
        expect_named_rejection_or_original(lambda: load_emnist("train", "digits", transpose=False), (archive,),
                                           (IMAGES[:, None], LABELS.astype(np.int64)))


def cifar_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name in [f"data_batch_{i}.bin" for i in range(1, 6)]:
            info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
            info.size = len(CIFAR)
            tf.addfile(info, io.BytesIO(CIFAR))
    return buffer.getvalue()


CIFAR_TAR = cifar_archive()


@files
@given(where=positions)
def test_truncated_cifar_archives_are_named(where):
    with cache() as folder:
        (folder / "cifar10").mkdir()
        archive = folder / "cifar10" / "cifar-10-binary.tar.gz"
        archive.write_bytes(cut(CIFAR_TAR, where))
        expect_named_rejection_or_original(load_cifar10, (archive,), (np.concatenate([CIFAR_IMAGES] * 5),
                                                                     np.concatenate([CIFAR_LABELS] * 5)))
