import gzip
import hashlib
import io
import re
import struct
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from real_formats import idx_gz, write_mnist_files
from fedlab.data import (data_dir, file_hash, load_cifar10, load_cifar100, load_emnist, load_fashion_mnist, load_mnist,
                         read_cifar_bin, read_idx)
from fedlab.data.vision import read_cifar100_bin
from fedlab.data.vision import EMNIST_SUBSETS, OFFICIAL_MD5

IDX_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
             np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}


def idx_bytes(arr):
    header = bytes([0, 0, IDX_CODES[arr.dtype], arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def cifar_bytes(images, labels):
    return b"".join(bytes([int(lab)]) + img.tobytes() for img, lab in zip(images, labels))


def rand_images(rng, n, shape):
    return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path))
    return tmp_path


def test_data_dir_env_and_default(monkeypatch, tmp_path):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.delenv("FEDLAB_DATA")
    assert data_dir() == Path("~/.cache/fedlab").expanduser()


def test_data_dir_must_be_a_folder(monkeypatch, tmp_path):
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "a_file"))
    with pytest.raises(ValueError, match=re.escape(f"FEDLAB_DATA must name a folder, got '{tmp_path / 'a_file'}', "
                                                   "which is a file")):
        load_mnist()
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "a_file" / "sub"))
    with pytest.raises(ValueError, match=re.escape(f"which is inside the file '{tmp_path / 'a_file'}'")):
        data_dir()
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "not_yet" / "made"))
    assert data_dir() == tmp_path / "not_yet" / "made"


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
def test_read_idx_roundtrip(dtype):
    arr = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    raw = idx_bytes(arr)
    for source in (raw, gzip.compress(raw)):
        out = read_idx(source)
        assert out.dtype == np.dtype(dtype) and np.array_equal(out, arr)


def test_read_idx_rejects_bad_files():
    with pytest.raises(ValueError, match="not an IDX"):
        read_idx(b"\x01\x00\x08\x01\x00\x00\x00\x02ab")
    with pytest.raises(ValueError, match="truncated"):
        read_idx(idx_bytes(np.zeros((3, 2), np.uint8))[:-1])


def test_read_cifar_bin_layout_and_errors():
    rng = np.random.default_rng(0)
    images, labels = rand_images(rng, 3, (3, 32, 32)), np.array([9, 0, 4])
    out_images, out_labels = read_cifar_bin(cifar_bytes(images, labels))
    assert np.array_equal(out_images, images) and np.array_equal(out_labels, labels)
    assert out_labels.dtype == np.int64 and out_images.dtype == np.uint8
    with pytest.raises(ValueError, match="3073"):
        read_cifar_bin(cifar_bytes(images, labels)[:-5])


def write_mnist(folder, split, images, labels, compress=True):
    folder.mkdir(parents=True, exist_ok=True)
    prefix = "train" if split == "train" else "t10k"
    for kind, arr in (("images-idx3", images), ("labels-idx1", labels)):
        name = f"{prefix}-{kind}-ubyte"
        raw = idx_bytes(arr)
        (folder / (name + ".gz" if compress else name)).write_bytes(gzip.compress(raw) if compress else raw)


def test_load_mnist_from_gz_and_plain_files(cache):
    rng = np.random.default_rng(1)
    images, labels = rand_images(rng, 5, (28, 28)), np.array([3, 1, 4, 1, 5], np.uint8)
    write_mnist(cache / "mnist", "train", images, labels)
    write_mnist(cache / "mnist", "test", images[:2], labels[:2], compress=False)
    x, y = load_mnist("train")
    assert x.shape == (5, 1, 28, 28) and x.dtype == np.uint8 and np.array_equal(x[:, 0], images)
    assert y.dtype == np.int64 and np.array_equal(y, labels)
    xf, _ = load_mnist("train", as_float=True)
    assert xf.dtype == np.float32 and np.allclose(xf * 255, x)
    assert load_mnist("test")[0].shape == (2, 1, 28, 28)


