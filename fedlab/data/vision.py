"""Real image data (MNIST, Fashion-MNIST, EMNIST, CIFAR-10, CIFAR-100) read from a local cache folder, never downloaded here.

Files live under :func:`data_dir` (environment variable ``FEDLAB_DATA``, default ``~/.cache/fedlab``),
one sub-folder per dataset, in the formats their authors distribute:

* ``mnist/`` and ``fashion_mnist/``: the four IDX files ``{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``;
* ``emnist/``: NIST's ``gzip.zip`` as downloaded, or the ``emnist-<subset>-...-ubyte.gz`` files
  extracted from it (in ``emnist/`` or ``emnist/gzip/``);
* ``cifar10/``: the **binary** archive ``cifar-10-binary.tar.gz`` as downloaded, or its extracted
  ``cifar-10-batches-bin/`` folder (the python/pickle version is not supported: no pickle here);
* ``cifar100/``: the binary archive ``cifar-100-binary.tar.gz`` or its extracted ``cifar-100-binary/`` folder.

``python -m fedlab data fetch NAME`` (:mod:`fedlab.data.fetch`) puts the files there.

IDX and CIFAR binary records are parsed with numpy. A missing file raises ``FileNotFoundError`` saying
what to download, from where and into which folder. ``verify=True`` checks the files against the MD5
digests their publishers give (:data:`OFFICIAL_MD5`); ``verify={name: hexdigest}`` checks against
digests you supply (MD5, SHA-1 or SHA-256, told apart by length).
"""
from __future__ import annotations

import gzip
import hashlib
import os
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fedlab._validation import check_bool, check_choice, check_folder, check_path

__all__ = [
    "data_dir",
    "file_hash",
    "read_idx",
    "read_cifar_bin",
    "load_mnist",
    "load_fashion_mnist",
    "load_emnist",
    "load_cifar10",
    "read_cifar100_bin",
    "load_cifar100",
    "OFFICIAL_MD5",
    "EMNIST_SUBSETS",
]

ENV_VAR = "FEDLAB_DATA"

#: MD5 digests published with the files (MNIST via torchvision's mirror table, CIFAR-10 on its page,
#: EMNIST's ``gzip.zip`` via torchvision). Archives are checked as a whole, extracted files are not.
OFFICIAL_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
    "cifar-10-binary.tar.gz": "c32a1d4ab5d03f1284b67883e8d87530",
    "gzip.zip": "58c8d27c78d21e728a6bc7b3cc06412e",
    "cifar-100-binary.tar.gz": "03b5dce01913d631647c71ecec9e9cb8",
}

#: EMNIST splits and their number of classes ("letters" labels run from 1 to 26).
EMNIST_SUBSETS = {"byclass": 62, "bymerge": 47, "balanced": 47, "letters": 26, "digits": 10, "mnist": 10}

_SOURCES = {
    "mnist": {"folder": "mnist", "archive": None, "member_dir": "",
              "url": "https://ossci-datasets.s3.amazonaws.com/mnist/",
              "how": "download {urls} (mirror of http://yann.lecun.com/exdb/mnist/) and put them, still gzipped, "
                     "in {folder}"},
    "fashion_mnist": {"folder": "fashion_mnist", "archive": None, "member_dir": "",
                      "url": "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
                      "how": "download {urls} (Zalando Research) and put them, still gzipped, in {folder}"},
    "emnist": {"folder": "emnist", "archive": "gzip.zip", "member_dir": "gzip/",
               "url": "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip",
               "how": "download {url} (EMNIST, NIST) and put gzip.zip in {folder}; it is read as is "
                      "(or unzip it there so that {folder}/gzip/{first} exists)"},
    "cifar10": {"folder": "cifar10", "archive": "cifar-10-binary.tar.gz", "member_dir": "",
                "url": "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
                "how": "download {url} (the binary version, not the python one) and put it in {folder}; "
                       "it is read as is (or extract it there so that {folder}/{first} exists)"},
    "cifar100": {"folder": "cifar100", "archive": "cifar-100-binary.tar.gz", "member_dir": "",
                 "url": "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz",
                 "how": "download {url} (the binary version) and put it in {folder}; it is read as is "
                        "(or extract it there so that {folder}/{first} exists)"},
}

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_CIFAR_RECORD = 1 + 3 * 32 * 32
_CIFAR100_RECORD = 2 + 3 * 32 * 32
_DIGEST_BY_LENGTH = {32: "md5", 40: "sha1", 64: "sha256"}