def test_load_mnist_missing_files_message(cache):
    with pytest.raises(FileNotFoundError) as info:
        load_mnist("test")
    message = str(info.value)
    assert "t10k-images-idx3-ubyte.gz" in message and "t10k-labels-idx1-ubyte.gz" in message
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/t10k-images-idx3-ubyte.gz" in message
    assert str(cache / "mnist") in message and "FEDLAB_DATA" in message


def test_mismatched_images_and_labels(cache):
    write_mnist(cache / "mnist", "train", np.zeros((3, 28, 28), np.uint8), np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        load_mnist()


def test_wrong_mnist_files_are_named(cache):
    folder = cache / "mnist"
    images, labels = folder / "train-images-idx3-ubyte.gz", folder / "train-labels-idx1-ubyte.gz"
    write_mnist_files(folder, np.arange(60) % 10, [0])
    labels.write_bytes(idx_gz(np.arange(50) % 10))
    with pytest.raises(ValueError, match=re.escape(f"60 images but 50 labels: mismatched files {images} and {labels}")):
        load_mnist()
    labels.write_bytes(idx_gz(np.zeros((60, 2))))
    with pytest.raises(ValueError, match=re.escape(f"{labels}: labels must be one-dimensional, shape (n,), got shape")):
        load_mnist()
    labels.write_bytes(idx_gz(np.zeros(60)))
    images.write_bytes(idx_gz(np.zeros((60, 14, 14))))
    with pytest.raises(ValueError, match=re.escape(f"{images}: images must have shape (n, 28, 28), got (60, 14, 14)")):
        load_mnist()
    images.write_bytes(gzip.compress(idx_bytes(np.full((60, 28, 28), 1000, np.int16))))  # 3.92 once scaled
    with pytest.raises(ValueError, match=re.escape(str(images)) + ": pixels must be unsigned bytes .* got int16"):
        load_mnist(as_float=True)


def test_verify_with_user_and_official_hashes(cache):
    write_mnist(cache / "mnist", "train", np.zeros((2, 28, 28), np.uint8), np.zeros(2, np.uint8))
    path = cache / "mnist" / "train-images-idx3-ubyte.gz"
    good = hashlib.sha256(path.read_bytes()).hexdigest()
    assert file_hash(path) == good and file_hash(path, "md5") == hashlib.md5(path.read_bytes()).hexdigest()
    load_mnist(verify={path.name: good})
    load_mnist(verify={path.name: file_hash(path, "md5").upper()})
    with pytest.raises(ValueError, match="corrupt"):
        load_mnist(verify={path.name: "0" * 64})
    with pytest.raises(ValueError, match="hex digest"):
        load_mnist(verify={path.name: "abc"})
    with pytest.raises(ValueError, match="none of the files"):
        load_mnist(verify={"other.gz": good})
    with pytest.raises(ValueError, match="corrupt"):   # our fake files are not the official ones
        load_mnist(verify=True)
    with pytest.raises(TypeError):
        load_mnist(verify="yes")
    assert set(OFFICIAL_MD5) >= {"train-images-idx3-ubyte.gz", "cifar-10-binary.tar.gz", "gzip.zip"}


def emnist_members(rng, subset, split, n):
    images = rand_images(rng, n, (28, 28))
    labels = rng.integers(0, EMNIST_SUBSETS[subset], n).astype(np.uint8)
    stem = f"emnist-{subset}-{split}"
    return images, labels, {f"{stem}-images-idx3-ubyte.gz": gzip.compress(idx_bytes(images)),
                            f"{stem}-labels-idx1-ubyte.gz": gzip.compress(idx_bytes(labels))}


def test_load_emnist_from_zip_and_extracted(cache):
    rng = np.random.default_rng(2)
    images, labels, files = emnist_members(rng, "byclass", "train", 4)
    (cache / "emnist").mkdir()
    with zipfile.ZipFile(cache / "emnist" / "gzip.zip", "w") as zf:
        for name, content in files.items():
            zf.writestr("gzip/" + name, content)
    x, y = load_emnist("train", "byclass")
    assert x.shape == (4, 1, 28, 28) and np.array_equal(x[:, 0], images.transpose(0, 2, 1))
    assert np.array_equal(y, labels)
    assert np.array_equal(load_emnist("train", transpose=False)[0][:, 0], images)
    images2, _, files2 = emnist_members(rng, "digits", "test", 3)
    (cache / "emnist" / "gzip").mkdir()
    for name, content in files2.items():
        (cache / "emnist" / "gzip" / name).write_bytes(content)
    assert np.array_equal(load_emnist("test", "digits")[0][:, 0], images2.transpose(0, 2, 1))
    with pytest.raises(ValueError):
        load_emnist("train", "bogus")


def test_load_emnist_missing_message(cache):
    with pytest.raises(FileNotFoundError, match="https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"):
        load_emnist("test", "letters")


def cifar_files(rng):
    files, data = {}, {}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        images, labels = rand_images(rng, 2, (3, 32, 32)), rng.integers(0, 10, 2)
        files["cifar-10-batches-bin/" + name] = cifar_bytes(images, labels)
        data[name] = (images, labels)
    return files, data


def test_load_cifar10_from_archive_and_folder(cache):
    rng = np.random.default_rng(3)
    files, data = cifar_files(rng)
    folder = cache / "cifar10"
    folder.mkdir()
    with tarfile.open(folder / "cifar-10-binary.tar.gz", "w:gz") as tf:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
    x, y = load_cifar10("train")
    assert x.shape == (10, 3, 32, 32) and x.dtype == np.uint8 and y.dtype == np.int64
    assert np.array_equal(x[2:4], data["data_batch_2.bin"][0]) and np.array_equal(y[8:], data["data_batch_5.bin"][1])
    (folder / "cifar-10-binary.tar.gz").unlink()
    for name, content in files.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_bytes(content)
    x_test, y_test = load_cifar10("test", as_float=True)
    assert x_test.dtype == np.float32 and np.allclose(x_test * 255, data["test_batch.bin"][0])
    assert np.array_equal(y_test, data["test_batch.bin"][1])
    with pytest.raises(ValueError, match="no official hash"):
        load_cifar10("test", verify=True)
    with pytest.raises(ValueError):
        load_cifar10("val")


def test_load_cifar10_missing_message(cache):
    with pytest.raises(FileNotFoundError) as info:
        load_cifar10()
    message = str(info.value)
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz" in message
    assert "data_batch_1.bin" in message and str(cache / "cifar10") in message


def test_load_fashion_mnist_reads_its_own_folder(cache):
    rng = np.random.default_rng(2)
    images, labels = rand_images(rng, 4, (28, 28)), np.array([9, 0, 7, 2], np.uint8)
    write_mnist(cache / "fashion_mnist", "train", images, labels)
    x, y = load_fashion_mnist("train")
    assert np.array_equal(x[:, 0], images) and y.tolist() == [9, 0, 7, 2]
    with pytest.raises(FileNotFoundError, match="python -m fedlab data fetch fashion_mnist"):
        load_fashion_mnist("test")


def test_read_and_load_cifar100_fine_and_coarse_labels(cache):
    rng = np.random.default_rng(3)
    records = np.concatenate([np.array([[19, 99], [0, 3]], np.uint8), rng.integers(0, 256, (2, 3072), np.uint8)], 1)
    images, fine, coarse = read_cifar100_bin(records.tobytes())
    assert images.shape == (2, 3, 32, 32) and fine.tolist() == [99, 3] and coarse.tolist() == [19, 0]
    with pytest.raises(ValueError, match="labels must lie in \\[0, 19\\]"):
        read_cifar100_bin(np.concatenate([[20, 1], records[0, 2:]]).astype(np.uint8).tobytes())
    folder = cache / "cifar100" / "cifar-100-binary"
    folder.mkdir(parents=True)
    (folder / "test.bin").write_bytes(records.tobytes())
    x, y, c = load_cifar100("test", as_float=True)
    assert x.dtype == np.float32 and y.tolist() == [99, 3] and c.tolist() == [19, 0]
    with pytest.raises(FileNotFoundError, match="data fetch cifar100"):
        load_cifar100("train")