def data_dir() -> Path:
    """The cache folder: ``$FEDLAB_DATA`` if set, else ``~/.cache/fedlab`` (not created).

    Raises
    ------
    ValueError
        Naming ``FEDLAB_DATA`` when the folder is a file or lies inside one.
    """
    return check_folder(ENV_VAR, os.environ.get(ENV_VAR) or "~/.cache/fedlab")


def file_hash(path: str | Path, algorithm: str = "sha256") -> str:
    """Hex digest of a file (``algorithm`` is any name ``hashlib.new`` accepts)."""
    path = check_path("path", path)
    digest = hashlib.new(check_choice("algorithm", algorithm, hashlib.algorithms_available))
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _as_bytes(source: str | Path | bytes) -> tuple[bytes, str]:
    """Raw bytes of a file or buffer, gunzipped when they start with the gzip magic number, and how to name them
    in errors (the file, or ``source`` for a buffer)."""
    if isinstance(source, (bytes, bytearray)):
        return _gunzip(bytes(source), "source"), "source"
    path = check_path("source", source)
    return _gunzip(path.read_bytes(), str(path)), str(path)


def _gunzip(data: bytes, label: str) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError, zlib.error) as err:
        raise ValueError(f"{label} is a cut-short or corrupt gzip stream ({err}); delete it and download it "
                         f"again.") from err


def read_idx(source: str | Path | bytes) -> np.ndarray:
    """Parse an IDX file (the MNIST/EMNIST format), gzipped or not.

    Layout: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
    0x0E float64), the number of dimensions, each dimension as a big-endian uint32, then the data
    in C order, big-endian.

    Parameters
    ----------
    source : path or bytes
        The file or its content.

    Returns
    -------
    np.ndarray
        Native-endian array with the stored shape.

    Raises
    ------
    ValueError
        Naming the file (``source`` for bytes) when it is not a complete IDX file.
    """
    return _parse_idx(*_as_bytes(source))


def _parse_idx(data: bytes, label: str) -> np.ndarray:
    if len(data) < 4 or data[0] or data[1] or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{label} is not an IDX file: header bytes {data[:4]!r}.")
    ndim, dtype = data[3], np.dtype(_IDX_DTYPES[data[2]])
    start = 4 + 4 * ndim
    if len(data) < start:
        raise ValueError(f"{label}: the IDX header announces {ndim} dimensions but the file has {len(data)} bytes.")
    shape = struct.unpack(f">{ndim}I", data[4:start])
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) - start != expected:
        raise ValueError(f"{label}: IDX data has {len(data) - start} bytes, shape {shape} needs {expected}: "
                         f"truncated file?")
    return np.frombuffer(data, dtype, offset=start).reshape(shape).astype(dtype.newbyteorder("="))


def read_cifar_bin(source: str | Path | bytes) -> tuple[np.ndarray, np.ndarray]:
    """Parse a CIFAR-10 binary batch: records of 1 label byte + 3072 pixel bytes (R, G, B planes).

    Returns
    -------
    images : np.ndarray, uint8, shape (n, 3, 32, 32)
    labels : np.ndarray, int64, shape (n,)

    Raises
    ------
    ValueError
        Naming the file (``source`` for bytes) when it is not whole records with labels in [0, 10).
    """
    return _parse_cifar(*_as_bytes(source))


def _parse_cifar(data: bytes, label: str) -> tuple[np.ndarray, np.ndarray]:
    if len(data) == 0 or len(data) % _CIFAR_RECORD:
        raise ValueError(f"{label}: a CIFAR-10 binary batch has a positive multiple of {_CIFAR_RECORD} bytes, "
                         f"got {len(data)}: truncated file?")
    records = np.frombuffer(data, np.uint8).reshape(-1, _CIFAR_RECORD)
    labels = records[:, 0].astype(np.int64)
    _check_label_range(labels, 0, 9, label)
    return records[:, 1:].reshape(-1, 3, 32, 32).copy(), labels


def read_cifar100_bin(source: str | Path | bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse a CIFAR-100 binary file: records of a coarse and a fine label byte + 3072 pixel bytes.

    Returns
    -------
    images : np.ndarray, uint8, shape (n, 3, 32, 32)
    fine : np.ndarray, int64, shape (n,)
        The 100 classes.
    coarse : np.ndarray, int64, shape (n,)
        Their 20 superclasses.

    Raises
    ------
    ValueError
        Naming the file (``source`` for bytes) when it is not whole records with valid labels.
    """
    return _parse_cifar100(*_as_bytes(source))


def _parse_cifar100(data: bytes, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(data) == 0 or len(data) % _CIFAR100_RECORD:
        raise ValueError(f"{label}: a CIFAR-100 binary file has a positive multiple of {_CIFAR100_RECORD} bytes, "
                         f"got {len(data)}: truncated file?")
    records = np.frombuffer(data, np.uint8).reshape(-1, _CIFAR100_RECORD)
    coarse, fine = records[:, 0].astype(np.int64), records[:, 1].astype(np.int64)
    _check_label_range(coarse, 0, 19, label)
    _check_label_range(fine, 0, 99, label)
    return records[:, 2:].reshape(-1, 3, 32, 32).copy(), fine, coarse


def _check_label_range(labels: np.ndarray, low: int, high: int, label: str) -> None:
    bad = labels[(labels < low) | (labels > high)]
    if bad.size:
        raise ValueError(f"{label}: labels must lie in [{low}, {high}], found {bad[:5].tolist()}: corrupt or wrong "
                         f"file.")


def _check_digest(path: Path, verify: bool | Mapping[str, str]) -> bool:
    """Compare ``path``'s digest with the expected one; return whether a check happened."""
    if verify is False:
        return False
    expected = OFFICIAL_MD5.get(path.name) if verify is True else verify.get(path.name)
    if expected is None:
        if verify is True:
            raise ValueError(f"no official hash is known for {path.name}; "
                             f"pass verify={{'{path.name}': '<hexdigest>'}}.")
        return False
    algorithm = _DIGEST_BY_LENGTH.get(len(expected))
    if algorithm is None:
        raise ValueError(f"verify[{path.name!r}] must be an MD5, SHA-1 or SHA-256 hex digest, got {expected!r}.")
    actual = file_hash(path, algorithm)
    if actual != expected.lower():
        raise ValueError(f"{path} has {algorithm} {actual}, expected {expected}: the file is corrupt or not "
                         f"the official one; delete it and download it again.")
    return True


def _plain_file(folder: Path, member_dir: str, name: str) -> Path | None:
    """An extracted copy of ``name`` (gzipped or not) in ``folder`` or ``folder/member_dir``."""
    for base in dict.fromkeys((folder / member_dir, folder)):
        for candidate in (base / name, base / name.removesuffix(".gz")):
            if candidate.is_file():
                return candidate
    return None


def _read_archive(archive: Path, members: list[str]) -> list[bytes]:
    """Read ``members`` from a zip or tar(.gz) archive in one pass."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                names = set(zf.namelist())
                found = {m: zf.read(m) for m in members if m in names}
        else:
            with tarfile.open(archive, "r:*") as tf:
                found = {m.name: tf.extractfile(m).read() for m in tf if m.isfile() and m.name in members}
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError) as err:
        raise ValueError(f"{archive} is not a readable zip or tar archive ({err}): the download is corrupt or "
                         f"incomplete; delete it and download it again.") from err
    missing = [m for m in members if m not in found]
    if missing:
        raise FileNotFoundError(f"{archive} lacks {missing}: incomplete or wrong archive.")
    return [found[m] for m in members]


def _missing_error(dataset: str, folder: Path, names: list[str]) -> FileNotFoundError:
    src = _SOURCES[dataset]
    how = src["how"].format(url=src["url"], urls=", ".join(src["url"] + n for n in names),
                             folder=folder, first=names[0])
    return FileNotFoundError(f"{dataset}: files not found: {', '.join(names)} (looked in {folder}). To fix: run "
                             f"python -m fedlab data fetch {dataset}, or {how}. Set the {ENV_VAR} environment variable to use another cache folder "
                             f"(current: {data_dir()}).")


def _load_members(dataset: str, names: list[str], verify: bool | Mapping[str, str]) -> list[tuple[bytes, str]]:
    """Bytes of ``names`` (gunzipped) from extracted files if all are present, else from the dataset's archive,
    each with how to name it in errors (the file, or ``archive:member``)."""
    if not (isinstance(verify, bool) or isinstance(verify, Mapping)):
        raise TypeError(f"verify must be a bool or a mapping file name -> hex digest, got {type(verify).__name__}.")
    src = _SOURCES[dataset]
    folder = data_dir() / src["folder"]
    paths = [_plain_file(folder, src["member_dir"], n) for n in names]
    archive = folder / src["archive"] if src["archive"] else None
    if all(p is not None for p in paths):
        checked = [_check_digest(p, verify) for p in paths]
        contents = [_as_bytes(p) for p in paths]
    elif archive is not None and archive.is_file():
        checked = [_check_digest(archive, verify)]
        members = [src["member_dir"] + n for n in names]
        contents = [(_gunzip(b, f"{archive}:{m}"), f"{archive}:{m}") for m, b in
                    zip(members, _read_archive(archive, members))]
    else:
        raise _missing_error(dataset, folder, [n for n, p in zip(names, paths) if p is None])
    if isinstance(verify, Mapping) and not any(checked):
        raise ValueError(f"verify names none of the files read ({', '.join(names)} or {src['archive']}).")
    return contents


def _images_labels(images: np.ndarray, labels: np.ndarray, as_float: bool) -> tuple[np.ndarray, np.ndarray]:
    if images.ndim == 3:
        images = images[:, None]
    return (images.astype(np.float32) / 255.0 if as_float else images), labels.astype(np.int64)


def load_mnist(split: str = "train", *, as_float: bool = False,
               verify: bool | Mapping[str, str] = False) -> tuple[np.ndarray, np.ndarray]:
    """MNIST from ``data_dir()/mnist`` (IDX files as distributed).

    Parameters
    ----------
    split : {"train", "test"}
        60,000 training or 10,000 test images.
    as_float : bool
        Return float32 pixels in [0, 1] instead of uint8.
    verify : bool or mapping
        Check file digests (see the module docstring).

    Returns
    -------
    images : np.ndarray, shape (n, 1, 28, 28)
    labels : np.ndarray, int64, shape (n,)
    """
    return _idx_pair("mnist", split, as_float, verify)


def load_fashion_mnist(split: str = "train", *, as_float: bool = False,
                       verify: bool | Mapping[str, str] = False) -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST (Xiao et al., 2017; the SFedPO paper's data) from ``data_dir()/fashion_mnist``: the same
    format and sizes as :func:`load_mnist`, ten classes of clothing."""
    return _idx_pair("fashion_mnist", split, as_float, verify)


def _idx_pair(dataset: str, split: str, as_float: bool, verify) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of an MNIST-format data set (60,000 train / 10,000 test, ten classes)."""
    prefix = {"train": "train", "test": "t10k"}[check_choice("split", split, ("train", "test"))]
    as_float = check_bool("as_float", as_float)
    names = [f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-labels-idx1-ubyte.gz"]
    return _images_labels(*_read_idx_pair(dataset, names, verify, 0, 9), as_float)


def _read_idx_pair(dataset: str, names: list[str], verify, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """The 28x28 byte images and the labels in [low, high] of an IDX pair, each file named in its errors."""
    (images, image_file), (labels, label_file) = ((_parse_idx(*m), m[1]) for m in _load_members(dataset, names, verify))
    if images.ndim != 3 or images.shape[1:] != (28, 28):
        raise ValueError(f"{image_file}: images must have shape (n, 28, 28), got {images.shape}.")
    if images.dtype != np.uint8:
        raise ValueError(f"{image_file}: pixels must be unsigned bytes (IDX type 0x08, values 0-255), got "
                         f"{images.dtype}.")
    if labels.ndim != 1:
        raise ValueError(f"{label_file}: labels must be one-dimensional, shape (n,), got shape {labels.shape}.")
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels: mismatched files {image_file} and "
                         f"{label_file}.")
    _check_label_range(labels, low, high, label_file)
    return images, labels


def load_emnist(split: str = "train", subset: str = "byclass", *, as_float: bool = False, transpose: bool = True,
                verify: bool | Mapping[str, str] = False) -> tuple[np.ndarray, np.ndarray]:
    """EMNIST (Cohen et al., 2017) from ``data_dir()/emnist`` (NIST's ``gzip.zip`` or the IDX files in it).

    Parameters
    ----------
    split : {"train", "test"}
    subset : str
        One of :data:`EMNIST_SUBSETS` (``"byclass"``: 62 classes, as in the thesis §3.5.6).
    as_float : bool
        Return float32 pixels in [0, 1] instead of uint8.
    transpose : bool
        The IDX files store images transposed; ``True`` returns them upright (as torchvision does).
    verify : bool or mapping
        Check file digests (see the module docstring).

    Returns
    -------
    images : np.ndarray, shape (n, 1, 28, 28)
    labels : np.ndarray, int64, shape (n,)
    """
    split = check_choice("split", split, ("train", "test"))
    subset = check_choice("subset", subset, EMNIST_SUBSETS)
    as_float, transpose = check_bool("as_float", as_float), check_bool("transpose", transpose)
    names = [f"emnist-{subset}-{split}-images-idx3-ubyte.gz", f"emnist-{subset}-{split}-labels-idx1-ubyte.gz"]
    low = 1 if subset == "letters" else 0
    images, labels = _read_idx_pair("emnist", names, verify, low, low + EMNIST_SUBSETS[subset] - 1)
    if transpose:
        images = np.ascontiguousarray(images.transpose(0, 2, 1))
    return _images_labels(images, labels, as_float)


def load_cifar10(split: str = "train", *, as_float: bool = False,
                 verify: bool | Mapping[str, str] = False) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 from ``data_dir()/cifar10`` (binary version: ``cifar-10-batches-bin/*.bin``).

    Parameters
    ----------
    split : {"train", "test"}
        ``data_batch_1..5.bin`` (50,000 images) or ``test_batch.bin`` (10,000).
    as_float : bool
        Return float32 pixels in [0, 1] instead of uint8.
    verify : bool or mapping
        Check file digests (see the module docstring).

    Returns
    -------
    images : np.ndarray, shape (n, 3, 32, 32)
    labels : np.ndarray, int64, shape (n,)
    """
    split = check_choice("split", split, ("train", "test"))
    as_float = check_bool("as_float", as_float)
    batches = [f"data_batch_{i}.bin" for i in range(1, 6)] if split == "train" else ["test_batch.bin"]
    names = [f"cifar-10-batches-bin/{b}" for b in batches]
    parts = [_parse_cifar(*m) for m in _load_members("cifar10", names, verify)]
    return _images_labels(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), as_float)


def load_cifar100(split: str = "train", *, as_float: bool = False,
                  verify: bool | Mapping[str, str] = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CIFAR-100 from ``data_dir()/cifar100`` (binary version: ``cifar-100-binary/{train,test}.bin``).

    Parameters
    ----------
    split : {"train", "test"}
        50,000 or 10,000 images.
    as_float : bool
        Return float32 pixels in [0, 1] instead of uint8.
    verify : bool or mapping
        Check file digests (see the module docstring).

    Returns
    -------
    images : np.ndarray, shape (n, 3, 32, 32)
    fine : np.ndarray, int64, shape (n,)
        Labels of the 100 classes.
    coarse : np.ndarray, int64, shape (n,)
        Labels of the 20 superclasses (the first level of the Pachinko partition, thesis §3.5.6).
    """
    split = check_choice("split", split, ("train", "test"))
    as_float = check_bool("as_float", as_float)
    [member] = _load_members("cifar100", [f"cifar-100-binary/{split}.bin"], verify)
    images, fine, coarse = _parse_cifar100(*member)
    images, fine = _images_labels(images, fine, as_float)
    return images, fine, coarse
